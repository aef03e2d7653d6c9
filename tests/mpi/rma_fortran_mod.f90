! One-sided communication through `use mpi` (mpif.h's constants and bindings), each result checked, at
! 2-4 ranks: a window over a Fortran array with its attributes (by value), name and group; fence
! epochs with put, get, accumulate and get_accumulate; post-start-complete-wait; MPI_RPUT completed by
! MPI_WAIT in a lock epoch; a counter at rank 0 in memory from MPI_WIN_ALLOCATE (INTEGER baseptr)
! hammered by MPI_FETCH_AND_OP under shared locks, which ends exact with every fetched value seen once;
! MPI_COMPARE_AND_SWAP with one winner; MPI_WIN_ALLOCATE's TYPE(C_PTR) form; window keyvals with
! Fortran delete callbacks and the predefined null ones; a put out of range and one to a bad rank
! under MPI_ERRORS_RETURN and through an error handler written in Fortran; a window over
! MPI_ALLOC_MEM's memory, freed by MPI_FREE_MEM.
module rma_mod_state
  implicit none
  integer :: handler_calls = 0, handler_code = 0, handler_win = -1
  integer :: deletes = 0
  integer(kind=8) :: deleted_value = 0, deleted_extra = 0
contains
  subroutine on_win_error(win, code)
    integer :: win, code
    handler_calls = handler_calls + 1
    handler_code = code
    handler_win = win
  end subroutine on_win_error

  subroutine copy_attr(oldwin, keyval, extra_state, value_in, value_out, flag, ierr)
    use mpi, only: MPI_ADDRESS_KIND, MPI_SUCCESS
    integer :: oldwin, keyval, ierr
    integer(kind=MPI_ADDRESS_KIND) :: extra_state, value_in, value_out
    logical :: flag
    value_out = value_in
    flag = .true.
    ierr = MPI_SUCCESS
  end subroutine copy_attr

  subroutine delete_attr(win, keyval, value, extra_state, ierr)
    use mpi, only: MPI_ADDRESS_KIND, MPI_SUCCESS
    integer :: win, keyval, ierr
    integer(kind=MPI_ADDRESS_KIND) :: value, extra_state
    deletes = deletes + 1
    deleted_value = value
    deleted_extra = extra_state
    ierr = MPI_SUCCESS
  end subroutine delete_attr
end module rma_mod_state

program rma_fortran_mod
  use mpi
  use, intrinsic :: iso_c_binding, only: c_ptr, c_f_pointer, c_associated, c_loc
  use rma_mod_state
  use fortran_check
  implicit none
  integer, parameter :: iters = 25
  integer, volatile, target :: a(0:9)
  integer :: b(0:9)
  integer :: rank, nranks, left, right, ierr, e, win, counter_win, ptr_win, group, n, i, errclass
  integer :: keyval, null_keyval, handler, request, world_group, neighbours(2), nneighbours
  integer :: one, fetched, old, mine, value
  integer, allocatable :: fetched_all(:), seen(:)
  integer(kind=MPI_ADDRESS_KIND) :: size, disp, attr, address, baseptr
  integer, pointer :: counter(:), block(:)
  type(c_ptr) :: cptr
  logical :: flag
  character(len=MPI_MAX_OBJECT_NAME) :: name

  call MPI_INIT(ierr)
  call MPI_COMM_RANK(MPI_COMM_WORLD, rank, ierr)
  call MPI_COMM_SIZE(MPI_COMM_WORLD, nranks, ierr)
  call expect(nranks >= 2 .and. nranks <= 8, '2-8 ranks')
  left = mod(rank + nranks - 1, nranks)
  right = mod(rank + 1, nranks)

  ! ---- a window over a Fortran array, its attributes by value
  do i = 0, 9
    a(i) = 1000 * rank + i
  end do
  size = 40
  call MPI_WIN_CREATE(a, size, 4, MPI_INFO_NULL, MPI_COMM_WORLD, win, ierr)
  call expect(ierr == MPI_SUCCESS .and. win /= MPI_WIN_NULL, 'MPI_WIN_CREATE')
  call MPI_GET_ADDRESS(a, address, ierr)
  call MPI_WIN_GET_ATTR(win, MPI_WIN_BASE, attr, flag, ierr)
  call expect(flag .and. attr == address, 'MPI_WIN_BASE is the array')
  call MPI_WIN_GET_ATTR(win, MPI_WIN_SIZE, attr, flag, ierr)
  call expect(flag .and. attr == 40, 'MPI_WIN_SIZE')
  call MPI_WIN_GET_ATTR(win, MPI_WIN_DISP_UNIT, attr, flag, ierr)
  call expect(flag .and. attr == 4, 'MPI_WIN_DISP_UNIT')
  call MPI_WIN_GET_ATTR(win, MPI_WIN_CREATE_FLAVOR, attr, flag, ierr)
  call expect(flag .and. attr == MPI_WIN_FLAVOR_CREATE, 'MPI_WIN_CREATE_FLAVOR')
  call MPI_WIN_GET_ATTR(win, MPI_WIN_MODEL, attr, flag, ierr)
  call expect(flag .and. (attr == MPI_WIN_SEPARATE .or. attr == MPI_WIN_UNIFIED), 'MPI_WIN_MODEL')
  call MPI_WIN_SET_NAME(win, 'fortran window  ', ierr)
  call MPI_WIN_GET_NAME(win, name, n, ierr)
  call expect(name == 'fortran window' .and. n == 14, 'MPI_WIN_GET_NAME')
  call MPI_WIN_GET_GROUP(win, group, ierr)
  call MPI_GROUP_SIZE(group, n, ierr)
  call expect(n == nranks, 'MPI_WIN_GET_GROUP size')
  call MPI_GROUP_FREE(group, ierr)

  ! ---- fence: put my rank into right's a(0), accumulate 1 into everyone's a(9), get left's a(1)
  call MPI_WIN_FENCE(0, win, ierr)
  value = -rank
  disp = 0
  call MPI_PUT(value, 1, MPI_INTEGER, right, disp, 1, MPI_INTEGER, win, ierr)
  one = 1
  disp = 9
  do i = 0, nranks - 1
    call MPI_ACCUMULATE(one, 1, MPI_INTEGER, i, disp, 1, MPI_INTEGER, MPI_SUM, win, ierr)
  end do
  disp = 1
  call MPI_GET(b, 2, MPI_INTEGER, left, disp, 2, MPI_INTEGER, win, ierr)
  call MPI_WIN_FENCE(0, win, ierr)
  call expect(ierr == MPI_SUCCESS, 'fence')
  call expect(a(0) == -left, 'put from the left')
  call expect(a(9) == 1000 * rank + 9 + nranks, 'accumulate from every rank')
  call expect(b(0) == 1000 * left + 1 .and. b(1) == 1000 * left + 2, 'get from the left')
  ! get_accumulate: fetch right's a(2) and replace it with mine.
  value = 7000 + rank
  disp = 2
  call MPI_GET_ACCUMULATE(value, 1, MPI_INTEGER, old, 1, MPI_INTEGER, right, disp, 1, MPI_INTEGER, &
                          MPI_REPLACE, win, ierr)
  call MPI_WIN_FENCE(MPI_MODE_NOSUCCEED, win, ierr)
  call expect(old == 1000 * right + 2 .and. a(2) == 7000 + left, 'get_accumulate')

  ! ---- post-start-complete-wait: each rank exposes to its left and accesses its right
  call MPI_COMM_GROUP(MPI_COMM_WORLD, world_group, ierr)
  neighbours(1) = left
  nneighbours = 1
  call MPI_GROUP_INCL(world_group, nneighbours, neighbours, group, ierr)
  call MPI_WIN_POST(group, 0, win, ierr)
  neighbours(1) = right
  call MPI_GROUP_FREE(group, ierr)
  call MPI_GROUP_INCL(world_group, nneighbours, neighbours, group, ierr)
  call MPI_WIN_START(group, 0, win, ierr)
  value = 500 + rank
  disp = 3
  call MPI_PUT(value, 1, MPI_INTEGER, right, disp, 1, MPI_INTEGER, win, ierr)
  call MPI_WIN_COMPLETE(win, ierr)
  flag = .false.
  do while (.not. flag)
    call MPI_WIN_TEST(win, flag, ierr)
    call expect(ierr == MPI_SUCCESS, 'MPI_WIN_TEST')
  end do
  call expect(a(3) == 500 + left, 'put in a post-start epoch')
  call MPI_GROUP_FREE(group, ierr)
  call MPI_GROUP_FREE(world_group, ierr)

  ! ---- MPI_RPUT completed by MPI_WAIT inside a lock epoch, then MPI_WIN_FLUSH
  value = 800 + rank
  disp = 4
  call MPI_WIN_LOCK(MPI_LOCK_EXCLUSIVE, right, 0, win, ierr)
  call MPI_RPUT(value, 1, MPI_INTEGER, right, disp, 1, MPI_INTEGER, win, request, ierr)
  call expect(ierr == MPI_SUCCESS .and. request /= MPI_REQUEST_NULL, 'MPI_RPUT')
  call MPI_WAIT(request, MPI_STATUS_IGNORE, ierr)
  call expect(ierr == MPI_SUCCESS .and. request == MPI_REQUEST_NULL, 'MPI_WAIT on the MPI_RPUT')
  call MPI_WIN_FLUSH(right, win, ierr)
  call MPI_WIN_UNLOCK(right, win, ierr)
  call MPI_BARRIER(MPI_COMM_WORLD, ierr)
  call MPI_WIN_LOCK(MPI_LOCK_SHARED, rank, 0, win, ierr)
  call expect(a(4) == 800 + left, 'the MPI_RPUT arrived')
  call MPI_WIN_UNLOCK(rank, win, ierr)

  ! ---- errors: MPI_ERRORS_RETURN, then a handler written in Fortran
  call MPI_WIN_SET_ERRHANDLER(win, MPI_ERRORS_RETURN, ierr)
  call MPI_WIN_FENCE(0, win, ierr)
  disp = 10
  call MPI_PUT(value, 1, MPI_INTEGER, right, disp, 1, MPI_INTEGER, win, ierr)
  call MPI_ERROR_CLASS(ierr, errclass, e)
  call expect(errclass == MPI_ERR_RMA_RANGE, 'a put past the window is MPI_ERR_RMA_RANGE')
  call MPI_WIN_CREATE_ERRHANDLER(on_win_error, handler, ierr)
  call MPI_WIN_SET_ERRHANDLER(win, handler, ierr)
  call MPI_ERRHANDLER_FREE(handler, ierr)
  call MPI_WIN_GET_ERRHANDLER(win, handler, ierr)
  call expect(handler /= MPI_ERRORS_RETURN .and. handler /= MPI_ERRHANDLER_NULL, 'MPI_WIN_GET_ERRHANDLER')
  call MPI_ERRHANDLER_FREE(handler, ierr)
  disp = 0
  call MPI_PUT(value, 1, MPI_INTEGER, nranks, disp, 1, MPI_INTEGER, win, ierr)
  call MPI_ERROR_CLASS(ierr, errclass, e)
  call expect(errclass == MPI_ERR_RANK .and. handler_calls == 1 .and. handler_code == MPI_ERR_RANK &
              .and. handler_win == win, 'the Fortran handler got the bad rank')
  call MPI_WIN_CALL_ERRHANDLER(win, MPI_ERR_OTHER, ierr)
  call expect(ierr == MPI_SUCCESS .and. handler_calls == 2 .and. handler_code == MPI_ERR_OTHER, &
              'MPI_WIN_CALL_ERRHANDLER')
  call MPI_WIN_FENCE(MPI_MODE_NOSUCCEED, win, ierr)
  call expect(a(0) == -left .and. a(1) == 1000 * rank + 1, 'refused puts changed nothing')

  ! ---- keyvals: a Fortran delete callback at MPI_WIN_DELETE_ATTR and at MPI_WIN_FREE
  call MPI_WIN_CREATE_KEYVAL(copy_attr, delete_attr, keyval, 77_MPI_ADDRESS_KIND, ierr)
  call MPI_WIN_CREATE_KEYVAL(MPI_WIN_NULL_COPY_FN, MPI_WIN_NULL_DELETE_FN, null_keyval, 0_MPI_ADDRESS_KIND, ierr)
  attr = 2_MPI_ADDRESS_KIND**40 + 5
  call MPI_WIN_SET_ATTR(win, keyval, attr, ierr)
  call MPI_WIN_SET_ATTR(win, null_keyval, 3_MPI_ADDRESS_KIND, ierr)
  attr = 0
  call MPI_WIN_GET_ATTR(win, keyval, attr, flag, ierr)
  call expect(flag .and. attr == 2_MPI_ADDRESS_KIND**40 + 5, 'MPI_WIN_GET_ATTR of a wide value')
  call MPI_WIN_DELETE_ATTR(win, keyval, ierr)
  call expect(deletes == 1 .and. deleted_value == 2_8**40 + 5 .and. deleted_extra == 77, 'delete callback')
  call MPI_WIN_GET_ATTR(win, keyval, attr, flag, ierr)
  call expect(.not. flag, 'the attribute is gone')
  call MPI_WIN_SET_ATTR(win, keyval, 9_MPI_ADDRESS_KIND, ierr)
  call MPI_WIN_DELETE_ATTR(win, null_keyval, ierr)
  call MPI_WIN_FREE(win, ierr)
  call expect(ierr == MPI_SUCCESS .and. win == MPI_WIN_NULL, 'MPI_WIN_FREE')
  call expect(deletes == 2 .and. deleted_value == 9, 'delete callback at MPI_WIN_FREE')
  call MPI_WIN_FREE_KEYVAL(keyval, ierr)
  call MPI_WIN_FREE_KEYVAL(null_keyval, ierr)
  call expect(keyval == MPI_KEYVAL_INVALID, 'MPI_WIN_FREE_KEYVAL')

  ! ---- a counter in MPI_WIN_ALLOCATE's memory (INTEGER baseptr), hammered under shared locks
  size = 0
  if (rank == 0) size = 8
  call MPI_WIN_ALLOCATE(size, 4, MPI_INFO_NULL, MPI_COMM_WORLD, baseptr, counter_win, ierr)
  call expect(ierr == MPI_SUCCESS, 'MPI_WIN_ALLOCATE')
  call MPI_WIN_GET_ATTR(counter_win, MPI_WIN_BASE, attr, flag, ierr)
  call expect(flag .and. attr == baseptr, 'MPI_WIN_BASE is the baseptr')
  if (rank == 0) then
    call c_f_pointer(transfer(baseptr, cptr), counter, [2])
    call MPI_WIN_LOCK(MPI_LOCK_EXCLUSIVE, 0, 0, counter_win, ierr)
    counter(1) = 0
    counter(2) = -1
    call MPI_WIN_UNLOCK(0, counter_win, ierr)
  end if
  call MPI_BARRIER(MPI_COMM_WORLD, ierr)
  allocate(fetched_all(iters * nranks), seen(0:iters * nranks - 1))
  one = 1
  disp = 0
  do i = 1, iters
    call MPI_WIN_LOCK(MPI_LOCK_SHARED, 0, 0, counter_win, ierr)
    call MPI_FETCH_AND_OP(one, fetched, MPI_INTEGER, 0, disp, MPI_SUM, counter_win, ierr)
    call MPI_WIN_UNLOCK(0, counter_win, ierr)
    fetched_all(rank * iters + i) = fetched
  end do
  call MPI_ALLGATHER(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, fetched_all, iters, MPI_INTEGER, MPI_COMM_WORLD, ierr)
  ! Rank r's values went to fetched_all(r*iters+1:): the in-place block is its own.
  seen = 0
  do i = 1, iters * nranks
    call expect(fetched_all(i) >= 0 .and. fetched_all(i) < iters * nranks, 'a fetched value in range')
    seen(fetched_all(i)) = seen(fetched_all(i)) + 1
  end do
  call expect(all(seen == 1), 'every counter value fetched exactly once')
  ! Compare-and-swap: -1 -> my rank; exactly one rank wins.
  call MPI_WIN_LOCK_ALL(0, counter_win, ierr)
  mine = rank
  value = -1
  disp = 1
  call MPI_COMPARE_AND_SWAP(mine, value, old, MPI_INTEGER, 0, disp, counter_win, ierr)
  call MPI_WIN_FLUSH_ALL(counter_win, ierr)
  call MPI_WIN_UNLOCK_ALL(counter_win, ierr)
  call MPI_BARRIER(MPI_COMM_WORLD, ierr)
  call MPI_WIN_LOCK(MPI_LOCK_SHARED, 0, 0, counter_win, ierr)
  disp = 0
  call MPI_FETCH_AND_OP(one, fetched, MPI_INTEGER, 0, disp, MPI_NO_OP, counter_win, ierr)
  disp = 1
  call MPI_FETCH_AND_OP(one, value, MPI_INTEGER, 0, disp, MPI_NO_OP, counter_win, ierr)
  call MPI_WIN_UNLOCK(0, counter_win, ierr)
  call expect(fetched == iters * nranks, 'the counter ends exact')
  n = 0
  if (old == -1) n = 1
  call MPI_ALLREDUCE(MPI_IN_PLACE, n, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  call expect(n == 1, 'one compare-and-swap won')
  call expect(value >= 0 .and. value < nranks .and. (old == -1 .eqv. value == rank) .and. &
              (old == -1 .or. old == value), 'compare-and-swap results')
  call MPI_WIN_FREE(counter_win, ierr)
  deallocate(fetched_all, seen)

  ! ---- MPI_WIN_ALLOCATE's TYPE(C_PTR) form (use mpi's generic)
  size = 16
  call MPI_WIN_ALLOCATE(size, 4, MPI_INFO_NULL, MPI_COMM_WORLD, cptr, ptr_win, ierr)
  call expect(ierr == MPI_SUCCESS .and. c_associated(cptr), 'MPI_WIN_ALLOCATE with a C_PTR')
  call c_f_pointer(cptr, block, [4])
  call MPI_WIN_GET_ATTR(ptr_win, MPI_WIN_BASE, attr, flag, ierr)
  call expect(attr == transfer(c_loc(block(1)), attr), 'MPI_WIN_BASE is the C_PTR')
  block = rank
  call MPI_WIN_FENCE(0, ptr_win, ierr)
  disp = 3
  value = rank + 40
  call MPI_PUT(value, 1, MPI_INTEGER, right, disp, 1, MPI_INTEGER, ptr_win, ierr)
  call MPI_WIN_FENCE(0, ptr_win, ierr)
  call expect(block(4) == left + 40 .and. block(1) == rank, 'a put into C_PTR memory')
  call MPI_WIN_FREE(ptr_win, ierr)

  ! ---- MPI_ALLOC_MEM's memory (INTEGER baseptr) under a window, then MPI_FREE_MEM
  size = 16
  call MPI_ALLOC_MEM(size, MPI_INFO_NULL, baseptr, ierr)
  call expect(ierr == MPI_SUCCESS .and. baseptr /= 0, 'MPI_ALLOC_MEM')
  call c_f_pointer(transfer(baseptr, cptr), block, [4])
  block = -1
  call MPI_WIN_CREATE(block, size, 4, MPI_INFO_NULL, MPI_COMM_WORLD, ptr_win, ierr)
  call MPI_WIN_GET_ATTR(ptr_win, MPI_WIN_BASE, attr, flag, ierr)
  call expect(attr == baseptr, 'the window is over MPI_ALLOC_MEM''s memory')
  call MPI_WIN_FENCE(0, ptr_win, ierr)
  value = rank + 60
  disp = 1
  call MPI_PUT(value, 1, MPI_INTEGER, right, disp, 1, MPI_INTEGER, ptr_win, ierr)
  call MPI_WIN_FENCE(0, ptr_win, ierr)
  call expect(block(2) == left + 60 .and. block(1) == -1, 'a put into MPI_ALLOC_MEM''s memory')
  call MPI_WIN_FREE(ptr_win, ierr)
  call MPI_FREE_MEM(block, ierr)
  call expect(ierr == MPI_SUCCESS, 'MPI_FREE_MEM')

  call MPI_FINALIZE(ierr)
  if (rank == 0) print '(a)', 'rma_fortran_mod: ok'
end program rma_fortran_mod

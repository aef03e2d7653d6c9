! One-sided communication through `use mpi_f08`, each result checked, at 2-4 ranks:
! MPI_Win_allocate_shared over the ranks of a host with every rank's part found by MPI_Win_shared_query
! and reached by C_F_POINTER (stores in one rank, loads in another); a window over a Fortran array
! (TYPE(MPI_Win), ierror omitted) with fence epochs of put, get and accumulate; the request forms
! (MPI_Rput completed by MPI_Wait, Rget, Raccumulate and Rget_accumulate by MPI_Waitall) and the
! flushes under lock_all; a counter at rank 0 in MPI_Win_allocate's memory (TYPE(C_PTR)) hammered by
! MPI_Fetch_and_op under an exclusive lock each, which ends exact; MPI_Compare_and_swap with one
! winner; a window over MPI_Alloc_mem's memory; a dynamic window with attach and detach; window keyvals
! with f08 copy and delete callbacks and MPI_WIN_DUP_FN; a put out of range under MPI_ERRORS_RETURN
! (MPI_ERR_RMA_RANGE), and a strided section refused with MPI_ERR_BUFFER through the window's f08
! error handler.
module rma_f08_state
  use mpi_f08
  implicit none
  integer :: handler_calls = 0, handler_code = MPI_SUCCESS, deletes = 0
  type(MPI_Win) :: handler_win
contains
  subroutine on_win_error(win, code)
    type(MPI_Win) :: win
    integer :: code
    handler_calls = handler_calls + 1
    handler_code = code
    handler_win = win
  end subroutine on_win_error

  subroutine copy_attr(oldwin, keyval, extra_state, value_in, value_out, flag, ierror)
    type(MPI_Win) :: oldwin
    integer :: keyval, ierror
    integer(kind=MPI_ADDRESS_KIND) :: extra_state, value_in, value_out
    logical :: flag
    value_out = value_in
    flag = .true.
    ierror = MPI_SUCCESS
  end subroutine copy_attr

  subroutine delete_attr(win, keyval, value, extra_state, ierror)
    type(MPI_Win) :: win
    integer :: keyval, ierror
    integer(kind=MPI_ADDRESS_KIND) :: value, extra_state
    if (value == 123 .and. extra_state == 5) deletes = deletes + 1
    ierror = MPI_SUCCESS
  end subroutine delete_attr
end module rma_f08_state

program rma_fortran_f08
  use mpi_f08
  use, intrinsic :: iso_c_binding, only: c_ptr, c_f_pointer, c_associated, c_intptr_t
  use rma_f08_state
  use fortran_check
  implicit none
  integer, parameter :: iters = 20
  type(MPI_Comm) :: host
  type(MPI_Win) :: shared_win, win, counter_win, dynamic_win
  type(MPI_Request) :: requests(3), request
  type(MPI_Errhandler) :: handler
  type(MPI_Info) :: info, info_used
  type(MPI_Group) :: group
  integer :: rank, nranks, left, right, host_rank, host_size, r, i, ierror, errclass, keyval, disp_unit
  integer :: one, fetched, old, mine, expected, value, won, got(2), nkeys
  integer, asynchronous :: x(0:7)
  integer, asynchronous :: region(4)
  integer, pointer :: part(:), theirs(:), counter(:)
  integer(kind=MPI_ADDRESS_KIND) :: size, disp, attr, address
  integer(c_intptr_t) :: previous_end, start
  type(c_ptr) :: baseptr
  logical :: flag

  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, nranks)
  call expect(nranks >= 2 .and. nranks <= 8, '2-8 ranks')
  left = mod(rank + nranks - 1, nranks)
  right = mod(rank + 1, nranks)

  ! ---- shared memory: rank r of the host gives r + 1 ints, stores its own, loads everyone's
  call MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, host)
  call MPI_Comm_rank(host, host_rank)
  call MPI_Comm_size(host, host_size)
  size = 4 * (host_rank + 1)
  call MPI_Win_allocate_shared(size, 4, MPI_INFO_NULL, host, baseptr, shared_win, ierror)
  call expect(ierror == MPI_SUCCESS .and. c_associated(baseptr), 'MPI_Win_allocate_shared')
  call MPI_Win_get_attr(shared_win, MPI_WIN_CREATE_FLAVOR, attr, flag)
  call expect(flag .and. attr == MPI_WIN_FLAVOR_SHARED, 'shared flavor')
  call c_f_pointer(baseptr, part, [host_rank + 1])
  call MPI_Win_lock_all(0, shared_win)
  do i = 1, host_rank + 1
    part(i) = 100 * host_rank + i
  end do
  call MPI_Win_sync(shared_win)
  call MPI_Barrier(host)
  call MPI_Win_sync(shared_win)
  previous_end = 0
  do r = 0, host_size - 1
    call MPI_Win_shared_query(shared_win, r, size, disp_unit, baseptr)
    call expect(size == 4 * (r + 1) .and. disp_unit == 4, 'shared_query size and unit')
    start = transfer(baseptr, start)
    if (r > 0) call expect(start == previous_end, 'the parts follow each other')
    previous_end = start + size
    call c_f_pointer(baseptr, theirs, [r + 1])
    do i = 1, r + 1
      call expect(theirs(i) == 100 * r + i, 'a load from another rank''s part')
    end do
  end do
  call MPI_Win_unlock_all(shared_win)
  call MPI_Win_free(shared_win)
  call MPI_Comm_free(host)

  ! ---- a window over a Fortran array: fence epochs
  x = [(10 * rank + i, i = 0, 7)]
  size = 32
  call MPI_Win_create(x, size, 4, MPI_INFO_NULL, MPI_COMM_WORLD, win)
  call expect(win /= MPI_WIN_NULL, 'MPI_Win_create')
  call MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN)
  call MPI_Win_get_errhandler(win, handler)
  call expect(handler == MPI_ERRORS_RETURN, 'MPI_Win_get_errhandler')
  call MPI_Info_create(info)
  call MPI_Info_set(info, 'no_locks', 'false')
  call MPI_Win_set_info(win, info, ierror)
  call expect(ierror == MPI_SUCCESS, 'MPI_Win_set_info')
  call MPI_Info_free(info)
  call MPI_Win_get_info(win, info_used)
  call MPI_Info_get_nkeys(info_used, nkeys)
  call expect(nkeys >= 0, 'MPI_Win_get_info')
  call MPI_Info_free(info_used)
  call MPI_Win_get_group(win, group)
  call MPI_Group_size(group, nkeys)
  call expect(nkeys == nranks, 'MPI_Win_get_group')
  call MPI_Group_free(group)
  call MPI_Win_fence(0, win)
  value = -rank - 1
  disp = 0
  call MPI_Put(value, 1, MPI_INTEGER, right, disp, 1, MPI_INTEGER, win)
  one = 1
  disp = 7
  do r = 0, nranks - 1
    call MPI_Accumulate(one, 1, MPI_INTEGER, r, disp, 1, MPI_INTEGER, MPI_SUM, win)
  end do
  disp = 1
  call MPI_Get(got, 2, MPI_INTEGER, left, disp, 2, MPI_INTEGER, win)
  ! Out of range: 8 ints from displacement 1.
  call MPI_Put(x, 8, MPI_INTEGER, right, disp, 8, MPI_INTEGER, win, ierror)
  call MPI_Error_class(ierror, errclass)
  call expect(errclass == MPI_ERR_RMA_RANGE, 'a put past the window is MPI_ERR_RMA_RANGE')
  call MPI_Win_fence(0, win, ierror)
  call expect(ierror == MPI_SUCCESS, 'fence after a refused put')
  call expect(x(0) == -left - 1, 'put')
  call expect(x(7) == 10 * rank + 7 + nranks, 'accumulate from every rank')
  call expect(got(1) == 10 * left + 1 .and. got(2) == 10 * left + 2, 'get')
  call expect(x(1) == 10 * rank + 1 .and. x(6) == 10 * rank + 6, 'the refused put changed nothing')

  ! ---- the request forms under lock_all, with the flushes
  call MPI_Win_fence(MPI_MODE_NOSUCCEED, win)
  call MPI_Barrier(MPI_COMM_WORLD)
  call MPI_Win_lock_all(0, win)
  value = 200 + rank
  disp = 2
  call MPI_Rput(value, 1, MPI_INTEGER, right, disp, 1, MPI_INTEGER, win, request)
  call MPI_Wait(request, MPI_STATUS_IGNORE)
  call expect(request == MPI_REQUEST_NULL, 'MPI_Rput completed')
  call MPI_Win_flush(right, win)
  disp = 2
  call MPI_Rget(got(1), 1, MPI_INTEGER, right, disp, 1, MPI_INTEGER, win, requests(1))
  disp = 3
  call MPI_Raccumulate(one, 1, MPI_INTEGER, right, disp, 1, MPI_INTEGER, MPI_SUM, win, requests(2))
  call MPI_Win_flush_local(right, win)
  disp = 4
  mine = 300 + rank
  call MPI_Rget_accumulate(mine, 1, MPI_INTEGER, got(2), 1, MPI_INTEGER, right, disp, 1, MPI_INTEGER, &
                           MPI_REPLACE, win, requests(3))
  call MPI_Waitall(3, requests, MPI_STATUSES_IGNORE)
  call MPI_Win_flush_all(win)
  call MPI_Win_flush_local_all(win)
  call expect(got(1) == 200 + rank, 'MPI_Rget sees my MPI_Rput')
  call expect(got(2) == 10 * right + 4, 'MPI_Rget_accumulate fetched the old value')
  call MPI_Win_unlock_all(win)
  call MPI_Barrier(MPI_COMM_WORLD)
  call MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, win)
  call expect(x(2) == 200 + left .and. x(3) == 10 * rank + 4 .and. x(4) == 300 + left, 'request forms applied')
  call MPI_Win_unlock(rank, win)

  ! ---- a strided section is refused through the window's f08 handler
  call MPI_Win_create_errhandler(on_win_error, handler)
  call MPI_Win_set_errhandler(win, handler)
  call MPI_Errhandler_free(handler)
  call MPI_Win_lock(MPI_LOCK_EXCLUSIVE, right, 0, win)
  disp = 0
  call MPI_Put(x(0:7:2), 4, MPI_INTEGER, right, disp, 4, MPI_INTEGER, win, ierror)
  call expect(ierror == MPI_ERR_BUFFER .and. handler_calls == 1 .and. handler_code == MPI_ERR_BUFFER .and. &
              handler_win == win, 'a strided section refused through the window''s handler')
  call MPI_Win_unlock(right, win)
  call MPI_Win_call_errhandler(win, MPI_ERR_OTHER)
  call expect(handler_calls == 2 .and. handler_code == MPI_ERR_OTHER, 'MPI_Win_call_errhandler')

  ! ---- keyvals with f08 callbacks
  call MPI_Win_create_keyval(copy_attr, delete_attr, keyval, 5_MPI_ADDRESS_KIND)
  call MPI_Win_set_attr(win, keyval, 123_MPI_ADDRESS_KIND)
  call MPI_Win_get_attr(win, keyval, attr, flag)
  call expect(flag .and. attr == 123, 'MPI_Win_get_attr')
  call MPI_Win_delete_attr(win, keyval)
  call expect(deletes == 1, 'delete callback at MPI_Win_delete_attr')
  call MPI_Win_set_attr(win, keyval, 123_MPI_ADDRESS_KIND)
  call MPI_Win_free(win)
  call expect(win == MPI_WIN_NULL .and. deletes == 2, 'delete callback at MPI_Win_free')
  call MPI_Win_free_keyval(keyval)
  call MPI_Win_create_keyval(MPI_WIN_DUP_FN, MPI_WIN_NULL_DELETE_FN, keyval, 0_MPI_ADDRESS_KIND)
  call MPI_Win_free_keyval(keyval)

  ! ---- a counter in MPI_Win_allocate's memory, hammered; compare-and-swap
  size = 8
  call MPI_Win_allocate(size, 4, MPI_INFO_NULL, MPI_COMM_WORLD, baseptr, counter_win)
  call c_f_pointer(baseptr, counter, [2])
  call MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, counter_win)
  counter = [0, -1]
  call MPI_Win_unlock(rank, counter_win)
  call MPI_Barrier(MPI_COMM_WORLD)
  disp = 0
  do i = 1, iters
    call MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, counter_win)
    call MPI_Get(fetched, 1, MPI_INTEGER, 0, disp, 1, MPI_INTEGER, counter_win)
    call MPI_Win_flush(0, counter_win)
    call MPI_Fetch_and_op(one, old, MPI_INTEGER, 0, disp, MPI_SUM, counter_win)
    call MPI_Win_unlock(0, counter_win)
    call expect(old == fetched, 'nobody else inside the exclusive lock')
  end do
  mine = rank
  expected = -1
  disp = 1
  call MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, counter_win)
  call MPI_Compare_and_swap(mine, expected, old, MPI_INTEGER, 0, disp, counter_win)
  call MPI_Win_unlock(0, counter_win)
  won = merge(1, 0, old == -1)
  call MPI_Allreduce(MPI_IN_PLACE, won, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD)
  call expect(won == 1, 'one compare-and-swap won')
  call MPI_Barrier(MPI_COMM_WORLD)
  if (rank == 0) then
    call MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, counter_win)
    call expect(counter(1) == iters * nranks, 'the counter ends exact')
    call expect(counter(2) >= 0 .and. counter(2) < nranks, 'the winner''s rank')
    call MPI_Win_unlock(0, counter_win)
  end if
  call MPI_Win_free(counter_win)

  ! ---- MPI_Alloc_mem's memory (TYPE(C_PTR)) under a window, then MPI_Free_mem
  size = 16
  call MPI_Alloc_mem(size, MPI_INFO_NULL, baseptr, ierror)
  call expect(ierror == MPI_SUCCESS .and. c_associated(baseptr), 'MPI_Alloc_mem')
  call c_f_pointer(baseptr, theirs, [4])
  theirs = -1
  call MPI_Win_create(theirs, size, 4, MPI_INFO_NULL, MPI_COMM_WORLD, win)
  call MPI_Win_get_attr(win, MPI_WIN_BASE, attr, flag)
  call expect(attr == transfer(baseptr, attr), 'the window is over MPI_Alloc_mem''s memory')
  call MPI_Win_fence(0, win)
  value = rank + 60
  disp = 3
  call MPI_Put(value, 1, MPI_INTEGER, right, disp, 1, MPI_INTEGER, win)
  call MPI_Win_fence(0, win)
  call expect(theirs(4) == left + 60 .and. theirs(1) == -1, 'a put into MPI_Alloc_mem''s memory')
  call MPI_Win_free(win)
  call MPI_Free_mem(theirs, ierror)
  call expect(ierror == MPI_SUCCESS, 'MPI_Free_mem')

  ! ---- a dynamic window: attach, a put at the region's address, detach
  call MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, dynamic_win)
  region = 0
  size = 16
  call MPI_Win_attach(dynamic_win, region, size)
  call MPI_Get_address(region, address)
  ! Each rank needs its right neighbour's address: a ring shift.
  call MPI_Sendrecv(address, 1, MPI_AINT, left, 0, attr, 1, MPI_AINT, right, 0, MPI_COMM_WORLD, &
                    MPI_STATUS_IGNORE)
  call MPI_Win_lock(MPI_LOCK_EXCLUSIVE, right, 0, dynamic_win)
  value = 900 + rank
  disp = attr + 8
  call MPI_Put(value, 1, MPI_INTEGER, right, disp, 1, MPI_INTEGER, dynamic_win)
  call MPI_Win_unlock(right, dynamic_win)
  call MPI_Barrier(MPI_COMM_WORLD)
  call MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, dynamic_win)
  call expect(region(3) == 900 + left .and. region(1) == 0, 'a put into attached memory')
  call MPI_Win_unlock(rank, dynamic_win)
  call MPI_Barrier(MPI_COMM_WORLD)
  call MPI_Win_detach(dynamic_win, region)
  call MPI_Win_free(dynamic_win)

  call MPI_Finalize()
  if (rank == 0) print '(a)', 'rma_fortran_f08: ok'
end program rma_fortran_f08

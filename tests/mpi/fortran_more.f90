! `use mpi`, free form: the bindings beyond fortran_mod.f90's. Info objects (blank trimming, a value cut
! to valuelen and to the variable's length, nkeys, nthkey, delete, dup); an error handler written in
! Fortran, called by MPI_COMM_CALL_ERRHANDLER and by a real error; a new error class, code and string;
! attribute caching with Fortran copy and delete callbacks, MPI_COMM_DUP_FN and MPI_COMM_NULL_COPY_FN,
! datatype attributes, MPI-1's MPI_KEYVAL_CREATE / MPI_ATTR_PUT / MPI_ATTR_GET; hvector, hindexed and
! indexed_block types sending a row, a type's name, envelope and contents; nonblocking scan, exscan,
! gatherv, alltoallv and reduce_scatter_block, MPI_REDUCE_LOCAL, a persistent gather started twice; a
! distributed graph ring with MPI_UNWEIGHTED and its neighborhood collectives; a generalized request
! whose Fortran query function sets the status; Fortran kinds as MPI types (MPI_TYPE_MATCH_SIZE,
! MPI_TYPE_CREATE_F90_INTEGER/_REAL/_COMPLEX) reducing variables of those kinds; MPI-4's
! MPI_ISENDRECV and _REPLACE around the ring, MPI_INFO_CREATE_ENV, MPI-4.1's buffer flushes and a
! communicator's own buffer.
module more_state
  use mpi
  use fortran_check
  implicit none
  integer :: handler_calls = 0, last_code = MPI_SUCCESS
  integer :: copies = 0, deletes = 0, frees = 0
  integer(kind=MPI_ADDRESS_KIND) :: seen_in = -1, seen_extra = -1, seen_delete = -1
end module more_state

! A communicator error handler: records the code.
subroutine record_error(comm, code)
  use more_state
  implicit none
  integer :: comm, code
  handler_calls = handler_calls + 1
  last_code = code
  if (comm == MPI_COMM_NULL) handler_calls = -1000
end subroutine record_error

! Attribute callbacks (MPI-3.1 section 6.7.2): the copy adds one, the delete records the value.
subroutine copy_attr(oldcomm, keyval, extra_state, value_in, value_out, flag, ierr)
  use more_state
  implicit none
  integer :: oldcomm, keyval, ierr
  integer(kind=MPI_ADDRESS_KIND) :: extra_state, value_in, value_out
  logical :: flag
  copies = copies + 1
  seen_in = value_in
  seen_extra = extra_state
  value_out = value_in + 1
  flag = .true.
  ierr = MPI_SUCCESS
  if (oldcomm == MPI_COMM_NULL .or. keyval == MPI_KEYVAL_INVALID) ierr = MPI_ERR_OTHER
end subroutine copy_attr

subroutine delete_attr(comm, keyval, value, extra_state, ierr)
  use more_state
  implicit none
  integer :: comm, keyval, ierr
  integer(kind=MPI_ADDRESS_KIND) :: value, extra_state
  deletes = deletes + 1
  seen_delete = value
  ierr = MPI_SUCCESS
  if (comm == MPI_COMM_NULL .or. keyval == MPI_KEYVAL_INVALID .or. extra_state /= 7) ierr = MPI_ERR_OTHER
end subroutine delete_attr

! MPI-1's copy callback: INTEGER values.
subroutine copy_attr1(oldcomm, keyval, extra_state, value_in, value_out, flag, ierr)
  use mpi
  implicit none
  integer :: oldcomm, keyval, extra_state, value_in, value_out, ierr
  logical :: flag
  value_out = 2 * value_in + extra_state
  flag = .true.
  ierr = 0
  if (oldcomm == MPI_COMM_NULL .or. keyval == MPI_KEYVAL_INVALID) ierr = MPI_ERR_OTHER
end subroutine copy_attr1

! A generalized request's callbacks: the query sets 5 integers received, the tag from extra_state.
subroutine query_fn(extra_state, status, ierr)
  use more_state
  implicit none
  integer(kind=MPI_ADDRESS_KIND) :: extra_state
  integer :: status(MPI_STATUS_SIZE), ierr
  call MPI_STATUS_SET_ELEMENTS(status, MPI_INTEGER, 5, ierr)
  call MPI_STATUS_SET_CANCELLED(status, .false., ierr)
  status(MPI_SOURCE) = MPI_UNDEFINED
  status(MPI_TAG) = int(extra_state)
  ierr = MPI_SUCCESS
end subroutine query_fn

subroutine free_fn(extra_state, ierr)
  use more_state
  implicit none
  integer(kind=MPI_ADDRESS_KIND) :: extra_state
  integer :: ierr
  frees = frees + 1
  ierr = MPI_SUCCESS
  if (extra_state /= 42) ierr = MPI_ERR_OTHER
end subroutine free_fn

subroutine cancel_fn(extra_state, complete, ierr)
  implicit none
  integer(kind=8) :: extra_state
  logical :: complete
  integer :: ierr
  ierr = 0
  if (complete .and. extra_state < 0) ierr = 1
end subroutine cancel_fn

program fmore
  use mpi
  use more_state
  implicit none
  external record_error, copy_attr, delete_attr, copy_attr1, query_fn, free_fn, cancel_fn
  integer :: ierr, rank, size, i, left, right, n
  logical :: flag

  call MPI_INIT(ierr)
  call MPI_COMM_RANK(MPI_COMM_WORLD, rank, ierr)
  call MPI_COMM_SIZE(MPI_COMM_WORLD, size, ierr)
  call expect(size >= 2, 'run with 2 ranks or more')
  left = mod(rank + size - 1, size)
  right = mod(rank + 1, size)

  call info_objects()
  call error_handlers()
  call attributes()
  call datatypes()
  call collectives()
  call dist_graph()
  call generalized_request()
  call kinds()
  call mpi4_calls()

  call MPI_BARRIER(MPI_COMM_WORLD, ierr)
  if (rank == 0) print *, 'fortran_more: all checks passed on', size, 'ranks'
  call MPI_FINALIZE(ierr)

contains

  subroutine info_objects()
    integer :: info, copy, nkeys, valuelen
    character(len=20) :: value
    character(len=3) :: tiny
    character(len=MPI_MAX_INFO_KEY) :: key0, key1
    call MPI_INFO_CREATE(info, ierr)
    call expect(ierr == MPI_SUCCESS .and. info /= MPI_INFO_NULL, 'MPI_INFO_CREATE')
    call MPI_INFO_SET(info, 'color', 'deep blue', ierr)
    call MPI_INFO_SET(info, '  size  ', '  12345678  ', ierr)
    call MPI_INFO_GET_NKEYS(info, nkeys, ierr)
    call expect(nkeys == 2, 'MPI_INFO_GET_NKEYS after two sets')
    value = 'xxxxxxxxxxxxxxxxxxxx'
    call MPI_INFO_GET(info, 'color', len(value), value, flag, ierr)
    call expect(flag .and. value == 'deep blue', 'MPI_INFO_GET whole value, blank-padded')
    call MPI_INFO_GET(info, 'color', 4, value, flag, ierr)
    call expect(flag .and. value == 'deep', 'MPI_INFO_GET cut to valuelen 4')
    call MPI_INFO_GET(info, 'color', MPI_MAX_INFO_VAL, tiny, flag, ierr)
    call expect(flag .and. tiny == 'dee', 'MPI_INFO_GET cut to the variable length 3')
    call MPI_INFO_GET(info, 'size', len(value), value, flag, ierr)
    call expect(flag .and. value == '12345678', 'MPI_INFO_GET of a key and value set with blanks')
    call MPI_INFO_GET_VALUELEN(info, 'size', valuelen, flag, ierr)
    call expect(flag .and. valuelen == 8, 'MPI_INFO_GET_VALUELEN')
    call MPI_INFO_GET(info, 'missing', len(value), value, flag, ierr)
    call expect(ierr == MPI_SUCCESS .and. .not. flag, 'MPI_INFO_GET of a missing key')
    call MPI_INFO_GET_NTHKEY(info, 0, key0, ierr)
    call MPI_INFO_GET_NTHKEY(info, 1, key1, ierr)
    call expect((key0 == 'color' .and. key1 == 'size') .or. (key0 == 'size' .and. key1 == 'color'), &
                'MPI_INFO_GET_NTHKEY 0 and 1')
    call MPI_INFO_DUP(info, copy, ierr)
    call MPI_INFO_DELETE(info, 'color', ierr)
    call MPI_INFO_GET_NKEYS(info, nkeys, ierr)
    call expect(nkeys == 1, 'MPI_INFO_DELETE leaves one key')
    call MPI_INFO_GET_NKEYS(copy, nkeys, ierr)
    call expect(nkeys == 2, 'MPI_INFO_DUP keeps both keys')
    call MPI_INFO_GET(copy, 'color', len(value), value, flag, ierr)
    call expect(flag .and. value == 'deep blue', 'MPI_INFO_GET on the duplicate')
    call MPI_INFO_FREE(copy, ierr)
    call MPI_INFO_FREE(info, ierr)
    call expect(info == MPI_INFO_NULL .and. copy == MPI_INFO_NULL, 'MPI_INFO_FREE sets MPI_INFO_NULL')
  end subroutine info_objects

  subroutine error_handlers()
    integer :: comm, handler, cls, code, got, length, x
    integer(kind=MPI_ADDRESS_KIND) :: last_used
    character(len=MPI_MAX_ERROR_STRING) :: text
    call MPI_COMM_DUP(MPI_COMM_WORLD, comm, ierr)
    call MPI_COMM_CREATE_ERRHANDLER(record_error, handler, ierr)
    call expect(ierr == MPI_SUCCESS, 'MPI_COMM_CREATE_ERRHANDLER')
    call MPI_COMM_SET_ERRHANDLER(comm, handler, ierr)
    call MPI_COMM_CALL_ERRHANDLER(comm, MPI_ERR_OTHER, ierr)
    call expect(handler_calls == 1 .and. last_code == MPI_ERR_OTHER, 'handler called by MPI_COMM_CALL_ERRHANDLER')
    ! A real error: a send to a rank that does not exist.
    x = 1
    call MPI_SEND(x, 1, MPI_INTEGER, size + 5, 0, comm, ierr)
    call expect(ierr /= MPI_SUCCESS, 'MPI_SEND to a bad rank fails')
    call expect(handler_calls == 2, 'handler called by a bad send')
    call MPI_ERROR_CLASS(last_code, got, ierr)
    call expect(got == MPI_ERR_RANK, 'the handler saw MPI_ERR_RANK')
    ! A class, a code and a string of the program's.
    call MPI_ADD_ERROR_CLASS(cls, ierr)
    call expect(ierr == MPI_SUCCESS .and. cls /= MPI_SUCCESS, 'MPI_ADD_ERROR_CLASS')
    call MPI_ADD_ERROR_CODE(cls, code, ierr)
    call expect(ierr == MPI_SUCCESS .and. code /= cls .and. code /= MPI_SUCCESS, 'MPI_ADD_ERROR_CODE')
    call MPI_COMM_GET_ATTR(MPI_COMM_WORLD, MPI_LASTUSEDCODE, last_used, flag, ierr)
    call expect(flag .and. last_used >= code, 'MPI_LASTUSEDCODE after MPI_ADD_ERROR_CODE')
    call MPI_ADD_ERROR_STRING(code, 'made in Fortran   ', ierr)
    call expect(ierr == MPI_SUCCESS, 'MPI_ADD_ERROR_STRING')
    call MPI_ERROR_STRING(code, text, length, ierr)
    call expect(length == 15 .and. text(1:length) == 'made in Fortran', 'MPI_ERROR_STRING of the new code')
    call MPI_ERROR_CLASS(code, got, ierr)
    call expect(got == cls, 'MPI_ERROR_CLASS of the new code')
    call MPI_COMM_CALL_ERRHANDLER(comm, code, ierr)
    call expect(handler_calls == 3 .and. last_code == code, 'handler called with the new code')
    call MPI_ERRHANDLER_FREE(handler, ierr)
    call MPI_COMM_FREE(comm, ierr)
  end subroutine error_handlers

  subroutine attributes()
    integer :: base, dup, dup2, key, key_dup, key_null, key1, tkey, type, type2, ivalue
    integer(kind=MPI_ADDRESS_KIND) :: extra, value, got
    call MPI_COMM_DUP(MPI_COMM_WORLD, base, ierr)
    ! Fortran callbacks: the copy at MPI_COMM_DUP sees the value, the delete at MPI_COMM_FREE.
    extra = 7
    call MPI_COMM_CREATE_KEYVAL(copy_attr, delete_attr, key, extra, ierr)
    call expect(ierr == MPI_SUCCESS .and. key /= MPI_KEYVAL_INVALID, 'MPI_COMM_CREATE_KEYVAL')
    value = 1000 + rank
    call MPI_COMM_SET_ATTR(base, key, value, ierr)
    call MPI_COMM_GET_ATTR(base, key, got, flag, ierr)
    call expect(flag .and. got == value, 'MPI_COMM_GET_ATTR of a set value')
    call MPI_COMM_DUP(base, dup, ierr)
    call expect(copies == 1 .and. seen_in == value .and. seen_extra == 7, 'copy callback at MPI_COMM_DUP')
    call MPI_COMM_GET_ATTR(dup, key, got, flag, ierr)
    call expect(flag .and. got == value + 1, 'the copy callback''s value on the duplicate')
    call MPI_COMM_FREE(dup, ierr)
    call expect(deletes == 1 .and. seen_delete == value + 1, 'delete callback at MPI_COMM_FREE')
    call MPI_COMM_DELETE_ATTR(base, key, ierr)
    call expect(deletes == 2 .and. seen_delete == value, 'delete callback at MPI_COMM_DELETE_ATTR')
    call MPI_COMM_GET_ATTR(base, key, got, flag, ierr)
    call expect(.not. flag, 'no attribute after MPI_COMM_DELETE_ATTR')
    call MPI_COMM_FREE_KEYVAL(key, ierr)
    call expect(key == MPI_KEYVAL_INVALID, 'MPI_COMM_FREE_KEYVAL')
    ! The predefined callbacks: a value wider than 32 bits copied, another not copied.
    call MPI_COMM_CREATE_KEYVAL(MPI_COMM_DUP_FN, MPI_COMM_NULL_DELETE_FN, key_dup, extra, ierr)
    call MPI_COMM_CREATE_KEYVAL(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, key_null, extra, ierr)
    value = 2_MPI_ADDRESS_KIND**40 + rank
    call MPI_COMM_SET_ATTR(base, key_dup, value, ierr)
    call MPI_COMM_SET_ATTR(base, key_null, value, ierr)
    call MPI_COMM_DUP(base, dup2, ierr)
    call MPI_COMM_GET_ATTR(dup2, key_dup, got, flag, ierr)
    call expect(flag .and. got == value, 'MPI_COMM_DUP_FN copies the value')
    call MPI_COMM_GET_ATTR(dup2, key_null, got, flag, ierr)
    call expect(.not. flag, 'MPI_COMM_NULL_COPY_FN copies nothing')
    call MPI_COMM_FREE(dup2, ierr)
    call MPI_COMM_DELETE_ATTR(base, key_dup, ierr)
    call MPI_COMM_DELETE_ATTR(base, key_null, ierr)
    call MPI_COMM_FREE_KEYVAL(key_dup, ierr)
    call MPI_COMM_FREE_KEYVAL(key_null, ierr)
    ! MPI-1's names, INTEGER values.
    call MPI_KEYVAL_CREATE(copy_attr1, MPI_NULL_DELETE_FN, key1, 3, ierr)
    call expect(ierr == MPI_SUCCESS, 'MPI_KEYVAL_CREATE')
    call MPI_ATTR_PUT(base, key1, 21, ierr)
    call MPI_ATTR_GET(base, key1, ivalue, flag, ierr)
    call expect(flag .and. ivalue == 21, 'MPI_ATTR_GET')
    call MPI_COMM_DUP(base, dup, ierr)
    call expect(ierr == MPI_SUCCESS, 'MPI_COMM_DUP with an MPI-1 copy callback')
    call MPI_ATTR_GET(dup, key1, ivalue, flag, ierr)
    call expect(flag .and. ivalue == 45, 'MPI-1 copy callback: 2 * 21 + 3')
    call MPI_ATTR_DELETE(dup, key1, ierr)
    call MPI_ATTR_GET(dup, key1, ivalue, flag, ierr)
    call expect(.not. flag, 'MPI_ATTR_DELETE')
    call MPI_COMM_FREE(dup, ierr)
    call MPI_KEYVAL_FREE(key1, ierr)
    call MPI_ATTR_GET(MPI_COMM_WORLD, MPI_TAG_UB, ivalue, flag, ierr)
    call expect(flag .and. ivalue >= 32767, 'MPI_ATTR_GET of MPI_TAG_UB')
    call MPI_COMM_GET_ATTR(MPI_COMM_WORLD, MPI_TAG_UB, got, flag, ierr)
    call expect(flag .and. got == ivalue, 'MPI_COMM_GET_ATTR of MPI_TAG_UB')
    call MPI_COMM_FREE(base, ierr)
    ! Datatype attributes.
    call MPI_TYPE_CREATE_KEYVAL(MPI_TYPE_DUP_FN, MPI_TYPE_NULL_DELETE_FN, tkey, extra, ierr)
    call MPI_TYPE_CONTIGUOUS(2, MPI_INTEGER, type, ierr)
    value = 77
    call MPI_TYPE_SET_ATTR(type, tkey, value, ierr)
    call MPI_TYPE_DUP(type, type2, ierr)
    call MPI_TYPE_GET_ATTR(type2, tkey, got, flag, ierr)
    call expect(flag .and. got == 77, 'MPI_TYPE_DUP_FN copies a datatype attribute')
    call MPI_TYPE_DELETE_ATTR(type2, tkey, ierr)
    call MPI_TYPE_GET_ATTR(type2, tkey, got, flag, ierr)
    call expect(.not. flag, 'MPI_TYPE_DELETE_ATTR')
    call MPI_TYPE_FREE(type2, ierr)
    call MPI_TYPE_FREE(type, ierr)
    call MPI_TYPE_FREE_KEYVAL(tkey, ierr)
    call expect(tkey == MPI_KEYVAL_INVALID, 'MPI_TYPE_FREE_KEYVAL')
  end subroutine attributes

  subroutine datatypes()
    integer :: matrix(4, 3), got(3), isz, row, hidx, blk, hblk, vec, j, length
    integer :: ni, na, nd, combiner, ints(3), types(1), status(MPI_STATUS_SIZE)
    integer :: blocklengths(2)
    integer(kind=MPI_ADDRESS_KIND) :: stride, displs(2), lb, extent, addrs(1)
    integer(kind=MPI_COUNT_KIND) :: size_x, count_x
    character(len=MPI_MAX_OBJECT_NAME) :: name
    do j = 1, 3
      do i = 1, 4
        matrix(i, j) = rank * 100 + i * 10 + j
      end do
    end do
    call MPI_TYPE_SIZE(MPI_INTEGER, isz, ierr)
    ! Row 2 of a column-major 4x3 matrix: 3 integers 4 * isz bytes apart.
    stride = 4 * isz
    call MPI_TYPE_CREATE_HVECTOR(3, 1, stride, MPI_INTEGER, row, ierr)
    call MPI_TYPE_COMMIT(row, ierr)
    call MPI_SENDRECV(matrix(2, 1), 1, row, right, 5, got, 3, MPI_INTEGER, left, 5, MPI_COMM_WORLD, status, ierr)
    call expect(all(got == [(left * 100 + 20 + j, j = 1, 3)]), 'a row sent with MPI_TYPE_CREATE_HVECTOR')
    call MPI_GET_ELEMENTS_X(status, MPI_INTEGER, count_x, ierr)
    call expect(count_x == 3, 'MPI_GET_ELEMENTS_X')
    call MPI_TYPE_GET_TRUE_EXTENT(row, lb, extent, ierr)
    call expect(lb == 0 .and. extent == 9 * isz, 'MPI_TYPE_GET_TRUE_EXTENT of the row')
    call MPI_TYPE_SIZE_X(row, size_x, ierr)
    call expect(size_x == 3 * isz, 'MPI_TYPE_SIZE_X')
    call MPI_TYPE_SET_NAME(row, 'matrix row  ', ierr)
    call MPI_TYPE_GET_NAME(row, name, length, ierr)
    call expect(length == 10 .and. name == 'matrix row', 'MPI_TYPE_SET_NAME / MPI_TYPE_GET_NAME')
    call MPI_TYPE_GET_ENVELOPE(row, ni, na, nd, combiner, ierr)
    call expect(combiner == MPI_COMBINER_HVECTOR .and. ni == 2 .and. na == 1 .and. nd == 1, 'envelope of the hvector')
    call MPI_TYPE_GET_CONTENTS(row, 2, 1, 1, ints, addrs, types, ierr)
    call expect(ints(1) == 3 .and. ints(2) == 1 .and. addrs(1) == stride .and. types(1) == MPI_INTEGER, &
                'contents of the hvector')
    ! hindexed: from row 3, a block of 1 in column 1 and a block of 2 in column 2.
    blocklengths = [1, 2]
    displs = [0_MPI_ADDRESS_KIND, stride]
    call MPI_TYPE_CREATE_HINDEXED(2, blocklengths, displs, MPI_INTEGER, hidx, ierr)
    call MPI_TYPE_COMMIT(hidx, ierr)
    call MPI_SENDRECV(matrix(3, 1), 1, hidx, right, 6, got, 3, MPI_INTEGER, left, 6, MPI_COMM_WORLD, status, ierr)
    call expect(got(1) == left * 100 + 31 .and. got(2) == left * 100 + 32 .and. got(3) == left * 100 + 42, &
                'MPI_TYPE_CREATE_HINDEXED')
    call MPI_TYPE_CREATE_INDEXED_BLOCK(2, 2, [0, 4], MPI_INTEGER, blk, ierr)
    call MPI_TYPE_COMMIT(blk, ierr)
    call MPI_TYPE_SIZE_X(blk, size_x, ierr)
    call MPI_TYPE_GET_EXTENT(blk, lb, extent, ierr)
    call expect(size_x == 4 * isz .and. extent == 6 * isz, 'MPI_TYPE_CREATE_INDEXED_BLOCK size and extent')
    call MPI_GET_ADDRESS(matrix(1, 1), addrs(1), ierr)
    call MPI_GET_ADDRESS(matrix(1, 2), lb, ierr)
    call expect(MPI_AINT_DIFF(lb, addrs(1)) == stride .and. MPI_AINT_ADD(addrs(1), stride) == lb, &
                'MPI_AINT_DIFF and MPI_AINT_ADD')
    call MPI_TYPE_CREATE_HINDEXED_BLOCK(2, 1, displs, MPI_INTEGER, hblk, ierr)
    call MPI_TYPE_GET_EXTENT(hblk, lb, extent, ierr)
    call expect(extent == stride + isz, 'MPI_TYPE_CREATE_HINDEXED_BLOCK extent')
    call MPI_TYPE_FREE(hblk, ierr)
    ! A vector's envelope and contents.
    call MPI_TYPE_VECTOR(3, 2, 5, MPI_INTEGER, vec, ierr)
    call MPI_TYPE_GET_ENVELOPE(vec, ni, na, nd, combiner, ierr)
    call expect(combiner == MPI_COMBINER_VECTOR .and. ni == 3 .and. na == 0 .and. nd == 1, 'envelope of a vector')
    call MPI_TYPE_GET_CONTENTS(vec, 3, 0, 1, ints, addrs, types, ierr)
    call expect(all(ints == [3, 2, 5]) .and. types(1) == MPI_INTEGER, 'contents of a vector')
    call MPI_TYPE_FREE(vec, ierr)
    call MPI_TYPE_FREE(blk, ierr)
    call MPI_TYPE_FREE(hidx, ierr)
    call MPI_TYPE_FREE(row, ierr)
  end subroutine datatypes

  subroutine collectives()
    integer :: request, requests(2), mine, prefix, before, commute, k, root_count, summed
    integer :: local_in(2), local_inout(2), block(8)
    integer, allocatable :: counts(:), displs(:), gathered(:), sent(:), received(:), rcounts(:), rdispls(:)
    integer :: gather_in, statuses(MPI_STATUS_SIZE, 2)
    ! Nonblocking scans of rank + 1.
    mine = rank + 1
    before = -1
    call MPI_ISCAN(mine, prefix, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, requests(1), ierr)
    call MPI_IEXSCAN(mine, before, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, requests(2), ierr)
    call MPI_WAITALL(2, requests, statuses, ierr)
    call expect(prefix == (rank + 1) * (rank + 2) / 2, 'MPI_ISCAN')
    call expect(rank == 0 .or. before == rank * (rank + 1) / 2, 'MPI_IEXSCAN')
    call expect(all(requests == MPI_REQUEST_NULL), 'requests null after MPI_WAITALL')
    ! MPI_IGATHERV: rank r gives r + 1 values.
    allocate(counts(size), displs(size), sent(rank + 1))
    root_count = size * (size + 1) / 2
    allocate(gathered(root_count))
    do k = 1, size
      counts(k) = k
      displs(k) = (k - 1) * k / 2
    end do
    sent = [(rank * 10 + k, k = 1, rank + 1)]
    gathered = -1
    call MPI_IGATHERV(sent, rank + 1, MPI_INTEGER, gathered, counts, displs, MPI_INTEGER, 0, MPI_COMM_WORLD, &
                      request, ierr)
    call MPI_WAIT(request, MPI_STATUS_IGNORE, ierr)
    if (rank == 0) then
      do k = 1, size
        call expect(all(gathered(displs(k) + 1:displs(k) + k) == [((k - 1) * 10 + i, i = 1, k)]), 'MPI_IGATHERV')
      end do
    end if
    deallocate(sent)
    ! MPI_IALLTOALLV: rank r sends d + 1 values 100 * r + d to rank d.
    allocate(rcounts(size), rdispls(size), sent(root_count), received(size * (rank + 1)))
    do k = 1, size
      counts(k) = k
      displs(k) = (k - 1) * k / 2
      sent(displs(k) + 1:displs(k) + k) = 100 * rank + (k - 1)
      rcounts(k) = rank + 1
      rdispls(k) = (k - 1) * (rank + 1)
    end do
    received = -1
    call MPI_IALLTOALLV(sent, counts, displs, MPI_INTEGER, received, rcounts, rdispls, MPI_INTEGER, &
                        MPI_COMM_WORLD, request, ierr)
    call MPI_WAIT(request, MPI_STATUS_IGNORE, ierr)
    do k = 1, size
      call expect(all(received(rdispls(k) + 1:rdispls(k) + rank + 1) == 100 * (k - 1) + rank), 'MPI_IALLTOALLV')
    end do
    ! MPI_IREDUCE_SCATTER_BLOCK: each rank gets the sum of rank + 1 over the ranks.
    block = rank + 1
    call MPI_IREDUCE_SCATTER_BLOCK(block, summed, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, request, ierr)
    call MPI_WAIT(request, MPI_STATUS_IGNORE, ierr)
    call expect(summed == size * (size + 1) / 2, 'MPI_IREDUCE_SCATTER_BLOCK')
    ! MPI_REDUCE_LOCAL and MPI_OP_COMMUTATIVE.
    local_in = [1, 2]
    local_inout = [10, 20]
    call MPI_REDUCE_LOCAL(local_in, local_inout, 2, MPI_INTEGER, MPI_SUM, ierr)
    call expect(all(local_inout == [11, 22]), 'MPI_REDUCE_LOCAL')
    call MPI_OP_COMMUTATIVE(MPI_SUM, commute, ierr)
    call expect(commute /= 0, 'MPI_OP_COMMUTATIVE of MPI_SUM')
    ! A persistent gather, started twice with new values.
    call MPI_GATHER_INIT(gather_in, 1, MPI_INTEGER, gathered, 1, MPI_INTEGER, 0, MPI_COMM_WORLD, MPI_INFO_NULL, &
                         request, ierr)
    call expect(ierr == MPI_SUCCESS .and. request /= MPI_REQUEST_NULL, 'MPI_GATHER_INIT')
    do k = 1, 2
      gather_in = 1000 * k + rank
      gathered = -1
      call MPI_START(request, ierr)
      call MPI_WAIT(request, MPI_STATUS_IGNORE, ierr)
      if (rank == 0) call expect(all(gathered(1:size) == [(1000 * k + i, i = 0, size - 1)]), 'persistent gather')
    end do
    call expect(request /= MPI_REQUEST_NULL, 'a persistent request stays after MPI_WAIT')
    call MPI_REQUEST_FREE(request, ierr)
    deallocate(counts, displs, gathered, sent, received, rcounts, rdispls)
  end subroutine collectives

  subroutine dist_graph()
    integer :: ring, topology, indegree, outdegree, sources(1), destinations(1), request
    integer :: out(1), in(1), gathered(1)
    logical :: weighted
    ! A directed ring: each rank hears from its left and speaks to its right, no weights.
    call MPI_DIST_GRAPH_CREATE_ADJACENT(MPI_COMM_WORLD, 1, [left], MPI_UNWEIGHTED, 1, [right], MPI_UNWEIGHTED, &
                                        MPI_INFO_NULL, .false., ring, ierr)
    call expect(ierr == MPI_SUCCESS, 'MPI_DIST_GRAPH_CREATE_ADJACENT with MPI_UNWEIGHTED')
    call MPI_TOPO_TEST(ring, topology, ierr)
    call expect(topology == MPI_DIST_GRAPH, 'MPI_TOPO_TEST')
    call MPI_DIST_GRAPH_NEIGHBORS_COUNT(ring, indegree, outdegree, weighted, ierr)
    call expect(indegree == 1 .and. outdegree == 1 .and. .not. weighted, 'MPI_DIST_GRAPH_NEIGHBORS_COUNT')
    call MPI_DIST_GRAPH_NEIGHBORS(ring, 1, sources, MPI_UNWEIGHTED, 1, destinations, MPI_UNWEIGHTED, ierr)
    call expect(sources(1) == left .and. destinations(1) == right, 'MPI_DIST_GRAPH_NEIGHBORS')
    out(1) = 100 + rank
    in(1) = -1
    call MPI_NEIGHBOR_ALLTOALL(out, 1, MPI_INTEGER, in, 1, MPI_INTEGER, ring, ierr)
    call expect(in(1) == 100 + left, 'MPI_NEIGHBOR_ALLTOALL on the ring')
    gathered(1) = -1
    call MPI_INEIGHBOR_ALLGATHER(out, 1, MPI_INTEGER, gathered, 1, MPI_INTEGER, ring, request, ierr)
    call MPI_WAIT(request, MPI_STATUS_IGNORE, ierr)
    call expect(gathered(1) == 100 + left, 'MPI_INEIGHBOR_ALLGATHER on the ring')
    call MPI_COMM_FREE(ring, ierr)
  end subroutine dist_graph

  subroutine generalized_request()
    integer :: request, status(MPI_STATUS_SIZE), count
    integer(kind=MPI_ADDRESS_KIND) :: extra
    logical :: cancelled
    extra = 42
    call MPI_GREQUEST_START(query_fn, free_fn, cancel_fn, extra, request, ierr)
    call expect(ierr == MPI_SUCCESS .and. request /= MPI_REQUEST_NULL, 'MPI_GREQUEST_START')
    call MPI_REQUEST_GET_STATUS(request, flag, status, ierr)
    call expect(.not. flag, 'MPI_REQUEST_GET_STATUS before MPI_GREQUEST_COMPLETE')
    call MPI_GREQUEST_COMPLETE(request, ierr)
    call MPI_REQUEST_GET_STATUS(request, flag, status, ierr)
    call expect(flag .and. request /= MPI_REQUEST_NULL, 'MPI_REQUEST_GET_STATUS after completion')
    call MPI_WAIT(request, status, ierr)
    call expect(ierr == MPI_SUCCESS .and. request == MPI_REQUEST_NULL, 'MPI_WAIT of a generalized request')
    call expect(status(MPI_TAG) == 42, 'the status set by the Fortran query function')
    call MPI_GET_COUNT(status, MPI_INTEGER, count, ierr)
    call expect(count == 5, 'MPI_GET_COUNT of the query''s MPI_STATUS_SET_ELEMENTS')
    call MPI_TEST_CANCELLED(status, cancelled, ierr)
    call expect(.not. cancelled, 'MPI_TEST_CANCELLED of the query''s status')
    call expect(frees == 1, 'the Fortran free function ran once')
    call MPI_PCONTROL(1)
  end subroutine generalized_request

  ! Variables of selected kinds, reduced and sent as the types MPI gives for those kinds.
  subroutine kinds()
    integer, parameter :: ik = selected_int_kind(9), dk = selected_real_kind(15, 307), ck = selected_real_kind(6)
    integer(kind=ik) :: isum(2)
    real(kind=dk) :: dsum(2)
    complex(kind=ck) :: z(2)
    integer :: itype, dtype, ztype, again, matched, tsize, ierr, ni, na, nd, combiner, ints(2)
    integer(kind=MPI_ADDRESS_KIND) :: addrs(1)
    integer :: types(1)
    call MPI_TYPE_CREATE_F90_INTEGER(9, itype, ierr)
    call MPI_TYPE_SIZE(itype, tsize, ierr)
    call expect(ierr == MPI_SUCCESS .and. tsize == 4, 'f90 integer(9) is 4 bytes')
    call MPI_TYPE_CREATE_F90_INTEGER(9, again, ierr)
    call expect(again == itype, 'the same f90 integer type twice')
    call MPI_TYPE_GET_ENVELOPE(itype, ni, na, nd, combiner, ierr)
    call expect(combiner == MPI_COMBINER_F90_INTEGER .and. ni == 1 .and. na == 0 .and. nd == 0, 'f90 envelope')
    call MPI_TYPE_GET_CONTENTS(itype, 2, 1, 1, ints, addrs, types, ierr)
    call expect(ints(1) == 9, 'f90 integer contents')
    call MPI_TYPE_CREATE_F90_REAL(15, 307, dtype, ierr)
    call MPI_TYPE_SIZE(dtype, tsize, ierr)
    call expect(tsize == 8, 'f90 real(15, 307) is 8 bytes')
    call MPI_TYPE_CREATE_F90_COMPLEX(6, MPI_UNDEFINED, ztype, ierr)
    call MPI_TYPE_SIZE(ztype, tsize, ierr)
    call expect(tsize == 8, 'f90 complex(6) is 8 bytes')
    call MPI_TYPE_MATCH_SIZE(MPI_TYPECLASS_REAL, 8, matched, ierr)
    call expect(ierr == MPI_SUCCESS .and. matched == MPI_REAL8, 'MPI_TYPE_MATCH_SIZE real 8')
    call MPI_TYPE_MATCH_SIZE(MPI_TYPECLASS_INTEGER, 2, matched, ierr)
    call expect(matched == MPI_INTEGER2, 'MPI_TYPE_MATCH_SIZE integer 2')
    call MPI_TYPE_MATCH_SIZE(MPI_TYPECLASS_COMPLEX, 16, matched, ierr)
    call expect(matched == MPI_COMPLEX16, 'MPI_TYPE_MATCH_SIZE complex 16')
    call expect(MPI_INTEGER16 == MPI_DATATYPE_NULL .and. MPI_REAL16 == MPI_DATATYPE_NULL, 'unavailable kinds')
    isum = [int(rank + 1, ik), 2_ik]
    dsum = [real(rank, dk) + 0.5_dk, 1.0_dk]
    z = [cmplx(rank, 1, ck), cmplx(0, 0, ck)]
    call MPI_ALLREDUCE(MPI_IN_PLACE, isum, 2, itype, MPI_SUM, MPI_COMM_WORLD, ierr)
    call expect(isum(1) == size * (size + 1) / 2 .and. isum(2) == 2 * size, 'f90 integer sum')
    call MPI_ALLREDUCE(MPI_IN_PLACE, dsum, 2, dtype, MPI_SUM, MPI_COMM_WORLD, ierr)
    call expect(abs(dsum(1) - (size * (size - 1) / 2 + 0.5_dk * size)) < 1e-12_dk, 'f90 real sum')
    call MPI_ALLREDUCE(MPI_IN_PLACE, z, 2, ztype, MPI_SUM, MPI_COMM_WORLD, ierr)
    call expect(abs(real(z(1)) - size * (size - 1) / 2) < 1e-5 .and. abs(aimag(z(1)) - size) < 1e-5, 'f90 complex sum')
  end subroutine kinds

  subroutine mpi4_calls()
    integer :: out(3), in(3), request, status(MPI_STATUS_SIZE), info, nkeys, ierr, comm, size_back, i
    character(len=MPI_MAX_INFO_VAL) :: value
    logical :: found
    integer :: buffer(2000)
    out = [rank, rank * 10, rank * 100]
    in = -1
    call MPI_ISENDRECV(out, 3, MPI_INTEGER, right, 41, in, 3, MPI_INTEGER, left, 41, MPI_COMM_WORLD, request, ierr)
    call MPI_WAIT(request, status, ierr)
    call expect(ierr == MPI_SUCCESS .and. all(in == [left, left * 10, left * 100]) .and. status(MPI_SOURCE) == left, &
                'MPI_ISENDRECV')
    call MPI_ISENDRECV_REPLACE(out, 3, MPI_INTEGER, right, 42, left, 42, MPI_COMM_WORLD, request, ierr)
    call MPI_WAIT(request, status, ierr)
    call expect(all(out == [left, left * 10, left * 100]), 'MPI_ISENDRECV_REPLACE')
    call MPI_INFO_CREATE_ENV(info, ierr)
    call MPI_INFO_GET_NKEYS(info, nkeys, ierr)
    call MPI_INFO_GET(info, 'maxprocs', MPI_MAX_INFO_VAL, value, found, ierr)
    call expect(ierr == MPI_SUCCESS .and. nkeys >= 4 .and. found, 'MPI_INFO_CREATE_ENV')
    call MPI_INFO_FREE(info, ierr)
    ! The process's buffer, flushed twice; then a communicator's own.
    call MPI_BUFFER_ATTACH(buffer, 4 * 2000, ierr)
    call MPI_BSEND(out, 3, MPI_INTEGER, right, 43, MPI_COMM_WORLD, ierr)
    call MPI_RECV(in, 3, MPI_INTEGER, left, 43, MPI_COMM_WORLD, status, ierr)
    call MPI_BUFFER_FLUSH(ierr)
    call MPI_BUFFER_IFLUSH(request, ierr)
    call MPI_WAIT(request, status, ierr)
    call expect(ierr == MPI_SUCCESS .and. request == MPI_REQUEST_NULL, 'MPI_BUFFER_IFLUSH')
    call MPI_BUFFER_DETACH(buffer, size_back, ierr)
    call expect(size_back == 4 * 2000, 'MPI_BUFFER_DETACH after the flushes')
    call MPI_COMM_DUP(MPI_COMM_WORLD, comm, ierr)
    call MPI_COMM_ATTACH_BUFFER(comm, buffer, 4 * 2000, ierr)
    do i = 1, 2
      call MPI_BSEND(out, 3, MPI_INTEGER, right, 44, comm, ierr)
      call MPI_RECV(in, 3, MPI_INTEGER, left, 44, comm, status, ierr)
      call expect(ierr == MPI_SUCCESS .and. in(3) == mod(left + size - 1, size) * 100, 'MPI_BSEND on a buffer of its own')
    end do
    call MPI_COMM_FLUSH_BUFFER(comm, ierr)
    call MPI_COMM_IFLUSH_BUFFER(comm, request, ierr)
    call MPI_WAIT(request, status, ierr)
    call MPI_COMM_DETACH_BUFFER(comm, buffer, size_back, ierr)
    call expect(ierr == MPI_SUCCESS .and. size_back == 4 * 2000, 'MPI_COMM_DETACH_BUFFER')
    call MPI_COMM_FREE(comm, ierr)
  end subroutine mpi4_calls

end program fmore

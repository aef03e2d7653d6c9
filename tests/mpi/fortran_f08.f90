! `use mpi_f08`: handles as types, statuses as TYPE(MPI_Status), ierror optional. A ring of sends with
! their statuses and MPI_GET_COUNT, nonblocking exchanges completed by MPI_WAITALL with
! MPI_STATUSES_IGNORE, a strided derived type, MPI_IN_PLACE, a non-commutative user reduction with
! f08's signature, MINLOC on MPI_2INTEGER, handle comparison, errors returned (MPI_ERRORS_RETURN),
! a section that is not contiguous refused.
module checks_f08
  use mpi_f08
  use fortran_check
  implicit none
contains
  ! Affine maps composed: inout = in o inout (fortran_check's compose_affine).
  subroutine affine(invec, inoutvec, len, datatype)
    use, intrinsic :: iso_c_binding, only: c_ptr, c_f_pointer
    type(c_ptr), value :: invec, inoutvec
    integer :: len
    type(MPI_Datatype) :: datatype
    integer, pointer :: a(:, :), b(:, :)
    call expect(datatype == MPI_2INTEGER, 'user op datatype')
    call c_f_pointer(invec, a, [2, len])
    call c_f_pointer(inoutvec, b, [2, len])
    call compose_affine(a, b)
  end subroutine affine
end module checks_f08

program f08
  use mpi_f08
  use checks_f08
  implicit none
  integer :: ierr, rank, size, left, right, i, j, n, expected, sum, provided_len, result
  integer :: out(8), in(8), matrix(4, 3), got(3), pair(2), best(2), values(10)
  integer :: from_left, from_right
  type(MPI_Status) :: status
  type(MPI_Request) :: requests(4), request
  type(MPI_Datatype) :: column
  type(MPI_Op) :: op
  type(MPI_Comm) :: dup, comm
  integer(kind=MPI_ADDRESS_KIND) :: lb, extent
  character(len=MPI_MAX_ERROR_STRING) :: text
  character(len=MPI_MAX_OBJECT_NAME) :: name
  logical :: flag
  double precision :: t0

  call MPI_Init(ierr)
  call expect(ierr == MPI_SUCCESS, 'init with ierror')
  call MPI_Initialized(flag)
  call expect(flag, 'initialized')
  comm = MPI_COMM_WORLD
  call expect(comm == MPI_COMM_WORLD .and. .not. (comm /= MPI_COMM_WORLD), 'handle comparison')
  call MPI_Comm_rank(comm, rank)
  call MPI_Comm_size(comm, size, ierr)
  call expect(ierr == MPI_SUCCESS .and. size >= 2, 'run with 2 ranks or more')
  left = mod(rank + size - 1, size)
  right = mod(rank + 1, size)
  t0 = MPI_Wtime()

  ! A ring: rank r sends r + 1 integers to the right with tag 10 + r; the statuses say who sent what.
  out = [(rank * 100 + i, i = 1, 8)]
  call MPI_Isend(out, rank + 1, MPI_INTEGER, right, 10 + rank, comm, request)
  in = -1
  call MPI_Recv(in, 8, MPI_INTEGER, MPI_ANY_SOURCE, MPI_ANY_TAG, comm, status)
  call expect(status%MPI_SOURCE == left, 'status source')
  call expect(status%MPI_TAG == 10 + left, 'status tag')
  call MPI_Get_count(status, MPI_INTEGER, n)
  call expect(n == left + 1, 'MPI_Get_count')
  do i = 1, n
    call expect(in(i) == left * 100 + i, 'ring data')
  end do
  call expect(in(n + 1) == -1, 'nothing past the count')
  call MPI_Wait(request, MPI_STATUS_IGNORE)
  call expect(request == MPI_REQUEST_NULL, 'request null after wait')
  call MPI_Barrier(comm)  ! no message of what follows can meet the wildcard receive above

  ! Both neighbours at once, nonblocking, completed together without statuses.
  from_left = -1
  from_right = -1
  call MPI_Irecv(from_left, 1, MPI_INTEGER, left, 1, comm, requests(1))
  call MPI_Irecv(from_right, 1, MPI_INTEGER, right, 2, comm, requests(2))
  call MPI_Isend(rank, 1, MPI_INTEGER, right, 1, comm, requests(3))
  call MPI_Isend(rank, 1, MPI_INTEGER, left, 2, comm, requests(4), ierr)
  call expect(requests(1) /= MPI_REQUEST_NULL, 'request live before completion')
  call MPI_Waitall(4, requests, MPI_STATUSES_IGNORE, ierr)
  call expect(ierr == MPI_SUCCESS, 'waitall ierror')
  call expect(from_left == left .and. from_right == right, 'nonblocking exchange')
  do i = 1, 4
    call expect(requests(i) == MPI_REQUEST_NULL, 'requests null after waitall')
  end do

  ! A strided column: row 2 of a 4x3 column-major matrix is 3 integers 4 apart.
  do j = 1, 3
    do i = 1, 4
      matrix(i, j) = rank * 100 + i * 10 + j
    end do
  end do
  call MPI_Type_vector(3, 1, 4, MPI_INTEGER, column)
  call MPI_Type_commit(column)
  call MPI_Type_size(column, n)
  call MPI_Type_get_extent(column, lb, extent)
  call expect(n == 12 .and. lb == 0 .and. extent == 36, 'vector size and extent')
  call MPI_Sendrecv(matrix(2, 1), 1, column, right, 3, got, 3, MPI_INTEGER, left, 3, comm, status)
  call expect(status%MPI_SOURCE == left .and. status%MPI_TAG == 3, 'sendrecv status')
  do j = 1, 3
    call expect(got(j) == left * 100 + 20 + j, 'strided row')
  end do
  call MPI_Type_free(column)
  call expect(column == MPI_DATATYPE_NULL, 'type freed')

  ! MPI_IN_PLACE, and a broadcast.
  sum = rank + 1
  call MPI_Allreduce(MPI_IN_PLACE, sum, 1, MPI_INTEGER, MPI_SUM, comm)
  call expect(sum == size * (size + 1) / 2, 'allreduce in place')
  n = merge(42, 0, rank == size - 1)
  call MPI_Bcast(n, 1, MPI_INTEGER, size - 1, comm)
  call expect(n == 42, 'bcast')

  ! A user reduction with f08's signature, not commutative: f0 o f1 o ... in rank order.
  call MPI_Op_create(affine, .false., op)
  pair = [2, rank + 1]
  call MPI_Reduce(pair, best, 1, MPI_2INTEGER, op, 0, comm)
  if (rank == 0) then
    expected = size
    do i = size - 2, 0, -1
      expected = 2 * expected + (i + 1)
    end do
    call expect(best(1) == 2**size .and. best(2) == expected, 'user op in rank order')
  end if
  call MPI_Op_free(op)
  call expect(op == MPI_OP_NULL, 'op freed')

  ! MINLOC on pairs: the least (r - 1)**2 is at rank 1.
  pair = [(rank - 1)**2, rank]
  call MPI_Allreduce(pair, best, 1, MPI_2INTEGER, MPI_MINLOC, comm)
  call expect(best(1) == 0 .and. best(2) == 1, 'MINLOC on MPI_2INTEGER')

  ! Handles: a duplicate is another communicator, congruent, and null once freed.
  call MPI_Comm_dup(comm, dup)
  call expect(dup /= MPI_COMM_WORLD, 'dup is another handle')
  call MPI_Comm_compare(dup, MPI_COMM_WORLD, result)
  call expect(result == MPI_CONGRUENT, 'dup congruent')
  call MPI_Comm_set_name(dup, 'f08 dup')
  call MPI_Comm_get_name(dup, name, n)
  call expect(name(1:n) == 'f08 dup' .and. n == 7, 'communicator name')
  call MPI_Barrier(dup)
  call MPI_Comm_free(dup)
  call expect(dup == MPI_COMM_NULL, 'freed communicator is MPI_COMM_NULL')

  ! Errors returned: a rank outside the communicator, and a section that is not contiguous.
  call MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN)
  call MPI_Send(out, 1, MPI_INTEGER, size, 0, comm, ierr)
  call expect(ierr /= MPI_SUCCESS, 'bad rank returns an error')
  call MPI_Error_class(ierr, result)
  call expect(result == MPI_ERR_RANK, 'bad rank is MPI_ERR_RANK')
  call MPI_Error_string(ierr, text, provided_len)
  call expect(provided_len > 0 .and. len_trim(text) == provided_len, 'error string')
  values = 0
  call MPI_Send(values(1:10:2), 5, MPI_INTEGER, right, 0, comm, ierr)
  call expect(ierr == MPI_ERR_BUFFER, 'non-contiguous section refused')
  call MPI_Comm_set_errhandler(comm, MPI_ERRORS_ARE_FATAL)

  call expect(MPI_Wtime() >= t0 .and. MPI_Wtick() > 0, 'wtime')
  call MPI_Barrier(comm)
  if (rank == 0) print *, 'fortran_f08: ok'
  call MPI_Finalize()
end program f08

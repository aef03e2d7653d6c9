! `use mpi`, free form: a derived type (a column of a matrix), a user reduction written in Fortran,
! MINLOC on MPI_2INTEGER, gather and scatter, MPI_WAITANY's index from 1, MPI_TESTALL, a matched probe,
! MPI_COMM_IDUP and MPI_COMM_CREATE_GROUP, MPI_PACK_EXTERNAL, a persistent allreduce, the MPI_TAG_UB attribute, and errors returned to the program (MPI_ERRORS_RETURN).
! Affine maps x -> p*x + q as (p, q) pairs, composed: in o inout, (p1, q1) o (p2, q2) = (p1*p2, p1*q2 + q1).
! Associative, as MPI requires, and not commutative: the result shows the order of the operands.
subroutine affine(invec, inoutvec, len, datatype)
  implicit none
  integer :: len, datatype, i
  integer :: invec(2, len), inoutvec(2, len)
  do i = 1, len
    inoutvec(2, i) = invec(1, i) * inoutvec(2, i) + invec(2, i)
    inoutvec(1, i) = invec(1, i) * inoutvec(1, i)
  end do
end subroutine affine

program fmod
  use mpi
  use fortran_check
  implicit none
  external affine
  integer :: ierr, rank, size, i, j, column, op, n, idx, msg
  integer :: matrix(4, 3), got(4), requests(3), status(MPI_STATUS_SIZE)
  integer :: pair(2), best(2), value, expected
  integer :: copy, group, first, solo
  integer(kind=1) :: ext_bytes(4)
  integer :: pers_in, pers_out
  integer(kind=MPI_ADDRESS_KIND) :: position
  integer, allocatable :: all(:), part(:)
  integer(kind=MPI_ADDRESS_KIND) :: tag_ub
  logical :: flag, done
  type(MPI_Status) :: status_f08

  call MPI_INIT(ierr)
  call MPI_COMM_RANK(MPI_COMM_WORLD, rank, ierr)
  call MPI_COMM_SIZE(MPI_COMM_WORLD, size, ierr)
  call expect(size >= 2, 'run with 2 ranks or more')

  ! MPI_SIZEOF, a generic of the module: one element's bytes.
  call MPI_SIZEOF(matrix, n, ierr)
  call expect(ierr == MPI_SUCCESS .and. n == 4, 'MPI_SIZEOF integer matrix')
  call MPI_SIZEOF(1.0d0, n, ierr)
  call expect(n == 8, 'MPI_SIZEOF double precision')
  call MPI_SIZEOF(ext_bytes(1), n, ierr)
  call expect(n == 1, 'MPI_SIZEOF integer(1)')

  ! A strided column: row 2 of a 4x3 column-major matrix is 3 integers 4 apart.
  do j = 1, 3
    do i = 1, 4
      matrix(i, j) = rank * 100 + i * 10 + j
    end do
  end do
  call MPI_TYPE_VECTOR(3, 1, 4, MPI_INTEGER, column, ierr)
  call MPI_TYPE_COMMIT(column, ierr)
  call MPI_SENDRECV(matrix(2, 1), 1, column, mod(rank + 1, size), 1, got, 3, MPI_INTEGER, &
                    mod(rank + size - 1, size), 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
  do j = 1, 3
    call expect(got(j) == mod(rank + size - 1, size) * 100 + 20 + j, 'strided row')
  end do
  call MPI_TYPE_FREE(column, ierr)

  ! mpi_f08's TYPE(MPI_Status), declared by `use mpi` for the conversions (MPI-4.0 section 19.3.5).
  call MPI_SENDRECV(rank, 1, MPI_INTEGER, mod(rank + 1, size), 5, value, 1, MPI_INTEGER, &
                    mod(rank + size - 1, size), 5, MPI_COMM_WORLD, status, ierr)
  call MPI_F_SYNC_REG(value)
  call MPI_STATUS_F2F08(status, status_f08, ierr)
  call expect(ierr == MPI_SUCCESS .and. status_f08%MPI_SOURCE == mod(rank + size - 1, size) .and. &
              status_f08%MPI_TAG == 5 .and. value == status_f08%MPI_SOURCE, 'MPI_STATUS_F2F08')
  status = -1
  call MPI_STATUS_F082F(status_f08, status, ierr)
  call MPI_GET_COUNT(status, MPI_INTEGER, n, ierr)
  call expect(status(MPI_TAG) == 5 .and. n == 1, 'MPI_STATUS_F082F')

  ! A user reduction in Fortran, not commutative: f0 o f1 o ... in rank order.
  call MPI_OP_CREATE(affine, .false., op, ierr)
  pair = [2, rank + 1]
  call MPI_REDUCE(pair, best, 1, MPI_2INTEGER, op, 0, MPI_COMM_WORLD, ierr)
  if (rank == 0) then
    expected = size  ! q of f_(size-1) alone; p is 2**size at the end
    do i = size - 2, 0, -1
      expected = 2 * expected + (i + 1)
    end do
    call expect(best(1) == 2**size .and. best(2) == expected, 'user op in rank order')
  end if
  call MPI_OP_FREE(op, ierr)

  ! MINLOC on pairs.
  pair = [mod(rank * 7, 5) + 10, rank]
  call MPI_ALLREDUCE(pair, best, 1, MPI_2INTEGER, MPI_MINLOC, MPI_COMM_WORLD, ierr)
  call expect(best(1) == 10 .and. best(2) == 0, 'minloc')

  ! Gather and scatter.
  allocate(all(size), part(1))
  call MPI_GATHER(rank * 3, 1, MPI_INTEGER, all, 1, MPI_INTEGER, 0, MPI_COMM_WORLD, ierr)
  if (rank == 0) then
    do i = 1, size
      call expect(all(i) == (i - 1) * 3, 'gather')
      all(i) = i * 11
    end do
  end if
  call MPI_SCATTER(all, 1, MPI_INTEGER, part, 1, MPI_INTEGER, 0, MPI_COMM_WORLD, ierr)
  call expect(part(1) == (rank + 1) * 11, 'scatter')
  deallocate(all, part)

  ! WAITANY: the index counts from 1; the finished request becomes MPI_REQUEST_NULL.
  if (rank == 0) then
    do i = 1, 3
      call MPI_IRECV(got(i), 1, MPI_INTEGER, MPI_ANY_SOURCE, 20 + i, MPI_COMM_WORLD, requests(i), ierr)
    end do
    do j = 1, 3
      call MPI_WAITANY(3, requests, idx, status, ierr)
      call expect(idx >= 1 .and. idx <= 3 .and. requests(idx) == MPI_REQUEST_NULL, 'waitany index')
      call expect(status(MPI_TAG) == 20 + idx, 'waitany status')
    end do
    call MPI_TESTALL(3, requests, done, MPI_STATUSES_IGNORE, ierr)
    call expect(done, 'testall of null requests')
  else if (rank == size - 1) then
    do i = 3, 1, -1
      call MPI_SEND(i, 1, MPI_INTEGER, 0, 20 + i, MPI_COMM_WORLD, ierr)
    end do
  end if

  ! A matched probe.
  if (rank == 1) then
    call MPI_SEND(rank + 500, 1, MPI_INTEGER, 0, 30, MPI_COMM_WORLD, ierr)
  end if
  if (rank == 0) then
    ! A probe or receive leaves status(MPI_ERROR) as it was (MPI-3.1 section 3.2.5).
    status(MPI_ERROR) = MPI_ERR_DIMS
    call MPI_MPROBE(MPI_ANY_SOURCE, 30, MPI_COMM_WORLD, msg, status, ierr)
    call expect(status(MPI_ERROR) == MPI_ERR_DIMS, 'MPI_MPROBE changed status(MPI_ERROR)')
    call MPI_GET_COUNT(status, MPI_INTEGER, n, ierr)
    call expect(n == 1, 'mprobe count')
    call MPI_MRECV(value, 1, MPI_INTEGER, msg, MPI_STATUS_IGNORE, ierr)
    call expect(value == status(MPI_SOURCE) + 500 .and. msg == MPI_MESSAGE_NULL, 'mrecv')
  end if

  ! MPI_COMM_IDUP (the handle arrives when the request completes) and MPI_COMM_CREATE_GROUP of rank 0.
  call MPI_COMM_IDUP(MPI_COMM_WORLD, copy, requests(1), ierr)
  call MPI_WAIT(requests(1), MPI_STATUS_IGNORE, ierr)
  call MPI_ALLREDUCE(1, n, 1, MPI_INTEGER, MPI_SUM, copy, ierr)
  call expect(n == size, 'allreduce on the idup copy')
  call MPI_COMM_GROUP(copy, group, ierr)
  call MPI_GROUP_INCL(group, 1, (/ 0 /), first, ierr)
  call MPI_COMM_CREATE_GROUP(copy, first, 7, solo, ierr)
  if (rank == 0) then
    call MPI_COMM_SIZE(solo, n, ierr)
    call expect(n == 1, 'create_group of rank 0')
    call MPI_COMM_FREE(solo, ierr)
  else
    call expect(solo == MPI_COMM_NULL, 'create_group outside the group')
  end if
  call MPI_GROUP_FREE(first, ierr)
  call MPI_GROUP_FREE(group, ierr)
  call MPI_COMM_FREE(copy, ierr)

  ! A persistent allreduce (MPI-4), started three times with new data. MPI_START reads pers_in and
  ! MPI_WAIT writes pers_out behind the compiler's back: without MPI_F_SYNC_REG (MPI-3.1 section
  ! 17.1.17) an optimised build keeps both in registers, and the sum is of stale data.
  call MPI_ALLREDUCE_INIT(pers_in, pers_out, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &
                          requests(1), ierr)
  do i = 1, 3
    pers_in = rank * i
    call MPI_F_SYNC_REG(pers_in)
    call MPI_START(requests(1), ierr)
    call MPI_WAIT(requests(1), MPI_STATUS_IGNORE, ierr)
    call MPI_F_SYNC_REG(pers_out)
    call expect(pers_out == i * size * (size - 1) / 2, 'MPI_ALLREDUCE_INIT')
  end do
  call MPI_REQUEST_FREE(requests(1), ierr)
  call expect(requests(1) == MPI_REQUEST_NULL, 'MPI_REQUEST_FREE of a persistent collective')

  ! MPI_PACK_EXTERNAL: big-endian whatever the host.
  position = 0
  call MPI_PACK_EXTERNAL('external32', 258, 1, MPI_INTEGER, ext_bytes, 4_MPI_ADDRESS_KIND, position, ierr)
  call expect(position == 4 .and. ext_bytes(1) == 0 .and. ext_bytes(3) == 1 .and. ext_bytes(4) == 2, &
              'MPI_PACK_EXTERNAL')
  position = 0
  call MPI_UNPACK_EXTERNAL('external32', ext_bytes, 4_MPI_ADDRESS_KIND, position, value, 1, MPI_INTEGER, ierr)
  call expect(value == 258, 'MPI_UNPACK_EXTERNAL')

  ! The predefined attribute, by value.
  call MPI_COMM_GET_ATTR(MPI_COMM_WORLD, MPI_TAG_UB, tag_ub, flag, ierr)
  call expect(flag .and. tag_ub >= 32767, 'MPI_TAG_UB')

  ! Errors come back as codes under MPI_ERRORS_RETURN.
  call MPI_COMM_SET_ERRHANDLER(MPI_COMM_WORLD, MPI_ERRORS_RETURN, ierr)
  call MPI_SEND(value, 1, MPI_INTEGER, size, 0, MPI_COMM_WORLD, ierr)
  call MPI_ERROR_CLASS(ierr, n, i)
  call expect(n == MPI_ERR_RANK, 'MPI_ERR_RANK')

  call MPI_BARRIER(MPI_COMM_WORLD, ierr)
  if (rank == 0) print '(a,i0,a)', 'fortran_mod: ', size, ' ranks passed'
  call MPI_FINALIZE(ierr)
end program fmod

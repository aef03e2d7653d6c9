! The Fortran 77 style: include 'mpif.h', fixed form. A ring of
! messages with statuses, nonblocking exchanges with
! MPI_STATUSES_IGNORE, collectives on INTEGER and DOUBLE PRECISION
! with MPI_IN_PLACE, a split, the clock and the host name.
      program f77
      implicit none
      include 'mpif.h'
      integer ierr, rank, size, next, prev, token, i
      integer status(MPI_STATUS_SIZE), requests(2), n
      integer ivals(4), isum(4), half, hrank, hsize
      double precision dvals(3), t0, t1
      character*(MPI_MAX_PROCESSOR_NAME) host
      call MPI_INIT(ierr)
      call check(ierr, 'MPI_INIT')
      call MPI_COMM_RANK(MPI_COMM_WORLD, rank, ierr)
      call MPI_COMM_SIZE(MPI_COMM_WORLD, size, ierr)
      next = mod(rank + 1, size)
      prev = mod(rank + size - 1, size)
      t0 = MPI_WTIME()
! A token around the ring, with the status read back.
      if (rank .eq. 0) then
        token = 100
        call MPI_SEND(token, 1, MPI_INTEGER, next, 5,
     &                MPI_COMM_WORLD, ierr)
        call MPI_RECV(token, 1, MPI_INTEGER, prev, MPI_ANY_TAG,
     &                MPI_COMM_WORLD, status, ierr)
        call expect(token .eq. 100 + size - 1, 'token')
      else
        call MPI_RECV(token, 1, MPI_INTEGER, MPI_ANY_SOURCE, 5,
     &                MPI_COMM_WORLD, status, ierr)
        call expect(status(MPI_SOURCE) .eq. prev, 'MPI_SOURCE')
        call expect(status(MPI_TAG) .eq. 5, 'MPI_TAG')
        call MPI_GET_COUNT(status, MPI_INTEGER, n, ierr)
        call expect(n .eq. 1, 'MPI_GET_COUNT')
        token = token + 1
        call MPI_SEND(token, 1, MPI_INTEGER, next, 5,
     &                MPI_COMM_WORLD, ierr)
      end if
! Both directions at once; the statuses ignored.
      call MPI_IRECV(ivals, 4, MPI_INTEGER, prev, 6, MPI_COMM_WORLD,
     &               requests(1), ierr)
      do i = 1, 4
        isum(i) = rank * 10 + i
      end do
      call MPI_ISEND(isum, 4, MPI_INTEGER, next, 6, MPI_COMM_WORLD,
     &               requests(2), ierr)
      call MPI_WAITALL(2, requests, MPI_STATUSES_IGNORE, ierr)
      call check(ierr, 'MPI_WAITALL')
      call expect(requests(1) .eq. MPI_REQUEST_NULL, 'request freed')
      do i = 1, 4
        call expect(ivals(i) .eq. prev * 10 + i, 'ring data')
      end do
! Reductions: into a buffer and in place.
      do i = 1, 4
        ivals(i) = rank + i
      end do
      call MPI_ALLREDUCE(ivals, isum, 4, MPI_INTEGER, MPI_SUM,
     &                   MPI_COMM_WORLD, ierr)
      do i = 1, 4
        call expect(isum(i) .eq. size*(size-1)/2 + size*i, 'allreduce')
      end do
      dvals(1) = rank + 0.5d0
      dvals(2) = -rank
      dvals(3) = 2.0d0
      call MPI_ALLREDUCE(MPI_IN_PLACE, dvals, 3, MPI_DOUBLE_PRECISION,
     &                   MPI_MAX, MPI_COMM_WORLD, ierr)
      call expect(dvals(1) .eq. size - 0.5d0, 'in place max')
      call expect(dvals(2) .eq. 0.0d0, 'in place max (2)')
      token = -1
      if (rank .eq. 0) token = 42
      call MPI_BCAST(token, 1, MPI_INTEGER, 0, MPI_COMM_WORLD, ierr)
      call expect(token .eq. 42, 'bcast')
! A split by parity.
      call MPI_COMM_SPLIT(MPI_COMM_WORLD, mod(rank, 2), rank, half,
     &                    ierr)
      call MPI_COMM_RANK(half, hrank, ierr)
      call MPI_COMM_SIZE(half, hsize, ierr)
      call expect(hrank .eq. rank / 2, 'split rank')
      call MPI_COMM_FREE(half, ierr)
      call expect(half .eq. MPI_COMM_NULL, 'freed communicator')
      call MPI_GET_PROCESSOR_NAME(host, n, ierr)
      call expect(n .gt. 0 .and. host(1:1) .ne. ' ', 'host name')
      t1 = MPI_WTIME()
      call expect(t1 .ge. t0 .and. MPI_WTICK() .gt. 0, 'clock')
      call MPI_BARRIER(MPI_COMM_WORLD, ierr)
      if (rank .eq. 0) print '(a,i0,a)', 'fortran_f77: ', size,
     &    ' ranks passed'
      call MPI_FINALIZE(ierr)
      end

      subroutine check(ierr, what)
      implicit none
      include 'mpif.h'
      integer ierr, e
      character*(*) what
      if (ierr .ne. MPI_SUCCESS) then
        print *, 'FAIL: ', what, ' returned ', ierr
        call MPI_ABORT(MPI_COMM_WORLD, 99, e)
      end if
      end

      subroutine expect(ok, what)
      implicit none
      include 'mpif.h'
      logical ok
      integer e
      character*(*) what
      if (.not. ok) then
        print *, 'FAIL: ', what
        call MPI_ABORT(MPI_COMM_WORLD, 99, e)
      end if
      end

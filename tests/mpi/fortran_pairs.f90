! MINLOC and MAXLOC on Fortran's pair types, MPI_2REAL, MPI_2DOUBLE_PRECISION and MPI_2INTEGER (a
! value and its index, both of the value's type), with MPI_REDUCE and MPI_ALLREDUCE, through
! `use mpi` (whose constants are mpif.h's) and `use mpi_f08`; every result checked, ties resolved to
! the lowest index as MPI says. For any number of ranks.
program fortran_pairs
  use mpi
  use fortran_check
  implicit none
  integer :: rank, nranks, ierr, r, want_at
  real :: reals(2, 2), best_reals(2, 2)
  double precision :: doubles(2, 2), best_doubles(2, 2)
  integer :: ints(2), best_ints(2)

  call MPI_INIT(ierr)
  call MPI_COMM_RANK(MPI_COMM_WORLD, rank, ierr)
  call MPI_COMM_SIZE(MPI_COMM_WORLD, nranks, ierr)
  ! Pair 1: value 10 - rank (least at the last rank); pair 2: value 1.5 everywhere (a tie), the
  ! index 100 + rank.
  reals(:, 1) = [real(10 - rank), real(rank)]
  reals(:, 2) = [1.5, real(100 + rank)]
  best_reals = -1
  call MPI_ALLREDUCE(reals, best_reals, 2, MPI_2REAL, MPI_MINLOC, MPI_COMM_WORLD, ierr)
  call expect(ierr == MPI_SUCCESS, 'MPI_2REAL minloc returned an error')
  call expect(best_reals(1, 1) == real(11 - nranks) .and. best_reals(2, 1) == real(nranks - 1), &
              'MPI_2REAL minloc')
  call expect(best_reals(1, 2) == 1.5 .and. best_reals(2, 2) == 100.0, 'MPI_2REAL minloc tie')
  best_reals = -1
  call MPI_REDUCE(reals, best_reals, 2, MPI_2REAL, MPI_MAXLOC, 0, MPI_COMM_WORLD, ierr)
  if (rank == 0) then
    call expect(best_reals(1, 1) == 10.0 .and. best_reals(2, 1) == 0.0, 'MPI_2REAL maxloc')
    call expect(best_reals(1, 2) == 1.5 .and. best_reals(2, 2) == 100.0, 'MPI_2REAL maxloc tie')
  end if

  ! Doubles: the greatest value at the middle rank.
  want_at = nranks / 2
  doubles(:, 1) = [-abs(dble(rank - want_at)) + 0.25d0, dble(rank)]
  doubles(:, 2) = [dble(rank) * 1.0d10, dble(rank)]
  best_doubles = -1
  call MPI_ALLREDUCE(doubles, best_doubles, 2, MPI_2DOUBLE_PRECISION, MPI_MAXLOC, MPI_COMM_WORLD, ierr)
  call expect(best_doubles(1, 1) == 0.25d0 .and. best_doubles(2, 1) == dble(want_at), &
              'MPI_2DOUBLE_PRECISION maxloc')
  call expect(best_doubles(1, 2) == dble(nranks - 1) * 1.0d10 .and. best_doubles(2, 2) == dble(nranks - 1), &
              'MPI_2DOUBLE_PRECISION maxloc, large values')
  best_doubles = -1
  call MPI_REDUCE(doubles, best_doubles, 2, MPI_2DOUBLE_PRECISION, MPI_MINLOC, nranks - 1, &
                  MPI_COMM_WORLD, ierr)
  if (rank == nranks - 1) then
    r = 0
    if (nranks > 1 .and. abs(nranks - 1 - want_at) > want_at) r = nranks - 1
    call expect(best_doubles(1, 1) == -abs(dble(r - want_at)) + 0.25d0 .and. best_doubles(2, 1) == dble(r), &
                'MPI_2DOUBLE_PRECISION minloc')
    call expect(best_doubles(1, 2) == 0d0 .and. best_doubles(2, 2) == 0d0, 'MPI_2DOUBLE_PRECISION minloc 2')
  end if

  ints = [mod(rank * 7, nranks), rank]
  call MPI_ALLREDUCE(ints, best_ints, 1, MPI_2INTEGER, MPI_MINLOC, MPI_COMM_WORLD, ierr)
  call expect(best_ints(1) == 0 .and. best_ints(2) == 0, 'MPI_2INTEGER minloc')

  call f08_pairs(rank, nranks)
  call MPI_BARRIER(MPI_COMM_WORLD, ierr)
  if (rank == 0) print '(a)', 'fortran_pairs: ok'
  call MPI_FINALIZE(ierr)
end program fortran_pairs

! The same through `use mpi_f08`: the pair types are TYPE(MPI_Datatype) constants there.
subroutine f08_pairs(rank, nranks)
  use mpi_f08
  use fortran_check
  implicit none
  integer, intent(in) :: rank, nranks
  real :: reals(2), best_reals(2)
  double precision :: doubles(2), best_doubles(2)
  character(len=MPI_MAX_OBJECT_NAME) :: name
  integer :: length

  reals = [real(mod(rank + 1, nranks)), real(rank)]  ! the least (0) at the last rank
  call MPI_Allreduce(reals, best_reals, 1, MPI_2REAL, MPI_MINLOC, MPI_COMM_WORLD)
  call expect(best_reals(1) == 0.0 .and. best_reals(2) == real(nranks - 1), 'f08 MPI_2REAL minloc')
  doubles = [dble(rank), dble(rank)]
  call MPI_Reduce(doubles, best_doubles, 1, MPI_2DOUBLE_PRECISION, MPI_MAXLOC, 0, MPI_COMM_WORLD)
  if (rank == 0) call expect(best_doubles(1) == dble(nranks - 1) .and. best_doubles(2) == dble(nranks - 1), &
                             'f08 MPI_2DOUBLE_PRECISION maxloc')
  call MPI_Type_get_name(MPI_2DOUBLE_PRECISION, name, length)
  call expect(name == 'MPI_2DOUBLE_PRECISION' .and. length == 21, 'f08 MPI_2DOUBLE_PRECISION name')
end subroutine f08_pairs

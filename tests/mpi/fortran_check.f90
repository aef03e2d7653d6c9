! What the Fortran test programs share (check.h's CHECK, for C): expect(ok, what) prints the failure
! and ends the whole job with MPI_ABORT, so that ftrun reports it. Through `use mpi`, kept private, so
! that programs of either binding, `use mpi` or `use mpi_f08`, may use it.
module fortran_check
  use mpi, only: MPI_COMM_WORLD
  implicit none
  private
  public :: expect, compose_affine
contains
  subroutine expect(ok, what)
    logical, intent(in) :: ok
    character(*), intent(in) :: what
    integer :: e
    if (.not. ok) then
      print *, 'FAIL: ', what
      call MPI_ABORT(MPI_COMM_WORLD, 99, e)
    end if
  end subroutine expect

  ! Affine maps x -> p*x + q as (p, q) pairs, composed pair by pair: b = a o b. Associative, not
  ! commutative: the user reductions of the f08 tests, which must apply it in rank order.
  subroutine compose_affine(a, b)
    integer, intent(in) :: a(:, :)
    integer, intent(inout) :: b(:, :)
    b(2, :) = a(1, :) * b(2, :) + a(2, :)
    b(1, :) = a(1, :) * b(1, :)
  end subroutine compose_affine
end module fortran_check

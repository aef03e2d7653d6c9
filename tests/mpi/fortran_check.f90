! What the Fortran test programs share (check.h's CHECK, for C): expect(ok, what) prints the failure
! and ends the whole job with MPI_ABORT, so that ftrun reports it. Through `use mpi`, kept private, so
! that programs of either binding, `use mpi` or `use mpi_f08`, may use it.
module fortran_check
  use mpi, only: MPI_COMM_WORLD
  implicit none
  private
  public :: expect
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
end module fortran_check

! use mpi: the constants of mpif.h in a module. The calls have no explicit interfaces (as MPI allows
! for the mpi module when the compiler cannot express choice buffers), so they are checked by nothing
! but the program: as with mpif.h.
module mpi
  implicit none
  include 'mpif.h'
end module mpi

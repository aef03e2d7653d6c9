! MPI_SIZEOF (MPI-3.1 section 17.1.9): the size in bytes of one element of X, a scalar or an array of
! any rank of an intrinsic numeric or logical type. Included by both the mpi and mpi_f08 modules, so
! IERROR is optional in both (use mpi's callers pass it).
  interface MPI_SIZEOF
    module procedure MPI_SIZEOF_I1, MPI_SIZEOF_I2, MPI_SIZEOF_I4, MPI_SIZEOF_I8, MPI_SIZEOF_R4, &
                     MPI_SIZEOF_R8, MPI_SIZEOF_C4, MPI_SIZEOF_C8, MPI_SIZEOF_L
  end interface

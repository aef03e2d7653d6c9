! The procedures of MPI_SIZEOF (mpi_sizeof_interface.h), after the contains of the mpi and mpi_f08
! modules. storage_size is in bits, of one element whatever the rank.
  subroutine MPI_SIZEOF_I1(x, size, ierror)
    use, intrinsic :: iso_fortran_env, only: int8
    integer(int8), intent(in) :: x(..)
    integer, intent(out) :: size
    integer, optional, intent(out) :: ierror
    size = storage_size(x) / 8
    if (present(ierror)) ierror = MPI_SUCCESS
  end subroutine
  subroutine MPI_SIZEOF_I2(x, size, ierror)
    use, intrinsic :: iso_fortran_env, only: int16
    integer(int16), intent(in) :: x(..)
    integer, intent(out) :: size
    integer, optional, intent(out) :: ierror
    size = storage_size(x) / 8
    if (present(ierror)) ierror = MPI_SUCCESS
  end subroutine
  subroutine MPI_SIZEOF_I4(x, size, ierror)
    use, intrinsic :: iso_fortran_env, only: int32
    integer(int32), intent(in) :: x(..)
    integer, intent(out) :: size
    integer, optional, intent(out) :: ierror
    size = storage_size(x) / 8
    if (present(ierror)) ierror = MPI_SUCCESS
  end subroutine
  subroutine MPI_SIZEOF_I8(x, size, ierror)
    use, intrinsic :: iso_fortran_env, only: int64
    integer(int64), intent(in) :: x(..)
    integer, intent(out) :: size
    integer, optional, intent(out) :: ierror
    size = storage_size(x) / 8
    if (present(ierror)) ierror = MPI_SUCCESS
  end subroutine
  subroutine MPI_SIZEOF_R4(x, size, ierror)
    use, intrinsic :: iso_fortran_env, only: real32
    real(real32), intent(in) :: x(..)
    integer, intent(out) :: size
    integer, optional, intent(out) :: ierror
    size = storage_size(x) / 8
    if (present(ierror)) ierror = MPI_SUCCESS
  end subroutine
  subroutine MPI_SIZEOF_R8(x, size, ierror)
    use, intrinsic :: iso_fortran_env, only: real64
    real(real64), intent(in) :: x(..)
    integer, intent(out) :: size
    integer, optional, intent(out) :: ierror
    size = storage_size(x) / 8
    if (present(ierror)) ierror = MPI_SUCCESS
  end subroutine
  subroutine MPI_SIZEOF_C4(x, size, ierror)
    use, intrinsic :: iso_fortran_env, only: real32
    complex(real32), intent(in) :: x(..)
    integer, intent(out) :: size
    integer, optional, intent(out) :: ierror
    size = storage_size(x) / 8
    if (present(ierror)) ierror = MPI_SUCCESS
  end subroutine
  subroutine MPI_SIZEOF_C8(x, size, ierror)
    use, intrinsic :: iso_fortran_env, only: real64
    complex(real64), intent(in) :: x(..)
    integer, intent(out) :: size
    integer, optional, intent(out) :: ierror
    size = storage_size(x) / 8
    if (present(ierror)) ierror = MPI_SUCCESS
  end subroutine
  subroutine MPI_SIZEOF_L(x, size, ierror)
    logical, intent(in) :: x(..)
    integer, intent(out) :: size
    integer, optional, intent(out) :: ierror
    size = storage_size(x) / 8
    if (present(ierror)) ierror = MPI_SUCCESS
  end subroutine

! use mpi: the constants of mpif.h in a module. The calls have no explicit interfaces (as MPI allows
! for the mpi module when the compiler cannot express choice buffers), so they are checked by nothing
! but the program: as with mpif.h.
!
! MPI_STATUS_F2F08 and MPI_STATUS_F082F take mpi_f08's TYPE(MPI_Status), declared here too.
!
! Except four: MPI-3.1 sections 8.2 and 11.2.2 require MPI_ALLOC_MEM, MPI_WIN_ALLOCATE,
! MPI_WIN_ALLOCATE_SHARED and MPI_WIN_SHARED_QUERY to be generics here, whose BASEPTR is an
! INTEGER(KIND=MPI_ADDRESS_KIND) (as in mpif.h) or a TYPE(C_PTR) (then C_F_POINTER reaches the memory). libftmpi's _cptr procedures are the
! same code: gfortran passes either by reference, eight bytes.
module mpi
  implicit none
  include 'mpif.h'

  ! mpi_f08's status (MPI-4.0 section 19.3.5), for MPI_STATUS_F2F08 and MPI_STATUS_F082F: a program
  ! whose units mix `use mpi` and `use mpi_f08` converts with them. BIND(C) and identical to
  ! mpi_f08's, so the two are one type (Fortran 2008 section 4.5.2.4).
  type, bind(c) :: MPI_Status
    integer :: MPI_SOURCE
    integer :: MPI_TAG
    integer :: MPI_ERROR
    integer :: ftmpi_cancelled
    integer :: ftmpi_bytes(2)
  end type

  interface MPI_ALLOC_MEM
    subroutine MPI_ALLOC_MEM(size, info, baseptr, ierror)
      import :: MPI_ADDRESS_KIND
      implicit none
      integer(kind=MPI_ADDRESS_KIND) :: size, baseptr
      integer :: info, ierror
    end subroutine
    subroutine MPI_ALLOC_MEM_CPTR(size, info, baseptr, ierror)
      use, intrinsic :: iso_c_binding, only: c_ptr
      import :: MPI_ADDRESS_KIND
      implicit none
      integer(kind=MPI_ADDRESS_KIND) :: size
      type(c_ptr) :: baseptr
      integer :: info, ierror
    end subroutine
  end interface
  interface MPI_WIN_ALLOCATE
    subroutine MPI_WIN_ALLOCATE(size, disp_unit, info, comm, baseptr, win, ierror)
      import :: MPI_ADDRESS_KIND
      implicit none
      integer(kind=MPI_ADDRESS_KIND) :: size, baseptr
      integer :: disp_unit, info, comm, win, ierror
    end subroutine
    subroutine MPI_WIN_ALLOCATE_CPTR(size, disp_unit, info, comm, baseptr, win, ierror)
      use, intrinsic :: iso_c_binding, only: c_ptr
      import :: MPI_ADDRESS_KIND
      implicit none
      integer(kind=MPI_ADDRESS_KIND) :: size
      type(c_ptr) :: baseptr
      integer :: disp_unit, info, comm, win, ierror
    end subroutine
  end interface
  interface MPI_WIN_ALLOCATE_SHARED
    subroutine MPI_WIN_ALLOCATE_SHARED(size, disp_unit, info, comm, baseptr, win, ierror)
      import :: MPI_ADDRESS_KIND
      implicit none
      integer(kind=MPI_ADDRESS_KIND) :: size, baseptr
      integer :: disp_unit, info, comm, win, ierror
    end subroutine
    subroutine MPI_WIN_ALLOCATE_SHARED_CPTR(size, disp_unit, info, comm, baseptr, win, ierror)
      use, intrinsic :: iso_c_binding, only: c_ptr
      import :: MPI_ADDRESS_KIND
      implicit none
      integer(kind=MPI_ADDRESS_KIND) :: size
      type(c_ptr) :: baseptr
      integer :: disp_unit, info, comm, win, ierror
    end subroutine
  end interface
  interface MPI_WIN_SHARED_QUERY
    subroutine MPI_WIN_SHARED_QUERY(win, rank, size, disp_unit, baseptr, ierror)
      import :: MPI_ADDRESS_KIND
      implicit none
      integer :: win, rank, disp_unit, ierror
      integer(kind=MPI_ADDRESS_KIND) :: size, baseptr
    end subroutine
    subroutine MPI_WIN_SHARED_QUERY_CPTR(win, rank, size, disp_unit, baseptr, ierror)
      use, intrinsic :: iso_c_binding, only: c_ptr
      import :: MPI_ADDRESS_KIND
      implicit none
      integer :: win, rank, disp_unit, ierror
      integer(kind=MPI_ADDRESS_KIND) :: size
      type(c_ptr) :: baseptr
    end subroutine
  end interface
  include 'mpi_sizeof_interface.h'
contains
  include 'mpi_sizeof_procedures.h'
end module mpi

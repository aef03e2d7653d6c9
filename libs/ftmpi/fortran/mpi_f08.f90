! use mpi_f08: MPI-3.1's Fortran 2008 binding (section 17.2.2) for gfortran, over the same library.
!
! The handle types (TYPE(MPI_Comm) ... with one INTEGER, MPI_VAL, the handle of `use mpi`),
! TYPE(MPI_Status) (the six INTEGERs of an INTEGER status, MPI_SOURCE, MPI_TAG and MPI_ERROR first),
! operator(==) and operator(/=) on handles (elemental), every constant of mpif.h (mpi_f08_constants.h,
! generated from it by cmake/mpif08.cmake: handles as their types, the rest as INTEGERs), the
! sentinels, the abstract interfaces of the callbacks and the predefined callbacks.
! Every call of `use mpi` is here: each MPI_X is a generic whose specific MPI_X_f08 is defined in C++
! (src/mpi/fortran_f08.cpp) and calls the binding of `use mpi`, so this module has no code to link.
! Their interfaces (mpi_f08_calls.h) and that C++ are both generated from one table,
! fortran/mpi_f08_calls.txt; MPI_Wtime, MPI_Wtick, MPI_Aint_add, MPI_Aint_diff and MPI_Pcontrol,
! which have no ierror, are below. ierror is OPTIONAL; choice buffers are TYPE(*), DIMENSION(..) and
! must be contiguous (MPI_SUBARRAYS_SUPPORTED = .FALSE.: a section that is not is refused with
! MPI_ERR_BUFFER). MPI_ASYNC_PROTECTS_NONBLOCKING = .FALSE.: give buffers of nonblocking calls the
! ASYNCHRONOUS attribute, or keep them alive and untouched, as MPI says.
!
! A call that C has an MPI_X_c of (large counts) takes INTEGER(KIND=MPI_COUNT_KIND) counts too: the
! generic resolves to its specific MPI_X_f08c by the counts' kind (MPI-4.0 section 19.2);
! MPI_Type_get_envelope's and MPI_Type_get_contents's have the large-count arguments of C's too
! (num_large_counts ...). MPI_Op_create_c has a name of its own, as in MPI-4.0, and its reduction
! the interface MPI_User_function_c.
!
! MPI_Alloc_mem, MPI_Win_allocate, MPI_Win_allocate_shared and MPI_Win_shared_query give the memory
! as a TYPE(C_PTR) baseptr (MPI-3.1 sections 8.2 and 11.2.2): reach it with C_F_POINTER.
!
! MPI_Status_f2f08 and MPI_Status_f082f convert between TYPE(MPI_Status) and the INTEGER status of
! `use mpi` (which declares the same TYPE(MPI_Status)). Not here: the PMPI_ names.
module mpi_f08
  use, intrinsic :: iso_c_binding, only: c_double, c_int, c_ptr
  implicit none
  private :: c_double, c_int, c_ptr

  type, bind(c) :: MPI_Comm
    integer(c_int) :: MPI_VAL
  end type
  type, bind(c) :: MPI_Datatype
    integer(c_int) :: MPI_VAL
  end type
  type, bind(c) :: MPI_Group
    integer(c_int) :: MPI_VAL
  end type
  type, bind(c) :: MPI_Op
    integer(c_int) :: MPI_VAL
  end type
  type, bind(c) :: MPI_Request
    integer(c_int) :: MPI_VAL
  end type
  type, bind(c) :: MPI_Info
    integer(c_int) :: MPI_VAL
  end type
  type, bind(c) :: MPI_Errhandler
    integer(c_int) :: MPI_VAL
  end type
  type, bind(c) :: MPI_Message
    integer(c_int) :: MPI_VAL
  end type
  type, bind(c) :: MPI_Win
    integer(c_int) :: MPI_VAL
  end type
  type, bind(c) :: MPI_File
    integer(c_int) :: MPI_VAL
  end type
  ! The layout of MPI_Status in C and of the INTEGER status of mpif.h (MPI_STATUS_SIZE = 6).
  type, bind(c) :: MPI_Status
    integer(c_int) :: MPI_SOURCE
    integer(c_int) :: MPI_TAG
    integer(c_int) :: MPI_ERROR
    integer(c_int) :: ftmpi_cancelled
    integer(c_int) :: ftmpi_bytes(2)
  end type

  include 'mpi_f08_constants.h'

  logical, parameter :: MPI_SUBARRAYS_SUPPORTED = .false.
  logical, parameter :: MPI_ASYNC_PROTECTS_NONBLOCKING = .false.

  ! The sentinels: the common blocks of mpif.h, whose addresses libftmpi recognises.
  type(MPI_Status) :: MPI_STATUS_IGNORE
  type(MPI_Status) :: MPI_STATUSES_IGNORE(1)
  integer :: MPI_IN_PLACE, MPI_BOTTOM, MPI_ERRCODES_IGNORE(1)
  common /ftmpi_f_status_ignore/ MPI_STATUS_IGNORE
  common /ftmpi_f_statuses_ignore/ MPI_STATUSES_IGNORE
  common /ftmpi_f_in_place/ MPI_IN_PLACE
  common /ftmpi_f_bottom/ MPI_BOTTOM
  common /ftmpi_f_errcodes_ignore/ MPI_ERRCODES_IGNORE
  ! A distributed graph's weights (MPI_DIST_GRAPH_CREATE ...): common blocks of mpif.h too.
  integer :: MPI_UNWEIGHTED(1), MPI_WEIGHTS_EMPTY(1)
  common /ftmpi_f_unweighted/ MPI_UNWEIGHTED
  common /ftmpi_f_weights_empty/ MPI_WEIGHTS_EMPTY

  ! MPI-3.1 17.2.2's callbacks. The C library calls them with every argument by reference, as
  ! gfortran passes them (src/mpi/fortran.cpp calls the attribute and grequest ones through
  ! trampolines). The reductions have C's MPI_User_function and MPI_User_function_c signatures exactly.
  abstract interface
    subroutine MPI_User_function(invec, inoutvec, len, datatype)
      import :: c_ptr, MPI_Datatype
      type(c_ptr), value :: invec, inoutvec
      integer :: len
      type(MPI_Datatype) :: datatype
    end subroutine
    subroutine MPI_User_function_c(invec, inoutvec, len, datatype)
      import :: c_ptr, MPI_Datatype, MPI_COUNT_KIND
      type(c_ptr), value :: invec, inoutvec
      integer(kind=MPI_COUNT_KIND) :: len
      type(MPI_Datatype) :: datatype
    end subroutine
    subroutine MPI_Comm_errhandler_function(comm, error_code)
      import :: MPI_Comm
      type(MPI_Comm) :: comm
      integer :: error_code
    end subroutine
    subroutine MPI_File_errhandler_function(file, error_code)
      import :: MPI_File
      type(MPI_File) :: file
      integer :: error_code
    end subroutine
    subroutine MPI_Win_errhandler_function(win, error_code)
      import :: MPI_Win
      type(MPI_Win) :: win
      integer :: error_code
    end subroutine
    subroutine MPI_Comm_copy_attr_function(oldcomm, comm_keyval, extra_state, attribute_val_in, &
        attribute_val_out, flag, ierror)
      import :: MPI_Comm, MPI_ADDRESS_KIND
      type(MPI_Comm) :: oldcomm
      integer :: comm_keyval, ierror
      integer(kind=MPI_ADDRESS_KIND) :: extra_state, attribute_val_in, attribute_val_out
      logical :: flag
    end subroutine
    subroutine MPI_Comm_delete_attr_function(comm, comm_keyval, attribute_val, extra_state, ierror)
      import :: MPI_Comm, MPI_ADDRESS_KIND
      type(MPI_Comm) :: comm
      integer :: comm_keyval, ierror
      integer(kind=MPI_ADDRESS_KIND) :: attribute_val, extra_state
    end subroutine
    subroutine MPI_Type_copy_attr_function(oldtype, type_keyval, extra_state, attribute_val_in, &
        attribute_val_out, flag, ierror)
      import :: MPI_Datatype, MPI_ADDRESS_KIND
      type(MPI_Datatype) :: oldtype
      integer :: type_keyval, ierror
      integer(kind=MPI_ADDRESS_KIND) :: extra_state, attribute_val_in, attribute_val_out
      logical :: flag
    end subroutine
    subroutine MPI_Type_delete_attr_function(datatype, type_keyval, attribute_val, extra_state, ierror)
      import :: MPI_Datatype, MPI_ADDRESS_KIND
      type(MPI_Datatype) :: datatype
      integer :: type_keyval, ierror
      integer(kind=MPI_ADDRESS_KIND) :: attribute_val, extra_state
    end subroutine
    subroutine MPI_Win_copy_attr_function(oldwin, win_keyval, extra_state, attribute_val_in, &
        attribute_val_out, flag, ierror)
      import :: MPI_Win, MPI_ADDRESS_KIND
      type(MPI_Win) :: oldwin
      integer :: win_keyval, ierror
      integer(kind=MPI_ADDRESS_KIND) :: extra_state, attribute_val_in, attribute_val_out
      logical :: flag
    end subroutine
    subroutine MPI_Win_delete_attr_function(win, win_keyval, attribute_val, extra_state, ierror)
      import :: MPI_Win, MPI_ADDRESS_KIND
      type(MPI_Win) :: win
      integer :: win_keyval, ierror
      integer(kind=MPI_ADDRESS_KIND) :: attribute_val, extra_state
    end subroutine
    ! MPI-1's, for MPI_Keyval_create (Open MPI's names): the values are INTEGERs.
    subroutine MPI_Copy_function(oldcomm, comm_keyval, extra_state, attribute_val_in, &
        attribute_val_out, flag, ierror)
      import :: MPI_Comm
      type(MPI_Comm) :: oldcomm
      integer :: comm_keyval, extra_state, attribute_val_in, attribute_val_out, ierror
      logical :: flag
    end subroutine
    subroutine MPI_Delete_function(comm, comm_keyval, attribute_val, extra_state, ierror)
      import :: MPI_Comm
      type(MPI_Comm) :: comm
      integer :: comm_keyval, attribute_val, extra_state, ierror
    end subroutine
    subroutine MPI_Grequest_query_function(extra_state, status, ierror)
      import :: MPI_Status, MPI_ADDRESS_KIND
      integer(kind=MPI_ADDRESS_KIND) :: extra_state
      type(MPI_Status) :: status
      integer :: ierror
    end subroutine
    subroutine MPI_Grequest_free_function(extra_state, ierror)
      import :: MPI_ADDRESS_KIND
      integer(kind=MPI_ADDRESS_KIND) :: extra_state
      integer :: ierror
    end subroutine
    subroutine MPI_Grequest_cancel_function(extra_state, complete, ierror)
      import :: MPI_ADDRESS_KIND
      integer(kind=MPI_ADDRESS_KIND) :: extra_state
      logical :: complete
      integer :: ierror
    end subroutine
  end interface

  ! The predefined callbacks: libftmpi's procedures of mpif.h, which it recognises by their addresses.
  procedure(MPI_Comm_copy_attr_function) :: MPI_COMM_NULL_COPY_FN, MPI_COMM_DUP_FN
  procedure(MPI_Comm_delete_attr_function) :: MPI_COMM_NULL_DELETE_FN
  procedure(MPI_Type_copy_attr_function) :: MPI_TYPE_NULL_COPY_FN, MPI_TYPE_DUP_FN
  procedure(MPI_Type_delete_attr_function) :: MPI_TYPE_NULL_DELETE_FN
  procedure(MPI_Win_copy_attr_function) :: MPI_WIN_NULL_COPY_FN, MPI_WIN_DUP_FN
  procedure(MPI_Win_delete_attr_function) :: MPI_WIN_NULL_DELETE_FN
  procedure(MPI_Copy_function) :: MPI_NULL_COPY_FN, MPI_DUP_FN
  procedure(MPI_Delete_function) :: MPI_NULL_DELETE_FN

  ! The calls without ierror: C's own functions, or mpif.h's (arguments by reference).
  interface MPI_Wtime
    function MPI_Wtime_f08() bind(c, name='MPI_Wtime')
      import :: c_double
      real(c_double) :: MPI_Wtime_f08
    end function
  end interface
  interface MPI_Wtick
    function MPI_Wtick_f08() bind(c, name='MPI_Wtick')
      import :: c_double
      real(c_double) :: MPI_Wtick_f08
    end function
  end interface
  interface MPI_Aint_add
    function MPI_Aint_add_f08(base, disp) bind(c, name='mpi_aint_add_')
      import :: MPI_ADDRESS_KIND
      integer(kind=MPI_ADDRESS_KIND), intent(in) :: base, disp
      integer(kind=MPI_ADDRESS_KIND) :: MPI_Aint_add_f08
    end function
  end interface
  interface MPI_Aint_diff
    function MPI_Aint_diff_f08(addr1, addr2) bind(c, name='mpi_aint_diff_')
      import :: MPI_ADDRESS_KIND
      integer(kind=MPI_ADDRESS_KIND), intent(in) :: addr1, addr2
      integer(kind=MPI_ADDRESS_KIND) :: MPI_Aint_diff_f08
    end function
  end interface
  interface MPI_Pcontrol
    subroutine MPI_Pcontrol_f08(level) bind(c, name='mpi_pcontrol_')
      import :: c_int
      integer(c_int), intent(in) :: level
    end subroutine
  end interface
  ! MPI-3.1 section 17.1.7: a call the compiler cannot see through, so it keeps no copy of BUF in a
  ! register across it; libftmpi's procedure does nothing.
  interface MPI_F_sync_reg
    subroutine MPI_F_sync_reg_f08(buf) bind(c, name='mpi_f_sync_reg_')
      type(*), dimension(..), asynchronous :: buf
    end subroutine
  end interface

  include 'mpi_f08_calls.h'

  interface operator(==)
    elemental logical function MPI_Comm_eq_f08(a, b)
      import :: MPI_Comm
      implicit none
      type(MPI_Comm), intent(in) :: a, b
    end function
  end interface
  interface operator(/=)
    elemental logical function MPI_Comm_ne_f08(a, b)
      import :: MPI_Comm
      implicit none
      type(MPI_Comm), intent(in) :: a, b
    end function
  end interface
  interface operator(==)
    elemental logical function MPI_Datatype_eq_f08(a, b)
      import :: MPI_Datatype
      implicit none
      type(MPI_Datatype), intent(in) :: a, b
    end function
  end interface
  interface operator(/=)
    elemental logical function MPI_Datatype_ne_f08(a, b)
      import :: MPI_Datatype
      implicit none
      type(MPI_Datatype), intent(in) :: a, b
    end function
  end interface
  interface operator(==)
    elemental logical function MPI_Group_eq_f08(a, b)
      import :: MPI_Group
      implicit none
      type(MPI_Group), intent(in) :: a, b
    end function
  end interface
  interface operator(/=)
    elemental logical function MPI_Group_ne_f08(a, b)
      import :: MPI_Group
      implicit none
      type(MPI_Group), intent(in) :: a, b
    end function
  end interface
  interface operator(==)
    elemental logical function MPI_Op_eq_f08(a, b)
      import :: MPI_Op
      implicit none
      type(MPI_Op), intent(in) :: a, b
    end function
  end interface
  interface operator(/=)
    elemental logical function MPI_Op_ne_f08(a, b)
      import :: MPI_Op
      implicit none
      type(MPI_Op), intent(in) :: a, b
    end function
  end interface
  interface operator(==)
    elemental logical function MPI_Request_eq_f08(a, b)
      import :: MPI_Request
      implicit none
      type(MPI_Request), intent(in) :: a, b
    end function
  end interface
  interface operator(/=)
    elemental logical function MPI_Request_ne_f08(a, b)
      import :: MPI_Request
      implicit none
      type(MPI_Request), intent(in) :: a, b
    end function
  end interface
  interface operator(==)
    elemental logical function MPI_Info_eq_f08(a, b)
      import :: MPI_Info
      implicit none
      type(MPI_Info), intent(in) :: a, b
    end function
  end interface
  interface operator(/=)
    elemental logical function MPI_Info_ne_f08(a, b)
      import :: MPI_Info
      implicit none
      type(MPI_Info), intent(in) :: a, b
    end function
  end interface
  interface operator(==)
    elemental logical function MPI_Errhandler_eq_f08(a, b)
      import :: MPI_Errhandler
      implicit none
      type(MPI_Errhandler), intent(in) :: a, b
    end function
  end interface
  interface operator(/=)
    elemental logical function MPI_Errhandler_ne_f08(a, b)
      import :: MPI_Errhandler
      implicit none
      type(MPI_Errhandler), intent(in) :: a, b
    end function
  end interface
  interface operator(==)
    elemental logical function MPI_Message_eq_f08(a, b)
      import :: MPI_Message
      implicit none
      type(MPI_Message), intent(in) :: a, b
    end function
  end interface
  interface operator(/=)
    elemental logical function MPI_Message_ne_f08(a, b)
      import :: MPI_Message
      implicit none
      type(MPI_Message), intent(in) :: a, b
    end function
  end interface
  interface operator(==)
    elemental logical function MPI_Win_eq_f08(a, b)
      import :: MPI_Win
      implicit none
      type(MPI_Win), intent(in) :: a, b
    end function
  end interface
  interface operator(/=)
    elemental logical function MPI_Win_ne_f08(a, b)
      import :: MPI_Win
      implicit none
      type(MPI_Win), intent(in) :: a, b
    end function
  end interface
  interface operator(==)
    elemental logical function MPI_File_eq_f08(a, b)
      import :: MPI_File
      implicit none
      type(MPI_File), intent(in) :: a, b
    end function
  end interface
  interface operator(/=)
    elemental logical function MPI_File_ne_f08(a, b)
      import :: MPI_File
      implicit none
      type(MPI_File), intent(in) :: a, b
    end function
  end interface
  include 'mpi_sizeof_interface.h'
contains
  include 'mpi_sizeof_procedures.h'
end module mpi_f08

! use mpi_f08: MPI-3.1's Fortran 2008 binding (section 17.2.2) for gfortran, over the same library.
!
! The handle types (TYPE(MPI_Comm) ... with one INTEGER, MPI_VAL, the handle of `use mpi`),
! TYPE(MPI_Status) (the six INTEGERs of an INTEGER status, MPI_SOURCE, MPI_TAG and MPI_ERROR first),
! operator(==) and operator(/=) on handles, every constant of mpif.h (mpi_f08_constants.h, generated
! from it by cmake/mpif08.cmake: handles as their types, the rest as INTEGERs), and the sentinels.
! Each call MPI_X is a generic whose specific MPI_X_f08 is defined in C++ (src/mpi/fortran_f08.cpp)
! and calls the binding of `use mpi`, so this module has no code to link. ierror is OPTIONAL; choice
! buffers are TYPE(*), DIMENSION(..) and must be contiguous (MPI_SUBARRAYS_SUPPORTED = .FALSE.: a
! section that is not is refused with MPI_ERR_BUFFER). MPI_ASYNC_PROTECTS_NONBLOCKING = .FALSE.: give
! buffers of nonblocking calls the ASYNCHRONOUS attribute, or keep them alive and untouched, as MPI says.
!
! Not here: the calls not declared below (among them info objects, attributes and keyvals, user
! error handlers, topologies, intercommunicators, the h-, indexed and subarray type constructors,
! pack/unpack, the nonblocking collectives other than ibarrier, ibcast, ireduce and iallreduce, the
! persistent collectives, buffer attach/detach, one-sided, I/O, MPI_Status_f2f08 and the other
! conversions between the two bindings, the PMPI_ names); MPI_FILE_NULL (MPI_File exists as a type
! only); MPI_2REAL and MPI_2DOUBLE_PRECISION (mpif.h has none).
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

  ! MPI-3.1 17.2.2's reduction function: the same arguments as C's MPI_User_function.
  abstract interface
    subroutine MPI_User_function(invec, inoutvec, len, datatype)
      import :: c_ptr, MPI_Datatype
      type(c_ptr), value :: invec, inoutvec
      integer :: len
      type(MPI_Datatype) :: datatype
    end subroutine
  end interface

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

  interface MPI_Init
    subroutine MPI_Init_f08(ierror)
      implicit none
      integer, optional, intent(out) :: ierror
    end subroutine
  end interface
  interface MPI_Init_thread
    subroutine MPI_Init_thread_f08(required, provided, ierror)
      implicit none
      integer, intent(in) :: required
      integer, intent(out) :: provided
      integer, optional, intent(out) :: ierror
    end subroutine
  end interface
  interface MPI_Finalize
    subroutine MPI_Finalize_f08(ierror)
      implicit none
      integer, optional, intent(out) :: ierror
    end subroutine
  end interface
  interface MPI_Initialized
    subroutine MPI_Initialized_f08(flag, ierror)
      implicit none
      logical, intent(out) :: flag
      integer, optional, intent(out) :: ierror
    end subroutine
  end interface
  interface MPI_Finalized
    subroutine MPI_Finalized_f08(flag, ierror)
      implicit none
      logical, intent(out) :: flag
      integer, optional, intent(out) :: ierror
    end subroutine
  end interface
  interface MPI_Abort
    subroutine MPI_Abort_f08(comm, errorcode, ierror)
      import :: MPI_Comm
      implicit none
      type(MPI_Comm), intent(in) :: comm
      integer, intent(in) :: errorcode
      integer, optional, intent(out) :: ierror
    end subroutine
  end interface
  interface MPI_Get_processor_name
    subroutine MPI_Get_processor_name_f08(name, resultlen, ierror)
      implicit none
      character(len=*), intent(out) :: name
      integer, intent(out) :: resultlen
      integer, optional, intent(out) :: ierror
    end subroutine
  end interface
  interface MPI_Get_library_version
    subroutine MPI_Get_library_version_f08(version, resultlen, ierror)
      implicit none
      character(len=*), intent(out) :: version
      integer, intent(out) :: resultlen
      integer, optional, intent(out) :: ierror
    end subroutine
  end interface
  interface MPI_Error_string
    subroutine MPI_Error_string_f08(errorcode, string, resultlen, ierror)
      implicit none
      integer, intent(in) :: errorcode
      character(len=*), intent(out) :: string
      integer, intent(out) :: resultlen
      integer, optional, intent(out) :: ierror
    end subroutine
  end interface
  interface MPI_Error_class
    subroutine MPI_Error_class_f08(errorcode, errorclass, ierror)
      implicit none
      integer, intent(in) :: errorcode
      integer, intent(out) :: errorclass
      integer, optional, intent(out) :: ierror
    end subroutine
  end interface
  interface MPI_Comm_set_errhandler
    subroutine MPI_Comm_set_errhandler_f08(comm, errhandler, ierror)
      import :: MPI_Comm, MPI_Errhandler
      implicit none
      type(MPI_Comm), intent(in) :: comm
      type(MPI_Errhandler), intent(in) :: errhandler
      integer, optional, intent(out) :: ierror
    end subroutine
  end interface
  interface MPI_Comm_get_errhandler
    subroutine MPI_Comm_get_errhandler_f08(comm, errhandler, ierror)
      import :: MPI_Comm, MPI_Errhandler
      implicit none
      type(MPI_Comm), intent(in) :: comm
      type(MPI_Errhandler), intent(out) :: errhandler
      integer, optional, intent(out) :: ierror
    end subroutine
  end interface
  interface MPI_Errhandler_free
    subroutine MPI_Errhandler_free_f08(errhandler, ierror)
      import :: MPI_Errhandler
      implicit none
      type(MPI_Errhandler), intent(inout) :: errhandler
      integer, optional, intent(out) :: ierror
    end subroutine
  end interface
  interface MPI_Send
    subroutine MPI_Send_f08(buf, count, datatype, dest, tag, comm, ierror)
      import :: MPI_Comm, MPI_Datatype
      implicit none
      type(*), dimension(..), intent(in) :: buf
      integer, intent(in) :: count
      type(MPI_Datatype), intent(in) :: datatype
      integer, intent(in) :: dest
      integer, intent(in) :: tag
      type(MPI_Comm), intent(in) :: comm
      integer, optional, intent(out) :: ierror
    end subroutine
  end interface
  interface MPI_Ssend
    subroutine MPI_Ssend_f08(buf, count, datatype, dest, tag, comm, ierror)
      import :: MPI_Comm, MPI_Datatype
      implicit none
      type(*), dimension(..), intent(in) :: buf
      integer, intent(in) :: count
      type(MPI_Datatype), intent(in) :: datatype
      integer, intent(in) :: dest
      integer, intent(in) :: tag
      type(MPI_Comm), intent(in) :: comm
      integer, optional, intent(out) :: ierror
    end subroutine
  end interface
  interface MPI_Rsend
    subroutine MPI_Rsend_f08(buf, count, datatype, dest, tag, comm, ierror)
      import :: MPI_Comm, MPI_Datatype
      implicit none
      type(*), dimension(..), intent(in) :: buf
      integer, intent(in) :: count
      type(MPI_Datatype), intent(in) :: datatype
      integer, intent(in) :: dest
      integer, intent(in) :: tag
      type(MPI_Comm), intent(in) :: comm
      integer, optional, intent(out) :: ierror
    end subroutine
  end interface
  interface MPI_Bsend
    subroutine MPI_Bsend_f08(buf, count, datatype, dest, tag, comm, ierror)
      import :: MPI_Comm, MPI_Datatype
      implicit none
      type(*), dimension(..), intent(in) :: buf
      integer, intent(in) :: count
      type(MPI_Datatype), intent(in) :: datatype
      integer, intent(in) :: dest
      integer, intent(in) :: tag
      type(MPI_Comm), intent(in) :: comm
      integer, optional, intent(out) :: ierror
    end subroutine
  end interface
  interface MPI_Recv
    subroutine MPI_Recv_f08(buf, count, datatype, source, tag, comm, status, ierror)
      import :: MPI_Comm, MPI_Datatype, MPI_Status
      implicit none
      type(*), dimension(..) :: buf
      integer, intent(in) :: count
      type(MPI_Datatype), intent(in) :: datatype
      integer, intent(in) :: source
      integer, intent(in) :: tag
      type(MPI_Comm), intent(in) :: comm
      type(MPI_Status), intent(out) :: status
      integer, optional, intent(out) :: ierror
    end subroutine
  end interface
  interface MPI_Isend
    subroutine MPI_Isend_f08(buf, count, datatype, dest, tag, comm, request, ierror)
      import :: MPI_Comm, MPI_Datatype, MPI_Request
      implicit none
      type(*), dimension(..), intent(in), asynchronous :: buf
      integer, intent(in) :: count
      type(MPI_Datatype), intent(in) :: datatype
      integer, intent(in) :: dest
      integer, intent(in) :: tag
      type(MPI_Comm), intent(in) :: comm
      type(MPI_Request), intent(out) :: request
      integer, optional, intent(out) :: ierror
    end subroutine
  end interface
  interface MPI_Issend
    subroutine MPI_Issend_f08(buf, count, datatype, dest, tag, comm, request, ierror)
      import :: MPI_Comm, MPI_Datatype, MPI_Request
      implicit none
      type(*), dimension(..), intent(in), asynchronous :: buf
      integer, intent(in) :: count
      type(MPI_Datatype), intent(in) :: datatype
      integer, intent(in) :: dest
      integer, intent(in) :: tag
      type(MPI_Comm), intent(in) :: comm
      type(MPI_Request), intent(out) :: request
      integer, optional, intent(out) :: ierror
    end subroutine
  end interface
  interface MPI_Irsend
    subroutine MPI_Irsend_f08(buf, count, datatype, dest, tag, comm, request, ierror)
      import :: MPI_Comm, MPI_Datatype, MPI_Request
      implicit none
      type(*), dimension(..), intent(in), asynchronous :: buf
      integer, intent(in) :: count
      type(MPI_Datatype), intent(in) :: datatype
      integer, intent(in) :: dest
      integer, intent(in) :: tag
      type(MPI_Comm), intent(in) :: comm
      type(MPI_Request), intent(out) :: request
      integer, optional, intent(out) :: ierror
    end subroutine
  end interface
  interface MPI_Ibsend
    subroutine MPI_Ibsend_f08(buf, count, datatype, dest, tag, comm, request, ierror)
      import :: MPI_Comm, MPI_Datatype, MPI_Request
      implicit none
      type(*), dimension(..), intent(in), asynchronous :: buf
      integer, intent(in) :: count
      type(MPI_Datatype), intent(in) :: datatype
      integer, intent(in) :: dest
      integer, intent(in) :: tag
      type(MPI_Comm), intent(in) :: comm
      type(MPI_Request), intent(out) :: request
      integer, optional, intent(out) :: ierror
    end subroutine
  end interface
  interface MPI_Irecv
    subroutine MPI_Irecv_f08(buf, count, datatype, source, tag, comm, request, ierror)
      import :: MPI_Comm, MPI_Datatype, MPI_Request
      implicit none
      type(*), dimension(..), asynchronous :: buf
      integer, intent(in) :: count
      type(MPI_Datatype), intent(in) :: datatype
      integer, intent(in) :: source
      integer, intent(in) :: tag
      type(MPI_Comm), intent(in) :: comm
      type(MPI_Request), intent(out) :: request
      integer, optional, intent(out) :: ierror
    end subroutine
  end interface
  interface MPI_Send_init
    subroutine MPI_Send_init_f08(buf, count, datatype, dest, tag, comm, request, ierror)
      import :: MPI_Comm, MPI_Datatype, MPI_Request
      implicit none
      type(*), dimension(..), intent(in), asynchronous :: buf
      integer, intent(in) :: count
      type(MPI_Datatype), intent(in) :: datatype
      integer, intent(in) :: dest
      integer, intent(in) :: tag
      type(MPI_Comm), intent(in) :: comm
      type(MPI_Request), intent(out) :: request
      integer, optional, intent(out) :: ierror
    end subroutine
  end interface
  interface MPI_Recv_init
    subroutine MPI_Recv_init_f08(buf, count, datatype, source, tag, comm, request, ierror)
      import :: MPI_Comm, MPI_Datatype, MPI_Request
      implicit none
      type(*), dimension(..), asynchronous :: buf
      integer, intent(in) :: count
      type(MPI_Datatype), intent(in) :: datatype
      integer, intent(in) :: source
      integer, intent(in) :: tag
      type(MPI_Comm), intent(in) :: comm
      type(MPI_Request), intent(out) :: request
      integer, optional, intent(out) :: ierror
    end subroutine
  end interface
  interface MPI_Sendrecv
    subroutine MPI_Sendrecv_f08(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, &
        recvtype, source, recvtag, comm, status, ierror)
      import :: MPI_Comm, MPI_Datatype, MPI_Status
      implicit none
      type(*), dimension(..), intent(in) :: sendbuf
      integer, intent(in) :: sendcount
      type(MPI_Datatype), intent(in) :: sendtype
      integer, intent(in) :: dest
      integer, intent(in) :: sendtag
      type(*), dimension(..) :: recvbuf
      integer, intent(in) :: recvcount
      type(MPI_Datatype), intent(in) :: recvtype
      integer, intent(in) :: source
      integer, intent(in) :: recvtag
      type(MPI_Comm), intent(in) :: comm
      type(MPI_Status), intent(out) :: status
      integer, optional, intent(out) :: ierror
    end subroutine
  end interface
  interface MPI_Sendrecv_replace
    subroutine MPI_Sendrecv_replace_f08(buf, count, datatype, dest, sendtag, source, recvtag, comm, &
        status, ierror)
      import :: MPI_Comm, MPI_Datatype, MPI_Status
      implicit none
      type(*), dimension(..) :: buf
      integer, intent(in) :: count
      type(MPI_Datatype), intent(in) :: datatype
      integer, intent(in) :: dest
      integer, intent(in) :: sendtag
      integer, intent(in) :: source
      integer, intent(in) :: recvtag
      type(MPI_Comm), intent(in) :: comm
      type(MPI_Status), intent(out) :: status
      integer, optional, intent(out) :: ierror
    end subroutine
  end interface
  interface MPI_Probe
    subroutine MPI_Probe_f08(source, tag, comm, status, ierror)
      import :: MPI_Comm, MPI_Status
      implicit none
      integer, intent(in) :: source
      integer, intent(in) :: tag
      type(MPI_Comm), intent(in) :: comm
      type(MPI_Status), intent(out) :: status
      integer, optional, intent(out) :: ierror
    end subroutine
  end interface
  interface MPI_Iprobe
    subroutine MPI_Iprobe_f08(source, tag, comm, flag, status, ierror)
      import :: MPI_Comm, MPI_Status
      implicit none
      integer, intent(in) :: source
      integer, intent(in) :: tag
      type(MPI_Comm), intent(in) :: comm
      logical, intent(out) :: flag
      type(MPI_Status), intent(out) :: status
      integer, optional, intent(out) :: ierror
    end subroutine
  end interface
  interface MPI_Mprobe
    subroutine MPI_Mprobe_f08(source, tag, comm, message, status, ierror)
      import :: MPI_Comm, MPI_Message, MPI_Status
      implicit none
      integer, intent(in) :: source
      integer, intent(in) :: tag
      type(MPI_Comm), intent(in) :: comm
      type(MPI_Message), intent(out) :: message
      type(MPI_Status), intent(out) :: status
      integer, optional, intent(out) :: ierror
    end subroutine
  end interface
  interface MPI_Improbe
    subroutine MPI_Improbe_f08(source, tag, comm, flag, message, status, ierror)
      import :: MPI_Comm, MPI_Message, MPI_Status
      implicit none
      integer, intent(in) :: source
      integer, intent(in) :: tag
      type(MPI_Comm), intent(in) :: comm
      logical, intent(out) :: flag
      type(MPI_Message), intent(out) :: message
      type(MPI_Status), intent(out) :: status
      integer, optional, intent(out) :: ierror
    end subroutine
  end interface
  interface MPI_Mrecv
    subroutine MPI_Mrecv_f08(buf, count, datatype, message, status, ierror)
      import :: MPI_Datatype, MPI_Message, MPI_Status
      implicit none
      type(*), dimension(..) :: buf
      integer, intent(in) :: count
      type(MPI_Datatype), intent(in) :: datatype
      type(MPI_Message), intent(inout) :: message
      type(MPI_Status), intent(out) :: status
      integer, optional, intent(out) :: ierror
    end subroutine
  end interface
  interface MPI_Imrecv
    subroutine MPI_Imrecv_f08(buf, count, datatype, message, request, ierror)
      import :: MPI_Datatype, MPI_Message, MPI_Request
      implicit none
      type(*), dimension(..), asynchronous :: buf
      integer, intent(in) :: count
      type(MPI_Datatype), intent(in) :: datatype
      type(MPI_Message), intent(inout) :: message
      type(MPI_Request), intent(out) :: request
      integer, optional, intent(out) :: ierror
    end subroutine
  end interface
  interface MPI_Get_count
    subroutine MPI_Get_count_f08(status, datatype, count, ierror)
      import :: MPI_Datatype, MPI_Status
      implicit none
      type(MPI_Status), intent(in) :: status
      type(MPI_Datatype), intent(in) :: datatype
      integer, intent(out) :: count
      integer, optional, intent(out) :: ierror
    end subroutine
  end interface
  interface MPI_Get_elements
    subroutine MPI_Get_elements_f08(status, datatype, count, ierror)
      import :: MPI_Datatype, MPI_Status
      implicit none
      type(MPI_Status), intent(in) :: status
      type(MPI_Datatype), intent(in) :: datatype
      integer, intent(out) :: count
      integer, optional, intent(out) :: ierror
    end subroutine
  end interface
  interface MPI_Wait
    subroutine MPI_Wait_f08(request, status, ierror)
      import :: MPI_Request, MPI_Status
      implicit none
      type(MPI_Request), intent(inout) :: request
      type(MPI_Status), intent(out) :: status
      integer, optional, intent(out) :: ierror
    end subroutine
  end interface
  interface MPI_Test
    subroutine MPI_Test_f08(request, flag, status, ierror)
      import :: MPI_Request, MPI_Status
      implicit none
      type(MPI_Request), intent(inout) :: request
      logical, intent(out) :: flag
      type(MPI_Status), intent(out) :: status
      integer, optional, intent(out) :: ierror
    end subroutine
  end interface
  interface MPI_Waitall
    subroutine MPI_Waitall_f08(count, array_of_requests, array_of_statuses, ierror)
      import :: MPI_Request, MPI_Status
      implicit none
      integer, intent(in) :: count
      type(MPI_Request), intent(inout) :: array_of_requests(*)
      type(MPI_Status) :: array_of_statuses(*)
      integer, optional, intent(out) :: ierror
    end subroutine
  end interface
  interface MPI_Testall
    subroutine MPI_Testall_f08(count, array_of_requests, flag, array_of_statuses, ierror)
      import :: MPI_Request, MPI_Status
      implicit none
      integer, intent(in) :: count
      type(MPI_Request), intent(inout) :: array_of_requests(*)
      logical, intent(out) :: flag
      type(MPI_Status) :: array_of_statuses(*)
      integer, optional, intent(out) :: ierror
    end subroutine
  end interface
  interface MPI_Waitany
    subroutine MPI_Waitany_f08(count, array_of_requests, index, status, ierror)
      import :: MPI_Request, MPI_Status
      implicit none
      integer, intent(in) :: count
      type(MPI_Request), intent(inout) :: array_of_requests(*)
      integer, intent(out) :: index
      type(MPI_Status), intent(out) :: status
      integer, optional, intent(out) :: ierror
    end subroutine
  end interface
  interface MPI_Testany
    subroutine MPI_Testany_f08(count, array_of_requests, index, flag, status, ierror)
      import :: MPI_Request, MPI_Status
      implicit none
      integer, intent(in) :: count
      type(MPI_Request), intent(inout) :: array_of_requests(*)
      integer, intent(out) :: index
      logical, intent(out) :: flag
      type(MPI_Status), intent(out) :: status
      integer, optional, intent(out) :: ierror
    end subroutine
  end interface
  interface MPI_Waitsome
    subroutine MPI_Waitsome_f08(incount, array_of_requests, outcount, array_of_indices, &
        array_of_statuses, ierror)
      import :: MPI_Request, MPI_Status
      implicit none
      integer, intent(in) :: incount
      type(MPI_Request), intent(inout) :: array_of_requests(*)
      integer, intent(out) :: outcount
      integer, intent(out) :: array_of_indices(*)
      type(MPI_Status) :: array_of_statuses(*)
      integer, optional, intent(out) :: ierror
    end subroutine
  end interface
  interface MPI_Testsome
    subroutine MPI_Testsome_f08(incount, array_of_requests, outcount, array_of_indices, &
        array_of_statuses, ierror)
      import :: MPI_Request, MPI_Status
      implicit none
      integer, intent(in) :: incount
      type(MPI_Request), intent(inout) :: array_of_requests(*)
      integer, intent(out) :: outcount
      integer, intent(out) :: array_of_indices(*)
      type(MPI_Status) :: array_of_statuses(*)
      integer, optional, intent(out) :: ierror
    end subroutine
  end interface
  interface MPI_Start
    subroutine MPI_Start_f08(request, ierror)
      import :: MPI_Request
      implicit none
      type(MPI_Request), intent(inout) :: request
      integer, optional, intent(out) :: ierror
    end subroutine
  end interface
  interface MPI_Startall
    subroutine MPI_Startall_f08(count, array_of_requests, ierror)
      import :: MPI_Request
      implicit none
      integer, intent(in) :: count
      type(MPI_Request), intent(inout) :: array_of_requests(*)
      integer, optional, intent(out) :: ierror
    end subroutine
  end interface
  interface MPI_Request_free
    subroutine MPI_Request_free_f08(request, ierror)
      import :: MPI_Request
      implicit none
      type(MPI_Request), intent(inout) :: request
      integer, optional, intent(out) :: ierror
    end subroutine
  end interface
  interface MPI_Cancel
    subroutine MPI_Cancel_f08(request, ierror)
      import :: MPI_Request
      implicit none
      type(MPI_Request), intent(in) :: request
      integer, optional, intent(out) :: ierror
    end subroutine
  end interface
  interface MPI_Test_cancelled
    subroutine MPI_Test_cancelled_f08(status, flag, ierror)
      import :: MPI_Status
      implicit none
      type(MPI_Status), intent(in) :: status
      logical, intent(out) :: flag
      integer, optional, intent(out) :: ierror
    end subroutine
  end interface
  interface MPI_Barrier
    subroutine MPI_Barrier_f08(comm, ierror)
      import :: MPI_Comm
      implicit none
      type(MPI_Comm), intent(in) :: comm
      integer, optional, intent(out) :: ierror
    end subroutine
  end interface
  interface MPI_Ibarrier
    subroutine MPI_Ibarrier_f08(comm, request, ierror)
      import :: MPI_Comm, MPI_Request
      implicit none
      type(MPI_Comm), intent(in) :: comm
      type(MPI_Request), intent(out) :: request
      integer, optional, intent(out) :: ierror
    end subroutine
  end interface
  interface MPI_Bcast
    subroutine MPI_Bcast_f08(buffer, count, datatype, root, comm, ierror)
      import :: MPI_Comm, MPI_Datatype
      implicit none
      type(*), dimension(..) :: buffer
      integer, intent(in) :: count
      type(MPI_Datatype), intent(in) :: datatype
      integer, intent(in) :: root
      type(MPI_Comm), intent(in) :: comm
      integer, optional, intent(out) :: ierror
    end subroutine
  end interface
  interface MPI_Ibcast
    subroutine MPI_Ibcast_f08(buffer, count, datatype, root, comm, request, ierror)
      import :: MPI_Comm, MPI_Datatype, MPI_Request
      implicit none
      type(*), dimension(..), asynchronous :: buffer
      integer, intent(in) :: count
      type(MPI_Datatype), intent(in) :: datatype
      integer, intent(in) :: root
      type(MPI_Comm), intent(in) :: comm
      type(MPI_Request), intent(out) :: request
      integer, optional, intent(out) :: ierror
    end subroutine
  end interface
  interface MPI_Reduce
    subroutine MPI_Reduce_f08(sendbuf, recvbuf, count, datatype, op, root, comm, ierror)
      import :: MPI_Comm, MPI_Datatype, MPI_Op
      implicit none
      type(*), dimension(..), intent(in) :: sendbuf
      type(*), dimension(..) :: recvbuf
      integer, intent(in) :: count
      type(MPI_Datatype), intent(in) :: datatype
      type(MPI_Op), intent(in) :: op
      integer, intent(in) :: root
      type(MPI_Comm), intent(in) :: comm
      integer, optional, intent(out) :: ierror
    end subroutine
  end interface
  interface MPI_Ireduce
    subroutine MPI_Ireduce_f08(sendbuf, recvbuf, count, datatype, op, root, comm, request, ierror)
      import :: MPI_Comm, MPI_Datatype, MPI_Op, MPI_Request
      implicit none
      type(*), dimension(..), intent(in), asynchronous :: sendbuf
      type(*), dimension(..), asynchronous :: recvbuf
      integer, intent(in) :: count
      type(MPI_Datatype), intent(in) :: datatype
      type(MPI_Op), intent(in) :: op
      integer, intent(in) :: root
      type(MPI_Comm), intent(in) :: comm
      type(MPI_Request), intent(out) :: request
      integer, optional, intent(out) :: ierror
    end subroutine
  end interface
  interface MPI_Allreduce
    subroutine MPI_Allreduce_f08(sendbuf, recvbuf, count, datatype, op, comm, ierror)
      import :: MPI_Comm, MPI_Datatype, MPI_Op
      implicit none
      type(*), dimension(..), intent(in) :: sendbuf
      type(*), dimension(..) :: recvbuf
      integer, intent(in) :: count
      type(MPI_Datatype), intent(in) :: datatype
      type(MPI_Op), intent(in) :: op
      type(MPI_Comm), intent(in) :: comm
      integer, optional, intent(out) :: ierror
    end subroutine
  end interface
  interface MPI_Iallreduce
    subroutine MPI_Iallreduce_f08(sendbuf, recvbuf, count, datatype, op, comm, request, ierror)
      import :: MPI_Comm, MPI_Datatype, MPI_Op, MPI_Request
      implicit none
      type(*), dimension(..), intent(in), asynchronous :: sendbuf
      type(*), dimension(..), asynchronous :: recvbuf
      integer, intent(in) :: count
      type(MPI_Datatype), intent(in) :: datatype
      type(MPI_Op), intent(in) :: op
      type(MPI_Comm), intent(in) :: comm
      type(MPI_Request), intent(out) :: request
      integer, optional, intent(out) :: ierror
    end subroutine
  end interface
  interface MPI_Scan
    subroutine MPI_Scan_f08(sendbuf, recvbuf, count, datatype, op, comm, ierror)
      import :: MPI_Comm, MPI_Datatype, MPI_Op
      implicit none
      type(*), dimension(..), intent(in) :: sendbuf
      type(*), dimension(..) :: recvbuf
      integer, intent(in) :: count
      type(MPI_Datatype), intent(in) :: datatype
      type(MPI_Op), intent(in) :: op
      type(MPI_Comm), intent(in) :: comm
      integer, optional, intent(out) :: ierror
    end subroutine
  end interface
  interface MPI_Exscan
    subroutine MPI_Exscan_f08(sendbuf, recvbuf, count, datatype, op, comm, ierror)
      import :: MPI_Comm, MPI_Datatype, MPI_Op
      implicit none
      type(*), dimension(..), intent(in) :: sendbuf
      type(*), dimension(..) :: recvbuf
      integer, intent(in) :: count
      type(MPI_Datatype), intent(in) :: datatype
      type(MPI_Op), intent(in) :: op
      type(MPI_Comm), intent(in) :: comm
      integer, optional, intent(out) :: ierror
    end subroutine
  end interface
  interface MPI_Reduce_scatter_block
    subroutine MPI_Reduce_scatter_block_f08(sendbuf, recvbuf, recvcount, datatype, op, comm, ierror)
      import :: MPI_Comm, MPI_Datatype, MPI_Op
      implicit none
      type(*), dimension(..), intent(in) :: sendbuf
      type(*), dimension(..) :: recvbuf
      integer, intent(in) :: recvcount
      type(MPI_Datatype), intent(in) :: datatype
      type(MPI_Op), intent(in) :: op
      type(MPI_Comm), intent(in) :: comm
      integer, optional, intent(out) :: ierror
    end subroutine
  end interface
  interface MPI_Gather
    subroutine MPI_Gather_f08(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm, ierror)
      import :: MPI_Comm, MPI_Datatype
      implicit none
      type(*), dimension(..), intent(in) :: sendbuf
      integer, intent(in) :: sendcount
      type(MPI_Datatype), intent(in) :: sendtype
      type(*), dimension(..) :: recvbuf
      integer, intent(in) :: recvcount
      type(MPI_Datatype), intent(in) :: recvtype
      integer, intent(in) :: root
      type(MPI_Comm), intent(in) :: comm
      integer, optional, intent(out) :: ierror
    end subroutine
  end interface
  interface MPI_Gatherv
    subroutine MPI_Gatherv_f08(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, &
        root, comm, ierror)
      import :: MPI_Comm, MPI_Datatype
      implicit none
      type(*), dimension(..), intent(in) :: sendbuf
      integer, intent(in) :: sendcount
      type(MPI_Datatype), intent(in) :: sendtype
      type(*), dimension(..) :: recvbuf
      integer, intent(in) :: recvcounts(*)
      integer, intent(in) :: displs(*)
      type(MPI_Datatype), intent(in) :: recvtype
      integer, intent(in) :: root
      type(MPI_Comm), intent(in) :: comm
      integer, optional, intent(out) :: ierror
    end subroutine
  end interface
  interface MPI_Scatter
    subroutine MPI_Scatter_f08(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm, ierror)
      import :: MPI_Comm, MPI_Datatype
      implicit none
      type(*), dimension(..), intent(in) :: sendbuf
      integer, intent(in) :: sendcount
      type(MPI_Datatype), intent(in) :: sendtype
      type(*), dimension(..) :: recvbuf
      integer, intent(in) :: recvcount
      type(MPI_Datatype), intent(in) :: recvtype
      integer, intent(in) :: root
      type(MPI_Comm), intent(in) :: comm
      integer, optional, intent(out) :: ierror
    end subroutine
  end interface
  interface MPI_Scatterv
    subroutine MPI_Scatterv_f08(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, &
        recvtype, root, comm, ierror)
      import :: MPI_Comm, MPI_Datatype
      implicit none
      type(*), dimension(..), intent(in) :: sendbuf
      integer, intent(in) :: sendcounts(*)
      integer, intent(in) :: displs(*)
      type(MPI_Datatype), intent(in) :: sendtype
      type(*), dimension(..) :: recvbuf
      integer, intent(in) :: recvcount
      type(MPI_Datatype), intent(in) :: recvtype
      integer, intent(in) :: root
      type(MPI_Comm), intent(in) :: comm
      integer, optional, intent(out) :: ierror
    end subroutine
  end interface
  interface MPI_Allgather
    subroutine MPI_Allgather_f08(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, ierror)
      import :: MPI_Comm, MPI_Datatype
      implicit none
      type(*), dimension(..), intent(in) :: sendbuf
      integer, intent(in) :: sendcount
      type(MPI_Datatype), intent(in) :: sendtype
      type(*), dimension(..) :: recvbuf
      integer, intent(in) :: recvcount
      type(MPI_Datatype), intent(in) :: recvtype
      type(MPI_Comm), intent(in) :: comm
      integer, optional, intent(out) :: ierror
    end subroutine
  end interface
  interface MPI_Allgatherv
    subroutine MPI_Allgatherv_f08(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, &
        recvtype, comm, ierror)
      import :: MPI_Comm, MPI_Datatype
      implicit none
      type(*), dimension(..), intent(in) :: sendbuf
      integer, intent(in) :: sendcount
      type(MPI_Datatype), intent(in) :: sendtype
      type(*), dimension(..) :: recvbuf
      integer, intent(in) :: recvcounts(*)
      integer, intent(in) :: displs(*)
      type(MPI_Datatype), intent(in) :: recvtype
      type(MPI_Comm), intent(in) :: comm
      integer, optional, intent(out) :: ierror
    end subroutine
  end interface
  interface MPI_Alltoall
    subroutine MPI_Alltoall_f08(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, ierror)
      import :: MPI_Comm, MPI_Datatype
      implicit none
      type(*), dimension(..), intent(in) :: sendbuf
      integer, intent(in) :: sendcount
      type(MPI_Datatype), intent(in) :: sendtype
      type(*), dimension(..) :: recvbuf
      integer, intent(in) :: recvcount
      type(MPI_Datatype), intent(in) :: recvtype
      type(MPI_Comm), intent(in) :: comm
      integer, optional, intent(out) :: ierror
    end subroutine
  end interface
  interface MPI_Alltoallv
    subroutine MPI_Alltoallv_f08(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, &
        rdispls, recvtype, comm, ierror)
      import :: MPI_Comm, MPI_Datatype
      implicit none
      type(*), dimension(..), intent(in) :: sendbuf
      integer, intent(in) :: sendcounts(*)
      integer, intent(in) :: sdispls(*)
      type(MPI_Datatype), intent(in) :: sendtype
      type(*), dimension(..) :: recvbuf
      integer, intent(in) :: recvcounts(*)
      integer, intent(in) :: rdispls(*)
      type(MPI_Datatype), intent(in) :: recvtype
      type(MPI_Comm), intent(in) :: comm
      integer, optional, intent(out) :: ierror
    end subroutine
  end interface
  interface MPI_Op_create
    subroutine MPI_Op_create_f08(user_fn, commute, op, ierror)
      import :: MPI_Op, MPI_User_function
      implicit none
      procedure(MPI_User_function) :: user_fn
      logical, intent(in) :: commute
      type(MPI_Op), intent(out) :: op
      integer, optional, intent(out) :: ierror
    end subroutine
  end interface
  interface MPI_Op_free
    subroutine MPI_Op_free_f08(op, ierror)
      import :: MPI_Op
      implicit none
      type(MPI_Op), intent(inout) :: op
      integer, optional, intent(out) :: ierror
    end subroutine
  end interface
  interface MPI_Comm_rank
    subroutine MPI_Comm_rank_f08(comm, rank, ierror)
      import :: MPI_Comm
      implicit none
      type(MPI_Comm), intent(in) :: comm
      integer, intent(out) :: rank
      integer, optional, intent(out) :: ierror
    end subroutine
  end interface
  interface MPI_Comm_size
    subroutine MPI_Comm_size_f08(comm, size, ierror)
      import :: MPI_Comm
      implicit none
      type(MPI_Comm), intent(in) :: comm
      integer, intent(out) :: size
      integer, optional, intent(out) :: ierror
    end subroutine
  end interface
  interface MPI_Comm_dup
    subroutine MPI_Comm_dup_f08(comm, newcomm, ierror)
      import :: MPI_Comm
      implicit none
      type(MPI_Comm), intent(in) :: comm
      type(MPI_Comm), intent(out) :: newcomm
      integer, optional, intent(out) :: ierror
    end subroutine
  end interface
  interface MPI_Comm_split
    subroutine MPI_Comm_split_f08(comm, color, key, newcomm, ierror)
      import :: MPI_Comm
      implicit none
      type(MPI_Comm), intent(in) :: comm
      integer, intent(in) :: color
      integer, intent(in) :: key
      type(MPI_Comm), intent(out) :: newcomm
      integer, optional, intent(out) :: ierror
    end subroutine
  end interface
  interface MPI_Comm_free
    subroutine MPI_Comm_free_f08(comm, ierror)
      import :: MPI_Comm
      implicit none
      type(MPI_Comm), intent(inout) :: comm
      integer, optional, intent(out) :: ierror
    end subroutine
  end interface
  interface MPI_Comm_compare
    subroutine MPI_Comm_compare_f08(comm1, comm2, result, ierror)
      import :: MPI_Comm
      implicit none
      type(MPI_Comm), intent(in) :: comm1
      type(MPI_Comm), intent(in) :: comm2
      integer, intent(out) :: result
      integer, optional, intent(out) :: ierror
    end subroutine
  end interface
  interface MPI_Comm_group
    subroutine MPI_Comm_group_f08(comm, group, ierror)
      import :: MPI_Comm, MPI_Group
      implicit none
      type(MPI_Comm), intent(in) :: comm
      type(MPI_Group), intent(out) :: group
      integer, optional, intent(out) :: ierror
    end subroutine
  end interface
  interface MPI_Comm_set_name
    subroutine MPI_Comm_set_name_f08(comm, comm_name, ierror)
      import :: MPI_Comm
      implicit none
      type(MPI_Comm), intent(in) :: comm
      character(len=*), intent(in) :: comm_name
      integer, optional, intent(out) :: ierror
    end subroutine
  end interface
  interface MPI_Comm_get_name
    subroutine MPI_Comm_get_name_f08(comm, comm_name, resultlen, ierror)
      import :: MPI_Comm
      implicit none
      type(MPI_Comm), intent(in) :: comm
      character(len=*), intent(out) :: comm_name
      integer, intent(out) :: resultlen
      integer, optional, intent(out) :: ierror
    end subroutine
  end interface
  interface MPI_Group_size
    subroutine MPI_Group_size_f08(group, size, ierror)
      import :: MPI_Group
      implicit none
      type(MPI_Group), intent(in) :: group
      integer, intent(out) :: size
      integer, optional, intent(out) :: ierror
    end subroutine
  end interface
  interface MPI_Group_rank
    subroutine MPI_Group_rank_f08(group, rank, ierror)
      import :: MPI_Group
      implicit none
      type(MPI_Group), intent(in) :: group
      integer, intent(out) :: rank
      integer, optional, intent(out) :: ierror
    end subroutine
  end interface
  interface MPI_Group_free
    subroutine MPI_Group_free_f08(group, ierror)
      import :: MPI_Group
      implicit none
      type(MPI_Group), intent(inout) :: group
      integer, optional, intent(out) :: ierror
    end subroutine
  end interface
  interface MPI_Group_incl
    subroutine MPI_Group_incl_f08(group, n, ranks, newgroup, ierror)
      import :: MPI_Group
      implicit none
      type(MPI_Group), intent(in) :: group
      integer, intent(in) :: n
      integer, intent(in) :: ranks(*)
      type(MPI_Group), intent(out) :: newgroup
      integer, optional, intent(out) :: ierror
    end subroutine
  end interface
  interface MPI_Group_translate_ranks
    subroutine MPI_Group_translate_ranks_f08(group1, n, ranks1, group2, ranks2, ierror)
      import :: MPI_Group
      implicit none
      type(MPI_Group), intent(in) :: group1
      integer, intent(in) :: n
      integer, intent(in) :: ranks1(*)
      type(MPI_Group), intent(in) :: group2
      integer, intent(out) :: ranks2(*)
      integer, optional, intent(out) :: ierror
    end subroutine
  end interface
  interface MPI_Group_compare
    subroutine MPI_Group_compare_f08(group1, group2, result, ierror)
      import :: MPI_Group
      implicit none
      type(MPI_Group), intent(in) :: group1
      type(MPI_Group), intent(in) :: group2
      integer, intent(out) :: result
      integer, optional, intent(out) :: ierror
    end subroutine
  end interface
  interface MPI_Type_contiguous
    subroutine MPI_Type_contiguous_f08(count, oldtype, newtype, ierror)
      import :: MPI_Datatype
      implicit none
      integer, intent(in) :: count
      type(MPI_Datatype), intent(in) :: oldtype
      type(MPI_Datatype), intent(out) :: newtype
      integer, optional, intent(out) :: ierror
    end subroutine
  end interface
  interface MPI_Type_vector
    subroutine MPI_Type_vector_f08(count, blocklength, stride, oldtype, newtype, ierror)
      import :: MPI_Datatype
      implicit none
      integer, intent(in) :: count
      integer, intent(in) :: blocklength
      integer, intent(in) :: stride
      type(MPI_Datatype), intent(in) :: oldtype
      type(MPI_Datatype), intent(out) :: newtype
      integer, optional, intent(out) :: ierror
    end subroutine
  end interface
  interface MPI_Type_create_struct
    subroutine MPI_Type_create_struct_f08(count, array_of_blocklengths, array_of_displacements, &
        array_of_types, newtype, ierror)
      import :: MPI_ADDRESS_KIND, MPI_Datatype
      implicit none
      integer, intent(in) :: count
      integer, intent(in) :: array_of_blocklengths(*)
      integer(kind=MPI_ADDRESS_KIND), intent(in) :: array_of_displacements(*)
      type(MPI_Datatype), intent(in) :: array_of_types(*)
      type(MPI_Datatype), intent(out) :: newtype
      integer, optional, intent(out) :: ierror
    end subroutine
  end interface
  interface MPI_Type_create_resized
    subroutine MPI_Type_create_resized_f08(oldtype, lb, extent, newtype, ierror)
      import :: MPI_ADDRESS_KIND, MPI_Datatype
      implicit none
      type(MPI_Datatype), intent(in) :: oldtype
      integer(kind=MPI_ADDRESS_KIND), intent(in) :: lb
      integer(kind=MPI_ADDRESS_KIND), intent(in) :: extent
      type(MPI_Datatype), intent(out) :: newtype
      integer, optional, intent(out) :: ierror
    end subroutine
  end interface
  interface MPI_Type_commit
    subroutine MPI_Type_commit_f08(datatype, ierror)
      import :: MPI_Datatype
      implicit none
      type(MPI_Datatype), intent(inout) :: datatype
      integer, optional, intent(out) :: ierror
    end subroutine
  end interface
  interface MPI_Type_free
    subroutine MPI_Type_free_f08(datatype, ierror)
      import :: MPI_Datatype
      implicit none
      type(MPI_Datatype), intent(inout) :: datatype
      integer, optional, intent(out) :: ierror
    end subroutine
  end interface
  interface MPI_Type_size
    subroutine MPI_Type_size_f08(datatype, size, ierror)
      import :: MPI_Datatype
      implicit none
      type(MPI_Datatype), intent(in) :: datatype
      integer, intent(out) :: size
      integer, optional, intent(out) :: ierror
    end subroutine
  end interface
  interface MPI_Type_get_extent
    subroutine MPI_Type_get_extent_f08(datatype, lb, extent, ierror)
      import :: MPI_ADDRESS_KIND, MPI_Datatype
      implicit none
      type(MPI_Datatype), intent(in) :: datatype
      integer(kind=MPI_ADDRESS_KIND), intent(out) :: lb
      integer(kind=MPI_ADDRESS_KIND), intent(out) :: extent
      integer, optional, intent(out) :: ierror
    end subroutine
  end interface
  interface MPI_Get_address
    subroutine MPI_Get_address_f08(location, address, ierror)
      import :: MPI_ADDRESS_KIND
      implicit none
      type(*), dimension(..), intent(in) :: location
      integer(kind=MPI_ADDRESS_KIND), intent(out) :: address
      integer, optional, intent(out) :: ierror
    end subroutine
  end interface
  interface operator(==)
    logical function MPI_Comm_eq_f08(a, b)
      import :: MPI_Comm
      implicit none
      type(MPI_Comm), intent(in) :: a, b
    end function
  end interface
  interface operator(/=)
    logical function MPI_Comm_ne_f08(a, b)
      import :: MPI_Comm
      implicit none
      type(MPI_Comm), intent(in) :: a, b
    end function
  end interface
  interface operator(==)
    logical function MPI_Datatype_eq_f08(a, b)
      import :: MPI_Datatype
      implicit none
      type(MPI_Datatype), intent(in) :: a, b
    end function
  end interface
  interface operator(/=)
    logical function MPI_Datatype_ne_f08(a, b)
      import :: MPI_Datatype
      implicit none
      type(MPI_Datatype), intent(in) :: a, b
    end function
  end interface
  interface operator(==)
    logical function MPI_Group_eq_f08(a, b)
      import :: MPI_Group
      implicit none
      type(MPI_Group), intent(in) :: a, b
    end function
  end interface
  interface operator(/=)
    logical function MPI_Group_ne_f08(a, b)
      import :: MPI_Group
      implicit none
      type(MPI_Group), intent(in) :: a, b
    end function
  end interface
  interface operator(==)
    logical function MPI_Op_eq_f08(a, b)
      import :: MPI_Op
      implicit none
      type(MPI_Op), intent(in) :: a, b
    end function
  end interface
  interface operator(/=)
    logical function MPI_Op_ne_f08(a, b)
      import :: MPI_Op
      implicit none
      type(MPI_Op), intent(in) :: a, b
    end function
  end interface
  interface operator(==)
    logical function MPI_Request_eq_f08(a, b)
      import :: MPI_Request
      implicit none
      type(MPI_Request), intent(in) :: a, b
    end function
  end interface
  interface operator(/=)
    logical function MPI_Request_ne_f08(a, b)
      import :: MPI_Request
      implicit none
      type(MPI_Request), intent(in) :: a, b
    end function
  end interface
  interface operator(==)
    logical function MPI_Info_eq_f08(a, b)
      import :: MPI_Info
      implicit none
      type(MPI_Info), intent(in) :: a, b
    end function
  end interface
  interface operator(/=)
    logical function MPI_Info_ne_f08(a, b)
      import :: MPI_Info
      implicit none
      type(MPI_Info), intent(in) :: a, b
    end function
  end interface
  interface operator(==)
    logical function MPI_Errhandler_eq_f08(a, b)
      import :: MPI_Errhandler
      implicit none
      type(MPI_Errhandler), intent(in) :: a, b
    end function
  end interface
  interface operator(/=)
    logical function MPI_Errhandler_ne_f08(a, b)
      import :: MPI_Errhandler
      implicit none
      type(MPI_Errhandler), intent(in) :: a, b
    end function
  end interface
  interface operator(==)
    logical function MPI_Message_eq_f08(a, b)
      import :: MPI_Message
      implicit none
      type(MPI_Message), intent(in) :: a, b
    end function
  end interface
  interface operator(/=)
    logical function MPI_Message_ne_f08(a, b)
      import :: MPI_Message
      implicit none
      type(MPI_Message), intent(in) :: a, b
    end function
  end interface
  interface operator(==)
    logical function MPI_Win_eq_f08(a, b)
      import :: MPI_Win
      implicit none
      type(MPI_Win), intent(in) :: a, b
    end function
  end interface
  interface operator(/=)
    logical function MPI_Win_ne_f08(a, b)
      import :: MPI_Win
      implicit none
      type(MPI_Win), intent(in) :: a, b
    end function
  end interface
  interface operator(==)
    logical function MPI_File_eq_f08(a, b)
      import :: MPI_File
      implicit none
      type(MPI_File), intent(in) :: a, b
    end function
  end interface
  interface operator(/=)
    logical function MPI_File_ne_f08(a, b)
      import :: MPI_File
      implicit none
      type(MPI_File), intent(in) :: a, b
    end function
  end interface
end module mpi_f08

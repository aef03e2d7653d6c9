! MPI-IO through `use mpi_f08` (and `use mpi`'s bindings behind it), each result checked: a file
! opened with a hint, a strided view (every rank's ints interleaved), a collective write, an
! independent read of the whole file, the individual and shared pointers, a nonblocking read, a
! split collective, atomicity, sizes, a strided section refused through the file's handler, a file
! error reaching a Fortran error handler; for 1-4 ranks.
module io_f08_state
  use mpi_f08
  implicit none
  integer :: handler_calls = 0, last_code = MPI_SUCCESS
contains
  subroutine on_file_error(file, code)
    type(MPI_File) :: file
    integer :: code
    handler_calls = handler_calls + 1
    last_code = code
    if (file == MPI_FILE_NULL) handler_calls = handler_calls + 100
  end subroutine on_file_error
end module io_f08_state

program io_fortran_f08
  use mpi_f08
  use io_f08_state
  use fortran_check
  implicit none
  integer, parameter :: n = 16
  type(MPI_File) :: fh
  type(MPI_Info) :: info
  type(MPI_Datatype) :: strided, etype, filetype
  type(MPI_Status) :: status
  type(MPI_Request) :: request
  type(MPI_Errhandler) :: handler
  integer :: rank, nranks, i, count, ierr, amode
  integer :: mine(n), whole(n * 4), one
  integer(kind=MPI_OFFSET_KIND) :: size, disp, position
  integer(kind=MPI_ADDRESS_KIND) :: lb, extent
  logical :: flag
  character(len=MPI_MAX_DATAREP_STRING) :: datarep
  character(len=256) :: path

  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, nranks)
  call expect(nranks <= 4, 'at most 4 ranks')
  call get_command_argument(1, path)
  call MPI_Info_create(info)
  call MPI_Info_set(info, 'cb_buffer_size', '65536')
  call MPI_File_open(MPI_COMM_WORLD, trim(path), MPI_MODE_CREATE + MPI_MODE_RDWR, info, fh)
  call MPI_Info_free(info)
  call MPI_File_get_amode(fh, amode)
  call expect(amode == MPI_MODE_CREATE + MPI_MODE_RDWR, 'get_amode')

  ! Rank r's ints are r, r + nranks, ...: an int resized to nranks ints.
  lb = 0
  extent = 4 * nranks
  call MPI_Type_create_resized(MPI_INTEGER, lb, extent, strided)
  call MPI_Type_commit(strided)
  disp = 4 * rank
  call MPI_File_set_view(fh, disp, MPI_INTEGER, strided, 'native', MPI_INFO_NULL)
  call MPI_File_get_view(fh, disp, etype, filetype, datarep)
  call expect(disp == 4 * rank .and. trim(datarep) == 'native', 'get_view')
  call MPI_Type_free(filetype)
  do i = 1, n
    mine(i) = rank * 1000 + i
  end do
  call MPI_File_write_all(fh, mine, n, MPI_INTEGER, status)
  call MPI_Get_count(status, MPI_INTEGER, count)
  call expect(count == n, 'write_all count')
  call MPI_File_get_position(fh, position)
  call expect(position == n, 'the individual pointer advanced')
  call MPI_File_sync(fh)
  call MPI_Barrier(MPI_COMM_WORLD)
  call MPI_File_sync(fh)

  ! The whole file, through a plain view.
  disp = 0
  call MPI_File_set_view(fh, disp, MPI_BYTE, MPI_BYTE, 'native', MPI_INFO_NULL)
  call MPI_File_get_size(fh, size)
  call expect(size == 4 * n * nranks, 'file size')
  disp = 0
  call MPI_File_read_at(fh, disp, whole, n * nranks, MPI_INTEGER, status)
  do i = 1, n * nranks
    call expect(whole(i) == mod(i - 1, nranks) * 1000 + (i - 1) / nranks + 1, 'interleaved ints')
  end do
  ! Past the end: a short count.
  disp = 4 * (n * nranks - 1)
  call MPI_File_read_at(fh, disp, whole, 5, MPI_INTEGER, status)
  call MPI_Get_count(status, MPI_INTEGER, count)
  call expect(count == 1, 'read past the end counts 1')
  ! Nonblocking read, seek, split collective.
  disp = 4 * rank
  call MPI_File_iread_at(fh, disp, one, 1, MPI_INTEGER, request)
  call MPI_Wait(request, status)
  call expect(one == rank * 1000 + 1, 'iread_at')
  position = 4 * rank
  call MPI_File_seek(fh, position, MPI_SEEK_SET)
  call MPI_File_read_all_begin(fh, one, 1, MPI_INTEGER)
  call MPI_File_read_all_end(fh, one, status)
  call expect(one == rank * 1000 + 1, 'split read_all')
  call MPI_File_get_type_extent(fh, strided, extent)
  call expect(extent == 4 * nranks, 'get_type_extent')
  ! The shared pointer: write_ordered puts rank r's int at r.
  position = 0
  call MPI_File_seek_shared(fh, position, MPI_SEEK_SET)
  one = -rank
  call MPI_File_write_ordered(fh, one, 1, MPI_INTEGER, status)
  call MPI_File_get_position_shared(fh, position)
  call expect(position == 4 * nranks, 'shared pointer after write_ordered')
  disp = 4 * rank
  call MPI_File_read_at(fh, disp, one, 1, MPI_INTEGER, status)
  call expect(one == -rank, 'write_ordered placed the int')
  ! A strided section is refused through the file's handler (MPI_ERRORS_RETURN, a file's default),
  ! not MPI_COMM_SELF's (fatal by default), and nothing is written.
  disp = 0
  call MPI_File_write_at(fh, disp, whole(1:8:2), 4, MPI_INTEGER, status, ierr)
  call expect(ierr == MPI_ERR_BUFFER, 'a strided section refused through the file''s handler')
  call MPI_File_read_at(fh, disp, one, 1, MPI_INTEGER, status)
  call expect(one == 0, 'the refused write wrote nothing')
  call MPI_File_set_atomicity(fh, .true.)
  call MPI_File_get_atomicity(fh, flag)
  call expect(flag, 'atomic mode')
  call MPI_File_close(fh)
  call expect(fh == MPI_FILE_NULL, 'close gives MPI_FILE_NULL')

  ! A Fortran error handler on MPI_FILE_NULL gets a failed open.
  call MPI_File_create_errhandler(on_file_error, handler)
  call MPI_File_set_errhandler(MPI_FILE_NULL, handler)
  call MPI_File_open(MPI_COMM_WORLD, trim(path) // '.missing', MPI_MODE_RDONLY, MPI_INFO_NULL, fh, ierr)
  call expect(ierr == MPI_ERR_NO_SUCH_FILE .and. last_code == MPI_ERR_NO_SUCH_FILE .and. handler_calls == 101, &
              'the handler got the failed open')
  call MPI_File_set_errhandler(MPI_FILE_NULL, MPI_ERRORS_RETURN)
  call MPI_Errhandler_free(handler)
  call MPI_Type_free(strided)
  call MPI_Barrier(MPI_COMM_WORLD)
  if (rank == 0) call MPI_File_delete(trim(path), MPI_INFO_NULL)
  call MPI_Finalize()
  if (rank == 0) print '(a)', 'io_fortran_f08: ok'
end program io_fortran_f08

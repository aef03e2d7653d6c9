! `use mpi_f08` beyond fortran_f08.f90, each result checked: the environment's small calls; split,
! create, create_group, idup and an intercommunicator; attributes with f08 copy and delete callbacks,
! the predefined ones, datatype attributes and MPI-1's keyvals; groups; a user error handler, error
! classes, codes and strings; datatype constructors with their envelope and contents, a subarray sent,
! pack and unpack (native and external32); nonblocking and persistent collectives, v and w forms,
! and every collective in its blocking, nonblocking and persistent forms; probe and mprobe, every
! send mode, persistent point-to-point, Testsome, Testall and Waitany with status arrays, a cancelled
! receive, statuses set by hand, buffered sends with the buffer given back; a generalized request;
! Cartesian, graph and distributed graph topologies with neighbourhood collectives; info objects.
! For 2 to 4 ranks.
module f08_more_state
  use mpi_f08
  use fortran_check
  implicit none
  integer :: handler_calls = 0, last_code = MPI_SUCCESS
  integer :: copies = 0, deletes = 0, grequest_frees = 0
contains
  ! Completes a nonblocking call (2) or starts and completes a persistent one, then frees it (3).
  subroutine complete(how, request)
    integer, intent(in) :: how
    type(MPI_Request), intent(inout) :: request
    if (how == 2) then
      call MPI_Wait(request, MPI_STATUS_IGNORE)
    else if (how == 3) then
      call MPI_Start(request)
      call MPI_Wait(request, MPI_STATUS_IGNORE)
      call MPI_Request_free(request)
    end if
  end subroutine complete

  subroutine record_error(comm, error_code)
    type(MPI_Comm) :: comm
    integer :: error_code
    handler_calls = handler_calls + 1
    last_code = error_code
    call expect(comm /= MPI_COMM_NULL, 'error handler comm')
  end subroutine record_error

  ! Copies the value plus one, so a test sees that it ran.
  subroutine copy_plus_one(oldcomm, comm_keyval, extra_state, attribute_val_in, attribute_val_out, flag, ierror)
    type(MPI_Comm) :: oldcomm
    integer :: comm_keyval, ierror
    integer(kind=MPI_ADDRESS_KIND) :: extra_state, attribute_val_in, attribute_val_out
    logical :: flag
    call expect(extra_state == 7, 'copy extra_state')
    call expect(oldcomm /= MPI_COMM_NULL .and. comm_keyval /= MPI_KEYVAL_INVALID, 'copy arguments')
    attribute_val_out = attribute_val_in + 1
    flag = .true.
    copies = copies + 1
    ierror = MPI_SUCCESS
  end subroutine copy_plus_one

  subroutine count_delete(comm, comm_keyval, attribute_val, extra_state, ierror)
    type(MPI_Comm) :: comm
    integer :: comm_keyval, ierror
    integer(kind=MPI_ADDRESS_KIND) :: attribute_val, extra_state
    call expect(extra_state == 7 .and. attribute_val >= 41, 'delete arguments')
    call expect(comm /= MPI_COMM_NULL .and. comm_keyval /= MPI_KEYVAL_INVALID, 'delete handles')
    deletes = deletes + 1
    ierror = MPI_SUCCESS
  end subroutine count_delete

  subroutine grequest_query(extra_state, status, ierror)
    integer(kind=MPI_ADDRESS_KIND) :: extra_state
    type(MPI_Status) :: status
    integer :: ierror
    status%MPI_SOURCE = int(extra_state)
    status%MPI_TAG = 77
    status%MPI_ERROR = MPI_SUCCESS
    call MPI_Status_set_elements(status, MPI_INTEGER, 5)
    call MPI_Status_set_cancelled(status, .false.)
    ierror = MPI_SUCCESS
  end subroutine grequest_query

  subroutine grequest_free(extra_state, ierror)
    integer(kind=MPI_ADDRESS_KIND) :: extra_state
    integer :: ierror
    call expect(extra_state == 123, 'grequest free extra_state')
    grequest_frees = grequest_frees + 1
    ierror = MPI_SUCCESS
  end subroutine grequest_free

  subroutine grequest_cancel(extra_state, complete, ierror)
    integer(kind=MPI_ADDRESS_KIND) :: extra_state
    logical :: complete
    integer :: ierror
    call expect(extra_state == 123, 'grequest cancel extra_state')
    call expect(.not. complete, 'grequest cancelled before completion')
    ierror = MPI_SUCCESS
  end subroutine grequest_cancel

  ! Element-wise x * y on INTEGERs: commutative.
  subroutine times(invec, inoutvec, len, datatype)
    use, intrinsic :: iso_c_binding, only: c_ptr, c_f_pointer
    type(c_ptr), value :: invec, inoutvec
    integer :: len
    type(MPI_Datatype) :: datatype
    integer, pointer :: a(:), b(:)
    call expect(datatype == MPI_INTEGER, 'times datatype')
    call c_f_pointer(invec, a, [len])
    call c_f_pointer(inoutvec, b, [len])
    b = a * b
  end subroutine times
end module f08_more_state

program f08_more
  use mpi_f08
  use f08_more_state
  implicit none
  integer :: rank, size, ierr

  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, size)
  call expect(size >= 2 .and. size <= 4, '2 to 4 ranks')
  call environment()
  call communicators()
  call attributes()
  call groups()
  call errors()
  call datatypes()
  call packing()
  call collectives()
  call every_collective_form()
  call point_to_point()
  call generalized()
  call topologies()
  call infos()
  call mpi4_and_kinds()
  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  call expect(ierr == MPI_SUCCESS, 'last barrier')
  if (rank == 0) print '(a)', 'fortran_f08_more: ok'
  call MPI_Finalize()

contains

  ! MPI-4's Isendrecv (a ring), Isendrecv_replace, Info_create_env, the buffer flushes, and Fortran's
  ! kind types.
  subroutine mpi4_and_kinds()
    type(MPI_Request) :: request
    type(MPI_Status) :: status
    type(MPI_Datatype) :: t
    type(MPI_Info) :: env
    type(MPI_Status) :: back
    integer :: got(3), mine(3), right, left, n, count, status_f(MPI_STATUS_SIZE), ierror
    right = mod(rank + 1, size)
    left = mod(rank + size - 1, size)
    mine = [rank, 10 * rank, 100 * rank]
    got = -1
    call MPI_Isendrecv(mine, 3, MPI_INTEGER, right, 41, got, 3, MPI_INTEGER, left, 41, MPI_COMM_WORLD, request)
    call MPI_Wait(request, status)
    call expect(all(got == [left, 10 * left, 100 * left]) .and. status%MPI_SOURCE == left, 'isendrecv')
    call MPI_Isendrecv_replace(mine, 3, MPI_INTEGER, right, 42, left, 42, MPI_COMM_WORLD, request)
    call MPI_Wait(request, status)
    call MPI_Get_count(status, MPI_INTEGER, count)
    call expect(all(mine == [left, 10 * left, 100 * left]) .and. count == 3, 'isendrecv_replace')
    ! The status as `use mpi`'s INTEGER array and back (MPI-4.0 section 19.3.5): nothing lost.
    call MPI_Status_f082f(status, status_f, ierror)
    call expect(ierror == MPI_SUCCESS .and. status_f(MPI_SOURCE) == left .and. status_f(MPI_TAG) == 42, &
                'status_f082f')
    call MPI_Status_f2f08(status_f, back)
    call MPI_Get_count(back, MPI_INTEGER, count)
    call expect(back%MPI_SOURCE == left .and. back%MPI_TAG == 42 .and. count == 3, 'status_f2f08')
    call MPI_Status_f082f(MPI_STATUS_IGNORE, status_f, ierror)
    call expect(ierror == MPI_ERR_ARG, 'status_f082f of MPI_STATUS_IGNORE')
    call MPI_F_sync_reg(mine)
    call expect(all(mine == [left, 10 * left, 100 * left]), 'f_sync_reg keeps the buffer')
    call MPI_Info_create_env(env)
    call MPI_Info_get_nkeys(env, n)
    call expect(n > 0, 'info_create_env has keys')
    call MPI_Info_free(env)
    call MPI_Buffer_flush()
    call MPI_Buffer_iflush(request)
    call MPI_Wait(request, MPI_STATUS_IGNORE)
    call MPI_Type_match_size(MPI_TYPECLASS_INTEGER, 4, t)
    call MPI_Type_size(t, n)
    call expect(n == 4, 'type_match_size integer 4')
    call MPI_Type_create_f90_real(15, MPI_UNDEFINED, t)
    call MPI_Type_size(t, n)
    call expect(n == 8, 'type_create_f90_real(15) is 8 bytes')
    ! C's datatypes are Fortran constants too, synonyms included.
    call MPI_Type_size(MPI_LONG_LONG, n)
    call expect(n == 8 .and. MPI_LONG_LONG == MPI_LONG_LONG_INT, 'MPI_LONG_LONG from Fortran')
    call MPI_Type_create_f90_integer(9, t)
    call MPI_Type_size(t, n)
    call expect(n == 8 .or. n == 4, 'type_create_f90_integer(9)')
  end subroutine mpi4_and_kinds

  subroutine environment()
    integer :: provided, version, subversion, level
    logical :: flag
    integer(kind=MPI_ADDRESS_KIND) :: a
    call MPI_Query_thread(provided)
    call expect(provided >= MPI_THREAD_SINGLE .and. provided <= MPI_THREAD_MULTIPLE, 'query_thread')
    call MPI_Is_thread_main(flag)
    call expect(flag, 'is_thread_main')
    call MPI_Get_version(version, subversion)
    call expect(version == MPI_VERSION .and. subversion == MPI_SUBVERSION, 'get_version')
    a = MPI_Aint_add(1000_MPI_ADDRESS_KIND, 24_MPI_ADDRESS_KIND)
    call expect(a == 1024, 'aint_add')
    call expect(MPI_Aint_diff(a, 1000_MPI_ADDRESS_KIND) == 24, 'aint_diff')
    call expect(MPI_Wtick() > 0.0d0, 'wtick')
    level = 1
    call MPI_Pcontrol(level)
    call MPI_Finalized(flag)
    call expect(.not. flag, 'finalized')
    names: block
      character(len=MPI_MAX_PROCESSOR_NAME) :: host
      character(len=MPI_MAX_LIBRARY_VERSION_STRING) :: library
      integer :: length
      call MPI_Get_processor_name(host, length)
      call expect(length > 0 .and. len_trim(host) == length, 'get_processor_name')
      call MPI_Get_library_version(library, length)
      call expect(length > 0, 'get_library_version')
    end block names
  end subroutine environment

  subroutine communicators()
    type(MPI_Comm) :: half, dup, created, grouped, idup, inter, merged, other
    type(MPI_Group) :: world_group, reversed, remote_group
    type(MPI_Request) :: request
    integer :: ranks(4), i, result, n, total, remote
    logical :: flag
    call MPI_Comm_split(MPI_COMM_WORLD, mod(rank, 2), rank, half)
    call MPI_Comm_size(half, n)
    call expect(n == (size + 1 - mod(rank, 2)) / 2, 'split size')
    call MPI_Comm_compare(half, MPI_COMM_WORLD, result)
    call expect(result == MPI_UNEQUAL, 'split compare')
    call MPI_Comm_dup(MPI_COMM_WORLD, dup)
    call MPI_Comm_compare(dup, MPI_COMM_WORLD, result)
    call expect(result == MPI_CONGRUENT, 'dup compare')
    ! MPI_Comm_create and _create_group with the ranks reversed.
    call MPI_Comm_group(MPI_COMM_WORLD, world_group)
    ranks(1:size) = [(size - i, i = 1, size)]
    call MPI_Group_incl(world_group, size, ranks, reversed)
    call MPI_Comm_create(MPI_COMM_WORLD, reversed, created)
    call MPI_Comm_rank(created, i)
    call expect(i == size - 1 - rank, 'comm_create rank')
    call MPI_Comm_compare(created, MPI_COMM_WORLD, result)
    call expect(result == MPI_SIMILAR, 'comm_create compare')
    call MPI_Comm_create_group(MPI_COMM_WORLD, reversed, 5, grouped)
    call MPI_Comm_rank(grouped, i)
    call expect(i == size - 1 - rank, 'comm_create_group rank')
    call MPI_Comm_idup(grouped, idup, request)
    call MPI_Wait(request, MPI_STATUS_IGNORE)
    call expect(request == MPI_REQUEST_NULL, 'idup request freed')
    call MPI_Comm_compare(idup, grouped, result)
    call expect(result == MPI_CONGRUENT, 'idup compare')
    call MPI_Comm_test_inter(idup, flag)
    call expect(.not. flag, 'intracomm')
    ! Even and odd ranks' halves joined: the leaders are world ranks 0 and 1.
    call MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, 1 - mod(rank, 2), 9, inter)
    call MPI_Comm_test_inter(inter, flag)
    call expect(flag, 'intercomm')
    call MPI_Comm_remote_size(inter, remote)
    call expect(remote == size - n, 'remote size')
    call MPI_Comm_remote_group(inter, remote_group)
    call MPI_Group_size(remote_group, i)
    call expect(i == remote, 'remote group')
    call MPI_Group_free(remote_group)
    call MPI_Intercomm_merge(inter, mod(rank, 2) == 1, merged)
    call MPI_Comm_size(merged, total)
    call MPI_Comm_rank(merged, i)
    call expect(total == size .and. i == merge((size + 1) / 2 + rank / 2, rank / 2, mod(rank, 2) == 1), &
                'merge: the high group last')
    call MPI_Comm_idup_with_info(merged, MPI_INFO_NULL, other, request)
    call MPI_Wait(request, MPI_STATUS_IGNORE)
    call MPI_Comm_size(other, i)
    call expect(i == size, 'idup_with_info')
    call MPI_Comm_disconnect(other)
    call expect(other == MPI_COMM_NULL, 'disconnect')
    call MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, other)
    call MPI_Comm_size(other, i)
    call expect(i >= 1 .and. i <= size, 'split_type')
    call MPI_Comm_free(other)
    call MPI_Comm_free(merged)
    call MPI_Comm_free(inter)
    call MPI_Comm_free(idup)
    call MPI_Comm_free(grouped)
    call MPI_Comm_free(created)
    call MPI_Group_free(reversed)
    call MPI_Group_free(world_group)
    call MPI_Comm_free(dup)
    call MPI_Comm_free(half)
    call expect(half == MPI_COMM_NULL, 'comm_free sets null')
  end subroutine communicators

  subroutine attributes()
    type(MPI_Comm) :: a, b
    type(MPI_Datatype) :: t, u
    integer :: key, dup_key, type_key, old_key, old_value
    integer(kind=MPI_ADDRESS_KIND) :: extra, value
    logical :: flag
    extra = 7
    call MPI_Comm_create_keyval(copy_plus_one, count_delete, key, extra)
    call MPI_Comm_create_keyval(MPI_COMM_DUP_FN, MPI_COMM_NULL_DELETE_FN, dup_key, extra)
    call MPI_Comm_dup(MPI_COMM_WORLD, a)
    call MPI_Comm_set_attr(a, key, 41_MPI_ADDRESS_KIND)
    call MPI_Comm_set_attr(a, dup_key, 1234567890123_MPI_ADDRESS_KIND)
    call MPI_Comm_dup(a, b)
    call expect(copies == 1, 'copy callback ran')
    call MPI_Comm_get_attr(b, key, value, flag)
    call expect(flag .and. value == 42, 'copied attribute')
    call MPI_Comm_get_attr(b, dup_key, value, flag)
    call expect(flag .and. value == 1234567890123_MPI_ADDRESS_KIND, 'MPI_COMM_DUP_FN')
    call MPI_Comm_delete_attr(b, key)
    call expect(deletes == 1, 'delete callback on delete_attr')
    call MPI_Comm_get_attr(b, key, value, flag)
    call expect(.not. flag, 'attribute deleted')
    call MPI_Comm_free(a)
    call expect(deletes == 2, 'delete callback on free')
    call MPI_Comm_free(b)
    call MPI_Comm_free_keyval(key)
    call expect(key == MPI_KEYVAL_INVALID, 'free_keyval')
    call MPI_Comm_free_keyval(dup_key)
    call MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, value, flag)
    call expect(flag .and. value >= 32767, 'MPI_TAG_UB')
    ! Datatype attributes.
    call MPI_Type_create_keyval(MPI_TYPE_DUP_FN, MPI_TYPE_NULL_DELETE_FN, type_key, extra)
    call MPI_Type_contiguous(2, MPI_INTEGER, t)
    call MPI_Type_set_attr(t, type_key, 99_MPI_ADDRESS_KIND)
    call MPI_Type_dup(t, u)
    call MPI_Type_get_attr(u, type_key, value, flag)
    call expect(flag .and. value == 99, 'type attribute duplicated')
    call MPI_Type_delete_attr(u, type_key)
    call MPI_Type_get_attr(u, type_key, value, flag)
    call expect(.not. flag, 'type attribute deleted')
    call MPI_Type_free(u)
    call MPI_Type_free(t)
    call MPI_Type_free_keyval(type_key)
    ! MPI-1's names.
    call MPI_Keyval_create(MPI_DUP_FN, MPI_NULL_DELETE_FN, old_key, 0)
    call MPI_Attr_put(MPI_COMM_WORLD, old_key, 17)
    call MPI_Attr_get(MPI_COMM_WORLD, old_key, old_value, flag)
    call expect(flag .and. old_value == 17, 'attr_get')
    call MPI_Attr_delete(MPI_COMM_WORLD, old_key)
    call MPI_Attr_get(MPI_COMM_WORLD, old_key, old_value, flag)
    call expect(.not. flag, 'attr_delete')
    call MPI_Keyval_free(old_key)
  end subroutine attributes

  subroutine groups()
    type(MPI_Group) :: world, evens, odds, all, none, low, rest, first
    integer :: n, result, ranges(3, 1), in(4), out(4), i
    call MPI_Comm_group(MPI_COMM_WORLD, world)
    ranges(:, 1) = [0, size - 1, 2]
    call MPI_Group_range_incl(world, 1, ranges, evens)
    call MPI_Group_range_excl(world, 1, ranges, odds)
    call MPI_Group_size(evens, n)
    call expect(n == (size + 1) / 2, 'range_incl')
    call MPI_Group_size(odds, n)
    call expect(n == size / 2, 'range_excl')
    call MPI_Group_union(odds, evens, all)
    call MPI_Group_compare(all, world, result)
    call expect(result == MPI_SIMILAR, 'union similar')
    call MPI_Group_intersection(odds, evens, none)
    call MPI_Group_size(none, n)
    call expect(n == 0, 'intersection empty')
    call MPI_Group_difference(world, odds, rest)
    call MPI_Group_compare(rest, evens, result)
    call expect(result == MPI_IDENT, 'difference')
    call MPI_Group_excl(world, 1, [0], low)
    call MPI_Group_size(low, n)
    call expect(n == size - 1, 'group_excl')
    call MPI_Group_incl(world, 1, [size - 1], first)
    call MPI_Group_rank(first, n)
    call expect(n == merge(0, MPI_UNDEFINED, rank == size - 1), 'group_rank')
    in(1:size) = [(i, i = 0, size - 1)]
    call MPI_Group_translate_ranks(world, size, in, all, out)
    ! all = odds then evens
    call expect(out(1) == size / 2 .and. out(2) == 0, 'translate_ranks')
    call MPI_Group_free(first)
    call MPI_Group_free(low)
    call MPI_Group_free(rest)
    call MPI_Group_free(none)
    call MPI_Group_free(all)
    call MPI_Group_free(odds)
    call MPI_Group_free(evens)
    call MPI_Group_free(world)
    call expect(world == MPI_GROUP_NULL, 'group_free sets null')
  end subroutine groups

  subroutine errors()
    type(MPI_Errhandler) :: handler, got
    type(MPI_Comm) :: comm
    integer :: new_class, new_code, length, class
    character(len=MPI_MAX_ERROR_STRING) :: text
    call MPI_Comm_dup(MPI_COMM_WORLD, comm)
    call MPI_Comm_create_errhandler(record_error, handler)
    call MPI_Comm_set_errhandler(comm, handler)
    call MPI_Comm_get_errhandler(comm, got)
    call expect(got == handler, 'get_errhandler')
    call MPI_Errhandler_free(got)
    call MPI_Add_error_class(new_class)
    call MPI_Add_error_code(new_class, new_code)
    call MPI_Add_error_string(new_code, 'f08 says no')
    call MPI_Error_string(new_code, text, length)
    call expect(text(1:length) == 'f08 says no', 'error string')
    call MPI_Error_class(new_code, class)
    call expect(class == new_class, 'error class')
    call MPI_Comm_call_errhandler(comm, new_code)
    call expect(handler_calls == 1 .and. last_code == new_code, 'user handler called')
    ! A real error: a rank out of range.
    call MPI_Send([1], 1, MPI_INTEGER, size + 5, 0, comm)
    call expect(handler_calls == 2, 'user handler on a real error')
    call MPI_Error_class(last_code, class)
    call expect(class == MPI_ERR_RANK, 'the real error')
    call MPI_Errhandler_free(handler)
    call MPI_Comm_free(comm)
  end subroutine errors

  subroutine datatypes()
    type(MPI_Datatype) :: resized
    type(MPI_Datatype) :: vector, indexed, hvector, hindexed, one_block, hblock, sub, darray, struct, copy
    integer :: ni, na, nd, combiner, ints(3), n, matrix(4, 4), got(4), length, i
    integer(kind=MPI_ADDRESS_KIND) :: addrs(1), lb, extent, true_lb, true_extent
    integer(kind=MPI_COUNT_KIND) :: size_x, lb_x, extent_x
    type(MPI_Datatype) :: types(1)
    character(len=MPI_MAX_OBJECT_NAME) :: name
    type(MPI_Status) :: status
    call MPI_Type_vector(3, 2, 5, MPI_INTEGER, vector)
    call MPI_Type_get_envelope(vector, ni, na, nd, combiner)
    call expect(combiner == MPI_COMBINER_VECTOR .and. ni == 3 .and. na == 0 .and. nd == 1, 'envelope')
    call MPI_Type_get_contents(vector, 3, 0, 1, ints, addrs, types)
    call expect(all(ints == [3, 2, 5]) .and. types(1) == MPI_INTEGER, 'contents')
    call MPI_Type_size_x(vector, size_x)
    call expect(size_x == 24, 'size_x')
    call MPI_Type_get_extent_x(vector, lb_x, extent_x)
    call expect(lb_x == 0 .and. extent_x == 48, 'extent_x')
    call MPI_Type_set_name(vector, 'three pairs')
    call MPI_Type_get_name(vector, name, length)
    call expect(name(1:length) == 'three pairs', 'type name')
    call MPI_Type_indexed(2, [1, 2], [0, 3], MPI_INTEGER, indexed)
    call MPI_Type_size(indexed, n)
    call expect(n == 12, 'indexed size')
    call MPI_Type_create_hvector(2, 1, 16_MPI_ADDRESS_KIND, MPI_INTEGER, hvector)
    call MPI_Type_get_extent(hvector, lb, extent)
    call expect(extent == 20, 'hvector extent')
    call MPI_Type_create_hindexed(2, [1, 1], [4_MPI_ADDRESS_KIND, 12_MPI_ADDRESS_KIND], MPI_INTEGER, hindexed)
    call MPI_Type_get_true_extent(hindexed, true_lb, true_extent)
    call expect(true_lb == 4 .and. true_extent == 12, 'hindexed true extent')
    call MPI_Type_get_true_extent_x(hindexed, lb_x, extent_x)
    call expect(lb_x == 4 .and. extent_x == 12, 'true_extent_x')
    call MPI_Type_create_indexed_block(2, 2, [0, 4], MPI_INTEGER, one_block)
    call MPI_Type_size(one_block, n)
    call expect(n == 16, 'indexed_block')
    call MPI_Type_create_hindexed_block(2, 1, [0_MPI_ADDRESS_KIND, 8_MPI_ADDRESS_KIND], MPI_INTEGER, hblock)
    call MPI_Type_get_extent(hblock, lb, extent)
    call expect(extent == 12, 'hindexed_block')
    call MPI_Type_create_struct(1, [2], [0_MPI_ADDRESS_KIND], [MPI_DOUBLE_PRECISION], struct)
    call MPI_Type_size(struct, n)
    call expect(n == 16, 'struct')
    call MPI_Type_create_darray(2, 1, 1, [8], [MPI_DISTRIBUTE_BLOCK], [MPI_DISTRIBUTE_DFLT_DARG], [2], &
                                MPI_ORDER_FORTRAN, MPI_INTEGER, darray)
    call MPI_Type_get_true_extent(darray, true_lb, true_extent)
    call expect(true_lb == 16 .and. true_extent == 16, 'darray: the second block')
    call MPI_Get_address(matrix(1, 1), lb)
    call MPI_Get_address(matrix(1, 2), extent)
    call expect(MPI_Aint_diff(extent, lb) == 16, 'get_address')
    call MPI_Type_create_resized(MPI_INTEGER, 0_MPI_ADDRESS_KIND, 16_MPI_ADDRESS_KIND, resized)
    call MPI_Type_get_extent(resized, lb, extent)
    call expect(lb == 0 .and. extent == 16, 'create_resized')
    call MPI_Type_free(resized)
    call MPI_Type_dup(vector, copy)
    call MPI_Type_get_envelope(copy, ni, na, nd, combiner)
    call expect(combiner == MPI_COMBINER_DUP, 'dup envelope')
    ! The 2x2 block at (2,3) of a 4x4 matrix, sent to oneself.
    call MPI_Type_create_subarray(2, [4, 4], [2, 2], [1, 2], MPI_ORDER_FORTRAN, MPI_INTEGER, sub)
    call MPI_Type_commit(sub)
    matrix = reshape([(i, i = 1, 16)], [4, 4])
    call MPI_Sendrecv(matrix, 1, sub, rank, 3, got, 4, MPI_INTEGER, rank, 3, MPI_COMM_WORLD, status)
    call expect(all(got == [10, 11, 14, 15]), 'subarray sent')
    call MPI_Get_elements_x(status, MPI_INTEGER, size_x)
    call expect(size_x == 4, 'get_elements_x')
    call MPI_Type_free(sub)
    call MPI_Type_free(copy)
    call MPI_Type_free(darray)
    call MPI_Type_free(struct)
    call MPI_Type_free(hblock)
    call MPI_Type_free(one_block)
    call MPI_Type_free(hindexed)
    call MPI_Type_free(hvector)
    call MPI_Type_free(indexed)
    call MPI_Type_free(vector)
  end subroutine datatypes

  subroutine packing()
    character(len=1) :: packed(64)
    integer :: position, ints(3), back(3), bytes
    double precision :: x, y
    integer(kind=MPI_ADDRESS_KIND) :: position_x, external_size
    ints = [rank, -2, 300000]
    x = 2.5d0
    call MPI_Pack_size(3, MPI_INTEGER, MPI_COMM_WORLD, bytes)
    call expect(bytes >= 12, 'pack_size')
    position = 0
    call MPI_Pack(ints, 3, MPI_INTEGER, packed, 64, position, MPI_COMM_WORLD)
    call MPI_Pack(x, 1, MPI_DOUBLE_PRECISION, packed, 64, position, MPI_COMM_WORLD)
    call expect(position == 20, 'pack position')
    position = 0
    call MPI_Unpack(packed, 64, position, back, 3, MPI_INTEGER, MPI_COMM_WORLD)
    call MPI_Unpack(packed, 64, position, y, 1, MPI_DOUBLE_PRECISION, MPI_COMM_WORLD)
    call expect(all(back == ints) .and. y == x .and. position == 20, 'unpack')
    call MPI_Pack_external_size('external32', 3, MPI_INTEGER, external_size)
    call expect(external_size == 12, 'pack_external_size')
    position_x = 0
    call MPI_Pack_external('external32', ints, 3, MPI_INTEGER, packed, 64_MPI_ADDRESS_KIND, position_x)
    call expect(position_x == 12 .and. ichar(packed(8)) == 254 .and. ichar(packed(5)) == 255, &
                'external32 is big-endian')
    back = 0
    position_x = 0
    call MPI_Unpack_external('external32', packed, 12_MPI_ADDRESS_KIND, position_x, back, 3, MPI_INTEGER)
    call expect(all(back == ints) .and. position_x == 12, 'unpack_external')
  end subroutine packing

  subroutine collectives()
    integer :: counts(4), displs(4), send(8), recv(16), i, n, expected(16), value, sum
    integer :: sendw(4), recvw(4), wcounts(4), wdispls(4), scan_in, scan_out, one_block(1)
    type(MPI_Datatype) :: wtypes(4)
    type(MPI_Request) :: requests(6), persistent(3)
    type(MPI_Status) :: statuses(6)
    type(MPI_Op) :: op
    logical :: commute
    integer :: x(2), y(2)
    ! Igatherv to rank 0: rank r sends r+1 copies of r.
    counts(1:size) = [(i, i = 1, size)]
    displs(1:size) = [(i * (i - 1) / 2, i = 1, size)]
    send = rank
    recv = -1
    call MPI_Igatherv(send, rank + 1, MPI_INTEGER, recv, counts, displs, MPI_INTEGER, 0, MPI_COMM_WORLD, &
                      requests(1))
    call MPI_Wait(requests(1), statuses(1))
    n = size * (size + 1) / 2
    if (rank == 0) then
      expected(1:n) = [((i - 1, value = 1, i), i = 1, size)]
      call expect(all(recv(1:n) == expected(1:n)), 'igatherv')
    end if
    ! Iscatterv back, Iallgatherv, Ialltoall, Iallgather: all in flight together.
    recv = -1
    call MPI_Iscatterv(expected, counts, displs, MPI_INTEGER, recv, rank + 1, MPI_INTEGER, 0, &
                       MPI_COMM_WORLD, requests(1))
    call MPI_Wait(requests(1), MPI_STATUS_IGNORE)
    call expect(all(recv(1:rank + 1) == rank), 'iscatterv')
    send(1) = rank * 10
    call MPI_Iallgather(send(1:1), 1, MPI_INTEGER, recv(1:4), 1, MPI_INTEGER, MPI_COMM_WORLD, requests(1))
    send(2:2 + size - 1) = [(rank * 100 + i, i = 0, size - 1)]
    call MPI_Ialltoall(send(2:), 1, MPI_INTEGER, recv(5:), 1, MPI_INTEGER, MPI_COMM_WORLD, requests(2))
    scan_in = rank + 1
    call MPI_Iscan(scan_in, scan_out, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, requests(3))
    call MPI_Waitall(3, requests, statuses)
    call expect(all(recv(1:size) == [(i * 10, i = 0, size - 1)]), 'iallgather')
    call expect(all(recv(5:4 + size) == [(i * 100 + rank, i = 0, size - 1)]), 'ialltoall')
    call expect(scan_out == (rank + 1) * (rank + 2) / 2, 'iscan')
    ! Iexscan, Ireduce_scatter, Ireduce_scatter_block, completed by Testsome.
    call MPI_Iexscan(scan_in, scan_out, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, requests(1))
    send(1:size) = [(i, i = 1, size)]
    counts(1:size) = 1
    call MPI_Ireduce_scatter(send, recv(1:1), counts, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, requests(2))
    call MPI_Ireduce_scatter_block(send, recv(2:2), 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, requests(3))
    sum = 0
    do while (sum < 3)
      call MPI_Testsome(3, requests, n, displs, statuses)
      if (n /= MPI_UNDEFINED) sum = sum + n
    end do
    call expect(all(requests(1:3) == MPI_REQUEST_NULL), 'testsome frees')
    if (rank > 0) call expect(scan_out == rank * (rank + 1) / 2, 'iexscan')
    call expect(recv(1) == (rank + 1) * size .and. recv(2) == (rank + 1) * size, 'ireduce_scatter')
    ! Ialltoallv and Alltoallw: one INTEGER to each rank.
    send(1:size) = [(rank * 10 + i, i = 0, size - 1)]
    displs(1:size) = [(i, i = 0, size - 1)]
    call MPI_Ialltoallv(send, counts, displs, MPI_INTEGER, recv, counts, displs, MPI_INTEGER, &
                        MPI_COMM_WORLD, requests(1))
    call MPI_Waitany(1, requests, n, statuses(1))
    call expect(n == 1 .and. all(recv(1:size) == [(i * 10 + rank, i = 0, size - 1)]), 'ialltoallv')
    sendw(1:size) = [(rank * 10 + i, i = 0, size - 1)]
    wcounts = 1
    wdispls(1:size) = [(4 * i, i = 0, size - 1)]
    wtypes = MPI_INTEGER
    call MPI_Alltoallw(sendw, wcounts, wdispls, wtypes, recvw, wcounts, wdispls, wtypes, MPI_COMM_WORLD)
    call expect(all(recvw(1:size) == [(i * 10 + rank, i = 0, size - 1)]), 'alltoallw')
    ! A user op, Reduce_local, Op_commutative, Reduce_scatter (blocking).
    call MPI_Op_create(times, .true., op)
    call MPI_Op_commutative(op, commute)
    call expect(commute, 'op_commutative')
    x = [2, 3]
    y = [5, 7]
    call MPI_Reduce_local(x, y, 2, MPI_INTEGER, op)
    call expect(all(y == [10, 21]), 'reduce_local')
    send(1:size) = 2
    call MPI_Reduce_scatter(send, one_block, counts, MPI_INTEGER, op, MPI_COMM_WORLD)
    call expect(one_block(1) == 2**size, 'reduce_scatter with a user op')
    call MPI_Op_free(op)
    ! Persistent collectives (MPI-4.0), each started twice. The starts read and the waits write the
    ! buffers behind the compiler's back: MPI_F_sync_reg (MPI-3.1 section 17.1.17) keeps an optimised
    ! build from holding them in registers across the calls.
    call MPI_Allreduce_init(scan_in, scan_out, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &
                            persistent(1))
    call MPI_Bcast_init(value, 1, MPI_INTEGER, 0, MPI_COMM_WORLD, MPI_INFO_NULL, persistent(2))
    call MPI_Barrier_init(MPI_COMM_WORLD, MPI_INFO_NULL, persistent(3))
    do i = 1, 2
      scan_in = rank + i
      value = merge(i * 11, -1, rank == 0)
      call MPI_F_sync_reg(scan_in)
      call MPI_F_sync_reg(value)
      call MPI_Startall(3, persistent)
      call MPI_Waitall(3, persistent, MPI_STATUSES_IGNORE)
      call MPI_F_sync_reg(scan_out)
      call MPI_F_sync_reg(value)
      call expect(scan_out == size * (size - 1) / 2 + size * i, 'allreduce_init')
      call expect(value == i * 11, 'bcast_init')
    end do
    do i = 1, 3
      call MPI_Request_free(persistent(i))
    end do
  end subroutine collectives

  ! The collectives fortran_f08.f90 and collectives() leave out, blocking, nonblocking and persistent
  ! alike: each rank gives rank+1 (gathers, reductions) or rank*10+i to rank i (all-to-all), rank 0
  ! scatters 10*(i+1) to rank i; the neighbourhood ones run on a distributed-graph ring made by
  ! MPI_Dist_graph_create.
  subroutine every_collective_form()
    ! The buffers nonblocking and persistent forms write while `complete` waits, which does not name
    ! them: VOLATILE (MPI-3.1 section 17.1.17) keeps an optimised build from reading them before then.
    integer, volatile :: r(4), value
    integer :: s(4), ones(4), displs(4), bytes(4), i, form, mine
    integer :: gathered(4), exchanged(4), tens(4), left, right, sources(2), destinations(2), sw(2), dw(2)
    logical :: weighted
    integer(kind=MPI_ADDRESS_KIND) :: neighbour_bytes(2)
    type(MPI_Datatype) :: types(4)
    type(MPI_Request) :: request
    type(MPI_Comm) :: ring
    ones = 1
    displs = [0, 1, 2, 3]
    bytes = 4 * displs
    types = MPI_INTEGER
    mine = rank + 1
    gathered = 0
    gathered(1:size) = [(i, i = 1, size)]
    s(1:size) = [(rank * 10 + i, i = 0, size - 1)]
    exchanged(1:size) = [(i * 10 + rank, i = 0, size - 1)]
    tens = 10 * gathered
    do form = 1, 3  ! blocking, nonblocking, persistent
      r = -1
      select case (form)
      case (1)
        call MPI_Allgather(mine, 1, MPI_INTEGER, r, 1, MPI_INTEGER, MPI_COMM_WORLD)
      case (2)
        call MPI_Iallgatherv(mine, 1, MPI_INTEGER, r, ones, displs, MPI_INTEGER, MPI_COMM_WORLD, request)
      case (3)
        call MPI_Allgather_init(mine, 1, MPI_INTEGER, r, 1, MPI_INTEGER, MPI_COMM_WORLD, MPI_INFO_NULL, request)
      end select
      call complete(form, request)
      call expect(all(r(1:size) == gathered(1:size)), 'allgather forms')
      r = -1
      select case (form)
      case (1)
        call MPI_Allgatherv(mine, 1, MPI_INTEGER, r, ones, displs, MPI_INTEGER, MPI_COMM_WORLD)
      case (2)
        call MPI_Igather(mine, 1, MPI_INTEGER, r, 1, MPI_INTEGER, 0, MPI_COMM_WORLD, request)
      case (3)
        call MPI_Allgatherv_init(mine, 1, MPI_INTEGER, r, ones, displs, MPI_INTEGER, MPI_COMM_WORLD, &
                                 MPI_INFO_NULL, request)
      end select
      call complete(form, request)
      if (form /= 2 .or. rank == 0) call expect(all(r(1:size) == gathered(1:size)), 'allgatherv, igather')
      r = -1
      select case (form)
      case (1)
        call MPI_Gather(mine, 1, MPI_INTEGER, r, 1, MPI_INTEGER, 0, MPI_COMM_WORLD)
      case (2)
        call MPI_Igatherv(mine, 1, MPI_INTEGER, r, ones, displs, MPI_INTEGER, 0, MPI_COMM_WORLD, request)
      case (3)
        call MPI_Gather_init(mine, 1, MPI_INTEGER, r, 1, MPI_INTEGER, 0, MPI_COMM_WORLD, MPI_INFO_NULL, request)
      end select
      call complete(form, request)
      if (rank == 0) call expect(all(r(1:size) == gathered(1:size)), 'gather forms')
      r = -1
      select case (form)
      case (1)
        call MPI_Gatherv(mine, 1, MPI_INTEGER, r, ones, displs, MPI_INTEGER, 0, MPI_COMM_WORLD)
      case (2, 3)
        call MPI_Gatherv_init(mine, 1, MPI_INTEGER, r, ones, displs, MPI_INTEGER, 0, MPI_COMM_WORLD, &
                              MPI_INFO_NULL, request)
      end select
      if (form > 1) call complete(3, request)
      if (rank == 0) call expect(all(r(1:size) == gathered(1:size)), 'gatherv forms')
      ! Scatters from rank 0: 10, 20, 30 ...
      value = -1
      select case (form)
      case (1)
        call MPI_Scatter(tens, 1, MPI_INTEGER, value, 1, MPI_INTEGER, 0, MPI_COMM_WORLD)
      case (2)
        call MPI_Iscatter(tens, 1, MPI_INTEGER, value, 1, MPI_INTEGER, 0, MPI_COMM_WORLD, request)
      case (3)
        call MPI_Scatter_init(tens, 1, MPI_INTEGER, value, 1, MPI_INTEGER, 0, MPI_COMM_WORLD, &
                              MPI_INFO_NULL, request)
      end select
      call complete(form, request)
      call expect(value == 10 * (rank + 1), 'scatter forms')
      value = -1
      select case (form)
      case (1, 2)
        call MPI_Scatterv(tens, ones, displs, MPI_INTEGER, value, 1, MPI_INTEGER, 0, MPI_COMM_WORLD)
      case (3)
        call MPI_Scatterv_init(tens, ones, displs, MPI_INTEGER, value, 1, MPI_INTEGER, 0, &
                               MPI_COMM_WORLD, MPI_INFO_NULL, request)
      end select
      if (form == 3) call complete(form, request)
      call expect(value == 10 * (rank + 1), 'scatterv forms')
      ! All-to-all: rank*10+i to rank i.
      r = -1
      select case (form)
      case (1)
        call MPI_Alltoall(s, 1, MPI_INTEGER, r, 1, MPI_INTEGER, MPI_COMM_WORLD)
      case (2)
        call MPI_Ialltoallw(s, ones, bytes, types, r, ones, bytes, types, MPI_COMM_WORLD, request)
      case (3)
        call MPI_Alltoall_init(s, 1, MPI_INTEGER, r, 1, MPI_INTEGER, MPI_COMM_WORLD, MPI_INFO_NULL, request)
      end select
      call complete(form, request)
      call expect(all(r(1:size) == exchanged(1:size)), 'alltoall forms')
      r = -1
      select case (form)
      case (1, 2)
        call MPI_Alltoallv(s, ones, displs, MPI_INTEGER, r, ones, displs, MPI_INTEGER, MPI_COMM_WORLD)
      case (3)
        call MPI_Alltoallv_init(s, ones, displs, MPI_INTEGER, r, ones, displs, MPI_INTEGER, MPI_COMM_WORLD, &
                                MPI_INFO_NULL, request)
        call complete(form, request)
        call expect(all(r(1:size) == exchanged(1:size)), 'alltoallv_init')
        r = -1
        call MPI_Alltoallw_init(s, ones, bytes, types, r, ones, bytes, types, MPI_COMM_WORLD, &
                                MPI_INFO_NULL, request)
      end select
      if (form == 3) call complete(form, request)
      call expect(all(r(1:size) == exchanged(1:size)), 'alltoallv, alltoallw_init')
      ! Reductions of rank+1.
      value = -1
      select case (form)
      case (1)
        call MPI_Scan(mine, value, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD)
      case (2, 3)
        call MPI_Scan_init(mine, value, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, request)
        call complete(3, request)
      end select
      call expect(value == (rank + 1) * (rank + 2) / 2, 'scan forms')
      select case (form)
      case (1)
        call MPI_Exscan(mine, value, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD)
      case (2, 3)
        call MPI_Exscan_init(mine, value, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, request)
        call complete(3, request)
      end select
      if (rank > 0) call expect(value == rank * (rank + 1) / 2, 'exscan forms')
      value = -1
      select case (form)
      case (1)
        call MPI_Iallreduce(mine, value, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, request)
      case (2)
        call MPI_Ireduce(mine, value, 1, MPI_INTEGER, MPI_SUM, 0, MPI_COMM_WORLD, request)
      case (3)
        call MPI_Reduce_init(mine, value, 1, MPI_INTEGER, MPI_SUM, 0, MPI_COMM_WORLD, MPI_INFO_NULL, request)
      end select
      call complete(max(form, 2), request)
      if (form == 1 .or. rank == 0) call expect(value == size * (size + 1) / 2, 'reduce forms')
      value = -1
      select case (form)
      case (1)
        call MPI_Reduce_scatter_block(gathered, value, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD)
      case (2)
        call MPI_Reduce_scatter_block_init(gathered, value, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, &
                                           MPI_INFO_NULL, request)
      case (3)
        call MPI_Reduce_scatter_init(gathered, value, ones, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, &
                                     MPI_INFO_NULL, request)
      end select
      if (form > 1) call complete(3, request)
      call expect(value == (rank + 1) * size, 'reduce_scatter forms')
    end do
    call MPI_Ibarrier(MPI_COMM_WORLD, request)
    call complete(2, request)
    value = merge(5, -1, rank == 0)
    call MPI_Ibcast(value, 1, MPI_INTEGER, 0, MPI_COMM_WORLD, request)
    call complete(2, request)
    call expect(value == 5, 'ibcast')
    ! The neighbourhood collectives on a ring given edge by edge (each rank its own two).
    left = mod(rank + size - 1, size)
    right = mod(rank + 1, size)
    call MPI_Dist_graph_create(MPI_COMM_WORLD, 1, [rank], [2], [left, right], MPI_UNWEIGHTED, &
                               MPI_INFO_NULL, .false., ring)
    call MPI_Dist_graph_neighbors_count(ring, i, value, weighted)
    call expect(i == 2 .and. value == 2 .and. .not. weighted, 'dist_graph_create')
    ! The order of the sources is the library's: the collectives follow it.
    call MPI_Dist_graph_neighbors(ring, 2, sources, sw, 2, destinations, dw)
    call expect(all(destinations == [left, right]) .and. minval(sources) == min(left, right) .and. &
                maxval(sources) == max(left, right), 'dist_graph_create: neighbours')
    neighbour_bytes = [0_MPI_ADDRESS_KIND, 4_MPI_ADDRESS_KIND]
    s(1:2) = rank
    do form = 1, 3
      do i = 1, 5
        r = -1
        select case (i + 10 * form)
        case (11)
          call MPI_Neighbor_allgatherv(rank, 1, MPI_INTEGER, r, ones, displs, MPI_INTEGER, ring)
        case (12)
          call MPI_Neighbor_alltoallv(s, ones, displs, MPI_INTEGER, r, ones, displs, MPI_INTEGER, ring)
        case (13)
          call MPI_Neighbor_alltoallw(s, ones, neighbour_bytes, types, r, ones, neighbour_bytes, types, ring)
        case (14)
          call MPI_Neighbor_allgather(rank, 1, MPI_INTEGER, r, 1, MPI_INTEGER, ring)
        case (15)
          call MPI_Neighbor_alltoall(s, 1, MPI_INTEGER, r, 1, MPI_INTEGER, ring)
        case (21)
          call MPI_Ineighbor_allgatherv(rank, 1, MPI_INTEGER, r, ones, displs, MPI_INTEGER, ring, request)
        case (22)
          call MPI_Ineighbor_alltoallv(s, ones, displs, MPI_INTEGER, r, ones, displs, MPI_INTEGER, ring, request)
        case (23)
          call MPI_Ineighbor_alltoallw(s, ones, neighbour_bytes, types, r, ones, neighbour_bytes, types, ring, &
                                       request)
        case (24)
          call MPI_Ineighbor_allgather(rank, 1, MPI_INTEGER, r, 1, MPI_INTEGER, ring, request)
        case (25)
          call MPI_Ineighbor_alltoall(s, 1, MPI_INTEGER, r, 1, MPI_INTEGER, ring, request)
        case (31)
          call MPI_Neighbor_allgatherv_init(rank, 1, MPI_INTEGER, r, ones, displs, MPI_INTEGER, ring, &
                                            MPI_INFO_NULL, request)
        case (32)
          call MPI_Neighbor_alltoallv_init(s, ones, displs, MPI_INTEGER, r, ones, displs, MPI_INTEGER, ring, &
                                           MPI_INFO_NULL, request)
        case (33)
          call MPI_Neighbor_alltoallw_init(s, ones, neighbour_bytes, types, r, ones, neighbour_bytes, types, &
                                           ring, MPI_INFO_NULL, request)
        case (34)
          call MPI_Neighbor_allgather_init(rank, 1, MPI_INTEGER, r, 1, MPI_INTEGER, ring, MPI_INFO_NULL, request)
        case (35)
          call MPI_Neighbor_alltoall_init(s, 1, MPI_INTEGER, r, 1, MPI_INTEGER, ring, MPI_INFO_NULL, request)
        end select
        call complete(form, request)
        call expect(all(r(1:2) == sources) .and. r(3) == -1, 'neighbourhood collectives')
      end do
    end do
    call MPI_Comm_free(ring)
  end subroutine every_collective_form

  subroutine point_to_point()
    use, intrinsic :: iso_c_binding, only: c_ptr, c_loc, c_associated
    ! Read and written by persistent and nonblocking calls while the program waits in calls that do not
    ! name them: VOLATILE, as in every_collective_form.
    integer, volatile :: out(3), in(3)
    integer :: right, left, n, i, count, outcount, indices(2), size_needed
    integer, allocatable, target :: attached(:)
    type(MPI_Message) :: message
    type(MPI_Status) :: status, statuses(2)
    type(MPI_Request) :: requests(2), request
    logical :: flag
    type(c_ptr) :: given_back
    right = mod(rank + 1, size)
    left = mod(rank + size - 1, size)
    ! Probe and Mprobe / Mrecv, Improbe / Imrecv.
    out = [rank, rank * 2, rank * 3]
    call MPI_Send(out, 3, MPI_INTEGER, right, 21, MPI_COMM_WORLD)
    call MPI_Probe(left, 21, MPI_COMM_WORLD, status)
    call MPI_Get_count(status, MPI_INTEGER, count)
    call expect(count == 3 .and. status%MPI_SOURCE == left .and. status%MPI_TAG == 21, 'probe')
    call MPI_Mprobe(left, 21, MPI_COMM_WORLD, message, status)
    call MPI_Mrecv(in, 3, MPI_INTEGER, message, status)
    call expect(message == MPI_MESSAGE_NULL .and. all(in == [left, left * 2, left * 3]), 'mprobe/mrecv')
    call MPI_Send(out, 2, MPI_INTEGER, right, 22, MPI_COMM_WORLD)
    flag = .false.
    do while (.not. flag)
      call MPI_Improbe(left, 22, MPI_COMM_WORLD, flag, message, status)
    end do
    call MPI_Imrecv(in, 2, MPI_INTEGER, message, request)
    call MPI_Wait(request, status)
    call MPI_Get_elements(status, MPI_INTEGER, count)
    call expect(count == 2 .and. in(2) == left * 2, 'improbe/imrecv')
    call MPI_Iprobe(MPI_ANY_SOURCE, 999, MPI_COMM_WORLD, flag, status)
    call expect(.not. flag, 'iprobe finds nothing')
    ! Persistent point-to-point, started three times, completed by Waitall with statuses.
    call MPI_Recv_init(in, 3, MPI_INTEGER, left, 23, MPI_COMM_WORLD, requests(1))
    call MPI_Ssend_init(out, 3, MPI_INTEGER, right, 23, MPI_COMM_WORLD, requests(2))
    do i = 1, 3
      out(1) = rank * 100 + i
      call MPI_Startall(2, requests)
      call MPI_Waitall(2, requests, statuses)
      call expect(in(1) == left * 100 + i .and. statuses(1)%MPI_SOURCE == left, 'persistent')
    end do
    call MPI_Request_get_status(requests(1), flag, status)
    call expect(flag, 'request_get_status of an inactive request')
    call MPI_Request_free(requests(1))
    call MPI_Request_free(requests(2))
    ! Irsend after the receive is posted (a barrier orders them); Testany.
    call MPI_Irecv(in, 1, MPI_INTEGER, left, 24, MPI_COMM_WORLD, requests(1))
    call MPI_Barrier(MPI_COMM_WORLD)
    call MPI_Irsend(out, 1, MPI_INTEGER, right, 24, MPI_COMM_WORLD, requests(2))
    outcount = 0
    do while (outcount < 2)
      call MPI_Testany(2, requests, n, flag, status)
      if (flag .and. n /= MPI_UNDEFINED) outcount = outcount + 1
      if (flag .and. n == MPI_UNDEFINED) exit
    end do
    call expect(in(1) == left * 100 + 3, 'irsend/testany')
    ! Waitsome on an Issend and its receive.
    call MPI_Irecv(in, 1, MPI_INTEGER, left, 25, MPI_COMM_WORLD, requests(1))
    call MPI_Issend(out, 1, MPI_INTEGER, right, 25, MPI_COMM_WORLD, requests(2))
    count = 0
    do while (count < 2)
      call MPI_Waitsome(2, requests, outcount, indices, statuses)
      if (outcount == MPI_UNDEFINED) exit
      count = count + outcount
    end do
    call expect(count == 2, 'waitsome')
    ! Rsend (after the receive is posted), Ssend, Sendrecv_replace, Send_init by MPI_Start and
    ! MPI_Testall, a receive nobody matches cancelled.
    call MPI_Irecv(in, 1, MPI_INTEGER, left, 29, MPI_COMM_WORLD, requests(1))
    call MPI_Barrier(MPI_COMM_WORLD)
    call MPI_Rsend(out, 1, MPI_INTEGER, right, 29, MPI_COMM_WORLD)
    call MPI_Wait(requests(1), status)
    call MPI_Irecv(in, 1, MPI_INTEGER, left, 30, MPI_COMM_WORLD, requests(1))
    call MPI_Ssend(out, 1, MPI_INTEGER, right, 30, MPI_COMM_WORLD)
    call MPI_Wait(requests(1), status)
    call expect(in(1) == left * 100 + 3 .and. status%MPI_TAG == 30, 'rsend, ssend')
    n = rank
    call MPI_Sendrecv_replace(n, 1, MPI_INTEGER, right, 31, left, 31, MPI_COMM_WORLD, status)
    call expect(n == left .and. status%MPI_SOURCE == left, 'sendrecv_replace')
    call MPI_Recv_init(in, 1, MPI_INTEGER, left, 32, MPI_COMM_WORLD, requests(1))
    call MPI_Send_init(out, 1, MPI_INTEGER, right, 32, MPI_COMM_WORLD, requests(2))
    in(1) = -1
    call MPI_Start(requests(1))
    call MPI_Start(requests(2))
    flag = .false.
    do while (.not. flag)
      call MPI_Testall(2, requests, flag, statuses)
    end do
    call expect(in(1) == left * 100 + 3 .and. statuses(1)%MPI_TAG == 32, 'send_init, testall')
    call MPI_Request_free(requests(1))
    call MPI_Request_free(requests(2))
    call MPI_Irecv(in, 1, MPI_INTEGER, left, 33, MPI_COMM_WORLD, requests(1))
    call MPI_Cancel(requests(1))
    call MPI_Wait(requests(1), status)
    call MPI_Test_cancelled(status, flag)
    call expect(flag, 'cancel')
    ! Bsend through an attached buffer, which MPI_Buffer_detach gives back.
    call MPI_Pack_size(3, MPI_INTEGER, MPI_COMM_WORLD, size_needed)
    allocate(attached((size_needed + MPI_BSEND_OVERHEAD) / 4 + 8))
    call MPI_Buffer_attach(attached, 4 * ubound(attached, 1))
    call MPI_Bsend(out, 3, MPI_INTEGER, right, 26, MPI_COMM_WORLD)
    call MPI_Recv(in, 3, MPI_INTEGER, left, 26, MPI_COMM_WORLD, status)
    call MPI_Ibsend(out, 1, MPI_INTEGER, right, 27, MPI_COMM_WORLD, requests(1))
    call MPI_Recv(in, 1, MPI_INTEGER, left, 27, MPI_COMM_WORLD, status)
    call MPI_Wait(requests(1), status)
    call MPI_Bsend_init(out, 1, MPI_INTEGER, right, 28, MPI_COMM_WORLD, requests(1))
    call MPI_Start(requests(1))
    call MPI_Recv(in, 1, MPI_INTEGER, left, 28, MPI_COMM_WORLD, status)
    call MPI_Wait(requests(1), status)
    call MPI_Request_free(requests(1))
    call expect(in(1) == left * 100 + 3, 'ibsend, bsend_init')
    call MPI_Buffer_detach(given_back, n)
    call expect(c_associated(given_back, c_loc(attached)) .and. n == 4 * ubound(attached, 1), 'buffer_detach')
    deallocate(attached)
    ! A status set by hand.
    call MPI_Status_set_elements(status, MPI_INTEGER, 6)
    call MPI_Get_count(status, MPI_INTEGER, count)
    call expect(count == 6, 'status_set_elements')
    call MPI_Status_set_elements_x(status, MPI_BYTE, 8_MPI_COUNT_KIND)
    call MPI_Get_count(status, MPI_INTEGER, count)
    call expect(count == 2, 'status_set_elements_x')
    call MPI_Status_set_cancelled(status, .true.)
    call MPI_Test_cancelled(status, flag)
    call expect(flag, 'status_set_cancelled')
  end subroutine point_to_point

  subroutine generalized()
    type(MPI_Request) :: request
    type(MPI_Status) :: status
    integer(kind=MPI_ADDRESS_KIND), save :: extra
    integer :: count
    logical :: flag
    extra = 123
    call MPI_Grequest_start(grequest_query, grequest_free, grequest_cancel, extra, request)
    call MPI_Test(request, flag, status)
    call expect(.not. flag, 'grequest pending')
    call MPI_Grequest_complete(request)
    call MPI_Wait(request, status)
    call expect(request == MPI_REQUEST_NULL .and. grequest_frees == 1, 'grequest freed')
    call expect(status%MPI_TAG == 77 .and. status%MPI_SOURCE == 123, 'grequest status')
    call MPI_Get_count(status, MPI_INTEGER, count)
    call expect(count == 5, 'grequest count')
  end subroutine generalized

  subroutine topologies()
    type(MPI_Comm) :: cart, row, graph, dist
    integer :: dims(2), coords(2), source, dest, n, m, i, r, status, nnodes, nedges
    integer :: index(4), edges(8), neighbours(2), got(2), indegree, outdegree, sources(2), destinations(2)
    integer :: sw(2), dw(2), got4(4)
    logical :: periods(2), weighted
    ! A ring as a 1 x size periodic grid.
    dims = [0, 1]
    call MPI_Dims_create(size, 2, dims)
    call expect(dims(1) == size .and. dims(2) == 1, 'dims_create')
    call MPI_Cart_create(MPI_COMM_WORLD, 2, dims, [.true., .false.], .false., cart)
    call MPI_Topo_test(cart, status)
    call expect(status == MPI_CART, 'topo_test cart')
    call MPI_Cartdim_get(cart, n)
    call expect(n == 2, 'cartdim_get')
    call MPI_Cart_coords(cart, rank, 2, coords)
    call expect(all(coords == [rank, 0]), 'cart_coords')
    call MPI_Cart_rank(cart, [rank + size, 0], r)
    call expect(r == rank, 'cart_rank wraps')
    call MPI_Cart_shift(cart, 0, 1, source, dest)
    call expect(source == mod(rank + size - 1, size) .and. dest == mod(rank + 1, size), 'cart_shift')
    call MPI_Cart_get(cart, 2, dims, periods, coords)
    call expect(periods(1) .and. .not. periods(2) .and. coords(1) == rank, 'cart_get')
    call MPI_Cart_sub(cart, [.false., .true.], row)
    call MPI_Comm_size(row, n)
    call expect(n == 1, 'cart_sub')
    ! Neighbours in dimension order, each its minus then plus side: left, right, then two
    ! MPI_PROC_NULLs (the second dimension is 1 long and not periodic), which leave theirs alone.
    got4 = -1
    call MPI_Neighbor_allgather(rank, 1, MPI_INTEGER, got4, 1, MPI_INTEGER, cart)
    call expect(got4(1) == source .and. got4(2) == dest .and. all(got4(3:4) == -1), 'neighbor_allgather')
    call MPI_Comm_free(row)
    call MPI_Comm_free(cart)
    ! The same ring as a graph.
    index(1:size) = [(2 * i, i = 1, size)]
    edges(1:2 * size) = [(mod(i + size - 1, size), mod(i + 1, size), i = 0, size - 1)]
    call MPI_Graph_create(MPI_COMM_WORLD, size, index, edges, .false., graph)
    call MPI_Topo_test(graph, status)
    call expect(status == MPI_GRAPH, 'topo_test graph')
    call MPI_Graphdims_get(graph, nnodes, nedges)
    call expect(nnodes == size .and. nedges == 2 * size, 'graphdims_get')
    call MPI_Graph_neighbors_count(graph, rank, n)
    call MPI_Graph_neighbors(graph, rank, 2, neighbours)
    call expect(n == 2 .and. neighbours(2) == mod(rank + 1, size), 'graph_neighbors')
    call MPI_Graph_get(graph, size, 2 * size, index, edges)
    call expect(index(size) == 2 * size, 'graph_get')
    ! MPI_Sizeof: one element's bytes, for a scalar or an array of any rank.
    block
      integer(kind=2) :: i2(3, 2)
      complex(kind=8) :: z
      call MPI_Sizeof(i2, n)
      call expect(n == 2, 'sizeof integer(2) array')
      call MPI_Sizeof(z, n)
      call expect(n == 16, 'sizeof complex(8)')
      call MPI_Sizeof(.true., n)
      call expect(n == 4, 'sizeof logical')
    end block
    ! Mapping the ring again: each process its own rank; a grid of one node leaves the others out.
    call MPI_Graph_map(MPI_COMM_WORLD, size, index, edges, n)
    call expect(n == rank, 'graph_map')
    call MPI_Cart_map(MPI_COMM_WORLD, 1, [size], [.true.], n)
    call expect(n == rank, 'cart_map')
    call MPI_Cart_map(MPI_COMM_WORLD, 1, [1], [.false.], n)
    call expect(n == merge(0, MPI_UNDEFINED, rank == 0), 'cart_map: one node')
    call MPI_Comm_free(graph)
    ! And as a distributed graph without weights: rank r's sources and destinations are r-1 and r+1.
    sources = [mod(rank + size - 1, size), mod(rank + 1, size)]
    destinations = sources
    call MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 2, sources, MPI_UNWEIGHTED, 2, destinations, &
                                        MPI_UNWEIGHTED, MPI_INFO_NULL, .false., dist)
    call MPI_Topo_test(dist, status)
    call expect(status == MPI_DIST_GRAPH, 'topo_test dist_graph')
    call MPI_Dist_graph_neighbors_count(dist, indegree, outdegree, weighted)
    call expect(indegree == 2 .and. outdegree == 2 .and. .not. weighted, 'dist_graph_neighbors_count')
    call MPI_Dist_graph_neighbors(dist, 2, sources, sw, 2, destinations, dw)
    call expect(sources(1) == mod(rank + size - 1, size), 'dist_graph_neighbors')
    call MPI_Neighbor_alltoall([rank * 2, rank * 2 + 1], 1, MPI_INTEGER, got, 1, MPI_INTEGER, dist)
    ! From the left neighbour its second value (sent right), from the right its first; with two
    ! ranks both are the other one, whose two edges to this one match in order.
    m = mod(rank + size - 1, size)
    if (size > 2) then
      call expect(got(1) == m * 2 + 1 .and. got(2) == mod(rank + 1, size) * 2, 'neighbor_alltoall')
    else
      call expect(got(1) + got(2) == m * 4 + 1, 'neighbor_alltoall, two ranks')
    end if
    call MPI_Comm_free(dist)
  end subroutine topologies

  subroutine infos()
    type(MPI_Info) :: info, copy, used
    type(MPI_Comm) :: comm
    character(len=MPI_MAX_INFO_VAL) :: value
    character(len=MPI_MAX_INFO_KEY) :: key
    integer :: n, length
    logical :: flag
    call MPI_Info_create(info)
    call MPI_Info_set(info, 'colour', ' blue ')
    call MPI_Info_set(info, 'size', '3')
    call MPI_Info_get_nkeys(info, n)
    call expect(n == 2, 'info nkeys')
    call MPI_Info_get(info, 'colour', MPI_MAX_INFO_VAL, value, flag)
    call expect(flag .and. value == 'blue', 'info_get')
    call MPI_Info_get_valuelen(info, 'size', length, flag)
    call expect(flag .and. length == 1, 'info_get_valuelen')
    ! MPI-4's get_string: at most BUFLEN characters, the value's whole length back; 0 reads nothing.
    block
      character(len=6) :: short
      short = 'xxxxxx'
      length = 3
      call MPI_Info_get_string(info, 'colour', length, short, flag)
      call expect(flag .and. short == 'blu' .and. length == 4, 'info_get_string: truncated')
      length = 0
      call MPI_Info_get_string(info, 'colour', length, short, flag)
      call expect(flag .and. short == 'blu' .and. length == 4, 'info_get_string: buflen 0')
      length = len(short)
      call MPI_Info_get_string(info, 'colour', length, short, flag)
      call expect(flag .and. short == 'blue' .and. length == 4, 'info_get_string')
      call MPI_Info_get_string(info, 'shape', length, short, flag)
      call expect(.not. flag .and. short == 'blue', 'info_get_string: no such key')
    end block
    call MPI_Info_get_nthkey(info, 1, key)
    call expect(key == 'size' .or. key == 'colour', 'info_get_nthkey')
    call MPI_Info_dup(info, copy)
    call MPI_Info_delete(copy, 'colour')
    call MPI_Info_get(copy, 'colour', MPI_MAX_INFO_VAL, value, flag)
    call expect(.not. flag, 'info_delete')
    call MPI_Comm_dup_with_info(MPI_COMM_WORLD, info, comm)
    call MPI_Comm_set_info(comm, copy)
    call MPI_Comm_get_info(comm, used)
    call expect(used /= MPI_INFO_NULL, 'comm_get_info')
    call MPI_Info_free(used)
    call MPI_Comm_free(comm)
    call MPI_Info_free(copy)
    call MPI_Info_free(info)
    call expect(info == MPI_INFO_NULL, 'info_free sets null')
  end subroutine infos
end program f08_more

! `use mpi_f08`'s large-count specifics (MPI-4.0 section 19.2): each generic that C has an MPI_X_c
! for also takes INTEGER(KIND=MPI_COUNT_KIND) counts (and INTEGER(KIND=MPI_ADDRESS_KIND)
! displacements), which gfortran resolves by the counts' kind to MPI_X_f08c, calling MPI_X_c. Without
! those specifics this program does not compile. Each call's data is checked: point-to-point in every
! form (blocking, nonblocking, persistent, sendrecv, matched probe), counts from the status,
! collectives with scalar and array counts, datatype constructors (one of more than 2**31 elements,
! whose size only the large Type_size can give), pack and unpack, native and external32;
! MPI_Op_create_c (its reduction an MPI_User_function_c: len INTEGER(KIND=MPI_COUNT_KIND)) in
! MPI_Allreduce, and the large MPI_Type_get_envelope / MPI_Type_get_contents (num_large_counts,
! array_of_large_counts) of types whose stride and displacement pass 2**31, next to the classic ones.
! For 2 ranks and more; ranks 0 and 1 do the point-to-point part.
module f08_large_op
  use mpi_f08
  use fortran_check
  implicit none
contains
  ! Affine maps composed: inout = in o inout (fortran_check's compose_affine), len an MPI_Count.
  subroutine affine_c(invec, inoutvec, len, datatype)
    use, intrinsic :: iso_c_binding, only: c_ptr, c_f_pointer
    type(c_ptr), value :: invec, inoutvec
    integer(kind=MPI_COUNT_KIND) :: len
    type(MPI_Datatype) :: datatype
    integer, pointer :: a(:, :), b(:, :)
    call expect(datatype == MPI_2INTEGER, 'MPI_User_function_c datatype')
    call expect(len >= 1 .and. len <= 64, 'MPI_User_function_c len')
    call c_f_pointer(invec, a, [2_MPI_COUNT_KIND, len])
    call c_f_pointer(inoutvec, b, [2_MPI_COUNT_KIND, len])
    call compose_affine(a, b)
  end subroutine affine_c
end module f08_large_op

program fortran_f08_large
  use mpi_f08
  use fortran_check
  use f08_large_op
  implicit none
  integer, parameter :: ck = MPI_COUNT_KIND, ak = MPI_ADDRESS_KIND, n = 64
  integer :: rank, nranks, i, r, values(n), got(n), peer
  integer, allocatable :: gathered(:), parts(:)
  integer(ck) :: count, elements, size, position
  integer(ck), allocatable :: counts(:)
  integer(ak), allocatable :: displs(:)
  integer(ak) :: lb, extent
  type(MPI_Status) :: status
  type(MPI_Request) :: requests(2)
  type(MPI_Message) :: message
  type(MPI_Datatype) :: pair, strided, huge_type, record, classic, far_vector, far_struct, types(4)
  type(MPI_Op) :: op
  integer :: affines(2, n), reduced(2, n), want(2, n), combiner, ints(8), num_ints, num_addrs, num_types
  integer(ak) :: addrs(8)
  integer(ck) :: large(8), n_ints, n_addrs, n_large, n_types
  character(len=1024) :: packed

  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, nranks)
  count = n
  values = [(rank * 1000 + i, i = 1, n)]
  peer = 1 - rank

  if (rank <= 1) then
    ! Send and Recv, the count from the status in both kinds.
    got = -1
    if (rank == 0) then
      call MPI_Send(values, count, MPI_INTEGER, 1, 1, MPI_COMM_WORLD)
    else
      call MPI_Recv(got, count, MPI_INTEGER, 0, 1, MPI_COMM_WORLD, status)
      call expect(all_equal(got, 0, n), 'Recv')
      call MPI_Get_count(status, MPI_INTEGER, elements)
      call expect(elements == n, 'Get_count')
      call MPI_Get_elements(status, MPI_INTEGER, elements)
      call expect(elements == n, 'Get_elements')
      call MPI_Get_count(status, MPI_BYTE, elements)
      call expect(elements == 4 * n, 'Get_count in bytes')
    end if

    ! Ssend, Isend, Irecv, Issend both ways.
    got = -1
    call MPI_Irecv(got, count, MPI_INTEGER, peer, 2, MPI_COMM_WORLD, requests(1))
    call MPI_Isend(values, count, MPI_INTEGER, peer, 2, MPI_COMM_WORLD, requests(2))
    call MPI_Waitall(2, requests, MPI_STATUSES_IGNORE)
    call expect(all_equal(got, peer, n), 'Isend/Irecv')
    got = -1
    if (rank == 0) then
      call MPI_Ssend(values, count, MPI_INTEGER, 1, 3, MPI_COMM_WORLD)
      call MPI_Issend(values, count, MPI_INTEGER, 1, 3, MPI_COMM_WORLD, requests(1))
      call MPI_Wait(requests(1), MPI_STATUS_IGNORE)
    else
      call MPI_Recv(got, count, MPI_INTEGER, 0, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE)
      call expect(all_equal(got, 0, n), 'Ssend')
      got = -1
      call MPI_Recv(got, count, MPI_INTEGER, 0, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE)
      call expect(all_equal(got, 0, n), 'Issend')
    end if

    ! Persistent: Send_init and Recv_init, started twice.
    call MPI_Recv_init(got, count, MPI_INTEGER, peer, 4, MPI_COMM_WORLD, requests(1))
    call MPI_Send_init(values, count, MPI_INTEGER, peer, 4, MPI_COMM_WORLD, requests(2))
    do r = 1, 2
      got = -1
      call MPI_Startall(2, requests)
      call MPI_Waitall(2, requests, MPI_STATUSES_IGNORE)
      call expect(all_equal(got, peer, n), 'Send_init/Recv_init')
    end do
    call MPI_Request_free(requests(1))
    call MPI_Request_free(requests(2))

    ! Sendrecv, Sendrecv_replace, Isendrecv, Isendrecv_replace.
    got = -1
    call MPI_Sendrecv(values, count, MPI_INTEGER, peer, 5, got, count, MPI_INTEGER, peer, 5, &
                      MPI_COMM_WORLD, status)
    call expect(all_equal(got, peer, n), 'Sendrecv')
    call MPI_Get_count(status, MPI_INTEGER, elements)
    call expect(elements == n, 'Sendrecv count')
    got = values
    call MPI_Sendrecv_replace(got, count, MPI_INTEGER, peer, 6, peer, 6, MPI_COMM_WORLD, &
                              MPI_STATUS_IGNORE)
    call expect(all_equal(got, peer, n), 'Sendrecv_replace')
    got = -1
    call MPI_Isendrecv(values, count, MPI_INTEGER, peer, 7, got, count, MPI_INTEGER, peer, 7, &
                       MPI_COMM_WORLD, requests(1))
    call MPI_Wait(requests(1), MPI_STATUS_IGNORE)
    call expect(all_equal(got, peer, n), 'Isendrecv')
    got = values
    call MPI_Isendrecv_replace(got, count, MPI_INTEGER, peer, 8, peer, 8, MPI_COMM_WORLD, requests(1))
    call MPI_Wait(requests(1), MPI_STATUS_IGNORE)
    call expect(all_equal(got, peer, n), 'Isendrecv_replace')

    ! Matched probe: Mrecv and Imrecv with large counts.
    call MPI_Send(values, count, MPI_INTEGER, peer, 9, MPI_COMM_WORLD)
    call MPI_Send(values, count, MPI_INTEGER, peer, 10, MPI_COMM_WORLD)
    got = -1
    call MPI_Mprobe(peer, 9, MPI_COMM_WORLD, message, status)
    call MPI_Mrecv(got, count, MPI_INTEGER, message, status)
    call expect(all_equal(got, peer, n), 'Mrecv')
    got = -1
    call MPI_Mprobe(peer, 10, MPI_COMM_WORLD, message, status)
    call MPI_Imrecv(got, count, MPI_INTEGER, message, requests(1))
    call MPI_Wait(requests(1), MPI_STATUS_IGNORE)
    call expect(all_equal(got, peer, n), 'Imrecv')
  end if

  ! Collectives: scalar counts.
  got = values
  call MPI_Bcast(got, count, MPI_INTEGER, 0, MPI_COMM_WORLD)
  call expect(all_equal(got, 0, n), 'Bcast')
  got = -1
  call MPI_Allreduce(values, got, count, MPI_INTEGER, MPI_MAX, MPI_COMM_WORLD)
  call expect(all_equal(got, nranks - 1, n), 'Allreduce')
  got = -1
  if (rank == nranks - 1) got = values
  call MPI_Ibcast(got, count, MPI_INTEGER, nranks - 1, MPI_COMM_WORLD, requests(1))
  call MPI_Wait(requests(1), MPI_STATUS_IGNORE)
  call expect(all_equal(got, nranks - 1, n), 'Ibcast')
  allocate(gathered(n * nranks), parts(nranks))
  gathered = -1
  call MPI_Allgather(values, count, MPI_INTEGER, gathered, count, MPI_INTEGER, MPI_COMM_WORLD)
  do r = 0, nranks - 1
    call expect(all_equal(gathered(r * n + 1:(r + 1) * n), r, n), 'Allgather')
  end do
  ! Array counts and MPI_ADDRESS_KIND displacements: Gatherv, rank r gives r + 1 elements at r * n.
  allocate(counts(nranks), displs(nranks))
  counts = [(int(r + 1, ck), r = 0, nranks - 1)]
  displs = [(int(r * n, ak), r = 0, nranks - 1)]
  gathered = -1
  call MPI_Gatherv(values, counts(rank + 1), MPI_INTEGER, gathered, counts, displs, MPI_INTEGER, 0, &
                   MPI_COMM_WORLD)
  if (rank == 0) then
    do r = 0, nranks - 1
      call expect(all_equal(gathered(r * n + 1:r * n + r + 1), r, r + 1), 'Gatherv')
      if (r + 2 <= n) call expect(gathered(r * n + r + 2) == -1, 'Gatherv bounds')
    end do
  end if
  ! Reduce_scatter: each rank gets one element, the sum over ranks.
  counts = 1
  parts = [(rank * 1000 + r, r = 1, nranks)]
  got = -1
  call MPI_Reduce_scatter(parts, got, counts, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD)
  call expect(got(1) == sum([(r * 1000 + rank + 1, r = 0, nranks - 1)]), 'Reduce_scatter')

  ! Datatype constructors with large counts: a vector of pairs, sent and checked.
  call MPI_Type_contiguous(2_ck, MPI_INTEGER, pair)
  call MPI_Type_vector(4_ck, 1_ck, 2_ck, pair, strided)  ! elements 1-2, 5-6, 9-10, 13-14
  call MPI_Type_commit(strided)
  call MPI_Type_size(strided, size)
  call expect(size == 32, 'Type_size of the vector')
  got = -1
  call MPI_Sendrecv(values, 1_ck, strided, modulo(rank + 1, nranks), 11, got, 1_ck, strided, &
                    modulo(rank - 1, nranks), 11, MPI_COMM_WORLD, MPI_STATUS_IGNORE)
  r = modulo(rank - 1, nranks)
  do i = 1, 16
    if (modulo(i - 1, 4) < 2) then
      call expect(got(i) == r * 1000 + i, 'vector sent')
    else
      call expect(got(i) == -1, 'vector gap')
    end if
  end do
  ! A struct: two integers at byte 0 and two at byte 16 of each element.
  call MPI_Type_create_struct(2_ck, [2_ck, 2_ck], [0_ck, 16_ck], [MPI_INTEGER, MPI_INTEGER], record)
  call MPI_Type_commit(record)
  call MPI_Type_size(record, size)
  call MPI_Type_get_extent(record, lb, extent)
  call expect(size == 16 .and. lb == 0 .and. extent == 24, 'Type_create_struct')
  ! More than 2**31 elements: only the large-count calls can build it and say its size.
  call MPI_Type_contiguous(2_ck**31 + 5_ck, MPI_INTEGER, huge_type)
  call MPI_Type_size(huge_type, size)
  call expect(size == 4_ck * (2_ck**31 + 5_ck), 'Type_size beyond 2**31')
  call MPI_Pack_size(3_ck * 2_ck**30, MPI_BYTE, MPI_COMM_WORLD, size)
  call expect(size >= 3_ck * 2_ck**30, 'Pack_size beyond 2**31')
  call MPI_Type_free(huge_type)

  ! Pack and unpack, native and external32, with large positions.
  position = 0
  call MPI_Pack(values, count, MPI_INTEGER, packed, int(len(packed), ck), position, MPI_COMM_WORLD)
  call MPI_Pack_size(count, MPI_INTEGER, MPI_COMM_WORLD, size)
  call expect(position == 4 * n .and. size >= position, 'Pack')
  got = -1
  position = 0
  call MPI_Unpack(packed, int(len(packed), ck), position, got, count, MPI_INTEGER, MPI_COMM_WORLD)
  call expect(all_equal(got, rank, n) .and. position == 4 * n, 'Unpack')
  call MPI_Pack_external_size('external32', count, MPI_INTEGER, size)
  call expect(size == 4 * n, 'Pack_external_size')
  position = 0
  call MPI_Pack_external('external32', values, count, MPI_INTEGER, packed, int(len(packed), ck), &
                         position)
  call expect(position == 4 * n, 'Pack_external')
  got = -1
  position = 0
  call MPI_Unpack_external('external32', packed, int(len(packed), ck), position, got, count, &
                           MPI_INTEGER)
  call expect(all_equal(got, rank, n), 'Unpack_external')

  ! MPI_Op_create_c: a non-commutative reduction with MPI_User_function_c's signature, applied in
  ! rank order to n pairs, against the same composition done here; large and int counts.
  call MPI_Op_create_c(affine_c, .false., op)
  affines = affine_maps(rank)
  want = affine_maps(0)
  do r = 1, nranks - 1
    reduced = affine_maps(r)
    call compose_affine(want, reduced)
    want = reduced
  end do
  reduced = -1
  call MPI_Allreduce(affines, reduced, count, MPI_2INTEGER, op, MPI_COMM_WORLD)
  call expect(all(reduced == want), 'Allreduce with MPI_Op_create_c')
  reduced = -1
  call MPI_Allreduce(affines, reduced, n, MPI_2INTEGER, op, MPI_COMM_WORLD)
  call expect(all(reduced == want), 'Allreduce with MPI_Op_create_c, int count')
  call MPI_Op_free(op)

  ! The large envelope and contents: counts and displacements of a large-count constructor come
  ! back in array_of_large_counts, in argument order. An hvector whose stride, and a struct whose
  ! displacement, pass 2**31 bytes.
  call MPI_Type_create_hvector(3_ck, 2_ck, 2_ck**33, MPI_INTEGER, far_vector)
  call MPI_Type_get_envelope(far_vector, n_ints, n_addrs, n_large, n_types, combiner)
  call expect(combiner == MPI_COMBINER_HVECTOR .and. n_ints == 0 .and. n_addrs == 0 .and. &
              n_large == 3 .and. n_types == 1, 'large Type_get_envelope of an hvector')
  large = -1
  call MPI_Type_get_contents(far_vector, 8_ck, 8_ck, 8_ck, 4_ck, ints, addrs, large, types)
  call expect(all(large(1:3) == [3_ck, 2_ck, 2_ck**33]) .and. large(4) == -1 .and. &
              types(1) == MPI_INTEGER, 'large Type_get_contents of an hvector')
  call MPI_Type_create_struct(2_ck, [1_ck, 3_ck], [8_ck, 2_ck**32 + 4_ck], [MPI_INTEGER, far_vector], &
                              far_struct)
  call MPI_Type_get_envelope(far_struct, n_ints, n_addrs, n_large, n_types, combiner)
  call expect(combiner == MPI_COMBINER_STRUCT .and. n_ints == 0 .and. n_addrs == 0 .and. &
              n_large == 5 .and. n_types == 2, 'large Type_get_envelope of a struct')
  large = -1
  call MPI_Type_get_contents(far_struct, n_ints, n_addrs, n_large, n_types, ints, addrs, large, types)
  call expect(all(large(1:5) == [2_ck, 1_ck, 3_ck, 8_ck, 2_ck**32 + 4_ck]) .and. large(6) == -1 .and. &
              types(1) == MPI_INTEGER, 'large Type_get_contents of a struct')
  ! Its hvector comes back as a new derived type, with the same envelope.
  call expect(types(2) /= far_vector, 'Type_get_contents: a new handle')
  call MPI_Type_get_envelope(types(2), n_ints, n_addrs, n_large, n_types, combiner)
  large = -1
  call MPI_Type_get_contents(types(2), 8_ck, 8_ck, 8_ck, 2_ck, ints, addrs, large, types(3:))
  call expect(combiner == MPI_COMBINER_HVECTOR .and. n_large == 3 .and. &
              all(large(1:3) == [3_ck, 2_ck, 2_ck**33]) .and. types(3) == MPI_INTEGER, &
              'large Type_get_contents of the struct''s hvector')
  call MPI_Type_free(types(2))
  ! A type of int counts: the classic queries, and the large ones with no large counts.
  call MPI_Type_vector(2, 1, 3, MPI_INTEGER, classic)
  call MPI_Type_get_envelope(classic, num_ints, num_addrs, num_types, combiner)
  call expect(combiner == MPI_COMBINER_VECTOR .and. num_ints == 3 .and. num_addrs == 0 .and. &
              num_types == 1, 'Type_get_envelope of a vector')
  ints = -1
  call MPI_Type_get_contents(classic, 8, 8, 4, ints, addrs, types)
  call expect(all(ints(1:4) == [2, 1, 3, -1]) .and. types(1) == MPI_INTEGER, 'Type_get_contents of a vector')
  call MPI_Type_get_envelope(classic, n_ints, n_addrs, n_large, n_types, combiner)
  call expect(combiner == MPI_COMBINER_VECTOR .and. n_ints == 3 .and. n_addrs == 0 .and. &
              n_large == 0 .and. n_types == 1, 'large Type_get_envelope of a vector')
  ints = -1
  call MPI_Type_get_contents(classic, 8_ck, 8_ck, 0_ck, 4_ck, ints, addrs, large, types)
  call expect(all(ints(1:4) == [2, 1, 3, -1]) .and. types(1) == MPI_INTEGER, &
              'large Type_get_contents of a vector')
  call MPI_Type_free(classic)
  call MPI_Type_free(far_struct)
  call MPI_Type_free(far_vector)

  call MPI_Type_free(strided)
  call MPI_Type_free(pair)
  call MPI_Type_free(record)
  deallocate(gathered, parts, counts, displs)
  call MPI_Barrier(MPI_COMM_WORLD)
  if (rank == 0) print '(a)', 'fortran_f08_large: ok'
  call MPI_Finalize()

contains
  ! Whether the first k elements are rank `from`'s values.
  logical function all_equal(a, from, k)
    integer, intent(in) :: a(:), from, k
    integer :: j
    all_equal = all([(a(j) == from * 1000 + j, j = 1, k)])
  end function all_equal

  ! Rank r's n affine maps (p, q) for the user reduction.
  function affine_maps(r) result(maps)
    integer, intent(in) :: r
    integer :: maps(2, n), j
    maps = reshape([([2 + modulo(r + j, 3), r + j], j = 1, n)], [2, n])
  end function affine_maps
end program fortran_f08_large

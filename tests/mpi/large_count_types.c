/* MPI-4's large-count (_c) datatype constructors, envelope queries, pack calls and MPI_Op_create_c, at
 * any number of ranks:
 *   - each _c constructor against the layout it must describe (packed bytes compared item by item, and
 *     with the classic constructor's where there is one), and MPI_Type_get_envelope_c /
 *     MPI_Type_get_contents_c against the arguments given (counts in the large-count array); the classic
 *     queries refuse such a type with MPI_ERR_TYPE;
 *   - MPI_Pack_c / MPI_Unpack_c / MPI_Pack_size_c and the external32 _c forms, positions and sizes;
 *   - a contiguous type of 2^31 + 5 bytes (one piece: commits at once) and one of 2^52 bytes, whose sizes
 *     only the _c queries hold; values that cannot be held are errors: an overflowing size or
 *     displacement MPI_ERR_COUNT, a block list or flattened layout larger than the machine MPI_ERR_NO_MEM;
 *   - bad arguments: negative counts and lengths, null arrays, short max_* arrays;
 *   - a _c vector type sent around the ring; MPI_Op_create_c's function (len an MPI_Count) in
 *     MPI_Allreduce_c and MPI_Reduce_local. */
#include <stdint.h>
#include <string.h>

#include "check.h"

static int rank, size;

/* The ints of `count` items of `type` packed from `source`. */
static void pack_ints(const void *source, int count, MPI_Datatype type, int *packed, int capacity) {
  MPI_Count position = 0;
  CHECK_MPI(MPI_Pack_c(source, count, type, packed, (MPI_Count)capacity * (MPI_Count)sizeof(int), &position,
                       MPI_COMM_WORLD));
  MPI_Count bytes = -1;
  CHECK_MPI(MPI_Pack_size_c(count, type, MPI_COMM_WORLD, &bytes));
  CHECK(position == bytes, "packed %lld bytes, MPI_Pack_size_c says %lld", position, bytes);
}

static void expect_ints(const int *got, const int *want, int n, const char *what) {
  for (int i = 0; i < n; ++i) CHECK(got[i] == want[i], "%s: int %d is %d, not %d", what, i, got[i], want[i]);
}

/* The envelope of a type made by a _c constructor: the numbers, then the arrays. */
static void expect_envelope(MPI_Datatype type, int combiner, MPI_Count ni, MPI_Count na, MPI_Count nc, MPI_Count nd,
                            const int *ints, const MPI_Count *counts, const MPI_Datatype *types) {
  MPI_Count got_ni = -1, got_na = -1, got_nc = -1, got_nd = -1;
  int got_combiner = -1;
  CHECK_MPI(MPI_Type_get_envelope_c(type, &got_ni, &got_na, &got_nc, &got_nd, &got_combiner));
  CHECK(got_combiner == combiner && got_ni == ni && got_na == na && got_nc == nc && got_nd == nd,
        "envelope: combiner %d (want %d), %lld/%lld/%lld/%lld (want %lld/%lld/%lld/%lld)", got_combiner, combiner,
        got_ni, got_na, got_nc, got_nd, ni, na, nc, nd);
  int out_ints[16];
  MPI_Aint out_addresses[16];
  MPI_Count out_counts[32];
  MPI_Datatype out_types[4];
  CHECK_MPI(MPI_Type_get_contents_c(type, 16, 16, 32, 4, out_ints, out_addresses, out_counts, out_types));
  for (MPI_Count i = 0; i < ni; ++i) CHECK(out_ints[i] == ints[i], "contents: integer %lld", i);
  for (MPI_Count i = 0; i < nc; ++i) {
    CHECK(out_counts[i] == counts[i], "contents: large count %lld is %lld, not %lld", i, out_counts[i], counts[i]);
  }
  for (MPI_Count i = 0; i < nd; ++i) CHECK(out_types[i] == types[i], "contents: datatype %lld", i);
  /* The classic queries cannot say it. */
  int n1, n2, n3, c;
  CHECK_CLASS(MPI_ERR_TYPE, MPI_Type_get_envelope(type, &n1, &n2, &n3, &c));
  CHECK_CLASS(MPI_ERR_TYPE, MPI_Type_get_contents(type, 16, 16, 4, out_ints, out_addresses, out_types));
  if (nc > 0) {
    CHECK_CLASS(MPI_ERR_ARG, MPI_Type_get_contents_c(type, 16, 16, nc - 1, 4, out_ints, out_addresses, out_counts,
                                                     out_types));
  }
}

static void constructors(void) {
  int a[40];
  for (int i = 0; i < 40; ++i) a[i] = 100 + i;
  int packed[40];
  MPI_Datatype t, classic;
  const MPI_Datatype ints[1] = {MPI_INT};

  /* contiguous */
  CHECK_MPI(MPI_Type_contiguous_c(5, MPI_INT, &t));
  CHECK_MPI(MPI_Type_commit(&t));
  MPI_Count tsize = 0, lb = -1, extent = -1;
  CHECK_MPI(MPI_Type_size_c(t, &tsize));
  CHECK_MPI(MPI_Type_get_extent_c(t, &lb, &extent));
  CHECK(tsize == 20 && lb == 0 && extent == 20, "contiguous_c: size %lld lb %lld extent %lld", tsize, lb, extent);
  pack_ints(a, 2, t, packed, 40);
  expect_ints(packed, a, 10, "contiguous_c");
  const MPI_Count contiguous_args[] = {5};
  expect_envelope(t, MPI_COMBINER_CONTIGUOUS, 0, 0, 1, 1, NULL, contiguous_args, ints);
  CHECK_MPI(MPI_Type_free(&t));

  /* vector: 3 blocks of 2 every 4 ints, and hvector the same in bytes */
  const int vector_want[] = {100, 101, 104, 105, 108, 109};
  CHECK_MPI(MPI_Type_vector_c(3, 2, 4, MPI_INT, &t));
  CHECK_MPI(MPI_Type_commit(&t));
  pack_ints(a, 1, t, packed, 40);
  expect_ints(packed, vector_want, 6, "vector_c");
  const MPI_Count vector_args[] = {3, 2, 4};
  expect_envelope(t, MPI_COMBINER_VECTOR, 0, 0, 3, 1, NULL, vector_args, ints);
  CHECK_MPI(MPI_Type_free(&t));
  CHECK_MPI(MPI_Type_create_hvector_c(3, 2, 16, MPI_INT, &t));
  CHECK_MPI(MPI_Type_commit(&t));
  pack_ints(a, 1, t, packed, 40);
  expect_ints(packed, vector_want, 6, "hvector_c");
  const MPI_Count hvector_args[] = {3, 2, 16};
  expect_envelope(t, MPI_COMBINER_HVECTOR, 0, 0, 3, 1, NULL, hvector_args, ints);
  CHECK_MPI(MPI_Type_free(&t));

  /* indexed and hindexed: blocks out of order */
  const MPI_Count lengths[] = {1, 2, 1};
  const MPI_Count displacements[] = {5, 0, 3};
  const MPI_Count byte_displacements[] = {20, 0, 12};
  const int indexed_want[] = {105, 100, 101, 103};
  CHECK_MPI(MPI_Type_indexed_c(3, lengths, displacements, MPI_INT, &t));
  CHECK_MPI(MPI_Type_commit(&t));
  pack_ints(a, 1, t, packed, 40);
  expect_ints(packed, indexed_want, 4, "indexed_c");
  const MPI_Count indexed_args[] = {3, 1, 2, 1, 5, 0, 3};
  expect_envelope(t, MPI_COMBINER_INDEXED, 0, 0, 7, 1, NULL, indexed_args, ints);
  CHECK_MPI(MPI_Type_free(&t));
  CHECK_MPI(MPI_Type_create_hindexed_c(3, lengths, byte_displacements, MPI_INT, &t));
  CHECK_MPI(MPI_Type_commit(&t));
  pack_ints(a, 1, t, packed, 40);
  expect_ints(packed, indexed_want, 4, "hindexed_c");
  const MPI_Count hindexed_args[] = {3, 1, 2, 1, 20, 0, 12};
  expect_envelope(t, MPI_COMBINER_HINDEXED, 0, 0, 7, 1, NULL, hindexed_args, ints);
  CHECK_MPI(MPI_Type_free(&t));

  /* indexed_block and hindexed_block: blocks of 2 */
  const int block_want[] = {104, 105, 100, 101, 108, 109};
  const MPI_Count block_displacements[] = {4, 0, 8};
  const MPI_Count block_bytes[] = {16, 0, 32};
  CHECK_MPI(MPI_Type_create_indexed_block_c(3, 2, block_displacements, MPI_INT, &t));
  CHECK_MPI(MPI_Type_commit(&t));
  pack_ints(a, 1, t, packed, 40);
  expect_ints(packed, block_want, 6, "indexed_block_c");
  const MPI_Count indexed_block_args[] = {3, 2, 4, 0, 8};
  expect_envelope(t, MPI_COMBINER_INDEXED_BLOCK, 0, 0, 5, 1, NULL, indexed_block_args, ints);
  CHECK_MPI(MPI_Type_free(&t));
  CHECK_MPI(MPI_Type_create_hindexed_block_c(3, 2, block_bytes, MPI_INT, &t));
  CHECK_MPI(MPI_Type_commit(&t));
  pack_ints(a, 1, t, packed, 40);
  expect_ints(packed, block_want, 6, "hindexed_block_c");
  const MPI_Count hindexed_block_args[] = {3, 2, 16, 0, 32};
  expect_envelope(t, MPI_COMBINER_HINDEXED_BLOCK, 0, 0, 5, 1, NULL, hindexed_block_args, ints);
  CHECK_MPI(MPI_Type_free(&t));

  /* struct: an int, then two ints 12 bytes on */
  const MPI_Count struct_lengths[] = {1, 2};
  const MPI_Count struct_displacements[] = {0, 12};
  const MPI_Datatype struct_types[] = {MPI_INT, MPI_SHORT};
  CHECK_MPI(MPI_Type_create_struct_c(2, struct_lengths, struct_displacements, struct_types, &t));
  CHECK_MPI(MPI_Type_commit(&t));
  CHECK_MPI(MPI_Type_size_c(t, &tsize));
  CHECK(tsize == 4 + 2 * (MPI_Count)sizeof(short), "struct_c size %lld", tsize);
  const MPI_Count struct_args[] = {2, 1, 2, 0, 12};
  expect_envelope(t, MPI_COMBINER_STRUCT, 0, 0, 5, 2, NULL, struct_args, struct_types);
  CHECK_MPI(MPI_Type_free(&t));

  /* subarray: rows 1-2, columns 2-4 of a 4 x 6 array, against the classic constructor */
  const MPI_Count sizes[] = {4, 6}, subsizes[] = {2, 3}, starts[] = {1, 2};
  const int isizes[] = {4, 6}, isubsizes[] = {2, 3}, istarts[] = {1, 2};
  const int subarray_want[] = {108, 109, 110, 114, 115, 116};
  CHECK_MPI(MPI_Type_create_subarray_c(2, sizes, subsizes, starts, MPI_ORDER_C, MPI_INT, &t));
  CHECK_MPI(MPI_Type_commit(&t));
  CHECK_MPI(MPI_Type_create_subarray(2, isizes, isubsizes, istarts, MPI_ORDER_C, MPI_INT, &classic));
  CHECK_MPI(MPI_Type_commit(&classic));
  pack_ints(a, 1, t, packed, 40);
  expect_ints(packed, subarray_want, 6, "subarray_c");
  CHECK_MPI(MPI_Type_get_extent_c(t, &lb, &extent));
  CHECK(lb == 0 && extent == 96, "subarray_c: lb %lld extent %lld", lb, extent);
  const int subarray_ints[] = {2, MPI_ORDER_C};
  const MPI_Count subarray_args[] = {4, 6, 2, 3, 1, 2};
  expect_envelope(t, MPI_COMBINER_SUBARRAY, 2, 0, 6, 1, subarray_ints, subarray_args, ints);
  CHECK_MPI(MPI_Type_free(&t));
  CHECK_MPI(MPI_Type_free(&classic));

  /* darray: process 1 of 3 owns a cyclic(2) share of 11, against the classic constructor */
  const MPI_Count gsizes[] = {11};
  const int igsizes[] = {11}, distribs[] = {MPI_DISTRIBUTE_CYCLIC}, dargs[] = {2}, psizes[] = {3};
  const int darray_want[] = {102, 103, 108, 109};
  CHECK_MPI(MPI_Type_create_darray_c(3, 1, 1, gsizes, distribs, dargs, psizes, MPI_ORDER_C, MPI_INT, &t));
  CHECK_MPI(MPI_Type_commit(&t));
  pack_ints(a, 1, t, packed, 40);
  expect_ints(packed, darray_want, 4, "darray_c");
  CHECK_MPI(MPI_Type_create_darray(3, 1, 1, igsizes, distribs, dargs, psizes, MPI_ORDER_C, MPI_INT, &classic));
  CHECK_MPI(MPI_Type_commit(&classic));
  MPI_Count classic_extent = -1;
  CHECK_MPI(MPI_Type_get_extent_c(t, &lb, &extent));
  CHECK_MPI(MPI_Type_get_extent_c(classic, &lb, &classic_extent));
  CHECK(extent == 44 && classic_extent == 44, "darray_c: extent %lld, classic %lld", extent, classic_extent);
  const int darray_ints[] = {3, 1, 1, MPI_DISTRIBUTE_CYCLIC, 2, 3, MPI_ORDER_C};
  const MPI_Count darray_args[] = {11};
  expect_envelope(t, MPI_COMBINER_DARRAY, 7, 0, 1, 1, darray_ints, darray_args, ints);
  CHECK_MPI(MPI_Type_free(&t));
  CHECK_MPI(MPI_Type_free(&classic));

  /* resized */
  CHECK_MPI(MPI_Type_create_resized_c(MPI_INT, -4, 16, &t));
  CHECK_MPI(MPI_Type_get_extent_c(t, &lb, &extent));
  CHECK(lb == -4 && extent == 16, "resized_c: lb %lld extent %lld", lb, extent);
  CHECK_MPI(MPI_Type_get_true_extent_c(t, &lb, &extent));
  CHECK(lb == 0 && extent == 4, "resized_c: true lb %lld true extent %lld", lb, extent);
  const MPI_Count resized_args[] = {-4, 16};
  expect_envelope(t, MPI_COMBINER_RESIZED, 0, 0, 2, 1, NULL, resized_args, ints);
  CHECK_MPI(MPI_Type_free(&t));

  /* A type made by a classic constructor has no large counts. */
  CHECK_MPI(MPI_Type_vector(2, 1, 3, MPI_INT, &t));
  MPI_Count ni = -1, na = -1, nc = -1, nd = -1;
  int combiner = -1;
  CHECK_MPI(MPI_Type_get_envelope_c(t, &ni, &na, &nc, &nd, &combiner));
  CHECK(combiner == MPI_COMBINER_VECTOR && ni == 3 && na == 0 && nc == 0 && nd == 1, "classic vector's envelope_c");
  CHECK_MPI(MPI_Type_free(&t));
  /* No blocks, no arrays: the envelope holds the count alone. */
  CHECK_MPI(MPI_Type_indexed(0, NULL, NULL, MPI_INT, &t));
  CHECK_MPI(MPI_Type_get_envelope_c(t, &ni, &na, &nc, &nd, &combiner));
  CHECK(combiner == MPI_COMBINER_INDEXED && ni == 1 && nc == 0, "empty indexed: %lld integers", ni);
  CHECK_MPI(MPI_Type_free(&t));
  CHECK_MPI(MPI_Type_indexed_c(0, NULL, NULL, MPI_INT, &t));
  CHECK_MPI(MPI_Type_get_envelope_c(t, &ni, &na, &nc, &nd, &combiner));
  CHECK(combiner == MPI_COMBINER_INDEXED && ni == 0 && nc == 1, "empty indexed_c: %lld large counts", nc);
  CHECK_MPI(MPI_Type_size_c(t, &tsize));
  CHECK(tsize == 0, "empty indexed_c: size %lld", tsize);
  CHECK_MPI(MPI_Type_free(&t));
}

static void bad_arguments(void) {
  MPI_Datatype t = MPI_DATATYPE_NULL;
  const MPI_Count negative[] = {1, -2};
  const MPI_Count zeros[] = {0, 0};
  const MPI_Datatype types[] = {MPI_INT, MPI_INT};
  CHECK_CLASS(MPI_ERR_COUNT, MPI_Type_contiguous_c(-1, MPI_INT, &t));
  CHECK_CLASS(MPI_ERR_ARG, MPI_Type_contiguous_c(1, MPI_INT, NULL));
  CHECK_CLASS(MPI_ERR_TYPE, MPI_Type_contiguous_c(1, MPI_DATATYPE_NULL, &t));
  CHECK_CLASS(MPI_ERR_ARG, MPI_Type_vector_c(2, -1, 2, MPI_INT, &t));
  CHECK_CLASS(MPI_ERR_COUNT, MPI_Type_create_hvector_c(-3, 1, 8, MPI_INT, &t));
  CHECK_CLASS(MPI_ERR_ARG, MPI_Type_indexed_c(2, negative, zeros, MPI_INT, &t));
  CHECK_CLASS(MPI_ERR_ARG, MPI_Type_create_hindexed_c(2, zeros, NULL, MPI_INT, &t));
  CHECK_CLASS(MPI_ERR_ARG, MPI_Type_create_indexed_block_c(2, -1, zeros, MPI_INT, &t));
  CHECK_CLASS(MPI_ERR_ARG, MPI_Type_create_hindexed_block_c(2, 1, NULL, MPI_INT, &t));
  CHECK_CLASS(MPI_ERR_ARG, MPI_Type_create_struct_c(2, negative, zeros, types, &t));
  CHECK_CLASS(MPI_ERR_ARG, MPI_Type_create_struct_c(2, zeros, zeros, NULL, &t));
  const MPI_Count sizes[] = {4}, too_big[] = {5}, start[] = {0};
  CHECK_CLASS(MPI_ERR_ARG, MPI_Type_create_subarray_c(1, sizes, too_big, start, MPI_ORDER_C, MPI_INT, &t));
  CHECK_CLASS(MPI_ERR_ARG, MPI_Type_create_subarray_c(1, sizes, sizes, start, 99, MPI_INT, &t));
  const MPI_Count gsizes[] = {0};
  const int distribs[] = {MPI_DISTRIBUTE_BLOCK}, dargs[] = {MPI_DISTRIBUTE_DFLT_DARG}, psizes[] = {1};
  CHECK_CLASS(MPI_ERR_ARG, MPI_Type_create_darray_c(1, 0, 1, gsizes, distribs, dargs, psizes, MPI_ORDER_C, MPI_INT, &t));
  CHECK_CLASS(MPI_ERR_TYPE, MPI_Type_create_resized_c(MPI_DATATYPE_NULL, 0, 4, &t));
  MPI_Count n = 0;
  int combiner = 0;
  CHECK_CLASS(MPI_ERR_ARG, MPI_Type_get_envelope_c(MPI_INT, &n, &n, NULL, &n, &combiner));
  int i4[4];
  MPI_Aint a4[4];
  MPI_Count c4[4];
  MPI_Datatype d4[4];
  CHECK_CLASS(MPI_ERR_TYPE, MPI_Type_get_contents_c(MPI_INT, 4, 4, 4, 4, i4, a4, c4, d4));
  /* Pack calls */
  int data[4] = {1, 2, 3, 4};
  char buffer[64];
  MPI_Count position = 0;
  CHECK_CLASS(MPI_ERR_COUNT, MPI_Pack_c(data, -1, MPI_INT, buffer, 64, &position, MPI_COMM_WORLD));
  CHECK_CLASS(MPI_ERR_TRUNCATE, MPI_Pack_c(data, 4, MPI_INT, buffer, 15, &position, MPI_COMM_WORLD));
  CHECK(position == 0, "a failed MPI_Pack_c moved the position to %lld", position);
  CHECK_CLASS(MPI_ERR_COMM, MPI_Pack_c(data, 4, MPI_INT, buffer, 64, &position, MPI_COMM_NULL));
  CHECK_CLASS(MPI_ERR_ARG, MPI_Pack_c(data, 4, MPI_INT, buffer, 64, NULL, MPI_COMM_WORLD));
  position = 4;
  CHECK_CLASS(MPI_ERR_TRUNCATE, MPI_Unpack_c(buffer, 16, &position, data, 4, MPI_INT, MPI_COMM_WORLD));
  CHECK_CLASS(MPI_ERR_COUNT, MPI_Pack_size_c(-2, MPI_INT, MPI_COMM_WORLD, &n));
  CHECK_CLASS(MPI_ERR_UNSUPPORTED_DATAREP, MPI_Pack_external_size_c("native", 1, MPI_INT, &n));
  position = 0;
  CHECK_CLASS(MPI_ERR_TRUNCATE, MPI_Pack_external_c("external32", data, 4, MPI_INT, buffer, 12, &position));
  CHECK_CLASS(MPI_ERR_ARG, MPI_Op_create_c(NULL, 1, (MPI_Op *)buffer));
}

static void pack_round_trip(void) {
  /* Two vector items into one buffer, then back into zeroed memory: the same ints where the type has
   * data, zeros in its holes. */
  int source[16], back[16];
  for (int i = 0; i < 16; ++i) source[i] = 7 * i + 1;
  MPI_Datatype t;
  CHECK_MPI(MPI_Type_vector_c(2, 3, 4, MPI_INT, &t)); /* extent 7 ints */
  CHECK_MPI(MPI_Type_commit(&t));
  char buffer[128];
  MPI_Count position = 8; /* after a header */
  CHECK_MPI(MPI_Pack_c(source, 2, t, buffer, sizeof buffer, &position, MPI_COMM_WORLD));
  CHECK(position == 8 + 12 * 4, "MPI_Pack_c position %lld", position);
  memset(back, 0, sizeof back);
  MPI_Count in = 8;
  CHECK_MPI(MPI_Unpack_c(buffer, position, &in, back, 2, t, MPI_COMM_WORLD));
  CHECK(in == position, "MPI_Unpack_c position %lld", in);
  for (int i = 0; i < 14; ++i) {
    const int k = i % 7; /* item offset: blocks at 0-2 and 4-6 */
    const int want = k == 3 ? 0 : source[i];
    CHECK(back[i] == want, "unpacked int %d is %d, not %d", i, back[i], want);
  }
  /* external32: big-endian ints, the same data */
  unsigned char external[128];
  MPI_Count external_size = -1;
  CHECK_MPI(MPI_Pack_external_size_c("external32", 2, t, &external_size));
  CHECK(external_size == 48, "MPI_Pack_external_size_c: %lld", external_size);
  position = 0;
  CHECK_MPI(MPI_Pack_external_c("external32", source, 2, t, external, sizeof external, &position));
  CHECK(position == 48, "MPI_Pack_external_c position %lld", position);
  const int first_of_second_block = source[4];
  const unsigned char *bytes = external + 12; /* the 4th int packed */
  const int decoded = (bytes[0] << 24) | (bytes[1] << 16) | (bytes[2] << 8) | bytes[3];
  CHECK(decoded == first_of_second_block, "external32 int 3 is %d, not %d", decoded, first_of_second_block);
  memset(back, 0, sizeof back);
  in = 0;
  CHECK_MPI(MPI_Unpack_external_c("external32", external, position, &in, back, 2, t));
  CHECK(in == 48 && back[12] == source[12] && back[3] == 0, "MPI_Unpack_external_c");
  CHECK_MPI(MPI_Type_free(&t));
}

static void large_types(void) {
  /* 2^31 + 5 bytes in one item: one piece, committed at once. */
  const MPI_Count big = ((MPI_Count)1 << 31) + 5;
  MPI_Datatype t;
  CHECK_MPI(MPI_Type_contiguous_c(big, MPI_BYTE, &t));
  CHECK_MPI(MPI_Type_commit(&t));
  MPI_Count tsize = 0, lb = -1, extent = -1;
  int small_size = 0;
  CHECK_MPI(MPI_Type_size_c(t, &tsize));
  CHECK_MPI(MPI_Type_size(t, &small_size));
  CHECK_MPI(MPI_Type_get_true_extent_c(t, &lb, &extent));
  CHECK(tsize == big && small_size == MPI_UNDEFINED && lb == 0 && extent == big,
        "2^31 + 5 bytes: size %lld (int %d), true extent %lld", tsize, small_size, extent);
  MPI_Count packed = 0;
  int small_packed = 0;
  CHECK_MPI(MPI_Pack_size_c(1, t, MPI_COMM_WORLD, &packed));
  CHECK(packed == big, "MPI_Pack_size_c: %lld", packed);
  CHECK_CLASS(MPI_ERR_COUNT, MPI_Pack_size(1, t, MPI_COMM_WORLD, &small_packed));
  /* 2^21 of those: 2^52 bytes, still one piece; the size overflows 64 bits at 2^33 more. */
  MPI_Datatype huge;
  CHECK_MPI(MPI_Type_contiguous_c((MPI_Count)1 << 21, t, &huge));
  CHECK_MPI(MPI_Type_commit(&huge));
  CHECK_MPI(MPI_Type_size_c(huge, &tsize));
  CHECK(tsize == big << 21, "2^21 items of 2^31 + 5 bytes: %lld", tsize);
  MPI_Datatype too_big = MPI_DATATYPE_NULL;
  CHECK_CLASS(MPI_ERR_COUNT, MPI_Type_contiguous_c((MPI_Count)1 << 33, huge, &too_big));
  CHECK_CLASS(MPI_ERR_COUNT, MPI_Pack_size_c((MPI_Count)1 << 40, huge, MPI_COMM_WORLD, &packed));
  CHECK_MPI(MPI_Type_free(&huge));
  CHECK_MPI(MPI_Type_free(&t));
  /* A displacement that overflows, a list of blocks no machine holds, a layout too large to flatten. */
  CHECK_CLASS(MPI_ERR_COUNT, MPI_Type_create_hvector_c(3, 1, (MPI_Count)1 << 62, MPI_INT, &too_big));
  CHECK_CLASS(MPI_ERR_COUNT, MPI_Type_vector_c(3, 1, (MPI_Count)1 << 62, MPI_INT, &too_big));
  CHECK_CLASS(MPI_ERR_NO_MEM, MPI_Type_vector_c((MPI_Count)1 << 50, 1, 2, MPI_INT, &too_big));
  MPI_Datatype holes;
  CHECK_MPI(MPI_Type_vector_c(1024, 1, 2, MPI_INT, &holes));
  CHECK_MPI(MPI_Type_contiguous_c((MPI_Count)1 << 40, holes, &huge));
  CHECK_MPI(MPI_Type_size_c(huge, &tsize));
  CHECK(tsize == (MPI_Count)4096 << 40, "2^40 vectors: size %lld", tsize);
  CHECK_CLASS(MPI_ERR_NO_MEM, MPI_Type_commit(&huge));
  CHECK_MPI(MPI_Type_free(&huge));
  CHECK_MPI(MPI_Type_free(&holes));
}

/* A vector type of a _c constructor, sent to the next rank and received as plain ints. */
static void ring(void) {
  const int next = (rank + 1) % size, previous = (rank + size - 1) % size;
  int out[12], in[6];
  for (int i = 0; i < 12; ++i) out[i] = rank * 100 + i;
  MPI_Datatype t;
  CHECK_MPI(MPI_Type_vector_c(3, 2, 4, MPI_INT, &t));
  CHECK_MPI(MPI_Type_commit(&t));
  MPI_Status status;
  CHECK_MPI(MPI_Sendrecv_c(out, 1, t, next, 5, in, 6, MPI_INT, previous, 5, MPI_COMM_WORLD, &status));
  const int want[] = {0, 1, 4, 5, 8, 9};
  for (int i = 0; i < 6; ++i) {
    CHECK(in[i] == previous * 100 + want[i], "ring: int %d is %d, not %d", i, in[i], previous * 100 + want[i]);
  }
  CHECK_MPI(MPI_Type_free(&t));
}

static MPI_Count calls_len;

static void sum_c(void *invec, void *inoutvec, MPI_Count *len, MPI_Datatype *datatype) {
  CHECK(*datatype == MPI_INT, "MPI_User_function_c got another datatype");
  calls_len += *len;
  const int *in = invec;
  int *inout = inoutvec;
  for (MPI_Count i = 0; i < *len; ++i) inout[i] += in[i];
}

static void user_op(void) {
  MPI_Op op;
  CHECK_MPI(MPI_Op_create_c(sum_c, 1, &op));
  int commute = 0;
  CHECK_MPI(MPI_Op_commutative(op, &commute));
  CHECK(commute == 1, "MPI_Op_create_c lost commute");
  int mine[7], all[7];
  for (int i = 0; i < 7; ++i) mine[i] = rank * 10 + i;
  CHECK_MPI(MPI_Allreduce_c(mine, all, 7, MPI_INT, op, MPI_COMM_WORLD));
  for (int i = 0; i < 7; ++i) {
    const int want = 10 * size * (size - 1) / 2 + size * i;
    CHECK(all[i] == want, "MPI_Allreduce_c with MPI_Op_create_c: %d is %d, not %d", i, all[i], want);
  }
  calls_len = 0;
  int inout[3] = {1, 2, 3};
  const int in[3] = {10, 20, 30};
  CHECK_MPI(MPI_Reduce_local(in, inout, 3, MPI_INT, op));
  CHECK(calls_len == 3 && inout[0] == 11 && inout[2] == 33, "MPI_Reduce_local with MPI_Op_create_c: len %lld",
        calls_len);
  CHECK_MPI(MPI_Op_free(&op));
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  constructors();
  bad_arguments();
  pack_round_trip();
  large_types();
  ring();
  user_op();
  MPI_Finalize();
  if (rank == 0) printf("large_count_types: ok\n");
  return 0;
}

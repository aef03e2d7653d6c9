/* Derived datatypes: every constructor's size, bounds and extents (with MPI's alignment padding for
 * structs), names, dup, commit and free; MPI_Pack/MPI_Unpack/MPI_Pack_size; MPI_Get_address with
 * MPI_BOTTOM; and point-to-point messages of derived types (blocking, nonblocking, persistent,
 * buffered, sendrecv_replace, probe), where only the type signatures must match: a strided send
 * arrives in a contiguous receive and back, MPI_Get_count and MPI_Get_elements count what arrived.
 * Runs at 2 ranks (and checks what it can at 1). */
#include <stddef.h>
#include <string.h>

#include "check.h"

static int rank;
static int size;

static void check_extent(MPI_Datatype type, MPI_Aint lb, MPI_Aint extent, MPI_Aint true_lb, MPI_Aint true_extent,
                         int type_size, const char *what) {
  MPI_Aint a = -1, b = -1;
  int s = -1;
  CHECK_MPI(MPI_Type_get_extent(type, &a, &b));
  CHECK(a == lb && b == extent, "%s: lb %ld extent %ld, expected %ld %ld", what, (long)a, (long)b, (long)lb,
        (long)extent);
  CHECK_MPI(MPI_Type_get_true_extent(type, &a, &b));
  CHECK(a == true_lb && b == true_extent, "%s: true lb %ld true extent %ld, expected %ld %ld", what, (long)a,
        (long)b, (long)true_lb, (long)true_extent);
  CHECK_MPI(MPI_Type_size(type, &s));
  CHECK(s == type_size, "%s: size %d, expected %d", what, s, type_size);
}

static void test_constructors(void) {
  const MPI_Aint i4 = sizeof(int), d8 = sizeof(double);
  MPI_Datatype t;
  CHECK_MPI(MPI_Type_contiguous(5, MPI_INT, &t));
  check_extent(t, 0, 5 * i4, 0, 5 * i4, 5 * 4, "contiguous(5, int)");
  CHECK_MPI(MPI_Type_free(&t));
  CHECK(t == MPI_DATATYPE_NULL, "MPI_Type_free did not reset the handle");

  CHECK_MPI(MPI_Type_vector(3, 2, 4, MPI_DOUBLE, &t)); /* xx..xx..xx */
  check_extent(t, 0, 10 * d8, 0, 10 * d8, 6 * 8, "vector(3, 2, 4, double)");
  CHECK_MPI(MPI_Type_free(&t));
  CHECK_MPI(MPI_Type_vector(3, 1, -2, MPI_INT, &t)); /* a negative stride: elements at 0, -2, -4 */
  check_extent(t, -4 * i4, 5 * i4, -4 * i4, 5 * i4, 3 * 4, "vector with negative stride");
  CHECK_MPI(MPI_Type_free(&t));
  CHECK_MPI(MPI_Type_create_hvector(2, 3, 100, MPI_CHAR, &t));
  check_extent(t, 0, 103, 0, 103, 6, "hvector(2, 3, 100 bytes, char)");
  CHECK_MPI(MPI_Type_free(&t));

  const int lengths[3] = {2, 0, 1};
  const int displs[3] = {5, 1, 0};
  CHECK_MPI(MPI_Type_indexed(3, lengths, displs, MPI_INT, &t));
  check_extent(t, 0, 7 * i4, 0, 7 * i4, 3 * 4, "indexed");
  CHECK_MPI(MPI_Type_free(&t));
  const MPI_Aint hdispls[2] = {16, 2};
  const int hlengths[2] = {1, 1};
  CHECK_MPI(MPI_Type_create_hindexed(2, hlengths, hdispls, MPI_SHORT, &t));
  check_extent(t, 2, 16, 2, 16, 4, "hindexed");
  CHECK_MPI(MPI_Type_free(&t));
  const int bdispls[3] = {4, 0, 8};
  CHECK_MPI(MPI_Type_create_indexed_block(3, 2, bdispls, MPI_FLOAT, &t));
  check_extent(t, 0, 10 * 4, 0, 10 * 4, 6 * 4, "indexed_block");
  CHECK_MPI(MPI_Type_free(&t));
  const MPI_Aint hbdispls[2] = {0, 24};
  CHECK_MPI(MPI_Type_create_hindexed_block(2, 1, hbdispls, MPI_DOUBLE, &t));
  check_extent(t, 0, 32, 0, 32, 16, "hindexed_block");
  CHECK_MPI(MPI_Type_free(&t));

  /* A struct of (char, double, int): the extent is padded to the double's alignment, as C does. */
  struct record {
    char c;
    double d;
    int i;
  };
  const int slengths[3] = {1, 1, 1};
  const MPI_Aint sdispls[3] = {offsetof(struct record, c), offsetof(struct record, d), offsetof(struct record, i)};
  const MPI_Datatype stypes[3] = {MPI_CHAR, MPI_DOUBLE, MPI_INT};
  CHECK_MPI(MPI_Type_create_struct(3, slengths, sdispls, stypes, &t));
  check_extent(t, 0, sizeof(struct record), 0, offsetof(struct record, i) + 4, 1 + 8 + 4, "struct");
  MPI_Datatype resized, dup;
  CHECK_MPI(MPI_Type_create_resized(t, -8, 64, &resized));
  check_extent(resized, -8, 64, 0, offsetof(struct record, i) + 4, 13, "resized");
  CHECK_MPI(MPI_Type_dup(resized, &dup));
  check_extent(dup, -8, 64, 0, offsetof(struct record, i) + 4, 13, "dup");
  CHECK_MPI(MPI_Type_free(&dup));
  CHECK_MPI(MPI_Type_free(&resized));
  /* A type made from a freed one still works. */
  MPI_Datatype two;
  CHECK_MPI(MPI_Type_contiguous(2, t, &two));
  CHECK_MPI(MPI_Type_free(&t));
  CHECK_MPI(MPI_Type_commit(&two));
  check_extent(two, 0, 2 * sizeof(struct record), 0, sizeof(struct record) + offsetof(struct record, i) + 4, 26,
               "contiguous(2, freed struct)");

  /* Names. */
  char name[MPI_MAX_OBJECT_NAME];
  int len = -1;
  CHECK_MPI(MPI_Type_get_name(MPI_DOUBLE, name, &len));
  CHECK(strcmp(name, "MPI_DOUBLE") == 0 && len == 10, "predefined name '%s'", name);
  CHECK_MPI(MPI_Type_get_name(two, name, &len));
  CHECK(len == 0, "a new type has a name: '%s'", name);
  CHECK_MPI(MPI_Type_set_name(two, "two records"));
  CHECK_MPI(MPI_Type_get_name(two, name, &len));
  CHECK(strcmp(name, "two records") == 0, "set name '%s'", name);
  MPI_Count big = 0;
  CHECK_MPI(MPI_Type_size_x(two, &big));
  CHECK(big == 26, "MPI_Type_size_x %lld", big);
  CHECK_MPI(MPI_Type_free(&two));

  /* Errors. */
  CHECK_MPI(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
  MPI_Datatype predefined = MPI_INT;
  CHECK_CLASS(MPI_ERR_TYPE, MPI_Type_free(&predefined));
  CHECK_CLASS(MPI_ERR_COUNT, MPI_Type_contiguous(-1, MPI_INT, &t));
  CHECK_CLASS(MPI_ERR_TYPE, MPI_Type_vector(2, 1, 1, MPI_DATATYPE_NULL, &t));
  const int negative[1] = {-1};
  CHECK_CLASS(MPI_ERR_ARG, MPI_Type_indexed(1, negative, displs, MPI_INT, &t));
  CHECK_MPI(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
}

static void test_pack(void) {
  MPI_Datatype every_other;
  CHECK_MPI(MPI_Type_vector(4, 1, 2, MPI_INT, &every_other));
  CHECK_MPI(MPI_Type_commit(&every_other));
  int in[16], out[16];
  for (int i = 0; i < 16; ++i) {
    in[i] = i;
    out[i] = -1;
  }
  int packed_size = -1;
  CHECK_MPI(MPI_Pack_size(2, every_other, MPI_COMM_WORLD, &packed_size));
  CHECK(packed_size == 8 * (int)sizeof(int), "pack size %d", packed_size);
  char buffer[64];
  int position = 0;
  double d = 2.5;
  CHECK_MPI(MPI_Pack(&d, 1, MPI_DOUBLE, buffer, sizeof buffer, &position, MPI_COMM_WORLD));
  /* The vector's extent is 7 ints: a second item starts at in[7]. */
  CHECK_MPI(MPI_Pack(in, 2, every_other, buffer, sizeof buffer, &position, MPI_COMM_WORLD));
  CHECK(position == 8 + 32, "position after packing %d", position);
  int packed[8];
  memcpy(packed, buffer + 8, sizeof packed);
  const int want[8] = {0, 2, 4, 6, 7, 9, 11, 13};
  for (int i = 0; i < 8; ++i) CHECK(packed[i] == want[i], "packed [%d] = %d", i, packed[i]);
  /* Resized to 8 ints, items abut in the vector's stride: one strided run of 8 ints. */
  MPI_Datatype abutting;
  CHECK_MPI(MPI_Type_create_resized(every_other, 0, 8 * (MPI_Aint)sizeof(int), &abutting));
  CHECK_MPI(MPI_Type_commit(&abutting));
  char abutting_buffer[64];
  position = 0;
  CHECK_MPI(MPI_Pack(in, 2, abutting, abutting_buffer, sizeof abutting_buffer, &position, MPI_COMM_WORLD));
  memcpy(packed, abutting_buffer, sizeof packed);
  for (int i = 0; i < 8; ++i) CHECK(packed[i] == 2 * i, "abutting packed [%d] = %d", i, packed[i]);
  CHECK_MPI(MPI_Type_free(&abutting));
  position = 0;
  double e = 0;
  CHECK_MPI(MPI_Unpack(buffer, 40, &position, &e, 1, MPI_DOUBLE, MPI_COMM_WORLD));
  CHECK_MPI(MPI_Unpack(buffer, 40, &position, out, 2, every_other, MPI_COMM_WORLD));
  CHECK(e == 2.5 && position == 40, "unpack");
  for (int i = 0; i < 16; ++i) {
    const int in_type = (i < 7 && i % 2 == 0) || (i >= 7 && i < 14 && (i - 7) % 2 == 0);
    CHECK(out[i] == (in_type ? i : -1), "unpacked [%d] = %d", i, out[i]);
  }
  CHECK_MPI(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
  position = 40;
  CHECK_CLASS(MPI_ERR_TRUNCATE, MPI_Pack(in, 2, every_other, buffer, sizeof buffer, &position, MPI_COMM_WORLD));
  position = 0;
  CHECK_CLASS(MPI_ERR_TRUNCATE, MPI_Unpack(buffer, 16, &position, out, 2, every_other, MPI_COMM_WORLD));
  CHECK_MPI(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
  CHECK_MPI(MPI_Type_free(&every_other));

  /* MPI_BOTTOM with absolute addresses. */
  int a = 7;
  double b = 1.25;
  MPI_Aint addresses[2];
  CHECK_MPI(MPI_Get_address(&a, &addresses[0]));
  CHECK_MPI(MPI_Get_address(&b, &addresses[1]));
  CHECK(MPI_Aint_diff(addresses[1], addresses[0]) == (char *)&b - (char *)&a, "MPI_Aint_diff");
  CHECK(MPI_Aint_add(addresses[0], 4) == addresses[0] + 4, "MPI_Aint_add");
  const int lengths[2] = {1, 1};
  const MPI_Datatype types[2] = {MPI_INT, MPI_DOUBLE};
  MPI_Datatype absolute;
  CHECK_MPI(MPI_Type_create_struct(2, lengths, addresses, types, &absolute));
  CHECK_MPI(MPI_Type_commit(&absolute));
  position = 0;
  CHECK_MPI(MPI_Pack(MPI_BOTTOM, 1, absolute, buffer, sizeof buffer, &position, MPI_COMM_WORLD));
  CHECK(position == 12 && memcmp(buffer, &a, 4) == 0 && memcmp(buffer + 4, &b, 8) == 0, "pack from MPI_BOTTOM");
  CHECK_MPI(MPI_Type_free(&absolute));

  /* MPI_Alloc_mem gives usable memory. */
  double *memory = NULL;
  CHECK_MPI(MPI_Alloc_mem(16 * sizeof(double), MPI_INFO_NULL, &memory));
  CHECK(memory != NULL, "MPI_Alloc_mem");
  for (int i = 0; i < 16; ++i) memory[i] = i;
  CHECK_MPI(MPI_Free_mem(memory));
}

static void test_messages(void) {
  if (size < 2) return;
  const int peer = 1 - rank;
  MPI_Datatype column; /* one column of a 4 x 4 matrix of doubles */
  CHECK_MPI(MPI_Type_vector(4, 1, 4, MPI_DOUBLE, &column));
  CHECK_MPI(MPI_Type_commit(&column));
  double matrix[16], flat[4];
  MPI_Status status;
  int count = -1;
  if (rank == 0) {
    for (int i = 0; i < 16; ++i) matrix[i] = i;
    /* Column 1 goes as a strided type, arrives as 4 contiguous doubles. */
    CHECK_MPI(MPI_Send(matrix + 1, 1, column, peer, 0, MPI_COMM_WORLD));
    /* And comes back into column 2 of a fresh matrix. */
    for (int i = 0; i < 16; ++i) matrix[i] = -1;
    CHECK_MPI(MPI_Recv(matrix + 2, 1, column, peer, 1, MPI_COMM_WORLD, &status));
    for (int i = 0; i < 16; ++i) CHECK(matrix[i] == (i % 4 == 2 ? (i / 4) * 4 + 1 : -1), "column back [%d]", i);
    CHECK_MPI(MPI_Get_count(&status, column, &count));
    CHECK(count == 1, "MPI_Get_count of a column: %d", count);
    CHECK_MPI(MPI_Get_elements(&status, column, &count));
    CHECK(count == 4, "MPI_Get_elements of a column: %d", count);
  } else {
    CHECK_MPI(MPI_Recv(flat, 4, MPI_DOUBLE, peer, 0, MPI_COMM_WORLD, &status));
    for (int i = 0; i < 4; ++i) CHECK(flat[i] == i * 4 + 1, "column as doubles [%d] = %g", i, flat[i]);
    CHECK_MPI(MPI_Send(flat, 4, MPI_DOUBLE, peer, 1, MPI_COMM_WORLD));
  }

  /* Nonblocking, persistent and a partial message: 3 of a column's 4 doubles arrive. */
  for (int i = 0; i < 16; ++i) matrix[i] = rank * 100 + i;
  MPI_Request requests[2];
  CHECK_MPI(MPI_Irecv(flat, 4, MPI_DOUBLE, peer, 2, MPI_COMM_WORLD, &requests[0]));
  CHECK_MPI(MPI_Isend(matrix, 1, column, peer, 2, MPI_COMM_WORLD, &requests[1]));
  CHECK_MPI(MPI_Waitall(2, requests, MPI_STATUSES_IGNORE));
  for (int i = 0; i < 4; ++i) CHECK(flat[i] == peer * 100 + i * 4, "isend of a column [%d]", i);
  MPI_Request persistent;
  double out[16];
  for (int i = 0; i < 16; ++i) out[i] = -1;
  CHECK_MPI(MPI_Recv_init(out, 1, column, peer, 3, MPI_COMM_WORLD, &persistent));
  for (int round = 0; round < 3; ++round) {
    CHECK_MPI(MPI_Start(&persistent));
    const double three[3] = {round, round + 0.5, round + 0.25};
    CHECK_MPI(MPI_Send(three, 3, MPI_DOUBLE, peer, 3, MPI_COMM_WORLD));
    CHECK_MPI(MPI_Wait(&persistent, &status));
    CHECK(out[0] == round && out[4] == round + 0.5 && out[8] == round + 0.25 && out[12] == -1 && out[1] == -1,
          "partial column, round %d", round);
    CHECK_MPI(MPI_Get_count(&status, column, &count));
    CHECK(count == MPI_UNDEFINED, "MPI_Get_count of 3/4 column: %d", count);
    CHECK_MPI(MPI_Get_elements(&status, column, &count));
    CHECK(count == 3, "MPI_Get_elements of 3/4 column: %d", count);
  }
  CHECK_MPI(MPI_Request_free(&persistent));

  /* A struct message, probed first, against the same signature built another way. */
  struct pair {
    double value;
    int index;
  } pairs[3] = {{1.5, 1}, {2.5, 2}, {3.5, 3}}, got[3];
  if (rank == 0) {
    CHECK_MPI(MPI_Ssend(pairs, 3, MPI_DOUBLE_INT, peer, 4, MPI_COMM_WORLD));
  } else {
    CHECK_MPI(MPI_Probe(peer, 4, MPI_COMM_WORLD, &status));
    CHECK_MPI(MPI_Get_count(&status, MPI_DOUBLE_INT, &count));
    CHECK(count == 3, "probed count %d", count);
    const int lengths[2] = {1, 1};
    const MPI_Aint displs[2] = {offsetof(struct pair, value), offsetof(struct pair, index)};
    const MPI_Datatype types[2] = {MPI_DOUBLE, MPI_INT};
    MPI_Datatype mine;
    CHECK_MPI(MPI_Type_create_struct(2, lengths, displs, types, &mine));
    CHECK_MPI(MPI_Type_commit(&mine));
    CHECK_MPI(MPI_Recv(got, 3, mine, peer, 4, MPI_COMM_WORLD, &status));
    for (int i = 0; i < 3; ++i) CHECK(got[i].value == pairs[i].value && got[i].index == pairs[i].index, "struct [%d]", i);
    CHECK_MPI(MPI_Get_elements(&status, mine, &count));
    CHECK(count == 6, "elements of 3 structs: %d", count);
    CHECK_MPI(MPI_Type_free(&mine));
  }

  /* Buffered, and sendrecv_replace of a strided type. */
  int attached = 1024;
  char *bsend_buffer = malloc((size_t)attached);
  CHECK_MPI(MPI_Buffer_attach(bsend_buffer, attached));
  for (int i = 0; i < 16; ++i) matrix[i] = rank * 100 + i;
  if (rank == 0) {
    CHECK_MPI(MPI_Bsend(matrix + 3, 1, column, peer, 5, MPI_COMM_WORLD));
  } else {
    CHECK_MPI(MPI_Recv(flat, 4, MPI_DOUBLE, peer, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    for (int i = 0; i < 4; ++i) CHECK(flat[i] == 3 + i * 4, "bsend of a column [%d]", i);
  }
  void *detached = NULL;
  CHECK_MPI(MPI_Buffer_detach(&detached, &attached));
  free(bsend_buffer);
  CHECK_MPI(MPI_Sendrecv_replace(matrix, 1, column, peer, 6, peer, 6, MPI_COMM_WORLD, &status));
  for (int i = 0; i < 16; ++i) {
    CHECK(matrix[i] == (i % 4 == 0 ? peer * 100 + i : rank * 100 + i), "sendrecv_replace [%d] = %g", i, matrix[i]);
  }
  CHECK_MPI(MPI_Type_free(&column));

  /* A large strided message (rendezvous, and single copy where the engine uses it). */
  enum { n = 1 << 16 };
  MPI_Datatype every_third;
  CHECK_MPI(MPI_Type_vector(n, 1, 3, MPI_INT, &every_third));
  CHECK_MPI(MPI_Type_commit(&every_third));
  int *big = malloc(3 * (size_t)n * sizeof(int)), *dense = malloc((size_t)n * sizeof(int));
  if (rank == 0) {
    for (int i = 0; i < 3 * n; ++i) big[i] = i;
    CHECK_MPI(MPI_Send(big, 1, every_third, peer, 7, MPI_COMM_WORLD));
  } else {
    CHECK_MPI(MPI_Recv(dense, n, MPI_INT, peer, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    for (int i = 0; i < n; ++i) CHECK(dense[i] == 3 * i, "large strided [%d] = %d", i, dense[i]);
  }
  free(big);
  free(dense);

  /* The engine scatters into a receive's pieces, whatever way the bytes come:
   * - dense into strided, large: single copy (process_vm_readv into many blocks) on shared memory,
   *   checksummed fragments elsewhere;
   * - strided into strided with another stride: streamed, gathered at the sender;
   * - small and unexpected: buffered whole, scattered when the receive is posted.
   * The holes of a strided receive must stay untouched. */
  MPI_Datatype every_other;
  CHECK_MPI(MPI_Type_vector(n, 1, 2, MPI_INT, &every_other));
  CHECK_MPI(MPI_Type_commit(&every_other));
  int *wide = malloc(3 * (size_t)n * sizeof(int)), *flat_n = malloc((size_t)n * sizeof(int));
  if (rank == 0) {
    for (int i = 0; i < n; ++i) flat_n[i] = 7 * i + 1;
    CHECK_MPI(MPI_Send(flat_n, n, MPI_INT, peer, 8, MPI_COMM_WORLD));
    for (int i = 0; i < 3 * n; ++i) wide[i] = -i;
    CHECK_MPI(MPI_Send(wide, 1, every_third, peer, 9, MPI_COMM_WORLD));
  } else {
    for (int i = 0; i < 3 * n; ++i) wide[i] = -1;
    CHECK_MPI(MPI_Recv(wide, 1, every_third, peer, 8, MPI_COMM_WORLD, &status));
    CHECK_MPI(MPI_Get_count(&status, every_third, &count));
    CHECK(count == 1, "dense into strided: count %d", count);
    for (int i = 0; i < 3 * n; ++i) {
      const int want = i % 3 == 0 ? 7 * (i / 3) + 1 : -1;
      CHECK(wide[i] == want, "dense into strided [%d] = %d, expected %d", i, wide[i], want);
    }
    for (int i = 0; i < 2 * n; ++i) wide[i] = -1;
    CHECK_MPI(MPI_Recv(wide, 1, every_other, peer, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    for (int i = 0; i < 2 * n; ++i) {
      const int want = i % 2 == 0 ? -3 * (i / 2) : -1;
      CHECK(wide[i] == want, "strided into strided [%d] = %d, expected %d", i, wide[i], want);
    }
  }
  enum { small = 100 };
  if (rank == 0) {
    for (int i = 0; i < 3 * small; ++i) wide[i] = 1000 + i;
    CHECK_MPI(MPI_Send(wide, small, MPI_INT, peer, 10, MPI_COMM_WORLD));  /* eager: arrives unexpected */
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
  } else {
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    MPI_Datatype small_stride;
    CHECK_MPI(MPI_Type_vector(small, 1, 3, MPI_INT, &small_stride));
    CHECK_MPI(MPI_Type_commit(&small_stride));
    for (int i = 0; i < 3 * small; ++i) wide[i] = -1;
    MPI_Request request;
    CHECK_MPI(MPI_Irecv(wide, 1, small_stride, peer, 10, MPI_COMM_WORLD, &request));
    CHECK_MPI(MPI_Type_free(&small_stride)); /* MPI: the pending receive still completes */
    CHECK_MPI(MPI_Wait(&request, MPI_STATUS_IGNORE));
    for (int i = 0; i < 3 * small; ++i) {
      const int want = i % 3 == 0 ? 1000 + i / 3 : -1;
      CHECK(wide[i] == want, "unexpected into strided [%d] = %d, expected %d", i, wide[i], want);
    }
  }
  free(wide);
  free(flat_n);
  CHECK_MPI(MPI_Type_free(&every_other));
  CHECK_MPI(MPI_Type_free(&every_third));
}

int main(int argc, char **argv) {
  CHECK_MPI(MPI_Init(&argc, &argv));
  CHECK_MPI(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
  CHECK_MPI(MPI_Comm_size(MPI_COMM_WORLD, &size));
  test_constructors();
  test_pack();
  test_messages();
  CHECK_MPI(MPI_Finalize());
  if (rank == 0) printf("datatypes on %d ranks: ok\n", size);
  return 0;
}

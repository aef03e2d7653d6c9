/* MPI-4's large-count (_c) point-to-point calls and the MPI_Count queries, at 2 ranks:
 *   - every _c send and receive form, blocking, nonblocking, persistent, buffered, matched, with small
 *     counts, against the statuses and data they must give;
 *   - MPI_Get_count_c / MPI_Get_elements_c / _x, MPI_Type_size_c, MPI_Type_get_extent_c / _x and the
 *     true extents; a negative MPI_Count is MPI_ERR_COUNT;
 *   - the _c form of every collective, blocking, nonblocking and persistent;
 *   - with argv[1] = "big": one message of 2^31 + 4099 bytes (more than an int counts) from rank 0 to
 *     rank 1, checked byte for byte (MPI_Get_count then says MPI_UNDEFINED and MPI_Get_count_c the
 *     size), then broadcast back with MPI_Bcast_c. Skipped (printing "skipped:") when the machine has
 *     less than 12 GiB available. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

static int rank;

static void small_forms(void) {
  const int other = 1 - rank;
  double out[5], in[5];
  for (int k = 0; k < 5; ++k) out[k] = rank * 10 + k + 0.5;
  const MPI_Count n = 5;
  MPI_Status status;
  MPI_Count got = -1;

  /* Blocking standard, synchronous: rank 0 sends first. */
  if (rank == 0) {
    CHECK_MPI(MPI_Send_c(out, n, MPI_DOUBLE, other, 1, MPI_COMM_WORLD));
    CHECK_MPI(MPI_Ssend_c(out, n, MPI_DOUBLE, other, 2, MPI_COMM_WORLD));
  } else {
    for (int tag = 1; tag <= 2; ++tag) {
      memset(in, 0, sizeof in);
      CHECK_MPI(MPI_Recv_c(in, n, MPI_DOUBLE, other, tag, MPI_COMM_WORLD, &status));
      CHECK_MPI(MPI_Get_count_c(&status, MPI_DOUBLE, &got));
      CHECK(got == 5 && status.MPI_TAG == tag && in[4] == 4.5, "tag %d: count %lld, last %g", tag, got, in[4]);
    }
  }
  /* Ready send to a receive posted before a barrier. */
  MPI_Request request = MPI_REQUEST_NULL;
  if (rank == 1) CHECK_MPI(MPI_Irecv_c(in, n, MPI_DOUBLE, other, 3, MPI_COMM_WORLD, &request));
  CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
  if (rank == 0) CHECK_MPI(MPI_Rsend_c(out, n, MPI_DOUBLE, other, 3, MPI_COMM_WORLD));
  if (rank == 1) {
    CHECK_MPI(MPI_Wait(&request, &status));
    CHECK_MPI(MPI_Get_elements_c(&status, MPI_DOUBLE, &got));
    CHECK(got == 5 && in[0] == 0.5, "ready send: %lld elements", got);
  }
  /* Nonblocking each way, every send mode. */
  MPI_Request requests[5];
  double ins[4][5];
  CHECK_MPI(MPI_Isend_c(out, n, MPI_DOUBLE, other, 4, MPI_COMM_WORLD, &requests[0]));
  CHECK_MPI(MPI_Issend_c(out, n, MPI_DOUBLE, other, 5, MPI_COMM_WORLD, &requests[1]));
  int attached_size = 4 * (int)sizeof out + 4 * MPI_BSEND_OVERHEAD;
  void *attached = malloc((size_t)attached_size);
  CHECK(attached != NULL, "out of memory");
  CHECK_MPI(MPI_Buffer_attach(attached, attached_size));
  CHECK_MPI(MPI_Ibsend_c(out, n, MPI_DOUBLE, other, 6, MPI_COMM_WORLD, &requests[2]));
  CHECK_MPI(MPI_Bsend_c(out, n, MPI_DOUBLE, other, 7, MPI_COMM_WORLD));
  MPI_Request receives[4];
  for (int k = 0; k < 4; ++k) CHECK_MPI(MPI_Irecv_c(ins[k], n, MPI_DOUBLE, other, 4 + k, MPI_COMM_WORLD, &receives[k]));
  CHECK_MPI(MPI_Waitall(3, requests, MPI_STATUSES_IGNORE));
  CHECK_MPI(MPI_Waitall(4, receives, MPI_STATUSES_IGNORE));
  for (int k = 0; k < 4; ++k) CHECK(ins[k][2] == other * 10 + 2.5, "nonblocking %d: %g", k, ins[k][2]);
  int detached_size = 0;
  CHECK_MPI(MPI_Buffer_detach(&attached, &detached_size));
  free(attached);
  /* Irsend to a receive posted before a barrier. */
  CHECK_MPI(MPI_Irecv_c(in, n, MPI_DOUBLE, other, 8, MPI_COMM_WORLD, &requests[0]));
  CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
  CHECK_MPI(MPI_Irsend_c(out, n, MPI_DOUBLE, other, 8, MPI_COMM_WORLD, &requests[1]));
  CHECK_MPI(MPI_Waitall(2, requests, MPI_STATUSES_IGNORE));
  CHECK(in[1] == other * 10 + 1.5, "irsend: %g", in[1]);

  /* Sendrecv and Sendrecv_replace. */
  CHECK_MPI(MPI_Sendrecv_c(out, n, MPI_DOUBLE, other, 9, in, n, MPI_DOUBLE, other, 9, MPI_COMM_WORLD, &status));
  CHECK(in[3] == other * 10 + 3.5 && status.MPI_SOURCE == other, "sendrecv: %g", in[3]);
  double replace[5];
  memcpy(replace, out, sizeof out);
  CHECK_MPI(MPI_Sendrecv_replace_c(replace, n, MPI_DOUBLE, other, 10, other, 10, MPI_COMM_WORLD, &status));
  CHECK(replace[0] == other * 10 + 0.5, "sendrecv_replace: %g", replace[0]);

  /* Persistent, started twice. */
  MPI_Request persistent[2];
  CHECK_MPI(MPI_Send_init_c(out, n, MPI_DOUBLE, other, 11, MPI_COMM_WORLD, &persistent[0]));
  CHECK_MPI(MPI_Recv_init_c(in, n, MPI_DOUBLE, other, 11, MPI_COMM_WORLD, &persistent[1]));
  for (int round = 0; round < 2; ++round) {
    out[0] = 100 * round + rank;
    CHECK_MPI(MPI_Startall(2, persistent));
    CHECK_MPI(MPI_Waitall(2, persistent, MPI_STATUSES_IGNORE));
    CHECK(in[0] == 100 * round + other, "persistent round %d: %g", round, in[0]);
  }
  CHECK_MPI(MPI_Request_free(&persistent[0]));
  CHECK_MPI(MPI_Request_free(&persistent[1]));
  MPI_Request other_forms[3];
  CHECK_MPI(MPI_Ssend_init_c(out, n, MPI_DOUBLE, other, 12, MPI_COMM_WORLD, &other_forms[0]));
  CHECK_MPI(MPI_Bsend_init_c(out, 0, MPI_DOUBLE, other, 13, MPI_COMM_WORLD, &other_forms[1]));
  CHECK_MPI(MPI_Rsend_init_c(out, n, MPI_DOUBLE, other, 14, MPI_COMM_WORLD, &other_forms[2]));
  for (int k = 0; k < 3; ++k) CHECK_MPI(MPI_Request_free(&other_forms[k]));

  /* A matched probe, then MPI_Mrecv_c and MPI_Imrecv_c. */
  CHECK_MPI(MPI_Send_c(out, n, MPI_DOUBLE, other, 15, MPI_COMM_WORLD));
  CHECK_MPI(MPI_Send_c(out, 2, MPI_DOUBLE, other, 16, MPI_COMM_WORLD));
  MPI_Message message;
  CHECK_MPI(MPI_Mprobe(other, 15, MPI_COMM_WORLD, &message, &status));
  CHECK_MPI(MPI_Mrecv_c(in, n, MPI_DOUBLE, &message, &status));
  CHECK_MPI(MPI_Get_count_c(&status, MPI_DOUBLE, &got));
  CHECK(got == 5 && message == MPI_MESSAGE_NULL, "mrecv: %lld", got);
  CHECK_MPI(MPI_Mprobe(other, 16, MPI_COMM_WORLD, &message, &status));
  CHECK_MPI(MPI_Imrecv_c(in, n, MPI_DOUBLE, &message, &request));
  CHECK_MPI(MPI_Wait(&request, &status));
  CHECK_MPI(MPI_Get_count_c(&status, MPI_DOUBLE, &got));
  CHECK(got == 2, "imrecv: %lld", got);
}

static void queries(void) {
  MPI_Datatype vector;
  CHECK_MPI(MPI_Type_vector(3, 2, 5, MPI_INT, &vector));
  CHECK_MPI(MPI_Type_commit(&vector));
  MPI_Count size = 0, lb = -1, extent = 0, true_lb = -1, true_extent = 0;
  CHECK_MPI(MPI_Type_size_c(vector, &size));
  CHECK(size == 6 * (MPI_Count)sizeof(int), "size %lld", size);
  CHECK_MPI(MPI_Type_get_extent_c(vector, &lb, &extent));
  CHECK(lb == 0 && extent == 12 * (MPI_Count)sizeof(int), "extent %lld %lld", lb, extent);
  CHECK_MPI(MPI_Type_get_extent_x(vector, &lb, &extent));
  CHECK(lb == 0 && extent == 12 * (MPI_Count)sizeof(int), "extent_x %lld %lld", lb, extent);
  MPI_Datatype shifted;
  CHECK_MPI(MPI_Type_create_resized(vector, -8, 100, &shifted));
  CHECK_MPI(MPI_Type_get_extent_c(shifted, &lb, &extent));
  CHECK(lb == -8 && extent == 100, "resized extent %lld %lld", lb, extent);
  CHECK_MPI(MPI_Type_get_true_extent_c(shifted, &true_lb, &true_extent));
  CHECK(true_lb == 0 && true_extent == 12 * (MPI_Count)sizeof(int), "true extent %lld %lld", true_lb, true_extent);
  CHECK_MPI(MPI_Type_get_true_extent_x(shifted, &true_lb, &true_extent));
  CHECK(true_lb == 0 && true_extent == 12 * (MPI_Count)sizeof(int), "true extent_x");
  /* Elements of a partial item: 7 ints of 6-int vectors. */
  MPI_Status status;
  CHECK_MPI(MPI_Status_set_elements_x(&status, MPI_INT, 7));
  MPI_Count elements = 0, items = 0;
  CHECK_MPI(MPI_Get_elements_x(&status, vector, &elements));
  CHECK_MPI(MPI_Get_count_c(&status, vector, &items));
  CHECK(elements == 7 && items == MPI_UNDEFINED, "7 ints of vectors: %lld elements, count %lld", elements, items);
  CHECK_MPI(MPI_Type_free(&shifted));
  CHECK_MPI(MPI_Type_free(&vector));

  CHECK_MPI(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
  double x = 0;
  CHECK_CLASS(MPI_ERR_COUNT, MPI_Send_c(&x, -1, MPI_DOUBLE, 1 - rank, 0, MPI_COMM_WORLD));
  CHECK_CLASS(MPI_ERR_COUNT, MPI_Recv_c(&x, -((MPI_Count)1 << 40), MPI_DOUBLE, 1 - rank, 0, MPI_COMM_WORLD,
                                        MPI_STATUS_IGNORE));
  CHECK_CLASS(MPI_ERR_ARG, MPI_Get_count_c(&status, MPI_INT, NULL));
  CHECK_MPI(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
}

/* Runs one collective in the form `form` (0 blocking, 1 nonblocking, 2 persistent): X is the name,
 * x its lower-case form (MPI_I<x>_c), then its arguments up to the communicator. */
#define RUN_FORM(form, X, x, ...)                                                                          \
  do {                                                                                                 \
    MPI_Request r_;                                                                                    \
    if ((form) == 0) {                                                                                 \
      CHECK_MPI(MPI_##X##_c(__VA_ARGS__));                                                             \
    } else if ((form) == 1) {                                                                          \
      CHECK_MPI(MPI_I##x##_c(__VA_ARGS__, &r_));                                                       \
      CHECK_MPI(MPI_Wait(&r_, MPI_STATUS_IGNORE));                                                     \
    } else {                                                                                           \
      CHECK_MPI(MPI_##X##_init_c(__VA_ARGS__, MPI_INFO_NULL, &r_));                                    \
      CHECK_MPI(MPI_Start(&r_));                                                                       \
      CHECK_MPI(MPI_Wait(&r_, MPI_STATUS_IGNORE));                                                     \
      CHECK_MPI(MPI_Request_free(&r_));                                                                \
    }                                                                                                  \
  } while (0)

/* The v and w forms: rank r sends r + 1 ints; counts are MPI_Count, displacements MPI_Aint. */
static void v_collectives(MPI_Comm ring) {
  const MPI_Comm w = MPI_COMM_WORLD;
  const MPI_Count counts[2] = {1, 2};
  const MPI_Aint displs[2] = {0, 1};                         /* in items */
  const MPI_Aint bytes[2] = {0, (MPI_Aint)sizeof(int)};      /* alltoallw: in bytes */
  const MPI_Datatype types[2] = {MPI_INT, MPI_INT};
  for (int form = 0; form < 3; ++form) {
    int mine[3], got[3];
    for (int k = 0; k < 3; ++k) mine[k] = 100 * form + 10 * rank + k;
    const MPI_Count my_count = rank + 1;
    /* gatherv at rank 1, allgatherv: [r0: 0], [r1: 10, 11] */
    for (int k = 0; k < 3; ++k) got[k] = -1;
    RUN_FORM(form, Gatherv, gatherv, mine, my_count, MPI_INT, got, counts, displs, MPI_INT, 1, w);
    if (rank == 1) CHECK(got[0] == 100 * form && got[2] == 100 * form + 11, "form %d: gatherv", form);
    RUN_FORM(form, Allgatherv, allgatherv, mine, my_count, MPI_INT, got, counts, displs, MPI_INT, w);
    CHECK(got[0] == 100 * form && got[1] == 100 * form + 10 && got[2] == 100 * form + 11, "form %d: allgatherv", form);
    /* scatterv from rank 0: rank r gets r + 1 ints from offset r */
    RUN_FORM(form, Scatterv, scatterv, mine, counts, displs, MPI_INT, got, my_count, MPI_INT, 0, w);
    CHECK(got[0] == 100 * form + rank && got[rank] == 100 * form + 2 * rank, "form %d: scatterv %d", form, got[0]);
    /* alltoallv and alltoallw: to rank j, counts[j] ints from offset displs[j] */
    const MPI_Count rcounts[2] = {counts[rank], counts[rank]};
    const MPI_Aint rdispls[2] = {0, counts[rank]};
    const MPI_Aint rbytes[2] = {0, (MPI_Aint)(counts[rank] * (MPI_Count)sizeof(int))};
    int all[4];
    RUN_FORM(form, Alltoallv, alltoallv, mine, counts, displs, MPI_INT, all, rcounts, rdispls, MPI_INT, w);
    CHECK(all[0] == 100 * form + displs[rank] && all[rcounts[0]] == 100 * form + 10 + displs[rank],
          "form %d: alltoallv %d %d", form, all[0], all[rcounts[0]]);
    RUN_FORM(form, Alltoallw, alltoallw, mine, counts, bytes, types, all, rcounts, rbytes, types, w);
    CHECK(all[0] == 100 * form + displs[rank] && all[rcounts[0]] == 100 * form + 10 + displs[rank],
          "form %d: alltoallw", form);
    /* reduce_scatter: 3 ints summed, rank 0 gets 1, rank 1 gets 2 */
    RUN_FORM(form, Reduce_scatter, reduce_scatter, mine, got, counts, MPI_INT, MPI_SUM, w);
    CHECK(got[0] == 2 * (100 * form + displs[rank]) + 10, "form %d: reduce_scatter %d", form, got[0]);
    /* the ring's two neighbors are the other rank: one int from each */
    const MPI_Count ones[2] = {1, 1};
    const MPI_Aint steps[2] = {0, 1}, step_bytes[2] = {0, (MPI_Aint)sizeof(int)};
    const int other = 1 - rank;
    RUN_FORM(form, Neighbor_allgatherv, neighbor_allgatherv, mine, 1, MPI_INT, got, ones, steps, MPI_INT, ring);
    CHECK(got[0] == 100 * form + 10 * other && got[1] == got[0], "form %d: neighbor allgatherv", form);
    RUN_FORM(form, Neighbor_alltoallv, neighbor_alltoallv, mine, ones, steps, MPI_INT, got, ones, steps, MPI_INT, ring);
    CHECK(got[0] == 100 * form + 10 * other + 1 && got[1] == 100 * form + 10 * other, "form %d: neighbor alltoallv",
          form);
    RUN_FORM(form, Neighbor_alltoallw, neighbor_alltoallw, mine, ones, step_bytes, types, got, ones, step_bytes, types,
             ring);
    CHECK(got[0] == 100 * form + 10 * other + 1 && got[1] == 100 * form + 10 * other, "form %d: neighbor alltoallw",
          form);
  }
}

static void collectives(void) {
  const MPI_Comm w = MPI_COMM_WORLD;
  const int other = 1 - rank;
  MPI_Comm ring;
  const int periods[1] = {1};
  int dims[1] = {2};
  CHECK_MPI(MPI_Cart_create(w, 1, dims, periods, 0, &ring));
  const MPI_Count n = 3;
  for (int form = 0; form < 3; ++form) {
    int mine[6], got[6], expect;
    for (int k = 0; k < 6; ++k) mine[k] = 100 * form + 10 * rank + k;
    for (int k = 0; k < 6; ++k) got[k] = rank == 0 ? mine[k] : -1;
    RUN_FORM(form, Bcast, bcast, got, n, MPI_INT, 0, w);
    CHECK(got[2] == 100 * form + 2, "form %d: bcast %d", form, got[2]);
    RUN_FORM(form, Allreduce, allreduce, mine, got, n, MPI_INT, MPI_SUM, w);
    expect = 2 * (100 * form + 1) + 10;
    CHECK(got[1] == expect, "form %d: allreduce %d, expected %d", form, got[1], expect);
    got[0] = -1;
    RUN_FORM(form, Reduce, reduce, mine, got, n, MPI_INT, MPI_MAX, 1, w);
    if (rank == 1) CHECK(got[0] == 100 * form + 10, "form %d: reduce %d", form, got[0]);
    RUN_FORM(form, Scan, scan, mine, got, n, MPI_INT, MPI_SUM, w);
    CHECK(got[0] == (rank == 0 ? 100 * form : 200 * form + 10), "form %d: scan %d", form, got[0]);
    RUN_FORM(form, Exscan, exscan, mine, got, n, MPI_INT, MPI_SUM, w);
    if (rank == 1) CHECK(got[0] == 100 * form, "form %d: exscan %d", form, got[0]);
    RUN_FORM(form, Gather, gather, mine, n, MPI_INT, got, n, MPI_INT, 0, w);
    if (rank == 0) CHECK(got[3] == 100 * form + 10 && got[2] == 100 * form + 2, "form %d: gather", form);
    RUN_FORM(form, Scatter, scatter, mine, n, MPI_INT, got, n, MPI_INT, 1, w);
    CHECK(got[0] == 100 * form + 10 + 3 * rank, "form %d: scatter %d", form, got[0]);
    RUN_FORM(form, Allgather, allgather, mine, n, MPI_INT, got, n, MPI_INT, w);
    CHECK(got[3 * other] == 100 * form + 10 * other, "form %d: allgather", form);
    RUN_FORM(form, Alltoall, alltoall, mine, n, MPI_INT, got, n, MPI_INT, w);
    CHECK(got[3 * other] == 100 * form + 10 * other + 3 * rank, "form %d: alltoall %d", form, got[3 * other]);
    RUN_FORM(form, Reduce_scatter_block, reduce_scatter_block, mine, got, n, MPI_INT, MPI_SUM, w);
    CHECK(got[0] == 2 * (100 * form + 3 * rank) + 10, "form %d: reduce_scatter_block %d", form, got[0]);
    RUN_FORM(form, Neighbor_allgather, neighbor_allgather, mine, 1, MPI_INT, got, 1, MPI_INT, ring);
    CHECK(got[0] == 100 * form + 10 * other && got[1] == got[0], "form %d: neighbor allgather", form);
    RUN_FORM(form, Neighbor_alltoall, neighbor_alltoall, mine, 1, MPI_INT, got, 1, MPI_INT, ring);
    CHECK(got[0] == 100 * form + 10 * other + 1 && got[1] == 100 * form + 10 * other,
          "form %d: neighbor alltoall %d %d", form, got[0], got[1]);
  }
  v_collectives(ring);
  CHECK_MPI(MPI_Comm_free(&ring));
}

static long long available_kib(void) {
  FILE *f = fopen("/proc/meminfo", "r");
  if (f == NULL) return 0;
  char line[128];
  long long kib = 0;
  while (fgets(line, sizeof line, f) != NULL) {
    if (sscanf(line, "MemAvailable: %lld kB", &kib) == 1) break;
  }
  fclose(f);
  return kib;
}

static unsigned char pattern(uint64_t i) { return (unsigned char)((i * 2654435761u) >> 13); }

static void big_message(void) {
  int enough = available_kib() >= 12LL * 1024 * 1024;
  CHECK_MPI(MPI_Allreduce(MPI_IN_PLACE, &enough, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD));
  if (!enough) {
    if (rank == 0) printf("skipped: less than 12 GiB of memory available for a 2 GiB message\n");
    return;
  }
  const MPI_Count bytes = ((MPI_Count)1 << 31) + 4099;
  unsigned char *buffer = malloc((size_t)bytes);
  CHECK(buffer != NULL, "no memory for %lld bytes", bytes);
  if (rank == 0) {
    for (MPI_Count i = 0; i < bytes; ++i) buffer[i] = pattern((uint64_t)i);
    CHECK_MPI(MPI_Send_c(buffer, bytes, MPI_BYTE, 1, 0, MPI_COMM_WORLD));
  } else {
    memset(buffer, 0, (size_t)bytes);
    MPI_Status status;
    CHECK_MPI(MPI_Recv_c(buffer, bytes, MPI_BYTE, 0, 0, MPI_COMM_WORLD, &status));
    for (MPI_Count i = 0; i < bytes; ++i) {
      if (buffer[i] != pattern((uint64_t)i)) CHECK(0, "byte %lld is %u, expected %u", i, buffer[i], pattern((uint64_t)i));
    }
    int count_int = 0;
    MPI_Count count = 0;
    CHECK_MPI(MPI_Get_count(&status, MPI_BYTE, &count_int));
    CHECK_MPI(MPI_Get_count_c(&status, MPI_BYTE, &count));
    CHECK(count_int == MPI_UNDEFINED && count == bytes, "counts of the big message: %d, %lld", count_int, count);
    printf("large_count: %lld bytes in one message arrived intact\n", count);
    memset(buffer, 0, (size_t)bytes);
  }
  CHECK_MPI(MPI_Bcast_c(buffer, bytes, MPI_BYTE, 0, MPI_COMM_WORLD));
  for (MPI_Count i = 0; i < bytes; ++i) {
    if (buffer[i] != pattern((uint64_t)i)) CHECK(0, "broadcast byte %lld is %u", i, buffer[i]);
  }
  free(buffer);
}

int main(int argc, char **argv) {
  CHECK_MPI(MPI_Init(&argc, &argv));
  int size = 0;
  CHECK_MPI(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
  CHECK_MPI(MPI_Comm_size(MPI_COMM_WORLD, &size));
  CHECK(size == 2, "run with 2 ranks");
  small_forms();
  queries();
  collectives();
  if (argc > 1 && strcmp(argv[1], "big") == 0) big_message();
  CHECK_MPI(MPI_Finalize());
  if (rank == 0) printf("large_count: passed\n");
  return 0;
}

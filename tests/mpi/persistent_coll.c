/* MPI-4's persistent collectives, at 1-4 ranks: every _init call made once and started `rounds` times
 * (argv[1], default 12) with new data each round, all at once through MPI_Startall and one at a time,
 * waited and tested, beside a nonblocking collective; a derived datatype packed afresh at each start;
 * a neighborhood alltoall on a periodic ring; an allreduce on an intercommunicator; MPI_Request_free of
 * an inactive request; runs started in different orders at different processes; and the errors: starting an active request, a bad root found at MPI_Start. */
#include <stdlib.h>
#include <string.h>

#include "check.h"

enum { N = 3 }; /* ints per rank in each buffer */

static int rank, size;

static int value(int who, int round, int k) { return 1000 * round + 10 * who + k; }

struct buffers {
  int allreduce_in[N], allreduce_out[N];
  int bcast[N];
  int reduce_out[N];
  int *gather_out, *allgather_out, *alltoall_in, *alltoall_out, *alltoallv_in, *alltoallv_out;
  int scatter_out[N], scan_out[N], exscan_out[N], rsb_out[N];
  int *counts, *displs, *gatherv_out;
  int mine[N];
};

static int *ints(int n) {
  int *p = calloc((size_t)n, sizeof(int));
  CHECK(p != NULL, "out of memory");
  return p;
}

/* Fills this round's send data. */
static void fill(struct buffers *b, int round) {
  for (int k = 0; k < N; ++k) {
    b->mine[k] = value(rank, round, k);
    b->allreduce_in[k] = value(rank, round, k);
    if (rank == 0) b->bcast[k] = value(0, round, k) + 7;
  }
  for (int r = 0; r < size; ++r) {
    for (int k = 0; k < N; ++k) {
      b->alltoall_in[r * N + k] = value(rank, round, k) + 100 * r;
      b->alltoallv_in[r * N + k] = -value(rank, round, k) - 100 * r;
    }
  }
}

static void check_round(const struct buffers *b, int round) {
  for (int k = 0; k < N; ++k) {
    int sum = 0, prefix = 0;
    for (int r = 0; r < size; ++r) sum += value(r, round, k);
    for (int r = 0; r <= rank; ++r) prefix += value(r, round, k);
    CHECK(b->allreduce_out[k] == sum, "round %d allreduce[%d]: %d, expected %d", round, k, b->allreduce_out[k], sum);
    CHECK(b->bcast[k] == value(0, round, k) + 7, "round %d bcast[%d]: %d", round, k, b->bcast[k]);
    if (rank == 0) CHECK(b->reduce_out[k] == sum, "round %d reduce[%d]: %d", round, k, b->reduce_out[k]);
    CHECK(b->scan_out[k] == prefix, "round %d scan[%d]: %d, expected %d", round, k, b->scan_out[k], prefix);
    if (rank > 0) {
      CHECK(b->exscan_out[k] == prefix - value(rank, round, k), "round %d exscan[%d]: %d", round, k, b->exscan_out[k]);
    }
    /* reduce_scatter_block of the alltoall input: block `rank` summed over ranks. */
    int block_sum = 0;
    for (int r = 0; r < size; ++r) block_sum += value(r, round, k) + 100 * rank;
    CHECK(b->rsb_out[k] == block_sum, "round %d reduce_scatter_block[%d]: %d, expected %d", round, k, b->rsb_out[k],
          block_sum);
    /* scatter from rank 0 of its alltoall input: block `rank`. */
    CHECK(b->scatter_out[k] == value(0, round, k) + 100 * rank, "round %d scatter[%d]: %d", round, k,
          b->scatter_out[k]);
    for (int r = 0; r < size; ++r) {
      CHECK(b->allgather_out[r * N + k] == value(r, round, k), "round %d allgather from %d: %d", round, r,
            b->allgather_out[r * N + k]);
      CHECK(b->alltoall_out[r * N + k] == value(r, round, k) + 100 * rank, "round %d alltoall from %d", round, r);
      CHECK(b->alltoallv_out[r * N + k] == -value(r, round, k) - 100 * rank, "round %d alltoallv from %d", round, r);
      if (rank == size - 1) {
        CHECK(b->gather_out[r * N + k] == value(r, round, k), "round %d gather from %d", round, r);
        CHECK(b->gatherv_out[r * N + k] == value(r, round, k), "round %d gatherv from %d", round, r);
      }
    }
  }
}

static void every_collective(int rounds) {
  struct buffers b;
  memset(&b, 0, sizeof b);
  b.gather_out = ints(size * N);
  b.gatherv_out = ints(size * N);
  b.allgather_out = ints(size * N);
  b.alltoall_in = ints(size * N);
  b.alltoall_out = ints(size * N);
  b.alltoallv_in = ints(size * N);
  b.alltoallv_out = ints(size * N);
  b.counts = ints(size);
  b.displs = ints(size);
  for (int r = 0; r < size; ++r) {
    b.counts[r] = N;
    b.displs[r] = r * N;
  }
  int *blocks = ints(size);
  for (int r = 0; r < size; ++r) blocks[r] = N;
  MPI_Request requests[14];
  int n = 0;
  const MPI_Comm w = MPI_COMM_WORLD;
  const MPI_Info none = MPI_INFO_NULL;
  CHECK_MPI(MPI_Allreduce_init(b.allreduce_in, b.allreduce_out, N, MPI_INT, MPI_SUM, w, none, &requests[n++]));
  CHECK_MPI(MPI_Bcast_init(b.bcast, N, MPI_INT, 0, w, none, &requests[n++]));
  CHECK_MPI(MPI_Reduce_init(b.mine, b.reduce_out, N, MPI_INT, MPI_SUM, 0, w, none, &requests[n++]));
  CHECK_MPI(MPI_Gather_init(b.mine, N, MPI_INT, b.gather_out, N, MPI_INT, size - 1, w, none, &requests[n++]));
  CHECK_MPI(MPI_Gatherv_init(b.mine, N, MPI_INT, b.gatherv_out, b.counts, b.displs, MPI_INT, size - 1, w, none,
                             &requests[n++]));
  CHECK_MPI(MPI_Scatter_init(b.alltoall_in, N, MPI_INT, b.scatter_out, N, MPI_INT, 0, w, none, &requests[n++]));
  CHECK_MPI(MPI_Allgather_init(b.mine, N, MPI_INT, b.allgather_out, N, MPI_INT, w, none, &requests[n++]));
  CHECK_MPI(MPI_Alltoall_init(b.alltoall_in, N, MPI_INT, b.alltoall_out, N, MPI_INT, w, none, &requests[n++]));
  CHECK_MPI(MPI_Alltoallv_init(b.alltoallv_in, b.counts, b.displs, MPI_INT, b.alltoallv_out, b.counts, b.displs,
                               MPI_INT, w, none, &requests[n++]));
  CHECK_MPI(MPI_Scan_init(b.mine, b.scan_out, N, MPI_INT, MPI_SUM, w, none, &requests[n++]));
  CHECK_MPI(MPI_Exscan_init(b.mine, b.exscan_out, N, MPI_INT, MPI_SUM, w, none, &requests[n++]));
  CHECK_MPI(MPI_Reduce_scatter_block_init(b.alltoall_in, b.rsb_out, N, MPI_INT, MPI_SUM, w, none, &requests[n++]));
  const int first_one_by_one = n;
  CHECK_MPI(MPI_Barrier_init(w, none, &requests[n++]));
  for (int round = 0; round < rounds; ++round) {
    fill(&b, round);
    /* A round: the first ones together, the barrier alone, a nonblocking barrier in between. */
    CHECK_MPI(MPI_Startall(first_one_by_one, requests));
    MPI_Request ibarrier;
    CHECK_MPI(MPI_Ibarrier(w, &ibarrier));
    CHECK_MPI(MPI_Start(&requests[first_one_by_one]));
    if (round % 2 == 0) {
      CHECK_MPI(MPI_Waitall(n, requests, MPI_STATUSES_IGNORE));
    } else {
      for (int done = 0; !done;) CHECK_MPI(MPI_Testall(n, requests, &done, MPI_STATUSES_IGNORE));
    }
    CHECK_MPI(MPI_Wait(&ibarrier, MPI_STATUS_IGNORE));
    for (int k = 0; k < n; ++k) CHECK(requests[k] != MPI_REQUEST_NULL, "persistent request %d was freed by completion", k);
    check_round(&b, round);
  }
  for (int k = 0; k < n; ++k) CHECK_MPI(MPI_Request_free(&requests[k]));
  free(b.gather_out);
  free(b.gatherv_out);
  free(b.allgather_out);
  free(b.alltoall_in);
  free(b.alltoall_out);
  free(b.alltoallv_in);
  free(b.alltoallv_out);
  free(b.counts);
  free(b.displs);
  free(blocks);
}

/* A broadcast of every other int: the datatype is packed afresh at each start. */
static void derived_bcast(int rounds) {
  MPI_Datatype every_other;
  CHECK_MPI(MPI_Type_vector(4, 1, 2, MPI_INT, &every_other));
  CHECK_MPI(MPI_Type_commit(&every_other));
  int data[8];
  MPI_Request request;
  const int root = size - 1;
  CHECK_MPI(MPI_Bcast_init(data, 1, every_other, root, MPI_COMM_WORLD, MPI_INFO_NULL, &request));
  for (int round = 0; round < rounds; ++round) {
    for (int k = 0; k < 8; ++k) data[k] = rank == root ? (k % 2 == 0 ? round * 10 + k : -1) : -2;
    CHECK_MPI(MPI_Start(&request));
    CHECK_MPI(MPI_Wait(&request, MPI_STATUS_IGNORE));
    for (int k = 0; k < 8; ++k) {
      const int expected = k % 2 == 0 ? round * 10 + k : (rank == root ? -1 : -2);
      CHECK(data[k] == expected, "round %d: derived bcast [%d] = %d, expected %d", round, k, data[k], expected);
    }
  }
  CHECK_MPI(MPI_Request_free(&request));
  CHECK_MPI(MPI_Type_free(&every_other));
}

static void neighbors_and_intercomm(int rounds) {
  MPI_Comm ring;
  const int periods[1] = {1};
  int dims[1] = {size};
  CHECK_MPI(MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &ring));
  int out[2], in[2];
  MPI_Request request;
  CHECK_MPI(MPI_Neighbor_alltoall_init(out, 1, MPI_INT, in, 1, MPI_INT, ring, MPI_INFO_NULL, &request));
  for (int round = 0; round < rounds; ++round) {
    out[0] = value(rank, round, 0); /* to the left neighbor */
    out[1] = value(rank, round, 1); /* to the right one */
    CHECK_MPI(MPI_Start(&request));
    CHECK_MPI(MPI_Wait(&request, MPI_STATUS_IGNORE));
    const int left = (rank + size - 1) % size, right = (rank + 1) % size;
    CHECK(in[0] == value(left, round, 1) && in[1] == value(right, round, 0),
          "round %d: neighbor alltoall got %d %d", round, in[0], in[1]);
  }
  CHECK_MPI(MPI_Request_free(&request));
  CHECK_MPI(MPI_Comm_free(&ring));
  if (size < 2) return;
  const int low = rank < size / 2;
  MPI_Comm half, inter;
  CHECK_MPI(MPI_Comm_split(MPI_COMM_WORLD, low, rank, &half));
  CHECK_MPI(MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, low ? size / 2 : 0, 3, &inter));
  int mine = 0, theirs = 0;
  CHECK_MPI(MPI_Allreduce_init(&mine, &theirs, 1, MPI_INT, MPI_SUM, inter, MPI_INFO_NULL, &request));
  for (int round = 0; round < rounds; ++round) {
    mine = value(rank, round, 0);
    CHECK_MPI(MPI_Start(&request));
    CHECK_MPI(MPI_Wait(&request, MPI_STATUS_IGNORE));
    int expected = 0;
    for (int r = 0; r < size; ++r) {
      if ((r < size / 2) != low) expected += value(r, round, 0);
    }
    CHECK(theirs == expected, "round %d: intercommunicator allreduce %d, expected %d", round, theirs, expected);
  }
  CHECK_MPI(MPI_Request_free(&request));
  CHECK_MPI(MPI_Comm_free(&inter));
  CHECK_MPI(MPI_Comm_free(&half));
}

/* Runs may start in different orders at different processes (only the inits are ordered): even ranks
 * start the broadcast first, odd ranks the allreduce (MPICH's p_order). */
static void any_start_order(int rounds) {
  int value = 0, mine = 0, sum = 0;
  MPI_Request requests[2];
  CHECK_MPI(MPI_Bcast_init(&value, 1, MPI_INT, 0, MPI_COMM_WORLD, MPI_INFO_NULL, &requests[0]));
  CHECK_MPI(MPI_Allreduce_init(&mine, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &requests[1]));
  for (int round = 0; round < rounds; ++round) {
    value = rank == 0 ? 1000 + round : -1;
    mine = rank + round;
    const int first = rank % 2;
    CHECK_MPI(MPI_Start(&requests[first]));
    CHECK_MPI(MPI_Start(&requests[1 - first]));
    CHECK_MPI(MPI_Waitall(2, requests, MPI_STATUSES_IGNORE));
    CHECK(value == 1000 + round, "round %d: bcast started out of order gave %d", round, value);
    CHECK(sum == size * (size - 1) / 2 + size * round, "round %d: allreduce started out of order gave %d", round, sum);
  }
  CHECK_MPI(MPI_Request_free(&requests[0]));
  CHECK_MPI(MPI_Request_free(&requests[1]));
}

static void errors(void) {
  CHECK_MPI(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
  MPI_Request request;
  CHECK_MPI(MPI_Barrier_init(MPI_COMM_WORLD, MPI_INFO_NULL, &request));
  CHECK_MPI(MPI_Start(&request));
  CHECK_CLASS(MPI_ERR_REQUEST, MPI_Start(&request));
  CHECK_CLASS(MPI_ERR_REQUEST, MPI_Cancel(&request));
  CHECK_CLASS(MPI_ERR_REQUEST, MPI_Request_free(&request));
  CHECK_MPI(MPI_Wait(&request, MPI_STATUS_IGNORE));
  CHECK_MPI(MPI_Request_free(&request));
  CHECK(request == MPI_REQUEST_NULL, "MPI_Request_free left the handle");
  /* Arguments are checked when the collective starts. */
  int x = 0;
  CHECK_MPI(MPI_Bcast_init(&x, 1, MPI_INT, size, MPI_COMM_WORLD, MPI_INFO_NULL, &request));
  CHECK_CLASS(MPI_ERR_ROOT, MPI_Start(&request));
  CHECK_MPI(MPI_Request_free(&request));
  CHECK_CLASS(MPI_ERR_COMM, MPI_Barrier_init(MPI_COMM_NULL, MPI_INFO_NULL, &request));
  CHECK_CLASS(MPI_ERR_ARG, MPI_Barrier_init(MPI_COMM_WORLD, MPI_INFO_NULL, NULL));
  CHECK_CLASS(MPI_ERR_INFO, MPI_Barrier_init(MPI_COMM_WORLD, (MPI_Info)12345, &request));
  CHECK_MPI(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
}

int main(int argc, char **argv) {
  CHECK_MPI(MPI_Init(&argc, &argv));
  CHECK_MPI(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
  CHECK_MPI(MPI_Comm_size(MPI_COMM_WORLD, &size));
  const int rounds = argc > 1 ? atoi(argv[1]) : 12;
  every_collective(rounds);
  derived_bcast(rounds);
  neighbors_and_intercomm(rounds);
  any_start_order(rounds);
  errors();
  CHECK_MPI(MPI_Finalize());
  if (rank == 0) printf("persistent_coll: %d ranks passed\n", size);
  return 0;
}

/* Every rank but 0 sends kPerRank messages to rank 0 with tags rank * 100 + k; rank 0 receives them all
 * with MPI_ANY_SOURCE/MPI_ANY_TAG and checks each status against the payload (which repeats the
 * sender and the tag), and that each sender's messages arrive in the order sent (non-overtaking).
 * Then one more round with one wildcard at a time: a fixed source with MPI_ANY_TAG, and MPI_ANY_SOURCE
 * with a fixed tag. */
#include "check.h"

enum { kPerRank = 20, kGo = 9999 };

int main(int argc, char **argv) {
  int rank = 0;
  int size = 0;
  CHECK_MPI(MPI_Init(&argc, &argv));
  CHECK_MPI(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
  CHECK_MPI(MPI_Comm_size(MPI_COMM_WORLD, &size));
  CHECK(size >= 3, "needs at least 3 ranks, got %d", size);

  if (rank != 0) {
    for (int k = 0; k < kPerRank; ++k) {
      int payload[3] = {rank, rank * 100 + k, k};
      CHECK_MPI(MPI_Send(payload, 3, MPI_INT, 0, rank * 100 + k, MPI_COMM_WORLD));
    }
    /* The next messages would match rank 0's wildcard receives too: wait until those are done. */
    CHECK_MPI(MPI_Recv(NULL, 0, MPI_INT, 0, kGo, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    for (int k = 0; k < 2; ++k) {
      int payload[3] = {rank, 7000 + k, k};
      CHECK_MPI(MPI_Send(payload, 3, MPI_INT, 0, 7000 + k, MPI_COMM_WORLD));
    }
  } else {
    int next[64] = {0}; /* next k expected from each sender */
    CHECK(size <= 64, "too many ranks");
    for (int n = 0; n < (size - 1) * kPerRank; ++n) {
      int payload[3] = {-1, -1, -1};
      MPI_Status status;
      CHECK_MPI(MPI_Recv(payload, 3, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &status));
      int count = -1;
      CHECK_MPI(MPI_Get_count(&status, MPI_INT, &count));
      CHECK(count == 3, "count %d", count);
      CHECK(status.MPI_SOURCE == payload[0], "status source %d, payload says %d", status.MPI_SOURCE, payload[0]);
      CHECK(status.MPI_TAG == payload[1], "status tag %d, payload says %d", status.MPI_TAG, payload[1]);
      CHECK(payload[2] == next[payload[0]], "from rank %d: message %d overtook message %d", payload[0], payload[2],
            next[payload[0]]);
      ++next[payload[0]];
    }
    for (int source = 1; source < size; ++source) CHECK_MPI(MPI_Send(NULL, 0, MPI_INT, source, kGo, MPI_COMM_WORLD));
    /* Tag 7000 then 7001 from each sender: take tag 7001 from a fixed source with a fixed tag first, then
     * its 7000 with MPI_ANY_TAG (the earlier message matches first), then the rest by tag from any source. */
    for (int source = 1; source < size; ++source) {
      int payload[3];
      MPI_Status status;
      CHECK_MPI(MPI_Recv(payload, 3, MPI_INT, source, 7001, MPI_COMM_WORLD, &status));
      CHECK(status.MPI_SOURCE == source && status.MPI_TAG == 7001 && payload[1] == 7001, "fixed source and tag");
      CHECK_MPI(MPI_Recv(payload, 3, MPI_INT, source, MPI_ANY_TAG, MPI_COMM_WORLD, &status));
      CHECK(status.MPI_SOURCE == source && status.MPI_TAG == 7000 && payload[1] == 7000,
            "MPI_ANY_TAG from %d: got tag %d", source, status.MPI_TAG);
    }
  }

  /* MPI_ANY_SOURCE with a fixed tag: everyone sends tag 8000 + rank, rank 0 picks them by tag. */
  if (rank != 0) {
    CHECK_MPI(MPI_Send(&rank, 1, MPI_INT, 0, 8000 + rank, MPI_COMM_WORLD));
  } else {
    for (int source = size - 1; source >= 1; --source) {
      int value = -1;
      MPI_Status status;
      CHECK_MPI(MPI_Recv(&value, 1, MPI_INT, MPI_ANY_SOURCE, 8000 + source, MPI_COMM_WORLD, &status));
      CHECK(value == source && status.MPI_SOURCE == source && status.MPI_TAG == 8000 + source,
            "MPI_ANY_SOURCE tag %d: value %d source %d", 8000 + source, value, status.MPI_SOURCE);
    }
  }

  CHECK_MPI(MPI_Finalize());
  if (rank == 0) printf("wildcards over %d ranks: ok\n", size);
  return 0;
}

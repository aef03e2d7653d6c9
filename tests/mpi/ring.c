/* A token travels the ring of all ranks ten times; every hop adds one, so every rank can check what it
 * receives. Then every rank sends its rank to the right with MPI_Send/MPI_Recv in the odd-even order
 * that cannot deadlock, and checks what came from the left. */
#include "check.h"

enum { kLaps = 10 };

int main(int argc, char **argv) {
  int rank = 0;
  int size = 0;
  CHECK_MPI(MPI_Init(&argc, &argv));
  CHECK_MPI(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
  CHECK_MPI(MPI_Comm_size(MPI_COMM_WORLD, &size));
  CHECK(size >= 2, "needs at least 2 ranks, got %d", size);
  const int right = (rank + 1) % size;
  const int left = (rank + size - 1) % size;

  for (int lap = 0; lap < kLaps; ++lap) {
    long token = 0;
    MPI_Status status;
    if (rank == 0) {
      token = (long)lap * size;
      CHECK_MPI(MPI_Send(&token, 1, MPI_LONG, right, lap, MPI_COMM_WORLD));
      CHECK_MPI(MPI_Recv(&token, 1, MPI_LONG, left, lap, MPI_COMM_WORLD, &status));
      CHECK(token == (long)lap * size + size - 1, "lap %d: token %ld came back", lap, token);
    } else {
      CHECK_MPI(MPI_Recv(&token, 1, MPI_LONG, left, lap, MPI_COMM_WORLD, &status));
      CHECK(token == (long)lap * size + rank - 1, "lap %d: got token %ld", lap, token);
      ++token;
      CHECK_MPI(MPI_Send(&token, 1, MPI_LONG, right, lap, MPI_COMM_WORLD));
    }
    CHECK(status.MPI_SOURCE == left && status.MPI_TAG == lap, "lap %d: status source %d tag %d", lap,
          status.MPI_SOURCE, status.MPI_TAG);
  }

  int from_left = -1;
  if (rank % 2 == 0) {
    CHECK_MPI(MPI_Send(&rank, 1, MPI_INT, right, 100, MPI_COMM_WORLD));
    CHECK_MPI(MPI_Recv(&from_left, 1, MPI_INT, left, 100, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
  } else {
    CHECK_MPI(MPI_Recv(&from_left, 1, MPI_INT, left, 100, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    CHECK_MPI(MPI_Send(&rank, 1, MPI_INT, right, 100, MPI_COMM_WORLD));
  }
  CHECK(from_left == left, "shift: got %d from the left, expected %d", from_left, left);

  CHECK_MPI(MPI_Finalize());
  if (rank == 0) printf("ring of %d ranks: ok\n", size);
  return 0;
}

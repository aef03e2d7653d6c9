/* MPI_Sendrecv and MPI_Sendrecv_replace shift data around the ring (the pattern that deadlocks with
 * blocking sends), then exchange with oneself on MPI_COMM_SELF. */
#include "check.h"

enum { kInts = 1000 };

int main(int argc, char **argv) {
  int rank = 0;
  int size = 0;
  CHECK_MPI(MPI_Init(&argc, &argv));
  CHECK_MPI(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
  CHECK_MPI(MPI_Comm_size(MPI_COMM_WORLD, &size));
  const int right = (rank + 1) % size;
  const int left = (rank + size - 1) % size;
  static int out[kInts];
  static int in[kInts];
  MPI_Status status;
  int count = -1;

  for (int i = 0; i < kInts; ++i) out[i] = rank * kInts + i;
  CHECK_MPI(MPI_Sendrecv(out, kInts, MPI_INT, right, 1, in, kInts, MPI_INT, left, 1, MPI_COMM_WORLD, &status));
  CHECK_MPI(MPI_Get_count(&status, MPI_INT, &count));
  CHECK(status.MPI_SOURCE == left && status.MPI_TAG == 1 && count == kInts, "sendrecv: source %d tag %d count %d",
        status.MPI_SOURCE, status.MPI_TAG, count);
  for (int i = 0; i < kInts; ++i) CHECK(in[i] == left * kInts + i, "sendrecv: int %d is %d", i, in[i]);

  /* Around the whole ring with one buffer: after `size` shifts every rank has its own data back. */
  for (int i = 0; i < kInts; ++i) in[i] = rank * kInts + i;
  for (int step = 1; step <= size; ++step) {
    CHECK_MPI(MPI_Sendrecv_replace(in, kInts, MPI_INT, right, 2, left, MPI_ANY_TAG, MPI_COMM_WORLD, &status));
    const int origin = (rank - step % size + size) % size;
    CHECK(status.MPI_SOURCE == left && status.MPI_TAG == 2, "replace step %d: status", step);
    for (int i = 0; i < kInts; ++i) {
      CHECK(in[i] == origin * kInts + i, "replace step %d: int %d is %d, expected %d", step, i, in[i],
            origin * kInts + i);
    }
  }

  /* With oneself. */
  int mine = 1234;
  int back = 0;
  CHECK_MPI(MPI_Sendrecv(&mine, 1, MPI_INT, 0, 3, &back, 1, MPI_INT, 0, 3, MPI_COMM_SELF, &status));
  CHECK(back == 1234 && status.MPI_SOURCE == 0, "MPI_COMM_SELF: got %d from %d", back, status.MPI_SOURCE);
  CHECK_MPI(MPI_Sendrecv_replace(&mine, 1, MPI_INT, 0, 4, MPI_ANY_SOURCE, 4, MPI_COMM_SELF, MPI_STATUS_IGNORE));
  CHECK(mine == 1234, "MPI_COMM_SELF replace: %d", mine);

  CHECK_MPI(MPI_Finalize());
  if (rank == 0) printf("sendrecv over %d ranks: ok\n", size);
  return 0;
}

/* Rank 0 starts 10,000 MPI_Isend to rank 1 before rank 1 posts a single receive for them: rank 1 first
 * waits for a "sent" message that rank 0 sends after the last MPI_Isend (same sender, so it arrives
 * after them all). Most messages are small; every 1000th is 256 KB, large enough for rendezvous.
 * Rank 1 then receives them in order and checks each; rank 0 completes them all with MPI_Waitall. */
#include <stdlib.h>

#include "check.h"

enum { kMessages = 10000, kLargeEvery = 1000, kLargeInts = 64 * 1024, kSentTag = 30000 };

static int ints_in(int i) { return i % kLargeEvery == 0 ? kLargeInts : 1 + i % 4; }

static int value(int i, int j) { return i * 7 + j; }

int main(int argc, char **argv) {
  int rank = 0;
  int size = 0;
  CHECK_MPI(MPI_Init(&argc, &argv));
  CHECK_MPI(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
  CHECK_MPI(MPI_Comm_size(MPI_COMM_WORLD, &size));
  CHECK(size == 2, "needs exactly 2 ranks, got %d", size);

  if (rank == 0) {
    int **buffers = malloc(sizeof(int *) * kMessages);
    MPI_Request *requests = malloc(sizeof(MPI_Request) * kMessages);
    CHECK(buffers != NULL && requests != NULL, "out of memory");
    for (int i = 0; i < kMessages; ++i) {
      buffers[i] = malloc(sizeof(int) * (size_t)ints_in(i));
      CHECK(buffers[i] != NULL, "out of memory");
      for (int j = 0; j < ints_in(i); ++j) buffers[i][j] = value(i, j);
      CHECK_MPI(MPI_Isend(buffers[i], ints_in(i), MPI_INT, 1, i % 5000, MPI_COMM_WORLD, &requests[i]));
    }
    CHECK_MPI(MPI_Send(NULL, 0, MPI_INT, 1, kSentTag, MPI_COMM_WORLD));
    CHECK_MPI(MPI_Waitall(kMessages, requests, MPI_STATUSES_IGNORE));
    for (int i = 0; i < kMessages; ++i) {
      CHECK(requests[i] == MPI_REQUEST_NULL, "request %d was not freed by MPI_Waitall", i);
      free(buffers[i]);
    }
    free(buffers);
    free(requests);
  } else {
    CHECK_MPI(MPI_Recv(NULL, 0, MPI_INT, 0, kSentTag, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    int *buffer = malloc(sizeof(int) * kLargeInts);
    CHECK(buffer != NULL, "out of memory");
    for (int i = 0; i < kMessages; ++i) {
      MPI_Status status;
      int count = -1;
      CHECK_MPI(MPI_Recv(buffer, kLargeInts, MPI_INT, 0, i % 5000, MPI_COMM_WORLD, &status));
      CHECK_MPI(MPI_Get_count(&status, MPI_INT, &count));
      CHECK(count == ints_in(i), "message %d: %d ints, expected %d", i, count, ints_in(i));
      for (int j = 0; j < count; ++j) {
        CHECK(buffer[j] == value(i, j), "message %d int %d: %d, expected %d", i, j, buffer[j], value(i, j));
      }
    }
    free(buffer);
  }

  CHECK_MPI(MPI_Finalize());
  if (rank == 0) printf("%d isends before the receives: ok\n", kMessages);
  return 0;
}

/* The send modes. Synchronous: an MPI_Issend is not complete while the receiver has not posted a
 * receive, and completes once it has. Ready: sent after the receiver said its receive is posted.
 * Buffered: MPI_Bsend returns before the receiver receives, even for a message too large to go eagerly;
 * MPI_Buffer_detach waits until the buffered sends are done and gives the buffer back. */
#include <stdlib.h>
#include <string.h>

#include "check.h"

enum { kGo = 1, kSync = 2, kReady = 3, kPosted = 4, kBuffered = 5, kLarge = 1 << 20, kSmallCount = 8 };

int main(int argc, char **argv) {
  int rank = 0;
  int size = 0;
  CHECK_MPI(MPI_Init(&argc, &argv));
  CHECK_MPI(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
  CHECK_MPI(MPI_Comm_size(MPI_COMM_WORLD, &size));
  CHECK(size == 2, "needs exactly 2 ranks, got %d", size);
  int value = -1;

  /* Synchronous. */
  if (rank == 0) {
    value = 42;
    MPI_Request request;
    int flag = 1;
    CHECK_MPI(MPI_Issend(&value, 1, MPI_INT, 1, kSync, MPI_COMM_WORLD, &request));
    for (int i = 0; i < 1000; ++i) {
      CHECK_MPI(MPI_Test(&request, &flag, MPI_STATUS_IGNORE));
      CHECK(!flag, "MPI_Issend completed before the receiver posted its receive");
    }
    CHECK_MPI(MPI_Send(NULL, 0, MPI_INT, 1, kGo, MPI_COMM_WORLD));
    CHECK_MPI(MPI_Wait(&request, MPI_STATUS_IGNORE));
    CHECK_MPI(MPI_Ssend(&value, 1, MPI_INT, 1, kSync, MPI_COMM_WORLD));
  } else {
    CHECK_MPI(MPI_Recv(NULL, 0, MPI_INT, 0, kGo, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    CHECK_MPI(MPI_Recv(&value, 1, MPI_INT, 0, kSync, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    CHECK(value == 42, "synchronous: got %d", value);
    value = -1;
    CHECK_MPI(MPI_Recv(&value, 1, MPI_INT, 0, kSync, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    CHECK(value == 42, "MPI_Ssend: got %d", value);
  }

  /* Ready. */
  if (rank == 1) {
    MPI_Request requests[2];
    int values[2] = {-1, -1};
    CHECK_MPI(MPI_Irecv(&values[0], 1, MPI_INT, 0, kReady, MPI_COMM_WORLD, &requests[0]));
    CHECK_MPI(MPI_Irecv(&values[1], 1, MPI_INT, 0, kReady, MPI_COMM_WORLD, &requests[1]));
    CHECK_MPI(MPI_Send(NULL, 0, MPI_INT, 0, kPosted, MPI_COMM_WORLD));
    CHECK_MPI(MPI_Waitall(2, requests, MPI_STATUSES_IGNORE));
    CHECK(values[0] == 7 && values[1] == 8, "ready: got %d %d", values[0], values[1]);
  } else {
    CHECK_MPI(MPI_Recv(NULL, 0, MPI_INT, 1, kPosted, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    value = 7;
    CHECK_MPI(MPI_Rsend(&value, 1, MPI_INT, 1, kReady, MPI_COMM_WORLD));
    int eight = 8;
    MPI_Request request;
    CHECK_MPI(MPI_Irsend(&eight, 1, MPI_INT, 1, kReady, MPI_COMM_WORLD, &request));
    CHECK_MPI(MPI_Wait(&request, MPI_STATUS_IGNORE));
  }

  /* Buffered: kSmallCount small messages and one large one, all sent before rank 1 receives anything
   * (it waits for kGo, which rank 0 sends only after every MPI_Bsend returned). */
  if (rank == 0) {
    const int size_needed = kSmallCount * ((int)sizeof(int) + MPI_BSEND_OVERHEAD) + kLarge + MPI_BSEND_OVERHEAD;
    char *buffer = malloc((size_t)size_needed);
    char *large = malloc(kLarge);
    CHECK(buffer != NULL && large != NULL, "out of memory");
    CHECK_MPI(MPI_Buffer_attach(buffer, size_needed));
    for (int i = 0; i < kSmallCount; ++i) CHECK_MPI(MPI_Bsend(&i, 1, MPI_INT, 1, kBuffered, MPI_COMM_WORLD));
    memset(large, 'x', kLarge);
    MPI_Request request;
    CHECK_MPI(MPI_Ibsend(large, kLarge, MPI_CHAR, 1, kBuffered, MPI_COMM_WORLD, &request));
    int flag = 0;
    CHECK_MPI(MPI_Test(&request, &flag, MPI_STATUS_IGNORE));
    CHECK(flag, "MPI_Ibsend is not complete once the message is buffered");
    memset(large, 'y', kLarge); /* the buffered copy is what travels */
    CHECK_MPI(MPI_Send(NULL, 0, MPI_INT, 1, kGo, MPI_COMM_WORLD));
    void *detached = NULL;
    int detached_size = 0;
    CHECK_MPI(MPI_Buffer_detach(&detached, &detached_size));
    CHECK(detached == buffer && detached_size == size_needed, "MPI_Buffer_detach gave back another buffer");
    free(buffer);
    free(large);
  } else {
    CHECK_MPI(MPI_Recv(NULL, 0, MPI_INT, 0, kGo, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    for (int i = 0; i < kSmallCount; ++i) {
      CHECK_MPI(MPI_Recv(&value, 1, MPI_INT, 0, kBuffered, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
      CHECK(value == i, "buffered message %d: got %d", i, value);
    }
    char *large = malloc(kLarge);
    CHECK_MPI(MPI_Recv(large, kLarge, MPI_CHAR, 0, kBuffered, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    for (int i = 0; i < kLarge; ++i) CHECK(large[i] == 'x', "large buffered message: byte %d is %c", i, large[i]);
    free(large);
  }

  CHECK_MPI(MPI_Finalize());
  if (rank == 0) printf("synchronous, ready and buffered sends: ok\n");
  return 0;
}

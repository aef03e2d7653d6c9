/* MPI_Probe, MPI_Iprobe and MPI_Cancel between two ranks. Rank 1 sends only when rank 0 asks (tag
 * kAsk), so rank 0 knows what can and what cannot have arrived. */
#include <stdlib.h>

#include "check.h"

enum { kAsk = 1, kData = 5, kMore = 6, kNever = 77 };

int main(int argc, char **argv) {
  int rank = 0;
  int size = 0;
  CHECK_MPI(MPI_Init(&argc, &argv));
  CHECK_MPI(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
  CHECK_MPI(MPI_Comm_size(MPI_COMM_WORLD, &size));
  CHECK(size == 2, "needs exactly 2 ranks, got %d", size);

  if (rank == 1) {
    int what = 0;
    /* Each request names a tag and a count; a count of -1 ends the conversation. */
    for (;;) {
      int ask[2];
      CHECK_MPI(MPI_Recv(ask, 2, MPI_INT, 0, kAsk, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
      if (ask[1] < 0) break;
      int *data = malloc(sizeof(int) * (size_t)(ask[1] + 1));
      for (int i = 0; i < ask[1]; ++i) data[i] = what * 1000 + i;
      CHECK_MPI(MPI_Send(data, ask[1], MPI_INT, 0, ask[0], MPI_COMM_WORLD));
      free(data);
      ++what;
    }
  } else {
    MPI_Status status;
    int flag = -1;

    /* Nothing was asked for yet: MPI_Iprobe finds nothing. */
    CHECK_MPI(MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &status));
    CHECK(flag == 0, "MPI_Iprobe found a message no one sent");

    /* MPI_Probe tells source, tag and size; the receive sized from it gets the message. */
    int ask[2] = {kData, 100};
    CHECK_MPI(MPI_Send(ask, 2, MPI_INT, 1, kAsk, MPI_COMM_WORLD));
    CHECK_MPI(MPI_Probe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &status));
    int count = -1;
    CHECK_MPI(MPI_Get_count(&status, MPI_INT, &count));
    CHECK(status.MPI_SOURCE == 1 && status.MPI_TAG == kData && count == 100,
          "MPI_Probe: source %d tag %d count %d", status.MPI_SOURCE, status.MPI_TAG, count);
    /* Probing again finds the same message: a probe does not take it. */
    CHECK_MPI(MPI_Probe(1, kData, MPI_COMM_WORLD, &status));
    int *data = malloc(sizeof(int) * (size_t)count);
    CHECK_MPI(MPI_Recv(data, count, MPI_INT, status.MPI_SOURCE, status.MPI_TAG, MPI_COMM_WORLD, &status));
    for (int i = 0; i < count; ++i) CHECK(data[i] == i, "probed message: int %d is %d", i, data[i]);
    free(data);

    /* MPI_Iprobe in a loop sees a message arrive (each call makes progress). */
    ask[0] = kMore;
    ask[1] = 3;
    CHECK_MPI(MPI_Send(ask, 2, MPI_INT, 1, kAsk, MPI_COMM_WORLD));
    flag = 0;
    while (!flag) CHECK_MPI(MPI_Iprobe(1, kMore, MPI_COMM_WORLD, &flag, &status));
    CHECK_MPI(MPI_Get_count(&status, MPI_INT, &count));
    CHECK(status.MPI_SOURCE == 1 && status.MPI_TAG == kMore && count == 3, "MPI_Iprobe: source %d tag %d count %d",
          status.MPI_SOURCE, status.MPI_TAG, count);
    int more[3];
    CHECK_MPI(MPI_Recv(more, 3, MPI_INT, 1, kMore, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    CHECK(more[0] == 1000 && more[2] == 1002, "second message: %d %d", more[0], more[2]);

    /* Cancelling a receive nothing will match succeeds. */
    int never = 0;
    MPI_Request request;
    CHECK_MPI(MPI_Irecv(&never, 1, MPI_INT, 1, kNever, MPI_COMM_WORLD, &request));
    CHECK_MPI(MPI_Cancel(&request));
    CHECK_MPI(MPI_Wait(&request, &status));
    CHECK(request == MPI_REQUEST_NULL, "MPI_Wait did not free the cancelled request");
    CHECK_MPI(MPI_Test_cancelled(&status, &flag));
    CHECK(flag == 1, "MPI_Test_cancelled: the unmatched receive was not cancelled");

    /* A receive that has matched completes normally even when cancelled afterwards. */
    int got = -1;
    CHECK_MPI(MPI_Irecv(&got, 1, MPI_INT, 1, kData, MPI_COMM_WORLD, &request));
    ask[0] = kData;
    ask[1] = 1;
    CHECK_MPI(MPI_Send(ask, 2, MPI_INT, 1, kAsk, MPI_COMM_WORLD));
    flag = 0;
    while (!flag) CHECK_MPI(MPI_Test(&request, &flag, &status));
    CHECK_MPI(MPI_Test_cancelled(&status, &flag));
    CHECK(flag == 0 && got == 2000, "a completed receive reads as cancelled (%d) or got %d", flag, got);

    /* A cancelled persistent receive can be started again and then matches. */
    CHECK_MPI(MPI_Recv_init(&got, 1, MPI_INT, 1, kData, MPI_COMM_WORLD, &request));
    CHECK_MPI(MPI_Start(&request));
    CHECK_MPI(MPI_Cancel(&request));
    CHECK_MPI(MPI_Wait(&request, &status));
    CHECK_MPI(MPI_Test_cancelled(&status, &flag));
    CHECK(flag == 1 && request != MPI_REQUEST_NULL, "persistent receive: cancelled %d", flag);
    CHECK_MPI(MPI_Start(&request));
    CHECK_MPI(MPI_Send(ask, 2, MPI_INT, 1, kAsk, MPI_COMM_WORLD));
    CHECK_MPI(MPI_Wait(&request, &status));
    CHECK_MPI(MPI_Test_cancelled(&status, &flag));
    CHECK(flag == 0 && got == 3000, "restarted persistent receive: cancelled %d, got %d", flag, got);
    CHECK_MPI(MPI_Request_free(&request));

    ask[1] = -1;
    CHECK_MPI(MPI_Send(ask, 2, MPI_INT, 1, kAsk, MPI_COMM_WORLD));
  }

  CHECK_MPI(MPI_Finalize());
  if (rank == 0) printf("probe, iprobe, cancel: ok\n");
  return 0;
}

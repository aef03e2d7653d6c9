/* Persistent requests reused 100 times: a one-way stream (MPI_Send_init / MPI_Recv_init with
 * MPI_Start and MPI_Wait), an exchange (both directions started with MPI_Startall, completed with
 * MPI_Waitall), and the synchronous, ready and buffered variants. */
#include <stdlib.h>

#include "check.h"

enum { kRounds = 100, kInts = 50 };

int main(int argc, char **argv) {
  int rank = 0;
  int size = 0;
  CHECK_MPI(MPI_Init(&argc, &argv));
  CHECK_MPI(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
  CHECK_MPI(MPI_Comm_size(MPI_COMM_WORLD, &size));
  CHECK(size == 2, "needs exactly 2 ranks, got %d", size);
  const int peer = 1 - rank;
  int out[kInts];
  int in[kInts];
  MPI_Request request;
  MPI_Status status;

  /* One way, rank 0 to rank 1: the buffer is rewritten between starts, as persistent requests allow. */
  if (rank == 0) {
    CHECK_MPI(MPI_Send_init(out, kInts, MPI_INT, 1, 10, MPI_COMM_WORLD, &request));
  } else {
    CHECK_MPI(MPI_Recv_init(in, kInts, MPI_INT, 0, 10, MPI_COMM_WORLD, &request));
  }
  for (int round = 0; round < kRounds; ++round) {
    for (int i = 0; i < kInts; ++i) out[i] = round * 1000 + i;
    CHECK_MPI(MPI_Start(&request));
    CHECK_MPI(MPI_Wait(&request, &status));
    CHECK(request != MPI_REQUEST_NULL, "MPI_Wait freed a persistent request");
    if (rank == 1) {
      CHECK(status.MPI_SOURCE == 0 && status.MPI_TAG == 10, "round %d: status source %d tag %d", round,
            status.MPI_SOURCE, status.MPI_TAG);
      for (int i = 0; i < kInts; ++i) CHECK(in[i] == round * 1000 + i, "round %d int %d: %d", round, i, in[i]);
    }
  }
  /* An inactive persistent request completes at once with an empty status. */
  CHECK_MPI(MPI_Wait(&request, &status));
  CHECK(status.MPI_SOURCE == MPI_ANY_SOURCE && status.MPI_TAG == MPI_ANY_TAG, "inactive request: not empty");
  CHECK_MPI(MPI_Request_free(&request));
  CHECK(request == MPI_REQUEST_NULL, "MPI_Request_free did not reset the handle");

  /* Both directions at once. */
  MPI_Request both[2];
  CHECK_MPI(MPI_Recv_init(in, kInts, MPI_INT, peer, 20, MPI_COMM_WORLD, &both[0]));
  CHECK_MPI(MPI_Send_init(out, kInts, MPI_INT, peer, 20, MPI_COMM_WORLD, &both[1]));
  for (int round = 0; round < kRounds; ++round) {
    for (int i = 0; i < kInts; ++i) out[i] = rank * 100000 + round * 100 + i;
    CHECK_MPI(MPI_Startall(2, both));
    MPI_Status statuses[2];
    CHECK_MPI(MPI_Waitall(2, both, statuses));
    CHECK(statuses[0].MPI_SOURCE == peer, "exchange round %d: source %d", round, statuses[0].MPI_SOURCE);
    for (int i = 0; i < kInts; ++i) {
      CHECK(in[i] == peer * 100000 + round * 100 + i, "exchange round %d int %d: %d", round, i, in[i]);
    }
  }
  CHECK_MPI(MPI_Request_free(&both[0]));
  CHECK_MPI(MPI_Request_free(&both[1]));

  /* Synchronous, ready and buffered persistent sends. For the ready send, rank 1 posts its receive first
   * and says so; for the buffered one, rank 0 attaches room for one message. */
  const int buffer_size = (int)sizeof out + MPI_BSEND_OVERHEAD;
  void *buffer = malloc((size_t)buffer_size);
  CHECK_MPI(MPI_Buffer_attach(buffer, buffer_size));
  MPI_Request modes[3];
  if (rank == 0) {
    CHECK_MPI(MPI_Ssend_init(out, kInts, MPI_INT, 1, 30, MPI_COMM_WORLD, &modes[0]));
    CHECK_MPI(MPI_Rsend_init(out, kInts, MPI_INT, 1, 31, MPI_COMM_WORLD, &modes[1]));
    CHECK_MPI(MPI_Bsend_init(out, kInts, MPI_INT, 1, 32, MPI_COMM_WORLD, &modes[2]));
  } else {
    for (int m = 0; m < 3; ++m) CHECK_MPI(MPI_Recv_init(in, kInts, MPI_INT, 0, 30 + m, MPI_COMM_WORLD, &modes[m]));
  }
  for (int round = 0; round < kRounds; ++round) {
    for (int m = 0; m < 3; ++m) {
      for (int i = 0; i < kInts; ++i) out[i] = m * 100000 + round * 100 + i;
      if (rank == 1) {
        CHECK_MPI(MPI_Start(&modes[m]));
        if (m == 1) CHECK_MPI(MPI_Send(NULL, 0, MPI_INT, 0, 39, MPI_COMM_WORLD));
        CHECK_MPI(MPI_Wait(&modes[m], &status));
        for (int i = 0; i < kInts; ++i) {
          CHECK(in[i] == m * 100000 + round * 100 + i, "mode %d round %d int %d: %d", m, round, i, in[i]);
        }
      } else {
        if (m == 1) CHECK_MPI(MPI_Recv(NULL, 0, MPI_INT, 1, 39, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        CHECK_MPI(MPI_Start(&modes[m]));
        CHECK_MPI(MPI_Wait(&modes[m], &status));
      }
    }
  }
  for (int m = 0; m < 3; ++m) CHECK_MPI(MPI_Request_free(&modes[m]));
  void *detached = NULL;
  int detached_size = 0;
  CHECK_MPI(MPI_Buffer_detach(&detached, &detached_size));
  CHECK(detached == buffer && detached_size == buffer_size, "MPI_Buffer_detach gave back another buffer");
  free(buffer);

  CHECK_MPI(MPI_Finalize());
  if (rank == 0) printf("persistent requests, %d rounds: ok\n", kRounds);
  return 0;
}

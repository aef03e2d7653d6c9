/* Matched probes (MPI-3.1 section 3.8.2): MPI_Mprobe / MPI_Improbe take the message they find out of
 * matching, and MPI_Mrecv / MPI_Imrecv receive exactly that message. Every rank but 0 sends rank 0 a
 * message of its own length and contents (eager and rendezvous sizes, checked byte for byte); rank 0
 * probes with MPI_ANY_SOURCE, then, before receiving, posts an ordinary MPI_ANY_SOURCE receive that
 * must NOT get the probed message (it gets the next one), which is what MPI_Probe + MPI_Recv cannot
 * promise. Also: MPI_Improbe polling, MPI_Imrecv with a derived type, MPI_PROC_NULL, and bad handles. */
#include <stdlib.h>
#include <string.h>

#include "check.h"

enum { ROUNDS = 6 };

static int length_of(int sender, int round) {
  /* Small (eager) on even rounds, 256 KB and more (rendezvous) on odd ones. */
  return round % 2 == 0 ? 16 + sender * 8 + round : (256 << 10) + sender * 4096 + round;
}

static void fill(unsigned char *buf, int n, int sender, int round) {
  for (int i = 0; i < n; ++i) buf[i] = (unsigned char)(sender * 31 + round * 7 + i);
}

static void check_message(const unsigned char *buf, int n, int sender, int round, const char *how) {
  CHECK(n == length_of(sender, round), "%s: %d bytes from rank %d round %d", how, n, sender, round);
  for (int i = 0; i < n; ++i) {
    if (buf[i] != (unsigned char)(sender * 31 + round * 7 + i)) {
      CHECK(0, "%s: byte %d of rank %d's round %d message is wrong", how, i, sender, round);
    }
  }
}

int main(int argc, char **argv) {
  CHECK_MPI(MPI_Init(&argc, &argv));
  int rank = 0, size = 0;
  CHECK_MPI(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
  CHECK_MPI(MPI_Comm_size(MPI_COMM_WORLD, &size));
  CHECK(size >= 3, "needs at least 3 ranks");
  const int biggest = (256 << 10) + size * 4096 + ROUNDS;
  unsigned char *a = malloc((size_t)biggest), *b = malloc((size_t)biggest);
  CHECK(a != NULL && b != NULL, "no memory");

  if (rank != 0) {
    for (int round = 0; round < ROUNDS; ++round) {
      fill(a, length_of(rank, round), rank, round);
      CHECK_MPI(MPI_Send(a, length_of(rank, round), MPI_BYTE, 0, round, MPI_COMM_WORLD));
    }
  } else {
    for (int round = 0; round < ROUNDS; ++round) {
      /* Take one sender's message of this round. */
      MPI_Message message = MPI_MESSAGE_NULL;
      MPI_Status probed, got;
      CHECK_MPI(MPI_Mprobe(MPI_ANY_SOURCE, round, MPI_COMM_WORLD, &message, &probed));
      CHECK(message != MPI_MESSAGE_NULL && message != MPI_MESSAGE_NO_PROC, "MPI_Mprobe gave a message");
      int probed_bytes = -1;
      CHECK_MPI(MPI_Get_count(&probed, MPI_BYTE, &probed_bytes));
      /* Every other sender's message of this round, by ordinary receives that must not take it. */
      for (int k = 1; k < size - 1; ++k) {
        CHECK_MPI(MPI_Recv(b, biggest, MPI_BYTE, MPI_ANY_SOURCE, round, MPI_COMM_WORLD, &got));
        CHECK(got.MPI_SOURCE != probed.MPI_SOURCE, "a receive took the message MPI_Mprobe had taken (rank %d)", got.MPI_SOURCE);
        int n = 0;
        CHECK_MPI(MPI_Get_count(&got, MPI_BYTE, &n));
        check_message(b, n, got.MPI_SOURCE, round, "MPI_Recv");
      }
      if (round == 2) {
        /* The nonblocking receive of a taken message. */
        MPI_Request request;
        CHECK_MPI(MPI_Imrecv(a, biggest, MPI_BYTE, &message, &request));
        CHECK(message == MPI_MESSAGE_NULL, "MPI_Imrecv spends the message handle");
        CHECK_MPI(MPI_Wait(&request, &got));
      } else {
        CHECK_MPI(MPI_Mrecv(a, biggest, MPI_BYTE, &message, &got));
        CHECK(message == MPI_MESSAGE_NULL, "MPI_Mrecv spends the message handle");
      }
      int n = 0;
      CHECK_MPI(MPI_Get_count(&got, MPI_BYTE, &n));
      CHECK(got.MPI_SOURCE == probed.MPI_SOURCE && got.MPI_TAG == round && n == probed_bytes,
            "the received message is not the probed one (rank %d, %d bytes; probed rank %d, %d bytes)", got.MPI_SOURCE, n,
            probed.MPI_SOURCE, probed_bytes);
      check_message(a, n, got.MPI_SOURCE, round, "MPI_Mrecv");
    }
  }

  /* MPI_Improbe polling, and MPI_Mrecv into a derived type: rank 1 sends 8 ints, rank 0 receives them
   * into every other int of 16. */
  if (rank == 1) {
    int values[8];
    for (int i = 0; i < 8; ++i) values[i] = 100 + i;
    CHECK_MPI(MPI_Send(values, 8, MPI_INT, 0, 77, MPI_COMM_WORLD));
  } else if (rank == 0) {
    int flag = 0, polls = 0;
    MPI_Message message = MPI_MESSAGE_NULL;
    MPI_Status status;
    while (!flag) {
      CHECK_MPI(MPI_Improbe(1, 77, MPI_COMM_WORLD, &flag, &message, &status));
      ++polls;
    }
    CHECK(status.MPI_SOURCE == 1 && status.MPI_TAG == 77, "MPI_Improbe's status");
    /* Taken: an MPI_Iprobe no longer sees it. */
    int seen = 1;
    CHECK_MPI(MPI_Iprobe(1, 77, MPI_COMM_WORLD, &seen, MPI_STATUS_IGNORE));
    CHECK(!seen, "MPI_Iprobe still sees a message MPI_Improbe took");
    MPI_Datatype every_other;
    CHECK_MPI(MPI_Type_vector(8, 1, 2, MPI_INT, &every_other));
    CHECK_MPI(MPI_Type_commit(&every_other));
    int spread[16];
    memset(spread, 0, sizeof spread);
    CHECK_MPI(MPI_Mrecv(spread, 1, every_other, &message, &status));
    for (int i = 0; i < 16; ++i) CHECK(spread[i] == (i % 2 == 0 ? 100 + i / 2 : 0), "spread[%d] = %d", i, spread[i]);
    CHECK_MPI(MPI_Type_free(&every_other));

    /* MPI_PROC_NULL: a message that receives nothing at once. */
    CHECK_MPI(MPI_Mprobe(MPI_PROC_NULL, 0, MPI_COMM_WORLD, &message, &status));
    CHECK(message == MPI_MESSAGE_NO_PROC && status.MPI_SOURCE == MPI_PROC_NULL, "MPI_PROC_NULL's message");
    CHECK_MPI(MPI_Mrecv(spread, 4, MPI_INT, &message, &status));
    int n = -1;
    CHECK_MPI(MPI_Get_count(&status, MPI_INT, &n));
    CHECK(message == MPI_MESSAGE_NULL && status.MPI_SOURCE == MPI_PROC_NULL && n == 0, "MPI_Mrecv of MPI_MESSAGE_NO_PROC");

    /* Bad handles. */
    CHECK_MPI(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    message = MPI_MESSAGE_NULL;
    CHECK_CLASS(MPI_ERR_REQUEST, MPI_Mrecv(spread, 1, MPI_INT, &message, &status));
    message = 12345;
    CHECK_CLASS(MPI_ERR_REQUEST, MPI_Mrecv(spread, 1, MPI_INT, &message, &status));
    CHECK_CLASS(MPI_ERR_TAG, MPI_Mprobe(0, -3, MPI_COMM_WORLD, &message, &status));
    CHECK_CLASS(MPI_ERR_RANK, MPI_Improbe(size, 0, MPI_COMM_WORLD, &n, &message, &status));
  }
  free(a);
  free(b);
  CHECK_MPI(MPI_Finalize());
  return 0;
}

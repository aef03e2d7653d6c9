/* MPI_Cancel of sends. MPI guarantees that MPI_Wait returns for a send marked for cancellation, whatever
 * the receiver does; ftmpi withdraws a rendezvous send (synchronous, or above the eager limit) that no
 * receive has matched, and lets a matched one, or an eager one already handed to the network, go on.
 * Rank 0 sends to every other rank in turn; each case checks, at the receiver, that a cancelled message
 * never arrives and that a message whose cancel failed arrives whole, exactly once (the next message on
 * the tag, sent after the case, is a marker the receiver must get next).
 * Argument: rounds of the seeded random mix (default 40); FTMPI_TEST_SEED replays one. */
#include <stdint.h>
#include <string.h>

#include "check.h"

enum { kTagData = 10, kTagVerdict = 11, kTagNext = 12 };

static unsigned long long next_random(unsigned long long *state) {
  *state ^= *state << 13;
  *state ^= *state >> 7;
  *state ^= *state << 17;
  return *state;
}

static void fill(unsigned char *buf, int n, int salt) {
  for (int i = 0; i < n; ++i) buf[i] = (unsigned char)(i * 31 + salt);
}

static void check_filled(const unsigned char *buf, int n, int salt, const char *what) {
  for (int i = 0; i < n; ++i) {
    if (buf[i] != (unsigned char)(i * 31 + salt)) {
      CHECK(0, "%s: byte %d is %d, expected %d", what, i, buf[i], (unsigned char)(i * 31 + salt));
    }
  }
}

/* How a case sends (rank 0) and whether the receiver posts its receive before the cancel. */
typedef enum { kIsend, kIssend, kPersistentSsend, kPersistentSend } SendKind;

static const char *kind_name(SendKind kind) {
  switch (kind) {
    case kIsend: return "MPI_Isend";
    case kIssend: return "MPI_Issend";
    case kPersistentSsend: return "MPI_Ssend_init";
    case kPersistentSend: return "MPI_Send_init";
  }
  return "?";
}

/* One case between rank 0 and `peer`. `posted`: the receiver posts its receive first (then no cancel may
 * succeed). Returns whether the send was cancelled (rank 0) or 0 elsewhere. */
static int one_case(int rank, int peer, SendKind kind, int bytes, int posted, int salt, int must_cancel) {
  unsigned char *buf = malloc((size_t)bytes + 1);
  CHECK(buf != NULL, "out of memory");
  int cancelled = 0;
  if (rank == 0) {
    fill(buf, bytes, salt);
    MPI_Request request;
    MPI_Status status;
    if (posted) CHECK_MPI(MPI_Recv(NULL, 0, MPI_BYTE, peer, kTagNext, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    switch (kind) {
      case kIsend: CHECK_MPI(MPI_Isend(buf, bytes, MPI_BYTE, peer, kTagData, MPI_COMM_WORLD, &request)); break;
      case kIssend: CHECK_MPI(MPI_Issend(buf, bytes, MPI_BYTE, peer, kTagData, MPI_COMM_WORLD, &request)); break;
      case kPersistentSsend:
        CHECK_MPI(MPI_Ssend_init(buf, bytes, MPI_BYTE, peer, kTagData, MPI_COMM_WORLD, &request));
        CHECK_MPI(MPI_Start(&request));
        break;
      case kPersistentSend:
        CHECK_MPI(MPI_Send_init(buf, bytes, MPI_BYTE, peer, kTagData, MPI_COMM_WORLD, &request));
        CHECK_MPI(MPI_Start(&request));
        break;
    }
    CHECK_MPI(MPI_Cancel(&request));
    CHECK_MPI(MPI_Wait(&request, &status));
    CHECK_MPI(MPI_Test_cancelled(&status, &cancelled));
    if (kind == kPersistentSsend || kind == kPersistentSend) {
      CHECK(request != MPI_REQUEST_NULL, "a persistent request was freed by MPI_Wait");
      /* Cancelled or not, it can be started again; its receiver takes this one after the verdict. */
      if (cancelled) {
        CHECK_MPI(MPI_Send(&cancelled, 1, MPI_INT, peer, kTagVerdict, MPI_COMM_WORLD));
        CHECK_MPI(MPI_Start(&request));
        CHECK_MPI(MPI_Wait(&request, &status));
        CHECK_MPI(MPI_Test_cancelled(&status, &cancelled));
        CHECK(cancelled == 0, "%s started again after a cancel reads as cancelled", kind_name(kind));
        cancelled = 1;
      } else {
        CHECK_MPI(MPI_Send(&cancelled, 1, MPI_INT, peer, kTagVerdict, MPI_COMM_WORLD));
      }
      CHECK_MPI(MPI_Request_free(&request));
    } else {
      CHECK(request == MPI_REQUEST_NULL, "MPI_Wait did not free the request");
      CHECK_MPI(MPI_Send(&cancelled, 1, MPI_INT, peer, kTagVerdict, MPI_COMM_WORLD));
    }
    if (posted) CHECK(!cancelled, "%s of %d bytes cancelled though its receive was posted", kind_name(kind), bytes);
    if (must_cancel && !posted) CHECK(cancelled, "%s of %d bytes not cancelled though no receive was posted", kind_name(kind), bytes);
    /* The next message on the data tag: what the receiver must get next if this one was withdrawn. */
    int next = salt + 1;
    CHECK_MPI(MPI_Send(&next, 1, MPI_INT, peer, kTagData, MPI_COMM_WORLD));
  } else if (rank == peer) {
    MPI_Request request = MPI_REQUEST_NULL;
    MPI_Status status;
    if (posted) {
      CHECK_MPI(MPI_Irecv(buf, bytes, MPI_BYTE, 0, kTagData, MPI_COMM_WORLD, &request));
      CHECK_MPI(MPI_Send(NULL, 0, MPI_BYTE, 0, kTagNext, MPI_COMM_WORLD));
    }
    int verdict = -1;
    CHECK_MPI(MPI_Recv(&verdict, 1, MPI_INT, 0, kTagVerdict, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    if (posted) {
      CHECK(verdict == 0, "the sender says a matched send was cancelled");
      CHECK_MPI(MPI_Wait(&request, &status));
      int count = -1;
      CHECK_MPI(MPI_Get_count(&status, MPI_BYTE, &count));
      CHECK(count == bytes, "received %d bytes, expected %d", count, bytes);
      check_filled(buf, bytes, salt, "a send whose cancel failed");
    } else if (!verdict) {
      memset(buf, 0, (size_t)bytes);
      CHECK_MPI(MPI_Recv(buf, bytes, MPI_BYTE, 0, kTagData, MPI_COMM_WORLD, &status));
      int count = -1;
      CHECK_MPI(MPI_Get_count(&status, MPI_BYTE, &count));
      CHECK(count == bytes, "received %d bytes, expected %d", count, bytes);
      check_filled(buf, bytes, salt, "a send whose cancel failed");
    } else if (kind == kPersistentSsend || kind == kPersistentSend) {
      /* Cancelled, then started again: that second message comes, and only it. */
      memset(buf, 0, (size_t)bytes);
      CHECK_MPI(MPI_Recv(buf, bytes, MPI_BYTE, 0, kTagData, MPI_COMM_WORLD, &status));
      check_filled(buf, bytes, salt, "a persistent send started again");
    }
    /* A withdrawn message is gone: the next one on the tag is the marker, never the cancelled bytes. */
    int next = -1;
    CHECK_MPI(MPI_Recv(&next, 1, MPI_INT, 0, kTagData, MPI_COMM_WORLD, &status));
    int count = -1;
    CHECK_MPI(MPI_Get_count(&status, MPI_BYTE, &count));
    CHECK(count == (int)sizeof(int) && next == salt + 1,
          "after a %s of %d bytes (%s), the next message on its tag is %d bytes (%d), not the marker",
          kind_name(kind), bytes, verdict ? "cancelled" : "not cancelled", count, next);
  }
  free(buf);
  return cancelled;
}

int main(int argc, char **argv) {
  CHECK_MPI(MPI_Init(&argc, &argv));
  int rank = 0;
  int size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  CHECK(size >= 2, "needs at least 2 ranks");
  const int rounds = argc > 1 ? atoi(argv[1]) : 40;
  unsigned long long seed = 0x5eedcafe;
  if (getenv("FTMPI_TEST_SEED") != NULL) seed = strtoull(getenv("FTMPI_TEST_SEED"), NULL, 0);
  if (rank == 0) printf("send_cancel: seed %llu (replay: FTMPI_TEST_SEED=%llu)\n", seed, seed);

  /* The cases MPI requires to end: a synchronous send and a large one that no receive matches must be
   * withdrawn (else MPI_Wait would wait forever); with the receive posted, nothing is withdrawn. */
  const int sizes[] = {0, 1, 4096, 70000, 1 << 20};
  for (int peer = 1; peer < size; ++peer) {
    for (unsigned s = 0; s < sizeof sizes / sizeof sizes[0]; ++s) {
      one_case(rank, peer, kIssend, sizes[s], 0, (int)s, 1);
      one_case(rank, peer, kIssend, sizes[s], 1, (int)s + 7, 0);
      one_case(rank, peer, kPersistentSsend, sizes[s], 0, (int)s + 3, 1);
    }
    one_case(rank, peer, kIsend, 1 << 20, 0, 5, 1);
    one_case(rank, peer, kPersistentSend, 1 << 20, 0, 9, 1);
    one_case(rank, peer, kIsend, 1 << 20, 1, 6, 0);
    /* An eager send may or may not be withdrawn: either way it arrives exactly once or never. */
    one_case(rank, peer, kIsend, 8, 0, 2, 0);
  }
  /* A seeded mix: kind, size, posted or not. */
  unsigned long long state = seed | 1;
  for (int round = 0; round < rounds; ++round) {
    const int peer = 1 + (int)(next_random(&state) % (unsigned long long)(size - 1));
    const SendKind kind = (SendKind)(next_random(&state) % 4);
    const int bytes = (int)(next_random(&state) % 3 == 0 ? next_random(&state) % 300000 : next_random(&state) % 200);
    const int posted = (int)(next_random(&state) % 2);
    const int must = kind == kIssend || kind == kPersistentSsend;
    one_case(rank, peer, kind, bytes, posted, round, must);
  }
  CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
  if (rank == 0) printf("send_cancel: ok\n");
  CHECK_MPI(MPI_Finalize());
  return 0;
}

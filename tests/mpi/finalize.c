/* MPI_Finalize must end the job whatever the network loses, and must not return before what this rank
 * sent is safe at its peer. Run over lossy UDP (see CMakeLists.txt), every rank:
 *   1. sends every other rank messages that nobody ever receives: erroneous in MPI's terms, common in
 *      practice; the job must still end, not wait for a receive that never comes;
 *   2. exchanges checked messages with every other rank, eager and rendezvous;
 *   3. sends its last message and calls MPI_Finalize at once, while that message may still be lost and
 *      resent; its receiver checks it and then finalizes too.
 * A rank that left finalize too early would leave its peer waiting for a resend that never comes (the job
 * then times out); one that waited for the unreceived messages would never leave. */
#include <stdlib.h>

#include "check.h"

enum { kEagerBytes = 256, kLargeBytes = 200 * 1000, kUnreceived = 3, kTagUnreceived = 7, kTagLast = 9 };

static unsigned char pattern(int from, int to, int tag, size_t i) {
  return (unsigned char)(from * 31 + to * 7 + tag * 13 + (int)(i % 251));
}

static void fill(unsigned char *buf, size_t n, int from, int to, int tag) {
  for (size_t i = 0; i < n; ++i) buf[i] = pattern(from, to, tag, i);
}

static void check_contents(const unsigned char *buf, size_t n, int from, int to, int tag) {
  for (size_t i = 0; i < n; ++i) {
    CHECK(buf[i] == pattern(from, to, tag, i), "message %d->%d tag %d: byte %zu is %u, expected %u", from, to,
          tag, i, buf[i], pattern(from, to, tag, i));
  }
}

int main(int argc, char **argv) {
  int rank = 0;
  int size = 0;
  CHECK_MPI(MPI_Init(&argc, &argv));
  CHECK_MPI(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
  CHECK_MPI(MPI_Comm_size(MPI_COMM_WORLD, &size));
  CHECK(size >= 2, "needs at least 2 ranks, got %d", size);

  unsigned char *out = malloc(kLargeBytes);
  unsigned char *in = malloc(kLargeBytes);
  CHECK(out != NULL && in != NULL, "out of memory");

  // 1. Never received.
  for (int peer = 0; peer < size; ++peer) {
    if (peer == rank) continue;
    for (int k = 0; k < kUnreceived; ++k) {
      fill(out, kEagerBytes, rank, peer, kTagUnreceived);
      CHECK_MPI(MPI_Send(out, kEagerBytes, MPI_BYTE, peer, kTagUnreceived, MPI_COMM_WORLD));
    }
  }

  // 2. Pairwise exchanges (each pair in a fixed order, so that blocking calls cannot deadlock).
  const size_t sizes[] = {0, kEagerBytes, kLargeBytes};
  for (int peer = 0; peer < size; ++peer) {
    if (peer == rank) continue;
    for (int s = 0; s < 3; ++s) {
      const int tag = 20 + s;
      fill(out, sizes[s], rank, peer, tag);
      MPI_Status status;
      CHECK_MPI(MPI_Sendrecv(out, (int)sizes[s], MPI_BYTE, peer, tag, in, kLargeBytes, MPI_BYTE, peer, tag,
                             MPI_COMM_WORLD, &status));
      int count = -1;
      CHECK_MPI(MPI_Get_count(&status, MPI_BYTE, &count));
      CHECK(count == (int)sizes[s], "from rank %d: %d bytes, expected %zu", peer, count, sizes[s]);
      check_contents(in, sizes[s], peer, rank, tag);
    }
  }

  // 3. Rank r sends its last message to rank r+1 and finalizes at once; rank r+1 checks it first.
  const int to = (rank + 1) % size;
  const int from = (rank + size - 1) % size;
  const size_t last_bytes = (rank % 2 == 0) ? kEagerBytes : kLargeBytes;
  const size_t from_bytes = (from % 2 == 0) ? kEagerBytes : kLargeBytes;
  MPI_Request receive;
  CHECK_MPI(MPI_Irecv(in, kLargeBytes, MPI_BYTE, from, kTagLast, MPI_COMM_WORLD, &receive));
  fill(out, last_bytes, rank, to, kTagLast);
  CHECK_MPI(MPI_Send(out, (int)last_bytes, MPI_BYTE, to, kTagLast, MPI_COMM_WORLD));
  MPI_Status status;
  CHECK_MPI(MPI_Wait(&receive, &status));
  int count = -1;
  CHECK_MPI(MPI_Get_count(&status, MPI_BYTE, &count));
  CHECK(count == (int)from_bytes, "last message from rank %d: %d bytes, expected %zu", from, count, from_bytes);
  check_contents(in, from_bytes, from, rank, kTagLast);

  free(out);
  free(in);
  CHECK_MPI(MPI_Finalize());
  if (rank == 0) printf("finalize on %d ranks: ok\n", size);
  return 0;
}

/* MPI_THREAD_MULTIPLE: threads sending to different peers do not serialise on one lock.
 *
 *   threads_overlap [ROUNDS]   (default 200)
 *
 * Rank 0 runs one thread per other rank; thread t sends to rank t + 1 only. The job runs with
 * engine.test.overlap_tag=77: a send with tag 77 waits inside the engine, holding its peer's lock, until
 * a send to another peer is under way too (the job ends with the reason if none comes within 30 s). Each
 * thread's first message carries tag 77, so the job ends normally only if two sends to different peers
 * were inside the library at the same moment: with one lock around sending, the second thread would wait
 * for the first, and the first would wait for it. Then ROUNDS exchanges per thread, eager and rendezvous,
 * blocking and nonblocking, every byte checked: the concurrent sends deliver everything intact. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

enum { kOverlapTag = 77, kDataTag = 5, kMaxThreads = 8 };

static int rounds = 200;
static int size;

static const int sizes[] = {0, 8, 4000, 70000};
#define NSIZES ((int)(sizeof sizes / sizeof sizes[0]))

static unsigned char byte_of(int peer, int round, int i) { return (unsigned char)(peer * 37 + round * 11 + i * 7); }

static void *sender(void *arg) {
  const int peer = *(int *)arg;
  int witness = peer;
  CHECK_MPI(MPI_Send(&witness, 1, MPI_INT, peer, kOverlapTag, MPI_COMM_WORLD));
  unsigned char *buf = malloc(70000);
  unsigned char *back = malloc(70000);
  CHECK(buf != NULL && back != NULL, "malloc");
  for (int round = 0; round < rounds; ++round) {
    const int n = sizes[round % NSIZES];
    for (int i = 0; i < n; ++i) buf[i] = byte_of(peer, round, i);
    if (round % 2 == 0) {
      CHECK_MPI(MPI_Send(buf, n, MPI_BYTE, peer, kDataTag, MPI_COMM_WORLD));
    } else {
      MPI_Request request;
      CHECK_MPI(MPI_Isend(buf, n, MPI_BYTE, peer, kDataTag, MPI_COMM_WORLD, &request));
      CHECK_MPI(MPI_Wait(&request, MPI_STATUS_IGNORE));
    }
    MPI_Status status;
    CHECK_MPI(MPI_Recv(back, n, MPI_BYTE, peer, kDataTag, MPI_COMM_WORLD, &status));
    int got = -1;
    CHECK_MPI(MPI_Get_count(&status, MPI_BYTE, &got));
    CHECK(got == n, "round %d: %d bytes back from rank %d, expected %d", round, got, peer, n);
    for (int i = 0; i < n; ++i) {
      CHECK(back[i] == (unsigned char)~byte_of(peer, round, i), "round %d: byte %d from rank %d is %d", round, i,
            peer, back[i]);
    }
  }
  free(buf);
  free(back);
  return NULL;
}

int main(int argc, char **argv) {
  int provided = MPI_THREAD_SINGLE;
  CHECK_MPI(MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided));
  CHECK(provided == MPI_THREAD_MULTIPLE, "provided %d", provided);
  if (argc > 1) rounds = atoi(argv[1]);
  int rank;
  CHECK_MPI(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
  CHECK_MPI(MPI_Comm_size(MPI_COMM_WORLD, &size));
  CHECK(size >= 3 && size - 1 <= kMaxThreads, "run with 3 to %d ranks", kMaxThreads + 1);
  if (rank == 0) {
    pthread_t ids[kMaxThreads];
    int peers[kMaxThreads];
    for (int t = 0; t < size - 1; ++t) {
      peers[t] = t + 1;
      CHECK(pthread_create(&ids[t], NULL, sender, &peers[t]) == 0, "pthread_create");
    }
    for (int t = 0; t < size - 1; ++t) pthread_join(ids[t], NULL);
  } else {
    int witness = -1;
    CHECK_MPI(MPI_Recv(&witness, 1, MPI_INT, 0, kOverlapTag, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    CHECK(witness == rank, "witness %d", witness);
    unsigned char *buf = malloc(70000);
    CHECK(buf != NULL, "malloc");
    for (int round = 0; round < rounds; ++round) {
      const int n = sizes[round % NSIZES];
      MPI_Status status;
      CHECK_MPI(MPI_Recv(buf, n, MPI_BYTE, 0, kDataTag, MPI_COMM_WORLD, &status));
      for (int i = 0; i < n; ++i) {
        CHECK(buf[i] == byte_of(rank, round, i), "round %d: byte %d is %d", round, i, buf[i]);
        buf[i] = (unsigned char)~buf[i];
      }
      CHECK_MPI(MPI_Send(buf, n, MPI_BYTE, 0, kDataTag, MPI_COMM_WORLD));
    }
    free(buf);
  }
  CHECK_MPI(MPI_Finalize());
  return 0;
}

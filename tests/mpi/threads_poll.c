/* MPI_THREAD_MULTIPLE: a receive can be posted while another thread's progress round polls the paths.
 *
 *   threads_poll [ROUNDS]   (default 200)
 *
 * Two ranks. The job runs with engine.test.poll_tag=80: posting a receive with tag 80 makes the posting
 * thread's next progress round wait, holding the poll lock, until another thread posts a receive with
 * tag 81 (the job ends with the reason if none is posted within 30 s); while it is armed, no other
 * thread's round polls. On rank 0 thread A posts the receive with tag 80 and waits for it, so its round
 * waits; thread B, once A's receive is posted, tells rank 1 to send it (tag 82) and posts and cancels
 * receives with tag 81 until A's receive is complete. Rank 1's message can only be delivered by A's own
 * round, which waited first. The job ends normally only if B's receive got into the engine while A's
 * round held the poll lock: with one lock around receiving and polling, A's round would wait for B's
 * receive, and B's receive for A's round. Then ROUNDS exchanges per thread on each rank (one thread per
 * tag on both sides), eager and rendezvous, blocking and nonblocking, every byte checked: receives
 * posted while another thread polls get everything intact. */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

enum { kPollTag = 80, kDataTag = 10, kThreads = 2 };

static int rounds = 200;
static int rank;

static const int sizes[] = {0, 8, 4000, 70000};
#define NSIZES ((int)(sizeof sizes / sizeof sizes[0]))

static unsigned char byte_of(int thread, int round, int i) { return (unsigned char)(thread * 37 + round * 11 + i * 7); }

/* ROUNDS exchanges on tag kDataTag + thread: rank 0 sends and checks the complement coming back. */
static void exchange(int thread) {
  const int tag = kDataTag + thread;
  unsigned char *buf = malloc(70000);
  unsigned char *back = malloc(70000);
  CHECK(buf != NULL && back != NULL, "malloc");
  for (int round = 0; round < rounds; ++round) {
    const int n = sizes[(round + thread) % NSIZES];
    MPI_Status status;
    if (rank == 0) {
      for (int i = 0; i < n; ++i) buf[i] = byte_of(thread, round, i);
      MPI_Request request;
      CHECK_MPI(MPI_Irecv(back, n, MPI_BYTE, 1, tag, MPI_COMM_WORLD, &request));
      if (round % 2 == 0) {
        CHECK_MPI(MPI_Send(buf, n, MPI_BYTE, 1, tag, MPI_COMM_WORLD));
      } else {
        MPI_Request send;
        CHECK_MPI(MPI_Isend(buf, n, MPI_BYTE, 1, tag, MPI_COMM_WORLD, &send));
        CHECK_MPI(MPI_Wait(&send, MPI_STATUS_IGNORE));
      }
      CHECK_MPI(MPI_Wait(&request, &status));
      int got = -1;
      CHECK_MPI(MPI_Get_count(&status, MPI_BYTE, &got));
      CHECK(got == n, "thread %d round %d: %d bytes back, expected %d", thread, round, got, n);
      for (int i = 0; i < n; ++i) {
        CHECK(back[i] == (unsigned char)~byte_of(thread, round, i), "thread %d round %d: byte %d is %d", thread,
              round, i, back[i]);
      }
    } else {
      CHECK_MPI(MPI_Recv(buf, n, MPI_BYTE, 0, tag, MPI_COMM_WORLD, &status));
      for (int i = 0; i < n; ++i) {
        CHECK(buf[i] == byte_of(thread, round, i), "thread %d round %d: byte %d is %d", thread, round, i, buf[i]);
        buf[i] = (unsigned char)~buf[i];
      }
      CHECK_MPI(MPI_Send(buf, n, MPI_BYTE, 0, tag, MPI_COMM_WORLD));
    }
  }
  free(buf);
  free(back);
}

static atomic_int a_posted, a_done;

static void *thread_main(void *arg) {
  const int thread = *(int *)arg;
  if (rank == 0 && thread == 0) {
    /* A: its receive arms the hook; its own progress round then waits for one of B's receives. */
    int witness = -1;
    MPI_Request request;
    CHECK_MPI(MPI_Irecv(&witness, 1, MPI_INT, 1, kPollTag, MPI_COMM_WORLD, &request));
    atomic_store(&a_posted, 1);
    CHECK_MPI(MPI_Wait(&request, MPI_STATUS_IGNORE));
    atomic_store(&a_done, 1);
    CHECK(witness == 2, "witness %d", witness);
  } else if (rank == 0) {
    /* B: rank 1 may send once A's receive is posted; receives on tag 81 until A's is complete. */
    while (!atomic_load(&a_posted)) sched_yield();
    int go = 1;
    CHECK_MPI(MPI_Send(&go, 1, MPI_INT, 1, kPollTag + 2, MPI_COMM_WORLD));
    long posted = 0;
    while (!atomic_load(&a_done)) {
      int none = -1;
      MPI_Request request;
      MPI_Status status;
      CHECK_MPI(MPI_Irecv(&none, 1, MPI_INT, 1, kPollTag + 1, MPI_COMM_WORLD, &request));
      CHECK_MPI(MPI_Cancel(&request));
      CHECK_MPI(MPI_Wait(&request, &status));
      int cancelled = 0;
      CHECK_MPI(MPI_Test_cancelled(&status, &cancelled));
      CHECK(cancelled, "a receive on tag %d nobody sends to was not cancelled", kPollTag + 1);
      ++posted;
    }
    CHECK(posted > 0, "A's receive completed before B posted any receive");
  }
  exchange(thread);
  return NULL;
}

int main(int argc, char **argv) {
  int provided = MPI_THREAD_SINGLE;
  CHECK_MPI(MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided));
  CHECK(provided == MPI_THREAD_MULTIPLE, "provided %d", provided);
  if (argc > 1) rounds = atoi(argv[1]);
  int size;
  CHECK_MPI(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
  CHECK_MPI(MPI_Comm_size(MPI_COMM_WORLD, &size));
  CHECK(size == 2, "run with 2 ranks");
  if (rank == 1) {
    int witness = 0;
    CHECK_MPI(MPI_Recv(&witness, 1, MPI_INT, 0, kPollTag + 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    witness = 2;
    CHECK_MPI(MPI_Send(&witness, 1, MPI_INT, 0, kPollTag, MPI_COMM_WORLD));
  }
  pthread_t ids[kThreads];
  int threads[kThreads];
  for (int t = 0; t < kThreads; ++t) {
    threads[t] = t;
    CHECK(pthread_create(&ids[t], NULL, thread_main, &threads[t]) == 0, "pthread_create");
  }
  for (int t = 0; t < kThreads; ++t) pthread_join(ids[t], NULL);
  CHECK_MPI(MPI_Finalize());
  return 0;
}

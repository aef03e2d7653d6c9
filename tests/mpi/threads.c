/* MPI_THREAD_MULTIPLE: several threads per rank calling MPI at once.
 *
 *   threads [THREADS] [ROUNDS]   (defaults 4 and 20)
 *
 * 1. Point-to-point: every thread exchanges messages with the next and previous rank in a ring, on a
 *    tag of its own, at sizes from empty to 1 MB (eager and rendezvous), with blocking and nonblocking
 *    calls; every byte checked.
 * 2. Requests completed in another thread: one thread posts receives, another waits for them.
 * 3. Matched probes: every thread of rank 0 takes messages with MPI_Mprobe(MPI_ANY_SOURCE) and receives
 *    them with MPI_Mrecv or MPI_Imrecv; each message sent is received exactly once, intact.
 * 4. Communicators: every thread makes communicators from its own parent at the same time as the others
 *    (dup, split), runs collectives on them and frees them: context ids agreed concurrently never clash.
 * 5. Wildcard receives: threads of each rank receive with MPI_ANY_SOURCE and MPI_ANY_TAG on one
 *    communicator while the others send; every message arrives once. */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

static int threads = 4;
static int rounds = 20;
static int rank;
static int size;

static const int sizes[] = {0, 1, 8, 1000, 8192, 70000, 1 << 20};
#define NSIZES ((int)(sizeof sizes / sizeof sizes[0]))

static unsigned char byte_of(int from, int thread, int round, int i) {
  return (unsigned char)(from * 131 + thread * 31 + round * 7 + i * 13 + (i >> 8));
}

static void fill(unsigned char *buf, int n, int from, int thread, int round) {
  for (int i = 0; i < n; ++i) buf[i] = byte_of(from, thread, round, i);
}

static void verify(const unsigned char *buf, int n, int from, int thread, int round) {
  for (int i = 0; i < n; ++i) {
    CHECK(buf[i] == byte_of(from, thread, round, i), "thread %d round %d: byte %d of %d from rank %d is %d", thread,
          round, i, n, from, buf[i]);
  }
}

typedef void *(*thread_body)(void *);

static void run_threads(thread_body body) {
  pthread_t ids[64];
  int index[64];
  for (int t = 0; t < threads; ++t) {
    index[t] = t;
    CHECK(pthread_create(&ids[t], NULL, body, &index[t]) == 0, "pthread_create");
  }
  for (int t = 0; t < threads; ++t) pthread_join(ids[t], NULL);
}

/* 1. */
static void *ring_exchange(void *arg) {
  const int t = *(int *)arg;
  const int next = (rank + 1) % size;
  const int prev = (rank + size - 1) % size;
  unsigned char *out = malloc(1 << 20);
  unsigned char *in = malloc(1 << 20);
  CHECK(out && in, "malloc");
  for (int r = 0; r < rounds; ++r) {
    const int n = sizes[(r + t) % NSIZES];
    fill(out, n, rank, t, r);
    memset(in, 0xee, (size_t)n);
    MPI_Status status;
    if (r % 2 == 0) {
      MPI_Request send;
      CHECK_MPI(MPI_Isend(out, n, MPI_BYTE, next, t, MPI_COMM_WORLD, &send));
      CHECK_MPI(MPI_Recv(in, n, MPI_BYTE, prev, t, MPI_COMM_WORLD, &status));
      CHECK_MPI(MPI_Wait(&send, MPI_STATUS_IGNORE));
    } else {
      CHECK_MPI(MPI_Sendrecv(out, n, MPI_BYTE, next, t, in, n, MPI_BYTE, prev, t, MPI_COMM_WORLD, &status));
    }
    int count = -1;
    CHECK_MPI(MPI_Get_count(&status, MPI_BYTE, &count));
    CHECK(count == n && status.MPI_SOURCE == prev && status.MPI_TAG == t, "thread %d: status %d/%d/%d", t, count,
          status.MPI_SOURCE, status.MPI_TAG);
    verify(in, n, prev, t, r);
  }
  free(out);
  free(in);
  return NULL;
}

/* 2. Thread 0 posts, thread 1 waits (and the other way round on odd rounds). */
static MPI_Request handed[8];
static unsigned char *handed_buf[8];
static pthread_barrier_t pair;

static void *hand_over(void *arg) {
  const int t = *(int *)arg;
  const int next = (rank + 1) % size;
  const int prev = (rank + size - 1) % size;
  const int n = 70000;
  unsigned char *out = malloc(n);
  CHECK(out, "malloc");
  for (int r = 0; r < rounds; ++r) {
    const int poster = r % 2;
    if (t == poster) {
      for (int k = 0; k < 8; ++k) {
        memset(handed_buf[k], 0, n);
        CHECK_MPI(MPI_Irecv(handed_buf[k], n, MPI_BYTE, prev, 100 + k, MPI_COMM_WORLD, &handed[k]));
      }
    }
    pthread_barrier_wait(&pair);
    if (t == poster) {
      for (int k = 0; k < 8; ++k) {
        fill(out, n, rank, k, r);
        CHECK_MPI(MPI_Send(out, n, MPI_BYTE, next, 100 + k, MPI_COMM_WORLD));
      }
    } else {
      MPI_Status statuses[8];
      CHECK_MPI(MPI_Waitall(8, handed, statuses));
      for (int k = 0; k < 8; ++k) {
        CHECK(handed[k] == MPI_REQUEST_NULL && statuses[k].MPI_TAG == 100 + k, "request %d not completed", k);
        verify(handed_buf[k], n, prev, k, r);
      }
    }
    pthread_barrier_wait(&pair);
  }
  free(out);
  return NULL;
}

/* 3. Every other rank sends `rounds` messages per thread of rank 0 on tag 7; rank 0's threads take them
 * all, whoever they come from, and mark each (sender, number) seen. */
static unsigned char *seen;
static pthread_mutex_t seen_lock = PTHREAD_MUTEX_INITIALIZER;

static void *probe_receive(void *arg) {
  const int t = *(int *)arg;
  const int per_thread = rounds * (size - 1);
  unsigned char *in = malloc(8 + (1 << 20));
  CHECK(in, "malloc");
  for (int m = 0; m < per_thread; ++m) {
    MPI_Message message;
    MPI_Status status;
    CHECK_MPI(MPI_Mprobe(MPI_ANY_SOURCE, 7, MPI_COMM_WORLD, &message, &status));
    int n = -1;
    CHECK_MPI(MPI_Get_count(&status, MPI_BYTE, &n));
    if ((m + t) % 2 == 0) {
      CHECK_MPI(MPI_Mrecv(in, n, MPI_BYTE, &message, MPI_STATUS_IGNORE));
    } else {
      MPI_Request request;
      CHECK_MPI(MPI_Imrecv(in, n, MPI_BYTE, &message, &request));
      CHECK_MPI(MPI_Wait(&request, MPI_STATUS_IGNORE));
    }
    CHECK(message == MPI_MESSAGE_NULL, "the message handle is spent");
    CHECK(n >= 8, "message of %d bytes", n);
    int from = -1;
    int number = -1;
    memcpy(&from, in, 4);
    memcpy(&number, in + 4, 4);
    CHECK(from == status.MPI_SOURCE && number >= 0 && number < threads * rounds, "message %d from %d (status %d)",
          number, from, status.MPI_SOURCE);
    for (int i = 8; i < n; ++i) CHECK(in[i] == byte_of(from, number, 0, i), "byte %d of message %d", i, number);
    pthread_mutex_lock(&seen_lock);
    unsigned char *mark = &seen[from * threads * rounds + number];
    CHECK(*mark == 0, "message %d from rank %d received twice", number, from);
    *mark = 1;
    pthread_mutex_unlock(&seen_lock);
  }
  free(in);
  return NULL;
}

static void *probe_send(void *arg) {
  const int t = *(int *)arg;
  unsigned char *out = malloc(8 + (1 << 20));
  CHECK(out, "malloc");
  for (int m = 0; m < rounds; ++m) {
    const int number = t * rounds + m;
    const int n = 8 + sizes[(number) % NSIZES];
    memcpy(out, &rank, 4);
    memcpy(out + 4, &number, 4);
    for (int i = 8; i < n; ++i) out[i] = byte_of(rank, number, 0, i);
    CHECK_MPI(MPI_Send(out, n, MPI_BYTE, 0, 7, MPI_COMM_WORLD));
  }
  free(out);
  return NULL;
}

/* 4. */
static MPI_Comm parents[64];

static void *make_communicators(void *arg) {
  const int t = *(int *)arg;
  for (int r = 0; r < rounds / 2 + 1; ++r) {
    MPI_Comm dup;
    MPI_Comm half;
    CHECK_MPI(MPI_Comm_dup(parents[t], &dup));
    CHECK_MPI(MPI_Comm_split(dup, rank % 2, size - rank, &half));
    int sum = 0;
    const int mine = rank + 1;
    CHECK_MPI(MPI_Allreduce(&mine, &sum, 1, MPI_INT, MPI_SUM, dup));
    CHECK(sum == size * (size + 1) / 2, "thread %d: allreduce %d", t, sum);
    int half_size = 0;
    int half_rank = -1;
    CHECK_MPI(MPI_Comm_size(half, &half_size));
    CHECK_MPI(MPI_Comm_rank(half, &half_rank));
    int root_value = half_rank == 0 ? 1000 * t + r + rank : -1;
    CHECK_MPI(MPI_Bcast(&root_value, 1, MPI_INT, 0, half));
    /* The highest world rank of my parity is rank 0 of `half` (key size - rank). */
    int top = rank;
    while (top + 2 < size) top += 2;
    CHECK(root_value == 1000 * t + r + top, "thread %d: bcast gave %d", t, root_value);
    CHECK_MPI(MPI_Barrier(dup));
    /* A message on the new communicator reaches only that communicator's receive. */
    int token = t * 100 + r;
    int got = -1;
    CHECK_MPI(MPI_Sendrecv(&token, 1, MPI_INT, (rank + 1) % size, 0, &got, 1, MPI_INT, (rank + size - 1) % size, 0,
                           dup, MPI_STATUS_IGNORE));
    CHECK(got == token, "thread %d: a message of another communicator (%d)", t, got);
    CHECK_MPI(MPI_Comm_free(&half));
    CHECK_MPI(MPI_Comm_free(&dup));
  }
  return NULL;
}

/* 5. Each rank's threads together receive (size - 1) * threads * rounds messages with wildcards; each
 * thread sends `rounds` messages to every other rank. */
static MPI_Comm wild;
static unsigned char *wild_seen;

static void *wildcard_traffic(void *arg) {
  const int t = *(int *)arg;
  int buf[3];
  for (int m = 0; m < rounds; ++m) {
    for (int to = 0; to < size; ++to) {
      if (to == rank) continue;
      const int msg[3] = {rank, t, m};
      CHECK_MPI(MPI_Send(msg, 3, MPI_INT, to, t * 1000 + m, wild));
    }
    for (int k = 0; k < size - 1; ++k) {
      MPI_Status status;
      CHECK_MPI(MPI_Recv(buf, 3, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, wild, &status));
      CHECK(buf[0] == status.MPI_SOURCE && status.MPI_TAG == buf[1] * 1000 + buf[2], "envelope %d/%d vs %d/%d/%d",
            status.MPI_SOURCE, status.MPI_TAG, buf[0], buf[1], buf[2]);
      pthread_mutex_lock(&seen_lock);
      unsigned char *mark = &wild_seen[(buf[0] * threads + buf[1]) * rounds + buf[2]];
      CHECK(*mark == 0, "message %d/%d/%d received twice", buf[0], buf[1], buf[2]);
      *mark = 1;
      pthread_mutex_unlock(&seen_lock);
    }
  }
  return NULL;
}

int main(int argc, char **argv) {
  if (argc > 1) threads = atoi(argv[1]);
  if (argc > 2) rounds = atoi(argv[2]);
  CHECK(threads >= 2 && threads <= 64 && rounds >= 1, "usage: threads [THREADS 2..64] [ROUNDS]");
  int provided = -1;
  CHECK_MPI(MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided));
  CHECK(provided == MPI_THREAD_MULTIPLE, "provided %d", provided);
  int queried = -1;
  CHECK_MPI(MPI_Query_thread(&queried));
  CHECK(queried == MPI_THREAD_MULTIPLE, "MPI_Query_thread says %d", queried);
  CHECK_MPI(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
  CHECK_MPI(MPI_Comm_size(MPI_COMM_WORLD, &size));
  CHECK(size >= 2, "needs 2 ranks or more");

  run_threads(ring_exchange);
  CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));

  pthread_barrier_init(&pair, NULL, 2);
  for (int k = 0; k < 8; ++k) {
    handed_buf[k] = malloc(70000);
    CHECK(handed_buf[k], "malloc");
  }
  const int saved = threads;
  threads = 2;
  run_threads(hand_over);
  threads = saved;
  for (int k = 0; k < 8; ++k) free(handed_buf[k]);
  pthread_barrier_destroy(&pair);
  CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));

  seen = calloc((size_t)size * threads * rounds, 1);
  CHECK(seen, "calloc");
  run_threads(rank == 0 ? probe_receive : probe_send);
  if (rank == 0) {
    for (int from = 1; from < size; ++from) {
      for (int m = 0; m < threads * rounds; ++m) CHECK(seen[from * threads * rounds + m], "message %d from %d lost", m, from);
    }
  }
  free(seen);
  CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));

  for (int t = 0; t < threads; ++t) CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &parents[t]));
  run_threads(make_communicators);
  for (int t = 0; t < threads; ++t) CHECK_MPI(MPI_Comm_free(&parents[t]));

  CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &wild));
  wild_seen = calloc((size_t)size * threads * rounds, 1);
  CHECK(wild_seen, "calloc");
  run_threads(wildcard_traffic);
  CHECK_MPI(MPI_Barrier(wild));
  for (int from = 0; from < size; ++from) {
    if (from == rank) continue;
    for (int i = 0; i < threads * rounds; ++i) {
      CHECK(wild_seen[from * threads * rounds + i], "wildcard message %d from %d lost", i, from);
    }
  }
  free(wild_seen);
  CHECK_MPI(MPI_Comm_free(&wild));

  if (rank == 0) printf("threads: %d ranks x %d threads x %d rounds passed\n", size, threads, rounds);
  CHECK_MPI(MPI_Finalize());
  return 0;
}

/* One-sided communication under MPI_THREAD_MULTIPLE: several threads of every rank issue operations on
 * one window at once, inside one MPI_Win_lock_all epoch the main thread opened.
 *
 *   threads_rma [THREADS] [ITERATIONS]   (defaults 3 and 200)
 *
 * Each thread of each rank, ITERATIONS times: MPI_Fetch_and_op(MPI_SUM, 1) on rank 0's slot 0 and
 * MPI_Win_flush (every fetched value is below the total, and the fetched values of the whole job sum to
 * 0 + 1 + ... + total - 1, as they do when each value was fetched once), then MPI_Accumulate(MPI_SUM, 1)
 * on rank 0's slot 1; then a put of its own value into its slot of the right neighbour, and
 * MPI_Win_flush_all. After the threads joined: MPI_Win_unlock_all, a barrier, and each rank reads its
 * memory under a lock on itself: slots 0 and 1 of rank 0 hold the total, and the left neighbour's
 * threads' slots their values. */
#include <pthread.h>
#include <stdlib.h>

#include "check.h"

static int threads = 3;
static int iterations = 200;
static int rank;
static int size;
static MPI_Win win;
static long fetched_sum[64];

static long value_of(int from, int thread) { return 1000L * from + thread + 1; }

static void *work(void *arg) {
  const int t = *(int *)arg;
  const long one = 1;
  const long total = (long)size * threads * iterations;
  for (int i = 0; i < iterations; ++i) {
    long before = -1;
    CHECK_MPI(MPI_Fetch_and_op(&one, &before, MPI_LONG, 0, 0, MPI_SUM, win));
    CHECK_MPI(MPI_Win_flush(0, win));
    CHECK(before >= 0 && before < total, "thread %d fetched %ld (total %ld)", t, before, total);
    fetched_sum[t] += before;
    CHECK_MPI(MPI_Accumulate(&one, 1, MPI_LONG, 0, 1, 1, MPI_LONG, MPI_SUM, win));
  }
  const long mine = value_of(rank, t);
  const int right = (rank + 1) % size;
  CHECK_MPI(MPI_Put(&mine, 1, MPI_LONG, right, 2 + t, 1, MPI_LONG, win));
  CHECK_MPI(MPI_Win_flush_all(win));
  return NULL;
}

int main(int argc, char **argv) {
  int provided = 0;
  CHECK_MPI(MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided));
  CHECK(provided == MPI_THREAD_MULTIPLE, "provided thread level %d", provided);
  CHECK_MPI(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
  CHECK_MPI(MPI_Comm_size(MPI_COMM_WORLD, &size));
  if (argc > 1) threads = atoi(argv[1]);
  if (argc > 2) iterations = atoi(argv[2]);
  CHECK(threads >= 1 && threads <= 64 && iterations >= 1, "threads %d, iterations %d", threads, iterations);

  long *mem = NULL;
  const int slots = 2 + threads;
  CHECK_MPI(MPI_Win_allocate((MPI_Aint)slots * (MPI_Aint)sizeof(long), sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD,
                             &mem, &win));
  CHECK_MPI(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, win));
  for (int i = 0; i < slots; ++i) mem[i] = 0;
  CHECK_MPI(MPI_Win_unlock(rank, win));
  CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));

  CHECK_MPI(MPI_Win_lock_all(0, win));
  pthread_t ids[64];
  int index[64];
  for (int t = 0; t < threads; ++t) {
    index[t] = t;
    CHECK(pthread_create(&ids[t], NULL, work, &index[t]) == 0, "pthread_create");
  }
  for (int t = 0; t < threads; ++t) pthread_join(ids[t], NULL);
  CHECK_MPI(MPI_Win_unlock_all(win));

  long local_sum = 0;
  for (int t = 0; t < threads; ++t) local_sum += fetched_sum[t];
  long job_sum = 0;
  CHECK_MPI(MPI_Reduce(&local_sum, &job_sum, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD));
  CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));

  const long total = (long)size * threads * iterations;
  const int left = (rank + size - 1) % size;
  CHECK_MPI(MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, win));
  for (int t = 0; t < threads; ++t) {
    CHECK(mem[2 + t] == value_of(left, t), "slot of rank %d's thread %d holds %ld", left, t, mem[2 + t]);
  }
  if (rank == 0) {
    CHECK(mem[0] == total, "fetch-and-op counter %ld, expected %ld", mem[0], total);
    CHECK(mem[1] == total, "accumulated counter %ld, expected %ld", mem[1], total);
    CHECK(job_sum == total * (total - 1) / 2, "fetched values sum to %ld, expected %ld", job_sum,
          total * (total - 1) / 2);
  }
  CHECK_MPI(MPI_Win_unlock(rank, win));
  CHECK_MPI(MPI_Win_free(&win));
  if (rank == 0) printf("threads_rma: ok, %d ranks x %d threads x %d iterations\n", size, threads, iterations);
  CHECK_MPI(MPI_Finalize());
  return 0;
}

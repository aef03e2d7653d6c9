/* Passive target without the target calling MPI: rank 0 computes in a loop that makes no MPI call
 * until every other rank's value has arrived in its window memory (each rank locks rank 0's window
 * exclusively, puts, accumulates and unlocks). Served by rank 0's progress thread (run with
 * --param engine.progress.thread=true), or, with no thread, over shared memory: the origins then store
 * into rank 0's window themselves. The loop gives up after a generous deadline (the argument, in
 * seconds; default 60), which fails the test instead of hanging it. */
#include <stdlib.h>
#include <time.h>

#include "check.h"

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

int main(int argc, char **argv) {
  int rank = 0;
  int size = 0;
  test_init_world(&argc, &argv, &rank, &size);
  CHECK(size >= 2, "run with 2 ranks or more");
  const double deadline = argc > 1 ? atof(argv[1]) : 60.0;
  long *mem = NULL;
  MPI_Win win;
  CHECK_MPI(MPI_Win_allocate(2 * (MPI_Aint)size * (MPI_Aint)sizeof(long), sizeof(long), MPI_INFO_NULL,
                             MPI_COMM_WORLD, &mem, &win));
  for (int i = 0; i < 2 * size; ++i) mem[i] = 0;
  CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
  if (rank == 0) {
    /* Computes, reading its window as the progress thread writes it; no MPI call until all arrived. */
    const double start = now();
    volatile double work = 0.0;
    int arrived = 0;
    while (arrived < size - 1) {
      for (int i = 0; i < 10000; ++i) work = work + 1e-9 * i;
      arrived = 0;
      for (int r = 1; r < size; ++r) {
        if (__atomic_load_n(&mem[r], __ATOMIC_ACQUIRE) == 100L + r &&
            __atomic_load_n(&mem[size + r], __ATOMIC_ACQUIRE) == 3L * r) {
          ++arrived;
        }
      }
      CHECK(now() - start < deadline, "after %g s only %d of %d ranks' values arrived without MPI calls",
            deadline, arrived, size - 1);
    }
    printf("rma_passive: all %d values arrived while rank 0 computed (%.3f s)\n", size - 1, now() - start);
  } else {
    const long value = 100L + rank;
    const long part = rank;
    CHECK_MPI(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win));
    CHECK_MPI(MPI_Put(&value, 1, MPI_LONG, 0, rank, 1, MPI_LONG, win));
    for (int i = 0; i < 3; ++i) {
      CHECK_MPI(MPI_Accumulate(&part, 1, MPI_LONG, 0, size + rank, 1, MPI_LONG, MPI_SUM, win));
    }
    CHECK_MPI(MPI_Win_unlock(0, win));
  }
  CHECK_MPI(MPI_Win_free(&win));
  CHECK_MPI(MPI_Finalize());
  return 0;
}

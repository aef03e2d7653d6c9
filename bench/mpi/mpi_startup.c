/* mpi_startup: how long a job takes to start, for scripts/bench-startup.sh.
 *
 * Every rank reads the wall clock when MPI_Init returns; rank 0 prints the latest of them, and the moment
 * the job's first barrier ends, as nanoseconds since the epoch:
 *
 *   init_done_ns <latest MPI_Init return>  barrier_done_ns <rank 0 out of the first barrier>  ranks <N>
 *
 * The caller subtracts the time it started the launcher (all ranks run on one machine's clock, simulated
 * hosts included). Works with any MPI, so the same program measures other launchers too. */
#define _POSIX_C_SOURCE 200809L  /* clock_gettime under -std=c11 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

static double now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_REALTIME, &t);
  return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  const double init_done = now_ns();
  int rank = 0;
  int size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  double latest = 0;
  MPI_Reduce(&init_done, &latest, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
  MPI_Barrier(MPI_COMM_WORLD);
  const double barrier_done = now_ns();
  if (rank == 0) {
    printf("init_done_ns %.0f barrier_done_ns %.0f ranks %d\n", latest, barrier_done, size);
  }
  MPI_Finalize();
  return 0;
}

/* For control-plane tests: rank 1 computes without MPI calls until a file exists, as a rank busy in a
 * long solver step does; the other ranks wait in a barrier (they make progress, so they answer tools).
 *
 *   busy_rank FILE      prints "rank 1 busy" once it has stopped calling MPI; exit 0 at the end
 */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <stdio.h>
#include <unistd.h>

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: busy_rank FILE\n");
    return 2;
  }
  MPI_Init(&argc, &argv);
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 1) {
    printf("rank 1 busy\n");
    fflush(stdout);
    volatile unsigned long work = 0;
    while (access(argv[1], F_OK) != 0) {
      for (int i = 0; i < 100000; ++i) work += (unsigned long)i;
    }
  }
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Finalize();
  return 0;
}

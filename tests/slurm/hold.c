/* A job that runs until it is ended from outside (scancel, a killed rank): every rank says it is
 * running, with its pid, once all are (a barrier), then waits for a message nobody sends. */
#include <mpi.h>
#include <stdio.h>
#include <unistd.h>

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Barrier(MPI_COMM_WORLD);
  printf("rank %d of %d pid %ld holding\n", rank, size, (long)getpid());
  fflush(stdout);
  int never = 0;
  MPI_Recv(&never, 1, MPI_INT, MPI_ANY_SOURCE, 99, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  MPI_Finalize();
  return 1; /* nobody sends: reaching here is a failure */
}

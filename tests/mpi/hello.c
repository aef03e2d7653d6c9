/* The program the installation test builds from the installed tree: each rank greets, then passes a
 * value around the ring so that the library is really used. */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv) {
  int rank = 0;
  int size = 0;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int token = rank;
  MPI_Sendrecv_replace(&token, 1, MPI_INT, (rank + 1) % size, 0, (rank + size - 1) % size, 0, MPI_COMM_WORLD,
                       MPI_STATUS_IGNORE);
  if (token != (rank + size - 1) % size) {
    fprintf(stderr, "rank %d: got %d from the left\n", rank, token);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  printf("hello from rank %d of %d\n", rank, size);
  MPI_Finalize();
  return 0;
}

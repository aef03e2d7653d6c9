/* Calls that have no error handler to run: before MPI_Init and after MPI_Finalize. argv[1] says which;
 * either must print one line naming the call and end the process. */
#include <string.h>

#include "check.h"

int main(int argc, char **argv) {
  CHECK(argc == 2, "usage: misuse before-init|after-finalize");
  int rank = -1;
  if (strcmp(argv[1], "before-init") == 0) {
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  } else {
    CHECK_MPI(MPI_Init(&argc, &argv));
    CHECK_MPI(MPI_Finalize());
    MPI_Send(&rank, 1, MPI_INT, 0, 0, MPI_COMM_WORLD);
  }
  fprintf(stderr, "misuse: the process survived\n");
  return 0;
}

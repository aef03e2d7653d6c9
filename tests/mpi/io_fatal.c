/* MPI_ERRORS_ARE_FATAL set on MPI_FILE_NULL: a failed open ends the job with one line naming the call, the
 * file and the reason (tests/mpi/CMakeLists.txt matches it). */
#include "check.h"

int main(int argc, char **argv) {
  CHECK_MPI(MPI_Init(&argc, &argv));
  MPI_File fh;
  CHECK_MPI(MPI_File_set_errhandler(MPI_FILE_NULL, MPI_ERRORS_ARE_FATAL));
  MPI_File_open(MPI_COMM_WORLD, "/proc/ftmpi-no-such-file", MPI_MODE_RDONLY, MPI_INFO_NULL, &fh);
  fprintf(stderr, "FAIL: the open returned\n");
  return 1;
}

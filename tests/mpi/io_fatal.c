/* What MPI-IO prints when it ends or finishes a job (tests/mpi/CMakeLists.txt matches the lines):
 *   io_fatal open-missing: MPI_ERRORS_ARE_FATAL set on MPI_FILE_NULL, a failed open ends the job with one
 *     line naming the call, the file and the reason;
 *   io_fatal left-open <path>: a file still open at MPI_Finalize is reported (and the file removed here). */
#include <string.h>
#include <unistd.h>

#include "check.h"

int main(int argc, char **argv) {
  CHECK_MPI(MPI_Init(&argc, &argv));
  MPI_File fh;
  if (argc == 2 && strcmp(argv[1], "open-missing") == 0) {
    CHECK_MPI(MPI_File_set_errhandler(MPI_FILE_NULL, MPI_ERRORS_ARE_FATAL));
    MPI_File_open(MPI_COMM_WORLD, "/proc/ftmpi-no-such-file", MPI_MODE_RDONLY, MPI_INFO_NULL, &fh);
    fprintf(stderr, "FAIL: the open returned\n");
    return 1;
  }
  CHECK(argc == 3 && strcmp(argv[1], "left-open") == 0, "usage: io_fatal open-missing | left-open <path>");
  CHECK_MPI(MPI_File_open(MPI_COMM_WORLD, argv[2], MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
  if (rank == 0) unlink(argv[2]);
  CHECK_MPI(MPI_Finalize());
  return 0;
}

/* How a job ends. argv[1] says how:
 *   bad-tag   rank 1 calls MPI_Send with tag -5 under the default handler MPI_ERRORS_ARE_FATAL
 *   call-errhandler  rank 1 adds an error class and code with a string, and calls
 *             MPI_Comm_call_errhandler on MPI_COMM_WORLD with the code
 *   abort     rank 1 calls MPI_Abort(MPI_COMM_WORLD, 7)
 *   kill      rank 1 kills itself with SIGKILL; first every rank has written the job id to argv[2]
 *   grequest-reasons N  rank 1 fails N generalized requests under MPI_ERRORS_RETURN (on MPI_COMM_SELF,
 *             whose handler reports them), each query function returning its own code 1000 + i, so each
 *             failure has its own reason; then one more, 1000 + N, under MPI_ERRORS_ARE_FATAL (no such
 *             error code: the job ends with MPI_ERR_UNKNOWN)
 *   grequest-added-code  rank 1's query function returns a code it added with a string, under
 *             MPI_ERRORS_ARE_FATAL: the job ends with the code's class (MPI_ERR_LASTCODE + 1)
 * Meanwhile the other ranks wait in MPI_Recv for a message that never comes: the launcher must end them. */
#define _POSIX_C_SOURCE 200809L /* kill() */

#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "failing_requests.h"

int main(int argc, char **argv) {
  CHECK(argc >= 2, "usage: fatal bad-tag|call-errhandler|abort|kill [job-id-file]|grequest-reasons N|grequest-added-code");
  CHECK_MPI(MPI_Init(&argc, &argv));
  int rank = 0;
  int size = 0;
  CHECK_MPI(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
  CHECK_MPI(MPI_Comm_size(MPI_COMM_WORLD, &size));
  CHECK(size >= 2, "needs at least 2 ranks");

  /* Every rank reports to rank 0 once it is up, so the job is fully wired up before rank 1 fails: on a
   * loaded machine a rank may otherwise still be starting, and the launcher asks only the ranks that
   * joined for their flight recorders. For kill, the job's shared memory is named after its id, and the
   * test checks none is left afterwards. */
  if (rank == 0) {
    if (strcmp(argv[1], "kill") == 0) {
      CHECK(argc >= 3, "kill needs the job-id file");
      FILE *f = fopen(argv[2], "w");
      const char *job = getenv("FTMPI_JOB_ID");
      CHECK(f != NULL && job != NULL, "cannot record the job id");
      fprintf(f, "%s\n", job);
      fclose(f);
    }
    for (int r = 1; r < size; ++r) CHECK_MPI(MPI_Recv(NULL, 0, MPI_INT, r, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    for (int r = 1; r < size; ++r) CHECK_MPI(MPI_Send(NULL, 0, MPI_INT, r, 2, MPI_COMM_WORLD));
  } else {
    CHECK_MPI(MPI_Send(NULL, 0, MPI_INT, 0, 1, MPI_COMM_WORLD));
    CHECK_MPI(MPI_Recv(NULL, 0, MPI_INT, 0, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
  }

  if (rank == 1) {
    int value = 1;
    if (strcmp(argv[1], "bad-tag") == 0) {
      MPI_Send(&value, 1, MPI_INT, 0, -5, MPI_COMM_WORLD);
    } else if (strcmp(argv[1], "call-errhandler") == 0) {
      int error_class = 0, code = 0;
      CHECK_MPI(MPI_Add_error_class(&error_class));
      CHECK_MPI(MPI_Add_error_code(error_class, &code));
      CHECK_MPI(MPI_Add_error_string(code, "the drill's own error"));
      MPI_Comm_call_errhandler(MPI_COMM_WORLD, code);
    } else if (strcmp(argv[1], "abort") == 0) {
      MPI_Abort(MPI_COMM_WORLD, 7);
    } else if (strcmp(argv[1], "kill") == 0) {
      kill(getpid(), SIGKILL);
    } else if (strcmp(argv[1], "grequest-reasons") == 0) {
      CHECK(argc >= 3, "grequest-reasons needs a count");
      const int n = atoi(argv[2]);
      fail_with_distinct_reasons(n, 1000);
      wait_failing_request(1000 + n);
    } else if (strcmp(argv[1], "grequest-added-code") == 0) {
      int error_class = 0, code = 0;
      CHECK_MPI(MPI_Add_error_class(&error_class));
      CHECK_MPI(MPI_Add_error_code(error_class, &code));
      CHECK_MPI(MPI_Add_error_string(code, "the program's own failure"));
      wait_failing_request(code);
    }
    CHECK(0, "rank 1 is still running after '%s'", argv[1]);
  }
  int never = 0;
  MPI_Recv(&never, 1, MPI_INT, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  CHECK(0, "a message arrived that no one sent");
  return 1;
}

/* A peer that becomes unreachable: every rail between the two ranks goes black part-way through (the
 * fault plan opens a blackhole after a volume of traffic, so it follows the work, not the clock).
 *
 *   mpi_peer_lost return   MPI_ERRORS_RETURN: the exchange that needs the lost peer returns
 *                          MPIX_ERR_PROC_FAILED; a later send to it fails at once the same way;
 *                          MPI_Finalize still completes.
 *   mpi_peer_lost fatal    the default handler: the job ends with that class as its exit status, after
 *                          a line naming the call, the peer and why (ctest checks it).
 *   mpi_peer_lost fatal full-reasons   the same after 4096 failures of other reasons each (the library
 *                          keeps at most that many; a lost peer's is kept past them).
 *
 * Run with path.fault=blackhole,after=<volume> and a short engine.peer.timeout. */
#include <string.h>

#include "check.h"
#include "failing_requests.h"

enum { kBytes = 64 * 1024, kRounds = 100000 };

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  CHECK(size == 2, "run with 2 ranks, not %d", size);
  CHECK((argc == 2 || (argc == 3 && strcmp(argv[2], "full-reasons") == 0)) &&
            (strcmp(argv[1], "return") == 0 || strcmp(argv[1], "fatal") == 0),
        "usage: mpi_peer_lost return|fatal [full-reasons]");
  if (argc == 3) fail_with_distinct_reasons(4096, 1000);
  const int returns = strcmp(argv[1], "return") == 0;
  if (returns) MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  const int peer = 1 - rank;
  static char out[kBytes], in[kBytes];
  memset(out, 'a' + rank, sizeof out);

  int rc = MPI_SUCCESS, round = 0;
  for (; round < kRounds && rc == MPI_SUCCESS; ++round) {
    rc = MPI_Sendrecv(out, kBytes, MPI_CHAR, peer, 1, in, kBytes, MPI_CHAR, peer, 1, MPI_COMM_WORLD,
                      MPI_STATUS_IGNORE);
    if (rc == MPI_SUCCESS) CHECK(in[0] == 'a' + peer && in[kBytes - 1] == 'a' + peer, "round %d: wrong data", round);
  }
  CHECK(rc != MPI_SUCCESS, "%d exchanges and no error: the blackhole never opened", kRounds);
  int error_class = -1, length = 0;
  char text[MPI_MAX_ERROR_STRING];
  MPI_Error_class(rc, &error_class);
  MPI_Error_string(rc, text, &length);
  CHECK(error_class == MPIX_ERR_PROC_FAILED, "round %d: error class %d (%s), not MPIX_ERR_PROC_FAILED", round,
        error_class, text);
  printf("rank %d: round %d: MPI_Sendrecv returned %s\n", rank, round, text);

  /* Nothing more reaches it: a send fails at once, whatever its size. */
  rc = MPI_Send(out, 8, MPI_CHAR, peer, 2, MPI_COMM_WORLD);
  MPI_Error_class(rc, &error_class);
  CHECK(error_class == MPIX_ERR_PROC_FAILED, "a send to the lost peer: class %d", error_class);
  MPI_Finalize();
  return 0;
}

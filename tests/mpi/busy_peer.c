/* A peer that computes (makes no MPI call) for longer than engine.peer.timeout while a message to it is
 * outstanding must not be taken for lost: its rails are silent, but ftrun's ping finds it not polling,
 * so the sender waits. Run with a short engine.peer.timeout (the CTest entry gives 1 s) and SECONDS well
 * above it; without the launcher's check the sender declared it lost after the timeout and the job ended.
 *
 * Usage: mpi_busy_peer SECONDS */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "check.h"

enum { kBytes = 1 << 20 };

static double now_seconds(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  CHECK(size == 2 && argc == 2, "usage: mpi_busy_peer SECONDS (2 ranks)");
  const double seconds = atof(argv[1]);
  static unsigned char data[kBytes];
  if (rank == 0) {
    for (int i = 0; i < kBytes; ++i) data[i] = (unsigned char)(i * 31 + 7);
    /* Rendezvous: the RTS and its retransmissions go unanswered while rank 1 computes. */
    CHECK_MPI(MPI_Send(data, kBytes, MPI_BYTE, 1, 1, MPI_COMM_WORLD));
  } else {
    /* The compute phase: no MPI call at all, so no progress, no ACK, no probe reply. */
    volatile double sink = 0;
    const double start = now_seconds();
    while (now_seconds() - start < seconds) sink = sink + 1.0;
    CHECK_MPI(MPI_Recv(data, kBytes, MPI_BYTE, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    for (int i = 0; i < kBytes; ++i) CHECK(data[i] == (unsigned char)(i * 31 + 7), "byte %d wrong", i);
    printf("rank 1 computed %.1f s without MPI calls; the message then arrived intact\n", now_seconds() - start);
  }
  MPI_Finalize();
  return 0;
}

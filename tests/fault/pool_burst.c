/* A receiver outrun by a burst, for the verbs path's receive pool: rank 0 sends COUNT eager messages of
 * BYTES to rank 1 while rank 1 computes without MPI calls, then creates FILE; only then does rank 1
 * receive them. Every datagram of the burst waits in rank 1's socket meanwhile, so when rank 1 polls,
 * more arrive than it has receives posted (a small pool: path.verbs.recv_buffers), and the device drops
 * the rest; the engine's retransmission must bring each back. Exit 0: every message arrived intact, in
 * order.
 *
 *   pool_burst FILE [COUNT [BYTES]]     defaults 256 messages of 2048 bytes
 */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static unsigned char byte_of(int message, int i) { return (unsigned char)(message * 131 + i * 7 + 1); }

int main(int argc, char** argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: pool_burst FILE [COUNT [BYTES]]\n");
    return 2;
  }
  const int count = argc > 2 ? atoi(argv[2]) : 256;
  const int bytes = argc > 3 ? atoi(argv[3]) : 2048;
  MPI_Init(&argc, &argv);
  int rank = 0;
  int size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size != 2 || count < 1 || bytes < 1) {
    fprintf(stderr, "pool_burst: 2 ranks, COUNT and BYTES above 0\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  unsigned char* buf = malloc((size_t)bytes);
  if (rank == 0) {
    for (int m = 0; m < count; ++m) {
      for (int i = 0; i < bytes; ++i) buf[i] = byte_of(m, i);
      MPI_Send(buf, bytes, MPI_BYTE, 1, 7, MPI_COMM_WORLD);
    }
    FILE* f = fopen(argv[1], "w");
    if (f == NULL) {
      perror("pool_burst: creating FILE");
      MPI_Abort(MPI_COMM_WORLD, 3);
    }
    fclose(f);
  } else {
    volatile unsigned long work = 0;
    while (access(argv[1], F_OK) != 0) {
      for (int i = 0; i < 100000; ++i) work += (unsigned long)i;
    }
    for (int m = 0; m < count; ++m) {
      MPI_Status status;
      MPI_Recv(buf, bytes, MPI_BYTE, 0, 7, MPI_COMM_WORLD, &status);
      int got = 0;
      MPI_Get_count(&status, MPI_BYTE, &got);
      if (got != bytes) {
        fprintf(stderr, "pool_burst: message %d has %d bytes, not %d\n", m, got, bytes);
        MPI_Abort(MPI_COMM_WORLD, 1);
      }
      for (int i = 0; i < bytes; ++i) {
        if (buf[i] != byte_of(m, i)) {
          fprintf(stderr, "pool_burst: message %d byte %d is wrong\n", m, i);
          MPI_Abort(MPI_COMM_WORLD, 1);
        }
      }
    }
    printf("pool_burst: %d messages of %d bytes arrived intact\n", count, bytes);
  }
  free(buf);
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Finalize();
  return 0;
}

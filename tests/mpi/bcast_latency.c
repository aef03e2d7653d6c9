/* OSU-like broadcast latency (osu_bcast's loop: time one MPI_Bcast, then a barrier outside the timing,
 * root fixed at 0): average over ranks of each rank's mean time per broadcast, and the slowest rank's.
 * For comparing coll.bcast.algorithm values side by side; not a test. Usage: bcast_latency [iterations]. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  int size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int base_iterations = argc > 1 ? atoi(argv[1]) : 2000;
  static const int kSizes[] = {8, 65536, 1 << 20};
  char *buf = malloc(1 << 20);
  memset(buf, rank, 1 << 20);
  if (rank == 0) printf("| bytes | avg us | max us |\n|---|---|---|\n");
  for (unsigned k = 0; k < sizeof kSizes / sizeof kSizes[0]; ++k) {
    const int bytes = kSizes[k];
    const int iterations = bytes >= 1 << 20 ? base_iterations / 10 : base_iterations;
    const int warmup = iterations / 10;
    double total = 0;
    for (int i = 0; i < warmup + iterations; ++i) {
      const double start = MPI_Wtime();
      MPI_Bcast(buf, bytes, MPI_CHAR, 0, MPI_COMM_WORLD);
      const double stop = MPI_Wtime();
      if (i >= warmup) total += stop - start;
      MPI_Barrier(MPI_COMM_WORLD);
    }
    double mean = total / iterations * 1e6;
    double sum = 0;
    double max = 0;
    MPI_Reduce(&mean, &sum, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    MPI_Reduce(&mean, &max, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    if (rank == 0) printf("| %d | %.2f | %.2f |\n", bytes, sum / size, max);
  }
  free(buf);
  MPI_Finalize();
  return 0;
}

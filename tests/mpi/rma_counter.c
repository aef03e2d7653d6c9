/* Counters at rank 0 hammered by every rank, each ending exact:
 * - slot 0: MPI_Win_lock exclusive, get, +1, put, unlock (a read-modify-write the lock must protect);
 * - slot 1: MPI_Fetch_and_op(MPI_SUM) without a lock of its own (inside lock_all): atomic at the target;
 * - slot 2: a spin lock taken with MPI_Compare_and_swap on slot 3, protecting a get, +1, put of slot 2;
 * - slot 4: MPI_Accumulate of rank-dependent values under fence (10 x iterations of them), whose sum
 *   would be off if a retransmitted accumulate were applied twice (run over UDP with loss and duplication).
 * Argument: iterations per rank (default 50). */
#include <stdlib.h>

#include "check.h"

int main(int argc, char **argv) {
  int rank = 0;
  int size = 0;
  test_init_world(&argc, &argv, &rank, &size);
  const int iterations = argc > 1 ? atoi(argv[1]) : 50;
  long *mem = NULL;
  MPI_Win win;
  CHECK_MPI(MPI_Win_allocate(8 * sizeof(long), sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win));
  for (int i = 0; i < 8; ++i) mem[i] = 0;
  CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));

  for (int i = 0; i < iterations; ++i) {
    long value = -1;
    CHECK_MPI(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win));
    CHECK_MPI(MPI_Get(&value, 1, MPI_LONG, 0, 0, 1, MPI_LONG, win));
    CHECK_MPI(MPI_Win_flush(0, win));
    ++value;
    CHECK_MPI(MPI_Put(&value, 1, MPI_LONG, 0, 0, 1, MPI_LONG, win));
    CHECK_MPI(MPI_Win_unlock(0, win));
  }

  CHECK_MPI(MPI_Win_lock_all(0, win));
  const long one = 1;
  const long zero = 0;
  const long taken = rank + 1;
  for (int i = 0; i < iterations; ++i) {
    long before = -1;
    CHECK_MPI(MPI_Fetch_and_op(&one, &before, MPI_LONG, 0, 1, MPI_SUM, win));
    CHECK_MPI(MPI_Win_flush(0, win));
    CHECK(before >= 0 && before < (long)size * iterations, "fetch_and_op fetched %ld", before);
    /* The spin lock: swap 0 -> rank+1 until it was 0; release by swapping back. */
    long seen = -1;
    do {
      CHECK_MPI(MPI_Compare_and_swap(&taken, &zero, &seen, MPI_LONG, 0, 3, win));
      CHECK_MPI(MPI_Win_flush(0, win));
    } while (seen != 0);
    long value = -1;
    CHECK_MPI(MPI_Get(&value, 1, MPI_LONG, 0, 2, 1, MPI_LONG, win));
    CHECK_MPI(MPI_Win_flush(0, win));
    ++value;
    CHECK_MPI(MPI_Put(&value, 1, MPI_LONG, 0, 2, 1, MPI_LONG, win));
    CHECK_MPI(MPI_Win_flush(0, win));
    CHECK_MPI(MPI_Compare_and_swap(&zero, &taken, &seen, MPI_LONG, 0, 3, win));
    CHECK_MPI(MPI_Win_flush(0, win));
    CHECK(seen == taken, "the spin lock held %ld while rank %d held it", seen, rank);
  }
  CHECK_MPI(MPI_Win_unlock_all(win));

  /* More accumulates in one epoch than the origin keeps unfinished ones (256) before it prunes. */
  const int accumulates = 10 * iterations;
  CHECK_MPI(MPI_Win_fence(0, win));
  for (int i = 0; i < accumulates; ++i) {
    const long add = (long)(rank + 1) * 1000 + i;
    CHECK_MPI(MPI_Accumulate(&add, 1, MPI_LONG, 0, 4, 1, MPI_LONG, MPI_SUM, win));
  }
  CHECK_MPI(MPI_Win_fence(MPI_MODE_NOSUCCEED, win));

  if (rank == 0) {
    const long total = (long)size * iterations;
    const long sum = 1000L * accumulates * size * (size + 1) / 2 + (long)size * accumulates * (accumulates - 1) / 2;
    CHECK(mem[0] == total, "locked counter %ld, expected %ld", mem[0], total);
    CHECK(mem[1] == total, "fetch_and_op counter %ld, expected %ld", mem[1], total);
    CHECK(mem[2] == total, "spin-locked counter %ld, expected %ld", mem[2], total);
    CHECK(mem[3] == 0, "the spin lock was left at %ld", mem[3]);
    CHECK(mem[4] == sum, "accumulated %ld, expected %ld", mem[4], sum);
    printf("rma_counter: ok, %d ranks x %d iterations\n", size, iterations);
  }
  CHECK_MPI(MPI_Win_free(&win));
  CHECK_MPI(MPI_Finalize());
  return 0;
}

/* Shared-memory windows: MPI_Win_allocate_shared over the ranks of one host (MPI_Comm_split_type), rank r
 * giving r + 1 ints (rank 1 none, to check an empty part). Each rank stores into its part directly;
 * after a barrier and MPI_Win_sync every rank loads every other rank's part through MPI_Win_shared_query,
 * whose parts follow each other in rank order (MPI's default contiguous layout). RMA calls on the window
 * reach the same memory: a put to the right neighbour's part, read back by a direct load after the fence.
 * MPI_Win_shared_query of an MPI_Win_allocate window is MPI_ERR_RMA_FLAVOR. In a job over several hosts,
 * MPI_Win_allocate_shared over MPI_COMM_WORLD is MPI_ERR_RMA_SHARED on every rank. */
#include <string.h>

#include "check.h"

static int part_of(int rank) { return rank == 1 ? 0 : rank + 1; }

int main(int argc, char **argv) {
  int world_rank = 0;
  int world_size = 0;
  test_init_world(&argc, &argv, &world_rank, &world_size);
  MPI_Comm host;
  CHECK_MPI(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &host));
  int rank = 0;
  int size = 0;
  CHECK_MPI(MPI_Comm_rank(host, &rank));
  CHECK_MPI(MPI_Comm_size(host, &size));
  int *mine = NULL;
  MPI_Win win;
  CHECK_MPI(MPI_Win_allocate_shared((MPI_Aint)part_of(rank) * (MPI_Aint)sizeof(int), sizeof(int), MPI_INFO_NULL, host,
                                    &mine, &win));
  int *flavor = NULL;
  int flag = 0;
  CHECK_MPI(MPI_Win_get_attr(win, MPI_WIN_CREATE_FLAVOR, &flavor, &flag));
  CHECK(flag && *flavor == MPI_WIN_FLAVOR_SHARED, "the window's flavor");
  /* Every rank's memory reached directly: the unified model. */
  int *model = NULL;
  CHECK_MPI(MPI_Win_get_attr(win, MPI_WIN_MODEL, &model, &flag));
  CHECK(flag && *model == MPI_WIN_UNIFIED, "the shared window's model is %d, not MPI_WIN_UNIFIED", *model);
  for (int i = 0; i < part_of(rank); ++i) mine[i] = 1000 * rank + i;
  CHECK_MPI(MPI_Win_sync(win));
  CHECK_MPI(MPI_Barrier(host));
  CHECK_MPI(MPI_Win_sync(win));

  char *previous_end = NULL;
  for (int r = 0; r < size; ++r) {
    MPI_Aint bytes = -1;
    int unit = -1;
    int *theirs = NULL;
    CHECK_MPI(MPI_Win_shared_query(win, r, &bytes, &unit, &theirs));
    CHECK(bytes == (MPI_Aint)part_of(r) * (MPI_Aint)sizeof(int) && unit == (int)sizeof(int),
          "rank %d's part: %ld bytes, unit %d", r, (long)bytes, unit);
    if (previous_end != NULL) CHECK((char *)theirs == previous_end, "rank %d's part does not follow rank %d's", r, r - 1);
    previous_end = (char *)theirs + bytes;
    for (int i = 0; i < part_of(r); ++i) {
      CHECK(theirs[i] == 1000 * r + i, "rank %d's item %d loads as %d", r, i, theirs[i]);
    }
  }
  MPI_Aint bytes = -1;
  int unit = -1;
  int *first = NULL;
  CHECK_MPI(MPI_Win_shared_query(win, MPI_PROC_NULL, &bytes, &unit, &first));
  CHECK(bytes == (MPI_Aint)sizeof(int) && first != NULL && first[0] == 0, "MPI_PROC_NULL: rank 0's part");

  /* A put to the right neighbour's first item (if it has one), seen by a direct load after the fence. */
  const int right = (rank + 1) % size;
  const int value = -rank - 1;
  CHECK_MPI(MPI_Win_fence(0, win));
  if (part_of(right) > 0) CHECK_MPI(MPI_Put(&value, 1, MPI_INT, right, 0, 1, MPI_INT, win));
  CHECK_MPI(MPI_Win_fence(0, win));
  const int left = (rank + size - 1) % size;
  if (part_of(rank) > 0) CHECK(mine[0] == -left - 1, "after the put: %d", mine[0]);
  CHECK_MPI(MPI_Win_free(&win));

  /* Not a shared window. */
  int *plain = NULL;
  CHECK_MPI(MPI_Win_allocate(sizeof(int), sizeof(int), MPI_INFO_NULL, host, &plain, &win));
  CHECK_MPI(MPI_Win_get_attr(win, MPI_WIN_MODEL, &model, &flag));
  CHECK(flag && *model == MPI_WIN_UNIFIED, "MPI_Win_allocate over one host: model %d", *model);
  CHECK_MPI(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
  CHECK_CLASS(MPI_ERR_RMA_FLAVOR, MPI_Win_shared_query(win, 0, &bytes, &unit, &first));
  CHECK_MPI(MPI_Win_free(&win));
  CHECK_MPI(MPI_Comm_free(&host));

  if (size < world_size) {
    int *across = NULL;
    MPI_Win none = MPI_WIN_NULL;
    CHECK_MPI(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    CHECK_CLASS(MPI_ERR_RMA_SHARED,
                MPI_Win_allocate_shared(sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &across, &none));
    CHECK(none == MPI_WIN_NULL, "a failed MPI_Win_allocate_shared made a window");
    CHECK_MPI(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
    /* Ranks of the other host are reached by message: the separate model. */
    CHECK_MPI(MPI_Win_allocate(sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &plain, &win));
    CHECK_MPI(MPI_Win_get_attr(win, MPI_WIN_MODEL, &model, &flag));
    CHECK(flag && *model == MPI_WIN_SEPARATE, "MPI_Win_allocate over two hosts: model %d", *model);
    CHECK_MPI(MPI_Win_free(&win));
  }
  if (world_rank == 0) printf("rma_shared: ok, %d ranks on this host\n", size);
  CHECK_MPI(MPI_Finalize());
  return 0;
}

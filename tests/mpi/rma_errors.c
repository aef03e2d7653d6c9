/* Errors of one-sided calls, through the window's error handler:
 * - a new window's handler is MPI_ERRORS_ARE_FATAL; a created one (MPI_Win_create_errhandler) is called
 *   with the window and the error class, and the call returns it;
 * - a bad window (MPI_ERR_WIN, through MPI_COMM_WORLD's handler: there is no window to ask);
 * - a target rank out of range (MPI_ERR_RANK); an access outside the target's window
 *   (MPI_ERR_RMA_RANGE), also at a dynamic window's target (reported by the unlock);
 * - synchronisation misuse (MPI_ERR_RMA_SYNC): an operation outside any epoch, unlock without lock,
 *   complete without start, wait without post, a flush outside a passive epoch, a request operation
 *   under fence; a bad lock type (MPI_ERR_LOCKTYPE); a user-defined op in an accumulate (MPI_ERR_OP).
 * Nothing is applied by a refused call: the window keeps its values. */
#include <string.h>

#include "check.h"

static int calls = 0;
static int last_class = MPI_SUCCESS;
static MPI_Win last_win = MPI_WIN_NULL;

static void record(MPI_Win *win, int *code, ...) {
  ++calls;
  last_win = *win;
  MPI_Error_class(*code, &last_class);
}

static void sum_op(void *in, void *inout, int *len, MPI_Datatype *type) {
  (void)type;
  for (int i = 0; i < *len; ++i) ((int *)inout)[i] += ((int *)in)[i];
}

/* The call returns `expected`, and the window's handler saw it once. */
#define EXPECT_HANDLED(expected, win, call)                                                       \
  do {                                                                                            \
    const int before = calls;                                                                     \
    CHECK_CLASS((expected), (call));                                                              \
    CHECK(calls == before + 1 && last_class == (expected) && last_win == (win),                   \
          "%s: handler calls %d (was %d), class %d, window %#x", #call, calls, before, last_class, \
          (unsigned)last_win);                                                                    \
  } while (0)

int main(int argc, char **argv) {
  int rank = 0;
  int size = 0;
  test_init_world(&argc, &argv, &rank, &size);
  int mem[8];
  for (int i = 0; i < 8; ++i) mem[i] = 7;
  MPI_Win win;
  CHECK_MPI(MPI_Win_create(mem, sizeof mem, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win));
  MPI_Errhandler handler;
  CHECK_MPI(MPI_Win_get_errhandler(win, &handler));
  CHECK(handler == MPI_ERRORS_ARE_FATAL, "a new window's error handler is not MPI_ERRORS_ARE_FATAL");
  CHECK_MPI(MPI_Win_create_errhandler(record, &handler));
  CHECK_MPI(MPI_Win_set_errhandler(win, handler));
  CHECK_MPI(MPI_Errhandler_free(&handler));

  /* A bad window: no window, so MPI_COMM_WORLD's handler. */
  CHECK_MPI(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
  const int one = 1;
  CHECK_CLASS(MPI_ERR_WIN, MPI_Put(&one, 1, MPI_INT, 0, 0, 1, MPI_INT, MPI_WIN_NULL));
  CHECK_CLASS(MPI_ERR_WIN, MPI_Win_fence(0, (MPI_Win)0x5c0000ff));
  CHECK(calls == 0, "a bad window reached the window's handler");

  /* Synchronisation misuse. */
  EXPECT_HANDLED(MPI_ERR_RMA_SYNC, win, MPI_Put(&one, 1, MPI_INT, 0, 0, 1, MPI_INT, win));
  EXPECT_HANDLED(MPI_ERR_RMA_SYNC, win, MPI_Win_unlock(0, win));
  EXPECT_HANDLED(MPI_ERR_RMA_SYNC, win, MPI_Win_complete(win));
  EXPECT_HANDLED(MPI_ERR_RMA_SYNC, win, MPI_Win_wait(win));
  EXPECT_HANDLED(MPI_ERR_RMA_SYNC, win, MPI_Win_flush(0, win));
  EXPECT_HANDLED(MPI_ERR_RMA_SYNC, win, MPI_Win_unlock_all(win));
  EXPECT_HANDLED(MPI_ERR_LOCKTYPE, win, MPI_Win_lock(12345, 0, 0, win));

  CHECK_MPI(MPI_Win_fence(0, win));
  MPI_Request request;
  EXPECT_HANDLED(MPI_ERR_RMA_SYNC, win, MPI_Rput(&one, 1, MPI_INT, 0, 0, 1, MPI_INT, win, &request));
  /* A target out of range, and accesses outside the target's 8 ints. */
  EXPECT_HANDLED(MPI_ERR_RANK, win, MPI_Put(&one, 1, MPI_INT, size, 0, 1, MPI_INT, win));
  EXPECT_HANDLED(MPI_ERR_RANK, win, MPI_Get(mem, 1, MPI_INT, -5, 0, 1, MPI_INT, win));
  const int many[9] = {0};
  EXPECT_HANDLED(MPI_ERR_RMA_RANGE, win, MPI_Put(many, 9, MPI_INT, 0, 0, 9, MPI_INT, win));
  EXPECT_HANDLED(MPI_ERR_RMA_RANGE, win, MPI_Put(&one, 1, MPI_INT, 0, 8, 1, MPI_INT, win));
  EXPECT_HANDLED(MPI_ERR_RMA_RANGE, win, MPI_Accumulate(&one, 1, MPI_INT, 0, -1, 1, MPI_INT, MPI_SUM, win));
  MPI_Op user;
  CHECK_MPI(MPI_Op_create(sum_op, 1, &user));
  EXPECT_HANDLED(MPI_ERR_OP, win, MPI_Accumulate(&one, 1, MPI_INT, 0, 0, 1, MPI_INT, user, win));
  CHECK_MPI(MPI_Op_free(&user));
  /* MPI_PROC_NULL targets are no-ops. */
  CHECK_MPI(MPI_Put(&one, 1, MPI_INT, MPI_PROC_NULL, 100, 1, MPI_INT, win));
  CHECK_MPI(MPI_Win_fence(MPI_MODE_NOSUCCEED, win));
  for (int i = 0; i < 8; ++i) CHECK(mem[i] == 7, "a refused call changed slot %d to %d", i, mem[i]);

  /* A dynamic window's target checks the range: the unlock reports it. */
  MPI_Win dynamic;
  CHECK_MPI(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &dynamic));
  CHECK_MPI(MPI_Win_set_errhandler(dynamic, MPI_ERRORS_RETURN));
  int region[4] = {0, 0, 0, 0};
  CHECK_MPI(MPI_Win_attach(dynamic, region, sizeof region));
  MPI_Aint address = 0;
  CHECK_MPI(MPI_Get_address(region, &address));
  CHECK_CLASS(MPI_ERR_RMA_ATTACH, MPI_Win_attach(dynamic, region + 1, sizeof(int)));
  CHECK_CLASS(MPI_ERR_RMA_FLAVOR, MPI_Win_attach(win, region, sizeof region));
  CHECK_MPI(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, dynamic));
  CHECK_MPI(MPI_Put(many, 5, MPI_INT, rank, address, 5, MPI_INT, dynamic));
  CHECK_CLASS(MPI_ERR_RMA_RANGE, MPI_Win_unlock(rank, dynamic));
  CHECK(region[0] == 0 && region[3] == 0, "an access outside the region was applied in part");
  CHECK_MPI(MPI_Win_detach(dynamic, region));
  CHECK_CLASS(MPI_ERR_RMA_ATTACH, MPI_Win_detach(dynamic, region));
  CHECK_MPI(MPI_Win_free(&dynamic));

  /* MPI_Win_call_errhandler calls the window's handler, and returns MPI_SUCCESS when it returns. */
  const int before = calls;
  CHECK_MPI(MPI_Win_call_errhandler(win, MPI_ERR_OTHER));
  CHECK(calls == before + 1 && last_class == MPI_ERR_OTHER && last_win == win, "MPI_Win_call_errhandler");
  CHECK_MPI(MPI_Win_free(&win));
  if (rank == 0) printf("rma_errors: ok (%d handler calls)\n", calls);
  CHECK_MPI(MPI_Finalize());
  return 0;
}

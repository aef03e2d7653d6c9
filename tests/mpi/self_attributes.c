/* MPI_Finalize deletes MPI_COMM_SELF's attributes first, the last set first, while MPI still works
 * (MPI-2.2 and later, section 8.7.1): libraries hook their clean-up there. Two keys with delete
 * callbacks are set on MPI_COMM_SELF; the callbacks must not have run before MPI_Finalize, must run
 * inside it in reverse order of setting, and may call MPI. An attribute deleted by the program before
 * MPI_Finalize is not deleted again. */
#include "check.h"

static int order[4];
static int deleted;

static int on_delete(MPI_Comm comm, int keyval, void *value, void *extra) {
  (void)keyval;
  (void)extra;
  int finalized = 1, rank = -1;
  MPI_Finalized(&finalized);
  /* MPI still works in the callback: the call below would abort the job otherwise. */
  if (comm != MPI_COMM_SELF || finalized || MPI_Comm_rank(MPI_COMM_WORLD, &rank) != MPI_SUCCESS || rank < 0) return MPI_ERR_OTHER;
  if (deleted < 4) order[deleted] = *(int *)value;
  ++deleted;
  return MPI_SUCCESS;
}

int main(int argc, char **argv) {
  static int first = 1, second = 2, third = 3;
  CHECK_MPI(MPI_Init(&argc, &argv));
  int key_a = MPI_KEYVAL_INVALID, key_b = MPI_KEYVAL_INVALID, key_c = MPI_KEYVAL_INVALID;
  CHECK_MPI(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, on_delete, &key_a, NULL));
  CHECK_MPI(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, on_delete, &key_b, NULL));
  CHECK_MPI(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, on_delete, &key_c, NULL));
  CHECK_MPI(MPI_Comm_set_attr(MPI_COMM_SELF, key_a, &first));
  CHECK_MPI(MPI_Comm_set_attr(MPI_COMM_SELF, key_b, &second));
  CHECK_MPI(MPI_Comm_set_attr(MPI_COMM_SELF, key_c, &third));
  CHECK_MPI(MPI_Comm_delete_attr(MPI_COMM_SELF, key_b));  /* deleted now: once, and not again at the end */
  CHECK(deleted == 1 && order[0] == 2, "MPI_Comm_delete_attr ran the callback once (%d)", deleted);
  CHECK_MPI(MPI_Finalize());
  /* After MPI_Finalize: plain C only. */
  if (deleted != 3 || order[1] != 3 || order[2] != 1) {
    fprintf(stderr, "FAIL: %d deletions, order %d %d %d (expected 3 deletions: 2, then 3 and 1 in MPI_Finalize)\n",
            deleted, order[0], order[1], order[2]);
    return 1;
  }
  printf("MPI_COMM_SELF's attributes deleted in MPI_Finalize, the last set first\n");
  return 0;
}

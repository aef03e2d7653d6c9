/* Calls older programs and tools use: MPI-1's attribute names (MPI_Keyval_create, MPI_Attr_put/get/
 * delete, MPI_NULL_COPY_FN, MPI_DUP_FN), MPI_Request_get_status (which leaves the request alone),
 * MPI_Pcontrol, the handle conversions between C and Fortran, and MPI-1 names MPI-3.0 removed
 * (MPI_Errhandler_create/set/get, MPI_Address, MPI_Type_extent/lb/ub, MPI_Type_hvector/hindexed/struct).
 *
 *   compat            the checks (2 ranks or more)
 *   compat fatal      MPI_Attr_put with a freed key under the default handler: the job ends, naming it */
#include <string.h>

#include "check.h"

static int handled;
static void count_errors(MPI_Comm *comm, int *code, ...) {
  (void)comm;
  (void)code;
  ++handled;
}

static int deletes;
static int copies;

static int count_delete(MPI_Comm comm, int keyval, void *value, void *extra) {
  (void)comm;
  (void)keyval;
  CHECK(extra == &deletes && *(int *)value == 7, "delete callback: extra state or value");
  ++deletes;
  return MPI_SUCCESS;
}

static int count_copy(MPI_Comm comm, int keyval, void *extra, void *in, void *out, int *flag) {
  ++copies;
  return MPI_DUP_FN(comm, keyval, extra, in, out, flag);
}

int main(int argc, char **argv) {
  CHECK_MPI(MPI_Init(&argc, &argv));
  int rank = 0, size = 0;
  CHECK_MPI(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
  CHECK_MPI(MPI_Comm_size(MPI_COMM_WORLD, &size));

  if (argc > 1 && strcmp(argv[1], "fatal") == 0) {
    int key = MPI_KEYVAL_INVALID;
    static int value = 1;
    CHECK_MPI(MPI_Keyval_create(MPI_NULL_COPY_FN, MPI_NULL_DELETE_FN, &key, NULL));
    const int stale = key;
    CHECK_MPI(MPI_Keyval_free(&key));
    MPI_Attr_put(MPI_COMM_WORLD, stale, &value); /* ends the job */
    return 0;
  }
  CHECK(size >= 2, "needs 2 ranks");

  /* MPI-1 attributes: copied on dup by MPI_DUP_FN, not by MPI_NULL_COPY_FN; deleted on free. */
  static int value = 7;
  int copied_key = MPI_KEYVAL_INVALID, kept_key = MPI_KEYVAL_INVALID;
  CHECK_MPI(MPI_Keyval_create(count_copy, count_delete, &copied_key, &deletes));
  CHECK_MPI(MPI_Keyval_create(MPI_NULL_COPY_FN, count_delete, &kept_key, &deletes));
  MPI_Comm comm;
  CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &comm));
  CHECK_MPI(MPI_Attr_put(comm, copied_key, &value));
  CHECK_MPI(MPI_Attr_put(comm, kept_key, &value));
  int *got = NULL, flag = 0;
  CHECK_MPI(MPI_Attr_get(comm, copied_key, &got, &flag));
  CHECK(flag && got == &value, "MPI_Attr_get");
  MPI_Comm dup;
  CHECK_MPI(MPI_Comm_dup(comm, &dup));
  CHECK(copies == 1, "copy callback ran %d times", copies);
  CHECK_MPI(MPI_Attr_get(dup, copied_key, &got, &flag));
  CHECK(flag && got == &value, "MPI_DUP_FN copied the value");
  CHECK_MPI(MPI_Attr_get(dup, kept_key, &got, &flag));
  CHECK(!flag, "MPI_NULL_COPY_FN copied nothing");
  CHECK_MPI(MPI_Attr_delete(comm, kept_key));
  CHECK(deletes == 1, "MPI_Attr_delete ran the delete callback (%d)", deletes);
  CHECK_MPI(MPI_Comm_free(&dup));
  CHECK(deletes == 2, "freeing the duplicate deleted its attribute (%d)", deletes);
  CHECK_MPI(MPI_Comm_free(&comm));
  CHECK(deletes == 3, "freeing the communicator deleted its attribute (%d)", deletes);
  CHECK_MPI(MPI_Keyval_free(&copied_key));
  CHECK_MPI(MPI_Keyval_free(&kept_key));
  CHECK(copied_key == MPI_KEYVAL_INVALID, "MPI_Keyval_free resets the key");
  int tag_ub_flag = 0;
  int *tag_ub = NULL;
  CHECK_MPI(MPI_Attr_get(MPI_COMM_WORLD, MPI_TAG_UB, &tag_ub, &tag_ub_flag));
  CHECK(tag_ub_flag && *tag_ub >= 32767, "MPI_TAG_UB through MPI_Attr_get");

  /* MPI_Request_get_status: not complete before the message is sent; complete after, and the request
   * is still there for MPI_Wait. */
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  if (rank == 0) {
    int in = -1;
    MPI_Request request;
    MPI_Status status;
    CHECK_MPI(MPI_Irecv(&in, 1, MPI_INT, 1, 3, MPI_COMM_WORLD, &request));
    CHECK_MPI(MPI_Request_get_status(request, &flag, &status));
    CHECK(!flag, "complete before anything was sent");
    CHECK_MPI(MPI_Send(&rank, 1, MPI_INT, 1, 4, MPI_COMM_WORLD)); /* tells rank 1 to send */
    do {
      CHECK_MPI(MPI_Request_get_status(request, &flag, &status));
    } while (!flag);
    CHECK(request != MPI_REQUEST_NULL && status.MPI_SOURCE == 1 && status.MPI_TAG == 3, "status %d/%d",
          status.MPI_SOURCE, status.MPI_TAG);
    CHECK(MPI_Request_c2f(request) > 0 && MPI_Request_f2c(MPI_Request_c2f(request)) == request, "request c2f/f2c");
    CHECK_MPI(MPI_Wait(&request, MPI_STATUS_IGNORE));
    CHECK(in == 42 && request == MPI_REQUEST_NULL, "MPI_Wait after MPI_Request_get_status");
    CHECK_MPI(MPI_Request_get_status(MPI_REQUEST_NULL, &flag, &status));
    CHECK(flag && status.MPI_SOURCE == MPI_ANY_SOURCE && status.MPI_TAG == MPI_ANY_TAG, "empty status of a null request");
    CHECK_CLASS(MPI_ERR_ARG, MPI_Request_get_status(MPI_REQUEST_NULL, NULL, &status));
  } else if (rank == 1) {
    int go = 0, answer = 42;
    CHECK_MPI(MPI_Recv(&go, 1, MPI_INT, 0, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    CHECK_MPI(MPI_Send(&answer, 1, MPI_INT, 0, 3, MPI_COMM_WORLD));
  }

  /* Handles between C and Fortran. */
  CHECK(MPI_Comm_f2c(MPI_Comm_c2f(MPI_COMM_WORLD)) == MPI_COMM_WORLD, "comm c2f/f2c");
  CHECK(MPI_Type_f2c(MPI_Type_c2f(MPI_DOUBLE)) == MPI_DOUBLE, "type c2f/f2c");
  CHECK(MPI_Op_f2c(MPI_Op_c2f(MPI_SUM)) == MPI_SUM, "op c2f/f2c");
  CHECK(MPI_Message_f2c(MPI_Message_c2f(MPI_MESSAGE_NO_PROC)) == MPI_MESSAGE_NO_PROC, "message c2f/f2c");
  CHECK(MPI_Request_c2f(MPI_REQUEST_NULL) == 0 && MPI_Request_f2c(0) == MPI_REQUEST_NULL, "null request");
  MPI_Status c = {.MPI_SOURCE = 3, .MPI_TAG = 9, .MPI_ERROR = 0}, back;
  MPI_Fint f[6];
  CHECK_MPI(MPI_Status_c2f(&c, f));
  CHECK_MPI(MPI_Status_f2c(f, &back));
  CHECK(f[0] == 3 && f[1] == 9 && back.MPI_SOURCE == 3 && back.MPI_TAG == 9, "status c2f/f2c");
  MPI_F08_status f08;
  MPI_Fint f_again[6];
  CHECK_MPI(MPI_Status_c2f08(&c, &f08));
  CHECK_MPI(MPI_Status_f082f(&f08, f_again));
  CHECK_MPI(MPI_Status_f2f08(f_again, &f08));
  CHECK_MPI(MPI_Status_f082c(&f08, &back));
  CHECK(f08.MPI_SOURCE == 3 && f08.MPI_TAG == 9 && f_again[1] == 9 && back.MPI_SOURCE == 3, "status c2f08/f082c");
  CHECK(MPI_Status_f082c(MPI_F08_STATUS_IGNORE, &back) == MPI_ERR_ARG, "MPI_F08_STATUS_IGNORE converted");

  CHECK_MPI(MPI_Pcontrol(1));
  CHECK_MPI(MPI_Pcontrol(0, "ignored"));

  /* MPI-1's removed names: a handler that counts, an hvector of pairs of ints, a struct, extents. */
  MPI_Errhandler counting, got_handler;
  CHECK_MPI(MPI_Errhandler_create(count_errors, &counting));
  CHECK_MPI(MPI_Errhandler_set(MPI_COMM_WORLD, counting));
  CHECK_MPI(MPI_Errhandler_get(MPI_COMM_WORLD, &got_handler));
  CHECK(got_handler == counting, "MPI_Errhandler_get");
  CHECK_MPI(MPI_Errhandler_free(&got_handler));
  int dummy = 0;
  MPI_Send(&dummy, 1, MPI_INT, size, 0, MPI_COMM_WORLD);
  CHECK(handled == 1, "the MPI-1 error handler ran %d times", handled);
  CHECK_MPI(MPI_Errhandler_set(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
  CHECK_MPI(MPI_Errhandler_free(&counting));
  int pairs[8];
  MPI_Aint first, second, extent, lb, ub;
  CHECK_MPI(MPI_Address(&pairs[0], &first));
  CHECK_MPI(MPI_Address(&pairs[4], &second));
  MPI_Datatype hvector, structure;
  CHECK_MPI(MPI_Type_hvector(2, 2, second - first, MPI_INT, &hvector));
  CHECK_MPI(MPI_Type_extent(hvector, &extent));
  CHECK_MPI(MPI_Type_lb(hvector, &lb));
  CHECK_MPI(MPI_Type_ub(hvector, &ub));
  CHECK(extent == 6 * (MPI_Aint)sizeof(int) && lb == 0 && ub == extent, "hvector extent %ld lb %ld ub %ld",
        (long)extent, (long)lb, (long)ub);
  int lengths[2] = {1, 1};
  MPI_Aint displs[2] = {0, 2 * (MPI_Aint)sizeof(int)};
  MPI_Datatype types[2] = {MPI_INT, MPI_INT};
  CHECK_MPI(MPI_Type_struct(2, lengths, displs, types, &structure));
  MPI_Datatype hindexed;
  CHECK_MPI(MPI_Type_hindexed(2, lengths, displs, MPI_INT, &hindexed));
  int size_struct = 0, size_hindexed = 0;
  CHECK_MPI(MPI_Type_size(structure, &size_struct));
  CHECK_MPI(MPI_Type_size(hindexed, &size_hindexed));
  CHECK(size_struct == 2 * (int)sizeof(int) && size_hindexed == size_struct, "struct and hindexed sizes");
  CHECK_MPI(MPI_Type_free(&hvector));
  CHECK_MPI(MPI_Type_free(&structure));
  CHECK_MPI(MPI_Type_free(&hindexed));
  if (rank == 0) printf("compat: %d ranks passed\n", size);
  CHECK_MPI(MPI_Finalize());
  return 0;
}

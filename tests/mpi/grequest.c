/* Generalized requests: an operation of the program's own, waited for with MPI's completion calls.
 * Completed later in the same thread, completed by another thread while MPI_Wait waits
 * (MPI_THREAD_MULTIPLE), mixed with a receive in MPI_Waitall, cancelled, freed before completion;
 * the status comes from the query function (MPI_Status_set_elements, MPI_Status_set_cancelled). */
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

#include "check.h"

struct op {
  int queries;
  int frees;
  int cancels;
  int cancel_complete;
  int elements;
  int cancelled;
  MPI_Request request;
  atomic_int go;
};

static int query(void *extra, MPI_Status *status) {
  struct op *o = extra;
  ++o->queries;
  status->MPI_SOURCE = 5;
  status->MPI_TAG = 77;
  MPI_Status_set_elements(status, MPI_INT, o->elements);
  MPI_Status_set_cancelled(status, o->cancelled);
  return MPI_SUCCESS;
}

static int release(void *extra) {
  ++((struct op *)extra)->frees;
  return MPI_SUCCESS;
}

static int cancel(void *extra, int complete) {
  struct op *o = extra;
  ++o->cancels;
  o->cancel_complete = complete;
  return MPI_SUCCESS;
}

static void *completer(void *arg) {
  struct op *o = arg;
  while (!atomic_load(&o->go)) {
  }
  CHECK_MPI(MPI_Grequest_complete(o->request));
  return NULL;
}

int main(int argc, char **argv) {
  int provided = 0;
  CHECK_MPI(MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided));
  CHECK(provided == MPI_THREAD_MULTIPLE, "provided %d", provided);
  int rank = 0, size = 0;
  CHECK_MPI(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
  CHECK_MPI(MPI_Comm_size(MPI_COMM_WORLD, &size));

  /* Not complete, then complete: the status is the query function's. */
  struct op a = {.elements = 12};
  CHECK_MPI(MPI_Grequest_start(query, release, cancel, &a, &a.request));
  int flag = 1;
  MPI_Status status;
  CHECK_MPI(MPI_Test(&a.request, &flag, &status));
  CHECK(!flag && a.queries == 0 && a.frees == 0, "complete before MPI_Grequest_complete");
  CHECK_MPI(MPI_Grequest_complete(a.request));
  CHECK_MPI(MPI_Request_get_status(a.request, &flag, &status));
  CHECK(flag && a.frees == 0 && a.request != MPI_REQUEST_NULL, "MPI_Request_get_status keeps the request");
  CHECK_MPI(MPI_Test(&a.request, &flag, &status));
  CHECK(flag && a.request == MPI_REQUEST_NULL && a.frees == 1, "MPI_Test collects it (frees %d)", a.frees);
  int count = -1, cancelled = -1;
  CHECK_MPI(MPI_Get_count(&status, MPI_INT, &count));
  CHECK_MPI(MPI_Test_cancelled(&status, &cancelled));
  CHECK(status.MPI_SOURCE == 5 && status.MPI_TAG == 77 && count == 12 && !cancelled, "status %d/%d/%d",
        status.MPI_SOURCE, status.MPI_TAG, count);

  /* Completed by another thread while this one waits, beside a receive in MPI_Waitall. */
  struct op b = {.elements = 3, .cancelled = 1};
  CHECK_MPI(MPI_Grequest_start(query, release, cancel, &b, &b.request));
  pthread_t thread;
  CHECK(pthread_create(&thread, NULL, completer, &b) == 0, "pthread_create");
  MPI_Request requests[2];
  requests[0] = b.request;
  int in = -1, out = rank;
  CHECK_MPI(MPI_Irecv(&in, 1, MPI_INT, (rank + size - 1) % size, 1, MPI_COMM_WORLD, &requests[1]));
  CHECK_MPI(MPI_Send(&out, 1, MPI_INT, (rank + 1) % size, 1, MPI_COMM_WORLD));
  atomic_store(&b.go, 1);
  MPI_Status statuses[2];
  CHECK_MPI(MPI_Waitall(2, requests, statuses));
  pthread_join(thread, NULL);
  CHECK(requests[0] == MPI_REQUEST_NULL && b.frees == 1 && in == (rank + size - 1) % size, "waitall");
  CHECK_MPI(MPI_Test_cancelled(&statuses[0], &cancelled));
  CHECK_MPI(MPI_Get_elements(&statuses[0], MPI_INT, &count));
  CHECK(cancelled && count == 3, "the query function's cancelled flag and elements");

  /* Cancel calls the cancel function with whether it completed; freed first, the free function runs
   * once it is complete. */
  struct op c = {.elements = 0};
  CHECK_MPI(MPI_Grequest_start(query, release, cancel, &c, &c.request));
  CHECK_MPI(MPI_Cancel(&c.request));
  CHECK(c.cancels == 1 && c.cancel_complete == 0, "cancel function (%d, %d)", c.cancels, c.cancel_complete);
  MPI_Request kept = c.request;
  CHECK_MPI(MPI_Request_free(&c.request));
  CHECK(c.request == MPI_REQUEST_NULL && c.frees == 0, "freed before completion: free function deferred");
  CHECK_MPI(MPI_Grequest_complete(kept));
  CHECK(c.frees == 1 && c.queries == 0, "free function at completion (%d), no query (%d)", c.frees, c.queries);

  /* Errors: completing twice, a receive is not a generalized request. */
  struct op d = {0};
  CHECK_MPI(MPI_Grequest_start(query, release, cancel, &d, &d.request));
  MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  CHECK_MPI(MPI_Grequest_complete(d.request));
  CHECK_CLASS(MPI_ERR_REQUEST, MPI_Grequest_complete(d.request));
  CHECK_MPI(MPI_Wait(&d.request, MPI_STATUS_IGNORE));
  MPI_Request recv;
  CHECK_MPI(MPI_Irecv(&in, 1, MPI_INT, MPI_ANY_SOURCE, 9, MPI_COMM_WORLD, &recv));
  CHECK_CLASS(MPI_ERR_REQUEST, MPI_Grequest_complete(recv));
  CHECK_MPI(MPI_Cancel(&recv));
  CHECK_MPI(MPI_Wait(&recv, MPI_STATUS_IGNORE));
  CHECK_CLASS(MPI_ERR_ARG, MPI_Grequest_start(NULL, release, cancel, &d, &d.request));
  CHECK_CLASS(MPI_ERR_COUNT, MPI_Status_set_elements(&status, MPI_INT, -1));

  if (rank == 0) printf("grequest: %d ranks passed\n", size);
  CHECK_MPI(MPI_Finalize());
  return 0;
}

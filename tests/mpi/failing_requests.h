/* Generalized requests that fail on purpose, each with the code its query function returns: failures
 * with a reason of their own, to fill the library's set of failure reasons (fatal.c, peer_lost.c). */
#ifndef FTMPI_TEST_FAILING_REQUESTS_H
#define FTMPI_TEST_FAILING_REQUESTS_H

#include "check.h"

static inline int failing_query(void *extra_state, MPI_Status *status) {
  MPI_Status_set_elements(status, MPI_BYTE, 0);
  MPI_Status_set_cancelled(status, 0);
  return *(int *)extra_state;
}
static inline int failing_free(void *extra_state) { return (void)extra_state, MPI_SUCCESS; }
static inline int failing_cancel(void *extra_state, int complete) {
  return (void)extra_state, (void)complete, MPI_SUCCESS;
}

/* A generalized request completed at once, whose query function returns `code`: MPI_Wait's result. */
static inline int wait_failing_request(int code) {
  MPI_Request request = MPI_REQUEST_NULL;
  CHECK_MPI(MPI_Grequest_start(failing_query, failing_free, failing_cancel, &code, &request));
  CHECK_MPI(MPI_Grequest_complete(request));
  return MPI_Wait(&request, MPI_STATUS_IGNORE);
}

/* n failures under MPI_ERRORS_RETURN (on MPI_COMM_SELF, whose handler reports them), codes first ..
 * first + n - 1: n distinct reasons. MPI_COMM_SELF's handler is fatal again afterwards. */
static inline void fail_with_distinct_reasons(int n, int first) {
  CHECK_MPI(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
  for (int i = 0; i < n; ++i) {
    const int got = wait_failing_request(first + i);
    CHECK(got == first + i, "MPI_Wait of failing request %d returned %d", i, got);
  }
  CHECK_MPI(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_ARE_FATAL));
}

#endif

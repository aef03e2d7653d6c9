/* What every MPI test program shares: CHECK-style assertions that name the rank, the file and line, and
 * end the whole job with MPI_Abort so that ftrun reports the failure. */
#ifndef FTMPI_TEST_CHECK_H
#define FTMPI_TEST_CHECK_H

#include <mpi.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

static inline int test_rank(void) {
  int initialized = 0;
  int finalized = 0;
  int rank = -1;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  if (initialized && !finalized) MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  return rank;
}

static inline void test_fail(const char *file, int line, const char *format, ...) {
  va_list args;
  fprintf(stderr, "FAIL rank %d %s:%d: ", test_rank(), file, line);
  va_start(args, format);
  vfprintf(stderr, format, args);
  va_end(args);
  fputc('\n', stderr);
  fflush(stderr);
  if (test_rank() >= 0) MPI_Abort(MPI_COMM_WORLD, 99);
  exit(99);
}

/* The condition, or fail with a message (printf format). */
#define CHECK(cond, ...) ((cond) ? (void)0 : test_fail(__FILE__, __LINE__, __VA_ARGS__))
/* An MPI call that must return MPI_SUCCESS. */
#define CHECK_MPI(call) check_mpi((call), #call, __FILE__, __LINE__)
/* An MPI call that must return the given error class (run with MPI_ERRORS_RETURN). */
#define CHECK_CLASS(expected, call) check_class((expected), (call), #call, __FILE__, __LINE__)

static inline void check_mpi(int rc, const char *what, const char *file, int line) {
  if (rc != MPI_SUCCESS) {
    char text[MPI_MAX_ERROR_STRING];
    int len = 0;
    MPI_Error_string(rc, text, &len);
    test_fail(file, line, "%s returned %d (%s)", what, rc, text);
  }
}

static inline void check_class(int expected, int rc, const char *what, const char *file, int line) {
  int cls = -1;
  if (rc != MPI_SUCCESS) MPI_Error_class(rc, &cls);
  if (rc == MPI_SUCCESS || cls != expected) {
    char want[MPI_MAX_ERROR_STRING];
    char got[MPI_MAX_ERROR_STRING];
    int len = 0;
    MPI_Error_string(expected, want, &len);
    if (rc == MPI_SUCCESS) {
      snprintf(got, sizeof got, "MPI_SUCCESS");
    } else {
      MPI_Error_string(rc, got, &len);
    }
    test_fail(file, line, "%s: expected %s, got %s", what, want, got);
  }
}

/* MPI_Init, then this process's rank and the size of MPI_COMM_WORLD. */
static inline void test_init_world(int *argc, char ***argv, int *rank, int *size) {
  CHECK_MPI(MPI_Init(argc, argv));
  CHECK_MPI(MPI_Comm_rank(MPI_COMM_WORLD, rank));
  CHECK_MPI(MPI_Comm_size(MPI_COMM_WORLD, size));
}

#endif

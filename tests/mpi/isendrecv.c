/* MPI-4's MPI_Isendrecv and MPI_Isendrecv_replace (and their _c forms) around a ring of any size:
 *   - data and status (source, tag, count) of each, completed by MPI_Wait, MPI_Test loops and
 *     MPI_Waitall of several at once, with wildcards, and with a vector type for the replace form (the
 *     outgoing data must leave before the incoming land on the same buffer);
 *   - MPI_PROC_NULL on either side; a receive that is too short (MPI_ERR_TRUNCATE at the wait);
 *   - a request whose receive cannot match: MPI_Request_free refuses it (MPI_ERR_REQUEST), MPI_Cancel
 *     cancels its receive;
 *   - bad arguments with MPI_ERRORS_RETURN.
 * argv[1]: how many rounds (default 1). */
#include <stdlib.h>
#include <string.h>

#include "check.h"

static int rank, size, next, previous;

static void check_status(const MPI_Status *status, int source, int tag, MPI_Datatype type, int count, const char *what) {
  int got = -1;
  CHECK_MPI(MPI_Get_count(status, type, &got));
  CHECK(status->MPI_SOURCE == source && status->MPI_TAG == tag && got == count,
        "%s: source %d tag %d count %d (want %d, %d, %d)", what, status->MPI_SOURCE, status->MPI_TAG, got, source, tag,
        count);
}

static void exchange(int round) {
  const int n = 1000 + round;
  int *out = malloc(sizeof(int) * (size_t)n), *in = malloc(sizeof(int) * (size_t)n);
  CHECK(out != NULL && in != NULL, "out of memory");
  for (int i = 0; i < n; ++i) out[i] = rank * 100000 + round * 1000 + i;
  MPI_Request request;
  MPI_Status status;

  /* Plain, waited for. */
  memset(in, 0, sizeof(int) * (size_t)n);
  CHECK_MPI(MPI_Isendrecv(out, n, MPI_INT, next, 1, in, n, MPI_INT, previous, 1, MPI_COMM_WORLD, &request));
  CHECK_MPI(MPI_Wait(&request, &status));
  CHECK(request == MPI_REQUEST_NULL, "MPI_Wait left the request");
  check_status(&status, previous, 1, MPI_INT, n, "MPI_Isendrecv");
  for (int i = 0; i < n; ++i) CHECK(in[i] == previous * 100000 + round * 1000 + i, "MPI_Isendrecv: int %d", i);

  /* The _c form with wildcards, tested until complete. */
  memset(in, 0, sizeof(int) * (size_t)n);
  CHECK_MPI(MPI_Isendrecv_c(out, n, MPI_INT, next, 2, in, n, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD,
                            &request));
  int flag = 0;
  while (!flag) CHECK_MPI(MPI_Test(&request, &flag, &status));
  check_status(&status, previous, 2, MPI_INT, n, "MPI_Isendrecv_c");
  CHECK(in[n - 1] == previous * 100000 + round * 1000 + n - 1, "MPI_Isendrecv_c: last int");

  /* Replace with a vector type: every other int of 2n goes out, and the previous rank's come in. */
  int *strided = malloc(sizeof(int) * 2 * (size_t)n);
  CHECK(strided != NULL, "out of memory");
  for (int i = 0; i < 2 * n; ++i) strided[i] = rank * 100000 + i;
  MPI_Datatype every_other;
  CHECK_MPI(MPI_Type_vector(n, 1, 2, MPI_INT, &every_other));
  CHECK_MPI(MPI_Type_commit(&every_other));
  CHECK_MPI(MPI_Isendrecv_replace(strided, 1, every_other, next, 3, previous, 3, MPI_COMM_WORLD, &request));
  CHECK_MPI(MPI_Wait(&request, &status));
  check_status(&status, previous, 3, every_other, 1, "MPI_Isendrecv_replace");
  for (int i = 0; i < 2 * n; ++i) {
    const int want = (i % 2 == 0 ? previous : rank) * 100000 + i; /* the holes keep this rank's ints */
    CHECK(strided[i] == want, "MPI_Isendrecv_replace: int %d is %d, not %d", i, strided[i], want);
  }
  CHECK_MPI(MPI_Type_free(&every_other));
  free(strided);

  /* Several at once, each way, _c replace among them, completed by one MPI_Waitall. */
  int ring[3][4], replaced[4];
  MPI_Request requests[4];
  MPI_Status statuses[4];
  for (int k = 0; k < 3; ++k) {
    CHECK_MPI(MPI_Isendrecv(&out[k], 1, MPI_INT, next, 10 + k, ring[k], 4, MPI_INT, previous, 10 + k, MPI_COMM_WORLD,
                            &requests[k]));
  }
  for (int k = 0; k < 4; ++k) replaced[k] = rank * 10 + k;
  CHECK_MPI(MPI_Isendrecv_replace_c(replaced, 4, MPI_INT, previous, 20, next, 20, MPI_COMM_WORLD, &requests[3]));
  CHECK_MPI(MPI_Waitall(4, requests, statuses));
  for (int k = 0; k < 3; ++k) {
    check_status(&statuses[k], previous, 10 + k, MPI_INT, 1, "MPI_Waitall");
    CHECK(ring[k][0] == previous * 100000 + round * 1000 + k, "MPI_Waitall: exchange %d", k);
  }
  check_status(&statuses[3], next, 20, MPI_INT, 4, "MPI_Isendrecv_replace_c");
  for (int k = 0; k < 4; ++k) CHECK(replaced[k] == next * 10 + k, "MPI_Isendrecv_replace_c: int %d", k);
  free(out);
  free(in);
}

static void edges(void) {
  int out[4] = {1, 2, 3, 4}, in[4] = {9, 9, 9, 9};
  MPI_Request request;
  MPI_Status status;
  /* To and from MPI_PROC_NULL: complete, nothing received. */
  CHECK_MPI(MPI_Isendrecv(out, 4, MPI_INT, MPI_PROC_NULL, 0, in, 4, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &request));
  CHECK_MPI(MPI_Wait(&request, &status));
  check_status(&status, MPI_PROC_NULL, MPI_ANY_TAG, MPI_INT, 0, "MPI_PROC_NULL");
  CHECK(in[0] == 9, "MPI_PROC_NULL wrote into the buffer");
  /* A receive too short for the message. */
  CHECK_MPI(MPI_Isendrecv(out, 4, MPI_INT, next, 30, in, 2, MPI_INT, previous, 30, MPI_COMM_WORLD, &request));
  CHECK_CLASS(MPI_ERR_TRUNCATE, MPI_Wait(&request, &status));
  /* A receive nothing matches: not freed while pending, cancelled, then collected. */
  CHECK_MPI(MPI_Isendrecv(out, 4, MPI_INT, MPI_PROC_NULL, 0, in, 4, MPI_INT, previous, 99, MPI_COMM_WORLD, &request));
  CHECK_CLASS(MPI_ERR_REQUEST, MPI_Request_free(&request));
  CHECK(request != MPI_REQUEST_NULL, "a refused MPI_Request_free cleared the handle");
  CHECK_MPI(MPI_Cancel(&request));
  CHECK_MPI(MPI_Wait(&request, &status));
  int cancelled = 0;
  CHECK_MPI(MPI_Test_cancelled(&status, &cancelled));
  CHECK(cancelled, "the receive of the MPI_Isendrecv was not cancelled");
  /* Bad arguments. */
  CHECK_CLASS(MPI_ERR_RANK, MPI_Isendrecv(out, 1, MPI_INT, size, 0, in, 1, MPI_INT, previous, 0, MPI_COMM_WORLD, &request));
  CHECK_CLASS(MPI_ERR_RANK, MPI_Isendrecv(out, 1, MPI_INT, next, 0, in, 1, MPI_INT, -7, 0, MPI_COMM_WORLD, &request));
  CHECK_CLASS(MPI_ERR_COUNT, MPI_Isendrecv_c(out, -1, MPI_INT, next, 0, in, 1, MPI_INT, previous, 0, MPI_COMM_WORLD, &request));
  CHECK_CLASS(MPI_ERR_TAG, MPI_Isendrecv(out, 1, MPI_INT, next, -5, in, 1, MPI_INT, previous, 0, MPI_COMM_WORLD, &request));
  CHECK_CLASS(MPI_ERR_TYPE, MPI_Isendrecv_replace(out, 1, MPI_DATATYPE_NULL, next, 0, previous, 0, MPI_COMM_WORLD, &request));
  CHECK_CLASS(MPI_ERR_ARG, MPI_Isendrecv_replace_c(out, 1, MPI_INT, next, 0, previous, 0, MPI_COMM_WORLD, NULL));
  CHECK_CLASS(MPI_ERR_COMM, MPI_Isendrecv(out, 1, MPI_INT, next, 0, in, 1, MPI_INT, previous, 0, MPI_COMM_NULL, &request));
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  next = (rank + 1) % size;
  previous = (rank + size - 1) % size;
  const int rounds = argc > 1 ? atoi(argv[1]) : 1;
  for (int round = 0; round < rounds; ++round) exchange(round);
  edges();
  CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
  MPI_Finalize();
  if (rank == 0) printf("isendrecv: ok\n");
  return 0;
}

/* With MPI_ERRORS_RETURN on MPI_COMM_WORLD, every bad argument returns the error class MPI prescribes
 * and changes nothing; completion errors (truncation) come back through MPI_ERR_IN_STATUS with each
 * status's MPI_ERROR, MPI_ERR_PENDING for a request not complete yet. Every rank runs the checks on
 * itself; no message crosses ranks. */
#include <limits.h>
#include <string.h>

#include "check.h"

static int rank;

static void arguments(void) {
  int value = 0;
  int flag = 0;
  MPI_Status status;
  MPI_Request request = MPI_REQUEST_NULL;

  /* Communicators. */
  CHECK_CLASS(MPI_ERR_COMM, MPI_Send(&value, 1, MPI_INT, 0, 0, MPI_COMM_NULL));
  CHECK_CLASS(MPI_ERR_COMM, MPI_Send(&value, 1, MPI_INT, 0, 0, 12345));
  CHECK_CLASS(MPI_ERR_COMM, MPI_Send(&value, 1, MPI_INT, 0, 0, (MPI_Comm)MPI_INT)); /* a handle of the wrong kind */
  CHECK_CLASS(MPI_ERR_COMM, MPI_Comm_rank(MPI_COMM_NULL, &value));
  CHECK_CLASS(MPI_ERR_COMM, MPI_Irecv(&value, 1, MPI_INT, 0, 0, MPI_COMM_NULL, &request));
  CHECK_CLASS(MPI_ERR_COMM, MPI_Probe(0, 0, MPI_COMM_NULL, &status));

  /* Counts. */
  CHECK_CLASS(MPI_ERR_COUNT, MPI_Send(&value, -1, MPI_INT, 0, 0, MPI_COMM_SELF));
  CHECK_CLASS(MPI_ERR_COUNT, MPI_Recv(&value, -3, MPI_INT, 0, 0, MPI_COMM_SELF, &status));
  CHECK_CLASS(MPI_ERR_COUNT, MPI_Waitall(-1, &request, MPI_STATUSES_IGNORE));

  /* Datatypes. */
  CHECK_CLASS(MPI_ERR_TYPE, MPI_Send(&value, 1, MPI_DATATYPE_NULL, 0, 0, MPI_COMM_SELF));
  CHECK_CLASS(MPI_ERR_TYPE, MPI_Send(&value, 1, (MPI_Datatype)MPI_COMM_WORLD, 0, 0, MPI_COMM_SELF));
  CHECK_CLASS(MPI_ERR_TYPE, MPI_Isend(&value, 1, 0x4c0000ff, 0, 0, MPI_COMM_SELF, &request));
  CHECK_CLASS(MPI_ERR_TYPE, MPI_Type_size(MPI_DATATYPE_NULL, &value));

  /* Tags: negative ones, and MPI_ANY_TAG on a send. */
  CHECK_CLASS(MPI_ERR_TAG, MPI_Send(&value, 1, MPI_INT, 0, -5, MPI_COMM_SELF));
  CHECK_CLASS(MPI_ERR_TAG, MPI_Send(&value, 1, MPI_INT, 0, MPI_ANY_TAG, MPI_COMM_SELF));
  CHECK_CLASS(MPI_ERR_TAG, MPI_Irecv(&value, 1, MPI_INT, 0, -7, MPI_COMM_SELF, &request));
  CHECK_CLASS(MPI_ERR_TAG, MPI_Iprobe(0, INT_MIN, MPI_COMM_SELF, &flag, &status));

  /* Ranks: past the end, negative, and MPI_ANY_SOURCE as a destination. */
  int size = 0;
  CHECK_MPI(MPI_Comm_size(MPI_COMM_WORLD, &size));
  CHECK_CLASS(MPI_ERR_RANK, MPI_Send(&value, 1, MPI_INT, size, 0, MPI_COMM_WORLD));
  CHECK_CLASS(MPI_ERR_RANK, MPI_Send(&value, 1, MPI_INT, -7, 0, MPI_COMM_WORLD));
  CHECK_CLASS(MPI_ERR_RANK, MPI_Send(&value, 1, MPI_INT, MPI_ANY_SOURCE, 0, MPI_COMM_WORLD));
  CHECK_CLASS(MPI_ERR_RANK, MPI_Recv(&value, 1, MPI_INT, 1, 0, MPI_COMM_SELF, &status));
  CHECK_CLASS(MPI_ERR_RANK, MPI_Probe(size + 3, 0, MPI_COMM_WORLD, &status));

  /* Buffers: null with a count, and the bsend buffer. */
  CHECK_CLASS(MPI_ERR_BUFFER, MPI_Send(NULL, 3, MPI_INT, 0, 0, MPI_COMM_SELF));
  CHECK_CLASS(MPI_ERR_BUFFER, MPI_Irecv(NULL, 1, MPI_INT, 0, 0, MPI_COMM_SELF, &request));
  CHECK_CLASS(MPI_ERR_BUFFER, MPI_Bsend(&value, 1, MPI_INT, 0, 0, MPI_COMM_SELF)); /* nothing attached */
  char room[2 * (sizeof(int) + MPI_BSEND_OVERHEAD)];
  CHECK_MPI(MPI_Buffer_attach(room, sizeof room));
  CHECK_CLASS(MPI_ERR_BUFFER, MPI_Buffer_attach(room, sizeof room)); /* attached already */
  int big[64];
  memset(big, 0, sizeof big);
  CHECK_CLASS(MPI_ERR_BUFFER, MPI_Bsend(big, 64, MPI_INT, 0, 0, MPI_COMM_SELF)); /* larger than the buffer */
  CHECK_CLASS(MPI_ERR_BUFFER, MPI_Ibsend(big, 64, MPI_INT, 0, 0, MPI_COMM_SELF, &request));
  CHECK(request == MPI_REQUEST_NULL, "a failed MPI_Ibsend set its request");
  void *detached = NULL;
  int detached_size = 0;
  CHECK_MPI(MPI_Buffer_detach(&detached, &detached_size));
  CHECK(detached == room && detached_size == (int)sizeof room, "MPI_Buffer_detach");

  /* Requests. */
  CHECK_CLASS(MPI_ERR_REQUEST, MPI_Start(&request)); /* MPI_REQUEST_NULL */
  CHECK_CLASS(MPI_ERR_REQUEST, MPI_Cancel(&request));
  CHECK_CLASS(MPI_ERR_REQUEST, MPI_Request_free(&request));
  CHECK_MPI(MPI_Irecv(&value, 1, MPI_INT, 0, 99, MPI_COMM_SELF, &request));
  CHECK_CLASS(MPI_ERR_REQUEST, MPI_Start(&request)); /* not persistent */
  MPI_Request stale = request;
  CHECK_MPI(MPI_Cancel(&request));
  CHECK_MPI(MPI_Wait(&request, MPI_STATUS_IGNORE));
  CHECK_CLASS(MPI_ERR_REQUEST, MPI_Wait(&stale, MPI_STATUS_IGNORE)); /* freed by the MPI_Wait before */
  CHECK_CLASS(MPI_ERR_REQUEST, MPI_Waitall(1, &stale, MPI_STATUSES_IGNORE));
  CHECK_MPI(MPI_Recv_init(&value, 1, MPI_INT, 0, 99, MPI_COMM_SELF, &request));
  CHECK_CLASS(MPI_ERR_REQUEST, MPI_Cancel(&request)); /* inactive */
  CHECK_MPI(MPI_Start(&request));
  CHECK_CLASS(MPI_ERR_REQUEST, MPI_Start(&request)); /* active already */
  CHECK_MPI(MPI_Cancel(&request));
  CHECK_MPI(MPI_Wait(&request, MPI_STATUS_IGNORE));
  CHECK_MPI(MPI_Request_free(&request));

  /* Other arguments. */
  CHECK_CLASS(MPI_ERR_ARG, MPI_Comm_size(MPI_COMM_WORLD, NULL));
  CHECK_CLASS(MPI_ERR_ARG, MPI_Recv(&value, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, NULL));
  CHECK_CLASS(MPI_ERR_ARG, MPI_Isend(&value, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, NULL));
  CHECK_CLASS(MPI_ERR_ARG, MPI_Get_count(MPI_STATUS_IGNORE, MPI_INT, &value));
  CHECK_CLASS(MPI_ERR_ARG, MPI_Error_string(MPI_ERR_LASTCODE + 1, (char[MPI_MAX_ERROR_STRING]){0}, &value));
  CHECK_CLASS(MPI_ERR_ARG, MPI_Error_class(-1, &value));
  CHECK_CLASS(MPI_ERR_ARG, MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRHANDLER_NULL));
  CHECK_CLASS(MPI_ERR_ARG, MPI_Buffer_attach(room, -1));
  CHECK_CLASS(MPI_ERR_KEYVAL, MPI_Comm_get_attr(MPI_COMM_WORLD, 12345, &request, &flag));
}

static void completion_errors(void) {
  /* Truncation: 4 ints into room for 2. The status still tells what arrived. */
  int four[4] = {1, 2, 3, 4};
  int two[2] = {0, 0};
  MPI_Status status;
  MPI_Request send;
  CHECK_MPI(MPI_Isend(four, 4, MPI_INT, 0, 1, MPI_COMM_SELF, &send));
  CHECK_CLASS(MPI_ERR_TRUNCATE, MPI_Recv(two, 2, MPI_INT, 0, 1, MPI_COMM_SELF, &status));
  CHECK(status.MPI_SOURCE == 0 && status.MPI_TAG == 1, "truncated receive: status source %d tag %d",
        status.MPI_SOURCE, status.MPI_TAG);
  CHECK(two[0] == 1 && two[1] == 2, "truncated receive: got %d %d", two[0], two[1]);
  CHECK_MPI(MPI_Wait(&send, MPI_STATUS_IGNORE));

  /* Waitall with one receive truncated and one that nothing will match (yet). */
  int later = 0;
  MPI_Request requests[3];
  MPI_Status statuses[3];
  CHECK_MPI(MPI_Irecv(two, 2, MPI_INT, 0, 2, MPI_COMM_SELF, &requests[0]));
  CHECK_MPI(MPI_Irecv(&later, 1, MPI_INT, 0, 3, MPI_COMM_SELF, &requests[1]));
  requests[2] = MPI_REQUEST_NULL;
  CHECK_MPI(MPI_Isend(four, 4, MPI_INT, 0, 2, MPI_COMM_SELF, &send));
  for (int i = 0; i < 3; ++i) statuses[i].MPI_ERROR = -1;
  CHECK_CLASS(MPI_ERR_IN_STATUS, MPI_Waitall(3, requests, statuses));
  CHECK(statuses[0].MPI_ERROR == MPI_ERR_TRUNCATE, "Waitall: status 0 error %d", statuses[0].MPI_ERROR);
  CHECK(statuses[1].MPI_ERROR == MPI_ERR_PENDING, "Waitall: status 1 error %d", statuses[1].MPI_ERROR);
  CHECK(statuses[2].MPI_ERROR == MPI_SUCCESS, "Waitall: status 2 error %d", statuses[2].MPI_ERROR);
  CHECK(requests[0] == MPI_REQUEST_NULL && requests[1] != MPI_REQUEST_NULL,
        "Waitall: the failed request must be freed and the pending one kept");
  int eleven = 11;
  CHECK_MPI(MPI_Send(&eleven, 1, MPI_INT, 0, 3, MPI_COMM_SELF));
  CHECK_MPI(MPI_Wait(&requests[1], &status));
  CHECK(later == 11, "the pending request completed with %d", later);
  CHECK_MPI(MPI_Wait(&send, MPI_STATUS_IGNORE));

  /* The same with the truncated receive behind the pending one: the wait looks past a request that is
     not complete and still sees the failure (it must not wait for the pending one first). */
  later = 0;
  CHECK_MPI(MPI_Irecv(&later, 1, MPI_INT, 0, 6, MPI_COMM_SELF, &requests[0]));
  CHECK_MPI(MPI_Irecv(two, 2, MPI_INT, 0, 5, MPI_COMM_SELF, &requests[1]));
  requests[2] = MPI_REQUEST_NULL;
  CHECK_MPI(MPI_Isend(four, 4, MPI_INT, 0, 5, MPI_COMM_SELF, &send));
  for (int i = 0; i < 3; ++i) statuses[i].MPI_ERROR = -1;
  CHECK_CLASS(MPI_ERR_IN_STATUS, MPI_Waitall(3, requests, statuses));
  CHECK(statuses[0].MPI_ERROR == MPI_ERR_PENDING && statuses[1].MPI_ERROR == MPI_ERR_TRUNCATE,
        "Waitall, failure behind a pending request: status errors %d %d", statuses[0].MPI_ERROR,
        statuses[1].MPI_ERROR);
  CHECK(requests[0] != MPI_REQUEST_NULL && requests[1] == MPI_REQUEST_NULL,
        "Waitall, failure behind a pending request: the pending one must be kept, the failed one freed");
  CHECK_MPI(MPI_Send(&eleven, 1, MPI_INT, 0, 6, MPI_COMM_SELF));
  CHECK_MPI(MPI_Wait(&requests[0], &status));
  CHECK(later == 11, "the pending request completed with %d", later);
  CHECK_MPI(MPI_Wait(&send, MPI_STATUS_IGNORE));

  /* Waitsome and Waitany report a truncation too. */
  int outcount = -1;
  int indices[1];
  CHECK_MPI(MPI_Irecv(two, 2, MPI_INT, 0, 4, MPI_COMM_SELF, &requests[0]));
  CHECK_MPI(MPI_Send(four, 3, MPI_INT, 0, 4, MPI_COMM_SELF));
  CHECK_CLASS(MPI_ERR_IN_STATUS, MPI_Waitsome(1, requests, &outcount, indices, statuses));
  CHECK(outcount == 1 && statuses[0].MPI_ERROR == MPI_ERR_TRUNCATE, "Waitsome: outcount %d error %d", outcount,
        statuses[0].MPI_ERROR);
  int index = -1;
  CHECK_MPI(MPI_Irecv(two, 1, MPI_INT, 0, 5, MPI_COMM_SELF, &requests[0]));
  CHECK_MPI(MPI_Send(four, 2, MPI_INT, 0, 5, MPI_COMM_SELF));
  CHECK_CLASS(MPI_ERR_TRUNCATE, MPI_Waitany(1, requests, &index, &status));
  CHECK(index == 0, "Waitany: index %d", index);
}

static void queries(void) {
  /* Every class has a name and a message; every class is its own class. */
  for (int code = MPI_SUCCESS; code <= MPI_ERR_LASTCODE; ++code) {
    char text[MPI_MAX_ERROR_STRING];
    int len = 0;
    int cls = -1;
    CHECK_MPI(MPI_Error_string(code, text, &len));
    CHECK(len > 0 && (int)strlen(text) == len && (strncmp(text, "MPI_", 4) == 0 || strncmp(text, "MPIX_", 5) == 0),
          "MPI_Error_string(%d): '%s'", code, text);
    CHECK_MPI(MPI_Error_class(code, &cls));
    CHECK(cls == code, "MPI_Error_class(%d) = %d", code, cls);
  }

  MPI_Errhandler handler = MPI_ERRHANDLER_NULL;
  CHECK_MPI(MPI_Comm_get_errhandler(MPI_COMM_WORLD, &handler));
  CHECK(handler == MPI_ERRORS_RETURN, "MPI_COMM_WORLD's handler is not MPI_ERRORS_RETURN");
  CHECK_MPI(MPI_Errhandler_free(&handler));
  CHECK(handler == MPI_ERRHANDLER_NULL, "MPI_Errhandler_free did not reset the handle");

  int *tag_ub = NULL;
  int flag = 0;
  CHECK_MPI(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &tag_ub, &flag));
  CHECK(flag && tag_ub != NULL && *tag_ub >= 32767, "MPI_TAG_UB");
  CHECK_MPI(MPI_Send(&flag, 1, MPI_INT, MPI_PROC_NULL, *tag_ub, MPI_COMM_WORLD)); /* the largest tag is valid */

  /* Sizes of the predefined types are those of C. */
  struct {
    MPI_Datatype type;
    int size;
  } sizes[] = {
      {MPI_CHAR, sizeof(char)},          {MPI_SHORT, sizeof(short)},
      {MPI_INT, sizeof(int)},            {MPI_LONG, sizeof(long)},
      {MPI_LONG_LONG, sizeof(long long)}, {MPI_UNSIGNED_LONG_LONG, sizeof(unsigned long long)},
      {MPI_FLOAT, sizeof(float)},        {MPI_DOUBLE, sizeof(double)},
      {MPI_LONG_DOUBLE, sizeof(long double)}, {MPI_WCHAR, sizeof(wchar_t)},
      {MPI_C_BOOL, sizeof(_Bool)},       {MPI_INT64_T, 8},
      {MPI_C_DOUBLE_COMPLEX, sizeof(double _Complex)}, {MPI_C_LONG_DOUBLE_COMPLEX, sizeof(long double _Complex)},
      {MPI_AINT, sizeof(MPI_Aint)},      {MPI_COUNT, sizeof(MPI_Count)},
      {MPI_DOUBLE_INT, sizeof(double) + sizeof(int)}, {MPI_2INT, 2 * sizeof(int)},
  };
  for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; ++i) {
    int size = -1;
    CHECK_MPI(MPI_Type_size(sizes[i].type, &size));
    CHECK(size == sizes[i].size, "MPI_Type_size of type %zu: %d, expected %d", i, size, sizes[i].size);
  }

  /* A message of pair types: counts and basic elements. */
  struct {
    double value;
    int index;
  } pairs[3] = {{1.5, 1}, {2.5, 2}, {3.5, 3}}, got[3];
  MPI_Status status;
  int count = -1;
  CHECK_MPI(MPI_Sendrecv(pairs, 3, MPI_DOUBLE_INT, 0, 6, got, 3, MPI_DOUBLE_INT, 0, 6, MPI_COMM_SELF, &status));
  CHECK(got[2].value == 3.5 && got[2].index == 3, "MPI_DOUBLE_INT message");
  CHECK_MPI(MPI_Get_count(&status, MPI_DOUBLE_INT, &count));
  CHECK(count == 3, "MPI_Get_count of 3 MPI_DOUBLE_INT: %d", count);
  CHECK_MPI(MPI_Get_elements(&status, MPI_DOUBLE_INT, &count));
  CHECK(count == 6, "MPI_Get_elements of 3 MPI_DOUBLE_INT: %d", count);
  CHECK_MPI(MPI_Get_count(&status, MPI_DOUBLE, &count));
  CHECK(count == MPI_UNDEFINED, "MPI_Get_count of 3 MPI_DOUBLE_INT as MPI_DOUBLE: %d", count);
  /* Messages carry the packed data (no padding): one pair (double, int) and the double of a second pair
   * arrived: 3 basic elements, not a whole number of pairs. */
  unsigned char packed[sizeof(double) + sizeof(int) + sizeof(double)];
  double second = 2.5;
  memcpy(packed, &pairs[0].value, sizeof(double));
  memcpy(packed + sizeof(double), &pairs[0].index, sizeof(int));
  memcpy(packed + sizeof(double) + sizeof(int), &second, sizeof(double));
  CHECK_MPI(MPI_Sendrecv(packed, (int)sizeof packed, MPI_BYTE, 0, 7, got, 2, MPI_DOUBLE_INT, 0, 7, MPI_COMM_SELF,
                         &status));
  CHECK(got[0].value == 1.5 && got[0].index == 1 && got[1].value == 2.5, "partial MPI_DOUBLE_INT message");
  CHECK_MPI(MPI_Get_elements(&status, MPI_DOUBLE_INT, &count));
  CHECK(count == 3, "MPI_Get_elements of 1.5 MPI_DOUBLE_INT: %d", count);
  CHECK_MPI(MPI_Get_count(&status, MPI_DOUBLE_INT, &count));
  CHECK(count == MPI_UNDEFINED, "MPI_Get_count of 1.5 MPI_DOUBLE_INT: %d", count);
}

int main(int argc, char **argv) {
  CHECK_MPI(MPI_Init(&argc, &argv));
  CHECK_MPI(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
  MPI_Errhandler handler = MPI_ERRHANDLER_NULL;
  CHECK_MPI(MPI_Comm_get_errhandler(MPI_COMM_WORLD, &handler));
  CHECK(handler == MPI_ERRORS_ARE_FATAL, "the default handler is not MPI_ERRORS_ARE_FATAL");
  CHECK_MPI(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
  CHECK_MPI(MPI_Comm_get_errhandler(MPI_COMM_SELF, &handler));
  CHECK(handler == MPI_ERRORS_ARE_FATAL, "MPI_COMM_SELF's handler changed with MPI_COMM_WORLD's");
  CHECK_MPI(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
  arguments();
  completion_errors();
  queries();
  CHECK_MPI(MPI_Finalize());
  if (rank == 0) printf("error classes: ok\n");
  return 0;
}

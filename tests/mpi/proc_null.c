/* Every point-to-point call with MPI_PROC_NULL completes at once: receives with source MPI_PROC_NULL,
 * tag MPI_ANY_TAG and count 0, and the receive buffer untouched. */
#include "check.h"

static void check_null_status(const MPI_Status *status, const char *what) {
  int count = -1;
  CHECK_MPI(MPI_Get_count(status, MPI_INT, &count));
  CHECK(status->MPI_SOURCE == MPI_PROC_NULL && status->MPI_TAG == MPI_ANY_TAG && count == 0,
        "%s: source %d tag %d count %d", what, status->MPI_SOURCE, status->MPI_TAG, count);
}

int main(int argc, char **argv) {
  CHECK_MPI(MPI_Init(&argc, &argv));
  int rank = 0;
  CHECK_MPI(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
  int value = 5;
  int into = 17;
  MPI_Status status;
  MPI_Request request;
  int flag = 0;

  CHECK_MPI(MPI_Send(&value, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD));
  CHECK_MPI(MPI_Ssend(&value, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD));
  CHECK_MPI(MPI_Rsend(&value, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD));
  CHECK_MPI(MPI_Bsend(&value, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD)); /* no buffer needed */
  CHECK_MPI(MPI_Recv(&into, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &status));
  check_null_status(&status, "MPI_Recv");
  CHECK(into == 17, "MPI_Recv from MPI_PROC_NULL wrote the buffer");

  CHECK_MPI(MPI_Irecv(&into, 1, MPI_INT, MPI_PROC_NULL, MPI_ANY_TAG, MPI_COMM_WORLD, &request));
  CHECK_MPI(MPI_Test(&request, &flag, &status));
  CHECK(flag && request == MPI_REQUEST_NULL, "MPI_Irecv from MPI_PROC_NULL is not complete at once");
  check_null_status(&status, "MPI_Irecv");
  CHECK_MPI(MPI_Isend(&value, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &request));
  CHECK_MPI(MPI_Test(&request, &flag, MPI_STATUS_IGNORE));
  CHECK(flag, "MPI_Isend to MPI_PROC_NULL is not complete at once");

  CHECK_MPI(MPI_Sendrecv(&value, 1, MPI_INT, MPI_PROC_NULL, 0, &into, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD,
                         &status));
  check_null_status(&status, "MPI_Sendrecv");
  CHECK_MPI(MPI_Probe(MPI_PROC_NULL, 0, MPI_COMM_WORLD, &status));
  check_null_status(&status, "MPI_Probe");
  CHECK_MPI(MPI_Iprobe(MPI_PROC_NULL, 0, MPI_COMM_WORLD, &flag, &status));
  CHECK(flag, "MPI_Iprobe of MPI_PROC_NULL");
  check_null_status(&status, "MPI_Iprobe");

  CHECK_MPI(MPI_Recv_init(&into, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &request));
  for (int i = 0; i < 3; ++i) {
    CHECK_MPI(MPI_Start(&request));
    CHECK_MPI(MPI_Wait(&request, &status));
    check_null_status(&status, "persistent receive");
  }
  CHECK_MPI(MPI_Request_free(&request));
  CHECK(into == 17, "receives from MPI_PROC_NULL wrote the buffer");

  CHECK_MPI(MPI_Finalize());
  if (rank == 0) printf("MPI_PROC_NULL: ok\n");
  return 0;
}

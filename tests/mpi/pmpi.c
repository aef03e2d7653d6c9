/* The profiling interface: this program defines MPI_Send and MPI_Comm_rank itself, counting calls and
 * passing them on to PMPI_*; the library's own MPI_* must give way to them. */
#include "check.h"

static int sends;
static int rank_queries;

int MPI_Send(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm) {
  ++sends;
  return PMPI_Send(buf, count, datatype, dest, tag, comm);
}

int MPI_Comm_rank(MPI_Comm comm, int *rank) {
  ++rank_queries;
  return PMPI_Comm_rank(comm, rank);
}

int main(int argc, char **argv) {
  CHECK_MPI(MPI_Init(&argc, &argv));
  int rank = -1;
  CHECK_MPI(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
  int value = 5;
  int back = 0;
  MPI_Request request;
  CHECK_MPI(MPI_Irecv(&back, 1, MPI_INT, 0, 0, MPI_COMM_SELF, &request));
  CHECK_MPI(MPI_Send(&value, 1, MPI_INT, 0, 0, MPI_COMM_SELF));
  CHECK_MPI(MPI_Wait(&request, MPI_STATUS_IGNORE));
  CHECK(back == 5, "message through the wrapper: %d", back);
  CHECK(sends == 1 && rank_queries == 1, "wrappers saw %d sends and %d rank queries", sends, rank_queries);
  CHECK_MPI(PMPI_Comm_rank(MPI_COMM_WORLD, &rank));
  CHECK(rank_queries == 1, "PMPI_Comm_rank went through the wrapper");
  CHECK_MPI(MPI_Finalize());
  printf("profiling interface: ok\n");
  return 0;
}

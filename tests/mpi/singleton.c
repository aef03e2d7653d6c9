/* A program started without ftrun is rank 0 of 1. It checks the environment calls on the way
 * (initialized/finalized, thread level, versions, clocks, host name) and exchanges messages with
 * itself on MPI_COMM_WORLD and MPI_COMM_SELF. */
#include <string.h>

#include "check.h"

int main(int argc, char **argv) {
  int flag = -1;
  CHECK_MPI(MPI_Initialized(&flag));
  CHECK(flag == 0, "MPI_Initialized before MPI_Init");
  int version = 0;
  int subversion = 0;
  CHECK_MPI(MPI_Get_version(&version, &subversion)); /* allowed before MPI_Init */
  CHECK(version == 3 && subversion == 1, "MPI_Get_version: %d.%d", version, subversion);
  char library[MPI_MAX_LIBRARY_VERSION_STRING];
  int len = 0;
  CHECK_MPI(MPI_Get_library_version(library, &len));
  CHECK(len > 0 && strncmp(library, "ftmpi ", 6) == 0, "MPI_Get_library_version: '%s'", library);

  int provided = -1;
  CHECK_MPI(MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided));
  CHECK(provided == MPI_THREAD_MULTIPLE, "MPI_Init_thread provided %d", provided);
  CHECK_MPI(MPI_Query_thread(&provided));
  CHECK(provided == MPI_THREAD_MULTIPLE, "MPI_Query_thread: %d", provided);
  CHECK_MPI(MPI_Is_thread_main(&flag));
  CHECK(flag == 1, "MPI_Is_thread_main on the main thread");
  CHECK_MPI(MPI_Initialized(&flag));
  CHECK(flag == 1, "MPI_Initialized after MPI_Init");

  int rank = -1;
  int size = -1;
  CHECK_MPI(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
  CHECK_MPI(MPI_Comm_size(MPI_COMM_WORLD, &size));
  CHECK(rank == 0 && size == 1, "singleton is rank %d of %d", rank, size);
  CHECK_MPI(MPI_Comm_rank(MPI_COMM_SELF, &rank));
  CHECK_MPI(MPI_Comm_size(MPI_COMM_SELF, &size));
  CHECK(rank == 0 && size == 1, "MPI_COMM_SELF: rank %d of %d", rank, size);

  char name[MPI_MAX_PROCESSOR_NAME];
  CHECK_MPI(MPI_Get_processor_name(name, &len));
  CHECK(len > 0 && (int)strlen(name) == len, "MPI_Get_processor_name: '%s' (%d)", name, len);
  const double start = MPI_Wtime();
  CHECK(MPI_Wtick() > 0 && MPI_Wtick() < 1, "MPI_Wtick: %g", MPI_Wtick());

  /* Messages to oneself, on both communicators, small and large. */
  static char out[1 << 20];
  static char in[1 << 20];
  for (size_t i = 0; i < sizeof out; ++i) out[i] = (char)(i * 7);
  MPI_Comm comms[2] = {MPI_COMM_WORLD, MPI_COMM_SELF};
  for (int c = 0; c < 2; ++c) {
    for (int bytes = 1; bytes <= (int)sizeof out; bytes *= 16) {
      MPI_Request requests[2];
      MPI_Status statuses[2];
      memset(in, 0, sizeof in);
      CHECK_MPI(MPI_Irecv(in, bytes, MPI_CHAR, MPI_ANY_SOURCE, MPI_ANY_TAG, comms[c], &requests[0]));
      CHECK_MPI(MPI_Isend(out, bytes, MPI_CHAR, 0, bytes % 1000, comms[c], &requests[1]));
      CHECK_MPI(MPI_Waitall(2, requests, statuses));
      int count = -1;
      CHECK_MPI(MPI_Get_count(&statuses[0], MPI_CHAR, &count));
      CHECK(count == bytes && statuses[0].MPI_SOURCE == 0 && statuses[0].MPI_TAG == bytes % 1000,
            "self message of %d bytes: count %d source %d tag %d", bytes, count, statuses[0].MPI_SOURCE,
            statuses[0].MPI_TAG);
      CHECK(memcmp(in, out, (size_t)bytes) == 0, "self message of %d bytes corrupted", bytes);
    }
  }
  int value = 3;
  int back = 0;
  CHECK_MPI(MPI_Sendrecv(&value, 1, MPI_INT, 0, 9, &back, 1, MPI_INT, 0, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
  CHECK(back == 3, "MPI_Sendrecv with oneself: %d", back);
  CHECK(MPI_Wtime() >= start, "MPI_Wtime went backwards");

  CHECK_MPI(MPI_Finalized(&flag));
  CHECK(flag == 0, "MPI_Finalized before MPI_Finalize");
  CHECK_MPI(MPI_Finalize());
  CHECK_MPI(MPI_Finalized(&flag));
  CHECK(flag == 1, "MPI_Finalized after MPI_Finalize");
  CHECK_MPI(MPI_Initialized(&flag));
  CHECK(flag == 1, "MPI_Initialized after MPI_Finalize");
  printf("singleton: ok\n");
  return 0;
}

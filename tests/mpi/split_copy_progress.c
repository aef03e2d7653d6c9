/* A large message over shared memory whose sender computes between MPI_Isend and MPI_Wait: the receive
 * must complete while the sender makes no MPI call. A split copy would need the sender's help for its
 * second half, so the receiver splits only while the sender waits in the library; here it reads the
 * whole message itself. Rank 0 (the sender) computes, that is, watches for a file that rank 1 creates
 * once its MPI_Recv returned, without calling MPI, for up to 60 s; if the receive depended on rank 0,
 * the file would never come and the test fails at that deadline. Then the same with rank 0 waiting in
 * MPI_Wait, where the copy is split (engine.split_copies, read through MPI_T). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "engine_counter.h"

enum { kBytes = 4 << 20 };

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void fill(unsigned char *buf, int salt) {
  for (int i = 0; i < kBytes; ++i) buf[i] = (unsigned char)(i * 31 + salt + (i >> 11));
}

static void verify(const unsigned char *buf, int salt) {
  for (int i = 0; i < kBytes; ++i) {
    CHECK(buf[i] == (unsigned char)(i * 31 + salt + (i >> 11)), "byte %d differs", i);
  }
}

static EngineCounter splits;

static unsigned long long split_copies(void) { return engine_counter_read(&splits); }

int main(int argc, char **argv) {
  int rank = 0, size = 0;
  CHECK_MPI(MPI_Init(&argc, &argv));
  CHECK_MPI(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
  CHECK_MPI(MPI_Comm_size(MPI_COMM_WORLD, &size));
  CHECK(size == 2, "needs exactly 2 ranks, got %d", size);
  splits = engine_counter_open("engine.split_copies");
  unsigned char *buf = malloc(kBytes);
  CHECK(buf != NULL, "out of memory");
  char dir[] = "/tmp/ftmpi-split-XXXXXX";
  if (rank == 0) CHECK(mkdtemp(dir) != NULL, "mkdtemp");
  CHECK_MPI(MPI_Bcast(dir, (int)sizeof dir, MPI_CHAR, 0, MPI_COMM_WORLD));
  char done[sizeof dir + 16];
  snprintf(done, sizeof done, "%s/received", dir);

  /* 1. The sender computes: the receiver reads the whole message itself. */
  if (rank == 0) {
    fill(buf, 1);
    MPI_Request request;
    CHECK_MPI(MPI_Isend(buf, kBytes, MPI_BYTE, 1, 3, MPI_COMM_WORLD, &request));
    struct stat st;
    const double deadline = now() + 60;
    while (stat(done, &st) != 0) CHECK(now() < deadline, "rank 1's receive did not complete in 60 s without rank 0's help");
    CHECK_MPI(MPI_Wait(&request, MPI_STATUS_IGNORE));
  } else {
    memset(buf, 0, kBytes);
    const unsigned long long before = split_copies();
    CHECK_MPI(MPI_Recv(buf, kBytes, MPI_BYTE, 0, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    FILE *f = fopen(done, "w");
    CHECK(f != NULL, "cannot create %s", done);
    fclose(f);
    verify(buf, 1);
    CHECK(split_copies() == before, "a sender that computes was asked to write its half");
  }
  CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));

  /* 2. The sender waits in MPI_Send: once its RTS has been sent it polls, and the copy is split.
   * Rank 1 posts its receive only after a message that rank 0 sends right before, so rank 0 is already
   * waiting when rank 1 matches (or rank 1's receive finds the RTS waiting while rank 0 polls). */
  if (rank == 0) {
    fill(buf, 2);
    CHECK_MPI(MPI_Send(buf, kBytes, MPI_BYTE, 1, 4, MPI_COMM_WORLD));
  } else {
    memset(buf, 0, kBytes);
    const unsigned long long before = split_copies();
    CHECK_MPI(MPI_Recv(buf, kBytes, MPI_BYTE, 0, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    verify(buf, 2);
    /* Where Yama forbids reading a sibling the message is piped, split or not. */
    if (single_copy_permitted()) CHECK(split_copies() == before + 1, "the copy to a waiting sender was not split");
  }
  CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
  if (rank == 0) {
    unlink(done);
    rmdir(dir);
    printf("split_copy_progress: passed\n");
  }
  free(buf);
  engine_counter_close(&splits);
  CHECK_MPI(MPI_Finalize());
  return 0;
}

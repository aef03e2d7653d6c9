/* A window of single copies over shared memory whose RTSes reach the receiver together, as a bandwidth
 * loop's do: rank 1 reads them in one system call (process_vm_readv with a block per message,
 * engine.shm.gather_max), each message into its own receive, intact. So that they really arrive
 * together, rank 1 posts its receives, tells rank 0, and waits outside MPI (on a named FIFO, which
 * rank 0 writes a byte to once it has started every send) before it polls; its first poll then finds them all.
 * Messages of 64 KiB to just under 128 KiB (every one a single copy, none split), 8 per window (under
 * 1 MiB: one call). Then the same sends received after they arrived (unexpected): each read at once,
 * none gathered. engine.single_copies_gathered is read through MPI_T.
 *
 * Usage: mpi_single_copy_window [gathered|alone|any]: what the run's engine.shm.gather_max should give
 * (default gathered); any: a progress thread polls while the sends start, so how many arrive together
 * varies, and only the bytes are checked (the threaded poll's gathering, under ThreadSanitizer in CI). Where Yama forbids reading a sibling (ptrace_scope 2 or 3) the messages are piped
 * and only their bytes are checked. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "engine_counter.h"

enum { kWindow = 8, kRounds = 20, kPostedTag = 30000, kSentTag = 30001 };

static const int kSizes[4] = {65536, 98304, 100003, 131071};

static int size_of(int i) { return kSizes[i % 4]; }

static unsigned char byte_of(int round, int message, int i) {
  return (unsigned char)(i * 13 + message * 7 + round + (i >> 10));
}

static void fill(unsigned char *buf, int round, int message) {
  for (int i = 0; i < size_of(message); ++i) buf[i] = byte_of(round, message, i);
}

static void verify(const unsigned char *buf, int round, int message) {
  for (int i = 0; i < size_of(message); ++i) {
    CHECK(buf[i] == byte_of(round, message, i), "round %d message %d (%d bytes): byte %d differs", round, message,
          size_of(message), i);
  }
}

int main(int argc, char **argv) {
  int rank = 0, size = 0;
  CHECK_MPI(MPI_Init(&argc, &argv));
  CHECK_MPI(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
  CHECK_MPI(MPI_Comm_size(MPI_COMM_WORLD, &size));
  CHECK(size == 2, "needs exactly 2 ranks, got %d", size);
  const int expect_gathered = argc < 2 || strcmp(argv[1], "alone") != 0;
  const int counted = argc < 2 || strcmp(argv[1], "any") != 0;
  EngineCounter counter = engine_counter_open("engine.single_copies_gathered");
  const int single_copies = single_copy_permitted() && counted;

  char dir[] = "/tmp/ftmpi-window-XXXXXX";
  if (rank == 0) CHECK(mkdtemp(dir) != NULL, "mkdtemp");
  CHECK_MPI(MPI_Bcast(dir, (int)sizeof dir, MPI_CHAR, 0, MPI_COMM_WORLD));
  char fifo[sizeof dir + 8];
  snprintf(fifo, sizeof fifo, "%s/go", dir);
  if (rank == 0) CHECK(mkfifo(fifo, 0600) == 0, "mkfifo %s", fifo);
  CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
  /* Each open waits for the other end's; once both are open the name can go, so nothing is left behind
   * whatever happens later. */
  const int fd = open(fifo, rank == 0 ? O_WRONLY : O_RDONLY);
  CHECK(fd >= 0, "open %s", fifo);
  CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
  if (rank == 0) {
    unlink(fifo);
    rmdir(dir);
  }

  unsigned char *buffers[kWindow];
  MPI_Request requests[kWindow];
  for (int m = 0; m < kWindow; ++m) {
    buffers[m] = malloc((size_t)size_of(m));
    CHECK(buffers[m] != NULL, "out of memory");
  }

  /* Receives posted first; the RTSes reach a receiver that is not polling. */
  for (int round = 0; round < kRounds; ++round) {
    if (rank == 0) {
      CHECK_MPI(MPI_Recv(NULL, 0, MPI_BYTE, 1, kPostedTag, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
      for (int m = 0; m < kWindow; ++m) {
        fill(buffers[m], round, m);
        CHECK_MPI(MPI_Isend(buffers[m], size_of(m), MPI_BYTE, 1, m, MPI_COMM_WORLD, &requests[m]));
      }
      CHECK(write(fd, "g", 1) == 1, "write %s", fifo);
      CHECK_MPI(MPI_Waitall(kWindow, requests, MPI_STATUSES_IGNORE));
    } else {
      for (int m = 0; m < kWindow; ++m) {
        memset(buffers[m], 0, (size_t)size_of(m));
        CHECK_MPI(MPI_Irecv(buffers[m], size_of(m), MPI_BYTE, 0, m, MPI_COMM_WORLD, &requests[m]));
      }
      CHECK_MPI(MPI_Send(NULL, 0, MPI_BYTE, 0, kPostedTag, MPI_COMM_WORLD));
      char go = 0;
      CHECK(read(fd, &go, 1) == 1 && go == 'g', "read %s", fifo);
      CHECK_MPI(MPI_Waitall(kWindow, requests, MPI_STATUSES_IGNORE));
      for (int m = 0; m < kWindow; ++m) verify(buffers[m], round, m);
    }
  }
  if (rank == 1 && single_copies) {
    const unsigned long long expected = expect_gathered ? (unsigned long long)kRounds * kWindow : 0;
    const unsigned long long got = engine_counter_read(&counter);
    CHECK(got == expected, "single copies gathered: %llu, expected %llu", got, expected);
  }

  /* The sends arrive before their receives: each receive reads its message at once, alone. */
  const unsigned long long before = engine_counter_read(&counter);
  for (int round = 0; round < 4; ++round) {
    if (rank == 0) {
      for (int m = 0; m < kWindow; ++m) {
        fill(buffers[m], kRounds + round, m);
        CHECK_MPI(MPI_Isend(buffers[m], size_of(m), MPI_BYTE, 1, m, MPI_COMM_WORLD, &requests[m]));
      }
      CHECK_MPI(MPI_Send(NULL, 0, MPI_BYTE, 1, kSentTag, MPI_COMM_WORLD));
      CHECK_MPI(MPI_Waitall(kWindow, requests, MPI_STATUSES_IGNORE));
    } else {
      CHECK_MPI(MPI_Recv(NULL, 0, MPI_BYTE, 0, kSentTag, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
      for (int m = 0; m < kWindow; ++m) {
        memset(buffers[m], 0, (size_t)size_of(m));
        CHECK_MPI(MPI_Irecv(buffers[m], size_of(m), MPI_BYTE, 0, m, MPI_COMM_WORLD, &requests[m]));
      }
      CHECK_MPI(MPI_Waitall(kWindow, requests, MPI_STATUSES_IGNORE));
      for (int m = 0; m < kWindow; ++m) verify(buffers[m], kRounds + round, m);
    }
  }
  if (rank == 1 && counted) {
    const unsigned long long after = engine_counter_read(&counter);
    CHECK(after == before, "receives posted late gathered %llu reads", after - before);
  }

  close(fd);
  for (int m = 0; m < kWindow; ++m) free(buffers[m]);
  engine_counter_close(&counter);
  CHECK_MPI(MPI_Finalize());
  if (rank == 1) printf("single_copy_window: %d windows of %d single copies intact\n", kRounds + 4, kWindow);
  return 0;
}

/* Rank 0 and rank 1 exchange messages of every size 0, 1, 2, 4, ... 16 MB and an odd size between each
 * two powers of two; every byte is checked on arrival, as is the status. Each direction and size has its
 * own pattern, so a stale or misplaced buffer cannot pass. */
#include <string.h>

#include "check.h"

enum { kMaxSize = 16 << 20 };

static unsigned char pattern(size_t i, int size, int direction) {
  return (unsigned char)(i * 131u + (unsigned)size * 7u + (unsigned)direction * 29u + (i >> 8));
}

static void fill(unsigned char *buf, int size, int direction) {
  for (int i = 0; i < size; ++i) buf[i] = pattern((size_t)i, size, direction);
}

static void verify(const unsigned char *buf, int size, int direction, const MPI_Status *status, int source) {
  int count = -1;
  CHECK_MPI(MPI_Get_count(status, MPI_BYTE, &count));
  CHECK(count == size, "size %d: received %d bytes", size, count);
  CHECK(status->MPI_SOURCE == source && status->MPI_TAG == size % 1000,
        "size %d: status source %d tag %d", size, status->MPI_SOURCE, status->MPI_TAG);
  for (int i = 0; i < size; ++i) {
    CHECK(buf[i] == pattern((size_t)i, size, direction), "size %d direction %d: byte %d is %u, expected %u", size,
          direction, i, buf[i], pattern((size_t)i, size, direction));
  }
}

static void exchange(int rank, int size, unsigned char *out, unsigned char *in) {
  MPI_Status status;
  const int tag = size % 1000;
  memset(in, 0xee, (size_t)size + 1);
  if (rank == 0) {
    fill(out, size, 0);
    CHECK_MPI(MPI_Send(out, size, MPI_BYTE, 1, tag, MPI_COMM_WORLD));
    CHECK_MPI(MPI_Recv(in, size, MPI_BYTE, 1, tag, MPI_COMM_WORLD, &status));
    verify(in, size, 1, &status, 1);
  } else {
    CHECK_MPI(MPI_Recv(in, size, MPI_BYTE, 0, tag, MPI_COMM_WORLD, &status));
    verify(in, size, 0, &status, 0);
    fill(out, size, 1);
    CHECK_MPI(MPI_Send(out, size, MPI_BYTE, 0, tag, MPI_COMM_WORLD));
  }
  CHECK(in[size] == 0xee, "size %d: the byte past the message was overwritten", size);
}

int main(int argc, char **argv) {
  int rank = 0;
  int ranks = 0;
  CHECK_MPI(MPI_Init(&argc, &argv));
  CHECK_MPI(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
  CHECK_MPI(MPI_Comm_size(MPI_COMM_WORLD, &ranks));
  CHECK(ranks == 2, "needs exactly 2 ranks, got %d", ranks);
  unsigned char *out = malloc(kMaxSize + 1);
  unsigned char *in = malloc(kMaxSize + 1);
  CHECK(out != NULL && in != NULL, "out of memory");

  int sizes = 0;
  exchange(rank, 0, out, in);
  ++sizes;
  for (int size = 1; size <= kMaxSize; size *= 2) {
    exchange(rank, size, out, in);
    ++sizes;
    if (size >= 2 && size < kMaxSize) {
      exchange(rank, size + size / 2 + 1, out, in); /* odd, between size and 2 * size */
      ++sizes;
    }
  }

  free(out);
  free(in);
  CHECK_MPI(MPI_Finalize());
  if (rank == 0) printf("ping-pong: %d sizes up to %d bytes: ok\n", sizes, kMaxSize);
  return 0;
}

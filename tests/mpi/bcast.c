/* MPI_Bcast under every coll.bcast.algorithm (CTest runs it with the shared-memory broadcast forced,
 * and with auto): many consecutive broadcasts (more than the region has channels, so that the delayed
 * synchronisation and the ring's wrap-around run), sizes from 0 to several channels' worth and a few
 * large ones, every root, a derived datatype, interleaved with MPI_Ibcast and point-to-point traffic,
 * on MPI_COMM_WORLD, a duplicate and a split (each has its own region), which are freed again. Every
 * rank checks every byte. Runs at any number of ranks; optional argument: rounds (default 3). */
#include <stdint.h>
#include <string.h>

#include "check.h"

static int rank;
static int size;

static unsigned char byte_of(int round, int root, size_t i) { return (unsigned char)(round * 131 + root * 17 + i * 7 + (i >> 8)); }

static const size_t kSizes[] = {0, 1, 3, 8, 64, 100, 1000, 4095, 4096, 4097, 16384, 16385, 40000, 65536, 100003, 300000};
enum { kNumSizes = sizeof kSizes / sizeof kSizes[0] };

static void check_bytes(const unsigned char *buf, size_t n, int round, int root, const char *where) {
  for (size_t i = 0; i < n; ++i) {
    CHECK(buf[i] == byte_of(round, root, i), "%s: round %d root %d size %zu: byte %zu is %u, not %u", where, round,
          root, n, i, buf[i], byte_of(round, root, i));
  }
}

static void broadcasts(MPI_Comm comm, int rounds, const char *where) {
  int me = 0;
  int n = 0;
  MPI_Comm_rank(comm, &me);
  MPI_Comm_size(comm, &n);
  unsigned char *buf = malloc(300000);
  CHECK(buf != NULL, "out of memory");
  for (int round = 0; round < rounds; ++round) {
    for (int k = 0; k < kNumSizes; ++k) {
      const size_t bytes = kSizes[k];
      const int root = (round + k) % n;
      for (size_t i = 0; i < bytes; ++i) buf[i] = me == root ? byte_of(round, root, i) : 0xee;
      CHECK_MPI(MPI_Bcast(buf, (int)bytes, MPI_BYTE, root, comm));
      check_bytes(buf, bytes, round, root, where);
      /* The root reuses its buffer at once: the broadcast must not read it any more. */
      if (me == root) memset(buf, 0xdd, bytes);
    }
    /* Many small ones in a row, every root in turn. */
    for (int i = 0; i < 100; ++i) {
      int value = me == i % n ? round * 1000 + i : -1;
      CHECK_MPI(MPI_Bcast(&value, 1, MPI_INT, i % n, comm));
      CHECK(value == round * 1000 + i, "%s: small broadcast %d: %d", where, i, value);
    }
    /* A nonblocking broadcast between blocking ones, and point-to-point beside them. */
    int token = me == 0 ? 4242 + round : 0;
    MPI_Request request;
    CHECK_MPI(MPI_Ibcast(&token, 1, MPI_INT, 0, comm, &request));
    int value = me == n - 1 ? 77 : 0;
    CHECK_MPI(MPI_Bcast(&value, 1, MPI_INT, n - 1, comm));
    CHECK(value == 77, "%s: broadcast beside ibcast: %d", where, value);
    CHECK_MPI(MPI_Wait(&request, MPI_STATUS_IGNORE));
    CHECK(token == 4242 + round, "%s: ibcast: %d", where, token);
    const int right = (me + 1) % n;
    const int left = (me + n - 1) % n;
    int got = -1;
    CHECK_MPI(MPI_Sendrecv(&me, 1, MPI_INT, right, 5, &got, 1, MPI_INT, left, 5, comm, MPI_STATUS_IGNORE));
    CHECK(got == left, "%s: ring %d", where, got);
    /* A strided datatype: every other int of 2000. */
    MPI_Datatype every_other;
    CHECK_MPI(MPI_Type_vector(1000, 1, 2, MPI_INT, &every_other));
    CHECK_MPI(MPI_Type_commit(&every_other));
    int *ints = malloc(2000 * sizeof(int));
    CHECK(ints != NULL, "out of memory");
    const int root = round % n;
    for (int i = 0; i < 2000; ++i) ints[i] = me == root ? i * 3 + round : -1;
    CHECK_MPI(MPI_Bcast(ints, 1, every_other, root, comm));
    for (int i = 0; i < 2000; ++i) {
      const int expected = i % 2 == 0 || me == root ? i * 3 + round : -1;
      CHECK(ints[i] == expected, "%s: vector broadcast [%d] = %d", where, i, ints[i]);
    }
    free(ints);
    CHECK_MPI(MPI_Type_free(&every_other));
  }
  free(buf);
}

int main(int argc, char **argv) {
  CHECK_MPI(MPI_Init(&argc, &argv));
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int rounds = argc > 1 ? atoi(argv[1]) : 3;
  broadcasts(MPI_COMM_WORLD, rounds, "world");
  MPI_Comm dup;
  CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
  broadcasts(dup, 1, "dup");
  MPI_Comm half;
  CHECK_MPI(MPI_Comm_split(MPI_COMM_WORLD, rank % 2, size - rank, &half));
  broadcasts(half, 1, "split");
  CHECK_MPI(MPI_Comm_free(&half));
  broadcasts(dup, 1, "dup again");
  CHECK_MPI(MPI_Comm_free(&dup));
  broadcasts(MPI_COMM_WORLD, 1, "world again");
  CHECK_MPI(MPI_Finalize());
  return 0;
}

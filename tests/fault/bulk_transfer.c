/* Moves a large volume between rank pairs with every byte checked, for fault drills and fault tests:
 * rank 2i sends to rank 2i+1 `-m` megabytes in messages of `-s` bytes (and a small reply every
 * `-w` messages, so the sender cannot run far ahead), each message filled from its own seed. It prints
 * "progress N%" lines (flushed) that a test driver waits for to inject a fault mid-transfer.
 *
 * With `-u FILE` a sender goes on past `-m` megabytes until FILE exists, so that a test driver can keep
 * the work running until the events it waits for (a rail down, then back up) have happened, however
 * fast or slow the machine; the last message's tag tells the receiver.
 *
 * The receiver also measures the longest stall: the most time between two messages completing (what a
 * rail failure costs the application), printed as "longest stall: X ms at message N". For ftinject's
 * drills it prints "ftinject: corrupt_bytes=N" (bytes that differ from what was sent) and
 * "ftinject: longest_stall_us=N" (docs/ftinject.md).
 *
 *   bulk_transfer [-m MB] [-s message bytes] [-w window] [-u FILE]   exit 0: every byte arrived intact
 */
#define _POSIX_C_SOURCE 200809L /* getopt */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static uint64_t next(uint64_t* x) {
  *x ^= *x << 13;
  *x ^= *x >> 7;
  *x ^= *x << 17;
  return *x;
}

static void fill(unsigned char* buf, size_t n, uint64_t seed) {
  uint64_t x = seed * 0x9E3779B97F4A7C15ULL + 1;
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t v = next(&x);
    memcpy(buf + i, &v, 8);
  }
  for (; i < n; ++i) buf[i] = (unsigned char)next(&x);
}

int main(int argc, char** argv) {
  long megabytes = 256, message = 1 << 20, window = 8;
  const char* until = NULL;
  int opt;
  while ((opt = getopt(argc, argv, "m:s:w:u:")) != -1) {
    switch (opt) {
      case 'm': megabytes = atol(optarg); break;
      case 's': message = atol(optarg); break;
      case 'w': window = atol(optarg); break;
      case 'u': until = optarg; break;
      default:
        fprintf(stderr, "usage: %s [-m MB] [-s message bytes] [-w window] [-u FILE]\n", argv[0]);
        return 2;
    }
  }
  if (megabytes <= 0 || message <= 0 || window <= 0) {
    fprintf(stderr, "bulk_transfer: -m, -s and -w must be positive\n");
    return 2;
  }
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size % 2 != 0) {
    if (rank == 0) fprintf(stderr, "bulk_transfer: needs an even number of ranks\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  const long count = (megabytes * 1048576L + message - 1) / message;
  unsigned char* buf = malloc((size_t)message);
  unsigned char* expect = malloc((size_t)message);
  if (buf == NULL || expect == NULL) MPI_Abort(MPI_COMM_WORLD, 3);
  const int peer = rank ^ 1;
  const int sender = rank % 2 == 0;
  long bad = 0, reported = -1, stall_at = 0, sent = 0, bad_bytes = 0;
  double last = MPI_Wtime(), stall = 0;
  /* Tags: the message's index modulo kLastTag, plus kLastTag on the last one; replies use kReplyTag. */
  enum { kLastTag = 16384, kReplyTag = 32768 };
  for (long i = 0, final = 0; !final; ++i) {
    const uint64_t seed = (uint64_t)i * 1000003u + (uint64_t)(rank / 2);
    if (sender) {
      final = i + 1 >= count && (until == NULL || access(until, F_OK) == 0);
      fill(buf, (size_t)message, seed);
      MPI_Send(buf, (int)message, MPI_BYTE, peer, (int)(i % kLastTag) + (final ? kLastTag : 0), MPI_COMM_WORLD);
    } else {
      MPI_Status status;
      memset(buf, 0, (size_t)message);
      MPI_Recv(buf, (int)message, MPI_BYTE, peer, MPI_ANY_TAG, MPI_COMM_WORLD, &status);
      if (status.MPI_TAG % kLastTag != (int)(i % kLastTag) || status.MPI_TAG >= kReplyTag) {
        fprintf(stderr, "rank %d: message %ld arrived with tag %d\n", rank, i, status.MPI_TAG);
        MPI_Abort(MPI_COMM_WORLD, 4);
      }
      final = status.MPI_TAG >= kLastTag;
      int got = 0;
      MPI_Get_count(&status, MPI_BYTE, &got);
      fill(expect, (size_t)message, seed);
      const double now = MPI_Wtime();
      if (i > 0 && now - last > stall) {
        stall = now - last;
        stall_at = i;
      }
      last = now;
      if (got != message || memcmp(buf, expect, (size_t)message) != 0) {
        if (bad++ < 5) fprintf(stderr, "rank %d: message %ld (%d bytes) differs\n", rank, i, got);
        for (long k = 0; k < message; ++k) bad_bytes += buf[k] != expect[k];
      }
    }
    sent = i + 1;
    if ((i + 1) % window == 0) {  // a reply: the sender waits for the receiver now and then
      int token = (int)i;
      if (sender) {
        MPI_Recv(&token, 1, MPI_INT, peer, kReplyTag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      } else {
        MPI_Send(&token, 1, MPI_INT, peer, kReplyTag, MPI_COMM_WORLD);
      }
    }
    const long percent = (i + 1 < count ? i + 1 : count) * 100 / count;
    if (rank == 1 && percent / 5 != reported) {
      reported = percent / 5;
      printf("progress %ld%%\n", percent);
      fflush(stdout);
    }
  }
  /* Collectives come later: each receiver judges its own pair, and a rank's exit status fails the job. */
  if (!sender) {
    printf("longest stall: %.1f ms at message %ld\n", stall * 1e3, stall_at);
    printf("ftinject: corrupt_bytes=%ld\nftinject: longest_stall_us=%.0f\n", bad_bytes, stall * 1e6);
    if (bad == 0) {
      printf("bulk transfer: ranks %d->%d: %ld MB in %ld messages, every byte intact\n", peer, rank,
             sent * message / 1048576, sent);
    } else {
      printf("bulk transfer: ranks %d->%d: %ld of %ld messages differ\n", peer, rank, bad, sent);
    }
    fflush(stdout);
  }
  free(buf);
  free(expect);
  MPI_Finalize();
  return bad == 0 ? 0 : 1;
}

/* A flood of messages nobody receives yet (docs/security.md, "bounded memory").
 *
 * Rank 0 starts MESSAGES nonblocking sends of BYTES each to rank 1, then a zero-byte "all started"
 * message. Rank 1 receives nothing but that until it has arrived, so by then every earlier message has
 * reached it and waits unexpected. Only then does it receive them, in order, and check every byte.
 * Each rank's peak resident memory must grow by at most LIMIT_MB over what it held after MPI_Init (a
 * sanitizer build starts far higher than a release one, but grows alike): without receiver-granted eager
 * credits, the receiver buffered every eager message and the sender kept a copy of each for resending
 * (16,384 messages of 16 KB: both ranks grew by about 260 MB over UDP, and by 80 and 135 MB over shared
 * memory).
 *
 * Usage: mpi_memory_flood MESSAGES BYTES LIMIT_MB
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { kStride = 64, kFloodTag = 1, kAllStartedTag = 2 };

/* Message i is the bytes [i * kStride, i * kStride + bytes) of one pattern buffer: every message
 * differs, and the sender needs no buffer per message (the sends share it, read-only). */
static unsigned char pattern_byte(size_t at) { return (unsigned char)((at * 2654435761u) >> 13); }

/* A field of /proc/self/status in kB: "VmHWM:" (peak resident) or "VmRSS:". */
static long status_kb(const char* field) {
  FILE* f = fopen("/proc/self/status", "r");
  char line[256];
  long kb = -1;
  if (f == NULL) return -1;
  while (fgets(line, sizeof line, f) != NULL) {
    if (strncmp(line, field, strlen(field)) == 0) kb = strtol(line + strlen(field), NULL, 10);
  }
  fclose(f);
  return kb;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Barrier(MPI_COMM_WORLD);
  const long start_kb = status_kb("VmRSS:");
  if (argc != 4 || size < 2) {
    if (rank == 0) fprintf(stderr, "usage: mpi_memory_flood MESSAGES BYTES LIMIT_MB (2 ranks or more)\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  const int messages = atoi(argv[1]);
  const int bytes = atoi(argv[2]);
  const long limit_mb = atol(argv[3]);
  const size_t pattern_size = (size_t)messages * kStride + (size_t)bytes;
  int failures = 0;

  if (rank == 0) {
    unsigned char* pattern = malloc(pattern_size);
    MPI_Request* requests = malloc(sizeof(MPI_Request) * (size_t)messages);
    for (size_t i = 0; i < pattern_size; ++i) pattern[i] = pattern_byte(i);
    for (int i = 0; i < messages; ++i) {
      MPI_Isend(pattern + (size_t)i * kStride, bytes, MPI_BYTE, 1, kFloodTag, MPI_COMM_WORLD, &requests[i]);
    }
    MPI_Send(NULL, 0, MPI_BYTE, 1, kAllStartedTag, MPI_COMM_WORLD);
    MPI_Waitall(messages, requests, MPI_STATUSES_IGNORE);
    free(requests);
    free(pattern);
  } else if (rank == 1) {
    MPI_Recv(NULL, 0, MPI_BYTE, 0, kAllStartedTag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    printf("rank 1: %d messages of %d bytes waiting, resident %ld MB\n", messages, bytes,
           status_kb("VmRSS:") / 1024);
    unsigned char* received = malloc((size_t)bytes + 1);
    for (int i = 0; i < messages; ++i) {
      MPI_Status status;
      memset(received, 0, (size_t)bytes);
      MPI_Recv(received, bytes, MPI_BYTE, 0, kFloodTag, MPI_COMM_WORLD, &status);
      int count = -1;
      MPI_Get_count(&status, MPI_BYTE, &count);
      int bad = count != bytes;
      for (int b = 0; b < bytes && !bad; ++b) bad = received[b] != pattern_byte((size_t)i * kStride + (size_t)b);
      if (bad && failures++ < 5) fprintf(stderr, "FAIL: message %d arrived wrong (%d bytes)\n", i, count);
    }
    free(received);
  }

  const long peak_kb = status_kb("VmHWM:");
  const long growth_mb = (peak_kb - start_kb) / 1024;
  if (rank < 2) {
    printf("rank %d: resident %ld MB after MPI_Init, peak %ld MB: grew %ld MB (limit %ld MB)\n", rank,
           start_kb / 1024, peak_kb / 1024, growth_mb, limit_mb);
    if (start_kb < 0 || peak_kb < 0 || growth_mb > limit_mb) {
      fprintf(stderr, "FAIL: rank %d grew by %ld MB resident during the flood, above %ld MB\n", rank, growth_mb,
              limit_mb);
      ++failures;
    }
  }
  int all_failures = 0;
  MPI_Allreduce(&failures, &all_failures, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0 && all_failures == 0) printf("memory flood: %d messages of %d bytes, every byte intact\n", messages, bytes);
  MPI_Finalize();
  return all_failures == 0 ? 0 : 1;
}

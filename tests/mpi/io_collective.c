/* Two-phase collective I/O (docs/mpi.md, "MPI-IO"): ranks write interleaved small blocks of a large file
 * with MPI_File_write_all through a strided view, and the file system sees a few large contiguous writes
 * (the library's counters, from MPI_File_get_info, say how many pwrite calls each rank issued and the
 * largest); the file is then read back with MPI_File_read_at_all, by another number of ranks with a
 * contiguous decomposition, and every byte checked.
 *   io_collective write|read|read-delete|both <path> <megabytes> <block bytes> */
#include <stdint.h>

#include "io_common.h"

static inline unsigned char pattern(uint64_t offset) {
  return (unsigned char)((offset >> 12) * 131u + offset * 7u + (offset >> 20));
}

static void write_file(const char *path, long long total, int block) {
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  CHECK(total % ((long long)block * size) == 0, "the file must be whole rounds of blocks");
  const long long mine = total / size;
  unsigned char *data = malloc((size_t)mine);
  CHECK(data != NULL, "malloc");
  /* This rank's blocks are rank, rank + size, ... */
  for (long long i = 0; i < mine; ++i) {
    const long long b = i / block;
    data[i] = pattern((uint64_t)((b * size + rank) * block + i % block));
  }
  MPI_File fh;
  CHECK_MPI(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL, &fh));
  MPI_Datatype one_block, tile;
  CHECK_MPI(MPI_Type_contiguous(block, MPI_BYTE, &one_block));
  CHECK_MPI(MPI_Type_create_resized(one_block, 0, (MPI_Aint)block * size, &tile));
  CHECK_MPI(MPI_Type_commit(&tile));
  CHECK_MPI(MPI_File_set_view(fh, (MPI_Offset)rank * block, MPI_BYTE, tile, "native", MPI_INFO_NULL));
  MPI_Status status;
  const double start = MPI_Wtime();
  CHECK_MPI(MPI_File_write_all(fh, data, (int)mine, MPI_BYTE, &status));
  const double seconds = MPI_Wtime() - start;
  int count = 0;
  CHECK_MPI(MPI_Get_count(&status, MPI_BYTE, &count));
  CHECK(count == mine, "write_all wrote %d bytes of %lld", count, mine);
  /* What the file system saw: counted by the library per rank. */
  long long calls = io_info_number(fh, "ftmpi_io_write_calls");
  long long largest = io_info_number(fh, "ftmpi_io_largest_write");
  const long long window = io_info_number(fh, "cb_buffer_size");
  const long long aggregators = io_info_number(fh, "cb_nodes");
  long long total_calls = 0, max_largest = 0;
  CHECK_MPI(MPI_Allreduce(&calls, &total_calls, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD));
  CHECK_MPI(MPI_Allreduce(&largest, &max_largest, 1, MPI_LONG_LONG, MPI_MAX, MPI_COMM_WORLD));
  const long long blocks = total / block;
  /* Each aggregator's file domain takes ceil(domain / window) writes at most. */
  const long long domain = (total + aggregators - 1) / aggregators;
  const long long bound = aggregators * ((domain + window - 1) / window);
  const long long expected_largest = window < domain ? window : domain;
  if (rank == 0) {
    printf("io_collective: %d ranks wrote %lld blocks of %d bytes (%lld MB) in %.2f s with %lld pwrite calls "
           "(bound %lld; the largest %lld bytes) through %lld aggregator(s)\n",
           size, blocks, block, total >> 20, seconds, total_calls, bound, max_largest, aggregators);
  }
  CHECK(total_calls <= bound, "%lld pwrite calls for %lld blocks: more than %lld", total_calls, blocks, bound);
  CHECK(max_largest >= expected_largest, "the largest write was %lld bytes, less than %lld", max_largest,
        expected_largest);
  CHECK_MPI(MPI_File_close(&fh));
  CHECK_MPI(MPI_Type_free(&tile));
  CHECK_MPI(MPI_Type_free(&one_block));
  free(data);
}

static void read_file(const char *path, long long total, int delete_after) {
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const long long chunk = (total + size - 1) / size;
  const long long first = chunk * rank;
  const long long mine = first >= total ? 0 : (first + chunk > total ? total - first : chunk);
  unsigned char *data = malloc((size_t)chunk + 1);
  CHECK(data != NULL, "malloc");
  memset(data, 0, (size_t)chunk);
  MPI_File fh;
  CHECK_MPI(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh));
  MPI_Offset file_size = 0;
  CHECK_MPI(MPI_File_get_size(fh, &file_size));
  CHECK(file_size == total, "the file has %lld bytes, not %lld", (long long)file_size, total);
  MPI_Status status;
  /* Ask for a whole chunk: the last rank's request runs past the end of the file and comes back short. */
  CHECK_MPI(MPI_File_read_at_all(fh, first, data, (int)chunk, MPI_BYTE, &status));
  int count = 0;
  CHECK_MPI(MPI_Get_count(&status, MPI_BYTE, &count));
  CHECK(count == mine, "read_at_all read %d bytes, not %lld", count, mine);
  for (long long i = 0; i < mine; ++i) {
    CHECK(data[i] == pattern((uint64_t)(first + i)), "byte %lld is %d, not %d", first + i, data[i],
          pattern((uint64_t)(first + i)));
  }
  CHECK_MPI(MPI_File_close(&fh));
  CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
  if (delete_after && rank == 0) CHECK_MPI(MPI_File_delete(path, MPI_INFO_NULL));
  if (rank == 0) printf("io_collective: %d ranks read %lld MB back, every byte as written\n", size, total >> 20);
  free(data);
}

int main(int argc, char **argv) {
  CHECK_MPI(MPI_Init(&argc, &argv));
  CHECK(argc == 5, "usage: io_collective write|read|read-delete|both <path> <megabytes> <block bytes>");
  const long long total = atoll(argv[3]) << 20;
  const int block = atoi(argv[4]);
  if (strcmp(argv[1], "write") == 0 || strcmp(argv[1], "both") == 0) write_file(argv[2], total, block);
  if (strcmp(argv[1], "read") == 0) read_file(argv[2], total, 0);
  if (strcmp(argv[1], "read-delete") == 0 || strcmp(argv[1], "both") == 0) read_file(argv[2], total, 1);
  CHECK_MPI(MPI_Finalize());
  return 0;
}

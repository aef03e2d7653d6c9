/* The shared file pointer (MPI-3.1 section 13.4.4), atomic mode and sync (13.6) at any number of ranks:
 * write_shared and iwrite_shared records all land, each once, with the pointer past them; write_ordered
 * and read_ordered place each rank's data after the ranks before it (blocking and split); seek_shared;
 * in atomic mode, ranks overwriting the same strided region concurrently leave it all from one write
 * (without atomic mode, the same program mixes the writes in most runs). */
#include "io_common.h"

#define RECORDS 6
#define TILES 2048
#define TILE_DATA 64
#define ROUNDS 10

int main(int argc, char **argv) {
  CHECK_MPI(MPI_Init(&argc, &argv));
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  io_make_dir(MPI_COMM_WORLD, "io-shared");
  char path[600];
  io_path(path, sizeof path, "shared");
  MPI_File fh;
  MPI_Status status;
  int count = 0;
  CHECK_MPI(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
  CHECK_MPI(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "native", MPI_INFO_NULL));

  /* Records of (rank, sequence) through the shared pointer, every other one nonblocking. */
  for (int s = 0; s < RECORDS; ++s) {
    int record[2] = {rank, s};
    if (s % 2 == 0) {
      CHECK_MPI(MPI_File_write_shared(fh, record, 2, MPI_INT, &status));
    } else {
      MPI_Request request;
      CHECK_MPI(MPI_File_iwrite_shared(fh, record, 2, MPI_INT, &request));
      CHECK_MPI(MPI_Wait(&request, &status));
    }
    CHECK_MPI(MPI_Get_count(&status, MPI_INT, &count));
    CHECK(count == 2, "a record is 2 ints (%d)", count);
  }
  CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
  MPI_Offset position = -1;
  CHECK_MPI(MPI_File_get_position_shared(fh, &position));
  CHECK(position == 2 * RECORDS * size, "the shared pointer is at %lld, not %d", position, 2 * RECORDS * size);
  int *records = malloc(sizeof(int) * 2 * RECORDS * (size_t)size);
  int *seen = calloc((size_t)(RECORDS * size), sizeof(int));
  CHECK(records != NULL && seen != NULL, "malloc");
  CHECK_MPI(MPI_File_read_at(fh, 0, records, 2 * RECORDS * size, MPI_INT, &status));
  for (int i = 0; i < RECORDS * size; ++i) {
    const int r = records[2 * i], s = records[2 * i + 1];
    CHECK(r >= 0 && r < size && s >= 0 && s < RECORDS, "record %d is (%d, %d)", i, r, s);
    ++seen[r * RECORDS + s];
  }
  for (int i = 0; i < RECORDS * size; ++i) CHECK(seen[i] == 1, "record (%d, %d) was written %d times", i / RECORDS, i % RECORDS, seen[i]);
  /* read_shared: together the ranks read every record once. */
  CHECK_MPI(MPI_File_seek_shared(fh, 0, MPI_SEEK_SET));
  int got[2];
  int reads = 0;
  for (;;) {
    CHECK_MPI(MPI_File_read_shared(fh, got, 2, MPI_INT, &status));
    CHECK_MPI(MPI_Get_count(&status, MPI_INT, &count));
    if (count == 0) break;
    CHECK(count == 2, "read_shared read %d ints", count);
    ++reads;
  }
  int all_reads = 0;
  CHECK_MPI(MPI_Allreduce(&reads, &all_reads, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
  CHECK(all_reads == RECORDS * size, "read_shared read %d records, not %d", all_reads, RECORDS * size);

  /* Ordered: rank r writes r + 1 ints of value r, after everything the ranks before it write. */
  CHECK_MPI(MPI_File_seek_shared(fh, 0, MPI_SEEK_SET));
  int values[64];
  for (int i = 0; i <= rank; ++i) values[i] = rank;
  CHECK_MPI(MPI_File_write_ordered(fh, values, rank + 1, MPI_INT, &status));
  CHECK_MPI(MPI_Get_count(&status, MPI_INT, &count));
  CHECK(count == rank + 1, "write_ordered wrote %d", count);
  const int total = size * (size + 1) / 2;
  CHECK_MPI(MPI_File_get_position_shared(fh, &position));
  CHECK(position == total, "after write_ordered the shared pointer is %lld, not %d", position, total);
  /* The split form appends the same again. */
  CHECK_MPI(MPI_File_write_ordered_begin(fh, values, rank + 1, MPI_INT));
  CHECK_MPI(MPI_File_write_ordered_end(fh, values, &status));
  CHECK_MPI(MPI_File_sync(fh));
  CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
  CHECK_MPI(MPI_File_sync(fh));
  int *file = malloc(sizeof(int) * 2 * (size_t)total);
  CHECK(file != NULL, "malloc");
  CHECK_MPI(MPI_File_read_at(fh, 0, file, 2 * total, MPI_INT, &status));
  for (int half = 0, i = 0; half < 2; ++half)
    for (int r = 0; r < size; ++r)
      for (int k = 0; k <= r; ++k, ++i) CHECK(file[i] == r, "ordered int %d is %d, not %d", i, file[i], r);
  CHECK_MPI(MPI_File_seek_shared(fh, total, MPI_SEEK_SET));
  for (int i = 0; i <= rank; ++i) values[i] = -1;
  CHECK_MPI(MPI_File_read_ordered(fh, values, rank + 1, MPI_INT, &status));
  for (int i = 0; i <= rank; ++i) CHECK(values[i] == rank, "read_ordered gave %d", values[i]);
  CHECK_MPI(MPI_File_seek_shared(fh, -total, MPI_SEEK_CUR));
  CHECK_MPI(MPI_File_read_ordered_begin(fh, values, rank + 1, MPI_INT));
  CHECK_MPI(MPI_File_read_ordered_end(fh, values, &status));
  for (int i = 0; i <= rank; ++i) CHECK(values[i] == rank, "split read_ordered gave %d", values[i]);
  CHECK_MPI(MPI_File_close(&fh));

  /* Atomic mode: every rank overwrites the same strided region (TILES pieces with holes between them,
   * so each write is many pwrite calls) at once, ROUNDS times; after each round it is one rank's write of
   * that round, whole. */
  io_path(path, sizeof path, "atomic");
  CHECK_MPI(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
  CHECK_MPI(MPI_File_set_atomicity(fh, 1));
  int flag = 0;
  CHECK_MPI(MPI_File_get_atomicity(fh, &flag));
  CHECK(flag == 1, "atomic mode is on");
  MPI_Datatype piece, tile;
  CHECK_MPI(MPI_Type_contiguous(TILE_DATA, MPI_BYTE, &piece));
  CHECK_MPI(MPI_Type_create_resized(piece, 0, 2 * TILE_DATA, &tile));
  CHECK_MPI(MPI_Type_commit(&tile));
  CHECK_MPI(MPI_File_set_view(fh, 0, MPI_BYTE, tile, "native", MPI_INFO_NULL));
  unsigned char *mine = malloc(TILES * TILE_DATA);
  CHECK(mine != NULL, "malloc");
  for (int round = 0; round < ROUNDS; ++round) {
    memset(mine, 1 + rank + size * round, TILES * TILE_DATA);
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));  /* every rank's write at once */
    CHECK_MPI(MPI_File_write_at(fh, 0, mine, TILES * TILE_DATA, MPI_BYTE, &status));
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    CHECK_MPI(MPI_File_read_at(fh, 0, mine, TILES * TILE_DATA, MPI_BYTE, &status));
    CHECK_MPI(MPI_Get_count(&status, MPI_BYTE, &count));
    CHECK(count == TILES * TILE_DATA, "read %d bytes", count);
    for (int i = 1; i < TILES * TILE_DATA; ++i) {
      CHECK(mine[i] == mine[0], "round %d: byte %d is %d but byte 0 is %d: two writes mixed", round, i, mine[i],
            mine[0]);
    }
    CHECK(mine[0] > size * round && mine[0] <= size * (round + 1), "round %d: the region holds %d", round, mine[0]);
  }
  CHECK_MPI(MPI_File_close(&fh));
  CHECK_MPI(MPI_Type_free(&tile));
  CHECK_MPI(MPI_Type_free(&piece));
  free(mine);
  free(file);
  free(records);
  free(seen);
  io_remove_dir(MPI_COMM_WORLD);
  CHECK_MPI(MPI_Finalize());
  if (rank == 0) printf("io_shared: ok\n");
  return 0;
}

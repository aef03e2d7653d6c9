/* MPI-IO's external32 data representation (MPI-3.1 section 13.5.2) at any number of ranks: a file
 * written through an external32 view holds every element big-endian, read back through one it gives the
 * values; checked byte by byte through a native view.
 * - independent: each rank writes 16 ints at its own explicit offset (MPI_File_write_at), etype MPI_INT;
 * - collective: the ranks' doubles interleaved by a vector filetype (every rank one double in turn),
 *   MPI_File_write_at_all, read back with MPI_File_read_at_all into a strided memory type;
 * - MPI_File_get_view names the representation; a view or memory type whose external32 size is not its
 *   size here (MPI_LONG) is MPI_ERR_UNSUPPORTED_DATAREP and writes nothing. */
#include <stdint.h>

#include "io_common.h"

#define INTS 16
#define DOUBLES 8

static int int_value(int rank, int i) { return (rank + 1) * 0x01020304 + i; }
static double double_value(int rank, int i) { return (double)rank * 1000.5 + (double)i * 0.25 - 7.0; }

/* The big-endian bytes of an int and of a double (IEEE 754 binary64). */
static void big_endian_int(int value, unsigned char out[4]) {
  const uint32_t u = (uint32_t)value;
  for (int b = 0; b < 4; ++b) out[b] = (unsigned char)(u >> (24 - 8 * b));
}
static void big_endian_double(double value, unsigned char out[8]) {
  uint64_t u = 0;
  memcpy(&u, &value, sizeof u);
  for (int b = 0; b < 8; ++b) out[b] = (unsigned char)(u >> (56 - 8 * b));
}

int main(int argc, char **argv) {
  CHECK_MPI(MPI_Init(&argc, &argv));
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  io_make_dir(MPI_COMM_WORLD, "io-external32");
  char path[600];
  io_path(path, sizeof path, "data");
  MPI_File fh;
  MPI_Status status;
  int count = -1;

  /* Independent writes of ints through an external32 view. */
  CHECK_MPI(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
  CHECK_MPI(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "external32", MPI_INFO_NULL));
  MPI_Offset disp = -1;
  MPI_Datatype etype = MPI_DATATYPE_NULL, filetype = MPI_DATATYPE_NULL;
  char datarep[MPI_MAX_DATAREP_STRING + 1];
  CHECK_MPI(MPI_File_get_view(fh, &disp, &etype, &filetype, datarep));
  CHECK(strcmp(datarep, "external32") == 0 && disp == 0 && etype == MPI_INT, "the view: %s", datarep);
  int ints[INTS];
  for (int i = 0; i < INTS; ++i) ints[i] = int_value(rank, i);
  CHECK_MPI(MPI_File_write_at(fh, (MPI_Offset)rank * INTS, ints, INTS, MPI_INT, &status));
  CHECK_MPI(MPI_Get_count(&status, MPI_INT, &count));
  CHECK(count == INTS, "wrote %d ints", count);
  CHECK_MPI(MPI_File_sync(fh));
  CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));

  /* Every rank's ints, as bytes through a native view: big-endian. */
  const int right = (rank + 1) % size;
  unsigned char raw[INTS * 4];
  CHECK_MPI(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
  CHECK_MPI(MPI_File_read_at(fh, (MPI_Offset)right * INTS * 4, raw, INTS * 4, MPI_BYTE, &status));
  for (int i = 0; i < INTS; ++i) {
    unsigned char want[4];
    big_endian_int(int_value(right, i), want);
    CHECK(memcmp(raw + 4 * i, want, 4) == 0, "rank %d's int %d is not big-endian in the file", right, i);
  }
  /* And through an external32 view: the values. */
  CHECK_MPI(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "external32", MPI_INFO_NULL));
  int back[INTS];
  CHECK_MPI(MPI_File_read_at(fh, (MPI_Offset)right * INTS, back, INTS, MPI_INT, &status));
  for (int i = 0; i < INTS; ++i) CHECK(back[i] == int_value(right, i), "int %d of rank %d read as %d", i, right, back[i]);
  CHECK_MPI(MPI_File_close(&fh));

  /* Collective writes of interleaved doubles: a vector filetype, one double of each rank in turn. */
  CHECK_MPI(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
  CHECK_MPI(MPI_File_set_size(fh, 0));
  MPI_Datatype one, tile;
  CHECK_MPI(MPI_Type_contiguous(1, MPI_DOUBLE, &one));
  CHECK_MPI(MPI_Type_create_resized(one, 0, (MPI_Aint)size * (MPI_Aint)sizeof(double), &tile));
  CHECK_MPI(MPI_Type_commit(&tile));
  CHECK_MPI(MPI_File_set_view(fh, (MPI_Offset)rank * (MPI_Offset)sizeof(double), MPI_DOUBLE, tile, "external32",
                              MPI_INFO_NULL));
  double doubles[DOUBLES];
  for (int i = 0; i < DOUBLES; ++i) doubles[i] = double_value(rank, i);
  CHECK_MPI(MPI_File_write_at_all(fh, 0, doubles, DOUBLES, MPI_DOUBLE, &status));
  CHECK_MPI(MPI_Get_count(&status, MPI_DOUBLE, &count));
  CHECK(count == DOUBLES, "wrote %d doubles", count);
  CHECK_MPI(MPI_File_sync(fh));
  CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
  /* Read back collectively into every other double of a strided memory buffer. */
  MPI_Datatype strided;
  CHECK_MPI(MPI_Type_vector(DOUBLES, 1, 2, MPI_DOUBLE, &strided));
  CHECK_MPI(MPI_Type_commit(&strided));
  double spread[2 * DOUBLES];
  for (int i = 0; i < 2 * DOUBLES; ++i) spread[i] = -1.0;
  CHECK_MPI(MPI_File_read_at_all(fh, 0, spread, 1, strided, &status));
  for (int i = 0; i < DOUBLES; ++i) {
    CHECK(spread[2 * i] == double_value(rank, i) && spread[2 * i + 1] == -1.0, "double %d read as %g", i,
          spread[2 * i]);
  }
  /* The file as bytes: double i of rank r at (i * size + r) * 8, big-endian. */
  unsigned char all[DOUBLES * 8];
  CHECK_MPI(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
  for (int i = 0; i < DOUBLES; ++i) {
    CHECK_MPI(MPI_File_read_at(fh, ((MPI_Offset)i * size + right) * 8, all + 8 * i, 8, MPI_BYTE, &status));
    unsigned char want[8];
    big_endian_double(double_value(right, i), want);
    CHECK(memcmp(all + 8 * i, want, 8) == 0, "rank %d's double %d is not big-endian in the file", right, i);
  }

  /* Types of another size in external32: refused, nothing written. */
  MPI_Offset before = -1;
  CHECK_MPI(MPI_File_get_size(fh, &before));
  CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
  CHECK_CLASS(MPI_ERR_UNSUPPORTED_DATAREP, MPI_File_set_view(fh, 0, MPI_LONG, MPI_LONG, "external32", MPI_INFO_NULL));
  CHECK_MPI(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "external32", MPI_INFO_NULL));
  long wide = 1;
  CHECK_CLASS(MPI_ERR_UNSUPPORTED_DATAREP, MPI_File_write_at(fh, before + 64, &wide, 1, MPI_LONG, &status));
  MPI_Offset after = -1;
  CHECK_MPI(MPI_File_get_size(fh, &after));
  CHECK(after == before, "a refused write changed the file's size from %lld to %lld", (long long)before,
        (long long)after);
  CHECK_MPI(MPI_File_close(&fh));
  CHECK_MPI(MPI_Type_free(&strided));
  CHECK_MPI(MPI_Type_free(&tile));
  CHECK_MPI(MPI_Type_free(&one));
  io_remove_dir(MPI_COMM_WORLD);
  if (rank == 0) printf("io_external32: ok, %d ranks\n", size);
  CHECK_MPI(MPI_Finalize());
  return 0;
}

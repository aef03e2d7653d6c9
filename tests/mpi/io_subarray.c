/* A distributed 3-D array written collectively through subarray views, the way HDF5 and netCDF use MPI-IO:
 * every rank writes its block (its memory a subarray too, with a halo) with MPI_File_write_all, in
 * collective windows of 4 KiB (many two-phase rounds); then one rank fewer reads the array back with
 * another decomposition (split along the last dimension) through MPI_File_read_all, in 1000-byte windows
 * that end inside elements; rank 0 checks the file's row-major layout with an independent read. */
#include "io_common.h"

#define G0 24
#define G1 20
#define G2 16
#define HALO 1

static double value_at(int i, int j, int k) { return i * 10000.0 + j * 100.0 + k; }

/* The block of `n` items that part `p` of `parts` holds: its start and length. */
static void block_of(int n, int parts, int p, int *start, int *length) {
  const int base = n / parts, extra = n % parts;
  *length = base + (p < extra ? 1 : 0);
  *start = p * base + (p < extra ? p : extra);
}

int main(int argc, char **argv) {
  CHECK_MPI(MPI_Init(&argc, &argv));
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  CHECK(size >= 2, "io_subarray needs 2 ranks or more");
  io_make_dir(MPI_COMM_WORLD, "io-subarray");
  char path[600];
  io_path(path, sizeof path, "array");
  const int global[3] = {G0, G1, G2};

  /* Writers: every rank, a 3-D grid from MPI_Dims_create. */
  int dims[3] = {0, 0, 0};
  CHECK_MPI(MPI_Dims_create(size, 3, dims));
  const int coords[3] = {rank / (dims[1] * dims[2]), (rank / dims[2]) % dims[1], rank % dims[2]};
  int starts[3], sizes[3];
  for (int d = 0; d < 3; ++d) block_of(global[d], dims[d], coords[d], &starts[d], &sizes[d]);
  const int padded[3] = {sizes[0] + 2 * HALO, sizes[1] + 2 * HALO, sizes[2] + 2 * HALO};
  double *local = malloc(sizeof(double) * (size_t)(padded[0] * padded[1] * padded[2]));
  CHECK(local != NULL, "malloc");
  for (int i = 0; i < padded[0]; ++i)
    for (int j = 0; j < padded[1]; ++j)
      for (int k = 0; k < padded[2]; ++k) {
        const int inside = i >= HALO && i < sizes[0] + HALO && j >= HALO && j < sizes[1] + HALO && k >= HALO &&
                           k < sizes[2] + HALO;
        local[(i * padded[1] + j) * padded[2] + k] =
            inside ? value_at(starts[0] + i - HALO, starts[1] + j - HALO, starts[2] + k - HALO) : -1.0;
      }
  MPI_Datatype filetype, memtype;
  CHECK_MPI(MPI_Type_create_subarray(3, global, sizes, starts, MPI_ORDER_C, MPI_DOUBLE, &filetype));
  CHECK_MPI(MPI_Type_commit(&filetype));
  const int halo_starts[3] = {HALO, HALO, HALO};
  CHECK_MPI(MPI_Type_create_subarray(3, padded, sizes, halo_starts, MPI_ORDER_C, MPI_DOUBLE, &memtype));
  CHECK_MPI(MPI_Type_commit(&memtype));
  MPI_File fh;
  MPI_Status status;
  int count = 0;
  /* Small collective windows: the array goes through many rounds, pieces cut at window edges. */
  MPI_Info small_windows;
  CHECK_MPI(MPI_Info_create(&small_windows));
  CHECK_MPI(MPI_Info_set(small_windows, "cb_buffer_size", "4096"));
  CHECK_MPI(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_WRONLY, small_windows, &fh));
  CHECK_MPI(MPI_File_set_view(fh, 0, MPI_DOUBLE, filetype, "native", MPI_INFO_NULL));
  CHECK_MPI(MPI_File_write_all(fh, local, 1, memtype, &status));
  CHECK_MPI(MPI_Get_count(&status, memtype, &count));
  CHECK(count == 1, "write_all count %d", count);
  CHECK_MPI(MPI_File_close(&fh));
  CHECK_MPI(MPI_Type_free(&filetype));
  CHECK_MPI(MPI_Type_free(&memtype));
  free(local);

  /* Readers: one rank fewer, split along the last dimension only. */
  MPI_Comm readers;
  CHECK_MPI(MPI_Comm_split(MPI_COMM_WORLD, rank < size - 1 ? 0 : MPI_UNDEFINED, rank, &readers));
  if (readers != MPI_COMM_NULL) {
    int rrank = 0, rsize = 1;
    MPI_Comm_rank(readers, &rrank);
    MPI_Comm_size(readers, &rsize);
    int rstarts[3] = {0, 0, 0}, rsizes[3] = {G0, G1, 0};
    block_of(G2, rsize, rrank, &rstarts[2], &rsizes[2]);
    const int n = rsizes[0] * rsizes[1] * rsizes[2];
    double *part = malloc(sizeof(double) * (size_t)n);
    CHECK(part != NULL, "malloc");
    CHECK_MPI(MPI_Type_create_subarray(3, global, rsizes, rstarts, MPI_ORDER_C, MPI_DOUBLE, &filetype));
    CHECK_MPI(MPI_Type_commit(&filetype));
    /* Windows that end inside doubles. */
    CHECK_MPI(MPI_Info_set(small_windows, "cb_buffer_size", "1000"));
    CHECK_MPI(MPI_File_open(readers, path, MPI_MODE_RDONLY, small_windows, &fh));
    CHECK_MPI(MPI_File_set_view(fh, 0, MPI_DOUBLE, filetype, "native", MPI_INFO_NULL));
    CHECK_MPI(MPI_File_read_all(fh, part, n, MPI_DOUBLE, &status));
    CHECK_MPI(MPI_Get_count(&status, MPI_DOUBLE, &count));
    CHECK(count == n, "read_all read %d of %d doubles", count, n);
    for (int i = 0; i < rsizes[0]; ++i)
      for (int j = 0; j < rsizes[1]; ++j)
        for (int k = 0; k < rsizes[2]; ++k) {
          const double want = value_at(i, j, rstarts[2] + k);
          const double got = part[(i * rsizes[1] + j) * rsizes[2] + k];
          CHECK(got == want, "element (%d,%d,%d) is %g, not %g", i, j, rstarts[2] + k, got, want);
        }
    if (rrank == 0) {
      /* The file is the global array in C order. */
      double whole[G0 * G1 * G2];
      CHECK_MPI(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
      CHECK_MPI(MPI_File_read_at(fh, 0, whole, G0 * G1 * G2, MPI_DOUBLE, &status));
      for (int i = 0; i < G0; ++i)
        for (int j = 0; j < G1; ++j)
          for (int k = 0; k < G2; ++k) {
            CHECK(whole[(i * G1 + j) * G2 + k] == value_at(i, j, k), "file element (%d,%d,%d) is wrong", i, j, k);
          }
    } else {
      CHECK_MPI(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
    }
    CHECK_MPI(MPI_File_close(&fh));
    CHECK_MPI(MPI_Type_free(&filetype));
    CHECK_MPI(MPI_Comm_free(&readers));
    free(part);
  }
  CHECK_MPI(MPI_Info_free(&small_windows));
  io_remove_dir(MPI_COMM_WORLD);
  CHECK_MPI(MPI_Finalize());
  if (rank == 0) printf("io_subarray: ok\n");
  return 0;
}

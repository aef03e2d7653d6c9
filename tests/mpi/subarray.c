/* MPI_Type_create_subarray (MPI-3.1 section 4.1.3), as HDF5 and netCDF use it for a rank's block of a
 * distributed array: the type picks the block's elements out of the whole array, in C and in Fortran
 * order, its extent is the whole array's, and it travels between ranks. Rank 0 sends its 2x3 block at
 * (1, 2) of a 4x6 int array to rank 1, which receives into the same place of a zeroed array. */
#include <string.h>

#include "check.h"

enum { ROWS = 4, COLS = 6 };

int main(int argc, char **argv) {
  CHECK_MPI(MPI_Init(&argc, &argv));
  int rank = 0, size = 0;
  CHECK_MPI(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
  CHECK_MPI(MPI_Comm_size(MPI_COMM_WORLD, &size));
  CHECK(size == 2, "needs 2 ranks");
  int full[ROWS][COLS];
  for (int i = 0; i < ROWS; ++i)
    for (int j = 0; j < COLS; ++j) full[i][j] = i * COLS + j;

  /* C order: rows 1..2, columns 2..4. */
  const int sizes[2] = {ROWS, COLS}, subsizes[2] = {2, 3}, starts[2] = {1, 2};
  MPI_Datatype block;
  CHECK_MPI(MPI_Type_create_subarray(2, sizes, subsizes, starts, MPI_ORDER_C, MPI_INT, &block));
  CHECK_MPI(MPI_Type_commit(&block));
  int type_size = 0;
  MPI_Aint lb = -1, extent = 0;
  CHECK_MPI(MPI_Type_size(block, &type_size));
  CHECK_MPI(MPI_Type_get_extent(block, &lb, &extent));
  CHECK(type_size == 6 * (int)sizeof(int) && lb == 0 && extent == (MPI_Aint)sizeof full,
        "size %d lb %ld extent %ld", type_size, (long)lb, (long)extent);
  int packed[6], position = 0;
  CHECK_MPI(MPI_Pack(full, 1, block, packed, sizeof packed, &position, MPI_COMM_SELF));
  const int expected[6] = {8, 9, 10, 14, 15, 16};
  CHECK(memcmp(packed, expected, sizeof expected) == 0, "C order picked %d %d %d %d %d %d", packed[0], packed[1],
        packed[2], packed[3], packed[4], packed[5]);

  /* Fortran order over the same memory: the first dimension varies fastest, so (COLS, ROWS) sizes and
   * a (3, 2) block at (2, 1) are the same elements. */
  const int f_sizes[2] = {COLS, ROWS}, f_subsizes[2] = {3, 2}, f_starts[2] = {2, 1};
  MPI_Datatype f_block;
  CHECK_MPI(MPI_Type_create_subarray(2, f_sizes, f_subsizes, f_starts, MPI_ORDER_FORTRAN, MPI_INT, &f_block));
  CHECK_MPI(MPI_Type_commit(&f_block));
  position = 0;
  memset(packed, 0, sizeof packed);
  CHECK_MPI(MPI_Pack(full, 1, f_block, packed, sizeof packed, &position, MPI_COMM_SELF));
  CHECK(memcmp(packed, expected, sizeof expected) == 0, "Fortran order picked other elements");

  /* A 3-D block: 2x2x2 at (1,1,1) of 3x3x3 bytes. */
  const int s3[3] = {3, 3, 3}, sub3[3] = {2, 2, 2}, st3[3] = {1, 1, 1};
  MPI_Datatype cube;
  CHECK_MPI(MPI_Type_create_subarray(3, s3, sub3, st3, MPI_ORDER_C, MPI_BYTE, &cube));
  CHECK_MPI(MPI_Type_commit(&cube));
  unsigned char bytes[27], picked[8];
  for (int k = 0; k < 27; ++k) bytes[k] = (unsigned char)k;
  position = 0;
  CHECK_MPI(MPI_Pack(bytes, 1, cube, picked, sizeof picked, &position, MPI_COMM_SELF));
  const unsigned char cube_expected[8] = {13, 14, 16, 17, 22, 23, 25, 26};
  CHECK(memcmp(picked, cube_expected, sizeof picked) == 0, "3-D block picked %d %d ...", picked[0], picked[1]);

  /* How it was made. */
  int ni = 0, na = 0, nd = 0, combiner = -1, ints[8];
  MPI_Aint addrs[1];
  MPI_Datatype types[1];
  CHECK_MPI(MPI_Type_get_envelope(block, &ni, &na, &nd, &combiner));
  CHECK(combiner == MPI_COMBINER_SUBARRAY && ni == 8 && na == 0 && nd == 1, "subarray envelope");
  CHECK_MPI(MPI_Type_get_contents(block, 8, 0, 1, ints, addrs, types));
  CHECK(ints[0] == 2 && ints[1] == ROWS && ints[4] == 3 && ints[6] == 2 && ints[7] == MPI_ORDER_C && types[0] == MPI_INT,
        "subarray contents");

  /* Between ranks: only the block's elements arrive, the rest stays as it was. */
  if (rank == 0) {
    CHECK_MPI(MPI_Send(full, 1, block, 1, 0, MPI_COMM_WORLD));
  } else {
    int got[ROWS][COLS];
    memset(got, 0, sizeof got);
    CHECK_MPI(MPI_Recv(got, 1, block, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    for (int i = 0; i < ROWS; ++i)
      for (int j = 0; j < COLS; ++j) {
        const int inside = i >= 1 && i < 3 && j >= 2 && j < 5;
        CHECK(got[i][j] == (inside ? full[i][j] : 0), "element (%d, %d) is %d", i, j, got[i][j]);
      }
  }

  /* Wrong arguments. */
  CHECK_MPI(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
  MPI_Datatype bad;
  const int too_big[2] = {5, 3}, past_end[2] = {3, 2};
  CHECK_CLASS(MPI_ERR_ARG, MPI_Type_create_subarray(2, sizes, too_big, starts, MPI_ORDER_C, MPI_INT, &bad));
  CHECK_CLASS(MPI_ERR_ARG, MPI_Type_create_subarray(2, sizes, subsizes, past_end, MPI_ORDER_C, MPI_INT, &bad));
  CHECK_CLASS(MPI_ERR_ARG, MPI_Type_create_subarray(0, sizes, subsizes, starts, MPI_ORDER_C, MPI_INT, &bad));
  CHECK_CLASS(MPI_ERR_ARG, MPI_Type_create_subarray(2, sizes, subsizes, starts, 99, MPI_INT, &bad));
  CHECK_CLASS(MPI_ERR_TYPE, MPI_Type_create_subarray(2, sizes, subsizes, starts, MPI_ORDER_C, MPI_DATATYPE_NULL, &bad));

  CHECK_MPI(MPI_Type_free(&block));
  CHECK_MPI(MPI_Type_free(&f_block));
  CHECK_MPI(MPI_Type_free(&cube));
  CHECK_MPI(MPI_Finalize());
  return 0;
}

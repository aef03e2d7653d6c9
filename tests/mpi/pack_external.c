/* MPI_Pack_external, MPI_Unpack_external and MPI_Pack_external_size in "external32":
 *   - every kind of basic element against its bytes as MPI-3.1 section 13.5.2 defines them (big-endian,
 *     IEEE, MPI_LONG in 4 bytes, MPI_WCHAR in 2, MPI_LONG_DOUBLE as binary128, pairs without padding);
 *   - derived types: a vector skips its holes, a resized struct round-trips without touching its holes;
 *   - long doubles round-trip bit for bit (zero, denormal, largest, infinities, a third);
 *   - values that do not fit (a long beyond 32 bits, a wide character beyond 16), short buffers, an
 *     unknown representation and uncommitted types get their error classes;
 *   - with 2 or more ranks, rank 0's external32 bytes travel as MPI_BYTE and rank 1 unpacks them into
 *     a type of another layout. */
#include <float.h>
#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <wchar.h>

#include "check.h"

static const char *const ext = "external32";

/* Packs one item of `type` at `value` and compares with the `n` expected bytes. */
static void expect_bytes(const void *value, MPI_Datatype type, const unsigned char *expected, int n, const char *what) {
  unsigned char out[64];
  memset(out, 0xEE, sizeof out);
  MPI_Aint position = 0, size = -1;
  CHECK_MPI(MPI_Pack_external_size(ext, 1, type, &size));
  CHECK(size == n, "%s: external32 size %ld, expected %d", what, (long)size, n);
  CHECK_MPI(MPI_Pack_external(ext, value, 1, type, out, (MPI_Aint)sizeof out, &position));
  CHECK(position == n, "%s: position %ld after packing, expected %d", what, (long)position, n);
  for (int k = 0; k < n; ++k) {
    CHECK(out[k] == expected[k], "%s: byte %d is %02x, expected %02x", what, k, out[k], expected[k]);
  }
  CHECK(out[n] == 0xEE, "%s: wrote past its %d bytes", what, n);
}

static void basic_elements(void) {
  const int i = 0x01020304;
  expect_bytes(&i, MPI_INT, (const unsigned char[]){1, 2, 3, 4}, 4, "MPI_INT");
  const short s = -2;
  expect_bytes(&s, MPI_SHORT, (const unsigned char[]){0xFF, 0xFE}, 2, "MPI_SHORT");
  const long l = -2;
  expect_bytes(&l, MPI_LONG, (const unsigned char[]){0xFF, 0xFF, 0xFF, 0xFE}, 4, "MPI_LONG");
  const unsigned long ul = 0xCAFEBABEUL;
  expect_bytes(&ul, MPI_UNSIGNED_LONG, (const unsigned char[]){0xCA, 0xFE, 0xBA, 0xBE}, 4, "MPI_UNSIGNED_LONG");
  const long long ll = 0x0102030405060708LL;
  expect_bytes(&ll, MPI_LONG_LONG, (const unsigned char[]){1, 2, 3, 4, 5, 6, 7, 8}, 8, "MPI_LONG_LONG");
  const MPI_Aint a = -1;
  expect_bytes(&a, MPI_AINT, (const unsigned char[]){0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF}, 8, "MPI_AINT");
  const uint16_t u16 = 0xBEEF;
  expect_bytes(&u16, MPI_UINT16_T, (const unsigned char[]){0xBE, 0xEF}, 2, "MPI_UINT16_T");
  const float f = -2.0f;
  expect_bytes(&f, MPI_FLOAT, (const unsigned char[]){0xC0, 0, 0, 0}, 4, "MPI_FLOAT");
  const double d = 1.0;
  expect_bytes(&d, MPI_DOUBLE, (const unsigned char[]){0x3F, 0xF0, 0, 0, 0, 0, 0, 0}, 8, "MPI_DOUBLE");
  const long double ld_one = 1.0L;
  expect_bytes(&ld_one, MPI_LONG_DOUBLE, (const unsigned char[]){0x3F, 0xFF, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
               16, "MPI_LONG_DOUBLE 1");
  const long double ld = -2.5L; /* -1.01b x 2^1: exponent 0x4000, fraction 01000... */
  expect_bytes(&ld, MPI_LONG_DOUBLE, (const unsigned char[]){0xC0, 0x00, 0x40, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
               16, "MPI_LONG_DOUBLE -2.5");
  const wchar_t w = L'A';
  expect_bytes(&w, MPI_WCHAR, (const unsigned char[]){0x00, 0x41}, 2, "MPI_WCHAR");
  const bool b = true;
  expect_bytes(&b, MPI_C_BOOL, (const unsigned char[]){1}, 1, "MPI_C_BOOL");
  const char c = 'z';
  expect_bytes(&c, MPI_CHAR, (const unsigned char[]){'z'}, 1, "MPI_CHAR");
  const float complex_parts[2] = {1.0f, -2.0f};
  expect_bytes(complex_parts, MPI_C_FLOAT_COMPLEX, (const unsigned char[]){0x3F, 0x80, 0, 0, 0xC0, 0, 0, 0}, 8,
               "MPI_C_FLOAT_COMPLEX");
  const struct {
    double value;
    int index;
  } di = {1.5, 7};
  expect_bytes(&di, MPI_DOUBLE_INT, (const unsigned char[]){0x3F, 0xF8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 7}, 12,
               "MPI_DOUBLE_INT");
  const struct {
    long value;
    int index;
  } li = {-1, 2};
  expect_bytes(&li, MPI_LONG_INT, (const unsigned char[]){0xFF, 0xFF, 0xFF, 0xFF, 0, 0, 0, 2}, 8, "MPI_LONG_INT");
}

static void derived_types(void) {
  /* A vector of 3 blocks of 2 shorts every 4: the holes are skipped. */
  MPI_Datatype vector;
  CHECK_MPI(MPI_Type_vector(3, 2, 4, MPI_SHORT, &vector));
  CHECK_MPI(MPI_Type_commit(&vector));
  const short shorts[12] = {1, 2, -1, -1, 3, 4, -1, -1, 5, 0x0102, -1, -1};
  expect_bytes(shorts, vector, (const unsigned char[]){0, 1, 0, 2, 0, 3, 0, 4, 0, 5, 1, 2}, 12, "vector of shorts");
  CHECK_MPI(MPI_Type_free(&vector));

  /* {char; long; double} resized to 32 bytes: 13 external bytes an item, holes untouched by unpacking. */
  struct record {
    char tag;
    long count;
    double weight;
    char pad[8];
  };
  MPI_Datatype fields[3] = {MPI_CHAR, MPI_LONG, MPI_DOUBLE}, record_type, resized;
  int lengths[3] = {1, 1, 1};
  MPI_Aint displs[3] = {offsetof(struct record, tag), offsetof(struct record, count), offsetof(struct record, weight)};
  CHECK_MPI(MPI_Type_create_struct(3, lengths, displs, fields, &record_type));
  CHECK_MPI(MPI_Type_create_resized(record_type, 0, (MPI_Aint)sizeof(struct record), &resized));
  CHECK_MPI(MPI_Type_commit(&resized));
  MPI_Aint size = 0;
  CHECK_MPI(MPI_Pack_external_size(ext, 3, resized, &size));
  CHECK(size == 39, "3 records take %ld external32 bytes, expected 39", (long)size);
  struct record in[3] = {{'a', -5, 0.25, {0}}, {'b', 2147483647L, -1e300, {0}}, {'c', -2147483647L - 1, 3.0, {0}}};
  unsigned char packed[64];
  MPI_Aint position = 3; /* after three bytes already there */
  CHECK_MPI(MPI_Pack_external(ext, in, 3, resized, packed, (MPI_Aint)sizeof packed, &position));
  CHECK(position == 42, "position %ld", (long)position);
  CHECK(packed[3] == 'a' && packed[4] == 0xFF && packed[7] == 0xFB, "first record's bytes");
  struct record out[3];
  memset(out, 0x5A, sizeof out);
  position = 3;
  CHECK_MPI(MPI_Unpack_external(ext, packed, 42, &position, out, 3, resized));
  CHECK(position == 42, "position %ld after unpacking", (long)position);
  for (int k = 0; k < 3; ++k) {
    CHECK(out[k].tag == in[k].tag && out[k].count == in[k].count && out[k].weight == in[k].weight,
          "record %d came back as {%c, %ld, %g}", k, out[k].tag, out[k].count, out[k].weight);
    CHECK(out[k].pad[0] == 0x5A && out[k].pad[7] == 0x5A, "record %d: unpacking wrote into a hole", k);
  }
  CHECK_MPI(MPI_Type_free(&record_type));
  CHECK_MPI(MPI_Type_free(&resized));
}

static void long_doubles(void) {
  const long double values[] = {0.0L, -0.0L, 1.0L / 3.0L, LDBL_MAX, -LDBL_MIN, LDBL_MIN / 1024.0L /* denormal */,
                                INFINITY, -INFINITY, 12345.678L};
  const int n = (int)(sizeof values / sizeof values[0]);
  unsigned char packed[16 * 16];
  long double back[16];
  MPI_Aint position = 0;
  CHECK_MPI(MPI_Pack_external(ext, values, n, MPI_LONG_DOUBLE, packed, (MPI_Aint)sizeof packed, &position));
  CHECK(position == 16 * n, "position %ld", (long)position);
  memset(back, 0, sizeof back);
  position = 0;
  CHECK_MPI(MPI_Unpack_external(ext, packed, 16 * n, &position, back, n, MPI_LONG_DOUBLE));
  for (int k = 0; k < n; ++k) {
    CHECK(memcmp(&back[k], &values[k], LDBL_MANT_DIG == 64 ? 10 : sizeof(long double)) == 0,
          "long double %d (%Lg) came back as %Lg", k, values[k], back[k]);
  }
}

static void errors(void) {
  CHECK_MPI(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
  unsigned char out[16];
  MPI_Aint position = 0;
  const long big = 1L << 40;
  CHECK_CLASS(MPI_ERR_CONVERSION, MPI_Pack_external(ext, &big, 1, MPI_LONG, out, 16, &position));
  const unsigned long too_big = 0x100000000UL;
  CHECK_CLASS(MPI_ERR_CONVERSION, MPI_Pack_external(ext, &too_big, 1, MPI_UNSIGNED_LONG, out, 16, &position));
  const wchar_t wide = (wchar_t)0x10000;
  CHECK_CLASS(MPI_ERR_CONVERSION, MPI_Pack_external(ext, &wide, 1, MPI_WCHAR, out, 16, &position));
  const int four[4] = {1, 2, 3, 4};
  CHECK_CLASS(MPI_ERR_TRUNCATE, MPI_Pack_external(ext, four, 4, MPI_INT, out, 15, &position));
  position = 2;
  CHECK_CLASS(MPI_ERR_TRUNCATE, MPI_Pack_external(ext, four, 4, MPI_INT, out, 16, &position));
  CHECK(position == 2, "a failed pack moved the position to %ld", (long)position);
  CHECK_CLASS(MPI_ERR_TRUNCATE, MPI_Unpack_external(ext, out, 16, &position, (int[4]){0}, 4, MPI_INT));
  CHECK_CLASS(MPI_ERR_UNSUPPORTED_DATAREP, MPI_Pack_external("native", four, 1, MPI_INT, out, 16, &position));
  MPI_Aint size = 0;
  CHECK_CLASS(MPI_ERR_UNSUPPORTED_DATAREP, MPI_Pack_external_size("internal", 1, MPI_INT, &size));
  CHECK_CLASS(MPI_ERR_ARG, MPI_Pack_external(NULL, four, 1, MPI_INT, out, 16, &position));
  CHECK_CLASS(MPI_ERR_COUNT, MPI_Pack_external(ext, four, -1, MPI_INT, out, 16, &position));
  MPI_Datatype uncommitted;
  CHECK_MPI(MPI_Type_contiguous(2, MPI_INT, &uncommitted));
  CHECK_CLASS(MPI_ERR_TYPE, MPI_Pack_external(ext, four, 1, uncommitted, out, 16, &position));
  CHECK_MPI(MPI_Pack_external_size(ext, 3, uncommitted, &size));
  CHECK(size == 24, "size of 3 uncommitted pairs of ints: %ld", (long)size);
  CHECK_MPI(MPI_Type_free(&uncommitted));

  /* Unpacking widens by the external sign: 0x80000000 is INT_MIN as a long, 4294967295 as unsigned. */
  const unsigned char high_bit[4] = {0x80, 0, 0, 0}, all_ones[4] = {0xFF, 0xFF, 0xFF, 0xFF};
  long as_long = 0;
  unsigned long as_unsigned_long = 0;
  position = 0;
  CHECK_MPI(MPI_Unpack_external(ext, high_bit, 4, &position, &as_long, 1, MPI_LONG));
  CHECK(as_long == -2147483647L - 1, "0x80000000 unpacked as long: %ld", as_long);
  position = 0;
  CHECK_MPI(MPI_Unpack_external(ext, all_ones, 4, &position, &as_unsigned_long, 1, MPI_UNSIGNED_LONG));
  CHECK(as_unsigned_long == 4294967295UL, "0xFFFFFFFF unpacked as unsigned long: %lu", as_unsigned_long);
  CHECK_MPI(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
}

/* Rank 0 packs every other int of 8; rank 1 unpacks the 4 into a contiguous array. */
static void between_ranks(int rank) {
  MPI_Datatype every_other;
  CHECK_MPI(MPI_Type_vector(4, 1, 2, MPI_INT, &every_other));
  CHECK_MPI(MPI_Type_commit(&every_other));
  unsigned char packed[16];
  if (rank == 0) {
    const int values[8] = {10, -1, -20, -1, 30, -1, 0x7FFFFFFF, -1};
    MPI_Aint position = 0;
    CHECK_MPI(MPI_Pack_external(ext, values, 1, every_other, packed, 16, &position));
    CHECK_MPI(MPI_Send(packed, (int)position, MPI_BYTE, 1, 0, MPI_COMM_WORLD));
  } else if (rank == 1) {
    MPI_Status status;
    CHECK_MPI(MPI_Recv(packed, 16, MPI_BYTE, 0, 0, MPI_COMM_WORLD, &status));
    int got = 0;
    CHECK_MPI(MPI_Get_count(&status, MPI_BYTE, &got));
    CHECK(got == 16, "received %d bytes", got);
    int values[4] = {0};
    MPI_Aint position = 0;
    CHECK_MPI(MPI_Unpack_external(ext, packed, 16, &position, values, 4, MPI_INT));
    CHECK(values[0] == 10 && values[1] == -20 && values[2] == 30 && values[3] == 0x7FFFFFFF,
          "unpacked %d %d %d %d", values[0], values[1], values[2], values[3]);
  }
  CHECK_MPI(MPI_Type_free(&every_other));
}

int main(int argc, char **argv) {
  CHECK_MPI(MPI_Init(&argc, &argv));
  int rank = 0, size = 0;
  CHECK_MPI(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
  CHECK_MPI(MPI_Comm_size(MPI_COMM_WORLD, &size));
  basic_elements();
  derived_types();
  long_doubles();
  errors();
  if (size >= 2) between_ranks(rank);
  CHECK_MPI(MPI_Finalize());
  if (rank == 0) printf("pack_external: passed\n");
  return 0;
}

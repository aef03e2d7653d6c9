/* Every predefined datatype's name (MPI_Type_get_name: the name of the constant, MPI-4.1 section 7.8)
 * and the synonyms, at 2 ranks or more:
 *   - each standard name, C, Fortran and C++, gives its own name: MPI_CXX_BOOL is not called
 *     MPI_C_BOOL, nor MPI_INTEGER1 MPI_INT8_T;
 *   - the two pairs the standard calls synonyms share a handle and its name: MPI_LONG_LONG is
 *     MPI_LONG_LONG_INT, MPI_C_FLOAT_COMPLEX is MPI_C_COMPLEX; every other name has its own handle;
 *   - types of the same layout stay interchangeable: sent as one, received as the other (C++'s and
 *     C's, Fortran's and C's), and reduced as the C type. */
#include <complex.h>
#include <stdbool.h>
#include <string.h>

#include "check.h"

struct named {
  MPI_Datatype type;
  const char *name;
};

#define TYPE(t) {t, #t}

static const struct named kTypes[] = {
    TYPE(MPI_CHAR), TYPE(MPI_SIGNED_CHAR), TYPE(MPI_UNSIGNED_CHAR), TYPE(MPI_BYTE), TYPE(MPI_WCHAR),
    TYPE(MPI_SHORT), TYPE(MPI_UNSIGNED_SHORT), TYPE(MPI_INT), TYPE(MPI_UNSIGNED), TYPE(MPI_LONG),
    TYPE(MPI_UNSIGNED_LONG), TYPE(MPI_LONG_LONG_INT), TYPE(MPI_UNSIGNED_LONG_LONG), TYPE(MPI_FLOAT),
    TYPE(MPI_DOUBLE), TYPE(MPI_LONG_DOUBLE), TYPE(MPI_INT8_T), TYPE(MPI_INT16_T), TYPE(MPI_INT32_T),
    TYPE(MPI_INT64_T), TYPE(MPI_UINT8_T), TYPE(MPI_UINT16_T), TYPE(MPI_UINT32_T), TYPE(MPI_UINT64_T),
    TYPE(MPI_C_BOOL), TYPE(MPI_C_COMPLEX), TYPE(MPI_C_DOUBLE_COMPLEX), TYPE(MPI_C_LONG_DOUBLE_COMPLEX),
    TYPE(MPI_AINT), TYPE(MPI_OFFSET), TYPE(MPI_COUNT), TYPE(MPI_PACKED), TYPE(MPI_FLOAT_INT),
    TYPE(MPI_DOUBLE_INT), TYPE(MPI_LONG_INT), TYPE(MPI_2INT), TYPE(MPI_SHORT_INT), TYPE(MPI_LONG_DOUBLE_INT),
    TYPE(MPI_INTEGER), TYPE(MPI_REAL), TYPE(MPI_DOUBLE_PRECISION), TYPE(MPI_LOGICAL), TYPE(MPI_CHARACTER),
    TYPE(MPI_COMPLEX), TYPE(MPI_DOUBLE_COMPLEX), TYPE(MPI_INTEGER1), TYPE(MPI_INTEGER2), TYPE(MPI_INTEGER4),
    TYPE(MPI_INTEGER8), TYPE(MPI_REAL4), TYPE(MPI_REAL8), TYPE(MPI_COMPLEX8), TYPE(MPI_COMPLEX16),
    TYPE(MPI_2INTEGER), TYPE(MPI_2REAL), TYPE(MPI_2DOUBLE_PRECISION), TYPE(MPI_CXX_BOOL),
    TYPE(MPI_CXX_FLOAT_COMPLEX), TYPE(MPI_CXX_DOUBLE_COMPLEX), TYPE(MPI_CXX_LONG_DOUBLE_COMPLEX),
};

/* The standard's synonyms (MPI-4.1 table 3.2): the second is the first. */
static const struct named kSynonyms[] = {
    {MPI_LONG_LONG, "MPI_LONG_LONG_INT"},
    {MPI_C_FLOAT_COMPLEX, "MPI_C_COMPLEX"},
};

static MPI_Aint extent_of(MPI_Datatype type) {
  MPI_Aint lb, extent;
  CHECK_MPI(MPI_Type_get_extent(type, &lb, &extent));
  return extent;
}

static void check_name(MPI_Datatype type, const char *want) {
  char name[MPI_MAX_OBJECT_NAME];
  int length = -1;
  CHECK_MPI(MPI_Type_get_name(type, name, &length));
  CHECK(strcmp(name, want) == 0 && length == (int)strlen(want), "%s is named %s (%d)", want, name, length);
}

static void names(void) {
  const size_t n = sizeof kTypes / sizeof kTypes[0];
  for (size_t i = 0; i < n; ++i) {
    CHECK(kTypes[i].type != MPI_DATATYPE_NULL, "%s is MPI_DATATYPE_NULL", kTypes[i].name);
    for (size_t j = 0; j < i; ++j) {
      CHECK(kTypes[j].type != kTypes[i].type, "%s and %s share a handle", kTypes[j].name, kTypes[i].name);
    }
    check_name(kTypes[i].type, kTypes[i].name);
    int ni, na, nd, combiner;
    CHECK_MPI(MPI_Type_get_envelope(kTypes[i].type, &ni, &na, &nd, &combiner));
    CHECK(combiner == MPI_COMBINER_NAMED, "%s: combiner %d", kTypes[i].name, combiner);
  }
  for (size_t i = 0; i < sizeof kSynonyms / sizeof kSynonyms[0]; ++i) check_name(kSynonyms[i].type, kSynonyms[i].name);
  CHECK(MPI_LONG_LONG == MPI_LONG_LONG_INT && MPI_C_FLOAT_COMPLEX == MPI_C_COMPLEX, "synonyms share a handle");
}

/* Sent as `as`, received as `into` (same layout): the count is right and the same bytes arrive (the
 * first `bytes`: a long double's padding is not sent). */
static void exchange(MPI_Datatype as, MPI_Datatype into, const void *data, void *out, int count, size_t bytes,
                     const char *what) {
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Status status;
  memset(out, 0, (size_t)count * (size_t)extent_of(as));
  CHECK_MPI(MPI_Sendrecv(data, count, as, (rank + 1) % size, 7, out, count, into, (rank + size - 1) % size, 7,
                         MPI_COMM_WORLD, &status));
  int got = -1;
  CHECK_MPI(MPI_Get_count(&status, into, &got));
  CHECK(got == count && memcmp(data, out, bytes) == 0, "%s: %d of %d, or other bytes", what, got, count);
}

static void interchangeable(void) {
  bool flags[3] = {true, false, true}, flags_out[3];
  exchange(MPI_CXX_BOOL, MPI_C_BOOL, flags, flags_out, 3, sizeof flags, "MPI_CXX_BOOL as MPI_C_BOOL");
  exchange(MPI_C_BOOL, MPI_CXX_BOOL, flags, flags_out, 3, sizeof flags, "MPI_C_BOOL as MPI_CXX_BOOL");
  float _Complex fz[2] = {1.0f + 2.0f * I, -3.0f}, fz_out[2];
  exchange(MPI_CXX_FLOAT_COMPLEX, MPI_C_FLOAT_COMPLEX, fz, fz_out, 2, sizeof fz, "MPI_CXX_FLOAT_COMPLEX");
  double _Complex dz[2] = {0.5 - 1.0 * I, 4.0 * I}, dz_out[2];
  exchange(MPI_C_DOUBLE_COMPLEX, MPI_CXX_DOUBLE_COMPLEX, dz, dz_out, 2, sizeof dz, "MPI_CXX_DOUBLE_COMPLEX");
  long double _Complex lz = 2.0L + 1.0L * I, lz_out;
  exchange(MPI_CXX_LONG_DOUBLE_COMPLEX, MPI_C_LONG_DOUBLE_COMPLEX, &lz, &lz_out, 1, 0, "MPI_CXX_LONG_DOUBLE_COMPLEX");
  CHECK(creall(lz_out) == 2.0L && cimagl(lz_out) == 1.0L, "MPI_CXX_LONG_DOUBLE_COMPLEX value");
  long long ll[2] = {-(1LL << 40), 42}, ll_out[2];
  exchange(MPI_LONG_LONG, MPI_LONG_LONG_INT, ll, ll_out, 2, sizeof ll, "MPI_LONG_LONG");
  int i4[2] = {-5, 1 << 20}, i4_out[2];
  exchange(MPI_INTEGER, MPI_INT, i4, i4_out, 2, sizeof i4, "MPI_INTEGER as MPI_INT");
  float pairs[4] = {1.5f, 2.0f, -1.0f, 7.0f}, pairs_out[4];
  exchange(MPI_2REAL, MPI_2REAL, pairs, pairs_out, 2, sizeof pairs, "MPI_2REAL");

  /* Reductions of C++'s types: as C's. */
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  bool all = true, any = rank == 0;
  CHECK_MPI(MPI_Allreduce(MPI_IN_PLACE, &all, 1, MPI_CXX_BOOL, MPI_LAND, MPI_COMM_WORLD));
  CHECK_MPI(MPI_Allreduce(MPI_IN_PLACE, &any, 1, MPI_CXX_BOOL, MPI_LOR, MPI_COMM_WORLD));
  CHECK(all && any, "MPI_CXX_BOOL land/lor");
  double _Complex z = rank + 1.0 * I;
  CHECK_MPI(MPI_Allreduce(MPI_IN_PLACE, &z, 1, MPI_CXX_DOUBLE_COMPLEX, MPI_SUM, MPI_COMM_WORLD));
  CHECK(creal(z) == size * (size - 1) / 2 && cimag(z) == size, "MPI_CXX_DOUBLE_COMPLEX sum");
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  names();
  interchangeable();
  /* A name set on a predefined type replaces its default. */
  CHECK_MPI(MPI_Type_set_name(MPI_CXX_BOOL, "bool"));
  check_name(MPI_CXX_BOOL, "bool");
  check_name(MPI_C_BOOL, "MPI_C_BOOL");
  CHECK_MPI(MPI_Type_set_name(MPI_CXX_BOOL, "MPI_CXX_BOOL"));
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0) printf("type_names: ok\n");
  MPI_Finalize();
  return 0;
}

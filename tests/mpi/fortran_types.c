/* Fortran's datatypes from C (MPI-3.1 sections 3.2.2 and 17.1.9), at any number of ranks:
 *   - each has its own handle, name (MPI_Type_get_name), size and extent, and MPI_COMBINER_NAMED;
 *     the optional ones without a C type of their size are MPI_DATATYPE_NULL;
 *   - reductions on them: MPI_SUM on MPI_INTEGER, MPI_REAL8, MPI_DOUBLE_COMPLEX, MPI_LAND on
 *     MPI_LOGICAL, MPI_MAXLOC on MPI_2INTEGER, MPI_2REAL and MPI_2DOUBLE_PRECISION; external32 of
 *     MPI_INTEGER4 is big-endian;
 *   - MPI_Type_match_size for every class and size, and MPI_ERR_ARG for one that has none;
 *   - MPI_Type_create_f90_integer/_real/_complex: the kind chosen (by size), the same handle for the
 *     same arguments, MPI_COMBINER_F90_* with p and r as contents, usable in reductions and as the old
 *     type of a constructor (whose contents give the f90 handle back), not freeable; MPI_ERR_ARG
 *     when no kind has the precision or range. */
#include <complex.h>
#include <string.h>

#include "check.h"

static int rank, size;

struct expected {
  MPI_Datatype type;
  const char *name;
  int size;
};

static void names_and_sizes(void) {
  const struct expected types[] = {
      {MPI_INTEGER, "MPI_INTEGER", 4},       {MPI_REAL, "MPI_REAL", 4},
      {MPI_DOUBLE_PRECISION, "MPI_DOUBLE_PRECISION", 8},
      {MPI_LOGICAL, "MPI_LOGICAL", 4},       {MPI_CHARACTER, "MPI_CHARACTER", 1},
      {MPI_COMPLEX, "MPI_COMPLEX", 8},       {MPI_DOUBLE_COMPLEX, "MPI_DOUBLE_COMPLEX", 16},
      {MPI_INTEGER1, "MPI_INTEGER1", 1},     {MPI_INTEGER2, "MPI_INTEGER2", 2},
      {MPI_INTEGER4, "MPI_INTEGER4", 4},     {MPI_INTEGER8, "MPI_INTEGER8", 8},
      {MPI_REAL4, "MPI_REAL4", 4},           {MPI_REAL8, "MPI_REAL8", 8},
      {MPI_COMPLEX8, "MPI_COMPLEX8", 8},     {MPI_COMPLEX16, "MPI_COMPLEX16", 16},
      {MPI_2INTEGER, "MPI_2INTEGER", 8},     {MPI_2REAL, "MPI_2REAL", 8},
      {MPI_2DOUBLE_PRECISION, "MPI_2DOUBLE_PRECISION", 16},
  };
  for (size_t i = 0; i < sizeof types / sizeof types[0]; ++i) {
    char name[MPI_MAX_OBJECT_NAME];
    int length = 0, bytes = 0, ni, na, nd, combiner;
    MPI_Aint lb, extent;
    CHECK(types[i].type != MPI_DATATYPE_NULL, "%s is MPI_DATATYPE_NULL", types[i].name);
    for (size_t j = 0; j < i; ++j) CHECK(types[j].type != types[i].type, "%s and %s share a handle", types[j].name, types[i].name);
    CHECK(types[i].type != MPI_INT && types[i].type != MPI_FLOAT && types[i].type != MPI_DOUBLE,
          "%s is a C type's handle", types[i].name);
    CHECK_MPI(MPI_Type_get_name(types[i].type, name, &length));
    CHECK(strcmp(name, types[i].name) == 0 && length == (int)strlen(types[i].name), "%s is named %s", types[i].name, name);
    CHECK_MPI(MPI_Type_size(types[i].type, &bytes));
    CHECK_MPI(MPI_Type_get_extent(types[i].type, &lb, &extent));
    CHECK(bytes == types[i].size && lb == 0 && extent == types[i].size, "%s: size %d extent %ld", types[i].name, bytes,
          (long)extent);
    CHECK_MPI(MPI_Type_get_envelope(types[i].type, &ni, &na, &nd, &combiner));
    CHECK(combiner == MPI_COMBINER_NAMED, "%s: combiner %d", types[i].name, combiner);
    MPI_Datatype t = types[i].type;
    CHECK_CLASS(MPI_ERR_TYPE, MPI_Type_free(&t));
  }
  CHECK(MPI_INTEGER16 == MPI_DATATYPE_NULL && MPI_REAL2 == MPI_DATATYPE_NULL && MPI_REAL16 == MPI_DATATYPE_NULL &&
            MPI_COMPLEX4 == MPI_DATATYPE_NULL && MPI_COMPLEX32 == MPI_DATATYPE_NULL,
        "the kinds without a C type are MPI_DATATYPE_NULL");
}

static void reductions(void) {
  int integers[3] = {rank, 1, -rank};
  CHECK_MPI(MPI_Allreduce(MPI_IN_PLACE, integers, 3, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD));
  CHECK(integers[0] == size * (size - 1) / 2 && integers[1] == size && integers[2] == -integers[0], "MPI_INTEGER sum");
  double reals[2] = {rank + 0.25, 2.0};
  CHECK_MPI(MPI_Allreduce(MPI_IN_PLACE, reals, 2, MPI_REAL8, MPI_SUM, MPI_COMM_WORLD));
  CHECK(reals[0] == size * (size - 1) / 2 + 0.25 * size && reals[1] == 2.0 * size, "MPI_REAL8 sum %g", reals[0]);
  double _Complex z = rank + 1.0 * I;
  CHECK_MPI(MPI_Allreduce(MPI_IN_PLACE, &z, 1, MPI_DOUBLE_COMPLEX, MPI_SUM, MPI_COMM_WORLD));
  CHECK(creal(z) == size * (size - 1) / 2 && cimag(z) == size, "MPI_DOUBLE_COMPLEX sum");
  int all = 1, not_first = rank != 0, last = rank == size - 1;
  CHECK_MPI(MPI_Allreduce(MPI_IN_PLACE, &all, 1, MPI_LOGICAL, MPI_LAND, MPI_COMM_WORLD));
  CHECK_MPI(MPI_Allreduce(MPI_IN_PLACE, &not_first, 1, MPI_LOGICAL, MPI_LAND, MPI_COMM_WORLD));
  CHECK_MPI(MPI_Allreduce(MPI_IN_PLACE, &last, 1, MPI_LOGICAL, MPI_LOR, MPI_COMM_WORLD));
  CHECK(all && !not_first && last, "MPI_LOGICAL and/or: %d %d %d", all, not_first, last);
  int pair[2] = {(rank * 7) % size, rank}; /* value, index */
  int best[2];
  CHECK_MPI(MPI_Allreduce(pair, best, 1, MPI_2INTEGER, MPI_MAXLOC, MPI_COMM_WORLD));
  int want = 0, at = 0;
  for (int r = 0; r < size; ++r) {
    if ((r * 7) % size > want) {
      want = (r * 7) % size;
      at = r;
    }
  }
  CHECK(best[0] == want && best[1] == at, "MPI_2INTEGER maxloc: %d at %d, not %d at %d", best[0], best[1], want, at);
  float real_pair[2] = {(float)((rank * 7) % size), (float)rank}, best_real[2];
  CHECK_MPI(MPI_Allreduce(real_pair, best_real, 1, MPI_2REAL, MPI_MAXLOC, MPI_COMM_WORLD));
  CHECK(best_real[0] == want && best_real[1] == at, "MPI_2REAL maxloc: %g at %g", best_real[0], best_real[1]);
  double double_pair[2] = {(double)((rank * 7) % size), (double)rank}, best_double[2];
  CHECK_MPI(MPI_Allreduce(double_pair, best_double, 1, MPI_2DOUBLE_PRECISION, MPI_MAXLOC, MPI_COMM_WORLD));
  CHECK(best_double[0] == want && best_double[1] == at, "MPI_2DOUBLE_PRECISION maxloc: %g at %g", best_double[0],
        best_double[1]);
  /* A type of Fortran integers: a vector of MPI_INTEGER reduces with MPI_SUM too. */
  MPI_Datatype pairs;
  CHECK_MPI(MPI_Type_contiguous(2, MPI_INTEGER, &pairs));
  CHECK_MPI(MPI_Type_commit(&pairs));
  int two[2] = {1, rank};
  CHECK_MPI(MPI_Allreduce(MPI_IN_PLACE, two, 1, pairs, MPI_SUM, MPI_COMM_WORLD));
  CHECK(two[0] == size && two[1] == size * (size - 1) / 2, "contiguous MPI_INTEGER sum");
  CHECK_MPI(MPI_Type_free(&pairs));
  /* external32 */
  unsigned char bytes[4];
  MPI_Aint position = 0;
  const int value = 0x01020304;
  CHECK_MPI(MPI_Pack_external("external32", &value, 1, MPI_INTEGER4, bytes, 4, &position));
  CHECK(position == 4 && bytes[0] == 1 && bytes[3] == 4, "MPI_INTEGER4 in external32");
}

static void match_size(void) {
  const struct {
    int typeclass, size;
    MPI_Datatype want;
  } cases[] = {
      {MPI_TYPECLASS_INTEGER, 1, MPI_INTEGER1}, {MPI_TYPECLASS_INTEGER, 2, MPI_INTEGER2},
      {MPI_TYPECLASS_INTEGER, 4, MPI_INTEGER4}, {MPI_TYPECLASS_INTEGER, 8, MPI_INTEGER8},
      {MPI_TYPECLASS_REAL, 4, MPI_REAL4},       {MPI_TYPECLASS_REAL, 8, MPI_REAL8},
      {MPI_TYPECLASS_COMPLEX, 8, MPI_COMPLEX8}, {MPI_TYPECLASS_COMPLEX, 16, MPI_COMPLEX16},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
    MPI_Datatype got = MPI_DATATYPE_NULL;
    int bytes = 0;
    CHECK_MPI(MPI_Type_match_size(cases[i].typeclass, cases[i].size, &got));
    CHECK_MPI(MPI_Type_size(got, &bytes));
    CHECK(got == cases[i].want && bytes == cases[i].size, "MPI_Type_match_size(%d, %d)", cases[i].typeclass, cases[i].size);
  }
  MPI_Datatype got;
  CHECK_CLASS(MPI_ERR_ARG, MPI_Type_match_size(MPI_TYPECLASS_INTEGER, 3, &got));
  CHECK_CLASS(MPI_ERR_ARG, MPI_Type_match_size(MPI_TYPECLASS_REAL, 2, &got));
  CHECK_CLASS(MPI_ERR_ARG, MPI_Type_match_size(99, 4, &got));
  CHECK_CLASS(MPI_ERR_ARG, MPI_Type_match_size(MPI_TYPECLASS_REAL, 4, NULL));
}

static void expect_f90(MPI_Datatype t, int combiner, int p, int r, int bytes, const char *what) {
  int ni = -1, na = -1, nd = -1, got_combiner = -1, got_size = 0;
  CHECK_MPI(MPI_Type_size(t, &got_size));
  CHECK(got_size == bytes, "%s: %d bytes, not %d", what, got_size, bytes);
  CHECK_MPI(MPI_Type_get_envelope(t, &ni, &na, &nd, &got_combiner));
  const int want_ni = combiner == MPI_COMBINER_F90_INTEGER ? 1 : 2;
  CHECK(got_combiner == combiner && ni == want_ni && na == 0 && nd == 0, "%s: combiner %d, %d/%d/%d", what,
        got_combiner, ni, na, nd);
  int ints[2] = {-9, -9};
  MPI_Aint addresses[1];
  MPI_Datatype types[1];
  CHECK_MPI(MPI_Type_get_contents(t, 2, 1, 1, ints, addresses, types));
  if (combiner == MPI_COMBINER_F90_INTEGER) {
    CHECK(ints[0] == r, "%s: contents r %d", what, ints[0]);
  } else {
    CHECK(ints[0] == p && ints[1] == r, "%s: contents p %d r %d", what, ints[0], ints[1]);
  }
  MPI_Datatype copy = t;
  CHECK_CLASS(MPI_ERR_TYPE, MPI_Type_free(&copy));
}

static void f90_types(void) {
  MPI_Datatype t, again;
  const int ranges[][2] = {{1, 1}, {2, 1}, {3, 2}, {4, 2}, {5, 4}, {9, 4}, {10, 8}, {18, 8}};
  for (size_t i = 0; i < sizeof ranges / sizeof ranges[0]; ++i) {
    CHECK_MPI(MPI_Type_create_f90_integer(ranges[i][0], &t));
    expect_f90(t, MPI_COMBINER_F90_INTEGER, 0, ranges[i][0], ranges[i][1], "f90 integer");
  }
  CHECK_MPI(MPI_Type_create_f90_integer(9, &t));
  CHECK_MPI(MPI_Type_create_f90_integer(9, &again));
  CHECK(t == again, "the same f90 integer kind twice gave two handles");
  CHECK_CLASS(MPI_ERR_ARG, MPI_Type_create_f90_integer(19, &t));

  CHECK_MPI(MPI_Type_create_f90_real(6, MPI_UNDEFINED, &t));
  expect_f90(t, MPI_COMBINER_F90_REAL, 6, MPI_UNDEFINED, 4, "f90 real(6)");
  CHECK_MPI(MPI_Type_create_f90_real(MPI_UNDEFINED, 300, &t));
  expect_f90(t, MPI_COMBINER_F90_REAL, MPI_UNDEFINED, 300, 8, "f90 real(r=300)");
  CHECK_MPI(MPI_Type_create_f90_real(15, 307, &t));
  expect_f90(t, MPI_COMBINER_F90_REAL, 15, 307, 8, "f90 real(15, 307)");
  CHECK_CLASS(MPI_ERR_ARG, MPI_Type_create_f90_real(16, MPI_UNDEFINED, &t));
  CHECK_CLASS(MPI_ERR_ARG, MPI_Type_create_f90_real(MPI_UNDEFINED, MPI_UNDEFINED, &t));
  CHECK_MPI(MPI_Type_create_f90_complex(15, MPI_UNDEFINED, &t));
  expect_f90(t, MPI_COMBINER_F90_COMPLEX, 15, MPI_UNDEFINED, 16, "f90 complex(15)");
  CHECK_CLASS(MPI_ERR_ARG, MPI_Type_create_f90_complex(5, 400, &t));
  CHECK_CLASS(MPI_ERR_ARG, MPI_Type_create_f90_complex(5, 30, NULL));

  /* In a reduction, and as a constructor's old type. */
  MPI_Datatype real8;
  CHECK_MPI(MPI_Type_create_f90_real(12, MPI_UNDEFINED, &real8));
  double values[2] = {1.5, rank};
  CHECK_MPI(MPI_Allreduce(MPI_IN_PLACE, values, 2, real8, MPI_SUM, MPI_COMM_WORLD));
  CHECK(values[0] == 1.5 * size && values[1] == size * (size - 1) / 2, "f90 real sum");
  MPI_Datatype vector;
  CHECK_MPI(MPI_Type_vector(2, 1, 2, real8, &vector));
  int ints[3];
  MPI_Aint addresses[1];
  MPI_Datatype types[1];
  CHECK_MPI(MPI_Type_get_contents(vector, 3, 1, 1, ints, addresses, types));
  CHECK(types[0] == real8, "the vector's old type came back as another handle");
  CHECK_MPI(MPI_Type_free(&vector));
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  names_and_sizes();
  reductions();
  match_size();
  f90_types();
  MPI_Finalize();
  if (rank == 0) printf("fortran_types: ok\n");
  return 0;
}

/* Every collective, blocking and nonblocking, checked against what each rank computes on its own:
 * several counts (zero, small, odd, and large enough for the segmented and ring algorithms), every
 * root, MPI_IN_PLACE wherever MPI allows it, every predefined reduction on types it applies to
 * (MINLOC/MAXLOC on the pair types), user operations (a non-commutative one must be applied in rank
 * order), and derived datatypes in and out of collectives. Runs at any number of ranks; CTest runs it
 * at 1, 2, 3, 4 and 8. */
#include <complex.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "check.h"

static int rank;
static int size;

/* Deterministic test data: what rank r holds at element i (small, so that sums and products of up to
 * 8 ranks stay exact in every type). */
static int value(int r, int i) { return (r * 7 + i * 3) % 11 + 1; }

static const int kCounts[] = {0, 1, 7, 1000, 40000};
enum { kNumCounts = sizeof kCounts / sizeof kCounts[0] };

static int *ints(size_t n) {
  int *p = malloc((n ? n : 1) * sizeof(int));
  CHECK(p != NULL, "out of memory");
  return p;
}

/* ---- barrier and broadcast ---- */

static void test_barrier(MPI_Comm comm) {
  CHECK_MPI(MPI_Barrier(comm));
  MPI_Request request = MPI_REQUEST_NULL;
  CHECK_MPI(MPI_Ibarrier(comm, &request));
  CHECK_MPI(MPI_Wait(&request, MPI_STATUS_IGNORE));
  CHECK(request == MPI_REQUEST_NULL, "MPI_Wait left the barrier's request");
}

static void test_bcast(MPI_Comm comm) {
  for (int c = 0; c < kNumCounts; ++c) {
    const int n = kCounts[c];
    int *buf = ints((size_t)n);
    for (int root = 0; root < size; ++root) {
      for (int nonblocking = 0; nonblocking < 2; ++nonblocking) {
        for (int i = 0; i < n; ++i) buf[i] = rank == root ? value(root, i) : -1;
        if (nonblocking) {
          MPI_Request request;
          CHECK_MPI(MPI_Ibcast(buf, n, MPI_INT, root, comm, &request));
          int flag = 0;
          while (!flag) CHECK_MPI(MPI_Test(&request, &flag, MPI_STATUS_IGNORE));
        } else {
          CHECK_MPI(MPI_Bcast(buf, n, MPI_INT, root, comm));
        }
        for (int i = 0; i < n; ++i) CHECK(buf[i] == value(root, i), "bcast n=%d root %d [%d] = %d", n, root, i, buf[i]);
      }
    }
    free(buf);
  }
}

/* ---- reductions ---- */

/* One predefined reduction on one type: inputs value(r, i) converted to T, expected result folded in
 * rank order. `exact` ops compare with ==. */
#define REDUCE_CASE(T, MPI_T, OP, FOLD)                                                                     \
  do {                                                                                                        \
    enum { n = 13 };                                                                                          \
    T in[n], out[n], want[n];                                                                                 \
    for (int i = 0; i < n; ++i) {                                                                             \
      in[i] = (T)value(rank, i);                                                                              \
      want[i] = (T)value(0, i);                                                                               \
      for (int r = 1; r < size; ++r) {                                                                        \
        T a = want[i];                                                                                        \
        T b = (T)value(r, i);                                                                                 \
        want[i] = (T)(FOLD);                                                                                  \
      }                                                                                                       \
    }                                                                                                         \
    CHECK_MPI(MPI_Allreduce(in, out, n, MPI_T, OP, comm));                                                    \
    for (int i = 0; i < n; ++i) CHECK(out[i] == want[i], "allreduce %s %s [%d]", #MPI_T, #OP, i);           \
    const int root = size - 1;                                                                                \
    memset(out, 0, sizeof out);                                                                               \
    CHECK_MPI(MPI_Reduce(in, out, n, MPI_T, OP, root, comm));                                                 \
    if (rank == root) {                                                                                       \
      for (int i = 0; i < n; ++i) CHECK(out[i] == want[i], "reduce %s %s [%d]", #MPI_T, #OP, i);            \
    }                                                                                                         \
  } while (0)

static void test_predefined_ops(MPI_Comm comm) {
  REDUCE_CASE(int, MPI_INT, MPI_SUM, a + b);
  REDUCE_CASE(int, MPI_INT, MPI_PROD, a * b);
  REDUCE_CASE(int, MPI_INT, MPI_MIN, a < b ? a : b);
  REDUCE_CASE(int, MPI_INT, MPI_MAX, a > b ? a : b);
  REDUCE_CASE(int, MPI_INT, MPI_LAND, a && b);
  REDUCE_CASE(int, MPI_INT, MPI_BAND, a & b);
  REDUCE_CASE(int, MPI_INT, MPI_BOR, a | b);
  REDUCE_CASE(int, MPI_INT, MPI_BXOR, a ^ b);
  REDUCE_CASE(unsigned char, MPI_UNSIGNED_CHAR, MPI_MAX, a > b ? a : b);
  REDUCE_CASE(signed char, MPI_SIGNED_CHAR, MPI_SUM, a + b);
  REDUCE_CASE(short, MPI_SHORT, MPI_SUM, a + b);
  REDUCE_CASE(unsigned short, MPI_UNSIGNED_SHORT, MPI_BOR, a | b);
  REDUCE_CASE(unsigned, MPI_UNSIGNED, MPI_PROD, a * b);
  REDUCE_CASE(long, MPI_LONG, MPI_MIN, a < b ? a : b);
  REDUCE_CASE(unsigned long, MPI_UNSIGNED_LONG, MPI_SUM, a + b);
  REDUCE_CASE(long long, MPI_LONG_LONG, MPI_PROD, a * b);
  REDUCE_CASE(unsigned long long, MPI_UNSIGNED_LONG_LONG, MPI_BXOR, a ^ b);
  REDUCE_CASE(int8_t, MPI_INT8_T, MPI_MIN, a < b ? a : b);
  REDUCE_CASE(int16_t, MPI_INT16_T, MPI_MAX, a > b ? a : b);
  REDUCE_CASE(int32_t, MPI_INT32_T, MPI_BAND, a & b);
  REDUCE_CASE(int64_t, MPI_INT64_T, MPI_SUM, a + b);
  REDUCE_CASE(uint8_t, MPI_UINT8_T, MPI_BXOR, a ^ b);
  REDUCE_CASE(uint16_t, MPI_UINT16_T, MPI_SUM, a + b);
  REDUCE_CASE(uint32_t, MPI_UINT32_T, MPI_MAX, a > b ? a : b);
  REDUCE_CASE(uint64_t, MPI_UINT64_T, MPI_PROD, a * b);
  REDUCE_CASE(float, MPI_FLOAT, MPI_SUM, a + b);
  REDUCE_CASE(double, MPI_DOUBLE, MPI_PROD, a * b);
  REDUCE_CASE(double, MPI_DOUBLE, MPI_MIN, a < b ? a : b);
  REDUCE_CASE(long double, MPI_LONG_DOUBLE, MPI_MAX, a > b ? a : b);
  REDUCE_CASE(MPI_Aint, MPI_AINT, MPI_SUM, a + b);
  REDUCE_CASE(MPI_Count, MPI_COUNT, MPI_MAX, a > b ? a : b);
  REDUCE_CASE(bool, MPI_C_BOOL, MPI_LOR, a || b);
  REDUCE_CASE(bool, MPI_C_BOOL, MPI_LXOR, (a != 0) != (b != 0));
  REDUCE_CASE(unsigned char, MPI_BYTE, MPI_BOR, a | b);
  REDUCE_CASE(double _Complex, MPI_C_DOUBLE_COMPLEX, MPI_SUM, a + b);
  REDUCE_CASE(float _Complex, MPI_C_FLOAT_COMPLEX, MPI_SUM, a + b);
  REDUCE_CASE(long double _Complex, MPI_C_LONG_DOUBLE_COMPLEX, MPI_PROD, a * b);
}

/* MINLOC and MAXLOC: the value's extreme, ties going to the smaller index (here: the smaller rank). */
#define LOC_CASE(PAIR_T, MPI_T)                                                                           \
  do {                                                                                                      \
    enum { n = 9 };                                                                                         \
    PAIR_T in[n], lo[n], hi[n];                                                                             \
    for (int i = 0; i < n; ++i) {                                                                           \
      in[i].value = value(rank, i) % 4; /* ties are common */                                              \
      in[i].index = rank;                                                                                   \
    }                                                                                                       \
    CHECK_MPI(MPI_Allreduce(in, lo, n, MPI_T, MPI_MINLOC, comm));                                          \
    CHECK_MPI(MPI_Allreduce(in, hi, n, MPI_T, MPI_MAXLOC, comm));                                          \
    for (int i = 0; i < n; ++i) {                                                                           \
      int min_v = 1000, min_r = -1, max_v = -1, max_r = -1;                                                 \
      for (int r = 0; r < size; ++r) {                                                                      \
        const int v = value(r, i) % 4;                                                                      \
        if (v < min_v) min_v = v, min_r = r;                                                                \
        if (v > max_v) max_v = v, max_r = r;                                                                \
      }                                                                                                     \
      CHECK(lo[i].value == min_v && lo[i].index == min_r, "MINLOC %s [%d]: (%d, %d)", #MPI_T, i,          \
            (int)lo[i].value, lo[i].index);                                                                 \
      CHECK(hi[i].value == max_v && hi[i].index == max_r, "MAXLOC %s [%d]", #MPI_T, i);                   \
    }                                                                                                       \
  } while (0)

typedef struct { float value; int index; } float_int;
typedef struct { double value; int index; } double_int;
typedef struct { long value; int index; } long_int;
typedef struct { int value; int index; } two_int;
typedef struct { short value; int index; } short_int;
typedef struct { long double value; int index; } long_double_int;

static void test_loc_ops(MPI_Comm comm) {
  LOC_CASE(float_int, MPI_FLOAT_INT);
  LOC_CASE(double_int, MPI_DOUBLE_INT);
  LOC_CASE(long_int, MPI_LONG_INT);
  LOC_CASE(two_int, MPI_2INT);
  LOC_CASE(short_int, MPI_SHORT_INT);
  LOC_CASE(long_double_int, MPI_LONG_DOUBLE_INT);
}

/* x -> m*x + c; composing them is associative and not commutative. */
typedef struct {
  long long m;
  long long c;
} affine;

static affine then(affine first, affine second) {
  affine r = {second.m * first.m, second.m * first.c + second.c};
  return r;
}

static affine affine_of(int r, int i) {
  affine a = {1 + (r + i) % 2, (r * 5 + i) % 7};
  return a;
}

/* inout = in op inout, `in` holding the lower ranks' operand. */
static void compose(void *in, void *inout, int *len, MPI_Datatype *type) {
  (void)type;
  affine *a = in;
  affine *b = inout;
  for (int i = 0; i < *len; ++i) b[i] = then(a[i], b[i]);
}

static void add_ints(void *in, void *inout, int *len, MPI_Datatype *type) {
  CHECK(*type == MPI_INT, "the user function got datatype %#x", (unsigned)*type);
  for (int i = 0; i < *len; ++i) ((int *)inout)[i] += ((int *)in)[i];
}

static void test_reductions(MPI_Comm comm) {
  MPI_Datatype affine_type;
  CHECK_MPI(MPI_Type_contiguous(2, MPI_LONG_LONG, &affine_type));
  CHECK_MPI(MPI_Type_commit(&affine_type));
  MPI_Op compose_op, add_op;
  CHECK_MPI(MPI_Op_create(compose, 0, &compose_op));
  CHECK_MPI(MPI_Op_create(add_ints, 1, &add_op));
  int commute = -1;
  CHECK_MPI(MPI_Op_commutative(compose_op, &commute));
  CHECK(commute == 0, "MPI_Op_commutative of a non-commutative op: %d", commute);
  CHECK_MPI(MPI_Op_commutative(MPI_SUM, &commute));
  CHECK(commute == 1, "MPI_SUM is commutative");

  for (int c = 0; c < kNumCounts; ++c) {
    const int n = kCounts[c];
    int *in = ints((size_t)n), *out = ints((size_t)n), *sum = ints((size_t)n), *prefix = ints((size_t)n);
    for (int i = 0; i < n; ++i) {
      in[i] = value(rank, i);
      sum[i] = 0;
      prefix[i] = 0;
      for (int r = 0; r < size; ++r) sum[i] += value(r, i);
      for (int r = 0; r < rank; ++r) prefix[i] += value(r, i);
    }
    /* Allreduce: plain, in place, nonblocking, user op. */
    CHECK_MPI(MPI_Allreduce(in, out, n, MPI_INT, MPI_SUM, comm));
    for (int i = 0; i < n; ++i) CHECK(out[i] == sum[i], "allreduce n=%d [%d]", n, i);
    memcpy(out, in, (size_t)n * sizeof(int));
    CHECK_MPI(MPI_Allreduce(MPI_IN_PLACE, out, n, MPI_INT, MPI_SUM, comm));
    for (int i = 0; i < n; ++i) CHECK(out[i] == sum[i], "allreduce in place n=%d [%d]", n, i);
    MPI_Request request;
    CHECK_MPI(MPI_Iallreduce(in, out, n, MPI_INT, add_op, comm, &request));
    CHECK_MPI(MPI_Wait(&request, MPI_STATUS_IGNORE));
    for (int i = 0; i < n; ++i) CHECK(out[i] == sum[i], "iallreduce user op n=%d [%d]", n, i);
    /* Reduce at every root, in place at the root, nonblocking. */
    for (int root = 0; root < size; ++root) {
      for (int i = 0; i < n; ++i) out[i] = rank == root ? in[i] : -7;
      if (rank == root) {
        CHECK_MPI(MPI_Reduce(MPI_IN_PLACE, out, n, MPI_INT, MPI_SUM, root, comm));
      } else {
        CHECK_MPI(MPI_Reduce(in, NULL, n, MPI_INT, MPI_SUM, root, comm));
      }
      if (rank == root) {
        for (int i = 0; i < n; ++i) CHECK(out[i] == sum[i], "reduce in place root %d n=%d [%d]", root, n, i);
      }
      CHECK_MPI(MPI_Ireduce(in, out, n, MPI_INT, MPI_MAX, root, comm, &request));
      CHECK_MPI(MPI_Wait(&request, MPI_STATUS_IGNORE));
      if (rank == root) {
        for (int i = 0; i < n; ++i) {
          int want = 0;
          for (int r = 0; r < size; ++r) want = value(r, i) > want ? value(r, i) : want;
          CHECK(out[i] == want, "ireduce max root %d n=%d [%d]", root, n, i);
        }
      }
    }
    /* Scan and exscan, plain and in place. */
    CHECK_MPI(MPI_Scan(in, out, n, MPI_INT, MPI_SUM, comm));
    for (int i = 0; i < n; ++i) CHECK(out[i] == prefix[i] + in[i], "scan n=%d [%d]", n, i);
    memcpy(out, in, (size_t)n * sizeof(int));
    CHECK_MPI(MPI_Scan(MPI_IN_PLACE, out, n, MPI_INT, MPI_SUM, comm));
    for (int i = 0; i < n; ++i) CHECK(out[i] == prefix[i] + in[i], "scan in place n=%d [%d]", n, i);
    for (int i = 0; i < n; ++i) out[i] = -5;
    CHECK_MPI(MPI_Exscan(in, out, n, MPI_INT, MPI_SUM, comm));
    for (int i = 0; i < n; ++i) {
      CHECK(out[i] == (rank == 0 ? -5 : prefix[i]), "exscan n=%d [%d]: %d", n, i, out[i]);
    }
    memcpy(out, in, (size_t)n * sizeof(int));
    CHECK_MPI(MPI_Iexscan(MPI_IN_PLACE, out, n, MPI_INT, MPI_SUM, comm, &request));
    CHECK_MPI(MPI_Wait(&request, MPI_STATUS_IGNORE));
    for (int i = 0; i < n; ++i) CHECK(out[i] == (rank == 0 ? in[i] : prefix[i]), "iexscan in place n=%d [%d]", n, i);
    free(in);
    free(out);
    free(sum);
    free(prefix);

    /* A non-commutative user op on a derived type, in rank order: allreduce, reduce, scan. */
    affine *a = malloc(((size_t)n + 1) * sizeof(affine));
    affine *b = malloc(((size_t)n + 1) * sizeof(affine));
    for (int i = 0; i < n; ++i) a[i] = affine_of(rank, i);
    CHECK_MPI(MPI_Allreduce(a, b, n, affine_type, compose_op, comm));
    for (int i = 0; i < n; ++i) {
      affine want = affine_of(0, i);
      for (int r = 1; r < size; ++r) want = then(want, affine_of(r, i));
      CHECK(b[i].m == want.m && b[i].c == want.c, "non-commutative allreduce n=%d [%d]", n, i);
    }
    CHECK_MPI(MPI_Reduce(a, b, n, affine_type, compose_op, 0, comm));
    if (rank == 0) {
      for (int i = 0; i < n; ++i) {
        affine want = affine_of(0, i);
        for (int r = 1; r < size; ++r) want = then(want, affine_of(r, i));
        CHECK(b[i].m == want.m && b[i].c == want.c, "non-commutative reduce n=%d [%d]", n, i);
      }
    }
    CHECK_MPI(MPI_Scan(a, b, n, affine_type, compose_op, comm));
    for (int i = 0; i < n; ++i) {
      affine want = affine_of(0, i);
      for (int r = 1; r <= rank; ++r) want = then(want, affine_of(r, i));
      CHECK(b[i].m == want.m && b[i].c == want.c, "non-commutative scan n=%d [%d]", n, i);
    }
    free(a);
    free(b);
  }

  /* Reduce_scatter and reduce_scatter_block, plain and in place; rank r gets r+1 (or 3) elements. */
  int *counts = ints((size_t)size);
  int total = 0, offset = 0;
  for (int r = 0; r < size; ++r) {
    counts[r] = r % 3 == 2 ? 0 : r + 1;
    if (r < rank) offset += counts[r];
    total += counts[r];
  }
  int *in = ints((size_t)total), *out = ints((size_t)total);
  for (int i = 0; i < total; ++i) in[i] = value(rank, i);
  CHECK_MPI(MPI_Reduce_scatter(in, out, counts, MPI_INT, MPI_SUM, comm));
  for (int i = 0; i < counts[rank]; ++i) {
    int want = 0;
    for (int r = 0; r < size; ++r) want += value(r, offset + i);
    CHECK(out[i] == want, "reduce_scatter [%d]", i);
  }
  memcpy(out, in, (size_t)total * sizeof(int));
  CHECK_MPI(MPI_Reduce_scatter(MPI_IN_PLACE, out, counts, MPI_INT, MPI_PROD, comm));
  for (int i = 0; i < counts[rank]; ++i) {
    int want = 1;
    for (int r = 0; r < size; ++r) want *= value(r, offset + i);
    CHECK(out[i] == want, "reduce_scatter in place [%d]", i);
  }
  free(in);
  free(out);
  enum { block = 3 };
  in = ints((size_t)size * block);
  out = ints((size_t)size * block);
  for (int i = 0; i < size * block; ++i) in[i] = value(rank, i);
  CHECK_MPI(MPI_Reduce_scatter_block(in, out, block, MPI_INT, MPI_SUM, comm));
  for (int i = 0; i < block; ++i) {
    int want = 0;
    for (int r = 0; r < size; ++r) want += value(r, rank * block + i);
    CHECK(out[i] == want, "reduce_scatter_block [%d]", i);
  }
  memcpy(out, in, (size_t)size * block * sizeof(int));
  MPI_Request request;
  CHECK_MPI(MPI_Ireduce_scatter_block(MPI_IN_PLACE, out, block, MPI_INT, MPI_MIN, comm, &request));
  CHECK_MPI(MPI_Wait(&request, MPI_STATUS_IGNORE));
  for (int i = 0; i < block; ++i) {
    int want = 1000;
    for (int r = 0; r < size; ++r) want = value(r, rank * block + i) < want ? value(r, rank * block + i) : want;
    CHECK(out[i] == want, "ireduce_scatter_block in place [%d]", i);
  }
  free(in);
  free(out);
  free(counts);

  /* MPI_Reduce_local. */
  int x[4] = {1, 2, 3, 4}, y[4] = {10, 20, 30, 40};
  CHECK_MPI(MPI_Reduce_local(x, y, 4, MPI_INT, MPI_SUM));
  CHECK(y[0] == 11 && y[3] == 44, "MPI_Reduce_local");

  CHECK_MPI(MPI_Op_free(&compose_op));
  CHECK_MPI(MPI_Op_free(&add_op));
  CHECK(compose_op == MPI_OP_NULL, "MPI_Op_free did not reset the handle");
  CHECK_MPI(MPI_Type_free(&affine_type));
}

/* ---- gathers, scatters, all-to-all ---- */

static void test_data_movement(MPI_Comm comm) {
  for (int c = 0; c < kNumCounts - 1; ++c) {
    const int n = kCounts[c];
    const size_t all = (size_t)n * (size_t)size;
    int *mine = ints((size_t)n), *every = ints(all), *back = ints(all);
    for (int i = 0; i < n; ++i) mine[i] = value(rank, i);
    for (int root = 0; root < size; ++root) {
      /* Gather, then the same in place at the root. */
      for (size_t i = 0; i < all; ++i) every[i] = -1;
      CHECK_MPI(MPI_Gather(mine, n, MPI_INT, every, n, MPI_INT, root, comm));
      if (rank == root) {
        for (int r = 0; r < size; ++r)
          for (int i = 0; i < n; ++i) CHECK(every[r * n + i] == value(r, i), "gather root %d n=%d", root, n);
        for (size_t i = 0; i < all; ++i) every[i] = -1;
        memcpy(every + (size_t)root * n, mine, (size_t)n * sizeof(int));
        CHECK_MPI(MPI_Gather(MPI_IN_PLACE, n, MPI_INT, every, n, MPI_INT, root, comm));
        for (int r = 0; r < size; ++r)
          for (int i = 0; i < n; ++i) CHECK(every[r * n + i] == value(r, i), "gather in place root %d", root);
      } else {
        CHECK_MPI(MPI_Gather(mine, n, MPI_INT, NULL, 0, MPI_DATATYPE_NULL, root, comm));
      }
      /* Scatter back out of what the root gathered (the root holds every block). */
      for (int r = 0; r < size; ++r)
        for (int i = 0; i < n; ++i) every[r * n + i] = value(r + 100, i);
      for (int i = 0; i < n; ++i) back[i] = -1;
      CHECK_MPI(MPI_Scatter(every, n, MPI_INT, back, n, MPI_INT, root, comm));
      for (int i = 0; i < n; ++i) CHECK(back[i] == value(rank + 100, i), "scatter root %d n=%d", root, n);
      if (rank == root) {
        CHECK_MPI(MPI_Scatter(every, n, MPI_INT, MPI_IN_PLACE, n, MPI_INT, root, comm));
      } else {
        CHECK_MPI(MPI_Scatter(NULL, 0, MPI_INT, back, n, MPI_INT, root, comm));
        for (int i = 0; i < n; ++i) CHECK(back[i] == value(rank + 100, i), "scatter in place root %d", root);
      }
    }
    /* Allgather, plain, in place and nonblocking. */
    for (size_t i = 0; i < all; ++i) every[i] = -1;
    CHECK_MPI(MPI_Allgather(mine, n, MPI_INT, every, n, MPI_INT, comm));
    for (int r = 0; r < size; ++r)
      for (int i = 0; i < n; ++i) CHECK(every[r * n + i] == value(r, i), "allgather n=%d", n);
    for (size_t i = 0; i < all; ++i) every[i] = -1;
    memcpy(every + (size_t)rank * n, mine, (size_t)n * sizeof(int));
    MPI_Request request;
    CHECK_MPI(MPI_Iallgather(MPI_IN_PLACE, n, MPI_INT, every, n, MPI_INT, comm, &request));
    CHECK_MPI(MPI_Wait(&request, MPI_STATUS_IGNORE));
    for (int r = 0; r < size; ++r)
      for (int i = 0; i < n; ++i) CHECK(every[r * n + i] == value(r, i), "iallgather in place n=%d", n);
    /* Alltoall: block j of rank r holds value(r * size + j, i). */
    for (int j = 0; j < size; ++j)
      for (int i = 0; i < n; ++i) every[j * n + i] = value(rank * size + j, i);
    CHECK_MPI(MPI_Alltoall(every, n, MPI_INT, back, n, MPI_INT, comm));
    for (int r = 0; r < size; ++r)
      for (int i = 0; i < n; ++i) CHECK(back[r * n + i] == value(r * size + rank, i), "alltoall n=%d", n);
    CHECK_MPI(MPI_Alltoall(MPI_IN_PLACE, n, MPI_INT, every, n, MPI_INT, comm));
    for (int r = 0; r < size; ++r)
      for (int i = 0; i < n; ++i) CHECK(every[r * n + i] == value(r * size + rank, i), "alltoall in place n=%d", n);
    free(mine);
    free(every);
    free(back);
  }

  /* The v-variants: rank r contributes r % 4 + 1 elements (0 for every fifth rank), placed in reverse
   * rank order with a gap of 2 between blocks. */
  int *counts = ints((size_t)size), *displs = ints((size_t)size);
  int total = 0;
  for (int r = size - 1; r >= 0; --r) {
    counts[r] = r % 5 == 4 ? 0 : r % 4 + 1;
    displs[r] = total;
    total += counts[r] + 2;
  }
  int *mine = ints((size_t)counts[rank]), *every = ints((size_t)total);
  for (int i = 0; i < counts[rank]; ++i) mine[i] = value(rank, i);
  for (int root = 0; root < size; ++root) {
    for (int i = 0; i < total; ++i) every[i] = -1;
    CHECK_MPI(MPI_Gatherv(mine, counts[rank], MPI_INT, every, counts, displs, MPI_INT, root, comm));
    if (rank == root) {
      for (int r = 0; r < size; ++r)
        for (int i = 0; i < counts[r]; ++i) CHECK(every[displs[r] + i] == value(r, i), "gatherv root %d", root);
      CHECK(total < 3 || every[displs[0] + counts[0]] == -1, "gatherv wrote into a gap");
      CHECK_MPI(MPI_Scatterv(every, counts, displs, MPI_INT, MPI_IN_PLACE, 0, MPI_INT, root, comm));
    } else {
      for (int i = 0; i < counts[rank]; ++i) mine[i] = -1;
      CHECK_MPI(MPI_Scatterv(NULL, NULL, NULL, MPI_INT, mine, counts[rank], MPI_INT, root, comm));
      for (int i = 0; i < counts[rank]; ++i) CHECK(mine[i] == value(rank, i), "scatterv root %d", root);
    }
  }
  for (int i = 0; i < total; ++i) every[i] = -1;
  CHECK_MPI(MPI_Allgatherv(mine, counts[rank], MPI_INT, every, counts, displs, MPI_INT, comm));
  for (int r = 0; r < size; ++r)
    for (int i = 0; i < counts[r]; ++i) CHECK(every[displs[r] + i] == value(r, i), "allgatherv");
  for (int i = 0; i < total; ++i) every[i] = -1;
  for (int i = 0; i < counts[rank]; ++i) every[displs[rank] + i] = mine[i];
  CHECK_MPI(MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, every, counts, displs, MPI_INT, comm));
  for (int r = 0; r < size; ++r)
    for (int i = 0; i < counts[r]; ++i) CHECK(every[displs[r] + i] == value(r, i), "allgatherv in place");

  /* Alltoallv: rank r sends (r + j) % 3 elements to rank j; alltoallw does the same with byte
   * displacements and a type per peer. */
  int *scounts = ints((size_t)size), *sdispls = ints((size_t)size), *rcounts = ints((size_t)size),
      *rdispls = ints((size_t)size);
  int stotal = 0, rtotal = 0;
  for (int j = 0; j < size; ++j) {
    scounts[j] = (rank + j) % 3;
    sdispls[j] = stotal;
    stotal += scounts[j];
    rcounts[j] = (j + rank) % 3;
    rdispls[j] = rtotal + 1;
    rtotal += rcounts[j] + 1;
  }
  int *send = ints((size_t)stotal), *recv = ints((size_t)rtotal + 1);
  for (int j = 0; j < size; ++j)
    for (int i = 0; i < scounts[j]; ++i) send[sdispls[j] + i] = value(rank * 10 + j, i);
  CHECK_MPI(MPI_Alltoallv(send, scounts, sdispls, MPI_INT, recv, rcounts, rdispls, MPI_INT, comm));
  for (int j = 0; j < size; ++j)
    for (int i = 0; i < rcounts[j]; ++i) CHECK(recv[rdispls[j] + i] == value(j * 10 + rank, i), "alltoallv");
  /* Nothing to move, one pointer for both buffers (mpi4py passes one for every empty buffer): no aliasing,
   * so no error (it was refused as MPI_ERR_BUFFER). */
  {
    int *zeros = calloc((size_t)size, sizeof(int));
    MPI_Datatype *ints_t = malloc((size_t)size * sizeof(MPI_Datatype));
    for (int j = 0; j < size; ++j) ints_t[j] = MPI_INT;
    CHECK(zeros != NULL && ints_t != NULL, "malloc");
    CHECK_MPI(MPI_Alltoallv(zeros, zeros, zeros, MPI_INT, zeros, zeros, zeros, MPI_INT, comm));
    CHECK_MPI(MPI_Alltoallw(zeros, zeros, zeros, ints_t, zeros, zeros, zeros, ints_t, comm));
    free(ints_t);
    free(zeros);
  }
  MPI_Datatype *types = malloc((size_t)size * sizeof(MPI_Datatype));
  for (int j = 0; j < size; ++j) {
    types[j] = MPI_INT;
    sdispls[j] *= (int)sizeof(int);
    rdispls[j] *= (int)sizeof(int);
  }
  for (int i = 0; i < rtotal; ++i) recv[i] = -1;
  MPI_Request request;
  CHECK_MPI(MPI_Ialltoallw(send, scounts, sdispls, types, recv, rcounts, rdispls, types, comm, &request));
  CHECK_MPI(MPI_Wait(&request, MPI_STATUS_IGNORE));
  for (int j = 0; j < size; ++j)
    for (int i = 0; i < rcounts[j]; ++i)
      CHECK(recv[rdispls[j] / (int)sizeof(int) + i] == value(j * 10 + rank, i), "ialltoallw");
  free(types);
  free(send);
  free(recv);
  free(scounts);
  free(sdispls);
  free(rcounts);
  free(rdispls);
  free(mine);
  free(every);
  free(counts);
  free(displs);
}

/* ---- derived datatypes in collectives ---- */

static void test_derived(MPI_Comm comm) {
  /* A column of an n x n matrix, resized to one int so that columns follow each other: allgathering
   * one row per rank as a column builds the transpose. */
  const int n = size;
  MPI_Datatype column, column_one;
  CHECK_MPI(MPI_Type_vector(n, 1, n, MPI_INT, &column));
  CHECK_MPI(MPI_Type_create_resized(column, 0, sizeof(int), &column_one));
  CHECK_MPI(MPI_Type_commit(&column_one));
  int *row = ints((size_t)n), *transposed = ints((size_t)n * n);
  for (int j = 0; j < n; ++j) row[j] = rank * 100 + j;
  CHECK_MPI(MPI_Allgather(row, n, MPI_INT, transposed, 1, column_one, comm));
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j)
      CHECK(transposed[i * n + j] == j * 100 + i, "transpose [%d][%d] = %d", i, j, transposed[i * n + j]);

  /* Bcast of a strided type: the gaps stay untouched. */
  MPI_Datatype strided;
  CHECK_MPI(MPI_Type_vector(3, 2, 3, MPI_INT, &strided)); /* xx.xx.xx */
  CHECK_MPI(MPI_Type_commit(&strided));
  MPI_Aint lb, extent;
  CHECK_MPI(MPI_Type_get_extent(strided, &lb, &extent));
  CHECK(lb == 0 && extent == 8 * (MPI_Aint)sizeof(int), "extent of vector(3,2,3): %ld", (long)extent);
  int buf[2 * 8 + 1];
  for (int i = 0; i < 17; ++i) buf[i] = rank == 0 ? i : -1;
  CHECK_MPI(MPI_Bcast(buf, 2, strided, 0, comm));
  for (int i = 0; i < 17; ++i) {
    const int in_type = (i % 8) < 8 && (i % 8) % 3 != 2 && i < 16;
    CHECK(buf[i] == (rank == 0 || in_type ? i : -1), "strided bcast [%d] = %d", i, buf[i]);
  }

  /* Reductions on derived types: a strided vector of ints (predefined op through packing), pairs of
   * MPI_DOUBLE_INT (MINLOC on a padded pair type), in place. */
  int v[16], w[16];
  for (int i = 0; i < 16; ++i) v[i] = w[i] = rank + i;
  CHECK_MPI(MPI_Allreduce(v, w, 2, strided, MPI_SUM, comm));
  for (int i = 0; i < 16; ++i) {
    const int in_type = (i % 8) % 3 != 2;
    const int want = in_type ? size * (size - 1) / 2 + size * i : rank + i;
    CHECK(w[i] == want, "strided allreduce [%d] = %d, expected %d", i, w[i], want);
  }
  CHECK_MPI(MPI_Allreduce(MPI_IN_PLACE, v, 2, strided, MPI_MAX, comm));
  for (int i = 0; i < 16; ++i) {
    const int in_type = (i % 8) % 3 != 2;
    CHECK(v[i] == (in_type ? size - 1 + i : rank + i), "strided allreduce in place [%d]", i);
  }
  MPI_Datatype pairs;
  CHECK_MPI(MPI_Type_contiguous(2, MPI_DOUBLE_INT, &pairs));
  CHECK_MPI(MPI_Type_commit(&pairs));
  double_int p[4], q[4];
  for (int i = 0; i < 4; ++i) {
    p[i].value = (double)((rank + i) % 3);
    p[i].index = rank;
  }
  CHECK_MPI(MPI_Allreduce(p, q, 2, pairs, MPI_MAXLOC, comm));
  for (int i = 0; i < 4; ++i) {
    int best = -1, at = -1;
    for (int r = 0; r < size; ++r) {
      if ((r + i) % 3 > best) best = (r + i) % 3, at = r;
    }
    CHECK(q[i].value == best && q[i].index == at, "MAXLOC on contiguous(2, MPI_DOUBLE_INT) [%d]", i);
  }

  /* Gather with different but matching type signatures: 3 x contiguous(2, int) against 6 x int. */
  MPI_Datatype two;
  CHECK_MPI(MPI_Type_contiguous(2, MPI_INT, &two));
  CHECK_MPI(MPI_Type_commit(&two));
  int six[6], *all = ints((size_t)6 * size);
  for (int i = 0; i < 6; ++i) six[i] = value(rank, i);
  CHECK_MPI(MPI_Gather(six, 3, two, all, 6, MPI_INT, 0, comm));
  if (rank == 0) {
    for (int r = 0; r < size; ++r)
      for (int i = 0; i < 6; ++i) CHECK(all[r * 6 + i] == value(r, i), "gather contiguous(2) as int");
  }

  /* Alltoallw with a strided receive type. */
  int *scounts = ints((size_t)size), *sdispls = ints((size_t)size), *rcounts = ints((size_t)size),
      *rdispls = ints((size_t)size);
  MPI_Datatype *stypes = malloc((size_t)size * sizeof(MPI_Datatype)), *rtypes = malloc((size_t)size * sizeof(MPI_Datatype));
  int *send = ints((size_t)size * 6), *recv = ints((size_t)size * 16);
  for (int j = 0; j < size; ++j) {
    scounts[j] = 6;
    sdispls[j] = j * 6 * (int)sizeof(int);
    stypes[j] = MPI_INT;
    rcounts[j] = 1;
    rdispls[j] = j * 16 * (int)sizeof(int);
    rtypes[j] = strided;
    for (int i = 0; i < 6; ++i) send[j * 6 + i] = value(rank * 10 + j, i);
  }
  for (int i = 0; i < size * 16; ++i) recv[i] = -1;
  CHECK_MPI(MPI_Alltoallw(send, scounts, sdispls, stypes, recv, rcounts, rdispls, rtypes, comm));
  for (int j = 0; j < size; ++j) {
    const int at[6] = {0, 1, 3, 4, 6, 7};
    for (int i = 0; i < 6; ++i) CHECK(recv[j * 16 + at[i]] == value(j * 10 + rank, i), "alltoallw strided");
    CHECK(recv[j * 16 + 2] == -1 && recv[j * 16 + 8] == -1, "alltoallw wrote into a gap");
  }
  free(send);
  free(recv);
  free(scounts);
  free(sdispls);
  free(rcounts);
  free(rdispls);
  free(stypes);
  free(rtypes);
  free(all);
  free(row);
  free(transposed);
  CHECK_MPI(MPI_Type_free(&two));
  CHECK_MPI(MPI_Type_free(&pairs));
  CHECK_MPI(MPI_Type_free(&strided));
  CHECK_MPI(MPI_Type_free(&column));
  CHECK_MPI(MPI_Type_free(&column_one));
}

/* ---- several nonblocking collectives at once ---- */

static void test_overlap(MPI_Comm comm) {
  enum { n = 5000 };
  int *a = ints(n), *b = ints(n), *c = ints(n), *d = ints(n);
  for (int i = 0; i < n; ++i) {
    a[i] = value(rank, i);
    c[i] = rank == 0 ? value(99, i) : 0;
  }
  MPI_Request requests[4];
  CHECK_MPI(MPI_Iallreduce(a, b, n, MPI_INT, MPI_SUM, comm, &requests[0]));
  CHECK_MPI(MPI_Ibcast(c, n, MPI_INT, 0, comm, &requests[1]));
  CHECK_MPI(MPI_Ibarrier(comm, &requests[2]));
  CHECK_MPI(MPI_Ireduce(a, d, n, MPI_INT, MPI_MIN, size - 1, comm, &requests[3]));
  /* Point-to-point traffic on the same communicator does not disturb them. */
  int token = rank;
  CHECK_MPI(MPI_Sendrecv_replace(&token, 1, MPI_INT, (rank + 1) % size, 0, (rank + size - 1) % size, 0, comm,
                                 MPI_STATUS_IGNORE));
  CHECK(token == (rank + size - 1) % size, "sendrecv among nonblocking collectives");
  /* Freeing or cancelling a collective's request is refused. */
  CHECK_MPI(MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN));
  CHECK_CLASS(MPI_ERR_REQUEST, MPI_Cancel(&requests[0]));
  CHECK_MPI(MPI_Comm_set_errhandler(comm, MPI_ERRORS_ARE_FATAL));
  MPI_Status statuses[4];
  CHECK_MPI(MPI_Waitall(4, requests, statuses));
  for (int i = 0; i < n; ++i) {
    int sum = 0, min = 1000;
    for (int r = 0; r < size; ++r) {
      sum += value(r, i);
      min = value(r, i) < min ? value(r, i) : min;
    }
    CHECK(b[i] == sum, "overlapping iallreduce [%d]", i);
    CHECK(c[i] == value(99, i), "overlapping ibcast [%d]", i);
    if (rank == size - 1) CHECK(d[i] == min, "overlapping ireduce [%d]", i);
  }
  free(a);
  free(b);
  free(c);
  free(d);

  /* Rank 0 sits in blocking receives while the others wait for the allreduce; their wait needs rank 0's
   * later rounds, which only its receive loop can move along. */
  int mine = rank + 1, total = 0;
  MPI_Request request;
  CHECK_MPI(MPI_Iallreduce(&mine, &total, 1, MPI_INT, MPI_SUM, comm, &request));
  if (rank == 0) {
    for (int r = 1; r < size; ++r) {
      int got = 0;
      CHECK_MPI(MPI_Recv(&got, 1, MPI_INT, r, 9, comm, MPI_STATUS_IGNORE));
      CHECK(got == size * (size + 1) / 2, "rank %d's allreduce result %d", r, got);
    }
    CHECK_MPI(MPI_Wait(&request, MPI_STATUS_IGNORE));
  } else {
    CHECK_MPI(MPI_Wait(&request, MPI_STATUS_IGNORE));
    CHECK_MPI(MPI_Send(&total, 1, MPI_INT, 0, 9, comm));
  }
  CHECK(total == size * (size + 1) / 2, "iallreduce under a blocking receive: %d", total);
}

/* ---- argument errors (every rank makes the same mistake, so none waits for another) ---- */

static void test_errors(MPI_Comm world) {
  MPI_Comm comm;
  CHECK_MPI(MPI_Comm_dup(world, &comm));
  CHECK_MPI(MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN));
  int x[4] = {0, 0, 0, 0}, y[4];
  CHECK_CLASS(MPI_ERR_ROOT, MPI_Bcast(x, 1, MPI_INT, size, comm));
  CHECK_CLASS(MPI_ERR_ROOT, MPI_Reduce(x, y, 1, MPI_INT, MPI_SUM, -1, comm));
  CHECK_CLASS(MPI_ERR_COUNT, MPI_Allreduce(x, y, -1, MPI_INT, MPI_SUM, comm));
  CHECK_CLASS(MPI_ERR_OP, MPI_Allreduce(x, y, 1, MPI_INT, MPI_OP_NULL, comm));
  CHECK_CLASS(MPI_ERR_OP, MPI_Allreduce(x, y, 1, MPI_C_BOOL, MPI_SUM, comm));
  CHECK_CLASS(MPI_ERR_OP, MPI_Allreduce(x, y, 1, MPI_INT, MPI_MINLOC, comm));
  CHECK_CLASS(MPI_ERR_OP, MPI_Allreduce(x, y, 1, MPI_DOUBLE, MPI_BAND, comm));
  CHECK_CLASS(MPI_ERR_OP, MPI_Allreduce(x, y, 1, MPI_INT, MPI_REPLACE, comm));
  CHECK_CLASS(MPI_ERR_TYPE, MPI_Allreduce(x, y, 1, MPI_DATATYPE_NULL, MPI_SUM, comm));
  CHECK_CLASS(MPI_ERR_BUFFER, MPI_Allreduce(x, x, 1, MPI_INT, MPI_SUM, comm));
  CHECK_CLASS(MPI_ERR_ARG, MPI_Allreduce(x, MPI_IN_PLACE, 1, MPI_INT, MPI_SUM, comm));
  CHECK_CLASS(MPI_ERR_BUFFER, MPI_Bcast(NULL, 1, MPI_INT, 0, comm));
  MPI_Datatype uncommitted;
  CHECK_MPI(MPI_Type_contiguous(2, MPI_INT, &uncommitted));
  CHECK_CLASS(MPI_ERR_TYPE, MPI_Bcast(x, 1, uncommitted, 0, comm));
  CHECK_MPI(MPI_Type_free(&uncommitted));
  MPI_Datatype mixed;
  int lengths[2] = {1, 1};
  MPI_Aint displs[2] = {0, sizeof(double)};
  MPI_Datatype types[2] = {MPI_DOUBLE, MPI_INT};
  CHECK_MPI(MPI_Type_create_struct(2, lengths, displs, types, &mixed));
  CHECK_MPI(MPI_Type_commit(&mixed));
  CHECK_CLASS(MPI_ERR_OP, MPI_Allreduce(x, y, 1, mixed, MPI_SUM, comm));
  CHECK_MPI(MPI_Type_free(&mixed));
  MPI_Request request;
  CHECK_CLASS(MPI_ERR_ARG, MPI_Ibarrier(comm, NULL));
  if (size > 1) {
    /* MPI_IN_PLACE is the root's alone; every rank but the root errs, the root is not called. */
    if (rank != 0) CHECK_CLASS(MPI_ERR_ARG, MPI_Reduce(MPI_IN_PLACE, y, 1, MPI_INT, MPI_SUM, 0, comm));
  }
  /* The communicator still works after all that. */
  CHECK_MPI(MPI_Iallreduce(MPI_IN_PLACE, x, 4, MPI_INT, MPI_SUM, comm, &request));
  CHECK_MPI(MPI_Wait(&request, MPI_STATUS_IGNORE));
  CHECK_MPI(MPI_Comm_free(&comm));
}

int main(int argc, char **argv) {
  CHECK_MPI(MPI_Init(&argc, &argv));
  CHECK_MPI(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
  CHECK_MPI(MPI_Comm_size(MPI_COMM_WORLD, &size));
  test_barrier(MPI_COMM_WORLD);
  test_bcast(MPI_COMM_WORLD);
  test_predefined_ops(MPI_COMM_WORLD);
  test_loc_ops(MPI_COMM_WORLD);
  test_reductions(MPI_COMM_WORLD);
  test_data_movement(MPI_COMM_WORLD);
  test_derived(MPI_COMM_WORLD);
  test_overlap(MPI_COMM_WORLD);
  test_errors(MPI_COMM_WORLD);
  /* MPI_COMM_SELF has collectives of its own. */
  int one = 5;
  CHECK_MPI(MPI_Allreduce(MPI_IN_PLACE, &one, 1, MPI_INT, MPI_SUM, MPI_COMM_SELF));
  CHECK(one == 5, "allreduce on MPI_COMM_SELF");
  test_barrier(MPI_COMM_WORLD);
  CHECK_MPI(MPI_Finalize());
  if (rank == 0) printf("collectives on %d ranks: ok\n", size);
  return 0;
}

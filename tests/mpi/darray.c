/* MPI_Type_create_darray: for every process of a grid (the call is local, so one rank checks them all),
 * the elements its type selects from a global array, in order, against the owned indices worked out
 * here per dimension (block, cyclic with a block size, none; C and Fortran order); the extent is the
 * whole array and the envelope says MPI_COMBINER_DARRAY. */
#include <stdlib.h>

#include "check.h"

/* The global indices of dimension `d` that grid coordinate c owns, in increasing order. */
static int owned(int g, int p, int dist, int darg, int c, int *out) {
  int n = 0;
  if (dist == MPI_DISTRIBUTE_NONE) {
    for (int i = 0; i < g; ++i) out[n++] = i;
  } else if (dist == MPI_DISTRIBUTE_BLOCK) {
    const int b = darg == MPI_DISTRIBUTE_DFLT_DARG ? (g + p - 1) / p : darg;
    for (int i = c * b; i < g && i < (c + 1) * b; ++i) out[n++] = i;
  } else {
    const int b = darg == MPI_DISTRIBUTE_DFLT_DARG ? 1 : darg;
    for (int start = c * b; start < g; start += b * p) {
      for (int i = start; i < g && i < start + b; ++i) out[n++] = i;
    }
  }
  return n;
}

static void check_grid(int ndims, const int *gsizes, const int *distribs, const int *dargs, const int *psizes, int order) {
  int total = 1, procs = 1;
  for (int d = 0; d < ndims; ++d) {
    total *= gsizes[d];
    procs *= psizes[d];
  }
  int *global = malloc(sizeof(int) * (size_t)total);
  for (int i = 0; i < total; ++i) global[i] = i;
  int *packed = malloc(sizeof(int) * (size_t)total);
  int seen_total = 0;
  for (int rank = 0; rank < procs; ++rank) {
    MPI_Datatype t;
    CHECK_MPI(MPI_Type_create_darray(procs, rank, ndims, gsizes, distribs, dargs, psizes, order, MPI_INT, &t));
    CHECK_MPI(MPI_Type_commit(&t));
    MPI_Aint lb = -1, extent = -1;
    CHECK_MPI(MPI_Type_get_extent(t, &lb, &extent));
    CHECK(lb == 0 && extent == (MPI_Aint)(total * sizeof(int)), "extent %ld, lb %ld", (long)extent, (long)lb);
    int size = -1;
    CHECK_MPI(MPI_Type_size(t, &size));
    int position = 0;
    CHECK_MPI(MPI_Pack(global, 1, t, packed, (int)(total * sizeof(int)), &position, MPI_COMM_SELF));
    CHECK(position == size, "packed %d bytes, size %d", position, size);
    /* Expected: the owned indices per dimension, the fastest dimension varying fastest. */
    int coords[4], r = rank;
    for (int d = ndims - 1; d >= 0; --d) {
      coords[d] = r % psizes[d];
      r /= psizes[d];
    }
    int idx[4][64], cnt[4], count = 1;
    for (int d = 0; d < ndims; ++d) {
      cnt[d] = owned(gsizes[d], psizes[d], distribs[d], dargs[d], coords[d], idx[d]);
      count *= cnt[d];
    }
    CHECK(size == count * (int)sizeof(int), "rank %d: size %d for %d elements", rank, size, count);
    int at[4] = {0, 0, 0, 0};
    for (int k = 0; k < count; ++k) {
      int linear = 0; /* the element's offset in the global array */
      for (int d = 0; d < ndims; ++d) {
        const int dim = order == MPI_ORDER_C ? d : ndims - 1 - d; /* slowest first */
        linear = linear * gsizes[dim] + idx[dim][at[dim]];
      }
      CHECK(packed[k] == linear, "rank %d element %d is %d, want %d", rank, k, packed[k], linear);
      for (int d = ndims - 1; d >= 0; --d) { /* advance the fastest dimension first */
        const int dim = order == MPI_ORDER_C ? d : ndims - 1 - d;
        if (++at[dim] < cnt[dim]) break;
        at[dim] = 0;
      }
    }
    seen_total += count;
    int ni = -1, na = -1, nd = -1, combiner = -1;
    CHECK_MPI(MPI_Type_get_envelope(t, &ni, &na, &nd, &combiner));
    CHECK(combiner == MPI_COMBINER_DARRAY && ni == 4 * ndims + 4 && na == 0 && nd == 1, "envelope %d %d %d %d", ni, na,
          nd, combiner);
    CHECK_MPI(MPI_Type_free(&t));
  }
  CHECK(seen_total == total, "the processes own %d of %d elements", seen_total, total);
  free(global);
  free(packed);
}

int main(int argc, char **argv) {
  CHECK_MPI(MPI_Init(&argc, &argv));
  {
    const int g[2] = {6, 5}, dist[2] = {MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_CYCLIC};
    const int darg[2] = {MPI_DISTRIBUTE_DFLT_DARG, 2}, p[2] = {2, 2};
    check_grid(2, g, dist, darg, p, MPI_ORDER_C);
    check_grid(2, g, dist, darg, p, MPI_ORDER_FORTRAN);
  }
  {
    const int g[3] = {7, 4, 3}, dist[3] = {MPI_DISTRIBUTE_CYCLIC, MPI_DISTRIBUTE_NONE, MPI_DISTRIBUTE_BLOCK};
    const int darg[3] = {MPI_DISTRIBUTE_DFLT_DARG, MPI_DISTRIBUTE_DFLT_DARG, 2}, p[3] = {3, 1, 2};
    check_grid(3, g, dist, darg, p, MPI_ORDER_C);
    check_grid(3, g, dist, darg, p, MPI_ORDER_FORTRAN);
  }
  {
    /* A process that owns nothing: 3 elements in blocks of 2 over 3 processes. */
    const int g[1] = {3}, dist[1] = {MPI_DISTRIBUTE_BLOCK}, darg[1] = {2}, p[1] = {3};
    check_grid(1, g, dist, darg, p, MPI_ORDER_C);
  }
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Datatype t;
  const int g[1] = {8}, none[1] = {MPI_DISTRIBUTE_NONE}, block[1] = {MPI_DISTRIBUTE_BLOCK}, dflt[1] = {MPI_DISTRIBUTE_DFLT_DARG};
  const int two[1] = {2}, small[1] = {3};
  CHECK_CLASS(MPI_ERR_ARG, MPI_Type_create_darray(2, 0, 1, g, none, dflt, two, MPI_ORDER_C, MPI_INT, &t));
  CHECK_CLASS(MPI_ERR_ARG, MPI_Type_create_darray(2, 0, 1, g, block, small, two, MPI_ORDER_C, MPI_INT, &t));
  CHECK_CLASS(MPI_ERR_ARG, MPI_Type_create_darray(3, 0, 1, g, block, dflt, two, MPI_ORDER_C, MPI_INT, &t));
  printf("darray passed\n");
  CHECK_MPI(MPI_Finalize());
  return 0;
}

/* Graph and distributed graph topologies and the neighborhood collectives, also on Cartesian grids:
 * MPI_Dist_graph_create_adjacent (a weighted ring), MPI_Dist_graph_create (every edge named by rank 0),
 * MPI_Graph_create, the queries, and MPI_Neighbor_allgather(v) / alltoall(v/w), blocking and not, with
 * every block checked; on a Cartesian grid the MPI_PROC_NULL neighbors' blocks stay untouched and a
 * periodic dimension of 1 or 2 (one peer on both sides) gets each direction's data right. Any size. */
#include <stdlib.h>
#include <string.h>

#include "check.h"

static int rank, size;

static void sort_ints(int *v, int n) {
  for (int i = 1; i < n; ++i) {
    for (int j = i; j > 0 && v[j - 1] > v[j]; --j) {
      const int t = v[j];
      v[j] = v[j - 1];
      v[j - 1] = t;
    }
  }
}

static void ring(void) {
  const int prev = (rank + size - 1) % size, next = (rank + 1) % size;
  const int in_weight = 10 + prev, out_weight = 10 + rank;
  MPI_Comm g;
  CHECK_MPI(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, &prev, &in_weight, 1, &next, &out_weight,
                                           MPI_INFO_NULL, 0, &g));
  int status = -1, indeg = -1, outdeg = -1, weighted = -1;
  CHECK_MPI(MPI_Topo_test(g, &status));
  CHECK(status == MPI_DIST_GRAPH, "MPI_Topo_test says %d", status);
  CHECK_MPI(MPI_Dist_graph_neighbors_count(g, &indeg, &outdeg, &weighted));
  CHECK(indeg == 1 && outdeg == 1 && weighted == 1, "counts %d %d %d", indeg, outdeg, weighted);
  int src = -1, dst = -1, sw = -1, dw = -1;
  CHECK_MPI(MPI_Dist_graph_neighbors(g, 1, &src, &sw, 1, &dst, &dw));
  CHECK(src == prev && dst == next && sw == 10 + prev && dw == 10 + rank, "neighbors %d %d weights %d %d", src, dst, sw, dw);

  for (int nb = 0; nb < 2; ++nb) {
    MPI_Request rq = MPI_REQUEST_NULL;
    int got[4] = {-1, -1, -1, -1};
    const int mine[2] = {rank * 2, rank * 2 + 1};
    if (nb) CHECK_MPI(MPI_Ineighbor_allgather(mine, 2, MPI_INT, got, 2, MPI_INT, g, &rq));
    else CHECK_MPI(MPI_Neighbor_allgather(mine, 2, MPI_INT, got, 2, MPI_INT, g));
    if (nb) CHECK_MPI(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    CHECK(got[0] == prev * 2 && got[1] == prev * 2 + 1, "allgather from %d: %d %d", prev, got[0], got[1]);
    /* alltoallv: rank r sends r + 1 ints, placed after a gap. */
    int out[8], in[8], scount = rank + 1, rcount = prev + 1, sdispl = 1, rdispl = 2;
    for (int k = 0; k < 8; ++k) {
      out[k] = rank * 100 + k;
      in[k] = -1;
    }
    if (nb) CHECK_MPI(MPI_Ineighbor_alltoallv(out, &scount, &sdispl, MPI_INT, in, &rcount, &rdispl, MPI_INT, g, &rq));
    else CHECK_MPI(MPI_Neighbor_alltoallv(out, &scount, &sdispl, MPI_INT, in, &rcount, &rdispl, MPI_INT, g));
    if (nb) CHECK_MPI(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    CHECK(in[0] == -1 && in[1] == -1, "alltoallv wrote before its displacement");
    for (int k = 0; k < prev + 1; ++k) CHECK(in[2 + k] == prev * 100 + 1 + k, "alltoallv [%d] = %d", k, in[2 + k]);
    /* alltoallw: a double, at byte displacements. */
    double dout[2] = {0, rank + 0.25}, din[2] = {-1, -1};
    MPI_Aint sb = sizeof(double), rb = sizeof(double);
    int one = 1;
    MPI_Datatype dt = MPI_DOUBLE;
    if (nb) CHECK_MPI(MPI_Ineighbor_alltoallw(dout, &one, &sb, &dt, din, &one, &rb, &dt, g, &rq));
    else CHECK_MPI(MPI_Neighbor_alltoallw(dout, &one, &sb, &dt, din, &one, &rb, &dt, g));
    if (nb) CHECK_MPI(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    CHECK(din[0] == -1 && din[1] == prev + 0.25, "alltoallw: %g %g", din[0], din[1]);
    /* The same from MPI_BOTTOM, the displacements absolute addresses (mpi4py does this): it crashed. */
    double bout = rank + 0.5, bin = -1;
    MPI_Aint sa, ra;
    CHECK_MPI(MPI_Get_address(&bout, &sa));
    CHECK_MPI(MPI_Get_address(&bin, &ra));
    if (nb) CHECK_MPI(MPI_Ineighbor_alltoallw(MPI_BOTTOM, &one, &sa, &dt, MPI_BOTTOM, &one, &ra, &dt, g, &rq));
    else CHECK_MPI(MPI_Neighbor_alltoallw(MPI_BOTTOM, &one, &sa, &dt, MPI_BOTTOM, &one, &ra, &dt, g));
    if (nb) CHECK_MPI(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    CHECK(bin == prev + 0.5, "alltoallw from MPI_BOTTOM: %g", bin);
  }
  CHECK_MPI(MPI_Comm_free(&g));
}

/* Rank 0 names every edge: r -> r+1 and r -> 0 for every r (a ring plus a star into 0). */
static void named_by_one(void) {
  int n = 0;
  int *sources = NULL, *degrees = NULL, *dests = NULL;
  if (rank == 0) {
    n = size;
    sources = malloc(sizeof(int) * (size_t)size);
    degrees = malloc(sizeof(int) * (size_t)size);
    dests = malloc(sizeof(int) * 2 * (size_t)size);
    for (int r = 0; r < size; ++r) {
      sources[r] = r;
      degrees[r] = 2;
      dests[2 * r] = (r + 1) % size;
      dests[2 * r + 1] = 0;
    }
  }
  MPI_Comm g;
  CHECK_MPI(MPI_Dist_graph_create(MPI_COMM_WORLD, n, sources, degrees, dests, MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &g));
  free(sources);
  free(degrees);
  free(dests);
  int indeg = -1, outdeg = -1, weighted = -1;
  CHECK_MPI(MPI_Dist_graph_neighbors_count(g, &indeg, &outdeg, &weighted));
  const int want_in = rank == 0 ? size + 1 : 1;
  CHECK(indeg == want_in && outdeg == 2 && weighted == 0, "counts %d %d %d", indeg, outdeg, weighted);
  int *in = malloc(sizeof(int) * (size_t)indeg), out[2];
  CHECK_MPI(MPI_Dist_graph_neighbors(g, indeg, in, MPI_UNWEIGHTED, 2, out, MPI_UNWEIGHTED));
  sort_ints(in, indeg);
  sort_ints(out, 2);
  int want[2] = {(rank + 1) % size, 0};
  sort_ints(want, 2);
  CHECK(out[0] == want[0] && out[1] == want[1], "out-neighbors %d %d", out[0], out[1]);
  if (rank != 0) CHECK(in[0] == rank - 1, "in-neighbor %d", in[0]);
  /* Each in-neighbor's rank arrives once per edge. */
  int *got = malloc(sizeof(int) * (size_t)indeg);
  CHECK_MPI(MPI_Neighbor_allgather(&rank, 1, MPI_INT, got, 1, MPI_INT, g));
  int *order = malloc(sizeof(int) * (size_t)indeg);
  CHECK_MPI(MPI_Dist_graph_neighbors(g, indeg, order, MPI_UNWEIGHTED, 2, out, MPI_UNWEIGHTED));
  for (int i = 0; i < indeg; ++i) CHECK(got[i] == order[i], "block %d came from %d, not %d", i, got[i], order[i]);
  free(in);
  free(got);
  free(order);
  CHECK_MPI(MPI_Comm_free(&g));
}

/* MPI_Graph_create: a ring where each node lists both neighbors. */
static void graph(void) {
  int *index = malloc(sizeof(int) * (size_t)size), *edges = malloc(sizeof(int) * 2 * (size_t)size);
  for (int r = 0; r < size; ++r) {
    index[r] = 2 * (r + 1);
    edges[2 * r] = (r + size - 1) % size;
    edges[2 * r + 1] = (r + 1) % size;
  }
  MPI_Comm g;
  CHECK_MPI(MPI_Graph_create(MPI_COMM_WORLD, size, index, edges, 0, &g));
  int status = -1, nnodes = -1, nedges = -1, count = -1, nb[2];
  CHECK_MPI(MPI_Topo_test(g, &status));
  CHECK_MPI(MPI_Graphdims_get(g, &nnodes, &nedges));
  CHECK_MPI(MPI_Graph_neighbors_count(g, rank, &count));
  CHECK_MPI(MPI_Graph_neighbors(g, rank, 2, nb));
  CHECK(status == MPI_GRAPH && nnodes == size && nedges == 2 * size && count == 2, "graph %d %d %d %d", status, nnodes,
        nedges, count);
  CHECK(nb[0] == (rank + size - 1) % size && nb[1] == (rank + 1) % size, "graph neighbors %d %d", nb[0], nb[1]);
  int *gi = malloc(sizeof(int) * (size_t)size), *ge = malloc(sizeof(int) * 2 * (size_t)size);
  CHECK_MPI(MPI_Graph_get(g, size, 2 * size, gi, ge));
  CHECK(memcmp(gi, index, sizeof(int) * (size_t)size) == 0 && memcmp(ge, edges, sizeof(int) * 2 * (size_t)size) == 0,
        "MPI_Graph_get");
  /* Block 0 to the left neighbor, block 1 to the right; received: block 0 from the left, 1 from the right. */
  int out[2] = {rank * 10 + 0, rank * 10 + 1}, in[2] = {-1, -1};
  CHECK_MPI(MPI_Neighbor_alltoall(out, 1, MPI_INT, in, 1, MPI_INT, g));
  const int left = (rank + size - 1) % size, right = (rank + 1) % size;
  if (size > 2) {
    CHECK(in[0] == left * 10 + 1 && in[1] == right * 10 + 0, "graph alltoall %d %d", in[0], in[1]);
  }
  free(index);
  free(edges);
  free(gi);
  free(ge);
  CHECK_MPI(MPI_Comm_free(&g));
}

/* A Cartesian grid: 1-D periodic over every rank, then 2-D without periods. Block 2d gets the data the
 * negative-direction neighbor sent in its positive direction, block 2d+1 the other way. */
static void cartesian(void) {
  int dims[2] = {size, 0}, periods[2] = {1, 0};
  MPI_Comm c;
  CHECK_MPI(MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &c));
  int out[2] = {rank * 10 + 0, rank * 10 + 1}, in[2] = {-1, -1};
  CHECK_MPI(MPI_Neighbor_alltoall(out, 1, MPI_INT, in, 1, MPI_INT, c));
  const int left = (rank + size - 1) % size, right = (rank + 1) % size;
  CHECK(in[0] == left * 10 + 1 && in[1] == right * 10 + 0, "periodic: %d %d (left %d, right %d)", in[0], in[1], left,
        right);
  CHECK_MPI(MPI_Comm_free(&c));

  dims[0] = 0;
  dims[1] = 0;
  CHECK_MPI(MPI_Dims_create(size, 2, dims));
  periods[0] = 0;
  CHECK_MPI(MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &c));
  int o[4], i4[4] = {-1, -1, -1, -1};
  for (int k = 0; k < 4; ++k) o[k] = rank * 10 + k;
  MPI_Request rq;
  CHECK_MPI(MPI_Ineighbor_alltoall(o, 1, MPI_INT, i4, 1, MPI_INT, c, &rq));
  CHECK_MPI(MPI_Wait(&rq, MPI_STATUS_IGNORE));
  for (int d = 0; d < 2; ++d) {
    int src = -1, dst = -1;
    CHECK_MPI(MPI_Cart_shift(c, d, 1, &src, &dst));
    CHECK(src == MPI_PROC_NULL ? i4[2 * d] == -1 : i4[2 * d] == src * 10 + 2 * d + 1, "dim %d from below: %d", d, i4[2 * d]);
    CHECK(dst == MPI_PROC_NULL ? i4[2 * d + 1] == -1 : i4[2 * d + 1] == dst * 10 + 2 * d, "dim %d from above: %d", d,
          i4[2 * d + 1]);
  }
  CHECK_MPI(MPI_Comm_free(&c));
}

int main(int argc, char **argv) {
  CHECK_MPI(MPI_Init(&argc, &argv));
  CHECK_MPI(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
  CHECK_MPI(MPI_Comm_size(MPI_COMM_WORLD, &size));
  ring();
  named_by_one();
  graph();
  cartesian();
  /* No topology: no neighbors. */
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  int x = 0, y = 0;
  CHECK_CLASS(MPI_ERR_TOPOLOGY, MPI_Neighbor_allgather(&x, 1, MPI_INT, &y, 1, MPI_INT, MPI_COMM_WORLD));
  int bad = size;
  MPI_Comm none;
  CHECK_CLASS(MPI_ERR_RANK, MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, &bad, MPI_UNWEIGHTED, 0, NULL,
                                                           MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &none));
  if (rank == 0) printf("topology_graph: %d ranks passed\n", size);
  CHECK_MPI(MPI_Finalize());
  return 0;
}

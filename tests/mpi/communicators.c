/* Communicators, groups, Cartesian topologies, info objects and attribute caching: MPI_Comm_dup,
 * split (with keys that reorder, and MPI_UNDEFINED), split_type, create, compare, free, names; the
 * group calls; dims_create and the cart calls; info objects; keyvals with copy and delete callbacks.
 * Messages on a duplicate never match receives on the original, collectives run on every new
 * communicator, and many communicators can be made and freed. Runs at any number of ranks. */
#include <string.h>

#include <stdlib.h>

#include "check.h"

static int rank;
static int size;

static void test_dup_and_isolation(void) {
  MPI_Comm dup;
  CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
  int result = -1;
  CHECK_MPI(MPI_Comm_compare(MPI_COMM_WORLD, dup, &result));
  CHECK(result == MPI_CONGRUENT, "dup compares %d, not MPI_CONGRUENT", result);
  CHECK_MPI(MPI_Comm_compare(dup, dup, &result));
  CHECK(result == MPI_IDENT, "a communicator compares %d with itself", result);
  int dup_rank = -1, dup_size = -1;
  CHECK_MPI(MPI_Comm_rank(dup, &dup_rank));
  CHECK_MPI(MPI_Comm_size(dup, &dup_size));
  CHECK(dup_rank == rank && dup_size == size, "dup: rank %d size %d", dup_rank, dup_size);

  /* The same tag on both: each receive gets the message of its own communicator, whatever the order. */
  const int right = (rank + 1) % size, left = (rank + size - 1) % size;
  int on_world = -1, on_dup = -1;
  MPI_Request requests[4];
  CHECK_MPI(MPI_Irecv(&on_dup, 1, MPI_INT, left, 5, dup, &requests[0]));
  CHECK_MPI(MPI_Irecv(&on_world, 1, MPI_INT, left, 5, MPI_COMM_WORLD, &requests[1]));
  const int world_value = 1000 + rank, dup_value = 2000 + rank;
  CHECK_MPI(MPI_Isend(&world_value, 1, MPI_INT, right, 5, MPI_COMM_WORLD, &requests[2]));
  CHECK_MPI(MPI_Isend(&dup_value, 1, MPI_INT, right, 5, dup, &requests[3]));
  CHECK_MPI(MPI_Waitall(4, requests, MPI_STATUSES_IGNORE));
  CHECK(on_world == 1000 + left && on_dup == 2000 + left, "messages crossed communicators: %d %d", on_world, on_dup);

  /* Names: predefined, set, unset on a new communicator. */
  char name[MPI_MAX_OBJECT_NAME];
  int len = -1;
  CHECK_MPI(MPI_Comm_get_name(MPI_COMM_WORLD, name, &len));
  CHECK(strcmp(name, "MPI_COMM_WORLD") == 0 && len == 14, "world's name: '%s'", name);
  CHECK_MPI(MPI_Comm_get_name(dup, name, &len));
  CHECK(len == 0 && name[0] == '\0', "a new communicator has a name: '%s'", name);
  CHECK_MPI(MPI_Comm_set_name(dup, "the duplicate"));
  CHECK_MPI(MPI_Comm_get_name(dup, name, &len));
  CHECK(strcmp(name, "the duplicate") == 0 && len == 13, "set name: '%s'", name);

  /* Inter-communicators do not exist here. */
  int inter = -1;
  CHECK_MPI(MPI_Comm_test_inter(dup, &inter));
  CHECK(inter == 0, "MPI_Comm_test_inter: %d", inter);

  CHECK_MPI(MPI_Comm_free(&dup));
  CHECK(dup == MPI_COMM_NULL, "MPI_Comm_free did not reset the handle");
}

static void test_split(void) {
  /* Two colors, keys reversing the order within each. */
  const int color = rank % 2;
  MPI_Comm half;
  CHECK_MPI(MPI_Comm_split(MPI_COMM_WORLD, color, size - rank, &half));
  int half_rank = -1, half_size = -1;
  CHECK_MPI(MPI_Comm_rank(half, &half_rank));
  CHECK_MPI(MPI_Comm_size(half, &half_size));
  const int members = color == 0 ? (size + 1) / 2 : size / 2;
  CHECK(half_size == members, "split: size %d, expected %d", half_size, members);
  CHECK(half_rank == members - 1 - rank / 2, "split: rank %d, expected %d", half_rank, members - 1 - rank / 2);
  /* A collective on it: the sum of the world ranks of my color. */
  int sum = 0, want = 0;
  CHECK_MPI(MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, half));
  for (int r = color; r < size; r += 2) want += r;
  CHECK(sum == want, "allreduce on a split: %d, expected %d", sum, want);
  /* Point-to-point on it uses its own ranks. */
  if (half_size > 1) {
    const int to = (half_rank + 1) % half_size, from = (half_rank + half_size - 1) % half_size;
    int got = -1;
    CHECK_MPI(MPI_Sendrecv(&half_rank, 1, MPI_INT, to, 0, &got, 1, MPI_INT, from, 0, half, MPI_STATUS_IGNORE));
    CHECK(got == from, "sendrecv on a split: %d from %d", got, from);
  }
  int result = -1;
  CHECK_MPI(MPI_Comm_compare(MPI_COMM_WORLD, half, &result));
  CHECK(result == (size == 1 ? MPI_CONGRUENT : MPI_UNEQUAL), "world vs a split: %d", result);

  /* MPI_UNDEFINED: rank 0 stays out. */
  MPI_Comm rest;
  CHECK_MPI(MPI_Comm_split(MPI_COMM_WORLD, rank == 0 ? MPI_UNDEFINED : 1, 0, &rest));
  CHECK((rank == 0) == (rest == MPI_COMM_NULL), "MPI_UNDEFINED color");
  if (rest != MPI_COMM_NULL) {
    int n = 0;
    CHECK_MPI(MPI_Comm_size(rest, &n));
    CHECK(n == size - 1, "split without rank 0: size %d", n);
    CHECK_MPI(MPI_Barrier(rest));
    CHECK_MPI(MPI_Comm_free(&rest));
  }

  /* Splitting a split, and a similar (same members, other order) communicator. */
  MPI_Comm quarter;
  CHECK_MPI(MPI_Comm_split(half, half_rank % 2, half_rank, &quarter));
  int q = 0;
  CHECK_MPI(MPI_Allreduce(&(int){1}, &q, 1, MPI_INT, MPI_SUM, quarter));
  CHECK(q == (half_rank % 2 == 0 ? (half_size + 1) / 2 : half_size / 2), "split of a split: %d members", q);
  MPI_Comm reversed;
  CHECK_MPI(MPI_Comm_split(MPI_COMM_WORLD, 0, size - rank, &reversed));
  CHECK_MPI(MPI_Comm_compare(MPI_COMM_WORLD, reversed, &result));
  CHECK(result == (size == 1 ? MPI_CONGRUENT : MPI_SIMILAR), "world vs reversed: %d", result);
  CHECK_MPI(MPI_Comm_free(&reversed));
  CHECK_MPI(MPI_Comm_free(&quarter));
  CHECK_MPI(MPI_Comm_free(&half));

  /* All ranks of this job share a host. */
  MPI_Comm node;
  CHECK_MPI(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node));
  int node_size = 0, node_rank = -1;
  CHECK_MPI(MPI_Comm_size(node, &node_size));
  CHECK_MPI(MPI_Comm_rank(node, &node_rank));
  CHECK(node_size == size && node_rank == rank, "split_type shared: rank %d of %d", node_rank, node_size);
  CHECK_MPI(MPI_Comm_free(&node));
  CHECK_MPI(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_UNDEFINED, rank, MPI_INFO_NULL, &node));
  CHECK(node == MPI_COMM_NULL, "split_type MPI_UNDEFINED gave a communicator");
}

/* Many communicators made and freed: contexts keep being agreed. */
static void test_many(void) {
  for (int i = 0; i < 50; ++i) {
    MPI_Comm a, b;
    CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &a));
    CHECK_MPI(MPI_Comm_split(a, rank % 3, rank, &b));
    int x = 1, y = 0;
    CHECK_MPI(MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, b));
    int want = 0;
    for (int r = 0; r < size; ++r) want += r % 3 == rank % 3;
    CHECK(y == want, "round %d: %d members, expected %d", i, y, want);
    CHECK_MPI(MPI_Comm_free(&b));
    CHECK_MPI(MPI_Comm_free(&a));
  }
}

static void test_groups(void) {
  MPI_Group world, evens, odds, first_two, both, none, back;
  CHECK_MPI(MPI_Comm_group(MPI_COMM_WORLD, &world));
  int n = -1, r = -1;
  CHECK_MPI(MPI_Group_size(world, &n));
  CHECK_MPI(MPI_Group_rank(world, &r));
  CHECK(n == size && r == rank, "world group: rank %d of %d", r, n);

  int ranges[1][3] = {{0, size - 1, 2}};
  CHECK_MPI(MPI_Group_range_incl(world, 1, ranges, &evens));
  CHECK_MPI(MPI_Group_difference(world, evens, &odds));
  CHECK_MPI(MPI_Group_size(evens, &n));
  CHECK(n == (size + 1) / 2, "evens: %d", n);
  CHECK_MPI(MPI_Group_rank(odds, &r));
  CHECK(r == (rank % 2 == 1 ? rank / 2 : MPI_UNDEFINED), "rank in odds: %d", r);
  CHECK_MPI(MPI_Group_union(odds, evens, &both));
  int result = -1;
  CHECK_MPI(MPI_Group_compare(both, world, &result));
  CHECK(result == (size <= 1 ? MPI_IDENT : MPI_SIMILAR), "odds + evens vs world: %d", result);
  CHECK_MPI(MPI_Group_intersection(odds, evens, &none));
  CHECK(none == MPI_GROUP_EMPTY, "the intersection of odds and evens is not MPI_GROUP_EMPTY");

  /* Translate: rank k of evens is world rank 2k; world ranks that are odd are not in evens. */
  int *ranks1 = malloc((size_t)size * sizeof(int)), *ranks2 = malloc((size_t)size * sizeof(int));
  for (int i = 0; i < size; ++i) ranks1[i] = i;
  CHECK_MPI(MPI_Group_translate_ranks(world, size, ranks1, evens, ranks2));
  for (int i = 0; i < size; ++i) {
    CHECK(ranks2[i] == (i % 2 == 0 ? i / 2 : MPI_UNDEFINED), "translate %d -> %d", i, ranks2[i]);
  }
  ranks1[0] = MPI_PROC_NULL;
  CHECK_MPI(MPI_Group_translate_ranks(world, 1, ranks1, evens, ranks2));
  CHECK(ranks2[0] == MPI_PROC_NULL, "translate MPI_PROC_NULL");

  /* incl in a new order, excl, and back. */
  const int pick = size >= 2 ? 2 : 1;
  int order[2] = {size - 1, 0};
  CHECK_MPI(MPI_Group_incl(world, pick, order, &first_two));
  CHECK_MPI(MPI_Group_rank(first_two, &r));
  CHECK(r == (rank == size - 1 ? 0 : rank == 0 ? pick - 1 : MPI_UNDEFINED), "incl: my rank %d", r);
  CHECK_MPI(MPI_Group_excl(world, pick, order, &back));
  CHECK_MPI(MPI_Group_size(back, &n));
  CHECK(n == size - pick, "excl: %d", n);

  /* A communicator of the evens, in the evens' order. */
  MPI_Comm even_comm;
  CHECK_MPI(MPI_Comm_create(MPI_COMM_WORLD, evens, &even_comm));
  CHECK((rank % 2 == 0) == (even_comm != MPI_COMM_NULL), "MPI_Comm_create membership");
  if (even_comm != MPI_COMM_NULL) {
    int er = -1, sum = 0, want = 0;
    CHECK_MPI(MPI_Comm_rank(even_comm, &er));
    CHECK(er == rank / 2, "rank in the evens' communicator: %d", er);
    CHECK_MPI(MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, even_comm));
    for (int i = 0; i < size; i += 2) want += i;
    CHECK(sum == want, "allreduce on the evens: %d", sum);
    MPI_Group g;
    CHECK_MPI(MPI_Comm_group(even_comm, &g));
    CHECK_MPI(MPI_Group_compare(g, evens, &result));
    CHECK(result == MPI_IDENT, "the evens' communicator's group: %d", result);
    CHECK_MPI(MPI_Group_free(&g));
    CHECK_MPI(MPI_Comm_free(&even_comm));
  }
  free(ranks1);
  free(ranks2);

  /* Errors come back through MPI_COMM_WORLD's handler, set to return for this. */
  CHECK_MPI(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
  int bad[1] = {size};
  MPI_Group out;
  CHECK_CLASS(MPI_ERR_RANK, MPI_Group_incl(world, 1, bad, &out));
  int twice[2] = {0, 0};
  CHECK_CLASS(MPI_ERR_RANK, MPI_Group_incl(world, 2, twice, &out));
  CHECK_CLASS(MPI_ERR_GROUP, MPI_Group_size(MPI_GROUP_NULL, &n));
  CHECK_MPI(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));

  MPI_Group *groups[] = {&world, &evens, &odds, &first_two, &both, &none, &back};
  for (size_t i = 0; i < sizeof groups / sizeof groups[0]; ++i) {
    CHECK_MPI(MPI_Group_free(groups[i]));
    CHECK(*groups[i] == MPI_GROUP_NULL, "MPI_Group_free did not reset handle %zu", i);
  }
}

static void d2_check(int n, int first, int second) {
  int d[2] = {0, 0};
  CHECK_MPI(MPI_Dims_create(n, 2, d));
  CHECK(d[0] == first && d[1] == second, "dims_create(%d, 2): %d x %d, expected %d x %d", n, d[0], d[1], first, second);
}

static void test_cart(void) {
  int dims[3] = {0, 0, 0};
  CHECK_MPI(MPI_Dims_create(12, 2, dims));
  CHECK(dims[0] == 4 && dims[1] == 3, "dims_create(12, 2): %d x %d", dims[0], dims[1]);
  dims[0] = 0, dims[1] = 3, dims[2] = 0;
  CHECK_MPI(MPI_Dims_create(24, 3, dims));
  CHECK(dims[0] == 4 && dims[1] == 3 && dims[2] == 2, "dims_create(24, 3) with 3 fixed: %d %d %d", dims[0], dims[1],
        dims[2]);
  dims[0] = dims[1] = 0;
  CHECK_MPI(MPI_Dims_create(size, 2, dims));
  CHECK(dims[0] * dims[1] == size && dims[0] >= dims[1], "dims_create(%d, 2): %d x %d", size, dims[0], dims[1]);
  /* The most balanced split, which taking prime factors largest first misses (72 = 12 x 6 that way):
   * for every n up to 400 in 2 and 3 dimensions, no other split has a smaller spread between the
   * largest and smallest dimension. */
  for (int n = 1; n <= 400; ++n) {
    for (int nd = 2; nd <= 3; ++nd) {
      int d[3] = {0, 0, 0};
      CHECK_MPI(MPI_Dims_create(n, nd, d));
      const int spread = d[0] - d[nd - 1];
      CHECK(d[0] * d[1] * (nd == 3 ? d[2] : 1) == n && d[0] >= d[1] && d[1] >= d[nd - 1], "dims_create(%d, %d)", n, nd);
      for (int a = 1; a <= n; ++a) {
        for (int b = 1; b <= a && a * b <= n; ++b) {
          if (nd == 2 && a * b == n) CHECK(a - b >= spread, "dims_create(%d, 2) = %d x %d, but %d x %d", n, d[0], d[1], a, b);
          if (nd == 3 && n % (a * b) == 0 && n / (a * b) <= b) {
            CHECK(a - n / (a * b) >= spread, "dims_create(%d, 3) = %d x %d x %d, but %d x %d x %d", n, d[0], d[1], d[2], a,
                  b, n / (a * b));
          }
        }
      }
    }
  }
  d2_check(72, 9, 8);
  /* No reordering: a process keeps its rank where the topology has room for it. */
  int mapped = -2;
  const int map_dims[1] = {1}, map_periods[1] = {0};
  CHECK_MPI(MPI_Cart_map(MPI_COMM_WORLD, 1, map_dims, map_periods, &mapped));
  CHECK(mapped == (rank == 0 ? 0 : MPI_UNDEFINED), "MPI_Cart_map onto one node: %d", mapped);
  int *index = malloc(sizeof(int) * (size_t)size), *edges = malloc(sizeof(int) * (size_t)size);
  CHECK(index != NULL && edges != NULL, "out of memory");
  for (int i = 0; i < size; ++i) {
    index[i] = i + 1;
    edges[i] = (i + 1) % size;
  }
  CHECK_MPI(MPI_Graph_map(MPI_COMM_WORLD, size, index, edges, &mapped));
  CHECK(mapped == rank, "MPI_Graph_map of a ring of all ranks: %d", mapped);
  free(index);
  free(edges);
  /* An empty message of no type (as MPICH's recvnull sends). */
  MPI_Status null_status;
  CHECK_MPI(MPI_Recv(NULL, 0, MPI_DATATYPE_NULL, MPI_PROC_NULL, 1, MPI_COMM_WORLD, &null_status));
  CHECK(null_status.MPI_SOURCE == MPI_PROC_NULL, "receive from MPI_PROC_NULL");
  CHECK_MPI(MPI_Sendrecv(NULL, 0, MPI_DATATYPE_NULL, rank, 2, NULL, 0, MPI_DATATYPE_NULL, rank, 2, MPI_COMM_WORLD,
                         &null_status));

  /* A periodic ring of rows: dims[0] x dims[1], periodic in the second dimension only. */
  const int periods[2] = {0, 1};
  MPI_Comm grid;
  CHECK_MPI(MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &grid));
  int status = -1, ndims = -1;
  CHECK_MPI(MPI_Topo_test(grid, &status));
  CHECK(status == MPI_CART, "MPI_Topo_test: %d", status);
  CHECK_MPI(MPI_Topo_test(MPI_COMM_WORLD, &status));
  CHECK(status == MPI_UNDEFINED, "world has a topology: %d", status);
  CHECK_MPI(MPI_Cartdim_get(grid, &ndims));
  CHECK(ndims == 2, "cartdim %d", ndims);
  int coords[2], got_dims[2], got_periods[2], r = -1;
  CHECK_MPI(MPI_Cart_coords(grid, rank, 2, coords));
  CHECK(coords[0] == rank / dims[1] && coords[1] == rank % dims[1], "coords of %d: (%d, %d)", rank, coords[0],
        coords[1]);
  CHECK_MPI(MPI_Cart_rank(grid, coords, &r));
  CHECK(r == rank, "cart_rank of my coords: %d", r);
  CHECK_MPI(MPI_Cart_get(grid, 2, got_dims, got_periods, coords));
  CHECK(got_dims[0] == dims[0] && got_periods[0] == 0 && got_periods[1] == 1, "cart_get");
  /* Periodic: coordinates wrap. */
  int far[2] = {coords[0], coords[1] + dims[1]};
  CHECK_MPI(MPI_Cart_rank(grid, far, &r));
  CHECK(r == rank, "cart_rank wraps a periodic dimension: %d", r);
  /* Shifts: along the periodic dimension there is always a neighbour; along the other, not at the edges. */
  int source = -1, dest = -1;
  CHECK_MPI(MPI_Cart_shift(grid, 1, 1, &source, &dest));
  CHECK(dest == coords[0] * dims[1] + (coords[1] + 1) % dims[1], "shift along 1: dest %d", dest);
  CHECK(source == coords[0] * dims[1] + (coords[1] + dims[1] - 1) % dims[1], "shift along 1: source %d", source);
  CHECK_MPI(MPI_Cart_shift(grid, 0, 1, &source, &dest));
  CHECK(dest == (coords[0] + 1 < dims[0] ? rank + dims[1] : MPI_PROC_NULL), "shift along 0: dest %d", dest);
  CHECK(source == (coords[0] > 0 ? rank - dims[1] : MPI_PROC_NULL), "shift along 0: source %d", source);
  /* The neighbours exchange along the periodic dimension. */
  CHECK_MPI(MPI_Cart_shift(grid, 1, 1, &source, &dest));
  int from = -1;
  CHECK_MPI(MPI_Sendrecv(&rank, 1, MPI_INT, dest, 0, &from, 1, MPI_INT, source, 0, grid, MPI_STATUS_IGNORE));
  CHECK(from == source, "cart sendrecv: %d from %d", from, source);

  /* Rows: keep dimension 1. */
  const int remain[2] = {0, 1};
  MPI_Comm row;
  CHECK_MPI(MPI_Cart_sub(grid, remain, &row));
  int row_size = -1, row_rank = -1, sum = 0;
  CHECK_MPI(MPI_Comm_size(row, &row_size));
  CHECK_MPI(MPI_Comm_rank(row, &row_rank));
  CHECK(row_size == dims[1] && row_rank == coords[1], "cart_sub: rank %d of %d", row_rank, row_size);
  CHECK_MPI(MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, row));
  CHECK(sum == dims[1] * (coords[0] * dims[1]) + dims[1] * (dims[1] - 1) / 2, "allreduce along a row: %d", sum);
  CHECK_MPI(MPI_Cartdim_get(row, &ndims));
  CHECK(ndims == 1, "a row has %d dimensions", ndims);
  CHECK_MPI(MPI_Comm_free(&row));

  /* A grid smaller than the communicator leaves the others out. */
  int one[1] = {1};
  MPI_Comm single;
  CHECK_MPI(MPI_Cart_create(MPI_COMM_WORLD, 1, one, periods, 1, &single));
  CHECK((rank == 0) == (single != MPI_COMM_NULL), "a 1-node grid");
  if (single != MPI_COMM_NULL) CHECK_MPI(MPI_Comm_free(&single));

  CHECK_MPI(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
  CHECK_CLASS(MPI_ERR_TOPOLOGY, MPI_Cartdim_get(MPI_COMM_WORLD, &ndims));
  int too_many[1] = {size + 1};
  CHECK_CLASS(MPI_ERR_TOPOLOGY, MPI_Cart_create(MPI_COMM_WORLD, 1, too_many, periods, 0, &single));
  int bad_dims[2] = {5, 0};
  CHECK_CLASS(MPI_ERR_DIMS, MPI_Dims_create(12, 2, bad_dims));
  CHECK_MPI(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
  CHECK_MPI(MPI_Comm_free(&grid));
}

static void test_info(void) {
  MPI_Info info, copy;
  CHECK_MPI(MPI_Info_create(&info));
  CHECK_MPI(MPI_Info_set(info, "alpha", "1"));
  CHECK_MPI(MPI_Info_set(info, "beta", "two"));
  CHECK_MPI(MPI_Info_set(info, "alpha", "one"));
  int nkeys = -1, flag = -1, len = -1;
  CHECK_MPI(MPI_Info_get_nkeys(info, &nkeys));
  CHECK(nkeys == 2, "nkeys %d", nkeys);
  char key[MPI_MAX_INFO_KEY + 1], value[MPI_MAX_INFO_VAL + 1];
  CHECK_MPI(MPI_Info_get_nthkey(info, 1, key));
  CHECK(strcmp(key, "beta") == 0, "second key '%s'", key);
  CHECK_MPI(MPI_Info_get(info, "alpha", MPI_MAX_INFO_VAL, value, &flag));
  CHECK(flag && strcmp(value, "one") == 0, "alpha = '%s'", value);
  CHECK_MPI(MPI_Info_get(info, "beta", 1, value, &flag));
  CHECK(flag && strcmp(value, "t") == 0, "a short buffer truncates: '%s'", value);
  CHECK_MPI(MPI_Info_get_valuelen(info, "beta", &len, &flag));
  CHECK(flag && len == 3, "valuelen %d", len);
  CHECK_MPI(MPI_Info_get(info, "gamma", MPI_MAX_INFO_VAL, value, &flag));
  CHECK(!flag, "gamma is set");
  /* MPI-4's MPI_Info_get_string: the length asked with buflen 0, then a short and a whole read. */
  int buflen = 0;
  CHECK_MPI(MPI_Info_get_string(info, "beta", &buflen, NULL, &flag));
  CHECK(flag && buflen == 4, "MPI_Info_get_string length %d", buflen);
  buflen = 2;
  CHECK_MPI(MPI_Info_get_string(info, "beta", &buflen, value, &flag));
  CHECK(flag && buflen == 4 && strcmp(value, "t") == 0, "short read '%s' (%d)", value, buflen);
  buflen = (int)sizeof value;
  CHECK_MPI(MPI_Info_get_string(info, "beta", &buflen, value, &flag));
  CHECK(flag && buflen == 4 && strcmp(value, "two") == 0, "whole read '%s'", value);
  buflen = 8;
  CHECK_MPI(MPI_Info_get_string(info, "gamma", &buflen, value, &flag));
  CHECK(!flag && buflen == 8, "a missing key leaves buflen alone");
  CHECK_MPI(MPI_Info_dup(info, &copy));
  CHECK_MPI(MPI_Info_delete(info, "alpha"));
  CHECK_MPI(MPI_Info_get_nkeys(info, &nkeys));
  CHECK(nkeys == 1, "nkeys after delete %d", nkeys);
  CHECK_MPI(MPI_Info_get_nkeys(copy, &nkeys));
  CHECK(nkeys == 2, "the copy changed: %d", nkeys);
  CHECK_MPI(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
  CHECK_CLASS(MPI_ERR_INFO_NOKEY, MPI_Info_delete(info, "alpha"));
  CHECK_CLASS(MPI_ERR_INFO_KEY, MPI_Info_set(info, "", "x"));
  CHECK_CLASS(MPI_ERR_ARG, MPI_Info_get_nthkey(info, 5, key));
  CHECK_CLASS(MPI_ERR_INFO, MPI_Info_set(MPI_INFO_NULL, "a", "b"));
  CHECK_MPI(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
  CHECK_MPI(MPI_Info_free(&info));
  CHECK_MPI(MPI_Info_free(&copy));
  CHECK(info == MPI_INFO_NULL, "MPI_Info_free did not reset the handle");
}

static int copies = 0;
static int deletes = 0;

static int copy_plus_one(MPI_Comm comm, int keyval, void *extra, void *in, void *out, int *flag) {
  (void)comm, (void)keyval;
  CHECK(extra == &copies, "extra_state");
  ++copies;
  *(void **)out = (char *)in + 1;
  *flag = 1;
  return MPI_SUCCESS;
}

static int count_delete(MPI_Comm comm, int keyval, void *value, void *extra) {
  (void)comm, (void)keyval, (void)value, (void)extra;
  ++deletes;
  return MPI_SUCCESS;
}

static void test_attributes(void) {
  int *tag_ub = NULL, flag = 0;
  CHECK_MPI(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &tag_ub, &flag));
  CHECK(flag && *tag_ub >= 32767, "MPI_TAG_UB");
  int *universe = NULL;
  CHECK_MPI(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_UNIVERSE_SIZE, &universe, &flag));
  CHECK(flag && *universe == size, "MPI_UNIVERSE_SIZE");

  static char base[8];
  int counted, plain;
  CHECK_MPI(MPI_Comm_create_keyval(copy_plus_one, count_delete, &counted, &copies));
  CHECK_MPI(MPI_Comm_create_keyval(MPI_COMM_DUP_FN, MPI_COMM_NULL_DELETE_FN, &plain, NULL));
  MPI_Comm comm;
  CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &comm));
  void *got = NULL;
  CHECK_MPI(MPI_Comm_get_attr(comm, counted, &got, &flag));
  CHECK(!flag, "an attribute before any was set");
  CHECK_MPI(MPI_Comm_set_attr(comm, counted, base));
  CHECK_MPI(MPI_Comm_set_attr(comm, plain, base + 4));
  CHECK_MPI(MPI_Comm_get_attr(comm, counted, &got, &flag));
  CHECK(flag && got == base, "get what was set");
  /* Setting again deletes the old value first. */
  CHECK_MPI(MPI_Comm_set_attr(comm, counted, base + 2));
  CHECK(deletes == 1, "replacing an attribute ran %d deletes", deletes);
  /* A dup copies through the callbacks: +1 for `counted`, the same value for MPI_COMM_DUP_FN. */
  MPI_Comm dup;
  CHECK_MPI(MPI_Comm_dup(comm, &dup));
  CHECK(copies == 1, "dup ran %d copies", copies);
  CHECK_MPI(MPI_Comm_get_attr(dup, counted, &got, &flag));
  CHECK(flag && got == base + 3, "copied attribute");
  CHECK_MPI(MPI_Comm_get_attr(dup, plain, &got, &flag));
  CHECK(flag && got == base + 4, "MPI_COMM_DUP_FN attribute");
  CHECK_MPI(MPI_Comm_delete_attr(dup, counted));
  CHECK(deletes == 2, "delete_attr ran %d deletes", deletes);
  CHECK_MPI(MPI_Comm_get_attr(dup, counted, &got, &flag));
  CHECK(!flag, "a deleted attribute is still there");
  /* Freeing the keyval leaves the attribute, whose delete callback runs when the communicator goes. */
  const int freed = counted;
  CHECK_MPI(MPI_Comm_free_keyval(&counted));
  CHECK(counted == MPI_KEYVAL_INVALID, "MPI_Comm_free_keyval did not reset the key");
  /* Its number is not given to a new keyval while the attribute lives, and a dup still copies it. */
  int fresh;
  CHECK_MPI(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, &fresh, NULL));
  CHECK(fresh != freed, "a freed keyval's number was given out again while its attribute lives");
  /* The attribute is still there to read through the freed key; no new one can be set with it. */
  CHECK_MPI(MPI_Comm_get_attr(comm, freed, &got, &flag));
  CHECK(flag && got == base + 2, "the freed key's attribute cannot be read");
  CHECK_MPI(MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN));
  CHECK_MPI(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
  CHECK_CLASS(MPI_ERR_KEYVAL, MPI_Comm_set_attr(comm, freed, base));
  CHECK_CLASS(MPI_ERR_KEYVAL, MPI_Comm_free_keyval(&(int){freed}));
  CHECK_MPI(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
  CHECK_MPI(MPI_Comm_set_attr(comm, fresh, base + 6));
  MPI_Comm again;
  CHECK_MPI(MPI_Comm_dup(comm, &again));
  CHECK(copies == 2, "the freed keyval's attribute was copied %d times in all, expected 2", copies);
  CHECK_MPI(MPI_Comm_get_attr(again, fresh, &got, &flag));
  CHECK(!flag, "MPI_COMM_NULL_COPY_FN copied an attribute");
  CHECK_MPI(MPI_Comm_free(&again));
  CHECK(deletes == 3, "freeing the dup ran %d deletes in all", deletes);
  CHECK_MPI(MPI_Comm_free(&comm));
  CHECK(deletes == 4, "free ran %d deletes", deletes);
  CHECK_MPI(MPI_Comm_free_keyval(&fresh));
  CHECK_MPI(MPI_Comm_free(&dup));
  CHECK_MPI(MPI_Comm_free_keyval(&plain));

  CHECK_MPI(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
  CHECK_CLASS(MPI_ERR_KEYVAL, MPI_Comm_set_attr(MPI_COMM_WORLD, MPI_TAG_UB, base));
  CHECK_CLASS(MPI_ERR_KEYVAL, MPI_Comm_set_attr(MPI_COMM_WORLD, plain, base));
  CHECK_CLASS(MPI_ERR_COMM, MPI_Comm_free(&(MPI_Comm){MPI_COMM_WORLD}));
  CHECK_MPI(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
}

int main(int argc, char **argv) {
  CHECK_MPI(MPI_Init(&argc, &argv));
  CHECK_MPI(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
  CHECK_MPI(MPI_Comm_size(MPI_COMM_WORLD, &size));
  test_dup_and_isolation();
  test_split();
  test_many();
  test_groups();
  test_cart();
  test_info();
  test_attributes();
  CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
  CHECK_MPI(MPI_Finalize());
  if (rank == 0) printf("communicators on %d ranks: ok\n", size);
  return 0;
}

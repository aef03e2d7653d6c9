/* Intercommunicators: the world split in two groups (even and odd world ranks) joined by
 * MPI_Intercomm_create; point-to-point across them; every collective MPI defines on an
 * intercommunicator, blocking and nonblocking, with the root in either group; MPI_Comm_dup, split,
 * create, compare, free; MPI_Intercomm_merge in both orders; the calls that take an intracommunicator
 * refuse one. Needs 2 to 16 ranks. */
#include <stdlib.h>
#include <string.h>

#include "check.h"

static int world_rank, world_size;
static int group;          /* 0: even world ranks, 1: odd */
static int local_size, remote_size, local_rank;

static int world_of_remote(int r) { return 2 * r + (1 - group); }

static void wait_or_not(int nonblocking, MPI_Request *request) {
  if (nonblocking) CHECK_MPI(MPI_Wait(request, MPI_STATUS_IGNORE));
}

/* Rooted collectives with the root at rank 0 of group `root_group`. */
static int root_arg(int root_group) {
  if (group != root_group) return 0;
  return local_rank == 0 ? MPI_ROOT : MPI_PROC_NULL;
}

static void collectives(MPI_Comm inter, int nb) {
  MPI_Request rq = MPI_REQUEST_NULL;
  int values[64 * 8];
  int got[64 * 8];

  if (nb) CHECK_MPI(MPI_Ibarrier(inter, &rq)); else CHECK_MPI(MPI_Barrier(inter));
  wait_or_not(nb, &rq);

  for (int rg = 0; rg < 2; ++rg) {
    const int root = root_arg(rg);

    /* Bcast: the root's 5 ints reach the other group. */
    for (int k = 0; k < 5; ++k) values[k] = root == MPI_ROOT ? 1000 * rg + k : -1;
    if (nb) CHECK_MPI(MPI_Ibcast(values, 5, MPI_INT, root, inter, &rq)); else CHECK_MPI(MPI_Bcast(values, 5, MPI_INT, root, inter));
    wait_or_not(nb, &rq);
    if (group != rg) {
      for (int k = 0; k < 5; ++k) CHECK(values[k] == 1000 * rg + k, "bcast from group %d: [%d] = %d", rg, k, values[k]);
    } else if (root == MPI_PROC_NULL) {
      CHECK(values[0] == -1, "bcast touched a non-root of the root's group");
    }

    /* Reduce: the root gets the sum over the other group. */
    int expect_sum = 0;
    for (int r = 0; r < (group == rg ? remote_size : 0); ++r) expect_sum += world_of_remote(r) + 1;
    for (int k = 0; k < 4; ++k) {
      values[k] = (world_rank + 1) * (k + 1);
      got[k] = -7;
    }
    if (nb) CHECK_MPI(MPI_Ireduce(values, got, 4, MPI_INT, MPI_SUM, root, inter, &rq));
    else CHECK_MPI(MPI_Reduce(values, got, 4, MPI_INT, MPI_SUM, root, inter));
    wait_or_not(nb, &rq);
    if (root == MPI_ROOT) {
      for (int k = 0; k < 4; ++k) CHECK(got[k] == expect_sum * (k + 1), "reduce [%d] = %d, want %d", k, got[k], expect_sum * (k + 1));
    } else {
      CHECK(got[0] == -7, "reduce wrote a non-root's recvbuf");
    }

    /* Gather / Gatherv: remote rank j's world rank (j + 1 copies for gatherv). */
    for (int k = 0; k < 64; ++k) got[k] = -1;
    if (nb) CHECK_MPI(MPI_Igather(&world_rank, 1, MPI_INT, got, 1, MPI_INT, root, inter, &rq));
    else CHECK_MPI(MPI_Gather(&world_rank, 1, MPI_INT, got, 1, MPI_INT, root, inter));
    wait_or_not(nb, &rq);
    if (root == MPI_ROOT) {
      for (int j = 0; j < remote_size; ++j) CHECK(got[j] == world_of_remote(j), "gather [%d] = %d", j, got[j]);
    }
    int counts[64], displs[64];
    int total = 0;
    for (int j = 0; j < remote_size; ++j) {
      counts[j] = j + 1;
      displs[j] = total + j; /* a gap of one int before each block */
      total += j + 2;
    }
    for (int k = 0; k < local_rank + 1; ++k) values[k] = world_rank * 10 + k;
    for (int k = 0; k < total + 1; ++k) got[k] = -1;
    if (nb) CHECK_MPI(MPI_Igatherv(values, local_rank + 1, MPI_INT, got, counts, displs, MPI_INT, root, inter, &rq));
    else CHECK_MPI(MPI_Gatherv(values, local_rank + 1, MPI_INT, got, counts, displs, MPI_INT, root, inter));
    wait_or_not(nb, &rq);
    if (root == MPI_ROOT) {
      for (int j = 0; j < remote_size; ++j) {
        for (int k = 0; k < j + 1; ++k) {
          CHECK(got[displs[j] + k] == world_of_remote(j) * 10 + k, "gatherv block %d [%d] = %d", j, k, got[displs[j] + k]);
        }
      }
    }

    /* Scatter / Scatterv: block j to remote rank j. */
    for (int j = 0; j < remote_size; ++j) values[j] = 500 + world_of_remote(j);
    int one = -1;
    if (nb) CHECK_MPI(MPI_Iscatter(values, 1, MPI_INT, &one, 1, MPI_INT, root, inter, &rq));
    else CHECK_MPI(MPI_Scatter(values, 1, MPI_INT, &one, 1, MPI_INT, root, inter));
    wait_or_not(nb, &rq);
    if (group != rg) CHECK(one == 500 + world_rank, "scatter gave %d", one);
    for (int j = 0; j < remote_size; ++j) {
      for (int k = 0; k < j + 1; ++k) values[displs[j] + k] = world_of_remote(j) * 100 + k;
    }
    for (int k = 0; k < 64; ++k) got[k] = -1;
    if (nb) CHECK_MPI(MPI_Iscatterv(values, counts, displs, MPI_INT, got, local_rank + 1, MPI_INT, root, inter, &rq));
    else CHECK_MPI(MPI_Scatterv(values, counts, displs, MPI_INT, got, local_rank + 1, MPI_INT, root, inter));
    wait_or_not(nb, &rq);
    if (group != rg) {
      for (int k = 0; k < local_rank + 1; ++k) CHECK(got[k] == world_rank * 100 + k, "scatterv [%d] = %d", k, got[k]);
    }
  }

  /* Allreduce: each process gets the sum over the other group. */
  int remote_sum = 0;
  for (int r = 0; r < remote_size; ++r) remote_sum += world_of_remote(r) + 1;
  for (int k = 0; k < 3; ++k) values[k] = (world_rank + 1) * (k + 1);
  if (nb) CHECK_MPI(MPI_Iallreduce(values, got, 3, MPI_INT, MPI_SUM, inter, &rq));
  else CHECK_MPI(MPI_Allreduce(values, got, 3, MPI_INT, MPI_SUM, inter));
  wait_or_not(nb, &rq);
  for (int k = 0; k < 3; ++k) CHECK(got[k] == remote_sum * (k + 1), "allreduce [%d] = %d, want %d", k, got[k], remote_sum * (k + 1));

  /* Allgather / Allgatherv. */
  if (nb) CHECK_MPI(MPI_Iallgather(&world_rank, 1, MPI_INT, got, 1, MPI_INT, inter, &rq));
  else CHECK_MPI(MPI_Allgather(&world_rank, 1, MPI_INT, got, 1, MPI_INT, inter));
  wait_or_not(nb, &rq);
  for (int j = 0; j < remote_size; ++j) CHECK(got[j] == world_of_remote(j), "allgather [%d] = %d", j, got[j]);
  int counts[64], displs[64], total = 0;
  for (int j = 0; j < remote_size; ++j) {
    counts[j] = j + 1;
    displs[j] = total;
    total += j + 1;
  }
  for (int k = 0; k < local_rank + 1; ++k) values[k] = world_rank * 10 + k;
  if (nb) CHECK_MPI(MPI_Iallgatherv(values, local_rank + 1, MPI_INT, got, counts, displs, MPI_INT, inter, &rq));
  else CHECK_MPI(MPI_Allgatherv(values, local_rank + 1, MPI_INT, got, counts, displs, MPI_INT, inter));
  wait_or_not(nb, &rq);
  for (int j = 0; j < remote_size; ++j) {
    for (int k = 0; k < j + 1; ++k) CHECK(got[displs[j] + k] == world_of_remote(j) * 10 + k, "allgatherv %d/%d", j, k);
  }

  /* Alltoall, alltoallv, alltoallw: to remote j, world_rank * 100 + j (alltoallv: my local rank + 1 of them). */
  for (int j = 0; j < remote_size; ++j) values[j] = world_rank * 100 + j;
  if (nb) CHECK_MPI(MPI_Ialltoall(values, 1, MPI_INT, got, 1, MPI_INT, inter, &rq));
  else CHECK_MPI(MPI_Alltoall(values, 1, MPI_INT, got, 1, MPI_INT, inter));
  wait_or_not(nb, &rq);
  for (int j = 0; j < remote_size; ++j) CHECK(got[j] == world_of_remote(j) * 100 + local_rank, "alltoall [%d] = %d", j, got[j]);
  int scounts[64], sdispls[64], rcounts[64], rdispls[64];
  int at = 0;
  for (int j = 0; j < remote_size; ++j) {
    scounts[j] = local_rank + 1;
    sdispls[j] = j * 8;
    for (int k = 0; k < local_rank + 1; ++k) values[j * 8 + k] = world_rank * 100 + j * 10 + k;
    rcounts[j] = j + 1;
    rdispls[j] = at;
    at += j + 1;
  }
  if (nb) CHECK_MPI(MPI_Ialltoallv(values, scounts, sdispls, MPI_INT, got, rcounts, rdispls, MPI_INT, inter, &rq));
  else CHECK_MPI(MPI_Alltoallv(values, scounts, sdispls, MPI_INT, got, rcounts, rdispls, MPI_INT, inter));
  wait_or_not(nb, &rq);
  for (int j = 0; j < remote_size; ++j) {
    for (int k = 0; k < j + 1; ++k) {
      CHECK(got[rdispls[j] + k] == world_of_remote(j) * 100 + local_rank * 10 + k, "alltoallv %d/%d = %d", j, k,
            got[rdispls[j] + k]);
    }
  }
  MPI_Datatype types[64];
  int ones[64], bdispls[64];
  for (int j = 0; j < remote_size; ++j) {
    types[j] = MPI_INT;
    ones[j] = 1;
    bdispls[j] = j * (int)sizeof(int);
    values[j] = world_rank * 100 + j;
  }
  if (nb) CHECK_MPI(MPI_Ialltoallw(values, ones, bdispls, types, got, ones, bdispls, types, inter, &rq));
  else CHECK_MPI(MPI_Alltoallw(values, ones, bdispls, types, got, ones, bdispls, types, inter));
  wait_or_not(nb, &rq);
  for (int j = 0; j < remote_size; ++j) CHECK(got[j] == world_of_remote(j) * 100 + local_rank, "alltoallw [%d] = %d", j, got[j]);

  /* Reduce_scatter_block and reduce_scatter: the other group's vectors (local_size * remote_size
   * elements on both sides) summed, scattered over this group. */
  const int length = local_size * remote_size;
  for (int k = 0; k < length; ++k) values[k] = (world_rank + 1) * (k + 1);
  if (nb) CHECK_MPI(MPI_Ireduce_scatter_block(values, got, remote_size, MPI_INT, MPI_SUM, inter, &rq));
  else CHECK_MPI(MPI_Reduce_scatter_block(values, got, remote_size, MPI_INT, MPI_SUM, inter));
  wait_or_not(nb, &rq);
  for (int k = 0; k < remote_size; ++k) {
    const int element = local_rank * remote_size + k;
    CHECK(got[k] == remote_sum * (element + 1), "reduce_scatter_block [%d] = %d", k, got[k]);
  }
  int rs_counts[64];
  for (int i = 0; i < local_size; ++i) rs_counts[i] = i == 0 ? length - (local_size - 1) : 1;
  if (nb) CHECK_MPI(MPI_Ireduce_scatter(values, got, rs_counts, MPI_INT, MPI_SUM, inter, &rq));
  else CHECK_MPI(MPI_Reduce_scatter(values, got, rs_counts, MPI_INT, MPI_SUM, inter));
  wait_or_not(nb, &rq);
  const int first = local_rank == 0 ? 0 : length - local_size + local_rank;
  for (int k = 0; k < rs_counts[local_rank]; ++k) {
    CHECK(got[k] == remote_sum * (first + k + 1), "reduce_scatter [%d] = %d", k, got[k]);
  }
}

/* Every process sends one message to every remote rank (tag: its local rank, data: its world rank)
 * and receives one from each with wildcards. */
static void point_to_point(MPI_Comm inter) {
  MPI_Request requests[64];
  for (int j = 0; j < remote_size; ++j) CHECK_MPI(MPI_Isend(&world_rank, 1, MPI_INT, j, local_rank, inter, &requests[j]));
  int seen[64] = {0};
  for (int j = 0; j < remote_size; ++j) {
    int from = -1;
    MPI_Status status;
    CHECK_MPI(MPI_Recv(&from, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, inter, &status));
    CHECK(status.MPI_SOURCE == status.MPI_TAG && status.MPI_SOURCE < remote_size, "status %d/%d", status.MPI_SOURCE,
          status.MPI_TAG);
    CHECK(from == world_of_remote(status.MPI_SOURCE), "message from remote %d says world rank %d", status.MPI_SOURCE, from);
    CHECK(!seen[status.MPI_SOURCE], "two messages from remote %d", status.MPI_SOURCE);
    seen[status.MPI_SOURCE] = 1;
  }
  CHECK_MPI(MPI_Waitall(remote_size, requests, MPI_STATUSES_IGNORE));
}

static void check_shape(MPI_Comm inter, int want_local, int want_remote) {
  int flag = 0, n = 0;
  CHECK_MPI(MPI_Comm_test_inter(inter, &flag));
  CHECK(flag == 1, "MPI_Comm_test_inter says %d", flag);
  CHECK_MPI(MPI_Comm_size(inter, &n));
  CHECK(n == want_local, "MPI_Comm_size %d, want %d", n, want_local);
  CHECK_MPI(MPI_Comm_remote_size(inter, &n));
  CHECK(n == want_remote, "MPI_Comm_remote_size %d, want %d", n, want_remote);
}

int main(int argc, char **argv) {
  CHECK_MPI(MPI_Init(&argc, &argv));
  CHECK_MPI(MPI_Comm_rank(MPI_COMM_WORLD, &world_rank));
  CHECK_MPI(MPI_Comm_size(MPI_COMM_WORLD, &world_size));
  CHECK(world_size >= 2 && world_size <= 16, "needs 2 to 16 ranks");
  group = world_rank % 2;
  MPI_Comm local;
  CHECK_MPI(MPI_Comm_split(MPI_COMM_WORLD, group, world_rank, &local));
  CHECK_MPI(MPI_Comm_rank(local, &local_rank));
  CHECK_MPI(MPI_Comm_size(local, &local_size));
  remote_size = group == 0 ? world_size / 2 : (world_size + 1) / 2;

  MPI_Comm inter;
  CHECK_MPI(MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, 1 - group, 77, &inter));
  check_shape(inter, local_size, remote_size);
  int rank = -1;
  CHECK_MPI(MPI_Comm_rank(inter, &rank));
  CHECK(rank == local_rank, "MPI_Comm_rank %d on the intercommunicator, %d in the local group", rank, local_rank);

  /* The remote group, translated to world ranks. */
  MPI_Group remote_group, world_group;
  CHECK_MPI(MPI_Comm_remote_group(inter, &remote_group));
  CHECK_MPI(MPI_Comm_group(MPI_COMM_WORLD, &world_group));
  int ranks[64], translated[64];
  for (int j = 0; j < remote_size; ++j) ranks[j] = j;
  CHECK_MPI(MPI_Group_translate_ranks(remote_group, remote_size, ranks, world_group, translated));
  for (int j = 0; j < remote_size; ++j) {
    CHECK(translated[j] == world_of_remote(j), "remote rank %d is world rank %d", j, translated[j]);
  }
  CHECK_MPI(MPI_Group_free(&remote_group));
  CHECK_MPI(MPI_Group_free(&world_group));

  point_to_point(inter);
  collectives(inter, 0);
  collectives(inter, 1);

  /* Errors: no scan on an intercommunicator, no intercommunicator where an intracommunicator is due. */
  MPI_Comm_set_errhandler(inter, MPI_ERRORS_RETURN);
  int x = 1, y = 0;
  CHECK_CLASS(MPI_ERR_COMM, MPI_Scan(&x, &y, 1, MPI_INT, MPI_SUM, inter));
  CHECK_CLASS(MPI_ERR_ROOT, MPI_Bcast(&x, 1, MPI_INT, remote_size, inter));
  CHECK_CLASS(MPI_ERR_ARG, MPI_Allreduce(MPI_IN_PLACE, &y, 1, MPI_INT, MPI_SUM, inter));
  MPI_Comm bad = MPI_COMM_NULL;
  int dims[1] = {local_size}, periods[1] = {0};
  CHECK_CLASS(MPI_ERR_COMM, MPI_Cart_create(inter, 1, dims, periods, 0, &bad));
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  CHECK_CLASS(MPI_ERR_COMM, MPI_Comm_remote_size(MPI_COMM_WORLD, &x));
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);

  /* Dup: a new context with the same groups; messages on it do not meet the original's. */
  MPI_Comm dup;
  CHECK_MPI(MPI_Comm_dup(inter, &dup));
  check_shape(dup, local_size, remote_size);
  int result = -1;
  CHECK_MPI(MPI_Comm_compare(inter, dup, &result));
  CHECK(result == MPI_CONGRUENT, "compare(inter, dup) = %d", result);
  CHECK_MPI(MPI_Comm_compare(inter, local, &result));
  CHECK(result == MPI_UNEQUAL, "compare(inter, local) = %d", result);
  if (local_rank == 0) {
    int a = 1, b = 2, ra = 0, rb = 0;
    MPI_Request r[4];
    CHECK_MPI(MPI_Isend(&a, 1, MPI_INT, 0, 5, inter, &r[0]));
    CHECK_MPI(MPI_Isend(&b, 1, MPI_INT, 0, 5, dup, &r[1]));
    CHECK_MPI(MPI_Irecv(&rb, 1, MPI_INT, 0, 5, dup, &r[2]));
    CHECK_MPI(MPI_Irecv(&ra, 1, MPI_INT, 0, 5, inter, &r[3]));
    CHECK_MPI(MPI_Waitall(4, r, MPI_STATUSES_IGNORE));
    CHECK(ra == 1 && rb == 2, "dup's message met the original's (%d %d)", ra, rb);
  }
  collectives(dup, 1);

  /* Split by local rank parity: the leaders (parity 0) pair up; parity 1 exists on the other side only
   * when both groups have 2 or more ranks. */
  MPI_Comm half;
  CHECK_MPI(MPI_Comm_split(inter, local_rank % 2, local_rank, &half));
  const int my_color_local = (local_size + 1 - local_rank % 2) / 2;
  const int my_color_remote = (remote_size + 1 - local_rank % 2) / 2;
  if (my_color_remote == 0) {
    CHECK(half == MPI_COMM_NULL, "split: no partner of this color, yet a communicator");
  } else {
    check_shape(half, my_color_local, my_color_remote);
    int s = 0;
    CHECK_MPI(MPI_Allreduce(&world_rank, &s, 1, MPI_INT, MPI_MAX, half));
    int expect = -1;
    for (int j = local_rank % 2; j < remote_size; j += 2) expect = world_of_remote(j);
    CHECK(s == expect, "allreduce over the split: %d, want %d", s, expect);
    CHECK_MPI(MPI_Comm_free(&half));
  }

  /* Create from the local group's first member: the leaders' intercommunicator. */
  MPI_Group local_group, leader_group;
  CHECK_MPI(MPI_Comm_group(inter, &local_group));
  int zero = 0;
  CHECK_MPI(MPI_Group_incl(local_group, 1, &zero, &leader_group));
  MPI_Comm leaders;
  CHECK_MPI(MPI_Comm_create(inter, leader_group, &leaders));
  if (local_rank == 0) {
    check_shape(leaders, 1, 1);
    int other = -1;
    CHECK_MPI(MPI_Sendrecv(&world_rank, 1, MPI_INT, 0, 0, &other, 1, MPI_INT, 0, 0, leaders, MPI_STATUS_IGNORE));
    CHECK(other == 1 - group, "the other leader is world rank %d", other);
    CHECK_MPI(MPI_Comm_free(&leaders));
  } else {
    CHECK(leaders == MPI_COMM_NULL, "not in the group, yet a communicator");
  }
  CHECK_MPI(MPI_Group_free(&leader_group));
  CHECK_MPI(MPI_Group_free(&local_group));

  /* Merge: the group that says high=0 first; both the same: the group of world rank 0 first. */
  for (int order = 0; order < 3; ++order) {
    const int high = order == 0 ? group : order == 1 ? 1 - group : 0;
    const int first_group = order == 1 ? 1 : 0;
    MPI_Comm merged;
    CHECK_MPI(MPI_Intercomm_merge(inter, high, &merged));
    int flag = 1, n = 0, r = -1;
    CHECK_MPI(MPI_Comm_test_inter(merged, &flag));
    CHECK_MPI(MPI_Comm_size(merged, &n));
    CHECK_MPI(MPI_Comm_rank(merged, &r));
    const int first_size = first_group == group ? local_size : remote_size;
    const int want = group == first_group ? local_rank : first_size + local_rank;
    CHECK(flag == 0 && n == world_size && r == want, "merge %d: inter %d size %d rank %d, want rank %d", order, flag, n,
          r, want);
    int sum = 0;
    CHECK_MPI(MPI_Allreduce(&world_rank, &sum, 1, MPI_INT, MPI_SUM, merged));
    CHECK(sum == world_size * (world_size - 1) / 2, "allreduce over the merged: %d", sum);
    CHECK_MPI(MPI_Comm_free(&merged));
  }

  CHECK_MPI(MPI_Comm_free(&dup));
  CHECK_MPI(MPI_Comm_free(&inter));
  CHECK_MPI(MPI_Comm_free(&local));
  if (world_rank == 0) printf("intercomm: %d ranks passed\n", world_size);
  CHECK_MPI(MPI_Finalize());
  return 0;
}

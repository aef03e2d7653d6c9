/* MPI_Comm_idup and MPI_Comm_create_group, at 1-4 ranks:
 *   1. an idup of MPI_COMM_WORLD overlapped by a nonblocking allreduce started after it and waited
 *      first; the copy keeps the parent's attributes (copy callbacks run), compares congruent, works;
 *   2. two idups outstanding with a blocking dup between them: three communicators whose messages never
 *      meet (a receive posted on one is not matched by a send on another);
 *      then five idups of one parent under way at once, each after a nonblocking allreduce on it;
 *   3. idups of both halves of a split, completed by MPI_Test alone, and of an intercommunicator;
 *   4. MPI_Comm_create_group of the even ranks while the odd ranks wait inside MPI_Recv for a message
 *      the evens send only after their communicator works (a create_group that needed the non-members
 *      would hang here), then of the odd ranks, then of every rank in reverse order;
 *   5. a process outside the group gets MPI_COMM_NULL at once; bad arguments get their error classes;
 *      and the even ranks make a group while the odd ranks start an idup first (MPICH's
 *      comm_create_group_idup: each waits for the other's agreement, which must not deadlock);
 *   6. MPI_Comm_dup_with_info, MPI_Comm_idup_with_info, MPI_Comm_set_info/get_info, MPI_Comm_disconnect;
 *   7. under MPI_THREAD_MULTIPLE, three threads per process make communicators at once, repeatedly:
 *      create_group over one parent with two tags and two rank orders, and idup of a third parent.
 * argv[1]: the rounds of phases 2 and 7 (default 10). */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

static int world_rank, world_size;

static int copy_calls;
static int copy_plus_one(MPI_Comm oldcomm, int keyval, void *extra, void *in, void *out, int *flag) {
  (void)oldcomm;
  (void)keyval;
  (void)extra;
  ++copy_calls;
  *(void **)out = (char *)in + 1;
  *flag = 1;
  return MPI_SUCCESS;
}

/* Every member: comm has `size` processes, an allreduce of the ranks and a ring exchange work. */
static void check_works(MPI_Comm comm, int size, int tag) {
  int n = -1, rank = -1;
  CHECK_MPI(MPI_Comm_size(comm, &n));
  CHECK_MPI(MPI_Comm_rank(comm, &rank));
  CHECK(n == size, "size %d, expected %d", n, size);
  int sum = -1;
  CHECK_MPI(MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, comm));
  CHECK(sum == n * (n - 1) / 2, "allreduce of ranks: %d", sum);
  const int right = (rank + 1) % n, left = (rank + n - 1) % n;
  int got = -1;
  CHECK_MPI(MPI_Sendrecv(&rank, 1, MPI_INT, right, tag, &got, 1, MPI_INT, left, tag, comm, MPI_STATUS_IGNORE));
  CHECK(got == left, "ring: got %d from rank %d", got, left);
}

static void phase_idup_overlapped(void) {
  int keyval = MPI_KEYVAL_INVALID;
  static char base[4];
  CHECK_MPI(MPI_Comm_create_keyval(copy_plus_one, MPI_COMM_NULL_DELETE_FN, &keyval, NULL));
  CHECK_MPI(MPI_Comm_set_attr(MPI_COMM_WORLD, keyval, base));
  copy_calls = 0;
  MPI_Comm copy = MPI_COMM_NULL;
  MPI_Request requests[2];
  CHECK_MPI(MPI_Comm_idup(MPI_COMM_WORLD, &copy, &requests[0]));
  int one = 1, total = 0;
  CHECK_MPI(MPI_Iallreduce(&one, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &requests[1]));
  CHECK_MPI(MPI_Wait(&requests[1], MPI_STATUS_IGNORE));
  CHECK(total == world_size, "allreduce beside the idup: %d", total);
  CHECK_MPI(MPI_Wait(&requests[0], MPI_STATUS_IGNORE));
  CHECK(requests[0] == MPI_REQUEST_NULL && copy != MPI_COMM_NULL, "idup completed without a communicator");
  CHECK(copy_calls == 1, "copy callback ran %d times", copy_calls);
  void *value = NULL;
  int flag = 0;
  CHECK_MPI(MPI_Comm_get_attr(copy, keyval, &value, &flag));
  CHECK(flag && value == base + 1, "the copy's attribute was not copied");
  int result = -1;
  CHECK_MPI(MPI_Comm_compare(MPI_COMM_WORLD, copy, &result));
  CHECK(result == MPI_CONGRUENT, "compare: %d", result);
  check_works(copy, world_size, 1);
  CHECK_MPI(MPI_Comm_free(&copy));
  CHECK_MPI(MPI_Comm_delete_attr(MPI_COMM_WORLD, keyval));
  CHECK_MPI(MPI_Comm_free_keyval(&keyval));
}

static void phase_isolation(void) {
  MPI_Comm a = MPI_COMM_NULL, b = MPI_COMM_NULL, c = MPI_COMM_NULL;
  MPI_Request requests[2];
  CHECK_MPI(MPI_Comm_idup(MPI_COMM_WORLD, &a, &requests[0]));
  CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &b));
  CHECK_MPI(MPI_Comm_idup(MPI_COMM_WORLD, &c, &requests[1]));
  CHECK_MPI(MPI_Waitall(2, requests, MPI_STATUSES_IGNORE));
  CHECK(a != b && b != c && a != c, "the copies share a handle");
  const int right = (world_rank + 1) % world_size, left = (world_rank + world_size - 1) % world_size;
  /* A wildcard receive on c stays posted while the same tag travels on a and b. */
  int on_c = -1;
  MPI_Request receive;
  CHECK_MPI(MPI_Irecv(&on_c, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, c, &receive));
  MPI_Comm others[2] = {a, b};
  for (int k = 0; k < 2; ++k) {
    int out = 100 + k, in = -1;
    CHECK_MPI(MPI_Sendrecv(&out, 1, MPI_INT, right, 5, &in, 1, MPI_INT, left, 5, others[k], MPI_STATUS_IGNORE));
    CHECK(in == 100 + k, "on copy %d: got %d", k, in);
  }
  const int mine = 200;
  CHECK_MPI(MPI_Send(&mine, 1, MPI_INT, right, 5, c));
  CHECK_MPI(MPI_Wait(&receive, MPI_STATUS_IGNORE));
  CHECK(on_c == 200, "a message sent on another communicator matched a receive on c (%d)", on_c);
  CHECK_MPI(MPI_Comm_free(&a));
  CHECK_MPI(MPI_Comm_free(&b));
  CHECK_MPI(MPI_Comm_free(&c));
}

/* Five idups of one parent under way at once, each beside a nonblocking collective started just before
 * it; on the world, a copy, and the world in reverse order, several times (MPICH's comm_idup_nb, which
 * hung when such agreements had the same priority). */
static void phase_many_pending(int rounds) {
  enum { N = 5 };
  MPI_Comm parents[3] = {MPI_COMM_WORLD, MPI_COMM_NULL, MPI_COMM_NULL};
  CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &parents[1]));
  CHECK_MPI(MPI_Comm_split(MPI_COMM_WORLD, 0, world_size - world_rank, &parents[2]));
  for (int round = 0; round < rounds; ++round) {
    for (int p = 0; p < 3; ++p) {
      MPI_Comm copies[N];
      MPI_Request requests[2 * N];
      int ones[N], sums[N];
      for (int k = 0; k < N; ++k) {
        ones[k] = 1;
        if (k % 2 == 0) {
          CHECK_MPI(MPI_Iallreduce(&ones[k], &sums[k], 1, MPI_INT, MPI_SUM, parents[p], &requests[k]));
        } else {
          sums[k] = world_size;
          CHECK_MPI(MPI_Ibarrier(parents[p], &requests[k]));
        }
        CHECK_MPI(MPI_Comm_idup(parents[p], &copies[k], &requests[N + k]));
      }
      CHECK_MPI(MPI_Waitall(2 * N, requests, MPI_STATUSES_IGNORE));
      for (int k = 0; k < N; ++k) {
        CHECK(sums[k] == world_size, "allreduce %d beside the idups: %d", k, sums[k]);
        check_works(copies[k], world_size, 10 + k);
        CHECK_MPI(MPI_Comm_free(&copies[k]));
      }
    }
  }
  CHECK_MPI(MPI_Comm_free(&parents[1]));
  CHECK_MPI(MPI_Comm_free(&parents[2]));
}

static void phase_halves_and_intercomm(void) {
  const int low = world_rank < (world_size + 1) / 2;
  MPI_Comm half = MPI_COMM_NULL, copy = MPI_COMM_NULL;
  CHECK_MPI(MPI_Comm_split(MPI_COMM_WORLD, low, world_rank, &half));
  int half_size = 0;
  CHECK_MPI(MPI_Comm_size(half, &half_size));
  MPI_Request request;
  CHECK_MPI(MPI_Comm_idup(half, &copy, &request));
  for (int done = 0; !done;) CHECK_MPI(MPI_Test(&request, &done, MPI_STATUS_IGNORE));
  check_works(copy, half_size, 2);
  CHECK_MPI(MPI_Comm_free(&copy));
  if (world_size >= 2) {
    MPI_Comm inter = MPI_COMM_NULL, inter_copy = MPI_COMM_NULL;
    const int other_leader = low ? (world_size + 1) / 2 : 0;
    CHECK_MPI(MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, other_leader, 9, &inter));
    CHECK_MPI(MPI_Comm_idup(inter, &inter_copy, &request));
    CHECK_MPI(MPI_Wait(&request, MPI_STATUS_IGNORE));
    int is_inter = 0, remote = 0;
    CHECK_MPI(MPI_Comm_test_inter(inter_copy, &is_inter));
    CHECK_MPI(MPI_Comm_remote_size(inter_copy, &remote));
    CHECK(is_inter && remote == world_size - half_size, "the intercommunicator's copy: inter %d, remote size %d",
          is_inter, remote);
    int half_rank = 0;
    CHECK_MPI(MPI_Comm_rank(half, &half_rank));
    if (half_rank == 0) {
      int out = world_rank, in = -1;
      CHECK_MPI(MPI_Sendrecv(&out, 1, MPI_INT, 0, 4, &in, 1, MPI_INT, 0, 4, inter_copy, MPI_STATUS_IGNORE));
      CHECK(in == other_leader, "the other leader sent %d", in);
    }
    CHECK_MPI(MPI_Comm_free(&inter_copy));
    CHECK_MPI(MPI_Comm_free(&inter));
  }
  CHECK_MPI(MPI_Comm_free(&half));
}

/* The group of world ranks first, first + step, ... below world_size (step may be negative). */
static MPI_Group world_ranks_group(int first, int step, int count) {
  MPI_Group world_group, group;
  int *ranks = malloc(sizeof(int) * (size_t)(count > 0 ? count : 1));
  CHECK(ranks != NULL, "out of memory");
  for (int k = 0; k < count; ++k) ranks[k] = first + k * step;
  CHECK_MPI(MPI_Comm_group(MPI_COMM_WORLD, &world_group));
  CHECK_MPI(MPI_Group_incl(world_group, count, ranks, &group));
  CHECK_MPI(MPI_Group_free(&world_group));
  free(ranks);
  return group;
}

static void phase_create_group(void) {
  const int evens = (world_size + 1) / 2, odds = world_size / 2;
  MPI_Group even_group = world_ranks_group(0, 2, evens);
  MPI_Comm made = MPI_COMM_NULL;
  if (world_rank % 2 == 0) {
    CHECK_MPI(MPI_Comm_create_group(MPI_COMM_WORLD, even_group, 11, &made));
    int rank = -1;
    CHECK_MPI(MPI_Comm_rank(made, &rank));
    CHECK(rank == world_rank / 2, "rank %d among the evens", rank);
    check_works(made, evens, 3);
    CHECK_MPI(MPI_Comm_free(&made));
    if (world_rank == 0) {
      for (int odd = 1; odd < world_size; odd += 2) CHECK_MPI(MPI_Send(&evens, 1, MPI_INT, odd, 6, MPI_COMM_WORLD));
    }
  } else {
    int token = -1;
    CHECK_MPI(MPI_Recv(&token, 1, MPI_INT, 0, 6, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    CHECK(token == evens, "token %d", token);
    MPI_Group odd_group = world_ranks_group(1, 2, odds);
    CHECK_MPI(MPI_Comm_create_group(MPI_COMM_WORLD, odd_group, 11, &made));
    check_works(made, odds, 3);
    CHECK_MPI(MPI_Comm_free(&made));
    CHECK_MPI(MPI_Group_free(&odd_group));
  }
  CHECK_MPI(MPI_Group_free(&even_group));

  MPI_Group reversed = world_ranks_group(world_size - 1, -1, world_size);
  CHECK_MPI(MPI_Comm_create_group(MPI_COMM_WORLD, reversed, 0, &made));
  int rank = -1;
  CHECK_MPI(MPI_Comm_rank(made, &rank));
  CHECK(rank == world_size - 1 - world_rank, "reversed: rank %d", rank);
  check_works(made, world_size, 3);
  /* A group of a communicator made by create_group, over it. */
  MPI_Comm again = MPI_COMM_NULL;
  MPI_Group made_group;
  CHECK_MPI(MPI_Comm_group(made, &made_group));
  CHECK_MPI(MPI_Comm_create_group(made, made_group, 12345, &again));
  check_works(again, world_size, 4);
  CHECK_MPI(MPI_Comm_free(&again));
  CHECK_MPI(MPI_Group_free(&made_group));
  CHECK_MPI(MPI_Comm_free(&made));
  CHECK_MPI(MPI_Group_free(&reversed));
}

/* Even ranks: create_group, then idup; odd ranks: idup, then create_group. The odd ranks' idup cannot
 * end before the even ranks start theirs, which they do only after create_group ends. */
static void phase_crossed_order(void) {
  MPI_Group all = world_ranks_group(0, 1, world_size);
  MPI_Comm group_comm = MPI_COMM_NULL, idup_comm = MPI_COMM_NULL;
  MPI_Request request;
  if (world_rank % 2 == 0) {
    CHECK_MPI(MPI_Comm_create_group(MPI_COMM_WORLD, all, 0, &group_comm));
    CHECK_MPI(MPI_Comm_idup(MPI_COMM_WORLD, &idup_comm, &request));
  } else {
    CHECK_MPI(MPI_Comm_idup(MPI_COMM_WORLD, &idup_comm, &request));
    CHECK_MPI(MPI_Comm_create_group(MPI_COMM_WORLD, all, 0, &group_comm));
  }
  CHECK_MPI(MPI_Wait(&request, MPI_STATUS_IGNORE));
  check_works(idup_comm, world_size, 7);
  check_works(group_comm, world_size, 8);
  CHECK_MPI(MPI_Comm_free(&idup_comm));
  CHECK_MPI(MPI_Comm_free(&group_comm));
  CHECK_MPI(MPI_Group_free(&all));
}

/* MPI_Comm_dup_with_info, MPI_Comm_idup_with_info, hints (none are used, so none come back),
 * MPI_Comm_disconnect. */
static void phase_info_and_disconnect(void) {
  MPI_Info hints;
  CHECK_MPI(MPI_Info_create(&hints));
  CHECK_MPI(MPI_Info_set(hints, "mpi_assert_no_any_tag", "true"));
  MPI_Comm a = MPI_COMM_NULL, b = MPI_COMM_NULL;
  CHECK_MPI(MPI_Comm_dup_with_info(MPI_COMM_WORLD, hints, &a));
  MPI_Request request;
  CHECK_MPI(MPI_Comm_idup_with_info(a, hints, &b, &request));
  CHECK_MPI(MPI_Wait(&request, MPI_STATUS_IGNORE));
  check_works(a, world_size, 20);
  check_works(b, world_size, 21);
  CHECK_MPI(MPI_Comm_set_info(b, hints));
  MPI_Info used;
  int nkeys = -1;
  CHECK_MPI(MPI_Comm_get_info(b, &used));
  CHECK_MPI(MPI_Info_get_nkeys(used, &nkeys));
  CHECK(nkeys == 0, "MPI_Comm_get_info gave %d hints back, none being used", nkeys);
  CHECK_MPI(MPI_Info_free(&used));
  CHECK_MPI(MPI_Comm_disconnect(&a));
  CHECK(a == MPI_COMM_NULL, "MPI_Comm_disconnect left the handle");
  CHECK_MPI(MPI_Comm_disconnect(&b));
  CHECK_MPI(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
  CHECK_CLASS(MPI_ERR_INFO, MPI_Comm_set_info(MPI_COMM_WORLD, MPI_INFO_NULL));
  CHECK_CLASS(MPI_ERR_COMM, MPI_Comm_disconnect(&(MPI_Comm){MPI_COMM_WORLD}));
  CHECK_MPI(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
  CHECK_MPI(MPI_Info_free(&hints));
}

static void phase_outsiders_and_errors(void) {
  MPI_Group first = world_ranks_group(0, 1, 1);
  MPI_Comm made = MPI_COMM_NULL;
  CHECK_MPI(MPI_Comm_create_group(MPI_COMM_WORLD, first, 1, &made));
  if (world_rank == 0) {
    check_works(made, 1, 5);
    CHECK_MPI(MPI_Comm_free(&made));
  } else {
    CHECK(made == MPI_COMM_NULL, "a process outside the group got a communicator");
  }
  CHECK_MPI(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
  CHECK_CLASS(MPI_ERR_TAG, MPI_Comm_create_group(MPI_COMM_WORLD, first, -1, &made));
  CHECK_CLASS(MPI_ERR_GROUP, MPI_Comm_create_group(MPI_COMM_WORLD, MPI_GROUP_NULL, 1, &made));
  CHECK_CLASS(MPI_ERR_COMM, MPI_Comm_create_group(MPI_COMM_NULL, first, 1, &made));
  CHECK_CLASS(MPI_ERR_ARG, MPI_Comm_create_group(MPI_COMM_WORLD, first, 1, NULL));
  CHECK_CLASS(MPI_ERR_COMM, MPI_Comm_idup(MPI_COMM_NULL, &made, NULL));
  CHECK_CLASS(MPI_ERR_ARG, MPI_Comm_idup(MPI_COMM_WORLD, &made, NULL));
  if (world_size > 1) {
    /* The world's group is not within MPI_COMM_SELF. */
    MPI_Group all = world_ranks_group(0, 1, world_size);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    CHECK_CLASS(MPI_ERR_GROUP, MPI_Comm_create_group(MPI_COMM_SELF, all, 1, &made));
    CHECK_MPI(MPI_Group_free(&all));
  }
  CHECK_MPI(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
  CHECK_MPI(MPI_Group_free(&first));
}

struct worker {
  pthread_t thread;
  int kind; /* 0, 1: create_group with tag 21 + kind, forward or reversed; 2: idup */
  int rounds;
  MPI_Comm parent;
};

static void *make_communicators(void *argument) {
  struct worker *w = argument;
  for (int round = 0; round < w->rounds; ++round) {
    MPI_Comm made = MPI_COMM_NULL;
    if (w->kind < 2) {
      MPI_Group group = w->kind == 0 ? world_ranks_group(0, 1, world_size)
                                     : world_ranks_group(world_size - 1, -1, world_size);
      CHECK_MPI(MPI_Comm_create_group(w->parent, group, 21 + w->kind, &made));
      CHECK_MPI(MPI_Group_free(&group));
    } else {
      MPI_Request request;
      CHECK_MPI(MPI_Comm_idup(w->parent, &made, &request));
      CHECK_MPI(MPI_Wait(&request, MPI_STATUS_IGNORE));
    }
    int rank = -1;
    CHECK_MPI(MPI_Comm_rank(made, &rank));
    CHECK(rank == (w->kind == 1 ? world_size - 1 - world_rank : world_rank), "thread %d: rank %d", w->kind, rank);
    check_works(made, world_size, 30 + w->kind);
    CHECK_MPI(MPI_Comm_free(&made));
  }
  return NULL;
}

static void phase_threads(int rounds) {
  MPI_Comm shared = MPI_COMM_NULL, own = MPI_COMM_NULL;
  CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &shared));
  CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &own));
  struct worker workers[3] = {{.kind = 0, .rounds = rounds, .parent = shared},
                              {.kind = 1, .rounds = rounds, .parent = shared},
                              {.kind = 2, .rounds = rounds, .parent = own}};
  for (int k = 0; k < 3; ++k) CHECK(pthread_create(&workers[k].thread, NULL, make_communicators, &workers[k]) == 0, "pthread_create");
  for (int k = 0; k < 3; ++k) CHECK(pthread_join(workers[k].thread, NULL) == 0, "pthread_join");
  CHECK_MPI(MPI_Comm_free(&shared));
  CHECK_MPI(MPI_Comm_free(&own));
}

int main(int argc, char **argv) {
  int provided = MPI_THREAD_SINGLE;
  CHECK_MPI(MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided));
  CHECK_MPI(MPI_Comm_rank(MPI_COMM_WORLD, &world_rank));
  CHECK_MPI(MPI_Comm_size(MPI_COMM_WORLD, &world_size));
  const int rounds = argc > 1 ? atoi(argv[1]) : 10;
  phase_idup_overlapped();
  phase_isolation();
  phase_many_pending(rounds);
  phase_halves_and_intercomm();
  phase_create_group();
  phase_outsiders_and_errors();
  phase_crossed_order();
  phase_info_and_disconnect();
  CHECK(provided == MPI_THREAD_MULTIPLE, "MPI_THREAD_MULTIPLE not provided (%d)", provided);
  phase_threads(rounds);
  CHECK_MPI(MPI_Finalize());
  if (world_rank == 0) printf("comm_idup_group: %d ranks passed\n", world_size);
  return 0;
}

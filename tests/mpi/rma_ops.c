/* One-sided communication: every operation under every synchronisation mode, values checked.
 * - fence: put and get in a ring, derived datatypes on the origin and on the target side;
 * - accumulate with MPI_SUM, MPI_MAX, MPI_BAND, MPI_REPLACE, MPI_MINLOC (MPI_DOUBLE_INT, a padded pair),
 *   get_accumulate (MPI_NO_OP as an atomic read), fetch_and_op, compare_and_swap;
 * - post-start-complete-wait (MPI_Win_test too), lock/unlock shared and exclusive, lock_all with the
 *   flushes and the request versions (Rput, Rget, Raccumulate, Rget_accumulate);
 * - a dynamic window (attach, detach), MPI_Win_create over the program's memory;
 * - window attributes, name, group, info, keyvals with a delete callback.
 * Any rank count from 1 up. */
#include <stdint.h>
#include <string.h>

#include "check.h"

enum { kSlots = 64 };

static int deleted = 0;
static int count_delete(MPI_Win win, int keyval, void *value, void *extra) {
  (void)win;
  (void)keyval;
  (void)extra;
  deleted += *(int *)value;
  return MPI_SUCCESS;
}

static void test_fence(int rank, int size) {
  int *mem = NULL;
  MPI_Win win;
  CHECK_MPI(MPI_Win_allocate(kSlots * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win));
  for (int i = 0; i < kSlots; ++i) mem[i] = -1;
  const int right = (rank + 1) % size;
  const int left = (rank + size - 1) % size;

  CHECK_MPI(MPI_Win_fence(MPI_MODE_NOPRECEDE, win));
  const int value = 1000 + rank;
  CHECK_MPI(MPI_Put(&value, 1, MPI_INT, right, 0, 1, MPI_INT, win));
  /* Origin side derived: every other int of `strided` lands in slots 8..11 of the target. */
  int strided[8];
  for (int i = 0; i < 8; ++i) strided[i] = i % 2 == 0 ? rank * 10 + i / 2 : -7;
  MPI_Datatype every_other;
  CHECK_MPI(MPI_Type_vector(4, 1, 2, MPI_INT, &every_other));
  CHECK_MPI(MPI_Type_commit(&every_other));
  CHECK_MPI(MPI_Put(strided, 1, every_other, right, 8, 4, MPI_INT, win));
  /* Target side derived: 4 contiguous ints land in slots 20, 22, 24, 26 of the target. */
  const int four[4] = {rank + 1, rank + 2, rank + 3, rank + 4};
  CHECK_MPI(MPI_Put(four, 4, MPI_INT, right, 20, 1, every_other, win));
  CHECK_MPI(MPI_Win_fence(0, win));
  CHECK(mem[0] == 1000 + left, "fence put: slot 0 holds %d, expected %d", mem[0], 1000 + left);
  for (int i = 0; i < 4; ++i) {
    CHECK(mem[8 + i] == left * 10 + i, "origin-derived put: slot %d holds %d", 8 + i, mem[8 + i]);
    CHECK(mem[20 + 2 * i] == left + 1 + i, "target-derived put: slot %d holds %d", 20 + 2 * i, mem[20 + 2 * i]);
    CHECK(mem[21 + 2 * i] == -1, "target-derived put wrote the hole at slot %d", 21 + 2 * i);
  }
  /* Get back what the right neighbour holds, into a strided origin buffer, from a strided target. */
  int got[8];
  for (int i = 0; i < 8; ++i) got[i] = -9;
  CHECK_MPI(MPI_Get(got, 1, every_other, right, 20, 1, every_other, win));
  CHECK_MPI(MPI_Win_fence(MPI_MODE_NOSUCCEED, win));
  for (int i = 0; i < 4; ++i) {
    CHECK(got[2 * i] == rank + 1 + i, "get: item %d is %d, expected %d", i, got[2 * i], rank + 1 + i);
    CHECK(got[2 * i + 1] == -9, "get wrote the origin's hole %d", 2 * i + 1);
  }
  CHECK_MPI(MPI_Type_free(&every_other));
  CHECK_MPI(MPI_Win_free(&win));
  CHECK(win == MPI_WIN_NULL, "MPI_Win_free did not set MPI_WIN_NULL");
}

/* 1 MiB puts, gets and accumulates: messages past the eager limit (rendezvous) both ways. */
static void test_large(int rank, int size) {
  enum { kInts = 1 << 18 };
  int *mem = NULL;
  MPI_Win win;
  CHECK_MPI(MPI_Win_allocate(kInts * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win));
  int *out = malloc(kInts * sizeof(int));
  int *back = malloc(kInts * sizeof(int));
  CHECK(out != NULL && back != NULL, "malloc");
  for (int i = 0; i < kInts; ++i) out[i] = rank * 7 + i;
  const int right = (rank + 1) % size;
  const int left = (rank + size - 1) % size;
  CHECK_MPI(MPI_Win_fence(0, win));
  CHECK_MPI(MPI_Put(out, kInts, MPI_INT, right, 0, kInts, MPI_INT, win));
  CHECK_MPI(MPI_Win_fence(0, win));
  CHECK_MPI(MPI_Accumulate(out, kInts, MPI_INT, right, 0, kInts, MPI_INT, MPI_SUM, win));
  CHECK_MPI(MPI_Win_fence(0, win));
  CHECK_MPI(MPI_Get(back, kInts, MPI_INT, left, 0, kInts, MPI_INT, win));
  CHECK_MPI(MPI_Win_fence(MPI_MODE_NOSUCCEED, win));
  for (int i = 0; i < kInts; ++i) {
    CHECK(mem[i] == 2 * (left * 7 + i), "large put+accumulate: item %d is %d", i, mem[i]);
    const int left_of_left = (left + size - 1) % size;
    CHECK(back[i] == 2 * (left_of_left * 7 + i), "large get: item %d is %d", i, back[i]);
  }
  free(out);
  free(back);
  CHECK_MPI(MPI_Win_free(&win));
}

static void test_accumulate(int rank, int size) {
  int mem[kSlots];
  MPI_Win win;
  for (int i = 0; i < kSlots; ++i) mem[i] = 0;
  mem[2] = -1; /* all bits, for MPI_BAND */
  CHECK_MPI(MPI_Win_create(mem, sizeof mem, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win));
  CHECK_MPI(MPI_Win_fence(0, win));
  for (int target = 0; target < size; ++target) {
    const int one = rank + 1;
    CHECK_MPI(MPI_Accumulate(&one, 1, MPI_INT, target, 0, 1, MPI_INT, MPI_SUM, win));
    const int mine = 5 * rank - 3;
    CHECK_MPI(MPI_Accumulate(&mine, 1, MPI_INT, target, 1, 1, MPI_INT, MPI_MAX, win));
    const int mask = ~(1 << rank);
    CHECK_MPI(MPI_Accumulate(&mask, 1, MPI_INT, target, 2, 1, MPI_INT, MPI_BAND, win));
  }
  CHECK_MPI(MPI_Win_fence(0, win));
  CHECK(mem[0] == size * (size + 1) / 2, "MPI_SUM: %d, expected %d", mem[0], size * (size + 1) / 2);
  CHECK(mem[1] == 5 * (size - 1) - 3 || (size == 1 && mem[1] == 0), "MPI_MAX: %d", mem[1]);
  CHECK(mem[2] == (int)(~((1u << size) - 1)), "MPI_BAND: %#x", (unsigned)mem[2]);

  /* Fetch_and_op and Get_accumulate: each rank adds to slot 4 of rank 0 and fetches the old value; the
   * fetched values are distinct and the final one the total. */
  const int add = 1;
  int before = -1;
  CHECK_MPI(MPI_Fetch_and_op(&add, &before, MPI_INT, 0, 4, MPI_SUM, win));
  const int two[2] = {10, 20};
  int old[2] = {-1, -1};
  CHECK_MPI(MPI_Get_accumulate(two, 2, MPI_INT, old, 2, MPI_INT, 0, 5, 2, MPI_INT, MPI_SUM, win));
  CHECK_MPI(MPI_Win_fence(0, win));
  CHECK(before >= 0 && before < size, "fetch_and_op fetched %d", before);
  CHECK(old[0] % 10 == 0 && old[0] / 10 < size && old[1] == 2 * old[0], "get_accumulate fetched %d %d", old[0],
        old[1]);
  int fetched_sum = 0;
  CHECK_MPI(MPI_Allreduce(&before, &fetched_sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
  CHECK(fetched_sum == size * (size - 1) / 2, "the fetched values sum to %d, not 0+1+...+%d", fetched_sum,
        size - 1);
  if (rank == 0) {
    CHECK(mem[4] == size, "fetch_and_op total %d", mem[4]);
    CHECK(mem[5] == 10 * size && mem[6] == 20 * size, "get_accumulate totals %d %d", mem[5], mem[6]);
  }

  /* MPI_REPLACE, MPI_NO_OP (an atomic read) and compare_and_swap on rank 0's slot 7. */
  if (rank == 0) {
    const int seven = 77;
    CHECK_MPI(MPI_Accumulate(&seven, 1, MPI_INT, size - 1, 7, 1, MPI_INT, MPI_REPLACE, win));
  }
  CHECK_MPI(MPI_Win_fence(0, win));
  int read = -1;
  CHECK_MPI(MPI_Get_accumulate(NULL, 0, MPI_INT, &read, 1, MPI_INT, size - 1, 7, 1, MPI_INT, MPI_NO_OP, win));
  CHECK_MPI(MPI_Win_fence(0, win));
  CHECK(read == 77, "MPI_NO_OP read %d after MPI_REPLACE of 77", read);
  /* Every rank tries to swap 77 -> its rank + 100: exactly one succeeds. */
  const int want = 77;
  const int mine_value = rank + 100;
  int found = -1;
  CHECK_MPI(MPI_Compare_and_swap(&mine_value, &want, &found, MPI_INT, size - 1, 7, win));
  CHECK_MPI(MPI_Win_fence(0, win));
  const int won = found == 77 ? 1 : 0;
  int winners = 0;
  CHECK_MPI(MPI_Allreduce(&won, &winners, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
  CHECK(winners == 1, "%d ranks won the compare_and_swap", winners);
  CHECK_MPI(MPI_Win_fence(MPI_MODE_NOSUCCEED, win));
  CHECK_MPI(MPI_Win_free(&win));

  /* MPI_MINLOC on MPI_DOUBLE_INT, whose C layout has padding the packed form has not. */
  struct {
    double value;
    int index;
  } pair[2] = {{1e9, -1}, {1e9, -1}};
  CHECK_MPI(MPI_Win_create(pair, sizeof pair, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win));
  CHECK_MPI(MPI_Win_lock_all(0, win));
  struct {
    double value;
    int index;
  } offer[2] = {{(double)((rank * 7) % size), rank}, {-(double)rank, rank}};
  CHECK_MPI(MPI_Accumulate(offer, 2, MPI_DOUBLE_INT, 0, 0, 2, MPI_DOUBLE_INT, MPI_MINLOC, win));
  CHECK_MPI(MPI_Win_unlock_all(win));
  CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
  if (rank == 0) {
    CHECK_MPI(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win));
    CHECK(pair[0].value == 0.0 && pair[0].index == 0, "MINLOC[0]: %g at %d", pair[0].value, pair[0].index);
    CHECK(pair[1].value == -(double)(size - 1) && pair[1].index == size - 1, "MINLOC[1]: %g at %d", pair[1].value,
          pair[1].index);
    CHECK_MPI(MPI_Win_unlock(0, win));
  }
  CHECK_MPI(MPI_Win_free(&win));
}

static void test_pscw(int rank, int size) {
  int *mem = NULL;
  MPI_Win win;
  CHECK_MPI(MPI_Win_allocate(4 * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win));
  mem[0] = mem[1] = -1;
  const int right = (rank + 1) % size;
  const int left = (rank + size - 1) % size;
  MPI_Group world, from_left, to_right;
  CHECK_MPI(MPI_Comm_group(MPI_COMM_WORLD, &world));
  CHECK_MPI(MPI_Group_incl(world, 1, &left, &from_left));
  CHECK_MPI(MPI_Group_incl(world, 1, &right, &to_right));
  for (int round = 0; round < 3; ++round) {
    CHECK_MPI(MPI_Win_post(from_left, 0, win));
    CHECK_MPI(MPI_Win_start(to_right, 0, win));
    const int value = rank * 100 + round;
    CHECK_MPI(MPI_Put(&value, 1, MPI_INT, right, 0, 1, MPI_INT, win));
    CHECK_MPI(MPI_Accumulate(&value, 1, MPI_INT, right, 1, 1, MPI_INT, MPI_REPLACE, win));
    CHECK_MPI(MPI_Win_complete(win));
    if (round == 1) {
      int flag = 0;
      while (!flag) CHECK_MPI(MPI_Win_test(win, &flag));
    } else {
      CHECK_MPI(MPI_Win_wait(win));
    }
    CHECK(mem[0] == left * 100 + round && mem[1] == left * 100 + round, "pscw round %d: %d %d", round, mem[0],
          mem[1]);
  }
  CHECK_MPI(MPI_Group_free(&from_left));
  CHECK_MPI(MPI_Group_free(&to_right));
  CHECK_MPI(MPI_Group_free(&world));
  CHECK_MPI(MPI_Win_free(&win));
}

static void test_passive(int rank, int size) {
  long *mem = NULL;
  MPI_Win win;
  CHECK_MPI(MPI_Win_allocate((MPI_Aint)(size + 2) * (MPI_Aint)sizeof(long), sizeof(long), MPI_INFO_NULL,
                             MPI_COMM_WORLD, &mem, &win));
  CHECK_MPI(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, win));
  for (int i = 0; i < size + 2; ++i) mem[i] = 0;
  CHECK_MPI(MPI_Win_unlock(rank, win));
  CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
  /* Exclusive: each rank writes its slot at every target; shared: reads them back after a barrier. */
  for (int target = 0; target < size; ++target) {
    const long value = 1000L * target + rank;
    CHECK_MPI(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, target, 0, win));
    CHECK_MPI(MPI_Put(&value, 1, MPI_LONG, target, rank, 1, MPI_LONG, win));
    CHECK_MPI(MPI_Win_flush(target, win));
    CHECK_MPI(MPI_Win_unlock(target, win));
  }
  CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
  for (int target = 0; target < size; ++target) {
    long back[64];
    CHECK_MPI(MPI_Win_lock(MPI_LOCK_SHARED, target, 0, win));
    CHECK_MPI(MPI_Get(back, size, MPI_LONG, target, 0, size, MPI_LONG, win));
    CHECK_MPI(MPI_Win_unlock(target, win));
    for (int r = 0; r < size; ++r) CHECK(back[r] == 1000L * target + r, "target %d slot %d: %ld", target, r, back[r]);
  }
  /* lock_all with the request versions and the flushes. */
  CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
  CHECK_MPI(MPI_Win_lock_all(0, win));
  const int target = (rank + 1) % size;
  const long one = 1;
  MPI_Request requests[4];
  long value = 5000 + rank;
  long fetched = -1;
  long got = -1;
  long seen = -1;
  CHECK_MPI(MPI_Rput(&value, 1, MPI_LONG, target, size, 1, MPI_LONG, win, &requests[0]));
  CHECK_MPI(MPI_Wait(&requests[0], MPI_STATUS_IGNORE));
  CHECK_MPI(MPI_Raccumulate(&one, 1, MPI_LONG, target, size + 1, 1, MPI_LONG, MPI_SUM, win, &requests[1]));
  CHECK_MPI(MPI_Rget_accumulate(&one, 1, MPI_LONG, &fetched, 1, MPI_LONG, target, size + 1, 1, MPI_LONG, MPI_SUM, win,
                                &requests[2]));
  CHECK_MPI(MPI_Rget(&got, 1, MPI_LONG, target, size, 1, MPI_LONG, win, &requests[3]));
  CHECK_MPI(MPI_Waitall(3, requests + 1, MPI_STATUSES_IGNORE));
  CHECK(got == 5000 + rank, "Rget after Rput read %ld", got);
  CHECK(fetched == 1, "Rget_accumulate after Raccumulate fetched %ld", fetched);
  CHECK_MPI(MPI_Win_flush_local(target, win));
  CHECK_MPI(MPI_Win_flush_all(win));
  CHECK_MPI(MPI_Win_flush_local_all(win));
  CHECK_MPI(MPI_Get(&seen, 1, MPI_LONG, target, size + 1, 1, MPI_LONG, win));
  CHECK_MPI(MPI_Win_flush(target, win));
  CHECK(seen == 2, "slot after two additions: %ld", seen);
  CHECK_MPI(MPI_Win_sync(win));
  CHECK_MPI(MPI_Win_unlock_all(win));
  CHECK_MPI(MPI_Win_free(&win));
}

static void test_dynamic(int rank, int size) {
  MPI_Win win;
  CHECK_MPI(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win));
  int flavor_ok = 0;
  int *flavor = NULL;
  CHECK_MPI(MPI_Win_get_attr(win, MPI_WIN_CREATE_FLAVOR, &flavor, &flavor_ok));
  CHECK(flavor_ok && *flavor == MPI_WIN_FLAVOR_DYNAMIC, "dynamic window's flavor");
  double *region = calloc(16, sizeof(double));
  CHECK(region != NULL, "calloc");
  CHECK_MPI(MPI_Win_attach(win, region, 16 * sizeof(double)));
  MPI_Aint mine = 0;
  CHECK_MPI(MPI_Get_address(region, &mine));
  MPI_Aint *addresses = malloc((size_t)size * sizeof(MPI_Aint));
  CHECK_MPI(MPI_Allgather(&mine, 1, MPI_AINT, addresses, 1, MPI_AINT, MPI_COMM_WORLD));
  const int target = (rank + 1) % size;
  const double value = 2.5 * rank;
  CHECK_MPI(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, target, 0, win));
  CHECK_MPI(MPI_Put(&value, 1, MPI_DOUBLE, target, addresses[target] + 3 * (MPI_Aint)sizeof(double), 1, MPI_DOUBLE,
                    win));
  CHECK_MPI(MPI_Accumulate(&value, 1, MPI_DOUBLE, target, addresses[target] + 4 * (MPI_Aint)sizeof(double), 1,
                           MPI_DOUBLE, MPI_SUM, win));
  CHECK_MPI(MPI_Win_unlock(target, win));
  CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
  CHECK_MPI(MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, win));
  const int source = (rank + size - 1) % size;
  CHECK(region[3] == 2.5 * source && region[4] == 2.5 * source, "dynamic window: %g %g", region[3], region[4]);
  CHECK_MPI(MPI_Win_unlock(rank, win));
  CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
  CHECK_MPI(MPI_Win_detach(win, region));
  CHECK_MPI(MPI_Win_free(&win));
  free(addresses);
  free(region);
}

static void test_attributes(int rank, int size) {
  char mem[24];
  MPI_Win win;
  CHECK_MPI(MPI_Win_create(mem, sizeof mem, 8, MPI_INFO_NULL, MPI_COMM_WORLD, &win));
  void *base = NULL;
  MPI_Aint *wsize = NULL;
  int *unit = NULL;
  int *flavor = NULL;
  int *model = NULL;
  int flag = 0;
  CHECK_MPI(MPI_Win_get_attr(win, MPI_WIN_BASE, &base, &flag));
  CHECK(flag && base == mem, "MPI_WIN_BASE");
  CHECK_MPI(MPI_Win_get_attr(win, MPI_WIN_SIZE, &wsize, &flag));
  CHECK(flag && *wsize == (MPI_Aint)sizeof mem, "MPI_WIN_SIZE");
  CHECK_MPI(MPI_Win_get_attr(win, MPI_WIN_DISP_UNIT, &unit, &flag));
  CHECK(flag && *unit == 8, "MPI_WIN_DISP_UNIT");
  CHECK_MPI(MPI_Win_get_attr(win, MPI_WIN_CREATE_FLAVOR, &flavor, &flag));
  CHECK(flag && *flavor == MPI_WIN_FLAVOR_CREATE, "MPI_WIN_CREATE_FLAVOR");
  CHECK_MPI(MPI_Win_get_attr(win, MPI_WIN_MODEL, &model, &flag));
  CHECK(flag && *model == MPI_WIN_SEPARATE, "MPI_WIN_MODEL");

  char name[MPI_MAX_OBJECT_NAME];
  int len = -1;
  CHECK_MPI(MPI_Win_get_name(win, name, &len));
  CHECK(len == 0 && name[0] == '\0', "a new window's name is empty");
  CHECK_MPI(MPI_Win_set_name(win, "the window"));
  CHECK_MPI(MPI_Win_get_name(win, name, &len));
  CHECK(len == 10 && strcmp(name, "the window") == 0, "name %s", name);

  MPI_Group group, world;
  int result = -1;
  CHECK_MPI(MPI_Win_get_group(win, &group));
  CHECK_MPI(MPI_Comm_group(MPI_COMM_WORLD, &world));
  CHECK_MPI(MPI_Group_compare(group, world, &result));
  CHECK(result == MPI_IDENT, "the window's group is not MPI_COMM_WORLD's");
  CHECK_MPI(MPI_Group_free(&group));
  CHECK_MPI(MPI_Group_free(&world));

  MPI_Info info;
  int nkeys = -1;
  CHECK_MPI(MPI_Win_set_info(win, MPI_INFO_ENV)); /* hints are accepted and ignored */
  CHECK_MPI(MPI_Win_get_info(win, &info));
  CHECK_MPI(MPI_Info_get_nkeys(info, &nkeys));
  CHECK(nkeys == 0, "MPI_Win_get_info: %d keys", nkeys);
  CHECK_MPI(MPI_Info_free(&info));

  int key = MPI_KEYVAL_INVALID;
  static int three = 3;
  static int four = 4;
  CHECK_MPI(MPI_Win_create_keyval(MPI_WIN_NULL_COPY_FN, count_delete, &key, NULL));
  CHECK_MPI(MPI_Win_set_attr(win, key, &three));
  int *value = NULL;
  CHECK_MPI(MPI_Win_get_attr(win, key, &value, &flag));
  CHECK(flag && value == &three, "MPI_Win_get_attr of a set attribute");
  CHECK_MPI(MPI_Win_set_attr(win, key, &four)); /* deletes the 3 */
  CHECK(deleted == 3, "replacing an attribute called delete with %d", deleted);
  CHECK_MPI(MPI_Win_free_keyval(&key));
  CHECK(MPI_Win_c2f(win) != 0 && MPI_Win_f2c(MPI_Win_c2f(win)) == win, "MPI_Win_c2f/f2c");
  CHECK_MPI(MPI_Win_free(&win)); /* deletes the 4 */
  CHECK(deleted == 7, "MPI_Win_free called delete: %d", deleted);
  (void)rank;
  (void)size;
}

int main(int argc, char **argv) {
  int rank = 0;
  int size = 0;
  test_init_world(&argc, &argv, &rank, &size);
  CHECK(size <= 32, "at most 32 ranks");
  test_fence(rank, size);
  test_large(rank, size);
  test_accumulate(rank, size);
  test_pscw(rank, size);
  test_passive(rank, size);
  test_dynamic(rank, size);
  test_attributes(rank, size);
  CHECK_MPI(MPI_Finalize());
  if (rank == 0) printf("rma_ops: ok at %d ranks\n", size);
  return 0;
}

/* MPI_INFO_ENV (MPI-3.1 section 9.1.2) says how the process was started: its command, arguments, the
 * number of processes, host, working directory and thread level. It can be read and duplicated, not
 * changed or freed. The constants MPI-3.1 defines that programs name at compile time are all here too
 * (a missing one fails the build of this test). MPI-4's MPI_Info_create_env makes a new info object of
 * the same keys, before MPI_Init too (from the argc/argv given, or the system's when 0/NULL), that the
 * program may change and free. Run as `mpi_info_env alpha beta`. */
#define _POSIX_C_SOURCE 200809L /* gethostname, getcwd */

#include <string.h>
#include <unistd.h>

#include "check.h"

/* Referenced, so that the build fails when mpi.h lacks one. */
static const int constants[] = {MPI_COMBINER_NAMED, MPI_COMBINER_STRUCT, MPI_COMBINER_SUBARRAY, MPI_ORDER_C,
                                MPI_ORDER_FORTRAN, MPI_LASTUSEDCODE, MPI_LOCK_EXCLUSIVE, MPI_LOCK_SHARED,
                                MPI_MODE_NOCHECK, MPI_MODE_NOSTORE, MPI_MODE_NOPUT, MPI_MODE_NOPRECEDE,
                                MPI_MODE_NOSUCCEED, MPI_MESSAGE_NULL, MPI_MESSAGE_NO_PROC};

static void expect_in(MPI_Info info, const char *key, const char *want) {
  char value[MPI_MAX_INFO_VAL + 1];
  int flag = 0;
  CHECK_MPI(MPI_Info_get(info, key, MPI_MAX_INFO_VAL, value, &flag));
  CHECK(flag, "the environment's info has no '%s'", key);
  CHECK(strcmp(value, want) == 0, "the environment's info '%s' is '%s', not '%s'", key, value, want);
}

static void expect(const char *key, const char *want) { expect_in(MPI_INFO_ENV, key, want); }

static int has_key(MPI_Info info, const char *key) {
  int length = 0, flag = 0;
  CHECK_MPI(MPI_Info_get_valuelen(info, key, &length, &flag));
  return flag;
}

int main(int argc, char **argv) {
  /* Before MPI_Init: what argc/argv say; the number of processes and thread level are not known yet. */
  MPI_Info before = MPI_INFO_NULL;
  CHECK_MPI(MPI_Info_create_env(argc, argv, &before));
  CHECK(before != MPI_INFO_NULL && before != MPI_INFO_ENV, "MPI_Info_create_env gave no new info");
  expect_in(before, "command", argv[0]);
  expect_in(before, "argv", argc == 3 ? "alpha beta" : "");
  CHECK(!has_key(before, "maxprocs") && !has_key(before, "thread_level"), "maxprocs before MPI_Init");
  CHECK_MPI(MPI_Info_set(before, "argv", "changed")); /* the program's own */
  expect_in(before, "argv", "changed");
  CHECK_MPI(MPI_Info_free(&before));
  int provided = -1;
  CHECK_MPI(MPI_Init_thread(&argc, &argv, MPI_THREAD_SERIALIZED, &provided));
  CHECK(constants[0] == MPI_COMBINER_NAMED && MPI_UNWEIGHTED != NULL && MPI_WEIGHTS_EMPTY != NULL &&
            MPI_UNWEIGHTED != MPI_WEIGHTS_EMPTY,
        "MPI_UNWEIGHTED and MPI_WEIGHTS_EMPTY are distinct, non-null addresses");
  CHECK(argc == 3 && strcmp(argv[1], "alpha") == 0, "run as: mpi_info_env alpha beta");
  int size = 0;
  CHECK_MPI(MPI_Comm_size(MPI_COMM_WORLD, &size));
  char text[64], host[256], cwd[4096];
  expect("command", argv[0]);
  expect("argv", "alpha beta");
  snprintf(text, sizeof text, "%d", size);
  expect("maxprocs", text);
  CHECK(gethostname(host, sizeof host) == 0 && getcwd(cwd, sizeof cwd) != NULL, "gethostname, getcwd");
  expect("host", host);
  expect("wdir", cwd);
  CHECK(provided == MPI_THREAD_SERIALIZED, "MPI_Init_thread provided %d for MPI_THREAD_SERIALIZED", provided);
  expect("thread_level", "MPI_THREAD_SERIALIZED");

  /* Read-only; a duplicate is the program's own. */
  CHECK_MPI(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
  CHECK_CLASS(MPI_ERR_INFO, MPI_Info_set(MPI_INFO_ENV, "command", "other"));
  CHECK_CLASS(MPI_ERR_INFO, MPI_Info_delete(MPI_INFO_ENV, "argv"));
  MPI_Info env = MPI_INFO_ENV;
  CHECK_CLASS(MPI_ERR_INFO, MPI_Info_free(&env));
  CHECK(env == MPI_INFO_ENV, "a refused free leaves the handle");
  expect("command", argv[0]);
  MPI_Info copy;
  CHECK_MPI(MPI_Info_dup(MPI_INFO_ENV, &copy));
  CHECK_MPI(MPI_Info_set(copy, "command", "other"));
  CHECK_MPI(MPI_Info_free(&copy));
  expect("command", argv[0]);

  /* After MPI_Init, from the system (0, NULL): what MPI_INFO_ENV holds. */
  MPI_Info after = MPI_INFO_NULL;
  CHECK_MPI(MPI_Info_create_env(0, NULL, &after));
  int nkeys = 0, env_keys = 0;
  CHECK_MPI(MPI_Info_get_nkeys(after, &nkeys));
  CHECK_MPI(MPI_Info_get_nkeys(MPI_INFO_ENV, &env_keys));
  CHECK(nkeys == env_keys, "MPI_Info_create_env has %d keys, MPI_INFO_ENV %d", nkeys, env_keys);
  expect_in(after, "argv", "alpha beta");
  expect_in(after, "maxprocs", text);
  expect_in(after, "thread_level", "MPI_THREAD_SERIALIZED");
  CHECK_MPI(MPI_Info_free(&after));
  CHECK_CLASS(MPI_ERR_ARG, MPI_Info_create_env(-1, argv, &after));
  CHECK_CLASS(MPI_ERR_ARG, MPI_Info_create_env(1, NULL, &after));
  CHECK_CLASS(MPI_ERR_ARG, MPI_Info_create_env(argc, argv, NULL));
  CHECK_MPI(MPI_Finalize());
  return 0;
}

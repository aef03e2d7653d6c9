/* The tools information interface (MPI_T) and the dynamic-process calls, at 2 ranks.
 *
 * Usage: mpi_tools_interface MODE EAGER_LIMIT
 *   MODE "write": before MPI_Init, sets the control variable engine.shm.eager_limit to 1024 through
 *   MPI_T_cvar_write; MODE "read": leaves it. EAGER_LIMIT is what engine.shm.eager_limit must read after
 *   MPI_Init (1024 after a write, or what ftrun --param set, or the default). The effect is checked, not
 *   only the value: a 4 KB standard send goes eagerly under a limit of 4 KB or more, and is then complete
 *   before its receive is even posted; under a smaller limit it waits for the receive (rendezvous).
 * Also checked: every MPI_T call's refusals (not initialized, bad index, bad handle, bad session, write
 * after MPI_Init, a value the type refuses, a read-only performance variable), string lengths as
 * MPI-3.1 section 14.3.3 says, categories covering every control variable exactly once, counters that
 * count from their handle's allocation and survive MPI_Finalize; MPI_Comm_get_parent, and the refusal of
 * MPI_Comm_spawn / connect / lookup with their classes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

#define CHECK_T(expected, call)                                                              \
  do {                                                                                       \
    const int got_ = (call);                                                                 \
    CHECK(got_ == (expected), "%s returned %d, expected %d (%s)", #call, got_, (expected), #expected); \
  } while (0)

static int rank = -1;

static int cvar_index(const char *name) {
  int index = -1;
  CHECK_T(MPI_SUCCESS, MPI_T_cvar_get_index(name, &index));
  return index;
}

static void read_string_cvar(int index, char *value, int capacity) {
  MPI_T_cvar_handle handle = MPI_T_CVAR_HANDLE_NULL;
  int count = 0;
  CHECK_T(MPI_SUCCESS, MPI_T_cvar_handle_alloc(index, NULL, &handle, &count));
  CHECK(count >= 2 && count <= capacity, "string control variable count %d", count);
  CHECK_T(MPI_SUCCESS, MPI_T_cvar_read(handle, value));
  CHECK_T(MPI_SUCCESS, MPI_T_cvar_handle_free(&handle));
  CHECK(handle == MPI_T_CVAR_HANDLE_NULL, "freed handle not reset");
}

/* Names, lengths, types and categories of every control variable. */
static void control_variables(void) {
  int num = 0;
  CHECK_T(MPI_SUCCESS, MPI_T_cvar_get_num(&num));
  CHECK(num >= 50, "only %d control variables", num);
  int categories = 0;
  CHECK_T(MPI_SUCCESS, MPI_T_category_get_num(&categories));
  CHECK(categories >= 5, "only %d categories", categories);
  int *seen = calloc((size_t)num, sizeof(int));
  CHECK(seen != NULL, "out of memory");
  int engine_pvars = 0;
  for (int c = 0; c < categories; ++c) {
    char name[64];
    int name_len = sizeof name, num_cvars = -1, num_pvars = -1, num_categories = -1;
    int desc_len = 0; /* asks for the length only */
    CHECK_T(MPI_SUCCESS, MPI_T_category_get_info(c, name, &name_len, NULL, &desc_len, &num_cvars, &num_pvars,
                                                 &num_categories));
    CHECK(desc_len > 1 && name_len == (int)strlen(name) + 1, "category %d: lengths %d %d", c, name_len, desc_len);
    int again = -1;
    CHECK_T(MPI_SUCCESS, MPI_T_category_get_index(name, &again));
    CHECK(again == c, "category %s has index %d and %d", name, c, again);
    CHECK(num_categories == 0 && num_cvars > 0, "category %s: %d cvars", name, num_cvars);
    int *indices = malloc(sizeof(int) * (size_t)num_cvars);
    CHECK(indices != NULL, "out of memory");
    CHECK_T(MPI_SUCCESS, MPI_T_category_get_cvars(c, num_cvars, indices));
    for (int k = 0; k < num_cvars; ++k) {
      CHECK(indices[k] >= 0 && indices[k] < num, "category %s: cvar index %d", name, indices[k]);
      ++seen[indices[k]];
      char cvar[128];
      int cvar_len = sizeof cvar;
      CHECK_T(MPI_SUCCESS, MPI_T_cvar_get_info(indices[k], cvar, &cvar_len, NULL, NULL, NULL, NULL, NULL, NULL, NULL));
      CHECK(strncmp(cvar, name, strlen(name)) == 0 && cvar[strlen(name)] == '.', "%s is in category %s", cvar, name);
    }
    free(indices);
    if (strcmp(name, "engine") == 0) engine_pvars = num_pvars;
  }
  for (int i = 0; i < num; ++i) CHECK(seen[i] == 1, "control variable %d is in %d categories", i, seen[i]);
  free(seen);
  int pvars = 0;
  CHECK_T(MPI_SUCCESS, MPI_T_pvar_get_num(&pvars));
  CHECK(pvars > 10 && engine_pvars == pvars, "%d performance variables, %d in category engine", pvars, engine_pvars);

  /* One variable in detail: a size, and the string-length rules. */
  const int limit = cvar_index("engine.shm.eager_limit");
  char name[8];
  int name_len = sizeof name, verbosity = -1, bind = -1, scope = -1, desc_len = 0;
  MPI_Datatype type = MPI_DATATYPE_NULL;
  MPI_T_enum enumtype = (MPI_T_enum)&name;
  CHECK_T(MPI_SUCCESS, MPI_T_cvar_get_info(limit, name, &name_len, &verbosity, &type, &enumtype, NULL, &desc_len,
                                           &bind, &scope));
  CHECK(strcmp(name, "engine.") == 0 && name_len == 8, "truncated name '%s' (%d)", name, name_len);
  CHECK(type == MPI_UNSIGNED_LONG_LONG && enumtype == MPI_T_ENUM_NULL && bind == MPI_T_BIND_NO_OBJECT,
        "engine.shm.eager_limit's type, enum or binding");
  CHECK(desc_len > 20 && verbosity >= MPI_T_VERBOSITY_USER_BASIC && verbosity <= MPI_T_VERBOSITY_MPIDEV_ALL,
        "description length %d, verbosity %d", desc_len, verbosity);
  name_len = 0;
  CHECK_T(MPI_SUCCESS, MPI_T_cvar_get_info(limit, NULL, &name_len, NULL, NULL, NULL, NULL, NULL, NULL, NULL));
  CHECK(name_len == (int)strlen("engine.shm.eager_limit") + 1, "length asked with 0: %d", name_len);
  MPI_T_cvar_handle handle = MPI_T_CVAR_HANDLE_NULL;
  int count = 0;
  CHECK_T(MPI_SUCCESS, MPI_T_cvar_handle_alloc(limit, NULL, &handle, &count));
  unsigned long long bytes = 0;
  CHECK_T(MPI_SUCCESS, MPI_T_cvar_read(handle, &bytes));
  CHECK(count == 1 && bytes >= 1024, "engine.shm.eager_limit reads %llu (count %d)", bytes, count);
  CHECK_T(MPI_SUCCESS, MPI_T_cvar_handle_free(&handle));

  /* Refusals. */
  CHECK_T(MPI_T_ERR_INVALID_INDEX, MPI_T_cvar_get_info(num, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL));
  CHECK_T(MPI_T_ERR_INVALID_INDEX, MPI_T_cvar_handle_alloc(-1, NULL, &handle, &count));
  CHECK_T(MPI_T_ERR_INVALID_NAME, MPI_T_cvar_get_index("engine.no_such_parameter", &count));
  CHECK_T(MPI_T_ERR_INVALID_HANDLE, MPI_T_cvar_read(MPI_T_CVAR_HANDLE_NULL, &bytes));
  CHECK_T(MPI_T_ERR_INVALID_HANDLE, MPI_T_cvar_handle_free(&handle));
  CHECK_T(MPI_T_ERR_INVALID_INDEX, MPI_T_category_get_info(categories, NULL, NULL, NULL, NULL, NULL, NULL, NULL));
  CHECK_T(MPI_T_ERR_INVALID_NAME, MPI_T_category_get_index("nothing", &count));
  CHECK_T(MPI_T_ERR_INVALID_HANDLE, MPI_T_enum_get_info(MPI_T_ENUM_NULL, &count, NULL, NULL));
}

/* Before MPI_Init: engine.shm.eager_limit set to 1024 (mode "write"); values the types refuse. */
static void write_before_init(void) {
  MPI_T_cvar_handle handle = MPI_T_CVAR_HANDLE_NULL;
  int count = 0;
  CHECK_T(MPI_SUCCESS, MPI_T_cvar_handle_alloc(cvar_index("engine.reliability"), NULL, &handle, &count));
  CHECK_T(MPI_T_ERR_INVALID, MPI_T_cvar_write(handle, "sometimes")); /* not one of its choices */
  CHECK_T(MPI_SUCCESS, MPI_T_cvar_handle_free(&handle));
  double seconds = -1;
  CHECK_T(MPI_SUCCESS, MPI_T_cvar_handle_alloc(cvar_index("engine.peer.timeout"), NULL, &handle, &count));
  CHECK_T(MPI_T_ERR_INVALID, MPI_T_cvar_write(handle, &seconds)); /* a negative duration */
  CHECK_T(MPI_SUCCESS, MPI_T_cvar_read(handle, &seconds));
  CHECK(seconds > 0, "engine.peer.timeout reads %g s", seconds);
  CHECK_T(MPI_SUCCESS, MPI_T_cvar_write(handle, &seconds)); /* its own value back: valid */
  CHECK_T(MPI_SUCCESS, MPI_T_cvar_handle_free(&handle));
  const unsigned long long limit = 1024;
  CHECK_T(MPI_SUCCESS, MPI_T_cvar_handle_alloc(cvar_index("engine.shm.eager_limit"), NULL, &handle, &count));
  CHECK_T(MPI_SUCCESS, MPI_T_cvar_write(handle, &limit));
  CHECK_T(MPI_SUCCESS, MPI_T_cvar_handle_free(&handle));
}

/* Whether a 4 KB standard send completes before its receive is posted: rank 0 sends, tests it 1000
 * times (an eager send is complete once handed to shared memory, whatever the receiver does), and tells
 * rank 1 what it saw; only then does rank 1 post the receive. */
static int sent_before_receive(void) {
  enum { kBytes = 4096 };
  static char message[kBytes];
  int complete = 0;
  if (rank == 0) {
    MPI_Request request;
    CHECK_MPI(MPI_Isend(message, kBytes, MPI_CHAR, 1, 11, MPI_COMM_WORLD, &request));
    for (int i = 0; i < 1000 && !complete; ++i) CHECK_MPI(MPI_Test(&request, &complete, MPI_STATUS_IGNORE));
    CHECK_MPI(MPI_Send(&complete, 1, MPI_INT, 1, 12, MPI_COMM_WORLD));
    if (!complete) CHECK_MPI(MPI_Wait(&request, MPI_STATUS_IGNORE));
  } else {
    CHECK_MPI(MPI_Recv(&complete, 1, MPI_INT, 0, 12, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    CHECK_MPI(MPI_Recv(message, kBytes, MPI_CHAR, 0, 11, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
  }
  return complete;
}

static MPI_T_pvar_handle counter(MPI_T_pvar_session session, const char *name) {
  int index = -1, count = 0;
  CHECK_T(MPI_SUCCESS, MPI_T_pvar_get_index(name, MPI_T_PVAR_CLASS_COUNTER, &index));
  MPI_T_pvar_handle handle = MPI_T_PVAR_HANDLE_NULL;
  CHECK_T(MPI_SUCCESS, MPI_T_pvar_handle_alloc(session, index, NULL, &handle, &count));
  CHECK(count == 1, "counter count %d", count);
  return handle;
}

static unsigned long long read_counter(MPI_T_pvar_session session, MPI_T_pvar_handle handle) {
  unsigned long long value = 0;
  CHECK_T(MPI_SUCCESS, MPI_T_pvar_read(session, handle, &value));
  return value;
}

/* A 1 MB message each way over shared memory is a single copy that both processes move (split copy:
 * the receiver reads the first half while the sender writes the second): each rank counts one, and
 * neither half had to be moved again. Where Yama forbids reading a sibling (ptrace_scope 2 or 3) the
 * message is piped instead, and only its bytes are checked. */
static void split_copy(MPI_T_pvar_session session) {
  MPI_T_pvar_handle splits = counter(session, "engine.split_copies");
  MPI_T_pvar_handle rereads = counter(session, "engine.split_copy_rereads");
  enum { kLarge = 1 << 20 };
  unsigned char *large = malloc(kLarge);
  CHECK(large != NULL, "out of memory");
  const int peer = 1 - rank;
  for (int turn = 0; turn < 2; ++turn) {
    if (rank == turn) {
      for (int i = 0; i < kLarge; ++i) large[i] = (unsigned char)(i * 7 + turn + (i >> 12));
      CHECK_MPI(MPI_Send(large, kLarge, MPI_BYTE, peer, 13, MPI_COMM_WORLD));
    } else {
      memset(large, 0, kLarge);
      CHECK_MPI(MPI_Recv(large, kLarge, MPI_BYTE, peer, 13, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
      for (int i = 0; i < kLarge; ++i) {
        CHECK(large[i] == (unsigned char)(i * 7 + turn + (i >> 12)), "1 MB message: byte %d differs", i);
      }
    }
  }
  free(large);
  int scope = 0;
  FILE *yama = fopen("/proc/sys/kernel/yama/ptrace_scope", "r");
  if (yama != NULL) {
    if (fscanf(yama, "%d", &scope) != 1) scope = 0;
    fclose(yama);
  }
  if (scope <= 1) {
    CHECK(read_counter(session, splits) == 1, "split copies received: %llu, expected 1",
          read_counter(session, splits));
    CHECK(read_counter(session, rereads) == 0, "split copy halves moved again: %llu", read_counter(session, rereads));
  }
  CHECK_T(MPI_SUCCESS, MPI_T_pvar_handle_free(session, &splits));
  CHECK_T(MPI_SUCCESS, MPI_T_pvar_handle_free(session, &rereads));
}

static void dynamic_processes(void) {
  MPI_Comm parent = MPI_COMM_WORLD;
  CHECK_MPI(MPI_Comm_get_parent(&parent));
  CHECK(parent == MPI_COMM_NULL, "a process ftrun started has no parent");
  CHECK_MPI(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
  MPI_Comm inter = MPI_COMM_WORLD;
  int codes[3] = {0, 0, 0};
  int error_class = -1;
  MPI_Error_class(MPI_Comm_spawn("./worker", MPI_ARGV_NULL, 3, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter, codes),
                  &error_class);
  CHECK(error_class == MPI_ERR_SPAWN && inter == MPI_COMM_NULL, "MPI_Comm_spawn: class %d", error_class);
  if (rank == 0) CHECK(codes[0] == MPI_ERR_SPAWN && codes[2] == MPI_ERR_SPAWN, "spawn error codes");
  MPI_Error_class(MPI_Comm_spawn("./worker", MPI_ARGV_NULL, 1, MPI_INFO_NULL, 5, MPI_COMM_WORLD, &inter, codes),
                  &error_class);
  CHECK(error_class == MPI_ERR_ROOT, "spawn with root 5: class %d", error_class);
  MPI_Error_class(MPI_Comm_connect("tcp://nowhere", MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter), &error_class);
  CHECK(error_class == MPI_ERR_PORT && inter == MPI_COMM_NULL, "MPI_Comm_connect: class %d", error_class);
  char port[MPI_MAX_PORT_NAME];
  MPI_Error_class(MPI_Lookup_name("service", MPI_INFO_NULL, port), &error_class);
  CHECK(error_class == MPI_ERR_NAME, "MPI_Lookup_name: class %d", error_class);
  MPI_Error_class(MPI_Open_port(MPI_INFO_NULL, port), &error_class);
  CHECK(error_class == MPI_ERR_UNSUPPORTED_OPERATION, "MPI_Open_port: class %d", error_class);
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  CHECK_MPI(MPI_Error_string(MPI_T_ERR_CVAR_SET_NOT_NOW, text, &length));
  CHECK(length > 0 && strstr(text, "set") != NULL, "MPI_T_ERR_CVAR_SET_NOT_NOW's text: %s", text);
  CHECK_MPI(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
}

int main(int argc, char **argv) {
  CHECK(argc == 3 && (strcmp(argv[1], "write") == 0 || strcmp(argv[1], "read") == 0),
        "usage: mpi_tools_interface write|read EAGER_LIMIT");
  int num = 0, provided = -1;
  CHECK_T(MPI_T_ERR_NOT_INITIALIZED, MPI_T_cvar_get_num(&num));
  CHECK_T(MPI_SUCCESS, MPI_T_init_thread(MPI_THREAD_SINGLE, &provided));
  CHECK(provided == MPI_THREAD_SINGLE, "provided %d", provided);
  control_variables();
  if (strcmp(argv[1], "write") == 0) write_before_init();

  CHECK_MPI(MPI_Init(&argc, &argv));
  CHECK_MPI(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
  int size = 0;
  CHECK_MPI(MPI_Comm_size(MPI_COMM_WORLD, &size));
  CHECK(size == 2, "run with 2 ranks");

  /* The value in effect, and its effect. */
  const unsigned long long expected = strtoull(argv[2], NULL, 10);
  MPI_T_cvar_handle handle = MPI_T_CVAR_HANDLE_NULL;
  int count = 0;
  unsigned long long limit = 0;
  CHECK_T(MPI_SUCCESS, MPI_T_cvar_handle_alloc(cvar_index("engine.shm.eager_limit"), NULL, &handle, &count));
  CHECK_T(MPI_SUCCESS, MPI_T_cvar_read(handle, &limit));
  CHECK(limit == expected, "engine.shm.eager_limit reads %llu, expected %llu", limit, expected);
  CHECK_T(MPI_T_ERR_CVAR_SET_NOT_NOW, MPI_T_cvar_write(handle, &limit));
  CHECK_T(MPI_SUCCESS, MPI_T_cvar_handle_free(&handle));
  const int eager = sent_before_receive();
  CHECK(eager == (limit >= 4096), "under an eager limit of %llu a 4 KB send was%s complete before its receive",
        limit, eager ? "" : " not");
  char kinds[1024];
  read_string_cvar(cvar_index("path.kinds"), kinds, sizeof kinds);
  CHECK(strlen(kinds) > 0, "path.kinds reads empty");

  /* Counters: allocated now, they start at 0 and count this exchange. */
  MPI_T_pvar_session session = MPI_T_PVAR_SESSION_NULL;
  CHECK_T(MPI_SUCCESS, MPI_T_pvar_session_create(&session));
  MPI_T_pvar_handle sent = counter(session, "engine.frames_sent");
  MPI_T_pvar_handle received = counter(session, "engine.frames_received");
  MPI_T_pvar_handle retransmits = counter(session, "engine.retransmits");
  const unsigned long long sent_before = read_counter(session, sent);
  /* Both ranks' handles exist before the first message below leaves. */
  CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
  enum { kRounds = 100 };
  int value = 0;
  for (int i = 0; i < kRounds; ++i) {
    if (rank == 0) {
      CHECK_MPI(MPI_Send(&i, 1, MPI_INT, 1, 7, MPI_COMM_WORLD));
      CHECK_MPI(MPI_Recv(&value, 1, MPI_INT, 1, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    } else {
      CHECK_MPI(MPI_Recv(&value, 1, MPI_INT, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
      CHECK_MPI(MPI_Send(&value, 1, MPI_INT, 0, 7, MPI_COMM_WORLD));
    }
  }
  const unsigned long long frames_sent = read_counter(session, sent) - sent_before;
  const unsigned long long frames_received = read_counter(session, received);
  CHECK(frames_sent >= kRounds && frames_received >= kRounds, "%d messages each way: %llu frames sent, %llu received",
        kRounds, frames_sent, frames_received);
  /* Shared memory loses nothing: nothing was resent. */
  CHECK(read_counter(session, retransmits) == 0, "retransmits over shared memory");
  split_copy(session);

  /* Read-only and continuous: refused as MPI says. A second session does not see the first's handles. */
  unsigned long long scratch = 0;
  CHECK_T(MPI_T_ERR_PVAR_NO_WRITE, MPI_T_pvar_write(session, sent, &scratch));
  CHECK_T(MPI_T_ERR_PVAR_NO_WRITE, MPI_T_pvar_reset(session, sent));
  CHECK_T(MPI_T_ERR_PVAR_NO_STARTSTOP, MPI_T_pvar_start(session, sent));
  CHECK_T(MPI_SUCCESS, MPI_T_pvar_stop(session, MPI_T_PVAR_ALL_HANDLES));
  CHECK_T(MPI_T_ERR_INVALID_HANDLE, MPI_T_pvar_read(session, MPI_T_PVAR_ALL_HANDLES, &scratch));
  MPI_T_pvar_session other = MPI_T_PVAR_SESSION_NULL;
  CHECK_T(MPI_SUCCESS, MPI_T_pvar_session_create(&other));
  CHECK_T(MPI_T_ERR_INVALID_HANDLE, MPI_T_pvar_read(other, sent, &scratch));
  CHECK_T(MPI_SUCCESS, MPI_T_pvar_session_free(&other));
  CHECK_T(MPI_T_ERR_INVALID_SESSION, MPI_T_pvar_read(other, sent, &scratch));
  CHECK_T(MPI_T_ERR_INVALID_NAME, MPI_T_pvar_get_index("engine.frames_sent", MPI_T_PVAR_CLASS_TIMER, &count));

  dynamic_processes();

  const unsigned long long sent_at_finalize = read_counter(session, sent);
  CHECK_MPI(MPI_Finalize());
  /* After MPI_Finalize the counters keep their last values (finalizing sends frames of its own). */
  CHECK(read_counter(session, sent) >= sent_at_finalize, "counter went back after MPI_Finalize");
  CHECK_T(MPI_SUCCESS, MPI_T_pvar_handle_free(session, &retransmits));
  CHECK(retransmits == MPI_T_PVAR_HANDLE_NULL, "freed pvar handle not reset");
  CHECK_T(MPI_SUCCESS, MPI_T_pvar_session_free(&session));
  CHECK_T(MPI_SUCCESS, MPI_T_finalize());
  CHECK_T(MPI_T_ERR_NOT_INITIALIZED, MPI_T_finalize());
  if (rank == 0) printf("tools_interface: passed (eager limit %llu, %llu frames sent)\n", limit, frames_sent);
  return 0;
}

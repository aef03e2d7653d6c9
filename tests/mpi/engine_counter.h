/* An engine counter read through MPI_T, for test programs that check what the engine did (split copies,
 * gathered reads), and whether this machine lets ranks read each other's memory at all. */
#ifndef FTMPI_TEST_ENGINE_COUNTER_H
#define FTMPI_TEST_ENGINE_COUNTER_H

#include <stdio.h>

#include "check.h"

typedef struct {
  MPI_T_pvar_session session;
  MPI_T_pvar_handle handle;
} EngineCounter;

/* After MPI_Init. A counter counts from its handle's allocation (MPI-3.1 section 14.3.7): open it once,
 * before what it is to count. */
static inline EngineCounter engine_counter_open(const char *name) {
  int provided = 0, index = -1, count = 0;
  EngineCounter c;
  CHECK(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided) == MPI_SUCCESS, "MPI_T_init_thread");
  CHECK(MPI_T_pvar_get_index(name, MPI_T_PVAR_CLASS_COUNTER, &index) == MPI_SUCCESS, "no counter %s", name);
  CHECK(MPI_T_pvar_session_create(&c.session) == MPI_SUCCESS, "MPI_T_pvar_session_create");
  CHECK(MPI_T_pvar_handle_alloc(c.session, index, NULL, &c.handle, &count) == MPI_SUCCESS,
        "MPI_T_pvar_handle_alloc %s", name);
  return c;
}

static inline unsigned long long engine_counter_read(EngineCounter *c) {
  unsigned long long value = 0;
  CHECK(MPI_T_pvar_read(c->session, c->handle, &value) == MPI_SUCCESS, "MPI_T_pvar_read");
  return value;
}

static inline void engine_counter_close(EngineCounter *c) {
  CHECK(MPI_T_pvar_handle_free(c->session, &c->handle) == MPI_SUCCESS, "MPI_T_pvar_handle_free");
  CHECK(MPI_T_pvar_session_free(&c->session) == MPI_SUCCESS, "MPI_T_pvar_session_free");
  CHECK(MPI_T_finalize() == MPI_SUCCESS, "MPI_T_finalize");
}

/* Whether ranks may read a sibling's memory (single copy): not where Yama's ptrace_scope is 2 or 3;
 * messages are then piped, and only their bytes can be checked. */
static inline int single_copy_permitted(void) {
  int scope = 0;
  FILE *yama = fopen("/proc/sys/kernel/yama/ptrace_scope", "r");
  if (yama != NULL) {
    if (fscanf(yama, "%d", &scope) != 1) scope = 0;
    fclose(yama);
  }
  return scope <= 1;
}

#endif

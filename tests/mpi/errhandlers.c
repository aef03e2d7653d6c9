/* Error handlers the program creates, and error classes, codes and strings it adds (MPI-3.1 section 8.3
 * and 8.5): a created handler is called with the communicator and the code when a call on that
 * communicator fails, and the call then returns the code; MPI_Comm_call_errhandler calls it on demand;
 * a handler freed after it was set goes on serving; added codes map to their class, carry their string
 * and raise MPI_LASTUSEDCODE. Runs on every rank alone (no message crosses ranks). */
#include <string.h>

#include "check.h"

static int calls;         /* how often the handler ran */
static MPI_Comm seen_comm;  /* what it was given the last time */
static int seen_code;

static void handler(MPI_Comm *comm, int *code, ...) {
  ++calls;
  seen_comm = *comm;
  seen_code = *code;
}

int main(int argc, char **argv) {
  CHECK_MPI(MPI_Init(&argc, &argv));
  MPI_Comm dup;
  CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
  MPI_Errhandler mine;
  CHECK_MPI(MPI_Comm_create_errhandler(handler, &mine));
  CHECK(mine != MPI_ERRHANDLER_NULL && mine != MPI_ERRORS_RETURN && mine != MPI_ERRORS_ARE_FATAL,
        "a created handler has a handle of its own");
  CHECK_MPI(MPI_Comm_set_errhandler(dup, mine));
  MPI_Errhandler got;
  CHECK_MPI(MPI_Comm_get_errhandler(dup, &got));
  CHECK(got == mine, "MPI_Comm_get_errhandler gives the handler set");
  /* The handle MPI_Comm_get_errhandler gives is the program's to free (MPI-3.1 section 8.3.4). */
  CHECK_MPI(MPI_Errhandler_free(&got));

  /* A failing call on the communicator: the handler runs with it and the class, the call returns it. */
  int value = 0, size = 0;
  CHECK_MPI(MPI_Comm_size(dup, &size));
  int rc = MPI_Send(&value, 1, MPI_INT, size + 3, 0, dup);
  CHECK(rc == MPI_ERR_RANK, "MPI_Send to a rank out of range returned %d, not MPI_ERR_RANK", rc);
  CHECK(calls == 1 && seen_comm == dup && seen_code == MPI_ERR_RANK,
        "the handler ran %d times, last with comm %#x code %d", calls, (unsigned)seen_comm, seen_code);

  /* Freed after it was set: the handle is released, the communicator keeps the handler. */
  MPI_Errhandler freed = mine;
  CHECK_MPI(MPI_Errhandler_free(&freed));
  CHECK(freed == MPI_ERRHANDLER_NULL, "MPI_Errhandler_free sets the handle to MPI_ERRHANDLER_NULL");
  rc = MPI_Send(&value, 1, MPI_INT, 0, -5, dup);
  CHECK(rc == MPI_ERR_TAG && calls == 2 && seen_code == MPI_ERR_TAG, "a freed handler no longer serves: rc %d calls %d", rc, calls);
  /* The freed handle cannot be set again; under MPI_ERRORS_RETURN on the world that is an error. */
  CHECK_MPI(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
  CHECK_CLASS(MPI_ERR_ARG, MPI_Comm_set_errhandler(MPI_COMM_WORLD, mine));
  CHECK_CLASS(MPI_ERR_ARG, MPI_Comm_create_errhandler(NULL, &got));

  /* Added classes and codes. */
  int last = 0, flag = 0, *attr = NULL;
  CHECK_MPI(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_LASTUSEDCODE, &attr, &flag));
  CHECK(flag && *attr >= MPI_ERR_LASTCODE, "MPI_LASTUSEDCODE is set and at least MPI_ERR_LASTCODE");
  last = *attr;
  int my_class = 0, my_code = 0, other_code = 0;
  CHECK_MPI(MPI_Add_error_class(&my_class));
  CHECK_MPI(MPI_Add_error_code(my_class, &my_code));
  CHECK_MPI(MPI_Add_error_code(MPI_ERR_OTHER, &other_code));
  CHECK(my_class > last && my_code > my_class && other_code > my_code, "new values above MPI_LASTUSEDCODE, increasing");
  CHECK_MPI(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_LASTUSEDCODE, &attr, &flag));
  CHECK(flag && *attr == other_code, "MPI_LASTUSEDCODE is the last code added (%d, not %d)", *attr, other_code);
  int cls = -1;
  CHECK_MPI(MPI_Error_class(my_code, &cls));
  CHECK(cls == my_class, "the code's class is the class it was added to");
  CHECK_MPI(MPI_Error_class(my_class, &cls));
  CHECK(cls == my_class, "an added class is its own class");
  CHECK_MPI(MPI_Error_class(other_code, &cls));
  CHECK(cls == MPI_ERR_OTHER, "a code added to a predefined class maps to it");
  char text[MPI_MAX_ERROR_STRING];
  int length = -1;
  CHECK_MPI(MPI_Error_string(my_code, text, &length));
  CHECK(length == 0 && text[0] == '\0', "no string set yet: an empty one");
  CHECK_MPI(MPI_Add_error_string(my_code, "the drill's own error"));
  CHECK_MPI(MPI_Error_string(my_code, text, &length));
  CHECK(strcmp(text, "the drill's own error") == 0 && length == (int)strlen(text), "the string set: '%s'", text);
  CHECK_MPI(MPI_Add_error_string(my_code, "changed"));  /* it may be set again */
  CHECK_MPI(MPI_Error_string(my_code, text, &length));
  CHECK(strcmp(text, "changed") == 0, "the string changed: '%s'", text);
  /* Wrong uses: a predefined code's string, a code that is no class, one that does not exist. */
  CHECK_CLASS(MPI_ERR_ARG, MPI_Add_error_string(MPI_ERR_TAG, "mine now"));
  CHECK_CLASS(MPI_ERR_ARG, MPI_Add_error_code(my_code, &value));
  CHECK_CLASS(MPI_ERR_ARG, MPI_Add_error_code(other_code + 100, &value));
  CHECK_CLASS(MPI_ERR_ARG, MPI_Error_class(other_code + 100, &cls));
  char too_long[MPI_MAX_ERROR_STRING + 1];
  memset(too_long, 'x', sizeof too_long - 1);
  too_long[sizeof too_long - 1] = '\0';
  CHECK_CLASS(MPI_ERR_ARG, MPI_Add_error_string(my_code, too_long));

  /* MPI_Comm_call_errhandler: the created handler gets the added code; under MPI_ERRORS_RETURN it is
   * MPI_SUCCESS and nothing else happens. */
  CHECK_MPI(MPI_Comm_call_errhandler(dup, my_code));
  CHECK(calls == 3 && seen_comm == dup && seen_code == my_code, "call_errhandler ran the handler with the code");
  CHECK_MPI(MPI_Comm_call_errhandler(MPI_COMM_WORLD, my_code));
  CHECK(calls == 3, "MPI_ERRORS_RETURN runs nothing");
  CHECK_CLASS(MPI_ERR_ARG, MPI_Comm_call_errhandler(MPI_COMM_WORLD, other_code + 100));

  CHECK_MPI(MPI_Comm_free(&dup));
  CHECK_MPI(MPI_Finalize());
  return 0;
}

// Communicator queries, attributes, datatype sizes, error handlers and error strings.
#include <algorithm>
#include <array>
#include <climits>
#include <cstdio>
#include <cstring>
#include <span>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "mpi/api.hpp"
#include "mpi/attributes.hpp"
#include "mpi/call.hpp"
#include "mpi/comms.hpp"
#include "mpi/errors.hpp"
#include "mpi/handles.hpp"
#include "mpi/runtime.hpp"

namespace ftmpi::mpi {
namespace {


struct Predefined {
  int keyval;
  int value;
};

// The attributes MPI predefines. Not const: MPI_Comm_get_attr hands out pointers to the values.
std::array<Predefined, 7> predefined{{
    {MPI_TAG_UB, kTagUb},
    {MPI_HOST, MPI_PROC_NULL},         // no process is the host
    {MPI_IO, MPI_ANY_SOURCE},          // every process can do I/O
    {MPI_WTIME_IS_GLOBAL, 0},          // each process has its own clock
    {MPI_UNIVERSE_SIZE, 0},            // set to the world's size at the first query
    {MPI_APPNUM, 0},                   // one application
    {MPI_LASTUSEDCODE, MPI_ERR_LASTCODE},  // set at each query: codes are added (MPI_Add_error_code)
}};

Predefined* find_predefined(int keyval) noexcept {
  for (Predefined& p : predefined) {
    if (p.keyval == keyval) return &p;
  }
  return nullptr;
}

// A communicator keyval the program created (and has not freed, unless `freed_ok`).
Keyval* check_user_keyval(Call& call, int keyval, bool freed_ok = false) {
  if (find_predefined(keyval) != nullptr) {
    call.fail(MPI_ERR_KEYVAL, fmt::format("attribute key {:#x} is predefined", keyval));
    return nullptr;
  }
  return check_keyval(call, keyval, KeyvalKind::comm, freed_ok);
}

std::vector<Attribute>::iterator attribute_of(Comm& comm, int keyval) {
  return std::find_if(comm.attributes.begin(), comm.attributes.end(),
                      [&](const Attribute& a) { return a.keyval == keyval; });
}

// The attribute calls, shared with their MPI-1 names (MPI_Attr_get ...), each reporting under its own name.
int get_attr(std::string_view name, MPI_Comm comm, int comm_keyval, void* attribute_val, int* flag) noexcept {
  return api_call(name, [&](Call& call) {
    Comm* c = check_comm(call, comm);
    if (c == nullptr || !check_arg(call, attribute_val, "attribute_val") || !check_arg(call, flag, "flag")) return;
    if (Predefined* p = find_predefined(comm_keyval)) {
      if (p->keyval == MPI_UNIVERSE_SIZE) p->value = runtime().world().size();
      if (p->keyval == MPI_LASTUSEDCODE) p->value = last_used_code();
      *static_cast<int**>(attribute_val) = &p->value;
      *flag = 1;
      return;
    }
    if (check_keyval(call, comm_keyval, KeyvalKind::comm, true) == nullptr) return;
    const auto it = attribute_of(*c, comm_keyval);
    *flag = it != c->attributes.end() ? 1 : 0;
    if (*flag) *static_cast<void**>(attribute_val) = it->value;
  });
}
int set_attr(std::string_view name, MPI_Comm comm, int comm_keyval, void* attribute_val) noexcept {
  return api_call(name, [&](Call& call) {
    Comm* c = check_comm(call, comm);
    if (c == nullptr) return;
    const Keyval* k = check_user_keyval(call, comm_keyval);
    if (k == nullptr) return;
    const auto it = attribute_of(*c, comm_keyval);
    if (it != c->attributes.end()) {
      // A new value replaces the old one as MPI_Comm_delete_attr would remove it.
      if (!delete_attribute(call, c->handle, *it)) return;
      it->value = attribute_val;
      return;
    }
    c->attributes.push_back({comm_keyval, attribute_val, k->copy, k->remove, k->extra_state});
  });
}
int delete_attr(std::string_view name, MPI_Comm comm, int comm_keyval) noexcept {
  return api_call(name, [&](Call& call) {
    Comm* c = check_comm(call, comm);
    if (c == nullptr || check_user_keyval(call, comm_keyval, true) == nullptr) return;
    const auto it = attribute_of(*c, comm_keyval);
    if (it == c->attributes.end()) return;  // nothing cached: nothing to delete
    if (delete_attribute(call, c->handle, *it)) c->attributes.erase(it);
  });
}
int create_comm_keyval(std::string_view name, MPI_Comm_copy_attr_function* comm_copy_attr_fn, MPI_Comm_delete_attr_function* comm_delete_attr_fn, int* comm_keyval, void* extra_state) noexcept {
  return api_call(name, [&](Call& call) {
    create_keyval(call, KeyvalKind::comm, comm_copy_attr_fn, comm_delete_attr_fn, comm_keyval, extra_state);
  });
}
int free_comm_keyval(std::string_view name, int* comm_keyval) noexcept {
  return api_call(name, [&](Call& call) {
    if (!check_arg(call, comm_keyval, "comm_keyval") || check_user_keyval(call, *comm_keyval) == nullptr) return;
    free_keyval(call, KeyvalKind::comm, comm_keyval);
  });
}

}  // namespace

bool is_predefined_keyval(int keyval) noexcept { return find_predefined(keyval) != nullptr; }

}  // namespace ftmpi::mpi

using namespace ftmpi::mpi;

extern "C" {

int PMPI_Comm_rank(MPI_Comm comm, int* rank) {
  return api_call("MPI_Comm_rank", [&](Call& call) {
    const Comm* c = check_comm(call, comm);
    if (c != nullptr && check_arg(call, rank, "rank")) *rank = c->rank();
  });
}
#pragma weak MPI_Comm_rank = PMPI_Comm_rank

int PMPI_Comm_size(MPI_Comm comm, int* size) {
  return api_call("MPI_Comm_size", [&](Call& call) {
    const Comm* c = check_comm(call, comm);
    if (c != nullptr && check_arg(call, size, "size")) *size = c->local_size();
  });
}
#pragma weak MPI_Comm_size = PMPI_Comm_size

int PMPI_Comm_get_attr(MPI_Comm comm, int comm_keyval, void* attribute_val, int* flag) {
  return get_attr("MPI_Comm_get_attr", comm, comm_keyval, attribute_val, flag);
}
#pragma weak MPI_Comm_get_attr = PMPI_Comm_get_attr

int PMPI_Comm_set_attr(MPI_Comm comm, int comm_keyval, void* attribute_val) {
  return set_attr("MPI_Comm_set_attr", comm, comm_keyval, attribute_val);
}
#pragma weak MPI_Comm_set_attr = PMPI_Comm_set_attr

int PMPI_Comm_delete_attr(MPI_Comm comm, int comm_keyval) {
  return delete_attr("MPI_Comm_delete_attr", comm, comm_keyval);
}
#pragma weak MPI_Comm_delete_attr = PMPI_Comm_delete_attr

int PMPI_Comm_create_keyval(MPI_Comm_copy_attr_function* comm_copy_attr_fn,
                            MPI_Comm_delete_attr_function* comm_delete_attr_fn, int* comm_keyval,
                            void* extra_state) {
  return create_comm_keyval("MPI_Comm_create_keyval", comm_copy_attr_fn, comm_delete_attr_fn, comm_keyval, extra_state);
}
#pragma weak MPI_Comm_create_keyval = PMPI_Comm_create_keyval

// Attributes of a freed keyval keep their callbacks (Attribute holds them): freeing only retires the key.
int PMPI_Comm_free_keyval(int* comm_keyval) {
  return free_comm_keyval("MPI_Comm_free_keyval", comm_keyval);
}
#pragma weak MPI_Comm_free_keyval = PMPI_Comm_free_keyval

// MPI_COMM_DUP_FN: the duplicate gets the same value. Callable outside MPI (no api_call).
int PMPI_Comm_dup_fn(MPI_Comm /*oldcomm*/, int /*comm_keyval*/, void* /*extra_state*/, void* attribute_val_in,
                     void* attribute_val_out, int* flag) {
  *static_cast<void**>(attribute_val_out) = attribute_val_in;
  *flag = 1;
  return MPI_SUCCESS;
}
#pragma weak MPI_Comm_dup_fn = PMPI_Comm_dup_fn

int PMPI_Type_size(MPI_Datatype datatype, int* size) {
  return api_call("MPI_Type_size", [&](Call& call) {
    const Datatype* type = check_datatype(call, datatype);
    if (type != nullptr && check_arg(call, size, "size")) {
      *size = type->size() > INT_MAX ? MPI_UNDEFINED : static_cast<int>(type->size());
    }
  });
}
#pragma weak MPI_Type_size = PMPI_Type_size

int PMPI_Comm_set_errhandler(MPI_Comm comm, MPI_Errhandler errhandler) {
  return api_call("MPI_Comm_set_errhandler", [&](Call& call) {
    Comm* c = check_comm(call, comm);
    if (c == nullptr) return;
    if (!errhandler_live(errhandler)) {
      call.fail(MPI_ERR_ARG, fmt::format("invalid error handler {:#x}", errhandler));
      return;
    }
    c->errhandler = errhandler;
  });
}
#pragma weak MPI_Comm_set_errhandler = PMPI_Comm_set_errhandler

int PMPI_Comm_get_errhandler(MPI_Comm comm, MPI_Errhandler* errhandler) {
  return api_call("MPI_Comm_get_errhandler", [&](Call& call) {
    const Comm* c = check_comm(call, comm);
    if (c == nullptr || !check_arg(call, errhandler, "errhandler")) return;
    *errhandler = c->errhandler;
    hand_out_errhandler(c->errhandler);
  });
}
#pragma weak MPI_Comm_get_errhandler = PMPI_Comm_get_errhandler

// The predefined handlers are never deallocated; a created one is marked freed, and the communicators
// it was set on go on using it (as the standard says: it goes when nothing refers to it).
int PMPI_Errhandler_free(MPI_Errhandler* errhandler) {
  return api_call("MPI_Errhandler_free", [&](Call& call) {
    if (!check_arg(call, errhandler, "errhandler")) return;
    if (!errhandler_live(*errhandler)) {
      call.fail(MPI_ERR_ARG, fmt::format("invalid error handler {:#x}", *errhandler));
      return;
    }
    free_errhandler(*errhandler);
    *errhandler = MPI_ERRHANDLER_NULL;
  });
}
#pragma weak MPI_Errhandler_free = PMPI_Errhandler_free

int PMPI_Error_string(int errorcode, char* string, int* resultlen) {
  return api_call("MPI_Error_string", [&](Call& call) {
    if (!check_arg(call, string, "string") || !check_arg(call, resultlen, "resultlen")) return;
    if (is_user_code(errorcode)) {  // its string, empty until MPI_Add_error_string sets one
      const std::string& text = user_code_string(errorcode);
      const int n = std::snprintf(string, MPI_MAX_ERROR_STRING, "%s", text.c_str());
      *resultlen = std::min(n, MPI_MAX_ERROR_STRING - 1);
      return;
    }
    if (!is_error_class(errorcode)) {
      call.fail(MPI_ERR_ARG, fmt::format("{} is not an error code", errorcode));
      return;
    }
    const std::string_view name = error_class_name(errorcode);
    const std::string_view text = error_class_text(errorcode);
    const int n = std::snprintf(string, MPI_MAX_ERROR_STRING, "%.*s: %.*s", static_cast<int>(name.size()),
                                name.data(), static_cast<int>(text.size()), text.data());
    *resultlen = std::min(n, MPI_MAX_ERROR_STRING - 1);
  });
}
#pragma weak MPI_Error_string = PMPI_Error_string

int PMPI_Error_class(int errorcode, int* errorclass) {
  return api_call("MPI_Error_class", [&](Call& call) {
    if (!check_arg(call, errorclass, "errorclass")) return;
    if (is_user_code(errorcode)) {
      *errorclass = user_code_class(errorcode);
      return;
    }
    if (!is_error_class(errorcode)) {
      call.fail(MPI_ERR_ARG, fmt::format("{} is not an error code", errorcode));
      return;
    }
    *errorclass = errorcode;  // every predefined code is its own class
  });
}
#pragma weak MPI_Error_class = PMPI_Error_class

int PMPI_Comm_create_errhandler(MPI_Comm_errhandler_function* comm_errhandler_fn, MPI_Errhandler* errhandler) {
  return api_call("MPI_Comm_create_errhandler", [&](Call& call) {
    if (comm_errhandler_fn == nullptr) {
      call.fail(MPI_ERR_ARG, "comm_errhandler_fn is a null pointer");
      return;
    }
    if (!check_arg(call, errhandler, "errhandler")) return;
    *errhandler = add_errhandler(comm_errhandler_fn);
  });
}
#pragma weak MPI_Comm_create_errhandler = PMPI_Comm_create_errhandler

// Runs the communicator's handler on `errorcode` as if a call on it had failed: a created handler is
// called; MPI_ERRORS_RETURN does nothing (MPI_SUCCESS: the handler was "called"); MPI_ERRORS_ARE_FATAL
// ends the job with the code's string.
int PMPI_Comm_call_errhandler(MPI_Comm comm, int errorcode) {
  return api_call("MPI_Comm_call_errhandler", [&](Call& call) {
    Comm* c = check_comm(call, comm);
    if (c == nullptr) return;
    if (!is_error_class(errorcode) && !is_user_code(errorcode)) {
      call.fail(MPI_ERR_ARG, fmt::format("{} is not an error code", errorcode));
      return;
    }
    if (call_created_errhandler(c->errhandler, c->handle, errorcode)) return;
    if (c->errhandler == MPI_ERRORS_ARE_FATAL) {
      const std::string text = is_user_code(errorcode)
          ? fmt::format("error code {} (class {}): {}", errorcode, user_code_class(errorcode), user_code_string(errorcode))
          : fmt::format("{}: {}", error_class_name(errorcode), error_class_text(errorcode));
      // The job ends with the error class as its status, as a failing call's does.
      fatal(is_user_code(errorcode) ? user_code_class(errorcode) : errorcode,
            fmt::format("MPI_Comm_call_errhandler on {}: {}", label(*c), text));
    }
  });
}
#pragma weak MPI_Comm_call_errhandler = PMPI_Comm_call_errhandler

int PMPI_Add_error_class(int* errorclass) {
  return api_call("MPI_Add_error_class", [&](Call& call) {
    if (check_arg(call, errorclass, "errorclass")) *errorclass = add_error_code(-1);
  });
}
#pragma weak MPI_Add_error_class = PMPI_Add_error_class

int PMPI_Add_error_code(int errorclass, int* errorcode) {
  return api_call("MPI_Add_error_code", [&](Call& call) {
    if (!check_arg(call, errorcode, "errorcode")) return;
    const bool a_class = (is_error_class(errorclass) && errorclass != MPI_ERR_LASTCODE) ||
                         (is_user_code(errorclass) && user_code_class(errorclass) == errorclass);
    if (!a_class) {
      call.fail(MPI_ERR_ARG, fmt::format("{} is not an error class", errorclass));
      return;
    }
    *errorcode = add_error_code(errorclass);
  });
}
#pragma weak MPI_Add_error_code = PMPI_Add_error_code

int PMPI_Add_error_string(int errorcode, const char* string) {
  return api_call("MPI_Add_error_string", [&](Call& call) {
    if (!check_arg(call, string, "string")) return;
    if (!is_user_code(errorcode)) {
      call.fail(MPI_ERR_ARG, fmt::format("{} is not a code or class added by MPI_Add_error_code or MPI_Add_error_class",
                                         errorcode));
      return;
    }
    const std::size_t length = std::strlen(string);
    if (length >= MPI_MAX_ERROR_STRING) {
      call.fail(MPI_ERR_ARG, fmt::format("the string has {} characters; at most {}", length, MPI_MAX_ERROR_STRING - 1));
      return;
    }
    user_code_string(errorcode).assign(string, length);
  });
}
#pragma weak MPI_Add_error_string = PMPI_Add_error_string


// MPI-1's names for the attribute calls, deprecated since MPI-2 and still in wide use: the same calls
// (MPI_Copy_function and MPI_Delete_function are the communicator callbacks' types).
int PMPI_Keyval_create(MPI_Copy_function* copy_fn, MPI_Delete_function* delete_fn, int* keyval, void* extra_state) {
  return create_comm_keyval("MPI_Keyval_create", copy_fn, delete_fn, keyval, extra_state);
}
#pragma weak MPI_Keyval_create = PMPI_Keyval_create

int PMPI_Keyval_free(int* keyval) { return free_comm_keyval("MPI_Keyval_free", keyval); }
#pragma weak MPI_Keyval_free = PMPI_Keyval_free

int PMPI_Attr_put(MPI_Comm comm, int keyval, void* attribute_val) {
  return set_attr("MPI_Attr_put", comm, keyval, attribute_val);
}
#pragma weak MPI_Attr_put = PMPI_Attr_put

int PMPI_Attr_get(MPI_Comm comm, int keyval, void* attribute_val, int* flag) {
  return get_attr("MPI_Attr_get", comm, keyval, attribute_val, flag);
}
#pragma weak MPI_Attr_get = PMPI_Attr_get

int PMPI_Attr_delete(MPI_Comm comm, int keyval) { return delete_attr("MPI_Attr_delete", comm, keyval); }
#pragma weak MPI_Attr_delete = PMPI_Attr_delete

}  // extern "C"

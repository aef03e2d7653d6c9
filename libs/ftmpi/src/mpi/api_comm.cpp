// Communicator queries, attributes, datatype sizes, error handlers and error strings.
#include <algorithm>
#include <array>
#include <cstdio>
#include <span>
#include <string_view>

#include <fmt/format.h>

#include "mpi/api.hpp"
#include "mpi/call.hpp"
#include "mpi/errors.hpp"
#include "mpi/handles.hpp"
#include "mpi/runtime.hpp"

namespace ftmpi::mpi {
namespace {

// The predefined error handlers, in handle order (mpi.h).
constexpr std::array<std::string_view, 2> kErrhandlers{"MPI_ERRORS_ARE_FATAL", "MPI_ERRORS_RETURN"};

bool is_errhandler(MPI_Errhandler handle) noexcept {
  return find_handle<HandleKind::errhandler>(kErrhandlers, handle) != nullptr;
}

struct Attribute {
  int keyval;
  int value;
};

// The attributes MPI predefines. Not const: MPI_Comm_get_attr hands out pointers to the values.
std::array<Attribute, 4> attributes{{
    {MPI_TAG_UB, kTagUb},
    {MPI_HOST, MPI_PROC_NULL},         // no process is the host
    {MPI_IO, MPI_ANY_SOURCE},          // every process can do I/O
    {MPI_WTIME_IS_GLOBAL, 0},          // each process has its own clock
}};

}  // namespace
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
    if (c != nullptr && check_arg(call, size, "size")) *size = c->size();
  });
}
#pragma weak MPI_Comm_size = PMPI_Comm_size

int PMPI_Comm_get_attr(MPI_Comm comm, int comm_keyval, void* attribute_val, int* flag) {
  return api_call("MPI_Comm_get_attr", [&](Call& call) {
    if (check_comm(call, comm) == nullptr || !check_arg(call, attribute_val, "attribute_val") ||
        !check_arg(call, flag, "flag")) {
      return;
    }
    for (Attribute& attribute : attributes) {
      if (attribute.keyval == comm_keyval) {
        *static_cast<int**>(attribute_val) = &attribute.value;
        *flag = 1;
        return;
      }
    }
    call.fail(MPI_ERR_KEYVAL, fmt::format("invalid attribute key {:#x}", comm_keyval));
  });
}
#pragma weak MPI_Comm_get_attr = PMPI_Comm_get_attr

int PMPI_Type_size(MPI_Datatype datatype, int* size) {
  return api_call("MPI_Type_size", [&](Call& call) {
    const Datatype* type = check_datatype(call, datatype);
    if (type != nullptr && check_arg(call, size, "size")) *size = static_cast<int>(type->size);
  });
}
#pragma weak MPI_Type_size = PMPI_Type_size

int PMPI_Comm_set_errhandler(MPI_Comm comm, MPI_Errhandler errhandler) {
  return api_call("MPI_Comm_set_errhandler", [&](Call& call) {
    Comm* c = check_comm(call, comm);
    if (c == nullptr) return;
    if (!is_errhandler(errhandler)) {
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
    if (c != nullptr && check_arg(call, errhandler, "errhandler")) *errhandler = c->errhandler;
  });
}
#pragma weak MPI_Comm_get_errhandler = PMPI_Comm_get_errhandler

// Only the predefined handlers exist and they are never deallocated: freeing releases the handle.
int PMPI_Errhandler_free(MPI_Errhandler* errhandler) {
  return api_call("MPI_Errhandler_free", [&](Call& call) {
    if (!check_arg(call, errhandler, "errhandler")) return;
    if (!is_errhandler(*errhandler)) {
      call.fail(MPI_ERR_ARG, fmt::format("invalid error handler {:#x}", *errhandler));
      return;
    }
    *errhandler = MPI_ERRHANDLER_NULL;
  });
}
#pragma weak MPI_Errhandler_free = PMPI_Errhandler_free

int PMPI_Error_string(int errorcode, char* string, int* resultlen) {
  return api_call("MPI_Error_string", [&](Call& call) {
    if (!check_arg(call, string, "string") || !check_arg(call, resultlen, "resultlen")) return;
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
    if (!is_error_class(errorcode)) {
      call.fail(MPI_ERR_ARG, fmt::format("{} is not an error code", errorcode));
      return;
    }
    *errorclass = errorcode;  // every code is a class: there are no user-defined codes
  });
}
#pragma weak MPI_Error_class = PMPI_Error_class

}  // extern "C"

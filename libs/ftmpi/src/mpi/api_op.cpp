// User-defined reduction operations (the predefined ones are in objects.cpp).
#include <string_view>

#include <fmt/format.h>

#include "mpi/api.hpp"
#include "mpi/call.hpp"
#include "mpi/runtime.hpp"

using namespace ftmpi::mpi;

namespace {

// MPI_Op_create and MPI_Op_create_c: one of the two functions is set.
int op_create(std::string_view name, MPI_User_function* function, MPI_User_function_c* function_c, int commute,
              MPI_Op* op) noexcept {
  return api_call(name, [&](Call& call) {
    const void* user_fn = function != nullptr ? reinterpret_cast<const void*>(function)
                                              : reinterpret_cast<const void*>(function_c);
    if (!check_arg(call, user_fn, "user_fn") || !check_arg(call, op, "op")) return;
    OpEntry entry;
    entry.function = function;
    entry.function_c = function_c;
    entry.commutative = commute != 0;
    entry.name = "a user-defined operation";
    *op = runtime().ops.add(std::move(entry));
  });
}

}  // namespace

extern "C" {

int PMPI_Op_create(MPI_User_function* user_fn, int commute, MPI_Op* op) {
  return op_create("MPI_Op_create", user_fn, nullptr, commute, op);
}
#pragma weak MPI_Op_create = PMPI_Op_create

int PMPI_Op_create_c(MPI_User_function_c* user_fn, int commute, MPI_Op* op) {
  return op_create("MPI_Op_create_c", nullptr, user_fn, commute, op);
}
#pragma weak MPI_Op_create_c = PMPI_Op_create_c

// Collectives in flight keep what they need of the op (the function pointer), so it may go at once.
int PMPI_Op_free(MPI_Op* op) {
  return api_call("MPI_Op_free", [&](Call& call) {
    if (!check_arg(call, op, "op")) return;
    const OpEntry* entry = check_op(call, *op);
    if (entry == nullptr) return;
    if (entry->predefined) {
      call.fail(MPI_ERR_OP, fmt::format("{} is predefined and cannot be freed", entry->name));
      return;
    }
    runtime().ops.remove(*op);
    *op = MPI_OP_NULL;
  });
}
#pragma weak MPI_Op_free = PMPI_Op_free

int PMPI_Op_commutative(MPI_Op op, int* commute) {
  return api_call("MPI_Op_commutative", [&](Call& call) {
    const OpEntry* entry = check_op(call, op);
    if (entry != nullptr && check_arg(call, commute, "commute")) *commute = entry->commutative ? 1 : 0;
  });
}
#pragma weak MPI_Op_commutative = PMPI_Op_commutative

}  // extern "C"

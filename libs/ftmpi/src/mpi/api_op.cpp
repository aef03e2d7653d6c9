// User-defined reduction operations (the predefined ones are in objects.cpp).
#include <fmt/format.h>

#include "mpi/api.hpp"
#include "mpi/call.hpp"
#include "mpi/runtime.hpp"

using namespace ftmpi::mpi;

extern "C" {

int PMPI_Op_create(MPI_User_function* user_fn, int commute, MPI_Op* op) {
  return api_call("MPI_Op_create", [&](Call& call) {
    if (!check_arg(call, reinterpret_cast<const void*>(user_fn), "user_fn") || !check_arg(call, op, "op")) return;
    OpEntry entry;
    entry.function = user_fn;
    entry.commutative = commute != 0;
    entry.name = "a user-defined operation";
    *op = runtime().ops.add(std::move(entry));
  });
}
#pragma weak MPI_Op_create = PMPI_Op_create

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

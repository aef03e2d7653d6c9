// One-sided communication is not implemented. The calls that programs reach while setting up (the
// OSU Micro-Benchmarks' shared code creates and frees windows) exist and say so: each returns
// MPI_ERR_UNSUPPORTED_OPERATION, through the communicator's error handler where the call has one.
#include <string_view>

#include <fmt/format.h>

#include "mpi/api.hpp"
#include "mpi/call.hpp"
#include "mpi/runtime.hpp"

namespace ftmpi::mpi {
namespace {

void unsupported(Call& call) {
  call.fail(MPI_ERR_UNSUPPORTED_OPERATION,
            fmt::format("one-sided communication is not implemented in ftmpi ({} and the other MPI_Win calls "
                        "return MPI_ERR_UNSUPPORTED_OPERATION)", call.name()));
}

int window_call(std::string_view name, MPI_Comm comm, MPI_Win* win) noexcept {
  return api_call(name, [&](Call& call) {
    if (check_comm(call, comm) == nullptr) return;
    if (win != nullptr) *win = MPI_WIN_NULL;
    unsupported(call);
  });
}

}  // namespace
}  // namespace ftmpi::mpi

using namespace ftmpi::mpi;

extern "C" {

int PMPI_Win_create(void* /*base*/, MPI_Aint /*size*/, int /*disp_unit*/, MPI_Info /*info*/, MPI_Comm comm,
                    MPI_Win* win) {
  return window_call("MPI_Win_create", comm, win);
}
#pragma weak MPI_Win_create = PMPI_Win_create

int PMPI_Win_allocate(MPI_Aint /*size*/, int /*disp_unit*/, MPI_Info /*info*/, MPI_Comm comm, void* /*baseptr*/,
                      MPI_Win* win) {
  return window_call("MPI_Win_allocate", comm, win);
}
#pragma weak MPI_Win_allocate = PMPI_Win_allocate

int PMPI_Win_create_dynamic(MPI_Info /*info*/, MPI_Comm comm, MPI_Win* win) {
  return window_call("MPI_Win_create_dynamic", comm, win);
}
#pragma weak MPI_Win_create_dynamic = PMPI_Win_create_dynamic

int PMPI_Win_attach(MPI_Win /*win*/, void* /*base*/, MPI_Aint /*size*/) {
  return api_call("MPI_Win_attach", [](Call& call) { unsupported(call); });
}
#pragma weak MPI_Win_attach = PMPI_Win_attach

int PMPI_Win_free(MPI_Win* /*win*/) {
  return api_call("MPI_Win_free", [](Call& call) { unsupported(call); });
}
#pragma weak MPI_Win_free = PMPI_Win_free

}  // extern "C"

#include "mpi/runtime.hpp"

#include <cstdio>
#include <cstdlib>
#include <span>

#include "mpi/handles.hpp"

namespace ftmpi::mpi {

Runtime& runtime() noexcept {
  static Runtime* const instance = new Runtime;
  return *instance;
}

Comm* find_comm(MPI_Comm handle) noexcept {
  Runtime& rt = runtime();
  return find_handle<HandleKind::comm>(rt.comms, handle);
}

void fatal(int code, std::string_view what) noexcept {
  Runtime& rt = runtime();
  const bool running = rt.phase == Phase::running;
  // stderr is unbuffered: glibc's fprintf emits this as one write, so ranks' lines do not interleave.
  if (running) {
    std::fprintf(stderr, "ftmpi: rank %d: %.*s\n", rt.world().rank(), static_cast<int>(what.size()), what.data());
    rt.engine->abort(code, what);
  }
  std::fprintf(stderr, "ftmpi: %.*s\n", static_cast<int>(what.size()), what.data());
  std::abort();
}

void require_running(std::string_view call) noexcept {
  const Phase phase = runtime().phase;
  if (phase == Phase::running) return;
  char what[160];
  std::snprintf(what, sizeof what, "%.*s: called %s (MPI_ERR_OTHER)", static_cast<int>(call.size()), call.data(),
                phase == Phase::before_init ? "before MPI_Init" : "after MPI_Finalize");
  fatal(MPI_ERR_OTHER, what);
}

}  // namespace ftmpi::mpi

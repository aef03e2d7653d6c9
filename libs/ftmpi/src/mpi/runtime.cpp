#include "mpi/runtime.hpp"

#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <numeric>

#include "mpi/collective.hpp"
#include "mpi/handles.hpp"

namespace ftmpi::mpi {

Runtime::Runtime() {
  comm_index.push_back(&comms.emplace_back());  // MPI_COMM_WORLD
  comm_index.push_back(&comms.emplace_back());  // MPI_COMM_SELF
  add_predefined_datatypes(datatypes);
  add_predefined_ops(ops);
  groups.put(*handle_index(MPI_GROUP_EMPTY, HandleKind::group), Group{});
  keyvals.reserve(kFirstUserKeyval);
  infos.reserve(2);  // MPI_INFO_ENV's slot: filled by MPI_Init (set_info_env)
}

namespace detail {
std::atomic<Runtime*> runtime_instance{nullptr};

Runtime& make_runtime() noexcept {
  static Runtime* const instance = new Runtime;  // thread-safe first construction
  runtime_instance.store(instance, std::memory_order_release);
  return *instance;
}
}  // namespace detail

std::vector<int> Comm::members() const {
  if (inter) return inter->local;
  if (!world_ranks.empty()) return world_ranks;
  std::vector<int> all(static_cast<std::size_t>(size()));
  std::iota(all.begin(), all.end(), 0);
  return all;
}

void poll_collectives() {
  std::vector<CollOp*>& pending = runtime().pending_collectives;
  // test() may complete an op, never add or remove one: indices stay valid.
  for (std::size_t i = 0; i < pending.size(); ++i) pending[i]->test();
}

// Under the thread lock held shared only broadcast resends are answered (one thread at a time): moving a
// nonblocking collective along may finish it, and finishing runs MPI-layer code that creates objects
// (MPI_Comm_idup adds its communicator) while other threads read them, so that is left to threads
// holding the lock exclusive (waits and tests of those requests, every other call's progress), which
// waiting readers let in between their rounds (ThreadLock::pass).
void poll_background_shared() {
  static std::mutex background;
  if (!background.try_lock()) return;
  const std::lock_guard lock(background, std::adopt_lock);
  if (runtime().shm_bcast_busy) service_shm_bcasts();
  if (windows_open.load(std::memory_order_relaxed) != 0) service_windows(*runtime().engine, true);
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

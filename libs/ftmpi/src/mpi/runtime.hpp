// The state of the MPI library in this process: where it is in its life, the engine, the tables of
// objects programs create (communicators, datatypes, groups, ops, info objects, keyvals), the thread
// level, the bsend buffer, the requests, and the collectives in progress.
#pragma once

#include <atomic>
#include <compare>
#include <cstdint>
#include <deque>
#include <memory>
#include <set>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <vector>

#include "engine/engine.hpp"
#include "ftmpi/base/params.hpp"
#include "ftmpi/coll/tuning.hpp"
#include "mpi/bsend.hpp"
#include "mpi/comm.hpp"
#include "mpi/datatype.hpp"
#include "mpi/handles.hpp"
#include "mpi/objects.hpp"
#include "mpi/request.hpp"
#include "mpi/thread_lock.hpp"

namespace ftmpi::mpi {

enum class Phase : std::uint8_t { before_init, running, finalized };

class CollOp;
struct ShmCollComm;  // shm_coll.cpp
struct ShmCollCommDeleter {
  void operator()(ShmCollComm* state) const noexcept;
};

// A context agreement's priority (comms.hpp), the same at every member and different for agreements
// under way at once: the parent's context, then what orders agreements over one parent: the tag of
// its first round among the parent's collectives (dup, idup, split ...), or the program's tag
// (MPI_Comm_create_group; MPI_Intercomm_create, whose "parent" is the lower of the groups' contexts).
struct AgreementKey {
  enum class Kind : std::uint8_t { collective, group, intercomm };
  std::uint32_t context = 0;
  Kind kind = Kind::collective;
  int tag = 0;
  friend auto operator<=>(const AgreementKey&, const AgreementKey&) = default;
};

struct Runtime {
  Runtime();

  Phase phase = Phase::before_init;
  base::ParamSet params;  // outlives the engine that was started with it
  bool params_loaded = false;  // by MPI_Init, or earlier by MPI_T_init_thread (load_params)
  // The engine's counters when MPI_Finalize stopped it: what MPI_T's performance variables read then.
  engine::EngineCounters final_counters;
  std::unique_ptr<engine::Engine> engine;
  coll::Tuning tuning;
  // Indexed by the handle's index: MPI_COMM_WORLD, MPI_COMM_SELF, then the communicators programs
  // make. Slots are never reused: requests in flight may still name a freed communicator.
  std::deque<Comm> comms;
  std::vector<Comm*> comm_index;  // &comms[i]: one load per lookup instead of the deque's arithmetic
  // The lowest context ids this process may propose for a new communicator, in the main and the eager
  // spaces (comms.hpp).
  std::uint32_t next_context = 0;
  std::uint32_t next_eager_context = 0;
  // Context agreements past their eager round in this process, by priority key (comms.hpp), and
  // whether an agreement has a proposal out in either space.
  std::multiset<AgreementKey> agreeing;
  bool proposal_out = false;
  bool eager_out = false;
  DatatypeTable datatypes;
  OpTable ops;
  GroupTable groups;
  InfoTable infos;
  KeyvalTable keyvals;
  // Attributes cached on datatypes, by handle (attributes.cpp); a freed type's are deleted.
  std::unordered_map<int, std::vector<Attribute>> type_attributes;
  MessageTable messages;
  int thread_level = MPI_THREAD_SINGLE;
  std::thread::id main_thread;
  BsendBuffer bsend;
  RequestPool requests;
  // Nonblocking collectives not complete yet (owned by their requests): every waiting loop of the
  // MPI layer moves them along, so that one rank's wait never starves another rank's collective.
  std::vector<CollOp*> pending_collectives;
  // A completed op kept for the next collective call (collective.cpp), or null.
  CollOp* spare_coll_op = nullptr;
  // Collectives that failed with messages still in flight: their buffers must outlive those messages.
  std::vector<std::unique_ptr<CollOp>> failed_collectives;
  // The pieces of requests freed (MPI_Request_free) while their message was in flight.
  std::vector<std::unique_ptr<PiecesInFlight>> orphaned_pieces;

  // Communicators' shared-memory collective state (shm_coll.hpp), made at their first such collective
  // (Comm::shm_coll points at its entry).
  std::vector<std::unique_ptr<ShmCollComm, ShmCollCommDeleter>> shm_colls;
  // Some of them may owe a resend: the progress path calls service_shm_bcasts.
  bool shm_bcast_busy = false;

  Comm& world() noexcept { return comms[0]; }
};

namespace detail {
// Set once by make_runtime(); every MPI call reads it, so the common case is one load, not a call.
extern std::atomic<Runtime*> runtime_instance;
Runtime& make_runtime() noexcept;
}  // namespace detail

// The process's runtime. Never destroyed: MPI calls stay well-defined (and leak checkers quiet) in
// atexit handlers and static destructors of the application.
inline Runtime& runtime() noexcept {
  Runtime* instance = detail::runtime_instance.load(std::memory_order_acquire);
  return instance != nullptr ? *instance : detail::make_runtime();
}
// The engine; only while running.
inline engine::Engine& engine() noexcept { return *runtime().engine; }
// The communicator a handle names, or null (never created, or freed).
inline Comm* find_comm(Runtime& rt, MPI_Comm handle) noexcept {
  const auto index = handle_index(handle, HandleKind::comm);
  if (!index || *index >= rt.comm_index.size()) [[unlikely]] return nullptr;
  Comm* comm = rt.comm_index[*index];
  return comm->handle == handle ? comm : nullptr;
}
inline Comm* find_comm(MPI_Comm handle) noexcept { return find_comm(runtime(), handle); }
// The datatype a handle names, or null.
inline Datatype* find_datatype(Runtime& rt, int handle) noexcept { return rt.datatypes.find(handle); }
inline Datatype* find_datatype(int handle) noexcept { return find_datatype(runtime(), handle); }

// Moves the pending nonblocking collectives along (no engine progress of its own).
void poll_collectives();
// Answers resend requests of shared-memory broadcasts this rank wrote (shm_coll.hpp).
void service_shm_bcasts();
// Windows whose target side is registered (window.hpp): while there are none, waiting loops skip
// service_windows.
extern std::atomic<int> windows_open;
// Serves incoming one-sided requests of every window (window.cpp); with `try_only` it gives up when
// another thread is at it. True when it did anything.
bool service_windows(engine::Engine& engine, bool try_only);
// The MPI layer's own pending work: nonblocking collectives, broadcast resends, one-sided requests.
// Whether there is any: without MPI_THREAD_MULTIPLE none appears while a call waits (only the program's
// own calls start it), so a wait that finds none need not look again.
inline bool work_pending(const Runtime& rt) noexcept {
  return !rt.pending_collectives.empty() || rt.shm_bcast_busy || windows_open.load(std::memory_order_relaxed) != 0;
}
inline void poll_pending(Runtime& rt) {
  if (!rt.pending_collectives.empty()) poll_collectives();
  if (rt.shm_bcast_busy) service_shm_bcasts();
  if (windows_open.load(std::memory_order_relaxed) != 0) [[unlikely]] service_windows(*rt.engine, true);
}
inline void poll_pending() { poll_pending(runtime()); }
// What of it a thread holding the thread lock shared may do (runtime.cpp).
void poll_background_shared();
// Moves the MPI layer's own pending work along.
inline void poll_background() {
  if (ThreadLock::held_shared()) [[unlikely]] {
    poll_background_shared();
    return;
  }
  poll_pending();
}
// One round of engine progress, then the MPI layer's pending work: what the test calls do.
inline void progress_once() {
  if (ThreadLock::enabled()) [[unlikely]] ThreadLock::pass();
  engine().progress();
  poll_background();
}
// Makes progress until done() returns true, moving the pending collectives along meanwhile: what every
// waiting call of the MPI layer uses instead of Engine::progress_until.
// The thread lock's flag is read once, not at every round.
template <typename Done>
void progress_until(Done&& done) {
  Runtime& rt = runtime();
  if (!ThreadLock::enabled()) [[likely]] {
    rt.engine->progress_until([&] {
      poll_pending(rt);  // not runtime() again at every round: an atomic load and a test
      return done();
    });
  } else {
    rt.engine->progress_until(
        [&] {
          poll_background();
          return done();
        },
        [] { ThreadLock::pass(); });
  }
}

// Registers every parameter table and reads the FTMPI_* environment, once: MPI_Init and the tools
// interface (which may come first, and set parameters before MPI_Init) share it (api_env.cpp).
base::Status load_params(Runtime& rt);

// Prints "ftmpi: rank R: <what>" on stderr ("ftmpi: <what>" when MPI is not running) and ends the job
// with `code`: through the engine while it runs (the launcher gets `what` as the reason and names the
// rank itself), otherwise by aborting this process.
[[noreturn]] void fatal(int code, std::string_view what) noexcept;
// Ends the process unless MPI is running: calls before MPI_Init or after MPI_Finalize have no error
// handler to report through.
void require_running(std::string_view call) noexcept;

}  // namespace ftmpi::mpi

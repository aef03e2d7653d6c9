// The messaging engine: what the MPI C API (src/mpi/) calls. Private to libftmpi.
//
// The engine moves messages between processes of one job: it owns the paths, the per-peer sequence
// state, the tag matcher, the requests and progress. It knows communicators only as a context id plus
// the world rank of each member (CommView); it knows datatypes only as a flattened layout
// (frag::PiecesLayout: (displacement, length) pieces repeated count times), whose packed bytes travel:
// the MPI layer flattens a datatype once at commit, and fragments are gathered from and scattered into
// the pieces with the checksum computed in the same pass.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "engine/stats.hpp"
#include "ftmpi/base/params.hpp"
#include "ftmpi/base/status.hpp"
#include "ftmpi/frag/fragmenter.hpp"

namespace ftmpi::engine {

// Wildcards for irecv/iprobe; the MPI shim translates MPI_ANY_SOURCE/MPI_ANY_TAG to these.
inline constexpr int kAnySource = -1;
inline constexpr int kAnyTag = -2;

enum class SendMode : std::uint8_t {
  standard,     // eager below the path's threshold, rendezvous above
  synchronous,  // completes only once the receiver has matched it (MPI_Ssend)
  ready,        // the receiver promised a posted receive; sent like standard
};

// What MPI_Status reports about a completed (or probed) operation.
struct Completion {
  int source = -1;  // rank of the sender in the communicator (receives and probes)
  int tag = -1;
  std::size_t bytes = 0;   // bytes received (receives) or the message's length (probes)
  bool cancelled = false;
  bool truncated = false;  // the message was longer than the receive buffer (MPI_ERR_TRUNCATE)
  // The world rank of the peer the operation needed, when that peer became unreachable (every rail to it
  // failed, Engine::lost_reason says how): the operation did not happen. -1 otherwise.
  int lost_peer = -1;
};

// Context ids below this are the engine's (0 MPI_COMM_WORLD, 1 MPI_COMM_SELF, 2 the engine's own
// finalize barrier); the MPI layer allocates communicator contexts from here up.
inline constexpr std::uint32_t kFirstFreeContext = 16;

// A communicator as the engine sees it. Messages are matched by (context, sender's world rank, tag), so
// the engine needs no table of communicators: a message on a communicator this process has not
// created yet simply waits as unexpected. The views must stay valid while requests on them are live.
struct CommView {
  std::uint32_t context = 0;          // point-to-point context id; unique per communicator in the job
  int rank = 0;                       // my rank in it
  int size = 0;
  std::span<const int> world_ranks;   // world rank of every member by communicator rank; empty = identity
  int world_rank_of(int comm_rank) const noexcept {
    return world_ranks.empty() ? comm_rank : world_ranks[static_cast<std::size_t>(comm_rank)];
  }
  int comm_rank_of(int world_rank) const noexcept {  // -1 if not a member
    return world_ranks.empty() ? world_rank : comm_rank_in_list(world_rank);
  }
  int comm_rank_in_list(int world_rank) const noexcept;
};

class Request;  // owned by the engine; freed by Engine::release
struct MatchedMessage;  // a message taken out of matching by improbe, until its mrecv

class Engine {
 public:
  virtual ~Engine() = default;

  // Starts the engine of this process: connects to the launcher (or runs as a singleton), sets up the
  // paths to every peer, exchanges addresses. Returns the reason when it cannot (the caller reports it).
  static base::Result<std::unique_ptr<Engine>> start(const base::ParamSet& params);

  virtual int world_rank() const noexcept = 0;
  virtual int world_size() const noexcept = 0;
  // The job's id, whoever launched it: names its shared-memory segments (rte::shm_prefix).
  virtual std::uint64_t job_id() const noexcept = 0;
  // Context ids of MPI_COMM_WORLD and MPI_COMM_SELF; the MPI layer allocates the others.
  virtual std::uint32_t world_context() const noexcept = 0;
  virtual std::uint32_t self_context() const noexcept = 0;

  // Nonblocking point-to-point; `dest`/`source` are communicator ranks (source may be kAnySource, tag
  // kAnyTag). The buffer must stay valid until the request completes. Never returns null. When the peer
  // becomes unreachable (no rail left to it) the request completes with Completion::lost_peer set, and
  // so does every later one to or from that peer (a receive from kAnySource is not failed: another
  // peer may still send it).
  virtual Request* isend(const CommView& comm, const void* buf, std::size_t bytes, int dest, int tag,
                         SendMode mode) = 0;
  virtual Request* irecv(const CommView& comm, void* buf, std::size_t capacity, int source, int tag) = 0;
  // The same for a message laid out in pieces at `base` (a derived datatype): its length (or the
  // receive's capacity) is layout.packed_size(). `layout`, and the pieces it views, must stay valid until
  // the request completes.
  virtual Request* isend_pieces(const CommView& comm, const void* base, const frag::PiecesLayout& layout, int dest,
                                int tag, SendMode mode) = 0;
  virtual Request* irecv_pieces(const CommView& comm, void* base, const frag::PiecesLayout& layout, int source,
                                int tag) = 0;
  // A blocking send's shortcut: when the message goes eager (not synchronous, within the peer's eager
  // limit) it is handed to the paths now and true is returned, with no request to wait for or release;
  // otherwise nothing happens and false is returned (call isend).
  virtual bool send_eager(const CommView& comm, const void* buf, std::size_t bytes, int dest, int tag,
                          SendMode mode) = 0;

  // A blocking receive whole: posted, waited for as progress_until waits (calling `between`, unless null,
  // after every round) and released; its completion. Engines may do it in one piece (EngineCore, single-threaded:
  // no virtual call per round); this one is irecv, progress_until and release.
  virtual Completion receive(const CommView& comm, void* buf, std::size_t capacity, int source, int tag,
                             void (*between)());

  // True when complete; fills `out` (if non-null). Does not make progress by itself.
  virtual bool is_complete(const Request* request, Completion* out) const noexcept = 0;
  // When complete: fills `out` (not null), releases the request and returns true (is_complete and
  // release in one call, as a completion call collects each request); else false, and the request stays.
  virtual bool take_completion(Request* request, Completion* out) = 0;
  // Cancels a receive that has not matched yet (it then completes as cancelled); sends already handed
  // to a path complete normally (MPI allows a cancel to fail).
  virtual void cancel(Request* request) = 0;
  // Gives the request back; an incomplete request completes in the background (MPI_Request_free).
  virtual void release(Request* request) = 0;

  // Why a peer became unreachable (the rails, how long each was silent), for the error the application
  // sees; empty while it is reachable.
  virtual std::string lost_reason(int world_rank) const = 0;

  // MPI_Iprobe: fills `out` with the envelope of the message a receive would match, without taking it.
  virtual bool iprobe(const CommView& comm, int source, int tag, Completion* out) = 0;
  // MPI_Improbe: takes the message a receive would match out of matching, so that no other receive can
  // take it, and fills `out`; its handle for mrecv, or null when there is none. Its data keep arriving.
  virtual MatchedMessage* improbe(const CommView& comm, int source, int tag, Completion* out) = 0;
  // MPI_Mrecv / MPI_Imrecv: the receive of a message improbe took (each taken message exactly once).
  virtual Request* mrecv(const CommView& comm, MatchedMessage* message, void* buf, std::size_t capacity) = 0;
  virtual Request* mrecv_pieces(const CommView& comm, MatchedMessage* message, void* base,
                                const frag::PiecesLayout& layout) = 0;

  // Idle rounds a waiting rank spins before it yields its core (engine.progress.spin; 0 when the host has
  // more ranks than CPUs): other waits of the library (the shared-memory broadcast) follow it too.
  virtual std::uint64_t spin_rounds() const noexcept = 0;

  // The engine's counters as they are now (MPI_T's performance variables read them).
  virtual EngineCounters counters_snapshot() const = 0;

  // One round of progress over every path, timer and queue. Returns true if anything happened.
  virtual bool progress() = 0;
  // Makes progress until done() returns true; spins briefly, then yields the core (oversubscription).
  template <typename Done>
  void progress_until(Done&& done) {
    progress_until(done, [] {});
  }
  // The same, calling between() after every round (the MPI layer passes its thread lock there).
  template <typename Done, typename Between>
  void progress_until(Done&& done, Between&& between);

  // Work of the MPI layer the progress thread (engine.progress.thread) runs after each of its rounds,
  // with the engine it wraps (its lock held: `work` must call that engine, not this one); returns true
  // when it did anything. Serving one-sided requests while the program computes (mpi/window.hpp).
  // Engines without a progress thread ignore it: the MPI layer's waiting loops do that work.
  virtual void set_background_work(std::function<bool(Engine&)> work) { (void)work; }

  // Flushes every outstanding send to its peer and tears down the paths (MPI_Finalize).
  virtual base::Status finalize() = 0;
  // Tells the launcher the job must end (MPI_Abort); does not return.
  [[noreturn]] virtual void abort(int code, std::string_view message) = 0;

 protected:
  // Called by progress_until between rounds that did nothing; decides when to spin, yield or sleep.
  virtual void idle(std::uint64_t idle_rounds) noexcept = 0;
  // progress_until's loop, with `round` (true when it did anything) for progress(): an engine that can
  // call its own round directly waits the same way without a virtual call per round.
  template <typename Done, typename Round, typename Between>
  void wait_rounds(Done&& done, Round&& round, Between&& between);

 public:
  // A thread of this process begins (true) or ends (false) waiting in progress_until, polling: peers on
  // shared memory may then count on this process answering soon (a split copy, engine_core.hpp).
  virtual void waiting(bool now) noexcept { (void)now; }
};

// Says that this thread waits in the library (Engine::waiting) from say() (or construction, when `now`)
// until the scope ends, however it ends.
class WaitingScope {
 public:
  WaitingScope(Engine& engine, bool now) noexcept : engine_(engine) {
    if (now) say();
  }
  WaitingScope(const WaitingScope&) = delete;
  WaitingScope& operator=(const WaitingScope&) = delete;
  ~WaitingScope() {
    if (said_) engine_.waiting(false);
  }
  bool said() const noexcept { return said_; }
  void say() noexcept {
    said_ = true;
    engine_.waiting(true);
  }

 private:
  Engine& engine_;
  bool said_ = false;
};

// What makes two processes "on the same host" for shared memory (the engine.host_id parameter, else
// kernel boot id + network and mount namespaces); the MPI layer's MPI_Comm_split_type and shared-memory
// broadcast group ranks by it too.
std::string host_identity(const base::ParamSet& params);

// Whether path.kinds lets ranks of one host use shared memory (false for `udp` alone, and for a value the
// engine refuses at start).
bool shared_memory_allowed(const base::ParamSet& params);

template <typename Done, typename Round, typename Between>
void Engine::wait_rounds(Done&& done, Round&& round, Between&& between) {
  // Said once this call finds nothing to do (a call done at once says nothing).
  WaitingScope waiting_now(*this, false);
  std::uint64_t idle_rounds = 0;
  while (!done()) {
    if (round()) {
      idle_rounds = 0;
    } else {
      if (!waiting_now.said()) [[unlikely]] waiting_now.say();
      idle(++idle_rounds);
    }
    between();
  }
}

template <typename Done, typename Between>
void Engine::progress_until(Done&& done, Between&& between) {
  wait_rounds(done, [this] { return progress(); }, between);
}

inline Completion Engine::receive(const CommView& comm, void* buf, std::size_t capacity, int source, int tag,
                                  void (*between)()) {
  Request* request = irecv(comm, buf, capacity, source, tag);
  Completion completion;
  progress_until([&] { return is_complete(request, &completion); }, [between] {
    if (between != nullptr) between();
  });
  release(request);
  return completion;
}

}  // namespace ftmpi::engine

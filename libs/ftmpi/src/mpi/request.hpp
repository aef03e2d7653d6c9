// The object behind an MPI_Request, and the pool that hands them out.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "engine/engine.hpp"
#include "ftmpi/base/threads.hpp"
#include "mpi/api.hpp"
#include "mpi/comm.hpp"

namespace ftmpi::mpi {

enum class Mode : std::uint8_t { standard, synchronous, ready, buffered, receive, collective, generalized };

// Why an operation failed, when its error class alone does not say. Empty for nearly every operation.
// It points into a process-wide set of the texts seen (request.cpp), where a text stays for the process's
// lifetime, so that an Outcome is trivially copied: it is built, moved and dropped several times per
// request, and an owning pointer cost each of those a test and the request's release a destructor call
// (docs/benchmarks.md, "A request's set-up and collection").
class Reason {
 public:
  // Kept::always for texts of a bounded kind (a lost peer's: one per rank), which the cap on the set
  // must not crowd out: a long fault-tolerant run may fail for many other reasons before it loses a peer.
  enum class Kept : std::uint8_t { up_to_the_cap, always };

  Reason() noexcept = default;
  Reason(std::string_view text, Kept kept = Kept::up_to_the_cap);  // request.cpp
  Reason(const std::string& text) : Reason(std::string_view(text)) {}

  bool empty() const noexcept { return text_ == nullptr; }
  std::string str() const { return text_ != nullptr ? *text_ : std::string(); }

 private:
  const std::string* text_ = nullptr;
};

// What a completed operation reports through MPI_Status (and the error it completed with).
struct Outcome {
  int source = MPI_ANY_SOURCE;
  int tag = MPI_ANY_TAG;
  std::size_t bytes = 0;
  bool cancelled = false;
  int error = MPI_SUCCESS;
  Reason reason{};  // why it failed, when the class alone does not say (collectives)
};
static_assert(std::is_trivially_copyable_v<Outcome>);

// A message of a type that is not dense (datatype.hpp) in flight: the view over its pieces that the
// engine gathers from or scatters into. On the heap, so that it can outlive a request freed in flight.
struct PiecesInFlight {
  std::shared_ptr<const Layout> layout;  // owns the pieces `view` reads
  frag::PiecesLayout view;
};

// A generalized request's callbacks (MPI_Grequest_start) and whether the program said it is complete.
struct Generalized {
  MPI_Grequest_query_function* query = nullptr;
  MPI_Grequest_free_function* free = nullptr;
  MPI_Grequest_cancel_function* cancel = nullptr;
  void* extra_state = nullptr;
  bool complete = false;  // MPI_Grequest_complete was called
  bool freed = false;     // MPI_Request_free came first: released at MPI_Grequest_complete
  // The library's own requests of this kind (MPI_Buffer_iflush): complete once this says so.
  std::function<bool()> poll = nullptr;
};

class Call;
class CollOp;
struct CollOpDeleter {
  void operator()(CollOp* op) const noexcept;  // collective.cpp
};

}  // namespace ftmpi::mpi

// mpi.h names this struct, so it lives outside the namespace. Slots are reused: RequestPool::release lets
// go of every member that owns something, and acquire sets the others; a new member goes in one of the two.
struct ftmpi_request {
  static constexpr std::uint32_t kLive = 0x52455131;  // "REQ1"

  std::uint32_t magic = 0;  // kLive while the handle is valid
  ftmpi::mpi::Mode mode = ftmpi::mpi::Mode::standard;
  bool persistent = false;
  // Between a start and the completion call that collects the outcome. One-shot requests start when
  // created and are freed when collected, so for them this is always true.
  bool active = false;
  bool done = false;  // `outcome` is recorded and `op` was given back to the engine
  ftmpi::mpi::Transfer transfer;
  ftmpi::engine::Request* op = nullptr;  // the engine's request while in flight
  std::unique_ptr<ftmpi::mpi::PiecesInFlight> pieces;  // a type that is not dense, while in flight
  // These three only in the mode named (RequestPool::release clears them for those modes only).
  std::unique_ptr<ftmpi::mpi::CollOp, ftmpi::mpi::CollOpDeleter> collective;  // Mode::collective
  std::unique_ptr<ftmpi::mpi::Generalized> general;                           // Mode::generalized
  // Mode::collective, persistent: starts one run of it on a new op (api_coll.cpp), false when it could not.
  std::function<bool(ftmpi::mpi::Call&, ftmpi::mpi::CollOp&)> restart;
  // MPI_Isendrecv: this request is the receive, `companion` the send (a pool request this one owns,
  // completed and released with it), `staged` the packed copy an MPI_Isendrecv_replace sends from.
  ftmpi_request* companion = nullptr;
  std::unique_ptr<std::vector<std::byte>> staged;
  ftmpi::mpi::Outcome outcome;
  ftmpi_request* next_free = nullptr;  // pool link while not in use
};

namespace ftmpi::mpi {

using Request = ::ftmpi_request;

class RequestPool {
 public:
  // A fresh, inactive request.
  Request& acquire(Mode mode, const Transfer& transfer, bool persistent);
  // The same with a default-constructed Transfer, for a caller that checks its arguments straight into
  // it (post_send, post_recv): no copy, and none of a Transfer built on the caller's stack field by field,
  // which was read back in wider loads than its stores (peer and tag, 4 bytes each, copied as one word):
  // a load that cannot be forwarded waits for the stores before it to reach the cache.
  Request& acquire(Mode mode, bool persistent);
  void release(Request& request) noexcept;

  // True if `request` is a handle this pool gave out and that was not freed since. Slots are never
  // returned to the system, so reading a stale handle's slot is safe.
  static bool is_live(const Request* request) noexcept { return request->magic == Request::kLive; }

 private:
  // A slot off the free list (or a new one), its plain fields set for `mode`, all but its Transfer.
  Request& take_slot(Mode mode, bool persistent);

  base::OptionalMutex lock_;   // point-to-point calls of several threads at once (thread_lock.hpp)
  std::deque<Request> slots_;  // a deque never moves its elements
  Request* free_ = nullptr;
};

}  // namespace ftmpi::mpi

// Requests and the table that names them on the wire.
//
// Rendezvous frames name requests by cookie (sender_request / receiver_request), never by pointer: a
// cookie is (generation << 32 | slot), checked against the table on every use, so a forged, stale or
// duplicated cookie finds nothing instead of freed memory.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <new>
#include <vector>

#include "engine.hpp"
#include "ftmpi/base/threads.hpp"

namespace ftmpi::engine {

struct IncomingMessage;

enum class RequestKind : std::uint8_t { send, receive };

enum class SendState : std::uint8_t {
  eager_done,          // every fragment handed to a path
  awaiting_cts,        // RTS sent, waiting for the receiver to match
  streaming,           // CTS received: sending the remaining fragments as room allows
  awaiting_fin,        // single copy: the receiver is reading our memory
  awaiting_acks,       // every fragment sent, some kept by reference and not yet received by the peer
};

class Request {
 public:
  RequestKind kind = RequestKind::send;
  // Set last, with release order, once `completion` is filled in: under MPI_THREAD_MULTIPLE the thread
  // that waits reads it without the engine's lock (Engine::is_complete).
  base::ReleaseFlag complete;
  bool released = false;  // the application gave it back; recycle once complete
  bool in_use = false;    // false while the slot sits on the free list
  std::uint32_t slot = 0;
  std::uint32_t generation = 0;
  Completion completion;

  // Send side.
  const std::byte* send_buf = nullptr;
  std::size_t bytes = 0;
  std::uint32_t peer = 0;       // world rank
  std::uint32_t context = 0;
  std::int32_t tag = 0;
  std::uint64_t msg_seq = 0;
  SendMode mode = SendMode::standard;
  SendState send_state = SendState::eager_done;
  std::size_t next_offset = 0;        // streaming: first byte not yet handed to a path
  std::uint64_t receiver_cookie = 0;  // from the CTS
  bool cancel_asked = false;          // a CANCEL went to the receiver; its answer has not come
  // Frames of this send kept by reference to send_buf (RetainedFrame::payload) that the peer has not
  // received yet: the buffer is the application's again only once this is 0.
  std::uint32_t frames_lent = 0;

  // Receive side.
  CommView comm;  // to report the sender's rank in the communicator
  std::byte* recv_buf = nullptr;
  std::size_t capacity = 0;
  std::int32_t source = kAnySource;    // the sender's world rank it names, or kAnySource
  IncomingMessage* message = nullptr;  // once matched

  // Both sides: the message's layout when it is not one contiguous block at send_buf / recv_buf, which
  // are then the base its pieces are relative to.
  const frag::PiecesLayout* layout = nullptr;

  std::uint64_t cookie() const noexcept { return (static_cast<std::uint64_t>(generation) << 32) | slot; }
};

// Engine::is_complete without the virtual call, for a blocking call's wait, which asks at every round:
// the flag is set last, with release order, so the thread that waits may read it and then `completion`
// without the engine's lock, whichever engine runs the request.
inline bool request_complete(const Request* request) noexcept { return request->complete; }

// Sends start under their peer's lock alone (engine_core.hpp, "Threads"), so the table has a lock of its own,
// taken only around its own bookkeeping.
class RequestTable {
 public:
  Request* allocate(RequestKind kind) {
    return base::multi_threaded() ? allocate<true>(kind) : allocate<false>(kind);
  }
  void free(Request* request) {
    if (base::multi_threaded()) {
      free<true>(request);
    } else {
      free<false>(request);
    }
  }
  // The same in code specialised on the threads flag (threads.hpp): the lock only when kThreads.
  // Inline: a receive posted allocates one, and the call was a tenth of its cost.
  template <bool kThreads>
  Request* allocate(RequestKind kind) {
    const base::LockIf<kThreads> lock(lock_);
    Request* r = nullptr;
    std::uint32_t generation = 1;
    if (!free_.empty()) [[likely]] {
      r = free_.back();
      free_.pop_back();
      // A new generation invalidates every cookie of the slot's earlier requests; 0 means "none".
      generation = r->generation + 1;
      if (generation == 0) generation = 1;
    } else {
      r = add_slot();
    }
    const std::uint32_t slot = r->slot;
    // Made afresh in place: assigning a temporary copies every field one by one (the completion flag is
    // atomic, so Request is not trivially copyable), ~45 instructions more per receive posted. Default-
    // initialized: every member has an initializer, and value-initialization (construct_at) would first
    // zero all 184 bytes, then run the same initializers.
    std::destroy_at(r);
    ::new (static_cast<void*>(r)) Request;
    r->kind = kind;
    r->slot = slot;
    r->generation = generation;
    r->in_use = true;
    return r;
  }
  template <bool kThreads>
  void free(Request* request) {
    const base::LockIf<kThreads> lock(lock_);
    request->in_use = false;
    request->message = nullptr;
    free_.push_back(request);
  }
  // The live request a cookie names, of the expected kind, or null.
  Request* find(std::uint64_t cookie, RequestKind kind) noexcept;
  // The requests in use now (fn may complete and free them).
  std::vector<Request*> live_requests();

 private:
  // A new slot, its number set (out of line: rare once the table has grown).
  Request* add_slot();

  base::OptionalMutex lock_;
  std::deque<Request> slots_;       // deque: requests never move
  std::vector<Request*> by_slot_;   // &slots_[i]: one load per cookie looked up
  std::vector<Request*> free_;      // slots not in use, any generation
};

}  // namespace ftmpi::engine

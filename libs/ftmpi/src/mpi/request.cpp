#include "mpi/request.hpp"

#include <mutex>
#include <string>
#include <unordered_set>

#include "mpi/collective.hpp"

namespace ftmpi::mpi {

// The texts are kept for the process's lifetime, each once. Failures are rare, and most texts recur (a
// lost peer's, a function's return code); a program that keeps failing with new texts (MPI_ERRORS_RETURN
// in a loop) stops adding them at kMaxReasons, whose later failures keep their error class and say why
// their text is missing. Texts Kept::always (a lost peer's, at most one per rank) are added past it.
Reason::Reason(std::string_view text, Kept kept) {
  if (text.empty()) return;
  static constexpr std::size_t kMaxReasons = 4096;
  static std::mutex lock;
  static auto* texts = new std::unordered_set<std::string>();  // never destroyed: read at exit too
  const std::lock_guard guard(lock);
  auto found = texts->find(std::string(text));
  if (found == texts->end()) {
    if (texts->size() >= kMaxReasons && kept == Kept::up_to_the_cap) {
      found = texts->emplace("its reason was not kept: this process failed for more than " +
                             std::to_string(kMaxReasons) + " distinct reasons").first;
    } else {
      found = texts->emplace(text).first;
    }
  }
  text_ = &*found;
}

Request& RequestPool::acquire(Mode mode, const Transfer& transfer, bool persistent) {
  Request& request = take_slot(mode, persistent);
  request.transfer = transfer;
  return request;
}

Request& RequestPool::acquire(Mode mode, bool persistent) {
  Request& request = take_slot(mode, persistent);
  request.transfer = Transfer{};  // release() dropped its layout
  return request;
}

Request& RequestPool::take_slot(Mode mode, bool persistent) {
  Request* request = nullptr;
  {
    const std::lock_guard lock(lock_);
    request = free_;
    if (request != nullptr) {
      free_ = request->next_free;
    } else {
      request = &slots_.emplace_back();
    }
  }
  // Only the plain fields are set, the Transfer by each acquire: a fresh slot is default-constructed, and
  // release() let go of everything a used one owned. Assigning a whole `Request{}` built and moved ~280
  // bytes per request, a quarter of what posting a receive cost (docs/benchmarks.md, "A request's set-up
  // and collection").
  request->magic = Request::kLive;
  request->mode = mode;
  request->persistent = persistent;
  request->active = false;
  request->done = false;
  request->op = nullptr;
  request->outcome = Outcome{};
  request->next_free = nullptr;
  return *request;
}

void RequestPool::release(Request& request) noexcept {
  request.magic = 0;
  if (request.companion != nullptr) release(*request.companion);
  request.companion = nullptr;
  request.staged.reset();
  // Only these two modes own a collective's op, a restart or a generalized request's callbacks (a
  // point-to-point request, the common case, skips clearing them: a std::function's assignment is a call).
  if (request.mode == Mode::collective || request.mode == Mode::generalized) [[unlikely]] {
    request.collective.reset();
    request.general.reset();
    request.restart = nullptr;
  }
  request.pieces.reset();
  request.transfer.layout.reset();
  const std::lock_guard lock(lock_);
  request.next_free = free_;
  free_ = &request;
}

}  // namespace ftmpi::mpi

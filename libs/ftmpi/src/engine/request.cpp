// The request table (request.hpp): slots reused with a new generation each time, so a cookie from the
// wire finds a live request of the right kind, or nothing.
#include "request.hpp"

#include <memory>

namespace ftmpi::engine {

template <bool kThreads>
Request* RequestTable::allocate(RequestKind kind) {
  const base::LockIf<kThreads> lock(lock_);
  std::uint32_t slot = 0;
  std::uint32_t generation = 1;
  if (!free_.empty()) {
    slot = free_.back();
    free_.pop_back();
    // A new generation invalidates every cookie of the slot's earlier requests; 0 means "none".
    generation = slots_[slot].generation + 1;
    if (generation == 0) generation = 1;
  } else {
    slot = static_cast<std::uint32_t>(slots_.size());
    slots_.emplace_back();
  }
  Request& r = slots_[slot];
  // Made afresh in place: assigning a temporary copies every field one by one (the completion flag is
  // atomic, so Request is not trivially copyable), ~45 instructions more per receive posted.
  std::destroy_at(&r);
  std::construct_at(&r);
  r.kind = kind;
  r.slot = slot;
  r.generation = generation;
  r.in_use = true;
  return &r;
}

template <bool kThreads>
void RequestTable::free(Request* request) {
  const base::LockIf<kThreads> lock(lock_);
  request->in_use = false;
  request->message = nullptr;
  free_.push_back(request->slot);
}

template Request* RequestTable::allocate<false>(RequestKind kind);
template Request* RequestTable::allocate<true>(RequestKind kind);
template void RequestTable::free<false>(Request* request);
template void RequestTable::free<true>(Request* request);

Request* RequestTable::find(std::uint64_t cookie, RequestKind kind) noexcept {
  const std::lock_guard lock(lock_);
  const auto slot = static_cast<std::uint32_t>(cookie & 0xffffffffu);
  const auto generation = static_cast<std::uint32_t>(cookie >> 32);
  if (generation == 0 || slot >= slots_.size()) return nullptr;
  Request& r = slots_[slot];
  if (!r.in_use || r.generation != generation || r.kind != kind) return nullptr;
  return &r;
}

std::vector<Request*> RequestTable::live_requests() {
  const std::lock_guard lock(lock_);
  std::vector<Request*> live;
  for (Request& r : slots_) {
    if (r.in_use) live.push_back(&r);
  }
  return live;
}

}  // namespace ftmpi::engine

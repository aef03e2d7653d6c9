// The request table (request.hpp): slots reused with a new generation each time, so a cookie from the
// wire finds a live request of the right kind, or nothing.
#include "request.hpp"

namespace ftmpi::engine {

Request* RequestTable::add_slot() {
  Request& r = slots_.emplace_back();
  r.slot = static_cast<std::uint32_t>(by_slot_.size());
  by_slot_.push_back(&r);
  return &r;
}

Request* RequestTable::find(std::uint64_t cookie, RequestKind kind) noexcept {
  const std::lock_guard lock(lock_);
  const auto slot = static_cast<std::uint32_t>(cookie & 0xffffffffu);
  const auto generation = static_cast<std::uint32_t>(cookie >> 32);
  if (generation == 0 || slot >= by_slot_.size()) return nullptr;
  Request& r = *by_slot_[slot];
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

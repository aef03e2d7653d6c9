// How algorithms write schedules, and the small arithmetic they share.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "ftmpi/base/status.hpp"
#include "ftmpi/coll/reduction.hpp"
#include "ftmpi/coll/schedule.hpp"
#include "ftmpi/coll/transport.hpp"

namespace ftmpi::coll::detail {

// An argument a collective refuses: Errc::invalid_argument, naming the collective.
inline base::Status invalid(std::string_view collective, const std::string& what) {
  return base::Status(base::Errc::invalid_argument, std::string(collective) + ": " + what);
}

// A built schedule with its first round posted (what every ix() returns), or why not.
inline base::Result<Schedule> started(base::Result<Schedule> schedule) {
  if (!schedule) return schedule;
  if (auto progress = schedule->test(); !progress) return progress.status();
  return schedule;
}

class ScheduleBuilder {
 public:
  ScheduleBuilder(Transport& transport, int tag, const Reduction* reduction = nullptr);

  int rank() const noexcept { return rank_; }
  int size() const noexcept { return size_; }
  // Only for reductions.
  const Reduction& reduction() const { return *schedule_.reduction_; }
  std::size_t element_size() const { return schedule_.reduction_->element_size(); }
  bool commutative() const { return schedule_.reduction_->is_commutative(); }

  // Messages of zero bytes are left out: both ends compute the same size (MPI makes a pair's byte
  // counts agree), so both leave them out. send_empty/recv_empty are the exception (barriers).
  void send(const void* data, std::size_t bytes, int peer);
  void recv(void* data, std::size_t bytes, int peer);
  void send_empty(int peer);
  void recv_empty(int peer);
  // Local actions of the current round; a copy onto itself and an empty one are left out.
  void copy(const void* from, void* to, std::size_t bytes);
  // inout = in op inout over `count` elements.
  void reduce(const void* in, void* inout, std::size_t count);
  void end_round();

  // A buffer owned by the schedule; nullptr for zero bytes.
  std::byte* scratch(std::size_t bytes);

  Schedule finish() &&;

 private:
  void push(Action::Type type, int peer, const void* from, void* to, std::size_t size);

  Schedule schedule_;
  int rank_ = 0;
  int size_ = 0;
};

// Pointer arithmetic that tolerates the null buffers MPI allows for zero-byte arguments.
inline std::byte* at(void* base, std::ptrdiff_t offset) noexcept {
  return base == nullptr ? nullptr : static_cast<std::byte*>(base) + offset;
}
inline const std::byte* at(const void* base, std::ptrdiff_t offset) noexcept {
  return base == nullptr ? nullptr : static_cast<const std::byte*>(base) + offset;
}
inline std::ptrdiff_t signed_size(std::size_t bytes) noexcept { return static_cast<std::ptrdiff_t>(bytes); }

inline bool is_pof2(int n) noexcept { return n > 0 && (n & (n - 1)) == 0; }
// The largest power of two <= n (n >= 1).
inline int pof2_floor(int n) noexcept {
  int p = 1;
  while (p * 2 <= n) p *= 2;
  return p;
}
// Lowest set bit of v, or the smallest power of two >= n when v is 0 (the root of a binomial tree):
// the number of relative ranks the subtree of v spans.
inline int subtree_span(int v, int n) noexcept {
  if (v != 0) return v & -v;
  int p = 1;
  while (p < n) p *= 2;
  return p;
}

// Splits `total` items into `parts` blocks, the first total % parts one larger: block i starts at
// block_start(i) and block_start(parts) == total.
inline std::size_t block_start(std::size_t total, int parts, int i) noexcept {
  const auto p = static_cast<std::size_t>(parts);
  const auto k = static_cast<std::size_t>(i);
  return k * (total / p) + (k < total % p ? k : total % p);
}

}  // namespace ftmpi::coll::detail

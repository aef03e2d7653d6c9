// RangeList: the set of sequence numbers recorded so far, as disjoint ranges (docs/architecture.md,
// "Reliability").
//
// Every byte between an ordered pair of processes has a 64-bit sequence number; 0 is never valid, numbering
// starts at 1. Fragments arrive in any order, on several rails, duplicated, and re-cut to other MTUs so that
// a retransmission overlaps earlier fragments. A receiver keeps one RangeList of numbers received and one
// of numbers delivered; their in-order prefixes are LIRS and LIDS.
//
// Representation and invariants:
//   - floor_: every number below floor_ is recorded and floor_ itself is not. The in-order prefix is kept
//     as this one number, never as a stored range, so largest_in_order() is floor_ - 1 and an in-order
//     stream only bumps floor_ (no lookup, no allocation, however long the connection lives).
//   - above_: the recorded numbers above floor_, as a std::map first -> last of inclusive ranges. Ranges
//     are disjoint and non-adjacent (next.first > prev.last + 1), and every first > floor_: floor_ is
//     missing, so no stored range touches the prefix; a record that reaches floor_ swallows every stored
//     range it then touches. So the map holds only the islands above the first hole; its size is bounded
//     by the sender's window of unacknowledged data, not by the connection's lifetime.
//   - hint_: the range touched last, or end(). Lookups try it, its successor and its predecessor before
//     searching, so a stream continuing past a hole, or retransmissions arriving in descending order,
//     cost O(1).
//   - Numbers above kMaxSequence are invalid so that floor_ (one past a number) always fits in 64 bits.
//
// Complexity, for R stored ranges: record() is O(1) when the range extends the prefix or lands next to
// the hint, otherwise O(log R) plus O(log R) per range it merges away; each stored range is merged away
// at most once, so any arrival order costs O(N log R) over N records. coverage() and contains() are O(1)
// within the prefix or near the hint, else O(log R). Merged-away map nodes go to a spare pool of up to 64
// and are reused: measured over 100,000 fragments reordered within windows of 8 (64), the list allocated
// 0 (2) times after its first 1,000 records.
//
// Why a std::map: measured against a sorted vector with the same hint and a binary-search fallback
// (bench/seq patterns, fragments of 1024 numbers), the vector is about twice as fast while few ranges
// are stored (reordering within a window of 8 or 64 fragments), but every insert or merge in its middle
// moves the tail: 200,000 holes filled in random order took 5 s with the vector against 0.4 s with the
// map, and the vector's time grows with the square of the holes. The tree keeps every pattern O(log R);
// the folded prefix keeps the in-order case off the tree entirely, and the tens of nanoseconds a
// reordered fragment costs here are small against the microseconds a frame costs to receive. A chunked
// B-tree would win on large R if a profile ever asks for it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <iosfwd>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ftmpi/base/status.hpp"

namespace ftmpi::seq {

using Sequence = std::uint64_t;

// The largest valid sequence number; one past it still fits in a Sequence.
inline constexpr Sequence kMaxSequence = UINT64_MAX - 1;

// An inclusive range of sequence numbers. Valid when 1 <= first <= last <= kMaxSequence.
struct Range {
  Sequence first = 0;
  Sequence last = 0;

  std::uint64_t size() const noexcept { return last - first + 1; }
  friend bool operator==(const Range&, const Range&) = default;
};

// Whether [first, last] is a valid range (1 <= first <= last <= kMaxSequence).
constexpr bool is_valid_range(Sequence first, Sequence last) noexcept {
  return first != 0 && first <= last && last <= kMaxSequence;
}
// invalid_argument unless the range is valid.
base::Status check_range(Range range);
// "[5, 9]"
std::string to_string(Range range);
std::ostream& operator<<(std::ostream& out, Range range);

// How much of a queried range is recorded.
enum class Coverage : std::uint8_t { none, partial, full };

std::string_view to_string(Coverage coverage) noexcept;
std::ostream& operator<<(std::ostream& out, Coverage coverage);

class RangeList {
 public:
  RangeList() = default;
  // Copies and moves carry the recorded set, not the hint or the spare nodes (they belong to one map).
  RangeList(const RangeList& other);
  RangeList& operator=(const RangeList& other);
  RangeList(RangeList&& other) noexcept;
  RangeList& operator=(RangeList&& other) noexcept;
  ~RangeList() = default;

  // Records [first, last]. Returns how many of its numbers were not recorded before: range size for new
  // data, 0 for a full duplicate, in between for an overlapping one.
  base::Result<std::uint64_t> record(Sequence first, Sequence last) {
    // In-order traffic, inline: nothing stored above the prefix and the range continues it.
    if (first == floor_ && is_valid_range(first, last) && above_.empty()) [[likely]] {
      floor_ = last + 1;
      return last - first + 1;
    }
    return record_any(first, last);
  }

  // How much of [first, last] is recorded.
  base::Result<Coverage> coverage(Sequence first, Sequence last) const {
    // Inline: a range inside the prefix, or above it while nothing is stored there (in-order traffic).
    if (is_valid_range(first, last)) [[likely]] {
      if (last < floor_) return Coverage::full;
      if (first >= floor_ && above_.empty()) return Coverage::none;
    }
    return coverage_any(first, last);
  }

  // Whether n is recorded (never true for 0).
  bool contains(Sequence n) const noexcept;

  // The largest n such that every number 1..n is recorded; 0 when 1 is missing.
  Sequence largest_in_order() const noexcept { return floor_ - 1; }

  // Whether anything is recorded above a missing number (a selective ACK has something to say).
  bool has_gaps() const noexcept { return !above_.empty(); }

  // The recorded range above the in-order prefix that holds n, or nullopt (n missing, or in the prefix):
  // what a selective ACK reports.
  std::optional<Range> range_above_prefix(Sequence n) const noexcept;

  // The first number not recorded: largest_in_order() + 1, where a gap report (NACK) starts.
  Sequence first_missing() const noexcept { return floor_; }

  // Treats every number below n as recorded from now on and drops whatever was stored for them, holes
  // included: a sender told "everything <= LIDS arrived" calls forget_below(LIDS + 1) even when its own
  // record of acknowledgements has holes from lost ACKs. Returns how many numbers that added. A receiver
  // need not call it: its in-order prefix is already kept as one number.
  std::uint64_t forget_below(Sequence n);

  // The recorded set as disjoint, non-adjacent ranges in ascending order, the in-order prefix first.
  // Allocates; for tests and debugging.
  std::vector<Range> ranges() const;

  // How many ranges ranges() would return.
  std::size_t range_count() const noexcept { return above_.size() + (floor_ > 1 ? 1 : 0); }
  bool empty() const noexcept { return floor_ == 1 && above_.empty(); }

 private:
  using Ranges = std::map<Sequence, Sequence>;  // first -> last
  // Enough to absorb the churn of reordering within a window of 64 fragments without allocating; held
  // only once reordering happened, so an in-order peer pays nothing.
  static constexpr std::size_t kSpareNodes = 64;

  // record() and coverage() for any range: checked, then the prefix and the stored ranges.
  base::Result<std::uint64_t> record_any(Sequence first, Sequence last);
  base::Result<Coverage> coverage_any(Sequence first, Sequence last) const;
  // Records [floor_, last] (floor_ <= last), swallowing every stored range it reaches.
  std::uint64_t extend_prefix(Sequence last);
  // Records [first, last] for floor_ < first.
  std::uint64_t record_above_prefix(Sequence first, Sequence last);
  // Erases a stored range, keeping its node for reuse; returns the next range.
  Ranges::iterator release(Ranges::iterator range);
  // Stores [first, last] just before `position`, reusing a spare node when there is one.
  Ranges::iterator store_before(Ranges::iterator position, Sequence first, Sequence last);

  Sequence floor_ = 1;
  Ranges above_;
  Ranges::iterator hint_ = above_.end();
  std::vector<Ranges::node_type> spare_;  // at most kSpareNodes
};

}  // namespace ftmpi::seq

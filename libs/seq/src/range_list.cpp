#include "ftmpi/seq/range_list.hpp"

#include <algorithm>
#include <iterator>
#include <ostream>
#include <type_traits>
#include <utility>

namespace ftmpi::seq {

namespace {

// How many numbers [a_first, a_last] and [b_first, b_last] share.
std::uint64_t overlap(Sequence a_first, Sequence a_last, Sequence b_first, Sequence b_last) noexcept {
  const Sequence low = std::max(a_first, b_first);
  const Sequence high = std::min(a_last, b_last);
  return low <= high ? high - low + 1 : 0;
}

// The stored range with the largest first <= n, or end() when there is none. Tries the hint and its
// neighbours first: consecutive arrivals usually land there.
template <typename Map, typename Iterator = decltype(std::declval<Map&>().begin())>
Iterator last_starting_at_or_before(Map& ranges, std::type_identity_t<Iterator> hint, Sequence n) {
  if (hint != ranges.end()) {
    if (hint->first <= n) {
      const auto next = std::next(hint);
      if (next == ranges.end() || next->first > n) return hint;
      const auto after_next = std::next(next);
      if (after_next == ranges.end() || after_next->first > n) return next;
    } else if (hint == ranges.begin()) {
      return ranges.end();
    } else if (const auto previous = std::prev(hint); previous->first <= n) {
      return previous;
    }
  }
  const auto above = ranges.upper_bound(n);
  return above == ranges.begin() ? ranges.end() : std::prev(above);
}

// Built only on failure, so that the check costs nothing more than a comparison on the data path.
base::Status invalid_range(Sequence first, Sequence last) {
  return {base::Errc::invalid_argument, "invalid sequence range " + to_string(Range{first, last})};
}

}  // namespace

base::Status check_range(Range range) {
  return is_valid_range(range.first, range.last) ? base::Status::ok() : invalid_range(range.first, range.last);
}

std::string to_string(Range range) {
  // Appended piece by piece: GCC 12 at -O3 reports a false -Wrestrict on chains of operator+.
  std::string out = "[";
  out += std::to_string(range.first);
  out += ", ";
  out += std::to_string(range.last);
  out += ']';
  return out;
}

std::ostream& operator<<(std::ostream& out, Range range) { return out << to_string(range); }

std::string_view to_string(Coverage coverage) noexcept {
  switch (coverage) {
    case Coverage::none: return "none";
    case Coverage::partial: return "partial";
    case Coverage::full: return "full";
  }
  return "unknown coverage";
}

std::ostream& operator<<(std::ostream& out, Coverage coverage) { return out << to_string(coverage); }

RangeList::RangeList(const RangeList& other)
    : floor_(other.floor_), above_(other.above_), hint_(above_.end()) {}

RangeList& RangeList::operator=(const RangeList& other) {
  if (this != &other) {
    floor_ = other.floor_;
    above_ = other.above_;
    hint_ = above_.end();
  }
  return *this;
}

RangeList::RangeList(RangeList&& other) noexcept
    : floor_(std::exchange(other.floor_, 1)), above_(std::move(other.above_)), hint_(above_.end()) {
  other.above_.clear();
  other.hint_ = other.above_.end();
}

RangeList& RangeList::operator=(RangeList&& other) noexcept {
  if (this != &other) {
    floor_ = std::exchange(other.floor_, 1);
    above_ = std::move(other.above_);
    hint_ = above_.end();
    other.above_.clear();
    other.hint_ = other.above_.end();
  }
  return *this;
}

base::Result<std::uint64_t> RangeList::record_any(Sequence first, Sequence last) {
  if (!is_valid_range(first, last)) return invalid_range(first, last);
  if (last < floor_) return std::uint64_t{0};
  if (first <= floor_) return extend_prefix(last);
  return record_above_prefix(first, last);
}

std::uint64_t RangeList::extend_prefix(Sequence last) {
  std::uint64_t added = last - floor_ + 1;
  Sequence new_floor = last + 1;
  for (auto range = above_.begin(); range != above_.end() && range->first <= new_floor;) {
    added -= overlap(range->first, range->second, floor_, last);
    new_floor = std::max(new_floor, range->second + 1);
    range = release(range);
  }
  floor_ = new_floor;
  return added;
}

std::uint64_t RangeList::record_above_prefix(Sequence first, Sequence last) {
  // The first stored range that overlaps or touches [first, last] from below, or the first one after it.
  auto range = last_starting_at_or_before(above_, hint_, first);
  if (range == above_.end()) {
    range = above_.begin();
  } else if (range->second < first - 1) {
    ++range;
  }
  // Stored firsts are > floor_ >= 1, so first - 1 cannot wrap.
  if (range == above_.end() || range->first - 1 > last) {
    hint_ = store_before(range, first, last);
    return last - first + 1;
  }

  std::uint64_t added = last - first + 1 - overlap(range->first, range->second, first, last);
  Sequence merged_last = std::max(last, range->second);
  for (auto next = std::next(range); next != above_.end() && next->first - 1 <= merged_last;) {
    added -= overlap(next->first, next->second, first, last);
    merged_last = std::max(merged_last, next->second);
    next = release(next);
  }
  range->second = merged_last;
  if (first < range->first) {
    // A map key is const: move the node to its new key without reallocating it.
    const auto next = std::next(range);
    auto node = above_.extract(range);
    node.key() = first;
    range = above_.insert(next, std::move(node));
  }
  hint_ = range;
  return added;
}

RangeList::Ranges::iterator RangeList::release(Ranges::iterator range) {
  const auto next = std::next(range);
  if (range == hint_) hint_ = above_.end();
  auto node = above_.extract(range);
  if (spare_.size() < kSpareNodes) {
    if (spare_.capacity() == 0) spare_.reserve(kSpareNodes);
    spare_.push_back(std::move(node));
  }
  return next;
}

RangeList::Ranges::iterator RangeList::store_before(Ranges::iterator position, Sequence first,
                                                    Sequence last) {
  if (spare_.empty()) return above_.emplace_hint(position, first, last);
  auto node = std::move(spare_.back());
  spare_.pop_back();
  node.key() = first;
  node.mapped() = last;
  return above_.insert(position, std::move(node));
}

base::Result<Coverage> RangeList::coverage_any(Sequence first, Sequence last) const {
  if (!is_valid_range(first, last)) return invalid_range(first, last);
  if (last < floor_) return Coverage::full;
  // floor_ itself is missing, so a range reaching from below the prefix's end to floor_ is partial.
  if (first < floor_) return Coverage::partial;
  if (above_.empty()) return Coverage::none;  // in-order traffic: nothing stored above the prefix
  const auto range = last_starting_at_or_before(above_, hint_, first);
  if (range != above_.end() && range->second >= first) {
    return range->second >= last ? Coverage::full : Coverage::partial;
  }
  const auto next = range == above_.end() ? above_.begin() : std::next(range);
  return next != above_.end() && next->first <= last ? Coverage::partial : Coverage::none;
}

bool RangeList::contains(Sequence n) const noexcept {
  if (n < floor_) return n != 0;
  const auto range = last_starting_at_or_before(above_, hint_, n);
  return range != above_.end() && range->second >= n;
}

std::optional<Range> RangeList::range_above_prefix(Sequence n) const noexcept {
  if (n < floor_) return std::nullopt;
  const auto range = last_starting_at_or_before(above_, hint_, n);
  if (range == above_.end() || range->second < n) return std::nullopt;
  return Range{range->first, range->second};
}

std::uint64_t RangeList::forget_below(Sequence n) {
  if (n <= floor_) return 0;
  return extend_prefix(n - 1);
}

std::vector<Range> RangeList::ranges() const {
  std::vector<Range> out;
  out.reserve(range_count());
  if (floor_ > 1) out.push_back({1, floor_ - 1});
  for (const auto& [first, last] : above_) out.push_back({first, last});
  return out;
}

}  // namespace ftmpi::seq

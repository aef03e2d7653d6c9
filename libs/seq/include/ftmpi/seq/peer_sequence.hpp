// Per-peer sequence state: the sender's numbering and the receiver's received/delivered tracking.
//
// One SendSequence and one ReceiveSequence per ordered pair of processes. The sender numbers every byte
// (a zero-byte message still takes one number, so that every frame has something to acknowledge) and,
// separately, every message (the matcher's ordering). The receiver records a fragment's range as
// *received* once its frame arrived with a valid header, and as *delivered* once its payload was verified
// and copied to the user; it acknowledges with LIRS and LIDS, the in-order prefixes of the two sets, and
// the sender frees everything <= LIDS. Invariant: delivered is a subset of received.
#pragma once

#include <cstdint>
#include <string_view>

#include "ftmpi/base/status.hpp"
#include "ftmpi/seq/range_list.hpp"

namespace ftmpi::seq {

class SendSequence {
 public:
  // The byte numbers of the next message or fragment of `bytes` bytes; a zero-byte one takes one number.
  // resource_exhausted once the 64-bit space is used up (centuries of traffic, or a bogus size).
  base::Result<Range> assign(std::uint64_t bytes) {
    const std::uint64_t count = bytes > 1 ? bytes : 1;
    // next_byte_ <= kMaxSequence + 1, so this cannot wrap.
    if (count > kMaxSequence + 1 - next_byte_) [[unlikely]] return exhausted(bytes);
    const Range range{next_byte_, next_byte_ + count - 1};
    next_byte_ += count;
    return range;
  }

  // The next message number: 1, 2, 3, ..., independent of byte numbering. 2^64 messages cannot be sent
  // (one per nanosecond would take 584 years), so it never wraps.
  std::uint64_t assign_message() noexcept { return next_message_++; }

  // What the next assign() / assign_message() will start at.
  Sequence next_byte() const noexcept { return next_byte_; }
  std::uint64_t next_message() const noexcept { return next_message_; }

 private:
  base::Status exhausted(std::uint64_t bytes) const;  // assign's refusal

  Sequence next_byte_ = 1;
  std::uint64_t next_message_ = 1;
};

// What a received frame's range added.
enum class Arrival : std::uint8_t {
  fresh,              // none of it was received before
  duplicate,          // all of it was: drop the frame and re-ACK
  partial_duplicate,  // a re-cut retransmission overlapping earlier fragments
};

std::string_view to_string(Arrival arrival) noexcept;

// What on_received recorded: the kind of arrival, and how many of the range's numbers were new (what a
// message's byte count grows by when a re-cut retransmission overlaps fragments already received).
struct Received {
  Arrival arrival = Arrival::fresh;
  std::uint64_t added = 0;
};

class ReceiveSequence {
 public:
  // Records a frame's byte range as received.
  base::Result<Received> on_received(Range range) {
    const auto added = received_.record(range.first, range.last);
    if (!added) [[unlikely]] return added.status();
    if (*added == range.size()) [[likely]] return Received{Arrival::fresh, *added};
    return Received{*added == 0 ? Arrival::duplicate : Arrival::partial_duplicate, *added};
  }

  // Records a range as delivered and returns how many of its numbers were not delivered before (what a
  // message's completion count should grow by when overlapping fragments were both delivered).
  // invalid_argument, recording nothing, unless every number in it was received.
  base::Result<std::uint64_t> on_delivered(Range range) {
    const auto received = received_.coverage(range.first, range.last);
    if (!received || *received != Coverage::full) [[unlikely]] return not_all_received(range, received);
    return delivered_.record(range.first, range.last);
  }

  // Largest in-order received / delivered sequence number; 0 before byte 1 arrived / was delivered.
  Sequence lirs() const noexcept { return received_.largest_in_order(); }
  Sequence lids() const noexcept { return delivered_.largest_in_order(); }

  const RangeList& received() const noexcept { return received_; }
  const RangeList& delivered() const noexcept { return delivered_; }

 private:
  // on_delivered's refusal: the coverage's own error, or not every number received.
  static base::Status not_all_received(Range range, const base::Result<Coverage>& received);

  RangeList received_;
  RangeList delivered_;
};

}  // namespace ftmpi::seq

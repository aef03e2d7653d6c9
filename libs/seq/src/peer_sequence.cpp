#include "ftmpi/seq/peer_sequence.hpp"

#include <algorithm>
#include <string>

namespace ftmpi::seq {

base::Result<Range> SendSequence::assign(std::uint64_t bytes) {
  const std::uint64_t count = std::max<std::uint64_t>(bytes, 1);
  // next_byte_ <= kMaxSequence + 1, so this cannot wrap.
  const std::uint64_t remaining = kMaxSequence + 1 - next_byte_;
  if (count > remaining) {
    return base::Status{base::Errc::resource_exhausted, "cannot number " + std::to_string(bytes) +
                                                            " bytes: " + std::to_string(remaining) +
                                                            " sequence numbers left"};
  }
  const Range range{next_byte_, next_byte_ + count - 1};
  next_byte_ += count;
  return range;
}

std::string_view to_string(Arrival arrival) noexcept {
  switch (arrival) {
    case Arrival::fresh: return "fresh";
    case Arrival::duplicate: return "duplicate";
    case Arrival::partial_duplicate: return "partial duplicate";
  }
  return "unknown arrival";
}

base::Result<Received> ReceiveSequence::on_received(Range range) {
  const auto added = received_.record(range.first, range.last);
  if (!added) return added.status();
  if (*added == range.size()) return Received{Arrival::fresh, *added};
  return Received{*added == 0 ? Arrival::duplicate : Arrival::partial_duplicate, *added};
}

base::Result<std::uint64_t> ReceiveSequence::on_delivered(Range range) {
  const auto received = received_.coverage(range.first, range.last);
  if (!received) return received.status();
  if (*received != Coverage::full) {
    return base::Status{base::Errc::invalid_argument,
                        "cannot deliver " + to_string(range) + ": not all of it was received"};
  }
  return delivered_.record(range.first, range.last);
}

}  // namespace ftmpi::seq

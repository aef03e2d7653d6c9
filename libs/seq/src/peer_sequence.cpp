#include "ftmpi/seq/peer_sequence.hpp"

#include <string>

namespace ftmpi::seq {

base::Status SendSequence::exhausted(std::uint64_t bytes) const {
  return base::Status{base::Errc::resource_exhausted, "cannot number " + std::to_string(bytes) + " bytes: " +
                                                          std::to_string(kMaxSequence + 1 - next_byte_) +
                                                          " sequence numbers left"};
}

std::string_view to_string(Arrival arrival) noexcept {
  switch (arrival) {
    case Arrival::fresh: return "fresh";
    case Arrival::duplicate: return "duplicate";
    case Arrival::partial_duplicate: return "partial duplicate";
  }
  return "unknown arrival";
}

base::Status ReceiveSequence::not_all_received(Range range, const base::Result<Coverage>& received) {
  if (!received) return received.status();
  return base::Status{base::Errc::invalid_argument,
                      "cannot deliver " + to_string(range) + ": not all of it was received"};
}

}  // namespace ftmpi::seq

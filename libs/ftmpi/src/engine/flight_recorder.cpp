// The flight recorder's ring and its JSON (flight_recorder.hpp).
#include "flight_recorder.hpp"

#include "ftmpi/base/json.hpp"

namespace ftmpi::engine {

std::string_view to_string(FlightKind kind) noexcept {
  switch (kind) {
    case FlightKind::rail_state: return "rail_state";
    case FlightKind::traffic: return "traffic";
    case FlightKind::inject: return "inject";
    case FlightKind::clear: return "clear";
    case FlightKind::peer_lost: return "peer_lost";
  }
  return "?";
}

void FlightRecorder::record(FlightEvent event) {
  if (capacity_ == 0) return;
  event.seq = ++seq_;
  if (ring_.size() < capacity_) {
    ring_.push_back(std::move(event));
    return;
  }
  ring_[next_] = std::move(event);
  next_ = (next_ + 1) % capacity_;
}

std::vector<const FlightEvent*> FlightRecorder::after(std::uint64_t after) const {
  std::vector<const FlightEvent*> out;
  for (std::size_t i = 0; i < ring_.size(); ++i) {
    const FlightEvent& e = ring_[(next_ + i) % ring_.size()];  // oldest first
    if (e.seq > after) out.push_back(&e);
  }
  return out;
}

std::string flight_json(const FlightEvent& e) {
  base::JsonWriter w;
  const auto us = std::chrono::duration_cast<std::chrono::microseconds>(e.at.time_since_epoch()).count();
  w.begin_object().field("seq", e.seq).field("at_us", static_cast<std::int64_t>(us)).field("kind", to_string(e.kind));
  switch (e.kind) {
    case FlightKind::rail_state:
      w.field("peer", e.peer).field("rail", e.rail).field("state", e.text).field("reason", e.reason);
      break;
    case FlightKind::traffic:
      w.field("peer", e.peer)
          .field("rail", e.rail)
          .field("interval_us",
                 static_cast<std::int64_t>(std::chrono::duration_cast<std::chrono::microseconds>(e.interval).count()))
          .field("bytes_sent", e.bytes_sent)
          .field("bytes_received", e.bytes_received)
          .field("retransmits", e.retransmits)
          .field("timeouts", e.timeouts)
          .field("checksum_failures", e.checksum_failures);
      break;
    case FlightKind::inject:
    case FlightKind::clear:
      if (e.rail == kEveryRail) {
        w.key("rail").null();
      } else {
        w.field("rail", e.rail);
      }
      w.field("spec", e.text);
      break;
    case FlightKind::peer_lost:
      w.field("peer", e.peer).field("reason", e.text);
      break;
  }
  w.end_object();
  return std::move(w).text();
}

}  // namespace ftmpi::engine

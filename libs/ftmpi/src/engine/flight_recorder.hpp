// The flight recorder: a bounded ring of what happened to a rank's rails, for drills and post-mortems
// (docs/ftinject.md, "The timeline").
//
// It keeps the latest engine.flight.events events: rail state changes with their reasons, faults
// injected and cleared, peers lost, and, per engine.flight.interval, each rail's traffic, retransmits,
// timeouts and checksum failures in that interval (only intervals where something moved, so an idle rank
// records nothing). Events are numbered from 1; a tool asks for those after the last number it saw
// (control op `events`). The rank writes the ring with its statistics to a zstd file when it ends
// abnormally, or at MPI_Finalize when engine.flight.write=always.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace ftmpi::engine {

enum class FlightKind : std::uint8_t { rail_state, traffic, inject, clear, peer_lost };
std::string_view to_string(FlightKind kind) noexcept;

struct FlightEvent {
  std::uint64_t seq = 0;
  std::chrono::system_clock::time_point at;
  FlightKind kind = FlightKind::traffic;
  std::uint32_t peer = 0;  // rail_state, traffic, peer_lost
  std::uint32_t rail = 0;  // the path's index (rail k of every rank); kEveryRail for inject/clear of all
  std::string text;        // rail_state: the new state; inject: the SPEC; peer_lost: why
  std::string reason;      // rail_state: why
  // traffic: what moved on the rail to the peer during the interval ending at `at`
  std::chrono::nanoseconds interval{0};
  std::uint64_t bytes_sent = 0;
  std::uint64_t bytes_received = 0;
  std::uint64_t retransmits = 0;
  std::uint64_t timeouts = 0;
  std::uint64_t checksum_failures = 0;
};
inline constexpr std::uint32_t kEveryRail = UINT32_MAX;

class FlightRecorder {
 public:
  explicit FlightRecorder(std::size_t capacity) : capacity_(capacity) { ring_.reserve(capacity); }

  // Numbers the event and keeps it, forgetting the oldest when full (nothing when the capacity is 0).
  void record(FlightEvent event);
  std::uint64_t last_seq() const noexcept { return seq_; }
  std::size_t capacity() const noexcept { return capacity_; }
  // The events numbered above `after`, oldest first.
  std::vector<const FlightEvent*> after(std::uint64_t after) const;

 private:
  std::size_t capacity_;
  std::vector<FlightEvent> ring_;
  std::size_t next_ = 0;  // where the next event goes once the ring is full
  std::uint64_t seq_ = 0;
};

// {"seq", "at_us" (Unix microseconds), "kind", ...the fields of its kind}, one object per event.
std::string flight_json(const FlightEvent& event);

}  // namespace ftmpi::engine

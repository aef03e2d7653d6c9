// The engine's statistics: its counters, each rail's state and counters per peer, and the drivers' own
// counters, as one structured snapshot (EngineCore::stats()). engine.report prints it at finalize, as
// "ftmpi counters:" text lines (tests/fault/check_counters.sh reads them) or as JSON; tests read the
// snapshot itself.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "ftmpi/base/status.hpp"
#include "ftmpi/base/threads.hpp"
#include "ftmpi/path/path.hpp"

namespace ftmpi::engine {

// Counters of frames the engine sent, refused or repaired, over every peer and rail. Count: threads
// holding different peers' locks bump them at once under MPI_THREAD_MULTIPLE (threads.hpp).
struct EngineCounters {
  base::Count frames_received = 0;
  base::Count frames_sent = 0;
  base::Count dropped_malformed = 0;    // decode refused it (truncated, bad header checksum, ...)
  base::Count dropped_wrong_job = 0;
  base::Count dropped_bad_payload = 0;  // payload checksum mismatch
  base::Count dropped_ahead = 0;  // messages match.ahead_window or more past the next expected: resent later
  base::Count refused_single_copy = 0;  // single-copy requests not from the peer's shared memory or pid
  base::Count duplicates = 0;
  base::Count retransmits = 0;
  base::Count acks_sent = 0;
  base::Count nacks_sent = 0;
  base::Count nacks_ignored = 0;  // asked to resend a frame sent less than half a round trip ago
  base::Count credit_rendezvous = 0;  // eager-sized sends that went by rendezvous: out of eager credit
  base::Count credits_sent = 0;       // eager credit granted to peers (CREDIT frames)
  base::Count rails_down = 0;  // rail-to-peer failures detected
  base::Count rails_up = 0;    // failbacks
  base::Count peers_lost = 0;  // peers every rail to which failed: their operations failed
  base::Count single_copy_fallbacks = 0;  // single copies that could not read the sender's memory: piped
  base::Count single_copies_gathered = 0;  // single copies read in one system call with others of their peer
  base::Count split_copies = 0;  // single copies received in two halves, the sender writing the second
  base::Count split_copy_rereads = 0;  // split copies where the receiver moved a half the other side could not
  base::Count frames_by_reference = 0;  // rendezvous frames kept for resending by reference to the send buffer
  base::Count frames_copied_after_send = 0;  // eager frames sent from the send buffer, copied for resending after
  base::Count sends_cancelled = 0;  // our sends the receiver withdrew before matching them (MPI_Cancel)
  base::Count messages_withdrawn = 0;  // peers' messages withdrawn from our matching at their request
  // The longest a suspect rail stayed silent before the peer answered on it (a maximum, not a sum): how
  // close a live peer came to engine.peer.timeout.
  base::Count longest_answered_silence_us = 0;
  base::Count bytes_sent = 0;      // whole frames on every path: what fault windows in traffic count
  base::Count bytes_received = 0;
};

enum class RailState : std::uint8_t {
  up,       // takes new frames
  suspect,  // a frame timed out on it: no new frames, probed until it answers or is declared down
  down,     // failed (an error from the OS, or silence): its frames moved away; probed for failback
  disabled, // taken out by the operator (ftpath disable): its frames moved away; not probed until enabled
};
// Down or disabled: carries nothing, and frames on it move to the other rails.
inline bool out_of_service(RailState state) noexcept {
  return state == RailState::down || state == RailState::disabled;
}
std::string_view to_string(RailState state) noexcept;

// What one rail did for one peer.
struct RailCounters {
  std::uint64_t frames_sent = 0;
  std::uint64_t bytes_sent = 0;
  std::uint64_t frames_received = 0;
  std::uint64_t bytes_received = 0;
  std::uint64_t retransmits = 0;       // frames resent on this rail (timeouts, NACKs, rebinding)
  std::uint64_t timeouts = 0;          // frames sent on this rail that timed out
  std::uint64_t rebound = 0;           // frames moved off this rail when it went down
  std::uint64_t checksum_failures = 0; // frames received on this rail with a bad payload checksum
  std::uint64_t duplicates = 0;        // frames received on this rail whose bytes we already had
  std::uint64_t refused_sends = 0;     // sends and probes the operating system refused (EPERM, ENETUNREACH)
  std::uint64_t probes_sent = 0;
  std::uint64_t probe_replies = 0;
  std::uint64_t state_changes = 0;
};

// A rail's change of state, as an operator reads it: when (wall clock), to what, and why.
struct RailChange {
  std::chrono::system_clock::time_point at;
  RailState state = RailState::up;
  std::string reason;
};
// How many of a rail's latest changes are kept.
inline constexpr std::size_t kRailChangesKept = 16;

struct RailStats {
  std::uint32_t peer = 0;
  std::uint32_t index = 0;  // the path's index: rail k of every rank talks to rail k
  std::string name;
  RailState state = RailState::up;
  std::chrono::nanoseconds state_for{0};  // time in this state
  std::chrono::nanoseconds srtt{0};       // smoothed round trip; 0: no sample yet
  std::chrono::nanoseconds rto{0};
  RailCounters counters;
  std::vector<RailChange> changes;  // the latest, oldest first
};

struct PathStats {
  std::uint32_t index = 0;
  std::string name;
  std::vector<path::PathCounterGroup> groups;  // the driver's own counters (Path::stats())
};

struct EngineStats {
  std::uint32_t rank = 0;
  std::uint32_t size = 0;
  // Integrity switched off where it matters (a checksum or reliability off on a network path): said at
  // start-up, and in every report, so that nobody runs that way without knowing.
  std::vector<std::string> warnings;
  EngineCounters totals;
  std::vector<RailStats> rails;  // by peer, then by rail; the rank itself is left out
  std::vector<PathStats> paths;
};

// How engine.report prints stats() at finalize.
enum class ReportFormat : std::uint8_t { none, text, json };
base::Result<ReportFormat> parse_report_format(std::string_view text);

// "ftmpi counters: <kind> rank=R key=value..." lines: one "engine" line, one "rail" line per peer and
// rail, then each path's groups ("udp", "faults") with its index as rail=I.
std::string report_text(const EngineStats& stats);
// One JSON object on one line: {"rank", "size", "totals": {...}, "rails": [{"peer", "index", "name",
// "state", "state_for_ms", "rtt_us", "rto_us", counters..., "changes": [{"at", "state", "reason"}]}],
// "paths": [{"index", "name", "groups": [{"kind", "name", "counters": {...}}]}]}.
std::string report_json(const EngineStats& stats);
// UTC with milliseconds: "2026-11-25T13:04:05.123Z".
std::string iso8601(std::chrono::system_clock::time_point at);

}  // namespace ftmpi::engine

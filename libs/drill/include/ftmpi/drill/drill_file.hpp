// The drill language (docs/ftinject.md, "Drill files"): plain text, one statement per line, '#' starts a
// comment.
//
//   at WHEN inject SPEC [rail=R] [ranks=L] [for=D]   add a fault (path/fault.hpp's SPEC language); with
//                                                    for=D it ends by itself after D, else at `clear`
//   at WHEN clear [rail=R] [ranks=L]                 remove the faults
//   at WHEN disable rail=R [ranks=L] [for=D]         take a rail out of service (enabled again after D)
//   at WHEN enable rail=R [ranks=L]
//   at WHEN run COMMAND...                           a shell command (/bin/sh -c), e.g. `ip netns exec
//                                                    ftA ip link set vethA1 down`; it must exit 0
//   expect NAME [OP VALUE]                           what must hold at the end (below)
//
// WHEN is a time since the drill began ("0s", "2500ms") or a volume of traffic the job moved since then
// ("64MB"): a volume follows the work's progress whatever the machine's speed. Steps run in the order of
// their lines; a step waits for its WHEN and for the steps before it.
//
// Expectations (OP is =, <, <=, > or >=):
//   exit [= N]               the program's exit status (default 0); a drill that launched the job
//   corruption_detected      every corruption injected into a frame that reached a receiver was detected
//                            (and nothing else refused as corrupt)
//   corrupt_bytes [= N]      bytes the program found corrupt (default 0), from the line it prints:
//                            "ftinject: corrupt_bytes=N"
//   stall < D                the longest time the application saw no progress: from the program's
//                            "ftinject: longest_stall_us=N" lines, else from the drill's polls of the
//                            job's traffic (their interval is the resolution)
//   failback < D             every rail that left service during the drill was back in service on every
//                            rank at the end, each within D of the step that gave it back
//   COUNTER OP N             an engine counter summed over the ranks, counted from the drill's start
//                            (retransmits, rails_down, peers_lost, ...: the `totals` of ftpath show
//                            --json), or injected_KIND for what the fault layers did (injected_corrupted,
//                            injected_dropped, injected_blackholed, ...)
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ftmpi/base/status.hpp"

namespace ftmpi::drill {

// When a step runs: a time, or a volume of traffic, since the drill began.
struct When {
  std::chrono::nanoseconds time{0};
  std::optional<std::uint64_t> bytes;
};

enum class Action : std::uint8_t { inject, clear, disable, enable, run };
std::string_view to_string(Action action) noexcept;

struct DrillStep {
  std::size_t line = 0;
  When when;
  Action action = Action::inject;
  std::string spec;   // inject: the SPEC as given (for= included when given as a key of the step)
  std::string rail;   // empty: every rail (inject, clear)
  std::string ranks;  // empty: every rank
  std::optional<std::chrono::nanoseconds> lasts;  // inject: the SPEC's for=; disable: for=
  std::string command;  // run
  std::string text;     // the statement after "at WHEN "
};

enum class Compare : std::uint8_t { eq, lt, le, gt, ge };
std::string_view to_string(Compare op) noexcept;
bool holds(Compare op, double measured, double limit) noexcept;

struct DrillExpectation {
  std::size_t line = 0;
  std::string name;
  Compare op = Compare::eq;
  double value = 0;  // a count, or for stall and failback a duration in seconds
  std::string text;  // "stall < 2s"
};

struct Drill {
  std::vector<DrillStep> steps;
  std::vector<DrillExpectation> expectations;
};

// Errors start with "<origin> line N: " and say what is wrong.
base::Result<Drill> parse_drill(std::string_view text, std::string_view origin);

}  // namespace ftmpi::drill

// A drill's timeline (docs/ftinject.md, "The timeline"): what the drill did (steps), how much each rail
// carried over time (samples, from the drill's statistics polls), what the ranks' flight recorders noted
// (events: rail state changes, injections, traffic, retransmits, checksum failures, lost peers), and the
// verdict. Stored as JSON lines compressed with zstd; printed as text; drawn as SVG.
//
// Times are microseconds since the Unix epoch, as the ranks' flight recorders write them (the hosts'
// clocks: on several hosts, as well synchronised as they are).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ftmpi/base/status.hpp"

namespace ftmpi::drill {

struct TimelineHeader {
  std::string drill;    // the drill file's name
  std::string job;      // the job's id
  std::string command;  // the program and its arguments
  std::int64_t started_us = 0;
  std::int64_t ended_us = 0;
  std::vector<std::string> rails;  // rail names by index
};

// One thing the drill did: inject (for a time, or until cleared), clear, disable, enable, run.
struct Step {
  std::int64_t at_us = 0;
  std::int64_t until_us = 0;  // when its effect ends (inject for D; disable until its enable); 0: instant
  std::string action;         // "inject", "clear", "disable", "enable", "run"
  std::string text;           // the step as the drill file gives it
  std::optional<std::uint32_t> rail;  // the rail it acts on, when one
  bool ok = true;             // the job (or the command) accepted it
  std::string outcome;        // what it answered, or why it failed
};

// Bytes carried on one rail by the whole job (every rank's bytes sent on it), cumulative, when polled.
struct Sample {
  std::int64_t at_us = 0;
  std::uint32_t rail = 0;
  std::uint64_t bytes = 0;
};

// One event of a rank's flight recorder (libs/ftmpi/src/engine/flight_recorder.hpp).
struct Event {
  std::uint32_t rank = 0;
  std::uint64_t seq = 0;
  std::int64_t at_us = 0;
  std::string kind;  // rail_state, traffic, inject, clear, peer_lost
  std::uint32_t peer = 0;
  std::optional<std::uint32_t> rail;
  std::string state;   // rail_state: up, suspect, down, disabled
  std::string reason;  // rail_state, peer_lost
  std::string spec;    // inject
  std::int64_t interval_us = 0;  // traffic: over this interval ending at at_us
  std::uint64_t bytes_sent = 0;
  std::uint64_t bytes_received = 0;
  std::uint64_t retransmits = 0;
  std::uint64_t timeouts = 0;
  std::uint64_t checksum_failures = 0;
};

// One expectation of the drill and how it came out.
struct Check {
  std::string name;      // as the drill file gives it: "exit", "corruption_detected", "stall", ...
  std::string measured;  // the measured value, as text ("0", "1.2 s", "412 of 412")
  std::string limit;     // what was expected ("= 0", "< 2 s")
  bool pass = false;
  std::string note;      // how it was measured, or why it could not be
};

struct Timeline {
  TimelineHeader header;
  std::vector<Step> steps;
  std::vector<Sample> samples;
  std::vector<Event> events;
  std::vector<Check> verdict;
};

// One JSON object per line: {"type": "header"|"step"|"sample"|"event"|"check", ...the fields}.
std::string to_json_lines(const Timeline& timeline);
// Errors name the line and what is wrong with it.
base::Result<Timeline> from_json_lines(std::string_view text);
// The JSON lines compressed with zstd, written whole (base::write_file); read back.
base::Status write_timeline(const std::string& path, const Timeline& timeline);
base::Result<Timeline> read_timeline(const std::string& path);
// A flight recorder event as the engine writes it (flight_json) for a rank.
base::Result<Event> event_from_json(std::string_view json, std::uint32_t rank);

// Everything in time order as lines an operator reads: "+2.315 s  rank 1  rail 1 (udp veth1 ...) to
// rank 0: down (no answer for 51 ms)"; traffic events are summed into one line per second and rail.
std::string timeline_text(const Timeline& timeline);
// A picture: throughput per rail over time (one line each), injection windows and disabled periods shaded
// behind, rail state changes marked on the time axis; a legend and the verdict below. Valid SVG 1.1.
std::string timeline_svg(const Timeline& timeline);

}  // namespace ftmpi::drill

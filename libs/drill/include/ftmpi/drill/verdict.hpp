// A drill's verdict (docs/ftinject.md, "Expectations"): each expectation of the drill file measured
// against what the drill collected, as Checks (timeline.hpp) with the measured value, the limit, pass or
// fail, and how it was measured.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "ftmpi/base/json_value.hpp"
#include "ftmpi/drill/drill_file.hpp"
#include "ftmpi/drill/timeline.hpp"

namespace ftmpi::drill {

// What the drill saw of the job.
struct Observed {
  // Each rank's statistics (the control plane's `stats` reply, engine stats.hpp) when the drill began and
  // when it ended (the flight recorder's file written at MPI_Finalize, else the last poll). By rank;
  // a null value where none was had.
  std::vector<base::JsonValue> start;
  std::vector<base::JsonValue> end;
  std::optional<int> exit_status;               // the launched program's
  std::optional<std::uint64_t> corrupt_bytes;   // summed over "ftinject: corrupt_bytes=N" lines
  std::optional<std::int64_t> program_stall_us; // the largest "ftinject: longest_stall_us=N"
  std::int64_t polled_stall_us = 0;             // the longest run of polls in which no byte moved
  std::int64_t poll_interval_us = 0;
  bool launched = false;
};

// The engine counters and fault-layer counters an expectation may name (for the drill's start-up check).
bool is_known_counter(const base::JsonValue& stats, std::string_view name);

std::vector<Check> judge(const Drill& drill, const Timeline& timeline, const Observed& observed);

}  // namespace ftmpi::drill

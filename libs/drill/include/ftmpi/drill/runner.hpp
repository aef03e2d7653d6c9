// Runs a drill (docs/ftinject.md): launches the job (ftrun ARGS PROGRAM, with its ranks told to keep
// their flight recorders for the drill) or attaches to a running one, then steps through the drill file
// over the control plane while it polls the job's statistics, and judges the expectations at the end.
//
// Time zero is when every rank first answers. Each poll (RunOptions::poll_interval) notes each rail's
// traffic (the timeline's samples) and the job's bytes (steps whose WHEN is a volume, the polled stall);
// the ranks' flight recorders are read every second and at the end. Faults the drill injected and rails
// it disabled are cleared and enabled again when it ends early, and at its end when it attached.
#pragma once

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "ftmpi/base/status.hpp"
#include "ftmpi/drill/drill_file.hpp"
#include "ftmpi/drill/timeline.hpp"
#include "ftmpi/drill/verdict.hpp"

namespace ftmpi::drill {

struct RunOptions {
  std::vector<std::string> command;  // launch: ftrun and its arguments; empty: attach to `job`
  std::string job;                   // attach: a job id or a unique prefix ("" : the user's only job)
  std::string done_file;             // created once the last step's effect has ended (bulk_transfer -u)
  std::string drill_name;
  std::chrono::milliseconds poll_interval{200};
  std::chrono::milliseconds settle{2000};  // attach: how long the job runs on after the last step
  std::chrono::seconds start_timeout{60};  // launch: until every rank answers
  // Called with a line about the drill's progress (step, elapsed, throughput per rail) at each poll.
  std::function<void(const std::string&)> progress;
  // Called with each line the launched program prints on stdout (the drill reads and passes them on).
  std::function<void(const std::string&)> output;
};

// Why a drill ended before its steps were all run.
enum class DrillEnd : std::uint8_t {
  completed,     // every step ran; the verdict says the rest
  job_ended,     // the job ended before the last step
  step_refused,  // the job refused a step (unknown rail, a fault that would reach the application, ...)
  step_failed,   // a `run` command failed, or the job did not answer a step
  no_job,        // no job to attach to, or the launched one never came up
};

struct RunResult {
  Timeline timeline;
  Observed observed;
  DrillEnd end = DrillEnd::completed;
  base::Errc refusal = base::Errc::ok;  // step_refused: not_found (unknown rail), unsupported, invalid_argument
  std::string message;                  // why it ended early
  bool passed = false;                  // completed and every expectation held
};

// Errors: the command cannot be started. Everything else is in the result.
base::Result<RunResult> run_drill(const Drill& drill, const RunOptions& options);

}  // namespace ftmpi::drill

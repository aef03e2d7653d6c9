// Running the kernels as a job: under ftrun for ftmpi, under another MPI's launcher for a peer.
#pragma once

#include <string>
#include <vector>

#include "ftmpi/base/status.hpp"
#include "ftmpi/bench/peers.hpp"
#include "ftmpi/bench/results.hpp"

namespace ftmpi::bench {

// What ftbench-mpi is asked to measure.
struct KernelArgs {
  std::string kernels = "lat,bw";
  std::string sizes = "0:4m";
  int reps = 5;
  double scale = 1.0;
  int window = 64;
  double max_time = 1.0;                  // seconds per repetition at most; 0: no limit
  std::vector<std::string> argv() const;  // "--json --kernels ... --max-time S"
  // Seconds a healthy run of these kernels stays well inside: each figure's repetitions and warm-up at
  // most max_time each, twice over, and 30 s to start; 0 (no bound) when max_time is 0. Invalid sizes or
  // kernels count as one figure: ftbench-mpi refuses them at once anyway.
  int time_limit_s() const;
};

// An ftmpi job as ftrun is told to start it.
struct JobSpec {
  int ranks = 2;
  int timeout_s = 0;    // ftrun --timeout; 0: none
  std::string bind_to;  // ftrun --bind-to; empty: ftrun's default
  std::string paths, rails;
  std::string hosts;         // ftrun --host; empty: every rank on this host
  std::string launch_agent;  // ftrun --launch-agent; empty: ftrun's default (ssh)
  std::vector<std::string> params;  // K=V
};

// Whether the job may wait for ever on a lost frame: reliability turned off (its last engine.reliability
// parameter, else FTMPI_ENGINE_RELIABILITY) where frames cross a network path (--paths, else its last
// path.kinds parameter, else FTMPI_PATH_KINDS, other than shm alone; or ranks on other hosts). A dropped
// datagram is then never resent.
bool may_lose_frames(const JobSpec& job);
// The ftrun --timeout for `job`: `asked` (ftbench --time-limit) when given, else `if_frames_may_be_lost`
// when may_lose_frames(job), else 0 (none).
int job_time_limit(const JobSpec& job, int asked, int if_frames_may_be_lost);

struct RunOutcome {
  int status = 0;  // the launcher's exit status (124: ftrun's --timeout was reached)
  int time_limit_s = 0;  // the ftrun --timeout it ran under; 0: none
  bool may_lose = false; // may_lose_frames(its job): a time limit reached is most likely a lost frame
  std::string library;
  std::vector<Result> results;
  std::vector<RailTraffic> rails;  // ftmpi jobs only
  std::string diagnostics;         // what the job wrote on stderr, statistics left out
  bool ok() const { return status == 0 && !results.empty(); }
  // Why it failed: invalid_argument with what the job said when it refused its arguments (status 2),
  // else io_error, "WHAT exited with status N; it said: <stderr>".
  base::Status failure(const std::string& what) const;
};

// ftbench's exit status for an error: 2 for what the user asked wrongly (bad arguments, a peer MPI that
// is not installed), 1 for anything else.
int exit_status_of(const base::Status& status);

// A program installed (or built) in the same directory as the running tool, else the bare name (PATH).
std::string program_beside_me(const std::string& name);

// `ftrun -n R ... ftbench-mpi --json ...` with engine.report=json, so that each rail's traffic is known.
RunOutcome run_ftmpi(const JobSpec& job, const KernelArgs& kernels);
// A peer MPI's job: its launch (peer_launch) with the kernels' arguments after its binary.
RunOutcome run_peer(const PeerLaunch& launch, const KernelArgs& kernels);

}  // namespace ftmpi::bench

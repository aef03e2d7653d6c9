// Running a job: what ftrun does between parsing its command line and exiting.
//
// run_job listens for the ranks (Server), forks and execs those on this host and starts those of each
// other host through one agent per host (ftrun-host, host_agent.hpp), itself started by a launch agent
// called like ssh (remote.hpp) or by one Slurm step; every rank gets the environment contract (job.hpp).
// It forwards their output line by line, ftrun's stdin to rank 0 and ftrun's SIGINT/SIGTERM/SIGHUP to
// every rank (through its host's agent for a remote one), and takes the whole job down when one rank
// fails. The exit-status rules are in docs/ftrun.md.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "ftmpi/base/params.hpp"
#include "ftmpi/base/status.hpp"

namespace ftmpi::rte {

enum class BindPolicy : std::uint8_t {
  none,  // the kernel places ranks (right when ranks outnumber cores)
  core,  // rank i runs on core (i mod cores) only
};

base::Result<BindPolicy> parse_bind_policy(std::string_view text);
std::string_view to_string(BindPolicy policy) noexcept;

// Finds `name` as ftrun will execute it: a name containing '/' as given, otherwise the first match in the
// colon-separated `path_env` (PATH). not_found: no such file; invalid_argument: found, but not an
// executable regular file.
base::Result<std::string> find_program(std::string_view name, std::string_view path_env);

// The exit status of a job that ran out of time, as timeout(1).
inline constexpr int kExitTimedOut = 124;
// The exit status when a rank broke the protocol (left without finalize, or left others in a fence).
inline constexpr int kExitProtocolFailure = 1;

struct LaunchSpec {
  std::string program;            // path to execute, from find_program
  std::vector<std::string> args;  // argv[1...]
  std::uint32_t size = 1;         // ranks, 1..kMaxJobSize
  BindPolicy bind = BindPolicy::none;
  bool tag_output = false;                 // prefix every forwarded line with "[rank] "
  std::chrono::nanoseconds time_limit{0};  // 0: none
  // The ranks' environment before the contract's variables are added ("NAME=value"): normally ftrun's
  // own. Variables of the contract found here are replaced.
  std::vector<std::string> environment;
  // The host of each rank (`size` names, from place_ranks), or empty: every rank on this host. Ranks on
  // a host is_local_host calls this one are forked by ftrun; the others are started through the agent.
  std::vector<std::string> hosts;
  // The launch agent's words, its program looked up already (find_program): {"/usr/bin/ssh"}. Needed
  // only when some rank is on another host.
  std::vector<std::string> launch_agent;
  // Starts the per-host agents (ftrun-host) of every other host with ONE command instead of one launch
  // agent per host: the words of a Slurm step launcher, its program looked up already ({"/usr/bin/srun"}),
  // to which run_job adds the node list, one task per node, --overlap, --kill-on-bad-exit=1, --mpi=none
  // and the agent; the secret goes in the step's environment, and each agent takes its host from
  // SLURMD_NODENAME. Empty: one launch_agent per other host.
  std::vector<std::string> host_step;
  // ftrun-host, the per-host agent (host_agent.hpp), by the absolute path it has on every host (ftrun
  // finds it beside itself). Needed only when some rank is on another host.
  std::string host_agent;
  // Where ranks on other hosts start, if that directory exists there (normally ftrun's own).
  std::string working_directory;
};

struct JobOutcome {
  int exit_code = 0;
  // One line saying why the job failed ("rank 2 (pid 1234) was killed by signal 9 (Killed)"); empty
  // when every rank exited 0.
  std::string summary;
};

// Runs the job to its end. `params` must hold base's and rte's tables; every overridden parameter is
// passed to the ranks as FTMPI_<NAME>. An error means the job could not be started (nothing is left
// running).
base::Result<JobOutcome> run_job(const LaunchSpec& spec, const base::ParamSet& params);

}  // namespace ftmpi::rte

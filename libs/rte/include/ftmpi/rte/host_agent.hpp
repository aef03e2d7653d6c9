// ftrun-host: the per-host agent through which ftrun starts the ranks of another host (docs/ftrun.md,
// "Hosts"). One per host and job. It connects back to ftrun over one TCP connection (agent_protocol.hpp),
// authenticates with the job's secret and its host name, receives the ranks to start there, forks them,
// and relays over that one connection each rank's control connection (the ranks connect to the agent's
// listener on the host's loopback), stdout and stderr, ftrun's stdin for rank 0, ftrun's signals, and
// each rank's wait status.
//
// When the link to ftrun goes away (ftrun ended the job, or died), the agent ends its ranks (SIGTERM,
// then SIGKILL after rte.kill_grace), removes the job's /dev/shm segments on its host and exits. It dies
// with its parent (PR_SET_PDEATHSIG), and its ranks with it.
#pragma once

#include <chrono>
#include <string>

#include "ftmpi/base/params.hpp"
#include "ftmpi/base/status.hpp"
#include "ftmpi/rte/job.hpp"

namespace ftmpi::rte {

// Where the agent learns its host when it is not given one: Slurm sets it for every task of a step.
inline constexpr std::string_view kEnvSlurmNodeName = "SLURMD_NODENAME";

struct HostAgentOptions {
  std::string host;              // as ftrun names it (--host, or SLURMD_NODENAME)
  std::string launcher_address;  // ftrun's agent listener, an FTMPI_RTE_ADDR list
  Secret secret{};
  std::chrono::nanoseconds connect_timeout{};
  std::chrono::nanoseconds kill_grace{};
};

// The options from an environment block (FTMPI_RTE_ADDR, FTMPI_RTE_SECRET, SLURMD_NODENAME when `host`
// is empty) and `params` (rte's table loaded): an error names what is missing or malformed.
base::Result<HostAgentOptions> host_agent_options(char** envp, std::string host, const base::ParamSet& params);

// Runs the agent until ftrun closes the link and its ranks are gone. Returns its exit status: 0, or 1
// when it could not reach ftrun or was refused (it says why on stderr).
int run_host_agent(const HostAgentOptions& options);

}  // namespace ftmpi::rte

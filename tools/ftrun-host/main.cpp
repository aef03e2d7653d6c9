// ftrun-host: ftrun's per-host agent (docs/ftrun.md, "Hosts"). ftrun starts one on every other host of a
// job, by the path it has beside ftrun itself; it is not meant to be run by hand. A thin main over
// rte::run_host_agent.
#include <CLI/CLI.hpp>
#include <iostream>
#include <string>

#include "ftmpi/base/log.hpp"
#include "ftmpi/base/params.hpp"
#include "ftmpi/params/catalogue.hpp"
#include "ftmpi/rte/host_agent.hpp"
#include "ftmpi/rte/job.hpp"

extern char** environ;

namespace {

constexpr int kExitUsage = 2;

}  // namespace

int main(int argc, char** argv) {
  namespace base = ftmpi::base;
  namespace rte = ftmpi::rte;
  std::string host;
  CLI::App app(
      "ftrun's per-host agent: started by ftrun (through its launch agent, or one srun step) on each other "
      "host of a job, it starts that host's ranks and relays them to ftrun over one connection. Reads "
      "FTMPI_RTE_ADDR and FTMPI_RTE_SECRET from its environment.",
      "ftrun-host");
  app.add_option("--host", host, "This host as ftrun names it (default: $SLURMD_NODENAME)");
  app.set_version_flag("--version", std::string("ftrun-host ") + FTMPI_VERSION);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  // The ranks' parameters reach the agent too (ftrun passes every one it was given): all are known here.
  base::ParamSet params;
  for (auto table : ftmpi::params::all_param_tables()) {
    if (base::Status s = params.add_table(table); !s) {
      std::cerr << "ftrun-host: error: " << s.message() << "\n";
      return kExitUsage;
    }
  }
  if (base::Status s = params.load_environment(environ, rte::job_environment_names()); !s) {
    std::cerr << "ftrun-host: error: " << s.message() << "\n";
    return kExitUsage;
  }
  if (base::Status s = base::init_logging("ftrun-host", params.get_string(base::kLogLevel)); !s) {
    std::cerr << "ftrun-host: error: " << s.message() << "\n";
    return kExitUsage;
  }
  auto options = rte::host_agent_options(environ, host, params);
  if (!options) {
    std::cerr << "ftrun-host: error: " << options.status().message() << "\n";
    return kExitUsage;
  }
  return rte::run_host_agent(*options);
}

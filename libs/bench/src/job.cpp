#include "ftmpi/bench/job.hpp"

#include <filesystem>

#include "ftmpi/base/process.hpp"

namespace ftmpi::bench {

namespace fs = std::filesystem;

std::vector<std::string> KernelArgs::argv() const {
  return {"--json", "--kernels", kernels, "--sizes", sizes, "--reps", std::to_string(reps),
          "--scale", std::to_string(scale), "--window", std::to_string(window), "--max-time", std::to_string(max_time)};
}

base::Status RunOutcome::failure(const std::string& what) const {
  // A job that refused its arguments (status 2, ftbench-mpi's or ftrun's usage errors) said what is wrong.
  if (status == 2 && !diagnostics.empty()) {
    std::string said = diagnostics;
    while (!said.empty() && said.back() == '\n') said.pop_back();
    return base::Status(base::Errc::invalid_argument, said);
  }
  std::string text = what + " exited with status " + std::to_string(status);
  if (status == 0 && results.empty()) text = what + " printed no result";
  if (!diagnostics.empty()) text += "; it said:\n" + diagnostics;
  while (!text.empty() && text.back() == '\n') text.pop_back();
  return base::Status(base::Errc::io_error, text);
}

int exit_status_of(const base::Status& status) {
  return status.code() == base::Errc::invalid_argument || status.code() == base::Errc::not_found ? 2 : 1;
}

std::string program_beside_me(const std::string& name) {
  std::error_code ec;
  const fs::path self = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    const fs::path there = self.parent_path() / name;
    if (fs::exists(there, ec)) return there.string();
  }
  return name;
}

namespace {

RunOutcome run(const std::vector<std::string>& command, const std::vector<std::string>& extra_env, bool statistics) {
  RunOutcome outcome;
  auto captured = base::run_captured(command, extra_env);
  if (!captured) {
    outcome.status = 127;
    outcome.diagnostics = captured.status().message();
    return outcome;
  }
  outcome.status = captured->status;
  KernelOutput kernels = parse_kernel_lines(captured->out);
  outcome.library = std::move(kernels.library);
  outcome.results = std::move(kernels.results);
  if (statistics) {
    outcome.rails = parse_rail_traffic(captured->err, &outcome.diagnostics);
  } else {
    outcome.diagnostics = std::move(captured->err);
  }
  return outcome;
}

}  // namespace

RunOutcome run_ftmpi(const JobSpec& job, const KernelArgs& kernels) {
  std::vector<std::string> command{program_beside_me("ftrun"), "-n", std::to_string(job.ranks)};
  if (job.timeout_s > 0) command.insert(command.end(), {"--timeout", std::to_string(job.timeout_s)});
  if (!job.bind_to.empty()) command.insert(command.end(), {"--bind-to", job.bind_to});
  if (!job.paths.empty()) command.insert(command.end(), {"--paths", job.paths});
  if (!job.rails.empty()) command.insert(command.end(), {"--rails", job.rails});
  if (!job.hosts.empty()) command.insert(command.end(), {"--host", job.hosts});
  if (!job.launch_agent.empty()) command.insert(command.end(), {"--launch-agent", job.launch_agent});
  for (const std::string& p : job.params) command.insert(command.end(), {"--param", p});
  command.insert(command.end(), {"--param", "engine.report=json"});  // each rail's traffic, at MPI_Finalize
  command.push_back(program_beside_me("ftbench-mpi"));
  for (const std::string& a : kernels.argv()) command.push_back(a);
  return run(command, {}, true);
}

RunOutcome run_peer(const PeerLaunch& launch, const KernelArgs& kernels) {
  std::vector<std::string> command = launch.command;
  for (const std::string& a : kernels.argv()) command.push_back(a);
  return run(command, launch.env, false);
}

}  // namespace ftmpi::bench

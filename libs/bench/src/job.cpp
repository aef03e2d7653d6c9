#include "ftmpi/bench/job.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <string_view>

#include "ftmpi/base/params.hpp"
#include "ftmpi/base/process.hpp"

namespace ftmpi::bench {

namespace fs = std::filesystem;

std::vector<std::string> KernelArgs::argv() const {
  return {"--json", "--kernels", kernels, "--sizes", sizes, "--reps", std::to_string(reps),
          "--scale", std::to_string(scale), "--window", std::to_string(window), "--max-time", std::to_string(max_time)};
}

namespace {

// How many items a comma-separated list holds (an empty one counts as one).
std::size_t items_in(std::string_view list) { return 1 + static_cast<std::size_t>(std::ranges::count(list, ',')); }

// How many sizes ftbench-mpi measures for --sizes (A:B: 0 if A is 0, then the powers of two from A to B).
std::size_t sizes_in(std::string_view sizes) {
  const std::size_t colon = sizes.find(':');
  if (colon == std::string_view::npos) return items_in(sizes);
  const auto lo = base::parse_size(sizes.substr(0, colon));
  const auto hi = base::parse_size(sizes.substr(colon + 1));
  if (!lo || !hi || *hi < *lo) return 1;
  std::size_t n = *lo == 0 ? 1 : 0;
  for (std::uint64_t s = 1; s <= *hi; s *= 2) n += s >= *lo ? 1 : 0;
  return std::max<std::size_t>(n, 1);
}

}  // namespace

int KernelArgs::time_limit_s() const {
  if (max_time <= 0) return 0;
  const double figures = static_cast<double>(items_in(kernels) * sizes_in(sizes));
  const double seconds = 30.0 + 2.0 * figures * (std::max(reps, 1) + 1) * max_time;
  return static_cast<int>(std::min(std::ceil(seconds), 1e6));
}

namespace {

// A parameter as the job's ranks get it: its last `--param`, else the environment's FTMPI_ form, else "".
std::string_view parameter(const JobSpec& job, std::string_view name, const char* env_name) {
  std::string_view value;
  if (const char* env = std::getenv(env_name)) value = env;
  for (const std::string& p : job.params) {
    const std::string_view kv(p);
    if (kv.size() > name.size() && kv.starts_with(name) && kv[name.size()] == '=') value = kv.substr(name.size() + 1);
  }
  return value;
}

}  // namespace

bool may_lose_frames(const JobSpec& job) {
  if (parameter(job, "engine.reliability", "FTMPI_ENGINE_RELIABILITY") != "off") return false;
  // ftrun's --paths wins over a path.kinds parameter (it is applied after them).
  const std::string_view paths = !job.paths.empty() ? std::string_view(job.paths)
                                                    : parameter(job, "path.kinds", "FTMPI_PATH_KINDS");
  return !job.hosts.empty() || (!paths.empty() && paths != "shm");
}

int job_time_limit(const JobSpec& job, int asked, int if_frames_may_be_lost) {
  if (asked > 0) return asked;
  return may_lose_frames(job) ? if_frames_may_be_lost : 0;
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
  if (status == 124 && time_limit_s > 0) {
    text = what + " did not finish within its time limit of " + std::to_string(time_limit_s) + " s" +
           (may_lose ? ": with engine.reliability=off a frame the network or the kernel drops is never resent, and "
                       "the job waits for it for ever; leave reliability on, or give it longer with --time-limit"
                     : "; give it longer with --time-limit");
  }
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
  RunOutcome outcome = run(command, {}, true);
  outcome.time_limit_s = job.timeout_s;
  outcome.may_lose = may_lose_frames(job);
  return outcome;
}

RunOutcome run_peer(const PeerLaunch& launch, const KernelArgs& kernels) {
  std::vector<std::string> command = launch.command;
  for (const std::string& a : kernels.argv()) command.push_back(a);
  return run(command, launch.env, false);
}

}  // namespace ftmpi::bench

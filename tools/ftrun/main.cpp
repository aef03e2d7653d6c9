// ftrun: starts an ftmpi job on this host or across hosts. Parses the command line, then hands over to
// rte::run_job; every error is reported here, once, as "ftrun: error: ...".
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "ftmpi/params/catalogue.hpp"
#include "ftmpi/params/engine_params.hpp"
#include "ftmpi/base/log.hpp"
#include "ftmpi/base/params.hpp"
#include "ftmpi/path/params.hpp"
#include "ftmpi/path/registry.hpp"
#include "ftmpi/rte/hosts.hpp"
#include "ftmpi/rte/job.hpp"
#include "ftmpi/rte/launcher.hpp"
#include "ftmpi/rte/params.hpp"
#include "ftmpi/rte/remote.hpp"
#include "ftmpi/rte/slurm_allocation.hpp"

extern char** environ;

namespace {

namespace base = ftmpi::base;
namespace rte = ftmpi::rte;

constexpr int kExitUsage = 2;
constexpr int kExitLaunchFailed = 125;  // as timeout(1) for its own failures
constexpr int kExitNotExecutable = 126;
constexpr int kExitNotFound = 127;
constexpr const char* kDefaultPath = "/usr/local/bin:/usr/bin:/bin";
constexpr double kMaxTimeoutSeconds = 1e9;  // ~31 years; keeps the conversion to nanoseconds in range

constexpr const char* kUsage = R"(Usage: ftrun -n N [options] [--] program [args...]

Starts N copies of program as the ranks of one ftmpi job, on this host, on the hosts given with
--host/--hostfile (through a launch agent called like ssh), or, inside a Slurm allocation and without
those, on the allocation's nodes (through srun): wires them up, forwards their output (and
ftrun's stdin to rank 0), forwards SIGINT, SIGTERM and SIGHUP to every rank, and terminates the whole
job as soon as one rank fails. Options end at the program name (or at "--").
)";

constexpr const char* kFooter = R"(Examples:
  ftrun -n 4 ./ring
      four ranks of ./ring
  ftrun -np 8 --bind-to core --tag-output ./bench --size 1k
      eight ranks, rank i pinned to core (i mod cores), each output line prefixed with "[i] ";
      leave binding off (none) when ranks outnumber cores and share them
  ftrun -n 2 --timeout 60 --param rte.kill_grace=5s -- ./solver --input data.txt
      give up after 60 s; ranks get 5 s between SIGTERM and SIGKILL
  ftrun -n 8 --host node1:4,node2:4 ./ring
      ranks 0-3 on node1, 4-7 on node2, started by one agent per host (ftrun-host, run with
      "ssh node2 <command>"; node1 too, unless it is this host); the program and ftrun-host must be
      at the same paths on every host
  ftrun -n 4 --hostfile hosts.txt --launch-agent "ssh -p 2222" --paths udp --rails r1,r2 ./bench
      hosts.txt has lines "node1 slots=2"; ranks talk over UDP on rails r1 and r2 only
  ftrun -n 2 --fault "drop=0.01,rail=1" --fault-plan faults.txt ./ring
      inject faults into the ranks' paths (the SPEC syntax is in docs/ftrun.md)
  salloc -n 3 ftrun ./ring
      inside a Slurm allocation: its nodes and tasks are the hosts and slots, -n defaults to its tasks

Exit status:
  0      every rank exited with status 0
  N      the first failure: a rank's exit status N, or the error code a rank passed to MPI_Abort
         (taken modulo 256; 1 if that is 0)
  128+S  a rank was killed by signal S, or ftrun received signal S (SIGINT, SIGTERM, SIGHUP)
  1      a rank exited without finalize, or left the others waiting in a fence
  2      the command line (or a hostfile, or the Slurm allocation's variables) is wrong
  124    the job ran longer than --timeout
  125    ftrun could not start the job
  126    the program (or the launch agent, or ftrun-host) is not executable
  127    the program (or the launch agent, or ftrun-host) was not found
  255    a launch agent failed to start another host's agent (as ssh: unknown or unreachable host),
         or a host was lost (its agent's connection dropped or its launch process exited)

Environment: every FTMPI_<PARAM> variable sets a parameter, as --param does.
See docs/ftrun.md for what ranks receive and how failures are reported.)";

// Every parameter of the job, so that --param and --help-params cover the ranks' libraries too.
base::Status gather_params(base::ParamSet& params) {
  for (auto table : ftmpi::params::all_param_tables()) {
    if (base::Status s = params.add_table(table); !s) return s;
  }
  return {};
}

// Usage first, then what ftrun does, as mpirun's help reads (CLI11 puts the description first).
class HelpFormatter : public CLI::Formatter {
 public:
  std::string make_description(const CLI::App*) const override { return kUsage; }
  std::string make_usage(const CLI::App*, std::string) const override { return ""; }
};

// --paths: its help and value type name from the path driver registry.
std::string paths_help() {
  std::string help = "Path kinds the ranks may use, comma-separated (sets path.kinds):";
  for (const ftmpi::path::Driver* d : ftmpi::path::drivers()) {
    help += "\n  " + std::string(d->kind()) + ": " + std::string(d->summary());
  }
  return help;
}
std::string kinds_type_name() {
  std::string name;
  for (const ftmpi::path::Driver* d : ftmpi::path::drivers()) name += (name.empty() ? "" : ",") + std::string(d->kind());
  return name;
}

struct CommandLine {
  std::optional<long long> ranks;
  std::string bind_to = "none";
  bool tag_output = false;
  double timeout_s = 0;
  std::vector<std::string> params;
  bool help_params = false;
  std::vector<std::string> hosts;  // --host, each a list
  std::optional<std::string> hostfile;
  bool oversubscribe = false;
  std::optional<std::string> launch_agent;  // default: ssh
  std::optional<std::string> paths;
  std::optional<std::string> rails;
  std::vector<std::string> faults;
  std::optional<std::string> fault_plan;
  std::vector<std::string> program_and_args;
};

struct UsageError {
  std::string message;
};

// Parses argv. Returns std::nullopt when --help or --version was answered.
std::optional<CommandLine> parse(int argc, char** argv) {
  CommandLine cl;
  CLI::App app("", "ftrun");
  app.formatter(std::make_shared<HelpFormatter>());
  app.footer(kFooter);
  app.set_help_flag("-h,--help", "Print this help and exit");
  app.set_version_flag("--version", std::string("ftrun (ftmpi) ") + FTMPI_VERSION,
                       "Print the version and exit");
  app.add_option("-n,--np", cl.ranks,
                 "Number of ranks (-np N works too); required, except with hosts or in a Slurm allocation: "
                 "their slots (the allocation's tasks)")
      ->type_name("N");
  app.add_option("--bind-to", cl.bind_to, "Bind rank i to core (i mod cores), or not (default: none)")
      ->type_name("core|none");
  app.add_flag("--tag-output", cl.tag_output, "Prefix every line a rank prints with \"[rank] \"");
  app.add_option("--timeout", cl.timeout_s, "Terminate the job after S seconds (exit status 124)")
      ->type_name("S");
  app.add_option("--param", cl.params, "Set a runtime parameter for ftrun and every rank (repeatable)")
      ->type_name("NAME=VALUE")
      ->allow_extra_args(false);
  app.add_flag("--help-params", cl.help_params, "List every runtime parameter and exit");
  app.add_option("-H,--host", cl.hosts,
                 "Hosts to run on, each with N slots (default 1); a host listed again adds slots")
      ->type_name("H[:N],...")
      ->allow_extra_args(false);
  app.add_option("--hostfile", cl.hostfile, "Hosts to run on, one per line: \"host [slots=N]\", # comments")
      ->type_name("FILE");
  app.add_flag("--oversubscribe", cl.oversubscribe,
               "Allow more ranks than slots (those beyond go round-robin over the hosts)");
  app.add_option("--launch-agent", cl.launch_agent,
                 "Starts ranks on other hosts, called as CMD HOST COMMAND like ssh (default: ssh)")
      ->type_name("CMD");
  app.add_option("--paths", cl.paths, paths_help())->type_name(kinds_type_name());
  app.add_option("--rails", cl.rails, "UDP rails: interfaces, local addresses or subnets (sets path.rails)")
      ->type_name("LIST");
  app.add_option("--fault", cl.faults,
                 "Inject faults into the ranks' paths (repeatable; joined with ';' into path.fault)")
      ->type_name("SPEC")
      ->allow_extra_args(false);
  app.add_option("--fault-plan", cl.fault_plan, "File of fault SPECs, one per line (sets path.fault_plan)")
      ->type_name("FILE");
  // Stop at the program: its own options belong to it.
  app.prefix_command();

  // mpirun's "-np N": CLI11 takes one-letter short options only. The program's own arguments are taken
  // from argv below, untouched, so rewriting a "-np" among them does no harm. (CLI11 takes the vector
  // form of argv reversed, last argument first.)
  std::vector<std::string> args;
  for (int i = argc - 1; i >= 1; --i) args.push_back(std::string(argv[i]) == "-np" ? "--np" : argv[i]);
  try {
    app.parse(args);
  } catch (const CLI::CallForHelp&) {
    std::cout << app.help();
    return std::nullopt;
  } catch (const CLI::CallForVersion&) {
    std::cout << app.version() << "\n";
    return std::nullopt;
  } catch (const CLI::ParseError& e) {
    throw UsageError{e.what()};
  }
  // CLI11 leaves unknown options in front of the program; otherwise what remains is the program and its
  // arguments (after a "--", if given), the same number of words as at the end of argv.
  const std::vector<std::string> rest = app.remaining();
  if (!rest.empty() && rest.front() != "--" && rest.front().starts_with("-")) {
    throw UsageError{"unknown option '" + rest.front() + "'"};
  }
  std::vector<std::string> tail(argv + argc - rest.size(), argv + argc);
  if (!tail.empty() && tail.front() == "--") tail.erase(tail.begin());
  cl.program_and_args = std::move(tail);
  return cl;
}

// "a,b,c" -> {"a", "b", "c"}; an empty item (",," or a trailing ",") is an error naming `what`.
std::vector<std::string> split_list(std::string_view list, std::string_view what) {
  std::vector<std::string> items;
  std::string_view text = list;
  while (true) {
    const auto comma = text.find(',');
    const std::string_view item = text.substr(0, comma);
    if (item.empty()) throw UsageError{std::string(what) + ": empty item in '" + std::string(list) + "'"};
    items.emplace_back(item);
    if (comma == std::string_view::npos) break;
    text.remove_prefix(comma + 1);
  }
  return items;
}

// --paths, --rails, --fault, --fault-plan: each sets its parameter, after --param and the environment.
void apply_path_flags(const CommandLine& cl, base::ParamSet& params) {
  auto set = [&](const base::ParamRow& row, const std::string& value, std::string_view flag) {
    if (base::Status s = params.set(row.name, value); !s) {
      throw UsageError{std::string(flag) + ": " + s.message()};
    }
  };
  if (cl.paths) {
    (void)split_list(*cl.paths, "--paths");
    if (auto kinds = ftmpi::path::parse_driver_kinds(*cl.paths); !kinds) {
      throw UsageError{"--paths: " + kinds.status().message()};
    }
    set(ftmpi::path::kKinds, *cl.paths, "--paths");
  }
  if (cl.rails) {
    (void)split_list(*cl.rails, "--rails");
    set(ftmpi::path::kRails, *cl.rails, "--rails");
  }
  if (!cl.faults.empty()) {
    std::string joined;
    for (const std::string& spec : cl.faults) {
      if (spec.empty()) throw UsageError{"--fault: empty SPEC"};
      joined += (joined.empty() ? "" : ";") + spec;
    }
    set(ftmpi::path::kFault, joined, "--fault");
  }
  if (cl.fault_plan) {
    // The ranks read the plan, maybe in another directory: check it here and pass an absolute path.
    const std::string& file = *cl.fault_plan;
    const int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
    struct stat st {};
    const bool readable = fd >= 0 && ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
    const int err = fd < 0 ? errno : EISDIR;
    if (fd >= 0) ::close(fd);
    if (!readable) {
      throw UsageError{"--fault-plan: cannot read '" + file + "': " +
                       (fd >= 0 ? std::string("not a regular file") : std::string(std::strerror(err)))};
    }
    std::error_code ec;
    const std::filesystem::path absolute = std::filesystem::absolute(file, ec);
    set(ftmpi::path::kFaultPlan, ec ? file : absolute.lexically_normal().string(), "--fault-plan");
  }
}

// Inside a Slurm allocation (SLURM_JOB_ID set): its nodes with their tasks as slots. The node where
// ftrun runs (SLURMD_NODENAME in a batch script) is named as this host calls itself, so that its ranks are
// forked here even where Slurm's node names are not the host names.
std::vector<rte::HostSlots> allocation_hosts(const char* job_id) {
  const char* nodelist = std::getenv("SLURM_JOB_NODELIST");
  const char* tasks = std::getenv("SLURM_TASKS_PER_NODE");
  if (nodelist == nullptr || tasks == nullptr) {
    throw UsageError{std::string("SLURM_JOB_ID=") + job_id + " says ftrun runs in a Slurm allocation, but " +
                     (nodelist == nullptr ? "SLURM_JOB_NODELIST" : "SLURM_TASKS_PER_NODE") +
                     " is not set: give the hosts (--host localhost runs every rank here)"};
  }
  auto hosts = rte::slurm_allocation_hosts(nodelist, tasks);
  if (!hosts) throw UsageError{"the Slurm allocation: " + hosts.status().message()};
  const char* node = std::getenv("SLURMD_NODENAME");
  auto hostname = rte::local_hostname();
  if (node != nullptr && hostname) {
    for (rte::HostSlots& h : *hosts) {
      if (h.name == node && !rte::is_local_host(h.name, *hostname)) h.name = *hostname;
    }
  }
  return std::move(*hosts);
}

int run(int argc, char** argv) {
  auto cl = parse(argc, argv);
  if (!cl) return 0;

  base::ParamSet params;
  if (base::Status s = gather_params(params); !s) throw std::logic_error(s.to_string());
  if (base::Status s = params.load_environment(environ, rte::job_environment_names()); !s) {
    throw UsageError{s.message()};
  }
  for (const std::string& assignment : cl->params) {
    if (base::Status s = params.set_assignment(assignment); !s) throw UsageError{s.message()};
  }
  apply_path_flags(*cl, params);
  if (cl->help_params) {
    std::cout << "Runtime parameters (set with --param NAME=VALUE or the environment variable shown):\n"
              << params.help_text();
    return 0;
  }

  // Hosts: with none, every rank runs here as ftrun's child.
  if (!cl->hosts.empty() && cl->hostfile) throw UsageError{"give --host or --hostfile, not both"};
  std::vector<rte::HostSlots> hosts;
  if (!cl->hosts.empty()) {
    std::string joined;
    for (const std::string& list : cl->hosts) joined += (joined.empty() ? "" : ",") + list;
    auto parsed = rte::parse_host_list(joined);
    if (!parsed) throw UsageError{"--host: " + parsed.status().message()};
    hosts = std::move(*parsed);
  } else if (cl->hostfile) {
    auto parsed = rte::read_hostfile(*cl->hostfile);
    if (!parsed) throw UsageError{parsed.status().message()};
    hosts = std::move(*parsed);
  }
  // Inside a Slurm allocation, without hosts given: the allocation's, and -n defaults to its tasks.
  const char* slurm_job = std::getenv("SLURM_JOB_ID");
  const bool in_allocation = hosts.empty() && slurm_job != nullptr;
  if (in_allocation) {
    hosts = allocation_hosts(slurm_job);
    if (!cl->ranks) {
      auto tasks = rte::slurm_allocation_tasks(std::getenv("SLURM_NTASKS"));
      if (!tasks) throw UsageError{"the Slurm allocation: " + tasks.status().message()};
      if (*tasks) cl->ranks = **tasks;
    }
  }
  // With hosts, -n defaults to their slots, as mpirun's does.
  if (!cl->ranks && !hosts.empty()) {
    const std::uint64_t slots = rte::total_slots(hosts);
    if (slots > rte::kMaxJobSize) {
      throw UsageError{"the hosts have " + std::to_string(slots) + " slots, more than a job's " +
                       std::to_string(rte::kMaxJobSize) + " ranks: give -n"};
    }
    cl->ranks = static_cast<long long>(slots);
  }
  if (!cl->ranks) throw UsageError{"the number of ranks is required (-n N)"};
  if (*cl->ranks < 1 || *cl->ranks > rte::kMaxJobSize) {
    throw UsageError{"-n must be between 1 and " + std::to_string(rte::kMaxJobSize) + " (got " +
                     std::to_string(*cl->ranks) + ")"};
  }
  if (cl->program_and_args.empty()) throw UsageError{"no program given"};
  auto bind = rte::parse_bind_policy(cl->bind_to);
  if (!bind) throw UsageError{"--bind-to: " + bind.status().message()};
  if (!(cl->timeout_s >= 0 && cl->timeout_s <= kMaxTimeoutSeconds)) {
    throw UsageError{"--timeout must be a number of seconds, 0 (no limit) or more"};
  }
  if (base::Status s = base::init_logging("ftrun", params.get_string(base::kLogLevel)); !s) {
    throw UsageError{s.message()};
  }

  std::vector<std::string> placement;
  bool any_remote = false;
  if (!hosts.empty()) {
    auto placed = rte::place_ranks(hosts, static_cast<std::uint32_t>(*cl->ranks), cl->oversubscribe);
    if (!placed) {
      throw UsageError{(in_allocation ? "the Slurm allocation " + std::string(slurm_job) + ": " : std::string()) +
                       placed.status().message()};
    }
    placement = std::move(*placed);
    auto hostname = rte::local_hostname();
    if (!hostname) throw std::runtime_error(hostname.status().message());
    any_remote = std::any_of(placement.begin(), placement.end(),
                             [&](const std::string& h) { return !rte::is_local_host(h, *hostname); });
  }
  if (any_remote && *bind == rte::BindPolicy::core) {
    throw UsageError{"--bind-to core binds only ranks on ftrun's own host, and some ranks are on others"};
  }

  const char* path_env = std::getenv("PATH");
  const std::string_view search_path = path_env != nullptr ? path_env : kDefaultPath;
  auto program = rte::find_program(cl->program_and_args.front(), search_path);
  if (!program) {
    std::cerr << "ftrun: error: " << program.status().message() << "\n";
    return program.code() == base::Errc::not_found ? kExitNotFound : kExitNotExecutable;
  }
  // Ranks on the allocation's other nodes: their agents start with one srun step (unless a launch agent
  // is given), which must then be in PATH here.
  std::vector<std::string> host_step;
  if (any_remote && in_allocation && !cl->launch_agent) {
    auto srun = rte::find_program("srun", search_path);
    if (!srun) {
      std::cerr << "ftrun: error: ranks on other nodes of the Slurm allocation are started with srun: "
                << srun.status().message() << "\n";
      return srun.code() == base::Errc::not_found ? kExitNotFound : kExitNotExecutable;
    }
    host_step.push_back(*srun);
  }
  std::vector<std::string> agent;
  if (any_remote && host_step.empty()) {
    agent = rte::split_agent_command(cl->launch_agent.value_or("ssh"));
    if (agent.empty()) throw UsageError{"--launch-agent: no command given"};
    auto agent_program = rte::find_program(agent.front(), search_path);
    if (!agent_program) {
      std::cerr << "ftrun: error: launch agent: " << agent_program.status().message() << "\n";
      return agent_program.code() == base::Errc::not_found ? kExitNotFound : kExitNotExecutable;
    }
    agent.front() = *agent_program;
  }
  // The per-host agent: beside ftrun here, and run by the same path on the other hosts.
  std::string host_agent;
  if (any_remote) {
    std::error_code ec;
    const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
    const std::string beside = (self.parent_path() / "ftrun-host").string();
    auto found = rte::find_program(beside, "");
    if (ec || !found) {
      std::cerr << "ftrun: error: ranks on other hosts need ftrun-host beside ftrun (" << beside
                << "), and at that same path on every host: "
                << (ec ? ec.message() : found.status().message()) << "\n";
      return !ec && found.code() == base::Errc::invalid_argument ? kExitNotExecutable : kExitNotFound;
    }
    host_agent = *found;
  }

  rte::LaunchSpec spec;
  spec.program = *program;
  spec.args.assign(cl->program_and_args.begin() + 1, cl->program_and_args.end());
  spec.size = static_cast<std::uint32_t>(*cl->ranks);
  spec.bind = *bind;
  spec.tag_output = cl->tag_output;
  spec.time_limit =
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::duration<double>(cl->timeout_s));
  for (char** e = environ; *e != nullptr; ++e) spec.environment.emplace_back(*e);
  if (any_remote) {
    spec.hosts = std::move(placement);
    spec.launch_agent = std::move(agent);
    spec.host_step = std::move(host_step);
    spec.host_agent = std::move(host_agent);
    std::error_code ec;
    spec.working_directory = std::filesystem::current_path(ec).string();
  }

  auto outcome = rte::run_job(spec, params);
  if (!outcome) {
    std::cerr << "ftrun: error: " << outcome.status().message() << "\n";
    return kExitLaunchFailed;
  }
  if (!outcome->summary.empty()) std::cerr << "ftrun: " << outcome->summary << "\n";
  return outcome->exit_code;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const UsageError& e) {
    std::cerr << "ftrun: error: " << e.message << "\nRun with --help for more information.\n";
    return kExitUsage;
  } catch (const std::exception& e) {
    std::cerr << "ftrun: error: " << e.what() << "\n";
    return kExitLaunchFailed;
  }
}

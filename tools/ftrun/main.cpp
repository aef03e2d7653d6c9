// ftrun: starts an ftmpi job on this host. Parses the command line, then hands over to rte::run_job; every
// error is reported here, once, as "ftrun: error: ...".
#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "ftmpi/base/log.hpp"
#include "ftmpi/base/params.hpp"
#include "ftmpi/rte/job.hpp"
#include "ftmpi/rte/launcher.hpp"
#include "engine/params.hpp"
#include "ftmpi/rte/params.hpp"

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

Starts N copies of program on this host as the ranks of one ftmpi job: wires them up, forwards their
output (and ftrun's stdin to rank 0), forwards SIGINT, SIGTERM and SIGHUP to every rank, and terminates
the whole job as soon as one rank fails. Options end at the program name (or at "--").
)";

constexpr const char* kFooter = R"(Examples:
  ftrun -n 4 ./ring
      four ranks of ./ring
  ftrun -np 8 --bind-to core --tag-output ./bench --size 1k
      eight ranks, rank i pinned to core (i mod cores), each output line prefixed with "[i] ";
      leave binding off (none) when ranks outnumber cores and share them
  ftrun -n 2 --timeout 60 --param rte.kill_grace=5s -- ./solver --input data.txt
      give up after 60 s; ranks get 5 s between SIGTERM and SIGKILL

Exit status:
  0      every rank exited with status 0
  N      the first failure: a rank's exit status N, or the error code a rank passed to MPI_Abort
         (taken modulo 256; 1 if that is 0)
  128+S  a rank was killed by signal S, or ftrun received signal S (SIGINT, SIGTERM, SIGHUP)
  1      a rank exited without finalize, or left the others waiting in a fence
  2      the command line is wrong
  124    the job ran longer than --timeout
  125    ftrun could not start the job
  126    the program is not executable
  127    the program was not found

Environment: every FTMPI_<PARAM> variable sets a parameter, as --param does.
See docs/ftrun.md for what ranks receive and how failures are reported.)";

// Every parameter of the job, so that --param and --help-params cover the ranks' libraries too.
base::Status gather_params(base::ParamSet& params) {
  for (auto table : ftmpi::engine::all_param_tables()) {
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

struct CommandLine {
  std::optional<long long> ranks;
  std::string bind_to = "none";
  bool tag_output = false;
  double timeout_s = 0;
  std::vector<std::string> params;
  bool help_params = false;
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
  app.add_option("-n,--np", cl.ranks, "Number of ranks to start (required; -np N works too)")->type_name("N");
  app.add_option("--bind-to", cl.bind_to, "Bind rank i to core (i mod cores), or not (default: none)")
      ->type_name("core|none");
  app.add_flag("--tag-output", cl.tag_output, "Prefix every line a rank prints with \"[rank] \"");
  app.add_option("--timeout", cl.timeout_s, "Terminate the job after S seconds (exit status 124)")
      ->type_name("S");
  app.add_option("--param", cl.params, "Set a runtime parameter for ftrun and every rank (repeatable)")
      ->type_name("NAME=VALUE")
      ->allow_extra_args(false);
  app.add_flag("--help-params", cl.help_params, "List every runtime parameter and exit");
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
  if (cl->help_params) {
    std::cout << "Runtime parameters (set with --param NAME=VALUE or the environment variable shown):\n"
              << params.help_text();
    return 0;
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

  const char* path_env = std::getenv("PATH");
  auto program =
      rte::find_program(cl->program_and_args.front(), path_env != nullptr ? path_env : kDefaultPath);
  if (!program) {
    std::cerr << "ftrun: error: " << program.status().message() << "\n";
    return program.code() == base::Errc::not_found ? kExitNotFound : kExitNotExecutable;
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

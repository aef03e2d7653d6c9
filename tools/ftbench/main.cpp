// ftbench: latency and bandwidth of this machine's paths (docs/ftbench.md). The kernels are one MPI
// program, ftbench-mpi (ftbench_mpi.c, portable C so that other MPIs can build it too); the measuring,
// the suite and the comparisons are libs/bench. This main:
//   under ftrun (a rank of a job)    becomes ftbench-mpi, whose rank 0 prints the tables
//   bare                             runs the sweep (run_sweep), or the suite (`table`: run_table), and
//                                    prints it as Markdown, --json or --csv
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "ftmpi/base/compress.hpp"
#include "ftmpi/bench/compare.hpp"
#include "ftmpi/bench/job.hpp"
#include "ftmpi/bench/progress.hpp"
#include "ftmpi/bench/table.hpp"
#include "ftmpi/path/registry.hpp"

namespace {

namespace base = ftmpi::base;
namespace bench = ftmpi::bench;

constexpr int kExitUsage = 2;

// Says why, once prefixed with the tool's name (a job that refused its arguments said so itself, named);
// ftbench's exit status for it.
int failed(const base::Status& status) {
  const std::string& message = status.message();
  std::cerr << (message.rfind("ftbench: ", 0) == 0 ? "" : "ftbench: ") << message << "\n";
  return bench::exit_status_of(status);
}

// The progress line told by the library's measuring loops.
bench::TableProgress progress_of(std::unique_ptr<bench::ProgressLine>& line, const std::string& title) {
  bench::TableProgress p;
  p.start = [&line, title](int total) { line = std::make_unique<bench::ProgressLine>(title, total); };
  p.begin = [&line](const std::string& label) { line->begin(label); };
  p.end = [&line] { line->end(); };
  p.say = [&line](const std::string& text) { line->say(text); };
  return p;
}

int run(int argc, char** argv) {
  // A rank of a job: the kernels themselves.
  if (std::getenv("FTMPI_RTE_ADDR") != nullptr) {
    std::vector<std::string> args{bench::program_beside_me("ftbench-mpi")};
    for (int i = 1; i < argc; ++i) args.emplace_back(argv[i]);
    std::vector<char*> exec_argv;
    for (std::string& a : args) exec_argv.push_back(a.data());
    exec_argv.push_back(nullptr);
    ::execv(exec_argv[0], exec_argv.data());
    std::fprintf(stderr, "ftbench: cannot run %s: %s\n", exec_argv[0], std::strerror(errno));
    return 127;
  }
  CLI::App app{"ftbench: latency and bandwidth of this machine's paths, measured by ftmpi", "ftbench"};
  bench::Sweep sweep;
  bench::TableOptions table_options;
  std::string rails, peers, svg_out;
  int rounds = 0;  // 0: 1 alone, 3 beside peers
  bool json = false, csv = false, table = false, keep_disturbed = false;
  auto* table_command = app.add_subcommand("table", "The standard suite: a row per path and rail, reliability "
                                                   "on and off, each checksum (latency 0 B and 8 KB, bandwidth 1 MB)");
  table_command->callback([&] { table = true; });
  table_command->fallthrough();
  app.add_option("--kernels", sweep.kernels.kernels, "lat,bw,bibw,rate,barrier,bcast,allreduce,alltoall")->capture_default_str();
  app.add_option("--sizes", sweep.kernels.sizes, "0:4m (0, then powers of two) or a list: 0,8k,1m")->capture_default_str();
  app.add_option("-n,--ranks", sweep.job.ranks, "Ranks of the job (point-to-point kernels use ranks 0 and 1)")
      ->capture_default_str()->check(CLI::Range(2, 4096));
  app.add_option("--reps", sweep.kernels.reps, "Repetitions per figure; the median is reported")->capture_default_str();
  app.add_option("--scale", sweep.kernels.scale, "Multiplies every iteration count (0.01 for a quick look)")->capture_default_str();
  app.add_option("--window", sweep.kernels.window, "Messages in flight per bandwidth iteration")->capture_default_str();
  app.add_option("--max-time", sweep.kernels.max_time, "At most this many seconds per repetition (fewer iterations "
                 "when the warm-up says so); 0: no limit")->capture_default_str()->check(CLI::NonNegativeNumber);
  app.add_option("--paths", sweep.job.paths, "The paths the job may use (ftrun --paths: shm, udp, verbs)");
  app.add_option("--rails", rails, "The network rails (ftrun --rails; table: default 127.0.0.1,127.0.0.2)");
  app.add_option("--param", sweep.job.params, "A runtime parameter for the job, K=V (repeatable)");
  app.add_option("-H,--host", sweep.job.hosts, "Hosts of the ranks (ftrun --host: H[:N],...); default: this host");
  app.add_option("--launch-agent", sweep.job.launch_agent, "How ranks on other hosts are started (ftrun --launch-agent)");
  app.add_option("--svg", svg_out, "Also draw the figures against message size here (SVG)");
  std::vector<std::string> variants;
  app.add_option("--variant", variants, "ftmpi again with other runtime parameters, measured beside it, interleaved, "
                 "with ftmpi's ratio to it round by round: NAME:K=V[,K=V...], e.g. off:engine.reliability=off "
                 "(repeatable)")->type_name("NAME:K=V");
  app.add_option("--against", peers, "Other MPIs measured beside ftmpi, interleaved: openmpi,mpich");
  app.add_option("--rounds", rounds, "Interleaved rounds; each figure is their median (default 1, 3 with --against "
                 "or --variant)")
      ->check(CLI::Range(1, 101));
  int time_limit_s = 0;
  app.add_option("--time-limit", time_limit_s, "End ftmpi's job after S seconds with an error (default: a bound from the "
                 "kernels when engine.reliability=off on a network path, where a lost frame is waited for for ever; "
                 "else none)")->check(CLI::Range(1, 1000000))->type_name("S");
  app.add_flag("--keep-disturbed", keep_disturbed,
               "Do not watch for a disturbed machine (other work, a slow host) nor repeat what it disturbed");
  auto* json_flag = app.add_flag("--json", json, "One JSON object");
  app.add_flag("--csv", csv, "kernel,bytes,value,unit lines (mpi,... with --against or --variant)")->excludes(json_flag);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : kExitUsage;  // --help is 0; anything wrong on the command line is 2
  }
  if (!sweep.job.paths.empty()) {  // said before anything is built or launched, in ftrun's words
    if (auto kinds = ftmpi::path::parse_driver_kinds(sweep.job.paths); !kinds) {
      std::cerr << "ftbench: --paths: " << kinds.status().message() << "\n";
      return kExitUsage;
    }
  }
  if (!peers.empty()) {
    auto found = bench::find_peers(peers);
    if (!found) return failed(found.status());
    sweep.peers = table_options.peers = *found;
  }
  for (const std::string& text : variants) {  // two of one name: run_sweep says so
    auto variant = bench::parse_variant(text);
    if (!variant) return failed(variant.status());
    sweep.variants.push_back(*variant);
  }
  if (rounds == 0) rounds = peers.empty() && variants.empty() ? 1 : 3;
  std::unique_ptr<bench::ProgressLine> line;

  if (table) {
    if (csv) {
      std::cerr << "ftbench: table prints Markdown or --json (--csv belongs to the sweep)\n";
      return kExitUsage;
    }
    if (!variants.empty()) {
      std::cerr << "ftbench: table measures its own settings per row (--variant belongs to the sweep)\n";
      return kExitUsage;
    }
    if (!rails.empty()) table_options.rails = bench::split(rails);
    table_options.params = sweep.job.params;
    table_options.hosts = sweep.job.hosts;
    table_options.launch_agent = sweep.job.launch_agent;
    table_options.reps = sweep.kernels.reps;
    table_options.scale = sweep.kernels.scale;
    table_options.max_time = sweep.kernels.max_time;
    table_options.rounds = rounds;
    table_options.repeat_disturbed = !keep_disturbed;
    table_options.time_limit_s = time_limit_s;
    if (!svg_out.empty()) table_options.curve_sizes = sweep.kernels.sizes;  // --sizes: the curves' (0:4m)
    auto report = bench::run_table(table_options, progress_of(line, "ftbench table"));
    line.reset();
    if (!report) return failed(report.status());
    if (!svg_out.empty()) {
      if (auto s = base::write_file(svg_out, bench::table_svg(*report)); !s) return failed(s);
    }
    std::cout << (json ? bench::table_json(*report) + "\n" : bench::table_markdown(*report));
    return 0;
  }
  sweep.job.rails = rails;
  sweep.rounds = rounds;
  sweep.time_limit_s = time_limit_s;
  sweep.repeat_disturbed = !keep_disturbed && (rounds > 1 || !sweep.peers.empty() || !sweep.variants.empty());
  auto report = bench::run_sweep(sweep, progress_of(line, "ftbench"));
  line.reset();
  if (!report) return failed(report.status());
  if (!svg_out.empty()) {
    const std::string title = report->names.size() == 1
        ? report->libraries[0] + ", " + std::to_string(sweep.job.ranks) + " ranks"
        : std::to_string(sweep.job.ranks) + " ranks, medians of " + std::to_string(rounds) + " rounds";
    if (auto s = base::write_file(svg_out, bench::sweep_svg(*report, title)); !s) return failed(s);
  }
  if (json) {
    std::cout << bench::sweep_json(*report) << "\n";
  } else if (csv) {
    std::cout << bench::sweep_csv(*report);
  } else {
    const std::string heading = report->libraries[0] + ", " + std::to_string(sweep.job.ranks) + " ranks" +
                                (sweep.job.paths.empty() ? "" : ", paths " + sweep.job.paths) +
                                (rails.empty() ? "" : ", rails " + rails);
    std::cout << bench::sweep_markdown(*report, heading);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) { return run(argc, argv); }

// ftbench: latency and bandwidth of this machine's paths (docs/ftbench.md). The kernels are one MPI
// program, ftbench-mpi (ftbench_mpi.c, portable C so that other MPIs can build it too); this main runs it:
//   under ftrun (a rank of a job)    it becomes ftbench-mpi, whose rank 0 prints the tables
//   bare                             it starts `ftrun -n RANKS [--paths P] [--rails R] [--param K=V]...
//                                    ftbench-mpi --json ...`, gathers the results and prints them as a
//                                    Markdown table (sizes down, kernels across), --json or --csv
#include <sys/wait.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include "ftmpi/base/json.hpp"
#include "ftmpi/base/compress.hpp"
#include "ftmpi/base/json_value.hpp"
#include "ftmpi/bench/plot.hpp"

namespace {

namespace base = ftmpi::base;
namespace fs = std::filesystem;

constexpr int kExitUsage = 2;

// The programs beside this one: ftbench-mpi and ftrun are installed (and built) in the same directory.
std::string beside_me(const std::string& name) {
  std::error_code ec;
  const fs::path self = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    const fs::path there = self.parent_path() / name;
    if (fs::exists(there, ec)) return there.string();
  }
  return name;  // found on PATH, or said missing by execvp
}

std::vector<char*> argv_of(std::vector<std::string>& args) {
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  return argv;
}

// Runs `args`, its stdout captured (stderr passed through); its exit status.
int run_capturing(std::vector<std::string> args, std::string& out) {
  int fds[2];
  if (::pipe(fds) != 0) return 1;
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::dup2(fds[1], STDOUT_FILENO);
    ::close(fds[0]);
    ::close(fds[1]);
    auto argv = argv_of(args);
    ::execvp(argv[0], argv.data());
    std::fprintf(stderr, "ftbench: cannot run %s: %s\n", argv[0], std::strerror(errno));
    ::_exit(127);
  }
  ::close(fds[1]);
  char buf[4096];
  ssize_t n = 0;
  while ((n = ::read(fds[0], buf, sizeof buf)) > 0) out.append(buf, static_cast<std::size_t>(n));
  ::close(fds[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

struct Result;
struct JobConfig {
  int ranks = 2;
  int timeout_s = 0;  // ftrun --timeout; 0: none
  std::string bind_to;  // ftrun --bind-to; empty: ftrun's default
  std::string paths, rails;
  std::vector<std::string> params;
};
int run_job(const JobConfig& c, const std::string& kernels, const std::string& sizes, int reps, double scale,
            int window, std::vector<Result>& results, std::string& library);
int run_table(const std::string& rails, const std::vector<std::string>& params, int reps, double scale, bool json);
// Runs a launcher command whose program prints ftbench-mpi's JSON lines; its exit status.
int run_lines(const std::vector<std::string>& command, std::vector<Result>& results, std::string& library);
int against(const std::string& peers, const JobConfig& c, const std::string& kernels, const std::string& sizes,
            int reps, double scale, int window, int rounds, bool json, const std::string& svg_out);
// Writes the picture of each MPI's results (the first is ftmpi's) to `out`; false (said) when it cannot.
bool write_svg(const std::string& out, const std::string& title, const std::vector<std::string>& names,
               const std::vector<std::vector<Result>>& results);
constexpr const char* kLoopbackRails = "127.0.0.1,127.0.0.2";

struct Result {
  std::string kernel;
  std::uint64_t bytes = 0;
  double value = 0;
  std::string unit;
};

std::string size_text(std::uint64_t bytes) {
  if (bytes >= (1u << 20) && bytes % (1u << 20) == 0) return std::to_string(bytes >> 20) + " MB";
  if (bytes >= 1024 && bytes % 1024 == 0) return std::to_string(bytes >> 10) + " KB";
  return std::to_string(bytes) + " B";
}

std::string number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, v >= 100 ? "%.0f" : v >= 10 ? "%.1f" : "%.3f", v);
  return buf;
}

int run(int argc, char** argv) {
  // A rank of a job: the kernels themselves.
  if (std::getenv("FTMPI_RTE_ADDR") != nullptr) {
    std::vector<std::string> args{beside_me("ftbench-mpi")};
    for (int i = 1; i < argc; ++i) args.emplace_back(argv[i]);
    auto exec_argv = argv_of(args);
    ::execv(exec_argv[0], exec_argv.data());
    std::fprintf(stderr, "ftbench: cannot run %s: %s\n", exec_argv[0], std::strerror(errno));
    return 127;
  }
  CLI::App app{"ftbench: latency and bandwidth of this machine's paths, measured by ftmpi", "ftbench"};
  std::string kernels = "lat,bw", sizes = "0:4m", paths, rails;
  int ranks = 2, reps = 5, window = 64;
  double scale = 1.0;
  std::vector<std::string> params;
  bool json = false, csv = false, table = false;
  auto* table_command = app.add_subcommand("table", "The standard suite: a row per path and rail, reliability "
                                                   "on and off, each checksum (latency 0 B and 8 KB, bandwidth 1 MB)");
  table_command->callback([&] { table = true; });
  table_command->fallthrough();
  app.add_option("--kernels", kernels, "lat,bw,bibw,rate,barrier,bcast,allreduce,alltoall")->capture_default_str();
  app.add_option("--sizes", sizes, "0:4m (0, then powers of two) or a list: 0,8k,1m")->capture_default_str();
  app.add_option("-n,--ranks", ranks, "Ranks of the job (point-to-point kernels use ranks 0 and 1)")
      ->capture_default_str()->check(CLI::Range(2, 4096));
  app.add_option("--reps", reps, "Repetitions per figure; the median is reported")->capture_default_str();
  app.add_option("--scale", scale, "Multiplies every iteration count (0.01 for a quick look)")->capture_default_str();
  app.add_option("--window", window, "Messages in flight per bandwidth iteration")->capture_default_str();
  app.add_option("--paths", paths, "The paths the job may use (ftrun --paths: shm, udp)");
  app.add_option("--rails", rails, "The network rails (ftrun --rails)");
  app.add_option("--param", params, "A runtime parameter for the job, K=V (repeatable)");
  std::string peers, svg_out;
  int rounds = 3;
  app.add_option("--svg", svg_out, "Also draw the figures against message size here (SVG)");
  app.add_option("--against", peers, "Other MPIs measured beside ftmpi, interleaved: openmpi,mpich");
  app.add_option("--rounds", rounds, "--against: interleaved rounds; each figure is their median")
      ->capture_default_str()->check(CLI::Range(1, 101));
  auto* json_flag = app.add_flag("--json", json, "One JSON object: {\"results\": [...]}");
  app.add_flag("--csv", csv, "kernel,bytes,value,unit lines")->excludes(json_flag);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : kExitUsage;  // --help is 0; anything wrong on the command line is 2
  }

  std::string library;
  std::vector<Result> results;
  if (table) return run_table(rails.empty() ? kLoopbackRails : rails, params, reps, scale, json);
  JobConfig config;
  config.ranks = ranks;
  config.paths = paths;
  config.rails = rails;
  config.params = params;
  if (!peers.empty()) return against(peers, config, kernels, sizes, reps, scale, window, rounds, json, svg_out);
  const int status = run_job(config, kernels, sizes, reps, scale, window, results, library);
  if (status != 0) return status;
  if (!svg_out.empty() && !write_svg(svg_out, library + ", " + std::to_string(ranks) + " ranks", {"ftmpi"}, {results})) {
    return 1;
  }
  if (json) {
    base::JsonWriter w;
    w.begin_object().field("library", library).field("ranks", ranks).key("results").begin_array();
    for (const Result& r : results) {
      w.begin_object().field("kernel", r.kernel).field("bytes", r.bytes).field("value", r.value).field("unit", r.unit).end_object();
    }
    w.end_array().end_object();
    std::cout << std::move(w).text() << "\n";
    return 0;
  }
  if (csv) {
    std::cout << "kernel,bytes,value,unit\n";
    for (const Result& r : results) std::cout << r.kernel << "," << r.bytes << "," << r.value << "," << r.unit << "\n";
    return 0;
  }
  // Markdown: one row per size, one column per kernel (with its unit).
  std::vector<std::string> columns;
  std::map<std::string, std::string> unit_of;
  std::map<std::uint64_t, std::map<std::string, double>> rows;
  for (const Result& r : results) {
    if (unit_of.emplace(r.kernel, r.unit).second) columns.push_back(r.kernel);
    rows[r.bytes][r.kernel] = r.value;
  }
  std::vector<std::string> header{"size"};
  for (const std::string& c : columns) header.push_back(c + " (" + unit_of[c] + ")");
  std::string line = "|";
  for (const std::string& h : header) line += " " + h + " |";
  std::cout << library << ", " << ranks << " ranks" << (paths.empty() ? "" : ", paths " + paths)
            << (rails.empty() ? "" : ", rails " + rails) << "\n\n" << line << "\n|";
  for (std::size_t i = 0; i < header.size(); ++i) std::cout << "---:|";
  std::cout << "\n";
  for (const auto& [bytes, values] : rows) {
    std::cout << "| " << size_text(bytes) << " |";
    for (const std::string& c : columns) {
      auto it = values.find(c);
      std::cout << " " << (it == values.end() ? "-" : number(it->second)) << " |";
    }
    std::cout << "\n";
  }
  return 0;
}

int run_job(const JobConfig& c, const std::string& kernels, const std::string& sizes, int reps, double scale,
            int window, std::vector<Result>& results, std::string& library) {
  std::vector<std::string> job{beside_me("ftrun"), "-n", std::to_string(c.ranks)};
  if (c.timeout_s > 0) job.insert(job.end(), {"--timeout", std::to_string(c.timeout_s)});
  if (!c.bind_to.empty()) job.insert(job.end(), {"--bind-to", c.bind_to});
  if (!c.paths.empty()) job.insert(job.end(), {"--paths", c.paths});
  if (!c.rails.empty()) job.insert(job.end(), {"--rails", c.rails});
  for (const std::string& p : c.params) job.insert(job.end(), {"--param", p});
  job.insert(job.end(), {beside_me("ftbench-mpi"), "--json", "--kernels", kernels, "--sizes", sizes, "--reps",
                         std::to_string(reps), "--scale", std::to_string(scale), "--window", std::to_string(window)});
  return run_lines(job, results, library);
}

int run_lines(const std::vector<std::string>& command, std::vector<Result>& results, std::string& library) {
  std::string out;
  const int status = run_capturing(command, out);
  if (status != 0) {
    std::cerr << "ftbench: " << command.front() << " exited with status " << status << "\n";
    return status;
  }
  std::size_t start = 0;
  while (start < out.size()) {
    const std::size_t nl = out.find('\n', start);
    const std::string line = out.substr(start, nl == std::string::npos ? std::string::npos : nl - start);
    start = nl == std::string::npos ? out.size() : nl + 1;
    auto v = base::parse_json(line);
    if (!v || !v->is_object()) continue;
    results.push_back({(*v)["kernel"].as_string(), (*v)["bytes"].as_u64(), (*v)["value"].as_number(), (*v)["unit"].as_string()});
    library = (*v)["library"].as_string();
  }
  if (results.empty()) {
    std::cerr << "ftbench: the job printed no result\n";
    return 1;
  }
  return 0;
}

// One row of `ftbench table`: a path (and its rails) with reliability on or off and a checksum.
struct Row {
  std::string path;                 // "shm", "udp"
  std::vector<std::string> rails;   // udp: the rails it is striped over
  bool reliability = false;
  std::string checksum;             // with reliability: crc32c, sum32, none; without: "-"
  double latency_0_us = 0, latency_8k_us = 0, bandwidth_1m_MBps = 0;
  std::string note;  // why the row has no figures
};

std::vector<std::string> split(const std::string& text, char by = ',') {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t comma = text.find(by, start);
    out.push_back(text.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

// The standard suite (LA-MPI's Table 1, per path, reliability on and off): shared memory, UDP on each rail
// and striped over all of them; without reliability, and with it under each checksum. Shared memory has
// no reliability by default (engine.reliability=force turns it on); UDP has it by default (off turns it
// off: a measurement only, never a way to run).
int run_table(const std::string& rails, const std::vector<std::string>& params, int reps, double scale, bool json) {
  std::vector<Row> rows;
  const std::vector<std::string> each_rail = split(rails);
  std::vector<std::vector<std::string>> udp_sets;
  for (const std::string& r : each_rail) udp_sets.push_back({r});
  if (each_rail.size() > 1) udp_sets.push_back(each_rail);
  auto add_rows = [&](const std::string& path, const std::vector<std::string>& rail_set) {
    for (const char* checksum : {"-", "crc32c", "sum32", "none"}) {
      Row row;
      row.path = path;
      row.rails = rail_set;
      row.reliability = std::string(checksum) != "-";
      row.checksum = checksum;
      rows.push_back(row);
    }
  };
  add_rows("shm", {});
  for (const auto& set : udp_sets) add_rows("udp", set);
  std::string library;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    Row& row = rows[i];
    JobConfig c;
    c.paths = row.path;
    std::string rail_text;
    for (const std::string& r : row.rails) rail_text += (rail_text.empty() ? "" : ",") + r;
    c.rails = rail_text;
    c.params = params;
    c.params.push_back(std::string("engine.reliability=") + (row.reliability ? (row.path == "shm" ? "force" : "auto") : "off"));
    if (row.reliability) c.params.push_back("engine.checksum=" + row.checksum);
    if (::isatty(STDERR_FILENO) != 0) {
      std::cerr << "\r\033[Kftbench table: row " << i + 1 << " of " << rows.size() << ": " << row.path << " "
                << rail_text << (row.reliability ? " reliability on, " + row.checksum : " reliability off")
                << std::flush;
    }
    // Without reliability a datagram the kernel drops is never resent, and the job waits for it for ever:
    // such a row gets a time limit, and no figures when it is reached.
    const bool may_lose = row.path != "shm" && !row.reliability;
    c.timeout_s = may_lose ? static_cast<int>(10 + 50 * std::min(scale, 1.0)) : 0;  // 60 s at full scale
    std::vector<Result> results;
    if (int status = run_job(c, "lat,bw", "0,8k,1m", reps, scale, 64, results, library); status != 0) {
      if (!may_lose || status != 124) return status;
      row.note = "a datagram was lost and, without reliability, never resent";
      continue;
    }
    for (const Result& r : results) {
      if (r.kernel == "lat" && r.bytes == 0) row.latency_0_us = r.value;
      if (r.kernel == "lat" && r.bytes == 8192) row.latency_8k_us = r.value;
      if (r.kernel == "bw" && r.bytes == (1u << 20)) row.bandwidth_1m_MBps = r.value;
    }
  }
  if (::isatty(STDERR_FILENO) != 0) std::cerr << "\r\033[K" << std::flush;
  // The cost of reliability: each row against the same path and rails without it.
  auto base_of = [&](const Row& row) -> const Row* {
    for (const Row& r : rows) {
      if (r.path == row.path && r.rails == row.rails && !r.reliability) return &r;
    }
    return nullptr;
  };
  if (json) {
    base::JsonWriter w;
    w.begin_object().field("library", library).key("rows").begin_array();
    for (const Row& r : rows) {
      w.begin_object().field("path", r.path).key("rails").begin_array();
      for (const std::string& rail : r.rails) w.value(rail);
      w.end_array().field("reliability", r.reliability ? "on" : "off").field("checksum", r.checksum);
      w.field("latency_0_us", r.latency_0_us).field("latency_8k_us", r.latency_8k_us);
      w.field("bandwidth_1m_MBps", r.bandwidth_1m_MBps);
      if (!r.note.empty()) w.field("note", r.note);
      w.end_object();
    }
    w.end_array().key("peers").begin_object().end_object().end_object();
    std::cout << std::move(w).text() << "\n";
    return 0;
  }
  std::cout << library << ", 2 ranks on this host\n\n"
            << "| path | rails | reliability | checksum | latency 0 B (us) | latency 8 KB (us) | bandwidth 1 MB (MB/s) "
               "| latency 8 KB vs off | bandwidth 1 MB vs off |\n|---|---|---|---|---:|---:|---:|---:|---:|\n";
  for (const Row& r : rows) {
    std::string rail_text;
    for (const std::string& rail : r.rails) rail_text += (rail_text.empty() ? "" : ",") + rail;
    const Row* off = base_of(r);
    const bool ratio = r.reliability && off != nullptr && off->latency_8k_us > 0 && off->bandwidth_1m_MBps > 0;
    if (!r.note.empty()) {
      std::cout << "| " << r.path << " | " << rail_text << " | off | - | " << r.note << " | | | | |\n";
      continue;
    }
    std::cout << "| " << r.path << " | " << (rail_text.empty() ? "-" : rail_text) << " | "
              << (r.reliability ? "on" : "off") << " | " << r.checksum << " | " << number(r.latency_0_us) << " | "
              << number(r.latency_8k_us) << " | " << number(r.bandwidth_1m_MBps) << " | "
              << (ratio ? number(r.latency_8k_us / off->latency_8k_us) + "x" : "-") << " | "
              << (ratio ? number(r.bandwidth_1m_MBps / off->bandwidth_1m_MBps) + "x" : "-") << " |\n";
  }
  return 0;
}


// ---------------------------------------------------------------------------------------------------
// --against: the same kernels built with other MPIs' compilers, run interleaved with ftmpi's

struct PeerMpi {
  std::string name;      // as --against names it
  std::string compiler;  // its C compiler wrapper
  std::string launcher;
  std::string packages;  // what to install when it is missing
};

const std::vector<PeerMpi>& known_peers() {
  static const std::vector<PeerMpi> peers = {
      {"openmpi", "mpicc.openmpi", "mpirun.openmpi", "libopenmpi-dev openmpi-bin"},
      {"mpich", "mpicc.mpich", "mpiexec.mpich", "libmpich-dev mpich"},
  };
  return peers;
}

bool on_path(const std::string& program) {
  const char* path = std::getenv("PATH");
  for (const std::string& dir : split(path != nullptr ? path : "/usr/bin:/bin", ':')) {
    if (!dir.empty() && ::access((dir + "/" + program).c_str(), X_OK) == 0) return true;
  }
  return false;
}

// ftbench_mpi.c and bench_common.h: beside the tools in a build tree, in share/ftmpi/ftbench installed.
std::string kernel_sources() {
  std::error_code ec;
  const fs::path self = fs::read_symlink("/proc/self/exe", ec).parent_path();
  for (const fs::path& dir : {self / "ftbench-src", self / ".." / "share" / "ftmpi" / "ftbench"}) {
    if (fs::exists(dir / "ftbench_mpi.c", ec)) return dir.string();
  }
  return {};
}

std::string cache_directory() {
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg != nullptr && xdg[0] == '/') return std::string(xdg) + "/ftbench";
  if (const char* home = std::getenv("HOME"); home != nullptr && home[0] == '/') return std::string(home) + "/.cache/ftbench";
  return "/tmp/ftbench-" + std::to_string(::getuid());
}

// The peer's build of the kernels, made again when the source is newer; empty (and said) when it fails.
std::string build_for(const PeerMpi& peer, const std::string& sources) {
  std::error_code ec;
  const std::string dir = cache_directory();
  fs::create_directories(dir, ec);
  const fs::path binary = fs::path(dir) / ("ftbench-mpi-" + peer.name);
  const fs::path source = fs::path(sources) / "ftbench_mpi.c";
  if (fs::exists(binary, ec) && fs::last_write_time(binary, ec) >= fs::last_write_time(source, ec)) return binary.string();
  std::string out;
  const int status = run_capturing({peer.compiler, "-O2", "-w", "-I", sources, "-o", binary.string(), source.string()}, out);  // -w: their headers' warnings
  if (status != 0) {
    std::cerr << "ftbench: " << peer.compiler << " could not build " << source.string() << " (status " << status << ")\n";
    return {};
  }
  return binary.string();
}

// Each MPI's ranks bound to cores when there are enough, else unbound and giving the core away while
// they wait (as scripts/compare-mpi.sh did: docs/benchmarks.md).
std::vector<std::string> peer_command(const PeerMpi& peer, int ranks, bool bind, const std::string& binary) {
  if (peer.name == "openmpi") {
    std::vector<std::string> c{peer.launcher, "-np", std::to_string(ranks), "--mca", "btl", "self,vader"};
    if (::getuid() == 0) c.push_back("--allow-run-as-root");
    if (bind) {
      c.insert(c.end(), {"--bind-to", "core"});
    } else {
      c.insert(c.end(), {"--oversubscribe", "--bind-to", "none", "--mca", "mpi_yield_when_idle", "1"});
    }
    c.push_back(binary);
    return c;
  }
  return {peer.launcher, "-n", std::to_string(ranks), "-bind-to", bind ? "core" : "none", binary};
}

bool higher_is_better(const std::string& unit) { return unit == "MB/s" || unit == "Mmsg/s"; }

int against(const std::string& peer_names, const JobConfig& c, const std::string& kernels, const std::string& sizes,
            int reps, double scale, int window, int rounds, bool json, const std::string& svg_out) {
  std::vector<PeerMpi> peers;
  for (const std::string& name : split(peer_names)) {
    auto it = std::find_if(known_peers().begin(), known_peers().end(), [&](const PeerMpi& p) { return p.name == name; });
    if (it == known_peers().end()) {
      std::cerr << "ftbench: --against: unknown MPI '" << name << "' (known: openmpi, mpich)\n";
      return kExitUsage;
    }
    for (const std::string& program : {it->compiler, it->launcher}) {
      if (!on_path(program)) {
        std::cerr << "ftbench: --against " << name << ": " << program << " is not installed (apt-get install "
                  << it->packages << ")\n";
        return kExitUsage;
      }
    }
    peers.push_back(*it);
  }
  const std::string sources = kernel_sources();
  if (sources.empty()) {
    std::cerr << "ftbench: the kernels' source (ftbench_mpi.c) is not beside ftbench nor in share/ftmpi/ftbench\n";
    return 1;
  }
  std::vector<std::string> binaries;
  for (const PeerMpi& p : peers) {
    binaries.push_back(build_for(p, sources));
    if (binaries.back().empty()) return 1;
  }
  const long cores = ::sysconf(_SC_NPROCESSORS_ONLN);
  const bool bind = c.ranks <= cores;
  const std::vector<std::string> tail{"--json", "--kernels", kernels, "--sizes", sizes, "--reps", std::to_string(reps),
                                      "--scale", std::to_string(scale), "--window", std::to_string(window)};
  // Every MPI's figures of every round, by (kernel, bytes); index 0 is ftmpi.
  const std::size_t mpis = peers.size() + 1;
  std::vector<std::map<std::pair<std::string, std::uint64_t>, std::vector<double>>> samples(mpis);
  std::vector<std::string> libraries(mpis);
  std::vector<Result> order;  // kernels and sizes in the order measured
  std::map<std::string, std::string> unit_of;
  for (int round = 0; round < rounds; ++round) {
    for (std::size_t m = 0; m < mpis; ++m) {
      if (::isatty(STDERR_FILENO) != 0) {
        std::cerr << "\r\033[Kftbench: round " << round + 1 << " of " << rounds << ": "
                  << (m == 0 ? std::string("ftmpi") : peers[m - 1].name) << std::flush;
      }
      std::vector<Result> results;
      int status = 0;
      if (m == 0) {
        JobConfig mine = c;
        mine.bind_to = bind ? "core" : "none";
        status = run_job(mine, kernels, sizes, reps, scale, window, results, libraries[0]);
      } else {
        std::vector<std::string> command = peer_command(peers[m - 1], c.ranks, bind, binaries[m - 1]);
        command.insert(command.end(), tail.begin(), tail.end());
        status = run_lines(command, results, libraries[m]);
      }
      if (status != 0) return status;
      for (const Result& r : results) {
        samples[m][{r.kernel, r.bytes}].push_back(r.value);
        if (m == 0 && round == 0) order.push_back(r);
        unit_of[r.kernel] = r.unit;
      }
    }
  }
  if (::isatty(STDERR_FILENO) != 0) std::cerr << "\r\033[K" << std::flush;
  auto median_of = [&](std::size_t m, const Result& r) -> double {
    auto it = samples[m].find({r.kernel, r.bytes});
    if (it == samples[m].end() || it->second.empty()) return 0.0;
    std::vector<double> v = it->second;
    std::sort(v.begin(), v.end());
    return v.size() % 2 == 1 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
  };
  // ftmpi's figure over the best peer's: below 1 is better for times, above 1 for rates.
  auto ratio_of = [&](const Result& r) {
    double best = 0;
    for (std::size_t m = 1; m < mpis; ++m) {
      const double v = median_of(m, r);
      if (v > 0 && (best == 0 || (higher_is_better(r.unit) ? v > best : v < best))) best = v;
    }
    return best > 0 ? median_of(0, r) / best : 0.0;
  };
  if (!svg_out.empty()) {
    std::vector<std::string> names{"ftmpi"};
    std::vector<std::vector<Result>> medians(mpis);
    for (std::size_t m = 0; m < mpis; ++m) {
      if (m > 0) names.push_back(peers[m - 1].name);
      for (Result r : order) {
        r.value = median_of(m, r);
        medians[m].push_back(r);
      }
    }
    if (!write_svg(svg_out, std::to_string(c.ranks) + " ranks, medians of " + std::to_string(rounds) + " rounds", names,
                   medians)) {
      return 1;
    }
  }
  if (json) {
    base::JsonWriter w;
    w.begin_object().field("library", libraries[0]).field("ranks", c.ranks).field("rounds", rounds).key("results").begin_array();
    for (const Result& r : order) {
      w.begin_object().field("kernel", r.kernel).field("bytes", r.bytes).field("value", median_of(0, r));
      w.field("unit", r.unit).field("ratio_to_best_peer", ratio_of(r)).end_object();
    }
    w.end_array().key("peers").begin_object();
    for (std::size_t m = 1; m < mpis; ++m) {
      w.key(peers[m - 1].name).begin_object().field("library", libraries[m]).key("results").begin_array();
      for (const Result& r : order) {
        w.begin_object().field("kernel", r.kernel).field("bytes", r.bytes).field("value", median_of(m, r)).field("unit", r.unit).end_object();
      }
      w.end_array().end_object();
    }
    w.end_object().end_object();
    std::cout << std::move(w).text() << "\n";
    return 0;
  }
  std::cout << c.ranks << " ranks" << (bind ? ", bound to cores" : ", unbound") << "; medians of " << rounds
            << " interleaved rounds\n";
  for (std::size_t m = 0; m < mpis; ++m) {
    std::cout << "  " << (m == 0 ? std::string("ftmpi") : peers[m - 1].name) << ": " << libraries[m] << "\n";
  }
  std::string kernel;
  for (const Result& r : order) {
    if (r.kernel != kernel) {
      kernel = r.kernel;
      std::cout << "\n" << kernel << " (" << unit_of[kernel] << ", " << (higher_is_better(unit_of[kernel]) ? "higher" : "lower")
                << " is better)\n\n| size | ftmpi |";
      for (const PeerMpi& p : peers) std::cout << " " << p.name << " |";
      std::cout << " ftmpi / best peer |\n|---:|---:|";
      for (std::size_t m = 1; m < mpis; ++m) std::cout << "---:|";
      std::cout << "---:|\n";
    }
    std::cout << "| " << size_text(r.bytes) << " |";
    for (std::size_t m = 0; m < mpis; ++m) std::cout << " " << number(median_of(m, r)) << " |";
    const double ratio = ratio_of(r);
    std::cout << " " << (ratio > 0 ? number(ratio) + "x" : "-") << " |\n";
  }
  return 0;
}

bool write_svg(const std::string& out, const std::string& title, const std::vector<std::string>& names,
               const std::vector<std::vector<Result>>& results) {
  std::vector<ftmpi::bench::Panel> panels;
  for (std::size_t m = 0; m < results.size(); ++m) {
    for (const Result& r : results[m]) {
      auto it = std::find_if(panels.begin(), panels.end(), [&](const ftmpi::bench::Panel& p) { return p.title == r.kernel; });
      if (it == panels.end()) {
        panels.push_back({r.kernel, r.unit + (higher_is_better(r.unit) ? ", higher is better" : ", lower is better"), {}});
        it = panels.end() - 1;
      }
      auto curve = std::find_if(it->curves.begin(), it->curves.end(), [&](const ftmpi::bench::Curve& c) { return c.name == names[m]; });
      if (curve == it->curves.end()) {
        it->curves.push_back({names[m], {}});
        curve = it->curves.end() - 1;
      }
      curve->points.emplace_back(static_cast<double>(r.bytes), r.value);
    }
  }
  if (auto s = base::write_file(out, ftmpi::bench::plot_svg("ftbench: " + title, panels)); !s) {
    std::cerr << "ftbench: " << s.message() << "\n";
    return false;
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) { return run(argc, argv); }

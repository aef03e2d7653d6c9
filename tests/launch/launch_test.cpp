// Runs the real ftrun on the helper programs of this folder and checks what a user would see: exit
// statuses, the one-line failure report, forwarded output, and that no rank outlives the job.
//
// Nothing here sleeps and hopes: every wait is for an event (output, EOF, exit) with a generous deadline.
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <boost/test/unit_test.hpp>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <optional>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "ftmpi/rte/fd.hpp"
#include "ftmpi/rte/job.hpp"

using namespace std::chrono_literals;
using ftmpi::rte::UniqueFd;

extern char** environ;

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

constexpr auto kDeadline = 30s;  // far beyond any healthy run; only a hang reaches it

std::string helper(std::string_view name) { return std::string(HELPER_DIR) + "/" + std::string(name); }

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// The lines ftrun itself wrote to stderr.
std::vector<std::string> ftrun_lines(const std::string& err) {
  std::vector<std::string> out;
  for (const std::string& line : lines_of(err)) {
    if (line.starts_with("ftrun:")) out.push_back(line);
  }
  return out;
}

int poll_ms(Clock::time_point deadline) {
  auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - Clock::now()).count();
  return static_cast<int>(std::max<long long>(left, 0));
}

// Waits for `pid` to end (it must be our child), up to the deadline; its wait status, or nullopt.
std::optional<int> wait_child(pid_t pid, Clock::time_point deadline) {
  // Debian 12's <sys/pidfd.h> lacks C++ linkage, hence the raw system call.
  UniqueFd pidfd(static_cast<int>(syscall(SYS_pidfd_open, pid, 0)));
  if (!pidfd) return std::nullopt;
  pollfd p{pidfd.get(), POLLIN, 0};
  if (poll(&p, 1, poll_ms(deadline)) <= 0) return std::nullopt;
  int status = 0;
  if (waitpid(pid, &status, 0) != pid) return std::nullopt;
  return status;
}

// A directory for the ranks' pid files.
struct TempDir {
  TempDir() {
    std::string pattern = (fs::temp_directory_path() / "ftrun-test-XXXXXX").string();
    BOOST_REQUIRE(mkdtemp(pattern.data()) != nullptr);
    path = pattern;
  }
  ~TempDir() { fs::remove_all(path); }
  // The pid each rank wrote, indexed by rank.
  std::map<int, pid_t> rank_pids() const {
    std::map<int, pid_t> pids;
    for (const auto& entry : fs::directory_iterator(path)) {
      pid_t pid = 0;
      std::ifstream(entry.path()) >> pid;
      pids[std::stoi(entry.path().stem().string())] = pid;
    }
    return pids;
  }
  fs::path path;
};

struct Finished {
  int status = -1;  // raw wait status
  std::string out;
  std::string err;
  Clock::duration elapsed{};

  int exit_code() const { return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status); }
};

// A process under test (ftrun, or a helper alone) with stdout and stderr captured and stdin given.
class Process {
 public:
  Process(std::vector<std::string> argv, const TempDir& dir, std::optional<std::string> stdin_text = {},
          const std::vector<std::string>& extra_env = {}) {
    // The tests' environment must not leak parameters into ftrun.
    std::vector<std::string> env;
    for (char** e = environ; *e != nullptr; ++e) {
      if (!std::string_view(*e).starts_with("FTMPI_")) env.emplace_back(*e);
    }
    env.push_back("RTE_TEST_PID_DIR=" + dir.path.string());
    env.insert(env.end(), extra_env.begin(), extra_env.end());
    std::vector<char*> envp, args;
    for (std::string& e : env) envp.push_back(e.data());
    envp.push_back(nullptr);
    for (std::string& a : argv) args.push_back(a.data());
    args.push_back(nullptr);

    int in[2], out[2], err[2];
    BOOST_REQUIRE(pipe2(in, O_CLOEXEC) == 0 && pipe2(out, O_CLOEXEC) == 0 && pipe2(err, O_CLOEXEC) == 0);
    started_ = Clock::now();
    pid_ = fork();
    BOOST_REQUIRE(pid_ >= 0);
    if (pid_ == 0) {
      dup2(in[0], 0);
      dup2(out[1], 1);
      dup2(err[1], 2);
      execve(args[0], args.data(), envp.data());
      _exit(126);
    }
    close(in[0]);
    close(out[1]);
    close(err[1]);
    UniqueFd stdin_write(in[1]);
    if (stdin_text) {
      BOOST_REQUIRE(write(stdin_write.get(), stdin_text->data(), stdin_text->size()) ==
                    static_cast<ssize_t>(stdin_text->size()));
    }
    out_.reset(out[0]);
    err_.reset(err[0]);
  }
  Process(const Process&) = delete;
  Process& operator=(const Process&) = delete;
  ~Process() {
    if (!reaped_) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
  }

  pid_t pid() const { return pid_; }

  // Reads output until stdout holds `count` lines; false at EOF or the deadline.
  bool wait_for_lines(std::size_t count) {
    const auto deadline = Clock::now() + kDeadline;
    while (lines_of(out_text_).size() < count) {
      if (!pump(deadline)) return false;
    }
    return true;
  }

  void signal(int signo) { BOOST_REQUIRE(kill(pid_, signo) == 0); }

  // Reads until EOF on stdout and stderr, then reaps the process.
  Finished finish() {
    const auto deadline = Clock::now() + kDeadline;
    while (pump(deadline)) {
    }
    BOOST_REQUIRE_MESSAGE(!out_ && !err_, "the process kept its output open past the deadline");
    auto status = wait_child(pid_, deadline);
    BOOST_REQUIRE_MESSAGE(status.has_value(), "the process did not exit");
    reaped_ = true;
    return Finished{*status, out_text_, err_text_, Clock::now() - started_};
  }

 private:
  // One poll round over the open pipes; false when both are closed or the deadline passed.
  bool pump(Clock::time_point deadline) {
    if (!out_ && !err_) return false;
    pollfd fds[] = {{out_.get(), POLLIN, 0}, {err_.get(), POLLIN, 0}};
    if (poll(fds, 2, poll_ms(deadline)) <= 0) return false;
    for (int i = 0; i < 2; ++i) {
      if (fds[i].revents == 0) continue;
      UniqueFd& fd = i == 0 ? out_ : err_;
      char buffer[4096];
      ssize_t n = read(fd.get(), buffer, sizeof buffer);
      if (n <= 0) {
        fd.reset();
      } else {
        (i == 0 ? out_text_ : err_text_).append(buffer, static_cast<std::size_t>(n));
      }
    }
    return true;
  }

  pid_t pid_ = -1;
  bool reaped_ = false;
  UniqueFd out_, err_;
  std::string out_text_, err_text_;
  Clock::time_point started_;
};

std::vector<std::string> ftrun_args(std::vector<std::string> args) {
  args.insert(args.begin(), FTRUN_PATH);
  return args;
}

// Runs ftrun to its end.
Finished ftrun(const TempDir& dir, std::vector<std::string> args,
               std::optional<std::string> stdin_text = {}) {
  Process p(ftrun_args(std::move(args)), dir, std::move(stdin_text));
  return p.finish();
}

// Every rank wrote its pid file, and none of those processes exists any more.
void require_ranks_gone(const TempDir& dir, std::size_t ranks) {
  const auto pids = dir.rank_pids();
  BOOST_TEST(pids.size() == ranks);
  for (const auto& [rank, pid] : pids) {
    const bool gone = kill(pid, 0) == -1 && errno == ESRCH;
    BOOST_TEST(gone, "rank " << rank << " (pid " << pid << ") is still there");
  }
}

// Ranks orphaned by a killed ftrun are re-parented to this process, which can then reap them.
struct Subreaper {
  Subreaper() { prctl(PR_SET_CHILD_SUBREAPER, 1); }
};
BOOST_TEST_GLOBAL_FIXTURE(Subreaper);

void describe(const Finished& f) {
  BOOST_TEST_MESSAGE("exit " << f.exit_code() << "\n--- stdout\n" << f.out << "--- stderr\n" << f.err);
}

}  // namespace

BOOST_AUTO_TEST_SUITE(launch)

BOOST_AUTO_TEST_CASE(four_ranks_exchange_keys_and_exit_0) {
  TempDir dir;
  Finished f = ftrun(dir, {"-n", "4", helper("kv_exchange")});
  describe(f);
  BOOST_TEST(f.exit_code() == 0);
  BOOST_TEST(f.err.empty());
  const auto out = lines_of(f.out);
  BOOST_REQUIRE(out.size() == 4u);
  std::smatch m;
  BOOST_REQUIRE(std::regex_search(out[0], m, std::regex("\\(job ([0-9a-f]{16})\\)")));
  for (int r = 0; r < 4; ++r) {
    BOOST_TEST(f.out.find("rank " + std::to_string(r) + " of 4: exchange ok (job " + m[1].str() + ")") !=
               std::string::npos);
  }
  // The shared-memory segments the ranks created under the job's prefix are gone.
  const std::string prefix = ftmpi::rte::shm_prefix(std::stoull(m[1].str(), nullptr, 16));
  for (const auto& entry : fs::directory_iterator("/dev/shm")) {
    BOOST_TEST(!entry.path().filename().string().starts_with(prefix), entry.path() << " was left behind");
  }
  require_ranks_gone(dir, 4);
}

BOOST_AUTO_TEST_CASE(eight_ranks_bound_to_two_cores_finish) {
  TempDir dir;
  Finished f = ftrun(dir, {"-np", "8", "--bind-to", "core", helper("kv_exchange")});
  describe(f);
  BOOST_TEST(f.exit_code() == 0);
  BOOST_TEST(lines_of(f.out).size() == 8u);
  require_ranks_gone(dir, 8);
}

BOOST_AUTO_TEST_CASE(an_abort_ends_the_job_with_its_code_and_one_line) {
  TempDir dir;
  Finished f = ftrun(dir, {"-n", "3", helper("abort_rank1")});
  describe(f);
  BOOST_TEST(f.exit_code() == 3);
  BOOST_TEST((ftrun_lines(f.err) ==
              std::vector<std::string>{"ftrun: rank 1 aborted the job with error code 3: rank 1 gives up"}));
  BOOST_TEST(f.out == "rank 1 is about to abort");  // a partial last line, flushed at EOF
  BOOST_TEST((f.elapsed < 10s));
  require_ranks_gone(dir, 3);
}

BOOST_AUTO_TEST_CASE(a_rank_killed_by_a_signal_ends_the_job_with_128_plus_the_signal) {
  TempDir dir;
  Finished f = ftrun(dir, {"-n", "3", helper("kill_rank1")});
  describe(f);
  BOOST_TEST(f.exit_code() == 128 + SIGKILL);
  const auto lines = ftrun_lines(f.err);
  BOOST_REQUIRE(lines.size() == 1u);
  const std::string pid = std::to_string(dir.rank_pids().at(1));
  BOOST_TEST(lines[0] ==
             "ftrun: rank 1 (pid " + pid + ") was killed by signal 9 (Killed); terminating the job");
  require_ranks_gone(dir, 3);
}

BOOST_AUTO_TEST_CASE(a_rank_exiting_5_before_finalize_ends_the_job_with_5) {
  TempDir dir;
  Finished f = ftrun(dir, {"-n", "4", helper("exit5_rank2")});
  describe(f);
  BOOST_TEST(f.exit_code() == 5);
  const std::string pid = std::to_string(dir.rank_pids().at(2));
  BOOST_TEST((ftrun_lines(f.err) == std::vector<std::string>{"ftrun: rank 2 (pid " + pid +
                                                             ") exited with status 5; terminating the job"}));
  require_ranks_gone(dir, 4);
}

BOOST_AUTO_TEST_CASE(a_rank_exiting_0_without_finalize_fails_the_job) {
  TempDir dir;
  Finished f = ftrun(dir, {"-n", "2", helper("kv_exchange"), "--no-finalize"});
  describe(f);
  BOOST_TEST(f.exit_code() == 1);
  const auto lines = ftrun_lines(f.err);
  BOOST_REQUIRE(lines.size() == 1u);
  BOOST_TEST(lines[0].find("exited with status 0 without calling finalize") != std::string::npos);
  require_ranks_gone(dir, 2);
}

BOOST_AUTO_TEST_CASE(programs_that_do_not_use_the_protocol_may_simply_exit) {
  TempDir dir;
  Finished f = ftrun(dir, {"-n", "3", "true"});
  BOOST_TEST(f.exit_code() == 0);
  BOOST_TEST(f.err.empty());
}

BOOST_AUTO_TEST_CASE(tag_output_prefixes_every_line_with_its_rank) {
  TempDir dir;
  Finished f = ftrun(dir, {"-n", "3", "--tag-output", helper("kv_exchange")});
  describe(f);
  BOOST_TEST(f.exit_code() == 0);
  const auto out = lines_of(f.out);
  BOOST_TEST(out.size() == 3u);
  for (const std::string& line : out) {
    std::smatch m;
    BOOST_TEST(std::regex_match(line, m, std::regex(R"(\[(\d)\] rank (\d) of 3: exchange ok .*)")), line);
    BOOST_TEST(m[1].str() == m[2].str());
  }
  // Both streams; a partial last line gets its own line.
  Finished sh = ftrun(dir, {"-n", "2", "--tag-output", "sh", "-c", "printf 'a\\nb'; echo c >&2"});
  BOOST_TEST(sh.exit_code() == 0);
  auto sorted = lines_of(sh.out);
  std::sort(sorted.begin(), sorted.end());
  BOOST_TEST((sorted == std::vector<std::string>{"[0] a", "[0] b", "[1] a", "[1] b"}));
  BOOST_TEST(sh.out.ends_with("\n"));
  auto err = lines_of(sh.err);
  std::sort(err.begin(), err.end());
  BOOST_TEST((err == std::vector<std::string>{"[0] c", "[1] c"}));
}

BOOST_AUTO_TEST_CASE(output_passes_unchanged_without_tags) {
  TempDir dir;
  Finished f = ftrun(dir, {"-n", "1", "sh", "-c", "printf 'x\\ny'"});
  BOOST_TEST(f.exit_code() == 0);
  BOOST_TEST(f.out == "x\ny");
}

BOOST_AUTO_TEST_CASE(stdin_reaches_rank_0_and_only_rank_0) {
  TempDir dir;
  Finished f = ftrun(dir, {"-n", "3", helper("echo_stdin")}, std::string("one\ntwo\n"));
  describe(f);
  BOOST_TEST(f.exit_code() == 0);
  BOOST_TEST(f.out == "echo: one\necho: two\n");
  require_ranks_gone(dir, 3);
}

BOOST_AUTO_TEST_CASE(a_timeout_ends_the_job_with_124) {
  TempDir dir;
  Finished f = ftrun(dir, {"-n", "2", "--timeout", "0.5", helper("sleep_forever")});
  describe(f);
  BOOST_TEST(f.exit_code() == 124);
  BOOST_TEST((ftrun_lines(f.err) ==
              std::vector<std::string>{"ftrun: the job timed out after 0.5 s; terminating the job"}));
  BOOST_TEST((f.elapsed >= 500ms));
  BOOST_TEST((f.elapsed < 10s));
  require_ranks_gone(dir, 2);
}

BOOST_AUTO_TEST_CASE(sigterm_to_ftrun_is_forwarded_to_every_rank) {
  TempDir dir;
  Process p(ftrun_args({"-n", "3", helper("sleep_forever")}), dir);
  BOOST_REQUIRE(p.wait_for_lines(3));
  p.signal(SIGTERM);
  Finished f = p.finish();
  describe(f);
  BOOST_TEST(f.exit_code() == 128 + SIGTERM);
  BOOST_TEST(
      (ftrun_lines(f.err) ==
       std::vector<std::string>{"ftrun: received signal 15 (Terminated) and forwarded it to the ranks"}));
  require_ranks_gone(dir, 3);
}

BOOST_AUTO_TEST_CASE(ranks_ignoring_the_signal_are_killed_after_the_grace) {
  TempDir dir;
  Process p(
      ftrun_args({"-n", "2", "--param", "rte.kill_grace=200ms", helper("sleep_forever"), "--ignore-signals"}),
      dir);
  BOOST_REQUIRE(p.wait_for_lines(2));
  const auto signalled = Clock::now();
  p.signal(SIGINT);
  Finished f = p.finish();
  describe(f);
  BOOST_TEST(f.exit_code() == 128 + SIGINT);
  BOOST_TEST((Clock::now() - signalled >= 200ms));
  require_ranks_gone(dir, 2);
}

BOOST_AUTO_TEST_CASE(ranks_die_with_ftrun_even_when_it_is_killed) {
  TempDir dir;
  Process p(ftrun_args({"-n", "2", helper("sleep_forever"), "--ignore-signals"}), dir);
  BOOST_REQUIRE(p.wait_for_lines(2));
  p.signal(SIGKILL);
  (void)p.finish();
  // PR_SET_PDEATHSIG killed them; as orphans they were re-parented to this process (a subreaper).
  for (const auto& [rank, pid] : dir.rank_pids()) {
    auto status = wait_child(pid, Clock::now() + kDeadline);
    BOOST_REQUIRE_MESSAGE(status.has_value(), "rank " << rank << " survived ftrun");
    BOOST_TEST(WIFSIGNALED(*status));
    BOOST_TEST(WTERMSIG(*status) == SIGKILL);
  }
}

BOOST_AUTO_TEST_CASE(a_wrong_flag_gives_exit_2_and_one_line) {
  TempDir dir;
  Finished f = ftrun(dir, {"--frobnicate", "-n", "2", helper("kv_exchange")});
  BOOST_TEST(f.exit_code() == 2);
  BOOST_TEST((lines_of(f.err) == std::vector<std::string>{"ftrun: error: unknown option '--frobnicate'",
                                                          "Run with --help for more information."}));
  BOOST_TEST(f.out.empty());
  BOOST_TEST(dir.rank_pids().empty());

  for (std::vector<std::string> bad : {std::vector<std::string>{"-n", "0", "true"},
                                       {"-n", "two", "true"},
                                       {"-n", "2"},
                                       {"true"},
                                       {"-n", "2", "--timeout", "-1", "true"},
                                       {"-n", "2", "--bind-to", "socket", "true"}}) {
    Finished b = ftrun(dir, bad);
    BOOST_TEST(b.exit_code() == 2);
    const auto lines = lines_of(b.err);
    BOOST_TEST(lines.size() == 2u);
    BOOST_TEST(lines.front().starts_with("ftrun: error: "));
  }
}

BOOST_AUTO_TEST_CASE(an_unknown_param_is_rejected) {
  TempDir dir;
  Finished f = ftrun(dir, {"-n", "1", "--param", "rte.kill_grase=1s", "true"});
  BOOST_TEST(f.exit_code() == 2);
  BOOST_TEST(f.err.find("unknown parameter 'rte.kill_grase'") != std::string::npos);
  Finished bad_value = ftrun(dir, {"-n", "1", "--param", "rte.kill_grace=soon", "true"});
  BOOST_TEST(bad_value.exit_code() == 2);
  BOOST_TEST(bad_value.err.find("rte.kill_grace") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(an_unknown_program_is_rejected_before_launch) {
  TempDir dir;
  Finished f = ftrun(dir, {"-n", "2", "no-such-program-ftmpi"});
  BOOST_TEST(f.exit_code() == 127);
  BOOST_TEST((lines_of(f.err) ==
              std::vector<std::string>{"ftrun: error: cannot find program 'no-such-program-ftmpi'"}));
}

BOOST_AUTO_TEST_CASE(params_and_the_environment_contract_reach_every_rank) {
  TempDir dir;
  Finished f = ftrun(dir, {"-n", "2", "--tag-output", "--param", "rte.connect_timeout=7s", "sh", "-c",
                           "echo $FTMPI_RANK/$FTMPI_SIZE $FTMPI_LOCAL_RANK/$FTMPI_LOCAL_SIZE "
                           "$FTMPI_RTE_CONNECT_TIMEOUT ${#FTMPI_RTE_SECRET} $FTMPI_RTE_ADDR"});
  describe(f);
  BOOST_TEST(f.exit_code() == 0);
  auto out = lines_of(f.out);
  std::sort(out.begin(), out.end());
  BOOST_REQUIRE(out.size() == 2u);
  BOOST_TEST(std::regex_match(out[0], std::regex(R"(\[0\] 0/2 0/2 7s 64 127\.0\.0\.1:\d+)")), out[0]);
  BOOST_TEST(std::regex_match(out[1], std::regex(R"(\[1\] 1/2 1/2 7s 64 127\.0\.0\.1:\d+)")), out[1]);
}

BOOST_AUTO_TEST_CASE(bind_to_core_gives_ranks_distinct_cores) {
  cpu_set_t mine;
  BOOST_REQUIRE(sched_getaffinity(0, sizeof mine, &mine) == 0);
  if (CPU_COUNT(&mine) < 2) {
    BOOST_TEST_MESSAGE("skipped: this process may run on fewer than 2 CPUs");
    return;
  }
  TempDir dir;
  Finished f = ftrun(dir, {"-n", "2", "--bind-to", "core", "--tag-output", "sh", "-c",
                           "grep Cpus_allowed_list /proc/self/status"});
  describe(f);
  BOOST_TEST(f.exit_code() == 0);
  auto out = lines_of(f.out);
  std::sort(out.begin(), out.end());
  BOOST_REQUIRE(out.size() == 2u);
  const std::string cpus0 = out[0].substr(out[0].find('\t') + 1);
  const std::string cpus1 = out[1].substr(out[1].find('\t') + 1);
  BOOST_TEST(cpus0 != cpus1);
  Finished unbound = ftrun(dir, {"-n", "1", "sh", "-c", "grep Cpus_allowed_list /proc/self/status"});
  BOOST_TEST(unbound.out.substr(unbound.out.find('\t') + 1) != cpus0 + "\n");
}

BOOST_AUTO_TEST_CASE(a_program_run_alone_is_a_singleton) {
  TempDir dir;
  Process p({helper("kv_exchange")}, dir);
  Finished f = p.finish();
  describe(f);
  BOOST_TEST(f.exit_code() == 0);
  BOOST_TEST(f.out.starts_with("rank 0 of 1: exchange ok"));
}

BOOST_AUTO_TEST_CASE(a_rank_started_by_hand_with_part_of_the_contract_is_told_why) {
  TempDir dir;
  Process p({helper("kv_exchange")}, dir, {}, {"FTMPI_RANK=0"});
  Finished f = p.finish();
  BOOST_TEST(f.exit_code() == 99);
  BOOST_TEST(f.err.find("FTMPI_SIZE is not set") != std::string::npos, f.err);
}

BOOST_AUTO_TEST_CASE(help_version_and_help_params_exit_0) {
  TempDir dir;
  Finished help = ftrun(dir, {"--help"});
  BOOST_TEST(help.exit_code() == 0);
  BOOST_TEST(help.out.starts_with("Usage: ftrun -n N [options] [--] program [args...]"));
  BOOST_TEST(help.out.find("Examples:") != std::string::npos);
  BOOST_TEST(help.out.find("Exit status:") != std::string::npos);
  Finished version = ftrun(dir, {"--version"});
  BOOST_TEST(version.exit_code() == 0);
  BOOST_TEST(version.out.starts_with("ftrun (ftmpi) "));
  Finished params = ftrun(dir, {"--help-params", "--param", "rte.kill_grace=3s"});
  BOOST_TEST(params.exit_code() == 0);
  BOOST_TEST(params.out.find("rte.kill_grace") != std::string::npos);
  BOOST_TEST(params.out.find("now 3s") != std::string::npos);
}

BOOST_AUTO_TEST_SUITE_END()

// What the launch tests share: running a process (ftrun, a helper alone, or ftrun inside a simulated host)
// with its output captured, and the checks a user would make of what it printed and left behind.
//
// Nothing here sleeps and hopes: every wait is for an event (output, EOF, exit) with a generous deadline.
#pragma once

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <boost/test/unit_test.hpp>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <regex>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "ftmpi/rte/fd.hpp"

extern char** environ;

namespace ftmpi::launch_test {

using namespace std::chrono_literals;
using rte::UniqueFd;
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

inline constexpr auto kDeadline = 30s;  // far beyond any healthy run; only a hang reaches it

inline std::string helper(std::string_view name) { return std::string(HELPER_DIR) + "/" + std::string(name); }

inline std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// The lines ftrun itself wrote to stderr.
inline std::vector<std::string> ftrun_lines(const std::string& err) {
  std::vector<std::string> out;
  for (const std::string& line : lines_of(err)) {
    if (line.starts_with("ftrun:")) out.push_back(line);
  }
  return out;
}

inline int poll_ms(Clock::time_point deadline) {
  auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - Clock::now()).count();
  return static_cast<int>(std::max<long long>(left, 0));
}

// Waits for `pid` to end (it must be our child), up to the deadline; its wait status, or nullopt.
inline std::optional<int> wait_child(pid_t pid, Clock::time_point deadline) {
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
  // What the process has printed on stdout so far (wait_for_lines reads it).
  const std::string& out_so_far() const { return out_text_; }

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

inline std::vector<std::string> ftrun_args(std::vector<std::string> args) {
  args.insert(args.begin(), FTRUN_PATH);
  return args;
}

// Runs ftrun to its end.
inline Finished ftrun(const TempDir& dir, std::vector<std::string> args,
                      std::optional<std::string> stdin_text = {}) {
  Process p(ftrun_args(std::move(args)), dir, std::move(stdin_text));
  return p.finish();
}

// Every rank wrote its pid file, and none of those processes exists any more.
inline void require_ranks_gone(const TempDir& dir, std::size_t ranks) {
  const auto pids = dir.rank_pids();
  BOOST_TEST(pids.size() == ranks);
  for (const auto& [rank, pid] : pids) {
    const bool gone = kill(pid, 0) == -1 && errno == ESRCH;
    BOOST_TEST(gone, "rank " << rank << " (pid " << pid << ") is still there");
  }
}

inline void describe(const Finished& f) {
  BOOST_TEST_MESSAGE("exit " << f.exit_code() << "\n--- stdout\n" << f.out << "--- stderr\n" << f.err);
}

// Checks that kv_exchange's `ranks` ranks each reported a good exchange, all in one job; returns the job id.
inline std::uint64_t expect_exchange_ok(const Finished& f, int ranks) {
  const auto out = lines_of(f.out);
  BOOST_REQUIRE(out.size() == static_cast<std::size_t>(ranks));
  std::smatch m;
  BOOST_REQUIRE(std::regex_search(out[0], m, std::regex("\\(job ([0-9a-f]{16})\\)")));
  for (int r = 0; r < ranks; ++r) {
    BOOST_TEST(f.out.find("rank " + std::to_string(r) + " of " + std::to_string(ranks) + ": exchange ok (job " +
                          m[1].str() + ")") != std::string::npos);
  }
  return std::stoull(m[1].str(), nullptr, 16);
}

}  // namespace ftmpi::launch_test

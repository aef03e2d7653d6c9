// run_captured (process.hpp): another program run to its end, its stdout and stderr kept apart and whole,
// its exit status (or signal) passed through, its environment ours plus the extra variables.
#include "ftmpi/base/process.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <boost/test/unit_test.hpp>
#include <csignal>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

using namespace ftmpi::base;

namespace {

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// Sets an environment variable for the test's length and puts back what was there.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value != nullptr) {
      ::setenv(name, value, 1);
    } else {
      ::unsetenv(name);
    }
  }
  ~ScopedEnv() {
    if (old_) {
      ::setenv(name_.c_str(), old_->c_str(), 1);
    } else {
      ::unsetenv(name_.c_str());
    }
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  std::string name_;
  std::optional<std::string> old_;
};

}  // namespace

BOOST_AUTO_TEST_SUITE(process)

BOOST_AUTO_TEST_CASE(stdout_and_stderr_are_captured_apart) {
  auto r = run_captured({"/bin/sh", "-c", "printf 'to out\\n'; printf 'to err\\n' >&2; printf 'more out'"});
  BOOST_TEST_REQUIRE(r.is_ok(), r.status().to_string());
  BOOST_TEST(r->status == 0);
  BOOST_TEST(r->out == "to out\nmore out");
  BOOST_TEST(r->err == "to err\n");
}

BOOST_AUTO_TEST_CASE(a_megabyte_on_each_stream_interleaved_is_captured_whole_and_in_order) {
  // 1024 lines of 1 KB on each stream, alternating: far more than a pipe holds, so the child blocks on one
  // stream unless both are drained as it writes.
  const std::string a(1019, 'a'), b(1019, 'b');
  const char* script =
      "i=1000; while [ $i -lt 2024 ]; do printf '%d%s\\n' $i \"$1\"; printf '%d%s\\n' $i \"$2\" >&2; i=$((i+1)); done";
  auto r = run_captured({"/bin/sh", "-c", script, "sh", a, b});
  BOOST_TEST_REQUIRE(r.is_ok(), r.status().to_string());
  std::string want_out, want_err;
  for (int i = 1000; i < 2024; ++i) {
    want_out += std::to_string(i) + a + "\n";
    want_err += std::to_string(i) + b + "\n";
  }
  BOOST_TEST(want_out.size() == 1024u * 1024u);
  BOOST_TEST(r->status == 0);
  BOOST_TEST(r->out.size() == want_out.size());
  BOOST_TEST(r->err.size() == want_err.size());
  BOOST_TEST((r->out == want_out));
  BOOST_TEST((r->err == want_err));
}

BOOST_AUTO_TEST_CASE(a_megabyte_written_at_once_on_each_stream_is_captured_whole) {
  // The other shape: all of stdout first (blocking while stderr waits), then all of stderr.
  auto r = run_captured({"/bin/sh", "-c", "head -c 1048576 /dev/zero | tr '\\0' x; head -c 1048577 /dev/zero | tr '\\0' y >&2"});
  BOOST_TEST_REQUIRE(r.is_ok(), r.status().to_string());
  BOOST_TEST(r->status == 0);
  BOOST_TEST((r->out == std::string(1048576, 'x')));
  BOOST_TEST((r->err == std::string(1048577, 'y')));
}

BOOST_AUTO_TEST_CASE(the_exit_status_is_passed_through) {
  for (int status : {0, 1, 3, 42, 126, 255}) {
    BOOST_TEST_CONTEXT("exit " << status) {
      auto r = run_captured({"/bin/sh", "-c", "exit " + std::to_string(status)});
      BOOST_TEST_REQUIRE(r.is_ok(), r.status().to_string());
      BOOST_TEST(r->status == status);
      BOOST_TEST(r->out.empty());
      BOOST_TEST(r->err.empty());
    }
  }
}

BOOST_AUTO_TEST_CASE(a_child_killed_by_a_signal_is_128_plus_the_signal) {
  for (int sig : {SIGKILL, SIGTERM, SIGSEGV}) {
    BOOST_TEST_CONTEXT("signal " << sig) {
      auto r = run_captured({"/bin/sh", "-c", "printf before; kill -" + std::to_string(sig) + " $$; printf after"});
      BOOST_TEST_REQUIRE(r.is_ok(), r.status().to_string());
      BOOST_TEST(r->status == 128 + sig);
      BOOST_TEST(r->out == "before");
    }
  }
}

BOOST_AUTO_TEST_CASE(a_missing_program_exits_127_and_says_it_cannot_run) {
  for (const std::string program : {"ftmpi-process-test-no-such-program", "/nonexistent/dir/ftmpi-no-such-program"}) {
    BOOST_TEST_CONTEXT(program) {
      auto r = run_captured({program, "an argument"});
      BOOST_TEST_REQUIRE(r.is_ok(), r.status().to_string());  // it started: the program is what is missing
      BOOST_TEST(r->status == 127);
      BOOST_TEST(r->out.empty());
      BOOST_TEST(r->err.find("cannot run " + program) != std::string::npos, r->err);
      BOOST_TEST(r->err.find("No such file") != std::string::npos, r->err);
    }
  }
}

BOOST_AUTO_TEST_CASE(no_program_at_all_is_invalid_argument) {
  auto r = run_captured({});
  BOOST_TEST(!r.is_ok());
  BOOST_TEST((r.code() == Errc::invalid_argument));
}

BOOST_AUTO_TEST_CASE(arguments_reach_the_program_as_given_and_the_program_is_found_on_path) {
  auto r = run_captured({"sh", "-c", "printf '[%s]' \"$@\"", "sh", "a b", "", "$HOME", "'q'"});
  BOOST_TEST_REQUIRE(r.is_ok(), r.status().to_string());
  BOOST_TEST(r->status == 0);
  BOOST_TEST(r->out == "[a b][][$HOME]['q']");
}

BOOST_AUTO_TEST_CASE(extra_env_replaces_a_variable_of_the_same_name_and_adds_new_ones) {
  ScopedEnv a("FTMPI_PROCESS_TEST_A", "old");
  ScopedEnv ab("FTMPI_PROCESS_TEST_AB", "kept");  // a longer name with the same beginning is another variable
  ScopedEnv b("FTMPI_PROCESS_TEST_B", nullptr);
  auto r = run_captured({"env"}, {"FTMPI_PROCESS_TEST_A=new", "FTMPI_PROCESS_TEST_B=added=with=equals"});
  BOOST_TEST_REQUIRE(r.is_ok(), r.status().to_string());
  BOOST_TEST(r->status == 0);
  const std::string env = "\n" + r->out;
  BOOST_TEST(count(env, "\nFTMPI_PROCESS_TEST_A=") == 1u, env);
  BOOST_TEST(count(env, "\nFTMPI_PROCESS_TEST_A=new\n") == 1u);
  BOOST_TEST(count(env, "\nFTMPI_PROCESS_TEST_AB=kept\n") == 1u);
  BOOST_TEST(count(env, "\nFTMPI_PROCESS_TEST_B=added=with=equals\n") == 1u);
  BOOST_TEST(env.find("=old\n") == std::string::npos);
  // The rest of our environment is there too, and ours is left alone.
  BOOST_TEST(count(env, "\nPATH=") == 1u);
  BOOST_TEST(std::string(std::getenv("FTMPI_PROCESS_TEST_A")) == "old");
  BOOST_TEST(std::getenv("FTMPI_PROCESS_TEST_B") == nullptr);

  auto shell = run_captured({"/bin/sh", "-c", "printf '%s|%s|%s' \"$FTMPI_PROCESS_TEST_A\" \"$FTMPI_PROCESS_TEST_AB\" \"$FTMPI_PROCESS_TEST_B\""},
                            {"FTMPI_PROCESS_TEST_A=new", "FTMPI_PROCESS_TEST_B=added"});
  BOOST_TEST_REQUIRE(shell.is_ok(), shell.status().to_string());
  BOOST_TEST(shell->out == "new|kept|added");
}

BOOST_AUTO_TEST_CASE(without_extra_env_the_child_sees_our_environment) {
  ScopedEnv a("FTMPI_PROCESS_TEST_A", "ours");
  auto r = run_captured({"/bin/sh", "-c", "printf '%s' \"$FTMPI_PROCESS_TEST_A\""});
  BOOST_TEST_REQUIRE(r.is_ok(), r.status().to_string());
  BOOST_TEST(r->out == "ours");
}

BOOST_AUTO_TEST_CASE(stdin_is_dev_null_and_the_child_reads_end_of_file) {
  auto r = run_captured({"/bin/sh", "-c", "if read line; then echo 'read a line'; else echo eof; fi; wc -c"});
  BOOST_TEST_REQUIRE(r.is_ok(), r.status().to_string());
  BOOST_TEST(r->status == 0);
  BOOST_TEST(r->out == "eof\n0\n");
  auto link = run_captured({"readlink", "/proc/self/fd/0"});
  BOOST_TEST_REQUIRE(link.is_ok(), link.status().to_string());
  BOOST_TEST(link->out == "/dev/null\n");
}

BOOST_AUTO_TEST_CASE(output_left_without_a_final_newline_and_binary_bytes_are_kept) {
  auto r = run_captured({"/bin/sh", "-c", "printf 'a\\000b\\377'; printf '\\000' >&2"});
  BOOST_TEST_REQUIRE(r.is_ok(), r.status().to_string());
  BOOST_TEST((r->out == std::string("a\0b\xff", 4)));
  BOOST_TEST((r->err == std::string("\0", 1)));
}

// A tool started with its stdin and stdout closed (a daemon, `prog <&- >&-`): the pipes it makes take
// descriptors 0 and 1, and the child's stdout must still reach `out`. Run in a child of the test, so
// that the test's own descriptors are left alone; it answers through its exit status.
BOOST_AUTO_TEST_CASE(a_caller_with_stdin_and_stdout_closed_still_captures_stdout) {
  const pid_t pid = ::fork();
  BOOST_TEST_REQUIRE(pid >= 0);
  if (pid == 0) {
    ::close(STDIN_FILENO);
    ::close(STDOUT_FILENO);
    auto r = run_captured({"/bin/sh", "-c", "printf out; printf err >&2"});
    int answer = 0;
    if (!r.is_ok()) {
      answer = 10;
    } else if (r->out != "out") {
      answer = r->out.empty() ? 11 : 12;
    } else if (r->err != "err") {
      answer = 13;
    }
    ::_exit(answer);
  }
  int status = 0;
  BOOST_TEST_REQUIRE(::waitpid(pid, &status, 0) == pid);
  BOOST_TEST_REQUIRE(WIFEXITED(status));
  const int answer = WEXITSTATUS(status);
  BOOST_TEST(answer == 0, "answer " << answer << (answer == 10   ? ": run_captured failed"
                                                  : answer == 11 ? ": stdout came back empty"
                                                  : answer == 12 ? ": stdout came back wrong"
                                                  : answer == 13 ? ": stderr came back wrong"
                                                                 : ""));
}

// SIGCHLD ignored (inherited that way across exec, as some launchers leave it) makes the kernel reap the
// child itself, so its status cannot be read: that must not come back as a success.
BOOST_AUTO_TEST_CASE(a_status_that_cannot_be_read_is_not_reported_as_success) {
  struct sigaction ignore {}, old {};
  ignore.sa_handler = SIG_IGN;
  sigemptyset(&ignore.sa_mask);
  ::sigaction(SIGCHLD, &ignore, &old);
  auto r = run_captured({"/bin/sh", "-c", "exit 3"});
  ::sigaction(SIGCHLD, &old, nullptr);
  if (r.is_ok()) {
    BOOST_TEST(r->status != 0, "exit 3 reported as status " << r->status);
  }
}

BOOST_AUTO_TEST_SUITE_END()

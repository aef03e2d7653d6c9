// The launch agent's command line: quoting that survives a real shell, the environment it carries, and the
// secret that travels on stdin instead.
#include "ftmpi/rte/remote.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <boost/test/unit_test.hpp>
#include <random>
#include <string>
#include <vector>

#include "ftmpi/rte/fd.hpp"
#include "ftmpi/rte/job.hpp"
#include "ftmpi/test/seed.hpp"

using namespace ftmpi::rte;

namespace {

struct ShellRun {
  int status = -1;
  std::string out;
};

// Runs /bin/sh -c `line` as an agent's remote end would, with `input` on stdin; collects stdout.
ShellRun run_sh(const std::string& line, const std::string& input = {}) {
  int in[2], out[2];
  BOOST_REQUIRE(pipe2(in, O_CLOEXEC) == 0 && pipe2(out, O_CLOEXEC) == 0);
  const pid_t pid = fork();
  BOOST_REQUIRE(pid >= 0);
  if (pid == 0) {
    dup2(in[0], 0);
    dup2(out[1], 1);
    execl("/bin/sh", "sh", "-c", line.c_str(), static_cast<char*>(nullptr));
    _exit(126);
  }
  close(in[0]);
  close(out[1]);
  UniqueFd to_child(in[1]);
  UniqueFd from_child(out[0]);
  // Small inputs only: they fit the pipe, so writing before reading cannot deadlock.
  BOOST_REQUIRE(input.size() < 4096);
  BOOST_REQUIRE(write(to_child.get(), input.data(), input.size()) == static_cast<ssize_t>(input.size()));
  to_child.reset();
  ShellRun run;
  char buffer[4096];
  for (ssize_t n; (n = read(from_child.get(), buffer, sizeof buffer)) > 0;) {
    run.out.append(buffer, static_cast<std::size_t>(n));
  }
  BOOST_REQUIRE(waitpid(pid, &run.status, 0) == pid);
  return run;
}

// The words a shell reads back from the quoted `words`, printed NUL-separated by printf.
std::vector<std::string> round_trip(const std::vector<std::string>& words) {
  std::string line = "printf '%s\\0'";
  for (const std::string& w : words) line += " " + shell_quote(w);
  ShellRun run = run_sh(line);
  BOOST_REQUIRE(WIFEXITED(run.status) && WEXITSTATUS(run.status) == 0);
  std::vector<std::string> back;
  std::size_t start = 0;
  for (std::size_t nul; (nul = run.out.find('\0', start)) != std::string::npos; start = nul + 1) {
    back.push_back(run.out.substr(start, nul - start));
  }
  return back;
}

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  std::size_t start = 0;
  for (std::size_t nl; (nl = text.find('\n', start)) != std::string::npos; start = nl + 1) {
    out.push_back(text.substr(start, nl - start));
  }
  return out;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(remote)

BOOST_AUTO_TEST_CASE(quoted_words_come_back_unchanged_through_sh) {
  const std::vector<std::string> words = {"plain", "",          "two words", "it's",        "\"double\"",
                                          "$HOME", "`id`",      "$(id)",     "back\\slash", "new\nline",
                                          "*",     "~",         "a;b&c|d",   "!x",          "-n",
                                          "x=y",   "tab\there", "'",         "''",          "ünïcødé",
                                          "{a,b}", "#comment",  "<in>out",   "%1",          "a:b@c,d+e"};
  BOOST_TEST(round_trip(words) == words, boost::test_tools::per_element());
  // Safe words stay readable; the rest get quotes.
  BOOST_TEST(shell_quote("/usr/bin/ring") == "/usr/bin/ring");
  BOOST_TEST(shell_quote("it's") == "'it'\\''s'");
  BOOST_TEST(shell_quote("") == "''");
}

BOOST_AUTO_TEST_CASE(random_words_come_back_unchanged_through_sh) {
  const auto seed = ftmpi::test::seed_for("random_words_come_back_unchanged_through_sh");
  BOOST_TEST_CONTEXT("seed " << seed) {
    std::mt19937_64 rng(seed);
    std::uniform_int_distribution<int> byte(1, 255);  // anything but NUL, which no argument can hold
    std::uniform_int_distribution<int> length(0, 12);
    std::vector<std::string> words(40);
    for (std::string& w : words) {
      for (int i = length(rng); i > 0; --i) w += static_cast<char>(byte(rng));
    }
    BOOST_TEST(round_trip(words) == words, boost::test_tools::per_element());
  }
}

BOOST_AUTO_TEST_CASE(the_command_carries_environment_and_arguments_and_reads_the_secret_from_stdin) {
  RemoteCommand command;
  command.working_directory = "/";
  command.environment = {"FTMPI_RANK=3", "TRICKY=a 'b' \"c\" $d\nnext"};
  command.program = "/bin/sh";
  command.args = {"-c",
                  "printf '%s\\n' \"$FTMPI_RANK\" \"$TRICKY\" \"$FTMPI_RTE_SECRET\" \"$(pwd)\" \"$@\"; "
                  "cat",  // what stdin holds after the secret line
                  "sh", "arg one", "it's"};
  auto line = remote_command_line(command);
  BOOST_REQUIRE_MESSAGE(line.is_ok(), line.status().to_string());
  const std::string secret(64, 'c');
  ShellRun run = run_sh(*line, secret + "\nrank 0's own input\n");
  BOOST_TEST(WIFEXITED(run.status));
  BOOST_TEST(WEXITSTATUS(run.status) == 0);
  BOOST_TEST(lines(run.out) == (std::vector<std::string>{"3", "a 'b' \"c\" $d", "next", secret, "/",
                                                         "arg one", "it's", "rank 0's own input"}),
             boost::test_tools::per_element());
  BOOST_TEST(line->find(secret) == std::string::npos);
}

BOOST_AUTO_TEST_CASE(without_a_secret_line_the_shell_exits_255_before_the_program) {
  RemoteCommand command;
  command.program = "/bin/echo";
  command.args = {"started"};
  auto line = remote_command_line(command);
  BOOST_REQUIRE(line.is_ok());
  ShellRun run = run_sh(*line, "");
  BOOST_TEST(WIFEXITED(run.status));
  BOOST_TEST(WEXITSTATUS(run.status) == 255);
  BOOST_TEST(run.out.empty());
}

BOOST_AUTO_TEST_CASE(a_missing_working_directory_falls_back_to_home) {
  RemoteCommand command;
  command.working_directory = "/no/such/directory/ftmpi";
  command.environment = {"HOME=/tmp"};
  command.program = "/bin/pwd";
  auto line = remote_command_line(command);
  BOOST_REQUIRE(line.is_ok());
  // HOME for the shell's own `cd` comes from its environment, as on a remote host after login.
  ShellRun run = run_sh("HOME=/tmp; " + *line, "secret\n");
  BOOST_TEST(run.out == "/tmp\n");
}

BOOST_AUTO_TEST_CASE(commands_that_cannot_be_written_are_refused) {
  RemoteCommand with_equals;
  with_equals.program = "/opt/a=b/prog";
  BOOST_TEST((remote_command_line(with_equals).code() == ftmpi::base::Errc::invalid_argument));
  RemoteCommand too_long;
  too_long.program = "/bin/true";
  too_long.environment = {"BIG=" + std::string(kMaxCommandLineBytes, 'x')};
  auto refused = remote_command_line(too_long);
  BOOST_REQUIRE(!refused);
  BOOST_TEST(refused.status().message().find("unset what the ranks do not need") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(session_variables_stay_home_and_the_rest_travels) {
  for (const char* name :
       {"PATH", "LD_LIBRARY_PATH", "FTMPI_PATH_KINDS", "OMP_NUM_THREADS", "RTE_TEST_PID_DIR"}) {
    BOOST_TEST(forwarded_to_remote(name), name);
  }
  for (const char* name : {"HOSTNAME", "PWD", "HOME", "SHLVL", "_", "SSH_AUTH_SOCK", "XDG_RUNTIME_DIR",
                           "DISPLAY", "BASH_FUNC_f%%", "A.B", "1X", ""}) {
    BOOST_TEST(!forwarded_to_remote(name), name);
  }
}

BOOST_AUTO_TEST_CASE(the_agent_command_splits_on_spaces) {
  BOOST_TEST(split_agent_command("ssh") == std::vector<std::string>{"ssh"});
  BOOST_TEST(split_agent_command("  ssh -p 2222  -o BatchMode=yes ") ==
                 (std::vector<std::string>{"ssh", "-p", "2222", "-o", "BatchMode=yes"}),
             boost::test_tools::per_element());
  BOOST_TEST(split_agent_command("").empty());
}

BOOST_AUTO_TEST_SUITE_END()

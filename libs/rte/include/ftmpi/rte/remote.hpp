// Starting ftrun's agent on another host (ftrun-host, host_agent.hpp) through a launch agent called
// exactly like ssh:
//
//   AGENT [agent args...] HOST COMMAND
//
// COMMAND is one command line that the agent hands to a POSIX shell on HOST. ssh forwards no
// environment, so COMMAND carries what ftrun forwards to the ranks (env(1) assignments), which the
// agent passes on to them; it does not carry FTMPI_RTE_SECRET, which a command line would show to every
// user of both hosts (ps): the shell reads the secret from the first line of its stdin, which ftrun
// writes before anything else:
//
//   cd '/work/dir' 2>/dev/null || cd; IFS= read -r FTMPI_RTE_SECRET || exit 255;
//   export FTMPI_RTE_SECRET; exec env 'FTMPI_RTE_ADDR=...' ... '/abs/ftrun-host' --host node2
//
// (one line). `exec` all the way makes the agent the shell's own process, so a signal that reaches the
// shell (an agent that execs it, or ssh's hang-up) reaches it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "ftmpi/base/status.hpp"

namespace ftmpi::rte {

// Linux's limit on one argument of execve (MAX_ARG_STRLEN, 32 pages), less its terminating NUL: the
// longest COMMAND an agent can be given.
inline constexpr std::size_t kMaxCommandLineBytes = 32 * 4096 - 1;

// Splits --launch-agent's text on spaces: "ssh -p 2222" -> {"ssh", "-p", "2222"}.
std::vector<std::string> split_agent_command(std::string_view text);

// `word` as a POSIX shell must read it to get `word` back: unchanged when it is made only of characters
// no shell treats specially, else in single quotes, with each ' written as '\''.
std::string shell_quote(std::string_view word);

// Whether the variable `name` of ftrun's environment is passed to ranks on other hosts. Everything is,
// as for local ranks, except what describes ftrun's own host or login session rather than the job
// (HOSTNAME, PWD, SHLVL, HOME, USER, SSH_*, DISPLAY, TERM, XDG_*, ...) and names a shell cannot export.
bool forwarded_to_remote(std::string_view name);

struct RemoteCommand {
  // Tried first; if it does not exist there, the rank runs in its home directory.
  std::string working_directory;
  // "NAME=value" entries for env(1), FTMPI_RTE_SECRET excluded (it comes on stdin).
  std::vector<std::string> environment;
  std::string program;  // an absolute path, the same on every host
  std::vector<std::string> args;
};

// The COMMAND above. invalid_argument when it cannot be written (a program name with '=' would be taken
// for an assignment by env) or is longer than kMaxCommandLineBytes.
base::Result<std::string> remote_command_line(const RemoteCommand& command);

}  // namespace ftmpi::rte

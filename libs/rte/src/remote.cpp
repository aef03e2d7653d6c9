#include "ftmpi/rte/remote.hpp"

#include <algorithm>
#include <array>

#include "ftmpi/rte/job.hpp"

namespace ftmpi::rte {
namespace {

using base::Errc;
using base::Result;
using base::Status;

bool shell_safe(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '/' || c == '.' ||
         c == '_' || c == '-' || c == ',' || c == ':' || c == '+' || c == '@' || c == '%';
}

bool shell_name(std::string_view name) {
  if (name.empty() || (name.front() >= '0' && name.front() <= '9')) return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
  });
}

// Variables of ftrun's own host or login session; on another host they would be wrong.
constexpr std::array<std::string_view, 20> kSessionVariables = {
    "HOSTNAME", "HOST",    "PWD",        "OLDPWD",    "SHLVL",
    "_",        "HOME",    "USER",       "LOGNAME",   "MAIL",
    "SHELL",    "DISPLAY", "XAUTHORITY", "TERM",      "TERMCAP",
    "COLUMNS",  "LINES",   "TMUX",       "TMUX_PANE", "DBUS_SESSION_BUS_ADDRESS"};
constexpr std::array<std::string_view, 2> kSessionPrefixes = {"SSH_", "XDG_"};

}  // namespace

std::vector<std::string> split_agent_command(std::string_view text) {
  std::vector<std::string> words;
  while (!text.empty()) {
    const auto space = text.find(' ');
    if (space != 0) words.emplace_back(text.substr(0, space));
    if (space == std::string_view::npos) break;
    text.remove_prefix(space + 1);
  }
  return words;
}

std::string shell_quote(std::string_view word) {
  if (!word.empty() && std::all_of(word.begin(), word.end(), shell_safe)) return std::string(word);
  std::string out = "'";
  for (char c : word) {
    if (c == '\'') {
      out += "'\\''";
    } else {
      out += c;
    }
  }
  out += '\'';
  return out;
}

bool forwarded_to_remote(std::string_view name) {
  if (!shell_name(name)) return false;
  if (std::find(kSessionVariables.begin(), kSessionVariables.end(), name) != kSessionVariables.end()) {
    return false;
  }
  return std::none_of(kSessionPrefixes.begin(), kSessionPrefixes.end(),
                      [&](std::string_view prefix) { return name.starts_with(prefix); });
}

Result<std::string> remote_command_line(const RemoteCommand& command) {
  if (command.program.find('=') != std::string::npos) {
    return Status(Errc::invalid_argument, "cannot start '" + command.program +
                                              "' on another host: env would take a name with '=' "
                                              "for an assignment");
  }
  const std::string secret(kEnvRteSecret);
  std::string line;
  if (!command.working_directory.empty()) {
    line += "cd " + shell_quote(command.working_directory) + " 2>/dev/null || cd; ";
  }
  line += "IFS= read -r " + secret + " || exit 255; export " + secret + "; exec env";
  for (const std::string& entry : command.environment) line += " " + shell_quote(entry);
  line += " " + shell_quote(command.program);
  for (const std::string& arg : command.args) line += " " + shell_quote(arg);
  if (line.size() > kMaxCommandLineBytes) {
    return Status(Errc::invalid_argument,
                  "the command line for the agent of another host would be " + std::to_string(line.size()) +
                      " bytes, more than the " + std::to_string(kMaxCommandLineBytes) +
                      " one argument may have (the environment is passed on it: unset what the ranks do not "
                      "need)");
  }
  return line;
}

}  // namespace ftmpi::rte

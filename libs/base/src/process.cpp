#include "ftmpi/base/process.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

extern char** environ;

namespace ftmpi::base {

namespace {

// The child's environment: ours, each extra "K=V" replacing a K already there.
std::vector<std::string> environment_with(const std::vector<std::string>& extra) {
  std::vector<std::string> env;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string entry(*e);
    const std::string name = entry.substr(0, entry.find('='));
    bool replaced = false;
    for (const std::string& x : extra) replaced = replaced || x.substr(0, x.find('=')) == name;
    if (!replaced) env.push_back(entry);
  }
  env.insert(env.end(), extra.begin(), extra.end());
  return env;
}

std::vector<char*> pointers(std::vector<std::string>& strings) {
  std::vector<char*> p;
  for (std::string& s : strings) p.push_back(s.data());
  p.push_back(nullptr);
  return p;
}

}  // namespace

Result<Captured> run_captured(const std::vector<std::string>& command, const std::vector<std::string>& extra_env) {
  if (command.empty()) return Status(Errc::invalid_argument, "no program to run");
  int out[2], err[2];
  if (::pipe2(out, O_CLOEXEC) != 0) return Status(Errc::io_error, std::string("pipe: ") + std::strerror(errno));
  if (::pipe2(err, O_CLOEXEC) != 0) {
    ::close(out[0]);
    ::close(out[1]);
    return Status(Errc::io_error, std::string("pipe: ") + std::strerror(errno));
  }
  // Everything the child needs is made before fork: after it, only async-signal-safe calls.
  std::vector<std::string> args = command, env = environment_with(extra_env);
  std::vector<char*> argv = pointers(args), envp = pointers(env);
  const std::string cannot_run = "cannot run " + args[0] + ": ";
  const pid_t pid = ::fork();
  if (pid < 0) {
    for (int fd : {out[0], out[1], err[0], err[1]}) ::close(fd);
    return Status(Errc::io_error, std::string("fork: ") + std::strerror(errno));
  }
  if (pid == 0) {
    // A descriptor already where it belongs (a caller started with 0 and 1 closed gets its pipe there)
    // only needs its close-on-exec cleared: dup2 onto itself would leave it set.
    auto place = [](int fd, int target) {
      if (fd == target) {
        ::fcntl(fd, F_SETFD, 0);
      } else {
        ::dup2(fd, target);
      }
    };
    const int null = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (null >= 0) place(null, STDIN_FILENO);
    place(out[1], STDOUT_FILENO);
    place(err[1], STDERR_FILENO);
    ::execvpe(argv[0], argv.data(), envp.data());
    const char* why = std::strerror(errno);
    [[maybe_unused]] auto n = ::write(STDERR_FILENO, cannot_run.data(), cannot_run.size());
    n = ::write(STDERR_FILENO, why, std::strlen(why));
    n = ::write(STDERR_FILENO, "\n", 1);
    ::_exit(127);
  }
  ::close(out[1]);
  ::close(err[1]);
  Captured captured;
  pollfd fds[2] = {{out[0], POLLIN, 0}, {err[0], POLLIN, 0}};
  std::string* into[2] = {&captured.out, &captured.err};
  int open_fds = 2;
  char buf[65536];
  while (open_fds > 0) {
    if (::poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || (fds[i].revents & (POLLIN | POLLHUP | POLLERR)) == 0) continue;
      const ssize_t n = ::read(fds[i].fd, buf, sizeof buf);
      if (n > 0) {
        into[i]->append(buf, static_cast<std::size_t>(n));
      } else if (n == 0 || errno != EINTR) {
        ::close(fds[i].fd);
        fds[i].fd = -1;  // poll ignores negative descriptors
        --open_fds;
      }
    }
  }
  for (const pollfd& p : fds) {
    if (p.fd >= 0) ::close(p.fd);
  }
  int status = 0;
  pid_t waited = 0;
  while ((waited = ::waitpid(pid, &status, 0)) < 0 && errno == EINTR) {
  }
  if (waited != pid) {  // e.g. SIGCHLD ignored: the kernel reaped it, and its status is unknown
    return Status(Errc::io_error, "cannot learn how " + command[0] + " ended: " + std::strerror(errno));
  }
  captured.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return captured;
}

}  // namespace ftmpi::base

#include "spawn.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "sys.hpp"

namespace ftmpi::rte {
namespace {

// What the child reports through the close-on-exec pipe when a step before exec succeeded fails.
struct ChildFailure {
  int step;
  int error;
};

constexpr const char* kSteps[] = {"prctl(PR_SET_PDEATHSIG)", "ftrun exited during start-up", "dup2",
                                  "sched_setaffinity", "execve"};
enum Step { kPdeathsig, kOrphaned, kDup2, kAffinity, kExec };

[[noreturn]] void child_fail(int report_fd, Step step) {
  ChildFailure failure{step, errno};
  // Best effort: if the parent is gone nobody needs the report.
  ssize_t ignored = ::write(report_fd, &failure, sizeof failure);
  (void)ignored;
  ::_exit(127);
}

// Makes `from` the child's descriptor `to`, without close-on-exec (dup2 onto itself would keep the flag).
bool install(int from, int to) {
  if (from == to) return ::fcntl(to, F_SETFD, 0) == 0;
  return ::dup2(from, to) == to;
}

// Runs in the forked child: async-signal-safe calls only.
[[noreturn]] void child_main(const ChildSetup& setup, int report_fd, pid_t parent) {
  // Its own process group: ftrun forwards a terminal's Ctrl-C exactly once, and kill(-pid) reaches
  // whatever the rank starts (a rank that is a wrapper script, for instance).
  ::setpgid(0, 0);
  if (::prctl(PR_SET_PDEATHSIG, SIGKILL) != 0) child_fail(report_fd, kPdeathsig);
  // ftrun may have died before prctl took effect; then no signal will come.
  if (::getppid() != parent) child_fail(report_fd, kOrphaned);
  if (!install(setup.stdin_fd, 0) || !install(setup.stdout_fd, 1) || !install(setup.stderr_fd, 2)) {
    child_fail(report_fd, kDup2);
  }
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  if (setup.cpus != nullptr && ::sched_setaffinity(0, sizeof(cpu_set_t), setup.cpus) != 0) {
    child_fail(report_fd, kAffinity);
  }
  ::execve(setup.path, setup.argv, setup.envp);
  child_fail(report_fd, kExec);
}

}  // namespace

base::Result<pid_t> spawn_child(const ChildSetup& setup) {
  int report[2];
  if (::pipe2(report, O_CLOEXEC) != 0) return sys::errno_status(base::Errc::internal, "pipe2");
  UniqueFd report_read(report[0]);
  UniqueFd report_write(report[1]);
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) return sys::errno_status(base::Errc::resource_exhausted, "fork");
  if (pid == 0) child_main(setup, report_write.get(), parent);
  report_write.reset();
  // Also here: a kill(-pid) from ftrun right after fork must not miss a child that has not run yet.
  ::setpgid(pid, pid);
  ChildFailure failure{};
  ssize_t n = 0;
  do {
    n = ::read(report_read.get(), &failure, sizeof failure);
  } while (n < 0 && errno == EINTR);
  if (n == 0) return pid;  // the pipe closed on exec
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (n != static_cast<ssize_t>(sizeof failure)) {
    return base::Status(base::Errc::internal, "child " + std::to_string(pid) + " failed before exec");
  }
  return sys::errno_status(base::Errc::invalid_argument,
                           std::string("cannot execute '") + setup.path + "': " + kSteps[failure.step],
                           failure.error);
}

}  // namespace ftmpi::rte

// Starting one rank: fork, child set-up, exec (private to rte).
#pragma once

#include <sched.h>
#include <sys/types.h>

#include "ftmpi/base/status.hpp"

namespace ftmpi::rte {

struct ChildSetup {
  const char* path;
  char* const* argv;  // null-terminated
  char* const* envp;  // null-terminated
  int stdin_fd;
  int stdout_fd;
  int stderr_fd;
  const cpu_set_t* cpus;  // nullptr: no binding
};

// Forks a child that leads its own process group, dies with SIGKILL when ftrun dies, has the given
// stdio, an empty signal mask and (optionally) a CPU binding, and execs `path`. Returns once the exec
// has succeeded, or the reason it failed (the failed child is reaped).
base::Result<pid_t> spawn_child(const ChildSetup& setup);

}  // namespace ftmpi::rte

// Prints "rank <r> ready" and sleeps until a signal ends it. --ignore-signals: SIGINT, SIGTERM and SIGHUP
// do not (ftrun forwards those), so only SIGKILL does.
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <string>

#include "helper.hpp"

using namespace ftmpi;

int main(int argc, char** argv, char** envp) {
  if (argc > 1 && std::string(argv[1]) == "--ignore-signals") {
    for (int signo : {SIGINT, SIGTERM, SIGHUP}) signal(signo, SIG_IGN);
  }
  rte::Client client = launch_test::start_rank(envp);
  std::printf("rank %u ready\n", client.rank());
  std::fflush(stdout);
  for (;;) pause();
}

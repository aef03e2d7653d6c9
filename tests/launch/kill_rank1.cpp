// Rank 1 kills itself with SIGKILL after the first fence; the others wait in a second fence.
#include <signal.h>
#include <unistd.h>

#include "helper.hpp"

using namespace ftmpi;
using launch_test::die;

int main(int, char**, char** envp) {
  rte::Client client = launch_test::start_rank(envp);
  if (base::Status s = client.fence(); !s) die(s.to_string());
  if (client.rank() == 1) kill(getpid(), SIGKILL);
  if (base::Status s = client.fence(); !s) die(s.to_string());
  die("the second fence completed without rank 1");
}

// Rank 1 aborts with error code 3 after the first fence; the others wait in a second fence that never ends.
#include <cstdio>

#include "helper.hpp"

using namespace ftmpi;
using launch_test::die;

int main(int, char**, char** envp) {
  rte::Client client = launch_test::start_rank(envp);
  if (base::Status s = client.fence(); !s) die(s.to_string());
  if (client.rank() == 1) {
    // Printed without a newline and not flushed: abort must still deliver it.
    std::printf("rank 1 is about to abort");
    client.abort(3, "rank 1 gives up");
  }
  if (base::Status s = client.fence(); !s) die(s.to_string());
  die("the second fence completed without rank 1");
}

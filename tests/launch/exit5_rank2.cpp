// Rank 2 exits with status 5 after the first fence, without finalize; the others wait in a second fence.
#include <cstdlib>

#include "helper.hpp"

using namespace ftmpi;
using launch_test::die;

int main(int, char**, char** envp) {
  rte::Client client = launch_test::start_rank(envp);
  if (base::Status s = client.fence(); !s) die(s.to_string());
  if (client.rank() == 2) std::exit(5);
  if (base::Status s = client.fence(); !s) die(s.to_string());
  die("the second fence completed without rank 2");
}

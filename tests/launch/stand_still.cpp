// Each rank stops in a different place and stays there, to check what ftrun's timeout report says of
// it: rank 0 after finalize, rank 1 in a fence the others never enter, rank 3
// before connecting to ftrun, every other rank in the program. Each prints "rank <r> ready" once there.
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "helper.hpp"

using namespace ftmpi;
using launch_test::die;

namespace {

[[noreturn]] void stay(unsigned rank) {
  std::printf("rank %u ready\n", rank);
  std::fflush(stdout);
  for (;;) pause();
}

}  // namespace

int main(int, char**, char** envp) {
  const char* rank_text = std::getenv("FTMPI_RANK");
  if (rank_text == nullptr) die("FTMPI_RANK is not set");
  const unsigned rank = static_cast<unsigned>(std::stoul(rank_text));
  if (rank == 3) {
    launch_test::write_pid_file(rank);
    stay(rank);
  }
  rte::Client client = launch_test::start_rank(envp);
  if (rank == 0) {
    if (base::Status s = client.finalize(); !s) die(s.to_string());
  } else if (rank == 1) {
    if (base::Status s = client.fence_begin(); !s) die(s.to_string());
  }
  stay(rank);
}

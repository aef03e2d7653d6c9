// Every rank publishes rank-specific values, fences, and checks every other rank's values, twice; it
// also creates a shared-memory segment under the job's prefix, which ftrun must remove.
// --no-finalize: exit 0 without finalize (a protocol violation ftrun must report).
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdio>
#include <string>

#include "ftmpi/rte/job.hpp"
#include "helper.hpp"

using namespace ftmpi;
using launch_test::die;

namespace {

std::string expected(std::uint32_t rank, int round) {
  return "rank " + std::to_string(rank) + " round " + std::to_string(round) + " " +
         std::string(rank % 7 + 1, '*');
}

void exchange(rte::Client& client, int round) {
  if (base::Status s = client.put("value", expected(client.rank(), round)); !s) die(s.to_string());
  if (base::Status s = client.fence(); !s) die(s.to_string());
  for (std::uint32_t peer = 0; peer < client.size(); ++peer) {
    auto value = client.get(peer, "value");
    if (!value) die(value.status().to_string());
    if (*value != expected(peer, round)) die("rank " + std::to_string(peer) + " published '" + *value + "'");
  }
}

}  // namespace

int main(int argc, char** argv, char** envp) {
  const bool finalize = !(argc > 1 && std::string(argv[1]) == "--no-finalize");
  rte::Client client = launch_test::start_rank(envp);
  const std::uint64_t job_id = client.job().identity.job_id;
  if (!client.is_singleton()) {
    const std::string segment = "/" + rte::shm_prefix(job_id) + "rank" + std::to_string(client.rank());
    int fd = shm_open(segment.c_str(), O_CREAT | O_RDWR, 0600);
    if (fd < 0) die("shm_open " + segment);
    close(fd);
  }
  exchange(client, 1);
  exchange(client, 2);
  std::printf("rank %u of %u: exchange ok (job %016llx)\n", client.rank(), client.size(),
              static_cast<unsigned long long>(job_id));
  std::fflush(stdout);
  if (finalize) {
    if (base::Status s = client.finalize(); !s) die(s.to_string());
  }
  return 0;
}

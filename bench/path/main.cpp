// path_bench: the shared-memory path between two forked processes, then UDP on loopback (ping-pong, and
// bare TCP and UDP streams), then single-copy reads.
//   path_bench [shm | udp | stream | peer-memory]
// A section name runs that section alone (as scripts measuring one of them beside another program do).
#include <cstdio>
#include <string_view>

#include "sections.hpp"

int main(int argc, char** argv) {
  std::string_view only;
  if (argc > 2 || (argc == 2 && (only = argv[1]) != "shm" && only != "udp" && only != "stream" &&
                   only != "peer-memory")) {
    std::fprintf(stderr, "path_bench: unknown argument '%s' (usage: path_bench [shm | udp | stream | peer-memory])\n",
                 argv[argc - 1]);
    return 2;
  }
  if (only.empty() || only == "shm") ftmpi::bench::run_shm_bench();
  if (only.empty() || only == "udp") ftmpi::bench::run_udp_bench();
  if (only.empty() || only == "stream") ftmpi::bench::run_stream_bench();
  if (only.empty() || only == "peer-memory") ftmpi::bench::run_peer_memory_bench();
  return 0;
}

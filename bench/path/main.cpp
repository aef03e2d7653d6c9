// path_bench: the shared-memory path between two forked processes, then UDP on loopback (ping-pong, and
// bare TCP and UDP streams), then single-copy reads.
#include "sections.hpp"

int main() {
  ftmpi::bench::run_shm_bench();
  ftmpi::bench::run_udp_bench();
  ftmpi::bench::run_stream_bench();
  ftmpi::bench::run_peer_memory_bench();
  return 0;
}

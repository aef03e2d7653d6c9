// path_bench: the shared-memory path between two forked processes, then single-copy reads.
#include "sections.hpp"

int main() {
  ftmpi::bench::run_shm_bench();
  ftmpi::bench::run_peer_memory_bench();
  return 0;
}

// frag_bench: checksums against memcpy, then the fragmenter and wire header.
#include "sections.hpp"

int main() {
  ftmpi::bench::run_checksum_bench();
  ftmpi::bench::run_fragmenter_bench();
  return 0;
}

// frag_bench: checksums against memcpy, checksums after a pause, the fragmenter and wire header, then the
// CPU units a CRC32C runs on.
//   frag_bench [--rounds N] [checksums | pause | fragmenter | units]
// --rounds repeats every checksum measurement N times, interleaved (one round measures each cell once),
// and reports the median of the rounds (pause: pools the rounds' calls); a section name runs that
// section alone.
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "sections.hpp"

int main(int argc, char** argv) {
  int rounds = 1;
  std::string_view only;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "--rounds" && i + 1 < argc) {
      rounds = std::atoi(argv[++i]);
      if (rounds < 1 || rounds > 100) {
        std::fprintf(stderr, "frag_bench: --rounds takes 1 to 100, not '%s'\n", argv[i]);
        return 2;
      }
    } else if (arg == "checksums" || arg == "pause" || arg == "fragmenter" || arg == "units") {
      only = arg;
    } else {
      std::fprintf(
          stderr,
          "frag_bench: unknown argument '%s' (usage: frag_bench [--rounds N] [checksums | pause | fragmenter | units])\n",
          argv[i]);
      return 2;
    }
  }
  if (only.empty() || only == "checksums") ftmpi::bench::run_checksum_bench(rounds);
  if (only.empty() || only == "pause") ftmpi::bench::run_pause_bench(rounds);
  if (only.empty() || only == "fragmenter") ftmpi::bench::run_fragmenter_bench();
  if (only.empty() || only == "units") ftmpi::bench::run_units_bench();
  return 0;
}

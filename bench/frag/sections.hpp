#pragma once

namespace ftmpi::bench {
void run_checksum_bench(int rounds);  // checksum_bench.cpp
void run_fragmenter_bench();          // fragmenter_bench.cpp
void run_pause_bench(int rounds);     // pause_bench.cpp
void run_units_bench();               // units_bench.cpp
}  // namespace ftmpi::bench

// What the kernels (ftbench-mpi, tools/ftbench/ftbench_mpi.c) report, and what ftbench makes of it.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "ftmpi/base/json.hpp"
#include "ftmpi/bench/plot.hpp"

namespace ftmpi::bench {

// One figure: a kernel at one message size.
struct Result {
  std::string kernel;  // lat, bw, bibw, rate, barrier, bcast, allreduce, alltoall
  std::uint64_t bytes = 0;
  double value = 0;
  std::string unit;  // us, MB/s, Mmsg/s
};

// What one job printed: its kernels' JSON lines (one per figure), the library they name.
struct KernelOutput {
  std::string library;
  std::vector<Result> results;
};
// Lines that are not a kernel's JSON object are passed over (a program may print other things).
KernelOutput parse_kernel_lines(std::string_view text);

// The traffic one rail carried during a job, both ranks' counters added, from the engine's statistics
// (engine.report=json: "ftmpi stats: {...}" on each rank's stderr at MPI_Finalize).
struct RailTraffic {
  static constexpr std::uint64_t kNoIndex = ~std::uint64_t{0};
  std::string name;  // as the lowest rank names the rail: "shm", "udp lo 127.0.0.1"
  std::uint64_t bytes_sent = 0;
  std::uint64_t retransmits = 0;
  std::uint64_t timeouts = 0;
  std::uint64_t checksum_failures = 0;
  std::uint64_t index = kNoIndex;     // the engine's path index (the same rail on every rank)
  std::uint64_t named_by = kNoIndex;  // the rank whose name it carries
};
// Every rank's counters added per rail (by path index; by name where a snapshot has no index), in index
// order; `rest` receives the lines that are not statistics.
std::vector<RailTraffic> parse_rail_traffic(std::string_view stderr_text, std::string* rest = nullptr);

// `results` as a JSON array of {"kernel", "bytes", "value", "unit"}.
void write_results(base::JsonWriter& w, const std::vector<Result>& results);
// `results` as the curve `name` of the panel of each kernel (a panel added for a kernel not seen yet).
void add_curve(std::vector<Panel>& panels, const std::string& name, const std::vector<Result>& results);

// Rates are better higher, times lower.
bool higher_is_better(std::string_view unit);
// The middle value (the mean of the two middle ones for an even count); 0 for none.
double median(std::vector<double> values);
// "0 B", "8 KB", "1 MB" (binary, as message sizes are written).
std::string size_text(std::uint64_t bytes);
// Three significant figures or so: "0.143", "12.5", "4138".
std::string figure_text(double value);
// "a,b,c" -> {"a","b","c"}; "" -> {""}.
std::vector<std::string> split(std::string_view text, char by = ',');

}  // namespace ftmpi::bench

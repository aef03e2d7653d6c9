// The sweep (kernels over message sizes) of ftmpi alone, or beside other MPIs in interleaved rounds:
// ftmpi, Open MPI, MPICH, ftmpi, ... each figure the median of the rounds, with ftmpi's ratio to the best
// peer.
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "ftmpi/bench/job.hpp"
#include "ftmpi/bench/peers.hpp"
#include "ftmpi/bench/table.hpp"

namespace ftmpi::bench {

struct Sweep {
  JobSpec job;
  KernelArgs kernels;
  std::vector<PeerMpi> peers;  // none: ftmpi alone
  int rounds = 1;
  bool repeat_disturbed = true;
  // ftmpi's job ends after this many seconds (ftrun --timeout); 0: KernelArgs::time_limit_s() when it
  // may lose frames (may_lose_frames), else no limit.
  int time_limit_s = 0;
};

struct SweepReport {
  int ranks = 2;
  int rounds = 1;
  bool bound = false;
  std::vector<std::string> names;      // "ftmpi", then each peer
  std::vector<std::string> libraries;  // as each names itself
  std::vector<std::string> transports; // how each peer's ranks talked ("vader", "tcp lo", ...; "" for ftmpi)
  std::vector<Result> order;           // kernels and sizes as measured (values: ftmpi's medians)
  std::vector<RailTraffic> rails;      // ftmpi's last run
  std::string conditions;
  // median of the rounds of MPI `m` (0 is ftmpi) for `r`'s kernel and size
  double median_of(std::size_t m, const Result& r) const;
  std::vector<Result> medians(std::size_t m) const;  // MPI `m`'s medians, in the order measured
  double ratio_to_best_peer(const Result& r) const;  // 0 without peers
  // every round's figure per MPI, by (kernel, bytes)
  std::vector<std::map<std::pair<std::string, std::uint64_t>, std::vector<double>>> samples;
};

base::Result<SweepReport> run_sweep(const Sweep& sweep, const TableProgress& progress = {});

std::string sweep_markdown(const SweepReport& report, const std::string& heading);
std::string sweep_json(const SweepReport& report);
std::string sweep_csv(const SweepReport& report);
std::string sweep_svg(const SweepReport& report, const std::string& title);

// A line per rail: its share of the bytes and its retransmissions ("" without statistics).
std::string traffic_text(const std::vector<RailTraffic>& rails);

}  // namespace ftmpi::bench

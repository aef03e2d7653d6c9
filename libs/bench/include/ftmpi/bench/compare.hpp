// The sweep (kernels over message sizes) of ftmpi alone, or beside variants of itself and other MPIs in
// interleaved rounds (ftmpi, its variants, Open MPI, MPICH, then the next round in the next order), each
// figure the median of the rounds, with ftmpi's ratio to the best peer and to each variant.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ftmpi/bench/job.hpp"
#include "ftmpi/bench/peers.hpp"
#include "ftmpi/bench/table.hpp"

namespace ftmpi::bench {

// ftmpi again with runtime parameters added after the job's own (so they win), measured in the same rounds
// as the job as given: what a setting costs, e.g. reliability with `off:engine.reliability=off`. Not
// path.kinds or path.rails where the sweep gives --paths or --rails: ftrun applies those after every
// parameter, so run_sweep refuses such a variant rather than measure the job twice.
struct Variant {
  std::string name;
  std::vector<std::string> params;  // K=V
};
// "NAME:K=V[,K=V...]": NAME of letters, digits, '-', '_' and '.', other than ftmpi's and the peers' names;
// each K a parameter's (dotted) name, a V may hold commas (path.fault=drop=1,for=2KB). invalid_argument,
// saying what is wrong, otherwise.
base::Result<Variant> parse_variant(std::string_view text);

// A ratio's median over the rounds, with its quartiles (linear between the sorted ratios; all three the
// one ratio of a single round), and how many rounds gave one.
struct RatioSpread {
  double median = 0, low = 0, high = 0;
  std::size_t rounds = 0;
};
RatioSpread ratio_spread(std::vector<double> ratios);

struct Sweep {
  JobSpec job;
  KernelArgs kernels;
  std::vector<Variant> variants;  // ftmpi again with other parameters
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
  std::vector<std::string> names;      // "ftmpi", then each variant, then each peer
  std::vector<std::vector<std::string>> variant_params;  // names[1 + v]'s parameters
  std::vector<std::string> libraries;  // as each names itself
  std::vector<std::string> transports; // how each peer's ranks talked ("vader", "tcp lo", ...; "" for ftmpi)
  std::vector<Result> order;           // kernels and sizes as measured (values: ftmpi's medians)
  std::vector<RailTraffic> rails;      // ftmpi's last run
  std::vector<std::vector<RailTraffic>> variant_rails;  // each variant's last run
  std::string conditions;
  // median of the rounds of MPI `m` (0 is ftmpi) for `r`'s kernel and size
  double median_of(std::size_t m, const Result& r) const;
  std::vector<Result> medians(std::size_t m) const;  // MPI `m`'s medians, in the order measured
  double ratio_to_best_peer(const Result& r) const;  // 0 without peers
  // ftmpi's figure over MPI `m`'s (a variant or a peer), round by round: a round's two runs were minutes
  // apart at most, so this ratio drifts less with the host than the ratio of the medians does.
  RatioSpread ratio_by_round(std::size_t m, const Result& r) const;
  bool is_variant(std::size_t m) const { return m >= 1 && m <= variant_params.size(); }
  std::size_t first_peer() const { return 1 + variant_params.size(); }  // names[first_peer()] on are peers
  bool has_peers() const { return names.size() > first_peer(); }
  // every round's figure per MPI, in round order, by (kernel, bytes)
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

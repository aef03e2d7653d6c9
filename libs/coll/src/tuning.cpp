#include "ftmpi/coll/tuning.hpp"

#include <algorithm>
#include <string>

namespace ftmpi::coll {
namespace {

using base::Errc;
using base::ParamLevel;
using base::ParamRow;
using base::ParamScope;
using base::ParamType;
using base::Status;

constexpr ParamRow algorithm_row(std::string_view name, std::string_view help, std::string_view choices) {
  return {name, ParamType::string, "auto", help, ParamLevel::advanced, ParamScope::job, choices};
}
constexpr ParamRow size_row(std::string_view name, std::string_view default_value, std::string_view help) {
  return {name, ParamType::size, default_value, help, ParamLevel::advanced, ParamScope::job};
}

// Indexed by Collective.
constexpr ParamRow kAlgorithmRows[kCollectiveCount] = {
    algorithm_row("coll.barrier.algorithm", "barrier algorithm (shm: ranks of one host only)",
                  "auto|dissemination|shm"),
    algorithm_row("coll.bcast.algorithm", "bcast algorithm",
                  "auto|binomial|pipeline|scatter_allgather|shm"),
    algorithm_row("coll.reduce.algorithm", "reduce algorithm", "auto|binomial|pipeline"),
    algorithm_row("coll.allreduce.algorithm",
                  "allreduce algorithm (ring only for commutative ops; shm: ranks of one host, up to "
                  "coll.allreduce.shm_max)",
                  "auto|recursive_doubling|rabenseifner|ring|shm"),
    algorithm_row("coll.gather.algorithm", "gather algorithm", "auto|binomial|linear"),
    algorithm_row("coll.gatherv.algorithm", "gatherv algorithm", "auto|linear"),
    algorithm_row("coll.scatter.algorithm", "scatter algorithm", "auto|binomial|linear"),
    algorithm_row("coll.scatterv.algorithm", "scatterv algorithm", "auto|linear"),
    algorithm_row("coll.allgather.algorithm",
                  "allgather algorithm (recursive_doubling only on a power-of-two number of ranks)",
                  "auto|recursive_doubling|bruck|ring"),
    algorithm_row("coll.allgatherv.algorithm",
                  "allgatherv algorithm (recursive_doubling only on a power-of-two number of ranks)",
                  "auto|recursive_doubling|ring"),
    algorithm_row("coll.alltoall.algorithm", "alltoall algorithm", "auto|linear|pairwise"),
    algorithm_row("coll.alltoallv.algorithm", "alltoallv (and alltoallw) algorithm",
                  "auto|linear|pairwise"),
    algorithm_row("coll.reduce_scatter.algorithm",
                  "reduce_scatter algorithm (recursive_halving only for commutative ops)",
                  "auto|recursive_halving|pairwise"),
    algorithm_row("coll.reduce_scatter_block.algorithm",
                  "reduce_scatter_block algorithm (recursive_halving only for commutative ops)",
                  "auto|recursive_halving|pairwise"),
    algorithm_row("coll.scan.algorithm", "scan algorithm", "auto|recursive_doubling|pipeline"),
    algorithm_row("coll.exscan.algorithm", "exscan algorithm", "auto|recursive_doubling|pipeline"),
};

constexpr ParamRow kSegmentSize = size_row(
    "coll.segment_size", "32k", "segment of the pipelined algorithms (bcast, reduce, scan, exscan)");
constexpr ParamRow kBcastShortMax = size_row(
    "coll.bcast.short_max", "12k", "largest bcast auto sends whole down a binomial tree");
constexpr ParamRow kBcastPipelineMin = size_row(
    "coll.bcast.pipeline_min", "512k",
    "smallest bcast auto sends down a segmented chain (from short_max up to it: scatter + allgather)");
// MPICH's rule (comm_size < 8: binomial at any size); measured here at 4 ranks on 2 cores: binomial 22-47
// us at 64 KB and 200-390 us at 1 MB, against 55-81 and 475-870 us for scatter + allgather or the chain.
constexpr ParamRow kBcastTreeMaxRanks{
    "coll.bcast.tree_max_ranks", ParamType::integer, "7",
    "most ranks on which auto broadcasts down a binomial tree at any size (above: by size)",
    ParamLevel::advanced, ParamScope::job};
constexpr ParamRow kReducePipelineMin = size_row(
    "coll.reduce.pipeline_min", "64k", "smallest reduce auto runs as a segmented chain (below: binomial)");
constexpr ParamRow kAllreduceShortMax = size_row(
    "coll.allreduce.short_max", "2k",
    "largest allreduce auto runs by recursive doubling (above: Rabenseifner, or a ring for a "
    "commutative op on a non-power-of-two number of ranks)");
constexpr ParamRow kGatherBinomialMax = size_row(
    "coll.gather.binomial_max", "32k",
    "largest gather and scatter total (ranks x block) auto moves over a binomial tree (above: linear)");
constexpr ParamRow kAllgatherShortMax = size_row(
    "coll.allgather.short_max", "64k",
    "largest allgather and allgatherv total auto runs by recursive doubling or Bruck (above: ring)");
constexpr ParamRow kAlltoallLinearMax = size_row(
    "coll.alltoall.linear_max", "32k",
    "largest alltoall block per pair for which auto posts every message at once (above: pairwise)");
constexpr ParamRow kAlltoallvLinearMaxRanks{
    "coll.alltoallv.linear_max_ranks", ParamType::integer, "16",
    "most ranks on which auto posts every alltoallv message at once (above: pairwise)",
    ParamLevel::advanced, ParamScope::job};
constexpr ParamRow kReduceScatterShortMax = size_row(
    "coll.reduce_scatter.short_max", "64k",
    "largest reduce_scatter(_block) vector auto runs by recursive halving for a commutative op "
    "(above, or not commutative: pairwise)");
constexpr ParamRow kScanPipelineMin = size_row(
    "coll.scan.pipeline_min", "1m",
    "smallest scan and exscan vector auto runs as a segmented chain (below: recursive doubling)");

constexpr ParamRow kBcastShmMax = size_row(
    "coll.bcast.shm_max", "64k",
    "largest blocking bcast auto runs through the shared-memory broadcast on 3 or more ranks (larger: "
    "point-to-point)");
constexpr ParamRow kBcastShmPairMax = size_row(
    "coll.bcast.shm_pair_max", "2k",
    "largest blocking bcast auto runs through the shared-memory broadcast on 2 ranks (larger: the one "
    "point-to-point message, which costs fewer copies than the region's write, keep and checksummed read)");
constexpr ParamRow kShmBcastChannels{
    "coll.shm_bcast.channels", ParamType::integer, "16",
    "channels of a shared-memory broadcast region (broadcasts written before the root needs acknowledgements)",
    ParamLevel::advanced, ParamScope::job};
constexpr ParamRow kShmBcastChannelBytes = size_row(
    "coll.shm_bcast.channel_bytes", "32k",
    "payload of one shared-memory broadcast channel (larger messages are pipelined through consecutive ones)");
constexpr ParamRow kShmBcastKeepMax = size_row(
    "coll.shm_bcast.keep_max", "64k",
    "largest shared-memory broadcast the root keeps a private copy of, to return at once (larger: the root "
    "waits until every rank has it)");
constexpr ParamRow kShmBcastTimeout{
    "coll.shm_bcast.timeout", ParamType::duration, "2s",
    "time a rank waits for a resend of a corrupted shared-memory broadcast before it declares the region "
    "failed (broadcasts then go point-to-point)",
    ParamLevel::advanced, ParamScope::job};

constexpr ParamRow kAllreduceShmMax = size_row(
    "coll.allreduce.shm_max", "16m",
    "largest blocking allreduce on the ranks of one host auto runs through the shared-memory region "
    "(larger: point-to-point)");
constexpr ParamRow kAllreduceShmSlot = size_row(
    "coll.allreduce.shm_slot", "256k",
    "size of the shared-memory region's allreduce operand slots: larger vectors go through in pieces of "
    "this size (the region holds 2 x (ranks + 1) slots, in pages touched only when used)");
constexpr ParamRow kAllreduceShmSlicedMin = size_row(
    "coll.allreduce.shm_sliced_min", "16k",
    "smallest shared-memory allreduce in which each rank reduces only its 1/n of the vector (smaller: "
    "every rank reduces all of it, with one synchronisation instead of two)");
constexpr ParamRow kShmSyncFlatMax{
    "coll.shm_sync.flat_max", ParamType::integer, "8",
    "most ranks of one host for which every rank of a shared-memory barrier or allreduce watches every "
    "rank's arrival (above: local rank 0 gathers and releases)",
    ParamLevel::advanced, ParamScope::job};

constexpr ParamRow kCollParams[] = {
    kAlgorithmRows[0],  kAlgorithmRows[1],  kAlgorithmRows[2],  kAlgorithmRows[3],
    kAlgorithmRows[4],  kAlgorithmRows[5],  kAlgorithmRows[6],  kAlgorithmRows[7],
    kAlgorithmRows[8],  kAlgorithmRows[9],  kAlgorithmRows[10], kAlgorithmRows[11],
    kAlgorithmRows[12], kAlgorithmRows[13], kAlgorithmRows[14], kAlgorithmRows[15],
    kSegmentSize,       kBcastShortMax,     kBcastPipelineMin,  kReducePipelineMin,
    kAllreduceShortMax, kGatherBinomialMax, kAllgatherShortMax, kAlltoallLinearMax,
    kAlltoallvLinearMaxRanks, kReduceScatterShortMax, kScanPipelineMin, kBcastShmMax,
    kShmBcastChannels, kShmBcastChannelBytes, kShmBcastKeepMax, kShmBcastTimeout,
    kBcastTreeMaxRanks, kAllreduceShmMax, kShmSyncFlatMax, kBcastShmPairMax,
    kAllreduceShmSlot, kAllreduceShmSlicedMin,
};
static_assert(std::size(kCollParams) == kCollectiveCount + 22);

using A = Algorithm;
constexpr A kBarrier[] = {A::dissemination, A::shm};
constexpr A kBcast[] = {A::binomial, A::pipeline, A::scatter_allgather, A::shm};
constexpr A kReduce[] = {A::binomial, A::pipeline};
constexpr A kAllreduce[] = {A::recursive_doubling, A::rabenseifner, A::ring, A::shm};
constexpr A kGatherScatter[] = {A::binomial, A::linear};
constexpr A kLinear[] = {A::linear};
constexpr A kAllgather[] = {A::recursive_doubling, A::bruck, A::ring};
constexpr A kAllgatherv[] = {A::recursive_doubling, A::ring};
constexpr A kAlltoall[] = {A::linear, A::pairwise};
constexpr A kReduceScatter[] = {A::recursive_halving, A::pairwise};
constexpr A kScan[] = {A::recursive_doubling, A::pipeline};

std::size_t index(Collective c) { return static_cast<std::size_t>(c); }

// A size row's value as a size_t (validated when set, so parsing cannot fail).
std::size_t size_of(const base::ParamSet& params, const ParamRow& row) {
  return static_cast<std::size_t>(params.get_size(row));
}

}  // namespace

std::string_view to_string(Collective collective) noexcept {
  switch (collective) {
    case Collective::barrier: return "barrier";
    case Collective::bcast: return "bcast";
    case Collective::reduce: return "reduce";
    case Collective::allreduce: return "allreduce";
    case Collective::gather: return "gather";
    case Collective::gatherv: return "gatherv";
    case Collective::scatter: return "scatter";
    case Collective::scatterv: return "scatterv";
    case Collective::allgather: return "allgather";
    case Collective::allgatherv: return "allgatherv";
    case Collective::alltoall: return "alltoall";
    case Collective::alltoallv: return "alltoallv";
    case Collective::reduce_scatter: return "reduce_scatter";
    case Collective::reduce_scatter_block: return "reduce_scatter_block";
    case Collective::scan: return "scan";
    case Collective::exscan: return "exscan";
  }
  return "?";
}

std::string_view to_string(Algorithm algorithm) noexcept {
  switch (algorithm) {
    case Algorithm::automatic: return "auto";
    case Algorithm::dissemination: return "dissemination";
    case Algorithm::binomial: return "binomial";
    case Algorithm::pipeline: return "pipeline";
    case Algorithm::scatter_allgather: return "scatter_allgather";
    case Algorithm::recursive_doubling: return "recursive_doubling";
    case Algorithm::rabenseifner: return "rabenseifner";
    case Algorithm::ring: return "ring";
    case Algorithm::bruck: return "bruck";
    case Algorithm::linear: return "linear";
    case Algorithm::pairwise: return "pairwise";
    case Algorithm::recursive_halving: return "recursive_halving";
    case Algorithm::shm: return "shm";
  }
  return "?";
}

std::span<const Algorithm> algorithms_of(Collective collective) noexcept {
  switch (collective) {
    case Collective::barrier: return kBarrier;
    case Collective::bcast: return kBcast;
    case Collective::reduce: return kReduce;
    case Collective::allreduce: return kAllreduce;
    case Collective::gather:
    case Collective::scatter: return kGatherScatter;
    case Collective::gatherv:
    case Collective::scatterv: return kLinear;
    case Collective::allgather: return kAllgather;
    case Collective::allgatherv: return kAllgatherv;
    case Collective::alltoall:
    case Collective::alltoallv: return kAlltoall;
    case Collective::reduce_scatter:
    case Collective::reduce_scatter_block: return kReduceScatter;
    case Collective::scan:
    case Collective::exscan: return kScan;
  }
  return {};
}

base::Result<Algorithm> parse_algorithm(Collective collective, std::string_view name) {
  if (name == "auto") return Algorithm::automatic;
  for (Algorithm a : algorithms_of(collective)) {
    if (to_string(a) == name) return a;
  }
  const ParamRow& row = algorithm_param(collective);
  return Status(Errc::invalid_argument, std::string(row.name) + ": unknown algorithm '" +
                                            std::string(name) + "' (choose one of " +
                                            std::string(row.choices) + ")");
}

Status Tuning::force(Collective c, std::string_view name) {
  auto a = parse_algorithm(c, name);
  if (!a) return a.status();
  algorithm[index(c)] = *a;
  return {};
}

std::span<const ParamRow> coll_params() noexcept { return kCollParams; }

const ParamRow& algorithm_param(Collective collective) noexcept { return kAlgorithmRows[index(collective)]; }

base::Result<Tuning> tuning_from(const base::ParamSet& params) {
  Tuning t;
  for (std::size_t c = 0; c < kCollectiveCount; ++c) {
    auto a = parse_algorithm(static_cast<Collective>(c), params.text(kAlgorithmRows[c]));
    if (!a) return a.status();
    t.algorithm[c] = *a;
  }
  // The size rows were validated when set or when their table was added; an unregistered row
  // yields its default.
  t.segment_size = size_of(params, kSegmentSize);
  t.bcast_short_max = size_of(params, kBcastShortMax);
  t.bcast_pipeline_min = size_of(params, kBcastPipelineMin);
  t.reduce_pipeline_min = size_of(params, kReducePipelineMin);
  t.allreduce_short_max = size_of(params, kAllreduceShortMax);
  t.gather_binomial_max = size_of(params, kGatherBinomialMax);
  t.allgather_short_max = size_of(params, kAllgatherShortMax);
  t.alltoall_linear_max = size_of(params, kAlltoallLinearMax);
  t.alltoallv_linear_max_ranks = params.get_integer(kAlltoallvLinearMaxRanks);
  t.bcast_tree_max_ranks = params.get_integer(kBcastTreeMaxRanks);
  t.reduce_scatter_short_max = size_of(params, kReduceScatterShortMax);
  t.scan_pipeline_min = size_of(params, kScanPipelineMin);
  t.bcast_shm_max = size_of(params, kBcastShmMax);
  t.bcast_shm_pair_max = size_of(params, kBcastShmPairMax);
  const std::int64_t channels = params.get_integer(kShmBcastChannels);
  if (channels < 2 || channels > 65536) {
    return Status(Errc::invalid_argument, "coll.shm_bcast.channels must be between 2 and 65536, not " +
                                              std::to_string(channels));
  }
  t.shm_bcast_channels = static_cast<std::uint32_t>(channels);
  t.shm_bcast_channel_bytes = size_of(params, kShmBcastChannelBytes);
  if (t.shm_bcast_channel_bytes < 64 || t.shm_bcast_channel_bytes > (std::size_t{1} << 30)) {
    return Status(Errc::invalid_argument, "coll.shm_bcast.channel_bytes must be between 64 and 1g");
  }
  t.shm_bcast_keep_max = size_of(params, kShmBcastKeepMax);
  t.shm_bcast_timeout = params.get_duration(kShmBcastTimeout);
  t.allreduce_shm_max = size_of(params, kAllreduceShmMax);
  t.allreduce_shm_slot = size_of(params, kAllreduceShmSlot);
  if (t.allreduce_shm_slot < 64 || t.allreduce_shm_slot > (std::size_t{1} << 24)) {
    return Status(Errc::invalid_argument, "coll.allreduce.shm_slot must be between 64 and 16m");
  }
  t.allreduce_shm_sliced_min = size_of(params, kAllreduceShmSlicedMin);
  const std::int64_t flat_max = params.get_integer(kShmSyncFlatMax);
  if (flat_max < 1 || flat_max > 65536) {
    return Status(Errc::invalid_argument,
                  "coll.shm_sync.flat_max must be between 1 and 65536, not " + std::to_string(flat_max));
  }
  t.shm_sync_flat_max = static_cast<std::uint32_t>(flat_max);
  return t;
}

Tuning default_tuning() { return tuning_from(base::ParamSet{}).value(); }

bool applicable(Collective collective, Algorithm algorithm, const Shape& shape) noexcept {
  if (algorithm == Algorithm::automatic) return true;
  auto list = algorithms_of(collective);
  if (std::find(list.begin(), list.end(), algorithm) == list.end()) return false;
  if (algorithm == Algorithm::shm) return false;  // not as a schedule: see use_shm_bcast and below
  const bool pof2 = shape.ranks > 0 && (shape.ranks & (shape.ranks - 1)) == 0;
  switch (collective) {
    case Collective::allreduce: return algorithm != Algorithm::ring || shape.commutative;
    case Collective::allgather:
    case Collective::allgatherv: return algorithm != Algorithm::recursive_doubling || pof2;
    case Collective::reduce_scatter:
    case Collective::reduce_scatter_block:
      return algorithm != Algorithm::recursive_halving || shape.commutative;
    default: return true;
  }
}

namespace {

Algorithm automatic_choice(const Tuning& t, Collective collective, const Shape& s) noexcept {
  const int n = s.ranks;
  const bool pof2 = n > 0 && (n & (n - 1)) == 0;
  int floor_pof2 = 1;
  while (floor_pof2 * 2 <= n) floor_pof2 *= 2;
  switch (collective) {
    case Collective::barrier: return Algorithm::dissemination;
    case Collective::bcast:
      // With two ranks every algorithm is one transfer; binomial is the one that does not split it.
      if (n <= 2 || n <= t.bcast_tree_max_ranks || s.bytes <= t.bcast_short_max) return Algorithm::binomial;
      return s.bytes >= t.bcast_pipeline_min ? Algorithm::pipeline : Algorithm::scatter_allgather;
    case Collective::reduce:
      return n > 1 && s.bytes >= t.reduce_pipeline_min ? Algorithm::pipeline : Algorithm::binomial;
    case Collective::allreduce:
      if (n <= 2 || s.bytes <= t.allreduce_short_max || s.count < static_cast<std::size_t>(floor_pof2)) {
        return Algorithm::recursive_doubling;
      }
      return s.commutative && !pof2 ? Algorithm::ring : Algorithm::rabenseifner;
    case Collective::gather:
    case Collective::scatter:
      return s.bytes <= t.gather_binomial_max / static_cast<std::size_t>(std::max(n, 1))
                 ? Algorithm::binomial
                 : Algorithm::linear;
    case Collective::gatherv:
    case Collective::scatterv: return Algorithm::linear;
    case Collective::allgather:
      if (s.bytes > t.allgather_short_max) return Algorithm::ring;
      return pof2 ? Algorithm::recursive_doubling : Algorithm::bruck;
    case Collective::allgatherv:
      return s.bytes <= t.allgather_short_max && pof2 ? Algorithm::recursive_doubling : Algorithm::ring;
    case Collective::alltoall:
      return s.bytes <= t.alltoall_linear_max ? Algorithm::linear : Algorithm::pairwise;
    case Collective::alltoallv:
      return n <= t.alltoallv_linear_max_ranks ? Algorithm::linear : Algorithm::pairwise;
    case Collective::reduce_scatter:
    case Collective::reduce_scatter_block:
      return s.commutative && s.bytes <= t.reduce_scatter_short_max ? Algorithm::recursive_halving
                                                                     : Algorithm::pairwise;
    case Collective::scan:
    case Collective::exscan:
      return n > 1 && s.bytes >= t.scan_pipeline_min ? Algorithm::pipeline : Algorithm::recursive_doubling;
  }
  return Algorithm::automatic;
}

}  // namespace

Algorithm choose(const Tuning& tuning, Collective collective, const Shape& shape) noexcept {
  const Algorithm forced = tuning.forced(collective);
  if (forced != Algorithm::automatic && applicable(collective, forced, shape)) return forced;
  return automatic_choice(tuning, collective, shape);
}

bool use_shm_bcast(const Tuning& tuning, int ranks, std::size_t bytes) noexcept {
  if (ranks < 2) return false;
  switch (tuning.forced(Collective::bcast)) {
    case Algorithm::shm: return true;
    case Algorithm::automatic: return bytes <= (ranks == 2 ? tuning.bcast_shm_pair_max : tuning.bcast_shm_max);
    default: return false;
  }
}

bool use_shm_barrier(const Tuning& tuning, int ranks) noexcept {
  const Algorithm forced = tuning.forced(Collective::barrier);
  return ranks >= 2 && (forced == Algorithm::automatic || forced == Algorithm::shm);
}

bool use_shm_allreduce(const Tuning& tuning, int ranks, std::size_t bytes) noexcept {
  const Algorithm forced = tuning.forced(Collective::allreduce);
  return ranks >= 2 && bytes <= tuning.allreduce_shm_max &&
         (forced == Algorithm::automatic || forced == Algorithm::shm);
}

}  // namespace ftmpi::coll

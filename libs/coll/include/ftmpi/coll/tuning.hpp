// Which algorithm runs each collective: parameter rows, the Tuning read from them, and the
// dispatcher.
//
// Every collective has a row `coll.<collective>.algorithm` whose value is `auto` or one of the
// algorithms listed for it (algorithms_of), plus size thresholds the automatic choice uses. Forcing
// an algorithm is how each one is benchmarked; a forced algorithm that cannot run the call at hand
// (recursive doubling on a non-power-of-two communicator, a ring on a non-commutative op) gives way
// to the automatic choice, since an MPI program must not break because of a tuning parameter.
//
// The choice must come out the same on every rank: it depends only on the Tuning (job-scope rows),
// the communicator size and the sizes every rank knows alike (gatherv, scatterv and alltoallv, whose
// sizes only some ranks know, choose by communicator size alone).
#pragma once

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

#include "ftmpi/base/params.hpp"
#include "ftmpi/base/status.hpp"

namespace ftmpi::coll {

enum class Collective : std::uint8_t {
  barrier, bcast, reduce, allreduce,
  gather, gatherv, scatter, scatterv,
  allgather, allgatherv, alltoall, alltoallv,
  reduce_scatter, reduce_scatter_block, scan, exscan,
};
inline constexpr std::size_t kCollectiveCount = static_cast<std::size_t>(Collective::exscan) + 1;

enum class Algorithm : std::uint8_t {
  automatic,           // "auto": let choose() decide
  dissemination,       // barrier
  binomial,            // bcast, reduce, gather, scatter
  pipeline,            // segmented chain: bcast, reduce, scan, exscan
  scatter_allgather,   // bcast (van de Geijn)
  recursive_doubling,  // allreduce, allgather, allgatherv, scan, exscan
  rabenseifner,        // allreduce: reduce-scatter by recursive halving, then allgather
  ring,                // allreduce, allgather, allgatherv
  bruck,               // allgather
  linear,              // gather(v), scatter(v), alltoall(v)
  pairwise,            // alltoall(v), reduce_scatter(_block)
  recursive_halving,   // reduce_scatter(_block)
  shm,                 // bcast, barrier, allreduce through a shared-memory region per host
                       // (shm_bcast.hpp, shm_sync.hpp); only where the caller has one (the MPI layer's
                       // blocking calls): see use_shm_bcast, use_shm_barrier, use_shm_allreduce
};

std::string_view to_string(Collective collective) noexcept;
std::string_view to_string(Algorithm algorithm) noexcept;  // automatic is "auto"

// The algorithms a collective has (never automatic).
std::span<const Algorithm> algorithms_of(Collective collective) noexcept;

// `name` as an algorithm of `collective` ("auto" included). Errc::invalid_argument names the row and
// lists the choices.
base::Result<Algorithm> parse_algorithm(Collective collective, std::string_view name);

// Use default_tuning() or tuning_from(): the defaults live only in the parameter rows.
struct Tuning {
  std::array<Algorithm, kCollectiveCount> algorithm{};  // per Collective; automatic unless forced

  std::size_t segment_size = 0;              // coll.segment_size
  std::size_t bcast_short_max = 0;           // coll.bcast.short_max
  std::size_t bcast_pipeline_min = 0;        // coll.bcast.pipeline_min
  std::size_t reduce_pipeline_min = 0;       // coll.reduce.pipeline_min
  std::size_t allreduce_short_max = 0;       // coll.allreduce.short_max
  std::size_t gather_binomial_max = 0;       // coll.gather.binomial_max (gather and scatter)
  std::size_t allgather_short_max = 0;       // coll.allgather.short_max (allgather and allgatherv)
  std::size_t alltoall_linear_max = 0;       // coll.alltoall.linear_max
  std::int64_t alltoallv_linear_max_ranks = 0;  // coll.alltoallv.linear_max_ranks
  std::int64_t bcast_tree_max_ranks = 0;        // coll.bcast.tree_max_ranks
  std::size_t reduce_scatter_short_max = 0;  // coll.reduce_scatter.short_max (and _block)
  std::size_t scan_pipeline_min = 0;         // coll.scan.pipeline_min (scan and exscan)
  std::size_t bcast_shm_max = 0;             // coll.bcast.shm_max
  std::size_t bcast_shm_pair_max = 0;        // coll.bcast.shm_pair_max
  std::uint32_t shm_bcast_channels = 0;      // coll.shm_bcast.channels
  std::size_t shm_bcast_channel_bytes = 0;   // coll.shm_bcast.channel_bytes
  std::size_t shm_bcast_keep_max = 0;        // coll.shm_bcast.keep_max
  std::chrono::nanoseconds shm_bcast_timeout{};  // coll.shm_bcast.timeout
  std::size_t allreduce_shm_max = 0;         // coll.allreduce.shm_max
  std::size_t allreduce_shm_slot = 0;        // coll.allreduce.shm_slot
  std::size_t allreduce_shm_sliced_min = 0;  // coll.allreduce.shm_sliced_min
  std::uint32_t shm_sync_flat_max = 0;       // coll.shm_sync.flat_max

  Algorithm forced(Collective c) const noexcept { return algorithm[static_cast<std::size_t>(c)]; }
  // Errc::invalid_argument for a name that is not one of the collective's algorithms.
  base::Status force(Collective c, std::string_view name);
};

// This library's parameter table.
std::span<const base::ParamRow> coll_params() noexcept;
// The `coll.<collective>.algorithm` row.
const base::ParamRow& algorithm_param(Collective collective) noexcept;

Tuning default_tuning();
// The values in effect in `params` (defaults for rows it does not hold).
base::Result<Tuning> tuning_from(const base::ParamSet& params);

// What the dispatcher looks at.
struct Shape {
  int ranks = 1;
  // bcast: the message; reduce, allreduce, scan, exscan: the vector; gather, scatter: one rank's
  // block; allgather(v), reduce_scatter(_block): the whole gathered or reduced vector; alltoall: one
  // pair's block; unused by barrier, gatherv, scatterv and alltoallv.
  std::size_t bytes = 0;
  std::size_t count = 0;  // elements of the vector, for reductions
  bool commutative = true;
};

// Whether `algorithm` can run a call of this shape (automatic always can).
bool applicable(Collective collective, Algorithm algorithm, const Shape& shape) noexcept;

// The algorithm that runs: the forced one if it is applicable, else the automatic choice. Never
// returns automatic, nor shm (schedules cannot run it: see use_shm_bcast).
Algorithm choose(const Tuning& tuning, Collective collective, const Shape& shape) noexcept;

// For a caller that can run the shared-memory broadcast: whether a broadcast of `bytes` on `ranks`
// ranks takes it. Forced shm: always (with 2 ranks or more); auto: up to coll.bcast.shm_max, or
// coll.bcast.shm_pair_max on 2 ranks (where the tree is one message); any other forced algorithm:
// never. The same on every rank.
bool use_shm_bcast(const Tuning& tuning, int ranks, std::size_t bytes) noexcept;

// For a caller that has a shared-memory sync region (shm_sync.hpp) over every rank of a communicator:
// whether a barrier takes it (auto or forced shm, 2 ranks or more), and whether an allreduce of `bytes`
// does (the same, up to coll.allreduce.shm_max). The same on every rank.
bool use_shm_barrier(const Tuning& tuning, int ranks) noexcept;
bool use_shm_allreduce(const Tuning& tuning, int ranks, std::size_t bytes) noexcept;

}  // namespace ftmpi::coll

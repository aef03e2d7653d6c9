// Every runtime parameter of libftmpi, gathered in one place. Kept apart from the engine so that a
// tool can list and validate parameters without linking the engine.
#include "ftmpi/base/log.hpp"
#include "ftmpi/coll/tuning.hpp"
#include "ftmpi/match/matcher.hpp"
#include "ftmpi/path/params.hpp"
#include "ftmpi/rte/params.hpp"
#include "params.hpp"

namespace ftmpi::engine {
namespace {

constexpr ParamRow kEngineParams[] = {kReliability,   kChecksum,      kShmEagerLimit, kNetEagerLimit, kShmSingleCopyMin,
                                      kRetransmitMin, kRetransmitMax, kAckEvery,      kAckDelay,
                                      kSpinRounds,    kProgressThread, kProgressThreadSleep, kWindow, kWindowFrames, kRailDownAfter, kPeerTimeout,
                                      kProbeMin, kProbeMax, kReport, kHostId};

}  // namespace

std::span<const ParamRow> engine_params() noexcept { return kEngineParams; }

std::span<const std::span<const base::ParamRow>> all_param_tables() noexcept {
  static const std::span<const base::ParamRow> tables[] = {base::base_params(), match::match_params(),
                                                          path::path_params(), rte::rte_params(), coll::coll_params(),
                                                          engine_params()};
  return tables;
}

}  // namespace ftmpi::engine

// The parameter catalogue (catalogue.hpp) and the engine's table (engine_params.hpp).
#include "ftmpi/params/catalogue.hpp"

#include "ftmpi/base/log.hpp"
#include "ftmpi/coll/tuning.hpp"
#include "ftmpi/match/matcher.hpp"
#include "ftmpi/params/engine_params.hpp"
#include "ftmpi/path/params.hpp"
#include "ftmpi/rte/params.hpp"

namespace ftmpi {
namespace engine {
namespace {

constexpr ParamRow kEngineParams[] = {kReliability,   kChecksum,       kShmEagerLimit,       kNetEagerLimit,
                                      kIntegrity,
                                      kEagerCredit,
                                      kShmSingleCopyMin, kShmSingleCopyMax, kShmSplitCopyMin, kShmGatherMax, kRetainByReference, kRetainAfterSend, kRetransmitMin, kRetransmitMax,     kAckEvery,
                                      kAckDelay,      kSpinRounds,     kProgressThread,      kProgressThreadSleep,
                                      kWindow,        kWindowFrames,   kRailDownAfter,       kPeerTimeout,
                                      kProbeMin,      kProbeMax,       kReport,              kFlightEvents,
                                      kFlightInterval, kFlightWrite,   kFlightDir,           kHostId,
                                      kTestOverlapTag, kTestPollTag};

}  // namespace

std::span<const ParamRow> engine_params() noexcept { return kEngineParams; }

}  // namespace engine

namespace params {

std::span<const std::span<const base::ParamRow>> all_param_tables() noexcept {
  static const std::span<const base::ParamRow> tables[] = {base::base_params(), match::match_params(),
                                                          path::path_params(),  rte::rte_params(),
                                                          coll::coll_params(),  engine::engine_params()};
  return tables;
}

}  // namespace params
}  // namespace ftmpi

#include "ftmpi/rte/params.hpp"

namespace ftmpi::rte {
namespace {

constexpr base::ParamRow kRteParams[] = {kConnectTimeout, kKillGrace, kDisconnectGrace, kOutputLinger,
                                         kListenAddress};

}  // namespace

std::span<const base::ParamRow> rte_params() noexcept { return kRteParams; }

}  // namespace ftmpi::rte

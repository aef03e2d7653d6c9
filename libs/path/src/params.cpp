#include "ftmpi/path/params.hpp"

namespace ftmpi::path {
namespace {

constexpr base::ParamRow kPathParams[] = {kShmSlots,      kShmSlotSize,      kKinds, kRails,
                                            kUdpMaxFrame,   kUdpSendBuffer,    kUdpReceiveBuffer, kUdpPlace,
                                            kFault,         kFaultPlan};

}  // namespace

std::span<const base::ParamRow> path_params() noexcept { return kPathParams; }

}  // namespace ftmpi::path

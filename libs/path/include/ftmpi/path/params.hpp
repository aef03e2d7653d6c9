// The path library's runtime parameters (DESIGN.md section 5): one ParamRow each, listed in path_params().
#pragma once

#include <span>

#include "ftmpi/base/params.hpp"

namespace ftmpi::path {

// Job scope: every local rank maps the same segment, so all must agree (attach checks it).
inline constexpr base::ParamRow kShmSlots{
    "path.shm.slots", base::ParamType::integer, "128",
    "slots in each shared-memory FIFO (one FIFO per ordered pair of local ranks); a power of two, 2..65536",
    base::ParamLevel::advanced, base::ParamScope::job};

// 8448 = 8 KiB + 256: an 8 KiB payload behind the engine's wire header (112 bytes today, room up to 240)
// and the 16-byte slot header fits one slot, so an 8 KiB message is one frame; a multiple of 64 so every
// slot starts on its own cache line.
inline constexpr base::ParamRow kShmSlotSize{
    "path.shm.slot_size", base::ParamType::size, "8448",
    "bytes per shared-memory FIFO slot, its 16-byte header included (largest frame = this - 16); "
    "a multiple of 64, 128..64m",
    base::ParamLevel::advanced, base::ParamScope::job};

// This library's parameter table.
std::span<const base::ParamRow> path_params() noexcept;

}  // namespace ftmpi::path

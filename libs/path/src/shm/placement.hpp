// Where a sender's FIFO memory lives: on its own NUMA node, allocated before the first frame.
#pragma once

#include <cstddef>

#include "ftmpi/base/status.hpp"

namespace ftmpi::path::shm {

// Binds `size` bytes at `row` (page-aligned: this rank's outgoing FIFOs) to the NUMA node(s) this process
// runs on when the machine has more than one, then allocates their pages now (MADV_POPULATE_WRITE), so
// that the data path never takes a page fault and a full /dev/shm shows up here instead of as SIGBUS.
// Binding failures fall back silently to first touch, which populating from this process already gives.
base::Status place_near_sender(std::byte* row, std::size_t size) noexcept;

}  // namespace ftmpi::path::shm

// The exchange under every neighborhood collective (MPI_Neighbor_allgather ... alltoallw): a list of
// sends and a list of receives, all posted at once in the order given, one round. A peer below 0
// (MPI_PROC_NULL) moves nothing. Two messages between one pair of ranks match in the order each side
// lists them, so both sides must list a pair's messages in corresponding order.
#pragma once

#include <cstddef>
#include <span>

#include "ftmpi/base/status.hpp"
#include "ftmpi/coll/collectives.hpp"

namespace ftmpi::coll {

struct NeighborSend {
  int peer = -1;
  const void* data = nullptr;
  std::size_t bytes = 0;
};
struct NeighborRecv {
  int peer = -1;
  void* data = nullptr;
  std::size_t bytes = 0;
};

base::Result<Schedule> ineighbor_exchange(const Call& call, std::span<const NeighborSend> sends,
                                          std::span<const NeighborRecv> recvs);

}  // namespace ftmpi::coll

// Communicators as the MPI layer keeps them, and one checked point-to-point transfer.
#pragma once

#include <climits>
#include <cstddef>
#include <string_view>
#include <vector>

#include "engine/engine.hpp"
#include "mpi/api.hpp"

namespace ftmpi::mpi {

// The largest tag (the MPI_TAG_UB attribute): the wire carries tags as non-negative int32.
inline constexpr int kTagUb = INT_MAX;

struct Comm {
  int handle = MPI_COMM_NULL;
  std::string_view name;         // "MPI_COMM_WORLD", for messages
  std::vector<int> world_ranks;  // what view.world_ranks points into (empty for MPI_COMM_WORLD)
  engine::CommView view;
  MPI_Errhandler errhandler = MPI_ERRORS_ARE_FATAL;

  int size() const noexcept { return view.size; }
  int rank() const noexcept { return view.rank; }
};

// The arguments of one send or receive, checked: count x datatype is already bytes.
struct Transfer {
  Comm* comm = nullptr;
  void* buf = nullptr;  // for sends the engine only reads it
  std::size_t bytes = 0;
  int peer = MPI_PROC_NULL;  // destination or source, as MPI names it (may be MPI_ANY_SOURCE)
  int tag = 0;               // may be MPI_ANY_TAG on receives
};

}  // namespace ftmpi::mpi

// Cartesian topologies (row-major rank order; `reorder` is accepted and ignored: ranks keep their
// order). Graph and distributed graph topologies are not implemented: no communicator has one.
#include <algorithm>
#include <functional>
#include <numeric>
#include <vector>

#include <fmt/format.h>

#include "mpi/api.hpp"
#include "mpi/call.hpp"
#include "mpi/comms.hpp"
#include "mpi/runtime.hpp"

namespace ftmpi::mpi {
namespace {

const CartTopology* check_cart(Call& call, const Comm& comm) {
  if (comm.cart) return &*comm.cart;
  call.fail(MPI_ERR_TOPOLOGY, fmt::format("{} has no Cartesian topology", label(comm)));
  return nullptr;
}

std::vector<int> coords_of(const CartTopology& cart, int rank) {
  std::vector<int> coords(cart.dims.size());
  for (std::size_t i = cart.dims.size(); i-- > 0;) {
    coords[i] = rank % cart.dims[i];
    rank /= cart.dims[i];
  }
  return coords;
}

// The rank at `coords` (periodic dimensions wrap), or -1 when a coordinate leaves a non-periodic one.
int rank_at(const CartTopology& cart, const std::vector<int>& coords) {
  int rank = 0;
  for (std::size_t i = 0; i < cart.dims.size(); ++i) {
    int c = coords[i];
    const int d = cart.dims[i];
    if (c < 0 || c >= d) {
      if (!cart.periods[i]) return -1;
      c = ((c % d) + d) % d;
    }
    rank = rank * d + c;
  }
  return rank;
}

}  // namespace
}  // namespace ftmpi::mpi

using namespace ftmpi::mpi;

namespace {
// What MPI_UNWEIGHTED and MPI_WEIGHTS_EMPTY point at: addresses no array of the program can have.
int unweighted_sentinel = 0;
int weights_empty_sentinel = 0;
}  // namespace

extern "C" {

int* const MPI_UNWEIGHTED = &unweighted_sentinel;
int* const MPI_WEIGHTS_EMPTY = &weights_empty_sentinel;

// Factors the free dimensions as evenly as possible: each prime factor of what is left, largest
// first, goes to the free dimension that is smallest so far; the result is in non-increasing order.
int PMPI_Dims_create(int nnodes, int ndims, int* dims) {
  return api_call("MPI_Dims_create", [&](Call& call) {
    if (nnodes <= 0) {
      call.fail(MPI_ERR_ARG, fmt::format("nnodes must be positive, not {}", nnodes));
      return;
    }
    if (ndims < 0) {
      call.fail(MPI_ERR_DIMS, fmt::format("negative ndims {}", ndims));
      return;
    }
    if (ndims > 0 && !check_arg(call, dims, "dims")) return;
    int fixed = 1;
    std::vector<std::size_t> free;
    for (int i = 0; i < ndims; ++i) {
      if (dims[i] < 0) {
        call.fail(MPI_ERR_DIMS, fmt::format("dims[{}] is negative ({})", i, dims[i]));
        return;
      }
      if (dims[i] == 0) {
        free.push_back(static_cast<std::size_t>(i));
      } else {
        fixed *= dims[i];
      }
    }
    if (nnodes % fixed != 0 || (free.empty() && fixed != nnodes)) {
      call.fail(MPI_ERR_DIMS, fmt::format("the given dimensions (product {}) do not divide {} nodes", fixed, nnodes));
      return;
    }
    if (free.empty()) return;
    int rest = nnodes / fixed;
    std::vector<int> factors;
    for (int p = 2; p * p <= rest; ++p) {
      while (rest % p == 0) {
        factors.push_back(p);
        rest /= p;
      }
    }
    if (rest > 1) factors.push_back(rest);
    std::vector<int> sizes(free.size(), 1);
    for (auto f = factors.rbegin(); f != factors.rend(); ++f) *std::min_element(sizes.begin(), sizes.end()) *= *f;
    std::sort(sizes.begin(), sizes.end(), std::greater<>());
    for (std::size_t k = 0; k < free.size(); ++k) dims[free[k]] = sizes[k];
  });
}
#pragma weak MPI_Dims_create = PMPI_Dims_create

int PMPI_Cart_create(MPI_Comm comm_old, int ndims, const int* dims, const int* periods, int /*reorder*/,
                     MPI_Comm* comm_cart) {
  return api_call("MPI_Cart_create", [&](Call& call) {
    Comm* c = check_intra(call, comm_old);
    if (c == nullptr || !check_arg(call, comm_cart, "comm_cart")) return;
    if (ndims < 0) {
      call.fail(MPI_ERR_DIMS, fmt::format("negative ndims {}", ndims));
      return;
    }
    if (ndims > 0 && (!check_arg(call, dims, "dims") || !check_arg(call, periods, "periods"))) return;
    CartTopology cart;
    long nodes = 1;
    for (int i = 0; i < ndims; ++i) {
      if (dims[i] <= 0) {
        call.fail(MPI_ERR_DIMS, fmt::format("dims[{}] must be positive, not {}", i, dims[i]));
        return;
      }
      nodes *= dims[i];
      if (nodes > c->size()) break;
      cart.dims.push_back(dims[i]);
      cart.periods.push_back(periods[i] != 0);
    }
    if (nodes > c->size()) {
      call.fail(MPI_ERR_TOPOLOGY, fmt::format("the grid needs more than the {} ranks of {}", c->size(), label(*c)));
      return;
    }
    std::vector<int> ranks(static_cast<std::size_t>(nodes));
    std::iota(ranks.begin(), ranks.end(), 0);
    const std::optional<Comm*> made = create_comm(call, *c, ranks);
    if (!made) return;
    *comm_cart = MPI_COMM_NULL;
    if (*made == nullptr) return;
    (*made)->errhandler = c->errhandler;
    (*made)->cart = std::move(cart);
    *comm_cart = (*made)->handle;
  });
}
#pragma weak MPI_Cart_create = PMPI_Cart_create

int PMPI_Cart_coords(MPI_Comm comm, int rank, int maxdims, int* coords) {
  return api_call("MPI_Cart_coords", [&](Call& call) {
    const Comm* c = check_comm(call, comm);
    const CartTopology* cart = c == nullptr ? nullptr : check_cart(call, *c);
    if (cart == nullptr) return;
    if (rank < 0 || rank >= c->size()) {
      call.fail(MPI_ERR_RANK, fmt::format("invalid rank {} ({} has {} ranks)", rank, label(*c), c->size()));
      return;
    }
    if (maxdims < static_cast<int>(cart->dims.size())) {
      call.fail(MPI_ERR_ARG, fmt::format("maxdims {} is below the {} dimensions", maxdims, cart->dims.size()));
      return;
    }
    if (!cart->dims.empty() && !check_arg(call, coords, "coords")) return;
    const std::vector<int> cs = coords_of(*cart, rank);
    std::copy(cs.begin(), cs.end(), coords);
  });
}
#pragma weak MPI_Cart_coords = PMPI_Cart_coords

int PMPI_Cart_rank(MPI_Comm comm, const int* coords, int* rank) {
  return api_call("MPI_Cart_rank", [&](Call& call) {
    const Comm* c = check_comm(call, comm);
    const CartTopology* cart = c == nullptr ? nullptr : check_cart(call, *c);
    if (cart == nullptr || !check_arg(call, rank, "rank")) return;
    if (!cart->dims.empty() && !check_arg(call, coords, "coords")) return;
    const std::vector<int> cs(coords, coords + cart->dims.size());
    const int r = rank_at(*cart, cs);
    if (r < 0) {
      call.fail(MPI_ERR_ARG, "a coordinate is outside a non-periodic dimension");
      return;
    }
    *rank = r;
  });
}
#pragma weak MPI_Cart_rank = PMPI_Cart_rank

int PMPI_Cart_shift(MPI_Comm comm, int direction, int disp, int* rank_source, int* rank_dest) {
  return api_call("MPI_Cart_shift", [&](Call& call) {
    const Comm* c = check_comm(call, comm);
    const CartTopology* cart = c == nullptr ? nullptr : check_cart(call, *c);
    if (cart == nullptr || !check_arg(call, rank_source, "rank_source") || !check_arg(call, rank_dest, "rank_dest")) {
      return;
    }
    if (direction < 0 || direction >= static_cast<int>(cart->dims.size())) {
      call.fail(MPI_ERR_ARG, fmt::format("direction {} is not one of the {} dimensions", direction, cart->dims.size()));
      return;
    }
    std::vector<int> coords = coords_of(*cart, c->rank());
    const auto d = static_cast<std::size_t>(direction);
    const int here = coords[d];
    coords[d] = here + disp;
    const int dest = rank_at(*cart, coords);
    coords[d] = here - disp;
    const int source = rank_at(*cart, coords);
    *rank_dest = dest < 0 ? MPI_PROC_NULL : dest;
    *rank_source = source < 0 ? MPI_PROC_NULL : source;
  });
}
#pragma weak MPI_Cart_shift = PMPI_Cart_shift

int PMPI_Cart_sub(MPI_Comm comm, const int* remain_dims, MPI_Comm* newcomm) {
  return api_call("MPI_Cart_sub", [&](Call& call) {
    Comm* c = check_comm(call, comm);
    const CartTopology* cart = c == nullptr ? nullptr : check_cart(call, *c);
    if (cart == nullptr || !check_arg(call, newcomm, "newcomm")) return;
    if (!cart->dims.empty() && !check_arg(call, remain_dims, "remain_dims")) return;
    // Ranks that agree on every dropped coordinate form one subgrid, in their old order.
    const std::vector<int> coords = coords_of(*cart, c->rank());
    CartTopology sub;
    int color = 0;
    for (std::size_t i = 0; i < cart->dims.size(); ++i) {
      if (remain_dims[i] != 0) {
        sub.dims.push_back(cart->dims[i]);
        sub.periods.push_back(cart->periods[i]);
      } else {
        color = color * cart->dims[i] + coords[i];
      }
    }
    const std::optional<Comm*> made = split_comm(call, *c, color, c->rank());
    if (!made) return;
    (*made)->errhandler = c->errhandler;
    (*made)->cart = std::move(sub);
    *newcomm = (*made)->handle;
  });
}
#pragma weak MPI_Cart_sub = PMPI_Cart_sub

int PMPI_Cartdim_get(MPI_Comm comm, int* ndims) {
  return api_call("MPI_Cartdim_get", [&](Call& call) {
    const Comm* c = check_comm(call, comm);
    const CartTopology* cart = c == nullptr ? nullptr : check_cart(call, *c);
    if (cart != nullptr && check_arg(call, ndims, "ndims")) *ndims = static_cast<int>(cart->dims.size());
  });
}
#pragma weak MPI_Cartdim_get = PMPI_Cartdim_get

int PMPI_Cart_get(MPI_Comm comm, int maxdims, int* dims, int* periods, int* coords) {
  return api_call("MPI_Cart_get", [&](Call& call) {
    const Comm* c = check_comm(call, comm);
    const CartTopology* cart = c == nullptr ? nullptr : check_cart(call, *c);
    if (cart == nullptr) return;
    const auto n = static_cast<int>(cart->dims.size());
    if (maxdims < n) {
      call.fail(MPI_ERR_ARG, fmt::format("maxdims {} is below the {} dimensions", maxdims, n));
      return;
    }
    if (n > 0 && (!check_arg(call, dims, "dims") || !check_arg(call, periods, "periods") ||
                  !check_arg(call, coords, "coords"))) {
      return;
    }
    const std::vector<int> cs = coords_of(*cart, c->rank());
    for (std::size_t i = 0; i < cart->dims.size(); ++i) {
      dims[i] = cart->dims[i];
      periods[i] = cart->periods[i] ? 1 : 0;
      coords[i] = cs[i];
    }
  });
}
#pragma weak MPI_Cart_get = PMPI_Cart_get

int PMPI_Topo_test(MPI_Comm comm, int* status) {
  return api_call("MPI_Topo_test", [&](Call& call) {
    const Comm* c = check_comm(call, comm);
    if (c != nullptr && check_arg(call, status, "status")) *status = c->cart ? MPI_CART : MPI_UNDEFINED;
  });
}
#pragma weak MPI_Topo_test = PMPI_Topo_test

int PMPI_Dist_graph_neighbors_count(MPI_Comm comm, int* /*indegree*/, int* /*outdegree*/, int* /*weighted*/) {
  return api_call("MPI_Dist_graph_neighbors_count", [&](Call& call) {
    const Comm* c = check_comm(call, comm);
    if (c != nullptr) {
      call.fail(MPI_ERR_TOPOLOGY, fmt::format("{} has no distributed graph topology (ftmpi implements Cartesian "
                                              "topologies only)", label(*c)));
    }
  });
}
#pragma weak MPI_Dist_graph_neighbors_count = PMPI_Dist_graph_neighbors_count

int PMPI_Dist_graph_neighbors(MPI_Comm comm, int /*maxindegree*/, int* /*sources*/, int* /*sourceweights*/,
                              int /*maxoutdegree*/, int* /*destinations*/, int* /*destweights*/) {
  return api_call("MPI_Dist_graph_neighbors", [&](Call& call) {
    const Comm* c = check_comm(call, comm);
    if (c != nullptr) {
      call.fail(MPI_ERR_TOPOLOGY, fmt::format("{} has no distributed graph topology (ftmpi implements Cartesian "
                                              "topologies only)", label(*c)));
    }
  });
}
#pragma weak MPI_Dist_graph_neighbors = PMPI_Dist_graph_neighbors

}  // extern "C"

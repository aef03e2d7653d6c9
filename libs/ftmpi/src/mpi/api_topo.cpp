// Topologies: Cartesian (row-major rank order), graph (MPI_Graph_create) and distributed graph
// (MPI_Dist_graph_create, _adjacent). `reorder` is accepted and ignored: ranks keep their order. The
// neighbors the neighborhood collectives use (neighbors_of) come from here.
#include <algorithm>
#include <cstdint>
#include <functional>
#include <numeric>
#include <optional>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "ftmpi/coll/collectives.hpp"

#include "mpi/api.hpp"
#include "mpi/call.hpp"
#include "mpi/comms.hpp"
#include "mpi/collective.hpp"
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

// A graph topology's neighbors are ranks of the communicator (MPI_ERR_RANK otherwise).
bool check_ranks(Call& call, const Comm& comm, const int* ranks, int n, std::string_view what) {
  for (int i = 0; i < n; ++i) {
    if (ranks[i] < 0 || ranks[i] >= comm.size()) {
      call.fail(MPI_ERR_RANK, fmt::format("{}[{}] = {} is not a rank of {} ({} ranks)", what, i, ranks[i], label(comm),
                                          comm.size()));
      return false;
    }
  }
  return true;
}

// Weights as given: MPI_UNWEIGHTED (none), MPI_WEIGHTS_EMPTY (none, for a degree of 0), or n values.
std::optional<std::vector<int>> weights_of(Call& call, const int* weights, int n, std::string_view what) {
  if (weights == MPI_UNWEIGHTED || weights == MPI_WEIGHTS_EMPTY || n == 0) return std::vector<int>{};
  if (!check_arg(call, weights, what)) return std::nullopt;
  for (int i = 0; i < n; ++i) {
    if (weights[i] < 0) {
      call.fail(MPI_ERR_ARG, fmt::format("{}[{}] is negative ({})", what, i, weights[i]));
      return std::nullopt;
    }
  }
  return std::vector<int>(weights, weights + n);
}

const GraphTopology* check_graph(Call& call, const Comm& comm, bool distributed) {
  if (comm.graph && comm.graph->distributed == distributed) return &*comm.graph;
  call.fail(MPI_ERR_TOPOLOGY, fmt::format("{} has no {} topology", label(comm), distributed ? "distributed graph" : "graph"));
  return nullptr;
}

// The new communicator of a graph topology: comm_old's members in order, the topology attached.
void attach_graph(Call& call, Comm& old, GraphTopology graph, MPI_Comm* out) {
  const std::optional<std::uint32_t> context = agree_context(call, old);
  if (!context) return;
  Comm& made = add_comm(old.members(), *context);
  made.errhandler = old.errhandler;
  made.graph = std::move(graph);
  *out = made.handle;
}

}  // namespace

std::optional<Neighbors> neighbors_of(const Comm& comm) {
  Neighbors n;
  if (comm.graph) {
    n.sources = comm.graph->sources;
    n.destinations = comm.graph->destinations;
  } else if (comm.cart) {
    // For each dimension the neighbor in the negative direction, then the positive one. A message to
    // the positive neighbor is posted before the one to the negative neighbor: the peer lists us in the
    // opposite order, so when one peer is both (a periodic dimension of 1 or 2) the messages still meet
    // the right receives.
    const CartTopology& cart = *comm.cart;
    const std::vector<int> here = coords_of(cart, comm.rank());
    for (std::size_t d = 0; d < cart.dims.size(); ++d) {
      for (int step : {-1, 1}) {
        std::vector<int> there = here;
        there[d] += step;
        const int r = rank_at(cart, there);
        n.sources.push_back(r < 0 ? MPI_PROC_NULL : r);
      }
      n.send_order.push_back(2 * d + 1);
      n.send_order.push_back(2 * d);
    }
    n.destinations = n.sources;
    return n;
  } else {
    return std::nullopt;
  }
  n.send_order.resize(n.destinations.size());
  std::iota(n.send_order.begin(), n.send_order.end(), std::size_t{0});
  return n;
}

}  // namespace ftmpi::mpi

using namespace ftmpi::mpi;

namespace {
// What MPI_UNWEIGHTED and MPI_WEIGHTS_EMPTY point at: addresses no array of the program can have.
int unweighted_sentinel = 0;
int weights_empty_sentinel = 0;
}  // namespace

namespace {

// The most balanced way to write n as m factors in non-increasing order: the least spread between the
// largest and the smallest factor, then the least sum (MPICH's choice, which programs and MPICH's
// tests expect: 72 in two dimensions is 9 x 8). Depth-first over the divisors, pruned by the spread.
struct Balanced {
  std::vector<std::int64_t> divisors;  // of the whole number, largest first
  std::vector<int> current, best;
  std::int64_t best_spread = INT64_MAX, best_sum = INT64_MAX;

  void search(std::int64_t n, std::size_t m, std::int64_t largest, std::int64_t sum) {
    if (!current.empty() && current.front() - current.back() > best_spread) return;
    if (m == 1) {
      if (n > largest) return;
      const std::int64_t spread = (current.empty() ? n : current.front()) - n;
      if (spread < best_spread || (spread == best_spread && sum + n < best_sum)) {
        best = current;
        best.push_back(static_cast<int>(n));
        best_spread = spread;
        best_sum = sum + n;
      }
      return;
    }
    for (const std::int64_t d : divisors) {
      if (d > largest || n % d != 0) continue;
      // The other m - 1 factors are at most d: d^m must reach n.
      std::int64_t reach = 1;
      for (std::size_t k = 0; k < m && reach < n; ++k) reach *= d;
      if (reach < n) break;  // smaller divisors reach even less
      current.push_back(static_cast<int>(d));
      search(n / d, m - 1, d, sum + d);
      current.pop_back();
    }
  }
};

std::vector<int> balanced_factors(int n, std::size_t m) {
  Balanced b;
  for (std::int64_t d = 1; d * d <= n; ++d) {
    if (n % d == 0) {
      b.divisors.push_back(d);
      if (d * d != n) b.divisors.push_back(n / d);
    }
  }
  std::sort(b.divisors.begin(), b.divisors.end(), std::greater<>());
  b.search(n, m, n, 0);
  return b.best;
}

}  // namespace

extern "C" {

int* const MPI_UNWEIGHTED = &unweighted_sentinel;
int* const MPI_WEIGHTS_EMPTY = &weights_empty_sentinel;

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
    const std::vector<int> sizes = balanced_factors(nnodes / fixed, free.size());
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

// MPI_Cart_map and MPI_Graph_map: ftmpi does not reorder ranks, so a process keeps its rank if the
// topology has room for it, else gets MPI_UNDEFINED (MPI-3.1 section 7.5.8).
int PMPI_Cart_map(MPI_Comm comm, int ndims, const int* dims, const int* /*periods*/, int* newrank) {
  return api_call("MPI_Cart_map", [&](Call& call) {
    const Comm* c = check_intra(call, comm);
    if (c == nullptr || !check_arg(call, newrank, "newrank") || (ndims > 0 && !check_arg(call, dims, "dims"))) return;
    if (ndims < 0) {
      call.fail(MPI_ERR_DIMS, fmt::format("negative ndims {}", ndims));
      return;
    }
    long long nodes = 1;
    for (int i = 0; i < ndims; ++i) {
      if (dims[i] <= 0) {
        call.fail(MPI_ERR_DIMS, fmt::format("dims[{}] is {} (dimensions are positive)", i, dims[i]));
        return;
      }
      nodes *= dims[i];
      if (nodes > c->size()) break;
    }
    if (nodes > c->size()) {
      call.fail(MPI_ERR_DIMS, fmt::format("a grid of {}+ nodes on {} ranks", nodes, c->size()));
      return;
    }
    *newrank = c->rank() < nodes ? c->rank() : MPI_UNDEFINED;
  });
}
#pragma weak MPI_Cart_map = PMPI_Cart_map

int PMPI_Graph_map(MPI_Comm comm, int nnodes, const int* /*index*/, const int* /*edges*/, int* newrank) {
  return api_call("MPI_Graph_map", [&](Call& call) {
    const Comm* c = check_intra(call, comm);
    if (c == nullptr || !check_arg(call, newrank, "newrank")) return;
    if (nnodes <= 0 || nnodes > c->size()) {
      call.fail(MPI_ERR_ARG, fmt::format("nnodes is {} (1 to the {} ranks of the communicator)", nnodes, c->size()));
      return;
    }
    *newrank = c->rank() < nnodes ? c->rank() : MPI_UNDEFINED;
  });
}
#pragma weak MPI_Graph_map = PMPI_Graph_map

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
    if (c == nullptr || !check_arg(call, status, "status")) return;
    *status = c->cart ? MPI_CART : !c->graph ? MPI_UNDEFINED : c->graph->distributed ? MPI_DIST_GRAPH : MPI_GRAPH;
  });
}
#pragma weak MPI_Topo_test = PMPI_Topo_test

int PMPI_Dist_graph_create_adjacent(MPI_Comm comm_old, int indegree, const int* sources, const int* sourceweights,
                                    int outdegree, const int* destinations, const int* destweights, MPI_Info info,
                                    int /*reorder*/, MPI_Comm* comm_dist_graph) {
  return api_call("MPI_Dist_graph_create_adjacent", [&](Call& call) {
    Comm* c = check_intra(call, comm_old);
    if (c == nullptr || !check_arg(call, comm_dist_graph, "comm_dist_graph")) return;
    if (info != MPI_INFO_NULL && check_info(call, info) == nullptr) return;
    if (indegree < 0 || outdegree < 0) {
      call.fail(MPI_ERR_ARG, fmt::format("negative degree ({} in, {} out)", indegree, outdegree));
      return;
    }
    if ((indegree > 0 && !check_arg(call, sources, "sources")) ||
        (outdegree > 0 && !check_arg(call, destinations, "destinations")) ||
        !check_ranks(call, *c, sources, indegree, "sources") ||
        !check_ranks(call, *c, destinations, outdegree, "destinations")) {
      return;
    }
    const std::optional<std::vector<int>> in_weights = weights_of(call, sourceweights, indegree, "sourceweights");
    const std::optional<std::vector<int>> out_weights = weights_of(call, destweights, outdegree, "destweights");
    if (!in_weights || !out_weights) return;
    GraphTopology graph;
    graph.distributed = true;
    graph.sources.assign(sources, sources + indegree);
    graph.destinations.assign(destinations, destinations + outdegree);
    graph.weighted = sourceweights != MPI_UNWEIGHTED;
    graph.source_weights = *in_weights;
    graph.destination_weights = *out_weights;
    attach_graph(call, *c, std::move(graph), comm_dist_graph);
  });
}
#pragma weak MPI_Dist_graph_create_adjacent = PMPI_Dist_graph_create_adjacent

// Any process may name any edge: each edge is sent to its two ends (an alltoall of counts, then of the
// edges), which list them in the order they arrive (by the naming process's rank, then as it named them).
int PMPI_Dist_graph_create(MPI_Comm comm_old, int n, const int* sources, const int* degrees, const int* destinations,
                           const int* weights, MPI_Info info, int /*reorder*/, MPI_Comm* comm_dist_graph) {
  return api_call("MPI_Dist_graph_create", [&](Call& call) {
    Comm* c = check_intra(call, comm_old);
    if (c == nullptr || !check_arg(call, comm_dist_graph, "comm_dist_graph")) return;
    if (info != MPI_INFO_NULL && check_info(call, info) == nullptr) return;
    if (n < 0) {
      call.fail(MPI_ERR_ARG, fmt::format("negative n {}", n));
      return;
    }
    if (n > 0 && (!check_arg(call, sources, "sources") || !check_arg(call, degrees, "degrees"))) return;
    if (!check_ranks(call, *c, sources, n, "sources")) return;
    int edges = 0;
    for (int i = 0; i < n; ++i) {
      if (degrees[i] < 0) {
        call.fail(MPI_ERR_ARG, fmt::format("degrees[{}] is negative ({})", i, degrees[i]));
        return;
      }
      edges += degrees[i];
    }
    if (edges > 0 && !check_arg(call, destinations, "destinations")) return;
    if (!check_ranks(call, *c, destinations, edges, "destinations")) return;
    const std::optional<std::vector<int>> w = weights_of(call, weights, edges, "weights");
    if (!w) return;
    const bool weighted = weights != MPI_UNWEIGHTED;
    // Records of 3 ints: (kind 0 = out-edge to, 1 = in-edge from, peer, weight), by the rank they go to.
    const auto size = static_cast<std::size_t>(c->size());
    std::vector<std::vector<int>> outgoing(size);
    for (int i = 0, e = 0; i < n; ++i) {
      for (int k = 0; k < degrees[i]; ++k, ++e) {
        const int weight = w->empty() ? 1 : (*w)[static_cast<std::size_t>(e)];
        const int from = sources[i];
        const int to = destinations[e];
        outgoing[static_cast<std::size_t>(from)].insert(outgoing[static_cast<std::size_t>(from)].end(), {0, to, weight});
        outgoing[static_cast<std::size_t>(to)].insert(outgoing[static_cast<std::size_t>(to)].end(), {1, from, weight});
      }
    }
    std::vector<std::size_t> send_bytes(size), recv_bytes(size);
    std::vector<std::ptrdiff_t> send_displs(size), recv_displs(size);
    std::vector<int> flat;
    for (std::size_t r = 0; r < size; ++r) {
      send_displs[r] = static_cast<std::ptrdiff_t>(flat.size() * sizeof(int));
      send_bytes[r] = outgoing[r].size() * sizeof(int);
      flat.insert(flat.end(), outgoing[r].begin(), outgoing[r].end());
    }
    CollOpPtr op = make_coll_op(*c);
    op->start(ftmpi::coll::ialltoall(op->call(), send_bytes.data(), recv_bytes.data(), sizeof(std::size_t)));
    finish_blocking(call, std::move(op));
    if (call.failed()) return;
    std::size_t total = 0;
    for (std::size_t r = 0; r < size; ++r) {
      recv_displs[r] = static_cast<std::ptrdiff_t>(total);
      total += recv_bytes[r];
    }
    std::vector<int> incoming(total / sizeof(int));
    op = make_coll_op(*c);
    op->start(ftmpi::coll::ialltoallv(op->call(), flat.data(), send_bytes, send_displs, incoming.data(), recv_bytes, recv_displs));
    finish_blocking(call, std::move(op));
    if (call.failed()) return;
    GraphTopology graph;
    graph.distributed = true;
    graph.weighted = weighted;
    for (std::size_t k = 0; k + 2 < incoming.size(); k += 3) {
      if (incoming[k] == 0) {
        graph.destinations.push_back(incoming[k + 1]);
        if (weighted) graph.destination_weights.push_back(incoming[k + 2]);
      } else {
        graph.sources.push_back(incoming[k + 1]);
        if (weighted) graph.source_weights.push_back(incoming[k + 2]);
      }
    }
    attach_graph(call, *c, std::move(graph), comm_dist_graph);
  });
}
#pragma weak MPI_Dist_graph_create = PMPI_Dist_graph_create

int PMPI_Dist_graph_neighbors_count(MPI_Comm comm, int* indegree, int* outdegree, int* weighted) {
  return api_call("MPI_Dist_graph_neighbors_count", [&](Call& call) {
    const Comm* c = check_comm(call, comm);
    const GraphTopology* g = c == nullptr ? nullptr : check_graph(call, *c, true);
    if (g == nullptr || !check_arg(call, indegree, "indegree") || !check_arg(call, outdegree, "outdegree") ||
        !check_arg(call, weighted, "weighted")) {
      return;
    }
    *indegree = static_cast<int>(g->sources.size());
    *outdegree = static_cast<int>(g->destinations.size());
    *weighted = g->weighted ? 1 : 0;
  });
}
#pragma weak MPI_Dist_graph_neighbors_count = PMPI_Dist_graph_neighbors_count

int PMPI_Dist_graph_neighbors(MPI_Comm comm, int maxindegree, int* sources, int* sourceweights, int maxoutdegree,
                              int* destinations, int* destweights) {
  return api_call("MPI_Dist_graph_neighbors", [&](Call& call) {
    const Comm* c = check_comm(call, comm);
    const GraphTopology* g = c == nullptr ? nullptr : check_graph(call, *c, true);
    if (g == nullptr) return;
    const int in = std::min(maxindegree, static_cast<int>(g->sources.size()));
    const int out = std::min(maxoutdegree, static_cast<int>(g->destinations.size()));
    if ((in > 0 && !check_arg(call, sources, "sources")) || (out > 0 && !check_arg(call, destinations, "destinations"))) {
      return;
    }
    std::copy_n(g->sources.begin(), in, sources);
    std::copy_n(g->destinations.begin(), out, destinations);
    const bool in_weights = g->weighted && sourceweights != MPI_UNWEIGHTED && sourceweights != nullptr;
    const bool out_weights = g->weighted && destweights != MPI_UNWEIGHTED && destweights != nullptr;
    if (in_weights) std::copy_n(g->source_weights.begin(), std::min<std::size_t>(in, g->source_weights.size()), sourceweights);
    if (out_weights) {
      std::copy_n(g->destination_weights.begin(), std::min<std::size_t>(out, g->destination_weights.size()), destweights);
    }
  });
}
#pragma weak MPI_Dist_graph_neighbors = PMPI_Dist_graph_neighbors

int PMPI_Graph_create(MPI_Comm comm_old, int nnodes, const int* index, const int* edges, int /*reorder*/,
                      MPI_Comm* comm_graph) {
  return api_call("MPI_Graph_create", [&](Call& call) {
    Comm* c = check_intra(call, comm_old);
    if (c == nullptr || !check_arg(call, comm_graph, "comm_graph")) return;
    if (nnodes < 0 || nnodes > c->size()) {
      call.fail(MPI_ERR_ARG, fmt::format("nnodes {} is not between 0 and the {} ranks of {}", nnodes, c->size(), label(*c)));
      return;
    }
    if (nnodes > 0 && !check_arg(call, index, "index")) return;
    int previous = 0;
    for (int i = 0; i < nnodes; ++i) {
      if (index[i] < previous) {
        call.fail(MPI_ERR_ARG, fmt::format("index[{}] = {} is below index[{}]", i, index[i], i - 1));
        return;
      }
      previous = index[i];
    }
    const int total = nnodes > 0 ? index[nnodes - 1] : 0;
    if (total > 0 && !check_arg(call, edges, "edges")) return;
    for (int e = 0; e < total; ++e) {
      if (edges[e] < 0 || edges[e] >= nnodes) {
        call.fail(MPI_ERR_ARG, fmt::format("edges[{}] = {} is not one of the {} nodes", e, edges[e], nnodes));
        return;
      }
    }
    std::vector<int> ranks(static_cast<std::size_t>(nnodes));
    std::iota(ranks.begin(), ranks.end(), 0);
    const std::optional<Comm*> made = create_comm(call, *c, ranks);
    *comm_graph = MPI_COMM_NULL;
    if (!made || *made == nullptr) return;
    GraphTopology graph;
    graph.index.assign(index, index + nnodes);
    graph.edges.assign(edges, edges + total);
    const int me = (*made)->rank();
    const int first = me == 0 ? 0 : index[me - 1];
    graph.sources.assign(edges + first, edges + index[me]);
    graph.destinations = graph.sources;
    (*made)->errhandler = c->errhandler;
    (*made)->graph = std::move(graph);
    *comm_graph = (*made)->handle;
  });
}
#pragma weak MPI_Graph_create = PMPI_Graph_create

int PMPI_Graphdims_get(MPI_Comm comm, int* nnodes, int* nedges) {
  return api_call("MPI_Graphdims_get", [&](Call& call) {
    const Comm* c = check_comm(call, comm);
    const GraphTopology* g = c == nullptr ? nullptr : check_graph(call, *c, false);
    if (g == nullptr || !check_arg(call, nnodes, "nnodes") || !check_arg(call, nedges, "nedges")) return;
    *nnodes = static_cast<int>(g->index.size());
    *nedges = static_cast<int>(g->edges.size());
  });
}
#pragma weak MPI_Graphdims_get = PMPI_Graphdims_get

int PMPI_Graph_get(MPI_Comm comm, int maxindex, int maxedges, int* index, int* edges) {
  return api_call("MPI_Graph_get", [&](Call& call) {
    const Comm* c = check_comm(call, comm);
    const GraphTopology* g = c == nullptr ? nullptr : check_graph(call, *c, false);
    if (g == nullptr) return;
    const auto ni = std::min<std::size_t>(static_cast<std::size_t>(std::max(maxindex, 0)), g->index.size());
    const auto ne = std::min<std::size_t>(static_cast<std::size_t>(std::max(maxedges, 0)), g->edges.size());
    if ((ni > 0 && !check_arg(call, index, "index")) || (ne > 0 && !check_arg(call, edges, "edges"))) return;
    std::copy_n(g->index.begin(), ni, index);
    std::copy_n(g->edges.begin(), ne, edges);
  });
}
#pragma weak MPI_Graph_get = PMPI_Graph_get

int PMPI_Graph_neighbors_count(MPI_Comm comm, int rank, int* nneighbors) {
  return api_call("MPI_Graph_neighbors_count", [&](Call& call) {
    const Comm* c = check_comm(call, comm);
    const GraphTopology* g = c == nullptr ? nullptr : check_graph(call, *c, false);
    if (g == nullptr || !check_arg(call, nneighbors, "nneighbors")) return;
    if (rank < 0 || rank >= static_cast<int>(g->index.size())) {
      call.fail(MPI_ERR_RANK, fmt::format("invalid rank {} ({} nodes)", rank, g->index.size()));
      return;
    }
    const auto r = static_cast<std::size_t>(rank);
    *nneighbors = g->index[r] - (r == 0 ? 0 : g->index[r - 1]);
  });
}
#pragma weak MPI_Graph_neighbors_count = PMPI_Graph_neighbors_count

int PMPI_Graph_neighbors(MPI_Comm comm, int rank, int maxneighbors, int* neighbors) {
  return api_call("MPI_Graph_neighbors", [&](Call& call) {
    const Comm* c = check_comm(call, comm);
    const GraphTopology* g = c == nullptr ? nullptr : check_graph(call, *c, false);
    if (g == nullptr) return;
    if (rank < 0 || rank >= static_cast<int>(g->index.size())) {
      call.fail(MPI_ERR_RANK, fmt::format("invalid rank {} ({} nodes)", rank, g->index.size()));
      return;
    }
    const auto r = static_cast<std::size_t>(rank);
    const int first = r == 0 ? 0 : g->index[r - 1];
    const int n = std::min(maxneighbors, g->index[r] - first);
    if (n > 0 && !check_arg(call, neighbors, "neighbors")) return;
    for (int k = 0; k < n; ++k) neighbors[k] = g->edges[static_cast<std::size_t>(first + k)];
  });
}
#pragma weak MPI_Graph_neighbors = PMPI_Graph_neighbors

}  // extern "C"

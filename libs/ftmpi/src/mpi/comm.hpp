// Communicators as the MPI layer keeps them, and one checked point-to-point transfer.
//
// Each communicator has two engine contexts: `view` for point-to-point and `coll_view` (the next id)
// for its collectives, whose tags come from a counter every member advances alike (MPI has the
// members start collectives in the same order). Context ids are agreed when a communicator is made:
// an allreduce(MAX) of each member's next free id over the parent (comm_create.cpp).
#pragma once

#include <climits>
#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engine/engine.hpp"
#include "mpi/api.hpp"
#include "mpi/datatype.hpp"
#include "mpi/transport.hpp"

namespace ftmpi::mpi {

struct ShmCollComm;  // shm_coll.cpp

// The largest tag (the MPI_TAG_UB attribute): the wire carries tags as non-negative int32.
inline constexpr int kTagUb = INT_MAX;

// One cached attribute, with the callbacks of its keyval as they were when it was set (MPI lets a
// keyval be freed while attributes of it remain).
struct Attribute {
  int keyval = MPI_KEYVAL_INVALID;
  void* value = nullptr;
  MPI_Comm_copy_attr_function* copy = nullptr;
  MPI_Comm_delete_attr_function* remove = nullptr;
  void* extra_state = nullptr;
};

struct CartTopology {
  std::vector<int> dims;
  std::vector<bool> periods;
};

// A graph topology (api_topo.cpp): MPI_Graph_create's whole graph, or a distributed graph's edges at
// this process. Neighbors are ranks of the communicator, in the order the program gave them.
struct GraphTopology {
  bool distributed = false;        // MPI_DIST_GRAPH; else MPI_GRAPH
  std::vector<int> index, edges;   // MPI_GRAPH: the graph as MPI_Graph_create took it
  std::vector<int> sources;        // in-neighbors (MPI_GRAPH: the neighbors)
  std::vector<int> destinations;   // out-neighbors (MPI_GRAPH: the neighbors)
  std::vector<int> source_weights, destination_weights;
  bool weighted = false;
};

// Whom a neighborhood collective exchanges with (MPI-3.1 section 7.6): receive block i comes from
// sources[i], send block j goes to destinations[j]; MPI_PROC_NULL neighbors (a Cartesian grid's edge)
// keep their blocks and move nothing. Sends are posted in `send_order`, so that two messages to one
// peer match its receives in order (a periodic dimension of 1 or 2 has one peer on both sides).
struct Neighbors {
  std::vector<int> sources;
  std::vector<int> destinations;
  std::vector<std::size_t> send_order;
};

struct Comm;

// What an intercommunicator has besides an intracommunicator's fields (api_intercomm.cpp). Its `view`
// reaches the other group (rank: mine in my group; size and world_ranks: the other group's), as MPI's
// point-to-point on an intercommunicator does; its `coll_view` numbers both groups, mine first, for
// libs/coll's inter collectives (coll/inter.hpp); `merged` is a hidden intracommunicator of both groups,
// the low group first, over which new communicators agree their context ids (dup, split, merge).
struct InterGroups {
  std::vector<int> local;   // world ranks of my group, by rank
  std::vector<int> remote;  // of the other group
  std::vector<int> both;    // local, then remote: what coll_view points into
  bool low = false;         // my group comes first in `merged` (its leader has the lower world rank)
  Comm* merged = nullptr;
};

// Not movable: the views point into world_ranks, and the transport at coll_view.
struct Comm;
class BsendBuffer;
// The neighbors of a communicator with a topology, or nullopt (MPI_ERR_TOPOLOGY) (api_topo.cpp).
std::optional<Neighbors> neighbors_of(const Comm& comm);

struct Comm {
  Comm() = default;
  Comm(const Comm&) = delete;
  Comm& operator=(const Comm&) = delete;

  int handle = MPI_COMM_NULL;
  std::string name{};            // "MPI_COMM_WORLD", for messages and MPI_Comm_get_name
  std::vector<int> world_ranks;  // what the views' world_ranks point into (empty for MPI_COMM_WORLD)
  engine::CommView view;         // point-to-point
  engine::CommView coll_view;    // collectives: context view.context + 1
  MPI_Errhandler errhandler = MPI_ERRORS_ARE_FATAL;
  int next_coll_tag = 0;
  EngineTransport transport{&coll_view};
  std::vector<Attribute> attributes;
  std::optional<CartTopology> cart;
  std::optional<GraphTopology> graph;
  ShmCollComm* shm_coll = nullptr;  // its shared-memory collective state, once set up (shm_coll.hpp)
  std::unique_ptr<InterGroups> inter;  // intercommunicators only
  // MPI_Comm_attach_buffer's, which this communicator's buffered sends use instead of the process's.
  // Shared with MPI_Comm_iflush_buffer's requests, which may outlive its detach.
  std::shared_ptr<BsendBuffer> bsend;

  bool is_inter() const noexcept { return inter != nullptr; }
  // The size of the group `view` reaches: the other group's on an intercommunicator.
  int size() const noexcept { return view.size; }
  // The size of my group (MPI_Comm_size).
  int local_size() const noexcept { return inter ? static_cast<int>(inter->local.size()) : view.size; }
  int rank() const noexcept { return view.rank; }
  int world_rank_of(int rank) const noexcept { return view.world_rank_of(rank); }
  // The members' world ranks in rank order (of my group, on an intercommunicator).
  std::vector<int> members() const;
  // The tag of the next collective call on this communicator.
  int take_coll_tag() noexcept {
    const int tag = next_coll_tag;
    next_coll_tag = tag == INT_MAX ? 0 : tag + 1;
    return tag;
  }
};

// The arguments of one send or receive, checked. `bytes` is what travels: the packed form of count x
// datatype. A type that is not dense (datatype.hpp) also gives its layout and count: the engine gathers
// the message from, or scatters it into, the pieces.
struct Transfer {
  Comm* comm = nullptr;
  void* buf = nullptr;  // for sends the engine only reads it
  std::size_t bytes = 0;
  int peer = MPI_PROC_NULL;  // destination or source, as MPI names it (may be MPI_ANY_SOURCE)
  int tag = 0;               // may be MPI_ANY_TAG on receives
  std::shared_ptr<const Layout> layout{};  // null when buf holds the bytes as they travel
  std::size_t count = 0;                 // items of layout, when there is one
  engine::MatchedMessage* matched = nullptr;  // receives: the message MPI_Mprobe took (MPI_Mrecv)
};

}  // namespace ftmpi::mpi

// Collectives, blocking and nonblocking: each checks its arguments, stages derived datatypes
// (collective.hpp) and hands the call to libs/coll on the communicator's hidden context.
//
// Each collective is one `start_*` function; MPI_X waits for the op it built, MPI_Ix gives it to a
// request. Arguments that MPI calls significant only at the root are checked only there.
#include <cstddef>
#include <numeric>
#include <span>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "ftmpi/coll/collectives.hpp"
#include "ftmpi/coll/inter.hpp"
#include "ftmpi/coll/neighbor.hpp"
#include "mpi/api.hpp"
#include "mpi/call.hpp"
#include "mpi/collective.hpp"
#include "mpi/comms.hpp"
#include "mpi/runtime.hpp"
#include "mpi/shm_coll.hpp"

namespace ftmpi::mpi {
namespace {

bool in_place(const void* buf) noexcept { return buf == MPI_IN_PLACE; }

bool refuse_in_place(Call& call, const void* buf, std::string_view which) {
  if (!in_place(buf)) return true;
  call.fail(MPI_ERR_ARG, fmt::format("{} cannot be MPI_IN_PLACE here", which));
  return false;
}

// Send and receive buffers of one rank must not overlap (MPI_IN_PLACE is how to share one).
bool check_not_aliased(Call& call, const void* send, const void* recv, std::size_t bytes) {
  if (send == nullptr || send != recv || bytes == 0 || in_place(send)) return true;
  call.fail(MPI_ERR_BUFFER, "the send and receive buffers are the same (use MPI_IN_PLACE)");
  return false;
}

// count items of a type, all checked: the committed type, or null with the call failed.
const Datatype* check_items(Call& call, const void* buf, MPI_Count count, MPI_Datatype datatype, std::string_view name) {
  if (!check_count(call, count)) return nullptr;
  const Datatype* type = check_committed(call, datatype);
  if (type == nullptr || !check_buffer(call, buf, count, *type, name)) return nullptr;
  return type;
}

// A per-rank array of counts or displacements as the program passed it: int (the classic calls),
// MPI_Count or MPI_Aint (the MPI-4 _c calls, MPI_Alltoallw's and the neighborhood w displacements),
// read as 64-bit values. Null where the collective does not read it.
class Ints {
 public:
  Ints() noexcept = default;
  Ints(std::nullptr_t) noexcept {}
  Ints(const int* p) noexcept : narrow_(p) {}
  Ints(const MPI_Count* p) noexcept : count_(p) {}
  Ints(const MPI_Aint* p) noexcept : aint_(p) {}
  std::int64_t operator[](std::size_t i) const noexcept {
    return narrow_ != nullptr ? narrow_[i] : count_ != nullptr ? count_[i] : aint_[i];
  }
  std::int64_t operator[](int i) const noexcept { return (*this)[static_cast<std::size_t>(i)]; }
  const void* get() const noexcept {
    return narrow_ != nullptr ? static_cast<const void*>(narrow_)
                              : count_ != nullptr ? static_cast<const void*>(count_) : aint_;
  }
  friend bool operator==(const Ints& a, std::nullptr_t) noexcept { return a.get() == nullptr; }

 private:
  const int* narrow_ = nullptr;
  const MPI_Count* count_ = nullptr;
  const MPI_Aint* aint_ = nullptr;
};

// A per-rank array of counts (>= 0) and displacements. With no ranks (a neighborhood
// without neighbors) the arrays are not read and may be null.
bool check_counts(Call& call, Ints counts, Ints displs, int n, std::string_view name) {
  if (n == 0) return true;
  if (!check_arg(call, counts.get(), name)) return false;
  if (displs == nullptr) {
    call.fail(MPI_ERR_ARG, fmt::format("the displacements of {} are a null pointer", name));
    return false;
  }
  for (int i = 0; i < n; ++i) {
    if (counts[i] < 0) {
      call.fail(MPI_ERR_COUNT, fmt::format("{}[{}] is negative ({})", name, i, counts[i]));
      return false;
    }
  }
  return true;
}

bool check_types(Call& call, const MPI_Datatype* types, Ints counts, int n, std::string_view name,
                 std::vector<const Datatype*>& out) {
  if (!check_arg(call, types, name)) return false;
  out.resize(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) {
    const auto k = static_cast<std::size_t>(i);
    if (counts[i] == 0 && find_datatype(types[i]) == nullptr) continue;  // unused: any handle will do
    out[k] = check_committed(call, types[i]);
    if (out[k] == nullptr) return false;
  }
  return true;
}

bool same_bytes(Call& call, std::size_t sent, std::size_t expected, std::string_view what) {
  if (sent == expected) return true;
  call.fail(MPI_ERR_TRUNCATE,
            fmt::format("{}: this rank sends {} bytes where it receives {} per block", what, sent, expected));
  return false;
}

std::size_t items(MPI_Count count) noexcept { return static_cast<std::size_t>(count); }

// Blocks of a v-collective in one buffer, as libs/coll takes them: byte counts and byte displacements
// into `data`.
// Whether an all-to-all with these counts moves anything.
bool moves_bytes(Ints send_counts, Ints recv_counts, int n) noexcept {
  for (int i = 0; i < n; ++i) {
    if (send_counts[i] != 0 || recv_counts[i] != 0) return true;
  }
  return false;
}

struct Blocks {
  std::byte* data = nullptr;
  std::vector<std::size_t> bytes;
  std::vector<std::ptrdiff_t> displs;
};

// Blocks of counts[i] items of a type at displs[i] (in extents) in buf. `read`: the collective reads
// them all; `fill`: it reads only that block (-1: none); `write`: it writes them all.
Blocks stage_blocks(CollOp& op, void* buf, Ints counts, Ints displs, int n, const Datatype& type,
                    bool read, int fill, bool write) {
  Blocks b;
  const auto size = static_cast<std::size_t>(n);
  b.bytes.resize(size);
  b.displs.resize(size);
  const std::size_t item = type.size();
  if (type.dense()) {
    b.data = static_cast<std::byte*>(buf);
    for (std::size_t i = 0; i < size; ++i) {
      b.bytes[i] = items(counts[i]) * item;
      b.displs[i] = static_cast<std::ptrdiff_t>(displs[i]) * type.extent();
    }
    return b;
  }
  std::size_t total = 0;
  for (std::size_t i = 0; i < size; ++i) {
    b.bytes[i] = items(counts[i]) * item;
    b.displs[i] = static_cast<std::ptrdiff_t>(total);
    total += b.bytes[i];
  }
  b.data = op.scratch(total);
  const std::shared_ptr<const Layout> layout = type.layout;
  std::vector<std::pair<std::byte*, std::ptrdiff_t>> places(size);  // (packed, user offset) per block
  for (std::size_t i = 0; i < size; ++i) {
    places[i] = {b.data + b.displs[i], static_cast<std::ptrdiff_t>(displs[i]) * type.extent()};
    if (read || fill == static_cast<int>(i)) layout->pack(offset_by(buf, places[i].second), items(counts[i]), places[i].first);
  }
  if (write) {
    op.on_done([layout, places = std::move(places), sizes = b.bytes, buf] {
      for (std::size_t i = 0; i < places.size(); ++i) {
        layout->unpack(places[i].first, sizes[i], offset_by(buf, places[i].second));
      }
    });
  }
  return b;
}

// Blocks of MPI_Alltoallw: each its own type, displacements in bytes.
Blocks stage_typed_blocks(CollOp& op, void* buf, Ints counts, Ints displs,
                          const std::vector<const Datatype*>& types, bool read, bool write) {
  Blocks b;
  const std::size_t size = types.size();
  b.bytes.resize(size);
  b.displs.resize(size);
  bool dense = true;
  for (std::size_t i = 0; i < size; ++i) {
    b.bytes[i] = counts[i] == 0 ? 0 : items(counts[i]) * types[i]->size();
    dense = dense && (counts[i] == 0 || types[i]->dense());
  }
  if (dense) {
    b.data = static_cast<std::byte*>(buf);
    for (std::size_t i = 0; i < size; ++i) b.displs[i] = static_cast<std::ptrdiff_t>(displs[i]);
    return b;
  }
  std::size_t total = 0;
  for (std::size_t i = 0; i < size; ++i) {
    b.displs[i] = static_cast<std::ptrdiff_t>(total);
    total += b.bytes[i];
  }
  b.data = op.scratch(total);
  struct Place {
    std::shared_ptr<const Layout> layout;
    std::byte* packed;
    std::byte* user;
    std::size_t bytes;
  };
  std::vector<Place> places;
  for (std::size_t i = 0; i < size; ++i) {
    if (counts[i] == 0) continue;
    Place p{types[i]->layout, b.data + b.displs[i], offset_by(buf, static_cast<std::ptrdiff_t>(displs[i])), b.bytes[i]};
    if (read) p.layout->pack(p.user, items(counts[i]), p.packed);
    places.push_back(std::move(p));
  }
  if (write) {
    op.on_done([places = std::move(places)] {
      for (const Place& p : places) p.layout->unpack(p.packed, p.bytes, p.user);
    });
  }
  return b;
}

// What both reduce-scatters (intra- and intercommunicator) check first: n ranks' counts
// (MPI_Reduce_scatter_block: block_count each), the type and the operation.
struct ReduceScatterArgs {
  std::vector<MPI_Count> counts;
  const Datatype* type = nullptr;
  const OpEntry* op = nullptr;
  std::size_t total = 0;  // items of every send vector
  std::size_t mine = 0;   // items this rank receives

  std::vector<std::size_t> elements(std::size_t per_item) const {
    std::vector<std::size_t> e(counts.size());
    for (std::size_t i = 0; i < counts.size(); ++i) e[i] = items(counts[i]) * per_item;
    return e;
  }
};

std::optional<ReduceScatterArgs> check_reduce_scatter(Call& call, Ints rcounts, MPI_Count block_count, std::size_t n,
                                                      int rank, MPI_Datatype datatype, MPI_Op op_handle) {
  ReduceScatterArgs a;
  if (rcounts == nullptr) {
    if (!check_count(call, block_count)) return std::nullopt;
    a.counts.assign(n, block_count);
  } else {
    for (std::size_t i = 0; i < n; ++i) {
      if (!check_count(call, rcounts[i])) return std::nullopt;
    }
    a.counts.resize(n);
    for (std::size_t i = 0; i < n; ++i) a.counts[i] = rcounts[i];
  }
  a.type = check_committed(call, datatype);
  if (a.type == nullptr) return std::nullopt;
  a.op = check_op(call, op_handle);
  if (a.op == nullptr) return std::nullopt;
  a.total = std::accumulate(a.counts.begin(), a.counts.end(), std::size_t{0});
  a.mine = items(a.counts[static_cast<std::size_t>(rank)]);
  return a;
}

// Only whether a buffer is empty matters to check_buffer.
int any_items(std::size_t count) noexcept { return count == 0 ? 0 : 1; }

enum class Reduce : std::uint8_t { reduce, allreduce, scan, exscan };

// ---- the collectives on intercommunicators (coll/inter.hpp) ----------------------------------------
//
// Data goes from one group to the other; a rooted collective's root passes MPI_ROOT, the rest of its
// group MPI_PROC_NULL, and the other group the root's rank. Buffers and counts of the receiving side
// are per rank of the other group. MPI has no MPI_IN_PLACE here.

coll::Groups groups_of(const Comm& comm) noexcept { return {comm.local_size(), comm.size()}; }

// The root as libs/coll takes it, or nullopt (MPI_ERR_ROOT).
std::optional<int> check_inter_root(Call& call, const Comm& comm, int root) {
  if (root == MPI_ROOT) return coll::kInterRoot;
  if (root == MPI_PROC_NULL) return coll::kInterIdle;
  if (root >= 0 && root < comm.size()) return root;
  call.fail(MPI_ERR_ROOT, fmt::format("invalid root {} on intercommunicator {} (MPI_ROOT, MPI_PROC_NULL or a rank "
                                      "of the other group, which has {})",
                                      root, label(comm), comm.size()));
  return std::nullopt;
}

bool refuse_in_place_inter(Call& call, const void* send, const void* recv) {
  if (!in_place(send) && !in_place(recv)) return true;
  call.fail(MPI_ERR_ARG, "MPI_IN_PLACE is not allowed on an intercommunicator");
  return false;
}

// `count` items of `type` in each of n blocks, one after another; `read`: the collective reads them.
Blocks equal_staged(CollOp& op, void* buf, MPI_Count count, const Datatype& type, std::size_t n, bool read) {
  Blocks b;
  const std::size_t all = items(count) * n;
  b.data = read ? const_cast<std::byte*>(op.packed_in(buf, all, type)) : op.packed_out(buf, all, type, false, all);
  const std::size_t bytes = items(count) * type.size();
  b.bytes.assign(n, bytes);
  b.displs.resize(n);
  for (std::size_t i = 0; i < n; ++i) b.displs[i] = static_cast<std::ptrdiff_t>(i * bytes);
  return b;
}

// Blocks for each of n peers of a collective that sends or receives per peer (alltoall and its v and w
// forms, between the groups of an intercommunicator and over a neighborhood): `count` items each
// (counts null), counts[i] items at displs[i] extents, or, with types, counts[i] items of types[i] at
// displs[i] bytes. `sending`: the collective reads the blocks.
bool stage_per_peer(Call& call, CollOp& op, bool sending, void* buf, MPI_Count count, Ints counts, Ints displs,
                    const MPI_Datatype* types, MPI_Datatype type, std::size_t n, Blocks& out) {
  const std::string_view name = sending ? "sendcounts" : "recvcounts";
  const int peers = static_cast<int>(n);
  if (types != nullptr) {
    std::vector<const Datatype*> checked;
    if (!check_counts(call, counts, displs, peers, name) ||
        (n > 0 && !check_types(call, types, counts, peers, name, checked))) {
      return false;
    }
    out = stage_typed_blocks(op, buf, counts, displs, checked, sending, !sending);
    return true;
  }
  if (counts != nullptr) {
    if (!check_counts(call, counts, displs, peers, name)) return false;
    const Datatype* t = check_committed(call, type);
    if (t == nullptr) return false;
    out = stage_blocks(op, buf, counts, displs, peers, *t, sending, -1, !sending);
    return true;
  }
  const Datatype* t = check_items(call, buf, count, type, sending ? "sendbuf" : "recvbuf");
  if (t == nullptr) return false;
  out = equal_staged(op, buf, count, *t, n, sending);
  return true;
}

bool inter_bcast(Call& call, CollOp& op, void* buffer, MPI_Count count, MPI_Datatype datatype, int root) {
  Comm& comm = op.comm();
  const std::optional<int> r = check_inter_root(call, comm, root);
  if (!r) return false;
  if (*r == coll::kInterIdle) {
    op.start(coll::inter_ibcast(op.call(), groups_of(comm), nullptr, 0, *r));
    return true;
  }
  const Datatype* type = check_items(call, buffer, count, datatype, "buffer");
  if (type == nullptr) return false;
  const std::size_t n = items(count);
  std::byte* data = *r == coll::kInterRoot ? op.packed_in(buffer, n, *type) : op.packed_out(buffer, n, *type, false, n);
  op.start(coll::inter_ibcast(op.call(), groups_of(comm), data, n * type->size(), *r));
  return true;
}

bool inter_reduce(Call& call, CollOp& op, Reduce kind, const void* send, void* recv, MPI_Count count, MPI_Datatype datatype,
                  MPI_Op op_handle, int root) {
  Comm& comm = op.comm();
  if (kind == Reduce::scan || kind == Reduce::exscan) {
    call.fail(MPI_ERR_COMM, fmt::format("{} is an intercommunicator: MPI defines no scan on one", label(comm)));
    return false;
  }
  int r = 0;
  if (kind == Reduce::reduce) {
    const std::optional<int> checked = check_inter_root(call, comm, root);
    if (!checked) return false;
    r = *checked;
  }
  if (r == coll::kInterIdle) {
    op.start(coll::inter_ibcast(op.call(), groups_of(comm), nullptr, 0, r));  // nothing to do, as one op
    return true;
  }
  if (!check_count(call, count) || !refuse_in_place_inter(call, send, recv)) return false;
  const Datatype* type = check_committed(call, datatype);
  if (type == nullptr) return false;
  const OpEntry* o = check_op(call, op_handle);
  if (o == nullptr) return false;
  const bool sends = kind == Reduce::allreduce || r != coll::kInterRoot;
  const bool receives = kind == Reduce::allreduce || r == coll::kInterRoot;
  if (sends && !check_buffer(call, send, count, *type, "sendbuf")) return false;
  if (receives && (!check_buffer(call, recv, count, *type, "recvbuf") ||
                   !check_not_aliased(call, send, recv, items(count) * type->size()))) {
    return false;
  }
  const std::optional<ReductionPlan> plan = plan_reduction(call, *o, *type, op);
  if (!plan) return false;
  const std::size_t n = items(count);
  void* result = receives ? op.elements_out(recv, n, *plan, false, n) : nullptr;
  const void* operand = sends ? op.elements_in(send, n, *plan) : nullptr;
  const std::size_t elements = n * plan->elements_per_item;
  if (kind == Reduce::allreduce) {
    op.start(coll::inter_iallreduce(op.call(), groups_of(comm), operand, result, elements, *plan->reduction));
  } else {
    op.start(coll::inter_ireduce(op.call(), groups_of(comm), operand, result, elements, *plan->reduction, r));
  }
  return true;
}

// Gather and gatherv (rcounts null: rcount each); scatter and scatterv alike with `scatter`.
bool inter_rooted(Call& call, CollOp& op, bool scatter, const void* send, MPI_Count scount, Ints scounts,
                  Ints sdispls, MPI_Datatype stype, void* recv, MPI_Count rcount, Ints rcounts,
                  Ints rdispls, MPI_Datatype rtype, int root) {
  Comm& comm = op.comm();
  const std::optional<int> r = check_inter_root(call, comm, root);
  if (!r) return false;
  const coll::Groups groups = groups_of(comm);
  if (*r == coll::kInterIdle) {
    op.start(coll::inter_ibcast(op.call(), groups, nullptr, 0, *r));
    return true;
  }
  if (!refuse_in_place_inter(call, send, recv)) return false;
  const auto n = static_cast<std::size_t>(comm.size());
  // The root's side: blocks per remote rank; the others: one block.
  const bool root_here = *r == coll::kInterRoot;
  void* blocks_buf = scatter ? const_cast<void*>(send) : recv;
  Ints counts = scatter ? scounts : rcounts;
  Ints displs = scatter ? sdispls : rdispls;
  const MPI_Count count = scatter ? scount : rcount;
  const MPI_Datatype blocks_type = scatter ? stype : rtype;
  Blocks blocks;
  std::byte* single = nullptr;
  std::size_t single_bytes = 0;
  if (root_here) {
    const Datatype* t = nullptr;
    if (counts != nullptr) {
      if (!check_counts(call, counts, displs, comm.size(), scatter ? "sendcounts" : "recvcounts")) return false;
      t = check_committed(call, blocks_type);
      if (t == nullptr) return false;
      blocks = stage_blocks(op, blocks_buf, counts, displs, comm.size(), *t, scatter, -1, !scatter);
    } else {
      t = check_items(call, blocks_buf, count, blocks_type, scatter ? "sendbuf" : "recvbuf");
      if (t == nullptr) return false;
      blocks = equal_staged(op, blocks_buf, count, *t, n, scatter);
    }
  } else if (scatter) {
    const Datatype* t = check_items(call, recv, rcount, rtype, "recvbuf");
    if (t == nullptr) return false;
    single = op.packed_out(recv, items(rcount), *t, false, items(rcount));
    single_bytes = items(rcount) * t->size();
  } else {
    const Datatype* t = check_items(call, send, scount, stype, "sendbuf");
    if (t == nullptr) return false;
    single = const_cast<std::byte*>(op.packed_in(send, items(scount), *t));
    single_bytes = items(scount) * t->size();
  }
  if (scatter) {
    op.start(coll::inter_iscatterv(op.call(), groups, blocks.data, blocks.bytes, blocks.displs, single, single_bytes, *r));
  } else {
    op.start(coll::inter_igatherv(op.call(), groups, single, single_bytes, blocks.data, blocks.bytes, blocks.displs, *r));
  }
  return true;
}

// Allgather(v) (rcounts null: rcount each) and alltoall(v/w): blocks per remote rank.
bool inter_allgather(Call& call, CollOp& op, const void* send, MPI_Count scount, MPI_Datatype stype, void* recv,
                     MPI_Count rcount, Ints rcounts, Ints rdispls, MPI_Datatype rtype) {
  Comm& comm = op.comm();
  if (!refuse_in_place_inter(call, send, recv)) return false;
  const Datatype* st = check_items(call, send, scount, stype, "sendbuf");
  if (st == nullptr) return false;
  const auto n = static_cast<std::size_t>(comm.size());
  Blocks into;
  if (rcounts != nullptr) {
    if (!check_counts(call, rcounts, rdispls, comm.size(), "recvcounts")) return false;
    const Datatype* rt = check_committed(call, rtype);
    if (rt == nullptr) return false;
    into = stage_blocks(op, recv, rcounts, rdispls, comm.size(), *rt, false, -1, true);
  } else {
    const Datatype* rt = check_items(call, recv, rcount, rtype, "recvbuf");
    if (rt == nullptr) return false;
    into = equal_staged(op, recv, rcount, *rt, n, false);
  }
  const void* from = op.packed_in(send, items(scount), *st);
  op.start(coll::inter_iallgatherv(op.call(), groups_of(comm), from, items(scount) * st->size(), into.data, into.bytes,
                                   into.displs));
  return true;
}

bool inter_alltoall(Call& call, CollOp& op, const void* send, MPI_Count scount, Ints scounts, Ints sdispls,
                    const MPI_Datatype* stypes, MPI_Datatype stype, void* recv, MPI_Count rcount, Ints rcounts,
                    Ints rdispls, const MPI_Datatype* rtypes, MPI_Datatype rtype) {
  Comm& comm = op.comm();
  if (!refuse_in_place_inter(call, send, recv)) return false;
  const auto n = static_cast<std::size_t>(comm.size());
  Blocks from;
  Blocks into;
  if (!stage_per_peer(call, op, true, const_cast<void*>(send), scount, scounts, sdispls, stypes, stype, n, from) ||
      !stage_per_peer(call, op, false, recv, rcount, rcounts, rdispls, rtypes, rtype, n, into)) {
    return false;
  }
  op.start(coll::inter_ialltoallv(op.call(), groups_of(comm), from.data, from.bytes, from.displs, into.data,
                                  into.bytes, into.displs));
  return true;
}

bool inter_reduce_scatter(Call& call, CollOp& op, const void* send, void* recv, Ints rcounts, MPI_Count block_count,
                          MPI_Datatype datatype, MPI_Op op_handle) {
  Comm& comm = op.comm();
  if (!refuse_in_place_inter(call, send, recv)) return false;
  const std::optional<ReduceScatterArgs> a = check_reduce_scatter(
      call, rcounts, block_count, static_cast<std::size_t>(comm.local_size()), comm.rank(), datatype, op_handle);
  if (!a || !check_buffer(call, send, any_items(a->total), *a->type, "sendbuf") ||
      !check_buffer(call, recv, any_items(a->mine), *a->type, "recvbuf")) {
    return false;
  }
  const std::optional<ReductionPlan> plan = plan_reduction(call, *a->op, *a->type, op);
  if (!plan) return false;
  void* result = op.elements_out(recv, a->mine, *plan, false, a->mine);
  const void* operand = op.elements_in(send, a->total, *plan);
  op.start(coll::inter_ireduce_scatter(op.call(), groups_of(comm), operand, result, a->elements(plan->elements_per_item),
                                       *plan->reduction));
  return true;
}

// ---- the collectives -------------------------------------------------------------------------------

// `blocking`: MPI_Barrier, which may take the shared-memory barrier (shm_coll.hpp).
bool start_barrier(Call&, CollOp& op, bool blocking = false) {
  if (op.comm().is_inter()) {
    op.start(coll::inter_ibarrier(op.call(), groups_of(op.comm())));
    return true;
  }
  if (blocking && takes_shm_barrier(op.comm())) {
    const coll::Call c = op.call();
    op.run_locally(shm_barrier(op.comm(), c.tag));
    return true;
  }
  op.start(coll::ibarrier(op.call()));
  return true;
}

// `blocking`: MPI_Bcast, which may take the shared-memory broadcast (shm_coll.hpp); MPI_Ibcast always
// runs a schedule (MPI never matches a blocking collective with a nonblocking one, so the two need not
// agree on the algorithm).
bool start_bcast(Call& call, CollOp& op, void* buffer, MPI_Count count, MPI_Datatype datatype, int root,
                 bool blocking = false) {
  if (op.comm().is_inter()) return inter_bcast(call, op, buffer, count, datatype, root);
  Comm& comm = op.comm();
  const Datatype* type = check_items(call, buffer, count, datatype, "buffer");
  if (type == nullptr || !check_root(call, comm, root)) return false;
  const std::size_t n = items(count);
  std::byte* data = comm.rank() == root ? op.packed_in(buffer, n, *type) : op.packed_out(buffer, n, *type, false, n);
  const std::size_t bytes = n * type->size();
  if (blocking && takes_shm_bcast(comm, bytes)) {
    const coll::Call c = op.call();
    op.run_locally(shm_bcast(comm, data, bytes, root, c.tag));
    return true;
  }
  op.start(coll::ibcast(op.call(), data, bytes, root));
  return true;
}

// `blocking`: MPI_Allreduce, which may take the shared-memory allreduce (shm_coll.hpp).
bool start_reduce(Call& call, CollOp& op, Reduce kind, const void* send, void* recv, MPI_Count count, MPI_Datatype datatype,
                  MPI_Op op_handle, int root, bool blocking = false) {
  if (op.comm().is_inter()) return inter_reduce(call, op, kind, send, recv, count, datatype, op_handle, root);
  Comm& comm = op.comm();
  if (!check_count(call, count)) return false;
  const Datatype* type = check_committed(call, datatype);
  if (type == nullptr) return false;
  const OpEntry* o = check_op(call, op_handle);
  if (o == nullptr) return false;
  if (kind == Reduce::reduce && !check_root(call, comm, root)) return false;
  const bool has_result = kind != Reduce::reduce || comm.rank() == root;
  const bool inplace = in_place(send);
  if (inplace && !has_result) {
    call.fail(MPI_ERR_ARG, "MPI_IN_PLACE is the root's send buffer only");
    return false;
  }
  if (!inplace && !check_buffer(call, send, count, *type, "sendbuf")) return false;
  if (has_result && (!refuse_in_place(call, recv, "recvbuf") || !check_buffer(call, recv, count, *type, "recvbuf") ||
                     !check_not_aliased(call, send, recv, items(count) * type->size()))) {
    return false;
  }
  const std::optional<ReductionPlan> plan = plan_reduction(call, *o, *type, op);
  if (!plan) return false;
  const std::size_t n = items(count);
  // Exscan leaves rank 0's result alone.
  const std::size_t drain = kind == Reduce::exscan && comm.rank() == 0 ? 0 : n;
  void* result = has_result ? op.elements_out(recv, n, *plan, inplace, drain) : nullptr;
  const void* operand = inplace ? coll::kInPlace : op.elements_in(send, n, *plan);
  const std::size_t elements = n * plan->elements_per_item;
  const coll::Reduction& r = *plan->reduction;
  if (blocking && kind == Reduce::allreduce && takes_shm_allreduce(comm, elements * r.element_size())) {
    const coll::Call c = op.call();
    op.run_locally(shm_allreduce(comm, operand, result, elements, r, c.tag));
    return true;
  }
  switch (kind) {
    case Reduce::reduce: op.start(coll::ireduce(op.call(), operand, result, elements, r, root)); break;
    case Reduce::allreduce: op.start(coll::iallreduce(op.call(), operand, result, elements, r)); break;
    case Reduce::scan: op.start(coll::iscan(op.call(), operand, result, elements, r)); break;
    case Reduce::exscan: op.start(coll::iexscan(op.call(), operand, result, elements, r)); break;
  }
  return true;
}

bool start_gather(Call& call, CollOp& op, const void* send, MPI_Count scount, MPI_Datatype stype, void* recv, MPI_Count rcount,
                  MPI_Datatype rtype, int root) {
  if (op.comm().is_inter()) {
    return inter_rooted(call, op, false, send, scount, nullptr, nullptr, stype, recv, rcount, nullptr, nullptr, rtype, root);
  }
  const Comm& comm = op.comm();
  if (!check_root(call, comm, root)) return false;
  const bool is_root = comm.rank() == root;
  const bool inplace = in_place(send);
  if (inplace && !is_root) return refuse_in_place(call, send, "sendbuf (not at the root)");
  const Datatype* st = inplace ? nullptr : check_items(call, send, scount, stype, "sendbuf");
  if (!inplace && st == nullptr) return false;
  const Datatype* rt = nullptr;
  if (is_root) {
    if (!refuse_in_place(call, recv, "recvbuf")) return false;
    rt = check_items(call, recv, rcount, rtype, "recvbuf");
    if (rt == nullptr) return false;
    if (!inplace && !same_bytes(call, items(scount) * st->size(), items(rcount) * rt->size(), "MPI_Gather")) {
      return false;
    }
  }
  const std::size_t block = is_root ? items(rcount) * rt->size() : items(scount) * st->size();
  const std::size_t all = items(rcount) * static_cast<std::size_t>(comm.size());
  void* into = is_root ? op.packed_out(recv, all, *rt, inplace, all) : nullptr;
  const void* from = inplace ? coll::kInPlace : op.packed_in(send, items(scount), *st);
  op.start(coll::igather(op.call(), from, into, block, root));
  return true;
}

bool start_gatherv(Call& call, CollOp& op, const void* send, MPI_Count scount, MPI_Datatype stype, void* recv,
                   Ints rcounts, Ints displs, MPI_Datatype rtype, int root) {
  if (op.comm().is_inter()) {
    return inter_rooted(call, op, false, send, scount, nullptr, nullptr, stype, recv, 0, rcounts, displs, rtype, root);
  }
  const Comm& comm = op.comm();
  if (!check_root(call, comm, root)) return false;
  const bool is_root = comm.rank() == root;
  const bool inplace = in_place(send);
  if (inplace && !is_root) return refuse_in_place(call, send, "sendbuf (not at the root)");
  const Datatype* st = inplace ? nullptr : check_items(call, send, scount, stype, "sendbuf");
  if (!inplace && st == nullptr) return false;
  Blocks blocks;
  if (is_root) {
    if (!refuse_in_place(call, recv, "recvbuf") || !check_counts(call, rcounts, displs, comm.size(), "recvcounts")) {
      return false;
    }
    const Datatype* rt = check_committed(call, rtype);
    if (rt == nullptr) return false;
    if (!inplace && !same_bytes(call, items(scount) * st->size(), items(rcounts[root]) * rt->size(), "MPI_Gatherv")) {
      return false;
    }
    blocks = stage_blocks(op, recv, rcounts, displs, comm.size(), *rt, false, inplace ? root : -1, true);
  }
  const std::size_t send_bytes = inplace ? 0 : items(scount) * st->size();
  const void* from = inplace ? coll::kInPlace : op.packed_in(send, items(scount), *st);
  op.start(coll::igatherv(op.call(), from, send_bytes, blocks.data, blocks.bytes, blocks.displs, root));
  return true;
}

bool start_scatter(Call& call, CollOp& op, const void* send, MPI_Count scount, MPI_Datatype stype, void* recv, MPI_Count rcount,
                   MPI_Datatype rtype, int root) {
  if (op.comm().is_inter()) {
    return inter_rooted(call, op, true, send, scount, nullptr, nullptr, stype, recv, rcount, nullptr, nullptr, rtype, root);
  }
  const Comm& comm = op.comm();
  if (!check_root(call, comm, root)) return false;
  const bool is_root = comm.rank() == root;
  const bool inplace = in_place(recv);
  if (inplace && !is_root) return refuse_in_place(call, recv, "recvbuf (not at the root)");
  const Datatype* rt = inplace ? nullptr : check_items(call, recv, rcount, rtype, "recvbuf");
  if (!inplace && rt == nullptr) return false;
  const Datatype* st = nullptr;
  if (is_root) {
    if (!refuse_in_place(call, send, "sendbuf")) return false;
    st = check_items(call, send, scount, stype, "sendbuf");
    if (st == nullptr) return false;
    if (!inplace && !same_bytes(call, items(scount) * st->size(), items(rcount) * rt->size(), "MPI_Scatter")) {
      return false;
    }
  }
  const std::size_t block = is_root ? items(scount) * st->size() : items(rcount) * rt->size();
  const std::size_t all = items(scount) * static_cast<std::size_t>(comm.size());
  const void* from = is_root ? op.packed_in(send, all, *st) : nullptr;
  void* into = inplace ? const_cast<void*>(coll::kInPlace) : op.packed_out(recv, items(rcount), *rt, false, items(rcount));
  op.start(coll::iscatter(op.call(), from, into, block, root));
  return true;
}

bool start_scatterv(Call& call, CollOp& op, const void* send, Ints scounts, Ints displs,
                    MPI_Datatype stype, void* recv, MPI_Count rcount, MPI_Datatype rtype, int root) {
  if (op.comm().is_inter()) {
    return inter_rooted(call, op, true, send, 0, scounts, displs, stype, recv, rcount, nullptr, nullptr, rtype, root);
  }
  const Comm& comm = op.comm();
  if (!check_root(call, comm, root)) return false;
  const bool is_root = comm.rank() == root;
  const bool inplace = in_place(recv);
  if (inplace && !is_root) return refuse_in_place(call, recv, "recvbuf (not at the root)");
  const Datatype* rt = inplace ? nullptr : check_items(call, recv, rcount, rtype, "recvbuf");
  if (!inplace && rt == nullptr) return false;
  Blocks blocks;
  if (is_root) {
    if (!refuse_in_place(call, send, "sendbuf") || !check_counts(call, scounts, displs, comm.size(), "sendcounts")) {
      return false;
    }
    const Datatype* st = check_committed(call, stype);
    if (st == nullptr) return false;
    if (!inplace && !same_bytes(call, items(scounts[root]) * st->size(), items(rcount) * rt->size(), "MPI_Scatterv")) {
      return false;
    }
    blocks = stage_blocks(op, const_cast<void*>(send), scounts, displs, comm.size(), *st, true, -1, false);
  }
  const std::size_t recv_bytes = inplace ? 0 : items(rcount) * rt->size();
  void* into = inplace ? const_cast<void*>(coll::kInPlace) : op.packed_out(recv, items(rcount), *rt, false, items(rcount));
  op.start(coll::iscatterv(op.call(), blocks.data, blocks.bytes, blocks.displs, into, recv_bytes, root));
  return true;
}

bool start_allgather(Call& call, CollOp& op, const void* send, MPI_Count scount, MPI_Datatype stype, void* recv,
                     MPI_Count rcount, MPI_Datatype rtype) {
  if (op.comm().is_inter()) return inter_allgather(call, op, send, scount, stype, recv, rcount, nullptr, nullptr, rtype);
  const Comm& comm = op.comm();
  const bool inplace = in_place(send);
  const Datatype* st = inplace ? nullptr : check_items(call, send, scount, stype, "sendbuf");
  if (!inplace && st == nullptr) return false;
  if (!refuse_in_place(call, recv, "recvbuf")) return false;
  const Datatype* rt = check_items(call, recv, rcount, rtype, "recvbuf");
  if (rt == nullptr) return false;
  const std::size_t block = items(rcount) * rt->size();
  if (!inplace && !same_bytes(call, items(scount) * st->size(), block, "MPI_Allgather")) return false;
  const std::size_t all = items(rcount) * static_cast<std::size_t>(comm.size());
  void* into = op.packed_out(recv, all, *rt, inplace, all);
  const void* from = inplace ? coll::kInPlace : op.packed_in(send, items(scount), *st);
  op.start(coll::iallgather(op.call(), from, into, block));
  return true;
}

bool start_allgatherv(Call& call, CollOp& op, const void* send, MPI_Count scount, MPI_Datatype stype, void* recv,
                      Ints rcounts, Ints displs, MPI_Datatype rtype) {
  if (op.comm().is_inter()) return inter_allgather(call, op, send, scount, stype, recv, 0, rcounts, displs, rtype);
  const Comm& comm = op.comm();
  const bool inplace = in_place(send);
  const Datatype* st = inplace ? nullptr : check_items(call, send, scount, stype, "sendbuf");
  if (!inplace && st == nullptr) return false;
  if (!refuse_in_place(call, recv, "recvbuf") || !check_counts(call, rcounts, displs, comm.size(), "recvcounts")) {
    return false;
  }
  const Datatype* rt = check_committed(call, rtype);
  if (rt == nullptr) return false;
  const int me = comm.rank();
  if (!inplace && !same_bytes(call, items(scount) * st->size(), items(rcounts[me]) * rt->size(), "MPI_Allgatherv")) {
    return false;
  }
  Blocks blocks = stage_blocks(op, recv, rcounts, displs, comm.size(), *rt, false, inplace ? me : -1, true);
  const void* from = inplace ? coll::kInPlace : op.packed_in(send, items(scount), *st);
  op.start(coll::iallgatherv(op.call(), from, blocks.data, blocks.bytes, blocks.displs));
  return true;
}

bool start_alltoall(Call& call, CollOp& op, const void* send, MPI_Count scount, MPI_Datatype stype, void* recv, MPI_Count rcount,
                    MPI_Datatype rtype) {
  if (op.comm().is_inter()) {
    return inter_alltoall(call, op, send, scount, nullptr, nullptr, nullptr, stype, recv, rcount, nullptr, nullptr, nullptr,
                          rtype);
  }
  const Comm& comm = op.comm();
  const bool inplace = in_place(send);
  const Datatype* st = inplace ? nullptr : check_items(call, send, scount, stype, "sendbuf");
  if (!inplace && st == nullptr) return false;
  if (!refuse_in_place(call, recv, "recvbuf")) return false;
  const Datatype* rt = check_items(call, recv, rcount, rtype, "recvbuf");
  if (rt == nullptr) return false;
  const std::size_t block = items(rcount) * rt->size();
  if (!inplace && !same_bytes(call, items(scount) * st->size(), block, "MPI_Alltoall")) return false;
  const auto n = static_cast<std::size_t>(comm.size());
  if (!check_not_aliased(call, send, recv, block * n)) return false;
  void* into = op.packed_out(recv, items(rcount) * n, *rt, inplace, items(rcount) * n);
  const void* from = inplace ? coll::kInPlace : op.packed_in(send, items(scount) * n, *st);
  op.start(coll::ialltoall(op.call(), from, into, block));
  return true;
}

bool start_alltoallv(Call& call, CollOp& op, const void* send, Ints scounts, Ints sdispls,
                     MPI_Datatype stype, void* recv, Ints rcounts, Ints rdispls, MPI_Datatype rtype) {
  if (op.comm().is_inter()) {
    return inter_alltoall(call, op, send, 0, scounts, sdispls, nullptr, stype, recv, 0, rcounts, rdispls, nullptr, rtype);
  }
  const Comm& comm = op.comm();
  const int n = comm.size();
  const bool inplace = in_place(send);
  const Datatype* st = nullptr;
  if (!inplace) {
    if (!check_counts(call, scounts, sdispls, n, "sendcounts")) return false;
    st = check_committed(call, stype);
    if (st == nullptr) return false;
  }
  if (!refuse_in_place(call, recv, "recvbuf") || !check_counts(call, rcounts, rdispls, n, "recvcounts")) return false;
  const Datatype* rt = check_committed(call, rtype);
  if (rt == nullptr) return false;
  // One buffer for both is an error only when some block moves: programs pass one pointer for two empty
  // buffers (mpi4py does for every empty one).
  if (!inplace && send == recv && send != nullptr && moves_bytes(scounts, rcounts, n)) {
    return check_not_aliased(call, send, recv, 1);
  }
  Blocks into = stage_blocks(op, recv, rcounts, rdispls, n, *rt, inplace, -1, true);
  Blocks from;
  if (!inplace) from = stage_blocks(op, const_cast<void*>(send), scounts, sdispls, n, *st, true, -1, false);
  op.start(coll::ialltoallv(op.call(), inplace ? coll::kInPlace : from.data, from.bytes, from.displs, into.data,
                            into.bytes, into.displs));
  return true;
}

bool start_alltoallw(Call& call, CollOp& op, const void* send, Ints scounts, Ints sdispls,
                     const MPI_Datatype* stypes, void* recv, Ints rcounts, Ints rdispls,
                     const MPI_Datatype* rtypes) {
  if (op.comm().is_inter()) {
    return inter_alltoall(call, op, send, 0, scounts, sdispls, stypes, MPI_DATATYPE_NULL, recv, 0, rcounts, rdispls,
                          rtypes, MPI_DATATYPE_NULL);
  }
  const Comm& comm = op.comm();
  const int n = comm.size();
  const bool inplace = in_place(send);
  std::vector<const Datatype*> st;
  std::vector<const Datatype*> rt;
  if (!inplace && (!check_counts(call, scounts, sdispls, n, "sendcounts") ||
                   !check_types(call, stypes, scounts, n, "sendtypes", st))) {
    return false;
  }
  if (!refuse_in_place(call, recv, "recvbuf") || !check_counts(call, rcounts, rdispls, n, "recvcounts") ||
      !check_types(call, rtypes, rcounts, n, "recvtypes", rt)) {
    return false;
  }
  if (!inplace && send == recv && send != nullptr && moves_bytes(scounts, rcounts, n)) {
    return check_not_aliased(call, send, recv, 1);
  }
  Blocks into = stage_typed_blocks(op, recv, rcounts, rdispls, rt, inplace, true);
  Blocks from;
  if (!inplace) from = stage_typed_blocks(op, const_cast<void*>(send), scounts, sdispls, st, true, false);
  op.start(coll::ialltoallv(op.call(), inplace ? coll::kInPlace : from.data, from.bytes, from.displs, into.data,
                            into.bytes, into.displs));
  return true;
}

bool start_reduce_scatter(Call& call, CollOp& op, const void* send, void* recv, Ints rcounts, MPI_Count block_count,
                          MPI_Datatype datatype, MPI_Op op_handle) {
  if (op.comm().is_inter()) return inter_reduce_scatter(call, op, send, recv, rcounts, block_count, datatype, op_handle);
  const Comm& comm = op.comm();
  const std::optional<ReduceScatterArgs> a = check_reduce_scatter(
      call, rcounts, block_count, static_cast<std::size_t>(comm.size()), comm.rank(), datatype, op_handle);
  if (!a) return false;
  const bool inplace = in_place(send);
  if (!refuse_in_place(call, recv, "recvbuf") ||
      (!inplace && !check_buffer(call, send, any_items(a->total), *a->type, "sendbuf")) ||
      !check_buffer(call, recv, any_items(inplace ? a->total : a->mine), *a->type, "recvbuf") ||
      !check_not_aliased(call, send, recv, a->total * a->type->size())) {
    return false;
  }
  const std::optional<ReductionPlan> plan = plan_reduction(call, *a->op, *a->type, op);
  if (!plan) return false;
  void* result = inplace ? op.elements_out(recv, a->total, *plan, true, a->mine)
                         : op.elements_out(recv, a->mine, *plan, false, a->mine);
  const void* operand = inplace ? coll::kInPlace : op.elements_in(send, a->total, *plan);
  const coll::Reduction& r = *plan->reduction;
  if (rcounts == nullptr) {
    op.start(coll::ireduce_scatter_block(op.call(), operand, result, items(block_count) * plan->elements_per_item, r));
    return true;
  }
  op.start(coll::ireduce_scatter(op.call(), operand, result, a->elements(plan->elements_per_item), r));
  return true;
}


// ---- neighborhood collectives (MPI-3.1 section 7.6) -------------------------------------------------
//
// Blocks per neighbor: receive block i from sources[i], send block j to destinations[j]
// (Neighbors, comm.hpp); one exchange of all of them (coll/neighbor.hpp).

std::optional<Neighbors> check_neighbors(Call& call, const Comm& comm) {
  std::optional<Neighbors> n = neighbors_of(comm);
  if (!n) call.fail(MPI_ERR_TOPOLOGY, fmt::format("{} has no topology to take neighbors from", label(comm)));
  return n;
}

// Where block i of `blocks` lies. Its base may be MPI_BOTTOM (null) with absolute addresses for
// displacements (MPI_Neighbor_alltoallw over MPI_Get_address): the address is then the displacement.
std::byte* block_at(const Blocks& blocks, std::size_t i) noexcept {
  if (blocks.bytes[i] == 0) return nullptr;
  return reinterpret_cast<std::byte*>(reinterpret_cast<std::uintptr_t>(blocks.data) +
                                      static_cast<std::uintptr_t>(blocks.displs[i]));
}

void start_neighbor_exchange(CollOp& op, const Neighbors& nb, const Blocks& from, const Blocks& into) {
  std::vector<coll::NeighborSend> sends;
  for (std::size_t j : nb.send_order) {
    const int peer = nb.destinations[j];
    sends.push_back({peer == MPI_PROC_NULL ? -1 : peer, block_at(from, j), from.bytes[j]});
  }
  std::vector<coll::NeighborRecv> recvs;
  for (std::size_t i = 0; i < nb.sources.size(); ++i) {
    const int peer = nb.sources[i];
    recvs.push_back({peer == MPI_PROC_NULL ? -1 : peer, block_at(into, i), into.bytes[i]});
  }
  op.start(coll::ineighbor_exchange(op.call(), sends, recvs));
}


// allgather (rcounts null) and allgatherv: one send block, the same for every destination.
bool start_neighbor_allgather(Call& call, CollOp& op, const void* send, MPI_Count scount, MPI_Datatype stype, void* recv,
                              MPI_Count rcount, Ints rcounts, Ints rdispls, MPI_Datatype rtype, bool vector) {
  const std::optional<Neighbors> nb = check_neighbors(call, op.comm());
  if (!nb || !refuse_in_place(call, send, "sendbuf") || !refuse_in_place(call, recv, "recvbuf")) return false;
  const Datatype* st = check_items(call, send, scount, stype, "sendbuf");
  if (st == nullptr) return false;
  const std::size_t nsrc = nb->sources.size();
  Blocks into;
  if (vector) {
    if (!check_counts(call, rcounts, rdispls, static_cast<int>(nsrc), "recvcounts")) return false;
    const Datatype* rt = check_committed(call, rtype);
    if (rt == nullptr) return false;
    into = stage_blocks(op, recv, rcounts, rdispls, static_cast<int>(nsrc), *rt, false, -1, true);
  } else {
    const Datatype* rt = check_items(call, recv, rcount, rtype, "recvbuf");
    if (rt == nullptr) return false;
    into = equal_staged(op, recv, rcount, *rt, nsrc, false);
  }
  Blocks from;
  from.data = const_cast<std::byte*>(op.packed_in(send, items(scount), *st));
  from.bytes.assign(nb->destinations.size(), items(scount) * st->size());
  from.displs.assign(nb->destinations.size(), 0);
  start_neighbor_exchange(op, *nb, from, into);
  return true;
}

// alltoall (counts null), alltoallv (int displacements in extents), alltoallw (types, byte displacements).
bool start_neighbor_alltoall(Call& call, CollOp& op, const void* send, MPI_Count scount, Ints scounts,
                             Ints sdispls, const MPI_Datatype* stypes, MPI_Datatype stype, void* recv,
                             MPI_Count rcount, Ints rcounts, Ints rdispls, const MPI_Datatype* rtypes,
                             MPI_Datatype rtype) {
  const std::optional<Neighbors> nb = check_neighbors(call, op.comm());
  if (!nb || !refuse_in_place(call, send, "sendbuf") || !refuse_in_place(call, recv, "recvbuf")) return false;
  Blocks from;
  Blocks into;
  if (!stage_per_peer(call, op, true, const_cast<void*>(send), scount, scounts, sdispls, stypes, stype,
                                nb->destinations.size(), from) ||
      !stage_per_peer(call, op, false, recv, rcount, rcounts, rdispls, rtypes, rtype, nb->sources.size(),
                                into)) {
    return false;
  }
  start_neighbor_exchange(op, *nb, from, into);
  return true;
}

// ---- blocking and nonblocking frames -----------------------------------------------------------------

template <typename Start>
int blocking(std::string_view name, MPI_Comm comm, Start&& start) noexcept {
  return api_call(name, [&](Call& call) {
    Comm* c = check_comm(call, comm);
    if (c == nullptr) return;
    CollOpPtr op = make_coll_op(*c);
    if (start(call, *op)) finish_blocking(call, std::move(op));
  });
}

template <typename Start>
int nonblocking(std::string_view name, MPI_Comm comm, MPI_Request* request, Start&& start) noexcept {
  return api_call(name, [&](Call& call) {
    Comm* c = check_comm(call, comm);
    if (c == nullptr || !check_arg(call, request, "request")) return;
    CollOpPtr op = make_coll_op(*c);
    if (start(call, *op)) finish_nonblocking(call, std::move(op), request);
  });
}

// A persistent collective (MPI-4.0 section 6.12): the request keeps `start` (with the arguments by
// value), and each MPI_Start runs it as a new nonblocking collective, checking the arguments then.
template <typename Start>
int persistent(std::string_view name, MPI_Comm comm, MPI_Info info, MPI_Request* request, Start start) noexcept {
  return api_call(name, [&](Call& call) {
    Comm* c = check_comm(call, comm);
    if (c == nullptr || !check_arg(call, request, "request")) return;
    if (info != MPI_INFO_NULL && check_info(call, info) == nullptr) return;
    // The tag of all its runs, taken now: the inits are what every process makes in one order.
    Request& r = runtime().requests.acquire(Mode::collective, Transfer{.comm = c, .tag = c->take_coll_tag()}, true);
    r.restart = std::move(start);
    *request = &r;
  });
}

}  // namespace
}  // namespace ftmpi::mpi

using namespace ftmpi::mpi;

extern "C" {

int PMPI_Barrier(MPI_Comm comm) {
  return blocking("MPI_Barrier", comm, [&](Call& call, CollOp& op) { return start_barrier(call, op, true); });
}
#pragma weak MPI_Barrier = PMPI_Barrier

int PMPI_Ibarrier(MPI_Comm comm, MPI_Request* request) {
  return nonblocking("MPI_Ibarrier", comm, request, [&](Call& call, CollOp& op) { return start_barrier(call, op); });
}
#pragma weak MPI_Ibarrier = PMPI_Ibarrier

int PMPI_Bcast(void* buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm) {
  return blocking("MPI_Bcast", comm,
                  [&](Call& call, CollOp& op) { return start_bcast(call, op, buffer, count, datatype, root, true); });
}
#pragma weak MPI_Bcast = PMPI_Bcast

int PMPI_Ibcast(void* buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm, MPI_Request* request) {
  return nonblocking("MPI_Ibcast", comm, request,
                     [&](Call& call, CollOp& op) { return start_bcast(call, op, buffer, count, datatype, root); });
}
#pragma weak MPI_Ibcast = PMPI_Ibcast

int PMPI_Reduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op, int root,
                MPI_Comm comm) {
  return blocking("MPI_Reduce", comm, [&](Call& call, CollOp& o) {
    return start_reduce(call, o, Reduce::reduce, sendbuf, recvbuf, count, datatype, op, root);
  });
}
#pragma weak MPI_Reduce = PMPI_Reduce

int PMPI_Ireduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op, int root,
                 MPI_Comm comm, MPI_Request* request) {
  return nonblocking("MPI_Ireduce", comm, request, [&](Call& call, CollOp& o) {
    return start_reduce(call, o, Reduce::reduce, sendbuf, recvbuf, count, datatype, op, root);
  });
}
#pragma weak MPI_Ireduce = PMPI_Ireduce

int PMPI_Allreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm) {
  return blocking("MPI_Allreduce", comm, [&](Call& call, CollOp& o) {
    return start_reduce(call, o, Reduce::allreduce, sendbuf, recvbuf, count, datatype, op, 0, true);
  });
}
#pragma weak MPI_Allreduce = PMPI_Allreduce

int PMPI_Iallreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                    MPI_Request* request) {
  return nonblocking("MPI_Iallreduce", comm, request, [&](Call& call, CollOp& o) {
    return start_reduce(call, o, Reduce::allreduce, sendbuf, recvbuf, count, datatype, op, 0);
  });
}
#pragma weak MPI_Iallreduce = PMPI_Iallreduce

int PMPI_Scan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm) {
  return blocking("MPI_Scan", comm, [&](Call& call, CollOp& o) {
    return start_reduce(call, o, Reduce::scan, sendbuf, recvbuf, count, datatype, op, 0);
  });
}
#pragma weak MPI_Scan = PMPI_Scan

int PMPI_Iscan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
               MPI_Request* request) {
  return nonblocking("MPI_Iscan", comm, request, [&](Call& call, CollOp& o) {
    return start_reduce(call, o, Reduce::scan, sendbuf, recvbuf, count, datatype, op, 0);
  });
}
#pragma weak MPI_Iscan = PMPI_Iscan

int PMPI_Exscan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm) {
  return blocking("MPI_Exscan", comm, [&](Call& call, CollOp& o) {
    return start_reduce(call, o, Reduce::exscan, sendbuf, recvbuf, count, datatype, op, 0);
  });
}
#pragma weak MPI_Exscan = PMPI_Exscan

int PMPI_Iexscan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                 MPI_Request* request) {
  return nonblocking("MPI_Iexscan", comm, request, [&](Call& call, CollOp& o) {
    return start_reduce(call, o, Reduce::exscan, sendbuf, recvbuf, count, datatype, op, 0);
  });
}
#pragma weak MPI_Iexscan = PMPI_Iexscan

int PMPI_Gather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                MPI_Datatype recvtype, int root, MPI_Comm comm) {
  return blocking("MPI_Gather", comm, [&](Call& call, CollOp& op) {
    return start_gather(call, op, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root);
  });
}
#pragma weak MPI_Gather = PMPI_Gather

int PMPI_Igather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                 MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request* request) {
  return nonblocking("MPI_Igather", comm, request, [&](Call& call, CollOp& op) {
    return start_gather(call, op, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root);
  });
}
#pragma weak MPI_Igather = PMPI_Igather

int PMPI_Gatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, const int* recvcounts,
                 const int* displs, MPI_Datatype recvtype, int root, MPI_Comm comm) {
  return blocking("MPI_Gatherv", comm, [&](Call& call, CollOp& op) {
    return start_gatherv(call, op, sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root);
  });
}
#pragma weak MPI_Gatherv = PMPI_Gatherv

int PMPI_Igatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, const int* recvcounts,
                  const int* displs, MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request* request) {
  return nonblocking("MPI_Igatherv", comm, request, [&](Call& call, CollOp& op) {
    return start_gatherv(call, op, sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root);
  });
}
#pragma weak MPI_Igatherv = PMPI_Igatherv

int PMPI_Scatter(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                 MPI_Datatype recvtype, int root, MPI_Comm comm) {
  return blocking("MPI_Scatter", comm, [&](Call& call, CollOp& op) {
    return start_scatter(call, op, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root);
  });
}
#pragma weak MPI_Scatter = PMPI_Scatter

int PMPI_Iscatter(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                  MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request* request) {
  return nonblocking("MPI_Iscatter", comm, request, [&](Call& call, CollOp& op) {
    return start_scatter(call, op, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root);
  });
}
#pragma weak MPI_Iscatter = PMPI_Iscatter

int PMPI_Scatterv(const void* sendbuf, const int* sendcounts, const int* displs, MPI_Datatype sendtype, void* recvbuf,
                  int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm) {
  return blocking("MPI_Scatterv", comm, [&](Call& call, CollOp& op) {
    return start_scatterv(call, op, sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root);
  });
}
#pragma weak MPI_Scatterv = PMPI_Scatterv

int PMPI_Iscatterv(const void* sendbuf, const int* sendcounts, const int* displs, MPI_Datatype sendtype,
                   void* recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                   MPI_Request* request) {
  return nonblocking("MPI_Iscatterv", comm, request, [&](Call& call, CollOp& op) {
    return start_scatterv(call, op, sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root);
  });
}
#pragma weak MPI_Iscatterv = PMPI_Iscatterv

int PMPI_Allgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                   MPI_Datatype recvtype, MPI_Comm comm) {
  return blocking("MPI_Allgather", comm, [&](Call& call, CollOp& op) {
    return start_allgather(call, op, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype);
  });
}
#pragma weak MPI_Allgather = PMPI_Allgather

int PMPI_Iallgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                    MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request) {
  return nonblocking("MPI_Iallgather", comm, request, [&](Call& call, CollOp& op) {
    return start_allgather(call, op, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype);
  });
}
#pragma weak MPI_Iallgather = PMPI_Iallgather

int PMPI_Allgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, const int* recvcounts,
                    const int* displs, MPI_Datatype recvtype, MPI_Comm comm) {
  return blocking("MPI_Allgatherv", comm, [&](Call& call, CollOp& op) {
    return start_allgatherv(call, op, sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype);
  });
}
#pragma weak MPI_Allgatherv = PMPI_Allgatherv

int PMPI_Iallgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                     const int* recvcounts, const int* displs, MPI_Datatype recvtype, MPI_Comm comm,
                     MPI_Request* request) {
  return nonblocking("MPI_Iallgatherv", comm, request, [&](Call& call, CollOp& op) {
    return start_allgatherv(call, op, sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype);
  });
}
#pragma weak MPI_Iallgatherv = PMPI_Iallgatherv

int PMPI_Alltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                  MPI_Datatype recvtype, MPI_Comm comm) {
  return blocking("MPI_Alltoall", comm, [&](Call& call, CollOp& op) {
    return start_alltoall(call, op, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype);
  });
}
#pragma weak MPI_Alltoall = PMPI_Alltoall

int PMPI_Ialltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                   MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request) {
  return nonblocking("MPI_Ialltoall", comm, request, [&](Call& call, CollOp& op) {
    return start_alltoall(call, op, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype);
  });
}
#pragma weak MPI_Ialltoall = PMPI_Ialltoall

int PMPI_Alltoallv(const void* sendbuf, const int* sendcounts, const int* sdispls, MPI_Datatype sendtype,
                   void* recvbuf, const int* recvcounts, const int* rdispls, MPI_Datatype recvtype, MPI_Comm comm) {
  return blocking("MPI_Alltoallv", comm, [&](Call& call, CollOp& op) {
    return start_alltoallv(call, op, sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype);
  });
}
#pragma weak MPI_Alltoallv = PMPI_Alltoallv

int PMPI_Ialltoallv(const void* sendbuf, const int* sendcounts, const int* sdispls, MPI_Datatype sendtype,
                    void* recvbuf, const int* recvcounts, const int* rdispls, MPI_Datatype recvtype, MPI_Comm comm,
                    MPI_Request* request) {
  return nonblocking("MPI_Ialltoallv", comm, request, [&](Call& call, CollOp& op) {
    return start_alltoallv(call, op, sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype);
  });
}
#pragma weak MPI_Ialltoallv = PMPI_Ialltoallv

int PMPI_Alltoallw(const void* sendbuf, const int* sendcounts, const int* sdispls, const MPI_Datatype* sendtypes,
                   void* recvbuf, const int* recvcounts, const int* rdispls, const MPI_Datatype* recvtypes,
                   MPI_Comm comm) {
  return blocking("MPI_Alltoallw", comm, [&](Call& call, CollOp& op) {
    return start_alltoallw(call, op, sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls,
                           recvtypes);
  });
}
#pragma weak MPI_Alltoallw = PMPI_Alltoallw

int PMPI_Ialltoallw(const void* sendbuf, const int* sendcounts, const int* sdispls, const MPI_Datatype* sendtypes,
                    void* recvbuf, const int* recvcounts, const int* rdispls, const MPI_Datatype* recvtypes,
                    MPI_Comm comm, MPI_Request* request) {
  return nonblocking("MPI_Ialltoallw", comm, request, [&](Call& call, CollOp& op) {
    return start_alltoallw(call, op, sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls,
                           recvtypes);
  });
}
#pragma weak MPI_Ialltoallw = PMPI_Ialltoallw

int PMPI_Reduce_scatter(const void* sendbuf, void* recvbuf, const int* recvcounts, MPI_Datatype datatype, MPI_Op op,
                        MPI_Comm comm) {
  return blocking("MPI_Reduce_scatter", comm, [&](Call& call, CollOp& o) {
    return check_arg(call, recvcounts, "recvcounts") &&
           start_reduce_scatter(call, o, sendbuf, recvbuf, recvcounts, 0, datatype, op);
  });
}
#pragma weak MPI_Reduce_scatter = PMPI_Reduce_scatter

int PMPI_Ireduce_scatter(const void* sendbuf, void* recvbuf, const int* recvcounts, MPI_Datatype datatype, MPI_Op op,
                         MPI_Comm comm, MPI_Request* request) {
  return nonblocking("MPI_Ireduce_scatter", comm, request, [&](Call& call, CollOp& o) {
    return check_arg(call, recvcounts, "recvcounts") &&
           start_reduce_scatter(call, o, sendbuf, recvbuf, recvcounts, 0, datatype, op);
  });
}
#pragma weak MPI_Ireduce_scatter = PMPI_Ireduce_scatter

int PMPI_Reduce_scatter_block(const void* sendbuf, void* recvbuf, int recvcount, MPI_Datatype datatype, MPI_Op op,
                              MPI_Comm comm) {
  return blocking("MPI_Reduce_scatter_block", comm, [&](Call& call, CollOp& o) {
    return start_reduce_scatter(call, o, sendbuf, recvbuf, nullptr, recvcount, datatype, op);
  });
}
#pragma weak MPI_Reduce_scatter_block = PMPI_Reduce_scatter_block

int PMPI_Ireduce_scatter_block(const void* sendbuf, void* recvbuf, int recvcount, MPI_Datatype datatype, MPI_Op op,
                               MPI_Comm comm, MPI_Request* request) {
  return nonblocking("MPI_Ireduce_scatter_block", comm, request, [&](Call& call, CollOp& o) {
    return start_reduce_scatter(call, o, sendbuf, recvbuf, nullptr, recvcount, datatype, op);
  });
}
#pragma weak MPI_Ireduce_scatter_block = PMPI_Ireduce_scatter_block

int PMPI_Reduce_local(const void* inbuf, void* inoutbuf, int count, MPI_Datatype datatype, MPI_Op op) {
  return api_call("MPI_Reduce_local", [&](Call& call) {
    if (!check_count(call, count)) return;
    const Datatype* type = check_committed(call, datatype);
    if (type == nullptr) return;
    const OpEntry* o = check_op(call, op);
    if (o == nullptr || !check_buffer(call, inbuf, count, *type, "inbuf") ||
        !check_buffer(call, inoutbuf, count, *type, "inoutbuf")) {
      return;
    }
    CollOpPtr local = make_coll_op(runtime().world());
    const std::optional<ReductionPlan> plan = plan_reduction(call, *o, *type, *local);
    if (!plan) return;
    const std::size_t n = items(count);
    const void* in = local->elements_in(inbuf, n, *plan);
    void* inout = local->elements_out(inoutbuf, n, *plan, true, n);
    plan->reduction->apply(in, inout, n * plan->elements_per_item);
    local->complete_locally();
  });
}
#pragma weak MPI_Reduce_local = PMPI_Reduce_local


int PMPI_Neighbor_allgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                            MPI_Datatype recvtype, MPI_Comm comm) {
  return blocking("MPI_Neighbor_allgather", comm, [&](Call& call, CollOp& op) {
    return start_neighbor_allgather(call, op, sendbuf, sendcount, sendtype, recvbuf, recvcount, nullptr, nullptr,
                                    recvtype, false);
  });
}
#pragma weak MPI_Neighbor_allgather = PMPI_Neighbor_allgather

int PMPI_Ineighbor_allgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                             MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request) {
  return nonblocking("MPI_Ineighbor_allgather", comm, request, [&](Call& call, CollOp& op) {
    return start_neighbor_allgather(call, op, sendbuf, sendcount, sendtype, recvbuf, recvcount, nullptr, nullptr,
                                    recvtype, false);
  });
}
#pragma weak MPI_Ineighbor_allgather = PMPI_Ineighbor_allgather

int PMPI_Neighbor_allgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                             const int* recvcounts, const int* displs, MPI_Datatype recvtype, MPI_Comm comm) {
  return blocking("MPI_Neighbor_allgatherv", comm, [&](Call& call, CollOp& op) {
    return start_neighbor_allgather(call, op, sendbuf, sendcount, sendtype, recvbuf, 0, recvcounts, displs, recvtype,
                                    true);
  });
}
#pragma weak MPI_Neighbor_allgatherv = PMPI_Neighbor_allgatherv

int PMPI_Ineighbor_allgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                              const int* recvcounts, const int* displs, MPI_Datatype recvtype, MPI_Comm comm,
                              MPI_Request* request) {
  return nonblocking("MPI_Ineighbor_allgatherv", comm, request, [&](Call& call, CollOp& op) {
    return start_neighbor_allgather(call, op, sendbuf, sendcount, sendtype, recvbuf, 0, recvcounts, displs, recvtype,
                                    true);
  });
}
#pragma weak MPI_Ineighbor_allgatherv = PMPI_Ineighbor_allgatherv

int PMPI_Neighbor_alltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                           MPI_Datatype recvtype, MPI_Comm comm) {
  return blocking("MPI_Neighbor_alltoall", comm, [&](Call& call, CollOp& op) {
    return start_neighbor_alltoall(call, op, sendbuf, sendcount, nullptr, nullptr, nullptr, sendtype, recvbuf,
                                   recvcount, nullptr, nullptr, nullptr, recvtype);
  });
}
#pragma weak MPI_Neighbor_alltoall = PMPI_Neighbor_alltoall

int PMPI_Ineighbor_alltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                            MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request) {
  return nonblocking("MPI_Ineighbor_alltoall", comm, request, [&](Call& call, CollOp& op) {
    return start_neighbor_alltoall(call, op, sendbuf, sendcount, nullptr, nullptr, nullptr, sendtype, recvbuf,
                                   recvcount, nullptr, nullptr, nullptr, recvtype);
  });
}
#pragma weak MPI_Ineighbor_alltoall = PMPI_Ineighbor_alltoall

int PMPI_Neighbor_alltoallv(const void* sendbuf, const int* sendcounts, const int* sdispls, MPI_Datatype sendtype,
                            void* recvbuf, const int* recvcounts, const int* rdispls, MPI_Datatype recvtype,
                            MPI_Comm comm) {
  return blocking("MPI_Neighbor_alltoallv", comm, [&](Call& call, CollOp& op) {
    return start_neighbor_alltoall(call, op, sendbuf, 0, sendcounts, sdispls, nullptr, sendtype, recvbuf, 0,
                                   recvcounts, rdispls, nullptr, recvtype);
  });
}
#pragma weak MPI_Neighbor_alltoallv = PMPI_Neighbor_alltoallv

int PMPI_Ineighbor_alltoallv(const void* sendbuf, const int* sendcounts, const int* sdispls, MPI_Datatype sendtype,
                             void* recvbuf, const int* recvcounts, const int* rdispls, MPI_Datatype recvtype,
                             MPI_Comm comm, MPI_Request* request) {
  return nonblocking("MPI_Ineighbor_alltoallv", comm, request, [&](Call& call, CollOp& op) {
    return start_neighbor_alltoall(call, op, sendbuf, 0, sendcounts, sdispls, nullptr, sendtype, recvbuf, 0,
                                   recvcounts, rdispls, nullptr, recvtype);
  });
}
#pragma weak MPI_Ineighbor_alltoallv = PMPI_Ineighbor_alltoallv

int PMPI_Neighbor_alltoallw(const void* sendbuf, const int* sendcounts, const MPI_Aint* sdispls,
                            const MPI_Datatype* sendtypes, void* recvbuf, const int* recvcounts, const MPI_Aint* rdispls,
                            const MPI_Datatype* recvtypes, MPI_Comm comm) {
  return blocking("MPI_Neighbor_alltoallw", comm, [&](Call& call, CollOp& op) {
    return start_neighbor_alltoall(call, op, sendbuf, 0, sendcounts, sdispls, sendtypes, MPI_DATATYPE_NULL, recvbuf, 0,
                                   recvcounts, rdispls, recvtypes, MPI_DATATYPE_NULL);
  });
}
#pragma weak MPI_Neighbor_alltoallw = PMPI_Neighbor_alltoallw

int PMPI_Ineighbor_alltoallw(const void* sendbuf, const int* sendcounts, const MPI_Aint* sdispls,
                             const MPI_Datatype* sendtypes, void* recvbuf, const int* recvcounts,
                             const MPI_Aint* rdispls, const MPI_Datatype* recvtypes, MPI_Comm comm,
                             MPI_Request* request) {
  return nonblocking("MPI_Ineighbor_alltoallw", comm, request, [&](Call& call, CollOp& op) {
    return start_neighbor_alltoall(call, op, sendbuf, 0, sendcounts, sdispls, sendtypes, MPI_DATATYPE_NULL, recvbuf, 0,
                                   recvcounts, rdispls, recvtypes, MPI_DATATYPE_NULL);
  });
}
#pragma weak MPI_Ineighbor_alltoallw = PMPI_Ineighbor_alltoallw

// MPI-4's persistent collectives: each MPI_Start runs the nonblocking collective again.

int PMPI_Barrier_init(MPI_Comm comm, MPI_Info info, MPI_Request* request) {
  return persistent("MPI_Barrier_init", comm, info, request, [=](Call& call, CollOp& op) { return start_barrier(call, op); });
}
#pragma weak MPI_Barrier_init = PMPI_Barrier_init

int PMPI_Bcast_init(void* buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm, MPI_Info info,
                    MPI_Request* request) {
  return persistent("MPI_Bcast_init", comm, info, request,
                    [=](Call& call, CollOp& op) { return start_bcast(call, op, buffer, count, datatype, root); });
}
#pragma weak MPI_Bcast_init = PMPI_Bcast_init

int PMPI_Reduce_init(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op, int root,
                     MPI_Comm comm, MPI_Info info, MPI_Request* request) {
  return persistent("MPI_Reduce_init", comm, info, request, [=](Call& call, CollOp& o) {
    return start_reduce(call, o, Reduce::reduce, sendbuf, recvbuf, count, datatype, op, root);
  });
}
#pragma weak MPI_Reduce_init = PMPI_Reduce_init

int PMPI_Allreduce_init(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                        MPI_Comm comm, MPI_Info info, MPI_Request* request) {
  return persistent("MPI_Allreduce_init", comm, info, request, [=](Call& call, CollOp& o) {
    return start_reduce(call, o, Reduce::allreduce, sendbuf, recvbuf, count, datatype, op, 0);
  });
}
#pragma weak MPI_Allreduce_init = PMPI_Allreduce_init

int PMPI_Scan_init(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                   MPI_Info info, MPI_Request* request) {
  return persistent("MPI_Scan_init", comm, info, request, [=](Call& call, CollOp& o) {
    return start_reduce(call, o, Reduce::scan, sendbuf, recvbuf, count, datatype, op, 0);
  });
}
#pragma weak MPI_Scan_init = PMPI_Scan_init

int PMPI_Exscan_init(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                     MPI_Info info, MPI_Request* request) {
  return persistent("MPI_Exscan_init", comm, info, request, [=](Call& call, CollOp& o) {
    return start_reduce(call, o, Reduce::exscan, sendbuf, recvbuf, count, datatype, op, 0);
  });
}
#pragma weak MPI_Exscan_init = PMPI_Exscan_init

int PMPI_Gather_init(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                     MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Info info, MPI_Request* request) {
  return persistent("MPI_Gather_init", comm, info, request, [=](Call& call, CollOp& op) {
    return start_gather(call, op, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root);
  });
}
#pragma weak MPI_Gather_init = PMPI_Gather_init

int PMPI_Gatherv_init(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, const int* recvcounts,
                      const int* displs, MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Info info,
                      MPI_Request* request) {
  return persistent("MPI_Gatherv_init", comm, info, request, [=](Call& call, CollOp& op) {
    return start_gatherv(call, op, sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root);
  });
}
#pragma weak MPI_Gatherv_init = PMPI_Gatherv_init

int PMPI_Scatter_init(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                      MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Info info, MPI_Request* request) {
  return persistent("MPI_Scatter_init", comm, info, request, [=](Call& call, CollOp& op) {
    return start_scatter(call, op, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root);
  });
}
#pragma weak MPI_Scatter_init = PMPI_Scatter_init

int PMPI_Scatterv_init(const void* sendbuf, const int* sendcounts, const int* displs, MPI_Datatype sendtype,
                       void* recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Info info,
                       MPI_Request* request) {
  return persistent("MPI_Scatterv_init", comm, info, request, [=](Call& call, CollOp& op) {
    return start_scatterv(call, op, sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root);
  });
}
#pragma weak MPI_Scatterv_init = PMPI_Scatterv_init

int PMPI_Allgather_init(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                        MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info, MPI_Request* request) {
  return persistent("MPI_Allgather_init", comm, info, request, [=](Call& call, CollOp& op) {
    return start_allgather(call, op, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype);
  });
}
#pragma weak MPI_Allgather_init = PMPI_Allgather_init

int PMPI_Allgatherv_init(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                         const int* recvcounts, const int* displs, MPI_Datatype recvtype, MPI_Comm comm,
                         MPI_Info info, MPI_Request* request) {
  return persistent("MPI_Allgatherv_init", comm, info, request, [=](Call& call, CollOp& op) {
    return start_allgatherv(call, op, sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype);
  });
}
#pragma weak MPI_Allgatherv_init = PMPI_Allgatherv_init

int PMPI_Alltoall_init(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                       MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info, MPI_Request* request) {
  return persistent("MPI_Alltoall_init", comm, info, request, [=](Call& call, CollOp& op) {
    return start_alltoall(call, op, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype);
  });
}
#pragma weak MPI_Alltoall_init = PMPI_Alltoall_init

int PMPI_Alltoallv_init(const void* sendbuf, const int* sendcounts, const int* sdispls, MPI_Datatype sendtype,
                        void* recvbuf, const int* recvcounts, const int* rdispls, MPI_Datatype recvtype,
                        MPI_Comm comm, MPI_Info info, MPI_Request* request) {
  return persistent("MPI_Alltoallv_init", comm, info, request, [=](Call& call, CollOp& op) {
    return start_alltoallv(call, op, sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype);
  });
}
#pragma weak MPI_Alltoallv_init = PMPI_Alltoallv_init

int PMPI_Alltoallw_init(const void* sendbuf, const int* sendcounts, const int* sdispls, const MPI_Datatype* sendtypes,
                        void* recvbuf, const int* recvcounts, const int* rdispls, const MPI_Datatype* recvtypes,
                        MPI_Comm comm, MPI_Info info, MPI_Request* request) {
  return persistent("MPI_Alltoallw_init", comm, info, request, [=](Call& call, CollOp& op) {
    return start_alltoallw(call, op, sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls,
                           recvtypes);
  });
}
#pragma weak MPI_Alltoallw_init = PMPI_Alltoallw_init

int PMPI_Reduce_scatter_init(const void* sendbuf, void* recvbuf, const int* recvcounts, MPI_Datatype datatype,
                             MPI_Op op, MPI_Comm comm, MPI_Info info, MPI_Request* request) {
  return persistent("MPI_Reduce_scatter_init", comm, info, request, [=](Call& call, CollOp& o) {
    return check_arg(call, recvcounts, "recvcounts") &&
           start_reduce_scatter(call, o, sendbuf, recvbuf, recvcounts, 0, datatype, op);
  });
}
#pragma weak MPI_Reduce_scatter_init = PMPI_Reduce_scatter_init

int PMPI_Reduce_scatter_block_init(const void* sendbuf, void* recvbuf, int recvcount, MPI_Datatype datatype,
                                   MPI_Op op, MPI_Comm comm, MPI_Info info, MPI_Request* request) {
  return persistent("MPI_Reduce_scatter_block_init", comm, info, request, [=](Call& call, CollOp& o) {
    return start_reduce_scatter(call, o, sendbuf, recvbuf, nullptr, recvcount, datatype, op);
  });
}
#pragma weak MPI_Reduce_scatter_block_init = PMPI_Reduce_scatter_block_init

int PMPI_Neighbor_allgather_init(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                                 int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                                 MPI_Request* request) {
  return persistent("MPI_Neighbor_allgather_init", comm, info, request, [=](Call& call, CollOp& op) {
    return start_neighbor_allgather(call, op, sendbuf, sendcount, sendtype, recvbuf, recvcount, nullptr, nullptr,
                                    recvtype, false);
  });
}
#pragma weak MPI_Neighbor_allgather_init = PMPI_Neighbor_allgather_init

int PMPI_Neighbor_allgatherv_init(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                                  const int* recvcounts, const int* displs, MPI_Datatype recvtype, MPI_Comm comm,
                                  MPI_Info info, MPI_Request* request) {
  return persistent("MPI_Neighbor_allgatherv_init", comm, info, request, [=](Call& call, CollOp& op) {
    return start_neighbor_allgather(call, op, sendbuf, sendcount, sendtype, recvbuf, 0, recvcounts, displs, recvtype,
                                    true);
  });
}
#pragma weak MPI_Neighbor_allgatherv_init = PMPI_Neighbor_allgatherv_init

int PMPI_Neighbor_alltoall_init(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                                int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                                MPI_Request* request) {
  return persistent("MPI_Neighbor_alltoall_init", comm, info, request, [=](Call& call, CollOp& op) {
    return start_neighbor_alltoall(call, op, sendbuf, sendcount, nullptr, nullptr, nullptr, sendtype, recvbuf,
                                   recvcount, nullptr, nullptr, nullptr, recvtype);
  });
}
#pragma weak MPI_Neighbor_alltoall_init = PMPI_Neighbor_alltoall_init

int PMPI_Neighbor_alltoallv_init(const void* sendbuf, const int* sendcounts, const int* sdispls,
                                 MPI_Datatype sendtype, void* recvbuf, const int* recvcounts, const int* rdispls,
                                 MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info, MPI_Request* request) {
  return persistent("MPI_Neighbor_alltoallv_init", comm, info, request, [=](Call& call, CollOp& op) {
    return start_neighbor_alltoall(call, op, sendbuf, 0, sendcounts, sdispls, nullptr, sendtype, recvbuf, 0,
                                   recvcounts, rdispls, nullptr, recvtype);
  });
}
#pragma weak MPI_Neighbor_alltoallv_init = PMPI_Neighbor_alltoallv_init

int PMPI_Neighbor_alltoallw_init(const void* sendbuf, const int* sendcounts, const MPI_Aint* sdispls,
                                 const MPI_Datatype* sendtypes, void* recvbuf, const int* recvcounts,
                                 const MPI_Aint* rdispls, const MPI_Datatype* recvtypes, MPI_Comm comm, MPI_Info info,
                                 MPI_Request* request) {
  return persistent("MPI_Neighbor_alltoallw_init", comm, info, request, [=](Call& call, CollOp& op) {
    return start_neighbor_alltoall(call, op, sendbuf, 0, sendcounts, sdispls, sendtypes, MPI_DATATYPE_NULL, recvbuf, 0,
                                   recvcounts, rdispls, recvtypes, MPI_DATATYPE_NULL);
  });
}
#pragma weak MPI_Neighbor_alltoallw_init = PMPI_Neighbor_alltoallw_init

// MPI-4's large-count forms of the collectives whose counts are scalars.

int PMPI_Bcast_c(void* buffer, MPI_Count count, MPI_Datatype datatype, int root, MPI_Comm comm) {
  return blocking("MPI_Bcast_c", comm,
                  [&](Call& call, CollOp& op) { return start_bcast(call, op, buffer, count, datatype, root, true); });
}
#pragma weak MPI_Bcast_c = PMPI_Bcast_c

int PMPI_Ibcast_c(void* buffer, MPI_Count count, MPI_Datatype datatype, int root, MPI_Comm comm,
                  MPI_Request* request) {
  return nonblocking("MPI_Ibcast_c", comm, request,
                     [&](Call& call, CollOp& op) { return start_bcast(call, op, buffer, count, datatype, root); });
}
#pragma weak MPI_Ibcast_c = PMPI_Ibcast_c

int PMPI_Bcast_init_c(void* buffer, MPI_Count count, MPI_Datatype datatype, int root, MPI_Comm comm, MPI_Info info,
                      MPI_Request* request) {
  return persistent("MPI_Bcast_init_c", comm, info, request,
                    [=](Call& call, CollOp& op) { return start_bcast(call, op, buffer, count, datatype, root); });
}
#pragma weak MPI_Bcast_init_c = PMPI_Bcast_init_c

int PMPI_Reduce_c(const void* sendbuf, void* recvbuf, MPI_Count count, MPI_Datatype datatype, MPI_Op op, int root,
                  MPI_Comm comm) {
  return blocking("MPI_Reduce_c", comm, [&](Call& call, CollOp& o) {
    return start_reduce(call, o, Reduce::reduce, sendbuf, recvbuf, count, datatype, op, root);
  });
}
#pragma weak MPI_Reduce_c = PMPI_Reduce_c

int PMPI_Ireduce_c(const void* sendbuf, void* recvbuf, MPI_Count count, MPI_Datatype datatype, MPI_Op op, int root,
                   MPI_Comm comm, MPI_Request* request) {
  return nonblocking("MPI_Ireduce_c", comm, request, [&](Call& call, CollOp& o) {
    return start_reduce(call, o, Reduce::reduce, sendbuf, recvbuf, count, datatype, op, root);
  });
}
#pragma weak MPI_Ireduce_c = PMPI_Ireduce_c

int PMPI_Reduce_init_c(const void* sendbuf, void* recvbuf, MPI_Count count, MPI_Datatype datatype, MPI_Op op,
                       int root, MPI_Comm comm, MPI_Info info, MPI_Request* request) {
  return persistent("MPI_Reduce_init_c", comm, info, request, [=](Call& call, CollOp& o) {
    return start_reduce(call, o, Reduce::reduce, sendbuf, recvbuf, count, datatype, op, root);
  });
}
#pragma weak MPI_Reduce_init_c = PMPI_Reduce_init_c

int PMPI_Allreduce_c(const void* sendbuf, void* recvbuf, MPI_Count count, MPI_Datatype datatype, MPI_Op op,
                     MPI_Comm comm) {
  return blocking("MPI_Allreduce_c", comm, [&](Call& call, CollOp& o) {
    return start_reduce(call, o, Reduce::allreduce, sendbuf, recvbuf, count, datatype, op, 0, true);
  });
}
#pragma weak MPI_Allreduce_c = PMPI_Allreduce_c

int PMPI_Iallreduce_c(const void* sendbuf, void* recvbuf, MPI_Count count, MPI_Datatype datatype, MPI_Op op,
                      MPI_Comm comm, MPI_Request* request) {
  return nonblocking("MPI_Iallreduce_c", comm, request, [&](Call& call, CollOp& o) {
    return start_reduce(call, o, Reduce::allreduce, sendbuf, recvbuf, count, datatype, op, 0);
  });
}
#pragma weak MPI_Iallreduce_c = PMPI_Iallreduce_c

int PMPI_Allreduce_init_c(const void* sendbuf, void* recvbuf, MPI_Count count, MPI_Datatype datatype, MPI_Op op,
                          MPI_Comm comm, MPI_Info info, MPI_Request* request) {
  return persistent("MPI_Allreduce_init_c", comm, info, request, [=](Call& call, CollOp& o) {
    return start_reduce(call, o, Reduce::allreduce, sendbuf, recvbuf, count, datatype, op, 0);
  });
}
#pragma weak MPI_Allreduce_init_c = PMPI_Allreduce_init_c

int PMPI_Scan_c(const void* sendbuf, void* recvbuf, MPI_Count count, MPI_Datatype datatype, MPI_Op op,
                MPI_Comm comm) {
  return blocking("MPI_Scan_c", comm, [&](Call& call, CollOp& o) {
    return start_reduce(call, o, Reduce::scan, sendbuf, recvbuf, count, datatype, op, 0);
  });
}
#pragma weak MPI_Scan_c = PMPI_Scan_c

int PMPI_Iscan_c(const void* sendbuf, void* recvbuf, MPI_Count count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                 MPI_Request* request) {
  return nonblocking("MPI_Iscan_c", comm, request, [&](Call& call, CollOp& o) {
    return start_reduce(call, o, Reduce::scan, sendbuf, recvbuf, count, datatype, op, 0);
  });
}
#pragma weak MPI_Iscan_c = PMPI_Iscan_c

int PMPI_Scan_init_c(const void* sendbuf, void* recvbuf, MPI_Count count, MPI_Datatype datatype, MPI_Op op,
                     MPI_Comm comm, MPI_Info info, MPI_Request* request) {
  return persistent("MPI_Scan_init_c", comm, info, request, [=](Call& call, CollOp& o) {
    return start_reduce(call, o, Reduce::scan, sendbuf, recvbuf, count, datatype, op, 0);
  });
}
#pragma weak MPI_Scan_init_c = PMPI_Scan_init_c

int PMPI_Exscan_c(const void* sendbuf, void* recvbuf, MPI_Count count, MPI_Datatype datatype, MPI_Op op,
                  MPI_Comm comm) {
  return blocking("MPI_Exscan_c", comm, [&](Call& call, CollOp& o) {
    return start_reduce(call, o, Reduce::exscan, sendbuf, recvbuf, count, datatype, op, 0);
  });
}
#pragma weak MPI_Exscan_c = PMPI_Exscan_c

int PMPI_Iexscan_c(const void* sendbuf, void* recvbuf, MPI_Count count, MPI_Datatype datatype, MPI_Op op,
                   MPI_Comm comm, MPI_Request* request) {
  return nonblocking("MPI_Iexscan_c", comm, request, [&](Call& call, CollOp& o) {
    return start_reduce(call, o, Reduce::exscan, sendbuf, recvbuf, count, datatype, op, 0);
  });
}
#pragma weak MPI_Iexscan_c = PMPI_Iexscan_c

int PMPI_Exscan_init_c(const void* sendbuf, void* recvbuf, MPI_Count count, MPI_Datatype datatype, MPI_Op op,
                       MPI_Comm comm, MPI_Info info, MPI_Request* request) {
  return persistent("MPI_Exscan_init_c", comm, info, request, [=](Call& call, CollOp& o) {
    return start_reduce(call, o, Reduce::exscan, sendbuf, recvbuf, count, datatype, op, 0);
  });
}
#pragma weak MPI_Exscan_init_c = PMPI_Exscan_init_c

int PMPI_Gather_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf, MPI_Count recvcount,
                  MPI_Datatype recvtype, int root, MPI_Comm comm) {
  return blocking("MPI_Gather_c", comm, [&](Call& call, CollOp& op) {
    return start_gather(call, op, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root);
  });
}
#pragma weak MPI_Gather_c = PMPI_Gather_c

int PMPI_Igather_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf,
                   MPI_Count recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request* request) {
  return nonblocking("MPI_Igather_c", comm, request, [&](Call& call, CollOp& op) {
    return start_gather(call, op, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root);
  });
}
#pragma weak MPI_Igather_c = PMPI_Igather_c

int PMPI_Gather_init_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf,
                       MPI_Count recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Info info,
                       MPI_Request* request) {
  return persistent("MPI_Gather_init_c", comm, info, request, [=](Call& call, CollOp& op) {
    return start_gather(call, op, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root);
  });
}
#pragma weak MPI_Gather_init_c = PMPI_Gather_init_c

int PMPI_Scatter_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf,
                   MPI_Count recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm) {
  return blocking("MPI_Scatter_c", comm, [&](Call& call, CollOp& op) {
    return start_scatter(call, op, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root);
  });
}
#pragma weak MPI_Scatter_c = PMPI_Scatter_c

int PMPI_Iscatter_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf,
                    MPI_Count recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request* request) {
  return nonblocking("MPI_Iscatter_c", comm, request, [&](Call& call, CollOp& op) {
    return start_scatter(call, op, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root);
  });
}
#pragma weak MPI_Iscatter_c = PMPI_Iscatter_c

int PMPI_Scatter_init_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf,
                        MPI_Count recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Info info,
                        MPI_Request* request) {
  return persistent("MPI_Scatter_init_c", comm, info, request, [=](Call& call, CollOp& op) {
    return start_scatter(call, op, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root);
  });
}
#pragma weak MPI_Scatter_init_c = PMPI_Scatter_init_c

int PMPI_Allgather_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf,
                     MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
  return blocking("MPI_Allgather_c", comm, [&](Call& call, CollOp& op) {
    return start_allgather(call, op, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype);
  });
}
#pragma weak MPI_Allgather_c = PMPI_Allgather_c

int PMPI_Iallgather_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf,
                      MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request) {
  return nonblocking("MPI_Iallgather_c", comm, request, [&](Call& call, CollOp& op) {
    return start_allgather(call, op, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype);
  });
}
#pragma weak MPI_Iallgather_c = PMPI_Iallgather_c

int PMPI_Allgather_init_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf,
                          MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                          MPI_Request* request) {
  return persistent("MPI_Allgather_init_c", comm, info, request, [=](Call& call, CollOp& op) {
    return start_allgather(call, op, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype);
  });
}
#pragma weak MPI_Allgather_init_c = PMPI_Allgather_init_c

int PMPI_Alltoall_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf,
                    MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
  return blocking("MPI_Alltoall_c", comm, [&](Call& call, CollOp& op) {
    return start_alltoall(call, op, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype);
  });
}
#pragma weak MPI_Alltoall_c = PMPI_Alltoall_c

int PMPI_Ialltoall_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf,
                     MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request) {
  return nonblocking("MPI_Ialltoall_c", comm, request, [&](Call& call, CollOp& op) {
    return start_alltoall(call, op, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype);
  });
}
#pragma weak MPI_Ialltoall_c = PMPI_Ialltoall_c

int PMPI_Alltoall_init_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf,
                         MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                         MPI_Request* request) {
  return persistent("MPI_Alltoall_init_c", comm, info, request, [=](Call& call, CollOp& op) {
    return start_alltoall(call, op, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype);
  });
}
#pragma weak MPI_Alltoall_init_c = PMPI_Alltoall_init_c

int PMPI_Reduce_scatter_block_c(const void* sendbuf, void* recvbuf, MPI_Count recvcount, MPI_Datatype datatype,
                                MPI_Op op, MPI_Comm comm) {
  return blocking("MPI_Reduce_scatter_block_c", comm, [&](Call& call, CollOp& o) {
    return start_reduce_scatter(call, o, sendbuf, recvbuf, nullptr, recvcount, datatype, op);
  });
}
#pragma weak MPI_Reduce_scatter_block_c = PMPI_Reduce_scatter_block_c

int PMPI_Ireduce_scatter_block_c(const void* sendbuf, void* recvbuf, MPI_Count recvcount, MPI_Datatype datatype,
                                 MPI_Op op, MPI_Comm comm, MPI_Request* request) {
  return nonblocking("MPI_Ireduce_scatter_block_c", comm, request, [&](Call& call, CollOp& o) {
    return start_reduce_scatter(call, o, sendbuf, recvbuf, nullptr, recvcount, datatype, op);
  });
}
#pragma weak MPI_Ireduce_scatter_block_c = PMPI_Ireduce_scatter_block_c

int PMPI_Reduce_scatter_block_init_c(const void* sendbuf, void* recvbuf, MPI_Count recvcount, MPI_Datatype datatype,
                                     MPI_Op op, MPI_Comm comm, MPI_Info info, MPI_Request* request) {
  return persistent("MPI_Reduce_scatter_block_init_c", comm, info, request, [=](Call& call, CollOp& o) {
    return start_reduce_scatter(call, o, sendbuf, recvbuf, nullptr, recvcount, datatype, op);
  });
}
#pragma weak MPI_Reduce_scatter_block_init_c = PMPI_Reduce_scatter_block_init_c

int PMPI_Neighbor_allgather_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf,
                              MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
  return blocking("MPI_Neighbor_allgather_c", comm, [&](Call& call, CollOp& op) {
    return start_neighbor_allgather(call, op, sendbuf, sendcount, sendtype, recvbuf, recvcount, nullptr, nullptr,
                                    recvtype, false);
  });
}
#pragma weak MPI_Neighbor_allgather_c = PMPI_Neighbor_allgather_c

int PMPI_Ineighbor_allgather_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf,
                               MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request) {
  return nonblocking("MPI_Ineighbor_allgather_c", comm, request, [&](Call& call, CollOp& op) {
    return start_neighbor_allgather(call, op, sendbuf, sendcount, sendtype, recvbuf, recvcount, nullptr, nullptr,
                                    recvtype, false);
  });
}
#pragma weak MPI_Ineighbor_allgather_c = PMPI_Ineighbor_allgather_c

int PMPI_Neighbor_allgather_init_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf,
                                   MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                                   MPI_Request* request) {
  return persistent("MPI_Neighbor_allgather_init_c", comm, info, request, [=](Call& call, CollOp& op) {
    return start_neighbor_allgather(call, op, sendbuf, sendcount, sendtype, recvbuf, recvcount, nullptr, nullptr,
                                    recvtype, false);
  });
}
#pragma weak MPI_Neighbor_allgather_init_c = PMPI_Neighbor_allgather_init_c

int PMPI_Neighbor_alltoall_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf,
                             MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
  return blocking("MPI_Neighbor_alltoall_c", comm, [&](Call& call, CollOp& op) {
    return start_neighbor_alltoall(call, op, sendbuf, sendcount, nullptr, nullptr, nullptr, sendtype, recvbuf,
                                   recvcount, nullptr, nullptr, nullptr, recvtype);
  });
}
#pragma weak MPI_Neighbor_alltoall_c = PMPI_Neighbor_alltoall_c

int PMPI_Ineighbor_alltoall_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf,
                              MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request) {
  return nonblocking("MPI_Ineighbor_alltoall_c", comm, request, [&](Call& call, CollOp& op) {
    return start_neighbor_alltoall(call, op, sendbuf, sendcount, nullptr, nullptr, nullptr, sendtype, recvbuf,
                                   recvcount, nullptr, nullptr, nullptr, recvtype);
  });
}
#pragma weak MPI_Ineighbor_alltoall_c = PMPI_Ineighbor_alltoall_c

int PMPI_Neighbor_alltoall_init_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf,
                                  MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                                  MPI_Request* request) {
  return persistent("MPI_Neighbor_alltoall_init_c", comm, info, request, [=](Call& call, CollOp& op) {
    return start_neighbor_alltoall(call, op, sendbuf, sendcount, nullptr, nullptr, nullptr, sendtype, recvbuf,
                                   recvcount, nullptr, nullptr, nullptr, recvtype);
  });
}
#pragma weak MPI_Neighbor_alltoall_init_c = PMPI_Neighbor_alltoall_init_c

// ... and of the v and w collectives (MPI_Count counts, MPI_Aint displacements).

int PMPI_Gatherv_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf,
                   const MPI_Count* recvcounts, const MPI_Aint* displs, MPI_Datatype recvtype, int root,
                   MPI_Comm comm) {
  return blocking("MPI_Gatherv_c", comm, [&](Call& call, CollOp& op) {
    return start_gatherv(call, op, sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root);
  });
}
#pragma weak MPI_Gatherv_c = PMPI_Gatherv_c

int PMPI_Igatherv_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf,
                    const MPI_Count* recvcounts, const MPI_Aint* displs, MPI_Datatype recvtype, int root,
                    MPI_Comm comm, MPI_Request* request) {
  return nonblocking("MPI_Igatherv_c", comm, request, [&](Call& call, CollOp& op) {
    return start_gatherv(call, op, sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root);
  });
}
#pragma weak MPI_Igatherv_c = PMPI_Igatherv_c

int PMPI_Gatherv_init_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf,
                        const MPI_Count* recvcounts, const MPI_Aint* displs, MPI_Datatype recvtype, int root,
                        MPI_Comm comm, MPI_Info info, MPI_Request* request) {
  return persistent("MPI_Gatherv_init_c", comm, info, request, [=](Call& call, CollOp& op) {
    return start_gatherv(call, op, sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root);
  });
}
#pragma weak MPI_Gatherv_init_c = PMPI_Gatherv_init_c

int PMPI_Scatterv_c(const void* sendbuf, const MPI_Count* sendcounts, const MPI_Aint* displs, MPI_Datatype sendtype,
                    void* recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm) {
  return blocking("MPI_Scatterv_c", comm, [&](Call& call, CollOp& op) {
    return start_scatterv(call, op, sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root);
  });
}
#pragma weak MPI_Scatterv_c = PMPI_Scatterv_c

int PMPI_Iscatterv_c(const void* sendbuf, const MPI_Count* sendcounts, const MPI_Aint* displs, MPI_Datatype sendtype,
                     void* recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                     MPI_Request* request) {
  return nonblocking("MPI_Iscatterv_c", comm, request, [&](Call& call, CollOp& op) {
    return start_scatterv(call, op, sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root);
  });
}
#pragma weak MPI_Iscatterv_c = PMPI_Iscatterv_c

int PMPI_Scatterv_init_c(const void* sendbuf, const MPI_Count* sendcounts, const MPI_Aint* displs,
                         MPI_Datatype sendtype, void* recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, int root,
                         MPI_Comm comm, MPI_Info info, MPI_Request* request) {
  return persistent("MPI_Scatterv_init_c", comm, info, request, [=](Call& call, CollOp& op) {
    return start_scatterv(call, op, sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root);
  });
}
#pragma weak MPI_Scatterv_init_c = PMPI_Scatterv_init_c

int PMPI_Allgatherv_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf,
                      const MPI_Count* recvcounts, const MPI_Aint* displs, MPI_Datatype recvtype, MPI_Comm comm) {
  return blocking("MPI_Allgatherv_c", comm, [&](Call& call, CollOp& op) {
    return start_allgatherv(call, op, sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype);
  });
}
#pragma weak MPI_Allgatherv_c = PMPI_Allgatherv_c

int PMPI_Iallgatherv_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf,
                       const MPI_Count* recvcounts, const MPI_Aint* displs, MPI_Datatype recvtype, MPI_Comm comm,
                       MPI_Request* request) {
  return nonblocking("MPI_Iallgatherv_c", comm, request, [&](Call& call, CollOp& op) {
    return start_allgatherv(call, op, sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype);
  });
}
#pragma weak MPI_Iallgatherv_c = PMPI_Iallgatherv_c

int PMPI_Allgatherv_init_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf,
                           const MPI_Count* recvcounts, const MPI_Aint* displs, MPI_Datatype recvtype, MPI_Comm comm,
                           MPI_Info info, MPI_Request* request) {
  return persistent("MPI_Allgatherv_init_c", comm, info, request, [=](Call& call, CollOp& op) {
    return start_allgatherv(call, op, sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype);
  });
}
#pragma weak MPI_Allgatherv_init_c = PMPI_Allgatherv_init_c

int PMPI_Alltoallv_c(const void* sendbuf, const MPI_Count* sendcounts, const MPI_Aint* sdispls, MPI_Datatype sendtype,
                     void* recvbuf, const MPI_Count* recvcounts, const MPI_Aint* rdispls, MPI_Datatype recvtype,
                     MPI_Comm comm) {
  return blocking("MPI_Alltoallv_c", comm, [&](Call& call, CollOp& op) {
    return start_alltoallv(call, op, sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype);
  });
}
#pragma weak MPI_Alltoallv_c = PMPI_Alltoallv_c

int PMPI_Ialltoallv_c(const void* sendbuf, const MPI_Count* sendcounts, const MPI_Aint* sdispls,
                      MPI_Datatype sendtype, void* recvbuf, const MPI_Count* recvcounts, const MPI_Aint* rdispls,
                      MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request) {
  return nonblocking("MPI_Ialltoallv_c", comm, request, [&](Call& call, CollOp& op) {
    return start_alltoallv(call, op, sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype);
  });
}
#pragma weak MPI_Ialltoallv_c = PMPI_Ialltoallv_c

int PMPI_Alltoallv_init_c(const void* sendbuf, const MPI_Count* sendcounts, const MPI_Aint* sdispls,
                          MPI_Datatype sendtype, void* recvbuf, const MPI_Count* recvcounts, const MPI_Aint* rdispls,
                          MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info, MPI_Request* request) {
  return persistent("MPI_Alltoallv_init_c", comm, info, request, [=](Call& call, CollOp& op) {
    return start_alltoallv(call, op, sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype);
  });
}
#pragma weak MPI_Alltoallv_init_c = PMPI_Alltoallv_init_c

int PMPI_Alltoallw_c(const void* sendbuf, const MPI_Count* sendcounts, const MPI_Aint* sdispls,
                     const MPI_Datatype* sendtypes, void* recvbuf, const MPI_Count* recvcounts,
                     const MPI_Aint* rdispls, const MPI_Datatype* recvtypes, MPI_Comm comm) {
  return blocking("MPI_Alltoallw_c", comm, [&](Call& call, CollOp& op) {
    return start_alltoallw(call, op, sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls,
                           recvtypes);
  });
}
#pragma weak MPI_Alltoallw_c = PMPI_Alltoallw_c

int PMPI_Ialltoallw_c(const void* sendbuf, const MPI_Count* sendcounts, const MPI_Aint* sdispls,
                      const MPI_Datatype* sendtypes, void* recvbuf, const MPI_Count* recvcounts,
                      const MPI_Aint* rdispls, const MPI_Datatype* recvtypes, MPI_Comm comm, MPI_Request* request) {
  return nonblocking("MPI_Ialltoallw_c", comm, request, [&](Call& call, CollOp& op) {
    return start_alltoallw(call, op, sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls,
                           recvtypes);
  });
}
#pragma weak MPI_Ialltoallw_c = PMPI_Ialltoallw_c

int PMPI_Alltoallw_init_c(const void* sendbuf, const MPI_Count* sendcounts, const MPI_Aint* sdispls,
                          const MPI_Datatype* sendtypes, void* recvbuf, const MPI_Count* recvcounts,
                          const MPI_Aint* rdispls, const MPI_Datatype* recvtypes, MPI_Comm comm, MPI_Info info,
                          MPI_Request* request) {
  return persistent("MPI_Alltoallw_init_c", comm, info, request, [=](Call& call, CollOp& op) {
    return start_alltoallw(call, op, sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls,
                           recvtypes);
  });
}
#pragma weak MPI_Alltoallw_init_c = PMPI_Alltoallw_init_c

int PMPI_Reduce_scatter_c(const void* sendbuf, void* recvbuf, const MPI_Count* recvcounts, MPI_Datatype datatype,
                          MPI_Op op, MPI_Comm comm) {
  return blocking("MPI_Reduce_scatter_c", comm, [&](Call& call, CollOp& o) {
    return check_arg(call, recvcounts, "recvcounts") &&
           start_reduce_scatter(call, o, sendbuf, recvbuf, recvcounts, 0, datatype, op);
  });
}
#pragma weak MPI_Reduce_scatter_c = PMPI_Reduce_scatter_c

int PMPI_Ireduce_scatter_c(const void* sendbuf, void* recvbuf, const MPI_Count* recvcounts, MPI_Datatype datatype,
                           MPI_Op op, MPI_Comm comm, MPI_Request* request) {
  return nonblocking("MPI_Ireduce_scatter_c", comm, request, [&](Call& call, CollOp& o) {
    return check_arg(call, recvcounts, "recvcounts") &&
           start_reduce_scatter(call, o, sendbuf, recvbuf, recvcounts, 0, datatype, op);
  });
}
#pragma weak MPI_Ireduce_scatter_c = PMPI_Ireduce_scatter_c

int PMPI_Reduce_scatter_init_c(const void* sendbuf, void* recvbuf, const MPI_Count* recvcounts, MPI_Datatype datatype,
                               MPI_Op op, MPI_Comm comm, MPI_Info info, MPI_Request* request) {
  return persistent("MPI_Reduce_scatter_init_c", comm, info, request, [=](Call& call, CollOp& o) {
    return check_arg(call, recvcounts, "recvcounts") &&
           start_reduce_scatter(call, o, sendbuf, recvbuf, recvcounts, 0, datatype, op);
  });
}
#pragma weak MPI_Reduce_scatter_init_c = PMPI_Reduce_scatter_init_c

int PMPI_Neighbor_allgatherv_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf,
                               const MPI_Count* recvcounts, const MPI_Aint* displs, MPI_Datatype recvtype,
                               MPI_Comm comm) {
  return blocking("MPI_Neighbor_allgatherv_c", comm, [&](Call& call, CollOp& op) {
    return start_neighbor_allgather(call, op, sendbuf, sendcount, sendtype, recvbuf, 0, recvcounts, displs, recvtype,
                                    true);
  });
}
#pragma weak MPI_Neighbor_allgatherv_c = PMPI_Neighbor_allgatherv_c

int PMPI_Ineighbor_allgatherv_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf,
                                const MPI_Count* recvcounts, const MPI_Aint* displs, MPI_Datatype recvtype,
                                MPI_Comm comm, MPI_Request* request) {
  return nonblocking("MPI_Ineighbor_allgatherv_c", comm, request, [&](Call& call, CollOp& op) {
    return start_neighbor_allgather(call, op, sendbuf, sendcount, sendtype, recvbuf, 0, recvcounts, displs, recvtype,
                                    true);
  });
}
#pragma weak MPI_Ineighbor_allgatherv_c = PMPI_Ineighbor_allgatherv_c

int PMPI_Neighbor_allgatherv_init_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf,
                                    const MPI_Count* recvcounts, const MPI_Aint* displs, MPI_Datatype recvtype,
                                    MPI_Comm comm, MPI_Info info, MPI_Request* request) {
  return persistent("MPI_Neighbor_allgatherv_init_c", comm, info, request, [=](Call& call, CollOp& op) {
    return start_neighbor_allgather(call, op, sendbuf, sendcount, sendtype, recvbuf, 0, recvcounts, displs, recvtype,
                                    true);
  });
}
#pragma weak MPI_Neighbor_allgatherv_init_c = PMPI_Neighbor_allgatherv_init_c

int PMPI_Neighbor_alltoallv_c(const void* sendbuf, const MPI_Count* sendcounts, const MPI_Aint* sdispls,
                              MPI_Datatype sendtype, void* recvbuf, const MPI_Count* recvcounts,
                              const MPI_Aint* rdispls, MPI_Datatype recvtype, MPI_Comm comm) {
  return blocking("MPI_Neighbor_alltoallv_c", comm, [&](Call& call, CollOp& op) {
    return start_neighbor_alltoall(call, op, sendbuf, 0, sendcounts, sdispls, nullptr, sendtype, recvbuf, 0,
                                   recvcounts, rdispls, nullptr, recvtype);
  });
}
#pragma weak MPI_Neighbor_alltoallv_c = PMPI_Neighbor_alltoallv_c

int PMPI_Ineighbor_alltoallv_c(const void* sendbuf, const MPI_Count* sendcounts, const MPI_Aint* sdispls,
                               MPI_Datatype sendtype, void* recvbuf, const MPI_Count* recvcounts,
                               const MPI_Aint* rdispls, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request) {
  return nonblocking("MPI_Ineighbor_alltoallv_c", comm, request, [&](Call& call, CollOp& op) {
    return start_neighbor_alltoall(call, op, sendbuf, 0, sendcounts, sdispls, nullptr, sendtype, recvbuf, 0,
                                   recvcounts, rdispls, nullptr, recvtype);
  });
}
#pragma weak MPI_Ineighbor_alltoallv_c = PMPI_Ineighbor_alltoallv_c

int PMPI_Neighbor_alltoallv_init_c(const void* sendbuf, const MPI_Count* sendcounts, const MPI_Aint* sdispls,
                                   MPI_Datatype sendtype, void* recvbuf, const MPI_Count* recvcounts,
                                   const MPI_Aint* rdispls, MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                                   MPI_Request* request) {
  return persistent("MPI_Neighbor_alltoallv_init_c", comm, info, request, [=](Call& call, CollOp& op) {
    return start_neighbor_alltoall(call, op, sendbuf, 0, sendcounts, sdispls, nullptr, sendtype, recvbuf, 0,
                                   recvcounts, rdispls, nullptr, recvtype);
  });
}
#pragma weak MPI_Neighbor_alltoallv_init_c = PMPI_Neighbor_alltoallv_init_c

int PMPI_Neighbor_alltoallw_c(const void* sendbuf, const MPI_Count* sendcounts, const MPI_Aint* sdispls,
                              const MPI_Datatype* sendtypes, void* recvbuf, const MPI_Count* recvcounts,
                              const MPI_Aint* rdispls, const MPI_Datatype* recvtypes, MPI_Comm comm) {
  return blocking("MPI_Neighbor_alltoallw_c", comm, [&](Call& call, CollOp& op) {
    return start_neighbor_alltoall(call, op, sendbuf, 0, sendcounts, sdispls, sendtypes, MPI_DATATYPE_NULL, recvbuf, 0,
                                   recvcounts, rdispls, recvtypes, MPI_DATATYPE_NULL);
  });
}
#pragma weak MPI_Neighbor_alltoallw_c = PMPI_Neighbor_alltoallw_c

int PMPI_Ineighbor_alltoallw_c(const void* sendbuf, const MPI_Count* sendcounts, const MPI_Aint* sdispls,
                               const MPI_Datatype* sendtypes, void* recvbuf, const MPI_Count* recvcounts,
                               const MPI_Aint* rdispls, const MPI_Datatype* recvtypes, MPI_Comm comm,
                               MPI_Request* request) {
  return nonblocking("MPI_Ineighbor_alltoallw_c", comm, request, [&](Call& call, CollOp& op) {
    return start_neighbor_alltoall(call, op, sendbuf, 0, sendcounts, sdispls, sendtypes, MPI_DATATYPE_NULL, recvbuf, 0,
                                   recvcounts, rdispls, recvtypes, MPI_DATATYPE_NULL);
  });
}
#pragma weak MPI_Ineighbor_alltoallw_c = PMPI_Ineighbor_alltoallw_c

int PMPI_Neighbor_alltoallw_init_c(const void* sendbuf, const MPI_Count* sendcounts, const MPI_Aint* sdispls,
                                   const MPI_Datatype* sendtypes, void* recvbuf, const MPI_Count* recvcounts,
                                   const MPI_Aint* rdispls, const MPI_Datatype* recvtypes, MPI_Comm comm,
                                   MPI_Info info, MPI_Request* request) {
  return persistent("MPI_Neighbor_alltoallw_init_c", comm, info, request, [=](Call& call, CollOp& op) {
    return start_neighbor_alltoall(call, op, sendbuf, 0, sendcounts, sdispls, sendtypes, MPI_DATATYPE_NULL, recvbuf, 0,
                                   recvcounts, rdispls, recvtypes, MPI_DATATYPE_NULL);
  });
}
#pragma weak MPI_Neighbor_alltoallw_init_c = PMPI_Neighbor_alltoallw_init_c

}  // extern "C"

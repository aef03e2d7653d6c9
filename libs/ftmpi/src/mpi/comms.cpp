#include "mpi/comms.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <tuple>
#include <utility>

#include <fmt/format.h>

#include "ftmpi/coll/collectives.hpp"
#include "mpi/call.hpp"
#include "mpi/collective.hpp"
#include "mpi/handles.hpp"
#include "mpi/request.hpp"
#include "mpi/runtime.hpp"
#include "mpi/transport.hpp"

namespace ftmpi::mpi {

void set_up_comm(Comm& comm, MPI_Comm handle, std::string name, std::uint32_t context, int rank, int size,
                 std::vector<int> world_ranks) {
  comm.handle = handle;
  comm.name = std::move(name);
  comm.world_ranks = std::move(world_ranks);
  comm.view = engine::CommView{context, rank, size, comm.world_ranks};
  comm.coll_view = engine::CommView{context + 1, rank, size, comm.world_ranks};
  comm.errhandler = MPI_ERRORS_ARE_FATAL;
}

namespace {

// A member's answer in a round it may not propose in (comms.hpp); the maximum, so it wins the MAX.
constexpr std::uint32_t kNotNow = UINT32_MAX;


// One agreement's rounds, in this process (comms.hpp): the first from the eager id space, unordered;
// the later ones from the main space, in priority order by `key`.
class ContextRounds {
 public:
  explicit ContextRounds(AgreementKey key) : rt_(runtime()), key_(key) {}
  // An agreement over `parent` among its collectives: ordered by the tag its first round takes.
  explicit ContextRounds(const Comm& parent)
      : ContextRounds({parent.view.context, AgreementKey::Kind::collective, parent.next_coll_tag}) {}
  ~ContextRounds() {
    if (ordered_) rt_.agreeing.erase(rt_.agreeing.find(key_));
    release();
  }
  ContextRounds(const ContextRounds&) = delete;
  ContextRounds& operator=(const ContextRounds&) = delete;

  // What this process contributes to the next round.
  std::uint32_t propose() {
    if (!ordered_ && !eager_tried_) {
      if (rt_.eager_out) return kNotNow;
      rt_.eager_out = holding_eager_ = true;
      return rt_.next_eager_context;
    }
    // Every member finished the eager round, so all are in this agreement: it may take its place.
    if (!ordered_) {
      rt_.agreeing.insert(key_);
      ordered_ = true;
    }
    if (rt_.proposal_out || *rt_.agreeing.begin() != key_) return kNotNow;
    rt_.proposal_out = holding_main_ = true;
    return rt_.next_context;
  }
  // The round's outcome: the agreed id (the communicator takes `width` ids from it), or nullopt when it
  // must be repeated. A blocking agreement then passes the lock, so that the agreement it waits for
  // can go on; a nonblocking one (`pass` false) runs inside the polling of pending collectives, where
  // another thread must not get in.
  std::optional<std::uint32_t> settle(std::uint32_t agreed, std::uint32_t width, bool pass = true) {
    release();
    eager_tried_ = true;
    if (agreed == kNotNow) {
      if (pass) ThreadLock::pass();
      return std::nullopt;
    }
    // Every member proposed from the same space; ids from kSideContext up are never agreed.
    const bool eager = agreed >= kEagerContexts;
    if (agreed > (eager ? kSideContext : kEagerContexts) - width) fatal(MPI_ERR_INTERN, "out of communicator context ids");
    (eager ? rt_.next_eager_context : rt_.next_context) = agreed + width;
    return agreed;
  }

 private:
  void release() noexcept {
    if (holding_eager_) rt_.eager_out = false;
    if (holding_main_) rt_.proposal_out = false;
    holding_eager_ = holding_main_ = false;
  }

  Runtime& rt_;
  AgreementKey key_;
  bool eager_tried_ = false;  // the first round is over
  bool ordered_ = false;      // in Runtime::agreeing
  bool holding_eager_ = false;
  bool holding_main_ = false;
};

// Blocking exchange of `bytes` each way with rank `other` of `comm`, on its point-to-point context with
// the application's tag (MPI_Intercomm_create's leaders over peer_comm).
bool swap_with(Call& call, const Comm& comm, int other, int tag, const void* out, void* in, std::size_t bytes) {
  EngineTransport transport(&comm.view);
  const base::Result<coll::RequestId> received = transport.irecv(in, bytes, other, tag);
  const base::Result<coll::RequestId> sent = received ? transport.isend(out, bytes, other, tag) : received;
  for (const base::Result<coll::RequestId>* r : {&received, &sent}) {
    if (!*r) {
      call.fail(r->status());
      return false;
    }
  }
  for (const base::Result<coll::RequestId>* r : {&received, &sent}) {
    if (base::Status s = transport.wait(**r); !s) {
      call.fail(s);
      return false;
    }
  }
  return true;
}

// The maximum of every member's `value` over comm, into `value` (blocking).
bool max_over(Call& call, Comm& comm, std::uint32_t& value) {
  const auto max = coll::Reduction::predefined(coll::Op::max, coll::Kind::uint32);
  CollOpPtr op = make_coll_op(comm);
  op->start(coll::iallreduce(op->call(), coll::kInPlace, &value, 1, *max));
  finish_blocking(call, std::move(op));
  return !call.failed();
}

// Broadcast of `bytes` from `root` over comm (blocking).
bool bcast_over(Call& call, Comm& comm, void* data, std::size_t bytes, int root) {
  CollOpPtr op = make_coll_op(comm);
  op->start(coll::ibcast(op->call(), data, bytes, root));
  finish_blocking(call, std::move(op));
  return !call.failed();
}

}  // namespace

std::optional<std::uint32_t> agree_context(Call& call, Comm& parent, std::uint32_t width) {
  ContextRounds rounds(parent);
  for (;;) {
    std::uint32_t proposal = rounds.propose();
    if (!max_over(call, parent, proposal)) return std::nullopt;
    if (const std::optional<std::uint32_t> agreed = rounds.settle(proposal, width)) return agreed;
  }
}

Comm& add_comm(std::vector<int> members, std::uint32_t context) {
  Runtime& rt = runtime();
  const int me = rt.world().rank();
  const int rank = static_cast<int>(std::find(members.begin(), members.end(), me) - members.begin());
  const int size = static_cast<int>(members.size());
  const MPI_Comm handle = make_handle(HandleKind::comm, static_cast<std::uint32_t>(rt.comms.size()));
  Comm& comm = rt.comms.emplace_back();
  rt.comm_index.push_back(&comm);
  set_up_comm(comm, handle, "", context, rank, size, std::move(members));
  return comm;
}

std::optional<SplitAgreement> agree_split(Call& call, Comm& parent, int color, int key, std::uint32_t width) {
  SplitAgreement agreement;
  agreement.entries.resize(static_cast<std::size_t>(parent.size()));
  ContextRounds rounds(parent);
  for (;;) {
    const SplitEntry mine{color, key, rounds.propose()};
    CollOpPtr op = make_coll_op(parent);
    op->start(coll::iallgather(op->call(), &mine, agreement.entries.data(), sizeof(SplitEntry)));
    finish_blocking(call, std::move(op));
    if (call.failed()) return std::nullopt;
    std::uint32_t agreed = 0;
    for (const SplitEntry& e : agreement.entries) agreed = std::max(agreed, e.context);
    if (const std::optional<std::uint32_t> settled = rounds.settle(agreed, width)) {
      agreement.context = *settled;
      return agreement;
    }
  }
}

std::vector<int> SplitAgreement::of_color(const Comm& parent, int color, int first, int count) const {
  std::vector<std::pair<int, int>> order;  // (key, parent rank)
  for (int r = first; r < first + count; ++r) {
    if (entries[static_cast<std::size_t>(r)].color == color) order.emplace_back(entries[static_cast<std::size_t>(r)].key, r);
  }
  std::sort(order.begin(), order.end());
  std::vector<int> members;
  members.reserve(order.size());
  for (const auto& [k, r] : order) members.push_back(parent.world_rank_of(r));
  return members;
}

std::optional<Comm*> split_comm(Call& call, Comm& parent, int color, int key) {
  const std::optional<SplitAgreement> agreed = agree_split(call, parent, color, key, 2);
  if (!agreed) return std::nullopt;
  if (color == MPI_UNDEFINED) return nullptr;
  return &add_comm(agreed->of_color(parent, color, 0, parent.size()), agreed->context);
}

std::optional<Comm*> split_inter(Call& call, Comm& inter, int color, int key) {
  Comm& merged = *inter.inter->merged;
  const std::optional<SplitAgreement> agreed = agree_split(call, merged, color, key, kInterContexts);
  if (!agreed) return std::nullopt;
  if (color == MPI_UNDEFINED) return nullptr;
  const int local_n = inter.local_size();
  const int remote_n = inter.size();
  std::vector<int> local = agreed->of_color(merged, color, inter.inter->low ? 0 : remote_n, local_n);
  std::vector<int> remote = agreed->of_color(merged, color, inter.inter->low ? local_n : 0, remote_n);
  if (remote.empty()) return nullptr;  // nobody of this color on the other side
  const bool low = local.front() < remote.front();  // both sides compare the same two leaders
  return &add_intercomm(std::move(local), std::move(remote), agreed->context, low);
}

Comm& add_intercomm(std::vector<int> local, std::vector<int> remote, std::uint32_t context, bool low) {
  Runtime& rt = runtime();
  const int me = rt.world().rank();
  const int rank = static_cast<int>(std::find(local.begin(), local.end(), me) - local.begin());
  const MPI_Comm handle = make_handle(HandleKind::comm, static_cast<std::uint32_t>(rt.comms.size()));
  Comm& comm = rt.comms.emplace_back();
  rt.comm_index.push_back(&comm);
  auto inter = std::make_unique<InterGroups>();
  inter->both = local;
  inter->both.insert(inter->both.end(), remote.begin(), remote.end());
  inter->low = low;
  std::vector<int> merged = low ? inter->both : remote;
  if (!low) merged.insert(merged.end(), local.begin(), local.end());
  inter->local = std::move(local);
  inter->remote = remote;
  const int remote_size = static_cast<int>(remote.size());
  set_up_comm(comm, handle, "", context, rank, remote_size, std::move(remote));
  comm.coll_view = engine::CommView{context + 1, rank, static_cast<int>(inter->both.size()), inter->both};
  comm.inter = std::move(inter);
  // Its hidden intracommunicator takes the next two ids (kInterContexts).
  comm.inter->merged = &add_comm(std::move(merged), context + 2);
  comm.inter->merged->name = "the merged groups of an intercommunicator";
  return comm;
}

std::optional<Comm*> create_intercomm(Call& call, Comm& local_comm, int local_leader, const Comm* peer_comm,
                                      int remote_leader, int tag) {
  const bool leader = local_comm.rank() == local_leader;
  // 1. The leaders swap their groups (size, priority key, leader's world rank, then the world ranks)
  //    over peer_comm; each tells its group.
  struct Header {
    std::int32_t size;
    std::uint32_t key;
    std::int32_t leader_world;
  };
  const std::vector<int> local = local_comm.members();
  Header mine{static_cast<std::int32_t>(local.size()), local_comm.view.context,
              local_comm.world_rank_of(local_leader)};
  Header theirs{};
  if (leader && !swap_with(call, *peer_comm, remote_leader, tag, &mine, &theirs, sizeof(Header))) return std::nullopt;
  if (!bcast_over(call, local_comm, &theirs, sizeof(Header), local_leader)) return std::nullopt;
  if (theirs.size < 1) {
    call.fail(MPI_ERR_INTERN, "the other group's leader sent an empty group");
    return std::nullopt;
  }
  std::vector<int> remote(static_cast<std::size_t>(theirs.size));
  if (leader) {
    // Different lengths each way: the larger buffer on both sides, so that both receives name one size.
    const std::size_t n = std::max(local.size(), remote.size());
    std::vector<int> out(n, -1);
    std::vector<int> in(n, -1);
    std::copy(local.begin(), local.end(), out.begin());
    if (!swap_with(call, *peer_comm, remote_leader, tag, out.data(), in.data(), n * sizeof(int))) return std::nullopt;
    std::copy(in.begin(), in.begin() + theirs.size, remote.begin());
  }
  if (!bcast_over(call, local_comm, remote.data(), remote.size() * sizeof(int), local_leader)) return std::nullopt;
  for (int w : remote) {
    if (std::find(local.begin(), local.end(), w) != local.end()) {
      call.fail(MPI_ERR_COMM, fmt::format("world rank {} is in both groups (the groups must be disjoint)", w));
      return std::nullopt;
    }
  }
  // 2. The context: rounds over both groups, each an allreduce in the group, the leaders' swap and a
  //    broadcast in the group; keyed by the lower of the two groups' contexts on both sides, so that
  //    the agreement has one priority everywhere (comms.hpp).
  ContextRounds rounds({std::min(mine.key, theirs.key), AgreementKey::Kind::intercomm, tag});
  for (;;) {
    std::uint32_t proposal = rounds.propose();
    if (!max_over(call, local_comm, proposal)) return std::nullopt;
    if (leader) {
      std::uint32_t other = 0;
      if (!swap_with(call, *peer_comm, remote_leader, tag, &proposal, &other, sizeof other)) return std::nullopt;
      proposal = std::max(proposal, other);
    }
    if (!bcast_over(call, local_comm, &proposal, sizeof proposal, local_leader)) return std::nullopt;
    if (const std::optional<std::uint32_t> context = rounds.settle(proposal, kInterContexts)) {
      return &add_intercomm(local, std::move(remote), *context, mine.leader_world < theirs.leader_world);
    }
  }
}

std::optional<Comm*> create_comm(Call& call, Comm& parent, const std::vector<int>& parent_ranks) {
  const std::optional<std::uint32_t> context = agree_context(call, parent);
  if (!context) return std::nullopt;
  if (std::find(parent_ranks.begin(), parent_ranks.end(), parent.rank()) == parent_ranks.end()) return nullptr;
  std::vector<int> members;
  members.reserve(parent_ranks.size());
  for (int r : parent_ranks) members.push_back(parent.world_rank_of(r));
  return &add_comm(std::move(members), *context);
}

namespace {

// MPI_Comm_idup's state, owned by its collective op.
struct IdupAgreement {
  explicit IdupAgreement(const Comm& over) : rounds(std::in_place, over) {}
  std::optional<ContextRounds> rounds;  // reset when settled, so that other agreements go on
  std::uint32_t value = 0;              // the round's proposal, then the maximum
  std::uint32_t context = 0;
  int tag = 0;
};

// Starts one round of an idup: the allreduce(MAX) of the proposals over `over`.
void start_idup_round(CollOp& op, Comm& over, IdupAgreement& agreement) {
  agreement.value = agreement.rounds->propose();
  const auto max = coll::Reduction::predefined(coll::Op::max, coll::Kind::uint32);
  op.start(coll::iallreduce(coll::Call{over.transport, runtime().tuning, agreement.tag}, coll::kInPlace,
                            &agreement.value, 1, *max));
}

}  // namespace

void idup_comm(Call& call, Comm& parent, std::function<void(Comm&)> finish, MPI_Request* request) {
  Comm& over = parent.is_inter() ? *parent.inter->merged : parent;
  const std::uint32_t width = parent.is_inter() ? kInterContexts : 2;
  auto agreement = std::make_shared<IdupAgreement>(over);
  CollOpPtr op = make_coll_op(over);
  // One tag for every round: the program may start other collectives on the parent before this one
  // ends, and each member takes tags in the order the collectives started. Rounds follow each other,
  // so reusing it is safe (messages between two processes with one tag match in order).
  agreement->tag = op->call().tag;
  start_idup_round(*op, over, *agreement);
  op->then([agreement, over = &over, width](CollOp& o) {
    if (const std::optional<std::uint32_t> agreed = agreement->rounds->settle(agreement->value, width, false)) {
      agreement->context = *agreed;
      agreement->rounds.reset();
      return true;
    }
    start_idup_round(o, *over, *agreement);
    return false;
  });
  op->on_done([agreement, parent = &parent, finish = std::move(finish)] {
    Comm& made = parent->is_inter()
                     ? add_intercomm(parent->inter->local, parent->inter->remote, agreement->context, parent->inter->low)
                     : add_comm(parent->members(), agreement->context);
    finish(made);
  });
  finish_nonblocking(call, std::move(op), request);
  if (!call.failed()) (*request)->transfer.comm = &parent;  // its errors go to the parent's handler
}

std::optional<Comm*> create_group_comm(Call& call, Comm& parent, std::vector<int> members, int tag) {
  // The members as a communicator of their own on parent's side context, for the agreement only.
  Comm side;
  const int me = runtime().world().rank();
  const int rank = static_cast<int>(std::find(members.begin(), members.end(), me) - members.begin());
  side.world_ranks = members;
  side.coll_view = engine::CommView{kSideContext | parent.view.context, rank, static_cast<int>(members.size()),
                                    side.world_ranks};
  ContextRounds rounds({parent.view.context, AgreementKey::Kind::group, tag});
  for (;;) {
    std::uint32_t proposal = rounds.propose();
    side.next_coll_tag = tag;
    if (!max_over(call, side, proposal)) return std::nullopt;
    if (const std::optional<std::uint32_t> agreed = rounds.settle(proposal, 2)) {
      return &add_comm(std::move(members), *agreed);
    }
  }
}

std::string label(const Comm& comm) {
  return comm.name.empty() ? fmt::format("communicator {:#x}", comm.handle) : comm.name;
}

}  // namespace ftmpi::mpi

#include "mpi/comms.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <tuple>
#include <utility>

#include <fmt/format.h>

#include "ftmpi/coll/collectives.hpp"
#include "mpi/call.hpp"
#include "mpi/collective.hpp"
#include "mpi/handles.hpp"
#include "mpi/runtime.hpp"

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

// One agreement's rounds, in this process (comms.hpp).
class ContextRounds {
 public:
  explicit ContextRounds(const Comm& parent) : rt_(runtime()), parent_(parent.view.context) {
    rt_.agreeing.insert(parent_);
  }
  ~ContextRounds() {
    rt_.agreeing.erase(rt_.agreeing.find(parent_));
    if (proposing_) rt_.proposal_out = false;
  }
  ContextRounds(const ContextRounds&) = delete;
  ContextRounds& operator=(const ContextRounds&) = delete;

  // What this process contributes to the next round.
  std::uint32_t propose() {
    proposing_ = !rt_.proposal_out && *rt_.agreeing.begin() == parent_;
    if (!proposing_) return kNotNow;
    rt_.proposal_out = true;
    return rt_.next_context;
  }
  // The round's outcome: the agreed id, or nullopt when it must be repeated (then the lock is passed,
  // so that the agreement this one waits for can go on).
  std::optional<std::uint32_t> settle(std::uint32_t agreed) {
    if (proposing_) rt_.proposal_out = false;
    proposing_ = false;
    if (agreed == kNotNow) {
      ThreadLock::pass();
      return std::nullopt;
    }
    rt_.next_context = agreed + 2;
    return agreed;
  }

 private:
  Runtime& rt_;
  std::uint32_t parent_;
  bool proposing_ = false;
};

}  // namespace

std::optional<std::uint32_t> agree_context(Call& call, Comm& parent) {
  ContextRounds rounds(parent);
  const auto max = coll::Reduction::predefined(coll::Op::max, coll::Kind::uint32);
  for (;;) {
    std::uint32_t proposal = rounds.propose();
    CollOpPtr op = make_coll_op(parent);
    op->start(coll::iallreduce(op->call(), coll::kInPlace, &proposal, 1, *max));
    finish_blocking(call, std::move(op));
    if (call.failed()) return std::nullopt;
    if (const std::optional<std::uint32_t> agreed = rounds.settle(proposal)) return agreed;
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

std::optional<Comm*> split_comm(Call& call, Comm& parent, int color, int key) {
  // Every member's (color, key, proposed context), gathered by all.
  struct Entry {
    int color;
    int key;
    std::uint32_t context;
  };
  const auto n = static_cast<std::size_t>(parent.size());
  std::vector<Entry> all(n);
  ContextRounds rounds(parent);
  std::uint32_t context = 0;
  for (;;) {
    const Entry mine{color, key, rounds.propose()};
    CollOpPtr op = make_coll_op(parent);
    op->start(coll::iallgather(op->call(), &mine, all.data(), sizeof(Entry)));
    finish_blocking(call, std::move(op));
    if (call.failed()) return std::nullopt;
    std::uint32_t agreed = 0;
    for (const Entry& e : all) agreed = std::max(agreed, e.context);
    if (const std::optional<std::uint32_t> settled = rounds.settle(agreed)) {
      context = *settled;
      break;
    }
  }
  if (color == MPI_UNDEFINED) return nullptr;
  // Members of my color by (key, parent rank).
  std::vector<std::pair<int, int>> order;
  for (std::size_t r = 0; r < n; ++r) {
    if (all[r].color == color) order.emplace_back(all[r].key, static_cast<int>(r));
  }
  std::sort(order.begin(), order.end());
  std::vector<int> members;
  members.reserve(order.size());
  for (const auto& [k, r] : order) members.push_back(parent.world_rank_of(r));
  return &add_comm(std::move(members), context);
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

bool copy_attributes(Call& call, Comm& from, Comm& to) {
  for (const Attribute& a : from.attributes) {
    if (a.copy == nullptr) continue;  // MPI_COMM_NULL_COPY_FN
    void* copied = nullptr;
    int flag = 0;
    const int rc = a.copy(from.handle, a.keyval, a.extra_state, a.value, &copied, &flag);
    if (rc != MPI_SUCCESS) {
      call.fail(rc >= MPI_SUCCESS && rc <= MPI_ERR_LASTCODE ? rc : MPI_ERR_OTHER,
                fmt::format("the copy callback of attribute key {:#x} returned {}", a.keyval, rc));
      return false;
    }
    if (flag != 0) {
      Attribute b = a;
      b.value = copied;
      to.attributes.push_back(b);
    }
  }
  return true;
}

bool delete_attributes(Call& call, Comm& comm, bool last_set_first) {
  std::vector<Attribute> attributes = std::move(comm.attributes);
  comm.attributes.clear();
  if (last_set_first) std::reverse(attributes.begin(), attributes.end());
  for (const Attribute& a : attributes) {
    if (a.remove == nullptr) continue;  // MPI_COMM_NULL_DELETE_FN
    const int rc = a.remove(comm.handle, a.keyval, a.value, a.extra_state);
    if (rc != MPI_SUCCESS) {
      call.fail(rc >= MPI_SUCCESS && rc <= MPI_ERR_LASTCODE ? rc : MPI_ERR_OTHER,
                fmt::format("the delete callback of attribute key {:#x} returned {}", a.keyval, rc));
      return false;
    }
  }
  return true;
}

std::string label(const Comm& comm) {
  return comm.name.empty() ? fmt::format("communicator {:#x}", comm.handle) : comm.name;
}

}  // namespace ftmpi::mpi

// Making communicators: what MPI_Comm_dup, split, split_type, create, MPI_Cart_create and MPI_Cart_sub
// share.
//
// Context ids are agreed without a global lock-step: each process keeps the lowest id it may propose
// (Runtime::next_context); making a communicator takes the maximum of the parent's members' proposals
// (an allreduce, or part of the split's allgather), and every member of the parent moves its own past
// it. Two communicators that share a pair of processes then never share an id, since both processes
// took part in making each; disjoint communicators (the colors of one split) may share one, which is
// harmless because the engine matches on (context, sender).
//
// Several agreements may be under way in one process at once (threads under MPI_THREAD_MULTIPLE,
// MPI_Comm_idup, MPI_Comm_create_group by groups of one parent), and their proposals must not cross
// (two agreements sharing two processes taking one id). So a process has at most one proposal out at a
// time in each of two id spaces, and an agreement goes in rounds; a round any member could not propose
// in ("not now", the maximum id) is repeated:
// - the first round proposes from the eager space, if this process has no eager proposal out; it
//   waits for nothing else, so it cannot deadlock, and alone (the usual case) it always succeeds;
// - the rounds after it propose from the main space, and only for the agreement of highest priority
//   among those past their first round here (AgreementKey: the parent's context, then the tag the
//   first round took among the parent's collectives, or the program's tag).
//   Being past the first round means every member has entered the agreement, so the agreement of
//   highest priority anywhere gets a proposal from each member once its main proposal is back, and
//   all end (MPICH's argument: an agreement may hold up others only once all its members are in it).
//   Ordering agreements before that could deadlock: a process in a blocking MPI_Comm_create_group
//   would wait for an MPI_Comm_idup its peers have not started yet.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "mpi/api.hpp"
#include "mpi/comm.hpp"

namespace ftmpi::mpi {

class Call;

void set_up_comm(Comm& comm, MPI_Comm handle, std::string name, std::uint32_t context, int rank, int size,
                 std::vector<int> world_ranks);

// Context ids are agreed in two spaces: an agreement's first round proposes from the eager space,
// the rounds after it from the main space (below).
inline constexpr std::uint32_t kEagerContexts = 0x40000000U;

// Context ids from here up are never agreed: communicator c's side context, kSideContext | c's
// context, carries MPI_Comm_create_group's agreement among a group's members under the program's tag,
// apart from the program's messages and from c's collectives (whose tags are not the program's).
inline constexpr std::uint32_t kSideContext = 0x80000000U;

// Context ids an intercommunicator takes: its own two and its merged group's two (comm.hpp).
inline constexpr std::uint32_t kInterContexts = 4;

// Collective over `parent`: the context id of a new communicator, which takes `width` ids from it (2,
// or kInterContexts for an intercommunicator).
std::optional<std::uint32_t> agree_context(Call& call, Comm& parent, std::uint32_t width = 2);

// MPI_Comm_split's exchange over `parent`: every member's color and key, and the agreed context.
struct SplitEntry {
  int color;
  int key;
  std::uint32_t context;
};
struct SplitAgreement {
  std::vector<SplitEntry> entries;  // by parent rank
  std::uint32_t context = 0;
  // The world ranks of parent ranks [first, first + count) of this color, by (key, parent rank).
  std::vector<int> of_color(const Comm& parent, int color, int first, int count) const;
};
std::optional<SplitAgreement> agree_split(Call& call, Comm& parent, int color, int key, std::uint32_t width);

// MPI_Comm_split on an intercommunicator: the members of each color on both sides make a new
// intercommunicator (null where the other side has none of that color); nullopt when the call failed.
std::optional<Comm*> split_inter(Call& call, Comm& inter, int color, int key);

// A new intercommunicator of these groups (world ranks by rank; this process in `local`); `low`: its
// group comes first in the merged group. Takes kInterContexts ids from `context`.
Comm& add_intercomm(std::vector<int> local, std::vector<int> remote, std::uint32_t context, bool low);

// MPI_Intercomm_create: collective over local_comm, the leaders talking over peer_comm (only the
// leader's is used) with `tag`; the new intercommunicator, or nullopt when the call failed.
std::optional<Comm*> create_intercomm(Call& call, Comm& local_comm, int local_leader, const Comm* peer_comm,
                                      int remote_leader, int tag);

// A new communicator of these members (world ranks in rank order), which include this process.
Comm& add_comm(std::vector<int> members, std::uint32_t context);

// Collective over `parent`: MPI_Comm_split. Null (and MPI_COMM_NULL for the caller) for
// MPI_UNDEFINED; nullopt when the call failed.
std::optional<Comm*> split_comm(Call& call, Comm& parent, int color, int key);

// Collective over `parent`: a communicator of the given members of parent (parent ranks, in the new
// rank order), or null for processes not among them; nullopt when the call failed.
std::optional<Comm*> create_comm(Call& call, Comm& parent, const std::vector<int>& parent_ranks);

// MPI_Comm_idup: starts agreeing on a context for a copy of `parent` (of both its groups, for an
// intercommunicator) as a nonblocking collective on it, behind `request`. The rounds share the one
// collective tag taken now, and run whenever a waiting or testing call polls pending collectives; when
// they end, the copy is made and handed to `finish` (which sets the program's handle).
void idup_comm(Call& call, Comm& parent, std::function<void(Comm&)> finish, MPI_Request* request);

// MPI_Comm_create_group: collective over `members` only (world ranks in the new rank order, this
// process among them, all members of intracommunicator `parent`), whose agreement runs on parent's side
// context under `tag`; nullopt when the call failed.
std::optional<Comm*> create_group_comm(Call& call, Comm& parent, std::vector<int> members, int tag);

// The communicator's name for messages: its name, or its handle when it has none.
std::string label(const Comm& comm);

}  // namespace ftmpi::mpi

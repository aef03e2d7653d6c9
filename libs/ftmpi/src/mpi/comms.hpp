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
// Under MPI_THREAD_MULTIPLE two threads may make communicators at once over different parents, and a
// process's proposals could then cross (each agreement taking the other's id). So an agreement goes in
// rounds: a process proposes for one agreement at a time, and only for the one whose parent has the
// lowest context of those it is making, and says "not now" (the maximum id) for the others; a round
// any member said "not now" to is repeated. The agreement over the lowest parent context anywhere is
// never told "not now", so every agreement ends (MPICH's rule for the same problem). A single thread
// always agrees in one round, as before.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "mpi/api.hpp"
#include "mpi/comm.hpp"

namespace ftmpi::mpi {

class Call;

void set_up_comm(Comm& comm, MPI_Comm handle, std::string name, std::uint32_t context, int rank, int size,
                 std::vector<int> world_ranks);

// Collective over `parent`: the context id of a new communicator (it takes the id and the next one).
std::optional<std::uint32_t> agree_context(Call& call, Comm& parent);

// A new communicator of these members (world ranks in rank order), which include this process.
Comm& add_comm(std::vector<int> members, std::uint32_t context);

// Collective over `parent`: MPI_Comm_split. Null (and MPI_COMM_NULL for the caller) for
// MPI_UNDEFINED; nullopt when the call failed.
std::optional<Comm*> split_comm(Call& call, Comm& parent, int color, int key);

// Collective over `parent`: a communicator of the given members of parent (parent ranks, in the new
// rank order), or null for processes not among them; nullopt when the call failed.
std::optional<Comm*> create_comm(Call& call, Comm& parent, const std::vector<int>& parent_ranks);

// Runs the copy callbacks of `from`'s attributes into `to` (MPI_Comm_dup); false when one failed.
bool copy_attributes(Call& call, Comm& from, Comm& to);
// Runs the delete callbacks of every attribute and forgets them (MPI_Comm_free; MPI_Finalize for
// MPI_COMM_SELF, the last set first); false when one failed.
bool delete_attributes(Call& call, Comm& comm, bool last_set_first = false);

// The communicator's name for messages: its name, or its handle when it has none.
std::string label(const Comm& comm);

}  // namespace ftmpi::mpi

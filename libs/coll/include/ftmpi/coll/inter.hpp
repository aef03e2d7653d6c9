// Collectives between two disjoint groups (MPI's intercommunicators), as schedules over one Transport
// that numbers both groups: this process's own group first (ranks 0 .. local-1, the transport's
// rank() among them), then the other group (local .. local+remote-1). Each side numbers its own group
// first, so "remote rank j" is transport rank local + j on either side.
//
// Every collective moves data from one group to the other (MPI-3.1 section 5.2.2): a rooted one goes
// from the root to the other group or the other way, an all-to-all one both ways, and a reduction
// combines one group's data for the other group. Within a group the group's rank 0 (the leader)
// gathers and spreads; across, the leaders or every pair exchange, all posted at once.
//
// Roots: in the root's group the root passes kInterRoot and the others kInterIdle; in the other group
// every process passes the root's rank in the root's group.
//
// Sizes as in collectives.hpp: bytes for data, elements for reductions. No kInPlace: MPI has no
// MPI_IN_PLACE on intercommunicators.
#pragma once

#include <cstddef>

#include "ftmpi/base/status.hpp"
#include "ftmpi/coll/collectives.hpp"

namespace ftmpi::coll {

struct Groups {
  int local = 0;   // this process's group
  int remote = 0;  // the other group
};

inline constexpr int kInterRoot = -1;  // MPI_ROOT
inline constexpr int kInterIdle = -2;  // MPI_PROC_NULL

base::Result<Schedule> inter_ibarrier(const Call& call, Groups groups);
// The root's `bytes` reach every process of the other group.
base::Result<Schedule> inter_ibcast(const Call& call, Groups groups, void* buffer, std::size_t bytes, int root);
// The other group's `send` vectors combined (remote rank order) land in the root's `recv`.
base::Result<Schedule> inter_ireduce(const Call& call, Groups groups, const void* send, void* recv, std::size_t count,
                                     const Reduction& reduction, int root);
// Every process receives the combination of the other group's vectors.
base::Result<Schedule> inter_iallreduce(const Call& call, Groups groups, const void* send, void* recv,
                                        std::size_t count, const Reduction& reduction);
// The root receives every remote process's block: recv_bytes[j] at recv_displs[j] (one per remote rank);
// the others send `send_bytes`.
base::Result<Schedule> inter_igatherv(const Call& call, Groups groups, const void* send, std::size_t send_bytes,
                                      void* recv, Counts recv_bytes, Displs recv_displs, int root);
// The root sends block j to remote rank j; the others receive `recv_bytes`.
base::Result<Schedule> inter_iscatterv(const Call& call, Groups groups, const void* send, Counts send_bytes,
                                       Displs send_displs, void* recv, std::size_t recv_bytes, int root);
// Every process sends its block to every remote process and receives one from each (per remote rank).
base::Result<Schedule> inter_iallgatherv(const Call& call, Groups groups, const void* send, std::size_t send_bytes,
                                         void* recv, Counts recv_bytes, Displs recv_displs);
// Block j of send goes to remote rank j; recv gets one block from each remote rank.
base::Result<Schedule> inter_ialltoallv(const Call& call, Groups groups, const void* send, Counts send_bytes,
                                        Displs send_displs, void* recv, Counts recv_bytes, Displs recv_displs);
// The other group's vectors (sum of `counts` elements, the same total in both groups) combined and
// scattered over this group: counts[i] elements to local rank i, into its `recv`.
base::Result<Schedule> inter_ireduce_scatter(const Call& call, Groups groups, const void* send, void* recv,
                                             Counts counts, const Reduction& reduction);

}  // namespace ftmpi::coll

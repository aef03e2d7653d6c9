// Blocking collectives through shared memory among the ranks of one host: MPI_Bcast through libs/coll's
// shared-memory broadcast (ftmpi/coll/shm_bcast.hpp; one region per communicator and host, combined
// with a point-to-point tree among one leader per host when the communicator spans hosts), and
// MPI_Barrier and small MPI_Allreduce through its sync region (ftmpi/coll/shm_sync.hpp) when every
// member of the communicator is on this host.
//
// Set up lazily, collectively, at the first call on a communicator that takes one of them: the members
// allgather a hash of their host identity (the engine's notion of "same host", as MPI_Comm_split_type
// uses); on each host with two or more members the lowest creates a POSIX shm segment named
// /ftmpi-<job id>-bc-<context>-<its world rank> (ftrun removes every ftmpi-<job id>-* name a crash
// leaves) holding both regions, sizes and formats it, and tells the others on the communicator's hidden
// collective context; they map it and answer; then the creator unlinks the name, so the kernel frees
// the memory with the last mapping. A host where any step fails runs these collectives point-to-point
// instead, which its other members learn in the same exchange (other hosts need not know). The sync
// region is not used when engine.reliability=force (its operands carry no checksum).
#pragma once

#include <cstddef>

#include "ftmpi/base/status.hpp"
#include "ftmpi/coll/reduction.hpp"
#include "mpi/comm.hpp"

namespace ftmpi::mpi {

// Whether a blocking MPI_Bcast of `bytes` on `comm` goes through here (coll::use_shm_bcast); the same
// on every rank.
bool takes_shm_bcast(const Comm& comm, std::size_t bytes) noexcept;
// Runs a blocking broadcast of packed bytes (setting up on first use); `tag` is the call's collective tag.
base::Status shm_bcast(Comm& comm, void* data, std::size_t bytes, int root, int tag);

// Whether a blocking MPI_Barrier, or MPI_Allreduce of `bytes` (count x element size), on `comm` comes
// here (coll::use_shm_barrier, use_shm_allreduce): the same on every rank. It then runs through the sync
// region if the communicator has one, else point-to-point with the call's collective tag `tag`.
bool takes_shm_barrier(const Comm& comm) noexcept;
base::Status shm_barrier(Comm& comm, int tag);
bool takes_shm_allreduce(const Comm& comm, std::size_t bytes) noexcept;
// `send` may be coll::kInPlace.
base::Status shm_allreduce(Comm& comm, const void* send, void* recv, std::size_t count,
                           const coll::Reduction& reduction, int tag);

// The progress hook (runtime.hpp calls it while Runtime::shm_bcast_busy): answers resend requests of
// broadcasts this rank wrote.
void service_shm_bcasts();
// Waits until no rank needs a resend from this rank, then unmaps the communicator's regions
// (MPI_Comm_free), or every region (MPI_Finalize, before the engine stops).
void release_shm_colls(const Comm& comm);
void release_all_shm_colls();

}  // namespace ftmpi::mpi

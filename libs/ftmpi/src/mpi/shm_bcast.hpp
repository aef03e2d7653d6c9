// MPI_Bcast through libs/coll's shared-memory broadcast (ftmpi/coll/shm_bcast.hpp): one region per
// communicator and host, combined with a point-to-point tree among one leader per host when the
// communicator spans hosts (coll::hierarchical_bcast).
//
// Set up lazily, collectively, at the first broadcast on a communicator that takes it: the members
// allgather a hash of their host identity (the engine's notion of "same host", as MPI_Comm_split_type
// uses); on each host with two or more members the lowest creates a POSIX shm segment named
// /ftmpi-<job id>-bc-<context>-<its world rank> (ftrun removes every ftmpi-<job id>-* name a crash
// leaves), sizes and formats it, and tells the others on the communicator's hidden collective context;
// they map it and answer; then the creator unlinks the name, so the kernel frees the memory with the
// last mapping. A host where any step fails broadcasts point-to-point among its members instead, which
// its other members learn in the same exchange (other hosts need not know).
#pragma once

#include <cstddef>

#include "ftmpi/base/status.hpp"
#include "mpi/comm.hpp"

namespace ftmpi::mpi {

// Whether a blocking MPI_Bcast of `bytes` on `comm` goes through here (coll::use_shm_bcast); the same
// on every rank.
bool takes_shm_bcast(const Comm& comm, std::size_t bytes) noexcept;
// Runs a blocking broadcast of packed bytes (setting up on first use); `tag` is the call's collective tag.
base::Status shm_bcast(Comm& comm, void* data, std::size_t bytes, int root, int tag);

// The progress hook (runtime.hpp calls it while Runtime::shm_bcast_busy): answers resend requests of
// broadcasts this rank wrote.
void service_shm_bcasts();
// Waits until no rank needs a resend from this rank, then unmaps the communicator's region
// (MPI_Comm_free), or every region (MPI_Finalize, before the engine stops).
void release_shm_bcast(const Comm& comm);
void release_all_shm_bcasts();

}  // namespace ftmpi::mpi

// Starting and completing point-to-point requests: what the send, receive, wait and test calls share.
#pragma once

#include <string>

#include "mpi/api.hpp"
#include "mpi/call.hpp"
#include "mpi/comm.hpp"
#include "mpi/request.hpp"

namespace ftmpi::mpi {

// MPI's wildcards as the engine spells them.
int engine_source(int source) noexcept;
int engine_tag(int tag) noexcept;

// Begins the operation of an inactive request. A send to or a receive from MPI_PROC_NULL, and a
// buffered send (once copied), are complete at once. False, with the error recorded in `call` and the
// request left inactive, when a buffered send finds no room.
bool start(Call& call, Request& request);
// True once an active request's operation is complete: its outcome is recorded and the engine's
// request given back. True for an inactive request too (nothing to wait for). Makes no progress itself.
bool refresh(Request& request);
// A handle that the completion calls wait for: not null, and active.
inline bool is_pending(MPI_Request handle) noexcept { return handle != MPI_REQUEST_NULL && handle->active; }
// Takes the outcome of a request that refresh() reported complete: a one-shot request is freed and its
// handle set to MPI_REQUEST_NULL, a persistent one becomes inactive. A null or inactive handle gives
// the empty status's outcome.
Outcome collect(MPI_Request& handle) noexcept;
// Fills MPI_Status (unless MPI_STATUS_IGNORE). MPI_ERROR is left alone: only the multi-completion calls
// set it.
void write_status(MPI_Status* status, const Outcome& outcome) noexcept;
// Why an operation failed, for the error line: "message from rank 1 with tag 3 is longer than ...".
std::string describe_failure(const Outcome& outcome);
// What the application is told when an operation failed because a peer became unreachable.
std::string lost_peer_reason(int world_rank);
// Records a completed operation's error in the call, on the operation's communicator.
void fail_with(Call& call, Comm& comm, const Outcome& outcome);
// The blocking calls: one operation, started and waited for.
void run(Call& call, Mode mode, const Transfer& transfer, MPI_Status* status);

}  // namespace ftmpi::mpi

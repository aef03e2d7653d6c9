// Starting and completing point-to-point requests: what the send, receive, wait and test calls share.
#pragma once

#include <string>

#include "mpi/api.hpp"
#include "mpi/call.hpp"
#include "mpi/comm.hpp"
#include "mpi/request.hpp"
#include "mpi/runtime.hpp"

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
// What an MPI send mode asks of the engine.
inline engine::SendMode engine_mode(Mode mode) noexcept {
  switch (mode) {
    case Mode::synchronous: return engine::SendMode::synchronous;
    case Mode::ready: return engine::SendMode::ready;
    default: return engine::SendMode::standard;
  }
}

// The blocking calls' common case, a dense message to or from a real rank, needs no MPI request: it
// talks to the engine directly (what a zero-byte ping-pong pays for is mostly this path).
inline bool runs_direct(Mode mode, const Transfer& transfer) noexcept {
  return !transfer.layout && transfer.peer != MPI_PROC_NULL && mode != Mode::buffered && transfer.matched == nullptr;
}
// The engine's operation started and waited for, without an MPI request (runs_direct), for a send
// only once it did not go eagerly.
void wait_direct(Call& call, Mode mode, const Transfer& transfer, MPI_Status* status);
// The same through an MPI request: every other case.
void run_request(Call& call, Mode mode, const Transfer& transfer, MPI_Status* status);
// The blocking calls: one operation, started and waited for. Inline: an eager send is over without
// another call of the MPI layer.
inline void run(Call& call, Mode mode, const Transfer& transfer, MPI_Status* status) {
  if (!runs_direct(mode, transfer)) [[unlikely]] {
    run_request(call, mode, transfer, status);
    return;
  }
  if (mode != Mode::receive && engine().send_eager(transfer.comm->view, transfer.buf, transfer.bytes, transfer.peer,
                                                   transfer.tag, engine_mode(mode))) {
    return;
  }
  wait_direct(call, mode, transfer, status);
}

}  // namespace ftmpi::mpi

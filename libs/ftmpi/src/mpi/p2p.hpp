// Starting and completing point-to-point requests: what the send, receive, wait and test calls share.
#pragma once

#include <string>

#include "mpi/api.hpp"
#include "mpi/call.hpp"
#include "mpi/comm.hpp"
#include "mpi/errors.hpp"
#include "mpi/request.hpp"
#include "mpi/runtime.hpp"

namespace ftmpi::mpi {

// MPI's wildcards as the engine spells them.
inline int engine_source(int source) noexcept { return source == MPI_ANY_SOURCE ? engine::kAnySource : source; }
inline int engine_tag(int tag) noexcept { return tag == MPI_ANY_TAG ? engine::kAnyTag : tag; }

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
// only once it did not go eagerly; for a receive only under MPI_THREAD_MULTIPLE (else receive_direct).
void wait_direct(Call& call, Mode mode, const Transfer& transfer, MPI_Status* status);
// What write_status(status, outcome_of(mode, c)) writes for a completion without an error (p2p.cpp),
// without the Outcome: building and destroying one (when its reason was a std::string) was a tenth of a
// blocking receive's own cost. Keep the two in step.
inline void write_success_status(MPI_Status* status, Mode mode, const engine::Completion& c) noexcept {
  if (status == MPI_STATUS_IGNORE) return;
  const bool received = mode == Mode::receive;
  status->MPI_SOURCE = received ? c.source : MPI_ANY_SOURCE;
  status->MPI_TAG = received ? c.tag : MPI_ANY_TAG;
  status->ftmpi_cancelled = c.cancelled ? 1 : 0;
  status->ftmpi_bytes = received ? static_cast<MPI_Count>(c.bytes) : 0;
}
// A direct operation's completion with an error: its status, and the failure recorded in the call.
[[gnu::cold]] void finish_direct_failed(Call& call, Mode mode, const Transfer& transfer, const engine::Completion& c,
                                        MPI_Status* status);
inline void finish_direct(Call& call, Mode mode, const Transfer& transfer, const engine::Completion& c,
                          MPI_Status* status) {
  if (error_class_of(c) == MPI_SUCCESS) [[likely]] {
    write_success_status(status, mode, c);
  } else {
    finish_direct_failed(call, mode, transfer, c, status);
  }
}
// What the engine runs between the rounds of a blocking receive: the MPI layer's pending work, when
// there is any as it begins (work_pending).
void poll_pending_now();
// A blocking receive without an MPI request: the engine's in one call (Engine::receive). Inline into
// MPI_Recv.
inline void receive_direct(Call& call, const Transfer& transfer, MPI_Status* status) {
  if (ThreadLock::enabled()) [[unlikely]] {  // its waits pass the thread lock between rounds
    wait_direct(call, Mode::receive, transfer, status);
    return;
  }
  Runtime& rt = call.rt();
  const engine::Completion c =
      rt.engine->receive(transfer.comm->view, transfer.buf, transfer.bytes, engine_source(transfer.peer),
                         engine_tag(transfer.tag), work_pending(rt) ? &poll_pending_now : nullptr);
  finish_direct(call, Mode::receive, transfer, c, status);
}
// The same through an MPI request: every other case.
void run_request(Call& call, Mode mode, const Transfer& transfer, MPI_Status* status);
// The blocking calls: one operation, started and waited for. Inline: an eager send is over without
// another call of the MPI layer.
inline void run(Call& call, Mode mode, const Transfer& transfer, MPI_Status* status) {
  if (!runs_direct(mode, transfer)) [[unlikely]] {
    run_request(call, mode, transfer, status);
    return;
  }
  if (mode == Mode::receive) {
    receive_direct(call, transfer, status);
    return;
  }
  if (call.rt().engine->send_eager(transfer.comm->view, transfer.buf, transfer.bytes, transfer.peer, transfer.tag,
                          engine_mode(mode))) {
    return;
  }
  wait_direct(call, mode, transfer, status);
}

}  // namespace ftmpi::mpi

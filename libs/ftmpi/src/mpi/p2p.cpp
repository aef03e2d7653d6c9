#include "mpi/p2p.hpp"

#include <algorithm>
#include <vector>

#include <fmt/format.h>

#include "engine/request.hpp"
#include "mpi/collective.hpp"
#include "mpi/errors.hpp"
#include "mpi/runtime.hpp"

namespace ftmpi::mpi {
namespace {

// What an engine operation that completed as `c` reports through MPI_Status (write_success_status,
// p2p.hpp, writes the same for a completion without an error: keep the two in step).
Outcome outcome_of(Mode mode, const engine::Completion& c) noexcept {
  Outcome outcome{.cancelled = c.cancelled, .error = error_class_of(c)};
  if (mode == Mode::receive) {
    outcome.source = c.source;
    outcome.tag = c.tag;
    outcome.bytes = c.bytes;
  }
  if (c.lost_peer >= 0) [[unlikely]] outcome.reason = Reason(lost_peer_reason(c.lost_peer), Reason::Kept::always);
  return outcome;
}

}  // namespace

std::string lost_peer_reason(int world_rank) {
  return fmt::format("rank {} of MPI_COMM_WORLD is unreachable: {}", world_rank, engine().lost_reason(world_rank));
}


bool start(Call& call, Request& request) {
  const Transfer& t = request.transfer;
  request.done = false;
  request.outcome = {};
  if (request.mode == Mode::collective) return restart_collective(call, request);
  if (t.peer == MPI_PROC_NULL) {
    request.outcome.source = MPI_PROC_NULL;
    request.done = true;
  } else if (request.mode == Mode::buffered) {
    BsendBuffer& buffer = t.comm->bsend != nullptr ? *t.comm->bsend : runtime().bsend;
    if (t.layout) {
      // The attached buffer takes the packed message.
      std::vector<std::byte> packed(t.bytes);
      t.layout->pack(t.buf, t.count, packed.data());
      Transfer flat = t;
      flat.buf = packed.data();
      flat.layout = nullptr;
      if (!buffer.send(call, engine(), flat)) return false;
    } else if (!buffer.send(call, engine(), t)) {
      return false;
    }
    request.done = true;
  } else if (t.layout) {
    // The engine gathers the fragments from the pieces and scatters them into them: no staging copy.
    auto view = t.layout->view(t.count);
    if (!view) {
      call.fail(MPI_ERR_TYPE, fmt::format("{} items of this datatype: {}", t.count, view.status().message()));
      return false;
    }
    request.pieces = std::make_unique<PiecesInFlight>(PiecesInFlight{t.layout, *view});
    const frag::PiecesLayout& pieces = request.pieces->view;
    if (request.mode == Mode::receive) {
      request.op = t.matched != nullptr
                       ? engine().mrecv_pieces(t.comm->view, t.matched, t.buf, pieces)
                       : engine().irecv_pieces(t.comm->view, t.buf, pieces, engine_source(t.peer), engine_tag(t.tag));
    } else {
      request.op = engine().isend_pieces(t.comm->view, t.buf, pieces, t.peer, t.tag, engine_mode(request.mode));
    }
  } else if (request.mode == Mode::receive) {
    request.op = t.matched != nullptr ? engine().mrecv(t.comm->view, t.matched, t.buf, t.bytes)
                                      : engine().irecv(t.comm->view, t.buf, t.bytes, engine_source(t.peer), engine_tag(t.tag));
  } else if (request.mode != Mode::synchronous &&
             engine().send_eager(t.comm->view, t.buf, t.bytes, t.peer, t.tag, engine_mode(request.mode))) {
    // Handed to the paths whole (as isend would, completing its request at once): the buffer is free,
    // and no engine request is made, waited for and released.
    request.done = true;
  } else {
    request.op = engine().isend(t.comm->view, t.buf, t.bytes, t.peer, t.tag, engine_mode(request.mode));
  }
  request.active = true;
  return true;
}

namespace {

// An MPI_Isendrecv: complete when both halves are; the receive's status, the first error of the two.
bool refresh_exchange(Request& request) {
  Request* sending = request.companion;
  request.companion = nullptr;  // the receive alone
  const bool received = refresh(request);
  request.companion = sending;
  if (!received || !refresh(*sending)) return false;
  const Outcome& sent = sending->outcome;
  if (request.outcome.error == MPI_SUCCESS && sent.error != MPI_SUCCESS) {
    request.outcome.error = sent.error;
    request.outcome.reason = describe_failure(sent);
  }
  runtime().requests.release(*sending);
  request.companion = nullptr;
  request.staged.reset();
  return true;
}

}  // namespace

bool refresh(Request& request) {
  if (request.companion != nullptr && request.active) return refresh_exchange(request);
  if (request.done || !request.active) return true;
  if (request.mode == Mode::generalized) {
    // The program's query function says what the status holds (MPI-3.1 section 12.2).
    Generalized& g = *request.general;
    if (!g.complete && g.poll) g.complete = g.poll();
    if (!g.complete) return false;
    MPI_Status status{};
    status.MPI_SOURCE = MPI_ANY_SOURCE;
    status.MPI_TAG = MPI_ANY_TAG;
    const int rc = g.query(g.extra_state, &status);
    request.done = true;
    request.outcome = {.source = status.MPI_SOURCE, .tag = status.MPI_TAG,
                       .bytes = static_cast<std::size_t>(status.ftmpi_bytes), .cancelled = status.ftmpi_cancelled != 0,
                       .error = rc != MPI_SUCCESS ? rc : status.MPI_ERROR};
    if (rc != MPI_SUCCESS) request.outcome.reason = fmt::format("the generalized request's query function returned {}", code_and_text(rc));
    return true;
  }
  if (request.mode == Mode::collective) {
    CollOp& op = *request.collective;
    if (!op.test()) return false;
    request.done = true;
    request.outcome = {.error = op.error(), .reason = op.reason()};
    return true;
  }
  // Not complete: said by the flag alone (no virtual call, no Completion): a multi-completion call asks
  // this of every request it waits for at every round.
  if (!engine::request_complete(request.op)) return false;
  engine::Completion c;
  if (!engine().take_completion(request.op, &c)) return false;
  request.op = nullptr;
  request.done = true;
  request.outcome = outcome_of(request.mode, c);
  request.pieces.reset();
  return true;
}

Outcome collect(MPI_Request& handle) noexcept {
  if (!is_pending(handle)) return {};
  Request& request = *handle;
  Outcome outcome = std::move(request.outcome);  // collected: nothing reads it again before a restart
  if (request.mode == Mode::generalized) {
    // Collected: the program's free function runs now, its error the call's unless one came first.
    const int rc = request.general->free(request.general->extra_state);
    if (rc != MPI_SUCCESS && outcome.error == MPI_SUCCESS) {
      outcome.error = rc;
      outcome.reason = fmt::format("the generalized request's free function returned {}", code_and_text(rc));
    }
  }
  if (request.persistent) {
    request.collective.reset();  // a persistent collective's run, over
    request.active = false;
    request.done = false;
  } else {
    runtime().requests.release(request);
    handle = MPI_REQUEST_NULL;
  }
  return outcome;
}

void write_status(MPI_Status* status, const Outcome& outcome) noexcept {
  if (status == MPI_STATUS_IGNORE) return;
  status->MPI_SOURCE = outcome.source;
  status->MPI_TAG = outcome.tag;
  status->ftmpi_cancelled = outcome.cancelled ? 1 : 0;
  status->ftmpi_bytes = static_cast<MPI_Count>(outcome.bytes);
}

std::string describe_failure(const Outcome& outcome) {
  if (!outcome.reason.empty()) return outcome.reason.str();
  if (outcome.error == MPI_ERR_TRUNCATE) {
    return fmt::format("message from rank {} with tag {} is longer than the {}-byte receive buffer", outcome.source,
                       outcome.tag, outcome.bytes);
  }
  return std::string(error_class_text(outcome.error));
}

void fail_with(Call& call, Comm& comm, const Outcome& outcome) {
  call.raise_on(comm);
  call.fail(outcome.error, describe_failure(outcome));
}

void finish_direct_failed(Call& call, Mode mode, const Transfer& transfer, const engine::Completion& c,
                          MPI_Status* status) {
  const Outcome outcome = outcome_of(mode, c);
  write_status(status, outcome);
  fail_with(call, *transfer.comm, outcome);
}

void poll_pending_now() { poll_pending(); }

void wait_direct(Call& call, Mode mode, const Transfer& transfer, MPI_Status* status) {
  engine::Engine& e = engine();
  // A blocking send that did not go eagerly will wait: said before its RTS leaves, so that a receiver
  // matching it at once splits a large copy with us (Engine::waiting).
  const engine::WaitingScope announce(e, mode != Mode::receive);
  engine::Request* op =
      mode == Mode::receive
          ? e.irecv(transfer.comm->view, transfer.buf, transfer.bytes, engine_source(transfer.peer),
                    engine_tag(transfer.tag))
          : e.isend(transfer.comm->view, transfer.buf, transfer.bytes, transfer.peer, transfer.tag, engine_mode(mode));
  // No test before the wait: its first look (after the MPI layer's pending work) comes before any round.
  progress_until([&] { return engine::request_complete(op); });
  const engine::Completion c = op->completion;
  e.release(op);
  finish_direct(call, mode, transfer, c, status);
}

void run_request(Call& call, Mode mode, const Transfer& transfer, MPI_Status* status) {
  RequestPool& pool = runtime().requests;
  Request& request = pool.acquire(mode, transfer, false);
  if (!start(call, request)) {
    pool.release(request);
    return;
  }
  progress_until([&] { return refresh(request); });
  MPI_Request handle = &request;
  const Outcome outcome = collect(handle);
  write_status(status, outcome);
  if (outcome.error != MPI_SUCCESS) fail_with(call, *transfer.comm, outcome);
}

}  // namespace ftmpi::mpi

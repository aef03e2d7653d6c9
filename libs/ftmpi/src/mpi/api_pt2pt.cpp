// Point-to-point: blocking, nonblocking and persistent sends and receives, probes, the bsend buffer.
#include <cstddef>
#include <cstring>
#include <functional>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "mpi/api.hpp"
#include "mpi/call.hpp"
#include "mpi/p2p.hpp"
#include "mpi/runtime.hpp"

namespace ftmpi::mpi {
namespace {

// One per mode: the mode's tests fold away (as an argument, a zero-byte MPI_Send cost 17 instructions more).
template <Mode mode>
int blocking_send(std::string_view name, const void* buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag,
                  MPI_Comm comm) noexcept {
  return api_call_as(mode == Mode::buffered ? Access::exclusive : Access::shared, name, [&](Call& call) {
    Transfer t;
    if (check_send(call, buf, count, datatype, dest, tag, comm, t)) run(call, mode, t, MPI_STATUS_IGNORE);
  });
}

// Creates the request of a nonblocking call (started) or of a persistent one (inactive until MPI_Start),
// its arguments checked by `check(transfer)` straight into it (RequestPool::acquire says why).
// The arguments are checked before the request handle, as they always were.
template <typename Check>
void post(Call& call, Mode mode, bool persistent, MPI_Request* request, Check&& check) {
  RequestPool& pool = runtime().requests;
  Request& r = pool.acquire(mode, persistent);
  if (!check(r.transfer) || !check_arg(call, request, "request") || (!persistent && !start(call, r))) {
    pool.release(r);
    return;
  }
  *request = &r;
}

int post_send(std::string_view name, Mode mode, bool persistent, const void* buf, MPI_Count count,
              MPI_Datatype datatype, int dest, int tag, MPI_Comm comm, MPI_Request* request) noexcept {
  const Access access = persistent || mode == Mode::buffered ? Access::exclusive : Access::shared;
  return api_call_as(access, name, [&](Call& call) {
    post(call, mode, persistent, request,
         [&](Transfer& t) { return check_send(call, buf, count, datatype, dest, tag, comm, t); });
  });
}

int post_recv(std::string_view name, bool persistent, void* buf, MPI_Count count, MPI_Datatype datatype, int source,
              int tag, MPI_Comm comm, MPI_Request* request) noexcept {
  return api_call_as(persistent ? Access::exclusive : Access::shared, name, [&](Call& call) {
    post(call, Mode::receive, persistent, request,
         [&](Transfer& t) { return check_recv(call, buf, count, datatype, source, tag, comm, t); });
  });
}

// MPI_Sendrecv: the receive is posted first, so that exchanging with oneself cannot deadlock.
void exchange(Call& call, const Transfer& send, const Transfer& recv, MPI_Status* status) {
  RequestPool& pool = runtime().requests;
  // Neither is a buffered send, so starting cannot fail.
  Request& receiving = pool.acquire(Mode::receive, recv, false);
  start(call, receiving);
  Request& sending = pool.acquire(Mode::standard, send, false);
  start(call, sending);
  progress_until([&] { return refresh(receiving) && refresh(sending); });
  MPI_Request received = &receiving;
  MPI_Request sent = &sending;
  const Outcome sent_outcome = collect(sent);
  const Outcome received_outcome = collect(received);
  write_status(status, received_outcome);
  if (sent_outcome.error != MPI_SUCCESS) fail_with(call, *send.comm, sent_outcome);
  if (received_outcome.error != MPI_SUCCESS) fail_with(call, *recv.comm, received_outcome);
}

Outcome probed(const engine::Completion& found) noexcept {
  return {.source = found.source, .tag = found.tag, .bytes = found.bytes};
}

// MPI_Mprobe and MPI_Improbe: the message taken, as a handle (MPI_MESSAGE_NO_PROC for MPI_PROC_NULL).
MPI_Message keep_message(Comm& comm, engine::MatchedMessage* matched, const engine::Completion& found) {
  return runtime().messages.add(Message{.matched = matched, .comm = &comm, .source = found.source, .tag = found.tag});
}

// The receive of a taken message: the Transfer MPI_Mrecv and MPI_Imrecv run; the handle is spent
// (MPI_MESSAGE_NULL). nullopt when the arguments are wrong (nothing spent then).
std::optional<Transfer> check_mrecv(Call& call, void* buf, MPI_Count count, MPI_Datatype datatype,
                                    MPI_Message* message) {
  if (!check_arg(call, message, "message")) return std::nullopt;
  const bool no_proc = *message == MPI_MESSAGE_NO_PROC;
  Message* m = no_proc ? nullptr : runtime().messages.find(*message);
  if (!no_proc && m == nullptr) {
    call.fail(MPI_ERR_REQUEST, *message == MPI_MESSAGE_NULL ? std::string("MPI_MESSAGE_NULL is not a message to receive")
                                                            : fmt::format("invalid message {:#x}", *message));
    return std::nullopt;
  }
  std::optional<Transfer> t =
      check_recv(call, buf, count, datatype, no_proc ? MPI_PROC_NULL : m->source, no_proc ? MPI_ANY_TAG : m->tag,
                 no_proc ? MPI_COMM_SELF : m->comm->handle);
  if (!t) return std::nullopt;
  if (!no_proc) {
    t->matched = m->matched;
    runtime().messages.remove(*message);
  }
  *message = MPI_MESSAGE_NULL;
  return t;
}

bool check_startable(Call& call, const Request& request) {
  if (!request.persistent) {
    call.fail(MPI_ERR_REQUEST, "not a persistent request");
    return false;
  }
  if (request.active) {
    call.fail(MPI_ERR_REQUEST, "the persistent request is active already");
    return false;
  }
  return true;
}

int recv_call(std::string_view name, void* buf, MPI_Count count, MPI_Datatype datatype, int source, int tag,
              MPI_Comm comm, MPI_Status* status) noexcept {
  return api_call_as(Access::shared, name, [&](Call& call) {
    Transfer t;
    if (check_recv(call, buf, count, datatype, source, tag, comm, t) && check_arg(call, status, "status")) {
      run(call, Mode::receive, t, status);
    }
  });
}

int sendrecv_call(std::string_view name, const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, int dest,
                  int sendtag, void* recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, int source, int recvtag,
                  MPI_Comm comm, MPI_Status* status) noexcept {
  return api_call_as(Access::shared, name, [&](Call& call) {
    auto send = check_send(call, sendbuf, sendcount, sendtype, dest, sendtag, comm);
    if (!send) return;
    auto recv = check_recv(call, recvbuf, recvcount, recvtype, source, recvtag, comm);
    if (recv && check_arg(call, status, "status")) exchange(call, *send, *recv, status);
  });
}

int sendrecv_replace_call(std::string_view name, void* buf, MPI_Count count, MPI_Datatype datatype, int dest,
                          int sendtag, int source, int recvtag, MPI_Comm comm, MPI_Status* status) noexcept {
  return api_call_as(Access::shared, name, [&](Call& call) {
    auto send = check_send(call, buf, count, datatype, dest, sendtag, comm);
    if (!send) return;
    auto recv = check_recv(call, buf, count, datatype, source, recvtag, comm);
    if (!recv || !check_arg(call, status, "status")) return;
    // The outgoing message must survive the incoming one landing on it: it leaves from a packed copy.
    std::vector<std::byte> outgoing(send->bytes);
    if (send->layout) {
      send->layout->pack(buf, send->count, outgoing.data());
      send->layout = nullptr;
    } else if (send->bytes != 0) {
      std::memcpy(outgoing.data(), buf, send->bytes);
    }
    send->buf = outgoing.data();
    exchange(call, *send, *recv, status);
  });
}

// MPI_Isendrecv: one request, the receive's, that owns the send (request.hpp); both are started now,
// the receive first as in MPI_Sendrecv.
void post_exchange(Call& call, const Transfer& send, const Transfer& recv, std::unique_ptr<std::vector<std::byte>> staged,
                   MPI_Request* request) {
  RequestPool& pool = runtime().requests;
  // Neither is a buffered send, so starting cannot fail.
  Request& receiving = pool.acquire(Mode::receive, recv, false);
  start(call, receiving);
  Request& sending = pool.acquire(Mode::standard, send, false);
  start(call, sending);
  receiving.companion = &sending;
  receiving.staged = std::move(staged);
  *request = &receiving;
}

int isendrecv_call(std::string_view name, const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, int dest,
                   int sendtag, void* recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, int source, int recvtag,
                   MPI_Comm comm, MPI_Request* request) noexcept {
  return api_call(name, [&](Call& call) {
    auto send = check_send(call, sendbuf, sendcount, sendtype, dest, sendtag, comm);
    if (!send) return;
    auto recv = check_recv(call, recvbuf, recvcount, recvtype, source, recvtag, comm);
    if (recv && check_arg(call, request, "request")) post_exchange(call, *send, *recv, nullptr, request);
  });
}

// The outgoing message leaves from a packed copy the request keeps, so that the incoming one may land
// on the buffer at once.
int isendrecv_replace_call(std::string_view name, void* buf, MPI_Count count, MPI_Datatype datatype, int dest,
                           int sendtag, int source, int recvtag, MPI_Comm comm, MPI_Request* request) noexcept {
  return api_call(name, [&](Call& call) {
    auto send = check_send(call, buf, count, datatype, dest, sendtag, comm);
    if (!send) return;
    auto recv = check_recv(call, buf, count, datatype, source, recvtag, comm);
    if (!recv || !check_arg(call, request, "request")) return;
    auto outgoing = std::make_unique<std::vector<std::byte>>(send->bytes);
    if (send->layout) {
      send->layout->pack(buf, send->count, outgoing->data());
      send->layout = nullptr;
    } else if (send->bytes != 0) {
      std::memcpy(outgoing->data(), buf, send->bytes);
    }
    send->buf = outgoing->data();
    post_exchange(call, *send, *recv, std::move(outgoing), request);
  });
}

// MPI_Buffer_iflush and MPI_Comm_iflush_buffer: a generalized request of the library's own, complete
// once `drained` says the buffer's sends are (its status empty).
int empty_query(void*, MPI_Status*) { return MPI_SUCCESS; }
int nothing_to_free(void*) { return MPI_SUCCESS; }
int nothing_to_cancel(void*, int) { return MPI_SUCCESS; }

void post_flush(Call& call, std::function<bool()> drained, MPI_Request* request) {
  if (!check_arg(call, request, "request")) return;
  Transfer transfer;
  transfer.comm = find_comm(MPI_COMM_SELF);  // as a generalized request's
  Request& r = runtime().requests.acquire(Mode::generalized, transfer, false);
  r.active = true;
  r.general = std::make_unique<Generalized>(Generalized{empty_query, nothing_to_free, nothing_to_cancel, nullptr});
  r.general->poll = std::move(drained);
  *request = &r;
}

// MPI_Buffer_attach and MPI_Comm_attach_buffer.
void attach_buffer(Call& call, BsendBuffer& bsend, void* buffer, int size, std::string_view whose) {
  if (buffer == MPI_BUFFER_AUTOMATIC) {
    if (bsend.attached()) {
      call.fail(MPI_ERR_BUFFER, fmt::format("a buffer is attached to {} already", whose));
    } else {
      bsend.attach(static_cast<std::byte*>(buffer), 0);
    }
  } else if (size < 0) {
    call.fail(MPI_ERR_ARG, fmt::format("negative size {}", size));
  } else if (buffer == nullptr && size > 0) {
    call.fail(MPI_ERR_BUFFER, fmt::format("null buffer with size {}", size));
  } else if (bsend.attached()) {
    call.fail(MPI_ERR_BUFFER, fmt::format("a buffer is attached to {} already", whose));
  } else {
    bsend.attach(static_cast<std::byte*>(buffer), static_cast<std::size_t>(size));
  }
}

int mrecv_call(std::string_view name, void* buf, MPI_Count count, MPI_Datatype datatype, MPI_Message* message,
               MPI_Status* status) noexcept {
  return api_call(name, [&](Call& call) {
    if (!check_arg(call, status, "status")) return;
    if (auto t = check_mrecv(call, buf, count, datatype, message)) run(call, Mode::receive, *t, status);
  });
}

int imrecv_call(std::string_view name, void* buf, MPI_Count count, MPI_Datatype datatype, MPI_Message* message,
                MPI_Request* request) noexcept {
  return api_call(name, [&](Call& call) {
    if (!check_arg(call, request, "request")) return;
    post(call, Mode::receive, false, request, [&](Transfer& t) {
      auto checked = check_mrecv(call, buf, count, datatype, message);
      if (checked) t = *checked;
      return checked.has_value();
    });
  });
}

}  // namespace
}  // namespace ftmpi::mpi

using namespace ftmpi::mpi;

extern "C" {

int PMPI_Send(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm) {
  return blocking_send<Mode::standard>("MPI_Send", buf, count, datatype, dest, tag, comm);
}
#pragma weak MPI_Send = PMPI_Send

int PMPI_Ssend(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm) {
  return blocking_send<Mode::synchronous>("MPI_Ssend", buf, count, datatype, dest, tag, comm);
}
#pragma weak MPI_Ssend = PMPI_Ssend

int PMPI_Rsend(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm) {
  return blocking_send<Mode::ready>("MPI_Rsend", buf, count, datatype, dest, tag, comm);
}
#pragma weak MPI_Rsend = PMPI_Rsend

int PMPI_Bsend(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm) {
  return blocking_send<Mode::buffered>("MPI_Bsend", buf, count, datatype, dest, tag, comm);
}
#pragma weak MPI_Bsend = PMPI_Bsend

int PMPI_Recv(void* buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm, MPI_Status* status) {
  return recv_call("MPI_Recv", buf, count, datatype, source, tag, comm, status);
}
#pragma weak MPI_Recv = PMPI_Recv

int PMPI_Sendrecv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag, void* recvbuf,
                  int recvcount, MPI_Datatype recvtype, int source, int recvtag, MPI_Comm comm, MPI_Status* status) {
  return sendrecv_call("MPI_Sendrecv", sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype,
                       source, recvtag, comm, status);
}
#pragma weak MPI_Sendrecv = PMPI_Sendrecv

int PMPI_Sendrecv_replace(void* buf, int count, MPI_Datatype datatype, int dest, int sendtag, int source,
                          int recvtag, MPI_Comm comm, MPI_Status* status) {
  return sendrecv_replace_call("MPI_Sendrecv_replace", buf, count, datatype, dest, sendtag, source, recvtag, comm,
                               status);
}
#pragma weak MPI_Sendrecv_replace = PMPI_Sendrecv_replace

int PMPI_Isendrecv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag, void* recvbuf,
                   int recvcount, MPI_Datatype recvtype, int source, int recvtag, MPI_Comm comm, MPI_Request* request) {
  return isendrecv_call("MPI_Isendrecv", sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype,
                        source, recvtag, comm, request);
}
#pragma weak MPI_Isendrecv = PMPI_Isendrecv

int PMPI_Isendrecv_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, int dest, int sendtag,
                     void* recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, int source, int recvtag, MPI_Comm comm,
                     MPI_Request* request) {
  return isendrecv_call("MPI_Isendrecv_c", sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype,
                        source, recvtag, comm, request);
}
#pragma weak MPI_Isendrecv_c = PMPI_Isendrecv_c

int PMPI_Isendrecv_replace(void* buf, int count, MPI_Datatype datatype, int dest, int sendtag, int source,
                           int recvtag, MPI_Comm comm, MPI_Request* request) {
  return isendrecv_replace_call("MPI_Isendrecv_replace", buf, count, datatype, dest, sendtag, source, recvtag, comm,
                                request);
}
#pragma weak MPI_Isendrecv_replace = PMPI_Isendrecv_replace

int PMPI_Isendrecv_replace_c(void* buf, MPI_Count count, MPI_Datatype datatype, int dest, int sendtag, int source,
                             int recvtag, MPI_Comm comm, MPI_Request* request) {
  return isendrecv_replace_call("MPI_Isendrecv_replace_c", buf, count, datatype, dest, sendtag, source, recvtag,
                                comm, request);
}
#pragma weak MPI_Isendrecv_replace_c = PMPI_Isendrecv_replace_c

int PMPI_Buffer_attach(void* buffer, int size) {
  return api_call("MPI_Buffer_attach",
                  [&](Call& call) { attach_buffer(call, runtime().bsend, buffer, size, "the process"); });
}
#pragma weak MPI_Buffer_attach = PMPI_Buffer_attach

// `buffer_addr` is really a void**: MPI declares it void* so that callers need no cast.
int PMPI_Buffer_detach(void* buffer_addr, int* size) {
  return api_call("MPI_Buffer_detach", [&](Call& call) {
    if (!check_arg(call, buffer_addr, "buffer_addr") || !check_arg(call, size, "size")) return;
    const auto [base, bytes] = runtime().bsend.detach(engine());
    *static_cast<void**>(buffer_addr) = base;
    *size = static_cast<int>(bytes);
  });
}
#pragma weak MPI_Buffer_detach = PMPI_Buffer_detach

// MPI-4.1: wait for the buffered sends of the process's buffer, which stays attached.
int PMPI_Buffer_flush(void) {
  return api_call("MPI_Buffer_flush", [&](Call&) { runtime().bsend.drain(engine()); });
}
#pragma weak MPI_Buffer_flush = PMPI_Buffer_flush

int PMPI_Buffer_iflush(MPI_Request* request) {
  return api_call("MPI_Buffer_iflush", [&](Call& call) {
    post_flush(call, [] { return runtime().bsend.drained(engine()); }, request);
  });
}
#pragma weak MPI_Buffer_iflush = PMPI_Buffer_iflush

int PMPI_Comm_attach_buffer(MPI_Comm comm, void* buffer, int size) {
  return api_call("MPI_Comm_attach_buffer", [&](Call& call) {
    Comm* c = check_comm(call, comm);
    if (c == nullptr) return;
    auto bsend = c->bsend != nullptr ? c->bsend : std::make_shared<BsendBuffer>();
    attach_buffer(call, *bsend, buffer, size, c->name.empty() ? std::string("the communicator") : c->name);
    if (!call.failed()) c->bsend = std::move(bsend);
  });
}
#pragma weak MPI_Comm_attach_buffer = PMPI_Comm_attach_buffer

// Waits for the communicator's buffered sends; then its sends use the process's buffer again. With
// none attached, gives NULL and 0, as MPI_Buffer_detach does.
int PMPI_Comm_detach_buffer(MPI_Comm comm, void* buffer_addr, int* size) {
  return api_call("MPI_Comm_detach_buffer", [&](Call& call) {
    Comm* c = check_comm(call, comm);
    if (c == nullptr || !check_arg(call, buffer_addr, "buffer_addr") || !check_arg(call, size, "size")) return;
    std::pair<std::byte*, std::size_t> detached{nullptr, 0};
    if (c->bsend != nullptr) detached = c->bsend->detach(engine());
    c->bsend.reset();
    *static_cast<void**>(buffer_addr) = detached.first;
    *size = static_cast<int>(detached.second);
  });
}
#pragma weak MPI_Comm_detach_buffer = PMPI_Comm_detach_buffer

int PMPI_Comm_flush_buffer(MPI_Comm comm) {
  return api_call("MPI_Comm_flush_buffer", [&](Call& call) {
    Comm* c = check_comm(call, comm);
    if (c != nullptr && c->bsend != nullptr) c->bsend->drain(engine());
  });
}
#pragma weak MPI_Comm_flush_buffer = PMPI_Comm_flush_buffer

int PMPI_Comm_iflush_buffer(MPI_Comm comm, MPI_Request* request) {
  return api_call("MPI_Comm_iflush_buffer", [&](Call& call) {
    Comm* c = check_comm(call, comm);
    if (c == nullptr) return;
    std::shared_ptr<BsendBuffer> bsend = c->bsend;  // kept by the request past a detach
    post_flush(call, [bsend] { return bsend == nullptr || bsend->drained(engine()); }, request);
  });
}
#pragma weak MPI_Comm_iflush_buffer = PMPI_Comm_iflush_buffer

int PMPI_Probe(int source, int tag, MPI_Comm comm, MPI_Status* status) {
  return api_call_as(Access::shared, "MPI_Probe", [&](Call& call) {
    const Comm* c = check_comm(call, comm);
    if (c == nullptr || !check_source(call, *c, source) || !check_recv_tag(call, tag) ||
        !check_arg(call, status, "status")) {
      return;
    }
    if (source == MPI_PROC_NULL) {
      write_status(status, {.source = MPI_PROC_NULL});
      return;
    }
    ftmpi::engine::Completion found;
    progress_until([&] { return engine().iprobe(c->view, engine_source(source), engine_tag(tag), &found); });
    write_status(status, probed(found));
  });
}
#pragma weak MPI_Probe = PMPI_Probe

// Matched probes (MPI-3.1 section 3.8.2): the message found is taken out of matching at once, so that
// no receive of another thread or of a later call can take it before MPI_Mrecv.
int PMPI_Mprobe(int source, int tag, MPI_Comm comm, MPI_Message* message, MPI_Status* status) {
  return api_call("MPI_Mprobe", [&](Call& call) {
    Comm* c = check_comm(call, comm);
    if (c == nullptr || !check_source(call, *c, source) || !check_recv_tag(call, tag) ||
        !check_arg(call, message, "message") || !check_arg(call, status, "status")) {
      return;
    }
    if (source == MPI_PROC_NULL) {
      *message = MPI_MESSAGE_NO_PROC;
      write_status(status, {.source = MPI_PROC_NULL, .tag = MPI_ANY_TAG});
      return;
    }
    ftmpi::engine::Completion found;
    ftmpi::engine::MatchedMessage* matched = nullptr;
    progress_until([&] {
      matched = engine().improbe(c->view, engine_source(source), engine_tag(tag), &found);
      return matched != nullptr;
    });
    *message = keep_message(*c, matched, found);
    write_status(status, probed(found));
  });
}
#pragma weak MPI_Mprobe = PMPI_Mprobe

int PMPI_Improbe(int source, int tag, MPI_Comm comm, int* flag, MPI_Message* message, MPI_Status* status) {
  return api_call("MPI_Improbe", [&](Call& call) {
    Comm* c = check_comm(call, comm);
    if (c == nullptr || !check_source(call, *c, source) || !check_recv_tag(call, tag) || !check_arg(call, flag, "flag") ||
        !check_arg(call, message, "message") || !check_arg(call, status, "status")) {
      return;
    }
    if (source == MPI_PROC_NULL) {
      *flag = 1;
      *message = MPI_MESSAGE_NO_PROC;
      write_status(status, {.source = MPI_PROC_NULL, .tag = MPI_ANY_TAG});
      return;
    }
    progress_once();  // a loop of MPI_Improbe must see the message arrive
    ftmpi::engine::Completion found;
    ftmpi::engine::MatchedMessage* matched = engine().improbe(c->view, engine_source(source), engine_tag(tag), &found);
    *flag = matched != nullptr ? 1 : 0;
    if (matched == nullptr) return;
    *message = keep_message(*c, matched, found);
    write_status(status, probed(found));
  });
}
#pragma weak MPI_Improbe = PMPI_Improbe

int PMPI_Mrecv(void* buf, int count, MPI_Datatype datatype, MPI_Message* message, MPI_Status* status) {
  return mrecv_call("MPI_Mrecv", buf, count, datatype, message, status);
}
#pragma weak MPI_Mrecv = PMPI_Mrecv

int PMPI_Imrecv(void* buf, int count, MPI_Datatype datatype, MPI_Message* message, MPI_Request* request) {
  return imrecv_call("MPI_Imrecv", buf, count, datatype, message, request);
}
#pragma weak MPI_Imrecv = PMPI_Imrecv

int PMPI_Iprobe(int source, int tag, MPI_Comm comm, int* flag, MPI_Status* status) {
  return api_call_as(Access::shared, "MPI_Iprobe", [&](Call& call) {
    const Comm* c = check_comm(call, comm);
    if (c == nullptr || !check_source(call, *c, source) || !check_recv_tag(call, tag) ||
        !check_arg(call, flag, "flag") || !check_arg(call, status, "status")) {
      return;
    }
    if (source == MPI_PROC_NULL) {
      *flag = 1;
      write_status(status, {.source = MPI_PROC_NULL});
      return;
    }
    // A loop of MPI_Iprobe must see the message arrive: each call makes progress first.
    progress_once();
    ftmpi::engine::Completion found;
    *flag = engine().iprobe(c->view, engine_source(source), engine_tag(tag), &found) ? 1 : 0;
    if (*flag) write_status(status, probed(found));
  });
}
#pragma weak MPI_Iprobe = PMPI_Iprobe

int PMPI_Isend(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
               MPI_Request* request) {
  return post_send("MPI_Isend", Mode::standard, false, buf, count, datatype, dest, tag, comm, request);
}
#pragma weak MPI_Isend = PMPI_Isend

int PMPI_Issend(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                MPI_Request* request) {
  return post_send("MPI_Issend", Mode::synchronous, false, buf, count, datatype, dest, tag, comm, request);
}
#pragma weak MPI_Issend = PMPI_Issend

int PMPI_Irsend(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                MPI_Request* request) {
  return post_send("MPI_Irsend", Mode::ready, false, buf, count, datatype, dest, tag, comm, request);
}
#pragma weak MPI_Irsend = PMPI_Irsend

int PMPI_Ibsend(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                MPI_Request* request) {
  return post_send("MPI_Ibsend", Mode::buffered, false, buf, count, datatype, dest, tag, comm, request);
}
#pragma weak MPI_Ibsend = PMPI_Ibsend

int PMPI_Irecv(void* buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
               MPI_Request* request) {
  return post_recv("MPI_Irecv", false, buf, count, datatype, source, tag, comm, request);
}
#pragma weak MPI_Irecv = PMPI_Irecv

int PMPI_Send_init(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                   MPI_Request* request) {
  return post_send("MPI_Send_init", Mode::standard, true, buf, count, datatype, dest, tag, comm, request);
}
#pragma weak MPI_Send_init = PMPI_Send_init

int PMPI_Ssend_init(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                    MPI_Request* request) {
  return post_send("MPI_Ssend_init", Mode::synchronous, true, buf, count, datatype, dest, tag, comm, request);
}
#pragma weak MPI_Ssend_init = PMPI_Ssend_init

int PMPI_Rsend_init(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                    MPI_Request* request) {
  return post_send("MPI_Rsend_init", Mode::ready, true, buf, count, datatype, dest, tag, comm, request);
}
#pragma weak MPI_Rsend_init = PMPI_Rsend_init

int PMPI_Bsend_init(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                    MPI_Request* request) {
  return post_send("MPI_Bsend_init", Mode::buffered, true, buf, count, datatype, dest, tag, comm, request);
}
#pragma weak MPI_Bsend_init = PMPI_Bsend_init

int PMPI_Recv_init(void* buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
                   MPI_Request* request) {
  return post_recv("MPI_Recv_init", true, buf, count, datatype, source, tag, comm, request);
}
#pragma weak MPI_Recv_init = PMPI_Recv_init

int PMPI_Start(MPI_Request* request) {
  return api_call("MPI_Start", [&](Call& call) {
    if (!check_arg(call, request, "request")) return;
    Request* r = check_request(call, *request);
    if (r != nullptr && check_startable(call, *r)) start(call, *r);
  });
}
#pragma weak MPI_Start = PMPI_Start

int PMPI_Startall(int count, MPI_Request* array_of_requests) {
  return api_call("MPI_Startall", [&](Call& call) {
    if (!check_count(call, count) || (count > 0 && !check_arg(call, array_of_requests, "array_of_requests"))) return;
    const std::span<MPI_Request> handles(array_of_requests, static_cast<std::size_t>(count));
    for (MPI_Request handle : handles) {
      Request* r = check_request(call, handle);
      if (r == nullptr || !check_startable(call, *r)) return;
    }
    // All were checked, so only a buffered send without room stops this; later requests stay inactive.
    for (MPI_Request handle : handles) {
      if (!start(call, *handle)) return;
    }
  });
}
#pragma weak MPI_Startall = PMPI_Startall

// MPI-4's large-count forms: the same calls with MPI_Count counts.

int PMPI_Send_c(const void* buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm) {
  return blocking_send<Mode::standard>("MPI_Send_c", buf, count, datatype, dest, tag, comm);
}
#pragma weak MPI_Send_c = PMPI_Send_c

int PMPI_Ssend_c(const void* buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm) {
  return blocking_send<Mode::synchronous>("MPI_Ssend_c", buf, count, datatype, dest, tag, comm);
}
#pragma weak MPI_Ssend_c = PMPI_Ssend_c

int PMPI_Rsend_c(const void* buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm) {
  return blocking_send<Mode::ready>("MPI_Rsend_c", buf, count, datatype, dest, tag, comm);
}
#pragma weak MPI_Rsend_c = PMPI_Rsend_c

int PMPI_Bsend_c(const void* buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm) {
  return blocking_send<Mode::buffered>("MPI_Bsend_c", buf, count, datatype, dest, tag, comm);
}
#pragma weak MPI_Bsend_c = PMPI_Bsend_c

int PMPI_Recv_c(void* buf, MPI_Count count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
                MPI_Status* status) {
  return recv_call("MPI_Recv_c", buf, count, datatype, source, tag, comm, status);
}
#pragma weak MPI_Recv_c = PMPI_Recv_c

int PMPI_Sendrecv_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, int dest, int sendtag,
                    void* recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, int source, int recvtag, MPI_Comm comm,
                    MPI_Status* status) {
  return sendrecv_call("MPI_Sendrecv_c", sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype,
                       source, recvtag, comm, status);
}
#pragma weak MPI_Sendrecv_c = PMPI_Sendrecv_c

int PMPI_Sendrecv_replace_c(void* buf, MPI_Count count, MPI_Datatype datatype, int dest, int sendtag, int source,
                          int recvtag, MPI_Comm comm, MPI_Status* status) {
  return sendrecv_replace_call("MPI_Sendrecv_replace_c", buf, count, datatype, dest, sendtag, source, recvtag, comm,
                               status);
}
#pragma weak MPI_Sendrecv_replace_c = PMPI_Sendrecv_replace_c

int PMPI_Mrecv_c(void* buf, MPI_Count count, MPI_Datatype datatype, MPI_Message* message, MPI_Status* status) {
  return mrecv_call("MPI_Mrecv_c", buf, count, datatype, message, status);
}
#pragma weak MPI_Mrecv_c = PMPI_Mrecv_c

int PMPI_Imrecv_c(void* buf, MPI_Count count, MPI_Datatype datatype, MPI_Message* message, MPI_Request* request) {
  return imrecv_call("MPI_Imrecv_c", buf, count, datatype, message, request);
}
#pragma weak MPI_Imrecv_c = PMPI_Imrecv_c

int PMPI_Isend_c(const void* buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
               MPI_Request* request) {
  return post_send("MPI_Isend_c", Mode::standard, false, buf, count, datatype, dest, tag, comm, request);
}
#pragma weak MPI_Isend_c = PMPI_Isend_c

int PMPI_Issend_c(const void* buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                MPI_Request* request) {
  return post_send("MPI_Issend_c", Mode::synchronous, false, buf, count, datatype, dest, tag, comm, request);
}
#pragma weak MPI_Issend_c = PMPI_Issend_c

int PMPI_Irsend_c(const void* buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                MPI_Request* request) {
  return post_send("MPI_Irsend_c", Mode::ready, false, buf, count, datatype, dest, tag, comm, request);
}
#pragma weak MPI_Irsend_c = PMPI_Irsend_c

int PMPI_Ibsend_c(const void* buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                MPI_Request* request) {
  return post_send("MPI_Ibsend_c", Mode::buffered, false, buf, count, datatype, dest, tag, comm, request);
}
#pragma weak MPI_Ibsend_c = PMPI_Ibsend_c

int PMPI_Irecv_c(void* buf, MPI_Count count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
               MPI_Request* request) {
  return post_recv("MPI_Irecv_c", false, buf, count, datatype, source, tag, comm, request);
}
#pragma weak MPI_Irecv_c = PMPI_Irecv_c

int PMPI_Send_init_c(const void* buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                   MPI_Request* request) {
  return post_send("MPI_Send_init_c", Mode::standard, true, buf, count, datatype, dest, tag, comm, request);
}
#pragma weak MPI_Send_init_c = PMPI_Send_init_c

int PMPI_Ssend_init_c(const void* buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                    MPI_Request* request) {
  return post_send("MPI_Ssend_init_c", Mode::synchronous, true, buf, count, datatype, dest, tag, comm, request);
}
#pragma weak MPI_Ssend_init_c = PMPI_Ssend_init_c

int PMPI_Rsend_init_c(const void* buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                    MPI_Request* request) {
  return post_send("MPI_Rsend_init_c", Mode::ready, true, buf, count, datatype, dest, tag, comm, request);
}
#pragma weak MPI_Rsend_init_c = PMPI_Rsend_init_c

int PMPI_Bsend_init_c(const void* buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                    MPI_Request* request) {
  return post_send("MPI_Bsend_init_c", Mode::buffered, true, buf, count, datatype, dest, tag, comm, request);
}
#pragma weak MPI_Bsend_init_c = PMPI_Bsend_init_c

int PMPI_Recv_init_c(void* buf, MPI_Count count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
                   MPI_Request* request) {
  return post_recv("MPI_Recv_init_c", true, buf, count, datatype, source, tag, comm, request);
}
#pragma weak MPI_Recv_init_c = PMPI_Recv_init_c

}  // extern "C"

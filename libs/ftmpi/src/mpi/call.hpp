// One MPI call in progress, and the frame every MPI function runs its body in.
//
//   int PMPI_Comm_size(MPI_Comm comm, int* size) {
//     return api_call("MPI_Comm_size", [&](Call& call) {
//       Comm* c = check_comm(call, comm);
//       if (c == nullptr || !check_arg(call, size, "size")) return;
//       *size = c->size();
//     });
//   }
//
// A body reports failure by recording it in the Call (the first failure wins: it names the problem);
// api_call turns exceptions into MPI_ERR_NO_MEM / MPI_ERR_INTERN so that none crosses the C interface,
// then runs the error handler of the communicator the failure belongs to.
#pragma once

#include <cstdint>
#include <exception>
#include <memory>
#include <new>
#include <optional>
#include <string>
#include <string_view>

#include "ftmpi/base/status.hpp"
#include "mpi/api.hpp"
#include "mpi/comm.hpp"
#include "mpi/datatype.hpp"
#include "mpi/objects.hpp"
#include "mpi/request.hpp"
#include "mpi/runtime.hpp"
#include "mpi/thread_lock.hpp"

namespace ftmpi::mpi {

class Call {
 public:
  Call(std::string_view name, Runtime& rt) noexcept : name_(name), runtime_(&rt) {}
  Call(const Call&) = delete;  // raise_on_file points into it
  Call& operator=(const Call&) = delete;

  std::string_view name() const noexcept { return name_; }
  // The runtime, as api_call_as found it: the checks and the direct paths read it from here, not from
  // the atomic pointer again (a load and a test each time).
  Runtime& rt() const noexcept { return *runtime_; }
  bool failed() const noexcept { return error_ != MPI_SUCCESS; }
  // Records a failure unless one is recorded already.
  void fail(int error_class, std::string_view reason) noexcept;
  // Records an engine failure, mapped to its class by the one table (errors.hpp).
  void fail(const base::Status& status) noexcept;
  // The communicator whose error handler reports this call's failure; MPI_COMM_WORLD unless set.
  void raise_on(Comm& comm) noexcept { handler_ = &comm; }
  // A file call's failures go to the file's handler instead (MPI_FILE_NULL's for open, delete and a
  // handle that names no file; MPI-3.1 section 13.7).
  void raise_on_file(int file, int errhandler) noexcept {
    file_errhandler_ = errhandler;
    raise_on_object(file, &file_errhandler_);
  }
  // A window's error handler reports this call's failure instead (one-sided calls); `handler` is the
  // window's, read when the call finishes.
  void raise_on_window(int window, const MPI_Errhandler* handler) noexcept { raise_on_object(window, handler); }
  // MPI_SUCCESS, or the failure's class when the handler is MPI_ERRORS_RETURN; under
  // MPI_ERRORS_ARE_FATAL prints one line naming the call and the reason, and ends the job.
  int finish() noexcept { return failed() ? finish_failed() : MPI_SUCCESS; }

 private:
  void raise_on_object(int handle, const MPI_Errhandler* handler) noexcept {
    object_ = handle;
    object_handler_ = handler;
  }
  int finish_failed() noexcept;

  // Every call builds one of these, most never fail: the constructor stores four words, and what only
  // a failure needs (the reason's text, a file's handler) is filled in when it happens.
  std::string_view name_;
  Runtime* runtime_;
  int error_ = MPI_SUCCESS;
  Comm* handler_ = nullptr;
  // A file's or a window's handler and handle, instead of handler_'s; null for a communicator's.
  const MPI_Errhandler* object_handler_ = nullptr;
  int object_;
  MPI_Errhandler file_errhandler_;
  std::unique_ptr<std::string> reason_;
};

// What a call needs before its body may run: MPI running (all but a few), or nothing.
enum class Needs : std::uint8_t { running, nothing };

// Runs an MPI call's body under the thread lock (MPI_THREAD_MULTIPLE only; thread_lock.hpp), held as
// `access` says: shared only for calls that read MPI objects and leave the rest to the engine.
// Inlined always: each body has one caller, and a call that is not inlined passes the body's
// arguments through a closure in memory (about 50 instructions of a zero-byte MPI_Recv).
template <typename Body>
[[gnu::always_inline]] inline int api_call_as(Access access, std::string_view name, Body&& body, Needs needs = Needs::running) noexcept {
  const ThreadLockGuard lock(access);
  Runtime& rt = runtime();
  Call call(name, rt);
  try {
    if (needs == Needs::running && rt.phase != Phase::running) [[unlikely]] require_running(name);
    body(call);
  } catch (const std::bad_alloc&) {
    call.fail(MPI_ERR_NO_MEM, "out of memory");
  } catch (const std::exception& e) {
    call.fail(MPI_ERR_INTERN, e.what());
  } catch (...) {
    call.fail(MPI_ERR_INTERN, "unknown exception");
  }
  return call.finish();
}

template <typename Body>
[[gnu::always_inline]] inline int api_call(std::string_view name, Body&& body, Needs needs = Needs::running) noexcept {
  return api_call_as(Access::exclusive, name, std::forward<Body>(body), needs);
}

// Argument checks. Each fails the call with the class MPI prescribes and returns null/false/nullopt.

// Also makes the communicator the one that reports the call's errors.
Comm* check_comm(Call& call, MPI_Comm handle);
// An intracommunicator: what calls that have no meaning between two groups accept (MPI_ERR_COMM).
Comm* check_intra(Call& call, MPI_Comm handle);
// An intercommunicator (MPI_Comm_remote_size, MPI_Intercomm_merge ...; MPI_ERR_COMM).
Comm* check_inter(Call& call, MPI_Comm handle);
// Any live datatype (committed or not): what the type constructors and queries accept.
const Datatype* check_datatype(Call& call, MPI_Datatype handle);
// A datatype communication may use: live and committed.
const Datatype* check_committed(Call& call, MPI_Datatype handle);
const OpEntry* check_op(Call& call, MPI_Op handle);
Group* check_group(Call& call, MPI_Group handle);
Info* check_info(Call& call, MPI_Info handle);
// A root of a collective: a rank of the communicator (MPI_ERR_ROOT).
bool check_root(Call& call, const Comm& comm, int root);
// A buffer of `count` items of `type`: may be null only when empty, or for a derived type (MPI_BOTTOM
// with absolute displacements).
bool check_buffer(Call& call, const void* buf, MPI_Count count, const Datatype& type, std::string_view name);
bool check_count(Call& call, MPI_Count count);  // MPI_Count: the MPI-4 _c calls' counts too
// A pointer argument the call reads or writes (MPI_ERR_ARG when null). Inline, its failure cold.
[[gnu::cold, gnu::noinline]] bool fail_null_arg(Call& call, std::string_view name);
inline bool check_arg(Call& call, const void* pointer, std::string_view name) {
  return pointer != nullptr || fail_null_arg(call, name);
}

// The failing halves of the checks below, out of line and cold: the passing halves are then small
// enough to be inlined into every call that checks (a blocking send checks six things).
namespace detail {
[[gnu::cold, gnu::noinline]] void fail_comm(Call& call, MPI_Comm handle);
[[gnu::cold, gnu::noinline]] void fail_datatype(Call& call, MPI_Datatype handle);
[[gnu::cold, gnu::noinline]] void fail_uncommitted(Call& call, MPI_Datatype handle);
[[gnu::cold, gnu::noinline]] bool fail_count(Call& call, MPI_Count count);
[[gnu::cold, gnu::noinline]] void fail_null_buffer(Call& call, MPI_Count count);
[[gnu::cold, gnu::noinline]] bool fail_rank(Call& call, const Comm& comm, int rank, std::string_view role);
[[gnu::cold, gnu::noinline]] bool fail_tag(Call& call, int tag);

inline Comm* comm_or_fail(Call& call, MPI_Comm handle) {
  Comm* comm = find_comm(call.rt(), handle);
  if (comm == nullptr) [[unlikely]] {
    fail_comm(call, handle);
    return nullptr;
  }
  call.raise_on(*comm);
  return comm;
}

inline const Datatype* committed_or_fail(Call& call, MPI_Datatype handle) {
  const Datatype* type = find_datatype(call.rt(), handle);
  if (type == nullptr) [[unlikely]] {
    fail_datatype(call, handle);
    return nullptr;
  }
  if (!type->committed) [[unlikely]] {
    fail_uncommitted(call, handle);
    return nullptr;
  }
  return type;
}

inline bool count_ok(Call& call, MPI_Count count) { return count >= 0 || fail_count(call, count); }

inline bool rank_ok(Call& call, const Comm& comm, int rank, std::string_view role) {
  return (rank >= 0 && rank < comm.size()) || rank == MPI_PROC_NULL || fail_rank(call, comm, rank, role);
}

inline bool send_tag_ok(Call& call, int tag) {
  return tag >= 0 || fail_tag(call, tag);  // an int cannot exceed kTagUb
}

// Fills `t`, default-constructed, with the checked arguments (an out-parameter: an optional<Transfer>
// returned through two levels was copied twice on the way).
[[gnu::always_inline]] inline bool check_transfer(Call& call, const void* buf, MPI_Count count, MPI_Datatype datatype,
                                                  MPI_Comm comm, Transfer& t) {
  Comm* c = comm_or_fail(call, comm);
  if (c == nullptr || !count_ok(call, count)) return false;
  t.comm = c;
  t.buf = const_cast<void*>(buf);
  // Nothing of no type: an empty message (MPICH and Open MPI take it too).
  if (count == 0 && datatype == MPI_DATATYPE_NULL) return true;
  const Datatype* type = committed_or_fail(call, datatype);
  if (type == nullptr) return false;
  if (buf == nullptr && count > 0 && type->predefined) [[unlikely]] {
    fail_null_buffer(call, count);
    return false;
  }
  const auto n = static_cast<std::size_t>(count);
  t.bytes = type->layout->packed_bytes(n);
  if (!type->dense() && n != 0) {
    t.layout = type->layout;
    t.count = n;
  }
  return true;
}
}  // namespace detail

// A source (MPI_ANY_SOURCE and MPI_PROC_NULL allowed) and a receive's tag (MPI_ANY_TAG allowed).
[[gnu::always_inline]] inline bool check_source(Call& call, const Comm& comm, int source) {
  return source == MPI_ANY_SOURCE || detail::rank_ok(call, comm, source, "source");
}
[[gnu::always_inline]] inline bool check_recv_tag(Call& call, int tag) {
  return tag == MPI_ANY_TAG || detail::send_tag_ok(call, tag);
}

// The arguments of a send or a receive, checked, into `t` (default-constructed); inline into each call
// (as a function of its own it was a seventh of a zero-byte round trip).
[[gnu::always_inline]] inline bool check_send(Call& call, const void* buf, MPI_Count count, MPI_Datatype datatype,
                                              int dest, int tag, MPI_Comm comm, Transfer& t) {
  if (!detail::check_transfer(call, buf, count, datatype, comm, t) ||
      !detail::rank_ok(call, *t.comm, dest, "destination") || !detail::send_tag_ok(call, tag)) {
    return false;
  }
  t.peer = dest;
  t.tag = tag;
  return true;
}
[[gnu::always_inline]] inline bool check_recv(Call& call, void* buf, MPI_Count count, MPI_Datatype datatype,
                                              int source, int tag, MPI_Comm comm, Transfer& t) {
  if (!detail::check_transfer(call, buf, count, datatype, comm, t) || !check_source(call, *t.comm, source) ||
      !check_recv_tag(call, tag)) {
    return false;
  }
  t.peer = source;
  t.tag = tag;
  return true;
}
// The same as an optional, for the calls that keep the Transfer (out of line: one copy of the checks).
std::optional<Transfer> check_send(Call& call, const void* buf, MPI_Count count, MPI_Datatype datatype, int dest,
                                   int tag, MPI_Comm comm);
std::optional<Transfer> check_recv(Call& call, void* buf, MPI_Count count, MPI_Datatype datatype, int source,
                                   int tag, MPI_Comm comm);

// A handle that names a live request; MPI_REQUEST_NULL is refused too. Errors of the call then belong
// to the request's communicator.
Request* check_request(Call& call, MPI_Request handle);
// The array of the multi-completion calls: each handle MPI_REQUEST_NULL or live.
bool check_requests(Call& call, int count, const MPI_Request* requests);

}  // namespace ftmpi::mpi

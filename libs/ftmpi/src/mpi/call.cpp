#include "mpi/call.hpp"

#include <cstdio>

#include <fmt/format.h>

#include "mpi/comms.hpp"
#include "mpi/errors.hpp"
#include "mpi/runtime.hpp"

namespace ftmpi::mpi {

void Call::fail(int error_class, std::string_view reason) noexcept {
  if (failed()) return;
  error_ = error_class;
  try {
    reason_ = std::make_unique<std::string>(reason);
  } catch (...) {
    reason_.reset();  // finish() falls back to the class's own text
  }
}

void Call::fail(const base::Status& status) noexcept { fail(error_class_of(status.code()), status.message()); }

int Call::finish_failed() noexcept {
  Runtime& rt = runtime();
  if (rt.phase == Phase::running) {
    // The file's, the window's or the communicator's handler; its first argument is that object's
    // handle (all are ints), so one call serves the three.
    MPI_Errhandler errhandler = MPI_ERRORS_ARE_FATAL;
    int handle = 0;
    if (object_handler_ != nullptr) {
      errhandler = *object_handler_;
      handle = object_;
    } else {
      const Comm& comm = handler_ != nullptr ? *handler_ : rt.world();
      errhandler = comm.errhandler;
      handle = comm.handle;
    }
    if (errhandler == MPI_ERRORS_RETURN) return error_;
    // A created handler that returns: so does the call, with the error.
    if (call_created_errhandler(errhandler, handle, error_)) return error_;
  }
  const std::string_view reason =
      reason_ == nullptr || reason_->empty() ? error_class_text(error_) : std::string_view(*reason_);
  const std::string_view name = error_class_name(error_);
  char what[1024];
  std::snprintf(what, sizeof what, "%.*s: %.*s (%.*s)", static_cast<int>(name_.size()), name_.data(),
                static_cast<int>(reason.size()), reason.data(), static_cast<int>(name.size()), name.data());
  fatal(class_of_code(error_), what);  // the job's status: the class (an added code's, MPI_ERR_UNKNOWN)
}

namespace detail {

void fail_comm(Call& call, MPI_Comm handle) {
  call.fail(MPI_ERR_COMM, handle == MPI_COMM_NULL ? std::string("MPI_COMM_NULL is not a valid communicator")
                                                  : fmt::format("invalid communicator {:#x}", handle));
}

void fail_datatype(Call& call, MPI_Datatype handle) {
  call.fail(MPI_ERR_TYPE, handle == MPI_DATATYPE_NULL ? std::string("MPI_DATATYPE_NULL is not a valid datatype")
                                                      : fmt::format("invalid datatype {:#x}", handle));
}

void fail_uncommitted(Call& call, MPI_Datatype handle) {
  call.fail(MPI_ERR_TYPE, fmt::format("datatype {:#x} is not committed (MPI_Type_commit)", handle));
}

bool fail_count(Call& call, MPI_Count count) {
  call.fail(MPI_ERR_COUNT, fmt::format("negative count {}", count));
  return false;
}

void fail_null_buffer(Call& call, MPI_Count count) {
  call.fail(MPI_ERR_BUFFER, fmt::format("null buffer with count {}", count));
}

bool fail_rank(Call& call, const Comm& comm, int rank, std::string_view role) {
  call.fail(MPI_ERR_RANK, fmt::format("invalid {} rank {} ({} has {} ranks)", role, rank, label(comm), comm.size()));
  return false;
}

bool fail_tag(Call& call, int tag) {
  call.fail(MPI_ERR_TAG, fmt::format("invalid tag {}", tag));
  return false;
}

}  // namespace detail

bool fail_null_arg(Call& call, std::string_view name) {
  call.fail(MPI_ERR_ARG, fmt::format("{} is a null pointer", name));
  return false;
}

namespace {

using detail::comm_or_fail;
using detail::committed_or_fail;
using detail::count_ok;
using detail::fail_datatype;

}  // namespace

Comm* check_comm(Call& call, MPI_Comm handle) { return comm_or_fail(call, handle); }

Comm* check_intra(Call& call, MPI_Comm handle) {
  Comm* comm = comm_or_fail(call, handle);
  if (comm != nullptr && comm->is_inter()) {
    call.fail(MPI_ERR_COMM, fmt::format("{} is an intercommunicator; {} takes an intracommunicator", label(*comm),
                                        call.name()));
    return nullptr;
  }
  return comm;
}

Comm* check_inter(Call& call, MPI_Comm handle) {
  Comm* comm = comm_or_fail(call, handle);
  if (comm != nullptr && !comm->is_inter()) {
    call.fail(MPI_ERR_COMM, fmt::format("{} is an intracommunicator; {} takes an intercommunicator", label(*comm),
                                        call.name()));
    return nullptr;
  }
  return comm;
}

const Datatype* check_datatype(Call& call, MPI_Datatype handle) {
  const Datatype* type = find_datatype(handle);
  if (type == nullptr) fail_datatype(call, handle);
  return type;
}

const Datatype* check_committed(Call& call, MPI_Datatype handle) { return committed_or_fail(call, handle); }

const OpEntry* check_op(Call& call, MPI_Op handle) {
  const OpEntry* op = runtime().ops.find(handle);
  if (op == nullptr) {
    call.fail(MPI_ERR_OP, handle == MPI_OP_NULL ? std::string("MPI_OP_NULL is not a valid operation")
                                                : fmt::format("invalid operation {:#x}", handle));
  }
  return op;
}

Group* check_group(Call& call, MPI_Group handle) {
  Group* group = runtime().groups.find(handle);
  if (group == nullptr) {
    call.fail(MPI_ERR_GROUP, handle == MPI_GROUP_NULL ? std::string("MPI_GROUP_NULL is not a valid group")
                                                      : fmt::format("invalid group {:#x}", handle));
  }
  return group;
}

Info* check_info(Call& call, MPI_Info handle) {
  Info* info = runtime().infos.find(handle);
  if (info == nullptr) {
    call.fail(MPI_ERR_INFO, handle == MPI_INFO_NULL ? std::string("MPI_INFO_NULL is not a valid info object")
                                                    : fmt::format("invalid info object {:#x}", handle));
  }
  return info;
}

bool check_root(Call& call, const Comm& comm, int root) {
  if (root >= 0 && root < comm.size()) return true;
  call.fail(MPI_ERR_ROOT, fmt::format("invalid root {} ({} has {} ranks)", root, label(comm), comm.size()));
  return false;
}

bool check_buffer(Call& call, const void* buf, MPI_Count count, const Datatype& type, std::string_view name) {
  if (buf != nullptr || count == 0 || !type.predefined || type.size() == 0) return true;
  call.fail(MPI_ERR_BUFFER, fmt::format("{} is a null pointer with count {}", name, count));
  return false;
}

bool check_count(Call& call, MPI_Count count) { return count_ok(call, count); }

std::optional<Transfer> check_send(Call& call, const void* buf, MPI_Count count, MPI_Datatype datatype, int dest,
                                   int tag, MPI_Comm comm) {
  Transfer t;
  if (!check_send(call, buf, count, datatype, dest, tag, comm, t)) return std::nullopt;
  return t;
}

std::optional<Transfer> check_recv(Call& call, void* buf, MPI_Count count, MPI_Datatype datatype, int source, int tag,
                                   MPI_Comm comm) {
  Transfer t;
  if (!check_recv(call, buf, count, datatype, source, tag, comm, t)) return std::nullopt;
  return t;
}

Request* check_request(Call& call, MPI_Request handle) {
  if (handle == MPI_REQUEST_NULL) {
    call.fail(MPI_ERR_REQUEST, "MPI_REQUEST_NULL is not a valid request here");
    return nullptr;
  }
  if (!RequestPool::is_live(handle)) {
    call.fail(MPI_ERR_REQUEST, fmt::format("invalid request {}", static_cast<const void*>(handle)));
    return nullptr;
  }
  call.raise_on(*handle->transfer.comm);
  return handle;
}

bool check_requests(Call& call, int count, const MPI_Request* requests) {
  if (!check_count(call, count) || (count > 0 && !check_arg(call, requests, "array_of_requests"))) return false;
  for (int i = 0; i < count; ++i) {
    if (requests[i] != MPI_REQUEST_NULL && !RequestPool::is_live(requests[i])) {
      call.fail(MPI_ERR_REQUEST,
                fmt::format("invalid request {} at index {}", static_cast<const void*>(requests[i]), i));
      return false;
    }
  }
  return true;
}

}  // namespace ftmpi::mpi

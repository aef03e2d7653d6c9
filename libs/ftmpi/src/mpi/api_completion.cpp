// Completion: wait and test (one, all, any, some), cancel, free, and what a status says.
//
// The multi-completion calls stop waiting as soon as one request fails: the others may depend on what
// failed and never complete. They then return MPI_ERR_IN_STATUS (Waitany and Testany return the error
// itself), and each status's MPI_ERROR tells the request's own result: MPI_SUCCESS, its error, or
// MPI_ERR_PENDING for a request not complete yet, which stays active.
#include <climits>
#include <limits>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

#include <fmt/format.h>

#include "engine/request.hpp"
#include "mpi/api.hpp"
#include "mpi/call.hpp"
#include "mpi/errors.hpp"
#include "mpi/p2p.hpp"
#include "mpi/runtime.hpp"

namespace ftmpi::mpi {
namespace {

using Handles = std::span<MPI_Request>;

Handles handles_of(MPI_Request* array, int count) noexcept {
  return {array, static_cast<std::size_t>(count)};
}

MPI_Status* status_at(MPI_Status* statuses, std::size_t i) noexcept {
  return statuses == MPI_STATUSES_IGNORE ? MPI_STATUS_IGNORE : &statuses[i];
}

bool any_pending(Handles handles) noexcept {
  for (MPI_Request h : handles) {
    if (is_pending(h)) return true;
  }
  return false;
}

// Collects a request that is complete, null or inactive; reports its failure as the call's.
void finish_one(Call& call, MPI_Request& handle, MPI_Status* status) {
  Comm* comm = handle != MPI_REQUEST_NULL ? handle->transfer.comm : nullptr;
  const Outcome outcome = collect(handle);
  write_status(status, outcome);
  if (outcome.error != MPI_SUCCESS) fail_with(call, *comm, outcome);
}

// Collects request `i` of a multi-completion call into `status`; MPI_ERR_IN_STATUS names the first
// failure. `report_errors`: the call failed, so MPI_ERROR is set in every status it writes.
void finish_in_status(Call& call, Handles handles, std::size_t i, MPI_Status* status, bool report_errors) {
  MPI_Request& handle = handles[i];
  Comm* comm = handle != MPI_REQUEST_NULL ? handle->transfer.comm : nullptr;
  const Outcome outcome = collect(handle);
  write_status(status, outcome);
  if (report_errors && status != MPI_STATUS_IGNORE) status->MPI_ERROR = outcome.error;
  if (outcome.error != MPI_SUCCESS && !call.failed()) {
    call.raise_on(*comm);
    call.fail(MPI_ERR_IN_STATUS, fmt::format("request {} failed: {} ({})", i, describe_failure(outcome),
                                             error_class_name(outcome.error)));
  }
}

bool failed_already(MPI_Request h) noexcept { return is_pending(h) && h->done && h->outcome.error != MPI_SUCCESS; }

// A pending engine operation that its engine flag says is not complete: refresh(*h) would answer false
// (p2p.cpp), told without the call.
bool in_flight(MPI_Request h) noexcept {
  return h->op != nullptr && h->companion == nullptr && !h->done && !engine::request_complete(h->op);
}

// Refreshes the pending requests from `complete_prefix` on (0 at a call's first round; the requests before
// it were complete, without failing, at an earlier round, and are not looked at again: a window of small
// messages was otherwise refreshed whole at every round, ~24 calls per message). True when all are
// complete, or when one has failed.
bool all_complete_or_one_failed(Handles handles, std::size_t& complete_prefix) {
  bool all = true;
  for (std::size_t i = complete_prefix; i < handles.size(); ++i) {
    const MPI_Request h = handles[i];
    if (is_pending(h) && (in_flight(h) || !refresh(*h))) {
      all = false;
      continue;
    }
    if (failed_already(h)) return true;
    if (all) complete_prefix = i + 1;
  }
  return all;
}

// Waitall/Testall once all_complete_or_one_failed().
void finish_all(Call& call, Handles handles, MPI_Status* statuses) {
  bool failure = false;
  for (MPI_Request h : handles) failure = failure || failed_already(h);
  for (std::size_t i = 0; i < handles.size(); ++i) {
    MPI_Status* status = status_at(statuses, i);
    if (is_pending(handles[i]) && !handles[i]->done) {
      if (status != MPI_STATUS_IGNORE) status->MPI_ERROR = MPI_ERR_PENDING;
      continue;
    }
    finish_in_status(call, handles, i, status, failure);
  }
}

// Index of the first pending request that is complete, after refreshing them in order.
std::optional<std::size_t> first_complete(Handles handles) {
  for (std::size_t i = 0; i < handles.size(); ++i) {
    if (is_pending(handles[i]) && refresh(*handles[i])) return i;
  }
  return std::nullopt;
}

// Waitsome/Testsome: collects every request that is complete, in index order.
void finish_some(Call& call, Handles handles, int* outcount, int* indices, MPI_Status* statuses) {
  for (MPI_Request h : handles) {
    if (is_pending(h)) refresh(*h);
  }
  bool failure = false;
  for (MPI_Request h : handles) failure = failure || failed_already(h);
  std::size_t n = 0;
  for (std::size_t i = 0; i < handles.size(); ++i) {
    if (!is_pending(handles[i]) || !handles[i]->done) continue;
    indices[n] = static_cast<int>(i);
    finish_in_status(call, handles, i, status_at(statuses, n), failure);
    ++n;
  }
  *outcount = static_cast<int>(n);
}

bool check_some_args(Call& call, int incount, MPI_Request* requests, int* outcount, int* indices,
                     MPI_Status* statuses) {
  return check_requests(call, incount, requests) && check_arg(call, outcount, "outcount") &&
         (incount == 0 || (check_arg(call, indices, "array_of_indices") &&
                           check_arg(call, statuses, "array_of_statuses")));
}

// A complete generalized request the program freed: its free function runs, and the request goes.
void free_generalized(Call& call, Request& r) {
  const int rc = r.general->free(r.general->extra_state);
  runtime().requests.release(r);
  if (rc != MPI_SUCCESS) {
    call.fail(rc, fmt::format("the generalized request's free function returned {}", code_and_text(rc)));
  }
}

enum class Measure : std::uint8_t { items, elements };

// MPI_Get_count and MPI_Get_elements into an int (MPI_UNDEFINED when the number does not fit) or,
// for the _x and _c forms, an MPI_Count.
template <typename T>
int status_query(std::string_view name, const MPI_Status* status, MPI_Datatype datatype, T* count,
                 Measure measure) noexcept {
  return api_call(name, [&](Call& call) {
    if (!check_arg(call, status, "status") || !check_arg(call, count, "count")) return;
    if (status == MPI_STATUS_IGNORE) {
      call.fail(MPI_ERR_ARG, "MPI_STATUS_IGNORE has no contents");
      return;
    }
    const Datatype* type = check_datatype(call, datatype);
    if (type == nullptr) return;
    const auto bytes = static_cast<std::size_t>(status->ftmpi_bytes);
    std::optional<std::size_t> n;
    if (measure == Measure::elements) {
      n = type->elements_in(bytes);
    } else if (type->size() == 0) {
      n = 0;
    } else if (bytes % type->size() == 0) {
      n = bytes / type->size();
    }
    *count = n && *n <= static_cast<std::size_t>(std::numeric_limits<T>::max()) ? static_cast<T>(*n) : MPI_UNDEFINED;
  });
}

// How a wait or test holds the thread lock (thread_lock.hpp): shared when every request is a plain
// point-to-point one (the engine completes it), exclusive when one is a collective's, a generalized
// request or an MPI_Isendrecv, whose state is the MPI layer's. Read before the lock: a request is used
// by one thread at a time (MPI-3.1 section 12.4.4), and a handle that is not live is refused under the
// lock, exclusive.
Access access_for(const MPI_Request* requests, int count) noexcept {
  if (!ThreadLock::enabled() || requests == nullptr || count < 0) return Access::exclusive;
  for (int i = 0; i < count; ++i) {
    const MPI_Request h = requests[i];
    if (h == MPI_REQUEST_NULL) continue;
    if (!RequestPool::is_live(h) || h->companion != nullptr) return Access::exclusive;
    switch (h->mode) {
      case Mode::standard:
      case Mode::synchronous:
      case Mode::ready:
      case Mode::receive:
        break;
      default:
        return Access::exclusive;
    }
  }
  return Access::shared;
}

}  // namespace
}  // namespace ftmpi::mpi

using namespace ftmpi::mpi;

extern "C" {

int PMPI_Wait(MPI_Request* request, MPI_Status* status) {
  return api_call_as(access_for(request, 1), "MPI_Wait", [&](Call& call) {
    if (!check_arg(call, request, "request") || !check_arg(call, status, "status")) return;
    if (*request != MPI_REQUEST_NULL && check_request(call, *request) == nullptr) return;
    if (is_pending(*request)) progress_until([&] { return refresh(**request); });
    finish_one(call, *request, status);
  });
}
#pragma weak MPI_Wait = PMPI_Wait

int PMPI_Test(MPI_Request* request, int* flag, MPI_Status* status) {
  return api_call_as(access_for(request, 1), "MPI_Test", [&](Call& call) {
    if (!check_arg(call, request, "request") || !check_arg(call, flag, "flag") || !check_arg(call, status, "status")) {
      return;
    }
    if (*request != MPI_REQUEST_NULL && check_request(call, *request) == nullptr) return;
    progress_once();
    *flag = !is_pending(*request) || refresh(**request);
    if (*flag) finish_one(call, *request, status);
  });
}
#pragma weak MPI_Test = PMPI_Test

int PMPI_Waitall(int count, MPI_Request* array_of_requests, MPI_Status* array_of_statuses) {
  return api_call_as(access_for(array_of_requests, count), "MPI_Waitall", [&](Call& call) {
    if (!check_requests(call, count, array_of_requests) ||
        (count > 0 && !check_arg(call, array_of_statuses, "array_of_statuses"))) {
      return;
    }
    const Handles handles = handles_of(array_of_requests, count);
    std::size_t complete_prefix = 0;
    progress_until([&] { return all_complete_or_one_failed(handles, complete_prefix); });
    finish_all(call, handles, array_of_statuses);
  });
}
#pragma weak MPI_Waitall = PMPI_Waitall

int PMPI_Testall(int count, MPI_Request* array_of_requests, int* flag, MPI_Status* array_of_statuses) {
  return api_call_as(access_for(array_of_requests, count), "MPI_Testall", [&](Call& call) {
    if (!check_requests(call, count, array_of_requests) || !check_arg(call, flag, "flag") ||
        (count > 0 && !check_arg(call, array_of_statuses, "array_of_statuses"))) {
      return;
    }
    const Handles handles = handles_of(array_of_requests, count);
    progress_once();
    std::size_t complete_prefix = 0;
    *flag = all_complete_or_one_failed(handles, complete_prefix) ? 1 : 0;
    if (*flag) finish_all(call, handles, array_of_statuses);
  });
}
#pragma weak MPI_Testall = PMPI_Testall

int PMPI_Waitany(int count, MPI_Request* array_of_requests, int* indx, MPI_Status* status) {
  return api_call("MPI_Waitany", [&](Call& call) {
    if (!check_requests(call, count, array_of_requests) || !check_arg(call, indx, "indx") ||
        !check_arg(call, status, "status")) {
      return;
    }
    const Handles handles = handles_of(array_of_requests, count);
    if (!any_pending(handles)) {
      *indx = MPI_UNDEFINED;
      write_status(status, {});
      return;
    }
    std::optional<std::size_t> done;
    progress_until([&] { return (done = first_complete(handles)).has_value(); });
    *indx = static_cast<int>(*done);
    finish_one(call, handles[*done], status);
  });
}
#pragma weak MPI_Waitany = PMPI_Waitany

int PMPI_Testany(int count, MPI_Request* array_of_requests, int* indx, int* flag, MPI_Status* status) {
  return api_call("MPI_Testany", [&](Call& call) {
    if (!check_requests(call, count, array_of_requests) || !check_arg(call, indx, "indx") ||
        !check_arg(call, flag, "flag") || !check_arg(call, status, "status")) {
      return;
    }
    const Handles handles = handles_of(array_of_requests, count);
    *indx = MPI_UNDEFINED;
    if (!any_pending(handles)) {
      *flag = 1;
      write_status(status, {});
      return;
    }
    progress_once();
    const std::optional<std::size_t> done = first_complete(handles);
    *flag = done ? 1 : 0;
    if (done) {
      *indx = static_cast<int>(*done);
      finish_one(call, handles[*done], status);
    }
  });
}
#pragma weak MPI_Testany = PMPI_Testany

int PMPI_Waitsome(int incount, MPI_Request* array_of_requests, int* outcount, int* array_of_indices,
                  MPI_Status* array_of_statuses) {
  return api_call("MPI_Waitsome", [&](Call& call) {
    if (!check_some_args(call, incount, array_of_requests, outcount, array_of_indices, array_of_statuses)) return;
    const Handles handles = handles_of(array_of_requests, incount);
    if (!any_pending(handles)) {
      *outcount = MPI_UNDEFINED;
      return;
    }
    progress_until([&] { return first_complete(handles).has_value(); });
    finish_some(call, handles, outcount, array_of_indices, array_of_statuses);
  });
}
#pragma weak MPI_Waitsome = PMPI_Waitsome

int PMPI_Testsome(int incount, MPI_Request* array_of_requests, int* outcount, int* array_of_indices,
                  MPI_Status* array_of_statuses) {
  return api_call("MPI_Testsome", [&](Call& call) {
    if (!check_some_args(call, incount, array_of_requests, outcount, array_of_indices, array_of_statuses)) return;
    const Handles handles = handles_of(array_of_requests, incount);
    if (!any_pending(handles)) {
      *outcount = MPI_UNDEFINED;
      return;
    }
    progress_once();
    finish_some(call, handles, outcount, array_of_indices, array_of_statuses);
  });
}
#pragma weak MPI_Testsome = PMPI_Testsome

int PMPI_Cancel(MPI_Request* request) {
  return api_call("MPI_Cancel", [&](Call& call) {
    if (!check_arg(call, request, "request")) return;
    Request* r = check_request(call, *request);
    if (r == nullptr) return;
    if (!r->active) {
      call.fail(MPI_ERR_REQUEST, "the persistent request is not active");
      return;
    }
    if (r->mode == Mode::collective) {
      call.fail(MPI_ERR_REQUEST, "a nonblocking collective cannot be cancelled");
      return;
    }
    if (r->mode == Mode::generalized) {
      Generalized& g = *r->general;
      if (const int rc = g.cancel(g.extra_state, g.complete ? 1 : 0); rc != MPI_SUCCESS) {
        call.fail(rc, fmt::format("the generalized request's cancel function returned {}", code_and_text(rc)));
      }
      return;
    }
    // A request complete already (PROC_NULL, buffered, or done) has nothing left to cancel.
    if (!r->done) engine().cancel(r->op);
  });
}
#pragma weak MPI_Cancel = PMPI_Cancel

int PMPI_Request_free(MPI_Request* request) {
  return api_call("MPI_Request_free", [&](Call& call) {
    if (!check_arg(call, request, "request")) return;
    Request* r = check_request(call, *request);
    if (r == nullptr) return;
    if (r->mode == Mode::collective && r->active && !r->done) {
      call.fail(MPI_ERR_REQUEST, "a nonblocking collective cannot be freed before it completes");
      return;
    }
    // Its send may still read the staged copy this request owns.
    if (r->companion != nullptr && !refresh(*r)) {
      call.fail(MPI_ERR_REQUEST, "an MPI_Isendrecv cannot be freed before it completes");
      return;
    }
    if (r->mode == Mode::generalized && r->general->poll) {  // the library's own: nothing to run
      runtime().requests.release(*r);
      *request = MPI_REQUEST_NULL;
      return;
    }
    if (r->mode == Mode::generalized) {
      // Not complete yet: MPI_Grequest_complete will run the free function and release it.
      *request = MPI_REQUEST_NULL;
      if (!r->general->complete) {
        r->general->freed = true;
        return;
      }
      free_generalized(call, *r);
      return;
    }
    // The engine finishes an operation still in flight on its own, from or into the pieces' view, which
    // must then outlive the request.
    if (r->active && !r->done && r->mode != Mode::collective) {
      const bool finished = engine().is_complete(r->op, nullptr);
      engine().release(r->op);
      if (r->pieces && !finished) runtime().orphaned_pieces.push_back(std::move(r->pieces));
    }
    runtime().requests.release(*r);
    *request = MPI_REQUEST_NULL;
  });
}
#pragma weak MPI_Request_free = PMPI_Request_free

int PMPI_Test_cancelled(const MPI_Status* status, int* flag) {
  return api_call("MPI_Test_cancelled", [&](Call& call) {
    if (!check_arg(call, status, "status") || !check_arg(call, flag, "flag")) return;
    if (status == MPI_STATUS_IGNORE) {
      call.fail(MPI_ERR_ARG, "MPI_STATUS_IGNORE has no contents");
      return;
    }
    *flag = status->ftmpi_cancelled;
  });
}
#pragma weak MPI_Test_cancelled = PMPI_Test_cancelled

int PMPI_Get_count(const MPI_Status* status, MPI_Datatype datatype, int* count) {
  return status_query("MPI_Get_count", status, datatype, count, Measure::items);
}
#pragma weak MPI_Get_count = PMPI_Get_count

int PMPI_Get_elements(const MPI_Status* status, MPI_Datatype datatype, int* count) {
  return status_query("MPI_Get_elements", status, datatype, count, Measure::elements);
}
#pragma weak MPI_Get_elements = PMPI_Get_elements

int PMPI_Get_count_c(const MPI_Status* status, MPI_Datatype datatype, MPI_Count* count) {
  return status_query("MPI_Get_count_c", status, datatype, count, Measure::items);
}
#pragma weak MPI_Get_count_c = PMPI_Get_count_c

int PMPI_Get_elements_x(const MPI_Status* status, MPI_Datatype datatype, MPI_Count* count) {
  return status_query("MPI_Get_elements_x", status, datatype, count, Measure::elements);
}
#pragma weak MPI_Get_elements_x = PMPI_Get_elements_x

int PMPI_Get_elements_c(const MPI_Status* status, MPI_Datatype datatype, MPI_Count* count) {
  return status_query("MPI_Get_elements_c", status, datatype, count, Measure::elements);
}
#pragma weak MPI_Get_elements_c = PMPI_Get_elements_c

int PMPI_Grequest_start(MPI_Grequest_query_function* query_fn, MPI_Grequest_free_function* free_fn,
                        MPI_Grequest_cancel_function* cancel_fn, void* extra_state, MPI_Request* request) {
  return api_call("MPI_Grequest_start", [&](Call& call) {
    if (!check_arg(call, reinterpret_cast<const void*>(query_fn), "query_fn") ||
        !check_arg(call, reinterpret_cast<const void*>(free_fn), "free_fn") ||
        !check_arg(call, reinterpret_cast<const void*>(cancel_fn), "cancel_fn") || !check_arg(call, request, "request")) {
      return;
    }
    Transfer transfer;
    transfer.comm = find_comm(MPI_COMM_SELF);  // its errors go to MPI_COMM_SELF's handler
    Request& r = runtime().requests.acquire(Mode::generalized, transfer, false);
    r.active = true;
    r.general = std::make_unique<Generalized>(Generalized{query_fn, free_fn, cancel_fn, extra_state});
    *request = &r;
  });
}
#pragma weak MPI_Grequest_start = PMPI_Grequest_start

int PMPI_Grequest_complete(MPI_Request request) {
  return api_call("MPI_Grequest_complete", [&](Call& call) {
    Request* r = check_request(call, request);
    if (r == nullptr) return;
    if (r->mode != Mode::generalized || r->general->complete) {
      call.fail(MPI_ERR_REQUEST, r->mode != Mode::generalized ? "not a generalized request"
                                                              : "the generalized request is complete already");
      return;
    }
    r->general->complete = true;
    if (r->general->freed) free_generalized(call, *r);
  });
}
#pragma weak MPI_Grequest_complete = PMPI_Grequest_complete

int PMPI_Status_set_elements_x(MPI_Status* status, MPI_Datatype datatype, MPI_Count count) {
  return api_call("MPI_Status_set_elements_x", [&](Call& call) {
    if (!check_arg(call, status, "status")) return;
    const Datatype* type = check_datatype(call, datatype);
    if (type == nullptr) return;
    if (count < 0) {
      call.fail(MPI_ERR_COUNT, fmt::format("negative count {}", count));
      return;
    }
    // Whole items of the type, so that MPI_Get_elements and MPI_Get_count read back what was set.
    const std::size_t per_item = type->elements_in(type->size()).value_or(0);
    const auto n = static_cast<std::size_t>(count);
    if (per_item == 0 ? n != 0 : n % per_item != 0) {
      call.fail(MPI_ERR_COUNT, fmt::format("{} elements are not whole items of the type ({} elements each)", n, per_item));
      return;
    }
    status->ftmpi_bytes = per_item == 0 ? 0 : static_cast<MPI_Count>(n / per_item * type->size());
  });
}
#pragma weak MPI_Status_set_elements_x = PMPI_Status_set_elements_x

int PMPI_Status_set_elements(MPI_Status* status, MPI_Datatype datatype, int count) {
  return PMPI_Status_set_elements_x(status, datatype, count);
}
#pragma weak MPI_Status_set_elements = PMPI_Status_set_elements

int PMPI_Status_set_cancelled(MPI_Status* status, int flag) {
  return api_call("MPI_Status_set_cancelled", [&](Call& call) {
    if (check_arg(call, status, "status")) status->ftmpi_cancelled = flag != 0 ? 1 : 0;
  });
}
#pragma weak MPI_Status_set_cancelled = PMPI_Status_set_cancelled

// A test that leaves the request alone: complete or not, it stays for MPI_Wait or MPI_Test to collect.
int PMPI_Request_get_status(MPI_Request request, int* flag, MPI_Status* status) {
  return api_call("MPI_Request_get_status", [&](Call& call) {
    if (!check_arg(call, flag, "flag") || !check_arg(call, status, "status")) return;
    if (request != MPI_REQUEST_NULL && check_request(call, request) == nullptr) return;
    progress_once();
    *flag = !is_pending(request) || refresh(*request);
    if (*flag) write_status(status, is_pending(request) ? request->outcome : Outcome{});
  });
}
#pragma weak MPI_Request_get_status = PMPI_Request_get_status

}  // extern "C"

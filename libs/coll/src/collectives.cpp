// The front end: checks arguments, resolves kInPlace, asks the dispatcher, builds the schedule.
#include "ftmpi/coll/collectives.hpp"

#include <algorithm>
#include <numeric>
#include <string>
#include <vector>

#include "algorithms.hpp"

namespace ftmpi::coll {
namespace {

using base::Errc;
using base::Result;
using base::Status;
using detail::invalid;
using detail::ScheduleBuilder;
using detail::started;

Status check_call(const Call& call, std::string_view collective) {
  if (call.tag < 0) return invalid(collective, "negative tag " + std::to_string(call.tag));
  if (call.transport.size() < 1) return invalid(collective, "empty communicator");
  return {};
}

Status check_root(const Call& call, int root, std::string_view collective) {
  if (Status s = check_call(call, collective); !s) return s;
  if (root < 0 || root >= call.transport.size()) {
    return invalid(collective, "root " + std::to_string(root) + " is not a rank of a communicator of " +
                                   std::to_string(call.transport.size()));
  }
  return {};
}

Status check_reduction(const Reduction& reduction, std::string_view collective) {
  if (!reduction.is_user() && (reduction.op() == Op::replace || reduction.op() == Op::no_op)) {
    return invalid(collective, std::string(to_string(reduction.op())) + " is only for one-sided accumulates");
  }
  return {};
}

template <typename Span>
Status check_per_rank(const Call& call, Span values, std::string_view what, std::string_view collective) {
  if (values.size() != static_cast<std::size_t>(call.transport.size())) {
    return invalid(collective, std::string(what) + " has " + std::to_string(values.size()) +
                                   " entries for " + std::to_string(call.transport.size()) + " ranks");
  }
  return {};
}

Status checked_product(std::size_t a, std::size_t b, std::size_t& out, std::string_view collective) {
  if (__builtin_mul_overflow(a, b, &out)) return invalid(collective, "buffer size overflows");
  return {};
}

Status not_in_place(const void* buffer, std::string_view which, std::string_view collective) {
  if (is_in_place(buffer)) return invalid(collective, std::string(which) + " cannot be in place here");
  return {};
}

Shape shape_of(const Call& call, std::size_t bytes, std::size_t count = 0, bool commutative = true) {
  return Shape{call.transport.size(), bytes, count, commutative};
}

Algorithm pick(const Call& call, Collective c, const Shape& shape) { return choose(call.tuning, c, shape); }

auto* bytes_of(void* p) { return static_cast<std::byte*>(p); }
auto* bytes_of(const void* p) { return static_cast<const std::byte*>(p); }

Status completed(Result<Schedule> schedule) {
  if (!schedule) return schedule.status();
  return schedule->wait();
}

// --- builders ------------------------------------------------------------------------------------

Result<Schedule> build_barrier(const Call& call) {
  if (Status s = check_call(call, "barrier"); !s) return s;
  ScheduleBuilder b(call.transport, call.tag);
  detail::barrier_dissemination(b);
  return std::move(b).finish();
}

Result<Schedule> build_bcast(const Call& call, void* buffer, std::size_t bytes, int root) {
  if (Status s = check_root(call, root, "bcast"); !s) return s;
  ScheduleBuilder b(call.transport, call.tag);
  std::byte* data = bytes_of(buffer);
  switch (pick(call, Collective::bcast, shape_of(call, bytes))) {
    case Algorithm::pipeline: detail::bcast_pipeline(b, data, bytes, root, call.tuning.segment_size); break;
    case Algorithm::scatter_allgather: detail::bcast_scatter_allgather(b, data, bytes, root); break;
    default: detail::bcast_binomial(b, data, bytes, root); break;
  }
  return std::move(b).finish();
}

Result<Schedule> build_reduce(const Call& call, const void* send, void* recv, std::size_t count,
                              const Reduction& reduction, int root) {
  if (Status s = check_root(call, root, "reduce"); !s) return s;
  if (Status s = check_reduction(reduction, "reduce"); !s) return s;
  if (call.transport.rank() == root) {
    if (Status s = not_in_place(recv, "recv", "reduce"); !s) return s;
    if (is_in_place(send)) send = recv;
  } else if (Status s = not_in_place(send, "send (not at the root)", "reduce"); !s) {
    return s;
  }
  std::size_t bytes = 0;
  if (Status s = checked_product(count, reduction.element_size(), bytes, "reduce"); !s) return s;
  ScheduleBuilder b(call.transport, call.tag, &reduction);
  const Shape shape = shape_of(call, bytes, count, reduction.is_commutative());
  switch (pick(call, Collective::reduce, shape)) {
    case Algorithm::pipeline:
      detail::reduce_pipeline(b, bytes_of(send), bytes_of(recv), count, root, call.tuning.segment_size);
      break;
    default: detail::reduce_binomial(b, bytes_of(send), bytes_of(recv), count, root); break;
  }
  return std::move(b).finish();
}

Result<Schedule> build_allreduce(const Call& call, const void* send, void* recv, std::size_t count,
                                 const Reduction& reduction) {
  if (Status s = check_call(call, "allreduce"); !s) return s;
  if (Status s = check_reduction(reduction, "allreduce"); !s) return s;
  if (Status s = not_in_place(recv, "recv", "allreduce"); !s) return s;
  if (is_in_place(send)) send = recv;
  std::size_t bytes = 0;
  if (Status s = checked_product(count, reduction.element_size(), bytes, "allreduce"); !s) return s;
  ScheduleBuilder b(call.transport, call.tag, &reduction);
  const Shape shape = shape_of(call, bytes, count, reduction.is_commutative());
  switch (pick(call, Collective::allreduce, shape)) {
    case Algorithm::rabenseifner: detail::allreduce_rabenseifner(b, bytes_of(send), bytes_of(recv), count); break;
    case Algorithm::ring: detail::allreduce_ring(b, bytes_of(send), bytes_of(recv), count); break;
    default: detail::allreduce_recursive_doubling(b, bytes_of(send), bytes_of(recv), count); break;
  }
  return std::move(b).finish();
}

Result<Schedule> build_gather(const Call& call, const void* send, void* recv, std::size_t bytes, int root) {
  if (Status s = check_root(call, root, "gather"); !s) return s;
  const int n = call.transport.size();
  std::size_t total = 0;
  if (Status s = checked_product(bytes, static_cast<std::size_t>(n), total, "gather"); !s) return s;
  if (call.transport.rank() == root) {
    if (Status s = not_in_place(recv, "recv", "gather"); !s) return s;
    if (is_in_place(send)) send = detail::at(recv, static_cast<std::ptrdiff_t>(bytes) * root);
  } else if (Status s = not_in_place(send, "send (not at the root)", "gather"); !s) {
    return s;
  }
  ScheduleBuilder b(call.transport, call.tag);
  switch (pick(call, Collective::gather, shape_of(call, bytes))) {
    case Algorithm::linear: detail::gather_linear(b, bytes_of(send), bytes_of(recv), bytes, root); break;
    default: detail::gather_binomial(b, bytes_of(send), bytes_of(recv), bytes, root); break;
  }
  return std::move(b).finish();
}

Result<Schedule> build_gatherv(const Call& call, const void* send, std::size_t send_bytes, void* recv,
                               Counts recv_bytes, Displs recv_displs, int root) {
  if (Status s = check_root(call, root, "gatherv"); !s) return s;
  const int r = call.transport.rank();
  if (r == root) {
    if (Status s = check_per_rank(call, recv_bytes, "recv_bytes", "gatherv"); !s) return s;
    if (Status s = check_per_rank(call, recv_displs, "recv_displs", "gatherv"); !s) return s;
    if (Status s = not_in_place(recv, "recv", "gatherv"); !s) return s;
    const auto me = static_cast<std::size_t>(r);
    if (is_in_place(send)) {
      send = detail::at(recv, recv_displs[me]);
      send_bytes = recv_bytes[me];
    } else if (send_bytes != recv_bytes[me]) {
      return invalid("gatherv", "the root sends " + std::to_string(send_bytes) + " bytes but expects " +
                                    std::to_string(recv_bytes[me]) + " from itself");
    }
  } else if (Status s = not_in_place(send, "send (not at the root)", "gatherv"); !s) {
    return s;
  }
  ScheduleBuilder b(call.transport, call.tag);
  detail::gatherv_linear(b, bytes_of(send), send_bytes, bytes_of(recv), recv_bytes, recv_displs, root);
  return std::move(b).finish();
}

Result<Schedule> build_scatter(const Call& call, const void* send, void* recv, std::size_t bytes, int root) {
  if (Status s = check_root(call, root, "scatter"); !s) return s;
  std::size_t total = 0;
  if (Status s = checked_product(bytes, static_cast<std::size_t>(call.transport.size()), total, "scatter"); !s) {
    return s;
  }
  std::byte* into = bytes_of(recv);
  if (call.transport.rank() == root) {
    if (Status s = not_in_place(send, "send", "scatter"); !s) return s;
    if (is_in_place(recv)) into = nullptr;
  } else if (Status s = not_in_place(recv, "recv (not at the root)", "scatter"); !s) {
    return s;
  }
  ScheduleBuilder b(call.transport, call.tag);
  switch (pick(call, Collective::scatter, shape_of(call, bytes))) {
    case Algorithm::linear: detail::scatter_linear(b, bytes_of(send), into, bytes, root); break;
    default: detail::scatter_binomial(b, bytes_of(send), into, bytes, root); break;
  }
  return std::move(b).finish();
}

Result<Schedule> build_scatterv(const Call& call, const void* send, Counts send_bytes, Displs send_displs,
                                void* recv, std::size_t recv_bytes, int root) {
  if (Status s = check_root(call, root, "scatterv"); !s) return s;
  std::byte* into = bytes_of(recv);
  if (call.transport.rank() == root) {
    if (Status s = check_per_rank(call, send_bytes, "send_bytes", "scatterv"); !s) return s;
    if (Status s = check_per_rank(call, send_displs, "send_displs", "scatterv"); !s) return s;
    if (Status s = not_in_place(send, "send", "scatterv"); !s) return s;
    const auto me = static_cast<std::size_t>(root);
    if (is_in_place(recv)) {
      into = nullptr;
    } else if (recv_bytes != send_bytes[me]) {
      return invalid("scatterv", "the root sends itself " + std::to_string(send_bytes[me]) +
                                     " bytes but expects " + std::to_string(recv_bytes));
    }
  } else if (Status s = not_in_place(recv, "recv (not at the root)", "scatterv"); !s) {
    return s;
  }
  ScheduleBuilder b(call.transport, call.tag);
  detail::scatterv_linear(b, bytes_of(send), send_bytes, send_displs, into, recv_bytes, root);
  return std::move(b).finish();
}

Result<Schedule> build_allgather(const Call& call, const void* send, void* recv, std::size_t bytes) {
  if (Status s = check_call(call, "allgather"); !s) return s;
  if (Status s = not_in_place(recv, "recv", "allgather"); !s) return s;
  std::size_t total = 0;
  if (Status s = checked_product(bytes, static_cast<std::size_t>(call.transport.size()), total, "allgather"); !s) {
    return s;
  }
  if (is_in_place(send)) send = detail::at(recv, static_cast<std::ptrdiff_t>(bytes) * call.transport.rank());
  ScheduleBuilder b(call.transport, call.tag);
  switch (pick(call, Collective::allgather, shape_of(call, total))) {
    case Algorithm::recursive_doubling:
      detail::allgather_recursive_doubling(b, bytes_of(send), bytes_of(recv), bytes);
      break;
    case Algorithm::bruck: detail::allgather_bruck(b, bytes_of(send), bytes_of(recv), bytes); break;
    default: detail::allgather_ring(b, bytes_of(send), bytes_of(recv), bytes); break;
  }
  return std::move(b).finish();
}

Result<Schedule> build_allgatherv(const Call& call, const void* send, void* recv, Counts recv_bytes,
                                  Displs recv_displs) {
  if (Status s = check_call(call, "allgatherv"); !s) return s;
  if (Status s = check_per_rank(call, recv_bytes, "recv_bytes", "allgatherv"); !s) return s;
  if (Status s = check_per_rank(call, recv_displs, "recv_displs", "allgatherv"); !s) return s;
  if (Status s = not_in_place(recv, "recv", "allgatherv"); !s) return s;
  if (is_in_place(send)) send = detail::at(recv, recv_displs[static_cast<std::size_t>(call.transport.rank())]);
  const std::size_t total = std::accumulate(recv_bytes.begin(), recv_bytes.end(), std::size_t{0});
  ScheduleBuilder b(call.transport, call.tag);
  switch (pick(call, Collective::allgatherv, shape_of(call, total))) {
    case Algorithm::recursive_doubling:
      detail::allgatherv_recursive_doubling(b, bytes_of(send), bytes_of(recv), recv_bytes, recv_displs);
      break;
    default: detail::allgatherv_ring(b, bytes_of(send), bytes_of(recv), recv_bytes, recv_displs); break;
  }
  return std::move(b).finish();
}

Result<Schedule> build_alltoallv(const Call& call, Collective collective, const void* send, Counts send_bytes,
                                 Displs send_displs, void* recv, Counts recv_bytes, Displs recv_displs,
                                 std::size_t block_bytes) {
  const std::string_view name = to_string(collective);
  if (Status s = check_call(call, name); !s) return s;
  if (Status s = not_in_place(recv, "recv", name); !s) return s;
  const bool in_place = is_in_place(send);
  if (!in_place) {
    if (Status s = check_per_rank(call, send_bytes, "send_bytes", name); !s) return s;
    if (Status s = check_per_rank(call, send_displs, "send_displs", name); !s) return s;
  }
  if (Status s = check_per_rank(call, recv_bytes, "recv_bytes", name); !s) return s;
  if (Status s = check_per_rank(call, recv_displs, "recv_displs", name); !s) return s;
  ScheduleBuilder b(call.transport, call.tag);
  const std::byte* from = in_place ? nullptr : bytes_of(send);
  switch (pick(call, collective, shape_of(call, block_bytes))) {
    case Algorithm::pairwise:
      detail::alltoallv_pairwise(b, from, send_bytes, send_displs, bytes_of(recv), recv_bytes, recv_displs,
                                 in_place);
      break;
    default:
      detail::alltoallv_linear(b, from, send_bytes, send_displs, bytes_of(recv), recv_bytes, recv_displs,
                               in_place);
      break;
  }
  return std::move(b).finish();
}

Result<Schedule> build_alltoall(const Call& call, const void* send, void* recv, std::size_t bytes) {
  const auto n = static_cast<std::size_t>(std::max(call.transport.size(), 0));
  std::size_t total = 0;
  if (Status s = checked_product(bytes, n, total, "alltoall"); !s) return s;
  const std::vector<std::size_t> counts(n, bytes);
  std::vector<std::ptrdiff_t> displs(n);
  for (std::size_t i = 0; i < n; ++i) displs[i] = static_cast<std::ptrdiff_t>(i * bytes);
  return build_alltoallv(call, Collective::alltoall, send, counts, displs, recv, counts, displs, bytes);
}

Result<Schedule> build_reduce_scatter(const Call& call, Collective collective, const void* send, void* recv,
                                      Counts counts, const Reduction& reduction) {
  const std::string_view name = to_string(collective);
  if (Status s = check_call(call, name); !s) return s;
  if (Status s = check_reduction(reduction, name); !s) return s;
  if (Status s = check_per_rank(call, counts, "recv_counts", name); !s) return s;
  if (Status s = not_in_place(recv, "recv", name); !s) return s;
  if (is_in_place(send)) send = recv;
  const std::size_t total = std::accumulate(counts.begin(), counts.end(), std::size_t{0});
  std::size_t bytes = 0;
  if (Status s = checked_product(total, reduction.element_size(), bytes, name); !s) return s;
  ScheduleBuilder b(call.transport, call.tag, &reduction);
  switch (pick(call, collective, shape_of(call, bytes, total, reduction.is_commutative()))) {
    case Algorithm::recursive_halving:
      detail::reduce_scatter_recursive_halving(b, bytes_of(send), bytes_of(recv), counts);
      break;
    default: detail::reduce_scatter_pairwise(b, bytes_of(send), bytes_of(recv), counts); break;
  }
  return std::move(b).finish();
}

Result<Schedule> build_scan(const Call& call, Collective collective, const void* send, void* recv,
                            std::size_t count, const Reduction& reduction) {
  const std::string_view name = to_string(collective);
  if (Status s = check_call(call, name); !s) return s;
  if (Status s = check_reduction(reduction, name); !s) return s;
  if (Status s = not_in_place(recv, "recv", name); !s) return s;
  if (is_in_place(send)) send = recv;
  std::size_t bytes = 0;
  if (Status s = checked_product(count, reduction.element_size(), bytes, name); !s) return s;
  ScheduleBuilder b(call.transport, call.tag, &reduction);
  const bool pipeline =
      pick(call, collective, shape_of(call, bytes, count, reduction.is_commutative())) == Algorithm::pipeline;
  const std::size_t segment = call.tuning.segment_size;
  if (collective == Collective::scan) {
    if (pipeline) detail::scan_pipeline(b, bytes_of(send), bytes_of(recv), count, segment);
    else detail::scan_recursive_doubling(b, bytes_of(send), bytes_of(recv), count);
  } else {
    if (pipeline) detail::exscan_pipeline(b, bytes_of(send), bytes_of(recv), count, segment);
    else detail::exscan_recursive_doubling(b, bytes_of(send), bytes_of(recv), count);
  }
  return std::move(b).finish();
}

}  // namespace

// --- the API: i-variants start the schedule, blocking ones wait for it -------------------------------

Result<Schedule> ibarrier(const Call& call) { return started(build_barrier(call)); }
Status barrier(const Call& call) { return completed(build_barrier(call)); }

Result<Schedule> ibcast(const Call& call, void* buffer, std::size_t bytes, int root) {
  return started(build_bcast(call, buffer, bytes, root));
}
Status bcast(const Call& call, void* buffer, std::size_t bytes, int root) {
  return completed(build_bcast(call, buffer, bytes, root));
}

Result<Schedule> ireduce(const Call& call, const void* send, void* recv, std::size_t count,
                         const Reduction& reduction, int root) {
  return started(build_reduce(call, send, recv, count, reduction, root));
}
Status reduce(const Call& call, const void* send, void* recv, std::size_t count, const Reduction& reduction,
              int root) {
  return completed(build_reduce(call, send, recv, count, reduction, root));
}

Result<Schedule> iallreduce(const Call& call, const void* send, void* recv, std::size_t count,
                            const Reduction& reduction) {
  return started(build_allreduce(call, send, recv, count, reduction));
}
Status allreduce(const Call& call, const void* send, void* recv, std::size_t count, const Reduction& reduction) {
  return completed(build_allreduce(call, send, recv, count, reduction));
}

Result<Schedule> igather(const Call& call, const void* send, void* recv, std::size_t bytes, int root) {
  return started(build_gather(call, send, recv, bytes, root));
}
Status gather(const Call& call, const void* send, void* recv, std::size_t bytes, int root) {
  return completed(build_gather(call, send, recv, bytes, root));
}

Result<Schedule> igatherv(const Call& call, const void* send, std::size_t send_bytes, void* recv,
                          Counts recv_bytes, Displs recv_displs, int root) {
  return started(build_gatherv(call, send, send_bytes, recv, recv_bytes, recv_displs, root));
}
Status gatherv(const Call& call, const void* send, std::size_t send_bytes, void* recv, Counts recv_bytes,
               Displs recv_displs, int root) {
  return completed(build_gatherv(call, send, send_bytes, recv, recv_bytes, recv_displs, root));
}

Result<Schedule> iscatter(const Call& call, const void* send, void* recv, std::size_t bytes, int root) {
  return started(build_scatter(call, send, recv, bytes, root));
}
Status scatter(const Call& call, const void* send, void* recv, std::size_t bytes, int root) {
  return completed(build_scatter(call, send, recv, bytes, root));
}

Result<Schedule> iscatterv(const Call& call, const void* send, Counts send_bytes, Displs send_displs, void* recv,
                           std::size_t recv_bytes, int root) {
  return started(build_scatterv(call, send, send_bytes, send_displs, recv, recv_bytes, root));
}
Status scatterv(const Call& call, const void* send, Counts send_bytes, Displs send_displs, void* recv,
                std::size_t recv_bytes, int root) {
  return completed(build_scatterv(call, send, send_bytes, send_displs, recv, recv_bytes, root));
}

Result<Schedule> iallgather(const Call& call, const void* send, void* recv, std::size_t bytes) {
  return started(build_allgather(call, send, recv, bytes));
}
Status allgather(const Call& call, const void* send, void* recv, std::size_t bytes) {
  return completed(build_allgather(call, send, recv, bytes));
}

Result<Schedule> iallgatherv(const Call& call, const void* send, void* recv, Counts recv_bytes,
                             Displs recv_displs) {
  return started(build_allgatherv(call, send, recv, recv_bytes, recv_displs));
}
Status allgatherv(const Call& call, const void* send, void* recv, Counts recv_bytes, Displs recv_displs) {
  return completed(build_allgatherv(call, send, recv, recv_bytes, recv_displs));
}

Result<Schedule> ialltoall(const Call& call, const void* send, void* recv, std::size_t bytes) {
  return started(build_alltoall(call, send, recv, bytes));
}
Status alltoall(const Call& call, const void* send, void* recv, std::size_t bytes) {
  return completed(build_alltoall(call, send, recv, bytes));
}

Result<Schedule> ialltoallv(const Call& call, const void* send, Counts send_bytes, Displs send_displs, void* recv,
                            Counts recv_bytes, Displs recv_displs) {
  return started(build_alltoallv(call, Collective::alltoallv, send, send_bytes, send_displs, recv, recv_bytes,
                                 recv_displs, 0));
}
Status alltoallv(const Call& call, const void* send, Counts send_bytes, Displs send_displs, void* recv,
                 Counts recv_bytes, Displs recv_displs) {
  return completed(build_alltoallv(call, Collective::alltoallv, send, send_bytes, send_displs, recv, recv_bytes,
                                   recv_displs, 0));
}

Result<Schedule> ireduce_scatter(const Call& call, const void* send, void* recv, Counts recv_counts,
                                 const Reduction& reduction) {
  return started(build_reduce_scatter(call, Collective::reduce_scatter, send, recv, recv_counts, reduction));
}
Status reduce_scatter(const Call& call, const void* send, void* recv, Counts recv_counts,
                      const Reduction& reduction) {
  return completed(build_reduce_scatter(call, Collective::reduce_scatter, send, recv, recv_counts, reduction));
}

Result<Schedule> ireduce_scatter_block(const Call& call, const void* send, void* recv, std::size_t count,
                                       const Reduction& reduction) {
  const std::vector<std::size_t> counts(static_cast<std::size_t>(std::max(call.transport.size(), 0)), count);
  return started(build_reduce_scatter(call, Collective::reduce_scatter_block, send, recv, counts, reduction));
}
Status reduce_scatter_block(const Call& call, const void* send, void* recv, std::size_t count,
                            const Reduction& reduction) {
  const std::vector<std::size_t> counts(static_cast<std::size_t>(std::max(call.transport.size(), 0)), count);
  return completed(build_reduce_scatter(call, Collective::reduce_scatter_block, send, recv, counts, reduction));
}

Result<Schedule> iscan(const Call& call, const void* send, void* recv, std::size_t count,
                       const Reduction& reduction) {
  return started(build_scan(call, Collective::scan, send, recv, count, reduction));
}
Status scan(const Call& call, const void* send, void* recv, std::size_t count, const Reduction& reduction) {
  return completed(build_scan(call, Collective::scan, send, recv, count, reduction));
}

Result<Schedule> iexscan(const Call& call, const void* send, void* recv, std::size_t count,
                         const Reduction& reduction) {
  return started(build_scan(call, Collective::exscan, send, recv, count, reduction));
}
Status exscan(const Call& call, const void* send, void* recv, std::size_t count, const Reduction& reduction) {
  return completed(build_scan(call, Collective::exscan, send, recv, count, reduction));
}

}  // namespace ftmpi::coll

#include "mpi/collective.hpp"

#include <algorithm>
#include <cstring>
#include <string>
#include <utility>

#include <fmt/format.h>

#include "mpi/call.hpp"
#include "mpi/errors.hpp"
#include "mpi/runtime.hpp"

namespace ftmpi::mpi {
namespace {

// Widens `count` packed pairs (value, int) into their C struct, padding zeroed.
void widen_pairs(const std::byte* packed, std::size_t count, const ReductionPlan& plan, std::byte* wide) {
  const std::size_t packed_pair = plan.pair_value + sizeof(int);
  std::memset(wide, 0, count * plan.pair_extent);
  for (std::size_t k = 0; k < count; ++k) {
    std::memcpy(wide + k * plan.pair_extent, packed + k * packed_pair, plan.pair_value);
    std::memcpy(wide + k * plan.pair_extent + plan.pair_index_at, packed + k * packed_pair + plan.pair_value,
                sizeof(int));
  }
}

void narrow_pairs(const std::byte* wide, std::size_t count, const ReductionPlan& plan, std::byte* packed) {
  const std::size_t packed_pair = plan.pair_value + sizeof(int);
  for (std::size_t k = 0; k < count; ++k) {
    std::memcpy(packed + k * packed_pair, wide + k * plan.pair_extent, plan.pair_value);
    std::memcpy(packed + k * packed_pair + plan.pair_value, wide + k * plan.pair_extent + plan.pair_index_at,
                sizeof(int));
  }
}

}  // namespace

void CollOpDeleter::operator()(CollOp* op) const noexcept {
  // A failed collective may leave messages in flight into its scratch buffers: keep them.
  if (op->done() && op->error() != MPI_SUCCESS) {
    try {
      runtime().failed_collectives.emplace_back(op);
      return;
    } catch (...) {
      return;  // leak it rather than free memory the engine may still write
    }
  }
  // Keep one op for the next call (every blocking collective makes one; a small broadcast or barrier
  // costs less than the allocation would).
  Runtime& rt = runtime();
  if (rt.spare_coll_op == nullptr) {
    op->clear();
    rt.spare_coll_op = op;
    return;
  }
  delete op;
}

CollOpPtr make_coll_op(Comm& comm) {
  Runtime& rt = runtime();
  CollOp* op = rt.spare_coll_op;
  if (op == nullptr) return CollOpPtr(new CollOp(comm));
  rt.spare_coll_op = nullptr;
  op->comm_ = &comm;
  return CollOpPtr(op);
}

CollOp::~CollOp() {
  if (pending_) std::erase(runtime().pending_collectives, this);
}

void CollOp::clear() noexcept {
  if (pending_) std::erase(runtime().pending_collectives, this);
  schedule_.reset();
  scratch_.clear();
  finishers_.clear();
  next_ = nullptr;
  tag_ = -1;
  user_ = UserOpContext{};
  done_ = false;
  pending_ = false;
  error_ = MPI_SUCCESS;
  reason_.clear();
}

const coll::Tuning& CollOp::runtime_tuning() noexcept { return runtime().tuning; }

std::byte* CollOp::scratch(std::size_t bytes) {
  scratch_.push_back(std::make_unique_for_overwrite<std::byte[]>(std::max<std::size_t>(bytes, 1)));
  return scratch_.back().get();
}

std::byte* CollOp::packed_in(const void* buf, std::size_t count, const Datatype& type) {
  if (type.dense()) return static_cast<std::byte*>(const_cast<void*>(buf));
  std::byte* packed = scratch(type.layout->packed_bytes(count));
  type.layout->pack(buf, count, packed);
  return packed;
}

std::byte* CollOp::packed_out(void* buf, std::size_t count, const Datatype& type, bool fill, std::size_t drain) {
  if (type.dense()) return static_cast<std::byte*>(buf);
  const std::shared_ptr<const Layout>& layout = type.layout;
  std::byte* packed = scratch(layout->packed_bytes(count));
  if (fill) layout->pack(buf, count, packed);
  if (drain != 0) {
    on_done([layout, packed, buf, bytes = layout->packed_bytes(drain)] { layout->unpack(packed, bytes, buf); });
  }
  return packed;
}

std::byte* CollOp::elements_in(const void* buf, std::size_t count, const ReductionPlan& plan) {
  if (plan.direct) return static_cast<std::byte*>(const_cast<void*>(buf));
  std::byte* packed = scratch(plan.layout->packed_bytes(count));
  plan.layout->pack(buf, count, packed);
  if (plan.pair_value == 0) return packed;
  const std::size_t pairs = count * plan.elements_per_item;
  std::byte* wide = scratch(pairs * plan.pair_extent);
  widen_pairs(packed, pairs, plan, wide);
  return wide;
}

std::byte* CollOp::elements_out(void* buf, std::size_t count, const ReductionPlan& plan, bool fill,
                                std::size_t drain) {
  if (plan.direct) return static_cast<std::byte*>(buf);
  const std::shared_ptr<const Layout>& layout = plan.layout;
  if (plan.pair_value == 0) {
    std::byte* packed = scratch(layout->packed_bytes(count));
    if (fill) layout->pack(buf, count, packed);
    if (drain != 0) {
      on_done([layout, packed, buf, bytes = layout->packed_bytes(drain)] { layout->unpack(packed, bytes, buf); });
    }
    return packed;
  }
  std::byte* wide = fill ? elements_in(buf, count, plan) : scratch(count * plan.elements_per_item * plan.pair_extent);
  if (drain != 0) {
    std::byte* packed = scratch(layout->packed_bytes(drain));
    on_done([plan, wide, packed, buf, drain] {
      narrow_pairs(wide, drain * plan.elements_per_item, plan, packed);
      plan.layout->unpack(packed, plan.layout->packed_bytes(drain), buf);
    });
  }
  return wide;
}

void CollOp::start(base::Result<coll::Schedule> schedule) {
  if (!schedule) {
    fail(schedule.status());
    return;
  }
  schedule_.emplace(std::move(*schedule));
}

void CollOp::fail(const base::Status& status) {
  done_ = true;
  switch (status.code()) {
    case base::Errc::out_of_range: error_ = MPI_ERR_TRUNCATE; break;
    default: error_ = error_class_of(status.code()); break;
  }
  reason_ = status.message();
}

bool CollOp::test() {
  if (done_) return true;
  const base::Result<bool> complete = schedule_->test();
  if (!complete) {
    fail(complete.status());
    next_ = nullptr;
    return true;
  }
  if (!*complete) return false;
  if (next_) {
    const bool last = next_(*this);  // may start the next schedule, or fail to
    if (!last && !done_) return false;
    next_ = nullptr;
    if (done_) return true;
  }
  for (const auto& finisher : finishers_) finisher();
  done_ = true;
  return true;
}

void CollOp::complete_locally() {
  for (const auto& finisher : finishers_) finisher();
  done_ = true;
}

void CollOp::run_locally(const base::Status& outcome) {
  if (!outcome) {
    fail(outcome);
    return;
  }
  complete_locally();
}

void CollOp::make_pending() {
  runtime().pending_collectives.push_back(this);
  pending_ = true;
}

void call_user_op(void* in, void* inout, int* len, void* context) {
  auto* user = static_cast<UserOpContext*>(context);
  if (user->function_c != nullptr) {
    MPI_Count count = *len;  // libs/coll hands out at most INT_MAX elements at a time
    user->function_c(in, inout, &count, &user->datatype);
    return;
  }
  user->function(in, inout, len, &user->datatype);
}

std::optional<ReductionPlan> plan_reduction(Call& call, const OpEntry& op, const Datatype& type, CollOp& owner) {
  ReductionPlan plan;
  if (!op.predefined) {
    const TypeNode& node = *type.node;
    if (type.extent() <= 0 || node.true_lb < 0 || node.true_ub > type.extent()) {
      call.fail(MPI_ERR_TYPE, fmt::format("a user-defined operation on {} is not supported: its data must lie "
                                          "within [0, extent) and its extent be positive",
                                          type.name.empty() ? std::string("this datatype") : type.name));
      return std::nullopt;
    }
    UserOpContext* context = owner.user_context();
    context->function = op.function;
    context->function_c = op.function_c;
    context->datatype = type.handle;
    auto reduction = coll::Reduction::user(
        {call_user_op, op.commutative, static_cast<std::size_t>(type.extent()), context});
    if (!reduction) {
      call.fail(MPI_ERR_OP, reduction.status().message());
      return std::nullopt;
    }
    plan.reduction = *reduction;
    return plan;
  }
  const int base = type.node->base;
  const std::optional<coll::Kind> kind = base == MPI_DATATYPE_NULL ? std::nullopt : kind_of(base);
  const Datatype* base_type = find_datatype(base);
  if (!kind || base_type == nullptr) {
    call.fail(MPI_ERR_OP, fmt::format("{} applies only to predefined types and types made of one of them, not to {}",
                                      op.name, type.name.empty() ? std::string("a mixed derived type") : type.name));
    return std::nullopt;
  }
  if (op.op == coll::Op::replace || op.op == coll::Op::no_op) {
    call.fail(MPI_ERR_OP, fmt::format("{} is only for one-sided accumulate operations", op.name));
    return std::nullopt;
  }
  auto reduction = coll::Reduction::predefined(op.op, *kind);
  if (!reduction) {
    call.fail(MPI_ERR_OP, fmt::format("{} is not defined on {}", op.name, base_type->name));
    return std::nullopt;
  }
  plan.reduction = *reduction;
  if (type.predefined) return plan;
  plan.elements_per_item = type.node->base_count;
  if (type.dense() && base_type->dense()) return plan;
  plan.direct = false;
  plan.layout = type.layout;
  if (!base_type->dense()) {
    const std::vector<Piece>& parts = base_type->node->parts;
    plan.pair_value = parts[0].length;
    plan.pair_index_at = static_cast<std::size_t>(parts[1].displacement);
    plan.pair_extent = static_cast<std::size_t>(base_type->extent());
  }
  return plan;
}

void finish_blocking(Call& call, CollOpPtr op) {
  CollOp& o = *op;
  if (!o.done()) progress_until([&] { return o.test(); });
  if (o.error() != MPI_SUCCESS) call.fail(o.error(), o.reason());
}

bool restart_collective(Call& call, Request& request) {
  CollOpPtr op = make_coll_op(*request.transfer.comm);
  op->use_tag(request.transfer.tag);
  if (!request.restart(call, *op)) return false;
  if (op->done() && op->error() != MPI_SUCCESS) {
    call.fail(op->error(), op->reason());
    return false;
  }
  op->make_pending();
  request.collective = std::move(op);
  request.active = true;
  return true;
}

void finish_nonblocking(Call& call, CollOpPtr op, MPI_Request* request) {
  if (op->done() && op->error() != MPI_SUCCESS) {
    call.fail(op->error(), op->reason());
    return;
  }
  Comm& comm = op->comm();
  Request& r = runtime().requests.acquire(Mode::collective, Transfer{.comm = &comm}, false);
  op->make_pending();
  r.collective = std::move(op);
  r.active = true;
  *request = &r;
}

}  // namespace ftmpi::mpi

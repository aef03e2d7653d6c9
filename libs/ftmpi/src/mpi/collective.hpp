// One MPI collective call on its way: the libs/coll schedule that runs it on the communicator's hidden
// context, the staging buffers that carry derived datatypes through it, and what to do when it ends.
//
// libs/coll moves contiguous bytes (data-moving collectives) or contiguous arrays of one element kind
// (reductions). A user buffer that already has that form is passed as it is; any other is staged:
// packed into a buffer the op owns before the schedule starts, and unpacked from it once the schedule
// completed (`finishers`, run in order). A blocking call builds the op, waits for it and reads its
// outcome; a nonblocking one hands it to a request and to Runtime::pending_collectives.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ftmpi/base/status.hpp"
#include "ftmpi/coll/collectives.hpp"
#include "mpi/api.hpp"
#include "mpi/comm.hpp"
#include "mpi/datatype.hpp"
#include "mpi/objects.hpp"
#include "mpi/request.hpp"

namespace ftmpi::mpi {

class Call;

// How a reduction runs on a datatype (plan_reduction): the coll::Reduction, the elements per item it
// sees, and whether the user's buffers can be used as they are.
struct ReductionPlan {
  std::optional<coll::Reduction> reduction;
  std::size_t elements_per_item = 1;
  bool direct = true;  // else: staged into an array of the base type's C layout
  std::shared_ptr<const Layout> layout;
  // Padded pair bases (MPI_DOUBLE_INT ...): packed pairs are widened to their C struct and back.
  std::size_t pair_value = 0;     // bytes of the value; 0 when no widening is needed
  std::size_t pair_index_at = 0;  // offset of the int index in the struct
  std::size_t pair_extent = 0;    // the struct's size
};

// The user function of an MPI_Op, as libs/coll's UserOp calls it (through `call_user_op`).
struct UserOpContext {
  MPI_User_function* function = nullptr;
  MPI_User_function_c* function_c = nullptr;  // MPI_Op_create_c's (len as MPI_Count)
  MPI_Datatype datatype = MPI_DATATYPE_NULL;
};

class CollOp;
using CollOpPtr = std::unique_ptr<CollOp, CollOpDeleter>;

class CollOp {
 public:
  explicit CollOp(Comm& comm) noexcept : comm_(&comm) {}
  ~CollOp();
  CollOp(const CollOp&) = delete;
  CollOp& operator=(const CollOp&) = delete;

  Comm& comm() const noexcept { return *comm_; }
  // The libs/coll call for this collective, with the communicator's next collective tag (or the tag
  // given to a persistent collective at its init): call it once, after the arguments were checked
  // (every rank advances the tag counter alike).
  coll::Call call() noexcept {
    return coll::Call{comm_->transport, runtime_tuning(), tag_ >= 0 ? tag_ : comm_->take_coll_tag()};
  }
  // A persistent collective's run: its messages carry the tag its init took, so that runs of several
  // may start in any order (MPI-4.0 section 6.12), which only the inits must keep.
  void use_tag(int tag) noexcept { tag_ = tag; }

  // A buffer owned by the op, for as long as the op lives.
  std::byte* scratch(std::size_t bytes);
  void on_done(std::function<void()> finisher) { finishers_.push_back(std::move(finisher)); }
  // An op in steps (MPI_Comm_idup's rounds): `next` runs each time the schedule completes, and either
  // starts the next schedule and returns false, or returns true when the op is complete. Dropped when
  // the op ends, so that what it holds is released then.
  void then(std::function<bool(CollOp&)> next) { next_ = std::move(next); }

  // `count` items of a datatype as packed bytes, for the collective to read: the user's buffer when the
  // type is dense, else a packed copy.
  std::byte* packed_in(const void* buf, std::size_t count, const Datatype& type);
  // A place for the collective to write `count` items as packed bytes, unpacked into buf when the op
  // completes (`drain` items of them, from the start). `fill`: it starts with the user's data (in place).
  std::byte* packed_out(void* buf, std::size_t count, const Datatype& type, bool fill, std::size_t drain);
  // The same for a reduction's operands and results, in the plan's element form.
  std::byte* elements_in(const void* buf, std::size_t count, const ReductionPlan& plan);
  std::byte* elements_out(void* buf, std::size_t count, const ReductionPlan& plan, bool fill, std::size_t drain);

  // Where a user op's function and datatype live for as long as the op: libs/coll's UserOp points here.
  UserOpContext* user_context() noexcept { return &user_; }

  // The schedule libs/coll built (and started), or the reason it could not.
  void start(base::Result<coll::Schedule> schedule);

  // True once the op completed or failed: the schedule is done and the finishers ran (after success).
  // Never blocks.
  bool test();
  bool done() const noexcept { return done_; }
  int error() const noexcept { return error_; }
  const std::string& reason() const noexcept { return reason_; }

  // A nonblocking op: polled by every waiting loop until its request collects it.
  void make_pending();
  // An op that never communicates (MPI_Reduce_local): runs the finishers now.
  void complete_locally();
  // An op that ran to its end outside a schedule (the shared-memory broadcast): records its outcome,
  // running the finishers after success.
  void run_locally(const base::Status& outcome);

 private:
  friend struct CollOpDeleter;
  friend CollOpPtr make_coll_op(Comm& comm);
  static const coll::Tuning& runtime_tuning() noexcept;
  void fail(const base::Status& status);
  // Back to the state of a new op (the deleter keeps a spare; not for a failed or pending op's memory
  // that messages may still reach).
  void clear() noexcept;

  Comm* comm_;
  std::optional<coll::Schedule> schedule_;
  std::vector<std::unique_ptr<std::byte[]>> scratch_;
  std::vector<std::function<void()>> finishers_;
  std::function<bool(CollOp&)> next_;
  int tag_ = -1;  // use_tag()
  UserOpContext user_;
  bool done_ = false;
  bool pending_ = false;
  int error_ = MPI_SUCCESS;
  std::string reason_;
};

// A new op, or the runtime's spare one (CollOpDeleter keeps one op that completed).
CollOpPtr make_coll_op(Comm& comm);

// The function libs/coll calls for a user op: `context` is the op's UserOpContext.
void call_user_op(void* in, void* inout, int* len, void* context);

// Checks that `op` applies to `type` (MPI_ERR_OP when not) and plans the reduction; a user op's
// context is kept in `owner`.
std::optional<ReductionPlan> plan_reduction(Call& call, const OpEntry& op, const Datatype& type, CollOp& owner);

// Runs a blocking collective to its end and records its failure in the call.
void finish_blocking(Call& call, CollOpPtr op);
// Hands a nonblocking collective to a new request (or records its failure to start in the call).
void finish_nonblocking(Call& call, CollOpPtr op, MPI_Request* request);
// MPI_Start of a persistent collective: one more run of it, on a new op; false when it could not start.
bool restart_collective(Call& call, Request& request);

}  // namespace ftmpi::mpi

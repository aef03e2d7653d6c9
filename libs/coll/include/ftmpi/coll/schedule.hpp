// A collective in progress: the state machine every collective is built as, blocking or not.
//
// A schedule is a list of rounds. A round is a list of actions: sends and receives (posted to the
// Transport when the round starts) and local copies and reductions (run when the round starts, in
// list order with the posts, so a round can reduce what the previous round received and then send
// the result). The next round starts once every send and receive of the current round completed.
// All buffers and peers are worked out when the schedule is built (libNBC's design); running it
// only walks the list.
//
// test() advances as far as it can without blocking (MPI_Test on a non-blocking collective); wait()
// blocks on each request in turn (the blocking collectives are a schedule and a wait()). A schedule
// borrows the Transport and the caller's buffers until it is done; it owns its scratch buffers.
// Destroying one that is not done leaves its requests in flight: only do that after an error, and
// see transport.hpp for what an error means for the communicator.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "ftmpi/base/status.hpp"
#include "ftmpi/coll/reduction.hpp"
#include "ftmpi/coll/transport.hpp"

namespace ftmpi::coll {

namespace detail {

struct Action {
  enum class Type : std::uint8_t { send, recv, copy, reduce, end_round };
  Type type = Type::end_round;
  int peer = -1;
  const std::byte* from = nullptr;  // send: data; copy: source; reduce: `in`
  std::byte* to = nullptr;          // recv: data; copy: destination; reduce: `inout`
  std::size_t size = 0;             // bytes; elements for reduce
  RequestId request = 0;            // send and recv, once posted
};

class ScheduleBuilder;

}  // namespace detail

class Schedule {
 public:
  Schedule(Schedule&&) noexcept = default;
  Schedule& operator=(Schedule&&) noexcept = default;
  Schedule(const Schedule&) = delete;
  Schedule& operator=(const Schedule&) = delete;
  ~Schedule() = default;

  // True once the collective completed; false while it is still under way. Never blocks. After an
  // error the schedule is done and keeps returning that error.
  base::Result<bool> test();
  // Blocks until the collective completes.
  base::Status wait();

  bool is_done() const noexcept { return state_ == State::done || state_ == State::failed; }

  // Rounds that send or receive: the latency term of the algorithm at this rank.
  std::size_t communication_rounds() const noexcept;
  // Messages this rank sends (zero-byte ones only where they carry meaning, e.g. a barrier's).
  std::size_t messages_sent() const noexcept;

 private:
  friend class detail::ScheduleBuilder;
  enum class State : std::uint8_t { ready, running, done, failed };

  Schedule() = default;
  // Runs the local actions of the round at cursor_ and posts its messages.
  base::Status start_round();
  // The round ended: moves to the next one (started) or to done.
  base::Status next_round();
  base::Status fail(base::Status status);

  Transport* transport_ = nullptr;
  int tag_ = 0;
  std::optional<Reduction> reduction_;
  std::vector<detail::Action> actions_;
  std::vector<std::unique_ptr<std::byte[]>> scratch_;
  std::size_t cursor_ = 0;     // first action of the current round
  std::size_t round_end_ = 0;  // its end_round marker (or actions_.size())
  std::size_t waiting_ = 0;    // first action of the round not known to be complete
  State state_ = State::ready;
  base::Status status_;
};

}  // namespace ftmpi::coll

// N ranks as threads in one process: an in-memory coll::Transport with MPI's matching rules
// ((source, tag) FIFO queues per receiver, non-overtaking), thread-safe, for the collective tests.
//
// Each send is buffered (completes at once) or rendezvous (completes only when the receiver has
// matched it), by size: `eager_max` picks, so tests can check that no algorithm relies on buffering.
// A receive whose size differs from the message's fails with Errc::malformed. A wait that sees
// nothing happen for `patience` fails instead of hanging (a deadlock in an algorithm), and so do all
// waits once any rank called abort().
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "ftmpi/coll/transport.hpp"

namespace ftmpi::coll::test {

class MemWorld {
 public:
  MemWorld(int size, std::size_t eager_max,
           std::chrono::milliseconds patience = std::chrono::milliseconds(10'000));
  ~MemWorld();
  MemWorld(const MemWorld&) = delete;
  MemWorld& operator=(const MemWorld&) = delete;

  int size() const noexcept { return static_cast<int>(transports_.size()); }
  Transport& transport(int rank);

  // Counts completions; await_change blocks until it moves past `seen` (or the patience runs out,
  // or the world is aborted: then false). For driving non-blocking schedules without spinning.
  std::uint64_t changes() const;
  bool await_change(std::uint64_t seen);

  // Makes every wait fail at once: a rank that failed calls it so the others do not wait for it.
  void abort();
  bool aborted() const;

  // Messages nobody received, receives nothing matched, requests never released: empty when clean.
  std::string leftovers() const;

  std::uint64_t messages_sent() const;

 private:
  class RankTransport;
  friend class RankTransport;

  struct Message {
    std::vector<std::byte> copy;          // buffered send
    const std::byte* borrowed = nullptr;  // rendezvous send: the sender's buffer
    std::size_t bytes = 0;
    int sender = 0;
    RequestId send_request = 0;  // rendezvous: completed when matched
  };
  struct PostedReceive {
    std::byte* data = nullptr;
    std::size_t bytes = 0;
    RequestId request = 0;
  };
  struct RequestState {
    bool done = false;
    base::Status status;
  };
  struct Mailbox {
    std::map<std::pair<int, int>, std::deque<Message>> unexpected;      // (source, tag)
    std::map<std::pair<int, int>, std::deque<PostedReceive>> posted;  // (source, tag)
    std::unordered_map<RequestId, RequestState> requests;              // this rank's
    RequestId next_request = 1;
  };

  // Under mutex_.
  void deliver(int receiver, Message& message, const PostedReceive& receive);
  void complete(int rank, RequestId request, base::Status status);

  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<Mailbox> mailboxes_;
  std::vector<std::unique_ptr<RankTransport>> transports_;
  std::size_t eager_max_;
  std::chrono::milliseconds patience_;
  std::uint64_t changes_ = 0;
  std::uint64_t sent_ = 0;
  bool aborted_ = false;
};

// Runs body(rank, transport, failures) on one thread per rank and returns every failure recorded,
// prefixed with its rank. A body that throws or records a failure aborts the world.
using RankBody = std::function<void(int rank, Transport& transport, std::vector<std::string>& failures)>;
std::vector<std::string> run_ranks(MemWorld& world, const RankBody& body);

}  // namespace ftmpi::coll::test

// Eager credit (engine.eager_credit): how much of one peer's messages that nobody has received yet a
// receiver can be made to hold, and the sender to keep copies of. Without it a sender that outruns its
// receiver fills both processes' memory.
//
// Both ends count the same bytes: an eager message's length plus kPerMessage (what its record costs the
// receiver, so that a flood of empty messages is bounded too), and a rendezvous RTS's first fragment. The
// sender counts them when it sends them, the receiver when they leave its buffers for a posted receive.
// The receiver grants `consumed + limit`, all told, in CREDIT frames; being cumulative, a newer grant
// replaces an older one in whatever order they arrive, and a lost one is covered by the next. The sender
// sends eagerly while `sent + cost <= granted`; otherwise by rendezvous (an RTS without payload), which
// holds nothing at either end until the receive is posted. The sender starts from its own limit: the
// parameter is job-wide. A grant is due after a quarter of the limit came back; with the limit at least
// twice the largest eager cost (EngineConfig checks), a sender can never be left short of one eager
// message with its receiver holding nothing: it then got back more than half the limit, so a grant.
#pragma once

#include <algorithm>
#include <cstdint>

namespace ftmpi::engine {

class EagerCredit {
 public:
  // What an eager message costs beyond its bytes: about its record at the receiver (and its retained
  // frame's record at the sender).
  static constexpr std::uint64_t kPerMessage = 256;
  static constexpr std::uint64_t eager_cost(std::uint64_t bytes) noexcept { return bytes + kPerMessage; }

  explicit EagerCredit(std::uint64_t limit = 0) noexcept : limit_(limit), granted_(limit) {}

  // Sender: whether `bytes` more fit in the grant, and counting them once sent.
  bool may_send(std::uint64_t bytes) const noexcept { return sent_ + bytes <= granted_; }
  void sent(std::uint64_t bytes) noexcept { sent_ += bytes; }
  void granted(std::uint64_t grant) noexcept { granted_ = std::max(granted_, grant); }

  // Receiver: `bytes` left our buffers; true when a grant is due (a quarter of the limit since the last
  // one, so that a sender streaming small messages never runs dry while its receiver keeps up).
  bool consumed(std::uint64_t bytes) noexcept {
    consumed_ += bytes;
    return consumed_ - told_ >= limit_ / 4;
  }
  // The grant to send now.
  std::uint64_t grant() noexcept {
    told_ = consumed_;
    return consumed_ + limit_;
  }

 private:
  std::uint64_t limit_;
  std::uint64_t granted_;     // sender: the highest grant heard
  std::uint64_t sent_ = 0;    // sender: eager bytes sent, all told
  std::uint64_t consumed_ = 0;  // receiver: eager bytes received into receives, all told
  std::uint64_t told_ = 0;      // receiver: consumed_ when the last grant was sent
};

}  // namespace ftmpi::engine

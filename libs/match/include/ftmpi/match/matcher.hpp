// MPI tag matching (MPI-3.1 section 3.5) over envelopes and opaque handles.
//
// The engine hands the matcher the envelope of each message's first fragment, in whatever order the
// rails delivered it, and the receives the application posts. The matcher decides which receive gets
// which message; it knows nothing of buffers, datatypes or sockets.
//
// Ordering. Every message a peer sends us carries msg_seq, one counter per (peer -> me) across all
// communicators, starting at 1. A message is *released* to matching only when every earlier message of
// its peer was released; one that arrives early is *held* (invisible to matching and probing) and
// released, with every held successor, in msg_seq order when the gap fills. Releasing in msg_seq order
// per peer is what makes MPI's non-overtaking rule hold across rails that reorder.
//
// Matching rules, exactly as MPI states them:
//   - a released message goes to the earliest-posted receive that fits it (same context; source equal
//     or kAnySource; tag equal or kAnyTag), else it joins the unexpected queue;
//   - a posted receive takes the earliest-released unexpected message that fits it, else it is queued.
// Invariant: no queued receive fits any unexpected message (each side checked the other on entry), so
// a new receive only has to look at the unexpected queue, and a new message only at the posted one.
//
// Data structures (every operation O(1) expected, independent of queue lengths, but for post_receive's
// check named below and amortized cancels; details in src/):
//   - A receive's pattern is one of four kinds, (s,t) (ANY,t) (s,ANY) (ANY,ANY); a message (s,t) fits
//     exactly the four patterns (s,t) (ANY,t) (s,ANY) (ANY,ANY) in its context. Posted receives sit in
//     FIFO buckets (post order) keyed by (context, pattern), so the candidates for a message are the
//     fronts of at most four buckets, and a global post stamp picks the earliest of them. A kind no
//     posted receive uses is not looked up: without wildcards a message costs one lookup.
//   - Each unexpected message is threaded on four intrusive FIFOs at once, keyed (context,s,t),
//     (context,ANY,t), (context,s,ANY), (context,ANY,ANY); a receive reads the front of the one FIFO its
//     pattern names, and taking a message unlinks it from all four in O(1).
//   - Receive handle -> queue entry, so cancel is O(1).
//   - While every posted receive has one same pattern, they stay out of the buckets and the handle map:
//     the "run", a FIFO ring in post order (a blocking receive waiting for its message, or a window of
//     nonblocking receives from one source with one tag: the common cases), and a message is compared
//     with the run's front directly. A receive with another pattern moves the run into its bucket first,
//     and so does a cancel of any receive but the run's front (cancels are then O(1) amortized: a receive
//     moves at most once). post_receive's check that a handle is not posted already scans the run
//     (O(run length)); the engine posts with post_new_receive, which does not check.
//   - Held messages are keyed (peer, msg_seq); a release looks up the successor only while the peer
//     has anything held, so in-order traffic pays nothing for it.
//   Every map is open addressing over one power-of-two array: with std::unordered_map, its allocation
//   and division per operation was most of the matcher's time.
// Linear queues (MPICH, Open MPI ob1's posted queue) cost O(queue length) per match; per-peer
// unexpected lists (ob1) are O(1) for a named source but scan every peer for kAnySource. The price
// here is four bucket links per unexpected message; bench/match shows what each case costs.
// An emptied bucket stays for reuse until empty ones outnumber the rest, then all are swept at once.
// Entries live in arrays that grow to the peak queue length and are reused, never shrunk.
//
// Bad input never changes state: a duplicate msg_seq (already released or already held) is
// Errc::duplicate; one at or beyond `ahead_window` messages past the next expected is
// Errc::out_of_range (drop it without acknowledging; the sender's retransmission brings it back once the
// gap has filled); msg_seq 0 or a negative source or tag is Errc::malformed. The engine counts and
// drops such arrivals. Not thread-safe: the engine serializes calls.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "ftmpi/base/params.hpp"
#include "ftmpi/base/status.hpp"

namespace ftmpi::match {

// Wildcards in a receive pattern. The values are the ones our mpi.h gives MPI_ANY_SOURCE and
// MPI_ANY_TAG, so the MPI shim passes patterns through unchanged. Any other negative value is invalid.
inline constexpr std::int32_t kAnySource = -1;
inline constexpr std::int32_t kAnyTag = -2;

// Opaque to the matcher: the engine's way back to its receive request and to its buffered message.
using ReceiveHandle = std::uint64_t;
using MessageHandle = std::uint64_t;

struct Envelope {
  std::uint32_t peer = 0;     // sender's world rank: selects the msg_seq counter
  std::int32_t source = 0;    // sender's rank in the communicator: what receives match on
  std::uint32_t context = 0;  // communicator context id
  std::int32_t tag = 0;       // >= 0
  std::uint64_t msg_seq = 0;  // per (peer -> me), from 1, across all communicators
  MessageHandle handle = 0;

  friend bool operator==(const Envelope&, const Envelope&) = default;
};

// What a receive (or a probe) asks for.
struct Pattern {
  std::uint32_t context = 0;
  std::int32_t source = kAnySource;  // >= 0 or kAnySource
  std::int32_t tag = kAnyTag;        // >= 0 or kAnyTag

  bool is_valid() const noexcept {
    return (source >= 0 || source == kAnySource) && (tag >= 0 || tag == kAnyTag);
  }
  bool matches(const Envelope& message) const noexcept {
    return context == message.context && (source == kAnySource || source == message.source) &&
           (tag == kAnyTag || tag == message.tag);
  }
  friend bool operator==(const Pattern&, const Pattern&) = default;
};

// One outcome of a released message.
struct Event {
  enum class Kind : std::uint8_t {
    matched,     // `receive` got `message`; the receive is no longer posted
    unexpected,  // `message` joined the unexpected queue
  };
  Kind kind = Kind::unexpected;
  Envelope message;
  ReceiveHandle receive = 0;  // only for Kind::matched

  friend bool operator==(const Event&, const Event&) = default;
};

// Queue sizes, for debugging and ftpath.
struct Counters {
  std::size_t posted = 0;
  std::size_t unexpected = 0;
  std::size_t held = 0;  // ahead of sequence, over all peers
};

inline constexpr base::ParamRow kAheadWindow{
    "match.ahead_window", base::ParamType::integer, "4096",
    "how many messages past the next expected one a peer's message may be and still be held",
    base::ParamLevel::advanced};

// This library's parameter table.
std::span<const base::ParamRow> match_params() noexcept;

struct MatcherConfig {
  std::uint32_t peer_count = 0;    // world size; peers are 0 .. peer_count-1
  std::uint64_t ahead_window = 0;  // >= 1; 1 holds nothing (only the next expected is accepted)
};

// The config for a world of `peer_count` processes with the window taken from `params` (a value below
// 1 becomes 0, which Matcher::create refuses).
MatcherConfig matcher_config(const base::ParamSet& params, std::uint32_t peer_count);

class Matcher {
 public:
  // Refuses peer_count 0 and ahead_window 0.
  static base::Result<Matcher> create(const MatcherConfig& config);

  // A moved-from Matcher may only be assigned to or destroyed.
  Matcher(Matcher&&) noexcept;
  Matcher& operator=(Matcher&&) noexcept;
  ~Matcher();

  // Posts a receive: returns the unexpected message it takes (removed from the queue), or nullopt when
  // none fits and the receive is queued. Errc::invalid_argument for an invalid pattern or a handle that
  // is already posted.
  base::Result<std::optional<Envelope>> post_receive(const Pattern& pattern, ReceiveHandle receive);

  // post_receive for a handle the caller knows is not posted (the engine posts each receive request
  // once): the same, without the check, which costs a scan of the run (see above) where the handle map
  // does not have the handle. Errc::invalid_argument for an invalid pattern.
  base::Result<std::optional<Envelope>> post_new_receive(const Pattern& pattern, ReceiveHandle receive);

  // Removes a posted receive. False when it is not posted (it has matched already, or never was).
  [[nodiscard]] bool cancel_receive(ReceiveHandle receive);

  // A message's first fragment arrived. Appends one Event per message it releases, in release order:
  // none when the message is held ahead of sequence, several when it fills a gap. On error nothing is
  // appended and nothing changes.
  base::Status message_arrived(const Envelope& message, std::vector<Event>& events);

  // The fast lane of message_arrived for the common case: when `message` is its peer's next in
  // sequence, nothing from that peer is held ahead of it, and a posted receive fits it, it takes that
  // receive (exactly as message_arrived would: the same one, and the sequence advances) and returns it;
  // the message itself is never stored, so its handle is not used. Otherwise nothing changes and it
  // returns nullopt: call message_arrived.
  std::optional<ReceiveHandle> match_next_in_order(const Envelope& message) {
    ReceiveHandle receive = 0;
    if (!match_next_in_order(message, receive)) return std::nullopt;
    return receive;
  }
  // The same, the receive written to `receive`. The optional is built inline in the caller: returned
  // from out of line, GCC wrote its flag as a byte and read it back as a word, a store that cannot be
  // forwarded (a stall on every message).
  bool match_next_in_order(const Envelope& message, ReceiveHandle& receive);

  // match_next_in_order in two halves, so that the receive can be filled before it is taken: a payload
  // verified while it is copied into the receive's buffer, where a bad one must leave the receive
  // posted for its resend. find_next_in_order names the receive match_next_in_order would take and
  // changes nothing; take_next_in_order takes it, with nothing done to the matcher in between.
  struct InOrderMatch {
    ReceiveHandle receive;
    std::uint32_t entry;  // where it is posted (the run's front, or its queue entry)
  };
  std::optional<InOrderMatch> find_next_in_order(const Envelope& message) const;
  void take_next_in_order(const Envelope& message, const InOrderMatch& match);

  // The unexpected message a receive with this pattern would take now, left in place (MPI_Iprobe).
  // Held messages are invisible. An invalid pattern finds nothing.
  std::optional<Envelope> probe(const Pattern& pattern) const;

  // Removes and returns the unexpected message a receive with this pattern would take now (MPI_Mprobe,
  // and MPI_Recv after MPI_Probe). An invalid pattern finds nothing.
  std::optional<Envelope> take_unexpected(const Pattern& pattern);

  // A sender's cancel of its message msg_seq, sent on (context, tag): withdrawn when the message is
  // unexpected and may_take agrees (it is taken out of matching and *taken filled, so no receive or
  // probe sees it), kept when may_take refuses it, matched when it was released and is unexpected no
  // more (a receive or a matched probe took it), not_released when it has not arrived or is held ahead
  // of sequence (ask again once it is released). Costs one step per unexpected message of (context,
  // tag): cancels are rare. Errc::malformed for msg_seq 0 or a negative tag, Errc::out_of_range for no
  // such peer or a msg_seq beyond the ahead window.
  enum class Withdrawal : std::uint8_t { withdrawn, kept, matched, not_released };
  base::Result<Withdrawal> withdraw(std::uint32_t peer, std::uint64_t msg_seq, std::uint32_t context,
                                    std::int32_t tag, const std::function<bool(const Envelope&)>& may_take,
                                    Envelope* taken);

  Counters counters() const noexcept;

 private:
  struct State;
  explicit Matcher(std::unique_ptr<State> state) noexcept;
  // post_new_receive beyond its common case (nothing unexpected, nothing queued, the run empty or of
  // the same pattern): out of line, so that the common case saves no registers.
  [[gnu::noinline]] base::Result<std::optional<Envelope>> post_receive_general(const Pattern& pattern,
                                                                              ReceiveHandle receive);
  std::unique_ptr<State> state_;
};

}  // namespace ftmpi::match

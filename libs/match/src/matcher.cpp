#include "ftmpi/match/matcher.hpp"

#include <algorithm>
#include <array>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "bucket_queue.hpp"

namespace ftmpi::match {
namespace {

using base::Errc;
using base::Status;
using detail::BucketKey;
using detail::kNoEntry;

constexpr base::ParamRow kMatchParams[] = {kAheadWindow};

// A pattern's kind, which is also the view (bucket) of a message it is looked up in.
constexpr std::size_t kPatternKinds = 4;

std::size_t kind_of(const Pattern& pattern) noexcept {
  return (pattern.source == kAnySource ? 1U : 0U) + (pattern.tag == kAnyTag ? 2U : 0U);
}

BucketKey bucket_of(const Pattern& pattern) noexcept {
  return {pattern.context, pattern.source, pattern.tag};
}

// The bucket of the patterns of kind `kind` (kind_of) that a message fits.
BucketKey bucket_of_kind(const Envelope& message, std::size_t kind) noexcept {
  return {message.context, (kind & 1U) != 0 ? kAnySource : message.source, (kind & 2U) != 0 ? kAnyTag : message.tag};
}

// The buckets of the four patterns a message fits, indexed by kind_of those patterns.
std::array<BucketKey, kPatternKinds> buckets_of(const Envelope& message) noexcept {
  return {bucket_of_kind(message, 0), bucket_of_kind(message, 1), bucket_of_kind(message, 2),
          bucket_of_kind(message, 3)};
}

struct PostedReceive {
  Pattern pattern;
  ReceiveHandle handle = 0;
  std::uint64_t stamp = 0;  // post order over all buckets: the earliest candidate wins
};

struct HandleHash {
  std::uint64_t operator()(ReceiveHandle handle) const noexcept { return handle; }
};

struct HeldKey {
  std::uint32_t peer = 0;
  std::uint64_t msg_seq = 0;
  friend bool operator==(const HeldKey&, const HeldKey&) = default;
};

struct HeldKeyHash {
  std::uint64_t operator()(const HeldKey& key) const noexcept {
    return key.msg_seq ^ (std::uint64_t{key.peer} * 0xc2b2ae3d27d4eb4fULL);
  }
};

std::string describe(const Envelope& message) {
  return "peer " + std::to_string(message.peer) + " msg_seq " + std::to_string(message.msg_seq);
}

}  // namespace

std::span<const base::ParamRow> match_params() noexcept { return kMatchParams; }

MatcherConfig matcher_config(const base::ParamSet& params, std::uint32_t peer_count) {
  std::int64_t window = params.get_integer(kAheadWindow);
  return {peer_count, window < 1 ? 0 : static_cast<std::uint64_t>(window)};
}

struct Matcher::State {
  // A receive of the run (below): its pattern is the run's.
  struct RunEntry {
    ReceiveHandle handle = 0;
    std::uint64_t stamp = 0;
  };
  explicit State(const MatcherConfig& config)
      : ahead_window(config.ahead_window),
        next_seq(config.peer_count, 1),
        held_per_peer(config.peer_count, 0),
        run(kRunFirstSize),
        run_mask(kRunFirstSize - 1) {}

  // Hands a message, in its peer's msg_seq order, to the earliest-posted receive it fits, or queues it.
  void release(const Envelope& message, std::vector<Event>& events) {
    if (const std::optional<ReceiveHandle> taken = take_run(message)) {
      events.push_back({Event::Kind::matched, message, *taken});
      return;
    }
    const std::uint32_t earliest = earliest_posted_for(message);
    if (earliest == kNoEntry) {
      unexpected.push_back(message, buckets_of(message));
      events.push_back({Event::Kind::unexpected, message, 0});
      return;
    }
    events.push_back({Event::Kind::matched, message, take_posted(earliest)});
  }

  // The run's front, taken, when there is a run and the message fits its pattern (it is then the
  // earliest-posted receive the message fits: the queues are empty while there is a run).
  std::optional<ReceiveHandle> take_run(const Envelope& message) noexcept {
    if (run_size == 0 || !run_pattern.matches(message)) return std::nullopt;
    return pop_run().handle;
  }

  const RunEntry& run_front() const noexcept { return run[run_head]; }
  RunEntry pop_run() noexcept {
    const RunEntry front = run[run_head];
    run_head = (run_head + 1) & run_mask;
    --run_size;
    return front;
  }
  // Appends a receive of the run's pattern (any pattern when the run is empty; the queues are empty).
  void push_run(const Pattern& pattern, ReceiveHandle receive) {
    if (run_size > run_mask) [[unlikely]] grow_run();
    run[(run_head + run_size) & run_mask] = {receive, next_stamp++};
    ++run_size;
    run_pattern = pattern;
  }
  // Out of line: inline, it made every post save and restore six registers.
  [[gnu::noinline, gnu::cold]] void grow_run() {
    std::vector<RunEntry> bigger(2 * run.size());
    for (std::size_t i = 0; i < run_size; ++i) bigger[i] = run[(run_head + i) & run_mask];
    run.swap(bigger);
    run_mask = run.size() - 1;
    run_head = 0;
  }
  // The position in the run (0: the front) of the receive posted as `receive`, or run_size.
  std::size_t find_in_run(ReceiveHandle receive) const noexcept {
    std::size_t i = 0;
    while (i < run_size && run[(run_head + i) & run_mask].handle != receive) ++i;
    return i;
  }
  // Moves the run into the queues (before a receive of another pattern is posted, or a cancel of one
  // behind its front), keeping its stamps.
  void spill_run() {
    while (run_size != 0) {
      const RunEntry r = pop_run();
      const std::uint32_t id = posted.push_back({run_pattern, r.handle, r.stamp}, {bucket_of(run_pattern)});
      posted_ids.insert(r.handle, id);
      ++posted_per_kind[kind_of(run_pattern)];
    }
  }

  // The earliest-posted queued receive `message` fits, or kNoEntry. Only the kinds with a receive posted
  // are looked up, each bucket's key built when it is (usually one: receives name source and tag). Out of
  // line: the in-order lookups' common case is the run, and with this inline their every call
  // saved and restored six registers for it.
  [[gnu::noinline]] std::uint32_t earliest_posted_for(const Envelope& message) const noexcept {
    std::uint32_t earliest = kNoEntry;
    std::uint64_t earliest_stamp = std::numeric_limits<std::uint64_t>::max();
    for (std::size_t kind = 0; kind < kPatternKinds; ++kind) {
      if (posted_per_kind[kind] == 0) continue;
      std::uint32_t id = posted.front(bucket_of_kind(message, kind));
      if (id != kNoEntry && posted.payload(id).stamp < earliest_stamp) {
        earliest = id;
        earliest_stamp = posted.payload(id).stamp;
      }
    }
    return earliest;
  }

  ReceiveHandle take_posted(std::uint32_t id) {
    const ReceiveHandle receive = posted.payload(id).handle;
    posted_ids.erase(receive);
    drop_posted(id);
    return receive;
  }

  // Removes a posted receive whose handle is already out of posted_ids.
  void drop_posted(std::uint32_t id) {
    --posted_per_kind[kind_of(posted.payload(id).pattern)];
    posted.erase(id);
  }

  std::uint64_t ahead_window;
  std::vector<std::uint64_t> next_seq;       // per peer: the msg_seq released next
  std::vector<std::uint64_t> held_per_peer;  // so in-order traffic skips the held lookup
  detail::FlatMap<HeldKey, Envelope, HeldKeyHash> held;

  detail::BucketQueue<PostedReceive, 1> posted;
  std::array<std::size_t, kPatternKinds> posted_per_kind{};  // a kind with none is not looked up
  detail::FlatMap<ReceiveHandle, std::uint32_t, HandleHash> posted_ids;
  std::uint64_t next_stamp = 0;
  // The posted receives while they all have one pattern, in post order, kept out of the queues and the
  // handle map (matcher.hpp, "run"): a ring of run_size entries from run_head (its size a power of two),
  // each a handle and its post stamp, all of them of run_pattern. The common cases (a blocking receive
  // posted, then its message; a window of receives from one source with one tag) then cost a compare
  // instead of bucket and handle map updates, and touch one cache line of the ring instead of an entry,
  // a bucket and a map slot. Invariant: while run_size != 0, `posted` is empty and every receive of the
  // run has run_pattern.
  static constexpr std::size_t kRunFirstSize = 16;
  std::vector<RunEntry> run;
  std::size_t run_mask;  // run.size() - 1
  std::size_t run_head = 0;
  std::size_t run_size = 0;
  Pattern run_pattern;

  detail::BucketQueue<Envelope, kPatternKinds> unexpected;
};

base::Result<Matcher> Matcher::create(const MatcherConfig& config) {
  if (config.peer_count == 0) return Status(Errc::invalid_argument, "matcher needs at least one peer");
  if (config.ahead_window == 0) {
    return Status(Errc::invalid_argument, std::string(kAheadWindow.name) + " must be at least 1");
  }
  return Matcher(std::make_unique<State>(config));
}

Matcher::Matcher(std::unique_ptr<State> state) noexcept : state_(std::move(state)) {}
Matcher::Matcher(Matcher&&) noexcept = default;
Matcher& Matcher::operator=(Matcher&&) noexcept = default;
Matcher::~Matcher() = default;

base::Result<std::optional<Envelope>> Matcher::post_receive(const Pattern& pattern, ReceiveHandle receive) {
  const State& s = *state_;
  // The handle map does not have the run's receives.
  if ((s.posted.size() != 0 && s.posted_ids.find(receive) != nullptr) || s.find_in_run(receive) != s.run_size) {
    return Status(Errc::invalid_argument, "receive handle " + std::to_string(receive) + " is already posted");
  }
  return post_new_receive(pattern, receive);
}

base::Result<std::optional<Envelope>> Matcher::post_new_receive(const Pattern& pattern, ReceiveHandle receive) {
  State& s = *state_;
  // Nothing unexpected, so the receive waits; nothing queued and the run of its pattern (or none), so it
  // joins the run.
  if (s.unexpected.size() == 0 && s.posted.size() == 0 && (s.run_size == 0 || s.run_pattern == pattern) &&
      pattern.is_valid()) [[likely]] {
    s.push_run(pattern, receive);
    return std::optional<Envelope>();
  }
  return post_receive_general(pattern, receive);
}

base::Result<std::optional<Envelope>> Matcher::post_receive_general(const Pattern& pattern, ReceiveHandle receive) {
  State& s = *state_;
  if (!pattern.is_valid()) {
    return Status(Errc::invalid_argument, "receive pattern source " + std::to_string(pattern.source) +
                                              " tag " + std::to_string(pattern.tag) +
                                              ": neither a value >= 0 nor the wildcard");
  }
  if (std::uint32_t id = s.unexpected.size() == 0 ? kNoEntry : s.unexpected.front(bucket_of(pattern)); id != kNoEntry) {
    Envelope message = s.unexpected.payload(id);
    s.unexpected.erase(id);
    return std::optional<Envelope>(message);
  }
  if (s.posted.size() == 0 && (s.run_size == 0 || s.run_pattern == pattern)) {
    s.push_run(pattern, receive);
    return std::optional<Envelope>();
  }
  s.spill_run();
  std::uint32_t id = s.posted.push_back({pattern, receive, s.next_stamp++}, {bucket_of(pattern)});
  s.posted_ids.insert(receive, id);
  ++s.posted_per_kind[kind_of(pattern)];
  return std::optional<Envelope>();
}

bool Matcher::cancel_receive(ReceiveHandle receive) {
  State& s = *state_;
  if (s.run_size != 0) {
    if (s.run_front().handle == receive) {
      (void)s.pop_run();
      return true;
    }
    // Anywhere else in the run it goes through the handle map: the run moves into the queues once
    // (stamps kept), so cancelling many receives of one window is not a scan and a shift each.
    s.spill_run();
  }
  const std::uint32_t* id = s.posted_ids.find(receive);
  if (id == nullptr) return false;
  std::uint32_t posted_id = *id;
  s.posted_ids.erase(receive);
  s.drop_posted(posted_id);
  return true;
}

base::Status Matcher::message_arrived(const Envelope& message, std::vector<Event>& events) {
  State& s = *state_;
  if (message.peer >= s.next_seq.size()) {
    return {Errc::out_of_range,
            describe(message) + ": no such peer (peer count " + std::to_string(s.next_seq.size()) + ")"};
  }
  if (message.msg_seq == 0 || message.source < 0 || message.tag < 0) {
    return {Errc::malformed, describe(message) + " source " + std::to_string(message.source) + " tag " +
                                 std::to_string(message.tag) + ": msg_seq 0 or a negative source or tag"};
  }
  std::uint64_t& next = s.next_seq[message.peer];
  if (message.msg_seq < next) {
    return {Errc::duplicate, describe(message) + ": already released (next " + std::to_string(next) + ")"};
  }
  if (message.msg_seq - next >= s.ahead_window) {
    return {Errc::out_of_range, describe(message) + ": beyond the window of " +
                                    std::to_string(s.ahead_window) + " past the next expected " +
                                    std::to_string(next)};
  }
  if (message.msg_seq != next) {
    HeldKey key{message.peer, message.msg_seq};
    if (s.held.find(key) != nullptr)
      return {Errc::duplicate, describe(message) + ": already held ahead of sequence"};
    s.held.insert(key, message);
    ++s.held_per_peer[message.peer];
    return {};
  }
  s.release(message, events);
  ++next;
  while (s.held_per_peer[message.peer] != 0) {
    HeldKey key{message.peer, next};
    const Envelope* held = s.held.find(key);
    if (held == nullptr) break;
    Envelope successor = *held;
    s.held.erase(key);
    --s.held_per_peer[message.peer];
    s.release(successor, events);
    ++next;
  }
  return {};
}

// find_next_in_order and take_next_in_order in one, written out: the zero-byte path over shared memory
// takes it for every message, and the two calls cost a third more.
bool Matcher::match_next_in_order(const Envelope& message, ReceiveHandle& receive) {
  State& s = *state_;
  if (message.peer >= s.next_seq.size() || message.source < 0 || message.tag < 0) return false;
  std::uint64_t& next = s.next_seq[message.peer];
  if (message.msg_seq != next || s.held_per_peer[message.peer] != 0) return false;
  if (s.run_size != 0) {
    if (!s.run_pattern.matches(message)) return false;
    ++next;
    receive = s.pop_run().handle;
    return true;
  }
  const std::uint32_t earliest = s.earliest_posted_for(message);
  if (earliest == kNoEntry) return false;
  ++next;
  receive = s.take_posted(earliest);
  return true;
}

namespace {
// InOrderMatch::entry of the run's front, which lives outside the queues.
constexpr std::uint32_t kRunFront = kNoEntry;
}  // namespace

std::optional<Matcher::InOrderMatch> Matcher::find_next_in_order(const Envelope& message) const {
  const State& s = *state_;
  if (message.peer >= s.next_seq.size() || message.source < 0 || message.tag < 0) return std::nullopt;
  if (message.msg_seq != s.next_seq[message.peer] || s.held_per_peer[message.peer] != 0) return std::nullopt;
  if (s.run_size != 0) {
    if (!s.run_pattern.matches(message)) return std::nullopt;
    return InOrderMatch{s.run_front().handle, kRunFront};
  }
  const std::uint32_t earliest = s.earliest_posted_for(message);
  if (earliest == kNoEntry) return std::nullopt;
  return InOrderMatch{s.posted.payload(earliest).handle, earliest};
}

void Matcher::take_next_in_order(const Envelope& message, const InOrderMatch& match) {
  State& s = *state_;
  ++s.next_seq[message.peer];
  if (match.entry == kRunFront) {
    (void)s.pop_run();
  } else {
    (void)s.take_posted(match.entry);
  }
}

std::optional<Envelope> Matcher::probe(const Pattern& pattern) const {
  const State& s = *state_;
  if (!pattern.is_valid()) return std::nullopt;
  std::uint32_t id = s.unexpected.front(bucket_of(pattern));
  if (id == kNoEntry) return std::nullopt;
  return s.unexpected.payload(id);
}

std::optional<Envelope> Matcher::take_unexpected(const Pattern& pattern) {
  State& s = *state_;
  if (!pattern.is_valid()) return std::nullopt;
  std::uint32_t id = s.unexpected.front(bucket_of(pattern));
  if (id == kNoEntry) return std::nullopt;
  Envelope message = s.unexpected.payload(id);
  s.unexpected.erase(id);
  return message;
}

base::Result<Matcher::Withdrawal> Matcher::withdraw(std::uint32_t peer, std::uint64_t msg_seq,
                                                    std::uint32_t context, std::int32_t tag,
                                                    const std::function<bool(const Envelope&)>& may_take,
                                                    Envelope* taken) {
  State& s = *state_;
  if (peer >= s.next_seq.size()) return Status(Errc::out_of_range, "withdraw: no peer " + std::to_string(peer));
  if (msg_seq == 0 || tag < 0) {
    return Status(Errc::malformed, "withdraw: msg_seq " + std::to_string(msg_seq) + " tag " + std::to_string(tag));
  }
  const std::uint64_t next = s.next_seq[peer];
  if (msg_seq >= next) {
    if (msg_seq - next >= s.ahead_window) {
      return Status(Errc::out_of_range, "withdraw: msg_seq " + std::to_string(msg_seq) + " beyond the window past " +
                                            std::to_string(next));
    }
    return Withdrawal::not_released;
  }
  constexpr std::size_t kAnySourceView = 1;  // buckets_of: (context, kAnySource, tag)
  for (std::uint32_t id = s.unexpected.size() == 0 ? kNoEntry : s.unexpected.front({context, kAnySource, tag});
       id != kNoEntry; id = s.unexpected.next(id, kAnySourceView)) {
    const Envelope& message = s.unexpected.payload(id);
    if (message.peer != peer || message.msg_seq != msg_seq) continue;
    if (may_take && !may_take(message)) return Withdrawal::kept;
    if (taken != nullptr) *taken = message;
    s.unexpected.erase(id);
    return Withdrawal::withdrawn;
  }
  return Withdrawal::matched;
}

Counters Matcher::counters() const noexcept {
  const State& s = *state_;
  return {s.posted.size() + s.run_size, s.unexpected.size(), s.held.size()};
}

}  // namespace ftmpi::match

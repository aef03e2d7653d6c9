// FaultPath: the decorator that injects faults into frames as they are sent (design in fault.hpp).
#include <algorithm>
#include <cstring>
#include <optional>
#include <stdexcept>
#include <utility>

#include "ftmpi/path/fault.hpp"

namespace ftmpi::path {
namespace {

// Enough to defeat any 32-bit checksum's guarantees without turning every frame into noise.
constexpr std::size_t kMaxCorruptBytes = 8;

// Forwards a frame FaultPath copied (and maybe altered), with the bulk lane of the original.
class CopiedFrame final : public FrameWriter {
 public:
  CopiedFrame(std::span<const std::byte> bytes, bool bulk) : bytes_(bytes), bulk_(bulk) {}
  std::size_t frame_size() const noexcept override { return bytes_.size(); }
  void write(std::span<std::byte> room) noexcept override {
    if (!bytes_.empty()) std::memcpy(room.data(), bytes_.data(), bytes_.size());
  }
  bool bulk() const noexcept override { return bulk_; }
  std::span<const std::byte> bytes() const noexcept override { return bytes_; }

 private:
  std::span<const std::byte> bytes_;
  bool bulk_;
};

// SplitMix64's finalizer: spreads a small stream number (a rank) over all 64 bits of the seed.
std::uint64_t spread(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

}  // namespace

FaultPath::FaultPath(std::unique_ptr<Path> inner, std::vector<FaultSpec> specs, FaultOptions options)
    : inner_(std::move(inner)),
      now_(std::move(options.now)),
      traffic_(std::move(options.traffic)),
      reorder_hold_(options.reorder_hold),
      stream_(options.stream) {
  // Set-up, not the data path.
  if (!inner_) throw std::invalid_argument("FaultPath needs a path to wrap");
  info_ = inner_->info();
  info_.reliable = false;
  set_specs(std::move(specs));
}

FaultPath::~FaultPath() = default;

bool FaultPath::has_queued_frames() const noexcept {
  const std::lock_guard lock(lock_);
  return !held_.empty() || inner_->has_queued_frames();
}

void FaultPath::set_specs(std::vector<FaultSpec> specs) {
  const std::lock_guard lock(lock_);
  specs_ = std::move(specs);
  windows_.assign(specs_.size(), specs_.empty() ? Window{} : window_from_now(clock()));
  std::uint64_t seed = kDefaultFaultSeed;
  for (const FaultSpec& spec : specs_) {
    if (spec.seed) {
      seed = *spec.seed;
      break;
    }
  }
  reseed(seed);
}

void FaultPath::add_specs(std::vector<FaultSpec> specs) {
  if (specs.empty()) return;
  const std::lock_guard lock(lock_);
  const Window installed = window_from_now(clock());
  std::optional<std::uint64_t> seed;
  for (FaultSpec& spec : specs) {
    if (!seed) seed = spec.seed;
    specs_.push_back(std::move(spec));
    windows_.push_back(installed);
  }
  if (seed) reseed(*seed);
}

void FaultPath::reseed(std::uint64_t seed) { random_.seed(seed ^ spread(stream_)); }

// Uniform in [0, 1) from the top 53 bits: the same value on every standard library, unlike
// std::uniform_real_distribution, so a seed replays anywhere.
double FaultPath::draw() { return static_cast<double>(random_() >> 11) * 0x1.0p-53; }

FaultPath::Window FaultPath::window_from_now(FaultClock::time_point now) const {
  Window window;
  window.installed = now;
  window.installed_traffic = traffic();
  return window;
}

// A window opened by time opens at exactly installed + after, so that a time window is [after,
// after + for) whenever the clock is read; one opened by traffic opens when a frame first sees the
// volume passed. It closes for good once `for` has passed since it opened.
bool FaultPath::window_open(const FaultSpec& spec, Window& window, FaultClock::time_point now) {
  if (window.closed) return false;
  if (!window.open) {
    if (spec.after_bytes) {
      if (traffic() - window.installed_traffic < *spec.after_bytes) return false;
      window.opened = now;
    } else {
      if (now - window.installed < spec.after) return false;
      window.opened = window.installed + spec.after;
    }
    window.open = true;
    window.opened_traffic = traffic();
  }
  if ((spec.lasts && now - window.opened >= *spec.lasts) ||
      (spec.lasts_bytes && traffic() - window.opened_traffic >= *spec.lasts_bytes)) {
    window.closed = true;
    return false;
  }
  return true;
}

FaultPath::SpecState FaultPath::spec_state(std::size_t spec) const {
  const FaultSpec& s = specs_.at(spec);
  const Window& w = windows_.at(spec);
  if (w.closed) return SpecState::ended;
  if (!w.open) {
    // A window in time opens at installed + after whether or not a frame saw it; one in traffic when a
    // frame does.
    if (s.after_bytes || clock() - w.installed < s.after) return SpecState::waiting;
    return s.lasts && clock() - (w.installed + s.after) >= *s.lasts ? SpecState::ended : SpecState::active;
  }
  if (s.lasts && clock() - w.opened >= *s.lasts) return SpecState::ended;
  return SpecState::active;
}

void FaultPath::remove_ended_specs() {
  std::size_t kept = 0;
  for (std::size_t i = 0; i < specs_.size(); ++i) {
    if (windows_[i].closed) continue;
    if (kept != i) {
      specs_[kept] = std::move(specs_[i]);
      windows_[kept] = windows_[i];
    }
    ++kept;
  }
  specs_.resize(kept);
  windows_.resize(kept);
}

FaultPath::Decision FaultPath::decide(FaultClock::time_point now) {
  Decision decision;
  bool ended = false;
  for (std::size_t i = 0; i < specs_.size(); ++i) {
    const FaultSpec& spec = specs_[i];
    if (!window_open(spec, windows_[i], now)) {
      ended = ended || windows_[i].closed;
      continue;
    }
    // One draw per non-zero probability, whatever the others decided, so that a spec's draws depend
    // only on the frames and the specs.
    if (spec.blackhole) decision.lose_blackhole = true;
    if (spec.drop > 0 && draw() < spec.drop) decision.lose_drop = true;
    if (spec.corrupt > 0 && draw() < spec.corrupt) decision.corrupt = true;
    if (spec.dup > 0 && draw() < spec.dup) decision.dup = true;
    if (spec.reorder > 0 && draw() < spec.reorder) decision.reorder = true;
    decision.delay = std::max(decision.delay, spec.delay);
  }
  if (ended) remove_ended_specs();
  return decision;
}

// XORs 1..kMaxCorruptBytes distinct bytes with non-zero masks, so the frame always changes.
void FaultPath::corrupt(std::span<std::byte> bytes) {
  const std::size_t size = bytes.size();
  const std::size_t count = 1 + random_() % std::min(size, kMaxCorruptBytes);
  std::size_t positions[kMaxCorruptBytes];
  for (std::size_t k = 0; k < count; ++k) {
    std::size_t position = 0;
    do {
      position = random_() % size;
    } while (std::find(positions, positions + k, position) != positions + k);
    positions[k] = position;
    bytes[position] ^= static_cast<std::byte>(1 + random_() % 255);
  }
}

base::Status FaultPath::forward(Rank peer, std::span<const std::byte> bytes, bool bulk, bool dup,
                                bool corrupted) {
  CopiedFrame copy(bytes, bulk);
  if (base::Status status = inner_->send(peer, copy); !status) return status;
  if (corrupted) ++counters_.corrupted;
  if (!dup) return {};
  if (base::Status status = inner_->send(peer, copy); !status) return status;
  ++counters_.duplicated;
  if (corrupted) ++counters_.corrupted;
  return {};
}

// Sends every held frame whose time has come, oldest deadline first; a frame the inner path refuses is
// lost (its error is returned, the first one if several) so that the queue never sticks.
base::Status FaultPath::release_ready(FaultClock::time_point now) {
  base::Status first_error;
  while (!held_.empty() && held_.begin()->first <= now) {
    const HeldQueue::iterator oldest = held_.begin();
    if (oldest->second.waiting_for_next) std::erase(waiting_, oldest);
    auto node = held_.extract(oldest);
    const Held& held = node.mapped();
    base::Status status = forward(held.peer, held.bytes, held.bulk, held.dup, held.corrupted);
    if (!status && first_error.is_ok()) first_error = std::move(status);
  }
  return first_error;
}

// A frame to `peer` reached the inner path: frames reordered behind it may now leave once their delay
// (if any) is over.
void FaultPath::frame_left(Rank peer) {
  for (auto it = waiting_.begin(); it != waiting_.end();) {
    if ((*it)->second.peer != peer) {
      ++it;
      continue;
    }
    auto node = held_.extract(*it);
    node.mapped().waiting_for_next = false;
    node.key() = node.mapped().not_before;
    held_.insert(std::move(node));  // after frames with the same deadline: order kept
    it = waiting_.erase(it);
  }
}

base::Status FaultPath::send(Rank peer, FrameWriter& frame) noexcept {
  const std::lock_guard lock(lock_);
  if (specs_.empty() && held_.empty() && pending_error_.is_ok()) [[likely]] {
    base::Status status = inner_->send(peer, frame);
    if (status.severity() != base::Severity::caller) ++counters_.frames_seen;
    return status;
  }

  const FaultClock::time_point now = clock();
  base::Status earlier = std::exchange(pending_error_, base::Status{});
  base::Status released = release_ready(now);
  if (!earlier) return earlier;
  if (!released) return released;

  const std::size_t size = frame.frame_size();
  // Refusals (frame too large, peer unknown) come from the inner path, before any fault is drawn.
  if (size > inner_->info().max_frame || !inner_->reaches(peer)) return inner_->send(peer, frame);
  ++counters_.frames_seen;
  sent_bytes_ += size;

  const Decision decision = decide(now);
  if (decision.lose_blackhole) {
    ++counters_.blackholed;
    return {};
  }
  if (decision.lose_drop) {
    ++counters_.dropped;
    return {};
  }
  const bool hold = decision.reorder || decision.delay.count() > 0;
  if (!decision.corrupt && !decision.dup && !hold) {
    base::Status status = inner_->send(peer, frame);
    if (!status) return status;
    frame_left(peer);
    return release_ready(now);
  }

  const bool corrupted = decision.corrupt && size > 0;  // an empty frame has nothing to corrupt
  if (!hold) {
    scratch_.resize(size);
    frame.write(scratch_);
    if (corrupted) corrupt(scratch_);
    base::Status status = forward(peer, scratch_, frame.bulk(), decision.dup, corrupted);
    if (!status) return status;
    frame_left(peer);
    return release_ready(now);
  }

  Held held;
  held.peer = peer;
  held.bytes.resize(size);
  frame.write(held.bytes);
  if (corrupted) corrupt(held.bytes);
  held.bulk = frame.bulk();
  held.dup = decision.dup;
  held.corrupted = corrupted;
  held.waiting_for_next = decision.reorder;
  held.not_before = now + decision.delay;
  const FaultClock::time_point leave_by =
      decision.reorder ? held.not_before + reorder_hold_ : held.not_before;
  const HeldQueue::iterator it = held_.emplace(leave_by, std::move(held));  // after equal deadlines
  if (decision.reorder) {
    waiting_.push_back(it);
    ++counters_.reordered;
  }
  if (decision.delay.count() > 0) ++counters_.delayed;
  return {};
}

std::size_t FaultPath::poll(FrameSink& sink, std::size_t budget) noexcept {
  if (const std::lock_guard lock(lock_); !held_.empty()) {
    base::Status status = release_ready(clock());
    if (!status && pending_error_.is_ok()) pending_error_ = std::move(status);
  }
  return inner_->poll(sink, budget);
}

std::vector<PathCounterGroup> FaultPath::stats() const {
  const std::lock_guard lock(lock_);
  std::vector<PathCounterGroup> groups = inner_->stats();
  const FaultCounters& f = counters_;
  groups.push_back({"faults", info_.name,
                    {{"frames_seen", f.frames_seen},
                     {"dropped", f.dropped},
                     {"corrupted", f.corrupted},
                     {"duplicated", f.duplicated},
                     {"reordered", f.reordered},
                     {"delayed", f.delayed},
                     {"blackholed", f.blackholed}}});
  return groups;
}

}  // namespace ftmpi::path

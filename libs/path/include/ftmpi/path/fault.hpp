// Fault injection: the SPEC language and FaultPath, a decorator that wraps any path (docs/architecture.md,
// "Paths").
//
// The language. Tests, `ftrun --fault` / `--fault-plan` (parameters path.fault and path.fault_plan) and
// the live ftinject tool all speak it. A SPEC is comma-separated key=value:
//
//   drop=P, corrupt=P, dup=P, reorder=P   probabilities from 0 to 1, drawn for every frame sent
//   delay=D                               hold every frame for D ("5ms", "200us", "1s"; bare number: us)
//   blackhole (or blackhole=1)            lose every frame
//   rail=R                                only on rail R: its index ("0") or its name as the operator gave
//                                         it ("127.0.0.2", "veth1"); absent: every rail
//   after=W, for=W                        active from W after the plan was installed, for W; absent: from
//                                         the start, for ever. W is a time ("300ms") or a volume of
//                                         traffic ending in B ("64MB", "512KiB", "100B"): the bytes this
//                                         process sent and received on all its rails
//                                         (FaultOptions::traffic). A volume makes a fault follow the
//                                         work's progress, whatever the machine's speed or load.
//   seed=N                                seeds the random generator; absent: kDefaultFaultSeed, so that a
//                                         run replays
//
//   e.g.  drop=0.05,corrupt=0.01,rail=1          blackhole,rail=veth1,after=2s,for=500ms
//         blackhole,rail=1,after=32MB,for=1s       (opens once 32 MB have moved, closes a second later)
//
// A plan is several SPECs separated by ';' or newlines; blank lines and '#' comments are ignored.
//
// FaultPath. Faults are applied to frames as they are SENT, so a plan given to every rank affects both
// directions of every pair. Each frame sent is checked against the specs whose window is open now (it
// opens when `after` has passed since the plan was installed and closes when `for` has passed since it
// opened, each bound measured in time or in traffic); the specs' draws combine (any blackhole or drop loses the frame; otherwise it may be
// corrupted, duplicated, reordered and delayed by the longest delay). A frame that only passes through
// goes straight to the inner path through the caller's FrameWriter; a frame that is altered or held is
// written once into FaultPath's own buffer and later forwarded by a small writer over that buffer, which
// keeps the original FrameWriter::bulk(). Held frames (delay, reorder) sit in one queue ordered by the
// time they may leave; every send() and poll() first releases those whose time has come, so nothing is
// held for ever: a reordered frame leaves right after the next frame to the same peer, or after
// FaultOptions::reorder_hold if none comes.
//
// Cost: with no spec installed (and nothing held), send() tests three things and forwards the caller's
// writer, without a copy or a clock reading; poll() forwards.
// Determinism: one std::mt19937_64 per FaultPath, seeded from the plan's seed and FaultOptions::stream;
// the same seed, stream, specs and sequence of frames (and clock readings, for windows and delays) give
// the same faults. Windows in traffic replay on any machine; windows in time depend on its speed.
//
// Threads: like any path, used by one thread at a time; set_specs/add_specs from that same thread.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ftmpi/base/status.hpp"
#include "ftmpi/base/threads.hpp"
#include "ftmpi/path/path.hpp"

namespace ftmpi::path {

// The seed of a plan that names none: the standard default of std::mt19937_64 (5489), so that a run
// without seed=N replays exactly.
inline constexpr std::uint64_t kDefaultFaultSeed = std::mt19937_64::default_seed;

struct FaultSpec {
  double drop = 0;     // probability that a frame is lost
  double corrupt = 0;  // probability that 1..8 bytes of a frame are flipped
  double dup = 0;      // probability that a frame is sent twice
  double reorder = 0;  // probability that a frame is sent after the next one to the same peer
  std::chrono::nanoseconds delay{0};  // every frame is held this long
  bool blackhole = false;             // every frame is lost
  std::string rail;                   // index or name of the one rail it applies to; empty: every rail
  std::chrono::nanoseconds after{0};  // inactive until this long after the plan was installed
  std::optional<std::uint64_t> after_bytes;       // `after` given as a volume of traffic (then after is 0)
  std::optional<std::chrono::nanoseconds> lasts;  // the `for` key: active this long; none: for ever
  std::optional<std::uint64_t> lasts_bytes;       // `for` given as a volume of traffic (then lasts is none)
  std::optional<std::uint64_t> seed;

  bool operator==(const FaultSpec&) const = default;
};

// One SPEC, e.g. "drop=0.1,rail=1". Errors name the spec and the problem:
// "fault spec 'drop=2': drop must be a probability from 0 to 1".
base::Result<FaultSpec> parse_fault_spec(std::string_view text);

// SPECs separated by ';' or newlines; blank lines and '#' comments are skipped. Errors start with
// "<origin> line N: " (origin: a file name, a parameter name).
base::Result<std::vector<FaultSpec>> parse_fault_plan(std::string_view text,
                                                      std::string_view origin = "fault plan");

// The canonical text of a spec; parse_fault_spec(to_string(spec)) == spec. Keys at their defaults are
// left out ("drop=0" stands for a spec with nothing set).
std::string to_string(const FaultSpec& spec);

// The specs of `plan` that apply to the rail with this index and name (those naming either, and those
// naming no rail), in plan order.
std::vector<FaultSpec> fault_specs_for_rail(std::span<const FaultSpec> plan, std::size_t rail_index,
                                            std::string_view rail_name);

struct FaultCounters {
  std::uint64_t frames_seen = 0;  // every frame given to send() that the inner path could take
  std::uint64_t dropped = 0;
  std::uint64_t corrupted = 0;   // corrupted copies the inner path accepted (each copy of a dup counts)
  std::uint64_t duplicated = 0;  // frames whose second copy the inner path accepted
  std::uint64_t reordered = 0;   // frames held back to go after a later one
  std::uint64_t delayed = 0;
  std::uint64_t blackholed = 0;
};

using FaultClock = std::chrono::steady_clock;

struct FaultOptions {
  // Reads the time for windows and delays; tests inject their own. Empty: FaultClock::now.
  std::function<FaultClock::time_point()> now{};
  // Longest wait of a reordered frame for a later frame to the same peer.
  std::chrono::nanoseconds reorder_hold = std::chrono::milliseconds(1);
  // Mixed into the seed so that paths given the same plan (every rank's) make different draws; the
  // engine passes the rank.
  std::uint64_t stream = 0;
  // Bytes this process has sent and received on all its rails so far, for windows given as volumes; the
  // engine passes its own count (every rail's, so both ends of a pair see the same progress). Read only
  // while a spec with a volume bound is waiting to open or close. Empty: the bytes of the frames sent
  // through this path.
  std::function<std::uint64_t()> traffic{};
};

class FaultPath final : public Path {
 public:
  // `specs` are already chosen for this rail (fault_specs_for_rail): their `rail` key is not looked at.
  // The plan counts as installed now, for `after`.
  FaultPath(std::unique_ptr<Path> inner, std::vector<FaultSpec> specs, FaultOptions options = {});
  // The wrapped path (for its own counters).
  const Path& inner() const noexcept { return *inner_; }
  // Frames still held are lost.
  ~FaultPath() override;

  // The inner path's, under the inner path's name, and never reliable: faults may be added at any time
  // (ftinject), so the engine must always check and retransmit.
  const PathInfo& info() const noexcept override { return info_; }
  bool reaches(Rank peer) const noexcept override { return inner_->reaches(peer); }
  std::size_t max_frame_to(Rank peer) const noexcept override { return inner_->max_frame_to(peer); }
  std::size_t frames_in_flight_limit(Rank peer) const noexcept override {
    return inner_->frames_in_flight_limit(peer);
  }
  // Applies the faults to this frame after releasing the held frames whose time has come. Returns the
  // inner path's error for this frame or for a held frame released now or by an earlier poll().
  base::Status send(Rank peer, FrameWriter& frame) noexcept override;
  // Releases held frames whose time has come, then polls the inner path.
  std::size_t poll(FrameSink& sink, std::size_t budget) noexcept override;
  bool has_queued_frames() const noexcept override;
  void expect_bulk(bool expected) noexcept override { inner_->expect_bulk(expected); }
  // The inner path's held frames; this path's own (delayed, reordered) leave when their time comes.
  void flush_sends() noexcept override { inner_->flush_sends(); }
  std::optional<std::int64_t> peer_pid(Rank peer) const noexcept override { return inner_->peer_pid(peer); }

  // Replaces the plan (installed now; the generator is reseeded from the first spec with a seed, else
  // kDefaultFaultSeed). Frames already held still leave when their time comes. A spec whose window has
  // closed is removed at the next frame sent, so that the path goes back to forwarding at no cost.
  void set_specs(std::vector<FaultSpec> specs);
  // Adds specs installed now; reseeds only when one of them carries a seed.
  void add_specs(std::vector<FaultSpec> specs);
  std::span<const FaultSpec> specs() const noexcept { return specs_; }
  // Where a spec's window stands now: not open yet, open, or over (its spec is removed at the next frame).
  enum class SpecState : std::uint8_t { waiting, active, ended };
  SpecState spec_state(std::size_t spec) const;

  const FaultCounters& counters() const noexcept { return counters_; }
  // The inner path's groups, then a "faults" group: frames seen, dropped, corrupted, duplicated,
  // reordered, delayed, blackholed.
  std::vector<PathCounterGroup> stats() const override;
  Path& inner() noexcept { return *inner_; }
  // Frames held now (delayed or reordered).
  std::size_t held_frames() const noexcept { return held_.size(); }

 private:
  struct Decision {
    bool lose_blackhole = false;
    bool lose_drop = false;
    bool corrupt = false;
    bool dup = false;
    bool reorder = false;
    std::chrono::nanoseconds delay{0};
  };
  struct Held {
    Rank peer = 0;
    std::vector<std::byte> bytes;
    bool bulk = false;
    bool dup = false;
    bool corrupted = false;
    bool waiting_for_next = false;       // reordered, no later frame to the peer has left yet
    FaultClock::time_point not_before;   // its delay ends
  };
  using HeldQueue = std::multimap<FaultClock::time_point, Held>;  // by the time it may leave

  // Where one spec's window stands: installed, then open, then closed (for good).
  struct Window {
    FaultClock::time_point installed;
    std::uint64_t installed_traffic = 0;
    bool open = false;
    bool closed = false;
    FaultClock::time_point opened;
    std::uint64_t opened_traffic = 0;
  };

  FaultClock::time_point clock() const { return now_ ? now_() : FaultClock::now(); }
  std::uint64_t traffic() const { return traffic_ ? traffic_() : sent_bytes_; }
  Window window_from_now(FaultClock::time_point now) const;
  bool window_open(const FaultSpec& spec, Window& window, FaultClock::time_point now);
  void remove_ended_specs();
  void reseed(std::uint64_t seed);
  double draw();
  Decision decide(FaultClock::time_point now);
  void corrupt(std::span<std::byte> bytes);
  base::Status forward(Rank peer, std::span<const std::byte> bytes, bool bulk, bool dup, bool corrupted);
  base::Status release_ready(FaultClock::time_point now);
  void frame_left(Rank peer);

  // Sends come from several threads at once in a multi-threaded process (base::multi_threaded()): the
  // plan, the generator, the held frames and the counters are kept under this lock (the inner path's
  // own lock is taken inside it).
  mutable base::OptionalMutex lock_;
  std::unique_ptr<Path> inner_;
  std::vector<FaultSpec> specs_;
  std::vector<Window> windows_;  // by spec
  std::function<FaultClock::time_point()> now_;
  std::function<std::uint64_t()> traffic_;
  std::uint64_t sent_bytes_ = 0;  // the traffic without FaultOptions::traffic
  std::chrono::nanoseconds reorder_hold_;
  std::uint64_t stream_;
  PathInfo info_;
  std::mt19937_64 random_;
  FaultCounters counters_;
  std::vector<std::byte> scratch_;  // the altered copy of a frame that leaves at once
  HeldQueue held_;
  std::vector<HeldQueue::iterator> waiting_;  // held frames with waiting_for_next
  base::Status pending_error_;                // from releasing held frames in poll()
};

}  // namespace ftmpi::path

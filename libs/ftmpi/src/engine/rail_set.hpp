// The rails to one peer: each rail's health (up / suspect / down / disabled), its round-trip estimate and
// retransmission timeout, its probes, and the choice of rail for each new frame.
//
// A RailSet knows nothing of frames, sequence numbers or sockets. The engine tells it what happened (an
// ACK proved a rail, a frame timed out on it, the operating system refused a send, a probe came back, the
// operator disabled it) and it tells the engine what to do through RailSet::Actions (send a probe, move
// the frames stranded on a rail that left service, end the job when no rail is left). Time comes from a
// RailClock, so failover and failback are tested in simulated time (tests/unit/engine/rail_set_test.cpp).
//
// Striping. A frame goes on the working ("up") rail with the fewest bytes in flight, ties taken in turn.
// A rail that delivers faster is ACKed sooner, so it gets more of every message: the weights are what
// each rail actually delivers, not nominal speeds.
//
// Failure. A frame that times out marks its rail *suspect*: it takes no new frames and is probed at once
// and then every min(rto, down_after / 8). A probe answered puts it back up. A suspect rail that answers
// nothing for engine.rail.down_after, while another rail to the peer answers (so the peer is alive and
// polling), is *down*. A send the operating system refuses (ENETUNREACH, EPERM from a firewall, ...)
// makes the rail suspect and probed at once; three refusals in a row with no answer between them (a link
// that is down refuses everything, a firewall rule that drops 5% refuses only those) make it down, within
// the same call. When a suspect rail has been silent for engine.peer.timeout with no other rail proving
// the peer alive (every rail to it silent, or the others idle), the launcher is asked
// whether the peer still polls (a ping over its control connection, which the peer answers from its
// progress loop): if it does, its silence is the network's and its rails fail (the engine then declares
// it lost, naming every rail); if it does not, it is computing, and is waited for, asking again every
// engine.peer.timeout. Without a launcher to ask, the rails fail at engine.peer.timeout.
//
// Failback. A down rail is probed with back-off from engine.rail.probe_min to engine.rail.probe_max for
// as long as the job runs; a probe reply that comes back *on that rail* puts it up again.
//
// The operator. A disabled rail takes nothing and is never probed; its frames move away as at a
// failure. Enabling it makes it down and probed at once; its first answer puts it back in service (not
// counted as a failback). The last working rail to a peer cannot be disabled.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <deque>
#include <string>
#include <string_view>
#include <vector>

#include "ftmpi/base/status.hpp"
#include "stats.hpp"

namespace ftmpi::path {
class Path;
}

namespace ftmpi::engine {

using Clock = std::chrono::steady_clock;

// Where rails read the time: the real clocks in the engine, a hand-moved one in tests.
class RailClock {
 public:
  virtual ~RailClock() = default;
  virtual Clock::time_point now() const noexcept = 0;
  // The wall clock, for the times of state changes that operators read.
  virtual std::chrono::system_clock::time_point wall() const noexcept = 0;
  // The steady and system clocks of this machine.
  static const RailClock& real() noexcept;
};

// The rails' timing, from the engine's parameters (engine.retransmit.*, engine.rail.*, engine.peer.*).
struct RailTiming {
  std::chrono::nanoseconds retransmit_min{};
  std::chrono::nanoseconds retransmit_max{};
  std::chrono::nanoseconds down_after{};    // a suspect rail's silence that makes it down
  std::chrono::nanoseconds peer_timeout{};  // silence on every rail that ends the job
  std::chrono::nanoseconds probe_min{};     // a down rail's probe back-off
  std::chrono::nanoseconds probe_max{};
};

// One way to a peer: a path (a rail) that reaches it, and what is known of its health.
struct Route {
  path::Path* path = nullptr;    // null in tests of a RailSet alone
  std::string_view name;         // the path's name, for messages
  std::uint32_t path_index = 0;  // in the engine's path list; rail k of every rank talks to rail k
  std::size_t max_payload = 0;
  std::size_t eager_limit = 0;
  bool single_copy = false;

  RailState state = RailState::up;
  Clock::time_point state_since{};
  std::uint64_t in_flight = 0;         // bytes of frames sent on it that the peer may not have (the engine's)
  std::uint64_t frames_in_flight = 0;  // and how many frames
  std::size_t window_frames = 0;       // at most this many (engine.window_frames, or less where the path says)
  Clock::time_point last_progress{};   // last ACK or probe reply that proved it works
  // What ACKs said of the frames sent on it (not probes): when one last reported a frame of it
  // received, and the latest send time among the frames it reported. A frame sent after the latter is
  // not known to be overtaken: while the rail keeps delivering, it may be queued, not lost
  // (EngineCore::service_timers).
  Clock::time_point last_delivery{};
  Clock::time_point newest_delivered_sent{};
  std::uint32_t timeouts = 0;          // since last_progress
  std::uint32_t refused_sends = 0;     // sends the operating system refused since last_progress
  // The latest timeout or refused send: an answer that arrived before it (an ACK applied a round late)
  // proves the rail worked then, and does not clear what came after.
  Clock::time_point last_trouble{};
  Clock::time_point alive_elsewhere{}; // suspect: when another rail first proved the peer alive
  std::chrono::nanoseconds srtt{0};    // smoothed round trip (0: no sample yet)
  std::chrono::nanoseconds rttvar{0};
  std::chrono::nanoseconds rto{0};     // first retransmission timeout of a frame on this rail
  std::uint64_t probe_seq = 0;         // last probe sent
  std::uint64_t probe_answered = 0;    // last probe answered
  Clock::time_point probe_sent_at{};
  Clock::time_point next_probe{};
  std::chrono::nanoseconds probe_interval{0};
  RailCounters counters;
  std::deque<RailChange> changes;    // the latest kRailChangesKept, oldest first (stats, ftpath)
  bool enabled_by_operator = false;  // down because the operator enabled it: its first answer is no failback

  // A suspect rail's silence: from the suspicion (the first probe), not from the last ACK, since with
  // frames striped over rails LIRS stops at a frame lost on one rail and credits no rail until repaired.
  std::chrono::nanoseconds silent_for(Clock::time_point now) const noexcept {
    return now - std::max(last_progress, state_since);
  }
};

class RailSet {
 public:
  // What a RailSet asks of the engine. `peer` is the RailSet's peer, `rail` an index among its rails.
  class Actions {
   public:
    virtual ~Actions() = default;
    // Sends a probe with this id on the rail; its reply comes back through probe_replied().
    virtual base::Status send_probe(std::uint32_t peer, std::uint32_t rail, std::uint64_t probe_id) = 0;
    // Frames the peer may not have sit on a rail that left service: move them to the others (later, not
    // from inside this call).
    virtual void frames_stranded(std::uint32_t peer) = 0;
    // No rail to the peer is left: the engine declares it lost (its operations fail; the application's
    // error handler decides whether the job ends).
    virtual void no_rail_left(std::uint32_t peer, std::string message) = 0;
    // Every rail to the peer has been silent for engine.peer.timeout: asks the launcher whether the peer
    // still polls; the answer comes back through peer_checked(). False when nobody can be asked.
    virtual bool check_peer(std::uint32_t peer) = 0;
    // A rail changed state (for the flight recorder); nothing to do by default.
    virtual void rail_changed(std::uint32_t peer, std::uint32_t rail, const RailChange& change) {
      (void)peer, (void)rail, (void)change;
    }
  };

  // What every RailSet of an engine shares.
  struct Context {
    RailTiming timing;
    const RailClock* clock = &RailClock::real();
    Actions* actions = nullptr;
    EngineCounters* totals = nullptr;  // rails_down, rails_up
  };

  RailSet(std::uint32_t peer, const Context* context) : peer_(peer), context_(context) {}

  // Adds a rail, up from now with the minimum timeout (construction).
  void add(Route route);
  void clear() noexcept { routes_.clear(); }

  std::uint32_t size() const noexcept { return static_cast<std::uint32_t>(routes_.size()); }
  bool empty() const noexcept { return routes_.empty(); }
  Route& operator[](std::uint32_t rail) noexcept { return routes_[rail]; }
  const Route& operator[](std::uint32_t rail) const noexcept { return routes_[rail]; }
  auto begin() noexcept { return routes_.begin(); }
  auto end() noexcept { return routes_.end(); }
  auto begin() const noexcept { return routes_.begin(); }
  auto end() const noexcept { return routes_.end(); }

  // The rail for the next new frame: the up rail with the fewest bytes in flight, ties in turn; when
  // none is up, the least doubtful suspect one (a down rail only when every rail is down, which ends the
  // job before any frame is sent again).
  std::uint32_t pick() noexcept;

  // The peer answered on this rail (an ACK of one of its frames, or a probe reply) at `now`.
  void proved(std::uint32_t rail, Clock::time_point now) noexcept;
  // A round trip measured on the rail (RFC 6298: srtt + 4 rttvar, within the retransmit bounds).
  void sample_rtt(std::uint32_t rail, std::chrono::nanoseconds sample) noexcept;
  // A frame sent on the rail timed out: it turns suspect.
  void frame_timed_out(std::uint32_t rail);
  // The operating system refused a send on the rail (`why`): suspect and probed at once, or down after
  // the third refusal in a row with no answer between.
  void send_refused(std::uint32_t rail, std::string_view why);
  // The rail failed (an error, or silence): down, its frames stranded; the job ends when no rail is left.
  void failed(std::uint32_t rail, std::string_view reason);
  // The id of the rail's next probe.
  std::uint64_t next_probe_id(std::uint32_t rail) noexcept;
  // A probe reply with this id arrived on the rail: when it answers the rail's own latest probes, the
  // rail is proved (and up again unless disabled). Replies to other rails' probes, or ids never sent,
  // are ignored.
  void probe_replied(std::uint32_t rail, std::uint64_t probe_id);
  // Probes suspect and down rails when due and decides when a suspect rail is down; true when it did
  // anything.
  bool service();
  // The launcher's answer to check_peer(): the peer polls (its silence is the network's), or not (it
  // computes, and is waited for).
  void peer_checked(bool polling);

  // The operator (ftpath): a disabled rail carries nothing and is not probed; an enabled one is probed
  // at once. `last_in_service` says whether disabling it would leave the peer no rail.
  bool last_in_service(std::uint32_t rail) const noexcept;
  void disable(std::uint32_t rail, std::string_view reason) { set_state(rail, RailState::disabled, reason); }
  void enable(std::uint32_t rail, std::string_view reason) { set_state(rail, RailState::down, reason); }

  void set_state(std::uint32_t rail, RailState state, std::string_view reason);

 private:
  base::Status probe(std::uint32_t rail, Clock::time_point now);
  Clock::time_point now() const noexcept { return context_->clock->now(); }
  // Whether a rail silent for engine.peer.timeout fails now: yes without anyone to ask, or when the
  // launcher saw the peer poll (and a grace passed, for its answers in flight); otherwise asks, or waits.
  bool silent_peer_is_lost(Clock::time_point now);

  // The peer check (check_peer): none asked since the peer last answered, asked, or its answer and when.
  enum class PeerCheck : std::uint8_t { none, asked, polling, computing };
  PeerCheck check_ = PeerCheck::none;
  Clock::time_point check_at_{};

  std::uint32_t peer_;
  const Context* context_;
  std::vector<Route> routes_;
  std::uint32_t next_ = 0;  // round-robin start among equally loaded rails
};

}  // namespace ftmpi::engine

// The rails to one peer (rail_set.hpp): health, round trips, probes and the choice of rail.
#include "rail_set.hpp"

#include <algorithm>
#include <string>

#include "ftmpi/base/log.hpp"

namespace ftmpi::engine {
namespace {

// A probe's id: the rail (path index) it was sent on, and a per-rail number.
constexpr unsigned kProbeRailShift = 48;
constexpr std::uint64_t kProbeSeqMask = (std::uint64_t{1} << kProbeRailShift) - 1;
// Refused sends (and probes) in a row, with no answer from the rail between them, that take it down.
constexpr std::uint32_t kRefusalsForDown = 3;

std::string ms(std::chrono::nanoseconds d) {
  return std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(d).count()) + " ms";
}

class RealRailClock final : public RailClock {
 public:
  Clock::time_point now() const noexcept override { return Clock::now(); }
  std::chrono::system_clock::time_point wall() const noexcept override { return std::chrono::system_clock::now(); }
};

}  // namespace

const RailClock& RailClock::real() noexcept {
  static const RealRailClock clock;
  return clock;
}

void RailSet::add(Route route) {
  const Clock::time_point t = now();
  route.state = RailState::up;
  route.state_since = t;
  route.last_progress = t;
  route.rto = context_->timing.retransmit_min;
  routes_.push_back(std::move(route));
}

std::uint32_t RailSet::pick() noexcept {
  const auto n = static_cast<std::uint32_t>(routes_.size());
  if (n == 1) return 0;
  std::uint32_t best = n;
  for (std::uint32_t k = 0; k < n; ++k) {
    const std::uint32_t i = (next_ + k) % n;
    const Route& r = routes_[i];
    if (r.state != RailState::up) continue;
    if (best == n || r.in_flight < routes_[best].in_flight) best = i;
  }
  if (best == n) {
    for (std::uint32_t i = 0; i < n; ++i) {
      const Route& r = routes_[i];
      if (best == n || r.state < routes_[best].state ||
          (r.state == routes_[best].state && r.timeouts < routes_[best].timeouts)) {
        best = i;
      }
    }
  }
  next_ = (best + 1) % n;
  return best;
}

void RailSet::proved(std::uint32_t rail, Clock::time_point now) noexcept {
  Route& route = routes_[rail];
  // How long a live peer stayed silent on a suspect rail before answering: what engine.peer.timeout must
  // exceed (docs/benchmarks-history.md, "How long a live peer is silent").
  if (route.state == RailState::suspect && context_->totals != nullptr) {
    const auto silent = route.silent_for(now);
    context_->totals->longest_answered_silence_us =
        std::max<std::uint64_t>(context_->totals->longest_answered_silence_us,
                                static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::microseconds>(silent).count()));
  }
  check_ = PeerCheck::none;
  route.last_progress = std::max(route.last_progress, now);  // an ACK applied late is older evidence
  if (now < route.last_trouble) return;  // answered before the latest timeout or refusal: they stand
  route.timeouts = 0;
  route.refused_sends = 0;
}

void RailSet::sample_rtt(std::uint32_t rail, std::chrono::nanoseconds sample) noexcept {
  Route& route = routes_[rail];
  if (route.srtt.count() == 0) {
    route.srtt = sample;
    route.rttvar = sample / 2;
  } else {
    const auto error = route.srtt > sample ? route.srtt - sample : sample - route.srtt;
    route.rttvar = (3 * route.rttvar + error) / 4;
    route.srtt = (7 * route.srtt + sample) / 8;
  }
  route.rto = std::clamp(route.srtt + 4 * route.rttvar, context_->timing.retransmit_min,
                         context_->timing.retransmit_max);
}

void RailSet::frame_timed_out(std::uint32_t rail) {
  Route& route = routes_[rail];
  ++route.timeouts;
  ++route.counters.timeouts;
  route.last_trouble = now();
  if (route.state == RailState::up) set_state(rail, RailState::suspect, "a frame timed out");
}

void RailSet::set_state(std::uint32_t rail, RailState state, std::string_view reason) {
  Route& route = routes_[rail];
  if (route.state == state) return;
  const RailState was = route.state;
  const Clock::time_point t = now();
  const RailTiming& timing = context_->timing;
  route.state = state;
  route.state_since = t;
  route.alive_elsewhere = {};
  ++route.counters.state_changes;
  if (route.changes.size() == kRailChangesKept) route.changes.pop_front();
  route.changes.push_back({context_->clock->wall(), state, std::string(reason)});
  if (context_->actions != nullptr) context_->actions->rail_changed(peer_, rail, route.changes.back());
  switch (state) {
    case RailState::suspect:
      base::logger().debug("rail {} to rank {} is suspect: {}", route.name, peer_, reason);
      route.next_probe = t;  // ask at once
      break;
    case RailState::disabled:
      base::logger().warn("rail {} to rank {} is disabled: {}", route.name, peer_, reason);
      if (route.in_flight > 0) context_->actions->frames_stranded(peer_);  // moved exactly as at a failure
      break;
    case RailState::down:
      // Enabling a disabled rail makes it down and probed at once: no failure to count.
      if (was == RailState::disabled) {
        base::logger().warn("rail {} to rank {} is enabled, probing: {}", route.name, peer_, reason);
        route.probe_interval = timing.probe_min;
        route.next_probe = t;
        route.enabled_by_operator = true;
        break;
      }
      route.enabled_by_operator = false;
      ++context_->totals->rails_down;
      base::logger().warn("rail {} to rank {} is down: {}", route.name, peer_, reason);
      route.probe_interval = timing.probe_min;
      route.next_probe = t + route.probe_interval;
      route.rto = timing.retransmit_min;  // what it measured before may no longer hold
      route.srtt = route.rttvar = std::chrono::nanoseconds(0);
      break;
    case RailState::up:
      if (was == RailState::down && route.enabled_by_operator) {
        route.enabled_by_operator = false;
        base::logger().warn("rail {} to rank {} is in service again: {}", route.name, peer_, reason);
      } else if (was == RailState::down) {
        ++context_->totals->rails_up;
        base::logger().warn("rail {} to rank {} is back up: {}", route.name, peer_, reason);
      } else {
        base::logger().debug("rail {} to rank {} is up again: {}", route.name, peer_, reason);
      }
      route.timeouts = 0;
      route.refused_sends = 0;
      route.last_progress = t;
      break;
  }
}

void RailSet::failed(std::uint32_t rail, std::string_view reason) {
  set_state(rail, RailState::down, reason);
  if (routes_[rail].in_flight > 0) context_->actions->frames_stranded(peer_);
  const bool any_left = std::any_of(routes_.begin(), routes_.end(),
                                    [](const Route& r) { return !out_of_service(r.state); });
  if (any_left) return;
  // Rails the operator disabled stay out: bringing one back from this side alone could not work, since
  // the peer, which may only be acknowledging, keeps answering on the rail that died. The message says
  // which rails were disabled.
  const Clock::time_point t = now();
  std::string states;
  for (const Route& r : routes_) {
    if (!states.empty()) states += "; ";
    states += std::string(r.name) + ": " + std::string(to_string(r.state)) + " for " + ms(t - r.state_since) +
              ", last answer " + ms(t - r.last_progress) + " ago, " + std::to_string(r.counters.timeouts) +
              " timeouts";
  }
  const bool disabled = std::any_of(routes_.begin(), routes_.end(),
                                    [](const Route& r) { return r.state == RailState::disabled; });
  context_->actions->no_rail_left(
      peer_, "no rail left to rank " + std::to_string(peer_) + " (" + std::string(reason) + "); rails: " + states +
                 (disabled ? " (a disabled rail carries nothing until ftpath enable)" : ""));
}

void RailSet::send_refused(std::uint32_t rail, std::string_view why) {
  Route& route = routes_[rail];
  if (out_of_service(route.state)) return;
  // One refusal may pass: a firewall rule that drops a share of the packets refuses exactly those (EPERM),
  // and taking the rail down for each would flap it hundreds of times. So the rail turns suspect (no new
  // frames) and is probed at once; a probe refused too counts, and kRefusalsForDown refusals in a row
  // with no answer between them (a link that is down refuses everything) take it down, all within this
  // call.
  ++route.counters.refused_sends;
  route.last_trouble = now();
  while (++route.refused_sends < kRefusalsForDown) {
    set_state(rail, RailState::suspect, why);
    const Clock::time_point t = now();
    if (probe(rail, t).is_ok()) {
      route.next_probe = t + std::min(route.rto, context_->timing.down_after / 8);
      return;
    }
    ++route.counters.refused_sends;
  }
  failed(rail, why);
}

std::uint64_t RailSet::next_probe_id(std::uint32_t rail) noexcept {
  Route& route = routes_[rail];
  route.probe_seq = (route.probe_seq + 1) & kProbeSeqMask;
  return (std::uint64_t{route.path_index} << kProbeRailShift) | route.probe_seq;
}

base::Status RailSet::probe(std::uint32_t rail, Clock::time_point now) {
  const std::uint64_t id = next_probe_id(rail);
  routes_[rail].probe_sent_at = now;
  ++routes_[rail].counters.probes_sent;
  return context_->actions->send_probe(peer_, rail, id);
}

void RailSet::probe_replied(std::uint32_t rail, std::uint64_t probe_id) {
  Route& route = routes_[rail];
  // A reply counts only on the rail its probe was sent on, and only for a probe we sent.
  const std::uint64_t seq = probe_id & kProbeSeqMask;
  if ((probe_id >> kProbeRailShift) != route.path_index || seq <= route.probe_answered || seq > route.probe_seq) {
    return;
  }
  route.probe_answered = seq;
  ++route.counters.probe_replies;
  const Clock::time_point t = now();
  if (seq == route.probe_seq) sample_rtt(rail, t - route.probe_sent_at);
  proved(rail, t);
  // A disabled rail stays out whatever answers on it, until the operator enables it.
  if (route.state != RailState::up && route.state != RailState::disabled) {
    set_state(rail, RailState::up, "a probe was answered");
  }
}

bool RailSet::service() {
  bool did = false;
  const RailTiming& timing = context_->timing;
  const Clock::time_point t = now();
  for (std::uint32_t k = 0; k < routes_.size(); ++k) {
    Route& route = routes_[k];
    if (route.state == RailState::up || route.state == RailState::disabled) continue;
    if (route.state == RailState::suspect) {
      const auto silent = route.silent_for(t);
      // Evidence that the peer itself is alive: another rail answered well after this one fell silent
      // (half of down_after: several of this rail's probes were out by then). A peer that stopped
      // polling to compute answers on no rail, and must not lose its rails for that; and when it polls
      // again it answers one rail's backlog before the next one's, so this rail gets a grace period
      // from the evidence on.
      if (route.alive_elsewhere == Clock::time_point{}) {
        const auto after = route.state_since + timing.down_after / 2;
        const bool answered = std::any_of(routes_.begin(), routes_.end(), [&](const Route& r) {
          return &r != &route && r.state == RailState::up && r.last_progress > after;
        });
        if (answered) route.alive_elsewhere = t;
      }
      const bool another_works =
          route.alive_elsewhere != Clock::time_point{} && t - route.alive_elsewhere >= timing.down_after / 4;
      if (another_works && silent >= timing.down_after) {
        failed(k, "no answer for " + ms(silent));
        did = true;
        continue;
      }
      if (silent >= timing.peer_timeout && silent_peer_is_lost(t)) {
        failed(k, "no answer for " + ms(silent) +
                      (check_ == PeerCheck::polling ? ", while it polls (it answered ftrun)" : ""));
        did = true;
        continue;
      }
    }
    if (t < route.next_probe) continue;
    const base::Status probed = probe(k, t);
    if (!probed && route.state == RailState::suspect) {
      send_refused(k, probed.to_string());  // one more refusal: probes again, or takes the rail down
      did = true;
      continue;
    }
    // A down rail's probe that cannot leave says nothing new: the next one is scheduled below.
    if (route.state == RailState::suspect) {
      // At least eight probes before silence can take it down: a few lost probes must not.
      route.next_probe = t + std::min(route.rto, timing.down_after / 8);
    } else {
      route.next_probe = t + route.probe_interval;
      route.probe_interval = std::min(timing.probe_max, 2 * route.probe_interval);
    }
    did = true;
  }
  return did;
}

bool RailSet::silent_peer_is_lost(Clock::time_point t) {
  const RailTiming& timing = context_->timing;
  switch (check_) {
    case PeerCheck::none:
      if (!context_->actions->check_peer(peer_)) return true;  // nobody to ask: silence is enough
      check_ = PeerCheck::asked;
      check_at_ = t;
      return false;
    case PeerCheck::asked:
      // The launcher answers within its window; one lost with it (a job ending) is asked again.
      if (t - check_at_ >= 2 * timing.peer_timeout) check_ = PeerCheck::none;
      return false;
    case PeerCheck::polling:
      // It polls, yet answers nothing: the network between us is dead. A grace for its answers to our
      // probes that may still be on their way (they race its answer to ftrun).
      return t - check_at_ >= 4 * timing.down_after;
    case PeerCheck::computing:
      if (t - check_at_ >= timing.peer_timeout) check_ = PeerCheck::none;  // ask again
      return false;
  }
  return false;
}

void RailSet::peer_checked(bool polling) {
  if (check_ != PeerCheck::asked) return;  // the peer answered meanwhile, or nobody asked
  check_ = polling ? PeerCheck::polling : PeerCheck::computing;
  check_at_ = now();
  base::logger().debug("rank {} {} (asked ftrun: every rail to it is silent)", peer_,
                       polling ? "polls" : "is not polling; it is waited for");
}

bool RailSet::last_in_service(std::uint32_t rail) const noexcept {
  for (std::uint32_t k = 0; k < routes_.size(); ++k) {
    if (k != rail && !out_of_service(routes_[k].state)) return false;
  }
  return true;
}

}  // namespace ftmpi::engine

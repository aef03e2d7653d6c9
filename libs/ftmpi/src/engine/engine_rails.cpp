// Reliability across rails: acknowledgements, retransmission, striping, failover and failback.
//
// Acknowledgement (docs/architecture.md, "Reliability"). The sender keeps every sequenced frame it sent to a
// peer, whole, in `Peer::retained` (sequence order) until the peer's LIDS covers it. Frames covered by LIRS
// but not yet by LIDS were received and only wait for their receive to be posted: they no longer count as in
// flight on their rail and are never resent (their timer is pushed back instead), so a receiver that is busy
// computing is not flooded with copies of data it already holds.
//
// Retransmission timer, per rail to a peer: RFC 6298's estimator (srtt + 4 rttvar) from frames ACKed on
// their first attempt (Karn: a resent frame's ACK says nothing about which copy arrived), floored at
// engine.retransmit.min and capped at engine.retransmit.max; each further attempt of a frame doubles its
// timeout (truncated exponential back-off).
//
// Striping. A frame goes on the working ("up") rail with the fewest bytes in flight, ties taken in turn.
// A rail that delivers faster is ACKed sooner, so it gets more of every message: the weights are what
// each rail actually delivers, not nominal speeds. A window (engine.window) per rail bounds what a
// stream may have in flight, so a healthy link is not overrun.
//
// Failure and failover. A frame that times out marks its rail *suspect*: the frame is resent at once on
// the best other rail, the suspect rail takes no new frames and is probed at once. A probe answered
// puts it back up. A suspect rail that answers nothing for engine.rail.down_after from then on, while
// another rail to the peer answers (so the peer is alive and polling), is *down*. A send the operating
// system refuses (ENETUNREACH, EPERM from a firewall, ...) goes out again on another rail at once and makes
// the rail suspect and probed at once; three refusals in a row with no answer between them (a link that is
// down refuses everything, a firewall rule that drops 5% refuses only those) make it down, within the same
// call. Every unacknowledged frame on a down rail is rebound to the surviving rails, re-cut to their frame
// size when it is larger; per-byte sequence numbers make that legal, and the receiver's range lists drop
// whatever copy arrives second, so no byte is lost or delivered twice. The last rail to a peer is declared
// down only after engine.peer.timeout of silence (a peer that is busy computing looks exactly like a dead
// one from here); then the job ends, naming the peer and every rail's state.
//
// Failback. A down rail is probed with back-off from engine.rail.probe_min to engine.rail.probe_max for
// as long as the job runs; a probe reply that comes back *on that rail* puts it up again. The peer
// answers a probe on the rail it arrived on, whatever it thinks of that rail itself.
#include <algorithm>
#include <cstring>
#include <set>
#include <string>

#include "engine_core.hpp"
#include "ftmpi/base/log.hpp"

namespace ftmpi::engine {
namespace {

// A probe's id: the rail (path index) it was sent on, and a per-rail number.
constexpr unsigned kProbeRailShift = 48;
constexpr std::uint64_t kProbeSeqMask = (std::uint64_t{1} << kProbeRailShift) - 1;
// Buffers of acknowledged frames kept for reuse: about two windows of full-size UDP frames.
constexpr std::size_t kSpareFrames = 128;
// Refused sends (and probes) in a row, with no answer from the rail between them, that take it down.
constexpr std::uint32_t kRefusalsForDown = 3;

std::chrono::nanoseconds frame_timeout(const Route& route, const RetainedFrame& f,
                                       std::chrono::nanoseconds cap) {
  const auto shift = std::min<std::uint32_t>(f.attempts - 1, 20);
  return std::min(cap, std::chrono::nanoseconds(route.rto.count() << shift));
}

std::string ms(std::chrono::nanoseconds d) {
  return std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(d).count()) + " ms";
}

}  // namespace

// ---------------------------------------------------------------------------------------------------
// Acknowledgements

void EngineCore::handle_ack(Peer& peer, std::uint64_t lirs, std::uint64_t lids) {
  const std::uint64_t sent = peer.next_byte_seq - 1;
  if (lirs > sent || lids > sent || lids > lirs) {  // acknowledges what we never sent: forged
    ++counters_.dropped_malformed;
    return;
  }
  const Clock::time_point now = Clock::now();
  if (lirs > peer.acked_lirs) {
    peer.acked_lirs = lirs;
    // Karn: a resent frame's ACK says nothing of which copy arrived; and frames that LIRS reaches only
    // once a resent frame before them arrived waited for it, so no frame of such an ACK is sampled.
    const RetainedFrame* newest = nullptr;
    bool clean = true;
    while (peer.received_prefix < peer.retained.size() &&
           peer.retained[peer.received_prefix].range.last <= lirs) {
      RetainedFrame& f = peer.retained[peer.received_prefix++];
      if (!f.received) {
        frame_received(peer, f, now);
        clean = clean && f.attempts == 1;
        newest = &f;
      }
    }
    if (clean && newest != nullptr) sample_rtt(peer.routes[newest->route], now - newest->sent_at);
  }
  if (lids > peer.acked_lids) {
    peer.acked_lids = lids;
    while (!peer.retained.empty() && peer.retained.front().range.last <= lids) {
      if (spare_frames_.size() < kSpareFrames) spare_frames_.push_back(std::move(peer.retained.front().bytes));
      peer.retained.pop_front();
      --peer.received_prefix;  // lids <= lirs: every frame freed here was counted as received
    }
  }
}

// The peer holds [first, last] above its LIRS: the frames inside are neither resent nor in flight.
void EngineCore::handle_selective_ack(Peer& peer, std::uint64_t first, std::uint64_t last) {
  if (last >= peer.next_byte_seq) {  // acknowledges what we never sent: forged
    ++counters_.dropped_malformed;
    return;
  }
  const Clock::time_point now = Clock::now();
  auto it = std::lower_bound(peer.retained.begin() + static_cast<std::ptrdiff_t>(peer.received_prefix),
                             peer.retained.end(), first,
                             [](const RetainedFrame& f, std::uint64_t n) { return f.range.first < n; });
  for (; it != peer.retained.end() && it->range.last <= last; ++it) {
    if (!it->received) frame_received(peer, *it, now);
  }
}

void EngineCore::frame_received(Peer& peer, RetainedFrame& f, Clock::time_point now) {
  f.received = true;
  Route& route = peer.routes[f.route];
  route.in_flight -= f.bytes.size();
  --route.frames_in_flight;
  route_progress(route, now);
}

void EngineCore::handle_nack(Peer& peer, const frag::FrameHeader& h) {
  const std::uint64_t last = h.seq_first + h.seq_count - 1;
  scratch_indices_.clear();
  for (std::size_t i = peer.received_prefix; i < peer.retained.size(); ++i) {
    const RetainedFrame& f = peer.retained[i];
    if (f.received || f.range.last < h.seq_first || f.range.first > last) continue;
    scratch_indices_.push_back(i);
  }
  resend_elsewhere(peer, scratch_indices_);
}

// ---------------------------------------------------------------------------------------------------
// Retransmission

// Resends retained[index] on `route`, moving its bytes in flight there.
void EngineCore::resend(Peer& peer, std::size_t index, std::uint32_t route_index) {
  RetainedFrame& f = peer.retained[index];
  Route& from = peer.routes[f.route];
  Route& to = peer.routes[route_index];
  if (!f.received) {
    from.in_flight -= f.bytes.size();
    --from.frames_in_flight;
    to.in_flight += f.bytes.size();
    ++to.frames_in_flight;
  }
  f.route = route_index;
  ++f.attempts;
  f.sent_at = Clock::now();
  ++counters_.retransmits;
  ++to.counters.retransmits;
  ++to.counters.frames_sent;
  to.counters.bytes_sent += f.bytes.size();
  counters_.bytes_sent += f.bytes.size();
  StoredFrame frame(f.bytes, f.bulk);
  if (base::Status s = to.path->send(peer.rank, frame); !s) route_failed(peer, route_index, s, f.range.first);
}

// Resends the retained frames at `indices` (ascending) each on the best working rail, cutting a frame
// again when it is larger than that rail takes. Works from the back, so that cutting a frame into
// several does not move the frames still to do.
void EngineCore::resend_elsewhere(Peer& peer, std::vector<std::size_t>& indices) {
  for (auto it = indices.rbegin(); it != indices.rend(); ++it) {
    const std::size_t index = *it;
    const std::uint32_t to = pick_route(peer);
    const Route& route = peer.routes[to];
    RetainedFrame& f = peer.retained[index];
    if (f.bytes.size() <= route.max_payload + frag::kHeaderSize) {
      resend(peer, index, to);
      continue;
    }
    // Only DATA frames can be larger than another rail takes: an RTS is cut to fit every rail.
    frag::DecodeLimits own{id_.job_key, id_.size, peer.rank, static_cast<std::uint32_t>(f.bytes.size())};
    auto decoded = frag::decode(f.bytes, own);
    if (!decoded || decoded->type != frag::FrameType::data) {
      abort(1, "internal error: a retained frame cannot be cut for another rail: " +
                   (decoded ? frag::describe(*decoded) : decoded.status().to_string()));
    }
    const frag::FrameHeader old = *decoded;
    const std::span<const std::byte> payload(f.bytes.data() + frag::kHeaderSize, old.payload_length);
    const std::uint32_t old_route = f.route;
    const bool bulk = f.bulk;
    const std::uint32_t attempts = f.attempts;
    peer.routes[old_route].in_flight -= f.bytes.size();
    --peer.routes[old_route].frames_in_flight;
    std::vector<RetainedFrame> pieces;
    for (std::size_t off = 0; off < payload.size(); off += route.max_payload) {
      const std::size_t len = std::min(route.max_payload, payload.size() - off);
      frag::FrameHeader h = old;
      h.seq_first = old.seq_first + off;
      h.seq_count = static_cast<std::uint32_t>(len);
      h.fragment_offset = old.fragment_offset + off;
      h.payload_length = static_cast<std::uint32_t>(len);
      h.flags = static_cast<std::uint8_t>(
          (old.flags & frag::kFlagAckValid) |
          frag::fragment_position_flags(h.fragment_offset, len, old.message_length));
      RetainedFrame& piece = pieces.emplace_back();
      piece.range = {h.seq_first, h.seq_first + len - 1};
      piece.bytes.resize(frag::kHeaderSize + len);
      frag::Checksummer sum(old.checksum_kind);
      sum.copy(piece.bytes.data() + frag::kHeaderSize, payload.data() + off, len);
      h.payload_checksum = sum.value();
      frag::encode(h, std::span<std::byte, frag::kHeaderSize>(piece.bytes.data(), frag::kHeaderSize));
      piece.route = old_route;
      piece.bulk = bulk;
      piece.attempts = attempts;
    }
    base::logger().debug("rank {}: frame {} re-cut into {} for {}", peer.rank, frag::describe(old),
                         pieces.size(), route.path->info().name);
    peer.retained.erase(peer.retained.begin() + static_cast<std::ptrdiff_t>(index));
    peer.retained.insert(peer.retained.begin() + static_cast<std::ptrdiff_t>(index),
                         std::make_move_iterator(pieces.begin()), std::make_move_iterator(pieces.end()));
    for (std::size_t k = 0; k < pieces.size(); ++k) {
      peer.routes[old_route].in_flight += peer.retained[index + k].bytes.size();
      ++peer.routes[old_route].frames_in_flight;
      resend(peer, index + k, pick_route(peer));
    }
  }
  indices.clear();
}

bool EngineCore::service_timers() {
  bool did = false;
  const Clock::time_point now = Clock::now();
  for (Peer& peer : peers_) {
    if (!peer.tracking) continue;
    if (peer.frames_unacked > 0 && now - peer.ack_owed_since >= config_.ack_delay) {
      send_ack(peer);
      did = true;
    }
    for (std::size_t i = 0; i < peer.retained.size(); ++i) {
      RetainedFrame& f = peer.retained[i];
      Route& route = peer.routes[f.route];
      if (now - f.sent_at < frame_timeout(route, f, config_.retransmit_max)) continue;
      if (i < peer.received_prefix || f.received) {
        f.sent_at = now;  // received, waiting for its receive to be posted: wait longer, do not resend
        ++f.attempts;
        continue;
      }
      ++route.timeouts;
      ++route.counters.timeouts;
      if (route.state == RailState::up) set_state(peer, route, RailState::suspect, "a frame timed out");
      scratch_indices_.push_back(i);
    }
    if (!scratch_indices_.empty()) {
      resend_elsewhere(peer, scratch_indices_);
      did = true;
    }
    did = service_rails(peer, now) || did;
  }
  return did;
}

// ---------------------------------------------------------------------------------------------------
// Rails

std::uint32_t EngineCore::pick_route(Peer& peer) noexcept {
  const auto n = static_cast<std::uint32_t>(peer.routes.size());
  if (n == 1) return 0;
  std::uint32_t best = n;
  for (std::uint32_t k = 0; k < n; ++k) {
    const std::uint32_t i = (peer.next_route + k) % n;
    const Route& r = peer.routes[i];
    if (r.state != RailState::up) continue;
    if (best == n || r.in_flight < peer.routes[best].in_flight) best = i;
  }
  if (best == n) {
    // Nothing is up: the least doubtful suspect rail (a down rail only when every rail is down, which
    // ends the job before any frame is sent again).
    for (std::uint32_t i = 0; i < n; ++i) {
      const Route& r = peer.routes[i];
      if (best == n || r.state < peer.routes[best].state ||
          (r.state == peer.routes[best].state && r.timeouts < peer.routes[best].timeouts)) {
        best = i;
      }
    }
  }
  peer.next_route = (best + 1) % n;
  return best;
}

Route* EngineCore::arrival_route(Peer& peer) noexcept {
  if (polling_path_ >= peer.route_of_path.size()) return nullptr;
  const std::int32_t k = peer.route_of_path[polling_path_];
  return k < 0 ? nullptr : &peer.routes[static_cast<std::size_t>(k)];
}

void EngineCore::route_progress(Route& route, Clock::time_point now) {
  route.last_progress = now;
  route.timeouts = 0;
  route.refused_sends = 0;
}

void EngineCore::sample_rtt(Route& route, std::chrono::nanoseconds sample) {
  if (route.srtt.count() == 0) {
    route.srtt = sample;
    route.rttvar = sample / 2;
  } else {
    const auto error = route.srtt > sample ? route.srtt - sample : sample - route.srtt;
    route.rttvar = (3 * route.rttvar + error) / 4;
    route.srtt = (7 * route.srtt + sample) / 8;
  }
  route.rto = std::clamp(route.srtt + 4 * route.rttvar, config_.retransmit_min, config_.retransmit_max);
}

void EngineCore::set_state(Peer& peer, Route& route, RailState state, std::string_view reason) {
  if (route.state == state) return;
  const RailState was = route.state;
  const Clock::time_point now = Clock::now();
  route.state = state;
  route.state_since = now;
  route.alive_elsewhere = {};
  ++route.counters.state_changes;
  if (route.changes.size() == kRailChangesKept) route.changes.pop_front();
  route.changes.push_back({std::chrono::system_clock::now(), state, std::string(reason)});
  const std::string& name = route.path->info().name;
  switch (state) {
    case RailState::suspect:
      base::logger().debug("rail {} to rank {} is suspect: {}", name, peer.rank, reason);
      route.next_probe = now;  // ask at once
      break;
    case RailState::disabled:
      base::logger().warn("rail {} to rank {} is disabled: {}", name, peer.rank, reason);
      if (route.in_flight > 0) {  // its frames move to the other rails, exactly as at a failure
        peer.rebind_needed = true;
        rebind_pending_ = true;
      }
      break;
    case RailState::down:
      // Enabling a disabled rail makes it down and probed at once: no failure to count.
      if (was == RailState::disabled) {
        base::logger().warn("rail {} to rank {} is enabled, probing: {}", name, peer.rank, reason);
        route.probe_interval = config_.probe_min;
        route.next_probe = now;
        route.enabled_by_operator = true;
        break;
      }
      route.enabled_by_operator = false;
      ++counters_.rails_down;
      base::logger().warn("rail {} to rank {} is down: {}", name, peer.rank, reason);
      route.probe_interval = config_.probe_min;
      route.next_probe = now + route.probe_interval;
      route.rto = config_.retransmit_min;  // what it measured before may no longer hold
      route.srtt = route.rttvar = std::chrono::nanoseconds(0);
      break;
    case RailState::up:
      if (was == RailState::down && route.enabled_by_operator) {
        route.enabled_by_operator = false;
        base::logger().warn("rail {} to rank {} is in service again: {}", name, peer.rank, reason);
      } else if (was == RailState::down) {
        ++counters_.rails_up;
        base::logger().warn("rail {} to rank {} is back up: {}", name, peer.rank, reason);
      } else {
        base::logger().debug("rail {} to rank {} is up again: {}", name, peer.rank, reason);
      }
      route.timeouts = 0;
      route.refused_sends = 0;
      route.last_progress = now;
      break;
  }
}

// The rail is gone for this peer: its frames move to the others (at the next progress round, never in
// the middle of a caller walking the retained list). No rail left: the job ends.
void EngineCore::rail_failed(Peer& peer, std::uint32_t route_index, std::string_view reason) {
  Route& route = peer.routes[route_index];
  set_state(peer, route, RailState::down, reason);
  if (route.in_flight > 0) {  // bytes of frames the peer does not have sit on it
    peer.rebind_needed = true;
    rebind_pending_ = true;
  }
  const bool any_left = std::any_of(peer.routes.begin(), peer.routes.end(),
                                    [](const Route& r) { return !out_of_service(r.state); });
  if (any_left) return;
  // Rails the operator disabled stay out: bringing one back from this side alone could not work, since
  // the peer, which may only be acknowledging, keeps answering on the rail that died. The message says
  // which rails were disabled.
  std::string states;
  for (const Route& r : peer.routes) {
    if (!states.empty()) states += "; ";
    states += r.path->info().name + ": " + std::string(to_string(r.state)) + " for " +
              ms(Clock::now() - r.state_since) + ", last answer " + ms(Clock::now() - r.last_progress) +
              " ago, " + std::to_string(r.counters.timeouts) + " timeouts";
  }
  const bool disabled = std::any_of(peer.routes.begin(), peer.routes.end(),
                                    [](const Route& r) { return r.state == RailState::disabled; });
  abort(1, "no rail left to rank " + std::to_string(peer.rank) + " (" + std::string(reason) + "); rails: " +
               states + (disabled ? " (a disabled rail carries nothing until ftpath enable)" : ""));
}

void EngineCore::route_failed(Peer& peer, std::uint32_t route_index, const base::Status& status,
                              std::optional<std::uint64_t> lost_seq) {
  if (!peer.tracking) {
    // Nothing is kept to resend on a reliable path: a failure there loses data, and ends the job.
    abort(1, "path " + peer.routes[route_index].path->info().name + " to rank " + std::to_string(peer.rank) +
                 " failed: " + status.to_string());
  }
  if (base::severity_of(status.code()) == base::Severity::caller) {
    abort(1, "internal error sending to rank " + std::to_string(peer.rank) + ": " + status.to_string());
  }
  // The frame was kept before the path saw it: it goes out again on another rail at the next round (not
  // here: a caller may be walking the retained frames).
  if (lost_seq) {
    peer.resend_now.push_back(*lost_seq);
    peer.rebind_needed = true;
    rebind_pending_ = true;
  }
  Route& route = peer.routes[route_index];
  if (out_of_service(route.state)) return;
  // One refusal may pass: a firewall rule that drops a share of the packets refuses exactly those (EPERM),
  // and taking the rail down for each would flap it hundreds of times. So the rail turns suspect (no new
  // frames) and is probed at once; a probe refused too counts, and kRefusalsForDown refusals in a row
  // with no answer between them (a link that is down refuses everything) take it down, all within this
  // call, as fast as before.
  ++route.counters.refused_sends;
  while (++route.refused_sends < kRefusalsForDown) {
    set_state(peer, route, RailState::suspect, status.to_string());
    const Clock::time_point now = Clock::now();
    if (probe_rail(peer, route_index, now).is_ok()) {
      route.next_probe = now + std::min(route.rto, config_.rail_down_after / 8);
      return;
    }
    ++route.counters.refused_sends;
  }
  rail_failed(peer, route_index, status.to_string());
}

void EngineCore::rebind_frames() {
  rebind_pending_ = false;
  for (Peer& peer : peers_) {
    while (peer.rebind_needed) {
      peer.rebind_needed = false;
      scratch_indices_.clear();
      std::size_t off_down_rails = 0;
      std::sort(peer.resend_now.begin(), peer.resend_now.end());
      for (std::size_t i = peer.received_prefix; i < peer.retained.size(); ++i) {
        const RetainedFrame& f = peer.retained[i];
        if (f.received) continue;
        if (out_of_service(peer.routes[f.route].state)) {
          ++peer.routes[f.route].counters.rebound;
          ++off_down_rails;
          scratch_indices_.push_back(i);
        } else if (std::binary_search(peer.resend_now.begin(), peer.resend_now.end(), f.range.first)) {
          scratch_indices_.push_back(i);  // its send was refused
        }
      }
      peer.resend_now.clear();
      if (off_down_rails != 0) {
        base::logger().info("moving {} unacknowledged frames to rank {} off down rails", off_down_rails, peer.rank);
      }
      resend_elsewhere(peer, scratch_indices_);
    }
  }
}

base::Status EngineCore::send_probe(Peer& peer, std::uint32_t route_index, frag::FrameType type, std::uint64_t id) {
  Route& route = peer.routes[route_index];
  frag::FrameHeader h = header_for(peer, type);
  h.sender_request = id;
  OutgoingFrame frame(h, {}, frag::ChecksumKind::none, false, header_checked_[route.path_index] != 0);
  ++route.counters.frames_sent;
  route.counters.bytes_sent += frame.frame_size();
  counters_.bytes_sent += frame.frame_size();
  if (type == frag::FrameType::probe) ++route.counters.probes_sent;
  return route.path->send(peer.rank, frame);
}

base::Status EngineCore::probe_rail(Peer& peer, std::uint32_t route_index, Clock::time_point now) {
  Route& route = peer.routes[route_index];
  route.probe_seq = (route.probe_seq + 1) & kProbeSeqMask;
  route.probe_sent_at = now;
  return send_probe(peer, route_index, frag::FrameType::probe,
                    (std::uint64_t{route.path_index} << kProbeRailShift) | route.probe_seq);
}

void EngineCore::handle_probe(Peer& peer, const frag::FrameHeader& h) {
  Route* route = arrival_route(peer);
  if (route == nullptr) return;
  const std::uint32_t index = static_cast<std::uint32_t>(route - peer.routes.data());
  if (h.type == frag::FrameType::probe) {
    // A reply that cannot leave is a lost reply: the prober's silence rules decide.
    (void)send_probe(peer, index, frag::FrameType::probe_reply, h.sender_request);
    return;
  }
  // A reply counts only on the rail its probe was sent on, and only for a probe we sent.
  const std::uint64_t seq = h.sender_request & kProbeSeqMask;
  if ((h.sender_request >> kProbeRailShift) != route->path_index || seq <= route->probe_answered ||
      seq > route->probe_seq) {
    return;
  }
  route->probe_answered = seq;
  ++route->counters.probe_replies;
  const Clock::time_point now = Clock::now();
  if (seq == route->probe_seq) sample_rtt(*route, now - route->probe_sent_at);
  route_progress(*route, now);
  // A disabled rail stays out whatever answers on it, until the operator enables it.
  if (route->state != RailState::up && route->state != RailState::disabled) {
    set_state(peer, *route, RailState::up, "a probe was answered");
  }
}

// Probes suspect and down rails, and decides when a suspect rail is down.
bool EngineCore::service_rails(Peer& peer, Clock::time_point now) {
  bool did = false;
  for (std::uint32_t k = 0; k < peer.routes.size(); ++k) {
    Route& route = peer.routes[k];
    if (route.state == RailState::up || route.state == RailState::disabled) continue;
    if (route.state == RailState::suspect) {
      // Silence counts from the suspicion (the first probe), not from the last ACK: with frames striped
      // over rails, LIRS stops at a frame lost on one rail and credits no rail until it is repaired.
      const auto silent = now - std::max(route.last_progress, route.state_since);
      // Evidence that the peer itself is alive: another rail answered well after this one fell silent
      // (half of down_after: several of this rail's probes were out by then). A peer that stopped
      // polling to compute answers on no rail, and must not lose its rails for that; and when it polls
      // again it answers one rail's backlog before the next one's, so this rail gets a grace period
      // from the evidence on.
      if (route.alive_elsewhere == Clock::time_point{}) {
        const auto after = route.state_since + config_.rail_down_after / 2;
        const bool answered = std::any_of(peer.routes.begin(), peer.routes.end(), [&](const Route& r) {
          return &r != &route && r.state == RailState::up && r.last_progress > after;
        });
        if (answered) route.alive_elsewhere = now;
      }
      const bool another_works = route.alive_elsewhere != Clock::time_point{} &&
                                 now - route.alive_elsewhere >= config_.rail_down_after / 4;
      if ((another_works && silent >= config_.rail_down_after) || silent >= config_.peer_timeout) {
        rail_failed(peer, k, "no answer for " + ms(silent));
        did = true;
        continue;
      }
    }
    if (now < route.next_probe) continue;
    const base::Status probed = probe_rail(peer, k, now);
    if (!probed && route.state == RailState::suspect) {
      route_failed(peer, k, probed);  // one more refusal: probes again, or takes the rail down
      did = true;
      continue;
    }
    // A down rail's probe that cannot leave says nothing new: the next one is scheduled below.
    if (route.state == RailState::suspect) {
      // At least eight probes before silence can take it down: a few lost probes must not.
      route.next_probe = now + std::min(route.rto, config_.rail_down_after / 8);
    } else {
      route.next_probe = now + route.probe_interval;
      route.probe_interval = std::min(config_.probe_max, 2 * route.probe_interval);
    }
    did = true;
  }
  return did;
}

// ---------------------------------------------------------------------------------------------------
// Statistics

EngineStats EngineCore::stats() const {
  EngineStats out;
  out.rank = id_.rank;
  out.size = id_.size;
  out.totals = counters_;
  const Clock::time_point now = Clock::now();
  for (const Peer& peer : peers_) {
    if (peer.rank == id_.rank) continue;
    for (const Route& r : peer.routes) {
      RailStats& rail = out.rails.emplace_back();
      rail.peer = peer.rank;
      rail.index = r.path_index;
      rail.name = r.path->info().name;
      rail.state = r.state;
      rail.state_for = now - r.state_since;
      rail.srtt = r.srtt;
      rail.rto = r.rto;
      rail.counters = r.counters;
      rail.changes.assign(r.changes.begin(), r.changes.end());
    }
  }
  for (std::size_t i = 0; i < paths_.size(); ++i) {
    std::vector<path::PathCounterGroup> groups = paths_[i]->stats();
    if (groups.empty()) continue;
    out.paths.push_back({static_cast<std::uint32_t>(i), paths_[i]->info().name, std::move(groups)});
  }
  return out;
}

}  // namespace ftmpi::engine

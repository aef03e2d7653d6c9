// Reliability (docs/architecture.md, "Reliability"): acknowledgements, retransmission, and moving frames
// off rails that left service. The rails' own health (states, probes, failover and failback decisions)
// is the RailSet's (rail_set.hpp); this file feeds it what the frames show and acts on what it asks.
//
// Acknowledgement. The sender keeps every sequenced frame it sent to a peer in `Peer::retained` (sequence
// order; whole, or a stream's by reference to its send buffer) until the peer's LIDS covers it. Frames
// covered by LIRS but not yet by LIDS were received and only wait for their receive to be posted: they
// no longer count as in flight on their rail and are never resent (their timer is pushed back instead),
// so a receiver that is busy computing is not flooded with copies of data it already holds; a frame kept
// by reference gives its send buffer back there (frame_received).
//
// Retransmission timer, per rail to a peer: RFC 6298's estimator (RailSet::sample_rtt) from frames ACKed
// on their first attempt (Karn: a resent frame's ACK says nothing about which copy arrived); each further
// attempt of a frame doubles its timeout (truncated exponential back-off), capped at
// engine.retransmit.max. A window (engine.window) per rail bounds what a stream may have in flight, so a
// healthy link is not overrun.
//
// Rebinding. Every unacknowledged frame on a rail that left service is rebound to the surviving rails,
// re-cut to their frame size when it is larger; per-byte sequence numbers make that legal, and the
// receiver's range lists drop whatever copy arrives second, so no byte is lost or delivered twice.
#include <algorithm>
#include <cstring>
#include <set>
#include <string>

#include "engine_core.hpp"
#include "ftmpi/base/log.hpp"

namespace ftmpi::engine {
namespace {

// Buffers of acknowledged frames kept for reuse: about two windows of full-size UDP frames.
constexpr std::size_t kSpareFrames = 128;

std::chrono::nanoseconds frame_timeout(const Route& route, const RetainedFrame& f,
                                       std::chrono::nanoseconds cap) {
  const auto shift = std::min<std::uint32_t>(f.attempts - 1, 20);
  return std::min(cap, std::chrono::nanoseconds(route.rto.count() << shift));
}

}  // namespace

// ---------------------------------------------------------------------------------------------------
// Acknowledgements

// A frame's ACK fields. Checked at once: fields that acknowledge what was never sent are forged. What they
// free (kept frames, bytes in flight, the rail's round trip, spare buffers: ~300 instructions) is freed at
// once, except on a DATA frame to a single-threaded engine: then at the start of the next progress round
// (apply_deferred_acks), so that a message that prompts a reply is delivered, and the reply sent, first:
// 1-2% of a zero-byte one-way time over UDP (docs/benchmarks.md). Every other frame (ACK, NACK, CTS, FIN,
// credit, cancel) finds the fields before it applied, as do the timers, the streams' windows, rebinding
// and the forgetting of a lost peer (they apply what waits first). In between, the rails' in-flight
// figures (pick_route, statistics) are a round old.
void EngineCore::take_ack(Peer& peer, const frag::FrameHeader& h) {
  const std::uint64_t sent = peer.out.next_byte() - 1;
  if (h.lirs > sent || h.lids > sent || h.lids > h.lirs) {  // acknowledges what we never sent: forged
    count_refused(counters_.dropped_malformed);
    base::logger().debug("dropped an ACK from rank {} of {}/{}, beyond the {} bytes sent", peer.rank, h.lirs,
                         h.lids, sent);
    return;
  }
  if (h.lirs > peer.heard_lirs) {
    peer.heard_lirs = h.lirs;
    peer.heard_lirs_at = frame_time(peer);  // when it arrived: the round trip it closes ends here
  }
  peer.heard_lids = std::max(peer.heard_lids, h.lids);
  if (h.type == frag::FrameType::data && !base::multi_threaded()) {
    if (!peer.ack_deferred && (peer.heard_lirs > peer.acked_lirs || peer.heard_lids > peer.acked_lids)) {
      peer.ack_deferred = true;
      deferred_acks_.push_back(peer.rank);
    }
    return;
  }
  apply_ack(peer);
}

// Every peer's ACK fields that take_ack left for later. Under no peer's lock. A peer lost since (its last
// rail refused a send in the same round) still gets them, until it is forgotten: they arrived before,
// and a send whose frames it all received completes, as it did when ACKs were applied on arrival.
void EngineCore::apply_deferred_acks() {
  for (const std::uint32_t rank : deferred_acks_) {
    const PeerGuard peer_lock(*this, rank);
    Peer& peer = peers_[rank];
    if (peer.ack_deferred && !peer.forgotten) apply_ack(peer);
  }
  deferred_acks_.clear();
}

// What the newest ACK fields heard from the peer acknowledge, freed (under its lock).
void EngineCore::apply_ack(Peer& peer) {
  peer.ack_deferred = false;
  const std::uint64_t lirs = peer.heard_lirs;
  const std::uint64_t lids = peer.heard_lids;
  const Clock::time_point now = peer.heard_lirs_at;
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
    if (clean && newest != nullptr) peer.rails.sample_rtt(newest->route, now - newest->sent_at);
  }
  if (lids > peer.acked_lids) {
    peer.acked_lids = lids;
    while (!peer.retained.empty() && peer.retained.front().range.last <= lids) {
      // Received frames gave their bytes back already (frame_received).
      if (FrameBytes& bytes = peer.retained.front().bytes; bytes.capacity() != 0) recycle(bytes);
      peer.retained.pop_front();
      --peer.received_prefix;  // lids <= lirs: every frame freed here was counted as received
    }
  }
}

// The peer holds [first, last] above its LIRS: the frames inside are neither resent nor in flight.
void EngineCore::handle_selective_ack(Peer& peer, std::uint64_t first, std::uint64_t last) {
  if (last >= peer.out.next_byte()) {  // acknowledges what we never sent: forged
    count_refused(counters_.dropped_malformed);
    base::logger().debug("dropped a selective ACK from rank {} of [{}, {}], beyond what was sent", peer.rank, first, last);
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

// The peer has the frame: it is never resent, so its bytes go at once. The record stays until LIDS
// passes it, but what a sender holds for a peer that receives nothing is then its frames in flight, not
// everything it sent (a flood of RTSs kept 256 MB of frame buffers before).
void EngineCore::frame_received(Peer& peer, RetainedFrame& f, Clock::time_point now) {
  f.received = true;
  Route& route = peer.rails[f.route];
  route.in_flight -= f.frame_size();
  --route.frames_in_flight;
  route.last_delivery = now;
  // Karn: of a resent frame it is not known which copy arrived, so not when the one that did was sent
  // (taking its last send would make every frame queued before that resend look overtaken).
  if (f.attempts == 1) route.newest_delivered_sent = std::max(route.newest_delivered_sent, f.sent_at);
  recycle(f.bytes);
  peer.rails.proved(f.route, now);
  if (Request* lender = std::exchange(f.lender, nullptr)) {
    f.payload = {};
    if (--lender->frames_lent == 0 && lender->send_state == SendState::awaiting_acks) complete(lender);
  }
}

void EngineCore::recycle(FrameBytes& bytes) {
  const std::lock_guard spare_lock(spare_frames_lock_);
  if (bytes.capacity() != 0 && spare_frames_.size() < kSpareFrames) {
    spare_frames_.push_back(std::move(bytes));
  } else {
    bytes = FrameBytes{};
  }
}

// A NACK says a frame's payload arrived corrupted: resend it. It can only be about a copy that had a
// round trip to arrive and be refused, so a frame sent (or resent) less than half a round trip ago is
// left alone: however many NACKs ask, a frame goes out again at most once per half round trip, and a
// NACK storm amplifies nothing (20,000 NACKs caused 96,515 resends before). A NACK naming bytes never
// sent is forged.
void EngineCore::handle_nack(Peer& peer, const frag::FrameHeader& h) {
  const std::uint64_t last = h.seq_first + h.seq_count - 1;
  if (h.seq_count == 0 || last >= peer.out.next_byte()) {
    count_refused(counters_.dropped_malformed);
    base::logger().debug("dropped a NACK beyond what was sent: {}", frag::describe(h));
    return;
  }
  const Clock::time_point now = Clock::now();
  scratch_indices_.clear();
  auto it = std::lower_bound(peer.retained.begin() + static_cast<std::ptrdiff_t>(peer.received_prefix),
                             peer.retained.end(), h.seq_first,
                             [](const RetainedFrame& f, std::uint64_t n) { return f.range.last < n; });
  for (; it != peer.retained.end() && it->range.first <= last; ++it) {
    if (it->received) continue;
    const Route& route = peer.rails[it->route];
    const auto half_round_trip = (route.srtt.count() != 0 ? route.srtt : config_.retransmit_min) / 2;
    if (now - it->sent_at < half_round_trip) {
      ++counters_.nacks_ignored;
      continue;
    }
    scratch_indices_.push_back(static_cast<std::size_t>(it - peer.retained.begin()));
  }
  resend_elsewhere(peer, scratch_indices_);
}

// ---------------------------------------------------------------------------------------------------
// Retransmission

// Resends retained[index] on `route`, moving its bytes in flight there.
void EngineCore::resend(Peer& peer, std::size_t index, std::uint32_t route_index) {
  RetainedFrame& f = peer.retained[index];
  Route& from = peer.rails[f.route];
  Route& to = peer.rails[route_index];
  if (!f.received) {
    from.in_flight -= f.frame_size();
    --from.frames_in_flight;
    to.in_flight += f.frame_size();
    ++to.frames_in_flight;
  }
  f.route = route_index;
  ++f.attempts;
  ++counters_.retransmits;
  ++to.counters.retransmits;
  ++to.counters.frames_sent;
  to.counters.bytes_sent += f.frame_size();
  counters_.bytes_sent += f.frame_size();
  StoredFrame frame(f.bytes, f.payload, f.bulk);
  if (f.bulk) bulk_sent_.store(true, std::memory_order_relaxed);
  const base::Status sent = to.path->send(peer.rank, frame);
  f.sent_at = Clock::now();  // as send_frame: timed once the path has it
  if (!sent) route_failed(peer, route_index, sent, f.range.first);
}

// Resends the retained frames at `indices` (ascending) each on the best working rail, cutting a frame
// again when it is larger than that rail takes. Works from the back, so that cutting a frame into
// several does not move the frames still to do.
void EngineCore::resend_elsewhere(Peer& peer, std::vector<std::size_t>& indices) {
  for (auto it = indices.rbegin(); it != indices.rend(); ++it) {
    const std::size_t index = *it;
    const std::uint32_t to = pick_route(peer);
    const Route& route = peer.rails[to];
    RetainedFrame& f = peer.retained[index];
    if (f.frame_size() <= route.max_payload + frag::kHeaderSize) {
      resend(peer, index, to);
      continue;
    }
    // Only DATA frames can be larger than another rail takes: an RTS is cut to fit every rail.
    frag::DecodeLimits own{id_.job_key, id_.size, peer.rank, static_cast<std::uint32_t>(f.frame_size())};
    own.key = id_.frame_key;
    own.payload_mac = config_.payload_mac;
    own.payload_key = limits_.payload_key;
    auto decoded = f.lender != nullptr ? frag::decode(f.bytes, f.frame_size(), own) : frag::decode(f.bytes, own);
    if (!decoded || decoded->type != frag::FrameType::data) {
      abort(1, "internal error: a retained frame cannot be cut for another rail: " +
                   (decoded ? frag::describe(*decoded) : decoded.status().to_string()));
    }
    const frag::FrameHeader old = *decoded;
    const std::span<const std::byte> payload =
        f.lender != nullptr ? f.payload
                            : std::span<const std::byte>(f.bytes.data() + frag::kHeaderSize, old.payload_length);
    Request* const lender = f.lender;
    const std::uint32_t old_route = f.route;
    const bool bulk = f.bulk;
    const std::uint32_t attempts = f.attempts;
    peer.rails[old_route].in_flight -= f.frame_size();
    --peer.rails[old_route].frames_in_flight;
    // The frame's bytes are a piece of its message: cut that piece again at this rail's size (frag::recut
    // names each new fragment by its offset and sequence numbers).
    const auto cuts = frag::recut(old.message_length, old.seq_first - old.fragment_offset, old.seq_first,
                                  old.seq_count, static_cast<std::uint32_t>(route.max_payload));
    if (!cuts) abort(1, "internal error: cannot cut " + frag::describe(old) + " again: " + cuts.status().to_string());
    std::vector<RetainedFrame> pieces;
    for (const frag::FragmentPlan& cut : *cuts) {
      frag::FrameHeader h = old;
      h.seq_first = cut.seq_first;
      h.seq_count = cut.seq_count;
      h.fragment_offset = cut.offset;
      h.payload_length = cut.length;
      h.flags = static_cast<std::uint8_t>((old.flags & frag::kFlagAckValid) |
                                          frag::fragment_position_flags(cut.offset, cut.length, old.message_length));
      RetainedFrame& piece = pieces.emplace_back();
      piece.range = {cut.seq_first, cut.seq_first + cut.seq_count - 1};
      const std::span<const std::byte> part = payload.subspan(cut.offset - old.fragment_offset, cut.length);
      if (lender != nullptr) {  // a piece of a frame kept by reference is kept by reference too
        piece.bytes.resize(frag::kHeaderSize);
        piece.payload = part;
        piece.lender = lender;
        h.payload_checksum = frag::checksum(old.checksum_kind, part.data(), part.size());
      } else {
        piece.bytes.resize(frag::kHeaderSize + cut.length);
        h.payload_checksum = frag::copy_with_checksum(old.checksum_kind, piece.bytes.data() + frag::kHeaderSize,
                                                      part.data(), part.size());
      }
      // Sealed for any rail: a MAC is only ignored on a trusted one.
      frag::encode(h, std::span<std::byte, frag::kHeaderSize>(piece.bytes.data(), frag::kHeaderSize),
                   !config_.payload_mac, id_.frame_key);
      if (config_.payload_mac) frag::seal_frame(piece.bytes, limits_.payload_key);
      piece.route = old_route;
      piece.bulk = bulk;
      piece.attempts = attempts;
    }
    base::logger().debug("rank {}: frame {} re-cut into {} for {}", peer.rank, frag::describe(old),
                         pieces.size(), route.name);
    if (lender != nullptr) lender->frames_lent += static_cast<std::uint32_t>(pieces.size() - 1);
    peer.retained.erase(peer.retained.begin() + static_cast<std::ptrdiff_t>(index));
    peer.retained.insert(peer.retained.begin() + static_cast<std::ptrdiff_t>(index),
                         std::make_move_iterator(pieces.begin()), std::make_move_iterator(pieces.end()));
    for (std::size_t k = 0; k < pieces.size(); ++k) {
      peer.rails[old_route].in_flight += peer.retained[index + k].frame_size();
      ++peer.rails[old_route].frames_in_flight;
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
    const PeerGuard peer_lock(*this, peer.rank);
    if (peer.lost) continue;
    if (peer.ack_deferred) apply_ack(peer);  // nothing it acknowledged times out
    if (peer.frames_unacked > 0 && now - peer.ack_owed_since >= config_.ack_delay) {
      send_ack(peer);
      did = true;
    }
    for (std::size_t i = 0; i < peer.retained.size(); ++i) {
      RetainedFrame& f = peer.retained[i];
      const Route& route = peer.rails[f.route];
      // A frame that nothing sent after it on its rail has overtaken, on a rail that still delivers, is
      // likely queued behind the frames ahead of it (a rate-limited link's queue holds a window's worth:
      // 7 ms at 400 Mbit/s), not lost: its clock restarts at each delivery, as TCP's timer restarts at
      // each ACK of new data (RFC 6298, 5.3). Timed from its own send, the queue's tail was resent
      // though on its way: 17% of one rail's frames. Once a frame sent after it arrived, its own clock.
      const Clock::time_point since = f.sent_at > route.newest_delivered_sent
                                          ? std::max(f.sent_at, route.last_delivery)
                                          : f.sent_at;
      if (now - since < frame_timeout(route, f, config_.retransmit_max)) continue;
      if (i < peer.received_prefix || f.received) {
        f.sent_at = now;  // received, waiting for its receive to be posted: wait longer, do not resend
        ++f.attempts;
        continue;
      }
      peer.rails.frame_timed_out(f.route);
      scratch_indices_.push_back(i);
    }
    if (!scratch_indices_.empty()) {
      resend_elsewhere(peer, scratch_indices_);
      did = true;
    }
    did = peer.rails.service() || did;
  }
  if (now - last_flight_sample_ >= config_.flight_interval) record_traffic(now);
  return did;
}

// ---------------------------------------------------------------------------------------------------
// Rails: where frames arrive, and what a refused send means

void EngineCore::route_failed(Peer& peer, std::uint32_t route_index, const base::Status& status,
                              std::optional<std::uint64_t> lost_seq) {
  if (!peer.tracking) {
    // Nothing is kept to resend on a reliable path: a failure there loses data, and ends the job.
    abort(1, "path " + std::string(peer.rails[route_index].name) + " to rank " + std::to_string(peer.rank) +
                 " failed: " + status.to_string());
  }
  if (base::severity_of(status.code()) == base::Severity::caller) {
    abort(1, "internal error sending to rank " + std::to_string(peer.rank) + ": " + status.to_string());
  }
  // The frame was kept before the path saw it: it goes out again on another rail at the next round (not
  // here: a caller may be walking the retained frames).
  if (lost_seq) {
    peer.resend_now.push_back(*lost_seq);
    frames_stranded(peer.rank);
  }
  peer.rails.send_refused(route_index, status.to_string());
}

void EngineCore::rebind_frames() {
  rebind_pending_ = false;
  for (Peer& peer : peers_) {
    const PeerGuard peer_lock(*this, peer.rank);
    if (peer.lost) peer.rebind_needed = false;  // nothing of it is resent (forget_lost_peers)
    while (peer.rebind_needed) {
      peer.rebind_needed = false;
      scratch_indices_.clear();
      std::size_t off_down_rails = 0;
      std::sort(peer.resend_now.begin(), peer.resend_now.end());
      for (std::size_t i = peer.received_prefix; i < peer.retained.size(); ++i) {
        const RetainedFrame& f = peer.retained[i];
        if (f.received) continue;
        if (out_of_service(peer.rails[f.route].state)) {
          ++peer.rails[f.route].counters.rebound;
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

base::Status EngineCore::send_probe_frame(Peer& peer, std::uint32_t route_index, frag::FrameType type,
                                          std::uint64_t id) {
  Route& route = peer.rails[route_index];
  frag::FrameHeader h = header_for(peer, type);
  h.sender_request = id;
  OutgoingFrame frame(h, {}, frag::ChecksumKind::none, false, mac_key(route.path_index),
                      payload_mac_key(route.path_index));
  ++route.counters.frames_sent;
  route.counters.bytes_sent += frame.frame_size();
  counters_.bytes_sent += frame.frame_size();
  return route.path->send(peer.rank, frame);
}

void EngineCore::handle_probe(Peer& peer, const frag::FrameHeader& h) {
  Route* route = arrival_route(peer);
  if (route == nullptr) return;
  const auto index = static_cast<std::uint32_t>(route - &peer.rails[0]);
  if (h.type == frag::FrameType::probe) {
    // A reply that cannot leave is a lost reply: the prober's silence rules decide. The peer answers on
    // the rail the probe arrived on, whatever it thinks of that rail itself.
    (void)send_probe_frame(peer, index, frag::FrameType::probe_reply, h.sender_request);
    return;
  }
  peer.rails.probe_replied(index, h.sender_request);
}

// ---------------------------------------------------------------------------------------------------
// What the rails ask

base::Status EngineCore::send_probe(std::uint32_t peer_rank, std::uint32_t rail, std::uint64_t probe_id) {
  Peer& peer = peers_[peer_rank];
  base::Status sent = send_probe_frame(peer, rail, frag::FrameType::probe, probe_id);
  if (!sent && base::severity_of(sent.code()) == base::Severity::caller) {
    abort(1, "internal error probing rank " + std::to_string(peer_rank) + ": " + sent.to_string());
  }
  return sent;
}

void EngineCore::frames_stranded(std::uint32_t peer_rank) {
  peers_[peer_rank].rebind_needed = true;  // moved at the next progress round, never mid-walk
  rebind_pending_ = true;
}

// Every rail to the peer failed (silent past engine.peer.timeout, or refused by the OS): nothing more goes
// to it or is taken from it, for the rest of the job. Its frames are dropped, and every operation that
// needs it fails (Completion::lost_peer), now and later: the application's error handler decides what
// follows (the default one ends the job with this message). Messages that arrived whole are still
// delivered.
//
// This can be called from inside a send (a refusal on the last rail), with its caller still walking the
// peer's retained frames, a stream, or a message record: so here the peer is only marked (send_frame then
// sends nothing to it, handle_frame takes nothing from it), and forget_lost_peers() tears its state down
// from the progress loop.
void EngineCore::no_rail_left(std::uint32_t rank, std::string message) {
  Peer& peer = peers_[rank];
  if (peer.lost) return;
  base::logger().error("{}", message);
  peer.lost = true;
  peer.lost_reason = std::move(message);
  ++counters_.peers_lost;
  FlightEvent event;
  event.at = std::chrono::system_clock::now();
  event.kind = FlightKind::peer_lost;
  event.peer = rank;
  event.text = peer.lost_reason;
  record_flight(std::move(event));
  lost_pending_ = true;
}

void EngineCore::forget_lost_peers() {
  lost_pending_ = false;
  bool forgot = false;
  for (Peer& peer : peers_) {
    const PeerGuard peer_lock(*this, peer.rank);
    if (peer.lost && !peer.forgotten) {
      forget_lost_peer(peer);
      forgot = true;
    }
  }
  // For the post-mortem: the flight recorder, named in what the application is told.
  if (!forgot || config_.flight_write == EngineConfig::FlightWrite::never) return;
  const std::string file = write_flight_file("a peer was lost");
  if (file.empty()) return;
  for (Peer& peer : peers_) {
    const PeerGuard peer_lock(*this, peer.rank);
    if (peer.lost && peer.lost_reason.find("(flight recorder: ") == std::string::npos) {
      peer.lost_reason += " (flight recorder: " + file + ")";
    }
  }
}

void EngineCore::forget_lost_peer(Peer& peer) {
  const std::uint32_t rank = peer.rank;
  peer.forgotten = true;
  for (RetainedFrame& f : peer.retained) recycle(f.bytes);
  peer.retained.clear();
  peer.received_prefix = 0;
  peer.resend_now.clear();
  peer.parked_cancels.clear();
  peer.frames_unacked = 0;
  for (Route& route : peer.rails) {
    route.in_flight = 0;
    route.frames_in_flight = 0;
  }
  std::erase_if(streaming_, [&](const Request* r) { return r->peer == rank; });
  for (Request* r : requests_.live_requests()) {
    if (r->complete) continue;
    if (r->kind == RequestKind::send) {
      if (r->peer == rank) fail_lost(r, rank);
    } else if (r->message != nullptr ? r->message->peer == rank : r->source == static_cast<std::int32_t>(rank)) {
      fail_lost(r, rank);
    }
  }
}

void EngineCore::fail_lost(Request* r, std::uint32_t peer) {
  if (r->kind == RequestKind::receive) {
    if (IncomingMessage* m = r->message) {
      bulk_receive_ended(*m);
      r->message = nullptr;
      release_message(m);
    } else {
      (void)matcher_.cancel_receive(reinterpret_cast<match::ReceiveHandle>(r));
    }
  }
  r->completion = Completion{};
  r->completion.source = r->kind == RequestKind::receive ? r->comm.comm_rank_of(static_cast<int>(peer)) : -1;
  r->completion.lost_peer = static_cast<int>(peer);
  complete(r);
}

std::string EngineCore::lost_reason(int world_rank) const {
  if (world_rank < 0 || static_cast<std::size_t>(world_rank) >= peers_.size()) return {};
  const PeerGuard peer_lock(*this, static_cast<std::uint32_t>(world_rank));
  return peers_[static_cast<std::size_t>(world_rank)].lost_reason;
}

// ---------------------------------------------------------------------------------------------------
// Statistics

EngineStats EngineCore::stats() const {
  // Not the engine's lock after a peer's (the lock order): a send that failed for good asks for the
  // statistics of the flight recorder it writes before the job ends, and gets them as they are.
  std::optional<EngineGuard> engine_lock;
  if (held_peer_ == kNoPeer) engine_lock.emplace(*this);
  const AllPeersGuard peer_locks(*this);
  EngineStats out;
  out.rank = id_.rank;
  out.size = id_.size;
  out.warnings = warnings_;
  out.totals = counters_;
  const Clock::time_point now = Clock::now();
  for (const Peer& peer : peers_) {
    if (peer.rank == id_.rank) continue;
    for (const Route& r : peer.rails) {
      RailStats& rail = out.rails.emplace_back();
      rail.peer = peer.rank;
      rail.index = r.path_index;
      rail.name = std::string(r.name);
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

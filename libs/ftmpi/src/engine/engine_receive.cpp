// Receiving: frames from the paths decoded and validated, checksums verified while copying out, byte
// ranges recorded as received and delivered, messages matched in per-peer order (the matcher), payload
// placed into receives (or buffered until they are posted), single copies read, CTS and FIN answered.
#include <algorithm>
#include <cstring>

#include "engine_core.hpp"
#include "ftmpi/base/log.hpp"
#include "ftmpi/path/peer_memory.hpp"

namespace ftmpi::engine {
namespace {
// Frames one path hands up per round at most, and busy rounds between two looks at the timers.
constexpr std::size_t kPollBudget = 64;
constexpr std::uint32_t kTimerCheckRounds = 32;

// Receives and probes match on the sender's world rank (see CommView).
match::Pattern pattern_for(const CommView& comm, int source, int tag) {
  return {comm.context, source == kAnySource ? match::kAnySource : comm.world_rank_of(source),
          tag == kAnyTag ? match::kAnyTag : tag};
}

std::uint64_t load_le64(const std::byte* in) {
  std::uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v |= static_cast<std::uint64_t>(in[i]) << (8 * i);
  return v;
}

}  // namespace

void EngineCore::complete_receive(Request* r, std::uint32_t peer, std::int32_t tag, std::uint64_t length) {
  Completion c;  // every field written once
  c.source = r->comm.comm_rank_of(static_cast<int>(peer));
  c.tag = tag;
  c.bytes = std::min<std::size_t>(length, r->capacity);
  c.truncated = length > r->capacity;
  r->completion = c;
  complete(r);
}

Request* EngineCore::irecv(const CommView& comm, void* buf, std::size_t capacity, int source, int tag) {
  if (base::multi_threaded()) [[unlikely]] return start_receive<true>(comm, buf, capacity, nullptr, source, tag);
  return start_receive<false>(comm, buf, capacity, nullptr, source, tag);
}

Request* EngineCore::irecv_pieces(const CommView& comm, void* base, const frag::PiecesLayout& layout, int source,
                                  int tag) {
  if (base::multi_threaded()) [[unlikely]] {
    return start_receive<true>(comm, base, layout.packed_size(), &layout, source, tag);
  }
  return start_receive<false>(comm, base, layout.packed_size(), &layout, source, tag);
}

// Inlined into irecv and irecv_pieces: one call less per receive posted.
template <bool kThreads>
[[gnu::always_inline]] inline Request* EngineCore::start_receive(const CommView& comm, void* buf, std::size_t capacity,
                                   const frag::PiecesLayout* layout, int source, int tag) {
  const EngineLock<kThreads> engine_lock(*this);
  // Only under MPI_THREAD_MULTIPLE, as its test runs (tests/mpi/threads_poll.c).
  if (kThreads && config_.test_poll_tag >= 0) [[unlikely]] note_poll_test_receive(tag);
  Request* r = requests_.allocate<kThreads>(RequestKind::receive);
  r->comm = comm;
  r->recv_buf = static_cast<std::byte*>(buf);
  r->capacity = capacity;
  r->layout = layout;
  const match::Pattern pattern = pattern_for(comm, source, tag);
  r->source = source == kAnySource ? kAnySource : static_cast<std::int32_t>(pattern.source);
  // A request just allocated is posted nowhere: the matcher need not check.
  auto taken = matcher_.post_new_receive(pattern, reinterpret_cast<match::ReceiveHandle>(r));
  if (!taken) {
    base::logger().error("irecv: {}", taken.status().to_string());
    abort(1, "internal error: the matcher refused a receive the MPI layer accepted");
  }
  if (*taken) {
    auto* message = reinterpret_cast<IncomingMessage*>((*taken)->handle);
    const PeerLock<kThreads> peer_lock(*this, message->peer);
    on_matched(r, message);
    finish_message_if_complete(message);
  } else if (r->source != kAnySource) {
    const PeerLock<kThreads> peer_lock(*this, static_cast<std::uint32_t>(r->source));
    if (peers_[static_cast<std::uint32_t>(r->source)].lost) [[unlikely]] {
      fail_lost(r, static_cast<std::uint32_t>(r->source));  // nothing more will come from it
    }
  }
  return r;
}

bool EngineCore::iprobe(const CommView& comm, int source, int tag, Completion* out) {
  const EngineGuard engine_lock(*this);
  const match::Pattern pattern = pattern_for(comm, source, tag);
  auto found = matcher_.probe(pattern);
  if (!found) return false;
  if (out != nullptr) {
    const auto* message = reinterpret_cast<const IncomingMessage*>(found->handle);
    *out = Completion{};
    out->source = comm.comm_rank_of(static_cast<int>(found->peer));
    out->tag = found->tag;
    out->bytes = message->length;
  }
  return true;
}

// A taken message is still the engine's IncomingMessage (its fragments keep arriving into `early`); the
// MPI layer only holds it, as an opaque handle, until its mrecv.
MatchedMessage* EngineCore::improbe(const CommView& comm, int source, int tag, Completion* out) {
  const EngineGuard engine_lock(*this);
  auto taken = matcher_.take_unexpected(pattern_for(comm, source, tag));
  if (!taken) return nullptr;
  auto* message = reinterpret_cast<IncomingMessage*>(taken->handle);
  if (out != nullptr) {
    *out = Completion{};
    out->source = comm.comm_rank_of(static_cast<int>(taken->peer));
    out->tag = taken->tag;
    out->bytes = message->length;
  }
  return reinterpret_cast<MatchedMessage*>(message);
}

Request* EngineCore::mrecv(const CommView& comm, MatchedMessage* message, void* buf, std::size_t capacity) {
  return receive_matched(comm, reinterpret_cast<IncomingMessage*>(message), buf, capacity, nullptr);
}

Request* EngineCore::mrecv_pieces(const CommView& comm, MatchedMessage* message, void* base,
                                  const frag::PiecesLayout& layout) {
  return receive_matched(comm, reinterpret_cast<IncomingMessage*>(message), base, layout.packed_size(), &layout);
}

Request* EngineCore::receive_matched(const CommView& comm, IncomingMessage* message, void* buf, std::size_t capacity,
                                     const frag::PiecesLayout* layout) {
  const EngineGuard engine_lock(*this);
  const PeerGuard peer_lock(*this, message->peer);
  Request* r = requests_.allocate(RequestKind::receive);
  r->comm = comm;
  r->recv_buf = static_cast<std::byte*>(buf);
  r->capacity = capacity;
  r->layout = layout;
  r->source = static_cast<std::int32_t>(message->peer);
  on_matched(r, message);  // as a posted receive that found it unexpected
  finish_message_if_complete(message);
  return r;
}

template <bool kThreads>
void EngineCore::on_frame(std::span<const std::byte> frame) noexcept {
  counters_.frames_received.add<kThreads>(1);
  if (frag::is_short_frame(frame)) {
    handle_short_frame<kThreads>(frame);
    return;
  }
  frag::FrameHeader h;
  if (!frag::try_decode(frame, limits_, h)) [[unlikely]] {
    // Refused: decode() again, slowly, to learn why.
    auto decoded = frag::decode(frame, limits_);
    if (decoded.code() == base::Errc::wrong_job) {
      ++counters_.dropped_wrong_job;
    } else {
      count_refused(counters_.dropped_malformed);
    }
    base::logger().debug("dropped a frame: {}", decoded.status().to_string());
    return;
  }
  handle_frame(h, frame.subspan(frag::kHeaderSize));
}

bool EngineCore::deliver_whole_in_order(std::uint32_t source, std::uint32_t context, std::int32_t tag,
                                        std::uint64_t message_seq, std::span<const std::byte> payload) {
  const match::Envelope envelope{source, static_cast<std::int32_t>(source), context, tag, message_seq, 0};
  const std::optional<match::ReceiveHandle> taken = matcher_.match_next_in_order(envelope);
  if (!taken) return false;
  Request* r = reinterpret_cast<Request*>(*taken);
  copy_into_receive(*r, payload);
  complete_receive(r, source, tag, payload.size());
  credit_consumed(peers_[source], EagerCredit::eager_cost(payload.size()));  // a whole eager message
  return true;
}

bool EngineCore::deliver_verified_in_order(Peer& peer, const frag::FrameHeader& h,
                                           std::span<const std::byte> payload) {
  // Nothing to verify and nothing to record: as a short frame.
  if (!peer.tracking && h.checksum_kind == frag::ChecksumKind::none) {
    return deliver_whole_in_order(h.source, h.context, h.tag, h.message_seq, payload);
  }
  const match::Envelope envelope{h.source, static_cast<std::int32_t>(h.source), h.context, h.tag, h.message_seq, 0};
  const std::optional<match::Matcher::InOrderMatch> found = matcher_.find_next_in_order(envelope);
  if (!found) return false;
  Request* r = reinterpret_cast<Request*>(found->receive);
  // An empty payload has nothing to verify (the decoder refused a checksum without a payload).
  if (!payload.empty() && !place_into_receive(*r, h, payload)) return false;
  matcher_.take_next_in_order(envelope, *found);
  // Recorded before the completion, as on the general path: a credit frame it sends carries the ACK.
  if (peer.tracking) accept_sequenced(peer, h, /*delivered=*/true);
  complete_receive(r, h.source, h.tag, payload.size());
  credit_consumed(peer, EagerCredit::eager_cost(payload.size()));
  return true;
}

// Verified bytes of a whole message into a receive: as much as fits, into its buffer or its pieces.
void EngineCore::copy_bytes_into_receive(Request& r, std::span<const std::byte> bytes) {
  const std::size_t fits = std::min(bytes.size(), r.capacity);
  if (r.layout == nullptr) {
    std::memcpy(r.recv_buf, bytes.data(), fits);
    return;
  }
  frag::Checksummer none(frag::ChecksumKind::none);
  (void)frag::scatter_with_checksum(*r.layout, r.recv_buf, 0, bytes.first(fits), none);
}

// Single copy: `len` bytes of the sender's buffer straight into the receive's buffer, or its pieces.
base::Result<std::size_t> EngineCore::read_into_receive(Request& r, std::int64_t pid, std::uintptr_t address,
                                                        std::size_t len) {
  if (r.layout == nullptr) {
    const ::iovec block{r.recv_buf, len};
    return env_.read_peer_memory(pid, address, {&block, 1});
  }
  std::vector<::iovec>& blocks = scratch_blocks_;
  blocks.clear();
  (void)frag::visit_blocks(*r.layout, r.recv_buf, 0, len, [&](std::byte* block, std::size_t, std::size_t n) {
    blocks.push_back({block, n});
  });
  return env_.read_peer_memory(pid, address, blocks);
}

template <bool kThreads>
void EngineCore::handle_short_frame(std::span<const std::byte> frame) {
  frag::ShortHeader s;
  // Only a trusted path carries short frames, and only from a peer that sends them on it.
  if (limits_.verify_header_checksum || !frag::try_decode_short(frame, limits_, s) || !peers_[s.source].short_frames ||
      s.payload_length > max_eager_) [[unlikely]] {
    count_refused(counters_.dropped_malformed);
    if (limits_.verify_header_checksum) {
      base::logger().debug("dropped a short frame from a path that does not carry them");
    } else {
      auto decoded = frag::decode_short(frame, limits_);
      base::logger().debug("dropped a short frame: {}",
                           decoded ? "its peer does not send short frames, or it is too long" : decoded.status().to_string());
    }
    return;
  }
  const PeerLock<kThreads> peer_lock(*this, s.source);
  Peer& peer = peers_[s.source];
  if (peer.lost) [[unlikely]] return;
  counters_.bytes_received.add<kThreads>(frame.size());
  if (Route* arrived_on = arrival_route(peer)) {
    ++arrived_on->counters.frames_received;
    arrived_on->counters.bytes_received += frame.size();
  }
  const std::span<const std::byte> payload = frame.subspan(frag::kShortHeaderSize);
  if (deliver_whole_in_order(s.source, s.context, s.tag, s.message_seq, payload)) return;
  // Unexpected or out of order: the general path, as the DATA frame this short one stands for.
  frag::FrameHeader h = header_for(peer, frag::FrameType::data);
  h.source = s.source;
  h.destination = id_.rank;
  h.flags = frag::kFlagFirstFragment | frag::kFlagLastFragment;
  h.context = s.context;
  h.tag = s.tag;
  h.message_seq = s.message_seq;
  h.message_length = s.payload_length;
  h.payload_length = s.payload_length;
  handle_message_fragment(peer, h, payload);
}

void EngineCore::on_frame(std::span<const std::byte> frame) noexcept {
  if (base::multi_threaded()) [[unlikely]] {
    on_frame<true>(frame);
  } else {
    on_frame<false>(frame);
  }
}

void EngineCore::handle_frame(const frag::FrameHeader& h, std::span<const std::byte> payload) {
  using frag::FrameType;
  const PeerGuard peer_lock(*this, h.source);
  Peer& peer = peers_[h.source];
  if (peer.lost) [[unlikely]] return;  // what it was owed and owes is gone: its frames mean nothing now
  struct FrameClock {
    Peer& peer;
    explicit FrameClock(Peer& p) noexcept : peer(p) {
      peer.handling_frame = true;
      peer.frame_clock = {};
    }
    ~FrameClock() { peer.handling_frame = false; }
  } timing(peer);
  counters_.bytes_received += frag::kHeaderSize + payload.size();
  Route* arrived_on = arrival_route(peer);
  if (arrived_on != nullptr) {
    ++arrived_on->counters.frames_received;
    arrived_on->counters.bytes_received += frag::kHeaderSize + payload.size();
  }
  if ((h.flags & frag::kFlagAckValid) != 0) take_ack(peer, h);
  switch (h.type) {
    case FrameType::ack:
      if (h.seq_count != 0) handle_selective_ack(peer, h.seq_first, h.seq_first + h.seq_count - 1);
      return;
    case FrameType::probe:
    case FrameType::probe_reply:
      handle_probe(peer, h);
      return;
    case FrameType::nack:
      handle_nack(peer, h);
      return;
    default:
      break;
  }
  if (peer.tracking) {
    auto coverage = peer.in.received().coverage(h.seq_first, h.seq_first + h.seq_count - 1);
    if (coverage && *coverage == seq::Coverage::full) {
      // Checked even though it is dropped, so that every corrupted frame is counted as one.
      if (frag::checksum(h.checksum_kind, payload.data(), payload.size()) != h.payload_checksum) {
        count_refused(counters_.dropped_bad_payload);
        if (arrived_on != nullptr) ++arrived_on->counters.checksum_failures;
      } else {
        ++counters_.duplicates;
        if (arrived_on != nullptr) ++arrived_on->counters.duplicates;
      }
      send_ack(peer);  // its ACK may have been lost: say again what we have
      return;
    }
    // Part of it arrived already (a range cut again after a failover): verify before any byte moves, or
    // a corrupt copy would overwrite bytes that were received and will never be sent again.
    if (coverage && *coverage == seq::Coverage::partial && h.payload_length != 0 &&
        frag::checksum(h.checksum_kind, payload.data(), payload.size()) != h.payload_checksum) [[unlikely]] {
      reject_payload(peer, h);
      return;
    }
  }
  switch (h.type) {
    case FrameType::data:
    case FrameType::rts:
      if (h.receiver_request != 0) {
        handle_rendezvous_data(peer, h, payload);
      } else {
        handle_message_fragment(peer, h, payload);
      }
      break;
    case FrameType::cts: {
      Request* r = requests_.find(h.sender_request, RequestKind::send);
      if (r == nullptr || r->peer != h.source || r->msg_seq != h.message_seq ||
          (r->send_state != SendState::awaiting_cts && r->send_state != SendState::awaiting_fin)) {
        drop_malformed("a CTS that names no send waiting for one", h);
        return;
      }
      if ((h.flags & frag::kFlagSingleCopy) != 0) {
        // A split copy: only of a single copy this peer was asked to read, over the route that reads memory.
        if (r->send_state != SendState::awaiting_fin || h.fragment_offset >= r->bytes ||
            !single_copy_allowed(peer, static_cast<std::uint64_t>(peer.pid))) {
          drop_malformed("a split-copy CTS that names no single copy of this peer", h);
          return;
        }
        accept_sequenced(peer, h, /*delivered=*/true);
        write_split_part(peer, *r, h);
        break;
      }
      accept_sequenced(peer, h, /*delivered=*/true);
      // A single copy the receiver could not read: it asks for the message piped, from the start.
      if (r->send_state == SendState::awaiting_fin) r->next_offset = 0;
      r->receiver_cookie = h.receiver_request;
      if (r->next_offset < r->bytes) {
        r->send_state = SendState::streaming;
        streaming_.push_back(r);
        push_streams();
      } else if (r->frames_lent == 0) {
        complete(r);
      } else {
        r->send_state = SendState::awaiting_acks;  // its RTS, lent, is not acknowledged yet
      }
      break;
    }
    case FrameType::fin: {
      if (h.receiver_request != 0) {  // the sender's, of a split copy
        end_split_copy(peer, h);
        break;
      }
      Request* r = requests_.find(h.sender_request, RequestKind::send);
      if (r == nullptr || r->peer != h.source || r->msg_seq != h.message_seq ||
          r->send_state != SendState::awaiting_fin) {
        drop_malformed("a FIN that names no send waiting for one", h);
        return;
      }
      accept_sequenced(peer, h, /*delivered=*/true);
      complete(r);
      break;
    }
    case FrameType::credit:
      accept_sequenced(peer, h, /*delivered=*/true);
      peer.credit.granted(h.message_length);  // the grant
      break;
    case FrameType::cancel:
      handle_cancel(peer, h);
      break;
    case FrameType::cancel_reply:
      handle_cancel_reply(peer, h);
      break;
    default:
      break;
  }
}

void EngineCore::drop_malformed(std::string_view why, const frag::FrameHeader& h) {
  count_refused(counters_.dropped_malformed);
  base::logger().debug("dropped {}: {}", why, frag::describe(h));
}

// Records a frame's byte range as received (and delivered, when its bytes reached the user), and owes
// the peer an ACK. Returns how many of its sequence numbers were new.
std::uint64_t EngineCore::accept_sequenced(Peer& peer, const frag::FrameHeader& h, bool delivered) {
  if (!peer.tracking) return h.payload_length;
  const std::uint64_t last = h.seq_first + h.seq_count - 1;
  auto added = peer.in.on_received({h.seq_first, last});
  peer.last_received_seq = h.seq_first;
  if (delivered) (void)peer.in.on_delivered({h.seq_first, last});
  owe_ack(peer);
  return added ? (h.payload_length == 0 ? 0 : added->added) : 0;
}

void EngineCore::owe_ack(Peer& peer) {
  if (peer.frames_unacked++ == 0) peer.ack_owed_since = frame_time(peer);
  if (peer.frames_unacked >= config_.ack_every) send_ack(peer);
}

bool EngineCore::single_copy_allowed(Peer& peer, std::uint64_t pid) noexcept {
  const Route* arrived_on = arrival_route(peer);
  return peer.single_copy && !peer.tracking && arrived_on != nullptr && arrived_on->single_copy && peer.pid > 0 &&
         pid == static_cast<std::uint64_t>(peer.pid);
}

void EngineCore::handle_message_fragment(Peer& peer, const frag::FrameHeader& h,
                                         std::span<const std::byte> payload) {
  using frag::FrameType;
  IncomingMessage* m = nullptr;
  // A frame that carries a whole message on a reliable route cannot belong to a record already made,
  // so it skips the index both ways (the common small message).
  const bool whole = (h.flags & frag::kFlagFirstFragment) != 0 && (h.flags & frag::kFlagLastFragment) != 0;
  // And when it is next in order and a posted receive takes it, it needs no record at all: straight
  // into the receive buffer, verified in the same pass (a bad one takes the slow way below). On a
  // reliable peer only while no record of it exists: none does unless a part of it, cut again after a
  // failover, arrived before (handle_frame dropped it already if all of it had).
  if (whole && h.type == FrameType::data && (h.flags & frag::kFlagAckRequested) == 0 &&
      h.message_length <= max_eager_ &&
      (!peer.tracking || peer.incoming.empty() || !peer.incoming.contains(h.message_seq))) {
    if (deliver_verified_in_order(peer, h, payload)) return;
  }
  const bool indexed = peer.tracking || !whole;
  auto it = indexed ? peer.incoming.find(h.message_seq) : peer.incoming.end();
  if (it == peer.incoming.end()) {
    // An eager message may be buffered whole before it matches; anything larger must come as an RTS.
    if (h.type == FrameType::data && h.message_length > max_eager_) {
      drop_malformed("DATA of a message above the eager limit without its RTS", h);
      return;
    }
    const bool single_copy = (h.flags & frag::kFlagSingleCopy) != 0;
    if (single_copy && payload.size() != kSingleCopyDescriptorSize) {
      drop_malformed("a single-copy RTS whose descriptor is not 16 bytes", h);
      return;
    }
    // A single copy reads another process's memory into this one: only a peer that sends them (its one
    // route reads memory, reliability not forced) may ask, only over that route (never a datagram), and
    // only naming the pid it registered in shared memory.
    if (single_copy && !single_copy_allowed(peer, load_le64(payload.data()))) [[unlikely]] {
      ++counters_.refused_single_copy;
      base::logger().warn("refused a single-copy request from rank {} (not over its shared memory, or not its pid)",
                          h.source);
      return;
    }
    m = acquire_message();
    m->peer = h.source;
    m->context = h.context;
    m->tag = h.tag;
    m->msg_seq = h.message_seq;
    m->length = h.message_length;
    m->rendezvous = h.type == FrameType::rts;
    m->synchronous = (h.flags & frag::kFlagAckRequested) != 0;
    m->single_copy = single_copy;
    m->sender_cookie = h.sender_request;
    // What the sender counted against our grant: all of an eager message, an RTS's first fragment.
    m->credit = h.type == FrameType::data ? EagerCredit::eager_cost(h.message_length)
                : single_copy               ? 0
                                            : h.payload_length;
    if (single_copy) {
      m->remote_pid = static_cast<std::int64_t>(load_le64(payload.data()));
      m->remote_address = load_le64(payload.data() + 8);
    }
    if (indexed) {
      m->indexed = true;
      peer.incoming.emplace(h.message_seq, m);
    }
    in_hand_ = m;
    match::Envelope envelope{h.source, static_cast<std::int32_t>(h.source), h.context, h.tag, h.message_seq,
                             reinterpret_cast<match::MessageHandle>(m)};
    if (base::Status s = matcher_.message_arrived(envelope, events_); !s) {
      in_hand_ = nullptr;
      release_message(m);
      // Out of range: too far ahead of the next expected message (a hole behind it): resent later.
      ++(s.code() == base::Errc::duplicate      ? counters_.duplicates
         : s.code() == base::Errc::out_of_range ? counters_.dropped_ahead
                                                : counters_.dropped_malformed);
      base::logger().debug("message {} from rank {} refused by the matcher: {}", h.message_seq, h.source,
                           s.to_string());
      return;
    }
    process_events();
  } else {
    m = it->second;
    // Later frames must agree with the first: more DATA of an eager message, or the RTS of a rendezvous
    // again (its first copy's payload failed its checksum). Anything else is forged or corrupt.
    const bool same_kind = h.type == FrameType::rts ? m->rendezvous && !m->single_copy : !m->rendezvous;
    if (!same_kind || m->context != h.context || m->tag != h.tag || m->length != h.message_length) {
      drop_malformed("a fragment that disagrees with its message's first", h);
      return;
    }
    in_hand_ = m;
  }

  if (!m->single_copy) {
    if (!place_payload(*m, h, payload)) {
      in_hand_ = nullptr;
      reject_payload(peer, h);
      finish_message_if_complete(m);
      return;
    }
    const bool delivered = m->receive != nullptr;
    const std::uint64_t added = accept_sequenced(peer, h, delivered);
    if ((h.flags & frag::kFlagFirstFragment) != 0) m->first_accepted = true;
    if (!delivered && peer.tracking) m->buffered.push_back({h.seq_first, h.seq_first + h.seq_count - 1});
    m->arrived += added;
  } else {
    accept_sequenced(peer, h, m->receive != nullptr);
    m->first_accepted = true;
    if (m->receive == nullptr && peer.tracking) m->buffered.push_back({h.seq_first, h.seq_first + h.seq_count - 1});
  }
  in_hand_ = nullptr;
  finish_message_if_complete(m);
  if (!peer.parked_cancels.empty()) [[unlikely]] retry_parked_cancels(peer);
}

void EngineCore::handle_rendezvous_data(Peer& peer, const frag::FrameHeader& h,
                                        std::span<const std::byte> payload) {
  Request* r = requests_.find(h.receiver_request, RequestKind::receive);
  IncomingMessage* m = r != nullptr ? r->message : nullptr;
  if (m == nullptr || m->peer != h.source || m->msg_seq != h.message_seq || m->length != h.message_length ||
      h.type != frag::FrameType::data) {
    drop_malformed("rendezvous DATA for no receive waiting for it", h);
    return;
  }
  if (!place_payload(*m, h, payload)) {
    reject_payload(peer, h);
    return;
  }
  m->arrived += accept_sequenced(peer, h, /*delivered=*/true);
  // The sender may keep the stream by reference to its buffer, its send waiting for our ACK: the last
  // frames' ACK goes now, not after engine.ack.delay (one ACK per rendezvous message).
  const bool whole = m->arrived == m->length;
  finish_message_if_complete(m);
  if (whole && peer.frames_unacked > 0) send_ack(peer);
}

void EngineCore::reject_payload(Peer& peer, const frag::FrameHeader& h) {
  count_refused(counters_.dropped_bad_payload);
  if (Route* route = arrival_route(peer)) ++route->counters.checksum_failures;
  base::logger().debug("payload checksum mismatch: {}", frag::describe(h));
  if (!peer.tracking) return;
  frag::FrameHeader nack = header_for(peer, frag::FrameType::nack);
  nack.seq_first = h.seq_first;
  nack.seq_count = h.seq_count;
  ++counters_.nacks_sent;
  send_frame(peer, nack, {});
}

bool EngineCore::place_payload(IncomingMessage& m, const frag::FrameHeader& h,
                               std::span<const std::byte> payload) {
  if (m.receive != nullptr) return place_into_receive(*m.receive, h, payload);
  const std::size_t offset = h.fragment_offset;
  const std::size_t len = payload.size();
  if (m.early.size() < offset + len) m.early.resize(offset + len);
  return frag::copy_and_verify(h.checksum_kind, m.early.data() + offset, payload.data(), len,
                               h.payload_checksum);
}

// A fragment into its receive, verified in the same pass; false on a checksum mismatch.
bool EngineCore::place_into_receive(Request& r, const frag::FrameHeader& h, std::span<const std::byte> payload) {
  const std::size_t offset = h.fragment_offset;
  const std::size_t len = payload.size();
  const std::size_t fits = offset >= r.capacity ? 0 : std::min(len, r.capacity - offset);
  if (r.layout != nullptr) {
    // Scattered into the pieces, checksummed in the same pass; what does not fit is still checksummed.
    frag::Checksummer sum(h.checksum_kind);
    (void)frag::scatter_with_checksum(*r.layout, r.recv_buf, offset, payload.first(fits), sum);
    sum.update(payload.data() + fits, len - fits);
    return sum.value() == h.payload_checksum;
  }
  if (fits == len) {
    // Received straight into place (place(), engine_place.cpp): only the check is left; a copy onto
    // itself would be undefined.
    if (payload.data() == r.recv_buf + offset) {
      return frag::checksum(h.checksum_kind, payload.data(), len) == h.payload_checksum;
    }
    return frag::copy_and_verify(h.checksum_kind, r.recv_buf + offset, payload.data(), len, h.payload_checksum);
  }
  // Truncated receive: what does not fit is still checksummed, so corruption is still caught.
  frag::Checksummer sum(h.checksum_kind);
  sum.copy(r.recv_buf + offset, payload.data(), fits);
  sum.update(payload.data() + fits, len - fits);
  return sum.value() == h.payload_checksum;
}

// Message records are reused: a small message costs no allocation.
IncomingMessage* EngineCore::acquire_message() {
  if (free_messages_.empty()) return &message_store_.emplace_back();
  IncomingMessage* m = free_messages_.back();
  free_messages_.pop_back();
  return m;
}

void EngineCore::release_message(IncomingMessage* m) {
  if (m->indexed) peers_[m->peer].incoming.erase(m->msg_seq);
  *m = IncomingMessage{};
  free_messages_.push_back(m);
}

// Matching raises no new events (only frame arrivals do, and handling an event never polls a path).
void EngineCore::process_events() {
  for (const match::Event& e : events_) {
    if (e.kind != match::Event::Kind::matched) continue;
    auto* message = reinterpret_cast<IncomingMessage*>(e.message.handle);
    const PeerGuard peer_lock(*this, message->peer);
    on_matched(reinterpret_cast<Request*>(e.receive), message, /*from_poll=*/true);
    finish_message_if_complete(message);
  }
  events_.clear();
}

void EngineCore::on_matched(Request* r, IncomingMessage* m, bool from_poll) {
  Peer& peer = peers_[m->peer];
  if (peer.lost && (m->rendezvous || m->arrived < m->length)) [[unlikely]] {
    release_message(m);  // the rest of it will never come
    fail_lost(r, peer.rank);
    return;
  }
  r->message = m;
  m->receive = r;
  if (!m->early.empty()) {
    copy_into_receive(*r, m->early);
    m->early = {};
  }
  if (peer.tracking && !m->buffered.empty()) {
    for (const seq::Range& range : m->buffered) (void)peer.in.on_delivered(range);
    m->buffered.clear();
    owe_ack(peer);
  }
  if (!m->rendezvous) return;
  if (m->single_copy && splits_copy(*r, *m)) {
    start_split_copy(peer, r, m);
    return;
  }
  if (m->single_copy) {
    const std::size_t len = std::min<std::size_t>(m->length, r->capacity);
    if (from_poll && defers_read(*r, len)) {
      deferred_reads_.push_back({r, m, len});
      return;
    }
    if (read_single_copy(peer, *r, *m, len)) return;
  }
  pipe_message(peer, *r, *m);
}

bool EngineCore::read_single_copy(Peer& peer, Request& r, IncomingMessage& m, std::size_t len) {
  auto read = env_.read_peer_memory ? read_into_receive(r, m.remote_pid, m.remote_address, len)
                                    : base::Result<std::size_t>(base::Errc::unsupported, "no single copy");
  if (read && *read == len) {
    answer_single_copy(peer, m);
    return true;
  }
  // Its memory cannot be read (ptrace rules, a pid namespace, a changed mapping): a CTS instead of the
  // FIN makes the sender pipe the message through the FIFOs like any rendezvous. Bytes a partial read
  // wrote are overwritten by the stream.
  ++counters_.single_copy_fallbacks;
  base::logger().debug("single copy from rank {} failed ({}): piped instead", m.peer,
                       read ? "read " + std::to_string(*read) + " of " + std::to_string(len) + " bytes"
                            : read.status().to_string());
  m.single_copy = false;
  return false;
}

void EngineCore::answer_single_copy(Peer& peer, IncomingMessage& m) {
  m.arrived = m.length;
  send_control(peer, frag::FrameType::fin, m.msg_seq, m.sender_cookie, 0);
}

// A rendezvous the sender streams through the paths after our CTS.
void EngineCore::pipe_message(Peer& peer, Request& r, const IncomingMessage& m) {
  if (bulk_receives_++ == 0) expect_bulk(true);
  send_control(peer, frag::FrameType::cts, m.msg_seq, m.sender_cookie, r.cookie());
}

// Reading a message from another process costs a fixed part per system call (finding the process,
// the permission check: about 1 us here, a fifth of a 64 KiB read) besides the copy. Messages whose
// RTSes arrive in one poll, as a window of sends does, wait for the poll to end and are read together.
// Only into contiguous receives (one block each), and only messages up to gather_max: on a larger one
// the call's cost is a small part, and waiting for the others would hold up its FIN. Nor a message the
// split copy could take (from split_copy_min): one that arrived while its sender was not waiting yet
// would be read by this process alone, where the next poll may find the sender waiting and split it
// (128 KiB bandwidth 0.80x when they were gathered). The wait is short: a poll hands up at most its
// budget of frames, already there, and the calls are cut at kGatherCallBytes, each answered (FINs)
// before the next.
bool EngineCore::defers_read(const Request& r, std::size_t len) const noexcept {
  return len <= config_.gather_max && (config_.split_copy_min == 0 || len < config_.split_copy_min) &&
         r.layout == nullptr && env_.read_peer_memory_gather;
}

// At the end of a path's poll, under the locks the poll's frames were handled with (the engine's). Each
// run of one peer's messages, up to kGatherCallBytes, in one system call; what it did not read (it
// stops at a block it could not copy) is read message by message as before, which reports why and pipes
// what still fails.
void EngineCore::read_deferred_copies() {
  constexpr std::size_t kGatherCallBytes = std::size_t{1} << 20;  // 16 messages of 64 KiB
  std::size_t first = 0;
  while (first < deferred_reads_.size()) {
    const std::int64_t pid = deferred_reads_[first].message->remote_pid;
    std::size_t end = first;
    std::size_t bytes = 0;
    gather_remote_.clear();
    gather_local_.clear();
    for (; end < deferred_reads_.size() && deferred_reads_[end].message->remote_pid == pid &&
           (end == first || bytes + deferred_reads_[end].length <= kGatherCallBytes) &&
           end - first < path::kMaxGatherBlocks;
         ++end) {
      const DeferredRead& d = deferred_reads_[end];
      gather_remote_.push_back({reinterpret_cast<void*>(d.message->remote_address), d.length});
      gather_local_.push_back({d.receive->recv_buf, d.length});
      bytes += d.length;
    }
    std::size_t got = 0;
    const bool gathered = end - first > 1;
    if (gathered) {
      auto read = env_.read_peer_memory_gather(pid, gather_remote_, gather_local_);
      if (read) got = *read;
    }
    for (std::size_t i = first; i < end; ++i) {
      const DeferredRead& d = deferred_reads_[i];
      IncomingMessage* m = d.message;
      const PeerGuard peer_lock(*this, m->peer);
      Peer& peer = peers_[m->peer];
      if (gathered && got >= d.length) {
        got -= d.length;
        ++counters_.single_copies_gathered;
        answer_single_copy(peer, *m);
      } else {
        got = 0;  // the call stopped in this one: the rest one by one
        if (!read_single_copy(peer, *d.receive, *m, d.length)) pipe_message(peer, *d.receive, *m);
      }
      finish_message_if_complete(m);
    }
    first = end;
  }
  deferred_reads_.clear();
}

// Split only where each half is worth a system call and the sender can write the whole second half
// into one buffer: a contiguous receive that holds the message.
// And only while the sender waits in the library (its shared-memory waiting word): it then writes its
// half at once, where a sender computing between MPI_Isend and its wait would hold the receive up until
// its next call. A path that cannot tell is taken at its word that the sender polls.
bool EngineCore::splits_copy(const Request& r, const IncomingMessage& m) const noexcept {
  if (config_.split_copy_min == 0 || m.length < std::max<std::uint64_t>(config_.split_copy_min, 128) ||
      m.length > r.capacity || r.layout != nullptr || !env_.read_peer_memory) {
    return false;
  }
  const Peer& peer = peers_[m.peer];
  return peer.rails.size() == 1 && peer.rails[0].path->peer_waiting(m.peer).value_or(true);
}

void EngineCore::start_split_copy(Peer& peer, Request* r, IncomingMessage* m) {
  m->split = (m->length / 2) & ~std::uint64_t{63};  // on a cache line of the message
  ++counters_.split_copies;
  // The CTS first, so that the sender writes its half while this process reads the other.
  frag::FrameHeader h = header_for(peer, frag::FrameType::cts);
  h.flags = frag::kFlagSingleCopy;
  h.message_seq = m->msg_seq;
  h.sender_request = m->sender_cookie;
  h.receiver_request = r->cookie();
  h.message_length = reinterpret_cast<std::uintptr_t>(r->recv_buf);
  h.fragment_offset = m->split;
  send_frame(peer, h, {});
  m->front_read = read_split_part(*r, *m, 0, m->split);
}

bool EngineCore::read_split_part(Request& r, const IncomingMessage& m, std::uint64_t from, std::uint64_t to) {
  const ::iovec block{r.recv_buf + from, to - from};
  auto read = env_.read_peer_memory(m.remote_pid, m.remote_address + from, {&block, 1});
  if (read && *read == to - from) return true;
  base::logger().debug("split copy from rank {}: reading bytes [{}, {}) failed ({})", m.peer, from, to,
                       read ? "read " + std::to_string(*read) : read.status().to_string());
  return false;
}

// The receiver's side of a split copy's end: the sender's FIN says whether it wrote its half. A half
// not moved yet, the receiver reads; failing that, the message is piped whole, as a single copy that
// could not read is (the sender still waits for a FIN, so a CTS makes it stream from the start).
void EngineCore::end_split_copy(Peer& peer, const frag::FrameHeader& h) {
  Request* r = requests_.find(h.receiver_request, RequestKind::receive);
  IncomingMessage* m = r != nullptr ? r->message : nullptr;
  if (m == nullptr || m->peer != h.source || m->msg_seq != h.message_seq || !m->single_copy || m->split == 0) {
    drop_malformed("a FIN that names no split copy", h);
    return;
  }
  accept_sequenced(peer, h, /*delivered=*/true);
  const bool back_written = (h.flags & frag::kFlagSingleCopy) != 0;
  bool whole = m->front_read && back_written;
  if (!whole) {
    ++counters_.split_copy_rereads;
    whole = (m->front_read || read_split_part(*r, *m, 0, m->split)) &&
            (back_written || read_split_part(*r, *m, m->split, m->length));
  }
  m->split = 0;
  if (!whole) {
    ++counters_.single_copy_fallbacks;
    m->single_copy = false;
    pipe_message(peer, *r, *m);
    return;
  }
  m->arrived = m->length;
  send_control(peer, frag::FrameType::fin, m->msg_seq, m->sender_cookie, 0);
  finish_message_if_complete(m);
}

void EngineCore::finish_message_if_complete(IncomingMessage* m) {
  if (m == in_hand_ || m->receive == nullptr || m->arrived < m->length) return;
  Request* r = m->receive;
  r->message = nullptr;
  bulk_receive_ended(*m);
  const std::uint32_t peer = m->peer;
  const std::int32_t tag = m->tag;
  const std::uint64_t length = m->length;
  const std::uint64_t credit = m->credit;
  release_message(m);
  complete_receive(r, peer, tag, length);
  credit_consumed(peers_[peer], credit);
}

// A matched rendezvous that sent its CTS (not a single copy) no longer waits for bulk data.
void EngineCore::bulk_receive_ended(const IncomingMessage& m) noexcept {
  if (m.rendezvous && !m.single_copy && --bulk_receives_ == 0) expect_bulk(false);
}

void EngineCore::expect_bulk(bool expected) noexcept {
  for (auto& p : paths_) p->expect_bulk(expected);
}

// ---------------------------------------------------------------------------------------------------
// Progress: a round polls every path and hands what arrives to on_frame (here, so that the short frames
// of a single-threaded round go into their receives inline), then timers, streams and rebinding.
void EngineCore::SingleThreadSink::on_frame(std::span<const std::byte> frame) noexcept { engine.on_frame<false>(frame); }

Completion EngineCore::receive(const CommView& comm, void* buf, std::size_t capacity, int source, int tag,
                               void (*between)()) {
  if (base::multi_threaded()) [[unlikely]] return Engine::receive(comm, buf, capacity, source, tag, between);
  Request* r = start_receive<false>(comm, buf, capacity, nullptr, source, tag);
  wait_rounds([r] { return r->complete; }, [this] { return progress_round(); }, [between] {
    if (between != nullptr) between();
  });
  const Completion completion = r->completion;
  requests_.free<false>(r);  // complete: release() would free it
  return completion;
}

bool EngineCore::progress() {
  // The threaded case out of line: a single-threaded process goes straight into the round.
  if (base::multi_threaded()) [[unlikely]] return progress_threaded();
  return progress_round();
}

// What a multi-threaded poll hands up goes to the engine under its lock, taken at the first frame (or
// place()) and kept until the path's poll returns (leave()): a frame placed into a receive's buffer
// stays covered until its payload is there. An idle poll never takes it.
class EngineCore::PollSink final : public path::FrameSink {
 public:
  explicit PollSink(EngineCore& engine) noexcept : engine_(engine) {}
  ~PollSink() { leave(); }
  PollSink(const PollSink&) = delete;
  PollSink& operator=(const PollSink&) = delete;

  void on_frame(std::span<const std::byte> frame) noexcept override {
    enter();
    engine_.on_frame(frame);
  }
  std::size_t place_header_size() const noexcept override { return engine_.place_header_size(); }
  std::span<std::byte> place(std::span<const std::byte> header, std::size_t frame_length) noexcept override {
    enter();
    return engine_.place(header, frame_length);
  }
  void on_frame_parts(std::span<const std::byte> header, std::span<const std::byte> payload) noexcept override {
    enter();
    engine_.on_frame_parts(header, payload);
  }
  // After a path's poll: the engine's lock goes back if this poll took it.
  void leave() noexcept {
    if (!locked_) return;
    locked_ = false;
    holds_engine_lock_ = false;
    engine_.engine_lock_.unlock();
  }

 private:
  void enter() noexcept {
    if (locked_ || holds_engine_lock_) return;  // held already: taken by this poll, or finalize's progress
    engine_.engine_lock_.lock();  // allowed: the poll lock comes first in the order
    holds_engine_lock_ = true;
    locked_ = true;
  }

  EngineCore& engine_;
  bool locked_ = false;
};

bool EngineCore::progress_threaded() {
  const bool inside = holds_engine_lock_;  // finalize's progress, under the engine's lock
  // A thread that waits for the engine's lock to start an operation goes first (a mutex hands nothing
  // over by itself: we would take it straight back).
  if (!inside && engine_lock_waiters_.load(std::memory_order_relaxed) != 0) return false;
  // Another thread polling delivers what arrives (it takes the engine's lock for that). A thread inside
  // the engine that finds one returns: the poller may be waiting for the lock it holds.
  if (!poll_lock_.try_lock()) return false;
  if (config_.test_poll_tag >= 0) [[unlikely]] {  // engine.test.poll_tag: polling, without the engine's lock
    const PollTest test = poll_test_round();
    if (test == PollTest::skip) {
      poll_lock_.unlock();
      return false;
    }
    if (test == PollTest::wait) await_receive_while_polling();
  }
  bool did = poll_threaded();
  if (inside || (engine_lock_waiters_.load(std::memory_order_relaxed) == 0 && engine_lock_.try_lock())) {
    holds_engine_lock_ = true;
    serve_control_if_pending();
    did = progress_after_poll(did);
    if (!inside) {
      holds_engine_lock_ = false;
      engine_lock_.unlock();
    }
  }
  poll_lock_.unlock();
  return did;
}

bool EngineCore::poll_threaded() {
  bool did = false;
  PollSink sink(*this);
  for (std::uint32_t i = 0; i < paths_.size(); ++i) {
    polling_path_ = i;
    limits_.verify_header_checksum = header_checked_[i] != 0;
    did = paths_[i]->poll(sink, kPollBudget) > 0 || did;
    if (!deferred_reads_.empty()) read_deferred_copies();  // under the engine lock the frames took
    sink.leave();
  }
  return did;
}

void EngineCore::serve_control_if_pending() {
  if (env_.control_pending != nullptr && env_.control_pending->load(std::memory_order_relaxed)) [[unlikely]] {
    serve_control();
  }
}

bool EngineCore::progress_round() {
  bool did = false;
  if (!deferred_acks_.empty()) apply_deferred_acks();  // the last round's (take_ack)
  serve_control_if_pending();
  for (std::uint32_t i = 0; i < paths_.size(); ++i) {
    polling_path_ = i;
    limits_.verify_header_checksum = header_checked_[i] != 0;
    if (paths_[i].get() == shm_) {
      SingleThreadSink sink{*this};
      did = shm_->poll_as(sink, kPollBudget) > 0 || did;
    } else {
      did = paths_[i]->poll(*this, kPollBudget) > 0 || did;
    }
    if (!deferred_reads_.empty()) [[unlikely]] read_deferred_copies();
  }
  return progress_after_poll(did);
}

bool EngineCore::progress_after_poll(bool did) {
  // What take_ack left: before peers are forgotten or frames rebound, and in a round that found nothing.
  if (!deferred_acks_.empty() && (!did || lost_pending_ || rebind_pending_)) apply_deferred_acks();
  if (lost_pending_) [[unlikely]] {
    forget_lost_peers();
    did = true;
  }
  if (rebind_pending_) {
    rebind_frames();
    did = true;
  }
  if (!streaming_.empty()) did = push_streams() || did;
  // Timers every kTimerCheckRounds busy rounds, and every 4th idle one: an idle round is one look at
  // each path, and reading the clock at every one of them lengthens the wait for the next frame.
  if (any_tracking_ && (++rounds_since_timer_check_ >= kTimerCheckRounds || (!did && rounds_since_timer_check_ % 4 == 0))) {
    rounds_since_timer_check_ = 0;
    did = service_timers() || did;
  }
  // Bulk frames a path held back to send with the next ones (UDP GSO) leave now: the caller may not
  // come back for a while, and the receiver must not wait for it. Every round that sends bulk frames
  // (streams, resends, rebinding, a CTS or NACK handed up) did something: an idle round skips the load.
  if (did && bulk_sent_.load(std::memory_order_relaxed)) {
    bulk_sent_.store(false, std::memory_order_relaxed);
    for (auto& p : paths_) p->flush_sends();
  }
  return did;
}

}  // namespace ftmpi::engine

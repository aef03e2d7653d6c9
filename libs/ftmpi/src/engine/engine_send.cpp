// Sending: a message's protocol (eager as DATA fragments or one short frame, rendezvous with an RTS and a
// stream after the CTS, single copy), its sequence numbers, and each frame built in one pass into the
// room a path found (OutgoingFrame), kept whole for resending when the peer is tracked.
#include <sched.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <thread>

#include "engine_core.hpp"
#include "ftmpi/base/log.hpp"

namespace ftmpi::engine {
namespace {

// With engine.retain.after_send, tracked eager payloads from this size leave from the send buffer before
// their copy for resending is made; smaller ones are copied first, the copy too short to be worth a
// second iovec.
constexpr std::size_t kCopyAfterSendMin = 1024;

void store_le64(std::byte* out, std::uint64_t v) {
  for (int i = 0; i < 8; ++i) out[i] = static_cast<std::byte>(v >> (8 * i));
}

}  // namespace

frag::FrameHeader EngineCore::header_for(Peer& peer, frag::FrameType type) noexcept {
  frag::FrameHeader h;
  h.type = type;
  h.job_key = id_.job_key;
  h.source = id_.rank;
  h.destination = peer.rank;
  return h;
}

void EngineCore::send_frame(Peer& peer, std::uint32_t route_index, frag::FrameHeader& h, const Payload& payload,
                            bool bulk, Request* lender) {
  if (peer.lost) [[unlikely]] return;  // nothing reaches it; its operations fail (forget_lost_peers)
  const bool sequenced = frag::occupies_sequence(h.type);
  if (sequenced) {
    const auto numbers = peer.out.assign(payload.size());
    if (!numbers) [[unlikely]] abort(1, "sending to rank " + std::to_string(peer.rank) + ": " + numbers.status().to_string());
    h.seq_first = numbers->first;
    h.seq_count = static_cast<std::uint32_t>(numbers->size());
  }
  Route& route = peer.rails[route_index];
  RetainedFrame* keep = nullptr;
  if (peer.tracking) {
    h.flags |= frag::kFlagAckValid;
    h.lirs = peer.in.lirs();
    h.lids = peer.in.lids();
    // This frame carries the ACK; but past a hole only an explicit ACK can say what arrived beyond it.
    if (!peer.in.received().has_gaps()) peer.frames_unacked = 0;
    if (sequenced) {
      keep = &peer.retained.emplace_back();
      const std::lock_guard spare_lock(spare_frames_lock_);
      if (!spare_frames_.empty()) {
        keep->bytes = std::move(spare_frames_.back());
        spare_frames_.pop_back();
      }
      keep->range = {h.seq_first, h.seq_first + h.seq_count - 1};
      keep->route = route_index;
      keep->bulk = bulk;
    }
  }
  OutgoingFrame frame(h, payload, peer.tracking ? config_.checksum : frag::ChecksumKind::none, bulk,
                      mac_key(route.path_index), payload_mac_key(route.path_index));
  ++counters_.frames_sent;
  ++route.counters.frames_sent;
  route.counters.bytes_sent += frame.frame_size();
  counters_.bytes_sent += frame.frame_size();
  base::Status sent;
  if (keep != nullptr) {
    // What is kept for retransmission is the frame itself, whole before anything could resend it: a path
    // may lose a frame without ever writing it. By reference, only its header is built: the payload's CRC
    // is read from the sender's buffer, and a path that gathers sends it from there, so the bytes are
    // not copied in user space at all (the send completes once the peer has them: frame_received).
    route.in_flight += frame.frame_size();
    ++route.frames_in_flight;
    // What the path sends from the kept frame, and what from the sender's buffer.
    std::span<const std::byte> from_kept;
    std::span<const std::byte> from_sender;
    bool copy_after_send = false;
    if (lender != nullptr && frame.header_size() == frag::kHeaderSize) {
      keep->bytes.resize(frag::kHeaderSize);
      keep->payload = frame.write_header(keep->bytes);
      keep->lender = lender;
      ++lender->frames_lent;
      ++counters_.frames_by_reference;
      from_kept = keep->bytes;
      from_sender = keep->payload;
    } else if (payload.size() >= kCopyAfterSendMin && sends_in_place_[route.path_index] != 0 &&
               frame.header_size() == frag::kHeaderSize) {
      // An eager frame: its send completes at once, so its bytes must be kept. A path that gathers sends
      // header and payload from where they lie, and the payload is copied into the kept frame once the
      // path has it (a path copies what it queues): the same bytes, the CRC read from the same buffer,
      // while the copy is off the message's way. A refused frame is whole when it is resent.
      keep->bytes.resize(frame.frame_size());
      from_sender = frame.write_header(keep->bytes);
      from_kept = std::span<const std::byte>(keep->bytes.data(), frag::kHeaderSize);
      copy_after_send = true;
    } else {
      keep->bytes.resize(frame.frame_size());
      frame.write(keep->bytes);
      from_kept = keep->bytes;
    }
    StoredFrame stored(from_kept, from_sender, bulk);
    sent = route.path->send(peer.rank, stored);
    // Timed once the path has it (sent, or queued behind a full socket buffer or in a GSO run): the clock
    // read is then off the message's way.
    keep->sent_at = Clock::now();
    if (copy_after_send) {
      std::memcpy(keep->bytes.data() + frag::kHeaderSize, from_sender.data(), from_sender.size());
      ++counters_.frames_copied_after_send;
    }
  } else {
    sent = route.path->send(peer.rank, frame);
  }
  if (bulk) bulk_sent_.store(true, std::memory_order_relaxed);
  if (!sent) [[unlikely]] {
    route_failed(peer, route_index, sent, keep != nullptr ? std::optional(h.seq_first) : std::nullopt);
    // An ACK or NACK is not kept, yet the refusal says it is lost: say it again at once on a rail that is
    // up (a lost ACK leaves the sender waiting for its timer with a full window). The refused rail is
    // not up any more, so this ends.
    if (keep == nullptr && peer.tracking && (h.type == frag::FrameType::ack || h.type == frag::FrameType::nack)) {
      const std::uint32_t other = pick_route(peer);
      if (other != route_index && peer.rails[other].state == RailState::up) send_frame(peer, other, h, payload, bulk);
    }
  }
}

void EngineCore::send_control(Peer& peer, frag::FrameType type, std::uint64_t msg_seq,
                              std::uint64_t sender_cookie, std::uint64_t receiver_cookie) {
  frag::FrameHeader h = header_for(peer, type);
  h.message_seq = msg_seq;
  h.sender_request = sender_cookie;
  h.receiver_request = receiver_cookie;
  send_frame(peer, h, {});
}

// The sender's side of a split copy: its half of the message into the receive buffer the CTS names, then
// a FIN naming the receive, flagged when the write was done. The send completes on the receiver's FIN.
void EngineCore::write_split_part(Peer& peer, Request& r, const frag::FrameHeader& h) {
  const std::uint64_t from = h.fragment_offset;
  const std::size_t len = r.bytes - from;
  auto written = env_.write_peer_memory
                     ? env_.write_peer_memory(peer.pid, h.message_length + from, r.send_buf + from, len)
                     : base::Result<std::size_t>(base::Errc::unsupported, "no cross-memory write");
  const bool done = written && *written == len;
  if (!done) {
    base::logger().debug("split copy to rank {}: writing {} bytes failed ({}): the receiver reads them", peer.rank,
                         len, written ? "wrote " + std::to_string(*written) : written.status().to_string());
  }
  frag::FrameHeader fin = header_for(peer, frag::FrameType::fin);
  fin.flags = done ? frag::kFlagSingleCopy : 0;
  fin.message_seq = r.msg_seq;
  fin.sender_request = r.cookie();
  fin.receiver_request = h.receiver_request;
  send_frame(peer, fin, {});
}

void EngineCore::send_credit(Peer& peer) {
  frag::FrameHeader h = header_for(peer, frag::FrameType::credit);
  h.message_length = peer.credit.grant();
  ++counters_.credits_sent;
  send_frame(peer, h, {});
}

void EngineCore::send_ack(Peer& peer) {
  frag::FrameHeader h = header_for(peer, frag::FrameType::ack);
  if (peer.in.received().has_gaps()) {
    // Selective: the block the latest frame joined, so that the sender does not resend what lies there.
    if (auto block = peer.in.received().range_above_prefix(peer.last_received_seq)) {
      h.seq_first = block->first;
      h.seq_count = static_cast<std::uint32_t>(std::min<std::uint64_t>(block->size(), UINT32_MAX));
    }
  }
  peer.frames_unacked = 0;
  ++counters_.acks_sent;
  send_frame(peer, h, {});
}

// A rendezvous send from one contiguous buffer lends it to the frames kept for resending: the send waits
// for the peer anyway (its CTS, then its stream), and completes only once every lent frame arrived too
// (frame_received). Not once released (MPI_Request_free): see take_back_lent_frames.
Request* EngineCore::lender_for(Request& r) const noexcept {
  return r.layout == nullptr && !r.released && config_.retain_by_reference && !config_.payload_mac ? &r : nullptr;
}

// One DATA fragment of a send: `len` bytes at `offset`, on `route`.
void EngineCore::send_fragment(Peer& peer, Request& r, std::uint32_t route, std::size_t offset, std::size_t len) {
  const bool bulk = r.receiver_cookie != 0;
  frag::FrameHeader h = header_for(peer, frag::FrameType::data);
  h.flags = frag::fragment_position_flags(offset, len, r.bytes);
  h.context = r.context;
  h.tag = r.tag;
  h.message_seq = r.msg_seq;
  h.message_length = r.bytes;
  h.fragment_offset = offset;
  h.payload_length = static_cast<std::uint32_t>(len);
  if (bulk) {
    h.sender_request = r.cookie();
    h.receiver_request = r.receiver_cookie;
  }
  send_frame(peer, route, h, Payload::of(r, offset, len), bulk, bulk ? lender_for(r) : nullptr);
}

// DATA fragments for bytes [from, to) of a send: each goes on the least loaded working rail, cut at
// that rail's payload size, so one message stripes over every rail to the peer.
void EngineCore::send_fragments(Peer& peer, Request& r, std::size_t from, std::size_t to) {
  std::size_t offset = from;
  do {
    const std::uint32_t route = pick_route(peer);
    const std::size_t len = std::min(peer.rails[route].max_payload, to - offset);
    send_fragment(peer, r, route, offset, len);
    offset += len;
  } while (offset < to);
}

Peer& EngineCore::prepare_send(Request& r, const CommView& comm, const void* buf, std::size_t bytes, int dest,
                               int tag, SendMode mode) noexcept {
  r.send_buf = static_cast<const std::byte*>(buf);
  r.bytes = bytes;
  r.peer = static_cast<std::uint32_t>(comm.world_rank_of(dest));
  r.context = comm.context;
  r.tag = tag;
  r.mode = mode;
  Peer& peer = peers_[r.peer];
  r.msg_seq = peer.out.assign_message();
  return peer;
}

bool EngineCore::send_eager(const CommView& comm, const void* buf, std::size_t bytes, int dest, int tag,
                            SendMode mode) {
  if (base::multi_threaded()) [[unlikely]] return send_eager_threaded(comm, buf, bytes, dest, tag, mode);
  return send_eager<false>(comm, buf, bytes, dest, tag, mode);
}

// Out of line, so that the single-threaded instantiation, inlined above, keeps its small stack frame.
bool EngineCore::send_eager_threaded(const CommView& comm, const void* buf, std::size_t bytes, int dest, int tag,
                                     SendMode mode) {
  return send_eager<true>(comm, buf, bytes, dest, tag, mode);
}

template <bool kThreads>
bool EngineCore::send_eager(const CommView& comm, const void* buf, std::size_t bytes, int dest, int tag,
                            SendMode mode) {
  const auto rank = static_cast<std::uint32_t>(comm.world_rank_of(dest));
  const PeerLock<kThreads> peer_lock(*this, rank);  // and no more: see "Threads" in engine_core.hpp
  // Only under MPI_THREAD_MULTIPLE, as its test runs (tests/mpi/threads_overlap.c).
  if (kThreads && tag == config_.test_overlap_tag) [[unlikely]] await_overlapping_send();
  Peer& peer = peers_[rank];
  if (peer.lost || !goes_eager(peer, bytes, mode)) return false;  // isend reports a lost peer
  if (takes_short_frame(peer, bytes)) [[likely]] {
    // The common case builds no Request at all (one on the stack cost a zero-byte send ~30 instructions).
    send_short<kThreads>(peer, comm.context, tag, static_cast<const std::byte*>(buf), bytes,
                         peer.out.assign_message());
    return true;
  }
  // Never in the table: an eager message's frames name no request.
  Request r;
  prepare_send(r, comm, buf, bytes, dest, tag, mode);
  send_whole_eager<kThreads>(peer, r);
  return true;
}

bool EngineCore::takes_short_frame(const Peer& peer, std::size_t bytes) noexcept {
  // short_frames: the peer has exactly one route.
  return peer.short_frames && bytes <= peer.rails[0].max_payload && peer.rails[0].state == RailState::up;
}

template <bool kThreads>
void EngineCore::send_whole_eager(Peer& peer, Request& r) {
  // A message in pieces goes as DATA, gathered.
  if (r.layout == nullptr && takes_short_frame(peer, r.bytes)) {
    send_short<kThreads>(peer, r.context, r.tag, r.send_buf, r.bytes, r.msg_seq);
    return;
  }
  peer.credit.sent(EagerCredit::eager_cost(r.bytes));
  send_fragments(peer, r, 0, r.bytes);
}

template <bool kThreads>
void EngineCore::send_short(Peer& peer, std::uint32_t context, std::int32_t tag, const std::byte* payload,
                            std::size_t bytes, std::uint64_t msg_seq) {
  peer.credit.sent(EagerCredit::eager_cost(bytes));
  Route& route = peer.rails[0];
  ShortFrame frame({id_.rank, context, tag, static_cast<std::uint32_t>(bytes), msg_seq}, payload);
  counters_.frames_sent.add<kThreads>(1);
  ++route.counters.frames_sent;
  route.counters.bytes_sent += frame.frame_size();
  counters_.bytes_sent.add<kThreads>(frame.frame_size());
  if (route.path == shm_ && shm_->try_send(peer.rank, frame)) [[likely]] return;
  if (const base::Status sent = route.path->send(peer.rank, frame); !sent) route_failed(peer, 0, sent);
}

Request* EngineCore::isend(const CommView& comm, const void* buf, std::size_t bytes, int dest, int tag,
                           SendMode mode) {
  return start_send(comm, buf, bytes, nullptr, dest, tag, mode);
}

Request* EngineCore::isend_pieces(const CommView& comm, const void* base, const frag::PiecesLayout& layout, int dest,
                                  int tag, SendMode mode) {
  return start_send(comm, base, layout.packed_size(), &layout, dest, tag, mode);
}

Request* EngineCore::start_send(const CommView& comm, const void* buf, std::size_t bytes,
                                const frag::PiecesLayout* layout, int dest, int tag, SendMode mode) {
  const PeerGuard peer_lock(*this, static_cast<std::uint32_t>(comm.world_rank_of(dest)));
  if (base::multi_threaded() && tag == config_.test_overlap_tag) [[unlikely]] await_overlapping_send();
  Request* r = requests_.allocate(RequestKind::send);
  Peer& peer = prepare_send(*r, comm, buf, bytes, dest, tag, mode);
  r->layout = layout;
  if (peer.lost) [[unlikely]] {
    fail_lost(r, peer.rank);
    return r;
  }
  if (goes_eager(peer, bytes, mode)) {
    if (base::multi_threaded()) {
      send_whole_eager<true>(peer, *r);
    } else {
      send_whole_eager<false>(peer, *r);
    }
    complete(r);
    return r;
  }
  if (mode != SendMode::synchronous && bytes <= peer.eager_limit) ++counters_.credit_rendezvous;

  frag::FrameHeader h = header_for(peer, frag::FrameType::rts);
  h.flags = frag::kFlagFirstFragment;
  if (mode == SendMode::synchronous) h.flags |= frag::kFlagAckRequested;
  h.context = r->context;
  h.tag = tag;
  h.message_seq = r->msg_seq;
  h.message_length = bytes;
  h.sender_request = r->cookie();
  // Single copy hands the receiver one block to read: a message in pieces streams instead (one gather into
  // the frames, one scatter out, where packing first would add a copy).
  if (peer.single_copy && !peer.tracking && peer.pid != 0 && layout == nullptr &&
      bytes >= std::max(config_.single_copy_min, kSingleCopyDescriptorSize) &&
      (config_.single_copy_max == 0 || bytes <= config_.single_copy_max)) {
    std::array<std::byte, kSingleCopyDescriptorSize> descriptor{};
    store_le64(descriptor.data(), static_cast<std::uint64_t>(::getpid()));
    store_le64(descriptor.data() + 8, reinterpret_cast<std::uintptr_t>(buf));
    h.flags |= frag::kFlagSingleCopy;
    h.payload_length = kSingleCopyDescriptorSize;
    r->next_offset = bytes;
    r->send_state = SendState::awaiting_fin;
    send_frame(peer, h, std::span<const std::byte>(descriptor));
    return r;
  }
  // The first fragment rides on the RTS only within the peer's credit: the receiver may have to hold it.
  std::size_t first = std::min(bytes, peer.rts_payload);
  if (peer.credit.may_send(first)) {
    peer.credit.sent(first);
  } else {
    first = 0;
  }
  h.flags |= frag::fragment_position_flags(0, first, bytes);
  h.payload_length = static_cast<std::uint32_t>(first);
  r->next_offset = first;
  r->send_state = SendState::awaiting_cts;
  // The first fragment is lent as the stream's frames are (send_fragment): a rendezvous send waits for
  // its receiver anyway, so it need not be copied to be kept (up to a frame of it: most of a message
  // just above the eager limit).
  send_frame(peer, pick_route(peer), h, Payload::of(*r, 0, first), /*bulk=*/false,
             first > 0 ? lender_for(*r) : nullptr);
  return r;
}

// Streams rendezvous data only while the rail takes frames without queueing them (shared memory: the
// message moves through the FIFOs as the receiver drains them instead of piling up in overflow buffers)
// and, where frames are acknowledged, while the rail's window has room.
bool EngineCore::push_streams() {
  bool did = false;
  for (std::size_t i = 0; i < streaming_.size();) {
    Request* r = streaming_[i];
    const PeerGuard peer_lock(*this, r->peer);
    Peer& peer = peers_[r->peer];
    if (peer.lost) [[unlikely]] {  // failed, not finished, by forget_lost_peers
      ++i;
      continue;
    }
    if (peer.ack_deferred) apply_ack(peer);  // the window as the peer last told it
    while (r->next_offset < r->bytes && !peer.lost) {
      const std::uint32_t index = pick_route(peer);
      const Route& route = peer.rails[index];
      if (route.path->has_queued_frames() ||
          (peer.tracking && (route.in_flight >= config_.window || route.frames_in_flight >= route.window_frames))) {
        break;
      }
      const std::size_t len = std::min(r->bytes - r->next_offset, route.max_payload);
      send_fragment(peer, *r, index, r->next_offset, len);
      r->next_offset += len;
      did = true;
    }
    if (r->next_offset == r->bytes && !peer.lost) {
      streaming_[i] = streaming_.back();
      streaming_.pop_back();
      if (r->frames_lent == 0) {
        complete(r);
      } else {
        r->send_state = SendState::awaiting_acks;  // frame_received completes it
      }
    } else {
      ++i;
    }
  }
  return did;
}

// Two senders are under way at once only if sends to different peers do not serialise on one lock: the
// first to come waits for the second (a blocking send's eager path and isend both come here, holding only
// their peer's lock). A job whose sends serialise ends here, with the reason.
void EngineCore::await_overlapping_send() {
  overlap_senders_.fetch_add(1, std::memory_order_acq_rel);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (overlap_senders_.load(std::memory_order_acquire) < 2) {
    if (std::chrono::steady_clock::now() > deadline) {
      abort(1, "engine.test.overlap_tag: no send to another peer got under way within 30 s of this one: "
               "sends to different peers are serialised");
    }
    ::sched_yield();
  }
}

// engine.test.poll_tag: the receive with the tag arms the posting thread's next polling round; each
// one with the tag + 1 (posted by another thread, under the engine's lock, which it got) counts.
void EngineCore::note_poll_test_receive(int tag) noexcept {
  if (tag == config_.test_poll_tag) {
    poll_test_armer_.store(std::this_thread::get_id(), std::memory_order_relaxed);
    poll_test_armed_.store(true, std::memory_order_release);
  } else if (tag == config_.test_poll_tag + 1) {
    poll_test_posts_.fetch_add(1, std::memory_order_release);
  }
}

// Whether this polling round must wait (the armer's) or skip polling (another thread's, while armed: so
// that only the armer's round can deliver what the armed receive waits for, and it surely waits).
EngineCore::PollTest EngineCore::poll_test_round() noexcept {
  if (!poll_test_armed_.load(std::memory_order_acquire)) return PollTest::poll;
  if (poll_test_armer_.load(std::memory_order_relaxed) != std::this_thread::get_id()) return PollTest::skip;
  poll_test_armed_.store(false, std::memory_order_relaxed);
  return PollTest::wait;
}

// The armer's round, holding the poll lock: waits until another thread posts a receive with the tag + 1
// after the wait began. A job in which posting a receive waits for polling to end ends here, with the
// reason.
void EngineCore::await_receive_while_polling() {
  const std::uint64_t before = poll_test_posts_.load(std::memory_order_acquire);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (poll_test_posts_.load(std::memory_order_acquire) == before) {
    if (std::chrono::steady_clock::now() > deadline) {
      abort(1, "engine.test.poll_tag: no receive could be posted within 30 s while a progress round polled: "
               "posting a receive waits for polling");
    }
    ::sched_yield();
  }
}

}  // namespace ftmpi::engine

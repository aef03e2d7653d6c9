#include "engine_core.hpp"

#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>

#include "ftmpi/base/log.hpp"
#include "ftmpi/params/catalogue.hpp"
#include "ftmpi/params/engine_params.hpp"

namespace ftmpi::engine {
namespace {

constexpr std::size_t kPollBudget = 64;
constexpr std::uint32_t kTimerCheckRounds = 32;
constexpr std::size_t kSingleCopyDescriptorSize = 16;  // {pid, address}, little-endian u64 each

// Receives and probes match on the sender's world rank (see CommView).
match::Pattern pattern_for(const CommView& comm, int source, int tag) {
  return {comm.context, source == kAnySource ? match::kAnySource : comm.world_rank_of(source),
          tag == kAnyTag ? match::kAnyTag : tag};
}

void store_le64(std::byte* out, std::uint64_t v) {
  for (int i = 0; i < 8; ++i) out[i] = static_cast<std::byte>(v >> (8 * i));
}
std::uint64_t load_le64(const std::byte* in) {
  std::uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v |= static_cast<std::uint64_t>(in[i]) << (8 * i);
  return v;
}

// Writes a frame the engine still holds in full (a retransmission).
}  // namespace

StoredFrame::StoredFrame(std::span<const std::byte> bytes, bool bulk) : bytes_(bytes), bulk_(bulk) {}
std::size_t StoredFrame::frame_size() const noexcept { return bytes_.size(); }
void StoredFrame::write(std::span<std::byte> room) noexcept {
  std::memcpy(room.data(), bytes_.data(), bytes_.size());
}
bool StoredFrame::bulk() const noexcept { return bulk_; }

int CommView::comm_rank_of(int world_rank) const noexcept {
  if (world_ranks.empty()) return world_rank;
  auto it = std::find(world_ranks.begin(), world_ranks.end(), world_rank);
  return it == world_ranks.end() ? -1 : static_cast<int>(it - world_ranks.begin());
}

base::Result<EngineConfig> EngineConfig::from(const base::ParamSet& params) {
  EngineConfig c;
  const std::string reliability = params.get_string(kReliability);
  c.reliability = reliability == "force" ? Reliability::force
                  : reliability == "off" ? Reliability::off
                                         : Reliability::automatic;
  auto checksum = frag::parse_checksum_kind(params.get_string(kChecksum));
  if (!checksum) return checksum.status();
  c.checksum = *checksum;
  c.shm_eager_limit = params.get_size(kShmEagerLimit);
  c.net_eager_limit = params.get_size(kNetEagerLimit);
  c.single_copy_min = params.get_size(kShmSingleCopyMin);
  c.retransmit_min = params.get_duration(kRetransmitMin);
  c.retransmit_max = params.get_duration(kRetransmitMax);
  if (c.retransmit_min.count() <= 0 || c.retransmit_max < c.retransmit_min) {
    return base::Status(base::Errc::invalid_argument,
                        "engine.retransmit.max must be at least engine.retransmit.min, which must be > 0");
  }
  const std::int64_t ack_every = params.get_integer(kAckEvery);
  if (ack_every < 1) return base::Status(base::Errc::invalid_argument, "engine.ack.every must be >= 1");
  c.ack_every = static_cast<std::uint32_t>(ack_every);
  c.ack_delay = params.get_duration(kAckDelay);
  const std::int64_t spin = params.get_integer(kSpinRounds);
  if (spin < 0) return base::Status(base::Errc::invalid_argument, "engine.progress.spin must be >= 0");
  c.spin_rounds = static_cast<std::uint64_t>(spin);
  c.ahead_window = match::matcher_config(params, 1).ahead_window;
  c.window = params.get_size(kWindow);
  if (c.window == 0) return base::Status(base::Errc::invalid_argument, "engine.window must be > 0");
  const std::int64_t window_frames = params.get_integer(kWindowFrames);
  if (window_frames < 1) return base::Status(base::Errc::invalid_argument, "engine.window_frames must be >= 1");
  c.window_frames = static_cast<std::size_t>(window_frames);
  c.rail_down_after = params.get_duration(kRailDownAfter);
  c.peer_timeout = params.get_duration(kPeerTimeout);
  c.probe_min = params.get_duration(kProbeMin);
  c.probe_max = params.get_duration(kProbeMax);
  auto report = parse_report_format(params.get_string(kReport));
  if (!report) return report.status();
  c.report = *report;
  if (c.probe_min.count() <= 0 || c.probe_max < c.probe_min) {
    return base::Status(base::Errc::invalid_argument,
                        "engine.rail.probe_max must be at least engine.rail.probe_min, which must be > 0");
  }
  return c;
}

EngineConfig EngineConfig::defaults() {
  base::ParamSet params;
  for (auto table : ftmpi::params::all_param_tables()) (void)params.add_table(table);
  return from(params).value();
}

EngineCore::EngineCore(Identity identity, EngineConfig config,
                       std::vector<std::unique_ptr<path::Path>> paths, Environment environment)
    : id_(identity),
      config_(config),
      paths_(std::move(paths)),
      env_(std::move(environment)),
      matcher_(match::Matcher::create({identity.size, config.ahead_window}).value()) {
  rails_context_.timing = {config_.retransmit_min, config_.retransmit_max, config_.rail_down_after,
                           config_.peer_timeout,   config_.probe_min,      config_.probe_max};
  rails_context_.actions = this;
  rails_context_.totals = &counters_;
  peers_.reserve(id_.size);
  std::size_t max_payload = 0;
  for (std::uint32_t r = 0; r < id_.size; ++r) {
    Peer& peer = peers_.emplace_back(r, &rails_context_);
    for (std::uint32_t i = 0; i < paths_.size(); ++i) {
      path::Path* p = paths_[i].get();
      if (!p->reaches(r)) continue;
      const path::PathInfo& info = p->info();
      Route route;
      route.path = p;
      route.name = info.name;
      route.path_index = i;
      route.max_payload = p->max_frame_to(r) - frag::kHeaderSize;
      route.eager_limit = info.host_local ? config_.shm_eager_limit
                                                           : std::max(route.max_payload, config_.net_eager_limit);
      route.single_copy = info.single_copy_read && config_.single_copy_min > 0;
      peer.reliable_routes = peer.reliable_routes && info.reliable;
      // A host-local path (shared memory) alone when there is one: it is the fastest way to a peer on
      // this host, and a network rail beside it would only be used by failover, which it never needs.
      if (info.host_local) peer.rails.clear();
      if (!peer.rails.empty() && peer.rails[0].path->info().host_local) continue;
      peer.rails.add(std::move(route));
    }
    peer.route_of_path.assign(paths_.size(), -1);
    peer.eager_limit = peer.rails.empty() ? 0 : SIZE_MAX;
    peer.rts_payload = peer.eager_limit;
    for (std::uint32_t k = 0; k < peer.rails.size(); ++k) {
      const Route& route = peer.rails[k];
      peer.route_of_path[route.path_index] = static_cast<std::int32_t>(k);
      peer.eager_limit = std::min(peer.eager_limit, route.eager_limit);
      peer.rts_payload = std::min(peer.rts_payload, route.max_payload);
      max_payload = std::max(max_payload, route.max_payload);
      max_eager_ = std::max(max_eager_, route.eager_limit);
    }
    peer.single_copy = peer.rails.size() == 1 && peer.rails[0].single_copy;
    peer.tracking = config_.reliability == Reliability::force ||
                    (config_.reliability == Reliability::automatic && !peer.reliable_routes);
    any_tracking_ = any_tracking_ || peer.tracking;
  }
  for (const auto& p : paths_) {
    header_checked_.push_back(!p->info().reliable || config_.reliability == Reliability::force ? 1 : 0);
  }
  for (Peer& peer : peers_) {
    peer.short_frames = !peer.tracking && peer.rails.size() == 1 && header_checked_[peer.rails[0].path_index] == 0;
  }
  expect_bulk(false);  // no receive waits for bulk data yet
  limits_.job_key = id_.job_key;
  limits_.world_size = id_.size;
  limits_.my_rank = id_.rank;
  limits_.max_payload = static_cast<std::uint32_t>(max_payload);
}

EngineCore::~EngineCore() = default;

void EngineCore::set_peer_pid(std::uint32_t peer, std::int64_t pid) { peers_.at(peer).pid = pid; }

// ---------------------------------------------------------------------------------------------------
// Sending

frag::FrameHeader EngineCore::header_for(Peer& peer, frag::FrameType type) noexcept {
  frag::FrameHeader h;
  h.type = type;
  h.job_key = id_.job_key;
  h.source = id_.rank;
  h.destination = peer.rank;
  return h;
}

void EngineCore::send_frame(Peer& peer, std::uint32_t route_index, frag::FrameHeader& h, const Payload& payload,
                            bool bulk) {
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
      if (!spare_frames_.empty()) {
        keep->bytes = std::move(spare_frames_.back());
        spare_frames_.pop_back();
      }
      keep->range = {h.seq_first, h.seq_first + h.seq_count - 1};
      keep->sent_at = Clock::now();
      keep->route = route_index;
      keep->bulk = bulk;
    }
  }
  OutgoingFrame frame(h, payload, peer.tracking ? config_.checksum : frag::ChecksumKind::none, bulk,
                      header_checked_[route.path_index] != 0);
  ++counters_.frames_sent;
  ++route.counters.frames_sent;
  route.counters.bytes_sent += frame.frame_size();
  counters_.bytes_sent += frame.frame_size();
  base::Status sent;
  if (keep != nullptr) {
    // The copy kept for retransmission is the frame itself, built before the path sees it: a path may
    // lose a frame without ever writing it.
    keep->bytes.resize(frame.frame_size());
    frame.write(keep->bytes);
    route.in_flight += keep->bytes.size();
    ++route.frames_in_flight;
    StoredFrame stored(keep->bytes, bulk);
    sent = route.path->send(peer.rank, stored);
  } else {
    sent = route.path->send(peer.rank, frame);
  }
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
  send_frame(peer, route, h, Payload::of(r, offset, len), bulk);
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
  if (!goes_eager(peers_[static_cast<std::uint32_t>(comm.world_rank_of(dest))], bytes, mode)) return false;
  // Never in the table: an eager message's frames name no request.
  Request r;
  Peer& peer = prepare_send(r, comm, buf, bytes, dest, tag, mode);
  send_whole_eager(peer, r);
  return true;
}

void EngineCore::send_whole_eager(Peer& peer, Request& r) {
  // short_frames: the peer has exactly one route. A message in pieces goes as DATA, gathered.
  if (!peer.short_frames || r.layout != nullptr || r.bytes > peer.rails[0].max_payload ||
      peer.rails[0].state != RailState::up) {
    send_fragments(peer, r, 0, r.bytes);
    return;
  }
  Route& route = peer.rails[0];
  const frag::ShortHeader h{id_.rank, r.context, r.tag, static_cast<std::uint32_t>(r.bytes), r.msg_seq};
  ShortFrame frame(h, r.send_buf);
  ++counters_.frames_sent;
  ++route.counters.frames_sent;
  route.counters.bytes_sent += frame.frame_size();
  counters_.bytes_sent += frame.frame_size();
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
  Request* r = requests_.allocate(RequestKind::send);
  Peer& peer = prepare_send(*r, comm, buf, bytes, dest, tag, mode);
  r->layout = layout;
  if (goes_eager(peer, bytes, mode)) {
    send_whole_eager(peer, *r);
    complete(r);
    return r;
  }

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
      bytes >= std::max(config_.single_copy_min, kSingleCopyDescriptorSize)) {
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
  const std::size_t first = std::min(bytes, peer.rts_payload);
  h.flags |= frag::fragment_position_flags(0, first, bytes);
  h.payload_length = static_cast<std::uint32_t>(first);
  r->next_offset = first;
  r->send_state = SendState::awaiting_cts;
  send_frame(peer, h, Payload::of(*r, 0, first));
  return r;
}

// Streams rendezvous data only while the rail takes frames without queueing them (shared memory: the
// message moves through the FIFOs as the receiver drains them instead of piling up in overflow buffers)
// and, where frames are acknowledged, while the rail's window has room.
bool EngineCore::push_streams() {
  bool did = false;
  for (std::size_t i = 0; i < streaming_.size();) {
    Request* r = streaming_[i];
    Peer& peer = peers_[r->peer];
    while (r->next_offset < r->bytes) {
      const std::uint32_t index = pick_route(peer);
      const Route& route = peer.rails[index];
      if (route.path->has_queued_frames() ||
          (peer.tracking && (route.in_flight >= config_.window || route.frames_in_flight >= config_.window_frames))) {
        break;
      }
      const std::size_t len = std::min(r->bytes - r->next_offset, route.max_payload);
      send_fragment(peer, *r, index, r->next_offset, len);
      r->next_offset += len;
      did = true;
    }
    if (r->next_offset == r->bytes) {
      streaming_[i] = streaming_.back();
      streaming_.pop_back();
      complete(r);
    } else {
      ++i;
    }
  }
  return did;
}

// ---------------------------------------------------------------------------------------------------
// Receiving

Request* EngineCore::irecv(const CommView& comm, void* buf, std::size_t capacity, int source, int tag) {
  return start_receive(comm, buf, capacity, nullptr, source, tag);
}

Request* EngineCore::irecv_pieces(const CommView& comm, void* base, const frag::PiecesLayout& layout, int source,
                                  int tag) {
  return start_receive(comm, base, layout.packed_size(), &layout, source, tag);
}

Request* EngineCore::start_receive(const CommView& comm, void* buf, std::size_t capacity,
                                   const frag::PiecesLayout* layout, int source, int tag) {
  Request* r = requests_.allocate(RequestKind::receive);
  r->comm = comm;
  r->recv_buf = static_cast<std::byte*>(buf);
  r->capacity = capacity;
  r->layout = layout;
  const match::Pattern pattern = pattern_for(comm, source, tag);
  auto taken = matcher_.post_receive(pattern, reinterpret_cast<match::ReceiveHandle>(r));
  if (!taken) {
    base::logger().error("irecv: {}", taken.status().to_string());
    abort(1, "internal error: the matcher refused a receive the MPI layer accepted");
  }
  if (*taken) {
    auto* message = reinterpret_cast<IncomingMessage*>((*taken)->handle);
    on_matched(r, message);
    finish_message_if_complete(message);
  }
  return r;
}

bool EngineCore::iprobe(const CommView& comm, int source, int tag, Completion* out) {
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

void EngineCore::on_frame(std::span<const std::byte> frame) noexcept {
  ++counters_.frames_received;
  if (frag::is_short_frame(frame)) {
    handle_short_frame(frame);
    return;
  }
  frag::FrameHeader h;
  if (!frag::try_decode(frame, limits_, h)) [[unlikely]] {
    // Refused: decode() again, slowly, to learn why.
    auto decoded = frag::decode(frame, limits_);
    if (decoded.code() == base::Errc::wrong_job) {
      ++counters_.dropped_wrong_job;
    } else {
      ++counters_.dropped_malformed;
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
  return true;
}

// Verified bytes of a whole message into a receive: as much as fits, into its buffer or its pieces.
void EngineCore::copy_into_receive(Request& r, std::span<const std::byte> bytes) {
  const std::size_t fits = std::min(bytes.size(), r.capacity);
  if (fits == 0) return;
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

void EngineCore::handle_short_frame(std::span<const std::byte> frame) {
  frag::ShortHeader s;
  // Only a trusted path carries short frames, and only from a peer that sends them on it.
  if (limits_.verify_header_checksum || !frag::try_decode_short(frame, limits_, s) || !peers_[s.source].short_frames ||
      s.payload_length > max_eager_) [[unlikely]] {
    ++counters_.dropped_malformed;
    if (limits_.verify_header_checksum) {
      base::logger().debug("dropped a short frame from a path that does not carry them");
    } else {
      auto decoded = frag::decode_short(frame, limits_);
      base::logger().debug("dropped a short frame: {}",
                           decoded ? "its peer does not send short frames, or it is too long" : decoded.status().to_string());
    }
    return;
  }
  Peer& peer = peers_[s.source];
  counters_.bytes_received += frame.size();
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

void EngineCore::handle_frame(const frag::FrameHeader& h, std::span<const std::byte> payload) {
  using frag::FrameType;
  Peer& peer = peers_[h.source];
  counters_.bytes_received += frag::kHeaderSize + payload.size();
  Route* arrived_on = arrival_route(peer);
  if (arrived_on != nullptr) {
    ++arrived_on->counters.frames_received;
    arrived_on->counters.bytes_received += frag::kHeaderSize + payload.size();
  }
  if ((h.flags & frag::kFlagAckValid) != 0) handle_ack(peer, h.lirs, h.lids);
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
        ++counters_.dropped_bad_payload;
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
          r->send_state != SendState::awaiting_cts) {
        ++counters_.dropped_malformed;
        return;
      }
      accept_sequenced(peer, h, /*delivered=*/true);
      r->receiver_cookie = h.receiver_request;
      if (r->next_offset < r->bytes) {
        r->send_state = SendState::streaming;
        streaming_.push_back(r);
        push_streams();
      } else {
        complete(r);
      }
      break;
    }
    case FrameType::fin: {
      Request* r = requests_.find(h.sender_request, RequestKind::send);
      if (r == nullptr || r->peer != h.source || r->msg_seq != h.message_seq ||
          r->send_state != SendState::awaiting_fin) {
        ++counters_.dropped_malformed;
        return;
      }
      accept_sequenced(peer, h, /*delivered=*/true);
      complete(r);
      break;
    }
    default:
      break;
  }
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
  if (peer.frames_unacked++ == 0) peer.ack_owed_since = Clock::now();
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
  // into the receive buffer (the payload is verified first, so a bad one takes the slow way below).
  if (whole && !peer.tracking && h.type == FrameType::data && (h.flags & frag::kFlagAckRequested) == 0 &&
      h.message_length <= max_eager_ &&
      (h.checksum_kind == frag::ChecksumKind::none ||
       frag::checksum(h.checksum_kind, payload.data(), payload.size()) == h.payload_checksum)) {
    if (deliver_whole_in_order(h.source, h.context, h.tag, h.message_seq, payload)) return;
  }
  const bool indexed = peer.tracking || !whole;
  auto it = indexed ? peer.incoming.find(h.message_seq) : peer.incoming.end();
  if (it == peer.incoming.end()) {
    // An eager message may be buffered whole before it matches; anything larger must come as an RTS.
    if (h.type == FrameType::data && h.message_length > max_eager_) {
      ++counters_.dropped_malformed;
      return;
    }
    const bool single_copy = (h.flags & frag::kFlagSingleCopy) != 0;
    if (single_copy && payload.size() != kSingleCopyDescriptorSize) {
      ++counters_.dropped_malformed;
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
      ++(s.code() == base::Errc::duplicate ? counters_.duplicates : counters_.dropped_malformed);
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
      ++counters_.dropped_malformed;
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
    if (!delivered && peer.tracking) m->buffered.push_back({h.seq_first, h.seq_first + h.seq_count - 1});
    m->arrived += added;
  } else {
    accept_sequenced(peer, h, m->receive != nullptr);
    if (m->receive == nullptr && peer.tracking) m->buffered.push_back({h.seq_first, h.seq_first + h.seq_count - 1});
  }
  in_hand_ = nullptr;
  finish_message_if_complete(m);
}

void EngineCore::handle_rendezvous_data(Peer& peer, const frag::FrameHeader& h,
                                        std::span<const std::byte> payload) {
  Request* r = requests_.find(h.receiver_request, RequestKind::receive);
  IncomingMessage* m = r != nullptr ? r->message : nullptr;
  if (m == nullptr || m->peer != h.source || m->msg_seq != h.message_seq || m->length != h.message_length ||
      h.type != frag::FrameType::data) {
    ++counters_.dropped_malformed;
    return;
  }
  if (!place_payload(*m, h, payload)) {
    reject_payload(peer, h);
    return;
  }
  m->arrived += accept_sequenced(peer, h, /*delivered=*/true);
  finish_message_if_complete(m);
}

void EngineCore::reject_payload(Peer& peer, const frag::FrameHeader& h) {
  ++counters_.dropped_bad_payload;
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
  const std::size_t offset = h.fragment_offset;
  const std::size_t len = payload.size();
  if (m.receive != nullptr) {
    Request& r = *m.receive;
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
      return frag::copy_and_verify(h.checksum_kind, r.recv_buf + offset, payload.data(), len,
                                   h.payload_checksum);
    }
    // Truncated receive: what does not fit is still checksummed, so corruption is still caught.
    frag::Checksummer sum(h.checksum_kind);
    sum.copy(r.recv_buf + offset, payload.data(), fits);
    sum.update(payload.data() + fits, len - fits);
    return sum.value() == h.payload_checksum;
  }
  if (m.early.size() < offset + len) m.early.resize(offset + len);
  return frag::copy_and_verify(h.checksum_kind, m.early.data() + offset, payload.data(), len,
                               h.payload_checksum);
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
    on_matched(reinterpret_cast<Request*>(e.receive), message);
    finish_message_if_complete(message);
  }
  events_.clear();
}

void EngineCore::on_matched(Request* r, IncomingMessage* m) {
  r->message = m;
  m->receive = r;
  Peer& peer = peers_[m->peer];
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
  if (m->single_copy) {
    const std::size_t len = std::min<std::size_t>(m->length, r->capacity);
    auto read = env_.read_peer_memory ? read_into_receive(*r, m->remote_pid, m->remote_address, len)
                                      : base::Result<std::size_t>(base::Errc::unsupported, "no single copy");
    if (!read || *read != len) {
      abort(1, "cannot read a message from rank " + std::to_string(m->peer) + "'s memory: " +
                   read.status().to_string());
    }
    m->arrived = m->length;
    send_control(peer, frag::FrameType::fin, m->msg_seq, m->sender_cookie, 0);
  } else {
    if (bulk_receives_++ == 0) expect_bulk(true);
    send_control(peer, frag::FrameType::cts, m->msg_seq, m->sender_cookie, r->cookie());
  }
}

void EngineCore::finish_message_if_complete(IncomingMessage* m) {
  if (m == in_hand_ || m->receive == nullptr || m->arrived < m->length) return;
  Request* r = m->receive;
  r->message = nullptr;
  if (m->rendezvous && !m->single_copy && --bulk_receives_ == 0) expect_bulk(false);
  const std::uint32_t peer = m->peer;
  const std::int32_t tag = m->tag;
  const std::uint64_t length = m->length;
  release_message(m);
  complete_receive(r, peer, tag, length);
}

void EngineCore::expect_bulk(bool expected) noexcept {
  for (auto& p : paths_) p->expect_bulk(expected);
}

void EngineCore::complete_receive(Request* r, std::uint32_t peer, std::int32_t tag, std::uint64_t length) {
  r->completion = Completion{};
  r->completion.source = r->comm.comm_rank_of(static_cast<int>(peer));
  r->completion.tag = tag;
  r->completion.bytes = std::min<std::size_t>(length, r->capacity);
  r->completion.truncated = length > r->capacity;
  complete(r);
}

// Acknowledgements, retransmission and rebinding: engine_reliability.cpp; rail health: rail_set.cpp.

// ---------------------------------------------------------------------------------------------------
// Requests and progress

void EngineCore::complete(Request* r) {
  r->complete = true;
  if (r->released) requests_.free(r);
}

bool EngineCore::is_complete(const Request* r, Completion* out) const noexcept {
  if (!r->complete) return false;
  if (out != nullptr) *out = r->completion;
  return true;
}

void EngineCore::cancel(Request* r) {
  if (r->complete || r->kind != RequestKind::receive || r->message != nullptr) return;
  if (matcher_.cancel_receive(reinterpret_cast<match::ReceiveHandle>(r))) {
    r->completion = Completion{};
    r->completion.cancelled = true;
    complete(r);
  }
}

void EngineCore::release(Request* r) {
  if (r->complete) {
    requests_.free(r);
  } else {
    r->released = true;
  }
}

bool EngineCore::progress() {
  bool did = false;
  if (env_.control_pending != nullptr && env_.control_pending->load(std::memory_order_relaxed)) [[unlikely]] {
    serve_control();
  }
  for (std::uint32_t i = 0; i < paths_.size(); ++i) {
    polling_path_ = i;
    limits_.verify_header_checksum = header_checked_[i] != 0;
    did = paths_[i]->poll(*this, kPollBudget) > 0 || did;
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
  return did;
}

void EngineCore::idle(std::uint64_t idle_rounds) noexcept {
  if (idle_rounds < config_.spin_rounds) {
    __builtin_ia32_pause();
  } else {
    ::sched_yield();  // oversubscribed hosts: let the rank we wait for run
  }
}

base::Status EngineCore::finalize() {
  // 1. Everything this rank sent is safe at its peer: streams pushed out, nothing left queued in a path,
  //    and every sequenced frame received (verified and held in the peer's memory; whether the program
  //    there received the message is its own business, and a send nobody receives must not hang us).
  //    Frames not received yet are resent as usual, and their copies make the peer ACK again.
  auto all_sent_safe = [&] {
    if (!streaming_.empty()) return false;
    for (auto& p : paths_) {
      if (p->has_queued_frames()) return false;
    }
    for (const Peer& peer : peers_) {
      for (std::size_t i = peer.received_prefix; i < peer.retained.size(); ++i) {
        if (!peer.retained[i].received) return false;
      }
    }
    return true;
  };
  progress_until(all_sent_safe);
  // 2. Every rank got there: a fence through the launcher, whose TCP channel cannot lose the last word
  //    (two ranks agreeing over a lossy path cannot both know the other is done, so one would leave while
  //    the other still waits for its message or ACK). Progress continues meanwhile: a peer still in step 1
  //    needs our ACKs. Once the fence completes nobody needs anything from anybody, and the paths go.
  base::Status fenced;
  if (env_.fence_begin && (fenced = env_.fence_begin())) {
    progress_until([&] {
      auto tested = env_.fence_test();
      if (!tested) fenced = tested.status();
      return !tested || *tested;
    });
  }
  if (config_.report == ReportFormat::text) std::fprintf(stderr, "%s", report_text(stats()).c_str());
  if (config_.report == ReportFormat::json) std::fprintf(stderr, "ftmpi stats: %s\n", report_json(stats()).c_str());
  if (!fenced) return fenced;
  return env_.finalize ? env_.finalize() : base::Status{};
}

void EngineCore::abort(int code, std::string_view message) {
  if (env_.abort) env_.abort(code, message);
  base::logger().critical("{}", message);
  std::_Exit(code == 0 ? 1 : code);
}

}  // namespace ftmpi::engine

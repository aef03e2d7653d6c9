// Receiving into place: the engine's side of FrameSink::place (LA-MPI's "peek the header, then receive
// the payload straight into place").
//
// A path that can read a frame's header before its payload (UDP's long socket, with MSG_PEEK) shows it
// to place() with the frame's length. Rendezvous DATA after the CTS names the receive it is for
// (receiver_request), so its payload's destination is known from the header alone: the receive's buffer
// at fragment_offset. The path then has the kernel write the payload there, and on_frame_parts() runs the
// usual handling, in which place_payload() sees the payload already at its destination and only
// verifies its checksum. One copy fewer than receiving into the path's ring and copying out.
//
// What may be overwritten. The kernel writes whatever the datagram holds, corrupt or not, before anyone
// checked it. So place() offers only bytes nothing depends on yet: a matched receive's buffer, inside
// its capacity, in a byte range whose sequence numbers have not arrived at all (Coverage::none of the
// peer's received list). A duplicate, or a resend overlapping bytes already received, is declined and
// takes the normal way (where it is dropped as a duplicate, or copied after the checks). A payload that
// fails its checksum in place is dropped and NACKed exactly as before; the garbage lies in bytes not yet
// received, which the resend overwrites before the receive can complete (it completes only once every
// byte was received with a good checksum). Without reliability (engine.reliability=off) nothing is
// tracked, so nothing is checked beyond the receive and its capacity, as on the normal way.
//
// Everything place() relies on is re-checked by on_frame_parts() through the normal handling, so a path
// that got it wrong can cost a copy, never a wrong byte counted as delivered.
#include "engine_core.hpp"
#include "ftmpi/base/log.hpp"

namespace ftmpi::engine {

std::span<std::byte> EngineCore::place(std::span<const std::byte> header, std::size_t frame_length) noexcept {
  frag::FrameHeader h;
  // With integrity=mac nothing is placed: the header cannot be trusted before its payload was read.
  if (limits_.payload_mac && limits_.verify_header_checksum) return {};
  // A refused header is received as usual, and on_frame() counts and logs why.
  if (!frag::try_decode(header, frame_length, limits_, h)) return {};
  if (h.type != frag::FrameType::data || h.receiver_request == 0 || h.payload_length == 0) return {};
  Request* r = requests_.find(h.receiver_request, RequestKind::receive);
  IncomingMessage* m = r != nullptr ? r->message : nullptr;
  // The checks of handle_rendezvous_data: the receive matched this very message.
  if (m == nullptr || m->receive != r || !m->rendezvous || m->single_copy || m->peer != h.source ||
      m->msg_seq != h.message_seq || m->length != h.message_length) {
    return {};
  }
  // A truncated receive keeps only what fits, and a receive in pieces scatters: such frames are copied.
  if (r->layout != nullptr || h.fragment_offset > r->capacity || h.payload_length > r->capacity - h.fragment_offset) return {};
  const Peer& peer = peers_[h.source];
  if (peer.tracking) {
    const PeerGuard peer_lock(*this, h.source);
    const auto coverage = peer.in.received().coverage(h.seq_first, h.seq_first + h.seq_count - 1);
    if (!coverage || *coverage != seq::Coverage::none) return {};
  }
  return {r->recv_buf + h.fragment_offset, h.payload_length};
}

void EngineCore::on_frame_parts(std::span<const std::byte> header, std::span<const std::byte> payload) noexcept {
  ++counters_.frames_received;
  frag::FrameHeader h;
  // The header place() accepted, decoded again: the path owes us nothing, so nothing is taken on trust.
  if (!frag::try_decode(header, header.size() + payload.size(), limits_, h)) [[unlikely]] {
    count_refused(counters_.dropped_malformed);
    base::logger().debug("dropped a frame received into place: {}",
                         frag::decode(header, header.size() + payload.size(), limits_).status().to_string());
    return;
  }
  handle_frame(h, payload);
}

}  // namespace ftmpi::engine

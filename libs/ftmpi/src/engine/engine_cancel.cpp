// MPI_Cancel of a send. An eager send completes as soon as its frames are handed to a path, so there is
// nothing left to cancel (MPI allows a cancel to fail). A rendezvous send waits for its receiver: an
// MPI_Issend, or a message above the eager limit, whose receive is never posted would keep MPI_Wait
// waiting forever, which MPI forbids once the send is marked for cancellation. So the sender asks the
// receiver (CANCEL, sequenced like every control frame, hence reliable); the receiver withdraws the
// message from matching if no receive took it yet and answers (CANCEL_REPLY, withdrawn or not). The
// send then completes as cancelled, or goes on as before (its CTS or FIN comes, or came already).
//
// A cancel may overtake its RTS on another rail, or find it held ahead of sequence: the receiver parks
// it and answers once the message is released to matching. Only a rendezvous from the send the cancel
// names (its cookie) whose first frame was accepted can be withdrawn; anything else is refused as
// malformed, so a forged cancel cannot take an eager message away from its receive.
#include "engine_core.hpp"
#include "ftmpi/base/log.hpp"

namespace ftmpi::engine {

void EngineCore::cancel_send(Request& r) {
  if (r.cancel_asked || (r.send_state != SendState::awaiting_cts && r.send_state != SendState::awaiting_fin)) return;
  Peer& peer = peers_[r.peer];
  if (peer.lost) return;  // the send fails as lost (forget_lost_peers)
  r.cancel_asked = true;
  frag::FrameHeader h = header_for(peer, frag::FrameType::cancel);
  h.context = r.context;
  h.tag = r.tag;
  h.message_seq = r.msg_seq;
  h.sender_request = r.cookie();
  send_frame(peer, h, {});
}

void EngineCore::handle_cancel(Peer& peer, const frag::FrameHeader& h) {
  const ParkedCancel cancel{h.message_seq, h.context, h.tag, h.sender_request};
  const CancelAnswer answer = answer_cancel(peer, cancel);
  // Beyond the matcher's window (a hole behind it): not taken, so not acknowledged either; the sender's
  // retransmission brings it back once the hole has filled, as for an RTS so far ahead.
  if (answer == CancelAnswer::ahead) {
    ++counters_.dropped_ahead;
    return;
  }
  accept_sequenced(peer, h, /*delivered=*/true);
  if (answer != CancelAnswer::later) return;
  // One parked cancel per message the peer may have out of order (the matcher's window bounds msg_seq).
  for (const ParkedCancel& parked : peer.parked_cancels) {
    if (parked.msg_seq == cancel.msg_seq) {
      drop_malformed("a second cancel of one message", h);
      return;
    }
  }
  peer.parked_cancels.push_back(cancel);
}

EngineCore::CancelAnswer EngineCore::answer_cancel(Peer& peer, const ParkedCancel& cancel) {
  IncomingMessage* seen = nullptr;
  bool refused = false;
  const auto may_take = [&](const match::Envelope& envelope) {
    seen = reinterpret_cast<IncomingMessage*>(envelope.handle);
    refused = !seen->rendezvous || seen->sender_cookie != cancel.sender_cookie || seen->receive != nullptr;
    return !refused && seen->first_accepted;
  };
  match::Envelope taken{};
  const auto outcome = matcher_.withdraw(peer.rank, cancel.msg_seq, cancel.context, cancel.tag, may_take, &taken);
  if (!outcome && outcome.code() == base::Errc::out_of_range) return CancelAnswer::ahead;
  if (!outcome || refused) {
    count_refused(counters_.dropped_malformed);
    base::logger().debug("refused a cancel of message {} from rank {}: {}", cancel.msg_seq, peer.rank,
                         outcome ? std::string("not a rendezvous of that send") : outcome.status().to_string());
    return CancelAnswer::refused;
  }
  using Withdrawal = match::Matcher::Withdrawal;
  // Not released, or its RTS waits for a resend (its first copy failed its checksum): ask again later.
  if (*outcome == Withdrawal::not_released || *outcome == Withdrawal::kept) return CancelAnswer::later;
  frag::FrameHeader reply = header_for(peer, frag::FrameType::cancel_reply);
  reply.message_seq = cancel.msg_seq;
  reply.sender_request = cancel.sender_cookie;
  if (*outcome == Withdrawal::withdrawn) {
    auto* m = reinterpret_cast<IncomingMessage*>(taken.handle);
    // Its bytes count as delivered (the sender may forget its frames) and its eager bytes as consumed
    // (the sender gets its credit back), as if a receive had taken it.
    if (peer.tracking && !m->buffered.empty()) {
      for (const seq::Range& range : m->buffered) (void)peer.in.on_delivered(range);
      owe_ack(peer);
    }
    const std::uint64_t credit = m->credit;
    release_message(m);
    credit_consumed(peer, credit);
    ++counters_.messages_withdrawn;
    reply.flags |= frag::kFlagWithdrawn;
  }
  send_frame(peer, reply, {});
  return CancelAnswer::answered;
}

// Called when a frame of the peer's messages was handled: a parked cancel can only be answered once its
// message was released to matching or its RTS accepted, which only such a frame does.
void EngineCore::retry_parked_cancels(Peer& peer) {
  std::erase_if(peer.parked_cancels,
                [&](const ParkedCancel& cancel) { return answer_cancel(peer, cancel) != CancelAnswer::later; });
}

void EngineCore::handle_cancel_reply(Peer& peer, const frag::FrameHeader& h) {
  // Accepted whatever it names: a reply that the send no longer waits for (its CTS came first, it
  // completed and was freed) is still a frame of the sequence, and must not be resent forever.
  accept_sequenced(peer, h, /*delivered=*/true);
  const bool withdrawn = (h.flags & frag::kFlagWithdrawn) != 0;
  Request* r = requests_.find(h.sender_request, RequestKind::send);
  if (r == nullptr || r->peer != h.source || r->msg_seq != h.message_seq || !r->cancel_asked || r->complete) {
    if (withdrawn) drop_malformed("a withdrawal for no send that asked for one", h);
    return;
  }
  r->cancel_asked = false;
  if (!withdrawn) return;  // a receive took it first: the send goes on
  if (r->send_state != SendState::awaiting_cts && r->send_state != SendState::awaiting_fin) {
    drop_malformed("a withdrawal of a send its receiver matched", h);
    return;
  }
  ++counters_.sends_cancelled;
  // Its RTS may still be kept by reference to the buffer the program gets back now: copied first.
  if (r->frames_lent != 0) take_back_lent_frames(*r);
  r->completion = Completion{};
  r->completion.cancelled = true;
  complete(r);
}

}  // namespace ftmpi::engine

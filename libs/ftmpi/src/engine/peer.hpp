// What the engine keeps per peer: its rails, its sequence state both ways, the frames it has not
// acknowledged yet (kept whole for resending), and the records of its messages still arriving.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <memory>
#include <span>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "ftmpi/seq/peer_sequence.hpp"
#include "eager_credit.hpp"
#include "ftmpi/seq/range_list.hpp"
#include "rail_set.hpp"
#include "request.hpp"

namespace ftmpi::engine {

// A peer's request to withdraw one of its messages (frag::FrameType::cancel).
struct ParkedCancel {
  std::uint64_t msg_seq = 0;
  std::uint32_t context = 0;
  std::int32_t tag = 0;
  std::uint64_t sender_cookie = 0;
};

struct IncomingMessage {
  std::uint32_t peer = 0;
  std::uint32_t context = 0;
  std::int32_t tag = 0;
  std::uint64_t msg_seq = 0;
  std::uint64_t length = 0;
  std::uint64_t arrived = 0;          // payload bytes verified so far (delivered or buffered)
  seq::Range first_part{};            // byte sequence range of the eager fragments or of the RTS
  bool rendezvous = false;
  bool synchronous = false;
  bool single_copy = false;
  bool indexed = false;               // listed in its peer's `incoming`
  bool first_accepted = false;        // its first frame's payload verified and its range received
  std::uint64_t credit = 0;           // eager bytes it holds against its peer's credit (eager_credit.hpp)
  std::int64_t remote_pid = 0;        // single copy
  std::uint64_t remote_address = 0;   // single copy
  std::uint64_t split = 0;            // split copy: where the sender's part begins (0: not split)
  bool front_read = false;            // split copy: the receiver's part [0, split) is in
  std::uint64_t sender_cookie = 0;
  Request* receive = nullptr;
  std::vector<std::byte> early;       // payload that arrived before the match, by message offset
  std::vector<seq::Range> buffered;   // byte ranges in `early`: delivered once the message matches
};

// A frame's bytes, kept for resending. Unlike a vector it never zero-fills what the frame overwrites,
// and the engine recycles them, so keeping a frame costs no allocation in the steady state.
class FrameBytes {
 public:
  FrameBytes() = default;
  // A moved-from one is empty, not a capacity without memory.
  FrameBytes(FrameBytes&& other) noexcept { *this = std::move(other); }
  FrameBytes& operator=(FrameBytes&& other) noexcept {
    data_ = std::move(other.data_);
    size_ = std::exchange(other.size_, 0);
    capacity_ = std::exchange(other.capacity_, 0);
    return *this;
  }
  std::size_t capacity() const noexcept { return capacity_; }
  std::byte* data() noexcept { return data_.get(); }
  const std::byte* data() const noexcept { return data_.get(); }
  std::size_t size() const noexcept { return size_; }
  void resize(std::size_t n) {
    if (n > capacity_) {
      data_ = std::make_unique_for_overwrite<std::byte[]>(n);
      capacity_ = n;
    }
    size_ = n;
  }
  operator std::span<std::byte>() noexcept { return {data_.get(), size_}; }
  operator std::span<const std::byte>() const noexcept { return {data_.get(), size_}; }

 private:
  std::unique_ptr<std::byte[]> data_;
  std::size_t size_ = 0;
  std::size_t capacity_ = 0;
};

// A frame kept for resending: whole in `bytes`, or, for rendezvous data from a contiguous send buffer
// (EngineCore::send_fragment), by reference: its header in `bytes` and its payload where it lies in the
// sender's buffer (`payload`), whose send completes only once the peer has received every such frame
// (`lender`). Both are given up once the peer has it.
struct RetainedFrame {
  seq::Range range{};
  FrameBytes bytes;
  std::span<const std::byte> payload;
  Request* lender = nullptr;
  Clock::time_point sent_at{};
  std::uint32_t attempts = 1;
  std::uint32_t route = 0;       // index in Peer::rails it was last sent on
  bool bulk = false;             // rendezvous data after CTS (a path's bulk lane)
  bool received = false;         // the peer has it (LIRS or a selective ACK): never resent, not in flight

  std::size_t frame_size() const noexcept { return bytes.size() + payload.size(); }
};

struct Peer {
  Peer(std::uint32_t r, const RailSet::Context* rails_context) : rank(r), rails(r, rails_context) {}
  // The engine reserves its peers up front and never moves them; a vector needs this to reserve.
  Peer(Peer&&) noexcept = default;

  std::uint32_t rank = 0;
  RailSet rails;                            // its routes: rail health, probes, the choice of rail
  std::vector<std::int32_t> route_of_path;  // by path index: index in `rails`, or -1
  bool reliable_routes = true;  // every route reliable: sequence tracking can be skipped
  bool tracking = false;        // reliability machinery on for this peer
  std::int64_t pid = 0;
  std::size_t eager_limit = 0;  // the smallest of its routes': any route can carry any eager message
  std::size_t rts_payload = 0;  // first fragment of a rendezvous: fits every route, so never re-cut
  bool single_copy = false;
  EagerCredit credit;  // both ways: what it granted us, what we granted it
  // Its one route is a trusted path (shared memory, reliability not forced): whole eager messages that
  // fit one frame go as short frames (frag::ShortHeader), and short frames from it are accepted.
  bool short_frames = false;
  bool rebind_needed = false;    // frames sit on a down route, or in resend_now
  // Every rail to it failed: unreachable for the rest of the job (EngineCore::no_rail_left).
  bool lost = false;
  bool forgotten = false;  // its state torn down (EngineCore::forget_lost_peers)
  std::string lost_reason;
  std::vector<std::uint64_t> resend_now;  // first sequence numbers of frames whose send was refused

  // Our stream to this peer: its byte and message numbering.
  seq::SendSequence out;
  std::deque<RetainedFrame> retained;  // in sequence order
  std::size_t received_prefix = 0;     // retained[0, received_prefix) are covered by acked_lirs
  std::uint64_t acked_lirs = 0;
  std::uint64_t acked_lids = 0;
  // The newest ACK fields from the peer (checked: they name bytes sent), and when the frame that raised
  // its LIRS arrived. Ahead of acked_* while ack_deferred: not handled yet (EngineCore::take_ack).
  std::uint64_t heard_lirs = 0;
  std::uint64_t heard_lids = 0;
  Clock::time_point heard_lirs_at{};
  bool ack_deferred = false;

  // Its stream to us: what arrived, and what reached the user.
  seq::ReceiveSequence in;
  std::uint32_t frames_unacked = 0;
  std::uint64_t last_received_seq = 0;  // first number of the latest frame accepted: its block is SACKed
  Clock::time_point ack_owed_since{};
  // While a frame from this peer is handled (under its lock): the clock as first read for it, or zero.
  // Its ACK fields and the ACK it is then owed take one reading (EngineCore::frame_time).
  bool handling_frame = false;
  Clock::time_point frame_clock{};
  // Records that later frames must find, by msg_seq: messages of several frames, and every message
  // when reliability is on (a retransmitted RTS must find its record).
  std::unordered_map<std::uint64_t, IncomingMessage*> incoming;
  // Its cancels of messages not released to matching yet (not arrived, held ahead of sequence, or an
  // RTS waiting for its resend): answered once they are (EngineCore::retry_parked_cancels).
  std::vector<ParkedCancel> parked_cancels;
};

}  // namespace ftmpi::engine

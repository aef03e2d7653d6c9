// The engine's core: protocols and reliability over whatever paths it is given.
//
// Protocols (per message, chosen by the sender):
//   eager        length <= the route's eager limit and not synchronous: DATA fragments; the send
//                completes once they are handed to the path.
//   rendezvous   larger, or synchronous: an RTS carrying the first fragment; the receiver matches it
//                and answers CTS naming its request; the sender then streams the rest as DATA
//                frames addressed to that request, as fast as the path takes them (no unbounded
//                overflow queues). A synchronous send completes on the CTS.
//   single copy  a rendezvous on a path that can read the peer's memory: the RTS carries {pid,
//                address}; the receiver reads the message with process_vm_readv straight into the
//                user buffer and answers FIN.
//
// Reliability (DESIGN.md section 2), on for a peer when a route to it is unreliable, or forced by
// engine.reliability=force:
//   - every frame but ACK/NACK/probe takes byte sequence numbers of its ordered process pair;
//   - the receiver verifies the payload checksum while copying it out of the frame (into the user
//     buffer, or a buffer for an unmatched message) and only then records the range as *received*;
//     a bad payload is dropped and NACKed; a range already received is a duplicate: dropped, re-ACKed;
//   - bytes count as *delivered* once they are in the user's buffer; ACKs carry LIRS/LIDS, piggybacked
//     on every frame to the peer, or sent alone after engine.ack.every frames or engine.ack.delay;
//   - the sender keeps a copy of every frame until LIDS covers it; a frame not covered in time is
//     resent with truncated exponential back-off (a frame already covered by LIRS, i.e. received but
//     waiting for its receive to be posted, gets a longer timer instead of a resend).
// Invariants: delivered is a subset of received; a message completes exactly once; a cookie from the
// wire is looked up in the request table, never dereferenced.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <unordered_map>
#include <vector>

#include "engine.hpp"
#include "ftmpi/frag/checksum.hpp"
#include "ftmpi/frag/wire.hpp"
#include "ftmpi/match/matcher.hpp"
#include "ftmpi/path/path.hpp"
#include "ftmpi/seq/range_list.hpp"
#include "request.hpp"

namespace ftmpi::engine {

using Clock = std::chrono::steady_clock;

enum class Reliability : std::uint8_t { automatic, force, off };

// The engine's settings, read from its parameter rows (params.hpp), where the defaults live.
struct EngineConfig {
  Reliability reliability{};
  frag::ChecksumKind checksum{};
  std::size_t shm_eager_limit = 0;
  std::size_t single_copy_min = 0;  // 0: never
  std::chrono::nanoseconds retransmit_min{};
  std::chrono::nanoseconds retransmit_max{};
  std::uint32_t ack_every = 0;
  std::chrono::nanoseconds ack_delay{};
  std::uint64_t spin_rounds = 0;
  std::uint64_t ahead_window = 0;

  static base::Result<EngineConfig> from(const base::ParamSet& params);
  // The defaults of every row (tests).
  static EngineConfig defaults();
};

struct Identity {
  std::uint32_t rank = 0;
  std::uint32_t size = 1;
  std::uint64_t job_key = 0;
};

// What the engine needs from its surroundings besides paths.
struct Environment {
  std::function<void(int code, std::string_view message)> abort;  // ends the job; must not return
  std::function<base::Status()> finalize;                        // tells the launcher we are done
  // Reads `len` bytes at `address` in process `pid` (single copy); empty when unavailable.
  std::function<base::Result<std::size_t>(std::int64_t pid, std::uintptr_t address, void* dst,
                                          std::size_t len)>
      read_peer_memory;
};

// Counters of frames the engine refused or repaired, for tests and ftpath.
struct EngineCounters {
  std::uint64_t frames_received = 0;
  std::uint64_t frames_sent = 0;
  std::uint64_t dropped_malformed = 0;    // decode refused it (truncated, bad header checksum, ...)
  std::uint64_t dropped_wrong_job = 0;
  std::uint64_t dropped_bad_payload = 0;  // payload checksum mismatch
  std::uint64_t duplicates = 0;
  std::uint64_t retransmits = 0;
  std::uint64_t acks_sent = 0;
  std::uint64_t nacks_sent = 0;
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
  std::int64_t remote_pid = 0;        // single copy
  std::uint64_t remote_address = 0;   // single copy
  std::uint64_t sender_cookie = 0;
  Request* receive = nullptr;
  std::vector<std::byte> early;       // payload that arrived before the match, by message offset
  std::vector<seq::Range> buffered;   // byte ranges in `early`: delivered once the message matches
};

struct Route {
  path::Path* path = nullptr;
  std::size_t max_payload = 0;
  std::size_t eager_limit = 0;
  bool single_copy = false;
};

struct RetainedFrame {
  seq::Range range{};
  std::vector<std::byte> bytes;
  Clock::time_point sent_at{};
  std::uint32_t attempts = 1;
};

struct Peer {
  std::uint32_t rank = 0;
  std::vector<Route> routes;
  bool reliable_routes = true;  // every route reliable: sequence tracking can be skipped
  bool tracking = false;        // reliability machinery on for this peer
  std::int64_t pid = 0;

  // Our stream to this peer.
  std::uint64_t next_byte_seq = 1;
  std::uint64_t next_msg_seq = 1;
  std::deque<RetainedFrame> retained;  // in sequence order
  std::uint64_t acked_lirs = 0;
  std::uint64_t acked_lids = 0;

  // Its stream to us.
  seq::RangeList received;
  seq::RangeList delivered;
  std::uint32_t frames_unacked = 0;
  Clock::time_point ack_owed_since{};
  // Records that later frames must find, by msg_seq: messages of several frames, and every message
  // when reliability is on (a retransmitted RTS must find its record).
  std::unordered_map<std::uint64_t, IncomingMessage*> incoming;
};

// The engine's own context for its finalize barrier.
inline constexpr std::uint32_t kFinalizeContext = 2;

class EngineCore final : public Engine, public path::FrameSink {
 public:
  EngineCore(Identity identity, EngineConfig config, std::vector<std::unique_ptr<path::Path>> paths,
             Environment environment);
  ~EngineCore() override;

  // Peer process ids, for single copy (wire-up learns them).
  void set_peer_pid(std::uint32_t peer, std::int64_t pid);

  int world_rank() const noexcept override { return static_cast<int>(id_.rank); }
  int world_size() const noexcept override { return static_cast<int>(id_.size); }
  std::uint32_t world_context() const noexcept override { return 0; }
  std::uint32_t self_context() const noexcept override { return 1; }

  Request* isend(const CommView& comm, const void* buf, std::size_t bytes, int dest, int tag,
                 SendMode mode) override;
  Request* irecv(const CommView& comm, void* buf, std::size_t capacity, int source, int tag) override;
  bool is_complete(const Request* request, Completion* out) const noexcept override;
  void cancel(Request* request) override;
  void release(Request* request) override;
  bool iprobe(const CommView& comm, int source, int tag, Completion* out) override;
  bool progress() override;
  base::Status finalize() override;
  [[noreturn]] void abort(int code, std::string_view message) override;

  // A frame from any path: decoded, validated, and acted on (FrameSink).
  void on_frame(std::span<const std::byte> frame) noexcept override;

  const EngineCounters& counters() const noexcept { return counters_; }
  const Peer& peer(std::uint32_t rank) const { return peers_[rank]; }

 protected:
  void idle(std::uint64_t idle_rounds) noexcept override;

 private:
  class OutgoingFrame;

  void handle_frame(const frag::FrameHeader& h, std::span<const std::byte> payload);
  void handle_message_fragment(Peer& peer, const frag::FrameHeader& h, std::span<const std::byte> payload);
  void handle_rendezvous_data(Peer& peer, const frag::FrameHeader& h, std::span<const std::byte> payload);
  void handle_ack(Peer& peer, std::uint64_t lirs, std::uint64_t lids);
  void handle_nack(Peer& peer, const frag::FrameHeader& h);
  std::uint64_t accept_sequenced(Peer& peer, const frag::FrameHeader& h, bool delivered);
  void owe_ack(Peer& peer);
  void reject_payload(Peer& peer, const frag::FrameHeader& h);
  void resend(Peer& peer, RetainedFrame& frame);
  void on_matched(Request* receive, IncomingMessage* message);
  void finish_message_if_complete(IncomingMessage* message);
  // Copies a fragment into place with verification; false on a checksum mismatch.
  bool place_payload(IncomingMessage& message, const frag::FrameHeader& h, std::span<const std::byte> payload);
  void process_events();
  IncomingMessage* acquire_message();
  void release_message(IncomingMessage* message);

  // Sending.
  frag::FrameHeader header_for(Peer& peer, frag::FrameType type) noexcept;
  void send_frame(Peer& peer, frag::FrameHeader& h, std::span<const std::byte> payload);
  void send_control(Peer& peer, frag::FrameType type, std::uint64_t msg_seq, std::uint64_t sender_cookie,
                    std::uint64_t receiver_cookie);
  void send_ack(Peer& peer);
  void send_fragments(Peer& peer, Request& r, std::size_t from, std::size_t to);
  bool push_streams();
  bool service_timers();
  Route& route_for(Peer& peer);
  void complete(Request* request);
  void route_failed(Peer& peer, const base::Status& status);

  Identity id_;
  EngineConfig config_;
  std::vector<std::unique_ptr<path::Path>> paths_;
  Environment env_;
  std::vector<Peer> peers_;
  match::Matcher matcher_;
  RequestTable requests_;
  std::vector<Request*> streaming_;       // rendezvous sends with fragments left to send
  std::vector<match::Event> events_;      // scratch for the matcher
  std::deque<IncomingMessage> message_store_;    // every message record; a deque never moves them
  std::vector<IncomingMessage*> free_messages_;  // records ready for reuse
  EngineCounters counters_;
  frag::DecodeLimits limits_{};
  std::size_t max_eager_ = 0;            // largest eager message any route sends
  IncomingMessage* in_hand_ = nullptr;   // the message whose frame is being handled: not completed
                                         // (and freed) by events raised during its own handling
  bool any_tracking_ = false;
  std::uint32_t rounds_since_timer_check_ = 0;
};

}  // namespace ftmpi::engine

// The engine's core: protocols and reliability over whatever paths it is given.
//
// Protocols (per message, chosen by the sender):
//   eager        length <= the route's eager limit and not synchronous: DATA fragments; the send
//                completes once they are handed to the path.
//   rendezvous   larger, synchronous, or out of eager credit (eager_credit.hpp): an RTS carrying the
//                first fragment (none without credit); the receiver matches it
//                and answers CTS naming its request; the sender then streams the rest as DATA
//                frames addressed to that request, as fast as the path takes them (no unbounded
//                overflow queues). A synchronous send completes on the CTS.
//   single copy  a rendezvous on a path that can read the peer's memory: the RTS carries {pid,
//                address}; the receiver reads the message with process_vm_readv straight into the
//                user buffer and answers FIN. Messages of one peer whose RTSes a poll hands up
//                together are read at its end in one call (engine.shm.gather_max).
//   split copy   a single copy of at least engine.shm.split_copy_min bytes into one contiguous buffer:
//                the receiver first answers a CTS naming its buffer and where the second half begins,
//                then reads the first half while the sender writes the second with process_vm_writev
//                (two cores copy at once, one copy of each byte) and answers FIN naming the receive;
//                the receiver's FIN, once both halves are in, completes the send. A half that cannot
//                be moved is read by the receiver, and failing that the message is piped.
//
// Reliability (docs/architecture.md, "Reliability"), on for a peer when a route to it is unreliable, or
// forced by engine.reliability=force:
//   - every frame but ACK/NACK/probe takes byte sequence numbers of its ordered process pair;
//   - the receiver verifies the payload checksum while copying it out of the frame (into the user
//     buffer, or a buffer for an unmatched message) and only then records the range as *received*;
//     a bad payload is dropped and NACKed; a range already received is a duplicate: dropped, re-ACKed;
//   - receiving into place (engine_place.cpp): a path that can peek a frame's header (UDP's bulk
//     socket) asks place() where the payload goes; for rendezvous DATA after CTS, whose byte range has
//     not arrived yet, that is the user's buffer, and the payload is then only verified there, not
//     copied. Nothing already received can be overwritten that way; a bad payload left there lies in
//     bytes not yet received, is NACKed as usual, and its resend overwrites it;
//   - bytes count as *delivered* once they are in the user's buffer; ACKs carry LIRS/LIDS, piggybacked
//     on every frame to the peer, or sent alone after engine.ack.every frames or engine.ack.delay;
//   - the sender keeps a copy of every frame until LIDS covers it; a frame not covered in time is
//     resent with truncated exponential back-off (a frame already covered by LIRS, i.e. received but
//     waiting for its receive to be posted, gets a longer timer instead of a resend).
// Invariants: delivered is a subset of received; a message completes exactly once; a cookie from the
// wire is looked up in the request table, never dereferenced.
//
// Threads (MPI_THREAD_MULTIPLE, base::multi_threaded()): the engine's lock (engine_lock_) covers receiving
// and progress (the matcher, message records, streams, timers, handling what arrives); each peer has a
// lock of its own (peer_lock) for everything in its Peer (sequence state both ways, retained frames,
// credit, rails). A send takes only its peer's lock, so threads sending to different peers run at once;
// receives, probes and progress take the engine's lock, and a peer's lock for each frame from it and
// each action toward it. Polling the paths has a lock of its own (poll_lock_, with what only the poller
// touches: polling_path_, limits_.verify_header_checksum): a progress round polls holding it alone and
// takes the engine's lock only at the first frame a path's poll hands up (PollSink), keeping it until
// that poll returns, so that an idle poll (for UDP, recvmmsg calls that find nothing) never keeps a
// thread from posting a receive; the rest of the round (control requests, lost peers, rebinding,
// streams, timers, flushing) holds both. Order: the poll lock, then the engine's lock, then one peer's,
// then a path's own (a leaf, inside the driver); the poll lock is only ever tried, never waited for.
// progress() only tries the poll lock, and then the engine's lock for the rest of the round (skipped
// when busy): a thread that finds another one progressing waits for its request, whose completion it
// reads without a lock (Request::complete). In a process
// that did not ask for MULTIPLE every lock is an untaken branch; on the zero-byte path (an eager send,
// posting a receive, a short frame arriving, giving a request back) not even that: each entry reads the
// flag once and runs an instantiation specialised on it (template <bool kThreads>), whose
// single-threaded one has no lock and plain counters (EngineLock, PeerLock, base::Count::add).
#pragma once

#include <sys/uio.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string_view>
#include <thread>
#include <type_traits>
#include <unordered_map>
#include <vector>

#include "engine.hpp"
#include "ftmpi/base/threads.hpp"
#include "ftmpi/frag/checksum.hpp"
#include "ftmpi/frag/fragmenter.hpp"
#include "ftmpi/frag/wire.hpp"
#include "ftmpi/match/matcher.hpp"
#include "ftmpi/path/path.hpp"
#include "ftmpi/path/shm.hpp"
#include "ftmpi/rte/control.hpp"
#include "ftmpi/rte/protocol.hpp"
#include "ftmpi/seq/peer_sequence.hpp"
#include "ftmpi/seq/range_list.hpp"
#include "flight_recorder.hpp"
#include "ftmpi/path/fault.hpp"
#include "peer.hpp"
#include "rail_set.hpp"
#include "request.hpp"
#include "stats.hpp"

namespace ftmpi::engine {

// A single-copy RTS carries {pid, address}, little-endian u64 each.
inline constexpr std::size_t kSingleCopyDescriptorSize = 16;

enum class Reliability : std::uint8_t { automatic, force, off };

// The engine's settings, read from its parameter rows (params.hpp), where the defaults live.
struct EngineConfig {
  Reliability reliability{};
  frag::ChecksumKind checksum{};
  bool payload_mac = false;  // engine.integrity=mac: frame_mac over header and payload on checked paths
  std::size_t shm_eager_limit = 0;
  std::size_t net_eager_limit = 0;
  std::size_t eager_credit = 0;     // eager bytes granted to each peer (engine.eager_credit)
  std::size_t single_copy_min = 0;  // 0: never
  std::size_t single_copy_max = 0;  // 0: no limit
  bool retain_by_reference = true;  // tracked rendezvous frames kept by reference to the send buffer
  bool retain_after_send = false;   // tracked eager frames sent from the send buffer, copied after
  std::size_t split_copy_min = 0;   // a single copy this large is split between the two processes; 0: never
  std::size_t gather_max = 0;       // largest single copy read in one system call with others; 0: none
  std::chrono::nanoseconds retransmit_min{};
  std::chrono::nanoseconds retransmit_max{};
  std::uint32_t ack_every = 0;
  std::chrono::nanoseconds ack_delay{};
  std::uint64_t spin_rounds = 0;
  std::uint64_t ahead_window = 0;
  std::size_t window = 0;                     // bytes in flight per peer per rail
  std::size_t window_frames = 0;              // frames in flight per peer per rail
  std::chrono::nanoseconds rail_down_after{};
  std::chrono::nanoseconds peer_timeout{};
  std::chrono::nanoseconds probe_min{};
  std::chrono::nanoseconds probe_max{};
  ReportFormat report = ReportFormat::none;  // what finalize prints of stats() to stderr
  std::size_t flight_events = 0;              // the flight recorder's ring (flight_recorder.hpp)
  std::chrono::nanoseconds flight_interval{};
  enum class FlightWrite : std::uint8_t { never, abnormal, always } flight_write = FlightWrite::abnormal;
  std::string flight_file;  // where the ring is written; empty: nowhere (start.cpp names it)
  std::int64_t test_overlap_tag = -1;  // engine.test.overlap_tag
  std::int64_t test_poll_tag = -1;     // engine.test.poll_tag

  static base::Result<EngineConfig> from(const base::ParamSet& params);
  // The defaults of every row (tests).
  static EngineConfig defaults();
};

struct Identity {
  std::uint32_t rank = 0;
  std::uint32_t size = 1;
  std::uint64_t job_key = 0;
  frag::FrameKey frame_key{};  // the header MAC's key (frag::derive_frame_key of the job's secret)
  std::uint64_t job_id = 0;    // names the job's shared-memory segments (rte::shm_prefix)
};

// What the engine needs from its surroundings besides paths.
struct Environment {
  std::function<void(int code, std::string_view message)> abort;  // ends the job; must not return
  std::function<base::Status()> finalize;                        // tells the launcher we are done
  // A barrier of every rank through the launcher, over its reliable control channel: begun, then
  // tested (true once complete) while the engine keeps progressing. Unset: a job of one process.
  std::function<base::Status()> fence_begin;
  std::function<base::Result<bool>()> fence_test;
  // Reads the bytes from `address` on in process `pid` into the blocks of `local`, in order (single
  // copy); returns the bytes read. Empty when unavailable.
  std::function<base::Result<std::size_t>(std::int64_t pid, std::uintptr_t address, std::span<const ::iovec> local)>
      read_peer_memory;
  // The same for several remote blocks, in one system call (path::read_peer_memory_gather): returns the
  // bytes read, which may be short. Empty: every single copy is read on its own.
  std::function<base::Result<std::size_t>(std::int64_t pid, std::span<const ::iovec> remote,
                                          std::span<const ::iovec> local)>
      read_peer_memory_gather;
  // Writes `len` bytes of `local` to `address` in process `pid` (a split copy's second half); returns the
  // bytes written. Empty when unavailable: the receiver then reads that half itself.
  std::function<base::Result<std::size_t>(std::int64_t pid, std::uintptr_t address, const void* local, std::size_t len)>
      write_peer_memory;
  // Control requests from tools through the launcher (rte/control.hpp): `control_pending` is raised when
  // some may have arrived (tested at every progress round, so it must be cheap to read), take_control
  // returns them, reply_control answers one. Unset: no launcher, no control.
  const std::atomic<bool>* control_pending = nullptr;
  std::function<std::vector<rte::Control>()> take_control;
  std::function<void(std::uint32_t id, bool ok, std::string text)> reply_control;
  // Whether a peer whose rails are all silent still polls, asked of the launcher (RailSet: a silent
  // peer that polls is lost, one that computes is waited for). check_peer returns false when nobody can
  // be asked; the answers arrive with control_pending and are taken with take_peer_statuses.
  std::function<bool(std::uint32_t peer)> check_peer;
  std::function<std::vector<rte::PeerStatus>()> take_peer_statuses;
};

// A frame's payload: `bytes`, or, when `layout` is set, the packed bytes [offset, offset + length) of a
// message laid out in pieces at `base`.
struct Payload {
  std::span<const std::byte> bytes;
  const frag::PiecesLayout* layout = nullptr;
  const std::byte* base = nullptr;
  std::uint64_t offset = 0;
  std::size_t length = 0;

  Payload() = default;
  Payload(std::span<const std::byte> b) : bytes(b) {}  // NOLINT: a span is a payload
  Payload(const std::byte* data, std::size_t n) : bytes(data, n) {}
  // Bytes [offset, offset + len) of what a send request carries (its buffer, or its pieces).
  static Payload of(const Request& r, std::uint64_t offset, std::size_t len) {
    if (r.layout == nullptr) return Payload(r.send_buf + offset, len);
    Payload p;
    p.layout = r.layout;
    p.base = r.send_buf;
    p.offset = offset;
    p.length = len;
    return p;
  }
  std::size_t size() const noexcept { return layout != nullptr ? length : bytes.size(); }
};


// Writes a frame the engine still holds (a retransmission): whole in `bytes`, or, for a frame kept by
// reference (RetainedFrame::payload), its header in `bytes` and its payload in the sender's buffer.
class StoredFrame final : public path::FrameWriter {
 public:
  StoredFrame(std::span<const std::byte> bytes, std::span<const std::byte> payload, bool bulk)
      : bytes_(bytes), payload_(payload), bulk_(bulk) {}
  std::size_t frame_size() const noexcept override { return bytes_.size() + payload_.size(); }
  void write(std::span<std::byte> room) noexcept override;
  bool bulk() const noexcept override { return bulk_; }
  std::span<const std::byte> bytes() const noexcept override {
    return payload_.empty() ? bytes_ : std::span<const std::byte>{};
  }
  std::size_t header_size() const noexcept override { return payload_.empty() ? 0 : bytes_.size(); }
  std::span<const std::byte> write_header(std::span<std::byte> room) noexcept override;

 private:
  std::span<const std::byte> bytes_;
  std::span<const std::byte> payload_;
  bool bulk_;
};

class EngineCore final : public Engine, public path::FrameSink, private RailSet::Actions {
 public:
  EngineCore(Identity identity, EngineConfig config, std::vector<std::unique_ptr<path::Path>> paths,
             Environment environment);
  ~EngineCore() override;

  // Peer process ids, for single copy (wire-up learns them).
  void set_peer_pid(std::uint32_t peer, std::int64_t pid);
  // The fault layer of each path (by index; null where there is none), for faults added at run time.
  void set_fault_layers(std::vector<path::FaultPath*> layers);

  int world_rank() const noexcept override { return static_cast<int>(id_.rank); }
  int world_size() const noexcept override { return static_cast<int>(id_.size); }
  std::uint64_t job_id() const noexcept override { return id_.job_id; }
  std::uint32_t world_context() const noexcept override { return 0; }
  std::uint32_t self_context() const noexcept override { return 1; }

  Request* isend(const CommView& comm, const void* buf, std::size_t bytes, int dest, int tag,
                 SendMode mode) override;
  Request* irecv(const CommView& comm, void* buf, std::size_t capacity, int source, int tag) override;
  // Single-threaded, in one piece: the rounds and the completion test inline, no virtual call per round.
  Completion receive(const CommView& comm, void* buf, std::size_t capacity, int source, int tag,
                     void (*between)()) override;
  Request* isend_pieces(const CommView& comm, const void* base, const frag::PiecesLayout& layout, int dest, int tag,
                        SendMode mode) override;
  Request* irecv_pieces(const CommView& comm, void* base, const frag::PiecesLayout& layout, int source,
                        int tag) override;
  bool send_eager(const CommView& comm, const void* buf, std::size_t bytes, int dest, int tag,
                  SendMode mode) override;
  bool is_complete(const Request* request, Completion* out) const noexcept override;
  bool take_completion(Request* request, Completion* out) override;
  void cancel(Request* request) override;
  void release(Request* request) override;
  bool iprobe(const CommView& comm, int source, int tag, Completion* out) override;
  MatchedMessage* improbe(const CommView& comm, int source, int tag, Completion* out) override;
  Request* mrecv(const CommView& comm, MatchedMessage* message, void* buf, std::size_t capacity) override;
  Request* mrecv_pieces(const CommView& comm, MatchedMessage* message, void* base,
                        const frag::PiecesLayout& layout) override;
  std::string lost_reason(int world_rank) const override;
  bool progress() override;
  std::uint64_t spin_rounds() const noexcept override { return config_.spin_rounds; }
  EngineCounters counters_snapshot() const override { return counters_; }
  base::Status finalize() override;
  [[noreturn]] void abort(int code, std::string_view message) override;

  // A frame from any path: decoded, validated, and acted on (FrameSink).
  void on_frame(std::span<const std::byte> frame) noexcept override;
  // Receiving into place (FrameSink; engine_place.cpp): where a rendezvous DATA frame's payload goes,
  // given its header before its payload was read, and the frame once its payload is there.
  std::size_t place_header_size() const noexcept override { return frag::kHeaderSize; }
  std::span<std::byte> place(std::span<const std::byte> header, std::size_t frame_length) noexcept override;
  void on_frame_parts(std::span<const std::byte> header, std::span<const std::byte> payload) noexcept override;

  const EngineCounters& counters() const noexcept { return counters_; }
  // A snapshot of every counter, each rail's state per peer with its latest changes, and the drivers'
  // own counters (stats.hpp). Not for the data path: it allocates.
  EngineStats stats() const;
  // A control request's disable or enable (engine_control.cpp): the rail's state toward the named peers;
  // the answer as JSON, or why not (nothing changed then).
  base::Result<std::string> set_rail_service(const rte::ControlRequest& request);
  // The path a request's rail names: its index, or a word of its name ("eth1", "10.0.0.1").
  base::Result<std::uint32_t> find_rail(std::string_view rail) const;
  const Peer& peer(std::uint32_t rank) const { return peers_[rank]; }
  // Faults added to and removed from the running job (engine_inject.cpp; ftinject): the answer as JSON,
  // or why nothing changed.
  base::Result<std::string> inject_fault(const rte::ControlRequest& request);
  base::Result<std::string> clear_faults(const rte::ControlRequest& request);
  // Each path's faults and what was injected, detected and resent since the first injection.
  std::string faults_json() const;
  // The flight recorder's events after number `after`, as JSON.
  std::string events_json(std::uint64_t after) const;
  const FlightRecorder& flight() const noexcept { return flight_; }
  // Writes the flight recorder and stats() to config_.flight_file (zstd); the file's name, or empty when
  // none was written (not configured, or the write failed: said on stderr).
  std::string write_flight_file(std::string_view why);

 protected:
  void idle(std::uint64_t idle_rounds) noexcept override;

 public:
  // Keeps this process's waiting word (Path::waiting_word) above 0 while a thread waits.
  void waiting(bool now) noexcept override;

 private:
  class OutgoingFrame;
  class ShortFrame;

  static constexpr std::uint32_t kNoPeer = ~std::uint32_t{0};
  static constexpr std::uint32_t kAllPeers = kNoPeer - 1;
  // The engine's lock for one entry point (see "Threads"); re-entrant, so that finalize's progress and
  // the callbacks of one call may call in again.
  // The checks that find a single-threaded process are inline: that is all SINGLE and FUNNELED pay.
  class EngineGuard {
   public:
    explicit EngineGuard(const EngineCore& engine) noexcept {
      if (base::multi_threaded()) [[unlikely]] lock(engine);
    }
    ~EngineGuard() {
      if (engine_ != nullptr) [[unlikely]] unlock();
    }
    EngineGuard(const EngineGuard&) = delete;
    EngineGuard& operator=(const EngineGuard&) = delete;

   private:
    void lock(const EngineCore& engine) noexcept;
    void unlock() noexcept;
    const EngineCore* engine_ = nullptr;  // null: held already by this thread, or single-threaded
  };
  // A peer's lock, unless this thread holds it already (handling a frame re-enters its peer's sends).
  class PeerGuard {
   public:
    PeerGuard(const EngineCore& engine, std::uint32_t rank) noexcept {
      if (base::multi_threaded()) [[unlikely]] lock(engine, rank);
    }
    ~PeerGuard() {
      if (mutex_ != nullptr) [[unlikely]] unlock();
    }
    PeerGuard(const PeerGuard&) = delete;
    PeerGuard& operator=(const PeerGuard&) = delete;

   private:
    void lock(const EngineCore& engine, std::uint32_t rank) noexcept;
    void unlock() noexcept;
    base::OptionalMutex* mutex_ = nullptr;  // null: held already, or a single-threaded process
    std::uint32_t outer_ = kNoPeer;
  };
  // The guards in code specialised on the threads flag: nothing at all in the single-threaded one.
  struct NoLock {
    template <typename... Args>
    explicit NoLock(const Args&... /*unused*/) noexcept {}
  };
  template <bool kThreads>
  using EngineLock = std::conditional_t<kThreads, EngineGuard, NoLock>;
  template <bool kThreads>
  using PeerLock = std::conditional_t<kThreads, PeerGuard, NoLock>;
  // Every peer's lock, in rank order (control requests, statistics: rare, and they span peers).
  class AllPeersGuard {
   public:
    explicit AllPeersGuard(const EngineCore& engine) noexcept;
    ~AllPeersGuard();
    AllPeersGuard(const AllPeersGuard&) = delete;
    AllPeersGuard& operator=(const AllPeersGuard&) = delete;

   private:
    const EngineCore* engine_ = nullptr;  // null: held already
    std::uint32_t outer_ = kNoPeer;
  };

  static inline thread_local bool holds_engine_lock_ = false;
  static inline thread_local std::uint32_t held_peer_ = kNoPeer;
  mutable base::OptionalMutex engine_lock_;
  mutable std::atomic<std::uint32_t> engine_lock_waiters_{0};  // progress() lets them in first
  std::unique_ptr<base::OptionalMutex[]> peer_locks_;
  base::OptionalMutex spare_frames_lock_;  // spare_frames_: filled by ACKs, emptied by sends
  mutable base::OptionalMutex flight_lock_;       // flight_: rails record into it from any send
  // Polling the paths in a multi-threaded process (see "Threads"): only ever try_lock'ed, so that a thread
  // holding the engine's lock never waits for it.
  std::mutex poll_lock_;
  // The sink a multi-threaded poll hands frames to: takes the engine's lock at the first frame.
  class PollSink;
  // progress() in a multi-threaded process: polling under poll_lock_, the rest of the round under the
  // engine's lock too.
  [[gnu::noinline]] bool progress_threaded();
  bool poll_threaded();
  // What a single-threaded round's shared-memory poll hands frames to: on_frame<false> without the
  // virtual call and the threads test (ShmPath::poll_as).
  struct SingleThreadSink {
    EngineCore& engine;
    [[gnu::always_inline]] inline void on_frame(std::span<const std::byte> frame) noexcept;  // engine_receive.cpp
  };
  // One round of a single-threaded process, and its parts, which progress_threaded() shares.
  [[gnu::always_inline]] inline bool progress_round();
  [[gnu::always_inline]] inline void serve_control_if_pending();
  [[gnu::always_inline]] inline bool progress_after_poll(bool did);
  // The flight recorder, under flight_lock_.
  void record_flight(FlightEvent event);
  // engine.test.overlap_tag: waits, holding a peer's lock, for a send to another peer to be under way.
  void await_overlapping_send();
  std::atomic<std::uint32_t> overlap_senders_{0};
  // engine.test.poll_tag (tests/mpi/threads_poll.c): a receive posted with the tag arms the posting
  // thread's next polling round, which waits, holding the poll lock, for another thread to post a
  // receive with the tag + 1; other threads' rounds do not poll while it is armed.
  enum class PollTest { poll, skip, wait };
  void note_poll_test_receive(int tag) noexcept;
  PollTest poll_test_round() noexcept;
  void await_receive_while_polling();
  std::atomic<bool> poll_test_armed_{false};
  std::atomic<std::thread::id> poll_test_armer_{};
  std::atomic<std::uint64_t> poll_test_posts_{0};

  // A frame refused as malformed (`counter` is dropped_malformed) or corrupt (dropped_bad_payload);
  // counted against the path being polled too, for ftinject's `faults`. Frames only arrive from a poll.
  void count_refused(base::Count& counter) noexcept {
    ++counter;
    ++path_refused_[polling_path_];
  }
  void handle_frame(const frag::FrameHeader& h, std::span<const std::byte> payload);
  // Inline into on_frame, as are the next two into it: a short frame's way into its receive was six
  // calls deep, each with its own saving and restoring of registers.
  template <bool kThreads>
  [[gnu::always_inline]] inline void on_frame(std::span<const std::byte> frame) noexcept;
  template <bool kThreads>
  [[gnu::always_inline]] inline void handle_short_frame(std::span<const std::byte> frame);
  // A whole message (its payload is all of it) straight into the posted receive that takes it next in
  // order; false when none does (then it takes the general path).
  [[gnu::always_inline]] inline bool deliver_whole_in_order(std::uint32_t source, std::uint32_t context, std::int32_t tag,
                              std::uint64_t message_seq, std::span<const std::byte> payload);
  void copy_into_receive(Request& r, std::span<const std::byte> bytes) {
    if (!bytes.empty() && r.capacity != 0) copy_bytes_into_receive(r, bytes);  // inline: most are empty
  }
  void copy_bytes_into_receive(Request& r, std::span<const std::byte> bytes);
  // The same for a DATA frame carrying a whole eager message: its payload verified while it is copied
  // into the receive, which is taken only if the checksum holds (a bad payload leaves it posted, and the
  // general path NACKs the frame); on a reliable peer its sequence numbers are recorded too.
  bool deliver_verified_in_order(Peer& peer, const frag::FrameHeader& h, std::span<const std::byte> payload);
  base::Result<std::size_t> read_into_receive(Request& r, std::int64_t pid, std::uintptr_t address, std::size_t len);
  // A single copy's read into its receive, and its FIN; false when it could not read (then the message
  // is to be piped: pipe_message).
  bool read_single_copy(Peer& peer, Request& r, IncomingMessage& m, std::size_t len);
  void answer_single_copy(Peer& peer, IncomingMessage& m);  // all of it read: FIN
  void pipe_message(Peer& peer, Request& r, const IncomingMessage& m);
  // Single copies matched while a path's poll hands up frames wait in deferred_reads_ until the poll
  // returns, and one peer's are then read in one system call (engine.shm.gather_max).
  bool defers_read(const Request& r, std::size_t len) const noexcept;
  void read_deferred_copies();
  // Split copy (engine_core.hpp's protocol list): the receiver's CTS and its read of the first half; the
  // sender's write of the second half on that CTS; the receiver's end of it on the sender's FIN.
  bool splits_copy(const Request& r, const IncomingMessage& m) const noexcept;
  void start_split_copy(Peer& peer, Request* r, IncomingMessage* m);
  bool read_split_part(Request& r, const IncomingMessage& m, std::uint64_t from, std::uint64_t to);
  void write_split_part(Peer& peer, Request& r, const frag::FrameHeader& h);
  void end_split_copy(Peer& peer, const frag::FrameHeader& h);
  // The receive of a message improbe took out of matching (mrecv, mrecv_pieces).
  Request* receive_matched(const CommView& comm, IncomingMessage* message, void* buf, std::size_t capacity,
                           const frag::PiecesLayout* layout);
  template <bool kThreads>
  [[gnu::always_inline]] inline Request* start_receive(const CommView& comm, void* buf, std::size_t capacity, const frag::PiecesLayout* layout,
                         int source, int tag);
  void handle_message_fragment(Peer& peer, const frag::FrameHeader& h, std::span<const std::byte> payload);
  void handle_rendezvous_data(Peer& peer, const frag::FrameHeader& h, std::span<const std::byte> payload);
  void take_ack(Peer& peer, const frag::FrameHeader& h);
  void apply_ack(Peer& peer);
  void apply_deferred_acks();
  void handle_selective_ack(Peer& peer, std::uint64_t first, std::uint64_t last);
  void frame_received(Peer& peer, RetainedFrame& frame, Clock::time_point now);
  void handle_nack(Peer& peer, const frag::FrameHeader& h);
  std::uint64_t accept_sequenced(Peer& peer, const frag::FrameHeader& h, bool delivered);
  void owe_ack(Peer& peer);
  // Clock::now(), read at most once per frame handled from `peer` (a read is ~27 ns on this VM, and on
  // a message's way); outside handle_frame, a fresh reading.
  Clock::time_point frame_time(Peer& peer) noexcept {
    if (!peer.handling_frame) return Clock::now();
    if (peer.frame_clock == Clock::time_point{}) peer.frame_clock = Clock::now();
    return peer.frame_clock;
  }
  void reject_payload(Peer& peer, const frag::FrameHeader& h);
  // Reliability (engine_reliability.cpp): acknowledgements, retransmission, rebinding.
  std::uint32_t pick_route(Peer& peer) noexcept { return peer.rails.pick(); }
  void resend(Peer& peer, std::size_t index, std::uint32_t route);
  void resend_elsewhere(Peer& peer, std::vector<std::size_t>& indices);
  base::Status send_probe_frame(Peer& peer, std::uint32_t route, frag::FrameType type, std::uint64_t id);
  void handle_probe(Peer& peer, const frag::FrameHeader& h);
  void rebind_frames();
  // The rail of `peer` the frame being handed up arrived on (polling_path_), or null. Inline: every
  // received frame asks.
  Route* arrival_route(Peer& peer) noexcept {
    if (polling_path_ >= peer.route_of_path.size()) return nullptr;
    const std::int32_t k = peer.route_of_path[polling_path_];
    return k < 0 ? nullptr : &peer.rails[static_cast<std::uint32_t>(k)];
  }
  // What the rails ask of the engine (RailSet::Actions).
  base::Status send_probe(std::uint32_t peer, std::uint32_t rail, std::uint64_t probe_id) override;
  void frames_stranded(std::uint32_t peer) override;
  void no_rail_left(std::uint32_t peer, std::string message) override;
  void rail_changed(std::uint32_t peer, std::uint32_t rail, const RailChange& change) override;
  // Each rail's traffic since the last note, into the flight recorder (engine_inject.cpp).
  void record_traffic(Clock::time_point now);
  // The paths a fault request names: its rail, or every path with a fault layer; refused with the
  // reason when a fault there would reach the application.
  base::Result<std::vector<std::uint32_t>> fault_targets(std::string_view rail, const path::FaultSpec* spec) const;
  // The lost peers' state (retained frames, streams, requests) torn down, from the progress loop.
  void forget_lost_peers();
  void forget_lost_peer(Peer& peer);
  bool check_peer(std::uint32_t peer) override { return env_.check_peer && env_.check_peer(peer); }
  // Completes a request whose peer is lost, as failed.
  void fail_lost(Request* r, std::uint32_t peer);
  // Whether a single-copy request naming `pid` may come from this peer over the path being polled.
  bool single_copy_allowed(Peer& peer, std::uint64_t pid) noexcept;
  // from_poll: matched by a frame a path's poll handed up (a single copy may then wait for the poll's end).
  void on_matched(Request* receive, IncomingMessage* message, bool from_poll = false);
  void finish_message_if_complete(IncomingMessage* message);
  // Fills in a receive's completion for a message of `length` bytes from world rank `peer`, completes it.
  [[gnu::always_inline]] inline void complete_receive(Request* receive, std::uint32_t peer, std::int32_t tag,
                                                     std::uint64_t length);
  // Tells every path whether a receive waits for bulk data (Path::expect_bulk).
  void expect_bulk(bool expected) noexcept;
  void bulk_receive_ended(const IncomingMessage& m) noexcept;
  // Copies a fragment into place with verification; false on a checksum mismatch.
  bool place_payload(IncomingMessage& message, const frag::FrameHeader& h, std::span<const std::byte> payload);
  bool place_into_receive(Request& r, const frag::FrameHeader& h, std::span<const std::byte> payload);
  void process_events();
  // Send cancellation (engine_cancel.cpp): the sender's CANCEL, the receiver's answer (later: the
  // message is not released yet, so the cancel is parked; ahead: beyond the matcher's window, not
  // acknowledged), and the sender's handling of the reply.
  enum class CancelAnswer : std::uint8_t { answered, later, ahead, refused };
  void cancel_send(Request& r);
  CancelAnswer answer_cancel(Peer& peer, const ParkedCancel& cancel);
  void handle_cancel(Peer& peer, const frag::FrameHeader& h);
  void handle_cancel_reply(Peer& peer, const frag::FrameHeader& h);
  void retry_parked_cancels(Peer& peer);
  IncomingMessage* acquire_message();
  void release_message(IncomingMessage* message);

  // Sending.
  Request* start_send(const CommView& comm, const void* buf, std::size_t bytes, const frag::PiecesLayout* layout,
                      int dest, int tag, SendMode mode);
  frag::FrameHeader header_for(Peer& peer, frag::FrameType type) noexcept;
  template <bool kThreads>
  bool send_eager(const CommView& comm, const void* buf, std::size_t bytes, int dest, int tag, SendMode mode);
  [[gnu::noinline]] bool send_eager_threaded(const CommView& comm, const void* buf, std::size_t bytes, int dest,
                                             int tag, SendMode mode);
  // All of an eager message: one short frame where the peer takes them, else DATA fragments.
  template <bool kThreads>
  void send_whole_eager(Peer& peer, Request& r);
  // Whether a whole eager message of `bytes` goes to `peer` as one short frame (send_short).
  static bool takes_short_frame(const Peer& peer, std::size_t bytes) noexcept;
  // That short frame, its eager credit spent: a whole message of `bytes` at `payload`, numbered `msg_seq`.
  template <bool kThreads>
  [[gnu::always_inline]] inline void send_short(Peer& peer, std::uint32_t context, std::int32_t tag, const std::byte* payload, std::size_t bytes,
                  std::uint64_t msg_seq);
  // `lender`: a send whose buffer holds `payload` (contiguous, left alone until the send completes), so
  // that a tracked frame may be kept by reference to it (RetainedFrame) instead of copied.
  void send_frame(Peer& peer, std::uint32_t route, frag::FrameHeader& h, const Payload& payload,
                  bool bulk = false, Request* lender = nullptr);
  void send_frame(Peer& peer, frag::FrameHeader& h, const Payload& payload) {
    send_frame(peer, pick_route(peer), h, payload);
  }
  void send_control(Peer& peer, frag::FrameType type, std::uint64_t msg_seq, std::uint64_t sender_cookie,
                    std::uint64_t receiver_cookie);
  void send_ack(Peer& peer);
  Request* lender_for(Request& r) const noexcept;
  void send_fragment(Peer& peer, Request& r, std::uint32_t route, std::size_t offset, std::size_t len);
  void send_fragments(Peer& peer, Request& r, std::size_t from, std::size_t to);
  // Fills in a send's fields and gives it the peer's next message sequence number.
  Peer& prepare_send(Request& r, const CommView& comm, const void* buf, std::size_t bytes, int dest, int tag,
                     SendMode mode) noexcept;
  // Eager needs credit too: the bytes must fit in what the peer granted (eager_credit.hpp).
  static bool goes_eager(const Peer& peer, std::size_t bytes, SendMode mode) noexcept {
    return mode != SendMode::synchronous && bytes <= peer.eager_limit &&
           peer.credit.may_send(EagerCredit::eager_cost(bytes));
  }
  // The receiver's side of eager credit: a message's eager bytes were received into a receive; grants
  // the peer more when a grant is due (the check inline: every eager message received makes it).
  void credit_consumed(Peer& peer, std::uint64_t bytes) {
    if (bytes == 0 || !peer.credit.consumed(bytes) || peer.lost) return;
    send_credit(peer);
  }
  void send_credit(Peer& peer);
  bool push_streams();
  bool service_timers();
  // Control requests (engine_control.cpp): answers every request taken from the launcher.
  void serve_control();
  base::Result<std::string> answer_control(std::string_view line);

  // A frame that decoded but makes no sense here (forged, or a bug): counted, and said at debug level.
  void drop_malformed(std::string_view why, const frag::FrameHeader& h);
  // Inline: every receive completes here, and every send with a request.
  [[gnu::always_inline]] void complete(Request* request) {
    request->complete = true;
    if (request->released) [[unlikely]] free_released(request);
  }
  // A request the application gave back before it completed, completed now: its slot goes back.
  [[gnu::noinline]] void free_released(Request* request);
  // A send released before it completed (MPI_Request_free): the program may reuse its buffer as soon as
  // it learns otherwise that the message arrived (a reply), so its frames kept by reference are copied.
  [[gnu::noinline]] void take_back_lent_frames(Request& send);
  template <bool kThreads>
  void release(Request* request);
  [[gnu::noinline]] void release_threaded(Request* request);
  // Says (rank 0, at start-up) and keeps for stats() where integrity is switched off on a network path.
  void integrity_warnings();
  // A send on `route` failed with `status`; `lost_seq` is the first sequence number of the frame it
  // carried, if the frame is retained (engine_reliability.cpp).
  void route_failed(Peer& peer, std::uint32_t route, const base::Status& status,
                    std::optional<std::uint64_t> lost_seq = std::nullopt);

  Identity id_;
  EngineConfig config_;
  std::vector<std::unique_ptr<path::Path>> paths_;
  // The shared-memory path among paths_ (not wrapped by a fault layer), or null: a short frame to a peer
  // whose rail it is goes through its try_send, inline, not through Path's virtual send.
  path::ShmPath* shm_ = nullptr;
  // The shared-memory word peers read to learn that a thread of this process waits, polling (waiting()).
  std::uint32_t* waiting_word_ = nullptr;
  Environment env_;
  EngineCounters counters_;
  RailSet::Context rails_context_;  // every peer's RailSet: timing, the real clock, this engine
  std::vector<Peer> peers_;
  match::Matcher matcher_;
  RequestTable requests_;
  std::vector<Request*> streaming_;       // rendezvous sends with fragments left to send
  std::vector<std::uint32_t> deferred_acks_;  // ranks whose ACK fields wait for the next round (take_ack)
  std::vector<match::Event> events_;      // scratch for the matcher
  std::deque<IncomingMessage> message_store_;    // every message record; a deque never moves them
  std::vector<IncomingMessage*> free_messages_;  // records ready for reuse
  frag::DecodeLimits limits_{};
  // By path index: whether its frames carry a header checksum, sent and checked (every path but a
  // reliable one, shared memory, unless reliability is forced).
  std::vector<std::uint8_t> header_checked_;
  // By path index: whether it sends a frame's header and payload from where they lie (PathInfo::gathers),
  // so that a tracked eager frame can leave before its copy for resending is made.
  std::vector<std::uint8_t> sends_in_place_;
  const frag::FrameKey* mac_key(std::uint32_t path_index) const noexcept {
    return header_checked_[path_index] != 0 ? &id_.frame_key : nullptr;
  }
  // integrity=mac: the key that seals whole frames on a checked path; null otherwise.
  const frag::FrameKey* payload_mac_key(std::uint32_t path_index) const noexcept {
    return config_.payload_mac && header_checked_[path_index] != 0 ? &limits_.payload_key : nullptr;
  }
  std::size_t max_eager_ = 0;            // largest eager message any route sends
  IncomingMessage* in_hand_ = nullptr;   // the message whose frame is being handled: not completed
                                         // (and freed) by events raised during its own handling
  bool any_tracking_ = false;
  // Set from a send that holds only its peer's lock (a refused frame, a lost peer); taken by progress.
  std::atomic<bool> rebind_pending_{false};  // some peer has frames on a down route
  std::atomic<bool> lost_pending_{false};    // some peer was lost and is not forgotten yet
  // A bulk frame went to a path this round: it may hold it for a GSO run (Path::flush_sends).
  std::atomic<bool> bulk_sent_{false};
  std::uint32_t polling_path_ = 0;       // the path whose frames are being handed up (poll_lock_)
  std::vector<std::size_t> scratch_indices_;
  std::vector<::iovec> scratch_blocks_;  // a single-copy read into a receive's pieces
  struct DeferredRead {
    Request* receive;
    IncomingMessage* message;
    std::size_t length;  // bytes to read: the message, or what the receive holds of it
  };
  std::vector<DeferredRead> deferred_reads_;  // by the path poll in progress (engine lock)
  std::vector<::iovec> gather_remote_, gather_local_;
  std::vector<FrameBytes> spare_frames_;  // buffers of acknowledged frames, for the next ones
  void recycle(FrameBytes& bytes);        // into spare_frames_, or freed; `bytes` is left empty
  std::uint32_t rounds_since_timer_check_ = 0;
  std::uint32_t bulk_receives_ = 0;  // matched rendezvous receives that sent a CTS and are not complete
  std::vector<std::string> warnings_;  // integrity switched off on a network path (stats())

  // Live fault injection and the flight recorder (engine_inject.cpp).
  std::vector<path::FaultPath*> fault_layers_;  // by path index; null where there is none
  std::vector<std::uint64_t> path_refused_;     // by path: frames dropped as malformed or corrupt
  // What each path had injected, detected and resent when the first fault was injected at run time.
  struct PathBaseline {
    path::FaultCounters faults;
    std::uint64_t refused = 0;
    std::uint64_t retransmits = 0;
    std::uint64_t timeouts = 0;
  };
  std::optional<std::chrono::system_clock::time_point> injected_since_;
  std::vector<PathBaseline> baseline_;
  PathBaseline path_totals(std::uint32_t path) const;
  FlightRecorder flight_;
  Clock::time_point last_flight_sample_{};
  std::vector<std::vector<RailCounters>> flight_sampled_;  // by peer, then rail: counters at the last note
};

// Builds a new frame into the room a path found: header and payload, checksummed during the copy (for a
// message in pieces, gathered from them in the same pass).
class EngineCore::OutgoingFrame final : public path::FrameWriter {
 public:
  // `mac_key`: the job's key when the path checks headers, null on a trusted path (no MAC);
  // `payload_mac_key`, with integrity=mac there: the frame's MAC covers the payload too.
  OutgoingFrame(frag::FrameHeader& header, const Payload& payload, frag::ChecksumKind kind, bool bulk,
                const frag::FrameKey* mac_key, const frag::FrameKey* payload_mac_key = nullptr)
      : header_(header), payload_(payload), kind_(kind), bulk_(bulk), mac_key_(mac_key),
        payload_mac_key_(payload_mac_key) {}

  std::size_t frame_size() const noexcept override { return frag::kHeaderSize + payload_.size(); }
  bool bulk() const noexcept override { return bulk_; }

  // Contiguous payloads whose MAC, if any, covers the header alone: the header, its checksum read from
  // the payload where it lies.
  std::size_t header_size() const noexcept override {
    return payload_.layout == nullptr && payload_mac_key_ == nullptr ? frag::kHeaderSize : 0;
  }
  std::span<const std::byte> write_header(std::span<std::byte> room) noexcept override {
    header_.checksum_kind = kind_;
    header_.payload_checksum = frag::checksum(kind_, payload_.bytes.data(), payload_.bytes.size());
    encode_header(room);
    return payload_.bytes;
  }

  // One pass over the payload: copy into the room and checksum it, then the header that carries it.
  void write(std::span<std::byte> room) noexcept override {
    header_.checksum_kind = kind_;
    std::byte* out = room.data() + frag::kHeaderSize;
    if (payload_.layout != nullptr) {
      frag::Checksummer sum(kind_);
      // The range lies inside the message: the engine cut it from the message's packed size.
      (void)frag::gather_with_checksum(*payload_.layout, payload_.base, payload_.offset, {out, payload_.length}, sum);
      header_.payload_checksum = sum.value();  // 0 for none
    } else if (kind_ == frag::ChecksumKind::none) {
      if (!payload_.bytes.empty()) std::memcpy(out, payload_.bytes.data(), payload_.bytes.size());
      header_.payload_checksum = 0;
    } else {
      frag::Checksummer sum(kind_);
      sum.copy(out, payload_.bytes.data(), payload_.bytes.size());
      header_.payload_checksum = sum.value();
    }
    if (payload_mac_key_ != nullptr) {
      frag::encode(header_, room.first<frag::kHeaderSize>(), false);
      frag::seal_frame(room.first(frame_size()), *payload_mac_key_);
    } else {
      encode_header(room);
    }
  }

 private:
  void encode_header(std::span<std::byte> room) noexcept {
    if (mac_key_ != nullptr) {
      frag::encode(header_, room.first<frag::kHeaderSize>(), true, *mac_key_);
    } else {
      frag::encode(header_, room.first<frag::kHeaderSize>(), false);
    }
  }

  frag::FrameHeader& header_;
  Payload payload_;  // a copy: callers may pass a temporary
  frag::ChecksumKind kind_;
  bool bulk_;
  const frag::FrameKey* mac_key_;
  const frag::FrameKey* payload_mac_key_;
};

// A whole eager message as a short frame (trusted paths only): the 48-byte header and the payload.
class EngineCore::ShortFrame final : public path::FrameWriter {
 public:
  ShortFrame(const frag::ShortHeader& header, const std::byte* payload) : header_(header), payload_(payload) {}

  std::size_t frame_size() const noexcept override { return frag::kShortHeaderSize + header_.payload_length; }
  // Not forced inline into ShmPath::try_send: 13 instructions fewer per zero-byte round trip, but any
  // payload's round trip took 0.15 us longer (8 to 256 bytes, 4 alternated rounds; the cause not found).
  void write(std::span<std::byte> room) noexcept override {
    frag::encode_short(header_, room.first<frag::kShortHeaderSize>());
    if (header_.payload_length != 0) {
      std::memcpy(room.data() + frag::kShortHeaderSize, payload_, header_.payload_length);
    }
  }

 private:
  frag::ShortHeader header_;
  const std::byte* payload_;
};

}  // namespace ftmpi::engine

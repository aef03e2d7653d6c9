// The verbs UD path (docs/architecture.md, "Paths"): InfiniBand or RoCE unreliable datagrams through
// libibverbs, made reliable by the engine like UDP. Connectionless, so a process's memory does not grow
// with the job: one receive QP for every peer, fed from a pool of registered receive buffers reposted in
// batches; a few send QPs used in turn; an address handle per peer, made at its first frame.
//
// Set-up, in the engine's order (verbs_driver.cpp):
//   path = VerbsPath::open(api, options, ranks)     device, port, PD, CQs, QPs, buffers; QPs to RTS
//   publish path->address() ("gid:lid:qpn:qkey:max_frame:recv_buffers")
//   path->add_peer(r, address of rank r)             for every rank r, this one included
//
// Used by one thread at a time, like every path.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "ftmpi/base/params.hpp"
#include "ftmpi/base/status.hpp"
#include "ftmpi/base/threads.hpp"
#include "ftmpi/path/path.hpp"
#include "verbs_api.hpp"

namespace ftmpi::path::verbs {

// The Global Route Header UD puts in front of every received datagram.
inline constexpr std::size_t kGrhSize = 40;

struct VerbsOptions {
  std::string device;             // "" the first device with an active port; "emulated" the test device
  std::uint8_t port = 0;          // 0: the device's first active port
  int gid_index = -1;             // RoCE: which GID (address) of the port; -1: chosen (see the .cpp)
  std::size_t recv_buffers = 0;   // registered receive buffers (frames the peers may have in flight to us)
  std::size_t send_buffers = 0;   // registered send buffers (frames we may have in flight)
  std::size_t send_qps = 0;       // send QPs used in turn
  std::uint32_t qkey = 0;         // every datagram of the job carries it; others are dropped by the device
  std::size_t peers = 0;          // ranks in the job

  // path.verbs.*; qkey and peers are left for the caller.
  static VerbsOptions from_params(const base::ParamSet& params);
};

// Where a peer's receive QP is: what the driver publishes.
struct VerbsAddress {
  ibv_gid gid{};
  std::uint16_t lid = 0;
  std::uint32_t qpn = 0;
  std::uint32_t qkey = 0;
  std::size_t max_frame = 0;
  std::size_t recv_buffers = 0;  // its receive pool, shared by every rank that sends to it

  std::string to_string() const;
  // Strict: 32 hex digits, then decimal lid, qpn (24 bits), hex qkey, decimal max_frame and receive
  // buffers, ':' between.
  static base::Result<VerbsAddress> parse(std::string_view text);
};

struct VerbsCounters {
  std::uint64_t frames_sent = 0;
  std::uint64_t frames_received = 0;
  std::uint64_t send_completion_errors = 0;
  std::uint64_t recv_completion_errors = 0;
  std::uint64_t frames_queued = 0;   // sends that found no free send buffer and waited in the path
  std::uint64_t receives_posted = 0;
  std::uint64_t short_datagrams = 0;  // received with fewer bytes than a GRH: dropped
  std::uint64_t async_events = 0;
};

class VerbsPath final : public Path {
 public:
  // Opens the device the options name; the reason when it cannot (no device, port down, ...).
  static base::Result<std::unique_ptr<VerbsPath>> open(const VerbsApi& api, const VerbsOptions& options);
  ~VerbsPath() override;

  std::string address() const { return local_.to_string(); }
  // A peer's published address; a malformed one, or one this device cannot reach, is an error naming it.
  base::Status add_peer(Rank peer, std::string_view address);

  const PathInfo& info() const noexcept override { return info_; }
  bool reaches(Rank peer) const noexcept override;
  std::size_t max_frame_to(Rank peer) const noexcept override;
  // The peer's receive pool shared out among the job's ranks (each may send to it at once).
  std::size_t frames_in_flight_limit(Rank peer) const noexcept override;
  base::Status send(Rank peer, FrameWriter& frame) noexcept override;
  std::size_t poll(FrameSink& sink, std::size_t budget) noexcept override;
  bool has_queued_frames() const noexcept override {
    const std::lock_guard lock(send_lock_);  // senders of other threads fill the queue
    return !queued_.empty();
  }
  std::vector<PathCounterGroup> stats() const override;

  const VerbsCounters& counters() const noexcept { return counters_; }
  ibv_context* context() const noexcept { return context_; }  // the device's (tests drive the emulated one)

 private:
  struct Peer {
    bool known = false;
    VerbsAddress address;
    ibv_ah* ah = nullptr;  // made at the first frame to it
  };
  struct QueuedFrame {
    Rank peer = 0;
    std::vector<std::byte> bytes;
  };

  explicit VerbsPath(const VerbsApi& api) : api_(api) {}
  base::Status setup(const VerbsOptions& options);
  base::Status bring_up(ibv_qp* qp);
  // The GID index to send from when none is given: see VerbsPath::setup.
  int choose_gid_index(const ibv_port_attr& port) const;
  // Reposts the receive buffers consumed since the last repost, as one chain.
  void repost_receives() noexcept;
  // Takes the send CQ's completions: their buffers become free; an error marks the path broken.
  void reap_send_completions() noexcept;
  base::Status post_frame(Rank peer, std::size_t buffer, std::size_t length) noexcept;
  void flush_queue() noexcept;
  void check_async_events() noexcept;
  void mark_broken(std::string reason, bool port_only = false) noexcept;
  base::Status broken_status(Rank peer) const;

  const VerbsApi& api_;
  PathInfo info_;
  VerbsAddress local_;
  ibv_context* context_ = nullptr;
  ibv_pd* pd_ = nullptr;
  ibv_cq* send_cq_ = nullptr;
  ibv_cq* recv_cq_ = nullptr;
  ibv_qp* recv_qp_ = nullptr;
  std::vector<ibv_qp*> send_qps_;
  std::size_t next_send_qp_ = 0;
  std::uint8_t port_ = 1;
  int gid_index_ = 0;

  std::size_t frame_room_ = 0;        // bytes per buffer: max_frame (+ the GRH for receive buffers)
  std::unique_ptr<std::byte[]> send_slab_;
  std::unique_ptr<std::byte[]> recv_slab_;
  ibv_mr* send_mr_ = nullptr;
  ibv_mr* recv_mr_ = nullptr;
  std::size_t recv_count_ = 0;
  std::vector<std::uint32_t> free_send_;   // send buffers not in flight
  std::vector<std::uint32_t> to_repost_;   // receive buffers handed up, not posted again yet
  std::deque<QueuedFrame> queued_;

  std::vector<Peer> peers_;
  // Sends come from several threads at once in a multi-threaded process (base::multi_threaded()) while
  // one polls: the sending side (send buffers, queue, address handles, broken_) is kept under this lock.
  mutable base::OptionalMutex send_lock_;
  bool broken_ = false;
  bool port_down_only_ = false;  // broken only by a port that went down
  std::string broken_reason_;
  std::uint32_t polls_since_event_check_ = 0;
  VerbsCounters counters_;
};

}  // namespace ftmpi::path::verbs

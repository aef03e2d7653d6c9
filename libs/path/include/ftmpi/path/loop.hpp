// The loop path: N ranks inside one process, for engine tests (docs/architecture.md, "Tests"). A LoopNetwork
// holds one queue of frames per rank; LoopPath(network, r) is rank r's path on it. send() copies the frame
// into the destination's queue; poll() hands up the frames in this rank's queue, oldest first.
//
// Threads: the main use is one test driver stepping every rank on one thread. Each queue has its own
// mutex, so ranks may also run on threads of their own, each using only its own LoopPath; a LoopPath
// itself is used by one thread at a time. The network must outlive its paths.
//
// Frames are never lost, corrupted or reordered here, whatever `reliable` claims; FaultPath adds faults.
// One network is one rail: build two networks for two rails with different MTUs.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <vector>

#include "ftmpi/base/status.hpp"
#include "ftmpi/path/path.hpp"

namespace ftmpi::path {

struct LoopOptions {
  std::size_t mtu = 8192;  // max_frame of every path on the network, header included
  bool reliable = true;    // what PathInfo::reliable claims
  bool single_copy_read = false;  // what PathInfo::single_copy_read claims (the ranks share one process)
  bool shares_waiting = false;    // each rank's waiting word readable by the others, as shared memory's
  bool gathers = false;           // what PathInfo::gathers claims (the loop path copies every frame whole)
};

class LoopNetwork {
 public:
  explicit LoopNetwork(std::size_t ranks, LoopOptions options = {});
  LoopNetwork(const LoopNetwork&) = delete;
  LoopNetwork& operator=(const LoopNetwork&) = delete;

  std::size_t size() const noexcept { return size_; }
  const LoopOptions& options() const noexcept { return options_; }

 private:
  friend class LoopPath;
  struct Queue {
    std::mutex mutex;
    std::deque<std::vector<std::byte>> frames;
  };

  std::size_t size_;
  LoopOptions options_;
  std::unique_ptr<Queue[]> queues_;  // by rank
  std::unique_ptr<std::uint32_t[]> waiting_;  // by rank (shares_waiting)
};

class LoopPath final : public Path {
 public:
  LoopPath(LoopNetwork& network, Rank me);

  const PathInfo& info() const noexcept override { return info_; }
  bool reaches(Rank peer) const noexcept override { return peer < network_.size(); }
  base::Status send(Rank peer, FrameWriter& frame) noexcept override;
  std::size_t poll(FrameSink& sink, std::size_t budget) noexcept override;
  // Always false: send() puts every frame straight into the destination's queue.
  bool has_queued_frames() const noexcept override { return false; }
  std::uint32_t* waiting_word() noexcept override;
  std::optional<bool> peer_waiting(Rank peer) const noexcept override;

 private:
  LoopNetwork& network_;
  Rank me_;
  PathInfo info_;
  // Frames taken from this rank's queue under its lock but not yet handed up (poll's budget ran out);
  // only this path touches it, so the sink runs without any lock held and may send, even to itself.
  std::deque<std::vector<std::byte>> inbox_;
};

}  // namespace ftmpi::path

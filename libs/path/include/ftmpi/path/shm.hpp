// The shared-memory path: one POSIX shared-memory segment per host per job, holding a FIFO for every
// ordered pair of local ranks (docs/architecture.md, "Paths"). The segment layout and the FIFO protocol are
// described at the top of src/shm/shm_path.cpp.
//
// Set-up is in three steps so that the engine can order them with launcher barriers:
//
//   local rank 0:  ShmPath::create(config)          makes and initializes the segment
//   -- barrier --
//   every rank:    ShmPath::attach(config)          maps and validates it, places its own FIFOs
//   -- barrier --
//   local rank 0:  path->unlink_name()               removes the name
//
// After unlink_name() the segment has no name, only mappings, so the kernel frees it when the last
// process holding it exits or dies, even by SIGKILL: nothing is left in /dev/shm. Only a crash between
// create and unlink_name leaves the name behind; the launcher removes names with the job's prefix.
//
// A ShmPath is polled by one thread at a time; send() may be called from inside FrameSink::on_frame, and,
// in a multi-threaded process (base::multi_threaded()), from other threads at once, for different peers
// each (the engine holds the peer's lock): each FIFO's sending end has a lock of its own. poll() may not
// be called from on_frame. Destroying a path drops the frames it still queues (see has_queued_frames()).
#pragma once

#include <sys/types.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ftmpi/base/params.hpp"
#include "ftmpi/base/status.hpp"
#include "ftmpi/base/threads.hpp"
#include "ftmpi/path/path.hpp"

namespace ftmpi::path {

// Every slot starts with this many bytes of header (length and sequence stamp); the frame follows.
inline constexpr std::size_t kShmSlotHeaderSize = 16;

// The shape of every FIFO in the segment.
struct ShmGeometry {
  std::uint32_t slots = 0;      // a power of two
  std::uint32_t slot_size = 0;  // bytes, slot header included; a multiple of 64

  // The geometry path.shm.slots and path.shm.slot_size ask for, or why it is invalid.
  static base::Result<ShmGeometry> from_params(const base::ParamSet& params);
  base::Status validate() const;
  std::size_t max_frame() const noexcept { return slot_size - kShmSlotHeaderSize; }
};

struct ShmConfig {
  std::string name;               // POSIX shared-memory name, e.g. "/ftmpi-<jobid>-shm"
  std::uint32_t local_rank = 0;   // this process's index among the ranks on this host
  std::vector<Rank> world_ranks;  // the world rank of every local rank, indexed by local rank
  ShmGeometry geometry;
};

namespace shm {
struct RankStatus;  // layout.hpp
}  // namespace shm

class ShmPath final : public Path {
 public:
  // Makes the segment (it must not exist), sizes it and writes its header; only local rank 0 calls it.
  // The FIFO pages are left untouched so that each sender allocates its own near itself in attach().
  static base::Status create(const ShmConfig& config);

  // Maps the segment and checks that it was made for this host's ranks with this geometry. Fails with
  // not_found if it does not exist (attach before create, or after unlink_name), and invalid_argument
  // when it does not match. Also allocates this rank's outgoing FIFOs on its NUMA node and probes
  // single-copy reads against local rank 0.
  static base::Result<std::unique_ptr<ShmPath>> attach(const ShmConfig& config);

  ~ShmPath() override;

  // Removes the segment's name; called once by local rank 0 after every local rank attached.
  base::Status unlink_name();

  // The process id of a local peer once it has attached (for read_peer_memory), else nullopt.
  std::optional<std::int64_t> peer_pid(Rank peer) const noexcept override;
  std::uint32_t* waiting_word() noexcept override;
  std::optional<bool> peer_waiting(Rank peer) const noexcept override;

  const PathInfo& info() const noexcept override { return info_; }
  bool reaches(Rank peer) const noexcept override { return local_of(peer) != kNotLocal; }
  base::Status send(Rank peer, FrameWriter& frame) noexcept override;
  std::size_t poll(FrameSink& sink, std::size_t budget) noexcept override;
  bool has_queued_frames() const noexcept override { return queued_ != 0; }

 private:
  static constexpr std::uint32_t kNotLocal = ~std::uint32_t{0};

  // A frame waiting in an overflow list; not zero-filled, since the writer fills it.
  struct QueuedFrame {
    std::unique_ptr<std::byte[]> bytes;
    std::size_t size;
  };
  // This rank's end of FIFO (me, r). Only this rank writes its slots; the receiver owns
  // `consumer_index`, which is read only when the cached copy says the ring is full.
  struct Outgoing {
    std::byte* slots = nullptr;
    std::uint64_t* consumer_index = nullptr;
    std::uint64_t head = 0;         // frames published so far
    std::uint64_t cached_tail = 0;  // the consumer index as last read
    std::deque<QueuedFrame> overflow;  // frames waiting for a free slot, in order
  };
  // This rank's end of FIFO (s, me).
  struct Incoming {
    std::byte* slots = nullptr;
    std::uint64_t* consumer_index = nullptr;
    std::uint64_t tail = 0;  // frames consumed so far
    // The stamp of slot (tail mod slots) and the value it takes when frame `tail` is there: an idle
    // poll is then two loads and a compare per FIFO.
    std::uint32_t* next_stamp = nullptr;
    std::uint32_t expected = 1;
  };

  ShmPath(const ShmConfig& config, std::byte* base, std::size_t size, bool single_copy_read);

  std::uint32_t local_of(Rank peer) const noexcept {
    const Rank offset = peer - first_world_rank_;  // wraps for peer < first, then fails the bound check
    // An entry of 0 (a gap) yields kNotLocal too.
    return offset < local_of_.size() ? std::uint32_t{local_of_[offset]} - 1 : kNotLocal;
  }
  // Inline into send and drain_overflow (a call each was a tenth of a short frame's send).
  [[gnu::always_inline]] inline std::byte* claim_slot(Outgoing& out) noexcept;
  [[gnu::always_inline]] inline void publish(Outgoing& out, std::byte* slot, std::size_t size) noexcept;
  void drain_overflow() noexcept;
  // Inline into poll, its one caller.
  [[gnu::always_inline]] inline std::size_t drain_incoming(Incoming& in, FrameSink& sink, std::size_t budget) noexcept;
  // Whether the next frame of `in` is there: what an idle poll does per FIFO, so it stays inline.
  bool frame_waiting(const Incoming& in) const noexcept;

  std::byte* base_;
  shm::RankStatus* statuses_ = nullptr;   // by local rank, in the segment
  shm::RankStatus* my_status_ = nullptr;
  std::size_t size_;
  std::string name_;
  std::uint32_t local_size_;
  std::uint32_t slot_mask_;
  std::uint32_t slot_size_;
  std::uint32_t max_frame_;
  Rank first_world_rank_ = 0;
  std::vector<std::uint16_t> local_of_;  // world rank - first_world_rank_ -> local rank + 1, or 0
  std::vector<Outgoing> out_;            // by receiver's local rank
  std::unique_ptr<base::OptionalMutex[]> out_locks_;  // by receiver's local rank: its Outgoing
  std::vector<Incoming> in_;             // by sender's local rank
  std::uint32_t next_in_ = 0;            // where the next poll starts: after the last FIFO served
  std::atomic<std::size_t> queued_{0};   // frames in all overflow lists
  PathInfo info_;
};

}  // namespace ftmpi::path

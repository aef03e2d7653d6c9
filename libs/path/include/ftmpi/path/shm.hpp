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

#include <algorithm>
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
// At the start of each slot; the frame follows at kShmSlotHeaderSize. The sender writes the frame and
// `length`, then stores `stamp` = (index of the slot's frame in the FIFO) + 1 with release; the receiver
// waits for the stamp it expects next, so the stamp doubles as the producer index.
struct alignas(16) SlotHeader {
  std::uint32_t length;
  std::uint32_t stamp;
};
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
  base::Status send(Rank peer, FrameWriter& frame) noexcept override {
    return try_send(peer, frame) ? base::Status{} : refuse_send(peer, frame.frame_size());
  }
  // send() without its Status, inline, for a writer whose final type the caller knows: its frame_size()
  // and write() are then direct calls (the engine's short frames: a zero-byte message's send is mostly
  // this). False when the frame is refused, with nothing sent: send() says why.
  template <typename Writer>
  [[gnu::always_inline]] inline bool try_send(Rank peer, Writer& frame) noexcept;
  std::size_t poll(FrameSink& sink, std::size_t budget) noexcept override;
  // poll() for a sink whose final type the caller knows: its on_frame() is then a direct call, inlined
  // (the engine's own rounds: a zero-byte message's receive is mostly this).
  template <typename Sink>
  [[gnu::always_inline]] inline std::size_t poll_as(Sink& sink, std::size_t budget) noexcept;
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
    // Slot (tail mod slots), and the stamp it takes when frame `tail` is there: an idle poll is then two
    // loads and a compare per FIFO.
    std::byte* next_slot = nullptr;
    std::uint32_t expected = 1;
  };

  ShmPath(const ShmConfig& config, std::byte* base, std::size_t size, bool single_copy_read);

  std::uint32_t local_of(Rank peer) const noexcept {
    const Rank offset = peer - first_world_rank_;  // wraps for peer < first, then fails the bound check
    // An entry of 0 (a gap) yields kNotLocal too.
    return offset < local_of_.size() ? std::uint32_t{local_of_[offset]} - 1 : kNotLocal;
  }
  // The slot for the sender's next frame, or nullptr when the ring is full. Inline into write_frame and
  // drain_overflow (a call each was a tenth of a short frame's send).
  [[gnu::always_inline]] std::byte* claim_slot(Outgoing& out) noexcept {
    if (out.head - out.cached_tail > slot_mask_) [[unlikely]] {
      out.cached_tail = std::atomic_ref<std::uint64_t>(*out.consumer_index).load(std::memory_order_acquire);
      if (out.head - out.cached_tail > slot_mask_) return nullptr;
    }
    return out.slots + (out.head & slot_mask_) * std::size_t{slot_size_};
  }
  [[gnu::always_inline]] void publish(Outgoing& out, std::byte* slot, std::size_t size) noexcept {
    auto* header = reinterpret_cast<shm::SlotHeader*>(slot);
    header->length = static_cast<std::uint32_t>(size);
    ++out.head;
    std::atomic_ref<std::uint32_t>(header->stamp).store(static_cast<std::uint32_t>(out.head), std::memory_order_release);
  }
  // The frame into the FIFO's next slot, or queued behind the frames that wait for one.
  template <typename Writer>
  [[gnu::always_inline]] inline void write_frame(Outgoing& out, Writer& frame, std::size_t size) noexcept;
  // What try_send does rarely, out of line: why a frame is refused, and queueing one behind others (no
  // room, or earlier frames to the peer still wait).
  [[gnu::cold, gnu::noinline]] base::Status refuse_send(Rank peer, std::size_t size) const;
  [[gnu::noinline]] void queue_frame(Outgoing& out, FrameWriter& frame, std::size_t size);
  void drain_overflow() noexcept;
  // Hands frames from one incoming FIFO to the sink, in order, straight from the slots.
  template <typename Sink>
  [[gnu::always_inline]] inline std::size_t drain_incoming(Incoming& in, Sink& sink, std::size_t budget) noexcept;
  // Whether the next frame of `in` is there: what an idle poll does per FIFO, so it stays inline.
  static bool frame_waiting(const Incoming& in) noexcept {
    return std::atomic_ref<std::uint32_t>(reinterpret_cast<shm::SlotHeader*>(in.next_slot)->stamp)
               .load(std::memory_order_relaxed) == in.expected;
  }

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

template <typename Writer>
inline bool ShmPath::try_send(Rank peer, Writer& frame) noexcept {
  const std::uint32_t local = local_of(peer);
  const std::size_t size = frame.frame_size();
  if (local == kNotLocal || size > max_frame_) [[unlikely]] return false;
  if (queued_ != 0) [[unlikely]] drain_overflow();
  Outgoing& out = out_[local];
  // The flag read once (a lock_guard would read it twice, around the frame's write).
  if (base::multi_threaded()) [[unlikely]] {
    const base::LockIf<true> lock(out_locks_[local]);
    write_frame(out, frame, size);
  } else {
    write_frame(out, frame, size);
  }
  return true;
}

template <typename Writer>
inline void ShmPath::write_frame(Outgoing& out, Writer& frame, std::size_t size) noexcept {
  if (out.overflow.empty()) [[likely]] {
    if (std::byte* slot = claim_slot(out)) [[likely]] {
      frame.write({slot + kShmSlotHeaderSize, size});
      publish(out, slot, size);
      return;
    }
  }
  queue_frame(out, frame, size);
}

template <typename Sink>
inline std::size_t ShmPath::drain_incoming(Incoming& in, Sink& sink, std::size_t budget) noexcept {
  std::size_t handed = 0;
  std::byte* slot = in.next_slot;
  while (handed < budget) {
    auto* header = reinterpret_cast<shm::SlotHeader*>(slot);
    if (std::atomic_ref<std::uint32_t>(header->stamp).load(std::memory_order_acquire) != in.expected) break;
    // The sender is trusted, but a corrupted length must not make us read past the slot.
    const std::size_t length = std::min(header->length, max_frame_);
    sink.on_frame({slot + kShmSlotHeaderSize, length});
    ++in.tail;
    std::atomic_ref<std::uint64_t>(*in.consumer_index).store(in.tail, std::memory_order_release);
    slot = in.slots + (in.tail & slot_mask_) * std::size_t{slot_size_};
    in.next_slot = slot;
    in.expected = static_cast<std::uint32_t>(in.tail + 1);
    ++handed;
  }
  return handed;
}

template <typename Sink>
inline std::size_t ShmPath::poll_as(Sink& sink, std::size_t budget) noexcept {
  if (queued_ != 0) [[unlikely]] drain_overflow();
  std::uint32_t fifo = next_in_;
  for (std::uint32_t visited = 0; visited < local_size_; ++visited) {
    Incoming& in = in_[fifo];
    fifo = fifo + 1 == local_size_ ? 0 : fifo + 1;
    // A relaxed look first (drain_incoming loads the stamp again with acquire before reading the frame).
    if (frame_waiting(in)) {
      // One FIFO per poll, and the next poll starts after it: the senders are served in turn, and the
      // poll that finds a frame looks at no other FIFO.
      next_in_ = fifo;
      return drain_incoming(in, sink, budget);
    }
  }
  return 0;
}

}  // namespace ftmpi::path

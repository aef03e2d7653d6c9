// The shared-memory segment's layout: structures placed in the segment and the offsets between them.
// The picture is in shm_path.cpp.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "ftmpi/path/shm.hpp"

namespace ftmpi::path::shm {

inline constexpr std::uint64_t kMagic = 0x4d48'5349'504d'5446;  // "FTMPISHM" in memory order
inline constexpr std::uint32_t kVersion = 2;  // 2: RankStatus lines
inline constexpr std::uint32_t kReady = 0x59444552;  // "REDY" in memory order; ftruncate left 0
inline constexpr std::size_t kCacheLine = 64;
inline constexpr std::size_t kPage = 4096;
inline constexpr std::uint32_t kMaxLocalRanks = 1024;
// send() maps a world rank to a local rank through a table covering the host's lowest to highest world
// rank, 2 bytes an entry: 8 MiB at most. Block mappings need only the local size.
inline constexpr std::uint32_t kMaxWorldRankSpan = 1u << 22;

// One cache line per local rank after the entries, written by that rank alone, read by its peers: what
// they may know of it without a message.
struct alignas(kCacheLine) RankStatus {
  // > 0 while threads of the rank wait in the library, polling (Path::waiting_word): a split copy's
  // sender will then write its half soon.
  std::uint32_t waiting;
};
static_assert(sizeof(RankStatus) == kCacheLine);

// Offset 0. Written by create(); `ready` last, with release, so that a reader that sees kReady (acquire)
// sees every other field.
struct SegmentHeader {
  std::uint64_t magic;
  std::uint32_t version;
  std::uint32_t ready;
  std::uint64_t segment_size;
  std::uint32_t local_size;
  std::uint32_t slots;
  std::uint32_t slot_size;
  std::uint32_t reserved;
  std::uint64_t fifo_offset;
  std::uint64_t fifo_stride;
};
static_assert(sizeof(SegmentHeader) <= kCacheLine);

// One per local rank, after the header. `world_rank` is written by create(); `probe_address` and then
// `pid` (release) by the rank itself in attach(), and by create() for local rank 0.
struct RankEntry {
  std::uint32_t world_rank;
  std::int32_t pid;
  std::uint64_t probe_address;
};
static_assert(sizeof(RankEntry) == 16);

// SlotHeader (the header of each slot) is in shm.hpp: a send writes it inline.
static_assert(sizeof(SlotHeader) == kShmSlotHeaderSize);

// Each FIFO starts with the consumer index on a line of its own; slots begin after one more line so that
// the adjacent-line prefetcher does not couple the index with slot 0.
inline constexpr std::size_t kFifoControlSize = 2 * kCacheLine;

static_assert(std::atomic_ref<std::uint32_t>::is_always_lock_free);
static_assert(std::atomic_ref<std::uint64_t>::is_always_lock_free);
static_assert(std::atomic_ref<std::int32_t>::is_always_lock_free);

constexpr std::size_t round_up(std::size_t value, std::size_t multiple) {
  return (value + multiple - 1) / multiple * multiple;
}

// Where everything is, from the local size and the geometry. All offsets are page multiples from
// fifo_offset on, so each sender's row can be bound to its NUMA node on its own.
struct Layout {
  std::size_t local_size = 0;
  std::size_t status_offset = 0;  // RankStatus[local_size]
  std::size_t fifo_offset = 0;  // FIFO (0, 0)
  std::size_t fifo_stride = 0;  // FIFO (s, r) is at fifo_offset + (s * local_size + r) * fifo_stride
  std::size_t segment_size = 0;

  std::size_t fifo(std::size_t sender, std::size_t receiver) const {
    return fifo_offset + (sender * local_size + receiver) * fifo_stride;
  }
  std::size_t row_size() const { return local_size * fifo_stride; }
};

// Local size and geometry must already be validated (the result then fits comfortably in 64 bits).
inline Layout layout_of(std::size_t local_size, const ShmGeometry& geometry) {
  Layout layout;
  layout.local_size = local_size;
  layout.status_offset = round_up(sizeof(SegmentHeader) + local_size * sizeof(RankEntry), kCacheLine);
  layout.fifo_offset = round_up(layout.status_offset + local_size * sizeof(RankStatus), kPage);
  layout.fifo_stride =
      round_up(kFifoControlSize + std::size_t{geometry.slots} * geometry.slot_size, kPage);
  layout.segment_size = layout.fifo_offset + local_size * local_size * layout.fifo_stride;
  return layout;
}

inline SegmentHeader* header_of(std::byte* base) { return reinterpret_cast<SegmentHeader*>(base); }
inline RankEntry* entries_of(std::byte* base) {
  return reinterpret_cast<RankEntry*>(base + sizeof(SegmentHeader));
}
inline RankStatus* statuses_of(std::byte* base, const Layout& layout) {
  return reinterpret_cast<RankStatus*>(base + layout.status_offset);
}

}  // namespace ftmpi::path::shm

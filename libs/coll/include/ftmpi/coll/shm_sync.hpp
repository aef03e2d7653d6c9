// A barrier and an allreduce among the ranks of one host through one shared-memory region, the
// way the shared-memory broadcast (shm_bcast.hpp) moves small broadcasts: no message, no syscall, one
// cache line from the last rank to arrive to each waiting rank. The design is at the top of
// src/shm_sync.cpp.
//
// As with ShmBcast, libs/coll knows nothing of how the memory was obtained: the caller sizes a block
// with ShmSyncRegion::bytes_for, has one rank format it (zeroed memory), maps it in every rank and gives
// each rank a ShmSync over it. Every rank calls barrier() and allreduce() in the same order (MPI's rule
// for the collectives of one communicator); allreduce with the same count and reduction at every rank.
// Shared memory is a trusted path (docs/architecture.md, "Paths"): the operands carry no checksum, so a
// caller that forces checksums on shared memory runs its collectives point-to-point instead.
// Not thread-safe: one thread per rank drives it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>

#include "ftmpi/base/status.hpp"
#include "ftmpi/coll/reduction.hpp"

namespace ftmpi::coll {

struct ShmSyncGeometry {
  std::uint32_t ranks = 0;     // ranks sharing the region
  std::size_t slot_bytes = 0;  // the largest allreduce operand (count x element size) the region takes
};

class ShmSyncRegion {
 public:
  // Bytes a region of this geometry needs (a multiple of 64).
  static std::size_t bytes_for(const ShmSyncGeometry& geometry) noexcept;
  // Lays a region out in `memory` (zeroed, 64-byte aligned, at least bytes_for() long). One rank does
  // this before any rank attaches. Errc::invalid_argument for a bad geometry or block.
  static base::Status format(void* memory, std::size_t bytes, const ShmSyncGeometry& geometry);
  // The geometry of a formatted region; Errc::malformed when it is not one.
  static base::Result<ShmSyncGeometry> geometry_of(const void* memory, std::size_t bytes);
};

struct ShmSyncOptions {
  // Up to this many ranks every rank watches every rank's arrival word itself (the last arrival reaches
  // each waiter in one cache-line transfer); above it, local rank 0 gathers the arrivals, reduces, and
  // releases the others through one word (two transfers, but no rank reads N lines).
  std::uint32_t flat_max = 8;
  // Barriers always gathered, whatever the count: rank 0 leaves first and the others follow it. On a
  // host with more ranks than cores this puts rank 0 (the usual root) among the ranks that run right
  // after a barrier, instead of wherever the scheduler left it (see shm_sync.cpp).
  bool gathered_barrier = false;
  // Turns a wait spins before it gives the core away at every turn (0 on an oversubscribed host).
  unsigned spin_turns = 1024;
  // Called every 16th turn while spinning and at every turn after: progress whatever else must move.
  std::function<void()> idle;
  // Allreduces of at least this many bytes are sliced: each rank reduces only its 1/n of every piece
  // and copies the rest from the others' results (two waits per piece instead of one, but each rank
  // reduces n times less; above a few KB that is what costs, most of all with more ranks than cores).
  std::size_t sliced_min = 16384;
};

struct ShmSyncStats {
  std::uint64_t barriers = 0;
  std::uint64_t allreduces = 0;
};

class ShmSync {
 public:
  // `rank` is this rank's index in the region. `memory` must stay mapped for the object's life.
  // Errc::malformed when the block is not a formatted region, Errc::invalid_argument for a bad rank.
  static base::Result<std::unique_ptr<ShmSync>> attach(void* memory, std::size_t bytes, int rank,
                                                      ShmSyncOptions options = {});

  // Returns once every rank of the region has entered the same barrier.
  void barrier();
  // recv = x_0 op x_1 op ... op x_(n-1) over the ranks' `send` arrays of `count` elements, reduced in
  // that order at every rank, so every rank gets the same bits (and a non-commutative op its rank
  // order). `send` may equal `recv` (in place). An operand larger than slot_bytes() goes through in
  // slot-sized pieces (whole elements); Errc::invalid_argument when not even one element fits a slot
  // (then no rank may call it: the caller decides alike at every rank, by size).
  base::Status allreduce(const void* send, void* recv, std::size_t count, const Reduction& reduction);

  std::size_t slot_bytes() const noexcept { return geometry_.slot_bytes; }
  int rank() const noexcept { return me_; }
  int size() const noexcept { return static_cast<int>(geometry_.ranks); }
  const ShmSyncStats& stats() const noexcept { return stats_; }

 private:
  ShmSync(std::byte* memory, const ShmSyncGeometry& geometry, int rank, ShmSyncOptions options);
  // Raises this rank's arrival word to op_ and waits until every rank's is there (flat), or until
  // rank 0 released op_ (gathered; `at_release` runs at rank 0 before it releases).
  template <typename AtRelease>
  void arrive_and_wait(bool flat, AtRelease&& at_release);
  void wait_for(const std::uint64_t& word, std::uint64_t value);
  // One piece of at most slot_bytes(): every rank reduces all of it (one wait), or its own slice of it
  // (sliced, two waits).
  void allreduce_piece(const std::byte* send, std::byte* recv, std::size_t count, const Reduction& reduction);
  void allreduce_piece_sliced(const std::byte* send, std::byte* recv, std::size_t count, const Reduction& reduction);

  std::byte* memory_;
  ShmSyncGeometry geometry_;
  int me_;
  ShmSyncOptions options_;
  bool flat_;
  std::uint64_t op_ = 0;  // operations (barriers and allreduces) this rank started
  ShmSyncStats stats_;
};

}  // namespace ftmpi::coll

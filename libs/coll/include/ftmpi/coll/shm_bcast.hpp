// A broadcast among the ranks of one host through one shared memory region, after LA-MPI's hardware
// broadcast: the root writes each message once (header, CRC32C, data) into a ring of channels, every
// receiver copies it out and verifies it, and acknowledgements are gathered only when the ring runs
// out. The design is written at the top of src/shm_bcast.cpp.
//
// libs/coll knows nothing of how the memory was obtained: the caller sizes a block with
// ShmBcastRegion::bytes_for, has one rank format it (zeroed memory, e.g. a fresh POSIX shm segment or a
// heap block in tests), maps it in every rank of the host, and gives each rank a ShmBcast over it and a
// Transport among the same ranks (rank i of the transport is local rank i of the region), which carries
// resends and the point-to-point fallback.
//
// Every rank of the region calls bcast() for every broadcast, in the same order, with the same root,
// size and tag (MPI's rules for collectives). Not thread-safe: one thread per rank drives it.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <vector>

#include "ftmpi/base/status.hpp"
#include "ftmpi/coll/transport.hpp"

namespace ftmpi::coll {

struct ShmBcastGeometry {
  std::uint32_t ranks = 0;        // ranks sharing the region (2 or more to be useful)
  std::uint32_t channels = 16;    // K
  std::size_t channel_bytes = 0;  // payload of one channel; larger messages go through consecutive ones
};

// The layout of a region: a control line, one line per rank, then the channels (see shm_bcast.cpp).
class ShmBcastRegion {
 public:
  // Bytes a region of this geometry needs (a multiple of 64).
  static std::size_t bytes_for(const ShmBcastGeometry& geometry) noexcept;
  // Lays a region out in `memory`, which must be zeroed, 64-byte aligned and at least bytes_for() long.
  // One rank does this before any rank attaches. Errc::invalid_argument for a bad geometry or block.
  static base::Status format(void* memory, std::size_t bytes, const ShmBcastGeometry& geometry);
  // The geometry of a formatted region; Errc::malformed when it is not one.
  static base::Result<ShmBcastGeometry> geometry_of(const void* memory, std::size_t bytes);
};

struct ShmBcastOptions {
  // Messages up to this size are also copied into a private buffer at the root, which returns at once
  // and answers resend requests from that copy later; larger ones keep the root in bcast() until every
  // receiver has the message (resends come from the caller's buffer).
  std::size_t keep_max = 4096;
  // A receiver whose resend request is not answered within this time declares the region failed.
  std::chrono::nanoseconds timeout = std::chrono::seconds(2);
  // Checksum failures (counted per rank over the region's life) after which a receiver declares the
  // region failed.
  int failure_limit = 3;
  // Turns a wait spins (looking at the awaited word) before it gives the core away at every turn; 0 on
  // a host with more ranks than cores, where spinning only delays the rank waited for.
  unsigned spin_turns = 1024;
  // Called at every turn of every wait: progress whatever else must move meanwhile (the MPI engine).
  std::function<void()> idle;
};

struct ShmBcastStats {
  std::uint64_t shm_broadcasts = 0;      // run through the region
  std::uint64_t p2p_broadcasts = 0;      // run by the point-to-point fallback
  std::uint64_t checksum_failures = 0;   // chunks this rank read with a bad checksum
  std::uint64_t resends = 0;             // chunks this rank (as root) sent again point-to-point
  std::uint64_t consumption_scans = 0;   // times this rank (as root) read every rank's counter
};

class ShmBcast {
 public:
  // The rank of `local` is this rank's index in the region. `memory` must stay mapped for the
  // object's life; `local` must outlive it.
  static base::Result<std::unique_ptr<ShmBcast>> attach(void* memory, std::size_t bytes, Transport& local,
                                                        ShmBcastOptions options = {});
  ~ShmBcast();
  ShmBcast(const ShmBcast&) = delete;
  ShmBcast& operator=(const ShmBcast&) = delete;

  // Broadcasts `bytes` bytes of `buffer` from local rank `root`. `tag` is the call's collective tag
  // (transport.hpp): resends and the fallback use it. Errc::out_of_range when the ranks disagree on
  // the size or root; transport errors are passed on.
  base::Status bcast(void* buffer, std::size_t bytes, int root, int tag);

  // Answers resend requests for messages this rank wrote and finishes resends in flight. Cheap when
  // there is nothing to do; the caller's progress path calls it, so a root that returned from bcast()
  // still serves receivers that need a resend.
  void service();
  // True while another rank may still need a resend from this rank.
  bool busy() const noexcept;
  // Waits until no rank needs anything from this rank any more (before unmapping the region).
  base::Status drain();

  // Whether broadcasts on this region now go point-to-point (the region was declared failed).
  bool fallen_back() const noexcept { return fallen_back_; }
  const ShmBcastStats& stats() const noexcept { return stats_; }

  // Tests only: called at the root after a chunk's payload and checksum were written and before the
  // chunk is published, with the payload and its use number (chunks since the region was made).
  using WriteHook = std::function<void(std::span<std::byte> payload, std::uint64_t use)>;
  void set_write_hook(WriteHook hook) { hook_ = std::move(hook); }

 private:
  friend class ShmBcastRegion;
  struct Layout;
  struct Held {
    std::uint64_t use = UINT64_MAX;  // the chunk this channel's entry belongs to
    int tag = 0;
    const std::byte* data = nullptr;  // copy.data() or the root's buffer
    std::size_t bytes = 0;
    std::vector<std::byte> copy;
  };
  struct Resend {
    RequestId request = 0;
    std::uint32_t channel = 0;
  };

  ShmBcast(std::byte* memory, const ShmBcastGeometry& geometry, Transport& local, ShmBcastOptions options);

  base::Status p2p_bcast(void* buffer, std::size_t bytes, int root, int tag);
  bool takes_fallback_as_root(std::uint64_t broadcast);
  base::Status write_chunk(const std::byte* data, std::size_t len, std::size_t offset, std::size_t total,
                           std::uint64_t broadcast, int tag, bool keep);
  base::Status read_chunk(std::byte* data, std::size_t len, std::size_t offset, std::size_t total,
                          std::uint64_t broadcast, int root, int tag);
  // Waits until every rank is done with use `use` (all counters > use).
  base::Status wait_consumed(std::uint64_t use);
  // Reads every rank's counter; updates known_all_ and the region's shared lower bound.
  void refresh_consumed();
  base::Status finish_resends(std::uint32_t channel, bool all);
  void declare_failed();
  void turn(unsigned& turns);

  std::byte* memory_;
  ShmBcastGeometry geometry_;
  Transport& local_;
  ShmBcastOptions options_;
  int me_;
  std::uint64_t next_broadcast_ = 0;  // broadcasts started (zero-byte ones do not count)
  std::uint64_t next_use_ = 0;        // chunks started
  std::uint64_t known_all_ = 0;       // every rank is done with every use below this
  std::uint64_t held_end_ = 0;        // one past the last use this rank wrote
  bool fallen_back_ = false;
  bool in_service_ = false;
  int failures_ = 0;
  std::vector<Held> held_;  // per channel
  std::vector<Resend> resends_;
  base::Status sticky_;  // a resend that failed while serving from the progress path
  ShmBcastStats stats_;
  WriteHook hook_;
};

// A Transport over some ranks of another: rank i here is rank ranks[i] there. Tags pass through.
class SubsetTransport final : public Transport {
 public:
  SubsetTransport(Transport& parent, std::vector<int> ranks);
  int rank() const noexcept override { return rank_; }
  int size() const noexcept override { return static_cast<int>(ranks_.size()); }
  base::Result<RequestId> isend(const void* data, std::size_t bytes, int dest, int tag) override {
    return parent_->isend(data, bytes, ranks_[static_cast<std::size_t>(dest)], tag);
  }
  base::Result<RequestId> irecv(void* data, std::size_t bytes, int source, int tag) override {
    return parent_->irecv(data, bytes, ranks_[static_cast<std::size_t>(source)], tag);
  }
  base::Result<bool> test(RequestId request) override { return parent_->test(request); }
  base::Status wait(RequestId request) override { return parent_->wait(request); }
  base::Status progress() override { return parent_->progress(); }

 private:
  Transport* parent_;
  std::vector<int> ranks_;
  int rank_ = -1;
};

// A broadcast over ranks on several hosts: host_of[r] names the host of every rank of `transport`
// (any numbers; equal means same host). The root and the lowest rank of every other host form the
// leaders, who run a binomial tree point-to-point; then each host with more than one rank broadcasts
// from its leader through `host` (this rank's host's region; null when this rank is alone on its host).
// `host` must be over the ranks of this host in rank order. `idle` as in ShmBcastOptions.
base::Status hierarchical_bcast(Transport& transport, std::span<const int> host_of, ShmBcast* host,
                                void* buffer, std::size_t bytes, int root, int tag,
                                const std::function<void()>& idle);

}  // namespace ftmpi::coll

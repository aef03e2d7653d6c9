// The shared-memory path.
//
// Segment layout (n = local size; every offset from fifo_offset on is a multiple of 4 KiB):
//
//   0                SegmentHeader: magic, version, ready, size, n, slots, slot_size, offsets
//   64               RankEntry[n]: world rank, pid, probe address           (rounded up to a line)
//   status_offset    RankStatus[n]: a line each, written by its rank: waiting  (rounded up to a page)
//   fifo_offset      row 0: FIFO (0,0) FIFO (0,1) ... FIFO (0,n-1)           -- on sender 0's NUMA node
//                    row 1: FIFO (1,0) ...                                     -- on sender 1's NUMA node
//                    ...
//
//   FIFO (s, r), fifo_stride bytes:
//   +0               consumer index (u64), written by r only                  (own cache line)
//   +128             slot 0: | length u32 | stamp u32 | 8 unused | frame ... |  slot_size bytes
//                    slot 1, ..., slot slots-1                                 (slots a power of two)
//
// Protocol: each FIFO has exactly one writer (s) and one reader (r) and no locks. Frame number i goes
// to slot i & (slots - 1). The sender writes the frame and its length, then stores stamp = i + 1
// (32 bits, wrapping) with release. The receiver, expecting frame i, loads that slot's stamp with
// acquire: i + 1 means the frame is there (the slot's previous occupant carried i + 1 - slots, a fresh
// slot 0). After the sink returns it stores i + 1 into the consumer index with release, freeing the slot.
// The sender keeps the producer index privately and only reads the consumer index when its cached copy
// says the ring is full, so in steady state a frame costs one transfer of the slot's cache lines from
// sender to receiver and nothing else: no shared head index to poll (a Lamport queue moves the head's
// line as well, a second transfer per frame on the receiver's critical path: 0.50 us against 0.30 us
// one way for a 0-byte ping-pong between two pinned processes on the reference VM), and no slot
// clearing by the receiver (a FastForward queue moves each slot's line back to the sender).
//
// A full FIFO spills into a per-peer overflow list on the heap, drained in order at the start of later
// send() and poll() calls; while a peer's list is not empty, new frames to it join the list too, which
// keeps per-peer order. Nothing is dropped and nothing waits, so two ranks that both send without
// polling cannot deadlock; memory grows instead.
#include "ftmpi/path/shm.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <cerrno>
#include <cstring>
#include <limits>
#include <string>
#include <utility>

#include "ftmpi/base/log.hpp"
#include "ftmpi/path/params.hpp"
#include "ftmpi/path/peer_memory.hpp"
#include "layout.hpp"
#include "placement.hpp"

namespace ftmpi::path {
namespace {

using base::Errc;
using base::Status;

// 8 KiB frames in windows of 64 between two cores of the reference VM (bench/path: 8-9 GB/s when its two
// vCPUs share a cache, 2 GB/s when not); only a hint until the engine measures its own throughput.
constexpr double kBandwidthHint = 8e9;

std::string quoted(const std::string& name) { return "shm segment '" + name + "'"; }

Status errno_status(const std::string& what, int err) {
  const Errc code = (err == ENOMEM || err == ENOSPC || err == EMFILE || err == ENFILE) ? Errc::resource_exhausted
                    : (err == EACCES || err == EPERM)                                  ? Errc::unsupported
                                                                                       : Errc::io_error;
  return {code, what + ": " + std::strerror(err)};
}

Status check_config(const ShmConfig& config) {
  const std::string& name = config.name;
  if (name.size() < 2 || name.front() != '/' || name.find('/', 1) != std::string::npos || name.size() > 255) {
    return {Errc::invalid_argument,
            "shm name '" + name + "' must be '/' followed by up to 254 characters without '/'"};
  }
  const std::size_t n = config.world_ranks.size();
  if (n == 0 || n > shm::kMaxLocalRanks) {
    return {Errc::invalid_argument, "local size " + std::to_string(n) + " is outside 1.." +
                                        std::to_string(shm::kMaxLocalRanks)};
  }
  if (config.local_rank >= n) {
    return {Errc::invalid_argument, "local rank " + std::to_string(config.local_rank) +
                                        " is not below the local size " + std::to_string(n)};
  }
  std::vector<Rank> sorted = config.world_ranks;
  std::sort(sorted.begin(), sorted.end());
  if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end()) {
    return {Errc::invalid_argument, "world ranks of the local ranks are not distinct"};
  }
  if (sorted.back() - sorted.front() >= shm::kMaxWorldRankSpan) {
    return {Errc::unsupported, "world ranks on one host span " + std::to_string(sorted.back() - sorted.front() + 1) +
                                   "; the shm path supports up to " + std::to_string(shm::kMaxWorldRankSpan)};
  }
  return config.geometry.validate();
}

// Owns a file descriptor until the mapping is made.
struct Fd {
  int fd;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

// Owns a mapping until a ShmPath takes it.
struct Mapping {
  std::byte* base = nullptr;
  std::size_t size = 0;
  ~Mapping() {
    if (base != nullptr) ::munmap(base, size);
  }
  std::byte* release() { return std::exchange(base, nullptr); }
};

Status map(int fd, std::size_t size, const std::string& name, Mapping& out) {
  void* base = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (base == MAP_FAILED) return errno_status("cannot map " + quoted(name), errno);
  out.base = static_cast<std::byte*>(base);
  out.size = size;
  return {};
}

void publish_self(shm::RankEntry& entry) {
  entry.probe_address = single_copy_probe_address();
  std::atomic_ref<std::int32_t>(entry.pid).store(static_cast<std::int32_t>(::getpid()),
                                                 std::memory_order_release);
}

// Checks the header of a mapped segment against what this rank expects.
Status validate_segment(std::byte* base, std::size_t file_size, const ShmConfig& config,
                        const shm::Layout& layout) {
  const std::string what = quoted(config.name);
  if (file_size < layout.fifo_offset || file_size < sizeof(shm::SegmentHeader)) {
    return {Errc::invalid_argument, what + " is " + std::to_string(file_size) + " bytes, too small for " +
                                        std::to_string(config.world_ranks.size()) +
                                        " local ranks: not made by ShmPath::create for this host"};
  }
  shm::SegmentHeader& h = *shm::header_of(base);
  if (std::atomic_ref<std::uint32_t>(h.ready).load(std::memory_order_acquire) != shm::kReady ||
      h.magic != shm::kMagic) {
    return {Errc::invalid_argument, what + " is not an initialized ftmpi segment (attach raced ahead of "
                                           "create, or the name belongs to something else)"};
  }
  if (h.version != shm::kVersion) {
    return {Errc::invalid_argument, what + " has layout version " + std::to_string(h.version) +
                                        "; this library uses " + std::to_string(shm::kVersion)};
  }
  if (h.local_size != config.world_ranks.size()) {
    return {Errc::invalid_argument, what + " was made for " + std::to_string(h.local_size) +
                                        " local ranks, this rank expects " +
                                        std::to_string(config.world_ranks.size())};
  }
  if (h.slots != config.geometry.slots || h.slot_size != config.geometry.slot_size) {
    return {Errc::invalid_argument,
            what + " has " + std::to_string(h.slots) + " slots of " + std::to_string(h.slot_size) +
                " bytes, this rank expects " + std::to_string(config.geometry.slots) + " of " +
                std::to_string(config.geometry.slot_size) + " (path.shm.* must be equal on every rank)"};
  }
  if (h.segment_size != layout.segment_size || file_size != layout.segment_size ||
      h.fifo_offset != layout.fifo_offset || h.fifo_stride != layout.fifo_stride) {
    return {Errc::invalid_argument, what + " has size " + std::to_string(file_size) + ", expected " +
                                        std::to_string(layout.segment_size)};
  }
  const shm::RankEntry* entries = shm::entries_of(base);
  for (std::size_t i = 0; i < config.world_ranks.size(); ++i) {
    if (entries[i].world_rank != config.world_ranks[i]) {
      return {Errc::invalid_argument, what + " lists world rank " + std::to_string(entries[i].world_rank) +
                                          " as local rank " + std::to_string(i) + ", this rank expects " +
                                          std::to_string(config.world_ranks[i])};
    }
  }
  return {};
}

// Single-copy reads are probed against local rank 0, which made the segment and is alive while the
// others attach. Local rank 0 probes itself, which shows only that the system call is allowed; the
// permission checks that could still refuse it (Yama ptrace_scope 2 or 3) are rare on HPC hosts, and
// read_peer_memory reports them anyway.
bool probe_leader(shm::RankEntry& leader) {
  const pid_t pid = std::atomic_ref<std::int32_t>(leader.pid).load(std::memory_order_acquire);
  Status probed = probe_single_copy(pid, leader.probe_address);
  if (!probed) base::logger().info("shm: single-copy reads disabled: {}", probed.message());
  return probed.is_ok();
}

}  // namespace

base::Result<ShmGeometry> ShmGeometry::from_params(const base::ParamSet& params) {
  const std::int64_t slots = params.get_integer(kShmSlots);
  const std::uint64_t slot_size = params.get_size(kShmSlotSize);
  constexpr auto kMax = std::numeric_limits<std::uint32_t>::max();
  ShmGeometry geometry{static_cast<std::uint32_t>(std::clamp<std::int64_t>(slots, 0, kMax)),
                       static_cast<std::uint32_t>(std::min<std::uint64_t>(slot_size, kMax))};
  if (Status s = geometry.validate(); !s) return s;
  return geometry;
}

Status ShmGeometry::validate() const {
  if (slots < 2 || slots > 65536 || !std::has_single_bit(slots)) {
    return {Errc::invalid_argument, std::string(kShmSlots.name) + " = " + std::to_string(slots) +
                                        ": must be a power of two from 2 to 65536"};
  }
  if (slot_size < 2 * shm::kCacheLine || slot_size > (64u << 20) || slot_size % shm::kCacheLine != 0) {
    return {Errc::invalid_argument, std::string(kShmSlotSize.name) + " = " + std::to_string(slot_size) +
                                        ": must be a multiple of 64 from 128 to 64m"};
  }
  return {};
}

Status ShmPath::create(const ShmConfig& config) {
  if (Status s = check_config(config); !s) return s;
  if (config.local_rank != 0) {
    return {Errc::invalid_argument, "local rank " + std::to_string(config.local_rank) + " called create for " +
                                        quoted(config.name) + "; only local rank 0 does"};
  }
  const std::size_t n = config.world_ranks.size();
  const shm::Layout layout = shm::layout_of(n, config.geometry);

  Fd fd{::shm_open(config.name.c_str(), O_CREAT | O_EXCL | O_RDWR, 0600)};
  if (fd.fd < 0) {
    if (errno == EEXIST) {
      return {Errc::invalid_argument, quoted(config.name) +
                                          " already exists: create was called twice, or an earlier job with "
                                          "the same name left it (remove /dev/shm" + config.name + ")"};
    }
    return errno_status("cannot create " + quoted(config.name), errno);
  }
  // From here on a failure removes the name again, so that a retry is possible.
  Status made = [&]() -> Status {
    if (::ftruncate(fd.fd, static_cast<off_t>(layout.segment_size)) != 0) {
      return errno_status("cannot size " + quoted(config.name) + " to " +
                              std::to_string(layout.segment_size) + " bytes",
                          errno);
    }
    // Only the header and rank table: the FIFO pages stay unallocated until their senders place them.
    Mapping control;
    if (Status s = map(fd.fd, layout.fifo_offset, config.name, control); !s) return s;
    shm::SegmentHeader& h = *shm::header_of(control.base);
    h.magic = shm::kMagic;
    h.version = shm::kVersion;
    h.segment_size = layout.segment_size;
    h.local_size = static_cast<std::uint32_t>(n);
    h.slots = config.geometry.slots;
    h.slot_size = config.geometry.slot_size;
    h.fifo_offset = layout.fifo_offset;
    h.fifo_stride = layout.fifo_stride;
    shm::RankEntry* entries = shm::entries_of(control.base);
    for (std::size_t i = 0; i < n; ++i) entries[i].world_rank = config.world_ranks[i];
    publish_self(entries[0]);
    std::atomic_ref<std::uint32_t>(h.ready).store(shm::kReady, std::memory_order_release);
    return {};
  }();
  if (!made) ::shm_unlink(config.name.c_str());
  return made;
}

base::Result<std::unique_ptr<ShmPath>> ShmPath::attach(const ShmConfig& config) {
  if (Status s = check_config(config); !s) return s;
  const std::size_t n = config.world_ranks.size();
  const shm::Layout layout = shm::layout_of(n, config.geometry);

  Fd fd{::shm_open(config.name.c_str(), O_RDWR, 0)};
  if (fd.fd < 0) {
    if (errno == ENOENT) {
      return Status(Errc::not_found, quoted(config.name) +
                                         " does not exist: attach must come after local rank 0's create "
                                         "and before its unlink_name");
    }
    return errno_status("cannot open " + quoted(config.name), errno);
  }
  struct stat st {};
  if (::fstat(fd.fd, &st) != 0) return errno_status("cannot stat " + quoted(config.name), errno);
  const auto file_size = static_cast<std::size_t>(st.st_size);
  if (file_size < sizeof(shm::SegmentHeader)) {
    return Status(Errc::invalid_argument, quoted(config.name) + " is " + std::to_string(file_size) +
                                              " bytes: not an initialized ftmpi segment");
  }
  Mapping mapping;
  if (Status s = map(fd.fd, file_size, config.name, mapping); !s) return s;
  if (Status s = validate_segment(mapping.base, file_size, config, layout); !s) return s;

  const std::size_t me = config.local_rank;
  if (Status s = shm::place_near_sender(mapping.base + layout.fifo(me, 0), layout.row_size()); !s) return s;
  // Let the other ranks read this process's memory where Yama ptrace_scope is 1: Yama then allows the
  // declared tracer *and its descendants*, so naming our parent (ftrun, or a host's launch agent) admits
  // the ranks it started and no one else, where PR_SET_PTRACER_ANY admitted every process of the user.
  // Ranks with different parents (one agent per rank) cannot then read each other: the receiver's read
  // fails and the message is piped instead (engine: single_copy_fallbacks). Fails harmlessly without Yama.
  ::prctl(PR_SET_PTRACER, static_cast<unsigned long>(::getppid()), 0, 0, 0);
  shm::RankEntry* entries = shm::entries_of(mapping.base);
  publish_self(entries[me]);
  const bool single_copy_read = probe_leader(entries[0]);
  std::byte* base = mapping.release();
  return std::unique_ptr<ShmPath>(new ShmPath(config, base, file_size, single_copy_read));
}

ShmPath::ShmPath(const ShmConfig& config, std::byte* base, std::size_t size, bool single_copy_read)
    : base_(base),
      size_(size),
      name_(config.name),
      local_size_(static_cast<std::uint32_t>(config.world_ranks.size())),
      slot_mask_(config.geometry.slots - 1),
      slot_size_(config.geometry.slot_size),
      max_frame_(static_cast<std::uint32_t>(config.geometry.max_frame())),
      out_(local_size_),
      out_locks_(std::make_unique<base::OptionalMutex[]>(local_size_)),
      in_(local_size_) {
  const auto [lo, hi] = std::minmax_element(config.world_ranks.begin(), config.world_ranks.end());
  first_world_rank_ = *lo;
  local_of_.assign(std::size_t{*hi} - *lo + 1, 0);
  for (std::uint32_t i = 0; i < local_size_; ++i) {
    local_of_[config.world_ranks[i] - *lo] = static_cast<std::uint16_t>(i + 1);
  }

  const shm::Layout layout = shm::layout_of(local_size_, config.geometry);
  const std::size_t me = config.local_rank;
  statuses_ = shm::statuses_of(base_, layout);
  my_status_ = &statuses_[me];
  auto consumer_index = [&](std::size_t fifo) { return reinterpret_cast<std::uint64_t*>(base_ + fifo); };
  for (std::size_t peer = 0; peer < local_size_; ++peer) {
    out_[peer].slots = base_ + layout.fifo(me, peer) + shm::kFifoControlSize;
    out_[peer].consumer_index = consumer_index(layout.fifo(me, peer));
    in_[peer].slots = base_ + layout.fifo(peer, me) + shm::kFifoControlSize;
    in_[peer].consumer_index = consumer_index(layout.fifo(peer, me));
    in_[peer].next_slot = in_[peer].slots;
  }
  info_.kind = PathKind::shm;
  info_.name = "shm";
  info_.host_local = true;
  info_.max_frame = max_frame_;
  info_.reliable = true;
  info_.single_copy_read = single_copy_read;
  info_.bandwidth_hint = kBandwidthHint;
}

ShmPath::~ShmPath() { ::munmap(base_, size_); }

Status ShmPath::unlink_name() {
  if (::shm_unlink(name_.c_str()) != 0) {
    if (errno == ENOENT) return {Errc::not_found, quoted(name_) + " was already unlinked"};
    return errno_status("cannot unlink " + quoted(name_), errno);
  }
  return {};
}

std::optional<std::int64_t> ShmPath::peer_pid(Rank peer) const noexcept {
  const std::uint32_t local = local_of(peer);
  if (local == kNotLocal) return std::nullopt;
  const pid_t pid = std::atomic_ref<std::int32_t>(shm::entries_of(base_)[local].pid).load(std::memory_order_acquire);
  if (pid == 0) return std::nullopt;
  return pid;
}

std::uint32_t* ShmPath::waiting_word() noexcept { return &my_status_->waiting; }

std::optional<bool> ShmPath::peer_waiting(Rank peer) const noexcept {
  const std::uint32_t local = local_of(peer);
  if (local == kNotLocal) return std::nullopt;
  return std::atomic_ref<std::uint32_t>(statuses_[local].waiting).load(std::memory_order_relaxed) != 0;
}

Status ShmPath::refuse_send(Rank peer, std::size_t size) const {
  if (local_of(peer) == kNotLocal) return {Errc::invalid_argument, "rank " + std::to_string(peer) + " is not on this host"};
  return {Errc::out_of_range, "frame of " + std::to_string(size) + " bytes exceeds the shm path's " +
                                  std::to_string(max_frame_) + " (path.shm.slot_size - 16)"};
}

void ShmPath::queue_frame(Outgoing& out, FrameWriter& frame, std::size_t size) {
  QueuedFrame& queued = out.overflow.emplace_back(QueuedFrame{std::make_unique_for_overwrite<std::byte[]>(size), size});
  frame.write({queued.bytes.get(), size});
  ++queued_;
}

void ShmPath::drain_overflow() noexcept {
  for (std::uint32_t local = 0; local < local_size_; ++local) {
    Outgoing& out = out_[local];
    // A sender busy with this FIFO drains it itself at its next send, or the next poll does.
    if (!out_locks_[local].try_lock()) continue;
    const std::lock_guard lock(out_locks_[local], std::adopt_lock);
    while (!out.overflow.empty()) {
      std::byte* slot = claim_slot(out);
      if (slot == nullptr) break;
      const QueuedFrame& frame = out.overflow.front();
      std::memcpy(slot + kShmSlotHeaderSize, frame.bytes.get(), frame.size);
      publish(out, slot, frame.size);
      out.overflow.pop_front();
      --queued_;
    }
  }
}

std::size_t ShmPath::poll(FrameSink& sink, std::size_t budget) noexcept { return poll_as(sink, budget); }

}  // namespace ftmpi::path

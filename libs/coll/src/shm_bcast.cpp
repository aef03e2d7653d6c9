// The shared-memory broadcast (issue 5), after LA-MPI's hardware broadcast.
//
// Region (one per communicator and host; 64-byte lines):
//   control   magic, geometry, `failed` (set by any receiver that gives up on the region),
//             `fallback_from` (the first broadcast that goes point-to-point; set once, by a root),
//             `all_consumed` (a shared lower bound of every rank's counter, raised by roots that scan)
//   rank i    `consumed`: every chunk below it is done with at rank i (read, or written when i was its
//             root); `nack`: use + 1 of a chunk rank i wants resent, 0 if none. One line per rank, so
//             receivers never write a line another rank writes (the root only clears a nack).
//   channel k header {seq = use + 1, published last with release; broadcast number, total size,
//             offset, chunk size, root, CRC32C of payload and header fields} + payload.
//
// Sequence: every rank counts broadcasts and chunks ("uses") alike, since MPI has all ranks call the
// collectives in the same order with the same sizes; a message of m bytes takes ceil(m / channel_bytes)
// consecutive uses, and use u lives in channel u mod K, so a large message is pipelined through the ring
// while receivers copy earlier chunks out. Zero-byte broadcasts move nothing and count nothing.
//
// Root: for each chunk, wait until channel u mod K is free, i.e. every rank is done with use u - K;
// copy the data in computing CRC32C in the same pass (frag's fused copy), fill the header, publish seq
// (release), raise its own counter. Receiver: wait for seq == u + 1 (acquire), copy out verifying the
// checksum, raise its counter (release). A small broadcast thus costs the root one copy and each
// receiver one copy, and nobody waits for anybody: no syscall, no acknowledgement message.
//
// Delayed synchronisation: the root remembers a lower bound of every rank's counter (its own, and the
// region's `all_consumed`) and reads the counters only when the bound does not free the channel it
// needs, i.e. once per K chunks when the receivers keep up. Instead of LA-MPI's combining tree the root
// reads the N counters itself: a tree needs its inner ranks to run to combine, and in shared memory
// they may be computing outside MPI, whereas N cache-line reads every K broadcasts cost a few hundred
// nanoseconds for the host sizes we have. The root publishes what it learnt in `all_consumed` (a CAS
// max), so the next root rarely scans again.
//
// Resend: a receiver whose checksum fails posts a point-to-point receive of that chunk from the root
// (the call's tag, on the caller's Transport) and sets its `nack`. The root answers by sending the chunk
// point-to-point from what it kept: messages up to keep_max are also copied into a private buffer per
// channel (a second copy of a small message, negligible), so the root returns at once and answers later
// from service(), which the MPI layer calls from its progress path and every wait here calls; larger
// messages keep the root in bcast() until every rank is done, and it answers from the caller's buffer.
// The receiver's counter rises only once the resent chunk arrived, so the root never drops a kept copy
// somebody may still ask for. Resends go point-to-point rather than rewriting the channel, because other
// receivers may be reading that channel at the same moment.
//
// Failure: a receiver whose resend request is not answered within `timeout`, or that saw failure_limit
// checksum failures, sets `failed`. It still completes the broadcast in flight by the resend it asked
// for. The switch to the point-to-point binomial tree (libs/coll's bcast on the same Transport) must be
// agreed by all: the root of broadcast b, before writing anything, reads `fallback_from`; if it is at
// most b, or `failed` is set (then it stores fallback_from = b, CAS from "none"), it runs b
// point-to-point. A receiver of b waits for either the first chunk of b (seq) or fallback_from <= b, and
// exactly one of them happens, since only the root of b can decide b. A rank starts b + 1 only after it
// finished b, so by then it has seen any decision made at or before b; every later broadcast is
// point-to-point at every rank.
//
// Memory order: payload and header fields are plain memory, ordered by the release/acquire pairs on
// seq (writer -> readers) and on `consumed` (readers -> the next writer of that channel, directly or
// through the CAS chain on all_consumed). Atomic words are accessed with std::atomic_ref (lock-free
// 64-bit, address-free, so valid across processes).
#include "ftmpi/coll/shm_bcast.hpp"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <new>
#include <string>
#include <thread>

#include "ftmpi/coll/collectives.hpp"
#include "ftmpi/coll/tuning.hpp"
#include "ftmpi/frag/checksum.hpp"

namespace ftmpi::coll {
namespace {

using base::Errc;
using base::Status;

constexpr std::size_t kLine = 64;
constexpr std::uint64_t kMagic = 0x3163626970'6d7466ULL;  // "ftmpibc1", little-endian
constexpr std::uint64_t kNone = UINT64_MAX;

struct alignas(kLine) Control {
  std::uint64_t magic;
  std::uint32_t ranks;
  std::uint32_t channels;
  std::uint64_t channel_bytes;
  std::uint64_t failed;
  std::uint64_t fallback_from;
  std::uint64_t all_consumed;
};

struct alignas(kLine) RankSlot {
  std::uint64_t consumed;
  std::uint64_t nack;
};

// What the checksum covers besides the payload.
struct ChunkFields {
  std::uint64_t broadcast;
  std::uint64_t total;
  std::uint64_t offset;
  std::uint64_t bytes;
  std::uint64_t root;
};

struct alignas(kLine) ChannelHeader {
  std::uint64_t seq;
  ChunkFields fields;
  std::uint32_t checksum;
};

static_assert(sizeof(Control) == kLine && sizeof(RankSlot) == kLine && sizeof(ChannelHeader) == kLine);
static_assert(std::atomic_ref<std::uint64_t>::is_always_lock_free);

std::size_t round_up(std::size_t n) { return (n + kLine - 1) / kLine * kLine; }

std::atomic_ref<std::uint64_t> word(std::uint64_t& w) { return std::atomic_ref<std::uint64_t>(w); }

std::uint32_t fields_crc(const ChunkFields& f, std::uint32_t crc) { return frag::crc32c(&f, sizeof f, crc); }

bool valid(const ShmBcastGeometry& g) {
  return g.ranks >= 1 && g.ranks <= 65536 && g.channels >= 2 && g.channels <= 65536 && g.channel_bytes >= 1 &&
         g.channel_bytes <= (std::size_t{1} << 30);
}

void cpu_relax() noexcept {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

const Tuning& binomial_tuning() {
  static const Tuning tuning = [] {
    Tuning t = default_tuning();
    (void)t.force(Collective::bcast, "binomial");
    return t;
  }();
  return tuning;
}

// Runs libs/coll's binomial broadcast over `transport` to the end, calling turn(turns) between tests
// (how each caller waits: spin, progress, yield).
template <typename Turn>
Status run_binomial(Transport& transport, void* buffer, std::size_t bytes, int root, int tag, Turn&& turn) {
  auto schedule = ibcast(Call{transport, binomial_tuning(), tag}, buffer, bytes, root);
  if (!schedule) return schedule.status();
  unsigned turns = 0;
  for (;;) {
    auto done = schedule->test();
    if (!done) return done.status();
    if (*done) return {};
    turn(turns);
  }
}

}  // namespace

// Where the parts of a region are.
struct ShmBcast::Layout {
  static Control& control(std::byte* m) { return *std::launder(reinterpret_cast<Control*>(m)); }
  static RankSlot& slot(std::byte* m, std::size_t r) {
    return *std::launder(reinterpret_cast<RankSlot*>(m + kLine * (1 + r)));
  }
  static std::size_t channel_stride(const ShmBcastGeometry& g) { return kLine + round_up(g.channel_bytes); }
  static std::byte* channel(std::byte* m, const ShmBcastGeometry& g, std::size_t k) {
    return m + kLine * (1 + g.ranks) + k * channel_stride(g);
  }
  static ChannelHeader& header(std::byte* m, const ShmBcastGeometry& g, std::size_t k) {
    return *std::launder(reinterpret_cast<ChannelHeader*>(channel(m, g, k)));
  }
  static std::byte* payload(std::byte* m, const ShmBcastGeometry& g, std::size_t k) {
    return channel(m, g, k) + kLine;
  }
};

std::size_t ShmBcastRegion::bytes_for(const ShmBcastGeometry& g) noexcept {
  return kLine * (1 + g.ranks) + g.channels * ShmBcast::Layout::channel_stride(g);
}

Status ShmBcastRegion::format(void* memory, std::size_t bytes, const ShmBcastGeometry& g) {
  if (!valid(g)) return Status(Errc::invalid_argument, "shm bcast: invalid region geometry");
  if (memory == nullptr || reinterpret_cast<std::uintptr_t>(memory) % kLine != 0 || bytes < bytes_for(g)) {
    return Status(Errc::invalid_argument, "shm bcast: the region's memory is too small or misaligned");
  }
  auto* m = static_cast<std::byte*>(memory);
  // The memory is zeroed: only non-zero initial values are written. The objects are implicit-lifetime
  // aggregates of integers, created by the placement.
  Control& c = *new (m) Control{};
  c.ranks = g.ranks;
  c.channels = g.channels;
  c.channel_bytes = g.channel_bytes;
  c.fallback_from = kNone;
  for (std::size_t r = 0; r < g.ranks; ++r) new (m + kLine * (1 + r)) RankSlot{};
  for (std::size_t k = 0; k < g.channels; ++k) new (ShmBcast::Layout::channel(m, g, k)) ChannelHeader{};
  word(c.magic).store(kMagic, std::memory_order_release);
  return {};
}

base::Result<ShmBcastGeometry> ShmBcastRegion::geometry_of(const void* memory, std::size_t bytes) {
  if (memory == nullptr || bytes < kLine || reinterpret_cast<std::uintptr_t>(memory) % kLine != 0) {
    return Status(Errc::malformed, "shm bcast: not a region");
  }
  Control& c = ShmBcast::Layout::control(static_cast<std::byte*>(const_cast<void*>(memory)));
  if (word(c.magic).load(std::memory_order_acquire) != kMagic) return Status(Errc::malformed, "shm bcast: not a region");
  ShmBcastGeometry g{c.ranks, c.channels, static_cast<std::size_t>(c.channel_bytes)};
  if (!valid(g) || bytes < bytes_for(g)) return Status(Errc::malformed, "shm bcast: region geometry does not fit");
  return g;
}

base::Result<std::unique_ptr<ShmBcast>> ShmBcast::attach(void* memory, std::size_t bytes, Transport& local,
                                                         ShmBcastOptions options) {
  auto g = ShmBcastRegion::geometry_of(memory, bytes);
  if (!g) return g.status();
  if (static_cast<std::uint32_t>(local.size()) != g->ranks) {
    return Status(Errc::invalid_argument, "shm bcast: the transport's size differs from the region's");
  }
  return std::unique_ptr<ShmBcast>(new ShmBcast(static_cast<std::byte*>(memory), *g, local, std::move(options)));
}

ShmBcast::ShmBcast(std::byte* memory, const ShmBcastGeometry& geometry, Transport& local, ShmBcastOptions options)
    : memory_(memory), geometry_(geometry), local_(local), options_(std::move(options)), me_(local.rank()),
      held_(geometry.channels) {}

ShmBcast::~ShmBcast() = default;

void ShmBcast::turn(unsigned& turns) {
  // Spin a while, looking at the awaited word at every turn and making progress elsewhere at every 16th
  // (a small broadcast's data is usually well under a microsecond away); then give the core away at
  // every turn: more ranks than cores must still make progress.
  ++turns;
  if (turns < options_.spin_turns) {
    if (turns % 16 != 0) {
      cpu_relax();
      return;
    }
  } else {
    std::this_thread::yield();
  }
  if (options_.idle) options_.idle();
  service();
}

bool ShmBcast::busy() const noexcept { return held_end_ > known_all_ || !resends_.empty(); }

void ShmBcast::refresh_consumed() {
  Control& c = Layout::control(memory_);
  std::uint64_t low = kNone;
  for (std::size_t r = 0; r < geometry_.ranks; ++r) {
    low = std::min(low, word(Layout::slot(memory_, r).consumed).load(std::memory_order_acquire));
  }
  ++stats_.consumption_scans;
  known_all_ = std::max(known_all_, low);
  std::uint64_t shared = word(c.all_consumed).load(std::memory_order_relaxed);
  while (shared < known_all_ &&
         !word(c.all_consumed).compare_exchange_weak(shared, known_all_, std::memory_order_acq_rel)) {
  }
}

Status ShmBcast::wait_consumed(std::uint64_t use) {
  if (known_all_ > use) return {};
  Control& c = Layout::control(memory_);
  known_all_ = std::max(known_all_, word(c.all_consumed).load(std::memory_order_acquire));
  unsigned turns = 0;
  while (known_all_ <= use) {
    refresh_consumed();
    if (known_all_ > use) break;
    turn(turns);
    if (!sticky_) return sticky_;
  }
  return {};
}

void ShmBcast::declare_failed() {
  word(Layout::control(memory_).failed).store(1, std::memory_order_release);
}

Status ShmBcast::finish_resends(std::uint32_t channel, bool all) {
  unsigned turns = 0;
  for (;;) {
    bool pending = false;
    for (std::size_t i = 0; i < resends_.size();) {
      auto done = local_.test(resends_[i].request);
      if (!done) return done.status();
      if (*done) {
        resends_.erase(resends_.begin() + static_cast<std::ptrdiff_t>(i));
        continue;
      }
      pending = pending || all || resends_[i].channel == channel;
      ++i;
    }
    if (!pending) return {};
    if (options_.idle) options_.idle();
    if (++turns > std::min(options_.spin_turns, 200u)) std::this_thread::yield();
  }
}

void ShmBcast::service() {
  // Runs after a fall back too: receivers may still wait for resends of earlier broadcasts.
  if (in_service_ || (held_end_ <= known_all_ && resends_.empty())) return;
  in_service_ = true;
  for (std::size_t i = 0; i < resends_.size();) {
    auto done = local_.test(resends_[i].request);
    if (!done || *done) {
      if (!done && sticky_) sticky_ = done.status();
      resends_.erase(resends_.begin() + static_cast<std::ptrdiff_t>(i));
      continue;
    }
    ++i;
  }
  if (held_end_ > known_all_) {
    for (std::size_t r = 0; r < geometry_.ranks; ++r) {
      if (static_cast<int>(r) == me_) continue;
      std::uint64_t& nack = Layout::slot(memory_, r).nack;
      std::uint64_t asked = word(nack).load(std::memory_order_acquire);
      if (asked == 0) continue;
      const std::uint64_t use = asked - 1;
      const auto channel = static_cast<std::uint32_t>(use % geometry_.channels);
      const Held& h = held_[channel];
      if (h.use != use) continue;  // another root's chunk
      if (!word(nack).compare_exchange_strong(asked, 0, std::memory_order_acq_rel)) continue;
      auto request = local_.isend(h.data, h.bytes, static_cast<int>(r), h.tag);
      if (!request) {
        if (sticky_) sticky_ = request.status();
        continue;
      }
      resends_.push_back({*request, channel});
      ++stats_.resends;
    }
    // Learn what was consumed, so that a root that returned stops scanning once nobody needs it.
    refresh_consumed();
  }
  in_service_ = false;
}

Status ShmBcast::drain() {
  unsigned turns = 0;
  while (busy()) {
    if (!sticky_) return sticky_;
    turn(turns);
    refresh_consumed();
  }
  return sticky_;
}

Status ShmBcast::p2p_bcast(void* buffer, std::size_t bytes, int root, int tag) {
  fallen_back_ = true;
  ++stats_.p2p_broadcasts;
  return run_binomial(local_, buffer, bytes, root, tag, [this](unsigned& turns) { turn(turns); });
}

bool ShmBcast::takes_fallback_as_root(std::uint64_t broadcast) {
  if (fallen_back_) return true;
  Control& c = Layout::control(memory_);
  std::uint64_t from = word(c.fallback_from).load(std::memory_order_acquire);
  if (from <= broadcast) return true;
  if (word(c.failed).load(std::memory_order_acquire) == 0) return false;
  // Only the root of `broadcast` decides it, so the CAS cannot lose to another root; kept as a CAS so
  // that a region shared by a misbehaving program cannot move the switch backwards.
  from = kNone;
  word(c.fallback_from).compare_exchange_strong(from, broadcast, std::memory_order_acq_rel);
  return true;
}

Status ShmBcast::write_chunk(const std::byte* data, std::size_t len, std::size_t offset, std::size_t total,
                             std::uint64_t broadcast, int tag, bool keep) {
  const std::uint64_t use = next_use_++;
  const auto channel = static_cast<std::uint32_t>(use % geometry_.channels);
  if (use >= geometry_.channels) {
    if (Status s = wait_consumed(use - geometry_.channels); !s) return s;
  }
  // A resend from this channel's previous kept copy may still be reading it.
  if (Status s = finish_resends(channel, false); !s) return s;
  ChannelHeader& h = Layout::header(memory_, geometry_, channel);
  std::byte* payload = Layout::payload(memory_, geometry_, channel);
  h.fields = ChunkFields{broadcast, total, offset, len, static_cast<std::uint64_t>(me_)};
  const std::uint32_t crc = len == 0 ? 0 : frag::copy_with_checksum(frag::ChecksumKind::crc32c, payload, data, len);
  h.checksum = fields_crc(h.fields, crc);
  Held& held = held_[channel];
  held.use = use;
  held.tag = tag;
  held.bytes = len;
  if (keep) {
    held.copy.assign(data, data + len);
    held.data = held.copy.data();
  } else {
    held.data = data;
  }
  held_end_ = use + 1;
  if (hook_) hook_(std::span<std::byte>(payload, len), use);
  word(h.seq).store(use + 1, std::memory_order_release);
  word(Layout::slot(memory_, static_cast<std::size_t>(me_)).consumed).store(use + 1, std::memory_order_release);
  return {};
}

Status ShmBcast::read_chunk(std::byte* data, std::size_t len, std::size_t offset, std::size_t total,
                            std::uint64_t broadcast, int root, int tag) {
  const std::uint64_t use = next_use_++;
  const auto channel = static_cast<std::uint32_t>(use % geometry_.channels);
  ChannelHeader& h = Layout::header(memory_, geometry_, channel);
  unsigned turns = 0;
  while (word(h.seq).load(std::memory_order_acquire) != use + 1) turn(turns);
  const ChunkFields expected{broadcast, total, offset, len, static_cast<std::uint64_t>(root)};
  if (std::memcmp(&h.fields, &expected, sizeof expected) != 0) {
    return Status(Errc::out_of_range,
                  "shm bcast: rank " + std::to_string(h.fields.root) + " broadcast " +
                      std::to_string(h.fields.total) + " bytes where this rank expects " + std::to_string(total) +
                      " bytes from rank " + std::to_string(root) + " (the ranks disagree on the broadcast)");
  }
  const std::uint32_t crc =
      len == 0 ? 0 : frag::copy_with_checksum(frag::ChecksumKind::crc32c, data, Layout::payload(memory_, geometry_, channel), len);
  RankSlot& mine = Layout::slot(memory_, static_cast<std::size_t>(me_));
  if (fields_crc(expected, crc) != h.checksum) {
    ++stats_.checksum_failures;
    if (++failures_ >= options_.failure_limit) declare_failed();
    // The receive is posted before the request is visible, so the resend always finds it.
    auto request = local_.irecv(data, len, root, tag);
    if (!request) return request.status();
    word(mine.nack).store(use + 1, std::memory_order_release);
    const auto start = std::chrono::steady_clock::now();
    bool gave_up = false;
    turns = 0;
    for (;;) {
      if (!gave_up && turns % 64 == 0 && std::chrono::steady_clock::now() - start >= options_.timeout) {
        gave_up = true;  // the broadcast in flight still completes by the resend asked for
        declare_failed();
      }
      auto done = local_.test(*request);
      if (!done) return done.status();
      if (*done) break;
      turn(turns);
    }
  }
  word(mine.consumed).store(use + 1, std::memory_order_release);
  return {};
}

Status ShmBcast::bcast(void* buffer, std::size_t bytes, int root, int tag) {
  if (root < 0 || root >= static_cast<int>(geometry_.ranks)) {
    return Status(Errc::invalid_argument, "shm bcast: root out of range");
  }
  if (!sticky_) return sticky_;
  if (geometry_.ranks == 1 || bytes == 0) return {};
  const std::uint64_t broadcast = next_broadcast_++;
  auto* data = static_cast<std::byte*>(buffer);
  const std::size_t chunk = geometry_.channel_bytes;
  if (root == me_) {
    if (takes_fallback_as_root(broadcast)) return p2p_bcast(buffer, bytes, root, tag);
    ++stats_.shm_broadcasts;
    const bool keep = bytes <= options_.keep_max;
    for (std::size_t offset = 0; offset < bytes; offset += chunk) {
      if (Status s = write_chunk(data + offset, std::min(chunk, bytes - offset), offset, bytes, broadcast, tag, keep);
          !s) {
        return s;
      }
    }
    if (keep) return {};
    // Resends come from the caller's buffer: stay until nobody can ask for one.
    if (Status s = wait_consumed(next_use_ - 1); !s) return s;
    if (Status s = finish_resends(0, true); !s) return s;
    for (Held& h : held_) {
      if (h.data != nullptr && h.data != h.copy.data()) h = Held{};
    }
    return {};
  }
  if (!fallen_back_) {
    // Wait for the root's decision: the first chunk, or the switch to point-to-point.
    const std::uint64_t use = next_use_;
    ChannelHeader& h = Layout::header(memory_, geometry_, use % geometry_.channels);
    Control& c = Layout::control(memory_);
    unsigned turns = 0;
    for (;;) {
      if (word(h.seq).load(std::memory_order_acquire) == use + 1) break;
      if (word(c.fallback_from).load(std::memory_order_acquire) <= broadcast) {
        fallen_back_ = true;
        break;
      }
      turn(turns);
    }
  }
  if (fallen_back_) return p2p_bcast(buffer, bytes, root, tag);
  ++stats_.shm_broadcasts;
  for (std::size_t offset = 0; offset < bytes; offset += chunk) {
    if (Status s = read_chunk(data + offset, std::min(chunk, bytes - offset), offset, bytes, broadcast, root, tag);
        !s) {
      return s;
    }
  }
  return {};
}

// ---- SubsetTransport and the broadcast across hosts ---------------------------------------------------

SubsetTransport::SubsetTransport(Transport& parent, std::vector<int> ranks)
    : parent_(&parent), ranks_(std::move(ranks)) {
  const auto at = std::find(ranks_.begin(), ranks_.end(), parent.rank());
  rank_ = at == ranks_.end() ? -1 : static_cast<int>(at - ranks_.begin());
}

Status hierarchical_bcast(Transport& transport, std::span<const int> host_of, ShmBcast* host, void* buffer,
                          std::size_t bytes, int root, int tag, const std::function<void()>& idle) {
  const int n = transport.size();
  const int me = transport.rank();
  if (static_cast<int>(host_of.size()) != n || root < 0 || root >= n) {
    return Status(Errc::invalid_argument, "hierarchical bcast: bad host table or root");
  }
  // Leaders: the root for its host, the lowest rank elsewhere; in rank order.
  std::vector<int> leaders;
  int my_leader = -1;
  for (int r = 0; r < n; ++r) {
    const auto ri = static_cast<std::size_t>(r);
    const bool leads = host_of[ri] == host_of[static_cast<std::size_t>(root)]
                           ? r == root
                           : std::find_if(host_of.begin(), host_of.begin() + r,
                                          [&](int h) { return h == host_of[ri]; }) == host_of.begin() + r;
    if (!leads) continue;
    leaders.push_back(r);
    if (host_of[ri] == host_of[static_cast<std::size_t>(me)]) my_leader = r;
  }
  if (leaders.size() > 1 && my_leader == me) {
    SubsetTransport among(transport, leaders);
    const int leader_root = static_cast<int>(std::find(leaders.begin(), leaders.end(), root) - leaders.begin());
    const Status among_leaders = run_binomial(among, buffer, bytes, leader_root, tag, [&](unsigned& turns) {
      if (idle) idle();
      if (host != nullptr) host->service();
      if (++turns > 200) std::this_thread::yield();
    });
    if (!among_leaders) return among_leaders;
  }
  // The host's ranks in rank order: this host's leader is local rank `local_root`.
  std::vector<int> members;
  int local_root = 0;
  for (int r = 0; r < n; ++r) {
    if (host_of[static_cast<std::size_t>(r)] != host_of[static_cast<std::size_t>(me)]) continue;
    if (r == my_leader) local_root = static_cast<int>(members.size());
    members.push_back(r);
  }
  if (host != nullptr) return host->bcast(buffer, bytes, local_root, tag);
  if (members.size() < 2) return {};
  // A host without a region (it could not be made) broadcasts point-to-point among its ranks.
  SubsetTransport local(transport, members);
  return run_binomial(local, buffer, bytes, local_root, tag, [&](unsigned& turns) {
    if (idle) idle();
    if (++turns > 200) std::this_thread::yield();
  });
}

}  // namespace ftmpi::coll

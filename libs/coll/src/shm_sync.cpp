// The shared-memory barrier and allreduce (shm_sync.hpp).
//
// Region (64-byte lines):
//   control   magic, ranks, slot_bytes
//   release   written by rank 0 only (gathered mode): the last operation it released
//   rank i    `arrived`: the last operation rank i entered; written by rank i only
//   slots     two sets (by operation parity) of one operand slot per rank, each slot_bytes rounded up
//             to whole lines, then two result slots (gathered mode)
//
// Every rank numbers its operations 1, 2, 3, ... alike (barriers and allreduces share the count, since
// all ranks call them in the same order). Operation k: an allreduce first copies its operand into its
// slot of set k mod 2; then the rank stores arrived = k (release).
// - Flat (up to flat_max ranks): each rank waits until every rank's `arrived` is at least k (acquire),
//   then an allreduce reduces the n operand slots itself, in rank order.
// - Gathered: rank 0 waits for every arrival, reduces into result slot k mod 2, stores release = k;
//   the others wait for release >= k and copy the result out.
// With gathered_barrier, barriers are gathered at any count (allreduces keep the rule above). On a host
// with more ranks than cores, a flat barrier leaves the ranks that happen to be running first, and a
// broadcast from rank 0 right after it then waits, often a whole scheduler turn, until rank 0 runs again;
// gathered, rank 0 is running when it releases and writes the broadcast before the others can look for
// it. Measured at 4 ranks on 2 cores (8-byte bcast after a barrier, as OSU does): 2.7-3.2 us flat,
// 0.16-0.37 us gathered; the barrier itself 4.0-4.6 us either way. Operations may mix the two modes:
// `release` only grows, and a gathered operation completes, like a flat one, only after every rank
// arrived, which is all the reuse rule below needs.
// Reuse is safe without any further acknowledgement: a rank writes set k mod 2 (and rank 0 the result
// slot k mod 2) only in operation k, after it saw every rank arrive at k - 1; a rank arrives at k - 1
// only after it finished reading operation k - 2, the last user of those slots. Counters only grow, so
// nothing is ever reset.
//
// The reduction is x_(n-1) combined with x_(n-2), then x_(n-3), ... down to x_0 (MPI's user-function
// convention: inout = in op inout with `in` the lower rank), the same sequence at every rank.
//
// An operand larger than a slot goes through in slot-sized pieces, one after another. From
// options.sliced_min bytes a piece is sliced: operation k copies the operands in (set k mod 2) as
// above; once every rank arrived at k, rank r reduces only slice r of the piece (its 1/n, in the same
// rank order) into result slot k mod 2, and arrives at k + 1; once every rank did, each copies the whole
// result out. Each rank reduces n times less than when every rank reduces everything (what a large
// allreduce costs on a host with more ranks than cores), for one more wait per piece; the slot of its own
// slice is not copied in (read from the operand itself) unless in place.
#include "ftmpi/coll/shm_sync.hpp"

#include <atomic>
#include <cstring>
#include <thread>

namespace ftmpi::coll {
namespace {

using base::Errc;
using base::Status;

constexpr std::size_t kLine = 64;
constexpr std::uint64_t kMagic = 0x3163797370'6d7466ULL;  // "ftmpsyc1", little-endian

struct alignas(kLine) Control {
  std::uint64_t magic;
  std::uint64_t ranks;
  std::uint64_t slot_bytes;
};

struct alignas(kLine) Word {
  std::uint64_t value;
};

static_assert(sizeof(Control) == kLine && sizeof(Word) == kLine);
static_assert(std::atomic_ref<std::uint64_t>::is_always_lock_free);

std::size_t round_up(std::size_t n) { return (n + kLine - 1) / kLine * kLine; }

bool valid(const ShmSyncGeometry& g) {
  return g.ranks >= 1 && g.ranks <= 65536 && g.slot_bytes <= (std::size_t{1} << 24);
}

// Offsets in the region.
std::size_t release_at() { return kLine; }
std::size_t arrived_at(std::size_t rank) { return 2 * kLine + rank * kLine; }
std::size_t slots_at(const ShmSyncGeometry& g) { return arrived_at(g.ranks); }
std::size_t slot_at(const ShmSyncGeometry& g, std::uint64_t op, std::size_t rank) {
  return slots_at(g) + ((op & 1) * g.ranks + rank) * round_up(g.slot_bytes);
}
std::size_t result_at(const ShmSyncGeometry& g, std::uint64_t op) {
  return slots_at(g) + (2 * g.ranks + (op & 1)) * round_up(g.slot_bytes);
}

std::uint64_t load(const std::uint64_t& w) {
  return std::atomic_ref<std::uint64_t>(const_cast<std::uint64_t&>(w)).load(std::memory_order_acquire);
}
void store(std::uint64_t& w, std::uint64_t value) {
  std::atomic_ref<std::uint64_t>(w).store(value, std::memory_order_release);
}

void cpu_relax() noexcept {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

}  // namespace

std::size_t ShmSyncRegion::bytes_for(const ShmSyncGeometry& geometry) noexcept {
  return slots_at(geometry) + (2 * std::size_t{geometry.ranks} + 2) * round_up(geometry.slot_bytes);
}

Status ShmSyncRegion::format(void* memory, std::size_t bytes, const ShmSyncGeometry& geometry) {
  if (!valid(geometry)) return Status(Errc::invalid_argument, "shared-memory sync region: bad geometry");
  if (memory == nullptr || reinterpret_cast<std::uintptr_t>(memory) % kLine != 0 || bytes < bytes_for(geometry)) {
    return Status(Errc::invalid_argument, "shared-memory sync region: block too small or misaligned");
  }
  auto* control = static_cast<Control*>(memory);
  control->ranks = geometry.ranks;
  control->slot_bytes = geometry.slot_bytes;
  store(control->magic, kMagic);
  return {};
}

base::Result<ShmSyncGeometry> ShmSyncRegion::geometry_of(const void* memory, std::size_t bytes) {
  if (memory == nullptr || reinterpret_cast<std::uintptr_t>(memory) % kLine != 0 || bytes < sizeof(Control)) {
    return Status(Errc::malformed, "shared-memory sync region: block too small or misaligned");
  }
  const auto* control = static_cast<const Control*>(memory);
  if (load(control->magic) != kMagic) return Status(Errc::malformed, "shared-memory sync region: not formatted");
  const ShmSyncGeometry g{static_cast<std::uint32_t>(control->ranks), static_cast<std::size_t>(control->slot_bytes)};
  if (control->ranks != g.ranks || !valid(g) || bytes < ShmSyncRegion::bytes_for(g)) {
    return Status(Errc::malformed, "shared-memory sync region: geometry does not fit the block");
  }
  return g;
}

base::Result<std::unique_ptr<ShmSync>> ShmSync::attach(void* memory, std::size_t bytes, int rank,
                                                      ShmSyncOptions options) {
  auto geometry = ShmSyncRegion::geometry_of(memory, bytes);
  if (!geometry) return geometry.status();
  if (rank < 0 || static_cast<std::uint32_t>(rank) >= geometry->ranks) {
    return Status(Errc::invalid_argument, "shared-memory sync region: rank out of range");
  }
  return std::unique_ptr<ShmSync>(new ShmSync(static_cast<std::byte*>(memory), *geometry, rank, std::move(options)));
}

ShmSync::ShmSync(std::byte* memory, const ShmSyncGeometry& geometry, int rank, ShmSyncOptions options)
    : memory_(memory),
      geometry_(geometry),
      me_(rank),
      options_(std::move(options)),
      flat_(geometry.ranks <= options_.flat_max) {}

void ShmSync::wait_for(const std::uint64_t& word, std::uint64_t value) {
  // Spin a while, doing other progress every 16th turn (the last arrival is usually well under a
  // microsecond away), then give the core away at every turn: more ranks than cores must still move.
  unsigned turns = 0;
  while (load(word) < value) {
    ++turns;
    if (turns < options_.spin_turns) {
      if (turns % 16 != 0) {
        cpu_relax();
        continue;
      }
    } else {
      std::this_thread::yield();
    }
    if (options_.idle) options_.idle();
  }
}

template <typename AtRelease>
void ShmSync::arrive_and_wait(bool flat, AtRelease&& at_release) {
  auto word_at = [&](std::size_t offset) -> std::uint64_t& { return reinterpret_cast<Word*>(memory_ + offset)->value; };
  store(word_at(arrived_at(static_cast<std::size_t>(me_))), op_);
  if (flat || me_ == 0) {
    for (std::size_t r = 0; r < geometry_.ranks; ++r) wait_for(word_at(arrived_at(r)), op_);
  }
  if (flat) return;
  if (me_ == 0) {
    at_release();
    store(word_at(release_at()), op_);
  } else {
    wait_for(word_at(release_at()), op_);
  }
}

void ShmSync::barrier() {
  ++op_;
  ++stats_.barriers;
  arrive_and_wait(flat_ && !options_.gathered_barrier, [] {});
}

Status ShmSync::allreduce(const void* send, void* recv, std::size_t count, const Reduction& reduction) {
  const std::size_t element = reduction.element_size();
  const std::size_t piece = element == 0 ? count : geometry_.slot_bytes / element;  // elements per slot
  if (count != 0 && piece == 0) {
    return Status(Errc::invalid_argument, "shared-memory allreduce: an element is larger than the region's slots");
  }
  ++stats_.allreduces;
  const bool sliced = count != 0 && count * element >= options_.sliced_min && geometry_.ranks > 1;
  const auto* from = static_cast<const std::byte*>(send);
  auto* to = static_cast<std::byte*>(recv);
  std::size_t done = 0;
  do {  // at least once: a zero-count allreduce still synchronises
    const std::size_t n = std::min(piece, count - done);
    const std::size_t offset = done * element;
    if (sliced) {
      allreduce_piece_sliced(from + offset, to + offset, n, reduction);
    } else {
      allreduce_piece(from + offset, to + offset, n, reduction);
    }
    done += n;
  } while (done < count);
  return {};
}

void ShmSync::allreduce_piece(const std::byte* send, std::byte* recv, std::size_t count, const Reduction& reduction) {
  ++op_;
  const std::size_t bytes = count * reduction.element_size();
  const auto me = static_cast<std::size_t>(me_);
  const std::size_t n = geometry_.ranks;
  if (bytes != 0) std::memcpy(memory_ + slot_at(geometry_, op_, me), send, bytes);
  // x_(n-1), then x_r op (...) for r = n-2 down to 0.
  auto reduce_into = [&](void* into) {
    if (bytes == 0) return;
    std::memcpy(into, memory_ + slot_at(geometry_, op_, n - 1), bytes);
    for (std::size_t r = n - 1; r-- > 0;) reduction.apply(memory_ + slot_at(geometry_, op_, r), into, count);
  };
  arrive_and_wait(flat_, [&] { reduce_into(memory_ + result_at(geometry_, op_)); });
  if (flat_) {
    reduce_into(recv);
  } else if (bytes != 0) {
    std::memcpy(recv, memory_ + result_at(geometry_, op_), bytes);
  }
}

// Two operations: k (every operand copied in) and k + 1 (every slice reduced into result slot k mod 2).
// Both sets of slots are those of k, so the reuse rule at the top holds: the next operation that writes
// operand set k mod 2 is k + 2 or later, after every rank arrived at k + 1, which it does only once it
// has reduced its slice of k; the next that writes result slot k mod 2 does so after every rank arrived
// at k + 2 or later, which a rank does only after it copied the result of k out.
void ShmSync::allreduce_piece_sliced(const std::byte* send, std::byte* recv, std::size_t count,
                                     const Reduction& reduction) {
  const std::size_t element = reduction.element_size();
  const auto me = static_cast<std::size_t>(me_);
  const std::size_t n = geometry_.ranks;
  const std::uint64_t k = ++op_;
  // Slice r: elements [r * count / n, (r + 1) * count / n).
  auto first = [&](std::size_t r) { return r * count / n; };
  const std::size_t mine_at = first(me) * element;
  const std::size_t mine_bytes = (first(me + 1) - first(me)) * element;
  std::byte* const my_slot = memory_ + slot_at(geometry_, k, me);
  // This rank's own slice is read from `send` itself when it is not in place (recv is written below).
  const bool own_from_send = send != recv;
  if (own_from_send) {
    std::memcpy(my_slot, send, mine_at);
    std::memcpy(my_slot + mine_at + mine_bytes, send + mine_at + mine_bytes, count * element - mine_at - mine_bytes);
  } else {
    std::memcpy(my_slot, send, count * element);
  }
  arrive_and_wait(true, [] {});
  if (mine_bytes != 0) {
    auto operand = [&](std::size_t r) -> const std::byte* {
      return r == me && own_from_send ? send + mine_at : memory_ + slot_at(geometry_, k, r) + mine_at;
    };
    std::byte* const into = memory_ + result_at(geometry_, k) + mine_at;
    std::memcpy(into, operand(n - 1), mine_bytes);
    for (std::size_t r = n - 1; r-- > 0;) {
      reduction.apply(operand(r), into, first(me + 1) - first(me));
    }
  }
  ++op_;
  arrive_and_wait(true, [] {});
  std::memcpy(recv, memory_ + result_at(geometry_, k), count * element);
}

}  // namespace ftmpi::coll

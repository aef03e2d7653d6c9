// The target side of one-sided communication (window.hpp): serving requests of every window. Runs in
// MPI calls of this process and on the engine's progress thread, so it uses only the engine it is given
// and the WindowTargets (under window_mutex()), nothing else of the MPI layer.
#include "mpi/window.hpp"

#include <sched.h>

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <limits>

#include "ftmpi/coll/reduction.hpp"
#include "mpi/runtime.hpp"

namespace ftmpi::mpi {

std::atomic<int> windows_open{0};

namespace {

std::vector<WindowTarget*>& targets() {
  static std::vector<WindowTarget*> list;
  return list;
}

// Items that abut, one piece each from their start (a predefined type, a contiguous one): `count` of
// them are one run of bytes, copied at once instead of item by item.
bool contiguous(const std::vector<Piece>& pieces, std::int64_t extent) noexcept {
  return pieces.size() == 1 && pieces[0].displacement == 0 && static_cast<std::int64_t>(pieces[0].length) == extent;
}

// `count` items of `pieces` at `extent` strides from `base`, copied into `packed` (gather) or from it
// (scatter).
void gather(const std::byte* base, const std::vector<Piece>& pieces, std::int64_t extent, std::uint64_t count,
            std::byte* packed) {
  if (contiguous(pieces, extent)) {
    if (count != 0) std::memcpy(packed, base, count * pieces[0].length);
    return;
  }
  for (std::uint64_t i = 0; i < count; ++i) {
    const std::byte* item = base + static_cast<std::int64_t>(i) * extent;
    for (const Piece& p : pieces) {
      std::memcpy(packed, item + p.displacement, p.length);
      packed += p.length;
    }
  }
}

void scatter(const std::byte* packed, const std::vector<Piece>& pieces, std::int64_t extent, std::uint64_t count,
             std::byte* base) {
  if (contiguous(pieces, extent)) {
    if (count != 0) std::memcpy(base, packed, count * pieces[0].length);
    return;
  }
  for (std::uint64_t i = 0; i < count; ++i) {
    std::byte* item = base + static_cast<std::int64_t>(i) * extent;
    for (const Piece& p : pieces) {
      std::memcpy(item + p.displacement, packed, p.length);
      packed += p.length;
    }
  }
}

void send_reply(engine::Engine& engine, WindowTarget& t, int origin, int reply_tag, int error,
                const std::byte* data = nullptr, std::size_t bytes = 0) {
  WindowTarget::Outgoing out;
  out.bytes.resize(sizeof(RmaReplyHeader) + bytes);
  RmaReplyHeader header;
  header.error = error;
  std::memcpy(out.bytes.data(), &header, sizeof header);
  if (bytes != 0) std::memcpy(out.bytes.data() + sizeof header, data, bytes);
  out.send = engine.isend(t.view, out.bytes.data(), out.bytes.size(), origin, reply_tag, engine::SendMode::standard);
  t.replies.push_back(std::move(out));
}

// The lock of a target without a control block: its own counts.
bool grantable(const WindowTarget& t, bool exclusive) noexcept {
  return exclusive ? !t.exclusive_held && t.shared_holders == 0 : !t.exclusive_held;
}

bool try_take(WindowTarget& t, bool exclusive) noexcept {
  if (t.memory.control != nullptr) return try_lock_direct(*t.memory.control, exclusive);
  if (!grantable(t, exclusive)) return false;
  if (exclusive) {
    t.exclusive_held = true;
  } else {
    ++t.shared_holders;
  }
  return true;
}

void give_back(WindowTarget& t, bool exclusive) noexcept {
  if (t.memory.control != nullptr) {
    unlock_direct(*t.memory.control, exclusive);
  } else if (exclusive) {
    t.exclusive_held = false;
  } else if (t.shared_holders > 0) {
    --t.shared_holders;
  }
}

// Grants the waiting lock requests in their order, as far as the lock allows (with a control block, an
// origin of this host may have taken or given back the lock since the last look).
void grant_waiters(engine::Engine& engine, WindowTarget& t) {
  while (!t.waiters.empty() && try_take(t, t.waiters.front().exclusive)) {
    const WindowTarget::Waiter w = t.waiters.front();
    t.waiters.pop_front();
    send_reply(engine, t, w.origin, w.reply_tag, MPI_SUCCESS);
  }
}

// Where the target datatype's items start in this window's memory, or null when [low, high) of them
// falls outside it (MPI_ERR_RMA_RANGE).
std::byte* locate(const WindowMemory& m, const RmaHeader& h, const std::vector<Piece>& pieces) {
  const ByteSpan span = span_of(pieces, h.extent, h.count);
  if (span.low == span.high) return m.base;  // touches nothing
  if (m.dynamic) {
    const auto address = static_cast<std::uintptr_t>(h.displacement);
    for (const Region& r : *m.regions) {
      const auto start = reinterpret_cast<std::uintptr_t>(r.base);
      const auto low = address + static_cast<std::uintptr_t>(span.low);
      const auto high = address + static_cast<std::uintptr_t>(span.high);
      if (low >= start && high <= start + r.size && low <= high) return reinterpret_cast<std::byte*>(address);
    }
    return nullptr;
  }
  const std::int64_t offset = h.displacement * m.disp_unit;
  if (h.displacement < 0 || offset + span.low < 0 || offset + span.high > static_cast<std::int64_t>(m.size)) {
    return nullptr;
  }
  return m.base + offset;
}

std::uint64_t extent_magnitude(std::int64_t extent) noexcept {
  return extent < 0 ? std::uint64_t{0} - static_cast<std::uint64_t>(extent) : static_cast<std::uint64_t>(extent);
}

// Holds a control block's accumulate spin lock (none without a control block). The holder copies and
// computes only, so a waiter spins a short while; it yields the CPU now and then, for a holder that
// shares it.
class Accumulating {
 public:
  explicit Accumulating(DirectControl* control) noexcept : control_(control) {
    if (control_ == nullptr) return;
    for (unsigned spins = 1;; ++spins) {
      std::uint32_t free = 0;
      if (control_->accumulating.compare_exchange_weak(free, 1, std::memory_order_acquire, std::memory_order_relaxed)) {
        return;
      }
      if (spins % 64 == 0) sched_yield();
    }
  }
  ~Accumulating() {
    if (control_ != nullptr) control_->accumulating.store(0, std::memory_order_release);
  }
  Accumulating(const Accumulating&) = delete;
  Accumulating& operator=(const Accumulating&) = delete;

 private:
  DirectControl* control_;
};

// Applies one request (its bytes are complete) and replies.
void apply(engine::Engine& engine, WindowTarget& t, int origin, const std::vector<std::byte>& bytes) {
  RmaHeader h;
  if (bytes.size() < sizeof h) return;  // not from this library: nothing to answer
  std::memcpy(&h, bytes.data(), sizeof h);
  const std::byte* cursor = bytes.data() + sizeof h;
  const std::size_t piece_bytes = (static_cast<std::size_t>(h.piece_count) + h.element_piece_count) * sizeof(Piece);
  // Subtractions, not a sum that a huge data_bytes could wrap past the message's length.
  if (bytes.size() - sizeof h < piece_bytes || bytes.size() - sizeof h - piece_bytes < h.data_bytes) return;
  std::vector<Piece> pieces(h.piece_count);
  if (!pieces.empty()) std::memcpy(pieces.data(), cursor, pieces.size() * sizeof(Piece));
  cursor += h.piece_count * sizeof(Piece);
  std::vector<Piece> element_pieces(h.element_piece_count);
  if (!element_pieces.empty()) std::memcpy(element_pieces.data(), cursor, element_pieces.size() * sizeof(Piece));
  cursor += h.element_piece_count * sizeof(Piece);

  switch (h.kind) {
    case RmaKind::lock:
      if (t.waiters.empty() && try_take(t, h.exclusive != 0)) {
        send_reply(engine, t, origin, h.reply_tag, MPI_SUCCESS);
      } else {
        t.waiters.push_back({origin, h.reply_tag, h.exclusive != 0});
      }
      return;
    case RmaKind::unlock:
      give_back(t, h.exclusive != 0);
      send_reply(engine, t, origin, h.reply_tag, MPI_SUCCESS);
      grant_waiters(engine, t);
      return;
    default: break;
  }
  std::vector<std::byte> fetched;
  const int error = apply_access(t.memory, h, pieces, element_pieces, cursor, fetched);
  send_reply(engine, t, origin, h.reply_tag, error, fetched.data(), error == MPI_SUCCESS ? fetched.size() : 0);
}

bool serve(engine::Engine& engine, WindowTarget& t) {
  bool did = false;
  engine::Completion c;
  while (engine::MatchedMessage* m = engine.improbe(t.view, engine::kAnySource, kRequestTag, &c)) {
    WindowTarget::Incoming in;
    in.origin = c.source;
    in.bytes.resize(c.bytes);
    in.receive = engine.mrecv(t.view, m, in.bytes.data(), in.bytes.size());
    t.incoming.push_back(std::move(in));
    did = true;
  }
  while (!t.incoming.empty() && engine.take_completion(t.incoming.front().receive, &c)) {
    WindowTarget::Incoming in = std::move(t.incoming.front());
    t.incoming.pop_front();
    if (c.lost_peer < 0 && !c.cancelled) apply(engine, t, in.origin, in.bytes);
    did = true;
  }
  if (t.memory.control != nullptr && !t.waiters.empty()) {
    const std::size_t waiting = t.waiters.size();
    grant_waiters(engine, t);
    if (t.waiters.size() != waiting) did = true;
  }
  std::erase_if(t.replies, [&](WindowTarget::Outgoing& out) {
    if (!engine.is_complete(out.send, nullptr)) return false;
    engine.release(out.send);
    return true;
  });
  return did;
}

}  // namespace

WindowTable& windows() {
  static WindowTable table;
  return table;
}

std::recursive_mutex& window_mutex() {
  static std::recursive_mutex mutex;
  return mutex;
}

void add_window_target(WindowTarget* target) {
  const std::lock_guard lock(window_mutex());
  targets().push_back(target);
  windows_open.fetch_add(1, std::memory_order_release);
}

void remove_window_target(WindowTarget* target) {
  const std::lock_guard lock(window_mutex());
  std::erase(targets(), target);
  windows_open.fetch_sub(1, std::memory_order_release);
}

bool service_windows(engine::Engine& engine, bool try_only) {
  std::unique_lock lock(window_mutex(), std::defer_lock);
  if (try_only) {
    if (!lock.try_lock()) return false;
  } else {
    lock.lock();
  }
  bool did = false;
  for (WindowTarget* t : targets()) {
    if (serve(engine, *t)) did = true;
  }
  return did;
}

bool try_lock_direct(DirectControl& control, bool exclusive) noexcept {
  std::uint64_t seen = control.lock.load(std::memory_order_relaxed);
  for (;;) {
    if ((seen & DirectControl::kExclusive) != 0 || (exclusive && seen != 0)) return false;
    const std::uint64_t wanted = exclusive ? DirectControl::kExclusive : seen + 1;
    if (control.lock.compare_exchange_weak(seen, wanted, std::memory_order_acquire, std::memory_order_relaxed)) {
      return true;
    }
  }
}

void unlock_direct(DirectControl& control, bool exclusive) noexcept {
  if (exclusive) {
    control.lock.store(0, std::memory_order_release);
  } else {
    control.lock.fetch_sub(1, std::memory_order_release);
  }
}

int apply_access(const WindowMemory& memory, const RmaHeader& h, const std::vector<Piece>& pieces,
                 const std::vector<Piece>& element_pieces, const std::byte* data, std::vector<std::byte>& fetched) {
  // Counts whose bytes, or whose span of extents, would not fit 63 bits describe nothing in this window.
  constexpr std::uint64_t kLimit = std::uint64_t{1} << 62;
  if (h.count > kLimit || (h.item_size != 0 && h.count > kLimit / h.item_size) ||
      (h.extent != 0 && h.count > kLimit / extent_magnitude(h.extent))) {
    return MPI_ERR_RMA_RANGE;
  }
  std::byte* at = locate(memory, h, pieces);
  if (at == nullptr) return MPI_ERR_RMA_RANGE;
  const std::size_t target_bytes = h.count * h.item_size;
  switch (h.kind) {
    case RmaKind::put:
      if (h.data_bytes != target_bytes) break;
      scatter(data, pieces, h.extent, h.count, at);
      return MPI_SUCCESS;
    case RmaKind::get:
      fetched.resize(target_bytes);
      gather(at, pieces, h.extent, h.count, fetched.data());
      return MPI_SUCCESS;
    case RmaKind::compare_and_swap: {
      // data: the new value, then the value compared with
      if (h.data_bytes != 2 * target_bytes) break;
      const Accumulating serial(memory.control);
      fetched.resize(target_bytes);
      gather(at, pieces, h.extent, h.count, fetched.data());
      if (std::memcmp(fetched.data(), data + target_bytes, target_bytes) == 0) {
        scatter(data, pieces, h.extent, h.count, at);
      }
      return MPI_SUCCESS;
    }
    case RmaKind::accumulate:
    case RmaKind::get_accumulate: {
      const auto op = static_cast<coll::Op>(h.op);
      if (op != coll::Op::no_op && h.data_bytes != target_bytes) break;
      std::size_t element_size = 0;
      for (const Piece& p : element_pieces) element_size += p.length;
      const auto kind = kind_of(h.element_type);
      const bool reduces = op != coll::Op::no_op && op != coll::Op::replace;
      if (reduces && (element_size == 0 || !kind || target_bytes % element_size != 0)) break;
      const Accumulating serial(memory.control);
      // Contiguous elements without padding, aligned as their type: reduced in place, with no copies.
      const auto alignment = std::min<std::uintptr_t>(h.element_extent, alignof(std::max_align_t));
      if (reduces && contiguous(pieces, h.extent) && element_pieces.size() == 1 &&
          element_pieces[0].length == h.element_extent &&
          ((reinterpret_cast<std::uintptr_t>(at) | reinterpret_cast<std::uintptr_t>(data)) % alignment) == 0) {
        if (h.kind == RmaKind::get_accumulate) fetched.assign(at, at + target_bytes);
        return coll::reduce_local(op, *kind, data, at, target_bytes / element_size).ok() ? MPI_SUCCESS : MPI_ERR_INTERN;
      }
      fetched.resize(target_bytes);
      gather(at, pieces, h.extent, h.count, fetched.data());
      if (op == coll::Op::replace) {
        scatter(data, pieces, h.extent, h.count, at);
      } else if (reduces) {
        // Packed elements into the C layout the reductions work on (pair types have padding there).
        const std::uint64_t n = target_bytes / element_size;
        std::vector<std::byte> in(n * h.element_extent);
        std::vector<std::byte> inout(n * h.element_extent);
        scatter(data, element_pieces, h.element_extent, n, in.data());
        scatter(fetched.data(), element_pieces, h.element_extent, n, inout.data());
        if (!coll::reduce_local(op, *kind, in.data(), inout.data(), n).ok()) return MPI_ERR_INTERN;
        std::vector<std::byte> updated(target_bytes);
        gather(inout.data(), element_pieces, h.element_extent, n, updated.data());
        scatter(updated.data(), pieces, h.extent, h.count, at);
      }
      if (h.kind == RmaKind::accumulate) fetched.clear();
      return MPI_SUCCESS;
    }
    default: break;
  }
  // The origin checks what it sends; a request that still does not fit is refused, not applied.
  return MPI_ERR_INTERN;
}

ByteSpan span_of(const std::vector<Piece>& pieces, std::int64_t extent, std::uint64_t count) noexcept {
  if (pieces.empty() || count == 0) return {};
  std::int64_t low = std::numeric_limits<std::int64_t>::max();
  std::int64_t high = std::numeric_limits<std::int64_t>::min();
  for (const Piece& p : pieces) {
    if (p.length == 0) continue;
    low = std::min<std::int64_t>(low, p.displacement);
    high = std::max<std::int64_t>(high, p.displacement + static_cast<std::int64_t>(p.length));
  }
  if (low > high) return {};
  const std::int64_t last = static_cast<std::int64_t>(count - 1) * extent;
  return {std::min(low, low + last), std::max(high, high + last)};
}

}  // namespace ftmpi::mpi

#include "ftmpi/frag/fragmenter.hpp"

#include <algorithm>
#include <cstring>
#include <limits>
#include <string>
#include <type_traits>

#include "ftmpi/frag/wire.hpp"

namespace ftmpi::frag {
namespace {

using base::Errc;
using base::Status;

constexpr std::uint64_t kMaxSeq = std::numeric_limits<std::uint64_t>::max();

Status check_message(std::uint64_t message_length, std::uint64_t seq_first, std::uint32_t max_payload) {
  if (max_payload == 0) return Status(Errc::invalid_argument, "max_payload 0");
  if (seq_first == 0) return Status(Errc::invalid_argument, "seq_first 0 (sequence numbers start at 1)");
  if (seq_first - 1 > kMaxSeq - message_seq_count(message_length)) {
    return Status(Errc::invalid_argument, "sequence range of a " + std::to_string(message_length) +
                                              "-byte message from " + std::to_string(seq_first) +
                                              " overflows 64 bits");
  }
  return {};
}

// Pieces at least this long are copied and checksummed in one fused pass. Shorter ones are copied with
// memcpy and their bytes checksummed afterwards from the contiguous fragment buffer, in batches small
// enough to still be in cache: a fused call per 8-byte piece costs more than the bytes it moves.
constexpr std::size_t kFusedCopyMin = 256;
constexpr std::size_t kDeferredBatch = 4096;

// memcpy for the short pieces of a derived datatype, inlined: at these sizes a library call costs more
// than the move. Two overlapping fixed-size moves cover every length in a power-of-two band.
inline void copy_short(std::byte* dst, const std::byte* src, std::size_t n) noexcept {
  if (n >= 8 && n <= 16) {
    std::memcpy(dst, src, 8);
    std::memcpy(dst + n - 8, src + n - 8, 8);
  } else if (n >= 4 && n < 8) {
    std::memcpy(dst, src, 4);
    std::memcpy(dst + n - 4, src + n - 4, 4);
  } else {
    std::memcpy(dst, src, n);
  }
}

// The fragment bytes [0, done) are checksummed; those up to the latest copy are waiting for it.
class DeferredChecksum {
 public:
  DeferredChecksum(const std::byte* fragment, Checksummer& sum) noexcept : fragment_(fragment), sum_(sum) {}
  // Bytes up to `end` were copied without being checksummed.
  void copied(std::size_t end) noexcept {
    if (end - done_ >= kDeferredBatch) catch_up(end);
  }
  // Checksums the waiting bytes up to `end`.
  void catch_up(std::size_t end) noexcept {
    sum_.update(fragment_ + done_, end - done_);
    done_ = end;
  }
  // Bytes up to `end` were checksummed while copied.
  void skip(std::size_t end) noexcept { done_ = end; }

 private:
  const std::byte* fragment_;
  Checksummer& sum_;
  std::size_t done_ = 0;
};

}  // namespace

std::uint64_t FragmentRange::size() const noexcept {
  if (first_offset_ == end_offset_) return 1;
  return (end_offset_ - first_offset_ - 1) / max_payload_ + 1;
}

FragmentPlan FragmentRange::fragment(std::uint64_t index) const noexcept {
  if (first_offset_ == end_offset_) return {first_offset_, 0, first_seq_, 1};
  const std::uint64_t skipped = index * max_payload_;
  const std::uint64_t offset = first_offset_ + skipped;
  const auto length = static_cast<std::uint32_t>(std::min<std::uint64_t>(max_payload_, end_offset_ - offset));
  return {offset, length, first_seq_ + skipped, length};
}

base::Result<FragmentRange> cut_message(std::uint64_t message_length, std::uint64_t seq_first,
                                        std::uint32_t max_payload) {
  if (Status s = check_message(message_length, seq_first, max_payload); !s) return s;
  return FragmentRange(0, message_length, seq_first, max_payload);
}

base::Result<FragmentRange> recut(std::uint64_t message_length, std::uint64_t message_seq_first,
                                  std::uint64_t range_first, std::uint64_t range_count,
                                  std::uint32_t max_payload) {
  if (Status s = check_message(message_length, message_seq_first, max_payload); !s) return s;
  const std::uint64_t message_count = message_seq_count(message_length);
  if (range_count == 0 || range_first < message_seq_first || range_first - message_seq_first >= message_count ||
      range_count > message_count - (range_first - message_seq_first)) {
    return Status(Errc::invalid_argument,
                  "range " + std::to_string(range_first) + "+" + std::to_string(range_count) +
                      " is not inside the message's " + std::to_string(message_seq_first) + "+" +
                      std::to_string(message_count));
  }
  if (message_length == 0) return FragmentRange(0, 0, message_seq_first, max_payload);
  const std::uint64_t first_offset = range_first - message_seq_first;
  return FragmentRange(first_offset, first_offset + range_count, range_first, max_payload);
}

base::Result<PiecesLayout> PiecesLayout::make(std::span<const Piece> pieces, std::size_t count,
                                              std::ptrdiff_t extent, std::span<const std::uint64_t> starts) {
  constexpr std::uint64_t kMaxAddress = std::numeric_limits<std::ptrdiff_t>::max();
  const auto refuse = [](const char* why) { return Status(Errc::invalid_argument, why); };
  std::uint64_t piece_bytes = 0;
  std::ptrdiff_t lowest = 0;
  std::ptrdiff_t highest = 0;
  if (!starts.empty() && starts.size() != pieces.size()) return refuse("one start per piece");
  for (std::size_t i = 0; i < pieces.size(); ++i) {
    const Piece& piece = pieces[i];
    if (!starts.empty() && starts[i] != piece_bytes) return refuse("a start is not the sum of the lengths before it");
    std::ptrdiff_t piece_end = 0;
    if (piece.length > kMaxAddress ||
        __builtin_add_overflow(piece.displacement, static_cast<std::ptrdiff_t>(piece.length), &piece_end) ||
        __builtin_add_overflow(piece_bytes, piece.length, &piece_bytes)) {
      return refuse("a piece reaches beyond the address space");
    }
    lowest = std::min(lowest, piece.displacement);
    highest = std::max(highest, piece_end);
  }
  std::uint64_t packed = 0;
  if (__builtin_mul_overflow(piece_bytes, count, &packed) || packed > kMaxAddress) {
    return refuse("packed size overflows");
  }
  // The last repetition's offset, then the span of every byte addressed, must be representable.
  std::ptrdiff_t last_start = 0;
  std::ptrdiff_t span_low = 0;
  std::ptrdiff_t span_high = 0;
  if (count > 0 && (__builtin_mul_overflow(static_cast<std::ptrdiff_t>(count - 1), extent, &last_start) ||
                    __builtin_add_overflow(std::min<std::ptrdiff_t>(last_start, 0), lowest, &span_low) ||
                    __builtin_add_overflow(std::max<std::ptrdiff_t>(last_start, 0), highest, &span_high))) {
    return refuse("repetitions reach beyond the address space");
  }
  return PiecesLayout(pieces, starts, count, extent, piece_bytes);
}

PiecesLayout PiecesLayout::contiguous(std::size_t length) noexcept {
  static constexpr Piece kOneByte{0, 1};
  return PiecesLayout(std::span<const Piece>(&kOneByte, 1), {}, length, 1, 1);
}

namespace {

// A strided vector of short blocks (one piece of 4, 8 or 16 bytes per repetition, repetitions apart):
// visiting block by block costs a few nanoseconds each, more than the bytes; a loop over fixed-size moves
// that the compiler turns into plain loads and stores costs a fraction of that. Packed bytes
// [offset, offset + n) move between `packed` and the strided memory at `base` (into `packed` unless it is
// const); the checksum is computed afterwards over the packed bytes, which are in cache.
template <std::size_t kBlock, typename Packed>
void move_strided(const PiecesLayout& layout, std::uintptr_t base, std::uint64_t offset, Packed* packed,
                  std::size_t n) noexcept {
  constexpr bool kGather = !std::is_const_v<Packed>;  // into the packed bytes, else out of them
  const Piece& piece = layout.pieces()[0];
  const std::uint64_t first = offset / kBlock;
  std::size_t within = static_cast<std::size_t>(offset % kBlock);
  std::uintptr_t at = base + static_cast<std::uintptr_t>(static_cast<std::ptrdiff_t>(first) * layout.extent() +
                                                         piece.displacement);
  const auto step = static_cast<std::uintptr_t>(layout.extent());
  const auto move = [](Packed* packed_at, std::uintptr_t memory, std::size_t count) {
    auto* block = reinterpret_cast<std::byte*>(memory);
    if constexpr (kGather) {
      std::memcpy(packed_at, block, count);
    } else {
      std::memcpy(block, packed_at, count);
    }
  };
  std::size_t done = 0;
  if (within != 0) {  // the fragment starts inside a block
    const std::size_t head = std::min(kBlock - within, n);
    move(packed, at + within, head);
    done = head;
    at += step;
  }
  for (; n - done >= kBlock; done += kBlock, at += step) move(packed + done, at, kBlock);
  if (done < n) move(packed + done, at, n - done);
}

// Whether move_strided takes this layout, and with which block size (0: not).
std::size_t strided_block(const PiecesLayout& layout) noexcept {
  if (layout.pieces().size() != 1) return 0;
  const std::size_t block = layout.pieces()[0].length;
  if (static_cast<std::ptrdiff_t>(block) == layout.extent()) return 0;  // contiguous: one block
  return block == 4 || block == 8 || block == 16 ? block : 0;
}

// gather_with_checksum's and scatter_with_checksum's fast path: false when the layout is not a vector of
// short blocks (or the range is not in the message: the general walk then says why).
template <typename Packed>
bool moved_strided(const PiecesLayout& layout, const void* base, std::uint64_t offset, std::span<Packed> fragment,
                   Checksummer& sum) noexcept {
  const std::size_t block = strided_block(layout);
  if (block == 0 || !holds(layout, offset, fragment.size())) return false;
  const auto memory = reinterpret_cast<std::uintptr_t>(base);
  switch (block) {
    case 4: move_strided<4>(layout, memory, offset, fragment.data(), fragment.size()); break;
    case 8: move_strided<8>(layout, memory, offset, fragment.data(), fragment.size()); break;
    default: move_strided<16>(layout, memory, offset, fragment.data(), fragment.size()); break;
  }
  sum.update(fragment.data(), fragment.size());
  return true;
}

}  // namespace

base::Status gather_with_checksum(const PiecesLayout& layout, const void* base, std::uint64_t message_offset,
                                  std::span<std::byte> fragment, Checksummer& sum) {
  if (moved_strided(layout, base, message_offset, fragment, sum)) return {};
  DeferredChecksum deferred(fragment.data(), sum);
  Status s = visit_blocks(layout, static_cast<const std::byte*>(base), message_offset, fragment.size(),
                         [&](const std::byte* block, std::size_t at, std::size_t n) {
                           if (n >= kFusedCopyMin) {
                             deferred.catch_up(at);
                             sum.copy(fragment.data() + at, block, n);
                             deferred.skip(at + n);
                           } else {
                             copy_short(fragment.data() + at, block, n);
                             deferred.copied(at + n);
                           }
                         });
  if (s) deferred.catch_up(fragment.size());
  return s;
}

base::Status scatter_with_checksum(const PiecesLayout& layout, void* base, std::uint64_t message_offset,
                                   std::span<const std::byte> fragment, Checksummer& sum) {
  if (moved_strided(layout, base, message_offset, fragment, sum)) return {};
  DeferredChecksum deferred(fragment.data(), sum);
  Status s = visit_blocks(layout, static_cast<std::byte*>(base), message_offset, fragment.size(),
                         [&](std::byte* block, std::size_t at, std::size_t n) {
                           if (n >= kFusedCopyMin) {
                             deferred.catch_up(at);
                             sum.copy(block, fragment.data() + at, n);
                             deferred.skip(at + n);
                           } else {
                             copy_short(block, fragment.data() + at, n);
                             deferred.copied(at + n);
                           }
                         });
  if (s) deferred.catch_up(fragment.size());
  return s;
}

}  // namespace ftmpi::frag

// The fragmenter: cuts a message into frames of at most a rail's payload size, and copies fragment bytes
// between a message's memory layout and a contiguous frame buffer while checksumming them
// (docs/wire-format.md, "Fragments").
//
// Byte sequence numbers are per byte, so a fragment is fully named by its byte range: when a rail fails,
// an unacknowledged range can be cut again to another rail's MTU, whatever the original cuts were.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <ranges>
#include <span>
#include <string>

#include "ftmpi/base/status.hpp"
#include "ftmpi/frag/checksum.hpp"

namespace ftmpi::frag {

// One frame's share of a message.
struct FragmentPlan {
  std::uint64_t offset = 0;     // first byte within the message
  std::uint32_t length = 0;     // payload bytes; 0 only for the fragment of a zero-byte message
  std::uint64_t seq_first = 0;  // byte sequence number of the first byte
  std::uint32_t seq_count = 0;  // max(length, 1)

  bool operator==(const FragmentPlan&) const = default;
};

// The fragments covering a byte range of a message, in order, computed as they are visited: nothing is
// allocated per fragment, and fragment(i) gives any one directly (rails take fragments round-robin).
class FragmentRange {
 public:
  class Iterator;

  Iterator begin() const noexcept;
  Iterator end() const noexcept;
  // Number of fragments: at least 1.
  std::uint64_t size() const noexcept;
  // The index-th fragment, index < size().
  FragmentPlan fragment(std::uint64_t index) const noexcept;

 private:
  FragmentRange() noexcept = default;  // only for a default-constructed Iterator
  friend base::Result<FragmentRange> cut_message(std::uint64_t, std::uint64_t, std::uint32_t);
  friend base::Result<FragmentRange> recut(std::uint64_t, std::uint64_t, std::uint64_t, std::uint64_t,
                                           std::uint32_t);
  FragmentRange(std::uint64_t first_offset, std::uint64_t end_offset, std::uint64_t first_seq,
                std::uint32_t max_payload) noexcept
      : first_offset_(first_offset), end_offset_(end_offset), first_seq_(first_seq), max_payload_(max_payload) {}

  std::uint64_t first_offset_ = 0;
  std::uint64_t end_offset_ = 0;  // first_offset_ == end_offset_: the zero-byte message
  std::uint64_t first_seq_ = 0;   // sequence number of the byte at first_offset_
  std::uint32_t max_payload_ = 1;
};

class FragmentRange::Iterator {
 public:
  using value_type = FragmentPlan;
  using difference_type = std::ptrdiff_t;
  using iterator_category = std::forward_iterator_tag;

  Iterator() noexcept = default;
  FragmentPlan operator*() const noexcept { return range_.fragment(index_); }
  Iterator& operator++() noexcept {
    ++index_;
    return *this;
  }
  Iterator operator++(int) noexcept {
    Iterator before = *this;
    ++index_;
    return before;
  }
  bool operator==(const Iterator& other) const noexcept { return index_ == other.index_; }

 private:
  friend class FragmentRange;
  Iterator(const FragmentRange& range, std::uint64_t index) noexcept : range_(range), index_(index) {}
  FragmentRange range_;  // a copy, so that an iterator outlives the range it came from
  std::uint64_t index_ = 0;
};

inline FragmentRange::Iterator FragmentRange::begin() const noexcept { return {*this, 0}; }
inline FragmentRange::Iterator FragmentRange::end() const noexcept { return {*this, size()}; }

// Cuts a whole message of `message_length` bytes whose first byte takes sequence number `seq_first`
// into fragments of at most `max_payload` bytes. A zero-byte message gives one fragment of length 0
// taking one sequence number. Refuses (invalid_argument) max_payload 0, seq_first 0, and a sequence
// range that would pass 2^64 - 1.
base::Result<FragmentRange> cut_message(std::uint64_t message_length, std::uint64_t seq_first,
                                        std::uint32_t max_payload);

// Cuts again the part [range_first, range_first + range_count) of the sequence range of a message (as
// cut_message had it) to a new `max_payload`: the unacknowledged bytes of a failed rail, moved to a
// surviving one. The range may start and end anywhere inside the message, straddling old fragments.
// Refuses (invalid_argument) an empty range or one reaching outside the message.
base::Result<FragmentRange> recut(std::uint64_t message_length, std::uint64_t message_seq_first,
                                  std::uint64_t range_first, std::uint64_t range_count,
                                  std::uint32_t max_payload);

static_assert(std::forward_iterator<FragmentRange::Iterator>);
static_assert(std::ranges::forward_range<FragmentRange>);

// A block of a message's memory, relative to the base pointer of one repetition.
struct Piece {
  std::ptrdiff_t displacement = 0;  // may be negative (MPI lower bounds)
  std::size_t length = 0;
};

// How a message lies in memory: `pieces` (a flattened, merged datatype), repeated `count` times, each
// repetition `extent` bytes after the previous one. Its packed form, the bytes the wire carries, is the
// pieces in order, repetition after repetition. A view: the pieces (and starts) must outlive it.
class PiecesLayout {
 public:
  // Refuses (invalid_argument) a layout whose packed size or address span overflows. `starts`, if not
  // empty, gives the packed offset of each piece within a repetition (the running sum of the lengths,
  // from 0), so that a fragment's first piece is found by binary search: one repetition of a large
  // strided type has thousands of pieces, and a fragment may start anywhere among them. Refused if it
  // does not match the pieces.
  static base::Result<PiecesLayout> make(std::span<const Piece> pieces, std::size_t count,
                                         std::ptrdiff_t extent, std::span<const std::uint64_t> starts = {});
  // A contiguous buffer of `length` bytes.
  static PiecesLayout contiguous(std::size_t length) noexcept;

  std::uint64_t packed_size() const noexcept { return piece_bytes_ * count_; }
  std::uint64_t piece_bytes() const noexcept { return piece_bytes_; }  // packed bytes of one repetition
  std::span<const Piece> pieces() const noexcept { return pieces_; }
  std::span<const std::uint64_t> starts() const noexcept { return starts_; }  // empty, or one per piece
  std::size_t count() const noexcept { return count_; }
  std::ptrdiff_t extent() const noexcept { return extent_; }

 private:
  PiecesLayout(std::span<const Piece> pieces, std::span<const std::uint64_t> starts, std::size_t count,
               std::ptrdiff_t extent, std::uint64_t piece_bytes) noexcept
      : pieces_(pieces), starts_(starts), count_(count), extent_(extent), piece_bytes_(piece_bytes) {}

  std::span<const Piece> pieces_;
  std::span<const std::uint64_t> starts_;
  std::size_t count_ = 0;
  std::ptrdiff_t extent_ = 0;
  std::uint64_t piece_bytes_ = 0;
};

// `base` + `displacement`, computed as integers: with MPI_BOTTOM the base is null and the displacements
// are absolute addresses, and arithmetic on a null pointer is undefined.
template <typename Byte>
Byte* at_address(Byte* base, std::ptrdiff_t displacement) noexcept {
  return reinterpret_cast<Byte*>(reinterpret_cast<std::uintptr_t>(base) + static_cast<std::uintptr_t>(displacement));
}

// Whether packed bytes [offset, offset + length) lie inside the message.
inline bool holds(const PiecesLayout& layout, std::uint64_t offset, std::size_t length) noexcept {
  return offset <= layout.packed_size() && length <= layout.packed_size() - offset;
}

// Visits the memory blocks that hold packed bytes [offset, offset + length) of the message at `base`, in
// packed order: visit(address of the block, offset of its first byte from `offset`, byte count). Blocks
// of zero bytes are skipped. Refuses (out_of_range) a range beyond the message's packed size.
template <typename Byte, typename Visit>
base::Status visit_blocks(const PiecesLayout& layout, Byte* base, std::uint64_t offset, std::size_t length,
                          Visit&& visit) {
  if (!holds(layout, offset, length)) {
    return base::Status(base::Errc::out_of_range, "bytes [" + std::to_string(offset) + ", +" +
                                                      std::to_string(length) + ") beyond the message's " +
                                                      std::to_string(layout.packed_size()));
  }
  if (length == 0) return {};
  const std::span<const Piece> pieces = layout.pieces();
  // One piece filling its extent: the repetitions abut, the message is one block (a contiguous buffer of
  // a basic type arrives like this).
  if (pieces.size() == 1 && static_cast<std::ptrdiff_t>(pieces[0].length) == layout.extent()) {
    visit(at_address(base, pieces[0].displacement + static_cast<std::ptrdiff_t>(offset)), std::size_t{0}, length);
    return {};
  }
  // One piece per repetition (a strided vector): a block per repetition, the address moving by the extent.
  if (pieces.size() == 1) {
    const Piece& piece = pieces[0];
    std::uint64_t repetition = offset / piece.length;
    std::size_t within = static_cast<std::size_t>(offset % piece.length);
    std::ptrdiff_t address = static_cast<std::ptrdiff_t>(repetition) * layout.extent() + piece.displacement;
    std::size_t done = 0;
    while (done < length) {
      const std::size_t n = std::min(piece.length - within, length - done);
      visit(at_address(base, address + static_cast<std::ptrdiff_t>(within)), done, n);
      done += n;
      within = 0;
      address += layout.extent();
    }
    return {};
  }
  // The first piece: a binary search over the starts when the layout has them, else a scan (cheap for the
  // few pieces of most datatypes, repeated by count/extent rather than listed).
  std::uint64_t repetition = offset / layout.piece_bytes();
  std::uint64_t within = offset % layout.piece_bytes();
  std::size_t index = 0;
  if (const std::span<const std::uint64_t> starts = layout.starts(); !starts.empty()) {
    index = static_cast<std::size_t>(std::upper_bound(starts.begin(), starts.end(), within) - starts.begin()) - 1;
    within -= starts[index];
  }
  while (within >= pieces[index].length) within -= pieces[index++].length;
  std::size_t done = 0;
  while (done < length) {
    const Piece& piece = pieces[index];
    const std::size_t n = std::min<std::size_t>(piece.length - within, length - done);
    const std::ptrdiff_t address = static_cast<std::ptrdiff_t>(repetition) * layout.extent() +
                                   piece.displacement + static_cast<std::ptrdiff_t>(within);
    if (n > 0) visit(at_address(base, address), done, n);  // zero-length pieces have no address to speak of
    done += n;
    within = 0;
    if (++index == pieces.size()) {
      index = 0;
      ++repetition;
    }
  }
  return {};
}

// Copies the packed bytes [message_offset, message_offset + fragment.size()) of the message at `base`
// into `fragment`, adding them to `sum` in the same pass. Refuses (out_of_range) a range beyond the
// message's packed size.
base::Status gather_with_checksum(const PiecesLayout& layout, const void* base, std::uint64_t message_offset,
                                  std::span<std::byte> fragment, Checksummer& sum);

// The receiver's inverse: copies `fragment` into the packed bytes starting at `message_offset` of the
// message at `base`, adding them to `sum`; the caller compares sum.value() with the frame's payload
// checksum and counts the bytes delivered only when they match.
base::Status scatter_with_checksum(const PiecesLayout& layout, void* base, std::uint64_t message_offset,
                                   std::span<const std::byte> fragment, Checksummer& sum);

}  // namespace ftmpi::frag

// Payload checksums, computed while the data is copied (DESIGN.md section 4).
//
// CRC32C (Castagnoli, the iSCSI polynomial) is the default on unreliable paths; sum32 (a 32-bit additive
// sum of little-endian words) is the cheap option; none measures what checksumming costs.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "ftmpi/base/status.hpp"

namespace ftmpi::frag {

enum class ChecksumKind : std::uint8_t { none = 0, crc32c = 1, sum32 = 2 };

std::string_view to_string(ChecksumKind kind) noexcept;
base::Result<ChecksumKind> parse_checksum_kind(std::string_view text);

// CRC32C of `n` bytes, continuing from `crc` (the value returned for the bytes before).
std::uint32_t crc32c(const void* data, std::size_t n, std::uint32_t crc = 0) noexcept;

// A running checksum over a byte stream fed in pieces of any length and alignment (a message gathered
// from a derived datatype's pieces gives the same value as the same bytes in one piece).
class Checksummer {
 public:
  explicit Checksummer(ChecksumKind kind) noexcept : kind_(kind) {}
  ChecksumKind kind() const noexcept { return kind_; }
  // Adds bytes to the checksum.
  void update(const void* data, std::size_t n) noexcept;
  // Copies `n` bytes from src to dst and adds them to the checksum, in one pass over the data.
  void copy(void* dst, const void* src, std::size_t n) noexcept;
  // The checksum of everything fed so far (0 for ChecksumKind::none).
  std::uint32_t value() const noexcept;

 private:
  ChecksumKind kind_;
  std::uint32_t state_ = 0;     // crc32c: running crc; sum32: running sum of whole words
  std::uint32_t partial_ = 0;   // sum32: bytes of an incomplete word, little-endian
  std::uint8_t partial_len_ = 0;
};

// One-shot forms.
std::uint32_t checksum(ChecksumKind kind, const void* data, std::size_t n) noexcept;
std::uint32_t copy_with_checksum(ChecksumKind kind, void* dst, const void* src, std::size_t n) noexcept;
// The receiver's verify-while-copy: copies, and says whether the bytes match `expected`. On a mismatch
// dst holds the (bad) bytes; the caller must not count them as delivered.
bool copy_and_verify(ChecksumKind kind, void* dst, const void* src, std::size_t n,
                     std::uint32_t expected) noexcept;

}  // namespace ftmpi::frag

// Private to the checksum sources: the engines, and the GF(2) arithmetic their constants come from.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "ftmpi/frag/checksum.hpp"

namespace ftmpi::frag::checksum_detail {

// CRC32C polynomial, bit-reflected (x^0 in bit 31 ... x^31 in bit 0; x^32 implied), as the crc32
// instruction and the slicing tables use it.
inline constexpr std::uint32_t kCrc32cPolyReflected = 0x82F63B78u;

// v * x^n mod P, for v and the result reflected. Shift constants for joining and folding CRC streams are
// such powers, computed at compile time so that no magic numbers need checking by hand.
constexpr std::uint32_t multiply_by_x_pow(std::uint32_t v, std::uint64_t n) {
  for (std::uint64_t i = 0; i < n; ++i) v = (v >> 1) ^ (kCrc32cPolyReflected & (0u - (v & 1u)));
  return v;
}
constexpr std::uint32_t x_pow_mod_p(std::uint64_t n) { return multiply_by_x_pow(0x80000000u, n); }

// The folding kernels multiply reflected 64-bit halves with PCLMULQDQ. Reading a 64-bit register v as
// V = sum v_i x^(63-i) (bit 0 the highest power) and a 128-bit one likewise with x^(127-i), the carry-less
// product of two such values U and V is U*V*x: the bit numbers add, the exponents are counted from the top.
// A 32-bit reflected value u (as x_pow_mod_p returns) widened to 64 bits reads as u*x^32, and u << 1 as
// u*x^31; fold_by's constants are such shifts of powers of x mod P, so that each product lands where the
// accumulator it is added to reads it.

// Multiplying a 128-bit accumulator by x^distance mod P: its low quadword (the higher powers) by
// x^(distance+32), its high quadword by x^(distance-32), each shifted left by one (33-bit constants): the
// products land as (x^(distance+64) mod P) times the low half and (x^distance mod P) times the high half.
struct FoldBy {
  std::uint64_t low;
  std::uint64_t high;
};
constexpr FoldBy fold_by(std::uint64_t distance_bits) {
  return {std::uint64_t{x_pow_mod_p(distance_bits + 32)} << 1,
          std::uint64_t{x_pow_mod_p(distance_bits - 32)} << 1};
}

// Little-endian words from native ones, and loads from any alignment (one move each on x86).
constexpr std::uint64_t from_le64(std::uint64_t v) noexcept {
  return std::endian::native == std::endian::little ? v : __builtin_bswap64(v);
}
constexpr std::uint32_t from_le32(std::uint32_t v) noexcept {
  return std::endian::native == std::endian::little ? v : __builtin_bswap32(v);
}
inline std::uint64_t load_le64(const unsigned char* p) noexcept {
  std::uint64_t v;
  std::memcpy(&v, p, sizeof v);
  return from_le64(v);
}
inline std::uint32_t load_le32(const unsigned char* p) noexcept {
  std::uint32_t v;
  std::memcpy(&v, p, sizeof v);
  return from_le32(v);
}
// The last n < 4 bytes of a sum32 buffer as a zero-padded little-endian word.
inline std::uint32_t load_le_partial32(const unsigned char* p, std::size_t n) noexcept {
  std::uint32_t v = 0;
  for (std::size_t i = 0; i < n; ++i) v |= static_cast<std::uint32_t>(p[i]) << (8 * i);
  return v;
}

const ChecksumEngine& portable_engine() noexcept;
const ChecksumEngine& isal_engine() noexcept;

// x86-64 engines, and whether this CPU can run them.
bool cpu_has_sse42_engine() noexcept;
const ChecksumEngine& sse42_engine() noexcept;
bool cpu_has_avx2_engine() noexcept;
const ChecksumEngine& avx2_engine() noexcept;
bool cpu_has_avx512_engine() noexcept;
const ChecksumEngine& avx512_engine() noexcept;

}  // namespace ftmpi::frag::checksum_detail

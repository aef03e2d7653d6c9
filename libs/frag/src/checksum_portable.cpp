// The portable engine: slicing-by-8 CRC32C and scalar sums, for CPUs without the x86 instructions; tests
// select it to cover this path on any machine.
#include <array>
#include <cstring>

#include "checksum_engines.hpp"

namespace ftmpi::frag::checksum_detail {
namespace {

// kTables[k][b]: the CRC of byte b followed by k zero bytes, so that eight bytes are folded at once.
constexpr std::array<std::array<std::uint32_t, 256>, 8> make_slicing_tables() {
  std::array<std::array<std::uint32_t, 256>, 8> t{};
  for (std::uint32_t b = 0; b < 256; ++b) {
    std::uint32_t crc = b;
    for (int bit = 0; bit < 8; ++bit) crc = (crc >> 1) ^ (kCrc32cPolyReflected & (0u - (crc & 1u)));
    t[0][b] = crc;
  }
  for (std::size_t k = 1; k < 8; ++k)
    for (std::size_t b = 0; b < 256; ++b) t[k][b] = (t[k - 1][b] >> 8) ^ t[0][t[k - 1][b] & 0xFF];
  return t;
}
constexpr auto kTables = make_slicing_tables();

std::uint32_t crc_word(std::uint32_t crc, std::uint64_t word) noexcept {
  const std::uint64_t w = word ^ crc;
  return kTables[7][w & 0xFF] ^ kTables[6][(w >> 8) & 0xFF] ^ kTables[5][(w >> 16) & 0xFF] ^
         kTables[4][(w >> 24) & 0xFF] ^ kTables[3][(w >> 32) & 0xFF] ^ kTables[2][(w >> 40) & 0xFF] ^
         kTables[1][(w >> 48) & 0xFF] ^ kTables[0][w >> 56];
}

std::uint32_t crc_bytes(std::uint32_t crc, const unsigned char* p, std::size_t n) noexcept {
  for (std::size_t i = 0; i < n; ++i) crc = (crc >> 8) ^ kTables[0][(crc ^ p[i]) & 0xFF];
  return crc;
}

// Raw CRC32C update (no pre- or post-inversion).
std::uint32_t crc_update(std::uint32_t crc, const unsigned char* p, std::size_t n) noexcept {
  for (; n >= 8; n -= 8, p += 8) crc = crc_word(crc, load_le64(p));
  return crc_bytes(crc, p, n);
}

std::uint32_t crc32c_portable(const void* data, std::size_t n, std::uint32_t crc) noexcept {
  return ~crc_update(~crc, static_cast<const unsigned char*>(data), n);
}

std::uint32_t copy_crc32c_portable(void* dst, const void* src, std::size_t n, std::uint32_t crc) noexcept {
  auto* d = static_cast<unsigned char*>(dst);
  const auto* s = static_cast<const unsigned char*>(src);
  std::uint32_t c = ~crc;
  for (; n >= 8; n -= 8, s += 8, d += 8) {
    std::uint64_t word;
    std::memcpy(&word, s, 8);
    std::memcpy(d, &word, 8);
    c = crc_word(c, from_le64(word));
  }
  std::memcpy(d, s, n);
  return ~crc_bytes(c, d, n);
}

std::uint32_t sum32_portable(const void* data, std::size_t n) noexcept {
  const auto* p = static_cast<const unsigned char*>(data);
  std::uint32_t sum = 0;
  for (; n >= 4; n -= 4, p += 4) sum += load_le32(p);
  return sum + load_le_partial32(p, n);
}

std::uint32_t copy_sum32_portable(void* dst, const void* src, std::size_t n) noexcept {
  auto* d = static_cast<unsigned char*>(dst);
  const auto* s = static_cast<const unsigned char*>(src);
  std::uint32_t sum = 0;
  for (; n >= 4; n -= 4, s += 4, d += 4) {
    std::uint32_t word;
    std::memcpy(&word, s, 4);
    std::memcpy(d, &word, 4);
    sum += from_le32(word);
  }
  std::memcpy(d, s, n);
  return sum + load_le_partial32(d, n);
}

constexpr ChecksumEngine kPortable{"portable", crc32c_portable, copy_crc32c_portable, sum32_portable,
                                   copy_sum32_portable};

}  // namespace

const ChecksumEngine& portable_engine() noexcept { return kPortable; }

}  // namespace ftmpi::frag::checksum_detail

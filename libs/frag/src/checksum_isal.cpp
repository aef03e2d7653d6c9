// The ISA-L engine: Intel's crc32_iscsi, kept to measure our CRC against (never the default, see
// checksum.hpp). ISA-L neither inverts on entry nor on exit; crc32c() does both, so they are added here.
#if defined(__x86_64__)

#include <isa-l/crc.h>

#include <algorithm>
#include <climits>
#include <cstring>

#include "checksum_engines.hpp"

namespace ftmpi::frag::checksum_detail {
namespace {

// ISA-L takes an int length and a non-const pointer (it only reads).
std::uint32_t crc_update_isal(std::uint32_t crc, const unsigned char* p, std::size_t n) noexcept {
  while (n > 0) {
    const std::size_t piece = std::min<std::size_t>(n, INT_MAX);
    crc = crc32_iscsi(const_cast<unsigned char*>(p), static_cast<int>(piece), crc);
    p += piece, n -= piece;
  }
  return crc;
}

std::uint32_t crc32c_isal(const void* data, std::size_t n, std::uint32_t crc) noexcept {
  return ~crc_update_isal(~crc, static_cast<const unsigned char*>(data), n);
}

// ISA-L has no copying CRC: copy a block, then CRC it while it is still in the L1 cache.
std::uint32_t copy_crc32c_isal(void* dst, const void* src, std::size_t n, std::uint32_t crc) noexcept {
  constexpr std::size_t kBlock = 8 * 1024;
  auto* d = static_cast<unsigned char*>(dst);
  const auto* s = static_cast<const unsigned char*>(src);
  std::uint32_t c = ~crc;
  for (std::size_t i = 0; i < n; i += kBlock) {
    const std::size_t piece = std::min(kBlock, n - i);
    std::memcpy(d + i, s + i, piece);
    c = crc_update_isal(c, d + i, piece);
  }
  return ~c;
}

}  // namespace

// Sums are not ISA-L's business: they come from the baseline x86-64 engine.
const ChecksumEngine& isal_engine() noexcept {
  static const ChecksumEngine engine{"isa-l", crc32c_isal, copy_crc32c_isal, sse42_engine().sum32,
                                     sse42_engine().copy_sum32};
  return engine;
}

}  // namespace ftmpi::frag::checksum_detail

#endif  // defined(__x86_64__)

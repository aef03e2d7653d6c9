// Reference implementation; correct but slow. To be replaced by the hardware-accelerated one.
#include "ftmpi/frag/checksum.hpp"

#include <cstring>

namespace ftmpi::frag {

std::string_view to_string(ChecksumKind kind) noexcept {
  switch (kind) {
    case ChecksumKind::none: return "none";
    case ChecksumKind::crc32c: return "crc32c";
    case ChecksumKind::sum32: return "sum32";
  }
  return "?";
}

base::Result<ChecksumKind> parse_checksum_kind(std::string_view text) {
  if (text == "none") return ChecksumKind::none;
  if (text == "crc32c") return ChecksumKind::crc32c;
  if (text == "sum32") return ChecksumKind::sum32;
  return base::Status(base::Errc::invalid_argument,
                      "unknown checksum '" + std::string(text) + "' (crc32c, sum32 or none)");
}

std::uint32_t crc32c(const void* data, std::size_t n, std::uint32_t crc) noexcept {
  const auto* p = static_cast<const unsigned char*>(data);
  crc = ~crc;
  for (std::size_t i = 0; i < n; ++i) {
    crc ^= p[i];
    for (int k = 0; k < 8; ++k) crc = (crc >> 1) ^ (0x82F63B78u & (0u - (crc & 1u)));
  }
  return ~crc;
}

void Checksummer::update(const void* data, std::size_t n) noexcept {
  const auto* p = static_cast<const unsigned char*>(data);
  switch (kind_) {
    case ChecksumKind::none: return;
    case ChecksumKind::crc32c: state_ = crc32c(p, n, state_); return;
    case ChecksumKind::sum32:
      for (std::size_t i = 0; i < n; ++i) {
        partial_ |= static_cast<std::uint32_t>(p[i]) << (8 * partial_len_);
        if (++partial_len_ == 4) {
          state_ += partial_;
          partial_ = 0;
          partial_len_ = 0;
        }
      }
      return;
  }
}

void Checksummer::copy(void* dst, const void* src, std::size_t n) noexcept {
  if (n == 0) return;
  std::memcpy(dst, src, n);
  update(dst, n);
}

std::uint32_t Checksummer::value() const noexcept {
  return kind_ == ChecksumKind::sum32 ? state_ + partial_ : state_;
}

std::uint32_t checksum(ChecksumKind kind, const void* data, std::size_t n) noexcept {
  Checksummer c(kind);
  c.update(data, n);
  return c.value();
}

std::uint32_t copy_with_checksum(ChecksumKind kind, void* dst, const void* src, std::size_t n) noexcept {
  Checksummer c(kind);
  c.copy(dst, src, n);
  return c.value();
}

bool copy_and_verify(ChecksumKind kind, void* dst, const void* src, std::size_t n,
                     std::uint32_t expected) noexcept {
  return copy_with_checksum(kind, dst, src, n) == expected;
}

}  // namespace ftmpi::frag

// Checksum kinds, the running Checksummer, and the choice of engine (the kernels are in
// checksum_portable.cpp, checksum_x86.cpp and checksum_isal.cpp).
#include "ftmpi/frag/checksum.hpp"

#include <algorithm>
#include <array>
#include <cstring>
#include <string>

#include "checksum_engines.hpp"

namespace ftmpi::frag {
namespace {

struct EngineList {
  std::array<const ChecksumEngine*, 5> engines{};
  std::size_t count = 0;
  const ChecksumEngine* fastest = nullptr;

  void add(const ChecksumEngine& engine) { engines[count++] = &engine; }
};

// Chosen once, on first use, from what this CPU can run.
const EngineList& engine_list() noexcept {
  static const EngineList list = [] {
    using namespace checksum_detail;
    EngineList l;
    l.add(portable_engine());
    l.fastest = &portable_engine();
#if defined(__x86_64__)
    l.add(isal_engine());
    if (cpu_has_sse42_engine()) {
      l.add(sse42_engine());
      l.fastest = &sse42_engine();
    }
    if (cpu_has_avx2_engine()) {
      l.add(avx2_engine());
      l.fastest = &avx2_engine();
    }
    if (cpu_has_avx512_engine()) {
      l.add(avx512_engine());
      l.fastest = &avx512_engine();
    }
#endif
    return l;
  }();
  return list;
}

}  // namespace

std::string_view to_string(ChecksumKind kind) noexcept {
  switch (kind) {
    case ChecksumKind::none:
      return "none";
    case ChecksumKind::crc32c:
      return "crc32c";
    case ChecksumKind::sum32:
      return "sum32";
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

std::span<const ChecksumEngine* const> checksum_engines() noexcept {
  const EngineList& list = engine_list();
  return {list.engines.data(), list.count};
}

const ChecksumEngine& default_checksum_engine() noexcept { return *engine_list().fastest; }

std::uint32_t crc32c(const void* data, std::size_t n, std::uint32_t crc) noexcept {
  return default_checksum_engine().crc32c(data, n, crc);
}

void Checksummer::add_to_sum(unsigned char* dst, const unsigned char* src, std::size_t n) noexcept {
  // Words are counted from the start of the stream, not of this piece: first finish the pending one.
  const std::size_t head = partial_len_ == 0 ? 0 : std::min<std::size_t>(n, 4 - partial_len_);
  for (std::size_t i = 0; i < head; ++i) {
    if (dst != nullptr) dst[i] = src[i];
    partial_ |= static_cast<std::uint32_t>(src[i]) << (8 * partial_len_++);
  }
  if (partial_len_ == 4) {
    state_ += partial_;
    partial_ = 0;
    partial_len_ = 0;
  }
  if (head == n) return;
  src += head, n -= head;
  if (dst != nullptr) dst += head;

  const std::size_t whole = n & ~std::size_t{3};
  state_ += dst != nullptr ? engine_->copy_sum32(dst, src, whole) : engine_->sum32(src, whole);
  const std::size_t tail = n - whole;
  if (dst != nullptr) std::memcpy(dst + whole, src + whole, tail);
  partial_ = checksum_detail::load_le_partial32(src + whole, tail);
  partial_len_ = static_cast<std::uint8_t>(tail);
}

void Checksummer::update(const void* data, std::size_t n) noexcept {
  switch (kind_) {
    case ChecksumKind::none:
      return;
    case ChecksumKind::crc32c:
      state_ = engine_->crc32c(data, n, state_);
      return;
    case ChecksumKind::sum32:
      add_to_sum(nullptr, static_cast<const unsigned char*>(data), n);
      return;
  }
}

void Checksummer::copy(void* dst, const void* src, std::size_t n) noexcept {
  if (n == 0) return;
  switch (kind_) {
    case ChecksumKind::none:
      std::memcpy(dst, src, n);
      return;
    case ChecksumKind::crc32c:
      state_ = engine_->copy_crc32c(dst, src, n, state_);
      return;
    case ChecksumKind::sum32:
      add_to_sum(static_cast<unsigned char*>(dst), static_cast<const unsigned char*>(src), n);
      return;
  }
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

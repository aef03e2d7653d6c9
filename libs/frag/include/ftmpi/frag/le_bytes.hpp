// Little-endian stores and loads of the wire format's integer fields.
#pragma once

#include <bit>
#include <cstddef>
#include <cstring>
#include <type_traits>

namespace ftmpi::frag::le {

// On a little-endian host one move each (GCC 12 does not merge the byte-by-byte form into a move: it
// cost ~4 instructions per byte, 400 per header); elsewhere byte by byte, which is right on any host.
template <typename T>
void store(std::byte* out, std::size_t offset, T value) noexcept {
  using U = std::make_unsigned_t<T>;
  const auto bits = static_cast<U>(value);
  if constexpr (std::endian::native == std::endian::little) {
    std::memcpy(out + offset, &bits, sizeof(U));
  } else {
    for (std::size_t i = 0; i < sizeof(U); ++i) {
      out[offset + i] = static_cast<std::byte>(static_cast<unsigned char>(bits >> (8 * i)));
    }
  }
}

template <typename T>
T load(const std::byte* in, std::size_t offset) noexcept {
  using U = std::make_unsigned_t<T>;
  U bits = 0;
  if constexpr (std::endian::native == std::endian::little) {
    std::memcpy(&bits, in + offset, sizeof(U));
  } else {
    for (std::size_t i = 0; i < sizeof(U); ++i) {
      bits = static_cast<U>(bits | static_cast<U>(static_cast<U>(in[offset + i]) << (8 * i)));
    }
  }
  return static_cast<T>(bits);
}

}  // namespace ftmpi::frag::le

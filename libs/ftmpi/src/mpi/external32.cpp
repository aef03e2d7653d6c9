#include "mpi/external32.hpp"

#include <bit>
#include <complex>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

#include <fmt/format.h>

namespace ftmpi::mpi::external32 {
namespace {

// Wide enough for every integer of either signedness up to 64 bits.
__extension__ typedef __int128 Wide;
__extension__ typedef unsigned __int128 UWide;

enum class Form : std::uint8_t { raw, integer, ieee, long_double };

// One basic element: how it is held here and in external32.
struct Element {
  Form form = Form::raw;
  std::uint8_t native = 1;  // bytes here
  std::uint8_t external = 1;  // bytes in external32
  bool native_signed = false;
  bool external_signed = false;
  const char* name = "";
};

// The elements of one predefined type (two for a complex or a pair).
struct Elements {
  Element at[2];
  int count = 0;
};

template <typename T>
constexpr Element integer(const char* name, std::uint8_t external = sizeof(T)) {
  constexpr bool is_signed = std::numeric_limits<T>::is_signed;
  return {Form::integer, sizeof(T), external, is_signed, is_signed, name};
}
template <typename T>
constexpr Element ieee(const char* name) {
  static_assert(std::numeric_limits<T>::is_iec559);
  return {Form::ieee, sizeof(T), sizeof(T), false, false, name};
}
constexpr Element raw(const char* name) { return {Form::raw, 1, 1, false, false, name}; }
constexpr Element long_double() { return {Form::long_double, sizeof(long double), 16, false, false, "MPI_LONG_DOUBLE"}; }

Elements elements_of(int predefined) noexcept {
  const auto one = [](Element e) { return Elements{{e, {}}, 1}; };
  const auto two = [](Element a, Element b) { return Elements{{a, b}, 2}; };
  const Element c_int = integer<int>("MPI_INT");
  const Element c_long = integer<long>("MPI_LONG", 4);
  switch (c_twin(predefined)) {  // a Fortran or C++ type converts as its C twin
    case MPI_CHAR: return one(raw("MPI_CHAR"));
    case MPI_SIGNED_CHAR: return one(raw("MPI_SIGNED_CHAR"));
    case MPI_UNSIGNED_CHAR: return one(raw("MPI_UNSIGNED_CHAR"));
    case MPI_BYTE: return one(raw("MPI_BYTE"));
    case MPI_PACKED: return one(raw("MPI_PACKED"));
    case MPI_C_BOOL: return one(raw("MPI_C_BOOL"));
    // A wide character is 2 bytes, unsigned (UCS-2), in external32.
    case MPI_WCHAR: return one({Form::integer, sizeof(wchar_t), 2, std::is_signed_v<wchar_t>, false, "MPI_WCHAR"});
    case MPI_SHORT: return one(integer<short>("MPI_SHORT"));
    case MPI_UNSIGNED_SHORT: return one(integer<unsigned short>("MPI_UNSIGNED_SHORT"));
    case MPI_INT: return one(c_int);
    case MPI_UNSIGNED: return one(integer<unsigned>("MPI_UNSIGNED"));
    case MPI_LONG: return one(c_long);
    case MPI_UNSIGNED_LONG: return one(integer<unsigned long>("MPI_UNSIGNED_LONG", 4));
    case MPI_LONG_LONG_INT: return one(integer<long long>("MPI_LONG_LONG_INT"));
    case MPI_UNSIGNED_LONG_LONG: return one(integer<unsigned long long>("MPI_UNSIGNED_LONG_LONG"));
    case MPI_INT8_T: return one(integer<std::int8_t>("MPI_INT8_T"));
    case MPI_INT16_T: return one(integer<std::int16_t>("MPI_INT16_T"));
    case MPI_INT32_T: return one(integer<std::int32_t>("MPI_INT32_T"));
    case MPI_INT64_T: return one(integer<std::int64_t>("MPI_INT64_T"));
    case MPI_UINT8_T: return one(integer<std::uint8_t>("MPI_UINT8_T"));
    case MPI_UINT16_T: return one(integer<std::uint16_t>("MPI_UINT16_T"));
    case MPI_UINT32_T: return one(integer<std::uint32_t>("MPI_UINT32_T"));
    case MPI_UINT64_T: return one(integer<std::uint64_t>("MPI_UINT64_T"));
    case MPI_AINT: return one(integer<MPI_Aint>("MPI_AINT"));
    case MPI_OFFSET: return one(integer<MPI_Offset>("MPI_OFFSET"));
    case MPI_COUNT: return one(integer<MPI_Count>("MPI_COUNT"));
    case MPI_FLOAT: return one(ieee<float>("MPI_FLOAT"));
    case MPI_DOUBLE: return one(ieee<double>("MPI_DOUBLE"));
    case MPI_LONG_DOUBLE: return one(long_double());
    case MPI_C_COMPLEX: return two(ieee<float>("MPI_C_COMPLEX"), ieee<float>("MPI_C_COMPLEX"));
    case MPI_C_DOUBLE_COMPLEX: return two(ieee<double>("MPI_C_DOUBLE_COMPLEX"), ieee<double>("MPI_C_DOUBLE_COMPLEX"));
    case MPI_C_LONG_DOUBLE_COMPLEX: return two(long_double(), long_double());
    case MPI_FLOAT_INT: return two(ieee<float>("MPI_FLOAT_INT"), c_int);
    case MPI_DOUBLE_INT: return two(ieee<double>("MPI_DOUBLE_INT"), c_int);
    case MPI_LONG_INT: return two(c_long, c_int);
    case MPI_2INT: return two(c_int, c_int);
    case MPI_SHORT_INT: return two(integer<short>("MPI_SHORT"), c_int);
    case MPI_LONG_DOUBLE_INT: return two(long_double(), c_int);
    case MPI_2REAL: return two(ieee<float>("MPI_2REAL"), ieee<float>("MPI_2REAL"));
    case MPI_2DOUBLE_PRECISION: return two(ieee<double>("MPI_2DOUBLE_PRECISION"), ieee<double>("MPI_2DOUBLE_PRECISION"));
    default: return {};
  }
}

std::size_t external_size(const TypeNode& node) noexcept {
  std::size_t total = 0;
  if (!node.parts.empty()) {
    const Elements elements = elements_of(node.base);
    for (int k = 0; k < elements.count; ++k) total += elements.at[k].external;
    return total;
  }
  for (const TypeNode::Block& block : node.blocks) total += block.count * external_size(*block.child);
  return total;
}

// Calls visit(offset from the buffer, element) for every element of one item in type-map order;
// stops at the first visit that returns false (walk_items: of `count` items, extent apart).
template <typename Visit>
bool walk(const TypeNode& node, std::ptrdiff_t at, Visit& visit) {
  if (!node.parts.empty()) {
    const Elements elements = elements_of(node.base);
    int k = 0;
    for (const Piece& part : node.parts) {
      for (std::size_t offset = 0; offset < part.length && k < elements.count; ++k) {
        if (!visit(at + part.displacement + static_cast<std::ptrdiff_t>(offset), elements.at[k])) return false;
        offset += elements.at[k].native;
      }
    }
    return true;
  }
  for (const TypeNode::Block& block : node.blocks) {
    const std::ptrdiff_t extent = block.child->extent();
    for (std::size_t k = 0; k < block.count; ++k) {
      if (!walk(*block.child, at + block.displacement + static_cast<std::ptrdiff_t>(k) * extent, visit)) return false;
    }
  }
  return true;
}

template <typename Visit>
void walk_items(const TypeNode& type, std::size_t count, Visit& visit) {
  const std::ptrdiff_t extent = type.extent();
  for (std::size_t k = 0; k < count; ++k) {
    if (!walk(type, static_cast<std::ptrdiff_t>(k) * extent, visit)) return;
  }
}

void store_big_endian(std::uint64_t value, std::size_t bytes, std::byte* to) noexcept {
  for (std::size_t k = 0; k < bytes; ++k) to[k] = static_cast<std::byte>(value >> (8 * (bytes - 1 - k)));
}
std::uint64_t load_big_endian(const std::byte* from, std::size_t bytes) noexcept {
  std::uint64_t value = 0;
  for (std::size_t k = 0; k < bytes; ++k) value = (value << 8) | static_cast<std::uint64_t>(from[k]);
  return value;
}

// The host's bytes of an IEEE value in big-endian order, and back (the same operation).
void reverse_if_little(const std::byte* from, std::size_t bytes, std::byte* to) noexcept {
  if constexpr (std::endian::native == std::endian::big) {
    std::memcpy(to, from, bytes);
  } else {
    for (std::size_t k = 0; k < bytes; ++k) to[k] = from[bytes - 1 - k];
  }
}

// A big-endian two's complement integer of `bytes` bytes, as a wide value.
Wide load_wide(const std::byte* big, std::size_t bytes, bool is_signed) noexcept {
  const std::uint64_t bits = load_big_endian(big, bytes);
  if (!is_signed) return static_cast<Wide>(bits);
  const unsigned shift = 64 - 8 * static_cast<unsigned>(bytes);
  return static_cast<Wide>(static_cast<std::int64_t>(bits << shift) >> shift);
}
// The same in the host's byte order.
Wide load_native(const std::byte* from, std::size_t bytes, bool is_signed) noexcept {
  std::byte big[8];
  reverse_if_little(from, bytes, big);
  return load_wide(big, bytes, is_signed);
}
void store_native(Wide value, std::size_t bytes, std::byte* to) noexcept {
  std::byte big[8];
  store_big_endian(static_cast<std::uint64_t>(value), bytes, big);
  reverse_if_little(big, bytes, to);
}

bool fits(Wide value, std::size_t bytes, bool is_signed) noexcept {
  const unsigned bits = 8 * static_cast<unsigned>(bytes);
  if (is_signed) return value >= -(static_cast<Wide>(1) << (bits - 1)) && value < (static_cast<Wide>(1) << (bits - 1));
  return value >= 0 && value < (static_cast<Wide>(1) << bits);
}

std::string as_text(Wide value) {
  const bool negative = value < 0;
  auto magnitude = static_cast<UWide>(negative ? -value : value);
  std::string digits;
  do {
    digits.insert(digits.begin(), static_cast<char>('0' + static_cast<int>(magnitude % 10)));
    magnitude /= 10;
  } while (magnitude != 0);
  return negative ? "-" + digits : digits;
}

// long double as IEEE binary128, big-endian. x86's 80-bit format has binary128's sign and exponent
// (same bias) and an explicit integer bit before 63 fraction bits, which become binary128's top 63.
constexpr int kLongDoubleDigits = std::numeric_limits<long double>::digits;

bool long_double_supported() noexcept { return kLongDoubleDigits == 64 || kLongDoubleDigits == 113; }

void pack_long_double(const std::byte* from, std::byte* to) noexcept {
  if constexpr (kLongDoubleDigits == 113) {
    reverse_if_little(from, 16, to);
  } else {
    std::uint64_t mantissa = 0;
    std::uint16_t sign_exponent = 0;
    std::memcpy(&mantissa, from, 8);
    std::memcpy(&sign_exponent, from + 8, 2);
    const std::uint64_t fraction = mantissa & 0x7FFF'FFFF'FFFF'FFFFULL;
    store_big_endian((std::uint64_t{sign_exponent} << 48) | (fraction >> 15), 8, to);
    store_big_endian((fraction & 0x7FFF) << 49, 8, to + 8);
  }
}

void unpack_long_double(const std::byte* from, std::byte* to) noexcept {
  if constexpr (kLongDoubleDigits == 113) {
    reverse_if_little(from, 16, to);
  } else {
    const std::uint64_t high = load_big_endian(from, 8);
    const std::uint64_t low = load_big_endian(from + 8, 8);
    const auto sign_exponent = static_cast<std::uint16_t>(high >> 48);
    // The 49 lowest fraction bits have no place here: rounded toward zero.
    const std::uint64_t fraction = ((high & 0xFFFF'FFFF'FFFFULL) << 15) | (low >> 49);
    const std::uint64_t mantissa = fraction | ((sign_exponent & 0x7FFF) != 0 ? 1ULL << 63 : 0);
    std::memset(to, 0, sizeof(long double));
    std::memcpy(to, &mantissa, 8);
    std::memcpy(to + 8, &sign_exponent, 2);
  }
}

Problem unsupported(const Element& e) {
  return fmt::format("{}: this host's long double ({} significant bits) has no external32 conversion", e.name,
                     kLongDoubleDigits);
}

}  // namespace

std::size_t size_of(const TypeNode& type, std::size_t count) noexcept { return count * external_size(type); }

Problem pack(const TypeNode& type, const void* from, std::size_t count, std::byte* to) {
  Problem problem;
  std::byte* out = to;
  auto visit = [&](std::ptrdiff_t at, const Element& e) {
    const std::byte* in = offset_by(from, at);
    switch (e.form) {
      case Form::raw: *out = *in; break;
      case Form::ieee: reverse_if_little(in, e.native, out); break;
      case Form::long_double:
        if (!long_double_supported()) {
          problem = unsupported(e);
          return false;
        }
        pack_long_double(in, out);
        break;
      case Form::integer: {
        const Wide value = load_native(in, e.native, e.native_signed);
        if (!fits(value, e.external, e.external_signed)) {
          problem = fmt::format("{} value {} does not fit in external32's {} bytes", e.name, as_text(value), e.external);
          return false;
        }
        store_big_endian(static_cast<std::uint64_t>(value), e.external, out);
        break;
      }
    }
    out += e.external;
    return true;
  };
  walk_items(type, count, visit);
  return problem;
}

Problem unpack(const TypeNode& type, const std::byte* from, std::size_t count, void* to) {
  Problem problem;
  const std::byte* in = from;
  auto visit = [&](std::ptrdiff_t at, const Element& e) {
    std::byte* out = offset_by(to, at);
    switch (e.form) {
      case Form::raw: *out = *in; break;
      case Form::ieee: reverse_if_little(in, e.native, out); break;
      case Form::long_double:
        if (!long_double_supported()) {
          problem = unsupported(e);
          return false;
        }
        unpack_long_double(in, out);
        break;
      case Form::integer: {
        const Wide value = load_wide(in, e.external, e.external_signed);
        if (!fits(value, e.native, e.native_signed)) {
          problem = fmt::format("external32 {} value {} does not fit in this host's {} bytes", e.name, as_text(value),
                                e.native);
          return false;
        }
        store_native(value, e.native, out);
        break;
      }
    }
    in += e.external;
    return true;
  };
  walk_items(type, count, visit);
  return problem;
}

}  // namespace ftmpi::mpi::external32

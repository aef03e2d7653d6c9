#include "mpi/datatype.hpp"

#include <array>
#include <complex>
#include <cstdint>
#include <cwchar>

#include "mpi/api.hpp"
#include "mpi/handles.hpp"

namespace ftmpi::mpi {
namespace {

template <typename T>
constexpr std::array<TypePart, 1> kWhole{{{0, sizeof(T)}}};

// A pair type is the C struct {value; int index;} of MINLOC/MAXLOC.
template <typename T>
struct Pair {
  T value;
  int index;
};

template <typename T>
constexpr std::array<TypePart, 2> kPair{{{offsetof(Pair<T>, value), sizeof(T)}, {offsetof(Pair<T>, index), sizeof(int)}}};

template <typename T>
constexpr Datatype basic(int handle, std::string_view name) {
  return {handle, name, sizeof(T), sizeof(T), kWhole<T>};
}

template <typename T>
constexpr Datatype pair(int handle, std::string_view name) {
  return {handle, name, sizeof(T) + sizeof(int), sizeof(Pair<T>), kPair<T>};
}

// C's _Complex types have the layout of std::complex, and C's _Bool that of bool (same ABI).
constexpr std::array kDatatypes{
    Datatype{MPI_DATATYPE_NULL, "MPI_DATATYPE_NULL", 0, 0, {}},  // holds index 0; never found
    basic<char>(MPI_CHAR, "MPI_CHAR"),
    basic<signed char>(MPI_SIGNED_CHAR, "MPI_SIGNED_CHAR"),
    basic<unsigned char>(MPI_UNSIGNED_CHAR, "MPI_UNSIGNED_CHAR"),
    basic<unsigned char>(MPI_BYTE, "MPI_BYTE"),
    basic<wchar_t>(MPI_WCHAR, "MPI_WCHAR"),
    basic<short>(MPI_SHORT, "MPI_SHORT"),
    basic<unsigned short>(MPI_UNSIGNED_SHORT, "MPI_UNSIGNED_SHORT"),
    basic<int>(MPI_INT, "MPI_INT"),
    basic<unsigned>(MPI_UNSIGNED, "MPI_UNSIGNED"),
    basic<long>(MPI_LONG, "MPI_LONG"),
    basic<unsigned long>(MPI_UNSIGNED_LONG, "MPI_UNSIGNED_LONG"),
    basic<long long>(MPI_LONG_LONG_INT, "MPI_LONG_LONG_INT"),
    basic<unsigned long long>(MPI_UNSIGNED_LONG_LONG, "MPI_UNSIGNED_LONG_LONG"),
    basic<float>(MPI_FLOAT, "MPI_FLOAT"),
    basic<double>(MPI_DOUBLE, "MPI_DOUBLE"),
    basic<long double>(MPI_LONG_DOUBLE, "MPI_LONG_DOUBLE"),
    basic<std::int8_t>(MPI_INT8_T, "MPI_INT8_T"),
    basic<std::int16_t>(MPI_INT16_T, "MPI_INT16_T"),
    basic<std::int32_t>(MPI_INT32_T, "MPI_INT32_T"),
    basic<std::int64_t>(MPI_INT64_T, "MPI_INT64_T"),
    basic<std::uint8_t>(MPI_UINT8_T, "MPI_UINT8_T"),
    basic<std::uint16_t>(MPI_UINT16_T, "MPI_UINT16_T"),
    basic<std::uint32_t>(MPI_UINT32_T, "MPI_UINT32_T"),
    basic<std::uint64_t>(MPI_UINT64_T, "MPI_UINT64_T"),
    basic<bool>(MPI_C_BOOL, "MPI_C_BOOL"),
    basic<std::complex<float>>(MPI_C_FLOAT_COMPLEX, "MPI_C_FLOAT_COMPLEX"),
    basic<std::complex<double>>(MPI_C_DOUBLE_COMPLEX, "MPI_C_DOUBLE_COMPLEX"),
    basic<std::complex<long double>>(MPI_C_LONG_DOUBLE_COMPLEX, "MPI_C_LONG_DOUBLE_COMPLEX"),
    basic<MPI_Aint>(MPI_AINT, "MPI_AINT"),
    basic<MPI_Offset>(MPI_OFFSET, "MPI_OFFSET"),
    basic<MPI_Count>(MPI_COUNT, "MPI_COUNT"),
    basic<unsigned char>(MPI_PACKED, "MPI_PACKED"),
    pair<float>(MPI_FLOAT_INT, "MPI_FLOAT_INT"),
    pair<double>(MPI_DOUBLE_INT, "MPI_DOUBLE_INT"),
    pair<long>(MPI_LONG_INT, "MPI_LONG_INT"),
    pair<int>(MPI_2INT, "MPI_2INT"),
    pair<short>(MPI_SHORT_INT, "MPI_SHORT_INT"),
    pair<long double>(MPI_LONG_DOUBLE_INT, "MPI_LONG_DOUBLE_INT"),
};

constexpr bool rows_in_place() {
  for (std::size_t i = 1; i < kDatatypes.size(); ++i) {
    if (kDatatypes[i].handle != make_handle(HandleKind::datatype, static_cast<std::uint32_t>(i))) return false;
  }
  return true;
}
static_assert(rows_in_place(), "kDatatypes must be in the order of the handles in mpi.h");

}  // namespace

std::optional<std::size_t> Datatype::items(std::size_t bytes) const noexcept {
  if (bytes == 0) return 0;
  if (bytes < span() || (bytes - span()) % extent != 0) return std::nullopt;
  return (bytes - span()) / extent + 1;
}

std::optional<std::size_t> Datatype::elements(std::size_t bytes) const noexcept {
  const std::size_t whole = bytes < span() ? 0 : (bytes - span()) / extent + 1;
  if (bytes == this->bytes(whole)) return whole * parts.size();
  // The rest must end exactly after one of the next item's parts.
  const std::size_t start = whole * extent;
  if (bytes < start) return std::nullopt;
  const std::size_t rest = bytes - start;
  std::size_t cut = 0;
  while (cut < parts.size() && parts[cut].offset + parts[cut].size <= rest) ++cut;
  if (cut == 0 || parts[cut - 1].offset + parts[cut - 1].size != rest) return std::nullopt;
  return whole * parts.size() + cut;
}

const Datatype* find_datatype(int handle) noexcept {
  const Datatype* type = find_handle<HandleKind::datatype>(kDatatypes, handle);
  return type == &kDatatypes[0] ? nullptr : type;
}

}  // namespace ftmpi::mpi

// Integer handles (mpi.h): the top byte names the kind of object, the low bits index that kind's table.
// A handle of another kind, or an index past the table, finds nothing, so mixing up arguments of the
// same C type (all handles are int) is caught instead of misread.
#pragma once

#include <cstdint>
#include <optional>
#include <iterator>

namespace ftmpi::mpi {

enum class HandleKind : std::uint8_t {
  comm = 0x44,
  datatype = 0x4c,
  errhandler = 0x54,
};

constexpr int make_handle(HandleKind kind, std::uint32_t index) noexcept {
  return static_cast<int>((static_cast<std::uint32_t>(kind) << 24) | index);
}

// The table index `handle` names if it is a handle of `kind`.
constexpr std::optional<std::uint32_t> handle_index(int handle, HandleKind kind) noexcept {
  const auto bits = static_cast<std::uint32_t>(handle);
  if ((bits >> 24) != static_cast<std::uint32_t>(kind)) return std::nullopt;
  return bits & 0x00ffffffu;
}

// The object a handle names in its kind's table, or null when it names none.
template <HandleKind Kind, typename Table>
auto find_handle(Table& table, int handle) noexcept -> decltype(std::data(table)) {
  const auto index = handle_index(handle, Kind);
  return index && *index < std::size(table) ? std::data(table) + *index : nullptr;
}

}  // namespace ftmpi::mpi

// The predefined datatypes. A message of `count` items is one contiguous byte range: the engine moves
// bytes and knows nothing of types.
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <string_view>

namespace ftmpi::mpi {

// One basic element inside an item: pair types (MPI_DOUBLE_INT ...) have two, every other type one.
struct TypePart {
  std::size_t offset;
  std::size_t size;
};

struct Datatype {
  int handle;              // as in mpi.h
  std::string_view name;   // "MPI_INT"
  std::size_t size;        // bytes of data in one item (MPI_Type_size)
  std::size_t extent;      // distance between consecutive items in an array
  std::span<const TypePart> parts;

  // From an item's first byte to its last data byte: below `extent` when the item ends in padding
  // (MPI_DOUBLE_INT is 12 bytes of data in 16).
  std::size_t span() const noexcept { return parts.back().offset + parts.back().size; }
  // Bytes a message of `count` items occupies: padding between items travels, trailing padding does not
  // (it need not belong to the caller's buffer).
  std::size_t bytes(std::size_t count) const noexcept { return count == 0 ? 0 : (count - 1) * extent + span(); }
  // Whole items in a message of `bytes` (MPI_Get_count); nullopt when it is not a whole number.
  std::optional<std::size_t> items(std::size_t bytes) const noexcept;
  // Basic elements in a message of `bytes` (MPI_Get_elements); nullopt when one is cut.
  std::optional<std::size_t> elements(std::size_t bytes) const noexcept;
};

// The datatype a handle names, or null.
const Datatype* find_datatype(int handle) noexcept;

}  // namespace ftmpi::mpi

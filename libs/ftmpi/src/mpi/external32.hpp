// MPI's "external32" data representation (MPI-3.1 section 13.5.2), for MPI_Pack_external and
// MPI_Unpack_external: every basic element big-endian, integers two's complement and floating point
// IEEE 754, at the sizes of MPI-3.1 table 13.2 whatever the host's (MPI_LONG is 4 bytes, MPI_WCHAR 2,
// MPI_LONG_DOUBLE 16 as binary128; a complex is two of its parts; MPI_DOUBLE_INT is a double and an int).
// A value that does not fit the external size (a long beyond 32 bits) is an error, not truncated.
//
// The type map is walked element by element from the datatype's tree (not its merged pieces, which do
// not know where one element ends), so this is for these calls, not for messages.
#pragma once

#include <cstddef>
#include <string>

#include "mpi/datatype.hpp"

namespace ftmpi::mpi::external32 {

// The external32 bytes of `count` items of `type`.
std::size_t size_of(const TypeNode& type, std::size_t count) noexcept;

// The outcome of a conversion: empty when every element converted, else why one could not.
using Problem = std::string;

// Writes `count` items of `type` at `from` as external32 bytes at `to` (size_of(type, count) bytes).
Problem pack(const TypeNode& type, const void* from, std::size_t count, std::byte* to);
// Reads size_of(type, count) external32 bytes at `from` into `count` items of `type` at `to`.
Problem unpack(const TypeNode& type, const std::byte* from, std::size_t count, void* to);

}  // namespace ftmpi::mpi::external32

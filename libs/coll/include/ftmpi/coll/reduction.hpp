// Element kinds and reduction operations: the predefined ones exactly as MPI-3.1 section 5.9.2
// defines them, and user-defined ones as a callback with MPI's signature.
//
// Buffers are contiguous arrays of one kind of element in the host's C layout (the MPI layer packs
// derived datatypes before calling the collectives). The pair kinds are the C structs below, padding
// included: an element of double_int is sizeof(DoubleInt) == 16 bytes, which is MPI_DOUBLE_INT's
// extent, so the MPI layer passes a user's contiguous array of them through unchanged.
//
// Which op applies to which kind (MPI's rules):
//   sum, prod            integers, floating point, complex
//   min, max             integers, floating point
//   land, lor, lxor      integers, C bool
//   band, bor, bxor      integers, byte
//   minloc, maxloc       the pair kinds (value compared, ties take the smaller index)
//   replace, no_op       every kind (MPI allows them only in one-sided accumulates; the collectives
//                        refuse them)
//   character and wchar take none of the others: they can be moved, not combined.
// Integer sum and prod wrap around (two's complement) instead of overflowing, so no input is
// undefined behaviour; C bool elements are read as bytes (any non-zero byte is true) and written as
// 0 or 1.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "ftmpi/base/status.hpp"

namespace ftmpi::coll {

enum class Kind : std::uint8_t {
  int8, int16, int32, int64,
  uint8, uint16, uint32, uint64,
  float32, float64, long_double,
  c_bool,
  c_float_complex, c_double_complex, c_long_double_complex,
  float_int, double_int, long_int, two_int, short_int, long_double_int,  // MINLOC/MAXLOC pairs
  two_float, two_double,                                                  // Fortran's (MPI_2REAL ...)
  character, wchar, byte,                                                 // copy only (byte: bit ops)
};
inline constexpr std::size_t kKindCount = static_cast<std::size_t>(Kind::byte) + 1;

enum class Op : std::uint8_t {
  sum, prod, min, max,
  land, lor, lxor,
  band, bor, bxor,
  minloc, maxloc,
  replace, no_op,
};
inline constexpr std::size_t kOpCount = static_cast<std::size_t>(Op::no_op) + 1;

// The pair kinds' layouts (the C structs MPI_FLOAT_INT ... MPI_LONG_DOUBLE_INT describe; Fortran's
// MPI_2REAL and MPI_2DOUBLE_PRECISION are two of a kind, the index as REAL as the value).
struct FloatInt { float value; int index; };
struct DoubleInt { double value; int index; };
struct LongInt { long value; int index; };
struct TwoInt { int value; int index; };
struct ShortInt { short value; int index; };
struct LongDoubleInt { long double value; int index; };
struct TwoFloat { float value; float index; };
struct TwoDouble { double value; double index; };

std::string_view to_string(Kind kind) noexcept;
std::string_view to_string(Op op) noexcept;

// Bytes per element of `kind` (its extent in the host's C layout).
std::size_t element_size(Kind kind) noexcept;

// Whether MPI defines `op` on `kind` (the table above).
bool op_applies(Op op, Kind kind) noexcept;

// inout[i] = in[i] op inout[i] for i < count (MPI_Reduce_local). Errc::invalid_argument when the op
// does not apply to the kind. Buffers need no particular alignment.
base::Status reduce_local(Op op, Kind kind, const void* in, void* inout, std::size_t count);

// A user-defined op (MPI_Op_create): the function computes inout[i] = in[i] op inout[i] for
// i < *len. The collectives call it with `in` holding the operand of the lower ranks, so a
// non-commutative op is applied in rank order: the result is x_0 op x_1 op ... op x_(n-1).
using UserFunction = void (*)(void* in, void* inout, int* len, void* datatype_handle);

struct UserOp {
  UserFunction function = nullptr;
  bool commutative = false;
  std::size_t element_size = 0;     // bytes of one element as the function sees it
  void* datatype_handle = nullptr;  // passed through as the last argument (the MPI layer: &datatype)
};

// One reduction, ready to apply: a predefined (op, kind) pair or a user op.
class Reduction {
 public:
  // Errc::invalid_argument when the op does not apply to the kind.
  static base::Result<Reduction> predefined(Op op, Kind kind);
  // Errc::invalid_argument without a function or with a zero element size.
  static base::Result<Reduction> user(const UserOp& op);

  std::size_t element_size() const noexcept { return element_size_; }
  bool is_commutative() const noexcept { return commutative_; }
  // Only predefined reductions have these; a user op reports Op::no_op and Kind::byte.
  bool is_user() const noexcept { return user_.function != nullptr; }
  Op op() const noexcept { return op_; }
  Kind kind() const noexcept { return kind_; }

  // inout[i] = in[i] op inout[i] for i < count. A user function is called in pieces of at most
  // INT_MAX elements, since its length is an int.
  void apply(const void* in, void* inout, std::size_t count) const;

  using Kernel = void (*)(const void* in, void* inout, std::size_t count);

 private:
  Reduction() = default;

  Kernel kernel_ = nullptr;
  UserOp user_{};
  std::size_t element_size_ = 0;
  bool commutative_ = true;
  Op op_ = Op::no_op;
  Kind kind_ = Kind::byte;
};

}  // namespace ftmpi::coll

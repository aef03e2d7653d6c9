// Predefined reduction kernels: one function per (op, kind), picked once when a Reduction is made,
// so that applying it is a single indirect call over a loop the compiler can vectorize.
#include "ftmpi/coll/reduction.hpp"

#include <climits>
#include <complex>
#include <cstring>
#include <string>
#include <type_traits>

namespace ftmpi::coll {
namespace {

using base::Errc;
using base::Status;
using Kernel = Reduction::Kernel;

// C bool is read as a byte: any non-zero value is true (a byte other than 0/1 is not a valid C++ bool).
struct CBool {
  unsigned char byte;
};
// MPI_BYTE: only bit operations.
struct Byte {
  unsigned char byte;
};

template <typename T>
using Wide = std::conditional_t<(sizeof(T) < sizeof(unsigned)), unsigned, std::make_unsigned_t<T>>;

// Integer arithmetic in unsigned types: wraps instead of overflowing.
template <typename T>
T wrap_add(T a, T b) {
  return static_cast<T>(static_cast<Wide<T>>(a) + static_cast<Wide<T>>(b));
}
template <typename T>
T wrap_mul(T a, T b) {
  return static_cast<T>(static_cast<Wide<T>>(a) * static_cast<Wide<T>>(b));
}

struct Sum {
  template <typename T>
  static T apply(T in, T inout) {
    if constexpr (std::is_integral_v<T>) return wrap_add(in, inout);
    else return in + inout;
  }
};
struct Prod {
  template <typename T>
  static T apply(T in, T inout) {
    if constexpr (std::is_integral_v<T>) return wrap_mul(in, inout);
    else return in * inout;
  }
};
struct Min {
  template <typename T>
  static T apply(T in, T inout) { return in < inout ? in : inout; }
};
struct Max {
  template <typename T>
  static T apply(T in, T inout) { return inout < in ? in : inout; }
};

template <typename T>
bool truth(T v) {
  if constexpr (std::is_same_v<T, CBool>) return v.byte != 0;
  else return v != 0;
}
template <typename T>
T from_truth(bool v) {
  if constexpr (std::is_same_v<T, CBool>) return CBool{static_cast<unsigned char>(v ? 1 : 0)};
  else return static_cast<T>(v ? 1 : 0);
}

struct Land {
  template <typename T>
  static T apply(T in, T inout) { return from_truth<T>(truth(in) && truth(inout)); }
};
struct Lor {
  template <typename T>
  static T apply(T in, T inout) { return from_truth<T>(truth(in) || truth(inout)); }
};
struct Lxor {
  template <typename T>
  static T apply(T in, T inout) { return from_truth<T>(truth(in) != truth(inout)); }
};

template <typename T>
auto bits(T v) {
  if constexpr (std::is_same_v<T, Byte>) return v.byte;
  else return v;
}
template <typename T, typename B>
T from_bits(B v) {
  if constexpr (std::is_same_v<T, Byte>) return Byte{static_cast<unsigned char>(v)};
  else return static_cast<T>(v);
}

struct Band {
  template <typename T>
  static T apply(T in, T inout) { return from_bits<T>(bits(in) & bits(inout)); }
};
struct Bor {
  template <typename T>
  static T apply(T in, T inout) { return from_bits<T>(bits(in) | bits(inout)); }
};
struct Bxor {
  template <typename T>
  static T apply(T in, T inout) { return from_bits<T>(bits(in) ^ bits(inout)); }
};

// MPI's MINLOC/MAXLOC: the better value wins; on a tie the smaller index.
struct Minloc {
  template <typename P>
  static P apply(P in, P inout) {
    if (in.value < inout.value) return in;
    if (inout.value < in.value) return inout;
    P out = inout;
    out.index = in.index < inout.index ? in.index : inout.index;
    return out;
  }
};
struct Maxloc {
  template <typename P>
  static P apply(P in, P inout) {
    if (inout.value < in.value) return in;
    if (in.value < inout.value) return inout;
    P out = inout;
    out.index = in.index < inout.index ? in.index : inout.index;
    return out;
  }
};

// Loads and stores through memcpy when a buffer is not aligned for T (MPI does not promise alignment);
// the aligned case is a plain typed loop.
template <typename T, typename F>
void elementwise(const void* in, void* inout, std::size_t count) {
  const auto a = reinterpret_cast<std::uintptr_t>(in);
  const auto b = reinterpret_cast<std::uintptr_t>(inout);
  if (a % alignof(T) == 0 && b % alignof(T) == 0) {
    const T* x = static_cast<const T*>(in);
    T* y = static_cast<T*>(inout);
    for (std::size_t i = 0; i < count; ++i) y[i] = F::apply(x[i], y[i]);
    return;
  }
  const auto* x = static_cast<const std::byte*>(in);
  auto* y = static_cast<std::byte*>(inout);
  for (std::size_t i = 0; i < count; ++i) {
    T u;
    T v;
    std::memcpy(&u, x + i * sizeof(T), sizeof(T));
    std::memcpy(&v, y + i * sizeof(T), sizeof(T));
    v = F::apply(u, v);
    std::memcpy(y + i * sizeof(T), &v, sizeof(T));
  }
}

template <typename T, typename F>
constexpr Kernel kernel() {
  return &elementwise<T, F>;
}

template <std::size_t Size>
void replace_kernel(const void* in, void* inout, std::size_t count) {
  if (count != 0) std::memmove(inout, in, count * Size);
}
void no_op_kernel(const void*, void*, std::size_t) {}

template <typename T>
Kernel integer_kernel(Op op) {
  switch (op) {
    case Op::sum: return kernel<T, Sum>();
    case Op::prod: return kernel<T, Prod>();
    case Op::min: return kernel<T, Min>();
    case Op::max: return kernel<T, Max>();
    case Op::land: return kernel<T, Land>();
    case Op::lor: return kernel<T, Lor>();
    case Op::lxor: return kernel<T, Lxor>();
    case Op::band: return kernel<T, Band>();
    case Op::bor: return kernel<T, Bor>();
    case Op::bxor: return kernel<T, Bxor>();
    default: return nullptr;
  }
}

template <typename T>
Kernel floating_kernel(Op op) {
  switch (op) {
    case Op::sum: return kernel<T, Sum>();
    case Op::prod: return kernel<T, Prod>();
    case Op::min: return kernel<T, Min>();
    case Op::max: return kernel<T, Max>();
    default: return nullptr;
  }
}

template <typename T>
Kernel complex_kernel(Op op) {
  switch (op) {
    case Op::sum: return kernel<T, Sum>();
    case Op::prod: return kernel<T, Prod>();
    default: return nullptr;
  }
}

template <typename P>
Kernel pair_kernel(Op op) {
  switch (op) {
    case Op::minloc: return kernel<P, Minloc>();
    case Op::maxloc: return kernel<P, Maxloc>();
    default: return nullptr;
  }
}

Kernel logical_kernel(Op op) {
  switch (op) {
    case Op::land: return kernel<CBool, Land>();
    case Op::lor: return kernel<CBool, Lor>();
    case Op::lxor: return kernel<CBool, Lxor>();
    default: return nullptr;
  }
}

Kernel byte_kernel(Op op) {
  switch (op) {
    case Op::band: return kernel<Byte, Band>();
    case Op::bor: return kernel<Byte, Bor>();
    case Op::bxor: return kernel<Byte, Bxor>();
    default: return nullptr;
  }
}

template <std::size_t Size>
Kernel generic_kernel(Op op) {
  if (op == Op::replace) return &replace_kernel<Size>;
  if (op == Op::no_op) return &no_op_kernel;
  return nullptr;
}

// Replace and no_op apply to every kind; the rest is the kind's family.
template <typename T>
Kernel or_generic(Op op, Kernel family) {
  if (Kernel g = generic_kernel<sizeof(T)>(op)) return g;
  return family;
}

// The one table of which op applies to which kind.
Kernel kernel_for(Op op, Kind kind) {
  using std::complex;
  switch (kind) {
    case Kind::int8: return or_generic<std::int8_t>(op, integer_kernel<std::int8_t>(op));
    case Kind::int16: return or_generic<std::int16_t>(op, integer_kernel<std::int16_t>(op));
    case Kind::int32: return or_generic<std::int32_t>(op, integer_kernel<std::int32_t>(op));
    case Kind::int64: return or_generic<std::int64_t>(op, integer_kernel<std::int64_t>(op));
    case Kind::uint8: return or_generic<std::uint8_t>(op, integer_kernel<std::uint8_t>(op));
    case Kind::uint16: return or_generic<std::uint16_t>(op, integer_kernel<std::uint16_t>(op));
    case Kind::uint32: return or_generic<std::uint32_t>(op, integer_kernel<std::uint32_t>(op));
    case Kind::uint64: return or_generic<std::uint64_t>(op, integer_kernel<std::uint64_t>(op));
    case Kind::float32: return or_generic<float>(op, floating_kernel<float>(op));
    case Kind::float64: return or_generic<double>(op, floating_kernel<double>(op));
    case Kind::long_double: return or_generic<long double>(op, floating_kernel<long double>(op));
    case Kind::c_bool: return or_generic<CBool>(op, logical_kernel(op));
    case Kind::c_float_complex:
      return or_generic<complex<float>>(op, complex_kernel<complex<float>>(op));
    case Kind::c_double_complex:
      return or_generic<complex<double>>(op, complex_kernel<complex<double>>(op));
    case Kind::c_long_double_complex:
      return or_generic<complex<long double>>(op, complex_kernel<complex<long double>>(op));
    case Kind::float_int: return or_generic<FloatInt>(op, pair_kernel<FloatInt>(op));
    case Kind::double_int: return or_generic<DoubleInt>(op, pair_kernel<DoubleInt>(op));
    case Kind::long_int: return or_generic<LongInt>(op, pair_kernel<LongInt>(op));
    case Kind::two_int: return or_generic<TwoInt>(op, pair_kernel<TwoInt>(op));
    case Kind::short_int: return or_generic<ShortInt>(op, pair_kernel<ShortInt>(op));
    case Kind::long_double_int: return or_generic<LongDoubleInt>(op, pair_kernel<LongDoubleInt>(op));
    case Kind::two_float: return or_generic<TwoFloat>(op, pair_kernel<TwoFloat>(op));
    case Kind::two_double: return or_generic<TwoDouble>(op, pair_kernel<TwoDouble>(op));
    case Kind::character: return or_generic<char>(op, nullptr);
    case Kind::wchar: return or_generic<wchar_t>(op, nullptr);
    case Kind::byte: return or_generic<Byte>(op, byte_kernel(op));
  }
  return nullptr;
}

static_assert(sizeof(CBool) == sizeof(bool) && sizeof(Byte) == 1);
static_assert(sizeof(std::complex<double>) == 2 * sizeof(double));

}  // namespace

std::string_view to_string(Kind kind) noexcept {
  switch (kind) {
    case Kind::int8: return "int8";
    case Kind::int16: return "int16";
    case Kind::int32: return "int32";
    case Kind::int64: return "int64";
    case Kind::uint8: return "uint8";
    case Kind::uint16: return "uint16";
    case Kind::uint32: return "uint32";
    case Kind::uint64: return "uint64";
    case Kind::float32: return "float";
    case Kind::float64: return "double";
    case Kind::long_double: return "long double";
    case Kind::c_bool: return "C bool";
    case Kind::c_float_complex: return "C float complex";
    case Kind::c_double_complex: return "C double complex";
    case Kind::c_long_double_complex: return "C long double complex";
    case Kind::float_int: return "float_int";
    case Kind::double_int: return "double_int";
    case Kind::long_int: return "long_int";
    case Kind::two_int: return "2int";
    case Kind::short_int: return "short_int";
    case Kind::long_double_int: return "long_double_int";
    case Kind::two_float: return "2float";
    case Kind::two_double: return "2double";
    case Kind::character: return "char";
    case Kind::wchar: return "wchar";
    case Kind::byte: return "byte";
  }
  return "?";
}

std::string_view to_string(Op op) noexcept {
  switch (op) {
    case Op::sum: return "sum";
    case Op::prod: return "prod";
    case Op::min: return "min";
    case Op::max: return "max";
    case Op::land: return "land";
    case Op::lor: return "lor";
    case Op::lxor: return "lxor";
    case Op::band: return "band";
    case Op::bor: return "bor";
    case Op::bxor: return "bxor";
    case Op::minloc: return "minloc";
    case Op::maxloc: return "maxloc";
    case Op::replace: return "replace";
    case Op::no_op: return "no_op";
  }
  return "?";
}

std::size_t element_size(Kind kind) noexcept {
  switch (kind) {
    case Kind::int8: case Kind::uint8: case Kind::c_bool: case Kind::character: case Kind::byte: return 1;
    case Kind::int16: case Kind::uint16: return 2;
    case Kind::int32: case Kind::uint32: return 4;
    case Kind::int64: case Kind::uint64: return 8;
    case Kind::float32: return sizeof(float);
    case Kind::float64: return sizeof(double);
    case Kind::long_double: return sizeof(long double);
    case Kind::c_float_complex: return sizeof(std::complex<float>);
    case Kind::c_double_complex: return sizeof(std::complex<double>);
    case Kind::c_long_double_complex: return sizeof(std::complex<long double>);
    case Kind::float_int: return sizeof(FloatInt);
    case Kind::double_int: return sizeof(DoubleInt);
    case Kind::long_int: return sizeof(LongInt);
    case Kind::two_int: return sizeof(TwoInt);
    case Kind::short_int: return sizeof(ShortInt);
    case Kind::long_double_int: return sizeof(LongDoubleInt);
    case Kind::two_float: return sizeof(TwoFloat);
    case Kind::two_double: return sizeof(TwoDouble);
    case Kind::wchar: return sizeof(wchar_t);
  }
  return 0;
}

bool op_applies(Op op, Kind kind) noexcept { return kernel_for(op, kind) != nullptr; }

Status reduce_local(Op op, Kind kind, const void* in, void* inout, std::size_t count) {
  auto reduction = Reduction::predefined(op, kind);
  if (!reduction) return reduction.status();
  reduction->apply(in, inout, count);
  return {};
}

base::Result<Reduction> Reduction::predefined(Op op, Kind kind) {
  Kernel k = kernel_for(op, kind);
  if (k == nullptr) {
    return Status(Errc::invalid_argument, "reduction " + std::string(to_string(op)) +
                                              " is not defined on " + std::string(to_string(kind)));
  }
  Reduction r;
  r.kernel_ = k;
  r.element_size_ = coll::element_size(kind);
  r.commutative_ = true;  // every predefined op is commutative (MPI-3.1 section 5.9.2)
  r.op_ = op;
  r.kind_ = kind;
  return r;
}

base::Result<Reduction> Reduction::user(const UserOp& op) {
  if (op.function == nullptr) return Status(Errc::invalid_argument, "user reduction without a function");
  if (op.element_size == 0) return Status(Errc::invalid_argument, "user reduction with zero-byte elements");
  Reduction r;
  r.user_ = op;
  r.element_size_ = op.element_size;
  r.commutative_ = op.commutative;
  return r;
}

void Reduction::apply(const void* in, void* inout, std::size_t count) const {
  if (kernel_ != nullptr) {
    kernel_(in, inout, count);
    return;
  }
  // MPI's callback takes a non-const `in` (MPI-3.1 predates const there); it must not write to it.
  auto* a = static_cast<std::byte*>(const_cast<void*>(in));
  auto* b = static_cast<std::byte*>(inout);
  while (count != 0) {
    const std::size_t chunk = count < static_cast<std::size_t>(INT_MAX) ? count : INT_MAX;
    int len = static_cast<int>(chunk);
    user_.function(a, b, &len, user_.datatype_handle);
    a += chunk * element_size_;
    b += chunk * element_size_;
    count -= chunk;
  }
}

}  // namespace ftmpi::coll

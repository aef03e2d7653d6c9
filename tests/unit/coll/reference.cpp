#include "reference.hpp"

#include <algorithm>
#include <complex>
#include <cstring>

namespace ftmpi::coll::test {
namespace {

constexpr std::byte kGuardByte{0xC3};

template <typename T>
T load(const std::byte* p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
template <typename T>
void store(std::byte* p, const T& v) {
  std::memcpy(p, &v, sizeof v);
}

template <typename T>
T small_int(std::mt19937_64& rng, int lo, int hi) {
  return static_cast<T>(std::uniform_int_distribution<int>(lo, hi)(rng));
}

struct Matrix {
  std::uint64_t a, b, c, d;  // row-major 2x2
};

Matrix multiply(const Matrix& x, const Matrix& y) {
  return {x.a * y.a + x.b * y.c, x.a * y.b + x.b * y.d, x.c * y.a + x.d * y.c, x.c * y.b + x.d * y.d};
}

// MPI user functions: inout[i] = in[i] op inout[i].
void matrix_product(void* in, void* inout, int* len, void*) {
  auto* x = static_cast<const std::byte*>(in);
  auto* y = static_cast<std::byte*>(inout);
  for (int i = 0; i < *len; ++i) {
    const auto offset = static_cast<std::size_t>(i) * sizeof(Matrix);
    store(y + offset, multiply(load<Matrix>(x + offset), load<Matrix>(y + offset)));
  }
}

void sum32(void* in, void* inout, int* len, void*) {
  auto* x = static_cast<const std::byte*>(in);
  auto* y = static_cast<std::byte*>(inout);
  for (int i = 0; i < *len; ++i) {
    const auto offset = static_cast<std::size_t>(i) * 4;
    store<std::uint32_t>(y + offset, load<std::uint32_t>(x + offset) + load<std::uint32_t>(y + offset));
  }
}

std::vector<ReductionCase> make_cases() {
  std::vector<ReductionCase> cases;
  for (std::size_t o = 0; o < kOpCount; ++o) {
    const auto op = static_cast<Op>(o);
    if (op == Op::replace || op == Op::no_op) continue;
    for (std::size_t k = 0; k < kKindCount; ++k) {
      const auto kind = static_cast<Kind>(k);
      if (!op_applies(op, kind)) continue;
      cases.push_back({std::string(to_string(op)) + "/" + std::string(to_string(kind)),
                       Reduction::predefined(op, kind).value(), kind, UserKind::none});
    }
  }
  cases.push_back({"user matrix product (non-commutative)",
                   Reduction::user({&matrix_product, false, sizeof(Matrix), nullptr}).value(), std::nullopt,
                   UserKind::matrix});
  cases.push_back({"user uint32 sum (commutative)", Reduction::user({&sum32, true, 4, nullptr}).value(),
                   std::nullopt, UserKind::sum32});
  return cases;
}

template <typename T>
bool equal_at(const std::byte* a, const std::byte* b, std::size_t i) {
  return load<T>(a + i * sizeof(T)) == load<T>(b + i * sizeof(T));
}
template <typename P>
bool pair_equal_at(const std::byte* a, const std::byte* b, std::size_t i) {
  const P x = load<P>(a + i * sizeof(P));
  const P y = load<P>(b + i * sizeof(P));
  return x.value == y.value && x.index == y.index;
}

}  // namespace

const std::vector<ReductionCase>& reduction_cases() {
  static const std::vector<ReductionCase> cases = make_cases();
  return cases;
}

const ReductionCase& matrix_case() {
  for (const auto& rc : reduction_cases()) {
    if (rc.user == UserKind::matrix) return rc;
  }
  return reduction_cases().front();
}

void fill_elements(const ReductionCase& rc, std::byte* out, std::size_t count, std::mt19937_64& rng) {
  const std::size_t es = rc.reduction.element_size();
  if (count == 0) return;
  if (rc.user != UserKind::none || !rc.kind) {
    for (std::size_t i = 0; i < count * es; i += 8) {
      const std::uint64_t v = rc.user == UserKind::matrix ? rng() % 7 : rng();  // small entries show order bugs
      std::memcpy(out + i, &v, std::min<std::size_t>(8, count * es - i));
    }
    return;
  }
  std::memset(out, 0, count * es);  // padding bytes defined
  for (std::size_t i = 0; i < count; ++i) {
    std::byte* p = out + i * es;
    switch (*rc.kind) {
      case Kind::float32: store(p, small_int<float>(rng, -4, 4)); break;
      case Kind::float64: store(p, small_int<double>(rng, -4, 4)); break;
      case Kind::long_double: store(p, small_int<long double>(rng, -4, 4)); break;
      case Kind::c_float_complex:
        store(p, std::complex<float>(small_int<float>(rng, -3, 3), small_int<float>(rng, -3, 3)));
        break;
      case Kind::c_double_complex:
        store(p, std::complex<double>(small_int<double>(rng, -3, 3), small_int<double>(rng, -3, 3)));
        break;
      case Kind::c_long_double_complex:
        store(p, std::complex<long double>(small_int<long double>(rng, -3, 3), small_int<long double>(rng, -3, 3)));
        break;
      case Kind::c_bool: {
        static constexpr unsigned char kTruths[] = {0, 1, 2, 255};
        store(p, kTruths[rng() % 4]);
        break;
      }
      case Kind::float_int: store(p, FloatInt{small_int<float>(rng, -3, 3), small_int<int>(rng, 0, 99)}); break;
      case Kind::double_int: store(p, DoubleInt{small_int<double>(rng, -3, 3), small_int<int>(rng, 0, 99)}); break;
      case Kind::long_int: store(p, LongInt{small_int<long>(rng, -3, 3), small_int<int>(rng, 0, 99)}); break;
      case Kind::two_int: store(p, TwoInt{small_int<int>(rng, -3, 3), small_int<int>(rng, 0, 99)}); break;
      case Kind::short_int: store(p, ShortInt{small_int<short>(rng, -3, 3), small_int<int>(rng, 0, 99)}); break;
      case Kind::long_double_int:
        store(p, LongDoubleInt{small_int<long double>(rng, -3, 3), small_int<int>(rng, 0, 99)});
        break;
      case Kind::two_float: store(p, TwoFloat{small_int<float>(rng, -3, 3), small_int<float>(rng, 0, 99)}); break;
      case Kind::two_double: store(p, TwoDouble{small_int<double>(rng, -3, 3), small_int<double>(rng, 0, 99)}); break;
      default: {  // integers and bytes: any bits (sums and products wrap)
        const std::uint64_t v = rng();
        std::memcpy(p, &v, es);
        break;
      }
    }
  }
}

std::optional<std::size_t> first_difference(const ReductionCase& rc, const std::byte* a, const std::byte* b,
                                             std::size_t count) {
  const std::size_t es = rc.reduction.element_size();
  for (std::size_t i = 0; i < count; ++i) {
    bool same = true;
    switch (rc.kind.value_or(Kind::byte)) {
      case Kind::float32: same = equal_at<float>(a, b, i); break;
      case Kind::float64: same = equal_at<double>(a, b, i); break;
      case Kind::long_double: same = equal_at<long double>(a, b, i); break;
      case Kind::c_float_complex: same = equal_at<std::complex<float>>(a, b, i); break;
      case Kind::c_double_complex: same = equal_at<std::complex<double>>(a, b, i); break;
      case Kind::c_long_double_complex: same = equal_at<std::complex<long double>>(a, b, i); break;
      case Kind::float_int: same = pair_equal_at<FloatInt>(a, b, i); break;
      case Kind::double_int: same = pair_equal_at<DoubleInt>(a, b, i); break;
      case Kind::long_int: same = pair_equal_at<LongInt>(a, b, i); break;
      case Kind::two_int: same = pair_equal_at<TwoInt>(a, b, i); break;
      case Kind::short_int: same = pair_equal_at<ShortInt>(a, b, i); break;
      case Kind::long_double_int: same = pair_equal_at<LongDoubleInt>(a, b, i); break;
      case Kind::two_float: same = pair_equal_at<TwoFloat>(a, b, i); break;
      case Kind::two_double: same = pair_equal_at<TwoDouble>(a, b, i); break;
      default: same = std::memcmp(a + i * es, b + i * es, es) == 0; break;
    }
    if (!same) return i;
  }
  return std::nullopt;
}

Bytes fold(const ReductionCase& rc, std::span<const std::byte* const> inputs, std::size_t count) {
  const std::size_t bytes = count * rc.reduction.element_size();
  Bytes acc(inputs.empty() || bytes == 0 ? Bytes{} : Bytes(inputs[0], inputs[0] + bytes));
  for (std::size_t i = 1; i < inputs.size() && bytes != 0; ++i) {
    Bytes next(inputs[i], inputs[i] + bytes);
    rc.reduction.apply(acc.data(), next.data(), count);  // acc op x_i
    acc = std::move(next);
  }
  return acc;
}

std::uint64_t mix(std::uint64_t seed, std::uint64_t a, std::uint64_t b, std::uint64_t c) {
  std::uint64_t h = seed ^ 0x9e3779b97f4a7c15ULL;
  for (std::uint64_t v : {a, b, c}) {
    h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
    h *= 0xbf58476d1ce4e5b9ULL;
    h ^= h >> 31;
  }
  return h;
}

Bytes random_bytes(std::uint64_t seed, std::size_t bytes) {
  std::mt19937_64 rng(seed);
  Bytes out(bytes);
  for (std::size_t i = 0; i < bytes; i += 8) {
    const std::uint64_t v = rng();
    std::memcpy(out.data() + i, &v, std::min<std::size_t>(8, bytes - i));
  }
  return out;
}

Guarded::Guarded(std::size_t bytes, std::byte fill) : storage_(bytes + 2 * kGuard, fill), size_(bytes) {
  std::fill_n(storage_.begin(), kGuard, kGuardByte);
  std::fill_n(storage_.end() - kGuard, kGuard, kGuardByte);
}

bool Guarded::guards_intact() const noexcept {
  return std::all_of(storage_.begin(), storage_.begin() + kGuard, [](std::byte b) { return b == kGuardByte; }) &&
         std::all_of(storage_.end() - kGuard, storage_.end(), [](std::byte b) { return b == kGuardByte; });
}

}  // namespace ftmpi::coll::test

#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <climits>
#include <complex>
#include <cstring>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "ftmpi/coll/reduction.hpp"
#include "ftmpi/test/seed.hpp"
#include "printing.hpp"

using namespace ftmpi::coll;
using ftmpi::base::Errc;

namespace {

__extension__ typedef __int128 Int128;
__extension__ typedef unsigned __int128 Uint128;

enum class Family { integer, floating, complex, logical, byte, pair, text };

Family family_of(Kind k) {
  switch (k) {
    case Kind::int8: case Kind::int16: case Kind::int32: case Kind::int64:
    case Kind::uint8: case Kind::uint16: case Kind::uint32: case Kind::uint64: return Family::integer;
    case Kind::float32: case Kind::float64: case Kind::long_double: return Family::floating;
    case Kind::c_float_complex: case Kind::c_double_complex: case Kind::c_long_double_complex:
      return Family::complex;
    case Kind::c_bool: return Family::logical;
    case Kind::byte: return Family::byte;
    case Kind::float_int: case Kind::double_int: case Kind::long_int: case Kind::two_int:
    case Kind::short_int: case Kind::long_double_int: case Kind::two_float: case Kind::two_double:
      return Family::pair;
    case Kind::character: case Kind::wchar: return Family::text;
  }
  return Family::text;
}

// MPI-3.1 section 5.9.2, written as the standard groups it.
bool mpi_allows(Op op, Kind kind) {
  const Family f = family_of(kind);
  switch (op) {
    case Op::sum: case Op::prod: return f == Family::integer || f == Family::floating || f == Family::complex;
    case Op::min: case Op::max: return f == Family::integer || f == Family::floating;
    case Op::land: case Op::lor: case Op::lxor: return f == Family::integer || f == Family::logical;
    case Op::band: case Op::bor: case Op::bxor: return f == Family::integer || f == Family::byte;
    case Op::minloc: case Op::maxloc: return f == Family::pair;
    case Op::replace: case Op::no_op: return true;
  }
  return false;
}

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

// A naive element-by-element reference, independent of the library's kernels: 128-bit arithmetic
// truncated for wrapping integers, plain comparisons elsewhere.
template <typename T>
T naive_integer(Op op, T a, T b) {
  using Wide = std::conditional_t<std::is_signed_v<T>, Int128, Uint128>;
  switch (op) {
    case Op::sum: return static_cast<T>(static_cast<Wide>(a) + static_cast<Wide>(b));
    case Op::prod: return static_cast<T>(static_cast<Wide>(a) * static_cast<Wide>(b));
    case Op::min: return std::min(a, b);
    case Op::max: return std::max(a, b);
    case Op::land: return static_cast<T>((a != 0) && (b != 0));
    case Op::lor: return static_cast<T>((a != 0) || (b != 0));
    case Op::lxor: return static_cast<T>((a != 0) != (b != 0));
    case Op::band: return static_cast<T>(a & b);
    case Op::bor: return static_cast<T>(a | b);
    case Op::bxor: return static_cast<T>(a ^ b);
    default: return b;
  }
}

template <typename T>
T naive_floating(Op op, T a, T b) {
  switch (op) {
    case Op::sum: return a + b;
    case Op::prod: return a * b;
    case Op::min: return std::min(a, b);
    case Op::max: return std::max(a, b);
    default: return b;
  }
}

template <typename P>
P naive_pair(Op op, P a, P b) {
  const bool a_wins = op == Op::minloc ? a.value < b.value : a.value > b.value;
  if (a_wins) return a;
  if (a.value == b.value) return P{b.value, std::min(a.index, b.index)};
  return b;
}

template <typename T, typename F>
void each(const std::byte* in, std::byte* inout, std::size_t count, F f) {
  for (std::size_t i = 0; i < count; ++i) {
    store(inout + i * sizeof(T), f(load<T>(in + i * sizeof(T)), load<T>(inout + i * sizeof(T))));
  }
}

void naive_reduce(Op op, Kind kind, const std::byte* in, std::byte* inout, std::size_t count) {
  if (op == Op::no_op || count == 0) return;
  if (op == Op::replace) {
    std::memcpy(inout, in, count * element_size(kind));
    return;
  }
  auto integer = [&](auto type) {
    using T = decltype(type);
    each<T>(in, inout, count, [&](T a, T b) { return naive_integer(op, a, b); });
  };
  auto floating = [&](auto type) {
    using T = decltype(type);
    each<T>(in, inout, count, [&](T a, T b) { return naive_floating(op, a, b); });
  };
  auto complex = [&](auto type) {
    using T = decltype(type);
    each<T>(in, inout, count, [&](T a, T b) { return op == Op::sum ? a + b : a * b; });
  };
  auto pair = [&](auto type) {
    using T = decltype(type);
    each<T>(in, inout, count, [&](T a, T b) { return naive_pair(op, a, b); });
  };
  switch (kind) {
    case Kind::int8: integer(std::int8_t{}); break;
    case Kind::int16: integer(std::int16_t{}); break;
    case Kind::int32: integer(std::int32_t{}); break;
    case Kind::int64: integer(std::int64_t{}); break;
    case Kind::uint8: case Kind::byte: integer(std::uint8_t{}); break;
    case Kind::uint16: integer(std::uint16_t{}); break;
    case Kind::uint32: integer(std::uint32_t{}); break;
    case Kind::uint64: integer(std::uint64_t{}); break;
    case Kind::c_bool: integer(std::uint8_t{}); break;
    case Kind::float32: floating(float{}); break;
    case Kind::float64: floating(double{}); break;
    case Kind::long_double: floating(static_cast<long double>(0)); break;
    case Kind::c_float_complex: complex(std::complex<float>{}); break;
    case Kind::c_double_complex: complex(std::complex<double>{}); break;
    case Kind::c_long_double_complex: complex(std::complex<long double>{}); break;
    case Kind::float_int: pair(FloatInt{}); break;
    case Kind::double_int: pair(DoubleInt{}); break;
    case Kind::long_int: pair(LongInt{}); break;
    case Kind::two_int: pair(TwoInt{}); break;
    case Kind::short_int: pair(ShortInt{}); break;
    case Kind::long_double_int: pair(LongDoubleInt{}); break;
    case Kind::two_float: pair(TwoFloat{}); break;
    case Kind::two_double: pair(TwoDouble{}); break;
    case Kind::character: case Kind::wchar: break;
  }
}

// Random elements: any bits for integers (so sums overflow and wrap), finite values elsewhere,
// frequent ties for the pairs, non-canonical truth bytes for C bool.
void fill(Kind kind, std::byte* out, std::size_t count, std::mt19937_64& rng) {
  const std::size_t es = element_size(kind);
  if (count == 0) return;
  std::memset(out, 0, count * es);
  std::uniform_real_distribution<double> real(-100, 100);
  std::uniform_int_distribution<int> tie(-2, 2);
  for (std::size_t i = 0; i < count; ++i) {
    std::byte* p = out + i * es;
    const int index = static_cast<int>(rng() % 50);
    switch (kind) {
      case Kind::float32: store(p, static_cast<float>(real(rng))); break;
      case Kind::float64: store(p, real(rng)); break;
      case Kind::long_double: store(p, static_cast<long double>(real(rng))); break;
      case Kind::c_float_complex:
        store(p, std::complex<float>(static_cast<float>(real(rng)), static_cast<float>(real(rng))));
        break;
      case Kind::c_double_complex: store(p, std::complex<double>(real(rng), real(rng))); break;
      case Kind::c_long_double_complex:
        store(p, std::complex<long double>(static_cast<long double>(real(rng)), static_cast<long double>(real(rng))));
        break;
      case Kind::c_bool: store(p, static_cast<unsigned char>(rng() % 3 == 0 ? 0 : rng() % 256)); break;
      case Kind::float_int: store(p, FloatInt{static_cast<float>(tie(rng)), index}); break;
      case Kind::double_int: store(p, DoubleInt{static_cast<double>(tie(rng)), index}); break;
      case Kind::long_int: store(p, LongInt{tie(rng), index}); break;
      case Kind::two_int: store(p, TwoInt{tie(rng), index}); break;
      case Kind::short_int: store(p, ShortInt{static_cast<short>(tie(rng)), index}); break;
      case Kind::long_double_int: store(p, LongDoubleInt{static_cast<long double>(tie(rng)), index}); break;
      case Kind::two_float: store(p, TwoFloat{static_cast<float>(tie(rng)), static_cast<float>(index)}); break;
      case Kind::two_double: store(p, TwoDouble{static_cast<double>(tie(rng)), static_cast<double>(index)}); break;
      default: {
        const std::uint64_t v = rng();
        std::memcpy(p, &v, es);
      }
    }
  }
}

// Compares values, not padding: long double and the pair structs have padding bytes the kernels
// need not preserve.
bool same_values(Kind kind, const std::byte* a, const std::byte* b, std::size_t count) {
  const std::size_t es = element_size(kind);
  for (std::size_t i = 0; i < count; ++i) {
    const std::byte* x = a + i * es;
    const std::byte* y = b + i * es;
    bool same = true;
    switch (kind) {
      case Kind::long_double: same = load<long double>(x) == load<long double>(y); break;
      case Kind::c_long_double_complex:
        same = load<std::complex<long double>>(x) == load<std::complex<long double>>(y);
        break;
      case Kind::double_int: same = load<DoubleInt>(x).value == load<DoubleInt>(y).value &&
                                    load<DoubleInt>(x).index == load<DoubleInt>(y).index; break;
      case Kind::long_int: same = load<LongInt>(x).value == load<LongInt>(y).value &&
                                  load<LongInt>(x).index == load<LongInt>(y).index; break;
      case Kind::short_int: same = load<ShortInt>(x).value == load<ShortInt>(y).value &&
                                   load<ShortInt>(x).index == load<ShortInt>(y).index; break;
      case Kind::long_double_int: same = load<LongDoubleInt>(x).value == load<LongDoubleInt>(y).value &&
                                         load<LongDoubleInt>(x).index == load<LongDoubleInt>(y).index; break;
      default: same = std::memcmp(x, y, es) == 0;
    }
    if (!same) return false;
  }
  return true;
}

}  // namespace

BOOST_AUTO_TEST_CASE(op_applies_follows_mpi_rules) {
  for (std::size_t o = 0; o < kOpCount; ++o) {
    for (std::size_t k = 0; k < kKindCount; ++k) {
      const auto op = static_cast<Op>(o);
      const auto kind = static_cast<Kind>(k);
      BOOST_TEST_CONTEXT(to_string(op) << " on " << to_string(kind)) {
        BOOST_TEST(op_applies(op, kind) == mpi_allows(op, kind));
      }
    }
  }
  // The rules the brief spells out, spot-checked by name.
  BOOST_TEST(!op_applies(Op::land, Kind::float64));
  BOOST_TEST(op_applies(Op::land, Kind::c_bool));
  BOOST_TEST(op_applies(Op::bxor, Kind::byte));
  BOOST_TEST(!op_applies(Op::bxor, Kind::c_bool));
  BOOST_TEST(!op_applies(Op::min, Kind::c_double_complex));
  BOOST_TEST(!op_applies(Op::max, Kind::c_bool));
  BOOST_TEST(op_applies(Op::minloc, Kind::two_int));
  BOOST_TEST(!op_applies(Op::minloc, Kind::int32));
  BOOST_TEST(!op_applies(Op::sum, Kind::character));
  BOOST_TEST(!op_applies(Op::band, Kind::wchar));
}

BOOST_AUTO_TEST_CASE(element_sizes_are_the_c_layouts) {
  BOOST_TEST(element_size(Kind::int64) == 8U);
  BOOST_TEST(element_size(Kind::c_bool) == sizeof(bool));
  BOOST_TEST(element_size(Kind::c_double_complex) == 2 * sizeof(double));
  BOOST_TEST(element_size(Kind::double_int) == sizeof(DoubleInt));
  BOOST_TEST(element_size(Kind::long_double_int) == sizeof(LongDoubleInt));
  BOOST_TEST(element_size(Kind::wchar) == sizeof(wchar_t));
  for (std::size_t k = 0; k < kKindCount; ++k) BOOST_TEST(element_size(static_cast<Kind>(k)) > 0U);
}

BOOST_AUTO_TEST_CASE(reduce_local_matches_a_naive_reference_for_every_op_and_kind) {
  const auto seed = ftmpi::test::seed_for("reduce_local");
  BOOST_TEST_CONTEXT("seed " << seed) {
    std::mt19937_64 rng(seed);
    for (std::size_t o = 0; o < kOpCount; ++o) {
      for (std::size_t k = 0; k < kKindCount; ++k) {
        const auto op = static_cast<Op>(o);
        const auto kind = static_cast<Kind>(k);
        BOOST_TEST_CONTEXT(to_string(op) << " on " << to_string(kind)) {
          const std::size_t es = element_size(kind);
          std::vector<std::byte> in(40 * es + 1);
          std::vector<std::byte> inout(40 * es + 1);
          if (!mpi_allows(op, kind)) {
            auto status = reduce_local(op, kind, in.data(), inout.data(), 3);
            BOOST_TEST(status.code() == Errc::invalid_argument);
            BOOST_TEST(status.message().find(std::string(to_string(op))) != std::string::npos);
            continue;
          }
          for (int trial = 0; trial < 8; ++trial) {
            const std::size_t count = rng() % 34;
            // Odd trials use buffers one byte off alignment: MPI promises none.
            const std::size_t shift = trial % 2;
            fill(kind, in.data() + shift, count, rng);
            fill(kind, inout.data() + shift, count, rng);
            std::vector<std::byte> expected(inout.begin() + static_cast<std::ptrdiff_t>(shift),
                                            inout.begin() + static_cast<std::ptrdiff_t>(shift + count * es));
            naive_reduce(op, kind, in.data() + shift, expected.data(), count);
            BOOST_TEST_REQUIRE(reduce_local(op, kind, in.data() + shift, inout.data() + shift, count).is_ok());
            BOOST_TEST(same_values(kind, inout.data() + shift, expected.data(), count),
                       "trial " << trial << ", " << count << " elements");
          }
        }
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(integer_sum_and_product_wrap_around) {
  std::int32_t in[2] = {INT32_MAX, INT32_MIN};
  std::int32_t inout[2] = {1, -1};
  BOOST_TEST_REQUIRE(reduce_local(Op::sum, Kind::int32, in, inout, 2).is_ok());
  BOOST_TEST(inout[0] == INT32_MIN);
  BOOST_TEST(inout[1] == INT32_MAX);
  std::int16_t a = 300;
  std::int16_t b = 300;  // 90000 wraps to 24464
  BOOST_TEST_REQUIRE(reduce_local(Op::prod, Kind::int16, &a, &b, 1).is_ok());
  BOOST_TEST(b == static_cast<std::int16_t>(24464));
}

BOOST_AUTO_TEST_CASE(minloc_and_maxloc_break_ties_by_the_smaller_index) {
  TwoInt in[3] = {{5, 7}, {5, 2}, {1, 9}};
  TwoInt inout[3] = {{5, 3}, {5, 4}, {2, 0}};
  BOOST_TEST_REQUIRE(reduce_local(Op::minloc, Kind::two_int, in, inout, 3).is_ok());
  BOOST_TEST(inout[0].value == 5);
  BOOST_TEST(inout[0].index == 3);
  BOOST_TEST(inout[1].index == 2);
  BOOST_TEST(inout[2].value == 1);
  BOOST_TEST(inout[2].index == 9);
  DoubleInt x{2.5, 8};
  DoubleInt y{2.5, 1};
  BOOST_TEST_REQUIRE(reduce_local(Op::maxloc, Kind::double_int, &x, &y, 1).is_ok());
  BOOST_TEST(y.index == 1);
}

BOOST_AUTO_TEST_CASE(c_bool_takes_any_nonzero_byte_as_true_and_writes_zero_or_one) {
  unsigned char in[4] = {0, 2, 255, 0};
  unsigned char inout[4] = {7, 0, 9, 0};
  BOOST_TEST_REQUIRE(reduce_local(Op::lor, Kind::c_bool, in, inout, 4).is_ok());
  BOOST_TEST(inout[0] == 1);
  BOOST_TEST(inout[1] == 1);
  BOOST_TEST(inout[2] == 1);
  BOOST_TEST(inout[3] == 0);
}

namespace {
int g_calls = 0;
void* g_handle_seen = nullptr;
void record_calls(void* in, void* inout, int* len, void* handle) {
  ++g_calls;
  g_handle_seen = handle;
  auto* a = static_cast<const int*>(in);
  auto* b = static_cast<int*>(inout);
  for (int i = 0; i < *len; ++i) b[i] = a[i] - b[i];  // in - inout: shows which operand is which
}
}  // namespace

BOOST_AUTO_TEST_CASE(user_op_gets_in_first_and_the_datatype_handle) {
  int handle_target = 0;
  auto reduction = Reduction::user({&record_calls, false, sizeof(int), &handle_target});
  BOOST_TEST_REQUIRE(reduction.is_ok());
  BOOST_TEST(!reduction->is_commutative());
  BOOST_TEST(reduction->is_user());
  int in[3] = {10, 20, 30};
  int inout[3] = {1, 2, 3};
  g_calls = 0;
  reduction->apply(in, inout, 3);
  BOOST_TEST(g_calls == 1);
  BOOST_TEST(g_handle_seen == static_cast<void*>(&handle_target));
  BOOST_TEST(inout[0] == 9);
  BOOST_TEST(inout[2] == 27);
}

BOOST_AUTO_TEST_CASE(user_op_without_function_or_element_size_is_refused) {
  BOOST_TEST(Reduction::user({nullptr, true, 4, nullptr}).code() == Errc::invalid_argument);
  BOOST_TEST(Reduction::user({&record_calls, true, 0, nullptr}).code() == Errc::invalid_argument);
  BOOST_TEST(Reduction::predefined(Op::sum, Kind::c_bool).code() == Errc::invalid_argument);
}

BOOST_AUTO_TEST_CASE(every_kind_and_op_has_a_distinct_name) {
  std::set<std::string_view> kinds;
  for (std::size_t k = 0; k < kKindCount; ++k) kinds.insert(to_string(static_cast<Kind>(k)));
  BOOST_TEST(kinds.size() == kKindCount);
  std::set<std::string_view> ops;
  for (std::size_t o = 0; o < kOpCount; ++o) ops.insert(to_string(static_cast<Op>(o)));
  BOOST_TEST(ops.size() == kOpCount);
}

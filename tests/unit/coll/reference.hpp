// Test data and sequential references for the collective tests: the reductions under test (every
// predefined op on every kind it applies to, and two user ops), element generators whose results
// stay exact whatever order an algorithm combines them in, and a kind-aware comparison.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "ftmpi/coll/reduction.hpp"

namespace ftmpi::coll::test {

using Bytes = std::vector<std::byte>;

enum class UserKind : std::uint8_t {
  none,
  matrix,  // 2x2 uint64 matrix product (wrapping): associative, not commutative
  sum32,   // uint32 wrapping sum, declared commutative
};

struct ReductionCase {
  std::string name;
  Reduction reduction;
  std::optional<Kind> kind;  // for predefined ops
  UserKind user = UserKind::none;
};

// Every predefined (op, kind) the collectives accept, then the two user ops.
const std::vector<ReductionCase>& reduction_cases();
const ReductionCase& matrix_case();

// `count` elements whose reductions are exact in any order (floats are small integers).
void fill_elements(const ReductionCase& rc, std::byte* out, std::size_t count, std::mt19937_64& rng);

// Compares element values (padding and the sign of floating zeros do not count). On a difference
// returns its element index.
std::optional<std::size_t> first_difference(const ReductionCase& rc, const std::byte* a, const std::byte* b,
                                             std::size_t count);

// x_0 op x_1 op ... op x_(k-1), combined left to right as MPI's order demands.
Bytes fold(const ReductionCase& rc, std::span<const std::byte* const> inputs, std::size_t count);

// Deterministic random bytes for (seed, case, rank, stream): every rank can compute every rank's input.
std::uint64_t mix(std::uint64_t seed, std::uint64_t a, std::uint64_t b = 0, std::uint64_t c = 0);
Bytes random_bytes(std::uint64_t seed, std::size_t bytes);

// A buffer with guard bytes on both sides, to catch writes out of bounds that stay inside the
// allocation (which ASan cannot see).
class Guarded {
 public:
  explicit Guarded(std::size_t bytes, std::byte fill = std::byte{0x5a});
  std::byte* data() noexcept { return storage_.data() + kGuard; }
  const std::byte* data() const noexcept { return storage_.data() + kGuard; }
  std::size_t size() const noexcept { return size_; }
  bool guards_intact() const noexcept;

 private:
  static constexpr std::size_t kGuard = 32;
  Bytes storage_;
  std::size_t size_;
};

}  // namespace ftmpi::coll::test

#include <boost/test/unit_test.hpp>

#include <cstdint>
#include <random>
#include <unordered_map>

#include "flat_map.hpp"
#include "ftmpi/test/seed.hpp"

using ftmpi::match::detail::FlatMap;

namespace {

// Few distinct hashes: long probe runs that wrap around the array, where backward-shift deletion is
// easiest to get wrong.
struct CollidingHash {
  std::uint64_t operator()(std::uint64_t key) const noexcept { return key % 5; }
};

struct SpreadHash {
  std::uint64_t operator()(std::uint64_t key) const noexcept { return key; }
};

template <typename Hash>
void check_against_unordered_map(std::uint64_t seed, std::uint64_t key_range, int steps) {
  std::mt19937_64 rng(seed);
  FlatMap<std::uint64_t, std::uint64_t, Hash> map;
  std::unordered_map<std::uint64_t, std::uint64_t> model;
  for (int step = 0; step < steps; ++step) {
    std::uint64_t key = rng() % key_range;
    std::uint64_t dice = rng() % 100;
    if (dice < 45) {
      if (model.emplace(key, step).second) map.insert(key, static_cast<std::uint64_t>(step));
    } else if (dice < 90) {
      model.erase(key);
      map.erase(key);
    } else if (dice < 91) {
      auto odd = [](std::uint64_t k, std::uint64_t) { return k % 2 == 1; };
      std::erase_if(model, [&](const auto& entry) { return odd(entry.first, entry.second); });
      map.erase_if(odd);
    }
    const std::uint64_t* found = map.find(key);
    auto expected = model.find(key);
    BOOST_TEST_REQUIRE((found != nullptr) == (expected != model.end()), "step " << step << " key " << key);
    if (found != nullptr) BOOST_TEST_REQUIRE(*found == expected->second);
    BOOST_TEST_REQUIRE(map.size() == model.size());
  }
  for (std::uint64_t key = 0; key < key_range; ++key) {
    const std::uint64_t* found = map.find(key);
    BOOST_TEST_REQUIRE((found != nullptr) == model.contains(key), "key " << key);
  }
}

}  // namespace

BOOST_AUTO_TEST_SUITE(flat_map)

BOOST_AUTO_TEST_CASE(agrees_with_unordered_map_under_heavy_collisions) {
  std::uint64_t seed = ftmpi::test::seed_for("flat map with colliding hash");
  BOOST_TEST_CONTEXT("seed " << seed) { check_against_unordered_map<CollidingHash>(seed, 64, 20'000); }
}

BOOST_AUTO_TEST_CASE(agrees_with_unordered_map_while_growing_and_shrinking) {
  std::uint64_t seed = ftmpi::test::seed_for("flat map growing and shrinking");
  BOOST_TEST_CONTEXT("seed " << seed) { check_against_unordered_map<SpreadHash>(seed, 4096, 30'000); }
}

BOOST_AUTO_TEST_SUITE_END()

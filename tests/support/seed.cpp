#include "ftmpi/test/seed.hpp"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>

namespace ftmpi::test {

std::uint64_t seed_for(std::string_view what) {
  std::uint64_t seed = 0;
  if (const char* env = std::getenv("FTMPI_TEST_SEED"); env != nullptr && *env != '\0') {
    seed = std::strtoull(env, nullptr, 0);
  } else {
    std::random_device rd;
    seed = (static_cast<std::uint64_t>(rd()) << 32) ^ rd() ^
           static_cast<std::uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
  }
  std::printf("%.*s: seed %llu (replay: FTMPI_TEST_SEED=%llu)\n", static_cast<int>(what.size()),
              what.data(), static_cast<unsigned long long>(seed), static_cast<unsigned long long>(seed));
  std::fflush(stdout);
  return seed;
}

}  // namespace ftmpi::test

// Seeds for randomized tests: fresh each run, printed, and replayable with FTMPI_TEST_SEED=<n>.
#pragma once

#include <cstdint>
#include <string_view>

namespace ftmpi::test {

// FTMPI_TEST_SEED if set, else a fresh seed. Prints "<what>: seed N (replay: FTMPI_TEST_SEED=N)" to
// stdout, which CTest shows when the test fails. Put the seed in BOOST_TEST_CONTEXT as well.
std::uint64_t seed_for(std::string_view what);

}  // namespace ftmpi::test

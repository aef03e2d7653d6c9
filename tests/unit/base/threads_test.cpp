#include <boost/test/unit_test.hpp>

#include <cstdint>
#include <thread>
#include <vector>

#include "ftmpi/base/threads.hpp"

using namespace ftmpi::base;

BOOST_AUTO_TEST_SUITE(threads)

BOOST_AUTO_TEST_CASE(count_adds_the_same_with_or_without_threads) {
  Count c = 5;
  c.add<false>(3);
  c.add<true>(4);
  ++c;
  c += 2;
  BOOST_TEST(c.load() == 15u);
  const Count copy = c;
  BOOST_TEST(static_cast<std::uint64_t>(copy) == 15u);
  c = 7;
  BOOST_TEST(c.load() == 7u);
  BOOST_TEST(copy.load() == 15u);
}

// add<true> is what code specialised on MPI_THREAD_MULTIPLE runs: threads bumping one counter lose nothing.
BOOST_AUTO_TEST_CASE(count_add_for_threads_loses_no_add) {
  constexpr int kThreads = 4;
  constexpr std::uint64_t kAdds = 100000;
  Count c;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&c] {
      for (std::uint64_t i = 0; i < kAdds; ++i) c.add<true>(1);
    });
  }
  for (std::thread& t : threads) t.join();
  BOOST_TEST(c.load() == kThreads * kAdds);
}

// LockIf<true> locks even before the process is multi-threaded (the caller read the flag for it).
BOOST_AUTO_TEST_CASE(lock_if_true_excludes_other_threads) {
  BOOST_TEST(!multi_threaded());
  constexpr int kThreads = 4;
  constexpr int kRounds = 20000;
  OptionalMutex mutex;
  std::uint64_t guarded = 0;  // a read-modify-write a lost update would show
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < kRounds; ++i) {
        const LockIf<true> lock(mutex);
        const std::uint64_t seen = guarded;
        std::this_thread::yield();
        guarded = seen + 1;
      }
    });
  }
  for (std::thread& t : threads) t.join();
  BOOST_TEST(guarded == std::uint64_t{kThreads} * kRounds);
}

BOOST_AUTO_TEST_SUITE_END()

// The shared-memory barrier and small allreduce: N = 1, 2, 3, 4, 8 ranks as threads over one heap
// block, in the flat mode (every rank watches every arrival) and the gathered one (rank 0 releases),
// with seeded random delays before each call so that a rank released early would be caught, random
// sequences of barriers and allreduces (so operand slots are reused under both parities), random
// counts, predefined and a non-commutative user reduction, in place and not; every result checked
// against a sequential reference in rank order.
#include <sched.h>

#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "ftmpi/coll/shm_sync.hpp"
#include "ftmpi/test/seed.hpp"
#include "zeroed_block.hpp"
#include "printing.hpp"

using namespace ftmpi::coll;

namespace {

constexpr int kRankCounts[] = {1, 2, 3, 4, 8};

using ftmpi::coll::test::ZeroedBlock;

// x -> m x + c (mod 2^64): composition is associative and not commutative.
struct Affine {
  std::uint64_t m;
  std::uint64_t c;
};

// inout = in o inout (MPI's convention, `in` from the lower rank).
void compose(void* in, void* inout, int* len, void*) {
  auto* a = static_cast<const Affine*>(in);
  auto* b = static_cast<Affine*>(inout);
  for (int i = 0; i < *len; ++i) b[i] = Affine{a[i].m * b[i].m, a[i].m * b[i].c + a[i].c};
}

// More threads than the cores they may run on (this process's affinity: `taskset -c 0` gives one): a
// waiter must yield at once, and each operation waits for the scheduler to run every thread (on a loaded
// 2-core machine, thousands of them at 8 threads took minutes).
bool oversubscribed(int n) {
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  const int cores = sched_getaffinity(0, sizeof allowed, &allowed) == 0
                        ? CPU_COUNT(&allowed)
                        : static_cast<int>(std::thread::hardware_concurrency());
  return n > std::max(1, cores);
}

// Runs body(rank, sync, failures) on n threads over one formatted region; returns every failure.
// The modes: flat_max 8 (flat at these counts), 1 (every operation gathered), 0 (flat_max 8 with barriers
// gathered, as on an oversubscribed host).
template <typename Body>
std::vector<std::string> run_ranks(int n, std::size_t slot_bytes, std::uint32_t mode, Body body,
                                   std::size_t sliced_min = ShmSyncOptions{}.sliced_min) {
  const std::uint32_t flat_max = mode == 0 ? 8 : mode;
  const ShmSyncGeometry g{static_cast<std::uint32_t>(n), slot_bytes};
  ZeroedBlock block(ShmSyncRegion::bytes_for(g));
  BOOST_REQUIRE(ShmSyncRegion::format(block.memory, block.bytes, g));
  std::mutex lock;
  std::vector<std::string> all;
  std::vector<std::thread> threads;
  for (int r = 0; r < n; ++r) {
    threads.emplace_back([&, r] {
      std::vector<std::string> failures;
      ShmSyncOptions options;
      options.flat_max = flat_max;
      options.gathered_barrier = mode == 0;
      options.sliced_min = sliced_min;
      options.spin_turns = oversubscribed(n) ? 0 : 64;  // as the library does: spinning delays the others
      auto sync = ShmSync::attach(block.memory, block.bytes, r, options);
      if (!sync) {
        failures.push_back(sync.status().message());
      } else {
        body(r, **sync, failures);
      }
      std::lock_guard<std::mutex> guard(lock);
      for (auto& f : failures) all.push_back("rank " + std::to_string(r) + ": " + f);
    });
  }
  for (auto& t : threads) t.join();
  return all;
}

void spin_for(std::mt19937_64& rng) {
  const auto turns = rng() % 2000;
  for (std::uint64_t i = 0; i < turns; ++i) std::atomic_signal_fence(std::memory_order_seq_cst);
  if (rng() % 64 == 0) std::this_thread::yield();
}

}  // namespace

BOOST_AUTO_TEST_SUITE(shm_sync)

BOOST_AUTO_TEST_CASE(no_rank_leaves_a_barrier_before_every_rank_entered_it) {
  const std::uint64_t seed = ftmpi::test::seed_for("shm_sync barrier");
  for (const std::uint32_t flat_max : {8u, 1u, 0u}) {
    for (const int n : kRankCounts) {
      const std::uint64_t kRounds = oversubscribed(n) ? 500 : 3000;
      std::vector<std::atomic<std::uint64_t>> entered(static_cast<std::size_t>(n));
      const auto failures = run_ranks(n, 0, flat_max, [&](int rank, ShmSync& sync, std::vector<std::string>& f) {
        std::mt19937_64 rng(seed + static_cast<std::uint64_t>(rank));
        // Every rank runs every round even after a failure: the others would wait for it forever.
        for (std::uint64_t round = 1; round <= kRounds; ++round) {
          spin_for(rng);
          entered[static_cast<std::size_t>(rank)].store(round, std::memory_order_relaxed);
          sync.barrier();
          for (int r = 0; r < n; ++r) {
            const auto seen = entered[static_cast<std::size_t>(r)].load(std::memory_order_relaxed);
            if (seen < round && f.empty()) {
              f.push_back("left barrier " + std::to_string(round) + " while rank " + std::to_string(r) +
                          " had entered only " + std::to_string(seen));
            }
          }
        }
        if (sync.stats().barriers != kRounds && f.empty()) f.push_back("barrier count wrong");
      });
      BOOST_TEST_INFO("ranks " << n << ", mode " << flat_max);
      BOOST_TEST(failures.empty(), (failures.empty() ? std::string() : failures.front()));
    }
  }
}

// Operands up to 3.5 slots (several pieces, the last one partial), with every rank reducing all of each
// piece (sliced_min never reached), only its slice (sliced_min 0), or either by size (300 bytes), mixed
// with barriers and with each other so that both kinds reuse the slots of the other.
BOOST_AUTO_TEST_CASE(allreduce_gives_every_rank_the_rank_order_reduction) {
  const std::uint64_t seed = ftmpi::test::seed_for("shm_sync allreduce");
  constexpr std::size_t kSlot = 1024;
  auto sum = Reduction::predefined(Op::sum, Kind::float64).value();
  auto max = Reduction::predefined(Op::max, Kind::int32).value();
  auto affine = Reduction::user(UserOp{compose, false, sizeof(Affine), nullptr}).value();
  for (const std::uint32_t flat_max : {8u, 1u, 0u}) {
   for (const std::size_t sliced_min : {std::size_t{1} << 40, std::size_t{0}, std::size_t{300}}) {
    for (const int n : kRankCounts) {
      const auto failures = run_ranks(n, kSlot, flat_max, [&](int rank, ShmSync& sync, std::vector<std::string>& f) {
        std::mt19937_64 plan(seed ^ (n * 131u + flat_max + sliced_min * 7));  // the same draws at every rank
        std::mt19937_64 delay(seed + static_cast<std::uint64_t>(rank));
        // Operand of rank r in call i, computed alike everywhere: 16-byte words from a seeded stream.
        auto operand = [&](int r, int i, std::size_t bytes) {
          std::vector<std::uint64_t> v((bytes + 7) / 8);
          std::mt19937_64 gen(seed ^ (static_cast<std::uint64_t>(i) << 20) ^ static_cast<std::uint64_t>(r));
          for (auto& w : v) w = gen() | 1;  // odd multipliers keep the affine maps from collapsing to 0
          return v;
        };
        for (int i = 0; i < (oversubscribed(n) ? 50 : 150); ++i) {
          spin_for(delay);
          const auto what = plan() % 4;
          if (what == 0) {
            sync.barrier();
            continue;
          }
          const Reduction& red = what == 1 ? sum : what == 2 ? max : affine;
          const std::size_t count = plan() % (kSlot * 7 / 2 / red.element_size() + 1);
          const std::size_t bytes = count * red.element_size();
          const bool in_place = plan() % 2 == 0;
          std::vector<std::vector<std::uint64_t>> x;
          for (int r = 0; r < n; ++r) x.push_back(operand(r, i, bytes));
          if (what == 1) {  // finite doubles, so sums are numbers whose bits must agree exactly
            for (auto& v : x) {
              for (auto& w : v) w = (w & 0x800F'FFFF'FFFF'FFFFULL) | 0x3FF0'0000'0000'0000ULL;
            }
          }
          std::vector<std::uint64_t> want = x[static_cast<std::size_t>(n - 1)];
          for (int r = n - 1; r-- > 0;) red.apply(x[static_cast<std::size_t>(r)].data(), want.data(), count);
          std::vector<std::uint64_t> got(want.size(), 0xdeadbeef);
          std::vector<std::uint64_t> mine = x[static_cast<std::size_t>(rank)];
          const auto s = in_place ? sync.allreduce(mine.data(), mine.data(), count, red)
                                  : sync.allreduce(mine.data(), got.data(), count, red);
          if (in_place) got = mine;
          if (!f.empty()) continue;  // report the first failure, but take part in every call
          if (!s) {
            f.push_back("call " + std::to_string(i) + ": " + s.message());
          } else if (bytes != 0 && std::memcmp(got.data(), want.data(), bytes) != 0) {
            f.push_back("call " + std::to_string(i) + " (" + std::to_string(count) + " elements): wrong result");
          }
        }
      });
      BOOST_TEST_INFO("ranks " << n << ", mode " << flat_max << ", sliced from " << sliced_min << " bytes");
      BOOST_TEST(failures.empty(), (failures.empty() ? std::string() : failures.front()));
    }
   }
  }
}

BOOST_AUTO_TEST_CASE(an_element_larger_than_a_slot_is_refused) {
  const ShmSyncGeometry g{1, 64};
  ZeroedBlock block(ShmSyncRegion::bytes_for(g));
  BOOST_REQUIRE(ShmSyncRegion::format(block.memory, block.bytes, g));
  auto sync = ShmSync::attach(block.memory, block.bytes, 0).value();
  auto sum = Reduction::predefined(Op::sum, Kind::int64).value();
  std::vector<std::int64_t> v(9, 1);
  BOOST_TEST(static_cast<bool>(sync->allreduce(v.data(), v.data(), 9, sum)));  // in two pieces
  BOOST_TEST(v == std::vector<std::int64_t>(9, 1));
  auto wide = Reduction::user(UserOp{compose, true, 80, nullptr}).value();
  BOOST_TEST(sync->allreduce(v.data(), v.data(), 1, wide).code() == ftmpi::base::Errc::invalid_argument);
}

BOOST_AUTO_TEST_CASE(bad_blocks_and_ranks_are_refused) {
  const ShmSyncGeometry g{4, 256};
  ZeroedBlock block(ShmSyncRegion::bytes_for(g));
  BOOST_TEST(ShmSync::attach(block.memory, block.bytes, 0).status().code() == ftmpi::base::Errc::malformed);
  BOOST_TEST(ShmSyncRegion::format(block.memory, 64, g).code() == ftmpi::base::Errc::invalid_argument);
  BOOST_TEST(ShmSyncRegion::format(block.memory, block.bytes, ShmSyncGeometry{0, 256}).code() ==
             ftmpi::base::Errc::invalid_argument);
  BOOST_REQUIRE(ShmSyncRegion::format(block.memory, block.bytes, g));
  BOOST_TEST(ShmSync::attach(block.memory, block.bytes - 64, 0).status().code() == ftmpi::base::Errc::malformed);
  BOOST_TEST(ShmSync::attach(block.memory, block.bytes, 4).status().code() == ftmpi::base::Errc::invalid_argument);
  BOOST_TEST(ShmSync::attach(block.memory, block.bytes, -1).status().code() == ftmpi::base::Errc::invalid_argument);
  BOOST_TEST(static_cast<bool>(ShmSync::attach(block.memory, block.bytes, 3)));
}

BOOST_AUTO_TEST_SUITE_END()

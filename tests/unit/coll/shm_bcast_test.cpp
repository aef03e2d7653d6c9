// The shared-memory broadcast: N = 1, 2, 3, 4, 8 ranks as threads over one heap block, with the
// in-memory transport for resends and the fallback. Many consecutive broadcasts (far more chunks than
// channels, so the delayed synchronisation and the wrap-around run), random sizes from 0 to several
// channels and random roots, every byte checked against what the root sent; corruption injected
// between the root's write and the receivers' reads (resent, data intact); channel failure (by
// repeated corruption, and by a resend that takes longer than the timeout) ending in the
// point-to-point fallback at every rank with correct data; and the broadcast across two "hosts".
#include <boost/test/unit_test.hpp>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "ftmpi/coll/shm_bcast.hpp"
#include "ftmpi/test/seed.hpp"
#include "zeroed_block.hpp"
#include "mem_transport.hpp"

using namespace ftmpi::coll;
using namespace ftmpi::coll::test;

namespace {

constexpr int kRankCounts[] = {1, 2, 3, 4, 8};


// The bytes broadcast number i carries: every rank computes them alike.
void fill(std::vector<std::byte>& data, std::uint64_t seed, int i) {
  std::mt19937_64 rng(seed ^ (static_cast<std::uint64_t>(i) * 0x9e3779b97f4a7c15ULL));
  for (auto& b : data) b = static_cast<std::byte>(rng());
}

struct Case {
  ShmBcastGeometry geometry;
  ShmBcastOptions options;
  int broadcasts = 200;
  std::size_t max_bytes = 0;
  std::uint64_t seed = 0;
  ShmBcast::WriteHook hook;  // set on every rank
};

struct Totals {
  std::atomic<std::uint64_t> shm{0}, p2p{0}, checksum_failures{0}, resends{0}, scans{0};
  std::atomic<int> fallen_back{0};
};

std::vector<std::string> run_case(int n, const Case& c, Totals& totals) {
  MemWorld world(n, 256);
  ShmBcastGeometry g = c.geometry;
  g.ranks = static_cast<std::uint32_t>(n);
  ZeroedBlock block(ShmBcastRegion::bytes_for(g));
  BOOST_REQUIRE(ShmBcastRegion::format(block.memory, block.bytes, g));
  return run_ranks(world, [&](int rank, Transport& transport, std::vector<std::string>& failures) {
    ShmBcastOptions options = c.options;
    // A rank that failed must not leave the others spinning on the region forever.
    options.idle = [&world] {
      if (world.aborted()) throw std::runtime_error("aborted: another rank failed");
    };
    auto shm = ShmBcast::attach(block.memory, block.bytes, transport, options);
    if (!shm) {
      failures.push_back(shm.status().message());
      return;
    }
    if (c.hook) (*shm)->set_write_hook(c.hook);
    std::mt19937_64 plan(c.seed);  // the same draws at every rank
    std::vector<std::byte> buffer;
    std::vector<std::byte> expected;
    for (int i = 0; i < c.broadcasts; ++i) {
      const int root = static_cast<int>(plan() % static_cast<std::uint64_t>(n));
      std::size_t bytes = 0;
      switch (plan() % 8) {
        case 0: bytes = 0; break;
        case 1: bytes = c.max_bytes; break;
        case 2: case 3: bytes = plan() % (c.max_bytes + 1); break;
        default: bytes = 1 + plan() % 64; break;
      }
      expected.resize(bytes);
      fill(expected, c.seed, i);
      buffer.assign(bytes, std::byte{0xee});
      if (rank == root) buffer = expected;
      if (auto s = (*shm)->bcast(buffer.data(), bytes, root, 1000 + i); !s) {
        failures.push_back("broadcast " + std::to_string(i) + ": " + s.message());
        return;
      }
      if (buffer != expected) {
        failures.push_back("broadcast " + std::to_string(i) + " (" + std::to_string(bytes) + " bytes from rank " +
                           std::to_string(root) + "): wrong data");
        return;
      }
      if (rank == root) buffer.assign(bytes, std::byte{0xdd});  // the root may reuse its buffer at once
    }
    if (auto s = (*shm)->drain(); !s) failures.push_back("drain: " + s.message());
    const ShmBcastStats& st = (*shm)->stats();
    totals.shm += st.shm_broadcasts;
    totals.p2p += st.p2p_broadcasts;
    totals.checksum_failures += st.checksum_failures;
    totals.resends += st.resends;
    totals.scans += st.consumption_scans;
    totals.fallen_back += (*shm)->fallen_back() ? 1 : 0;
  });
}

Case base_case(std::string_view what) {
  Case c;
  c.seed = ftmpi::test::seed_for(what);
  c.geometry.channels = 4;
  c.geometry.channel_bytes = 256;
  c.max_bytes = 5 * 256 + 17;  // more channels than the ring holds
  c.options.keep_max = 300;
  c.options.failure_limit = 1'000'000;
  c.options.timeout = std::chrono::seconds(30);
  return c;
}

}  // namespace

BOOST_AUTO_TEST_CASE(region_size_and_format_check_the_geometry) {
  const ShmBcastGeometry g{4, 16, 1000};
  const std::size_t bytes = ShmBcastRegion::bytes_for(g);
  BOOST_TEST(bytes % 64 == 0);
  BOOST_TEST(bytes >= 64 * 5 + 16 * (64 + 1000));
  ZeroedBlock block(bytes);
  BOOST_TEST(!ShmBcastRegion::geometry_of(block.memory, block.bytes));  // not formatted yet
  BOOST_TEST(!ShmBcastRegion::format(block.memory, bytes - 64, g));
  BOOST_TEST(!ShmBcastRegion::format(block.memory, bytes, ShmBcastGeometry{4, 1, 1000}));
  BOOST_REQUIRE(ShmBcastRegion::format(block.memory, bytes, g));
  auto read = ShmBcastRegion::geometry_of(block.memory, block.bytes);
  BOOST_REQUIRE(read);
  BOOST_TEST(read->ranks == 4u);
  BOOST_TEST(read->channels == 16u);
  BOOST_TEST(read->channel_bytes == 1000u);
}

BOOST_AUTO_TEST_CASE(many_broadcasts_of_random_sizes_and_roots_arrive_intact) {
  for (int n : kRankCounts) {
    for (std::size_t keep_max : {std::size_t{0}, std::size_t{300}, std::size_t{1} << 20}) {
      Case c = base_case("shm_bcast random n=" + std::to_string(n));
      c.options.keep_max = keep_max;
      BOOST_TEST_CONTEXT("n=" << n << " keep_max=" << keep_max << " seed=" << c.seed) {
        Totals totals;
        const auto failures = run_case(n, c, totals);
        BOOST_TEST(failures.empty(), (failures.empty() ? std::string() : failures.front()));
        if (n > 1) {
          BOOST_TEST(totals.shm.load() > 0u);
          BOOST_TEST(totals.p2p.load() == 0u);
          BOOST_TEST(totals.scans.load() > 0u);  // the ring ran out: the delayed synchronisation ran
        }
        BOOST_TEST(totals.checksum_failures.load() == 0u);
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(a_corrupted_chunk_is_detected_and_resent) {
  for (int n : {2, 3, 4, 8}) {
    Case c = base_case("shm_bcast corrupt n=" + std::to_string(n));
    std::mt19937_64 pick(c.seed + 1);
    const std::uint64_t period = 5 + pick() % 7;
    // Flip one byte of every period-th chunk that has a payload (kept and not kept, first and later
    // chunks of large messages alike).
    c.hook = [period](std::span<std::byte> payload, std::uint64_t use) {
      if (!payload.empty() && use % period == 0) payload[use % payload.size()] ^= std::byte{0x40};
    };
    BOOST_TEST_CONTEXT("n=" << n << " seed=" << c.seed) {
      Totals totals;
      const auto failures = run_case(n, c, totals);
      BOOST_TEST(failures.empty(), (failures.empty() ? std::string() : failures.front()));
      BOOST_TEST(totals.checksum_failures.load() > 0u);
      BOOST_TEST(totals.resends.load() == totals.checksum_failures.load());
      BOOST_TEST(totals.fallen_back.load() == 0);
      BOOST_TEST(totals.p2p.load() == 0u);
    }
  }
}

BOOST_AUTO_TEST_CASE(repeated_checksum_failures_end_in_the_point_to_point_fallback) {
  for (int n : {2, 3, 4, 8}) {
    Case c = base_case("shm_bcast fail n=" + std::to_string(n));
    c.options.failure_limit = 2;
    c.broadcasts = 120;
    // The region goes bad after a while: every chunk from use 40 on is corrupted.
    c.hook = [](std::span<std::byte> payload, std::uint64_t use) {
      if (!payload.empty() && use >= 40) payload[0] ^= std::byte{1};
    };
    BOOST_TEST_CONTEXT("n=" << n << " seed=" << c.seed) {
      Totals totals;
      const auto failures = run_case(n, c, totals);
      BOOST_TEST(failures.empty(), (failures.empty() ? std::string() : failures.front()));
      BOOST_TEST(totals.fallen_back.load() == n);
      BOOST_TEST(totals.p2p.load() > 0u);
      BOOST_TEST(totals.shm.load() > 0u);
    }
  }
}

BOOST_AUTO_TEST_CASE(a_resend_past_the_timeout_ends_in_the_fallback) {
  for (int n : {2, 4}) {
    Case c = base_case("shm_bcast timeout n=" + std::to_string(n));
    c.options.timeout = std::chrono::nanoseconds(0);
    c.broadcasts = 60;
    c.hook = [](std::span<std::byte> payload, std::uint64_t use) {
      if (!payload.empty() && use == 10) payload[0] ^= std::byte{1};
    };
    BOOST_TEST_CONTEXT("n=" << n << " seed=" << c.seed) {
      Totals totals;
      const auto failures = run_case(n, c, totals);
      BOOST_TEST(failures.empty(), (failures.empty() ? std::string() : failures.front()));
      BOOST_TEST(totals.checksum_failures.load() > 0u);
      BOOST_TEST(totals.fallen_back.load() == n);
    }
  }
}

BOOST_AUTO_TEST_CASE(broadcasts_across_two_hosts_combine_leaders_and_regions) {
  const std::uint64_t seed = ftmpi::test::seed_for("shm_bcast hierarchical");
  // Rank r's host; host 2 has a single rank (no region).
  const std::vector<int> host_of = {0, 1, 0, 1, 1, 2, 0};
  const int n = static_cast<int>(host_of.size());
  MemWorld world(n, 256);
  const ShmBcastGeometry geometry{0, 4, 128};
  std::vector<std::unique_ptr<ZeroedBlock>> blocks;
  std::vector<std::vector<int>> members(3);
  for (int r = 0; r < n; ++r) members[static_cast<std::size_t>(host_of[static_cast<std::size_t>(r)])].push_back(r);
  for (const auto& m : members) {
    ShmBcastGeometry g = geometry;
    g.ranks = static_cast<std::uint32_t>(m.size());
    blocks.push_back(std::make_unique<ZeroedBlock>(ShmBcastRegion::bytes_for(g)));
    BOOST_REQUIRE(ShmBcastRegion::format(blocks.back()->memory, blocks.back()->bytes, g));
  }
  BOOST_TEST_CONTEXT("seed=" << seed) {
    const auto all_failures = run_ranks(world, [&](int rank, Transport& transport, std::vector<std::string>& failures) {
      const auto h = static_cast<std::size_t>(host_of[static_cast<std::size_t>(rank)]);
      SubsetTransport local(transport, members[h]);
      ShmBcastOptions options;
      options.idle = [&world] {
        if (world.aborted()) throw std::runtime_error("aborted: another rank failed");
      };
      std::unique_ptr<ShmBcast> shm;
      if (members[h].size() > 1) {
        auto made = ShmBcast::attach(blocks[h]->memory, blocks[h]->bytes, local, options);
        if (!made) {
          failures.push_back(made.status().message());
          return;
        }
        shm = std::move(*made);
      }
      std::mt19937_64 plan(seed);
      std::vector<std::byte> buffer;
      std::vector<std::byte> expected;
      for (int i = 0; i < 150; ++i) {
        const int root = static_cast<int>(plan() % static_cast<std::uint64_t>(n));
        const std::size_t bytes = plan() % 2 == 0 ? plan() % 40 : plan() % 700;
        expected.resize(bytes);
        fill(expected, seed, i);
        buffer.assign(bytes, std::byte{0xee});
        if (rank == root) buffer = expected;
        if (auto s = hierarchical_bcast(transport, host_of, shm.get(), buffer.data(), bytes, root, 50 + i,
                                        options.idle);
            !s) {
          failures.push_back("broadcast " + std::to_string(i) + ": " + s.message());
          return;
        }
        if (buffer != expected) {
          failures.push_back("broadcast " + std::to_string(i) + " from rank " + std::to_string(root) + ": wrong data");
          return;
        }
      }
      if (shm) {
        if (auto s = shm->drain(); !s) failures.push_back("drain: " + s.message());
      }
    });
    BOOST_TEST(all_failures.empty(), (all_failures.empty() ? std::string() : all_failures.front()));
  }
}

#include <boost/test/unit_test.hpp>

#include <sched.h>

#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "ftmpi/path/shm.hpp"
#include "ftmpi/test/seed.hpp"
#include "test_support.hpp"

using namespace ftmpi;
using namespace ftmpi::path;
using namespace ftmpi::path::test;

namespace {

// World ranks deliberately not 0..n-1: the path must translate them.
Rank world_rank_of(std::uint32_t local) { return 100 + 3 * local; }

std::vector<Rank> world_ranks(std::uint32_t n) {
  std::vector<Rank> ranks;
  for (std::uint32_t i = 0; i < n; ++i) ranks.push_back(world_rank_of(i));
  return ranks;
}

std::string describe(const base::Status& status) { return status.is_ok() ? "" : status.to_string(); }

// In a forked child: the engine's set-up order, with the barrier standing in for the launcher's.
base::Result<std::unique_ptr<ShmPath>> set_up(const ShmConfig& config, ProcessBarrier& barrier) {
  base::Status created = config.local_rank == 0 ? ShmPath::create(config) : base::Status::ok();
  barrier.arrive_and_wait();
  if (!created) return created;
  auto path = ShmPath::attach(config);
  barrier.arrive_and_wait();
  if (path && config.local_rank == 0) {
    if (base::Status s = (*path)->unlink_name(); !s) return s;
  }
  return path;
}

// Every local rank sends `per_pair` pattern frames to every local rank (itself included), choosing the
// destination of each frame at random and interleaving sends with polls of random budgets, and checks
// everything it receives. Returns "" or the first problem.
std::string exchange(std::uint32_t me, std::uint32_t n, std::uint32_t per_pair, std::uint64_t seed,
                     const ShmConfig& config, ProcessBarrier& barrier) {
  auto path = set_up(config, barrier);
  if (!path) return "set-up: " + path.status().to_string();
  ShmPath& shm = **path;
  const std::size_t max_frame = shm.info().max_frame;
  std::mt19937_64 rng(mix(seed + me));
  PatternChecker checker(seed, me, n, max_frame);
  std::vector<std::uint32_t> sent(n, 0);
  std::vector<std::uint32_t> open_peers(n);
  for (std::uint32_t i = 0; i < n; ++i) open_peers[i] = i;
  const std::size_t expected = std::size_t{n} * per_pair;
  while (checker.received() < expected || !open_peers.empty() || shm.has_queued_frames()) {
    for (std::uint64_t burst = rng() % 32; burst > 0 && !open_peers.empty(); --burst) {
      const std::size_t pick = rng() % open_peers.size();
      const std::uint32_t to = open_peers[pick];
      PatternFrame frame(seed, me, to, sent[to], max_frame);
      if (base::Status s = shm.send(world_rank_of(to), frame); !s) return "send: " + s.to_string();
      if (++sent[to] == per_pair) {
        open_peers[pick] = open_peers.back();
        open_peers.pop_back();
      }
    }
    if (shm.poll(checker, 1 + rng() % 64) == 0) ::sched_yield();
    if (!checker.error().empty()) return "rank " + std::to_string(me) + ": " + checker.error();
  }
  if (checker.received() != expected) {
    return "rank " + std::to_string(me) + " received " + std::to_string(checker.received()) + " frames, expected " +
           std::to_string(expected);
  }
  return "";
}

void run_exchange(std::uint32_t n, std::uint32_t per_pair, ShmGeometry geometry) {
  const std::uint64_t seed = ftmpi::test::seed_for("shm exchange");
  BOOST_TEST_CONTEXT("seed " << seed << ", " << n << " processes") {
    ShmName name("x" + std::to_string(n));
    ProcessBarrier barrier(n);
    BOOST_REQUIRE(barrier.valid());
    const auto failures = run_children(static_cast<int>(n), [&](int i) {
      const auto me = static_cast<std::uint32_t>(i);
      return exchange(me, n, per_pair, seed, ShmConfig{name.str(), me, world_ranks(n), geometry}, barrier);
    });
    for (const std::string& failure : failures) BOOST_ERROR(failure);
    BOOST_TEST(!name.exists(), "the segment's name must be gone after the run");
    BOOST_TEST(no_children_left());
  }
}

// Sends `count` frames to the path's own rank, numbered in their first four bytes.
void send_numbered(ShmPath& path, Rank self, std::uint32_t first, std::uint32_t count) {
  for (std::uint32_t i = first; i < first + count; ++i) {
    std::vector<std::byte> bytes(4 + i % 200);
    std::memcpy(bytes.data(), &i, 4);
    BytesFrame frame(bytes);
    BOOST_REQUIRE(path.send(self, frame).is_ok());
  }
}

std::unique_ptr<ShmPath> single_rank_path(const ShmName& name, Rank self, ShmGeometry geometry) {
  const ShmConfig config{name.str(), 0, {self}, geometry};
  BOOST_REQUIRE(ShmPath::create(config).is_ok());
  auto path = ShmPath::attach(config);
  BOOST_REQUIRE_MESSAGE(path.is_ok(), path.status().to_string());
  BOOST_REQUIRE((*path)->unlink_name().is_ok());
  return std::move(*path);
}

}  // namespace

BOOST_AUTO_TEST_SUITE(shm_exchange)

BOOST_AUTO_TEST_CASE(self_send_delivers_in_order_including_empty_frames) {
  ShmName name("self");
  auto path = single_rank_path(name, 42, ShmGeometry{16, 512});
  CollectingSink sink;
  BOOST_TEST(path->poll(sink, 10) == 0u);
  BytesFrame empty({});
  BOOST_TEST(path->send(42, empty).is_ok());
  send_numbered(*path, 42, 0, 10);
  BOOST_TEST(path->poll(sink, 100) == 11u);
  BOOST_TEST(sink.frames.at(0).empty());
  for (std::uint32_t i = 0; i < 10; ++i) {
    std::uint32_t got = 0;
    std::memcpy(&got, sink.frames.at(i + 1).data(), 4);
    BOOST_TEST(got == i);
    BOOST_TEST(sink.frames.at(i + 1).size() == 4 + i % 200);
  }
  BOOST_TEST(!path->has_queued_frames());
}

BOOST_AUTO_TEST_CASE(full_fifo_spills_to_overflow_and_keeps_order) {
  ShmName name("spill");
  auto path = single_rank_path(name, 0, ShmGeometry{4, 256});
  send_numbered(*path, 0, 0, 50);
  BOOST_TEST(path->has_queued_frames());
  CollectingSink sink;
  // Small budgets so that overflow drains and new sends interleave with reading.
  BOOST_TEST(path->poll(sink, 3) == 3u);
  send_numbered(*path, 0, 50, 50);
  while (path->poll(sink, 3) != 0) {
  }
  BOOST_TEST(!path->has_queued_frames());
  BOOST_REQUIRE(sink.frames.size() == 100u);
  for (std::uint32_t i = 0; i < 100; ++i) {
    std::uint32_t got = 0;
    std::memcpy(&got, sink.frames[i].data(), 4);
    BOOST_TEST_CONTEXT("frame " << i) {
      BOOST_TEST(got == i);
      BOOST_TEST(sink.frames[i].size() == 4 + i % 200);
    }
  }
}

BOOST_AUTO_TEST_CASE(frames_larger_than_max_frame_and_unknown_peers_are_caller_errors) {
  ShmName name("big");
  auto path = single_rank_path(name, 5, ShmGeometry{4, 256});
  std::vector<std::byte> largest(path->info().max_frame);
  std::vector<std::byte> too_big(path->info().max_frame + 1);
  BytesFrame ok(largest);
  BytesFrame big(too_big);
  BOOST_TEST(path->send(5, ok).is_ok());
  const base::Status refused = path->send(5, big);
  BOOST_TEST((refused.code() == base::Errc::out_of_range));
  BOOST_TEST((refused.severity() == base::Severity::caller));
  BOOST_TEST(refused.message().find("240") != std::string::npos);
  const base::Status stranger = path->send(6, ok);
  BOOST_TEST((stranger.severity() == base::Severity::caller));
  BOOST_TEST(!path->has_queued_frames());
  CollectingSink sink;
  BOOST_TEST(path->poll(sink, 10) == 1u);
}

BOOST_AUTO_TEST_CASE(poll_serves_incoming_fifos_round_robin) {
  // Two ranks attached from one process: rank 1 sends to itself and to rank 0, rank 0 to rank 0.
  ShmName name("fair");
  const ShmGeometry geometry{8, 128};
  BOOST_REQUIRE(ShmPath::create(ShmConfig{name.str(), 0, {0, 1}, geometry}).is_ok());
  auto a = ShmPath::attach(ShmConfig{name.str(), 0, {0, 1}, geometry});
  auto b = ShmPath::attach(ShmConfig{name.str(), 1, {0, 1}, geometry});
  BOOST_REQUIRE(a.is_ok());
  BOOST_REQUIRE(b.is_ok());
  BOOST_REQUIRE((*a)->unlink_name().is_ok());
  const std::vector<std::byte> from_a{std::byte{0xa}};
  const std::vector<std::byte> from_b{std::byte{0xb}};
  BytesFrame fa(from_a);
  BytesFrame fb(from_b);
  for (int i = 0; i < 3; ++i) {
    BOOST_REQUIRE((*a)->send(0, fa).is_ok());
    BOOST_REQUIRE((*b)->send(0, fb).is_ok());
  }
  CollectingSink sink;
  for (int i = 0; i < 6; ++i) BOOST_REQUIRE((*a)->poll(sink, 1) == 1u);
  std::string order;
  for (const auto& frame : sink.frames) order += frame.at(0) == std::byte{0xa} ? 'a' : 'b';
  BOOST_TEST(order == "ababab");
}

BOOST_AUTO_TEST_CASE(two_processes_exchange_random_frames_in_order) {
  run_exchange(2, 15000, ShmGeometry{16, 1024});
}

BOOST_AUTO_TEST_CASE(four_processes_exchange_random_frames_all_to_all) {
  run_exchange(4, 4000, ShmGeometry{8, 2048});
}

BOOST_AUTO_TEST_CASE(two_processes_that_send_everything_before_polling_both_finish) {
  constexpr std::uint32_t kFrames = 100000;
  const std::uint64_t seed = ftmpi::test::seed_for("shm send before poll");
  BOOST_TEST_CONTEXT("seed " << seed) {
    ShmName name("flood");
    ProcessBarrier barrier(2);
    BOOST_REQUIRE(barrier.valid());
    const ShmGeometry geometry{128, 128};
    const auto failures = run_children(2, [&](int i) -> std::string {
      const auto me = static_cast<std::uint32_t>(i);
      auto path = set_up(ShmConfig{name.str(), me, world_ranks(2), geometry}, barrier);
      if (!path) return "set-up: " + path.status().to_string();
      const Rank peer = world_rank_of(1 - me);
      for (std::uint32_t k = 0; k < kFrames; ++k) {
        PatternFrame frame(seed, me, 1 - me, k, geometry.max_frame());
        if (std::string e = describe((*path)->send(peer, frame)); !e.empty()) return e;
      }
      // Neither polls before both have sent everything: a peer that finished first and polled would let
      // this one's sends move its overflow into the slots it freed (a loaded machine ran them so).
      barrier.arrive_and_wait();
      if (!(*path)->has_queued_frames()) return "expected most frames to wait in the overflow list";
      PatternChecker checker(seed, me, 2, geometry.max_frame());
      while (checker.received() < kFrames || (*path)->has_queued_frames()) {
        if ((*path)->poll(checker, 256) == 0) ::sched_yield();
        if (!checker.error().empty()) return checker.error();
      }
      return checker.next_from(1 - me) == kFrames ? "" : "frames missing";
    });
    for (const std::string& failure : failures) BOOST_ERROR(failure);
    BOOST_TEST(!name.exists());
    BOOST_TEST(no_children_left());
  }
}

BOOST_AUTO_TEST_SUITE_END()

#include <boost/test/unit_test.hpp>

#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "ftmpi/path/loop.hpp"
#include "ftmpi/test/seed.hpp"
#include "test_support.hpp"

using namespace ftmpi;
using namespace ftmpi::path;
using namespace ftmpi::path::test;

namespace {

// Answers every frame it receives with an empty frame to `reply_to`, from inside on_frame.
class EchoSink final : public FrameSink {
 public:
  EchoSink(Path& path, Rank reply_to) : path_(path), reply_to_(reply_to) {}
  void on_frame(std::span<const std::byte> frame) noexcept override {
    if (frame.empty()) return;
    BytesFrame reply({});
    ok_ = ok_ && path_.send(reply_to_, reply).is_ok();
    ++echoed_;
  }
  int echoed() const { return echoed_; }
  bool ok() const { return ok_; }

 private:
  Path& path_;
  Rank reply_to_;
  int echoed_ = 0;
  bool ok_ = true;
};

}  // namespace

BOOST_AUTO_TEST_SUITE(loop_path)

BOOST_AUTO_TEST_CASE(frames_between_many_ranks_arrive_in_order_with_their_bytes) {
  const std::uint64_t seed = ftmpi::test::seed_for("loop order");
  BOOST_TEST_CONTEXT("seed " << seed) {
    constexpr std::uint32_t kRanks = 4;
    constexpr std::uint32_t kPerPair = 300;
    LoopNetwork network(kRanks, LoopOptions{1500, true});
    std::vector<std::unique_ptr<LoopPath>> paths;
    std::vector<PatternChecker> checkers;
    for (Rank r = 0; r < kRanks; ++r) {
      paths.push_back(std::make_unique<LoopPath>(network, r));
      checkers.emplace_back(seed, r, kRanks, 1500);
    }
    // One driver steps every rank: each sends one frame to every rank, then polls a little.
    for (std::uint32_t i = 0; i < kPerPair; ++i) {
      for (Rank from = 0; from < kRanks; ++from) {
        for (Rank to = 0; to < kRanks; ++to) {
          PatternFrame frame(seed, from, to, i, 1500);
          BOOST_REQUIRE(paths[from]->send(to, frame).is_ok());
        }
        paths[from]->poll(checkers[from], 1 + (i + from) % 5);
      }
    }
    for (Rank r = 0; r < kRanks; ++r) {
      while (paths[r]->poll(checkers[r], 7) != 0) {
      }
      BOOST_TEST_CONTEXT("rank " << r) {
        BOOST_TEST(checkers[r].error() == "");
        BOOST_TEST(checkers[r].received() == std::size_t{kRanks} * kPerPair);
        BOOST_TEST(!paths[r]->has_queued_frames());
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(frames_above_the_mtu_and_unknown_ranks_are_refused) {
  LoopNetwork network(2, LoopOptions{100, false});
  LoopPath path(network, 0);
  BOOST_TEST(path.info().max_frame == 100u);
  BOOST_TEST(!path.info().reliable);
  BOOST_TEST((path.info().kind == PathKind::loop));
  BOOST_TEST(path.reaches(1));
  BOOST_TEST(!path.reaches(2));
  std::vector<std::byte> mtu(100);
  std::vector<std::byte> above(101);
  BytesFrame fits(mtu);
  BytesFrame too_big(above);
  BOOST_TEST(path.send(1, fits).is_ok());
  const base::Status refused = path.send(1, too_big);
  BOOST_TEST((refused.code() == base::Errc::out_of_range));
  BOOST_TEST((refused.severity() == base::Severity::caller));
  BOOST_TEST((path.send(2, fits).severity() == base::Severity::caller));
  LoopPath peer(network, 1);
  CollectingSink sink;
  BOOST_TEST(peer.poll(sink, 10) == 1u);
  BOOST_TEST(sink.frames.at(0).size() == 100u);
}

BOOST_AUTO_TEST_CASE(a_sink_may_send_from_inside_on_frame_even_to_its_own_rank) {
  LoopNetwork network(1);
  LoopPath path(network, 0);
  EchoSink echo(path, 0);
  const std::vector<std::byte> ping{std::byte{1}};
  BytesFrame frame(ping);
  for (int i = 0; i < 3; ++i) BOOST_REQUIRE(path.send(0, frame).is_ok());
  BOOST_TEST(path.poll(echo, 3) == 3u);  // the three pings; the echoes queue behind them
  BOOST_TEST(echo.echoed() == 3);
  BOOST_TEST(echo.ok());
  CollectingSink rest;
  BOOST_TEST(path.poll(rest, 10) == 3u);
}

BOOST_AUTO_TEST_CASE(ranks_on_their_own_threads_exchange_everything) {
  const std::uint64_t seed = ftmpi::test::seed_for("loop threads");
  BOOST_TEST_CONTEXT("seed " << seed) {
    constexpr std::uint32_t kRanks = 4;
    constexpr std::uint32_t kPerPair = 2000;
    LoopNetwork network(kRanks);
    std::vector<std::string> errors(kRanks);
    std::vector<std::thread> threads;
    for (Rank r = 0; r < kRanks; ++r) {
      threads.emplace_back([&, r] {
        LoopPath path(network, r);
        PatternChecker checker(seed, r, kRanks, 512);
        for (std::uint32_t i = 0; i < kPerPair; ++i) {
          for (Rank to = 0; to < kRanks; ++to) {
            PatternFrame frame(seed, r, to, i, 512);
            if (!path.send(to, frame).is_ok()) errors[r] = "send failed";
          }
          path.poll(checker, 2);
        }
        while (checker.received() < std::size_t{kRanks} * kPerPair && checker.error().empty()) {
          if (path.poll(checker, 64) == 0) std::this_thread::yield();
        }
        if (errors[r].empty()) errors[r] = checker.error();
      });
    }
    for (std::thread& t : threads) t.join();
    for (Rank r = 0; r < kRanks; ++r) BOOST_TEST(errors[r] == "", "rank " << r);
  }
}

BOOST_AUTO_TEST_SUITE_END()

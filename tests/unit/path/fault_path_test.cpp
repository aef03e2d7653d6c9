#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "ftmpi/path/fault.hpp"
#include "ftmpi/path/loop.hpp"
#include "ftmpi/test/seed.hpp"
#include "test_support.hpp"

using namespace ftmpi;
using namespace ftmpi::path;
using namespace std::chrono_literals;
using ftmpi::path::test::CollectingSink;

namespace {

using Bytes = std::vector<std::byte>;

// Frame i: its index (u32) then bytes that follow from the index, so a receiver can tell which frame
// arrived and whether it was changed. Sizes vary with the index, from 4 to 4 + 96 bytes.
Bytes expected_frame(std::uint32_t index) {
  Bytes bytes(4 + (index * 7) % 97);
  std::memcpy(bytes.data(), &index, 4);
  for (std::size_t j = 4; j < bytes.size(); ++j) bytes[j] = static_cast<std::byte>(index * 31 + j * 13 + 5);
  return bytes;
}

class IndexedFrame final : public FrameWriter {
 public:
  explicit IndexedFrame(std::uint32_t index, bool bulk = false)
      : bytes_(expected_frame(index)), bulk_(bulk) {}
  std::size_t frame_size() const noexcept override { return bytes_.size(); }
  void write(std::span<std::byte> room) noexcept override {
    ++writes_;
    std::memcpy(room.data(), bytes_.data(), bytes_.size());
  }
  bool bulk() const noexcept override { return bulk_; }
  int writes() const { return writes_; }

 private:
  Bytes bytes_;
  bool bulk_;
  int writes_ = 0;
};

std::uint32_t index_of(const Bytes& frame) {
  std::uint32_t index = 0;
  std::memcpy(&index, frame.data(), 4);
  return index;
}

// A time the test moves by hand.
struct FakeClock {
  FaultClock::time_point now{std::chrono::seconds(1000)};
  std::function<FaultClock::time_point()> reader() {
    return [this] { return now; };
  }
};

std::vector<FaultSpec> plan(std::string_view text) {
  auto specs = parse_fault_plan(text);
  BOOST_TEST_REQUIRE(specs.is_ok(), specs.status().to_string());
  return *specs;
}

// Rank 0 sends through a FaultPath, rank 1 receives on a plain loop path.
struct Pair {
  explicit Pair(std::string_view specs, FaultOptions options = {})
      : network(2), sender(std::make_unique<LoopPath>(network, 0), plan(specs), std::move(options)),
        receiver(network, 1) {}

  void send_frames(std::uint32_t first, std::uint32_t count) {
    for (std::uint32_t i = first; i < first + count; ++i) {
      IndexedFrame frame(i);
      BOOST_TEST_REQUIRE(sender.send(1, frame).is_ok());
    }
  }
  // Everything rank 1 has received so far.
  std::vector<Bytes> receive() {
    CollectingSink sink;
    while (receiver.poll(sink, 1000) != 0) {
    }
    return std::move(sink.frames);
  }

  LoopNetwork network;
  FaultPath sender;
  LoopPath receiver;
};

std::vector<std::uint32_t> indices(const std::vector<Bytes>& frames) {
  std::vector<std::uint32_t> out;
  for (const Bytes& frame : frames) out.push_back(index_of(frame));
  return out;
}

std::vector<std::uint32_t> iota(std::uint32_t first, std::uint32_t count) {
  std::vector<std::uint32_t> out;
  for (std::uint32_t i = first; i < first + count; ++i) out.push_back(i);
  return out;
}

// Records what reaches it instead of delivering it; can be told to refuse sends.
class RecordingPath final : public Path {
 public:
  struct Sent {
    Rank peer;
    Bytes bytes;
    bool bulk;
  };
  RecordingPath() {
    info_.kind = PathKind::udp;
    info_.name = "udp 127.0.0.2";
    info_.max_frame = 256;
    info_.reliable = true;
    info_.gathers = true;
    info_.bandwidth_hint = 5e9;
  }
  const PathInfo& info() const noexcept override { return info_; }
  bool reaches(Rank peer) const noexcept override { return peer < 4; }
  base::Status send(Rank peer, FrameWriter& frame) noexcept override {
    if (peer >= 4) return {base::Errc::invalid_argument, "no rank " + std::to_string(peer)};
    if (frame.frame_size() > info_.max_frame) return {base::Errc::out_of_range, "too large"};
    if (broken) return {base::Errc::rail_down, "rail down"};
    Bytes bytes(frame.frame_size());
    frame.write(bytes);
    sent.push_back({peer, std::move(bytes), frame.bulk()});
    return {};
  }
  std::size_t poll(FrameSink&, std::size_t) noexcept override {
    ++polls;
    return 0;
  }
  bool has_queued_frames() const noexcept override { return queued; }

  std::vector<Sent> sent;
  bool broken = false;
  bool queued = false;
  int polls = 0;

 private:
  PathInfo info_;
};

struct Recorded {
  explicit Recorded(std::string_view specs, FaultOptions options = {}) {
    auto owned = std::make_unique<RecordingPath>();
    inner = owned.get();
    path = std::make_unique<FaultPath>(std::move(owned), plan(specs), std::move(options));
  }
  RecordingPath* inner = nullptr;
  std::unique_ptr<FaultPath> path;
};

// Which of frames 0..n-1 a drop plan loses, as seen by the receiver.
std::vector<std::uint32_t> lost_frames(const std::string& specs, std::uint32_t n) {
  Pair pair(specs);
  pair.send_frames(0, n);
  const std::vector<std::uint32_t> received = indices(pair.receive());
  const std::vector<std::uint32_t> sent = iota(0, n);
  std::vector<std::uint32_t> lost;
  std::set_difference(sent.begin(), sent.end(), received.begin(), received.end(), std::back_inserter(lost));
  BOOST_TEST(pair.sender.counters().dropped == lost.size());
  BOOST_TEST(pair.sender.counters().frames_seen == n);
  return lost;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(fault_path)

BOOST_AUTO_TEST_CASE(an_empty_plan_forwards_every_frame_unchanged_without_copying_it) {
  Pair pair("");
  for (std::uint32_t i = 0; i < 200; ++i) {
    IndexedFrame frame(i);
    BOOST_TEST_REQUIRE(pair.sender.send(1, frame).is_ok());
    BOOST_TEST(frame.writes() == 1);  // written once, by the loop path: FaultPath made no copy
  }
  const std::vector<Bytes> frames = pair.receive();
  BOOST_TEST_REQUIRE(frames.size() == 200u);
  for (std::uint32_t i = 0; i < 200; ++i) BOOST_TEST((frames[i] == expected_frame(i)), "frame " << i);
  const FaultCounters& counters = pair.sender.counters();
  BOOST_TEST(counters.frames_seen == 200u);
  BOOST_TEST(counters.dropped + counters.corrupted + counters.duplicated + counters.reordered +
                 counters.delayed + counters.blackholed ==
             0u);
  BOOST_TEST(!pair.sender.has_queued_frames());
}

BOOST_AUTO_TEST_CASE(info_is_the_inner_paths_and_never_reliable) {
  Recorded recorded("");
  const PathInfo& info = recorded.path->info();
  BOOST_TEST(info.name == "udp 127.0.0.2");  // every network rail has a fault layer: no new name
  BOOST_TEST(!info.reliable);
  BOOST_TEST(info.gathers);  // a frame it holds back it copies whole; the others go to the inner path as offered
  BOOST_TEST((info.kind == PathKind::udp));
  BOOST_TEST(info.max_frame == 256u);
  BOOST_TEST(info.bandwidth_hint == 5e9);
  BOOST_TEST(recorded.path->reaches(3));
  BOOST_TEST(!recorded.path->reaches(4));
}

BOOST_AUTO_TEST_CASE(drop_probability_one_loses_every_frame) {
  Pair pair("drop=1");
  pair.send_frames(0, 500);
  BOOST_TEST(pair.receive().empty());
  BOOST_TEST(pair.sender.counters().dropped == 500u);
  BOOST_TEST(pair.sender.counters().frames_seen == 500u);
}

BOOST_AUTO_TEST_CASE(drop_probability_loses_that_share_of_frames_and_a_seed_replays_them) {
  const std::uint64_t seed = ftmpi::test::seed_for("fault drop share");
  BOOST_TEST_CONTEXT("seed " << seed) {
    constexpr std::uint32_t kFrames = 10'000;
    const std::string specs = "drop=0.3,seed=" + std::to_string(seed);
    const std::vector<std::uint32_t> lost = lost_frames(specs, kFrames);
    // Binomial(10000, 0.3): standard deviation 46; 6 of them either side fails once in ~10^9 runs.
    BOOST_TEST(lost.size() > 2725u);
    BOOST_TEST(lost.size() < 3275u);
    BOOST_TEST((lost_frames(specs, kFrames) == lost), "the same seed lost other frames");
    BOOST_TEST((lost_frames("drop=0.3,seed=" + std::to_string(seed + 1), kFrames) != lost),
               "another seed lost the same frames");
  }
}

BOOST_AUTO_TEST_CASE(without_a_seed_the_default_seed_replays_and_the_stream_changes_the_draws) {
  const std::vector<std::uint32_t> lost = lost_frames("drop=0.5", 2000);
  BOOST_TEST((lost == lost_frames("drop=0.5,seed=" + std::to_string(kDefaultFaultSeed), 2000)));
  Pair other_stream("drop=0.5", FaultOptions{.stream = 1});
  other_stream.send_frames(0, 2000);
  BOOST_TEST(other_stream.sender.counters().dropped > 0u);
  const std::vector<std::uint32_t> received = indices(other_stream.receive());
  const std::vector<std::uint32_t> sent = iota(0, 2000);
  std::vector<std::uint32_t> lost_on_stream_1;
  std::set_difference(sent.begin(), sent.end(), received.begin(), received.end(),
                      std::back_inserter(lost_on_stream_1));
  BOOST_TEST((lost_on_stream_1 != lost));
}

BOOST_AUTO_TEST_CASE(corrupt_probability_one_changes_every_frame_and_counts_each) {
  const std::uint64_t seed = ftmpi::test::seed_for("fault corrupt");
  BOOST_TEST_CONTEXT("seed " << seed) {
    constexpr std::uint32_t kFrames = 2000;
    const std::string specs = "corrupt=1,seed=" + std::to_string(seed);
    Pair pair(specs);
    pair.send_frames(0, kFrames);
    const std::vector<Bytes> frames = pair.receive();
    BOOST_TEST_REQUIRE(frames.size() == kFrames);
    BOOST_TEST(pair.sender.counters().corrupted == kFrames);
    std::size_t most_changed = 0;
    for (std::uint32_t i = 0; i < kFrames; ++i) {
      const Bytes expected = expected_frame(i);
      BOOST_TEST_REQUIRE(frames[i].size() == expected.size());  // order is kept: frame i is the i-th
      std::size_t changed = 0;
      for (std::size_t j = 0; j < expected.size(); ++j) changed += frames[i][j] != expected[j] ? 1 : 0;
      BOOST_TEST_REQUIRE(changed >= 1u, "frame " << i << " arrived unchanged");
      BOOST_TEST_REQUIRE(changed <= 8u, "frame " << i << " has " << changed << " bytes changed");
      most_changed = std::max(most_changed, changed);
    }
    BOOST_TEST(most_changed > 1u);  // 1..8 bytes, not always one

    Pair replay(specs);
    replay.send_frames(0, kFrames);
    BOOST_TEST((replay.receive() == frames), "the same seed corrupted other bytes");
  }
}

BOOST_AUTO_TEST_CASE(corrupted_counts_only_frames_that_reach_the_inner_path) {
  const std::uint64_t seed = ftmpi::test::seed_for("fault corrupt and drop");
  BOOST_TEST_CONTEXT("seed " << seed) {
    Pair pair("corrupt=1,drop=0.5,seed=" + std::to_string(seed));
    pair.send_frames(0, 1000);
    const std::size_t received = pair.receive().size();
    BOOST_TEST(received > 0u);
    BOOST_TEST(received < 1000u);
    BOOST_TEST(pair.sender.counters().corrupted == received);
    BOOST_TEST(pair.sender.counters().dropped == 1000u - received);
  }
}

BOOST_AUTO_TEST_CASE(dup_probability_one_delivers_each_frame_twice) {
  Pair pair("dup=1");
  pair.send_frames(0, 300);
  const std::vector<Bytes> frames = pair.receive();
  BOOST_TEST_REQUIRE(frames.size() == 600u);
  for (std::uint32_t i = 0; i < 300; ++i) {
    BOOST_TEST((frames[2 * i] == expected_frame(i)), "first copy of frame " << i);
    BOOST_TEST((frames[2 * i + 1] == expected_frame(i)), "second copy of frame " << i);
  }
  BOOST_TEST(pair.sender.counters().duplicated == 300u);
}

BOOST_AUTO_TEST_CASE(reorder_changes_the_order_but_loses_nothing) {
  const std::uint64_t seed = ftmpi::test::seed_for("fault reorder");
  BOOST_TEST_CONTEXT("seed " << seed) {
    FakeClock clock;
    Pair pair("reorder=0.3,seed=" + std::to_string(seed), FaultOptions{.now = clock.reader()});
    constexpr std::uint32_t kFrames = 1000;
    pair.send_frames(0, kFrames);
    // The last frames may still wait for a later frame; after the hold they leave from poll().
    clock.now += 1ms;
    CollectingSink none;
    pair.sender.poll(none, 10);
    BOOST_TEST(!pair.sender.has_queued_frames());
    const std::vector<Bytes> frames = pair.receive();
    const std::vector<std::uint32_t> order = indices(frames);
    BOOST_TEST_REQUIRE(order.size() == kFrames);
    BOOST_TEST((order != iota(0, kFrames)), "nothing was reordered");
    std::vector<std::uint32_t> sorted = order;
    std::sort(sorted.begin(), sorted.end());
    BOOST_TEST((sorted == iota(0, kFrames)), "a frame was lost or duplicated");
    for (const Bytes& frame : frames) BOOST_TEST_REQUIRE((frame == expected_frame(index_of(frame))));
    const std::uint64_t reordered = pair.sender.counters().reordered;
    BOOST_TEST(reordered > 200u);
    BOOST_TEST(reordered < 400u);
  }
}

BOOST_AUTO_TEST_CASE(a_reordered_frame_leaves_right_after_the_next_frame_to_its_peer) {
  FakeClock clock;
  Recorded recorded("reorder=1", FaultOptions{.now = clock.reader(), .reorder_hold = 5ms});
  IndexedFrame first(0);
  BOOST_TEST_REQUIRE(recorded.path->send(2, first).is_ok());
  BOOST_TEST(recorded.inner->sent.empty());
  BOOST_TEST(recorded.path->has_queued_frames());
  // A frame to another peer does not release it.
  recorded.path->set_specs({});
  IndexedFrame to_other(1);
  BOOST_TEST_REQUIRE(recorded.path->send(3, to_other).is_ok());
  BOOST_TEST_REQUIRE(recorded.inner->sent.size() == 1u);
  IndexedFrame second(2);
  BOOST_TEST_REQUIRE(recorded.path->send(2, second).is_ok());
  BOOST_TEST_REQUIRE(recorded.inner->sent.size() == 3u);
  BOOST_TEST(index_of(recorded.inner->sent[1].bytes) == 2u);
  BOOST_TEST(index_of(recorded.inner->sent[2].bytes) == 0u);
  BOOST_TEST(!recorded.path->has_queued_frames());
}

BOOST_AUTO_TEST_CASE(a_reordered_frame_with_no_successor_leaves_from_poll_after_the_hold) {
  FakeClock clock;
  Recorded recorded("reorder=1", FaultOptions{.now = clock.reader(), .reorder_hold = 5ms});
  IndexedFrame only(7);
  BOOST_TEST_REQUIRE(recorded.path->send(1, only).is_ok());
  CollectingSink sink;
  clock.now += 4ms;
  recorded.path->poll(sink, 1);
  BOOST_TEST(recorded.inner->sent.empty());
  clock.now += 1ms;
  recorded.path->poll(sink, 1);
  BOOST_TEST_REQUIRE(recorded.inner->sent.size() == 1u);
  BOOST_TEST((recorded.inner->sent[0].bytes == expected_frame(7)));
  BOOST_TEST(recorded.inner->polls == 2);  // poll() still polls the inner path
}

BOOST_AUTO_TEST_CASE(delay_holds_frames_until_the_clock_passes_it) {
  FakeClock clock;
  Pair pair("delay=5ms", FaultOptions{.now = clock.reader()});
  pair.send_frames(0, 10);
  CollectingSink none;
  BOOST_TEST(pair.receive().empty());
  BOOST_TEST(pair.sender.has_queued_frames());
  BOOST_TEST(pair.sender.held_frames() == 10u);
  clock.now += 4999us;
  pair.sender.poll(none, 10);
  BOOST_TEST(pair.receive().empty());
  clock.now += 1us;
  pair.sender.poll(none, 10);
  BOOST_TEST((indices(pair.receive()) == iota(0, 10)));
  BOOST_TEST(!pair.sender.has_queued_frames());
  BOOST_TEST(pair.sender.counters().delayed == 10u);

  // send() releases what is due as well, before it holds the new frame.
  pair.send_frames(10, 5);
  clock.now += 5ms;
  pair.send_frames(15, 1);
  BOOST_TEST((indices(pair.receive()) == iota(10, 5)));
  BOOST_TEST(pair.sender.held_frames() == 1u);
}

BOOST_AUTO_TEST_CASE(a_blackhole_loses_every_frame_inside_its_window_only) {
  FakeClock clock;
  Pair pair("blackhole,after=10ms,for=20ms", FaultOptions{.now = clock.reader()});
  pair.send_frames(0, 5);  // before the window
  clock.now += 10ms;
  pair.send_frames(5, 5);  // its first instant
  clock.now += 19999us;
  pair.send_frames(10, 5);  // its last microsecond
  clock.now += 1us;
  pair.send_frames(15, 5);  // after it
  std::vector<std::uint32_t> expected = iota(0, 5);
  for (std::uint32_t i : iota(15, 5)) expected.push_back(i);
  BOOST_TEST((indices(pair.receive()) == expected));
  BOOST_TEST(pair.sender.counters().blackholed == 10u);
  BOOST_TEST(pair.sender.counters().dropped == 0u);
}

BOOST_AUTO_TEST_CASE(a_window_in_traffic_opens_and_closes_with_the_bytes_moved_not_the_clock) {
  FakeClock clock;
  std::uint64_t moved = 1000;  // what the engine has sent and received on all rails
  Pair pair("blackhole,after=100B,for=50B",
            FaultOptions{.now = clock.reader(), .traffic = [&moved] { return moved; }});
  clock.now += 1h;  // time alone opens nothing
  pair.send_frames(0, 3);
  moved += 99;
  pair.send_frames(3, 3);
  moved += 1;  // 100 bytes since the plan was installed: open
  clock.now += 1h;
  pair.send_frames(6, 3);
  moved += 49;
  pair.send_frames(9, 3);
  moved += 1;  // 50 more bytes since it opened: closed, and it stays closed
  pair.send_frames(12, 3);
  moved = 0;
  pair.send_frames(15, 3);
  std::vector<std::uint32_t> expected = iota(0, 6);
  for (std::uint32_t i : iota(12, 6)) expected.push_back(i);
  BOOST_TEST((indices(pair.receive()) == expected));
  BOOST_TEST(pair.sender.counters().blackholed == 6u);
}

BOOST_AUTO_TEST_CASE(a_window_opened_by_traffic_lasts_its_time_from_when_it_opened) {
  FakeClock clock;
  std::uint64_t moved = 0;
  Pair pair("drop=1,after=1KB,for=10ms", FaultOptions{.now = clock.reader(), .traffic = [&moved] { return moved; }});
  clock.now += 1s;
  pair.send_frames(0, 2);
  moved = 1024;
  pair.send_frames(2, 2);  // opens now, not a second ago
  clock.now += 9999us;
  pair.send_frames(4, 2);
  clock.now += 1us;
  pair.send_frames(6, 2);
  std::vector<std::uint32_t> expected = iota(0, 2);
  for (std::uint32_t i : iota(6, 2)) expected.push_back(i);
  BOOST_TEST((indices(pair.receive()) == expected));
}

BOOST_AUTO_TEST_CASE(without_a_traffic_source_a_window_counts_the_bytes_sent_through_the_path) {
  // Frames 0, 1, 2, 3 have 4, 11, 18, 25 bytes (expected_frame): 33 bytes before frame 3, 58 with it,
  // so frame 3 is the first one lost (a frame counts before it is decided).
  Pair pair("drop=1,after=40B");
  pair.send_frames(0, 6);
  BOOST_TEST((indices(pair.receive()) == iota(0, 3)));
}

BOOST_AUTO_TEST_CASE(windows_count_from_when_the_plan_was_installed) {
  FakeClock clock;
  Pair pair("", FaultOptions{.now = clock.reader()});
  clock.now += 100ms;
  pair.sender.set_specs(plan("drop=1,after=10ms"));
  clock.now += 9ms;
  pair.send_frames(0, 3);
  clock.now += 1ms;
  pair.send_frames(3, 3);
  BOOST_TEST((indices(pair.receive()) == iota(0, 3)));
  // Added specs have windows of their own: a blackhole for 1ms from now.
  pair.sender.set_specs({});
  pair.sender.add_specs(plan("blackhole,for=1ms"));
  pair.send_frames(6, 2);
  clock.now += 1ms;
  pair.send_frames(8, 2);
  BOOST_TEST((indices(pair.receive()) == iota(8, 2)));
}

BOOST_AUTO_TEST_CASE(the_plan_can_be_replaced_and_added_to_at_run_time) {
  Pair pair("");
  pair.send_frames(0, 10);
  pair.sender.set_specs(plan("drop=1"));
  pair.send_frames(10, 10);
  pair.sender.set_specs({});
  pair.send_frames(20, 10);
  pair.sender.add_specs(plan("dup=1"));
  pair.send_frames(30, 1);
  pair.sender.add_specs(plan("blackhole"));
  pair.send_frames(31, 1);
  std::vector<std::uint32_t> expected = iota(0, 10);
  for (std::uint32_t i : iota(20, 10)) expected.push_back(i);
  expected.push_back(30);
  expected.push_back(30);
  BOOST_TEST((indices(pair.receive()) == expected));
  BOOST_TEST(pair.sender.specs().size() == 2u);
  BOOST_TEST(pair.sender.counters().dropped == 10u);
  BOOST_TEST(pair.sender.counters().blackholed == 1u);
}

BOOST_AUTO_TEST_CASE(a_spec_whose_window_ended_is_removed_and_its_state_said) {
  FakeClock clock;
  Pair pair("", FaultOptions{.now = clock.reader()});
  pair.sender.add_specs(plan("drop=1,after=5ms,for=10ms"));
  pair.sender.add_specs(plan("dup=1,after=1MB"));
  using State = FaultPath::SpecState;
  BOOST_TEST((pair.sender.spec_state(0) == State::waiting));
  BOOST_TEST((pair.sender.spec_state(1) == State::waiting));
  clock.now += 5ms;
  BOOST_TEST((pair.sender.spec_state(0) == State::active));  // open in time even before a frame saw it
  pair.send_frames(0, 2);
  clock.now += 10ms;
  BOOST_TEST((pair.sender.spec_state(0) == State::ended));
  BOOST_TEST(pair.sender.specs().size() == 2u);
  pair.send_frames(2, 2);  // the next frame closes the window for good: the spec goes
  BOOST_TEST(pair.sender.specs().size() == 1u);
  BOOST_TEST((pair.sender.spec_state(0) == State::waiting));
  BOOST_TEST((indices(pair.receive()) == iota(2, 2)));
  pair.sender.set_specs({});
  BOOST_TEST(pair.sender.specs().empty());
}

BOOST_AUTO_TEST_CASE(bulk_is_kept_on_every_copy_a_fault_makes) {
  for (const char* specs :
       {"", "corrupt=1", "dup=1", "delay=1ms", "reorder=1", "corrupt=1,dup=1,delay=2ms"}) {
    BOOST_TEST_CONTEXT("plan '" << specs << "'") {
      FakeClock clock;
      Recorded recorded(specs, FaultOptions{.now = clock.reader()});
      for (std::uint32_t i = 0; i < 20; ++i) {
        IndexedFrame frame(i, i % 3 == 0);
        BOOST_TEST_REQUIRE(recorded.path->send(1, frame).is_ok());
      }
      clock.now += 1s;
      CollectingSink none;
      recorded.path->poll(none, 1);
      // Every plan here keeps the order, and a corrupted index cannot be read: frame k / copies is the
      // k-th frame the inner path got.
      const std::vector<RecordingPath::Sent>& sent = recorded.inner->sent;
      const std::size_t copies = std::string_view(specs).find("dup") != std::string_view::npos ? 2 : 1;
      BOOST_TEST_REQUIRE(sent.size() == 20 * copies);
      for (std::size_t k = 0; k < sent.size(); ++k) {
        BOOST_TEST(sent[k].bulk == (k / copies % 3 == 0), "frame " << k / copies);
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(frames_the_inner_path_cannot_take_are_refused_with_its_error_and_never_held) {
  Recorded recorded("delay=1ms,corrupt=1");
  const Bytes large(257);
  ftmpi::path::test::BytesFrame too_large(large);
  const base::Status refused = recorded.path->send(1, too_large);
  BOOST_TEST((refused.code() == base::Errc::out_of_range));
  IndexedFrame frame(0);
  BOOST_TEST((recorded.path->send(4, frame).code() == base::Errc::invalid_argument));
  BOOST_TEST(recorded.path->held_frames() == 0u);
  BOOST_TEST(recorded.path->counters().frames_seen == 0u);
}

BOOST_AUTO_TEST_CASE(an_inner_error_for_a_held_frame_is_reported_by_the_next_send) {
  FakeClock clock;
  Recorded recorded("delay=1ms", FaultOptions{.now = clock.reader()});
  IndexedFrame frame(0);
  BOOST_TEST_REQUIRE(recorded.path->send(1, frame).is_ok());
  recorded.inner->broken = true;
  clock.now += 1ms;
  CollectingSink none;
  recorded.path->poll(none, 1);  // the release fails inside poll, which cannot return it
  BOOST_TEST(!recorded.path->has_queued_frames());
  recorded.path->set_specs({});
  recorded.inner->broken = false;
  IndexedFrame next(1);
  BOOST_TEST((recorded.path->send(1, next).code() == base::Errc::rail_down));
  BOOST_TEST(recorded.path->send(1, next).is_ok());
  BOOST_TEST(recorded.inner->sent.size() == 1u);
}

BOOST_AUTO_TEST_CASE(queued_frames_of_the_inner_path_count_as_queued) {
  Recorded recorded("");
  BOOST_TEST(!recorded.path->has_queued_frames());
  recorded.inner->queued = true;
  BOOST_TEST(recorded.path->has_queued_frames());
}

BOOST_AUTO_TEST_CASE(empty_frames_pass_every_fault_without_harm) {
  Recorded recorded("corrupt=1,dup=1");
  ftmpi::path::test::BytesFrame empty({});
  BOOST_TEST_REQUIRE(recorded.path->send(1, empty).is_ok());
  BOOST_TEST_REQUIRE(recorded.inner->sent.size() == 2u);
  BOOST_TEST(recorded.inner->sent[0].bytes.empty());
  BOOST_TEST(recorded.path->counters().corrupted == 0u);  // nothing could be corrupted
}

BOOST_AUTO_TEST_SUITE_END()

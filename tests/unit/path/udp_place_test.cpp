// UdpPath receiving into place (FrameSink::place, path.udp.place), over loopback only.
#include <arpa/inet.h>
#include <sys/socket.h>
#include <unistd.h>

#include <boost/test/unit_test.hpp>

#include <chrono>
#include <cstring>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "ftmpi/base/params.hpp"
#include "ftmpi/path/params.hpp"
#include "ftmpi/path/udp.hpp"
#include "ftmpi/test/seed.hpp"
#include "test_support.hpp"

using namespace ftmpi;
using namespace ftmpi::path;
using namespace ftmpi::path::test;

namespace {

using Clock = std::chrono::steady_clock;

constexpr std::uint32_t kLoopback = 0x7f000001;
constexpr std::size_t kMaxFrame = 9000;

// The test's wire header: where the payload goes (8 bytes), how long it says the payload is (4), and
// 4 bytes of nothing, so that the header is not a multiple of anything the path might assume.
constexpr std::size_t kHead = 16;

std::vector<std::byte> make_frame(std::uint64_t offset, std::uint32_t claimed, std::size_t payload,
                                  std::uint64_t salt) {
  std::vector<std::byte> frame(kHead + payload);
  std::memcpy(frame.data(), &offset, 8);
  std::memcpy(frame.data() + 8, &claimed, 4);
  std::mt19937_64 bytes(salt);
  for (std::size_t i = kHead; i < frame.size(); ++i) frame[i] = static_cast<std::byte>(bytes());
  return frame;
}

// Places each payload at the offset its header names in `buffer`, sized by the header's claimed length
// (not the datagram's), unless told to decline; keeps what it was handed.
class PlacingSink final : public FrameSink {
 public:
  explicit PlacingSink(std::size_t capacity) : buffer(capacity, std::byte{0xEE}) {}

  std::size_t place_header_size() const noexcept override { return kHead; }
  std::span<std::byte> place(std::span<const std::byte> header, std::size_t frame_length) noexcept override {
    ++asked;
    last_frame_length = frame_length;
    if (decline) return {};
    std::uint64_t offset = 0;
    std::uint32_t claimed = 0;
    std::memcpy(&offset, header.data(), 8);
    std::memcpy(&claimed, header.data() + 8, 4);
    if (offset + claimed > buffer.size()) return {};
    return {buffer.data() + offset, claimed};
  }
  void on_frame_parts(std::span<const std::byte> header, std::span<const std::byte> payload) noexcept override {
    std::uint64_t offset = 0;
    std::memcpy(&offset, header.data(), 8);
    in_place = in_place && payload.data() == buffer.data() + offset;
    std::vector<std::byte> frame(header.begin(), header.end());
    frame.insert(frame.end(), payload.begin(), payload.end());
    placed.push_back(std::move(frame));
  }
  void on_frame(std::span<const std::byte> frame) noexcept override { whole.emplace_back(frame.begin(), frame.end()); }

  std::vector<std::byte> buffer;
  bool decline = false;
  int asked = 0;
  std::size_t last_frame_length = 0;
  bool in_place = true;  // every placed payload was where place() said
  std::vector<std::vector<std::byte>> placed;  // header + payload of frames received into place
  std::vector<std::vector<std::byte>> whole;   // frames handed to on_frame
};

class BulkFrame final : public FrameWriter {
 public:
  BulkFrame(std::span<const std::byte> bytes, bool bulk) : bytes_(bytes), bulk_(bulk) {}
  std::size_t frame_size() const noexcept override { return bytes_.size(); }
  void write(std::span<std::byte> room) noexcept override { std::memcpy(room.data(), bytes_.data(), bytes_.size()); }
  bool bulk() const noexcept override { return bulk_; }

 private:
  std::span<const std::byte> bytes_;
  bool bulk_;
};

std::unique_ptr<UdpPath> make_path(std::uint32_t ipv4, std::size_t max_frame, UdpPlace place) {
  auto rails = resolve_rails(format_ipv4(ipv4));
  BOOST_REQUIRE_MESSAGE(rails.is_ok(), rails.status().to_string());
  UdpOptions options{max_frame, 1 << 20, 8 << 20, 2};
  options.place = place;
  auto path = UdpPath::create(rails->at(0), options);
  BOOST_REQUIRE_MESSAGE(path.is_ok(), path.status().to_string());
  return std::move(*path);
}

// Rank 0 sends, rank 1 receives.
struct Pair {
  std::unique_ptr<UdpPath> sender = make_path(kLoopback, kMaxFrame, UdpPlace::on);
  std::unique_ptr<UdpPath> receiver;

  explicit Pair(UdpPlace place) : receiver(make_path(kLoopback + 1, kMaxFrame, place)) {
    BOOST_REQUIRE(sender->add_peer(1, receiver->endpoint()).is_ok());
    BOOST_REQUIRE(receiver->add_peer(0, sender->endpoint()).is_ok());
  }

  void send(const std::vector<std::byte>& frame, bool bulk) {
    BulkFrame writer(frame, bulk);
    BOOST_REQUIRE(sender->send(1, writer).is_ok());
  }
  // Polls until `frames` frames were handed up in all.
  bool receive(FrameSink& sink, std::size_t frames) {
    sender->flush_sends();  // bulk frames may wait for a GSO run, as the engine's would
    std::size_t got = 0;
    const auto deadline = Clock::now() + std::chrono::seconds(20);
    while (got < frames) {
      if (Clock::now() > deadline) return false;
      got += receiver->poll(sink, 8);
    }
    return true;
  }
};

}  // namespace

BOOST_AUTO_TEST_SUITE(udp_place)

BOOST_AUTO_TEST_CASE(bulk_payloads_land_where_the_sink_places_them_and_short_ones_do_not) {
  const std::uint64_t seed = ftmpi::test::seed_for("udp place lands");
  BOOST_TEST_CONTEXT("seed " << seed) {
    Pair pair(UdpPlace::on);
    BOOST_REQUIRE(pair.receiver->places());
    std::mt19937_64 rng(seed);
    constexpr int kFrames = 40;
    PlacingSink sink(kFrames * (kMaxFrame - kHead));
    std::vector<std::byte> expected = sink.buffer;
    std::vector<std::vector<std::byte>> frames;
    std::uint64_t offset = 0;
    for (int i = 0; i < kFrames; ++i) {
      // Sizes from 1 byte of payload to a full frame, at offsets with no alignment to speak of.
      const std::size_t payload = std::uniform_int_distribution<std::size_t>(1, kMaxFrame - kHead)(rng);
      frames.push_back(make_frame(offset, static_cast<std::uint32_t>(payload), payload, seed + i));
      std::memcpy(expected.data() + offset, frames.back().data() + kHead, payload);
      pair.send(frames.back(), /*bulk=*/true);
      offset += payload + static_cast<std::uint64_t>(i % 3);
    }
    BOOST_REQUIRE(pair.receive(sink, kFrames));
    BOOST_TEST(sink.placed.size() == static_cast<std::size_t>(kFrames));
    BOOST_TEST(sink.whole.empty());
    BOOST_TEST(sink.in_place);
    for (int i = 0; i < kFrames && i < static_cast<int>(sink.placed.size()); ++i) {
      BOOST_TEST((sink.placed[static_cast<std::size_t>(i)] == frames[static_cast<std::size_t>(i)]), "frame " << i);
    }
    BOOST_TEST((sink.buffer == expected));
    const UdpCounters& counters = pair.receiver->counters();
    BOOST_TEST(counters.long_socket.frames_placed == static_cast<std::uint64_t>(kFrames));
    BOOST_TEST(counters.long_socket.frames_received == static_cast<std::uint64_t>(kFrames));
    BOOST_TEST(counters.long_socket.placement_declined == 0u);

    // The short socket is never peeked: the same frames arrive whole through on_frame.
    const int asked_before = sink.asked;
    for (const auto& frame : frames) pair.send(frame, /*bulk=*/false);
    BOOST_REQUIRE(pair.receive(sink, kFrames));
    BOOST_TEST(sink.asked == asked_before);
    BOOST_TEST(sink.whole.size() == static_cast<std::size_t>(kFrames));
    BOOST_TEST(counters.short_socket.frames_placed == 0u);
  }
}

BOOST_AUTO_TEST_CASE(a_declined_frame_is_received_whole_as_usual) {
  Pair pair(UdpPlace::on);
  PlacingSink sink(kMaxFrame);
  sink.decline = true;
  const auto frame = make_frame(0, 1000, 1000, 7);
  for (int i = 0; i < 5; ++i) pair.send(frame, /*bulk=*/true);
  BOOST_REQUIRE(pair.receive(sink, 5));
  BOOST_TEST(sink.asked == 5);
  BOOST_TEST(sink.last_frame_length == frame.size());  // MSG_TRUNC told the whole length
  BOOST_TEST(sink.placed.empty());
  BOOST_REQUIRE(sink.whole.size() == 5u);
  BOOST_TEST((sink.whole[4] == frame));
  BOOST_TEST((sink.buffer == std::vector<std::byte>(kMaxFrame, std::byte{0xEE})));
  BOOST_TEST(pair.receiver->counters().long_socket.placement_declined == 5u);
  BOOST_TEST(pair.receiver->counters().long_socket.frames_placed == 0u);
  BOOST_TEST(pair.receiver->counters().long_socket.frames_received == 5u);
}

BOOST_AUTO_TEST_CASE(a_place_whose_size_disagrees_with_the_datagram_is_not_used) {
  Pair pair(UdpPlace::on);
  PlacingSink sink(kMaxFrame);
  // Headers that claim one byte more, and one byte less, than the datagram carries: the sink's span is
  // the wrong size, so nothing may be written there.
  const auto longer = make_frame(0, 1001, 1000, 1);
  const auto shorter = make_frame(2000, 999, 1000, 2);
  const auto good = make_frame(4000, 1000, 1000, 3);
  pair.send(longer, true);
  pair.send(shorter, true);
  pair.send(good, true);
  BOOST_REQUIRE(pair.receive(sink, 3));
  BOOST_REQUIRE(sink.whole.size() == 2u);
  BOOST_TEST((sink.whole[0] == longer));
  BOOST_TEST((sink.whole[1] == shorter));
  BOOST_REQUIRE(sink.placed.size() == 1u);
  BOOST_TEST((sink.placed[0] == good));
  // Only the good frame's bytes changed.
  for (std::size_t i = 0; i < sink.buffer.size(); ++i) {
    if (i >= 4000 && i < 5000) continue;
    if (sink.buffer[i] != std::byte{0xEE}) {
      BOOST_ERROR("byte " << i << " was written by a frame that was not placed");
      break;
    }
  }
  BOOST_TEST(pair.receiver->counters().long_socket.placement_declined == 2u);
  BOOST_TEST(pair.receiver->counters().long_socket.frames_placed == 1u);
}

BOOST_AUTO_TEST_CASE(a_sink_that_never_places_is_not_asked_and_receives_everything) {
  Pair pair(UdpPlace::on);
  CollectingSink sink;  // place_header_size() is 0
  const auto frame = make_frame(0, 3000, 3000, 9);
  for (int i = 0; i < 10; ++i) pair.send(frame, /*bulk=*/true);
  BOOST_REQUIRE(pair.receive(sink, 10));
  BOOST_REQUIRE(sink.frames.size() == 10u);
  BOOST_TEST((sink.frames[9] == frame));
  BOOST_TEST(pair.receiver->counters().long_socket.frames_placed == 0u);
  BOOST_TEST(pair.receiver->counters().long_socket.placement_declined == 0u);
}

BOOST_AUTO_TEST_CASE(datagrams_too_short_or_too_long_for_the_rail_are_not_placed) {
  Pair pair(UdpPlace::on);
  PlacingSink sink(kMaxFrame);
  const int stranger = ::socket(AF_INET, SOCK_DGRAM, 0);
  BOOST_REQUIRE(stranger >= 0);
  ::sockaddr_in to{};
  to.sin_family = AF_INET;
  to.sin_addr.s_addr = htonl(kLoopback + 1);
  to.sin_port = htons(pair.receiver->local_endpoint().long_port);
  const auto too_long = make_frame(0, kMaxFrame + 1 - kHead, kMaxFrame + 1 - kHead, 4);
  const auto header_only = make_frame(0, 0, 0, 5);
  const std::vector<std::byte> too_short(kHead - 1, std::byte{1});
  for (const auto* datagram : {&too_long, &header_only, &too_short}) {
    BOOST_REQUIRE(::sendto(stranger, datagram->data(), datagram->size(), 0, reinterpret_cast<::sockaddr*>(&to),
                           sizeof to) == static_cast<::ssize_t>(datagram->size()));
  }
  ::close(stranger);
  BOOST_REQUIRE(pair.receive(sink, 2));
  BOOST_TEST(sink.asked == 0);
  BOOST_TEST(sink.placed.empty());
  BOOST_REQUIRE(sink.whole.size() == 2u);
  BOOST_TEST((sink.whole[0] == header_only));
  BOOST_TEST((sink.whole[1] == too_short));
  BOOST_TEST(pair.receiver->counters().truncated == 1u);
  BOOST_TEST(pair.receiver->counters().from_unknown_senders == 3u);
}

BOOST_AUTO_TEST_CASE(placing_is_on_off_or_decided_by_the_frame_size) {
  BOOST_TEST(!make_path(kLoopback, kMaxFrame, UdpPlace::off)->places());
  BOOST_TEST(make_path(kLoopback, 1000, UdpPlace::on)->places());
  BOOST_TEST(make_path(kLoopback, kUdpPlaceAutoMinFrame, UdpPlace::automatic)->places());
  BOOST_TEST(!make_path(kLoopback, kUdpPlaceAutoMinFrame - 1, UdpPlace::automatic)->places());

  // Off: the sink is never asked, even on the long socket.
  Pair pair(UdpPlace::off);
  PlacingSink sink(kMaxFrame);
  const auto frame = make_frame(0, 2000, 2000, 6);
  for (int i = 0; i < 3; ++i) pair.send(frame, /*bulk=*/true);
  BOOST_REQUIRE(pair.receive(sink, 3));
  BOOST_TEST(sink.asked == 0);
  BOOST_TEST(sink.whole.size() == 3u);
}

BOOST_AUTO_TEST_CASE(path_udp_place_is_a_parameter_with_three_choices) {
  base::ParamSet params;
  BOOST_REQUIRE(params.add_table(path_params()).is_ok());
  BOOST_TEST((UdpOptions::from_params(params).place == UdpPlace::automatic));
  BOOST_REQUIRE(params.set("path.udp.place", "on").is_ok());
  BOOST_TEST((UdpOptions::from_params(params).place == UdpPlace::on));
  BOOST_REQUIRE(params.set("path.udp.place", "off").is_ok());
  BOOST_TEST((UdpOptions::from_params(params).place == UdpPlace::off));
  BOOST_TEST(!params.set("path.udp.place", "sometimes").is_ok());
}

BOOST_AUTO_TEST_SUITE_END()

// UdpPath over loopback only (127.0.0.1, .2, .3 are all local on Linux).
#include <arpa/inet.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <functional>
#include <memory>
#include <set>
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

namespace ftmpi::path {

// Loopback never reports a full send buffer or a dead route, so these tests stand in for the kernel.
struct UdpPathTestAccess {
  static void fake_sends(UdpPath& path) {
    path.send_batch_ = &fake_sendmmsg;
    path.send_one_ = &fake_sendmsg;
    path.send_to_ = &fake_sendto;
  }

  // Waits (at most `limit`) until both of the path's sockets hold a datagram: loopback usually queues
  // one during sendto, but a loaded kernel may defer that to ksoftirqd.
  static bool wait_both_sockets_readable(const UdpPath& path, std::chrono::milliseconds limit) {
    ::pollfd fds[2] = {{path.sockets_[0].fd, POLLIN, 0}, {path.sockets_[1].fd, POLLIN, 0}};
    const auto deadline = std::chrono::steady_clock::now() + limit;
    while (std::chrono::steady_clock::now() < deadline) {
      fds[0].revents = fds[1].revents = 0;
      if (::poll(fds, 2, 10) < 0 && errno != EINTR) return false;
      if ((fds[0].revents & POLLIN) != 0 && (fds[1].revents & POLLIN) != 0) return true;
    }
    return false;
  }

  // Sends with UDP_SEGMENT fail with `gso_err` (a route that cannot segment); plain ones go through.
  static void refuse_gso(UdpPath& path) { path.send_one_ = &refusing_sendmsg; }
  static inline int gso_err = EIO;
  static inline int gso_refusals = 0;
  static ::ssize_t refusing_sendmsg(int fd, const ::msghdr* message, int flags) {
    if (message->msg_controllen != 0) {
      ++gso_refusals;
      errno = gso_err;
      return -1;
    }
    return ::sendmsg(fd, message, flags);
  }

  // Sends from any socket but the path's two shared ones (a connected socket) fail with `connected_err`,
  // `connected_refusals` times; the shared sockets' go through.
  static void refuse_on_connected_sockets(UdpPath& path, int err, int times) {
    shared_fds[0] = path.sockets_[0].fd;
    shared_fds[1] = path.sockets_[1].fd;
    connected_err = err;
    connected_refusals = times;
    path.send_batch_ = [](int fd, ::mmsghdr* messages, unsigned count, int flags) {
      return refuses(fd) ? -1 : ::sendmmsg(fd, messages, count, flags);
    };
    path.send_one_ = [](int fd, const ::msghdr* message, int flags) -> ::ssize_t {
      return refuses(fd) ? -1 : ::sendmsg(fd, message, flags);
    };
    path.send_to_ = [](int fd, const void* bytes, std::size_t size, int flags, const ::sockaddr* to,
                       ::socklen_t to_length) -> ::ssize_t {
      return refuses(fd) ? -1 : ::sendto(fd, bytes, size, flags, to, to_length);
    };
  }
  static inline int shared_fds[2] = {-1, -1};
  static inline int connected_err = 0;
  static inline int connected_refusals = 0;
  static bool refuses(int fd) {
    if (fd == shared_fds[0] || fd == shared_fds[1] || connected_refusals == 0) return false;
    --connected_refusals;
    errno = connected_err;
    return true;
  }

  // Lets `allowed` more datagrams through (-1: all), then fails with `err`.
  static inline int allowed = -1;
  static inline int err = EAGAIN;

  // Calls of each, so that a test can say which call a frame went by.
  static inline int sendmmsg_calls = 0;
  static inline int sendto_calls = 0;

  static int fake_sendmmsg(int fd, ::mmsghdr* messages, unsigned count, int flags) {
    ++sendmmsg_calls;
    if (allowed < 0) return ::sendmmsg(fd, messages, count, flags);
    if (allowed == 0) {
      errno = err;
      return -1;
    }
    const int sent = ::sendmmsg(fd, messages, std::min(count, static_cast<unsigned>(allowed)), flags);
    if (sent > 0) allowed -= sent;
    return sent;
  }
  // The same for sendmsg (a GSO run); a GSO datagram counts as one.
  static ::ssize_t fake_sendmsg(int fd, const ::msghdr* message, int flags) {
    if (allowed < 0) return ::sendmsg(fd, message, flags);
    if (allowed == 0) {
      errno = err;
      return -1;
    }
    --allowed;
    return ::sendmsg(fd, message, flags);
  }
  // The same for sendto (a frame in one piece).
  static ::ssize_t fake_sendto(int fd, const void* bytes, std::size_t size, int flags, const ::sockaddr* to,
                               ::socklen_t to_length) {
    ++sendto_calls;
    if (allowed < 0) return ::sendto(fd, bytes, size, flags, to, to_length);
    if (allowed == 0) {
      errno = err;
      return -1;
    }
    --allowed;
    return ::sendto(fd, bytes, size, flags, to, to_length);
  }
};

}  // namespace ftmpi::path

namespace {

using Clock = std::chrono::steady_clock;
using Access = ftmpi::path::UdpPathTestAccess;

constexpr std::uint32_t kLoopback = 0x7f000001;

RailAddress loopback_rail(std::uint32_t ipv4) {
  auto rails = resolve_rails(format_ipv4(ipv4));
  BOOST_REQUIRE_MESSAGE(rails.is_ok(), rails.status().to_string());
  return rails->at(0);
}

UdpOptions options_for(std::size_t peers, std::size_t max_frame = 9000) {
  return UdpOptions{max_frame, 1 << 20, 8 << 20, peers};
}

std::unique_ptr<UdpPath> make_path(std::uint32_t ipv4, const UdpOptions& options) {
  auto path = UdpPath::create(loopback_rail(ipv4), options);
  BOOST_REQUIRE_MESSAGE(path.is_ok(), path.status().to_string());
  return std::move(*path);
}

// n paths on 127.0.0.1, .2, ...; each knows every path, itself included, as rank = its index.
std::vector<std::unique_ptr<UdpPath>> make_mesh(std::size_t n, const UdpOptions& options) {
  std::vector<std::unique_ptr<UdpPath>> paths;
  for (std::size_t r = 0; r < n; ++r) paths.push_back(make_path(kLoopback + static_cast<std::uint32_t>(r), options));
  for (auto& path : paths) {
    for (std::size_t r = 0; r < n; ++r) {
      BOOST_REQUIRE(path->add_peer(static_cast<Rank>(r), paths[r]->endpoint()).is_ok());
    }
  }
  return paths;
}

// Polls until `done` or the deadline; false on timeout.
bool poll_until(const std::function<bool()>& done, const std::function<void()>& step,
                std::chrono::seconds limit = std::chrono::seconds(20)) {
  const auto deadline = Clock::now() + limit;
  while (!done()) {
    if (Clock::now() > deadline) return false;
    step();
  }
  return true;
}

// Short frames from rank r carry sender id 2r, bulk ones 2r + 1: each socket's order is checked apart.
std::uint32_t sender_id(Rank from, bool bulk) { return 2 * from + (bulk ? 1 : 0); }

class LaneFrame final : public FrameWriter {
 public:
  LaneFrame(std::uint64_t seed, Rank from, Rank to, std::uint32_t index, std::size_t max_frame, bool bulk)
      : pattern_(seed, sender_id(from, bulk), to, index, max_frame), bulk_(bulk) {}
  std::size_t frame_size() const noexcept override { return pattern_.frame_size(); }
  void write(std::span<std::byte> room) noexcept override { pattern_.write(room); }
  bool bulk() const noexcept override { return bulk_; }

 private:
  PatternFrame pattern_;
  bool bulk_;
};

// The next frame from one rank to another on each socket.
struct Sender {
  std::uint64_t seed;
  Rank from;
  std::size_t max_frame;
  std::vector<std::uint32_t> next;  // by sender_id(to, bulk): next index to rank `to` on that socket
  std::uint64_t bulk_sent = 0;
  std::uint64_t short_sent = 0;

  Sender(std::uint64_t s, Rank f, std::size_t ranks, std::size_t mf)
      : seed(s), from(f), max_frame(mf), next(2 * ranks) {}

  base::Status send(UdpPath& path, Rank to, bool bulk) {
    LaneFrame frame(seed, from, to, next[sender_id(to, bulk)]++, max_frame, bulk);
    ++(bulk ? bulk_sent : short_sent);
    return path.send(to, frame);
  }
};

bool choose_bulk(std::uint64_t seed, Rank from, Rank to, std::uint32_t i) {
  return (mix(seed ^ (std::uint64_t{from} << 40) ^ (std::uint64_t{to} << 32) ^ i) & 1) != 0;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(udp_path)

BOOST_AUTO_TEST_CASE(two_paths_exchange_frames_with_their_bytes_in_order) {
  const std::uint64_t seed = ftmpi::test::seed_for("udp two paths");
  BOOST_TEST_CONTEXT("seed " << seed) {
    constexpr std::size_t kMaxFrame = 9000;
    constexpr std::uint32_t kFrames = 2000;
    auto paths = make_mesh(2, options_for(2, kMaxFrame));
    BOOST_TEST(paths[0]->info().max_frame == kMaxFrame);
    std::vector<PatternChecker> checkers;
    std::vector<Sender> senders;
    for (Rank r = 0; r < 2; ++r) {
      checkers.emplace_back(seed, r, 4, kMaxFrame);
      senders.emplace_back(seed, r, 2, kMaxFrame);
    }
    for (std::uint32_t i = 0; i < kFrames; ++i) {
      for (Rank r = 0; r < 2; ++r) {
        BOOST_REQUIRE(senders[r].send(*paths[r], 1 - r, false).is_ok());
        paths[1 - r]->poll(checkers[1 - r], 4);
      }
    }
    const bool all = poll_until([&] { return checkers[0].received() == kFrames && checkers[1].received() == kFrames; },
                                [&] {
                                  for (Rank r = 0; r < 2; ++r) paths[r]->poll(checkers[r], 64);
                                });
    for (Rank r = 0; r < 2; ++r) {
      BOOST_TEST_CONTEXT("rank " << r) {
        BOOST_TEST(all);
        BOOST_TEST(checkers[r].error() == "");
        BOOST_TEST(checkers[r].received() == kFrames);
        BOOST_TEST(paths[r]->counters().short_socket.frames_sent == kFrames);
        BOOST_TEST(paths[r]->counters().short_socket.frames_received == kFrames);
        BOOST_TEST(paths[r]->counters().from_unknown_senders == 0u);
        BOOST_TEST(!paths[r]->has_queued_frames());
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(three_paths_carry_short_frames_on_the_short_socket_and_bulk_ones_on_the_long) {
  const std::uint64_t seed = ftmpi::test::seed_for("udp three paths");
  BOOST_TEST_CONTEXT("seed " << seed) {
    constexpr std::size_t kRanks = 3;
    constexpr std::size_t kMaxFrame = 4000;
    constexpr std::uint32_t kPerPair = 400;
    auto paths = make_mesh(kRanks, options_for(kRanks, kMaxFrame));
    std::vector<PatternChecker> checkers;
    std::vector<Sender> senders;
    for (Rank r = 0; r < kRanks; ++r) {
      checkers.emplace_back(seed, r, 2 * kRanks, kMaxFrame);
      senders.emplace_back(seed, r, kRanks, kMaxFrame);
    }
    // Every rank sends to every rank, itself included.
    for (std::uint32_t i = 0; i < kPerPair; ++i) {
      for (Rank from = 0; from < kRanks; ++from) {
        for (Rank to = 0; to < kRanks; ++to) {
          BOOST_REQUIRE(senders[from].send(*paths[from], to, choose_bulk(seed, from, to, i)).is_ok());
        }
        paths[from]->poll(checkers[from], 1 + i % 7);
      }
    }
    const std::size_t expected = kRanks * kPerPair;
    const bool all = poll_until(
        [&] {
          for (Rank r = 0; r < kRanks; ++r) {
            if (checkers[r].received() != expected) return false;
          }
          return true;
        },
        [&] {
          for (Rank r = 0; r < kRanks; ++r) paths[r]->poll(checkers[r], 32);
        });
    BOOST_TEST(all);
    std::uint64_t long_received = 0;
    std::uint64_t bulk_sent = 0;
    for (Rank r = 0; r < kRanks; ++r) {
      BOOST_TEST_CONTEXT("rank " << r) {
        const UdpCounters& counters = paths[r]->counters();
        BOOST_TEST(checkers[r].error() == "");
        BOOST_TEST(counters.long_socket.frames_sent == senders[r].bulk_sent);
        BOOST_TEST(counters.short_socket.frames_sent == senders[r].short_sent);
        BOOST_TEST(counters.long_socket.frames_sent > 0u);
        BOOST_TEST(counters.short_socket.frames_sent > 0u);
        BOOST_TEST(counters.short_socket.frames_received + counters.long_socket.frames_received == expected);
        BOOST_TEST(counters.from_unknown_senders == 0u);
        BOOST_TEST(counters.truncated == 0u);
        for (Rank from = 0; from < kRanks; ++from) {
          // Each socket delivered everything its sender put on it.
          BOOST_TEST(checkers[r].next_from(sender_id(from, true)) == senders[from].next[sender_id(r, true)]);
          BOOST_TEST(checkers[r].next_from(sender_id(from, false)) == senders[from].next[sender_id(r, false)]);
        }
        long_received += counters.long_socket.frames_received;
        bulk_sent += senders[r].bulk_sent;
      }
    }
    BOOST_TEST(long_received == bulk_sent);
  }
}

BOOST_AUTO_TEST_CASE(a_burst_of_20000_frames_arrives_in_order_on_each_socket) {
  const std::uint64_t seed = ftmpi::test::seed_for("udp burst");
  BOOST_TEST_CONTEXT("seed " << seed) {
    constexpr std::size_t kMaxFrame = 8192;
    constexpr std::uint32_t kFrames = 20000;
    // A tiny send buffer (the kernel's minimum) and a receive buffer far above what arrives between
    // two polls: loopback never drops for lack of room then, so every frame must arrive.
    UdpOptions options{kMaxFrame, 1, 16 << 20, 2};
    auto paths = make_mesh(2, options);
    BOOST_TEST(paths[1]->receive_buffer_bytes() >= std::size_t{8} << 20);
    PatternChecker checker(seed, 1, 4, kMaxFrame);
    Sender sender(seed, 0, 2, kMaxFrame);
    for (std::uint32_t i = 0; i < kFrames; ++i) {
      BOOST_REQUIRE(sender.send(*paths[0], 1, choose_bulk(seed, 0, 1, i)).is_ok());
      if (i % 8 == 7) {
        paths[0]->poll(checker, 0);  // flushes anything queued
        paths[1]->poll(checker, 64);
      }
    }
    const bool all = poll_until([&] { return checker.received() == kFrames && !paths[0]->has_queued_frames(); },
                                [&] {
                                  paths[0]->poll(checker, 0);
                                  paths[1]->poll(checker, 64);
                                });
    const UdpCounters& sent = paths[0]->counters();
    BOOST_TEST_MESSAGE("frames that waited for send-buffer room: "
                       << sent.short_socket.frames_queued + sent.long_socket.frames_queued);
    BOOST_TEST(all);
    BOOST_TEST(checker.error() == "");
    BOOST_TEST(checker.received() == kFrames);
    BOOST_TEST(checker.next_from(sender_id(0, true)) == sender.bulk_sent);
    BOOST_TEST(checker.next_from(sender_id(0, false)) == sender.short_sent);
    BOOST_TEST(sent.short_socket.send_errors + sent.long_socket.send_errors == 0u);
  }
}

BOOST_AUTO_TEST_CASE(a_full_send_buffer_queues_frames_in_order_until_room_returns) {
  const std::uint64_t seed = ftmpi::test::seed_for("udp queue");
  BOOST_TEST_CONTEXT("seed " << seed) {
    constexpr std::size_t kMaxFrame = 2000;
    UdpOptions options = options_for(2, kMaxFrame);
    options.gso = false;  // frames one by one; GSO runs that find no room: udp_gso_gro
    auto paths = make_mesh(2, options);
    Access::fake_sends(*paths[0]);
    PatternChecker checker(seed, 1, 4, kMaxFrame);
    Sender sender(seed, 0, 2, kMaxFrame);

    Access::allowed = 0;
    Access::err = EAGAIN;
    for (int i = 0; i < 100; ++i) BOOST_REQUIRE(sender.send(*paths[0], 1, false).is_ok());
    Access::err = ENOBUFS;
    for (int i = 0; i < 30; ++i) BOOST_REQUIRE(sender.send(*paths[0], 1, true).is_ok());
    BOOST_TEST(paths[0]->has_queued_frames());
    BOOST_TEST(paths[0]->queued_frames() == 130u);
    BOOST_TEST(paths[0]->counters().short_socket.frames_queued == 100u);
    BOOST_TEST(paths[0]->counters().long_socket.frames_queued == 30u);
    BOOST_TEST(paths[0]->counters().short_socket.frames_sent == 0u);
    BOOST_TEST(paths[1]->poll(checker, 1000) == 0u);  // nothing reached the kernel

    // Room for 70 datagrams: the oldest 70 short frames go (two sendmmsg batches, the second cut short).
    Access::allowed = 70;
    paths[0]->poll(checker, 0);
    BOOST_TEST(paths[0]->queued_frames() == 60u);
    BOOST_TEST(paths[0]->counters().short_socket.frames_sent == 70u);

    // Room again: a new frame goes out after the ones still queued on its socket.
    Access::allowed = -1;
    BOOST_REQUIRE(sender.send(*paths[0], 1, false).is_ok());
    BOOST_TEST(paths[0]->queued_frames() == 30u);  // the bulk ones wait for a poll or a bulk send
    BOOST_REQUIRE(sender.send(*paths[0], 1, true).is_ok());
    BOOST_TEST(!paths[0]->has_queued_frames());

    const bool all = poll_until([&] { return checker.received() == 132u; },
                                [&] { paths[1]->poll(checker, 64); });
    BOOST_TEST(all);
    BOOST_TEST(checker.error() == "");
    BOOST_TEST(checker.next_from(sender_id(0, false)) == 101u);
    BOOST_TEST(checker.next_from(sender_id(0, true)) == 31u);
    BOOST_TEST(paths[0]->counters().short_socket.send_errors == 0u);
  }
}

// A frame whose payload lies elsewhere (FrameWriter::write_header: the engine's stream frames kept by
// reference to the send buffer) goes out as two iovecs, never through write(); queued for want of room,
// it is written whole into the queue, since its payload may be gone by the time room returns.
class GatheredFrame final : public FrameWriter {
 public:
  GatheredFrame(std::span<const std::byte> header, std::span<const std::byte> payload, bool bulk)
      : header_(header), payload_(payload), bulk_(bulk) {}
  std::size_t frame_size() const noexcept override { return header_.size() + payload_.size(); }
  void write(std::span<std::byte> room) noexcept override {
    ++writes;
    std::memcpy(room.data(), header_.data(), header_.size());
    std::memcpy(room.data() + header_.size(), payload_.data(), payload_.size());
  }
  bool bulk() const noexcept override { return bulk_; }
  std::size_t header_size() const noexcept override { return header_.size(); }
  std::span<const std::byte> write_header(std::span<std::byte> room) noexcept override {
    ++headers_written;
    std::memcpy(room.data(), header_.data(), header_.size());
    return payload_;
  }
  int writes = 0;
  int headers_written = 0;

 private:
  std::span<const std::byte> header_;
  std::span<const std::byte> payload_;
  bool bulk_;
};

// A frame that lies in one piece goes by sendto, the send call with the least for the kernel to copy in
// (no msghdr, no iovec); with no room it waits in the queue, which a poll sends by sendmmsg.
BOOST_AUTO_TEST_CASE(a_frame_in_one_piece_goes_by_sendto_and_waits_in_the_queue_when_there_is_no_room) {
  UdpOptions options = options_for(2, 9000);
  options.gso = false;
  auto paths = make_mesh(2, options);
  Access::fake_sends(*paths[0]);
  CollectingSink sink;
  const auto receive = [&](std::size_t n) {
    return poll_until([&] { return sink.frames.size() == n; }, [&] { paths[1]->poll(sink, 64); });
  };
  std::vector<std::byte> bytes(112);
  for (std::size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<std::byte>(i * 5 + 1);

  Access::allowed = -1;
  Access::sendmmsg_calls = Access::sendto_calls = 0;
  BytesFrame sent(bytes);
  BOOST_REQUIRE(paths[0]->send(1, sent).is_ok());
  BOOST_TEST(Access::sendto_calls == 1);
  BOOST_TEST(Access::sendmmsg_calls == 0);
  BOOST_TEST(paths[0]->counters().short_socket.frames_sent == 1u);
  BOOST_REQUIRE(receive(1));
  BOOST_TEST((sink.frames[0] == bytes));

  // A header whose payload is empty (a zero-byte message) is in one piece too.
  GatheredFrame header_alone(bytes, {}, false);
  BOOST_REQUIRE(paths[0]->send(1, header_alone).is_ok());
  BOOST_TEST(header_alone.headers_written == 1);
  BOOST_TEST(Access::sendto_calls == 2);
  BOOST_TEST(Access::sendmmsg_calls == 0);
  BOOST_REQUIRE(receive(2));
  BOOST_TEST((sink.frames[1] == bytes));

  Access::allowed = 0;
  Access::err = EAGAIN;
  GatheredFrame queued(bytes, {}, false);
  BOOST_REQUIRE(paths[0]->send(1, queued).is_ok());
  BOOST_TEST(Access::sendto_calls == 3);
  BOOST_TEST(paths[0]->queued_frames() == 1u);
  Access::allowed = -1;
  paths[0]->poll(sink, 0);
  BOOST_TEST(!paths[0]->has_queued_frames());
  BOOST_TEST(Access::sendmmsg_calls == 1);
  BOOST_REQUIRE(receive(3));
  BOOST_TEST((sink.frames[2] == bytes));
  BOOST_TEST(paths[0]->counters().short_socket.send_errors == 0u);
}

BOOST_AUTO_TEST_CASE(a_frame_with_its_payload_elsewhere_is_sent_from_two_places_and_queued_whole) {
  UdpOptions options = options_for(2, 9000);
  options.gso = false;  // every frame its own send (a GSO run copies frames together anyway)
  auto paths = make_mesh(2, options);
  Access::fake_sends(*paths[0]);
  std::vector<std::byte> header(48), payload(8000);
  for (std::size_t i = 0; i < header.size(); ++i) header[i] = static_cast<std::byte>(0xa0 + i);
  for (std::size_t i = 0; i < payload.size(); ++i) payload[i] = static_cast<std::byte>(i * 7 + 3);
  std::vector<std::byte> whole(header);
  whole.insert(whole.end(), payload.begin(), payload.end());
  CollectingSink sink;
  const auto receive = [&](std::size_t n) {
    return poll_until([&] { return sink.frames.size() == n; }, [&] { paths[1]->poll(sink, 64); });
  };

  for (const bool bulk : {false, true}) {
    BOOST_TEST_CONTEXT((bulk ? "long socket" : "short socket")) {
      sink.frames.clear();
      Access::allowed = -1;
      GatheredFrame sent(header, payload, bulk);
      Access::sendmmsg_calls = Access::sendto_calls = 0;
      BOOST_REQUIRE(paths[0]->send(1, sent).is_ok());
      BOOST_TEST(sent.headers_written == 1);
      BOOST_TEST(sent.writes == 0);
      BOOST_TEST(Access::sendmmsg_calls == 1);  // two pieces: an iovec each
      BOOST_TEST(Access::sendto_calls == 0);
      BOOST_REQUIRE(receive(1));
      BOOST_TEST((sink.frames[0] == whole));

      // No room: queued whole, so the payload may change once send() returned.
      Access::allowed = 0;
      Access::err = EAGAIN;
      GatheredFrame queued(header, payload, bulk);
      BOOST_REQUIRE(paths[0]->send(1, queued).is_ok());
      BOOST_TEST(queued.writes == 1);
      BOOST_TEST(paths[0]->queued_frames() == 1u);
      std::vector<std::byte> reused(payload.size(), std::byte{0xee});
      std::vector<std::byte> original = payload;
      std::memcpy(payload.data(), reused.data(), payload.size());
      Access::allowed = -1;
      paths[0]->poll(sink, 0);
      BOOST_TEST(!paths[0]->has_queued_frames());
      BOOST_REQUIRE(receive(2));
      BOOST_TEST((sink.frames[1] == whole));
      payload = original;
    }
  }
}

BOOST_AUTO_TEST_CASE(a_dead_route_fails_the_send_with_rail_down_and_drops_queued_frames) {
  constexpr std::size_t kMaxFrame = 2000;
  UdpOptions options = options_for(2, kMaxFrame);
  options.gso = false;  // frames one by one; GSO runs on a dead route: udp_gso_gro
  auto paths = make_mesh(2, options);
  Access::fake_sends(*paths[0]);
  Sender sender(1, 0, 2, kMaxFrame);

  Access::allowed = 0;
  Access::err = EAGAIN;
  for (int i = 0; i < 3; ++i) BOOST_REQUIRE(sender.send(*paths[0], 1, false).is_ok());
  BOOST_TEST(paths[0]->queued_frames() == 3u);

  // The link went down while they waited: poll drops them, as the network would have.
  Access::err = ENETUNREACH;
  CollectingSink sink;
  paths[0]->poll(sink, 10);
  BOOST_TEST(!paths[0]->has_queued_frames());
  BOOST_TEST(paths[0]->counters().short_socket.send_errors == 3u);

  // A fresh send reports the rail, naming it, the peer and the errno.
  for (int err : {ENETUNREACH, EPERM, EHOSTUNREACH}) {
    Access::err = err;
    const base::Status failed = sender.send(*paths[0], 1, err == EPERM);
    BOOST_TEST_CONTEXT(failed.to_string()) {
      BOOST_TEST((failed.code() == base::Errc::rail_down));
      BOOST_TEST((failed.severity() == base::Severity::rail));
      BOOST_TEST(failed.message().find("udp lo 127.0.0.1") != std::string::npos);
      BOOST_TEST(failed.message().find("rank 1 at 127.0.0.2:") != std::string::npos);
      BOOST_TEST(failed.message().find(std::strerror(err)) != std::string::npos);
    }
  }
  BOOST_TEST(!paths[0]->has_queued_frames());
  Access::allowed = -1;
}

BOOST_AUTO_TEST_CASE(send_errnos_map_to_queueing_loss_or_rail_failure) {
  for (int err : {EAGAIN, EWOULDBLOCK, ENOBUFS, ENOMEM, EINTR}) {
    BOOST_TEST((udp_send_errc(err) == base::Errc::would_block), std::strerror(err));
  }
  BOOST_TEST((udp_send_errc(ECONNREFUSED) == base::Errc::ok));
  for (int err : {ENETUNREACH, EHOSTUNREACH, ENETDOWN, EHOSTDOWN, EPERM, EACCES, EADDRNOTAVAIL, EMSGSIZE}) {
    BOOST_TEST((udp_send_errc(err) == base::Errc::rail_down), std::strerror(err));
  }
  for (int err : {EBADF, EINVAL, EIO}) {
    BOOST_TEST((udp_send_errc(err) == base::Errc::io_error), std::strerror(err));
    BOOST_TEST((base::severity_of(udp_send_errc(err)) == base::Severity::rail), std::strerror(err));
  }
}

BOOST_AUTO_TEST_CASE(endpoints_round_trip_and_malformed_ones_are_refused) {
  auto path = make_path(0x7f000003, options_for(4));
  const std::string text = path->endpoint();
  BOOST_TEST(text.rfind("127.0.0.3:", 0) == 0u);
  auto parsed = UdpPath::parse_endpoint(text);
  BOOST_REQUIRE(parsed.is_ok());
  BOOST_TEST((*parsed == path->local_endpoint()));
  BOOST_TEST(parsed->to_string() == text);
  BOOST_TEST(path->local_endpoint().short_port != path->local_endpoint().long_port);
  BOOST_TEST(path->local_endpoint().short_port != 0);

  auto exact = UdpPath::parse_endpoint("10.77.1.1:1:65535");
  BOOST_REQUIRE(exact.is_ok());
  BOOST_TEST(exact->ipv4 == 0x0a4d0101u);
  BOOST_TEST(exact->short_port == 1);
  BOOST_TEST(exact->long_port == 65535);
  BOOST_TEST(exact->send_port == 0);  // no send port: every frame from the two ports
  auto with_send = UdpPath::parse_endpoint("10.77.1.1:1:2:3");
  BOOST_REQUIRE(with_send.is_ok());
  BOOST_TEST(with_send->send_port == 3);
  BOOST_TEST(with_send->to_string() == "10.77.1.1:1:2:3");

  for (const char* bad : {"", "127.0.0.1", "127.0.0.1:", "127.0.0.1:1", "127.0.0.1:1:", "127.0.0.1:1:2:", "127.0.0.1:1:2:3:4", "127.0.0.1:1:2:0",
                          "127.0.0.1:0:2", "127.0.0.1:1:0", "127.0.0.1:65536:2", "127.0.0.1:01:2",
                          "127.0.0.1:1:2 ", " 127.0.0.1:1:2", "127.0.0.256:1:2", "127.0.0:1:2",
                          "127.0.0.01:1:2", "a.b.c.d:1:2", "127.0.0.1:+1:2", "127.0.0.1:1:-2",
                          "127.0.0.1::2", "[::1]:1:2", "127.0.0.1:1:2\n", "127.0.0.1:100000:2"}) {
    auto refused = UdpPath::parse_endpoint(bad);
    BOOST_TEST((refused.code() == base::Errc::invalid_argument), "'" << bad << "'");
    BOOST_TEST(refused.status().message().find(std::string("'") + bad + "'") != std::string::npos);
  }
}

BOOST_AUTO_TEST_CASE(a_peer_that_takes_smaller_frames_gets_smaller_frames) {
  auto path = make_path(kLoopback, options_for(3));
  const std::size_t ours = path->info().max_frame;
  BOOST_REQUIRE(path->add_peer(0, "127.0.0.1:1000:1001").is_ok());
  BOOST_REQUIRE(path->add_peer(1, "127.0.0.1:1002:1003", 1472).is_ok());
  BOOST_TEST(path->max_frame_to(0) == ours);  // 0: as large as ours
  BOOST_TEST(path->max_frame_to(1) == std::min<std::size_t>(ours, 1472));
  BOOST_REQUIRE(path->add_peer(2, "127.0.0.1:1004:1005", ours * 2).is_ok());
  BOOST_TEST(path->max_frame_to(2) == ours);  // never larger than what we send
  auto tiny = path->add_peer(2, "127.0.0.1:1004:1005", kUdpMinFrame - 1);
  BOOST_TEST((tiny.code() == base::Errc::invalid_argument));
}

BOOST_AUTO_TEST_CASE(only_added_peers_are_reached_and_bad_peers_are_refused) {
  auto path = make_path(kLoopback, options_for(3));
  BOOST_TEST(!path->reaches(0));
  BOOST_TEST(path->add_peer(1, "127.0.0.2:4000:4001").is_ok());
  BOOST_TEST(path->reaches(1));
  BOOST_TEST(!path->reaches(0));
  BOOST_TEST(!path->reaches(2));
  BOOST_TEST(!path->reaches(3));
  BOOST_TEST((path->add_peer(3, "127.0.0.2:4000:4001").code() == base::Errc::invalid_argument));
  BOOST_TEST((path->add_peer(2, "127.0.0.2:4000").code() == base::Errc::invalid_argument));
  BOOST_TEST((path->add_peer(2, UdpEndpoint{0, 1, 2}).code() == base::Errc::invalid_argument));
  BOOST_TEST(!path->reaches(2));
  BOOST_TEST(path->add_peer(1, "127.0.0.3:4002:4003").is_ok());  // replaces
  BOOST_TEST(path->reaches(1));
}

BOOST_AUTO_TEST_CASE(frames_above_max_frame_and_unknown_peers_are_refused) {
  auto paths = make_mesh(2, options_for(3, 1000));
  BOOST_TEST(paths[0]->info().max_frame == 1000u);
  std::vector<std::byte> fits(1000, std::byte{7});
  std::vector<std::byte> above(1001);
  BytesFrame fitting(fits);
  BytesFrame too_big(above);
  const base::Status refused = paths[0]->send(1, too_big);
  BOOST_TEST((refused.code() == base::Errc::out_of_range));
  BOOST_TEST((refused.severity() == base::Severity::caller));
  const base::Status unknown = paths[0]->send(2, fitting);  // below peers, but never added
  BOOST_TEST((unknown.code() == base::Errc::invalid_argument));
  BOOST_TEST((unknown.severity() == base::Severity::caller));
  BOOST_TEST((paths[0]->send(7, fitting).severity() == base::Severity::caller));
  BOOST_REQUIRE(paths[0]->send(1, fitting).is_ok());
  CollectingSink sink;
  BOOST_TEST(poll_until([&] { return !sink.frames.empty(); }, [&] { paths[1]->poll(sink, 8); }));
  BOOST_TEST((sink.frames.at(0) == fits));
}

BOOST_AUTO_TEST_CASE(max_frame_is_bounded_by_the_interface_mtu_and_the_udp_limit) {
  RailAddress rail = loopback_rail(0x7f000002);
  auto big = UdpPath::create(rail, options_for(1, 1 << 20));
  BOOST_REQUIRE(big.is_ok());
  BOOST_TEST((*big)->info().max_frame == std::min<std::size_t>(kUdpMaxPayload, rail.mtu - kUdpIpOverhead));
  rail.mtu = 1500;  // as an Ethernet rail would be
  auto ethernet = UdpPath::create(rail, options_for(1, 1 << 20));
  BOOST_REQUIRE(ethernet.is_ok());
  BOOST_TEST((*ethernet)->info().max_frame == 1472u);
  auto tiny = UdpPath::create(rail, options_for(1, 100));
  BOOST_TEST((tiny.code() == base::Errc::invalid_argument));
  BOOST_TEST(tiny.status().message().find("path.udp.max_frame = 100") != std::string::npos);
  auto nobody = UdpPath::create(rail, options_for(0));
  BOOST_TEST((nobody.code() == base::Errc::invalid_argument));
}

BOOST_AUTO_TEST_CASE(options_from_params_are_the_rows_defaults) {
  base::ParamSet params;
  BOOST_REQUIRE(params.add_table(path_params()).is_ok());
  const UdpOptions defaults = UdpOptions::from_params(params);
  BOOST_TEST(defaults.max_frame == 63u * 1024);
  BOOST_TEST(defaults.sndbuf == 4u << 20);
  BOOST_TEST(defaults.rcvbuf == 8u << 20);
  BOOST_TEST(defaults.peers == 0u);
  BOOST_TEST(defaults.connected_peers == 64u);
  BOOST_REQUIRE(params.set("path.udp.max_frame", "1400").is_ok());
  BOOST_TEST(UdpOptions::from_params(params).max_frame == 1400u);
  BOOST_REQUIRE(params.set("path.udp.connected_peers", "0").is_ok());
  BOOST_TEST(UdpOptions::from_params(params).connected_peers == 0u);
  BOOST_REQUIRE(params.set("path.udp.connected_peers", "-3").is_ok());
  BOOST_TEST(UdpOptions::from_params(params).connected_peers == 0u);
}

BOOST_AUTO_TEST_CASE(info_describes_an_unreliable_udp_rail) {
  auto path = make_path(0x7f000002, options_for(1));
  const PathInfo& info = path->info();
  BOOST_TEST((info.kind == PathKind::udp));
  BOOST_TEST(info.name == "udp lo 127.0.0.2");
  BOOST_TEST(!info.reliable);
  BOOST_TEST(!info.single_copy_read);
  BOOST_TEST(info.gathers);  // header and payload as two iovecs: an eager frame may leave before its copy
  BOOST_TEST(info.bandwidth_hint == 0.0);  // lo reports no link speed
  BOOST_TEST(path->rail().interface == "lo");
}

// A connected socket hears the ICMP port-unreachable answers and fails the next send with ECONNREFUSED,
// sending nothing: that send goes again from the lane's shared socket, so that, as without connected
// sockets, every frame leaves and none fails, on either lane.
BOOST_AUTO_TEST_CASE(sending_to_a_port_nobody_listens_on_does_not_fail) {
  // Take two ports, then free them: nothing listens there any more.
  std::uint16_t ports[2];
  for (std::uint16_t& port : ports) {
    const int fd = ::socket(AF_INET, SOCK_DGRAM, 0);
    BOOST_REQUIRE(fd >= 0);
    ::sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(0x7f000002);
    BOOST_REQUIRE(::bind(fd, reinterpret_cast<::sockaddr*>(&address), sizeof address) == 0);
    socklen_t length = sizeof address;
    BOOST_REQUIRE(::getsockname(fd, reinterpret_cast<::sockaddr*>(&address), &length) == 0);
    port = ntohs(address.sin_port);
    ::close(fd);
  }
  for (const std::size_t connected : {std::size_t{256}, std::size_t{0}}) {
    BOOST_TEST_CONTEXT("connected_peers " << connected) {
      UdpOptions options = options_for(2, 1000);
      options.connected_peers = connected;
      auto path = make_path(kLoopback, options);
      BOOST_REQUIRE(path->add_peer(1, UdpEndpoint{0x7f000002, ports[0], ports[1]}).is_ok());
      std::vector<std::byte> bytes(500);
      BytesFrame frame(bytes);
      GatheredFrame bulk({bytes.data(), 100}, {bytes.data() + 100, 400}, /*bulk=*/true);
      CollectingSink sink;
      const UdpCounters& counters = path->counters();
      // At least 20 rounds, and with connected sockets until one has heard an ICMP error (at once on an
      // idle loopback; a loaded kernel may answer later, from ksoftirqd).
      std::uint64_t rounds = 0;
      const auto deadline = Clock::now() + std::chrono::seconds(20);
      while (rounds < 20 || (connected != 0 && counters.connected_send_failures == 0 && Clock::now() < deadline)) {
        BOOST_TEST(path->send(1, frame).is_ok());  // ICMP port unreachable comes back; it must not surface
        BOOST_TEST(path->send(1, bulk).is_ok());
        path->flush_sends();
        path->poll(sink, 8);
        ++rounds;
      }
      BOOST_TEST(sink.frames.empty());
      BOOST_TEST(counters.short_socket.frames_sent == rounds);
      BOOST_TEST(counters.long_socket.frames_sent == rounds);
      BOOST_TEST(counters.short_socket.send_errors == 0u);
      BOOST_TEST(counters.long_socket.send_errors == 0u);
      BOOST_TEST(counters.short_socket.receive_errors == 0u);
      BOOST_TEST(counters.connected_peers == (connected != 0 ? 1u : 0u));
      if (connected != 0) {
        BOOST_TEST(counters.connected_send_failures >= 1u);
      } else {
        BOOST_TEST(counters.connected_send_failures == 0u);
      }
    }
  }
}

namespace {

// A plain socket on 127.0.0.1 standing in for one of a peer's ports.
struct PlainSocket {
  int fd = -1;
  std::uint16_t port = 0;
  PlainSocket() {
    fd = ::socket(AF_INET, SOCK_DGRAM, 0);
    BOOST_REQUIRE(fd >= 0);
    ::sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(kLoopback);
    BOOST_REQUIRE(::bind(fd, reinterpret_cast<::sockaddr*>(&address), sizeof address) == 0);
    socklen_t length = sizeof address;
    BOOST_REQUIRE(::getsockname(fd, reinterpret_cast<::sockaddr*>(&address), &length) == 0);
    port = ntohs(address.sin_port);
    const ::timeval patience{20, 0};  // a datagram that never comes fails the test, not hangs it
    BOOST_REQUIRE(::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &patience, sizeof patience) == 0);
  }
  ~PlainSocket() { ::close(fd); }
  // The source port of the next datagram (waits for it).
  std::uint16_t source_of_next() const {
    std::byte buffer[2048];
    ::sockaddr_in from{};
    socklen_t length = sizeof from;
    const ::ssize_t got = ::recvfrom(fd, buffer, sizeof buffer, 0, reinterpret_cast<::sockaddr*>(&from), &length);
    BOOST_REQUIRE(got > 0);
    return ntohs(from.sin_port);
  }
};

// The lowest file descriptor free now (the next one the kernel hands out); -1 if none could be opened.
int lowest_free_descriptor() {
  const int fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (fd >= 0) ::close(fd);
  return fd;
}

// RLIMIT_NOFILE's soft limit lowered for a scope, restored however the scope ends.
struct LoweredDescriptorLimit {
  ::rlimit saved{};
  bool lowered = false;
  explicit LoweredDescriptorLimit(::rlim_t soft) {
    if (::getrlimit(RLIMIT_NOFILE, &saved) != 0) return;
    ::rlimit limit = saved;
    limit.rlim_cur = soft;
    lowered = ::setrlimit(RLIMIT_NOFILE, &limit) == 0;
  }
  ~LoweredDescriptorLimit() {
    if (lowered) ::setrlimit(RLIMIT_NOFILE, &saved);
  }
};

}  // namespace

// The first peers sent to (path.udp.connected_peers of them) get a socket per lane connected to them:
// their frames come from the send port the endpoint publishes; the other peers' come from the short and
// long ports, as without connected sockets. A new endpoint for a peer closes its old sockets.
BOOST_AUTO_TEST_CASE(connected_sockets_send_from_the_published_port_to_the_first_peers_only) {
  UdpOptions options = options_for(4, 1000);
  options.connected_peers = 2;
  auto path = make_path(kLoopback, options);
  const UdpEndpoint local = path->local_endpoint();
  BOOST_TEST(local.send_port != 0);
  BOOST_TEST(local.send_port != local.short_port);
  BOOST_TEST(local.send_port != local.long_port);
  BOOST_TEST(path->endpoint() == local.to_string());
  BOOST_TEST(path->endpoint().ends_with(":" + std::to_string(local.send_port)));
  PlainSocket ports[4][2];  // by rank (1..3 used, rank 3 twice over), lane
  for (Rank peer : {1u, 2u, 3u}) {
    BOOST_REQUIRE(path->add_peer(peer, UdpEndpoint{kLoopback, ports[peer][0].port, ports[peer][1].port}).is_ok());
  }
  std::vector<std::byte> bytes(500);
  BytesFrame frame(bytes);
  GatheredFrame bulk({bytes.data(), 100}, {bytes.data() + 100, 400}, /*bulk=*/true);
  const auto sources = [&](Rank peer, PlainSocket (&at)[2]) {
    BOOST_REQUIRE(path->send(peer, frame).is_ok());
    BOOST_REQUIRE(path->send(peer, bulk).is_ok());
    path->flush_sends();
    return std::pair{at[0].source_of_next(), at[1].source_of_next()};
  };
  BOOST_TEST((sources(2, ports[2]) == std::pair{local.send_port, local.send_port}));
  BOOST_TEST((sources(1, ports[1]) == std::pair{local.send_port, local.send_port}));
  BOOST_TEST(path->counters().connected_peers == 2u);
  BOOST_TEST((sources(3, ports[3]) == std::pair{local.short_port, local.long_port}));  // the third peer
  BOOST_TEST((sources(2, ports[2]) == std::pair{local.send_port, local.send_port}));
  BOOST_TEST(path->counters().connected_peers == 2u);

  // Rank 1 moves: its connected sockets go, its next frames reach the new ports from new sockets.
  PlainSocket moved[2];
  BOOST_REQUIRE(path->add_peer(1, UdpEndpoint{kLoopback, moved[0].port, moved[1].port}).is_ok());
  BOOST_TEST(path->counters().connected_peers == 1u);
  BOOST_TEST((sources(1, moved) == std::pair{local.send_port, local.send_port}));
  BOOST_TEST(path->counters().connected_peers == 2u);
  BOOST_TEST(path->counters().short_socket.frames_sent == 5u);

  // Without connected sockets the endpoint has no send port, and every frame comes from the two ports.
  options.connected_peers = 0;
  auto plain = make_path(kLoopback, options);
  BOOST_TEST(plain->local_endpoint().send_port == 0);
  const std::string plain_endpoint = plain->endpoint();
  BOOST_TEST(std::count(plain_endpoint.begin(), plain_endpoint.end(), ':') == 2);
  BOOST_REQUIRE(plain->add_peer(1, UdpEndpoint{kLoopback, ports[1][0].port, ports[1][1].port}).is_ok());
  BOOST_REQUIRE(plain->send(1, frame).is_ok());
  BOOST_TEST(ports[1][0].source_of_next() == plain->local_endpoint().short_port);
  BOOST_TEST(plain->counters().connected_peers == 0u);
}

// A path that receives from a peer's send port counts it as a known source, not a stranger.
BOOST_AUTO_TEST_CASE(frames_from_a_peers_send_port_come_from_a_known_sender) {
  auto paths = make_mesh(2, options_for(2, 1000));
  BOOST_REQUIRE(paths[0]->local_endpoint().send_port != 0);
  std::vector<std::byte> bytes(500);
  BytesFrame frame(bytes);
  GatheredFrame bulk({bytes.data(), 100}, {bytes.data() + 100, 400}, /*bulk=*/true);
  BOOST_REQUIRE(paths[0]->send(1, frame).is_ok());
  BOOST_REQUIRE(paths[0]->send(1, bulk).is_ok());
  paths[0]->flush_sends();
  CollectingSink sink;
  BOOST_TEST(poll_until([&] { return sink.frames.size() == 2; }, [&] { paths[1]->poll(sink, 8); }));
  BOOST_TEST(paths[0]->counters().connected_peers == 1u);
  BOOST_TEST(paths[1]->counters().from_unknown_senders == 0u);
}

// Connected sockets never take a descriptor in the upper half of RLIMIT_NOFILE: the program keeps those.
// Past it, frames go from the rail's two sockets, and no peer is connected after.
BOOST_AUTO_TEST_CASE(connected_sockets_leave_the_upper_half_of_the_descriptors_to_the_program) {
  auto path = make_path(kLoopback, options_for(3, 1000));
  PlainSocket first[2];
  PlainSocket second[2];
  BOOST_REQUIRE(path->add_peer(1, UdpEndpoint{kLoopback, first[0].port, first[1].port}).is_ok());
  BOOST_REQUIRE(path->add_peer(2, UdpEndpoint{kLoopback, second[0].port, second[1].port}).is_ok());
  // The next descriptor handed out is exactly half of the limit.
  const int next = lowest_free_descriptor();
  BOOST_REQUIRE(next > 0);
  std::vector<std::byte> bytes(500);
  BytesFrame frame(bytes);
  bool sent = false;
  int after = -1;
  {
    const LoweredDescriptorLimit limit(static_cast<::rlim_t>(2 * next));
    BOOST_REQUIRE(limit.lowered);
    sent = path->send(1, frame).is_ok() && path->send(2, frame).is_ok();
    after = lowest_free_descriptor();
  }
  BOOST_TEST(sent);
  BOOST_TEST(after == next);  // nothing kept open
  BOOST_TEST(first[0].source_of_next() == path->local_endpoint().short_port);
  BOOST_TEST(second[0].source_of_next() == path->local_endpoint().short_port);
  BOOST_TEST(path->counters().connected_peers == 0u);
  // Room again: still none, since the path stopped at the limit.
  BOOST_REQUIRE(path->send(1, frame).is_ok());
  BOOST_TEST(first[0].source_of_next() == path->local_endpoint().short_port);
  BOOST_TEST(path->counters().connected_peers == 0u);
}

// Every path's send port is its own: the kernel never hands it a port another socket holds, not even one
// a socket of the same user holds with SO_REUSEPORT (another rank's send port, or a service's), which
// would mix two processes' flows or take a service's datagrams.
BOOST_AUTO_TEST_CASE(a_send_port_is_never_one_another_socket_holds) {
  // 600 ports held with SO_REUSEPORT (a kernel that picked among them would land on one for about 2% of
  // the paths: ~6 of the 300 made here), then paths made and dropped one after another.
  std::vector<int> others;
  std::set<std::uint16_t> taken;
  for (int i = 0; i < 600; ++i) {
    const int fd = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    BOOST_REQUIRE(fd >= 0);
    others.push_back(fd);
    const int on = 1;
    BOOST_REQUIRE(::setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &on, sizeof on) == 0);
    ::sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(i % 2 == 0 ? kLoopback : INADDR_ANY);
    BOOST_REQUIRE(::bind(fd, reinterpret_cast<::sockaddr*>(&address), sizeof address) == 0);
    socklen_t length = sizeof address;
    BOOST_REQUIRE(::getsockname(fd, reinterpret_cast<::sockaddr*>(&address), &length) == 0);
    taken.insert(ntohs(address.sin_port));
  }
  int shared = 0;
  for (int i = 0; i < 300; ++i) {
    const std::uint16_t port = make_path(kLoopback, options_for(2, 1000))->local_endpoint().send_port;
    BOOST_REQUIRE(port != 0);
    if (taken.contains(port)) ++shared;
  }
  for (const int fd : others) ::close(fd);
  BOOST_TEST(shared == 0);
}

// A frame that finds no room on its peer's connected socket waits in the lane's queue and leaves from
// that connected socket: the peer's frames stay one flow, in order.
BOOST_AUTO_TEST_CASE(a_connected_peers_queued_frame_leaves_from_its_connected_socket) {
  auto path = make_path(kLoopback, options_for(2, 1000));
  PlainSocket peer[2];
  BOOST_REQUIRE(path->add_peer(1, UdpEndpoint{kLoopback, peer[0].port, peer[1].port}).is_ok());
  std::vector<std::byte> bytes(500);
  BytesFrame frame(bytes);
  Access::fake_sends(*path);
  Access::allowed = 1;  // the first goes, then no room
  Access::err = EAGAIN;
  BOOST_REQUIRE(path->send(1, frame).is_ok());
  BOOST_REQUIRE(path->send(1, frame).is_ok());
  BOOST_TEST(path->queued_frames() == 1u);
  Access::allowed = -1;
  CollectingSink sink;
  path->poll(sink, 8);
  BOOST_TEST(path->queued_frames() == 0u);
  BOOST_TEST(peer[0].source_of_next() == path->local_endpoint().send_port);
  BOOST_TEST(peer[0].source_of_next() == path->local_endpoint().send_port);  // the queued one
  BOOST_TEST(path->counters().short_socket.frames_sent == 2u);
  BOOST_TEST(path->counters().short_socket.frames_queued == 1u);
}

// A connected socket that refuses a send for anything but room (an ICMP error about an earlier datagram
// reads like a dead route) sends nothing: the frame goes again from the lane's shared socket, whose
// answer counts. A GSO run refused there that way does not turn GSO off.
BOOST_AUTO_TEST_CASE(a_send_a_connected_socket_refuses_goes_again_from_the_shared_socket) {
  for (const int err : {ECONNREFUSED, EHOSTUNREACH, ENOPROTOOPT}) {
    BOOST_TEST_CONTEXT("errno " << err) {
      UdpOptions options = options_for(2, 1000);
      auto path = make_path(kLoopback, options);
      PlainSocket peer[2];
      BOOST_REQUIRE(path->add_peer(1, UdpEndpoint{kLoopback, peer[0].port, peer[1].port}).is_ok());
      const bool gso = path->segments_sends();
      std::vector<std::byte> bytes(500);
      BytesFrame frame(bytes);
      GatheredFrame bulk({bytes.data(), 100}, {bytes.data() + 100, 400}, /*bulk=*/true);
      Access::refuse_on_connected_sockets(*path, err, 1);
      BOOST_TEST(path->send(1, frame).is_ok());
      BOOST_TEST(peer[0].source_of_next() == path->local_endpoint().short_port);
      BOOST_TEST(path->send(1, frame).is_ok());  // the next from the connected socket again
      BOOST_TEST(peer[0].source_of_next() == path->local_endpoint().send_port);
      Access::connected_refusals = 1;
      BOOST_TEST(path->send(1, bulk).is_ok());
      BOOST_TEST(path->send(1, bulk).is_ok());  // two equal frames: one GSO run where the kernel has it
      path->flush_sends();
      BOOST_TEST(peer[1].source_of_next() == path->local_endpoint().long_port);
      if (!gso) BOOST_TEST(peer[1].source_of_next() == path->local_endpoint().send_port);
      const UdpCounters& counters = path->counters();
      BOOST_TEST(counters.connected_send_failures == 2u);
      BOOST_TEST(counters.short_socket.frames_sent == 2u);
      BOOST_TEST(counters.long_socket.frames_sent == 2u);
      BOOST_TEST(counters.short_socket.send_errors == 0u);
      BOOST_TEST(counters.long_socket.send_errors == 0u);
      BOOST_TEST(path->segments_sends() == gso);  // a connected socket's refusal is not the route's
    }
  }
}

BOOST_AUTO_TEST_CASE(datagrams_from_strangers_are_handed_up_and_counted_and_oversized_ones_dropped) {
  auto path = make_path(kLoopback, options_for(1, 1000));
  const int stranger = ::socket(AF_INET, SOCK_DGRAM, 0);
  BOOST_REQUIRE(stranger >= 0);
  ::sockaddr_in to{};
  to.sin_family = AF_INET;
  to.sin_addr.s_addr = htonl(kLoopback);
  to.sin_port = htons(path->local_endpoint().short_port);
  std::vector<char> bytes(1001, 'x');
  BOOST_REQUIRE(::sendto(stranger, bytes.data(), 1001, 0, reinterpret_cast<::sockaddr*>(&to), sizeof to) == 1001);
  BOOST_REQUIRE(::sendto(stranger, bytes.data(), 100, 0, reinterpret_cast<::sockaddr*>(&to), sizeof to) == 100);
  ::close(stranger);
  CollectingSink sink;
  BOOST_TEST(poll_until([&] { return !sink.frames.empty(); }, [&] { path->poll(sink, 8); }));
  BOOST_TEST(sink.frames.size() == 1u);
  BOOST_TEST(sink.frames.at(0).size() == 100u);
  BOOST_TEST(path->counters().truncated == 1u);
  BOOST_TEST(path->counters().from_unknown_senders == 2u);
  BOOST_TEST(path->counters().short_socket.frames_received == 1u);
}

BOOST_AUTO_TEST_CASE(a_sink_may_send_from_inside_on_frame) {
  auto paths = make_mesh(2, options_for(2, 1000));
  // Rank 1 answers each frame with one of its own, from inside on_frame.
  struct Echo final : FrameSink {
    UdpPath* path = nullptr;
    int answered = 0;
    bool ok = true;
    void on_frame(std::span<const std::byte> frame) noexcept override {
      BytesFrame reply(frame);
      ok = ok && path->send(0, reply).is_ok();
      ++answered;
    }
  } echo;
  echo.path = paths[1].get();
  const std::vector<std::byte> ping{std::byte{1}, std::byte{2}, std::byte{3}};
  BytesFrame frame(ping);
  for (int i = 0; i < 5; ++i) BOOST_REQUIRE(paths[0]->send(1, frame).is_ok());
  CollectingSink replies;
  BOOST_TEST(poll_until([&] { return replies.frames.size() == 5; },
                        [&] {
                          paths[1]->poll(echo, 2);
                          paths[0]->poll(replies, 8);
                        }));
  BOOST_TEST(echo.ok);
  BOOST_TEST(echo.answered == 5);
  BOOST_TEST((replies.frames.at(4) == ping));
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(udp_bulk_lane)

namespace {

// Polls `path` once at a time: first until `checker` has one frame (the short marker, or the bulk frame
// if the long socket was read first), then counts the polls until it has both. Bounded: -1 if never.
int polls_until_both(UdpPath& path, PatternChecker& checker) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (checker.received() < 1 && std::chrono::steady_clock::now() < deadline) path.poll(checker, 1);
  int polls = 0;
  while (checker.received() < 2 && polls < 1000) {
    path.poll(checker, 64);
    ++polls;
  }
  return checker.received() == 2 ? polls : -1;
}

}  // namespace

BOOST_AUTO_TEST_CASE(the_long_socket_is_read_at_the_next_poll_while_bulk_is_expected_and_every_16th_when_not) {
  const std::uint64_t seed = ftmpi::test::seed_for("udp bulk lane");
  BOOST_TEST_CONTEXT("seed " << seed) {
    constexpr std::size_t kMaxFrame = 9000;
    for (const bool expected : {true, false}) {
      BOOST_TEST_CONTEXT("bulk expected " << expected) {
        auto paths = make_mesh(2, options_for(2, kMaxFrame));
        paths[1]->expect_bulk(expected);
        PatternChecker checker(seed, 1, 4, kMaxFrame);
        Sender sender(seed, 0, 2, kMaxFrame);
        // The bulk frame first, then a short one: once the short one is in, the bulk one is queued too.
        BOOST_REQUIRE(sender.send(*paths[0], 1, true).is_ok());
        BOOST_REQUIRE(sender.send(*paths[0], 1, false).is_ok());
        paths[0]->flush_sends();  // the bulk frame may wait for a GSO run, as the engine's would
        BOOST_REQUIRE(Access::wait_both_sockets_readable(*paths[1], std::chrono::seconds(10)));
        const int polls = polls_until_both(*paths[1], checker);
        BOOST_TEST(checker.error() == "");
        BOOST_TEST(polls >= 0);
        // Expected: a poll that handed up the short frame defers the long socket once, the next reads it.
        // Not expected: read at least every 16th poll, for late duplicates.
        BOOST_TEST(polls <= (expected ? 1 : 16), "polls after the short frame: " << polls);
        BOOST_TEST(paths[1]->counters().long_socket.frames_received == 1u);
      }
    }
  }
}

BOOST_AUTO_TEST_SUITE_END()

// GSO runs on send, GRO on receive, and their fall-backs.
BOOST_AUTO_TEST_SUITE(udp_gso_gro)

namespace {

// A large message's frames on the long socket, as the engine sends them: frames of `segment` bytes and
// a shorter last one; each carries (sender 0, index) and bytes that follow from them.
class MessageFrame final : public FrameWriter {
 public:
  MessageFrame(std::uint64_t seed, std::uint32_t index, std::size_t size)
      : index_(index), key_(frame_key(seed, 0, 1, index)), size_(size) {}
  std::size_t frame_size() const noexcept override { return size_; }
  void write(std::span<std::byte> room) noexcept override {
    const std::uint32_t sender = 0;
    std::memcpy(room.data(), &sender, 4);
    std::memcpy(room.data() + 4, &index_, 4);
    for (std::size_t j = kTestHeader; j < size_; ++j) room[j] = pattern_byte(key_, j);
  }
  bool bulk() const noexcept override { return true; }

 private:
  std::uint32_t index_;
  std::uint64_t key_;
  std::size_t size_;
};

std::size_t message_frame_size(std::uint32_t index, std::uint32_t frames, std::size_t segment) {
  return index + 1 < frames ? segment : segment / 3;
}

// Frames of at most `max_frame` between `peers` paths whose long socket places as told (GRO needs it off).
UdpOptions gso_options(std::size_t peers, std::size_t max_frame, UdpPlace place) {
  UdpOptions options = options_for(peers, max_frame);
  options.place = place;
  return options;
}

// Checks each frame's index (in order: one socket, loopback), size and bytes; keeps the first error.
class MessageChecker final : public FrameSink {
 public:
  MessageChecker(std::uint64_t seed, std::uint32_t frames, std::size_t segment)
      : seed_(seed), frames_(frames), segment_(segment) {}
  void on_frame(std::span<const std::byte> frame) noexcept override {
    ++received_;
    if (!error_.empty()) return;
    std::uint32_t index = 0;
    if (frame.size() < kTestHeader) return fail("a frame of " + std::to_string(frame.size()) + " bytes");
    std::memcpy(&index, frame.data() + 4, 4);
    if (index != next_) return fail("frame #" + std::to_string(index) + " arrived, expected #" + std::to_string(next_));
    ++next_;
    const std::size_t size = message_frame_size(index, frames_, segment_);
    if (frame.size() != size) {
      return fail("frame #" + std::to_string(index) + " has " + std::to_string(frame.size()) + " bytes, not " +
                  std::to_string(size));
    }
    const std::uint64_t key = frame_key(seed_, 0, 1, index);
    for (std::size_t j = kTestHeader; j < size; ++j) {
      if (frame[j] != pattern_byte(key, j)) {
        return fail("frame #" + std::to_string(index) + ": byte " + std::to_string(j) + " differs");
      }
    }
  }
  std::size_t received() const { return received_; }
  const std::string& error() const { return error_; }

 private:
  void fail(std::string text) { error_ = std::move(text); }
  std::uint64_t seed_;
  std::uint32_t frames_;
  std::size_t segment_;
  std::uint32_t next_ = 0;
  std::size_t received_ = 0;
  std::string error_;
};

struct MessageRun {
  UdpCounters sender;
  UdpCounters receiver;
  bool segmented = false;  // the sender's segments_sends() before the message
  bool coalesced = false;  // the receiver's coalesces_receives()
};

// Sends one message of `frames` frames from a path on 127.0.0.1 to one on 127.0.0.2, the receiver
// polling now and then as the engine would, and checks that every frame arrived intact, in order, once.
MessageRun send_message(std::uint64_t seed, UdpOptions options, std::uint32_t frames, std::size_t segment,
                        bool refuse_gso = false) {
  auto paths = make_mesh(2, options);
  if (refuse_gso) Access::refuse_gso(*paths[0]);
  MessageRun run;
  run.segmented = paths[0]->segments_sends();
  run.coalesced = paths[1]->coalesces_receives();
  MessageChecker checker(seed, frames, segment);
  for (std::uint32_t i = 0; i < frames; ++i) {
    MessageFrame frame(seed, i, message_frame_size(i, frames, segment));
    BOOST_REQUIRE(paths[0]->send(1, frame).is_ok());
    if (i % 50 == 49) paths[1]->poll(checker, 64);
  }
  paths[0]->flush_sends();  // as the engine does when it stops sending
  const bool all = poll_until([&] { return checker.received() >= frames && !paths[0]->has_queued_frames(); },
                              [&] {
                                paths[0]->poll(checker, 64);  // pushes out what found no room
                                paths[1]->poll(checker, 64);
                              });
  BOOST_TEST(all, checker.received() << " of " << frames << " frames arrived");
  BOOST_TEST(checker.error() == "");
  BOOST_TEST(checker.received() == frames);
  // Nothing more comes: a datagram would now be a duplicate.
  paths[1]->poll(checker, 64);
  BOOST_TEST(checker.received() == frames);
  run.sender = paths[0]->counters();
  run.receiver = paths[1]->counters();
  return run;
}

}  // namespace

BOOST_AUTO_TEST_CASE(a_long_message_arrives_whole_with_gso_and_gro_each_on_and_off) {
  const std::uint64_t seed = ftmpi::test::seed_for("udp gso gro");
  constexpr std::uint32_t kFrames = 300;
  for (const std::size_t segment : {std::size_t{1472}, std::size_t{8972}}) {
    for (const bool gso : {false, true}) {
      for (const bool gro : {false, true}) {
        BOOST_TEST_CONTEXT("seed " << seed << ", frames of " << segment << ", gso " << gso << ", gro " << gro) {
          UdpOptions options = gso_options(2, segment, UdpPlace::off);
          options.gso = gso;
          options.gro = gro;
          const MessageRun run = send_message(seed, options, kFrames, segment);
          BOOST_TEST(run.sender.long_socket.frames_sent == kFrames);
          BOOST_TEST(run.receiver.long_socket.frames_received == kFrames);
          BOOST_TEST(run.receiver.truncated == 0u);
          if (!gso) BOOST_TEST(!run.segmented);
          if (!gro) BOOST_TEST(!run.coalesced);
          // Where the kernel lacks UDP_SEGMENT or UDP_GRO (before 4.18 and 5.0), the fall-back is what ran.
          BOOST_TEST_MESSAGE("frames of " << segment << ": GSO " << (run.segmented ? "used" : "off") << ", GRO "
                                          << (run.coalesced ? "used" : "off"));
          if (run.segmented) {
            // Runs of equal frames, at most 64 and 64 KiB each: never one datagram per frame.
            const std::size_t per_datagram = std::min<std::size_t>(kUdpGsoMaxSegments, kUdpGsoMaxBytes / segment);
            BOOST_TEST(run.sender.gso_datagrams_sent >= (kFrames - 1) / per_datagram);
            BOOST_TEST(run.sender.gso_frames_sent <= run.sender.gso_datagrams_sent * per_datagram);
            BOOST_TEST(run.sender.gso_frames_sent >= kFrames - per_datagram);
          } else {
            BOOST_TEST(run.sender.gso_datagrams_sent == 0u);
          }
          // Over loopback a GSO datagram reaches a coalescing socket as it was sent.
          if (run.segmented && run.coalesced) {
            BOOST_TEST(run.receiver.gro_datagrams_received > 0u);
            BOOST_TEST(run.receiver.gro_frames_received == run.sender.gso_frames_sent);
          }
          if (!run.coalesced) BOOST_TEST(run.receiver.gro_datagrams_received == 0u);
        }
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(a_route_that_refuses_gso_turns_it_off_and_loses_no_frame) {
  const std::uint64_t seed = ftmpi::test::seed_for("udp gso refused");
  constexpr std::uint32_t kFrames = 200;
  constexpr std::size_t kSegment = 1472;
  for (const int err : {EIO, EINVAL}) {
    BOOST_TEST_CONTEXT("seed " << seed << ", errno " << err) {
      const UdpOptions options = gso_options(2, kSegment, UdpPlace::off);
      Access::gso_err = err;
      Access::gso_refusals = 0;
      const MessageRun run = send_message(seed, options, kFrames, kSegment, /*refuse_gso=*/true);
      if (run.segmented) {
        // Once by the route: refused on the connected socket, then judged on the shared one, where it is
        // refused again; then one datagram per frame.
        BOOST_TEST(Access::gso_refusals == 2);
        BOOST_TEST(run.sender.long_socket.frames_queued > 0u);  // the refused run went by the queue
      }
      BOOST_TEST(run.sender.gso_datagrams_sent == 0u);
      BOOST_TEST(run.sender.long_socket.send_errors == 0u);
      BOOST_TEST(run.sender.long_socket.frames_sent == kFrames);
    }
  }
}

BOOST_AUTO_TEST_CASE(runs_break_at_another_peer_a_larger_frame_and_the_short_socket_and_wait_for_no_one) {
  const std::uint64_t seed = ftmpi::test::seed_for("udp gso runs");
  BOOST_TEST_CONTEXT("seed " << seed) {
    constexpr std::size_t kMaxFrame = 1472;
    auto paths = make_mesh(3, gso_options(3, kMaxFrame, UdpPlace::off));
    if (!paths[0]->segments_sends()) {
      BOOST_TEST_MESSAGE("the kernel has no UDP_SEGMENT: nothing is held, nothing to check here");
      return;
    }
    std::vector<PatternChecker> checkers;
    for (Rank r = 0; r < 3; ++r) checkers.emplace_back(seed, r, 6, kMaxFrame);
    Sender sender(seed, 0, 3, kMaxFrame);
    // Random sizes to two peers, bulk and short mixed: whatever the order, each socket's frames to each
    // peer arrive in order, and none is held once the sender stops and flushes.
    std::uint64_t bulk_to[3] = {0, 0, 0};
    for (std::uint32_t i = 0; i < 600; ++i) {
      const Rank to = 1 + static_cast<Rank>(mix(seed ^ i) % 2);
      const bool bulk = (mix(seed + i) % 4) != 0;
      BOOST_REQUIRE(sender.send(*paths[0], to, bulk).is_ok());
      if (bulk) ++bulk_to[to];
    }
    paths[0]->flush_sends();
    BOOST_TEST(paths[0]->counters().long_socket.frames_sent + paths[0]->queued_frames() == sender.bulk_sent);
    const bool all = poll_until(
        [&] { return checkers[1].received() + checkers[2].received() == sender.bulk_sent + sender.short_sent; },
        [&] {
          for (Rank r = 0; r < 3; ++r) paths[r]->poll(checkers[r], 64);
        });
    BOOST_TEST(all);
    for (Rank r = 1; r < 3; ++r) {
      BOOST_TEST_CONTEXT("rank " << r) {
        BOOST_TEST(checkers[r].error() == "");
        BOOST_TEST(checkers[r].next_from(sender_id(0, true)) == bulk_to[r]);
      }
    }
    BOOST_TEST(paths[0]->counters().long_socket.frames_sent == sender.bulk_sent);
  }
}

BOOST_AUTO_TEST_CASE(a_run_that_finds_no_room_waits_in_order_and_a_dead_route_fails_the_send_that_ends_a_run) {
  const std::uint64_t seed = ftmpi::test::seed_for("udp gso errors");
  constexpr std::size_t kSegment = 1472;
  constexpr std::uint32_t kFrames = 11;
  BOOST_TEST_CONTEXT("seed " << seed) {
    auto paths = make_mesh(2, gso_options(2, kSegment, UdpPlace::off));
    if (!paths[0]->segments_sends()) {
      BOOST_TEST_MESSAGE("the kernel has no UDP_SEGMENT: the queue tests of udp_path cover this");
      return;
    }
    Access::fake_sends(*paths[0]);
    const auto send = [&](std::uint32_t index, std::uint32_t frames) {
      MessageFrame frame(seed, index, message_frame_size(index, frames, kSegment));
      return paths[0]->send(1, frame);
    };
    // No room: the run its short last frame ends goes to the queue, frame by frame, in order.
    Access::allowed = 0;
    Access::err = EAGAIN;
    for (std::uint32_t i = 0; i < kFrames; ++i) BOOST_REQUIRE(send(i, kFrames).is_ok());
    BOOST_TEST(paths[0]->queued_frames() == kFrames);
    BOOST_TEST(paths[0]->counters().long_socket.frames_queued == kFrames);
    BOOST_TEST(paths[0]->counters().long_socket.frames_sent == 0u);
    Access::allowed = -1;
    MessageChecker checker(seed, kFrames, kSegment);
    const bool all = poll_until([&] { return checker.received() == kFrames; }, [&] {
      paths[0]->poll(checker, 64);
      paths[1]->poll(checker, 64);
    });
    BOOST_TEST(all);
    BOOST_TEST(checker.error() == "");
    BOOST_TEST(paths[0]->counters().long_socket.frames_sent == kFrames);

    // The link went down: the send whose frame ended the run reports the rail for the run's peer.
    Access::allowed = 0;
    Access::err = ENETUNREACH;
    for (std::uint32_t i = 0; i < 3; ++i) BOOST_REQUIRE(send(i, 4).is_ok());  // held
    const base::Status failed = send(3, 4);
    BOOST_TEST((failed.code() == base::Errc::rail_down));
    BOOST_TEST(failed.message().find("rank 1 at 127.0.0.2:") != std::string::npos);
    BOOST_TEST(paths[0]->counters().long_socket.send_errors == 4u);
    // Held frames that meet the dead route at a flush are dropped and counted, as queued ones are.
    for (std::uint32_t i = 0; i < 2; ++i) BOOST_REQUIRE(send(i, 4).is_ok());
    paths[0]->flush_sends();
    BOOST_TEST(paths[0]->counters().long_socket.send_errors == 6u);
    BOOST_TEST(!paths[0]->has_queued_frames());
    Access::allowed = -1;
  }
}

BOOST_AUTO_TEST_CASE(a_placing_socket_does_not_coalesce_and_takes_gso_datagrams_frame_by_frame) {
  const std::uint64_t seed = ftmpi::test::seed_for("udp gso placing");
  constexpr std::uint32_t kFrames = 100;
  constexpr std::size_t kSegment = 8972;
  BOOST_TEST_CONTEXT("seed " << seed) {
    // The checker does not place (place_header_size 0): the placing socket reads datagram by datagram.
    const MessageRun run = send_message(seed, gso_options(2, kSegment, UdpPlace::on), kFrames, kSegment);
    BOOST_TEST(!run.coalesced);
    BOOST_TEST(run.receiver.gro_datagrams_received == 0u);
    BOOST_TEST(run.receiver.long_socket.frames_received == kFrames);
  }
}

BOOST_AUTO_TEST_SUITE_END()

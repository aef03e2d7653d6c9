// The engine with N ranks inside one process, over loop paths: protocols, matching order, and the
// reliability machinery on a path that loses nothing (tests/fault has it under seeded faults).
#include <boost/test/unit_test.hpp>

#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "engine/engine_core.hpp"
#include "ftmpi/frag/wire.hpp"
#include "ftmpi/path/fault.hpp"
#include "ftmpi/path/loop.hpp"
#include "ftmpi/path/peer_memory.hpp"

using namespace ftmpi;
using namespace ftmpi::engine;

namespace {

constexpr std::uint64_t kJobKey = 0x5eed'f00d'1234'5678ULL;

struct World {
  path::LoopNetwork network;
  std::vector<std::unique_ptr<EngineCore>> ranks;
  std::vector<path::FaultPath*> faults;  // each rank's fault layer, with `fault_layer`
  int peer_memory_reads = 0;
  bool peer_memory_unreadable = false;   // every single-copy read fails (as under strict ptrace rules)
  int peer_memory_writes = 0;
  bool peer_memory_unwritable = false;   // every split copy's write fails
  int peer_memory_gathers = 0;            // system calls reading several messages at once
  std::size_t peer_memory_gather_limit = SIZE_MAX;  // such a call stops after this many bytes, as the kernel
                                                    // does at a block it cannot copy

  // `fault_layer`: each rank's loop path is wrapped in a FaultPath with no faults yet (then unreliable).
  World(std::uint32_t n, EngineConfig config, path::LoopOptions options = {}, frag::FrameKey key = {},
        bool fault_layer = false)
      : network(n, options) {
    for (std::uint32_t r = 0; r < n; ++r) {
      std::vector<std::unique_ptr<path::Path>> paths;
      std::unique_ptr<path::Path> loop = std::make_unique<path::LoopPath>(network, r);
      if (fault_layer) {
        auto wrapped = std::make_unique<path::FaultPath>(std::move(loop), std::vector<path::FaultSpec>{});
        faults.push_back(wrapped.get());
        loop = std::move(wrapped);
      }
      paths.push_back(std::move(loop));
      Environment env;
      env.abort = [r](int code, std::string_view message) {
        BOOST_FAIL("rank " << r << " aborted (" << code << "): " << message);
      };
      // Single copy among ranks of one process: each reads the others' memory through its own pid.
      env.read_peer_memory = [this](std::int64_t pid, std::uintptr_t address,
                                    std::span<const ::iovec> blocks) -> base::Result<std::size_t> {
        ++peer_memory_reads;
        if (peer_memory_unreadable) return base::Status(base::Errc::io_error, "process_vm_readv: EPERM");
        return path::read_peer_memory_scattered(static_cast<pid_t>(pid), address, blocks);
      };
      env.read_peer_memory_gather = [this](std::int64_t pid, std::span<const ::iovec> remote,
                                           std::span<const ::iovec> local) -> base::Result<std::size_t> {
        ++peer_memory_gathers;
        if (peer_memory_unreadable) return base::Status(base::Errc::io_error, "process_vm_readv: EPERM");
        // Both lists cut at the limit.
        const auto cut = [this](std::span<const ::iovec> blocks) {
          std::vector<::iovec> kept;
          std::size_t left = peer_memory_gather_limit;
          for (const ::iovec& b : blocks) {
            if (left == 0) break;
            kept.push_back({b.iov_base, std::min(b.iov_len, left)});
            left -= kept.back().iov_len;
          }
          return kept;
        };
        return path::read_peer_memory_gather(static_cast<pid_t>(pid), cut(remote), cut(local));
      };
      env.write_peer_memory = [this](std::int64_t pid, std::uintptr_t address, const void* local,
                                     std::size_t len) -> base::Result<std::size_t> {
        ++peer_memory_writes;
        if (peer_memory_unwritable) return base::Status(base::Errc::io_error, "process_vm_writev: EPERM");
        return path::write_peer_memory(static_cast<pid_t>(pid), address, local, len);
      };
      ranks.push_back(std::make_unique<EngineCore>(Identity{r, n, kJobKey, key}, config, std::move(paths), env));
    }
  }

  CommView world(std::uint32_t r) const {
    return CommView{0, static_cast<int>(r), static_cast<int>(ranks.size()), {}};
  }

  // Steps every rank until done() holds; fails the test if that takes absurdly many rounds.
  void run_until(const std::function<bool()>& done, std::uint64_t max_rounds = 2'000'000) {
    for (std::uint64_t round = 0; !done(); ++round) {
      BOOST_REQUIRE_MESSAGE(round < max_rounds, "no progress after " << max_rounds << " rounds");
      for (auto& r : ranks) r->progress();
    }
  }
  bool complete(std::uint32_t r, Request* q, Completion* c = nullptr) { return ranks[r]->is_complete(q, c); }
};

EngineConfig plain_config() { return EngineConfig::defaults(); }

// Two ranks over loop paths of 4 KiB frames behind a fault layer, reliability forced, a lost frame resent
// by its timer after 1 ms: where frames are kept by reference (or, without, copied) and resent.
World resending_world(bool by_reference = true) {
  EngineConfig config = plain_config();
  config.reliability = Reliability::force;
  config.retain_by_reference = by_reference;
  config.retransmit_min = std::chrono::milliseconds(1);
  return World(2, config, path::LoopOptions{4096, true}, {}, /*fault_layer=*/true);
}

// Two ranks of this process that reach each other by single copy from 4 KiB (each reads and writes the
// other's memory through its own pid).
struct SingleCopyWorld : World {
  static EngineConfig from_4k(EngineConfig config) {
    config.single_copy_min = 4096;
    return config;
  }
  static path::LoopOptions reading_memory() {
    path::LoopOptions options;
    options.single_copy_read = true;
    return options;
  }
  explicit SingleCopyWorld(const EngineConfig& config) : World(2, from_4k(config), reading_memory()) {
    for (std::uint32_t r = 0; r < 2; ++r) ranks[r]->set_peer_pid(1 - r, ::getpid());
  }
};

std::vector<std::byte> pattern(std::size_t n, std::uint64_t salt) {
  std::vector<std::byte> v(n);
  std::uint64_t x = salt * 0x9E3779B97F4A7C15ULL + 1;
  for (auto& b : v) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    b = static_cast<std::byte>(x);
  }
  return v;
}

// Sends `count` messages of the given sizes 0 -> 1 and checks each arrives intact, once, in order.
void exchange_and_verify(World& w, const std::vector<std::size_t>& sizes) {
  std::vector<std::vector<std::byte>> sent, got;
  std::vector<Request*> sends, recvs;
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    sent.push_back(pattern(sizes[i], i + 1));
    got.emplace_back(sizes[i]);
  }
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    recvs.push_back(w.ranks[1]->irecv(w.world(1), got[i].data(), got[i].size(), 0, 7));
  }
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    sends.push_back(w.ranks[0]->isend(w.world(0), sent[i].data(), sent[i].size(), 1, 7, SendMode::standard));
  }
  w.run_until([&] {
    for (std::size_t i = 0; i < sizes.size(); ++i) {
      if (!w.complete(0, sends[i]) || !w.complete(1, recvs[i])) return false;
    }
    return true;
  });
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    Completion c;
    BOOST_REQUIRE(w.complete(1, recvs[i], &c));
    BOOST_TEST(c.source == 0);
    BOOST_TEST(c.tag == 7);
    BOOST_TEST(c.bytes == sizes[i]);
    BOOST_TEST(!c.truncated);
    BOOST_TEST((got[i] == sent[i]), "message " << i << " of " << sizes[i] << " bytes differs");
    w.ranks[0]->release(sends[i]);
    w.ranks[1]->release(recvs[i]);
  }
}


// A message in pieces for the tests below: `count` items of `pieces` at `extent` strides in a buffer whose
// other bytes are holes. Placing and reading the packed bytes is done here by a plain loop, independently
// of frag's walker.
struct Spread {
  std::vector<frag::Piece> pieces;
  std::ptrdiff_t extent = 0;
  std::size_t count = 0;

  std::size_t item_bytes() const {
    std::size_t n = 0;
    for (const auto& p : pieces) n += p.length;
    return n;
  }
  std::size_t buffer_bytes() const { return count * static_cast<std::size_t>(extent); }
  frag::PiecesLayout layout() const { return *frag::PiecesLayout::make(pieces, count, extent); }
  // The buffer holding `packed` in the pieces and `hole` elsewhere.
  std::vector<std::byte> place(std::span<const std::byte> packed, std::byte hole) const {
    std::vector<std::byte> buffer(buffer_bytes(), hole);
    std::size_t at = 0;
    for (std::size_t i = 0; i < count && at < packed.size(); ++i) {
      for (const auto& p : pieces) {
        const std::size_t n = std::min(p.length, packed.size() - at);
        std::memcpy(buffer.data() + i * static_cast<std::size_t>(extent) + static_cast<std::size_t>(p.displacement),
                    packed.data() + at, n);
        at += n;
      }
    }
    return buffer;
  }
};
}  // namespace

BOOST_AUTO_TEST_SUITE(engine_core)

BOOST_AUTO_TEST_CASE(eager_message_arrives_intact_with_its_envelope) {
  World w(2, plain_config());
  exchange_and_verify(w, {1, 100, 4000});
}

BOOST_AUTO_TEST_CASE(zero_byte_message_completes_both_sides) {
  World w(2, plain_config());
  exchange_and_verify(w, {0, 0, 0});
}

BOOST_AUTO_TEST_CASE(large_message_goes_by_rendezvous_and_arrives_intact) {
  World w(2, plain_config(), path::LoopOptions{2048, true});
  exchange_and_verify(w, {100'000, 2048 - frag::kHeaderSize + 1, 1'000'003});
}

BOOST_AUTO_TEST_CASE(messages_match_in_send_order_whatever_was_posted_first) {
  World w(2, plain_config());
  // Unexpected first: send 50 messages with the same tag, then post the receives.
  std::vector<int> values(50), got(50, -1);
  std::vector<Request*> sends, recvs;
  for (int i = 0; i < 50; ++i) {
    values[i] = i;
    sends.push_back(w.ranks[0]->isend(w.world(0), &values[i], sizeof(int), 1, 3, SendMode::standard));
  }
  w.run_until([&] { return w.ranks[1]->iprobe(w.world(1), kAnySource, kAnyTag, nullptr); });
  for (int i = 0; i < 50; ++i) recvs.push_back(w.ranks[1]->irecv(w.world(1), &got[i], sizeof(int), 0, 3));
  w.run_until([&] {
    for (auto* r : recvs) {
      if (!w.complete(1, r)) return false;
    }
    return true;
  });
  BOOST_TEST(got == values, boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(wildcards_report_the_actual_source_and_tag) {
  World w(3, plain_config());
  int a = 11, b = 22, x = 0, y = 0;
  Request* s1 = w.ranks[1]->isend(w.world(1), &a, sizeof a, 0, 5, SendMode::standard);
  Request* s2 = w.ranks[2]->isend(w.world(2), &b, sizeof b, 0, 9, SendMode::standard);
  Request* r1 = w.ranks[0]->irecv(w.world(0), &x, sizeof x, kAnySource, 9);
  Request* r2 = w.ranks[0]->irecv(w.world(0), &y, sizeof y, 1, kAnyTag);
  w.run_until([&] { return w.complete(0, r1) && w.complete(0, r2) && w.complete(1, s1) && w.complete(2, s2); });
  Completion c1, c2;
  BOOST_REQUIRE(w.complete(0, r1, &c1));
  BOOST_REQUIRE(w.complete(0, r2, &c2));
  BOOST_TEST(x == 22);
  BOOST_TEST(c1.source == 2);
  BOOST_TEST(c1.tag == 9);
  BOOST_TEST(y == 11);
  BOOST_TEST(c2.source == 1);
  BOOST_TEST(c2.tag == 5);
}

BOOST_AUTO_TEST_CASE(longer_message_than_buffer_is_flagged_truncated) {
  World w(2, plain_config(), path::LoopOptions{1024, true});
  for (std::size_t n : {std::size_t{64}, std::size_t{10'000}}) {
    auto data = pattern(n, n);
    std::vector<std::byte> small(16);
    Request* s = w.ranks[0]->isend(w.world(0), data.data(), n, 1, 1, SendMode::standard);
    Request* r = w.ranks[1]->irecv(w.world(1), small.data(), small.size(), 0, 1);
    w.run_until([&] { return w.complete(0, s) && w.complete(1, r); });
    Completion c;
    BOOST_REQUIRE(w.complete(1, r, &c));
    BOOST_TEST(c.truncated);
    BOOST_TEST(c.bytes == 16u);
    BOOST_TEST(std::memcmp(small.data(), data.data(), 16) == 0);
  }
}

BOOST_AUTO_TEST_CASE(messages_in_pieces_are_gathered_and_scattered_whatever_the_protocol) {
  // Sender and receiver disagree on the layout, only the packed bytes must agree; holes stay untouched.
  // Eager and rendezvous, posted and unexpected, trusted and checked (forced reliability) paths, and a
  // receive shorter than the message.
  for (const bool reliable : {false, true}) {
    EngineConfig config = plain_config();
    if (reliable) config.reliability = Reliability::force;
    World w(2, config, path::LoopOptions{2048, true});
    for (const std::size_t n : {std::size_t{0}, std::size_t{56}, std::size_t{5'600}, std::size_t{224'000}}) {
      for (const bool posted_first : {true, false}) {
        const Spread from{{{0, 3}, {8, 5}}, 16, n / 8};  // 8 bytes of every 16
        const Spread into{{{2, 7}}, 11, n / 7};           // 7 bytes of every 11
        const auto packed = pattern(n, n + (posted_first ? 1 : 2));
        const auto sent = from.place(packed, std::byte{0x55});
        std::vector<std::byte> got(into.buffer_bytes(), std::byte{0xEE});
        const frag::PiecesLayout send_layout = from.layout();
        const frag::PiecesLayout recv_layout = into.layout();
        Request* r = nullptr;
        if (posted_first) r = w.ranks[1]->irecv_pieces(w.world(1), got.data(), recv_layout, 0, 3);
        Request* s = w.ranks[0]->isend_pieces(w.world(0), sent.data(), send_layout, 1, 3, SendMode::standard);
        if (!posted_first) {
          for (int i = 0; i < 100; ++i) {
            w.ranks[0]->progress();
            w.ranks[1]->progress();
          }
          r = w.ranks[1]->irecv_pieces(w.world(1), got.data(), recv_layout, 0, 3);
        }
        w.run_until([&] { return w.complete(0, s) && w.complete(1, r); });
        Completion c;
        BOOST_REQUIRE(w.complete(1, r, &c));
        BOOST_TEST(c.bytes == n);
        BOOST_TEST(!c.truncated);
        BOOST_TEST((got == into.place(packed, std::byte{0xEE})),
                   n << " bytes, " << (posted_first ? "posted" : "unexpected") << (reliable ? ", checked" : ""));
        w.ranks[0]->release(s);
        w.ranks[1]->release(r);
      }
    }
    // Dense into pieces, and a receive in pieces that holds only part of the message.
    const std::size_t n = 70'000;
    const auto packed = pattern(n, 99);
    const Spread into{{{2, 7}}, 11, n / 7 / 2};  // half the message fits
    std::vector<std::byte> got(into.buffer_bytes(), std::byte{0xEE});
    const frag::PiecesLayout recv_layout = into.layout();
    Request* r = w.ranks[1]->irecv_pieces(w.world(1), got.data(), recv_layout, 0, 4);
    Request* s = w.ranks[0]->isend(w.world(0), packed.data(), n, 1, 4, SendMode::standard);
    w.run_until([&] { return w.complete(0, s) && w.complete(1, r); });
    Completion c;
    BOOST_REQUIRE(w.complete(1, r, &c));
    BOOST_TEST(c.truncated);
    BOOST_TEST(c.bytes == recv_layout.packed_size());
    BOOST_TEST((got == into.place(std::span(packed).first(recv_layout.packed_size()), std::byte{0xEE})));
    w.ranks[0]->release(s);
    w.ranks[1]->release(r);
  }
}

BOOST_AUTO_TEST_CASE(synchronous_send_completes_only_after_the_receive_matches) {
  World w(2, plain_config());
  int v = 42, got = 0;
  Request* s = w.ranks[0]->isend(w.world(0), &v, sizeof v, 1, 1, SendMode::synchronous);
  for (int i = 0; i < 1000; ++i) {
    for (auto& r : w.ranks) r->progress();
  }
  BOOST_TEST(!w.complete(0, s));
  Request* r = w.ranks[1]->irecv(w.world(1), &got, sizeof got, 0, 1);
  w.run_until([&] { return w.complete(0, s) && w.complete(1, r); });
  BOOST_TEST(got == 42);
}

BOOST_AUTO_TEST_CASE(probe_sees_a_message_without_taking_it_and_cancel_withdraws_a_receive) {
  World w(2, plain_config());
  int v = 7, got = 0, never = 0;
  Request* cancelled = w.ranks[1]->irecv(w.world(1), &never, sizeof never, 0, 99);
  Request* s = w.ranks[0]->isend(w.world(0), &v, sizeof v, 1, 4, SendMode::standard);
  Completion probed;
  w.run_until([&] { return w.ranks[1]->iprobe(w.world(1), kAnySource, 4, &probed); });
  BOOST_TEST(probed.source == 0);
  BOOST_TEST(probed.bytes == sizeof(int));
  BOOST_TEST(w.ranks[1]->iprobe(w.world(1), 0, 4, nullptr));  // still there
  w.ranks[1]->cancel(cancelled);
  Completion c;
  BOOST_REQUIRE(w.complete(1, cancelled, &c));
  BOOST_TEST(c.cancelled);
  Request* r = w.ranks[1]->irecv(w.world(1), &got, sizeof got, 0, 4);
  w.run_until([&] { return w.complete(1, r) && w.complete(0, s); });
  BOOST_TEST(got == 7);
  BOOST_TEST(!w.ranks[1]->iprobe(w.world(1), kAnySource, kAnyTag, nullptr));
}

BOOST_AUTO_TEST_CASE(forced_reliability_acknowledges_and_frees_every_frame) {
  // Nothing is lost here, so with a timer far longer than the test any retransmission would mean an
  // ACK that never came.
  EngineConfig config = plain_config();
  config.reliability = Reliability::force;
  config.retransmit_min = std::chrono::seconds(30);
  config.retransmit_max = std::chrono::seconds(30);
  config.ack_delay = std::chrono::microseconds(50);
  World w(2, config, path::LoopOptions{4096, true});
  exchange_and_verify(w, {0, 10, 5000, 200'000});
  w.run_until([&] { return w.ranks[0]->peer(1).retained.empty() && w.ranks[1]->peer(0).retained.empty(); });
  BOOST_TEST(w.ranks[0]->counters().retransmits == 0u);
  BOOST_TEST(w.ranks[1]->counters().acks_sent > 0u);
  BOOST_TEST(w.ranks[1]->peer(0).in.lids() == w.ranks[0]->peer(1).out.next_byte() - 1);
}

// A DATA frame's ACK fields free what they acknowledge at the start of the next progress round, not while
// the frame is handled: its message (and a reply to it) come first. Fields that acknowledge bytes never
// sent are refused as the frame arrives, and any other frame (here an ACK) finds the fields before it
// handled, with its own.
BOOST_AUTO_TEST_CASE(a_data_frames_ack_frees_at_the_next_round_and_a_forged_one_is_refused_at_once) {
  EngineConfig config = plain_config();
  config.reliability = Reliability::force;
  config.retransmit_min = std::chrono::seconds(30);  // nothing is resent: what is freed, an ACK freed
  config.retransmit_max = std::chrono::seconds(30);
  config.ack_delay = std::chrono::seconds(30);  // no ACK frame of its own: only the fields on the reply
  World w(2, config, path::LoopOptions{4096, true});
  const Peer& to = w.ranks[0]->peer(1);
  auto& sink = static_cast<path::FrameSink&>(*w.ranks[0]);
  const auto send_and_receive = [&](std::uint32_t from, int tag, std::size_t size) {
    const auto sent = pattern(size, static_cast<std::uint64_t>(tag));
    std::vector<std::byte> got(size);
    Request* r = w.ranks[1 - from]->irecv(w.world(1 - from), got.data(), got.size(), static_cast<int>(from), tag);
    Request* s = w.ranks[from]->isend(w.world(from), sent.data(), sent.size(), 1 - from, tag, SendMode::standard);
    w.run_until([&] { return w.complete(1 - from, r) && w.complete(from, s); });
    BOOST_TEST((got == sent));
    w.ranks[1 - from]->release(r);
    w.ranks[from]->release(s);
  };
  send_and_receive(0, 1, 10);
  BOOST_REQUIRE(to.retained.size() == 1u);  // kept until an ACK says it arrived

  // Rank 1's reply, its frame handed to rank 0 straight away: delivered, its ACK fields only heard.
  const auto pong = pattern(20, 2);
  std::vector<std::byte> got(20);
  Request* r = w.ranks[0]->irecv(w.world(0), got.data(), got.size(), 1, 2);
  Request* s = w.ranks[1]->isend(w.world(1), pong.data(), pong.size(), 0, 2, SendMode::standard);
  const RetainedFrame& reply = w.ranks[1]->peer(0).retained.back();
  const std::vector<std::byte> reply_frame(reply.bytes.data(), reply.bytes.data() + reply.frame_size());
  BOOST_REQUIRE(frag::decode(reply_frame, {kJobKey, 2, 0, 4096}).is_ok());
  sink.on_frame(reply_frame);
  BOOST_TEST(w.complete(0, r));
  BOOST_TEST((got == pong));
  BOOST_TEST(to.retained.size() == 1u);
  BOOST_TEST(to.ack_deferred);
  BOOST_TEST(to.heard_lirs == 10u);
  BOOST_TEST(to.acked_lirs == 0u);
  w.ranks[0]->progress();
  BOOST_TEST(to.retained.empty());
  BOOST_TEST(!to.ack_deferred);
  BOOST_TEST(to.acked_lirs == 10u);
  BOOST_TEST(to.acked_lids == 10u);
  w.ranks[0]->release(r);
  w.ranks[1]->release(s);

  // The same reply acknowledging 1000 bytes, of the 40 sent by then: refused as it arrives.
  send_and_receive(0, 3, 30);
  BOOST_REQUIRE(to.retained.size() == 1u);
  frag::FrameHeader h = frag::decode(reply_frame, {kJobKey, 2, 0, 4096}).value();
  h.lirs = h.lids = 1000;
  std::vector<std::byte> forged = reply_frame;
  frag::encode(h, std::span<std::byte, frag::kHeaderSize>(forged.data(), frag::kHeaderSize));
  const std::uint64_t malformed = w.ranks[0]->counters().dropped_malformed;
  sink.on_frame(forged);
  BOOST_TEST(w.ranks[0]->counters().dropped_malformed == malformed + 1);
  BOOST_TEST(!to.ack_deferred);
  BOOST_TEST(to.heard_lirs == 10u);
  w.ranks[0]->progress();
  BOOST_TEST(to.retained.size() == 1u);

  // The reply again, now acknowledging the second message too (heard, not handled), then an ACK frame
  // saying the same: it frees at once.
  h = frag::decode(reply_frame, {kJobKey, 2, 0, 4096}).value();
  h.lirs = w.ranks[1]->peer(0).in.lirs();
  h.lids = w.ranks[1]->peer(0).in.lids();
  BOOST_REQUIRE(h.lids == 40u);
  std::vector<std::byte> later = reply_frame;
  frag::encode(h, std::span<std::byte, frag::kHeaderSize>(later.data(), frag::kHeaderSize));
  sink.on_frame(later);  // a duplicate by its sequence numbers; its ACK fields are new
  BOOST_TEST(to.ack_deferred);
  BOOST_TEST(to.retained.size() == 1u);
  frag::FrameHeader ack;
  ack.type = frag::FrameType::ack;
  ack.flags = frag::kFlagAckValid;
  ack.job_key = kJobKey;
  ack.source = 1;
  ack.destination = 0;
  ack.lirs = h.lirs;
  ack.lids = h.lids;
  std::array<std::byte, frag::kHeaderSize> ack_frame{};
  frag::encode(ack, ack_frame);
  sink.on_frame(ack_frame);
  BOOST_TEST(w.ranks[0]->counters().dropped_malformed == malformed + 1);
  BOOST_TEST(!to.ack_deferred);
  BOOST_TEST(to.retained.empty());
  BOOST_TEST(to.acked_lids == 40u);
  BOOST_TEST(w.ranks[0]->counters().retransmits == 0u);
}

// On a reliable peer a whole eager message that a posted receive takes next in order is copied into
// that receive while its checksum is verified, and only a payload that verifies takes the receive: a
// corrupt copy that arrives first leaves the receive posted (and is NACKed), so the good one fills it.
BOOST_AUTO_TEST_CASE(a_corrupt_eager_frame_leaves_its_receive_to_the_good_copy) {
  EngineConfig config = plain_config();
  config.reliability = Reliability::force;
  config.retransmit_min = std::chrono::seconds(30);  // the good copy is the one already on its way
  config.retransmit_max = std::chrono::seconds(30);
  World w(2, config, path::LoopOptions{4096, true});
  for (const std::size_t size : {std::size_t{1}, std::size_t{1000}}) {
    const auto sent = pattern(size, 11);
    std::vector<std::byte> got(size + 16, std::byte{0x5a});
    Request* r = w.ranks[1]->irecv(w.world(1), got.data(), got.size(), 0, 4);
    Request* s = w.ranks[0]->isend(w.world(0), sent.data(), sent.size(), 1, 4, SendMode::standard);
    BOOST_REQUIRE(w.complete(0, s));  // eager: complete once handed to the path
    // The frame the sender keeps for resending, one payload bit changed.
    const RetainedFrame& kept = w.ranks[0]->peer(1).retained.back();
    std::vector<std::byte> bad(kept.bytes.data(), kept.bytes.data() + kept.frame_size());
    bad[frag::kHeaderSize + size / 2] ^= std::byte{0x10};
    const std::uint64_t bad_before = w.ranks[1]->counters().dropped_bad_payload;
    const std::uint64_t nacks_before = w.ranks[1]->counters().nacks_sent;
    static_cast<path::FrameSink&>(*w.ranks[1]).on_frame(bad);
    BOOST_TEST(w.ranks[1]->counters().dropped_bad_payload == bad_before + 1);
    BOOST_TEST(w.ranks[1]->counters().nacks_sent == nacks_before + 1);
    BOOST_TEST(!w.complete(1, r));
    Completion c;
    w.run_until([&] { return w.complete(1, r, &c); });
    BOOST_TEST(c.bytes == size);
    BOOST_TEST(c.tag == 4);
    BOOST_TEST(!c.truncated);
    BOOST_TEST((std::vector<std::byte>(got.begin(), got.begin() + static_cast<std::ptrdiff_t>(size)) == sent));
    BOOST_TEST((got[size] == std::byte{0x5a}));  // nothing beyond the message written
    w.ranks[0]->release(s);
    w.ranks[1]->release(r);
  }
  // Every frame acknowledged and freed, none resent: the good copies were taken as they came.
  w.run_until([&] { return w.ranks[0]->peer(1).retained.empty(); });
  BOOST_TEST(w.ranks[0]->counters().retransmits == 0u);
  BOOST_TEST(w.ranks[1]->peer(0).in.lids() == w.ranks[0]->peer(1).out.next_byte() - 1);
  BOOST_TEST(w.ranks[1]->counters().duplicates == 0u);
}

// A tracked stream after the CTS is kept for resending by reference to the send buffer: a header per
// frame, no copy of the payload; so its send completes only once the receiver has every frame (its ACK),
// where a stream of copies completes as soon as its frames are handed to the path. A frame the path lost
// is resent from the send buffer, and the receive gets every byte.
BOOST_AUTO_TEST_CASE(a_stream_kept_by_reference_completes_once_the_peer_has_every_frame) {
  for (const bool by_reference : {true, false}) {
    BOOST_TEST_CONTEXT((by_reference ? "by reference" : "copied")) {
      World w = resending_world(by_reference);
      const auto sent = pattern(200'000, 11);
      std::vector<std::byte> got(sent.size());
      Request* r = w.ranks[1]->irecv(w.world(1), got.data(), got.size(), 0, 5);
      Request* s = w.ranks[0]->isend(w.world(0), sent.data(), sent.size(), 1, 5, SendMode::standard);
      w.ranks[1]->progress();  // the RTS matches: CTS
      // Some of the stream's frames are lost (seeded: the same ones every run).
      w.faults[0]->set_specs({path::parse_fault_spec("drop=0.1,seed=7").value()});
      w.ranks[0]->progress();  // the CTS: the whole stream fits the window and goes out
      const Peer& to = w.ranks[0]->peer(1);
      std::size_t headers_only = 0, data_frames = 0;
      for (const RetainedFrame& f : to.retained) {
        if (f.bulk) ++data_frames;
        if (f.bulk && f.bytes.size() == frag::kHeaderSize && f.payload.size() > 0 && f.lender == s) ++headers_only;
      }
      BOOST_REQUIRE(data_frames > 40u);  // 200,000 bytes in frames of 4 KiB
      if (by_reference) {
        BOOST_TEST(headers_only == data_frames);
        // The stream's frames, and the first fragment its RTS carried.
        BOOST_TEST(w.ranks[0]->counters().frames_by_reference == data_frames + 1);
        BOOST_TEST(!w.complete(0, s));  // the receiver has not acknowledged a frame yet
      } else {
        BOOST_TEST(headers_only == 0u);
        BOOST_TEST(w.ranks[0]->counters().frames_by_reference == 0u);
        BOOST_TEST(w.complete(0, s));
      }
      w.run_until([&] { return w.complete(0, s) && w.complete(1, r); });
      BOOST_TEST(w.faults[0]->counters().dropped >= 1u);
      BOOST_TEST(w.ranks[0]->counters().retransmits >= 1u);
      BOOST_TEST((got == sent));
      w.ranks[0]->release(s);
      w.ranks[1]->release(r);
      w.run_until([&] { return w.ranks[0]->peer(1).retained.empty(); });
    }
  }
}

// A rendezvous's first fragment, carried by its RTS, is lent as its stream is: kept as a header, the
// payload read from the send buffer when resent, and the send not complete before the receiver has it.
// Here a synchronous send small enough for its RTS to carry all of it, the RTS lost once.
BOOST_AUTO_TEST_CASE(a_rendezvous_first_fragment_is_kept_by_reference) {
  for (const bool by_reference : {true, false}) {
    BOOST_TEST_CONTEXT((by_reference ? "by reference" : "copied")) {
      World w = resending_world(by_reference);
      const auto sent = pattern(3000, 13);
      std::vector<std::byte> got(sent.size());
      Request* r = w.ranks[1]->irecv(w.world(1), got.data(), got.size(), 0, 6);
      w.faults[0]->set_specs({path::parse_fault_spec("drop=1").value()});
      Request* s = w.ranks[0]->isend(w.world(0), sent.data(), sent.size(), 1, 6, SendMode::synchronous);
      w.faults[0]->set_specs({});
      BOOST_TEST(w.faults[0]->counters().dropped == 1u);
      const Peer& to = w.ranks[0]->peer(1);
      BOOST_REQUIRE(to.retained.size() == 1u);
      const RetainedFrame& rts = to.retained.front();
      if (by_reference) {
        BOOST_TEST(rts.lender == s);
        BOOST_TEST(rts.bytes.size() == frag::kHeaderSize);
        BOOST_TEST(rts.payload.size() == sent.size());
        BOOST_TEST((rts.payload.data() == reinterpret_cast<const std::byte*>(sent.data())));
        BOOST_TEST(w.ranks[0]->counters().frames_by_reference == 1u);
      } else {
        BOOST_TEST(rts.lender == nullptr);
        BOOST_TEST(rts.bytes.size() == frag::kHeaderSize + sent.size());
        BOOST_TEST(w.ranks[0]->counters().frames_by_reference == 0u);
      }
      w.run_until([&] { return w.complete(0, s) && w.complete(1, r); });
      BOOST_TEST(w.ranks[0]->counters().retransmits >= 1u);
      BOOST_TEST((got == sent));
      // Lent, the send completed only once its RTS arrived: nothing keeps its buffer any more.
      if (by_reference) BOOST_TEST(to.retained.empty());
      w.ranks[0]->release(s);
      w.ranks[1]->release(r);
      w.run_until([&] { return w.ranks[0]->peer(1).retained.empty(); });
    }
  }
}

// A send released before it completed (MPI_Request_free) stops lending its buffer: the program may free
// or reuse it once it learns by other means that the message arrived, while frames the sender does not
// know arrived may still be resent. Its frames kept by reference are copied at the release, so resends
// come from the copies: here the buffer is overwritten and freed right after the release, and the
// receive still gets every original byte (from the send buffer, they would fail their checksum for
// ever, or read freed memory).
BOOST_AUTO_TEST_CASE(a_send_released_before_it_completes_lends_its_buffer_no_longer) {
  World w = resending_world();
  auto sent = std::make_unique<std::vector<std::byte>>(pattern(200'000, 12));
  const std::vector<std::byte> original = *sent;
  std::vector<std::byte> got(original.size());
  Request* r = w.ranks[1]->irecv(w.world(1), got.data(), got.size(), 0, 6);
  Request* s = w.ranks[0]->isend(w.world(0), sent->data(), sent->size(), 1, 6, SendMode::standard);
  w.ranks[1]->progress();  // CTS
  w.faults[0]->set_specs({path::parse_fault_spec("drop=0.1,seed=7").value()});
  w.ranks[0]->progress();  // the stream, some of it lost
  BOOST_REQUIRE(w.ranks[0]->counters().frames_by_reference > 0u);
  BOOST_REQUIRE(!w.complete(0, s));
  w.ranks[0]->release(s);
  for (const RetainedFrame& f : w.ranks[0]->peer(1).retained) {
    BOOST_TEST(f.lender == nullptr);
    BOOST_TEST(f.payload.empty());
  }
  std::fill(sent->begin(), sent->end(), std::byte{0x5a});
  sent.reset();
  w.run_until([&] { return w.complete(1, r) && w.ranks[0]->peer(1).retained.empty(); });
  BOOST_TEST(w.faults[0]->counters().dropped >= 1u);
  BOOST_TEST((got == original));
  w.ranks[1]->release(r);
}

// Released while its RTS waits for a receive (no CTS yet), a send takes back the first fragment it lent,
// as it does its stream's frames (above): resends come from the copy. Here the RTS carries the whole
// message (a synchronous send under a frame), so nothing is read from the buffer after the release,
// which overwrites and frees it; the receive, posted later, still gets the original bytes.
BOOST_AUTO_TEST_CASE(a_send_released_before_its_cts_takes_back_its_rts) {
  World w = resending_world();
  auto sent = std::make_unique<std::vector<std::byte>>(pattern(3000, 14));
  const std::vector<std::byte> original = *sent;
  // The RTS is lost, so it is still kept when the send is released.
  w.faults[0]->set_specs({path::parse_fault_spec("drop=1").value()});
  Request* s = w.ranks[0]->isend(w.world(0), sent->data(), sent->size(), 1, 7, SendMode::synchronous);
  w.faults[0]->set_specs({});
  const Peer& to = w.ranks[0]->peer(1);
  BOOST_REQUIRE(to.retained.size() == 1u);
  BOOST_REQUIRE(to.retained.front().lender == s);
  w.ranks[0]->release(s);
  const RetainedFrame& rts = to.retained.front();
  BOOST_TEST(rts.lender == nullptr);
  BOOST_TEST(rts.payload.empty());
  BOOST_TEST(rts.bytes.size() == frag::kHeaderSize + original.size());  // copied into the kept frame
  std::fill(sent->begin(), sent->end(), std::byte{0x5a});
  sent.reset();
  std::vector<std::byte> got(original.size());
  Request* r = w.ranks[1]->irecv(w.world(1), got.data(), got.size(), 0, 7);
  w.run_until([&] { return w.complete(1, r) && w.ranks[0]->peer(1).retained.empty(); });
  BOOST_TEST(w.ranks[0]->counters().retransmits >= 1u);
  BOOST_TEST((got == original));
  w.ranks[1]->release(r);
}

// A tracked eager frame on a path that gathers leaves from the send buffer, and its payload is copied into
// the frame kept for resending once the path has it (engine.retain.after_send); a payload under 1 KiB is
// copied first, as every frame is with the option off. Either way the send completes at once, and the
// resend of a lost frame carries the bytes the buffer held at the send, though the program has reused it.
BOOST_AUTO_TEST_CASE(an_eager_frame_sent_from_the_send_buffer_is_resent_from_its_copy) {
  for (const bool after_send : {true, false}) {
    BOOST_TEST_CONTEXT((after_send ? "copied after the send" : "copied before it")) {
      EngineConfig config = plain_config();
      config.reliability = Reliability::force;
      config.retain_after_send = after_send;
      config.retransmit_min = std::chrono::milliseconds(1);  // the resends, by timer
      path::LoopOptions options{8192, true};
      options.gathers = true;
      World w(2, config, options, {}, /*fault_layer=*/true);
      std::vector<std::byte> large = pattern(4000, 13), small = pattern(100, 14);
      const std::vector<std::byte> large_sent = large, small_sent = small;
      w.faults[0]->set_specs({path::parse_fault_spec("drop=1").value()});  // every frame rank 0 sends is lost
      Request* s1 = w.ranks[0]->isend(w.world(0), large.data(), large.size(), 1, 7, SendMode::standard);
      Request* s2 = w.ranks[0]->isend(w.world(0), small.data(), small.size(), 1, 7, SendMode::standard);
      BOOST_TEST(w.complete(0, s1));  // eager: complete once handed to the path
      BOOST_TEST(w.complete(0, s2));
      BOOST_TEST(w.ranks[0]->counters().frames_copied_after_send == (after_send ? 1u : 0u));
      for (const RetainedFrame& f : w.ranks[0]->peer(1).retained) {
        BOOST_TEST(f.payload.empty());  // kept whole, nothing lent
        BOOST_TEST(f.lender == nullptr);
      }
      std::fill(large.begin(), large.end(), std::byte{0x5a});  // the program reuses its buffers
      std::fill(small.begin(), small.end(), std::byte{0x5a});
      w.faults[0]->set_specs({});
      std::vector<std::byte> large_got(large.size()), small_got(small.size());
      Request* r1 = w.ranks[1]->irecv(w.world(1), large_got.data(), large_got.size(), 0, 7);
      Request* r2 = w.ranks[1]->irecv(w.world(1), small_got.data(), small_got.size(), 0, 7);
      w.run_until([&] { return w.complete(1, r1) && w.complete(1, r2) && w.ranks[0]->peer(1).retained.empty(); });
      BOOST_TEST(w.faults[0]->counters().dropped >= 2u);
      BOOST_TEST(w.ranks[0]->counters().retransmits >= 2u);
      BOOST_TEST((large_got == large_sent));
      BOOST_TEST((small_got == small_sent));
      for (Request* q : {s1, s2}) w.ranks[0]->release(q);
      for (Request* q : {r1, r2}) w.ranks[1]->release(q);
    }
  }
}

// A receiver that posts nothing holds at most its grant of a peer's messages: past it, sends that would go
// eagerly go by rendezvous with nothing in the RTS, and wait for their match. Once the receives are
// posted, every message arrives intact and the credit comes back (the next eager send goes eagerly).
BOOST_AUTO_TEST_CASE(eager_sends_past_the_receivers_credit_wait_for_their_match) {
  constexpr std::size_t kMessages = 64, kBytes = 4096, kCredit = 64 * 1024;
  for (const bool tracked : {false, true}) {
    BOOST_TEST_CONTEXT((tracked ? "unreliable path, frames tracked" : "reliable path")) {
      EngineConfig config = plain_config();
      config.eager_credit = kCredit;
      World w(2, config, path::LoopOptions{8192, !tracked});
      std::vector<std::vector<std::byte>> sent, got;
      std::vector<Request*> sends, recvs;
      for (std::size_t i = 0; i < kMessages; ++i) {
        sent.push_back(pattern(kBytes, i + 1));
        got.emplace_back(kBytes);
        sends.push_back(w.ranks[0]->isend(w.world(0), sent[i].data(), kBytes, 1, 3, SendMode::standard));
      }
      // Rounds, not time: the loop path delivers every frame it was given within a few.
      for (int round = 0; round < 1000; ++round) {
        for (auto& r : w.ranks) r->progress();
      }
      const std::size_t eager = kCredit / EagerCredit::eager_cost(kBytes);  // each costs its record too
      std::size_t complete = 0;
      for (Request* q : sends) complete += w.complete(0, q) ? 1 : 0;
      BOOST_TEST(complete == eager);  // the eager ones; the rest wait for a receive
      BOOST_TEST(w.ranks[0]->counters().credit_rendezvous == kMessages - eager);
      BOOST_TEST(w.ranks[1]->counters().credits_sent == 0u);
      if (tracked) {
        // The sender holds no copy of what the receiver has, only the records until it is delivered.
        for (const RetainedFrame& f : w.ranks[0]->peer(1).retained) BOOST_TEST(f.bytes.size() == 0u);
      }
      for (std::size_t i = 0; i < kMessages; ++i) {
        recvs.push_back(w.ranks[1]->irecv(w.world(1), got[i].data(), kBytes, 0, 3));
      }
      w.run_until([&] {
        return std::all_of(sends.begin(), sends.end(), [&](Request* q) { return w.complete(0, q); }) &&
               std::all_of(recvs.begin(), recvs.end(), [&](Request* q) { return w.complete(1, q); });
      });
      for (std::size_t i = 0; i < kMessages; ++i) BOOST_TEST((got[i] == sent[i]), "message " << i);
      BOOST_TEST(w.ranks[1]->counters().credits_sent >= 1u);
      for (Request* q : sends) w.ranks[0]->release(q);
      for (Request* q : recvs) w.ranks[1]->release(q);
      // The credit came back: an eager send completes at once again.
      const std::uint64_t rendezvous_before = w.ranks[0]->counters().credit_rendezvous;
      Request* again = w.ranks[0]->isend(w.world(0), sent[0].data(), kBytes, 1, 4, SendMode::standard);
      BOOST_TEST(w.complete(0, again));
      BOOST_TEST(w.ranks[0]->counters().credit_rendezvous == rendezvous_before);
      w.ranks[0]->release(again);
    }
  }
}

// Empty messages cost their records: a flood of them is bounded by the credit too (they used to cost
// nothing, so any number of them could pile up unreceived).
BOOST_AUTO_TEST_CASE(empty_eager_messages_count_against_the_credit_too) {
  EngineConfig config = plain_config();
  config.eager_credit = 64 * 1024;
  World w(2, config);
  std::vector<Request*> sends;
  for (int i = 0; i < 1000; ++i) sends.push_back(w.ranks[0]->isend(w.world(0), nullptr, 0, 1, 3, SendMode::standard));
  const std::size_t eager = config.eager_credit / EagerCredit::eager_cost(0);
  BOOST_TEST(w.ranks[0]->counters().credit_rendezvous == 1000 - eager);
  std::vector<Request*> recvs;
  for (int i = 0; i < 1000; ++i) recvs.push_back(w.ranks[1]->irecv(w.world(1), nullptr, 0, 0, 3));
  w.run_until([&] {
    return std::all_of(sends.begin(), sends.end(), [&](Request* q) { return w.complete(0, q); }) &&
           std::all_of(recvs.begin(), recvs.end(), [&](Request* q) { return w.complete(1, q); });
  });
  for (Request* q : sends) w.ranks[0]->release(q);
  for (Request* q : recvs) w.ranks[1]->release(q);
}

BOOST_AUTO_TEST_CASE(a_corrupt_recut_frame_over_bytes_already_received_writes_none_of_them) {
  // After a failover the sender cuts unacknowledged bytes again, so one frame may cover bytes the receiver
  // has and bytes it has not. A corrupt one must write nothing: the bytes already received (and
  // acknowledged) will never be sent again.
  EngineConfig config = plain_config();
  config.reliability = Reliability::force;
  config.retransmit_min = std::chrono::seconds(30);  // no resend by timer while the test looks
  config.retransmit_max = std::chrono::seconds(30);
  World w(2, config, path::LoopOptions{1024, true});
  const auto sent = pattern(300'000, 5);
  std::vector<std::byte> got(sent.size());
  Request* r = w.ranks[1]->irecv(w.world(1), got.data(), got.size(), 0, 9);
  Request* s = w.ranks[0]->isend(w.world(0), sent.data(), sent.size(), 1, 9, SendMode::standard);
  // RTS, CTS, a window of DATA frames, and one poll's worth of them at the receiver.
  w.ranks[1]->progress();
  w.ranks[0]->progress();
  w.ranks[1]->progress();
  BOOST_REQUIRE(!w.complete(1, r));
  // The last DATA frame the receiver has, with the sequence number after it not received yet.
  const seq::RangeList& received = w.ranks[1]->peer(0).in.received();
  const frag::DecodeLimits limits{kJobKey, 2, 1, 1024 - frag::kHeaderSize, true};
  std::optional<frag::FrameHeader> last;
  for (const RetainedFrame& f : w.ranks[0]->peer(1).retained) {
    auto h = frag::decode(f.bytes, f.frame_size(), limits);  // whole, or a header kept by reference
    BOOST_REQUIRE(h.is_ok());
    if (h->type != frag::FrameType::data || h->receiver_request == 0) continue;
    const auto has = received.coverage(f.range.first, f.range.last);
    const auto next = received.coverage(f.range.last + 1, f.range.last + 1);
    if (has && *has == seq::Coverage::full && next && *next == seq::Coverage::none) last = *h;
  }
  BOOST_REQUIRE_MESSAGE(last.has_value(), "no DATA frame received with the next one still missing");
  // Its last 50 bytes and the 50 after them (a frame no larger than the path takes), with one byte of the
  // part already received flipped.
  frag::FrameHeader h = *last;
  const std::uint32_t half = 50;
  BOOST_REQUIRE(h.payload_length > half);
  const std::uint32_t skip = h.payload_length - half;
  h.fragment_offset += skip;
  h.seq_first += skip;
  h.seq_count = 2 * half;
  h.payload_length = 2 * half;
  BOOST_REQUIRE(h.fragment_offset + h.payload_length <= sent.size());
  std::vector<std::byte> frame(frag::kHeaderSize + h.payload_length);
  std::memcpy(frame.data() + frag::kHeaderSize, sent.data() + h.fragment_offset, h.payload_length);
  h.payload_checksum = frag::checksum(h.checksum_kind, frame.data() + frag::kHeaderSize, h.payload_length);
  frag::encode(h, std::span<std::byte, frag::kHeaderSize>(frame.data(), frag::kHeaderSize), true);
  frame[frag::kHeaderSize + 3] ^= std::byte{0x40};
  const auto before = std::vector<std::byte>(got.begin() + static_cast<std::ptrdiff_t>(h.fragment_offset),
                                             got.begin() + static_cast<std::ptrdiff_t>(h.fragment_offset + 4));
  const std::uint64_t bad_before = w.ranks[1]->counters().dropped_bad_payload;
  static_cast<path::FrameSink&>(*w.ranks[1]).on_frame(frame);
  BOOST_TEST(w.ranks[1]->counters().dropped_bad_payload == bad_before + 1);
  BOOST_TEST((std::vector<std::byte>(got.begin() + static_cast<std::ptrdiff_t>(h.fragment_offset),
                                     got.begin() + static_cast<std::ptrdiff_t>(h.fragment_offset + 4)) == before));
  // And the message still completes intact.
  w.run_until([&] { return w.complete(0, s) && w.complete(1, r); });
  BOOST_TEST((got == sent));
  w.ranks[0]->release(s);
  w.ranks[1]->release(r);
}

BOOST_AUTO_TEST_CASE(frames_with_a_wrong_job_key_or_forged_cookie_are_counted_and_dropped) {
  World w(2, plain_config());
  frag::FrameHeader h;
  h.type = frag::FrameType::cts;
  h.job_key = kJobKey ^ 1;
  h.source = 0;
  h.destination = 1;
  h.message_seq = 1;
  h.seq_first = 1;
  h.seq_count = 1;
  h.sender_request = 0x0000000100000000ULL;  // no such request
  h.receiver_request = 1;
  std::array<std::byte, frag::kHeaderSize> frame{};
  frag::encode(h, frame);
  auto& sink = static_cast<path::FrameSink&>(*w.ranks[1]);
  sink.on_frame(frame);
  BOOST_TEST(w.ranks[1]->counters().dropped_wrong_job == 1u);
  h.job_key = kJobKey;
  frag::encode(h, frame);
  sink.on_frame(frame);
  BOOST_TEST(w.ranks[1]->counters().dropped_malformed == 1u);
  frame[20] ^= std::byte{1};  // breaks the header checksum
  sink.on_frame(frame);
  BOOST_TEST(w.ranks[1]->counters().dropped_malformed == 2u);
  exchange_and_verify(w, {8});  // and the engine still works
}

// A single-copy RTS makes the receiver read {pid, address} of another process into its buffer: only the
// peer's own route that reads memory may carry one, naming the pid the peer registered.
BOOST_AUTO_TEST_CASE(a_single_copy_request_is_honoured_only_over_the_peers_memory_route_naming_its_pid) {
  EngineConfig config = plain_config();
  config.single_copy_min = 4096;
  const auto me = static_cast<std::int64_t>(::getpid());
  const std::vector<std::byte> secret = pattern(8192, 99);  // what a forged request would steal
  auto forged_rts = [&](std::int64_t pid) {
    frag::FrameHeader h;
    h.type = frag::FrameType::rts;
    h.flags = frag::kFlagSingleCopy | frag::kFlagFirstFragment;
    h.job_key = kJobKey;
    h.source = 0;
    h.destination = 1;
    h.tag = 7;
    h.message_seq = 1;
    h.message_length = secret.size();
    h.sender_request = 0x0000000100000001ULL;
    h.payload_length = 16;
    h.seq_first = 1;
    h.seq_count = 16;
    std::vector<std::byte> frame(frag::kHeaderSize + 16);
    const auto address = reinterpret_cast<std::uint64_t>(secret.data());
    for (int i = 0; i < 8; ++i) {
      frame[frag::kHeaderSize + static_cast<std::size_t>(i)] =
          static_cast<std::byte>(static_cast<std::uint64_t>(pid) >> (8 * i));
      frame[frag::kHeaderSize + 8 + static_cast<std::size_t>(i)] = static_cast<std::byte>(address >> (8 * i));
    }
    frag::encode(h, std::span<std::byte, frag::kHeaderSize>(frame.data(), frag::kHeaderSize));
    return frame;
  };
  for (const bool reads_memory : {true, false}) {
    BOOST_TEST_CONTEXT((reads_memory ? "a path that reads memory" : "a path that does not")) {
      path::LoopOptions options;
      options.single_copy_read = reads_memory;
      World w(2, config, options);
      for (std::uint32_t r = 0; r < 2; ++r) w.ranks[r]->set_peer_pid(1 - r, me);
      std::vector<std::byte> got(secret.size());
      Request* recv = w.ranks[1]->irecv(w.world(1), got.data(), got.size(), 0, 7);
      auto& sink = static_cast<path::FrameSink&>(*w.ranks[1]);
      // Another pid: refused, counted, nothing read; the receive still waits.
      sink.on_frame(forged_rts(me + 1));
      BOOST_TEST(w.ranks[1]->counters().refused_single_copy == 1u);
      if (!reads_memory) {
        // The right pid over a path that cannot read memory (a datagram, in real life): refused too.
        sink.on_frame(forged_rts(me));
        BOOST_TEST(w.ranks[1]->counters().refused_single_copy == 2u);
      }
      for (int i = 0; i < 1000; ++i) w.ranks[1]->progress();
      BOOST_TEST(!w.complete(1, recv));
      BOOST_TEST(w.peer_memory_reads == 0);
      BOOST_TEST((got != secret));
      w.ranks[1]->cancel(recv);
      w.ranks[1]->release(recv);
      // Real traffic still flows, by single copy where the path reads memory.
      exchange_and_verify(w, {100'000, 10});
      BOOST_TEST(w.peer_memory_reads == (reads_memory ? 1 : 0));
      BOOST_TEST(w.ranks[1]->counters().refused_single_copy == (reads_memory ? 1u : 2u));
    }
  }
}

// Reading the sender's memory can fail where the path promised it (ptrace rules, a pid namespace): the
// message is then piped through the path instead, intact. It used to end the job.
BOOST_AUTO_TEST_CASE(a_single_copy_that_cannot_read_the_senders_memory_is_piped_instead) {
  EngineConfig config = plain_config();
  config.split_copy_min = 0;  // one read per message (split copies: a_split_copy_half_that_cannot_be_moved...)
  SingleCopyWorld w(config);
  w.peer_memory_unreadable = true;
  exchange_and_verify(w, {100'000, 300'000, 10});
  BOOST_TEST(w.peer_memory_reads == 2);
  BOOST_TEST(w.ranks[1]->counters().single_copy_fallbacks == 2u);
  w.peer_memory_unreadable = false;
  exchange_and_verify(w, {100'000});
  BOOST_TEST(w.ranks[1]->counters().single_copy_fallbacks == 2u);
}

// A window of single copies whose RTSes arrive in one poll: read in one system call per MiB at the poll's
// end (engine.shm.gather_max), each message intact in its own receive, each send completed by its FIN.
BOOST_AUTO_TEST_CASE(single_copies_that_arrive_together_are_read_in_one_call_per_mib) {
  EngineConfig config = plain_config();
  config.split_copy_min = 0;
  config.gather_max = 128 * 1024;
  SingleCopyWorld w(config);
  // 20 of 64 KiB and one of 100,000 bytes: 16 in the first MiB, the other 5 in a second call. The one above
  // gather_max and the eager one are read or delivered on their own.
  std::vector<std::size_t> sizes(20, 65536);
  sizes.push_back(100'000);
  sizes.push_back(200'000);
  sizes.push_back(10);
  exchange_and_verify(w, sizes);
  BOOST_TEST(w.peer_memory_gathers == 2);
  BOOST_TEST(w.ranks[1]->counters().single_copies_gathered == 21u);
  BOOST_TEST(w.peer_memory_reads == 1);  // 200,000 bytes
  BOOST_TEST(w.ranks[1]->counters().single_copy_fallbacks == 0u);

  // 0: every message read alone, as before.
  config.gather_max = 0;
  SingleCopyWorld alone(config);
  exchange_and_verify(alone, sizes);
  BOOST_TEST(alone.peer_memory_gathers == 0);
  BOOST_TEST(alone.peer_memory_reads == 22);
  BOOST_TEST(alone.ranks[1]->counters().single_copies_gathered == 0u);

  // Those the split copy may take are left to it: never gathered.
  config.gather_max = 128 * 1024;
  config.split_copy_min = 100'000;
  SingleCopyWorld splitting(config);
  exchange_and_verify(splitting, {65536, 65536, 65536, 100'000, 120'000});
  BOOST_TEST(splitting.ranks[1]->counters().single_copies_gathered == 3u);
  BOOST_TEST(splitting.ranks[1]->counters().split_copies == 2u);
  BOOST_TEST(splitting.peer_memory_gathers == 1);

  // A receive smaller than its message, among gathered ones: what fits is read, the rest truncated.
  SingleCopyWorld truncating(config);
  const std::vector<std::byte> whole = pattern(90'000, 3), other = pattern(90'000, 4);
  std::vector<std::byte> short_buffer(50'000), full_buffer(90'000);
  Request* short_recv = truncating.ranks[1]->irecv(truncating.world(1), short_buffer.data(), short_buffer.size(), 0, 5);
  Request* full_recv = truncating.ranks[1]->irecv(truncating.world(1), full_buffer.data(), full_buffer.size(), 0, 6);
  Request* send_a = truncating.ranks[0]->isend(truncating.world(0), whole.data(), whole.size(), 1, 5, SendMode::standard);
  Request* send_b = truncating.ranks[0]->isend(truncating.world(0), other.data(), other.size(), 1, 6, SendMode::standard);
  Completion short_c, full_c;
  truncating.run_until([&] {
    return truncating.complete(0, send_a) && truncating.complete(0, send_b) &&
           truncating.complete(1, short_recv, &short_c) && truncating.complete(1, full_recv, &full_c);
  });
  BOOST_TEST(short_c.truncated);
  BOOST_TEST(!full_c.truncated);
  BOOST_TEST((std::equal(short_buffer.begin(), short_buffer.end(), whole.begin())));
  BOOST_TEST((full_buffer == other));
  BOOST_TEST(truncating.ranks[1]->counters().single_copies_gathered == 2u);
  for (Request* q : {send_a, send_b}) truncating.ranks[0]->release(q);
  for (Request* q : {short_recv, full_recv}) truncating.ranks[1]->release(q);
}

// A gathering read that stops short (the kernel stops at a block it cannot copy): the messages it read
// whole complete; the rest are read one by one, which reports why, and those that still fail are piped.
// Every byte arrives either way.
BOOST_AUTO_TEST_CASE(a_gathering_read_that_stops_short_leaves_the_rest_to_single_reads) {
  EngineConfig config = plain_config();
  config.split_copy_min = 0;
  config.gather_max = 128 * 1024;
  SingleCopyWorld w(config);
  w.peer_memory_gather_limit = 2 * 65536 + 1000;  // two whole messages and part of the third
  exchange_and_verify(w, std::vector<std::size_t>(6, 65536));
  BOOST_TEST(w.peer_memory_gathers == 1);
  BOOST_TEST(w.ranks[1]->counters().single_copies_gathered == 2u);
  BOOST_TEST(w.peer_memory_reads == 4);
  BOOST_TEST(w.ranks[1]->counters().single_copy_fallbacks == 0u);

  // Nothing readable at all: the gathering call fails, each single read fails, each message is piped.
  SingleCopyWorld unreadable(config);
  unreadable.peer_memory_unreadable = true;
  exchange_and_verify(unreadable, std::vector<std::size_t>(3, 65536));
  BOOST_TEST(unreadable.peer_memory_gathers == 1);
  BOOST_TEST(unreadable.peer_memory_reads == 3);
  BOOST_TEST(unreadable.ranks[1]->counters().single_copies_gathered == 0u);
  BOOST_TEST(unreadable.ranks[1]->counters().single_copy_fallbacks == 3u);
}

// Single copy only up to engine.shm.single_copy_max: a larger message is piped, intact.
BOOST_AUTO_TEST_CASE(messages_above_the_single_copy_max_are_piped) {
  EngineConfig config = plain_config();
  config.single_copy_max = 200'000;
  SingleCopyWorld w(config);
  exchange_and_verify(w, {100'000, 200'000, 200'001, 300'000, 10});
  BOOST_TEST(w.peer_memory_reads == 2);  // 100,000 and 200,000 bytes
  config.single_copy_max = 0;  // no limit
  SingleCopyWorld unlimited(config);
  exchange_and_verify(unlimited, {100'000, 300'000});
  BOOST_TEST(unlimited.peer_memory_reads == 2);
}

// A split copy: from engine.shm.split_copy_min on, the receiver reads the first half while the sender
// writes the second into the receive buffer; each byte still moves once.
BOOST_AUTO_TEST_CASE(single_copies_from_the_split_copy_min_are_moved_by_both_processes) {
  EngineConfig config = plain_config();
  config.split_copy_min = 200'000;
  SingleCopyWorld w(config);
  exchange_and_verify(w, {100'000, 199'999, 200'000, 300'001, 10});
  BOOST_TEST(w.ranks[1]->counters().split_copies == 2u);  // 200,000 and 300,001 bytes
  BOOST_TEST(w.peer_memory_reads == 4);                   // two whole, two halves
  BOOST_TEST(w.peer_memory_writes == 2);
  BOOST_TEST(w.ranks[1]->counters().split_copy_rereads == 0u);
  BOOST_TEST(w.ranks[1]->counters().single_copy_fallbacks == 0u);
  // A receive smaller than the message is not split (the sender would write past its end): truncated.
  const std::vector<std::byte> sent = pattern(400'000, 5);
  std::vector<std::byte> got(300'000);
  Request* recv = w.ranks[1]->irecv(w.world(1), got.data(), got.size(), 0, 7);
  Request* send = w.ranks[0]->isend(w.world(0), sent.data(), sent.size(), 1, 7, SendMode::standard);
  Completion c;
  w.run_until([&] { return w.complete(0, send) && w.complete(1, recv, &c); });
  BOOST_TEST(c.truncated);
  BOOST_TEST((std::equal(got.begin(), got.end(), sent.begin())));
  BOOST_TEST(w.ranks[1]->counters().split_copies == 2u);
  w.ranks[0]->release(send);
  w.ranks[1]->release(recv);
  // 0: never split.
  config.split_copy_min = 0;
  SingleCopyWorld never(config);
  exchange_and_verify(never, {300'001});
  BOOST_TEST(never.ranks[1]->counters().split_copies == 0u);
  BOOST_TEST(never.peer_memory_writes == 0);
}

// A split copy only while the sender waits in the library (its waiting word, shared memory's): a sender
// that computes between MPI_Isend and its wait would otherwise hold the receive up until its next call.
BOOST_AUTO_TEST_CASE(a_copy_is_split_only_while_the_sender_waits) {
  EngineConfig config = plain_config();
  config.split_copy_min = 100'000;
  path::LoopOptions options = SingleCopyWorld::reading_memory();
  options.shares_waiting = true;
  World w(2, SingleCopyWorld::from_4k(config), options);
  for (std::uint32_t r = 0; r < 2; ++r) w.ranks[r]->set_peer_pid(1 - r, ::getpid());
  // run_until steps the ranks without progress_until: nobody waits. The receiver reads it all itself,
  // and completes without another round of the sender's.
  const std::vector<std::byte> sent = pattern(150'000, 8);
  std::vector<std::byte> got(sent.size());
  Request* send = w.ranks[0]->isend(w.world(0), sent.data(), sent.size(), 1, 7, SendMode::standard);
  Request* recv = w.ranks[1]->irecv(w.world(1), got.data(), got.size(), 0, 7);
  for (int i = 0; i < 1000 && !w.complete(1, recv); ++i) w.ranks[1]->progress();
  BOOST_TEST(w.complete(1, recv));
  BOOST_TEST((got == sent));
  BOOST_TEST(w.ranks[1]->counters().split_copies == 0u);
  w.run_until([&] { return w.complete(0, send); });
  w.ranks[0]->release(send);
  w.ranks[1]->release(recv);
  // The sender waits: split.
  w.ranks[0]->waiting(true);
  exchange_and_verify(w, {150'000});
  BOOST_TEST(w.ranks[1]->counters().split_copies == 1u);
  BOOST_TEST(w.peer_memory_writes == 1);
  // And stops waiting: read whole again.
  w.ranks[0]->waiting(false);
  exchange_and_verify(w, {150'000});
  BOOST_TEST(w.ranks[1]->counters().split_copies == 1u);
  BOOST_TEST(w.peer_memory_writes == 1);
}

// A half one side cannot move, the receiver reads; when it cannot read either, the message is piped.
BOOST_AUTO_TEST_CASE(a_split_copy_half_that_cannot_be_moved_is_read_or_piped) {
  EngineConfig config = plain_config();
  config.split_copy_min = 100'000;
  SingleCopyWorld w(config);
  // The sender cannot write: the receiver reads both halves.
  w.peer_memory_unwritable = true;
  exchange_and_verify(w, {100'000, 250'000});
  BOOST_TEST(w.peer_memory_writes == 2);
  BOOST_TEST(w.peer_memory_reads == 4);
  BOOST_TEST(w.ranks[1]->counters().split_copy_rereads == 2u);
  BOOST_TEST(w.ranks[1]->counters().single_copy_fallbacks == 0u);
  // Neither can move anything: piped whole, over the half the sender wrote before its FIN.
  w.peer_memory_unwritable = false;
  w.peer_memory_unreadable = true;
  exchange_and_verify(w, {150'000});
  BOOST_TEST(w.peer_memory_writes == 3);
  BOOST_TEST(w.ranks[1]->counters().split_copy_rereads == 3u);
  BOOST_TEST(w.ranks[1]->counters().single_copy_fallbacks == 1u);
  w.peer_memory_unwritable = true;
  exchange_and_verify(w, {150'000});
  BOOST_TEST(w.ranks[1]->counters().single_copy_fallbacks == 2u);
  // And the split copy works again once memory can be moved.
  w.peer_memory_unwritable = false;
  w.peer_memory_unreadable = false;
  exchange_and_verify(w, {150'000});
  BOOST_TEST(w.ranks[1]->counters().split_copies == 5u);
  BOOST_TEST(w.ranks[1]->counters().split_copy_rereads == 4u);
}

// A split-copy CTS makes the sender write into another process: only for a single copy it is waiting on,
// within the message; a FIN naming a split copy must name one. Forged ones are counted and dropped.
BOOST_AUTO_TEST_CASE(forged_split_copy_frames_write_nothing) {
  EngineConfig config = plain_config();
  config.split_copy_min = 100'000;
  SingleCopyWorld w(config);
  const std::vector<std::byte> sent = pattern(150'000, 3);
  Request* send = w.ranks[0]->isend(w.world(0), sent.data(), sent.size(), 1, 7, SendMode::standard);
  std::vector<std::byte> target(sent.size());
  auto forged = [&](frag::FrameType type, std::uint64_t sender_request, std::uint64_t offset) {
    frag::FrameHeader h;
    h.type = type;
    h.flags = frag::kFlagSingleCopy;
    h.job_key = kJobKey;
    h.source = type == frag::FrameType::cts ? 1 : 0;  // a CTS to the sender, a FIN to the receiver
    h.destination = 1 - h.source;
    h.message_seq = 1;
    h.seq_first = 1;
    h.seq_count = 1;
    h.sender_request = sender_request;
    h.receiver_request = 0x0000000100000000ULL;
    if (type == frag::FrameType::cts) {
      h.message_length = reinterpret_cast<std::uintptr_t>(target.data());
      h.fragment_offset = offset;
    }
    std::array<std::byte, frag::kHeaderSize> frame{};
    frag::encode(h, frame);
    return frame;
  };
  auto& sender = static_cast<path::FrameSink&>(*w.ranks[0]);
  const std::uint64_t cookie = (std::uint64_t{1} << 32) | 0;  // the send's: generation 1, slot 0
  sender.on_frame(forged(frag::FrameType::cts, cookie + 1, 4096));        // names no send
  sender.on_frame(forged(frag::FrameType::cts, cookie, sent.size()));     // beyond the message
  BOOST_TEST(w.ranks[0]->counters().dropped_malformed == 2u);
  BOOST_TEST(w.peer_memory_writes == 0);
  // A FIN naming a receive that is no split copy (rank 1 has none): dropped by the receiver.
  auto& receiver = static_cast<path::FrameSink&>(*w.ranks[1]);
  receiver.on_frame(forged(frag::FrameType::fin, cookie, 0));
  BOOST_TEST(w.ranks[1]->counters().dropped_malformed == 1u);
  BOOST_TEST((target == std::vector<std::byte>(sent.size())));
  // The real exchange still completes, split.
  std::vector<std::byte> got(sent.size());
  Request* recv = w.ranks[1]->irecv(w.world(1), got.data(), got.size(), 0, 7);
  w.run_until([&] { return w.complete(0, send) && w.complete(1, recv); });
  BOOST_TEST((got == sent));
  BOOST_TEST(w.peer_memory_writes == 1);
  BOOST_TEST(w.ranks[1]->counters().split_copies == 1u);
  w.ranks[0]->release(send);
  w.ranks[1]->release(recv);
}

// An adversary who can change frames in flight (not only inject them) need not know the key: a payload
// changed so that its checksum stays the same (two bytes swapped at the same place in their 32-bit words
// keep a sum32; CRC32C is linear too, only the arithmetic differs) passes
// the header MAC, which covers only the checksum. engine.integrity=mac makes the MAC cover the payload.
BOOST_AUTO_TEST_CASE(a_payload_changed_in_flight_under_an_intact_checksum_is_refused_only_with_the_payload_mac) {
  const frag::FrameKey key{std::byte{7}, std::byte{1}, std::byte{9}};
  for (const bool payload_mac : {false, true}) {
    BOOST_TEST_CONTEXT((payload_mac ? "engine.integrity=mac" : "engine.integrity=checksum")) {
      EngineConfig config = plain_config();
      config.checksum = frag::ChecksumKind::sum32;
      config.payload_mac = payload_mac;
      World w(2, config, path::LoopOptions{8192, false}, key);
      // The frame rank 0's engine would send for its first message, sealed as it would seal it.
      const std::vector<std::byte> message = pattern(100, 42);
      frag::FrameHeader h;
      h.type = frag::FrameType::data;
      h.flags = frag::kFlagFirstFragment | frag::kFlagLastFragment;
      h.checksum_kind = frag::ChecksumKind::sum32;
      h.job_key = kJobKey;
      h.source = 0;
      h.destination = 1;
      h.tag = 3;
      h.message_seq = 1;
      h.seq_first = 1;
      h.seq_count = 100;
      h.payload_length = 100;
      h.message_length = 100;
      h.payload_checksum = frag::checksum(frag::ChecksumKind::sum32, message.data(), message.size());
      std::vector<std::byte> frame(frag::kHeaderSize + message.size());
      std::memcpy(frame.data() + frag::kHeaderSize, message.data(), message.size());
      frag::encode(h, std::span<std::byte, frag::kHeaderSize>(frame.data(), frag::kHeaderSize), !payload_mac, key);
      if (payload_mac) frag::seal_frame(frame, frag::derive_payload_key(key));
      // In flight: two payload bytes swapped (each third of its word). The sum is the same, the header untouched.
      std::swap(frame[frag::kHeaderSize + 10], frame[frag::kHeaderSize + 62]);
      BOOST_REQUIRE(frame[frag::kHeaderSize + 10] != frame[frag::kHeaderSize + 62]);
      std::vector<std::byte> got(message.size());
      Request* r = w.ranks[1]->irecv(w.world(1), got.data(), got.size(), 0, 3);
      static_cast<path::FrameSink&>(*w.ranks[1]).on_frame(frame);
      for (int i = 0; i < 100; ++i) w.ranks[1]->progress();
      if (!payload_mac) {
        // The hole: delivered, wrong, and nobody knows.
        BOOST_TEST(w.complete(1, r));
        BOOST_TEST((got != message));
        BOOST_TEST(w.ranks[1]->counters().dropped_malformed == 0u);
      } else {
        BOOST_TEST(!w.complete(1, r));
        BOOST_TEST(w.ranks[1]->counters().dropped_malformed == 1u);
        // The real messages still arrive, sealed the same way.
        w.ranks[1]->cancel(r);
        exchange_and_verify(w, {0, 100, 20'000, 300'000});
      }
      w.ranks[1]->release(r);
    }
  }
}

// Every rail to a peer goes silent for good: once engine.peer.timeout has passed, every operation that
// needs that peer completes as failed, naming it (the MPI layer raises MPIX_ERR_PROC_FAILED through the
// communicator's error handler); later ones fail at once; the job itself goes on. It used to abort.
BOOST_AUTO_TEST_CASE(a_peer_whose_every_rail_fails_is_lost_and_its_operations_fail) {
  EngineConfig config = plain_config();
  config.retransmit_min = std::chrono::milliseconds(1);
  config.retransmit_max = std::chrono::milliseconds(20);
  config.rail_down_after = std::chrono::milliseconds(20);
  config.peer_timeout = std::chrono::milliseconds(200);
  World w(3, config, path::LoopOptions{8192, false}, {}, /*fault_layer=*/true);
  exchange_and_verify(w, {10, 100'000});
  // Rank 1 disappears from the network (both directions) while each side has an operation with the other.
  const auto blackhole = path::parse_fault_spec("blackhole").value();
  w.faults[0]->set_specs({blackhole});
  w.faults[1]->set_specs({blackhole});
  std::vector<std::byte> big = pattern(200'000, 1), into(200'000), small(64);
  Request* send01 = w.ranks[0]->isend(w.world(0), big.data(), big.size(), 1, 5, SendMode::standard);
  Request* recv01 = w.ranks[0]->irecv(w.world(0), into.data(), into.size(), 1, 6);
  Request* send10 = w.ranks[1]->isend(w.world(1), big.data(), big.size(), 0, 6, SendMode::synchronous);
  w.run_until([&] { return w.complete(0, send01) && w.complete(0, recv01) && w.complete(1, send10); }, 100'000'000);
  Completion c;
  BOOST_TEST_REQUIRE(w.complete(0, send01, &c));
  BOOST_TEST(c.lost_peer == 1);
  BOOST_TEST_REQUIRE(w.complete(0, recv01, &c));
  BOOST_TEST(c.lost_peer == 1);
  BOOST_TEST(c.source == 1);
  BOOST_TEST_REQUIRE(w.complete(1, send10, &c));
  BOOST_TEST(c.lost_peer == 0);
  BOOST_TEST(w.ranks[0]->counters().peers_lost == 1u);
  BOOST_TEST(w.ranks[0]->lost_reason(1).find("no rail left to rank 1") != std::string::npos);
  BOOST_TEST(w.ranks[0]->lost_reason(2).empty());
  // Later operations with the lost peer fail at once, even with the network back; the others work.
  w.faults[0]->set_specs({});
  w.faults[1]->set_specs({});
  Request* again = w.ranks[0]->isend(w.world(0), small.data(), small.size(), 1, 7, SendMode::standard);
  BOOST_TEST_REQUIRE(w.complete(0, again, &c));
  BOOST_TEST(c.lost_peer == 1);
  BOOST_TEST(!w.ranks[0]->send_eager(w.world(0), small.data(), small.size(), 1, 7, SendMode::standard));
  Request* from1 = w.ranks[0]->irecv(w.world(0), into.data(), into.size(), 1, 8);
  BOOST_TEST_REQUIRE(w.complete(0, from1, &c));
  BOOST_TEST(c.lost_peer == 1);
  std::vector<std::byte> got(small.size());
  Request* to2 = w.ranks[0]->isend(w.world(0), small.data(), small.size(), 2, 9, SendMode::synchronous);
  Request* at2 = w.ranks[2]->irecv(w.world(2), got.data(), got.size(), 0, 9);
  w.run_until([&] { return w.complete(0, to2, &c) && w.complete(2, at2); });
  BOOST_TEST(c.lost_peer == -1);
  BOOST_TEST((got == small));
  for (Request* q : {send01, recv01, again, from1, to2}) w.ranks[0]->release(q);
  w.ranks[1]->release(send10);
  w.ranks[2]->release(at2);
}

// A forger on the network knows the job key (it travels in clear) and the protocol, not the job's secret:
// its frames, however well made, are dropped and counted, and nothing of them reaches the application.
BOOST_AUTO_TEST_CASE(frames_forged_without_the_jobs_secret_are_counted_and_dropped) {
  path::LoopOptions network;
  network.reliable = false;  // a network path: headers are authenticated
  const frag::FrameKey key = frag::derive_frame_key(std::vector<std::uint8_t>(32, 0x5a));
  World w(2, plain_config(), network, key);
  std::vector<std::byte> got(64);
  Request* recv = w.ranks[1]->irecv(w.world(1), got.data(), got.size(), 0, 7);
  const std::vector<std::byte> forged_payload(64, std::byte{0x66});
  auto& sink = static_cast<path::FrameSink&>(*w.ranks[1]);
  for (std::uint64_t i = 0; i < 100; ++i) {
    frag::FrameHeader h;
    h.type = frag::FrameType::data;
    h.flags = frag::kFlagFirstFragment | frag::kFlagLastFragment | frag::kFlagAckValid;
    h.checksum_kind = frag::ChecksumKind::crc32c;
    h.job_key = kJobKey;
    h.source = 0;
    h.destination = 1;
    h.tag = 7;
    h.message_seq = 1 + i;
    h.seq_first = 1 + 64 * i;
    h.seq_count = 64;
    h.message_length = 64;
    h.payload_length = 64;
    h.payload_checksum = frag::checksum(frag::ChecksumKind::crc32c, forged_payload.data(), forged_payload.size());
    std::vector<std::byte> frame(frag::kHeaderSize + 64);
    // Sealed as well as it can be: with a key of its own (here the default one).
    frag::encode(h, std::span<std::byte, frag::kHeaderSize>(frame.data(), frag::kHeaderSize));
    std::copy(forged_payload.begin(), forged_payload.end(), frame.begin() + frag::kHeaderSize);
    sink.on_frame(frame);
  }
  BOOST_TEST(w.ranks[1]->counters().dropped_malformed == 100u);
  for (int i = 0; i < 100; ++i) w.ranks[1]->progress();
  BOOST_TEST(!w.complete(1, recv));
  w.ranks[1]->cancel(recv);
  w.ranks[1]->release(recv);
  exchange_and_verify(w, {64, 100'000});  // the real messages are delivered, none refused as duplicates
  BOOST_TEST(w.ranks[1]->counters().duplicates == 0u);
}

// A NACK storm (someone replaying or forging NACKs, or a receiver gone wrong) amplifies nothing: a frame is
// resent for a NACK only once it had half a round trip to arrive; a NACK for bytes never sent is forged.
BOOST_AUTO_TEST_CASE(a_nack_storm_resends_no_frame_sent_less_than_half_a_round_trip_ago) {
  path::LoopOptions network;
  network.reliable = false;
  EngineConfig config = plain_config();
  config.retransmit_min = config.retransmit_max = std::chrono::seconds(30);  // no timer fires in this test
  World w(2, config, network);
  const std::vector<std::byte> message = pattern(200'000, 5);
  Request* send = w.ranks[0]->isend(w.world(0), message.data(), message.size(), 1, 7, SendMode::standard);
  w.ranks[0]->progress();  // rank 1 does not run: nothing is acknowledged, every frame stays in flight
  const std::uint64_t sent_bytes = w.ranks[0]->peer(1).out.next_byte() - 1;
  BOOST_REQUIRE(sent_bytes > 0u);
  auto nack = [&](std::uint64_t first, std::uint64_t count) {
    frag::FrameHeader h;
    h.type = frag::FrameType::nack;
    h.job_key = kJobKey;
    h.source = 1;
    h.destination = 0;
    h.seq_first = first;
    h.seq_count = static_cast<std::uint32_t>(count);
    std::array<std::byte, frag::kHeaderSize> frame{};
    frag::encode(h, frame);
    static_cast<path::FrameSink&>(*w.ranks[0]).on_frame(frame);
  };
  for (int i = 0; i < 20'000; ++i) nack(1, sent_bytes);
  BOOST_TEST(w.ranks[0]->counters().retransmits == 0u);
  BOOST_TEST(w.ranks[0]->counters().nacks_ignored >= 20'000u);
  nack(sent_bytes, 2);  // reaches past what was sent
  BOOST_TEST(w.ranks[0]->counters().dropped_malformed == 1u);
  // The message still arrives, once, intact.
  std::vector<std::byte> got(message.size());
  Request* recv = w.ranks[1]->irecv(w.world(1), got.data(), got.size(), 0, 7);
  w.run_until([&] { return w.complete(0, send) && w.complete(1, recv); });
  BOOST_TEST((got == message));
  BOOST_TEST(w.ranks[1]->counters().duplicates == 0u);
  w.ranks[0]->release(send);
  w.ranks[1]->release(recv);
}

// Integrity switched off on a network path (here a loop path that claims to be unreliable) is said in
// the statistics, which engine.report and ftpath show print; on trusted paths nothing is said.
BOOST_AUTO_TEST_CASE(integrity_switched_off_on_a_network_path_is_never_silent) {
  path::LoopOptions network;
  network.reliable = false;
  {
    World w(2, plain_config(), network);
    BOOST_TEST(w.ranks[1]->stats().warnings.empty());  // crc32c and reliability on: nothing to say
  }
  {
    EngineConfig config = plain_config();
    config.checksum = frag::ChecksumKind::none;
    World w(2, config, network);
    const auto warnings = w.ranks[1]->stats().warnings;
    BOOST_REQUIRE(warnings.size() == 1u);
    BOOST_TEST(warnings[0] == "engine.checksum=none on network paths (loop 1): corrupted payloads reach the "
                              "application undetected");
    exchange_and_verify(w, {100, 20'000});  // and it still works
  }
  {
    EngineConfig config = plain_config();
    config.reliability = Reliability::off;
    World w(2, config, network);
    const auto warnings = w.ranks[0]->stats().warnings;
    BOOST_REQUIRE(warnings.size() == 1u);
    BOOST_TEST(warnings[0].starts_with("engine.reliability=off on network paths (loop 0): lost, duplicated or "
                                       "corrupted frames are neither detected nor repaired"));
  }
  {
    EngineConfig config = plain_config();
    config.checksum = frag::ChecksumKind::none;
    World w(2, config);  // a trusted path (like shared memory): checksums are not its protection
    BOOST_TEST(w.ranks[0]->stats().warnings.empty());
  }
}

BOOST_AUTO_TEST_CASE(whole_eager_messages_go_as_short_frames_on_a_trusted_path) {
  World w(2, plain_config());  // loop paths claim to be reliable, like shared memory
  BOOST_REQUIRE(w.ranks[0]->peer(1).short_frames);
  // Posted first (straight into the receive), then sent before the receive is posted (the general path
  // takes the short frame as the DATA frame it stands for), then out of order among wildcards.
  exchange_and_verify(w, {0, 1, 8, 100, 4000});
  const auto a = pattern(10, 1), b = pattern(20, 2);
  Request* s1 = w.ranks[0]->isend(w.world(0), a.data(), a.size(), 1, 3, SendMode::standard);
  Request* s2 = w.ranks[0]->isend(w.world(0), b.data(), b.size(), 1, 4, SendMode::standard);
  w.run_until([&] { return w.complete(0, s1) && w.complete(0, s2); });
  for (int i = 0; i < 100; ++i) w.ranks[1]->progress();  // both arrive unexpected
  std::vector<std::byte> got_b(20), got_a(10);
  Request* r2 = w.ranks[1]->irecv(w.world(1), got_b.data(), got_b.size(), 0, 4);
  Request* r1 = w.ranks[1]->irecv(w.world(1), got_a.data(), got_a.size(), -1, -2);
  w.run_until([&] { return w.complete(1, r1) && w.complete(1, r2); });
  BOOST_TEST((got_a == a));
  BOOST_TEST((got_b == b));
  BOOST_TEST(w.ranks[1]->counters().dropped_malformed == 0u);
  for (Request* q : {s1, s2}) w.ranks[0]->release(q);
  for (Request* q : {r1, r2}) w.ranks[1]->release(q);
}

BOOST_AUTO_TEST_CASE(a_short_frame_on_a_checked_path_or_with_a_bad_field_is_counted_and_dropped) {
  std::array<std::byte, frag::kShortHeaderSize + 4> frame{};
  // As if rank 1's only path had handed the frame up (a progress round first: the engine decodes by
  // the path being polled).
  const auto inject = [&](World& w, const frag::ShortHeader& h) {
    w.ranks[1]->progress();
    frag::encode_short(h, std::span<std::byte, frag::kShortHeaderSize>(frame.data(), frag::kShortHeaderSize));
    static_cast<path::FrameSink&>(*w.ranks[1]).on_frame(std::span<const std::byte>(frame.data(), frag::kShortHeaderSize + h.payload_length));
  };
  const frag::ShortHeader good{0, 0, 5, 4, 1};
  {
    EngineConfig config = plain_config();
    config.reliability = Reliability::force;  // headers checked even on a reliable path: no short frames
    World w(2, config);
    BOOST_TEST(!w.ranks[0]->peer(1).short_frames);
    inject(w, good);
    BOOST_TEST(w.ranks[1]->counters().dropped_malformed == 1u);
    exchange_and_verify(w, {4});  // the forged message did not take msg_seq 1
  }
  {
    World w(2, plain_config());
    frag::ShortHeader bad = good;
    bad.tag = -3;
    inject(w, bad);
    bad = good;
    bad.source = 2;  // no such rank
    inject(w, bad);
    BOOST_TEST(w.ranks[1]->counters().dropped_malformed == 2u);
    std::vector<std::byte> got(4);
    Request* r = w.ranks[1]->irecv(w.world(1), got.data(), got.size(), 0, 5);
    inject(w, good);  // well formed, from a peer that sends them: delivered
    w.run_until([&] { return w.complete(1, r); });
    BOOST_TEST(w.ranks[1]->counters().dropped_malformed == 2u);
    w.ranks[1]->release(r);
  }
}

BOOST_AUTO_TEST_SUITE_END()

#include "ftmpi/rte/protocol.hpp"

#include <boost/test/unit_test.hpp>
#include <random>
#include <string>

#include "ftmpi/base/compress.hpp"
#include "ftmpi/test/seed.hpp"

using namespace ftmpi::rte;
using ftmpi::base::Errc;

namespace {

constexpr auto& kEveryType = kEveryMsgType;

std::string header(std::uint32_t length, std::uint8_t type) {
  std::string h;
  for (int i = 0; i < 4; ++i) h.push_back(static_cast<char>((length >> (8 * i)) & 0xff));
  h.push_back(static_cast<char>(type));
  return h;
}

// Decodes one whole frame with every type allowed.
ftmpi::base::Result<Message> round_trip(const Message& m) {
  FrameReader reader(kEveryType);
  const std::string frame = encode(m);
  reader.append(frame);
  auto next = reader.next();
  if (!next) return next.status();
  BOOST_REQUIRE(next->has_value());
  BOOST_TEST(reader.buffered() == 0u);
  return std::move(**next);
}

Secret test_secret() {
  Secret s{};
  for (std::size_t i = 0; i < s.size(); ++i) s[i] = static_cast<std::uint8_t>(i * 7 + 1);
  return s;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(protocol)

BOOST_AUTO_TEST_CASE(every_message_round_trips) {
  auto hello = round_trip(Hello{kProtocolVersion, 7, 4242, test_secret()});
  BOOST_REQUIRE(hello.is_ok());
  const auto& h = std::get<Hello>(*hello);
  BOOST_TEST(h.rank == 7u);
  BOOST_TEST(h.pid == 4242u);
  BOOST_TEST((h.secret == test_secret()));

  BOOST_TEST(std::get<Welcome>(*round_trip(Welcome{12})).size == 12u);

  const std::string binary("a\0b\xff", 4);
  auto put = round_trip(Put{"shm.addr", binary});
  BOOST_TEST(std::get<Put>(*put).key == "shm.addr");
  BOOST_TEST(std::get<Put>(*put).value == binary);

  BOOST_TEST(std::get<Fence>(*round_trip(Fence{3})).epoch == 3u);

  FenceDone done{2, {{0, "k", ""}, {5, "udp.0", "10.0.0.1:99"}}};
  auto d = std::get<FenceDone>(*round_trip(done));
  BOOST_TEST(d.epoch == 2u);
  BOOST_REQUIRE(d.entries.size() == 2u);
  BOOST_TEST(d.entries[1].rank == 5u);
  BOOST_TEST(d.entries[1].key == "udp.0");
  BOOST_TEST(d.entries[1].value == "10.0.0.1:99");
  BOOST_TEST(d.entries[0].value.empty());

  auto abort = std::get<Abort>(*round_trip(Abort{-3, "out of cheese"}));
  BOOST_TEST(abort.code == -3);
  BOOST_TEST(abort.message == "out of cheese");

  BOOST_TEST(std::holds_alternative<AbortAck>(*round_trip(AbortAck{})));
  BOOST_TEST(std::holds_alternative<Busy>(*round_trip(Busy{})));
  BOOST_TEST(encode(Busy{}).size() == kFrameHeaderBytes);  // nothing but the header
  BOOST_TEST(std::get<PeerCheck>(*round_trip(PeerCheck{41})).peer == 41u);
  const auto status = std::get<PeerStatus>(*round_trip(PeerStatus{9, true}));
  BOOST_TEST(status.peer == 9u);
  BOOST_TEST(status.polling);
  BOOST_TEST(!std::get<PeerStatus>(*round_trip(PeerStatus{9, false})).polling);
  // A peer_status whose polling byte is neither 0 nor 1 is malformed.
  std::string bad = encode(PeerStatus{9, true});
  bad.back() = 2;
  FrameReader strict(kEveryType);
  strict.append(bad);
  BOOST_TEST(!strict.next().is_ok());
  BOOST_TEST(std::holds_alternative<Finalize>(*round_trip(Finalize{})));
  BOOST_TEST(std::holds_alternative<FinalizeAck>(*round_trip(FinalizeAck{})));

  auto control = std::get<Control>(*round_trip(Control{9, "ftmpi-control 1 stats"}));
  BOOST_TEST(control.id == 9u);
  BOOST_TEST(control.request == "ftmpi-control 1 stats");
  auto reply = std::get<ControlReply>(*round_trip(ControlReply{9, true, R"({"rank":3})"}));
  BOOST_TEST(reply.id == 9u);
  BOOST_TEST(reply.ok);
  BOOST_TEST(reply.text == R"({"rank":3})");
  BOOST_TEST(!std::get<ControlReply>(*round_trip(ControlReply{1, false, "no rail 'x'"})).ok);
}

BOOST_AUTO_TEST_CASE(control_frames_keep_to_their_bounds_and_flag) {
  std::string body;
  for (std::uint32_t v : {7u, static_cast<std::uint32_t>(kMaxControlRequestBytes + 1)}) {
    for (int i = 0; i < 4; ++i) body.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
  }
  body.append(kMaxControlRequestBytes + 1, 'x');
  BOOST_TEST((decode(MsgType::control, body).code() == Errc::malformed));
  std::string reply("\x01\0\0\0\x02\0\0\0\0", 9);  // id 1, ok = 2
  BOOST_TEST((decode(MsgType::control_reply, reply).code() == Errc::malformed));
  reply[4] = '\x01';
  BOOST_TEST(decode(MsgType::control_reply, reply).is_ok());
  // Ranks may not send control requests, nor ftrun replies.
  FrameReader from_rank(kRankToLauncher);
  from_rank.append(encode(Control{1, "x"}));
  BOOST_TEST(!from_rank.next().is_ok());
  FrameReader from_ftrun(kLauncherToRank);
  from_ftrun.append(encode(ControlReply{1, true, "{}"}));
  BOOST_TEST(!from_ftrun.next().is_ok());
}

BOOST_AUTO_TEST_CASE(frames_fed_one_byte_at_a_time_come_out_whole_and_in_order) {
  std::string stream = encode(Put{"a", "1"}) + encode(Fence{1}) + encode(Finalize{});
  FrameReader reader(kRankToLauncher);
  std::vector<MsgType> seen;
  for (char c : stream) {
    reader.append(std::span<const char>(&c, 1));
    auto next = reader.next();
    BOOST_REQUIRE(next.is_ok());
    if (next->has_value()) seen.push_back(type_of(**next));
  }
  BOOST_TEST((seen == std::vector<MsgType>{MsgType::put, MsgType::fence, MsgType::finalize}));
  BOOST_TEST(reader.buffered() == 0u);
}

BOOST_AUTO_TEST_CASE(oversized_length_is_refused_from_the_header_alone) {
  FrameReader reader(kRankToLauncher);
  reader.append(header(1u << 30, static_cast<std::uint8_t>(MsgType::put)));
  auto next = reader.next();
  BOOST_TEST((next.code() == Errc::malformed));
  BOOST_TEST(next.status().message().find("exceeds") != std::string::npos);

  FrameReader empty_bodies(kRankToLauncher);
  empty_bodies.append(header(1, static_cast<std::uint8_t>(MsgType::finalize)) + "x");
  BOOST_TEST((empty_bodies.next().code() == Errc::malformed));
}

BOOST_AUTO_TEST_CASE(unknown_types_and_frames_of_the_other_direction_are_refused) {
  FrameReader unknown(kRankToLauncher);
  unknown.append(header(0, 0x77));
  auto u = unknown.next();
  BOOST_TEST((u.code() == Errc::malformed));
  BOOST_TEST(u.status().message().find("unknown frame type 119") != std::string::npos);

  FrameReader launcher_side(kRankToLauncher);
  launcher_side.append(encode(Welcome{2}));
  BOOST_TEST((launcher_side.next().code() == Errc::malformed));
  FrameReader launcher_busy(kRankToLauncher);
  launcher_busy.append(encode(Busy{}));  // only ftrun says busy
  BOOST_TEST((launcher_busy.next().code() == Errc::malformed));

  FrameReader before_auth(kRankHello);
  before_auth.append(encode(Put{"k", "v"}));
  auto p = before_auth.next();
  BOOST_TEST((p.code() == Errc::malformed));
  BOOST_TEST(p.status().message().find("unexpected put") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(bodies_must_decode_exactly) {
  const std::string fence = encode(Fence{1});
  std::string body = fence.substr(kFrameHeaderBytes);
  BOOST_TEST((decode(MsgType::fence, std::span<const char>(body.data(), 3)).code() == Errc::malformed));
  body += "x";
  BOOST_TEST((decode(MsgType::fence, body).code() == Errc::malformed));
  const std::string zero_epoch = encode(Fence{0}).substr(kFrameHeaderBytes);
  BOOST_TEST((decode(MsgType::fence, zero_epoch).code() == Errc::malformed));
}

BOOST_AUTO_TEST_CASE(key_and_value_bounds_are_enforced_on_decode) {
  const std::string empty_key = encode(Put{"", "v"}).substr(kFrameHeaderBytes);
  BOOST_TEST((decode(MsgType::put, empty_key).code() == Errc::malformed));
  const std::string long_key = encode(Put{std::string(kMaxKeyBytes + 1, 'k'), "v"}).substr(kFrameHeaderBytes);
  BOOST_TEST((decode(MsgType::put, long_key).code() == Errc::malformed));
  const std::string long_value =
      encode(Put{"k", std::string(kMaxValueBytes + 1, 'v')}).substr(kFrameHeaderBytes);
  BOOST_TEST((decode(MsgType::put, long_value).code() == Errc::malformed));
  const std::string max_value = encode(Put{"k", std::string(kMaxValueBytes, 'v')}).substr(kFrameHeaderBytes);
  BOOST_TEST(decode(MsgType::put, max_value).is_ok());
}

BOOST_AUTO_TEST_CASE(hello_of_another_protocol_version_is_unsupported) {
  const std::string body = encode(Hello{kProtocolVersion + 1, 0, 1, {}}).substr(kFrameHeaderBytes);
  BOOST_TEST((decode(MsgType::hello, body).code() == Errc::unsupported_version));
}

BOOST_AUTO_TEST_CASE(fence_done_with_an_impossible_count_or_rank_is_refused) {
  std::string body = encode(FenceDone{1, {}}).substr(kFrameHeaderBytes);
  BOOST_REQUIRE(body.size() == 4u + 1u + 4u);               // epoch, encoding 0, count
  body[5] = body[6] = body[7] = body[8] = '\xff';  // count = 2^32 - 1, no entries follow
  BOOST_TEST((decode(MsgType::fence_done, body).code() == Errc::malformed));
  const std::string bad_rank = encode(FenceDone{1, {{kMaxJobSize, "k", "v"}}}).substr(kFrameHeaderBytes);
  BOOST_TEST((decode(MsgType::fence_done, bad_rank).code() == Errc::malformed));
}

// A job's address table: every rank's host identity and rail addresses, as Engine::start puts them.
FenceDone address_table(std::uint32_t ranks) {
  FenceDone done{4, {}};
  for (std::uint32_t r = 0; r < ranks; ++r) {
    done.entries.push_back({r, "host", "6b0e8a3c-1d2f-4c55-9e1a-0c7d2b9f4e61/net:[4026531840]/mnt:[4026531841]"});
    done.entries.push_back({r, "udp", "10.77.1." + std::to_string(r % 200) + ":4" + std::to_string(1000 + r) + "/65000"});
  }
  return done;
}

BOOST_AUTO_TEST_CASE(a_large_fence_done_travels_packed_and_reads_back_the_same) {
  const FenceDone done = address_table(64);
  const std::string frame = encode(done);
  BOOST_TEST(frame[kFrameHeaderBytes + 4] == '\x01');  // zstd
  std::size_t raw = 4;
  for (const KvEntry& e : done.entries) raw += kKvEntryOverhead + e.key.size() + e.value.size();
  BOOST_TEST(frame.size() * 4 < raw);  // repeated keys and host identities pack well
  const auto back = std::get<FenceDone>(*round_trip(done));
  BOOST_TEST(back.epoch == 4u);
  BOOST_REQUIRE(back.entries.size() == done.entries.size());
  for (std::size_t i = 0; i < done.entries.size(); ++i) {
    BOOST_TEST(back.entries[i].rank == done.entries[i].rank);
    BOOST_TEST(back.entries[i].key == done.entries[i].key);
    BOOST_TEST(back.entries[i].value == done.entries[i].value);
  }
  // A small table goes as it is.
  BOOST_TEST(encode(address_table(1))[kFrameHeaderBytes + 4] == '\x00');
}

// A packed table is trusted no more than a plain one: its announced length bounds what is unpacked.
BOOST_AUTO_TEST_CASE(a_packed_fence_done_that_lies_is_refused) {
  const std::string body = encode(address_table(64)).substr(kFrameHeaderBytes);
  auto with_length = [&](std::uint32_t length) {
    std::string b = body;
    for (int i = 0; i < 4; ++i) b[5 + static_cast<std::size_t>(i)] = static_cast<char>((length >> (8 * i)) & 0xff);
    return b;
  };
  std::uint32_t length = 0;
  for (int i = 0; i < 4; ++i) length |= std::uint32_t{static_cast<std::uint8_t>(body[5 + static_cast<std::size_t>(i)])} << (8 * i);
  BOOST_TEST((decode(MsgType::fence_done, with_length(length - 1)).code() == Errc::malformed));  // unpacks to more
  BOOST_TEST((decode(MsgType::fence_done, with_length(length + 1)).code() == Errc::malformed));  // to less
  BOOST_TEST((decode(MsgType::fence_done, with_length(0xffffffffu)).code() == Errc::malformed));
  // A bomb: a few bytes that unpack to a megabyte of zeros, announced as such, are no table.
  std::string bomb = body.substr(0, 5);
  const std::string zeros = ftmpi::base::zstd_compress(std::string(1 << 20, '\0'));
  for (int i = 0; i < 4; ++i) bomb.push_back(static_cast<char>(((1u << 20) >> (8 * i)) & 0xff));
  bomb += zeros;
  BOOST_TEST((decode(MsgType::fence_done, bomb).code() == Errc::malformed));
  // Not zstd, truncated, an unknown encoding.
  std::string garbage = body;
  garbage[12] = static_cast<char>(garbage[12] ^ 0x5a);
  BOOST_TEST((decode(MsgType::fence_done, garbage).code() == Errc::malformed));
  BOOST_TEST((decode(MsgType::fence_done, body.substr(0, body.size() - 3)).code() == Errc::malformed));
  std::string unknown = body;
  unknown[4] = '\x02';
  BOOST_TEST((decode(MsgType::fence_done, unknown).code() == Errc::malformed));
}

BOOST_AUTO_TEST_CASE(random_bytes_never_crash_the_reader) {
  const auto seed = ftmpi::test::seed_for("random_bytes_never_crash_the_reader");
  BOOST_TEST_CONTEXT("seed " << seed) {
    std::mt19937_64 rng(seed);
    for (int round = 0; round < 2000; ++round) {
      FrameReader reader(round % 2 == 0 ? std::span<const MsgType>(kRankToLauncher)
                                        : std::span<const MsgType>(kLauncherToRank));
      // Plausible headers with small lengths and real types, then random bodies.
      std::string bytes =
          header(static_cast<std::uint32_t>(rng() % 64), static_cast<std::uint8_t>(1 + rng() % 10));
      const std::size_t n = rng() % 80;
      for (std::size_t i = 0; i < n; ++i) bytes.push_back(static_cast<char>(rng()));
      reader.append(bytes);
      for (int i = 0; i < 4; ++i) {
        auto next = reader.next();
        if (!next) {
          BOOST_TEST((next.code() == Errc::malformed || next.code() == Errc::unsupported_version));
          break;
        }
        if (!next->has_value()) break;
      }
    }
  }
}

BOOST_AUTO_TEST_SUITE_END()

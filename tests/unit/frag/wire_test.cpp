#include <boost/test/unit_test.hpp>
#include <sodium.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "ftmpi/frag/checksum.hpp"
#include "ftmpi/frag/wire.hpp"
#include "ftmpi/test/seed.hpp"

using namespace ftmpi::frag;
using ftmpi::base::Errc;

namespace {

constexpr std::uint64_t kMax64 = std::numeric_limits<std::uint64_t>::max();

const DecodeLimits kLimits{.job_key = 0x5eed'f00d'cafe'b0baULL, .world_size = 16, .my_rank = 3, .max_payload = 8192};

constexpr std::array kAllTypes{FrameType::data, FrameType::ack,   FrameType::nack,  FrameType::rts,
                               FrameType::cts,  FrameType::fin,   FrameType::probe, FrameType::probe_reply,
                               FrameType::credit, FrameType::cancel, FrameType::cancel_reply};

// A frame: the encoded header and payload_length bytes of payload.
std::vector<std::byte> make_frame(const FrameHeader& h) {
  std::vector<std::byte> frame(kHeaderSize + h.payload_length);
  encode(h, std::span<std::byte, kHeaderSize>(frame.data(), kHeaderSize));
  for (std::size_t i = kHeaderSize; i < frame.size(); ++i) frame[i] = static_cast<std::byte>(i * 7);
  return frame;
}

template <typename T>
void put_le(std::vector<std::byte>& frame, std::size_t offset, T value) {
  for (std::size_t i = 0; i < sizeof(T); ++i) {
    frame[offset + i] = static_cast<std::byte>(static_cast<std::uint64_t>(value) >> (8 * i));
  }
}

std::uint64_t get_le(const std::vector<std::byte>& frame, std::size_t offset, std::size_t size) {
  std::uint64_t value = 0;
  for (std::size_t i = 0; i < size; ++i) value |= std::to_integer<std::uint64_t>(frame[offset + i]) << (8 * i);
  return value;
}

// SipHash-2-4 by libsodium over `frame`'s header with the MAC's halves zeroed (the reference header_mac
// must agree with).
std::uint64_t libsodium_header_mac(std::vector<std::byte> frame, const FrameKey& key) {
  put_le(frame, wire_offset::header_mac_low, std::uint32_t{0});
  put_le(frame, wire_offset::header_mac_high, std::uint32_t{0});
  unsigned char tag[8];
  crypto_shorthash_siphash24(tag, reinterpret_cast<const unsigned char*>(frame.data()), kHeaderSize,
                             reinterpret_cast<const unsigned char*>(key.data()));
  std::uint64_t mac = 0;
  for (int i = 0; i < 8; ++i) mac |= std::uint64_t{tag[i]} << (8 * i);
  return mac;
}

// Recomputes the header MAC as the wire format defines it (kLimits' key), after a test has edited raw bytes.
void reseal(std::vector<std::byte>& frame) {
  seal_header(std::span<std::byte, kHeaderSize>(frame.data(), kHeaderSize), kLimits.key);
}

// One valid header of each type, with every field it uses set to something unremarkable.
FrameHeader valid_header(FrameType type) {
  FrameHeader h;
  h.type = type;
  h.job_key = kLimits.job_key;
  h.source = 5;
  h.destination = kLimits.my_rank;
  h.flags = kFlagAckValid;
  h.lirs = 900;
  h.lids = 800;
  switch (type) {
    case FrameType::data:
    case FrameType::rts:
      h.checksum_kind = ChecksumKind::crc32c;
      h.context = 2;
      h.tag = 77;
      h.message_seq = 12;
      h.message_length = 10000;
      h.fragment_offset = type == FrameType::rts ? 0 : 4096;
      h.payload_length = 4096;
      h.seq_first = 5001 + h.fragment_offset;
      h.seq_count = 4096;
      h.flags |= fragment_position_flags(h.fragment_offset, h.payload_length, h.message_length);
      h.sender_request = 0xabc;
      h.receiver_request = type == FrameType::rts ? 0 : 0xdef;
      h.payload_checksum = 0x12345678;
      break;
    case FrameType::ack:
      break;
    case FrameType::nack:
      h.seq_first = 7000;
      h.seq_count = 1500;
      break;
    case FrameType::cts:
    case FrameType::fin:
      h.message_seq = 12;
      h.seq_first = 31;
      h.seq_count = 1;
      h.sender_request = 0xabc;
      h.receiver_request = 0xdef;
      break;
    case FrameType::probe:
    case FrameType::probe_reply:
      h.sender_request = 42;
      break;
    case FrameType::credit:
      h.seq_first = 77;
      h.seq_count = 1;
      h.message_length = 3 << 20;  // the grant
      break;
    case FrameType::cancel:
      h.context = 17;
      h.tag = 5;
      [[fallthrough]];
    case FrameType::cancel_reply:
      h.message_seq = 12;
      h.seq_first = 78;
      h.seq_count = 1;
      h.sender_request = 0xabc;
      if (type == FrameType::cancel_reply) h.flags |= kFlagWithdrawn;
      break;
  }
  return h;
}

// Values near the edges are where length and sequence arithmetic goes wrong.
std::uint64_t edgy(std::mt19937_64& rng, std::uint64_t lo, std::uint64_t hi) {
  switch (rng() % 4) {
    case 0: return lo;
    case 1: return hi;
    case 2: return lo + rng() % (std::min<std::uint64_t>(hi - lo, 63) + 1);
    default: return std::uniform_int_distribution<std::uint64_t>(lo, hi)(rng);
  }
}

FrameHeader random_valid_header(FrameType type, std::mt19937_64& rng) {
  FrameHeader h;
  h.type = type;
  h.job_key = kLimits.job_key;
  h.source = static_cast<std::uint32_t>(rng() % kLimits.world_size);
  h.destination = kLimits.my_rank;
  h.checksum_kind = static_cast<ChecksumKind>(rng() % 3);
  if (type == FrameType::ack || rng() % 2 == 0) {
    h.flags |= kFlagAckValid;
    h.lirs = edgy(rng, 0, kMax64);
    h.lids = edgy(rng, 0, h.lirs);
  }
  switch (type) {
    case FrameType::data:
    case FrameType::rts: {
      h.context = static_cast<std::uint32_t>(rng());
      h.tag = static_cast<std::int32_t>(edgy(rng, 0, std::numeric_limits<std::int32_t>::max()));
      h.message_seq = edgy(rng, 1, kMax64);
      h.message_length = rng() % 4 == 0 ? 0 : edgy(rng, 1, std::uint64_t{1} << (rng() % 63));
      if (type == FrameType::rts && rng() % 4 == 0) {
        // Single copy: a descriptor of the sender's memory instead of the first bytes.
        h.flags |= kFlagSingleCopy | kFlagFirstFragment;
        h.payload_length = static_cast<std::uint32_t>(edgy(rng, 1, kLimits.max_payload));
        h.seq_count = h.payload_length;
        h.seq_first = edgy(rng, 1, kMax64 - h.seq_count + 1);
      } else if (h.message_length > 0) {
        h.payload_length = static_cast<std::uint32_t>(
            edgy(rng, 1, std::min<std::uint64_t>(kLimits.max_payload, h.message_length)));
        if (type == FrameType::data) h.fragment_offset = edgy(rng, 0, h.message_length - h.payload_length);
      }
      if ((h.flags & kFlagSingleCopy) == 0) {
        const std::uint64_t message_first = edgy(rng, 1, kMax64 - message_seq_count(h.message_length) + 1);
        h.seq_first = message_first + h.fragment_offset;
        h.seq_count = static_cast<std::uint32_t>(message_seq_count(h.payload_length));
        h.flags |= fragment_position_flags(h.fragment_offset, h.payload_length, h.message_length);
      }
      if ((h.flags & kFlagFirstFragment) != 0 && rng() % 2 == 0) h.flags |= kFlagAckRequested;
      h.sender_request = type == FrameType::rts ? edgy(rng, 1, kMax64) : rng();
      if (type == FrameType::data) h.receiver_request = rng();
      if (h.checksum_kind != ChecksumKind::none && h.payload_length > 0) {
        h.payload_checksum = static_cast<std::uint32_t>(rng());
      }
      break;
    }
    case FrameType::ack:
      if (rng() % 2 == 0) {  // a selective range
        h.seq_count = static_cast<std::uint32_t>(edgy(rng, 1, std::numeric_limits<std::uint32_t>::max()));
        h.seq_first = edgy(rng, 1, kMax64 - h.seq_count + 1);
      }
      break;
    case FrameType::nack:
      h.seq_count = static_cast<std::uint32_t>(edgy(rng, 1, std::numeric_limits<std::uint32_t>::max()));
      h.seq_first = edgy(rng, 1, kMax64 - h.seq_count + 1);
      break;
    case FrameType::cts:
    case FrameType::fin:
      h.message_seq = edgy(rng, 1, kMax64);
      h.seq_first = edgy(rng, 1, kMax64);
      h.seq_count = 1;
      h.sender_request = edgy(rng, 1, kMax64);
      h.receiver_request = type == FrameType::cts ? edgy(rng, 1, kMax64) : rng();
      if (type == FrameType::cts && rng() % 4 == 0) {
        // A split copy: the receive buffer's address and where the sender's half begins.
        h.flags |= kFlagSingleCopy;
        h.message_length = edgy(rng, 1, kMax64);
        h.fragment_offset = edgy(rng, 1, kMax64);
      }
      if (type == FrameType::fin && h.receiver_request != 0 && rng() % 2 == 0) h.flags |= kFlagSingleCopy;
      break;
    case FrameType::probe:
    case FrameType::probe_reply:
      h.sender_request = rng();
      break;
    case FrameType::credit:
      h.seq_first = edgy(rng, 1, kMax64);
      h.seq_count = 1;
      h.message_length = edgy(rng, 0, kMax64);
      break;
    case FrameType::cancel:
    case FrameType::cancel_reply:
      h.message_seq = edgy(rng, 1, kMax64);
      h.seq_first = edgy(rng, 1, kMax64);
      h.seq_count = 1;
      h.sender_request = edgy(rng, 1, kMax64);
      if (type == FrameType::cancel) {
        h.context = static_cast<std::uint32_t>(rng());
        h.tag = static_cast<std::int32_t>(edgy(rng, 0, std::numeric_limits<std::int32_t>::max()));
      } else if (rng() % 2 == 0) {
        h.flags |= kFlagWithdrawn;
      }
      break;
  }
  return h;
}

struct Rejection {
  std::string what;
  FrameType base_type;
  std::function<void(FrameHeader&)> break_header;             // applied before encoding
  std::function<void(std::vector<std::byte>&)> break_frame;  // applied to the encoded frame
  Errc expected;
  std::string message_part;  // the field the message must name
};

}  // namespace

BOOST_AUTO_TEST_SUITE(wire)

BOOST_AUTO_TEST_CASE(header_fields_sit_little_endian_at_their_documented_offsets) {
  FrameHeader h = valid_header(FrameType::data);
  h.job_key = 0x0102030405060708ULL;
  const auto frame = make_frame(h);
  BOOST_TEST(kHeaderSize == 112u);
  BOOST_TEST(get_le(frame, wire_offset::version, 1) == kWireVersion);
  BOOST_TEST(get_le(frame, wire_offset::type, 1) == 1u);
  BOOST_TEST(std::to_integer<int>(frame[wire_offset::job_key]) == 0x08);
  BOOST_TEST(std::to_integer<int>(frame[wire_offset::job_key + 7]) == 0x01);
  BOOST_TEST(get_le(frame, wire_offset::tag, 4) == 77u);
  BOOST_TEST(get_le(frame, wire_offset::seq_first, 8) == h.seq_first);
  BOOST_TEST(get_le(frame, wire_offset::fragment_offset, 8) == 4096u);
  BOOST_TEST(get_le(frame, wire_offset::lids, 8) == 800u);
  BOOST_TEST(get_le(frame, wire_offset::receiver_request, 8) == 0xdefu);
  BOOST_TEST(get_le(frame, wire_offset::payload_checksum, 4) == 0x12345678u);
  BOOST_TEST((get_le(frame, wire_offset::header_mac_low, 4) | get_le(frame, wire_offset::header_mac_high, 4) << 32) ==
             header_mac(frame.data(), kLimits.key));
}

BOOST_AUTO_TEST_CASE(header_mac_is_siphash_2_4_of_the_header_with_its_halves_zero_keyed_by_the_job) {
  FrameKey key;
  for (std::size_t i = 0; i < key.size(); ++i) key[i] = std::byte(0x10 + i);
  const FrameHeader h = valid_header(FrameType::nack);
  std::vector<std::byte> frame(kHeaderSize);
  encode(h, std::span<std::byte, kHeaderSize>(frame.data(), kHeaderSize), true, key);
  const std::uint64_t stored = get_le(frame, wire_offset::header_mac_low, 4) | get_le(frame, wire_offset::header_mac_high, 4) << 32;
  // Recomputed here with libsodium itself, over the bytes as the format defines them.
  BOOST_TEST(stored == libsodium_header_mac(frame, key));
}

BOOST_AUTO_TEST_CASE(header_mac_equals_libsodiums_siphash_2_4_for_random_headers_and_keys) {
  // header_mac computes SipHash-2-4 itself, in place; libsodium's is the reference. Seeded: a failure
  // names its seed and round.
  std::mt19937_64 random(20261128);
  for (int round = 0; round < 2000; ++round) {
    FrameKey key;
    for (std::byte& b : key) b = std::byte(random() & 0xff);
    std::vector<std::byte> header(kHeaderSize);
    for (std::byte& b : header) b = std::byte(random() & 0xff);
    BOOST_TEST_REQUIRE(header_mac(header.data(), key) == libsodium_header_mac(header, key),
                       "seed 20261128, round " << round);
  }
}

BOOST_AUTO_TEST_CASE(a_frame_sealed_without_the_jobs_key_is_refused_whatever_else_is_right) {
  // A forger who read the job key off the wire (it travels in clear) builds a perfect frame, but cannot
  // make its MAC without the job's FrameKey.
  DecodeLimits keyed = kLimits;
  keyed.key = derive_frame_key(std::vector<std::uint8_t>(32, 7));
  for (FrameType type : kAllTypes) {
    const FrameHeader h = valid_header(type);
    std::vector<std::byte> frame(kHeaderSize + h.payload_length);
    encode(h, std::span<std::byte, kHeaderSize>(frame.data(), kHeaderSize), true, kLimits.key);  // not the job's
    FrameHeader out;
    BOOST_TEST(!try_decode(frame, keyed, out));
    BOOST_TEST((decode(frame, keyed).code() == Errc::bad_checksum));
    encode(h, std::span<std::byte, kHeaderSize>(frame.data(), kHeaderSize), true, keyed.key);
    BOOST_TEST(try_decode(frame, keyed, out), to_string(type));
    // And any bit of the header changed afterwards is caught.
    for (std::size_t byte = 0; byte < kHeaderSize; byte += 7) {
      frame[byte] ^= std::byte{0x20};
      BOOST_TEST(!try_decode(frame, keyed, out), "byte " << byte);
      frame[byte] ^= std::byte{0x20};
    }
  }
  // Another job's frame (its job key and its MAC key both other) fails the MAC like a corrupted one: a
  // corrupted job key could not be told from it.
  FrameHeader stray = valid_header(FrameType::data);
  stray.job_key ^= 1;
  std::vector<std::byte> frame(kHeaderSize + stray.payload_length);
  encode(stray, std::span<std::byte, kHeaderSize>(frame.data(), kHeaderSize), true, kLimits.key);
  BOOST_TEST((decode(frame, keyed).code() == Errc::bad_checksum));
  // Keys differ with the secret, and say nothing of it.
  BOOST_TEST((derive_frame_key(std::vector<std::uint8_t>(32, 7)) != derive_frame_key(std::vector<std::uint8_t>(32, 8))));
  BOOST_TEST((derive_frame_key(std::vector<std::uint8_t>(32, 7)) == derive_frame_key(std::vector<std::uint8_t>(32, 7))));
}

// engine.integrity=mac: the MAC covers header and payload (keyed BLAKE2b with the payload key), so any
// payload change is refused, whatever its checksum says; a header alone cannot be verified.
BOOST_AUTO_TEST_CASE(with_the_payload_mac_every_payload_byte_is_authenticated) {
  DecodeLimits mac = kLimits;
  mac.payload_mac = true;
  mac.payload_key = derive_payload_key(kLimits.key);
  BOOST_TEST((mac.payload_key != kLimits.key));
  for (FrameType type : kAllTypes) {
    BOOST_TEST_CONTEXT(to_string(type)) {
      const FrameHeader h = valid_header(type);
      std::vector<std::byte> frame = make_frame(h);  // header MAC only
      FrameHeader out;
      BOOST_TEST(!try_decode(frame, mac, out));
      BOOST_TEST((decode(frame, mac).code() == Errc::bad_checksum));
      seal_frame(frame, mac.payload_key);
      BOOST_TEST_REQUIRE(try_decode(frame, mac, out));
      BOOST_TEST((out == h));
      BOOST_TEST(!try_decode(frame, kLimits, out));  // and a receiver without the mode refuses it
      for (std::size_t byte = kHeaderSize; byte < frame.size(); byte += 97) {
        frame[byte] ^= std::byte{0x01};
        BOOST_TEST(!try_decode(frame, mac, out), "payload byte " << byte);
        frame[byte] ^= std::byte{0x01};
      }
      if (h.payload_length > 0) {
        const auto ahead = decode(std::span<const std::byte>(frame).first(kHeaderSize), frame.size(), mac);
        BOOST_TEST((ahead.code() == Errc::bad_checksum));
        BOOST_TEST(ahead.status().message().find("cannot be verified") != std::string::npos);
      }
    }
  }
  // frame_mac is BLAKE2b keyed with the payload key over the header (MAC halves zero), then the payload.
  std::vector<std::byte> frame = make_frame(valid_header(FrameType::data));
  std::vector<unsigned char> input(frame.size());
  std::memcpy(input.data(), frame.data(), frame.size());
  std::memset(input.data() + wire_offset::header_mac_low, 0, 4);
  std::memset(input.data() + wire_offset::header_mac_high, 0, 4);
  unsigned char tag[16];
  crypto_generichash(tag, sizeof tag, input.data(), input.size(),
                     reinterpret_cast<const unsigned char*>(mac.payload_key.data()), mac.payload_key.size());
  std::uint64_t expected = 0;
  for (int i = 0; i < 8; ++i) expected |= std::uint64_t{tag[i]} << (8 * i);
  BOOST_TEST(frame_mac(frame.data(), std::span<const std::byte>(frame).subspan(kHeaderSize), mac.payload_key) ==
             expected);
}

BOOST_AUTO_TEST_CASE(every_frame_type_round_trips_with_random_fields) {
  const std::uint64_t seed = ftmpi::test::seed_for("wire round trip");
  BOOST_TEST_CONTEXT("seed " << seed) {
    std::mt19937_64 rng(seed);
    for (FrameType type : kAllTypes) {
      for (int i = 0; i < 300; ++i) {
        const FrameHeader h = random_valid_header(type, rng);
        BOOST_TEST_CONTEXT(describe(h)) {
          const auto frame = make_frame(h);
          const auto decoded = decode(frame, kLimits);
          BOOST_TEST_REQUIRE(decoded.is_ok(), decoded.status().to_string());
          BOOST_TEST((*decoded == h));
          FrameHeader quick;
          BOOST_TEST(try_decode(frame, kLimits, quick));
          BOOST_TEST((quick == h));
          std::array<std::byte, kHeaderSize> again{};
          encode(*decoded, again);
          BOOST_TEST(std::equal(again.begin(), again.end(), frame.begin()));
        }
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(zero_byte_message_is_one_fragment_with_one_sequence_number) {
  FrameHeader h = valid_header(FrameType::data);
  h.message_length = 0;
  h.fragment_offset = 0;
  h.payload_length = 0;
  h.payload_checksum = 0;
  h.seq_count = 1;
  h.flags = kFlagFirstFragment | kFlagLastFragment | kFlagAckValid;
  BOOST_TEST(decode(make_frame(h), kLimits).is_ok());
  h.seq_count = 0;
  BOOST_TEST((decode(make_frame(h), kLimits).code() == Errc::malformed));
}

BOOST_AUTO_TEST_CASE(an_rts_may_carry_none_of_its_message_when_its_sender_is_out_of_credit) {
  FrameHeader h = valid_header(FrameType::rts);
  h.payload_length = 0;
  h.payload_checksum = 0;
  h.seq_count = 1;
  h.flags = kFlagAckValid | kFlagFirstFragment;
  h.message_length = 100000;
  const auto decoded = decode(make_frame(h), kLimits);
  BOOST_TEST_REQUIRE(decoded.is_ok(), decoded.status().to_string());
  BOOST_TEST(decoded->message_length == 100000u);
  h.flags |= kFlagLastFragment;  // it is not the whole message
  BOOST_TEST(!decode(make_frame(h), kLimits).is_ok());
}

BOOST_AUTO_TEST_CASE(an_acknowledgement_may_carry_a_selective_range) {
  FrameHeader h = valid_header(FrameType::ack);
  h.seq_first = 9001;
  h.seq_count = 1500;
  auto frame = make_frame(h);
  auto decoded = decode(frame, kLimits);
  BOOST_REQUIRE_MESSAGE(decoded, decoded.status().to_string());
  BOOST_TEST(decoded->seq_first == 9001u);
  BOOST_TEST(decoded->seq_count == 1500u);
}

BOOST_AUTO_TEST_CASE(an_acknowledgement_of_nothing_yet_is_valid) {
  FrameHeader h = valid_header(FrameType::data);
  h.lirs = 0;
  h.lids = 0;
  BOOST_TEST(decode(make_frame(h), kLimits).is_ok());
}

BOOST_AUTO_TEST_CASE(a_header_read_ahead_of_its_payload_decodes_with_the_frame_length) {
  const FrameHeader h = valid_header(FrameType::data);
  const auto frame = make_frame(h);
  const std::span<const std::byte> header(frame.data(), kHeaderSize);
  const auto decoded = decode(header, frame.size(), kLimits);
  BOOST_TEST_REQUIRE(decoded.is_ok(), decoded.status().to_string());
  BOOST_TEST((*decoded == h));
  BOOST_TEST((decode(header, frame.size() - 1, kLimits).code() == Errc::truncated));
}

BOOST_AUTO_TEST_CASE(try_decode_of_a_header_read_ahead_agrees_with_decode_at_every_frame_length) {
  const FrameHeader h = valid_header(FrameType::data);
  const auto frame = make_frame(h);
  const std::span<const std::byte> header(frame.data(), kHeaderSize);
  for (std::size_t length = 0; length <= frame.size() + 2; ++length) {
    BOOST_TEST_CONTEXT("frame length " << length) {
      FrameHeader quick;
      const bool accepted = try_decode(header, length, kLimits, quick);
      BOOST_TEST(accepted == decode(header, length, kLimits).is_ok());
      BOOST_TEST(accepted == (length == frame.size()));
      if (accepted) BOOST_TEST((quick == h));
    }
  }
  // Only the header's bytes are read: a header alone and a header with its payload behind it agree.
  FrameHeader from_frame;
  FrameHeader from_header;
  BOOST_TEST(try_decode(frame, kLimits, from_frame));
  BOOST_TEST(try_decode(header, frame.size(), kLimits, from_header));
  BOOST_TEST((from_frame == from_header));
  // A header shorter than the wire header is refused whatever length is claimed.
  FrameHeader quick;
  BOOST_TEST(!try_decode(header.first(kHeaderSize - 1), frame.size(), kLimits, quick));
}

BOOST_AUTO_TEST_CASE(each_broken_field_is_rejected_with_its_own_reason) {
  using FH = FrameHeader&;
  using FB = std::vector<std::byte>&;
  const std::vector<Rejection> cases = {
      {"unknown version", FrameType::data, nullptr, [](FB f) { f[0] = std::byte{3}; }, Errc::unsupported_version, "version 3"},
      {"version 0", FrameType::ack, nullptr, [](FB f) { f[0] = std::byte{0}; }, Errc::unsupported_version, "version 0"},
      {"header MAC", FrameType::data, nullptr, [](FB f) { f[wire_offset::header_mac_low] ^= std::byte{1}; },
       Errc::bad_checksum, "header_mac"},
      {"header MAC, high half", FrameType::probe, nullptr,
       [](FB f) { f[wire_offset::header_mac_high + 2] ^= std::byte{1}; }, Errc::bad_checksum, "header_mac"},
      {"wrong job", FrameType::data, [](FH h) { h.job_key ^= 1; }, nullptr, Errc::wrong_job, "job_key"},
      {"frame type 0", FrameType::ack, nullptr, [](FB f) { f[wire_offset::type] = std::byte{0}; reseal(f); },
       Errc::malformed, "frame type 0"},
      {"frame type 9 (a short frame's)", FrameType::ack, nullptr,
       [](FB f) { f[wire_offset::type] = std::byte{9}; reseal(f); }, Errc::malformed, "frame type 9"},
      {"frame type 13", FrameType::ack, nullptr, [](FB f) { f[wire_offset::type] = std::byte{13}; reseal(f); },
       Errc::malformed, "frame type 13"},
      {"unknown flag bit", FrameType::data, [](FH h) { h.flags |= 0x80; }, nullptr, Errc::malformed, "unknown bits"},
      {"unknown checksum kind", FrameType::data, nullptr,
       [](FB f) { f[wire_offset::checksum_kind] = std::byte{3}; reseal(f); }, Errc::malformed, "checksum_kind 3"},
      {"flag not for this type", FrameType::ack, [](FH h) { h.flags |= kFlagFirstFragment; }, nullptr,
       Errc::malformed, "not allowed"},
      {"source out of range", FrameType::data, [](FH h) { h.source = 16; }, nullptr, Errc::malformed, "source rank 16"},
      {"destination out of range", FrameType::data, [](FH h) { h.destination = 99; }, nullptr, Errc::malformed,
       "destination rank 99 out of range"},
      {"destination not me", FrameType::cts, [](FH h) { h.destination = 4; }, nullptr, Errc::malformed, "is not me"},
      {"payload longer than the bytes present", FrameType::data, nullptr,
       [](FB f) { f.pop_back(); }, Errc::truncated, "payload_length"},
      {"payload over the limit", FrameType::data,
       [](FH h) {
         h.payload_length = kLimits.max_payload + 1;
         h.seq_count = h.payload_length;
       },
       nullptr, Errc::malformed, "exceeds the limit"},
      {"bytes after the payload", FrameType::data, nullptr, [](FB f) { f.push_back(std::byte{0}); }, Errc::malformed,
       "after the payload"},
      {"ack carrying payload", FrameType::ack, [](FH h) { h.payload_length = 5; }, nullptr, Errc::malformed,
       "payload_length 5 must be 0"},
      {"unused field set", FrameType::cts, [](FH h) { h.tag = 3; }, nullptr, Errc::malformed, "tag 3 must be 0"},
      {"ack without ack-valid", FrameType::ack, [](FH h) { h.flags = 0; }, nullptr, Errc::malformed, "ack-valid"},
      {"lirs/lids without ack-valid", FrameType::nack, [](FH h) { h.flags = 0; }, nullptr, Errc::malformed,
       "without ack-valid"},
      {"lids beyond lirs", FrameType::data, [](FH h) { h.lids = h.lirs + 1; }, nullptr, Errc::malformed,
       "lids 901 beyond lirs 900"},
      {"lids without lirs", FrameType::ack, [](FH h) { h.lirs = 0; }, nullptr, Errc::malformed, "lids 800 beyond lirs 0"},
      {"seq_first 0", FrameType::nack, [](FH h) { h.seq_first = 0; }, nullptr, Errc::malformed, "seq_first 0"},
      {"selective range without a count", FrameType::ack, [](FH h) { h.seq_first = 9; }, nullptr, Errc::malformed,
       "seq_count 0"},
      {"selective range without a start", FrameType::ack, [](FH h) { h.seq_count = 9; }, nullptr, Errc::malformed,
       "seq_first 0"},
      {"nack of nothing", FrameType::nack, [](FH h) { h.seq_count = 0; }, nullptr, Errc::malformed, "seq_count 0"},
      {"sequence range overflow", FrameType::nack, [](FH h) { h.seq_first = kMax64 - 10; }, nullptr,
       Errc::malformed, "overflows 64 bits"},
      {"message sequence range overflow", FrameType::data, [](FH h) { h.seq_first = kMax64 - 5000; }, nullptr,
       Errc::malformed, "sequence range of the 10000-byte message"},
      {"message would start at sequence 0", FrameType::data, [](FH h) { h.seq_first = 4096; }, nullptr,
       Errc::malformed, "not above fragment_offset"},
      {"seq_count disagrees with payload", FrameType::data, [](FH h) { h.seq_count = 4095; }, nullptr,
       Errc::malformed, "seq_count 4095 does not match"},
      {"message_seq 0", FrameType::data, [](FH h) { h.message_seq = 0; }, nullptr, Errc::malformed, "message_seq 0"},
      {"fragment beyond the message", FrameType::data, [](FH h) { h.message_length = 8191; }, nullptr,
       Errc::malformed, "beyond message_length"},
      {"huge fragment offset", FrameType::data, [](FH h) { h.fragment_offset = kMax64 - 100; }, nullptr,
       Errc::malformed, "beyond message_length"},
      {"empty fragment of a non-empty message", FrameType::data,
       [](FH h) {
         h.payload_length = 0;
         h.payload_checksum = 0;
         h.seq_count = 1;
       },
       nullptr, Errc::malformed, "payload_length 0 in a message"},
      {"negative tag", FrameType::data, [](FH h) { h.tag = -1; }, nullptr, Errc::malformed, "tag -1"},
      {"first flag on a middle fragment", FrameType::data, [](FH h) { h.flags |= kFlagFirstFragment; }, nullptr,
       Errc::malformed, "disagree with fragment position"},
      {"last flag missing", FrameType::data, [](FH h) { h.message_length = 8192; }, nullptr, Errc::malformed,
       "disagree with fragment position"},
      {"ack requested on a later fragment", FrameType::data, [](FH h) { h.flags |= kFlagAckRequested; }, nullptr,
       Errc::malformed, "not the first"},
      {"rts not at offset 0", FrameType::rts, [](FH h) { h.fragment_offset = 8; }, nullptr, Errc::malformed,
       "fragment_offset 8 is not 0"},
      {"rts without sender request", FrameType::rts, [](FH h) { h.sender_request = 0; }, nullptr, Errc::malformed,
       "sender_request 0"},
      {"single copy on data", FrameType::data, [](FH h) { h.flags |= kFlagSingleCopy; }, nullptr, Errc::malformed,
       "not allowed"},
      {"single-copy rts flagged last", FrameType::rts,
       [](FH h) {
         h.flags |= kFlagSingleCopy | kFlagLastFragment;
         h.payload_length = 16;
         h.seq_count = 16;
       },
       nullptr, Errc::malformed, "first and not last"},
      {"single-copy rts without descriptor", FrameType::rts,
       [](FH h) {
         h.flags |= kFlagSingleCopy;
         h.payload_length = 0;
         h.payload_checksum = 0;
         h.seq_count = 1;
       },
       nullptr, Errc::malformed, "without a descriptor"},
      {"rts with receiver request", FrameType::rts, [](FH h) { h.receiver_request = 1; }, nullptr, Errc::malformed,
       "receiver_request 1 must be 0"},
      {"cts without receiver request", FrameType::cts, [](FH h) { h.receiver_request = 0; }, nullptr,
       Errc::malformed, "receiver_request 0"},
      {"split-copy cts without the buffer's address", FrameType::cts,
       [](FH h) {
         h.flags |= kFlagSingleCopy;
         h.fragment_offset = 4096;
       },
       nullptr, Errc::malformed, "split-copy cts without"},
      {"split-copy cts without a split offset", FrameType::cts,
       [](FH h) {
         h.flags |= kFlagSingleCopy;
         h.message_length = 0x7f0000001000;
       },
       nullptr, Errc::malformed, "split-copy cts without"},
      {"plain cts with a split offset", FrameType::cts, [](FH h) { h.fragment_offset = 64; }, nullptr,
       Errc::malformed, "without its flag"},
      {"plain cts with a buffer address", FrameType::cts, [](FH h) { h.message_length = 64; }, nullptr,
       Errc::malformed, "without its flag"},
      {"single-copy fin without receiver request", FrameType::fin,
       [](FH h) {
         h.flags |= kFlagSingleCopy;
         h.receiver_request = 0;
       },
       nullptr, Errc::malformed, "single-copy fin without receiver_request"},
      {"fin taking two sequence numbers", FrameType::fin, [](FH h) { h.seq_count = 2; }, nullptr, Errc::malformed,
       "seq_count 2 is not 1"},
      {"fin without message_seq", FrameType::fin, [](FH h) { h.message_seq = 0; }, nullptr, Errc::malformed,
       "message_seq 0"},
      {"credit taking two sequence numbers", FrameType::credit, [](FH h) { h.seq_count = 2; }, nullptr,
       Errc::malformed, "seq_count 2 is not 1"},
      {"credit with a fragment offset", FrameType::credit, [](FH h) { h.fragment_offset = 1; }, nullptr,
       Errc::malformed, "fragment_offset 1 must be 0"},
      {"credit with a tag", FrameType::credit, [](FH h) { h.tag = 5; }, nullptr, Errc::malformed,
       "tag 5 must be 0"},
      {"withdrawn flag on a cancel", FrameType::cancel, [](FH h) { h.flags |= kFlagWithdrawn; }, nullptr,
       Errc::malformed, "not allowed"},
      {"withdrawn flag on data", FrameType::data, [](FH h) { h.flags |= kFlagWithdrawn; }, nullptr,
       Errc::malformed, "not allowed"},
      {"cancel without message_seq", FrameType::cancel, [](FH h) { h.message_seq = 0; }, nullptr, Errc::malformed,
       "message_seq 0"},
      {"cancel without sender request", FrameType::cancel, [](FH h) { h.sender_request = 0; }, nullptr,
       Errc::malformed, "sender_request 0"},
      {"cancel with a negative tag", FrameType::cancel, [](FH h) { h.tag = -3; }, nullptr, Errc::malformed,
       "tag -3"},
      {"cancel reply with a tag", FrameType::cancel_reply, [](FH h) { h.tag = 5; }, nullptr, Errc::malformed,
       "tag 5 must be 0"},
      {"cancel reply taking two sequence numbers", FrameType::cancel_reply, [](FH h) { h.seq_count = 2; },
       nullptr, Errc::malformed, "seq_count 2 is not 1"},
      {"payload checksum without a checksum kind", FrameType::data,
       [](FH h) { h.checksum_kind = ChecksumKind::none; }, nullptr, Errc::malformed, "payload_checksum"},
  };
  for (const Rejection& c : cases) {
    BOOST_TEST_CONTEXT(c.what) {
      FrameHeader h = valid_header(c.base_type);
      BOOST_TEST_REQUIRE(decode(make_frame(h), kLimits).is_ok());
      if (c.break_header) c.break_header(h);
      auto frame = make_frame(h);
      if (c.break_frame) c.break_frame(frame);
      const auto result = decode(frame, kLimits);
      FrameHeader quick;
      BOOST_TEST(!try_decode(frame, kLimits, quick));
      BOOST_TEST_REQUIRE(!result.is_ok());
      BOOST_TEST((result.code() == c.expected), result.status().to_string());
      BOOST_TEST(result.status().message().find(c.message_part) != std::string::npos,
                 "'" << result.status().message() << "' names '" << c.message_part << "'");
    }
  }
}

BOOST_AUTO_TEST_CASE(every_single_bit_flip_in_a_header_is_rejected) {
  for (FrameType type : kAllTypes) {
    const auto good = make_frame(valid_header(type));
    for (std::size_t bit = 0; bit < kHeaderSize * 8; ++bit) {
      auto frame = good;
      frame[bit / 8] ^= static_cast<std::byte>(1u << (bit % 8));
      BOOST_TEST_CONTEXT(to_string(type) << " bit " << bit) {
        BOOST_TEST(!decode(frame, kLimits).is_ok());
        FrameHeader quick;
        BOOST_TEST(!try_decode(frame, kLimits, quick));
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(a_trusted_path_skips_only_the_header_mac) {
  // Shared memory: the sender leaves the MAC 0 and the receiver does not check it; every other rule
  // still refuses a bad header.
  DecodeLimits trusted = kLimits;
  trusted.verify_header_checksum = false;
  for (FrameType type : kAllTypes) {
    BOOST_TEST_CONTEXT(to_string(type)) {
      const FrameHeader h = valid_header(type);
      auto frame = make_frame(h);
      std::array<std::byte, kHeaderSize> bare{};
      encode(h, bare, /*with_header_mac=*/false);
      BOOST_TEST(get_le(std::vector<std::byte>(bare.begin(), bare.end()), wire_offset::header_mac_low, 4) == 0u);
      BOOST_TEST(get_le(std::vector<std::byte>(bare.begin(), bare.end()), wire_offset::header_mac_high, 4) == 0u);
      std::copy(bare.begin(), bare.end(), frame.begin());
      FrameHeader quick;
      BOOST_TEST(try_decode(frame, trusted, quick));
      BOOST_TEST((quick == h));
      BOOST_TEST((decode(frame, kLimits).code() == Errc::bad_checksum));
      frame[wire_offset::type] = std::byte{0};
      BOOST_TEST(!try_decode(frame, trusted, quick));
      BOOST_TEST((decode(frame, trusted).code() == Errc::malformed));
    }
  }
}

BOOST_AUTO_TEST_CASE(truncation_at_every_length_is_rejected_as_truncated) {
  for (FrameType type : {FrameType::data, FrameType::ack}) {
    FrameHeader h = valid_header(type);
    const auto frame = make_frame(h);
    for (std::size_t length = 0; length < frame.size(); ++length) {
      BOOST_TEST_CONTEXT(to_string(type) << " length " << length) {
        BOOST_TEST((decode(std::span(frame).first(length), kLimits).code() == Errc::truncated));
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(frame_types_have_names) {
  BOOST_TEST(to_string(FrameType::data) == "data");
  BOOST_TEST(to_string(FrameType::rts) == "rts");
  BOOST_TEST(to_string(FrameType::probe_reply) == "probe_reply");
  BOOST_TEST(to_string(FrameType::credit) == "credit");
  BOOST_TEST(to_string(static_cast<FrameType>(0)) == "unknown");
}

BOOST_AUTO_TEST_CASE(describe_names_type_ranks_and_flags_on_one_line) {
  const std::string line = describe(valid_header(FrameType::data));
  BOOST_TEST(line.find("data 5->3") == 0u, line);
  BOOST_TEST(line.find("seq 9097+4096") != std::string::npos, line);
  BOOST_TEST(line.find("ack-valid") != std::string::npos, line);
  BOOST_TEST(line.find('\n') == std::string::npos);
}

BOOST_AUTO_TEST_SUITE_END()

// ---- the short frame -------------------------------------------------------------------------------

namespace {

std::vector<std::byte> make_short(const ShortHeader& h) {
  std::vector<std::byte> frame(kShortHeaderSize + h.payload_length);
  encode_short(h, std::span<std::byte, kShortHeaderSize>(frame.data(), kShortHeaderSize));
  for (std::size_t i = kShortHeaderSize; i < frame.size(); ++i) frame[i] = static_cast<std::byte>(i * 5);
  return frame;
}

// decode_short's verdict, and that try_decode_short agrees with it.
ftmpi::base::Result<ShortHeader> decode_both(std::span<const std::byte> frame, const DecodeLimits& limits) {
  auto loud = decode_short(frame, limits);
  ShortHeader quiet;
  BOOST_TEST(try_decode_short(frame, limits, quiet) == loud.is_ok());
  if (loud.is_ok()) BOOST_TEST((quiet == *loud));
  return loud;
}

}  // namespace

BOOST_AUTO_TEST_CASE(short_frame_fields_sit_little_endian_at_their_documented_offsets) {
  const ShortHeader h{.source = 0x0a0b0c0d, .context = 0x11223344, .tag = 0x55667788, .payload_length = 3,
                      .message_seq = 0x0102030405060708ULL};
  const auto frame = make_short(h);
  BOOST_TEST(frame.size() == kShortHeaderSize + 3);
  BOOST_TEST(static_cast<int>(frame[0]) == kWireVersion);
  BOOST_TEST(static_cast<int>(frame[1]) == kShortFrameType);
  BOOST_TEST(static_cast<int>(frame[2]) == 0);
  BOOST_TEST(static_cast<int>(frame[4]) == 3);
  BOOST_TEST(static_cast<int>(frame[8]) == 0x0d);
  BOOST_TEST(static_cast<int>(frame[12]) == 0x44);
  BOOST_TEST(static_cast<int>(frame[16]) == 0x88);
  BOOST_TEST(static_cast<int>(frame[24]) == 0x08);
  BOOST_TEST(static_cast<int>(frame[31]) == 0x01);
  for (std::size_t i = 32; i < kShortHeaderSize; ++i) BOOST_TEST(static_cast<int>(frame[i]) == 0);
  BOOST_TEST(kShortHeaderSize == 48u);
  BOOST_TEST(is_short_frame(frame));
}

BOOST_AUTO_TEST_CASE(short_frames_round_trip_with_random_fields) {
  std::mt19937_64 rng(ftmpi::test::seed_for("short frame round trip"));
  for (int i = 0; i < 2000; ++i) {
    ShortHeader h;
    h.source = static_cast<std::uint32_t>(rng() % kLimits.world_size);  // itself included
    h.context = static_cast<std::uint32_t>(rng());
    h.tag = static_cast<std::int32_t>(rng() % (std::uint64_t{1} << 31));
    h.payload_length = static_cast<std::uint32_t>(rng() % (kLimits.max_payload + 1));
    h.message_seq = rng() | 1;
    const auto decoded = decode_both(make_short(h), kLimits);
    BOOST_REQUIRE(decoded.is_ok());
    BOOST_TEST((*decoded == h));
  }
}

BOOST_AUTO_TEST_CASE(a_broken_short_frame_is_refused_with_its_reason) {
  const ShortHeader good{.source = 1, .context = 7, .tag = 9, .payload_length = 4, .message_seq = 5};
  struct Case {
    const char* what;
    std::function<void(std::vector<std::byte>&)> edit;
    Errc code;
  };
  const Case cases[] = {
      {"version", [](auto& f) { f[0] = std::byte{3}; }, Errc::unsupported_version},
      {"type", [](auto& f) { f[1] = std::byte{1}; }, Errc::malformed},
      {"flags", [](auto& f) { f[2] = std::byte{1}; }, Errc::malformed},
      {"pad", [](auto& f) { f[3] = std::byte{1}; }, Errc::malformed},
      {"reserved", [](auto& f) { f[22] = std::byte{1}; }, Errc::malformed},
      {"reserved tail", [](auto& f) { f[40] = std::byte{1}; }, Errc::malformed},
      {"reserved tail end", [](auto& f) { f[47] = std::byte{1}; }, Errc::malformed},
      {"length longer than present", [](auto& f) { put_le(f, 4, std::uint32_t{5}); }, Errc::truncated},
      {"length shorter than present", [](auto& f) { put_le(f, 4, std::uint32_t{3}); }, Errc::truncated},
      {"source out of range", [](auto& f) { put_le(f, 8, std::uint32_t{16}); }, Errc::malformed},
      {"negative tag", [](auto& f) { put_le(f, 16, std::int32_t{-1}); }, Errc::malformed},
      {"message_seq 0", [](auto& f) { put_le(f, 24, std::uint64_t{0}); }, Errc::malformed},
      {"truncated header", [](auto& f) { f.resize(kShortHeaderSize - 1); }, Errc::truncated},
  };
  for (const Case& c : cases) {
    auto frame = make_short(good);
    c.edit(frame);
    const auto decoded = decode_both(frame, kLimits);
    BOOST_TEST_INFO(c.what);
    BOOST_TEST((decoded.code() == c.code), decoded.status().to_string());
  }
  DecodeLimits small = kLimits;
  small.max_payload = 3;
  BOOST_TEST((decode_both(make_short(good), small).code() == Errc::malformed));
  // The full decoder never takes a short frame for a full one.
  auto full = make_short(good);
  full.resize(kHeaderSize + 4);
  BOOST_TEST(!decode(full, kLimits).is_ok());
}

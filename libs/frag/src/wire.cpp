#include "ftmpi/frag/wire.hpp"

#include <sodium.h>

#include <algorithm>
#include <bit>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <iterator>
#include <limits>
#include <type_traits>

namespace ftmpi::frag {
namespace {

using base::Errc;
using base::Status;

using le::load;
using le::store;

// Which optional fields a frame type carries; every field it does not carry must be zero.
enum Uses : std::uint16_t {
  kUsesMatching = 1 << 0,     // context, tag
  kUsesMessageSeq = 1 << 1,
  kUsesSeqRange = 1 << 2,     // seq_first, seq_count
  kUsesPayload = 1 << 3,      // payload_length, payload_checksum
  kUsesMessageLength = 1 << 4,  // message_length (a credit frame's grant)
  kUsesSenderRequest = 1 << 5,
  kUsesReceiverRequest = 1 << 6,
  kUsesFragmentOffset = 1 << 7,
};

struct TypeRule {
  std::uint16_t uses;
  std::uint8_t allowed_flags;
};

constexpr std::uint16_t kFragmentUses = kUsesMatching | kUsesMessageSeq | kUsesSeqRange | kUsesPayload |
                                        kUsesMessageLength | kUsesFragmentOffset | kUsesSenderRequest;

// Indexed by FrameType; index 0 is no type.
constexpr TypeRule kTypeRules[] = {
    {0, 0},
    {kFragmentUses | kUsesReceiverRequest, kKnownFlags & ~kFlagSingleCopy},                 // data
    {kUsesSeqRange, kFlagAckValid},                                                         // ack
    {kUsesSeqRange, kFlagAckValid},                                                         // nack
    {kFragmentUses, kKnownFlags},                                                           // rts
    {kUsesMessageSeq | kUsesSeqRange | kUsesSenderRequest | kUsesReceiverRequest | kUsesMessageLength |
         kUsesFragmentOffset,
     kFlagAckValid | kFlagSingleCopy},                                                      // cts
    {kUsesMessageSeq | kUsesSeqRange | kUsesSenderRequest | kUsesReceiverRequest, kFlagAckValid | kFlagSingleCopy},  // fin
    {kUsesSenderRequest, kFlagAckValid},                                                    // probe
    {kUsesSenderRequest, kFlagAckValid},                                                    // probe_reply
    {0, 0},                                                                                 // 9: a short frame
    {kUsesSeqRange | kUsesMessageLength, kFlagAckValid},                                    // credit
    {kUsesMatching | kUsesMessageSeq | kUsesSeqRange | kUsesSenderRequest, kFlagAckValid},  // cancel
    {kUsesMessageSeq | kUsesSeqRange | kUsesSenderRequest, kFlagAckValid | kFlagWithdrawn},  // cancel_reply
};
constexpr auto kMaxFrameType = static_cast<std::uint8_t>(FrameType::cancel_reply);
static_assert(std::size(kTypeRules) == kMaxFrameType + 1u);

std::string hex(std::uint64_t value) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%" PRIx64, value);
  return buf;
}

using detail::Loud;
using detail::num;
using detail::Quiet;

#define FTMPI_WIRE_CHECK(expr)             \
  do {                                     \
    auto verdict_ = (expr);                \
    if (!V::good(verdict_)) return verdict_; \
  } while (0)

// A field the frame type does not carry but which is not zero.
template <typename V>
typename V::R check_unused_fields(const FrameHeader& h, std::uint16_t uses) {
  struct Optional {
    std::uint16_t use;
    std::string_view name;
    std::uint64_t value;
  };
  const Optional fields[] = {
      {kUsesMatching, "context", h.context},
      {kUsesMatching, "tag", static_cast<std::uint32_t>(h.tag)},
      {kUsesMessageSeq, "message_seq", h.message_seq},
      {kUsesSeqRange, "seq_first", h.seq_first},
      {kUsesSeqRange, "seq_count", h.seq_count},
      {kUsesPayload, "payload_length", h.payload_length},
      {kUsesPayload, "payload_checksum", h.payload_checksum},
      {kUsesMessageLength, "message_length", h.message_length},
      {kUsesFragmentOffset, "fragment_offset", h.fragment_offset},
      {kUsesSenderRequest, "sender_request", h.sender_request},
      {kUsesReceiverRequest, "receiver_request", h.receiver_request},
  };
  for (const Optional& field : fields) {
    if ((uses & field.use) == 0 && field.value != 0) {
      return V::malformed(h, [&] {
        return std::string(field.name) + " " + num(field.value) + " must be 0 (not used by this type)";
      });
    }
  }
  return V::kOk;
}

template <typename V>
typename V::R check_ack(const FrameHeader& h) {
  if ((h.flags & kFlagAckValid) == 0) {
    if (h.type == FrameType::ack) return V::malformed(h, [] { return std::string("flags lack ack-valid"); });
    if (h.lirs != 0 || h.lids != 0) {
      return V::malformed(h, [&] {
        return "lirs " + num(h.lirs) + " / lids " + num(h.lids) + " set without ack-valid flag";
      });
    }
    return V::kOk;
  }
  if (h.lids > h.lirs) return V::malformed(h, [&] { return "lids " + num(h.lids) + " beyond lirs " + num(h.lirs); });
  return V::kOk;
}

template <typename V>
typename V::R check_seq_range(const FrameHeader& h) {
  if (h.seq_first == 0) return V::malformed(h, [] { return std::string("seq_first 0 (sequence numbers start at 1)"); });
  if (h.seq_count == 0) return V::malformed(h, [] { return std::string("seq_count 0"); });
  if (h.seq_first - 1 > std::numeric_limits<std::uint64_t>::max() - h.seq_count) {
    return V::malformed(h, [&] {
      return "seq_first " + num(h.seq_first) + " + seq_count " + num(h.seq_count) + " overflows 64 bits";
    });
  }
  return V::kOk;
}

// Data and RTS: a piece of a message, placed by offset and sequenced by byte.
template <typename V>
typename V::R check_fragment(const FrameHeader& h) {
  if (h.type == FrameType::rts) {
    if (h.fragment_offset != 0) {
      return V::malformed(h, [&] { return "fragment_offset " + num(h.fragment_offset) + " is not 0"; });
    }
    if (h.sender_request == 0) {
      return V::malformed(h, [] { return std::string("sender_request 0 (clear-to-send could not name it)"); });
    }
  }
  if (h.message_seq == 0) return V::malformed(h, [] { return std::string("message_seq 0 (message sequence starts at 1)"); });
  if (h.tag < 0) return V::malformed(h, [&] { return "tag " + std::to_string(h.tag) + " is negative"; });
  if (h.seq_count != message_seq_count(h.payload_length)) {
    return V::malformed(h, [&] {
      return "seq_count " + num(h.seq_count) + " does not match payload_length " + num(h.payload_length);
    });
  }
  if ((h.flags & kFlagSingleCopy) != 0) {
    if ((h.flags & (kFlagFirstFragment | kFlagLastFragment)) != kFlagFirstFragment) {
      return V::malformed(h, [&] { return "flags " + hex(h.flags) + ": a single-copy rts is first and not last"; });
    }
    if (h.payload_length == 0) {
      return V::malformed(h, [] { return std::string("single-copy rts without a descriptor (payload_length 0)"); });
    }
    return V::kOk;
  }
  // An RTS may come without payload (its sender was out of eager credit); a DATA fragment may not.
  if (h.type == FrameType::data && h.payload_length == 0 && h.message_length != 0) {
    return V::malformed(h, [&] { return "payload_length 0 in a message of " + num(h.message_length) + " bytes"; });
  }
  if (h.fragment_offset > h.message_length || h.payload_length > h.message_length - h.fragment_offset) {
    return V::malformed(h, [&] {
      return "fragment_offset " + num(h.fragment_offset) + " + payload_length " + num(h.payload_length) +
             " beyond message_length " + num(h.message_length);
    });
  }
  // Every earlier byte of the message took a sequence number before this fragment's first, and every
  // later one takes one after: the numbers below this fragment must exist (from 1), and the rest of the
  // message must fit below 2^64, or no receiver could place it.
  if (h.seq_first <= h.fragment_offset) {
    return V::malformed(h, [&] {
      return "seq_first " + num(h.seq_first) + " not above fragment_offset " + num(h.fragment_offset) +
             " (message would start at sequence 0)";
    });
  }
  if (h.seq_first - h.fragment_offset - 1 >
      std::numeric_limits<std::uint64_t>::max() - message_seq_count(h.message_length)) {
    return V::malformed(h, [&] {
      return "sequence range of the " + num(h.message_length) + "-byte message overflows 64 bits";
    });
  }
  const std::uint8_t position = fragment_position_flags(h.fragment_offset, h.payload_length, h.message_length);
  if ((h.flags & (kFlagFirstFragment | kFlagLastFragment)) != position) {
    return V::malformed(h, [&] {
      return "flags " + hex(h.flags) + " disagree with fragment position (expected first/last bits " +
             hex(position) + ")";
    });
  }
  if ((h.flags & kFlagAckRequested) != 0 && (h.flags & kFlagFirstFragment) == 0) {
    return V::malformed(h, [] { return std::string("flags ask for an ack on a fragment that is not the first"); });
  }
  return V::kOk;
}

template <typename V>
typename V::R check_type_specific(const FrameHeader& h) {
  switch (h.type) {
    case FrameType::data:
    case FrameType::rts:
      return check_fragment<V>(h);
    case FrameType::cts:
    case FrameType::fin:
      if (h.message_seq == 0) return V::malformed(h, [] { return std::string("message_seq 0 (message sequence starts at 1)"); });
      if (h.seq_count != 1) return V::malformed(h, [&] { return "seq_count " + num(h.seq_count) + " is not 1"; });
      if (h.sender_request == 0) return V::malformed(h, [] { return std::string("sender_request 0"); });
      if (h.type == FrameType::cts && h.receiver_request == 0) {
        return V::malformed(h, [] { return std::string("receiver_request 0"); });
      }
      if (h.type == FrameType::cts) {
        // A split copy's CTS names the receive buffer and where the sender's half begins; a plain one neither.
        const bool split = (h.flags & kFlagSingleCopy) != 0;
        if (split && (h.message_length == 0 || h.fragment_offset == 0)) {
          return V::malformed(h, [] { return std::string("split-copy cts without a buffer address or split offset"); });
        }
        if (!split && (h.message_length != 0 || h.fragment_offset != 0)) {
          return V::malformed(h, [&] {
            return "cts: message_length " + num(h.message_length) + " and fragment_offset " + num(h.fragment_offset) +
                   " are a split copy's, without its flag";
          });
        }
      }
      // A FIN with the flag says a split copy's second half was written: only the sender's, naming the receive.
      if (h.type == FrameType::fin && (h.flags & kFlagSingleCopy) != 0 && h.receiver_request == 0) {
        return V::malformed(h, [] { return std::string("single-copy fin without receiver_request"); });
      }
      return V::kOk;
    case FrameType::credit:
      if (h.seq_count != 1) return V::malformed(h, [&] { return "seq_count " + num(h.seq_count) + " is not 1"; });
      return V::kOk;
    case FrameType::cancel:
    case FrameType::cancel_reply:
      if (h.message_seq == 0) return V::malformed(h, [] { return std::string("message_seq 0 (message sequence starts at 1)"); });
      if (h.seq_count != 1) return V::malformed(h, [&] { return "seq_count " + num(h.seq_count) + " is not 1"; });
      if (h.sender_request == 0) return V::malformed(h, [] { return std::string("sender_request 0"); });
      if (h.type == FrameType::cancel && h.tag < 0) {
        return V::malformed(h, [&] { return "tag " + std::to_string(h.tag) + " is negative"; });
      }
      return V::kOk;
    case FrameType::ack:
    case FrameType::nack:
    case FrameType::probe:
    case FrameType::probe_reply:
      return V::kOk;
  }
  return V::kOk;
}

template <typename V>
typename V::R validate(const FrameHeader& h, std::size_t payload_present, const DecodeLimits& limits) {
  const TypeRule& rule = kTypeRules[static_cast<std::uint8_t>(h.type)];
  if ((h.flags & ~rule.allowed_flags) != 0) {
    return V::malformed(h, [&] {
      return "flags " + hex(h.flags) + " not allowed (allowed " + hex(rule.allowed_flags) + ")";
    });
  }
  if (h.source >= limits.world_size) {
    return V::malformed(h, [&] {
      return "source rank " + num(h.source) + " out of range (world size " + num(limits.world_size) + ")";
    });
  }
  if (h.destination >= limits.world_size) {
    return V::malformed(h, [&] {
      return "destination rank " + num(h.destination) + " out of range (world size " + num(limits.world_size) + ")";
    });
  }
  if (h.destination != limits.my_rank) {
    return V::malformed(h, [&] {
      return "destination rank " + num(h.destination) + " is not me (" + num(limits.my_rank) + ")";
    });
  }
  if ((rule.uses & kUsesPayload) != 0 && h.payload_length > limits.max_payload) {
    return V::malformed(h, [&] {
      return "payload_length " + num(h.payload_length) + " exceeds the limit " + num(limits.max_payload);
    });
  }
  if (h.payload_length > payload_present) {
    return V::fail(Errc::truncated, [&] {
      return std::string(to_string(h.type)) + " frame: payload_length " + num(h.payload_length) + " but " +
             num(payload_present) + " bytes follow the header";
    });
  }
  if (h.payload_length < payload_present) {
    return V::malformed(h, [&] {
      return num(payload_present - h.payload_length) + " bytes after the payload of " + num(h.payload_length);
    });
  }
  FTMPI_WIRE_CHECK(check_unused_fields<V>(h, rule.uses));
  FTMPI_WIRE_CHECK(check_ack<V>(h));
  // An ACK's selective range is optional (both zero: none); where present it is checked like any range.
  const bool no_range = h.type == FrameType::ack && h.seq_first == 0 && h.seq_count == 0;
  if ((rule.uses & kUsesSeqRange) != 0 && !no_range) FTMPI_WIRE_CHECK(check_seq_range<V>(h));
  FTMPI_WIRE_CHECK(check_type_specific<V>(h));
  if (h.payload_checksum != 0 && (h.checksum_kind == ChecksumKind::none || h.payload_length == 0)) {
    return V::malformed(h, [&] {
      return "payload_checksum " + hex(h.payload_checksum) + " without a checksummed payload";
    });
  }
  return V::kOk;
}

// decode() in either verdict: fills `h` and answers V::kOk when the frame is acceptable.
template <typename V>
typename V::R decode_into(std::span<const std::byte> header, std::size_t frame_length, const DecodeLimits& limits,
                          FrameHeader& h) {
  // Nothing is believed before the version says how to read the rest and the checksum says it is
  // intact; the job key is only compared on an intact header, so corruption is not miscounted as a
  // stray job.
  if (header.empty() || frame_length == 0) [[unlikely]] {
    return V::fail(Errc::truncated, [] { return std::string("empty frame"); });
  }
  const std::byte* p = header.data();
  const auto version = load<std::uint8_t>(p, wire_offset::version);
  if (version != kWireVersion) [[unlikely]] {
    return V::fail(Errc::unsupported_version, [&] {
      return "version " + num(version) + " (this build speaks " + num(kWireVersion) + ")";
    });
  }
  if (header.size() < kHeaderSize || frame_length < kHeaderSize) [[unlikely]] {
    return V::fail(Errc::truncated, [&] {
      return num(std::min(header.size(), frame_length)) + " bytes, shorter than the " + num(kHeaderSize) +
             "-byte header";
    });
  }
  if (limits.verify_header_checksum) {
    const std::uint64_t stored = std::uint64_t{load<std::uint32_t>(p, wire_offset::header_mac_low)} |
                                 std::uint64_t{load<std::uint32_t>(p, wire_offset::header_mac_high)} << 32;
    if (limits.payload_mac && header.size() < frame_length) [[unlikely]] {
      return V::fail(Errc::bad_checksum, [] {
        return std::string("a header without its payload cannot be verified (engine.integrity=mac)");
      });
    }
    const std::uint64_t expected =
        limits.payload_mac ? frame_mac(p, header.subspan(kHeaderSize, frame_length - kHeaderSize), limits.payload_key)
                           : header_mac(p, limits.key);
    if (expected != stored) [[unlikely]] {
      // Another job's frame (a stale port) fails here too, its key being another, and is counted with
      // the corrupted: a job key is 8 of the 112 bytes corruption may hit, so it cannot tell them apart.
      // The computed MAC is never said: it would hand a forger the tag it lacks.
      return V::fail(Errc::bad_checksum, [&] {
        return "header_mac " + hex(stored) + " is not this job's (forged, another job's, or corrupted)";
      });
    }
  }
  h.job_key = load<std::uint64_t>(p, wire_offset::job_key);
  if (h.job_key != limits.job_key) [[unlikely]] {
    return V::fail(Errc::wrong_job, [&] { return "job_key " + hex(h.job_key) + ", expected " + hex(limits.job_key); });
  }
  const auto type = load<std::uint8_t>(p, wire_offset::type);
  if (type == 0 || type == kShortFrameType || type > kMaxFrameType) [[unlikely]] {
    return V::fail(Errc::malformed, [&] { return "frame type " + num(type) + " unknown"; });
  }
  h.type = static_cast<FrameType>(type);
  h.flags = load<std::uint8_t>(p, wire_offset::flags);
  if ((h.flags & ~(kKnownFlags | kFlagWithdrawn)) != 0) [[unlikely]] {
    return V::malformed(h, [&] {
      return "flags " + hex(h.flags) + " has unknown bits " + hex(h.flags & ~(kKnownFlags | kFlagWithdrawn));
    });
  }
  const auto kind = load<std::uint8_t>(p, wire_offset::checksum_kind);
  if (kind > static_cast<std::uint8_t>(ChecksumKind::sum32)) [[unlikely]] {
    return V::malformed(h, [&] { return "checksum_kind " + num(kind) + " unknown"; });
  }
  h.checksum_kind = static_cast<ChecksumKind>(kind);
  h.source = load<std::uint32_t>(p, wire_offset::source);
  h.destination = load<std::uint32_t>(p, wire_offset::destination);
  h.context = load<std::uint32_t>(p, wire_offset::context);
  h.tag = load<std::int32_t>(p, wire_offset::tag);
  h.message_seq = load<std::uint64_t>(p, wire_offset::message_seq);
  h.seq_first = load<std::uint64_t>(p, wire_offset::seq_first);
  h.seq_count = load<std::uint32_t>(p, wire_offset::seq_count);
  h.payload_length = load<std::uint32_t>(p, wire_offset::payload_length);
  h.message_length = load<std::uint64_t>(p, wire_offset::message_length);
  h.fragment_offset = load<std::uint64_t>(p, wire_offset::fragment_offset);
  h.lirs = load<std::uint64_t>(p, wire_offset::lirs);
  h.lids = load<std::uint64_t>(p, wire_offset::lids);
  h.sender_request = load<std::uint64_t>(p, wire_offset::sender_request);
  h.receiver_request = load<std::uint64_t>(p, wire_offset::receiver_request);
  h.payload_checksum = load<std::uint32_t>(p, wire_offset::payload_checksum);
  return validate<V>(h, frame_length - kHeaderSize, limits);
}


#undef FTMPI_WIRE_CHECK
// What the payload MAC (frame_mac) reads of a header: its bytes with the MAC's own halves zero. One call
// over such a copy costs less, for 112 bytes, than two calls around the halves.
std::array<unsigned char, kHeaderSize> mac_input(const std::byte* header) noexcept {
  std::array<unsigned char, kHeaderSize> copy;
  std::memcpy(copy.data(), header, kHeaderSize);
  std::memset(copy.data() + wire_offset::header_mac_low, 0, 4);
  std::memset(copy.data() + wire_offset::header_mac_high, 0, 4);
  return copy;
}

void store_mac(std::byte* header, std::uint64_t mac) noexcept {
  store(header, wire_offset::header_mac_low, static_cast<std::uint32_t>(mac));
  store(header, wire_offset::header_mac_high, static_cast<std::uint32_t>(mac >> 32));
}

}  // namespace

base::Result<ShortHeader> decode_short(std::span<const std::byte> frame, const DecodeLimits& limits) {
  ShortHeader h;
  if (Status s = detail::decode_short_into<Loud>(frame, limits, h); !s) return s;
  return h;
}


std::string_view to_string(FrameType type) noexcept {
  switch (type) {
    case FrameType::data: return "data";
    case FrameType::ack: return "ack";
    case FrameType::nack: return "nack";
    case FrameType::rts: return "rts";
    case FrameType::cts: return "cts";
    case FrameType::fin: return "fin";
    case FrameType::probe: return "probe";
    case FrameType::probe_reply: return "probe_reply";
    case FrameType::credit: return "credit";
    case FrameType::cancel: return "cancel";
    case FrameType::cancel_reply: return "cancel_reply";
  }
  return "unknown";
}

void encode(const FrameHeader& h, std::span<std::byte, kHeaderSize> out, bool with_header_mac,
            const FrameKey& key) noexcept {
  std::byte* p = out.data();
  store(p, wire_offset::version, kWireVersion);
  store(p, wire_offset::type, static_cast<std::uint8_t>(h.type));
  store(p, wire_offset::flags, h.flags);
  store(p, wire_offset::checksum_kind, static_cast<std::uint8_t>(h.checksum_kind));
  store(p, wire_offset::header_mac_low, std::uint32_t{0});
  store(p, wire_offset::job_key, h.job_key);
  store(p, wire_offset::source, h.source);
  store(p, wire_offset::destination, h.destination);
  store(p, wire_offset::context, h.context);
  store(p, wire_offset::tag, h.tag);
  store(p, wire_offset::message_seq, h.message_seq);
  store(p, wire_offset::seq_first, h.seq_first);
  store(p, wire_offset::seq_count, h.seq_count);
  store(p, wire_offset::payload_length, h.payload_length);
  store(p, wire_offset::message_length, h.message_length);
  store(p, wire_offset::fragment_offset, h.fragment_offset);
  store(p, wire_offset::lirs, h.lirs);
  store(p, wire_offset::lids, h.lids);
  store(p, wire_offset::sender_request, h.sender_request);
  store(p, wire_offset::receiver_request, h.receiver_request);
  store(p, wire_offset::payload_checksum, h.payload_checksum);
  store(p, wire_offset::header_mac_high, std::uint32_t{0});
  if (with_header_mac) seal_header(out, key);
}

void seal_header(std::span<std::byte, kHeaderSize> header, const FrameKey& key) noexcept {
  store_mac(header.data(), header_mac(header.data(), key));
}

FrameKey derive_frame_key(std::span<const std::uint8_t> secret) noexcept {
  static constexpr char kLabel[] = "ftmpi frame header MAC v1";
  // Picks the fastest BLAKE2b (safe to call again). It fails only when the kernel has no entropy to seed
  // libsodium's random generator, which BLAKE2b does not use.
  [[maybe_unused]] const int initialised = sodium_init();
  FrameKey key{};
  const std::size_t key_bytes = std::min<std::size_t>(secret.size(), crypto_generichash_KEYBYTES_MAX);
  crypto_generichash(reinterpret_cast<unsigned char*>(key.data()), key.size(),
                     reinterpret_cast<const unsigned char*>(kLabel), sizeof kLabel - 1, secret.data(), key_bytes);
  return key;
}

// SipHash-2-4 (Aumasson and Bernstein; the algorithm libsodium's crypto_shorthash_siphash24 implements,
// which wire_test.cpp recomputes it with) read straight from the header, the MAC's two halves masked out
// of the first and last words as they are loaded: libsodium's call over a copy cost 643 instructions per
// header, this 574; the two per zero-byte UDP round trip (one sealed, one verified) are still a quarter of
// what rank 0 executes for it (docs/benchmarks.md).
namespace {
constexpr std::uint64_t rotl(std::uint64_t x, int b) noexcept { return (x << b) | (x >> (64 - b)); }
struct SipState {
  std::uint64_t v0, v1, v2, v3;
  [[gnu::always_inline]] void round() noexcept {
    v0 += v1; v1 = rotl(v1, 13); v1 ^= v0; v0 = rotl(v0, 32);
    v2 += v3; v3 = rotl(v3, 16); v3 ^= v2;
    v0 += v3; v3 = rotl(v3, 21); v3 ^= v0;
    v2 += v1; v1 = rotl(v1, 17); v1 ^= v2; v2 = rotl(v2, 32);
  }
  [[gnu::always_inline]] void compress(std::uint64_t m) noexcept {
    v3 ^= m;
    round();
    round();
    v0 ^= m;
  }
};
static_assert(kHeaderSize % 8 == 0 && wire_offset::header_mac_low == 4 && wire_offset::header_mac_high == kHeaderSize - 4,
              "the masks below take the MAC's halves as the upper half of the first and of the last word");
}  // namespace

std::uint64_t header_mac(const std::byte* header, const FrameKey& key) noexcept {
  const std::uint64_t k0 = load<std::uint64_t>(key.data(), 0);
  const std::uint64_t k1 = load<std::uint64_t>(key.data(), 8);
  SipState s{k0 ^ 0x736f6d6570736575ULL, k1 ^ 0x646f72616e646f6dULL, k0 ^ 0x6c7967656e657261ULL,
             k1 ^ 0x7465646279746573ULL};
  constexpr std::uint64_t kLowHalf = 0xffffffffULL;  // bytes 0-3 of a little-endian word
  constexpr std::size_t kWords = kHeaderSize / 8;
  s.compress(load<std::uint64_t>(header, 0) & kLowHalf);
  for (std::size_t i = 1; i + 1 < kWords; ++i) s.compress(load<std::uint64_t>(header, 8 * i));
  s.compress(load<std::uint64_t>(header, kHeaderSize - 8) & kLowHalf);
  s.compress(std::uint64_t{kHeaderSize} << 56);  // no bytes left over: the length alone
  s.v2 ^= 0xff;
  for (int i = 0; i < 4; ++i) s.round();
  return s.v0 ^ s.v1 ^ s.v2 ^ s.v3;
}

std::uint64_t frame_mac(const std::byte* header, std::span<const std::byte> payload, const FrameKey& key) noexcept {
  const std::array<unsigned char, kHeaderSize> copy = mac_input(header);
  crypto_generichash_state state;
  // BLAKE2b's shortest output is 16 bytes; the first 8 are the tag (truncation keeps a PRF's strength).
  unsigned char tag[crypto_generichash_BYTES_MIN];
  static_assert(sizeof(FrameKey) >= crypto_generichash_KEYBYTES_MIN);
  crypto_generichash_init(&state, reinterpret_cast<const unsigned char*>(key.data()), key.size(), sizeof tag);
  crypto_generichash_update(&state, copy.data(), copy.size());
  crypto_generichash_update(&state, reinterpret_cast<const unsigned char*>(payload.data()), payload.size());
  crypto_generichash_final(&state, tag, sizeof tag);
  std::uint64_t mac = 0;
  for (int i = 0; i < 8; ++i) mac |= std::uint64_t{tag[i]} << (8 * i);
  return mac;
}

void seal_frame(std::span<std::byte> frame, const FrameKey& key) noexcept {
  store_mac(frame.data(), frame_mac(frame.data(), frame.subspan(kHeaderSize), key));
}

FrameKey derive_payload_key(const FrameKey& frame_key) noexcept {
  static constexpr char kLabel[] = "ftmpi frame and payload MAC v1";
  [[maybe_unused]] const int initialised = sodium_init();
  FrameKey key{};
  crypto_generichash(reinterpret_cast<unsigned char*>(key.data()), key.size(),
                     reinterpret_cast<const unsigned char*>(kLabel), sizeof kLabel - 1,
                     reinterpret_cast<const unsigned char*>(frame_key.data()), frame_key.size());
  return key;
}

base::Result<FrameHeader> decode(std::span<const std::byte> frame, const DecodeLimits& limits) {
  return decode(frame, frame.size(), limits);
}

base::Result<FrameHeader> decode(std::span<const std::byte> header, std::size_t frame_length,
                                 const DecodeLimits& limits) {
  FrameHeader h;
  if (Status s = decode_into<Loud>(header, frame_length, limits, h); !s) return s;
  return h;
}

bool try_decode(std::span<const std::byte> frame, const DecodeLimits& limits, FrameHeader& out) noexcept {
  return decode_into<Quiet>(frame, frame.size(), limits, out);
}

bool try_decode(std::span<const std::byte> header, std::size_t frame_length, const DecodeLimits& limits,
                FrameHeader& out) noexcept {
  return decode_into<Quiet>(header, frame_length, limits, out);
}

std::string describe(const FrameHeader& h) {
  std::string flags;
  const auto add_flag = [&](std::uint8_t bit, std::string_view name) {
    if ((h.flags & bit) == 0) return;
    if (!flags.empty()) flags += ',';
    flags += name;
  };
  add_flag(kFlagFirstFragment, "first");
  add_flag(kFlagLastFragment, "last");
  add_flag(kFlagAckRequested, "ack-requested");
  add_flag(kFlagAckValid, "ack-valid");
  add_flag(kFlagSingleCopy, "single-copy");
  add_flag(kFlagWithdrawn, "withdrawn");
  char buf[512];
  std::snprintf(buf, sizeof buf,
                "%.*s %" PRIu32 "->%" PRIu32 " ctx %" PRIu32 " tag %" PRId32 " msg %" PRIu64 " seq %" PRIu64
                "+%" PRIu32 " off %" PRIu64 "/%" PRIu64 " len %" PRIu32 " %.*s 0x%08" PRIx32
                " flags %s ack %" PRIu64 "/%" PRIu64 " req 0x%" PRIx64 ":0x%" PRIx64,
                static_cast<int>(to_string(h.type).size()), to_string(h.type).data(), h.source, h.destination,
                h.context, h.tag, h.message_seq, h.seq_first, h.seq_count, h.fragment_offset, h.message_length,
                h.payload_length, static_cast<int>(to_string(h.checksum_kind).size()),
                to_string(h.checksum_kind).data(), h.payload_checksum, flags.empty() ? "-" : flags.c_str(), h.lirs, h.lids,
                h.sender_request, h.receiver_request);
  return buf;
}

}  // namespace ftmpi::frag

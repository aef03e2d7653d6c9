// The wire format: one 112-byte header in front of every frame (docs/wire-format.md).
//
// Every frame, whatever its kind, is this header followed by `payload_length` payload bytes. The header
// has a fixed little-endian layout, encoded and decoded field by field, so it reads the same on every
// host; the version byte comes first so that a later layout can be recognised before anything else is
// read. 8-byte fields sit on 8-byte offsets, and the header is a multiple of 8 bytes long so that the
// payload behind it stays 8-byte aligned in a frame buffer.
//
//   byte  0         1         2         3         4         5         6         7
//       +---------+---------+---------+---------+---------+---------+---------+---------+
//     0 | version |  type   |  flags  | cksum   |      header_mac, low 32 bits          |
//       +---------+---------+---------+---------+---------+---------+---------+---------+
//     8 |                               job_key                                         |
//       +---------------------------------------+---------------------------------------+
//    16 |               source                  |             destination               |
//       +---------------------------------------+---------------------------------------+
//    24 |               context                 |               tag (int32)             |
//       +---------------------------------------+---------------------------------------+
//    32 |                             message_seq                                       |
//       +-------------------------------------------------------------------------------+
//    40 |                              seq_first                                        |
//       +---------------------------------------+---------------------------------------+
//    48 |               seq_count               |            payload_length             |
//       +---------------------------------------+---------------------------------------+
//    56 |                            message_length                                     |
//       +-------------------------------------------------------------------------------+
//    64 |                           fragment_offset                                     |
//       +-------------------------------------------------------------------------------+
//    72 |                     lirs (piggybacked ACK: last in-order received)            |
//       +-------------------------------------------------------------------------------+
//    80 |                     lids (piggybacked ACK: last in-order delivered)           |
//       +-------------------------------------------------------------------------------+
//    88 |                            sender_request                                     |
//       +-------------------------------------------------------------------------------+
//    96 |                           receiver_request                                    |
//       +---------------------------------------+---------------------------------------+
//   104 |           payload_checksum            |      header_mac, high 32 bits         |
//       +---------------------------------------+---------------------------------------+
//   112   payload (payload_length bytes)
//
// Frame types. "seq" says whether the frame occupies byte sequence numbers of its ordered process
// pair: such frames are acknowledged through LIRS/LIDS, retransmitted and de-duplicated like data, so
// the protocol has one reliability mechanism. Probes are per rail and must not touch the stream.
//
//   | value | name        | seq         | payload | what it is                                         |
//   |-------|-------------|-------------|---------|----------------------------------------------------|
//   | 1     | data        | max(len, 1) | yes     | a fragment of an eager message, or of a rendezvous |
//   |       |             |             |         | message after clear-to-send                        |
//   | 2     | ack         | none        | no      | the LIRS/LIDS of the reverse way, and optionally a |
//   |       |             |             |         | selective range (seq_first/seq_count) received     |
//   |       |             |             |         | above LIRS, so frames past a hole are not resent   |
//   | 3     | nack        | the refused | no      | "these bytes failed their checksum: resend them"   |
//   |       |             | range       |         |                                                    |
//   | 4     | rts         | max(len, 1) | yes     | rendezvous request-to-send with the first fragment |
//   |       |             |             |         | (single-copy: a descriptor of the sender's memory; |
//   |       |             |             |         | none when the sender is out of eager credit)       |
//   | 5     | cts         | 1           | no      | clear-to-send: the receiver matched an RTS         |
//   | 6     | fin         | 1           | no      | finish: the receiver holds the whole message (a    |
//   |       |             |             |         | rendezvous, or a synchronous send once matched)    |
//   | 7     | probe       | none        | no      | is this (down) rail alive again?                   |
//   | 8     | probe_reply | none        | no      | yes: echoes the probe's sender_request             |
//   | 10    | credit      | 1           | no      | eager credit: message_length carries the receiver's|
//   |       |             |             |         | grant (eager bytes the sender may have sent, all   |
//   |       |             |             |         | told; cumulative, so the newest one wins)          |
//
// header_mac: SipHash-2-4 (as libsodium's crypto_shorthash) of the 112 header bytes with both of its halves
// taken as zero, keyed with the job's FrameKey, which is derived from the job's secret and never travels.
// The header carries the payload checksum, so the MAC covers the payload too: a frame from anyone
// without the key (another job, a forger who read the job key off the wire) is refused as bad_checksum,
// and accidental corruption of the header is caught with 2^-64 odds of a miss, not CRC32C's 2^-32.
// Frames on a trusted path (DecodeLimits::verify_header_checksum false) carry 0 there.
//
// With engine.integrity=mac (DecodeLimits::payload_mac) the same field carries instead a MAC of the header
// and the payload: keyed BLAKE2b (libsodium's crypto_generichash; the first 8 of 16 bytes) over the 112 header
// bytes with the MAC's halves zero, then the payload, keyed with derive_payload_key(FrameKey). A payload
// checksum catches accidents; an adversary who can change a frame in flight can also make a payload with
// the same CRC32C (or sum32), which the header MAC alone would then let through.
//
// Type 0 is invalid so that a zeroed buffer is never a frame. A field that a frame type does not use
// must be zero; decode() enforces it, so every accepted header re-encodes to the same bytes.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "ftmpi/base/status.hpp"
#include "ftmpi/frag/checksum.hpp"
#include "ftmpi/frag/le_bytes.hpp"

namespace ftmpi::frag {

inline constexpr std::uint8_t kWireVersion = 2;  // 2: a keyed MAC where 1 had CRC32C and reserved bytes
inline constexpr std::size_t kHeaderSize = 112;

// The key of every frame's header MAC: 16 bytes, the same for every rank of a job.
using FrameKey = std::array<std::byte, 16>;

enum class FrameType : std::uint8_t {
  data = 1,
  ack = 2,
  nack = 3,
  rts = 4,
  cts = 5,
  fin = 6,
  probe = 7,
  probe_reply = 8,
  // 9 is the short frame's (kShortFrameType), which is not a FrameHeader.
  credit = 10,
  // A sender asks to withdraw a rendezvous message its receiver has not matched (MPI_Cancel of a send):
  // message_seq, context and tag name it, sender_request the send. Answered by cancel_reply, which
  // carries kFlagWithdrawn when the message was taken out of matching (the send then completes as
  // cancelled) and not when a receive matched it first (the send goes on).
  cancel = 11,
  cancel_reply = 12,
};

std::string_view to_string(FrameType type) noexcept;

// Bits of FrameHeader::flags; any other bit set makes a frame malformed.
inline constexpr std::uint8_t kFlagFirstFragment = 0x01;  // fragment_offset == 0 (data, rts)
inline constexpr std::uint8_t kFlagLastFragment = 0x02;   // the fragment ends the message (data, rts)
// Synchronous send (MPI_Ssend): answer with a FIN once matched. Only on a first fragment.
inline constexpr std::uint8_t kFlagAckRequested = 0x04;
inline constexpr std::uint8_t kFlagAckValid = 0x08;  // lirs/lids carry an acknowledgement
// RTS only: the payload is not the message's first bytes but a descriptor of where the sender's memory
// holds the message, for the receiver to read it in one copy (shared memory, process_vm_readv) and answer
// with a FIN. None of the message's bytes travel in frames, so the RTS is first but not last.
// CTS: a split copy. message_length is the address of the receive buffer, fragment_offset where the
// sender's part begins: the sender writes bytes [fragment_offset, message length) there itself
// (process_vm_writev) while the receiver reads the rest. FIN from the sender (receiver_request set): that
// write is done; the same FIN without the flag: it could not be done, the receiver reads those bytes too.
inline constexpr std::uint8_t kFlagSingleCopy = 0x10;
inline constexpr std::uint8_t kKnownFlags =
    kFlagFirstFragment | kFlagLastFragment | kFlagAckRequested | kFlagAckValid | kFlagSingleCopy;
// cancel_reply only: the message was withdrawn. Not in kKnownFlags, which the fragment types allow.
inline constexpr std::uint8_t kFlagWithdrawn = 0x20;

// The first/last flags a fragment of `length` bytes at `offset` of a message must carry.
constexpr std::uint8_t fragment_position_flags(std::uint64_t offset, std::uint64_t length,
                                               std::uint64_t message_length) noexcept {
  return static_cast<std::uint8_t>((offset == 0 ? kFlagFirstFragment : 0) |
                                   (offset + length == message_length ? kFlagLastFragment : 0));
}

// The "seq" column of the frame-type table: whether a frame of this type occupies byte sequence
// numbers (and is therefore acknowledged, retransmitted and de-duplicated).
constexpr bool occupies_sequence(FrameType type) noexcept {
  return type == FrameType::data || type == FrameType::rts || type == FrameType::cts ||
         type == FrameType::fin || type == FrameType::credit || type == FrameType::cancel ||
         type == FrameType::cancel_reply;
}

// Byte sequence numbers a message occupies: one per byte, and one for a zero-byte message, so that
// every message is acknowledged and ordered by the same means.
constexpr std::uint64_t message_seq_count(std::uint64_t message_length) noexcept {
  return message_length == 0 ? 1 : message_length;
}

// A header in host order. Version, header checksum and reserved bytes are not here: encode() writes
// them and decode() checks them.
struct FrameHeader {
  FrameType type = FrameType::data;
  std::uint8_t flags = 0;
  // Payload checksum algorithm, per frame because it is per path: shared memory needs none where UDP
  // uses the job's choice.
  ChecksumKind checksum_kind = ChecksumKind::none;
  std::uint64_t job_key = 0;       // random per job: frames of another job (stale ports) are dropped
  std::uint32_t source = 0;        // world rank of the sender
  std::uint32_t destination = 0;   // world rank it is meant for: catches misrouted frames
  std::uint32_t context = 0;       // communicator context id (matching)
  std::int32_t tag = 0;            // MPI tag (matching); never negative on the wire
  // Per ordered process pair, from 1: MPI's non-overtaking order for matching. CTS and FIN name the
  // peer's message they answer.
  std::uint64_t message_seq = 0;
  // Byte sequence range of this frame (per ordered pair, from 1): what reliability acknowledges. For a
  // NACK, the range refused.
  std::uint64_t seq_first = 0;
  std::uint32_t seq_count = 0;
  std::uint32_t payload_length = 0;   // bytes after the header
  // Whole message: the receiver sizes and completes the receive. In a CREDIT frame, the grant instead.
  std::uint64_t message_length = 0;
  std::uint64_t fragment_offset = 0;  // where this payload goes: fragments may arrive in any order
  // Reverse direction, with kFlagAckValid: every byte <= lirs received (maybe not yet verified), every
  // byte <= lids delivered (the sender frees them); 0 means none yet.
  std::uint64_t lirs = 0;
  std::uint64_t lids = 0;
  // Rendezvous needs both ends to name their request without a lookup: RTS carries the sender's, CTS
  // adds the receiver's, later data and FIN carry both. A probe's id travels in sender_request.
  std::uint64_t sender_request = 0;
  std::uint64_t receiver_request = 0;
  std::uint32_t payload_checksum = 0;  // of the payload by checksum_kind; 0 when there is none

  bool operator==(const FrameHeader&) const = default;
};

// Where each field sits on the wire. The layout is spelled out once, here, and checked below to tile the
// header exactly with naturally aligned fields.
struct WireField {
  std::string_view name;
  std::size_t offset;
  std::size_t size;
};

namespace wire_offset {
inline constexpr std::size_t version = 0;
inline constexpr std::size_t type = 1;
inline constexpr std::size_t flags = 2;
inline constexpr std::size_t checksum_kind = 3;
inline constexpr std::size_t header_mac_low = 4;
inline constexpr std::size_t job_key = 8;
inline constexpr std::size_t source = 16;
inline constexpr std::size_t destination = 20;
inline constexpr std::size_t context = 24;
inline constexpr std::size_t tag = 28;
inline constexpr std::size_t message_seq = 32;
inline constexpr std::size_t seq_first = 40;
inline constexpr std::size_t seq_count = 48;
inline constexpr std::size_t payload_length = 52;
inline constexpr std::size_t message_length = 56;
inline constexpr std::size_t fragment_offset = 64;
inline constexpr std::size_t lirs = 72;
inline constexpr std::size_t lids = 80;
inline constexpr std::size_t sender_request = 88;
inline constexpr std::size_t receiver_request = 96;
inline constexpr std::size_t payload_checksum = 104;
inline constexpr std::size_t header_mac_high = 108;
}  // namespace wire_offset

inline constexpr std::array<WireField, 22> kWireFields{{
    {"version", wire_offset::version, 1},
    {"type", wire_offset::type, 1},
    {"flags", wire_offset::flags, 1},
    {"checksum_kind", wire_offset::checksum_kind, 1},
    {"header_mac_low", wire_offset::header_mac_low, 4},
    {"job_key", wire_offset::job_key, 8},
    {"source", wire_offset::source, 4},
    {"destination", wire_offset::destination, 4},
    {"context", wire_offset::context, 4},
    {"tag", wire_offset::tag, 4},
    {"message_seq", wire_offset::message_seq, 8},
    {"seq_first", wire_offset::seq_first, 8},
    {"seq_count", wire_offset::seq_count, 4},
    {"payload_length", wire_offset::payload_length, 4},
    {"message_length", wire_offset::message_length, 8},
    {"fragment_offset", wire_offset::fragment_offset, 8},
    {"lirs", wire_offset::lirs, 8},
    {"lids", wire_offset::lids, 8},
    {"sender_request", wire_offset::sender_request, 8},
    {"receiver_request", wire_offset::receiver_request, 8},
    {"payload_checksum", wire_offset::payload_checksum, 4},
    {"header_mac_high", wire_offset::header_mac_high, 4},
}};

namespace detail {
// True when the fields follow each other without gap or overlap, each aligned to its size, and end
// exactly at kHeaderSize.
consteval bool fields_tile_header() {
  std::size_t next = 0;
  for (const WireField& field : kWireFields) {
    if (field.offset != next || field.offset % field.size != 0) return false;
    next += field.size;
  }
  return next == kHeaderSize;
}
}  // namespace detail

static_assert(detail::fields_tile_header(), "wire fields must tile the header, naturally aligned");
static_assert(kHeaderSize % 8 == 0, "payload must stay 8-byte aligned behind the header");
static_assert(wire_offset::version == 0, "the version byte comes first, whatever the version");

// Serialises `header` (version kWireVersion) and fills in its MAC keyed with `key`, or leaves the MAC 0
// when `with_header_mac` is false (frames on a path the engine trusts, see
// DecodeLimits::verify_header_checksum). It does not validate: a header that decode() would refuse
// encodes as faithfully as a good one.
void encode(const FrameHeader& header, std::span<std::byte, kHeaderSize> out, bool with_header_mac = true,
            const FrameKey& key = FrameKey{}) noexcept;

// The MAC of the kHeaderSize bytes at `header`, its own two halves taken as zero.
std::uint64_t header_mac(const std::byte* header, const FrameKey& key) noexcept;
// Writes that MAC into a header whose other bytes are final (encode does; so may whoever edits a header's
// bytes and must seal it again).
void seal_header(std::span<std::byte, kHeaderSize> header, const FrameKey& key) noexcept;

// integrity=mac: the MAC of a frame's header (its own two halves taken as zero) and its payload, and the
// sealing of a whole frame (header first, then payload) with it.
std::uint64_t frame_mac(const std::byte* header, std::span<const std::byte> payload, const FrameKey& key) noexcept;
void seal_frame(std::span<std::byte> frame, const FrameKey& key) noexcept;
// The key of frame_mac, from the job's FrameKey (one key per primitive).
FrameKey derive_payload_key(const FrameKey& frame_key) noexcept;

// The job's FrameKey from its secret (at least 16 bytes; the launcher's 32-byte one): BLAKE2b keyed with
// the secret over a fixed label, so the key says nothing of the secret, which authenticates ranks to
// the launcher.
FrameKey derive_frame_key(std::span<const std::uint8_t> secret) noexcept;

// What a receiver knows and will accept.
struct DecodeLimits {
  std::uint64_t job_key = 0;
  std::uint32_t world_size = 0;
  std::uint32_t my_rank = 0;
  std::uint32_t max_payload = 0;  // the path's MTU minus kHeaderSize
  // False only for frames from a path that never corrupts (shared memory between ranks of one job) while
  // reliability is not forced: their senders leave the header MAC 0 and it is not checked. Every other
  // rule still holds for them.
  bool verify_header_checksum = true;
  FrameKey key{};  // the job's: the header MAC must have been made with it
  // integrity=mac: where the header MAC is checked, it is frame_mac over header and payload with
  // payload_key; a header read ahead of its payload cannot be verified, and is refused.
  bool payload_mac = false;
  FrameKey payload_key{};
};

// Parses and validates a whole frame (header followed by exactly payload_length bytes). On refusal the
// Status says why: Errc::truncated, unsupported_version, bad_checksum, wrong_job or malformed, with a
// message naming the field. Checks nothing in the payload itself; its checksum is verified while it is
// copied out (copy_and_verify, scatter_with_checksum).
base::Result<FrameHeader> decode(std::span<const std::byte> frame, const DecodeLimits& limits);

// The same for a header read ahead of its payload (MSG_PEEK): `header` holds at least the header's
// bytes, `frame_length` is the length of the whole frame as received.
base::Result<FrameHeader> decode(std::span<const std::byte> header, std::size_t frame_length,
                                 const DecodeLimits& limits);

// The receive path's form of decode(): fills `out` and returns true exactly when decode() would accept
// the frame (the same checks, written once), false when it would refuse it. It builds no message and
// allocates nothing; call decode() on a refused frame to learn why.
bool try_decode(std::span<const std::byte> frame, const DecodeLimits& limits, FrameHeader& out) noexcept;
// The same for a header read ahead of its payload (MSG_PEEK): agrees with decode(header, frame_length,
// limits). The receiver uses it to learn where a payload goes before receiving it.
bool try_decode(std::span<const std::byte> header, std::size_t frame_length, const DecodeLimits& limits,
                FrameHeader& out) noexcept;

// The short frame: a whole eager message between ranks of one job over a trusted path (shared memory,
// reliability not forced: DecodeLimits::verify_header_checksum false), in a 32-byte header instead of
// 112. Nothing on such a path is lost, reordered, duplicated or corrupted, and only the job's own
// processes map its memory, so the frame carries no byte sequence numbers, ACK fields, job key or
// checksums; it keeps what matching and MPI ordering need. A receiver accepts it only from a trusted
// path and refuses it anywhere else (a short frame on a network path is malformed by definition).
//
//   byte  0         1         2         3         4         5         6         7
//       +---------+---------+---------+---------+---------+---------+---------+---------+
//     0 | version | type 9  | flags 0 | 0       |            payload_length             |
//       +---------------------------------------+---------------------------------------+
//     8 |               source                  |               context                 |
//       +---------------------------------------+---------------------------------------+
//    16 |               tag (int32)             |             reserved (0)              |
//       +---------------------------------------+---------------------------------------+
//    24 |                             message_seq                                       |
//       +-------------------------------------------------------------------------------+
//    32 |                             reserved (0)                                      |
//       +-------------------------------------------------------------------------------+
//    40 |                             reserved (0)                                      |
//       +-------------------------------------------------------------------------------+
//    48   payload (payload_length bytes)
//
// The version byte is the full header's, and the type byte sits where the full header's does, so a
// receiver tells the two apart by byte 1. The full decoder refuses type 9 as unknown.
inline constexpr std::uint8_t kShortFrameType = 9;
static_assert(kShortFrameType != static_cast<std::uint8_t>(FrameType::credit));
inline constexpr std::size_t kShortHeaderSize = 48;

struct ShortHeader {
  std::uint32_t source = 0;
  std::uint32_t context = 0;
  std::int32_t tag = 0;
  std::uint32_t payload_length = 0;
  std::uint64_t message_seq = 0;
  friend bool operator==(const ShortHeader&, const ShortHeader&) = default;
};

// Whether a frame says it is a short one (its type byte); decide how to decode it by this.
inline bool is_short_frame(std::span<const std::byte> frame) noexcept {
  return frame.size() >= 2 && static_cast<std::uint8_t>(frame[1]) == kShortFrameType;
}

namespace short_offset {
// Byte 3 is padding (0).
constexpr std::size_t version = 0, type = 1, flags = 2, payload_length = 4, source = 8, context = 12, tag = 16,
                      reserved = 20, message_seq = 24, tail = 32;  // tail: 16 bytes of 0
}  // namespace short_offset

// Inline: every message a short frame carries is encoded here (a call was a twentieth of its send).
inline void encode_short(const ShortHeader& h, std::span<std::byte, kShortHeaderSize> out) noexcept {
  std::byte* p = out.data();
  le::store(p, short_offset::version, kWireVersion);
  le::store(p, short_offset::type, kShortFrameType);
  le::store(p, short_offset::flags, std::uint16_t{0});
  le::store(p, short_offset::payload_length, h.payload_length);
  le::store(p, short_offset::source, h.source);
  le::store(p, short_offset::context, h.context);
  le::store(p, short_offset::tag, h.tag);
  le::store(p, short_offset::reserved, std::uint32_t{0});
  le::store(p, short_offset::message_seq, h.message_seq);
  le::store(p, short_offset::tail, std::uint64_t{0});
  le::store(p, short_offset::tail + 8, std::uint64_t{0});
}

// Validates a whole short frame against the limits (job key and verify_header_checksum aside): exact
// length, version, type, zero flags and reserved bytes, source in range (a rank may send to itself), tag >= 0,
// message_seq != 0, payload_length <= max_payload. decode_short says why it refuses; try_decode_short
// makes the same checks (written once) without building a message.
base::Result<ShortHeader> decode_short(std::span<const std::byte> frame, const DecodeLimits& limits);
inline bool try_decode_short(std::span<const std::byte> frame, const DecodeLimits& limits, ShortHeader& out) noexcept;

// One line for logs, every field: "data 6->2 ctx 3 tag 11 msg 2 seq 3001+500 off 2000/2500 len 500 crc32c
// 0xdeadbeef flags last,ack-valid ack 77/70 req 0x11:0x22".
std::string describe(const FrameHeader& header);

// The checks of both decoders of short frames, here so that try_decode_short is inline (every short frame
// a process receives goes through it); wire.cpp has the full header's.
namespace detail {
using base::Errc;
using base::Status;

inline std::string num(std::uint64_t value) { return std::to_string(value); }

// How a check reports a refusal. Every check is written once, as a template over the verdict: `Quiet`
// answers only yes or no and builds nothing (the receive path: a good frame costs no string), `Loud`
// says why (decode(), and the slow second look at a frame the quiet pass refused). The message is a
// lambda, so the quiet form never evaluates it.
struct Quiet {
  using R = bool;
  static constexpr bool kOk = true;
  static bool good(bool r) noexcept { return r; }
  template <typename What>
  static bool malformed(const FrameHeader&, What&&) noexcept { return false; }
  template <typename What>
  static bool fail(Errc, What&&) noexcept { return false; }
};

struct Loud {
  using R = Status;
  static inline const Status kOk{};
  static bool good(const Status& r) noexcept { return r.is_ok(); }
  template <typename What>
  static Status malformed(const FrameHeader& h, What&& what) {
    return Status(Errc::malformed, std::string(to_string(h.type)) + " frame: " + what());
  }
  template <typename What>
  static Status fail(Errc code, What&& what) {
    return Status(code, what());
  }
};

template <typename V>
inline typename V::R decode_short_into(std::span<const std::byte> frame, const DecodeLimits& limits, ShortHeader& h) {
  const auto refuse = [](auto&& what) { return V::fail(Errc::malformed, [&] { return "short frame: " + what(); }); };
  if (frame.size() < kShortHeaderSize) [[unlikely]] {
    return V::fail(Errc::truncated, [&] {
      return "short frame of " + num(frame.size()) + " bytes, shorter than its " + num(kShortHeaderSize) +
             "-byte header";
    });
  }
  const std::byte* p = frame.data();
  if (const auto version = le::load<std::uint8_t>(p, short_offset::version); version != kWireVersion) [[unlikely]] {
    return V::fail(Errc::unsupported_version, [&] {
      return "version " + num(version) + " (this build speaks " + num(kWireVersion) + ")";
    });
  }
  if (const auto type = le::load<std::uint8_t>(p, short_offset::type); type != kShortFrameType) [[unlikely]] {
    return refuse([&] { return "type " + num(type) + " is not " + num(kShortFrameType); });
  }
  if (le::load<std::uint16_t>(p, short_offset::flags) != 0 || le::load<std::uint32_t>(p, short_offset::reserved) != 0 ||
      (le::load<std::uint64_t>(p, short_offset::tail) | le::load<std::uint64_t>(p, short_offset::tail + 8)) != 0) [[unlikely]] {
    return refuse([] { return std::string("flags and reserved bytes must be 0"); });
  }
  h.payload_length = le::load<std::uint32_t>(p, short_offset::payload_length);
  if (h.payload_length != frame.size() - kShortHeaderSize) [[unlikely]] {
    return V::fail(Errc::truncated, [&] {
      return "short frame: payload_length " + num(h.payload_length) + " but " + num(frame.size() - kShortHeaderSize) +
             " payload bytes present";
    });
  }
  if (h.payload_length > limits.max_payload) [[unlikely]] {
    return refuse([&] { return "payload_length " + num(h.payload_length) + " beyond " + num(limits.max_payload); });
  }
  h.source = le::load<std::uint32_t>(p, short_offset::source);
  if (h.source >= limits.world_size) [[unlikely]] {
    return refuse([&] {
      return "source rank " + num(h.source) + " out of range (world size " + num(limits.world_size) + ")";
    });
  }
  h.context = le::load<std::uint32_t>(p, short_offset::context);
  h.tag = le::load<std::int32_t>(p, short_offset::tag);
  if (h.tag < 0) [[unlikely]] {
    return refuse([&] { return "tag " + std::to_string(h.tag) + " is negative"; });
  }
  h.message_seq = le::load<std::uint64_t>(p, short_offset::message_seq);
  if (h.message_seq == 0) [[unlikely]] return refuse([] { return std::string("message_seq 0"); });
  return V::kOk;
}

}  // namespace detail

// Inline: a call was a fortieth of a zero-byte round trip.
bool try_decode_short(std::span<const std::byte> frame, const DecodeLimits& limits, ShortHeader& out) noexcept {
  return detail::decode_short_into<detail::Quiet>(frame, limits, out);
}

}  // namespace ftmpi::frag

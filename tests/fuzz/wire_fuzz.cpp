// libFuzzer target for the wire decoder; wire_corpus_replay runs the same function over the corpus.
//
// Each input is tried three ways:
//   1. as a frame, raw: what a hostile or broken peer could send;
//   2. as a frame whose header checksum is recomputed: random bytes almost never pass the CRC, so this is
//      what lets the fuzzer reach the field checks behind it;
//   3. as edits to a valid header of each type: a byte picks the type and how many payload bytes follow,
//      then records of (field index, value) overwrite single fields before the header is resealed.
// try_decode() must agree with decode() on every input. Whatever decode() accepts must re-encode to the same bytes, satisfy the wire rules restated here
// independently of wire.cpp, and be a fragment the fragmenter agrees with. A violation aborts.
#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <span>
#include <vector>

#include "ftmpi/frag/checksum.hpp"
#include "ftmpi/frag/fragmenter.hpp"
#include "ftmpi/frag/wire.hpp"

namespace {

using namespace ftmpi::frag;

constexpr DecodeLimits kLimits{.job_key = 0x0123'4567'89ab'cdefULL, .world_size = 8, .my_rank = 2, .max_payload = 1024};
constexpr std::size_t kMaxPayloadPresent = 4096;

[[noreturn]] void violated(const char* rule, const FrameHeader& h) {
  std::fprintf(stderr, "wire_fuzz: accepted a frame that breaks '%s': %s\n", rule, describe(h).c_str());
  std::abort();
}

void require(bool holds, const char* rule, const FrameHeader& h) {
  if (!holds) violated(rule, h);
}

// The rules of an accepted frame, restated.
void check_accepted(const FrameHeader& h, std::span<const std::byte> frame) {
  std::array<std::byte, kHeaderSize> again{};
  encode(h, again);
  require(std::memcmp(again.data(), frame.data(), kHeaderSize) == 0, "re-encodes byte-identical", h);
  require(frame.size() == kHeaderSize + h.payload_length, "payload_length is what follows", h);
  require(describe(h).starts_with(to_string(h.type)), "describe() names the type", h);
  require(h.job_key == kLimits.job_key, "job key", h);
  require(h.source < kLimits.world_size && h.destination == kLimits.my_rank, "ranks", h);
  require((h.flags & ~(kKnownFlags | (h.type == FrameType::cancel_reply ? kFlagWithdrawn : 0))) == 0, "known flags", h);
  require(h.payload_checksum == 0 || (h.checksum_kind != ChecksumKind::none && h.payload_length > 0),
          "payload checksum only with a checksummed payload", h);
  if ((h.flags & kFlagAckValid) != 0) {
    require(h.lids <= h.lirs, "lids <= lirs", h);
  } else {
    require(h.lirs == 0 && h.lids == 0, "no ack without ack-valid", h);
  }
  const bool carries_payload = h.type == FrameType::data || h.type == FrameType::rts;
  const bool split_cts = h.type == FrameType::cts && (h.flags & kFlagSingleCopy) != 0;
  require(carries_payload || h.payload_length == 0, "payload only on data and rts", h);
  require(carries_payload || split_cts ||
              ((h.message_length == 0 || h.type == FrameType::credit) && h.fragment_offset == 0 &&
               ((h.tag == 0 && h.context == 0) || h.type == FrameType::cancel)),
          "placement and matching only on data and rts (and a credit's grant, a cancel's envelope, a split "
          "copy's buffer and split)",
          h);
  require((h.flags & kFlagWithdrawn) == 0 || h.type == FrameType::cancel_reply, "withdrawn only on a cancel reply", h);
  switch (h.type) {
    case FrameType::data:
    case FrameType::rts: {
      require(h.payload_length <= kLimits.max_payload, "payload within the limit", h);
      require(h.tag >= 0 && h.message_seq >= 1, "tag and message sequence", h);
      require(h.seq_count == message_seq_count(h.payload_length), "one sequence number per byte", h);
      require(h.type == FrameType::data || (h.fragment_offset == 0 && h.sender_request != 0), "rts", h);
      if ((h.flags & kFlagSingleCopy) != 0) {
        require(h.type == FrameType::rts && h.payload_length > 0 &&
                    (h.flags & (kFlagFirstFragment | kFlagLastFragment)) == kFlagFirstFragment,
                "single copy: an rts with a descriptor, first and not last", h);
        require(h.seq_first >= 1 && h.seq_first - 1 <= std::numeric_limits<std::uint64_t>::max() - h.seq_count,
                "single-copy rts sequence range", h);
        break;
      }
      require(h.fragment_offset <= h.message_length &&
                  h.payload_length <= h.message_length - h.fragment_offset,
              "fragment inside the message", h);
      require((h.flags & (kFlagFirstFragment | kFlagLastFragment)) ==
                  fragment_position_flags(h.fragment_offset, h.payload_length, h.message_length),
              "first/last flags", h);
      // An RTS sent without eager credit carries none of its message: nothing for the fragmenter to cut.
      if (h.payload_length == 0 && h.message_length != 0) {
        require(h.type == FrameType::rts, "only an rts may carry none of a non-empty message", h);
        break;
      }
      // The fragmenter must agree: re-cutting exactly this frame's range gives back this frame.
      require(h.seq_first > h.fragment_offset, "message starts at sequence >= 1", h);
      const auto cut = recut(h.message_length, h.seq_first - h.fragment_offset, h.seq_first, h.seq_count,
                             std::max<std::uint32_t>(h.payload_length, 1));
      require(cut.is_ok() && cut->size() == 1, "the fragmenter accepts the range", h);
      const FragmentPlan plan = cut->fragment(0);
      require(plan.offset == h.fragment_offset && plan.length == h.payload_length &&
                  plan.seq_first == h.seq_first && plan.seq_count == h.seq_count,
              "the fragmenter cuts the same fragment", h);
      break;
    }
    case FrameType::nack:
      require(h.seq_first >= 1 && h.seq_count >= 1 &&
                  h.seq_first - 1 <= std::numeric_limits<std::uint64_t>::max() - h.seq_count,
              "nack range", h);
      break;
    case FrameType::cts:
    case FrameType::fin:
      require(h.seq_first >= 1 && h.seq_count == 1 && h.message_seq >= 1 && h.sender_request != 0,
              "cts/fin", h);
      require(h.type == FrameType::fin || h.receiver_request != 0, "cts names the receive", h);
      // A split copy's CTS names the receive buffer and where the sender's half begins, and nothing to match.
      require(!split_cts || (h.message_length != 0 && h.fragment_offset != 0 && h.tag == 0 && h.context == 0),
              "a split-copy cts has its buffer and split", h);
      require(h.type != FrameType::fin || (h.flags & kFlagSingleCopy) == 0 || h.receiver_request != 0,
              "a single-copy fin names the receive", h);
      break;
    case FrameType::ack:
      // An ACK may name a selective range received above LIRS: a real, non-wrapping one, or none.
      require(h.message_seq == 0, "no message sequence", h);
      require(h.seq_count == 0 ? h.seq_first == 0
                               : h.seq_first >= 1 && h.seq_first - 1 <= std::numeric_limits<std::uint64_t>::max() - h.seq_count,
              "selective range", h);
      require((h.flags & kFlagAckValid) != 0, "ack carries an ack", h);
      break;
    case FrameType::probe:
    case FrameType::probe_reply:
      require(h.seq_first == 0 && h.seq_count == 0 && h.message_seq == 0, "no sequence", h);
      break;
    case FrameType::credit:
      require(h.seq_first >= 1 && h.seq_count == 1 && h.message_seq == 0 && h.payload_length == 0 &&
                  h.fragment_offset == 0 && h.sender_request == 0,
              "credit", h);
      break;
    case FrameType::cancel:
    case FrameType::cancel_reply:
      require(h.seq_first >= 1 && h.seq_count == 1 && h.message_seq >= 1 && h.sender_request != 0 &&
                  h.receiver_request == 0 && h.tag >= 0 && h.message_length == 0,
              "cancel/cancel_reply", h);
      break;
  }
}

void try_frame(std::span<const std::byte> frame) {
  const auto decoded = decode(frame, kLimits);
  // The receive path's quiet form must agree with decode() on every input, header included.
  FrameHeader quick;
  const bool quick_ok = try_decode(frame, kLimits, quick);
  if (quick_ok != decoded.is_ok() || (quick_ok && !(quick == *decoded))) {
    std::fprintf(stderr, "wire_fuzz: try_decode (%s) disagrees with decode (%s)\n", quick_ok ? "accepts" : "refuses",
                 decoded ? "accepts" : decoded.status().to_string().c_str());
    std::abort();
  }
  if (!decoded) {
    // A refusal must say why in terms of the frame.
    if (decoded.status().severity() != ftmpi::base::Severity::frame) {
      std::fprintf(stderr, "wire_fuzz: refusal of the wrong kind: %s\n", decoded.status().to_string().c_str());
      std::abort();
    }
    return;
  }
  check_accepted(*decoded, frame);
  if (frame.size() >= kHeaderSize) {
    const auto peeked = decode(frame.first(kHeaderSize), frame.size(), kLimits);
    require(peeked.is_ok() && *peeked == *decoded, "a peeked header decodes the same", *decoded);
  }
}

// The short frame's decoder on the same input, and on the input made to say "short frame" (version 1,
// type 9): the two forms agree, and what is accepted re-encodes to the same header and obeys its rules.
void try_short(std::span<const std::byte> frame) {
  const auto decoded = decode_short(frame, kLimits);
  ShortHeader quick;
  const bool quick_ok = try_decode_short(frame, kLimits, quick);
  if (quick_ok != decoded.is_ok() || (quick_ok && !(quick == *decoded))) {
    std::fprintf(stderr, "wire_fuzz: try_decode_short (%s) disagrees with decode_short (%s)\n",
                 quick_ok ? "accepts" : "refuses", decoded ? "accepts" : decoded.status().to_string().c_str());
    std::abort();
  }
  if (!decoded) {
    if (decoded.status().severity() != ftmpi::base::Severity::frame) {
      std::fprintf(stderr, "wire_fuzz: short refusal of the wrong kind: %s\n", decoded.status().to_string().c_str());
      std::abort();
    }
    return;
  }
  const ShortHeader& h = *decoded;
  std::array<std::byte, kShortHeaderSize> again{};
  encode_short(h, again);
  const bool ok = std::memcmp(again.data(), frame.data(), kShortHeaderSize) == 0 &&
                  frame.size() == kShortHeaderSize + h.payload_length && h.payload_length <= kLimits.max_payload &&
                  h.source < kLimits.world_size && h.tag >= 0 && h.message_seq != 0;
  if (!ok) {
    std::fprintf(stderr, "wire_fuzz: accepted a short frame that breaks its rules (source %u tag %d len %u)\n",
                 h.source, h.tag, h.payload_length);
    std::abort();
  }
}

// Seals the header with kLimits' key, as a sender of the job would.
void reseal(std::span<std::byte> frame) { seal_header(frame.first<kHeaderSize>(), kLimits.key); }

FrameHeader template_header(FrameType type) {
  FrameHeader h;
  h.type = type;
  h.job_key = kLimits.job_key;
  h.source = 5;
  h.destination = kLimits.my_rank;
  switch (type) {
    case FrameType::data:
    case FrameType::rts:
      h.checksum_kind = ChecksumKind::crc32c;
      h.context = 1;
      h.tag = 9;
      h.message_seq = 4;
      h.message_length = 3000;
      h.fragment_offset = type == FrameType::rts ? 0 : 1024;
      h.payload_length = 1024;
      h.seq_first = 100 + h.fragment_offset;
      h.seq_count = 1024;
      h.flags = fragment_position_flags(h.fragment_offset, h.payload_length, h.message_length);
      h.sender_request = 7;
      break;
    case FrameType::ack:
      h.flags = kFlagAckValid;
      h.lirs = 50;
      h.lids = 40;
      break;
    case FrameType::nack:
      h.seq_first = 100;
      h.seq_count = 10;
      break;
    case FrameType::cts:
    case FrameType::fin:
      h.message_seq = 4;
      h.seq_first = 3;
      h.seq_count = 1;
      h.sender_request = 7;
      h.receiver_request = 8;
      break;
    case FrameType::probe:
    case FrameType::probe_reply:
      h.sender_request = 1;
      break;
    case FrameType::credit:
      h.seq_first = 5;
      h.seq_count = 1;
      h.message_length = 1 << 20;
      break;
    case FrameType::cancel:
    case FrameType::cancel_reply:
      h.message_seq = 4;
      h.seq_first = 6;
      h.seq_count = 1;
      h.sender_request = 7;
      if (type == FrameType::cancel) {
        h.context = 1;
        h.tag = 9;
      }
      break;
  }
  return h;
}

// Way 3: `script` = type byte, payload-presence byte, then (field index, value bytes) records.
void try_edits(const std::uint8_t* script, std::size_t size) {
  if (size < 2) return;
  constexpr FrameType kTypes[] = {FrameType::data, FrameType::ack,   FrameType::nack,        FrameType::rts,
                                  FrameType::cts,  FrameType::fin,   FrameType::probe,       FrameType::probe_reply,
                                  FrameType::credit, FrameType::cancel, FrameType::cancel_reply};
  const FrameType type = kTypes[script[0] % std::size(kTypes)];
  std::array<std::byte, kHeaderSize> header{};
  encode(template_header(type), header);
  bool checksum_edited = false;
  std::size_t at = 2;
  while (at < size) {
    const WireField& field = kWireFields[script[at++] % kWireFields.size()];
    const std::size_t n = std::min(field.size, size - at);
    std::memcpy(header.data() + field.offset, script + at, n);
    at += n;
    checksum_edited = checksum_edited || field.offset == wire_offset::header_mac_low ||
                      field.offset == wire_offset::header_mac_high;
  }
  if (!checksum_edited) reseal(header);
  std::uint32_t payload_length = 0;
  for (std::size_t i = 0; i < 4; ++i) {
    payload_length |= std::to_integer<std::uint32_t>(header[wire_offset::payload_length + i]) << (8 * i);
  }
  std::size_t present = std::min<std::size_t>(payload_length, kMaxPayloadPresent);
  // Sometimes one byte short or one too many.
  if (script[1] % 3 == 1 && present > 0) --present;
  if (script[1] % 3 == 2) ++present;
  std::vector<std::byte> frame(kHeaderSize + present);
  std::memcpy(frame.data(), header.data(), kHeaderSize);
  try_frame(frame);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::span<const std::byte> input(reinterpret_cast<const std::byte*>(data), size);
  try_frame(input);
  try_short(input);
  if (size >= 2) {
    std::vector<std::byte> as_short(input.begin(), input.end());
    as_short[0] = std::byte{kWireVersion};
    as_short[1] = std::byte{kShortFrameType};
    if (size >= 8) {  // and the length it names: what is present
      const auto present = static_cast<std::uint32_t>(size >= kShortHeaderSize ? size - kShortHeaderSize : 0);
      std::memcpy(as_short.data() + 4, &present, sizeof present);
    }
    try_short(as_short);
  }
  if (size >= kHeaderSize) {
    std::vector<std::byte> resealed(input.begin(), input.end());
    reseal(resealed);
    try_frame(resealed);
  }
  try_edits(data, size);
  return 0;
}

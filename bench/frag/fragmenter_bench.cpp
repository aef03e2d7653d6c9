// The per-frame costs of the wire header and the fragmenter: what every frame pays before and after the
// path moves it.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <span>
#include <string>
#include <vector>

#include "ftmpi/bench/harness.hpp"
#include "ftmpi/frag/checksum.hpp"
#include "ftmpi/frag/fragmenter.hpp"
#include "ftmpi/frag/wire.hpp"
#include "sections.hpp"

namespace ftmpi::bench {
namespace {

using namespace ftmpi::frag;

constexpr std::uint32_t kMtu = 9000;  // a jumbo-frame UDP rail
constexpr std::uint32_t kMaxPayload = kMtu - kHeaderSize;
constexpr DecodeLimits kLimits{.job_key = 0x6a6f'625f'6b65'7921ULL, .world_size = 64, .my_rank = 1,
                               .max_payload = kMaxPayload};

FrameHeader data_header() {
  FrameHeader h;
  h.type = FrameType::data;
  h.flags = kFlagAckValid;
  h.checksum_kind = ChecksumKind::crc32c;
  h.job_key = kLimits.job_key;
  h.source = 7;
  h.destination = kLimits.my_rank;
  h.context = 3;
  h.tag = 42;
  h.message_seq = 1000;
  h.message_length = 1 << 20;
  h.fragment_offset = 2 * kMaxPayload;
  h.payload_length = kMaxPayload;
  h.seq_first = 123456 + h.fragment_offset;
  h.seq_count = kMaxPayload;
  h.lirs = 99999;
  h.lids = 99000;
  h.sender_request = 0x5000;
  h.receiver_request = 0x6000;
  h.payload_checksum = 0xc0ffee;
  return h;
}

std::vector<std::byte> encoded(const FrameHeader& h) {
  std::vector<std::byte> frame(kHeaderSize + h.payload_length);
  encode(h, std::span<std::byte, kHeaderSize>(frame.data(), kHeaderSize));
  return frame;
}

std::string ns(const Timing& t) { return fixed(t.ns_per_op, 1); }

// Gathering a 64 KiB message in MTU-sized fragments.
Timing time_gather(const PiecesLayout& layout, const std::byte* base, ChecksumKind kind) {
  const std::uint64_t bytes = layout.packed_size();
  std::vector<std::byte> fragment(kMaxPayload);
  const auto fragments = cut_message(bytes, 1, kMaxPayload).value();
  return measure(
      [&](std::uint64_t iterations) {
        for (std::uint64_t i = 0; i < iterations; ++i) {
          for (const FragmentPlan f : fragments) {
            Checksummer sum(kind);
            const auto status = gather_with_checksum(layout, base, f.offset,
                                                     std::span(fragment).first(f.length), sum);
            keep(status.is_ok());
            keep(sum.value());
          }
          clobber_memory();
        }
      },
      static_cast<double>(bytes));
}

std::string gbps(const Timing& per_byte) { return fixed(1.0 / per_byte.ns_per_op, 2) + " GB/s"; }

}  // namespace

void run_fragmenter_bench() {
  std::printf("\n## Wire header and fragmenter (MTU %u, header %zu bytes)\n\n", kMtu, kHeaderSize);
  Table table({"operation", "ns/op", "rate"});

  const FrameHeader header = data_header();
  std::vector<std::byte> frame = encoded(header);
  const auto encode_time = measure([&](std::uint64_t iterations) {
    for (std::uint64_t i = 0; i < iterations; ++i) {
      encode(header, std::span<std::byte, kHeaderSize>(frame.data(), kHeaderSize));
      clobber_memory();
    }
  });
  table.add_row({"encode header", ns(encode_time), fixed(1e3 / encode_time.ns_per_op, 1) + " M/s"});

  const auto decode_row = [&](const std::string& what, const std::vector<std::byte>& bytes) {
    const auto t = measure([&](std::uint64_t iterations) {
      for (std::uint64_t i = 0; i < iterations; ++i) {
        const auto result = decode(bytes, kLimits);
        keep(result.is_ok());
      }
    });
    table.add_row({what, ns(t), fixed(1e3 / t.ns_per_op, 1) + " M/s"});
  };
  decode_row("decode valid data frame", encoded(header));
  std::vector<std::byte> corrupted = encoded(header);
  corrupted[40] ^= std::byte{1};
  decode_row("decode rejected: bad header checksum", corrupted);
  FrameHeader misrouted = header;
  misrouted.destination = 2;
  decode_row("decode rejected: destination not me", encoded(misrouted));

  const std::uint64_t message = 1 << 20;
  const auto cut = cut_message(message, 1, kMaxPayload).value();
  const auto cut_time = measure(
      [&](std::uint64_t iterations) {
        for (std::uint64_t i = 0; i < iterations; ++i) {
          for (const FragmentPlan f : cut) keep(f);
        }
      },
      static_cast<double>(cut.size()));
  table.add_row({"cut 1 MiB into " + std::to_string(cut.size()) + " fragments, per fragment", ns(cut_time),
                 fixed(1e3 / cut_time.ns_per_op, 0) + " M fragments/s"});

  constexpr std::size_t kGatherBytes = 64 * 1024;
  std::vector<std::byte> contiguous(kGatherBytes, std::byte{1});
  std::vector<std::byte> strided(2 * kGatherBytes, std::byte{2});
  const Piece block[] = {{0, 8}};
  const PiecesLayout dense = PiecesLayout::contiguous(kGatherBytes);
  const PiecesLayout vector = PiecesLayout::make(block, kGatherBytes / 8, 16).value();
  for (ChecksumKind kind : {ChecksumKind::crc32c, ChecksumKind::none}) {
    const std::string k(to_string(kind));
    const Timing c = time_gather(dense, contiguous.data(), kind);
    table.add_row({"gather 64 KiB contiguous, " + k, fixed(c.ns_per_op * kGatherBytes, 0), gbps(c)});
    const Timing v = time_gather(vector, strided.data(), kind);
    table.add_row({"gather 64 KiB vector 8 B of 16 B, " + k, fixed(v.ns_per_op * kGatherBytes, 0), gbps(v)});
  }
  table.print();
}

}  // namespace ftmpi::bench

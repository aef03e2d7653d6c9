#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <random>
#include <ranges>
#include <string>
#include <vector>

#include "ftmpi/frag/checksum.hpp"
#include "ftmpi/frag/fragmenter.hpp"
#include "ftmpi/test/seed.hpp"

using namespace ftmpi::frag;
using ftmpi::base::Errc;

namespace {

constexpr std::uint64_t kMax64 = std::numeric_limits<std::uint64_t>::max();
constexpr std::array kKinds{ChecksumKind::none, ChecksumKind::crc32c, ChecksumKind::sum32};

// Why `fragments` fail to cover message bytes [first_offset, end_offset) exactly, in order, each at most
// max_payload long (only the last one short), with the sequence number of every byte equal to
// message_seq_first + its offset; empty when they do. One check per range keeps the log short.
std::string coverage_error(const FragmentRange& fragments, std::uint64_t first_offset, std::uint64_t end_offset,
                           std::uint64_t message_seq_first, std::uint32_t max_payload) {
  std::uint64_t next = first_offset;
  std::uint64_t index = 0;
  for (const FragmentPlan f : fragments) {
    const bool last = f.offset + f.length >= end_offset;
    if (f.offset != next || f.length == 0 || f.length > max_payload || (!last && f.length != max_payload) ||
        f.seq_first != message_seq_first + f.offset || f.seq_count != f.length || !(fragments.fragment(index) == f)) {
      return "fragment " + std::to_string(index) + " {" + std::to_string(f.offset) + ", " +
             std::to_string(f.length) + ", " + std::to_string(f.seq_first) + ", " + std::to_string(f.seq_count) +
             "} after byte " + std::to_string(next);
    }
    next = f.offset + f.length;
    ++index;
  }
  if (next != end_offset) return "fragments end at " + std::to_string(next);
  if (index != fragments.size()) return std::to_string(index) + " fragments, size() " + std::to_string(fragments.size());
  return {};
}

// A message's packed bytes, as addresses relative to its base pointer: the reference that gather and
// scatter are compared with, built byte by byte.
std::vector<std::ptrdiff_t> packed_addresses(std::span<const Piece> pieces, std::size_t count,
                                             std::ptrdiff_t extent) {
  std::vector<std::ptrdiff_t> addresses;
  for (std::size_t r = 0; r < count; ++r) {
    for (const Piece& piece : pieces) {
      for (std::size_t b = 0; b < piece.length; ++b) {
        addresses.push_back(static_cast<std::ptrdiff_t>(r) * extent + piece.displacement +
                            static_cast<std::ptrdiff_t>(b));
      }
    }
  }
  return addresses;
}

struct LayoutCase {
  const char* name;
  std::vector<Piece> pieces;
  std::size_t count;
  std::ptrdiff_t extent;
};

// Vector-like (blocks with gaps), struct-like (uneven pieces, a negative displacement, gaps), dense (a
// basic type: repetitions abut), a negative extent, zero-length pieces among real ones, and pieces on
// both sides of the size where copying switches from memcpy-then-checksum to the fused copy; and one
// repetition of thousands of pieces (MPI flattens a strided vector sent as one item so), where fragments
// start deep inside the list.
std::vector<LayoutCase> layout_cases() {
  LayoutCase many{"one item of 3000 pieces", {}, 2, 9001};
  for (std::ptrdiff_t i = 0; i < 3000; ++i) many.pieces.push_back({3 * i, static_cast<std::size_t>(i % 3)});
  return {
      many,
      {"vector 8 of 16", {{0, 8}}, 1000, 16},
      {"vector 4 of 12, displaced", {{4, 4}}, 700, 12},
      {"vector 16 of 40, negative extent", {{0, 16}}, 300, -40},
      {"vector 12 of 16 (no short kernel)", {{0, 12}}, 500, 16},
      {"vector 3 blocks", {{0, 12}, {40, 12}, {80, 12}}, 25, 160},
      {"struct", {{-8, 4}, {0, 8}, {12, 2}, {20, 6}}, 97, 32},
      {"dense ints", {{0, 4}}, 1000, 4},
      {"negative extent", {{0, 4}, {6, 1}}, 50, -8},
      {"zero-length pieces", {{0, 0}, {3, 5}, {9, 0}, {11, 2}}, 40, 16},
      {"large and small pieces", {{0, 300}, {400, 5}, {410, 3000}, {3500, 7}}, 4, 4000},
  };
}

// Where the base pointer goes so that every address of the layout falls inside the buffer.
struct Placement {
  std::size_t buffer_size;
  std::ptrdiff_t base_offset;
};

Placement place(const std::vector<std::ptrdiff_t>& addresses) {
  const auto [lo, hi] = std::minmax_element(addresses.begin(), addresses.end());
  return {static_cast<std::size_t>(*hi - *lo + 1), -*lo};
}

}  // namespace

BOOST_AUTO_TEST_SUITE(fragmenter)

BOOST_AUTO_TEST_CASE(cut_covers_the_message_exactly_in_order_within_max_payload) {
  const std::uint64_t seed = ftmpi::test::seed_for("fragmenter cut");
  BOOST_TEST_CONTEXT("seed " << seed) {
    std::mt19937_64 rng(seed);
    for (int i = 0; i < 2000; ++i) {
      const auto max_payload = static_cast<std::uint32_t>(1 + rng() % (i % 2 == 0 ? 64 : 9000));
      const std::uint64_t lengths[] = {1, max_payload - 1u, max_payload, max_payload + 1u,
                                       3ull * max_payload, rng() % 200000};
      const std::uint64_t length = std::max<std::uint64_t>(1, lengths[rng() % std::size(lengths)]);
      const std::uint64_t seq_first = 1 + rng() % 1000000;
      BOOST_TEST_CONTEXT("length " << length << " max_payload " << max_payload << " seq " << seq_first) {
        const auto fragments = cut_message(length, seq_first, max_payload);
        BOOST_TEST_REQUIRE(fragments.is_ok());
        BOOST_TEST(fragments->size() == (length + max_payload - 1) / max_payload);
        const std::string error = coverage_error(*fragments, 0, length, seq_first, max_payload);
        BOOST_TEST(error.empty(), error);
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(zero_byte_message_is_one_empty_fragment_taking_one_sequence_number) {
  const auto fragments = cut_message(0, 42, 1000);
  BOOST_TEST_REQUIRE(fragments.is_ok());
  BOOST_TEST(fragments->size() == 1u);
  const std::vector<FragmentPlan> all(fragments->begin(), fragments->end());
  BOOST_TEST_REQUIRE(all.size() == 1u);
  BOOST_TEST((all[0] == FragmentPlan{0, 0, 42, 1}));
}

BOOST_AUTO_TEST_CASE(a_message_may_end_at_the_last_sequence_number) {
  const auto fragments = cut_message(100, kMax64 - 99, 30);
  BOOST_TEST_REQUIRE(fragments.is_ok());
  BOOST_TEST(coverage_error(*fragments, 0, 100, kMax64 - 99, 30).empty());
  BOOST_TEST(fragments->fragment(3).seq_first + fragments->fragment(3).seq_count - 1 == kMax64);
}

BOOST_AUTO_TEST_CASE(cut_refuses_impossible_requests) {
  BOOST_TEST((cut_message(10, 1, 0).code() == Errc::invalid_argument));
  BOOST_TEST((cut_message(10, 0, 100).code() == Errc::invalid_argument));
  BOOST_TEST((cut_message(101, kMax64 - 99, 100).code() == Errc::invalid_argument));
  BOOST_TEST((cut_message(0, kMax64, 100).is_ok()));
}

BOOST_AUTO_TEST_CASE(fragment_range_is_a_standard_range_whose_iterators_outlive_it) {
  FragmentRange::Iterator second;
  {
    const auto fragments = cut_message(25, 1, 10);
    BOOST_TEST_REQUIRE(fragments.is_ok());
    BOOST_TEST(std::ranges::distance(*fragments) == 3);
    second = std::next(fragments->begin());
  }
  BOOST_TEST(((*second) == FragmentPlan{10, 10, 11, 10}));
}

BOOST_AUTO_TEST_CASE(recut_of_a_range_straddling_old_fragments_covers_exactly_that_range) {
  // Cut at 1000, then bytes 1500..3199 (sequence 1601..3300) go to a rail with 700-byte frames.
  const auto fragments = recut(5000, 101, 1601, 1700, 700);
  BOOST_TEST_REQUIRE(fragments.is_ok());
  const std::vector<FragmentPlan> all(fragments->begin(), fragments->end());
  const std::vector<FragmentPlan> expected{{1500, 700, 1601, 700}, {2200, 700, 2301, 700}, {2900, 300, 3001, 300}};
  BOOST_TEST((all == expected));
}

BOOST_AUTO_TEST_CASE(recut_of_random_subranges_at_random_mtus_covers_exactly_the_range) {
  const std::uint64_t seed = ftmpi::test::seed_for("fragmenter recut");
  BOOST_TEST_CONTEXT("seed " << seed) {
    std::mt19937_64 rng(seed);
    for (int i = 0; i < 2000; ++i) {
      const std::uint64_t length = 1 + rng() % 100000;
      const std::uint64_t message_seq = 1 + rng() % (std::uint64_t{1} << 40);
      const std::uint64_t first = rng() % length;
      const std::uint64_t count = 1 + rng() % (length - first);
      const auto max_payload = static_cast<std::uint32_t>(1 + rng() % 9000);
      BOOST_TEST_CONTEXT("length " << length << " range " << first << "+" << count << " max " << max_payload) {
        const auto fragments = recut(length, message_seq, message_seq + first, count, max_payload);
        BOOST_TEST_REQUIRE(fragments.is_ok());
        const std::string error = coverage_error(*fragments, first, first + count, message_seq, max_payload);
        BOOST_TEST(error.empty(), error);
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(recut_of_a_zero_byte_message_resends_its_one_sequence_number) {
  const auto fragments = recut(0, 9, 9, 1, 100);
  BOOST_TEST_REQUIRE(fragments.is_ok());
  BOOST_TEST(fragments->size() == 1u);
  BOOST_TEST((fragments->fragment(0) == FragmentPlan{0, 0, 9, 1}));
}

BOOST_AUTO_TEST_CASE(recut_refuses_ranges_outside_the_message) {
  BOOST_TEST((recut(100, 50, 49, 1, 10).code() == Errc::invalid_argument));   // before
  BOOST_TEST((recut(100, 50, 149, 2, 10).code() == Errc::invalid_argument));  // past the end
  BOOST_TEST((recut(100, 50, 150, 1, 10).code() == Errc::invalid_argument));  // just after
  BOOST_TEST((recut(100, 50, 60, 0, 10).code() == Errc::invalid_argument));   // empty
  BOOST_TEST((recut(0, 50, 50, 2, 10).code() == Errc::invalid_argument));     // zero-byte message: one number
  BOOST_TEST((recut(100, 50, 60, kMax64, 10).code() == Errc::invalid_argument));
  BOOST_TEST(recut(100, 50, 149, 1, 10).is_ok());
}

BOOST_AUTO_TEST_CASE(gather_and_scatter_with_pieces_match_a_byte_by_byte_reference) {
  const std::uint64_t seed = ftmpi::test::seed_for("fragmenter pieces");
  BOOST_TEST_CONTEXT("seed " << seed) {
    std::mt19937_64 rng(seed);
    for (const LayoutCase& c : layout_cases()) {
      BOOST_TEST_CONTEXT(c.name) {
        // Both ways of finding a fragment's first piece: scanning, and binary search over the starts.
        std::vector<std::uint64_t> starts;
        std::uint64_t at = 0;
        for (const Piece& p : c.pieces) {
          starts.push_back(at);
          at += p.length;
        }
        const std::span<const std::uint64_t> no_starts;
        for (const bool searched : {false, true}) {
          BOOST_TEST_CONTEXT((searched ? "binary search" : "scan")) {
            const auto layout = PiecesLayout::make(c.pieces, c.count, c.extent, searched ? starts : no_starts);
            BOOST_TEST_REQUIRE(layout.is_ok());
            const auto addresses = packed_addresses(c.pieces, c.count, c.extent);
            BOOST_TEST_REQUIRE(layout->packed_size() == addresses.size());
            const Placement where = place(addresses);
            std::vector<std::byte> source(where.buffer_size);
            for (auto& b : source) b = static_cast<std::byte>(rng());
            const std::byte* source_base = source.data() + where.base_offset;
            std::vector<std::byte> packed;
            for (std::ptrdiff_t a : addresses) packed.push_back(source_base[a]);

            for (ChecksumKind kind : kKinds) {
              const auto max_payload = static_cast<std::uint32_t>(1 + rng() % (rng() % 2 == 0 ? 300 : 9000));
              BOOST_TEST_CONTEXT(to_string(kind) << " max_payload " << max_payload) {
                // Sender: the whole message, fragment by fragment.
                const auto fragments = cut_message(packed.size(), 1, max_payload);
                BOOST_TEST_REQUIRE(fragments.is_ok());
                std::vector<std::byte> gathered;
                Checksummer whole(kind);
                for (const FragmentPlan f : *fragments) {
                  std::vector<std::byte> frame(f.length);
                  Checksummer sum(kind);
                  BOOST_TEST_REQUIRE(gather_with_checksum(*layout, source_base, f.offset, frame, sum).is_ok());
                  BOOST_TEST(sum.value() == checksum(kind, packed.data() + f.offset, f.length));
                  whole.update(frame.data(), frame.size());
                  gathered.insert(gathered.end(), frame.begin(), frame.end());
                }
                BOOST_TEST((gathered == packed));
                BOOST_TEST(whole.value() == checksum(kind, packed.data(), packed.size()));

                // Receiver: random fragments scattered into a poisoned buffer change exactly their bytes.
                std::vector<std::byte> target(where.buffer_size, std::byte{0xee});
                std::vector<std::byte> expected = target;
                std::byte* target_base = target.data() + where.base_offset;
                for (int i = 0; i < 20; ++i) {
                  const std::uint64_t offset = rng() % packed.size();
                  const std::size_t length = 1 + rng() % std::min<std::uint64_t>(packed.size() - offset, 6000);
                  const std::span<const std::byte> fragment(packed.data() + offset, length);
                  Checksummer sum(kind);
                  BOOST_TEST_REQUIRE(scatter_with_checksum(*layout, target_base, offset, fragment, sum).is_ok());
                  BOOST_TEST(sum.value() == checksum(kind, fragment.data(), fragment.size()));
                  for (std::size_t b = 0; b < length; ++b) {
                    expected[static_cast<std::size_t>(where.base_offset + addresses[offset + b])] = packed[offset + b];
                  }
                }
                BOOST_TEST((target == expected));
              }
            }
          }
        }
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(contiguous_layout_copies_and_checksums_like_one_block) {
  std::vector<std::byte> message(1000);
  for (std::size_t i = 0; i < message.size(); ++i) message[i] = static_cast<std::byte>(i * 13);
  const PiecesLayout layout = PiecesLayout::contiguous(message.size());
  BOOST_TEST(layout.packed_size() == 1000u);
  std::vector<std::byte> fragment(300);
  Checksummer sum(ChecksumKind::crc32c);
  BOOST_TEST_REQUIRE(gather_with_checksum(layout, message.data(), 699, fragment, sum).is_ok());
  BOOST_TEST(std::equal(fragment.begin(), fragment.end(), message.begin() + 699));
  BOOST_TEST(sum.value() == crc32c(message.data() + 699, 300));
}

BOOST_AUTO_TEST_CASE(gather_and_scatter_refuse_bytes_beyond_the_message) {
  const Piece pieces[] = {{0, 8}};
  const auto layout = PiecesLayout::make(pieces, 4, 16);
  BOOST_TEST_REQUIRE(layout.is_ok());
  std::vector<std::byte> memory(64);
  std::vector<std::byte> fragment(8);
  Checksummer sum(ChecksumKind::sum32);
  BOOST_TEST((gather_with_checksum(*layout, memory.data(), 25, fragment, sum).code() == Errc::out_of_range));
  BOOST_TEST((scatter_with_checksum(*layout, memory.data(), kMax64 - 2, fragment, sum).code() == Errc::out_of_range));
  BOOST_TEST(gather_with_checksum(*layout, memory.data(), 24, fragment, sum).is_ok());
  BOOST_TEST(gather_with_checksum(*layout, memory.data(), 32, std::span<std::byte>(), sum).is_ok());
}

BOOST_AUTO_TEST_CASE(layouts_whose_size_or_span_overflows_are_refused) {
  constexpr auto kMaxDiff = std::numeric_limits<std::ptrdiff_t>::max();
  const Piece huge[] = {{0, std::size_t{1} << 62}, {0, std::size_t{1} << 62}};
  BOOST_TEST((PiecesLayout::make(huge, 2, 1).code() == Errc::invalid_argument));
  const Piece far[] = {{kMaxDiff - 4, 8}};
  BOOST_TEST((PiecesLayout::make(far, 1, 8).code() == Errc::invalid_argument));
  const Piece small[] = {{0, 8}};
  BOOST_TEST((PiecesLayout::make(small, 1000, kMaxDiff / 10).code() == Errc::invalid_argument));
  BOOST_TEST(PiecesLayout::make(small, 1000, 1 << 20).is_ok());
  // Starts must be one per piece, the running sum of the lengths from 0.
  const Piece three[] = {{0, 4}, {8, 0}, {16, 4}};
  const std::uint64_t good[] = {0, 4, 4};
  const std::uint64_t shifted[] = {1, 5, 5};
  const std::uint64_t short_list[] = {0, 4};
  BOOST_TEST(PiecesLayout::make(three, 2, 24, good).is_ok());
  BOOST_TEST((PiecesLayout::make(three, 2, 24, shifted).code() == Errc::invalid_argument));
  BOOST_TEST((PiecesLayout::make(three, 2, 24, short_list).code() == Errc::invalid_argument));
}

BOOST_AUTO_TEST_SUITE_END()

#include "ftmpi/frag/checksum.hpp"

#include <algorithm>
#include <boost/test/unit_test.hpp>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "checksum_engines.hpp"  // libs/frag/src: what the folding constants are built from
#include "ftmpi/test/seed.hpp"

using namespace ftmpi::frag;

namespace {

// The definitions, written as plainly as possible, that every engine must agree with.
std::uint32_t bitwise_crc32c(const unsigned char* p, std::size_t n, std::uint32_t crc = 0) {
  crc = ~crc;
  for (std::size_t i = 0; i < n; ++i) {
    crc ^= p[i];
    for (int k = 0; k < 8; ++k) crc = (crc >> 1) ^ (0x82F63B78u & (0u - (crc & 1u)));
  }
  return ~crc;
}

std::uint32_t bytewise_sum32(const unsigned char* p, std::size_t n) {
  std::uint32_t sum = 0;
  for (std::size_t i = 0; i < n; ++i) sum += static_cast<std::uint32_t>(p[i]) << (8 * (i % 4));
  return sum;
}

std::uint32_t reference(ChecksumKind kind, const unsigned char* p, std::size_t n) {
  switch (kind) {
    case ChecksumKind::crc32c:
      return bitwise_crc32c(p, n);
    case ChecksumKind::sum32:
      return bytewise_sum32(p, n);
    case ChecksumKind::none:
      return 0;
  }
  return 0;
}

std::vector<unsigned char> random_bytes(std::mt19937_64& rng, std::size_t n) {
  std::vector<unsigned char> bytes(n);
  for (auto& b : bytes) b = static_cast<unsigned char>(rng());
  return bytes;
}

std::size_t uniform(std::mt19937_64& rng, std::size_t lo, std::size_t hi) {
  return std::uniform_int_distribution<std::size_t>(lo, hi)(rng);
}

// Lengths from 0 to 70,000, weighted towards the short ones where the kernels switch strategy.
std::size_t random_length(std::mt19937_64& rng) {
  switch (rng() % 3) {
    case 0:
      return uniform(rng, 0, 300);
    case 1:
      return uniform(rng, 0, 4000);
    default:
      return uniform(rng, 0, 70000);
  }
}

constexpr ChecksumKind kKinds[] = {ChecksumKind::crc32c, ChecksumKind::sum32};

// Guard bytes around a copy's destination, to catch writes outside [dst, dst + n).
constexpr std::size_t kGuard = 64;
constexpr unsigned char kGuardByte = 0xA5;

}  // namespace

BOOST_AUTO_TEST_SUITE(checksums)

BOOST_AUTO_TEST_CASE(kinds_round_trip_through_their_names) {
  for (ChecksumKind kind : {ChecksumKind::none, ChecksumKind::crc32c, ChecksumKind::sum32}) {
    auto parsed = parse_checksum_kind(to_string(kind));
    BOOST_TEST_REQUIRE(parsed.is_ok());
    BOOST_TEST((*parsed == kind));
  }
  BOOST_TEST((parse_checksum_kind("md5").code() == ftmpi::base::Errc::invalid_argument));
}

BOOST_AUTO_TEST_CASE(every_engine_gives_the_known_crc32c_vectors) {
  std::vector<unsigned char> zeros(32, 0x00), ones(32, 0xFF), ascending(32);
  for (std::size_t i = 0; i < ascending.size(); ++i) ascending[i] = static_cast<unsigned char>(i);
  constexpr std::string_view digits = "123456789";
  for (const ChecksumEngine* engine : checksum_engines()) {
    BOOST_TEST_CONTEXT("engine " << engine->name) {
      BOOST_TEST(engine->crc32c(digits.data(), digits.size(), 0) == 0xE3069283u);
      // RFC 3720, appendix B.4.
      BOOST_TEST(engine->crc32c(zeros.data(), zeros.size(), 0) == 0x8A9136AAu);
      BOOST_TEST(engine->crc32c(ones.data(), ones.size(), 0) == 0x62A8AB43u);
      BOOST_TEST(engine->crc32c(ascending.data(), ascending.size(), 0) == 0x46DD794Eu);
      BOOST_TEST(engine->crc32c(nullptr, 0, 0) == 0u);
    }
  }
  BOOST_TEST(crc32c(digits.data(), digits.size()) == 0xE3069283u);
}

BOOST_AUTO_TEST_CASE(sum32_adds_little_endian_words_and_pads_the_last) {
  const unsigned char bytes[] = {0x01, 0x02, 0x03, 0x04, 0xFF, 0xFF, 0xFF, 0xFF, 0x10, 0x20};
  for (const ChecksumEngine* engine : checksum_engines()) {
    BOOST_TEST_CONTEXT("engine " << engine->name) {
      BOOST_TEST(engine->sum32(bytes, 0) == 0u);
      BOOST_TEST(engine->sum32(bytes, 4) == 0x04030201u);
      BOOST_TEST(engine->sum32(bytes, 3) == 0x00030201u);
      // 0x04030201 + 0xFFFFFFFF wraps to 0x04030200.
      BOOST_TEST(engine->sum32(bytes, 8) == 0x04030200u);
      BOOST_TEST(engine->sum32(bytes, 10) == 0x04032210u);
    }
  }
  BOOST_TEST(checksum(ChecksumKind::sum32, bytes, 10) == 0x04032210u);
  BOOST_TEST(checksum(ChecksumKind::none, bytes, 10) == 0u);
}

BOOST_AUTO_TEST_CASE(the_default_engine_is_one_of_those_listed) {
  const auto engines = checksum_engines();
  // Which paths the other cases cover depends on this CPU: say so in the log.
  std::string names;
  for (const ChecksumEngine* engine : engines)
    names += std::string(names.empty() ? "" : ", ") + std::string(engine->name);
  BOOST_TEST_MESSAGE("checksum engines on this CPU: " << names << " (default "
                                                      << default_checksum_engine().name << ")");
  BOOST_TEST(std::count(engines.begin(), engines.end(), &default_checksum_engine()) == 1);
  BOOST_TEST(engines.front()->name == "portable");
}

BOOST_AUTO_TEST_CASE(the_engine_list_is_what_this_cpu_can_run) {
  // Asked of the CPU here, not through the library: a machine without AVX-512 or VPCLMULQDQ must see the
  // engines that need them left out, and the default fall back to the best of the rest.
  std::vector<std::string_view> expected{"portable"};
#if defined(__x86_64__)
  __builtin_cpu_init();
  expected.push_back("isa-l");
  const bool sse42 = __builtin_cpu_supports("sse4.2") && __builtin_cpu_supports("pclmul");
  const bool avx2 = sse42 && __builtin_cpu_supports("avx2") && __builtin_cpu_supports("vpclmulqdq");
  const bool avx512 = avx2 && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                      __builtin_cpu_supports("avx512vl");
  if (sse42) expected.push_back("sse4.2");
  if (avx2) expected.push_back("avx2");
  if (avx512) expected.push_back("avx512");
#endif
  std::vector<std::string_view> listed;
  for (const ChecksumEngine* engine : checksum_engines()) listed.push_back(engine->name);
  BOOST_TEST(listed == expected, boost::test_tools::per_element());
  // The fastest this CPU runs, isa-l aside (kept to measure against).
  BOOST_TEST(default_checksum_engine().name == (expected.back() == "isa-l" ? "portable" : expected.back()));
}

BOOST_AUTO_TEST_CASE(the_folding_constants_are_what_their_definitions_say) {
  // The kernels' constants are fold_by(distance) (checksum_engines.hpp): x^(distance +- 32) mod P, shifted.
  // x^n mod P, reflected, is the raw CRC state 1 (reflected: bit 31) carried over n/8 zero bytes, which
  // the plain bitwise CRC above computes (it inverts on entry and exit, hence the ~).
  const std::vector<unsigned char> zeros(2048 / 8 + 8, 0);
  const auto x_pow = [&](std::uint64_t n) -> std::uint64_t {
    return ~bitwise_crc32c(zeros.data(), n / 8, ~0x80000000u);
  };
  namespace detail = ftmpi::frag::checksum_detail;
  for (std::uint64_t distance : {128, 256, 384, 512, 768, 1024, 1536, 2048}) {
    BOOST_TEST_CONTEXT("fold by x^" << distance) {
      BOOST_TEST(detail::fold_by(distance).low == x_pow(distance + 32) << 1);
      BOOST_TEST(detail::fold_by(distance).high == x_pow(distance - 32) << 1);
    }
  }
}

BOOST_AUTO_TEST_CASE(every_engine_matches_the_reference_at_any_length_and_alignment) {
  const std::uint64_t seed = ftmpi::test::seed_for("every_engine_matches_the_reference");
  std::mt19937_64 rng(seed);
  const std::vector<unsigned char> source = random_bytes(rng, 70000 + 64);
  std::vector<unsigned char> dst(70000 + 64 + 2 * kGuard);
  BOOST_TEST_CONTEXT("seed " << seed) {
    for (int round = 0; round < 100; ++round) {
      const std::size_t n = random_length(rng);
      const std::size_t src_off = uniform(rng, 0, 63), dst_off = kGuard + uniform(rng, 0, 63);
      const unsigned char* src = source.data() + src_off;
      const std::uint32_t prior = static_cast<std::uint32_t>(rng());
      const std::uint32_t want_crc = bitwise_crc32c(src, n, prior);
      const std::uint32_t want_sum = bytewise_sum32(src, n);
      for (const ChecksumEngine* engine : checksum_engines()) {
        BOOST_TEST_CONTEXT("engine " << engine->name << ", n " << n << ", src +" << src_off << ", dst +"
                                     << dst_off) {
          BOOST_TEST(engine->crc32c(src, n, prior) == want_crc);
          BOOST_TEST(engine->sum32(src, n) == want_sum);

          std::fill(dst.begin(), dst.end(), kGuardByte);
          BOOST_TEST(engine->copy_crc32c(dst.data() + dst_off, src, n, prior) == want_crc);
          BOOST_TEST(std::memcmp(dst.data() + dst_off, src, n) == 0);
          BOOST_TEST(std::count(dst.begin(), dst.begin() + dst_off, kGuardByte) == std::ptrdiff_t(dst_off));
          BOOST_TEST(std::count(dst.begin() + dst_off + n, dst.end(), kGuardByte) ==
                     std::ptrdiff_t(dst.size() - dst_off - n));

          std::fill(dst.begin(), dst.end(), kGuardByte);
          BOOST_TEST(engine->copy_sum32(dst.data() + dst_off, src, n) == want_sum);
          BOOST_TEST(std::memcmp(dst.data() + dst_off, src, n) == 0);
          BOOST_TEST(std::count(dst.begin(), dst.begin() + dst_off, kGuardByte) == std::ptrdiff_t(dst_off));
          BOOST_TEST(std::count(dst.begin() + dst_off + n, dst.end(), kGuardByte) ==
                     std::ptrdiff_t(dst.size() - dst_off - n));
        }
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(every_engine_matches_the_reference_where_its_kernels_change_strategy) {
  // Word tails, the three-lane and folding thresholds, whole and partial blocks, a next block to prefetch;
  // for avx512, the 256-, 64- and 16-byte steps and the alignment threshold.
  const std::size_t lengths[] = {1,    3,    4,    5,    7,    8,    9,    15,    16,    17,    31,    32,
                                 33,   95,   96,   97,   127,  128,  129,  255,   256,   257,   271,   272,
                                 319,  320,  335,  383,  384,  495,  496,  497,   511,   512,   513,   1023,
                                 1024, 1025, 3071, 3072, 3073, 4095, 4096, 4097,  4159,  4160,  6143,  6144,
                                 6145, 7935, 7936, 7937, 9215, 9216, 9217, 15872, 15873, 23808, 23809, 65536};
  std::mt19937_64 rng(7);
  const std::vector<unsigned char> source = random_bytes(rng, 65536 + 37);
  std::vector<unsigned char> dst(65536 + 37);
  for (std::size_t n : lengths) {
    for (std::size_t offset : {std::size_t{0}, std::size_t{1}, std::size_t{37}}) {
      const unsigned char* src = source.data() + offset;
      const std::uint32_t want_crc = bitwise_crc32c(src, n), want_sum = bytewise_sum32(src, n);
      for (const ChecksumEngine* engine : checksum_engines()) {
        BOOST_TEST_CONTEXT("engine " << engine->name << ", n " << n << ", offset " << offset) {
          BOOST_TEST(engine->crc32c(src, n, 0) == want_crc);
          BOOST_TEST(engine->copy_crc32c(dst.data() + offset, src, n, 0) == want_crc);
          BOOST_TEST(std::memcmp(dst.data() + offset, src, n) == 0);
          BOOST_TEST(engine->sum32(src, n) == want_sum);
          BOOST_TEST(engine->copy_sum32(dst.data() + offset, src, n) == want_sum);
        }
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(every_engine_copies_and_checks_from_every_source_to_every_destination_alignment) {
  // Long kernels align themselves on the destination (or the source): every head length, both ways.
  constexpr std::size_t kLength = 4096 + 100;
  std::mt19937_64 rng(11);
  const std::vector<unsigned char> source = random_bytes(rng, kLength + 64);
  std::vector<unsigned char> dst(kLength + 64 + 2 * kGuard);
  // 64-byte aligned bases, so that the offsets below are the addresses' alignments.
  const std::size_t src_base = (64 - reinterpret_cast<std::uintptr_t>(source.data()) % 64) % 64;
  const std::size_t dst_base = (64 - reinterpret_cast<std::uintptr_t>(dst.data() + kGuard) % 64) % 64;
  for (std::size_t src_off = 0; src_off < 64; ++src_off) {
    const std::size_t n = kLength - src_base;  // fits whatever the base
    const unsigned char* src = source.data() + (src_base + src_off) % 64;
    const std::uint32_t prior = static_cast<std::uint32_t>(rng());
    const std::uint32_t want = bitwise_crc32c(src, n, prior);
    for (const ChecksumEngine* engine : checksum_engines()) {
      if (engine->name == "portable") continue;  // no alignment-dependent paths; slow under ASan
      BOOST_TEST_CONTEXT("engine " << engine->name << ", src alignment " << src_off) {
        BOOST_TEST(engine->crc32c(src, n, prior) == want);
        for (std::size_t dst_off = 0; dst_off < 64; ++dst_off) {
          BOOST_TEST_CONTEXT("dst alignment " << dst_off) {
            unsigned char* out = dst.data() + kGuard + (dst_base + dst_off) % 64;
            std::fill(dst.begin(), dst.end(), kGuardByte);
            BOOST_TEST(engine->copy_crc32c(out, src, n, prior) == want);
            BOOST_TEST(std::memcmp(out, src, n) == 0);
            BOOST_TEST(std::count(dst.data(), out, kGuardByte) == out - dst.data());
            BOOST_TEST(std::count(out + n, dst.data() + dst.size(), kGuardByte) ==
                       dst.data() + dst.size() - (out + n));
          }
        }
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(a_stream_split_anywhere_gives_the_one_piece_value) {
  const std::uint64_t seed = ftmpi::test::seed_for("a_stream_split_anywhere");
  std::mt19937_64 rng(seed);
  BOOST_TEST_CONTEXT("seed " << seed) {
    for (int round = 0; round < 12; ++round) {
      const std::size_t n = random_length(rng);
      const std::vector<unsigned char> message = random_bytes(rng, n);
      // Cut points: many small pieces (odd offsets inside words) and a few large ones.
      std::vector<std::size_t> cuts{0, n};
      const std::size_t pieces = uniform(rng, 0, 40);
      for (std::size_t i = 0; i < pieces; ++i)
        cuts.push_back(rng() % 2 == 0 ? uniform(rng, 0, std::min<std::size_t>(n, 64)) : uniform(rng, 0, n));
      std::sort(cuts.begin(), cuts.end());
      for (ChecksumKind kind : kKinds) {
        const std::uint32_t want = reference(kind, message.data(), n);
        for (const ChecksumEngine* engine : checksum_engines()) {
          BOOST_TEST_CONTEXT("engine " << engine->name << ", " << to_string(kind) << ", n " << n << ", "
                                       << cuts.size() - 1 << " pieces") {
            Checksummer by_update(kind, *engine), by_copy(kind, *engine);
            // The receiver's buffer at an odd address, so that pieces land misaligned.
            std::vector<unsigned char> received(n + 1 + 2 * kGuard, kGuardByte);
            unsigned char* out = received.data() + kGuard + 1;
            for (std::size_t i = 0; i + 1 < cuts.size(); ++i) {
              const std::size_t at = cuts[i], len = cuts[i + 1] - cuts[i];
              by_update.update(message.data() + at, len);
              by_copy.copy(out + at, message.data() + at, len);
            }
            BOOST_TEST(by_update.value() == want);
            BOOST_TEST(by_copy.value() == want);
            // std::equal, not memcmp: an empty message's data() may be null.
            BOOST_TEST(std::equal(message.begin(), message.end(), out));
            BOOST_TEST(std::count(received.begin(), received.begin() + kGuard + 1, kGuardByte) ==
                       std::ptrdiff_t(kGuard + 1));
            BOOST_TEST(std::count(received.end() - kGuard, received.end(), kGuardByte) ==
                       std::ptrdiff_t(kGuard));
          }
        }
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(none_copies_and_checks_nothing) {
  const unsigned char src[] = {1, 2, 3, 4, 5};
  unsigned char dst[5] = {};
  Checksummer none(ChecksumKind::none);
  none.update(src, sizeof src);
  none.copy(dst, src, sizeof src);
  BOOST_TEST(none.value() == 0u);
  BOOST_TEST(std::memcmp(dst, src, sizeof src) == 0);
  BOOST_TEST(copy_and_verify(ChecksumKind::none, dst, src, sizeof src, 0));
}

BOOST_AUTO_TEST_CASE(copy_and_verify_accepts_good_bytes_and_detects_any_single_bit_flip) {
  const std::uint64_t seed = ftmpi::test::seed_for("copy_and_verify_detects_flips");
  std::mt19937_64 rng(seed);
  BOOST_TEST_CONTEXT("seed " << seed) {
    for (int round = 0; round < 200; ++round) {
      const std::size_t n = uniform(rng, 1, round < 150 ? 2000 : 70000);
      std::vector<unsigned char> sent = random_bytes(rng, n);
      std::vector<unsigned char> received(n);
      for (ChecksumKind kind : kKinds) {
        const std::uint32_t expected = checksum(kind, sent.data(), n);
        BOOST_TEST_CONTEXT(to_string(kind) << ", n " << n) {
          BOOST_TEST(copy_and_verify(kind, received.data(), sent.data(), n, expected));
          BOOST_TEST(received == sent);

          const std::size_t bit = uniform(rng, 0, 8 * n - 1);
          std::vector<unsigned char> corrupted = sent;
          corrupted[bit / 8] ^= static_cast<unsigned char>(1u << (bit % 8));
          BOOST_TEST_CONTEXT("bit " << bit) {
            BOOST_TEST(!copy_and_verify(kind, received.data(), corrupted.data(), n, expected));
            BOOST_TEST(received == corrupted);
          }
        }
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(one_shot_forms_agree_with_the_checksummer) {
  const std::uint64_t seed = ftmpi::test::seed_for("one_shot_forms_agree");
  std::mt19937_64 rng(seed);
  BOOST_TEST_CONTEXT("seed " << seed) {
    const std::size_t n = random_length(rng);
    const std::vector<unsigned char> bytes = random_bytes(rng, n);
    std::vector<unsigned char> copy(n);
    for (ChecksumKind kind : kKinds) {
      BOOST_TEST_CONTEXT(to_string(kind) << ", n " << n) {
        BOOST_TEST(checksum(kind, bytes.data(), n) == reference(kind, bytes.data(), n));
        BOOST_TEST(copy_with_checksum(kind, copy.data(), bytes.data(), n) ==
                   reference(kind, bytes.data(), n));
        BOOST_TEST(copy == bytes);
      }
    }
    BOOST_TEST(crc32c(bytes.data() + n / 2, n - n / 2, crc32c(bytes.data(), n / 2)) ==
               bitwise_crc32c(bytes.data(), n));
  }
}

BOOST_AUTO_TEST_SUITE_END()

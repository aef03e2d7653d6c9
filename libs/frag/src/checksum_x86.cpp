// The x86-64 engines. Everything here is compiled for the baseline ISA except the functions marked with a
// target attribute, which run only after the CPU check in checksum.cpp; all are in an anonymous
// namespace, so the linker cannot pick an AVX2-compiled copy of an inline function for baseline code.
//
// CRC32C works on the raw state (the inversions are done once, at the edges):
//  - sse4.2: the crc32 instruction takes 3 cycles but one can start every cycle, so three streams over
//    three lanes of a block keep it busy (8 bytes/cycle; Zen 5 starts two a cycle: `frag_bench units`).
//    The lanes' CRCs are joined as crc(A|B|C) = A*x^(16L) + B*x^(8L) + C mod P: PCLMULQDQ by tabled
//    powers of x, reduced by one more crc32 (Intel, "Fast CRC computation for iSCSI polynomial using
//    CRC32 instruction"; ISA-L's crc32_iscsi_01 and Linux's crc32c-pcl do the same).
//  - avx2: folding (Intel, "Fast CRC computation for generic polynomials using PCLMULQDQ"). Eight 128-bit
//    accumulators in four YMM registers each hold every eighth 16-byte chunk; a step multiplies each by
//    x^1024 mod P (two carry-less multiplies by constants) and adds the next chunk. The copy rides on the
//    same loads: each vector is loaded once, stored and folded. On our Zen 4 this runs at the crc32
//    streams' 8 bytes/cycle in cache, but as one sequential stream it keeps that speed on data that
//    comes from DRAM, where the hardware prefetcher follows three lanes badly (on cold 4 KB buffers
//    ISA-L measured ~5 GB/s, folding ~20). Running folding and crc32 streams side by side on different
//    parts of a block measured 1.4x faster in cache but 1.5-3x slower on cold data, so it is not used.
//  - avx512: the same folding with four 512-bit accumulators (sixteen 128-bit ones, x^2048 a step), each
//    VPCLMULQDQ multiplying four 128-bit lanes: on the Intel Xeon measured its CRC alone ran twice avx2's
//    (docs/benchmarks.md, frag_bench).
#if defined(__x86_64__)

#include <immintrin.h>

#include <array>
#include <cstring>

#include "checksum_engines.hpp"

namespace ftmpi::frag::checksum_detail {
namespace {

// ---- sse4.2: three crc32 streams ------------------------------------------------------------------

// Lane length of the main loop, and the shortest worth splitting (below it the join costs more than
// the three streams save).
constexpr std::size_t kLaneMax = 1024;
constexpr std::size_t kLaneMin = 32;

// kShift[i] = x^(64(i+1) - 33) mod P: a raw CRC c shifted over 8(i+1) bytes is
// crc32_u64(0, clmul(c, kShift[i])), because clmul of two reflected values gains one factor x and
// crc32_u64 multiplies by x^32.
constexpr auto kShift = [] {
  std::array<std::uint32_t, 2 * kLaneMax / 8> t{};
  std::uint32_t v = x_pow_mod_p(64 - 33);
  for (auto& k : t) {
    k = v;
    v = multiply_by_x_pow(v, 64);
  }
  return t;
}();
constexpr std::uint32_t shift_over(std::size_t bytes) { return kShift[bytes / 8 - 1]; }

[[gnu::target("sse4.2,pclmul")]] std::uint32_t join_lanes(std::uint64_t a, std::uint64_t b, std::uint64_t c,
                                                          std::size_t lane) noexcept {
  const __m128i k = _mm_set_epi64x(shift_over(lane), shift_over(2 * lane));
  const __m128i ab = _mm_set_epi64x(static_cast<long long>(b), static_cast<long long>(a));
  const __m128i shifted = _mm_xor_si128(_mm_clmulepi64_si128(ab, k, 0x00), _mm_clmulepi64_si128(ab, k, 0x11));
  return static_cast<std::uint32_t>(_mm_crc32_u64(0, static_cast<std::uint64_t>(_mm_cvtsi128_si64(shifted))) ^
                                    c);
}

// The kernels take (dst, src) and copy only when kCopy; without it dst is null and never offset.

// Loads 16 bytes at s + i, and stores them at d + i when copying (SSE2: any x86-64).
template <bool kCopy>
__m128i take16(unsigned char* d, const unsigned char* s, std::size_t i) noexcept {
  const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i));
  if constexpr (kCopy) _mm_storeu_si128(reinterpret_cast<__m128i*>(d + i), v);
  return v;
}

// Loads 8 bytes at s + i, and stores them at d + i when copying.
template <bool kCopy>
std::uint64_t take8(unsigned char* d, const unsigned char* s, std::size_t i) noexcept {
  std::uint64_t w;
  std::memcpy(&w, s + i, 8);
  if constexpr (kCopy) std::memcpy(d + i, &w, 8);
  return w;
}

// Three lanes look like three short streams, which the hardware prefetcher follows badly (from DRAM the
// lanes ran at a third of the speed), so the three-lane kernel fetches the next block itself, in address
// order as ISA-L does, and the destination too when copying (a read prefetch: an unshared line arrives
// exclusive, ready to be written; PREFETCHW is not on every CPU this engine runs on).
void prefetch_line(const unsigned char* s, std::size_t i) noexcept {
  _mm_prefetch(reinterpret_cast<const char*>(s + i), _MM_HINT_T0);
}

// The last n < 8 (or any n, a word at a time) bytes, one stream.
template <bool kCopy>
[[gnu::target("sse4.2")]] std::uint32_t crc_one_stream(std::uint32_t crc, unsigned char* d,
                                                       const unsigned char* s, std::size_t n) noexcept {
  std::uint64_t c = crc;
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8) c = _mm_crc32_u64(c, take8<kCopy>(d, s, i));
  auto c32 = static_cast<std::uint32_t>(c);
  if (i + 4 <= n) {
    std::uint32_t w;
    std::memcpy(&w, s + i, 4);
    if constexpr (kCopy) std::memcpy(d + i, &w, 4);
    c32 = _mm_crc32_u32(c32, w);
    i += 4;
  }
  for (; i < n; ++i) {
    if constexpr (kCopy) d[i] = s[i];
    c32 = _mm_crc32_u8(c32, s[i]);
  }
  return c32;
}

// One block of three lanes of `lane` bytes (a multiple of 8); `next` is where the block to prefetch
// starts, from s (0: none).
template <bool kCopy>
[[gnu::target("sse4.2,pclmul")]] std::uint32_t crc_three_lanes(std::uint32_t crc, unsigned char* d,
                                                               const unsigned char* s, std::size_t lane,
                                                               std::size_t next) noexcept {
  std::uint64_t a = crc, b = 0, c = 0;
  for (std::size_t i = 0; i < lane; i += 8) {
    if (next != 0 && i % 64 == 0) {
      for (std::size_t line = 0; line < 192; line += 64) {
        prefetch_line(s, next + 3 * i + line);
        if constexpr (kCopy) prefetch_line(d, next + 3 * i + line);
      }
    }
    a = _mm_crc32_u64(a, take8<kCopy>(d, s, i));
    b = _mm_crc32_u64(b, take8<kCopy>(d, s, lane + i));
    c = _mm_crc32_u64(c, take8<kCopy>(d, s, 2 * lane + i));
  }
  return join_lanes(a, b, c, lane);
}

template <bool kCopy>
[[gnu::target("sse4.2,pclmul")]] std::uint32_t crc_update_sse42(std::uint32_t crc, unsigned char* d,
                                                                const unsigned char* s,
                                                                std::size_t n) noexcept {
  for (; n >= 3 * kLaneMax; n -= 3 * kLaneMax, s += 3 * kLaneMax, d += kCopy ? 3 * kLaneMax : 0)
    crc = crc_three_lanes<kCopy>(crc, d, s, kLaneMax, n >= 6 * kLaneMax ? 3 * kLaneMax : 0);
  if (n >= 3 * kLaneMin) {
    const std::size_t lane = n / 24 * 8;
    crc = crc_three_lanes<kCopy>(crc, d, s, lane, 0);
    s += 3 * lane, n -= 3 * lane;
    if constexpr (kCopy) d += 3 * lane;
  }
  return crc_one_stream<kCopy>(crc, d, s, n);
}

// An engine's crc32c and copy_crc32c around a kernel of raw CRC states (they invert on entry and exit).
using RawCrcKernel = std::uint32_t (*)(std::uint32_t crc, unsigned char* d, const unsigned char* s,
                                       std::size_t n) noexcept;

template <RawCrcKernel kKernel>
std::uint32_t crc32c_by(const void* data, std::size_t n, std::uint32_t crc) noexcept {
  return ~kKernel(~crc, nullptr, static_cast<const unsigned char*>(data), n);
}

template <RawCrcKernel kKernel>
std::uint32_t copy_crc32c_by(void* dst, const void* src, std::size_t n, std::uint32_t crc) noexcept {
  return ~kKernel(~crc, static_cast<unsigned char*>(dst), static_cast<const unsigned char*>(src), n);
}

// ---- avx2: VPCLMULQDQ folding --------------------------------------------------------------------

// fold_by (checksum_engines.hpp) gives the constants.
constexpr FoldBy kFold128 = fold_by(128);
constexpr FoldBy kFold256 = fold_by(256);
constexpr FoldBy kFold512 = fold_by(512);
constexpr FoldBy kFold768 = fold_by(768);
constexpr FoldBy kFold1024 = fold_by(1024);

// Below this the crc32 streams are faster: setting up and reducing eight accumulators costs more.
constexpr std::size_t kFoldMin = 256;

[[gnu::target("avx2,vpclmulqdq,pclmul")]] __m128i fold128(__m128i x, FoldBy k) noexcept {
  const __m128i kv = _mm_set_epi64x(static_cast<long long>(k.high), static_cast<long long>(k.low));
  return _mm_xor_si128(_mm_clmulepi64_si128(x, kv, 0x00), _mm_clmulepi64_si128(x, kv, 0x11));
}

[[gnu::target("avx2,vpclmulqdq,pclmul")]] __m256i broadcast(FoldBy k) noexcept {
  return _mm256_set_epi64x(static_cast<long long>(k.high), static_cast<long long>(k.low),
                           static_cast<long long>(k.high), static_cast<long long>(k.low));
}

[[gnu::target("avx2,vpclmulqdq,pclmul")]] __m256i fold256(__m256i x, __m256i k) noexcept {
  return _mm256_xor_si256(_mm256_clmulepi64_epi128(x, k, 0x00), _mm256_clmulepi64_epi128(x, k, 0x11));
}

template <bool kCopy>
[[gnu::target("avx2")]] __m256i take32(unsigned char* d, const unsigned char* s, std::size_t i) noexcept {
  const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(s + i));
  if constexpr (kCopy) _mm256_storeu_si256(reinterpret_cast<__m256i*>(d + i), v);
  return v;
}

// The 128 bytes at s + i folded into x0..x3 (x0 takes the first 32).
template <bool kCopy>
[[gnu::target("avx2,vpclmulqdq,pclmul")]] void fold_in(__m256i (&x)[4], unsigned char* d,
                                                       const unsigned char* s, std::size_t i) noexcept {
  const __m256i by1024 = broadcast(kFold1024);
  for (std::size_t k = 0; k < 4; ++k)
    x[k] = _mm256_xor_si256(fold256(x[k], by1024), take32<kCopy>(d, s, i + 32 * k));
}

// Loads the first 128 bytes into x0..x3; the initial CRC state enters as if added to the first four.
template <bool kCopy>
[[gnu::target("avx2,vpclmulqdq,pclmul")]] void fold_start(__m256i (&x)[4], std::uint32_t crc,
                                                          unsigned char* d, const unsigned char* s) noexcept {
  for (std::size_t k = 0; k < 4; ++k) x[k] = take32<kCopy>(d, s, 32 * k);
  x[0] = _mm256_xor_si256(x[0], _mm256_set_epi64x(0, 0, 0, crc));
}

// The raw CRC of a stretch whose last 128 bytes were the last folded into x0..x3.
[[gnu::target("avx2,vpclmulqdq,pclmul,sse4.2")]] std::uint32_t fold_finish(const __m256i (&x)[4]) noexcept {
  // Bring the accumulators to the last 32 bytes, then the low 128-bit half onto the high one.
  __m256i last = _mm256_xor_si256(x[3], fold256(x[0], broadcast(kFold768)));
  last = _mm256_xor_si256(
      last, _mm256_xor_si256(fold256(x[1], broadcast(kFold512)), fold256(x[2], broadcast(kFold256))));
  const __m128i r =
      _mm_xor_si128(fold128(_mm256_castsi256_si128(last), kFold128), _mm256_extracti128_si256(last, 1));
  // What is left is 16 bytes of message whose CRC state starts at zero: two crc32 steps reduce it.
  const std::uint64_t c = _mm_crc32_u64(0, static_cast<std::uint64_t>(_mm_cvtsi128_si64(r)));
  return static_cast<std::uint32_t>(_mm_crc32_u64(c, static_cast<std::uint64_t>(_mm_extract_epi64(r, 1))));
}

// One stream, each 128 bytes loaded once (and stored when copying) and folded.
template <bool kCopy>
[[gnu::target("avx2,vpclmulqdq,pclmul,sse4.2")]] std::uint32_t crc_update_fold(std::uint32_t crc,
                                                                               unsigned char* d,
                                                                               const unsigned char* s,
                                                                               std::size_t n) noexcept {
  if (n < kFoldMin) return crc_update_sse42<kCopy>(crc, d, s, n);
  __m256i x[4];
  fold_start<kCopy>(x, crc, d, s);
  std::size_t i = 128;
  for (; i + 128 <= n; i += 128) fold_in<kCopy>(x, d, s, i);
  if constexpr (kCopy) d += i;
  return crc_update_sse42<kCopy>(fold_finish(x), d, s + i, n - i);
}

// ---- avx512: VPCLMULQDQ folding on 512-bit vectors -----------------------------------------------

// The raw CRC of a 128-bit remainder whose CRC state starts at zero: two crc32 steps, as avx2 ends.
// (Barrett's reduction with PCLMULQDQ, Intel's folding paper, section 4, gives the same value without
// SSE4.2, but its four dependent multiplies cost 6 ns more a call than these two crc32s, here at every
// length from 256 bytes to 1500; every CPU with PCLMULQDQ has SSE4.2.)
[[gnu::target("sse4.2")]] std::uint32_t crc_of_remainder(__m128i r) noexcept {
  const std::uint64_t c = _mm_crc32_u64(0, static_cast<std::uint64_t>(_mm_cvtsi128_si64(r)));
  return static_cast<std::uint32_t>(_mm_crc32_u64(c, static_cast<std::uint64_t>(_mm_extract_epi64(r, 1))));
}

constexpr FoldBy kFold384 = fold_by(384);
constexpr FoldBy kFold1536 = fold_by(1536);
constexpr FoldBy kFold2048 = fold_by(2048);

// Below this the crc32 streams are as fast (within 1 ns from 64 to 224 bytes, each call waiting for the
// last one's CRC, slower where the length is not a multiple of 64); from it this kernel is the fastest
// (at 256 bytes 14 ns, avx2 14, the crc32 streams 21; at 1024 20, 31 and 57).
constexpr std::size_t kFold512Min = 256;
// From this length the copy's stores (or, without a copy, the loads) are made 64-byte aligned, the bytes
// before going through the crc32 instruction: a store split over two cache lines costs two, and aligning
// took 9000 bytes from 190 to 150 ns and 64 KB from 2.3 to 2.0 us; at 4 KB the head's crc32 latency
// cancels the gain when each call waits for the last, below it the head costs more than it saves.
constexpr std::size_t kAlignMin = 4096;

[[gnu::target("avx512f,avx512bw,avx512vl,vpclmulqdq,pclmul,sse4.2")]] __m512i broadcast512(
    FoldBy k) noexcept {
  const auto low = static_cast<long long>(k.low), high = static_cast<long long>(k.high);
  return _mm512_set_epi64(high, low, high, low, high, low, high, low);
}

// x * x^distance + y, for four 128-bit accumulators at once.
[[gnu::target("avx512f,avx512bw,avx512vl,vpclmulqdq,pclmul,sse4.2")]] __m512i fold512(__m512i x, __m512i by,
                                                                                      __m512i y) noexcept {
  return _mm512_ternarylogic_epi64(_mm512_clmulepi64_epi128(x, by, 0x00),
                                   _mm512_clmulepi64_epi128(x, by, 0x11), y, 0x96);  // a ^ b ^ c
}

template <bool kCopy>
[[gnu::target("avx512f,avx512bw,avx512vl")]] __m512i take64(unsigned char* d, const unsigned char* s,
                                                            std::size_t i) noexcept {
  const __m512i v = _mm512_loadu_si512(s + i);
  if constexpr (kCopy) _mm512_storeu_si512(d + i, v);
  return v;
}

// One stream, as avx2 but 64 bytes to a register: four 512-bit accumulators fold 256 bytes a step; what
// is left is folded 64, then 16 bytes at a time, and the last 0..15 bytes (and, on long buffers, the
// 0..63 before the first aligned address) go through the crc32 instruction.
template <bool kCopy>
[[gnu::target("avx512f,avx512bw,avx512vl,vpclmulqdq,pclmul,sse4.2")]] std::uint32_t crc_update_fold512(
    std::uint32_t crc, unsigned char* d, const unsigned char* s, std::size_t n) noexcept {
  if (n < kFold512Min) return crc_update_sse42<kCopy>(crc, d, s, n);
  if (n >= kAlignMin) {
    const std::size_t head = (0 - reinterpret_cast<std::uintptr_t>(kCopy ? d : s)) & 63;
    crc = crc_one_stream<kCopy>(crc, d, s, head);
    s += head, n -= head;
    if constexpr (kCopy) d += head;
  }
  // The initial CRC state enters as if added to the first four bytes.
  __m512i x0 = _mm512_xor_si512(take64<kCopy>(d, s, 0),
                                _mm512_zextsi128_si512(_mm_cvtsi32_si128(static_cast<int>(crc))));
  std::size_t i = 64;
  if (n >= 256) {
    __m512i x1 = take64<kCopy>(d, s, 64), x2 = take64<kCopy>(d, s, 128), x3 = take64<kCopy>(d, s, 192);
    const __m512i by2048 = broadcast512(kFold2048);
    for (i = 256; i + 256 <= n; i += 256) {
      x0 = fold512(x0, by2048, take64<kCopy>(d, s, i));
      x1 = fold512(x1, by2048, take64<kCopy>(d, s, i + 64));
      x2 = fold512(x2, by2048, take64<kCopy>(d, s, i + 128));
      x3 = fold512(x3, by2048, take64<kCopy>(d, s, i + 192));
    }
    // x0 is 192 bytes before x3, x1 128, x2 64.
    x0 = fold512(x0, broadcast512(kFold1536),
                 fold512(x1, broadcast512(kFold1024), fold512(x2, broadcast512(kFold512), x3)));
  }
  const __m512i by512 = broadcast512(kFold512);
  for (; i + 64 <= n; i += 64) x0 = fold512(x0, by512, take64<kCopy>(d, s, i));
  // The four lanes onto the last one: lane j is 48 - 16j bytes before it (lane 3 is multiplied by zero
  // and taken as it is).
  const __m512i by_lane =
      _mm512_set_epi64(0, 0, static_cast<long long>(kFold128.high), static_cast<long long>(kFold128.low),
                       static_cast<long long>(kFold256.high), static_cast<long long>(kFold256.low),
                       static_cast<long long>(kFold384.high), static_cast<long long>(kFold384.low));
  const __m512i lanes = fold512(x0, by_lane, _mm512_maskz_mov_epi64(0xC0, x0));
  // (The masked extracts: GCC 12 warns that the unmasked ones read an uninitialized register.)
  const __m256i halves = _mm256_xor_si256(_mm512_maskz_extracti64x4_epi64(0xF, lanes, 0),
                                          _mm512_maskz_extracti64x4_epi64(0xF, lanes, 1));
  __m128i r = _mm_xor_si128(_mm256_castsi256_si128(halves), _mm256_extracti128_si256(halves, 1));
  const __m128i by128 =
      _mm_set_epi64x(static_cast<long long>(kFold128.high), static_cast<long long>(kFold128.low));
  for (; i + 16 <= n; i += 16)
    r = _mm_ternarylogic_epi64(_mm_clmulepi64_si128(r, by128, 0x00), _mm_clmulepi64_si128(r, by128, 0x11),
                               take16<kCopy>(d, s, i), 0x96);
  if constexpr (kCopy) d += i;
  return crc_one_stream<kCopy>(crc_of_remainder(r), d, s + i, n - i);
}

// ---- sum32 -------------------------------------------------------------------------------------------

// Words after the last whole vector, and the zero-padded partial word.
template <bool kCopy>
std::uint32_t sum_tail(unsigned char* d, const unsigned char* s, std::size_t i, std::size_t n) noexcept {
  if constexpr (kCopy) std::memcpy(d + i, s + i, n - i);
  std::uint32_t sum = 0;
  for (; i + 4 <= n; i += 4) sum += load_le32(s + i);
  return sum + load_le_partial32(s + i, n - i);
}

// SSE2 is part of x86-64, so this needs no check.
template <bool kCopy>
std::uint32_t sum_sse2(unsigned char* d, const unsigned char* s, std::size_t n) noexcept {
  __m128i a0 = _mm_setzero_si128(), a1 = a0, a2 = a0, a3 = a0;
  std::size_t i = 0;
  for (; i + 64 <= n; i += 64) {
    a0 = _mm_add_epi32(a0, take16<kCopy>(d, s, i));
    a1 = _mm_add_epi32(a1, take16<kCopy>(d, s, i + 16));
    a2 = _mm_add_epi32(a2, take16<kCopy>(d, s, i + 32));
    a3 = _mm_add_epi32(a3, take16<kCopy>(d, s, i + 48));
  }
  for (; i + 16 <= n; i += 16) a0 = _mm_add_epi32(a0, take16<kCopy>(d, s, i));
  __m128i a = _mm_add_epi32(_mm_add_epi32(a0, a1), _mm_add_epi32(a2, a3));
  a = _mm_add_epi32(a, _mm_shuffle_epi32(a, 0x4E));
  a = _mm_add_epi32(a, _mm_shuffle_epi32(a, 0xB1));
  return static_cast<std::uint32_t>(_mm_cvtsi128_si32(a)) + sum_tail<kCopy>(d, s, i, n);
}

std::uint32_t sum32_sse2(const void* data, std::size_t n) noexcept {
  return sum_sse2<false>(nullptr, static_cast<const unsigned char*>(data), n);
}

std::uint32_t copy_sum32_sse2(void* dst, const void* src, std::size_t n) noexcept {
  return sum_sse2<true>(static_cast<unsigned char*>(dst), static_cast<const unsigned char*>(src), n);
}

template <bool kCopy>
[[gnu::target("avx2")]] std::uint32_t sum_avx2(unsigned char* d, const unsigned char* s,
                                               std::size_t n) noexcept {
  __m256i a0 = _mm256_setzero_si256(), a1 = a0, a2 = a0, a3 = a0;
  std::size_t i = 0;
  for (; i + 128 <= n; i += 128) {
    a0 = _mm256_add_epi32(a0, take32<kCopy>(d, s, i));
    a1 = _mm256_add_epi32(a1, take32<kCopy>(d, s, i + 32));
    a2 = _mm256_add_epi32(a2, take32<kCopy>(d, s, i + 64));
    a3 = _mm256_add_epi32(a3, take32<kCopy>(d, s, i + 96));
  }
  for (; i + 32 <= n; i += 32) a0 = _mm256_add_epi32(a0, take32<kCopy>(d, s, i));
  const __m256i a = _mm256_add_epi32(_mm256_add_epi32(a0, a1), _mm256_add_epi32(a2, a3));
  __m128i h = _mm_add_epi32(_mm256_castsi256_si128(a), _mm256_extracti128_si256(a, 1));
  h = _mm_add_epi32(h, _mm_shuffle_epi32(h, 0x4E));
  h = _mm_add_epi32(h, _mm_shuffle_epi32(h, 0xB1));
  return static_cast<std::uint32_t>(_mm_cvtsi128_si32(h)) + sum_tail<kCopy>(d, s, i, n);
}

std::uint32_t sum32_avx2(const void* data, std::size_t n) noexcept {
  return sum_avx2<false>(nullptr, static_cast<const unsigned char*>(data), n);
}

std::uint32_t copy_sum32_avx2(void* dst, const void* src, std::size_t n) noexcept {
  return sum_avx2<true>(static_cast<unsigned char*>(dst), static_cast<const unsigned char*>(src), n);
}

constexpr ChecksumEngine kSse42{"sse4.2", crc32c_by<crc_update_sse42<false>>,
                                copy_crc32c_by<crc_update_sse42<true>>, sum32_sse2, copy_sum32_sse2};
constexpr ChecksumEngine kAvx2{"avx2", crc32c_by<crc_update_fold<false>>,
                               copy_crc32c_by<crc_update_fold<true>>, sum32_avx2, copy_sum32_avx2};
// Sums gain nothing from 512-bit vectors: they are memory-bound already at 256.
constexpr ChecksumEngine kAvx512{"avx512", crc32c_by<crc_update_fold512<false>>,
                                 copy_crc32c_by<crc_update_fold512<true>>, sum32_avx2, copy_sum32_avx2};

}  // namespace

bool cpu_has_sse42_engine() noexcept {
  __builtin_cpu_init();
  return __builtin_cpu_supports("sse4.2") && __builtin_cpu_supports("pclmul");
}
const ChecksumEngine& sse42_engine() noexcept { return kSse42; }

bool cpu_has_avx2_engine() noexcept {
  return cpu_has_sse42_engine() && __builtin_cpu_supports("avx2") && __builtin_cpu_supports("vpclmulqdq");
}
const ChecksumEngine& avx2_engine() noexcept { return kAvx2; }

bool cpu_has_avx512_engine() noexcept {
  return cpu_has_avx2_engine() && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
         __builtin_cpu_supports("avx512vl");
}
const ChecksumEngine& avx512_engine() noexcept { return kAvx512; }

}  // namespace ftmpi::frag::checksum_detail

#endif  // defined(__x86_64__)

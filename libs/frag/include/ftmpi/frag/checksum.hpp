// Payload checksums, computed while the data is copied (docs/architecture.md, "Checksums").
//
// CRC32C (Castagnoli, the iSCSI polynomial) is the default on unreliable paths; sum32 (a 32-bit additive
// sum of little-endian words) is the cheap option; none measures what checksumming costs.
//
// The work is done by a ChecksumEngine, one per instruction set, picked once from what the CPU supports
// (runtime dispatch: one binary runs on any x86-64; nothing is built with -march=native). The default is
// the last of these the CPU runs (isa-l aside):
//   avx512    needs the avx2 engine's features + AVX-512 F, BW and VL. CRC32C by folding four 512-bit
//             vectors (sixteen 128-bit accumulators) with VPCLMULQDQ, the copy fused into it (each
//             vector loaded once, stored, folded); from 4 KB the stores are 64-byte aligned. Below
//             256 bytes the sse4.2 kernel. Sums as avx2.
//   avx2      needs AVX2 + VPCLMULQDQ. The same folding on 256-bit vectors. Sums with AVX2.
//   sse4.2    needs SSE4.2 + PCLMULQDQ. CRC32C with the crc32 instruction on three interleaved streams,
//             joined by a PCLMULQDQ shift (as ISA-L's crc32_iscsi_01 and Linux's crc32c-pcl); the copy
//             goes through the same registers. Sums with SSE2.
//   portable  slicing-by-8 CRC32C tables, scalar sums. Any CPU.
//   isa-l     ISA-L's crc32_iscsi, the copy as memcpy of 8 KB blocks each CRC'd while in L1. Kept to
//             measure against, never the default.
// docs/benchmarks.md ("frag_bench") has the figures of each, by buffer size and by length. On the Intel
// Xeon (AVX-512) of 2026-11-27, avx512 was the fastest engine at every length from 256 bytes (in cache,
// copy+CRC32C 1.7x avx2 at 4 KB, 0.94x ISA-L's CRC alone); below, it runs the sse4.2 kernel. On the AMD
// EPYC (Zen 4) measured before, avx2 and sse4.2 ran at the crc32 instruction's 8 bytes/cycle in cache, as
// ISA-L did, and on data coming from DRAM avx2 beat the three-stream kernels by up to 4x on short buffers.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

#include "ftmpi/base/status.hpp"

namespace ftmpi::frag {

enum class ChecksumKind : std::uint8_t { none = 0, crc32c = 1, sum32 = 2 };

std::string_view to_string(ChecksumKind kind) noexcept;
base::Result<ChecksumKind> parse_checksum_kind(std::string_view text);

// One implementation of the checksum kernels. CRC values follow crc32c() below (pre- and post-inverted,
// continuing from `crc`); sums are of the little-endian 32-bit words of the bytes, the last partial word
// zero-padded, mod 2^32. The copy forms read each source byte once, and write exactly [dst, dst + n).
struct ChecksumEngine {
  std::string_view name;
  std::uint32_t (*crc32c)(const void* data, std::size_t n, std::uint32_t crc) noexcept;
  std::uint32_t (*copy_crc32c)(void* dst, const void* src, std::size_t n, std::uint32_t crc) noexcept;
  std::uint32_t (*sum32)(const void* data, std::size_t n) noexcept;
  std::uint32_t (*copy_sum32)(void* dst, const void* src, std::size_t n) noexcept;
};

// Every engine this CPU can run (portable first); tests and benchmarks compare them.
std::span<const ChecksumEngine* const> checksum_engines() noexcept;
// The fastest of them; what the functions below use unless given another.
const ChecksumEngine& default_checksum_engine() noexcept;

// CRC32C of `n` bytes, continuing from `crc` (the value returned for the bytes before).
std::uint32_t crc32c(const void* data, std::size_t n, std::uint32_t crc = 0) noexcept;

// A running checksum over a byte stream fed in pieces of any length and alignment (a message gathered
// from a derived datatype's pieces gives the same value as the same bytes in one piece).
class Checksummer {
 public:
  explicit Checksummer(ChecksumKind kind, const ChecksumEngine& engine = default_checksum_engine()) noexcept
      : kind_(kind), engine_(&engine) {}
  ChecksumKind kind() const noexcept { return kind_; }
  // Adds bytes to the checksum.
  void update(const void* data, std::size_t n) noexcept;
  // Copies `n` bytes from src to dst and adds them to the checksum, in one pass over the data.
  void copy(void* dst, const void* src, std::size_t n) noexcept;
  // The checksum of everything fed so far (0 for ChecksumKind::none).
  std::uint32_t value() const noexcept;

 private:
  // sum32 over a piece: completes the pending word, hands whole words to the engine, keeps the rest.
  // Copies too when dst is not null.
  void add_to_sum(unsigned char* dst, const unsigned char* src, std::size_t n) noexcept;

  ChecksumKind kind_;
  const ChecksumEngine* engine_;
  std::uint32_t state_ = 0;    // crc32c: running crc; sum32: running sum of whole words
  std::uint32_t partial_ = 0;  // sum32: bytes of an incomplete word, little-endian
  std::uint8_t partial_len_ = 0;
};

// One-shot forms.
std::uint32_t checksum(ChecksumKind kind, const void* data, std::size_t n) noexcept;
std::uint32_t copy_with_checksum(ChecksumKind kind, void* dst, const void* src, std::size_t n) noexcept;
// The receiver's verify-while-copy: copies, and says whether the bytes match `expected`. On a mismatch
// dst holds the (bad) bytes; the caller must not count them as delivered.
bool copy_and_verify(ChecksumKind kind, void* dst, const void* src, std::size_t n,
                     std::uint32_t expected) noexcept;

}  // namespace ftmpi::frag

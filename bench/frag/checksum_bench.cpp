// Checksums against memcpy, for the default engine, then CRC32C for every engine: 4 KB and 64 KB in cache,
// 4 KB, 64 KB and 8 MB from memory (buffers taken in turn from a 128 MB ring, larger than any cache here:
// what a sender meets in a user buffer it has not touched lately).
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ftmpi/bench/harness.hpp"
#include "ftmpi/frag/checksum.hpp"
#include "sections.hpp"

namespace ftmpi::bench {
namespace {

using frag::ChecksumEngine;

constexpr std::chrono::milliseconds kMinRun{10};
constexpr int kRuns = 5;
// The alternative to fusing: copy a block, then CRC it while it is still in L1.
constexpr std::size_t kHotBlock = 8 * 1024;

// Source and destination buffers of one size: a single pair, which stays in cache, or enough pairs that
// each is evicted before its turn comes again.
enum class Where { cache, memory };

class Buffers {
 public:
  Buffers(std::size_t size, Where where)
      : size_(size), count_(where == Where::cache ? 1 : (std::size_t{128} << 20) / size) {
    src_.resize(size_ * count_);
    dst_.resize(size_ * count_);
    std::mt19937_64 rng(size);
    for (std::size_t i = 0; i < src_.size(); i += 8) {
      const std::uint64_t word = rng();
      std::memcpy(src_.data() + i, &word, std::min<std::size_t>(8, src_.size() - i));
    }
    std::fill(dst_.begin(), dst_.end(), 0);
  }
  std::size_t size() const { return size_; }
  const unsigned char* src(std::uint64_t i) const { return src_.data() + (i % count_) * size_; }
  unsigned char* dst(std::uint64_t i) { return dst_.data() + (i % count_) * size_; }

 private:
  std::size_t size_;
  std::size_t count_;
  std::vector<unsigned char> src_, dst_;
};

// GB/s of `op(i)` over buffers of b.size() bytes.
template <typename Op>
double gb_per_s(const Buffers& b, Op op) {
  const Timing t = measure(
      [&](std::uint64_t iterations) {
        for (std::uint64_t i = 0; i < iterations; ++i) op(i);
        clobber_memory();
      },
      1.0, kMinRun, kRuns);
  return static_cast<double>(b.size()) / t.ns_per_op;
}

std::string row_name(std::size_t size, Where where) {
  char name[48];
  if (size >= (1u << 20))
    std::snprintf(name, sizeof name, "%zu MB", size >> 20);
  else
    std::snprintf(name, sizeof name, "%zu KB", size >> 10);
  return std::string(name) + (where == Where::cache ? ", in cache" : ", from memory");
}

const ChecksumEngine* engine_named(std::string_view name) {
  for (const ChecksumEngine* e : frag::checksum_engines())
    if (e->name == name) return e;
  return nullptr;
}

}  // namespace

void run_checksum_bench() {
  const ChecksumEngine& best = frag::default_checksum_engine();
  const ChecksumEngine* isal = engine_named("isa-l");
  std::printf("## Checksums (engine: %.*s)\n\n", static_cast<int>(best.name.size()), best.name.data());

  Table main({"buffers", "memcpy GB/s", "crc32c GB/s", "copy+crc32c GB/s", "copy+crc32c / memcpy",
              "memcpy, then crc32c per 8 KB / memcpy", "sum32 GB/s", "copy+sum32 GB/s", "copy+sum32 / memcpy",
              "ISA-L crc32c GB/s"});
  Table engines({"buffers", "engine", "crc32c GB/s", "copy+crc32c GB/s"});
  const std::pair<std::size_t, Where> rows[] = {{std::size_t{4} << 10, Where::cache},
                                                {std::size_t{64} << 10, Where::cache},
                                                {std::size_t{4} << 10, Where::memory},
                                                {std::size_t{64} << 10, Where::memory},
                                                {std::size_t{8} << 20, Where::memory}};
  for (const auto& [size, where] : rows) {
    Buffers b(size, where);
    std::uint32_t sink = 0;
    const double memcpy_rate = gb_per_s(b, [&](std::uint64_t i) { std::memcpy(b.dst(i), b.src(i), size); });
    const double crc = gb_per_s(b, [&](std::uint64_t i) { sink ^= best.crc32c(b.src(i), size, 0); });
    const double copy_crc =
        gb_per_s(b, [&](std::uint64_t i) { sink ^= best.copy_crc32c(b.dst(i), b.src(i), size, 0); });
    const double copy_then_crc = gb_per_s(b, [&](std::uint64_t i) {
      std::uint32_t c = 0;
      for (std::size_t at = 0; at < size; at += kHotBlock) {
        const std::size_t n = std::min(kHotBlock, size - at);
        std::memcpy(b.dst(i) + at, b.src(i) + at, n);
        c = best.crc32c(b.dst(i) + at, n, c);
      }
      sink ^= c;
    });
    const double sum = gb_per_s(b, [&](std::uint64_t i) { sink ^= best.sum32(b.src(i), size); });
    const double copy_sum =
        gb_per_s(b, [&](std::uint64_t i) { sink ^= best.copy_sum32(b.dst(i), b.src(i), size); });
    const double isal_crc =
        isal == nullptr ? 0 : gb_per_s(b, [&](std::uint64_t i) { sink ^= isal->crc32c(b.src(i), size, 0); });
    main.add_row({row_name(size, where), fixed(memcpy_rate, 1), fixed(crc, 1), fixed(copy_crc, 1),
                  fixed(copy_crc / memcpy_rate), fixed(copy_then_crc / memcpy_rate), fixed(sum, 1),
                  fixed(copy_sum, 1), fixed(copy_sum / memcpy_rate),
                  isal == nullptr ? "-" : fixed(isal_crc, 1)});

    for (const ChecksumEngine* e : frag::checksum_engines()) {
      const double e_crc = gb_per_s(b, [&](std::uint64_t i) { sink ^= e->crc32c(b.src(i), size, 0); });
      const double e_copy_crc =
          gb_per_s(b, [&](std::uint64_t i) { sink ^= e->copy_crc32c(b.dst(i), b.src(i), size, 0); });
      engines.add_row({row_name(size, where), std::string(e->name), fixed(e_crc, 1), fixed(e_copy_crc, 1)});
    }
    keep(sink);
  }
  main.print();
  std::printf("\nEvery engine this CPU runs:\n\n");
  engines.print();
  std::printf("\n");
}

}  // namespace ftmpi::bench

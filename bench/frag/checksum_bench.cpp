// Checksums against memcpy, for the default engine, then CRC32C for every engine: 4 KB and 64 KB in cache,
// 4 KB, 64 KB and 8 MB from memory (buffers taken in turn from a 128 MB ring, larger than most caches:
// what a sender meets in a user buffer it has not touched lately); then copy+CRC32C by length, in cache,
// from a header's few bytes to a 64 KB shared-memory slot, where the kernels switch strategy.
// With rounds > 1 each cell is measured once per round, the rounds interleaved, and the median reported.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
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

// Measures each cell once per round, interleaved, and keeps the median of the rounds.
class Cells {
 public:
  explicit Cells(int rounds) : rounds_(rounds) {}
  // Returns the cell's index.
  std::size_t add(std::function<double()> measure_once) {
    measures_.push_back(std::move(measure_once));
    return measures_.size() - 1;
  }
  void run() {
    values_.assign(measures_.size(), {});
    for (int r = 0; r < rounds_; ++r)
      for (std::size_t c = 0; c < measures_.size(); ++c) values_[c].push_back(measures_[c]());
  }
  double median(std::size_t cell) const {
    std::vector<double> v = values_[cell];
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
  }

 private:
  int rounds_;
  std::vector<std::function<double()>> measures_;
  std::vector<std::vector<double>> values_;
};

// ns per call of op(i) (the same buffers every time: in cache).
template <typename Op>
double ns_per_call(Op op) {
  return measure(
             [&](std::uint64_t iterations) {
               for (std::uint64_t i = 0; i < iterations; ++i) op(i);
               clobber_memory();
             },
             1.0, kMinRun, kRuns)
      .ns_per_op;
}

void run_length_table(int rounds) {
  // A wire header, small fragments, an Ethernet MTU, a jumbo frame, a shm slot.
  const std::size_t lengths[] = {16, 64, 112, 128, 192, 256, 384, 512, 1024, 1500, 4096, 9000, 65536};
  std::vector<const ChecksumEngine*> engines;
  std::vector<std::string> headers{"bytes", "memcpy ns"};
  for (const ChecksumEngine* e : frag::checksum_engines()) {
    if (e->name == "portable") continue;  // 30x slower: not a candidate
    engines.push_back(e);
    headers.push_back(std::string(e->name) + " copy+crc32c ns");
  }
  Table table(headers);
  std::vector<unsigned char> src(65536), dst(65536);
  std::mt19937_64 rng(1);
  for (auto& byte : src) byte = static_cast<unsigned char>(rng());
  for (std::size_t n : lengths) {
    std::uint32_t sink = 0;
    Cells cells(rounds);
    cells.add([&] { return ns_per_call([&](std::uint64_t) { std::memcpy(dst.data(), src.data(), n); }); });
    for (const ChecksumEngine* e : engines)
      cells.add([&, e] {
        return ns_per_call([&](std::uint64_t) { sink ^= e->copy_crc32c(dst.data(), src.data(), n, sink); });
      });
    cells.run();
    keep(sink);
    std::vector<std::string> row{std::to_string(n)};
    for (std::size_t c = 0; c < engines.size() + 1; ++c) row.push_back(fixed(cells.median(c), 1));
    table.add_row(row);
  }
  std::printf(
      "\nCopy+CRC32C by length, in cache (ns per call; below its threshold an engine uses the crc32 "
      "instruction):\n\n");
  table.print();
}

}  // namespace

void run_checksum_bench(int rounds) {
  const ChecksumEngine& best = frag::default_checksum_engine();
  const ChecksumEngine* isal = engine_named("isa-l");
  std::printf("## Checksums (engine: %.*s; median of %d round%s)\n\n", static_cast<int>(best.name.size()),
              best.name.data(), rounds, rounds == 1 ? "" : "s");

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
    Cells cells(rounds);
    const std::size_t memcpy_cell = cells.add(
        [&] { return gb_per_s(b, [&](std::uint64_t i) { std::memcpy(b.dst(i), b.src(i), size); }); });
    const std::size_t crc_cell = cells.add(
        [&] { return gb_per_s(b, [&](std::uint64_t i) { sink ^= best.crc32c(b.src(i), size, 0); }); });
    const std::size_t copy_crc_cell = cells.add([&] {
      return gb_per_s(b, [&](std::uint64_t i) { sink ^= best.copy_crc32c(b.dst(i), b.src(i), size, 0); });
    });
    const std::size_t copy_then_crc_cell = cells.add([&] {
      return gb_per_s(b, [&](std::uint64_t i) {
        std::uint32_t c = 0;
        for (std::size_t at = 0; at < size; at += kHotBlock) {
          const std::size_t n = std::min(kHotBlock, size - at);
          std::memcpy(b.dst(i) + at, b.src(i) + at, n);
          c = best.crc32c(b.dst(i) + at, n, c);
        }
        sink ^= c;
      });
    });
    const std::size_t sum_cell =
        cells.add([&] { return gb_per_s(b, [&](std::uint64_t i) { sink ^= best.sum32(b.src(i), size); }); });
    const std::size_t copy_sum_cell = cells.add([&] {
      return gb_per_s(b, [&](std::uint64_t i) { sink ^= best.copy_sum32(b.dst(i), b.src(i), size); });
    });
    const std::size_t isal_cell = cells.add([&] {
      return isal == nullptr ? 0
                             : gb_per_s(b, [&](std::uint64_t i) { sink ^= isal->crc32c(b.src(i), size, 0); });
    });
    std::vector<std::pair<std::size_t, std::size_t>> engine_cells;
    for (const ChecksumEngine* e : frag::checksum_engines()) {
      const std::size_t crc = cells.add(
          [&, e] { return gb_per_s(b, [&](std::uint64_t i) { sink ^= e->crc32c(b.src(i), size, 0); }); });
      const std::size_t copy_crc = cells.add([&, e] {
        return gb_per_s(b, [&](std::uint64_t i) { sink ^= e->copy_crc32c(b.dst(i), b.src(i), size, 0); });
      });
      engine_cells.emplace_back(crc, copy_crc);
    }
    cells.run();
    keep(sink);

    const double memcpy_rate = cells.median(memcpy_cell);
    main.add_row({row_name(size, where), fixed(memcpy_rate, 1), fixed(cells.median(crc_cell), 1),
                  fixed(cells.median(copy_crc_cell), 1), fixed(cells.median(copy_crc_cell) / memcpy_rate),
                  fixed(cells.median(copy_then_crc_cell) / memcpy_rate), fixed(cells.median(sum_cell), 1),
                  fixed(cells.median(copy_sum_cell), 1), fixed(cells.median(copy_sum_cell) / memcpy_rate),
                  isal == nullptr ? "-" : fixed(cells.median(isal_cell), 1)});
    std::size_t k = 0;
    for (const ChecksumEngine* e : frag::checksum_engines()) {
      const auto [crc, copy_crc] = engine_cells[k++];
      engines.add_row({row_name(size, where), std::string(e->name), fixed(cells.median(crc), 1),
                       fixed(cells.median(copy_crc), 1)});
    }
  }
  main.print();
  std::printf("\nEvery engine this CPU runs:\n\n");
  engines.print();
  run_length_table(rounds);
  std::printf("\n");
}

}  // namespace ftmpi::bench

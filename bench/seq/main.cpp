// seq_bench: RangeList::record() under the arrival patterns a receiver sees, and coverage() queries.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "ftmpi/bench/harness.hpp"
#include "ftmpi/seq/range_list.hpp"

namespace {

using ftmpi::seq::Range;
using ftmpi::seq::RangeList;
using ftmpi::seq::Sequence;

// Fragments of this many numbers, like 1 KiB frames; record() costs the same for any size.
constexpr Sequence kFragment = 1024;

Range fragment(std::size_t i) { return {i * kFragment + 1, (i + 1) * kFragment}; }

std::vector<Range> in_order(std::size_t count) {
  std::vector<Range> arrivals;
  for (std::size_t i = 0; i < count; ++i) arrivals.push_back(fragment(i));
  return arrivals;
}

std::vector<Range> shuffled_within_windows(std::size_t count, std::size_t window, std::mt19937_64& rng) {
  auto arrivals = in_order(count);
  for (std::size_t begin = 0; begin < count; begin += window) {
    const auto end = std::min(count, begin + window);
    std::shuffle(arrivals.begin() + static_cast<std::ptrdiff_t>(begin),
                 arrivals.begin() + static_cast<std::ptrdiff_t>(end), rng);
  }
  return arrivals;
}

// The even fragments in order, then the odd ones (the holes) in random order.
std::vector<Range> every_other_then_holes(std::size_t count, std::mt19937_64& rng) {
  std::vector<Range> arrivals;
  std::vector<Range> holes;
  for (std::size_t i = 0; i < count; ++i) (i % 2 == 0 ? arrivals : holes).push_back(fragment(i));
  std::shuffle(holes.begin(), holes.end(), rng);
  arrivals.insert(arrivals.end(), holes.begin(), holes.end());
  return arrivals;
}

std::vector<Range> random_order(std::size_t count, std::mt19937_64& rng) {
  auto arrivals = in_order(count);
  std::shuffle(arrivals.begin(), arrivals.end(), rng);
  return arrivals;
}

// ns per record() over a fresh list fed all arrivals.
double ns_per_record(const std::vector<Range>& arrivals, int runs = 7) {
  const auto timing = ftmpi::bench::measure(
      [&](std::uint64_t iterations) {
        for (std::uint64_t it = 0; it < iterations; ++it) {
          RangeList list;
          for (const Range r : arrivals) ftmpi::bench::keep(list.record(r.first, r.last).is_ok());
          ftmpi::bench::keep(list.largest_in_order());
        }
      },
      static_cast<double>(arrivals.size()), std::chrono::milliseconds(50), runs);
  return timing.ns_per_op;
}

// ns per coverage() query of a fragment-sized range, over a list already holding `recorded`.
double ns_per_coverage(const std::vector<Range>& recorded, const std::vector<Range>& queries) {
  RangeList list;
  for (const Range r : recorded) ftmpi::bench::keep(list.record(r.first, r.last).is_ok());
  const auto timing = ftmpi::bench::measure(
      [&](std::uint64_t iterations) {
        for (std::uint64_t it = 0; it < iterations; ++it) {
          for (const Range q : queries) ftmpi::bench::keep(list.coverage(q.first, q.last).is_ok());
        }
      },
      static_cast<double>(queries.size()));
  return timing.ns_per_op;
}

}  // namespace

int main() {
  std::mt19937_64 rng(42);
  ftmpi::bench::Table table({"pattern", "records", "ns/record"});
  const auto row = [&](const std::string& pattern, std::size_t records, double ns) {
    table.add_row({pattern, std::to_string(records), ftmpi::bench::fixed(ns)});
  };

  constexpr std::size_t kCount = 100'000;
  row("in order", kCount, ns_per_record(in_order(kCount)));
  row("reordered within windows of 8", kCount, ns_per_record(shuffled_within_windows(kCount, 8, rng)));
  row("reordered within windows of 64", kCount, ns_per_record(shuffled_within_windows(kCount, 64, rng)));
  row("every other missing, then holes filled randomly", kCount,
      ns_per_record(every_other_then_holes(kCount, rng)));
  row("random order", kCount, ns_per_record(random_order(kCount, rng)));
  constexpr std::size_t kLargeCount = 500'000;
  row("random order", kLargeCount, ns_per_record(random_order(kLargeCount, rng), 3));

  // Duplicate checks: against the in-order prefix (the common case) and against 50,000 stored ranges.
  auto queries = random_order(kCount, rng);
  row("coverage(), everything in order (prefix only)", kCount, ns_per_coverage(in_order(kCount), queries));
  std::vector<Range> every_other;
  for (std::size_t i = 0; i < kCount; i += 2) every_other.push_back(fragment(i));
  row("coverage(), every other fragment missing", kCount, ns_per_coverage(every_other, queries));

  table.print();
  return 0;
}

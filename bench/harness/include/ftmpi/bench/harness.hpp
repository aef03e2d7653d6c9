// A small benchmark harness: time a loop, take the median of several runs, print a Markdown table.
// Numbers go into docs, never into asserts.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

namespace ftmpi::bench {

// Keeps the compiler from discarding a computed value or the memory behind a pointer.
template <typename T>
inline void keep(T const& value) {
  asm volatile("" : : "r,m"(value) : "memory");
}
inline void clobber_memory() { asm volatile("" : : : "memory"); }

struct Timing {
  double ns_per_op = 0;  // median over the runs
  double min_ns_per_op = 0;
};

// Calls body(iterations) — which must do `iterations * ops_per_iteration` operations — growing the
// iteration count until one run lasts `min_run`, then repeats `runs` times and returns the median.
template <typename Body>
Timing measure(Body&& body, double ops_per_iteration = 1.0,
               std::chrono::nanoseconds min_run = std::chrono::milliseconds(50), int runs = 7) {
  using clock = std::chrono::steady_clock;
  std::uint64_t iterations = 1;
  for (;;) {
    auto t0 = clock::now();
    body(iterations);
    auto elapsed = clock::now() - t0;
    if (elapsed >= min_run || iterations >= (1ULL << 40)) break;
    double scale = elapsed.count() > 0 ? 1.5 * static_cast<double>(min_run.count()) / static_cast<double>(elapsed.count()) : 100.0;
    iterations = static_cast<std::uint64_t>(static_cast<double>(iterations) * std::clamp(scale, 2.0, 100.0));
  }
  std::vector<double> per_op;
  for (int r = 0; r < runs; ++r) {
    auto t0 = clock::now();
    body(iterations);
    auto ns = std::chrono::duration<double, std::nano>(clock::now() - t0).count();
    per_op.push_back(ns / (static_cast<double>(iterations) * ops_per_iteration));
  }
  std::sort(per_op.begin(), per_op.end());
  return {per_op[per_op.size() / 2], per_op.front()};
}

inline std::string fixed(double value, int decimals = 2) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, value);
  return buf;
}

// A Markdown table, so that benchmark output can be pasted into docs as it is.
class Table {
 public:
  explicit Table(std::vector<std::string> headers) : headers_(std::move(headers)) {}
  void add_row(std::vector<std::string> cells) { rows_.push_back(std::move(cells)); }
  void print(std::FILE* out = stdout) const {
    std::vector<std::size_t> width(headers_.size(), 3);
    for (std::size_t c = 0; c < headers_.size(); ++c) width[c] = std::max(width[c], headers_[c].size());
    for (const auto& row : rows_)
      for (std::size_t c = 0; c < row.size() && c < width.size(); ++c) width[c] = std::max(width[c], row[c].size());
    auto line = [&](const std::vector<std::string>& cells) {
      std::fputs("|", out);
      for (std::size_t c = 0; c < width.size(); ++c) {
        const std::string& cell = c < cells.size() ? cells[c] : std::string();
        std::fprintf(out, " %-*s |", static_cast<int>(width[c]), cell.c_str());
      }
      std::fputs("\n", out);
    };
    line(headers_);
    std::fputs("|", out);
    for (std::size_t w : width) std::fprintf(out, "%s|", std::string(w + 2, '-').c_str());
    std::fputs("\n", out);
    for (const auto& row : rows_) line(row);
    std::fflush(out);
  }

 private:
  std::vector<std::string> headers_;
  std::vector<std::vector<std::string>> rows_;
};

}  // namespace ftmpi::bench

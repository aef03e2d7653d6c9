#include "ftmpi/bench/progress.hpp"

#include <unistd.h>

#include <cstdio>
#include <string>

namespace ftmpi::bench {

ProgressLine::ProgressLine(std::string title, int total)
    : title_(std::move(title)), total_(total), enabled_(::isatty(STDERR_FILENO) != 0), start_(std::chrono::steady_clock::now()) {}

std::string ProgressLine::time_left(std::chrono::steady_clock::duration elapsed, int done, int total) {
  if (done <= 0 || total <= done) return {};
  const double seconds = std::chrono::duration<double>(elapsed).count() / done * (total - done);
  const long s = static_cast<long>(seconds + 0.5);
  char buf[64];
  if (s >= 60) {
    std::snprintf(buf, sizeof buf, "about %ld min %ld s left", s / 60, s % 60);
  } else {
    std::snprintf(buf, sizeof buf, "about %ld s left", s);
  }
  return buf;
}

void ProgressLine::begin(const std::string& label) {
  label_ = label;
  draw();
}

void ProgressLine::end() {
  ++done_;
  if (done_ > total_) total_ = done_;
}

void ProgressLine::say(const std::string& line) {
  if (enabled_) std::fprintf(stderr, "\r\033[K");
  std::fprintf(stderr, "%s: %s\n", title_.c_str(), line.c_str());
  draw();
}

void ProgressLine::clear() {
  if (enabled_) std::fprintf(stderr, "\r\033[K");
  std::fflush(stderr);
}

void ProgressLine::draw() {
  if (!enabled_) return;
  const std::string left = time_left(std::chrono::steady_clock::now() - start_, done_, total_);
  constexpr int kWidth = 20;
  const int filled = total_ > 0 ? done_ * kWidth / total_ : 0;
  const std::string bar = std::string(static_cast<std::size_t>(filled), '#') + std::string(static_cast<std::size_t>(kWidth - filled), '.');
  std::fprintf(stderr, "\r\033[K%s [%s] %d of %d: %s%s%s", title_.c_str(), bar.c_str(), done_ + 1, total_, label_.c_str(),
               left.empty() ? "" : " · ", left.c_str());
  std::fflush(stderr);
}

}  // namespace ftmpi::bench

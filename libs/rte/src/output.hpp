// Forwarding a rank's stdout or stderr to ftrun's, one whole line at a time (private to rte).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <utility>

namespace ftmpi::rte {

// Lines from different ranks never interleave because each is written with one write_all, prefix
// included. A line longer than kMaxLineBytes is forwarded in pieces, so a rank that never writes a newline
// cannot make ftrun buffer without bound.
class LineForwarder {
 public:
  static constexpr std::size_t kMaxLineBytes = 64 * 1024;

  // `prefix` starts every forwarded line ("[3] " with --tag-output, else empty).
  LineForwarder(int out_fd, std::string prefix) : out_fd_(out_fd), prefix_(std::move(prefix)) {}

  void feed(std::string_view bytes);
  // At EOF: forwards a last line that has no newline. With a prefix it gets one, so that the next
  // prefixed line starts on a line of its own; without, the bytes pass unchanged.
  void finish();

 private:
  void emit(std::string_view line, bool add_newline);

  int out_fd_;
  std::string prefix_;
  std::string partial_;
};

}  // namespace ftmpi::rte

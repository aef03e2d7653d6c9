#include "output.hpp"

#include "sys.hpp"

namespace ftmpi::rte {

void LineForwarder::feed(std::string_view bytes) {
  while (!bytes.empty()) {
    const auto newline = bytes.find('\n');
    if (newline == std::string_view::npos) {
      partial_.append(bytes);
      if (partial_.size() >= kMaxLineBytes) {
        emit(partial_, !prefix_.empty());
        partial_.clear();
      }
      return;
    }
    if (partial_.empty()) {
      emit(bytes.substr(0, newline + 1), false);
    } else {
      partial_.append(bytes.substr(0, newline + 1));
      emit(partial_, false);
      partial_.clear();
    }
    bytes.remove_prefix(newline + 1);
  }
}

void LineForwarder::finish() {
  if (partial_.empty()) return;
  emit(partial_, !prefix_.empty());
  partial_.clear();
}

void LineForwarder::emit(std::string_view line, bool add_newline) {
  std::string out;
  out.reserve(prefix_.size() + line.size() + 1);
  out.append(prefix_).append(line);
  if (add_newline) out.push_back('\n');
  // A closed or broken ftrun stdout must not stop the job: the output is lost, nothing else.
  (void)sys::write_all(out_fd_, out);
}

}  // namespace ftmpi::rte

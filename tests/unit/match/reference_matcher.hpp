// The MPI matching rules written as plainly as possible (linear lists, first fit), to check
// ftmpi::match::Matcher against, decision by decision. Same interface, same error codes.
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "ftmpi/base/status.hpp"
#include "ftmpi/match/matcher.hpp"

namespace ftmpi::match::test {

class ReferenceMatcher {
 public:
  ReferenceMatcher(std::uint32_t peer_count, std::uint64_t ahead_window)
      : ahead_window_(ahead_window), next_seq_(peer_count, 1) {}

  base::Result<std::optional<Envelope>> post_receive(const Pattern& pattern, ReceiveHandle receive) {
    if (!pattern.is_valid()) return base::Status(base::Errc::invalid_argument);
    if (find_posted(receive) != posted_.end()) return base::Status(base::Errc::invalid_argument);
    auto fit = std::find_if(unexpected_.begin(), unexpected_.end(),
                            [&](const Envelope& m) { return pattern.matches(m); });
    if (fit != unexpected_.end()) {
      Envelope message = *fit;
      unexpected_.erase(fit);
      return std::optional<Envelope>(message);
    }
    posted_.push_back({pattern, receive});
    return std::optional<Envelope>();
  }

  bool cancel_receive(ReceiveHandle receive) {
    auto it = find_posted(receive);
    if (it == posted_.end()) return false;
    posted_.erase(it);
    return true;
  }

  base::Status message_arrived(const Envelope& message, std::vector<Event>& events) {
    if (message.peer >= next_seq_.size()) return base::Status(base::Errc::out_of_range);
    if (message.msg_seq == 0 || message.source < 0 || message.tag < 0)
      return base::Status(base::Errc::malformed);
    std::uint64_t& next = next_seq_[message.peer];
    if (message.msg_seq < next) return base::Status(base::Errc::duplicate);
    if (message.msg_seq >= next + ahead_window_) return base::Status(base::Errc::out_of_range);
    if (!held_.emplace(std::pair(message.peer, message.msg_seq), message).second) {
      return base::Status(base::Errc::duplicate);
    }
    for (auto it = held_.find({message.peer, next}); it != held_.end();
         it = held_.find({message.peer, next})) {
      release(it->second, events);
      held_.erase(it);
      ++next;
    }
    return {};
  }

  std::optional<Envelope> probe(const Pattern& pattern) const {
    if (!pattern.is_valid()) return std::nullopt;
    for (const Envelope& m : unexpected_) {
      if (pattern.matches(m)) return m;
    }
    return std::nullopt;
  }

  std::optional<Envelope> take_unexpected(const Pattern& pattern) {
    if (!pattern.is_valid()) return std::nullopt;
    auto fit = std::find_if(unexpected_.begin(), unexpected_.end(),
                            [&](const Envelope& m) { return pattern.matches(m); });
    if (fit == unexpected_.end()) return std::nullopt;
    Envelope message = *fit;
    unexpected_.erase(fit);
    return message;
  }

  Counters counters() const { return {posted_.size(), unexpected_.size(), held_.size()}; }

  std::uint64_t next_seq(std::uint32_t peer) const { return next_seq_[peer]; }

 private:
  struct Posted {
    Pattern pattern;
    ReceiveHandle handle = 0;
  };

  std::vector<Posted>::iterator find_posted(ReceiveHandle receive) {
    return std::find_if(posted_.begin(), posted_.end(), [&](const Posted& p) { return p.handle == receive; });
  }

  void release(const Envelope& message, std::vector<Event>& events) {
    auto fit = std::find_if(posted_.begin(), posted_.end(),
                            [&](const Posted& p) { return p.pattern.matches(message); });
    if (fit == posted_.end()) {
      unexpected_.push_back(message);
      events.push_back({Event::Kind::unexpected, message, 0});
      return;
    }
    events.push_back({Event::Kind::matched, message, fit->handle});
    posted_.erase(fit);
  }

  std::uint64_t ahead_window_;
  std::vector<std::uint64_t> next_seq_;
  std::vector<Posted> posted_;                                        // in post order
  std::vector<Envelope> unexpected_;                                  // in release order
  std::map<std::pair<std::uint32_t, std::uint64_t>, Envelope> held_;  // (peer, msg_seq)
};

inline std::string to_text(const Envelope& m) {
  return "{peer " + std::to_string(m.peer) + " source " + std::to_string(m.source) + " context " +
         std::to_string(m.context) + " tag " + std::to_string(m.tag) + " seq " + std::to_string(m.msg_seq) +
         " handle " + std::to_string(m.handle) + "}";
}

inline std::string to_text(const std::optional<Envelope>& m) { return m ? to_text(*m) : "none"; }

inline std::string to_text(const Event& e) {
  return e.kind == Event::Kind::matched
             ? "matched receive " + std::to_string(e.receive) + " " + to_text(e.message)
             : "unexpected " + to_text(e.message);
}

inline std::string to_text(const std::vector<Event>& events) {
  std::string text = "[";
  for (const Event& e : events) text += to_text(e) + "; ";
  return text + "]";
}

inline std::string to_text(const Counters& c) {
  return "{posted " + std::to_string(c.posted) + " unexpected " + std::to_string(c.unexpected) + " held " +
         std::to_string(c.held) + "}";
}

}  // namespace ftmpi::match::test

// match_bench: what one match costs as the posted or unexpected queue grows (1, 100, 10,000 entries the
// message or receive does not fit), and what holding messages ahead of sequence adds.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "ftmpi/bench/harness.hpp"
#include "ftmpi/match/matcher.hpp"

namespace {

using namespace ftmpi::match;
using ftmpi::bench::fixed;
using ftmpi::bench::measure;
using ftmpi::bench::Table;

constexpr std::uint32_t kContext = 3;
constexpr std::uint32_t kTargetPeer = 0;  // sends the messages that match; its rank is its source
constexpr std::uint32_t kFillerPeer = 1;  // sends the unexpected messages nobody asks for
constexpr std::int32_t kTargetTag = 0;    // fillers use tags 1, 2, ...
constexpr std::size_t kLengths[] = {1, 100, 10'000};
constexpr auto kMinRun = std::chrono::milliseconds(20);
constexpr int kRuns = 5;

[[noreturn]] void fail(const std::string& what) {
  std::fprintf(stderr, "match_bench: error: %s\n", what.c_str());
  std::exit(1);
}

Matcher new_matcher(std::uint64_t window) {
  auto matcher = Matcher::create({2, window});
  if (!matcher) fail(matcher.status().to_string());
  return std::move(*matcher);
}

void post_expecting_queue(Matcher& m, const Pattern& pattern, ReceiveHandle receive) {
  auto result = m.post_new_receive(pattern, receive);  // as the engine posts: each handle once
  if (!result || result->has_value()) fail("a receive meant to be queued was not");
}

void post_expecting_match(Matcher& m, const Pattern& pattern, ReceiveHandle receive) {
  auto result = m.post_new_receive(pattern, receive);  // as the engine posts: each handle once
  if (!result || !result->has_value()) fail("a receive meant to take a message did not");
}

void arrive(Matcher& m, const Envelope& e, std::vector<Event>& events) {
  if (auto status = m.message_arrived(e, events); !status) fail(status.to_string());
}

Envelope target_message(std::uint64_t seq) {
  return {kTargetPeer, static_cast<std::int32_t>(kTargetPeer), kContext, kTargetTag, seq, seq};
}

// Posted queue: length-1 receives the message does not fit, then `target`; each iteration a message
// arrives and matches `target`, which is posted again. Reports ns per (arrival + post).
ftmpi::bench::Timing posted_timing(std::size_t length, const Pattern& filler_kind, const Pattern& target) {
  Matcher m = new_matcher(64);
  for (std::size_t i = 1; i < length; ++i) {
    Pattern filler = filler_kind;
    filler.tag = static_cast<std::int32_t>(i);
    post_expecting_queue(m, filler, i);
  }
  post_expecting_queue(m, target, 0);
  std::vector<Event> events;
  std::uint64_t seq = 0;
  return measure(
      [&](std::uint64_t iterations) {
        for (std::uint64_t i = 0; i < iterations; ++i) {
          events.clear();
          arrive(m, target_message(++seq), events);
          if (events.size() != 1 || events[0].kind != Event::Kind::matched) fail("the arrival did not match");
          post_expecting_queue(m, target, 0);
        }
      },
      1.0, kMinRun, kRuns);
}

// Unexpected queue: length-1 messages from another peer that `receive` does not fit, then each
// iteration the target message arrives unexpected and `receive` takes it. Reports ns per (arrival + post).
ftmpi::bench::Timing unexpected_timing(std::size_t length, const Pattern& receive) {
  Matcher m = new_matcher(64);
  std::vector<Event> events;
  for (std::size_t i = 1; i < length; ++i) {
    arrive(
        m,
        {kFillerPeer, static_cast<std::int32_t>(kFillerPeer), kContext, static_cast<std::int32_t>(i), i, i},
        events);
  }
  std::uint64_t seq = 0;
  return measure(
      [&](std::uint64_t iterations) {
        for (std::uint64_t i = 0; i < iterations; ++i) {
          events.clear();
          arrive(m, target_message(++seq), events);
          post_expecting_match(m, receive, 0);
        }
      },
      1.0, kMinRun, kRuns);
}

// `count` messages of one peer arrive in order, or reversed (all but the first held until the first
// comes), each then taken from the unexpected queue. Reports ns per message.
ftmpi::bench::Timing sequence_timing(std::uint64_t count, bool reversed) {
  Matcher m = new_matcher(count);
  std::vector<Event> events;
  events.reserve(count);
  std::uint64_t base = 0;
  const Pattern any{kContext, kAnySource, kAnyTag};
  return measure(
      [&](std::uint64_t iterations) {
        for (std::uint64_t i = 0; i < iterations; ++i) {
          events.clear();
          for (std::uint64_t k = 1; k <= count; ++k) {
            arrive(m, target_message(base + (reversed ? count + 1 - k : k)), events);
          }
          if (events.size() != count) fail("not every message was released");
          for (std::uint64_t k = 0; k < count; ++k) {
            if (!m.take_unexpected(any)) fail("a released message was not queued");
          }
          base += count;
        }
      },
      static_cast<double>(count), kMinRun, kRuns);
}

}  // namespace

int main() {
  const auto source = static_cast<std::int32_t>(kTargetPeer);
  const Pattern specific{kContext, source, kTargetTag};
  const Pattern any_source{kContext, kAnySource, kTargetTag};
  const Pattern any_tag{kContext, source, kAnyTag};
  const Pattern any_both{kContext, kAnySource, kAnyTag};
  const Pattern specific_filler{kContext, source, 0};
  const Pattern any_source_filler{kContext, kAnySource, 0};

  Table table({"operation (per arrival + post, or per message)", "length", "median ns", "min ns"});
  auto add = [&](const std::string& what, std::uint64_t length, ftmpi::bench::Timing t) {
    table.add_row({what, std::to_string(length), fixed(t.ns_per_op, 1), fixed(t.min_ns_per_op, 1)});
  };
  for (std::size_t length : kLengths) {
    add("posted: specific receive, last behind specific ones", length,
        posted_timing(length, specific_filler, specific));
  }
  for (std::size_t length : kLengths) {
    add("posted: ANY_SOURCE+ANY_TAG receive, last behind specific ones", length,
        posted_timing(length, specific_filler, any_both));
  }
  for (std::size_t length : kLengths) {
    add("posted: specific receive, last behind ANY_SOURCE ones", length,
        posted_timing(length, any_source_filler, specific));
  }
  for (std::size_t length : kLengths) {
    add("unexpected: specific receive takes the last", length, unexpected_timing(length, specific));
  }
  for (std::size_t length : kLengths) {
    add("unexpected: ANY_SOURCE receive takes the last", length, unexpected_timing(length, any_source));
  }
  for (std::size_t length : kLengths) {
    add("unexpected: ANY_TAG receive takes the last", length, unexpected_timing(length, any_tag));
  }
  for (std::uint64_t count : {16, 1024}) {
    add("sequence: messages in order, each then taken", count, sequence_timing(count, false));
    add("sequence: reversed, held until the first arrives, each then taken", count,
        sequence_timing(count, true));
  }
  table.print();
  return 0;
}

#include <boost/test/results_collector.hpp>
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "ftmpi/match/matcher.hpp"
#include "ftmpi/test/seed.hpp"
#include "reference_matcher.hpp"

using namespace ftmpi::match;
using ftmpi::base::Errc;
using ftmpi::match::test::ReferenceMatcher;
using ftmpi::match::test::to_text;

namespace {

// BOOST_TEST formats its message even when the check passes; at hundreds of thousands of checks that
// dominates the run, so the description is made only on failure.
template <typename Describe>
void check(bool passed, const Describe& describe) {
  if (!passed) BOOST_ERROR(describe());
}

bool failed_so_far() {
  return boost::unit_test::results_collector.results(boost::unit_test::framework::current_test_case().p_id)
             .p_assertions_failed > 0;
}

// One randomized run: several peers send on several communicators; their first fragments reach us
// reordered within a distance (sometimes beyond the window, so the engine's "retransmission" has to
// bring them back), duplicated, or absurd, while receives, probes, takes and cancels come in between.
// Every decision of the matcher is compared with the reference model.
class RandomRun {
 public:
  RandomRun(std::mt19937_64& rng, std::uint32_t peers, std::uint32_t contexts, std::int32_t tags,
            std::uint64_t window, std::uint64_t reorder, std::uint64_t messages_per_peer)
      : rng_(rng),
        peers_(peers),
        contexts_(contexts),
        tags_(tags),
        window_(window),
        matcher_(Matcher::create({peers, window}).value()),
        reference_(peers, window),
        pending_(peers),
        released_seq_(peers, 0) {
    for (std::uint32_t peer = 0; peer < peers; ++peer) plan_deliveries(peer, messages_per_peer, reorder);
  }

  void run(int steps) {
    for (int step = 0; step < steps && !failed_so_far(); ++step) {
      BOOST_TEST_CONTEXT("step " << step) { random_operation(); }
    }
    BOOST_TEST_CONTEXT("drain") { drain(); }
    check_every_message_received_once();
    check_non_overtaking();
  }

 private:
  struct Reception {
    Pattern pattern;
    std::uint64_t post_index = 0;
    Envelope message;
  };
  struct PostedInfo {
    Pattern pattern;
    std::uint64_t post_index = 0;
  };

  std::int32_t source_of(std::uint32_t peer, std::uint32_t context) const {
    return static_cast<std::int32_t>((peer + context) % peers_);
  }

  std::uint64_t uniform(std::uint64_t below) {
    return std::uniform_int_distribution<std::uint64_t>(0, below - 1)(rng_);
  }
  bool chance(double p) { return std::bernoulli_distribution(p)(rng_); }

  // The peer's messages in msg_seq order, then each moved by a random distance up to `reorder`.
  void plan_deliveries(std::uint32_t peer, std::uint64_t count, std::uint64_t reorder) {
    std::vector<std::pair<std::uint64_t, Envelope>> keyed;
    for (std::uint64_t seq = 1; seq <= count; ++seq) {
      auto context = static_cast<std::uint32_t>(uniform(contexts_));
      Envelope e{.peer = peer,
                 .source = source_of(peer, context),
                 .context = context,
                 .tag = static_cast<std::int32_t>(uniform(static_cast<std::uint64_t>(tags_))),
                 .msg_seq = seq,
                 .handle = ++last_message_handle_};
      keyed.emplace_back(seq + uniform(reorder + 1), e);
      ++messages_sent_;
    }
    std::stable_sort(keyed.begin(), keyed.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    for (const auto& entry : keyed) pending_[peer].push_back(entry.second);
  }

  Pattern random_pattern() {
    auto context = static_cast<std::uint32_t>(uniform(contexts_));
    std::int32_t source = kAnySource;
    if (chance(0.03)) {
      source = static_cast<std::int32_t>(peers_) + 5;  // nobody's rank
    } else if (!chance(0.25)) {
      source = source_of(static_cast<std::uint32_t>(uniform(peers_)), context);
    }
    std::int32_t tag =
        chance(0.25) ? kAnyTag : static_cast<std::int32_t>(uniform(static_cast<std::uint64_t>(tags_)));
    return {context, source, tag};
  }

  void random_operation() {
    std::uint64_t dice = uniform(100);
    if (dice < 40) {
      deliver_next();
    } else if (dice < 70) {
      if (chance(0.15)) {
        // A window of receives with one pattern, as a program posts before it waits for them all.
        const Pattern pattern = random_pattern();
        for (std::uint64_t n = 2 + uniform(20); n > 0; --n) post(pattern, ++last_receive_handle_, chance(0.5));
      } else {
        post(random_pattern(), ++last_receive_handle_, chance(0.5));
      }
    } else if (dice < 73) {
      repost_old_handle();
    } else if (dice < 81) {
      probe();
    } else if (dice < 86) {
      take(random_pattern());
    } else if (dice < 92) {
      cancel();
    } else if (dice < 96) {
      deliver_duplicate();
    } else if (dice < 98) {
      deliver_absurd();
    } else if (dice < 99) {
      deliver_malformed();
    } else {
      post({static_cast<std::uint32_t>(uniform(contexts_)), -3, kAnyTag}, ++last_receive_handle_);
    }
    check_counters();
  }

  void deliver_next() {
    std::vector<std::uint32_t> busy;
    for (std::uint32_t peer = 0; peer < peers_; ++peer) {
      if (!pending_[peer].empty()) busy.push_back(peer);
    }
    if (busy.empty()) return;
    std::uint32_t peer = busy[uniform(busy.size())];
    Envelope e = pending_[peer].front();
    pending_[peer].pop_front();
    Errc code = deliver(e);
    if (code == Errc::out_of_range) {
      // Dropped unacknowledged: the sender retransmits it a little later.
      auto later = static_cast<std::ptrdiff_t>(std::min<std::uint64_t>(pending_[peer].size(), uniform(4)));
      pending_[peer].insert(pending_[peer].begin() + later, e);
    } else if (code == Errc::ok) {
      accepted_.push_back(e);
    }
  }

  void deliver_duplicate() {
    if (accepted_.empty()) return;
    Envelope copy = accepted_[uniform(accepted_.size())];
    copy.handle = ++last_message_handle_;  // a second copy of the frame lives in another buffer
    BOOST_TEST((deliver(copy) == Errc::duplicate));
  }

  void deliver_absurd() {
    auto peer = static_cast<std::uint32_t>(uniform(peers_));
    Envelope e{peer,
               source_of(peer, 0),
               0,
               0,
               reference_.next_seq(peer) + window_ + uniform(1000),
               ++last_message_handle_};
    if (chance(0.5)) e.msg_seq = UINT64_MAX - uniform(3);
    BOOST_TEST((deliver(e) == Errc::out_of_range));
  }

  void deliver_malformed() {
    auto peer = static_cast<std::uint32_t>(uniform(peers_));
    Envelope e{peer, source_of(peer, 0), 0, 0, reference_.next_seq(peer), ++last_message_handle_};
    switch (uniform(4)) {
      case 0: e.msg_seq = 0; break;
      case 1: e.tag = kAnyTag; break;
      case 2: e.source = kAnySource; break;
      default: e.peer = peers_; break;
    }
    BOOST_TEST((deliver(e) != Errc::ok));
  }

  Errc deliver(const Envelope& e) {
    std::vector<Event> events;
    std::vector<Event> expected;
    // Half the arrivals try the engine's fast lane first: when it takes a receive, that must be exactly
    // the one event message_arrived would have produced. Half of those try it in two halves, as the
    // engine does for a payload it verifies while copying: finding changes nothing (asked twice, the
    // same answer), and a receive found but left untaken (the payload failed its checksum) leaves the
    // matcher as if nothing had been asked, which the reference then checks.
    ftmpi::base::Status status;
    std::optional<ReceiveHandle> fast;
    if (e.msg_seq % 4 == 1) {
      fast = matcher_.match_next_in_order(e);
    } else if (e.msg_seq % 4 == 3) {
      const std::optional<Matcher::InOrderMatch> found = matcher_.find_next_in_order(e);
      const std::optional<Matcher::InOrderMatch> again = matcher_.find_next_in_order(e);
      BOOST_TEST(found.has_value() == again.has_value());
      if (found && again) BOOST_TEST((found->receive == again->receive && found->entry == again->entry));
      if (found && e.msg_seq % 8 == 3) {
        matcher_.take_next_in_order(e, *found);
        fast = found->receive;
      }
    }
    if (fast) {
      events.push_back({Event::Kind::matched, e, *fast});
    } else {
      status = matcher_.message_arrived(e, events);
    }
    auto expected_status = reference_.message_arrived(e, expected);
    check(status.code() == expected_status.code() && events == expected, [&] {
      return "arrival " + to_text(e) + ": " + status.to_string() + " " + to_text(events) + " vs reference " +
             expected_status.to_string() + " " + to_text(expected);
    });
    for (const Event& event : events) {
      // Release order is the peer's msg_seq order, with no gap.
      BOOST_TEST(event.message.msg_seq == released_seq_[event.message.peer] + 1);
      released_seq_[event.message.peer] = event.message.msg_seq;
      if (event.kind == Event::Kind::matched) {
        auto info = posted_.find(event.receive);
        BOOST_TEST_REQUIRE((info != posted_.end()));
        receptions_.push_back({info->second.pattern, info->second.post_index, event.message});
        posted_.erase(info);
      }
    }
    return status.code();
  }

  // `fresh`: the handle was never posted, so it may go by post_new_receive, as the engine posts.
  void post(const Pattern& pattern, ReceiveHandle receive, bool fresh = false) {
    auto result = fresh ? matcher_.post_new_receive(pattern, receive) : matcher_.post_receive(pattern, receive);
    auto expected = reference_.post_receive(pattern, receive);
    auto describe = [&] {
      return "post " + std::to_string(pattern.context) + "/" + std::to_string(pattern.source) + "/" +
             std::to_string(pattern.tag) + " as " + std::to_string(receive) + ": " +
             result.status().to_string() + " " + (result ? to_text(*result) : "") + " vs reference " +
             expected.status().to_string() + " " + (expected ? to_text(*expected) : "");
    };
    check(result.code() == expected.code(), describe);
    if (!result.is_ok() || !expected.is_ok()) return;
    check(*result == *expected, describe);
    std::uint64_t post_index = ++last_post_index_;
    if (result->has_value()) {
      receptions_.push_back({pattern, post_index, **result});
    } else {
      posted_[receive] = {pattern, post_index};
      ever_posted_.push_back(receive);
    }
  }

  // The engine may reuse a request's handle once the request is done; while still posted it is refused.
  void repost_old_handle() {
    if (ever_posted_.empty()) return;
    post(random_pattern(), ever_posted_[uniform(ever_posted_.size())]);
  }

  void probe() {
    Pattern pattern = random_pattern();
    auto found = matcher_.probe(pattern);
    auto expected = reference_.probe(pattern);
    check(found == expected,
          [&] { return "probe found " + to_text(found) + " vs reference " + to_text(expected); });
  }

  void take(const Pattern& pattern) {
    auto taken = matcher_.take_unexpected(pattern);
    auto expected = reference_.take_unexpected(pattern);
    check(taken == expected, [&] { return "took " + to_text(taken) + " vs reference " + to_text(expected); });
    if (taken) receptions_.push_back({pattern, ++last_post_index_, *taken});
  }

  void cancel() {
    if (ever_posted_.empty()) return;
    ReceiveHandle receive =
        chance(0.1) ? last_receive_handle_ + 1 : ever_posted_[uniform(ever_posted_.size())];
    bool cancelled = matcher_.cancel_receive(receive);
    BOOST_TEST(cancelled == reference_.cancel_receive(receive));
    if (cancelled) posted_.erase(receive);
  }

  void check_counters() {
    Counters actual = matcher_.counters();
    Counters expected = reference_.counters();
    check(actual.posted == expected.posted && actual.unexpected == expected.unexpected &&
              actual.held == expected.held,
          [&] { return "counters " + to_text(actual) + " vs reference " + to_text(expected); });
  }

  // Everything still in flight arrives, then every unexpected message is taken.
  void drain() {
    for (std::uint32_t peer = 0; peer < peers_; ++peer) {
      while (!pending_[peer].empty() && !failed_so_far()) deliver_next();
    }
    BOOST_TEST(matcher_.counters().held == 0u);
    for (std::uint32_t context = 0; context < contexts_; ++context) {
      while (matcher_.probe({context, kAnySource, kAnyTag})) take({context, kAnySource, kAnyTag});
    }
    check_counters();
  }

  void check_every_message_received_once() {
    std::set<MessageHandle> received;
    for (const Reception& r : receptions_) {
      check(received.insert(r.message.handle).second,
            [&] { return "message " + to_text(r.message) + " received twice"; });
    }
    BOOST_TEST(received.size() == messages_sent_);
  }

  // MPI's non-overtaking rule: receives with equal criteria, in post order, get one sender's messages
  // on one communicator in the order they were sent.
  void check_non_overtaking() {
    std::map<std::tuple<std::uint32_t, std::int32_t, std::int32_t, std::uint32_t>, std::vector<Reception>>
        groups;
    for (const Reception& r : receptions_) {
      groups[{r.pattern.context, r.pattern.source, r.pattern.tag, r.message.peer}].push_back(r);
    }
    for (auto& entry : groups) {
      auto& group = entry.second;
      std::sort(group.begin(), group.end(),
                [](const Reception& a, const Reception& b) { return a.post_index < b.post_index; });
      for (std::size_t i = 1; i < group.size(); ++i) {
        check(group[i - 1].message.msg_seq < group[i].message.msg_seq, [&] {
          return "receive " + std::to_string(group[i].post_index) + " got " + to_text(group[i].message) +
                 " after receive " + std::to_string(group[i - 1].post_index) + " got " +
                 to_text(group[i - 1].message);
        });
      }
    }
  }

  std::mt19937_64& rng_;
  std::uint32_t peers_;
  std::uint32_t contexts_;
  std::int32_t tags_;
  std::uint64_t window_;
  Matcher matcher_;
  ReferenceMatcher reference_;
  std::vector<std::deque<Envelope>> pending_;  // per peer, in the order the rails deliver them
  std::vector<Envelope> accepted_;
  std::vector<std::uint64_t> released_seq_;
  std::unordered_map<ReceiveHandle, PostedInfo> posted_;
  std::vector<ReceiveHandle> ever_posted_;
  std::vector<Reception> receptions_;
  std::uint64_t messages_sent_ = 0;
  MessageHandle last_message_handle_ = 0;
  ReceiveHandle last_receive_handle_ = 0;
  std::uint64_t last_post_index_ = 0;
};

}  // namespace

BOOST_AUTO_TEST_SUITE(matcher_random)

BOOST_AUTO_TEST_CASE(random_interleavings_decide_exactly_like_the_reference_model) {
  std::uint64_t seed = ftmpi::test::seed_for("matcher random interleavings");
  BOOST_TEST_CONTEXT("seed " << seed) {
    std::mt19937_64 rng(seed);
    constexpr std::uint64_t kWindows[] = {1, 2, 4, 8, 32};
    for (int run = 0; run < 60 && !failed_so_far(); ++run) {
      auto peers = static_cast<std::uint32_t>(1 + rng() % 4);
      auto contexts = static_cast<std::uint32_t>(1 + rng() % 3);
      auto tags = static_cast<std::int32_t>(1 + rng() % 4);
      std::uint64_t window = kWindows[rng() % std::size(kWindows)];
      std::uint64_t reorder = rng() % (window + 3);  // sometimes further than the window admits
      BOOST_TEST_CONTEXT("run " << run << ": " << peers << " peers, " << contexts << " contexts, " << tags
                                << " tags, window " << window << ", reorder " << reorder) {
        RandomRun(rng, peers, contexts, tags, window, reorder, 300).run(1500);
      }
    }
  }
}

BOOST_AUTO_TEST_SUITE_END()

#include <boost/test/unit_test.hpp>

#include <cstdint>
#include <optional>
#include <vector>

#include "ftmpi/base/params.hpp"
#include "ftmpi/match/matcher.hpp"
#include "reference_matcher.hpp"

using namespace ftmpi::match;
using ftmpi::base::Errc;
using ftmpi::match::test::to_text;

namespace {

constexpr std::uint32_t kPeers = 4;
constexpr std::uint64_t kWindow = 8;

Matcher make_matcher(std::uint64_t window = kWindow) {
  auto matcher = Matcher::create({kPeers, window});
  BOOST_REQUIRE(matcher.is_ok());
  return std::move(*matcher);
}

// A message whose source in the communicator differs from its world rank, as it usually does.
Envelope message(std::uint32_t peer, std::uint64_t seq, std::uint32_t context, std::int32_t tag) {
  return {peer, static_cast<std::int32_t>(peer) + 10, context, tag, seq, 1000 * peer + seq};
}

std::int32_t source_of(std::uint32_t peer) { return static_cast<std::int32_t>(peer) + 10; }

std::vector<Event> arrive(Matcher& m, const Envelope& e) {
  std::vector<Event> events;
  auto status = m.message_arrived(e, events);
  BOOST_REQUIRE_MESSAGE(status.is_ok(), status.to_string());
  return events;
}

Event matched(ReceiveHandle receive, const Envelope& e) { return {Event::Kind::matched, e, receive}; }
Event unexpected(const Envelope& e) { return {Event::Kind::unexpected, e, 0}; }

void post(Matcher& m, const Pattern& p, ReceiveHandle receive) {
  auto result = m.post_receive(p, receive);
  BOOST_REQUIRE(result.is_ok());
  BOOST_REQUIRE_MESSAGE(!result->has_value(), "receive took " << to_text(*result));
}

std::optional<Envelope> post_and_take(Matcher& m, const Pattern& p, ReceiveHandle receive) {
  auto result = m.post_receive(p, receive);
  BOOST_REQUIRE(result.is_ok());
  return *result;
}

void check_events(const std::vector<Event>& actual, const std::vector<Event>& expected) {
  BOOST_TEST(to_text(actual) == to_text(expected));
}

void check_counters(const Matcher& m, std::size_t posted, std::size_t unexpected_count, std::size_t held) {
  BOOST_TEST(to_text(m.counters()) == to_text(Counters{posted, unexpected_count, held}));
}

}  // namespace

BOOST_AUTO_TEST_SUITE(matcher)

BOOST_AUTO_TEST_CASE(in_order_messages_match_receives_in_post_order) {
  Matcher m = make_matcher();
  post(m, {7, source_of(1), 5}, 1);
  post(m, {7, source_of(1), 5}, 2);
  auto first = message(1, 1, 7, 5);
  auto second = message(1, 2, 7, 5);
  check_events(arrive(m, first), {matched(1, first)});
  check_events(arrive(m, second), {matched(2, second)});
  check_counters(m, 0, 0, 0);
}

BOOST_AUTO_TEST_CASE(matching_uses_communicator_source_not_world_peer) {
  Matcher m = make_matcher();
  post(m, {0, 1, 0}, 1);  // source 1 is not peer 1, whose source is 11
  auto from_peer_one = message(1, 1, 0, 0);
  check_events(arrive(m, from_peer_one), {unexpected(from_peer_one)});
  BOOST_TEST(to_text(post_and_take(m, {0, source_of(1), 0}, 2)) == to_text(from_peer_one));
  check_counters(m, 1, 0, 0);
  BOOST_TEST(m.cancel_receive(1));
  BOOST_TEST(!m.cancel_receive(2));  // took the unexpected message when posted, so never queued
}

BOOST_AUTO_TEST_CASE(specific_receive_ignores_other_source_tag_and_context) {
  Matcher m = make_matcher();
  post(m, {3, source_of(0), 4}, 1);
  auto other_tag = message(0, 1, 3, 5);
  auto other_context = message(0, 2, 4, 4);
  auto other_source = message(1, 1, 3, 4);
  auto fits = message(0, 3, 3, 4);
  check_events(arrive(m, other_tag), {unexpected(other_tag)});
  check_events(arrive(m, other_context), {unexpected(other_context)});
  check_events(arrive(m, other_source), {unexpected(other_source)});
  check_events(arrive(m, fits), {matched(1, fits)});
}

BOOST_AUTO_TEST_CASE(wildcard_receives_match_any_source_any_tag_or_both) {
  Matcher m = make_matcher();
  post(m, {0, kAnySource, 9}, 1);
  post(m, {0, source_of(2), kAnyTag}, 2);
  post(m, {0, kAnySource, kAnyTag}, 3);
  auto tag_nine = message(3, 1, 0, 9);
  auto from_two = message(2, 1, 0, 4);
  auto anything = message(1, 1, 0, 6);
  check_events(arrive(m, tag_nine), {matched(1, tag_nine)});
  check_events(arrive(m, from_two), {matched(2, from_two)});
  check_events(arrive(m, anything), {matched(3, anything)});
}

BOOST_AUTO_TEST_CASE(earliest_posted_receive_wins_between_specific_and_wildcard) {
  Matcher m = make_matcher();
  post(m, {0, kAnySource, kAnyTag}, 1);
  post(m, {0, source_of(0), 2}, 2);
  post(m, {0, kAnySource, 2}, 3);
  post(m, {0, source_of(0), kAnyTag}, 4);
  auto a = message(0, 1, 0, 2);
  auto b = message(0, 2, 0, 2);
  auto c = message(0, 3, 0, 2);
  auto d = message(0, 4, 0, 2);
  check_events(arrive(m, a), {matched(1, a)});  // the wildcard, posted first
  check_events(arrive(m, b), {matched(2, b)});  // then the specific one
  check_events(arrive(m, c), {matched(3, c)});
  check_events(arrive(m, d), {matched(4, d)});
}

BOOST_AUTO_TEST_CASE(unexpected_message_is_taken_by_a_later_receive) {
  Matcher m = make_matcher();
  auto e = message(2, 1, 1, 3);
  check_events(arrive(m, e), {unexpected(e)});
  check_counters(m, 0, 1, 0);
  BOOST_TEST(to_text(post_and_take(m, {1, source_of(2), 3}, 1)) == to_text(e));
  check_counters(m, 0, 0, 0);
}

BOOST_AUTO_TEST_CASE(receive_takes_the_earliest_released_unexpected_message_that_fits) {
  Matcher m = make_matcher();
  auto from_one = message(1, 1, 0, 4);
  auto from_two = message(2, 1, 0, 3);
  auto from_one_again = message(1, 2, 0, 3);
  arrive(m, from_one);
  arrive(m, from_two);
  arrive(m, from_one_again);
  BOOST_TEST(to_text(post_and_take(m, {0, kAnySource, 3}, 1)) == to_text(from_two));
  BOOST_TEST(to_text(post_and_take(m, {0, kAnySource, kAnyTag}, 2)) == to_text(from_one));
  BOOST_TEST(to_text(post_and_take(m, {0, source_of(1), kAnyTag}, 3)) == to_text(from_one_again));
  check_counters(m, 0, 0, 0);
}

BOOST_AUTO_TEST_CASE(probe_does_not_consume_and_take_removes_what_probe_saw) {
  Matcher m = make_matcher();
  auto first = message(0, 1, 0, 1);
  auto second = message(0, 2, 0, 1);
  arrive(m, first);
  arrive(m, second);
  BOOST_TEST(to_text(m.probe({0, kAnySource, 1})) == to_text(first));
  BOOST_TEST(to_text(m.probe({0, kAnySource, 1})) == to_text(first));
  BOOST_TEST(to_text(m.probe({0, source_of(0), 2})) == "none");
  check_counters(m, 0, 2, 0);
  BOOST_TEST(to_text(m.take_unexpected({0, source_of(0), kAnyTag})) == to_text(first));
  BOOST_TEST(to_text(m.probe({0, kAnySource, kAnyTag})) == to_text(second));
  BOOST_TEST(to_text(post_and_take(m, {0, kAnySource, 1}, 1)) == to_text(second));
  BOOST_TEST(to_text(m.take_unexpected({0, kAnySource, kAnyTag})) == "none");
}

BOOST_AUTO_TEST_CASE(cancelled_receive_never_matches_and_a_matched_one_cannot_be_cancelled) {
  Matcher m = make_matcher();
  post(m, {0, kAnySource, kAnyTag}, 1);
  post(m, {0, kAnySource, kAnyTag}, 2);
  BOOST_TEST(m.cancel_receive(1));
  BOOST_TEST(!m.cancel_receive(1));
  auto e = message(0, 1, 0, 0);
  check_events(arrive(m, e), {matched(2, e)});
  BOOST_TEST(!m.cancel_receive(2));
  BOOST_TEST(!m.cancel_receive(99));
  check_counters(m, 0, 0, 0);
}

BOOST_AUTO_TEST_CASE(cancelled_handle_can_be_posted_again) {
  Matcher m = make_matcher();
  post(m, {0, 0, 0}, 1);
  BOOST_TEST(m.cancel_receive(1));
  post(m, {0, kAnySource, kAnyTag}, 1);
  auto e = message(0, 1, 0, 0);
  check_events(arrive(m, e), {matched(1, e)});
}

BOOST_AUTO_TEST_CASE(ahead_of_sequence_messages_are_held_then_released_in_order) {
  Matcher m = make_matcher();
  post(m, {0, source_of(0), kAnyTag}, 1);
  auto one = message(0, 1, 0, 1);
  auto two = message(0, 2, 0, 2);
  auto three = message(0, 3, 0, 3);
  auto five = message(0, 5, 0, 5);
  check_events(arrive(m, three), {});
  check_events(arrive(m, five), {});
  check_events(arrive(m, two), {});
  check_counters(m, 1, 0, 3);
  check_events(arrive(m, one), {matched(1, one), unexpected(two), unexpected(three)});
  check_counters(m, 0, 2, 1);  // five still waits for four
  auto four = message(0, 4, 0, 4);
  check_events(arrive(m, four), {unexpected(four), unexpected(five)});
  check_counters(m, 0, 4, 0);
}

BOOST_AUTO_TEST_CASE(held_messages_are_invisible_to_probe_receives_and_take) {
  Matcher m = make_matcher();
  auto two = message(0, 2, 0, 1);
  arrive(m, two);
  BOOST_TEST(to_text(m.probe({0, kAnySource, kAnyTag})) == "none");
  BOOST_TEST(to_text(m.take_unexpected({0, kAnySource, kAnyTag})) == "none");
  post(m, {0, kAnySource, kAnyTag}, 1);
  check_counters(m, 1, 0, 1);
  auto one = message(0, 1, 0, 7);
  check_events(arrive(m, one), {matched(1, one), unexpected(two)});
}

BOOST_AUTO_TEST_CASE(sequence_counts_every_message_of_a_peer_across_contexts) {
  Matcher m = make_matcher();
  post(m, {2, kAnySource, kAnyTag}, 1);
  auto in_context_two = message(0, 2, 2, 0);
  check_events(arrive(m, in_context_two), {});  // waits for seq 1, sent on another communicator
  auto in_context_one = message(0, 1, 1, 0);
  check_events(arrive(m, in_context_one), {unexpected(in_context_one), matched(1, in_context_two)});
}

BOOST_AUTO_TEST_CASE(peers_are_sequenced_independently) {
  Matcher m = make_matcher();
  auto peer_zero = message(0, 2, 0, 0);
  auto peer_one = message(1, 1, 0, 0);
  check_events(arrive(m, peer_zero), {});
  check_events(arrive(m, peer_one), {unexpected(peer_one)});
  check_counters(m, 0, 1, 1);
}

BOOST_AUTO_TEST_CASE(duplicate_msg_seq_is_rejected_without_changing_state) {
  Matcher m = make_matcher();
  arrive(m, message(0, 1, 0, 0));
  arrive(m, message(0, 3, 0, 0));
  std::vector<Event> events;
  BOOST_TEST((m.message_arrived(message(0, 1, 0, 0), events).code() == Errc::duplicate));  // released
  auto held_again = message(0, 3, 0, 0);
  held_again.handle = 77;
  BOOST_TEST((m.message_arrived(held_again, events).code() == Errc::duplicate));  // held
  BOOST_TEST(events.empty());
  check_counters(m, 0, 1, 1);
  auto two = message(0, 2, 0, 0);
  auto three = message(0, 3, 0, 0);
  check_events(arrive(m, two), {unexpected(two), unexpected(three)});  // the first copy of 3, not the second
}

BOOST_AUTO_TEST_CASE(msg_seq_beyond_the_window_is_rejected_and_the_last_in_window_is_held) {
  Matcher m = make_matcher(4);
  std::vector<Event> events;
  BOOST_TEST((m.message_arrived(message(0, 5, 0, 0), events).code() == Errc::out_of_range));
  BOOST_TEST((m.message_arrived(message(0, UINT64_MAX, 0, 0), events).code() == Errc::out_of_range));
  check_counters(m, 0, 0, 0);
  check_events(arrive(m, message(0, 4, 0, 0)), {});
  check_counters(m, 0, 0, 1);
  auto one = message(0, 1, 0, 0);
  check_events(arrive(m, one), {unexpected(one)});
  // The window slides with the next expected message.
  check_events(arrive(m, message(0, 5, 0, 0)), {});
}

BOOST_AUTO_TEST_CASE(window_of_one_accepts_only_the_next_expected_message) {
  Matcher m = make_matcher(1);
  std::vector<Event> events;
  BOOST_TEST((m.message_arrived(message(0, 2, 0, 0), events).code() == Errc::out_of_range));
  auto one = message(0, 1, 0, 0);
  check_events(arrive(m, one), {unexpected(one)});
}

BOOST_AUTO_TEST_CASE(malformed_envelopes_are_rejected) {
  Matcher m = make_matcher();
  std::vector<Event> events;
  BOOST_TEST((m.message_arrived(message(0, 0, 0, 0), events).code() == Errc::malformed));
  BOOST_TEST((m.message_arrived(message(0, 1, 0, -1), events).code() == Errc::malformed));
  auto negative_source = message(0, 1, 0, 0);
  negative_source.source = kAnySource;
  BOOST_TEST((m.message_arrived(negative_source, events).code() == Errc::malformed));
  BOOST_TEST((m.message_arrived(message(kPeers, 1, 0, 0), events).code() == Errc::out_of_range));
  BOOST_TEST(events.empty());
  check_counters(m, 0, 0, 0);
  auto one = message(0, 1, 0, 0);
  check_events(arrive(m, one), {unexpected(one)});  // the rejected copies did not advance the sequence
}

BOOST_AUTO_TEST_CASE(invalid_patterns_and_reposted_handles_are_refused) {
  Matcher m = make_matcher();
  BOOST_TEST((m.post_receive({0, -3, 0}, 1).code() == Errc::invalid_argument));
  BOOST_TEST((m.post_receive({0, 0, -1}, 1).code() == Errc::invalid_argument));
  post(m, {0, 0, 0}, 1);
  BOOST_TEST((m.post_receive({0, 1, 1}, 1).code() == Errc::invalid_argument));
  check_counters(m, 1, 0, 0);
  arrive(m, message(0, 1, 0, 0));
  BOOST_TEST(to_text(m.probe({0, -3, kAnyTag})) == "none");
  BOOST_TEST(to_text(m.take_unexpected({0, kAnySource, -1})) == "none");
  check_counters(m, 1, 1, 0);
}

// Messages from `peer` (context 0, tag `tag`, msg_seq from `seq` + 1), one for each receive `first` to
// `last` but `skip`, each of which must take its message in turn: every other one by the fast lane,
// the others by message_arrived. Returns the last msg_seq sent.
static std::uint64_t receive_in_order(Matcher& m, std::uint32_t peer, std::int32_t tag, std::uint64_t seq,
                               ReceiveHandle first, ReceiveHandle last, ReceiveHandle skip) {
  for (ReceiveHandle r = first; r <= last; ++r) {
    if (r == skip) continue;
    const Envelope e = message(peer, ++seq, 0, tag);
    if (seq % 2 == 0) {
      BOOST_TEST((m.match_next_in_order(e) == std::optional<ReceiveHandle>(r)));
    } else {
      BOOST_TEST((arrive(m, e) == std::vector<Event>{matched(r, e)}));
    }
  }
  return seq;
}

// A window of receives with one pattern (the run, kept out of the queues): matched in post order, by
// the fast lane and by message_arrived alike, past the ring's first size; one cancelled from its middle
// never matches and the others keep their order; a handle still in it is refused again.
BOOST_AUTO_TEST_CASE(a_window_of_receives_with_one_pattern_matches_in_post_order) {
  Matcher m = make_matcher(64);
  const Pattern pattern{0, source_of(1), 7};
  constexpr ReceiveHandle kReceives = 40;  // more than the ring's first 16 slots
  for (ReceiveHandle r = 1; r <= kReceives; ++r) {
    auto posted = r % 2 == 0 ? m.post_new_receive(pattern, r) : m.post_receive(pattern, r);
    BOOST_REQUIRE(posted.is_ok());
    BOOST_TEST(!posted->has_value());
  }
  BOOST_TEST(m.counters().posted == kReceives);
  BOOST_TEST((m.post_receive(pattern, 17).code() == Errc::invalid_argument));  // still posted
  BOOST_TEST((m.post_receive({0, source_of(2), 7}, 40).code() == Errc::invalid_argument));
  BOOST_TEST(m.cancel_receive(5));
  BOOST_TEST(!m.cancel_receive(5));
  BOOST_TEST(m.counters().posted == kReceives - 1);
  const std::uint64_t seq = receive_in_order(m, 1, 7, 0, 1, kReceives, 5);
  BOOST_TEST(m.counters().posted == 0u);
  // The next message waits: nothing is posted.
  BOOST_TEST((arrive(m, message(1, seq + 1, 0, 7)).front().kind == Event::Kind::unexpected));
}

// The run's ring wraps and grows with its front away from its first slot: 12 posted and 10 matched (the
// front at slot 10 of 16), then 20 more (wrapping, then growing); matched in post order through the ring,
// then its front cancelled, then one behind it (the run moves into the queues), the rest in post order.
BOOST_AUTO_TEST_CASE(the_runs_ring_wraps_and_grows_keeping_post_order) {
  Matcher m = make_matcher(64);
  const Pattern pattern{0, source_of(2), 5};
  ReceiveHandle next_handle = 1;
  for (int i = 0; i < 12; ++i) BOOST_REQUIRE(m.post_new_receive(pattern, next_handle++).is_ok());
  std::uint64_t seq = 0;
  ReceiveHandle expected = 1;
  for (int i = 0; i < 10; ++i) {
    BOOST_TEST((m.match_next_in_order(message(2, ++seq, 0, 5)) == std::optional<ReceiveHandle>(expected++)));
  }
  for (int i = 0; i < 20; ++i) BOOST_REQUIRE(m.post_new_receive(pattern, next_handle++).is_ok());  // 13 to 32
  BOOST_TEST(m.counters().posted == 22u);
  for (int i = 0; i < 5; ++i) {  // 11 to 15, from the ring grown
    const Envelope e = message(2, ++seq, 0, 5);
    BOOST_TEST((arrive(m, e) == std::vector<Event>{matched(expected++, e)}));
  }
  BOOST_TEST(m.cancel_receive(16));  // the front
  BOOST_TEST(m.cancel_receive(20));  // behind it
  BOOST_TEST(!m.cancel_receive(20));
  BOOST_TEST((m.post_receive(pattern, 25).code() == Errc::invalid_argument));  // still posted
  BOOST_TEST(m.counters().posted == 15u);
  receive_in_order(m, 2, 5, seq, 17, 32, 20);
  BOOST_TEST(m.counters().posted == 0u);
}

// A receive of another pattern moves the run into the queues, keeping post order across both: the
// earliest-posted receive that fits still wins.
BOOST_AUTO_TEST_CASE(a_receive_of_another_pattern_keeps_the_runs_post_order) {
  Matcher m = make_matcher();
  BOOST_REQUIRE(m.post_new_receive({0, source_of(1), 3}, 1).is_ok());
  BOOST_REQUIRE(m.post_new_receive({0, source_of(1), 3}, 2).is_ok());
  BOOST_REQUIRE(m.post_new_receive({0, kAnySource, kAnyTag}, 3).is_ok());  // spills 1 and 2
  BOOST_REQUIRE(m.post_new_receive({0, source_of(1), 3}, 4).is_ok());
  const Envelope a = message(1, 1, 0, 3);
  const Envelope b = message(1, 2, 0, 3);
  const Envelope c = message(1, 3, 0, 9);
  const Envelope d = message(1, 4, 0, 3);
  BOOST_TEST((arrive(m, a) == std::vector<Event>{matched(1, a)}));
  BOOST_TEST((m.match_next_in_order(b) == std::optional<ReceiveHandle>(2)));
  BOOST_TEST((arrive(m, c) == std::vector<Event>{matched(3, c)}));  // only the wildcard fits tag 9
  BOOST_TEST((arrive(m, d) == std::vector<Event>{matched(4, d)}));
  BOOST_TEST(!m.cancel_receive(1));
  BOOST_TEST(m.counters().posted == 0u);
}

BOOST_AUTO_TEST_CASE(separate_contexts_do_not_match_each_other) {
  Matcher m = make_matcher();
  post(m, {1, kAnySource, kAnyTag}, 1);
  auto in_two = message(0, 1, 2, 0);
  check_events(arrive(m, in_two), {unexpected(in_two)});
  BOOST_TEST(to_text(m.probe({1, kAnySource, kAnyTag})) == "none");
  BOOST_TEST(to_text(post_and_take(m, {2, kAnySource, kAnyTag}, 2)) == to_text(in_two));
  auto in_one = message(0, 2, 1, 0);
  check_events(arrive(m, in_one), {matched(1, in_one)});
}

BOOST_AUTO_TEST_CASE(long_queues_over_many_buckets_keep_matching_order) {
  // Thousands of buckets opened and emptied again: the sweep of empty buckets must not lose live ones.
  Matcher m = make_matcher();
  constexpr int kTags = 3000;
  for (int tag = 0; tag < kTags; ++tag) post(m, {0, source_of(0), tag}, static_cast<ReceiveHandle>(tag) + 1);
  post(m, {0, kAnySource, kAnyTag}, 1'000'000);
  std::uint64_t seq = 0;
  for (int tag = 0; tag < kTags; tag += 2) {
    auto e = message(0, ++seq, 0, tag);
    check_events(arrive(m, e), {matched(static_cast<ReceiveHandle>(tag) + 1, e)});
  }
  check_counters(m, kTags / 2 + 1, 0, 0);
  for (int tag = 1; tag < kTags; tag += 2) {
    auto e = message(0, ++seq, 0, tag);
    check_events(arrive(m, e), {matched(static_cast<ReceiveHandle>(tag) + 1, e)});
  }
  auto last = message(0, ++seq, 0, 0);
  check_events(arrive(m, last), {matched(1'000'000, last)});
  check_counters(m, 0, 0, 0);
}

BOOST_AUTO_TEST_CASE(long_unexpected_queue_over_many_buckets_keeps_release_order) {
  Matcher m = make_matcher();
  constexpr int kTags = 3000;
  std::vector<Envelope> sent;
  for (int tag = 0; tag < kTags; ++tag) {
    sent.push_back(message(0, static_cast<std::uint64_t>(tag) + 1, 0, tag));
    arrive(m, sent.back());
  }
  for (int tag = 0; tag < kTags; tag += 2) {
    BOOST_TEST(to_text(m.take_unexpected({0, source_of(0), tag})) ==
               to_text(sent[static_cast<std::size_t>(tag)]));
  }
  check_counters(m, 0, kTags / 2, 0);
  // What remains is the odd tags, still in release order for every kind of wildcard.
  for (int tag = 1; tag < kTags; tag += 4) {
    BOOST_TEST(to_text(post_and_take(m, {0, kAnySource, kAnyTag}, 1)) ==
               to_text(sent[static_cast<std::size_t>(tag)]));
    BOOST_TEST(to_text(post_and_take(m, {0, source_of(0), kAnyTag}, 1)) ==
               to_text(sent[static_cast<std::size_t>(tag) + 2]));
  }
  check_counters(m, 0, 0, 0);
}

BOOST_AUTO_TEST_CASE(buckets_refilled_before_a_sweep_of_empty_ones_stay_live) {
  // Enough buckets empty out to trigger the sweep, while some emptied earlier have been refilled.
  Matcher m = make_matcher();
  constexpr int kTags = 1000;
  constexpr int kRefilled = 100;
  std::uint64_t seq = 0;
  auto receive_for = [](int tag, int round) { return static_cast<ReceiveHandle>(round * kTags + tag); };
  for (int tag = 0; tag < kTags; ++tag) post(m, {0, source_of(0), tag}, receive_for(tag, 0));
  for (int tag = 0; tag < kTags; ++tag) {
    if (tag == kRefilled) {
      for (int again = 0; again < kRefilled; ++again)
        post(m, {0, source_of(0), again}, receive_for(again, 1));
    }
    auto e = message(0, ++seq, 0, tag);
    check_events(arrive(m, e), {matched(receive_for(tag, 0), e)});
  }
  for (int tag = 0; tag < kRefilled; ++tag) {
    auto e = message(0, ++seq, 0, tag);
    check_events(arrive(m, e), {matched(receive_for(tag, 1), e)});
  }
  check_counters(m, 0, 0, 0);

  std::vector<Envelope> sent;
  for (int tag = 0; tag < kTags; ++tag) {
    sent.push_back(message(1, sent.size() + 1, 0, tag));
    arrive(m, sent.back());
  }
  for (int tag = 0; tag < kTags; ++tag) {
    if (tag == kRefilled) {
      for (int again = 0; again < kRefilled; ++again) {
        sent.push_back(message(1, sent.size() + 1, 0, again));
        arrive(m, sent.back());
      }
    }
    BOOST_TEST(to_text(m.take_unexpected({0, source_of(1), tag})) ==
               to_text(sent[static_cast<std::size_t>(tag)]));
  }
  for (int tag = 0; tag < kRefilled; ++tag) {
    BOOST_TEST(to_text(m.take_unexpected({0, kAnySource, tag})) ==
               to_text(sent[static_cast<std::size_t>(kTags + tag)]));
  }
  check_counters(m, 0, 0, 0);
}

BOOST_AUTO_TEST_CASE(create_refuses_no_peers_and_an_empty_window) {
  BOOST_TEST((Matcher::create({0, 8}).code() == Errc::invalid_argument));
  BOOST_TEST((Matcher::create({4, 0}).code() == Errc::invalid_argument));
}

BOOST_AUTO_TEST_CASE(config_takes_the_window_from_parameters) {
  ftmpi::base::ParamSet params;
  BOOST_REQUIRE(params.add_table(match_params()).is_ok());
  BOOST_TEST(matcher_config(params, 3).ahead_window == 4096u);
  BOOST_TEST(matcher_config(params, 3).peer_count == 3u);
  BOOST_REQUIRE(params.set("match.ahead_window", "2").is_ok());
  auto m = Matcher::create(matcher_config(params, 1));
  BOOST_REQUIRE(m.is_ok());
  std::vector<Event> events;
  BOOST_TEST(m->message_arrived(message(0, 2, 0, 0), events).is_ok());
  BOOST_TEST((m->message_arrived(message(0, 3, 0, 0), events).code() == Errc::out_of_range));
  BOOST_REQUIRE(params.set("match.ahead_window", "0").is_ok());
  BOOST_TEST((Matcher::create(matcher_config(params, 1)).code() == Errc::invalid_argument));
}

BOOST_AUTO_TEST_SUITE_END()

// A sender's cancel: only an unexpected message is withdrawn, and the rest of the queue keeps its order.
BOOST_AUTO_TEST_CASE(withdraw_takes_only_an_unexpected_message) {
  Matcher m = make_matcher();
  const Envelope a = message(1, 1, 7, 3);
  const Envelope b = message(1, 2, 7, 3);
  const Envelope c = message(2, 1, 7, 3);
  arrive(m, a);
  arrive(m, b);
  arrive(m, c);
  Envelope taken{};
  auto w = m.withdraw(1, 2, 7, 3, nullptr, &taken);
  BOOST_REQUIRE(w.is_ok());
  BOOST_TEST((*w == Matcher::Withdrawal::withdrawn));
  BOOST_TEST(to_text(taken) == to_text(b));
  check_counters(m, 0, 2, 0);
  // The caller may refuse: then nothing is taken.
  w = m.withdraw(1, 1, 7, 3, [](const Envelope&) { return false; }, &taken);
  BOOST_REQUIRE(w.is_ok());
  BOOST_TEST((*w == Matcher::Withdrawal::kept));
  check_counters(m, 0, 2, 0);
  // Gone for probes and receives; the others come out in release order.
  const std::optional<Envelope> probed = m.probe({7, source_of(1), 3});
  BOOST_REQUIRE(probed.has_value());
  BOOST_TEST(to_text(*probed) == to_text(a));
  BOOST_TEST(to_text(*post_and_take(m, {7, kAnySource, 3}, 1)) == to_text(a));
  BOOST_TEST(to_text(*post_and_take(m, {7, kAnySource, 3}, 2)) == to_text(c));
  // Already taken by a receive: too late.
  w = m.withdraw(1, 1, 7, 3, nullptr, &taken);
  BOOST_REQUIRE(w.is_ok());
  BOOST_TEST((*w == Matcher::Withdrawal::matched));
  // Withdrawn once: a second cancel finds nothing to take.
  w = m.withdraw(1, 2, 7, 3, nullptr, &taken);
  BOOST_REQUIRE(w.is_ok());
  BOOST_TEST((*w == Matcher::Withdrawal::matched));
}

BOOST_AUTO_TEST_CASE(withdraw_waits_for_a_message_not_released) {
  Matcher m = make_matcher();
  // Not arrived yet, and held ahead of sequence: not released, so the caller asks again.
  auto w = m.withdraw(0, 1, 7, 3, nullptr, nullptr);
  BOOST_REQUIRE(w.is_ok());
  BOOST_TEST((*w == Matcher::Withdrawal::not_released));
  const Envelope ahead = message(0, 2, 7, 3);
  arrive(m, ahead);
  w = m.withdraw(0, 2, 7, 3, nullptr, nullptr);
  BOOST_REQUIRE(w.is_ok());
  BOOST_TEST((*w == Matcher::Withdrawal::not_released));
  arrive(m, message(0, 1, 7, 4));  // releases both
  Envelope taken{};
  w = m.withdraw(0, 2, 7, 3, nullptr, &taken);
  BOOST_REQUIRE(w.is_ok());
  BOOST_TEST((*w == Matcher::Withdrawal::withdrawn));
  BOOST_TEST(to_text(taken) == to_text(ahead));
  // The same sequence on another context or tag is not that message.
  w = m.withdraw(0, 1, 7, 3, nullptr, nullptr);
  BOOST_REQUIRE(w.is_ok());
  BOOST_TEST((*w == Matcher::Withdrawal::matched));
  check_counters(m, 0, 1, 0);
}

BOOST_AUTO_TEST_CASE(withdraw_refuses_bad_input_without_change) {
  Matcher m = make_matcher();
  arrive(m, message(1, 1, 7, 3));
  BOOST_TEST((m.withdraw(kPeers, 1, 7, 3, nullptr, nullptr).status().code() == Errc::out_of_range));
  BOOST_TEST((m.withdraw(1, 0, 7, 3, nullptr, nullptr).status().code() == Errc::malformed));
  BOOST_TEST((m.withdraw(1, 1, 7, -1, nullptr, nullptr).status().code() == Errc::malformed));
  BOOST_TEST((m.withdraw(1, 2 + kWindow, 7, 3, nullptr, nullptr).status().code() == Errc::out_of_range));
  check_counters(m, 0, 1, 0);
}

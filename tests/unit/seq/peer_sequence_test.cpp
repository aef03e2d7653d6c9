#include <boost/test/unit_test.hpp>

#include <cstdint>
#include <vector>

#include "ftmpi/seq/peer_sequence.hpp"

using namespace ftmpi::seq;
using ftmpi::base::Errc;

BOOST_AUTO_TEST_SUITE(send_sequence)

BOOST_AUTO_TEST_CASE(byte_numbering_starts_at_one_and_is_contiguous) {
  SendSequence send;
  BOOST_TEST(send.next_byte() == 1u);
  BOOST_TEST(*send.assign(100) == (Range{1, 100}));
  BOOST_TEST(*send.assign(1) == (Range{101, 101}));
  BOOST_TEST(*send.assign(4096) == (Range{102, 4197}));
  BOOST_TEST(send.next_byte() == 4198u);
}

BOOST_AUTO_TEST_CASE(zero_byte_message_takes_one_number) {
  SendSequence send;
  BOOST_TEST(*send.assign(0) == (Range{1, 1}));
  BOOST_TEST(*send.assign(0) == (Range{2, 2}));
  BOOST_TEST(*send.assign(10) == (Range{3, 12}));
}

BOOST_AUTO_TEST_CASE(message_numbering_starts_at_one_independent_of_bytes) {
  SendSequence send;
  BOOST_TEST(send.assign_message() == 1u);
  BOOST_TEST(*send.assign(500) == (Range{1, 500}));
  BOOST_TEST(send.assign_message() == 2u);
  BOOST_TEST(send.next_message() == 3u);
  BOOST_TEST(send.next_byte() == 501u);
}

BOOST_AUTO_TEST_CASE(running_out_of_numbers_is_an_error_that_assigns_nothing) {
  SendSequence send;
  BOOST_TEST((send.assign(UINT64_MAX).code() == Errc::resource_exhausted));
  BOOST_TEST(send.next_byte() == 1u);
  BOOST_TEST(*send.assign(kMaxSequence - 1) == (Range{1, kMaxSequence - 1}));
  BOOST_TEST(*send.assign(0) == (Range{kMaxSequence, kMaxSequence}));
  BOOST_TEST((send.assign(0).code() == Errc::resource_exhausted));
  BOOST_TEST((send.assign(1).code() == Errc::resource_exhausted));
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(receive_sequence)

BOOST_AUTO_TEST_CASE(arrivals_are_fresh_duplicate_or_partial_duplicate) {
  ReceiveSequence receive;
  BOOST_TEST((receive.on_received({1, 100})->arrival == Arrival::fresh));
  BOOST_TEST((receive.on_received({1, 100})->arrival == Arrival::duplicate));
  BOOST_TEST((receive.on_received({50, 60})->arrival == Arrival::duplicate));
  BOOST_TEST((receive.on_received({90, 150})->arrival == Arrival::partial_duplicate));
  BOOST_TEST((receive.on_received({200, 300})->arrival == Arrival::fresh));
  BOOST_TEST((receive.on_received({140, 210})->arrival == Arrival::partial_duplicate));
  BOOST_TEST(receive.on_received({140, 400})->added == 100u);  // 301..400: what a message's count grows by
  BOOST_TEST(receive.on_received({1, 10})->added == 0u);
}

BOOST_AUTO_TEST_CASE(lirs_and_lids_are_the_in_order_prefixes) {
  ReceiveSequence receive;
  BOOST_TEST(receive.lirs() == 0u);
  BOOST_TEST(receive.lids() == 0u);
  BOOST_TEST(receive.on_received({11, 20}).is_ok());
  BOOST_TEST(receive.lirs() == 0u);
  BOOST_TEST(receive.on_received({1, 10}).is_ok());
  BOOST_TEST(receive.lirs() == 20u);
  BOOST_TEST(*receive.on_delivered({11, 20}) == 10u);
  BOOST_TEST(receive.lids() == 0u);
  BOOST_TEST(*receive.on_delivered({1, 10}) == 10u);
  BOOST_TEST(receive.lids() == 20u);
  BOOST_TEST(receive.on_received({21, 30}).is_ok());
  BOOST_TEST(receive.lirs() == 30u);
  BOOST_TEST(receive.lids() == 20u);
}

BOOST_AUTO_TEST_CASE(delivering_what_was_not_received_is_an_error_that_records_nothing) {
  ReceiveSequence receive;
  BOOST_TEST(receive.on_received({1, 10}).is_ok());
  BOOST_TEST(receive.on_received({21, 30}).is_ok());
  BOOST_TEST((receive.on_delivered({11, 20}).code() == Errc::invalid_argument));  // none of it
  BOOST_TEST((receive.on_delivered({5, 15}).code() == Errc::invalid_argument));   // part of it
  BOOST_TEST((receive.on_delivered({1, 30}).code() == Errc::invalid_argument));   // spans the hole
  BOOST_TEST(receive.delivered().empty());
  BOOST_TEST(receive.lids() == 0u);
}

BOOST_AUTO_TEST_CASE(delivering_overlapping_fragments_counts_each_number_once) {
  ReceiveSequence receive;
  BOOST_TEST(receive.on_received({1, 100}).is_ok());
  BOOST_TEST(*receive.on_delivered({1, 40}) == 40u);
  BOOST_TEST(*receive.on_delivered({31, 70}) == 30u);  // re-cut retransmission overlapping the first
  BOOST_TEST(*receive.on_delivered({1, 70}) == 0u);
  BOOST_TEST(*receive.on_delivered({60, 100}) == 30u);
  BOOST_TEST(receive.lids() == 100u);
}

BOOST_AUTO_TEST_CASE(invalid_ranges_are_errors) {
  ReceiveSequence receive;
  BOOST_TEST((receive.on_received({0, 5}).code() == Errc::invalid_argument));
  BOOST_TEST((receive.on_received({9, 3}).code() == Errc::invalid_argument));
  BOOST_TEST((receive.on_delivered({0, 0}).code() == Errc::invalid_argument));
  BOOST_TEST(receive.received().empty());
}

// Sender and receiver together: messages of 0..n bytes cut into fragments, received out of order and
// twice, delivered as they arrive; every byte and every empty message is acknowledged exactly once.
BOOST_AUTO_TEST_CASE(zero_byte_messages_are_received_and_delivered_as_one_number) {
  SendSequence send;
  std::vector<Range> fragments;
  for (const std::uint64_t bytes : {0u, 5u, 0u, 0u, 3u, 0u}) {
    const auto message = send.assign(bytes);
    BOOST_TEST_REQUIRE(message.is_ok());
    for (Sequence first = message->first; first <= message->last; first += 2) {
      fragments.push_back({first, std::min(message->last, first + 1)});
    }
  }
  BOOST_TEST(send.next_byte() == 13u);  // 4 empty messages + 8 bytes

  ReceiveSequence receive;
  std::uint64_t delivered = 0;
  for (auto it = fragments.rbegin(); it != fragments.rend(); ++it) {
    BOOST_TEST((receive.on_received(*it)->arrival == Arrival::fresh));
    BOOST_TEST((receive.on_received(*it)->arrival == Arrival::duplicate));
    delivered += *receive.on_delivered(*it);
    delivered += *receive.on_delivered(*it);
  }
  BOOST_TEST(delivered == 12u);
  BOOST_TEST(receive.lirs() == 12u);
  BOOST_TEST(receive.lids() == 12u);
}

BOOST_AUTO_TEST_SUITE_END()

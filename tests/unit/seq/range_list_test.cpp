#include <boost/test/unit_test.hpp>

#include <utility>
#include <vector>

#include "ftmpi/seq/range_list.hpp"

using namespace ftmpi::seq;
using ftmpi::base::Errc;

namespace {

using Ranges = std::vector<Range>;

void record(RangeList& list, Sequence first, Sequence last) {
  BOOST_TEST_REQUIRE(list.record(first, last).is_ok());
}

Coverage coverage(const RangeList& list, Sequence first, Sequence last) {
  auto result = list.coverage(first, last);
  BOOST_TEST_REQUIRE(result.is_ok());
  return *result;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(range_list)

BOOST_AUTO_TEST_CASE(new_list_is_empty_and_nothing_is_in_order) {
  RangeList list;
  BOOST_TEST(list.empty());
  BOOST_TEST(list.range_count() == 0u);
  BOOST_TEST(list.largest_in_order() == 0u);
  BOOST_TEST(list.first_missing() == 1u);
  BOOST_TEST(!list.contains(0));
  BOOST_TEST(!list.contains(1));
  BOOST_TEST(coverage(list, 1, 10) == Coverage::none);
  BOOST_TEST(list.ranges().empty());
}

BOOST_AUTO_TEST_CASE(record_merges_adjacent_ranges) {
  RangeList list;
  BOOST_TEST(*list.record(20, 25) == 6u);
  BOOST_TEST(*list.record(26, 30) == 5u);  // after
  BOOST_TEST(*list.record(15, 19) == 5u);  // before
  BOOST_TEST(list.ranges() == (Ranges{{15, 30}}));
  BOOST_TEST(*list.record(1, 14) == 14u);  // reaches the prefix and swallows the range above
  BOOST_TEST(list.ranges() == (Ranges{{1, 30}}));
  BOOST_TEST(list.largest_in_order() == 30u);
}

BOOST_AUTO_TEST_CASE(record_keeps_ranges_separated_by_a_hole_apart) {
  RangeList list;
  record(list, 10, 12);
  record(list, 14, 16);
  record(list, 1, 8);
  BOOST_TEST(list.ranges() == (Ranges{{1, 8}, {10, 12}, {14, 16}}));
  BOOST_TEST(list.range_count() == 3u);
}

BOOST_AUTO_TEST_CASE(record_merges_overlapping_ranges_counting_only_new_numbers) {
  RangeList list;
  BOOST_TEST(*list.record(10, 20) == 11u);
  BOOST_TEST(*list.record(15, 25) == 5u);
  BOOST_TEST(*list.record(5, 12) == 5u);
  BOOST_TEST(list.ranges() == (Ranges{{5, 25}}));
}

BOOST_AUTO_TEST_CASE(record_of_a_contained_range_is_a_full_duplicate) {
  RangeList list;
  record(list, 10, 20);
  record(list, 1, 5);
  BOOST_TEST(*list.record(12, 18) == 0u);
  BOOST_TEST(*list.record(10, 20) == 0u);
  BOOST_TEST(*list.record(2, 4) == 0u);  // inside the in-order prefix
  BOOST_TEST(list.ranges() == (Ranges{{1, 5}, {10, 20}}));
}

BOOST_AUTO_TEST_CASE(record_bridging_several_ranges_merges_them_all) {
  RangeList list;
  record(list, 10, 12);
  record(list, 14, 16);
  record(list, 20, 22);
  record(list, 40, 41);
  BOOST_TEST(*list.record(5, 30) == 26u - 9u);
  BOOST_TEST(list.ranges() == (Ranges{{5, 30}, {40, 41}}));
  BOOST_TEST(*list.record(1, 50) == 50u - 26u - 2u);
  BOOST_TEST(list.ranges() == (Ranges{{1, 50}}));
}

BOOST_AUTO_TEST_CASE(record_extending_a_range_downwards_keeps_order) {
  RangeList list;
  record(list, 50, 60);
  record(list, 30, 35);
  for (Sequence first = 47; first >= 38; first -= 3) record(list, first, first + 2);
  BOOST_TEST(list.ranges() == (Ranges{{30, 35}, {38, 60}}));
  record(list, 36, 37);
  BOOST_TEST(list.ranges() == (Ranges{{30, 60}}));
}

BOOST_AUTO_TEST_CASE(coverage_reports_none_partial_and_full) {
  RangeList list;
  record(list, 1, 10);
  record(list, 20, 30);
  record(list, 40, 40);
  BOOST_TEST(coverage(list, 3, 7) == Coverage::full);  // inside the prefix
  BOOST_TEST(coverage(list, 1, 10) == Coverage::full);
  BOOST_TEST(coverage(list, 5, 12) == Coverage::partial);  // runs off the prefix
  BOOST_TEST(coverage(list, 11, 19) == Coverage::none);    // exactly the hole
  BOOST_TEST(coverage(list, 11, 20) == Coverage::partial);
  BOOST_TEST(coverage(list, 20, 30) == Coverage::full);
  BOOST_TEST(coverage(list, 25, 35) == Coverage::partial);
  BOOST_TEST(coverage(list, 15, 45) == Coverage::partial);  // spans a whole range
  BOOST_TEST(coverage(list, 20, 40) == Coverage::partial);  // two ranges and the hole between
  BOOST_TEST(coverage(list, 40, 40) == Coverage::full);
  BOOST_TEST(coverage(list, 31, 39) == Coverage::none);
  BOOST_TEST(coverage(list, 41, 1000) == Coverage::none);
}

BOOST_AUTO_TEST_CASE(largest_in_order_stops_at_the_first_hole) {
  RangeList list;
  record(list, 2, 10);
  BOOST_TEST(list.largest_in_order() == 0u);
  BOOST_TEST(list.first_missing() == 1u);
  record(list, 12, 20);
  record(list, 1, 1);
  BOOST_TEST(list.largest_in_order() == 10u);
  BOOST_TEST(list.first_missing() == 11u);
  record(list, 11, 11);
  BOOST_TEST(list.largest_in_order() == 20u);
  BOOST_TEST(list.range_count() == 1u);
}

BOOST_AUTO_TEST_CASE(contains_answers_for_each_number) {
  RangeList list;
  record(list, 1, 3);
  record(list, 7, 9);
  const std::vector<bool> expected{false, true, true, true, false, false, false, true, true, true, false};
  for (Sequence n = 0; n < expected.size(); ++n) {
    BOOST_TEST_CONTEXT("n " << n) { BOOST_TEST(list.contains(n) == expected[n]); }
  }
}

BOOST_AUTO_TEST_CASE(forget_below_treats_holes_below_as_recorded) {
  RangeList list;
  record(list, 5, 6);
  record(list, 10, 12);
  record(list, 20, 25);
  BOOST_TEST(list.forget_below(8) == 5u);  // 1..4 and 7
  BOOST_TEST(list.largest_in_order() == 7u);
  BOOST_TEST(list.contains(3));
  BOOST_TEST(!list.contains(8));
  BOOST_TEST(coverage(list, 1, 7) == Coverage::full);
  BOOST_TEST(coverage(list, 6, 9) == Coverage::partial);
  BOOST_TEST(list.ranges() == (Ranges{{1, 7}, {10, 12}, {20, 25}}));
  BOOST_TEST(list.forget_below(10) == 2u);  // 8, 9; the range starting at 10 joins the prefix
  BOOST_TEST(list.largest_in_order() == 12u);
  BOOST_TEST(list.ranges() == (Ranges{{1, 12}, {20, 25}}));
  BOOST_TEST(list.forget_below(22) == 7u);  // 13..19, reaching into [20, 25]
  BOOST_TEST(list.ranges() == (Ranges{{1, 25}}));
  BOOST_TEST(*list.record(26, 30) == 5u);
  BOOST_TEST(list.largest_in_order() == 30u);
}

BOOST_AUTO_TEST_CASE(forget_below_the_first_missing_number_changes_nothing) {
  RangeList list;
  record(list, 1, 10);
  record(list, 15, 20);
  BOOST_TEST(list.forget_below(0) == 0u);
  BOOST_TEST(list.forget_below(5) == 0u);
  BOOST_TEST(list.forget_below(11) == 0u);
  BOOST_TEST(list.ranges() == (Ranges{{1, 10}, {15, 20}}));
}

BOOST_AUTO_TEST_CASE(invalid_ranges_are_errors_and_change_nothing) {
  RangeList list;
  record(list, 5, 9);
  const std::vector<std::pair<Sequence, Sequence>> invalid{
      {0, 0}, {0, 5}, {7, 3}, {1, kMaxSequence + 1}, {kMaxSequence + 1, kMaxSequence + 1}};
  for (const auto& [first, last] : invalid) {
    BOOST_TEST_CONTEXT("[" << first << ", " << last << "]") {
      BOOST_TEST((list.record(first, last).code() == Errc::invalid_argument));
      BOOST_TEST((list.coverage(first, last).code() == Errc::invalid_argument));
      BOOST_TEST((check_range({first, last}).code() == Errc::invalid_argument));
    }
  }
  BOOST_TEST(list.ranges() == (Ranges{{5, 9}}));
}

BOOST_AUTO_TEST_CASE(numbers_up_to_max_sequence_are_valid) {
  RangeList list;
  BOOST_TEST(*list.record(kMaxSequence - 1, kMaxSequence) == 2u);
  BOOST_TEST(coverage(list, kMaxSequence, kMaxSequence) == Coverage::full);
  BOOST_TEST(list.forget_below(kMaxSequence + 1) == kMaxSequence - 2);
  BOOST_TEST(list.largest_in_order() == kMaxSequence);
  BOOST_TEST(list.ranges() == (Ranges{{1, kMaxSequence}}));
  BOOST_TEST(*list.record(1, kMaxSequence) == 0u);
}

BOOST_AUTO_TEST_CASE(copies_and_moves_carry_the_recorded_set) {
  RangeList original;
  record(original, 1, 4);
  record(original, 10, 12);
  RangeList copy = original;
  record(original, 5, 9);
  BOOST_TEST(copy.ranges() == (Ranges{{1, 4}, {10, 12}}));
  record(copy, 14, 15);  // the copy's own hint and map work on their own
  BOOST_TEST(copy.ranges() == (Ranges{{1, 4}, {10, 12}, {14, 15}}));
  BOOST_TEST(original.ranges() == (Ranges{{1, 12}}));

  RangeList moved = std::move(copy);
  BOOST_TEST(moved.ranges() == (Ranges{{1, 4}, {10, 12}, {14, 15}}));
  record(moved, 13, 13);
  BOOST_TEST(moved.ranges() == (Ranges{{1, 4}, {10, 15}}));
  copy = original;
  BOOST_TEST(copy.ranges() == (Ranges{{1, 12}}));
  original = std::move(moved);
  BOOST_TEST(original.ranges() == (Ranges{{1, 4}, {10, 15}}));
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_CASE(range_above_prefix_names_the_block_a_selective_ack_reports) {
  ftmpi::seq::RangeList list;
  BOOST_TEST(!list.has_gaps());
  BOOST_REQUIRE(list.record(1, 10));
  BOOST_TEST(!list.range_above_prefix(5).has_value());  // in the prefix: LIRS says it already
  BOOST_REQUIRE(list.record(20, 30));
  BOOST_REQUIRE(list.record(40, 40));
  BOOST_TEST(list.has_gaps());
  auto block = list.range_above_prefix(25);
  BOOST_REQUIRE(block.has_value());
  BOOST_TEST(block->first == 20u);
  BOOST_TEST(block->last == 30u);
  BOOST_TEST(list.range_above_prefix(40)->first == 40u);
  BOOST_TEST(!list.range_above_prefix(15).has_value());  // missing
  BOOST_TEST(!list.range_above_prefix(41).has_value());
  BOOST_REQUIRE(list.record(11, 19));  // the hole fills: everything up to 30 joins the prefix
  BOOST_TEST(!list.range_above_prefix(25).has_value());
  BOOST_TEST(list.has_gaps());  // 40 is still beyond 31
}

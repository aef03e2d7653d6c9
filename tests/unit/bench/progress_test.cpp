// The progress line's estimate of the time left (progress.hpp): the mean time of the steps done times the
// steps left, in seconds or in minutes and seconds.
#include "ftmpi/bench/progress.hpp"

#include <boost/test/unit_test.hpp>
#include <chrono>
#include <string>

using namespace ftmpi::bench;
using namespace std::chrono_literals;

namespace {

std::string left(std::chrono::steady_clock::duration elapsed, int done, int total) {
  return ProgressLine::time_left(elapsed, done, total);
}

}  // namespace

BOOST_AUTO_TEST_SUITE(progress)

BOOST_AUTO_TEST_CASE(nothing_is_said_before_the_first_step_or_when_nothing_is_left) {
  BOOST_TEST(left(0s, 0, 10).empty());
  BOOST_TEST(left(100s, 0, 10).empty());  // time went by, but no step has ended
  BOOST_TEST(left(100s, 10, 10).empty());
  BOOST_TEST(left(100s, 11, 10).empty());  // more done than expected
  BOOST_TEST(left(100s, 0, 0).empty());
  BOOST_TEST(left(100s, -1, 10).empty());
}

BOOST_AUTO_TEST_CASE(under_a_minute_in_seconds) {
  BOOST_TEST(left(10s, 2, 5) == "about 15 s left");  // 5 s a step, 3 to go
  BOOST_TEST(left(1s, 1, 2) == "about 1 s left");
  BOOST_TEST(left(1500ms, 1, 2) == "about 2 s left");  // rounded to the nearest second
  BOOST_TEST(left(1400ms, 1, 2) == "about 1 s left");
  BOOST_TEST(left(59s, 1, 2) == "about 59 s left");
  BOOST_TEST(left(0s, 3, 4) == "about 0 s left");
}

BOOST_AUTO_TEST_CASE(a_minute_or_more_in_minutes_and_seconds) {
  BOOST_TEST(left(20s, 2, 10) == "about 1 min 20 s left");  // 10 s a step, 8 to go
  BOOST_TEST(left(60s, 1, 2) == "about 1 min 0 s left");
  BOOST_TEST(left(59600ms, 1, 2) == "about 1 min 0 s left");  // 59.6 s rounds up to a minute
  BOOST_TEST(left(130s, 1, 2) == "about 2 min 10 s left");
  BOOST_TEST(left(65s, 5, 15) == "about 2 min 10 s left");  // 13 s a step, 10 to go
  BOOST_TEST(left(3600s, 1, 3) == "about 120 min 0 s left");
}

BOOST_AUTO_TEST_SUITE_END()

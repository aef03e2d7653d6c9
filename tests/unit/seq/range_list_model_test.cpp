// RangeList against the obvious model (one flag per number), step by step, under many arrival orders.
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <ostream>
#include <random>
#include <vector>

#include "ftmpi/seq/range_list.hpp"
#include "ftmpi/test/seed.hpp"

using namespace ftmpi::seq;

namespace {

// Numbers 1..universe, one flag each. Scans use memchr so that the model stays cheap in a Debug build.
class Model {
 public:
  explicit Model(Sequence universe) : recorded_(universe + 1, 0) {}

  std::uint64_t record(Sequence first, Sequence last) {
    std::uint64_t added = 0;
    for (Sequence n = first; n <= last; ++n) {
      added += recorded_[n] == 0 ? 1 : 0;
      recorded_[n] = 1;
    }
    return added;
  }

  std::uint64_t forget_below(Sequence n) { return n > 1 ? record(1, n - 1) : 0; }

  Coverage coverage(Sequence first, Sequence last) const {
    const std::size_t length = last - first + 1;
    if (find(first, 1, length) == nullptr) return Coverage::none;
    return find(first, 0, length) == nullptr ? Coverage::full : Coverage::partial;
  }

  bool contains(Sequence n) const { return recorded_[n] != 0; }

  Sequence largest_in_order() const {
    const char* missing = find(1, 0, recorded_.size() - 1);
    return missing == nullptr ? recorded_.size() - 1 : static_cast<Sequence>(missing - recorded_.data()) - 1;
  }

  std::vector<Range> ranges() const {
    std::vector<Range> out;
    const char* end = recorded_.data() + recorded_.size();
    for (const char* run = find(1, 1, recorded_.size() - 1); run != nullptr;) {
      const char* after = static_cast<const char*>(std::memchr(run, 0, static_cast<std::size_t>(end - run)));
      if (after == nullptr) after = end;
      out.push_back({static_cast<Sequence>(run - recorded_.data()),
                     static_cast<Sequence>(after - recorded_.data()) - 1});
      run = after == end
                ? nullptr
                : static_cast<const char*>(std::memchr(after, 1, static_cast<std::size_t>(end - after)));
    }
    return out;
  }

 private:
  // The first flag equal to `value` among `length` flags from number `from`, or nullptr.
  const char* find(Sequence from, char value, std::size_t length) const {
    return static_cast<const char*>(std::memchr(recorded_.data() + from, value, length));
  }

  std::vector<char> recorded_;  // index = number; index 0 unused
};

using Rng = std::mt19937_64;

Sequence uniform(Rng& rng, Sequence low, Sequence high) {
  return std::uniform_int_distribution<Sequence>(low, high)(rng);
}

// [1, universe] cut into consecutive fragments of 1..max_size numbers.
std::vector<Range> cut_randomly(Sequence universe, Sequence max_size, Rng& rng) {
  std::vector<Range> fragments;
  for (Sequence first = 1; first <= universe;) {
    const Sequence last = std::min(universe, first + uniform(rng, 1, max_size) - 1);
    fragments.push_back({first, last});
    first = last + 1;
  }
  return fragments;
}

// [1, universe] cut at a rail's MTU.
std::vector<Range> cut_at_mtu(Sequence universe, Sequence mtu) {
  std::vector<Range> fragments;
  for (Sequence first = 1; first <= universe; first += mtu) {
    fragments.push_back({first, std::min(universe, first + mtu - 1)});
  }
  return fragments;
}

void shuffle_within_windows(std::vector<Range>& fragments, std::size_t window, Rng& rng) {
  for (std::size_t begin = 0; begin < fragments.size(); begin += window) {
    const auto end = std::min(fragments.size(), begin + window);
    std::shuffle(fragments.begin() + static_cast<std::ptrdiff_t>(begin),
                 fragments.begin() + static_cast<std::ptrdiff_t>(end), rng);
  }
}

// A random query range of 1..max_size numbers within [1, universe].
Range random_range(Sequence universe, Sequence max_size, Rng& rng) {
  const Sequence first = uniform(rng, 1, universe);
  return {first, std::min(universe, first + uniform(rng, 1, max_size) - 1)};
}

void require_agreement(const RangeList& list, const Model& model, Range arrival, Sequence universe,
                       Rng& rng) {
  BOOST_TEST_REQUIRE(list.largest_in_order() == model.largest_in_order());
  BOOST_TEST_REQUIRE(list.first_missing() == model.largest_in_order() + 1);
  const auto expected_ranges = model.ranges();
  BOOST_TEST_REQUIRE(list.ranges() == expected_ranges);
  BOOST_TEST_REQUIRE(list.range_count() == expected_ranges.size());
  BOOST_TEST_REQUIRE(list.empty() == expected_ranges.empty());

  const Sequence first_missing = std::min(universe, list.first_missing());
  const Range around_arrival{arrival.first > 3 ? arrival.first - 3 : 1, std::min(universe, arrival.last + 3)};
  const Range queries[] = {arrival,
                           around_arrival,
                           random_range(universe, 8, rng),
                           random_range(universe, universe / 4, rng),
                           {first_missing > 2 ? first_missing - 2 : 1, first_missing}};
  for (const Range query : queries) {
    BOOST_TEST_CONTEXT("coverage of " << query) {
      BOOST_TEST_REQUIRE(*list.coverage(query.first, query.last) == model.coverage(query.first, query.last));
    }
  }
  for (int i = 0; i < 4; ++i) {
    const Sequence n = uniform(rng, 0, universe);
    BOOST_TEST_CONTEXT("contains " << n) { BOOST_TEST_REQUIRE(list.contains(n) == model.contains(n)); }
  }
}

// Records each arrival in a RangeList and in the model and requires them to agree after every step.
// With forget_every > 0, about one step in forget_every also forgets below a number near the first hole.
void run_against_model(const std::vector<Range>& arrivals, Sequence universe, Rng& rng,
                       int forget_every = 0) {
  RangeList list;
  Model model(universe);
  for (std::size_t step = 0; step < arrivals.size(); ++step) {
    const Range arrival = arrivals[step];
    BOOST_TEST_CONTEXT("step " << step << ", record " << arrival) {
      const auto added = list.record(arrival.first, arrival.last);
      BOOST_TEST_REQUIRE(added.is_ok());
      BOOST_TEST_REQUIRE(*added == model.record(arrival.first, arrival.last));
      if (forget_every > 0 && uniform(rng, 1, static_cast<Sequence>(forget_every)) == 1) {
        const Sequence below = std::min(universe + 1, uniform(rng, 0, list.first_missing() + 100));
        BOOST_TEST_CONTEXT("forget_below " << below) {
          BOOST_TEST_REQUIRE(list.forget_below(below) == model.forget_below(below));
        }
      }
      require_agreement(list, model, arrival, universe, rng);
    }
  }
}

// What filling one hole observed.
struct FillOutcome {
  Coverage coverage_before = Coverage::none;
  std::uint64_t added = 0;
  std::size_t range_count = 0;
  Sequence largest_in_order = 0;
  friend bool operator==(const FillOutcome&, const FillOutcome&) = default;
};

std::ostream& operator<<(std::ostream& out, const FillOutcome& o) {
  return out << "{coverage before " << o.coverage_before << ", added " << o.added << ", ranges "
             << o.range_count << ", in order " << o.largest_in_order << "}";
}

}  // namespace

BOOST_AUTO_TEST_SUITE(range_list_model)

BOOST_AUTO_TEST_CASE(arrivals_shuffled_within_windows_match_the_model) {
  const auto seed = ftmpi::test::seed_for("arrivals_shuffled_within_windows");
  BOOST_TEST_CONTEXT("seed " << seed) {
    Rng rng(seed);
    for (const std::size_t window : {2, 8, 64}) {
      BOOST_TEST_CONTEXT("window " << window) {
        auto arrivals = cut_randomly(4000, 12, rng);
        shuffle_within_windows(arrivals, window, rng);
        run_against_model(arrivals, 4000, rng);
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(arrivals_in_random_order_match_the_model) {
  const auto seed = ftmpi::test::seed_for("arrivals_in_random_order");
  BOOST_TEST_CONTEXT("seed " << seed) {
    Rng rng(seed);
    auto arrivals = cut_randomly(5000, 20, rng);
    std::shuffle(arrivals.begin(), arrivals.end(), rng);
    run_against_model(arrivals, 5000, rng);
  }
}

BOOST_AUTO_TEST_CASE(arrivals_in_reverse_order_match_the_model) {
  const auto seed = ftmpi::test::seed_for("arrivals_in_reverse_order");
  BOOST_TEST_CONTEXT("seed " << seed) {
    Rng rng(seed);
    auto arrivals = cut_randomly(3000, 10, rng);
    std::reverse(arrivals.begin(), arrivals.end());
    run_against_model(arrivals, 3000, rng);
  }
}

// A first pass on one rail loses and duplicates fragments; retransmissions re-cut for rails with other
// MTUs overlap what did arrive, and duplicates of anything may turn up at any time.
BOOST_AUTO_TEST_CASE(lossy_duplicated_and_recut_arrivals_match_the_model) {
  const auto seed = ftmpi::test::seed_for("lossy_duplicated_and_recut_arrivals");
  BOOST_TEST_CONTEXT("seed " << seed) {
    Rng rng(seed);
    constexpr Sequence kUniverse = 5000;
    std::vector<Range> arrivals;
    for (const Range fragment : cut_at_mtu(kUniverse, 50)) {
      if (uniform(rng, 1, 10) > 3) arrivals.push_back(fragment);
      if (uniform(rng, 1, 10) == 1) arrivals.push_back(fragment);
    }
    shuffle_within_windows(arrivals, 16, rng);
    std::vector<Range> retransmissions;
    for (const Range fragment : cut_at_mtu(kUniverse, 7)) {
      if (uniform(rng, 1, 2) == 1) retransmissions.push_back(fragment);
    }
    const auto last_rail = cut_at_mtu(kUniverse, 333);
    retransmissions.insert(retransmissions.end(), last_rail.begin(), last_rail.end());
    std::shuffle(retransmissions.begin(), retransmissions.end(), rng);
    arrivals.insert(arrivals.end(), retransmissions.begin(), retransmissions.end());
    for (int i = 0; i < 200; ++i) {
      const auto from = uniform(rng, 0, arrivals.size() - 1);
      const auto to = uniform(rng, from, arrivals.size());
      arrivals.insert(arrivals.begin() + static_cast<std::ptrdiff_t>(to), arrivals[from]);
    }
    run_against_model(arrivals, kUniverse, rng);
  }
}

BOOST_AUTO_TEST_CASE(random_ranges_with_forget_below_match_the_model) {
  const auto seed = ftmpi::test::seed_for("random_ranges_with_forget_below");
  BOOST_TEST_CONTEXT("seed " << seed) {
    Rng rng(seed);
    constexpr Sequence kUniverse = 5000;
    std::vector<Range> arrivals;
    for (int i = 0; i < 1500; ++i) arrivals.push_back(random_range(kUniverse, 40, rng));
    run_against_model(arrivals, kUniverse, rng, 50);
  }
}

// Lookups start from the range touched last, so after every record each possible query in a small
// universe, wherever it lies relative to that range, must still get the model's answer.
BOOST_AUTO_TEST_CASE(every_query_in_a_small_universe_matches_the_model_after_each_record) {
  const auto seed = ftmpi::test::seed_for("every_query_in_a_small_universe");
  BOOST_TEST_CONTEXT("seed " << seed) {
    Rng rng(seed);
    constexpr Sequence kUniverse = 40;
    RangeList list;
    Model model(kUniverse);
    for (int step = 0; step < 60 && list.largest_in_order() < kUniverse; ++step) {
      const Range arrival = random_range(kUniverse, 4, rng);
      BOOST_TEST_REQUIRE(*list.record(arrival.first, arrival.last) ==
                         model.record(arrival.first, arrival.last));
      for (Sequence first = 1; first <= kUniverse; ++first) {
        BOOST_TEST_REQUIRE(list.contains(first) == model.contains(first),
                           "step " << step << ", after " << arrival << ", contains " << first);
        for (Sequence last = first; last <= kUniverse; ++last) {
          BOOST_TEST_REQUIRE(
              *list.coverage(first, last) == model.coverage(first, last),
              "step " << step << ", after " << arrival << ", coverage of " << (Range{first, last}));
        }
      }
    }
  }
}

// Every other fragment missing, thousands of holes, then the holes filled in random order: each fill
// merges two stored ranges, which a structure with linear-time middle erases would make quadratic.
BOOST_AUTO_TEST_CASE(every_other_fragment_missing_then_filled_randomly_merges_to_one_range) {
  const auto seed = ftmpi::test::seed_for("every_other_fragment_missing");
  BOOST_TEST_CONTEXT("seed " << seed) {
    Rng rng(seed);
    constexpr Sequence kHoles = 200'000;
    constexpr Sequence kFragment = 8;
    // Fragment i holds [i * kFragment + 1, (i + 1) * kFragment]; even ones arrive, odd ones are the holes.
    const auto fragment = [](Sequence i) { return Range{i * kFragment + 1, (i + 1) * kFragment}; };
    RangeList list;
    for (Sequence i = 0; i <= 2 * kHoles; i += 2) {
      BOOST_TEST_REQUIRE(list.record(fragment(i).first, fragment(i).last).is_ok());
    }
    BOOST_TEST_REQUIRE(list.range_count() == kHoles + 1);
    BOOST_TEST_REQUIRE(list.largest_in_order() == kFragment);

    std::vector<Sequence> holes(kHoles);
    for (Sequence h = 0; h < kHoles; ++h) holes[h] = 2 * h + 1;
    std::shuffle(holes.begin(), holes.end(), rng);
    std::vector<bool> filled(kHoles, false);
    Sequence first_open_hole = 0;
    for (std::size_t step = 0; step < holes.size(); ++step) {
      const Range hole = fragment(holes[step]);
      FillOutcome outcome;
      outcome.coverage_before = *list.coverage(hole.first, hole.last);
      outcome.added = *list.record(hole.first, hole.last);
      outcome.range_count = list.range_count();
      outcome.largest_in_order = list.largest_in_order();

      filled[holes[step] / 2] = true;
      while (first_open_hole < kHoles && filled[first_open_hole]) ++first_open_hole;
      const FillOutcome expected{Coverage::none, kFragment, kHoles - step,
                                 (2 * first_open_hole + 1) * kFragment};
      // One check per step, its message formatted only on failure: the loop runs 200,000 times.
      BOOST_TEST_REQUIRE(outcome == expected, "step " << step << ", fill " << hole);
    }
    BOOST_TEST(list.ranges() == (std::vector<Range>{{1, (2 * kHoles + 1) * kFragment}}));
  }
}

BOOST_AUTO_TEST_SUITE_END()

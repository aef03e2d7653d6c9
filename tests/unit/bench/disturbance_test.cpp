// The disturbance watch (disturbance.hpp): when a run counts as disturbed, and that a disturbed run is
// repeated — within limits — while a failed one never is. The host probe is a fake here; the runnable-task
// sampler sees the real machine, so the tests give it a job so large that no sample can count as busy and
// never look at its counts.
#include "ftmpi/bench/disturbance.hpp"

#include <sched.h>

#include <boost/test/unit_test.hpp>
#include <cmath>
#include <cstddef>
#include <string>
#include <vector>

using namespace ftmpi::bench;

namespace {

// No machine has this many tasks runnable: the sampler's verdict is always "not busy".
constexpr int kHugeJob = 1'000'000;

// A probe that answers from a list, repeating its last answer when the list runs out.
struct FakeProbe {
  std::vector<double> answers;
  std::size_t calls = 0;
  double operator()() {
    const double v = answers[std::min(calls, answers.size() - 1)];
    ++calls;
    return v;
  }
};

struct FakeRun {
  bool succeeds = true;
  int calls = 0;
  bool operator()() {
    ++calls;
    return succeeds;
  }
};

struct Notes {
  std::vector<std::string> heard;
  void operator()(const std::string& why) { heard.push_back(why); }
};

}  // namespace

BOOST_AUTO_TEST_SUITE(disturbance)

BOOST_AUTO_TEST_CASE(exactly_a_tenth_of_the_samples_busy_is_not_disturbed_more_is) {
  RunConditions c;
  c.samples = 20;
  c.busy = 2;
  Verdict v = judge(c, 0);
  BOOST_TEST(!v.others_busy);
  BOOST_TEST(!v.disturbed());
  BOOST_TEST(v.why.empty());

  c.busy = 3;
  v = judge(c, 0);
  BOOST_TEST(v.others_busy);
  BOOST_TEST(!v.host_slow);
  BOOST_TEST(v.disturbed());
  BOOST_TEST(v.why == "other tasks runnable in 3 of 20 samples");

  c.samples = 10;
  c.busy = 1;
  BOOST_TEST(!judge(c, 0).others_busy);
  c.busy = 2;
  BOOST_TEST(judge(c, 0).others_busy);
  c.samples = 1;
  c.busy = 1;
  BOOST_TEST(judge(c, 0).others_busy);
  c.samples = 0;  // no samples: nothing known, nothing disturbed
  c.busy = 0;
  BOOST_TEST(!judge(c, 0).others_busy);
}

BOOST_AUTO_TEST_CASE(a_probe_at_one_and_a_half_times_the_best_is_not_slow_above_is) {
  RunConditions c;
  c.probe_before_ns = 60;
  c.probe_after_ns = 40;
  Verdict v = judge(c, 40);
  BOOST_TEST(!v.host_slow);
  BOOST_TEST(!v.disturbed());
  BOOST_TEST(v.why.empty());

  c.probe_after_ns = 60.5;  // the slower of the two counts
  v = judge(c, 40);
  BOOST_TEST(v.host_slow);
  BOOST_TEST(!v.others_busy);
  BOOST_TEST(v.disturbed());
  BOOST_TEST(v.why.find("cache line") != std::string::npos, v.why);
  BOOST_TEST(v.why.find("best 40 ns") != std::string::npos, v.why);
  BOOST_TEST(v.why.find("60 ns") != std::string::npos, v.why);

  c.probe_before_ns = 96;  // slow before the run, fine after: still disturbed
  c.probe_after_ns = 35;
  v = judge(c, 35);
  BOOST_TEST(v.host_slow);
  BOOST_TEST(v.why.find("96 ns") != std::string::npos, v.why);
  BOOST_TEST(v.why.find("best 35 ns") != std::string::npos, v.why);
}

BOOST_AUTO_TEST_CASE(without_a_best_probe_there_is_no_verdict_on_the_host) {
  RunConditions c;
  c.probe_before_ns = 1e6;
  c.probe_after_ns = 1e6;
  const Verdict v = judge(c, 0);
  BOOST_TEST(!v.host_slow);
  BOOST_TEST(!v.disturbed());
  BOOST_TEST(v.why.empty());
}

BOOST_AUTO_TEST_CASE(both_causes_are_named) {
  RunConditions c;
  c.samples = 10;
  c.busy = 5;
  c.probe_before_ns = 35;
  c.probe_after_ns = 100;
  const Verdict v = judge(c, 35);
  BOOST_TEST(v.others_busy);
  BOOST_TEST(v.host_slow);
  BOOST_TEST(v.why.find("other tasks runnable in 5 of 10 samples") == 0u, v.why);
  BOOST_TEST(v.why.find("; ") != std::string::npos, v.why);
  BOOST_TEST(v.why.find("100 ns") != std::string::npos, v.why);
  BOOST_TEST(v.why.find("best 35 ns") != std::string::npos, v.why);
}

BOOST_AUTO_TEST_CASE(an_undisturbed_run_is_run_once) {
  FakeProbe probe{{35}};
  DisturbanceWatch watch(std::ref(probe), 0);
  FakeRun run;
  Notes notes;
  BOOST_TEST(watch.measure(kHugeJob, std::ref(run), std::ref(notes)));
  BOOST_TEST(run.calls == 1);
  BOOST_TEST(probe.calls == 2u);  // before and after
  BOOST_TEST(watch.runs() == 1);
  BOOST_TEST(watch.repeated() == 0);
  BOOST_TEST(watch.kept_disturbed() == 0);
  BOOST_TEST((watch.probes() == std::vector<double>{35, 35}));
  BOOST_TEST(notes.heard.empty());
}

BOOST_AUTO_TEST_CASE(a_run_on_a_slow_host_is_repeated_five_times_then_kept_as_disturbed) {
  // The first probe sets the best; every later one is far slower: the host never recovers.
  FakeProbe probe{{35, 100}};
  DisturbanceWatch watch(std::ref(probe), 0);
  FakeRun run;
  Notes notes;
  BOOST_TEST(watch.measure(kHugeJob, std::ref(run), std::ref(notes)));
  BOOST_TEST(run.calls == 6);  // the run and five more attempts
  BOOST_TEST(watch.runs() == 1);
  BOOST_TEST(watch.repeated() == 5);
  BOOST_TEST(watch.kept_disturbed() == 1);
  BOOST_TEST((watch.probes() == std::vector<double>{100, 100}));  // the kept run's probes only
  BOOST_TEST_REQUIRE(notes.heard.size() == 5u);
  for (const std::string& why : notes.heard) {
    BOOST_TEST(why.find("cache line") != std::string::npos, why);
    BOOST_TEST(why.find("100 ns") != std::string::npos, why);
    BOOST_TEST(why.find("best 35 ns") != std::string::npos, why);
  }
}

BOOST_AUTO_TEST_CASE(a_run_is_repeated_only_until_the_host_recovers) {
  // Attempt 1: 35 then 100 (slow); attempt 2: 36 and 37 (fine).
  FakeProbe probe{{35, 100, 36, 37}};
  DisturbanceWatch watch(std::ref(probe), 0);
  FakeRun run;
  Notes notes;
  BOOST_TEST(watch.measure(kHugeJob, std::ref(run), std::ref(notes)));
  BOOST_TEST(run.calls == 2);
  BOOST_TEST(watch.runs() == 1);
  BOOST_TEST(watch.repeated() == 1);
  BOOST_TEST(watch.kept_disturbed() == 0);
  BOOST_TEST((watch.probes() == std::vector<double>{36, 37}));
  BOOST_TEST(notes.heard.size() == 1u);
}

BOOST_AUTO_TEST_CASE(a_failed_run_is_never_repeated_even_when_disturbed) {
  FakeProbe probe{{35, 100}};
  DisturbanceWatch watch(std::ref(probe), 0);
  FakeRun run{false};
  Notes notes;
  BOOST_TEST(!watch.measure(kHugeJob, std::ref(run), std::ref(notes)));
  BOOST_TEST(run.calls == 1);
  BOOST_TEST(watch.runs() == 1);
  BOOST_TEST(watch.repeated() == 0);
  BOOST_TEST(watch.kept_disturbed() == 0);  // not kept: failed
  BOOST_TEST((watch.probes() == std::vector<double>{35, 100}));
  BOOST_TEST(notes.heard.empty());
}

BOOST_AUTO_TEST_CASE(the_account_adds_up_over_several_measurements_and_the_best_probe_is_remembered) {
  FakeProbe probe{{35, 35, 40, 40, 100}};  // run A fine (35, 35); run B fine (40 < 52.5); then slow for good
  DisturbanceWatch watch(std::ref(probe), 0);
  Notes notes;
  FakeRun a, b, c, d{false};
  BOOST_TEST(watch.measure(kHugeJob, std::ref(a), std::ref(notes)));
  BOOST_TEST(watch.measure(kHugeJob, std::ref(b), std::ref(notes)));
  // Run C's probes are all 100 and the best seen is 35 (from run A): slow, repeated to the end.
  BOOST_TEST(watch.measure(kHugeJob, std::ref(c), std::ref(notes)));
  BOOST_TEST(!watch.measure(kHugeJob, std::ref(d), std::ref(notes)));
  BOOST_TEST(a.calls == 1);
  BOOST_TEST(b.calls == 1);
  BOOST_TEST(c.calls == 6);
  BOOST_TEST(d.calls == 1);
  BOOST_TEST(watch.runs() == 4);
  BOOST_TEST(watch.repeated() == 5);
  BOOST_TEST(watch.kept_disturbed() == 1);
  BOOST_TEST(notes.heard.size() == 5u);
  BOOST_TEST((watch.probes() == std::vector<double>{35, 35, 40, 40, 100, 100, 100, 100}));
  const std::string summary = watch.summary();
  BOOST_TEST(summary.find("4 runs;") == 0u, summary);
  BOOST_TEST(summary.find("5 disturbed runs repeated, 1 kept still disturbed") != std::string::npos, summary);
  BOOST_TEST(summary.find("(median; 35 to 100)") != std::string::npos, summary);
}

BOOST_AUTO_TEST_CASE(a_probe_that_cannot_measure_or_no_probe_gives_no_host_verdict) {
  FakeProbe zero{{0}};  // cacheline_ns on a single CPU
  DisturbanceWatch watch(std::ref(zero), 0);
  FakeRun run;
  BOOST_TEST(watch.measure(kHugeJob, std::ref(run), {}));  // no note to tell: fine too
  BOOST_TEST(run.calls == 1);
  BOOST_TEST(watch.repeated() == 0);
  BOOST_TEST(watch.probes().empty());
  BOOST_TEST(watch.summary().find("cache line") == std::string::npos);

  DisturbanceWatch none(std::function<double()>{}, 0);
  FakeRun other;
  BOOST_TEST(none.measure(kHugeJob, std::ref(other), {}));
  BOOST_TEST(other.calls == 1);
  BOOST_TEST(none.runs() == 1);
  BOOST_TEST(none.probes().empty());
}

BOOST_AUTO_TEST_CASE(a_cache_line_takes_some_time_between_two_cpus) {
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  BOOST_TEST_REQUIRE(sched_getaffinity(0, sizeof allowed, &allowed) == 0);
  const double ns = cacheline_ns();
  BOOST_TEST(std::isfinite(ns));
  if (CPU_COUNT(&allowed) >= 2) {
    BOOST_TEST(ns > 0);
  } else {
    BOOST_TEST(ns == 0);  // one CPU: nothing to measure between
  }
}

BOOST_AUTO_TEST_SUITE_END()

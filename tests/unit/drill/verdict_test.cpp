// A drill's verdict (verdict.hpp): each expectation judged from statistics deltas, program output, timeline.
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "ftmpi/base/json_value.hpp"
#include "ftmpi/drill/verdict.hpp"
#include "ftmpi/test/seed.hpp"

using namespace ftmpi::drill;
using ftmpi::base::JsonValue;

namespace {

struct Faults {
  std::uint64_t seen = 0, dropped = 0, corrupted = 0, duplicated = 0, blackholed = 0;
};

// One rank's statistics, as the engine's report_json writes them (the fields the verdict reads).
struct Rank {
  std::uint64_t retransmits = 0, malformed = 0, bad_payload = 0, received = 0;
  Faults rail0, rail1;
};

JsonValue json_of(const Rank& r) {
  auto faults = [](const Faults& f) {
    std::ostringstream o;
    o << R"({"kind":"faults","name":"udp x","counters":{"frames_seen":)" << f.seen << R"(,"dropped":)" << f.dropped
      << R"(,"corrupted":)" << f.corrupted << R"(,"duplicated":)" << f.duplicated << R"(,"reordered":0,"delayed":0)"
      << R"(,"blackholed":)" << f.blackholed << "}}";
    return o.str();
  };
  std::ostringstream o;
  o << R"({"rank":0,"size":2,"warnings":[],"totals":{"frames_sent":0,"frames_received":)" << r.received
    << R"(,"dropped_malformed":)" << r.malformed << R"(,"dropped_bad_payload":)" << r.bad_payload
    << R"(,"retransmits":)" << r.retransmits << R"(,"rails_down":0},"rails":[],"paths":[)"
    << R"({"index":0,"name":"udp x","groups":[)" << faults(r.rail0)
    // Not a fault layer: its counters must not count.
    << R"(,{"kind":"udp","name":"udp x","counters":{"frames_seen":1000,"corrupted":1000,"dropped":7}}]},)"
    << R"({"index":1,"name":"udp y","groups":[)" << faults(r.rail1) << "]}]}";
  auto json = ftmpi::base::parse_json(o.str());
  BOOST_TEST_REQUIRE(json.is_ok(), json.status().message());
  return *json;
}

Observed observed(const std::vector<std::optional<Rank>>& start, const std::vector<std::optional<Rank>>& end) {
  Observed o;
  for (const auto& r : start) o.start.push_back(r ? json_of(*r) : JsonValue{});
  for (const auto& r : end) o.end.push_back(r ? json_of(*r) : JsonValue{});
  return o;
}

std::vector<Check> judge_all(std::string_view expectations, const Observed& o, const Timeline& t = {}) {
  auto drill = parse_drill(expectations, "test.drill");
  BOOST_TEST_REQUIRE(drill.is_ok(), drill.status().message());
  return judge(*drill, t, o);
}

Check judge_one(std::string_view expectation, const Observed& o, const Timeline& t = {}) {
  const std::vector<Check> checks = judge_all("expect " + std::string(expectation), o, t);
  BOOST_TEST_REQUIRE(checks.size() == 1u);
  BOOST_TEST(checks[0].name == expectation);
  return checks[0];
}

bool contains(const std::string& text, std::string_view part) { return text.find(part) != std::string::npos; }

// One rank with only these deltas of the corruption figures (start all zero except an offset).
Observed corruption(std::uint64_t injected, std::uint64_t malformed, std::uint64_t bad_payload, Faults wire,
                    std::uint64_t received) {
  Rank start;
  start.rail0 = {50, 5, 3, 1, 2};
  start.malformed = 4;
  start.received = 40;
  Rank end = start;
  end.rail0.corrupted += injected;
  end.malformed += malformed;
  end.bad_payload += bad_payload;
  end.rail1 = wire;
  end.received += received;
  return observed({start}, {end});
}

constexpr std::int64_t kStart = 1'700'000'000'000'000;
std::int64_t at(double s) { return kStart + std::llround(s * 1e6); }

Event rail_state(std::uint32_t rank, std::uint32_t peer, std::uint32_t rail, double s, std::string state) {
  Event e;
  e.rank = rank;
  e.peer = peer;
  e.rail = rail;
  e.at_us = at(s);
  e.kind = "rail_state";
  e.state = std::move(state);
  return e;
}

Step step(std::string action, double s, double until_s, std::optional<std::uint32_t> rail, bool ok = true) {
  Step st;
  st.action = std::move(action);
  st.at_us = at(s);
  st.until_us = until_s > 0 ? at(until_s) : 0;
  st.rail = rail;
  st.ok = ok;
  return st;
}

Timeline timeline(std::vector<Event> events, std::vector<Step> steps) {
  Timeline t;
  t.header.started_us = kStart;
  t.header.ended_us = at(10);
  t.events = std::move(events);
  t.steps = std::move(steps);
  return t;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(verdict)

BOOST_AUTO_TEST_CASE(counters_are_deltas_summed_over_ranks) {
  Rank s0, e0, s1, e1;
  s0.retransmits = 5;
  e0.retransmits = 12;
  e1.retransmits = 3;
  const Check c = judge_one("retransmits = 10", observed({s0, s1}, {e0, e1}));
  BOOST_TEST(c.pass);
  BOOST_TEST(c.measured == "10");
  BOOST_TEST(c.limit == "= 10");
  BOOST_TEST(c.note == "summed over the ranks, since the drill began");
  BOOST_TEST(!judge_one("retransmits < 10", observed({s0, s1}, {e0, e1})).pass);
  BOOST_TEST(judge_one("retransmits >= 10", observed({s0, s1}, {e0, e1})).pass);

  // A rank with a null end counts nothing, whatever its start; a null (or missing) start counts from 0.
  Rank big;
  big.retransmits = 100;
  BOOST_TEST(judge_one("retransmits = 7", observed({s0, big}, {e0, std::nullopt})).measured == "7");
  BOOST_TEST(judge_one("retransmits = 112", observed({std::nullopt, s1}, {e0, big})).pass);
  BOOST_TEST(judge_one("retransmits = 12", observed({}, {e0})).pass);
}

BOOST_AUTO_TEST_CASE(injected_and_unknown_counters) {
  Rank s, e;
  s.rail0 = {10, 1, 2, 0, 0};
  e.rail0 = {30, 4, 6, 0, 1};
  e.rail1 = {20, 2, 5, 0, 0};
  const Observed o = observed({s, s}, {e, std::nullopt});
  const Check corrupted = judge_one("injected_corrupted = 9", o);  // (6-2) + 5; the udp group ignored
  BOOST_TEST(corrupted.pass, corrupted.measured);
  BOOST_TEST(judge_one("injected_dropped > 4", o).measured == "5");
  BOOST_TEST(judge_one("injected_blackholed = 1", o).pass);

  for (std::string_view name : {"bogus_counter", "injected_bogus", "injected_"}) {
    const Check c = judge_one(std::string(name) + " = 0", o);
    BOOST_TEST(!c.pass, name);
    BOOST_TEST(c.measured == "-");
    BOOST_TEST(c.note == "no counter '" + std::string(name) + "'");
  }
  // No rank had end figures: no counter is known.
  BOOST_TEST(!judge_one("retransmits = 0", observed({s}, {std::nullopt})).pass);

  const JsonValue stats = json_of(e);
  BOOST_TEST(is_known_counter(stats, "retransmits"));
  BOOST_TEST(is_known_counter(stats, "rails_down"));
  BOOST_TEST(is_known_counter(stats, "injected_corrupted"));
  BOOST_TEST(is_known_counter(stats, "injected_duplicated"));
  BOOST_TEST(!is_known_counter(stats, "injected_frames"));
  BOOST_TEST(!is_known_counter(stats, "injected_"));
  BOOST_TEST(!is_known_counter(stats, "frames_seen"));
  BOOST_TEST(!is_known_counter(JsonValue{}, "retransmits"));
}

BOOST_AUTO_TEST_CASE(corruption_detected) {
  // Every corruption detected.
  Check c = judge_one("corruption_detected", corruption(10, 4, 6, {}, 0));
  BOOST_TEST(c.pass, c.note);
  BOOST_TEST(c.measured == "10 of 10 detected");
  // 3 short; wire frames = 100 + 5 - 3 - 2 = 100, 97 received: 3 unread, enough.
  c = judge_one("corruption_detected", corruption(10, 7, 0, {100, 3, 0, 5, 2}, 97));
  BOOST_TEST(c.pass, c.note);
  BOOST_TEST(c.measured == "7 of 10 detected");
  BOOST_TEST(c.note == "3 frames put on the wire were never read");
  // 98 received: only 2 unread.
  c = judge_one("corruption_detected", corruption(10, 7, 0, {100, 3, 0, 5, 2}, 98));
  BOOST_TEST(!c.pass);
  BOOST_TEST(c.note == "2 frames put on the wire were never read");
  // More received than on the wire: nothing unread.
  BOOST_TEST(!judge_one("corruption_detected", corruption(10, 9, 0, {10, 0, 0, 0, 0}, 50)).pass);
  // More detected than injected.
  c = judge_one("corruption_detected", corruption(10, 6, 5, {100, 0, 0, 0, 0}, 0));
  BOOST_TEST(!c.pass);
  BOOST_TEST(contains(c.note, "a good frame was refused"), c.note);
  // Nothing injected.
  c = judge_one("corruption_detected", corruption(0, 0, 0, {100, 0, 0, 0, 0}, 0));
  BOOST_TEST(!c.pass);
  BOOST_TEST(contains(c.note, "not exercised"), c.note);
}

BOOST_AUTO_TEST_CASE(corrupt_bytes_stall_and_exit) {
  Observed o;
  Check c = judge_one("corrupt_bytes", o);
  BOOST_TEST(!c.pass);
  BOOST_TEST(c.measured == "-");
  o.corrupt_bytes = 0;
  BOOST_TEST(judge_one("corrupt_bytes", o).pass);
  o.corrupt_bytes = 12;
  c = judge_one("corrupt_bytes <= 4", o);
  BOOST_TEST(!c.pass);
  BOOST_TEST(c.measured == "12");
  BOOST_TEST(c.note == "counted by the program");
  BOOST_TEST(judge_one("corrupt_bytes 12", o).pass);

  o.polled_stall_us = 2'500'000;
  o.poll_interval_us = 250'000;
  c = judge_one("stall < 2s", o);
  BOOST_TEST(!c.pass);
  BOOST_TEST(c.measured == "2.50 s");
  BOOST_TEST(c.limit == "< 2.00 s");
  BOOST_TEST(c.note == "from the drill's polls of the job's traffic, to within 250.0 ms");
  o.program_stall_us = 1'500'000;  // the program's figure wins over the polls'
  c = judge_one("stall < 2s", o);
  BOOST_TEST(c.pass);
  BOOST_TEST(c.measured == "1.50 s");
  BOOST_TEST(c.note == "measured by the program");
  BOOST_TEST(!judge_one("stall < 1500ms", o).pass);

  o.exit_status = 0;  // attached: no exit status, whatever it says
  c = judge_one("exit", o);
  BOOST_TEST(!c.pass);
  BOOST_TEST(contains(c.note, "attached"), c.note);
  o.launched = true;
  o.exit_status.reset();
  c = judge_one("exit", o);
  BOOST_TEST(!c.pass);
  BOOST_TEST(c.note == "the program did not exit");
  o.exit_status = 3;
  BOOST_TEST(!judge_one("exit", o).pass);
  c = judge_one("exit 3", o);
  BOOST_TEST(c.pass);
  BOOST_TEST(c.measured == "3");
  BOOST_TEST(c.limit == "= 3");
}

BOOST_AUTO_TEST_CASE(failback_from_the_step_that_gave_it_back) {
  // Rail 1 down at 1.0 s on rank 0 (to rank 1) and rank 1 (to rank 0); the inject ends at 2.0 s.
  const Timeline t = timeline({rail_state(0, 1, 1, 1.0, "down"), rail_state(1, 0, 1, 1.1, "down"),
                               rail_state(1, 0, 1, 2.1, "up"), rail_state(0, 1, 1, 2.3, "up"),
                               rail_state(0, 1, 0, 3.0, "suspect"), rail_state(0, 1, 0, 3.5, "up")},
                              {step("inject", 0.9, 2.0, 1), step("run", 0.5, 0, std::nullopt),
                               step("clear", 2.2, 0, 0), step("enable", 2.25, 0, 1, false)});
  Check c = judge_one("failback < 500ms", {}, t);
  BOOST_TEST(c.pass, c.note);
  BOOST_TEST(c.measured == "300.0 ms");
  BOOST_TEST(c.limit == "< 500.0 ms");
  BOOST_TEST(c.note == "slowest of 2: rail 1 to rank 1 at rank 0, from the step that gave it back");
  BOOST_TEST(!judge_one("failback < 200ms", {}, t).pass);

  // A disable for 1 s gives the rail back when it ends.
  c = judge_one("failback <= 50ms", {},
                timeline({rail_state(0, 1, 0, 1.0, "disabled"), rail_state(0, 1, 0, 2.05, "up")},
                         {step("disable", 1.0, 2.0, 0)}));
  BOOST_TEST(c.pass, c.note);
  BOOST_TEST(c.measured == "50.0 ms");
}

BOOST_AUTO_TEST_CASE(failback_without_a_step_inside_the_episode) {
  // The steps are before it went down or after it came back, for another rail, or failed: measured from
  // when it went down.
  const Timeline t = timeline({rail_state(0, 1, 1, 1.0, "down"), rail_state(0, 1, 1, 2.3, "up")},
                              {step("clear", 0.5, 0, 1), step("enable", 3.0, 0, 1), step("enable", 2.0, 0, 0),
                               step("inject", 0.2, 2.0, 0), step("clear", 2.0, 0, 1, false)});
  const Check c = judge_one("failback < 1s", {}, t);
  BOOST_TEST(!c.pass);
  BOOST_TEST(c.measured == "1.30 s");
}

BOOST_AUTO_TEST_CASE(failback_not_measured) {
  // Still out at the end.
  Check c = judge_one("failback < 1s", {},
                      timeline({rail_state(0, 1, 1, 1.0, "down"), rail_state(0, 1, 1, 2.0, "up"),
                                rail_state(2, 0, 0, 3.0, "disabled")},
                               {}));
  BOOST_TEST(!c.pass);
  BOOST_TEST(c.measured == "never");
  BOOST_TEST(c.note == "1 rail(s) still out of service at the end, e.g. rail 0 to rank 0 at rank 2");
  // No episode: nothing left service, or only before the drill began.
  for (const Timeline& t : {timeline({}, {}), timeline({rail_state(0, 1, 1, 1.0, "up")}, {}),
                            timeline({rail_state(0, 1, 1, -1.0, "down"), rail_state(0, 1, 1, 0.5, "up")}, {})}) {
    c = judge_one("failback < 1s", {}, t);
    BOOST_TEST(!c.pass);
    BOOST_TEST(c.measured == "-");
    BOOST_TEST(contains(c.note, "not exercised"), c.note);
  }
}

BOOST_AUTO_TEST_CASE(checks_follow_the_expectations) {
  Observed o;
  o.launched = true;
  o.exit_status = 0;
  const std::vector<Check> checks =
      judge_all("expect exit = 0\nexpect   stall < 2s   # c\nexpect corruption_detected\n", o);
  BOOST_TEST_REQUIRE(checks.size() == 3u);
  BOOST_TEST(checks[0].name == "exit = 0");
  BOOST_TEST(checks[0].pass);
  BOOST_TEST(checks[1].name == "stall < 2s");
  BOOST_TEST(checks[1].pass);
  BOOST_TEST(checks[2].name == "corruption_detected");
  BOOST_TEST(!checks[2].pass);
}

// Random ranks and counters: the counters and corruption_detected agree with the sums worked out here.
BOOST_AUTO_TEST_CASE(random_deltas) {
  const std::uint64_t seed = ftmpi::test::seed_for("verdict random deltas");
  BOOST_TEST_CONTEXT("seed " << seed) {
    std::mt19937_64 random(seed);
    auto upto = [&](std::uint64_t n) { return random() % (n + 1); };
    int passed = 0;
    for (int round = 0; round < 300; ++round) {
      std::vector<std::optional<Rank>> start, end;
      std::uint64_t retransmits = 0, injected = 0, detected = 0, wire = 0, received = 0;
      for (std::size_t r = 1 + upto(4); r > 0; --r) {
        Rank s;
        s.retransmits = upto(1000), s.malformed = upto(10), s.bad_payload = upto(10), s.received = upto(1000);
        s.rail0 = {30 + upto(1000), upto(10), upto(10), upto(10), upto(10)};  // seen >= dropped + blackholed
        Rank e = s;
        const std::uint64_t d_retransmits = upto(50), d_malformed = upto(3), d_bad = upto(3), d_received = upto(60);
        const Faults d{upto(60), upto(10), upto(6), upto(5), upto(10)};
        e.retransmits += d_retransmits, e.malformed += d_malformed, e.bad_payload += d_bad, e.received += d_received;
        e.rail0.seen += d.seen + d.dropped + d.blackholed;  // dropped and blackholed frames were seen
        e.rail0.dropped += d.dropped, e.rail0.corrupted += d.corrupted;
        e.rail0.duplicated += d.duplicated, e.rail0.blackholed += d.blackholed;
        const bool no_end = upto(5) == 0;
        start.push_back(upto(5) == 0 ? std::nullopt : std::optional<Rank>(s));
        end.push_back(no_end ? std::nullopt : std::optional<Rank>(e));
        if (no_end) continue;
        const Rank from = start.back().value_or(Rank{});
        retransmits += e.retransmits - from.retransmits;
        injected += e.rail0.corrupted - from.rail0.corrupted;
        detected += e.malformed + e.bad_payload - from.malformed - from.bad_payload;
        wire += (e.rail0.seen + e.rail0.duplicated - e.rail0.dropped - e.rail0.blackholed) -
                (from.rail0.seen + from.rail0.duplicated - from.rail0.dropped - from.rail0.blackholed);
        received += e.received - from.received;
      }
      const Observed o = observed(start, end);
      BOOST_TEST_CONTEXT("round " << round << ": injected " << injected << ", detected " << detected << ", wire "
                                  << wire << ", received " << received) {
        if (std::any_of(end.begin(), end.end(), [](const auto& e) { return e.has_value(); })) {
          BOOST_TEST(judge_one("retransmits = 0", o).measured == std::to_string(retransmits));
        }
        const std::uint64_t unread = wire > received ? wire - received : 0;
        const bool pass = injected > 0 && detected <= injected && injected - detected <= unread;
        const Check c = judge_one("corruption_detected", o);
        BOOST_TEST(c.pass == pass, c.measured << "; " << c.note);
        BOOST_TEST(c.measured == std::to_string(detected) + " of " + std::to_string(injected) + " detected");
        passed += pass ? 1 : 0;
      }
    }
    BOOST_TEST(passed > 0);
    BOOST_TEST(passed < 300);
  }
}

BOOST_AUTO_TEST_SUITE_END()

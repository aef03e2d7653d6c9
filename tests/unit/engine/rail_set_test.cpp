// The rails to one peer in simulated time: failover when a rail falls silent while another answers,
// failback when it answers probes again (with the probes' back-off), a peer busy computing that keeps its
// rails until engine.peer.timeout, refused sends, the operator's disable and enable, the round-trip
// estimator and the striping choice. A hand-moved clock and a simulated peer stand in for time and the
// network, so no test sleeps and each runs the same on any machine.
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <cstdint>
#include <deque>
#include <ostream>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "engine/rail_set.hpp"
#include "ftmpi/test/seed.hpp"

using namespace ftmpi;
using namespace ftmpi::engine;
using namespace std::chrono_literals;

namespace ftmpi::engine {
std::ostream& operator<<(std::ostream& out, RailState state) { return out << to_string(state); }
}  // namespace ftmpi::engine

namespace {

class FakeClock final : public RailClock {
 public:
  Clock::time_point now() const noexcept override { return now_; }
  std::chrono::system_clock::time_point wall() const noexcept override {
    return std::chrono::system_clock::time_point(now_.time_since_epoch());
  }
  void advance(std::chrono::nanoseconds d) { now_ += d; }

 private:
  Clock::time_point now_{1h};
};

struct NoRailLeft {
  std::string message;
};

// The peer and the network between: each rail answers probes after its round trip while it is alive
// (and, when `lossy`, loses a seeded share of them); the engine's traffic proves a live rail that is up
// every millisecond, as its ACKs would.
class SimulatedPeer final : public RailSet::Actions {
 public:
  struct Rail {
    bool alive = true;
    bool refuses = false;                 // the operating system refuses every send on it
    double loss = 0;                      // share of probes lost
    std::chrono::nanoseconds rtt = 200us;
    std::vector<Clock::time_point> probes;  // when each probe was sent
  };

  SimulatedPeer(std::size_t rails, RailTiming timing, std::uint64_t seed) : rails_(rails), random_(seed) {
    context_.timing = timing;
    context_.clock = &clock_;
    context_.actions = this;
    context_.totals = &totals_;
    set_ = std::make_unique<RailSet>(1, &context_);
    for (std::size_t k = 0; k < rails; ++k) {
      Route route;
      route.name = names_[k];
      route.path_index = static_cast<std::uint32_t>(k);
      route.max_payload = 8000;
      set_->add(route);
    }
  }

  base::Status send_probe(std::uint32_t peer, std::uint32_t rail, std::uint64_t probe_id) override {
    BOOST_TEST(peer == 1u);
    Rail& r = rails_[rail];
    r.probes.push_back(clock_.now());
    if (r.refuses) return base::Status(base::Errc::rail_down, "Network is unreachable");
    std::bernoulli_distribution lost(r.loss);
    if (r.alive && !lost(random_)) replies_.push_back({clock_.now() + r.rtt, rail, probe_id});
    return {};
  }
  void frames_stranded(std::uint32_t) override { ++stranded_; }
  [[noreturn]] void no_rail_left(std::uint32_t, std::string message) override { throw NoRailLeft{std::move(message)}; }
  // The launcher, when there is one: it answers a check 2 ms later with whether the peer polls.
  bool check_peer(std::uint32_t peer) override {
    BOOST_TEST(peer == 1u);
    if (!launcher) return false;
    ++checks;
    check_due_ = clock_.now() + 2ms;
    return true;
  }
  bool launcher = false;
  bool peer_polls = false;  // what the launcher finds
  int checks = 0;

  // Moves time on by `d` in steps of `step`: replies arrive, live up rails are proved, rails serviced.
  void run(std::chrono::nanoseconds d, std::chrono::nanoseconds step = 100us) {
    const Clock::time_point end = clock_.now() + d;
    while (clock_.now() < end) {
      clock_.advance(step);
      deliver_replies();
      if (check_due_ && clock_.now() >= *check_due_) {
        check_due_.reset();
        set_->peer_checked(peer_polls);
      }
      if (clock_.now() - last_traffic_ >= 1ms) {
        last_traffic_ = clock_.now();
        for (std::uint32_t k = 0; k < set_->size(); ++k) {
          if (rails_[k].alive && (*set_)[k].state == RailState::up) set_->proved(k, clock_.now());
        }
      }
      set_->service();
    }
  }
  // Runs until `done` holds, at most `limit`; the simulated time it took.
  template <class Done>
  std::chrono::nanoseconds run_until(Done done, std::chrono::nanoseconds limit, std::chrono::nanoseconds step = 100us) {
    const Clock::time_point start = clock_.now();
    while (!done() && clock_.now() - start < limit) run(step, step);
    return clock_.now() - start;
  }

  // The peer stops polling (it computes): no rail answers anything, and a frame times out on each.
  void peer_stops_answering() {
    for (std::uint32_t k = 0; k < set_->size(); ++k) {
      rails_[k].alive = false;
      set_->frame_timed_out(k);
    }
  }

  RailSet& rails() { return *set_; }
  Rail& rail(std::uint32_t k) { return rails_[k]; }
  FakeClock& clock() { return clock_; }
  const EngineCounters& totals() const { return totals_; }
  int stranded() const { return stranded_; }
  RailState state(std::uint32_t k) const { return (*set_)[k].state; }

 private:
  struct Reply {
    Clock::time_point at;
    std::uint32_t rail;
    std::uint64_t id;
  };
  void deliver_replies() {
    for (auto it = replies_.begin(); it != replies_.end();) {
      if (it->at > clock_.now()) {
        ++it;
        continue;
      }
      const Reply reply = *it;
      it = replies_.erase(it);
      set_->probe_replied(reply.rail, reply.id);
    }
  }

  inline static const char* const names_[] = {"udp eth0", "udp eth1", "udp eth2"};
  FakeClock clock_;
  EngineCounters totals_;
  RailSet::Context context_;
  std::unique_ptr<RailSet> set_;
  std::vector<Rail> rails_;
  std::deque<Reply> replies_;
  std::mt19937_64 random_;
  Clock::time_point last_traffic_{};
  int stranded_ = 0;
  std::optional<Clock::time_point> check_due_;
};

RailTiming timing() {
  RailTiming t;
  t.retransmit_min = 1ms;
  t.retransmit_max = 1s;
  t.down_after = 50ms;
  t.peer_timeout = 10s;
  t.probe_min = 10ms;
  t.probe_max = 1s;
  return t;
}

}  // namespace

BOOST_AUTO_TEST_CASE(a_rail_that_falls_silent_fails_over_after_down_after_and_fails_back_when_it_answers) {
  SimulatedPeer sim(2, timing(), ftmpi::test::seed_for("rail_set failover"));
  RailSet& rails = sim.rails();
  sim.run(5ms);
  rails[1].in_flight = 3000;  // frames the peer may not have: they must move
  sim.rail(1).alive = false;
  rails.frame_timed_out(1);
  BOOST_TEST(sim.state(1) == RailState::suspect);
  BOOST_TEST(sim.rail(1).probes.size() == 0u);  // probed at the next service, at once
  for (int i = 0; i < 20; ++i) BOOST_TEST(rails.pick() == 0u);  // no new frames on a suspect rail

  const auto took = sim.run_until([&] { return sim.state(1) == RailState::down; }, 1s);
  // Down when down_after of silence has passed with rail 0 answering: not sooner, and within a step.
  BOOST_TEST(took.count() >= std::chrono::nanoseconds(50ms).count());
  BOOST_TEST(took.count() <= std::chrono::nanoseconds(50ms + 100us).count());
  BOOST_TEST(sim.totals().rails_down == 1u);
  BOOST_TEST(sim.stranded() >= 1);
  // At least eight probes went out while it was suspect: a few lost ones could not take it down.
  BOOST_TEST(sim.rail(1).probes.size() >= 8u);
  BOOST_TEST(sim.state(0) == RailState::up);

  // Down: probed from probe_min with the interval doubling up to probe_max.
  rails[1].in_flight = 0;
  const std::size_t before = sim.rail(1).probes.size();
  sim.run(5s, 1ms);
  const std::vector<Clock::time_point>& p = sim.rail(1).probes;
  BOOST_REQUIRE(p.size() > before);
  std::vector<std::chrono::milliseconds> gaps;  // from the moment it went down to each probe after
  for (std::size_t i = before; i < p.size(); ++i) {
    gaps.push_back(std::chrono::duration_cast<std::chrono::milliseconds>(
        p[i] - (i == before ? rails[1].state_since : p[i - 1])));
  }
  const std::vector<std::chrono::milliseconds> expected{10ms,  10ms,  20ms,   40ms,   80ms,  160ms,
                                                        320ms, 640ms, 1000ms, 1000ms, 1000ms};
  BOOST_REQUIRE(gaps.size() >= expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i) BOOST_TEST(gaps[i].count() == expected[i].count());
  BOOST_TEST(sim.state(1) == RailState::down);

  // It answers again: up at its next probe's reply, counted as a failback, and striped over again.
  sim.rail(1).alive = true;
  const auto back = sim.run_until([&] { return sim.state(1) == RailState::up; }, 2s, 1ms);
  BOOST_TEST(back.count() <= std::chrono::nanoseconds(1s + 2ms).count());
  BOOST_TEST(sim.totals().rails_up == 1u);
  BOOST_TEST(rails[1].srtt.count() == std::chrono::nanoseconds(1ms).count());  // its reply's round trip, in steps
  std::vector<int> picks(2);
  for (int i = 0; i < 10; ++i) ++picks[rails.pick()];
  BOOST_TEST(picks[0] == 5);
  BOOST_TEST(picks[1] == 5);
  // The changes an operator reads, in order, with their reasons.
  const auto& changes = rails[1].changes;
  BOOST_REQUIRE(changes.size() == 3u);
  BOOST_TEST((changes[0].state == RailState::suspect && changes[0].reason == "a frame timed out"));
  BOOST_TEST((changes[1].state == RailState::down && changes[1].reason.starts_with("no answer for 50 ms")));
  BOOST_TEST((changes[2].state == RailState::up && changes[2].reason == "a probe was answered"));
}

BOOST_AUTO_TEST_CASE(a_suspect_rail_that_answers_a_probe_is_up_again_without_a_failover) {
  SimulatedPeer sim(2, timing(), ftmpi::test::seed_for("rail_set suspect"));
  sim.rails().frame_timed_out(1);  // one lost frame; the rail itself works
  sim.run(2ms);
  BOOST_TEST(sim.state(1) == RailState::up);
  BOOST_TEST(sim.totals().rails_down == 0u);
  BOOST_TEST(sim.totals().rails_up == 0u);
  BOOST_TEST(sim.rails()[1].timeouts == 0u);
}

BOOST_AUTO_TEST_CASE(a_rail_losing_a_share_of_its_probes_is_not_taken_down) {
  const std::uint64_t seed = ftmpi::test::seed_for("rail_set lossy probes");
  SimulatedPeer sim(2, timing(), seed);
  sim.rail(1).loss = 0.3;
  // A frame times out on it now and then; each time it must come back from suspect, never go down.
  for (int round = 0; round < 200; ++round) {
    sim.rails().frame_timed_out(1);
    sim.run(60ms);
    BOOST_TEST_REQUIRE(sim.state(1) == RailState::up, "round " << round << ", seed " << seed);
  }
  BOOST_TEST(sim.totals().rails_down == 0u);
}

// Without a launcher to ask (a singleton, the engine tests), silence alone decides.
BOOST_AUTO_TEST_CASE(without_a_launcher_a_silent_peer_keeps_its_rails_until_the_peer_timeout_then_is_lost) {
  SimulatedPeer sim(2, timing(), ftmpi::test::seed_for("rail_set busy peer"));
  sim.peer_stops_answering();  // neither rail may go down for that...
  sim.run(9s, 1ms);
  BOOST_TEST(sim.state(0) == RailState::suspect);
  BOOST_TEST(sim.state(1) == RailState::suspect);
  BOOST_TEST(sim.totals().rails_down == 0u);
  // ...until engine.peer.timeout of silence on every rail: then the job ends, naming each rail.
  std::string message;
  try {
    sim.run(2s, 1ms);
  } catch (const NoRailLeft& e) {
    message = e.message;
  }
  BOOST_TEST(message.starts_with("no rail left to rank 1 (no answer for 10000 ms)"), message);
  BOOST_TEST(message.find("udp eth0: down for 0 ms") != std::string::npos, message);
  BOOST_TEST(message.find("udp eth1: down for 0 ms") != std::string::npos, message);
}

// With a launcher: a peer silent on every rail for engine.peer.timeout that does not answer the launcher's
// ping either is computing: it keeps its rails, however long it computes, and is asked again every
// timeout; when it polls again its rails come back.
BOOST_AUTO_TEST_CASE(with_a_launcher_a_silent_peer_that_computes_is_waited_for_however_long) {
  SimulatedPeer sim(2, timing(), ftmpi::test::seed_for("rail_set computing peer"));
  sim.launcher = true;
  sim.peer_polls = false;
  sim.peer_stops_answering();
  sim.run(95s, 1ms);  // nine and a half timeouts
  BOOST_TEST(sim.totals().rails_down == 0u);
  BOOST_TEST(sim.checks >= 8);
  BOOST_TEST(sim.checks <= 10);
  sim.rail(0).alive = sim.rail(1).alive = true;
  sim.run(100ms);
  BOOST_TEST(sim.state(0) == RailState::up);
  BOOST_TEST(sim.state(1) == RailState::up);
  BOOST_TEST(sim.totals().longest_answered_silence_us >= 95'000'000u);
}

// With a launcher: a silent peer that answers the launcher's ping polls, so the network between us is
// what is dead: its rails fail (it is lost) once the timeout and a short grace have passed.
BOOST_AUTO_TEST_CASE(with_a_launcher_a_silent_peer_that_polls_is_lost_after_the_timeout) {
  SimulatedPeer sim(2, timing(), ftmpi::test::seed_for("rail_set polling peer"));
  sim.launcher = true;
  sim.peer_polls = true;
  sim.peer_stops_answering();
  std::string message;
  Clock::time_point lost_at;
  const Clock::time_point start = sim.clock().now();
  try {
    sim.run(20s, 1ms);
  } catch (const NoRailLeft& e) {
    message = e.message;
    lost_at = sim.clock().now();
  }
  BOOST_TEST(sim.checks == 1);
  BOOST_TEST(message.find("while it polls") != std::string::npos, message);
  // The timeout, the launcher's 2 ms, and the grace of 4 x down_after.
  BOOST_TEST((lost_at - start >= 10s + 200ms));
  BOOST_TEST((lost_at - start <= 10s + 250ms));
}

BOOST_AUTO_TEST_CASE(a_peer_that_polls_again_before_the_timeout_loses_no_rail) {
  SimulatedPeer sim(2, timing(), ftmpi::test::seed_for("rail_set resumed peer"));
  sim.peer_stops_answering();
  sim.run(5s, 1ms);
  sim.rail(0).alive = sim.rail(1).alive = true;  // it answers again: the backlog of probes first
  sim.run(100ms);
  BOOST_TEST(sim.state(0) == RailState::up);
  BOOST_TEST(sim.state(1) == RailState::up);
  BOOST_TEST(sim.totals().rails_down == 0u);
}

BOOST_AUTO_TEST_CASE(one_refused_send_makes_a_rail_suspect_three_in_a_row_take_it_down_at_once) {
  SimulatedPeer sim(2, timing(), ftmpi::test::seed_for("rail_set refusals"));
  RailSet& rails = sim.rails();
  // A firewall rule refusing one send: suspect, probed at once; the probe answers, so it is up again.
  rails.send_refused(1, "Operation not permitted");
  BOOST_TEST(sim.state(1) == RailState::suspect);
  BOOST_TEST(sim.rail(1).probes.size() == 1u);
  sim.run(1ms);
  BOOST_TEST(sim.state(1) == RailState::up);
  BOOST_TEST(rails[1].counters.refused_sends == 1u);

  // A link that is down refuses the probes as well: down within the same call, frames stranded.
  sim.rail(1).refuses = true;
  rails[1].in_flight = 500;
  const int stranded = sim.stranded();
  rails.send_refused(1, "Network is unreachable");
  BOOST_TEST(sim.state(1) == RailState::down);
  BOOST_TEST(sim.rail(1).probes.size() == 3u);  // the first probe, then two more refused
  BOOST_TEST(rails[1].counters.refused_sends == 4u);
  BOOST_TEST(sim.stranded() == stranded + 1);
  BOOST_TEST(sim.totals().rails_down == 1u);
  // A refusal on a rail already down changes nothing.
  rails.send_refused(1, "Network is unreachable");
  BOOST_TEST(rails[1].counters.refused_sends == 4u);
}

// An answer that arrived before a refusal or a timeout (an ACK whose bookkeeping waits for the next
// progress round) proves the rail worked then: it moves last_progress, but the refusal and the timeout
// after it still count towards taking the rail down. A newer answer clears them.
BOOST_AUTO_TEST_CASE(an_answer_older_than_a_refusal_or_a_timeout_does_not_clear_it) {
  SimulatedPeer sim(2, timing(), ftmpi::test::seed_for("rail_set older answers"));
  RailSet& rails = sim.rails();
  const Clock::time_point answered = sim.clock().now();
  sim.clock().advance(100us);
  rails.send_refused(1, "Operation not permitted");
  rails.frame_timed_out(1);
  BOOST_TEST(rails[1].refused_sends == 1u);
  BOOST_TEST(rails[1].timeouts == 1u);
  rails.proved(1, answered);
  BOOST_TEST(rails[1].refused_sends == 1u);
  BOOST_TEST(rails[1].timeouts == 1u);
  BOOST_TEST((rails[1].last_progress >= answered));
  sim.clock().advance(100us);
  rails.proved(1, sim.clock().now());
  BOOST_TEST(rails[1].refused_sends == 0u);
  BOOST_TEST(rails[1].timeouts == 0u);
}

BOOST_AUTO_TEST_CASE(a_disabled_rail_carries_nothing_and_is_not_probed_until_enabled) {
  SimulatedPeer sim(2, timing(), ftmpi::test::seed_for("rail_set operator"));
  RailSet& rails = sim.rails();
  rails[1].in_flight = 1200;
  rails.disable(1, "disabled by the operator");
  BOOST_TEST(sim.state(1) == RailState::disabled);
  BOOST_TEST(sim.stranded() == 1);  // its frames move at once, as at a failure
  BOOST_TEST(rails.last_in_service(0));  // the engine refuses to disable rail 0 now
  BOOST_TEST(!rails.last_in_service(1));
  rails[1].in_flight = 0;
  const std::size_t probes = sim.rail(1).probes.size();
  sim.run(10s, 1ms);
  BOOST_TEST(sim.rail(1).probes.size() == probes);  // never probed
  for (int i = 0; i < 10; ++i) BOOST_TEST(rails.pick() == 0u);
  // A stray reply cannot bring it back.
  rails.probe_replied(1, rails.next_probe_id(1));
  BOOST_TEST(sim.state(1) == RailState::disabled);

  rails.enable(1, "enabled by the operator");
  BOOST_TEST(sim.state(1) == RailState::down);
  sim.run(1ms);  // probed at once, answered
  BOOST_TEST(sim.state(1) == RailState::up);
  BOOST_TEST(sim.totals().rails_down == 0u);  // the operator's doing: no failure, no failback
  BOOST_TEST(sim.totals().rails_up == 0u);
}

BOOST_AUTO_TEST_CASE(only_a_reply_to_the_rails_own_latest_probes_counts) {
  SimulatedPeer sim(2, timing(), ftmpi::test::seed_for("rail_set probe ids"));
  RailSet& rails = sim.rails();
  sim.rail(1).alive = false;
  rails.failed(1, "test");
  BOOST_TEST(sim.state(1) == RailState::down);
  const std::uint64_t rail0_probe = rails.next_probe_id(0);
  rails.probe_replied(1, rail0_probe);  // rail 0's probe, arriving on rail 1
  BOOST_TEST(sim.state(1) == RailState::down);
  const std::uint64_t sent = rails.next_probe_id(1);
  rails.probe_replied(1, sent + 1);  // never sent
  BOOST_TEST(sim.state(1) == RailState::down);
  rails.probe_replied(1, sent);
  BOOST_TEST(sim.state(1) == RailState::up);
  rails.failed(1, "test again");
  rails.probe_replied(1, sent);  // answered already
  BOOST_TEST(sim.state(1) == RailState::down);
}

BOOST_AUTO_TEST_CASE(the_retransmission_timeout_follows_rfc_6298_within_its_bounds) {
  SimulatedPeer sim(1, timing(), ftmpi::test::seed_for("rail_set rtt"));
  RailSet& rails = sim.rails();
  BOOST_TEST(rails[0].rto.count() == std::chrono::nanoseconds(1ms).count());  // no sample: the minimum
  rails.sample_rtt(0, 2ms);  // first sample: srtt = s, rttvar = s/2, rto = s + 4 s/2
  BOOST_TEST(rails[0].srtt.count() == std::chrono::nanoseconds(2ms).count());
  BOOST_TEST(rails[0].rto.count() == std::chrono::nanoseconds(6ms).count());
  rails.sample_rtt(0, 10ms);  // error 8: rttvar = (3*1 + 8)/4, srtt = (7*2 + 10)/8
  BOOST_TEST(rails[0].srtt.count() == std::chrono::nanoseconds(3ms).count());
  BOOST_TEST(rails[0].rttvar.count() == std::chrono::nanoseconds(2750us).count());
  BOOST_TEST(rails[0].rto.count() == std::chrono::nanoseconds(14ms).count());
  for (int i = 0; i < 100; ++i) rails.sample_rtt(0, 10us);
  BOOST_TEST(rails[0].rto.count() == std::chrono::nanoseconds(1ms).count());  // floored
  rails.sample_rtt(0, 5s);
  BOOST_TEST(rails[0].rto.count() == std::chrono::nanoseconds(1s).count());  // capped
}

BOOST_AUTO_TEST_CASE(frames_go_to_the_up_rail_with_the_fewest_bytes_in_flight_ties_in_turn) {
  SimulatedPeer sim(3, timing(), ftmpi::test::seed_for("rail_set pick"));
  RailSet& rails = sim.rails();
  std::vector<int> picks(3);
  for (int i = 0; i < 30; ++i) ++picks[rails.pick()];
  BOOST_TEST((picks == std::vector<int>{10, 10, 10}));
  rails[0].in_flight = 9000;
  rails[1].in_flight = 100;
  rails[2].in_flight = 5000;
  BOOST_TEST(rails.pick() == 1u);
  rails.frame_timed_out(1);  // suspect: skipped however little it carries
  BOOST_TEST(rails.pick() == 2u);
  rails.frame_timed_out(0);
  rails.frame_timed_out(2);
  rails.frame_timed_out(2);
  // Nothing is up: the suspect rail with the fewest timeouts.
  BOOST_TEST(rails[0].timeouts == 1u);
  BOOST_TEST(rails[1].timeouts == 1u);
  BOOST_TEST(rails[2].timeouts == 2u);
  const std::uint32_t least = rails.pick();
  BOOST_TEST((least == 0u || least == 1u));
}

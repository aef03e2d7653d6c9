// A drill's verdict (verdict.hpp): each expectation measured from the ranks' statistics at the drill's
// start and end, the flight recorders' events, the steps, and what the program printed.
#include "ftmpi/drill/verdict.hpp"

#include <algorithm>
#include <cstdio>
#include <map>
#include <tuple>

namespace ftmpi::drill {
namespace {

using base::JsonValue;

std::uint64_t total(const JsonValue& stats, std::string_view key) { return stats["totals"][key].as_u64(); }

// A counter of every rail's fault layer ("faults" groups of the paths).
std::uint64_t fault_sum(const JsonValue& stats, std::string_view key) {
  std::uint64_t sum = 0;
  for (const JsonValue& path : stats["paths"].items()) {
    for (const JsonValue& group : path["groups"].items()) {
      if (group["kind"].as_string() == "faults") sum += group["counters"][key].as_u64();
    }
  }
  return sum;
}

// A quantity summed over the ranks, counted from the drill's start: end minus start for each rank (a rank
// with no end figures counts as having moved nothing).
template <class F>
std::uint64_t delta(const Observed& o, F&& of) {
  std::uint64_t sum = 0;
  for (std::size_t r = 0; r < o.end.size(); ++r) {
    if (o.end[r].is_null()) continue;
    const std::uint64_t end = of(o.end[r]);
    const std::uint64_t start = r < o.start.size() && !o.start[r].is_null() ? of(o.start[r]) : 0;
    sum += end >= start ? end - start : 0;
  }
  return sum;
}

std::string seconds(double s) {
  char buf[32];
  if (s < 1) {
    std::snprintf(buf, sizeof buf, "%.1f ms", s * 1e3);
  } else {
    std::snprintf(buf, sizeof buf, "%.2f s", s);
  }
  return buf;
}

std::string limit_text(const DrillExpectation& e, bool duration) {
  char buf[48];
  if (duration) return std::string(to_string(e.op)) + " " + seconds(e.value);
  std::snprintf(buf, sizeof buf, "%s %.0f", std::string(to_string(e.op)).c_str(), e.value);
  return buf;
}

Check corruption_check(const Observed& o) {
  Check c;
  const std::uint64_t injected = delta(o, [](const JsonValue& s) { return fault_sum(s, "corrupted"); });
  const std::uint64_t detected =
      delta(o, [](const JsonValue& s) { return total(s, "dropped_malformed") + total(s, "dropped_bad_payload"); });
  // Frames the fault layers put on the wire that no engine read (lost in a kernel, or unread at exit): a
  // corruption among them cannot be detected (tests/fault/check_counters.sh reasons the same way).
  const std::uint64_t wire = delta(o, [](const JsonValue& s) {
    return fault_sum(s, "frames_seen") + fault_sum(s, "duplicated") - fault_sum(s, "dropped") - fault_sum(s, "blackholed");
  });
  const std::uint64_t received = delta(o, [](const JsonValue& s) { return total(s, "frames_received"); });
  const std::uint64_t unread = wire > received ? wire - received : 0;
  c.measured = std::to_string(detected) + " of " + std::to_string(injected) + " detected";
  c.limit = "every one that reached a receiver";
  c.note = std::to_string(unread) + " frames put on the wire were never read";
  if (injected == 0) {
    c.note = "nothing was corrupted: the expectation was not exercised";
  } else if (detected > injected) {
    c.note = "more frames refused as corrupt than were corrupted: a good frame was refused";
  } else {
    c.pass = injected - detected <= unread;
  }
  return c;
}

// Each time a rail to a peer left service (down or disabled) at a rank during the drill, and when it came
// back up; measured from the step that gave it back.
Check failback_check(const DrillExpectation& e, const Timeline& t) {
  Check c;
  c.limit = limit_text(e, true);
  std::vector<const Event*> states;
  for (const Event& ev : t.events) {
    if (ev.kind == "rail_state" && ev.rail && ev.at_us >= t.header.started_us) states.push_back(&ev);
  }
  std::stable_sort(states.begin(), states.end(), [](const Event* a, const Event* b) {
    return std::tie(a->rank, a->at_us, a->seq) < std::tie(b->rank, b->at_us, b->seq);
  });
  struct Out {
    std::int64_t since = 0;
  };
  std::map<std::tuple<std::uint32_t, std::uint32_t, std::uint32_t>, Out> out;  // (rank, peer, rail)
  double worst = 0;
  std::string worst_what;
  std::size_t episodes = 0;
  for (const Event* ev : states) {
    const auto key = std::make_tuple(ev->rank, ev->peer, *ev->rail);
    const bool leaves = ev->state == "down" || ev->state == "disabled";
    auto it = out.find(key);
    if (leaves && it == out.end()) {
      out[key] = Out{ev->at_us};
    } else if (ev->state == "up" && it != out.end()) {
      // The last step that could give the rail back before it came back, and after it left.
      std::int64_t given_back = it->second.since;
      for (const Step& s : t.steps) {
        if (!s.ok) continue;
        const bool this_rail = !s.rail || *s.rail == *ev->rail;
        std::int64_t at = -1;
        if (s.action == "inject" && this_rail && s.until_us > 0) at = s.until_us;
        if ((s.action == "clear" && this_rail) || (s.action == "enable" && this_rail) || s.action == "run") at = s.at_us;
        if (s.action == "disable" && this_rail && s.until_us > 0) at = s.until_us;  // its automatic enable
        if (at >= it->second.since && at <= ev->at_us) given_back = std::max(given_back, at);
      }
      const double took = static_cast<double>(ev->at_us - given_back) / 1e6;
      ++episodes;
      if (took >= worst) {
        worst = took;
        worst_what = "rail " + std::to_string(*ev->rail) + " to rank " + std::to_string(ev->peer) + " at rank " +
                     std::to_string(ev->rank);
      }
      out.erase(it);
    }
  }
  if (!out.empty()) {
    const auto& [key, o] = *out.begin();
    c.measured = "never";
    c.note = std::to_string(out.size()) + " rail(s) still out of service at the end, e.g. rail " +
             std::to_string(std::get<2>(key)) + " to rank " + std::to_string(std::get<1>(key)) + " at rank " +
             std::to_string(std::get<0>(key));
    return c;
  }
  if (episodes == 0) {
    c.measured = "-";
    c.note = "no rail left service during the drill: the expectation was not exercised";
    return c;
  }
  c.measured = seconds(worst);
  c.pass = holds(e.op, worst, e.value);
  c.note = "slowest of " + std::to_string(episodes) + ": " + worst_what + ", from the step that gave it back";
  return c;
}

}  // namespace

bool is_known_counter(const JsonValue& stats, std::string_view name) {
  if (name.starts_with("injected_")) {
    for (const JsonValue& path : stats["paths"].items()) {
      for (const JsonValue& group : path["groups"].items()) {
        if (group["kind"].as_string() == "faults" && group["counters"].find(name.substr(9)) != nullptr) return true;
      }
    }
    return false;
  }
  return stats["totals"].find(name) != nullptr;
}

std::vector<Check> judge(const Drill& drill, const Timeline& timeline, const Observed& o) {
  std::vector<Check> checks;
  for (const DrillExpectation& e : drill.expectations) {
    Check c;
    if (e.name == "exit") {
      c.limit = limit_text(e, false);
      if (!o.launched) {
        c.measured = "-";
        c.note = "the drill attached to a running job: it has no exit status";
      } else if (!o.exit_status) {
        c.measured = "-";
        c.note = "the program did not exit";
      } else {
        c.measured = std::to_string(*o.exit_status);
        c.pass = holds(e.op, *o.exit_status, e.value);
      }
    } else if (e.name == "corruption_detected") {
      c = corruption_check(o);
    } else if (e.name == "corrupt_bytes") {
      c.limit = limit_text(e, false);
      if (!o.corrupt_bytes) {
        c.measured = "-";
        c.note = "the program did not say: it must print 'ftinject: corrupt_bytes=N'";
      } else {
        c.measured = std::to_string(*o.corrupt_bytes);
        c.pass = holds(e.op, static_cast<double>(*o.corrupt_bytes), e.value);
        c.note = "counted by the program";
      }
    } else if (e.name == "stall") {
      c.limit = limit_text(e, true);
      const bool by_program = o.program_stall_us.has_value();
      const double s = static_cast<double>(by_program ? *o.program_stall_us : o.polled_stall_us) / 1e6;
      c.measured = seconds(s);
      c.pass = holds(e.op, s, e.value);
      c.note = by_program ? "measured by the program"
                          : "from the drill's polls of the job's traffic, to within " +
                                seconds(static_cast<double>(o.poll_interval_us) / 1e6);
    } else if (e.name == "failback") {
      c = failback_check(e, timeline);
    } else {
      c.limit = limit_text(e, false);
      const bool injected = e.name.starts_with("injected_");
      const std::string key = injected ? e.name.substr(9) : e.name;
      const bool known = std::any_of(o.end.begin(), o.end.end(),
                                     [&](const JsonValue& s) { return !s.is_null() && is_known_counter(s, e.name); });
      if (!known) {
        c.measured = "-";
        c.note = "no counter '" + e.name + "'";
      } else {
        const std::uint64_t v = delta(o, [&](const JsonValue& s) { return injected ? fault_sum(s, key) : total(s, key); });
        c.measured = std::to_string(v);
        c.pass = holds(e.op, static_cast<double>(v), e.value);
        c.note = "summed over the ranks, since the drill began";
      }
    }
    c.name = e.text;
    checks.push_back(std::move(c));
  }
  return checks;
}

}  // namespace ftmpi::drill

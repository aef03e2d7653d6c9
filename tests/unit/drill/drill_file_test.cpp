// The drill language (drill_file.hpp): steps, WHEN, options, expectations, comments, errors, holds().
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "ftmpi/drill/drill_file.hpp"
#include "ftmpi/path/fault.hpp"
#include "ftmpi/test/seed.hpp"

using namespace ftmpi::drill;
using namespace std::chrono_literals;

namespace {

Drill parse_ok(std::string_view text) {
  auto drill = parse_drill(text, "drill.txt");
  BOOST_TEST_REQUIRE(drill.is_ok(), "'" << text << "': " << drill.status().message());
  return std::move(*drill);
}

DrillStep step_of(std::string_view text) {
  Drill drill = parse_ok(text);
  BOOST_TEST_REQUIRE(drill.steps.size() == 1u);
  return drill.steps[0];
}

DrillExpectation expectation_of(std::string_view text) {
  Drill drill = parse_ok(text);
  BOOST_TEST_REQUIRE(drill.expectations.size() == 1u);
  return drill.expectations[0];
}

std::string error_of(std::string_view text, std::string_view origin = "drill.txt") {
  auto drill = parse_drill(text, origin);
  BOOST_TEST_REQUIRE(!drill.is_ok(), "'" << text << "' was accepted");
  return drill.status().message();
}

// The error of a one-line drill: "drill.txt line 1: <what>", and <what> contains `part`.
void expect_error(std::string_view text, std::string_view part) {
  const std::string message = error_of(text);
  BOOST_TEST(message.starts_with("drill.txt line 1: "), message);
  BOOST_TEST(message.find(part) != std::string::npos, "'" << text << "': " << message);
}

ftmpi::path::FaultSpec spec_of(std::string_view text) {
  auto spec = ftmpi::path::parse_fault_spec(text);
  BOOST_TEST_REQUIRE(spec.is_ok(), spec.status().message());
  return *spec;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(drill_file)

BOOST_AUTO_TEST_CASE(inject_with_spec_and_options) {
  const DrillStep s = step_of("at 2s inject drop=0.1,corrupt=0.01 rail=1 ranks=0-3 for=3s");
  BOOST_TEST(s.line == 1u);
  BOOST_TEST((s.action == Action::inject));
  BOOST_TEST(s.when.time.count() == std::chrono::nanoseconds(2s).count());
  BOOST_TEST(!s.when.bytes.has_value());
  BOOST_TEST(s.rail == "1");
  BOOST_TEST(s.ranks == "0-3");
  BOOST_TEST_REQUIRE(s.lasts.has_value());
  BOOST_TEST(s.lasts->count() == std::chrono::nanoseconds(3s).count());
  ftmpi::path::FaultSpec want = spec_of("drop=0.1,corrupt=0.01");
  want.lasts = 3s;  // for= of the step is part of the SPEC; the rail is not
  BOOST_TEST((spec_of(s.spec) == want), s.spec);
  BOOST_TEST(s.text == "inject drop=0.1,corrupt=0.01 rail=1 ranks=0-3 for=3s");

  const DrillStep forever = step_of("at 0s inject blackhole");
  BOOST_TEST(!forever.lasts.has_value());
  BOOST_TEST(forever.rail.empty());
  BOOST_TEST(forever.ranks.empty());
  BOOST_TEST((spec_of(forever.spec) == spec_of("blackhole")));
}

BOOST_AUTO_TEST_CASE(inject_for_and_rail_inside_the_spec) {
  const DrillStep s = step_of("at 1s inject blackhole,for=500ms,rail=veth1");
  BOOST_TEST_REQUIRE(s.lasts.has_value());
  BOOST_TEST(s.lasts->count() == std::chrono::nanoseconds(500ms).count());
  BOOST_TEST(s.rail == "veth1");
  const ftmpi::path::FaultSpec spec = spec_of(s.spec);
  BOOST_TEST(spec.rail.empty(), s.spec);
  BOOST_TEST((spec.lasts == std::optional<std::chrono::nanoseconds>(500ms)));

  BOOST_TEST(step_of("at 1s inject drop=0.5,rail=1 rail=1").rail == "1");  // agreeing
  expect_error("at 1s inject drop=0.5,rail=1 rail=2", "the SPEC names rail '1' and rail= '2'");
  expect_error("at 1s inject drop=0.1,for=1s for=2s", "for given in the SPEC and as for=");
  expect_error("at 1s inject drop=0.1 for=1s for=2s", "for= given twice");
  expect_error("at 1s inject drop=0.1 rail=1 rail=1", "rail= given twice");
  expect_error("at 1s inject drop=0.1,for=64MB", "not a volume");
  expect_error("at 1s inject drop=0.1 for=64MB", "for: ");
  expect_error("at 1s inject drop=0.1 for=0s", "for: must be above 0");
  expect_error("at 1s inject drop=0.1 rail=", "rail= needs a value");
  expect_error("at 1s inject drop=0.1 seed=3", "inject: 'seed=3' is not one of rail=, ranks=, for=");
  expect_error("at 1s inject", "inject needs a fault SPEC");
  expect_error("at 1s inject drop=2", "drop");
}

BOOST_AUTO_TEST_CASE(clear_disable_enable) {
  const DrillStep all = step_of("at 5s clear");
  BOOST_TEST((all.action == Action::clear));
  BOOST_TEST(all.rail.empty());
  BOOST_TEST(all.ranks.empty());
  const DrillStep some = step_of("at 5s clear rail=1 ranks=2");
  BOOST_TEST(some.rail == "1");
  BOOST_TEST(some.ranks == "2");
  expect_error("at 5s clear for=1s", "clear: 'for=1s' is not one of rail=, ranks=");

  const DrillStep off = step_of("at 1s disable rail=1 ranks=0 for=2s");
  BOOST_TEST((off.action == Action::disable));
  BOOST_TEST(off.rail == "1");
  BOOST_TEST(off.ranks == "0");
  BOOST_TEST_REQUIRE(off.lasts.has_value());
  BOOST_TEST(off.lasts->count() == std::chrono::nanoseconds(2s).count());
  BOOST_TEST(!step_of("at 1s disable rail=0").lasts.has_value());
  expect_error("at 1s disable", "disable needs rail=R");
  expect_error("at 1s disable ranks=1", "disable needs rail=R");
  expect_error("at 1s disable rail", "disable: 'rail' is not one of rail=, ranks=, for=");

  const DrillStep on = step_of("at 3s enable rail=veth1");
  BOOST_TEST((on.action == Action::enable));
  BOOST_TEST(on.rail == "veth1");
  expect_error("at 3s enable", "enable needs rail=R");
  expect_error("at 3s enable rail=1 for=1s", "enable: 'for=1s' is not one of rail=, ranks=");
}

BOOST_AUTO_TEST_CASE(run_keeps_its_command_whole) {
  const DrillStep s = step_of("at 3s  run   ip netns exec ftA ip link set vethA1 down  # not a comment  ");
  BOOST_TEST((s.action == Action::run));
  BOOST_TEST(s.command == "ip netns exec ftA ip link set vethA1 down  # not a comment");
  BOOST_TEST(s.text == "run   ip netns exec ftA ip link set vethA1 down  # not a comment");
  expect_error("at 3s run", "run needs a command");
  // A '#' elsewhere is a comment: this is "at 3s", no action.
  expect_error("at 3s # run echo", "'at' needs a time and an action");
}

BOOST_AUTO_TEST_CASE(when_is_a_time_or_a_volume) {
  const DrillStep time = step_of("at 2500ms clear");
  BOOST_TEST(time.when.time.count() == std::chrono::nanoseconds(2500ms).count());
  BOOST_TEST(!time.when.bytes.has_value());
  const DrillStep volume = step_of("at 64MB clear");
  BOOST_TEST_REQUIRE(volume.when.bytes.has_value());
  BOOST_TEST(*volume.when.bytes == 64ull << 20);
  BOOST_TEST(volume.when.time.count() == 0);
  BOOST_TEST(*step_of("at 512KiB clear").when.bytes == 512ull << 10);
  BOOST_TEST(*step_of("at 100b clear").when.bytes == 100u);
  BOOST_TEST(step_of("at 0s clear").when.time.count() == 0);
  expect_error("at soon clear", "at soon: ");
  expect_error("at soon clear", "(or a volume of traffic such as 64MB)");
  expect_error("at 3XB clear", "at 3XB: ");
  expect_error("at 2s", "'at' needs a time and an action");
}

BOOST_AUTO_TEST_CASE(comments_and_blank_lines) {
  const Drill d = parse_ok(
      "# a drill\n"
      "\n"
      "   \t \n"
      "at 1s inject drop=0.1   # lose some\n"
      "  # indented comment\n"
      "at 2s clear\r\n"
      "expect exit 0 # nothing else\n"
      "expect retransmits > 0");  // no final newline
  BOOST_TEST_REQUIRE(d.steps.size() == 2u);
  BOOST_TEST_REQUIRE(d.expectations.size() == 2u);
  BOOST_TEST(d.steps[0].line == 4u);
  BOOST_TEST(d.steps[0].text == "inject drop=0.1");
  BOOST_TEST(d.steps[1].line == 6u);
  BOOST_TEST((d.steps[1].action == Action::clear));
  BOOST_TEST(d.expectations[0].line == 7u);
  BOOST_TEST(d.expectations[0].text == "exit 0");
  BOOST_TEST(d.expectations[1].line == 8u);
  BOOST_TEST(d.expectations[1].name == "retransmits");
}

BOOST_AUTO_TEST_CASE(every_expectation_form) {
  struct Case {
    std::string_view text;
    std::string_view name;
    Compare op;
    double value;
  };
  const Case cases[] = {
      {"exit", "exit", Compare::eq, 0},
      {"exit 3", "exit", Compare::eq, 3},
      {"exit = 3", "exit", Compare::eq, 3},
      {"exit == 3", "exit", Compare::eq, 3},
      {"corruption_detected", "corruption_detected", Compare::eq, 0},
      {"corrupt_bytes", "corrupt_bytes", Compare::eq, 0},
      {"corrupt_bytes 12", "corrupt_bytes", Compare::eq, 12},
      {"corrupt_bytes <= 4", "corrupt_bytes", Compare::le, 4},
      {"stall < 2s", "stall", Compare::lt, 2.0},
      {"failback <= 500ms", "failback", Compare::le, 0.5},
      {"retransmits = 0", "retransmits", Compare::eq, 0},
      {"injected_corrupted > 0", "injected_corrupted", Compare::gt, 0},
      {"rails_down >= 2", "rails_down", Compare::ge, 2},
      {"peers_lost < 1", "peers_lost", Compare::lt, 1},
  };
  for (const Case& c : cases) {
    BOOST_TEST_CONTEXT(c.text) {
      const DrillExpectation e = expectation_of("expect  " + std::string(c.text) + "  ");
      BOOST_TEST(e.name == c.name);
      BOOST_TEST((e.op == c.op), to_string(e.op));
      BOOST_TEST(e.value == c.value);
      BOOST_TEST(e.text == c.text);
      BOOST_TEST(e.line == 1u);
    }
  }
}

BOOST_AUTO_TEST_CASE(expectation_errors) {
  expect_error("expect corruption_detected = 1", "corruption_detected takes no value");
  expect_error("expect retransmits ~ 3", "'~' is not one of =, <, <=, >, >=");
  expect_error("expect exit 3 4", "'3' is not one of =, <, <=, >, >=");
  expect_error("expect retransmits = many", "retransmits: 'many' is not a whole number");
  expect_error("expect retransmits = 3.5", "retransmits: '3.5' is not a whole number");
  expect_error("expect exit = 0s", "exit: '0s' is not a whole number");
  expect_error("expect retransmits", "expect retransmits needs an operator and a value: expect retransmits = 0");
  expect_error("expect retransmits =", "needs an operator and a value");
  expect_error("expect stall", "expect stall needs an operator and a value: expect stall < 2s");
  expect_error("expect failback <", "needs an operator and a value");
  expect_error("expect stall < soon", "stall: ");
  expect_error("expect", "'expect' needs what");
  expect_error("expect Exit", "'Exit' is not an expectation");
  expect_error("expect rails-down = 1", "is not an expectation");
}

BOOST_AUTO_TEST_CASE(errors_name_origin_and_line) {
  const std::string text = "at 1s clear\n# fine\nat 2s explode\nexpect exit\n";
  BOOST_TEST(error_of(text) ==
             "drill.txt line 3: unknown action 'explode' (known: inject, clear, disable, enable, run)");
  BOOST_TEST(error_of(text, "plans/veth.drill").starts_with("plans/veth.drill line 3: "));
  BOOST_TEST(error_of("\n\nwhen 2s inject drop=0.1") == "drill.txt line 3: 'when' is not a statement (at, expect)");
  BOOST_TEST(error_of("") == "drill.txt: no steps and no expectations");
  BOOST_TEST(error_of("# only a comment\n\n   \n") == "drill.txt: no steps and no expectations");
}

BOOST_AUTO_TEST_CASE(holds_each_operator) {
  BOOST_TEST(holds(Compare::eq, 3, 3));
  BOOST_TEST(!holds(Compare::eq, 3, 4));
  BOOST_TEST(holds(Compare::lt, 1.9, 2));
  BOOST_TEST(!holds(Compare::lt, 2, 2));
  BOOST_TEST(holds(Compare::le, 2, 2));
  BOOST_TEST(!holds(Compare::le, 2.1, 2));
  BOOST_TEST(holds(Compare::gt, 1, 0));
  BOOST_TEST(!holds(Compare::gt, 0, 0));
  BOOST_TEST(holds(Compare::ge, 0, 0));
  BOOST_TEST(!holds(Compare::ge, -1, 0));
  BOOST_TEST(to_string(Compare::le) == "<=");
  BOOST_TEST(to_string(Action::disable) == "disable");
}

// Random drills written with random spacing, comments and option order read back as written.
BOOST_AUTO_TEST_CASE(random_round_trip) {
  const std::uint64_t seed = ftmpi::test::seed_for("drill file round trip");
  BOOST_TEST_CONTEXT("seed " << seed) {
    std::mt19937_64 random(seed);
    auto pick = [&](std::initializer_list<std::string_view> pool) { return pool.begin()[random() % pool.size()]; };
    auto gap = [&] { return std::string(pick({" ", "  ", "\t", " \t "})); };
    for (int round = 0; round < 200; ++round) {
      std::string text;
      std::vector<DrillStep> want;
      std::vector<ftmpi::path::FaultSpec> want_specs;
      std::size_t line = 0;
      for (int n = 0; n < 1 + static_cast<int>(random() % 8); ++n) {
        if (random() % 4 == 0) {  // a comment or a blank line
          text += pick({"", "   ", "# note", "  # at 1s inject drop=2"});
          text += "\n";
          ++line;
        }
        DrillStep s;
        s.line = ++line;
        std::string when;
        if (random() % 2 == 0) {
          const auto ms = random() % 100000;
          when = std::to_string(ms) + "ms";
          s.when.time = std::chrono::milliseconds(ms);
        } else {
          const auto kib = random() % 4096;
          when = std::to_string(kib) + "KiB";
          s.when.bytes = kib << 10;
        }
        s.action = static_cast<Action>(random() % 5);
        std::vector<std::string> options;
        const std::string rail(pick({"", "0", "1", "veth1"}));
        const std::string ranks(pick({"", "0-3", "1,2"}));
        if (s.action == Action::disable || s.action == Action::enable) s.rail = rail.empty() ? "2" : rail;
        if (s.action == Action::clear || s.action == Action::inject) s.rail = rail;
        s.ranks = s.action == Action::run ? "" : ranks;
        if (!s.ranks.empty()) options.push_back("ranks=" + s.ranks);
        if ((s.action == Action::inject || s.action == Action::disable) && random() % 2 == 0) {
          s.lasts = std::chrono::milliseconds(1 + random() % 5000);
        }
        std::string body;
        ftmpi::path::FaultSpec spec;
        if (s.action == Action::inject) {
          std::string spec_text(pick({"drop=0.25", "blackhole", "corrupt=0.01,delay=5ms", "dup=0.5,seed=7"}));
          spec = spec_of(spec_text);
          spec.lasts = s.lasts;
          const bool rail_in_spec = !s.rail.empty() && random() % 2 == 0;
          if (rail_in_spec) spec_text += ",rail=" + s.rail;
          if (!s.rail.empty() && (!rail_in_spec || random() % 2 == 0)) options.push_back("rail=" + s.rail);
          const bool for_in_spec = s.lasts && random() % 2 == 0;
          const std::string lasts_text = s.lasts ? std::to_string(s.lasts->count() / 1000000) + "ms" : "";
          if (for_in_spec) spec_text += ",for=" + lasts_text;
          if (s.lasts && !for_in_spec) options.push_back("for=" + lasts_text);
          body = "inject" + gap() + spec_text;
        } else if (s.action == Action::run) {
          s.command = "echo " + std::to_string(random() % 1000) + " # kept";
          body = "run" + gap() + s.command;
        } else {
          if (!s.rail.empty()) options.push_back("rail=" + s.rail);
          if (s.lasts) options.push_back("for=" + std::to_string(s.lasts->count() / 1000000) + "ms");
          body = std::string(to_string(s.action));
        }
        std::shuffle(options.begin(), options.end(), random);
        for (const std::string& o : options) body += gap() + o;
        text += std::string(pick({"", " ", "\t"})) + "at" + gap() + when + gap() + body;
        text += s.action != Action::run && random() % 3 == 0 ? gap() + "# trailing\n" : std::string("\n");
        want.push_back(s);
        want_specs.push_back(spec);
      }
      text += "expect" + gap() + "stall < " + std::to_string(round + 1) + "ms\n";
      BOOST_TEST_CONTEXT("drill:\n" << text) {
        const Drill d = parse_ok(text);
        BOOST_TEST_REQUIRE(d.steps.size() == want.size());
        for (std::size_t i = 0; i < want.size(); ++i) {
          const DrillStep& got = d.steps[i];
          BOOST_TEST_CONTEXT("step " << i) {
            BOOST_TEST(got.line == want[i].line);
            BOOST_TEST((got.action == want[i].action));
            BOOST_TEST(got.when.time.count() == want[i].when.time.count());
            BOOST_TEST((got.when.bytes == want[i].when.bytes));
            BOOST_TEST(got.rail == want[i].rail);
            BOOST_TEST(got.ranks == want[i].ranks);
            BOOST_TEST((got.lasts == want[i].lasts));
            BOOST_TEST(got.command == want[i].command);
            if (got.action == Action::inject) BOOST_TEST((spec_of(got.spec) == want_specs[i]), got.spec);
          }
        }
        BOOST_TEST_REQUIRE(d.expectations.size() == 1u);
        BOOST_TEST(d.expectations[0].value == (round + 1) / 1000.0);
        BOOST_TEST(d.expectations[0].line == line + 1);
      }
    }
  }
}

// Random garbage lines: the drill fails at the first line that fails alone, with that line's number, and
// nothing crashes.
BOOST_AUTO_TEST_CASE(random_garbage_lines) {
  const std::uint64_t seed = ftmpi::test::seed_for("drill file garbage");
  BOOST_TEST_CONTEXT("seed " << seed) {
    std::mt19937_64 random(seed);
    const std::string_view words[] = {"at", "expect", "inject", "clear", "disable", "enable", "run", "2s", "64MB",
                                      "-1s", "rail=1", "rail=", "ranks=0", "for=1s", "for=", "for=8MB",
                                      "drop=0.1", "drop=2", "blackhole,for=1s", "#", "=", "<", "<=", "exit",
                                      "stall", "failback", "retransmits", "corruption_detected", "3", "1s", "x"};
    const std::string_view pick_line[] = {"at 1s clear", "expect exit", "at 64MB inject drop=0.1 for=1s", "# c", ""};
    const std::string empty = "x: no steps and no expectations";
    int later_errors = 0, good = 0;
    for (int round = 0; round < 300; ++round) {
      std::vector<std::string> lines(1 + random() % 6);
      for (std::string& l : lines) {
        if (random() % 3 == 0) {  // a good line, so that errors come after some
          l = pick_line[random() % std::size(pick_line)];
          continue;
        }
        for (std::size_t n = random() % 7; n > 0; --n) {
          if (random() % 5 == 0) {
            for (std::size_t k = 1 + random() % 6; k > 0; --k) l += static_cast<char>(1 + random() % 255);
            l.erase(std::remove(l.begin(), l.end(), '\n'), l.end());
          } else {
            l += words[random() % std::size(words)];
          }
          l += random() % 4 == 0 ? "\t" : " ";
        }
      }
      std::string text;
      std::optional<std::string> first_error;
      bool any = false;
      for (std::size_t i = 0; i < lines.size(); ++i) {
        text += lines[i] + "\n";
        auto alone = parse_drill(lines[i], "x");
        if (alone.is_ok()) {
          any = true;
        } else if (alone.status().message() != empty && !first_error) {
          const std::string prefix = "x line 1: ";
          BOOST_TEST_REQUIRE(alone.status().message().starts_with(prefix), alone.status().message());
          first_error = "drill.txt line " + std::to_string(i + 1) + ": " + alone.status().message().substr(prefix.size());
          later_errors += i > 0 ? 1 : 0;
        }
      }
      BOOST_TEST_CONTEXT("drill:\n" << text) {
        auto d = parse_drill(text, "drill.txt");
        if (first_error) {
          BOOST_TEST_REQUIRE(!d.is_ok());
          BOOST_TEST(d.status().message() == *first_error);
        } else if (any) {
          BOOST_TEST(d.is_ok(), d.status().message());
          ++good;
        } else {
          BOOST_TEST_REQUIRE(!d.is_ok());
          BOOST_TEST(d.status().message() == "drill.txt: no steps and no expectations");
        }
      }
    }
    BOOST_TEST(later_errors > 0);
    BOOST_TEST(good > 0);
  }
}

BOOST_AUTO_TEST_SUITE_END()

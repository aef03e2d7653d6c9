// The timeline (timeline.hpp): JSON lines, zstd files, flight events, text, and SVG as rsvg-convert draws it.
#include <boost/test/unit_test.hpp>

#include <stdlib.h>  // mkdtemp

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <random>
#include <sstream>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "ftmpi/base/compress.hpp"
#include "ftmpi/drill/timeline.hpp"
#include "ftmpi/test/json_check.hpp"
#include "ftmpi/test/seed.hpp"
#include "ftmpi/test/svg_render.hpp"

using namespace ftmpi::drill;

namespace {

auto fields(const TimelineHeader& h) {
  return std::tie(h.drill, h.job, h.command, h.started_us, h.ended_us, h.rails);
}
auto fields(const Step& s) { return std::tie(s.at_us, s.until_us, s.action, s.text, s.rail, s.ok, s.outcome); }
auto fields(const Sample& s) { return std::tie(s.at_us, s.rail, s.bytes); }
auto fields(const Event& e) {
  return std::tie(e.rank, e.seq, e.at_us, e.kind, e.peer, e.rail, e.state, e.reason, e.spec, e.interval_us,
                  e.bytes_sent, e.bytes_received, e.retransmits, e.timeouts, e.checksum_failures);
}
auto fields(const Check& c) { return std::tie(c.name, c.measured, c.limit, c.pass, c.note); }

template <typename T>
void require_same(const std::vector<T>& got, const std::vector<T>& want, std::string_view what) {
  BOOST_TEST_REQUIRE(got.size() == want.size(), what << ": " << got.size() << " read, " << want.size() << " written");
  for (std::size_t i = 0; i < got.size(); ++i) BOOST_TEST((fields(got[i]) == fields(want[i])), what << " " << i);
}

void require_same(const Timeline& got, const Timeline& want) {
  BOOST_TEST((fields(got.header) == fields(want.header)), "header");
  require_same(got.steps, want.steps, "step");
  require_same(got.samples, want.samples, "sample");
  require_same(got.events, want.events, "event");
  require_same(got.verdict, want.verdict, "check");
}

// A timeline with every field set to random values: extreme integers, strings with what JSON escapes.
Timeline random_timeline(std::mt19937_64& random) {
  const auto pick = [&](auto... choices) {
    const std::uint64_t pool[] = {static_cast<std::uint64_t>(choices)...};
    return pool[random() % sizeof...(choices)];
  };
  const auto u64 = [&] { return pick(0, 1, random(), random() >> 1, std::numeric_limits<std::uint64_t>::max()); };
  const auto i64 = [&]() -> std::int64_t {
    switch (random() % 5) {
      case 0: return std::numeric_limits<std::int64_t>::min();
      case 1: return std::numeric_limits<std::int64_t>::max();
      case 2: return -static_cast<std::int64_t>(random() >> 1);
      default: return static_cast<std::int64_t>(random() >> 1);
    }
  };
  const auto u32 = [&] { return static_cast<std::uint32_t>(pick(0, 1, random(), 0xffffffffU)); };
  const auto text = [&] {
    static const std::string_view pieces[] = {"a", "Z", " ", "\"", "\\", "\n", "\t", "\x01", "/", "{", "}",
                                              "\xc3\xa9", "\xe2\x86\x92", "\xf0\x9f\x94\xa5", "rail", "0"};
    std::string s;
    for (std::uint64_t n = random() % 12; n > 0; --n) s += pieces[random() % std::size(pieces)];
    return s;
  };
  const auto rail = [&]() -> std::optional<std::uint32_t> {
    if (random() % 3 == 0) return std::nullopt;
    return u32();
  };
  Timeline t;
  t.header = {text(), text(), text(), i64(), i64(), {}};
  for (std::uint64_t n = random() % 4; n > 0; --n) t.header.rails.push_back(text());
  for (std::uint64_t n = random() % 5; n > 0; --n) {
    t.steps.push_back({i64(), i64(), text(), text(), rail(), random() % 2 == 0, text()});
  }
  for (std::uint64_t n = random() % 5; n > 0; --n) t.samples.push_back({i64(), u32(), u64()});
  for (std::uint64_t n = random() % 5; n > 0; --n) {
    t.events.push_back({u32(), u64(), i64(), text(), u32(), rail(), text(), text(), text(), i64(), u64(), u64(),
                        u64(), u64(), u64()});
  }
  for (std::uint64_t n = random() % 5; n > 0; --n) {
    t.verdict.push_back({text(), text(), text(), random() % 2 == 0, text()});
  }
  return t;
}

std::string error_of(std::string_view lines) {
  const auto t = from_json_lines(lines);
  return t ? "(read)" : t.status().message();
}

// A temporary directory, removed with what it holds.
struct TempDir {
  TempDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "ftmpi-timeline-XXXXXX").string();
    BOOST_REQUIRE(mkdtemp(pattern.data()) != nullptr);
    path = pattern;
  }
  ~TempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path, ignored);
  }
  std::string file(std::string_view name) const { return (path / name).string(); }
  std::filesystem::path path;
};

std::string contents(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

constexpr std::int64_t kStart = 1700000000000000;  // a Unix time in microseconds
constexpr std::int64_t kSecond = 1000000;

Event event(std::uint32_t rank, std::uint64_t seq, std::int64_t at_us, std::string kind) {
  Event e;
  e.rank = rank;
  e.seq = seq;
  e.at_us = at_us;
  e.kind = std::move(kind);
  return e;
}

// Two rails, a fault injected on rail 1 that takes it down, traffic, a disable window, and a verdict.
Timeline small_timeline() {
  Timeline t;
  t.header = {"corrupt.drill", "job-42", "ring --iterations 100", kStart, kStart + 8 * kSecond,
              {"udp veth0", "udp veth1"}};
  t.steps = {{kStart + 500000, kStart + 3500000, "inject", "inject corrupt=0.01 rail=1 for=3s", 1U, true, ""},
             {kStart + 4 * kSecond, kStart + 6 * kSecond, "disable", "disable rail=0", 0U, true, ""},
             {kStart + 7 * kSecond, 0, "clear", "clear", std::nullopt, false, "no such job"}};
  for (std::int64_t s = 0; s <= 8; ++s) {
    t.samples.push_back({kStart + s * kSecond, 0, static_cast<std::uint64_t>(s) * 800000000});
    t.samples.push_back({kStart + s * kSecond, 1, static_cast<std::uint64_t>(s) * (s < 3 ? 400000000 : 100000000)});
  }
  Event inject = event(0, 3, kStart + 510000, "inject");
  inject.rail = 1U;
  inject.spec = "corrupt=0.01";
  Event down = event(1, 7, kStart + 2315000, "rail_state");
  down.rail = 1U;
  down.state = "down";
  down.reason = "no answer for 51 ms";
  Event up = event(1, 9, kStart + 5 * kSecond, "rail_state");
  up.rail = 1U;
  up.state = "up";
  up.reason = "answered";
  Event lost = event(0, 12, kStart + 7500000, "peer_lost");
  lost.peer = 3;
  lost.reason = "every rail down";
  // Rail 0 in second 3, from two ranks: 812.3 MB and the faults they saw.
  Event t1 = event(0, 5, kStart + 3100000, "traffic");
  t1.rail = 0U;
  t1.interval_us = 500000;
  t1.bytes_sent = 412300000;
  t1.retransmits = 1;
  Event t2 = event(1, 8, kStart + 3600000, "traffic");
  t2.rail = 0U;
  t2.interval_us = 500000;
  t2.bytes_sent = 400000000;
  t2.retransmits = 2;
  t2.checksum_failures = 5;
  t.events = {inject, down, t1, t2, up, lost};
  t.verdict = {{"exit", "0", "= 0", true, "every rank exited 0"},
               {"stall", "1.2 s", "< 1 s", false, "longest gap between samples"}};
  return t;
}

std::size_t count_of(std::string_view text, std::string_view what) {
  std::size_t n = 0;
  for (std::size_t at = text.find(what); at != std::string_view::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

using ftmpi::test::require_svg_renders;

}  // namespace

BOOST_AUTO_TEST_SUITE(timeline)

BOOST_AUTO_TEST_CASE(json_lines_round_trip_every_field_exactly) {
  const std::uint64_t seed = ftmpi::test::seed_for("timeline json lines round trip");
  BOOST_TEST_CONTEXT("seed " << seed) {
    std::mt19937_64 random(seed);
    for (int i = 0; i < 300; ++i) {
      BOOST_TEST_CONTEXT("timeline " << i) {
        const Timeline written = random_timeline(random);
        const std::string lines = to_json_lines(written);
        std::istringstream each(lines);
        std::size_t count = 0;
        for (std::string line; std::getline(each, line); ++count) {
          BOOST_TEST(ftmpi::test::JsonCheck::valid(line), line);
          BOOST_TEST(line.rfind("{\"type\":", 0) == 0, line);  // "type" first
        }
        BOOST_TEST(count == 1 + written.steps.size() + written.samples.size() + written.events.size() +
                                written.verdict.size());
        const auto read = from_json_lines(lines);
        BOOST_TEST_REQUIRE(read.is_ok(), read.status().to_string());
        require_same(*read, written);
        BOOST_TEST(to_json_lines(*read) == lines);
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(reading_skips_blank_lines_and_fills_absent_optional_fields) {
  const auto t = from_json_lines(
      "\n  \r\n{\"type\":\"header\",\"started_us\":5}\r\n\n"
      "{\"type\":\"step\",\"at_us\":6,\"action\":\"run\",\"extra\":[1,{}]}\n"
      "{\"type\":\"check\",\"name\":\"exit\",\"pass\":true}");
  BOOST_TEST_REQUIRE(t.is_ok(), t.status().to_string());
  BOOST_TEST(t->header.started_us == 5);
  BOOST_TEST_REQUIRE(t->steps.size() == 1U);
  BOOST_TEST(t->steps[0].action == "run");
  BOOST_TEST(!t->steps[0].rail.has_value());
  BOOST_TEST(t->steps[0].ok);
  BOOST_TEST_REQUIRE(t->verdict.size() == 1U);
  BOOST_TEST(t->verdict[0].pass);
}

BOOST_AUTO_TEST_CASE(errors_name_the_line_and_what_is_wrong) {
  const std::string header = "{\"type\":\"header\",\"started_us\":0}\n";
  BOOST_TEST(error_of(header + "\nnot json\n").rfind("line 3: JSON: ", 0) == 0, error_of(header + "\nnot json\n"));
  BOOST_TEST(error_of(header + "[1,2]") == "line 2: not a JSON object");
  BOOST_TEST(error_of(header + "{\"at_us\":1}") == "line 2: type is missing");
  BOOST_TEST(error_of(header + "{\"type\":\"stpe\"}") == "line 2: unknown type \"stpe\"");
  BOOST_TEST(error_of(header + "{\"type\":\"step\",\"action\":\"run\"}") == "line 2: at_us is missing");
  BOOST_TEST(error_of(header + "{\"type\":\"step\",\"at_us\":\"1\",\"action\":\"run\"}") ==
             "line 2: at_us is not an integer in range");
  BOOST_TEST(error_of(header + "{\"type\":\"step\",\"at_us\":1.5,\"action\":\"run\"}") ==
             "line 2: at_us is not an integer in range");
  BOOST_TEST(error_of(header + "{\"type\":\"step\",\"at_us\":9223372036854775808,\"action\":\"run\"}") ==
             "line 2: at_us is not an integer in range");
  BOOST_TEST(error_of(header + "{\"type\":\"step\",\"at_us\":1,\"action\":\"run\",\"ok\":1}") ==
             "line 2: ok is not true or false");
  BOOST_TEST(error_of(header + "{\"type\":\"sample\",\"at_us\":1,\"rail\":4294967296,\"bytes\":1}") ==
             "line 2: rail is not an integer in range");
  BOOST_TEST(error_of(header + "{\"type\":\"sample\",\"at_us\":1,\"rail\":0,\"bytes\":-1}") ==
             "line 2: bytes is not an integer in range");
  BOOST_TEST(error_of(header + "{\"type\":\"event\",\"seq\":1,\"at_us\":1,\"kind\":\"inject\"}") ==
             "line 2: rank is missing");
  BOOST_TEST(error_of(header + "{\"type\":\"event\",\"rank\":1,\"at_us\":1,\"kind\":\"inject\"}") ==
             "line 2: seq is missing");
  BOOST_TEST(error_of(header + "{\"type\":\"check\",\"name\":\"exit\"}") == "line 2: pass is missing");
  BOOST_TEST(error_of("{\"type\":\"header\",\"started_us\":0,\"rails\":[\"a\",3]}") ==
             "line 1: rails holds something other than a string");
  BOOST_TEST(error_of(header + header) == "line 2: a second header");
  BOOST_TEST(error_of("") == "no header line");
  BOOST_TEST(error_of("{\"type\":\"check\",\"name\":\"exit\",\"pass\":false}") == "no header line");
}

BOOST_AUTO_TEST_CASE(a_timeline_file_round_trips_through_zstd) {
  const std::uint64_t seed = ftmpi::test::seed_for("timeline file round trip");
  BOOST_TEST_CONTEXT("seed " << seed) {
    std::mt19937_64 random(seed);
    TempDir dir;
    const std::string path = dir.file("drill.timeline.zst");
    const Timeline written = random_timeline(random);
    const auto status = write_timeline(path, written);
    BOOST_TEST_REQUIRE(status.is_ok(), status.to_string());
    BOOST_TEST(contents(path).substr(0, 4) == std::string("\x28\xb5\x2f\xfd", 4));  // a zstd frame
    const auto read = read_timeline(path);
    BOOST_TEST_REQUIRE(read.is_ok(), read.status().to_string());
    require_same(*read, written);

    // Each way of failing names the file.
    const std::string missing = dir.file("missing.zst");
    BOOST_TEST(read_timeline(missing).status().message().find(missing) != std::string::npos);
    const std::string plain = dir.file("plain.txt");
    std::ofstream(plain) << to_json_lines(written);
    const auto not_zstd = read_timeline(plain);
    BOOST_TEST(not_zstd.status().message().find(plain) != std::string::npos, not_zstd.status().message());
    BOOST_TEST(not_zstd.status().message().find("not zstd") != std::string::npos, not_zstd.status().message());
    const std::string bad = dir.file("bad.zst");
    BOOST_TEST_REQUIRE(ftmpi::base::write_file(bad, ftmpi::base::zstd_compress("{\"type\":\"header\"}\n")).is_ok());
    const auto bad_line = read_timeline(bad);
    BOOST_TEST(bad_line.status().message() == "timeline " + bad + ": line 1: started_us is missing");
    const auto unwritable = write_timeline(dir.file("no/such/dir/t.zst"), written);
    BOOST_TEST(unwritable.message().find(dir.file("no/such/dir/t.zst")) != std::string::npos, unwritable.message());
  }
}

BOOST_AUTO_TEST_CASE(event_from_json_reads_what_the_flight_recorder_writes) {
  // As flight_json writes each kind (libs/ftmpi/src/engine/flight_recorder.cpp).
  auto e = event_from_json(
      R"({"seq":7,"at_us":1700000002315000,"kind":"rail_state","peer":0,"rail":1,"state":"down",)"
      R"("reason":"no answer for 51 ms"})", 1);
  BOOST_TEST_REQUIRE(e.is_ok(), e.status().to_string());
  BOOST_TEST(e->rank == 1U);
  BOOST_TEST(e->seq == 7U);
  BOOST_TEST(e->at_us == 1700000002315000);
  BOOST_TEST(e->kind == "rail_state");
  BOOST_TEST(e->peer == 0U);
  BOOST_TEST((e->rail == std::optional<std::uint32_t>(1)));
  BOOST_TEST(e->state == "down");
  BOOST_TEST(e->reason == "no answer for 51 ms");

  e = event_from_json(
      R"({"seq":18446744073709551615,"at_us":9223372036854775807,"kind":"traffic","peer":2,"rail":0,)"
      R"("interval_us":100000,"bytes_sent":18446744073709551615,"bytes_received":5,"retransmits":3,)"
      R"("timeouts":1,"checksum_failures":4})", 3);
  BOOST_TEST_REQUIRE(e.is_ok(), e.status().to_string());
  BOOST_TEST(e->seq == std::numeric_limits<std::uint64_t>::max());
  BOOST_TEST(e->at_us == std::numeric_limits<std::int64_t>::max());
  BOOST_TEST(e->kind == "traffic");
  BOOST_TEST(e->peer == 2U);
  BOOST_TEST((e->rail == std::optional<std::uint32_t>(0)));
  BOOST_TEST(e->interval_us == 100000);
  BOOST_TEST(e->bytes_sent == std::numeric_limits<std::uint64_t>::max());
  BOOST_TEST(e->bytes_received == 5U);
  BOOST_TEST(e->retransmits == 3U);
  BOOST_TEST(e->timeouts == 1U);
  BOOST_TEST(e->checksum_failures == 4U);

  e = event_from_json(R"({"seq":2,"at_us":10,"kind":"inject","rail":null,"spec":"drop=0.5"})", 0);
  BOOST_TEST_REQUIRE(e.is_ok(), e.status().to_string());
  BOOST_TEST(e->kind == "inject");
  BOOST_TEST(!e->rail.has_value());
  BOOST_TEST(e->spec == "drop=0.5");

  e = event_from_json(R"({"seq":3,"at_us":11,"kind":"clear","rail":2,"spec":"","new_field":{"a":[1]}})", 0);
  BOOST_TEST_REQUIRE(e.is_ok(), e.status().to_string());
  BOOST_TEST(e->kind == "clear");
  BOOST_TEST((e->rail == std::optional<std::uint32_t>(2)));

  e = event_from_json(R"({"seq":4,"at_us":-12,"kind":"peer_lost","peer":5,"reason":"every rail down"})", 6);
  BOOST_TEST_REQUIRE(e.is_ok(), e.status().to_string());
  BOOST_TEST(e->at_us == -12);
  BOOST_TEST(e->kind == "peer_lost");
  BOOST_TEST(e->peer == 5U);
  BOOST_TEST(e->reason == "every rail down");
  BOOST_TEST(!e->rail.has_value());

  BOOST_TEST(event_from_json(R"({"at_us":1,"kind":"inject"})", 0).status().message() == "flight event: seq is missing");
  BOOST_TEST(event_from_json(R"({"seq":1,"kind":"inject"})", 0).status().message() ==
             "flight event: at_us is missing");
  BOOST_TEST(event_from_json(R"({"seq":1,"at_us":1})", 0).status().message() == "flight event: kind is missing");
  BOOST_TEST(event_from_json(R"({"seq":1,"at_us":1,"kind":"inject","rail":"x"})", 0).status().message() ==
             "flight event: rail is not an integer in range or null");
  BOOST_TEST(event_from_json("{", 0).status().message().rfind("flight event: JSON: ", 0) == 0);
  BOOST_TEST(event_from_json("[]", 0).status().message() == "flight event: not a JSON object");
}

BOOST_AUTO_TEST_CASE(text_tells_what_happened_in_time_order) {
  const std::string text = timeline_text(small_timeline());
  BOOST_TEST_MESSAGE(text);
  const std::string_view expected[] = {
      "drill corrupt.drill  job job-42",
      "command: ring --iterations 100",
      "rail 1: udp veth1",
      "  +0.500 s  step: inject corrupt=0.01 rail=1 for=3s -> ok\n",
      "  +0.510 s  rank 0  inject on rail 1 (udp veth1): corrupt=0.01\n",
      "  +2.315 s  rank 1  rail 1 (udp veth1) to rank 0: down (no answer for 51 ms)\n",
      "  +3.000 s  rail 0 (udp veth0): 812.3 MB/s sent, 3 retransmits, 5 checksum failures\n",
      "  +4.000 s  step: disable rail=0 -> ok\n",
      "  +5.000 s  rank 1  rail 1 (udp veth1) to rank 0: up (answered)\n",
      "  +7.000 s  step: clear -> FAILED: no such job\n",
      "  +7.500 s  rank 0  lost rank 3 (every rail down)\n",
      "verdict: FAIL (1 of 2 checks failed)",
      "  exit   0         = 0    PASS  every rank exited 0\n",
      "  stall  1.2 s     < 1 s  FAIL  longest gap between samples\n",
  };
  std::size_t after = 0;
  for (std::string_view line : expected) {
    const std::size_t at = text.find(line);
    BOOST_TEST(at != std::string::npos, "missing: " << line);
    BOOST_TEST((at == std::string::npos || at >= after), "out of order: " << line);
    if (at != std::string::npos) after = at + line.size();
  }
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) BOOST_TEST(line.size() <= 100U, line);
  BOOST_TEST(timeline_text(Timeline{}).find("verdict: no checks") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(svg_draws_rails_steps_markers_and_verdict) {
  Timeline t = small_timeline();
  t.steps.push_back({kStart + 6500000, 0, "run", "run ./check <a> & \"b\" 'c'", std::nullopt, true, ""});
  const std::string svg = timeline_svg(t);
  BOOST_TEST(svg.rfind("<?xml", 0) == 0);
  BOOST_TEST(count_of(svg, "<polyline") == 2U);                 // one line per rail with samples
  BOOST_TEST(count_of(svg, "fill-opacity=\"0.15\">") == 2U);    // two windows: inject, disable
  BOOST_TEST(count_of(svg, "stroke-dasharray") == 2U);          // two instant steps: clear, run
  BOOST_TEST(count_of(svg, "<circle cx") >= 2U + 3U);           // two rail state markers, three in the legend
  BOOST_TEST(svg.find("rail 1 (udp veth1)") != std::string::npos);
  BOOST_TEST(svg.find(">MB/s</text>") != std::string::npos);  // 800 MB/s at most
  for (Sample& s : t.samples) s.bytes *= 10;
  BOOST_TEST(timeline_svg(t).find(">GB/s</text>") != std::string::npos);  // 8000 MB/s: in GB/s
  BOOST_TEST(svg.find("run ./check &lt;a&gt; &amp; &quot;b&quot; &apos;c&apos;") != std::string::npos);
  BOOST_TEST(svg.find("<a>") == std::string::npos);
  BOOST_TEST(svg.find("fill=\"#cf222e\">FAIL  stall") != std::string::npos);
  BOOST_TEST(svg.find("fill=\"#1a7f37\">PASS  exit") != std::string::npos);
  require_svg_renders(svg);
}

BOOST_AUTO_TEST_CASE(svg_of_an_empty_timeline_renders) {
  const std::string svg = timeline_svg(Timeline{});
  BOOST_TEST(svg.find("<polyline") == std::string::npos);
  require_svg_renders(svg);
}

BOOST_AUTO_TEST_CASE(svg_of_a_zero_duration_timeline_renders) {
  Timeline t;
  t.header = {"d", "j", "c", kStart, kStart, {"r0"}};
  t.samples = {{kStart, 0, 0}, {kStart, 0, 100}};
  t.steps = {{kStart, kStart, "clear", "clear", std::nullopt, true, ""}};
  t.events = {event(0, 1, kStart, "rail_state")};
  t.events[0].rail = 7U;
  t.events[0].state = "suspect";
  t.verdict = {{"exit", "", "", true, ""}};
  require_svg_renders(timeline_svg(t));
}

BOOST_AUTO_TEST_CASE(svg_of_random_timelines_with_any_bytes_renders) {
  const std::uint64_t seed = ftmpi::test::seed_for("timeline svg random");
  BOOST_TEST_CONTEXT("seed " << seed) {
    std::mt19937_64 random(seed);
    for (int i = 0; i < 3; ++i) {
      Timeline t = random_timeline(random);
      std::string bytes(40, '\0');
      for (char& c : bytes) {
        c = static_cast<char>(random());
        if (std::string_view("nNiI").find(c) != std::string_view::npos) c = '?';  // no "nan" or "inf" by chance
      }
      t.header.drill = bytes;  // invalid UTF-8 and control characters, which XML must not carry
      t.verdict.push_back({bytes, bytes, bytes, false, bytes});
      require_svg_renders(timeline_svg(t));
    }
  }
}

BOOST_AUTO_TEST_SUITE_END()

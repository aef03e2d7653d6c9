// The timeline's JSON lines, zstd file, text and SVG (timeline.hpp).
#include "ftmpi/drill/timeline.hpp"

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <set>
#include <type_traits>
#include <utility>

#include "ftmpi/base/compress.hpp"
#include "ftmpi/base/json.hpp"
#include "ftmpi/base/json_value.hpp"
#include "ftmpi/base/svg.hpp"
#include "ftmpi/base/text_table.hpp"

namespace ftmpi::drill {
namespace {

using base::Errc;
using base::JsonValue;
using base::JsonWriter;
using base::Result;
using base::Status;

void write_rail(JsonWriter& w, const std::optional<std::uint32_t>& rail) {
  w.key("rail");
  if (rail) {
    w.value(*rail);
  } else {
    w.null();
  }
}

// Reads the fields of one JSON object into typed values, keeping the first thing wrong. Absent optional
// fields keep their default.
class Fields {
 public:
  explicit Fields(const JsonValue& object) : object_(object) {}
  const std::string& error() const noexcept { return error_; }

  Fields& read(std::string_view key, std::string& out, bool required = false) {
    const JsonValue* v = get(key, required);
    if (v != nullptr && v->is_string()) out = v->as_string();
    if (v != nullptr && !v->is_string()) fail(key, "is not a string");
    return *this;
  }
  Fields& read(std::string_view key, bool& out, bool required = false) {
    const JsonValue* v = get(key, required);
    if (v != nullptr && v->is_bool()) out = v->as_bool();
    if (v != nullptr && !v->is_bool()) fail(key, "is not true or false");
    return *this;
  }
  template <typename Int>
    requires(std::is_integral_v<Int> && !std::is_same_v<Int, bool>)
  Fields& read(std::string_view key, Int& out, bool required = false) {
    const JsonValue* v = get(key, required);
    if (v != nullptr && !integer(*v, out)) fail(key, "is not an integer in range");
    return *this;
  }
  // A rail's number, or none when null or absent.
  Fields& read(std::string_view key, std::optional<std::uint32_t>& out) {
    out.reset();
    const JsonValue* v = object_.find(key);
    if (v == nullptr || v->is_null()) return *this;
    if (std::uint32_t rail = 0; integer(*v, rail)) {
      out = rail;
    } else {
      fail(key, "is not an integer in range or null");
    }
    return *this;
  }

 private:
  // Exact integers only, up to 2^64 - 1: the doubles that JSON numbers often become would round them.
  template <typename Int>
  static bool integer(const JsonValue& v, Int& out) {
    // as_u64() and as_i64() answer 0 for what they cannot hold, so a 0 from one is checked with the other.
    if (!v.is_exact_integer()) return false;
    if constexpr (std::is_signed_v<Int>) {
      if (v.as_i64() == 0 && v.as_u64() != 0) return false;
      out = v.as_i64();
    } else {
      if ((v.as_u64() == 0 && v.as_i64() != 0) || v.as_u64() > std::numeric_limits<Int>::max()) return false;
      out = static_cast<Int>(v.as_u64());
    }
    return true;
  }
  const JsonValue* get(std::string_view key, bool required) {
    const JsonValue* v = object_.find(key);
    if (v == nullptr && required) fail(key, "is missing");
    return v;
  }
  void fail(std::string_view key, std::string_view what) {
    if (error_.empty()) error_ = std::string(key) + " " + std::string(what);
  }

  const JsonValue& object_;
  std::string error_;
};

// The flight recorder's fields of an event (flight_json); every kind's fields are read when present.
std::string read_event(const JsonValue& object, Event& e) {
  Fields f(object);
  f.read("seq", e.seq, true).read("at_us", e.at_us, true).read("kind", e.kind, true);
  f.read("peer", e.peer).read("rail", e.rail).read("state", e.state).read("reason", e.reason).read("spec", e.spec);
  f.read("interval_us", e.interval_us).read("bytes_sent", e.bytes_sent).read("bytes_received", e.bytes_received);
  f.read("retransmits", e.retransmits).read("timeouts", e.timeouts).read("checksum_failures", e.checksum_failures);
  return f.error();
}

// One line's record into `t`. Required are the fields without which a record means nothing.
std::string read_record(const JsonValue& object, Timeline& t, bool& seen_header) {
  Fields f(object);
  std::string type;
  if (!f.read("type", type, true).error().empty()) return f.error();
  if (type == "header") {
    if (seen_header) return "a second header";
    seen_header = true;
    TimelineHeader& h = t.header;
    f.read("drill", h.drill).read("job", h.job).read("command", h.command);
    f.read("started_us", h.started_us, true).read("ended_us", h.ended_us);
    if (const JsonValue* rails = object.find("rails")) {
      if (!rails->is_array()) return "rails is not an array";
      for (const JsonValue& name : rails->items()) {
        if (!name.is_string()) return "rails holds something other than a string";
        h.rails.push_back(name.as_string());
      }
    }
  } else if (type == "step") {
    Step& s = t.steps.emplace_back();
    f.read("at_us", s.at_us, true).read("until_us", s.until_us).read("action", s.action, true);
    f.read("text", s.text).read("rail", s.rail).read("ok", s.ok).read("outcome", s.outcome);
  } else if (type == "sample") {
    Sample& s = t.samples.emplace_back();
    f.read("at_us", s.at_us, true).read("rail", s.rail, true).read("bytes", s.bytes, true);
  } else if (type == "event") {
    Event& e = t.events.emplace_back();
    return f.read("rank", e.rank, true).error().empty() ? read_event(object, e) : f.error();
  } else if (type == "check") {
    Check& c = t.verdict.emplace_back();
    f.read("name", c.name, true).read("measured", c.measured).read("limit", c.limit);
    f.read("pass", c.pass, true).read("note", c.note);
  } else {
    return "unknown type \"" + type + "\"";
  }
  return f.error();
}

// ---- Text ----

std::string fixed(double value, int decimals) {
  if (!std::isfinite(value)) value = 0;  // never "nan" or "inf" in what we print
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, value);
  return buf;
}

// "+2.315 s": `at_us` relative to `start_us`. Unsigned arithmetic: far-apart times cannot overflow.
std::string relative(std::int64_t at_us, std::int64_t start_us) {
  const bool before = at_us < start_us;
  const std::uint64_t d = before ? static_cast<std::uint64_t>(start_us) - static_cast<std::uint64_t>(at_us)
                                 : static_cast<std::uint64_t>(at_us) - static_cast<std::uint64_t>(start_us);
  char buf[48];
  std::snprintf(buf, sizeof buf, "%c%" PRIu64 ".%03" PRIu64 " s", before ? '-' : '+', d / 1000000, d / 1000 % 1000);
  return buf;
}

std::string count_text(std::uint64_t n, std::string_view one, std::string_view many) {
  return std::to_string(n) + " " + std::string(n == 1 ? one : many);
}

// "rail 1 (udp veth1)", "rail 7" when the header has no name for it, "every rail" for none.
std::string rail_text(const TimelineHeader& h, const std::optional<std::uint32_t>& rail) {
  if (!rail) return "every rail";
  std::string s = "rail " + std::to_string(*rail);
  if (*rail < h.rails.size() && !h.rails[*rail].empty()) s += " (" + h.rails[*rail] + ")";
  return s;
}

std::string event_text(const TimelineHeader& h, const Event& e) {
  std::string s = "rank " + std::to_string(e.rank) + "  ";
  const auto why = [](const std::string& reason) { return reason.empty() ? std::string() : " (" + reason + ")"; };
  if (e.kind == "rail_state") {
    s += rail_text(h, e.rail) + " to rank " + std::to_string(e.peer) + ": " + e.state + why(e.reason);
  } else if (e.kind == "inject") {
    s += "inject on " + rail_text(h, e.rail) + ": " + e.spec;
  } else if (e.kind == "clear") {
    s += "clear on " + rail_text(h, e.rail) + (e.spec.empty() ? "" : ": " + e.spec);
  } else if (e.kind == "peer_lost") {
    s += "lost rank " + std::to_string(e.peer) + why(e.reason);
  } else {
    s += e.kind + " on " + rail_text(h, e.rail);  // a kind newer than this reader
  }
  return s;
}

std::string step_text(const Step& s) {
  std::string text = "step: " + (s.text.empty() ? s.action : s.text);
  if (s.ok) return text + " -> ok" + (s.outcome.empty() ? "" : ": " + s.outcome);
  return text + " -> FAILED" + (s.outcome.empty() ? "" : ": " + s.outcome);
}

std::string padded(std::string_view text, std::size_t width) {
  std::string s(text);
  if (s.size() < width) s.append(width - s.size(), ' ');
  return s;
}

// The verdict as a table; columns are as wide as their longest cell up to a cap, so the note keeps about
// 30 columns of a 100-column terminal.
std::string verdict_table(const std::vector<Check>& checks) {
  if (checks.empty()) return "verdict: no checks\n";
  std::size_t name_w = 5, measured_w = 8, limit_w = 5;
  std::size_t failed = 0;
  for (const Check& c : checks) {
    name_w = std::max(name_w, std::min<std::size_t>(c.name.size(), 24));
    measured_w = std::max(measured_w, std::min<std::size_t>(c.measured.size(), 18));
    limit_w = std::max(limit_w, std::min<std::size_t>(c.limit.size(), 14));
    failed += c.pass ? 0 : 1;
  }
  const auto row = [&](std::string_view name, std::string_view measured, std::string_view limit,
                       std::string_view result, std::string_view note) {
    std::string s = "  " + padded(name, name_w) + "  " + padded(measured, measured_w) + "  " + padded(limit, limit_w) +
                    "  " + padded(result, 4) + "  " + std::string(note);
    while (!s.empty() && s.back() == ' ') s.pop_back();
    return s + "\n";
  };
  std::string out = failed == 0 ? "verdict: PASS (" + count_text(checks.size(), "check", "checks") + ")\n"
                                : "verdict: FAIL (" + std::to_string(failed) + " of " +
                                      count_text(checks.size(), "check", "checks") + " failed)\n";
  out += row("check", "measured", "limit", "", "note");
  for (const Check& c : checks) out += row(c.name, c.measured, c.limit, c.pass ? "PASS" : "FAIL", c.note);
  return out;
}

// ---- SVG ----

using base::svg::circle;
using base::svg::line;
using base::svg::rect;
using base::svg::text;
std::string xml(std::string_view t) { return base::svg::escape(t); }
std::string num(double v) { return base::svg::number(v); }

// A round step (1, 2 or 5 times a power of ten) dividing `range` into about `count` parts.
double nice_step(double range, double count) {
  const double raw = range / count;
  if (!std::isfinite(raw) || raw <= 0) return 1;
  const double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
  const double norm = raw / magnitude;
  return (norm <= 1 ? 1 : norm <= 2 ? 2 : norm <= 5 ? 5 : 10) * magnitude;
}

constexpr double kLeft = 70, kTop = 40, kPlotWidth = 900, kPlotHeight = 420;
constexpr double kBottom = kTop + kPlotHeight, kRight = kLeft + kPlotWidth, kWidth = kRight + 30;
constexpr const char* kRailColours[] = {"#1f77b4", "#9467bd", "#17becf", "#8c564b",
                                        "#e377c2", "#bcbd22", "#2ca02c", "#7f7f7f"};
constexpr const char* kRed = "#d62728";
constexpr const char* kOrange = "#ff7f0e";
constexpr const char* kGreen = "#2ca02c";

const char* rail_colour(std::uint32_t rail) { return kRailColours[rail % std::size(kRailColours)]; }

const char* state_colour(const std::string& state) {
  if (state == "down" || state == "disabled") return kRed;
  if (state == "suspect") return kOrange;
  return state == "up" ? kGreen : "#7f7f7f";
}

// The time axis: its start, and its length in microseconds: to the end, or to the last time seen; never 0.
// A double, as the difference of two far-apart times overflows an int64_t.
std::pair<std::int64_t, double> time_axis(const Timeline& t) {
  std::int64_t first = std::numeric_limits<std::int64_t>::max(), last = std::numeric_limits<std::int64_t>::min();
  const auto see = [&](std::int64_t at) {
    first = std::min(first, at);
    last = std::max(last, at);
  };
  for (const Step& s : t.steps) see(s.at_us), see(std::max(s.at_us, s.until_us));
  for (const Sample& s : t.samples) see(s.at_us);
  for (const Event& e : t.events) see(e.at_us);
  const bool seen = last >= first;
  const std::int64_t start = t.header.started_us != 0 || !seen ? t.header.started_us : first;
  const std::int64_t end = t.header.ended_us > start ? t.header.ended_us : seen ? std::max(last, start) : start;
  const double length = static_cast<double>(end) - static_cast<double>(start);
  return {start, length > 0 ? length : 1e6};  // zero duration: a one-second axis
}

}  // namespace

std::string to_json_lines(const Timeline& t) {
  std::string out;
  const auto finish = [&out](JsonWriter& w) { out += std::move(w.end_object()).text() + "\n"; };
  {
    JsonWriter w;
    const TimelineHeader& h = t.header;
    w.begin_object().field("type", "header").field("drill", h.drill).field("job", h.job).field("command", h.command);
    w.field("started_us", h.started_us).field("ended_us", h.ended_us).key("rails").begin_array();
    for (const std::string& name : h.rails) w.value(name);
    w.end_array();
    finish(w);
  }
  for (const Step& s : t.steps) {
    JsonWriter w;
    w.begin_object().field("type", "step").field("at_us", s.at_us).field("until_us", s.until_us);
    w.field("action", s.action).field("text", s.text);
    write_rail(w, s.rail);
    w.field("ok", s.ok).field("outcome", s.outcome);
    finish(w);
  }
  for (const Sample& s : t.samples) {
    JsonWriter w;
    w.begin_object().field("type", "sample").field("at_us", s.at_us).field("rail", s.rail).field("bytes", s.bytes);
    finish(w);
  }
  for (const Event& e : t.events) {
    JsonWriter w;
    w.begin_object().field("type", "event").field("rank", e.rank).field("seq", e.seq).field("at_us", e.at_us);
    w.field("kind", e.kind).field("peer", e.peer);
    write_rail(w, e.rail);
    w.field("state", e.state).field("reason", e.reason).field("spec", e.spec).field("interval_us", e.interval_us);
    w.field("bytes_sent", e.bytes_sent).field("bytes_received", e.bytes_received);
    w.field("retransmits", e.retransmits).field("timeouts", e.timeouts).field("checksum_failures", e.checksum_failures);
    finish(w);
  }
  for (const Check& c : t.verdict) {
    JsonWriter w;
    w.begin_object().field("type", "check").field("name", c.name).field("measured", c.measured);
    w.field("limit", c.limit).field("pass", c.pass).field("note", c.note);
    finish(w);
  }
  return out;
}

Result<Timeline> from_json_lines(std::string_view text) {
  Timeline t;
  bool seen_header = false;
  std::size_t number = 0;
  while (!text.empty()) {
    const std::size_t end = text.find('\n');
    const std::string_view line = text.substr(0, end);
    text = end == std::string_view::npos ? std::string_view() : text.substr(end + 1);
    ++number;
    if (line.find_first_not_of(" \t\r") == std::string_view::npos) continue;
    const Result<JsonValue> doc = base::parse_json(line);
    const std::string error = !doc                ? doc.status().message()
                              : !doc->is_object() ? std::string("not a JSON object")
                                                  : read_record(*doc, t, seen_header);
    if (!error.empty()) return Status(Errc::invalid_argument, "line " + std::to_string(number) + ": " + error);
  }
  if (!seen_header) return Status(Errc::invalid_argument, "no header line");
  return t;
}

Status write_timeline(const std::string& path, const Timeline& timeline) {
  return base::write_file(path, base::zstd_compress(to_json_lines(timeline))).prefixed("timeline " + path);
}

Result<Timeline> read_timeline(const std::string& path) {
  Result<std::string> data = base::read_file(path);
  if (!data) return data.status().prefixed("timeline " + path);
  Result<std::string> text = base::zstd_decompress(*data);
  if (!text) return text.status().prefixed("timeline " + path);
  Result<Timeline> t = from_json_lines(*text);
  if (!t) return t.status().prefixed("timeline " + path);
  return t;
}

Result<Event> event_from_json(std::string_view json, std::uint32_t rank) {
  const Result<JsonValue> doc = base::parse_json(json);
  if (!doc) return doc.status().prefixed("flight event");
  if (!doc->is_object()) return Status(Errc::invalid_argument, "flight event: not a JSON object");
  Event e;
  e.rank = rank;
  if (std::string error = read_event(*doc, e); !error.empty()) {
    return Status(Errc::invalid_argument, "flight event: " + error);
  }
  return e;
}

std::string timeline_text(const Timeline& t) {
  const TimelineHeader& h = t.header;
  const std::int64_t start = h.started_us;
  std::string out = "drill " + h.drill + "  job " + h.job + "\ncommand: " + h.command + "\n";
  if (h.ended_us >= start) out += "duration: " + relative(h.ended_us, start).substr(1) + "\n";
  for (std::size_t i = 0; i < h.rails.size(); ++i) out += "rail " + std::to_string(i) + ": " + h.rails[i] + "\n";
  out += "\n";

  std::vector<std::pair<std::int64_t, std::string>> lines;  // at_us, what
  for (const Step& s : t.steps) lines.emplace_back(s.at_us, step_text(s));
  struct Traffic {
    std::uint64_t sent = 0, retransmits = 0, timeouts = 0, checksum_failures = 0;
    std::int64_t longest_interval_us = 0;
  };
  std::map<std::pair<std::int64_t, std::uint32_t>, Traffic> traffic;  // by (second since start, rail)
  for (const Event& e : t.events) {
    if (e.kind != "traffic") {
      lines.emplace_back(e.at_us, event_text(h, e));
      continue;
    }
    // Wrapping arithmetic: far-apart times give a wrong second, never undefined behaviour.
    const auto since =
        static_cast<std::int64_t>(static_cast<std::uint64_t>(e.at_us) - static_cast<std::uint64_t>(start));
    const std::int64_t second = since / 1000000 - (since % 1000000 < 0 ? 1 : 0);  // floor, before start too
    Traffic& sum = traffic[{second, e.rail.value_or(std::numeric_limits<std::uint32_t>::max())}];
    sum.sent += e.bytes_sent;
    sum.retransmits += e.retransmits;
    sum.timeouts += e.timeouts;
    sum.checksum_failures += e.checksum_failures;
    sum.longest_interval_us = std::max(sum.longest_interval_us, e.interval_us);
  }
  for (const auto& [key, sum] : traffic) {
    if (sum.sent == 0 && sum.retransmits == 0 && sum.timeouts == 0 && sum.checksum_failures == 0) continue;
    // A flight interval longer than a second puts all its bytes in one second's sum: spread them over it.
    const double seconds = static_cast<double>(std::max<std::int64_t>(sum.longest_interval_us, 1000000)) / 1e6;
    const std::optional<std::uint32_t> rail =
        key.second == std::numeric_limits<std::uint32_t>::max() ? std::nullopt : std::optional(key.second);
    std::string s = rail_text(h, rail) + ": " + base::human_rate(static_cast<double>(sum.sent) / seconds) + " sent, " +
                    count_text(sum.retransmits, "retransmit", "retransmits") + ", " +
                    count_text(sum.checksum_failures, "checksum failure", "checksum failures");
    if (sum.timeouts > 0) s += ", " + count_text(sum.timeouts, "timeout", "timeouts");
    lines.emplace_back(static_cast<std::int64_t>(static_cast<std::uint64_t>(start) +
                                                 static_cast<std::uint64_t>(key.first) * 1000000),
                       std::move(s));
  }
  std::stable_sort(lines.begin(), lines.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  for (const auto& [at, what] : lines) {
    const std::string when = relative(at, start);
    out += std::string(when.size() < 10 ? 10 - when.size() : 0, ' ') + when + "  " + what + "\n";
  }
  return out + "\n" + verdict_table(t.verdict);
}

std::string timeline_svg(const Timeline& t) {
  const TimelineHeader& h = t.header;
  const auto axis = time_axis(t);  // not a structured binding: the lambdas below capture them
  const std::int64_t start = axis.first;
  const double length_us = axis.second;
  const double seconds = length_us / 1e6;
  const auto x_of = [&](std::int64_t at) {
    const double f = (static_cast<double>(at) - static_cast<double>(start)) / length_us;
    return kLeft + std::clamp(std::isfinite(f) ? f : 0.0, 0.0, 1.0) * kPlotWidth;
  };

  // Throughput between consecutive samples of a rail (cumulative bytes): bytes per microsecond is MB/s.
  struct Segment {
    std::int64_t from, to;
    double mb_per_s;
  };
  std::map<std::uint32_t, std::vector<Segment>> rates;
  std::vector<Sample> samples = t.samples;
  std::stable_sort(samples.begin(), samples.end(), [](const Sample& a, const Sample& b) {
    return std::pair(a.rail, a.at_us) < std::pair(b.rail, b.at_us);
  });
  double top_rate = 0;
  for (std::size_t i = 0; i < samples.size(); ++i) {
    std::vector<Segment>& segments = rates[samples[i].rail];
    if (i == 0 || samples[i - 1].rail != samples[i].rail || samples[i - 1].at_us >= samples[i].at_us) continue;
    const Sample& a = samples[i - 1];
    const Sample& b = samples[i];
    const std::uint64_t bytes = b.bytes >= a.bytes ? b.bytes - a.bytes : 0;  // a counter that restarted
    const double rate = static_cast<double>(bytes) / (static_cast<double>(b.at_us) - static_cast<double>(a.at_us));
    segments.push_back({a.at_us, b.at_us, rate});
    top_rate = std::max(top_rate, rate);
  }
  const bool giga = top_rate >= 1000;
  const double scale = giga ? 1000 : 1;
  const double y_step = nice_step(top_rate / scale, 5);
  // A step of headroom above the highest rate, so that its line does not hide in the plot's frame.
  const double y_max = (std::floor(top_rate / scale / y_step) + 1) * y_step;
  const auto y_of = [&](double mb_per_s) {
    const double f = mb_per_s / scale / y_max;
    return kBottom - std::clamp(std::isfinite(f) ? f : 0.0, 0.0, 1.0) * kPlotHeight;
  };

  std::string o;
  text(o, kLeft, 24, "font-size=\"15\" font-weight=\"bold\"", xml("drill " + h.drill + ", job " + h.job));
  rect(o, kLeft, kTop, kPlotWidth, kPlotHeight, "fill=\"#ffffff\" stroke=\"#cccccc\"");
  // Steps behind the lines: a window for each step with a duration, a dashed line for the instant ones.
  for (std::size_t i = 0; i < t.steps.size(); ++i) {
    const Step& s = t.steps[i];
    const std::string title = "<title>" + xml(relative(s.at_us, start) + "  " + step_text(s)) + "</title>";
    const double x = x_of(s.at_us);
    if (s.until_us > s.at_us) {
      const char* fill = s.action == "inject" ? kOrange : s.action == "disable" ? "#7f7f7f" : "#1f77b4";
      rect(o, x, kTop, std::max(1.0, x_of(s.until_us) - x), kPlotHeight,
           "fill=\"" + std::string(fill) + "\" fill-opacity=\"0.15\"", title);
    } else {
      line(o, x, kTop, x, kBottom, "stroke=\"#555555\" stroke-dasharray=\"4 3\"", title);
    }
    // Staggered, so that the labels of steps close together do not all overlap.
    text(o, x + 3, kTop + 12 + static_cast<double>(i % 3) * 12, "font-size=\"10\" fill=\"#333333\"",
         xml((s.text.empty() ? s.action : s.text) + (s.ok ? "" : " (failed)")));
  }
  for (int i = 0; i * y_step <= y_max * (1 + 1e-9) && i <= 20; ++i) {
    const double y = y_of(i * y_step * scale);
    line(o, kLeft - 5, y, kRight, y, "stroke=\"#e0e0e0\"");
    text(o, kLeft - 8, y + 4, "font-size=\"11\" text-anchor=\"end\"", fixed(i * y_step, y_step < 1 ? 1 : 0));
  }
  const double x_step = nice_step(seconds, 10);
  for (int i = 0; i * x_step <= seconds * (1 + 1e-9) && i <= 40; ++i) {
    const double x = kLeft + i * x_step / seconds * kPlotWidth;
    char label[32];
    std::snprintf(label, sizeof label, "%g", i * x_step);
    line(o, x, kBottom, x, kBottom + 6, "stroke=\"#000000\"");
    text(o, x, kBottom + 24, "font-size=\"11\" text-anchor=\"middle\"", label);
  }
  for (const auto& [rail, segments] : rates) {
    if (segments.empty()) continue;
    o += "<polyline fill=\"none\" stroke=\"" + std::string(rail_colour(rail)) + "\" stroke-width=\"1.5\" points=\"";
    for (const Segment& s : segments) {
      o += num(x_of(s.from)) + "," + num(y_of(s.mb_per_s)) + " " + num(x_of(s.to)) + "," + num(y_of(s.mb_per_s)) + " ";
    }
    o.back() = '"';
    o += "/>\n";
  }
  line(o, kLeft, kBottom, kRight, kBottom, "stroke=\"#000000\"");
  line(o, kLeft, kTop, kLeft, kBottom, "stroke=\"#000000\"");
  for (const Event& e : t.events) {
    if (e.kind != "rail_state") continue;
    circle(o, x_of(e.at_us), kBottom, state_colour(e.state),
           "<title>" + xml(relative(e.at_us, start) + "  " + event_text(h, e)) + "</title>");
  }
  text(o, kLeft + kPlotWidth / 2, kBottom + 42, "font-size=\"12\" text-anchor=\"middle\"", "seconds since start");
  const std::string middle = num(kTop + kPlotHeight / 2);
  text(o, 16, kTop + kPlotHeight / 2,
       "font-size=\"12\" text-anchor=\"middle\" transform=\"rotate(-90 16 " + middle + ")\"", giga ? "GB/s" : "MB/s");

  // The legend: each rail's colour and name, then what the shading and the markers mean.
  double y = kBottom + 72;
  std::set<std::uint32_t> rails;
  for (std::uint32_t i = 0; i < h.rails.size(); ++i) rails.insert(i);
  for (const auto& entry : rates) rails.insert(entry.first);
  for (const std::uint32_t rail : rails) {
    line(o, kLeft, y - 4, kLeft + 24, y - 4, "stroke=\"" + std::string(rail_colour(rail)) + "\" stroke-width=\"3\"");
    text(o, kLeft + 32, y, "font-size=\"12\"", xml(rail_text(h, rail)));
    y += 18;
  }
  const std::pair<const char*, const char*> keys[] = {
      {kOrange, "injection"}, {"#7f7f7f", "disabled"}, {kRed, "down"}, {kOrange, "suspect"}, {kGreen, "up"}};
  for (std::size_t i = 0; i < std::size(keys); ++i) {
    const double x = kLeft + static_cast<double>(i) * 110;
    if (i < 2) {
      rect(o, x, y - 10, 24, 12,
           "fill=\"" + std::string(keys[i].first) + "\" fill-opacity=\"0.15\" stroke=\"#cccccc\"");
    } else {
      circle(o, x + 12, y - 4, keys[i].first);
    }
    text(o, x + 32, y, "font-size=\"12\"", keys[i].second);
  }
  y += 30;
  text(o, kLeft, y, "font-size=\"13\" font-weight=\"bold\"", t.verdict.empty() ? "verdict: no checks" : "verdict");
  for (const Check& c : t.verdict) {
    std::string what = std::string(c.pass ? "PASS  " : "FAIL  ") + c.name + ": " + c.measured;
    if (!c.limit.empty()) what += " (" + c.limit + ")";
    if (!c.note.empty()) what += "  " + c.note;
    y += 18;
    text(o, kLeft, y, c.pass ? "font-size=\"12\" fill=\"#1a7f37\"" : "font-size=\"12\" fill=\"#cf222e\"", xml(what));
  }
  const std::string width = num(kWidth), height = num(y + 24);
  return "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
         "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"" +
         width + "\" height=\"" + height + "\" viewBox=\"0 0 " + width + " " + height +
         "\" font-family=\"sans-serif\">\n<rect width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>\n" + o + "</svg>\n";
}

}  // namespace ftmpi::drill

#include "ftmpi/bench/results.hpp"

#include <algorithm>
#include <cstdio>

#include "ftmpi/base/json_value.hpp"

namespace ftmpi::bench {

namespace {

// Calls `line` for each line of `text` (the last one need not end in a newline).
template <typename F>
void each_line(std::string_view text, F&& line) {
  std::size_t start = 0;
  while (start < text.size()) {
    const std::size_t nl = text.find('\n', start);
    line(text.substr(start, nl == std::string_view::npos ? std::string_view::npos : nl - start));
    if (nl == std::string_view::npos) break;
    start = nl + 1;
  }
}

constexpr std::string_view kStatsPrefix = "ftmpi stats: ";
constexpr std::uint64_t kNoIndex = RailTraffic::kNoIndex;

}  // namespace

KernelOutput parse_kernel_lines(std::string_view text) {
  KernelOutput output;
  each_line(text, [&](std::string_view line) {
    auto v = base::parse_json(line);
    if (!v || !v->is_object() || !(*v)["kernel"].is_string() || !(*v)["value"].is_number()) return;
    output.results.push_back({(*v)["kernel"].as_string(), (*v)["bytes"].as_u64(), (*v)["value"].as_number(),
                              (*v)["unit"].as_string()});
    if ((*v)["library"].is_string()) output.library = (*v)["library"].as_string();
  });
  return output;
}

std::vector<RailTraffic> parse_rail_traffic(std::string_view stderr_text, std::string* rest) {
  std::vector<RailTraffic> rails;
  each_line(stderr_text, [&](std::string_view line) {
    // ftrun may put a rank's name in front of its lines: the statistics are found where they start.
    const std::size_t at = line.find(kStatsPrefix);
    auto v = base::parse_json(at == std::string_view::npos ? std::string_view{} : line.substr(at + kStatsPrefix.size()));
    if (!v || !v->is_object() || !(*v)["rails"].is_array()) {
      if (rest != nullptr) rest->append(line).append("\n");
      return;
    }
    const std::uint64_t rank = (*v)["rank"].is_number() ? (*v)["rank"].as_u64() : kNoIndex;
    for (const base::JsonValue& r : (*v)["rails"].items()) {
      // One rail is the same path index on every rank (ftrun gives all the same paths and rails), but each
      // rank names it by its own address ("udp r1 10.77.1.1" on one host, "udp r1 10.77.1.2" on the
      // other): the index says which rail, the lowest rank's name says it.
      const std::string name = r["name"].as_string();
      const std::uint64_t index = r["index"].is_number() ? r["index"].as_u64() : kNoIndex;
      auto it = std::find_if(rails.begin(), rails.end(), [&](const RailTraffic& t) {
        return index != kNoIndex ? t.index == index : t.index == kNoIndex && t.name == name;
      });
      if (it == rails.end()) {
        RailTraffic t;
        t.name = name;
        t.index = index;
        t.named_by = rank;
        it = rails.insert(rails.end(), t);
      }
      if (rank < it->named_by) {
        it->name = name;
        it->named_by = rank;
      }
      it->bytes_sent += r["bytes_sent"].as_u64();
      it->retransmits += r["retransmits"].as_u64();
      it->timeouts += r["timeouts"].as_u64();
      it->checksum_failures += r["checksum_failures"].as_u64();
    }
  });
  std::stable_sort(rails.begin(), rails.end(), [](const RailTraffic& a, const RailTraffic& b) { return a.index < b.index; });
  return rails;
}

void write_results(base::JsonWriter& w, const std::vector<Result>& results) {
  w.begin_array();
  for (const Result& r : results) {
    w.begin_object().field("kernel", r.kernel).field("bytes", r.bytes).field("value", r.value).field("unit", r.unit).end_object();
  }
  w.end_array();
}

void add_curve(std::vector<Panel>& panels, const std::string& name, const std::vector<Result>& results) {
  for (const Result& r : results) {
    auto panel = std::find_if(panels.begin(), panels.end(), [&](const Panel& p) { return p.title == r.kernel; });
    if (panel == panels.end()) {
      panels.push_back({r.kernel, r.unit + (higher_is_better(r.unit) ? ", higher is better" : ", lower is better"), {}});
      panel = panels.end() - 1;
    }
    auto curve = std::find_if(panel->curves.begin(), panel->curves.end(), [&](const Curve& c) { return c.name == name; });
    if (curve == panel->curves.end()) {
      panel->curves.push_back({name, {}});
      curve = panel->curves.end() - 1;
    }
    curve->points.emplace_back(static_cast<double>(r.bytes), r.value);
  }
}

bool higher_is_better(std::string_view unit) { return unit == "MB/s" || unit == "Mmsg/s"; }

double median(std::vector<double> values) {
  if (values.empty()) return 0.0;
  std::sort(values.begin(), values.end());
  const std::size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

std::string size_text(std::uint64_t bytes) {
  if (bytes >= (1u << 20) && bytes % (1u << 20) == 0) return std::to_string(bytes >> 20) + " MB";
  if (bytes >= 1024 && bytes % 1024 == 0) return std::to_string(bytes >> 10) + " KB";
  return std::to_string(bytes) + " B";
}

std::string figure_text(double value) {
  char buf[32];
  // Chosen on the value as it will be rounded, so that 99.96 reads "100", not "100.0".
  std::snprintf(buf, sizeof buf, value >= 99.95 ? "%.0f" : value >= 9.9995 ? "%.1f" : "%.3f", value);
  return buf;
}

std::vector<std::string> split(std::string_view text, char by) {
  std::vector<std::string> out;
  std::size_t start = 0;
  for (;;) {
    const std::size_t at = text.find(by, start);
    out.emplace_back(text.substr(start, at == std::string_view::npos ? std::string_view::npos : at - start));
    if (at == std::string_view::npos) break;
    start = at + 1;
  }
  return out;
}

}  // namespace ftmpi::bench

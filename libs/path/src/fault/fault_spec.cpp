// The fault SPEC language (fault.hpp): parsing, canonical text, and choosing the specs of one rail.
#include <cctype>
#include <charconv>
#include <cmath>
#include <optional>
#include <string>
#include <system_error>

#include "ftmpi/base/params.hpp"
#include "ftmpi/path/fault.hpp"

namespace ftmpi::path {
namespace {

using base::Errc;
using base::Result;
using base::Status;

constexpr std::string_view kKnownKeys =
    "drop, corrupt, dup, reorder, delay, blackhole, rail, after, for, seed";

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

// Every error says which spec it is about, then what is wrong with it.
Status spec_error(std::string_view spec, Errc code, const std::string& problem) {
  return {code, "fault spec '" + std::string(spec) + "': " + problem};
}

Result<double> parse_probability(std::string_view key, std::string_view value) {
  auto number = base::parse_real(value);
  if (!number) return Status(number.code(), std::string(key) + ": " + number.status().message());
  if (!(*number >= 0.0 && *number <= 1.0)) {
    return Status(Errc::out_of_range, std::string(key) + " must be a probability from 0 to 1");
  }
  return *number;
}

Result<std::chrono::nanoseconds> parse_time(std::string_view key, std::string_view value) {
  auto duration = base::parse_duration(value);
  if (!duration) return Status(duration.code(), std::string(key) + ": " + duration.status().message());
  return *duration;
}

// A window bound: a volume of traffic when its unit ends in B ("64MB", "512KiB", "100B"), else a time.
struct Bound {
  std::chrono::nanoseconds time{0};
  std::optional<std::uint64_t> bytes;
};

Result<Bound> parse_bound(std::string_view key, std::string_view value) {
  if (!value.empty() && (value.back() == 'B' || value.back() == 'b')) {
    auto bytes = base::parse_size(value);
    if (!bytes) return Status(bytes.code(), std::string(key) + ": " + bytes.status().message());
    return Bound{.time = {}, .bytes = *bytes};
  }
  auto time = parse_time(key, value);
  if (!time) {
    return Status(time.code(), time.status().message() + " (or a volume of traffic such as 64MB)");
  }
  return Bound{.time = *time, .bytes = std::nullopt};
}

Result<std::uint64_t> parse_seed(std::string_view value) {
  std::uint64_t seed = 0;
  auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), seed);
  if (ec == std::errc::result_out_of_range) {
    return Status(Errc::out_of_range, "seed '" + std::string(value) + "' does not fit in 64 bits");
  }
  if (ec != std::errc() || end != value.data() + value.size() || value.empty()) {
    return Status(Errc::invalid_argument, "seed '" + std::string(value) + "' is not an unsigned integer");
  }
  return seed;
}

// Rail names come from the operator ("veth1", "10.77.1.1"); characters the plan syntax uses are refused
// so that to_string stays parseable.
Status check_rail(std::string_view value) {
  for (char c : value) {
    if (std::isspace(static_cast<unsigned char>(c)) != 0 || c == '=' || c == ';' || c == '#' || c == ',') {
      return {Errc::invalid_argument, "rail '" + std::string(value) + "' contains '" + std::string(1, c) +
                                          "' (a rail is an index or a name such as veth1 or 10.77.1.1)"};
    }
  }
  return {};
}

// In the largest binary unit that keeps the value exact.
std::string volume_text(std::uint64_t bytes) {
  if (bytes != 0 && bytes % (1ULL << 30) == 0) return std::to_string(bytes >> 30) + "GB";
  if (bytes != 0 && bytes % (1ULL << 20) == 0) return std::to_string(bytes >> 20) + "MB";
  if (bytes != 0 && bytes % (1ULL << 10) == 0) return std::to_string(bytes >> 10) + "KB";
  return std::to_string(bytes) + "B";
}

// The shortest text that parses back to the same double.
std::string real_text(double value) {
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, value);
  return ec == std::errc() ? std::string(buf, end) : std::to_string(value);
}

// In the largest unit that keeps the value exact.
std::string duration_text(std::chrono::nanoseconds duration) {
  const std::int64_t ns = duration.count();
  if (ns % 1'000'000'000 == 0) return std::to_string(ns / 1'000'000'000) + "s";
  if (ns % 1'000'000 == 0) return std::to_string(ns / 1'000'000) + "ms";
  if (ns % 1'000 == 0) return std::to_string(ns / 1'000) + "us";
  return std::to_string(ns) + "ns";
}

}  // namespace

base::Result<FaultSpec> parse_fault_spec(std::string_view text) {
  const std::string_view spec_text = trim(text);
  if (spec_text.empty()) return spec_error(spec_text, Errc::invalid_argument, "empty spec");
  FaultSpec spec;
  std::string seen = ",";  // keys given so far, each followed by ','
  std::string_view rest = spec_text;
  while (true) {
    const std::size_t comma = rest.find(',');
    const std::string_view entry = trim(rest.substr(0, comma));
    const std::size_t eq = entry.find('=');
    const std::string_view key = trim(entry.substr(0, eq));
    const bool has_value = eq != std::string_view::npos;
    const std::string_view value = has_value ? trim(entry.substr(eq + 1)) : std::string_view{};

    if (key.empty()) {
      return spec_error(spec_text, Errc::invalid_argument,
                        entry.empty() ? "empty entry (two commas in a row, or one at an end)"
                                      : "empty key in '" + std::string(entry) + "'");
    }
    if (seen.find("," + std::string(key) + ",") != std::string::npos) {
      return spec_error(spec_text, Errc::invalid_argument, std::string(key) + " given twice");
    }
    const bool known = key == "drop" || key == "corrupt" || key == "dup" || key == "reorder" ||
                       key == "delay" || key == "blackhole" || key == "rail" || key == "after" ||
                       key == "for" || key == "seed";
    if (!known) {
      return spec_error(spec_text, Errc::invalid_argument,
                        "unknown key '" + std::string(key) + "' (known: " + std::string(kKnownKeys) + ")");
    }
    seen += std::string(key) + ",";
    if (key != "blackhole" && value.empty()) {
      return spec_error(spec_text, Errc::invalid_argument, std::string(key) + " needs a value (" +
                                                               std::string(key) + "=...)");
    }

    Status status;
    auto take = [&status](auto result, auto& field) {
      if (result) {
        field = *result;
      } else {
        status = result.status();
      }
    };
    if (key == "drop") {
      take(parse_probability(key, value), spec.drop);
    } else if (key == "corrupt") {
      take(parse_probability(key, value), spec.corrupt);
    } else if (key == "dup") {
      take(parse_probability(key, value), spec.dup);
    } else if (key == "reorder") {
      take(parse_probability(key, value), spec.reorder);
    } else if (key == "delay") {
      take(parse_time(key, value), spec.delay);
    } else if (key == "after" || key == "for") {
      auto bound = parse_bound(key, value);
      if (!bound) {
        status = bound.status();
      } else if (key == "after") {
        spec.after = bound->time;
        spec.after_bytes = bound->bytes;
      } else if (bound->bytes) {
        spec.lasts_bytes = bound->bytes;
      } else {
        spec.lasts = bound->time;
      }
    } else if (key == "seed") {
      take(parse_seed(value), spec.seed);
    } else if (key == "rail") {
      status = check_rail(value);
      if (status) spec.rail = std::string(value);
    } else {  // blackhole
      if (has_value) {
        auto on = base::parse_bool(value);
        if (on) {
          spec.blackhole = *on;
        } else {
          status = Status(on.code(), "blackhole: " + on.status().message());
        }
      } else {
        spec.blackhole = true;
      }
    }
    if (!status) return spec_error(spec_text, status.code(), status.message());

    if (comma == std::string_view::npos) break;
    rest.remove_prefix(comma + 1);
  }
  return spec;
}

base::Result<std::vector<FaultSpec>> parse_fault_plan(std::string_view text, std::string_view origin) {
  std::vector<FaultSpec> plan;
  std::size_t line_number = 0;
  while (!text.empty()) {
    ++line_number;
    const std::size_t newline = text.find('\n');
    std::string_view line = text.substr(0, newline);
    text.remove_prefix(newline == std::string_view::npos ? text.size() : newline + 1);
    line = line.substr(0, line.find('#'));
    while (!line.empty()) {
      const std::size_t semicolon = line.find(';');
      const std::string_view spec_text = trim(line.substr(0, semicolon));
      line.remove_prefix(semicolon == std::string_view::npos ? line.size() : semicolon + 1);
      if (spec_text.empty()) continue;
      auto spec = parse_fault_spec(spec_text);
      if (!spec) {
        return Status(spec.code(), std::string(origin) + " line " + std::to_string(line_number) + ": " +
                                       spec.status().message());
      }
      plan.push_back(std::move(*spec));
    }
  }
  return plan;
}

std::string to_string(const FaultSpec& spec) {
  std::string out;
  auto add = [&out](std::string_view key, const std::string& value) {
    if (!out.empty()) out += ',';
    out += key;
    if (!value.empty()) out += "=" + value;
  };
  if (spec.drop != 0) add("drop", real_text(spec.drop));
  if (spec.corrupt != 0) add("corrupt", real_text(spec.corrupt));
  if (spec.dup != 0) add("dup", real_text(spec.dup));
  if (spec.reorder != 0) add("reorder", real_text(spec.reorder));
  if (spec.delay.count() != 0) add("delay", duration_text(spec.delay));
  if (spec.blackhole) add("blackhole", "");
  if (!spec.rail.empty()) add("rail", spec.rail);
  if (spec.after_bytes) {
    add("after", volume_text(*spec.after_bytes));
  } else if (spec.after.count() != 0) {
    add("after", duration_text(spec.after));
  }
  if (spec.lasts_bytes) {
    add("for", volume_text(*spec.lasts_bytes));
  } else if (spec.lasts) {
    add("for", duration_text(*spec.lasts));
  }
  if (spec.seed) add("seed", std::to_string(*spec.seed));
  return out.empty() ? "drop=0" : out;
}

std::vector<FaultSpec> fault_specs_for_rail(std::span<const FaultSpec> plan, std::size_t rail_index,
                                            std::string_view rail_name) {
  const std::string index_text = std::to_string(rail_index);
  std::vector<FaultSpec> chosen;
  for (const FaultSpec& spec : plan) {
    if (spec.rail.empty() || spec.rail == index_text || (!rail_name.empty() && spec.rail == rail_name)) {
      chosen.push_back(spec);
    }
  }
  return chosen;
}

}  // namespace ftmpi::path

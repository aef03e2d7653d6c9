#include "ftmpi/base/params.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <limits>

namespace ftmpi::base {
namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// Splits "123k" into the number and its suffix; the number must be a non-empty unsigned decimal.
Result<std::pair<std::uint64_t, std::string>> split_number(std::string_view text, std::string_view what) {
  text = trim(text);
  std::uint64_t number = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), number);
  if (ec == std::errc::result_out_of_range) {
    return Status(Errc::out_of_range, std::string(what) + " '" + std::string(text) + "' is too large");
  }
  if (ec != std::errc() || end == text.data()) {
    return Status(Errc::invalid_argument,
                  "'" + std::string(text) + "' is not a " + std::string(what));
  }
  return std::pair{number, lower(trim(std::string_view(end, text.data() + text.size() - end)))};
}

bool mul_overflows(std::uint64_t a, std::uint64_t b, std::uint64_t& out) {
  return __builtin_mul_overflow(a, b, &out);
}

}  // namespace

std::string_view to_string(ParamType type) noexcept {
  switch (type) {
    case ParamType::boolean: return "bool";
    case ParamType::integer: return "int";
    case ParamType::size: return "size";
    case ParamType::duration: return "duration";
    case ParamType::real: return "real";
    case ParamType::string: return "string";
  }
  return "?";
}

std::string_view to_string(ParamLevel level) noexcept {
  switch (level) {
    case ParamLevel::basic: return "basic";
    case ParamLevel::advanced: return "advanced";
    case ParamLevel::debug: return "debug";
  }
  return "?";
}

std::string_view to_string(ParamScope scope) noexcept {
  return scope == ParamScope::job ? "job" : "rank";
}

std::string env_name(std::string_view dotted) {
  std::string out = "FTMPI_";
  for (char c : dotted) {
    out += (c == '.' || c == '-') ? '_' : static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  }
  return out;
}

Result<bool> parse_bool(std::string_view text) {
  const std::string t = lower(trim(text));
  if (t == "1" || t == "true" || t == "yes" || t == "on") return true;
  if (t == "0" || t == "false" || t == "no" || t == "off") return false;
  return Status(Errc::invalid_argument, "'" + std::string(text) + "' is not a boolean (true/false)");
}

Result<std::int64_t> parse_integer(std::string_view text) {
  text = trim(text);
  std::int64_t value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec == std::errc::result_out_of_range) {
    return Status(Errc::out_of_range, "integer '" + std::string(text) + "' is out of range");
  }
  if (ec != std::errc() || end != text.data() + text.size() || text.empty()) {
    return Status(Errc::invalid_argument, "'" + std::string(text) + "' is not an integer");
  }
  return value;
}

Result<std::uint64_t> parse_size(std::string_view text) {
  auto parts = split_number(text, "size");
  if (!parts) return parts.status();
  auto [number, suffix] = *parts;
  std::uint64_t scale = 1;
  if (suffix.empty() || suffix == "b") {
    scale = 1;
  } else if (suffix == "k" || suffix == "kb" || suffix == "kib") {
    scale = 1ULL << 10;
  } else if (suffix == "m" || suffix == "mb" || suffix == "mib") {
    scale = 1ULL << 20;
  } else if (suffix == "g" || suffix == "gb" || suffix == "gib") {
    scale = 1ULL << 30;
  } else {
    return Status(Errc::invalid_argument,
                  "size '" + std::string(text) + "' has unknown unit '" + suffix + "' (use k, m or g)");
  }
  std::uint64_t bytes = 0;
  if (mul_overflows(number, scale, bytes)) {
    return Status(Errc::out_of_range, "size '" + std::string(text) + "' is too large");
  }
  return bytes;
}

Result<std::chrono::nanoseconds> parse_duration(std::string_view text) {
  auto parts = split_number(text, "duration");
  if (!parts) return parts.status();
  auto [number, suffix] = *parts;
  std::uint64_t scale = 0;
  if (suffix == "ns") {
    scale = 1;
  } else if (suffix.empty() || suffix == "us") {
    scale = 1000;
  } else if (suffix == "ms") {
    scale = 1000 * 1000;
  } else if (suffix == "s") {
    scale = 1000 * 1000 * 1000;
  } else {
    return Status(Errc::invalid_argument, "duration '" + std::string(text) + "' has unknown unit '" +
                                              suffix + "' (use ns, us, ms or s)");
  }
  std::uint64_t ns = 0;
  if (mul_overflows(number, scale, ns) || ns > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
    return Status(Errc::out_of_range, "duration '" + std::string(text) + "' is too long");
  }
  return std::chrono::nanoseconds(static_cast<std::int64_t>(ns));
}

Result<double> parse_real(std::string_view text) {
  text = trim(text);
  double value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || text.empty() || !std::isfinite(value)) {
    return Status(Errc::invalid_argument, "'" + std::string(text) + "' is not a number");
  }
  return value;
}

Status validate(const ParamRow& row, std::string_view text) {
  Status s;
  switch (row.type) {
    case ParamType::boolean: s = parse_bool(text).status(); break;
    case ParamType::integer: s = parse_integer(text).status(); break;
    case ParamType::size: s = parse_size(text).status(); break;
    case ParamType::duration: s = parse_duration(text).status(); break;
    case ParamType::real: s = parse_real(text).status(); break;
    case ParamType::string:
      if (!row.choices.empty()) {
        std::string_view rest = row.choices;
        bool found = false;
        while (!rest.empty() && !found) {
          auto bar = rest.find('|');
          found = rest.substr(0, bar) == text;
          rest = bar == std::string_view::npos ? std::string_view{} : rest.substr(bar + 1);
        }
        if (!found) {
          s = Status(Errc::invalid_argument,
                     "'" + std::string(text) + "' is not one of " + std::string(row.choices));
        }
      }
      break;
  }
  if (!s) return Status(s.code(), std::string(row.name) + ": " + s.message());
  return s;
}

Status ParamSet::add_table(std::span<const ParamRow> rows) {
  for (const ParamRow& row : rows) {
    if (find(row.name) != nullptr) {
      return Status(Errc::invalid_argument, "parameter " + std::string(row.name) + " declared twice");
    }
    if (row.help.empty()) {
      return Status(Errc::invalid_argument, "parameter " + std::string(row.name) + " has no help text");
    }
    if (Status s = validate(row, row.default_value); !s) {
      return Status(Errc::internal, "default of " + s.message());
    }
    rows_.push_back(&row);
  }
  std::sort(rows_.begin(), rows_.end(), [](auto* a, auto* b) { return a->name < b->name; });
  return {};
}

const ParamRow* ParamSet::find(std::string_view name) const {
  for (const ParamRow* row : rows_) {
    if (row->name == name) return row;
  }
  return nullptr;
}

Status ParamSet::set(std::string_view name, std::string_view value) {
  const ParamRow* row = find(trim(name));
  if (row == nullptr) {
    return Status(Errc::not_found, "unknown parameter '" + std::string(trim(name)) +
                                       "' (see --help-params for the list)");
  }
  value = trim(value);
  if (Status s = validate(*row, value); !s) return s;
  values_.insert_or_assign(std::string(row->name), std::string(value));
  return {};
}

Status ParamSet::set_assignment(std::string_view assignment) {
  auto eq = assignment.find('=');
  if (eq == std::string_view::npos) {
    return Status(Errc::invalid_argument,
                  "'" + std::string(assignment) + "' is not of the form name=value");
  }
  return set(assignment.substr(0, eq), assignment.substr(eq + 1));
}

Status ParamSet::load_environment(char** envp, std::span<const std::string_view> ignored_env) {
  if (envp == nullptr) return {};
  for (char** e = envp; *e != nullptr; ++e) {
    std::string_view entry(*e);
    if (!entry.starts_with("FTMPI_") || entry.starts_with(kTestEnvPrefix)) continue;
    auto eq = entry.find('=');
    if (eq == std::string_view::npos) continue;
    std::string_view var = entry.substr(0, eq);
    if (std::find(ignored_env.begin(), ignored_env.end(), var) != ignored_env.end()) continue;
    const ParamRow* match = nullptr;
    for (const ParamRow* row : rows_) {
      if (env_name(row->name) == var) match = row;
    }
    if (match == nullptr) {
      return Status(Errc::not_found, "environment variable " + std::string(var) +
                                         " names no ftmpi parameter (see --help-params)");
    }
    if (Status s = set(match->name, entry.substr(eq + 1)); !s) {
      return Status(s.code(), std::string(var) + ": " + s.message());
    }
  }
  return {};
}

std::string_view ParamSet::text(const ParamRow& row) const {
  auto it = values_.find(row.name);
  return it == values_.end() ? row.default_value : std::string_view(it->second);
}

bool ParamSet::is_overridden(const ParamRow& row) const { return values_.contains(row.name); }

std::vector<std::string> ParamSet::assignments() const {
  std::vector<std::string> out;
  for (const auto& [name, value] : values_) out.push_back(name + "=" + value);
  return out;
}

// The value was validated when set (or when the table was added), so parsing cannot fail here;
// a row that was never registered falls back to its default, which its owner's tests validate.
bool ParamSet::get_bool(const ParamRow& row) const { return parse_bool(text(row)).value(); }
std::int64_t ParamSet::get_integer(const ParamRow& row) const { return parse_integer(text(row)).value(); }
std::uint64_t ParamSet::get_size(const ParamRow& row) const { return parse_size(text(row)).value(); }
std::chrono::nanoseconds ParamSet::get_duration(const ParamRow& row) const {
  return parse_duration(text(row)).value();
}
double ParamSet::get_real(const ParamRow& row) const { return parse_real(text(row)).value(); }
std::string ParamSet::get_string(const ParamRow& row) const { return std::string(text(row)); }

std::string ParamSet::help_text(ParamLevel max_level) const {
  std::size_t width = 4;
  for (const ParamRow* row : rows_) width = std::max(width, row->name.size());
  std::string out;
  for (const ParamRow* row : rows_) {
    if (row->level > max_level) continue;
    std::string line = "  " + std::string(row->name);
    line.append(width + 2 - row->name.size(), ' ');
    line += std::string(row->help);
    line += "\n";
    line.append(width + 4, ' ');
    line += "[" + std::string(to_string(row->type));
    if (!row->choices.empty()) line += ": " + std::string(row->choices);
    line += ", default " + std::string(row->default_value);
    if (is_overridden(*row)) line += ", now " + std::string(text(*row));
    line += ", " + std::string(to_string(row->scope)) + " scope, " + std::string(to_string(row->level)) +
            ", env " + env_name(row->name) + "]\n";
    out += line;
  }
  return out;
}

}  // namespace ftmpi::base

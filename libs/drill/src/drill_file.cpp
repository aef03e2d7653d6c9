// The drill language's parser (drill_file.hpp).
#include "ftmpi/drill/drill_file.hpp"

#include <cctype>
#include <charconv>
#include <set>

#include "ftmpi/base/params.hpp"
#include "ftmpi/path/fault.hpp"

namespace ftmpi::drill {
namespace {

using base::Errc;
using base::Result;
using base::Status;

std::vector<std::string_view> words_of(std::string_view line) {
  std::vector<std::string_view> words;
  std::size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && std::isspace(static_cast<unsigned char>(line[i])) != 0) ++i;
    const std::size_t start = i;
    while (i < line.size() && std::isspace(static_cast<unsigned char>(line[i])) == 0) ++i;
    if (i > start) words.push_back(line.substr(start, i - start));
  }
  return words;
}

std::string_view rest_after(std::string_view line, std::string_view word) {
  std::string_view rest = line.substr(static_cast<std::size_t>(word.data() + word.size() - line.data()));
  while (!rest.empty() && std::isspace(static_cast<unsigned char>(rest.front())) != 0) rest.remove_prefix(1);
  while (!rest.empty() && std::isspace(static_cast<unsigned char>(rest.back())) != 0) rest.remove_suffix(1);
  return rest;
}

Result<When> parse_when(std::string_view text) {
  if (!text.empty() && (text.back() == 'B' || text.back() == 'b')) {
    auto bytes = base::parse_size(text);
    if (!bytes) return bytes.status();
    return When{{}, *bytes};
  }
  auto time = base::parse_duration(text);
  if (!time) return Status(time.code(), time.status().message() + " (or a volume of traffic such as 64MB)");
  return When{*time, std::nullopt};
}

// key=value words after the action; `allowed` lists the keys it takes.
Status parse_options(std::span<const std::string_view> words, std::initializer_list<std::string_view> allowed,
                     DrillStep& step) {
  std::set<std::string_view> seen;
  for (std::string_view word : words) {
    const std::size_t eq = word.find('=');
    const std::string_view key = word.substr(0, eq);
    const std::string_view value = eq == std::string_view::npos ? std::string_view{} : word.substr(eq + 1);
    bool known = false;
    for (std::string_view a : allowed) known = known || a == key;
    if (eq == std::string_view::npos || !known) {
      std::string keys;
      for (std::string_view a : allowed) keys += (keys.empty() ? "" : ", ") + std::string(a) + "=";
      return Status(Errc::invalid_argument, std::string(to_string(step.action)) + ": '" + std::string(word) +
                                                "' is not one of " + (keys.empty() ? "nothing" : keys));
    }
    if (value.empty()) return Status(Errc::invalid_argument, std::string(key) + "= needs a value");
    if (!seen.insert(key).second) return Status(Errc::invalid_argument, std::string(key) + "= given twice");
    if (key == "rail") {
      step.rail = std::string(value);
    } else if (key == "ranks") {
      step.ranks = std::string(value);
    } else if (key == "for") {
      auto lasts = base::parse_duration(value);
      if (!lasts) return Status(lasts.code(), "for: " + lasts.status().message());
      if (lasts->count() <= 0) return Status(Errc::invalid_argument, "for: must be above 0");
      step.lasts = *lasts;
    }
  }
  return {};
}

Result<DrillStep> parse_step(std::string_view line, const std::vector<std::string_view>& words) {
  if (words.size() < 3) return Status(Errc::invalid_argument, "'at' needs a time and an action: at 2s inject drop=0.1");
  DrillStep step;
  auto when = parse_when(words[1]);
  if (!when) return Status(when.code(), "at " + std::string(words[1]) + ": " + when.status().message());
  step.when = *when;
  step.text = std::string(rest_after(line, words[1]));
  const std::string_view action = words[2];
  const std::span<const std::string_view> rest(words.begin() + 3, words.end());
  if (action == "inject") {
    step.action = Action::inject;
    if (rest.empty()) return Status(Errc::invalid_argument, "inject needs a fault SPEC: inject drop=0.05,rail=1");
    auto spec = path::parse_fault_spec(rest[0]);
    if (!spec) return spec.status();
    if (auto s = parse_options(rest.subspan(1), {"rail", "ranks", "for"}, step); !s) return s;
    if (!spec->rail.empty() && !step.rail.empty() && spec->rail != step.rail) {
      return Status(Errc::invalid_argument, "the SPEC names rail '" + spec->rail + "' and rail= '" + step.rail + "'");
    }
    if (step.rail.empty()) step.rail = spec->rail;
    if (step.lasts && spec->lasts) return Status(Errc::invalid_argument, "for given in the SPEC and as for=");
    if (step.lasts) spec->lasts = step.lasts;
    if (spec->lasts_bytes) {
      return Status(Errc::invalid_argument, "a drill's fault lasts a time (for=3s), not a volume");
    }
    step.lasts = spec->lasts;
    spec->rail.clear();
    step.spec = path::to_string(*spec);
  } else if (action == "clear") {
    step.action = Action::clear;
    if (auto s = parse_options(rest, {"rail", "ranks"}, step); !s) return s;
  } else if (action == "disable" || action == "enable") {
    step.action = action == "disable" ? Action::disable : Action::enable;
    if (auto s = parse_options(rest, action == "disable" ? std::initializer_list<std::string_view>{"rail", "ranks", "for"}
                                                         : std::initializer_list<std::string_view>{"rail", "ranks"},
                               step);
        !s) {
      return s;
    }
    if (step.rail.empty()) return Status(Errc::invalid_argument, std::string(action) + " needs rail=R");
  } else if (action == "run") {
    step.action = Action::run;
    step.command = std::string(rest_after(line, words[2]));
  } else {
    return Status(Errc::invalid_argument,
                  "unknown action '" + std::string(action) + "' (known: inject, clear, disable, enable, run)");
  }
  return step;
}

Result<Compare> parse_compare(std::string_view op) {
  if (op == "=" || op == "==") return Compare::eq;
  if (op == "<") return Compare::lt;
  if (op == "<=") return Compare::le;
  if (op == ">") return Compare::gt;
  if (op == ">=") return Compare::ge;
  return Status(Errc::invalid_argument, "'" + std::string(op) + "' is not one of =, <, <=, >, >=");
}

bool is_counter_name(std::string_view name) {
  return !name.empty() && std::all_of(name.begin(), name.end(), [](char c) { return std::islower(static_cast<unsigned char>(c)) != 0 || c == '_'; });
}

Result<DrillExpectation> parse_expectation(std::string_view line, const std::vector<std::string_view>& words) {
  if (words.size() < 2) return Status(Errc::invalid_argument, "'expect' needs what: expect exit 0, expect stall < 2s");
  DrillExpectation e;
  e.name = std::string(words[1]);
  e.text = std::string(rest_after(line, words[0]));
  const bool duration = e.name == "stall" || e.name == "failback";
  const bool defaulted = e.name == "exit" || e.name == "corrupt_bytes";
  if (e.name == "corruption_detected") {
    if (words.size() != 2) return Status(Errc::invalid_argument, "corruption_detected takes no value");
    return e;
  }
  if (!is_counter_name(e.name)) {
    return Status(Errc::invalid_argument, "'" + e.name + "' is not an expectation (exit, corruption_detected, "
                                          "corrupt_bytes, stall, failback, or a counter such as retransmits)");
  }
  if (words.size() == 2 && defaulted) return e;  // = 0
  std::string_view op_text = words.size() >= 3 ? words[2] : "";
  std::string_view value_text = words.size() >= 4 ? words[3] : "";
  // "exit 0": the operator left out.
  if (words.size() == 3 && defaulted) {
    op_text = "=";
    value_text = words[2];
  } else if (words.size() != 4) {
    return Status(Errc::invalid_argument, "expect " + e.name + " needs an operator and a value: expect " + e.name +
                                              (duration ? " < 2s" : " = 0"));
  }
  auto op = parse_compare(op_text);
  if (!op) return op.status();
  e.op = *op;
  if (duration) {
    auto d = base::parse_duration(value_text);
    if (!d) return Status(d.code(), e.name + ": " + d.status().message());
    e.value = std::chrono::duration<double>(*d).count();
    return e;
  }
  std::int64_t n = 0;
  auto [end, ec] = std::from_chars(value_text.data(), value_text.data() + value_text.size(), n);
  if (ec != std::errc() || end != value_text.data() + value_text.size() || value_text.empty()) {
    return Status(Errc::invalid_argument, e.name + ": '" + std::string(value_text) + "' is not a whole number");
  }
  e.value = static_cast<double>(n);
  return e;
}

}  // namespace

std::string_view to_string(Action action) noexcept {
  switch (action) {
    case Action::inject: return "inject";
    case Action::clear: return "clear";
    case Action::disable: return "disable";
    case Action::enable: return "enable";
    case Action::run: return "run";
  }
  return "?";
}

std::string_view to_string(Compare op) noexcept {
  switch (op) {
    case Compare::eq: return "=";
    case Compare::lt: return "<";
    case Compare::le: return "<=";
    case Compare::gt: return ">";
    case Compare::ge: return ">=";
  }
  return "?";
}

bool holds(Compare op, double measured, double limit) noexcept {
  switch (op) {
    case Compare::eq: return measured == limit;
    case Compare::lt: return measured < limit;
    case Compare::le: return measured <= limit;
    case Compare::gt: return measured > limit;
    case Compare::ge: return measured >= limit;
  }
  return false;
}

Result<Drill> parse_drill(std::string_view text, std::string_view origin) {
  Drill drill;
  std::size_t number = 0;
  while (!text.empty()) {
    const std::size_t newline = text.find('\n');
    std::string_view line = text.substr(0, newline);
    text = newline == std::string_view::npos ? std::string_view{} : text.substr(newline + 1);
    ++number;
    // A '#' starts a comment, except inside a run command, where the shell may need it.
    const auto words_all = words_of(line);
    const bool run = words_all.size() >= 3 && words_all[0] == "at" && words_all[2] == "run";
    if (!run) line = line.substr(0, line.find('#'));
    const auto words = words_of(line);
    if (words.empty()) continue;
    auto fail = [&](const Status& s) {
      return Status(s.code(), std::string(origin) + " line " + std::to_string(number) + ": " + s.message());
    };
    if (words[0] == "at") {
      auto step = parse_step(line, words);
      if (!step) return fail(step.status());
      step->line = number;
      if (step->action == Action::run && step->command.empty()) return fail(Status(Errc::invalid_argument, "run needs a command"));
      drill.steps.push_back(std::move(*step));
    } else if (words[0] == "expect") {
      auto e = parse_expectation(line, words);
      if (!e) return fail(e.status());
      e->line = number;
      drill.expectations.push_back(std::move(*e));
    } else {
      return fail(Status(Errc::invalid_argument, "'" + std::string(words[0]) + "' is not a statement (at, expect)"));
    }
  }
  if (drill.steps.empty() && drill.expectations.empty()) {
    return Status(Errc::invalid_argument, std::string(origin) + ": no steps and no expectations");
  }
  return drill;
}

}  // namespace ftmpi::drill

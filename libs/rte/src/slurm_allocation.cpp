#include "ftmpi/rte/slurm_allocation.hpp"

#include <charconv>
#include <unordered_set>

#include "ftmpi/rte/job.hpp"

namespace ftmpi::rte {
namespace {

using base::Errc;
using base::Result;
using base::Status;

Status invalid(std::string message) { return Status(Errc::invalid_argument, std::move(message)); }

// A whole string of decimal digits (no sign, no space) as a number.
std::optional<std::uint64_t> parse_number(std::string_view text) {
  std::uint64_t value = 0;
  if (text.empty() || text.size() > 18) return std::nullopt;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

std::string zero_padded(std::uint64_t value, std::size_t width) {
  std::string digits = std::to_string(value);
  if (digits.size() < width) digits.insert(0, width - digits.size(), '0');
  return digits;
}

// The texts one bracket group stands for, in order: "01-03,7" -> 01 02 03 7. `budget` bounds how many.
Result<std::vector<std::string>> expand_group(std::string_view group, std::string_view name, std::size_t budget) {
  std::vector<std::string> out;
  auto bad = [&](std::string_view why) {
    return invalid("'" + std::string(name) + "': [" + std::string(group) + "] " + std::string(why));
  };
  if (group.empty()) return bad("is empty");
  while (true) {
    const auto comma = group.find(',');
    const std::string_view item = group.substr(0, comma);
    if (item.empty()) return bad("has an empty item");
    const auto dash = item.find('-');
    const std::string_view low_text = item.substr(0, dash);
    const std::string_view high_text = dash == std::string_view::npos ? low_text : item.substr(dash + 1);
    const auto low = parse_number(low_text);
    const auto high = parse_number(high_text);
    if (!low || !high) {
      return bad("has '" + std::string(item) + "', which is not a number or a range of numbers (N-M)");
    }
    if (*high < *low) return bad("has the range '" + std::string(item) + "', which goes down");
    if (*high - *low >= budget - out.size()) {
      return invalid("'" + std::string(name) + "' expands to more than " + std::to_string(kMaxAllocationNodes) +
                     " nodes");
    }
    for (std::uint64_t n = *low; n <= *high; ++n) out.push_back(zero_padded(n, low_text.size()));
    if (comma == std::string_view::npos) break;
    group.remove_prefix(comma + 1);
  }
  return out;
}

// Appends the names one entry of the list stands for ("node[01-03]x[1,2]") to `names`.
Status expand_entry(std::string_view entry, std::vector<std::string>& names) {
  if (entry.empty()) return invalid("empty host name");
  // Every expansion so far, each a prefix to which the rest of the entry is appended.
  std::vector<std::string> partial{""};
  const std::size_t budget = kMaxAllocationNodes - names.size();
  std::string_view rest = entry;
  while (!rest.empty()) {
    const auto open = rest.find_first_of("[]");
    if (open != std::string_view::npos && rest[open] == ']') {
      return invalid("'" + std::string(entry) + "' has a ']' without a '['");
    }
    const std::string_view literal = rest.substr(0, open);
    for (std::string& p : partial) p += literal;
    if (open == std::string_view::npos) break;
    rest.remove_prefix(open + 1);
    const auto close = rest.find_first_of("[]");
    if (close == std::string_view::npos || rest[close] == '[') {
      return invalid("'" + std::string(entry) + "' has a '[' without its ']'" +
                     (close == std::string_view::npos ? "" : " (brackets do not nest)"));
    }
    auto group = expand_group(rest.substr(0, close), entry, budget);
    if (!group) return group.status();
    if (partial.size() * group->size() > budget) {
      return invalid("'" + std::string(entry) + "' expands to more than " + std::to_string(kMaxAllocationNodes) +
                     " nodes");
    }
    std::vector<std::string> next;
    next.reserve(partial.size() * group->size());
    for (const std::string& p : partial) {
      for (const std::string& g : *group) next.push_back(p + g);
    }
    partial = std::move(next);
    rest.remove_prefix(close + 1);
  }
  for (std::string& name : partial) {
    if (Status s = check_host_name(name); !s) return s;
    names.push_back(std::move(name));
  }
  return {};
}

}  // namespace

Result<std::vector<std::string>> expand_slurm_hostlist(std::string_view list) {
  std::vector<std::string> names;
  // Entries are separated by the commas outside brackets.
  std::size_t start = 0;
  int depth = 0;
  for (std::size_t i = 0; i <= list.size(); ++i) {
    if (i < list.size() && list[i] == '[') ++depth;
    if (i < list.size() && list[i] == ']') --depth;
    if (i == list.size() || (list[i] == ',' && depth <= 0)) {
      if (Status s = expand_entry(list.substr(start, i - start), names); !s) return s;
      start = i + 1;
      depth = 0;
    }
  }
  return names;
}

Result<std::vector<std::uint64_t>> expand_slurm_tasks_per_node(std::string_view text) {
  std::vector<std::uint64_t> counts;
  while (true) {
    const auto comma = text.find(',');
    const std::string_view item = text.substr(0, comma);
    if (item.empty()) return invalid("empty item in '" + std::string(text) + "'");
    std::string_view count_text = item;
    std::uint64_t repeat = 1;
    if (const auto paren = item.find('('); paren != std::string_view::npos) {
      count_text = item.substr(0, paren);
      const std::string_view times = item.substr(paren + 1);
      const auto parsed = times.starts_with('x') && times.ends_with(')')
                              ? parse_number(times.substr(1, times.size() - 2))
                              : std::nullopt;
      if (!parsed || *parsed == 0) {
        return invalid("'" + std::string(item) + "' is not N or N(xK) with positive numbers");
      }
      repeat = *parsed;
    }
    const auto count = parse_number(count_text);
    if (!count || *count == 0 || *count > kMaxJobSize) {
      return invalid("'" + std::string(item) + "': the task count is not a number from 1 to " +
                     std::to_string(kMaxJobSize));
    }
    if (repeat > kMaxAllocationNodes - counts.size()) {
      return invalid("more than " + std::to_string(kMaxAllocationNodes) + " nodes");
    }
    counts.insert(counts.end(), repeat, *count);
    if (comma == std::string_view::npos) break;
    text.remove_prefix(comma + 1);
  }
  return counts;
}

Result<std::vector<HostSlots>> slurm_allocation_hosts(std::string_view job_nodelist,
                                                      std::string_view tasks_per_node) {
  auto names = expand_slurm_hostlist(job_nodelist);
  if (!names) return invalid("SLURM_JOB_NODELIST='" + std::string(job_nodelist) + "': " + names.status().message());
  auto counts = expand_slurm_tasks_per_node(tasks_per_node);
  if (!counts) {
    return invalid("SLURM_TASKS_PER_NODE='" + std::string(tasks_per_node) + "': " + counts.status().message());
  }
  if (names->size() != counts->size()) {
    return invalid("SLURM_JOB_NODELIST='" + std::string(job_nodelist) + "' names " + std::to_string(names->size()) +
                   (names->size() == 1 ? " node" : " nodes") + " but SLURM_TASKS_PER_NODE='" + std::string(tasks_per_node) + "' gives tasks for " +
                   std::to_string(counts->size()));
  }
  std::vector<HostSlots> hosts;
  hosts.reserve(names->size());
  std::unordered_set<std::string_view> seen;
  for (std::size_t i = 0; i < names->size(); ++i) {
    if (!seen.insert((*names)[i]).second) {
      return invalid("SLURM_JOB_NODELIST='" + std::string(job_nodelist) + "' names '" + (*names)[i] + "' twice");
    }
    hosts.push_back({(*names)[i], (*counts)[i]});
  }
  return hosts;
}

Result<std::optional<std::uint32_t>> slurm_allocation_tasks(const char* ntasks) {
  if (ntasks == nullptr) return std::optional<std::uint32_t>();
  const auto value = parse_number(ntasks);
  if (!value || *value == 0 || *value > kMaxJobSize) {
    return invalid("SLURM_NTASKS='" + std::string(ntasks) + "' is not a number from 1 to " +
                   std::to_string(kMaxJobSize));
  }
  return std::optional<std::uint32_t>(static_cast<std::uint32_t>(*value));
}

}  // namespace ftmpi::rte

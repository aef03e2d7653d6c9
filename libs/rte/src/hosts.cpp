#include "ftmpi/rte/hosts.hpp"

#include <arpa/inet.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <climits>
#include <fstream>
#include <sstream>

#include "ftmpi/rte/job.hpp"
#include "sys.hpp"

namespace ftmpi::rte {
namespace {

using base::Errc;
using base::Result;
using base::Status;

bool host_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '-' ||
         c == '_' || c == '@' || c == ':' || c == '%';
}

Result<std::uint64_t> parse_slots(std::string_view text) {
  std::uint64_t slots = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), slots);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size() || slots == 0 ||
      slots > kMaxJobSize) {
    return Status(Errc::invalid_argument, "slots '" + std::string(text) + "' is not a number from 1 to " +
                                              std::to_string(kMaxJobSize));
  }
  return slots;
}

// Adds a host, or its slots to the entry already there.
void add_host(std::vector<HostSlots>& hosts, std::string name, std::uint64_t slots) {
  auto it = std::find_if(hosts.begin(), hosts.end(), [&](const HostSlots& h) { return h.name == name; });
  if (it != hosts.end()) {
    it->slots += slots;
  } else {
    hosts.push_back({std::move(name), slots});
  }
}

// One entry of a --host list: "name", "name:slots", "[v6]" or "[v6]:slots".
Status add_host_entry(std::vector<HostSlots>& hosts, std::string_view entry) {
  std::string_view name = entry;
  std::string_view slots_text;
  if (entry.starts_with('[')) {
    const auto close = entry.find(']');
    if (close == std::string_view::npos) {
      return Status(Errc::invalid_argument, "host '" + std::string(entry) + "' has no closing ']'");
    }
    name = entry.substr(1, close - 1);
    std::string_view rest = entry.substr(close + 1);
    if (!rest.empty()) {
      if (!rest.starts_with(':')) {
        return Status(Errc::invalid_argument,
                      "host '" + std::string(entry) + "' is not [address] or [address]:slots");
      }
      slots_text = rest.substr(1);
      if (slots_text.empty()) {
        return Status(Errc::invalid_argument, "host '" + std::string(entry) + "' has no slots after ':'");
      }
    }
  } else if (const auto colon = entry.find(':');
             colon != std::string_view::npos && entry.rfind(':') == colon) {
    // One colon: name:slots. More than one: an IPv6 address without slots.
    name = entry.substr(0, colon);
    slots_text = entry.substr(colon + 1);
    if (slots_text.empty()) {
      return Status(Errc::invalid_argument, "host '" + std::string(entry) + "' has no slots after ':'");
    }
  }
  if (Status s = check_host_name(name); !s) return s;
  std::uint64_t slots = 1;
  if (!slots_text.empty()) {
    auto parsed = parse_slots(slots_text);
    if (!parsed) {
      return Status(Errc::invalid_argument,
                    "host '" + std::string(entry) + "': " + parsed.status().message());
    }
    slots = *parsed;
  }
  add_host(hosts, std::string(name), slots);
  return {};
}

std::string_view trim(std::string_view text) {
  const auto first = text.find_first_not_of(" \t\r");
  if (first == std::string_view::npos) return {};
  const auto last = text.find_last_not_of(" \t\r");
  return text.substr(first, last - first + 1);
}

}  // namespace

Status check_host_name(std::string_view name) {
  if (name.empty()) return Status(Errc::invalid_argument, "empty host name");
  if (name.size() > 255) {
    return Status(Errc::invalid_argument,
                  "host name '" + std::string(name.substr(0, 32)) + "...' is too long");
  }
  if (name.front() == '-') {
    return Status(Errc::invalid_argument, "host name '" + std::string(name) + "' starts with '-'");
  }
  for (char c : name) {
    if (!host_char(c)) {
      return Status(Errc::invalid_argument, "host name '" + std::string(name) + "' contains '" +
                                                std::string(1, c) +
                                                "' (allowed: letters, digits and . - _ @ : %)");
    }
  }
  return {};
}

Result<std::vector<HostSlots>> parse_host_list(std::string_view text) {
  std::vector<HostSlots> hosts;
  while (true) {
    const auto comma = text.find(',');
    if (Status s = add_host_entry(hosts, text.substr(0, comma)); !s) return s;
    if (comma == std::string_view::npos) break;
    text.remove_prefix(comma + 1);
  }
  return hosts;
}

Result<std::vector<HostSlots>> parse_hostfile(std::string_view text, std::string_view origin) {
  std::vector<HostSlots> hosts;
  std::size_t line_number = 0;
  while (!text.empty()) {
    ++line_number;
    const auto newline = text.find('\n');
    std::string_view line = text.substr(0, newline);
    text.remove_prefix(newline == std::string_view::npos ? text.size() : newline + 1);
    line = trim(line.substr(0, line.find('#')));
    if (line.empty()) continue;
    auto where = [&] { return std::string(origin) + ":" + std::to_string(line_number) + ": "; };
    std::vector<std::string_view> words;
    while (!line.empty()) {
      const auto space = line.find_first_of(" \t");
      words.push_back(line.substr(0, space));
      line = trim(space == std::string_view::npos ? std::string_view() : line.substr(space));
    }
    if (Status s = check_host_name(words[0]); !s) {
      return Status(Errc::invalid_argument, where() + s.message());
    }
    std::uint64_t slots = 1;
    bool slots_seen = false;
    for (std::size_t i = 1; i < words.size(); ++i) {
      const std::string_view word = words[i];
      if (!word.starts_with("slots=")) {
        return Status(Errc::invalid_argument,
                      where() + "'" + std::string(word) + "' is not slots=N (a line is: host [slots=N])");
      }
      if (slots_seen) return Status(Errc::invalid_argument, where() + "slots= given twice");
      auto parsed = parse_slots(word.substr(6));
      if (!parsed) return Status(Errc::invalid_argument, where() + parsed.status().message());
      slots = *parsed;
      slots_seen = true;
    }
    add_host(hosts, std::string(words[0]), slots);
  }
  if (hosts.empty()) return Status(Errc::invalid_argument, std::string(origin) + ": lists no host");
  return hosts;
}

Result<std::vector<HostSlots>> read_hostfile(const std::string& path) {
  std::ifstream in(path);
  if (!in) return sys::errno_status(Errc::invalid_argument, "cannot read hostfile '" + path + "'");
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) return sys::errno_status(Errc::io_error, "cannot read hostfile '" + path + "'");
  return parse_hostfile(text.str(), path);
}

std::uint64_t total_slots(std::span<const HostSlots> hosts) noexcept {
  std::uint64_t total = 0;
  for (const HostSlots& h : hosts) total += h.slots;
  return total;
}

Result<std::vector<std::string>> place_ranks(std::span<const HostSlots> hosts, std::uint32_t ranks,
                                             bool oversubscribe) {
  if (hosts.empty()) return Status(Errc::invalid_argument, "no hosts to place ranks on");
  const std::uint64_t slots = total_slots(hosts);
  if (ranks > slots && !oversubscribe) {
    return Status(Errc::resource_exhausted, std::to_string(ranks) + " ranks do not fit in the " +
                                                std::to_string(slots) + " slot" + (slots == 1 ? "" : "s") +
                                                " of " + std::to_string(hosts.size()) + " host" +
                                                (hosts.size() == 1 ? "" : "s") +
                                                " (use --oversubscribe to allow more ranks than slots)");
  }
  std::vector<std::string> placed;
  placed.reserve(ranks);
  for (const HostSlots& h : hosts) {
    for (std::uint64_t s = 0; s < h.slots && placed.size() < ranks; ++s) placed.push_back(h.name);
  }
  for (std::size_t next = 0; placed.size() < ranks; next = (next + 1) % hosts.size()) {
    placed.push_back(hosts[next].name);
  }
  return placed;
}

Result<std::string> local_hostname() {
  char name[HOST_NAME_MAX + 1] = {};
  if (::gethostname(name, sizeof name - 1) != 0) return sys::errno_status(Errc::internal, "gethostname");
  return std::string(name);
}

bool is_local_host(std::string_view name, std::string_view hostname) {
  if (name == "localhost" || name == "::1") return true;
  in_addr v4{};
  if (inet_pton(AF_INET, std::string(name).c_str(), &v4) == 1) return (ntohl(v4.s_addr) >> 24) == 127;
  if (name == hostname) return true;
  // "node3" names the host "node3.cluster.example", and the other way round.
  auto first_label = [](std::string_view n) { return n.substr(0, n.find('.')); };
  return !hostname.empty() && first_label(name) == first_label(hostname) &&
         (name.find('.') == std::string_view::npos || hostname.find('.') == std::string_view::npos);
}

}  // namespace ftmpi::rte

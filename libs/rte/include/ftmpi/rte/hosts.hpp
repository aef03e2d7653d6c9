// Where a job's ranks run: host lists (ftrun --host), hostfiles (--hostfile), and filling their slots.
//
//   --host a,b:2,a        a has 2 slots (listed twice), b has 2; ranks 0,1 on a, ranks 2,3 on b
//   hostfile lines        "b slots=2", "a" (1 slot), "# comment"; blank lines are skipped
//
// Ranks fill the hosts' slots in the order the hosts were first listed. More ranks than slots is an
// error unless oversubscription is allowed; then the ranks beyond the slots go round-robin, one per host
// in turn. A host is "this host" (its ranks are forked by ftrun, not started through the launch agent)
// when its name is localhost, a loopback address, or this host's name (in full or its first label).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ftmpi/base/status.hpp"

namespace ftmpi::rte {

struct HostSlots {
  std::string name;  // as the launch agent takes it: "node3", "user@node3", "10.0.0.3", "fe80::1"
  std::uint64_t slots = 1;

  bool operator==(const HostSlots&) const = default;
};

// Checks a host name before it goes to a launch agent's command line: not empty, no spaces or shell
// characters, and not starting with '-' (ssh would take it for an option).
base::Status check_host_name(std::string_view name);

// Parses "a,b:2,[fe80::1]:4": comma-separated hosts, each with an optional ":slots" (1 to kMaxJobSize;
// an IPv6 address takes slots only in brackets). A host listed again adds its slots to its first entry.
base::Result<std::vector<HostSlots>> parse_host_list(std::string_view text);

// Parses a hostfile's text: one host per line as "name [slots=N]", '#' starts a comment. Errors name
// "<origin>:<line>". Hosts listed again add their slots, as in parse_host_list.
base::Result<std::vector<HostSlots>> parse_hostfile(std::string_view text, std::string_view origin);
// Reads and parses the hostfile at `path`.
base::Result<std::vector<HostSlots>> read_hostfile(const std::string& path);

std::uint64_t total_slots(std::span<const HostSlots> hosts) noexcept;

// The host of each of `ranks` ranks (see the top of this file). resource_exhausted when there are fewer
// slots than ranks and `oversubscribe` is false, naming how many slots there are.
base::Result<std::vector<std::string>> place_ranks(std::span<const HostSlots> hosts, std::uint32_t ranks,
                                                   bool oversubscribe);

// This host's name (gethostname).
base::Result<std::string> local_hostname();

// Whether `name` means the host ftrun runs on, whose name is `hostname`.
bool is_local_host(std::string_view name, std::string_view hostname);

}  // namespace ftmpi::rte

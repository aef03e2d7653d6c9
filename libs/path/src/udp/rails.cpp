// Rail resolution: which local interface and IPv4 address each path.rails entry names.
//
// Entries may be subnets so that one spec (ftrun --rails 10.77.1.0/24,10.77.2.0/24) works on every host
// of a cluster, each host finding its own address. An interface counts as down unless it is both up
// (IFF_UP) and has carrier (IFF_RUNNING): a veth whose other end is down is IFF_UP but delivers nothing.
// hwloc does not see veth devices, so nothing here asks it; getifaddrs sees every interface.
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>
#include <string>

#include "ftmpi/path/udp.hpp"

namespace ftmpi::path {
namespace {

using base::Errc;
using base::Status;

constexpr std::uint32_t kLoopbackNet = 0x7f000000;  // 127.0.0.0/8
constexpr std::uint32_t kLoopbackAddress = 0x7f000001;

bool is_loopback_address(std::uint32_t address) { return (address & 0xff000000u) == kLoopbackNet; }

std::string_view trim(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) text.remove_suffix(1);
  return text;
}

// A decimal number of 1..max_digits digits without a leading zero (except "0" itself), consumed from the
// front of `text`.
std::optional<std::uint32_t> take_decimal(std::string_view& text, std::size_t max_digits) {
  std::size_t digits = 0;
  std::uint32_t value = 0;
  while (digits < text.size() && text[digits] >= '0' && text[digits] <= '9') {
    if (digits == max_digits) return std::nullopt;
    value = value * 10 + static_cast<std::uint32_t>(text[digits] - '0');
    ++digits;
  }
  if (digits == 0 || (digits > 1 && text.front() == '0')) return std::nullopt;
  text.remove_prefix(digits);
  return value;
}

std::string device_of(const std::string& name) { return name.substr(0, name.find(':')); }

RailAddress rail_of(std::string entry, const LocalInterface& interface, std::uint32_t address) {
  return RailAddress{std::move(entry), device_of(interface.name), address, interface.mtu};
}

// Why an interface cannot carry a rail, or "" when it can.
std::string unusable_because(const LocalInterface& interface) {
  if (!interface.up) return "interface " + interface.name + " is down";
  if (!interface.running) return "interface " + interface.name + " has no carrier (IFF_RUNNING is off)";
  if (interface.mtu <= kUdpIpOverhead) {
    return "interface " + interface.name + " has MTU " + std::to_string(interface.mtu) +
           (interface.mtu == 0 ? " (unreadable)" : "");
  }
  return "";
}

Status refuse(Errc code, std::string_view entry, const std::string& why) {
  return {code, "path.rails entry '" + std::string(entry) + "': " + why};
}

std::string list_addresses(std::span<const LocalInterface> interfaces) {
  std::string text;
  for (const LocalInterface& interface : interfaces) {
    for (std::uint32_t address : interface.ipv4) {
      text += (text.empty() ? "" : ", ") + format_ipv4(address) + " (" + interface.name + ")";
    }
  }
  return text.empty() ? "none" : text;
}

std::string list_names(std::span<const LocalInterface> interfaces) {
  std::string text;
  for (const LocalInterface& interface : interfaces) text += (text.empty() ? "" : ", ") + interface.name;
  return text.empty() ? "none" : text;
}

const LocalInterface* loopback_interface(std::span<const LocalInterface> interfaces) {
  for (const LocalInterface& interface : interfaces) {
    if (interface.loopback && interface.name.find(':') == std::string::npos) return &interface;
  }
  return nullptr;
}

base::Result<RailAddress> resolve_subnet(std::string_view entry, std::span<const LocalInterface> interfaces) {
  const std::size_t slash = entry.find('/');
  std::string_view prefix_text = entry.substr(slash + 1);
  const std::optional<std::uint32_t> network = parse_ipv4(entry.substr(0, slash));
  const std::optional<std::uint32_t> prefix = take_decimal(prefix_text, 2);
  if (!network || !prefix || !prefix_text.empty() || *prefix > 32) {
    return refuse(Errc::invalid_argument, entry, "not a subnet (expected a.b.c.d/n with n from 0 to 32)");
  }
  const std::uint32_t mask = *prefix == 0 ? 0 : ~std::uint32_t{0} << (32 - *prefix);
  std::string down;
  for (const LocalInterface& interface : interfaces) {
    for (std::uint32_t address : interface.ipv4) {
      if ((address & mask) != (*network & mask)) continue;
      if (std::string why = unusable_because(interface); !why.empty()) {
        if (down.empty()) down = "the local address " + format_ipv4(address) + " cannot be used: " + why;
        continue;
      }
      return rail_of(std::string(entry), interface, address);
    }
  }
  if (!down.empty()) return refuse(Errc::rail_down, entry, down);
  return refuse(Errc::not_found, entry,
                "no local IPv4 address in that subnet (this host has " + list_addresses(interfaces) + ")");
}

base::Result<RailAddress> resolve_address(std::string_view entry, std::uint32_t address,
                                          std::span<const LocalInterface> interfaces) {
  const LocalInterface* holder = nullptr;
  for (const LocalInterface& interface : interfaces) {
    if (std::find(interface.ipv4.begin(), interface.ipv4.end(), address) != interface.ipv4.end()) {
      holder = &interface;
      break;
    }
  }
  // Linux routes all of 127.0.0.0/8 to lo, though lo lists only 127.0.0.1.
  if (holder == nullptr && is_loopback_address(address)) {
    holder = loopback_interface(interfaces);
    if (holder == nullptr) return refuse(Errc::not_found, entry, "this host has no loopback interface");
  }
  if (holder == nullptr) {
    return refuse(Errc::not_found, entry,
                  "not an address of this host (it has " + list_addresses(interfaces) + ")");
  }
  if (std::string why = unusable_because(*holder); !why.empty()) return refuse(Errc::rail_down, entry, why);
  return rail_of(std::string(entry), *holder, address);
}

base::Result<RailAddress> resolve_interface(std::string_view entry, std::span<const LocalInterface> interfaces) {
  for (const LocalInterface& interface : interfaces) {
    if (interface.name != entry) continue;
    if (std::string why = unusable_because(interface); !why.empty()) return refuse(Errc::rail_down, entry, why);
    if (interface.ipv4.empty()) {
      return refuse(Errc::not_found, entry, "interface " + interface.name + " has no IPv4 address");
    }
    return rail_of(std::string(entry), interface, interface.ipv4.front());
  }
  return refuse(Errc::not_found, entry, "no interface of that name (this host has " + list_names(interfaces) + ")");
}

base::Result<RailAddress> resolve_entry(std::string_view entry, std::span<const LocalInterface> interfaces) {
  if (entry.find(':') != std::string_view::npos && entry.find('.') == std::string_view::npos &&
      entry.find_first_not_of("0123456789abcdefABCDEF:/") == std::string_view::npos) {
    return refuse(Errc::unsupported, entry, "IPv6 rails are not supported yet");
  }
  if (entry.find('/') != std::string_view::npos) return resolve_subnet(entry, interfaces);
  if (const std::optional<std::uint32_t> address = parse_ipv4(entry)) {
    return resolve_address(entry, *address, interfaces);
  }
  if (entry.find_first_not_of("0123456789.") == std::string_view::npos) {
    return refuse(Errc::invalid_argument, entry, "not a valid IPv4 address");
  }
  return resolve_interface(entry, interfaces);
}

std::vector<RailAddress> every_usable_interface(std::span<const LocalInterface> interfaces) {
  std::vector<const LocalInterface*> usable;
  for (const LocalInterface& interface : interfaces) {
    // Address labels ("eth0:1") are the same device as their parent: one rail per device.
    if (interface.loopback || interface.ipv4.empty() || interface.name.find(':') != std::string::npos ||
        !unusable_because(interface).empty()) {
      continue;
    }
    usable.push_back(&interface);
  }
  std::sort(usable.begin(), usable.end(),
            [](const LocalInterface* a, const LocalInterface* b) { return a->name < b->name; });
  std::vector<RailAddress> rails;
  for (const LocalInterface* interface : usable) {
    rails.push_back(rail_of(interface->name, *interface, interface->ipv4.front()));
  }
  return rails;
}

}  // namespace

std::optional<std::uint32_t> parse_ipv4(std::string_view text) noexcept {
  std::uint32_t address = 0;
  for (int part = 0; part < 4; ++part) {
    if (part > 0) {
      if (text.empty() || text.front() != '.') return std::nullopt;
      text.remove_prefix(1);
    }
    const std::optional<std::uint32_t> byte = take_decimal(text, 3);
    if (!byte || *byte > 255) return std::nullopt;
    address = address << 8 | *byte;
  }
  if (!text.empty()) return std::nullopt;
  return address;
}

std::string format_ipv4(std::uint32_t address) {
  return std::to_string(address >> 24) + "." + std::to_string((address >> 16) & 0xff) + "." +
         std::to_string((address >> 8) & 0xff) + "." + std::to_string(address & 0xff);
}

base::Result<std::vector<LocalInterface>> local_interfaces() {
  ifaddrs* list = nullptr;
  if (::getifaddrs(&list) != 0) {
    return Status(Errc::io_error, std::string("cannot list network interfaces: getifaddrs: ") + std::strerror(errno));
  }
  std::unique_ptr<ifaddrs, void (*)(ifaddrs*)> owner(list, ::freeifaddrs);
  std::vector<LocalInterface> interfaces;
  for (const ifaddrs* entry = list; entry != nullptr; entry = entry->ifa_next) {
    if (entry->ifa_name == nullptr) continue;
    auto it = std::find_if(interfaces.begin(), interfaces.end(),
                           [&](const LocalInterface& i) { return i.name == entry->ifa_name; });
    LocalInterface& interface = it != interfaces.end() ? *it : interfaces.emplace_back();
    interface.name = entry->ifa_name;
    interface.up = (entry->ifa_flags & IFF_UP) != 0;
    interface.running = (entry->ifa_flags & IFF_RUNNING) != 0;
    interface.loopback = (entry->ifa_flags & IFF_LOOPBACK) != 0;
    if (entry->ifa_addr != nullptr && entry->ifa_addr->sa_family == AF_INET) {
      ::sockaddr_in address{};
      std::memcpy(&address, entry->ifa_addr, sizeof address);
      interface.ipv4.push_back(ntohl(address.sin_addr.s_addr));
    }
  }
  const int probe = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  for (LocalInterface& interface : interfaces) {
    ::ifreq request{};
    const std::string device = device_of(interface.name);
    if (probe < 0 || device.size() >= sizeof request.ifr_name) continue;
    std::memcpy(request.ifr_name, device.c_str(), device.size() + 1);
    if (::ioctl(probe, SIOCGIFMTU, &request) == 0 && request.ifr_mtu > 0) {
      interface.mtu = static_cast<std::uint32_t>(request.ifr_mtu);
    }
  }
  if (probe >= 0) ::close(probe);
  std::sort(interfaces.begin(), interfaces.end(),
            [](const LocalInterface& a, const LocalInterface& b) { return a.name < b.name; });
  return interfaces;
}

base::Result<std::vector<RailAddress>> resolve_rails(std::string_view spec) {
  base::Result<std::vector<LocalInterface>> interfaces = local_interfaces();
  if (!interfaces) return interfaces.status();
  return resolve_rails(spec, *interfaces);
}

base::Result<std::vector<RailAddress>> resolve_rails(std::string_view spec,
                                                     std::span<const LocalInterface> interfaces) {
  std::vector<RailAddress> rails;
  if (trim(spec).empty()) {
    rails = every_usable_interface(interfaces);
    if (rails.empty()) {
      const LocalInterface* lo = loopback_interface(interfaces);
      if (lo == nullptr) {
        return Status(Errc::not_found, "path.rails is empty and this host has no usable interface, not even "
                                       "a loopback one");
      }
      rails.push_back(rail_of(lo->name, *lo, kLoopbackAddress));
    }
    return rails;
  }
  for (std::size_t start = 0; start <= spec.size();) {
    const std::size_t comma = std::min(spec.find(',', start), spec.size());
    const std::string_view entry = trim(spec.substr(start, comma - start));
    start = comma + 1;
    if (entry.empty()) {
      return Status(Errc::invalid_argument, "path.rails '" + std::string(spec) + "' has an empty entry");
    }
    base::Result<RailAddress> rail = resolve_entry(entry, interfaces);
    if (!rail) return rail.status();
    for (const RailAddress& earlier : rails) {
      if (earlier.ipv4 == rail->ipv4) {
        return refuse(Errc::invalid_argument, entry,
                      "names the same address (" + format_ipv4(rail->ipv4) + ") as entry '" + earlier.name + "'");
      }
    }
    rails.push_back(std::move(*rail));
  }
  return rails;
}

}  // namespace ftmpi::path

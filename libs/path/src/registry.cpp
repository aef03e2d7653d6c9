// The path driver registry and the start-up sequence every driver follows (registry.hpp).
#include "ftmpi/path/registry.hpp"

#include <algorithm>

#include "drivers.hpp"

namespace ftmpi::path {

std::vector<std::string> split_list(std::string_view text, char separator) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t end = std::min(text.find(separator, start), text.size());
    parts.emplace_back(text.substr(start, end - start));
    start = end + 1;
  }
  return parts;
}

std::span<const Driver* const> drivers() noexcept {
  // The registry: one line per driver, host-local ones first.
  static const Driver* const kDrivers[] = {
      &shm_driver(),
      &udp_driver(),
      &verbs_driver(),
  };
  return kDrivers;
}

const Driver* find_driver(std::string_view kind) noexcept {
  for (const Driver* d : drivers()) {
    if (d->kind() == kind) return d;
  }
  return nullptr;
}

std::string driver_kinds() {
  std::string out;
  for (const Driver* d : drivers()) {
    if (!out.empty()) out += ", ";
    out += d->kind();
  }
  return out;
}

base::Result<std::vector<const Driver*>> parse_driver_kinds(std::string_view text) {
  std::vector<const Driver*> chosen;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t end = std::min(text.find(',', start), text.size());
    const std::string_view kind = text.substr(start, end - start);
    const Driver* d = find_driver(kind);
    if (d == nullptr) {
      return base::Status(base::Errc::invalid_argument,
                          "unknown path kind '" + std::string(kind) + "' (known: " + driver_kinds() + ")");
    }
    if (std::find(chosen.begin(), chosen.end(), d) != chosen.end()) {
      return base::Status(base::Errc::invalid_argument, "path kind '" + std::string(kind) + "' is given twice");
    }
    chosen.push_back(d);
    start = end + 1;
  }
  // Registry order: the preference among them does not depend on how the user listed them.
  std::vector<const Driver*> ordered;
  for (const Driver* d : drivers()) {
    if (std::find(chosen.begin(), chosen.end(), d) != chosen.end()) ordered.push_back(d);
  }
  return ordered;
}

base::Result<std::vector<std::vector<std::unique_ptr<Path>>>> start_drivers(std::span<const DriverStart> starts,
                                                                             const JobView& job,
                                                                             AddressExchange& exchange) {
  std::vector<std::unique_ptr<Endpoint>> endpoints;
  for (const DriverStart& start : starts) {
    const std::string kind(start.driver->kind());
    auto opened = start.driver->open(job);
    if (!opened) return opened.status().prefixed("opening " + kind);
    if (auto s = exchange.put(kind, (*opened)->address()); !s) return s.prefixed("publishing the " + kind + " address");
    endpoints.push_back(std::move(*opened));
  }
  if (auto s = exchange.fence(); !s) return s.prefixed("wire-up fence");
  for (std::size_t d = 0; d < starts.size(); ++d) {
    const std::string kind(starts[d].driver->kind());
    const std::vector<bool>& peers = starts[d].peers;
    for (Rank r = 0; r < job.size; ++r) {
      if (r >= peers.size() || !peers[r]) continue;
      auto theirs = exchange.get(r, kind);
      if (!theirs) return theirs.status().prefixed("reading rank " + std::to_string(r) + "'s " + kind + " address");
      if (auto s = endpoints[d]->connect(r, *theirs); !s) {
        return s.prefixed("rank " + std::to_string(r) + "'s " + kind + " address");
      }
    }
    if (auto s = endpoints[d]->connected(); !s) return s.prefixed(kind);
  }
  if (auto s = exchange.fence(); !s) return s.prefixed("wire-up fence");
  std::vector<std::vector<std::unique_ptr<Path>>> paths;
  for (std::size_t d = 0; d < starts.size(); ++d) {
    if (auto s = endpoints[d]->finish(); !s) return s.prefixed(std::string(starts[d].driver->kind()));
    paths.push_back(endpoints[d]->take_paths());
  }
  return paths;
}

}  // namespace ftmpi::path

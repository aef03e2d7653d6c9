// The UDP driver (registry.hpp): one UdpPath per rail of path.rails, each published as
// "address:short:long[:send]/max_frame" (its sockets, and the largest frame it takes, so that no peer sends it
// more), rails separated by ';', "-" for a rail that does not work on this rank. Rail k talks to rail k.
#include <algorithm>
#include <optional>

#include "../drivers.hpp"
#include "ftmpi/base/log.hpp"
#include "ftmpi/path/params.hpp"
#include "ftmpi/path/udp.hpp"

namespace ftmpi::path {
namespace {

constexpr base::ParamRow kUdpParams[] = {kRails, kUdpMaxFrame, kUdpSendBuffer, kUdpReceiveBuffer, kUdpPlace,
                                         kUdpGso, kUdpGro, kUdpConnectedPeers};

// The rails this process can use, by index: nullopt where a rail does not work here, which is reported
// and left out. An entry that cannot be a rail at all is an error.
base::Result<std::vector<std::optional<RailAddress>>> local_rails(const std::string& spec) {
  std::vector<std::optional<RailAddress>> rails;
  if (spec.empty()) {
    auto all = resolve_rails("");
    if (!all) return all.status();
    for (auto& rail : *all) rails.emplace_back(std::move(rail));
    return rails;
  }
  for (const std::string& entry : split_list(spec, ',')) {
    auto one = resolve_rails(entry);
    if (one) {
      rails.emplace_back(std::move(one->front()));
    } else if (one.code() == base::Errc::invalid_argument || one.code() == base::Errc::unsupported) {
      return one.status().prefixed("path.rails");
    } else {
      base::logger().warn("rail {} '{}' is left out: {}", rails.size(), entry, one.status().to_string());
      rails.emplace_back(std::nullopt);
    }
  }
  return rails;
}

class UdpEndpoint final : public Endpoint {
 public:
  explicit UdpEndpoint(std::vector<std::unique_ptr<UdpPath>> paths) : paths_(std::move(paths)) {}

  std::string address() const override {
    std::string published;
    for (std::size_t k = 0; k < paths_.size(); ++k) {
      if (k > 0) published += ';';
      published += paths_[k] ? paths_[k]->endpoint() + "/" + std::to_string(paths_[k]->info().max_frame) : "-";
    }
    return published;
  }

  base::Status connect(Rank peer, std::string_view address) override {
    const std::vector<std::string> endpoints = split_list(address, ';');
    for (std::size_t k = 0; k < paths_.size() && k < endpoints.size(); ++k) {
      if (!paths_[k] || endpoints[k] == "-") continue;
      const std::size_t slash = endpoints[k].find('/');
      std::size_t max_frame = 0;
      if (slash != std::string::npos) {
        const std::string size = endpoints[k].substr(slash + 1);
        if (size.empty() || size.find_first_not_of("0123456789") != std::string::npos || size.size() > 9) {
          return base::Status(base::Errc::invalid_argument, "a bad frame size '" + size + "' on rail " + std::to_string(k));
        }
        max_frame = std::stoul(size);
      }
      if (auto s = paths_[k]->add_peer(peer, std::string_view(endpoints[k]).substr(0, slash), max_frame); !s) {
        return s.prefixed("rail " + std::to_string(k));
      }
    }
    return {};
  }

  std::vector<std::unique_ptr<Path>> take_paths() override {
    std::vector<std::unique_ptr<Path>> paths;
    for (auto& p : paths_) paths.push_back(std::move(p));
    return paths;
  }

 private:
  std::vector<std::unique_ptr<UdpPath>> paths_;  // by rail; null where the rail does not work here
};

class UdpDriver final : public Driver {
 public:
  std::string_view kind() const noexcept override { return "udp"; }
  std::string_view summary() const noexcept override {
    return "UDP over every rail of path.rails (two sockets each: eager and bulk), reliable end to end";
  }
  DriverCaps caps() const noexcept override { return {.host_local = false, .rails = true}; }
  std::span<const base::ParamRow> params() const noexcept override { return kUdpParams; }

  base::Result<std::unique_ptr<Endpoint>> open(const JobView& job) const override {
    std::string spec = job.params->get_string(kRails);
    if (spec.empty() && job.one_host) spec = "127.0.0.1";  // UDP forced between ranks of one host
    auto rails = local_rails(spec);
    if (!rails) return rails.status();
    UdpOptions options = UdpOptions::from_params(*job.params);
    options.peers = job.size;
    std::vector<std::unique_ptr<UdpPath>> paths(rails->size());
    for (std::size_t k = 0; k < rails->size(); ++k) {
      const auto& rail = (*rails)[k];
      if (!rail) continue;
      auto made = UdpPath::create(*rail, options);
      if (made) {
        paths[k] = std::move(*made);
      } else {
        base::logger().warn("rail {} '{}' is left out: {}", k, rail->name, made.status().to_string());
      }
    }
    return std::unique_ptr<Endpoint>(std::make_unique<UdpEndpoint>(std::move(paths)));
  }
};

}  // namespace

const Driver& udp_driver() noexcept {
  static const UdpDriver driver;
  return driver;
}

}  // namespace ftmpi::path

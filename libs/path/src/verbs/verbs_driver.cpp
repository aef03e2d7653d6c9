// The verbs UD driver (registry.hpp): one VerbsPath per rail, each a device and port path.verbs.device
// names, published as their VerbsAddresses separated by ';' ("-" where a rail does not work here). A
// rank without a usable device, or a peer whose address cannot be used, is said in a warning and left to
// the job's other rails: the engine refuses to start only when no rail at all reaches some rank.
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "../drivers.hpp"
#include "emulated_device.hpp"
#include "ftmpi/base/log.hpp"
#include "ftmpi/path/params.hpp"
#include "ftmpi/path/udp.hpp"
#include "verbs_path.hpp"

namespace ftmpi::path {
namespace {

constexpr base::ParamRow kVerbsParams[] = {kVerbsDevice,        kVerbsPort,          kVerbsGidIndex,
                                           kVerbsRecvBuffers,   kVerbsSendBuffers,   kVerbsSendQps,
                                           kVerbsEmulatedAddress, kVerbsEmulatedPortDown,
                                           kVerbsEmulatedPortDownAfterSends};

// The job's QKey: every rank derives the same one from the job's name, and a datagram from another job
// on the same fabric carries another and is dropped by the device.
std::uint32_t job_qkey(std::string_view job_prefix) noexcept {
  std::uint32_t hash = 2166136261U;
  for (char c : job_prefix) hash = (hash ^ static_cast<std::uint8_t>(c)) * 16777619U;
  hash &= 0x7fffffffU;
  return hash == 0 ? 1 : hash;
}

// Rail k of every rank talks to rail k of its peers, as on UDP: published as the rails' addresses
// separated by ';', "-" for a rail that does not work on this rank.
class VerbsEndpoint final : public Endpoint {
 public:
  explicit VerbsEndpoint(std::vector<std::unique_ptr<verbs::VerbsPath>> paths) : paths_(std::move(paths)) {}

  std::string address() const override {
    std::string published;
    for (std::size_t k = 0; k < paths_.size(); ++k) {
      if (k > 0) published += ';';
      published += paths_[k] ? paths_[k]->address() : "-";
    }
    return published.empty() ? "-" : published;
  }

  base::Status connect(Rank peer, std::string_view address) override {
    const std::vector<std::string> rails = split_list(address, ';');
    for (std::size_t k = 0; k < paths_.size() && k < rails.size(); ++k) {
      if (!paths_[k] || rails[k] == "-") continue;
      if (auto s = paths_[k]->add_peer(peer, rails[k]); !s) {
        base::logger().warn("verbs: rank {}'s address on rail {} cannot be used ({}): that rail does not reach it",
                            peer, k, s.message());
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
  std::vector<std::unique_ptr<verbs::VerbsPath>> paths_;  // by rail; null where a rail does not work here
};

class VerbsDriver final : public Driver {
 public:
  std::string_view kind() const noexcept override { return "verbs"; }
  std::string_view summary() const noexcept override {
    return "InfiniBand/RoCE unreliable datagrams through libibverbs (path.verbs.device), reliable end to end";
  }
  DriverCaps caps() const noexcept override { return {.host_local = false, .rails = true}; }
  std::span<const base::ParamRow> params() const noexcept override { return kVerbsParams; }

  // One rail per entry of path.verbs.device ("mlx5_0", "mlx5_0:2"), or the first active port when it is
  // empty; with "emulated", one rail per address of path.verbs.emulated.address.
  base::Result<std::unique_ptr<Endpoint>> open(const JobView& job) const override {
    const verbs::VerbsOptions common = [&] {
      verbs::VerbsOptions o = verbs::VerbsOptions::from_params(*job.params);
      o.peers = job.size;
      o.qkey = job_qkey(job.shm_prefix);
      return o;
    }();
    std::vector<std::unique_ptr<verbs::VerbsPath>> paths;
    const auto left_out = [&](std::size_t rail, std::string_view what, std::string_view why) {
      base::logger().warn("verbs: rank {} has no verbs rail {} ('{}'): {}", job.rank, rail, what, why);
      paths.push_back(nullptr);
    };
    if (common.device == "emulated") {
      verbs::EmulatedConfig config;
      config.port_down = job.params->get_bool(kVerbsEmulatedPortDown);
      const std::int64_t after = job.params->get_integer(kVerbsEmulatedPortDownAfterSends);
      config.port_down_after_sends = after > 0 ? static_cast<std::uint64_t>(after) : 0;
      const std::vector<std::string> entries = split_list(job.params->get_string(kVerbsEmulatedAddress), ',');
      for (std::size_t k = 0; k < entries.size(); ++k) {
        // An interface, address or subnet, as path.rails takes them: one value serves every host.
        auto rail = resolve_rails(entries[k]);
        if (!rail) {
          left_out(k, entries[k], "path.verbs.emulated.address: " + rail.status().message());
          continue;
        }
        config.address = format_ipv4(rail->front().ipv4);
        verbs::configure_emulated_verbs(config);
        auto path = verbs::VerbsPath::open(verbs::emulated_verbs(), common);
        if (!path) {
          left_out(k, entries[k], path.status().message());
          continue;
        }
        paths.push_back(std::move(*path));
      }
    } else {
      const std::vector<std::string> entries = common.device.empty() ? std::vector<std::string>{""}
                                                                     : split_list(common.device, ',');
      for (std::size_t k = 0; k < entries.size(); ++k) {
        verbs::VerbsOptions options = common;
        const std::size_t colon = entries[k].find(':');
        options.device = entries[k].substr(0, colon);
        if (colon != std::string::npos) {
          const std::string port = entries[k].substr(colon + 1);
          if (port.empty() || port.size() > 3 || port.find_first_not_of("0123456789") != std::string::npos ||
              std::stoi(port) < 1 || std::stoi(port) > 255) {
            return base::Status(base::Errc::invalid_argument,
                                "path.verbs.device: bad port in '" + entries[k] + "' (device:port, from 1)");
          }
          options.port = static_cast<std::uint8_t>(std::stoi(port));
        }
        auto path = verbs::VerbsPath::open(verbs::real_verbs(), options);
        if (!path) {
          left_out(k, entries[k].empty() ? "first active port" : entries[k], path.status().message());
          continue;
        }
        paths.push_back(std::move(*path));
      }
    }
    return std::unique_ptr<Endpoint>(std::make_unique<VerbsEndpoint>(std::move(paths)));
  }
};

}  // namespace

const Driver& verbs_driver() noexcept {
  static const VerbsDriver driver;
  return driver;
}

}  // namespace ftmpi::path

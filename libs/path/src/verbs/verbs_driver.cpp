// The verbs UD driver (registry.hpp): one VerbsPath, the rail of the device and port path.verbs.* name,
// published as its VerbsAddress ("-" where it does not work on this rank). A rank without a usable
// device, or a peer whose address cannot be used, is said in a warning and left to the job's other
// rails: the engine refuses to start only when no rail at all reaches some rank.
#include <cstdint>

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

class VerbsEndpoint final : public Endpoint {
 public:
  explicit VerbsEndpoint(std::unique_ptr<verbs::VerbsPath> path) : path_(std::move(path)) {}

  std::string address() const override { return path_ ? path_->address() : "-"; }

  base::Status connect(Rank peer, std::string_view address) override {
    if (!path_ || address == "-") return {};
    if (auto s = path_->add_peer(peer, address); !s) {
      base::logger().warn("verbs: rank {}'s address cannot be used ({}): the verbs rail does not reach it",
                          peer, s.message());
    }
    return {};
  }

  std::vector<std::unique_ptr<Path>> take_paths() override {
    std::vector<std::unique_ptr<Path>> paths;
    paths.push_back(std::move(path_));
    return paths;
  }

 private:
  std::unique_ptr<verbs::VerbsPath> path_;  // null where no device works on this rank
};

class VerbsDriver final : public Driver {
 public:
  std::string_view kind() const noexcept override { return "verbs"; }
  std::string_view summary() const noexcept override {
    return "InfiniBand/RoCE unreliable datagrams through libibverbs (path.verbs.device), reliable end to end";
  }
  DriverCaps caps() const noexcept override { return {.host_local = false, .rails = true}; }
  std::span<const base::ParamRow> params() const noexcept override { return kVerbsParams; }

  base::Result<std::unique_ptr<Endpoint>> open(const JobView& job) const override {
    verbs::VerbsOptions options = verbs::VerbsOptions::from_params(*job.params);
    options.peers = job.size;
    options.qkey = job_qkey(job.shm_prefix);
    const verbs::VerbsApi* api = &verbs::real_verbs();
    if (options.device == "emulated") {
      verbs::EmulatedConfig config;
      // An interface, address or subnet, as path.rails takes them: one value serves every host.
      auto where = resolve_rails(job.params->get_string(kVerbsEmulatedAddress));
      if (!where) {
        base::logger().warn("verbs: rank {} has no verbs rail: path.verbs.emulated.address: {}", job.rank,
                            where.status().message());
        return std::unique_ptr<Endpoint>(std::make_unique<VerbsEndpoint>(nullptr));
      }
      config.address = format_ipv4(where->front().ipv4);
      config.port_down = job.params->get_bool(kVerbsEmulatedPortDown);
      const std::int64_t after = job.params->get_integer(kVerbsEmulatedPortDownAfterSends);
      config.port_down_after_sends = after > 0 ? static_cast<std::uint64_t>(after) : 0;
      verbs::configure_emulated_verbs(config);
      api = &verbs::emulated_verbs();
    }
    auto path = verbs::VerbsPath::open(*api, options);
    if (!path) {
      base::logger().warn("verbs: rank {} has no verbs rail: {}", job.rank, path.status().message());
      return std::unique_ptr<Endpoint>(std::make_unique<VerbsEndpoint>(nullptr));
    }
    return std::unique_ptr<Endpoint>(std::make_unique<VerbsEndpoint>(std::move(*path)));
  }
};

}  // namespace

const Driver& verbs_driver() noexcept {
  static const VerbsDriver driver;
  return driver;
}

}  // namespace ftmpi::path

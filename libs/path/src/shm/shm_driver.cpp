// The shared-memory driver (registry.hpp): one segment per host, made by the host's first rank before
// the first fence, attached by every local rank before the second, its name removed after it (see
// ShmPath: nothing is left in /dev/shm once the ranks exit, however they exit).
#include <algorithm>

#include "../drivers.hpp"
#include "ftmpi/path/params.hpp"
#include "ftmpi/path/shm.hpp"

namespace ftmpi::path {
namespace {

constexpr base::ParamRow kShmParams[] = {kShmSlots, kShmSlotSize};

class ShmEndpoint final : public Endpoint {
 public:
  explicit ShmEndpoint(ShmConfig config) : config_(std::move(config)) {}

  std::string address() const override { return {}; }  // the segment's name follows from the job
  base::Status connect(Rank, std::string_view) override { return {}; }
  base::Status connected() override {
    auto attached = ShmPath::attach(config_);
    if (!attached) return attached.status();
    path_ = std::move(*attached);
    return {};
  }
  base::Status finish() override { return config_.local_rank == 0 ? path_->unlink_name() : base::Status{}; }
  std::vector<std::unique_ptr<Path>> take_paths() override {
    std::vector<std::unique_ptr<Path>> paths;
    paths.push_back(std::move(path_));
    return paths;
  }

 private:
  ShmConfig config_;
  std::unique_ptr<ShmPath> path_;
};

class ShmDriver final : public Driver {
 public:
  std::string_view kind() const noexcept override { return "shm"; }
  std::string_view summary() const noexcept override {
    return "shared memory between the ranks of one host (single-writer FIFOs; single copy for large messages)";
  }
  DriverCaps caps() const noexcept override { return {.host_local = true, .rails = false}; }
  std::span<const base::ParamRow> params() const noexcept override { return kShmParams; }

  base::Result<std::unique_ptr<Endpoint>> open(const JobView& job) const override {
    auto geometry = ShmGeometry::from_params(*job.params);
    if (!geometry) return geometry.status();
    ShmConfig config;
    config.name = "/" + job.shm_prefix + "shm-" + std::to_string(job.local.front());
    config.local_rank = static_cast<std::uint32_t>(std::find(job.local.begin(), job.local.end(), job.rank) -
                                                   job.local.begin());
    config.world_ranks = job.local;
    config.geometry = *geometry;
    if (config.local_rank == 0) {
      if (auto s = ShmPath::create(config); !s) return s;
    }
    return std::unique_ptr<Endpoint>(std::make_unique<ShmEndpoint>(std::move(config)));
  }
};

}  // namespace

const Driver& shm_driver() noexcept {
  static const ShmDriver driver;
  return driver;
}

}  // namespace ftmpi::path

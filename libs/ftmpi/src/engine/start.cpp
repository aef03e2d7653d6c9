// Engine::start: from the launcher's environment to a running engine with a path to every peer.
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "engine_core.hpp"
#include "ftmpi/base/log.hpp"
#include "ftmpi/path/peer_memory.hpp"
#include "ftmpi/path/shm.hpp"
#include "ftmpi/rte/client.hpp"
#include "ftmpi/rte/job.hpp"
#include "params.hpp"
#include "threaded_engine.hpp"

extern char** environ;

namespace ftmpi::engine {
namespace {

std::string first_line(const char* file) {
  std::ifstream in(file);
  std::string line;
  std::getline(in, line);
  return line;
}

std::string namespace_of(const char* link) {
  char buf[128];
  const ssize_t n = ::readlink(link, buf, sizeof buf);
  return n > 0 ? std::string(buf, static_cast<std::size_t>(n)) : std::string();
}

// Processes that can share memory: same kernel boot, same network namespace, same mount namespace (a
// private /dev/shm is a separate mount). The hostname alone cannot tell, since namespaces share it.
std::string host_identity(const base::ParamSet& params) {
  std::string id = params.get_string(kHostId);
  if (!id.empty()) return id;
  return first_line("/proc/sys/kernel/random/boot_id") + "/" + namespace_of("/proc/self/ns/net") + "/" +
         namespace_of("/proc/self/ns/mnt");
}

base::Status with_context(const base::Status& s, std::string_view what) {
  return s ? s : base::Status(s.code(), std::string(what) + ": " + s.message());
}

}  // namespace

base::Result<std::unique_ptr<Engine>> Engine::start(const base::ParamSet& params) {
  auto config = EngineConfig::from(params);
  if (!config) return config.status();
  auto geometry = path::ShmGeometry::from_params(params);
  if (!geometry) return geometry.status();
  auto connected = rte::Client::from_environment(environ, rte::ClientOptions::from(params));
  if (!connected) return connected.status();
  auto client = std::make_shared<rte::Client>(std::move(*connected));
  const rte::JobInfo& job = client->job();

  // Which ranks share this host.
  const std::string host = host_identity(params);
  if (auto s = client->put("host", host); !s) return with_context(s, "publishing the host identity");
  if (auto s = client->fence(); !s) return with_context(s, "wire-up fence");
  std::vector<path::Rank> local;
  for (std::uint32_t r = 0; r < job.size; ++r) {
    auto theirs = client->get(r, "host");
    if (!theirs) return with_context(theirs.status(), "reading rank " + std::to_string(r) + "'s host");
    if (*theirs == host) local.push_back(r);
  }
  path::ShmConfig shm_config;
  shm_config.name = "/" + rte::shm_prefix(job.identity.job_id) + "shm-" + std::to_string(local.front());
  shm_config.local_rank = static_cast<std::uint32_t>(
      std::find(local.begin(), local.end(), job.rank) - local.begin());
  shm_config.world_ranks = local;
  shm_config.geometry = *geometry;

  // The host's first rank makes the segment, everyone attaches, then the name goes (see ShmPath).
  if (shm_config.local_rank == 0) {
    if (auto s = path::ShmPath::create(shm_config); !s) return with_context(s, "creating shared memory");
  }
  if (auto s = client->fence(); !s) return with_context(s, "wire-up fence");
  auto shm = path::ShmPath::attach(shm_config);
  if (!shm) return with_context(shm.status(), "attaching shared memory");
  if (auto s = client->fence(); !s) return with_context(s, "wire-up fence");
  if (shm_config.local_rank == 0) {
    if (auto s = (*shm)->unlink_name(); !s) return with_context(s, "unlinking shared memory");
  }
  path::ShmPath* shm_path = shm->get();

  std::vector<std::unique_ptr<path::Path>> paths;
  paths.push_back(std::move(*shm));
  for (std::uint32_t r = 0; r < job.size; ++r) {
    bool reached = false;
    for (const auto& p : paths) reached = reached || p->reaches(r);
    if (!reached) {
      return base::Status(base::Errc::peer_unreachable,
                          "rank " + std::to_string(r) + " is on another host and no network path is available");
    }
  }

  Environment env;
  env.abort = [client](int code, std::string_view message) { client->abort(code, message); };
  env.finalize = [client] { return client->finalize(); };
  env.read_peer_memory = [](std::int64_t pid, std::uintptr_t address, void* dst, std::size_t len) {
    return path::read_peer_memory(static_cast<pid_t>(pid), address, dst, len);
  };
  auto core = std::make_unique<EngineCore>(Identity{job.rank, job.size, job.identity.job_key}, *config,
                                           std::move(paths), std::move(env));
  for (path::Rank r : local) {
    if (auto pid = shm_path->peer_pid(r)) core->set_peer_pid(r, *pid);
  }
  base::logger().debug("engine started: rank {} of {}, {} on this host", job.rank, job.size, local.size());
  if (params.get_bool(kProgressThread)) {
    return std::unique_ptr<Engine>(
        std::make_unique<ThreadedEngine>(std::move(core), params.get_duration(kProgressThreadSleep)));
  }
  return std::unique_ptr<Engine>(std::move(core));
}

}  // namespace ftmpi::engine

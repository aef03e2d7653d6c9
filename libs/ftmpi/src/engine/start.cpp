// Engine::start: from the launcher's environment to a running engine with a path to every peer.
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "engine_core.hpp"
#include "ftmpi/base/log.hpp"
#include "ftmpi/path/fault.hpp"
#include "ftmpi/path/params.hpp"
#include "ftmpi/path/peer_memory.hpp"
#include "ftmpi/path/shm.hpp"
#include "ftmpi/path/udp.hpp"
#include "ftmpi/rte/client.hpp"
#include "ftmpi/rte/job.hpp"
#include "ftmpi/params/catalogue.hpp"
#include "ftmpi/params/engine_params.hpp"
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


base::Status with_context(const base::Status& s, std::string_view what) {
  return s ? s : base::Status(s.code(), std::string(what) + ": " + s.message());
}

std::vector<std::string> split(std::string_view text, char separator) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t end = std::min(text.find(separator, start), text.size());
    parts.emplace_back(text.substr(start, end - start));
    start = end + 1;
  }
  return parts;
}

struct PathKinds {
  bool shm = false;
  bool udp = false;
};

base::Result<PathKinds> parse_path_kinds(std::string_view text) {
  PathKinds kinds;
  for (const std::string& kind : split(text, ',')) {
    if (kind == "shm") {
      kinds.shm = true;
    } else if (kind == "udp") {
      kinds.udp = true;
    } else {
      return base::Status(base::Errc::invalid_argument,
                          "path.kinds: unknown path kind '" + kind + "' (known: shm, udp)");
    }
  }
  return kinds;
}

// path.fault and the file named by path.fault_plan, as one plan.
base::Result<std::vector<path::FaultSpec>> fault_plan(const base::ParamSet& params) {
  auto plan = path::parse_fault_plan(params.get_string(path::kFault), "path.fault");
  if (!plan) return plan.status();
  const std::string file = params.get_string(path::kFaultPlan);
  if (file.empty()) return plan;
  std::ifstream in(file);
  if (!in) return base::Status(base::Errc::not_found, "path.fault_plan: cannot read '" + file + "'");
  std::stringstream text;
  text << in.rdbuf();
  auto more = path::parse_fault_plan(text.str(), file);
  if (!more) return more.status();
  plan->insert(plan->end(), more->begin(), more->end());
  return plan;
}

// The rails this process can use, by index (rail k talks to rail k of every peer): nullopt where a rail
// does not work here, which is reported and left out. An entry that cannot be a rail at all is an error.
base::Result<std::vector<std::optional<path::RailAddress>>> local_rails(std::string spec) {
  std::vector<std::optional<path::RailAddress>> rails;
  if (spec.empty()) {
    auto all = path::resolve_rails("");
    if (!all) return all.status();
    for (auto& rail : *all) rails.emplace_back(std::move(rail));
    return rails;
  }
  for (const std::string& entry : split(spec, ',')) {
    auto one = path::resolve_rails(entry);
    if (one) {
      rails.emplace_back(std::move(one->front()));
    } else if (one.code() == base::Errc::invalid_argument || one.code() == base::Errc::unsupported) {
      return with_context(one.status(), "path.rails");
    } else {
      base::logger().warn("rail {} '{}' is left out: {}", rails.size(), entry, one.status().to_string());
      rails.emplace_back(std::nullopt);
    }
  }
  return rails;
}

// UDP paths, one per working rail, wired to every rank that `needs_network`. Rank r's endpoints are
// published as "udp" = "ep0/max0;ep1/max1;..." (endpoint and largest frame it takes) with "-" for a rail
// that does not work there.
base::Result<std::vector<std::unique_ptr<path::UdpPath>>> udp_paths(
    const base::ParamSet& params, rte::Client& client, bool one_host, const std::vector<bool>& needs_network) {
  const rte::JobInfo& job = client.job();
  std::string spec = params.get_string(path::kRails);
  if (spec.empty() && one_host) spec = "127.0.0.1";  // UDP forced between ranks of one host
  auto rails = local_rails(spec);
  if (!rails) return rails.status();
  path::UdpOptions options = path::UdpOptions::from_params(params);
  options.peers = job.size;
  std::vector<std::unique_ptr<path::UdpPath>> paths(rails->size());
  std::string published;
  for (std::size_t k = 0; k < rails->size(); ++k) {
    if (k > 0) published += ';';
    const auto& rail = (*rails)[k];
    if (rail) {
      auto made = path::UdpPath::create(*rail, options);
      if (made) {
        paths[k] = std::move(*made);
      } else {
        base::logger().warn("rail {} '{}' is left out: {}", k, rail->name, made.status().to_string());
      }
    }
    // "address:short:long/max_frame": a peer sends us no frame larger than we take.
    published += paths[k] ? paths[k]->endpoint() + "/" + std::to_string(paths[k]->info().max_frame) : "-";
  }
  if (auto s = client.put("udp", published); !s) return with_context(s, "publishing UDP endpoints");
  if (auto s = client.fence(); !s) return with_context(s, "wire-up fence");
  for (std::uint32_t r = 0; r < job.size; ++r) {
    if (!needs_network[r]) continue;
    auto theirs = client.get(r, "udp");
    if (!theirs) return with_context(theirs.status(), "reading rank " + std::to_string(r) + "'s UDP endpoints");
    const std::vector<std::string> endpoints = split(*theirs, ';');
    for (std::size_t k = 0; k < paths.size() && k < endpoints.size(); ++k) {
      if (!paths[k] || endpoints[k] == "-") continue;
      const std::size_t slash = endpoints[k].find('/');
      std::size_t max_frame = 0;
      if (slash != std::string::npos) {
        const std::string size = endpoints[k].substr(slash + 1);
        if (size.empty() || size.find_first_not_of("0123456789") != std::string::npos || size.size() > 9) {
          return base::Status(base::Errc::invalid_argument, "rank " + std::to_string(r) + " published a bad frame size '" +
                                                               size + "' on rail " + std::to_string(k));
        }
        max_frame = std::stoul(size);
      }
      if (auto s = paths[k]->add_peer(r, std::string_view(endpoints[k]).substr(0, slash), max_frame); !s) {
        return with_context(s, "rank " + std::to_string(r) + "'s endpoint on rail " + std::to_string(k));
      }
    }
  }
  return paths;
}

// CPUs online on this host, at least 1. Not this process's affinity mask: ftrun --bind-to core gives each
// rank one core, which is not oversubscription.
std::uint32_t usable_cpus() {
  return static_cast<std::uint32_t>(std::max(1L, ::sysconf(_SC_NPROCESSORS_ONLN)));
}

}  // namespace

// Processes that can share memory: same kernel boot, same network namespace, same mount namespace (a
// private /dev/shm is a separate mount). The hostname alone cannot tell, since namespaces share it.
bool shared_memory_allowed(const base::ParamSet& params) {
  auto kinds = parse_path_kinds(params.get_string(path::kKinds));
  return kinds && kinds->shm;
}

std::string host_identity(const base::ParamSet& params) {
  std::string id = params.get_string(kHostId);
  if (!id.empty()) return id;
  return first_line("/proc/sys/kernel/random/boot_id") + "/" + namespace_of("/proc/self/ns/net") + "/" +
         namespace_of("/proc/self/ns/mnt");
}

base::Result<std::unique_ptr<Engine>> Engine::start(const base::ParamSet& params) {
  auto config = EngineConfig::from(params);
  if (!config) return config.status();
  auto geometry = path::ShmGeometry::from_params(params);
  if (!geometry) return geometry.status();
  auto connected = rte::Client::from_environment(environ, rte::ClientOptions::from(params));
  if (!connected) return connected.status();
  auto client = std::make_shared<rte::Client>(std::move(*connected));
  const rte::JobInfo& job = client->job();
  // More ranks on this host than cores they may run on: a waiting rank that spins only delays the rank
  // it waits for, so it yields at once (Open MPI does the same when oversubscribed). Measured at 4 ranks
  // on 2 cores: barrier and small allreduce 10-40x faster. An explicit engine.progress.spin wins.
  if (!params.is_overridden(kSpinRounds) && job.local_size > usable_cpus()) config->spin_rounds = 0;

  auto kinds = parse_path_kinds(params.get_string(path::kKinds));
  if (!kinds) return kinds.status();
  auto plan = fault_plan(params);
  if (!plan) return plan.status();

  // Which ranks share this host.
  const std::string host = host_identity(params);
  if (auto s = client->put("host", host); !s) return with_context(s, "publishing the host identity");
  if (auto s = client->fence(); !s) return with_context(s, "wire-up fence");
  std::vector<path::Rank> local;
  std::set<std::string> hosts;
  for (std::uint32_t r = 0; r < job.size; ++r) {
    auto theirs = client->get(r, "host");
    if (!theirs) return with_context(theirs.status(), "reading rank " + std::to_string(r) + "'s host");
    if (*theirs == host) local.push_back(r);
    hosts.insert(*theirs);
  }
  // Every rank decides the same from the same facts, so all take part in the same fences.
  const bool one_host = hosts.size() == 1;
  const bool network = !kinds->shm || !one_host;
  if (network && !kinds->udp) {
    return base::Status(base::Errc::peer_unreachable,
                        kinds->shm ? "the job spans hosts but path.kinds allows no network path"
                                   : "path.kinds allows no path at all");
  }
  std::vector<bool> needs_network(job.size, !kinds->shm);
  if (kinds->shm) {
    for (std::uint32_t r = 0; r < job.size; ++r) {
      needs_network[r] = std::find(local.begin(), local.end(), r) == local.end();
    }
  }

  std::vector<std::unique_ptr<path::Path>> paths;
  path::ShmPath* shm_path = nullptr;
  if (kinds->shm) {
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
    shm_path = shm->get();
    paths.push_back(std::move(*shm));
  }
  // Fault windows given in traffic count the engine's bytes on every path; the engine is made after its
  // paths, so they read it through this slot, filled below (no frame moves before).
  auto engine_slot = std::make_shared<const EngineCore*>(nullptr);
  if (network) {
    auto udp = udp_paths(params, *client, one_host, needs_network);
    if (!udp) return udp.status();
    for (std::size_t k = 0; k < udp->size(); ++k) {
      auto& rail = (*udp)[k];
      if (!rail) continue;
      // Faults go on network rails only: shared memory is no rail an operator can break.
      auto specs = path::fault_specs_for_rail(*plan, k, rail->rail().name);
      if (specs.empty()) {
        paths.push_back(std::move(rail));
        continue;
      }
      base::logger().info("rail {} '{}': injecting faults: {} spec(s)", k, rail->rail().name, specs.size());
      path::FaultOptions options;
      options.stream = (std::uint64_t{job.rank} << 16) | k;  // every rank and rail draws its own faults
      options.traffic = [engine_slot]() -> std::uint64_t {
        const EngineCore* engine = *engine_slot;
        return engine == nullptr ? 0 : engine->counters().bytes_sent + engine->counters().bytes_received;
      };
      paths.push_back(std::make_unique<path::FaultPath>(std::move(rail), std::move(specs), options));
    }
  }
  for (std::uint32_t r = 0; r < job.size; ++r) {
    bool reached = false;
    for (const auto& p : paths) reached = reached || p->reaches(r);
    if (!reached) {
      return base::Status(base::Errc::peer_unreachable,
                          "no working rail reaches rank " + std::to_string(r) +
                              (needs_network[r] ? " (on another host; see path.rails)" : ""));
    }
  }

  Environment env;
  env.abort = [client](int code, std::string_view message) { client->abort(code, message); };
  env.finalize = [client] { return client->finalize(); };
  env.fence_begin = [client] { return client->fence_begin(); };
  env.fence_test = [client] { return client->fence_test(); };
  env.read_peer_memory = [](std::int64_t pid, std::uintptr_t address, std::span<const ::iovec> blocks) {
    return path::read_peer_memory_scattered(static_cast<pid_t>(pid), address, blocks);
  };
  // Tools (ftpath) reach the rank through ftrun; a watcher thread raises a flag the progress loop tests.
  if (!client->is_singleton()) {
    if (auto s = client->watch_control(); !s) return with_context(s, "starting the control watcher");
    env.control_pending = client->control_pending();
    env.take_control = [client] { return client->take_control(); };
    env.reply_control = [client](std::uint32_t id, bool ok, std::string text) {
      if (auto s = client->reply_control(id, ok, std::move(text)); !s) {
        base::logger().warn("cannot answer a control request: {}", s.message());
      }
    };
  }
  auto core = std::make_unique<EngineCore>(Identity{job.rank, job.size, job.identity.job_key}, *config,
                                           std::move(paths), std::move(env));
  *engine_slot = core.get();
  for (path::Rank r : local) {
    if (shm_path == nullptr) break;
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

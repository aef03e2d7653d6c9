// Engine::start: from the launcher's environment to a running engine with a path to every peer.
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>

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
#include "ftmpi/path/registry.hpp"
#include "ftmpi/rte/bootstrap.hpp"
#include "ftmpi/rte/client.hpp"
#include "ftmpi/rte/control.hpp"
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

// The launcher's key-value store (ftrun's or PMIx's), as the path drivers' start-up sees it.
class BootstrapExchange final : public path::AddressExchange {
 public:
  explicit BootstrapExchange(rte::Bootstrap& client) : client_(client) {}
  base::Status put(std::string_view key, std::string_view value) override {
    return client_.put(std::string(key), std::string(value));
  }
  base::Status fence() override { return client_.fence(); }
  base::Result<std::string> get(path::Rank rank, std::string_view key) override {
    return client_.get(rank, std::string(key));
  }

 private:
  rte::Bootstrap& client_;
};

// CPUs online on this host, at least 1. Not this process's affinity mask: ftrun --bind-to core gives each
// rank one core, which is not oversubscription.
std::uint32_t usable_cpus() {
  return static_cast<std::uint32_t>(std::max(1L, ::sysconf(_SC_NPROCESSORS_ONLN)));
}

}  // namespace

// Processes that can share memory: same kernel boot, same network namespace, same mount namespace (a
// private /dev/shm is a separate mount). The hostname alone cannot tell, since namespaces share it.
bool shared_memory_allowed(const base::ParamSet& params) {
  auto kinds = path::parse_driver_kinds(params.get_string(path::kKinds));
  return kinds && std::any_of(kinds->begin(), kinds->end(), [](const path::Driver* d) { return d->caps().host_local; });
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
  auto connected = rte::bootstrap_from_environment(environ, rte::ClientOptions::from(params));
  if (!connected) return connected.status();
  std::shared_ptr<rte::Bootstrap> client = std::move(*connected);
  const rte::JobInfo& job = client->job();
  // More ranks on this host than cores they may run on: a waiting rank that spins only delays the rank
  // it waits for, so it yields at once (Open MPI does the same when oversubscribed). Measured at 4 ranks
  // on 2 cores: barrier and small allreduce 10-40x faster. An explicit engine.progress.spin wins.
  if (!params.is_overridden(kSpinRounds) && job.local_size > usable_cpus()) config->spin_rounds = 0;

  auto kinds = path::parse_driver_kinds(params.get_string(path::kKinds));
  if (!kinds) return kinds.status().prefixed("path.kinds");
  auto plan = fault_plan(params);
  if (!plan) return plan.status();

  // Which ranks share this host.
  const std::string host = host_identity(params);
  if (auto s = client->put("host", host); !s) return s.prefixed("publishing the host identity");
  if (auto s = client->fence(); !s) return s.prefixed("wire-up fence");
  std::vector<path::Rank> local;
  std::set<std::string> hosts;
  for (std::uint32_t r = 0; r < job.size; ++r) {
    auto theirs = client->get(r, "host");
    if (!theirs) return theirs.status().prefixed("reading rank " + std::to_string(r) + "'s host");
    if (*theirs == host) local.push_back(r);
    hosts.insert(*theirs);
  }
  path::JobView view;
  view.rank = job.rank;
  view.size = job.size;
  view.local = local;
  view.one_host = hosts.size() == 1;
  view.shm_prefix = rte::shm_prefix(job.identity.job_id);
  view.params = &params;

  // Ranks of this host are reached by the host-local driver (shared memory) when one is allowed, every
  // other rank by each network driver (their paths are rails, striped and failed over alike). Every rank
  // decides the same from the same facts, so all start the same drivers and take part in the same fences.
  const path::Driver* host_driver = nullptr;
  std::vector<const path::Driver*> network_drivers;
  for (const path::Driver* d : *kinds) {
    if (!d->caps().host_local) {
      network_drivers.push_back(d);
    } else if (host_driver == nullptr) {
      host_driver = d;
    }
  }
  const bool network = host_driver == nullptr || !view.one_host;
  if (network && network_drivers.empty()) {
    return base::Status(base::Errc::peer_unreachable,
                        host_driver != nullptr ? "the job spans hosts but path.kinds allows no network path"
                                               : "path.kinds allows no path at all");
  }
  if (!network) network_drivers.clear();  // shared memory reaches every rank
  std::vector<bool> on_this_host(job.size, false);
  for (path::Rank r : local) on_this_host[r] = true;
  std::vector<bool> needs_network(job.size);
  for (std::uint32_t r = 0; r < job.size; ++r) needs_network[r] = host_driver == nullptr || !on_this_host[r];

  std::vector<std::unique_ptr<path::Path>> paths;
  std::vector<path::FaultPath*> fault_layers;  // by path index; null where there is none
  // Fault windows given in traffic count the engine's bytes on every path; the engine is made after its
  // paths, so they read it through this slot, filled below (no frame moves before).
  auto engine_slot = std::make_shared<const EngineCore*>(nullptr);
  // Every network rail gets a fault layer from the start, with or without a plan, so that ftinject can
  // add faults to a running job; with none installed it only forwards (docs/benchmarks-history.md, "Fault
  // layer"). Shared memory gets one only when reliability is forced on it: without checksums and
  // retransmission there, an injected fault would reach the application.
  auto add_path = [&](std::unique_ptr<path::Path> path, std::size_t rail, bool wrap) {
    auto specs = rail == SIZE_MAX ? std::vector<path::FaultSpec>{}
                                  : path::fault_specs_for_rail(*plan, rail, path->info().rail);
    if (!wrap) {
      paths.push_back(std::move(path));
      fault_layers.push_back(nullptr);
      return;
    }
    if (!specs.empty()) {
      base::logger().info("rail {} '{}': injecting faults: {} spec(s)", rail, path->info().rail, specs.size());
    }
    path::FaultOptions options;
    options.stream = (std::uint64_t{job.rank} << 16) | rail;  // every rank and rail draws its own faults
    options.traffic = [engine_slot]() -> std::uint64_t {
      const EngineCore* engine = *engine_slot;
      return engine == nullptr ? 0 : engine->counters().bytes_sent + engine->counters().bytes_received;
    };
    auto layer = std::make_unique<path::FaultPath>(std::move(path), std::move(specs), options);
    fault_layers.push_back(layer.get());
    paths.push_back(std::move(layer));
  };
  // Every driver starts in one exchange (two fences in all), host-local first, then the network rails
  // numbered across the network drivers in registry order.
  std::vector<path::DriverStart> starts;
  if (host_driver != nullptr) starts.push_back({host_driver, on_this_host});
  for (const path::Driver* driver : network_drivers) starts.push_back({driver, needs_network});
  BootstrapExchange exchange(*client);
  auto started = path::start_drivers(starts, view, exchange);
  if (!started) return started.status();
  std::size_t rail_index = 0;
  for (std::size_t d = 0; d < starts.size(); ++d) {
    const bool host_local = starts[d].driver == host_driver;
    for (auto& p : (*started)[d]) {
      if (host_local) {
        // A launch-time plan names network rails only: shared memory is no rail an operator can break.
        if (p) add_path(std::move(p), SIZE_MAX, config->reliability == Reliability::force);
      } else {
        const std::size_t k = rail_index++;
        if (p) add_path(std::move(p), k, true);
      }
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
  env.read_peer_memory_gather = [](std::int64_t pid, std::span<const ::iovec> remote, std::span<const ::iovec> into) {
    return path::read_peer_memory_gather(static_cast<pid_t>(pid), remote, into);
  };
  env.write_peer_memory = [](std::int64_t pid, std::uintptr_t address, const void* bytes, std::size_t len) {
    return path::write_peer_memory(static_cast<pid_t>(pid), address, bytes, len);
  };
  // Tools (ftpath) reach the rank through ftrun; a watcher thread raises a flag the progress loop tests.
  if (!client->is_singleton()) {
    if (auto s = client->watch_control(); !s) return s.prefixed("starting the control watcher");
  }
  if (client->control_pending() != nullptr) {
    env.control_pending = client->control_pending();
    env.take_control = [client] { return client->take_control(); };
    env.check_peer = [client](std::uint32_t peer) { return client->check_peer(peer); };
    env.take_peer_statuses = [client] { return client->take_peer_statuses(); };
    env.reply_control = [client](std::uint32_t id, bool ok, std::string text) {
      if (auto s = client->reply_control(id, ok, std::move(text)); !s) {
        base::logger().warn("cannot answer a control request: {}", s.message());
      }
    };
  }
  // Peers whose memory a path reads (single copy): their pids, as that path learned them.
  std::vector<std::pair<path::Rank, std::int64_t>> peer_pids;
  for (path::Rank r : local) {
    for (const auto& p : paths) {
      if (auto pid = p->peer_pid(r)) peer_pids.emplace_back(r, *pid);
    }
  }
  // The frames' MAC key comes from the job's secret, which reached this rank by its environment (local)
  // or the launch agent's stdin (remote), never a command line; the job key on the wire is only a filter.
  // The flight recorder's file: <dir>/<job id>.rank<R>.flight.zst, in the runtime directory by default
  // (made here: on another host ftrun never made it).
  if (config->flight_write != EngineConfig::FlightWrite::never && config->flight_events > 0 && !client->is_singleton()) {
    std::string dir = params.get_string(kFlightDir);
    if (dir.empty()) dir = rte::runtime_directory();
    ::mkdir(dir.c_str(), 0700);  // an existing one is fine; a failed write is said when it happens
    char id[17];
    std::snprintf(id, sizeof id, "%016llx", static_cast<unsigned long long>(job.identity.job_id));
    config->flight_file = dir + "/" + id + ".rank" + std::to_string(job.rank) + ".flight.zst";
  }
  const Identity identity{job.rank, job.size, job.identity.job_key, frag::derive_frame_key(job.identity.secret),
                          job.identity.job_id};
  auto core = std::make_unique<EngineCore>(identity, *config,
                                           std::move(paths), std::move(env));
  *engine_slot = core.get();
  for (const auto& [r, pid] : peer_pids) core->set_peer_pid(r, pid);
  core->set_fault_layers(std::move(fault_layers));
  base::logger().debug("engine started: rank {} of {}, {} on this host", job.rank, job.size, local.size());
  if (params.get_bool(kProgressThread)) {
    return std::unique_ptr<Engine>(
        std::make_unique<ThreadedEngine>(std::move(core), params.get_duration(kProgressThreadSleep)));
  }
  return std::unique_ptr<Engine>(std::move(core));
}

}  // namespace ftmpi::engine

#include "ftmpi/bench/peers.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>

#include "ftmpi/base/process.hpp"
#include "ftmpi/bench/results.hpp"
#include "ftmpi/path/registry.hpp"
#include "ftmpi/rte/launcher.hpp"

namespace ftmpi::bench {

namespace fs = std::filesystem;
using base::Errc;
using base::Status;

const std::vector<PeerMpi>& known_peers() {
  static const std::vector<PeerMpi> peers = {
      {"openmpi", "mpicc.openmpi", "mpirun.openmpi", "libopenmpi-dev openmpi-bin"},
      {"mpich", "mpicc.mpich", "mpiexec.mpich", "libmpich-dev mpich"},
  };
  return peers;
}

namespace {

bool on_path(const std::string& program) {
  const char* path = std::getenv("PATH");
  return rte::find_program(program, path != nullptr ? path : "/usr/bin:/bin").is_ok();
}

// ftbench_mpi.c and bench_common.h: beside the tools in a build tree, in share/ftmpi/ftbench installed.
std::string kernel_sources() {
  std::error_code ec;
  const fs::path self = fs::read_symlink("/proc/self/exe", ec).parent_path();
  for (const fs::path& dir : {self / "ftbench-src", self / ".." / "share" / "ftmpi" / "ftbench"}) {
    if (fs::exists(dir / "ftbench_mpi.c", ec)) return dir.string();
  }
  return {};
}

std::string cache_directory() {
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg != nullptr && xdg[0] == '/') return std::string(xdg) + "/ftbench";
  if (const char* home = std::getenv("HOME"); home != nullptr && home[0] == '/') return std::string(home) + "/.cache/ftbench";
  return "/tmp/ftbench-" + std::to_string(::getuid());
}

}  // namespace

base::Result<std::vector<PeerMpi>> find_peers(const std::string& names) {
  std::vector<PeerMpi> peers;
  for (const std::string& name : split(names)) {
    auto it = std::find_if(known_peers().begin(), known_peers().end(), [&](const PeerMpi& p) { return p.name == name; });
    if (it == known_peers().end()) {
      return Status(Errc::invalid_argument, "--against: unknown MPI '" + name + "' (known: openmpi, mpich)");
    }
    for (const std::string& program : {it->compiler, it->launcher}) {
      if (!on_path(program)) {
        return Status(Errc::not_found, "--against " + name + ": " + program + " is not installed (apt-get install " +
                                           it->packages + ")");
      }
    }
    if (std::none_of(peers.begin(), peers.end(), [&](const PeerMpi& p) { return p.name == name; })) peers.push_back(*it);
  }
  return peers;
}

base::Result<std::string> build_kernels(const PeerMpi& peer) {
  const std::string sources = kernel_sources();
  if (sources.empty()) {
    return Status(Errc::internal, "the kernels' source (ftbench_mpi.c) is neither beside ftbench nor in share/ftmpi/ftbench");
  }
  std::error_code ec;
  const std::string dir = cache_directory();
  fs::create_directories(dir, ec);
  const fs::path binary = fs::path(dir) / ("ftbench-mpi-" + peer.name);
  const fs::path source = fs::path(sources) / "ftbench_mpi.c";
  if (fs::exists(binary, ec) && fs::last_write_time(binary, ec) >= fs::last_write_time(source, ec)) return binary.string();
  // -w: the peer's own headers' warnings are not ours to fix
  auto built = base::run_captured({peer.compiler, "-O2", "-w", "-I", sources, "-o", binary.string(), source.string()});
  if (!built || built->status != 0) {
    return Status(Errc::io_error, peer.compiler + " could not build " + source.string() +
                                      (built ? " (status " + std::to_string(built->status) + "): " + built->err
                                             : ": " + built.status().message()));
  }
  return binary.string();
}

base::Result<PeerTransport> peer_transport_for(const std::string& paths) {
  if (paths.empty()) return PeerTransport::shared_memory;  // every path, shared memory among them
  auto drivers = path::parse_driver_kinds(paths);
  if (!drivers) return drivers.status();
  const bool host_local =
      std::any_of(drivers->begin(), drivers->end(), [](const path::Driver* d) { return d->caps().host_local; });
  return host_local ? PeerTransport::shared_memory : PeerTransport::network;
}

PeerLaunch peer_launch(const PeerMpi& peer, int ranks, bool bind, PeerTransport transport, const std::string& binary) {
  PeerLaunch launch;
  const bool network = transport == PeerTransport::network;
  if (peer.name == "openmpi") {
    launch.command = {peer.launcher, "-np", std::to_string(ranks), "--mca", "btl", network ? "self,tcp" : "self,vader"};
    if (network) launch.command.insert(launch.command.end(), {"--mca", "btl_tcp_if_include", "lo"});
    if (::getuid() == 0) launch.command.push_back("--allow-run-as-root");
    if (bind) {
      launch.command.insert(launch.command.end(), {"--bind-to", "core"});
    } else {
      launch.command.insert(launch.command.end(), {"--oversubscribe", "--bind-to", "none", "--mca", "mpi_yield_when_idle", "1"});
    }
    launch.transport = network ? "tcp lo" : "vader";
  } else {
    // Debian's MPICH is ch4:ucx; with local communication off its ranks on one host use the network
    // module, and UCX is held to TCP.
    launch.command = {peer.launcher, "-n", std::to_string(ranks), "-bind-to", bind ? "core" : "none"};
    if (network) launch.env = {"MPIR_CVAR_NOLOCAL=1", "UCX_TLS=tcp,self"};
    launch.transport = network ? "ucx tcp" : "ucx";
  }
  launch.command.push_back(binary);
  return launch;
}

}  // namespace ftmpi::bench

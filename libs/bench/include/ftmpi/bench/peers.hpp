// The other MPIs ftbench measures beside ftmpi (--against): the same kernels' source built with their
// compiler wrappers and run by their launchers, on shared memory or over TCP on loopback.
#pragma once

#include <string>
#include <vector>

#include "ftmpi/base/status.hpp"

namespace ftmpi::bench {

struct PeerMpi {
  std::string name;      // as --against names it: openmpi, mpich
  std::string compiler;  // its C compiler wrapper
  std::string launcher;
  std::string packages;  // what to install when it is missing
};

const std::vector<PeerMpi>& known_peers();

// "openmpi,mpich" -> those peers. invalid_argument for a name not known; not_found, saying the packages
// to install, for one whose compiler or launcher is not on PATH.
base::Result<std::vector<PeerMpi>> find_peers(const std::string& names);

// The peer's build of ftbench_mpi.c (kept in ~/.cache/ftbench, made again when the source is newer).
base::Result<std::string> build_kernels(const PeerMpi& peer);

// How the peer's ranks talk: its shared memory, or its TCP over loopback (the network comparison for
// ftmpi's UDP rows; MPICH through UCX's tcp transport with local communication turned off).
enum class PeerTransport { shared_memory, network };
// The peers' transport beside an ftmpi job limited to `paths` (ftrun --paths; "" is every path): their
// shared memory, unless none of ftmpi's paths is host-local (then their TCP, so that a UDP figure is set
// beside the peers' network figure, not beside their shared memory). A list ftrun would refuse is
// invalid_argument, with ftrun's reason.
base::Result<PeerTransport> peer_transport_for(const std::string& paths);
struct PeerLaunch {
  std::vector<std::string> command;  // launcher ... binary (the kernel arguments follow)
  std::vector<std::string> env;      // K=V
  std::string transport;             // said in tables: "vader", "tcp lo", "ucx", "ucx tcp"
};
// Ranks bound to cores when `bind`, else unbound (Open MPI is then told to give its core away while it
// waits; Debian's MPICH, ch4:ucx, has no such setting and spins until preempted).
PeerLaunch peer_launch(const PeerMpi& peer, int ranks, bool bind, PeerTransport transport, const std::string& binary);

}  // namespace ftmpi::bench

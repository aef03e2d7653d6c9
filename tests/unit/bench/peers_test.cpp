// The other MPIs (peers.hpp): how each is launched on shared memory and over TCP on loopback, bound or not,
// and what --against says when one is unknown or not installed (PATH pointed at directories of our own).
#include "ftmpi/bench/peers.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <boost/test/unit_test.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

using namespace ftmpi::bench;
using ftmpi::base::Errc;
namespace fs = std::filesystem;

namespace {

const PeerMpi& peer(const std::string& name) {
  const auto& known = known_peers();
  auto it = std::find_if(known.begin(), known.end(), [&](const PeerMpi& p) { return p.name == name; });
  BOOST_TEST_REQUIRE((it != known.end()), name);
  return *it;
}

using Args = std::vector<std::string>;

// Open MPI refuses root without being told; the launch line says so only then.
Args as_root() { return ::getuid() == 0 ? Args{"--allow-run-as-root"} : Args{}; }

Args joined(std::initializer_list<Args> parts) {
  Args all;
  for (const Args& p : parts) all.insert(all.end(), p.begin(), p.end());
  return all;
}

// PATH set to `value` for the test's length, then put back.
class ScopedPath {
 public:
  explicit ScopedPath(const std::string& value) {
    if (const char* old = std::getenv("PATH")) old_ = old;
    ::setenv("PATH", value.c_str(), 1);
  }
  ~ScopedPath() {
    if (old_) {
      ::setenv("PATH", old_->c_str(), 1);
    } else {
      ::unsetenv("PATH");
    }
  }
  ScopedPath(const ScopedPath&) = delete;
  ScopedPath& operator=(const ScopedPath&) = delete;

 private:
  std::optional<std::string> old_;
};

// A fresh directory, removed with all in it at the end.
class TempDir {
 public:
  TempDir() {
    std::string pattern = (fs::temp_directory_path() / "ftmpi-peers-test-XXXXXX").string();
    BOOST_TEST_REQUIRE(::mkdtemp(pattern.data()) != nullptr);
    path_ = pattern;
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }
  void program(const std::string& name, mode_t mode = 0755) const {
    const std::string file = path_ + "/" + name;
    std::ofstream(file) << "#!/bin/sh\nexit 0\n";
    BOOST_TEST_REQUIRE(::chmod(file.c_str(), mode) == 0);
  }

 private:
  std::string path_;
};

}  // namespace

BOOST_AUTO_TEST_SUITE(peers)

BOOST_AUTO_TEST_CASE(the_known_peers_and_their_programs) {
  BOOST_TEST_REQUIRE(known_peers().size() == 2u);
  BOOST_TEST(peer("openmpi").compiler == "mpicc.openmpi");
  BOOST_TEST(peer("openmpi").launcher == "mpirun.openmpi");
  BOOST_TEST(peer("mpich").compiler == "mpicc.mpich");
  BOOST_TEST(peer("mpich").launcher == "mpiexec.mpich");
}

BOOST_AUTO_TEST_CASE(open_mpi_on_shared_memory_bound) {
  const PeerLaunch l = peer_launch(peer("openmpi"), 2, true, PeerTransport::shared_memory, "/cache/ftbench-mpi-openmpi");
  BOOST_TEST((l.command == joined({{"mpirun.openmpi", "-np", "2", "--mca", "btl", "self,vader"}, as_root(),
                                   {"--bind-to", "core", "/cache/ftbench-mpi-openmpi"}})));
  BOOST_TEST(l.env.empty());
  BOOST_TEST(l.transport == "vader");
}

BOOST_AUTO_TEST_CASE(open_mpi_over_tcp_on_loopback_unbound) {
  const PeerLaunch l = peer_launch(peer("openmpi"), 4, false, PeerTransport::network, "bin");
  BOOST_TEST((l.command == joined({{"mpirun.openmpi", "-np", "4", "--mca", "btl", "self,tcp", "--mca", "btl_tcp_if_include", "lo"},
                                   as_root(),
                                   {"--oversubscribe", "--bind-to", "none", "--mca", "mpi_yield_when_idle", "1", "bin"}})));
  BOOST_TEST(l.env.empty());
  BOOST_TEST(l.transport == "tcp lo");
}

BOOST_AUTO_TEST_CASE(open_mpi_the_other_two_combinations) {
  const PeerLaunch shm = peer_launch(peer("openmpi"), 2, false, PeerTransport::shared_memory, "bin");
  BOOST_TEST((shm.command == joined({{"mpirun.openmpi", "-np", "2", "--mca", "btl", "self,vader"}, as_root(),
                                     {"--oversubscribe", "--bind-to", "none", "--mca", "mpi_yield_when_idle", "1", "bin"}})));
  const PeerLaunch tcp = peer_launch(peer("openmpi"), 2, true, PeerTransport::network, "bin");
  BOOST_TEST((tcp.command == joined({{"mpirun.openmpi", "-np", "2", "--mca", "btl", "self,tcp", "--mca", "btl_tcp_if_include", "lo"},
                                     as_root(), {"--bind-to", "core", "bin"}})));
  BOOST_TEST(tcp.transport == "tcp lo");
}

BOOST_AUTO_TEST_CASE(mpich_on_shared_memory_and_over_the_network) {
  const PeerLaunch shm = peer_launch(peer("mpich"), 2, true, PeerTransport::shared_memory, "bin");
  BOOST_TEST((shm.command == Args{"mpiexec.mpich", "-n", "2", "-bind-to", "core", "bin"}));
  BOOST_TEST(shm.env.empty());
  BOOST_TEST(shm.transport == "ucx");

  const PeerLaunch net = peer_launch(peer("mpich"), 3, false, PeerTransport::network, "bin");
  BOOST_TEST((net.command == Args{"mpiexec.mpich", "-n", "3", "-bind-to", "none", "bin"}));
  BOOST_TEST((net.env == Args{"MPIR_CVAR_NOLOCAL=1", "UCX_TLS=tcp,self"}));
  BOOST_TEST(net.transport == "ucx tcp");

  const PeerLaunch bound_net = peer_launch(peer("mpich"), 2, true, PeerTransport::network, "bin");
  BOOST_TEST((bound_net.command == Args{"mpiexec.mpich", "-n", "2", "-bind-to", "core", "bin"}));
  BOOST_TEST((bound_net.env == Args{"MPIR_CVAR_NOLOCAL=1", "UCX_TLS=tcp,self"}));
}

BOOST_AUTO_TEST_CASE(peers_use_their_network_only_when_ftmpis_job_may_not_use_shared_memory) {
  BOOST_TEST((*peer_transport_for("") == PeerTransport::shared_memory));  // every path: shm between local ranks
  BOOST_TEST((*peer_transport_for("shm") == PeerTransport::shared_memory));
  BOOST_TEST((*peer_transport_for("udp,shm") == PeerTransport::shared_memory));
  BOOST_TEST((*peer_transport_for("shm,udp,verbs") == PeerTransport::shared_memory));
  BOOST_TEST((*peer_transport_for("udp") == PeerTransport::network));
  BOOST_TEST((*peer_transport_for("verbs") == PeerTransport::network));
  BOOST_TEST((*peer_transport_for("udp,verbs") == PeerTransport::network));
  // What ftrun refuses has no transport: the reason, in the path registry's words.
  for (const std::string paths : {"shmem,udp", "udp,", "udp,udp", ","}) {
    BOOST_TEST_CONTEXT("'" << paths << "'") {
      const auto transport = peer_transport_for(paths);
      BOOST_TEST(!transport);
      BOOST_TEST((transport.status().code() == ftmpi::base::Errc::invalid_argument));
    }
  }
  BOOST_TEST(peer_transport_for("shmem,udp").status().message().find("unknown path kind 'shmem'") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(an_unknown_mpi_is_invalid_argument) {
  for (const std::string names : {"lam", "openmpi,lam", ""}) {
    BOOST_TEST_CONTEXT("'" << names << "'") {
      TempDir dir;  // whether or not the others are installed, the unknown one is what is wrong
      dir.program("mpicc.openmpi");
      dir.program("mpirun.openmpi");
      ScopedPath path(dir.path());
      auto found = find_peers(names);
      BOOST_TEST_REQUIRE(!found.is_ok());
      BOOST_TEST((found.code() == Errc::invalid_argument), found.status().to_string());
      BOOST_TEST(found.status().message().find("known: openmpi, mpich") != std::string::npos, found.status().to_string());
    }
  }
  auto lam = find_peers("lam");
  BOOST_TEST(lam.status().message().find("'lam'") != std::string::npos, lam.status().to_string());
}

BOOST_AUTO_TEST_CASE(an_mpi_not_on_path_is_not_found_and_the_message_names_its_packages) {
  TempDir empty;
  ScopedPath path(empty.path());
  auto openmpi = find_peers("openmpi");
  BOOST_TEST_REQUIRE(!openmpi.is_ok());
  BOOST_TEST((openmpi.code() == Errc::not_found));
  BOOST_TEST(openmpi.status().message().find("libopenmpi-dev openmpi-bin") != std::string::npos, openmpi.status().to_string());
  BOOST_TEST(openmpi.status().message().find("mpicc.openmpi") != std::string::npos, openmpi.status().to_string());
  auto mpich = find_peers("mpich");
  BOOST_TEST_REQUIRE(!mpich.is_ok());
  BOOST_TEST((mpich.code() == Errc::not_found));
  BOOST_TEST(mpich.status().message().find("libmpich-dev mpich") != std::string::npos, mpich.status().to_string());
}

BOOST_AUTO_TEST_CASE(both_programs_must_be_there_and_runnable) {
  TempDir dir;
  dir.program("mpicc.openmpi");
  dir.program("mpiexec.mpich");
  dir.program("mpicc.mpich", 0644);  // there, but not a program
  ScopedPath path("/nonexistent-ftmpi-dir::" + dir.path());
  auto openmpi = find_peers("openmpi");
  BOOST_TEST_REQUIRE(!openmpi.is_ok());
  BOOST_TEST((openmpi.code() == Errc::not_found));
  BOOST_TEST(openmpi.status().message().find("mpirun.openmpi") != std::string::npos, openmpi.status().to_string());
  auto mpich = find_peers("mpich");
  BOOST_TEST_REQUIRE(!mpich.is_ok());
  BOOST_TEST((mpich.code() == Errc::not_found));
  BOOST_TEST(mpich.status().message().find("mpicc.mpich") != std::string::npos, mpich.status().to_string());
}

BOOST_AUTO_TEST_CASE(installed_peers_are_found_once_each_in_the_order_asked) {
  TempDir dir;
  for (const char* program : {"mpicc.openmpi", "mpirun.openmpi", "mpicc.mpich", "mpiexec.mpich"}) dir.program(program);
  ScopedPath path(dir.path());
  auto found = find_peers("mpich,openmpi,mpich");
  BOOST_TEST_REQUIRE(found.is_ok(), found.status().to_string());
  BOOST_TEST_REQUIRE(found->size() == 2u);
  BOOST_TEST((*found)[0].name == "mpich");
  BOOST_TEST((*found)[1].name == "openmpi");
  BOOST_TEST((*found)[1].launcher == "mpirun.openmpi");
}

BOOST_AUTO_TEST_SUITE_END()

// FTMPI_RTE_ADDR as a list: its format, what ftrun advertises, and the client trying the addresses in
// order against listeners on loopback (one refusing, one that never answers, ftrun's server last).
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <boost/test/unit_test.hpp>
#include <chrono>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "ftmpi/rte/client.hpp"
#include "ftmpi/rte/fd.hpp"
#include "ftmpi/rte/job.hpp"
#include "ftmpi/rte/server.hpp"

using namespace ftmpi::rte;
using namespace std::chrono_literals;
using ftmpi::base::Errc;

namespace {

// A TCP socket on 127.0.0.1 with a port of its own; listening with `backlog`, or not at all.
struct LoopbackSocket {
  explicit LoopbackSocket(std::optional<int> backlog) {
    fd.reset(socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
    BOOST_REQUIRE(fd);
    sockaddr_in sa{};
    sa.sin_family = AF_INET;
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    BOOST_REQUIRE(bind(fd.get(), reinterpret_cast<sockaddr*>(&sa), sizeof sa) == 0);
    if (backlog) BOOST_REQUIRE(listen(fd.get(), *backlog) == 0);
    socklen_t len = sizeof sa;
    BOOST_REQUIRE(getsockname(fd.get(), reinterpret_cast<sockaddr*>(&sa), &len) == 0);
    address = "127.0.0.1:" + std::to_string(ntohs(sa.sin_port));
  }
  UniqueFd fd;
  std::string address;
};

// A listener whose accept queue is full: the kernel drops further SYNs, so a connect to it hangs, as to a
// host behind a dead link. (Backlog 0 admits one connection that nobody accepts.)
struct SilentListener {
  SilentListener() : socket(0) {
    filler.reset(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
    const auto colon = socket.address.rfind(':');
    sockaddr_in sa{};
    sa.sin_family = AF_INET;
    sa.sin_port = htons(static_cast<std::uint16_t>(std::stoi(socket.address.substr(colon + 1))));
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    BOOST_REQUIRE(connect(filler.get(), reinterpret_cast<sockaddr*>(&sa), sizeof sa) == 0);
  }
  LoopbackSocket socket;
  UniqueFd filler;
};

struct ServedJob {
  ServedJob() {
    identity = *make_job_identity();
    ServerConfig config;
    config.size = 1;
    config.secret = identity.secret;
    auto s = Server::listen(config);
    BOOST_REQUIRE_MESSAGE(s.is_ok(), s.status().to_string());
    server.emplace(std::move(*s));
  }
  JobInfo rank0(std::string addresses) const {
    JobInfo job;
    job.identity = identity;
    job.launcher_address = std::move(addresses);
    return job;
  }
  // Connects rank 0 in a thread while serving; the client's result and how long it took.
  std::pair<ftmpi::base::Status, Clock::duration> connect(const JobInfo& job, const ClientOptions& options) {
    std::atomic<bool> done{false};
    ftmpi::base::Status result;
    Clock::duration took{};
    std::thread rank([&] {
      const auto start = Clock::now();
      auto client = Client::connect(job, options);
      took = Clock::now() - start;
      result = client.status();
      done = true;
    });
    const auto deadline = Clock::now() + 20s;
    while (!done && Clock::now() < deadline) BOOST_REQUIRE(server->poll_once(20ms).is_ok());
    rank.join();
    return {result, took};
  }
  JobIdentity identity;
  std::optional<Server> server;
};

}  // namespace

BOOST_AUTO_TEST_SUITE(address_list)

BOOST_AUTO_TEST_CASE(lists_split_on_commas_and_every_entry_is_host_and_port) {
  auto parsed = parse_launcher_addresses("10.77.0.1:4000,[fe80::1]:4000,127.0.0.1:4000");
  BOOST_REQUIRE_MESSAGE(parsed.is_ok(), parsed.status().to_string());
  const std::vector<std::string> expected{"10.77.0.1:4000", "[fe80::1]:4000", "127.0.0.1:4000"};
  BOOST_TEST(*parsed == expected, boost::test_tools::per_element());
  BOOST_TEST(join_launcher_addresses(expected) == "10.77.0.1:4000,[fe80::1]:4000,127.0.0.1:4000");
  BOOST_TEST(parse_launcher_addresses("127.0.0.1:1")->size() == 1u);
  for (const char* bad :
       {"", ",", "127.0.0.1:1,", ",127.0.0.1:1", "127.0.0.1", "127.0.0.1:0", "a:1,b", "[::1:5"}) {
    BOOST_TEST(!parse_launcher_addresses(bad), "'" << bad << "' was accepted");
  }
}

BOOST_AUTO_TEST_CASE(the_contract_carries_a_list_and_refuses_a_malformed_one) {
  JobInfo job;
  job.rank = 1;
  job.size = 2;
  job.local_size = 2;
  job.local_rank = 1;
  job.identity = *make_job_identity();
  job.launcher_address = "10.0.0.1:7,127.0.0.1:7";
  std::vector<std::string> text = job_environment(job);
  std::vector<char*> envp;
  for (std::string& e : text) envp.push_back(e.data());
  envp.push_back(nullptr);
  auto back = job_from_environment(envp.data());
  BOOST_REQUIRE_MESSAGE(back.is_ok(), back.status().to_string());
  BOOST_TEST((*back)->launcher_address == "10.0.0.1:7,127.0.0.1:7");
  for (std::string& e : text) {
    if (e.starts_with("FTMPI_RTE_ADDR=")) e = "FTMPI_RTE_ADDR=10.0.0.1:7,,127.0.0.1:7";
  }
  envp.clear();
  for (std::string& e : text) envp.push_back(e.data());
  envp.push_back(nullptr);
  auto bad = job_from_environment(envp.data());
  BOOST_REQUIRE(!bad);
  BOOST_TEST(bad.status().message().find("FTMPI_RTE_ADDR") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(a_wildcard_listener_advertises_every_ipv4_address_then_loopback) {
  using List = std::vector<std::string>;
  auto one = advertised_addresses(List{"127.0.0.1"}, 4321);
  BOOST_REQUIRE(one.is_ok());
  BOOST_TEST(*one == List{"127.0.0.1:4321"});
  BOOST_TEST(*advertised_addresses(List{"::1"}, 9) == List{"[::1]:9"});
  // Several listeners: each, in order, once.
  BOOST_TEST(*advertised_addresses(List{"10.77.0.1", "127.0.0.1", "10.77.0.1"}, 7) ==
             (List{"10.77.0.1:7", "127.0.0.1:7"}));
  for (const char* wildcard : {"0.0.0.0", "::"}) {
    auto all = advertised_addresses(List{wildcard}, 4321);
    BOOST_REQUIRE_MESSAGE(all.is_ok(), all.status().to_string());
    BOOST_REQUIRE(!all->empty());
    BOOST_TEST(all->back() == "127.0.0.1:4321");
    for (std::size_t i = 0; i + 1 < all->size(); ++i) {
      const std::string& a = (*all)[i];
      BOOST_TEST(a.ends_with(":4321"), a);
      BOOST_TEST(!a.starts_with("127."), a);
      in_addr parsed{};
      BOOST_TEST(inet_pton(AF_INET, a.substr(0, a.rfind(':')).c_str(), &parsed) == 1, a);
    }
  }
  BOOST_TEST(is_wildcard_address("0.0.0.0"));
  BOOST_TEST(is_wildcard_address("::"));
  BOOST_TEST(!is_wildcard_address("127.0.0.1"));
}

BOOST_AUTO_TEST_CASE(ftrun_listens_where_the_routes_to_its_remote_hosts_leave_and_on_loopback) {
  using List = std::vector<std::string>;
  // Hosts reached over loopback: the route leaves from 127.0.0.1, which local ranks use too.
  auto both = listen_addresses_for(List{"127.0.0.5", "localhost"}, true);
  BOOST_REQUIRE_MESSAGE(both.is_ok(), both.status().to_string());
  BOOST_TEST(*both == List{"127.0.0.1"});
  BOOST_TEST(*listen_addresses_for(List{}, true) == List{"127.0.0.1"});
  auto unknown = listen_addresses_for(List{"no-such-host.invalid"}, true);
  BOOST_REQUIRE(!unknown.is_ok());
  BOOST_TEST(unknown.status().message().find("no-such-host.invalid") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(a_server_listens_on_each_of_its_addresses_with_one_port) {
  ServerConfig config;
  config.listen_addresses = {"127.0.0.1", "127.0.0.2"};
  auto server = Server::listen(config);
  BOOST_REQUIRE_MESSAGE(server.is_ok(), server.status().to_string());
  const std::string port = ":" + std::to_string(server->port());
  BOOST_TEST((server->addresses() == std::vector<std::string>{"127.0.0.1" + port, "127.0.0.2" + port}));
  // Both take connections; 127.0.0.3 is not listened on.
  const auto connects = [&](const char* address) {
    UniqueFd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
    sockaddr_in sa{};
    sa.sin_family = AF_INET;
    sa.sin_port = htons(server->port());
    inet_pton(AF_INET, address, &sa.sin_addr);
    return ::connect(fd.get(), reinterpret_cast<sockaddr*>(&sa), sizeof sa) == 0;
  };
  BOOST_TEST(connects("127.0.0.1"));
  BOOST_TEST(connects("127.0.0.2"));
  BOOST_TEST(!connects("127.0.0.3"));  // refused: nothing listens there
}

BOOST_AUTO_TEST_CASE(a_refusing_address_is_skipped_for_the_next) {
  ServedJob job;
  LoopbackSocket closed(std::nullopt);  // bound, not listening: connections are refused
  ClientOptions options;
  options.connect_timeout = 10s;
  auto [status, took] = job.connect(job.rank0(closed.address + "," + job.server->addresses().front()), options);
  BOOST_TEST(status.is_ok(), status.to_string());
  BOOST_TEST((took < 5s));
}

BOOST_AUTO_TEST_CASE(an_address_that_never_answers_is_given_up_after_the_attempt_timeout) {
  ServedJob job;
  SilentListener silent;
  ClientOptions options;
  options.connect_timeout = 10s;
  options.attempt_timeout = 300ms;
  auto [status, took] = job.connect(job.rank0(silent.socket.address + "," + job.server->addresses().front()), options);
  BOOST_TEST(status.is_ok(), status.to_string());
  BOOST_TEST((took >= 300ms));
  BOOST_TEST((took < 5s));
}

BOOST_AUTO_TEST_CASE(when_no_address_answers_the_error_names_them_within_the_connect_timeout) {
  ServedJob job;
  LoopbackSocket closed(std::nullopt);
  SilentListener silent;
  ClientOptions options;
  options.connect_timeout = 700ms;
  options.attempt_timeout = 200ms;
  auto [status, took] = job.connect(job.rank0(closed.address + "," + silent.socket.address), options);
  BOOST_REQUIRE(!status);
  BOOST_TEST((status.code() == Errc::peer_unreachable));
  BOOST_TEST(status.message().find(closed.address) != std::string::npos, status.message());
  BOOST_TEST(status.message().find(silent.socket.address) != std::string::npos, status.message());
  BOOST_TEST(status.message().find("rte.connect_timeout") != std::string::npos, status.message());
  BOOST_TEST((took >= 700ms));
  BOOST_TEST((took < 5s));
}

BOOST_AUTO_TEST_SUITE_END()

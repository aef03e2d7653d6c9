// The launcher's server against real sockets: clients in threads of this process, or raw sockets that
// misbehave on purpose.
#include "ftmpi/rte/server.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <boost/test/unit_test.hpp>
#include <chrono>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "ftmpi/rte/client.hpp"
#include "ftmpi/rte/fd.hpp"

using namespace ftmpi::rte;
using namespace std::chrono_literals;
using ftmpi::base::Errc;

namespace {

constexpr auto kTestDeadline = 20s;

struct TestJob {
  explicit TestJob(std::uint32_t size, std::chrono::nanoseconds auth_timeout = 10s) {
    identity = *make_job_identity();
    ServerConfig config;
    config.size = size;
    config.secret = identity.secret;
    config.auth_timeout = auth_timeout;
    auto s = Server::listen(config);
    BOOST_REQUIRE_MESSAGE(s.is_ok(), s.status().to_string());
    server.emplace(std::move(*s));
  }
  JobInfo rank(std::uint32_t r) const {
    JobInfo job;
    job.rank = r;
    job.size = server->size();
    job.local_rank = r;
    job.local_size = server->size();
    job.identity = identity;
    job.launcher_address = server->addresses().front();
    return job;
  }
  // Serves until `done` holds (or the test deadline passes), collecting the events.
  void serve_until(const std::function<bool()>& done) {
    const auto deadline = std::chrono::steady_clock::now() + kTestDeadline;
    while (!done()) {
      BOOST_REQUIRE_MESSAGE(std::chrono::steady_clock::now() < deadline, "server test timed out");
      BOOST_REQUIRE(server->poll_once(50ms).is_ok());
      for (RankEvent& e : server->take_events()) events.push_back(std::move(e));
    }
  }
  std::size_t count(RankEvent::Kind kind) const {
    return static_cast<std::size_t>(
        std::count_if(events.begin(), events.end(), [&](const RankEvent& e) { return e.kind == kind; }));
  }

  JobIdentity identity;
  std::optional<Server> server;
  std::vector<RankEvent> events;
};

// A raw TCP connection to the server, for sending what no Client would.
UniqueFd raw_connect(const std::string& address) {
  const auto colon = address.rfind(':');
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_port = htons(static_cast<std::uint16_t>(std::stoi(address.substr(colon + 1))));
  inet_pton(AF_INET, address.substr(0, colon).c_str(), &sa.sin_addr);
  UniqueFd fd(socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  BOOST_REQUIRE(connect(fd.get(), reinterpret_cast<sockaddr*>(&sa), sizeof sa) == 0);
  return fd;
}

void raw_send(int fd, const std::string& bytes) {
  BOOST_REQUIRE(send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(bytes.size()));
}

// True once the peer has closed (recv returns 0 or an error); false while it is still open.
bool peer_closed(int fd) {
  pollfd p{fd, POLLIN, 0};
  if (poll(&p, 1, 0) <= 0) return false;
  char buffer[4096];
  ssize_t n = recv(fd, buffer, sizeof buffer, MSG_DONTWAIT);
  return n == 0 || (n < 0 && errno != EAGAIN);
}

}  // namespace

BOOST_AUTO_TEST_SUITE(server)

BOOST_AUTO_TEST_CASE(clients_in_threads_exchange_keys_through_fences) {
  constexpr std::uint32_t kRanks = 5;
  TestJob job(kRanks);
  std::atomic<int> finished{0};
  std::vector<std::string> failures(kRanks);
  // One rank's life; returns what went wrong, or nothing. (Boost.Test macros are not for threads.)
  auto run_rank = [&](std::uint32_t r) -> std::string {
    auto client = Client::connect(job.rank(r), ClientOptions{});
    if (!client) return client.status().to_string();
    Client& c = *client;
    const std::string mine = "value of " + std::to_string(r);
    if (!c.put("addr", mine) || !c.put("n", std::string(r + 1, 'x')) || !c.fence()) return "round 1 failed";
    for (std::uint32_t peer = 0; peer < kRanks; ++peer) {
      auto addr = c.get(peer, "addr");
      if (!addr || *addr != "value of " + std::to_string(peer))
        return "bad addr of rank " + std::to_string(peer);
      auto n = c.get(peer, "n");
      if (!n || n->size() != peer + 1) return "bad n of rank " + std::to_string(peer);
    }
    // A second round replaces a value; keys from the first round stay.
    if (!c.put("addr", mine + " again") || !c.fence()) return "round 2 failed";
    const std::uint32_t next = (r + 1) % kRanks;
    auto again = c.get(next, "addr");
    if (!again || *again != "value of " + std::to_string(next) + " again") return "round 2 value wrong";
    if (!c.get(r, "n")) return "round 1 key lost";
    if (c.get(r, "missing").code() != Errc::not_found) return "a missing key was found";
    if (c.get(kRanks, "addr").code() != Errc::out_of_range) return "a rank out of range was accepted";
    if (!c.finalize()) return "finalize failed";
    return {};
  };
  std::vector<std::thread> threads;
  for (std::uint32_t r = 0; r < kRanks; ++r) {
    threads.emplace_back([&, r] {
      failures[r] = run_rank(r);
      ++finished;
    });
  }
  job.serve_until([&] { return finished == static_cast<int>(kRanks); });
  for (auto& t : threads) t.join();
  for (std::uint32_t r = 0; r < kRanks; ++r)
    BOOST_TEST(failures[r].empty(), "rank " << r << ": " << failures[r]);
  job.serve_until([&] { return job.count(RankEvent::Kind::disconnected) == kRanks; });
  BOOST_TEST(job.count(RankEvent::Kind::connected) == kRanks);
  BOOST_TEST(job.count(RankEvent::Kind::finalized) == kRanks);
  BOOST_TEST(job.count(RankEvent::Kind::fence_entered) == 2 * kRanks);
  for (std::uint32_t r = 0; r < kRanks; ++r) BOOST_TEST(job.server->finalized(r));
  BOOST_TEST(job.server->auth_failures() == 0u);
  BOOST_TEST(job.server->protocol_errors() == 0u);
}

// The engine's finalize keeps working while it waits in a fence: fence_begin, then fence_test looks
// without waiting; the fence completes only when every rank entered it, and keeps earlier values.
BOOST_AUTO_TEST_CASE(a_fence_can_be_waited_for_without_blocking) {
  TestJob job(2);
  std::atomic<bool> rank0_saw_it_pending{false};
  std::atomic<int> finished{0};
  std::vector<std::string> failures(2);
  auto run_rank = [&](std::uint32_t r) -> std::string {
    auto client = Client::connect(job.rank(r), ClientOptions{});
    if (!client) return client.status().to_string();
    Client& c = *client;
    if (c.fence_test().code() != Errc::invalid_argument) return "fence_test without fence_begin was accepted";
    if (!c.put("addr", "rank " + std::to_string(r)) || !c.fence()) return "first fence failed";
    if (r == 1) {
      // Enters the second fence only once rank 0 has seen it pending.
      while (!rank0_saw_it_pending) std::this_thread::sleep_for(1ms);
      if (!c.fence()) return "second fence failed";
    } else {
      // Rank 1 must not wait for ever if this rank fails first.
      struct Release {
        std::atomic<bool>& flag;
        ~Release() { flag = true; }
      } release{rank0_saw_it_pending};
      if (!c.fence_begin()) return "fence_begin failed";
      if (c.fence_begin().code() != Errc::invalid_argument) return "a second fence_begin was accepted";
      auto first = c.fence_test();
      if (!first || *first) return "the fence completed without rank 1";
      rank0_saw_it_pending = true;
      for (;;) {
        auto tested = c.fence_test();
        if (!tested) return "fence_test: " + tested.status().to_string();
        if (*tested) break;
        std::this_thread::sleep_for(1ms);
      }
    }
    for (std::uint32_t peer = 0; peer < 2; ++peer) {
      auto addr = c.get(peer, "addr");  // put before the first fence, carried by neither fence_done again
      if (!addr || *addr != "rank " + std::to_string(peer)) return "rank " + std::to_string(peer) + "'s addr lost";
    }
    if (!c.finalize()) return "finalize failed";
    return {};
  };
  std::vector<std::thread> threads;
  for (std::uint32_t r = 0; r < 2; ++r) {
    threads.emplace_back([&, r] {
      failures[r] = run_rank(r);
      ++finished;
    });
  }
  job.serve_until([&] { return finished == 2; });
  for (auto& t : threads) t.join();
  for (std::uint32_t r = 0; r < 2; ++r) BOOST_TEST(failures[r].empty(), "rank " << r << ": " << failures[r]);
  BOOST_TEST(job.count(RankEvent::Kind::fence_entered) == 4u);
  BOOST_TEST(job.server->protocol_errors() == 0u);
}

// A rank whose every rail to a peer is silent asks ftrun whether that peer polls: ftrun pings it over its
// control connection, and answers polling when it replies (its progress loop runs), not polling when the
// window passes without a reply (it computes). The ping is ftrun's own: no control_reply event.
BOOST_AUTO_TEST_CASE(a_peer_check_says_whether_the_peer_polls) {
  TestJob job(2);
  std::optional<Client> clients[2];
  std::vector<std::thread> threads;
  for (std::uint32_t r = 0; r < 2; ++r) {
    threads.emplace_back([&, r] {
      auto c = Client::connect(job.rank(r), ClientOptions{});
      if (c) clients[r].emplace(std::move(*c));
    });
  }
  job.serve_until([&] { return job.count(RankEvent::Kind::connected) == 2; });
  for (auto& t : threads) t.join();
  BOOST_REQUIRE(clients[0].has_value());
  BOOST_REQUIRE(clients[1].has_value());
  Client& asker = *clients[0];
  Client& peer = *clients[1];
  std::vector<PeerStatus> got;
  const auto asker_reads = [&] {
    (void)asker.take_control();  // what the engine's serve_control does: read, then take the answers
    for (const PeerStatus& s : asker.take_peer_statuses()) got.push_back(s);
    return !got.empty();
  };
  // It polls: its progress loop answers the ping.
  BOOST_REQUIRE(asker.check_peer(1));
  job.serve_until([&] {
    for (const Control& c : peer.take_control()) BOOST_REQUIRE(peer.reply_control(c.id, true, "{}").is_ok());
    return asker_reads();
  });
  BOOST_REQUIRE(got.size() == 1u);
  BOOST_TEST(got[0].peer == 1u);
  BOOST_TEST(got[0].polling);
  // It computes: no answer within the window.
  got.clear();
  const auto asked = std::chrono::steady_clock::now();
  BOOST_REQUIRE(asker.check_peer(1));
  job.serve_until(asker_reads);
  BOOST_REQUIRE(got.size() == 1u);
  BOOST_TEST(!got[0].polling);
  BOOST_TEST((std::chrono::steady_clock::now() - asked >= kPeerCheckWindow));
  // Its late answer to that ping changes nothing, and no ping ever surfaces as a tool's reply.
  for (const Control& c : peer.take_control()) BOOST_REQUIRE(peer.reply_control(c.id, true, "{}").is_ok());
  BOOST_REQUIRE(job.server->poll_once(50ms).is_ok());
  for (RankEvent& e : job.server->take_events()) job.events.push_back(std::move(e));
  BOOST_TEST(job.count(RankEvent::Kind::control_reply) == 0u);
  BOOST_TEST(!asker.check_peer(2));  // no such rank: nothing asked
  BOOST_TEST(job.server->protocol_errors() == 0u);
}

BOOST_AUTO_TEST_CASE(a_wrong_secret_is_refused_counted_and_does_not_take_the_rank) {
  TestJob job(1);
  JobInfo impostor = job.rank(0);
  impostor.identity.secret[7] ^= 0x40;
  std::atomic<bool> done{false};
  ftmpi::base::Status refused;
  std::thread t([&] {
    refused = Client::connect(impostor, ClientOptions{}).status();
    done = true;
  });
  job.serve_until([&] { return done.load(); });
  t.join();
  BOOST_TEST((refused.code() == Errc::peer_unreachable));
  BOOST_TEST(refused.message().find("FTMPI_RTE_SECRET") != std::string::npos);
  BOOST_TEST(job.server->auth_failures() == 1u);
  BOOST_TEST(job.count(RankEvent::Kind::connected) == 0u);
  BOOST_TEST(!job.server->joined(0));

  // The real rank 0 still gets in.
  done = false;
  bool ok = false;
  std::thread real([&] {
    auto c = Client::connect(job.rank(0), ClientOptions{});
    ok = c.is_ok() && c->fence().is_ok() && c->finalize().is_ok();
    done = true;
  });
  job.serve_until([&] { return done.load(); });
  real.join();
  BOOST_TEST(ok);
  BOOST_TEST(job.server->joined(0));
}

BOOST_AUTO_TEST_CASE(a_malformed_frame_closes_only_that_connection) {
  TestJob job(2);
  UniqueFd good = raw_connect(job.server->addresses().front());
  UniqueFd bad = raw_connect(job.server->addresses().front());
  raw_send(good.get(), encode(Hello{kProtocolVersion, 0, 1, job.identity.secret}));
  raw_send(bad.get(), encode(Hello{kProtocolVersion, 1, 2, job.identity.secret}));
  job.serve_until([&] { return job.count(RankEvent::Kind::connected) == 2; });
  // A frame header of a type nobody knows.
  raw_send(bad.get(), std::string("\0\0\0\0\x77", 5));
  job.serve_until([&] { return job.count(RankEvent::Kind::disconnected) == 1; });
  BOOST_TEST(job.server->protocol_errors() == 1u);
  BOOST_TEST(job.events.back().rank == 1u);
  job.serve_until([&] { return peer_closed(bad.get()); });
  BOOST_TEST(job.server->connected(0));
  BOOST_TEST(!job.server->connected(1));
  // Rank 0 still talks.
  raw_send(good.get(), encode(Abort{3, "bye"}));
  job.serve_until([&] { return job.count(RankEvent::Kind::aborted) == 1; });
  BOOST_TEST(job.events.back().code == 3);
  BOOST_TEST(job.events.back().message == "bye");
}

BOOST_AUTO_TEST_CASE(an_oversized_length_is_refused_without_waiting_for_the_body) {
  TestJob job(1);
  UniqueFd fd = raw_connect(job.server->addresses().front());
  raw_send(fd.get(), encode(Hello{kProtocolVersion, 0, 1, job.identity.secret}));
  raw_send(fd.get(), std::string("\xff\xff\xff\x3f\x03", 5));  // a put of 1 GiB
  job.serve_until([&] { return job.server->protocol_errors() == 1; });
  job.serve_until([&] { return peer_closed(fd.get()); });
}

BOOST_AUTO_TEST_CASE(a_frame_before_hello_is_an_authentication_failure) {
  TestJob job(1);
  UniqueFd fd = raw_connect(job.server->addresses().front());
  raw_send(fd.get(), encode(Put{"k", "v"}));
  job.serve_until([&] { return job.server->auth_failures() == 1; });
  job.serve_until([&] { return peer_closed(fd.get()); });
}

BOOST_AUTO_TEST_CASE(a_rank_may_connect_only_once) {
  TestJob job(2);
  UniqueFd first = raw_connect(job.server->addresses().front());
  UniqueFd second = raw_connect(job.server->addresses().front());
  raw_send(first.get(), encode(Hello{kProtocolVersion, 1, 1, job.identity.secret}));
  job.serve_until([&] { return job.count(RankEvent::Kind::connected) == 1; });
  raw_send(second.get(), encode(Hello{kProtocolVersion, 1, 2, job.identity.secret}));
  job.serve_until([&] { return job.server->protocol_errors() == 1; });
  BOOST_TEST(job.server->connected(1));
  UniqueFd out_of_range = raw_connect(job.server->addresses().front());
  raw_send(out_of_range.get(), encode(Hello{kProtocolVersion, 2, 3, job.identity.secret}));
  job.serve_until([&] { return job.server->protocol_errors() == 2; });
}

BOOST_AUTO_TEST_CASE(a_silent_connection_is_dropped_after_the_auth_timeout) {
  TestJob job(1, 100ms);
  UniqueFd fd = raw_connect(job.server->addresses().front());
  job.serve_until([&] { return job.server->auth_failures() == 1; });
  job.serve_until([&] { return peer_closed(fd.get()); });
}

BOOST_AUTO_TEST_CASE(fence_needs_names_the_ranks_a_pending_fence_waits_for) {
  TestJob job(2);
  UniqueFd r0 = raw_connect(job.server->addresses().front());
  raw_send(r0.get(), encode(Hello{kProtocolVersion, 0, 1, job.identity.secret}));
  job.serve_until([&] { return job.server->joined(0); });
  BOOST_TEST(!job.server->fence_needs(1));  // nobody waits yet
  raw_send(r0.get(), encode(Fence{1}));
  job.serve_until([&] { return job.count(RankEvent::Kind::fence_entered) == 1; });
  BOOST_TEST(job.server->fence_needs(1));
  BOOST_TEST(!job.server->fence_needs(0));
  // A fence epoch out of turn is a protocol error.
  raw_send(r0.get(), encode(Fence{5}));
  job.serve_until([&] { return job.server->protocol_errors() == 1; });
}

BOOST_AUTO_TEST_CASE(a_put_over_the_rank_budget_is_refused_by_client_and_server) {
  TestJob job(1);
  std::atomic<bool> done{false};
  ftmpi::base::Status over;
  std::thread t([&] {
    auto c = Client::connect(job.rank(0), ClientOptions{});
    if (!c) {
      over = c.status();
    } else {
      const std::string value(kMaxValueBytes, 'v');
      for (int i = 0; over.is_ok(); ++i) over = c->put("key" + std::to_string(i), value);
    }
    done = true;
  });
  job.serve_until([&] { return done.load(); });
  t.join();
  BOOST_TEST((over.code() == Errc::resource_exhausted));

  // The server enforces the same budget on a rank that skips the client's check.
  TestJob raw_job(1);
  UniqueFd raw = raw_connect(raw_job.server->addresses().front());
  raw_send(raw.get(), encode(Hello{kProtocolVersion, 0, 1, raw_job.identity.secret}));
  for (int i = 0; i < 5; ++i)
    raw_send(raw.get(), encode(Put{"key" + std::to_string(i), std::string(kMaxValueBytes, 'v')}));
  raw_job.serve_until([&] { return raw_job.server->protocol_errors() == 1; });
}

BOOST_AUTO_TEST_CASE(a_singleton_client_sees_its_own_puts_after_a_fence) {
  auto client = Client::singleton();
  BOOST_REQUIRE(client.is_ok());
  BOOST_TEST(client->is_singleton());
  BOOST_TEST(client->rank() == 0u);
  BOOST_TEST(client->size() == 1u);
  BOOST_TEST(client->put("k", "v").is_ok());
  BOOST_TEST((client->get(0, "k").code() == Errc::not_found));
  BOOST_TEST(client->fence().is_ok());
  BOOST_TEST(*client->get(0, "k") == "v");
  BOOST_TEST(client->finalize().is_ok());
  BOOST_TEST((client->put("k", "w").code() == Errc::invalid_argument));
}

BOOST_AUTO_TEST_SUITE_END()

// The control plane's request language, rank lists and job records (rte/control.hpp).
#include "ftmpi/rte/control.hpp"

#include <unistd.h>

#include <algorithm>
#include <boost/test/unit_test.hpp>
#include <cstdlib>
#include <random>
#include <string>

#include "ftmpi/test/seed.hpp"

using namespace ftmpi::rte;
using namespace std::chrono_literals;

namespace {

ControlRequest parsed(std::string_view line) {
  auto r = parse_control_request(line);
  BOOST_TEST_REQUIRE(r.is_ok(), line << ": " << r.status().to_string());
  return *r;
}

std::string error_of(std::string_view line) {
  auto r = parse_control_request(line);
  BOOST_TEST_REQUIRE(!r.is_ok(), line << " was accepted");
  return r.status().message();
}

}  // namespace

BOOST_AUTO_TEST_SUITE(control)

BOOST_AUTO_TEST_CASE(every_operation_and_key_is_parsed) {
  const ControlRequest stats = parsed("ftmpi-control 1 stats");
  BOOST_TEST((stats.op == ControlOp::stats));
  BOOST_TEST(stats.ranks.empty());
  BOOST_TEST((stats.timeout == std::chrono::nanoseconds(kControlDefaultTimeout)));
  const ControlRequest d = parsed("ftmpi-control 1 disable rail=eth1 ranks=3,0-1 peers=7 timeout=500ms");
  BOOST_TEST((d.op == ControlOp::disable));
  BOOST_TEST(d.rail == "eth1");
  BOOST_TEST((d.ranks == std::vector<std::uint32_t>{0, 1, 3}));
  BOOST_TEST((d.peers == std::vector<std::uint32_t>{7}));
  BOOST_TEST((d.timeout == std::chrono::nanoseconds(500ms)));
  BOOST_TEST(d.names_rank(3));
  BOOST_TEST(!d.names_rank(2));
  BOOST_TEST(stats.names_rank(4095));
  BOOST_TEST((parsed("  ftmpi-control\t1 enable rail=1  ").op == ControlOp::enable));
  const ControlRequest inject = parsed("ftmpi-control 1 inject spec=drop=0.05,for=2s rail=veth1 ranks=1");
  BOOST_TEST((inject.op == ControlOp::inject));
  BOOST_TEST(inject.spec == "drop=0.05,for=2s");  // split at the first '='
  BOOST_TEST(inject.rail == "veth1");
  BOOST_TEST(parsed("ftmpi-control 1 clear").rail.empty());
  BOOST_TEST(parsed("ftmpi-control 1 clear rail=0").rail == "0");
  BOOST_TEST((parsed("ftmpi-control 1 faults").op == ControlOp::faults));
  BOOST_TEST(parsed("ftmpi-control 1 events after=41").after == 41u);
}

BOOST_AUTO_TEST_CASE(every_error_says_what_is_wrong) {
  BOOST_TEST(error_of("") == "control request: does not start with 'ftmpi-control'");
  BOOST_TEST(error_of("GET / HTTP/1.1") == "control request: does not start with 'ftmpi-control'");
  BOOST_TEST(error_of("ftmpi-control 2 stats").find("protocol version '2'") != std::string::npos);
  BOOST_TEST(error_of("ftmpi-control 1") ==
             "control request: no operation (stats, disable, enable, ping, inject, clear, faults, events, record)");
  BOOST_TEST(error_of("ftmpi-control 1 reboot") ==
             "control request: unknown operation 'reboot' (known: stats, disable, enable, ping, inject, clear, faults, "
             "events, record)");
  BOOST_TEST(error_of("ftmpi-control 1 inject") == "control request: inject needs spec=SPEC");
  BOOST_TEST(error_of("ftmpi-control 1 stats spec=drop=1") == "control request: stats takes no spec");
  BOOST_TEST(error_of("ftmpi-control 1 inject spec=") == "control request: '' is not a fault SPEC");
  BOOST_TEST(error_of("ftmpi-control 1 faults rail=1") == "control request: faults takes no rail");
  BOOST_TEST(error_of("ftmpi-control 1 events after=x") == "control request: after: 'x' is not an event number");
  BOOST_TEST(error_of("ftmpi-control 1 stats after=1") == "control request: stats takes no after");
  BOOST_TEST(error_of("ftmpi-control 1 disable") == "control request: disable needs rail=R");
  BOOST_TEST(error_of("ftmpi-control 1 stats rail=1") == "control request: stats takes no rail");
  BOOST_TEST(error_of("ftmpi-control 1 stats peers=1") == "control request: stats takes no peers");
  BOOST_TEST(error_of("ftmpi-control 1 ping rail=1") == "control request: ping takes no rail");
  BOOST_TEST(parse_control_request("ftmpi-control 1 ping ranks=2").is_ok());
  BOOST_TEST(error_of("ftmpi-control 1 enable rail=1 rail=2") == "control request: rail given twice");
  BOOST_TEST(error_of("ftmpi-control 1 enable rail") == "control request: 'rail' is not KEY=VALUE");
  BOOST_TEST(error_of("ftmpi-control 1 enable rail=") == "control request: '' is not a rail name or index");
  BOOST_TEST(error_of("ftmpi-control 1 enable rial=1").find("unknown key 'rial'") != std::string::npos);
  BOOST_TEST(error_of("ftmpi-control 1 stats ranks=3-1").find("runs backwards") != std::string::npos);
  BOOST_TEST(error_of("ftmpi-control 1 stats ranks=1,,2").find("an empty item") != std::string::npos);
  BOOST_TEST(error_of("ftmpi-control 1 stats ranks=x").find("'x' is not a rank") != std::string::npos);
  BOOST_TEST(error_of("ftmpi-control 1 stats ranks=5000").find("beyond the largest job") != std::string::npos);
  BOOST_TEST(error_of("ftmpi-control 1 stats timeout=0s").find("above 0 and at most 60s") != std::string::npos);
  BOOST_TEST(error_of("ftmpi-control 1 stats timeout=61s").find("at most 60s") != std::string::npos);
  BOOST_TEST(error_of("ftmpi-control 1 stats timeout=soon").find("timeout:") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(to_string_round_trips_every_request) {
  const std::uint64_t seed = ftmpi::test::seed_for("control request round trip");
  BOOST_TEST_CONTEXT("seed " << seed) {
    std::mt19937_64 random(seed);
    const char* rails[] = {"0", "1", "eth1", "10.0.0.1", "veth-r2"};
    auto some_ranks = [&] {
      std::vector<std::uint32_t> ranks;
      for (std::uint32_t r = 0; r < 20; ++r) {
        if (random() % 3 == 0) ranks.push_back(r * 7 % 4096);
      }
      std::sort(ranks.begin(), ranks.end());
      ranks.erase(std::unique(ranks.begin(), ranks.end()), ranks.end());
      return ranks;
    };
    for (int i = 0; i < 2000; ++i) {
      ControlRequest r;
      r.op = static_cast<ControlOp>(random() % 9);
      if (r.op == ControlOp::disable || r.op == ControlOp::enable) {
        r.rail = rails[random() % std::size(rails)];
        r.peers = some_ranks();
      }
      if ((r.op == ControlOp::inject || r.op == ControlOp::clear) && random() % 2 != 0) {
        r.rail = rails[random() % std::size(rails)];
      }
      if (r.op == ControlOp::inject) r.spec = "drop=0." + std::to_string(random() % 100) + ",seed=7";
      if (r.op == ControlOp::events) r.after = random() % 3 == 0 ? 0 : random();
      r.ranks = some_ranks();
      if (random() % 2 != 0) r.timeout = std::chrono::milliseconds(1 + random() % 60000);
      const std::string line = to_string(r);
      auto back = parse_control_request(line);
      BOOST_TEST_REQUIRE(back.is_ok(), line << ": " << back.status().to_string());
      BOOST_TEST_REQUIRE((*back == r), "'" << line << "' does not parse back to the same request");
    }
  }
}

BOOST_AUTO_TEST_CASE(random_bytes_are_refused_or_parsed_never_more) {
  // The decoder runs on whatever a local process writes to the socket: any bytes get an answer.
  const std::uint64_t seed = ftmpi::test::seed_for("control request random bytes");
  BOOST_TEST_CONTEXT("seed " << seed) {
    std::mt19937_64 random(seed);
    const std::string pieces[] = {"ftmpi-control", " ", "1", "stats", "disable", "enable", "inject", "clear", "faults", "events", "spec=", "after=", "rail=", "ranks=",
                                  "peers=", "timeout=", "=", ",", "-", "0", "4095", "99999999999", "1s", "\t"};
    for (int i = 0; i < 20000; ++i) {
      std::string line;
      const int n = static_cast<int>(random() % 12);
      for (int k = 0; k < n; ++k) {
        if (random() % 4 == 0) {
          line += static_cast<char>(random());
        } else {
          line += pieces[random() % std::size(pieces)];
        }
      }
      auto r = parse_control_request(line);
      if (r) {
        BOOST_TEST_REQUIRE(parse_control_request(to_string(*r)).is_ok(), "'" << line << "'");
      } else {
        BOOST_TEST_REQUIRE(r.status().message().starts_with("control request: "), r.status().message());
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(rank_lists_are_sorted_unique_and_printed_as_ranges) {
  BOOST_TEST((parse_rank_list("5,0-2, 2 ,9").value() == std::vector<std::uint32_t>{0, 1, 2, 5, 9}));
  BOOST_TEST(rank_list_text({0, 1, 2, 5, 7, 8}) == "0-2,5,7-8");
  BOOST_TEST(rank_list_text({}) == "");
  BOOST_TEST(!parse_rank_list("").is_ok());
  BOOST_TEST(!parse_rank_list("1-").is_ok());
}

BOOST_AUTO_TEST_CASE(a_job_record_round_trips_through_json) {
  JobRecord r;
  r.id = "0123456789abcdef";
  r.pid = 4242;
  r.command = "./app --input \"my file\"";
  r.started = 1764000000;
  r.ranks = 8;
  r.hosts = {"node1", "node2"};
  r.socket = "/tmp/ftmpi-0/0123456789abcdef.sock";
  auto back = JobRecord::from_json(r.to_json());
  BOOST_TEST_REQUIRE(back.is_ok(), back.status().to_string());
  BOOST_TEST(back->id == r.id);
  BOOST_TEST(back->pid == r.pid);
  BOOST_TEST(back->command == r.command);
  BOOST_TEST(back->started == r.started);
  BOOST_TEST(back->ranks == r.ranks);
  BOOST_TEST((back->hosts == r.hosts));
  BOOST_TEST(back->socket == r.socket);
  BOOST_TEST(!back->served_rank.has_value());
  r.served_rank = 5;  // a rank that serves itself (srun)
  BOOST_TEST((JobRecord::from_json(r.to_json())->served_rank == std::optional<std::uint32_t>(5)));
  BOOST_TEST(!JobRecord::from_json("{}").is_ok());
  BOOST_TEST(!JobRecord::from_json("not json").is_ok());
}

BOOST_AUTO_TEST_CASE(the_runtime_directory_follows_xdg_runtime_dir) {
  const char* old = std::getenv("XDG_RUNTIME_DIR");
  const std::string saved = old != nullptr ? old : "";
  ::setenv("XDG_RUNTIME_DIR", "/run/user/1000", 1);
  BOOST_TEST(runtime_directory() == "/run/user/1000/ftmpi");
  ::unsetenv("XDG_RUNTIME_DIR");
  BOOST_TEST(runtime_directory() == "/tmp/ftmpi-" + std::to_string(::getuid()));
  ::setenv("XDG_RUNTIME_DIR", "relative", 1);  // not absolute: ignored, as the XDG spec says
  BOOST_TEST(runtime_directory().starts_with("/tmp/ftmpi-"));
  if (old != nullptr) {
    ::setenv("XDG_RUNTIME_DIR", saved.c_str(), 1);
  } else {
    ::unsetenv("XDG_RUNTIME_DIR");
  }
}

BOOST_AUTO_TEST_SUITE_END()

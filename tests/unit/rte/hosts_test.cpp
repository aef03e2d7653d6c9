// Host lists, hostfiles, slot filling and telling this host from others.
#include "ftmpi/rte/hosts.hpp"

#include <unistd.h>

#include <boost/test/unit_test.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

using namespace ftmpi::rte;
using ftmpi::base::Errc;

namespace {

std::vector<HostSlots> hosts(std::initializer_list<HostSlots> list) { return list; }

std::string error_of(std::string_view list) {
  auto parsed = parse_host_list(list);
  BOOST_REQUIRE_MESSAGE(!parsed, "'" << list << "' was accepted");
  return parsed.status().message();
}

std::string hostfile_error(std::string_view text) {
  auto parsed = parse_hostfile(text, "hosts.txt");
  BOOST_REQUIRE_MESSAGE(!parsed, "'" << text << "' was accepted");
  return parsed.status().message();
}

}  // namespace

BOOST_AUTO_TEST_SUITE(host_list)

BOOST_AUTO_TEST_CASE(hosts_take_one_slot_unless_told_and_repeats_add_slots) {
  auto parsed = parse_host_list("a,b:2,a,c:3,b");
  BOOST_REQUIRE_MESSAGE(parsed.is_ok(), parsed.status().to_string());
  BOOST_TEST((*parsed == hosts({{"a", 2}, {"b", 3}, {"c", 3}})));
  BOOST_TEST(total_slots(*parsed) == 8u);
}

BOOST_AUTO_TEST_CASE(ipv6_addresses_take_slots_only_in_brackets) {
  auto parsed = parse_host_list("[fe80::1]:4,fe80::2,[::1],user@node7:2");
  BOOST_REQUIRE_MESSAGE(parsed.is_ok(), parsed.status().to_string());
  BOOST_TEST((*parsed == hosts({{"fe80::1", 4}, {"fe80::2", 1}, {"::1", 1}, {"user@node7", 2}})));
}

BOOST_AUTO_TEST_CASE(malformed_lists_are_refused_with_the_reason) {
  BOOST_TEST(error_of("").find("empty host name") != std::string::npos);
  BOOST_TEST(error_of("a,,b").find("empty host name") != std::string::npos);
  BOOST_TEST(error_of("a,").find("empty host name") != std::string::npos);
  BOOST_TEST(error_of("a:0").find("from 1 to 4096") != std::string::npos);
  BOOST_TEST(error_of("a:4097").find("from 1 to 4096") != std::string::npos);
  BOOST_TEST(error_of("a:two").find("slots 'two'") != std::string::npos);
  BOOST_TEST(error_of("a:").find("no slots") != std::string::npos);
  BOOST_TEST(error_of("[::1").find("no closing") != std::string::npos);
  BOOST_TEST(error_of("[::1]x").find("[address]:slots") != std::string::npos);
  // Names reach an agent's command line: nothing a shell or ssh would interpret.
  BOOST_TEST(error_of("-oProxyCommand=evil").find("starts with '-'") != std::string::npos);
  BOOST_TEST(error_of("a b").find("contains ' '") != std::string::npos);
  BOOST_TEST(error_of("a;reboot").find("contains ';'") != std::string::npos);
  BOOST_TEST(error_of("$(id)").find("contains '$'") != std::string::npos);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(hostfile)

BOOST_AUTO_TEST_CASE(lines_comments_blanks_and_slots) {
  auto parsed = parse_hostfile(
      "# the cluster\n"
      "node1 slots=4\n"
      "\n"
      "   node2\t # one slot\n"
      "node3    slots=2   \r\n"
      "node1 slots=1\n"
      "node4",  // no newline at the end
      "hosts.txt");
  BOOST_REQUIRE_MESSAGE(parsed.is_ok(), parsed.status().to_string());
  BOOST_TEST((*parsed == hosts({{"node1", 5}, {"node2", 1}, {"node3", 2}, {"node4", 1}})));
}

BOOST_AUTO_TEST_CASE(a_bad_line_is_named_by_file_and_line_number) {
  BOOST_TEST(hostfile_error("a\nb slots=x\n").starts_with("hosts.txt:2: "));
  BOOST_TEST(
      hostfile_error("a\n\n# c\nb max_slots=3\n").starts_with("hosts.txt:4: 'max_slots=3' is not slots=N"));
  BOOST_TEST(hostfile_error("b slots=1 slots=2").starts_with("hosts.txt:1: slots= given twice"));
  BOOST_TEST(hostfile_error("a\n-evil\n").starts_with("hosts.txt:2: host name '-evil' starts with '-'"));
  BOOST_TEST(hostfile_error("a slots=0").starts_with("hosts.txt:1: "));
  BOOST_TEST(hostfile_error("# nothing\n\n") == "hosts.txt: lists no host");
}

BOOST_AUTO_TEST_CASE(read_hostfile_reads_a_file_and_names_one_it_cannot_read) {
  const std::string path =
      (std::filesystem::temp_directory_path() / ("ftmpi-hosts-" + std::to_string(getpid()))).string();
  {
    std::ofstream out(path);
    out << "x slots=2\ny\n";
  }
  auto parsed = read_hostfile(path);
  std::filesystem::remove(path);
  BOOST_REQUIRE_MESSAGE(parsed.is_ok(), parsed.status().to_string());
  BOOST_TEST((*parsed == hosts({{"x", 2}, {"y", 1}})));
  auto missing = read_hostfile(path);
  BOOST_REQUIRE(!missing);
  BOOST_TEST(missing.status().message().find("cannot read hostfile '" + path + "'") != std::string::npos);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(placement)

BOOST_AUTO_TEST_CASE(ranks_fill_each_hosts_slots_in_order) {
  const auto list = hosts({{"a", 2}, {"b", 2}, {"c", 1}});
  BOOST_TEST((*place_ranks(list, 5, false) == std::vector<std::string>{"a", "a", "b", "b", "c"}));
  BOOST_TEST((*place_ranks(list, 3, false) == std::vector<std::string>{"a", "a", "b"}));
  BOOST_TEST((*place_ranks(list, 1, false) == std::vector<std::string>{"a"}));
}

BOOST_AUTO_TEST_CASE(more_ranks_than_slots_is_an_error_that_counts_the_slots) {
  auto placed = place_ranks(hosts({{"a", 2}, {"b", 2}}), 5, false);
  BOOST_REQUIRE(!placed);
  BOOST_TEST((placed.code() == Errc::resource_exhausted));
  BOOST_TEST(
      placed.status().message() ==
      "5 ranks do not fit in the 4 slots of 2 hosts (use --oversubscribe to allow more ranks than slots)");
}

BOOST_AUTO_TEST_CASE(oversubscribed_ranks_go_round_robin_after_the_slots) {
  auto placed = place_ranks(hosts({{"a", 2}, {"b", 1}}), 7, true);
  BOOST_REQUIRE(placed.is_ok());
  BOOST_TEST((*placed == std::vector<std::string>{"a", "a", "b", "a", "b", "a", "b"}));
}

BOOST_AUTO_TEST_CASE(this_host_is_known_by_its_names_and_loopback) {
  BOOST_TEST(is_local_host("localhost", "node1"));
  BOOST_TEST(is_local_host("127.0.0.1", "node1"));
  BOOST_TEST(is_local_host("127.1.2.3", "node1"));
  BOOST_TEST(is_local_host("::1", "node1"));
  BOOST_TEST(is_local_host("node1", "node1"));
  BOOST_TEST(is_local_host("node1", "node1.cluster.example"));
  BOOST_TEST(is_local_host("node1.cluster.example", "node1"));
  BOOST_TEST(!is_local_host("node1.other.example", "node1.cluster.example"));
  BOOST_TEST(!is_local_host("node10", "node1"));
  BOOST_TEST(!is_local_host("127.example", "node1"));
  BOOST_TEST(!is_local_host("10.0.0.1", "node1"));
  auto name = local_hostname();
  BOOST_REQUIRE(name.is_ok());
  BOOST_TEST(is_local_host(*name, *name));
}

BOOST_AUTO_TEST_SUITE_END()

// What ftbench reads from a job (results.hpp): the kernels' JSON lines on stdout, the engine's statistics on
// stderr, and the small helpers that turn figures into text.
#include "ftmpi/bench/results.hpp"

#include <boost/test/unit_test.hpp>
#include <string>
#include <vector>

using namespace ftmpi::bench;

BOOST_AUTO_TEST_SUITE(results)

BOOST_AUTO_TEST_CASE(kernel_lines_are_read_and_everything_else_passed_over) {
  const std::string out =
      "ftbench-mpi: warming up\n"
      "\n"
      "| size | lat |\n"
      "{\"kernel\": \"lat\", \"bytes\": 0, \"value\": 0.143, \"unit\": \"us\", \"ranks\": 2, \"reps\": 5, \"library\": \"ftmpi 0.3\"}\n"
      "{\"kernel\": \"lat\", \"bytes\": 8192 \n"                        // cut short: not JSON
      "{\"not a kernel\": true, \"value\": 1}\n"                        // no kernel
      "{\"kernel\": 7, \"bytes\": 8, \"value\": 1, \"unit\": \"us\"}\n"  // kernel not a string
      "{\"kernel\": \"bw\", \"bytes\": 8, \"value\": \"fast\"}\n"         // value not a number
      "[\"kernel\", \"lat\"]\n"
      "\"kernel\"\n"
      "  {\"kernel\": \"bw\", \"bytes\": 1048576, \"value\": 1.2345e+04, \"unit\": \"MB/s\", \"library\": \"ftmpi 0.3\"}  \n"
      "{\"kernel\": \"rate\", \"bytes\": 8, \"value\": 4.5, \"unit\": \"Mmsg/s\"}";  // the last line needs no newline
  const KernelOutput k = parse_kernel_lines(out);
  BOOST_TEST(k.library == "ftmpi 0.3");
  BOOST_TEST_REQUIRE(k.results.size() == 3u);
  BOOST_TEST(k.results[0].kernel == "lat");
  BOOST_TEST(k.results[0].bytes == 0u);
  BOOST_TEST(k.results[0].value == 0.143);
  BOOST_TEST(k.results[0].unit == "us");
  BOOST_TEST(k.results[1].kernel == "bw");
  BOOST_TEST(k.results[1].bytes == 1048576u);
  BOOST_TEST(k.results[1].value == 12345.0);
  BOOST_TEST(k.results[1].unit == "MB/s");
  BOOST_TEST(k.results[2].kernel == "rate");
  BOOST_TEST(k.results[2].bytes == 8u);
  BOOST_TEST(k.results[2].value == 4.5);
  BOOST_TEST(k.results[2].unit == "Mmsg/s");
}

BOOST_AUTO_TEST_CASE(the_library_is_taken_from_the_kernel_lines_and_nothing_gives_nothing) {
  const KernelOutput named = parse_kernel_lines(
      "{\"kernel\": \"barrier\", \"bytes\": 0, \"value\": 2, \"unit\": \"us\", \"library\": \"Open MPI v4.1.4\"}\n");
  BOOST_TEST(named.library == "Open MPI v4.1.4");
  BOOST_TEST(named.results.size() == 1u);
  const KernelOutput unnamed = parse_kernel_lines("{\"kernel\": \"barrier\", \"bytes\": 0, \"value\": 2, \"unit\": \"us\"}\n");
  BOOST_TEST(unnamed.library.empty());
  BOOST_TEST(unnamed.results.size() == 1u);
  const KernelOutput none = parse_kernel_lines("no kernels ran\n{\"library\": \"not a kernel line\"}\n");
  BOOST_TEST(none.library.empty());
  BOOST_TEST(none.results.empty());
  BOOST_TEST(parse_kernel_lines("").results.empty());
}

BOOST_AUTO_TEST_CASE(rail_traffic_sums_both_ranks_per_rail_in_the_order_first_seen) {
  const std::string err =
      "ftrun: 2 ranks on 1 host\n"
      "ftmpi stats: {\"rank\": 0, \"rails\": [{\"name\": \"shm\", \"bytes_sent\": 100, \"retransmits\": 1, \"timeouts\": 0, "
      "\"checksum_failures\": 0}, {\"name\": \"udp lo 127.0.0.1\", \"bytes_sent\": 1000, \"retransmits\": 2, \"timeouts\": 3, "
      "\"checksum_failures\": 4}]}\n"
      "a warning from rank 0\n"
      "[rank 1] ftmpi stats: {\"rank\": 1, \"rails\": [{\"name\": \"udp lo 127.0.0.2\", \"bytes_sent\": 7, \"retransmits\": 0, "
      "\"timeouts\": 0, \"checksum_failures\": 0}, {\"name\": \"udp lo 127.0.0.1\", \"bytes_sent\": 500, \"retransmits\": 20, "
      "\"timeouts\": 30, \"checksum_failures\": 40}, {\"name\": \"shm\", \"bytes_sent\": 50}]}\n";
  std::string rest;
  const std::vector<RailTraffic> rails = parse_rail_traffic(err, &rest);
  BOOST_TEST_REQUIRE(rails.size() == 3u);
  BOOST_TEST(rails[0].name == "shm");
  BOOST_TEST(rails[0].bytes_sent == 150u);
  BOOST_TEST(rails[0].retransmits == 1u);
  BOOST_TEST(rails[1].name == "udp lo 127.0.0.1");
  BOOST_TEST(rails[1].bytes_sent == 1500u);
  BOOST_TEST(rails[1].retransmits == 22u);
  BOOST_TEST(rails[1].timeouts == 33u);
  BOOST_TEST(rails[1].checksum_failures == 44u);
  BOOST_TEST(rails[2].name == "udp lo 127.0.0.2");
  BOOST_TEST(rails[2].bytes_sent == 7u);
  BOOST_TEST(rest == "ftrun: 2 ranks on 1 host\na warning from rank 0\n");
}

BOOST_AUTO_TEST_CASE(lines_that_are_not_statistics_go_to_rest_intact_and_in_order) {
  const std::string err =
      "first\n"
      "\n"
      "  indented, with trailing space  \n"
      "ftmpi stats: not json at all\n"
      "ftmpi stats: {\"rank\": 0}\n"                       // an object without rails
      "ftmpi stats: {\"rails\": \"shm\"}\n"                // rails not an array
      "ftmpi stats: [1, 2]\n"                              // not an object
      "{\"rails\": [{\"name\": \"shm\", \"bytes_sent\": 1}]}\n"  // no prefix: not statistics
      "windows line\r\n"
      "ftmpi stats: {\"rails\": [{\"name\": \"shm\", \"bytes_sent\": 9}]}\n"
      "last\n";
  std::string rest;
  const std::vector<RailTraffic> rails = parse_rail_traffic(err, &rest);
  BOOST_TEST_REQUIRE(rails.size() == 1u);
  BOOST_TEST(rails[0].name == "shm");
  BOOST_TEST(rails[0].bytes_sent == 9u);
  BOOST_TEST(rest ==
             "first\n"
             "\n"
             "  indented, with trailing space  \n"
             "ftmpi stats: not json at all\n"
             "ftmpi stats: {\"rank\": 0}\n"
             "ftmpi stats: {\"rails\": \"shm\"}\n"
             "ftmpi stats: [1, 2]\n"
             "{\"rails\": [{\"name\": \"shm\", \"bytes_sent\": 1}]}\n"
             "windows line\r\n"
             "last\n");
  // Without somewhere to put the rest, the statistics are read all the same.
  BOOST_TEST(parse_rail_traffic(err).size() == 1u);
  // Nothing at all: no rails, nothing left over.
  std::string none;
  BOOST_TEST(parse_rail_traffic("", &none).empty());
  BOOST_TEST(none.empty());
}

BOOST_AUTO_TEST_CASE(rates_are_better_higher_and_times_lower) {
  BOOST_TEST(higher_is_better("MB/s"));
  BOOST_TEST(higher_is_better("Mmsg/s"));
  BOOST_TEST(!higher_is_better("us"));
  BOOST_TEST(!higher_is_better(""));
}

BOOST_AUTO_TEST_CASE(median_of_odd_even_and_no_values) {
  BOOST_TEST(median({3, 1, 2}) == 2.0);
  BOOST_TEST(median({5, 1, 9, 7, 3}) == 5.0);
  BOOST_TEST(median({4, 1, 3, 2}) == 2.5);
  BOOST_TEST(median({10, 0}) == 5.0);
  BOOST_TEST(median({42}) == 42.0);
  BOOST_TEST(median({}) == 0.0);
}

BOOST_AUTO_TEST_CASE(sizes_are_written_in_binary_units) {
  BOOST_TEST(size_text(0) == "0 B");
  BOOST_TEST(size_text(8) == "8 B");
  BOOST_TEST(size_text(1023) == "1023 B");
  BOOST_TEST(size_text(1024) == "1 KB");
  BOOST_TEST(size_text(1536) == "1536 B");
  BOOST_TEST(size_text(8192) == "8 KB");
  BOOST_TEST(size_text(1u << 20) == "1 MB");
  BOOST_TEST(size_text((1u << 20) + 1024) == "1025 KB");
  BOOST_TEST(size_text(4u << 20) == "4 MB");
  BOOST_TEST(size_text(std::uint64_t{3} << 32) == "12288 MB");
}

BOOST_AUTO_TEST_CASE(figures_are_written_to_about_three_significant_figures) {
  BOOST_TEST(figure_text(0.143) == "0.143");
  BOOST_TEST(figure_text(0.1434) == "0.143");
  BOOST_TEST(figure_text(0) == "0.000");
  BOOST_TEST(figure_text(2) == "2.000");
  BOOST_TEST(figure_text(12.5) == "12.5");
  BOOST_TEST(figure_text(12.54) == "12.5");
  BOOST_TEST(figure_text(100) == "100");
  BOOST_TEST(figure_text(4138) == "4138");
  BOOST_TEST(figure_text(4137.6) == "4138");
  BOOST_TEST(figure_text(99.96) == "100");  // the format follows the rounded value
  BOOST_TEST(figure_text(9.9996) == "10.0");
}

BOOST_AUTO_TEST_CASE(split_keeps_empty_fields) {
  BOOST_TEST((split("a,b,c") == std::vector<std::string>{"a", "b", "c"}));
  BOOST_TEST((split("") == std::vector<std::string>{""}));
  BOOST_TEST((split("a") == std::vector<std::string>{"a"}));
  BOOST_TEST((split(",a,,b,") == std::vector<std::string>{"", "a", "", "b", ""}));
  BOOST_TEST((split("/usr/bin:/bin", ':') == std::vector<std::string>{"/usr/bin", "/bin"}));
  BOOST_TEST((split("a,b", ':') == std::vector<std::string>{"a,b"}));
}

BOOST_AUTO_TEST_CASE(one_rail_across_hosts_is_one_entry_named_by_the_lowest_rank) {
  // Each rank names a rail by its own address; the path index says it is the same rail. Rank 1's
  // snapshot arrives first (the ranks' stderr interleaves in any order).
  const std::string err =
      "ftmpi stats: {\"rank\": 1, \"rails\": [{\"peer\": 0, \"index\": 1, \"name\": \"udp r2 10.77.2.2\", \"bytes_sent\": 5},"
      " {\"peer\": 0, \"index\": 0, \"name\": \"udp r1 10.77.1.2\", \"bytes_sent\": 7, \"retransmits\": 1}]}\n"
      "ftmpi stats: {\"rank\": 0, \"rails\": [{\"peer\": 1, \"index\": 0, \"name\": \"udp r1 10.77.1.1\", \"bytes_sent\": 100,"
      " \"retransmits\": 2}, {\"peer\": 1, \"index\": 1, \"name\": \"udp r2 10.77.2.1\", \"bytes_sent\": 90}]}\n";
  const std::vector<RailTraffic> rails = parse_rail_traffic(err);
  BOOST_TEST_REQUIRE(rails.size() == 2u);
  BOOST_TEST(rails[0].name == "udp r1 10.77.1.1");  // index order, rank 0's name
  BOOST_TEST(rails[0].bytes_sent == 107u);
  BOOST_TEST(rails[0].retransmits == 3u);
  BOOST_TEST(rails[1].name == "udp r2 10.77.2.1");
  BOOST_TEST(rails[1].bytes_sent == 95u);
}

BOOST_AUTO_TEST_SUITE_END()

// The Slurm allocation as ftrun reads it: SLURM_JOB_NODELIST's host-list syntax, SLURM_TASKS_PER_NODE's
// repetitions, and the two together.
#include "ftmpi/rte/slurm_allocation.hpp"

#include <boost/test/unit_test.hpp>
#include <string>
#include <vector>

using namespace ftmpi::rte;

namespace {

// What `parse` makes of `text`, which it must accept.
template <typename Parse>
auto value_of(Parse parse, std::string_view text) {
  auto parsed = parse(text);
  BOOST_REQUIRE_MESSAGE(parsed.is_ok(), "'" << text << "': " << parsed.status().to_string());
  return *parsed;
}

// Why `parse` refuses `text` (invalid_argument).
template <typename Parse>
std::string error_of(Parse parse, std::string_view text) {
  auto parsed = parse(text);
  BOOST_REQUIRE_MESSAGE(!parsed, "'" << text << "' was accepted");
  BOOST_TEST((parsed.code() == ftmpi::base::Errc::invalid_argument));
  return parsed.status().message();
}

auto names_of(std::string_view list) { return value_of(expand_slurm_hostlist, list); }
std::string hostlist_error(std::string_view list) { return error_of(expand_slurm_hostlist, list); }
auto tasks_of(std::string_view text) { return value_of(expand_slurm_tasks_per_node, text); }
std::string tasks_error(std::string_view text) { return error_of(expand_slurm_tasks_per_node, text); }

using Names = std::vector<std::string>;
using Counts = std::vector<std::uint64_t>;

}  // namespace

BOOST_AUTO_TEST_SUITE(slurm_hostlist)

BOOST_AUTO_TEST_CASE(plain_names_and_single_numbers) {
  BOOST_TEST((names_of("node1") == Names{"node1"}));
  BOOST_TEST((names_of("a,b.cluster,c-1") == Names{"a", "b.cluster", "c-1"}));
  BOOST_TEST((names_of("node[7]") == Names{"node7"}));
}

BOOST_AUTO_TEST_CASE(ranges_and_lists_inside_brackets_and_commas_outside) {
  BOOST_TEST((names_of("node[01-03,7],gpu5") == Names{"node01", "node02", "node03", "node7", "gpu5"}));
  BOOST_TEST((names_of("n[1-2],m[3-4]") == Names{"n1", "n2", "m3", "m4"}));
  BOOST_TEST((names_of("n[3-3]") == Names{"n3"}));
}

BOOST_AUTO_TEST_CASE(a_range_keeps_the_width_of_its_zero_padded_start) {
  BOOST_TEST((names_of("node[008-011]") == Names{"node008", "node009", "node010", "node011"}));
  BOOST_TEST((names_of("node[8-11]") == Names{"node8", "node9", "node10", "node11"}));
  BOOST_TEST((names_of("n[099-101]") == Names{"n099", "n100", "n101"}));
  BOOST_TEST((names_of("n[0]") == Names{"n0"}));
}

BOOST_AUTO_TEST_CASE(several_bracket_groups_expand_with_the_last_fastest) {
  BOOST_TEST((names_of("rack[1-2]-node[01-02]") ==
              Names{"rack1-node01", "rack1-node02", "rack2-node01", "rack2-node02"}));
  BOOST_TEST((names_of("r[1,3]n[5-6].ib,login") == Names{"r1n5.ib", "r1n6.ib", "r3n5.ib", "r3n6.ib", "login"}));
}

BOOST_AUTO_TEST_CASE(malformed_lists_are_refused_naming_the_fault) {
  BOOST_TEST(hostlist_error("").find("empty host name") != std::string::npos);
  BOOST_TEST(hostlist_error("a,,b").find("empty host name") != std::string::npos);
  BOOST_TEST(hostlist_error("a,").find("empty host name") != std::string::npos);
  BOOST_TEST(hostlist_error("node[1-3").find("without its ']'") != std::string::npos);
  BOOST_TEST(hostlist_error("node1-3]").find("without a '['") != std::string::npos);
  BOOST_TEST(hostlist_error("node[1[2]]").find("do not nest") != std::string::npos);
  BOOST_TEST(hostlist_error("node[]").find("is empty") != std::string::npos);
  BOOST_TEST(hostlist_error("node[1,,2]").find("empty item") != std::string::npos);
  BOOST_TEST(hostlist_error("node[5-3]").find("goes down") != std::string::npos);
  BOOST_TEST(hostlist_error("node[a-c]").find("not a number or a range") != std::string::npos);
  BOOST_TEST(hostlist_error("node[1-]").find("not a number or a range") != std::string::npos);
  BOOST_TEST(hostlist_error("node[-1]").find("not a number or a range") != std::string::npos);
  BOOST_TEST(hostlist_error("node[1-2-3]").find("not a number or a range") != std::string::npos);
  BOOST_TEST(hostlist_error("node[ 1]").find("not a number or a range") != std::string::npos);
  // Names reach srun's and a launch agent's command lines.
  BOOST_TEST(hostlist_error("-oProxy[1]").find("starts with '-'") != std::string::npos);
  BOOST_TEST(hostlist_error("node;rm").find("contains ';'") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(an_expansion_beyond_the_bound_is_refused_before_it_is_made) {
  BOOST_TEST(hostlist_error("n[0-999999999]").find("more than 65536 nodes") != std::string::npos);
  BOOST_TEST(hostlist_error("a[0-999]b[0-999]").find("more than 65536 nodes") != std::string::npos);
  BOOST_TEST(hostlist_error("a[0-40000],b[0-40000]").find("more than 65536 nodes") != std::string::npos);
  BOOST_TEST(hostlist_error("n[0-1000000000000000000000]").find("not a number") != std::string::npos);
  BOOST_TEST(names_of("n[1-65536]").size() == 65536u);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(slurm_tasks_per_node)

BOOST_AUTO_TEST_CASE(counts_and_repetitions) {
  BOOST_TEST((tasks_of("3") == Counts{3}));
  BOOST_TEST((tasks_of("2(x3),1") == Counts{2, 2, 2, 1}));
  BOOST_TEST((tasks_of("1,4(x2),2(x1)") == Counts{1, 4, 4, 2}));
}

BOOST_AUTO_TEST_CASE(malformed_values_are_refused_naming_the_item) {
  BOOST_TEST(tasks_error("").find("empty item") != std::string::npos);
  BOOST_TEST(tasks_error("2,").find("empty item") != std::string::npos);
  BOOST_TEST(tasks_error("0").find("from 1 to 4096") != std::string::npos);
  BOOST_TEST(tasks_error("4097").find("from 1 to 4096") != std::string::npos);
  BOOST_TEST(tasks_error("two").find("'two'") != std::string::npos);
  BOOST_TEST(tasks_error("2(3)").find("N(xK)") != std::string::npos);
  BOOST_TEST(tasks_error("2(x3").find("N(xK)") != std::string::npos);
  BOOST_TEST(tasks_error("2(x0)").find("N(xK)") != std::string::npos);
  BOOST_TEST(tasks_error("(x2)").find("task count") != std::string::npos);
  BOOST_TEST(tasks_error("1(x99999999)").find("more than 65536 nodes") != std::string::npos);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(slurm_allocation)

BOOST_AUTO_TEST_CASE(hosts_take_their_tasks_as_slots_in_list_order) {
  auto hosts = slurm_allocation_hosts("node[01-03],gpu5", "2(x3),1");
  BOOST_REQUIRE_MESSAGE(hosts.is_ok(), hosts.status().to_string());
  const std::vector<HostSlots> expected{{"node01", 2}, {"node02", 2}, {"node03", 2}, {"gpu5", 1}};
  BOOST_TEST((*hosts == expected));
  BOOST_TEST(total_slots(*hosts) == 7u);
}

BOOST_AUTO_TEST_CASE(errors_name_the_variable_at_fault) {
  auto bad_list = slurm_allocation_hosts("node[1-2", "1(x2)");
  BOOST_REQUIRE(!bad_list);
  BOOST_TEST(bad_list.status().message().find("SLURM_JOB_NODELIST='node[1-2'") != std::string::npos);
  auto bad_tasks = slurm_allocation_hosts("node[1-2]", "1(x2");
  BOOST_REQUIRE(!bad_tasks);
  BOOST_TEST(bad_tasks.status().message().find("SLURM_TASKS_PER_NODE='1(x2'") != std::string::npos);
  auto mismatch = slurm_allocation_hosts("node[1-3]", "2(x2)");
  BOOST_REQUIRE(!mismatch);
  BOOST_TEST(mismatch.status().message().find("names 3 nodes") != std::string::npos);
  BOOST_TEST(mismatch.status().message().find("tasks for 2") != std::string::npos);
  auto twice = slurm_allocation_hosts("n[1-2],n1", "1(x3)");
  BOOST_REQUIRE(!twice);
  BOOST_TEST(twice.status().message().find("'n1' twice") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(the_task_count_when_set) {
  auto unset = slurm_allocation_tasks(nullptr);
  BOOST_REQUIRE(unset.is_ok());
  BOOST_TEST(!unset->has_value());
  auto three = slurm_allocation_tasks("3");
  BOOST_REQUIRE(three.is_ok());
  BOOST_TEST(**three == 3u);
  for (const char* bad : {"", "0", "-1", "3x", "4097"}) {
    auto parsed = slurm_allocation_tasks(bad);
    BOOST_REQUIRE_MESSAGE(!parsed, "'" << bad << "' was accepted");
    BOOST_TEST(parsed.status().message().find("SLURM_NTASKS='") != std::string::npos);
  }
}

BOOST_AUTO_TEST_SUITE_END()

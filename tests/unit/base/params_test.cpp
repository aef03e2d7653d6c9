#include <boost/test/unit_test.hpp>

#include <array>
#include <chrono>
#include <string>
#include <vector>

#include "ftmpi/base/log.hpp"
#include "ftmpi/base/params.hpp"

using namespace ftmpi::base;
using namespace std::chrono_literals;

namespace {

constexpr ParamRow kMtu{"path.udp.mtu", ParamType::size, "8k", "largest UDP frame"};
constexpr ParamRow kTimeout{"engine.retransmit.min", ParamType::duration, "200us", "first timeout"};
constexpr ParamRow kChecksum{"engine.checksum", ParamType::string, "crc32c", "payload checksum",
                             ParamLevel::basic, ParamScope::job, "crc32c|sum32|none"};
constexpr ParamRow kForce{"engine.force_reliability", ParamType::boolean, "false", "reliable paths too",
                          ParamLevel::debug};
constexpr std::array kRows{kMtu, kTimeout, kChecksum, kForce};

ParamSet make_set() {
  ParamSet set;
  BOOST_REQUIRE(set.add_table(kRows).is_ok());
  return set;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(params)

BOOST_AUTO_TEST_CASE(env_name_is_upper_case_with_underscores) {
  BOOST_TEST(env_name("path.udp.mtu") == "FTMPI_PATH_UDP_MTU");
}

BOOST_AUTO_TEST_CASE(sizes_accept_binary_suffixes_and_reject_garbage) {
  BOOST_TEST(*parse_size("8k") == 8192u);
  BOOST_TEST(*parse_size("2M") == 2u * 1024 * 1024);
  BOOST_TEST(*parse_size(" 1g ") == 1024ull * 1024 * 1024);
  BOOST_TEST(*parse_size("100") == 100u);
  BOOST_TEST((parse_size("8q").code() == Errc::invalid_argument));
  BOOST_TEST((parse_size("k").code() == Errc::invalid_argument));
  BOOST_TEST((parse_size("-1").code() == Errc::invalid_argument));
  BOOST_TEST((parse_size("99999999999999999999g").code() == Errc::out_of_range));
  BOOST_TEST((parse_size("17179869184g").code() == Errc::out_of_range));
}

BOOST_AUTO_TEST_CASE(durations_default_to_microseconds) {
  BOOST_TEST((*parse_duration("200") == 200us));
  BOOST_TEST((*parse_duration("5ms") == 5ms));
  BOOST_TEST((*parse_duration("3s") == 3s));
  BOOST_TEST((*parse_duration("7ns") == 7ns));
  BOOST_TEST((parse_duration("3h").code() == Errc::invalid_argument));
}

BOOST_AUTO_TEST_CASE(booleans_integers_and_reals_parse_strictly) {
  BOOST_TEST(*parse_bool("on"));
  BOOST_TEST(!*parse_bool("No"));
  BOOST_TEST(!parse_bool("maybe").is_ok());
  BOOST_TEST(*parse_integer("-12") == -12);
  BOOST_TEST(!parse_integer("12x").is_ok());
  BOOST_TEST(*parse_real("0.25") == 0.25);
  BOOST_TEST(!parse_real("nan").is_ok());
}

BOOST_AUTO_TEST_CASE(defaults_apply_until_a_value_is_set) {
  ParamSet set = make_set();
  BOOST_TEST(set.get_size(kMtu) == 8192u);
  BOOST_TEST(!set.is_overridden(kMtu));
  BOOST_TEST(set.set("path.udp.mtu", "9000").is_ok());
  BOOST_TEST(set.get_size(kMtu) == 9000u);
  BOOST_TEST(set.set_assignment("engine.retransmit.min=1ms").is_ok());
  BOOST_TEST((set.get_duration(kTimeout) == 1ms));
  BOOST_TEST((set.assignments() == std::vector<std::string>{"engine.retransmit.min=1ms", "path.udp.mtu=9000"}));
}

BOOST_AUTO_TEST_CASE(bad_values_and_unknown_names_are_refused_and_change_nothing) {
  ParamSet set = make_set();
  Status s = set.set("path.udp.mtu", "lots");
  BOOST_TEST((s.code() == Errc::invalid_argument));
  BOOST_TEST(s.message().find("path.udp.mtu") != std::string::npos);
  BOOST_TEST(set.get_size(kMtu) == 8192u);
  BOOST_TEST((set.set("path.udp.mut", "1").code() == Errc::not_found));
  BOOST_TEST((set.set("engine.checksum", "md5").code() == Errc::invalid_argument));
  BOOST_TEST(set.get_string(kChecksum) == "crc32c");
  BOOST_TEST((set.set_assignment("engine.checksum").code() == Errc::invalid_argument));
}

BOOST_AUTO_TEST_CASE(choices_accept_only_listed_values) {
  ParamSet set = make_set();
  BOOST_TEST(set.set("engine.checksum", "sum32").is_ok());
  BOOST_TEST(set.get_string(kChecksum) == "sum32");
  BOOST_TEST(!set.set("engine.checksum", "sum").is_ok());
}

BOOST_AUTO_TEST_CASE(environment_sets_known_params_and_rejects_typos) {
  ParamSet set = make_set();
  std::string a = "FTMPI_PATH_UDP_MTU=4k", b = "HOME=/root", c = "FTMPI_ENGINE_FORCE_RELIABILITY=yes";
  char* env[] = {a.data(), b.data(), c.data(), nullptr};
  BOOST_TEST(set.load_environment(env).is_ok());
  BOOST_TEST(set.get_size(kMtu) == 4096u);
  BOOST_TEST(set.get_bool(kForce));

  std::string typo = "FTMPI_PATH_UDP_MUT=4k";
  char* env2[] = {typo.data(), nullptr};
  Status s = set.load_environment(env2);
  BOOST_TEST((s.code() == Errc::not_found));
  BOOST_TEST(s.message().find("FTMPI_PATH_UDP_MUT") != std::string::npos);

  std::string launcher = "FTMPI_JOB_KEY=abc";
  char* env3[] = {launcher.data(), nullptr};
  const std::string_view ignored[] = {"FTMPI_JOB_KEY"};
  BOOST_TEST(set.load_environment(env3, ignored).is_ok());

  std::string seed = "FTMPI_TEST_SEED=42";
  char* env4[] = {seed.data(), nullptr};
  BOOST_TEST(set.load_environment(env4).is_ok());
}

BOOST_AUTO_TEST_CASE(duplicate_rows_bad_defaults_and_missing_help_are_rejected) {
  ParamSet set = make_set();
  BOOST_TEST((set.add_table(std::array{kMtu}).code() == Errc::invalid_argument));
  static constexpr ParamRow bad_default{"x.y", ParamType::size, "big", "help"};
  BOOST_TEST((ParamSet{}.add_table(std::array{bad_default}).code() == Errc::internal));
  static constexpr ParamRow no_help{"x.z", ParamType::size, "1", ""};
  BOOST_TEST((ParamSet{}.add_table(std::array{no_help}).code() == Errc::invalid_argument));
}

BOOST_AUTO_TEST_CASE(help_lists_every_row_with_default_and_current_value) {
  ParamSet set = make_set();
  BOOST_REQUIRE(set.set("path.udp.mtu", "9000").is_ok());
  std::string help = set.help_text();
  BOOST_TEST(help.find("path.udp.mtu") != std::string::npos);
  BOOST_TEST(help.find("default 8k, now 9000") != std::string::npos);
  BOOST_TEST(help.find("FTMPI_ENGINE_CHECKSUM") != std::string::npos);
  BOOST_TEST(set.help_text(ParamLevel::basic).find("force_reliability") == std::string::npos);
}

BOOST_AUTO_TEST_CASE(base_table_is_valid_and_log_level_is_checked) {
  ParamSet set;
  BOOST_TEST(set.add_table(base_params()).is_ok());
  BOOST_TEST(init_logging("test", "info").is_ok());
  BOOST_TEST(logger().name() == "test");
  BOOST_TEST((init_logging("test", "loud").code() == Errc::invalid_argument));
}

BOOST_AUTO_TEST_SUITE_END()

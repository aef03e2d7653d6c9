#include <boost/test/unit_test.hpp>

#include <chrono>
#include <random>
#include <string>
#include <vector>

#include "ftmpi/path/fault.hpp"
#include "ftmpi/test/seed.hpp"

using namespace ftmpi;
using namespace ftmpi::path;
using namespace std::chrono_literals;

namespace {

FaultSpec parsed(std::string_view text) {
  auto spec = parse_fault_spec(text);
  BOOST_TEST_REQUIRE(spec.is_ok(), "'" << text << "': " << spec.status().to_string());
  return *spec;
}

std::string error_of(std::string_view text) {
  auto spec = parse_fault_spec(text);
  BOOST_TEST_REQUIRE(!spec.is_ok(), "'" << text << "' was accepted");
  return spec.status().message();
}

bool contains(const std::string& text, std::string_view part) { return text.find(part) != std::string::npos; }

}  // namespace

BOOST_AUTO_TEST_SUITE(fault_spec)

BOOST_AUTO_TEST_CASE(every_key_is_parsed) {
  const FaultSpec spec =
      parsed("drop=0.1,corrupt=0.25,dup=0.5,reorder=1,delay=5ms,blackhole,rail=veth1,after=2s,for=200us,"
             "seed=42");
  BOOST_TEST(spec.drop == 0.1);
  BOOST_TEST(spec.corrupt == 0.25);
  BOOST_TEST(spec.dup == 0.5);
  BOOST_TEST(spec.reorder == 1.0);
  BOOST_TEST((spec.delay == 5ms));
  BOOST_TEST(spec.blackhole);
  BOOST_TEST(spec.rail == "veth1");
  BOOST_TEST((spec.after == 2s));
  BOOST_TEST_REQUIRE(spec.lasts.has_value());
  BOOST_TEST((*spec.lasts == 200us));
  BOOST_TEST_REQUIRE(spec.seed.has_value());
  BOOST_TEST(*spec.seed == 42u);
}

BOOST_AUTO_TEST_CASE(absent_keys_take_their_defaults) {
  const FaultSpec spec = parsed("drop=0.5");
  BOOST_TEST(spec.corrupt == 0.0);
  BOOST_TEST(spec.dup == 0.0);
  BOOST_TEST(spec.reorder == 0.0);
  BOOST_TEST((spec.delay == 0ns));
  BOOST_TEST(!spec.blackhole);
  BOOST_TEST(spec.rail.empty());
  BOOST_TEST((spec.after == 0ns));
  BOOST_TEST(!spec.lasts.has_value());
  BOOST_TEST(!spec.seed.has_value());
  BOOST_TEST(kDefaultFaultSeed == 5489u);
}

BOOST_AUTO_TEST_CASE(blackhole_takes_no_value_or_a_boolean) {
  BOOST_TEST(parsed("blackhole").blackhole);
  BOOST_TEST(parsed("blackhole=1").blackhole);
  BOOST_TEST(parsed("blackhole=true").blackhole);
  BOOST_TEST(!parsed("blackhole=0").blackhole);
}

BOOST_AUTO_TEST_CASE(durations_take_units_and_bare_numbers_are_microseconds) {
  BOOST_TEST((parsed("delay=200us").delay == 200us));
  BOOST_TEST((parsed("delay=1s").delay == 1s));
  BOOST_TEST((parsed("delay=7ns").delay == 7ns));
  BOOST_TEST((parsed("delay=30").delay == 30us));
  BOOST_TEST((*parsed("drop=1,for=0").lasts == 0ns));
}

BOOST_AUTO_TEST_CASE(spaces_around_keys_and_values_are_ignored) {
  const FaultSpec spec = parsed("  drop = 0.5 , rail = 127.0.0.2 ,blackhole ");
  BOOST_TEST(spec.drop == 0.5);
  BOOST_TEST(spec.rail == "127.0.0.2");
  BOOST_TEST(spec.blackhole);
}

BOOST_AUTO_TEST_CASE(probabilities_at_the_bounds_and_in_exponent_form_are_accepted) {
  BOOST_TEST(parsed("drop=0").drop == 0.0);
  BOOST_TEST(parsed("drop=1").drop == 1.0);
  BOOST_TEST(parsed("corrupt=1e-3").corrupt == 1e-3);
}

BOOST_AUTO_TEST_CASE(to_string_gives_canonical_text) {
  BOOST_TEST(to_string(parsed("rail=1, drop=0.1")) == "drop=0.1,rail=1");
  BOOST_TEST(to_string(parsed("delay=5000us")) == "delay=5ms");
  BOOST_TEST(to_string(parsed("blackhole=1,after=1500ms,for=1s")) == "blackhole,after=1500ms,for=1s");
  BOOST_TEST(to_string(FaultSpec{}) == "drop=0");
}

BOOST_AUTO_TEST_CASE(after_and_for_take_a_volume_of_traffic_when_the_unit_ends_in_b) {
  const FaultSpec spec = parsed("blackhole,after=32MB,for=512KiB");
  BOOST_TEST(spec.after_bytes.value_or(0) == 32u << 20);
  BOOST_TEST(spec.after.count() == 0);
  BOOST_TEST(spec.lasts_bytes.value_or(0) == 512u << 10);
  BOOST_TEST(!spec.lasts.has_value());
  BOOST_TEST(parsed("after=100B").after_bytes.value_or(0) == 100u);
  BOOST_TEST(parsed("for=1gb").lasts_bytes.value_or(0) == 1u << 30);
  // A volume and a time mix: opens by traffic, closes by the clock.
  const FaultSpec mixed = parsed("after=1MB,for=2s");
  BOOST_TEST(mixed.after_bytes.value_or(0) == 1u << 20);
  BOOST_TEST((mixed.lasts == std::chrono::nanoseconds(2s)));
  BOOST_TEST(to_string(parsed("after=1024KB,for=3000B")) == "after=1MB,for=3000B");
  BOOST_TEST(to_string(mixed) == "after=1MB,for=2s");
}

BOOST_AUTO_TEST_CASE(to_string_round_trips_every_spec) {
  const std::uint64_t seed = ftmpi::test::seed_for("fault spec round trip");
  BOOST_TEST_CONTEXT("seed " << seed) {
    std::mt19937_64 random(seed);
    auto probability = [&] {
      switch (random() % 4) {
        case 0: return 0.0;
        case 1: return 1.0;
        default: return static_cast<double>(random() >> 11) * 0x1.0p-53;
      }
    };
    auto duration = [&] {
      const std::int64_t scale[] = {1, 1000, 1'000'000, 1'000'000'000};
      return std::chrono::nanoseconds(static_cast<std::int64_t>(random() % 5000) * scale[random() % 4]);
    };
    const char* rails[] = {"", "0", "1", "veth1", "127.0.0.2", "10.77.1.0/24"};
    for (int i = 0; i < 2000; ++i) {
      FaultSpec spec;
      spec.drop = probability();
      spec.corrupt = probability();
      spec.dup = probability();
      spec.reorder = probability();
      if (random() % 2 != 0) spec.delay = duration();
      spec.blackhole = random() % 3 == 0;
      spec.rail = rails[random() % std::size(rails)];
      auto volume = [&] { return (random() % 5000) << (10 * (random() % 4)); };
      switch (random() % 3) {
        case 0: spec.after = duration(); break;
        case 1: spec.after_bytes = volume(); break;
        default: break;
      }
      switch (random() % 3) {
        case 0: spec.lasts = duration(); break;
        case 1: spec.lasts_bytes = volume(); break;
        default: break;
      }
      if (random() % 2 != 0) spec.seed = random();
      const std::string text = to_string(spec);
      auto back = parse_fault_spec(text);
      BOOST_TEST_REQUIRE(back.is_ok(), text << ": " << back.status().to_string());
      BOOST_TEST_REQUIRE((*back == spec), "'" << text << "' does not parse back to the same spec");
    }
  }
}

BOOST_AUTO_TEST_CASE(every_error_names_the_spec_and_the_problem) {
  struct Case {
    const char* text;
    const char* problem;
  };
  const Case cases[] = {
      {"drop=2", "drop must be a probability from 0 to 1"},
      {"corrupt=-0.5", "corrupt must be a probability from 0 to 1"},
      {"dup=1.0001", "dup must be a probability from 0 to 1"},
      {"reorder=nan", "reorder: 'nan' is not a number"},
      {"drop=0.5x", "drop: '0.5x' is not a number"},
      {"drop=inf", "not a number"},
      {"drop", "drop needs a value"},
      {"drop=", "drop needs a value"},
      {"delay=5parsecs", "unknown unit 'parsecs'"},
      {"delay=-5ms", "delay: '-5ms' is not a duration"},
      {"after=soon", "after: 'soon' is not a duration"},
      {"for=1x", "for: duration '1x' has unknown unit"},
      {"after=5XB", "after: size '5XB' has unknown unit 'xb'"},
      {"for=-1MB", "for: '-1MB' is not a size"},
      {"after=later", "(or a volume of traffic such as 64MB)"},
      {"seed=-1", "seed '-1' is not an unsigned integer"},
      {"seed=12abc", "seed '12abc' is not an unsigned integer"},
      {"seed=99999999999999999999999", "does not fit in 64 bits"},
      {"blackhole=maybe", "blackhole: 'maybe' is not a boolean"},
      {"rail=", "rail needs a value"},
      {"rail=veth 1", "rail 'veth 1' contains ' '"},
      {"rail=a=b", "rail 'a=b' contains '='"},
      {"bogus=1", "unknown key 'bogus' (known: drop"},
      {"Drop=0.1", "unknown key 'Drop'"},
      {"=0.5", "empty key in '=0.5'"},
      {"drop=0.1,,dup=0.2", "empty entry"},
      {"drop=0.1,", "empty entry"},
      {",drop=0.1", "empty entry"},
      {"drop=0.1,drop=0.2", "drop given twice"},
      {"blackhole,blackhole=0", "blackhole given twice"},
      {"", "empty spec"},
      {"   ", "empty spec"},
  };
  for (const Case& c : cases) {
    BOOST_TEST_CONTEXT("spec '" << c.text << "'") {
      auto spec = parse_fault_spec(c.text);
      BOOST_TEST_REQUIRE(!spec.is_ok());
      BOOST_TEST((spec.status().severity() == base::Severity::caller));
      const std::string message = spec.status().message();
      BOOST_TEST(message.starts_with("fault spec '"), message);
      BOOST_TEST(contains(message, c.problem), message);
    }
  }
  BOOST_TEST(error_of("drop=2") == "fault spec 'drop=2': drop must be a probability from 0 to 1");
  BOOST_TEST(error_of(" rail=1 , drop=2 ") ==
             "fault spec 'rail=1 , drop=2': drop must be a probability from 0 to 1");
}

BOOST_AUTO_TEST_CASE(a_plan_takes_specs_on_lines_and_after_semicolons_and_skips_comments) {
  const std::string text =
      "# a plan for two rails\n"
      "\n"
      "drop=0.1,rail=0 ; corrupt=0.01   # both on rail 0 and everywhere\n"
      "   \r\n"
      "blackhole,rail=veth1,after=2s,for=500ms\r\n"
      ";;\n"
      "dup=0.5;";
  auto plan = parse_fault_plan(text);
  BOOST_TEST_REQUIRE(plan.is_ok(), plan.status().to_string());
  BOOST_TEST_REQUIRE(plan->size() == 4u);
  BOOST_TEST(to_string((*plan)[0]) == "drop=0.1,rail=0");
  BOOST_TEST(to_string((*plan)[1]) == "corrupt=0.01");
  BOOST_TEST(to_string((*plan)[2]) == "blackhole,rail=veth1,after=2s,for=500ms");
  BOOST_TEST(to_string((*plan)[3]) == "dup=0.5");
}

BOOST_AUTO_TEST_CASE(an_empty_plan_or_one_of_comments_has_no_specs) {
  for (const char* text : {"", "\n\n", "# nothing\n   # at all", " ; ; "}) {
    auto plan = parse_fault_plan(text);
    BOOST_TEST_REQUIRE(plan.is_ok(), "'" << text << "': " << plan.status().to_string());
    BOOST_TEST(plan->empty());
  }
}

BOOST_AUTO_TEST_CASE(a_plan_error_gives_its_origin_and_line) {
  auto plan = parse_fault_plan("drop=0.1\n# fine\ncorrupt=0.1; dup=3\n", "plan.txt");
  BOOST_TEST_REQUIRE(!plan.is_ok());
  BOOST_TEST(plan.status().message() ==
             "plan.txt line 3: fault spec 'dup=3': dup must be a probability from 0 to 1");
  auto default_origin = parse_fault_plan("lose=1");
  BOOST_TEST_REQUIRE(!default_origin.is_ok());
  BOOST_TEST(
      default_origin.status().message().starts_with("fault plan line 1: fault spec 'lose=1': unknown key"));
}

BOOST_AUTO_TEST_CASE(specs_for_a_rail_are_those_naming_its_index_or_name_or_no_rail) {
  auto plan = parse_fault_plan(
      "drop=0.1; corrupt=0.2,rail=0; dup=0.3,rail=veth1; reorder=0.4,rail=1; delay=1ms,rail=veth0");
  BOOST_TEST_REQUIRE(plan.is_ok(), plan.status().to_string());
  auto texts = [](const std::vector<FaultSpec>& specs) {
    std::string out;
    for (const FaultSpec& spec : specs) out += to_string(spec) + ";";
    return out;
  };
  BOOST_TEST(texts(fault_specs_for_rail(*plan, 0, "veth0")) ==
             "drop=0.1;corrupt=0.2,rail=0;delay=1ms,rail=veth0;");
  BOOST_TEST(texts(fault_specs_for_rail(*plan, 1, "veth1")) ==
             "drop=0.1;dup=0.3,rail=veth1;reorder=0.4,rail=1;");
  BOOST_TEST(texts(fault_specs_for_rail(*plan, 2, "")) == "drop=0.1;");
  BOOST_TEST(fault_specs_for_rail({}, 0, "veth0").empty());
}

BOOST_AUTO_TEST_SUITE_END()

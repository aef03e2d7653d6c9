#include <boost/test/unit_test.hpp>

#include <string>

#include "ftmpi/base/params.hpp"
#include "ftmpi/path/params.hpp"
#include "ftmpi/path/shm.hpp"

using namespace ftmpi;
using ftmpi::path::ShmGeometry;

namespace {

base::ParamSet path_param_set() {
  base::ParamSet params;
  BOOST_REQUIRE(params.add_table(path::path_params()).is_ok());
  return params;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(path_params)

BOOST_AUTO_TEST_CASE(defaults_give_a_valid_geometry_with_room_for_8k_payloads) {
  base::ParamSet params = path_param_set();
  auto geometry = ShmGeometry::from_params(params);
  BOOST_REQUIRE(geometry.is_ok());
  BOOST_TEST(geometry->slots == 128u);
  BOOST_TEST(geometry->slot_size == 8448u);
  BOOST_TEST(geometry->max_frame() >= 8192u + 112u);  // 8 KiB payload behind the engine's wire header
}

BOOST_AUTO_TEST_CASE(slot_count_must_be_a_power_of_two) {
  base::ParamSet params = path_param_set();
  BOOST_REQUIRE(params.set("path.shm.slots", "100").is_ok());
  auto geometry = ShmGeometry::from_params(params);
  BOOST_TEST((geometry.code() == base::Errc::invalid_argument));
  BOOST_TEST(geometry.status().message().find("path.shm.slots = 100") != std::string::npos);
  BOOST_TEST(geometry.status().message().find("power of two") != std::string::npos);
  BOOST_REQUIRE(params.set("path.shm.slots", "-4").is_ok());
  BOOST_TEST(!ShmGeometry::from_params(params).is_ok());
  BOOST_REQUIRE(params.set("path.shm.slots", "1").is_ok());
  BOOST_TEST(!ShmGeometry::from_params(params).is_ok());
  BOOST_REQUIRE(params.set("path.shm.slots", "16").is_ok());
  BOOST_TEST(ShmGeometry::from_params(params).is_ok());
}

BOOST_AUTO_TEST_CASE(slot_size_must_be_a_cache_line_multiple_in_range) {
  base::ParamSet params = path_param_set();
  for (const char* bad : {"1000", "64", "128m"}) {
    BOOST_TEST_CONTEXT("slot_size " << bad) {
      BOOST_REQUIRE(params.set("path.shm.slot_size", bad).is_ok());
      auto geometry = ShmGeometry::from_params(params);
      BOOST_TEST((geometry.code() == base::Errc::invalid_argument));
      BOOST_TEST(geometry.status().message().find("multiple of 64") != std::string::npos);
    }
  }
  BOOST_REQUIRE(params.set("path.shm.slot_size", "4k").is_ok());
  BOOST_TEST(ShmGeometry::from_params(params)->max_frame() == 4096u - 16u);
}

BOOST_AUTO_TEST_SUITE_END()

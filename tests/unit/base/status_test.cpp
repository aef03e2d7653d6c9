#include <boost/test/unit_test.hpp>

#include "ftmpi/base/status.hpp"

using namespace ftmpi::base;

BOOST_AUTO_TEST_SUITE(status)

BOOST_AUTO_TEST_CASE(default_status_is_ok_with_no_severity) {
  Status s;
  BOOST_TEST(s.is_ok());
  BOOST_TEST(static_cast<bool>(s));
  BOOST_TEST((s.severity() == Severity::none));
  BOOST_TEST(s.to_string() == "ok");
}

BOOST_AUTO_TEST_CASE(error_status_carries_code_message_and_severity) {
  Status s(Errc::bad_checksum, "payload crc32c 0x1 != 0x2");
  BOOST_TEST(!s.is_ok());
  BOOST_TEST((s.code() == Errc::bad_checksum));
  BOOST_TEST((s.severity() == Severity::frame));
  BOOST_TEST(s.to_string() == "bad checksum: payload crc32c 0x1 != 0x2");
}

BOOST_AUTO_TEST_CASE(severities_group_errors_by_blast_radius) {
  BOOST_TEST((severity_of(Errc::truncated) == Severity::frame));
  BOOST_TEST((severity_of(Errc::invalid_argument) == Severity::caller));
  BOOST_TEST((severity_of(Errc::rail_down) == Severity::rail));
  BOOST_TEST((severity_of(Errc::peer_unreachable) == Severity::peer));
  BOOST_TEST((severity_of(Errc::internal) == Severity::job));
}

BOOST_AUTO_TEST_CASE(result_holds_value_or_status) {
  Result<int> good = 42;
  BOOST_TEST(good.is_ok());
  BOOST_TEST(*good == 42);
  BOOST_TEST(good.status().is_ok());

  Result<int> bad = Status(Errc::not_found, "no such rail");
  BOOST_TEST(!bad.is_ok());
  BOOST_TEST((bad.code() == Errc::not_found));
  BOOST_TEST(bad.status().message() == "no such rail");
}

BOOST_AUTO_TEST_SUITE_END()

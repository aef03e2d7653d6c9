#include <boost/test/unit_test.hpp>

#include <string>
#include <vector>

#include "ftmpi/path/udp.hpp"

using namespace ftmpi;
using namespace ftmpi::path;

namespace {

constexpr std::uint32_t kLoopback = 0x7f000001;

// A made-up host: lo, an up rail, a down one, one without carrier, one without IPv4, and an alias.
std::vector<LocalInterface> made_up_host() {
  return {
      {"eth9", true, true, false, 1500, {0xc0000202}},                 // 192.0.2.2
      {"lo", true, true, true, 65536, {kLoopback}},
      {"veth1", true, true, false, 9000, {0x0a4d0101, 0x0a4d0105}},    // 10.77.1.1, 10.77.1.5
      {"veth1:1", true, true, false, 9000, {0x0a4d0301}},              // 10.77.3.1, a label of veth1
      {"veth2", false, false, false, 1500, {0x0a4d0201}},              // 10.77.2.1, down
      {"veth3", true, false, false, 1500, {0x0a4d0401}},               // 10.77.4.1, no carrier
      {"ifb0", true, true, false, 1500, {}},                           // no IPv4
  };
}

bool mentions(const base::Status& status, std::string_view text) {
  return status.message().find(text) != std::string::npos;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(udp_rails)

BOOST_AUTO_TEST_CASE(ipv4_text_is_parsed_strictly_and_round_trips) {
  BOOST_TEST(parse_ipv4("127.0.0.1").value() == kLoopback);
  BOOST_TEST(parse_ipv4("0.0.0.0").value() == 0u);
  BOOST_TEST(parse_ipv4("255.255.255.255").value() == 0xffffffffu);
  BOOST_TEST(format_ipv4(0x0a4d0101) == "10.77.1.1");
  BOOST_TEST(format_ipv4(*parse_ipv4("192.0.2.55")) == "192.0.2.55");
  for (const char* bad : {"", "1", "1.2.3", "1.2.3.4.5", "256.0.0.1", "01.2.3.4", "1.2.3.4 ", " 1.2.3.4",
                          "1..3.4", "1.2.3.", "+1.2.3.4", "1.2.3.0x4", "1111.2.3.4", "a.b.c.d"}) {
    BOOST_TEST(!parse_ipv4(bad).has_value(), "'" << bad << "'");
  }
}

BOOST_AUTO_TEST_CASE(an_interface_name_an_address_or_a_subnet_names_a_rail) {
  const std::vector<LocalInterface> host = made_up_host();
  auto rails = resolve_rails("veth1, 10.77.1.5,192.0.2.0/24", host);
  BOOST_REQUIRE_MESSAGE(rails.is_ok(), rails.status().to_string());
  BOOST_REQUIRE(rails->size() == 3u);
  BOOST_TEST((*rails)[0].name == "veth1");
  BOOST_TEST((*rails)[0].interface == "veth1");
  BOOST_TEST((*rails)[0].ipv4 == 0x0a4d0101u);  // the primary address
  BOOST_TEST((*rails)[0].mtu == 9000u);
  BOOST_TEST((*rails)[1].name == "10.77.1.5");
  BOOST_TEST((*rails)[1].ipv4 == 0x0a4d0105u);
  BOOST_TEST((*rails)[2].name == "192.0.2.0/24");
  BOOST_TEST((*rails)[2].interface == "eth9");
  BOOST_TEST((*rails)[2].ipv4 == 0xc0000202u);
  BOOST_TEST((*rails)[2].mtu == 1500u);
}

BOOST_AUTO_TEST_CASE(any_loopback_address_is_local_and_uses_lo_mtu) {
  const std::vector<LocalInterface> host = made_up_host();
  auto rails = resolve_rails("127.0.0.2", host);
  BOOST_REQUIRE_MESSAGE(rails.is_ok(), rails.status().to_string());
  BOOST_TEST(rails->at(0).interface == "lo");
  BOOST_TEST(rails->at(0).ipv4 == 0x7f000002u);
  BOOST_TEST(rails->at(0).mtu == 65536u);
}

BOOST_AUTO_TEST_CASE(an_address_label_resolves_to_its_device) {
  auto rails = resolve_rails("veth1:1", made_up_host());
  BOOST_REQUIRE_MESSAGE(rails.is_ok(), rails.status().to_string());
  BOOST_TEST(rails->at(0).name == "veth1:1");
  BOOST_TEST(rails->at(0).interface == "veth1");
  BOOST_TEST(rails->at(0).ipv4 == 0x0a4d0301u);
}

BOOST_AUTO_TEST_CASE(an_empty_spec_takes_every_usable_interface_sorted_by_name) {
  auto rails = resolve_rails(" ", made_up_host());
  BOOST_REQUIRE_MESSAGE(rails.is_ok(), rails.status().to_string());
  // Not lo, not the label veth1:1, not the down veth2, not veth3 without carrier, not ifb0 without IPv4.
  BOOST_REQUIRE(rails->size() == 2u);
  BOOST_TEST(rails->at(0).interface == "eth9");
  BOOST_TEST(rails->at(0).name == "eth9");
  BOOST_TEST(rails->at(1).interface == "veth1");
  BOOST_TEST(rails->at(1).ipv4 == 0x0a4d0101u);
}

BOOST_AUTO_TEST_CASE(an_empty_spec_on_a_host_with_only_loopback_gives_127_0_0_1) {
  const std::vector<LocalInterface> host{{"lo", true, true, true, 65536, {kLoopback}},
                                         {"veth2", false, false, false, 1500, {0x0a4d0201}}};
  auto rails = resolve_rails("", host);
  BOOST_REQUIRE_MESSAGE(rails.is_ok(), rails.status().to_string());
  BOOST_REQUIRE(rails->size() == 1u);
  BOOST_TEST(rails->at(0).interface == "lo");
  BOOST_TEST(rails->at(0).ipv4 == kLoopback);
  BOOST_TEST(rails->at(0).mtu == 65536u);
}

BOOST_AUTO_TEST_CASE(unusable_entries_are_refused_with_a_message_naming_them) {
  const std::vector<LocalInterface> host = made_up_host();
  struct Case {
    const char* spec;
    base::Errc code;
    const char* says;
  };
  const Case cases[] = {
      {"nosuchif0", base::Errc::not_found, "no interface of that name"},
      {"veth2", base::Errc::rail_down, "veth2 is down"},
      {"veth3", base::Errc::rail_down, "no carrier"},
      {"ifb0", base::Errc::not_found, "no IPv4 address"},
      {"10.77.2.1", base::Errc::rail_down, "veth2 is down"},
      {"192.0.2.55", base::Errc::not_found, "not an address of this host"},
      {"10.255.255.0/24", base::Errc::not_found, "no local IPv4 address in that subnet"},
      {"10.77.2.0/24", base::Errc::rail_down, "10.77.2.1 cannot be used: interface veth2 is down"},
      {"10.0.0.0/33", base::Errc::invalid_argument, "not a subnet"},
      {"10.0.0/8", base::Errc::invalid_argument, "not a subnet"},
      {"10.0.0.0/", base::Errc::invalid_argument, "not a subnet"},
      {"10.0.0.256", base::Errc::invalid_argument, "not a valid IPv4 address"},
      {"::1", base::Errc::unsupported, "IPv6"},
      {"fd00::/64", base::Errc::unsupported, "IPv6"},
  };
  for (const Case& c : cases) {
    auto rails = resolve_rails(c.spec, host);
    BOOST_TEST_CONTEXT("spec '" << c.spec << "': " << rails.status().to_string()) {
      BOOST_TEST((rails.code() == c.code));
      BOOST_TEST(mentions(rails.status(), std::string("'") + c.spec + "'"));
      BOOST_TEST(mentions(rails.status(), c.says));
    }
  }
}

BOOST_AUTO_TEST_CASE(empty_and_repeated_entries_are_refused) {
  const std::vector<LocalInterface> host = made_up_host();
  for (const char* spec : {"veth1,,eth9", "veth1,", ",veth1"}) {
    auto rails = resolve_rails(spec, host);
    BOOST_TEST((rails.code() == base::Errc::invalid_argument), spec);
    BOOST_TEST(mentions(rails.status(), "empty entry"), spec);
  }
  auto repeated = resolve_rails("veth1,10.77.1.0/24", host);
  BOOST_TEST((repeated.code() == base::Errc::invalid_argument));
  BOOST_TEST(mentions(repeated.status(), "same address (10.77.1.1) as entry 'veth1'"));
}

// The same over this machine's real interfaces (getifaddrs).

BOOST_AUTO_TEST_CASE(this_hosts_lo_loopback_addresses_and_subnet_resolve) {
  auto lo = resolve_rails("lo");
  BOOST_REQUIRE_MESSAGE(lo.is_ok(), lo.status().to_string());
  BOOST_TEST(lo->at(0).interface == "lo");
  BOOST_TEST(lo->at(0).ipv4 == kLoopback);
  BOOST_TEST(lo->at(0).mtu > 0u);

  auto second = resolve_rails("127.0.0.2");
  BOOST_REQUIRE_MESSAGE(second.is_ok(), second.status().to_string());
  BOOST_TEST(second->at(0).interface == "lo");
  BOOST_TEST(second->at(0).ipv4 == 0x7f000002u);
  BOOST_TEST(second->at(0).mtu == lo->at(0).mtu);

  auto subnet = resolve_rails("127.0.0.0/8");
  BOOST_REQUIRE_MESSAGE(subnet.is_ok(), subnet.status().to_string());
  BOOST_TEST(subnet->at(0).interface == "lo");
  BOOST_TEST(subnet->at(0).ipv4 == kLoopback);

  auto every = resolve_rails("");
  BOOST_REQUIRE_MESSAGE(every.is_ok(), every.status().to_string());
  BOOST_TEST(!every->empty());
}

BOOST_AUTO_TEST_CASE(this_host_refuses_missing_interfaces_foreign_addresses_and_empty_subnets) {
  auto missing = resolve_rails("nosuchif0");
  BOOST_TEST((missing.code() == base::Errc::not_found));
  BOOST_TEST(mentions(missing.status(), "'nosuchif0'"));
  auto foreign = resolve_rails("192.0.2.55");  // TEST-NET-1: documentation only, never assigned
  BOOST_TEST((foreign.code() == base::Errc::not_found));
  BOOST_TEST(mentions(foreign.status(), "'192.0.2.55': not an address of this host"));
  auto empty = resolve_rails("10.255.255.0/24");
  BOOST_TEST((empty.code() == base::Errc::not_found));
  BOOST_TEST(mentions(empty.status(), "'10.255.255.0/24': no local IPv4 address"));
}

BOOST_AUTO_TEST_CASE(local_interfaces_include_lo_with_its_address_and_mtu) {
  auto interfaces = local_interfaces();
  BOOST_REQUIRE_MESSAGE(interfaces.is_ok(), interfaces.status().to_string());
  bool found = false;
  for (const LocalInterface& interface : *interfaces) {
    if (interface.name != "lo") continue;
    found = true;
    BOOST_TEST(interface.loopback);
    BOOST_TEST(interface.up);
    BOOST_TEST(interface.mtu > 0u);
    BOOST_TEST(interface.ipv4.size() >= 1u);
  }
  BOOST_TEST(found);
}

BOOST_AUTO_TEST_SUITE_END()

// The engine's statistics printed: the "ftmpi counters:" text lines tests/fault/check_counters.sh reads,
// and the JSON form, from a snapshot made by hand.
#include <boost/test/unit_test.hpp>

#include <string>

#include "engine/stats.hpp"
#include "ftmpi/test/json_check.hpp"

using namespace ftmpi;
using namespace ftmpi::engine;
using namespace std::chrono_literals;

namespace {

EngineStats sample() {
  EngineStats s;
  s.rank = 1;
  s.size = 2;
  s.totals.frames_sent = 10;
  s.totals.retransmits = 3;
  s.totals.rails_down = 1;
  s.totals.rails_up = 1;
  RailStats rail;
  rail.peer = 0;
  rail.index = 1;
  rail.name = "udp lo 127.0.0.2";
  rail.state = RailState::suspect;
  rail.state_for = 2500ms;
  rail.srtt = 250us;
  rail.rto = 2ms;
  rail.counters.frames_sent = 7;
  rail.counters.bytes_sent = 7000;
  rail.counters.checksum_failures = 2;
  rail.counters.refused_sends = 1;
  rail.changes.push_back({std::chrono::system_clock::time_point(1'764'000'000'123ms), RailState::down,
                          "no answer for 51 ms"});
  rail.changes.push_back({std::chrono::system_clock::time_point(1'764'000'001'000ms), RailState::up,
                          "a probe was answered"});
  s.rails.push_back(rail);
  s.paths.push_back({1, "udp lo 127.0.0.2",
                     {{"udp", "udp lo 127.0.0.2", {{"frames_placed", 5}, {"truncated", 0}}},
                      {"faults", "udp lo 127.0.0.2", {{"frames_seen", 9}, {"corrupted", 4}}}}});
  return s;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(engine_stats)

BOOST_AUTO_TEST_CASE(the_text_report_has_an_engine_line_a_line_per_rail_and_one_per_driver_group) {
  const std::string text = report_text(sample());
  BOOST_TEST(text ==
             "ftmpi counters: engine rank=1 frames_sent=10 frames_received=0 dropped_malformed=0 "
             "dropped_wrong_job=0 dropped_bad_payload=0 dropped_ahead=0 refused_single_copy=0 duplicates=0 retransmits=3 acks_sent=0 nacks_sent=0 nacks_ignored=0 credit_rendezvous=0 credits_sent=0 "
             "rails_down=1 rails_up=1 peers_lost=0 single_copy_fallbacks=0 single_copies_gathered=0 split_copies=0 split_copy_rereads=0 frames_by_reference=0 frames_copied_after_send=0 sends_cancelled=0 messages_withdrawn=0 "
      "longest_answered_silence_us=0 bytes_sent=0 bytes_received=0\n"
             "ftmpi counters: rail rank=1 peer=0 rail=1 name='udp lo 127.0.0.2' state=suspect frames_sent=7 "
             "bytes_sent=7000 frames_received=0 bytes_received=0 retransmits=0 timeouts=0 rebound=0 "
             "checksum_failures=2 duplicates=0 refused_sends=1 probes_sent=0 probe_replies=0 state_changes=0 "
             "srtt_us=250 rto_us=2000\n"
             "ftmpi counters: udp rank=1 rail=1 name='udp lo 127.0.0.2' frames_placed=5 truncated=0\n"
             "ftmpi counters: faults rank=1 rail=1 name='udp lo 127.0.0.2' frames_seen=9 corrupted=4\n");
}

BOOST_AUTO_TEST_CASE(the_json_report_is_valid_and_carries_the_stable_names) {
  const std::string json = report_json(sample());
  BOOST_TEST(ftmpi::test::JsonCheck::valid(json), json);
  for (const char* part :
       {R"j({"rank":1,"size":2,"warnings":[],"totals":{"frames_sent":10,)j", R"j("rails":[{"peer":0,"index":1,)j",
        R"j("name":"udp lo 127.0.0.2","state":"suspect","state_for_ms":2500,"rtt_us":250,"rto_us":2000,)j",
        R"j("bytes_sent":7000,)j", R"j("checksum_failures":2,)j", R"j("refused_sends":1,)j",
        R"j("changes":[{"at":"2025-11-24T16:00:00.123Z","state":"down","reason":"no answer for 51 ms"},)j",
        R"j({"at":"2025-11-24T16:00:01.000Z","state":"up","reason":"a probe was answered"}])j",
        R"j("paths":[{"index":1,"name":"udp lo 127.0.0.2","groups":[{"kind":"udp","name":"udp lo 127.0.0.2",)j",
        R"j("counters":{"frames_placed":5,"truncated":0}},{"kind":"faults",)j"}) {
    BOOST_TEST(json.find(part) != std::string::npos, "missing " << part << " in " << json);
  }
}

BOOST_AUTO_TEST_CASE(integrity_switched_off_is_said_first_in_both_reports) {
  EngineStats s = sample();
  s.warnings.push_back("engine.checksum=none on network paths (udp lo 127.0.0.1): corrupted payloads reach the "
                       "application undetected");
  const std::string text = report_text(s);
  BOOST_TEST(text.starts_with("ftmpi warning: rank=1 engine.checksum=none on network paths (udp lo 127.0.0.1): "
                              "corrupted payloads reach the application undetected\nftmpi counters: engine rank=1 "),
             text);
  const std::string json = report_json(s);
  BOOST_TEST(ftmpi::test::JsonCheck::valid(json), json);
  BOOST_TEST(json.starts_with(R"j({"rank":1,"size":2,"warnings":["engine.checksum=none on network paths)j"), json);
}

BOOST_AUTO_TEST_CASE(report_formats_are_booleans_and_json) {
  BOOST_TEST((parse_report_format("false").value() == ReportFormat::none));
  BOOST_TEST((parse_report_format("true").value() == ReportFormat::text));
  BOOST_TEST((parse_report_format("json").value() == ReportFormat::json));
  BOOST_TEST((parse_report_format("1").value() == ReportFormat::text));
  BOOST_TEST((parse_report_format("off").value() == ReportFormat::none));
  auto bad = parse_report_format("yaml");
  BOOST_REQUIRE(!bad.is_ok());
  BOOST_TEST(bad.status().message() == "engine.report: 'yaml' is not one of false, true, json");
}

BOOST_AUTO_TEST_SUITE_END()

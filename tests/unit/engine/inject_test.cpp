// Live fault injection (inject, clear, faults, events, control answers, refusals) and the flight recorder.
#include <boost/test/unit_test.hpp>

#include <stdlib.h>

#include <atomic>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "engine/engine_core.hpp"
#include "ftmpi/base/compress.hpp"
#include "ftmpi/base/json_value.hpp"
#include "ftmpi/path/fault.hpp"
#include "ftmpi/path/loop.hpp"

using namespace ftmpi;
using namespace ftmpi::engine;
using namespace std::chrono_literals;

namespace {

// Two ranks in one process, one loop network per rail, each rail wrapped in a FaultPath with no fault yet
// (unless `wrapped` says otherwise: then a reliable loop path, like shared memory, with no fault layer).
// Rank 0 takes control requests from `inbox` when `pending` is raised and answers into `replies`.
struct Rig {
  std::atomic<bool> pending{false};
  std::vector<rte::Control> inbox;
  std::vector<rte::ControlReply> replies;
  std::vector<std::unique_ptr<path::LoopNetwork>> networks;
  std::vector<std::unique_ptr<EngineCore>> ranks;
  std::vector<std::vector<path::FaultPath*>> layers;  // [rank][rail], null where unwrapped

  explicit Rig(const EngineConfig& config, std::vector<bool> wrapped = {true, true}) {
    constexpr std::uint32_t n = 2;
    for (bool wrap : wrapped) {
      networks.push_back(std::make_unique<path::LoopNetwork>(n, path::LoopOptions{4096, !wrap}));
    }
    for (std::uint32_t r = 0; r < n; ++r) {
      std::vector<std::unique_ptr<path::Path>> paths;
      layers.emplace_back();
      for (std::size_t k = 0; k < wrapped.size(); ++k) {
        std::unique_ptr<path::Path> loop = std::make_unique<path::LoopPath>(*networks[k], r);
        path::FaultPath* layer = nullptr;
        if (wrapped[k]) {
          path::FaultOptions options;
          options.stream = r;
          auto fault = std::make_unique<path::FaultPath>(std::move(loop), std::vector<path::FaultSpec>{}, options);
          layer = fault.get();
          loop = std::move(fault);
        }
        layers.back().push_back(layer);
        paths.push_back(std::move(loop));
      }
      Environment env;
      env.abort = [r](int code, std::string_view message) {
        BOOST_FAIL("rank " << r << " aborted (" << code << "): " << message);
      };
      if (r == 0) {
        env.control_pending = &pending;
        env.take_control = [this] {
          pending = false;
          std::vector<rte::Control> taken;
          taken.swap(inbox);
          return taken;
        };
        env.reply_control = [this](std::uint32_t id, bool ok, std::string text) {
          replies.push_back({id, ok, std::move(text)});
        };
      }
      ranks.push_back(std::make_unique<EngineCore>(Identity{r, n, 0x1a7e'c7ed'0000'0001ULL}, config, std::move(paths),
                                                   std::move(env)));
      ranks.back()->set_fault_layers(layers.back());
    }
  }

  EngineCore& operator[](std::uint32_t r) { return *ranks[r]; }
  CommView world(std::uint32_t r) const { return CommView{0, static_cast<int>(r), static_cast<int>(ranks.size()), {}}; }

  void run_until(const std::function<bool()>& done, std::uint64_t max_rounds = 5'000'000) {
    for (std::uint64_t round = 0; !done(); ++round) {
      BOOST_REQUIRE_MESSAGE(round < max_rounds, "no progress after " << max_rounds << " rounds");
      for (auto& e : ranks) e->progress();
    }
  }

  // `count` messages of `bytes` from rank 0 to rank 1, all in flight at once; each must arrive intact.
  void exchange(std::size_t count, std::size_t bytes = 1000) {
    std::vector<std::vector<std::byte>> sent(count, std::vector<std::byte>(bytes)), got = sent;
    std::vector<Request*> sends, recvs;
    for (std::size_t i = 0; i < count; ++i) {
      for (std::size_t b = 0; b < bytes; ++b) sent[i][b] = static_cast<std::byte>(i * 31 + b * 7);
      recvs.push_back(ranks[1]->irecv(world(1), got[i].data(), bytes, 0, 5));
      sends.push_back(ranks[0]->isend(world(0), sent[i].data(), bytes, 1, 5, SendMode::standard));
    }
    run_until([&] {
      for (std::size_t i = 0; i < count; ++i) {
        if (!ranks[0]->is_complete(sends[i], nullptr) || !ranks[1]->is_complete(recvs[i], nullptr)) return false;
      }
      return true;
    });
    for (std::size_t i = 0; i < count; ++i) {
      BOOST_TEST((got[i] == sent[i]), "message " << i << " differs");
      ranks[0]->release(sends[i]);
      ranks[1]->release(recvs[i]);
    }
  }
};

rte::ControlRequest req(const std::string& words) {
  auto r = rte::parse_control_request("ftmpi-control 1 " + words);
  BOOST_REQUIRE_MESSAGE(r, r.status().message());
  return *r;
}

base::JsonValue json(std::string_view text) {
  auto v = base::parse_json(text);
  BOOST_REQUIRE_MESSAGE(v, v.status().message() << " in " << text);
  return *v;
}

bool has(const std::string& text, std::string_view part) { return text.find(part) != std::string::npos; }

FlightEvent event(FlightKind kind, std::uint32_t rail = 0, std::string text = {}) {
  FlightEvent e;
  e.at = std::chrono::system_clock::time_point(1'764'000'000'123'456us);
  e.kind = kind;
  e.peer = 3;
  e.rail = rail;
  e.text = std::move(text);
  return e;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(inject)

BOOST_AUTO_TEST_CASE(the_ring_numbers_from_one_forgets_the_oldest_and_keeps_nothing_at_capacity_zero) {
  FlightRecorder none(0);
  none.record(event(FlightKind::inject));
  BOOST_TEST(none.last_seq() == 0u);
  BOOST_TEST(none.after(0).empty());

  FlightRecorder ring(3);
  for (int i = 0; i < 5; ++i) ring.record(event(FlightKind::traffic, static_cast<std::uint32_t>(i)));
  BOOST_TEST(ring.last_seq() == 5u);
  std::vector<std::uint64_t> seqs, rails;
  for (const FlightEvent* e : ring.after(0)) {
    seqs.push_back(e->seq);
    rails.push_back(e->rail);
  }
  BOOST_TEST(seqs == (std::vector<std::uint64_t>{3, 4, 5}), boost::test_tools::per_element());
  BOOST_TEST(rails == (std::vector<std::uint64_t>{2, 3, 4}), boost::test_tools::per_element());
  BOOST_REQUIRE(ring.after(3).size() == 2u);
  BOOST_TEST(ring.after(3)[0]->seq == 4u);
  BOOST_TEST(ring.after(5).empty());
}

BOOST_AUTO_TEST_CASE(flight_json_of_each_kind_parses_with_its_fields) {
  // Parsed and compared as documents: every field, in order, and nothing else.
  auto same = [](const FlightEvent& e, std::string_view expected) {
    BOOST_TEST((json(flight_json(e)) == json(expected)), flight_json(e) << " is not " << expected);
  };
  FlightEvent state = event(FlightKind::rail_state, 1, "down");
  state.seq = 7;
  state.reason = "no answer for 51 ms";
  same(state, R"({"seq":7,"at_us":1764000000123456,"kind":"rail_state","peer":3,"rail":1,"state":"down",)"
              R"("reason":"no answer for 51 ms"})");
  FlightEvent traffic = event(FlightKind::traffic, 2);
  traffic.interval = 1500us;
  traffic.bytes_sent = 10;
  traffic.bytes_received = 20;
  traffic.retransmits = 3;
  traffic.timeouts = 4;
  traffic.checksum_failures = 5;
  same(traffic, R"({"seq":0,"at_us":1764000000123456,"kind":"traffic","peer":3,"rail":2,"interval_us":1500,)"
                R"("bytes_sent":10,"bytes_received":20,"retransmits":3,"timeouts":4,"checksum_failures":5})");
  same(event(FlightKind::inject, kEveryRail, "drop=0.5"),
       R"({"seq":0,"at_us":1764000000123456,"kind":"inject","rail":null,"spec":"drop=0.5"})");
  same(event(FlightKind::clear, 2), R"({"seq":0,"at_us":1764000000123456,"kind":"clear","rail":2,"spec":""})");
  same(event(FlightKind::peer_lost, 0, "every rail failed"),
       R"({"seq":0,"at_us":1764000000123456,"kind":"peer_lost","peer":3,"reason":"every rail failed"})");
}

BOOST_AUTO_TEST_CASE(a_drop_on_one_rail_is_counted_since_the_injection_and_repaired_over_the_other) {
  Rig rig(EngineConfig::defaults());
  rig.exchange(4);
  auto before = json(rig[0].faults_json());
  BOOST_TEST(before["since"].is_null());
  BOOST_TEST(before["rails"][1]["injected"]["frames_seen"].as_u64() > 0u);  // since the start: none injected yet

  auto answer = rig[0].inject_fault(req("inject spec=drop=1 rail=1"));
  BOOST_REQUIRE_MESSAGE(answer, answer.status().message());
  auto a = json(*answer);
  BOOST_TEST(a["rank"].as_u64() == 0u);
  BOOST_TEST(a["spec"].as_string() == "drop=1");
  BOOST_REQUIRE(a["rails"].items().size() == 1u);
  BOOST_TEST(a["rails"][0]["index"].as_u64() == 1u);
  BOOST_TEST(a["rails"][0]["name"].as_string() == "loop 0");
  BOOST_REQUIRE(rig.layers[0][1]->specs().size() == 1u);
  BOOST_TEST((rig.layers[0][1]->specs()[0] == *path::parse_fault_spec("drop=1")));
  BOOST_TEST(rig.layers[0][0]->specs().empty());

  auto f = json(rig[0].faults_json());
  BOOST_TEST(f["since"].as_string().size() > 0u);
  BOOST_TEST(f["rails"][1]["injectable"].as_bool());
  BOOST_TEST(f["rails"][1]["faults"][0]["spec"].as_string() == "drop=1");
  BOOST_TEST(f["rails"][1]["faults"][0]["state"].as_string() == "active");
  BOOST_TEST(f["rails"][1]["injected"]["frames_seen"].as_u64() == 0u);  // the baseline is the injection
  BOOST_TEST(f["rails"][0]["faults"].items().empty());

  rig.exchange(16);  // every frame on rail 1 is lost; each is resent elsewhere and arrives
  f = json(rig[0].faults_json());
  const auto& injected = f["rails"][1]["injected"];
  BOOST_TEST(injected["dropped"].as_u64() > 0u);
  BOOST_TEST(injected["dropped"].as_u64() == injected["frames_seen"].as_u64());
  BOOST_TEST(f["rails"][1]["timeouts"].as_u64() > 0u);
  BOOST_TEST(f["rails"][0]["retransmits"].as_u64() + f["rails"][1]["retransmits"].as_u64() > 0u);
  BOOST_TEST(f["rails"][0]["injected"]["dropped"].as_u64() == 0u);

  auto cleared = rig[0].clear_faults(req("clear"));
  BOOST_REQUIRE_MESSAGE(cleared, cleared.status().message());
  auto c = json(*cleared);
  BOOST_REQUIRE(c["cleared"].items().size() == 2u);
  BOOST_TEST(c["cleared"][0]["specs"].as_u64() == 0u);
  BOOST_TEST(c["cleared"][1]["specs"].as_u64() == 1u);
  BOOST_TEST(rig.layers[0][1]->specs().empty());
  BOOST_TEST(json(rig[0].faults_json())["rails"][1]["faults"].items().empty());
  rig.exchange(4);

  BOOST_REQUIRE(rig[0].inject_fault(req("inject spec=drop=1,after=3600s rail=0")));
  BOOST_TEST(json(rig[0].faults_json())["rails"][0]["faults"][0]["state"].as_string() == "waiting");
}

BOOST_AUTO_TEST_CASE(a_corruption_is_counted_as_injected_by_the_sender_and_detected_by_the_receiver) {
  Rig rig(EngineConfig::defaults());
  BOOST_REQUIRE(rig[0].inject_fault(req("inject spec=corrupt=1 rail=1")));
  rig.exchange(16);  // every frame rank 0 sends on rail 1 is damaged; rank 1 refuses it, and it is resent
  auto sender = json(rig[0].faults_json());
  auto receiver = json(rig[1].faults_json());  // nothing injected there: counts since the start
  BOOST_TEST(sender["rails"][1]["injected"]["corrupted"].as_u64() > 0u);
  BOOST_TEST(receiver["since"].is_null());
  BOOST_TEST(receiver["rails"][1]["detected"].as_u64() > 0u);
  BOOST_TEST(receiver["rails"][0]["detected"].as_u64() == 0u);
}

BOOST_AUTO_TEST_CASE(a_path_without_a_fault_layer_refuses_and_says_why) {
  Rig rig(EngineConfig::defaults(), {false});
  rig[0].set_fault_layers({nullptr});
  for (const char* words : {"inject spec=drop=0.1", "inject spec=delay=1ms rail=0"}) {
    auto refused = rig[0].inject_fault(req(words));
    BOOST_TEST((refused.code() == base::Errc::unsupported), words);
    BOOST_TEST(has(refused.status().message(), "shared memory"), refused.status().message());
    BOOST_TEST(has(refused.status().message(), "engine.reliability=force"), refused.status().message());
  }
  // Clearing harms nothing: there it clears nothing, and says so.
  for (const char* words : {"clear", "clear rail=0"}) {
    auto cleared = rig[0].clear_faults(req(words));
    BOOST_TEST_REQUIRE(cleared.is_ok(), words);
    BOOST_TEST(json(*cleared)["cleared"].items().empty(), words);
  }
  auto f = json(rig[0].faults_json());
  BOOST_TEST(!f["rails"][0]["injectable"].as_bool());
  BOOST_TEST(f["since"].is_null());
}

BOOST_AUTO_TEST_CASE(corruption_without_a_checksum_and_harm_without_reliability_are_refused) {
  EngineConfig unchecked = EngineConfig::defaults();
  unchecked.checksum = frag::ChecksumKind::none;
  Rig plain(unchecked);
  auto corrupt = plain[0].inject_fault(req("inject spec=corrupt=0.1"));
  BOOST_TEST((corrupt.code() == base::Errc::unsupported));
  BOOST_TEST(has(corrupt.status().message(), "engine.checksum=none"));
  BOOST_TEST(plain.layers[0][0]->specs().empty());
  BOOST_CHECK(plain[0].inject_fault(req("inject spec=drop=0.1")));

  EngineConfig off = EngineConfig::defaults();
  off.reliability = Reliability::off;
  Rig bare(off);
  for (const char* spec : {"drop=0.1", "corrupt=0.1", "dup=0.1", "reorder=0.1", "blackhole"}) {
    auto refused = bare[0].inject_fault(req(std::string("inject spec=") + spec + " rail=1"));
    BOOST_TEST((refused.code() == base::Errc::unsupported), spec);
    BOOST_TEST(has(refused.status().message(), "engine.reliability=off"), spec);
  }
  BOOST_TEST(bare.layers[0][1]->specs().empty());
  BOOST_REQUIRE(bare[0].inject_fault(req("inject spec=delay=1ms rail=1")));
  BOOST_REQUIRE(bare.layers[0][1]->specs().size() == 1u);
  BOOST_TEST((bare.layers[0][1]->specs()[0].delay == 1ms));
  bare.exchange(8);  // delayed, never lost
  BOOST_TEST(bare.layers[0][1]->counters().delayed > 0u);
}

BOOST_AUTO_TEST_CASE(control_requests_are_answered_with_json_or_an_error_and_its_code) {
  Rig rig(EngineConfig::defaults());
  rig[0].set_fault_layers({rig.layers[0][0]});  // padded with null: rail 1 has no layer now
  struct Line {
    std::string words;
    const char* code;  // null: answered ok
  };
  const std::vector<Line> lines = {{"inject spec=drop=1 rail=9", "unknown_rail"},
                                   {"inject spec=drop=1,rail=0 rail=1", "bad_request"},  // two rails named
                                   {"inject spec=drop=2", "bad_request"},
                                   {"inject spec=bogus=1", "bad_request"},
                                   {"inject spec=drop=0.1,delay=soon", "bad_request"},
                                   {"inject spec=drop=1 rail=1", "refused"},
                                   {"clear rail=eth7", "unknown_rail"},
                                   {"bogus", "bad_request"},
                                   {"inject spec=drop=0.5", nullptr},
                                   {"faults", nullptr},
                                   {"events after=0", nullptr}};
  for (std::uint32_t i = 0; i < lines.size(); ++i) rig.inbox.push_back({i, "ftmpi-control 1 " + lines[i].words});
  rig.pending = true;
  rig[0].progress();
  BOOST_TEST(!rig.pending.load());
  BOOST_REQUIRE(rig.replies.size() == lines.size());
  for (std::uint32_t i = 0; i < lines.size(); ++i) {
    const rte::ControlReply& reply = rig.replies[i];
    BOOST_TEST(reply.id == i);
    BOOST_TEST(reply.ok == (lines[i].code == nullptr), lines[i].words << ": " << reply.text);
    auto v = json(reply.text);
    if (lines[i].code != nullptr) {
      BOOST_TEST(v["code"].as_string() == lines[i].code, lines[i].words);
      BOOST_TEST(!v["error"].as_string().empty(), lines[i].words);
    }
  }
  BOOST_TEST(has(json(rig.replies[0].text)["error"].as_string(), "no rail '9'"));
  BOOST_TEST(has(json(rig.replies[1].text)["error"].as_string(), "give one"));
  BOOST_TEST(has(json(rig.replies[5].text)["error"].as_string(), "shared memory"));
  BOOST_TEST(rig.layers[0][1]->specs().empty());  // nothing refused was installed, or recorded
  BOOST_TEST(rig[0].flight().last_seq() == 1u);
  auto injected = json(rig.replies[8].text);  // every rail with a layer: rail 0 only
  BOOST_REQUIRE(injected["rails"].items().size() == 1u);
  BOOST_TEST(injected["rails"][0]["index"].as_u64() == 0u);
  auto faults = json(rig.replies[9].text);
  BOOST_TEST(faults["rails"][0]["faults"][0]["spec"].as_string() == "drop=0.5");
  BOOST_TEST(!faults["rails"][1]["injectable"].as_bool());
  auto events = json(rig.replies[10].text);
  BOOST_REQUIRE(events["events"].items().size() == 1u);
  BOOST_TEST(events["events"][0]["kind"].as_string() == "inject");
  BOOST_TEST(events["events"][0]["rail"].is_null());
  rig[0].progress();  // nothing pending: nothing answered
  BOOST_TEST(rig.replies.size() == lines.size());
  // The same code straight from the engine; a SPEC and a request naming the same rail is fine.
  BOOST_TEST((rig[0].inject_fault(req("inject spec=drop=1 rail=9")).code() == base::Errc::not_found));
  BOOST_CHECK(rig[0].inject_fault(req("inject spec=drop=1,rail=0 rail=0")));
  BOOST_TEST(rig.layers[0][0]->specs().size() == 2u);
}

BOOST_AUTO_TEST_CASE(events_list_inject_then_clear_and_nothing_after_the_last) {
  Rig rig(EngineConfig::defaults());
  BOOST_REQUIRE(rig[0].inject_fault(req("inject spec=drop=0.5 rail=1")));
  BOOST_REQUIRE(rig[0].clear_faults(req("clear")));
  auto all = json(rig[0].events_json(0));
  BOOST_TEST(all["rank"].as_u64() == 0u);
  BOOST_TEST(all["last"].as_u64() == 2u);
  BOOST_TEST(all["capacity"].as_u64() == EngineConfig::defaults().flight_events);
  BOOST_TEST(!all["more"].as_bool());
  BOOST_REQUIRE(all["events"].items().size() == 2u);
  BOOST_TEST(all["events"][0]["seq"].as_u64() == 1u);
  BOOST_TEST(all["events"][0]["kind"].as_string() == "inject");
  BOOST_TEST(all["events"][0]["rail"].as_u64() == 1u);
  BOOST_TEST(all["events"][0]["spec"].as_string() == "drop=0.5");
  BOOST_TEST(all["events"][1]["seq"].as_u64() == 2u);
  BOOST_TEST(all["events"][1]["kind"].as_string() == "clear");
  BOOST_TEST(all["events"][1]["rail"].is_null());
  BOOST_TEST(json(rig[0].events_json(1))["events"].items().size() == 1u);
  auto none = json(rig[0].events_json(2));
  BOOST_TEST(none["events"].items().empty());
  BOOST_TEST(none["last"].as_u64() == 2u);
  for (int i = 0; i < 2000; ++i) BOOST_REQUIRE(rig[0].clear_faults(req("clear rail=0")));
  auto page = json(rig[0].events_json(0));  // 2002 events: a reply carries 2000, oldest first
  BOOST_TEST(page["more"].as_bool());
  BOOST_TEST(page["events"].items().size() == 2000u);
  BOOST_TEST(page["events"][1999]["seq"].as_u64() == 2000u);
  auto rest = json(rig[0].events_json(2000));
  BOOST_TEST(!rest["more"].as_bool());
  BOOST_TEST(rest["events"].items().size() == 2u);
  BOOST_TEST(rest["events"][1]["rail"].as_u64() == 0u);

  EngineConfig zero = EngineConfig::defaults();
  zero.flight_events = 0;
  zero.flight_interval = 1ns;
  Rig silent(zero);
  BOOST_REQUIRE(silent[0].inject_fault(req("inject spec=drop=0.5 rail=1")));
  silent.exchange(4);
  auto kept = json(silent[0].events_json(0));
  BOOST_TEST(kept["events"].items().empty());
  BOOST_TEST(kept["last"].as_u64() == 0u);
  BOOST_TEST(kept["capacity"].as_u64() == 0u);
}

BOOST_AUTO_TEST_CASE(a_blackholed_rail_fails_and_the_recorder_has_its_states_and_the_traffic) {
  EngineConfig config = EngineConfig::defaults();
  config.rail_down_after = 5ms;
  config.flight_interval = 1ns;  // every timer check notes the traffic
  Rig rig(config);
  for (std::uint32_t r = 0; r < 2; ++r) BOOST_REQUIRE(rig[r].inject_fault(req("inject spec=blackhole rail=1")));
  for (int i = 0; rig[0].peer(1).rails[1].state != RailState::down; ++i) {  // until rank 0 gives rail 1 up
    BOOST_REQUIRE_MESSAGE(i < 100'000, "rail 1 is still " << to_string(rig[0].peer(1).rails[1].state));
    rig.exchange(2, 100);  // every message arrives meanwhile, over rail 0
  }

  auto all = json(rig[0].events_json(0));
  std::uint64_t last = 0;
  bool suspect = false, down = false, traffic = false;
  for (const base::JsonValue& e : all["events"].items()) {
    BOOST_TEST(e["seq"].as_u64() > last);
    last = e["seq"].as_u64();
    if (e["kind"].as_string() == "rail_state" && e["peer"].as_u64() == 1u && e["rail"].as_u64() == 1u) {
      BOOST_TEST(!e["reason"].as_string().empty());
      suspect = suspect || e["state"].as_string() == "suspect";
      down = down || (suspect && e["state"].as_string() == "down");
    }
    traffic = traffic ||
              (e["kind"].as_string() == "traffic" && e["peer"].as_u64() == 1u && e["bytes_sent"].as_u64() > 0u);
  }
  BOOST_TEST(all["events"][0]["kind"].as_string() == "inject");
  BOOST_TEST(last == all["last"].as_u64());
  BOOST_TEST_MESSAGE("rank 0 recorded " << last << " events until rail 1 went down");
  BOOST_TEST(suspect);
  BOOST_TEST(down);  // after suspect
  BOOST_TEST(traffic);
  BOOST_TEST(json(rig[0].events_json(last))["events"].items().empty());
  BOOST_TEST(json(rig[0].faults_json())["rails"][1]["injected"]["blackholed"].as_u64() > 0u);
}

BOOST_AUTO_TEST_CASE(the_flight_file_is_zstd_json_with_the_stats_and_events_and_is_not_written_unconfigured) {
  char dir_template[] = "/tmp/ftmpi-inject-test-XXXXXX";
  BOOST_REQUIRE(::mkdtemp(dir_template) != nullptr);
  const std::filesystem::path dir = dir_template;
  struct Remove {
    std::filesystem::path dir;
    ~Remove() { std::filesystem::remove_all(dir); }
  } cleanup{dir};

  Rig quiet(EngineConfig::defaults());
  BOOST_TEST(quiet[0].write_flight_file("drill").empty());
  BOOST_TEST(std::filesystem::is_empty(dir));

  EngineConfig config = EngineConfig::defaults();
  config.flight_file = (dir / "rank0.flight.zst").string();
  config.flight_interval = 1h;  // no traffic notes: the inject is the only event
  Rig rig(config);
  rig.exchange(4);
  BOOST_REQUIRE(rig[0].inject_fault(req("inject spec=drop=0.25 rail=0")));
  BOOST_TEST(rig[0].write_flight_file("drill") == config.flight_file);
  auto compressed = base::read_file(config.flight_file);
  BOOST_REQUIRE_MESSAGE(compressed, compressed.status().message());
  auto text = base::zstd_decompress(*compressed);
  BOOST_REQUIRE_MESSAGE(text, text.status().message());
  auto v = json(*text);
  BOOST_TEST(v["rank"].as_u64() == 0u);
  BOOST_TEST(v["size"].as_u64() == 2u);
  BOOST_TEST(v["why"].as_string() == "drill");
  BOOST_TEST(v["stats"]["totals"].is_object());
  BOOST_TEST(v["stats"]["totals"]["frames_sent"].as_u64() > 0u);
  BOOST_REQUIRE(v["events"].items().size() == 1u);
  BOOST_TEST(v["events"][0]["kind"].as_string() == "inject");
  BOOST_TEST(v["events"][0]["spec"].as_string() == "drop=0.25");

  config.flight_file = (dir / "missing" / "rank1.flight.zst").string();  // a write that fails says so on stderr
  Rig lost(config);
  BOOST_TEST(lost[1].write_flight_file("drill").empty());
  BOOST_TEST(!std::filesystem::exists(config.flight_file));
}

BOOST_AUTO_TEST_SUITE_END()

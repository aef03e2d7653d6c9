// The sweep's report without running it (compare.hpp): medians of the rounds, the ratio to the best peer,
// and the JSON, CSV and Markdown a hand-built report turns into.
#include "ftmpi/bench/compare.hpp"

#include <boost/test/unit_test.hpp>
#include <string>
#include <vector>

#include "ftmpi/base/json_value.hpp"

using namespace ftmpi::bench;
using ftmpi::base::JsonValue;
using ftmpi::base::parse_json;

namespace {

const Result kLat0{"lat", 0, 0, "us"};
const Result kLat8k{"lat", 8192, 0, "us"};
const Result kBw1m{"bw", 1u << 20, 0, "MB/s"};

// ftmpi alone: two kernels, lat at two sizes.
SweepReport alone() {
  SweepReport report;
  report.ranks = 2;
  report.rounds = 3;
  report.names = {"ftmpi"};
  report.libraries = {"ftmpi 0.3 (test)"};
  report.samples.resize(1);
  report.samples[0][{"lat", 0}] = {0.3, 0.1, 0.2};
  report.samples[0][{"lat", 8192}] = {1.5, 1.25, 1.0};
  report.samples[0][{"bw", 1u << 20}] = {9000, 11000, 10000};
  report.order = {{"lat", 0, 0.2, "us"}, {"lat", 8192, 1.25, "us"}, {"bw", 1u << 20, 10000, "MB/s"}};
  return report;
}

// ftmpi, Open MPI and MPICH; MPICH lacks one figure.
SweepReport beside_peers() {
  SweepReport report = alone();
  report.bound = true;
  report.names = {"ftmpi", "openmpi", "mpich"};
  report.libraries = {"ftmpi 0.3 (test)", "Open MPI v4.1.4", "MPICH 4.0.2"};
  report.transports = {"", "tcp lo", "ucx tcp"};
  report.samples.resize(3);
  report.samples[1][{"lat", 0}] = {0.15, 0.16, 0.14};
  report.samples[1][{"lat", 8192}] = {0.9, 1.1};
  report.samples[1][{"bw", 1u << 20}] = {12000};
  report.samples[2][{"lat", 0}] = {0.4};
  report.samples[2][{"bw", 1u << 20}] = {8000, 16000, 11000, 12000};  // median 11500
  report.rails = {{"shm", 300, 1, 0, 0}, {"udp lo 127.0.0.1", 100, 0, 2, 3}};
  report.conditions = "3 runs; quiet";
  return report;
}

// ftmpi beside two variants of itself (no peers): "off" in rounds 1-4, "nocrc" with one round unmeasured.
SweepReport beside_variants() {
  SweepReport report;
  report.ranks = 2;
  report.rounds = 4;
  report.bound = true;
  report.names = {"ftmpi", "off", "nocrc"};
  report.libraries = {"ftmpi 0.3 (test)", "ftmpi 0.3 (test)", "ftmpi 0.3 (test)"};
  report.transports = {"", "", ""};
  report.variant_params = {{"engine.reliability=off"}, {"engine.checksum=none", "path.fault=drop=1,for=2KB"}};
  report.variant_rails = {{{"udp lo 127.0.0.1", 50, 0, 0, 0}}, {{"udp lo 127.0.0.1", 70, 4, 1, 0}}};
  report.samples.resize(3);
  // Round by round ftmpi / off is 1.10, 1.00, 1.20, 1.05 at 8 KB (sorted 1.00 1.05 1.10 1.20: median 1.075,
  // quartiles 1.0375 and 1.125), while the ratio of the medians would be 1.15 / 1.0.
  report.samples[0][{"lat", 8192}] = {1.1, 1.2, 1.2, 1.05};
  report.samples[1][{"lat", 8192}] = {1.0, 1.2, 1.0, 1.0};
  report.samples[2][{"lat", 8192}] = {1.0, 0.0, 1.2, 1.05};  // a 0 is no figure: 3 rounds count
  report.samples[0][{"bw", 1u << 20}] = {900, 800, 0, 1000};  // a 0 is no figure
  report.samples[1][{"bw", 1u << 20}] = {1000, 1000, 1000, 0};
  report.order = {{"lat", 8192, 1.15, "us"}, {"bw", 1u << 20, 850, "MB/s"}};
  report.rails = {{"udp lo 127.0.0.1", 60, 0, 0, 0}};
  return report;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(compare)

BOOST_AUTO_TEST_CASE(a_variant_is_a_name_and_parameters) {
  auto v = parse_variant("off:engine.reliability=off");
  BOOST_TEST_REQUIRE(v.is_ok(), v.status().to_string());
  BOOST_TEST(v->name == "off");
  BOOST_TEST(v->params == std::vector<std::string>{"engine.reliability=off"});
  v = parse_variant("lossy-2.a_b:engine.reliability=force,path.fault=drop=1,for=2KB,engine.checksum=none");
  BOOST_TEST_REQUIRE(v.is_ok(), v.status().to_string());
  BOOST_TEST(v->name == "lossy-2.a_b");
  // A piece that does not start with a parameter's (dotted) name belongs to the value before it.
  BOOST_TEST(v->params == (std::vector<std::string>{"engine.reliability=force", "path.fault=drop=1,for=2KB",
                                                    "engine.checksum=none"}));
  BOOST_TEST(parse_variant("x:path.fault=drop=1,for=2KB")->params == std::vector<std::string>{"path.fault=drop=1,for=2KB"});
  for (const auto& [text, why] : std::vector<std::pair<std::string, std::string>>{
           {"off", "no ':' after its name"},
           {":engine.reliability=off", "no name before ':'"},
           {"off:", "no parameter after ':'"},
           {"a b:x=1", "a name is letters, digits"},
           {"ftmpi:x=1", "ftmpi names the job as given"},
           {"openmpi:x=1", "'openmpi' names a peer MPI"},
           {"mpich:x=1", "'mpich' names a peer MPI"},
           {"off:reliability", "'reliability' is not K=V"},
           {"off:reliability=off", "'reliability=off' is not K=V with a parameter's name"},
           {"off:=off", "'=off' is not K=V"},
           {"off:for=2KB,engine.reliability=off", "'for=2KB' is not K=V"}}) {
    auto bad = parse_variant(text);
    BOOST_TEST_REQUIRE(!bad.is_ok(), text);
    BOOST_TEST((bad.status().code() == ftmpi::base::Errc::invalid_argument));
    BOOST_TEST(bad.status().message().find("--variant '" + text + "': " + why) == 0u, bad.status().message());
  }
}

BOOST_AUTO_TEST_CASE(ratio_spread_is_the_median_and_the_quartiles) {
  RatioSpread s = ratio_spread({1.2, 1.0, 1.1, 1.05});
  BOOST_TEST(s.rounds == 4u);
  BOOST_TEST(s.median == 1.075, boost::test_tools::tolerance(1e-12));
  BOOST_TEST(s.low == 1.0375, boost::test_tools::tolerance(1e-12));
  BOOST_TEST(s.high == 1.125, boost::test_tools::tolerance(1e-12));
  s = ratio_spread({3.0, 1.0, 2.0, 5.0, 4.0});  // odd: the middle one; quartiles fall on values
  BOOST_TEST(s.median == 3.0);
  BOOST_TEST(s.low == 2.0);
  BOOST_TEST(s.high == 4.0);
  s = ratio_spread({0.9});
  BOOST_TEST(s.rounds == 1u);
  BOOST_TEST((s.median == 0.9 && s.low == 0.9 && s.high == 0.9));
  s = ratio_spread({});
  BOOST_TEST((s.rounds == 0u && s.median == 0.0));
}

BOOST_AUTO_TEST_CASE(ratio_to_a_variant_pairs_the_runs_of_each_round) {
  const SweepReport r = beside_variants();
  BOOST_TEST(r.is_variant(1));
  BOOST_TEST(r.is_variant(2));
  BOOST_TEST(!r.is_variant(0));
  BOOST_TEST(!r.is_variant(3));
  RatioSpread s = r.ratio_by_round(1, kLat8k);
  BOOST_TEST(s.rounds == 4u);
  BOOST_TEST(s.median == 1.075, boost::test_tools::tolerance(1e-12));
  BOOST_TEST(s.low == 1.0375, boost::test_tools::tolerance(1e-12));
  BOOST_TEST(s.high == 1.125, boost::test_tools::tolerance(1e-12));
  s = r.ratio_by_round(2, kLat8k);  // 1.1, (none), 1.0, 1.0
  BOOST_TEST(s.rounds == 3u);
  BOOST_TEST(s.median == 1.0, boost::test_tools::tolerance(1e-12));
  s = r.ratio_by_round(1, kBw1m);  // 0.9, 0.8 (rounds 3 and 4 lack one figure or the other)
  BOOST_TEST(s.rounds == 2u);
  BOOST_TEST(s.median == 0.85, boost::test_tools::tolerance(1e-12));
  BOOST_TEST(r.ratio_by_round(2, kBw1m).rounds == 0u);  // nocrc has no bw
  BOOST_TEST(r.ratio_by_round(0, kLat8k).rounds == 0u);
  BOOST_TEST(r.ratio_by_round(3, kLat8k).rounds == 0u);
  // Variants are not peers: no ratio to a best peer without peers.
  BOOST_TEST(r.ratio_to_best_peer(kLat8k) == 0.0);
  // Beside peers too, the best peer is a peer's figure, never a faster variant's.
  SweepReport both = r;
  both.names.push_back("openmpi");
  both.libraries.push_back("Open MPI v4.1.4");
  both.transports.push_back("tcp lo");
  both.samples.resize(4);
  both.samples[3][{"lat", 8192}] = {2.3};
  BOOST_TEST(both.ratio_to_best_peer(kLat8k) == 0.5, boost::test_tools::tolerance(1e-12));
}

BOOST_AUTO_TEST_CASE(a_sweep_refuses_variants_it_cannot_measure_before_running_anything) {
  Sweep sweep;
  sweep.variants = {{"off", {"engine.reliability=off"}}, {"off", {"engine.checksum=none"}}};
  auto report = run_sweep(sweep);
  BOOST_TEST_REQUIRE(!report.is_ok());
  BOOST_TEST((report.status().code() == ftmpi::base::Errc::invalid_argument));
  BOOST_TEST(report.status().message() == "--variant: two variants named 'off'");
  // ftrun applies --paths and --rails after every parameter: such a variant would be the job again.
  sweep.variants = {{"shm", {"path.kinds=shm"}}};
  sweep.job.paths = "udp";
  report = run_sweep(sweep);
  BOOST_TEST_REQUIRE(!report.is_ok());
  BOOST_TEST(report.status().message() == "--variant 'shm': --paths sets path.kinds for every job; leave it out to vary it");
  sweep.job.paths = "";
  sweep.job.rails = "127.0.0.1";
  sweep.variants = {{"two", {"engine.checksum=none", "path.rails=127.0.0.1,127.0.0.2"}}};
  report = run_sweep(sweep);
  BOOST_TEST_REQUIRE(!report.is_ok());
  BOOST_TEST(report.status().message() == "--variant 'two': --rails sets path.rails for every job; leave it out to vary it");
}

BOOST_AUTO_TEST_CASE(markdown_beside_variants_has_a_ratio_column_each) {
  const std::string md = sweep_markdown(beside_variants(), "unused");
  BOOST_TEST(md.find("2 ranks, bound to cores; medians of 4 interleaved rounds\n") == 0u, md);
  BOOST_TEST(md.find("  off: ftmpi 0.3 (test), with engine.reliability=off\n"
                     "  nocrc: ftmpi 0.3 (test), with engine.checksum=none path.fault=drop=1,for=2KB\n"
                     "  ftmpi / a variant: the two runs of each round divided, the median of the rounds (quartiles)\n") !=
                 std::string::npos, md);
  BOOST_TEST(md.find("| size | ftmpi | off | nocrc | ftmpi / off | ftmpi / nocrc |\n|---:|---:|---:|---:|---:|---:|\n"
                     "| 8 KB | 1.150 | 1.000 | 1.025 | 1.075x (1.038-1.125) | 1.000x (1.000-1.050) |\n") != std::string::npos,
             md);
  BOOST_TEST(md.find("| 1 MB | 850 | 1000 | 0.000 | 0.850x (0.825-0.875) | - |\n") != std::string::npos, md);
  BOOST_TEST(md.find("best peer") == std::string::npos, md);
  // One round: the ratio alone.
  SweepReport one = beside_variants();
  one.rounds = 1;
  for (auto& m : one.samples)
    for (auto& [key, values] : m) values.resize(1);
  const std::string md1 = sweep_markdown(one, "");
  BOOST_TEST(md1.find("one round\n") != std::string::npos, md1);
  BOOST_TEST(md1.find("(quartiles)") == std::string::npos, md1);
  BOOST_TEST(md1.find("| 8 KB | 1.100 | 1.000 | 1.000 | 1.100x | 1.100x |\n") != std::string::npos, md1);
  // Beside a peer as well: the variants' columns, then the best peer's.
  SweepReport both = beside_variants();
  both.names.push_back("openmpi");
  both.libraries.push_back("Open MPI v4.1.4");
  both.transports.push_back("tcp lo");
  both.samples.resize(4);
  both.samples[3][{"lat", 8192}] = {2.3};
  const std::string md2 = sweep_markdown(both, "");
  BOOST_TEST(md2.find("| size | ftmpi | off | nocrc | openmpi | ftmpi / off | ftmpi / nocrc | ftmpi / best peer |\n"
                      "|---:|---:|---:|---:|---:|---:|---:|---:|\n"
                      "| 8 KB | 1.150 | 1.000 | 1.025 | 2.300 | 1.075x (1.038-1.125) | 1.000x (1.000-1.050) | 0.500x |\n") !=
                 std::string::npos,
             md2);
  BOOST_TEST(md2.find("  openmpi: Open MPI v4.1.4, over tcp lo\n") != std::string::npos, md2);
}

BOOST_AUTO_TEST_CASE(json_beside_variants) {
  auto doc = parse_json(sweep_json(beside_variants()));
  BOOST_TEST_REQUIRE(doc.is_ok(), doc.status().to_string());
  const JsonValue& j = *doc;
  BOOST_TEST_REQUIRE(j["results"].items().size() == 2u);
  const JsonValue& lat = j["results"][0];
  BOOST_TEST(lat.find("ratio_to_best_peer") == nullptr);
  BOOST_TEST(lat["ratio_to_variant"]["off"]["median"].as_number() == 1.075, boost::test_tools::tolerance(1e-12));
  BOOST_TEST(lat["ratio_to_variant"]["off"]["low_quartile"].as_number() == 1.0375, boost::test_tools::tolerance(1e-12));
  BOOST_TEST(lat["ratio_to_variant"]["off"]["high_quartile"].as_number() == 1.125, boost::test_tools::tolerance(1e-12));
  BOOST_TEST(lat["ratio_to_variant"]["off"]["rounds"].as_u64() == 4u);
  BOOST_TEST(lat["ratio_to_variant"]["nocrc"]["rounds"].as_u64() == 3u);
  BOOST_TEST(j["results"][1]["ratio_to_variant"]["nocrc"]["rounds"].as_u64() == 0u);
  BOOST_TEST(j.find("peers") == nullptr);
  BOOST_TEST_REQUIRE(j["variants"].members().size() == 2u);
  const JsonValue& nocrc = j["variants"]["nocrc"];
  BOOST_TEST(nocrc["library"].as_string() == "ftmpi 0.3 (test)");
  BOOST_TEST_REQUIRE(nocrc["params"].items().size() == 2u);
  BOOST_TEST(nocrc["params"][1].as_string() == "path.fault=drop=1,for=2KB");
  BOOST_TEST(nocrc["results"][0]["value"].as_number() == 1.025, boost::test_tools::tolerance(1e-12));
  BOOST_TEST(nocrc["rails"][0]["retransmits"].as_u64() == 4u);
  BOOST_TEST(j["variants"]["off"]["rails"][0]["bytes_sent"].as_u64() == 50u);
  BOOST_TEST(j["rails"][0]["bytes_sent"].as_u64() == 60u);  // ftmpi's own
}

BOOST_AUTO_TEST_CASE(csv_beside_variants_names_them_as_mpis) {
  const std::string csv = sweep_csv(beside_variants());
  BOOST_TEST(csv ==
             "mpi,kernel,bytes,value,unit\n"
             "ftmpi,lat,8192,1.15,us\n"
             "ftmpi,bw,1048576,850,MB/s\n"
             "off,lat,8192,1,us\n"
             "off,bw,1048576,1000,MB/s\n"
             "nocrc,lat,8192,1.025,us\n"
             "nocrc,bw,1048576,0,MB/s\n");
}

BOOST_AUTO_TEST_CASE(median_of_each_mpi_for_a_kernel_and_size) {
  const SweepReport r = beside_peers();
  BOOST_TEST(r.median_of(0, kLat0) == 0.2);
  BOOST_TEST(r.median_of(0, kLat8k) == 1.25);
  BOOST_TEST(r.median_of(0, kBw1m) == 10000.0);
  BOOST_TEST(r.median_of(1, kLat0) == 0.15);
  BOOST_TEST(r.median_of(1, kLat8k) == 1.0, boost::test_tools::tolerance(1e-12));  // (0.9 + 1.1) / 2
  BOOST_TEST(r.median_of(2, kBw1m) == 11500.0);
  BOOST_TEST(r.median_of(2, kLat8k) == 0.0);  // never measured
  BOOST_TEST(r.median_of(3, kLat0) == 0.0);   // no such MPI
  BOOST_TEST(r.median_of(0, Result{"bibw", 0, 0, "MB/s"}) == 0.0);
}

BOOST_AUTO_TEST_CASE(ratio_to_the_best_peer_times_lower_rates_higher) {
  const SweepReport r = beside_peers();
  // Latency: the best peer is the fastest, openmpi's 0.15 (not mpich's 0.4).
  BOOST_TEST(r.ratio_to_best_peer(kLat0) == 0.2 / 0.15, boost::test_tools::tolerance(1e-12));
  // 8 KB: mpich has no figure; openmpi's 1.0 is the best.
  BOOST_TEST(r.ratio_to_best_peer(kLat8k) == 1.25, boost::test_tools::tolerance(1e-12));
  // Bandwidth: the best peer is the highest, openmpi's 12000 (mpich's median 11500).
  BOOST_TEST(r.ratio_to_best_peer(kBw1m) == 10000.0 / 12000.0, boost::test_tools::tolerance(1e-12));
  // Rates of messages are better higher too.
  SweepReport rate = r;
  rate.samples[0][{"rate", 8}] = {2.0};
  rate.samples[1][{"rate", 8}] = {4.0};
  rate.samples[2][{"rate", 8}] = {1.0};
  BOOST_TEST(rate.ratio_to_best_peer(Result{"rate", 8, 0, "Mmsg/s"}) == 0.5, boost::test_tools::tolerance(1e-12));
  // No peer has the figure: 0.
  BOOST_TEST(r.ratio_to_best_peer(Result{"bibw", 0, 0, "MB/s"}) == 0.0);
  // No peers at all: 0.
  BOOST_TEST(alone().ratio_to_best_peer(kLat0) == 0.0);
}

BOOST_AUTO_TEST_CASE(csv_alone_has_no_mpi_column) {
  const std::string csv = sweep_csv(alone());
  BOOST_TEST(csv ==
             "kernel,bytes,value,unit\n"
             "lat,0,0.2,us\n"
             "lat,8192,1.25,us\n"
             "bw,1048576,10000,MB/s\n");
}

BOOST_AUTO_TEST_CASE(csv_beside_peers_names_the_mpi_on_every_line) {
  const std::string csv = sweep_csv(beside_peers());
  BOOST_TEST(csv ==
             "mpi,kernel,bytes,value,unit\n"
             "ftmpi,lat,0,0.2,us\n"
             "ftmpi,lat,8192,1.25,us\n"
             "ftmpi,bw,1048576,10000,MB/s\n"
             "openmpi,lat,0,0.15,us\n"
             "openmpi,lat,8192,1,us\n"
             "openmpi,bw,1048576,12000,MB/s\n"
             "mpich,lat,0,0.4,us\n"
             "mpich,lat,8192,0,us\n"
             "mpich,bw,1048576,11500,MB/s\n");
}

BOOST_AUTO_TEST_CASE(json_alone) {
  auto doc = parse_json(sweep_json(alone()));
  BOOST_TEST_REQUIRE(doc.is_ok(), doc.status().to_string());
  const JsonValue& j = *doc;
  BOOST_TEST(j["library"].as_string() == "ftmpi 0.3 (test)");
  BOOST_TEST(j["ranks"].as_u64() == 2u);
  BOOST_TEST(j["rounds"].as_u64() == 3u);
  BOOST_TEST_REQUIRE(j["results"].items().size() == 3u);
  BOOST_TEST(j["results"][0]["kernel"].as_string() == "lat");
  BOOST_TEST(j["results"][0]["bytes"].as_u64() == 0u);
  BOOST_TEST(j["results"][0]["value"].as_number() == 0.2);
  BOOST_TEST(j["results"][0]["unit"].as_string() == "us");
  BOOST_TEST(j["results"][2]["kernel"].as_string() == "bw");
  BOOST_TEST(j["results"][2]["bytes"].as_u64() == 1048576u);
  BOOST_TEST(j["results"][2]["unit"].as_string() == "MB/s");
  for (const JsonValue& r : j["results"].items()) BOOST_TEST(r.find("ratio_to_best_peer") == nullptr);
  BOOST_TEST(j["rails"].is_array());
  BOOST_TEST(j["rails"].items().empty());
  BOOST_TEST(j.find("peers") == nullptr);
  BOOST_TEST(j.find("conditions") == nullptr);
}

BOOST_AUTO_TEST_CASE(json_beside_peers) {
  auto doc = parse_json(sweep_json(beside_peers()));
  BOOST_TEST_REQUIRE(doc.is_ok(), doc.status().to_string());
  const JsonValue& j = *doc;
  BOOST_TEST_REQUIRE(j["results"].items().size() == 3u);
  BOOST_TEST(j["results"][0]["ratio_to_best_peer"].as_number() == 0.2 / 0.15, boost::test_tools::tolerance(1e-12));
  BOOST_TEST(j["results"][2]["ratio_to_best_peer"].as_number() == 10000.0 / 12000.0, boost::test_tools::tolerance(1e-12));
  // Each peer round by round: at 0 B ftmpi's 0.3, 0.1, 0.2 over Open MPI's 0.15, 0.16, 0.14 is 2.0,
  // 0.625 and 1.43 (median 0.2 / 0.14, where the medians' ratio is 0.2 / 0.15); MPICH has one round.
  const JsonValue& by_round = j["results"][0]["ratio_to_peer"];
  BOOST_TEST(by_round["openmpi"]["median"].as_number() == 0.2 / 0.14, boost::test_tools::tolerance(1e-12));
  BOOST_TEST(by_round["openmpi"]["low_quartile"].as_number() == (0.625 + 0.2 / 0.14) / 2, boost::test_tools::tolerance(1e-12));
  BOOST_TEST(by_round["openmpi"]["high_quartile"].as_number() == (2.0 + 0.2 / 0.14) / 2, boost::test_tools::tolerance(1e-12));
  BOOST_TEST(by_round["openmpi"]["rounds"].as_u64() == 3u);
  BOOST_TEST(by_round["mpich"]["median"].as_number() == 0.75, boost::test_tools::tolerance(1e-12));
  BOOST_TEST(by_round["mpich"]["rounds"].as_u64() == 1u);
  // A peer without the figure is left out (MPICH has no 8 KB latency).
  BOOST_TEST(j["results"][1]["ratio_to_peer"].find("mpich") == nullptr);
  BOOST_TEST(j["results"][1]["ratio_to_peer"]["openmpi"]["rounds"].as_u64() == 2u);
  BOOST_TEST_REQUIRE(j["rails"].items().size() == 2u);
  BOOST_TEST(j["rails"][0]["rail"].as_string() == "shm");
  BOOST_TEST(j["rails"][0]["bytes_sent"].as_u64() == 300u);
  BOOST_TEST(j["rails"][0]["retransmits"].as_u64() == 1u);
  BOOST_TEST(j["rails"][1]["timeouts"].as_u64() == 2u);
  BOOST_TEST(j["rails"][1]["checksum_failures"].as_u64() == 3u);
  BOOST_TEST_REQUIRE(j["peers"].members().size() == 2u);
  const JsonValue& openmpi = j["peers"]["openmpi"];
  BOOST_TEST(openmpi["library"].as_string() == "Open MPI v4.1.4");
  BOOST_TEST(openmpi["transport"].as_string() == "tcp lo");
  BOOST_TEST_REQUIRE(openmpi["results"].items().size() == 3u);
  BOOST_TEST(openmpi["results"][0]["kernel"].as_string() == "lat");
  BOOST_TEST(openmpi["results"][0]["value"].as_number() == 0.15);
  BOOST_TEST(openmpi["results"][1]["value"].as_number() == 1.0, boost::test_tools::tolerance(1e-12));
  BOOST_TEST(openmpi["results"][2]["value"].as_number() == 12000.0);
  BOOST_TEST(openmpi["results"][2]["unit"].as_string() == "MB/s");
  const JsonValue& mpich = j["peers"]["mpich"];
  BOOST_TEST(mpich["library"].as_string() == "MPICH 4.0.2");
  BOOST_TEST(mpich["transport"].as_string() == "ucx tcp");
  BOOST_TEST(mpich["results"][1]["value"].as_number() == 0.0);
  BOOST_TEST(mpich["results"][2]["value"].as_number() == 11500.0);
  BOOST_TEST(j.find("ftmpi") == nullptr);
  BOOST_TEST(j["peers"].find("ftmpi") == nullptr);  // ftmpi is the report itself, not a peer
  BOOST_TEST(j["conditions"].as_string() == "3 runs; quiet");
}

BOOST_AUTO_TEST_CASE(markdown_alone_is_a_row_per_size_and_a_column_per_kernel) {
  const std::string md = sweep_markdown(alone(), "ftmpi, 2 ranks");
  BOOST_TEST(md ==
             "ftmpi, 2 ranks\n\n"
             "| size | lat (us) | bw (MB/s) |\n"
             "|---:|---:|---:|\n"
             "| 0 B | 0.200 | - |\n"
             "| 8 KB | 1.250 | - |\n"
             "| 1 MB | - | 10000 |\n");
}

BOOST_AUTO_TEST_CASE(markdown_beside_peers_is_a_table_per_kernel_with_the_ratio) {
  const std::string md = sweep_markdown(beside_peers(), "unused with peers");
  BOOST_TEST(md.find("2 ranks, bound to cores; medians of 3 interleaved rounds\n") == 0u, md);
  BOOST_TEST(md.find("  ftmpi: ftmpi 0.3 (test)\n  openmpi: Open MPI v4.1.4, over tcp lo\n  mpich: MPICH 4.0.2, over ucx tcp\n") != std::string::npos, md);
  SweepReport unsaid = beside_peers();
  unsaid.transports.clear();  // a report made without runs says no transport
  BOOST_TEST(sweep_markdown(unsaid, "").find("  openmpi: Open MPI v4.1.4\n  mpich: MPICH 4.0.2\n") != std::string::npos);
  BOOST_TEST(md.find("\nlat (us, lower is better)\n\n| size | ftmpi | openmpi | mpich | ftmpi / best peer |\n|---:|---:|---:|---:|---:|\n"
                     "| 0 B | 0.200 | 0.150 | 0.400 | 1.333x |\n"
                     "| 8 KB | 1.250 | 1.000 | 0.000 | 1.250x |\n") != std::string::npos,
             md);
  BOOST_TEST(md.find("\nbw (MB/s, higher is better)\n\n| size | ftmpi | openmpi | mpich | ftmpi / best peer |\n|---:|---:|---:|---:|---:|\n"
                     "| 1 MB | 10000 | 12000 | 11500 | 0.833x |\n") != std::string::npos,
             md);
  BOOST_TEST(md.find("\nftmpi's rails (the last run, every rank's counters added):\n  shm: 300 bytes sent (75%)") != std::string::npos, md);
  BOOST_TEST(md.find("\nConditions: 3 runs; quiet\n") != std::string::npos, md);
  SweepReport unbound = beside_peers();
  unbound.bound = false;
  BOOST_TEST(sweep_markdown(unbound, "").find("2 ranks, unbound;") == 0u);
}

BOOST_AUTO_TEST_CASE(traffic_text_gives_each_rail_its_share_and_its_troubles) {
  const std::vector<RailTraffic> rails{{"shm", 300, 1, 0, 0}, {"udp lo 127.0.0.1", 100, 5, 2, 3}};
  BOOST_TEST(traffic_text(rails) ==
             "  shm: 300 bytes sent (75%), 1 retransmits, 0 timeouts, 0 checksum failures\n"
             "  udp lo 127.0.0.1: 100 bytes sent (25%), 5 retransmits, 2 timeouts, 3 checksum failures\n");
  BOOST_TEST(traffic_text({}).empty());
  BOOST_TEST(traffic_text({{"shm", 0, 0, 0, 0}}) == "  shm: 0 bytes sent (0%), 0 retransmits, 0 timeouts, 0 checksum failures\n");
}

BOOST_AUTO_TEST_SUITE_END()

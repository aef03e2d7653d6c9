// `ftbench table` without running it (table.hpp): the rows the suite measures, the ratios to the best peer,
// and the Markdown and JSON a hand-built report turns into (the JSON's names are what scripts read).
#include "ftmpi/bench/table.hpp"

#include <boost/test/unit_test.hpp>
#include <cmath>
#include <string>
#include <vector>

#include "ftmpi/base/json_value.hpp"

using namespace ftmpi::bench;
using ftmpi::base::JsonValue;
using ftmpi::base::parse_json;

namespace {

const std::vector<std::string> kRails{"127.0.0.1", "127.0.0.2"};
const char* const kLost = "a datagram was lost and, without reliability, never resent";

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::size_t start = 0;
  while (start < text.size()) {
    const std::size_t nl = text.find('\n', start);
    lines.push_back(text.substr(start, nl == std::string::npos ? std::string::npos : nl - start));
    if (nl == std::string::npos) break;
    start = nl + 1;
  }
  return lines;
}

TableRow* find_row(TableReport& report, const std::string& path, const std::vector<std::string>& rails, const std::string& checksum) {
  for (TableRow& r : report.rows) {
    if (r.path == path && r.rails == rails && r.checksum == checksum) return &r;
  }
  return nullptr;
}

// A report as run_table makes one on two rails, some rows filled in, one without figures.
TableReport hand_built(bool peers) {
  TableReport report;
  report.library = "ftmpi 0.3 (test)";
  report.rounds = 3;
  report.rows = table_rows(kRails);
  for (TableRow& r : report.rows) r.figures = {0.25, 1.25, 8000};
  find_row(report, "shm", {}, "-")->figures = {0.2, 1.0, 10000};
  find_row(report, "shm", {}, "-")->traffic = {{"shm", 4096, 0, 0, 0}};
  find_row(report, "shm", {}, "crc32c")->figures = {0.3, 1.5, 5000};
  TableRow* lost = find_row(report, "udp", {kRails[0]}, "-");
  lost->figures = {};
  lost->note = kLost;
  TableRow* udp = find_row(report, "udp", {kRails[0]}, "crc32c");
  udp->figures = {20, 40, 1000};
  udp->traffic = {{"udp lo 127.0.0.1", 3000, 3, 1, 0}};
  TableRow* striped = find_row(report, "udp", kRails, "sum32");
  striped->traffic = {{"udp lo 127.0.0.1", 300, 0, 0, 0}, {"udp lo 127.0.0.2", 100, 2, 0, 1}};
  if (peers) {
    report.peer_rows = {{"openmpi", "shm", "vader", {0.15, 0.8, 12000}},
                        {"openmpi", "network", "tcp lo", {10, 30, 2000}},
                        {"mpich", "shm", "ucx", {0.18, 0.7, 9000}},
                        {"mpich", "network", "ucx tcp", {0, 20, 0}}};  // figures it lacks are 0
    report.peer_libraries = {{"openmpi", "Open MPI v4.1.4"}, {"mpich", "MPICH 4.0.2"}};
  }
  report.conditions = "9 runs; nothing much";
  return report;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(table)

BOOST_AUTO_TEST_CASE(the_rows_are_shm_each_rail_and_striped_each_under_four_checksums) {
  const std::vector<TableRow> rows = table_rows(kRails);
  BOOST_TEST_REQUIRE(rows.size() == 16u);
  const std::vector<std::vector<std::string>> sets{{}, {"127.0.0.1"}, {"127.0.0.2"}, kRails};
  const std::vector<std::string> checksums{"-", "crc32c", "sum32", "none"};
  for (std::size_t i = 0; i < rows.size(); ++i) {
    BOOST_TEST_CONTEXT("row " << i) {
      BOOST_TEST(rows[i].path == (i < 4 ? "shm" : "udp"));
      BOOST_TEST((rows[i].rails == sets[i / 4]));
      BOOST_TEST(rows[i].checksum == checksums[i % 4]);
      BOOST_TEST(rows[i].reliability == (i % 4 != 0));
      BOOST_TEST(rows[i].figures.latency_0_us == 0.0);
      BOOST_TEST(rows[i].traffic.empty());
      BOOST_TEST(rows[i].note.empty());
    }
  }
}

BOOST_AUTO_TEST_CASE(one_rail_has_no_striped_rows_and_none_leaves_shared_memory) {
  const std::vector<TableRow> one = table_rows({"10.0.0.1"});
  BOOST_TEST_REQUIRE(one.size() == 8u);
  BOOST_TEST(one[4].path == "udp");
  BOOST_TEST((one[7].rails == std::vector<std::string>{"10.0.0.1"}));
  const std::vector<TableRow> none = table_rows({});
  BOOST_TEST_REQUIRE(none.size() == 4u);
  for (const TableRow& r : none) BOOST_TEST(r.path == "shm");
  BOOST_TEST(table_rows({"a", "b", "c"}).size() == 20u);  // shm, three rails, striped
}

BOOST_AUTO_TEST_CASE(without_reliability_is_the_same_path_on_the_same_rails) {
  TableReport report;
  report.rows = table_rows(kRails);
  for (const TableRow& r : report.rows) {
    const TableRow* off = report.without_reliability(r);
    BOOST_TEST_REQUIRE(off != nullptr);
    BOOST_TEST(off->path == r.path);
    BOOST_TEST((off->rails == r.rails));
    BOOST_TEST(!off->reliability);
    BOOST_TEST(off->checksum == "-");
  }
  // The striped row's "off" is the striped one, not one of its single rails.
  const TableRow* off = report.without_reliability(report.rows[13]);
  BOOST_TEST(off == &report.rows[12]);
  TableReport lacking;
  lacking.rows = {report.rows[5]};  // udp on one rail with crc32c, its "off" row gone
  BOOST_TEST(lacking.without_reliability(lacking.rows[0]) == nullptr);
}

BOOST_AUTO_TEST_CASE(ratio_to_the_best_peer_on_the_same_kind_of_path) {
  const TableReport report = hand_built(true);
  // Shared memory: best latency 0.15 (openmpi), best 8 KB latency 0.7 (mpich), best bandwidth 12000 (openmpi).
  TableRow shm;
  shm.path = "shm";
  shm.figures = {0.3, 1.4, 6000};
  TableFigures r = report.ratio_to_best_peer(shm);
  BOOST_TEST(r.latency_0_us == 2.0, boost::test_tools::tolerance(1e-12));
  BOOST_TEST(r.latency_8k_us == 2.0, boost::test_tools::tolerance(1e-12));
  BOOST_TEST(r.bandwidth_1m_MBps == 0.5, boost::test_tools::tolerance(1e-12));
  // UDP against the peers' network rows: mpich has no 0 B latency and no bandwidth there (0), so openmpi's.
  TableRow udp;
  udp.path = "udp";
  udp.rails = kRails;
  udp.figures = {20, 30, 1000};
  r = report.ratio_to_best_peer(udp);
  BOOST_TEST(r.latency_0_us == 2.0, boost::test_tools::tolerance(1e-12));
  BOOST_TEST(r.latency_8k_us == 1.5, boost::test_tools::tolerance(1e-12));
  BOOST_TEST(r.bandwidth_1m_MBps == 0.5, boost::test_tools::tolerance(1e-12));
  // A row without figures has no ratios.
  TableRow empty;
  empty.path = "udp";
  r = report.ratio_to_best_peer(empty);
  BOOST_TEST(r.latency_0_us == 0.0);
  BOOST_TEST(r.latency_8k_us == 0.0);
  BOOST_TEST(r.bandwidth_1m_MBps == 0.0);
}

BOOST_AUTO_TEST_CASE(no_peer_figure_gives_a_ratio_of_zero) {
  TableRow udp;
  udp.path = "udp";
  udp.figures = {20, 30, 1000};
  const TableReport alone;
  TableFigures r = alone.ratio_to_best_peer(udp);
  BOOST_TEST(r.latency_0_us == 0.0);
  BOOST_TEST(r.latency_8k_us == 0.0);
  BOOST_TEST(r.bandwidth_1m_MBps == 0.0);
  // Peers measured on shared memory only: nothing to hold a UDP row against.
  TableReport shm_only;
  shm_only.peer_rows = {{"openmpi", "shm", "vader", {0.15, 0.8, 12000}}};
  r = shm_only.ratio_to_best_peer(udp);
  BOOST_TEST(r.latency_0_us == 0.0);
  BOOST_TEST(r.bandwidth_1m_MBps == 0.0);
  TableRow shm;
  shm.path = "shm";
  shm.figures = {0.3, 1.6, 6000};
  r = shm_only.ratio_to_best_peer(shm);
  BOOST_TEST(r.latency_0_us == 2.0, boost::test_tools::tolerance(1e-12));
  BOOST_TEST(r.latency_8k_us == 2.0, boost::test_tools::tolerance(1e-12));
  BOOST_TEST(r.bandwidth_1m_MBps == 0.5, boost::test_tools::tolerance(1e-12));
}

BOOST_AUTO_TEST_CASE(markdown_rows_with_costs_of_reliability_shares_and_retransmits) {
  const std::string md = table_markdown(hand_built(false));
  BOOST_TEST(md.find("ftmpi 0.3 (test), 2 ranks on this host, medians of 3 interleaved rounds\n") == 0u, md);
  BOOST_TEST(md.find("| shm | - | off | - | 0.200 | 1.000 | 10000 | - | - | shm 100% | 0 |\n") != std::string::npos, md);
  // Against the row without reliability: 1.5 / 1.0 and 5000 / 10000.
  BOOST_TEST(md.find("| shm | - | on | crc32c | 0.300 | 1.500 | 5000 | 1.500x | 0.500x | - | - |\n") != std::string::npos, md);
  // Its "off" row has no figures: no ratio.
  BOOST_TEST(md.find("| udp | 127.0.0.1 | on | crc32c | 20.0 | 40.0 | 1000 | - | - | 127.0.0.1 100% | 3 (1 timeout) |\n") !=
                 std::string::npos,
             md);
  BOOST_TEST(md.find("| udp | 127.0.0.1,127.0.0.2 | on | sum32 | 0.250 | 1.250 | 8000 | 1.000x | 1.000x | 127.0.0.1 75%, 127.0.0.2 25% | 2 |\n") !=
                 std::string::npos,
             md);
  BOOST_TEST(md.find(std::string("| udp | 127.0.0.1 | off | - | ") + kLost + " |") != std::string::npos, md);
  BOOST_TEST(md.find("best peer") == std::string::npos);
  BOOST_TEST(md.find("\nConditions: 9 runs; nothing much\n") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(every_markdown_table_line_has_as_many_cells_as_its_header) {
  for (bool peers : {false, true}) {
    BOOST_TEST_CONTEXT("peers " << peers) {
      const std::string md = table_markdown(hand_built(peers));
      std::size_t header_pipes = 0;
      int table_lines = 0;
      for (const std::string& line : lines_of(md)) {
        if (line.empty() || line[0] != '|') {
          header_pipes = 0;  // a table ends at a line that is not one of its rows
          continue;
        }
        if (header_pipes == 0) header_pipes = count(line, "|");
        ++table_lines;
        BOOST_TEST(count(line, "|") == header_pipes, line);
      }
      BOOST_TEST(table_lines == (peers ? 2 + 16 + 2 + 4 : 2 + 16));
    }
  }
}

BOOST_AUTO_TEST_CASE(markdown_with_peers_has_their_ratios_rows_and_libraries) {
  const std::string md = table_markdown(hand_built(true));
  BOOST_TEST(md.find("| latency 0 B / best peer | bandwidth 1 MB / best peer |\n") != std::string::npos, md);
  // shm off: 0.2 / 0.15 and 10000 / 12000.
  BOOST_TEST(md.find("| shm | - | off | - | 0.200 | 1.000 | 10000 | - | - | shm 100% | 0 | 1.333x | 0.833x |\n") != std::string::npos, md);
  // udp crc32c on one rail: 20 / 10 and 1000 / 2000 (openmpi; mpich has neither figure).
  BOOST_TEST(md.find("| 127.0.0.1 100% | 3 (1 timeout) | 2.000x | 0.500x |\n") != std::string::npos, md);
  BOOST_TEST(md.find("| openmpi | shm | vader | 0.150 | 0.800 | 12000 |\n") != std::string::npos, md);
  BOOST_TEST(md.find("| mpich | network | ucx tcp | 0.000 | 20.0 | 0.000 |\n") != std::string::npos, md);
  BOOST_TEST(md.find("\nmpich: MPICH 4.0.2\n") != std::string::npos, md);
  BOOST_TEST(md.find("\nopenmpi: Open MPI v4.1.4\n") != std::string::npos, md);
}

BOOST_AUTO_TEST_CASE(json_has_the_stable_names_scripts_read) {
  const TableReport report = hand_built(false);
  auto doc = parse_json(table_json(report));
  BOOST_TEST_REQUIRE(doc.is_ok(), doc.status().to_string());
  const JsonValue& j = *doc;
  BOOST_TEST(j["library"].as_string() == "ftmpi 0.3 (test)");
  BOOST_TEST(j["rounds"].as_u64() == 3u);
  BOOST_TEST(j["conditions"].as_string() == "9 runs; nothing much");
  BOOST_TEST_REQUIRE(j["rows"].items().size() == 16u);
  for (std::size_t i = 0; i < 16; ++i) {
    const JsonValue& row = j["rows"][i];
    const TableRow& want = report.rows[i];
    BOOST_TEST_CONTEXT("row " << i) {
      BOOST_TEST(row["path"].as_string() == want.path);
      BOOST_TEST_REQUIRE(row["rails"].is_array());
      BOOST_TEST_REQUIRE(row["rails"].items().size() == want.rails.size());
      for (std::size_t k = 0; k < want.rails.size(); ++k) BOOST_TEST(row["rails"][k].as_string() == want.rails[k]);
      BOOST_TEST(row["reliability"].as_string() == (want.reliability ? "on" : "off"));
      BOOST_TEST(row["checksum"].as_string() == want.checksum);
      BOOST_TEST_REQUIRE(row["latency_0_us"].is_number());
      BOOST_TEST(row["latency_0_us"].as_number() == want.figures.latency_0_us);
      BOOST_TEST(row["latency_8k_us"].as_number() == want.figures.latency_8k_us);
      BOOST_TEST(row["bandwidth_1m_MBps"].as_number() == want.figures.bandwidth_1m_MBps);
      BOOST_TEST((row.find("note") != nullptr) == !want.note.empty());
      BOOST_TEST(row.find("ratio_to_best_peer") == nullptr);  // no peers
      BOOST_TEST_REQUIRE(row["traffic"].is_array());
      BOOST_TEST(row["traffic"].items().size() == want.traffic.size());
      double shares = 0;
      for (const JsonValue& t : row["traffic"].items()) shares += t["share"].as_number();
      if (!want.traffic.empty()) BOOST_TEST(shares == 1.0, boost::test_tools::tolerance(1e-9));
    }
  }
  const JsonValue& lost = j["rows"][4];
  BOOST_TEST(lost["note"].as_string() == kLost);
  const JsonValue& striped = j["rows"][14];
  BOOST_TEST_REQUIRE(striped["traffic"].items().size() == 2u);
  BOOST_TEST(striped["traffic"][0]["rail"].as_string() == "udp lo 127.0.0.1");
  BOOST_TEST(striped["traffic"][0]["bytes_sent"].as_u64() == 300u);
  BOOST_TEST(striped["traffic"][0]["share"].as_number() == 0.75, boost::test_tools::tolerance(1e-12));
  BOOST_TEST(striped["traffic"][1]["share"].as_number() == 0.25, boost::test_tools::tolerance(1e-12));
  BOOST_TEST(striped["traffic"][1]["retransmits"].as_u64() == 2u);
  BOOST_TEST(striped["traffic"][1]["timeouts"].as_u64() == 0u);
  BOOST_TEST(striped["traffic"][1]["checksum_failures"].as_u64() == 1u);
  BOOST_TEST(j["rows"][5]["traffic"][0]["timeouts"].as_u64() == 1u);
  BOOST_TEST(j["peers"].is_object());
  BOOST_TEST(j["peers"].members().empty());
}

BOOST_AUTO_TEST_CASE(json_with_peers_has_their_rows_and_each_row_its_ratios) {
  const TableReport report = hand_built(true);
  auto doc = parse_json(table_json(report));
  BOOST_TEST_REQUIRE(doc.is_ok(), doc.status().to_string());
  const JsonValue& j = *doc;
  for (std::size_t i = 0; i < 16; ++i) {
    const JsonValue& row = j["rows"][i];
    BOOST_TEST_CONTEXT("row " << i) {
      // A row without figures (its note says why) has nothing to compare.
      BOOST_TEST((row.find("ratio_to_best_peer") != nullptr) == report.rows[i].note.empty());
    }
  }
  const JsonValue& shm_ratio = j["rows"][0]["ratio_to_best_peer"];
  BOOST_TEST(shm_ratio["latency_0_us"].as_number() == 0.2 / 0.15, boost::test_tools::tolerance(1e-12));
  BOOST_TEST(shm_ratio["latency_8k_us"].as_number() == 1.0 / 0.7, boost::test_tools::tolerance(1e-12));
  BOOST_TEST(shm_ratio["bandwidth_1m_MBps"].as_number() == 10000.0 / 12000.0, boost::test_tools::tolerance(1e-12));
  const JsonValue& udp_ratio = j["rows"][5]["ratio_to_best_peer"];
  BOOST_TEST(udp_ratio["latency_0_us"].as_number() == 2.0, boost::test_tools::tolerance(1e-12));
  BOOST_TEST(udp_ratio["latency_8k_us"].as_number() == 2.0, boost::test_tools::tolerance(1e-12));
  BOOST_TEST(udp_ratio["bandwidth_1m_MBps"].as_number() == 0.5, boost::test_tools::tolerance(1e-12));

  const JsonValue& peers = j["peers"];
  BOOST_TEST_REQUIRE(peers.members().size() == 2u);
  const JsonValue& openmpi = peers["openmpi"];
  BOOST_TEST(openmpi["library"].as_string() == "Open MPI v4.1.4");
  BOOST_TEST_REQUIRE(openmpi["rows"].items().size() == 2u);
  BOOST_TEST(openmpi["rows"][0]["path"].as_string() == "shm");
  BOOST_TEST(openmpi["rows"][0]["transport"].as_string() == "vader");
  BOOST_TEST(openmpi["rows"][0]["latency_0_us"].as_number() == 0.15);
  BOOST_TEST(openmpi["rows"][0]["latency_8k_us"].as_number() == 0.8);
  BOOST_TEST(openmpi["rows"][0]["bandwidth_1m_MBps"].as_number() == 12000.0);
  BOOST_TEST(openmpi["rows"][1]["path"].as_string() == "network");
  BOOST_TEST(openmpi["rows"][1]["transport"].as_string() == "tcp lo");
  const JsonValue& mpich = peers["mpich"];
  BOOST_TEST(mpich["library"].as_string() == "MPICH 4.0.2");
  BOOST_TEST_REQUIRE(mpich["rows"].items().size() == 2u);
  BOOST_TEST(mpich["rows"][1]["transport"].as_string() == "ucx tcp");
  BOOST_TEST(mpich["rows"][1]["latency_8k_us"].as_number() == 20.0);
}

BOOST_AUTO_TEST_CASE(text_in_the_report_is_escaped_in_json) {
  TableReport report;
  report.library = "ftmpi \"quoted\"\nand a newline";
  report.rows = table_rows({});
  report.rows[0].note = "tab\there";
  auto doc = parse_json(table_json(report));
  BOOST_TEST_REQUIRE(doc.is_ok(), doc.status().to_string());
  BOOST_TEST((*doc)["library"].as_string() == report.library);
  BOOST_TEST((*doc)["rows"][0]["note"].as_string() == "tab\there");
  BOOST_TEST((*doc).find("conditions") == nullptr);
}

BOOST_AUTO_TEST_SUITE_END()

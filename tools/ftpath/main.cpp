// ftpath: looks at and steers the rails of running ftmpi jobs (docs/ftpath.md). A thin main: the control
// plane is rte/control.hpp, the interfaces path/udp.hpp, the parameters params/catalogue.hpp.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "ftmpi/base/json.hpp"
#include "ftmpi/base/json_value.hpp"
#include "ftmpi/base/params.hpp"
#include "ftmpi/base/text_table.hpp"
#include "ftmpi/params/catalogue.hpp"
#include "ftmpi/path/udp.hpp"
#include "ftmpi/rte/control.hpp"
#include "ftmpi/rte/job.hpp"

extern char** environ;

namespace {

namespace base = ftmpi::base;
namespace rte = ftmpi::rte;
namespace path = ftmpi::path;
using base::JsonValue;
using base::JsonWriter;

// Exit statuses, each one cause (docs/ftpath.md).
constexpr int kExitError = 1;        // anything else (the runtime directory unreadable, ...)
constexpr int kExitUsage = 2;        // the command line is wrong
constexpr int kExitNoJob = 3;        // no such job, or it has ended
constexpr int kExitRefused = 4;      // a rank refused the request (unknown rail, the last working rail)
constexpr int kExitNoAnswer = 5;     // some ranks did not answer in time (or were not connected)

struct Failure {
  int status;
  std::string message;
};

[[noreturn]] void fail(int status, const std::string& message) { throw Failure{status, message}; }

int status_for(const base::Status& s) {
  switch (s.code()) {
    case base::Errc::not_found:
    case base::Errc::peer_unreachable: return kExitNoJob;
    case base::Errc::invalid_argument: return kExitUsage;
    default: return kExitError;
  }
}

std::string local_time(std::int64_t unix_seconds) {
  const std::time_t t = static_cast<std::time_t>(unix_seconds);
  std::tm tm{};
  localtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S", &tm);
  return buf;
}

using Table = base::TextTable;
using base::human_bytes;

void write(JsonWriter& w, const JsonValue& v) { base::write_json(w, v); }

// ---------------------------------------------------------------------------------------------------
// Talking to a job

using Answer = rte::ControlAnswer;

Answer ask(const std::string& which, const rte::ControlRequest& request) {
  auto job = rte::find_job(which);
  if (!job) fail(job.code() == base::Errc::io_error ? kExitError : kExitNoJob, job.status().message());
  auto answer = rte::ask_job(*job, request);
  if (!answer) fail(status_for(answer.status()), answer.status().message());
  return std::move(*answer);
}

// One line per rank that did not answer or refused, on stderr; the exit status that says so.
int report_problems(const Answer& a) {
  for (const JsonValue& m : a.reply["missing"].items()) {
    std::cerr << "ftpath: rank " << m["rank"].as_u64() << " (" << m["host"].as_string() << ") "
              << m["why"].as_string() << "\n";
  }
  for (const JsonValue& rank : a.reply["ranks"].items()) {
    if (!rank["ok"].as_bool()) {
      std::cerr << "ftpath: rank " << rank["rank"].as_u64() << ": " << rank["error"].as_string() << "\n";
    }
  }
  if (a.refused) return kExitRefused;
  if (a.missing) return kExitNoAnswer;
  return 0;
}

// ---------------------------------------------------------------------------------------------------
// Commands

int list(bool json) {
  std::size_t stale = 0;
  auto jobs = rte::list_jobs(true, &stale);
  if (!jobs) fail(kExitError, jobs.status().message());
  if (json) {
    JsonWriter w;
    w.begin_object().key("jobs").begin_array();
    for (const rte::JobRecord& j : *jobs) {
      w.begin_object().field("id", j.id).field("pid", std::int64_t{j.pid}).field("ranks", j.ranks);
      w.key("hosts").begin_array();
      for (const std::string& h : j.hosts) w.value(h);
      w.end_array().field("started", j.started).field("command", j.command).end_object();
    }
    w.end_array().field("stale_removed", std::uint64_t{stale}).end_object();
    std::cout << w.text() << "\n";
    return 0;
  }
  if (jobs->empty()) {
    std::cout << "no running ftmpi job of yours" << (stale ? " (" + std::to_string(stale) + " stale record(s) removed)" : "")
              << "\n";
    return 0;
  }
  Table t({"JOB", "PID", "RANKS", "HOSTS", "STARTED", "COMMAND"});
  for (const rte::JobRecord& j : *jobs) {
    std::string hosts;
    for (const std::string& h : j.hosts) hosts += (hosts.empty() ? "" : ",") + h;
    t.add({j.id, std::to_string(j.pid), std::to_string(j.ranks), hosts, local_time(j.started), j.command});
  }
  std::cout << t.text();
  if (stale != 0) std::cout << "(" << stale << " stale record(s) of jobs whose ftrun is gone removed)\n";
  return 0;
}

std::string rtt_text(const JsonValue& rail) {
  const std::uint64_t us = rail["rtt_us"].as_u64();
  return us == 0 ? "-" : std::to_string(us);
}

int show(const std::string& which, const rte::ControlRequest& request, bool json) {
  const Answer a = ask(which, request);
  if (json) {
    JsonWriter w;
    w.begin_object().field("job", a.job.id).key("ranks").begin_array();
    for (const JsonValue& rank : a.reply["ranks"].items()) {
      w.begin_object().field("rank", rank["rank"].as_u64()).field("host", rank["host"].as_string());
      if (!rank["ok"].as_bool()) {
        w.field("error", rank["error"].as_string()).end_object();
        continue;
      }
      const JsonValue& reply = rank["reply"];
      w.key("warnings");
      write(w, reply["warnings"]);
      w.key("totals");
      write(w, reply["totals"]);
      w.key("rails");
      write(w, reply["rails"]);
      w.key("paths");
      write(w, reply["paths"]);
      w.end_object();
    }
    w.end_array().key("missing");
    write(w, a.reply["missing"]);
    w.end_object();
    std::cout << w.text() << "\n";
    return report_problems(a);
  }
  std::cout << "job " << a.job.id << ": " << a.job.ranks << " ranks, " << a.job.command << "\n";
  Table t({"RANK", "HOST", "PEER", "RAIL", "NAME", "STATE", "RTT_US", "SENT", "RECEIVED", "FRAMES_OUT", "FRAMES_IN",
           "RETRANSMITS", "CSUM_FAIL", "CHANGES"});
  std::vector<std::string> changes;
  for (const JsonValue& rank : a.reply["ranks"].items()) {
    if (!rank["ok"].as_bool()) continue;
    const std::string r = std::to_string(rank["rank"].as_u64());
    for (const JsonValue& rail : rank["reply"]["rails"].items()) {
      t.add({r, rank["host"].as_string(), std::to_string(rail["peer"].as_u64()), std::to_string(rail["index"].as_u64()),
             rail["name"].as_string(), rail["state"].as_string(), rtt_text(rail),
             human_bytes(rail["bytes_sent"].as_u64()), human_bytes(rail["bytes_received"].as_u64()),
             std::to_string(rail["frames_sent"].as_u64()), std::to_string(rail["frames_received"].as_u64()),
             std::to_string(rail["retransmits"].as_u64()), std::to_string(rail["checksum_failures"].as_u64()),
             std::to_string(rail["state_changes"].as_u64())});
      const auto& recent = rail["changes"].items();
      const std::size_t from = recent.size() > 3 ? recent.size() - 3 : 0;
      for (std::size_t i = from; i < recent.size(); ++i) {
        changes.push_back("  rank " + r + " rail " + std::to_string(rail["index"].as_u64()) + " to rank " +
                          std::to_string(rail["peer"].as_u64()) + ": " + recent[i]["at"].as_string() + " " +
                          recent[i]["state"].as_string() + " (" + recent[i]["reason"].as_string() + ")");
      }
    }
  }
  std::cout << t.text();
  // Integrity switched off: the same words from every rank, said once with the ranks that say them.
  std::map<std::string, std::string> warnings;
  for (const JsonValue& rank : a.reply["ranks"].items()) {
    if (!rank["ok"].as_bool()) continue;
    for (const JsonValue& w : rank["reply"]["warnings"].items()) {
      std::string& ranks = warnings[w.as_string()];
      ranks += (ranks.empty() ? "" : ",") + std::to_string(rank["rank"].as_u64());
    }
  }
  for (const auto& [text, ranks] : warnings) std::cout << "WARNING (ranks " << ranks << "): " << text << "\n";
  if (!changes.empty()) {
    std::cout << "recent state changes (UTC):\n";
    for (const std::string& c : changes) std::cout << c << "\n";
  }
  return report_problems(a);
}

int watch(const std::string& which, rte::ControlRequest request, std::chrono::milliseconds interval,
          std::optional<long> count) {
  const bool terminal = ::isatty(STDOUT_FILENO) != 0;
  std::map<std::string, std::pair<std::uint64_t, std::uint64_t>> last;  // rail key -> bytes sent, received
  auto last_time = std::chrono::steady_clock::now();
  int status = 0;
  for (long round = 0; !count || round < *count; ++round) {
    if (round > 0) std::this_thread::sleep_for(interval);
    const Answer a = ask(which, request);
    const auto now = std::chrono::steady_clock::now();
    const double seconds = std::chrono::duration<double>(now - last_time).count();
    last_time = now;
    Table t({"RANK", "PEER", "RAIL", "NAME", "STATE", "RTT_US", "TX_MB/S", "RX_MB/S", "RETRANSMITS"});
    for (const JsonValue& rank : a.reply["ranks"].items()) {
      if (!rank["ok"].as_bool()) continue;
      for (const JsonValue& rail : rank["reply"]["rails"].items()) {
        const std::string key = std::to_string(rank["rank"].as_u64()) + "/" + std::to_string(rail["peer"].as_u64()) +
                                "/" + std::to_string(rail["index"].as_u64());
        const std::uint64_t sent = rail["bytes_sent"].as_u64();
        const std::uint64_t received = rail["bytes_received"].as_u64();
        std::string tx = "-", rx = "-";
        if (auto it = last.find(key); it != last.end() && seconds > 0) {
          char buf[32];
          std::snprintf(buf, sizeof buf, "%.1f", static_cast<double>(sent - it->second.first) / seconds / 1e6);
          tx = buf;
          std::snprintf(buf, sizeof buf, "%.1f", static_cast<double>(received - it->second.second) / seconds / 1e6);
          rx = buf;
        }
        last[key] = {sent, received};
        t.add({std::to_string(rank["rank"].as_u64()), std::to_string(rail["peer"].as_u64()),
               std::to_string(rail["index"].as_u64()), rail["name"].as_string(), rail["state"].as_string(),
               rtt_text(rail), tx, rx, std::to_string(rail["retransmits"].as_u64())});
      }
    }
    if (terminal) std::cout << "\x1b[H\x1b[2J";  // like top: the table in place
    std::cout << "job " << a.job.id << " at " << local_time(static_cast<std::int64_t>(std::time(nullptr))) << "\n"
              << t.text();
    if (!terminal) std::cout << "\n";
    std::cout.flush();
    status = report_problems(a);
  }
  return status;
}

int set_rail(const std::string& which, const rte::ControlRequest& request, bool json) {
  const Answer a = ask(which, request);
  if (json) {
    std::cout << [&] {
      JsonWriter w;
      write(w, a.reply);
      return std::move(w).text();
    }() << "\n";
    return report_problems(a);
  }
  for (const JsonValue& rank : a.reply["ranks"].items()) {
    if (!rank["ok"].as_bool()) continue;
    const JsonValue& reply = rank["reply"];
    const std::string rail = "rail " + std::to_string(reply["index"].as_u64()) + " (" + reply["name"].as_string() + ")";
    for (const JsonValue& c : reply["changed"].items()) {
      std::cout << "rank " << rank["rank"].as_u64() << ": " << rail << " to rank " << c["peer"].as_u64() << " is "
                << c["state"].as_string() << (request.op == rte::ControlOp::enable ? " (probing; in service once it answers)" : "")
                << "\n";
    }
    for (const JsonValue& c : reply["unchanged"].items()) {
      std::cout << "rank " << rank["rank"].as_u64() << ": " << rail << " to rank " << c["peer"].as_u64()
                << " was already " << c["state"].as_string() << "\n";
    }
  }
  return report_problems(a);
}

// NUMA node of a network interface as the kernel tells it (what hwloc reads too); empty: unknown.
std::string numa_node(const std::string& interface) {
  std::ifstream in("/sys/class/net/" + interface + "/device/numa_node");
  int node = -1;
  if (!(in >> node) || node < 0) return "";
  return std::to_string(node);
}

int rails(bool json) {
  auto interfaces = path::local_interfaces();
  if (!interfaces) fail(kExitError, interfaces.status().message());
  // What a job started here with the default path.rails would use.
  std::vector<std::string> used;
  if (auto chosen = path::resolve_rails("")) {
    for (const path::RailAddress& r : *chosen) used.push_back(r.interface);
  }
  JsonWriter w;
  w.begin_object().key("interfaces").begin_array();
  Table t({"INTERFACE", "ADDRESSES", "MTU", "LINK", "NUMA", "DEFAULT_RAIL"});
  for (const path::LocalInterface& i : *interfaces) {
    std::string addresses;
    for (std::uint32_t a : i.ipv4) addresses += (addresses.empty() ? "" : ",") + path::format_ipv4(a);
    const std::string link = !i.up ? "down" : i.running ? "up" : "no-carrier";
    const bool is_default = std::find(used.begin(), used.end(), i.name) != used.end();
    const std::string numa = numa_node(i.name);
    t.add({i.name, addresses.empty() ? "-" : addresses, std::to_string(i.mtu), link, numa.empty() ? "-" : numa,
           is_default ? "yes" : "no"});
    w.begin_object().field("name", i.name).key("addresses").begin_array();
    for (std::uint32_t a : i.ipv4) w.value(path::format_ipv4(a));
    w.end_array().field("mtu", i.mtu).field("link", link).field("loopback", i.loopback);
    if (numa.empty()) {
      w.key("numa_node").null();
    } else {
      w.field("numa_node", std::stoi(numa));
    }
    w.field("default_rail", is_default).end_object();
  }
  w.end_array().end_object();
  std::cout << (json ? w.text() + "\n" : t.text());
  return 0;
}

int params(bool json) {
  base::ParamSet set;
  for (auto table : ftmpi::params::all_param_tables()) {
    if (base::Status s = set.add_table(table); !s) fail(kExitError, s.message());
  }
  if (base::Status s = set.load_environment(environ, rte::job_environment_names()); !s) fail(kExitUsage, s.message());
  JsonWriter w;
  w.begin_object().key("params").begin_array();
  Table t({"NAME", "TYPE", "VALUE", "DEFAULT", "SCOPE", "LEVEL", "HELP"});
  for (auto table : ftmpi::params::all_param_tables()) {
    for (const base::ParamRow& row : table) {
      const std::string value = set.get_string(row);
      t.add({std::string(row.name), std::string(base::to_string(row.type)), value, std::string(row.default_value),
             std::string(base::to_string(row.scope)), std::string(base::to_string(row.level)), std::string(row.help)});
      w.begin_object()
          .field("name", row.name)
          .field("type", base::to_string(row.type))
          .field("value", value)
          .field("default", row.default_value)
          .field("choices", row.choices)
          .field("scope", base::to_string(row.scope))
          .field("level", base::to_string(row.level))
          .field("help", row.help)
          .end_object();
    }
  }
  w.end_array().end_object();
  std::cout << (json ? w.text() + "\n" : t.text());
  return 0;
}

constexpr const char* kFooter = R"(Exit status:
  0  done
  1  an error of ftpath's own (it says which)
  2  the command line is wrong
  3  no such job (or more than one and none named), or the job has ended
  4  a rank refused the request: an unknown rail, or a peer's last working rail
  5  some ranks did not answer in time (computing without MPI calls, or stuck), or were not connected

JOB is a job id (or a unique prefix, as ftpath list prints it); without it, the user's only running job.
RAIL is the rail's index or its name as ftrun was given it (an interface such as eth1, or an address).
See docs/ftpath.md.)";

int run(int argc, char** argv) {
  CLI::App app("Looks at and steers the rails of running ftmpi jobs.", "ftpath");
  app.footer(kFooter);
  app.set_version_flag("--version", std::string("ftpath (ftmpi) ") + FTMPI_VERSION);
  app.require_subcommand(1);
  bool json = false;
  std::vector<std::string> words;
  std::string ranks, peers;
  double timeout_s = std::chrono::duration<double>(rte::kControlDefaultTimeout).count();
  double interval_s = 1;
  std::optional<long> count;

  auto* list_cmd = app.add_subcommand("list", "This user's running jobs");
  list_cmd->add_flag("--json", json, "JSON instead of a table");
  auto* show_cmd = app.add_subcommand("show", "Per rank, peer and rail: state, round trip, traffic, faults");
  show_cmd->add_option("JOB", words, "Job id or prefix (default: the only job)")->expected(0, 1);
  show_cmd->add_flag("--json", json, "JSON instead of a table");
  show_cmd->add_option("--rank", ranks, "Only these ranks (\"0,2-3\")")->type_name("LIST");
  show_cmd->add_option("--timeout", timeout_s, "Seconds to wait for the ranks (default 2)")->type_name("S");
  auto* watch_cmd = app.add_subcommand("watch", "show's rails refreshed, with throughput since the last refresh");
  watch_cmd->add_option("JOB", words, "Job id or prefix (default: the only job)")->expected(0, 1);
  watch_cmd->add_option("--interval", interval_s, "Seconds between refreshes (default 1)")->type_name("S");
  watch_cmd->add_option("--count", count, "Stop after N refreshes")->type_name("N");
  watch_cmd->add_option("--rank", ranks, "Only these ranks (\"0,2-3\")")->type_name("LIST");
  watch_cmd->add_option("--timeout", timeout_s, "Seconds to wait for the ranks (default 2)")->type_name("S");
  auto* disable_cmd = app.add_subcommand("disable", "Stop using a rail; its traffic moves to the others at once");
  auto* enable_cmd = app.add_subcommand("enable", "Probe a disabled rail and use it again once it answers");
  for (auto* cmd : {disable_cmd, enable_cmd}) {
    cmd->add_option("WORDS", words, "[JOB] RAIL")->expected(1, 2)->required();
    cmd->add_option("--rank", ranks, "Only on these ranks (\"0,2-3\"; default: every rank)")->type_name("LIST");
    cmd->add_option("--peer", peers, "Only toward these peers (default: every peer)")->type_name("LIST");
    cmd->add_option("--timeout", timeout_s, "Seconds to wait for the ranks (default 2)")->type_name("S");
    cmd->add_flag("--json", json, "ftrun's answer as JSON");
  }
  auto* rails_cmd = app.add_subcommand("rails", "This host's interfaces and the rails a job here would use");
  rails_cmd->add_flag("--json", json, "JSON instead of a table");
  auto* params_cmd = app.add_subcommand("params", "Every runtime parameter: value, default, help");
  params_cmd->add_flag("--json", json, "JSON instead of a table");

  if (argc > 1 && argv[1][0] != '-') {
    const std::string command = argv[1];
    const char* known[] = {"list", "show", "watch", "disable", "enable", "rails", "params"};
    if (std::find(std::begin(known), std::end(known), command) == std::end(known)) {
      fail(kExitUsage, "unknown command '" + command + "' (commands: list, show, watch, disable, enable, rails, params)");
    }
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    std::cout << app.help();
    return 0;
  } catch (const CLI::CallForAllHelp&) {
    std::cout << app.help("", CLI::AppFormatMode::All);
    return 0;
  } catch (const CLI::CallForVersion&) {
    std::cout << app.version() << "\n";
    return 0;
  } catch (const CLI::ParseError& e) {
    fail(kExitUsage, e.what());
  }

  rte::ControlRequest request;
  if (!(timeout_s > 0) || timeout_s > std::chrono::duration<double>(rte::kControlMaxTimeout).count()) {
    fail(kExitUsage, "--timeout must be above 0 and at most 60 seconds");
  }
  request.timeout = std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::duration<double>(timeout_s));
  auto rank_list = [](const std::string& text, const char* flag) {
    if (text.empty()) return std::vector<std::uint32_t>{};
    auto list = rte::parse_rank_list(text);
    if (!list) fail(kExitUsage, std::string(flag) + " " + list.status().message());
    return *list;
  };
  request.ranks = rank_list(ranks, "--rank");
  request.peers = rank_list(peers, "--peer");
  const std::string job = words.size() == 2 || (words.size() == 1 && (app.got_subcommand(show_cmd) || app.got_subcommand(watch_cmd)))
                              ? words.front()
                              : "";

  if (app.got_subcommand(list_cmd)) return list(json);
  if (app.got_subcommand(rails_cmd)) return rails(json);
  if (app.got_subcommand(params_cmd)) return params(json);
  if (app.got_subcommand(show_cmd)) return show(job, request, json);
  if (app.got_subcommand(watch_cmd)) {
    if (!(interval_s > 0)) fail(kExitUsage, "--interval must be above 0");
    if (count && *count <= 0) fail(kExitUsage, "--count must be at least 1");
    return watch(job, request, std::chrono::milliseconds(static_cast<long>(interval_s * 1000)), count);
  }
  request.op = app.got_subcommand(disable_cmd) ? rte::ControlOp::disable : rte::ControlOp::enable;
  request.rail = words.back();
  // The same checks ftrun makes, so that a bad rail name is a usage error here.
  if (auto checked = rte::parse_control_request(rte::to_string(request)); !checked) {
    fail(kExitUsage, checked.status().message());
  }
  return set_rail(job, request, json);
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const Failure& f) {
    std::cerr << "ftpath: " << (f.status == kExitUsage ? "error: " : "") << f.message << "\n";
    if (f.status == kExitUsage) std::cerr << "Run with --help for more information.\n";
    return f.status;
  } catch (const std::exception& e) {
    std::cerr << "ftpath: " << e.what() << "\n";
    return kExitError;
  }
}

#include "ftmpi/bench/table.hpp"

#include <unistd.h>

#include <algorithm>
#include <cmath>

#include "ftmpi/base/json.hpp"
#include "ftmpi/bench/disturbance.hpp"
#include "ftmpi/bench/job.hpp"
#include "ftmpi/bench/plot.hpp"

namespace ftmpi::bench {

namespace {

using base::Errc;
using base::Status;

std::string joined(const std::vector<std::string>& items, const char* by = ",") {
  std::string out;
  for (const std::string& i : items) out += (out.empty() ? "" : by) + i;
  return out;
}

// The three figures of the table from one job's results.
TableFigures figures_of(const std::vector<Result>& results) {
  TableFigures f;
  for (const Result& r : results) {
    if (r.kernel == "lat" && r.bytes == 0) f.latency_0_us = r.value;
    if (r.kernel == "lat" && r.bytes == 8192) f.latency_8k_us = r.value;
    if (r.kernel == "bw" && r.bytes == (1u << 20)) f.bandwidth_1m_MBps = r.value;
  }
  return f;
}

TableFigures median_figures(const std::vector<TableFigures>& rounds) {
  std::vector<double> a, b, c;
  for (const TableFigures& f : rounds) {
    a.push_back(f.latency_0_us);
    b.push_back(f.latency_8k_us);
    c.push_back(f.bandwidth_1m_MBps);
  }
  return {median(a), median(b), median(c)};
}

std::string row_label(const TableRow& row) {
  return row.path + (row.rails.empty() ? "" : " " + joined(row.rails)) +
         (row.reliability ? ", reliability on, " + row.checksum : ", reliability off");
}

// "127.0.0.1 51%, 127.0.0.2 49%": each rail's share of the bytes sent (its address, or "shm").
std::string shares_text(const std::vector<RailTraffic>& traffic) {
  std::uint64_t total = 0;
  for (const RailTraffic& t : traffic) total += t.bytes_sent;
  std::string out;
  for (const RailTraffic& t : traffic) {
    const std::string name = t.name.substr(t.name.find_last_of(' ') + 1);
    const double share = total > 0 ? 100.0 * static_cast<double>(t.bytes_sent) / static_cast<double>(total) : 0;
    out += (out.empty() ? "" : ", ") + name + " " + std::to_string(static_cast<int>(std::lround(share))) + "%";
  }
  return out.empty() ? "-" : out;
}

std::string retransmits_text(const std::vector<RailTraffic>& traffic) {
  std::uint64_t retransmits = 0, timeouts = 0;
  for (const RailTraffic& t : traffic) {
    retransmits += t.retransmits;
    timeouts += t.timeouts;
  }
  if (traffic.empty()) return "-";
  return std::to_string(retransmits) +
         (timeouts > 0 ? " (" + std::to_string(timeouts) + (timeouts == 1 ? " timeout)" : " timeouts)") : "");
}

std::string ratio_text(double r) { return r > 0 ? figure_text(r) + "x" : "-"; }

}  // namespace

std::vector<TableRow> table_rows(const std::vector<std::string>& rails, bool shared_memory) {
  std::vector<TableRow> rows;
  auto add = [&](const std::string& path, const std::vector<std::string>& set) {
    for (const char* checksum : {"-", "crc32c", "sum32", "none"}) {
      TableRow row;
      row.path = path;
      row.rails = set;
      row.checksum = checksum;
      row.reliability = row.checksum != "-";
      rows.push_back(row);
    }
  };
  if (shared_memory) add("shm", {});
  for (const std::string& r : rails) add("udp", {r});
  if (rails.size() > 1) add("udp", rails);
  return rows;
}

const TableRow* TableReport::without_reliability(const TableRow& row) const {
  for (const TableRow& r : rows) {
    if (r.path == row.path && r.rails == row.rails && !r.reliability) return &r;
  }
  return nullptr;
}

TableFigures TableReport::ratio_to_best_peer(const TableRow& row) const {
  const std::string kind = row.path == "shm" ? "shm" : "network";
  TableFigures best;
  for (const PeerRow& p : peer_rows) {
    if (p.path != kind) continue;
    auto lower = [](double& b, double v) { if (v > 0 && (b == 0 || v < b)) b = v; };
    lower(best.latency_0_us, p.figures.latency_0_us);
    lower(best.latency_8k_us, p.figures.latency_8k_us);
    best.bandwidth_1m_MBps = std::max(best.bandwidth_1m_MBps, p.figures.bandwidth_1m_MBps);
  }
  auto over = [](double mine, double theirs) { return mine > 0 && theirs > 0 ? mine / theirs : 0.0; };
  return {over(row.figures.latency_0_us, best.latency_0_us), over(row.figures.latency_8k_us, best.latency_8k_us),
          over(row.figures.bandwidth_1m_MBps, best.bandwidth_1m_MBps)};
}

base::Result<TableReport> run_table(const TableOptions& options, const TableProgress& progress) {
  if (!options.hosts.empty() && !options.peers.empty()) {
    return Status(Errc::invalid_argument, "--against measures the peers on this host only: not with --host");
  }
  TableReport report;
  report.rounds = options.rounds;
  report.hosts = options.hosts;
  report.rows = table_rows(options.rails, options.hosts.empty());
  KernelArgs kernels;
  kernels.kernels = "lat,bw";
  kernels.sizes = "0,8k,1m";
  kernels.reps = options.reps;
  kernels.scale = options.scale;
  kernels.max_time = options.max_time;
  // Two ranks, bound to cores when there are two: ftmpi and every peer alike. Across hosts ftrun binds
  // nothing (it binds only the ranks of its own host).
  const bool bind = ::sysconf(_SC_NPROCESSORS_ONLN) >= 2 && options.hosts.empty();
  std::vector<std::string> binaries;
  for (const PeerMpi& p : options.peers) {
    auto built = build_kernels(p);
    if (!built) return built.status();
    binaries.push_back(*built);
  }
  struct PeerPlan {
    std::size_t peer;
    PeerTransport transport;
  };
  std::vector<PeerPlan> plans;
  for (std::size_t i = 0; i < options.peers.size(); ++i) {
    for (PeerTransport t : {PeerTransport::shared_memory, PeerTransport::network}) plans.push_back({i, t});
  }
  // The curves: one per path and rail set, and one per peer plan.
  std::vector<const TableRow*> curve_rows;
  if (!options.curve_sizes.empty()) {
    for (const TableRow& r : report.rows) {
      if (std::none_of(curve_rows.begin(), curve_rows.end(), [&](const TableRow* c) { return c->path == r.path && c->rails == r.rails; })) {
        curve_rows.push_back(&r);
      }
    }
  }
  const std::size_t curves = options.curve_sizes.empty() ? 0 : curve_rows.size() + plans.size();
  if (progress.start) progress.start(options.rounds * static_cast<int>(report.rows.size() + plans.size()) + static_cast<int>(curves));
  DisturbanceWatch watch(options.repeat_disturbed ? std::function<double()>(cacheline_ns) : std::function<double()>{});
  auto measure = [&](const std::string& label, const std::function<bool()>& run) {
    if (progress.begin) progress.begin(label);
    bool ok = false;
    if (options.repeat_disturbed) {
      ok = watch.measure(2, run, [&](const std::string& why) { if (progress.say) progress.say(label + ": " + why); });
    } else {
      ok = run();
    }
    if (progress.end) progress.end();
    return ok;
  };
  // A job of the suite on `path` and `rails`, as every row and curve runs it; reliability as the path
  // runs by default unless the caller adds its parameters.
  auto job_for = [&](const std::string& path, const std::vector<std::string>& rails) {
    JobSpec job;
    job.paths = path;
    job.rails = joined(rails);
    if (options.hosts.empty()) job.bind_to = bind ? "core" : "none";
    job.hosts = options.hosts;
    job.launch_agent = options.launch_agent;
    job.params = options.params;
    return job;
  };
  // Plan `k`'s peer job with these kernels, `suffix` after its name on the progress line; the
  // transport it ran on goes to `transport`.
  auto measure_peer = [&](std::size_t k, const KernelArgs& args, const std::string& suffix, RunOutcome& outcome,
                          std::string& transport) {
    const PeerMpi& peer = options.peers[plans[k].peer];
    const PeerLaunch launch = peer_launch(peer, 2, bind, plans[k].transport, binaries[plans[k].peer]);
    transport = launch.transport;
    measure(peer.name + " " + launch.transport + suffix, [&] {
      outcome = run_peer(launch, args);
      return outcome.ok();
    });
    return outcome.ok() ? Status{} : outcome.failure(peer.launcher + " (" + peer.name + " " + launch.transport + suffix + ")");
  };
  std::vector<std::vector<TableFigures>> row_rounds(report.rows.size()), plan_rounds(plans.size());
  std::vector<std::string> plan_transport(plans.size());
  for (int round = 0; round < options.rounds; ++round) {
    const std::string of_round = options.rounds > 1 ? " (round " + std::to_string(round + 1) + " of " + std::to_string(options.rounds) + ")" : "";
    for (std::size_t i = 0; i < report.rows.size(); ++i) {
      TableRow& row = report.rows[i];
      JobSpec job = job_for(row.path, row.rails);
      job.params.push_back(std::string("engine.reliability=") + (row.reliability ? (row.path == "shm" ? "force" : "auto") : "off"));
      if (row.reliability) job.params.push_back("engine.checksum=" + row.checksum);
      // Without reliability a datagram the kernel drops is never resent and the job waits for it for
      // ever: such a row gets a time limit, and no figures when it is reached.
      job.timeout_s = job_time_limit(job, options.time_limit_s, static_cast<int>(10 + 50 * std::min(options.scale, 1.0)));
      RunOutcome outcome;
      measure(row_label(row) + of_round, [&] {
        outcome = run_ftmpi(job, kernels);
        return outcome.ok();
      });
      if (!outcome.ok()) {
        if (!outcome.may_lose || outcome.status != 124) return outcome.failure("ftrun (" + row_label(row) + ")");
        continue;
      }
      report.library = outcome.library;
      row_rounds[i].push_back(figures_of(outcome.results));
      row.traffic = outcome.rails;
    }
    for (std::size_t k = 0; k < plans.size(); ++k) {
      RunOutcome outcome;
      if (Status s = measure_peer(k, kernels, of_round, outcome, plan_transport[k]); !s) return s;
      report.peer_libraries[options.peers[plans[k].peer].name] = outcome.library;
      plan_rounds[k].push_back(figures_of(outcome.results));
    }
  }
  // The curves, with each path's default reliability (shared memory without, UDP with CRC32C).
  KernelArgs sweep = kernels;
  sweep.sizes = options.curve_sizes;
  for (const TableRow* row : curve_rows) {
    JobSpec job = job_for(row->path, row->rails);
    job.timeout_s = job_time_limit(job, options.time_limit_s, sweep.time_limit_s());
    const std::string name = "ftmpi " + row->path + (row->rails.empty() ? "" : " " + joined(row->rails));
    RunOutcome outcome;
    measure(name + " (curve)", [&] {
      outcome = run_ftmpi(job, sweep);
      return outcome.ok();
    });
    if (!outcome.ok()) return outcome.failure("ftrun (" + name + ", curve)");
    report.curves.push_back({name, outcome.results});
  }
  for (std::size_t k = 0; k < (options.curve_sizes.empty() ? 0 : plans.size()); ++k) {
    RunOutcome outcome;
    std::string transport;
    if (Status s = measure_peer(k, sweep, " (curve)", outcome, transport); !s) return s;
    report.curves.push_back({options.peers[plans[k].peer].name + " " + transport, outcome.results});
  }
  for (std::size_t i = 0; i < report.rows.size(); ++i) {
    if (row_rounds[i].empty()) {
      report.rows[i].note = "a datagram was lost and, without reliability, never resent";
    } else {
      report.rows[i].figures = median_figures(row_rounds[i]);
    }
  }
  for (std::size_t k = 0; k < plans.size(); ++k) {
    report.peer_rows.push_back({options.peers[plans[k].peer].name,
                                plans[k].transport == PeerTransport::shared_memory ? "shm" : "network", plan_transport[k],
                                median_figures(plan_rounds[k])});
  }
  if (options.repeat_disturbed) report.conditions = watch.summary();
  return report;
}

std::string table_markdown(const TableReport& report) {
  const bool peers = !report.peer_rows.empty();
  std::string out = report.library + (report.hosts.empty() ? ", 2 ranks on this host" : ", 2 ranks on " + report.hosts) +
                    (report.rounds > 1 ? ", medians of " + std::to_string(report.rounds) + " interleaved rounds" : "") + "\n\n";
  out += "| path | rails | reliability | checksum | latency 0 B (us) | latency 8 KB (us) | bandwidth 1 MB (MB/s) "
         "| latency 8 KB vs off | bandwidth 1 MB vs off | bytes per rail | retransmits |";
  out += peers ? " latency 0 B / best peer | bandwidth 1 MB / best peer |\n" : "\n";
  out += "|---|---|---|---|---:|---:|---:|---:|---:|---|---:|";
  out += peers ? "---:|---:|\n" : "\n";
  for (const TableRow& r : report.rows) {
    const std::string rails = r.rails.empty() ? "-" : joined(r.rails);
    if (!r.note.empty()) {
      out += "| " + r.path + " | " + rails + " | off | - | " + r.note + " | | | | | | |" + (peers ? " | |\n" : "\n");
      continue;
    }
    const TableRow* off = report.without_reliability(r);
    const bool vs_off = r.reliability && off != nullptr && off->figures.latency_8k_us > 0 && off->figures.bandwidth_1m_MBps > 0;
    out += "| " + r.path + " | " + rails + " | " + (r.reliability ? "on" : "off") + " | " + r.checksum + " | " +
           figure_text(r.figures.latency_0_us) + " | " + figure_text(r.figures.latency_8k_us) + " | " +
           figure_text(r.figures.bandwidth_1m_MBps) + " | " +
           (vs_off ? ratio_text(r.figures.latency_8k_us / off->figures.latency_8k_us) : "-") + " | " +
           (vs_off ? ratio_text(r.figures.bandwidth_1m_MBps / off->figures.bandwidth_1m_MBps) : "-") + " | " +
           shares_text(r.traffic) + " | " + retransmits_text(r.traffic) + " |";
    if (peers) {
      const TableFigures ratio = report.ratio_to_best_peer(r);
      out += " " + ratio_text(ratio.latency_0_us) + " | " + ratio_text(ratio.bandwidth_1m_MBps) + " |";
    }
    out += "\n";
  }
  if (peers) {
    out += "\n| MPI | path | transport | latency 0 B (us) | latency 8 KB (us) | bandwidth 1 MB (MB/s) |\n|---|---|---|---:|---:|---:|\n";
    for (const PeerRow& p : report.peer_rows) {
      out += "| " + p.peer + " | " + p.path + " | " + p.transport + " | " + figure_text(p.figures.latency_0_us) + " | " +
             figure_text(p.figures.latency_8k_us) + " | " + figure_text(p.figures.bandwidth_1m_MBps) + " |\n";
    }
    out += "\n";
    for (const auto& [name, library] : report.peer_libraries) out += name + ": " + library + "\n";
    out += "A ratio to the best peer compares shared memory with the peers' shared memory and UDP with their TCP on loopback.\n";
  }
  if (!report.conditions.empty()) out += "\nConditions: " + report.conditions + "\n";
  return out;
}

std::string table_json(const TableReport& report) {
  base::JsonWriter w;
  auto figures = [&](const TableFigures& f) {
    w.field("latency_0_us", f.latency_0_us).field("latency_8k_us", f.latency_8k_us).field("bandwidth_1m_MBps", f.bandwidth_1m_MBps);
  };
  w.begin_object().field("library", report.library).field("rounds", report.rounds);
  if (!report.hosts.empty()) w.field("hosts", report.hosts);
  w.key("rows").begin_array();
  for (const TableRow& r : report.rows) {
    w.begin_object().field("path", r.path).key("rails").begin_array();
    for (const std::string& rail : r.rails) w.value(rail);
    w.end_array().field("reliability", r.reliability ? "on" : "off").field("checksum", r.checksum);
    figures(r.figures);
    if (!r.note.empty()) w.field("note", r.note);
    std::uint64_t total = 0;
    for (const RailTraffic& t : r.traffic) total += t.bytes_sent;
    w.key("traffic").begin_array();
    for (const RailTraffic& t : r.traffic) {
      w.begin_object().field("rail", t.name).field("bytes_sent", t.bytes_sent);
      w.field("share", total > 0 ? static_cast<double>(t.bytes_sent) / static_cast<double>(total) : 0.0);
      w.field("retransmits", t.retransmits).field("timeouts", t.timeouts).field("checksum_failures", t.checksum_failures);
      w.end_object();
    }
    w.end_array();
    if (!report.peer_rows.empty() && r.note.empty()) {
      w.key("ratio_to_best_peer").begin_object();
      figures(report.ratio_to_best_peer(r));
      w.end_object();
    }
    w.end_object();
  }
  w.end_array().key("peers").begin_object();
  for (const auto& [name, library] : report.peer_libraries) {
    w.key(name).begin_object().field("library", library).key("rows").begin_array();
    for (const PeerRow& p : report.peer_rows) {
      if (p.peer != name) continue;
      w.begin_object().field("path", p.path).field("transport", p.transport);
      figures(p.figures);
      w.end_object();
    }
    w.end_array().end_object();
  }
  w.end_object();
  if (!report.curves.empty()) {
    w.key("curves").begin_array();
    for (const TableCurve& curve : report.curves) {
      w.begin_object().field("name", curve.name).key("results");
      write_results(w, curve.results);
      w.end_object();
    }
    w.end_array();
  }
  if (!report.conditions.empty()) w.field("conditions", report.conditions);
  w.end_object();
  return std::move(w).text();
}

std::string table_svg(const TableReport& report) {
  std::vector<Panel> panels;
  for (const TableCurve& curve : report.curves) add_curve(panels, curve.name, curve.results);
  return plot_svg("ftbench table: " + report.library + (report.hosts.empty() ? ", 2 ranks on this host" : ", 2 ranks on " + report.hosts), panels);
}

}  // namespace ftmpi::bench

#include "ftmpi/bench/compare.hpp"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "ftmpi/base/json.hpp"
#include "ftmpi/bench/disturbance.hpp"
#include "ftmpi/bench/plot.hpp"

namespace ftmpi::bench {

using base::Errc;
using base::Status;

double SweepReport::median_of(std::size_t m, const Result& r) const {
  if (m >= samples.size()) return 0.0;
  auto it = samples[m].find({r.kernel, r.bytes});
  return it == samples[m].end() ? 0.0 : median(it->second);
}

std::vector<Result> SweepReport::medians(std::size_t m) const {
  std::vector<Result> out = order;
  for (Result& r : out) r.value = median_of(m, r);
  return out;
}

double SweepReport::ratio_to_best_peer(const Result& r) const {
  double best = 0;
  for (std::size_t m = 1; m < samples.size(); ++m) {
    const double v = median_of(m, r);
    if (v > 0 && (best == 0 || (higher_is_better(r.unit) ? v > best : v < best))) best = v;
  }
  return best > 0 ? median_of(0, r) / best : 0.0;
}

base::Result<SweepReport> run_sweep(const Sweep& sweep, const TableProgress& progress) {
  if (!sweep.job.hosts.empty() && !sweep.peers.empty()) {
    return Status(Errc::invalid_argument, "--against measures the peers on this host only: not with --host");
  }
  SweepReport report;
  report.ranks = sweep.job.ranks;
  report.rounds = sweep.rounds;
  report.names.push_back("ftmpi");
  for (const PeerMpi& p : sweep.peers) report.names.push_back(p.name);
  const std::size_t mpis = report.names.size();
  report.samples.resize(mpis);
  report.libraries.resize(mpis);
  report.transports.resize(mpis);
  auto transport_for_paths = peer_transport_for(sweep.job.paths);
  if (!transport_for_paths) return Status(Errc::invalid_argument, "--paths: " + transport_for_paths.status().message());
  const PeerTransport transport = *transport_for_paths;
  std::vector<std::string> binaries;
  for (const PeerMpi& p : sweep.peers) {
    auto built = build_kernels(p);
    if (!built) return built.status();
    binaries.push_back(*built);
  }
  // Beside peers, every MPI is bound the same way: to cores when there are enough, else not at all.
  JobSpec job = sweep.job;
  if (!sweep.peers.empty() && job.bind_to.empty()) {
    report.bound = job.ranks <= ::sysconf(_SC_NPROCESSORS_ONLN);
    job.bind_to = report.bound ? "core" : "none";
  } else {
    report.bound = job.bind_to == "core";
  }
  // Without reliability on a network path a lost datagram is waited for for ever: bounded then.
  job.timeout_s = job_time_limit(job, sweep.time_limit_s, sweep.kernels.time_limit_s());
  if (progress.start) progress.start(sweep.rounds * static_cast<int>(mpis));
  DisturbanceWatch watch(sweep.repeat_disturbed ? std::function<double()>(cacheline_ns) : std::function<double()>{});
  for (int round = 0; round < sweep.rounds; ++round) {
    for (std::size_t m = 0; m < mpis; ++m) {
      const std::string label = report.names[m] + (sweep.rounds > 1 ? " (round " + std::to_string(round + 1) + " of " + std::to_string(sweep.rounds) + ")" : "");
      if (progress.begin) progress.begin(label);
      RunOutcome outcome;
      std::string what = "ftrun";
      auto run = [&] {
        if (m == 0) {
          outcome = run_ftmpi(job, sweep.kernels);
        } else {
          const PeerLaunch launch = peer_launch(sweep.peers[m - 1], job.ranks, report.bound, transport, binaries[m - 1]);
          what = launch.command.front();
          report.transports[m] = launch.transport;
          outcome = run_peer(launch, sweep.kernels);
        }
        return outcome.ok();
      };
      if (sweep.repeat_disturbed) {
        watch.measure(job.ranks, run, [&](const std::string& why) { if (progress.say) progress.say(label + ": " + why); });
      } else {
        run();
      }
      if (progress.end) progress.end();
      if (!outcome.ok()) return outcome.failure(what);
      report.libraries[m] = outcome.library;
      if (m == 0) report.rails = outcome.rails;
      for (const Result& r : outcome.results) {
        report.samples[m][{r.kernel, r.bytes}].push_back(r.value);
        if (m == 0 && round == 0) report.order.push_back(r);
      }
    }
  }
  for (Result& r : report.order) r.value = report.median_of(0, r);
  if (sweep.repeat_disturbed) report.conditions = watch.summary();
  return report;
}

std::string traffic_text(const std::vector<RailTraffic>& rails) {
  std::uint64_t total = 0;
  for (const RailTraffic& t : rails) total += t.bytes_sent;
  std::string out;
  for (const RailTraffic& t : rails) {
    const double share = total > 0 ? 100.0 * static_cast<double>(t.bytes_sent) / static_cast<double>(total) : 0;
    out += "  " + t.name + ": " + std::to_string(t.bytes_sent) + " bytes sent (" + std::to_string(std::lround(share)) +
           "%), " + std::to_string(t.retransmits) + " retransmits, " + std::to_string(t.timeouts) + " timeouts, " +
           std::to_string(t.checksum_failures) + " checksum failures\n";
  }
  return out;
}

std::string sweep_markdown(const SweepReport& report, const std::string& heading) {
  std::string out;
  if (report.names.size() == 1) {
    // One MPI: one row per size, one column per kernel (with its unit).
    std::vector<std::string> columns;
    std::map<std::string, std::string> unit_of;
    std::map<std::uint64_t, std::map<std::string, double>> rows;
    for (const Result& r : report.order) {
      if (unit_of.emplace(r.kernel, r.unit).second) columns.push_back(r.kernel);
      rows[r.bytes][r.kernel] = r.value;
    }
    out += heading + "\n\n| size |";
    for (const std::string& c : columns) out += " " + c + " (" + unit_of[c] + ") |";
    out += "\n|";
    for (std::size_t i = 0; i <= columns.size(); ++i) out += "---:|";
    out += "\n";
    for (const auto& [bytes, values] : rows) {
      out += "| " + size_text(bytes) + " |";
      for (const std::string& c : columns) {
        auto it = values.find(c);
        out += " " + (it == values.end() ? std::string("-") : figure_text(it->second)) + " |";
      }
      out += "\n";
    }
  } else {
    out += std::to_string(report.ranks) + " ranks" + (report.bound ? ", bound to cores" : ", unbound") + (report.rounds > 1 ? "; medians of " + std::to_string(report.rounds) + " interleaved rounds\n" : "; one round\n");
    for (std::size_t m = 0; m < report.names.size(); ++m) {
      const bool said = m < report.transports.size() && !report.transports[m].empty();
      out += "  " + report.names[m] + ": " + report.libraries[m] + (said ? ", over " + report.transports[m] : "") + "\n";
    }
    std::string kernel;
    for (const Result& r : report.order) {
      if (r.kernel != kernel) {
        kernel = r.kernel;
        out += "\n" + kernel + " (" + r.unit + ", " + (higher_is_better(r.unit) ? "higher" : "lower") + " is better)\n\n| size |";
        for (const std::string& n : report.names) out += " " + n + " |";
        out += " ftmpi / best peer |\n|---:|";
        for (std::size_t m = 0; m <= report.names.size(); ++m) out += "---:|";
        out += "\n";
      }
      out += "| " + size_text(r.bytes) + " |";
      for (std::size_t m = 0; m < report.names.size(); ++m) out += " " + figure_text(report.median_of(m, r)) + " |";
      const double ratio = report.ratio_to_best_peer(r);
      out += " " + (ratio > 0 ? figure_text(ratio) + "x" : std::string("-")) + " |\n";
    }
  }
  if (!report.rails.empty()) out += "\nftmpi's rails (the last run, every rank's counters added):\n" + traffic_text(report.rails);
  if (!report.conditions.empty()) out += "\nConditions: " + report.conditions + "\n";
  return out;
}

std::string sweep_json(const SweepReport& report) {
  base::JsonWriter w;
  const bool peers = report.names.size() > 1;
  w.begin_object().field("library", report.libraries.empty() ? "" : report.libraries[0]).field("ranks", report.ranks);
  w.field("rounds", report.rounds).key("results").begin_array();
  for (const Result& r : report.order) {
    w.begin_object().field("kernel", r.kernel).field("bytes", r.bytes).field("value", r.value).field("unit", r.unit);
    if (peers) w.field("ratio_to_best_peer", report.ratio_to_best_peer(r));
    w.end_object();
  }
  w.end_array().key("rails").begin_array();
  for (const RailTraffic& t : report.rails) {
    w.begin_object().field("rail", t.name).field("bytes_sent", t.bytes_sent).field("retransmits", t.retransmits);
    w.field("timeouts", t.timeouts).field("checksum_failures", t.checksum_failures).end_object();
  }
  w.end_array();
  if (peers) {
    w.key("peers").begin_object();
    for (std::size_t m = 1; m < report.names.size(); ++m) {
      w.key(report.names[m]).begin_object().field("library", report.libraries[m]);
      if (m < report.transports.size() && !report.transports[m].empty()) w.field("transport", report.transports[m]);
      w.key("results");
      write_results(w, report.medians(m));
      w.end_object();
    }
    w.end_object();
  }
  if (!report.conditions.empty()) w.field("conditions", report.conditions);
  w.end_object();
  return std::move(w).text();
}

std::string sweep_csv(const SweepReport& report) {
  // The MPI's name leads each line only when there are several.
  const bool peers = report.names.size() > 1;
  std::string out = peers ? "mpi,kernel,bytes,value,unit\n" : "kernel,bytes,value,unit\n";
  for (std::size_t m = 0; m < report.names.size(); ++m) {
    for (const Result& r : report.order) {
      char value[32];
      std::snprintf(value, sizeof value, "%.6g", report.median_of(m, r));
      out += (peers ? report.names[m] + "," : std::string()) + r.kernel + "," + std::to_string(r.bytes) + "," + value + "," + r.unit + "\n";
    }
  }
  return out;
}

std::string sweep_svg(const SweepReport& report, const std::string& title) {
  std::vector<Panel> panels;
  for (std::size_t m = 0; m < report.names.size(); ++m) add_curve(panels, report.names[m], report.medians(m));
  return plot_svg("ftbench: " + title, panels);
}

}  // namespace ftmpi::bench

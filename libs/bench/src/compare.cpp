#include "ftmpi/bench/compare.hpp"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>

#include "ftmpi/base/json.hpp"
#include "ftmpi/bench/disturbance.hpp"
#include "ftmpi/bench/plot.hpp"

namespace ftmpi::bench {

using base::Errc;
using base::Status;

namespace {
// How many times a run that lost a frame without reliability is run again before the sweep fails.
constexpr int kLostFrameRetries = 2;
}  // namespace

base::Result<Variant> parse_variant(std::string_view text) {
  auto bad = [text](const std::string& why) {
    return Status(Errc::invalid_argument, "--variant '" + std::string(text) + "': " + why +
                                              " (NAME:K=V[,K=V...], e.g. off:engine.reliability=off)");
  };
  const std::size_t colon = text.find(':');
  if (colon == std::string_view::npos) return bad("no ':' after its name");
  Variant variant;
  variant.name = std::string(text.substr(0, colon));
  if (variant.name.empty()) return bad("no name before ':'");
  for (const char c : variant.name) {
    if (std::isalnum(static_cast<unsigned char>(c)) == 0 && c != '-' && c != '_' && c != '.') {
      return bad("a name is letters, digits, '-', '_' and '.'");
    }
  }
  if (variant.name == "ftmpi") return bad("ftmpi names the job as given");
  for (const PeerMpi& peer : known_peers()) {
    if (variant.name == peer.name) return bad("'" + peer.name + "' names a peer MPI (--against)");
  }
  const std::string_view list = text.substr(colon + 1);
  if (list.empty()) return bad("no parameter after ':'");
  // Parameter names are dotted (engine.reliability); a piece whose name is not continues the value before
  // it, which may hold commas and '=' of its own (path.fault=drop=1,for=2KB).
  for (const std::string& piece : split(list)) {
    const std::size_t eq = piece.find('=');
    const bool parameter = eq != std::string::npos && piece.find('.') < eq;
    if (parameter) {
      variant.params.push_back(piece);
    } else if (variant.params.empty()) {
      return bad("'" + piece + "' is not K=V with a parameter's name (engine.reliability=off)");
    } else {
      variant.params.back() += "," + piece;
    }
  }
  return variant;
}

RatioSpread ratio_spread(std::vector<double> ratios) {
  RatioSpread spread;
  spread.rounds = ratios.size();
  if (ratios.empty()) return spread;
  std::sort(ratios.begin(), ratios.end());
  auto at = [&ratios](double p) {
    const double position = p * static_cast<double>(ratios.size() - 1);
    const auto below = static_cast<std::size_t>(position);
    const std::size_t above = std::min(below + 1, ratios.size() - 1);
    return ratios[below] + (ratios[above] - ratios[below]) * (position - static_cast<double>(below));
  };
  spread.low = at(0.25);
  spread.median = at(0.5);
  spread.high = at(0.75);
  return spread;
}

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
  for (std::size_t m = first_peer(); m < samples.size(); ++m) {
    const double v = median_of(m, r);
    if (v > 0 && (best == 0 || (higher_is_better(r.unit) ? v > best : v < best))) best = v;
  }
  return best > 0 ? median_of(0, r) / best : 0.0;
}

RatioSpread SweepReport::ratio_by_round(std::size_t m, const Result& r) const {
  if (m == 0 || m >= samples.size()) return {};
  const auto ours = samples[0].find({r.kernel, r.bytes});
  const auto theirs = samples[m].find({r.kernel, r.bytes});
  if (ours == samples[0].end() || theirs == samples[m].end()) return {};
  std::vector<double> ratios;
  for (std::size_t i = 0; i < std::min(ours->second.size(), theirs->second.size()); ++i) {
    if (ours->second[i] > 0 && theirs->second[i] > 0) ratios.push_back(ours->second[i] / theirs->second[i]);
  }
  return ratio_spread(std::move(ratios));
}

base::Result<SweepReport> run_sweep(const Sweep& sweep, const TableProgress& progress) {
  if (!sweep.job.hosts.empty() && !sweep.peers.empty()) {
    return Status(Errc::invalid_argument, "--against measures the peers on this host only: not with --host");
  }
  for (std::size_t v = 0; v < sweep.variants.size(); ++v) {
    const Variant& variant = sweep.variants[v];
    for (std::size_t w = 0; w < v; ++w) {
      if (sweep.variants[w].name == variant.name) {
        return Status(Errc::invalid_argument, "--variant: two variants named '" + variant.name + "'");
      }
    }
    for (const std::string& p : variant.params) {
      const bool kinds = p.starts_with("path.kinds=") && !sweep.job.paths.empty();
      const bool rails = p.starts_with("path.rails=") && !sweep.job.rails.empty();
      if (kinds || rails) {
        return Status(Errc::invalid_argument, "--variant '" + variant.name + "': " + (kinds ? "--paths" : "--rails") +
                                                  " sets " + (kinds ? "path.kinds" : "path.rails") +
                                                  " for every job; leave it out to vary it");
      }
    }
  }
  SweepReport report;
  report.ranks = sweep.job.ranks;
  report.rounds = sweep.rounds;
  report.names.push_back("ftmpi");
  for (const Variant& v : sweep.variants) {
    report.names.push_back(v.name);
    report.variant_params.push_back(v.params);
  }
  report.variant_rails.resize(sweep.variants.size());
  for (const PeerMpi& p : sweep.peers) report.names.push_back(p.name);
  const std::size_t mpis = report.names.size();
  const std::size_t first_peer = report.first_peer();
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
  // Beside peers or variants, every job is bound the same way: to cores when there are enough, else not at
  // all (unbound ranks move between cores, and their figures with them).
  JobSpec job = sweep.job;
  if ((!sweep.peers.empty() || !sweep.variants.empty()) && job.bind_to.empty()) {
    report.bound = job.ranks <= ::sysconf(_SC_NPROCESSORS_ONLN);
    job.bind_to = report.bound ? "core" : "none";
  } else {
    report.bound = job.bind_to == "core";
  }
  // ftmpi's job and each variant's. Without reliability on a network path a lost datagram is waited for
  // for ever: bounded then.
  std::vector<JobSpec> jobs(first_peer, job);
  for (std::size_t v = 0; v < sweep.variants.size(); ++v) {
    const std::vector<std::string>& extra = sweep.variants[v].params;
    jobs[1 + v].params.insert(jobs[1 + v].params.end(), extra.begin(), extra.end());
  }
  for (JobSpec& j : jobs) j.timeout_s = job_time_limit(j, sweep.time_limit_s, sweep.kernels.time_limit_s());
  if (progress.start) progress.start(sweep.rounds * static_cast<int>(mpis));
  DisturbanceWatch watch(sweep.repeat_disturbed ? std::function<double()>(cacheline_ns) : std::function<double()>{});
  int lost_runs = 0;
  for (int round = 0; round < sweep.rounds; ++round) {
    // Each round starts one later in the order, so that no MPI always runs first.
    for (std::size_t k = 0; k < mpis; ++k) {
      const std::size_t m = (k + static_cast<std::size_t>(round)) % mpis;
      const std::string label = report.names[m] + (sweep.rounds > 1 ? " (round " + std::to_string(round + 1) + " of " + std::to_string(sweep.rounds) + ")" : "");
      if (progress.begin) progress.begin(label);
      RunOutcome outcome;
      std::string what = "ftrun";
      auto run = [&] {
        if (m < first_peer) {
          outcome = run_ftmpi(jobs[m], sweep.kernels);
        } else {
          const PeerLaunch launch = peer_launch(sweep.peers[m - first_peer], job.ranks, report.bound, transport, binaries[m - first_peer]);
          what = launch.command.front();
          report.transports[m] = launch.transport;
          outcome = run_peer(launch, sweep.kernels);
        }
        return outcome.ok();
      };
      // A job without reliability that lost a frame waited out its time limit: run again, twice at most.
      for (int attempt = 0;; ++attempt) {
        if (sweep.repeat_disturbed) {
          watch.measure(job.ranks, run, [&](const std::string& why) { if (progress.say) progress.say(label + ": " + why); });
        } else {
          run();
        }
        if (outcome.ok() || !outcome.may_lose || outcome.status != 124 || attempt == kLostFrameRetries) break;
        ++lost_runs;
        if (progress.say) {
          progress.say(label + ": ended at its time limit of " + std::to_string(outcome.time_limit_s) +
                       " s without reliability (a frame lost): running it again");
        }
      }
      if (progress.end) progress.end();
      if (!outcome.ok()) return outcome.failure(what);
      report.libraries[m] = outcome.library;
      if (m == 0) report.rails = outcome.rails;
      if (report.is_variant(m)) report.variant_rails[m - 1] = outcome.rails;
      for (const Result& r : outcome.results) {
        report.samples[m][{r.kernel, r.bytes}].push_back(r.value);
        if (m == 0 && round == 0) report.order.push_back(r);
      }
    }
  }
  for (Result& r : report.order) r.value = report.median_of(0, r);
  if (sweep.repeat_disturbed) report.conditions = watch.summary();
  if (lost_runs > 0) {
    report.conditions += std::string(report.conditions.empty() ? "" : "; ") + std::to_string(lost_runs) +
                         (lost_runs == 1 ? " run" : " runs") +
                         " without reliability lost a frame, waited out the time limit and ran again";
  }
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
      out += "  " + report.names[m] + ": " + report.libraries[m] + (said ? ", over " + report.transports[m] : "");
      if (report.is_variant(m)) {
        std::string params;
        for (const std::string& p : report.variant_params[m - 1]) params += (params.empty() ? "" : " ") + p;
        out += ", with " + params;
      }
      out += "\n";
    }
    const bool peers = report.has_peers();
    if (!report.variant_params.empty()) {
      out += std::string("  ftmpi / a variant: the two runs of each round divided, the median of the rounds") +
             (report.rounds > 1 ? " (quartiles)" : "") + "\n";
    }
    std::string kernel;
    for (const Result& r : report.order) {
      if (r.kernel != kernel) {
        kernel = r.kernel;
        out += "\n" + kernel + " (" + r.unit + ", " + (higher_is_better(r.unit) ? "higher" : "lower") + " is better)\n\n| size |";
        for (const std::string& n : report.names) out += " " + n + " |";
        for (std::size_t v = 0; v < report.variant_params.size(); ++v) out += " ftmpi / " + report.names[1 + v] + " |";
        if (peers) out += " ftmpi / best peer |";
        out += "\n|---:|";
        for (std::size_t m = 0; m < report.names.size() + report.variant_params.size() + (peers ? 1 : 0); ++m) out += "---:|";
        out += "\n";
      }
      out += "| " + size_text(r.bytes) + " |";
      for (std::size_t m = 0; m < report.names.size(); ++m) out += " " + figure_text(report.median_of(m, r)) + " |";
      for (std::size_t v = 0; v < report.variant_params.size(); ++v) {
        const RatioSpread spread = report.ratio_by_round(1 + v, r);
        std::string cell = "-";
        if (spread.rounds > 0) {
          cell = figure_text(spread.median) + "x";
          if (spread.rounds > 1) cell += " (" + figure_text(spread.low) + "-" + figure_text(spread.high) + ")";
        }
        out += " " + cell + " |";
      }
      if (peers) {
        const double ratio = report.ratio_to_best_peer(r);
        out += " " + (ratio > 0 ? figure_text(ratio) + "x" : std::string("-")) + " |";
      }
      out += "\n";
    }
  }
  if (!report.rails.empty()) out += "\nftmpi's rails (the last run, every rank's counters added):\n" + traffic_text(report.rails);
  if (!report.conditions.empty()) out += "\nConditions: " + report.conditions + "\n";
  return out;
}

std::string sweep_json(const SweepReport& report) {
  base::JsonWriter w;
  const std::size_t variants = report.variant_params.size();
  const bool peers = report.has_peers();
  w.begin_object().field("library", report.libraries.empty() ? "" : report.libraries[0]).field("ranks", report.ranks);
  w.field("rounds", report.rounds).key("results").begin_array();
  for (const Result& r : report.order) {
    w.begin_object().field("kernel", r.kernel).field("bytes", r.bytes).field("value", r.value).field("unit", r.unit);
    const auto spread_of = [&](std::size_t m) {
      const RatioSpread spread = report.ratio_by_round(m, r);
      w.key(report.names[m]).begin_object().field("median", spread.median).field("low_quartile", spread.low);
      w.field("high_quartile", spread.high).field("rounds", static_cast<std::uint64_t>(spread.rounds)).end_object();
    };
    if (peers) {
      w.field("ratio_to_best_peer", report.ratio_to_best_peer(r));
      // Each peer's round by round too: a round's runs are seconds apart, the medians' minutes.
      w.key("ratio_to_peer").begin_object();
      for (std::size_t m = report.first_peer(); m < report.names.size(); ++m) {
        if (report.ratio_by_round(m, r).rounds > 0) spread_of(m);
      }
      w.end_object();
    }
    if (variants > 0) {
      w.key("ratio_to_variant").begin_object();
      for (std::size_t v = 0; v < variants; ++v) spread_of(1 + v);
      w.end_object();
    }
    w.end_object();
  }
  auto rails = [&w](const std::vector<RailTraffic>& traffic) {
    w.begin_array();
    for (const RailTraffic& t : traffic) {
      w.begin_object().field("rail", t.name).field("bytes_sent", t.bytes_sent).field("retransmits", t.retransmits);
      w.field("timeouts", t.timeouts).field("checksum_failures", t.checksum_failures).end_object();
    }
    w.end_array();
  };
  w.end_array().key("rails");
  rails(report.rails);
  if (variants > 0) {
    w.key("variants").begin_object();
    for (std::size_t v = 0; v < variants; ++v) {
      w.key(report.names[1 + v]).begin_object().field("library", report.libraries[1 + v]).key("params").begin_array();
      for (const std::string& p : report.variant_params[v]) w.value(p);
      w.end_array().key("results");
      write_results(w, report.medians(1 + v));
      w.key("rails");
      rails(v < report.variant_rails.size() ? report.variant_rails[v] : std::vector<RailTraffic>{});
      w.end_object();
    }
    w.end_object();
  }
  if (peers) {
    w.key("peers").begin_object();
    for (std::size_t m = report.first_peer(); m < report.names.size(); ++m) {
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
  // The MPI's name (ftmpi, a variant's, a peer's) leads each line only when there are several.
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

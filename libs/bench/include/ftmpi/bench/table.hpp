// `ftbench table`: the standard suite, LA-MPI's Table 1 per path. Shared memory, UDP on each rail and
// UDP striped over all of them; each without reliability and with it under each checksum (crc32c, sum32,
// none): latency at 0 B and 8 KB, bandwidth at 1 MB, the cost of reliability as ratios to the same path
// without it, and each rail's share of the bytes and its retransmissions. With peers (--against), their
// figures on shared memory and over TCP on loopback, measured in the same interleaved rounds, and each
// row's ratio to the best peer on the same kind of path.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "ftmpi/bench/peers.hpp"
#include "ftmpi/bench/results.hpp"

namespace ftmpi::bench {

struct TableOptions {
  std::vector<std::string> rails{"127.0.0.1", "127.0.0.2"};  // UDP's rails
  std::vector<std::string> params;                            // K=V for every ftmpi job
  // Ranks 0 and 1 on these hosts (ftrun --host), started by `launch_agent`; then there is no shared
  // memory row, and no peer (the peers are measured on this host only). Empty: both on this host.
  std::string hosts, launch_agent;
  int reps = 5;
  double scale = 1.0;
  double max_time = 1.0;  // seconds per repetition at most (KernelArgs::max_time)
  int rounds = 1;  // interleaved rounds; each figure is their median
  std::vector<PeerMpi> peers;
  bool repeat_disturbed = true;  // repeat a run the machine disturbed (DisturbanceWatch)
  // Every ftmpi job ends after this many seconds (ftrun --timeout); 0: rows without reliability on a
  // network path get 10 + 50 x scale (a row that reaches it has no figures), the others none.
  int time_limit_s = 0;
  // Sizes of the curves for the picture (`table --svg`): a latency and bandwidth sweep per path and rail
  // set with its default reliability, and per peer and transport, after the rounds. Empty: no curves.
  std::string curve_sizes;
};

struct TableFigures {
  double latency_0_us = 0, latency_8k_us = 0, bandwidth_1m_MBps = 0;
};

struct TableRow {
  std::string path;                // "shm", "udp"
  std::vector<std::string> rails;  // udp: the rails it is striped over
  bool reliability = false;
  std::string checksum;  // with reliability: crc32c, sum32, none; without: "-"
  TableFigures figures;
  std::vector<RailTraffic> traffic;  // the last round's, per rail
  std::string note;                  // why the row has no figures
};

// A peer's figures on one kind of path: "shm" compares with ftmpi's shared memory rows, "network" with
// its UDP rows.
struct PeerRow {
  std::string peer, path, transport;
  TableFigures figures;
};

// One curve of the picture: "ftmpi udp 127.0.0.1", "openmpi tcp lo".
struct TableCurve {
  std::string name;
  std::vector<Result> results;
};

struct TableReport {
  std::string library;
  int rounds = 1;
  std::string hosts;  // empty: both ranks on this host
  std::vector<TableRow> rows;
  std::vector<PeerRow> peer_rows;
  std::map<std::string, std::string> peer_libraries;
  std::vector<TableCurve> curves;  // with TableOptions::curve_sizes
  std::string conditions;  // what the disturbance watch saw (DisturbanceWatch::summary)
  // The row's figure over the best peer's on the same kind of path (below 1 better for latency, above 1
  // for bandwidth); 0 when no peer has that figure.
  TableFigures ratio_to_best_peer(const TableRow& row) const;
  const TableRow* without_reliability(const TableRow& row) const;
};

// The rows the suite measures, in order, without figures: shared memory (when both ranks share a host),
// then UDP on each rail and striped over all of them.
std::vector<TableRow> table_rows(const std::vector<std::string>& rails, bool shared_memory = true);

// Measures the suite. On failure (a job that should not fail did) the status says which and why.
// `progress` is told each step (which row, which round) and lines to keep.
struct TableProgress {
  std::function<void(int total)> start;
  std::function<void(const std::string& label)> begin;
  std::function<void()> end;
  std::function<void(const std::string& line)> say;
};
base::Result<TableReport> run_table(const TableOptions& options, const TableProgress& progress = {});

std::string table_markdown(const TableReport& report);
std::string table_json(const TableReport& report);
// Latency and bandwidth against message size, a curve per path (and per peer MPI and transport).
std::string table_svg(const TableReport& report);

}  // namespace ftmpi::bench

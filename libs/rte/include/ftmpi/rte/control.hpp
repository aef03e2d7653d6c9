// The control plane: how a tool (ftpath; ftinject next) asks a running job about its rails and steers
// them. The protocol is in docs/control-protocol.md.
//
// ftrun serves every job on a Unix socket in the user's runtime directory (runtime_directory()):
// <dir>/<job id>.sock, mode 0600, beside <dir>/<job id>.json, the job's record (JobRecord), both removed
// when ftrun exits. The directory is 0700 and the socket checks its peer's uid, so only the job's user
// reaches it. A tool connects, writes one request line, and reads ftrun's JSON answer until ftrun closes.
// ftrun fans the request out to the ranks over their control connections (protocol.hpp: control,
// control_reply), gathers their answers until the request's timeout, and names the ranks that did not
// answer in time.
//
// A request line:   ftmpi-control 1 OP [KEY=VALUE ...]
//   OP      stats                  every rank's statistics (engine stats.hpp, as JSON)
//           disable | enable       a rail: stop using it (its frames move to the others), or probe it and
//                                  use it again once it answers
//           ping                   "{}" from every rank whose progress loop runs (ftrun itself asks it
//                                  when a rank reports a peer silent: protocol.hpp, peer_check)
//           inject                 add a fault SPEC (path/fault.hpp) to the rails' fault layers (ftinject)
//           clear                  remove every fault from the rails' fault layers
//           faults                 the faults active on each rail, and what was injected, detected and
//                                  resent since the first injection
//           events                 the rank's flight recorder: its events after sequence number N
//           record                 write the flight recorder and statistics to the rank's file now (ftrun
//                                  asks it of every rank before it terminates a failed job)
//   rail=R  the rail (disable, enable: required; inject, clear: optional, default every rail): its index,
//           or its name as ftrun was given it (an interface such as eth1, or an address)
//   spec=S  inject: the fault SPEC, without spaces ("drop=0.05,rail=1,for=2s")
//   after=N events: only those numbered above N (default 0: all the ring still holds)
//   ranks=L which ranks act or answer (default: every rank); L is "0,2,5-7"
//   peers=L the peers whose rail changes (disable, enable; default: every peer)
//   timeout=D  how long ftrun waits for the ranks' answers (default 2s; at most 60s)
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ftmpi/base/json_value.hpp"
#include "ftmpi/base/status.hpp"

namespace ftmpi::rte {

inline constexpr std::string_view kControlMagic = "ftmpi-control";
inline constexpr std::uint32_t kControlVersion = 1;
inline constexpr std::chrono::seconds kControlDefaultTimeout{2};
inline constexpr std::chrono::seconds kControlMaxTimeout{60};

enum class ControlOp : std::uint8_t { stats, disable, enable, ping, inject, clear, faults, events, record };
std::string_view to_string(ControlOp op) noexcept;

struct ControlRequest {
  ControlOp op = ControlOp::stats;
  std::string rail;                 // disable, enable (required); inject, clear (empty: every rail)
  std::string spec;                 // inject
  std::uint64_t after = 0;          // events
  std::vector<std::uint32_t> ranks;  // sorted, unique; empty: every rank
  std::vector<std::uint32_t> peers;  // sorted, unique; empty: every peer
  std::chrono::nanoseconds timeout = kControlDefaultTimeout;

  bool operator==(const ControlRequest&) const = default;
  // Whether `rank` (or `peer`) is one the request names.
  bool names_rank(std::uint32_t rank) const;
  bool names_peer(std::uint32_t peer) const;
};

// One request line (without its newline). Errors say what is wrong: "control request: unknown
// operation 'bogus' (known: stats, disable, enable)".
base::Result<ControlRequest> parse_control_request(std::string_view line);
// The canonical line; parse_control_request(to_string(r)) == r.
std::string to_string(const ControlRequest& request);
// "0,2,5-7" -> {0, 2, 5, 6, 7}; ranks below kMaxJobSize.
base::Result<std::vector<std::uint32_t>> parse_rank_list(std::string_view text);
std::string rank_list_text(const std::vector<std::uint32_t>& ranks);

// $XDG_RUNTIME_DIR/ftmpi when XDG_RUNTIME_DIR is set, else /tmp/ftmpi-<uid>.
std::string runtime_directory();

// What ftrun records of a job for the tools.
struct JobRecord {
  std::string id;        // 16 hex digits, as FTMPI_JOB_ID
  pid_t pid = 0;         // ftrun's
  std::string command;   // the program and its arguments, space-separated
  std::int64_t started = 0;  // Unix time, seconds
  std::uint32_t ranks = 0;
  std::vector<std::string> hosts;  // distinct, in rank order
  std::string socket;    // the control socket's path
  // Set when one rank serves this record and socket (started by srun, with no ftrun): every rank of the
  // job has its own, on its own host, named <job id>.rank<R>.{json,sock}.
  std::optional<std::uint32_t> served_rank;
  // Filled by list_jobs, which lists such a job once: the sockets of its ranks on this host, by rank.
  std::vector<std::string> rank_sockets;

  std::string to_json() const;
  static base::Result<JobRecord> from_json(std::string_view text);
};

// The jobs of this user whose ftrun (or, for a job whose ranks serve themselves, a rank) still runs,
// oldest first; the records of one job's ranks are merged into one (rank_sockets). A record whose
// process is gone (killed before it could clean up) is removed with its socket when `clean_stale`;
// `stale`, if given, receives how many were.
base::Result<std::vector<JobRecord>> list_jobs(bool clean_stale, std::size_t* stale = nullptr);

// Picks a job: `which` is a job id or a unique prefix of one; empty: the user's only job. Errors say
// why not ("no running job", "2 jobs are running (...): name one", "no job 'ab'").
base::Result<JobRecord> find_job(std::string_view which);

// Sends one request line to the job's socket and returns ftrun's answer (JSON). Waits at most
// request.timeout plus a margin for ftrun itself. peer_unreachable: the job ended (its socket is gone
// or refuses).
base::Result<std::string> send_control_request(const JobRecord& job, const ControlRequest& request);

// A request as a tool makes it (ftpath, ftinject): ftrun's answer parsed, and whether every rank named
// accepted and answered.
struct ControlAnswer {
  JobRecord job;
  base::JsonValue reply;
  bool refused = false;  // some rank said no: {"ok": false, "error", "code"} in reply["ranks"]
  bool missing = false;  // some rank did not answer or was not asked: reply["missing"]
};
// send_control_request, its answer parsed. Errors: send_control_request's (peer_unreachable: the job has
// ended), internal when the answer is not JSON, and ftrun's own refusal of the request: invalid_argument
// ("job ID: why"), or resource_exhausted when too many tools are connected to the job. A job whose ranks
// serve themselves is asked at each socket of rank_sockets, and the answers merged into one as ftrun
// would give it: the ranks of other hosts are missing, with the reason.
base::Result<ControlAnswer> ask_job(const JobRecord& job, const ControlRequest& request);

}  // namespace ftmpi::rte

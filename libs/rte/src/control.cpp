// The control plane's shared parts (control.hpp): the request language, the runtime directory and job
// records, and a tool's side of a request. ftrun's side is control_service.cpp.
#include "ftmpi/rte/control.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "ftmpi/base/json.hpp"
#include "ftmpi/base/json_value.hpp"
#include "ftmpi/base/params.hpp"
#include "ftmpi/rte/fd.hpp"
#include "ftmpi/rte/job.hpp"
#include "sys.hpp"

namespace ftmpi::rte {
namespace {

using base::Errc;
using base::Result;
using base::Status;

Status request_error(const std::string& problem) {
  return Status(Errc::invalid_argument, "control request: " + problem);
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front())) != 0) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back())) != 0) s.remove_suffix(1);
  return s;
}

Result<std::uint32_t> parse_rank(std::string_view text, std::string_view list) {
  std::uint32_t rank = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), rank);
  if (ec != std::errc() || end != text.data() + text.size() || text.empty()) {
    return Status(Errc::invalid_argument, "'" + std::string(list) + "': '" + std::string(text) + "' is not a rank");
  }
  if (rank >= kMaxJobSize) {
    return Status(Errc::out_of_range, "'" + std::string(list) + "': rank " + std::string(text) +
                                          " is beyond the largest job (" + std::to_string(kMaxJobSize) + " ranks)");
  }
  return rank;
}

// Rail names come from operators ("eth1", "10.0.0.1"); what the line syntax uses is refused.
bool rail_name_ok(std::string_view rail) {
  return !rail.empty() && rail.size() <= 255 && std::all_of(rail.begin(), rail.end(), [](char c) {
           return std::isgraph(static_cast<unsigned char>(c)) != 0 && c != '=';
         });
}

std::string duration_text(std::chrono::nanoseconds d) {
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(d).count();
  return ms % 1000 == 0 ? std::to_string(ms / 1000) + "s" : std::to_string(ms) + "ms";
}

bool process_alive(pid_t pid) { return pid > 0 && (::kill(pid, 0) == 0 || errno == EPERM); }

}  // namespace

std::string_view to_string(ControlOp op) noexcept {
  switch (op) {
    case ControlOp::stats: return "stats";
    case ControlOp::disable: return "disable";
    case ControlOp::enable: return "enable";
    case ControlOp::ping: return "ping";
    case ControlOp::inject: return "inject";
    case ControlOp::clear: return "clear";
    case ControlOp::faults: return "faults";
    case ControlOp::events: return "events";
    case ControlOp::record: return "record";
  }
  return "?";
}

bool ControlRequest::names_rank(std::uint32_t rank) const {
  return ranks.empty() || std::binary_search(ranks.begin(), ranks.end(), rank);
}

bool ControlRequest::names_peer(std::uint32_t peer) const {
  return peers.empty() || std::binary_search(peers.begin(), peers.end(), peer);
}

Result<std::vector<std::uint32_t>> parse_rank_list(std::string_view text) {
  std::set<std::uint32_t> ranks;
  std::string_view rest = text;
  if (trim(text).empty()) return Status(Errc::invalid_argument, "an empty rank list");
  while (!rest.empty()) {
    const std::size_t comma = rest.find(',');
    const std::string_view item = trim(rest.substr(0, comma));
    rest = comma == std::string_view::npos ? std::string_view{} : rest.substr(comma + 1);
    if (item.empty()) return Status(Errc::invalid_argument, "'" + std::string(text) + "': an empty item");
    const std::size_t dash = item.find('-');
    auto first = parse_rank(trim(item.substr(0, dash)), text);
    if (!first) return first.status();
    std::uint32_t last = *first;
    if (dash != std::string_view::npos) {
      auto end = parse_rank(trim(item.substr(dash + 1)), text);
      if (!end) return end.status();
      if (*end < *first) {
        return Status(Errc::invalid_argument, "'" + std::string(text) + "': range " + std::string(item) + " runs backwards");
      }
      last = *end;
    }
    for (std::uint32_t r = *first; r <= last; ++r) ranks.insert(r);
  }
  return std::vector<std::uint32_t>(ranks.begin(), ranks.end());
}

std::string rank_list_text(const std::vector<std::uint32_t>& ranks) {
  std::string out;
  for (std::size_t i = 0; i < ranks.size();) {
    std::size_t j = i;
    while (j + 1 < ranks.size() && ranks[j + 1] == ranks[j] + 1) ++j;
    if (!out.empty()) out += ',';
    out += std::to_string(ranks[i]);
    if (j > i) out += "-" + std::to_string(ranks[j]);
    i = j + 1;
  }
  return out;
}

Result<ControlRequest> parse_control_request(std::string_view line) {
  std::vector<std::string_view> words;
  for (std::string_view rest = trim(line); !rest.empty();) {
    const auto space = std::find_if(rest.begin(), rest.end(), [](char c) { return c == ' ' || c == '\t'; });
    words.push_back(rest.substr(0, static_cast<std::size_t>(space - rest.begin())));
    rest = trim(rest.substr(static_cast<std::size_t>(space - rest.begin())));
  }
  if (words.empty() || words[0] != kControlMagic) {
    return request_error("does not start with '" + std::string(kControlMagic) + "'");
  }
  if (words.size() < 2 || words[1] != std::to_string(kControlVersion)) {
    return request_error("protocol version '" + std::string(words.size() < 2 ? "" : words[1]) +
                         "' is not the one this ftrun speaks (" + std::to_string(kControlVersion) + ")");
  }
  constexpr std::string_view kKnownOps = "stats, disable, enable, ping, inject, clear, faults, events, record";
  if (words.size() < 3) return request_error("no operation (" + std::string(kKnownOps) + ")");
  ControlRequest request;
  bool known = false;
  for (ControlOp op : {ControlOp::stats, ControlOp::disable, ControlOp::enable, ControlOp::ping, ControlOp::inject,
                       ControlOp::clear, ControlOp::faults, ControlOp::events, ControlOp::record}) {
    if (words[2] == to_string(op)) {
      request.op = op;
      known = true;
    }
  }
  if (!known) {
    return request_error("unknown operation '" + std::string(words[2]) + "' (known: " + std::string(kKnownOps) + ")");
  }
  const bool rails = request.op == ControlOp::disable || request.op == ControlOp::enable;
  const bool faults = request.op == ControlOp::inject || request.op == ControlOp::clear;
  std::set<std::string_view> seen;
  for (std::size_t i = 3; i < words.size(); ++i) {
    const std::size_t eq = words[i].find('=');
    if (eq == std::string_view::npos || eq == 0) {
      return request_error("'" + std::string(words[i]) + "' is not KEY=VALUE");
    }
    const std::string_view key = words[i].substr(0, eq);
    const std::string_view value = words[i].substr(eq + 1);
    if (!seen.insert(key).second) return request_error(std::string(key) + " given twice");
    if (key == "rail") {
      if (!rails && !faults) return request_error(std::string(to_string(request.op)) + " takes no rail");
      if (!rail_name_ok(value)) return request_error("'" + std::string(value) + "' is not a rail name or index");
      request.rail = std::string(value);
    } else if (key == "ranks" || key == "peers") {
      if (key == "peers" && !rails) return request_error(std::string(to_string(request.op)) + " takes no peers");
      auto list = parse_rank_list(value);
      if (!list) return request_error(std::string(key) + ": " + list.status().message());
      (key == "ranks" ? request.ranks : request.peers) = std::move(*list);
    } else if (key == "timeout") {
      auto timeout = base::parse_duration(value);
      if (!timeout) return request_error("timeout: " + timeout.status().message());
      if (*timeout <= std::chrono::nanoseconds(0) || *timeout > kControlMaxTimeout) {
        return request_error("timeout must be above 0 and at most " + duration_text(kControlMaxTimeout));
      }
      request.timeout = *timeout;
    } else if (key == "spec") {
      if (request.op != ControlOp::inject) return request_error(std::string(to_string(request.op)) + " takes no spec");
      // The rank parses the SPEC (path/fault.hpp); here it only has to be one word of the line.
      if (value.empty() || value.size() > 1024 ||
          !std::all_of(value.begin(), value.end(), [](char c) { return std::isgraph(static_cast<unsigned char>(c)) != 0; })) {
        return request_error("'" + std::string(value) + "' is not a fault SPEC");
      }
      request.spec = std::string(value);
    } else if (key == "after") {
      if (request.op != ControlOp::events) return request_error(std::string(to_string(request.op)) + " takes no after");
      auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), request.after);
      if (ec != std::errc() || end != value.data() + value.size() || value.empty()) {
        return request_error("after: '" + std::string(value) + "' is not an event number");
      }
    } else {
      return request_error("unknown key '" + std::string(key) + "' (known: rail, ranks, peers, timeout, spec, after)");
    }
  }
  if (rails && request.rail.empty()) {
    return request_error(std::string(to_string(request.op)) + " needs rail=R");
  }
  if (request.op == ControlOp::inject && request.spec.empty()) return request_error("inject needs spec=SPEC");
  return request;
}

std::string to_string(const ControlRequest& request) {
  std::string out = std::string(kControlMagic) + " " + std::to_string(kControlVersion) + " " +
                    std::string(to_string(request.op));
  if (!request.rail.empty()) out += " rail=" + request.rail;
  if (!request.spec.empty()) out += " spec=" + request.spec;
  if (request.after != 0) out += " after=" + std::to_string(request.after);
  if (!request.ranks.empty()) out += " ranks=" + rank_list_text(request.ranks);
  if (!request.peers.empty()) out += " peers=" + rank_list_text(request.peers);
  if (request.timeout != std::chrono::nanoseconds(kControlDefaultTimeout)) {
    const std::int64_t ns = request.timeout.count();
    // The largest unit that keeps it exact.
    out += " timeout=" + (ns % 1'000'000'000 == 0 ? std::to_string(ns / 1'000'000'000) + "s"
                          : ns % 1'000'000 == 0  ? std::to_string(ns / 1'000'000) + "ms"
                          : ns % 1'000 == 0      ? std::to_string(ns / 1'000) + "us"
                                                 : std::to_string(ns) + "ns");
  }
  return out;
}

std::string runtime_directory() {
  const char* xdg = std::getenv("XDG_RUNTIME_DIR");
  if (xdg != nullptr && xdg[0] == '/') return std::string(xdg) + "/ftmpi";
  return "/tmp/ftmpi-" + std::to_string(::getuid());
}

std::string JobRecord::to_json() const {
  base::JsonWriter w;
  w.begin_object()
      .field("id", id)
      .field("pid", std::int64_t{pid})
      .field("command", command)
      .field("started", started)
      .field("ranks", ranks)
      .key("hosts")
      .begin_array();
  for (const std::string& h : hosts) w.value(h);
  w.end_array().field("socket", socket);
  if (served_rank) w.field("rank", *served_rank);
  w.end_object();
  return std::move(w).text();
}

Result<JobRecord> JobRecord::from_json(std::string_view text) {
  auto parsed = base::parse_json(text);
  if (!parsed) return Status(Errc::malformed, "job record: " + parsed.status().message());
  const base::JsonValue& v = *parsed;
  JobRecord r;
  r.id = v["id"].as_string();
  r.pid = static_cast<pid_t>(v["pid"].as_i64());
  r.command = v["command"].as_string();
  r.started = v["started"].as_i64();
  r.ranks = static_cast<std::uint32_t>(v["ranks"].as_u64());
  for (const base::JsonValue& h : v["hosts"].items()) r.hosts.push_back(h.as_string());
  r.socket = v["socket"].as_string();
  if (const base::JsonValue* rank = v.find("rank"); rank != nullptr && rank->is_exact_integer()) {
    r.served_rank = static_cast<std::uint32_t>(rank->as_u64());
  }
  if (r.id.empty() || r.pid <= 0 || r.socket.empty()) return Status(Errc::malformed, "job record: fields missing");
  return r;
}

namespace {

// The records of ranks that serve themselves, one per rank: one job each, as the lowest rank's record
// with every rank's socket (by rank) and every host.
void merge_rank_records(std::vector<JobRecord>& jobs) {
  std::sort(jobs.begin(), jobs.end(), [](const JobRecord& a, const JobRecord& b) {
    return a.id != b.id ? a.id < b.id : a.served_rank.value_or(0) < b.served_rank.value_or(0);
  });
  std::vector<JobRecord> merged;
  for (JobRecord& j : jobs) {
    if (j.served_rank && !merged.empty() && merged.back().served_rank && merged.back().id == j.id) {
      JobRecord& job = merged.back();
      job.rank_sockets.push_back(j.socket);
      for (std::string& h : j.hosts) {
        if (std::find(job.hosts.begin(), job.hosts.end(), h) == job.hosts.end()) job.hosts.push_back(std::move(h));
      }
      continue;
    }
    if (j.served_rank) j.rank_sockets = {j.socket};
    merged.push_back(std::move(j));
  }
  jobs = std::move(merged);
}

}  // namespace

Result<std::vector<JobRecord>> list_jobs(bool clean_stale, std::size_t* stale) {
  if (stale != nullptr) *stale = 0;
  std::vector<JobRecord> jobs;
  const std::filesystem::path dir = runtime_directory();
  std::error_code ec;
  if (!std::filesystem::exists(dir, ec)) return jobs;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    if (entry.path().extension() != ".json") continue;
    std::ifstream in(entry.path());
    std::stringstream text;
    text << in.rdbuf();
    auto record = JobRecord::from_json(text.str());
    if (!record) continue;  // being written, or not ours to judge
    if (!process_alive(record->pid)) {
      if (clean_stale) {
        std::filesystem::remove(entry.path(), ec);
        std::filesystem::remove(record->socket, ec);
      }
      if (stale != nullptr) ++*stale;
      continue;
    }
    jobs.push_back(std::move(*record));
  }
  if (ec) return Status(Errc::io_error, "reading " + dir.string() + ": " + ec.message());
  merge_rank_records(jobs);
  std::sort(jobs.begin(), jobs.end(), [](const JobRecord& a, const JobRecord& b) {
    return a.started != b.started ? a.started < b.started : a.id < b.id;
  });
  return jobs;
}

Result<JobRecord> find_job(std::string_view which) {
  auto jobs = list_jobs(true);
  if (!jobs) return jobs.status();
  std::vector<JobRecord> matches;
  for (JobRecord& j : *jobs) {
    if (j.id.starts_with(which)) matches.push_back(std::move(j));
  }
  if (matches.size() == 1) return std::move(matches.front());
  std::string names;
  for (const JobRecord& j : matches) names += (names.empty() ? "" : ", ") + j.id;
  if (which.empty()) {
    if (matches.empty()) return Status(Errc::not_found, "no running job of yours (see ftpath list)");
    return Status(Errc::invalid_argument,
                  std::to_string(matches.size()) + " jobs are running (" + names + "): name one");
  }
  if (matches.empty()) return Status(Errc::not_found, "no running job '" + std::string(which) + "' (see ftpath list)");
  return Status(Errc::invalid_argument, "'" + std::string(which) + "' names " + std::to_string(matches.size()) +
                                            " jobs (" + names + "): give more of the id");
}

Result<std::string> send_control_request(const JobRecord& job, const ControlRequest& request) {
  const auto ended = [&](const std::string& why) {
    return Status(Errc::peer_unreachable, "job " + job.id + " has ended (" + why + ")");
  };
  UniqueFd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!fd) return sys::errno_status(Errc::io_error, "socket");
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  if (job.socket.size() >= sizeof address.sun_path) return Status(Errc::invalid_argument, "socket path too long");
  std::memcpy(address.sun_path, job.socket.c_str(), job.socket.size() + 1);
  if (::connect(fd.get(), reinterpret_cast<const sockaddr*>(&address), sizeof address) != 0) {
    if (errno == ENOENT || errno == ECONNREFUSED) return ended(std::strerror(errno));
    return sys::errno_status(Errc::io_error, "connecting to " + job.socket);
  }
  if (Status s = sys::send_all(fd.get(), to_string(request) + "\n"); !s) return ended(s.message());
  // ftrun answers by the request's timeout; the margin covers ftrun itself on a loaded machine.
  const auto deadline = sys::Clock::now() + request.timeout + std::chrono::seconds(10);
  std::string reply;
  for (;;) {
    pollfd p{fd.get(), POLLIN, 0};
    const int ready = ::poll(&p, 1, sys::poll_timeout_ms(deadline, sys::Clock::now()));
    if (ready < 0 && errno == EINTR) continue;
    if (ready < 0) return sys::errno_status(Errc::io_error, "poll");
    if (ready == 0) return Status(Errc::io_error, "ftrun of job " + job.id + " did not answer in time");
    char buffer[64 * 1024];
    const ssize_t n = ::recv(fd.get(), buffer, sizeof buffer, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && reply.empty()) break;  // reset before any answer: as a close without one
    if (n < 0) return sys::errno_status(Errc::io_error, "reading the answer of job " + job.id);
    if (n == 0) break;
    reply.append(buffer, static_cast<std::size_t>(n));
  }
  if (reply.empty()) {
    return Status(Errc::peer_unreachable, "ftrun of job " + job.id +
                                              " closed the connection without an answer (the job ended, "
                                              "or its ftrun refused this user)");
  }
  return reply;
}

}  // namespace ftmpi::rte

namespace ftmpi::rte {

namespace {

// An answer's refusal of the whole request ({"error": why}), as an error.
Status refusal_of(const JobRecord& job, const base::JsonValue& reply) {
  const base::JsonValue* error = reply.find("error");
  if (error == nullptr) return {};
  return Status(error->as_string().starts_with("too many tools") ? Errc::resource_exhausted : Errc::invalid_argument,
                "job " + job.id + ": " + error->as_string());
}

Result<base::JsonValue> ask_socket(const JobRecord& job, const ControlRequest& request) {
  auto text = send_control_request(job, request);
  if (!text) return text.status();
  auto reply = base::parse_json(*text);
  if (!reply) return Status(Errc::internal, "ftrun's answer is not JSON: " + reply.status().message());
  if (Status s = refusal_of(job, *reply); !s) return s;
  return reply;
}

// A job whose ranks serve themselves: each rank's socket on this host answers for its rank, naming the
// others missing; one answer of them all, as ftrun would give it.
Result<base::JsonValue> ask_rank_sockets(const JobRecord& job, const ControlRequest& request) {
  std::map<std::uint64_t, base::JsonValue> answered;
  std::map<std::uint64_t, base::JsonValue> missing;
  std::size_t reached = 0;
  Status last_error;
  for (const std::string& socket : job.rank_sockets) {
    JobRecord one = job;
    one.socket = socket;
    one.rank_sockets.clear();
    auto reply = ask_socket(one, request);
    if (!reply) {
      if (reply.code() != Errc::peer_unreachable) return reply.status();
      last_error = reply.status();  // that rank has ended; the others may still answer
      continue;
    }
    ++reached;
    for (const base::JsonValue& r : (*reply)["ranks"].items()) answered.emplace(r["rank"].as_u64(), r);
    for (const base::JsonValue& m : (*reply)["missing"].items()) missing.emplace(m["rank"].as_u64(), m);
  }
  if (reached == 0) return last_error;
  std::vector<base::JsonValue> ranks;
  std::vector<base::JsonValue> not_answered;
  bool ok = true;
  for (auto& [rank, r] : answered) {
    ok = ok && r["ok"].as_bool();
    ranks.push_back(std::move(r));
  }
  for (auto& [rank, m] : missing) {
    if (answered.count(rank) != 0) continue;
    ok = false;
    not_answered.push_back(std::move(m));
  }
  return base::JsonValue::object({{"version", base::JsonValue::number(kControlVersion)},
                                  {"job", base::JsonValue::string(job.id)},
                                  {"operation", base::JsonValue::string(std::string(to_string(request.op)))},
                                  {"ranks", base::JsonValue::array(std::move(ranks))},
                                  {"missing", base::JsonValue::array(std::move(not_answered))},
                                  {"ok", base::JsonValue::boolean(ok)}});
}

}  // namespace

Result<ControlAnswer> ask_job(const JobRecord& job, const ControlRequest& request) {
  auto reply = job.rank_sockets.empty() ? ask_socket(job, request) : ask_rank_sockets(job, request);
  if (!reply) return reply.status();
  ControlAnswer answer{job, std::move(*reply), false, false};
  const base::JsonValue& r = answer.reply;
  for (const base::JsonValue& rank : r["ranks"].items()) answer.refused = answer.refused || !rank["ok"].as_bool();
  answer.missing = !r["missing"].items().empty();
  return answer;
}

}  // namespace ftmpi::rte

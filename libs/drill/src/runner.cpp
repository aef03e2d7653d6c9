// Runs a drill (runner.hpp): the launched program, the polling loop, the steps, and the end.
#include "ftmpi/drill/runner.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <set>
#include <thread>

#include "ftmpi/base/compress.hpp"
#include "ftmpi/base/json_value.hpp"
#include "ftmpi/base/text_table.hpp"
#include "ftmpi/rte/control.hpp"

extern char** environ;

namespace ftmpi::drill {
namespace {

using base::Errc;
using base::JsonValue;
using base::Result;
using base::Status;
using Clock = std::chrono::steady_clock;

std::int64_t now_us() {
  return std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// The launched program: its stdout comes to us line by line.
struct Child {
  pid_t pid = -1;
  int out = -1;
  std::string partial;
  std::optional<int> status;  // once it exited: its exit status (128 + signal when killed)

  bool running() const { return pid > 0 && !status; }
};

Result<Child> start_child(const std::vector<std::string>& command, const std::vector<std::string>& extra_env) {
  int pipefd[2];
  if (::pipe2(pipefd, O_CLOEXEC) != 0) return Status(Errc::io_error, std::string("pipe: ") + std::strerror(errno));
  std::vector<std::string> env;
  for (char** e = environ; *e != nullptr; ++e) env.emplace_back(*e);
  for (const std::string& e : extra_env) env.push_back(e);
  std::vector<char*> envp;
  for (std::string& e : env) envp.push_back(e.data());
  envp.push_back(nullptr);
  std::vector<std::string> args = command;
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  const pid_t pid = ::fork();
  if (pid < 0) return Status(Errc::io_error, std::string("fork: ") + std::strerror(errno));
  if (pid == 0) {
    ::dup2(pipefd[1], STDOUT_FILENO);
    ::execvpe(argv[0], argv.data(), envp.data());
    std::fprintf(stderr, "ftinject: cannot run %s: %s\n", argv[0], std::strerror(errno));
    ::_exit(127);
  }
  ::close(pipefd[1]);
  ::fcntl(pipefd[0], F_SETFL, O_NONBLOCK);
  Child child;
  child.pid = pid;
  child.out = pipefd[0];
  return child;
}

// Passes on the lines the program wrote; notes its exit.
void service_child(Child& child, const std::function<void(const std::string&)>& line) {
  if (child.out >= 0) {
    char buf[65536];
    for (;;) {
      const ssize_t n = ::read(child.out, buf, sizeof buf);
      if (n > 0) {
        child.partial.append(buf, static_cast<std::size_t>(n));
        std::size_t nl = 0;
        while ((nl = child.partial.find('\n')) != std::string::npos) {
          line(child.partial.substr(0, nl));
          child.partial.erase(0, nl + 1);
        }
        continue;
      }
      if (n == 0) {  // the program and everything it started closed stdout
        if (!child.partial.empty()) line(child.partial);
        child.partial.clear();
        ::close(child.out);
        child.out = -1;
      }
      break;
    }
  }
  if (child.running()) {
    int status = 0;
    if (::waitpid(child.pid, &status, WNOHANG) == child.pid) {
      child.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    }
  }
}

// A shell command of a `run` step: its exit status, or why it could not run; bounded to a minute.
std::string run_command(const std::string& command, bool& ok) {
  ok = false;
  const pid_t pid = ::fork();
  if (pid < 0) return std::string("fork: ") + std::strerror(errno);
  if (pid == 0) {
    ::execl("/bin/sh", "sh", "-c", command.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  const auto deadline = Clock::now() + std::chrono::minutes(1);
  int status = 0;
  while (::waitpid(pid, &status, WNOHANG) == 0) {
    if (Clock::now() > deadline) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &status, 0);
      return "still running after a minute: killed";
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
    ok = true;
    return "exit 0";
  }
  return WIFEXITED(status) ? "exit " + std::to_string(WEXITSTATUS(status))
                           : "killed by signal " + std::to_string(WTERMSIG(status));
}

// Whether `ancestor` is `pid` or one of its parents (the launched command may be `ip netns exec ... ftrun`).
bool descends_from(pid_t pid, pid_t ancestor) {
  for (int depth = 0; depth < 8 && pid > 1; ++depth) {
    if (pid == ancestor) return true;
    std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
    std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
    const std::size_t close = text.rfind(')');
    if (close == std::string::npos) return false;
    int parent = 0;
    if (std::sscanf(text.c_str() + close + 1, " %*c %d", &parent) != 1) return false;
    pid = parent;
  }
  return false;
}

struct Answer {
  bool reached = false;  // false: the job is gone
  JsonValue json;
  std::string error;      // ftrun's own refusal, or why the job could not be reached
};

Answer ask(const rte::JobRecord& job, const rte::ControlRequest& request) {
  Answer a;
  auto answer = rte::ask_job(job, request);
  if (!answer) {
    a.error = answer.status().message();
    a.reached = answer.code() != Errc::peer_unreachable && answer.code() != Errc::not_found;
    return a;
  }
  a.reached = true;
  a.json = std::move(answer->reply);
  return a;
}

rte::ControlRequest request_of(rte::ControlOp op) {
  rte::ControlRequest r;
  r.op = op;
  r.timeout = std::chrono::seconds(5);
  return r;
}


// What one stats poll says of the whole job.
struct Poll {
  std::int64_t at_us = 0;
  bool all = false;  // every rank answered
  std::vector<JsonValue> by_rank;
  std::map<std::uint32_t, std::uint64_t> rail_bytes;  // bytes sent on each rail, every rank
  std::map<std::uint32_t, std::string> rail_names;
  std::uint64_t sent = 0;
  std::uint64_t received = 0;
};

Poll read_poll(const JsonValue& answer, std::uint32_t size) {
  Poll p;
  p.at_us = now_us();
  p.by_rank.resize(size);
  std::uint32_t answered = 0;
  for (const JsonValue& r : answer["ranks"].items()) {
    const std::uint64_t rank = r["rank"].as_u64();
    if (!r["ok"].as_bool() || rank >= size) continue;
    const JsonValue& stats = r["reply"];
    p.by_rank[rank] = stats;
    ++answered;
    p.sent += stats["totals"]["bytes_sent"].as_u64();
    p.received += stats["totals"]["bytes_received"].as_u64();
    for (const JsonValue& rail : stats["rails"].items()) {
      p.rail_bytes[static_cast<std::uint32_t>(rail["index"].as_u64())] += rail["bytes_sent"].as_u64();
    }
    for (const JsonValue& path : stats["paths"].items()) {
      p.rail_names[static_cast<std::uint32_t>(path["index"].as_u64())] = path["name"].as_string();
    }
  }
  p.all = answered == size && answer["missing"].items().empty();
  return p;
}

class Drilling {
 public:
  Drilling(const Drill& drill, const RunOptions& options) : drill_(drill), options_(options) {}

  Result<RunResult> run();

 private:
  bool attach();
  bool launch();
  void poll_once();
  void read_events();
  bool step_due(const DrillStep& step) const;
  void run_step(const DrillStep& step);
  void control_step(Step& record, rte::ControlRequest request);
  void undo();
  void finish();
  void note_line(const std::string& line);
  void end_early(DrillEnd end, std::string message, Errc refusal = Errc::ok) {
    if (result_.end != DrillEnd::completed) return;
    result_.end = end;
    result_.message = std::move(message);
    result_.refusal = refusal;
  }
  bool job_alive() { return launched() ? child_.running() : job_reachable_; }
  bool launched() const { return !options_.command.empty(); }

  const Drill& drill_;
  const RunOptions& options_;
  RunResult result_;
  Child child_;
  std::string flight_dir_;
  rte::JobRecord job_;
  bool job_reachable_ = true;
  std::int64_t t0_us_ = 0;
  std::uint64_t sent_at_t0_ = 0;
  Poll last_;
  std::int64_t quiet_since_us_ = -1;  // the job's received bytes stopped growing here
  std::set<std::pair<std::uint32_t, std::uint64_t>> seen_events_;
  std::vector<std::uint64_t> events_read_;  // by rank: the last event number read
  Clock::time_point next_events_{};
  std::size_t next_step_ = 0;
  std::int64_t effects_end_us_ = 0;  // when the last step's effect ends
  struct AutoEnable {
    std::int64_t at_us;
    std::string rail;
    std::string ranks;
  };
  std::vector<AutoEnable> auto_enables_;
  std::vector<std::string> disabled_;  // rails the drill disabled and has not enabled
  bool injected_ = false;
};

bool Drilling::launch() {
  char dir[] = "/tmp/ftinject-XXXXXX";
  if (::mkdtemp(dir) == nullptr) {
    end_early(DrillEnd::no_job, std::string("cannot make a directory for the flight recorders: ") + std::strerror(errno));
    return false;
  }
  flight_dir_ = dir;
  auto child = start_child(options_.command, {"FTMPI_ENGINE_FLIGHT_WRITE=always", "FTMPI_ENGINE_FLIGHT_DIR=" + flight_dir_});
  if (!child) {
    end_early(DrillEnd::no_job, child.status().message());
    return false;
  }
  child_ = std::move(*child);
  result_.observed.launched = true;
  const auto deadline = Clock::now() + options_.start_timeout;
  while (Clock::now() < deadline) {
    service_child(child_, [&](const std::string& l) { note_line(l); });
    if (!child_.running()) {
      end_early(DrillEnd::no_job, "the program exited (status " + std::to_string(child_.status.value_or(-1)) +
                                      ") before its job answered");
      return false;
    }
    auto jobs = rte::list_jobs(false);
    if (jobs) {
      for (const rte::JobRecord& j : *jobs) {
        if (descends_from(j.pid, child_.pid)) {
          job_ = j;
          return true;
        }
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  end_early(DrillEnd::no_job, "the launched ftrun recorded no job within " +
                                  std::to_string(options_.start_timeout.count()) + " s (is the command ftrun?)");
  return false;
}

bool Drilling::attach() {
  auto job = rte::find_job(options_.job);
  if (!job) {
    end_early(DrillEnd::no_job, job.status().message());
    return false;
  }
  job_ = *job;
  return true;
}

void Drilling::note_line(const std::string& line) {
  if (options_.output) options_.output(line);
  // "ftinject: key=value" lines a checking program prints (bulk_transfer does).
  if (!line.starts_with("ftinject: ")) return;
  const std::size_t eq = line.find('=');
  if (eq == std::string::npos) return;
  const std::string key = line.substr(10, eq - 10);
  const std::string value = line.substr(eq + 1);
  char* end = nullptr;
  const unsigned long long v = std::strtoull(value.c_str(), &end, 10);
  if (end == value.c_str()) return;
  Observed& o = result_.observed;
  if (key == "corrupt_bytes") o.corrupt_bytes = o.corrupt_bytes.value_or(0) + v;
  if (key == "longest_stall_us") o.program_stall_us = std::max<std::int64_t>(o.program_stall_us.value_or(0), static_cast<std::int64_t>(v));
}

void Drilling::poll_once() {
  const Answer a = ask(job_, request_of(rte::ControlOp::stats));
  if (!a.reached) {
    job_reachable_ = false;
    return;
  }
  if (!a.error.empty()) return;
  Poll p = read_poll(a.json, job_.ranks);
  Timeline& t = result_.timeline;
  for (const auto& [rail, bytes] : p.rail_bytes) t.samples.push_back({p.at_us, rail, bytes});
  for (const auto& [index, name] : p.rail_names) {
    if (t.header.rails.size() <= index) t.header.rails.resize(index + 1);
    if (t.header.rails[index].empty()) t.header.rails[index] = name;  // as the lowest rank that answered names it
  }
  for (std::uint32_t r = 0; r < p.by_rank.size(); ++r) {
    if (r < result_.observed.end.size() && !p.by_rank[r].is_null()) result_.observed.end[r] = p.by_rank[r];
  }
  // The polled stall: a run of polls in which nothing arrived anywhere, counted once traffic resumes.
  if (p.all && last_.all && t0_us_ != 0) {
    if (p.received == last_.received) {
      if (quiet_since_us_ < 0) quiet_since_us_ = last_.at_us;
    } else if (quiet_since_us_ >= 0) {
      result_.observed.polled_stall_us = std::max(result_.observed.polled_stall_us, p.at_us - quiet_since_us_);
      quiet_since_us_ = -1;
    }
  }
  if (options_.progress && last_.all && p.all && p.at_us > last_.at_us) {
    char head[96];
    std::snprintf(head, sizeof head, "drill: step %zu/%zu  +%.1f s", std::min(next_step_ + 1, drill_.steps.size()),
                  drill_.steps.size(), static_cast<double>(p.at_us - t0_us_) / 1e6);
    std::string line = head;
    const double dt = static_cast<double>(p.at_us - last_.at_us) / 1e6;
    for (const auto& [rail, bytes] : p.rail_bytes) {
      const std::uint64_t before = last_.rail_bytes.count(rail) != 0 ? last_.rail_bytes.at(rail) : 0;
      line += "  rail " + std::to_string(rail) + ": " + base::human_rate(static_cast<double>(bytes - std::min(bytes, before)) / dt);
    }
    options_.progress(line);
  }
  if (p.all || !last_.all) last_ = std::move(p);
}

// Each rank's events after the last one read from it: one request for the ranks at the same point
// (at first all of them), so a rank with many events cannot hold back the others.
void Drilling::read_events() {
  std::map<std::uint64_t, std::vector<std::uint32_t>> by_cursor;
  for (std::uint32_t r = 0; r < job_.ranks; ++r) by_cursor[r < events_read_.size() ? events_read_[r] : 0].push_back(r);
  for (auto& [after, ranks] : by_cursor) {
    rte::ControlRequest request = request_of(rte::ControlOp::events);
    request.after = after;
    if (by_cursor.size() > 1) request.ranks = ranks;
    const Answer a = ask(job_, request);
    if (!a.reached || !a.error.empty()) return;
    for (const JsonValue& rank : a.json["ranks"].items()) {
      const auto id = static_cast<std::uint32_t>(rank["rank"].as_u64());
      if (!rank["ok"].as_bool() || id >= events_read_.size()) continue;
      for (const JsonValue& e : rank["reply"]["events"].items()) {
        auto event = event_from_json(base::to_json(e), id);
        if (!event) continue;
        events_read_[id] = std::max(events_read_[id], event->seq);
        if (seen_events_.insert({id, event->seq}).second) result_.timeline.events.push_back(std::move(*event));
      }
    }
  }
}

bool Drilling::step_due(const DrillStep& step) const {
  if (step.when.bytes) return last_.sent - std::min(last_.sent, sent_at_t0_) >= *step.when.bytes;
  return now_us() - t0_us_ >= std::chrono::duration_cast<std::chrono::microseconds>(step.when.time).count();
}

// A control request for a step: the step is ok when every rank accepted it.
void Drilling::control_step(Step& record, rte::ControlRequest request) {
  const Answer a = ask(job_, request);
  if (!a.reached) {
    record.ok = false;
    record.outcome = "the job has ended";
    job_reachable_ = false;
    end_early(DrillEnd::job_ended, "the job ended before step '" + record.text + "'");
    return;
  }
  if (!a.error.empty()) {
    record.ok = false;
    record.outcome = a.error;
    end_early(DrillEnd::step_refused, "step '" + record.text + "': " + a.error, Errc::invalid_argument);
    return;
  }
  for (const JsonValue& rank : a.json["ranks"].items()) {
    if (rank["ok"].as_bool()) continue;
    const std::string& code = rank["code"].as_string();
    record.ok = false;
    record.outcome = "rank " + std::to_string(rank["rank"].as_u64()) + ": " + rank["error"].as_string();
    end_early(DrillEnd::step_refused, "step '" + record.text + "' refused by " + record.outcome,
              code == "unknown_rail" ? Errc::not_found : code == "refused" ? Errc::unsupported : Errc::invalid_argument);
    return;
  }
  if (!a.json["missing"].items().empty()) {
    const JsonValue& m = a.json["missing"][std::size_t{0}];
    record.ok = false;
    record.outcome = "rank " + std::to_string(m["rank"].as_u64()) + " " + m["why"].as_string();
    // A rank that finalized or left: the job is ending under the drill.
    const bool ending = m["why"].as_string() == "finalized" || m["why"].as_string() == "disconnected";
    end_early(ending ? DrillEnd::job_ended : DrillEnd::step_failed, "step '" + record.text + "': " + record.outcome);
    return;
  }
  record.outcome.clear();  // every rank accepted it
}

// The index of the rail a request names, from the job's rail names ("1", "veth1", "10.0.0.1").
std::optional<std::uint32_t> rail_index(const std::vector<std::string>& names, const std::string& rail) {
  if (rail.empty()) return std::nullopt;
  if (std::all_of(rail.begin(), rail.end(), [](char c) { return c >= '0' && c <= '9'; }) && rail.size() < 6) {
    return static_cast<std::uint32_t>(std::stoul(rail));
  }
  for (std::uint32_t i = 0; i < names.size(); ++i) {
    const std::string& n = names[i];
    const std::string padded = " " + n + " ";
    if (padded.find(" " + rail + " ") != std::string::npos) return i;
  }
  return std::nullopt;
}

void Drilling::run_step(const DrillStep& step) {
  Step record;
  record.at_us = now_us();
  record.action = std::string(to_string(step.action));
  record.text = step.text;
  record.rail = rail_index(result_.timeline.header.rails, step.rail);
  rte::ControlRequest request = request_of(rte::ControlOp::stats);
  if (!step.ranks.empty()) {
    auto ranks = rte::parse_rank_list(step.ranks);
    if (!ranks) {
      record.ok = false;
      record.outcome = ranks.status().message();
      end_early(DrillEnd::step_refused, "step '" + step.text + "': ranks: " + ranks.status().message(), Errc::invalid_argument);
      result_.timeline.steps.push_back(std::move(record));
      return;
    }
    request.ranks = std::move(*ranks);
  }
  request.rail = step.rail;
  const auto lasts_us = step.lasts ? std::chrono::duration_cast<std::chrono::microseconds>(*step.lasts).count() : 0;
  switch (step.action) {
    case Action::inject:
      request.op = rte::ControlOp::inject;
      request.spec = step.spec;
      control_step(record, request);
      if (record.ok) {
        injected_ = true;
        if (lasts_us > 0) record.until_us = record.at_us + lasts_us;
      }
      break;
    case Action::clear:
      request.op = rte::ControlOp::clear;
      control_step(record, request);
      break;
    case Action::disable:
      request.op = rte::ControlOp::disable;
      control_step(record, request);
      if (record.ok) {
        disabled_.push_back(step.rail);
        if (lasts_us > 0) {
          record.until_us = record.at_us + lasts_us;
          auto_enables_.push_back({record.until_us, step.rail, step.ranks});
        }
      }
      break;
    case Action::enable:
      request.op = rte::ControlOp::enable;
      control_step(record, request);
      if (record.ok) std::erase(disabled_, step.rail);
      break;
    case Action::run: {
      bool ok = false;
      record.outcome = run_command(step.command, ok);
      record.ok = ok;
      if (!ok) end_early(DrillEnd::step_failed, "step '" + step.text + "': " + record.outcome);
      break;
    }
  }
  effects_end_us_ = std::max({effects_end_us_, record.at_us, record.until_us});
  result_.timeline.steps.push_back(std::move(record));
}

// A drill that ends early, or one attached to a job that goes on, leaves no fault and no disabled rail.
void Drilling::undo() {
  if (!job_reachable_ || (launched() && !child_.running())) return;
  if (injected_) (void)ask(job_, request_of(rte::ControlOp::clear));
  for (const std::string& rail : disabled_) {
    rte::ControlRequest r = request_of(rte::ControlOp::enable);
    r.rail = rail;
    (void)ask(job_, r);
  }
  injected_ = false;
  disabled_.clear();
}

// The end figures and every event: from the flight recorder files the ranks wrote at MPI_Finalize.
void Drilling::finish() {
  if (!flight_dir_.empty()) {
    if (DIR* d = ::opendir(flight_dir_.c_str())) {
      while (const dirent* entry = ::readdir(d)) {
        const std::string name = entry->d_name;
        if (!name.ends_with(".flight.zst")) continue;
        const std::string file = flight_dir_ + "/" + name;
        auto packed = base::read_file(file);
        auto text = packed ? base::zstd_decompress(*packed) : Result<std::string>(packed.status());
        auto json = text ? base::parse_json(*text) : Result<JsonValue>(text.status());
        ::unlink(file.c_str());
        if (!json) continue;
        const auto rank = static_cast<std::uint32_t>((*json)["rank"].as_u64());
        if (rank < result_.observed.end.size()) result_.observed.end[rank] = (*json)["stats"];
        for (const JsonValue& e : (*json)["events"].items()) {
          auto event = event_from_json(base::to_json(e), rank);
          if (event && seen_events_.insert({rank, event->seq}).second) result_.timeline.events.push_back(std::move(*event));
        }
      }
      ::closedir(d);
    }
    ::rmdir(flight_dir_.c_str());
  }
  auto& events = result_.timeline.events;
  std::stable_sort(events.begin(), events.end(), [](const Event& a, const Event& b) { return a.at_us < b.at_us; });
  result_.timeline.header.ended_us = now_us();
}

Result<RunResult> Drilling::run() {
  Timeline& t = result_.timeline;
  t.header.drill = options_.drill_name;
  for (const std::string& word : options_.command) t.header.command += (t.header.command.empty() ? "" : " ") + word;
  if (!(launched() ? launch() : attach())) {
    if (child_.running()) {  // it never showed a job: not ours to leave running
      ::kill(child_.pid, SIGTERM);
      while (child_.running() || child_.out >= 0) {
        service_child(child_, [&](const std::string& l) { note_line(l); });
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
      }
    }
    finish();
    return std::move(result_);
  }
  t.header.job = job_.id;
  if (!launched()) t.header.command = job_.command;
  result_.observed.start.resize(job_.ranks);
  result_.observed.end.resize(job_.ranks);
  events_read_.assign(job_.ranks, 0);
  result_.observed.poll_interval_us = std::chrono::duration_cast<std::chrono::microseconds>(options_.poll_interval).count();
  auto pass_output = [&](const std::string& l) { note_line(l); };

  // Time zero: every rank answers.
  const auto deadline = Clock::now() + options_.start_timeout;
  while (!last_.all) {
    service_child(child_, pass_output);
    if (!job_alive() || Clock::now() > deadline) {
      end_early(launched() && !child_.running() ? DrillEnd::job_ended : DrillEnd::no_job,
                "the job's ranks did not all answer (it ended, or is still starting)");
      break;
    }
    poll_once();
    if (!last_.all) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  if (last_.all) {
    t0_us_ = last_.at_us;
    t.header.started_us = t0_us_;
    sent_at_t0_ = last_.sent;
    result_.observed.start = last_.by_rank;
    // A counter the expectations name must exist, before anything is injected.
    for (const DrillExpectation& e : drill_.expectations) {
      static const std::set<std::string> special = {"exit", "corruption_detected", "corrupt_bytes", "stall", "failback"};
      if (special.count(e.name) == 0 && !is_known_counter(last_.by_rank[0], e.name)) {
        end_early(DrillEnd::step_refused, "expect " + e.name + " (line " + std::to_string(e.line) +
                                              "): the ranks have no such counter", Errc::invalid_argument);
      }
    }
  }

  bool done_file_made = false;
  while (result_.end == DrillEnd::completed) {
    const auto round = Clock::now();
    service_child(child_, pass_output);
    poll_once();
    if (Clock::now() >= next_events_) {
      read_events();
      next_events_ = Clock::now() + std::chrono::seconds(1);
    }
    const std::int64_t now = now_us();
    for (auto it = auto_enables_.begin(); it != auto_enables_.end();) {
      if (now < it->at_us) {
        ++it;
        continue;
      }
      DrillStep enable;
      enable.action = Action::enable;
      enable.rail = it->rail;
      enable.ranks = it->ranks;
      enable.text = "enable rail=" + it->rail + " (the disable's for= ended)";
      it = auto_enables_.erase(it);
      run_step(enable);
    }
    while (next_step_ < drill_.steps.size() && result_.end == DrillEnd::completed && step_due(drill_.steps[next_step_])) {
      if (!job_alive()) break;
      run_step(drill_.steps[next_step_++]);
    }
    const bool steps_done = next_step_ == drill_.steps.size() && auto_enables_.empty();
    if (steps_done && now >= effects_end_us_ && !done_file_made) {
      done_file_made = true;
      if (!options_.done_file.empty()) {
        std::ofstream(options_.done_file).put('\n');
      }
    }
    if (launched()) {
      if (!child_.running()) {
        if (!steps_done) {
          end_early(DrillEnd::job_ended,
                    "the job ended before " + (next_step_ < drill_.steps.size()
                                                   ? "step " + std::to_string(next_step_ + 1) + " of " +
                                                         std::to_string(drill_.steps.size())
                                                   : std::string("a disabled rail was enabled again")));
        }
        break;
      }
    } else {
      if (!job_reachable_) {
        end_early(DrillEnd::job_ended, "the job ended during the drill");
        break;
      }
      if (steps_done && now >= effects_end_us_ + std::chrono::duration_cast<std::chrono::microseconds>(options_.settle).count()) {
        read_events();
        break;
      }
    }
    std::this_thread::sleep_until(round + options_.poll_interval);
  }
  if (result_.end != DrillEnd::completed || !launched()) undo();
  if (launched()) {
    if (child_.running() && result_.end != DrillEnd::completed) ::kill(child_.pid, SIGTERM);  // the drill is void
    while (child_.running() || child_.out >= 0) {
      service_child(child_, pass_output);
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    result_.observed.exit_status = child_.status;
  }
  finish();
  if (result_.end == DrillEnd::completed) {
    t.verdict = judge(drill_, t, result_.observed);
    result_.passed = std::all_of(t.verdict.begin(), t.verdict.end(), [](const Check& c) { return c.pass; });
  }
  return std::move(result_);
}

}  // namespace

Result<RunResult> run_drill(const Drill& drill, const RunOptions& options) {
  Drilling drilling(drill, options);
  return drilling.run();
}

}  // namespace ftmpi::drill

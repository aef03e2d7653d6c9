// run_job: one job, from fork to the last byte of output.
//
// Everything happens in one poll() loop on one thread: the control server, every rank's stdout and
// stderr pipes, ftrun's stdin, and a signalfd for SIGCHLD/SIGINT/SIGTERM/SIGHUP (blocked for the job's
// duration, so no handler runs between poll() calls). Within one wake-up the control connections are
// read before exit statuses are looked at; an abort or a finalize is acknowledged before the rank exits,
// so by the time a rank's SIGCHLD is handled ftrun knows whether it aborted or finalized.
//
// A rank on another host is, to this loop, its launch agent: ftrun's child, whose pipes carry the rank's
// output, whose exit status is the rank's (as ssh reports it), and whose process group receives the
// signals meant for the rank. Its rank still connects to the server itself, over the network.
//
// The first failure decides the exit status and the one-line summary; it sends SIGTERM (and SIGCONT) to
// every rank's process group and arms a SIGKILL after rte.kill_grace. Later deaths are consequences and
// are not reported.
#include "ftmpi/rte/launcher.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <memory>
#include <array>
#include <cstring>
#include <map>
#include <optional>
#include <set>

#include "binding.hpp"
#include "control_service.hpp"
#include "ftmpi/base/json_value.hpp"
#include "ftmpi/base/log.hpp"
#include "ftmpi/rte/hosts.hpp"
#include "ftmpi/rte/job.hpp"
#include "ftmpi/rte/params.hpp"
#include "ftmpi/rte/remote.hpp"
#include "ftmpi/rte/server.hpp"
#include "output.hpp"
#include "spawn.hpp"
#include "sys.hpp"

namespace ftmpi::rte {
namespace {

using base::Errc;
using base::Result;
using base::Status;

constexpr std::size_t kStdinBufferBytes = 64 * 1024;
constexpr std::size_t kReadChunk = 64 * 1024;
constexpr int kForwardedSignals[] = {SIGINT, SIGTERM, SIGHUP};
// How long a failed job waits for its ranks to write their flight recorders before SIGTERM.
constexpr auto kRecordWait = std::chrono::seconds(1);

std::string signal_text(int signo) {
  const char* name = sigdescr_np(signo);
  return "signal " + std::to_string(signo) + " (" + (name != nullptr ? name : "unknown") + ")";
}

// The name of a "NAME=value" environment entry.
std::string_view env_entry_name(std::string_view entry) { return entry.substr(0, entry.find('=')); }

// Signals a rank and whatever it started in its process group; falls back to the rank alone if it
// moved itself to another group.
void signal_rank(pid_t pid, int signo) {
  if (::kill(-pid, signo) != 0) ::kill(pid, signo);
}

struct Rank {
  std::uint32_t index = 0;
  pid_t pid = -1;  // the rank itself, or the launch agent of a remote rank
  bool running = false;
  bool aborted = false;
  // Set for a rank on another host: its host's name, and its pid there once it has said hello.
  bool remote = false;
  std::string host;
  std::uint32_t remote_pid = 0;
  UniqueFd out;  // read ends of the rank's stdout and stderr pipes, closed at EOF
  UniqueFd err;
  std::optional<LineForwarder> out_lines;
  std::optional<LineForwarder> err_lines;
  Clock::time_point disconnect_deadline = Clock::time_point::max();

  std::string who() const {
    const std::string rank = "rank " + std::to_string(index);
    if (!remote) return rank + " (pid " + std::to_string(pid) + ")";
    if (remote_pid == 0) return rank + " (on " + host + ")";
    return rank + " (pid " + std::to_string(remote_pid) + " on " + host + ")";
  }
};

class Job {
 public:
  Job(const LaunchSpec& spec, const base::ParamSet& params) : spec_(spec), params_(params) {}
  Job(const Job&) = delete;
  Job& operator=(const Job&) = delete;
  ~Job();

  Result<JobOutcome> run();

 private:
  Status start();
  Status block_signals();
  std::vector<std::string> base_environment() const;
  // Decides each rank's host, whether it is remote, and its local rank among the ranks of its host.
  Status place();
  // Writes the secret line into a new pipe for a remote rank's stdin; returns the read end.
  Result<UniqueFd> secret_stdin(bool keep_open_for_stdin);
  Result<std::string> remote_command(const JobInfo& job, const std::vector<std::string>& env_base) const;
  // Removes the job's shared-memory segments on every other host the job used, through the agent.
  void clean_remote_hosts();
  void open_control();
  // Runs until every rank has exited and its output is forwarded; an error only if poll() itself fails.
  Status loop();
  void on_server_events(Clock::time_point now);
  void on_stdin(short stdin_revents, short pipe_revents);
  void on_output(Rank& rank, bool is_err);
  void on_signals(Clock::time_point now);
  void reap(Clock::time_point now);
  void judge(Rank& rank, int status, Clock::time_point now);
  void check_fence_stall(Clock::time_point now);
  void on_deadlines(Clock::time_point now);
  // Records the first failure and terminates the job (unless `terminate_job` is false).
  void fail(int exit_code, std::string summary, Clock::time_point now, bool terminate_job = true);
  // "; terminating the job" when there are ranks left to terminate, for summaries.
  std::string consequence() const;
  // Where the ranks still running stand, for the timeout's summary.
  std::string still_running() const;
  void terminate(int signo, Clock::time_point now);
  // Before a failed job is terminated, the ranks that still poll write their flight recorders for the
  // post-mortem (control op `record`, docs/ftinject.md): asked once, waited for at most kRecordWait.
  bool ask_for_records(Clock::time_point now);
  void on_record_reply(const RankEvent& e);
  void close_stdin_pipe();
  bool any_running() const;
  bool any_output_open() const;

  const LaunchSpec& spec_;
  const base::ParamSet& params_;
  JobIdentity identity_;
  bool identity_made_ = false;
  std::optional<Server> server_;
  std::unique_ptr<ControlService> control_;  // null when the runtime directory could not be used
  std::vector<Rank> ranks_;
  std::vector<JobInfo> jobs_;  // each rank's contract, filled by place()
  bool any_remote_ = false;
  std::vector<std::string> agent_environment_;
  sigset_t job_signals_{};
  sigset_t old_mask_{};
  bool signals_blocked_ = false;
  UniqueFd signal_fd_;
  UniqueFd stdin_pipe_;  // write end of rank 0's stdin
  bool stdin_open_ = false;
  std::string stdin_buffer_;
  std::optional<JobOutcome> failure_;
  bool terminating_ = false;
  Clock::time_point time_limit_ = Clock::time_point::max();
  Clock::time_point kill_deadline_ = Clock::time_point::max();
  Clock::time_point linger_deadline_ = Clock::time_point::max();
  Clock::time_point record_deadline_ = Clock::time_point::max();
  bool records_asked_ = false;
  std::set<std::uint32_t> records_awaited_;
};

Job::~Job() {
  // Ranks are still running here only when start-up or the poll loop failed.
  for (Rank& r : ranks_) {
    if (!r.running) continue;
    signal_rank(r.pid, SIGKILL);
    while (::waitpid(r.pid, nullptr, 0) < 0 && errno == EINTR) {
    }
  }
  if (identity_made_) {
    if (auto removed = remove_shared_memory(identity_.job_id); !removed) {
      base::logger().warn("{}", removed.status().to_string());
    } else if (*removed > 0) {
      base::logger().info("removed {} shared-memory segments the job left behind", *removed);
    }
  }
  if (signals_blocked_) {
    // Swallow what is pending (a SIGPIPE from a closed stdout, a late SIGCHLD) before unblocking.
    signal_fd_.reset();
    timespec zero{};
    while (::sigtimedwait(&job_signals_, nullptr, &zero) > 0) {
    }
    ::pthread_sigmask(SIG_SETMASK, &old_mask_, nullptr);
  }
}

Status Job::block_signals() {
  sigemptyset(&job_signals_);
  for (int s : kForwardedSignals) sigaddset(&job_signals_, s);
  sigaddset(&job_signals_, SIGCHLD);
  // Blocked and read from the signalfd, SIGPIPE turns a write to a closed pipe into a plain EPIPE.
  sigaddset(&job_signals_, SIGPIPE);
  if (::pthread_sigmask(SIG_BLOCK, &job_signals_, &old_mask_) != 0) {
    return Status(Errc::internal, "cannot block signals");
  }
  signals_blocked_ = true;
  signal_fd_.reset(::signalfd(-1, &job_signals_, SFD_NONBLOCK | SFD_CLOEXEC));
  if (!signal_fd_) return sys::errno_status(Errc::internal, "signalfd");
  return {};
}

std::vector<std::string> Job::base_environment() const {
  std::set<std::string, std::less<>> replaced;
  for (std::string_view name : job_environment_names()) replaced.emplace(name);
  std::vector<std::string> exported;
  for (const std::string& assignment : params_.assignments()) {
    const auto eq = assignment.find('=');
    const std::string var = base::env_name(assignment.substr(0, eq));
    replaced.insert(var);
    exported.push_back(var + "=" + assignment.substr(eq + 1));
  }
  std::vector<std::string> env;
  for (const std::string& entry : spec_.environment) {
    if (!replaced.contains(env_entry_name(entry))) env.push_back(entry);
  }
  env.insert(env.end(), exported.begin(), exported.end());
  return env;
}

Status Job::place() {
  if (!spec_.hosts.empty() && spec_.hosts.size() != spec_.size) {
    return Status(Errc::invalid_argument, std::to_string(spec_.hosts.size()) + " hosts given for " +
                                              std::to_string(spec_.size) + " ranks");
  }
  std::string hostname;
  if (!spec_.hosts.empty()) {
    auto name = local_hostname();
    if (!name) return name.status();
    hostname = std::move(*name);
  }
  ranks_.resize(spec_.size);
  jobs_.resize(spec_.size);
  // Ranks per host; every name for this host counts as one host ("").
  std::map<std::string, std::uint32_t> per_host;
  for (std::uint32_t i = 0; i < spec_.size; ++i) {
    Rank& rank = ranks_[i];
    rank.index = i;
    if (!spec_.hosts.empty() && !is_local_host(spec_.hosts[i], hostname)) {
      rank.remote = true;
      rank.host = spec_.hosts[i];
      if (Status s = check_host_name(rank.host); !s) return s;
      any_remote_ = true;
    }
    JobInfo& job = jobs_[i];
    job.rank = i;
    job.size = spec_.size;
    job.local_rank = per_host[rank.host]++;
  }
  for (std::uint32_t i = 0; i < spec_.size; ++i) jobs_[i].local_size = per_host[ranks_[i].host];
  if (any_remote_ && spec_.launch_agent.empty()) {
    return Status(Errc::invalid_argument, "ranks on other hosts need a launch agent");
  }
  if (any_remote_ && spec_.bind == BindPolicy::core) {
    return Status(Errc::invalid_argument, "--bind-to core binds only ranks on ftrun's own host");
  }
  return {};
}

Result<UniqueFd> Job::secret_stdin(bool keep_open_for_stdin) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return sys::errno_status(Errc::resource_exhausted, "pipe2");
  UniqueFd read_end(fds[0]);
  UniqueFd write_end(fds[1]);
  // 65 bytes into an empty pipe: never blocks, and arrives before anything ftrun forwards later.
  if (Status s = sys::write_all(write_end.get(), secret_text(identity_.secret) + "\n"); !s) return s;
  if (keep_open_for_stdin) {
    if (Status s = sys::set_nonblocking(write_end.get()); !s) return s;
    stdin_pipe_ = std::move(write_end);
  }
  return read_end;
}

Result<std::string> Job::remote_command(const JobInfo& job, const std::vector<std::string>& env_base) const {
  RemoteCommand command;
  command.working_directory = spec_.working_directory;
  for (const std::string& entry : env_base) {
    if (forwarded_to_remote(env_entry_name(entry))) command.environment.push_back(entry);
  }
  for (std::string& var : job_environment(job)) {
    if (env_entry_name(var) != kEnvRteSecret) command.environment.push_back(std::move(var));
  }
  command.program = spec_.program;
  if (!command.program.starts_with('/') && !spec_.working_directory.empty()) {
    command.program = spec_.working_directory + "/" + command.program;
  }
  command.args = spec_.args;
  return remote_command_line(command);
}

Status Job::start() {
  if (spec_.size == 0 || spec_.size > kMaxJobSize) {
    return Status(Errc::invalid_argument, "a job has 1 to " + std::to_string(kMaxJobSize) + " ranks");
  }
  if (Status s = place(); !s) return s;
  if (Status s = block_signals(); !s) return s;
  auto identity = make_job_identity();
  if (!identity) return identity.status();
  identity_ = *identity;
  identity_made_ = true;

  // Remote ranks need ftrun on the addresses their hosts reach it by, and only those (unless the operator
  // chose one, 0.0.0.0 for every address).
  ServerConfig config;
  config.size = spec_.size;
  config.secret = identity_.secret;
  config.auth_timeout = params_.get_duration(kConnectTimeout);
  config.listen_addresses = {params_.get_string(kListenAddress)};
  const bool choose = any_remote_ && !params_.is_overridden(kListenAddress);
  // Where the chosen addresses cannot be had: every address, saying why.
  const auto listen_everywhere = [&](std::string_view why) {
    base::logger().info("ftrun listens on every address: {} (rte.listen_address chooses one)", why);
    config.listen_addresses = {"0.0.0.0"};
    return Server::listen(config);
  };
  std::optional<Status> unresolved;
  if (choose) {
    std::vector<std::string> remote_hosts;
    bool local_ranks = false;
    for (const Rank& r : ranks_) {
      if (!r.remote) {
        local_ranks = true;
      } else if (std::find(remote_hosts.begin(), remote_hosts.end(), r.host) == remote_hosts.end()) {
        remote_hosts.push_back(r.host);
      }
    }
    // A host only the launch agent knows (an ssh alias) leaves every address: which one it reaches
    // cannot be told from here.
    auto needed = listen_addresses_for(remote_hosts, local_ranks);
    if (needed) {
      config.listen_addresses = std::move(*needed);
    } else {
      unresolved = needed.status();
    }
  }
  auto server = unresolved ? listen_everywhere(unresolved->message()) : Server::listen(config);
  // One of the chosen addresses could not take the port the first one got (or be bound at all).
  if (!server && choose && !unresolved) server = listen_everywhere(server.status().message());
  if (!server) return server.status();
  server_.emplace(std::move(*server));
  auto advertised = advertised_addresses(config.listen_addresses, server_->port());
  if (!advertised) return advertised.status();
  const std::string addresses = join_launcher_addresses(*advertised);
  base::logger().debug("ranks connect to {}", addresses);
  open_control();

  std::vector<cpu_set_t> cpus;
  if (spec_.bind == BindPolicy::core) {
    // place() refused binding with remote ranks: every rank is here.
    auto sets = core_bindings(spec_.size);
    if (!sets) return sets.status();
    cpus = std::move(*sets);
  }

  UniqueFd dev_null(::open("/dev/null", O_RDONLY | O_CLOEXEC));
  if (!dev_null) return sys::errno_status(Errc::internal, "open /dev/null");
  const bool have_stdin = ::fcntl(0, F_GETFD) >= 0;
  UniqueFd rank0_stdin;
  if (ranks_[0].remote) {
    // The secret goes first, then ftrun's stdin (if it has one).
    auto read_end = secret_stdin(have_stdin);
    if (!read_end) return read_end.status();
    rank0_stdin = std::move(*read_end);
    stdin_open_ = have_stdin;
  } else if (have_stdin) {
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) return sys::errno_status(Errc::resource_exhausted, "pipe2");
    rank0_stdin.reset(fds[0]);
    stdin_pipe_.reset(fds[1]);
    if (Status s = sys::set_nonblocking(stdin_pipe_.get()); !s) return s;
    stdin_open_ = true;
  }

  const std::vector<std::string> env_base = base_environment();
  if (any_remote_) agent_environment_ = env_base;
  std::vector<std::string> argv_text{spec_.program};
  argv_text.insert(argv_text.end(), spec_.args.begin(), spec_.args.end());

  for (std::uint32_t i = 0; i < spec_.size; ++i) {
    Rank& rank = ranks_[i];
    JobInfo& job = jobs_[i];
    job.identity = identity_;
    job.launcher_address = addresses;
    int out[2];
    int err[2];
    if (::pipe2(out, O_CLOEXEC) != 0) return sys::errno_status(Errc::resource_exhausted, "pipe2");
    rank.out.reset(out[0]);
    UniqueFd out_write(out[1]);
    if (::pipe2(err, O_CLOEXEC) != 0) return sys::errno_status(Errc::resource_exhausted, "pipe2");
    rank.err.reset(err[0]);
    UniqueFd err_write(err[1]);
    for (int fd : {rank.out.get(), rank.err.get()}) {
      if (Status s = sys::set_nonblocking(fd); !s) return s;
    }
    const std::string prefix = spec_.tag_output ? "[" + std::to_string(i) + "] " : "";
    rank.out_lines.emplace(STDOUT_FILENO, prefix);
    rank.err_lines.emplace(STDERR_FILENO, prefix);

    std::vector<std::string> command = argv_text;
    std::vector<std::string> env_text = env_base;
    UniqueFd secret_in;
    int stdin_fd = i == 0 && rank0_stdin ? rank0_stdin.get() : dev_null.get();
    if (rank.remote) {
      auto line = remote_command(job, env_base);
      if (!line) return line.status();
      command = spec_.launch_agent;
      command.push_back(rank.host);
      command.push_back(std::move(*line));
      if (i != 0) {
        auto read_end = secret_stdin(false);
        if (!read_end) return read_end.status();
        secret_in = std::move(*read_end);
        stdin_fd = secret_in.get();
      }
    } else {
      for (std::string& var : job_environment(job)) env_text.push_back(std::move(var));
    }
    std::vector<char*> argv;
    for (std::string& a : command) argv.push_back(a.data());
    argv.push_back(nullptr);
    std::vector<char*> envp;
    for (std::string& e : env_text) envp.push_back(e.data());
    envp.push_back(nullptr);

    ChildSetup setup{command.front().c_str(),
                     argv.data(),
                     envp.data(),
                     stdin_fd,
                     out_write.get(),
                     err_write.get(),
                     cpus.empty() ? nullptr : &cpus[job.local_rank]};
    auto pid = spawn_child(setup);
    if (!pid) return pid.status();
    rank.pid = *pid;
    rank.running = true;
    if (rank.remote) {
      base::logger().debug("started rank {} on {} through agent pid {}", i, rank.host, rank.pid);
    } else {
      base::logger().debug("started {}", rank.who());
    }
  }
  if (spec_.time_limit.count() > 0) time_limit_ = Clock::now() + spec_.time_limit;
  return {};
}

// The control plane is for operators' tools: a job runs without it (a runtime directory that cannot be
// made, say), with one warning.
void Job::open_control() {
  JobRecord record;
  char id[17];
  std::snprintf(id, sizeof id, "%016llx", static_cast<unsigned long long>(identity_.job_id));
  record.id = id;
  record.pid = ::getpid();
  record.command = spec_.program;
  for (const std::string& a : spec_.args) record.command += " " + a;
  record.started = static_cast<std::int64_t>(::time(nullptr));
  record.ranks = spec_.size;
  auto hostname = local_hostname();
  const std::string here = hostname ? *hostname : std::string("localhost");
  std::vector<std::string> rank_hosts;
  for (std::uint32_t r = 0; r < spec_.size; ++r) {
    rank_hosts.push_back(spec_.hosts.empty() || !ranks_[r].remote ? here : spec_.hosts[r]);
    if (std::find(record.hosts.begin(), record.hosts.end(), rank_hosts.back()) == record.hosts.end()) {
      record.hosts.push_back(rank_hosts.back());
    }
  }
  auto service = ControlService::open(std::move(record), std::move(rank_hosts));
  if (!service) {
    base::logger().warn("no control plane for this job (ftpath cannot reach it): {}", service.status().message());
    return;
  }
  control_ = std::move(*service);
}

Result<JobOutcome> Job::run() {
  if (Status s = start(); !s) return s;
  // If the loop fails, the destructor kills and reaps whatever is still running.
  if (Status s = loop(); !s) return s;
  const Server::Traffic& t = server_->traffic();
  base::logger().info("control channel: {} rank connections; from ranks {} frames, {} bytes; to ranks {} frames, {} bytes",
                      t.connections, t.frames_in, t.bytes_in, t.frames_out, t.bytes_out);
  clean_remote_hosts();
  if (failure_) return *failure_;
  return JobOutcome{};
}

void Job::clean_remote_hosts() {
  std::set<std::string> hosts;
  for (const Rank& r : ranks_) {
    if (r.remote && r.pid > 0) hosts.insert(r.host);
  }
  if (hosts.empty()) return;
  UniqueFd dev_null(::open("/dev/null", O_RDWR | O_CLOEXEC));
  if (!dev_null) return;
  const std::string command = remote_cleanup_command(identity_.job_id);
  std::vector<char*> envp;
  for (std::string& e : agent_environment_) envp.push_back(e.data());
  envp.push_back(nullptr);
  std::map<pid_t, std::string> cleaners;
  for (const std::string& host : hosts) {
    std::vector<std::string> words = spec_.launch_agent;
    words.push_back(host);
    words.push_back(command);
    std::vector<char*> argv;
    for (std::string& w : words) argv.push_back(w.data());
    argv.push_back(nullptr);
    ChildSetup setup{words.front().c_str(), argv.data(), envp.data(), dev_null.get(), dev_null.get(),
                     dev_null.get(), nullptr};
    if (auto pid = spawn_child(setup)) {
      cleaners.emplace(*pid, host);
    } else {
      base::logger().warn("cannot clean shared memory on {}: {}", host, pid.status().message());
    }
  }
  // Bounded: a host that stopped answering must not keep ftrun from exiting. A signal ends it at once.
  const Clock::time_point deadline = Clock::now() + params_.get_duration(kConnectTimeout);
  bool interrupted = false;
  while (!cleaners.empty() && !interrupted && Clock::now() < deadline) {
    for (auto it = cleaners.begin(); it != cleaners.end();) {
      int status = 0;
      if (::waitpid(it->first, &status, WNOHANG) == it->first) {
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
          base::logger().warn("cleaning shared memory on {} failed", it->second);
        }
        it = cleaners.erase(it);
      } else {
        ++it;
      }
    }
    if (cleaners.empty()) break;
    pollfd p{signal_fd_.get(), POLLIN, 0};
    if (::poll(&p, 1, sys::poll_timeout_ms(deadline, Clock::now())) > 0) {
      signalfd_siginfo info{};
      while (::read(signal_fd_.get(), &info, sizeof info) == static_cast<ssize_t>(sizeof info)) {
        const int signo = static_cast<int>(info.ssi_signo);
        if (signo != SIGCHLD && signo != SIGPIPE) interrupted = true;
      }
    }
  }
  for (const auto& [pid, host] : cleaners) {
    base::logger().warn("gave up cleaning shared memory on {}", host);
    signal_rank(pid, SIGKILL);
    while (::waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
    }
  }
}

Status Job::loop() {
  std::vector<pollfd> fds;
  for (;;) {
    Clock::time_point now = Clock::now();
    if (!any_running() && (!any_output_open() || now >= linger_deadline_)) return {};

    fds.clear();
    Clock::time_point deadline = std::min({time_limit_, kill_deadline_, linger_deadline_, record_deadline_});
    fds.push_back({signal_fd_.get(), POLLIN, 0});
    const std::size_t server_at = fds.size();
    server_->prepare_poll(fds, deadline);
    const std::size_t server_end = fds.size();
    if (control_) control_->prepare_poll(fds, deadline);
    const std::size_t control_end = fds.size();
    const bool read_stdin = stdin_open_ && stdin_pipe_ && stdin_buffer_.size() < kStdinBufferBytes;
    fds.push_back({read_stdin ? STDIN_FILENO : -1, POLLIN, 0});
    fds.push_back({stdin_pipe_ && !stdin_buffer_.empty() ? stdin_pipe_.get() : -1, POLLOUT, 0});
    const std::size_t outputs_at = fds.size();
    for (const Rank& r : ranks_) {
      fds.push_back({r.out.get(), POLLIN, 0});  // a negative fd is skipped by poll()
      fds.push_back({r.err.get(), POLLIN, 0});
      if (r.running) deadline = std::min(deadline, r.disconnect_deadline);
    }

    if (::poll(fds.data(), fds.size(), sys::poll_timeout_ms(deadline, Clock::now())) < 0 && errno != EINTR) {
      return sys::errno_status(Errc::internal, "poll");
    }
    now = Clock::now();
    server_->dispatch(std::span<const pollfd>(fds).subspan(server_at, server_end - server_at), now);
    on_server_events(now);
    if (control_) {
      ServerTargets ranks(*server_);
      control_->dispatch(std::span<const pollfd>(fds).subspan(server_end, control_end - server_end), now, ranks);
    }
    on_stdin(fds[control_end].revents, fds[control_end + 1].revents);
    for (std::size_t i = 0; i < ranks_.size(); ++i) {
      if (fds[outputs_at + 2 * i].revents != 0) on_output(ranks_[i], false);
      if (fds[outputs_at + 2 * i + 1].revents != 0) on_output(ranks_[i], true);
    }
    if (fds[0].revents & POLLIN) on_signals(now);
    on_deadlines(now);
  }
}

void Job::on_server_events(Clock::time_point now) {
  for (RankEvent& e : server_->take_events()) {
    Rank& rank = ranks_[e.rank];
    switch (e.kind) {
      case RankEvent::Kind::connected:
        if (rank.remote) rank.remote_pid = e.pid;  // for reports: the agent's pid would mislead
        break;
      case RankEvent::Kind::finalized: break;  // the server keeps that state; it matters when the rank exits
      case RankEvent::Kind::fence_entered: check_fence_stall(now); break;
      case RankEvent::Kind::aborted: {
        rank.aborted = true;
        const int status = e.code & 0xff;
        // MPI_Abort carries no text; an abort with a message comes from the library itself (the fatal
        // error handler), and the message says what went wrong.
        std::string summary = "rank " + std::to_string(e.rank) +
                              (e.message.empty() ? " called MPI_Abort with error code " + std::to_string(e.code)
                                                 : " aborted the job with error code " + std::to_string(e.code) +
                                                       ": " + e.message);
        fail(status == 0 ? 1 : status, std::move(summary), now);
        break;
      }
      case RankEvent::Kind::control_reply:
        if ((e.control_id & Server::kLauncherIdBit) != 0) {
          on_record_reply(e);
        } else if (control_) {
          control_->on_reply(e, now);
        }
        break;
      case RankEvent::Kind::disconnected:
        // Usually the rank is dying and SIGCHLD follows; give it a moment before calling it a failure.
        if (rank.running && !server_->finalized(e.rank)) {
          rank.disconnect_deadline = now + params_.get_duration(kDisconnectGrace);
        }
        break;
    }
  }
}

void Job::on_stdin(short stdin_revents, short pipe_revents) {
  if (stdin_revents != 0) {
    char buffer[kReadChunk];
    const std::size_t room = std::min(sizeof buffer, kStdinBufferBytes - stdin_buffer_.size());
    ssize_t n = ::read(STDIN_FILENO, buffer, room);
    if (n > 0) {
      stdin_buffer_.append(buffer, static_cast<std::size_t>(n));
    } else if (n == 0 || (errno != EINTR && errno != EAGAIN)) {
      stdin_open_ = false;
    }
  }
  if (pipe_revents != 0 && stdin_pipe_) {
    ssize_t n = ::write(stdin_pipe_.get(), stdin_buffer_.data(), stdin_buffer_.size());
    if (n > 0) {
      stdin_buffer_.erase(0, static_cast<std::size_t>(n));
    } else if (n < 0 && errno != EINTR && errno != EAGAIN) {
      // Rank 0 closed its stdin: what it did not read is dropped, and ftrun stops reading its own.
      close_stdin_pipe();
    }
  }
  if (!stdin_open_ && stdin_buffer_.empty()) close_stdin_pipe();
}

void Job::close_stdin_pipe() {
  stdin_pipe_.reset();
  stdin_buffer_.clear();
  stdin_open_ = false;
}

void Job::on_output(Rank& rank, bool is_err) {
  UniqueFd& fd = is_err ? rank.err : rank.out;
  LineForwarder& lines = is_err ? *rank.err_lines : *rank.out_lines;
  char buffer[kReadChunk];
  ssize_t n = ::read(fd.get(), buffer, sizeof buffer);
  if (n > 0) {
    lines.feed(std::string_view(buffer, static_cast<std::size_t>(n)));
  } else if (n == 0 || (errno != EINTR && errno != EAGAIN)) {
    lines.finish();
    fd.reset();
  }
}

void Job::on_signals(Clock::time_point now) {
  signalfd_siginfo info{};
  bool child_exited = false;
  while (::read(signal_fd_.get(), &info, sizeof info) == static_cast<ssize_t>(sizeof info)) {
    const int signo = static_cast<int>(info.ssi_signo);
    if (signo == SIGCHLD) {
      child_exited = true;
    } else if (signo != SIGPIPE) {
      if (terminating_) {
        // A second signal, or one during a teardown: no more grace.
        terminate(SIGKILL, now);
      } else {
        fail(128 + signo, "received " + signal_text(signo) + " and forwarded it to the ranks", now, false);
        terminate(signo, now);
      }
    }
  }
  // SIGCHLDs coalesce: one may stand for several exits.
  if (child_exited) reap(now);
}

void Job::reap(Clock::time_point now) {
  for (Rank& r : ranks_) {
    if (!r.running) continue;
    int status = 0;
    pid_t got = ::waitpid(r.pid, &status, WNOHANG);
    if (got != r.pid) continue;
    r.running = false;
    judge(r, status, now);
    if (r.index == 0) close_stdin_pipe();
  }
  check_fence_stall(now);
  if (!any_running()) {
    kill_deadline_ = Clock::time_point::max();
    time_limit_ = Clock::time_point::max();
    linger_deadline_ = now + params_.get_duration(kOutputLinger);
  }
}

void Job::judge(Rank& rank, int status, Clock::time_point now) {
  if (rank.aborted) return;  // reported when the abort arrived
  const bool finalized = server_->finalized(rank.index);
  if (rank.remote && !server_->joined(rank.index) && WIFEXITED(status)) {
    // What an agent (or the remote shell) says when it could not start the rank at all.
    const int code = WEXITSTATUS(status);
    const char* why = code == 255   ? "the launch agent failed (unknown or unreachable host?)"
                      : code == 127 ? "the program or env(1) was not found there"
                      : code == 126 ? "the program is not executable there"
                                    : nullptr;
    if (why != nullptr) {
      fail(code,
           "error: cannot start rank " + std::to_string(rank.index) + " on " + rank.host + ": " + why +
               "; the agent exited with status " + std::to_string(code) + consequence(),
           now);
      return;
    }
  }
  if (WIFSIGNALED(status)) {
    const int signo = WTERMSIG(status);
    fail(128 + signo, rank.who() + " was killed by " + signal_text(signo) + consequence(), now);
  } else if (WIFEXITED(status) && WEXITSTATUS(status) != 0) {
    const int code = WEXITSTATUS(status);
    if (finalized) {
      fail(code, rank.who() + " exited with status " + std::to_string(code) + " after finalize", now, false);
    } else {
      // ssh reports a remote rank killed by a signal as 255.
      const std::string note =
          rank.remote && code == 255 ? " (or was killed by a signal: the agent says 255)" : "";
      fail(code, rank.who() + " exited with status " + std::to_string(code) + note + consequence(), now);
    }
  } else if (server_->joined(rank.index) && !finalized) {
    fail(kExitProtocolFailure, rank.who() + " exited with status 0 without calling finalize" + consequence(),
         now);
  }
}

void Job::check_fence_stall(Clock::time_point now) {
  for (const Rank& r : ranks_) {
    if (!r.running && !r.aborted && server_->fence_needs(r.index)) {
      fail(kExitProtocolFailure,
           r.who() + " exited while the other ranks wait for it in a fence" + consequence(), now);
      return;
    }
  }
}

void Job::on_deadlines(Clock::time_point now) {
  if (now >= record_deadline_) {
    record_deadline_ = Clock::time_point::max();
    records_awaited_.clear();
    if (!terminating_) terminate(SIGTERM, now);
  }
  if (now >= time_limit_) {
    time_limit_ = Clock::time_point::max();
    fail(kExitTimedOut,
         "the job timed out after " + sys::seconds_text(spec_.time_limit) + still_running() + consequence(), now);
  }
  if (now >= kill_deadline_) {
    kill_deadline_ = Clock::time_point::max();
    terminate(SIGKILL, now);
  }
  for (Rank& r : ranks_) {
    if (r.running && now >= r.disconnect_deadline) {
      r.disconnect_deadline = Clock::time_point::max();
      fail(kExitProtocolFailure,
           r.who() + " closed its connection to ftrun without calling finalize" + consequence(), now);
    }
  }
}

void Job::fail(int exit_code, std::string summary, Clock::time_point now, bool terminate_job) {
  if (!failure_) {
    failure_ = JobOutcome{exit_code, std::move(summary)};
    base::logger().debug("job failed: {}", failure_->summary);
  }
  if (!terminate_job || terminating_) return;
  if (!records_asked_ && ask_for_records(now)) return;  // terminated once they answered (on_deadlines)
  if (record_deadline_ == Clock::time_point::max()) terminate(SIGTERM, now);
}

bool Job::ask_for_records(Clock::time_point now) {
  records_asked_ = true;
  for (const Rank& r : ranks_) {
    if (!r.running || r.aborted || !server_->joined(r.index)) continue;
    if (server_->send_control(r.index, Server::kLauncherIdBit | r.index, "ftmpi-control 1 record")) {
      records_awaited_.insert(r.index);
    }
  }
  if (records_awaited_.empty()) return false;
  record_deadline_ = now + kRecordWait;
  return true;
}

void Job::on_record_reply(const RankEvent& e) {
  if (records_awaited_.erase(e.rank) == 0) return;
  auto reply = base::parse_json(e.message);
  if (e.ok && reply) {
    std::fprintf(stderr, "ftrun: rank %u wrote its flight recorder to %s\n", e.rank, (*reply)["file"].as_string().c_str());
  }
  if (records_awaited_.empty()) record_deadline_ = Clock::now();  // terminate at once
}

void Job::terminate(int signo, Clock::time_point now) {
  for (const Rank& r : ranks_) {
    if (!r.running) continue;
    signal_rank(r.pid, signo);
    // A stopped rank would hold the signal pending forever.
    if (signo != SIGKILL) signal_rank(r.pid, SIGCONT);
  }
  if (signo == SIGKILL) {
    kill_deadline_ = Clock::time_point::max();
  } else if (!terminating_) {
    kill_deadline_ = now + params_.get_duration(kKillGrace);
  }
  terminating_ = true;
}

std::string Job::consequence() const { return any_running() ? "; terminating the job" : ""; }

// " (still running: rank 1 waiting in a fence (MPI_Init or MPI_Finalize); ranks 0, 2-5 in the program)":
// where each rank stands as far as ftrun can tell, so that a hung job says where to look.
std::string Job::still_running() const {
  constexpr std::array<const char*, 4> kStates = {"not connected to ftrun", "in the program",
                                                  "waiting in a fence (MPI_Init or MPI_Finalize)",
                                                  "finalized but not exited"};
  std::array<std::vector<std::uint32_t>, kStates.size()> ranks;
  for (const Rank& r : ranks_) {
    if (!r.running) continue;
    std::size_t state = 1;
    if (!server_->joined(r.index)) {
      state = 0;
    } else if (server_->finalized(r.index)) {
      state = 3;
    } else if (server_->in_fence(r.index)) {
      state = 2;
    }
    ranks[state].push_back(r.index);
  }
  std::string text;
  for (std::size_t state = 0; state < kStates.size(); ++state) {
    const std::vector<std::uint32_t>& list = ranks[state];
    if (list.empty()) continue;
    text += text.empty() ? " (still running: " : "; ";
    text += list.size() == 1 ? "rank " : "ranks ";
    // Consecutive ranks as ranges: a 2,000-rank job stays one line.
    for (std::size_t i = 0; i < list.size();) {
      std::size_t j = i;
      while (j + 1 < list.size() && list[j + 1] == list[j] + 1) ++j;
      if (i > 0) text += ", ";
      text += std::to_string(list[i]);
      if (j > i) text += "-" + std::to_string(list[j]);
      i = j + 1;
    }
    text += std::string(" ") + kStates[state];
  }
  return text.empty() ? text : text + ")";
}

bool Job::any_running() const {
  return std::any_of(ranks_.begin(), ranks_.end(), [](const Rank& r) { return r.running; });
}

bool Job::any_output_open() const {
  return std::any_of(ranks_.begin(), ranks_.end(), [](const Rank& r) { return r.out || r.err; });
}

}  // namespace

Result<BindPolicy> parse_bind_policy(std::string_view text) {
  if (text == "none") return BindPolicy::none;
  if (text == "core") return BindPolicy::core;
  return Status(Errc::invalid_argument, "binding '" + std::string(text) + "' is not one of core|none");
}

std::string_view to_string(BindPolicy policy) noexcept {
  return policy == BindPolicy::core ? "core" : "none";
}

Result<std::string> find_program(std::string_view name, std::string_view path_env) {
  auto check = [](const std::string& path) -> std::optional<Status> {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) return std::nullopt;
    if (!S_ISREG(st.st_mode) || ::access(path.c_str(), X_OK) != 0) {
      return Status(Errc::invalid_argument, "program '" + path + "' is not an executable file");
    }
    return Status::ok();
  };
  if (name.empty()) return Status(Errc::not_found, "cannot find program ''");
  if (name.find('/') != std::string_view::npos) {
    const std::string path(name);
    auto found = check(path);
    if (!found) return Status(Errc::not_found, "cannot find program '" + path + "'");
    if (!*found) return *found;
    return path;
  }
  std::optional<Status> not_executable;
  while (true) {
    const auto colon = path_env.find(':');
    std::string dir(path_env.substr(0, colon));
    if (dir.empty()) dir = ".";  // an empty PATH entry means the current directory
    const std::string path = dir + "/" + std::string(name);
    if (auto found = check(path)) {
      if (*found) return path;
      if (!not_executable) not_executable = *found;
    }
    if (colon == std::string_view::npos) break;
    path_env.remove_prefix(colon + 1);
  }
  if (not_executable) return *not_executable;
  return Status(Errc::not_found, "cannot find program '" + std::string(name) + "'");
}

Result<JobOutcome> run_job(const LaunchSpec& spec, const base::ParamSet& params) {
  Job job(spec, params);
  return job.run();
}

}  // namespace ftmpi::rte

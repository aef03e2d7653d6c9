// run_job: one job, from fork to the last byte of output.
//
// Everything happens in one poll() loop on one thread: the control server, every rank's stdout and
// stderr pipes, ftrun's stdin, and a signalfd for SIGCHLD/SIGINT/SIGTERM/SIGHUP (blocked for the job's
// duration, so no handler runs between poll() calls). Within one wake-up the control connections are
// read before exit statuses are looked at; an abort or a finalize is acknowledged before the rank exits,
// so by the time a rank's SIGCHLD is handled ftrun knows whether it aborted or finalized.
//
// The ranks of another host are started by that host's agent (ftrun-host, host_agent.hpp), itself
// started by a launch agent called like ssh (one per host), or for many hosts at once by one Slurm step
// (LaunchSpec::host_step). The agent connects back to a listener of its own (agent_protocol.hpp) and
// relays, over that one link, what this loop has from a local rank through pipes, signals and waitpid:
// output, exit statuses, stdin, signals, and each rank's control connection, which arrives here as
// conn_open and is served as one end of a socketpair adopted by the server, so that the server sees a
// relayed rank as it sees any other. A host whose link drops, or whose agent process exits, loses its
// ranks.
//
// The first failure decides the exit status and the one-line summary; it sends SIGTERM (and SIGCONT) to
// every rank's process group and arms a SIGKILL after rte.kill_grace. Later deaths are consequences and
// are not reported.
#include "ftmpi/rte/launcher.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
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
#include "ftmpi/rte/agent_protocol.hpp"
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
// While more than this waits to go to a host's agent, ftrun stops reading that host's relayed
// connections: the server's own queue holds the rest, as for a slow rank connected directly.
constexpr std::size_t kLinkHighWater = 1024 * 1024;
// ftrun's stdin sent to a remote rank 0 and not yet acknowledged by its agent, at most.
constexpr std::size_t kStdinWindowBytes = 64 * 1024;
// Unauthenticated connections to the agent listener beyond one per host: a flood does not exhaust
// ftrun's descriptors (the oldest goes).
constexpr std::size_t kSparePendingAgents = 16;
// The exit status of a job that lost a host (its agent died or its link dropped), as ssh reports its own
// failures.
constexpr int kExitHostLost = 255;

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

// Reads what a pipe has and forwards it line by line; closes the pipe at EOF.
void forward_output(UniqueFd& fd, LineForwarder& lines) {
  char buffer[kReadChunk];
  ssize_t n = ::read(fd.get(), buffer, sizeof buffer);
  if (n > 0) {
    lines.feed(std::string_view(buffer, static_cast<std::size_t>(n)));
  } else if (n == 0 || (errno != EINTR && errno != EAGAIN)) {
    lines.finish();
    fd.reset();
  }
}

// "rank 3", "ranks 0, 2-5": consecutive ranks as ranges, so that a 2,000-rank job stays one line.
std::string ranks_text(const std::vector<std::uint32_t>& list) {
  std::string text = list.size() == 1 ? "rank " : "ranks ";
  for (std::size_t i = 0; i < list.size();) {
    std::size_t j = i;
    while (j + 1 < list.size() && list[j + 1] == list[j] + 1) ++j;
    if (i > 0) text += ", ";
    text += std::to_string(list[i]);
    if (j > i) text += "-" + std::to_string(list[j]);
    i = j + 1;
  }
  return text;
}

// A relayed connection's end on ftrun's side; the other end is the server's.
struct Relay {
  UniqueFd fd;
  std::string pending;   // from the agent, not yet written to the server
  bool closing = false;  // the agent closed it: close once `pending` is written
};

// Another host of the job and the link to its agent.
struct HostLink {
  std::string host;
  std::vector<std::uint32_t> ranks;
  std::size_t process = 0;  // index of the process that started its agent
  UniqueFd link;            // set while the agent is connected
  bool connected = false;   // the agent authenticated at some point
  AgentFrameReader reader{kAgentToLauncher};
  std::string out;  // frames not yet sent
  std::size_t out_offset = 0;
  std::map<std::uint32_t, Relay> relays;
  std::size_t stdin_unacked = 0;

  bool congested() const { return out.size() - out_offset > kLinkHighWater; }
  void send(const AgentMessage& message) {
    if (link) out += encode(message);
  }
};

// A process that starts agents: a launch agent for one host, or a Slurm step for several. Its own output
// (the agent's messages, ssh's) is forwarded untagged.
struct AgentProcess {
  pid_t pid = -1;
  bool running = false;
  std::vector<std::size_t> hosts;
  UniqueFd out;
  UniqueFd err;
  std::optional<LineForwarder> out_lines;
  std::optional<LineForwarder> err_lines;
};

// A connection to the agent listener that has not said hello yet.
struct PendingAgent {
  UniqueFd fd;
  std::string peer;
  AgentFrameReader reader{kAgentHello};
  Clock::time_point deadline;
};

struct Rank {
  std::uint32_t index = 0;
  pid_t pid = -1;  // the rank itself, or the launch agent of a remote rank
  bool running = false;
  bool aborted = false;
  // Set for a rank on another host: its host's name and link, and its pid there once its agent started it.
  bool remote = false;
  std::string host;
  std::size_t host_link = 0;
  std::uint32_t remote_pid = 0;
  UniqueFd out;  // read ends of the rank's stdout and stderr pipes, closed at EOF
  UniqueFd err;
  bool remote_out_open = false;  // a remote rank's streams, until its agent says EOF
  bool remote_err_open = false;
  std::optional<LineForwarder> out_lines;
  std::optional<LineForwarder> err_lines;
  Clock::time_point disconnect_deadline = Clock::time_point::max();

  bool output_open() const { return out || err || remote_out_open || remote_err_open; }

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
  // Writes the secret line into a new pipe for an agent's stdin; returns the read end.
  Result<UniqueFd> secret_stdin();
  // Listens for the agents on the addresses the ranks would have had, on a port of its own.
  Status listen_for_agents(const std::vector<std::string>& listen_addresses);
  // Starts the processes that start the agents: one launch agent per host, or one Slurm step.
  Status start_agents(const std::vector<std::string>& env_base, int dev_null);
  Status spawn_agent_process(std::vector<std::string> words, std::vector<std::string> env, int stdin_fd,
                             std::vector<std::size_t> hosts);
  // After the job: closes the links (each agent then removes the job's /dev/shm segments on its host and
  // exits) and waits, at most rte.connect_timeout, for the agent processes to end.
  void finish_agents();
  void accept_agents(int listener, Clock::time_point now);
  void on_pending_agent(PendingAgent& p, Clock::time_point now);
  void refuse_agent(PendingAgent& p, std::string_view why, bool auth_failure);
  void send_launch(HostLink& h);
  void on_link(HostLink& h, short revents, Clock::time_point now);
  Status on_agent_message(HostLink& h, AgentMessage message, Clock::time_point now);
  void on_relay(HostLink& h, std::uint32_t conn, short revents);
  void flush_relay(HostLink& h, std::uint32_t conn);
  void flush_link(HostLink& h, Clock::time_point now);
  // The host's agent is gone (link dropped, agent process exited, or a malformed frame): its ranks
  // still running are lost, and the job fails naming the host and them.
  // The summary says "<what> ranks 2-3 on HOST: <why>" (what: "lost", "error: cannot start").
  void lose_host(HostLink& h, std::string_view what, const std::string& why, int exit_code, Clock::time_point now);
  void on_agent_process_exit(AgentProcess& p, int status, Clock::time_point now);
  void on_remote_stdin(short stdin_revents);
  // What follows a rank's exit, however ftrun learned of it.
  void rank_exited(Rank& rank, int status, Clock::time_point now);
  void after_exits(Clock::time_point now);
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
  std::vector<HostLink> hosts_;
  std::vector<AgentProcess> processes_;
  std::vector<UniqueFd> agent_listeners_;
  std::vector<std::unique_ptr<PendingAgent>> pending_agents_;
  std::uint64_t agent_auth_failures_ = 0;
  std::uint64_t agent_protocol_errors_ = 0;
  Clock::time_point agent_kill_deadline_ = Clock::time_point::max();
  Clock::time_point started_at_{};
  std::uint32_t joined_ = 0;
  std::string agent_address_;  // FTMPI_RTE_ADDR for the agents
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
    if (!r.running || r.remote) continue;
    signal_rank(r.pid, SIGKILL);
    while (::waitpid(r.pid, nullptr, 0) < 0 && errno == EINTR) {
    }
  }
  // Killing an agent's process ends its agent, and the agent's ranks with it (PR_SET_PDEATHSIG).
  for (AgentProcess& p : processes_) {
    if (!p.running) continue;
    signal_rank(p.pid, SIGKILL);
    while (::waitpid(p.pid, nullptr, 0) < 0 && errno == EINTR) {
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
  for (std::uint32_t i = 0; i < spec_.size; ++i) {
    jobs_[i].local_size = per_host[ranks_[i].host];
    Rank& rank = ranks_[i];
    if (!rank.remote) continue;
    auto h = std::find_if(hosts_.begin(), hosts_.end(), [&](const HostLink& l) { return l.host == rank.host; });
    if (h == hosts_.end()) {
      h = hosts_.emplace(hosts_.end());
      h->host = rank.host;
    }
    rank.host_link = static_cast<std::size_t>(h - hosts_.begin());
    h->ranks.push_back(i);
  }
  if (any_remote_ && spec_.launch_agent.empty() && spec_.host_step.empty()) {
    return Status(Errc::invalid_argument, "ranks on other hosts need a launch agent");
  }
  if (any_remote_ && spec_.host_agent.empty()) {
    return Status(Errc::invalid_argument, "ranks on other hosts need ftrun-host (LaunchSpec::host_agent)");
  }
  if (any_remote_ && spec_.bind == BindPolicy::core) {
    return Status(Errc::invalid_argument, "--bind-to core binds only ranks on ftrun's own host");
  }
  return {};
}

Result<UniqueFd> Job::secret_stdin() {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return sys::errno_status(Errc::resource_exhausted, "pipe2");
  UniqueFd read_end(fds[0]);
  UniqueFd write_end(fds[1]);
  // 65 bytes into an empty pipe: never blocks. The write end closes here: the agent reads nothing more.
  if (Status s = sys::write_all(write_end.get(), secret_text(identity_.secret) + "\n"); !s) return s;
  return read_end;
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
  if (any_remote_) {
    if (Status s = listen_for_agents(config.listen_addresses); !s) return s;
  }
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
    stdin_open_ = have_stdin;  // relayed to rank 0's agent (on_remote_stdin)
  } else if (have_stdin) {
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) return sys::errno_status(Errc::resource_exhausted, "pipe2");
    rank0_stdin.reset(fds[0]);
    stdin_pipe_.reset(fds[1]);
    if (Status s = sys::set_nonblocking(stdin_pipe_.get()); !s) return s;
    stdin_open_ = true;
  }

  const std::vector<std::string> env_base = base_environment();
  started_at_ = Clock::now();
  std::vector<std::string> argv_text{spec_.program};
  argv_text.insert(argv_text.end(), spec_.args.begin(), spec_.args.end());

  for (std::uint32_t i = 0; i < spec_.size; ++i) {
    Rank& rank = ranks_[i];
    JobInfo& job = jobs_[i];
    job.identity = identity_;
    job.launcher_address = addresses;
    const std::string prefix = spec_.tag_output ? "[" + std::to_string(i) + "] " : "";
    rank.out_lines.emplace(STDOUT_FILENO, prefix);
    rank.err_lines.emplace(STDERR_FILENO, prefix);
    if (rank.remote) {
      // Its agent starts it (start_agents) and reports its output and exit.
      rank.running = true;
      rank.remote_out_open = true;
      rank.remote_err_open = true;
      continue;
    }
    auto pipes = sys::output_pipes();
    if (!pipes) return pipes.status();
    rank.out = std::move(pipes->out_read);
    rank.err = std::move(pipes->err_read);

    std::vector<std::string> command = argv_text;
    std::vector<std::string> env_text = env_base;
    const int stdin_fd = i == 0 && rank0_stdin ? rank0_stdin.get() : dev_null.get();
    for (std::string& var : job_environment(job)) env_text.push_back(std::move(var));
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
                     pipes->out_write.get(),
                     pipes->err_write.get(),
                     cpus.empty() ? nullptr : &cpus[job.local_rank]};
    auto pid = spawn_child(setup);
    if (!pid) return pid.status();
    rank.pid = *pid;
    rank.running = true;
    base::logger().debug("started {}", rank.who());
  }
  if (any_remote_) {
    if (Status s = start_agents(env_base, dev_null.get()); !s) return s;
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
  const auto relayed = std::count_if(ranks_.begin(), ranks_.end(), [](const Rank& r) { return r.remote; });
  base::logger().info(
      "control channel: {} rank connections ({} relayed by {} host agents); from ranks {} frames, {} bytes; to "
      "ranks {} frames, {} bytes",
      t.connections, relayed, hosts_.size(), t.frames_in, t.bytes_in, t.frames_out, t.bytes_out);
  finish_agents();
  if (failure_) return *failure_;
  return JobOutcome{};
}

Status Job::listen_for_agents(const std::vector<std::string>& listen_addresses) {
  std::uint16_t port = 0;
  for (const std::string& address : listen_addresses) {
    auto fd = sys::listen_tcp(address, port);
    if (!fd) return fd.status();
    if (port == 0) {
      auto bound = sys::local_address(fd->get());
      if (!bound) return bound.status();
      auto where = sys::split_host_port(*bound);
      if (!where) return where.status();
      port = where->port;
    }
    agent_listeners_.push_back(std::move(*fd));
  }
  auto advertised = advertised_addresses(listen_addresses, port);
  if (!advertised) return advertised.status();
  agent_address_ = join_launcher_addresses(*advertised);
  base::logger().debug("host agents connect to {}", agent_address_);
  return {};
}

Status Job::start_agents(const std::vector<std::string>& env_base, int dev_null) {
  std::vector<std::string> agent_env = env_base;
  agent_env.push_back(std::string(kEnvRteAddr) + "=" + agent_address_);
  if (!spec_.host_step.empty()) {
    // One step, one agent per node; srun's stdin is not per task, so the secret rides in the environment
    // (srun passes ftrun's to the tasks), and each agent learns its host from SLURMD_NODENAME.
    std::string nodes;
    std::vector<std::size_t> all;
    for (std::size_t h = 0; h < hosts_.size(); ++h) {
      nodes += (nodes.empty() ? "" : ",") + hosts_[h].host;
      all.push_back(h);
    }
    std::vector<std::string> words = spec_.host_step;
    // --ntasks too: srun would otherwise take the allocation's task count from SLURM_NTASKS, which an
    // sbatch script or salloc has in its environment.
    words.insert(words.end(), {"--nodelist=" + nodes, "--nodes=" + std::to_string(hosts_.size()),
                               "--ntasks=" + std::to_string(hosts_.size()), "--ntasks-per-node=1", "--overlap",
                               "--kill-on-bad-exit=1", "--mpi=none", spec_.host_agent});
    agent_env.push_back(std::string(kEnvRteSecret) + "=" + secret_text(identity_.secret));
    return spawn_agent_process(std::move(words), std::move(agent_env), dev_null, std::move(all));
  }
  // Through the launch agent, called like ssh: the command carries the environment ftrun forwards, not
  // the secret, which comes as the first line of stdin (remote.hpp).
  RemoteCommand command;
  command.working_directory = spec_.working_directory;
  for (const std::string& entry : agent_env) {
    if (forwarded_to_remote(env_entry_name(entry))) command.environment.push_back(entry);
  }
  command.program = spec_.host_agent;
  for (std::size_t h = 0; h < hosts_.size(); ++h) {
    command.args = {"--host", hosts_[h].host};
    auto line = remote_command_line(command);
    if (!line) return line.status();
    std::vector<std::string> words = spec_.launch_agent;
    words.push_back(hosts_[h].host);
    words.push_back(std::move(*line));
    auto secret_in = secret_stdin();
    if (!secret_in) return secret_in.status();
    if (Status s = spawn_agent_process(std::move(words), env_base, secret_in->get(), {h}); !s) return s;
  }
  return {};
}

Status Job::spawn_agent_process(std::vector<std::string> words, std::vector<std::string> env, int stdin_fd,
                                std::vector<std::size_t> hosts) {
  AgentProcess& p = processes_.emplace_back();
  auto pipes = sys::output_pipes();
  if (!pipes) return pipes.status();
  p.out = std::move(pipes->out_read);
  p.err = std::move(pipes->err_read);
  p.out_lines.emplace(STDOUT_FILENO, "");
  p.err_lines.emplace(STDERR_FILENO, "");
  std::vector<char*> argv;
  for (std::string& w : words) argv.push_back(w.data());
  argv.push_back(nullptr);
  std::vector<char*> envp;
  for (std::string& e : env) envp.push_back(e.data());
  envp.push_back(nullptr);
  ChildSetup setup{words.front().c_str(), argv.data(), envp.data(), stdin_fd, pipes->out_write.get(),
                   pipes->err_write.get(), nullptr};
  auto pid = spawn_child(setup);
  if (!pid) return pid.status();
  p.pid = *pid;
  p.running = true;
  for (std::size_t h : hosts) {
    hosts_[h].process = processes_.size() - 1;
    base::logger().debug("starting the agent of {} ({}) through pid {}", hosts_[h].host,
                         ranks_text(hosts_[h].ranks), p.pid);
  }
  p.hosts = std::move(hosts);
  return {};
}

void Job::accept_agents(int listener, Clock::time_point now) {
  for (;;) {
    const int fd = ::accept4(listener, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) {
      if (errno == EINTR || errno == ECONNABORTED) continue;
      return;
    }
    sys::set_nodelay(fd);
    const auto live = [](const auto& p) { return static_cast<bool>(p->fd); };
    if (static_cast<std::size_t>(std::count_if(pending_agents_.begin(), pending_agents_.end(), live)) >=
        hosts_.size() + kSparePendingAgents) {
      auto oldest = std::find_if(pending_agents_.begin(), pending_agents_.end(), live);
      refuse_agent(**oldest, "too many unauthenticated connections; closed the oldest", false);
    }
    auto p = std::make_unique<PendingAgent>();
    p->fd.reset(fd);
    p->peer = sys::peer_address(fd);
    p->deadline = now + params_.get_duration(kConnectTimeout);
    pending_agents_.push_back(std::move(p));
  }
}

void Job::refuse_agent(PendingAgent& p, std::string_view why, bool auth_failure) {
  if (auth_failure) {
    ++agent_auth_failures_;
  } else {
    ++agent_protocol_errors_;
  }
  base::logger().warn("refused a host agent's connection from {}: {} ({} authentication failures, {} protocol "
                      "errors so far)",
                      p.peer, why, agent_auth_failures_, agent_protocol_errors_);
  p.fd.reset();
}

void Job::on_pending_agent(PendingAgent& p, Clock::time_point now) {
  // Until the hello is whole, or nothing more is there: an EOF behind the bytes is seen now, before the
  // launch agent's exit that may follow it is.
  std::optional<AgentMessage> message;
  while (!message) {
    char buffer[4096];
    const ssize_t n = ::recv(p.fd.get(), buffer, sizeof buffer, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EAGAIN) return;
    if (n <= 0) {
      refuse_agent(p, p.reader.buffered() > 0 ? "closed in the middle of a frame" : "closed before its hello", true);
      return;
    }
    p.reader.append(std::span<const char>(buffer, static_cast<std::size_t>(n)));
    auto next = p.reader.next();
    if (!next) {
      refuse_agent(p, next.status().message(), true);
      return;
    }
    message = std::move(*next);
  }
  const auto& hello = std::get<AgentHello>(*message);
  if (hello.version != kAgentProtocolVersion) {
    refuse_agent(p, "protocol version " + std::to_string(hello.version) + ", not " +
                        std::to_string(kAgentProtocolVersion),
                 true);
    return;
  }
  if (!secrets_equal(hello.secret, identity_.secret)) {
    refuse_agent(p, "wrong secret", true);
    return;
  }
  auto h = std::find_if(hosts_.begin(), hosts_.end(), [&](const HostLink& l) { return l.host == hello.host; });
  if (h == hosts_.end() || h->connected) {
    refuse_agent(p, h == hosts_.end() ? "host '" + hello.host + "' has no ranks of this job"
                                      : "a second agent for host " + hello.host,
                 false);
    return;
  }
  h->connected = true;
  if (terminating_) {
    // Too late: the job is ending. Its ranks are never started; closing the link ends the agent.
    p.fd.reset();
    lose_host(*h, "lost", "the job was ending when their agent connected", kExitHostLost, now);
    return;
  }
  h->link = std::move(p.fd);
  h->reader = std::move(p.reader);
  h->reader.allow(kAgentToLauncher);
  base::logger().debug("the agent of {} connected from {}", h->host, p.peer);
  send_launch(*h);
  flush_link(*h, now);
}

void Job::send_launch(HostLink& h) {
  Launch launch;
  launch.argv.push_back(spec_.program);
  if (!spec_.program.starts_with('/') && !spec_.working_directory.empty()) {
    launch.argv.front() = spec_.working_directory + "/" + spec_.program;
  }
  launch.argv.insert(launch.argv.end(), spec_.args.begin(), spec_.args.end());
  for (std::uint32_t r : h.ranks) launch.ranks.push_back(LaunchRank{r, job_environment(jobs_[r])});
  h.send(launch);
}

void Job::on_link(HostLink& h, short revents, Clock::time_point now) {
  if (revents & (POLLIN | POLLHUP | POLLERR)) {
    char buffer[kReadChunk];
    const ssize_t n = ::recv(h.link.get(), buffer, sizeof buffer, 0);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) return;
    if (n <= 0) {
      std::string why = n < 0 ? std::string(std::strerror(errno)) : "the agent closed it";
      if (n == 0 && h.reader.buffered() > 0) {
        ++agent_protocol_errors_;
        why = "the agent closed it in the middle of a frame";
      }
      lose_host(h, "lost", "the connection to their agent dropped (" + why + ")", kExitHostLost, now);
      return;
    }
    h.reader.append(std::span<const char>(buffer, static_cast<std::size_t>(n)));
    for (;;) {
      auto message = h.reader.next();
      Status s = message ? Status() : message.status();
      if (s && *message) s = on_agent_message(h, std::move(**message), now);
      if (!s) {
        ++agent_protocol_errors_;
        lose_host(h, "lost", "their agent broke the protocol (" + s.message() + ")", kExitHostLost, now);
        return;
      }
      if (!*message || !h.link) break;
    }
  }
  if (h.link && (revents & POLLOUT)) flush_link(h, now);
}

Status Job::on_agent_message(HostLink& h, AgentMessage message, Clock::time_point now) {
  // A rank this host's agent speaks for, or an error.
  const auto rank_of = [&](std::uint32_t rank) -> Rank* {
    if (rank >= ranks_.size() || !ranks_[rank].remote || ranks_[rank].host_link != static_cast<std::size_t>(&h - hosts_.data())) {
      return nullptr;
    }
    return &ranks_[rank];
  };
  const auto not_here = [](std::uint32_t rank) {
    return Status(Errc::malformed, "rank " + std::to_string(rank) + " is not on its host");
  };
  if (auto* opened = std::get_if<ConnOpen>(&message)) {
    if (h.relays.contains(opened->conn)) {
      return Status(Errc::malformed, "connection " + std::to_string(opened->conn) + " opened twice");
    }
    int pair[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, pair) != 0) {
      base::logger().warn("cannot relay a connection from {}: socketpair: {}", h.host, std::strerror(errno));
      h.send(ConnClose{opened->conn});
      return {};
    }
    server_->adopt(UniqueFd(pair[0]), h.host + " (relayed by its agent)", now);
    h.relays[opened->conn].fd.reset(pair[1]);
  } else if (auto* data = std::get_if<ConnData>(&message)) {
    auto it = h.relays.find(data->conn);
    if (it == h.relays.end()) return {};  // closed here meanwhile; our conn_close is on its way
    it->second.pending += data->bytes;
    flush_relay(h, data->conn);
  } else if (auto* close = std::get_if<ConnClose>(&message)) {
    auto it = h.relays.find(close->conn);
    if (it == h.relays.end()) return {};
    it->second.closing = true;
    flush_relay(h, close->conn);
  } else if (auto* output = std::get_if<Output>(&message)) {
    Rank* r = rank_of(output->rank);
    if (r == nullptr) return not_here(output->rank);
    const bool is_err = output->stream == OutputStream::err;
    bool& open = is_err ? r->remote_err_open : r->remote_out_open;
    if (!open) return {};  // lost meanwhile
    LineForwarder& lines = is_err ? *r->err_lines : *r->out_lines;
    if (output->bytes.empty()) {
      lines.finish();
      open = false;
    } else {
      lines.feed(output->bytes);
    }
  } else if (auto* started = std::get_if<RankStarted>(&message)) {
    Rank* r = rank_of(started->rank);
    if (r == nullptr) return not_here(started->rank);
    r->remote_pid = started->pid;
  } else if (auto* exited = std::get_if<RankExited>(&message)) {
    Rank* r = rank_of(exited->rank);
    if (r == nullptr) return not_here(exited->rank);
    if (r->running) {
      r->running = false;
      rank_exited(*r, exited->status, now);
      after_exits(now);
    }
  } else if (auto* ack = std::get_if<StdinAck>(&message)) {
    if (ack->bytes > h.stdin_unacked) return Status(Errc::malformed, "acknowledged more stdin than it was sent");
    h.stdin_unacked -= ack->bytes;
  }
  return {};
}

void Job::on_relay(HostLink& h, std::uint32_t conn, short revents) {
  auto it = h.relays.find(conn);
  if (it == h.relays.end()) return;
  if (revents & POLLOUT) flush_relay(h, conn);
  it = h.relays.find(conn);
  if (it == h.relays.end() || !(revents & (POLLIN | POLLHUP | POLLERR))) return;
  std::string chunk(kMaxRelayChunk, '\0');
  const ssize_t n = ::recv(it->second.fd.get(), chunk.data(), chunk.size(), 0);
  if (n < 0 && (errno == EINTR || errno == EAGAIN)) return;
  if (n <= 0) {
    // The server closed it (a rank refused, finalized, or evicted): the agent closes the rank's end.
    if (!it->second.closing) h.send(ConnClose{conn});
    h.relays.erase(it);
    return;
  }
  chunk.resize(static_cast<std::size_t>(n));
  h.send(ConnData{conn, std::move(chunk)});
}

void Job::flush_relay(HostLink& h, std::uint32_t conn) {
  auto it = h.relays.find(conn);
  Relay& r = it->second;
  while (!r.pending.empty()) {
    const ssize_t n = ::send(r.fd.get(), r.pending.data(), r.pending.size(), MSG_NOSIGNAL);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN) return;
      if (!r.closing) h.send(ConnClose{conn});
      h.relays.erase(it);
      return;
    }
    r.pending.erase(0, static_cast<std::size_t>(n));
  }
  if (r.closing) h.relays.erase(it);
}

void Job::flush_link(HostLink& h, Clock::time_point now) {
  while (h.link && h.out.size() > h.out_offset) {
    const ssize_t n = ::send(h.link.get(), h.out.data() + h.out_offset, h.out.size() - h.out_offset, MSG_NOSIGNAL);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno != EAGAIN) {
        lose_host(h, "lost", "the connection to their agent dropped (" + std::string(std::strerror(errno)) + ")",
                  kExitHostLost, now);
      }
      return;
    }
    h.out_offset += static_cast<std::size_t>(n);
  }
  if (h.out_offset == h.out.size()) {
    h.out.clear();
    h.out_offset = 0;
  } else if (h.out_offset > kLinkHighWater) {
    h.out.erase(0, h.out_offset);
    h.out_offset = 0;
  }
}

void Job::lose_host(HostLink& h, std::string_view what, const std::string& why, int exit_code,
                    Clock::time_point now) {
  h.link.reset();
  h.relays.clear();  // the server sees each relayed rank disconnect
  h.out.clear();
  h.out_offset = 0;
  std::vector<std::uint32_t> lost;
  for (std::uint32_t index : h.ranks) {
    Rank& r = ranks_[index];
    for (auto [open, lines] : {std::pair{&r.remote_out_open, &r.out_lines}, std::pair{&r.remote_err_open, &r.err_lines}}) {
      if (*open) (*lines)->finish();
      *open = false;
    }
    if (!r.running) continue;
    r.running = false;
    lost.push_back(index);
  }
  if (lost.empty()) return;
  fail(exit_code, std::string(what) + " " + ranks_text(lost) + " on " + h.host + ": " + why + consequence(), now);
  after_exits(now);
}

void Job::on_agent_process_exit(AgentProcess& p, int status, Clock::time_point now) {
  const std::string how = WIFSIGNALED(status) ? "was killed by " + signal_text(WTERMSIG(status))
                                              : "exited with status " + std::to_string(WEXITSTATUS(status));
  for (std::size_t index : p.hosts) {
    HostLink& h = hosts_[index];
    if (h.connected) {
      // ssh's end does not end the agent at once (no terminal carries the hang-up): closing the link does.
      lose_host(h, "lost", "their agent's launch process (pid " + std::to_string(p.pid) + ") " + how, kExitHostLost,
                now);
      continue;
    }
    // It never connected: what the launch agent (or the remote shell) says when it could not start it.
    const int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    const std::string why = code == 255   ? "the launch agent failed (unknown or unreachable host?)"
                            : code == 127 ? "ftrun-host or env(1) was not found there (ftrun-host must be at " +
                                                spec_.host_agent + " on every host, as beside ftrun here)"
                            : code == 126 ? "ftrun-host is not executable there (" + spec_.host_agent + ")"
                                          : "its agent ended before it connected to ftrun";
    lose_host(h, "error: cannot start", why + "; the launch agent " + how, code == 0 ? kExitHostLost : code, now);
  }
}

void Job::on_remote_stdin(short stdin_revents) {
  HostLink& h = hosts_[ranks_[0].host_link];
  if (!ranks_[0].running) {
    stdin_open_ = false;
    return;
  }
  if (stdin_revents == 0 || !h.link) return;
  std::string chunk(kMaxRelayChunk, '\0');
  const ssize_t n = ::read(STDIN_FILENO, chunk.data(), std::min(chunk.size(), kStdinWindowBytes - h.stdin_unacked));
  if (n < 0 && (errno == EINTR || errno == EAGAIN)) return;
  if (n <= 0) {
    stdin_open_ = false;
    h.send(StdinData{});
    return;
  }
  chunk.resize(static_cast<std::size_t>(n));
  h.stdin_unacked += chunk.size();
  h.send(StdinData{std::move(chunk)});
}

void Job::finish_agents() {
  if (processes_.empty()) return;
  const Clock::time_point now = Clock::now();
  for (HostLink& h : hosts_) {
    flush_link(h, now);
    h.link.reset();
  }
  // Bounded: a host that stopped answering must not keep ftrun from exiting. A signal ends it at once.
  const Clock::time_point deadline = now + params_.get_duration(kConnectTimeout);
  const auto running = [&] {
    return std::any_of(processes_.begin(), processes_.end(), [](const AgentProcess& p) { return p.running; });
  };
  bool interrupted = false;
  while (running() && !interrupted && Clock::now() < deadline) {
    std::vector<pollfd> fds{{signal_fd_.get(), POLLIN, 0}};
    for (const AgentProcess& p : processes_) {
      fds.push_back({p.out.get(), POLLIN, 0});
      fds.push_back({p.err.get(), POLLIN, 0});
    }
    if (::poll(fds.data(), fds.size(), sys::poll_timeout_ms(deadline, Clock::now())) < 0 && errno != EINTR) break;
    for (std::size_t i = 0; i < processes_.size(); ++i) {
      AgentProcess& p = processes_[i];
      if (fds[1 + 2 * i].revents != 0) forward_output(p.out, *p.out_lines);
      if (fds[2 + 2 * i].revents != 0) forward_output(p.err, *p.err_lines);
    }
    for (int signo : sys::read_signals(signal_fd_.get())) {
      if (signo != SIGCHLD && signo != SIGPIPE) interrupted = true;
    }
    for (AgentProcess& p : processes_) {
      int status = 0;
      if (p.running && ::waitpid(p.pid, &status, WNOHANG) == p.pid) {
        p.running = false;
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
          base::logger().warn("the agent process {} ended badly: {}", p.pid,
                              WIFSIGNALED(status) ? signal_text(WTERMSIG(status))
                                                  : "status " + std::to_string(WEXITSTATUS(status)));
        }
      }
    }
  }
  for (AgentProcess& p : processes_) {
    if (!p.running) continue;
    base::logger().warn("gave up waiting for the agent process {} (its host's /dev/shm may keep the job's segments)", p.pid);
    signal_rank(p.pid, SIGKILL);
    while (::waitpid(p.pid, nullptr, 0) < 0 && errno == EINTR) {
    }
    p.running = false;
  }
}

Status Job::loop() {
  std::vector<pollfd> fds;
  std::vector<std::pair<std::size_t, std::uint32_t>> relays;  // (host, conn) in poll order
  for (;;) {
    Clock::time_point now = Clock::now();
    if (!any_running() && (!any_output_open() || now >= linger_deadline_)) return {};

    fds.clear();
    relays.clear();
    Clock::time_point deadline =
        std::min({time_limit_, kill_deadline_, linger_deadline_, record_deadline_, agent_kill_deadline_});
    fds.push_back({signal_fd_.get(), POLLIN, 0});
    const std::size_t server_at = fds.size();
    server_->prepare_poll(fds, deadline);
    const std::size_t server_end = fds.size();
    if (control_) control_->prepare_poll(fds, deadline);
    const std::size_t control_end = fds.size();
    bool read_stdin = stdin_open_ && stdin_pipe_ && stdin_buffer_.size() < kStdinBufferBytes;
    if (stdin_open_ && ranks_[0].remote) {
      const HostLink& h = hosts_[ranks_[0].host_link];
      // Not before the agent is there, nor beyond the window it has acknowledged; a lost host ends it.
      read_stdin = (h.link && h.stdin_unacked < kStdinWindowBytes && !h.congested()) || !ranks_[0].running;
    }
    fds.push_back({read_stdin ? STDIN_FILENO : -1, POLLIN, 0});
    fds.push_back({stdin_pipe_ && !stdin_buffer_.empty() ? stdin_pipe_.get() : -1, POLLOUT, 0});
    const std::size_t outputs_at = fds.size();
    for (const Rank& r : ranks_) {
      fds.push_back({r.out.get(), POLLIN, 0});  // a negative fd is skipped by poll()
      fds.push_back({r.err.get(), POLLIN, 0});
      if (r.running) deadline = std::min(deadline, r.disconnect_deadline);
    }
    const std::size_t agents_at = fds.size();
    for (const UniqueFd& l : agent_listeners_) fds.push_back({l.get(), POLLIN, 0});
    for (const auto& p : pending_agents_) {
      fds.push_back({p->fd.get(), POLLIN, 0});
      deadline = std::min(deadline, p->deadline);
    }
    const std::size_t links_at = fds.size();
    for (std::size_t i = 0; i < hosts_.size(); ++i) {
      const HostLink& h = hosts_[i];
      fds.push_back({h.link.get(), static_cast<short>(POLLIN | (h.out.size() > h.out_offset ? POLLOUT : 0)), 0});
      for (const auto& [conn, r] : h.relays) {
        const short events = static_cast<short>((h.congested() || r.closing ? 0 : POLLIN) | (r.pending.empty() ? 0 : POLLOUT));
        fds.push_back({r.fd.get(), events, 0});
        relays.emplace_back(i, conn);
      }
    }
    const std::size_t processes_at = fds.size();
    for (const AgentProcess& p : processes_) {
      fds.push_back({p.out.get(), POLLIN, 0});
      fds.push_back({p.err.get(), POLLIN, 0});
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
    if (stdin_open_ && ranks_[0].remote) {
      on_remote_stdin(fds[control_end].revents);
    } else {
      on_stdin(fds[control_end].revents, fds[control_end + 1].revents);
    }
    for (std::size_t i = 0; i < ranks_.size(); ++i) {
      if (fds[outputs_at + 2 * i].revents != 0) on_output(ranks_[i], false);
      if (fds[outputs_at + 2 * i + 1].revents != 0) on_output(ranks_[i], true);
    }
    // Relayed connections before the links: what a rank sent reaches the server before its agent's report
    // of its exit is judged (the server reads it at the next dispatch, as it would from a local rank).
    std::vector<short> link_events(hosts_.size());
    for (std::size_t i = 0, at = links_at, k = 0; i < hosts_.size(); ++i) {
      link_events[i] = fds[at++].revents;
      for (; k < relays.size() && relays[k].first == i; ++k, ++at) {
        if (fds[at].revents != 0) on_relay(hosts_[i], relays[k].second, fds[at].revents);
      }
    }
    for (std::size_t i = 0; i < hosts_.size(); ++i) {
      if (hosts_[i].link && link_events[i] != 0) on_link(hosts_[i], link_events[i], now);
    }
    for (std::size_t i = 0; i < processes_.size(); ++i) {
      AgentProcess& p = processes_[i];
      if (fds[processes_at + 2 * i].revents != 0) forward_output(p.out, *p.out_lines);
      if (fds[processes_at + 2 * i + 1].revents != 0) forward_output(p.err, *p.err_lines);
    }
    // Accepted first, and read at once (a non-blocking read): an agent's hello, or what it sent before it
    // exited, is judged before the exit of its launch agent is (on_signals, below).
    const std::size_t polled_pending = pending_agents_.size();
    for (std::size_t i = 0; i < agent_listeners_.size(); ++i) {
      if (fds[agents_at + i].revents & POLLIN) accept_agents(agent_listeners_[i].get(), now);
    }
    for (std::size_t i = 0; i < pending_agents_.size(); ++i) {
      PendingAgent& p = *pending_agents_[i];
      if (p.fd && (i >= polled_pending || fds[agents_at + agent_listeners_.size() + i].revents != 0)) {
        on_pending_agent(p, now);
      }
      if (p.fd && now >= p.deadline) refuse_agent(p, "did not say hello in time", true);
    }
    std::erase_if(pending_agents_, [](const auto& p) { return !p->fd; });
    for (HostLink& h : hosts_) {
      if (h.link && h.out.size() > h.out_offset) flush_link(h, now);
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
        if (rank.remote) rank.remote_pid = e.pid;
        // Start-up time, for whoever measures it (FTMPI_LOG_LEVEL=info).
        if (++joined_ == spec_.size) {
          base::logger().info("every rank ({}) connected, {:.3f} s after the first was started", spec_.size,
                              std::chrono::duration<double>(now - started_at_).count());
        }
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
  forward_output(is_err ? rank.err : rank.out, is_err ? *rank.err_lines : *rank.out_lines);
}

void Job::on_signals(Clock::time_point now) {
  bool child_exited = false;
  for (int signo : sys::read_signals(signal_fd_.get())) {
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
    if (!r.running || r.remote) continue;
    int status = 0;
    pid_t got = ::waitpid(r.pid, &status, WNOHANG);
    if (got != r.pid) continue;
    r.running = false;
    rank_exited(r, status, now);
  }
  for (AgentProcess& p : processes_) {
    int status = 0;
    if (!p.running || ::waitpid(p.pid, &status, WNOHANG) != p.pid) continue;
    p.running = false;
    on_agent_process_exit(p, status, now);
  }
  after_exits(now);
}

void Job::rank_exited(Rank& rank, int status, Clock::time_point now) {
  judge(rank, status, now);
  if (rank.index == 0) close_stdin_pipe();
}

void Job::after_exits(Clock::time_point now) {
  check_fence_stall(now);
  if (!any_running() && linger_deadline_ == Clock::time_point::max()) {
    agent_kill_deadline_ = Clock::time_point::max();
    kill_deadline_ = Clock::time_point::max();
    time_limit_ = Clock::time_point::max();
    linger_deadline_ = now + params_.get_duration(kOutputLinger);
  }
}

void Job::judge(Rank& rank, int status, Clock::time_point now) {
  if (rank.aborted) return;  // reported when the abort arrived
  const bool finalized = server_->finalized(rank.index);
  if (rank.remote && !server_->joined(rank.index) && WIFEXITED(status)) {
    // What the agent reports when it could not start the rank at all.
    const int code = WEXITSTATUS(status);
    const char* why = code == 127   ? "the program was not found there"
                      : code == 126 ? "the program is not executable there"
                                    : nullptr;
    if (why != nullptr) {
      fail(code,
           "error: cannot start rank " + std::to_string(rank.index) + " on " + rank.host + ": " + why +
               " (" + spec_.program + ")" + consequence(),
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
      fail(code, rank.who() + " exited with status " + std::to_string(code) + consequence(), now);
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
  if (now >= agent_kill_deadline_) {
    // An agent that has not reported its ranks' end a grace after their SIGKILL is not answering: its
    // process goes, and the agent with it (or, through ssh, once its link closes).
    agent_kill_deadline_ = Clock::time_point::max();
    for (HostLink& h : hosts_) {
      const bool running = std::any_of(h.ranks.begin(), h.ranks.end(), [&](std::uint32_t r) { return ranks_[r].running; });
      if (!running) continue;
      if (processes_[h.process].running) signal_rank(processes_[h.process].pid, SIGKILL);
      lose_host(h, "lost", "their agent did not report their end after SIGKILL", kExitHostLost, now);
    }
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
  bool remote_running = false;
  for (const Rank& r : ranks_) {
    if (!r.running) continue;
    if (r.remote) {
      // Through its agent, which signals the rank's group (and sends SIGCONT itself); an agent not yet
      // connected is stopped by signalling the process starting it.
      HostLink& h = hosts_[r.host_link];
      remote_running = true;
      if (h.link) {
        h.send(SignalRank{r.index, static_cast<std::uint8_t>(signo)});
      } else if (processes_[h.process].running) {
        signal_rank(processes_[h.process].pid, signo);
      }
      continue;
    }
    signal_rank(r.pid, signo);
    // A stopped rank would hold the signal pending forever.
    if (signo != SIGKILL) signal_rank(r.pid, SIGCONT);
  }
  // The frames go out from the loop (flush_link), which may lose a host: not from here.
  if (signo == SIGKILL) {
    kill_deadline_ = Clock::time_point::max();
    if (remote_running) agent_kill_deadline_ = now + params_.get_duration(kKillGrace);
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
    text += ranks_text(list) + " " + kStates[state];
  }
  return text.empty() ? text : text + ")";
}

bool Job::any_running() const {
  return std::any_of(ranks_.begin(), ranks_.end(), [](const Rank& r) { return r.running; });
}

bool Job::any_output_open() const {
  return std::any_of(ranks_.begin(), ranks_.end(), [](const Rank& r) { return r.output_open(); });
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

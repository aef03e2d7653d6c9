// The per-host agent's loop: one poll() over the link to ftrun, the loopback listener the ranks connect
// to, every relayed connection, every rank's stdout and stderr, rank 0's stdin and a signalfd.
//
// Flow control: while more than kLinkHighWater bytes wait to go to ftrun, the agent stops reading its
// ranks' pipes and connections (and accepting), so a rank that prints faster than ftrun forwards is held
// back by its pipe, as a local rank is, and the agent's buffer stays bounded. ftrun bounds what it sends
// for stdin by the agent's stdin_ack; the rest it sends (the ranks' control traffic) is what its server
// would have queued for a directly connected rank.
#include "ftmpi/rte/host_agent.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <map>
#include <optional>

#include "ftmpi/base/log.hpp"
#include "ftmpi/rte/agent_protocol.hpp"
#include "ftmpi/rte/params.hpp"
#include "spawn.hpp"
#include "sys.hpp"

extern char** environ;

namespace ftmpi::rte {
namespace {

using base::Errc;
using base::Result;
using base::Status;
using sys::Clock;

constexpr std::size_t kLinkHighWater = 1024 * 1024;
// Relayed connections beyond the ranks' own: room for a rank that reconnects, not for a flood.
constexpr std::size_t kSpareConnections = 64;
constexpr auto kConnectAttempt = std::chrono::seconds(2);

// Signals a rank and whatever it started in its process group; falls back to the rank alone if it
// moved itself to another group.
void signal_group(pid_t pid, int signo) {
  if (::kill(-pid, signo) != 0) ::kill(pid, signo);
}

struct AgentRank {
  std::uint32_t rank = 0;
  pid_t pid = -1;
  bool running = false;
  UniqueFd out;
  UniqueFd err;
};

struct Relayed {
  UniqueFd fd;
  std::string pending;  // bytes from ftrun not yet written to the rank
  bool closing = false;  // ftrun closed it: close once `pending` is written
};

class Agent {
 public:
  explicit Agent(const HostAgentOptions& options) : options_(options) {}
  ~Agent();
  int run();

 private:
  Status start();
  Status connect();
  Status launch(const Launch& launch);
  void spawn_rank(const Launch& launch, const LaunchRank& spec, const std::string& loopback, int dev_null);
  Status loop();
  void send(const AgentMessage& message) { link_out_ += encode(message); }
  bool congested() const { return link_out_.size() - link_out_offset_ > kLinkHighWater; }
  void read_link();
  void write_link();
  Status handle(AgentMessage message);
  void accept_all();
  void read_relayed(std::uint32_t conn, Relayed& r);
  void flush_relayed(std::uint32_t conn, Relayed& r);
  void read_output(AgentRank& r, OutputStream stream);
  void flush_stdin();
  void on_signals(Clock::time_point now);
  void reap();
  void lose_link(std::string_view why, Clock::time_point now);
  void terminate(int signo, Clock::time_point now);
  bool any_running() const {
    return std::any_of(ranks_.begin(), ranks_.end(), [](const AgentRank& r) { return r.running; });
  }
  AgentRank* rank_here(std::uint32_t rank);

  const HostAgentOptions& options_;
  UniqueFd link_;
  AgentFrameReader link_reader_{kLauncherToAgent};
  std::string link_out_;
  std::size_t link_out_offset_ = 0;
  bool launched_ = false;
  UniqueFd listener_;
  std::map<std::uint32_t, Relayed> relayed_;
  std::uint32_t next_conn_ = 1;
  std::vector<AgentRank> ranks_;
  std::optional<std::uint64_t> job_id_;
  UniqueFd stdin_pipe_;  // write end of rank 0's stdin, when rank 0 is here
  std::string stdin_buffer_;
  bool stdin_ended_ = false;
  sigset_t signals_{};
  sigset_t old_mask_{};
  UniqueFd signal_fd_;
  bool terminating_ = false;
  Clock::time_point kill_deadline_ = Clock::time_point::max();
};

Agent::~Agent() {
  for (AgentRank& r : ranks_) {
    // Whatever the ranks started in their groups goes too: nothing of the job stays on this host. (The
    // group only: a reaped rank's pid may be another process's by now.)
    if (r.pid > 0) ::kill(-r.pid, SIGKILL);
    if (!r.running) continue;
    ::kill(r.pid, SIGKILL);
    while (::waitpid(r.pid, nullptr, 0) < 0 && errno == EINTR) {
    }
  }
  if (job_id_) {
    if (auto removed = remove_shared_memory(*job_id_); !removed) {
      base::logger().warn("{}", removed.status().to_string());
    } else if (*removed > 0) {
      base::logger().info("removed {} shared-memory segments the job left on {}", *removed, options_.host);
    }
  }
  if (signal_fd_) ::pthread_sigmask(SIG_SETMASK, &old_mask_, nullptr);
}

int Agent::run() {
  if (Status s = start(); !s) {
    std::fprintf(stderr, "ftrun-host on %s: error: %s\n", options_.host.c_str(), s.message().c_str());
    return 1;
  }
  if (Status s = loop(); !s) {
    std::fprintf(stderr, "ftrun-host on %s: error: %s\n", options_.host.c_str(), s.message().c_str());
    return 1;
  }
  return 0;
}

Status Agent::start() {
  // Dies with whatever started it (ssh's session, srun's step), and its ranks with it.
  if (::prctl(PR_SET_PDEATHSIG, SIGKILL) != 0) return sys::errno_status(Errc::internal, "prctl");
  if (::getppid() == 1) return Status(Errc::internal, "its parent exited before it started");
  sigemptyset(&signals_);
  for (int s : {SIGCHLD, SIGINT, SIGTERM, SIGHUP, SIGPIPE}) sigaddset(&signals_, s);
  if (::pthread_sigmask(SIG_BLOCK, &signals_, &old_mask_) != 0) return Status(Errc::internal, "cannot block signals");
  signal_fd_.reset(::signalfd(-1, &signals_, SFD_NONBLOCK | SFD_CLOEXEC));
  if (!signal_fd_) return sys::errno_status(Errc::internal, "signalfd");
  auto listener = sys::listen_tcp("127.0.0.1", 0);
  if (!listener) return listener.status();
  listener_ = std::move(*listener);
  return connect();
}

// Connects, says hello, and waits for the launch: ftrun closes the link at once if it refuses this agent.
Status Agent::connect() {
  auto addresses = parse_launcher_addresses(options_.launcher_address);
  if (!addresses) return addresses.status();
  const auto deadline = Clock::now() + options_.connect_timeout;
  auto fd = sys::connect_any(*addresses, kConnectAttempt, deadline);
  if (!fd) {
    return Status(fd.code(), "cannot reach ftrun at " + options_.launcher_address + " within rte.connect_timeout: " +
                                 fd.status().message());
  }
  link_ = std::move(*fd);
  if (Status s = sys::send_all(link_.get(), encode(AgentHello{kAgentProtocolVersion, options_.secret, options_.host}));
      !s) {
    return s;
  }
  while (!launched_) {
    pollfd p{link_.get(), POLLIN, 0};
    if (::poll(&p, 1, sys::poll_timeout_ms(deadline, Clock::now())) == 0) {
      return Status(Errc::peer_unreachable, "ftrun sent no ranks within rte.connect_timeout");
    }
    char buffer[4096];
    const ssize_t n = ::recv(link_.get(), buffer, sizeof buffer, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      return Status(Errc::peer_unreachable,
                    "ftrun refused this agent (is the host " + options_.host +
                        " one of the job's, and does FTMPI_RTE_SECRET belong to the job?)");
    }
    link_reader_.append(std::span<const char>(buffer, static_cast<std::size_t>(n)));
    auto message = link_reader_.next();
    if (!message) return message.status();
    if (!*message) continue;
    if (!std::holds_alternative<Launch>(**message)) return Status(Errc::malformed, "ftrun sent something before the ranks");
    if (Status s = launch(std::get<Launch>(**message)); !s) return s;
    launched_ = true;
    // Frames that came along with the launch.
    if (Status s = sys::set_nonblocking(link_.get()); !s) return s;
    for (;;) {
      auto more = link_reader_.next();
      if (!more) return more.status();
      if (!*more) break;
      if (Status s = handle(std::move(**more)); !s) return s;
    }
  }
  return {};
}

Status Agent::launch(const Launch& launch) {
  auto loopback = sys::local_address(listener_.get());
  if (!loopback) return loopback.status();
  UniqueFd dev_null(::open("/dev/null", O_RDONLY | O_CLOEXEC));
  if (!dev_null) return sys::errno_status(Errc::internal, "open /dev/null");
  ranks_.reserve(launch.ranks.size());
  for (const LaunchRank& spec : launch.ranks) spawn_rank(launch, spec, *loopback, dev_null.get());
  base::logger().debug("started {} ranks on {}", ranks_.size(), options_.host);
  return {};
}

void Agent::spawn_rank(const Launch& launch, const LaunchRank& spec, const std::string& loopback, int dev_null) {
  AgentRank& r = ranks_.emplace_back();
  r.rank = spec.rank;
  // The agent's own environment, the contract's variables replaced by the rank's.
  const auto name_of = [](std::string_view entry) { return entry.substr(0, entry.find('=')); };
  std::vector<std::string> env;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string_view entry(*e);
    const bool replaced = std::any_of(spec.environment.begin(), spec.environment.end(),
                                      [&](const std::string& var) { return name_of(var) == name_of(entry); });
    if (!replaced) env.emplace_back(entry);
  }
  for (const std::string& var : spec.environment) {
    // The ranks reach ftrun through this agent.
    env.push_back(name_of(var) == kEnvRteAddr ? std::string(kEnvRteAddr) + "=" + loopback : var);
  }
  std::vector<char*> envp;
  for (std::string& e : env) envp.push_back(e.data());
  envp.push_back(nullptr);
  if (!job_id_) {
    if (auto job = job_from_environment(envp.data()); job && *job) job_id_ = (*job)->identity.job_id;
  }
  std::vector<std::string> argv_text = launch.argv;
  std::vector<char*> argv;
  for (std::string& a : argv_text) argv.push_back(a.data());
  argv.push_back(nullptr);

  UniqueFd in_read;
  std::string failure;
  auto pipes = sys::output_pipes();
  if (pipes) {
    r.out = std::move(pipes->out_read);
    r.err = std::move(pipes->err_read);
  } else {
    failure = pipes.status().message();
  }
  if (failure.empty() && spec.rank == 0) {
    int in[2];
    if (::pipe2(in, O_CLOEXEC) != 0) {
      failure = std::strerror(errno);
    } else {
      in_read.reset(in[0]);
      stdin_pipe_.reset(in[1]);
      (void)sys::set_nonblocking(stdin_pipe_.get());
    }
  }
  if (failure.empty()) {
    ChildSetup setup{argv_text.front().c_str(), argv.data(),           envp.data(), in_read ? in_read.get() : dev_null,
                     pipes->out_write.get(),    pipes->err_write.get(), nullptr};
    auto pid = spawn_child(setup);
    if (pid) {
      r.pid = *pid;
      r.running = true;
      send(RankStarted{r.rank, static_cast<std::uint32_t>(*pid)});
      return;
    }
    failure = pid.status().message();
  }
  // Reported as a shell would: 127 when the program is not there, 126 when it cannot be executed.
  struct stat st {};
  const int code = ::stat(argv_text.front().c_str(), &st) != 0 ? 127 : 126;
  send(Output{r.rank, OutputStream::err, "ftrun-host on " + options_.host + ": " + failure + "\n"});
  send(Output{r.rank, OutputStream::out, {}});
  send(Output{r.rank, OutputStream::err, {}});
  send(RankExited{r.rank, code << 8});
  r.out.reset();
  r.err.reset();
  if (spec.rank == 0) stdin_pipe_.reset();
}

Status Agent::loop() {
  std::vector<pollfd> fds;
  std::vector<std::uint32_t> conns;
  for (;;) {
    Clock::time_point now = Clock::now();
    if (!link_ && !any_running()) return {};
    const bool reading = link_ && !congested();
    fds.clear();
    conns.clear();
    fds.push_back({signal_fd_.get(), POLLIN, 0});
    fds.push_back({link_ ? link_.get() : -1,
                   static_cast<short>(POLLIN | (link_out_.size() > link_out_offset_ ? POLLOUT : 0)), 0});
    fds.push_back({reading ? listener_.get() : -1, POLLIN, 0});
    fds.push_back({stdin_pipe_ && !stdin_buffer_.empty() ? stdin_pipe_.get() : -1, POLLOUT, 0});
    const std::size_t ranks_at = fds.size();
    for (const AgentRank& r : ranks_) {
      fds.push_back({reading ? r.out.get() : -1, POLLIN, 0});
      fds.push_back({reading ? r.err.get() : -1, POLLIN, 0});
    }
    const std::size_t conns_at = fds.size();
    for (const auto& [conn, r] : relayed_) {
      fds.push_back({r.fd.get(), static_cast<short>((reading && !r.closing ? POLLIN : 0) |
                                                    (r.pending.empty() ? 0 : POLLOUT)),
                     0});
      conns.push_back(conn);
    }
    if (::poll(fds.data(), fds.size(), sys::poll_timeout_ms(kill_deadline_, now)) < 0 && errno != EINTR) {
      return sys::errno_status(Errc::internal, "poll");
    }
    now = Clock::now();
    if (fds[1].revents & (POLLIN | POLLHUP | POLLERR)) read_link();
    if (link_ && (fds[1].revents & POLLOUT)) write_link();
    if (fds[3].revents != 0) flush_stdin();
    for (std::size_t i = 0; i < ranks_.size(); ++i) {
      if (fds[ranks_at + 2 * i].revents != 0) read_output(ranks_[i], OutputStream::out);
      if (fds[ranks_at + 2 * i + 1].revents != 0) read_output(ranks_[i], OutputStream::err);
    }
    for (std::size_t i = 0; i < conns.size(); ++i) {
      const short revents = fds[conns_at + i].revents;
      auto it = relayed_.find(conns[i]);
      if (revents == 0 || it == relayed_.end()) continue;
      if (revents & POLLOUT) flush_relayed(it->first, it->second);
      it = relayed_.find(conns[i]);
      if (it != relayed_.end() && (revents & (POLLIN | POLLHUP | POLLERR))) read_relayed(it->first, it->second);
    }
    if (fds[2].revents & POLLIN) accept_all();
    if (fds[0].revents & POLLIN) on_signals(now);
    if (now >= kill_deadline_) {
      kill_deadline_ = Clock::time_point::max();
      terminate(SIGKILL, now);
    }
    if (link_ && link_out_.size() > link_out_offset_) write_link();
  }
}

void Agent::read_link() {
  char buffer[64 * 1024];
  const ssize_t n = ::recv(link_.get(), buffer, sizeof buffer, 0);
  if (n < 0 && (errno == EINTR || errno == EAGAIN)) return;
  if (n <= 0) {
    lose_link(n == 0 ? (link_reader_.buffered() > 0 ? "ftrun closed the link in the middle of a frame" : "")
                     : std::strerror(errno),
              Clock::now());
    return;
  }
  link_reader_.append(std::span<const char>(buffer, static_cast<std::size_t>(n)));
  for (;;) {
    auto message = link_reader_.next();
    if (!message) {
      lose_link(message.status().message(), Clock::now());
      return;
    }
    if (!*message) return;
    if (Status s = handle(std::move(**message)); !s) {
      lose_link(s.message(), Clock::now());
      return;
    }
  }
}

void Agent::write_link() {
  const ssize_t n = ::send(link_.get(), link_out_.data() + link_out_offset_, link_out_.size() - link_out_offset_,
                           MSG_NOSIGNAL);
  if (n < 0) {
    if (errno != EINTR && errno != EAGAIN) lose_link(std::strerror(errno), Clock::now());
    return;
  }
  link_out_offset_ += static_cast<std::size_t>(n);
  if (link_out_offset_ == link_out_.size()) {
    link_out_.clear();
    link_out_offset_ = 0;
  } else if (link_out_offset_ > kLinkHighWater) {
    link_out_.erase(0, link_out_offset_);
    link_out_offset_ = 0;
  }
}

AgentRank* Agent::rank_here(std::uint32_t rank) {
  auto it = std::find_if(ranks_.begin(), ranks_.end(), [&](const AgentRank& r) { return r.rank == rank; });
  return it == ranks_.end() ? nullptr : &*it;
}

Status Agent::handle(AgentMessage message) {
  if (auto* data = std::get_if<ConnData>(&message)) {
    auto it = relayed_.find(data->conn);
    // Closed here meanwhile: ftrun learns it from our conn_close.
    if (it == relayed_.end()) return {};
    it->second.pending += data->bytes;
    flush_relayed(it->first, it->second);
  } else if (auto* close = std::get_if<ConnClose>(&message)) {
    auto it = relayed_.find(close->conn);
    if (it == relayed_.end()) return {};
    it->second.closing = true;
    if (it->second.pending.empty()) relayed_.erase(it);
  } else if (auto* in = std::get_if<StdinData>(&message)) {
    if (in->bytes.empty()) {
      stdin_ended_ = true;
    } else {
      stdin_buffer_ += in->bytes;
    }
    flush_stdin();
  } else if (auto* sig = std::get_if<SignalRank>(&message)) {
    AgentRank* r = rank_here(sig->rank);
    if (r == nullptr) return Status(Errc::malformed, "a signal for rank " + std::to_string(sig->rank) + ", not on this host");
    if (r->running) {
      signal_group(r->pid, sig->signo);
      if (sig->signo != SIGKILL) signal_group(r->pid, SIGCONT);
    }
  } else {
    return Status(Errc::malformed, "a second launch");
  }
  return {};
}

void Agent::accept_all() {
  for (;;) {
    const int fd = ::accept4(listener_.get(), nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) {
      if (errno == EINTR || errno == ECONNABORTED) continue;
      return;
    }
    UniqueFd accepted(fd);
    if (relayed_.size() >= ranks_.size() + kSpareConnections) continue;  // closed: a flood, not a rank
    sys::set_nodelay(fd);
    const std::uint32_t conn = next_conn_++;
    relayed_[conn].fd = std::move(accepted);
    send(ConnOpen{conn});
  }
}

void Agent::read_relayed(std::uint32_t conn, Relayed& r) {
  std::string chunk(kMaxRelayChunk, '\0');
  const ssize_t n = ::recv(r.fd.get(), chunk.data(), chunk.size(), 0);
  if (n < 0 && (errno == EINTR || errno == EAGAIN)) return;
  if (n <= 0) {
    if (!r.closing) send(ConnClose{conn});
    relayed_.erase(conn);
    return;
  }
  chunk.resize(static_cast<std::size_t>(n));
  send(ConnData{conn, std::move(chunk)});
}

void Agent::flush_relayed(std::uint32_t conn, Relayed& r) {
  while (!r.pending.empty()) {
    const ssize_t n = ::send(r.fd.get(), r.pending.data(), r.pending.size(), MSG_NOSIGNAL);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN) return;
      if (!r.closing) send(ConnClose{conn});
      relayed_.erase(conn);
      return;
    }
    r.pending.erase(0, static_cast<std::size_t>(n));
  }
  if (r.closing) relayed_.erase(conn);
}

void Agent::read_output(AgentRank& r, OutputStream stream) {
  UniqueFd& fd = stream == OutputStream::out ? r.out : r.err;
  std::string chunk(kMaxRelayChunk, '\0');
  const ssize_t n = ::read(fd.get(), chunk.data(), chunk.size());
  if (n < 0 && (errno == EINTR || errno == EAGAIN)) return;
  if (n <= 0) {
    fd.reset();
    send(Output{r.rank, stream, {}});
    return;
  }
  chunk.resize(static_cast<std::size_t>(n));
  send(Output{r.rank, stream, std::move(chunk)});
}

void Agent::flush_stdin() {
  std::size_t written = 0;
  while (stdin_pipe_ && !stdin_buffer_.empty()) {
    const ssize_t n = ::write(stdin_pipe_.get(), stdin_buffer_.data(), stdin_buffer_.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN) break;
      // Rank 0 closed its stdin: the rest is dropped (acknowledged, so that ftrun is not held up).
      stdin_pipe_.reset();
      break;
    }
    written += static_cast<std::size_t>(n);
    stdin_buffer_.erase(0, static_cast<std::size_t>(n));
  }
  if (!stdin_pipe_) {
    written += stdin_buffer_.size();
    stdin_buffer_.clear();
  }
  if (written > 0 && link_) send(StdinAck{static_cast<std::uint32_t>(written)});
  if (stdin_ended_ && stdin_buffer_.empty()) stdin_pipe_.reset();
}

void Agent::on_signals(Clock::time_point now) {
  bool child_exited = false;
  for (int signo : sys::read_signals(signal_fd_.get())) {
    if (signo == SIGCHLD) {
      child_exited = true;
    } else if (signo != SIGPIPE) {
      // A hang-up from ssh or a step's cancellation: the ranks get it, as they would from ftrun.
      terminate(terminating_ ? SIGKILL : signo, now);
    }
  }
  if (child_exited) reap();
}

void Agent::reap() {
  for (AgentRank& r : ranks_) {
    if (!r.running) continue;
    int status = 0;
    if (::waitpid(r.pid, &status, WNOHANG) != r.pid) continue;
    r.running = false;
    if (link_) send(RankExited{r.rank, status});
    if (r.rank == 0) {
      stdin_pipe_.reset();
      stdin_buffer_.clear();
    }
  }
}

// ftrun is gone, or ended the job: nothing more to relay; the ranks end.
void Agent::lose_link(std::string_view why, Clock::time_point now) {
  if (!why.empty()) base::logger().warn("lost the link to ftrun: {}", why);
  link_.reset();
  relayed_.clear();
  for (AgentRank& r : ranks_) {
    r.out.reset();
    r.err.reset();
  }
  stdin_pipe_.reset();
  if (any_running() && !terminating_) terminate(SIGTERM, now);
}

void Agent::terminate(int signo, Clock::time_point now) {
  for (const AgentRank& r : ranks_) {
    if (!r.running) continue;
    signal_group(r.pid, signo);
    if (signo != SIGKILL) signal_group(r.pid, SIGCONT);
  }
  if (signo == SIGKILL) {
    kill_deadline_ = Clock::time_point::max();
  } else if (!terminating_) {
    kill_deadline_ = now + options_.kill_grace;
  }
  terminating_ = true;
}

}  // namespace

Result<HostAgentOptions> host_agent_options(char** envp, std::string host, const base::ParamSet& params) {
  HostAgentOptions options;
  if (host.empty()) {
    auto slurm = environment_value(envp, kEnvSlurmNodeName);
    if (!slurm) {
      return Status(Errc::invalid_argument,
                    "no host given: pass --host NAME (as ftrun names this host), or run it as a Slurm step "
                    "(which sets " + std::string(kEnvSlurmNodeName) + ")");
    }
    host = std::string(*slurm);
  }
  if (host.size() > kMaxHostNameBytes) return Status(Errc::invalid_argument, "the host name is too long");
  options.host = std::move(host);
  auto address = environment_value(envp, kEnvRteAddr);
  if (!address) return Status(Errc::invalid_argument, std::string(kEnvRteAddr) + " is not set (ftrun sets it)");
  options.launcher_address = std::string(*address);
  auto secret = secret_from_environment(envp);
  if (!secret) return secret.status();
  options.secret = *secret;
  options.connect_timeout = params.get_duration(kConnectTimeout);
  options.kill_grace = params.get_duration(kKillGrace);
  return options;
}

int run_host_agent(const HostAgentOptions& options) {
  Agent agent(options);
  return agent.run();
}

}  // namespace ftmpi::rte

// The serving side of the control plane (control_service.hpp; the protocol in docs/control-protocol.md).
#include "control_service.hpp"

#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "ftmpi/base/json.hpp"
#include "ftmpi/base/json_value.hpp"
#include "ftmpi/base/log.hpp"
#include "ftmpi/rte/protocol.hpp"
#include "sys.hpp"

namespace ftmpi::rte {
namespace {

using base::Errc;
using base::Result;
using base::Status;

// Tools connected at once; more are closed at once (a tool never needs many).
constexpr std::size_t kMaxTools = 16;
// How long a tool may take to send its request line, and to read its answer.
constexpr auto kLineTimeout = std::chrono::seconds(5);
constexpr auto kWriteTimeout = std::chrono::seconds(10);

std::string seconds_text(std::chrono::nanoseconds d) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g s", std::chrono::duration<double>(d).count());
  return buf;
}

// The directory must be ours and closed to others: a socket in a directory someone else controls could
// be swapped for theirs.
Status prepare_directory(const std::string& dir) {
  if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) {
    return sys::errno_status(Errc::io_error, "creating " + dir);
  }
  struct stat st {};
  if (::lstat(dir.c_str(), &st) != 0) return sys::errno_status(Errc::io_error, dir);
  if (!S_ISDIR(st.st_mode)) return Status(Errc::invalid_argument, dir + " is not a directory");
  if (st.st_uid != ::getuid()) {
    return Status(Errc::invalid_argument, dir + " belongs to uid " + std::to_string(st.st_uid) + ", not to us");
  }
  if ((st.st_mode & 077) != 0 && ::chmod(dir.c_str(), 0700) != 0) {
    return sys::errno_status(Errc::io_error, "making " + dir + " private");
  }
  return {};
}

Status write_file_atomically(const std::string& path, const std::string& text) {
  const std::string temporary = path + ".tmp";
  UniqueFd fd(::open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600));
  if (!fd) return sys::errno_status(Errc::io_error, "creating " + temporary);
  for (std::size_t done = 0; done < text.size();) {
    const ssize_t n = ::write(fd.get(), text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return sys::errno_status(Errc::io_error, "writing " + temporary);
    done += static_cast<std::size_t>(n);
  }
  fd.reset();
  if (::rename(temporary.c_str(), path.c_str()) != 0) return sys::errno_status(Errc::io_error, "renaming " + temporary);
  return {};
}

}  // namespace

Result<std::unique_ptr<ControlService>> ControlService::open(JobRecord record, std::vector<std::string> rank_hosts,
                                                            std::string name) {
  const std::string dir = runtime_directory();
  if (Status s = prepare_directory(dir); !s) return s;
  if (name.empty()) name = record.id;
  record.socket = dir + "/" + name + ".sock";
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  if (record.socket.size() >= sizeof address.sun_path) {
    return Status(Errc::invalid_argument, "control socket path too long: " + record.socket);
  }
  std::memcpy(address.sun_path, record.socket.c_str(), record.socket.size() + 1);
  UniqueFd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  if (!fd) return sys::errno_status(Errc::io_error, "socket");
  ::unlink(record.socket.c_str());  // a stale one of the same id (ids are random: only after a crash)
  const mode_t old_mask = ::umask(077);  // the socket is 0600 from its creation
  const int bound = ::bind(fd.get(), reinterpret_cast<const sockaddr*>(&address), sizeof address);
  ::umask(old_mask);
  if (bound != 0) return sys::errno_status(Errc::io_error, "binding " + record.socket);
  if (::listen(fd.get(), 16) != 0) return sys::errno_status(Errc::io_error, "listen on " + record.socket);
  std::unique_ptr<ControlService> service(new ControlService());
  service->listener_ = std::move(fd);
  service->record_path_ = dir + "/" + name + ".json";
  service->record_ = std::move(record);
  service->rank_hosts_ = std::move(rank_hosts);
  if (Status s = write_file_atomically(service->record_path_, service->record_.to_json()); !s) {
    ::unlink(service->record_.socket.c_str());
    return s;
  }
  return service;
}

ControlService::~ControlService() {
  ::unlink(record_path_.c_str());
  ::unlink(record_.socket.c_str());
}

void ControlService::prepare_poll(std::vector<pollfd>& fds, Clock::time_point& deadline) {
  polled_.clear();
  fds.push_back({listener_.get(), POLLIN, 0});
  for (const auto& t : tools_) {
    // Reading the line, then nothing while the ranks answer (a hang-up is still reported), then writing.
    const short events = t->done ? POLLOUT : t->request ? 0 : POLLIN;
    fds.push_back({t->fd.get(), events, 0});
    polled_.push_back(t.get());
    deadline = std::min(deadline, t->deadline);
  }
}

void ControlService::dispatch(std::span<const pollfd> fds, Clock::time_point now, ControlTargets& ranks) {
  const std::size_t n = std::min(polled_.size(), fds.empty() ? 0 : fds.size() - 1);
  for (std::size_t i = 0; i < n; ++i) {
    Tool& tool = *polled_[i];
    const short revents = fds[i + 1].revents;
    if (!tool.fd) continue;
    if (tool.done) {
      if ((revents & (POLLOUT | POLLHUP | POLLERR)) != 0) write_to(tool);
    } else if (tool.request) {
      if ((revents & (POLLHUP | POLLERR)) != 0) tool.fd.reset();  // gone: its answer has nowhere to go
    } else if ((revents & (POLLIN | POLLHUP | POLLERR)) != 0) {
      read_from(tool, now, ranks);
    }
  }
  if (!fds.empty() && (fds[0].revents & POLLIN) != 0) accept_all(now);
  for (const auto& t : tools_) {
    if (!t->fd || now < t->deadline) continue;
    if (t->done) {
      t->fd.reset();  // a tool that does not read its answer does not keep its place
    } else if (!t->request) {
      fail(*t, "no request line within " + seconds_text(kLineTimeout));
    } else {
      finish(*t);  // the ranks that did not answer are named in it
    }
  }
  std::erase_if(tools_, [](const std::unique_ptr<Tool>& t) { return !t->fd; });
}

void ControlService::accept_all(Clock::time_point now) {
  for (;;) {
    UniqueFd fd(::accept4(listener_.get(), nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC));
    if (!fd) return;  // EAGAIN, or a connection that went away before we took it
    ucred peer{};
    socklen_t length = sizeof peer;
    if (::getsockopt(fd.get(), SOL_SOCKET, SO_PEERCRED, &peer, &length) != 0 || peer.uid != ::getuid()) {
      ++refused_peers_;
      base::logger().warn("control socket: refused a connection from uid {}", peer.uid);
      continue;
    }
    auto tool = std::make_unique<Tool>();
    tool->fd = std::move(fd);
    tool->deadline = now + kLineTimeout;
    if (tools_.size() >= kMaxTools) {
      fail(*tool, "too many tools connected to this job (" + std::to_string(kMaxTools) + "); try again");
      continue;  // answered as far as the socket takes it at once, then closed
    }
    tools_.push_back(std::move(tool));
  }
}

void ControlService::read_from(Tool& tool, Clock::time_point now, ControlTargets& ranks) {
  char buffer[4096];
  for (;;) {
    const ssize_t got = ::recv(tool.fd.get(), buffer, sizeof buffer, 0);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
    if (got <= 0) {  // gone before its request was complete
      tool.fd.reset();
      return;
    }
    tool.line.append(buffer, static_cast<std::size_t>(got));
    const std::size_t newline = tool.line.find('\n');
    if (newline != std::string::npos) tool.line.resize(newline);
    if (tool.line.size() > kMaxControlRequestBytes) {
      fail(tool, "request line longer than " + std::to_string(kMaxControlRequestBytes) + " bytes");
      return;
    }
    if (newline != std::string::npos) {
      start(tool, now, ranks);
      return;
    }
  }
}

void ControlService::start(Tool& tool, Clock::time_point now, ControlTargets& ranks) {
  auto request = parse_control_request(tool.line);
  if (!request) {
    fail(tool, request.status().message());
    return;
  }
  for (std::uint32_t r : request->ranks) {
    if (r >= ranks.size()) {
      fail(tool, "no rank " + std::to_string(r) + " in a job of " + std::to_string(ranks.size()) + " ranks");
      return;
    }
  }
  for (std::uint32_t p : request->peers) {
    if (p >= ranks.size()) {
      fail(tool, "no peer " + std::to_string(p) + " in a job of " + std::to_string(ranks.size()) + " ranks");
      return;
    }
  }
  const std::string line = to_string(*request);
  if (line.size() > kMaxControlRequestBytes) {  // what goes to the ranks must fit their frame
    fail(tool, "request longer than " + std::to_string(kMaxControlRequestBytes) + " bytes once written out");
    return;
  }
  tool.request = std::move(*request);
  tool.id = next_id_++ & ~(Server::kPeerCheckIdBit | Server::kLauncherIdBit);  // those are the server's and ftrun's
  tool.deadline = now + tool.request->timeout;
  for (std::uint32_t r = 0; r < ranks.size(); ++r) {
    if (!tool.request->names_rank(r)) continue;
    if (ranks.send_control(r, tool.id, line)) {
      tool.asked.push_back(r);
    } else {
      tool.not_asked[r] = ranks.why_not_asked(r);
    }
  }
  if (tool.asked.empty()) finish(tool);
}

void ControlService::on_reply(const RankEvent& event, Clock::time_point now) {
  (void)now;
  for (const auto& t : tools_) {
    if (t->done || !t->request || t->id != event.control_id) continue;
    if (std::find(t->asked.begin(), t->asked.end(), event.rank) == t->asked.end()) return;
    t->answers[event.rank] = Answer{event.ok, event.message};
    if (t->answers.size() == t->asked.size()) finish(*t);
    return;
  }
}

void ControlService::finish(Tool& tool) {
  base::JsonWriter w;
  bool all_ok = true;
  w.begin_object()
      .field("version", kControlVersion)
      .field("job", record_.id)
      .field("operation", to_string(tool.request->op))
      .key("ranks")
      .begin_array();
  for (std::uint32_t r : tool.asked) {
    auto it = tool.answers.find(r);
    if (it == tool.answers.end()) continue;
    w.begin_object().field("rank", r).field("host", r < rank_hosts_.size() ? rank_hosts_[r] : "");
    const Answer& a = it->second;
    // A rank's answer goes out as the JSON it is, once checked: a tool must always get valid JSON.
    if (a.ok && base::parse_json(a.text)) {
      w.field("ok", true).key("reply").raw(a.text);
    } else {
      all_ok = false;
      w.field("ok", false);
      // A refusal is {"error": why, "code": what kind} (engine_control.cpp); older ranks sent the text.
      auto refusal = a.ok ? base::Result<base::JsonValue>(base::Status(base::Errc::invalid_argument, ""))
                          : base::parse_json(a.text);
      const base::JsonValue* why = refusal ? refusal->find("error") : nullptr;
      const base::JsonValue* code = refusal ? refusal->find("code") : nullptr;
      if (why != nullptr && why->is_string() && code != nullptr && code->is_string()) {
        w.field("error", why->as_string()).field("code", code->as_string());
      } else {
        w.field("error", a.ok ? "the rank's answer is not valid JSON" : a.text);
      }
    }
    w.end_object();
  }
  w.end_array().key("missing").begin_array();
  for (std::uint32_t r : tool.asked) {
    if (tool.answers.count(r) != 0) continue;
    all_ok = false;
    w.begin_object()
        .field("rank", r)
        .field("host", r < rank_hosts_.size() ? rank_hosts_[r] : "")
        .field("why", "did not answer within " + seconds_text(tool.request->timeout) +
                          " (computing without MPI calls, or stuck)")
        .end_object();
  }
  for (const auto& [r, why] : tool.not_asked) {
    all_ok = false;
    w.begin_object().field("rank", r).field("host", r < rank_hosts_.size() ? rank_hosts_[r] : "").field("why", why);
    w.end_object();
  }
  w.end_array().field("ok", all_ok).end_object();
  tool.out = std::move(w).text() + "\n";
  tool.done = true;
  tool.deadline = Clock::now() + kWriteTimeout;
  write_to(tool);
}

void ControlService::fail(Tool& tool, const std::string& error) {
  base::JsonWriter w;
  w.begin_object().field("version", kControlVersion).field("job", record_.id).field("ok", false);
  w.field("error", error).end_object();
  tool.out = std::move(w).text() + "\n";
  tool.done = true;
  tool.deadline = Clock::now() + kWriteTimeout;
  write_to(tool);
}

void ControlService::write_to(Tool& tool) {
  while (tool.out_offset < tool.out.size()) {
    const ssize_t sent = ::send(tool.fd.get(), tool.out.data() + tool.out_offset, tool.out.size() - tool.out_offset,
                                MSG_NOSIGNAL | MSG_DONTWAIT);
    if (sent < 0 && errno == EINTR) continue;
    if (sent < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
    if (sent <= 0) break;  // the tool went away
    tool.out_offset += static_cast<std::size_t>(sent);
  }
  tool.fd.reset();  // all written (or the tool is gone): closing ends the answer
}

}  // namespace ftmpi::rte

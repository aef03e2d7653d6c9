#include "sys.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <memory>

namespace ftmpi::rte::sys {
namespace {

using base::Errc;
using base::Result;
using base::Status;

struct AddrInfoFree {
  void operator()(addrinfo* ai) const noexcept { freeaddrinfo(ai); }
};
using AddrInfoPtr = std::unique_ptr<addrinfo, AddrInfoFree>;

Result<AddrInfoPtr> resolve(const std::string& host, std::uint16_t port, int flags) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = flags | AI_NUMERICSERV;
  addrinfo* found = nullptr;
  const std::string service = std::to_string(port);
  if (int rc = getaddrinfo(host.c_str(), service.c_str(), &hints, &found); rc != 0) {
    return Status(Errc::invalid_argument, "cannot resolve '" + host + "': " + gai_strerror(rc));
  }
  return AddrInfoPtr(found);
}

std::string sockaddr_text(const sockaddr_storage& ss) {
  char host[INET6_ADDRSTRLEN] = "?";
  std::uint16_t port = 0;
  if (ss.ss_family == AF_INET) {
    const auto& in = reinterpret_cast<const sockaddr_in&>(ss);
    inet_ntop(AF_INET, &in.sin_addr, host, sizeof host);
    port = ntohs(in.sin_port);
  } else if (ss.ss_family == AF_INET6) {
    const auto& in6 = reinterpret_cast<const sockaddr_in6&>(ss);
    inet_ntop(AF_INET6, &in6.sin6_addr, host, sizeof host);
    port = ntohs(in6.sin6_port);
  }
  return join_host_port(host, port);
}

}  // namespace

Status errno_status(Errc code, std::string_view what, int err) {
  return Status(code, std::string(what) + ": " + std::strerror(err));
}

Status set_nonblocking(int fd) {
  int flags = fcntl(fd, F_GETFL);
  if (flags < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) < 0) {
    return errno_status(Errc::io_error, "fcntl(O_NONBLOCK)");
  }
  return {};
}

Status write_all(int fd, std::string_view data) {
  while (!data.empty()) {
    ssize_t n = ::write(fd, data.data(), data.size());
    if (n >= 0) {
      data.remove_prefix(static_cast<std::size_t>(n));
    } else if (errno == EAGAIN) {
      pollfd p{fd, POLLOUT, 0};
      ::poll(&p, 1, -1);
    } else if (errno != EINTR) {
      return errno_status(Errc::io_error, "write");
    }
  }
  return {};
}

Status send_all(int fd, std::string_view data) {
  while (!data.empty()) {
    ssize_t n = ::send(fd, data.data(), data.size(), MSG_NOSIGNAL);
    if (n >= 0) {
      data.remove_prefix(static_cast<std::size_t>(n));
    } else if (errno != EINTR) {
      return errno_status(Errc::peer_unreachable, "send");
    }
  }
  return {};
}

std::string seconds_text(std::chrono::nanoseconds d) {
  char text[32];
  std::snprintf(text, sizeof text, "%g s", std::chrono::duration<double>(d).count());
  return text;
}

int poll_timeout_ms(Clock::time_point deadline, Clock::time_point now) {
  if (deadline == Clock::time_point::max()) return -1;
  if (deadline <= now) return 0;
  // Round up, so that a wake-up never comes before the deadline and spins.
  auto ms = std::chrono::ceil<std::chrono::milliseconds>(deadline - now).count();
  return static_cast<int>(std::min<long long>(ms, 24LL * 3600 * 1000));
}

Result<HostPort> split_host_port(std::string_view text) {
  HostPort out;
  std::string_view port_text;
  if (text.starts_with('[')) {
    auto close = text.find("]:");
    if (close == std::string_view::npos) {
      return Status(Errc::invalid_argument, "'" + std::string(text) + "' is not [address]:port");
    }
    out.host = std::string(text.substr(1, close - 1));
    port_text = text.substr(close + 2);
  } else {
    auto colon = text.rfind(':');
    if (colon == std::string_view::npos || text.find(':') != colon) {
      return Status(Errc::invalid_argument, "'" + std::string(text) + "' is not host:port");
    }
    out.host = std::string(text.substr(0, colon));
    port_text = text.substr(colon + 1);
  }
  auto [end, ec] = std::from_chars(port_text.data(), port_text.data() + port_text.size(), out.port);
  if (out.host.empty() || ec != std::errc() || end != port_text.data() + port_text.size() ||
      port_text.empty() || out.port == 0) {
    return Status(Errc::invalid_argument, "'" + std::string(text) + "' is not host:port");
  }
  return out;
}

std::string join_host_port(std::string_view host, std::uint16_t port) {
  std::string out =
      host.find(':') != std::string_view::npos ? "[" + std::string(host) + "]" : std::string(host);
  return out + ":" + std::to_string(port);
}

Result<UniqueFd> listen_tcp(std::string_view address, std::uint16_t port) {
  auto found = resolve(std::string(address), port, AI_PASSIVE | AI_NUMERICHOST);
  if (!found) return found.status();
  Status last(Errc::invalid_argument, "no address to listen on");
  for (addrinfo* ai = found->get(); ai != nullptr; ai = ai->ai_next) {
    UniqueFd fd(::socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
    if (!fd) {
      last = errno_status(Errc::io_error, "socket");
      continue;
    }
    int one = 1;
    setsockopt(fd.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (::bind(fd.get(), ai->ai_addr, ai->ai_addrlen) != 0) {
      last = errno_status(Errc::io_error, "cannot listen on " + join_host_port(address, port));
      continue;
    }
    if (::listen(fd.get(), SOMAXCONN) != 0) {
      last = errno_status(Errc::io_error, "listen");
      continue;
    }
    return fd;
  }
  return last;
}

Result<std::string> local_address(int fd) {
  sockaddr_storage ss{};
  socklen_t len = sizeof ss;
  if (getsockname(fd, reinterpret_cast<sockaddr*>(&ss), &len) != 0) {
    return errno_status(Errc::io_error, "getsockname");
  }
  return sockaddr_text(ss);
}

std::string peer_address(int fd) {
  sockaddr_storage ss{};
  socklen_t len = sizeof ss;
  if (getpeername(fd, reinterpret_cast<sockaddr*>(&ss), &len) != 0) return "?";
  return sockaddr_text(ss);
}

Result<UniqueFd> connect_tcp(std::string_view host_port, Clock::time_point deadline) {
  auto where = split_host_port(host_port);
  if (!where) return where.status();
  auto found = resolve(where->host, where->port, 0);
  if (!found) return found.status();
  Status last(Errc::peer_unreachable, "no address for " + std::string(host_port));
  for (addrinfo* ai = found->get(); ai != nullptr; ai = ai->ai_next) {
    UniqueFd fd(::socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
    if (!fd) {
      last = errno_status(Errc::io_error, "socket");
      continue;
    }
    int err = 0;
    if (::connect(fd.get(), ai->ai_addr, ai->ai_addrlen) != 0) {
      err = errno;
      if (err == EINPROGRESS) {
        pollfd p{fd.get(), POLLOUT, 0};
        int ready = 0;
        do {
          ready = ::poll(&p, 1, poll_timeout_ms(deadline, Clock::now()));
        } while (ready < 0 && errno == EINTR);
        socklen_t len = sizeof err;
        if (ready == 0) {
          err = ETIMEDOUT;
        } else if (getsockopt(fd.get(), SOL_SOCKET, SO_ERROR, &err, &len) != 0) {
          err = errno;
        }
      }
    }
    if (err != 0) {
      last = errno_status(Errc::peer_unreachable, "cannot connect to " + std::string(host_port), err);
      continue;
    }
    int flags = fcntl(fd.get(), F_GETFL);
    fcntl(fd.get(), F_SETFL, flags & ~O_NONBLOCK);
    set_nodelay(fd.get());
    return fd;
  }
  return last;
}

void set_nodelay(int fd) {
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

Result<std::vector<std::string>> ipv4_interface_addresses() {
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) != 0) return errno_status(Errc::io_error, "getifaddrs");
  std::unique_ptr<ifaddrs, void (*)(ifaddrs*)> owner(list, freeifaddrs);
  std::vector<std::string> out;
  for (const ifaddrs* ifa = list; ifa != nullptr; ifa = ifa->ifa_next) {
    if (ifa->ifa_addr == nullptr || ifa->ifa_addr->sa_family != AF_INET) continue;
    if ((ifa->ifa_flags & IFF_UP) == 0 || (ifa->ifa_flags & IFF_LOOPBACK) != 0) continue;
    char text[INET_ADDRSTRLEN];
    const auto* in = reinterpret_cast<const sockaddr_in*>(ifa->ifa_addr);
    if (inet_ntop(AF_INET, &in->sin_addr, text, sizeof text) == nullptr) continue;
    if (std::find(out.begin(), out.end(), text) == out.end()) out.emplace_back(text);
  }
  return out;
}

Result<std::string> local_address_towards(std::string_view host) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_DGRAM;
  addrinfo* found = nullptr;
  const std::string name(host);
  if (const int rc = getaddrinfo(name.c_str(), "9", &hints, &found); rc != 0) {
    return Status(Errc::not_found, "cannot resolve host '" + name + "': " + gai_strerror(rc));
  }
  std::unique_ptr<addrinfo, void (*)(addrinfo*)> owner(found, freeaddrinfo);
  Status last(Errc::not_found, "no address of host '" + name + "'");
  for (const addrinfo* a = found; a != nullptr; a = a->ai_next) {
    UniqueFd fd(::socket(a->ai_family, SOCK_DGRAM | SOCK_CLOEXEC, 0));
    if (!fd) {
      last = errno_status(Errc::io_error, "socket");
      continue;
    }
    // connect() on a datagram socket only picks the route and the source address.
    if (::connect(fd.get(), a->ai_addr, a->ai_addrlen) != 0) {
      last = errno_status(Errc::io_error, "no route to host '" + name + "'");
      continue;
    }
    sockaddr_storage local{};
    socklen_t length = sizeof local;
    if (::getsockname(fd.get(), reinterpret_cast<sockaddr*>(&local), &length) != 0) {
      last = errno_status(Errc::io_error, "getsockname");
      continue;
    }
    char text[INET6_ADDRSTRLEN];
    const void* where = local.ss_family == AF_INET ? static_cast<const void*>(&reinterpret_cast<sockaddr_in*>(&local)->sin_addr)
                                                   : static_cast<const void*>(&reinterpret_cast<sockaddr_in6*>(&local)->sin6_addr);
    if (inet_ntop(local.ss_family, where, text, sizeof text) == nullptr) continue;
    return std::string(text);
  }
  return last;
}

void back_off(std::chrono::milliseconds& pause, Clock::time_point deadline) {
  const auto now = Clock::now();
  if (now < deadline) {
    const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - now);
    ::poll(nullptr, 0, static_cast<int>(std::min(pause, left).count()));
  }
  pause = std::min(pause * 2, kMaxRetryPause);
}

base::Result<UniqueFd> connect_any(const std::vector<std::string>& addresses, std::chrono::nanoseconds attempt,
                                   Clock::time_point deadline) {
  std::vector<std::string> reasons(addresses.size());
  std::chrono::milliseconds pause = kFirstRetryPause;
  for (;;) {
    for (std::size_t i = 0; i < addresses.size(); ++i) {
      const auto now = Clock::now();
      if (now >= deadline && !reasons[i].empty()) break;
      auto fd = connect_tcp(addresses[i], std::min(deadline, now + attempt));
      if (fd) return fd;
      reasons[i] = fd.status().message();
    }
    if (Clock::now() >= deadline) break;
    back_off(pause, deadline);
  }
  std::string why;
  for (const std::string& reason : reasons) {
    if (!reason.empty()) why += (why.empty() ? "" : "; ") + reason;
  }
  return base::Status(base::Errc::peer_unreachable, why);
}

base::Result<OutputPipes> output_pipes() {
  OutputPipes pipes;
  for (auto [read_end, write_end] : {std::pair{&pipes.out_read, &pipes.out_write}, std::pair{&pipes.err_read, &pipes.err_write}}) {
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) return errno_status(base::Errc::resource_exhausted, "pipe2");
    read_end->reset(fds[0]);
    write_end->reset(fds[1]);
    if (base::Status s = set_nonblocking(fds[0]); !s) return s;
  }
  return pipes;
}

std::vector<int> read_signals(int signal_fd) {
  std::vector<int> signals;
  signalfd_siginfo info{};
  while (::read(signal_fd, &info, sizeof info) == static_cast<ssize_t>(sizeof info)) {
    signals.push_back(static_cast<int>(info.ssi_signo));
  }
  return signals;
}

}  // namespace ftmpi::rte::sys

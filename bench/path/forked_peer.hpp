// What path_bench's two-process sections share: a child forked onto the second CPU and joined to the
// parent by a socketpair (the handshake, and the signal to stop), and a bare UDP socket on 127.0.0.1.
// Loopback only: nothing here ever sends to another address.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include "ftmpi/path/udp.hpp"
#include "ftmpi/rte/fd.hpp"
#include "pinning.hpp"

namespace ftmpi::bench::forked {

using path::UdpEndpoint;

inline constexpr std::uint32_t kLoopback = 0x7f000001;  // 127.0.0.1, host byte order

// Empty polls between looks at the clock (parent) or at the control socket (child): about 10 ms of
// polling (an empty recvfrom costs some 150 ns), far longer than a round trip, so that neither look ever
// falls inside one.
inline constexpr std::uint64_t kIdleChecks = 1 << 16;
inline constexpr auto kAnswerLimit = std::chrono::seconds(2);

inline std::string errno_text(const char* call) { return std::string(call) + ": " + std::strerror(errno); }

// What each side sends the other over the control socket once it is set up: where its UDP socket(s)
// listen, or why it has none.
struct Hello {
  bool ok = false;
  UdpEndpoint endpoint;
  char error[200] = {};
};
static_assert(std::is_trivially_copyable_v<Hello>);

inline Hello failed_hello(const std::string& what) {
  Hello hello;
  std::snprintf(hello.error, sizeof hello.error, "%s", what.c_str());
  return hello;
}

inline bool write_all(int fd, const void* data, std::size_t size) {
  for (auto* at = static_cast<const char*>(data); size != 0;) {
    const ::ssize_t n = ::write(fd, at, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    at += n;
    size -= static_cast<std::size_t>(n);
  }
  return true;
}

inline bool read_all(int fd, void* data, std::size_t size) {
  for (auto* at = static_cast<char*>(data); size != 0;) {
    const ::ssize_t n = ::read(fd, at, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    at += n;
    size -= static_cast<std::size_t>(n);
  }
  return true;
}

// Sends our Hello, reads the other side's; false, with `error` set, unless both sides are ready.
inline bool exchange(int control, const Hello& mine, Hello& theirs, std::string& error) {
  if (!write_all(control, &mine, sizeof mine) || !read_all(control, &theirs, sizeof theirs)) {
    error = "the handshake over the control socket broke off";
    return false;
  }
  theirs.error[sizeof theirs.error - 1] = '\0';
  if (!mine.ok) error = mine.error;
  if (mine.ok && !theirs.ok) error = std::string("the child: ") + theirs.error;
  return mine.ok && theirs.ok;
}

// The child, once idle (the parent stopped sending): whether the parent closed the control socket.
inline bool parent_gone(int control) {
  char byte;
  const ::ssize_t n = ::recv(control, &byte, 1, MSG_DONTWAIT);
  return n >= 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR);
}

// The parent, waiting for an answer: counts empty polls and reads the clock only every kIdleChecks of
// them (never within a normal round trip); true once it has waited kAnswerLimit, as for a lost datagram.
class Patience {
 public:
  bool exhausted() {
    if (++idle_ % kIdleChecks != 0) return false;
    const auto now = std::chrono::steady_clock::now();
    if (idle_ == kIdleChecks) since_ = now;
    return now - since_ > kAnswerLimit;
  }

 private:
  std::uint64_t idle_ = 0;
  std::chrono::steady_clock::time_point since_;
};

// Runs run(count) once as a warm-up, then `repetitions` times timed: each timed run's nanoseconds,
// fastest first, in `ns`. run(count) returns false, with its error set, when it fails.
template <typename Run>
bool timed_runs(Run&& run, std::uint64_t warm_up, std::uint64_t count, int repetitions, std::vector<double>& ns) {
  if (!run(warm_up)) return false;
  ns.clear();
  for (int r = 0; r < repetitions; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    if (!run(count)) return false;
    ns.push_back(std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(ns.begin(), ns.end());
  return true;
}

// A forked child on the second CPU, joined to the parent by a socketpair: the handshake goes over it,
// and its closing tells the child to exit (the child looks only when idle). Always reaped.
class Child {
 public:
  Child() = default;
  Child(const Child&) = delete;
  Child& operator=(const Child&) = delete;
  ~Child() {
    if (pid_ <= 0) return;
    ::kill(pid_, SIGKILL);  // on an error path only: finish() reaps it otherwise
    close_control();
    reap();
  }

  // Runs serve(control socket) in a child process; its return value is the child's exit status.
  template <typename Serve>
  bool start(const CpuPinning& pinning, Serve&& serve, std::string& error) {
    int fds[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0) {
      error = errno_text("socketpair");
      return false;
    }
    pid_ = ::fork();
    if (pid_ < 0) {
      error = errno_text("fork");
      ::close(fds[0]);
      ::close(fds[1]);
      return false;
    }
    if (pid_ == 0) {
      ::close(fds[0]);
      ::prctl(PR_SET_PDEATHSIG, SIGKILL);  // a parent that dies must not leave a child spinning
      if (!pinning.pin(1)) {
        const Hello hello = failed_hello("no second CPU to pin the child to");
        write_all(fds[1], &hello, sizeof hello);
        ::_exit(1);
      }
      ::_exit(serve(fds[1]));
    }
    ::close(fds[1]);
    control_ = fds[0];
    return true;
  }
  int control() const { return control_; }

  // Tells the child to stop and reaps it; false, with `error` set, unless it exited with status 0.
  bool finish(std::string& error) {
    close_control();
    const int status = reap();
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return true;
    error = WIFSIGNALED(status)
                ? "the child died of signal " + std::to_string(WTERMSIG(status))
                : "the child failed (exit status " + std::to_string(WEXITSTATUS(status)) + ")";
    return false;
  }

 private:
  void close_control() {
    if (control_ >= 0) ::close(control_);
    control_ = -1;
  }
  int reap() {
    int status = 0;
    while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
    pid_ = -1;
    return status;
  }

  pid_t pid_ = -1;
  int control_ = -1;
};

inline ::sockaddr_in to_address(const UdpEndpoint& endpoint) {
  ::sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(endpoint.ipv4);
  address.sin_port = htons(endpoint.short_port);
  return address;
}

// A socket bound to 127.0.0.1 on an ephemeral port: UDP (SOCK_DGRAM), or a TCP listener (SOCK_STREAM).
// Its port in hello.endpoint.short_port (ok unless it failed).
class LoopbackSocket {
 public:
  explicit LoopbackSocket(int type = SOCK_DGRAM) : fd_(::socket(AF_INET, type | SOCK_CLOEXEC, 0)) {
    if (!fd_) {
      hello = failed_hello(errno_text("socket"));
      return;
    }
    ::sockaddr_in address = to_address({kLoopback, 0, 0});
    ::socklen_t length = sizeof address;
    if (::bind(fd(), reinterpret_cast<const ::sockaddr*>(&address), sizeof address) != 0) {
      hello = failed_hello(errno_text("bind to 127.0.0.1"));
      return;
    }
    if (type == SOCK_STREAM && ::listen(fd(), 1) != 0) {
      hello = failed_hello(errno_text("listen"));
      return;
    }
    if (::getsockname(fd(), reinterpret_cast<::sockaddr*>(&address), &length) != 0) {
      hello = failed_hello(errno_text("getsockname"));
      return;
    }
    hello.ok = true;
    hello.endpoint = {kLoopback, ntohs(address.sin_port), 0};
  }

  int fd() const { return fd_.get(); }
  Hello hello;

 private:
  rte::UniqueFd fd_;
};

inline bool would_block(int err) { return err == EAGAIN || err == EWOULDBLOCK || err == EINTR; }

}  // namespace ftmpi::bench::forked

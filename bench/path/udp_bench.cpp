// UDP on 127.0.0.1 between two forked processes pinned to different cores: ping-pong one-way latency,
// first with bare sockets (the kernel's floor for a user-space UDP round trip), then through UdpPath (what
// the path driver adds; no engine). Loopback only: nothing here ever sends to another address.
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
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "ftmpi/base/params.hpp"
#include "ftmpi/bench/harness.hpp"
#include "ftmpi/path/params.hpp"
#include "ftmpi/path/udp.hpp"
#include "copy_frame.hpp"
#include "pinning.hpp"
#include "sections.hpp"

namespace ftmpi::bench {
namespace {

using Clock = std::chrono::steady_clock;
using path::Rank;
using path::UdpEndpoint;
using path::UdpPath;

constexpr std::uint32_t kLoopback = 0x7f000001;  // 127.0.0.1, host byte order
// 112: the wire header alone (a zero-byte message's frame); then 8 KiB of payload behind it.
constexpr std::size_t kHeaderBytes = 112;
constexpr std::size_t kFrameSizes[] = {kHeaderBytes, 8192 + kHeaderBytes};
constexpr std::uint64_t kWarmUp = 2000;
constexpr std::uint64_t kRoundTrips = 20000;
constexpr int kRepetitions = 7;
// Empty polls between looks at the clock (parent) or at the control socket (child): about 10 ms of
// polling (an empty recvfrom costs some 150 ns), far longer than a round trip, so that neither look ever
// falls inside one.
constexpr std::uint64_t kIdleChecks = 1 << 16;
constexpr auto kAnswerLimit = std::chrono::seconds(2);

std::string errno_text(const char* call) { return std::string(call) + ": " + std::strerror(errno); }

// What each side sends the other over the control socket once it is set up: where its UDP socket(s)
// listen, or why it has none.
struct Hello {
  bool ok = false;
  UdpEndpoint endpoint;
  char error[200] = {};
};
static_assert(std::is_trivially_copyable_v<Hello>);

Hello failed_hello(const std::string& what) {
  Hello hello;
  std::snprintf(hello.error, sizeof hello.error, "%s", what.c_str());
  return hello;
}

bool write_all(int fd, const void* data, std::size_t size) {
  for (auto* at = static_cast<const char*>(data); size != 0;) {
    const ::ssize_t n = ::write(fd, at, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    at += n;
    size -= static_cast<std::size_t>(n);
  }
  return true;
}

bool read_all(int fd, void* data, std::size_t size) {
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
bool exchange(int control, const Hello& mine, Hello& theirs, std::string& error) {
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
bool parent_gone(int control) {
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
    const auto now = Clock::now();
    if (idle_ == kIdleChecks) since_ = now;
    return now - since_ > kAnswerLimit;
  }

 private:
  std::uint64_t idle_ = 0;
  Clock::time_point since_;
};

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

// One-way latency: median and best of kRepetitions runs of kRoundTrips round trips, after a warm-up.
// round_trips(n) does n round trips, or returns false with its error set.
template <typename RoundTrips>
bool time_one_way(RoundTrips&& round_trips, Timing& timing) {
  if (!round_trips(kWarmUp)) return false;
  std::vector<double> one_way;
  for (int r = 0; r < kRepetitions; ++r) {
    const auto t0 = Clock::now();
    if (!round_trips(kRoundTrips)) return false;
    const double ns = std::chrono::duration<double, std::nano>(Clock::now() - t0).count();
    one_way.push_back(ns / (2.0 * static_cast<double>(kRoundTrips)));
  }
  std::sort(one_way.begin(), one_way.end());
  timing = {one_way[one_way.size() / 2], one_way.front()};
  return true;
}

std::string ns(double value) { return fixed(value, 0); }

// ---- Bare sockets: recvfrom(MSG_DONTWAIT) polled in a loop, sendto to answer.

::sockaddr_in to_address(const UdpEndpoint& endpoint) {
  ::sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(endpoint.ipv4);
  address.sin_port = htons(endpoint.short_port);
  return address;
}

// A UDP socket bound to 127.0.0.1 on an ephemeral port; its endpoint in hello (ok unless it failed).
class BareSocket {
 public:
  BareSocket() {
    fd_ = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd_ < 0) {
      hello = failed_hello(errno_text("socket"));
      return;
    }
    ::sockaddr_in address = to_address({kLoopback, 0, 0});
    ::socklen_t length = sizeof address;
    if (::bind(fd_, reinterpret_cast<const ::sockaddr*>(&address), sizeof address) != 0) {
      hello = failed_hello(errno_text("bind to 127.0.0.1"));
      return;
    }
    if (::getsockname(fd_, reinterpret_cast<::sockaddr*>(&address), &length) != 0) {
      hello = failed_hello(errno_text("getsockname"));
      return;
    }
    hello.ok = true;
    hello.endpoint = {kLoopback, ntohs(address.sin_port), 0};
  }
  ~BareSocket() {
    if (fd_ >= 0) ::close(fd_);
  }
  BareSocket(const BareSocket&) = delete;
  BareSocket& operator=(const BareSocket&) = delete;

  int fd() const { return fd_; }
  Hello hello;

 private:
  int fd_ = -1;
};

bool would_block(int err) { return err == EAGAIN || err == EWOULDBLOCK || err == EINTR; }

// The child: answers every datagram with its bytes, to whoever sent it.
int serve_bare(int control) {
  BareSocket socket;
  Hello parent;
  std::string error;
  if (!exchange(control, socket.hello, parent, error)) return 1;
  std::vector<std::byte> buffer(path::kUdpMaxPayload);
  for (std::uint64_t idle = 0;;) {
    ::sockaddr_in from{};
    ::socklen_t length = sizeof from;
    const ::ssize_t n = ::recvfrom(socket.fd(), buffer.data(), buffer.size(), MSG_DONTWAIT,
                                   reinterpret_cast<::sockaddr*>(&from), &length);
    if (n >= 0) {
      idle = 0;
      if (::sendto(socket.fd(), buffer.data(), static_cast<std::size_t>(n), 0,
                   reinterpret_cast<const ::sockaddr*>(&from), length) != n) {
        return 1;
      }
      continue;
    }
    if (!would_block(errno)) return 1;
    if (++idle % kIdleChecks == 0 && parent_gone(control)) return 0;
  }
}

bool bare_rows(const CpuPinning& pinning, Table& table, std::string& error) {
  Child child;
  if (!child.start(pinning, serve_bare, error)) return false;
  BareSocket socket;
  Hello peer;
  if (!exchange(child.control(), socket.hello, peer, error)) return false;
  const ::sockaddr_in to = to_address(peer.endpoint);
  std::vector<std::byte> out(path::kUdpMaxPayload, std::byte{0x5a});
  std::vector<std::byte> in(path::kUdpMaxPayload);
  for (std::size_t size : kFrameSizes) {
    const auto round_trips = [&](std::uint64_t count) {
      for (std::uint64_t i = 0; i < count; ++i) {
        if (::sendto(socket.fd(), out.data(), size, 0, reinterpret_cast<const ::sockaddr*>(&to), sizeof to) !=
            static_cast<::ssize_t>(size)) {
          error = errno_text("sendto");
          return false;
        }
        for (Patience patience;;) {
          ::sockaddr_in from{};
          ::socklen_t length = sizeof from;
          const ::ssize_t n = ::recvfrom(socket.fd(), in.data(), in.size(), MSG_DONTWAIT,
                                         reinterpret_cast<::sockaddr*>(&from), &length);
          if (n == static_cast<::ssize_t>(size)) break;
          if (n >= 0) {
            error = "an answer of " + std::to_string(n) + " bytes to " + std::to_string(size);
            return false;
          }
          if (!would_block(errno)) {
            error = errno_text("recvfrom");
            return false;
          }
          if (patience.exhausted()) {
            error = "no answer within 2 s (a datagram lost?)";
            return false;
          }
        }
      }
      return true;
    };
    Timing t;
    if (!time_one_way(round_trips, t)) return false;
    table.add_row(
        {"bare sockets (recvfrom/sendto)", std::to_string(size), ns(t.ns_per_op), ns(t.min_ns_per_op)});
  }
  return child.finish(error);
}

// ---- UdpPath: the parent sends with a FrameWriter and polls; the child's FrameSink echoes from on_frame.
// Each side copies received frames out and writes sent ones in, as the engine does with user buffers.

// A UdpPath on 127.0.0.1 for ranks 0 (the parent) and 1 (the child), with the engine's default options
// (path.udp.*). Its endpoint in hello (ok unless it failed).
class LoopbackPath {
 public:
  LoopbackPath() {
    auto rails = path::resolve_rails(path::format_ipv4(kLoopback));
    if (!rails) {
      hello = failed_hello("127.0.0.1: " + rails.status().to_string());
      return;
    }
    base::ParamSet params;
    if (auto s = params.add_table(path::path_params()); !s) {
      hello = failed_hello(s.to_string());
      return;
    }
    path::UdpOptions options = path::UdpOptions::from_params(params);
    options.peers = 2;
    auto made = UdpPath::create(rails->at(0), options);
    if (!made) {
      hello = failed_hello(made.status().to_string());
      return;
    }
    udp = std::move(*made);
    // As the engine says while no receive waits for rendezvous data: a ping-pong of eager frames.
    udp->expect_bulk(false);
    hello.ok = true;
    hello.endpoint = udp->local_endpoint();
  }
  // Adds the other side as rank `peer`; false, with `error` set, if the path refuses it.
  bool add_peer(Rank peer, const UdpEndpoint& endpoint, std::string& error) {
    auto s = udp->add_peer(peer, endpoint);
    if (!s) error = s.to_string();
    return s.is_ok();
  }

  std::unique_ptr<UdpPath> udp;
  Hello hello;
};

// The child's sink: copies every frame out and sends it straight back.
class Echo final : public path::FrameSink {
 public:
  explicit Echo(UdpPath& udp) : udp_(udp), buffer_(path::kUdpMaxPayload) {}
  void on_frame(std::span<const std::byte> frame) noexcept override {
    std::memcpy(buffer_.data(), frame.data(), frame.size());
    CopyFrame reply(buffer_.data(), frame.size());
    ok_ = ok_ && udp_.send(0, reply).is_ok();
  }
  bool ok() const { return ok_; }

 private:
  UdpPath& udp_;
  std::vector<std::byte> buffer_;
  bool ok_ = true;
};

// The parent's sink: copies frames out, counts them and checks their size.
class Counter final : public path::FrameSink {
 public:
  Counter() : buffer_(path::kUdpMaxPayload) {}
  void on_frame(std::span<const std::byte> frame) noexcept override {
    std::memcpy(buffer_.data(), frame.data(), frame.size());
    last_size = frame.size();
    ++count;
  }
  std::uint64_t count = 0;
  std::size_t last_size = 0;

 private:
  std::vector<std::byte> buffer_;
};

int serve_path(int control) {
  LoopbackPath local;
  Hello parent;
  std::string error;
  if (!exchange(control, local.hello, parent, error) || !local.add_peer(0, parent.endpoint, error)) return 1;
  Echo echo(*local.udp);
  for (std::uint64_t idle = 0; echo.ok();) {
    if (local.udp->poll(echo, 64) != 0) {
      idle = 0;
    } else if (++idle % kIdleChecks == 0 && parent_gone(control)) {
      return 0;
    }
  }
  return 1;
}

bool path_rows(const CpuPinning& pinning, Table& table, std::string& error) {
  Child child;
  if (!child.start(pinning, serve_path, error)) return false;
  LoopbackPath local;
  Hello peer;
  if (!exchange(child.control(), local.hello, peer, error) || !local.add_peer(1, peer.endpoint, error)) {
    return false;
  }
  UdpPath& udp = *local.udp;
  std::vector<std::byte> source(path::kUdpMaxPayload, std::byte{0x5a});
  Counter sink;
  for (std::size_t size : kFrameSizes) {
    CopyFrame frame(source.data(), size);
    const auto round_trips = [&](std::uint64_t count) {
      for (std::uint64_t i = 0; i < count; ++i) {
        if (auto s = udp.send(1, frame); !s) {
          error = s.to_string();
          return false;
        }
        for (Patience patience; sink.count == 0;) {
          if (udp.poll(sink, 64) == 0 && patience.exhausted()) {
            error = "no answer within 2 s (a datagram lost?)";
            return false;
          }
        }
        if (sink.count != 1 || sink.last_size != size) {
          error = std::to_string(sink.count) + " answers, the last of " + std::to_string(sink.last_size) +
                  " bytes, to one frame of " + std::to_string(size);
          return false;
        }
        sink.count = 0;
      }
      return true;
    };
    Timing t;
    if (!time_one_way(round_trips, t)) return false;
    table.add_row({"UdpPath (send/poll)", std::to_string(size), ns(t.ns_per_op), ns(t.min_ns_per_op)});
  }
  return child.finish(error);
}

}  // namespace

void run_udp_bench() {
  CpuPinning pinning;
  pinning.pin(0);
  Table latency({"udp ping-pong on 127.0.0.1, one way", "frame bytes", "median ns", "best ns"});
  std::string error;
  if (!bare_rows(pinning, latency, error) || !path_rows(pinning, latency, error)) {
    std::fprintf(stderr, "path_bench: udp section skipped: %s\n", error.c_str());
    return;
  }
  latency.print();
  std::puts("");
}

}  // namespace ftmpi::bench

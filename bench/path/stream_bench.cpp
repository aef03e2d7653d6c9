// 1 MiB messages streamed over 127.0.0.1 between two forked processes pinned to different cores, bare
// sockets only: TCP (what the peers' network transports ride on) against UDP datagrams of the largest size
// loopback carries, received into place (as ftmpi's UDP path receives bulk data). Each protocol's floor on
// this kernel: what an MPI library on top of it can approach, not pass. Loopback only.
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstdio>
#include <string>
#include <vector>

#include "ftmpi/base/params.hpp"
#include "ftmpi/bench/harness.hpp"
#include "ftmpi/path/params.hpp"
#include "ftmpi/path/udp.hpp"
#include "forked_peer.hpp"
#include "sections.hpp"

namespace ftmpi::bench {
namespace {

using namespace forked;

constexpr std::size_t kMessage = std::size_t{1} << 20;
constexpr std::size_t kDatagram = path::kUdpMaxPayload;                        // 65507: loopback's largest
constexpr std::size_t kDatagrams = (kMessage + kDatagram - 1) / kDatagram;     // 17, the last of 464 bytes
constexpr std::size_t kTcpWindow = 64;        // messages, then a one-byte answer: osu_bw's window
constexpr std::size_t kUdpInFlight = 2;       // messages unanswered: 2 MiB and more fit the 8 MiB rcvbuf
constexpr std::size_t kWarmUpMessages = 64;
constexpr std::size_t kMessagesPerRun = 256;  // a multiple of kTcpWindow
constexpr int kRepetitions = 7;
constexpr timeval kChildWait{0, 100'000};  // the child looks at the control socket this often when idle
constexpr timeval kParentWait{2, 0};       // an answer that takes longer was lost

static_assert(kMessagesPerRun % kTcpWindow == 0 && kWarmUpMessages % kTcpWindow == 0);

struct Rate {
  double median = 0;
  double best = 0;
};

// GB/s over kRepetitions runs of kMessagesPerRun messages, after a warm-up. stream(n) sends n messages and
// has every one acknowledged, or returns false with its error set.
template <typename Stream>
bool time_stream(Stream&& stream, Rate& rate) {
  std::vector<double> ns;
  if (!timed_runs(stream, kWarmUpMessages, kMessagesPerRun, kRepetitions, ns)) return false;
  const double bytes = static_cast<double>(kMessagesPerRun * kMessage);
  rate = {bytes / ns[ns.size() / 2], bytes / ns.front()};
  return true;
}

bool set_timeout(int fd, const timeval& wait) {
  return ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &wait, sizeof wait) == 0;
}

// As UdpPath sizes its sockets (path.udp.sndbuf, .rcvbuf at their defaults): forced where allowed.
bool size_buffers(int fd, std::string& error) {
  base::ParamSet params;
  if (auto s = params.add_table(path::path_params()); !s) {
    error = s.to_string();
    return false;
  }
  const path::UdpOptions options = path::UdpOptions::from_params(params);
  const auto set = [fd](int forced, int plain, std::size_t bytes) {
    const int value = static_cast<int>(bytes);
    return ::setsockopt(fd, SOL_SOCKET, forced, &value, sizeof value) == 0 ||
           ::setsockopt(fd, SOL_SOCKET, plain, &value, sizeof value) == 0;
  };
  if (!set(SO_SNDBUFFORCE, SO_SNDBUF, options.sndbuf) || !set(SO_RCVBUFFORCE, SO_RCVBUF, options.rcvbuf)) {
    error = errno_text("setsockopt (socket buffers)");
    return false;
  }
  return true;
}

// ---- TCP: kTcpWindow messages written whole, then the receiver's one-byte answer.

bool no_delay(int fd) {
  const int on = 1;
  return ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof on) == 0;
}

// The child: reads whole messages, answers each window; exits 0 when the parent closes the connection
// between two messages.
int serve_tcp(int control) {
  const LoopbackSocket listener(SOCK_STREAM);
  Hello parent;
  std::string error;
  if (!exchange(control, listener.hello, parent, error)) return 1;
  const rte::UniqueFd connection(::accept4(listener.fd(), nullptr, nullptr, SOCK_CLOEXEC));
  if (connection.get() < 0 || !no_delay(connection.get())) return 1;
  std::vector<std::byte> buffer(kMessage);
  for (std::size_t messages = 0;;) {
    for (std::size_t got = 0; got < kMessage;) {
      const ::ssize_t n = ::recv(connection.get(), buffer.data() + got, kMessage - got, 0);
      if (n == 0 && got == 0) return 0;
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return 1;
      got += static_cast<std::size_t>(n);
    }
    const char answer = 1;
    if (++messages % kTcpWindow == 0 && !write_all(connection.get(), &answer, 1)) return 1;
  }
}

bool tcp_rate(const CpuPinning& pinning, Rate& rate, std::string& error) {
  Child child;
  if (!child.start(pinning, serve_tcp, error)) return false;
  Hello mine;
  mine.ok = true;
  Hello peer;
  if (!exchange(child.control(), mine, peer, error)) return false;
  {
    const rte::UniqueFd connection(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
    const ::sockaddr_in to = to_address(peer.endpoint);
    if (connection.get() < 0 || ::connect(connection.get(), reinterpret_cast<const ::sockaddr*>(&to), sizeof to) != 0 ||
        !no_delay(connection.get()) || !set_timeout(connection.get(), kParentWait)) {
      error = errno_text("connecting over TCP to 127.0.0.1");
      return false;
    }
    const std::vector<std::byte> source(kMessage, std::byte{0x5a});
    const auto stream = [&](std::size_t messages) {
      for (std::size_t sent = 0; sent < messages; sent += kTcpWindow) {
        for (std::size_t i = 0; i < kTcpWindow; ++i) {
          if (!write_all(connection.get(), source.data(), kMessage)) {
            error = errno_text("send");
            return false;
          }
        }
        char answer = 0;
        if (!read_all(connection.get(), &answer, 1)) {
          error = "no answer to a window within 2 s";
          return false;
        }
      }
      return true;
    };
    if (!time_stream(stream, rate)) return false;
  }  // closing the connection ends the child
  return child.finish(error);
}

// ---- UDP: each message as kDatagrams datagrams by one sendmmsg (fewer if the call takes fewer), read by
// recvmmsg straight into its place in the receive buffer; a one-byte answer per message, and at most
// kUdpInFlight messages unanswered, since nothing else keeps a fast sender from overrunning the receiver.

// The size of the i-th datagram of a message.
constexpr std::size_t datagram_size(std::size_t i) {
  return i + 1 < kDatagrams ? kDatagram : kMessage - (kDatagrams - 1) * kDatagram;
}

// kDatagrams message headers whose iovecs cut `buffer` (kMessage bytes) into its datagrams' places.
struct Datagrams {
  explicit Datagrams(std::byte* buffer) {
    for (std::size_t i = 0; i < kDatagrams; ++i) {
      iov[i] = {buffer + i * kDatagram, datagram_size(i)};
      headers[i].msg_hdr.msg_iov = &iov[i];
      headers[i].msg_hdr.msg_iovlen = 1;
    }
  }
  std::array<::iovec, kDatagrams> iov{};
  std::array<::mmsghdr, kDatagrams> headers{};
};

// The child: reads each message into place, checks that every datagram filled its place exactly (a lost
// one would shift the rest), answers it; exits 0 once the parent closed the control socket.
int serve_udp(int control) {
  LoopbackSocket socket;
  std::string error;
  if (socket.hello.ok && (!size_buffers(socket.fd(), error) || !set_timeout(socket.fd(), kChildWait))) {
    socket.hello = failed_hello(error.empty() ? errno_text("setsockopt (SO_RCVTIMEO)") : error);
  }
  Hello parent;
  if (!exchange(control, socket.hello, parent, error)) return 1;
  const ::sockaddr_in to = to_address(parent.endpoint);
  std::vector<std::byte> buffer(kMessage);
  Datagrams in(buffer.data());
  for (;;) {
    for (std::size_t got = 0; got < kDatagrams;) {
      const int n = ::recvmmsg(socket.fd(), in.headers.data() + got, static_cast<unsigned>(kDatagrams - got),
                               MSG_WAITFORONE, nullptr);
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
        if (parent_gone(control)) return got == 0 ? 0 : 1;
        continue;
      }
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return 1;
      for (std::size_t i = got; i < got + static_cast<std::size_t>(n); ++i) {
        if (in.headers[i].msg_len != datagram_size(i) || (in.headers[i].msg_hdr.msg_flags & MSG_TRUNC) != 0) {
          return 1;  // out of step with the sender: a datagram was lost
        }
      }
      got += static_cast<std::size_t>(n);
    }
    const char answer = 1;
    if (::sendto(socket.fd(), &answer, 1, 0, reinterpret_cast<const ::sockaddr*>(&to), sizeof to) != 1) return 1;
  }
}

bool udp_rate(const CpuPinning& pinning, Rate& rate, std::string& error) {
  Child child;
  if (!child.start(pinning, serve_udp, error)) return false;
  LoopbackSocket socket;
  if (socket.hello.ok && (!size_buffers(socket.fd(), error) || !set_timeout(socket.fd(), kParentWait))) {
    socket.hello = failed_hello(error.empty() ? errno_text("setsockopt (SO_RCVTIMEO)") : error);
  }
  Hello peer;
  if (!exchange(child.control(), socket.hello, peer, error)) return false;
  ::sockaddr_in to = to_address(peer.endpoint);
  std::vector<std::byte> source(kMessage, std::byte{0x5a});
  Datagrams out(source.data());
  for (::mmsghdr& header : out.headers) {
    header.msg_hdr.msg_name = &to;
    header.msg_hdr.msg_namelen = sizeof to;
  }
  std::size_t unanswered = 0;
  const auto await_answer = [&] {
    char answer = 0;
    for (;;) {
      const ::ssize_t n = ::recv(socket.fd(), &answer, 1, 0);
      if (n == 1) {
        --unanswered;
        return true;
      }
      if (n < 0 && errno == EINTR) continue;
      error = n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)
                  ? "no answer to a message within 2 s: a datagram was lost (is the receive buffer too small?)"
                  : errno_text("recv");
      return false;
    }
  };
  const auto stream = [&](std::size_t messages) {
    for (std::size_t m = 0; m < messages; ++m) {
      if (unanswered == kUdpInFlight && !await_answer()) return false;
      for (std::size_t sent = 0; sent < kDatagrams;) {
        const int n = ::sendmmsg(socket.fd(), out.headers.data() + sent, static_cast<unsigned>(kDatagrams - sent), 0);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
          error = errno_text("sendmmsg");
          return false;
        }
        sent += static_cast<std::size_t>(n);
      }
      ++unanswered;
    }
    while (unanswered != 0) {
      if (!await_answer()) return false;
    }
    return true;
  };
  if (!time_stream(stream, rate)) return false;
  return child.finish(error);
}

}  // namespace

void run_stream_bench() {
  CpuPinning pinning;
  pinning.pin(0);
  Rate tcp;
  Rate udp;
  std::string error;
  if (!tcp_rate(pinning, tcp, error) || !udp_rate(pinning, udp, error)) {
    std::fprintf(stderr, "path_bench: stream section skipped: %s\n", error.c_str());
    return;
  }
  Table table({"1 MiB messages streamed on 127.0.0.1, bare sockets", "unanswered", "median GB/s", "best GB/s"});
  table.add_row({"TCP (send/recv, TCP_NODELAY)", "a window of " + std::to_string(kTcpWindow), fixed(tcp.median),
                 fixed(tcp.best)});
  table.add_row({"UDP (" + std::to_string(kDatagrams) + " datagrams by sendmmsg, recvmmsg into place)",
                 std::to_string(kUdpInFlight) + ", an answer each", fixed(udp.median), fixed(udp.best)});
  table.print();
  std::printf("\nUDP / TCP, medians: %.2fx\n\n", udp.median / tcp.median);
}

}  // namespace ftmpi::bench

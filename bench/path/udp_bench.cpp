// UDP on 127.0.0.1 between two forked processes pinned to different cores: ping-pong one-way latency,
// first with bare sockets (the kernel's floor for a user-space UDP round trip), then through UdpPath (what
// the path driver adds; no engine). Loopback only: nothing here ever sends to another address.
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "ftmpi/base/params.hpp"
#include "ftmpi/bench/harness.hpp"
#include "ftmpi/path/params.hpp"
#include "ftmpi/path/udp.hpp"
#include "copy_frame.hpp"
#include "forked_peer.hpp"
#include "pinning.hpp"
#include "sections.hpp"

namespace ftmpi::bench {
namespace {

using path::Rank;
using path::UdpEndpoint;
using path::UdpPath;
using namespace forked;

// 112: the wire header alone (a zero-byte message's frame); then 8 KiB of payload behind it.
constexpr std::size_t kHeaderBytes = 112;
constexpr std::size_t kFrameSizes[] = {kHeaderBytes, 8192 + kHeaderBytes};
constexpr std::uint64_t kWarmUp = 2000;
constexpr std::uint64_t kRoundTrips = 20000;
constexpr int kRepetitions = 7;

// One-way latency: median and best of kRepetitions runs of kRoundTrips round trips, after a warm-up.
// round_trips(n) does n round trips, or returns false with its error set.
template <typename RoundTrips>
bool time_one_way(RoundTrips&& round_trips, Timing& timing) {
  std::vector<double> ns;
  if (!timed_runs(round_trips, kWarmUp, kRoundTrips, kRepetitions, ns)) return false;
  const double per_message = 2.0 * static_cast<double>(kRoundTrips);
  timing = {ns[ns.size() / 2] / per_message, ns.front() / per_message};
  return true;
}

std::string ns(double value) { return fixed(value, 0); }

// ---- Bare sockets: recvfrom(MSG_DONTWAIT) polled in a loop, sendto to answer.

// The child: answers every datagram with its bytes, to whoever sent it.
int serve_bare(int control) {
  LoopbackSocket socket;
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
  LoopbackSocket socket;
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

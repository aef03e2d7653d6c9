// The UDP path.
//
// Two sockets per rail (LA-MPI's design). Both are non-blocking and bound to the rail's address on
// ephemeral ports; the endpoint "a.b.c.d:short:long:send" names them, and the port connected sockets send
// from (below), to the peers.
//   - The short socket carries everything the receiver did not ask for yet: eager messages, first
//     fragments of large ones, ACK/NACK and control frames.
//   - The long socket carries only the rest of messages whose first fragment the receiver has matched
//     (FrameWriter::bulk()): data a posted receive is waiting for. So it never needs unbounded buffering
//     at the receiver, and a flood of unexpected short traffic cannot crowd it out of the receive buffer
//     (each socket has its own).
// Frames go from our short socket to the peer's short socket and from our long socket to its long one, or
// from our send port (below), so the source of every datagram is a known peer endpoint; datagrams from
// elsewhere are still handed up (the engine checks every frame's MAC, job key and checksums) but counted.
//
// Connected sockets (path.udp.connected_peers). A datagram sent from an unconnected socket costs the
// kernel a route lookup per call (udp_sendmsg -> ip_route_output_flow); from a socket connected to the
// destination it reuses the route cached at connect(). On loopback here that is 0.92x of a zero-byte
// message's one-way time (docs/benchmarks.md). So the first `connected_peers` peers sent to get, per lane
// at its first send, a socket bound to the rail's address and the send port and connected to the peer's
// short or long socket; the frame goes out by send (sendto without an address). All of them share the
// send port (SO_REUSEPORT; the send anchor holds it from the start, bound before it set SO_REUSEPORT so
// that the kernel gave it a port no other socket holds), so that the endpoint names it once and the
// receiver knows it as a source; nothing is ever sent to it, and each such socket matches only datagrams
// from the address it is connected to, which the peer never sends from (its short and long sockets send
// to our short and long ports, its connected sockets from its own send port). A file descriptor per
// connected socket: never in the upper half of RLIMIT_NOFILE's descriptors, so that the program keeps
// the rest; past that, or past the count, frames go from the two sockets as before. A frame queued for
// want of room leaves from its peer's connected socket when it has one, so that the peer's frames stay
// one flow in order. A connected socket is told of ICMP errors: the next send on it fails with the error
// and sends nothing. So a send refused there for anything but room goes again from the lane's own socket
// with the address, whose answer counts, exactly as without connected sockets (counted:
// connected_send_failures): a dead peer stays silent loss, a refused GSO datagram is judged there.
//
// Frames never exceed the interface MTU minus 28 (IPv4 + UDP headers), and at most 65507 bytes: a
// larger datagram would travel as IP fragments, and losing any one fragment loses the whole datagram
// (a 63 KiB datagram is 44 fragments on a 1500-byte link: one lost packet would resend all 44). IP_PMTUDISC_DO forbids the
// kernel to fragment; a hop with a smaller MTU then shows up as EMSGSIZE (rail_down), not as silent
// loss. No SO_BINDTODEVICE: two ranks on one host talking over their rail address go through lo, which
// a device binding would refuse; routing picks the rail's interface from the destination anyway.
//
// Send errors (udp_send_errc):
//   EAGAIN, ENOBUFS, ENOMEM, EINTR   no room now: the frame is copied into the socket's FIFO queue, which
//                                    goes out from later send() and poll() calls before any newer frame
//                                    on that socket (the kernel's send buffer is per socket, not per
//                                    peer, so one FIFO per socket keeps every peer's order). Loopback
//                                    never returns these: it frees send-buffer space at once.
//   ENETUNREACH, EHOSTUNREACH,       rail_down: no route (link down), a firewall drop on OUTPUT (EPERM,
//   ENETDOWN, EHOSTDOWN, EPERM,      EACCES), the address went away, or a path MTU below our frames.
//   EACCES, EADDRNOTAVAIL, EMSGSIZE  send() returns it naming rail, peer and errno; the engine fails over.
//   ECONNREFUSED                     an old ICMP error surfacing; the frame is lost as UDP may lose it
//                                    (a connected socket's refusals go again from the shared socket).
//   anything else                    io_error, also of rail severity.
// A queued frame that meets a hard error when it finally goes out is dropped and counted (there is no
// caller to tell; retransmission repairs it, and the next send() to a dead route reports the rail).
// ICMP port-unreachable answers do not fail sends: IP_RECVERR is off, the two sockets are unconnected,
// and a connected socket's send that reports one goes again from them (above), so sending to a peer that
// died or never listened is silent loss, which the engine's timers handle.
//
// GSO and GRO (path.udp.gso, path.udp.gro): fewer system calls and fewer trips through the network
// stack per byte, with every frame still its own datagram on the wire, with its own header, checksum and
// sequence numbers: nothing the engine checks changes, and a lost GSO datagram is frames to resend.
//   - Sending. Bulk frames (the long socket) to one peer of the same size, as a large message's full
//     fragments are, are held in run_ and go out as one sendmsg with a UDP_SEGMENT control message (the
//     kernel, or the NIC, cuts it into datagrams of that size); a shorter frame joins as the last one
//     and sends the run, as do 64 frames (the older kernels' UDP_MAX_SEGMENTS) or 65507 bytes, a frame
//     for another peer or a larger one, poll(), and flush_sends(), which the engine calls at the end of
//     every progress round that sent bulk frames, so that no frame waits for the program's next call.
//     Short-socket frames go at once: latency is theirs. Held frames are copied there (a frame that
//     already exists whole, the engine's retained copy, is copied once more: its buffer may be gone by
//     the time the run leaves). UDP_SEGMENT is probed at set-up (ENOPROTOOPT before Linux 4.18: one
//     datagram per frame); a route that cannot segment (EIO: no checksum offload, IPsec; EINVAL) turns
//     GSO off for the path at the first refusal, and that run leaves frame by frame through the queue.
//     A run that finds no room is queued frame by frame, in order; a hard error is returned to the
//     send() whose frame completed the run, else counted and logged as for a queued frame.
//   - Receiving. With UDP_GRO the kernel hands the long socket several datagrams of one sender joined
//     into one (up to 64 KiB), with their size in a control message; each frame is cut out and handed
//     up on its own. A GSO datagram reaching a socket without UDP_GRO is cut by the kernel instead, so
//     either side may go without. GRO is on only where the long socket does not place: placing peeks
//     one frame's header to receive its payload where that frame belongs, and a joined datagram holds
//     several frames whose places are not known until each header is read; placing pays on large
//     frames (8 KiB and up), where 64 KiB holds few of them anyway. So on loopback (63 KiB frames) the
//     long socket places and does not coalesce, and on a 1500-byte link it coalesces and does not place.
//     The coalescing socket reads into 64 KiB slots (8 per recvmmsg); the other keeps max_frame slots.
//
// Receiving: a quiet socket one datagram at a time by recvfrom (the cheapest call for an idle poll); once
// one came, recvmmsg batches until a batch comes back short; into a ring of max_frame buffers (about
// 512 KiB in all), the short socket and the long socket in turns, each datagram handed to the sink in
// place. A datagram longer than max_frame (a misconfigured peer) arrives with MSG_TRUNC and is dropped
// and counted.
// Each read of an empty socket is a syscall, and an idle poll's cost is a small message's detection
// delay, so: a poll that handed up short-socket frames leaves the long socket to the next poll (never
// twice in a row, so that a stream of ACKs cannot starve it); and while the engine expects no bulk data
// (Path::expect_bulk(false): no receive waits for data after a clear-to-send) the long socket is read
// only every kIdleLongPolls-th poll, for late duplicates. Loopback zero-byte latency 6.1 -> 5.6 us.
//
// Receiving into place (path.udp.place; LA-MPI's "peek the header, then receive the payload where it
// belongs"). Every datagram on the long socket is rendezvous data a posted receive is waiting for, so
// its destination is known before its bytes are read. When placing, the long socket is read one
// datagram at a time:
//   1. recv(MSG_PEEK | MSG_TRUNC) of the sink's header size (FrameSink::place_header_size(), the wire
//      header) into peeked_; MSG_TRUNC makes it return the datagram's whole length;
//   2. sink.place(header, length) answers with the span where the payload must land (the user's
//      buffer), or nothing;
//   3. a span of exactly length - header bytes: recvmsg with the iovec {peeked_, span}, so the kernel
//      copies the payload straight into place (one copy fewer than the ring), then
//      sink.on_frame_parts(header, span), which verifies the checksum where the payload lies. Anything
//      else (declined, wrong size, a datagram shorter than the header or longer than max_frame):
//      recvmsg into the ring and on_frame(), exactly as recvmmsg would have.
// The datagram peeked is the datagram then received: a path is read by one thread, and nothing else
// reads its sockets. The sink only offers memory that nothing depends on yet (for the engine: bytes of a
// matched receive whose sequence numbers have not arrived), so a corrupt or forged payload written
// there is harmless: the checksum fails, the frame is NACKed, and the resend overwrites it.
// It costs a second system call per datagram and gives up recvmmsg's batching, which only pays on large
// frames: path.udp.place=auto places when the rail's max_frame is at least 8 KiB (kUdpPlaceAutoMinFrame);
// on and off force it. The short socket always uses recvmmsg: what arrives there is unexpected, or too
// small to gain. Placed frames are counted (UdpSocketCounters::frames_placed), and so are declines.
#include "ftmpi/path/udp.hpp"

#include <netinet/ip.h>
#include <netinet/udp.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>
#include <fstream>
#include <string>
#include <utility>

#include "ftmpi/base/log.hpp"
#include "ftmpi/path/params.hpp"

namespace ftmpi::path {
namespace {

using base::Errc;
using base::Status;

constexpr std::size_t kReceiveRingBytes = 512 * 1024;
constexpr unsigned kMinReceiveBatch = 4;
constexpr unsigned kMaxReceiveBatch = 64;
constexpr unsigned kFlushBatch = 64;
constexpr std::uint32_t kIdleLongPolls = 16;  // see UdpPath::expect_bulk

const char* lane_name(int lane) { return lane == 0 ? "short" : "long"; }

::sockaddr_in socket_address(std::uint32_t ipv4, std::uint16_t port) {
  ::sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(ipv4);
  address.sin_port = htons(port);
  return address;
}

std::uint64_t source_key(std::uint32_t ipv4, std::uint16_t port) { return std::uint64_t{ipv4} << 16 | port; }

std::optional<std::uint16_t> take_port(std::string_view& text) {
  std::size_t digits = 0;
  std::uint32_t value = 0;
  while (digits < text.size() && digits < 6 && text[digits] >= '0' && text[digits] <= '9') {
    value = value * 10 + static_cast<std::uint32_t>(text[digits] - '0');
    ++digits;
  }
  if (digits == 0 || digits > 5 || text.front() == '0' || value > 65535) return std::nullopt;
  text.remove_prefix(digits);
  return static_cast<std::uint16_t>(value);
}

// Asks for `bytes` of socket buffer, past the sysctl limit when the process has CAP_NET_ADMIN.
void set_buffer(int fd, int forced, int plain, std::size_t bytes) {
  if (bytes == 0) return;
  // The kernel doubles the value and keeps it in an int.
  const int value = static_cast<int>(std::min<std::size_t>(bytes, INT_MAX / 2));
  if (::setsockopt(fd, SOL_SOCKET, forced, &value, sizeof value) == 0) return;
  (void)::setsockopt(fd, SOL_SOCKET, plain, &value, sizeof value);  // capped at net.core.[rw]mem_max
}

std::size_t buffer_size(int fd, int option) {
  int value = 0;
  socklen_t length = sizeof value;
  if (::getsockopt(fd, SOL_SOCKET, option, &value, &length) != 0 || value < 0) return 0;
  return static_cast<std::size_t>(value);
}

struct Fd {
  int fd = -1;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
  int release() { return std::exchange(fd, -1); }
};

Status open_socket(const RailAddress& rail, const UdpOptions& options, const char* lane, Fd& out,
                   std::uint16_t& port) {
  const std::string what = std::string(lane) + " UDP socket on " + format_ipv4(rail.ipv4);
  out.fd = ::socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (out.fd < 0) {
    const int err = errno;
    const Errc code = (err == EMFILE || err == ENFILE || err == ENOMEM || err == ENOBUFS) ? Errc::resource_exhausted
                                                                                        : Errc::io_error;
    return {code, "cannot open the " + what + ": " + std::strerror(err)};
  }
  const int never_fragment = IP_PMTUDISC_DO;
  (void)::setsockopt(out.fd, IPPROTO_IP, IP_MTU_DISCOVER, &never_fragment, sizeof never_fragment);
  set_buffer(out.fd, SO_SNDBUFFORCE, SO_SNDBUF, options.sndbuf);
  set_buffer(out.fd, SO_RCVBUFFORCE, SO_RCVBUF, options.rcvbuf);
  ::sockaddr_in address = socket_address(rail.ipv4, 0);
  if (::bind(out.fd, reinterpret_cast<const ::sockaddr*>(&address), sizeof address) != 0) {
    const int err = errno;
    const Errc code = err == EADDRNOTAVAIL ? Errc::rail_down : Errc::io_error;
    return {code, "cannot bind the " + what + " (rail '" + rail.name + "'): " + std::strerror(err)};
  }
  socklen_t length = sizeof address;
  if (::getsockname(out.fd, reinterpret_cast<::sockaddr*>(&address), &length) != 0) {
    return {Errc::io_error, "cannot read the port of the " + what + ": " + std::strerror(errno)};
  }
  port = ntohs(address.sin_port);
  return {};
}

// The send anchor: a socket that holds the port every connected socket sends from (SO_REUSEPORT lets
// them bind it too). Bound before SO_REUSEPORT is set: the kernel then picks a port nobody holds, where
// with it set it may pick one another SO_REUSEPORT socket of the same user holds (another rank's send
// port, or a service's). It reads nothing, so its receive buffer is the smallest the kernel gives.
bool open_send_anchor(const RailAddress& rail, Fd& out, std::uint16_t& port) {
  out.fd = ::socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (out.fd < 0) return false;
  const int on = 1;
  const int smallest = 0;
  (void)::setsockopt(out.fd, SOL_SOCKET, SO_RCVBUF, &smallest, sizeof smallest);
  ::sockaddr_in address = socket_address(rail.ipv4, 0);
  socklen_t length = sizeof address;
  return ::bind(out.fd, reinterpret_cast<const ::sockaddr*>(&address), sizeof address) == 0 &&
         ::setsockopt(out.fd, SOL_SOCKET, SO_REUSEPORT, &on, sizeof on) == 0 &&
         ::getsockname(out.fd, reinterpret_cast<::sockaddr*>(&address), &length) == 0 &&
         (port = ntohs(address.sin_port)) != 0;
}

// A socket bound to the rail's address and `port` beside the anchor, connected to `to`; -1 with errno.
int open_connected(std::uint32_t ipv4, std::uint16_t port, std::size_t sndbuf, const ::sockaddr_in& to) {
  Fd fd;
  fd.fd = ::socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd.fd < 0) return -1;
  const int on = 1;
  const int smallest = 0;
  const int never_fragment = IP_PMTUDISC_DO;
  (void)::setsockopt(fd.fd, IPPROTO_IP, IP_MTU_DISCOVER, &never_fragment, sizeof never_fragment);
  (void)::setsockopt(fd.fd, SOL_SOCKET, SO_RCVBUF, &smallest, sizeof smallest);
  set_buffer(fd.fd, SO_SNDBUFFORCE, SO_SNDBUF, sndbuf);
  const ::sockaddr_in address = socket_address(ipv4, port);
  if (::setsockopt(fd.fd, SOL_SOCKET, SO_REUSEPORT, &on, sizeof on) != 0 ||
      ::bind(fd.fd, reinterpret_cast<const ::sockaddr*>(&address), sizeof address) != 0 ||
      ::connect(fd.fd, reinterpret_cast<const ::sockaddr*>(&to), sizeof to) != 0) {
    return -1;
  }
  return fd.release();
}

// The process's file descriptor limit (RLIMIT_NOFILE's soft one).
std::size_t descriptor_limit() {
  ::rlimit limit{};
  if (::getrlimit(RLIMIT_NOFILE, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY) return 1 << 20;
  return static_cast<std::size_t>(limit.rlim_cur);
}

// /sys/class/net/<if>/speed is in Mb/s; lo has none (reading fails), a veth says 10000.
double bandwidth_of(const std::string& interface) {
  std::ifstream file("/sys/class/net/" + interface + "/speed");
  long long megabits = 0;
  if (!(file >> megabits) || megabits <= 0) return 0;
  return static_cast<double>(megabits) * 1e6 / 8;
}

}  // namespace

Errc udp_send_errc(int err) noexcept {
  switch (err) {
    case EAGAIN:
#if EWOULDBLOCK != EAGAIN
    case EWOULDBLOCK:
#endif
    case ENOBUFS:
    case ENOMEM:
    case EINTR:
      return Errc::would_block;
    case ECONNREFUSED:
      return Errc::ok;
    case ENETUNREACH:
    case EHOSTUNREACH:
    case ENETDOWN:
    case EHOSTDOWN:
    case EPERM:
    case EACCES:
    case EADDRNOTAVAIL:
    case EMSGSIZE:
      return Errc::rail_down;
    default:
      return Errc::io_error;
  }
}

std::string UdpEndpoint::to_string() const {
  std::string text = format_ipv4(ipv4) + ":" + std::to_string(short_port) + ":" + std::to_string(long_port);
  if (send_port != 0) text += ":" + std::to_string(send_port);
  return text;
}

UdpOptions UdpOptions::from_params(const base::ParamSet& params) {
  UdpOptions options;
  options.max_frame = static_cast<std::size_t>(params.get_size(kUdpMaxFrame));
  options.sndbuf = static_cast<std::size_t>(params.get_size(kUdpSendBuffer));
  options.rcvbuf = static_cast<std::size_t>(params.get_size(kUdpReceiveBuffer));
  const std::string place = params.get_string(kUdpPlace);
  options.place = place == "on" ? UdpPlace::on : place == "off" ? UdpPlace::off : UdpPlace::automatic;
  options.gso = params.get_bool(kUdpGso);
  options.gro = params.get_bool(kUdpGro);
  options.connected_peers =
      static_cast<std::size_t>(std::clamp<std::int64_t>(params.get_integer(kUdpConnectedPeers), 0, 65535));
  return options;
}

base::Result<UdpEndpoint> UdpPath::parse_endpoint(std::string_view text) {
  const auto refuse = [&] {
    return Status(Errc::invalid_argument,
                  "UDP endpoint '" + std::string(text) + "' is not a.b.c.d:shortport:longport[:sendport]");
  };
  const std::size_t colon = text.find(':');
  if (colon == std::string_view::npos) return refuse();
  const std::optional<std::uint32_t> ipv4 = parse_ipv4(text.substr(0, colon));
  std::string_view rest = text.substr(colon + 1);
  const std::optional<std::uint16_t> short_port = take_port(rest);
  if (!ipv4 || !short_port || rest.empty() || rest.front() != ':') return refuse();
  rest.remove_prefix(1);
  const std::optional<std::uint16_t> long_port = take_port(rest);
  if (!long_port) return refuse();
  if (rest.empty()) return UdpEndpoint{*ipv4, *short_port, *long_port};
  if (rest.front() != ':') return refuse();
  rest.remove_prefix(1);
  const std::optional<std::uint16_t> send_port = take_port(rest);
  if (!send_port || !rest.empty()) return refuse();
  return UdpEndpoint{*ipv4, *short_port, *long_port, *send_port};
}

base::Result<std::unique_ptr<UdpPath>> UdpPath::create(const RailAddress& rail, const UdpOptions& options) {
  if (options.peers == 0) {
    return Status(Errc::invalid_argument, "UdpOptions::peers is 0: set it to the number of ranks");
  }
  const std::size_t mtu_limit = rail.mtu > kUdpIpOverhead ? rail.mtu - kUdpIpOverhead : 0;
  const std::size_t max_frame = std::min({options.max_frame, mtu_limit, kUdpMaxPayload});
  if (max_frame < kUdpMinFrame) {
    return Status(Errc::invalid_argument,
                  "UDP rail '" + rail.name + "' would carry frames of at most " + std::to_string(max_frame) +
                      " bytes (" + std::string(kUdpMaxFrame.name) + " = " + std::to_string(options.max_frame) +
                      ", interface " + rail.interface + " MTU " + std::to_string(rail.mtu) + " - " +
                      std::to_string(kUdpIpOverhead) + "); at least " + std::to_string(kUdpMinFrame) +
                      " are needed");
  }
  Fd short_fd;
  Fd long_fd;
  std::uint16_t short_port = 0;
  std::uint16_t long_port = 0;
  if (Status s = open_socket(rail, options, "short", short_fd, short_port); !s) return s;
  if (Status s = open_socket(rail, options, "long", long_fd, long_port); !s) return s;

  // Kernels before 4.18 (UDP_SEGMENT) and 5.0 (UDP_GRO) answer ENOPROTOOPT: one datagram per frame then.
  // Setting a segment size of 0 only asks whether the option exists; each GSO send names its own.
  const int no_segment = 0;
  const bool gso = options.gso && ::setsockopt(long_fd.fd, SOL_UDP, UDP_SEGMENT, &no_segment, sizeof no_segment) == 0;
  // Coalescing only where the long socket does not place (see "GSO and GRO" above).
  const int on = 1;
  const bool gro = options.gro && !UdpPath::will_place(options, max_frame) &&
                   ::setsockopt(long_fd.fd, SOL_UDP, UDP_GRO, &on, sizeof on) == 0;
  // Without the anchor (no SO_REUSEPORT here, say) every frame goes from the two sockets.
  Fd anchor;
  std::uint16_t send_port = 0;
  if (options.connected_peers != 0 && !open_send_anchor(rail, anchor, send_port)) {
    base::logger().debug("UDP rail '{}': no port for connected sockets ({}); frames go from the two sockets",
                         rail.name, std::strerror(errno));
    send_port = 0;
    ::close(anchor.release());
  }
  std::unique_ptr<UdpPath> path(new UdpPath(rail, options, max_frame, gso, gro));
  path->send_buffer_bytes_ = buffer_size(short_fd.fd, SO_SNDBUF);
  path->receive_buffer_bytes_ = buffer_size(short_fd.fd, SO_RCVBUF);
  path->sockets_[kShort].fd = short_fd.release();
  path->sockets_[kLong].fd = long_fd.release();
  path->send_anchor_ = anchor.release();
  path->local_ = UdpEndpoint{rail.ipv4, short_port, long_port, send_port};
  base::logger().debug("{}: endpoint {}, max frame {}, buffers {}/{} bytes, {}placing bulk payloads, GSO {}, GRO {}",
                       path->info_.name, path->endpoint(), max_frame, path->send_buffer_bytes_,
                       path->receive_buffer_bytes_, path->place_ ? "" : "not ", gso ? "on" : "off",
                       gro ? "on" : "off");
  return path;
}

bool UdpPath::will_place(const UdpOptions& options, std::size_t max_frame) noexcept {
  return options.place == UdpPlace::on || (options.place == UdpPlace::automatic && max_frame >= kUdpPlaceAutoMinFrame);
}

UdpPath::UdpPath(const RailAddress& rail, const UdpOptions& options, std::size_t max_frame, bool gso, bool gro)
    : rail_(rail),
      max_frame_(max_frame),
      connected_limit_(options.connected_peers),
      socket_buffer_(options.sndbuf),
      peers_(options.peers),
      scratch_(std::make_unique_for_overwrite<std::byte[]>(max_frame)),
      gso_(gso),
      gro_(gro),
      flush_messages_(kFlushBatch),
      flush_iov_(kFlushBatch),
      send_batch_(&::sendmmsg),
      send_one_(&::sendmsg),
      send_to_(&::sendto) {
  place_ = will_place(options, max_frame);
  if (gso_) run_.buffer = std::make_unique_for_overwrite<std::byte[]>(kUdpGsoMaxBytes);
  // A coalesced datagram needs a slot of 64 KiB: the coalescing socket gets fewer, larger slots, the
  // other keeps slots of max_frame. Both rings lie over the same memory, read one socket at a time.
  for (Lane lane : {kShort, kLong}) {
    Ring& ring = rings_[lane];
    ring.slot = lane == kLong && gro_ ? std::max(max_frame, kUdpGroBufferBytes) : max_frame;
    ring.batch = static_cast<unsigned>(
        std::clamp<std::size_t>(kReceiveRingBytes / ring.slot, kMinReceiveBatch, kMaxReceiveBatch));
  }
  ring_ = std::make_unique_for_overwrite<std::byte[]>(
      std::max(rings_[kShort].slot * rings_[kShort].batch, rings_[kLong].slot * rings_[kLong].batch));
  info_.kind = PathKind::udp;
  info_.name = "udp " + rail.interface + " " + format_ipv4(rail.ipv4);
  info_.rail = rail.name;
  info_.max_frame = max_frame;
  info_.reliable = false;
  info_.single_copy_read = false;
  info_.gathers = true;  // send(): header and payload as two iovecs
  info_.bandwidth_hint = bandwidth_of(rail.interface);
  // The receive headers are set up once: recvmmsg writes only msg_len, msg_flags, msg_namelen and
  // msg_controllen, and receive() resets the lengths of the entries a call used. An idle poll then
  // costs the system call alone, not a rewrite of the whole batch's headers before it.
  for (Lane lane : {kShort, kLong}) {
    Ring& ring = rings_[lane];
    const bool control = lane == kLong && gro_;
    ring.messages.resize(ring.batch);
    ring.iov.resize(ring.batch);
    ring.from.resize(ring.batch);
    if (control) ring.control.resize(ring.batch);
    for (unsigned i = 0; i < ring.batch; ++i) {
      ring.iov[i] = ::iovec{ring_.get() + i * ring.slot, ring.slot};
      ::msghdr& header = ring.messages[i].msg_hdr;
      header = ::msghdr{};
      header.msg_name = &ring.from[i];
      header.msg_namelen = sizeof(::sockaddr_in);
      header.msg_iov = &ring.iov[i];
      header.msg_iovlen = 1;
      if (control) {
        header.msg_control = ring.control[i].bytes;
        header.msg_controllen = sizeof ring.control[i].bytes;
      }
    }
  }
}

UdpPath::~UdpPath() {
  for (Peer& peer : peers_) close_connected(peer);
  for (Socket& socket : sockets_) {
    if (socket.fd >= 0) ::close(socket.fd);
  }
  if (send_anchor_ >= 0) ::close(send_anchor_);
}

int UdpPath::connect_socket(Rank peer, Lane lane) noexcept {
  Peer& entry = peers_[peer];
  entry.connect_tried[lane] = true;
  const bool counted = entry.any_connected();
  if (send_anchor_ < 0 || (!counted && counters_.connected_peers >= connected_limit_)) return -1;
  const int fd = open_connected(rail_.ipv4, local_.send_port, socket_buffer_, entry.to[lane]);
  if (fd < 0) {
    base::logger().debug("{}: no socket connected to rank {} ({} lane): {}", info_.name, peer, lane_name(lane),
                         std::strerror(errno));
    return -1;
  }
  // Descriptors are handed out lowest first: one in the upper half means the program is using many.
  if (static_cast<std::size_t>(fd) >= descriptor_limit() / 2) {
    ::close(fd);
    connected_limit_ = counters_.connected_peers;
    base::logger().info("{}: file descriptor {} is past half of the limit; the frames of peers beyond the {} "
                        "sent to go from the rail's two sockets",
                        info_.name, fd, connected_limit_);
    return -1;
  }
  if (!counted) ++counters_.connected_peers;
  entry.connected[lane] = fd;
  return fd;
}

void UdpPath::close_connected(Peer& entry) noexcept {
  const bool counted = entry.any_connected();
  for (Lane lane : {kShort, kLong}) {
    if (entry.connected[lane] >= 0) ::close(entry.connected[lane]);
    entry.connected[lane] = -1;
    entry.connect_tried[lane] = false;
  }
  if (counted) --counters_.connected_peers;
}

Status UdpPath::add_peer(Rank peer, std::string_view endpoint, std::size_t max_frame) {
  base::Result<UdpEndpoint> parsed = parse_endpoint(endpoint);
  if (!parsed) return parsed.status();
  return add_peer(peer, *parsed, max_frame);
}

Status UdpPath::add_peer(Rank peer, const UdpEndpoint& endpoint, std::size_t max_frame) {
  if (peer >= peers_.size()) {
    return {Errc::invalid_argument, info_.name + ": rank " + std::to_string(peer) +
                                        " is not below the job's " + std::to_string(peers_.size()) + " ranks"};
  }
  if (endpoint.ipv4 == 0 || endpoint.short_port == 0 || endpoint.long_port == 0) {
    return {Errc::invalid_argument, info_.name + ": endpoint " + endpoint.to_string() + " of rank " +
                                        std::to_string(peer) + " has a zero address or port"};
  }
  if (max_frame != 0 && max_frame < kUdpMinFrame) {
    return {Errc::invalid_argument, info_.name + ": rank " + std::to_string(peer) + " receives frames of " +
                                        std::to_string(max_frame) + " bytes, below the " +
                                        std::to_string(kUdpMinFrame) + " every rail must take"};
  }
  // Under the send lock, so that no send connects to the old address meanwhile (known_sources_ is the
  // receiving side's: the engine adds peers before any traffic).
  const std::lock_guard lock(send_lock_);
  Peer& entry = peers_[peer];
  if (entry.known) {
    for (std::uint16_t port : {entry.endpoint.short_port, entry.endpoint.long_port, entry.endpoint.send_port}) {
      auto it = known_sources_.find(source_key(entry.endpoint.ipv4, port));
      if (port != 0 && it != known_sources_.end() && --it->second == 0) known_sources_.erase(it);
    }
    close_connected(entry);
  }
  entry.known = true;
  entry.endpoint = endpoint;
  entry.max_frame = max_frame;
  entry.to[kShort] = socket_address(endpoint.ipv4, endpoint.short_port);
  entry.to[kLong] = socket_address(endpoint.ipv4, endpoint.long_port);
  ++known_sources_[source_key(endpoint.ipv4, endpoint.short_port)];
  ++known_sources_[source_key(endpoint.ipv4, endpoint.long_port)];
  if (endpoint.send_port != 0) ++known_sources_[source_key(endpoint.ipv4, endpoint.send_port)];
  return {};
}

Status UdpPath::send_error(Lane lane, Rank peer, int err) const {
  const Errc code = udp_send_errc(err);
  const UdpEndpoint& to = peers_[peer].endpoint;
  const std::uint16_t port = lane == kShort ? to.short_port : to.long_port;
  return {code, info_.name + " (rail '" + rail_.name + "'): cannot send to rank " + std::to_string(peer) + " at " +
                    format_ipv4(to.ipv4) + ":" + std::to_string(port) + " (" + lane_name(lane) +
                    " socket): " + std::strerror(err)};
}

void UdpPath::enqueue(Lane lane, Rank peer, std::size_t size, const std::byte* bytes, FrameWriter* writer) noexcept {
  QueuedFrame& queued = sockets_[lane].queue.emplace_back(
      QueuedFrame{peer, size, std::make_unique_for_overwrite<std::byte[]>(size)});
  if (writer != nullptr) {
    writer->write({queued.bytes.get(), size});
  } else if (size != 0) {
    std::memcpy(queued.bytes.get(), bytes, size);
  }
  ++counters_of(lane).frames_queued;
  ++queued_;
}

Status UdpPath::send(Rank peer, FrameWriter& frame) noexcept {
  if (!reaches(peer)) [[unlikely]] {
    return {Errc::invalid_argument,
            info_.name + ": rank " + std::to_string(peer) + " has no endpoint on this rail (no add_peer)"};
  }
  const std::size_t size = frame.frame_size();
  if (size > max_frame_) [[unlikely]] {
    return {Errc::out_of_range, "frame of " + std::to_string(size) + " bytes exceeds " + info_.name + "'s " +
                                    std::to_string(max_frame_) + " (" + std::string(kUdpMaxFrame.name) +
                                    ", interface MTU - 28, 65507)"};
  }
  const Lane lane = frame.bulk() ? kLong : kShort;
  const std::lock_guard lock(send_lock_);
  Socket& socket = sockets_[lane];
  if (lane == kLong && gso_) {
    // A frame that cannot join the run sends it first (its errors are not this frame's).
    if (run_.frames != 0 && (peer != run_.peer || size > run_.segment)) (void)send_run(false);
    // Held frames never wait behind queued ones: the queue is empty whenever run_ is not.
    if (gso_ && socket.queue.empty() && (run_.frames != 0 || 2 * size <= kUdpGsoMaxBytes)) {
      return send_joining(peer, frame, size);
    }
  }
  if (!socket.queue.empty()) [[unlikely]] {
    flush(lane);
    if (!socket.queue.empty()) {
      enqueue(lane, peer, size, nullptr, &frame);
      return {};
    }
  }
  // A frame that exists whole already (the engine's retained copy) goes out from there, one whose payload
  // lies in the sender's buffer as its header and that payload: no copy in user space either way.
  ::iovec iov[2];
  std::size_t parts = 1;
  std::span<const std::byte> whole = frame.bytes();
  if (whole.size() == size) {
    iov[0] = {const_cast<std::byte*>(whole.data()), size};
  } else if (const std::size_t head = frame.header_size(); head != 0) {
    const std::span<const std::byte> payload = frame.write_header({scratch_.get(), head});
    iov[0] = {scratch_.get(), head};
    iov[1] = {const_cast<std::byte*>(payload.data()), payload.size()};
    parts = payload.empty() ? 1 : 2;  // a header alone is a frame in one piece
  } else {
    frame.write({scratch_.get(), size});
    iov[0] = {scratch_.get(), size};
  }
  // A socket connected to the peer sends without an address (no route lookup); else the lane's socket.
  int fd = connected_socket(peer, lane);
  bool connected = fd >= 0;
  ::mmsghdr message{};
  const auto from_shared_socket = [&] {
    fd = socket.fd;
    connected = false;
    message.msg_hdr.msg_name = &peers_[peer].to[lane];
    message.msg_hdr.msg_namelen = sizeof(::sockaddr_in);
  };
  if (!connected) from_shared_socket();
  message.msg_hdr.msg_iov = iov;
  message.msg_hdr.msg_iovlen = parts;
  // A frame in one piece goes by sendto, the cheapest send call: the kernel copies in no msghdr and no
  // iovec. On loopback here that is ~3% of a zero-byte message's one-way time (docs/benchmarks.md).
  const auto send_now = [&] {
    if (parts == 1) {
      const auto* to = reinterpret_cast<const ::sockaddr*>(message.msg_hdr.msg_name);
      return send_to_(fd, iov[0].iov_base, iov[0].iov_len, 0, to, message.msg_hdr.msg_namelen) >= 0;
    }
    return send_batch_(fd, &message, 1, 0) == 1;
  };
  for (;;) {
    if (send_now()) [[likely]] {
      UdpSocketCounters& counters = counters_of(lane);
      ++counters.frames_sent;
      counters.bytes_sent += size;
      socket.last_logged_errno = 0;
      return {};
    }
    const int err = errno;
    if (err == EINTR) continue;
    if (connected && udp_send_errc(err) != Errc::would_block) [[unlikely]] {
      // Perhaps an ICMP error about an earlier datagram, which sent nothing: the shared socket decides.
      ++counters_.connected_send_failures;
      from_shared_socket();
      continue;
    }
    switch (udp_send_errc(err)) {
      case Errc::would_block:
        if (parts == 1) {
          enqueue(lane, peer, iov[0].iov_len, static_cast<const std::byte*>(iov[0].iov_base), nullptr);
        } else {  // header in scratch_, payload elsewhere: written whole into the queue
          enqueue(lane, peer, size, nullptr, &frame);
        }
        return {};
      case Errc::ok:
        return {};  // lost, as UDP may lose it
      default:
        ++counters_of(lane).send_errors;
        return send_error(lane, peer, err);
    }
  }
}

Status UdpPath::send_joining(Rank peer, FrameWriter& frame, std::size_t size) noexcept {
  std::byte* at = run_.buffer.get() + run_.bytes;
  if (const std::span<const std::byte> whole = frame.bytes(); whole.size() == size) {
    std::memcpy(at, whole.data(), size);
  } else {
    frame.write({at, size});
  }
  if (run_.frames == 0) {
    run_.peer = peer;
    run_.segment = size;
  }
  run_.bytes += size;
  held_.store(++run_.frames, std::memory_order_relaxed);
  // A shorter frame can only be a GSO datagram's last segment (a message's last fragment): it goes now.
  if (size < run_.segment || run_.frames == kUdpGsoMaxSegments || run_.bytes + run_.segment > kUdpGsoMaxBytes) {
    return send_run(true);
  }
  return {};
}

Status UdpPath::send_run(bool for_caller) noexcept {
  Socket& socket = sockets_[kLong];
  UdpSocketCounters& counters = counters_.long_socket;
  const Rank peer = run_.peer;
  const std::size_t frames = run_.frames;
  const std::size_t bytes = run_.bytes;
  const auto take_run = [&] {
    run_.frames = 0;
    run_.bytes = 0;
    held_.store(0, std::memory_order_relaxed);
  };
  const auto queue_run = [&] {
    for (std::size_t at = 0; at < bytes; at += run_.segment) {
      enqueue(kLong, peer, std::min(run_.segment, bytes - at), run_.buffer.get() + at, nullptr);
    }
    take_run();
  };
  ::iovec iov{run_.buffer.get(), bytes};
  int fd = connected_socket(peer, kLong);
  bool connected = fd >= 0;
  ::msghdr message{};
  const auto from_shared_socket = [&] {
    fd = socket.fd;
    connected = false;
    message.msg_name = &peers_[peer].to[kLong];
    message.msg_namelen = sizeof(::sockaddr_in);
  };
  if (!connected) from_shared_socket();
  message.msg_iov = &iov;
  message.msg_iovlen = 1;
  Control control{};
  if (frames > 1) {
    message.msg_control = control.bytes;
    message.msg_controllen = CMSG_SPACE(sizeof(std::uint16_t));
    ::cmsghdr* header = CMSG_FIRSTHDR(&message);
    header->cmsg_level = SOL_UDP;
    header->cmsg_type = UDP_SEGMENT;
    header->cmsg_len = CMSG_LEN(sizeof(std::uint16_t));
    const auto segment = static_cast<std::uint16_t>(run_.segment);
    std::memcpy(CMSG_DATA(header), &segment, sizeof segment);
  }
  int err = 0;
  for (;;) {
    if (send_one_(fd, &message, 0) >= 0) [[likely]] {
      counters.frames_sent += frames;
      counters.bytes_sent += bytes;
      if (frames > 1) {
        ++counters_.gso_datagrams_sent;
        counters_.gso_frames_sent += frames;
      }
      socket.last_logged_errno = 0;
      take_run();
      return {};
    }
    err = errno;
    if (err == EINTR) continue;
    if (!connected || udp_send_errc(err) == Errc::would_block) break;
    // Perhaps an ICMP error about an earlier datagram, which sent nothing (even one that reads as a GSO
    // refusal): the shared socket decides.
    ++counters_.connected_send_failures;
    from_shared_socket();
  }
  // The kernel took UDP_SEGMENT at set-up, yet this route cannot segment (EIO: a device without checksum
  // offload, or IPsec; EINVAL: a segment above the route's MTU): one datagram per frame from now on.
  if (frames > 1 && (err == EIO || err == EINVAL || err == ENOPROTOOPT || err == EOPNOTSUPP)) {
    gso_ = false;
    base::logger().warn("{}: the kernel refused a GSO datagram to rank {} ({}); sending one datagram per frame",
                        info_.name, peer, std::strerror(err));
    queue_run();
    flush(kLong);
    return {};
  }
  switch (udp_send_errc(err)) {
    case Errc::would_block:
      queue_run();
      return {};
    case Errc::ok:
      take_run();
      return {};  // lost, as UDP may lose it
    default:
      break;
  }
  counters.send_errors += frames;
  take_run();
  const Status error = send_error(kLong, peer, err);
  if (for_caller) return error;
  // Held frames of an earlier send(): nobody to tell, as for a queued frame (see flush()).
  if (err != socket.last_logged_errno) {
    socket.last_logged_errno = err;
    base::logger().warn("dropping held frames: {}", error.message());
  }
  return {};
}

void UdpPath::flush_sends() noexcept {
  if (held_.load(std::memory_order_relaxed) == 0) return;
  const std::lock_guard lock(send_lock_);
  if (run_.frames != 0) (void)send_run(false);
}

void UdpPath::flush(Lane lane) noexcept {
  Socket& socket = sockets_[lane];
  UdpSocketCounters& counters = counters_of(lane);
  bool shared_only = false;  // the front frame failed on its peer's connected socket: try the shared one
  while (!socket.queue.empty()) {
    // Consecutive frames for one socket go in one call: a connected peer's from its connected socket,
    // so that its frames stay one flow (in order, as on the wire), the others from the shared one.
    const auto socket_for = [&](const QueuedFrame& frame) {
      const int fd = shared_only ? -1 : peers_[frame.peer].connected[lane];
      return fd >= 0 ? fd : socket.fd;
    };
    const int fd = socket_for(socket.queue.front());
    const bool connected = fd != socket.fd;
    unsigned count = 0;
    const auto most = static_cast<unsigned>(std::min<std::size_t>(socket.queue.size(), shared_only ? 1 : kFlushBatch));
    for (; count < most && socket_for(socket.queue[count]) == fd; ++count) {
      QueuedFrame& frame = socket.queue[count];
      flush_iov_[count] = ::iovec{frame.bytes.get(), frame.size};
      ::msghdr& header = flush_messages_[count].msg_hdr;
      header = ::msghdr{};
      if (!connected) {
        header.msg_name = &peers_[frame.peer].to[lane];
        header.msg_namelen = sizeof(::sockaddr_in);
      }
      header.msg_iov = &flush_iov_[count];
      header.msg_iovlen = 1;
    }
    const int sent = send_batch_(fd, flush_messages_.data(), count, 0);
    if (sent > 0) {
      for (int i = 0; i < sent; ++i) {
        ++counters.frames_sent;
        counters.bytes_sent += socket.queue.front().size;
        socket.queue.pop_front();
      }
      queued_ -= static_cast<std::size_t>(sent);
      socket.last_logged_errno = 0;
      shared_only = false;
      continue;  // a short count means the next frame failed: the next call says why
    }
    const int err = sent < 0 ? errno : EAGAIN;
    if (err == EINTR) continue;
    const Errc code = udp_send_errc(err);
    if (code == Errc::would_block) return;
    if (connected) {  // as in send(): perhaps an earlier datagram's ICMP error; the shared socket decides
      ++counters_.connected_send_failures;
      shared_only = true;
      continue;
    }
    shared_only = false;
    // The front frame cannot go out at all: drop it, as the network could have.
    const QueuedFrame& front = socket.queue.front();
    if (code != Errc::ok) {
      ++counters.send_errors;
      if (err != socket.last_logged_errno) {
        socket.last_logged_errno = err;
        base::logger().warn("dropping queued frames: {}", send_error(lane, front.peer, err).message());
      }
    }
    socket.queue.pop_front();
    --queued_;
  }
}

namespace {

// The segment size of a datagram the kernel coalesced (UDP_GRO), from its control message; 0 for one
// that went up as it came.
std::size_t gro_segment(const ::msghdr& message) noexcept {
  for (const ::cmsghdr* c = CMSG_FIRSTHDR(&message); c != nullptr; c = CMSG_NXTHDR(const_cast<::msghdr*>(&message), const_cast<::cmsghdr*>(c))) {
    if (c->cmsg_level == SOL_UDP && c->cmsg_type == UDP_GRO && c->cmsg_len >= CMSG_LEN(sizeof(int))) {
      int segment = 0;
      std::memcpy(&segment, CMSG_DATA(c), sizeof segment);
      return segment > 0 ? static_cast<std::size_t>(segment) : 0;
    }
  }
  return 0;
}

}  // namespace

std::size_t UdpPath::receive(Lane lane, FrameSink& sink, std::size_t limit, std::size_t& handed,
                             bool& drained) noexcept {
  UdpSocketCounters& counters = counters_of(lane);
  // One datagram: `segment` is 0, or the size of each frame the kernel joined into it (the last may be
  // shorter), each handed up on its own. Returns the frames read.
  const auto hand_up = [&](const std::byte* data, std::size_t length, const ::sockaddr_in& from, bool truncated,
                           std::size_t segment) -> std::size_t {
    if (!known_sources_.contains(source_key(ntohl(from.sin_addr.s_addr), ntohs(from.sin_port)))) {
      ++counters_.from_unknown_senders;
    }
    if (segment == 0 || segment >= length) [[likely]] {
      if (truncated) [[unlikely]] {
        ++counters_.truncated;
        return 1;
      }
      ++counters.frames_received;
      counters.bytes_received += length;
      sink.on_frame({data, length});
      ++handed;
      return 1;
    }
    // Coalesced. Cut short (a kernel that joins past 64 KiB), the whole frames in it still go up.
    std::size_t frames = 0;
    for (std::size_t at = 0; at < length && (!truncated || length - at >= segment); at += segment) {
      const std::size_t size = std::min(segment, length - at);
      ++counters.frames_received;
      counters.bytes_received += size;
      sink.on_frame({data + at, size});
      ++frames;
    }
    if (truncated) ++counters_.truncated;
    ++counters_.gro_datagrams_received;
    counters_.gro_frames_received += frames;
    handed += frames;
    return std::max<std::size_t>(frames, 1);
  };
  const auto failed = [&] {
    // EAGAIN: nothing there. A pending ICMP error (only possible on connected sockets) says nothing
    // about the data behind it: read on next time.
    if (errno != EAGAIN && errno != EWOULDBLOCK && errno != ECONNREFUSED) ++counters.receive_errors;
    drained = true;
  };
  // While the socket is quiet, one datagram at a time by recvfrom: an idle poll, what a waiting rank
  // does most, is then the cheapest receive call there is (a raw UDP ping-pong here: 4.0 us one way with
  // recv, 4.3 with recvmmsg), and the datagram goes up at once, with no second call before it. A poll
  // that found one switches the socket to batches: recvmmsg until a call comes back short.
  if (batching_[lane]) return receive_batch(lane, limit, drained, hand_up, failed);
  Ring& ring = rings_[lane];
  ::sockaddr_in first_from{};
  ::ssize_t length = -1;
  std::size_t segment = 0;
  bool truncated = false;
  if (ring.control.empty()) {
    ::socklen_t from_length = sizeof first_from;
    do {
      length = ::recvfrom(sockets_[lane].fd, ring_.get(), ring.slot, MSG_DONTWAIT | MSG_TRUNC,
                          reinterpret_cast<::sockaddr*>(&first_from), &from_length);
    } while (length < 0 && errno == EINTR);
    truncated = length > 0 && static_cast<std::size_t>(length) > ring.slot;
  } else {
    // The coalescing socket: recvmsg, for the segment size.
    ::iovec iov{ring_.get(), ring.slot};
    Control control{};
    ::msghdr message{};
    message.msg_name = &first_from;
    message.msg_namelen = sizeof first_from;
    message.msg_iov = &iov;
    message.msg_iovlen = 1;
    message.msg_control = control.bytes;
    message.msg_controllen = sizeof control.bytes;
    do {
      length = ::recvmsg(sockets_[lane].fd, &message, MSG_DONTWAIT);
    } while (length < 0 && errno == EINTR);
    truncated = (message.msg_flags & MSG_TRUNC) != 0;
    if (length >= 0) segment = gro_segment(message);
  }
  if (length < 0) {
    failed();
    return 0;
  }
  const std::size_t read =
      hand_up(ring_.get(), std::min(static_cast<std::size_t>(length), ring.slot), first_from, truncated, segment);
  batching_[lane] = true;
  drained = true;  // this poll ends here; the next one reads in batches
  return read;
}

template <typename HandUp, typename Failed>
std::size_t UdpPath::receive_batch(Lane lane, std::size_t limit, bool& drained, HandUp& hand_up, Failed& failed) noexcept {
  Ring& ring = rings_[lane];
  const auto want = static_cast<unsigned>(std::min<std::size_t>(limit, ring.batch));
  int got = -1;
  do {
    got = ::recvmmsg(sockets_[lane].fd, ring.messages.data(), want, MSG_DONTWAIT, nullptr);
  } while (got < 0 && errno == EINTR);
  if (got < 0) {
    batching_[lane] = false;
    failed();
    return 0;
  }
  std::size_t read = 0;
  for (int i = 0; i < got; ++i) {
    const auto slot = static_cast<std::size_t>(i);
    ::msghdr& header = ring.messages[slot].msg_hdr;
    const std::size_t segment = ring.control.empty() ? 0 : gro_segment(header);
    read += hand_up(ring_.get() + slot * ring.slot, ring.messages[slot].msg_len, ring.from[slot],
                    (header.msg_flags & MSG_TRUNC) != 0, segment);
    header.msg_namelen = sizeof(::sockaddr_in);  // for the next call (see the constructor)
    if (!ring.control.empty()) header.msg_controllen = sizeof ring.control[slot].bytes;
  }
  if (static_cast<unsigned>(got) < want) {
    batching_[lane] = false;
    drained = true;
  }
  return read;
}

bool UdpPath::receive_one(Lane lane, FrameSink& sink, std::size_t& handed, bool& drained) noexcept {
  ::iovec iov{ring_.get(), max_frame_};
  ::sockaddr_in from{};
  ::msghdr header{};
  header.msg_name = &from;
  header.msg_namelen = sizeof from;
  header.msg_iov = &iov;
  header.msg_iovlen = 1;
  ::ssize_t got = -1;
  do {
    got = ::recvmsg(sockets_[lane].fd, &header, MSG_DONTWAIT);
  } while (got < 0 && errno == EINTR);
  UdpSocketCounters& counters = counters_of(lane);
  if (got < 0) {
    if (errno != EAGAIN && errno != EWOULDBLOCK && errno != ECONNREFUSED) ++counters.receive_errors;
    drained = true;
    return false;
  }
  if (!known_sources_.contains(source_key(ntohl(from.sin_addr.s_addr), ntohs(from.sin_port)))) {
    ++counters_.from_unknown_senders;
  }
  if ((header.msg_flags & MSG_TRUNC) != 0) [[unlikely]] {
    ++counters_.truncated;
    return true;
  }
  ++counters.frames_received;
  counters.bytes_received += static_cast<std::size_t>(got);
  sink.on_frame({ring_.get(), static_cast<std::size_t>(got)});
  ++handed;
  return true;
}

std::size_t UdpPath::receive_placing(Lane lane, FrameSink& sink, std::size_t limit, std::size_t& handed,
                                     bool& drained) noexcept {
  const std::size_t head = sink.place_header_size();
  if (head == 0 || head >= max_frame_) return receive(lane, sink, limit, handed, drained);
  if (peeked_.size() < head) peeked_.resize(head);
  const int fd = sockets_[lane].fd;
  UdpSocketCounters& counters = counters_of(lane);
  // At most a batch per call, like recvmmsg, so that the other socket gets its turn.
  const std::size_t want = std::min<std::size_t>(limit, rings_[lane].batch);
  std::size_t read = 0;
  while (read < want) {
    ::ssize_t length = -1;
    do {
      length = ::recv(fd, peeked_.data(), head, MSG_PEEK | MSG_TRUNC | MSG_DONTWAIT);
    } while (length < 0 && errno == EINTR);
    if (length < 0) {
      if (errno != EAGAIN && errno != EWOULDBLOCK && errno != ECONNREFUSED) ++counters.receive_errors;
      drained = true;
      return read;
    }
    const auto frame_length = static_cast<std::size_t>(length);
    std::span<std::byte> into;
    if (frame_length > head && frame_length <= max_frame_) {
      into = sink.place({peeked_.data(), head}, frame_length);
      if (into.size() != frame_length - head) {
        into = {};
        ++counters.placement_declined;
      }
    }
    if (into.empty()) {
      // Received whole, as recvmmsg would have (truncated and counted when too long).
      if (!receive_one(lane, sink, handed, drained)) return read;
      ++read;
      continue;
    }
    ::iovec iov[2] = {{peeked_.data(), head}, {into.data(), into.size()}};
    ::sockaddr_in from{};
    ::msghdr message{};
    message.msg_name = &from;
    message.msg_namelen = sizeof from;
    message.msg_iov = iov;
    message.msg_iovlen = 2;
    ::ssize_t got = -1;
    do {
      got = ::recvmsg(fd, &message, MSG_DONTWAIT);
    } while (got < 0 && errno == EINTR);
    if (got < 0) [[unlikely]] {  // the datagram just peeked is gone: nothing else reads this socket
      ++counters.receive_errors;
      drained = true;
      return read;
    }
    ++read;
    if (!known_sources_.contains(source_key(ntohl(from.sin_addr.s_addr), ntohs(from.sin_port)))) {
      ++counters_.from_unknown_senders;
    }
    if ((message.msg_flags & MSG_TRUNC) != 0 || static_cast<std::size_t>(got) != frame_length) [[unlikely]] {
      // Not the datagram peeked (cannot happen with one reader); its bytes went where the sink allowed.
      ++counters.receive_errors;
      continue;
    }
    ++counters.frames_received;
    ++counters.frames_placed;
    counters.bytes_received += frame_length;
    sink.on_frame_parts({peeked_.data(), head}, into);
    ++handed;
  }
  return read;
}

std::size_t UdpPath::poll(FrameSink& sink, std::size_t budget) noexcept {
  if (queued_ != 0 || held_.load(std::memory_order_relaxed) != 0) [[unlikely]] {
    const std::lock_guard lock(send_lock_);
    if (run_.frames != 0) (void)send_run(false);  // before the queue, which is empty while frames are held
    flush(kShort);
    flush(kLong);
  }
  // Datagrams read count against the budget even when dropped (truncated), so that a stream of junk
  // cannot keep one poll busy.
  std::size_t read = 0;
  std::size_t handed = 0;
  bool drained[2] = {false, false};
  // Nothing expected on the long socket (the engine has no receive waiting for bulk data): an idle poll
  // is then one syscall, not two. Still read now and then, for late duplicates.
  drained[kLong] = !bulk_expected_.load(std::memory_order_relaxed) && ++polls_ % kIdleLongPolls != 0;
  // Short then long, in turns, so that neither socket starves the other within one poll.
  while (read < budget && !(drained[kShort] && drained[kLong])) {
    for (Lane lane : {kShort, kLong}) {
      if (drained[lane] || read >= budget) continue;
      // Frames from the short socket go up before the long one is read, so a small message's latency
      // does not include a look at an empty long socket; but never twice in a row, so that a steady
      // stream on the short socket (ACKs) cannot starve the long one.
      if (lane == kLong && handed != 0 && !long_deferred_) {
        long_deferred_ = true;
        drained[kLong] = true;
        continue;
      }
      if (lane == kLong) long_deferred_ = false;
      read += lane == kLong && place_ ? receive_placing(lane, sink, budget - read, handed, drained[lane])
                                      : receive(lane, sink, budget - read, handed, drained[lane]);
    }
  }
  return handed;
}

std::vector<PathCounterGroup> UdpPath::stats() const {
  const std::lock_guard lock(send_lock_);
  const UdpSocketCounters& s = counters_.short_socket;
  const UdpSocketCounters& l = counters_.long_socket;
  return {{"udp",
           info_.name,
           {{"short_frames_sent", s.frames_sent},
            {"short_frames_received", s.frames_received},
            {"short_frames_queued", s.frames_queued},
            {"short_send_errors", s.send_errors},
            {"short_receive_errors", s.receive_errors},
            {"long_frames_sent", l.frames_sent},
            {"long_frames_received", l.frames_received},
            {"long_frames_queued", l.frames_queued},
            {"long_send_errors", l.send_errors},
            {"long_receive_errors", l.receive_errors},
            {"frames_placed", s.frames_placed + l.frames_placed},
            {"placement_declined", s.placement_declined + l.placement_declined},
            {"from_unknown_senders", counters_.from_unknown_senders},
            {"connected_peers", counters_.connected_peers},
            {"connected_send_failures", counters_.connected_send_failures},
            {"truncated", counters_.truncated},
            {"gso_datagrams_sent", counters_.gso_datagrams_sent},
            {"gso_frames_sent", counters_.gso_frames_sent},
            {"gro_datagrams_received", counters_.gro_datagrams_received},
            {"gro_frames_received", counters_.gro_frames_received}}}};
}

}  // namespace ftmpi::path

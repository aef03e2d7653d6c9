// The UDP path (docs/architecture.md, "Paths"; as LA-MPI): one UdpPath per rail, each with two sockets bound
// to the rail's address: the short socket carries eager messages, first fragments and control frames, the
// long socket carries the rest of messages the receiver has matched (FrameWriter::bulk()). Why, and what send
// errors mean, is written at the top of src/udp/udp_path.cpp.
//
// Set-up, in the engine's order:
//
//   rails = resolve_rails(params.get_string(kRails))          which local address each rail uses
//   path  = UdpPath::create(rails[k], options)                 binds both sockets; options.peers = ranks
//   publish path->endpoint() through the runtime's key-value store ("10.77.1.1:40001:40002")
//   path->add_peer(r, endpoint of rank r on rail k)            for every rank r, this one included
//
// Rails are IPv4 only for now (an IPv6 entry in path.rails is refused with `unsupported`).
//
// A UdpPath is used by one thread at a time. send() may be called from inside FrameSink::on_frame;
// poll() may not. Destroying a path drops the frames it still queues (see has_queued_frames()).
#pragma once

#include <netinet/in.h>
#include <sys/socket.h>

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "ftmpi/base/params.hpp"
#include "ftmpi/base/status.hpp"
#include "ftmpi/base/threads.hpp"
#include "ftmpi/path/path.hpp"

namespace ftmpi::path {

// IPv4 addresses are std::uint32_t in host byte order: 127.0.0.1 is 0x7f000001.
// Strict dotted decimal: four parts 0..255, no leading zeros, nothing around them.
std::optional<std::uint32_t> parse_ipv4(std::string_view text) noexcept;
std::string format_ipv4(std::uint32_t address);

// One network interface of this host as getifaddrs and SIOCGIFMTU report it.
struct LocalInterface {
  std::string name;                  // "eth0"; an address label such as "eth0:1" is an entry of its own
  bool up = false;                   // IFF_UP: administratively up
  bool running = false;              // IFF_RUNNING: has carrier
  bool loopback = false;             // IFF_LOOPBACK
  std::uint32_t mtu = 0;             // 0 when it could not be read
  std::vector<std::uint32_t> ipv4;   // its IPv4 addresses, primary first
};

// Every interface of this host, sorted by name.
base::Result<std::vector<LocalInterface>> local_interfaces();

// Where one rail lives on this host.
struct RailAddress {
  std::string name;       // the path.rails entry that chose it ("veth1", "10.77.1.0/24"), or the
                          // interface name when path.rails is empty
  std::string interface;  // the device: "veth1", "lo" (an address label's device: "eth0" for "eth0:1")
  std::uint32_t ipv4 = 0;
  std::uint32_t mtu = 0;  // the interface's MTU (lo's for any 127.0.0.0/8 address)
};

// Resolves path.rails: comma-separated entries, each an interface name ("veth1"), a local IPv4 address
// ("10.77.1.1"; any 127.0.0.0/8 address is local) or a subnet ("10.77.1.0/24": this host's address in
// it, so one spec serves every host of a cluster). Rails come out in the order of the entries. An empty
// spec means every interface that is up, has carrier, is not loopback and has an IPv4 address, sorted by
// name; or 127.0.0.1 when there is none. Errors name the entry: not_found (no such interface, address
// not local, no local address in the subnet, no IPv4 address), rail_down (interface down or without
// carrier), invalid_argument (malformed, empty or repeated entry), unsupported (IPv6).
base::Result<std::vector<RailAddress>> resolve_rails(std::string_view spec);
// The same against a given interface list (tests use made-up ones).
base::Result<std::vector<RailAddress>> resolve_rails(std::string_view spec,
                                                     std::span<const LocalInterface> interfaces);

// Where a peer's sockets are: text form "a.b.c.d:shortport:longport[:sendport]". The send port is where its
// sockets connected to single peers send from (UdpOptions::connected_peers); 0, and no fourth field, when
// it has none: then every frame comes from the short or the long port.
struct UdpEndpoint {
  std::uint32_t ipv4 = 0;
  std::uint16_t short_port = 0;
  std::uint16_t long_port = 0;
  std::uint16_t send_port = 0;

  std::string to_string() const;
  friend bool operator==(const UdpEndpoint&, const UdpEndpoint&) = default;
};

// The smallest max_frame a rail may have: the engine's wire header alone takes up to 240 bytes.
inline constexpr std::size_t kUdpMinFrame = 256;
// The largest IPv4 UDP payload.
inline constexpr std::size_t kUdpMaxPayload = 65507;
// IPv4 and UDP headers: a frame of at most MTU - 28 bytes travels as one IP packet.
inline constexpr std::size_t kUdpIpOverhead = 28;

// Whether the long socket's datagrams are peeked and their payloads received into place
// (FrameSink::place; path.udp.place).
enum class UdpPlace : std::uint8_t { automatic, on, off };

// The rail's frames must be at least this large for UdpPlace::automatic to place: below it the second
// system call per datagram costs more than the copy it saves.
inline constexpr std::size_t kUdpPlaceAutoMinFrame = 8 * 1024;

// UDP segmentation offload (path.udp.gso): the most frames one GSO datagram carries (the kernel's
// UDP_MAX_SEGMENTS: 64 in older kernels, more in newer ones) and the most bytes (one IPv4 datagram's
// payload, 65507).
inline constexpr std::size_t kUdpGsoMaxSegments = 64;
inline constexpr std::size_t kUdpGsoMaxBytes = kUdpMaxPayload;
// A receive buffer of the socket that coalesces (UDP_GRO): the kernel joins at most 64 KiB.
inline constexpr std::size_t kUdpGroBufferBytes = 64 * 1024;

struct UdpOptions {
  std::size_t max_frame = 0;  // asked for; lowered to the rail's MTU - 28 and 65507
  std::size_t sndbuf = 0;     // SO_SNDBUF of each socket; 0 keeps the kernel's default
  std::size_t rcvbuf = 0;     // SO_RCVBUF of each socket; 0 keeps the kernel's default
  std::size_t peers = 0;      // ranks in the job: add_peer takes ranks below this
  UdpPlace place = UdpPlace::automatic;
  bool gso = true;  // send runs of equal bulk frames as one UDP_SEGMENT datagram, where the kernel can
  bool gro = true;  // let the kernel coalesce the long socket's datagrams (UDP_GRO) when it does not place
  // Peers (the first this many sent to) that get a socket per lane connected to them for sending: the
  // kernel then looks up no route per datagram. 0: every frame goes from the short and long sockets.
  std::size_t connected_peers = 64;

  // path.udp.max_frame, .sndbuf, .rcvbuf, .place, .gso, .gro and .connected_peers; `peers` is left 0 for
  // the caller to set.
  static UdpOptions from_params(const base::ParamSet& params);
};

// Per socket. A frame counts as sent once the kernel took it.
struct UdpSocketCounters {
  std::uint64_t frames_sent = 0;
  std::uint64_t bytes_sent = 0;
  std::uint64_t frames_received = 0;  // handed to the sink
  std::uint64_t bytes_received = 0;
  std::uint64_t frames_queued = 0;    // found the socket's send buffer full (EAGAIN, ENOBUFS) and waited
  std::uint64_t send_errors = 0;      // refused by the kernel: returned by send(), or dropped from the queue
  std::uint64_t receive_errors = 0;   // recvmmsg failures other than "nothing there"
  std::uint64_t frames_placed = 0;    // of frames_received: payload received straight into place
  std::uint64_t placement_declined = 0;  // peeked, but the sink had no place: received as usual
};

struct UdpCounters {
  UdpSocketCounters short_socket;
  UdpSocketCounters long_socket;
  std::uint64_t from_unknown_senders = 0;  // datagrams whose source is no peer's endpoint (still handed up)
  std::uint64_t truncated = 0;             // datagrams longer than max_frame (dropped)
  std::uint64_t gso_datagrams_sent = 0;    // long socket: GSO datagrams of two frames or more
  std::uint64_t gso_frames_sent = 0;       // the frames they carried (counted in frames_sent too)
  std::uint64_t gro_datagrams_received = 0;  // long socket: datagrams the kernel had coalesced
  std::uint64_t gro_frames_received = 0;   // the frames split out of them (in frames_received too)
  std::uint64_t connected_peers = 0;       // peers sent to through sockets connected to them
  // Sends a connected socket refused (not for want of room): perhaps an ICMP error about an earlier
  // datagram, which the kernel reports there and which sends nothing. Each went again from the lane's
  // own socket, whose answer counted.
  std::uint64_t connected_send_failures = 0;
};

// What a send errno means (the table is at the top of src/udp/udp_path.cpp):
//   would_block  no room in the socket now (EAGAIN, EWOULDBLOCK, ENOBUFS, ENOMEM, EINTR): queue the frame
//   ok           the frame is lost as UDP may lose it, nothing to report (ECONNREFUSED: a stale ICMP error)
//   rail_down    the rail cannot reach the peer (ENETUNREACH, EHOSTUNREACH, ENETDOWN, EHOSTDOWN, EPERM,
//                EACCES, EADDRNOTAVAIL, EMSGSIZE)
//   io_error     anything else (also rail severity)
base::Errc udp_send_errc(int err) noexcept;

class UdpPath final : public Path {
 public:
  // Opens and binds both sockets on rail.ipv4 (ephemeral ports), sets their buffers (forced past
  // net.core.[rw]mem_max when the process may), and sizes frames to the rail. invalid_argument when the
  // options make no sense (peers == 0, max_frame below kUdpMinFrame), rail_down when the address is not
  // on this host (any more), resource_exhausted or io_error when the sockets cannot be made.
  static base::Result<std::unique_ptr<UdpPath>> create(const RailAddress& rail, const UdpOptions& options);

  // Strict: "a.b.c.d:shortport:longport" or "a.b.c.d:shortport:longport:sendport", ports 1..65535, no
  // spaces or leading zeros; else invalid_argument naming the text.
  static base::Result<UdpEndpoint> parse_endpoint(std::string_view text);

  ~UdpPath() override;

  // This path's sockets, to publish to the peers.
  std::string endpoint() const { return local_.to_string(); }
  const UdpEndpoint& local_endpoint() const noexcept { return local_; }
  const RailAddress& rail() const noexcept { return rail_; }

  // Tells the path where rank `peer` listens on this rail; a second call replaces the first (and closes
  // the sockets connected to the old endpoint).
  // invalid_argument for a malformed endpoint or a rank not below UdpOptions::peers.
  // `max_frame`: the largest frame the peer receives on this rail (its own max_frame, which its MTU may
  // make smaller than ours); 0: as large as ours.
  base::Status add_peer(Rank peer, std::string_view endpoint, std::size_t max_frame = 0);
  base::Status add_peer(Rank peer, const UdpEndpoint& endpoint, std::size_t max_frame = 0);

  const PathInfo& info() const noexcept override { return info_; }
  bool reaches(Rank peer) const noexcept override { return peer < peers_.size() && peers_[peer].known; }
  std::size_t max_frame_to(Rank peer) const noexcept override {
    return peer < peers_.size() && peers_[peer].max_frame != 0 ? std::min(max_frame_, peers_[peer].max_frame)
                                                               : max_frame_;
  }
  // Errors: invalid_argument (peer without endpoint), out_of_range (frame above max_frame), rail_down
  // or io_error naming the rail, the peer and the errno text (see udp_send_errc).
  base::Status send(Rank peer, FrameWriter& frame) noexcept override;
  // Pushes out held and queued frames, then reads datagrams (the short socket's, then the long one's, in
  // turns) and hands each frame to the sink unchanged, up to `budget` (a coalesced datagram's frames go
  // up together, so a poll may hand up a few more). When placing (places()), each long-socket datagram's
  // header is peeked first and its payload received where the sink's place() says.
  std::size_t poll(FrameSink& sink, std::size_t budget) noexcept override;
  // Frames held for a GSO run are not counted: the engine's send loop stops on queued frames, and a run
  // needs the next frame; flush_sends() sends them.
  bool has_queued_frames() const noexcept override { return queued_ != 0; }
  void flush_sends() noexcept override;
  // While false, poll() reads the long socket only every kIdleLongPolls-th time (see poll()).
  void expect_bulk(bool expected) noexcept override { bulk_expected_.store(expected, std::memory_order_relaxed); }

  std::size_t queued_frames() const noexcept { return queued_.load(std::memory_order_relaxed); }
  const UdpCounters& counters() const noexcept { return counters_; }
  // One "udp" group: per socket (short_, long_) frames sent, received, queued, send and receive errors;
  // frames placed and placements declined (both sockets); datagrams from unknown senders; truncated;
  // peers sent to through connected sockets and the sends those refused.
  std::vector<PathCounterGroup> stats() const override;
  // Whether long-socket payloads are received into place (UdpOptions::place, resolved for this rail).
  bool places() const noexcept { return place_; }
  // Whether runs of bulk frames go out as GSO datagrams: UdpOptions::gso, the kernel took UDP_SEGMENT at
  // set-up, and no send has refused it since (then the path falls back to one datagram per frame).
  bool segments_sends() const noexcept { return gso_; }
  // Whether the long socket receives coalesced datagrams (UdpOptions::gro, not placing, and the kernel
  // took UDP_GRO).
  bool coalesces_receives() const noexcept { return gro_; }
  // The socket buffer sizes as the kernel reports them (it doubles what was asked, for its overhead).
  std::size_t send_buffer_bytes() const noexcept { return send_buffer_bytes_; }
  std::size_t receive_buffer_bytes() const noexcept { return receive_buffer_bytes_; }

 private:
  friend struct UdpPathTestAccess;  // swaps send_batch_, send_one_ and send_to_ to inject errors loopback never returns

  // ::sendmmsg's, ::sendmsg's and ::sendto's signatures.
  using SendBatch = int (*)(int fd, ::mmsghdr* messages, unsigned count, int flags);
  using SendOne = ::ssize_t (*)(int fd, const ::msghdr* message, int flags);
  using SendTo = ::ssize_t (*)(int fd, const void* bytes, std::size_t size, int flags, const ::sockaddr* to,
                               ::socklen_t to_length);

  enum Lane : std::uint8_t { kShort = 0, kLong = 1 };

  struct Peer {
    bool known = false;
    UdpEndpoint endpoint;
    std::size_t max_frame = 0;  // what it receives; 0: as much as we send
    ::sockaddr_in to[2]{};  // by Lane
    int connected[2] = {-1, -1};  // by Lane: a socket connected to to[lane], or -1
    bool connect_tried[2] = {false, false};
    // Counted in UdpCounters::connected_peers.
    bool any_connected() const noexcept { return connected[0] >= 0 || connected[1] >= 0; }
  };
  // A frame that found no room; not zero-filled, since the writer fills it.
  struct QueuedFrame {
    Rank peer;
    std::size_t size;
    std::unique_ptr<std::byte[]> bytes;
  };
  // Equal-sized bulk frames to one peer, held to go out as one GSO datagram (the last may be shorter).
  struct Run {
    Rank peer = 0;
    std::size_t segment = 0;  // the first frame's size
    std::size_t bytes = 0;
    std::size_t frames = 0;
    std::unique_ptr<std::byte[]> buffer;  // kUdpGsoMaxBytes
  };
  // How one socket's datagrams are read in batches: slots of `slot` bytes in the shared ring_.
  struct alignas(::cmsghdr) Control {
    unsigned char bytes[CMSG_SPACE(sizeof(int))];
  };
  struct Ring {
    std::size_t slot = 0;
    unsigned batch = 0;
    std::vector<::mmsghdr> messages;
    std::vector<::iovec> iov;
    std::vector<::sockaddr_in> from;
    std::vector<Control> control;  // with UDP_GRO only: each datagram's segment size
  };
  struct Socket {
    int fd = -1;
    std::deque<QueuedFrame> queue;  // in send order; goes out before any newer frame on this socket
    int last_logged_errno = 0;      // a run of drops from the queue with one cause is logged once
  };

  UdpPath(const RailAddress& rail, const UdpOptions& options, std::size_t max_frame, bool gso, bool gro);
  // UdpOptions::place resolved for a rail whose frames are at most max_frame.
  static bool will_place(const UdpOptions& options, std::size_t max_frame) noexcept;

  UdpSocketCounters& counters_of(Lane lane) noexcept {
    return lane == kShort ? counters_.short_socket : counters_.long_socket;
  }
  void flush(Lane lane) noexcept;
  // The socket connected to `peer` for `lane`, made at the first send while there is room (see
  // UdpOptions::connected_peers and the top of udp_path.cpp); -1: send from sockets_[lane] with its address.
  int connected_socket(Rank peer, Lane lane) noexcept {
    const int fd = peers_[peer].connected[lane];
    return fd >= 0 || peers_[peer].connect_tried[lane] ? fd : connect_socket(peer, lane);
  }
  int connect_socket(Rank peer, Lane lane) noexcept;
  void close_connected(Peer& entry) noexcept;
  // Adds a bulk frame to run_ (sending what it held first when the frame cannot join), and sends the
  // run when it is full or the frame ended it.
  base::Status send_joining(Rank peer, FrameWriter& frame, std::size_t size) noexcept;
  // Sends run_ as one datagram (UDP_SEGMENT when it holds more than one frame). `for_caller`: the frame
  // send() was given is in it, so a hard error is returned; otherwise it is counted and logged, as for
  // a queued frame. A kernel that refuses GSO on this route turns it off and the frames go one by one.
  base::Status send_run(bool for_caller) noexcept;
  void enqueue(Lane lane, Rank peer, std::size_t size, const std::byte* bytes, FrameWriter* writer) noexcept;
  base::Status send_error(Lane lane, Rank peer, int err) const;
  // Reads one datagram (a quiet socket) or one batch of at most `limit` (a busy one: receive_batch);
  // returns how many frames it read (handed up or dropped; a coalesced datagram's frames each count)
  // and adds those handed up to `handed`. Sets `drained` when this poll should not read the socket again.
  std::size_t receive(Lane lane, FrameSink& sink, std::size_t limit, std::size_t& handed, bool& drained) noexcept;
  template <typename HandUp, typename Failed>
  std::size_t receive_batch(Lane lane, std::size_t limit, bool& drained, HandUp& hand_up, Failed& failed) noexcept;
  // The same, one datagram at a time, each peeked and offered to sink.place() first (the long socket
  // when placing).
  std::size_t receive_placing(Lane lane, FrameSink& sink, std::size_t limit, std::size_t& handed,
                              bool& drained) noexcept;
  // Receives one datagram whole into ring slot 0 and hands it up; false when there was none.
  bool receive_one(Lane lane, FrameSink& sink, std::size_t& handed, bool& drained) noexcept;

  RailAddress rail_;
  std::size_t max_frame_;
  Socket sockets_[2];  // by Lane
  // Bound (SO_REUSEPORT) to local_.send_port, which every connected socket shares; it reads nothing.
  // -1 without connected sockets.
  int send_anchor_ = -1;
  std::size_t connected_limit_ = 0;  // UdpOptions::connected_peers; lowered when file descriptors run short
  std::size_t socket_buffer_ = 0;    // UdpOptions::sndbuf, for connected sockets
  UdpEndpoint local_;
  std::vector<Peer> peers_;  // by rank
  // (address << 16 | port) of every known peer socket -> how many peers use it.
  std::unordered_map<std::uint64_t, std::uint32_t> known_sources_;
  // Sends come from several threads at once in a multi-threaded process (base::multi_threaded()), while
  // one polls: the sending side (queues, scratch_, send counters) is kept under this lock.
  mutable base::OptionalMutex send_lock_;
  std::atomic<std::size_t> queued_{0};  // frames in both queues
  std::atomic<std::size_t> held_{0};    // frames in run_, for poll() to see without the lock
  Run run_;                             // under send_lock_
  std::unique_ptr<std::byte[]> scratch_;  // a frame being sent
  bool gso_ = false;                      // segments_sends()
  bool gro_ = false;                      // coalesces_receives()
  bool place_ = false;                    // long-socket payloads go where the sink places them
  bool long_deferred_ = false;            // the last poll skipped the long socket (see poll())
  bool batching_[2] = {false, false};     // per lane: a datagram was there last time, read in batches
  // expect_bulk(); true until told otherwise. Set by the engine under its lock, read by poll() under the
  // engine's poll lock (a different thread under MPI_THREAD_MULTIPLE): atomic.
  std::atomic<bool> bulk_expected_{true};
  std::uint32_t polls_ = 0;
  std::vector<std::byte> peeked_;         // a long-socket datagram's header, peeked then received
  Ring rings_[2];                       // by Lane; both read into ring_, one socket at a time
  std::unique_ptr<std::byte[]> ring_;  // the larger of the two rings' slot x batch
  std::vector<::mmsghdr> flush_messages_;
  std::vector<::iovec> flush_iov_;
  SendBatch send_batch_;
  SendOne send_one_;
  SendTo send_to_;
  std::size_t send_buffer_bytes_ = 0;
  std::size_t receive_buffer_bytes_ = 0;
  UdpCounters counters_;
  PathInfo info_;
};

}  // namespace ftmpi::path

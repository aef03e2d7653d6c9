// The launcher's side of the control protocol: a TCP listener that authenticates ranks, keeps the
// key-value table, runs fences, and reports what ranks did (connected, aborted, finalized, vanished).
//
// Single-threaded and non-blocking: the owner waits in poll() on the descriptors from prepare_poll()
// together with its own, then calls dispatch(). A misbehaving connection (wrong secret, malformed frame,
// rule broken) is closed with one log line and counted; it never makes the server fail.
#pragma once

#include <poll.h>

#include <chrono>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ftmpi/base/status.hpp"
#include "ftmpi/rte/fd.hpp"
#include "ftmpi/rte/job.hpp"
#include "ftmpi/rte/params.hpp"
#include "ftmpi/rte/protocol.hpp"

namespace ftmpi::rte {

using Clock = std::chrono::steady_clock;

struct ServerConfig {
  // Numeric IPv4 or IPv6 addresses, at least one; every listener takes the same port.
  std::vector<std::string> listen_addresses{std::string(kListenAddress.default_value)};
  std::uint16_t port = 0;  // 0: any free port (the first listener's)
  std::uint32_t size = 1;                                    // ranks in the job
  Secret secret{};
  // How long an accepted connection may take to authenticate.
  std::chrono::nanoseconds auth_timeout = base::parse_duration(kConnectTimeout.default_value).value();
};

struct RankEvent {
  enum class Kind : std::uint8_t {
    connected,      // authenticated; pid is the rank's own report
    fence_entered,  // the rank waits in a fence
    finalized,
    aborted,       // code and message set
    disconnected,  // connection closed (by the rank, or by the server after a protocol violation)
    control_reply,  // an answer to send_control(): control_id, ok, and the answer in message
  };
  Kind kind;
  std::uint32_t rank = 0;
  std::uint32_t pid = 0;
  std::int32_t code = 0;
  std::string message;
  std::uint32_t control_id = 0;
  bool ok = false;
};

class Server {
 public:
  static base::Result<Server> listen(const ServerConfig& config);

  // Where the server listens, each as "127.0.0.1:40123", "[::1]:40123", or "0.0.0.0:40123" (every address).
  const std::vector<std::string>& addresses() const noexcept { return addresses_; }
  std::uint16_t port() const noexcept { return port_; }
  std::uint32_t size() const noexcept { return size_; }

  // Appends the descriptors to wait on and lowers `deadline` to the server's next timer.
  void prepare_poll(std::vector<pollfd>& fds, Clock::time_point& deadline);
  // Handles the descriptors prepare_poll appended (the `fds` span starts where it appended them) and
  // expired timers. Events are queued for take_events().
  void dispatch(std::span<const pollfd> fds, Clock::time_point now);
  // prepare_poll + poll + dispatch, for owners with nothing else to wait on (tests).
  base::Status poll_once(std::chrono::milliseconds timeout);

  std::vector<RankEvent> take_events();

  // Serves `fd` (a connected, non-blocking stream socket) as if it had been accepted: a rank's connection
  // relayed by a host agent arrives as one end of a socketpair. `peer` names it in log lines. Not from
  // within dispatch().
  void adopt(UniqueFd fd, std::string peer, Clock::time_point now);

  // Sends a control request (control.hpp) to `rank`; its answer comes as a control_reply event. False
  // when the rank is not connected (not yet, or no longer: finalized or gone). Ids with
  // kPeerCheckIdBit are the server's own (peer checks) and are not for callers; ids with kLauncherIdBit
  // are the launcher's (it asks failing jobs' ranks to write their flight recorders); tools use the rest.
  bool send_control(std::uint32_t rank, std::uint32_t id, std::string_view request);
  static constexpr std::uint32_t kPeerCheckIdBit = 0x8000'0000u;
  static constexpr std::uint32_t kLauncherIdBit = 0x4000'0000u;

  // Authenticated at some point (a program that never connects is not using the protocol).
  bool joined(std::uint32_t rank) const noexcept { return ranks_[rank].joined; }
  bool connected(std::uint32_t rank) const noexcept { return ranks_[rank].connected; }
  bool finalized(std::uint32_t rank) const noexcept { return ranks_[rank].finalized; }
  // True when some rank waits in a fence that `rank` has not entered: if `rank` is gone, it never ends.
  bool fence_needs(std::uint32_t rank) const noexcept;
  // True when `rank` entered the fence being gathered (it waits for the others).
  bool in_fence(std::uint32_t rank) const noexcept {
    return fence_entered_ > 0 && ranks_[rank].fences == fence_epoch_;
  }

  std::uint64_t auth_failures() const noexcept { return auth_failures_; }
  std::uint64_t protocol_errors() const noexcept { return protocol_errors_; }
  // Unauthenticated connections closed to make room for newer ones (a flood).
  std::uint64_t evicted() const noexcept { return evicted_; }

 private:
  struct Connection {
    UniqueFd fd;
    std::string peer;  // "127.0.0.1:51234", for log lines
    FrameReader reader{kRankHello};
    // Queued output; fence_done tables are shared by every connection they go to.
    std::deque<std::shared_ptr<const std::string>> out;
    std::size_t out_offset = 0;
    Clock::time_point auth_deadline;
    std::optional<std::uint32_t> rank;  // set once authenticated
    bool closed = false;
  };
  struct RankState {
    bool joined = false;
    bool connected = false;
    bool finalized = false;
    std::uint32_t fences = 0;  // completed fence requests from this rank
    std::size_t kv_bytes = 0;
    std::map<std::string, std::string, std::less<>> kv;
    std::set<std::string, std::less<>> put_since_fence;  // what the next fence_done carries
  };

  Server() = default;
  void accept_all(int listener, Clock::time_point now);
  void read_from(Connection& c);
  void write_to(Connection& c);
  // Handles one message; a false return means the connection broke a rule and was closed.
  bool handle(Connection& c, Message message);
  bool handle_hello(Connection& c, const Hello& hello);
  bool handle_fence(Connection& c, std::uint32_t rank, std::uint32_t epoch);
  void send(Connection& c, std::shared_ptr<const std::string> frame);
  void reject(Connection& c, std::string_view why, bool auth_failure);
  // Closes an unauthenticated connection to make room, telling it `busy`.
  void evict(Connection& c);
  void close(Connection& c);
  void complete_fence();
  // A rank asked whether `peer` polls (peer_check): ping it, and answer when it does or the window ends.
  void start_peer_check(std::uint32_t asker, std::uint32_t peer, Clock::time_point now);
  void answer_peer_check(std::uint32_t asker, std::uint32_t peer, bool polling);
  void expire_peer_checks(Clock::time_point now);
  // The rank's open connection, or null.
  Connection* connection_of(std::uint32_t rank) noexcept;

  std::vector<UniqueFd> listeners_;  // polled first, in this order
  std::vector<std::string> addresses_;
  std::uint16_t port_ = 0;
  std::uint32_t size_ = 0;
  Secret secret_{};
  std::chrono::nanoseconds auth_timeout_{};
  std::vector<std::unique_ptr<Connection>> connections_;
  std::vector<Connection*> polled_;  // connections in the order prepare_poll appended them
  std::vector<RankState> ranks_;
  std::uint32_t fence_epoch_ = 1;    // the fence being gathered
  std::uint32_t fence_entered_ = 0;  // ranks waiting in it
  std::vector<RankEvent> events_;
  struct PeerCheckState {
    std::uint32_t id = 0;
    std::uint32_t asker = 0;
    std::uint32_t peer = 0;
    Clock::time_point deadline;
  };
  std::vector<PeerCheckState> peer_checks_;
  std::uint32_t next_peer_check_ = 0;
  std::uint64_t auth_failures_ = 0;
  std::uint64_t evicted_ = 0;
  std::uint64_t protocol_errors_ = 0;
};

}  // namespace ftmpi::rte

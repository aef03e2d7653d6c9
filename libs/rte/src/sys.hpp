// System-call helpers shared by the launcher and the client (private to rte).
#pragma once

#include <cerrno>
#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "ftmpi/base/status.hpp"
#include "ftmpi/rte/fd.hpp"

namespace ftmpi::rte::sys {

using Clock = std::chrono::steady_clock;

// "<what>: <strerror(err)>" with the given code.
base::Status errno_status(base::Errc code, std::string_view what, int err = errno);

base::Status set_nonblocking(int fd);

// Writes everything, retrying on EINTR and waiting in poll() while a non-blocking descriptor is full.
base::Status write_all(int fd, std::string_view data);

// send() of everything on a socket, without SIGPIPE when the peer has gone.
base::Status send_all(int fd, std::string_view data);

// "0.5 s", "30 s": durations as people read them in messages.
std::string seconds_text(std::chrono::nanoseconds d);

// Milliseconds from now until `deadline` for poll(): 0 if past, -1 for Clock::time_point::max().
int poll_timeout_ms(Clock::time_point deadline, Clock::time_point now);

struct HostPort {
  std::string host;
  std::uint16_t port = 0;
};

// "127.0.0.1:80", "[::1]:80" or "name:80".
base::Result<HostPort> split_host_port(std::string_view text);
std::string join_host_port(std::string_view host, std::uint16_t port);

// A non-blocking, close-on-exec TCP listener on a numeric address.
base::Result<UniqueFd> listen_tcp(std::string_view address, std::uint16_t port);
// The listener's own address as join_host_port text.
base::Result<std::string> local_address(int fd);
// The peer of a connected socket as join_host_port text ("?" if unknown), for log lines.
std::string peer_address(int fd);
// A blocking, close-on-exec TCP connection to "host:port", given up at `deadline`.
base::Result<UniqueFd> connect_tcp(std::string_view host_port, Clock::time_point deadline);
// Control messages are small and latency-bound: send them at once.
void set_nodelay(int fd);

// The IPv4 addresses of this host's interfaces that are up and not loopback, as dotted text, in the
// kernel's interface order (each once).
base::Result<std::vector<std::string>> ipv4_interface_addresses();
// The address of this host that the kernel's routes would use to reach `host` (a name or numeric
// address), numeric: a UDP socket is connected to it and asked its own address. Nothing is sent.
base::Result<std::string> local_address_towards(std::string_view host);

// Pause between rounds of connection attempts: short at first (ftrun may be busy accepting), then longer.
inline constexpr std::chrono::milliseconds kFirstRetryPause{50};
inline constexpr std::chrono::milliseconds kMaxRetryPause{1000};

// Waits `pause`, or until `deadline` if sooner, then doubles it up to kMaxRetryPause: the back-off
// between tries.
void back_off(std::chrono::milliseconds& pause, Clock::time_point deadline);

// The first of `addresses` ("host:port") that accepts a TCP connection, trying each for up to `attempt`
// in rounds until `deadline`. The error names every address with the last reason it failed.
base::Result<UniqueFd> connect_any(const std::vector<std::string>& addresses, std::chrono::nanoseconds attempt,
                                   Clock::time_point deadline);

// A child's stdout and stderr pipes: the read ends (non-blocking, for the parent's poll loop) and the
// write ends (for the child), all close-on-exec.
struct OutputPipes {
  UniqueFd out_read;
  UniqueFd err_read;
  UniqueFd out_write;
  UniqueFd err_write;
};
base::Result<OutputPipes> output_pipes();

// The signals waiting on a non-blocking signalfd, in the order they came.
std::vector<int> read_signals(int signal_fd);

}  // namespace ftmpi::rte::sys

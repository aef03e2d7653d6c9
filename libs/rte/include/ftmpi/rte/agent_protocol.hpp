// The link between ftrun and a per-host agent (ftrun-host): one TCP connection per host, over which the
// agent learns the ranks to start there and relays, multiplexed, everything ftrun would otherwise have
// had from each rank directly (docs/control-protocol.md, "The host-agent link").
//
// Frames are laid out as the rank protocol's (protocol.hpp): u32 length | u8 type | body, little-endian,
// the length checked against the type's bound from the 5-byte header before the body is buffered. The
// type numbers start at 64, apart from the rank protocol's, so that a rank's hello sent to the agent
// listener, or an agent's hello sent to the rank listener, is an unknown type and refused.
//
//   type  name          direction      body
//   64    agent_hello   agent->ftrun   u16 version, u8[32] secret, u16 length, host name   (first frame)
//   65    conn_open     agent->ftrun   u32 conn: a process on the host connected to the agent's listener
//   66    conn_data     both           u32 conn, bytes (1..kMaxRelayChunk): that connection's bytes
//   67    conn_close    both           u32 conn: the connection closed (or is to be closed)
//   68    output        agent->ftrun   u32 rank, u8 stream (1 stdout, 2 stderr), bytes; no bytes: EOF
//   69    rank_started  agent->ftrun   u32 rank, u32 pid (on the host)
//   70    rank_exited   agent->ftrun   u32 rank, i32 wait status (as waitpid reports it)
//   71    stdin_ack     agent->ftrun   u32 bytes of stdin written to rank 0
//   80    launch        ftrun->agent   u32 count, count x string: program then args;
//                                      u32 count, count x (u32 rank, u32 count, count x string): each rank
//                                      and its variables of the contract ("NAME=value"); a string is u32
//                                      length, bytes. The rest of a rank's environment is the agent's own
//                                      (the remote login's plus what ftrun forwarded on its command line)
//   81    stdin         ftrun->agent   bytes for rank 0's stdin; no bytes: EOF
//   82    signal        ftrun->agent   u32 rank, u8 signal number: to that rank's process group
//
// conn_data and conn_close travel both ways with the same types; everything else in one direction only
// (the allowed sets below). A relayed connection is a transparent byte stream: the rank still
// authenticates with ftrun end to end through it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "ftmpi/base/status.hpp"
#include "ftmpi/rte/job.hpp"

namespace ftmpi::rte {

inline constexpr std::uint16_t kAgentProtocolVersion = 1;
inline constexpr std::size_t kMaxHostNameBytes = 255;
// The most one conn_data or output frame carries (a read of a pipe or socket).
inline constexpr std::size_t kMaxRelayChunk = 64 * 1024;
// A launch carries the environment once plus the contract per rank: generous, but bounded.
inline constexpr std::size_t kMaxLaunchBytes = 16 * 1024 * 1024;

enum class AgentMsgType : std::uint8_t {
  agent_hello = 64,
  conn_open = 65,
  conn_data = 66,
  conn_close = 67,
  output = 68,
  rank_started = 69,
  rank_exited = 70,
  stdin_ack = 71,
  launch = 80,
  stdin_data = 81,
  signal = 82,
};

std::string_view to_string(AgentMsgType type) noexcept;
std::size_t max_body_bytes(AgentMsgType type) noexcept;

inline constexpr AgentMsgType kEveryAgentMsgType[] = {
    AgentMsgType::agent_hello, AgentMsgType::conn_open,    AgentMsgType::conn_data,   AgentMsgType::conn_close,
    AgentMsgType::output,      AgentMsgType::rank_started, AgentMsgType::rank_exited, AgentMsgType::stdin_ack,
    AgentMsgType::launch,      AgentMsgType::stdin_data,   AgentMsgType::signal};
// What ftrun accepts: a hello first, then the rest of the agent's frames.
inline constexpr AgentMsgType kAgentHello[] = {AgentMsgType::agent_hello};
inline constexpr AgentMsgType kAgentToLauncher[] = {
    AgentMsgType::conn_open,    AgentMsgType::conn_data,   AgentMsgType::conn_close, AgentMsgType::output,
    AgentMsgType::rank_started, AgentMsgType::rank_exited, AgentMsgType::stdin_ack};
inline constexpr AgentMsgType kLauncherToAgent[] = {AgentMsgType::launch, AgentMsgType::conn_data,
                                                    AgentMsgType::conn_close, AgentMsgType::stdin_data,
                                                    AgentMsgType::signal};

enum class OutputStream : std::uint8_t { out = 1, err = 2 };

struct AgentHello {
  std::uint16_t version = kAgentProtocolVersion;
  Secret secret{};
  std::string host;  // 1..kMaxHostNameBytes
};
struct ConnOpen {
  std::uint32_t conn = 0;
};
struct ConnData {
  std::uint32_t conn = 0;
  std::string bytes;  // 1..kMaxRelayChunk
};
struct ConnClose {
  std::uint32_t conn = 0;
};
struct Output {
  std::uint32_t rank = 0;
  OutputStream stream = OutputStream::out;
  std::string bytes;  // empty: end of the stream
};
struct RankStarted {
  std::uint32_t rank = 0;
  std::uint32_t pid = 0;
};
struct RankExited {
  std::uint32_t rank = 0;
  std::int32_t status = 0;
};
struct StdinAck {
  std::uint32_t bytes = 0;
};
struct LaunchRank {
  std::uint32_t rank = 0;
  std::vector<std::string> environment;
};
struct Launch {
  std::vector<std::string> argv;  // program (absolute path) then its arguments
  std::vector<LaunchRank> ranks;
};
struct StdinData {
  std::string bytes;  // empty: end of stdin
};
struct SignalRank {
  std::uint32_t rank = 0;
  std::uint8_t signo = 0;
};

// Alternatives in kEveryAgentMsgType order.
using AgentMessage = std::variant<AgentHello, ConnOpen, ConnData, ConnClose, Output, RankStarted, RankExited,
                                  StdinAck, Launch, StdinData, SignalRank>;

AgentMsgType type_of(const AgentMessage& message) noexcept;
// The whole frame. The message must respect the bounds above.
std::string encode(const AgentMessage& message);
base::Result<AgentMessage> decode(AgentMsgType type, std::span<const char> body);

// Cuts the link's byte stream into messages, refusing frames not in `allowed` before buffering bodies.
class AgentFrameReader {
 public:
  explicit AgentFrameReader(std::span<const AgentMsgType> allowed) : allowed_(allowed) {}
  void allow(std::span<const AgentMsgType> allowed) noexcept { allowed_ = allowed; }
  void append(std::span<const char> bytes);
  // The next message, std::nullopt when more bytes are needed, or why the stream is malformed (the
  // caller closes the link).
  base::Result<std::optional<AgentMessage>> next();
  std::size_t buffered() const noexcept { return buffer_.size() - start_; }

 private:
  std::span<const AgentMsgType> allowed_;
  std::string buffer_;
  std::size_t start_ = 0;
};

}  // namespace ftmpi::rte

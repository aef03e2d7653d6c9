#include "ftmpi/rte/agent_protocol.hpp"

#include <algorithm>
#include <iterator>

#include "le_codec.hpp"

namespace ftmpi::rte {
namespace {

using base::Errc;
using base::Result;
using base::Status;

constexpr std::size_t kAgentHelloMax = 2 + sizeof(Secret) + 2 + kMaxHostNameBytes;

Status malformed(AgentMsgType type, std::string_view why) {
  return Status(Errc::malformed, std::string(to_string(type)) + ": " + std::string(why));
}

void write_string(Writer& w, std::string_view s) {
  w.u32(static_cast<std::uint32_t>(s.size()));
  w.bytes(s);
}

void write_strings(Writer& w, const std::vector<std::string>& list) {
  w.u32(static_cast<std::uint32_t>(list.size()));
  for (const std::string& s : list) write_string(w, s);
}

bool read_string(Reader& r, std::string& s) {
  std::uint32_t n = 0;
  return r.u32(n) && r.bytes(n, s);
}

// A count cannot exceed the bytes left (every item takes at least 4), which bounds the allocation.
bool read_strings(Reader& r, std::vector<std::string>& list, std::size_t body_bytes) {
  std::uint32_t n = 0;
  if (!r.u32(n) || n > body_bytes / 4) return false;
  list.resize(n);
  return std::all_of(list.begin(), list.end(), [&](std::string& s) { return read_string(r, s); });
}

struct Encoder {
  Writer& w;
  void operator()(const AgentHello& m) {
    w.u16(m.version);
    w.bytes(std::string_view(reinterpret_cast<const char*>(m.secret.data()), m.secret.size()));
    w.u16(static_cast<std::uint16_t>(m.host.size()));
    w.bytes(m.host);
  }
  void operator()(const ConnOpen& m) { w.u32(m.conn); }
  void operator()(const ConnData& m) {
    w.u32(m.conn);
    w.bytes(m.bytes);
  }
  void operator()(const ConnClose& m) { w.u32(m.conn); }
  void operator()(const Output& m) {
    w.u32(m.rank);
    w.u8(static_cast<std::uint8_t>(m.stream));
    w.bytes(m.bytes);
  }
  void operator()(const RankStarted& m) {
    w.u32(m.rank);
    w.u32(m.pid);
  }
  void operator()(const RankExited& m) {
    w.u32(m.rank);
    w.u32(static_cast<std::uint32_t>(m.status));
  }
  void operator()(const StdinAck& m) { w.u32(m.bytes); }
  void operator()(const Launch& m) {
    write_strings(w, m.argv);
    w.u32(static_cast<std::uint32_t>(m.ranks.size()));
    for (const LaunchRank& r : m.ranks) {
      w.u32(r.rank);
      write_strings(w, r.environment);
    }
  }
  void operator()(const StdinData& m) { w.bytes(m.bytes); }
  void operator()(const SignalRank& m) {
    w.u32(m.rank);
    w.u8(m.signo);
  }
};

std::string rest(Reader& r, std::size_t body_bytes, std::size_t consumed) {
  std::string s;
  r.bytes(body_bytes - consumed, s);
  return s;
}

Result<AgentMessage> decode_body(AgentMsgType type, Reader& r, std::size_t n) {
  switch (type) {
    case AgentMsgType::agent_hello: {
      AgentHello m;
      std::uint16_t length = 0;
      if (!r.u16(m.version) || !r.raw(m.secret.data(), m.secret.size()) || !r.u16(length)) {
        return malformed(type, "truncated");
      }
      if (length == 0 || length > kMaxHostNameBytes) return malformed(type, "host name length out of range");
      if (!r.bytes(length, m.host)) return malformed(type, "truncated host name");
      return AgentMessage(std::move(m));
    }
    case AgentMsgType::conn_open:
    case AgentMsgType::conn_close: {
      std::uint32_t conn = 0;
      if (!r.u32(conn)) return malformed(type, "truncated");
      if (type == AgentMsgType::conn_open) return AgentMessage(ConnOpen{conn});
      return AgentMessage(ConnClose{conn});
    }
    case AgentMsgType::conn_data: {
      ConnData m;
      if (!r.u32(m.conn)) return malformed(type, "truncated");
      m.bytes = rest(r, n, 4);
      if (m.bytes.empty()) return malformed(type, "no bytes");
      return AgentMessage(std::move(m));
    }
    case AgentMsgType::output: {
      Output m;
      std::uint8_t stream = 0;
      if (!r.u32(m.rank) || !r.u8(stream)) return malformed(type, "truncated");
      if (stream != 1 && stream != 2) return malformed(type, "stream " + std::to_string(stream) + " is not 1 or 2");
      m.stream = static_cast<OutputStream>(stream);
      m.bytes = rest(r, n, 5);
      return AgentMessage(std::move(m));
    }
    case AgentMsgType::rank_started: {
      RankStarted m;
      if (!r.u32(m.rank) || !r.u32(m.pid)) return malformed(type, "truncated");
      return AgentMessage(std::move(m));
    }
    case AgentMsgType::rank_exited: {
      RankExited m;
      std::uint32_t status = 0;
      if (!r.u32(m.rank) || !r.u32(status)) return malformed(type, "truncated");
      m.status = static_cast<std::int32_t>(status);
      return AgentMessage(std::move(m));
    }
    case AgentMsgType::stdin_ack: {
      StdinAck m;
      if (!r.u32(m.bytes)) return malformed(type, "truncated");
      return AgentMessage(std::move(m));
    }
    case AgentMsgType::launch: {
      Launch m;
      std::uint32_t count = 0;
      if (!read_strings(r, m.argv, n) || m.argv.empty() || !r.u32(count) || count > n / 8) {
        return malformed(type, "truncated or inconsistent");
      }
      m.ranks.resize(count);
      for (LaunchRank& rank : m.ranks) {
        if (!r.u32(rank.rank) || !read_strings(r, rank.environment, n)) return malformed(type, "truncated rank");
      }
      return AgentMessage(std::move(m));
    }
    case AgentMsgType::stdin_data: return AgentMessage(StdinData{rest(r, n, 0)});
    case AgentMsgType::signal: {
      SignalRank m;
      if (!r.u32(m.rank) || !r.u8(m.signo)) return malformed(type, "truncated");
      return AgentMessage(std::move(m));
    }
  }
  return malformed(type, "unknown type");
}

}  // namespace

std::string_view to_string(AgentMsgType type) noexcept {
  switch (type) {
    case AgentMsgType::agent_hello: return "agent_hello";
    case AgentMsgType::conn_open: return "conn_open";
    case AgentMsgType::conn_data: return "conn_data";
    case AgentMsgType::conn_close: return "conn_close";
    case AgentMsgType::output: return "output";
    case AgentMsgType::rank_started: return "rank_started";
    case AgentMsgType::rank_exited: return "rank_exited";
    case AgentMsgType::stdin_ack: return "stdin_ack";
    case AgentMsgType::launch: return "launch";
    case AgentMsgType::stdin_data: return "stdin";
    case AgentMsgType::signal: return "signal";
  }
  return "unknown";
}

std::size_t max_body_bytes(AgentMsgType type) noexcept {
  switch (type) {
    case AgentMsgType::agent_hello: return kAgentHelloMax;
    case AgentMsgType::conn_open:
    case AgentMsgType::conn_close:
    case AgentMsgType::stdin_ack: return 4;
    case AgentMsgType::conn_data: return 4 + kMaxRelayChunk;
    case AgentMsgType::output: return 5 + kMaxRelayChunk;
    case AgentMsgType::rank_started:
    case AgentMsgType::rank_exited: return 8;
    case AgentMsgType::launch: return kMaxLaunchBytes;
    case AgentMsgType::stdin_data: return kMaxRelayChunk;
    case AgentMsgType::signal: return 5;
  }
  return 0;
}

AgentMsgType type_of(const AgentMessage& message) noexcept { return kEveryAgentMsgType[message.index()]; }

std::string encode(const AgentMessage& message) {
  std::string frame(kFrameHeaderBytes, '\0');
  Writer body(frame);
  std::visit(Encoder{body}, message);
  write_frame_header(frame, static_cast<std::uint8_t>(type_of(message)));
  return frame;
}

Result<AgentMessage> decode(AgentMsgType type, std::span<const char> body) {
  if (body.size() > max_body_bytes(type)) return malformed(type, "too long");
  Reader r(body);
  auto message = decode_body(type, r, body.size());
  if (message && !r.at_end()) return malformed(type, "trailing bytes");
  return message;
}

void AgentFrameReader::append(std::span<const char> bytes) { append_frame_bytes(buffer_, start_, bytes); }

Result<std::optional<AgentMessage>> AgentFrameReader::next() {
  return next_frame<AgentMessage, AgentMsgType>(buffer_, start_, allowed_, kEveryAgentMsgType);
}

}  // namespace ftmpi::rte

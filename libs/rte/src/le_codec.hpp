// Little-endian encoding of frame bodies, shared by the rank protocol (protocol.cpp) and the host-agent
// link (agent_protocol.cpp) (private to rte).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "ftmpi/rte/protocol.hpp"

namespace ftmpi::rte {

// Little-endian appends.
class Writer {
 public:
  explicit Writer(std::string& out) : out_(out) {}
  void u8(std::uint8_t v) { out_.push_back(static_cast<char>(v)); }
  void u16(std::uint16_t v) { uint(v, 2); }
  void u32(std::uint32_t v) { uint(v, 4); }
  void bytes(std::string_view b) { out_.append(b); }

 private:
  void uint(std::uint64_t v, int n) {
    for (int i = 0; i < n; ++i) out_.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
  }
  std::string& out_;
};

// Little-endian reads that fail, rather than read past the end, on a short body.
class Reader {
 public:
  explicit Reader(std::span<const char> in) : in_(in) {}
  bool u8(std::uint8_t& v) { return uint(v, 1); }
  bool u16(std::uint16_t& v) { return uint(v, 2); }
  bool u32(std::uint32_t& v) { return uint(v, 4); }
  bool bytes(std::size_t n, std::string& out) {
    if (in_.size() - pos_ < n) return false;
    out.assign(in_.data() + pos_, n);
    pos_ += n;
    return true;
  }
  bool raw(void* dst, std::size_t n) {
    if (in_.size() - pos_ < n) return false;
    std::memcpy(dst, in_.data() + pos_, n);
    pos_ += n;
    return true;
  }
  bool at_end() const { return pos_ == in_.size(); }
  std::size_t remaining() const { return in_.size() - pos_; }

 private:
  template <typename T>
  bool uint(T& v, int n) {
    if (in_.size() - pos_ < static_cast<std::size_t>(n)) return false;
    std::uint64_t x = 0;
    for (int i = 0; i < n; ++i) x |= std::uint64_t{static_cast<std::uint8_t>(in_[pos_ + i])} << (8 * i);
    pos_ += static_cast<std::size_t>(n);
    v = static_cast<T>(x);
    return true;
  }
  std::span<const char> in_;
  std::size_t pos_ = 0;
};

// The frame header both protocols share (kFrameHeaderBytes): u32 body length | u8 type.
struct FrameHeader {
  std::uint32_t length = 0;
  std::uint8_t type = 0;
};

inline FrameHeader read_frame_header(const char* header) {
  FrameHeader h;
  for (int i = 0; i < 4; ++i) h.length |= std::uint32_t{static_cast<std::uint8_t>(header[i])} << (8 * i);
  h.type = static_cast<std::uint8_t>(header[4]);
  return h;
}

// Fills in the header of `frame`, whose body follows its first kFrameHeaderBytes bytes.
inline void write_frame_header(std::string& frame, std::uint8_t type) {
  const auto length = static_cast<std::uint32_t>(frame.size() - kFrameHeaderBytes);
  for (int i = 0; i < 4; ++i) frame[static_cast<std::size_t>(i)] = static_cast<char>((length >> (8 * i)) & 0xff);
  frame[4] = static_cast<char>(type);
}

// A reader's buffer: bytes from `start` on are not yet consumed. Consumed bytes are dropped once they
// dominate, so the buffer stays bounded by one frame plus one read.
inline void append_frame_bytes(std::string& buffer, std::size_t& start, std::span<const char> bytes) {
  if (start > 0 && start >= buffer.size() / 2) {
    buffer.erase(0, start);
    start = 0;
  }
  buffer.append(bytes.data(), bytes.size());
}

inline void consume_frame(std::string& buffer, std::size_t& start, std::size_t frame_bytes) {
  start += frame_bytes;
  if (start == buffer.size()) {
    buffer.clear();
    start = 0;
  }
}

// The next whole frame of a reader's buffer, for either protocol: its type must be in `allowed` (else
// "unexpected" or "unknown" frame), its length within the type's bound as soon as the header is in, and
// its body must decode exactly (decode). std::nullopt when more bytes are needed. `Type` is MsgType or
// AgentMsgType; to_string, max_body_bytes and decode are the protocol's own.
template <typename Message, typename Type>
base::Result<std::optional<Message>> next_frame(std::string& buffer, std::size_t& start,
                                                std::span<const Type> allowed, std::span<const Type> every) {
  if (buffer.size() - start < kFrameHeaderBytes) return std::optional<Message>();
  const char* header = buffer.data() + start;
  const FrameHeader h = read_frame_header(header);
  const auto type = static_cast<Type>(h.type);
  if (std::find(allowed.begin(), allowed.end(), type) == allowed.end()) {
    const bool known = std::find(every.begin(), every.end(), type) != every.end();
    return base::Status(base::Errc::malformed, known ? "unexpected " + std::string(to_string(type)) + " frame"
                                                     : "unknown frame type " + std::to_string(h.type));
  }
  if (h.length > max_body_bytes(type)) {
    return base::Status(base::Errc::malformed, std::string(to_string(type)) + ": length " + std::to_string(h.length) +
                                                   " exceeds the bound of " + std::to_string(max_body_bytes(type)));
  }
  if (buffer.size() - start < kFrameHeaderBytes + h.length) return std::optional<Message>();
  auto message = decode(type, std::span<const char>(header + kFrameHeaderBytes, h.length));
  if (!message) return message.status();
  consume_frame(buffer, start, kFrameHeaderBytes + h.length);
  return std::optional<Message>(std::move(*message));
}

}  // namespace ftmpi::rte

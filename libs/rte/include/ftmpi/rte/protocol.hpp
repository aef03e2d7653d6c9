// The launcher<->rank control protocol: one TCP connection per rank to ftrun.
//
// Every message is one frame, integers little-endian:
//
//   0        4      5
//   +--------+------+----------------------+
//   | length | type | body (length bytes)  |
//   +--------+------+----------------------+
//     u32      u8
//
// `length` counts the body only and is checked against the type's bound as soon as the 5-byte header has
// arrived, so a peer cannot make the receiver buffer more than that bound. A frame whose type is unknown,
// not allowed in that direction (or before authentication), too long, or whose body does not decode
// exactly is malformed: the receiver closes the connection.
//
//   type  name          direction     body
//   1     hello         rank->ftrun   u16 version, u32 rank, u32 pid, u8[32] secret      (first frame)
//   2     welcome       ftrun->rank   u32 size                                            (auth accepted)
//   3     put           rank->ftrun   u16 key length, key, u32 value length, value
//   4     fence         rank->ftrun   u32 epoch (1 for the rank's first fence, then 2, ...)
//   5     fence_done    ftrun->rank   u32 epoch, u8 encoding, table: what was put since the fence
//                                     before; the table is u32 count, count x (u32 rank, key, value as
//                                     in put), as is (encoding 0) or, from 512 bytes when it pays, as
//                                     u32 table length, one zstd frame of the table (encoding 1)
//   6     abort         rank->ftrun   i32 code, u16 message length, message
//   7     abort_ack     ftrun->rank   empty
//   8     finalize      rank->ftrun   empty
//   9     finalize_ack  ftrun->rank   empty
//   10    control       ftrun->rank   u32 id, u32 length, request text (rte/control.hpp)     (any time)
//   11    control_reply rank->ftrun   u32 id, u8 ok, u32 length, reply text (JSON when ok)
//   12    busy          ftrun->rank   empty: too many unauthenticated connections; this one is closed,
//                                     try again (sent before authentication, so it tells nothing secret)
//   13    peer_check    rank->ftrun   u32 peer: "every rail to this peer is silent: is it polling?"
//   14    peer_status   ftrun->rank   u32 peer, u8 polling: the answer. ftrun sends the peer a control
//                                     `ping`; polling is 1 when it answered within kPeerCheckWindow (its
//                                     progress loop runs, so silence on the rails is the network's), 0
//                                     when not (it computes, or is not connected)
//
// A rank answers each control request once, from its progress loop (so a rank computing without MPI
// calls answers late; ftrun's deadline, not the rank, bounds a tool's wait).
// A wrong secret gets no answer: ftrun closes the connection.
#pragma once

#include <chrono>
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

inline constexpr std::uint16_t kProtocolVersion = 3;
inline constexpr std::size_t kFrameHeaderBytes = 5;

inline constexpr std::size_t kMaxKeyBytes = 255;
inline constexpr std::size_t kMaxValueBytes = 16 * 1024;
inline constexpr std::size_t kMaxAbortMessageBytes = 4096;
// What one key-value pair costs in a fence_done body besides its key and value (rank, two lengths).
inline constexpr std::size_t kKvEntryOverhead = 4 + 2 + 4;
// Each rank may publish at most this much, counting key + value + kKvEntryOverhead per pair, so that a
// fence_done for a job of kMaxJobSize ranks stays bounded.
inline constexpr std::size_t kMaxRankKvBytes = 64 * 1024;
inline constexpr std::size_t kMaxControlRequestBytes = 4096;
// A rank's statistics in JSON: about 700 bytes per peer and rail.
inline constexpr std::size_t kMaxControlReplyBytes = 16 * 1024 * 1024;

enum class MsgType : std::uint8_t {
  hello = 1,
  welcome = 2,
  put = 3,
  fence = 4,
  fence_done = 5,
  abort = 6,
  abort_ack = 7,
  finalize = 8,
  finalize_ack = 9,
  control = 10,
  control_reply = 11,
  busy = 12,
  peer_check = 13,
  peer_status = 14,
};

// How long ftrun waits for a peer's answer to the ping of a peer_check.
inline constexpr std::chrono::milliseconds kPeerCheckWindow{1000};

std::string_view to_string(MsgType type) noexcept;
// The largest body a frame of this type may carry.
std::size_t max_body_bytes(MsgType type) noexcept;

// Every message type, in type order (tests and fuzzers read frames of any of them).
inline constexpr MsgType kEveryMsgType[] = {
    MsgType::hello,         MsgType::welcome, MsgType::put,        MsgType::fence,       MsgType::fence_done,
    MsgType::abort,         MsgType::abort_ack, MsgType::finalize, MsgType::finalize_ack, MsgType::control,
    MsgType::control_reply, MsgType::busy,    MsgType::peer_check, MsgType::peer_status};

// The frames each side accepts: ftrun takes only a hello until the rank has authenticated, then the rest.
inline constexpr MsgType kRankHello[] = {MsgType::hello};
inline constexpr MsgType kRankToLauncher[] = {MsgType::put, MsgType::fence, MsgType::abort, MsgType::finalize,
                                              MsgType::control_reply, MsgType::peer_check};
inline constexpr MsgType kLauncherToRank[] = {MsgType::welcome, MsgType::fence_done, MsgType::abort_ack,
                                              MsgType::finalize_ack, MsgType::control, MsgType::busy,
                                              MsgType::peer_status};

struct Hello {
  std::uint16_t version = kProtocolVersion;
  std::uint32_t rank = 0;
  std::uint32_t pid = 0;
  Secret secret{};
};
struct Welcome {
  std::uint32_t size = 0;
};
struct Put {
  std::string key;  // 1..kMaxKeyBytes bytes
  std::string value;
};
struct Fence {
  std::uint32_t epoch = 0;
};
struct KvEntry {
  std::uint32_t rank = 0;
  std::string key;
  std::string value;
};
struct FenceDone {
  std::uint32_t epoch = 0;
  std::vector<KvEntry> entries;
};
struct Abort {
  std::int32_t code = 0;
  std::string message;
};
struct AbortAck {};
struct Finalize {};
struct FinalizeAck {};
struct Control {
  std::uint32_t id = 0;
  std::string request;  // at most kMaxControlRequestBytes
};
struct Busy {};
struct ControlReply {
  std::uint32_t id = 0;
  bool ok = false;
  std::string text;  // at most kMaxControlReplyBytes: JSON when ok, else one line saying why not
};
struct PeerCheck {
  std::uint32_t peer = 0;
};
struct PeerStatus {
  std::uint32_t peer = 0;
  bool polling = false;
};

// Alternatives in MsgType order, so index() + 1 is the type byte.
using Message = std::variant<Hello, Welcome, Put, Fence, FenceDone, Abort, AbortAck, Finalize, FinalizeAck,
                             Control, ControlReply, Busy, PeerCheck, PeerStatus>;

MsgType type_of(const Message& message) noexcept;

// The whole frame, header included. The message must respect the bounds above (callers check them on
// input from users; encoding does not truncate).
std::string encode(const Message& message);

// Decodes one body of the given type; the body must be consumed exactly.
base::Result<Message> decode(MsgType type, std::span<const char> body);

// Cuts a byte stream into messages, refusing frames not in `allowed` before buffering their bodies.
class FrameReader {
 public:
  explicit FrameReader(std::span<const MsgType> allowed) : allowed_(allowed) {}

  // Replaces the set of frames accepted from now on (e.g. everything after authentication).
  void allow(std::span<const MsgType> allowed) noexcept { allowed_ = allowed; }
  void append(std::span<const char> bytes);
  // The next complete message, std::nullopt when more bytes are needed, or why the stream is malformed
  // (the caller must then close the connection: the stream cannot be resynchronised).
  base::Result<std::optional<Message>> next();
  // Bytes received but not yet returned as messages.
  std::size_t buffered() const noexcept { return buffer_.size() - start_; }

 private:
  std::span<const MsgType> allowed_;
  std::string buffer_;
  std::size_t start_ = 0;
};

}  // namespace ftmpi::rte

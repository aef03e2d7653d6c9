#include "ftmpi/rte/protocol.hpp"

#include <algorithm>
#include <iterator>
#include <cstring>

#include "ftmpi/base/compress.hpp"
#include "le_codec.hpp"

namespace ftmpi::rte {
namespace {

using base::Errc;
using base::Result;
using base::Status;

constexpr std::size_t kHelloBytes = 2 + 4 + 4 + sizeof(Secret);
constexpr std::size_t kMaxPutBytes = 2 + kMaxKeyBytes + 4 + kMaxValueBytes;
// The entries' part of a fence_done (count and entries), uncompressed; the frame adds the epoch, the
// encoding byte and, when compressed, the uncompressed length.
constexpr std::size_t kMaxFenceTableBytes = 4 + std::size_t{kMaxJobSize} * kMaxRankKvBytes;
constexpr std::size_t kMaxFenceDoneBytes = 4 + 1 + 4 + kMaxFenceTableBytes;
static_assert(kMaxFenceDoneBytes <= UINT32_MAX, "a fence_done length must fit the u32 length field");
// fence_done's encodings of its table.
constexpr std::uint8_t kTableRaw = 0;
constexpr std::uint8_t kTableZstd = 1;
// Tables smaller than this go raw: compressing a few entries saves nothing worth a rank's time.
constexpr std::size_t kCompressTableFrom = 512;

Status malformed(MsgType type, std::string_view why) {
  return Status(Errc::malformed, std::string(to_string(type)) + ": " + std::string(why));
}

void write_kv(Writer& w, std::string_view key, std::string_view value) {
  w.u16(static_cast<std::uint16_t>(key.size()));
  w.bytes(key);
  w.u32(static_cast<std::uint32_t>(value.size()));
  w.bytes(value);
}

// Reads a key and value as put and fence_done carry them, enforcing the key and value bounds.
Status read_kv(Reader& r, MsgType type, std::string& key, std::string& value) {
  std::uint16_t key_len = 0;
  std::uint32_t value_len = 0;
  if (!r.u16(key_len)) return malformed(type, "truncated key length");
  if (key_len == 0 || key_len > kMaxKeyBytes) {
    return malformed(type,
                     "key length " + std::to_string(key_len) + " outside 1.." + std::to_string(kMaxKeyBytes));
  }
  if (!r.bytes(key_len, key)) return malformed(type, "truncated key");
  if (!r.u32(value_len)) return malformed(type, "truncated value length");
  if (value_len > kMaxValueBytes) {
    return malformed(
        type, "value length " + std::to_string(value_len) + " above " + std::to_string(kMaxValueBytes));
  }
  if (!r.bytes(value_len, value)) return malformed(type, "truncated value");
  return {};
}

// fence_done's table: u32 count, then count entries.
Status decode_fence_table(Reader& r, MsgType type, FenceDone& m) {
  std::uint32_t count = 0;
  if (!r.u32(count)) return malformed(type, "truncated");
  // Each entry takes at least kKvEntryOverhead + 1 bytes: a count beyond that is a lie.
  if (count > r.remaining() / (kKvEntryOverhead + 1)) return malformed(type, "impossible entry count");
  m.entries.reserve(count);
  for (std::uint32_t i = 0; i < count; ++i) {
    KvEntry e;
    if (!r.u32(e.rank)) return malformed(type, "truncated entry");
    if (e.rank >= kMaxJobSize) return malformed(type, "rank " + std::to_string(e.rank) + " out of range");
    if (Status s = read_kv(r, type, e.key, e.value); !s) return s;
    m.entries.push_back(std::move(e));
  }
  return {};
}

struct Encoder {
  Writer& w;
  void operator()(const Hello& m) {
    w.u16(m.version);
    w.u32(m.rank);
    w.u32(m.pid);
    w.bytes(std::string_view(reinterpret_cast<const char*>(m.secret.data()), m.secret.size()));
  }
  void operator()(const Welcome& m) { w.u32(m.size); }
  void operator()(const Put& m) { write_kv(w, m.key, m.value); }
  void operator()(const Fence& m) { w.u32(m.epoch); }
  void operator()(const FenceDone& m) {
    std::string table;
    Writer t(table);
    t.u32(static_cast<std::uint32_t>(m.entries.size()));
    for (const KvEntry& e : m.entries) {
      t.u32(e.rank);
      write_kv(t, e.key, e.value);
    }
    w.u32(m.epoch);
    // Every rank gets every rank's addresses, so the tables grow with the job in each of its ranks'
    // downloads; their entries repeat (keys, host identities, subnets) and zstd shrinks them several fold
    // (docs/slurm.md, "Start-up and wire-up").
    if (table.size() >= kCompressTableFrom) {
      std::string packed = base::zstd_compress(table);
      if (packed.size() + 4 < table.size()) {
        w.u8(kTableZstd);
        w.u32(static_cast<std::uint32_t>(table.size()));
        w.bytes(packed);
        return;
      }
    }
    w.u8(kTableRaw);
    w.bytes(table);
  }
  void operator()(const Abort& m) {
    w.u32(static_cast<std::uint32_t>(m.code));
    w.u16(static_cast<std::uint16_t>(m.message.size()));
    w.bytes(m.message);
  }
  void operator()(const AbortAck&) {}
  void operator()(const Finalize&) {}
  void operator()(const FinalizeAck&) {}
  void operator()(const Busy&) {}
  void operator()(const Control& m) {
    w.u32(m.id);
    w.u32(static_cast<std::uint32_t>(m.request.size()));
    w.bytes(m.request);
  }
  void operator()(const ControlReply& m) {
    w.u32(m.id);
    w.u8(m.ok ? 1 : 0);
    w.u32(static_cast<std::uint32_t>(m.text.size()));
    w.bytes(m.text);
  }
  void operator()(const PeerCheck& m) { w.u32(m.peer); }
  void operator()(const PeerStatus& m) {
    w.u32(m.peer);
    w.u8(m.polling ? 1 : 0);
  }
};

Result<Message> decode_body(MsgType type, Reader& r) {
  switch (type) {
    case MsgType::hello: {
      Hello m;
      if (!r.u16(m.version) || !r.u32(m.rank) || !r.u32(m.pid) || !r.raw(m.secret.data(), m.secret.size())) {
        return malformed(type, "truncated");
      }
      if (m.version != kProtocolVersion) {
        return Status(Errc::unsupported_version, "hello: protocol version " + std::to_string(m.version) +
                                                     ", this ftrun speaks " +
                                                     std::to_string(kProtocolVersion));
      }
      return Message(m);
    }
    case MsgType::welcome: {
      Welcome m;
      if (!r.u32(m.size)) return malformed(type, "truncated");
      if (m.size == 0 || m.size > kMaxJobSize) return malformed(type, "impossible job size");
      return Message(m);
    }
    case MsgType::put: {
      Put m;
      if (Status s = read_kv(r, type, m.key, m.value); !s) return s;
      return Message(std::move(m));
    }
    case MsgType::fence: {
      Fence m;
      if (!r.u32(m.epoch)) return malformed(type, "truncated");
      if (m.epoch == 0) return malformed(type, "epoch 0");
      return Message(m);
    }
    case MsgType::fence_done: {
      FenceDone m;
      std::uint8_t encoding = 0;
      if (!r.u32(m.epoch) || !r.u8(encoding)) return malformed(type, "truncated");
      if (encoding == kTableZstd) {
        std::uint32_t table_bytes = 0;
        std::string packed;
        if (!r.u32(table_bytes) || !r.bytes(r.remaining(), packed)) return malformed(type, "truncated");
        if (table_bytes > kMaxFenceTableBytes) return malformed(type, "impossible table length");
        // At most the announced length comes out, so a small frame cannot unpack into a huge one.
        auto table = base::zstd_decompress(packed, table_bytes);
        if (!table) return malformed(type, "table: " + table.status().message());
        if (table->size() != table_bytes) return malformed(type, "table shorter than announced");
        Reader inner(*table);
        if (Status s = decode_fence_table(inner, type, m); !s) return s;
        if (!inner.at_end()) return malformed(type, "trailing bytes in the table");
        return Message(std::move(m));
      }
      if (encoding != kTableRaw) return malformed(type, "unknown table encoding " + std::to_string(encoding));
      if (Status s = decode_fence_table(r, type, m); !s) return s;
      return Message(std::move(m));
    }
    case MsgType::abort: {
      Abort m;
      std::uint32_t code = 0;
      std::uint16_t len = 0;
      if (!r.u32(code) || !r.u16(len)) return malformed(type, "truncated");
      if (len > kMaxAbortMessageBytes) return malformed(type, "message too long");
      if (!r.bytes(len, m.message)) return malformed(type, "truncated message");
      m.code = static_cast<std::int32_t>(code);
      return Message(std::move(m));
    }
    case MsgType::abort_ack: return Message(AbortAck{});
    case MsgType::finalize: return Message(Finalize{});
    case MsgType::finalize_ack: return Message(FinalizeAck{});
    case MsgType::busy: return Message(Busy{});
    case MsgType::control: {
      Control m;
      std::uint32_t len = 0;
      if (!r.u32(m.id) || !r.u32(len)) return malformed(type, "truncated");
      if (len > kMaxControlRequestBytes) return malformed(type, "request too long");
      if (!r.bytes(len, m.request)) return malformed(type, "truncated request");
      return Message(std::move(m));
    }
    case MsgType::control_reply: {
      ControlReply m;
      std::uint8_t ok = 0;
      std::uint32_t len = 0;
      if (!r.u32(m.id) || !r.u8(ok) || !r.u32(len)) return malformed(type, "truncated");
      if (ok > 1) return malformed(type, "ok must be 0 or 1");
      if (len > kMaxControlReplyBytes) return malformed(type, "reply too long");
      if (!r.bytes(len, m.text)) return malformed(type, "truncated reply");
      m.ok = ok == 1;
      return Message(std::move(m));
    }
    case MsgType::peer_check: {
      PeerCheck m;
      if (!r.u32(m.peer)) return malformed(type, "truncated");
      if (m.peer >= kMaxJobSize) return malformed(type, "peer " + std::to_string(m.peer) + " out of range");
      return Message(m);
    }
    case MsgType::peer_status: {
      PeerStatus m;
      std::uint8_t polling = 0;
      if (!r.u32(m.peer) || !r.u8(polling)) return malformed(type, "truncated");
      if (m.peer >= kMaxJobSize) return malformed(type, "peer " + std::to_string(m.peer) + " out of range");
      if (polling > 1) return malformed(type, "polling must be 0 or 1");
      m.polling = polling == 1;
      return Message(m);
    }
  }
  return Status(Errc::malformed, "unknown message type " + std::to_string(static_cast<int>(type)));
}

}  // namespace

std::string_view to_string(MsgType type) noexcept {
  switch (type) {
    case MsgType::hello: return "hello";
    case MsgType::welcome: return "welcome";
    case MsgType::put: return "put";
    case MsgType::fence: return "fence";
    case MsgType::fence_done: return "fence_done";
    case MsgType::abort: return "abort";
    case MsgType::abort_ack: return "abort_ack";
    case MsgType::finalize: return "finalize";
    case MsgType::finalize_ack: return "finalize_ack";
    case MsgType::control: return "control";
    case MsgType::control_reply: return "control_reply";
    case MsgType::busy: return "busy";
    case MsgType::peer_check: return "peer_check";
    case MsgType::peer_status: return "peer_status";
  }
  return "unknown";
}

std::size_t max_body_bytes(MsgType type) noexcept {
  switch (type) {
    case MsgType::hello: return kHelloBytes;
    case MsgType::welcome: return 4;
    case MsgType::put: return kMaxPutBytes;
    case MsgType::fence: return 4;
    case MsgType::fence_done: return kMaxFenceDoneBytes;
    case MsgType::abort: return 4 + 2 + kMaxAbortMessageBytes;
    case MsgType::abort_ack:
    case MsgType::finalize:
    case MsgType::finalize_ack:
    case MsgType::busy: return 0;
    case MsgType::control: return 4 + 4 + kMaxControlRequestBytes;
    case MsgType::control_reply: return 4 + 1 + 4 + kMaxControlReplyBytes;
    case MsgType::peer_check: return 4;
    case MsgType::peer_status: return 4 + 1;
  }
  return 0;
}

MsgType type_of(const Message& message) noexcept { return static_cast<MsgType>(message.index() + 1); }

std::string encode(const Message& message) {
  std::string frame(kFrameHeaderBytes, '\0');
  Writer body(frame);
  std::visit(Encoder{body}, message);
  write_frame_header(frame, static_cast<std::uint8_t>(type_of(message)));
  return frame;
}

Result<Message> decode(MsgType type, std::span<const char> body) {
  if (body.size() > max_body_bytes(type)) {
    return malformed(type, std::to_string(body.size()) + " bytes exceed the bound of " +
                               std::to_string(max_body_bytes(type)));
  }
  Reader r(body);
  auto message = decode_body(type, r);
  if (message && !r.at_end()) return malformed(type, "trailing bytes");
  return message;
}

void FrameReader::append(std::span<const char> bytes) {
  append_frame_bytes(buffer_, start_, bytes);
}

Result<std::optional<Message>> FrameReader::next() {
  return next_frame<Message, MsgType>(buffer_, start_, allowed_, kEveryMsgType);
}

}  // namespace ftmpi::rte

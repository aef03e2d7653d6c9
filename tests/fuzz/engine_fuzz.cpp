// libFuzzer target for the engine's frame handling: two engines in this process exchange real messages
// over a loop path that claims to be unreliable (so every check is on: header MAC, sequence tracking,
// payload checksums), and the input decides what happens to each frame on its way: passed, duplicated,
// corrupted (the MAC then refuses it: a loss, repaired by retransmission), or rewritten and sealed again
// with the job's key, i.e. forged by someone who holds the secret. engine_corpus_replay runs the same
// function over the corpus.
//
// Rules, whatever the input: no crash, no sanitizer report, no abort of the job. When nothing was forged,
// also: every message arrives, once, intact. A violation aborts.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string_view>
#include <vector>

#include "fuzz_rule.hpp"
#include "engine/engine_core.hpp"
#include "ftmpi/frag/wire.hpp"
#include "ftmpi/path/loop.hpp"

using namespace ftmpi;

namespace {

constexpr std::uint64_t kJobKey = 0xf022'0000'0000'0001ULL;

[[noreturn]] void violated(const char* rule, std::string_view detail) { ftmpi::fuzz::violated("engine_fuzz", rule, detail); }

// Reads the input as a stream of small numbers; zeros once it is used up.
class Script {
 public:
  Script(const std::uint8_t* data, std::size_t size) : data_(data), size_(size) {}
  std::uint8_t byte() noexcept { return at_ < size_ ? data_[at_++] : 0; }
  std::uint16_t u16() noexcept { return static_cast<std::uint16_t>(byte() | byte() << 8); }

 private:
  const std::uint8_t* data_;
  std::size_t size_;
  std::size_t at_ = 0;
};

class Bytes final : public path::FrameWriter {
 public:
  explicit Bytes(std::span<const std::byte> bytes) : bytes_(bytes) {}
  std::size_t frame_size() const noexcept override { return bytes_.size(); }
  void write(std::span<std::byte> room) noexcept override { std::memcpy(room.data(), bytes_.data(), bytes_.size()); }

 private:
  std::span<const std::byte> bytes_;
};

// A loop path whose frames go through the script on their way out.
class ScriptedPath final : public path::Path {
 public:
  ScriptedPath(path::LoopNetwork& network, path::Rank me, Script& script, bool& forged, const frag::FrameKey& key)
      : inner_(network, me), script_(script), forged_(forged), key_(key) {}

  const path::PathInfo& info() const noexcept override { return inner_.info(); }
  bool reaches(path::Rank peer) const noexcept override { return inner_.reaches(peer); }
  bool has_queued_frames() const noexcept override { return inner_.has_queued_frames(); }
  std::size_t poll(path::FrameSink& sink, std::size_t budget) noexcept override { return inner_.poll(sink, budget); }

  base::Status send(path::Rank peer, path::FrameWriter& frame) noexcept override {
    std::vector<std::byte> bytes(frame.frame_size());
    frame.write(bytes);
    switch (script_.byte() % 8) {
      case 1: {  // duplicated
        Bytes copy(bytes);
        (void)inner_.send(peer, copy);
        break;
      }
      case 2: {  // corrupted: one byte changed; the MAC refuses it (a loss)
        const std::size_t at = script_.u16() % bytes.size();
        bytes[at] ^= std::byte{static_cast<unsigned char>(script_.byte() | 1)};
        break;
      }
      case 3: {  // forged by a key holder: bytes rewritten, length changed, sealed again
        forged_ = true;
        const std::size_t at = script_.u16() % bytes.size();
        bytes[at] = std::byte{script_.byte()};
        if (script_.byte() % 4 == 0) {  // a frame longer or shorter than its header says, within the MTU
          bytes.resize(std::max<std::size_t>(frag::kHeaderSize, script_.u16() % (inner_.info().max_frame + 1)));
        }
        if (bytes.size() >= frag::kHeaderSize) {
          frag::seal_header(std::span<std::byte, frag::kHeaderSize>(bytes.data(), frag::kHeaderSize), key_);
        }
        break;
      }
      default:  // passed as it is
        break;
    }
    Bytes out(bytes);
    return inner_.send(peer, out);
  }

 private:
  path::LoopPath inner_;
  Script& script_;
  bool& forged_;
  const frag::FrameKey& key_;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  Script script(data, size);
  bool forged = false;
  const frag::FrameKey key = frag::derive_frame_key(std::vector<std::uint8_t>(32, 0x42));
  path::LoopOptions options;
  options.reliable = false;
  options.mtu = 2048 + script.u16() % 8192;
  path::LoopNetwork network(2, options);
  engine::EngineConfig config = engine::EngineConfig::defaults();
  config.retransmit_min = std::chrono::microseconds(50);  // losses are repaired quickly
  config.retransmit_max = std::chrono::milliseconds(2);
  config.rail_down_after = std::chrono::seconds(60);  // one rail: it must never be declared down here
  config.peer_timeout = std::chrono::seconds(60);
  std::vector<std::unique_ptr<engine::EngineCore>> ranks;
  for (std::uint32_t r = 0; r < 2; ++r) {
    std::vector<std::unique_ptr<path::Path>> paths;
    paths.push_back(std::make_unique<ScriptedPath>(network, r, script, forged, key));
    engine::Environment env;
    env.abort = [](int, std::string_view message) { violated("the engine aborted the job", message); };
    ranks.push_back(std::make_unique<engine::EngineCore>(engine::Identity{r, 2, kJobKey, key}, config,
                                                         std::move(paths), env));
  }
  const engine::CommView world0{0, 0, 2, {}};
  const engine::CommView world1{0, 1, 2, {}};
  // Up to four messages 0 -> 1, eager and rendezvous, with their contents.
  const int count = 1 + script.byte() % 4;
  std::vector<std::vector<std::byte>> sent, got;
  std::vector<engine::Request*> sends, recvs;
  for (int i = 0; i < count; ++i) {
    const std::size_t bytes = static_cast<std::size_t>(script.u16()) * (script.byte() % 4 == 0 ? 16 : 1);
    sent.emplace_back(bytes);
    for (std::size_t j = 0; j < bytes; ++j) sent.back()[j] = std::byte(static_cast<unsigned char>(j * 31 + i));
    got.emplace_back(bytes);
    recvs.push_back(ranks[1]->irecv(world1, got.back().data(), got.back().size(), 0, i));
    sends.push_back(ranks[0]->isend(world0, sent.back().data(), sent.back().size(), 1, i, engine::SendMode::standard));
  }
  auto done = [&] {
    for (int i = 0; i < count; ++i) {
      if (!ranks[0]->is_complete(sends[static_cast<std::size_t>(i)], nullptr) ||
          !ranks[1]->is_complete(recvs[static_cast<std::size_t>(i)], nullptr)) {
        return false;
      }
    }
    return true;
  };
  // Losses are repaired within milliseconds; the bound only catches a hang, generously, so that a slow
  // machine never fails here. A forged stream may never complete, which is allowed: it gets 200 ms.
  const auto start = std::chrono::steady_clock::now();
  const auto bound = std::chrono::seconds(60);
  while (!done()) {
    const auto spent = std::chrono::steady_clock::now() - start;
    if (spent > bound || (forged && spent > std::chrono::milliseconds(200))) break;
    for (auto& r : ranks) r->progress();
  }
  if (!forged) {
    // Losses, corruption and duplicates only: the reliability machinery must deliver everything.
    if (!done()) violated("a message did not arrive (nothing was forged)", "");
    for (int i = 0; i < count; ++i) {
      engine::Completion c;
      ranks[1]->is_complete(recvs[static_cast<std::size_t>(i)], &c);
      if (c.bytes != sent[static_cast<std::size_t>(i)].size() || got[static_cast<std::size_t>(i)] != sent[static_cast<std::size_t>(i)]) {
        violated("a message arrived wrong (nothing was forged)", "");
      }
    }
  }
  for (int i = 0; i < count; ++i) {
    ranks[0]->release(sends[static_cast<std::size_t>(i)]);
    ranks[1]->release(recvs[static_cast<std::size_t>(i)]);
  }
  return 0;
}

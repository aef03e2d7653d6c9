// Shared-memory path between two forked processes pinned to different cores: ping-pong one-way latency
// and streaming throughput. Frames are copied in by the sender's writer and out by the receiver's sink,
// as the engine does with user buffers.
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "ftmpi/bench/harness.hpp"
#include "ftmpi/path/shm.hpp"
#include "copy_frame.hpp"
#include "pinning.hpp"
#include "sections.hpp"

namespace ftmpi::bench {
namespace {

using path::Rank;
using path::ShmGeometry;
using path::ShmPath;

// Frames of this size carry a command to the child instead of data; no data frame has it.
constexpr std::size_t kCommandSize = 5;
enum Command : unsigned char { kEcho = 'E', kSink = 'S', kFlush = 'F', kQuit = 'Q' };

// The child: copies every data frame out; in echo mode sends it straight back.
class Server final : public path::FrameSink {
 public:
  Server(ShmPath& shm, Rank parent) : shm_(shm), parent_(parent), buffer_(1 << 20) {}

  void on_frame(std::span<const std::byte> frame) noexcept override {
    if (frame.size() == kCommandSize) return command(static_cast<unsigned char>(frame[0]));
    std::memcpy(buffer_.data(), frame.data(), frame.size());
    if (echo_) {
      CopyFrame reply(buffer_.data(), frame.size());
      ok_ = ok_ && shm_.send(parent_, reply).is_ok();
    }
  }
  bool running() const { return running_ && ok_; }

 private:
  void command(unsigned char c) {
    if (c == kEcho || c == kSink) echo_ = c == kEcho;
    if (c == kQuit) running_ = false;
    if (c == kFlush) {
      CopyFrame done(buffer_.data(), 0);
      ok_ = ok_ && shm_.send(parent_, done).is_ok();
    }
  }

  ShmPath& shm_;
  Rank parent_;
  std::vector<std::byte> buffer_;
  bool echo_ = true;
  bool running_ = true;
  bool ok_ = true;
};

// The parent's sink: copies frames out and counts them.
class Counter final : public path::FrameSink {
 public:
  Counter() : buffer_(1 << 20) {}
  void on_frame(std::span<const std::byte> frame) noexcept override {
    std::memcpy(buffer_.data(), frame.data(), frame.size());
    ++count;
  }
  std::uint64_t count = 0;

 private:
  std::vector<std::byte> buffer_;
};

[[noreturn]] void fail(const std::string& what) {
  std::fprintf(stderr, "path_bench: error: %s\n", what.c_str());
  std::exit(1);
}

// A parent (local rank 0) and a forked child (local rank 1) on one segment, set up in the engine's order.
class Pair {
 public:
  explicit Pair(ShmGeometry geometry, const CpuPinning& pinning) {
    const std::string name = "/ftmpi-bench-" + std::to_string(::getpid()) + "-shm";
    const std::vector<Rank> ranks{0, 1};
    if (auto s = ShmPath::create({name, 0, ranks, geometry}); !s) fail(s.to_string());
    int attached[2];
    if (::pipe(attached) != 0) fail("pipe");
    child_ = ::fork();
    if (child_ < 0) fail("fork");
    if (child_ == 0) {
      ::close(attached[0]);
      pinning.pin(1);
      auto shm = ShmPath::attach({name, 1, ranks, geometry});
      const char token = shm ? 1 : 0;
      if (::write(attached[1], &token, 1) != 1 || !shm) ::_exit(1);
      Server server(**shm, 0);
      while (server.running()) (*shm)->poll(server, 64);
      ::_exit(server.running() ? 1 : 0);
    }
    ::close(attached[1]);
    pinning.pin(0);
    auto shm = ShmPath::attach({name, 0, ranks, geometry});
    char token = 0;
    const bool child_attached = ::read(attached[0], &token, 1) == 1 && token == 1;
    ::close(attached[0]);
    if (!shm) fail(shm.status().to_string());
    if (auto s = (*shm)->unlink_name(); !s) fail(s.to_string());
    if (!child_attached) fail("the child could not attach");
    shm_ = std::move(*shm);
  }
  ~Pair() {
    command(kQuit);
    while (shm_->has_queued_frames()) shm_->poll(sink, 64);
    int status = 0;
    ::waitpid(child_, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) fail("the child failed");
  }

  void command(Command c) {
    const std::byte bytes[kCommandSize] = {std::byte{c}};
    CopyFrame frame(bytes, kCommandSize);
    send(frame);
  }
  void send(CopyFrame& frame) {
    if (auto s = shm_->send(1, frame); !s) fail(s.to_string());
  }
  // Polls until `count` frames have arrived in all.
  void wait_for(std::uint64_t count) {
    while (sink.count < count) shm_->poll(sink, 64);
  }

  ShmPath& shm() { return *shm_; }
  Counter sink;

 private:
  pid_t child_ = -1;
  std::unique_ptr<ShmPath> shm_;
};

std::string ns(double value) { return fixed(value, 0); }

}  // namespace

void run_shm_bench() {
  CpuPinning pinning;
  std::vector<std::byte> source(1 << 20, std::byte{0x5a});
  const ShmGeometry defaults{128, 8448};

  Table latency({"shm ping-pong, one way", "frame bytes", "median ns", "best ns"});
  {
    Pair pair(defaults, pinning);
    pair.command(kEcho);
    // 48: slot header and frame in one cache line; 112: a zero-byte message (the wire header alone).
    for (std::size_t size : {0, 48, 64, 112, 1024, 8192}) {
      CopyFrame frame(source.data(), size);
      const Timing t = measure(
          [&](std::uint64_t iterations) {
            for (std::uint64_t i = 0; i < iterations; ++i) {
              pair.send(frame);
              pair.wait_for(pair.sink.count + 1);
            }
          },
          2.0);
      latency.add_row({"", std::to_string(size), ns(t.ns_per_op), ns(t.min_ns_per_op)});
    }
  }
  latency.print();
  std::puts("");

  // Windowed: 64 frames, then a round trip, as osu_bw does; the window fits the ring. Sustained: frames
  // back to back; once the ring is full, each send waits in the overflow list for a free slot.
  Table streaming({"shm streaming, 8 KiB frames", "slots", "median GB/s", "best GB/s"});
  constexpr std::size_t kSize = 8192;
  CopyFrame frame(source.data(), kSize);
  const auto stream = [&](Pair& pair, std::uint64_t window) {
    return measure(
        [&](std::uint64_t iterations) {
          for (std::uint64_t i = 0; i < iterations; ++i) {
            for (std::uint64_t k = 0; k < window; ++k) {
              pair.send(frame);
              while (pair.shm().has_queued_frames()) pair.shm().poll(pair.sink, 64);
            }
            pair.command(kFlush);
            pair.wait_for(pair.sink.count + 1);
          }
        },
        static_cast<double>(window));
  };
  const auto row = [&](const std::string& mode, std::uint32_t slots, const Timing& t) {
    streaming.add_row({mode, std::to_string(slots), fixed(kSize / t.ns_per_op), fixed(kSize / t.min_ns_per_op)});
  };
  {
    Pair pair(defaults, pinning);
    pair.command(kSink);
    row("window of 64, then a round trip", defaults.slots, stream(pair, 64));
  }
  for (std::uint32_t slots : {32u, 128u, 512u}) {
    Pair pair(ShmGeometry{slots, defaults.slot_size}, pinning);
    pair.command(kSink);
    row("sustained", slots, stream(pair, 4096));
  }
  streaming.print();
  std::puts("");
}

}  // namespace ftmpi::bench

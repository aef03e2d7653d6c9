// Helpers for the path tests: forked children, a process barrier, unique shm names, and frames whose
// bytes follow from (sender, receiver, index) so that any receiver can check them.
#pragma once

#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <functional>
#include <new>
#include <span>
#include <string>
#include <vector>

#include "ftmpi/path/path.hpp"

namespace ftmpi::path::test {

// A child that has not finished after this long is hung (a deadlock): SIGALRM kills it, and the parent
// reports the signal instead of waiting for CTest's timeout.
inline constexpr unsigned kWatchdogSeconds = 60;

// Runs body(i) in `n` forked children. body returns "" on success or what went wrong; each child sends
// that text through a pipe and _exits. Meanwhile the parent runs `parent_work` (if given), then always
// reaps every child. Returns one line per failed child (empty: all passed).
inline std::vector<std::string> run_children(int n, const std::function<std::string(int)>& body,
                                             const std::function<void()>& parent_work = {}) {
  std::vector<std::string> failures;
  std::vector<std::pair<pid_t, int>> children;
  for (int i = 0; i < n; ++i) {
    int fds[2];
    if (::pipe(fds) != 0) {
      failures.push_back("pipe: " + std::string(std::strerror(errno)));
      break;
    }
    const pid_t pid = ::fork();
    if (pid == 0) {
      ::close(fds[0]);
      ::alarm(kWatchdogSeconds);
      const std::string error = body(i);
      for (std::size_t done = 0; done < error.size();) {
        const ssize_t put = ::write(fds[1], error.data() + done, error.size() - done);
        if (put <= 0) break;
        done += static_cast<std::size_t>(put);
      }
      ::_exit(error.empty() ? 0 : 1);
    }
    ::close(fds[1]);
    if (pid < 0) {
      ::close(fds[0]);
      failures.push_back("fork: " + std::string(std::strerror(errno)));
      break;
    }
    children.emplace_back(pid, fds[0]);
  }
  if (parent_work) parent_work();
  for (std::size_t i = 0; i < children.size(); ++i) {
    auto [pid, fd] = children[i];
    std::string text;
    char buf[512];
    for (ssize_t got; (got = ::read(fd, buf, sizeof buf)) != 0;) {
      if (got < 0) {
        if (errno == EINTR) continue;
        break;
      }
      text.append(buf, static_cast<std::size_t>(got));
    }
    ::close(fd);
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    const std::string who = "child " + std::to_string(i) + ": ";
    if (WIFSIGNALED(status)) {
      failures.push_back(who + "killed by signal " + std::to_string(WTERMSIG(status)) +
                         (WTERMSIG(status) == SIGALRM ? " (watchdog: it hung)" : ""));
    } else if (WEXITSTATUS(status) != 0) {
      failures.push_back(who + (text.empty() ? "exit status " + std::to_string(WEXITSTATUS(status)) : text));
    }
  }
  return failures;
}

// True when this process has no child left, reaped or not.
inline bool no_children_left() { return ::waitpid(-1, nullptr, WNOHANG) == -1 && errno == ECHILD; }

// A reusable barrier for processes forked after it was made (it lives in an anonymous shared mapping).
class ProcessBarrier {
 public:
  explicit ProcessBarrier(std::uint32_t parties) : parties_(parties) {
    void* memory = ::mmap(nullptr, sizeof(State), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    state_ = memory == MAP_FAILED ? nullptr : new (memory) State{};
  }
  ~ProcessBarrier() {
    if (state_ != nullptr) ::munmap(state_, sizeof(State));
  }
  ProcessBarrier(const ProcessBarrier&) = delete;
  ProcessBarrier& operator=(const ProcessBarrier&) = delete;

  bool valid() const { return state_ != nullptr; }

  void arrive_and_wait() {
    const std::uint32_t generation = state_->generation.load(std::memory_order_acquire);
    if (state_->arrived.fetch_add(1, std::memory_order_acq_rel) + 1 == parties_) {
      state_->arrived.store(0, std::memory_order_relaxed);
      state_->generation.store(generation + 1, std::memory_order_release);
      return;
    }
    // More processes than cores here: yield rather than spin.
    while (state_->generation.load(std::memory_order_acquire) == generation) ::sched_yield();
  }

 private:
  struct State {
    std::atomic<std::uint32_t> arrived{0};
    std::atomic<std::uint32_t> generation{0};
  };
  static_assert(std::atomic<std::uint32_t>::is_always_lock_free);
  std::uint32_t parties_;
  State* state_ = nullptr;
};

// A shm name no other test process uses; removes the name on destruction in case a test failed before
// unlinking it, so that a failure does not leave /dev/shm entries behind either.
class ShmName {
 public:
  explicit ShmName(std::string_view what) {
    static int counter = 0;
    name_ = "/ftmpi-test-" + std::to_string(::getpid()) + "-" + std::to_string(counter++) + "-" +
            std::string(what);
  }
  ~ShmName() { ::shm_unlink(name_.c_str()); }
  ShmName(const ShmName&) = delete;
  ShmName& operator=(const ShmName&) = delete;

  const std::string& str() const { return name_; }
  // Whether the name is still in /dev/shm.
  bool exists() const { return ::access(("/dev/shm" + name_).c_str(), F_OK) == 0; }

 private:
  std::string name_;
};

inline std::uint64_t mix(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// A test frame: sender (u32) and index (u32), then bytes derived from (seed, sender, receiver, index).
inline constexpr std::size_t kTestHeader = 8;

inline std::uint64_t frame_key(std::uint64_t seed, std::uint32_t sender, std::uint32_t receiver,
                               std::uint32_t index) {
  return mix(seed ^ mix((std::uint64_t{sender} << 48) ^ (std::uint64_t{receiver} << 32) ^ index));
}

// Sizes from kTestHeader to max_frame, half of them small.
inline std::size_t frame_size_for(std::uint64_t key, std::size_t max_frame) {
  const std::uint64_t r = mix(key);
  const std::size_t limit = (r & 1) != 0 ? std::min<std::size_t>(64, max_frame) : max_frame;
  return kTestHeader + (r >> 1) % (limit - kTestHeader + 1);
}

inline std::byte pattern_byte(std::uint64_t key, std::size_t j) {
  return static_cast<std::byte>((key >> (8 * (j & 7))) + j);
}

class PatternFrame final : public FrameWriter {
 public:
  PatternFrame(std::uint64_t seed, std::uint32_t sender, std::uint32_t receiver, std::uint32_t index,
               std::size_t max_frame)
      : sender_(sender), index_(index), key_(frame_key(seed, sender, receiver, index)),
        size_(frame_size_for(key_, max_frame)) {}
  std::size_t frame_size() const noexcept override { return size_; }
  void write(std::span<std::byte> room) noexcept override {
    std::memcpy(room.data(), &sender_, 4);
    std::memcpy(room.data() + 4, &index_, 4);
    for (std::size_t j = kTestHeader; j < size_; ++j) room[j] = pattern_byte(key_, j);
  }

 private:
  std::uint32_t sender_;
  std::uint32_t index_;
  std::uint64_t key_;
  std::size_t size_;
};

// Checks frames from every sender arrive in index order with the expected bytes; keeps the first error.
class PatternChecker final : public FrameSink {
 public:
  PatternChecker(std::uint64_t seed, std::uint32_t receiver, std::size_t senders, std::size_t max_frame)
      : seed_(seed), receiver_(receiver), max_frame_(max_frame), next_(senders, 0) {}

  void on_frame(std::span<const std::byte> frame) noexcept override {
    ++received_;
    if (!error_.empty()) return;
    std::uint32_t sender = 0;
    std::uint32_t index = 0;
    if (frame.size() < kTestHeader) return fail("frame of " + std::to_string(frame.size()) + " bytes");
    std::memcpy(&sender, frame.data(), 4);
    std::memcpy(&index, frame.data() + 4, 4);
    if (sender >= next_.size()) return fail("frame from unknown sender " + std::to_string(sender));
    const std::string what = "frame " + std::to_string(sender) + "->" + std::to_string(receiver_) + " #" +
                             std::to_string(index);
    if (index != next_[sender]) return fail(what + " arrived, expected #" + std::to_string(next_[sender]));
    ++next_[sender];
    const std::uint64_t key = frame_key(seed_, sender, receiver_, index);
    if (frame.size() != frame_size_for(key, max_frame_)) {
      return fail(what + " has " + std::to_string(frame.size()) + " bytes, expected " +
                  std::to_string(frame_size_for(key, max_frame_)));
    }
    for (std::size_t j = kTestHeader; j < frame.size(); ++j) {
      if (frame[j] != pattern_byte(key, j)) return fail(what + ": byte " + std::to_string(j) + " differs");
    }
  }

  std::size_t received() const { return received_; }
  std::uint32_t next_from(std::uint32_t sender) const { return next_[sender]; }
  const std::string& error() const { return error_; }

 private:
  void fail(std::string text) { error_ = std::move(text); }

  std::uint64_t seed_;
  std::uint32_t receiver_;
  std::size_t max_frame_;
  std::vector<std::uint32_t> next_;
  std::size_t received_ = 0;
  std::string error_;
};

// Copies a byte string into the room given.
class BytesFrame final : public FrameWriter {
 public:
  explicit BytesFrame(std::span<const std::byte> bytes) : bytes_(bytes) {}
  std::size_t frame_size() const noexcept override { return bytes_.size(); }
  void write(std::span<std::byte> room) noexcept override {
    if (!bytes_.empty()) std::memcpy(room.data(), bytes_.data(), bytes_.size());
  }

 private:
  std::span<const std::byte> bytes_;
};

// Keeps a copy of every frame handed up.
class CollectingSink final : public FrameSink {
 public:
  void on_frame(std::span<const std::byte> frame) noexcept override { frames.emplace_back(frame.begin(), frame.end()); }
  std::vector<std::vector<std::byte>> frames;
};

}  // namespace ftmpi::path::test

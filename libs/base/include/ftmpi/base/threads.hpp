// What MPI_THREAD_MULTIPLE costs, paid only by a process that asked for it.
//
// The library's locks are OptionalMutex: a real mutex once multi_threaded() is on, an untaken branch
// before. It is switched on once, by MPI_Init_thread(MULTIPLE) before the program can have a second
// thread calling MPI (thread creation orders that write before every read in the new threads), and
// never off. Counters shared by threads that hold different locks are Count: a plain add in a
// single-threaded process, an atomic one in a multi-threaded one.
//
// A hot path may read the flag once, at its entry, and run an instantiation specialised on it
// (template <bool kThreads>): LockIf and Count::add<kThreads> then cost nothing at all when it is off,
// not even a branch.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>

namespace ftmpi::base {

namespace detail {
inline bool multi_threaded = false;
}  // namespace detail

inline bool multi_threaded() noexcept { return detail::multi_threaded; }
// Before any second thread exists (MPI_Init_thread).
inline void enable_multi_threaded() noexcept { detail::multi_threaded = true; }

template <bool kThreads>
class LockIf;

// A mutex that locks only in a multi-threaded process (std::lock_guard and std::unique_lock take it).
class OptionalMutex {
 public:
  void lock() noexcept {
    if (multi_threaded()) [[unlikely]] mutex_.lock();
  }
  bool try_lock() noexcept { return !multi_threaded() || mutex_.try_lock(); }
  void unlock() noexcept {
    if (multi_threaded()) [[unlikely]] mutex_.unlock();
  }

 private:
  friend class LockIf<true>;
  std::mutex mutex_;
};

// An OptionalMutex held for a scope by code specialised on the flag (above): LockIf<true> locks it,
// LockIf<false> is nothing.
template <>
class LockIf<true> {
 public:
  explicit LockIf(OptionalMutex& m) noexcept : mutex_(m.mutex_) { mutex_.lock(); }
  ~LockIf() { mutex_.unlock(); }
  LockIf(const LockIf&) = delete;
  LockIf& operator=(const LockIf&) = delete;

 private:
  std::mutex& mutex_;
};

template <>
class LockIf<false> {
 public:
  explicit LockIf(OptionalMutex& /*unused*/) noexcept {}
  LockIf(const LockIf&) = delete;
  LockIf& operator=(const LockIf&) = delete;
};

// A statistics counter that several threads may bump at once (see above); reads are relaxed snapshots.
// A plain number, read and bumped through std::atomic_ref in a multi-threaded process, so that the
// single-threaded add is one instruction.
class Count {
 public:
  Count() = default;
  Count(std::uint64_t v) noexcept : value_(v) {}  // NOLINT: a count is a number
  Count(const Count& other) noexcept : value_(other.load()) {}
  Count& operator=(const Count& other) noexcept { return *this = other.load(); }
  Count& operator=(std::uint64_t v) noexcept {
    std::atomic_ref(value_).store(v, std::memory_order_relaxed);
    return *this;
  }
  // In code specialised on the flag.
  template <bool kThreads>
  void add(std::uint64_t v) noexcept {
    if constexpr (kThreads) {
      std::atomic_ref(value_).fetch_add(v, std::memory_order_relaxed);
    } else {
      value_ += v;
    }
  }
  Count& operator+=(std::uint64_t v) noexcept {
    if (multi_threaded()) [[unlikely]] {
      add<true>(v);
    } else {
      add<false>(v);
    }
    return *this;
  }
  Count& operator++() noexcept { return *this += 1; }
  std::uint64_t load() const noexcept { return std::atomic_ref(value_).load(std::memory_order_relaxed); }
  operator std::uint64_t() const noexcept { return load(); }  // NOLINT: reads as a number

 private:
  alignas(std::atomic_ref<std::uint64_t>::required_alignment) mutable std::uint64_t value_ = 0;
};

// A flag one thread sets, with release order, once what it guards is written, and another reads with
// acquire order without a lock (a request's completion). Copyable, so that a struct holding it is.
class ReleaseFlag {
 public:
  ReleaseFlag() = default;
  ReleaseFlag(const ReleaseFlag& other) noexcept : value_(other.load()) {}
  ReleaseFlag& operator=(const ReleaseFlag& other) noexcept {
    value_.store(other.load(), std::memory_order_relaxed);
    return *this;
  }
  ReleaseFlag& operator=(bool v) noexcept {
    value_.store(v, std::memory_order_release);
    return *this;
  }
  bool load() const noexcept { return value_.load(std::memory_order_acquire); }
  operator bool() const noexcept { return load(); }  // NOLINT: reads as a bool

 private:
  std::atomic<bool> value_{false};
};

}  // namespace ftmpi::base

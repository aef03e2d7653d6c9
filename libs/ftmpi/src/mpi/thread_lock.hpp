// MPI_THREAD_MULTIPLE: the MPI layer's lock, taken by every MPI call (api_call) only when the program
// asked for MULTIPLE, so SINGLE and FUNNELED pay one predictable branch and no atomic operation.
//
// A reader-writer lock. Point-to-point calls (sends, receives, their waits and tests, probes) take it
// shared: they only read the MPI objects (communicators, datatypes), and the engine below has locks of
// its own (a lock per peer for sends, one for receiving and progress: engine_core.hpp, "Threads"), so
// threads sending to different peers run at once. Every other call takes it exclusive: it creates or
// frees objects, or runs collectives, whose state is the MPI layer's. Writers go first (a steady stream
// of point-to-point calls cannot starve MPI_Comm_dup).
//
// A call that waits passes the lock between rounds of progress to a thread that needs it (pass), so a
// thread blocked in MPI_Recv never keeps another from creating a communicator, and every waiting thread
// makes progress for all. Re-entrant: a callback run inside an MPI call (an error handler, an attribute
// callback, a user reduction) may call MPI again, and runs under the outer call's hold.
#pragma once

namespace ftmpi::mpi {

enum class Access : unsigned char { exclusive, shared };

class ThreadLock {
 public:
  static bool enabled() noexcept { return enabled_; }
  // By MPI_Init_thread, before any other thread can call MPI.
  static void enable() noexcept { enabled_ = true; }
  static void enter(Access access) noexcept;
  static void leave() noexcept;
  // Between rounds of a wait: if another thread waits for the lock (a writer, when this thread holds it
  // shared), lets it run, then takes the lock back as it was held. Nothing when this thread does not hold
  // it or nobody waits.
  static void pass() noexcept;
  // Whether this thread holds the lock shared: progress then leaves the MPI layer's own pending work
  // (nonblocking collectives) to a thread that can take it (runtime.hpp).
  static bool held_shared() noexcept { return enabled_ && holds_shared(); }

 private:
  static bool holds_shared() noexcept;
  static inline bool enabled_ = false;
};

// Holds the lock for one MPI call when enabled.
class ThreadLockGuard {
 public:
  explicit ThreadLockGuard(Access access = Access::exclusive) noexcept : engaged_(ThreadLock::enabled()) {
    if (engaged_) [[unlikely]] ThreadLock::enter(access);
  }
  ~ThreadLockGuard() {
    if (engaged_) [[unlikely]] ThreadLock::leave();
  }
  ThreadLockGuard(const ThreadLockGuard&) = delete;
  ThreadLockGuard& operator=(const ThreadLockGuard&) = delete;

 private:
  bool engaged_;
};

}  // namespace ftmpi::mpi

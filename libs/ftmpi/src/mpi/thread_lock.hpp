// MPI_THREAD_MULTIPLE: one lock around the MPI layer and the engine, taken by every MPI call (api_call)
// only when the program asked for MULTIPLE, so SINGLE and FUNNELED pay one predictable branch and no
// atomic operation. A call that waits passes the lock between rounds of progress to a thread that wants
// it (ThreadLock::pass), so a thread blocked in MPI_Recv never keeps another from sending, and every
// waiting thread makes progress for all. Re-entrant: a callback run inside an MPI call (an error
// handler, an attribute callback, a user reduction) may call MPI again.
#pragma once

namespace ftmpi::mpi {

class ThreadLock {
 public:
  static bool enabled() noexcept { return enabled_; }
  // By MPI_Init_thread, before any other thread can call MPI.
  static void enable() noexcept { enabled_ = true; }
  static void enter() noexcept;
  static void leave() noexcept;
  // Between rounds of a wait: if another thread waits for the lock, lets it run, then takes the lock
  // back. Nothing when this thread does not hold it or nobody waits.
  static void pass() noexcept;

 private:
  static inline bool enabled_ = false;
};

// Holds the lock for one MPI call when enabled.
class ThreadLockGuard {
 public:
  ThreadLockGuard() noexcept : engaged_(ThreadLock::enabled()) {
    if (engaged_) [[unlikely]] ThreadLock::enter();
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

#include "mpi/thread_lock.hpp"

#include <pthread.h>
#include <sched.h>

#include <atomic>
#include <cstdint>

namespace ftmpi::mpi {
namespace {

// glibc's rwlock preferring writers: a reader does not join while a writer waits (std::shared_mutex
// prefers readers, and a writer could wait forever behind waits that pass the lock among readers).
struct WriterFirstLock {
  pthread_rwlock_t lock;
  WriterFirstLock() noexcept {
    pthread_rwlockattr_t attr;
    pthread_rwlockattr_init(&attr);
    pthread_rwlockattr_setkind_np(&attr, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
    pthread_rwlock_init(&lock, &attr);
    pthread_rwlockattr_destroy(&attr);
  }
};

pthread_rwlock_t* rwlock() noexcept {
  static WriterFirstLock instance;  // never destroyed before the last MPI call: static, and no destructor
  return &instance.lock;
}

std::atomic<std::uint32_t> waiting{0};          // threads blocked in acquire()
std::atomic<std::uint32_t> writers_waiting{0};  // of those, the exclusive ones
std::atomic<std::uint64_t> acquisitions{0};     // how often the lock was taken: pass() sees a hand-over
thread_local int depth = 0;                     // this thread's nesting of MPI calls
thread_local Access held = Access::exclusive;   // how this thread holds it, while depth > 0

void acquire(Access access) noexcept {
  waiting.fetch_add(1, std::memory_order_relaxed);
  if (access == Access::exclusive) {
    writers_waiting.fetch_add(1, std::memory_order_relaxed);
    pthread_rwlock_wrlock(rwlock());
    writers_waiting.fetch_sub(1, std::memory_order_relaxed);
  } else {
    pthread_rwlock_rdlock(rwlock());
  }
  waiting.fetch_sub(1, std::memory_order_relaxed);
  acquisitions.fetch_add(1, std::memory_order_relaxed);
}

}  // namespace

void ThreadLock::enter(Access access) noexcept {
  if (depth++ != 0) return;
  held = access;
  acquire(access);
}

void ThreadLock::leave() noexcept {
  if (--depth == 0) pthread_rwlock_unlock(rwlock());
}

bool ThreadLock::holds_shared() noexcept { return depth > 0 && held == Access::shared; }

// A plain unlock-lock would hand nothing over: the woken waiter needs microseconds to run, and this
// thread takes the lock back first. So after unlocking, yield until another thread has taken it (or a
// few turns passed: the waiter may have been another wait's pass that took and gave it back already).
void ThreadLock::pass() noexcept {
  if (depth == 0) return;
  // Readers share the lock already: a reader passes only to a writer.
  const auto& wanting = held == Access::shared ? writers_waiting : waiting;
  if (wanting.load(std::memory_order_relaxed) == 0) return;
  const std::uint64_t seen = acquisitions.load(std::memory_order_relaxed);
  pthread_rwlock_unlock(rwlock());
  for (int turn = 0; turn < 64 && acquisitions.load(std::memory_order_relaxed) == seen; ++turn) ::sched_yield();
  acquire(held);
}

}  // namespace ftmpi::mpi

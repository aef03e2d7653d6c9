#include "mpi/thread_lock.hpp"

#include <sched.h>

#include <atomic>
#include <cstdint>
#include <mutex>

namespace ftmpi::mpi {
namespace {

std::mutex lock;
std::atomic<std::uint32_t> waiting{0};     // threads blocked in enter()
std::atomic<std::uint64_t> acquisitions{0};  // how often the lock was taken: pass() sees a hand-over
thread_local int depth = 0;                 // this thread's nesting of MPI calls

void acquire() noexcept {
  waiting.fetch_add(1, std::memory_order_relaxed);
  lock.lock();
  waiting.fetch_sub(1, std::memory_order_relaxed);
  acquisitions.fetch_add(1, std::memory_order_relaxed);
}

}  // namespace

void ThreadLock::enter() noexcept {
  if (depth++ == 0) acquire();
}

void ThreadLock::leave() noexcept {
  if (--depth == 0) lock.unlock();
}

// A plain unlock-lock would hand nothing over: the woken waiter needs microseconds to run, and this
// thread takes the lock back first. So after unlocking, yield until another thread has taken it (or a
// few turns passed: the waiter may have been another wait's pass that took and gave it back already).
void ThreadLock::pass() noexcept {
  if (depth == 0 || waiting.load(std::memory_order_relaxed) == 0) return;
  const std::uint64_t seen = acquisitions.load(std::memory_order_relaxed);
  lock.unlock();
  for (int turn = 0; turn < 64 && acquisitions.load(std::memory_order_relaxed) == seen; ++turn) ::sched_yield();
  acquire();
}

}  // namespace ftmpi::mpi

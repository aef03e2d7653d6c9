// Pins processes to single CPUs so that a two-process benchmark measures core-to-core transfers.
#pragma once

#include <sched.h>

namespace ftmpi::bench {

// Remembers the CPUs this process may run on, and restores them when it goes.
class CpuPinning {
 public:
  CpuPinning() { ok_ = sched_getaffinity(0, sizeof original_, &original_) == 0; }
  ~CpuPinning() {
    if (ok_) sched_setaffinity(0, sizeof original_, &original_);
  }
  CpuPinning(const CpuPinning&) = delete;
  CpuPinning& operator=(const CpuPinning&) = delete;

  // Pins the calling process to the `index`-th of the remembered CPUs; false if there is none.
  bool pin(int index) const {
    for (int cpu = 0, seen = 0; ok_ && cpu < CPU_SETSIZE; ++cpu) {
      if (!CPU_ISSET(cpu, &original_) || seen++ != index) continue;
      cpu_set_t one;
      CPU_ZERO(&one);
      CPU_SET(cpu, &one);
      return sched_setaffinity(0, sizeof one, &one) == 0;
    }
    return false;
  }

 private:
  cpu_set_t original_{};
  bool ok_ = false;
};

}  // namespace ftmpi::bench

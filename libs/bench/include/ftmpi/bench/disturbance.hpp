// A benchmark on a shared or virtual machine is disturbed by two things, and a disturbed run is
// repeated (as scripts/compare-mpi.sh did, docs/benchmarks.md):
// - other work: while a run goes on, a sampler counts the samples in which more tasks were runnable
//   than the job's ranks and the sampler; more than a tenth is disturbed;
// - the host: on a VM the time a cache line takes between two cores jumps (35 ns to 100+ ns) when the
//   hypervisor moves the virtual CPUs, and every MPI's latency with it for seconds. A probe before and
//   after each run measures it; 1.5 times the best seen so far is disturbed.
#pragma once

#include <atomic>
#include <functional>
#include <string>
#include <thread>
#include <vector>

namespace ftmpi::bench {

// The one-way time of a cache line between the first two CPUs this process may use, in ns (the median
// of a few repetitions of a ping-pong of two pinned threads); 0 when it may use only one CPU.
double cacheline_ns();

// Samples /proc/loadavg's runnable count every 50 ms from start() to stop().
class RunnableSampler {
 public:
  explicit RunnableSampler(int limit) : limit_(limit) {}
  ~RunnableSampler() { stop(); }
  void start();
  void stop();
  int samples() const { return samples_.load(); }
  int busy() const { return busy_.load(); }  // samples with more than `limit` runnable tasks

 private:
  int limit_;
  std::atomic<bool> running_{false};
  std::atomic<int> samples_{0}, busy_{0};
  std::thread thread_;
};

// What one run looked like.
struct RunConditions {
  int samples = 0, busy = 0;
  double probe_before_ns = 0, probe_after_ns = 0;
};
struct Verdict {
  bool others_busy = false;  // more than a tenth of the samples saw other work
  bool host_slow = false;    // a probe took more than 1.5 times the best
  bool disturbed() const { return others_busy || host_slow; }
  std::string why;  // "other tasks runnable in 4 of 20 samples", "cache line 96 ns (best 35 ns)"
};
Verdict judge(const RunConditions& run, double best_probe_ns);

// Runs measurements, each again when disturbed: at most twice more, or five times more while the host
// is slow (that state lasts up to a minute), pausing between attempts. Keeps the account for the report.
class DisturbanceWatch {
 public:
  // `probe` measures the host (cacheline_ns by default; tests give their own); `pause_ms` between attempts.
  explicit DisturbanceWatch(std::function<double()> probe = cacheline_ns, int pause_ms = 2000);
  // Runs `run` (true when it succeeded: a failed run is not repeated) for a job of `ranks` ranks;
  // `note` hears why a run is repeated.
  bool measure(int ranks, const std::function<bool()>& run, const std::function<void(const std::string&)>& note);

  int runs() const { return runs_; }
  int repeated() const { return repeated_; }
  int kept_disturbed() const { return kept_disturbed_; }  // kept although still disturbed (out of attempts)
  int samples() const { return samples_; }
  int busy() const { return busy_; }
  const std::vector<double>& probes() const { return probes_; }  // of the runs kept, before and after
  std::string summary() const;  // one line for the report

 private:
  std::function<double()> probe_;
  int pause_ms_;
  double best_ = 0;
  int runs_ = 0, repeated_ = 0, kept_disturbed_ = 0, samples_ = 0, busy_ = 0;
  std::vector<double> probes_;
};

}  // namespace ftmpi::bench

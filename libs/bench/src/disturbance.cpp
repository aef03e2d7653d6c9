#include "ftmpi/bench/disturbance.hpp"

#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>

#include "ftmpi/bench/results.hpp"

namespace ftmpi::bench {

namespace {

using Clock = std::chrono::steady_clock;

void pin_to(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  pthread_setaffinity_np(pthread_self(), sizeof set, &set);
}

}  // namespace

double cacheline_ns() {
  cpu_set_t allowed;
  if (sched_getaffinity(0, sizeof allowed, &allowed) != 0) return 0;
  int cpus[2], found = 0;
  for (int c = 0; c < CPU_SETSIZE && found < 2; ++c) {
    if (CPU_ISSET(c, &allowed)) cpus[found++] = c;
  }
  if (found < 2) return 0;
  // Two threads of their own, pinned, so that this process's own affinity (inherited by the jobs it
  // starts) is left alone. Short: it runs around every measurement.
  constexpr long kIters = 50000;
  constexpr int kReps = 5;
  alignas(128) std::atomic<long> line{0};
  std::thread pong([&] {
    pin_to(cpus[1]);
    for (long i = 1; i < kIters * 2 * (kReps + 1); i += 2) {
      while (line.load(std::memory_order_acquire) != i) {
      }
      line.store(i + 1, std::memory_order_release);
    }
  });
  std::vector<double> ns;
  std::thread ping([&] {
    pin_to(cpus[0]);
    long v = 0;
    for (int r = 0; r < kReps + 1; ++r) {  // the first repetition warms up
      const auto t0 = Clock::now();
      for (long i = 0; i < kIters; ++i) {
        line.store(++v, std::memory_order_release);
        ++v;
        while (line.load(std::memory_order_acquire) != v) {
        }
      }
      const double elapsed = std::chrono::duration<double, std::nano>(Clock::now() - t0).count();
      if (r > 0) ns.push_back(elapsed / kIters / 2);
    }
  });
  ping.join();
  pong.join();
  return median(ns);
}

void RunnableSampler::start() {
  stop();
  samples_ = 0;
  busy_ = 0;
  running_ = true;
  thread_ = std::thread([this] {
    while (running_.load()) {
      // The fourth field of /proc/loadavg: runnable tasks / all tasks (the sampler is one of them).
      std::ifstream in("/proc/loadavg");
      double a = 0, b = 0, c = 0;
      int runnable = 0;
      char slash = 0;
      if (in >> a >> b >> c >> runnable >> slash) {
        ++samples_;
        if (runnable > limit_) ++busy_;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  });
}

void RunnableSampler::stop() {
  running_ = false;
  if (thread_.joinable()) thread_.join();
}

Verdict judge(const RunConditions& run, double best_probe_ns) {
  Verdict v;
  v.others_busy = run.samples > 0 && run.busy * 10 > run.samples;
  const double slowest = std::max(run.probe_before_ns, run.probe_after_ns);
  v.host_slow = best_probe_ns > 0 && slowest > 1.5 * best_probe_ns;
  char buf[160];
  if (v.others_busy) {
    std::snprintf(buf, sizeof buf, "other tasks runnable in %d of %d samples", run.busy, run.samples);
    v.why = buf;
  }
  if (v.host_slow) {
    std::snprintf(buf, sizeof buf, "a cache line took %.0f ns between the cores (best %.0f ns)", slowest, best_probe_ns);
    v.why += (v.why.empty() ? "" : "; ") + std::string(buf);
  }
  return v;
}

DisturbanceWatch::DisturbanceWatch(std::function<double()> probe, int pause_ms)
    : probe_(std::move(probe)), pause_ms_(pause_ms) {}

bool DisturbanceWatch::measure(int ranks, const std::function<bool()>& run,
                               const std::function<void(const std::string&)>& note) {
  int last = 3;
  for (int attempt = 1;; ++attempt) {
    RunConditions c;
    c.probe_before_ns = probe_ ? probe_() : 0;
    RunnableSampler sampler(ranks + 1);  // the ranks and the sampler itself
    sampler.start();
    const bool ok = run();
    sampler.stop();
    c.samples = sampler.samples();
    c.busy = sampler.busy();
    c.probe_after_ns = probe_ ? probe_() : 0;
    for (double p : {c.probe_before_ns, c.probe_after_ns}) {
      if (p > 0 && (best_ == 0 || p < best_)) best_ = p;
    }
    const Verdict v = judge(c, best_);
    if (v.host_slow) last = 6;
    if (!ok || !v.disturbed() || attempt >= last) {
      ++runs_;
      samples_ += c.samples;
      busy_ += c.busy;
      if (ok && v.disturbed()) ++kept_disturbed_;
      for (double p : {c.probe_before_ns, c.probe_after_ns}) {
        if (p > 0) probes_.push_back(p);
      }
      return ok;
    }
    ++repeated_;
    if (note) note("disturbed (" + v.why + "): repeating it");
    std::this_thread::sleep_for(std::chrono::milliseconds(v.host_slow ? pause_ms_ * 2 : pause_ms_));
  }
}

std::string DisturbanceWatch::summary() const {
  char buf[320];
  std::vector<double> p = probes_;
  std::sort(p.begin(), p.end());
  const int n = std::snprintf(buf, sizeof buf, "%d runs; other tasks runnable in %d of %d samples; %d disturbed runs repeated, %d kept still disturbed",
                              runs_, busy_, samples_, repeated_, kept_disturbed_);
  std::string text(buf, static_cast<std::size_t>(std::max(n, 0)));
  if (!p.empty()) {
    std::snprintf(buf, sizeof buf, "; a cache line took %.0f ns between the cores (median; %.0f to %.0f)", median(p), p.front(), p.back());
    text += buf;
  }
  return text;
}

}  // namespace ftmpi::bench

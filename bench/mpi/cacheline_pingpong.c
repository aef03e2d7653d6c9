/* cacheline_pingpong: the floor under any shared-memory MPI latency on this machine -- the one-way time of
 * a cache line moving between two cores. Two threads pinned to the first two CPUs this process may use
 * bounce a counter in one cache line; the result is half the round trip, median of several repetitions.
 *
 *   cc -O2 -pthread cacheline_pingpong.c -o cacheline_pingpong && ./cacheline_pingpong
 *
 * Prints `cacheline <ns>`. On a VM the figure moves when the hypervisor moves the virtual CPUs (same
 * core's SMT siblings, same L3, different L3), and every MPI's small-message latency moves with it, which
 * is why scripts/compare-mpi.sh prints it beside its table.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

enum { ITERS = 200000, REPS = 7 };

static _Alignas(128) _Atomic long line;
static int cpus[2];

static void pin(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  if (pthread_setaffinity_np(pthread_self(), sizeof set, &set) != 0) {
    fprintf(stderr, "cacheline_pingpong: cannot pin to cpu %d\n", cpu);
    exit(1);
  }
}

/* The responder: waits for each odd value and answers with the next even one. */
static void *pong(void *arg) {
  (void)arg;
  pin(cpus[1]);
  for (long i = 1; i < (long)ITERS * 2 * (REPS + 1); i += 2) {
    while (atomic_load_explicit(&line, memory_order_acquire) != i) {
    }
    atomic_store_explicit(&line, i + 1, memory_order_release);
  }
  return NULL;
}

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

int main(void) {
  cpu_set_t allowed;
  if (sched_getaffinity(0, sizeof allowed, &allowed) != 0) return 1;
  int found = 0;
  for (int c = 0; c < CPU_SETSIZE && found < 2; ++c)
    if (CPU_ISSET(c, &allowed)) cpus[found++] = c;
  if (found < 2) {
    fprintf(stderr, "cacheline_pingpong: needs two CPUs\n");
    return 1;
  }
  pin(cpus[0]);
  pthread_t t;
  pthread_create(&t, NULL, pong, NULL);
  double ns[REPS];
  long v = 0;
  for (int r = 0; r < REPS + 1; ++r) {  /* the first repetition warms up */
    double t0 = now();
    for (int i = 0; i < ITERS; ++i) {
      atomic_store_explicit(&line, ++v, memory_order_release);
      ++v;
      while (atomic_load_explicit(&line, memory_order_acquire) != v) {
      }
    }
    if (r > 0) ns[r - 1] = (now() - t0) * 1e9 / ITERS / 2;
  }
  pthread_join(t, NULL);
  qsort(ns, REPS, sizeof ns[0], cmp);
  printf("cacheline %.1f\n", ns[REPS / 2]);
  return 0;
}

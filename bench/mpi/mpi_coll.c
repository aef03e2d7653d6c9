/* mpi_coll: the latency of MPI_Barrier, MPI_Bcast and MPI_Allreduce on any number of ranks.
 *
 * Written against the standard MPI C API only, so the same file builds with ftmpi's ftcc, Open MPI's mpicc
 * and MPICH's mpicc:
 *
 *   ftcc -O2 mpi_coll.c -o coll && ftrun -n 4 ./coll
 *   mpicc.openmpi -O2 mpi_coll.c -o coll && mpirun.openmpi -np 4 --oversubscribe ./coll
 *   mpicc.mpich -O2 mpi_coll.c -o coll && mpiexec.mpich -n 4 ./coll
 *
 * The method is the OSU Micro-Benchmarks' (osu_barrier, osu_bcast, osu_allreduce):
 * - barrier: each rank times a loop of MPI_Barrier and divides by the iterations;
 * - bcast (MPI_BYTE, always from root 0, as OSU) and allreduce (MPI_SUM on MPI_DOUBLE, so 8 B, 64 KB and
 *   1 MB are exactly 1, 8192 and 131072 elements; separate send and receive buffers): each rank times each
 *   call alone and sums the times; an MPI_Barrier outside the timed region separates the calls, so a fast
 *   root cannot race ahead into the next broadcast;
 * - a repetition's figure is the average over the ranks of each rank's mean time per call (OSU's "Avg
 *   Latency"); the minimum and maximum over the ranks go into the human table;
 * - each figure is the median of -r repetitions, each after an MPI_Barrier, after a warm-up of a tenth of
 *   the iterations (at least 10).
 * Iterations: 1000 for the barrier and up to 8 KB, then 64 MB worth (64 KB: 1000, 1 MB: 64), times -t;
 * but when the faster of the first two groups of 5 warm-up calls shows that a repetition would take
 * longer than -T seconds (default 0.2), fewer, never below 10: on more ranks than cores an MPI whose
 * waiting ranks spin without yielding takes a scheduler time slice (milliseconds) per call, and the run
 * must still end in seconds. Rank 0 decides and broadcasts the count, so every rank runs the same. -T 0
 * keeps the fixed counts.
 *
 * Data are checked during warm-up: bcast receivers clear their buffer before every call and check the
 * root's pattern, which changes with every call; allreduce ranks contribute small integers that change with
 * every call and with the rank (exact in a double whatever the order of the sum), clear the result buffer
 * and check the sum. -c checks the timed loops too (the fill and the check stay outside the timed region
 * but leave the buffers in cache), -n checks nothing. A failed check prints `DATA ERRORS` and every rank
 * exits 1.
 *
 * Output (rank 0, stdout): machine-readable lines `barrier 0 <usec>`, `bcast <bytes> <usec>` and
 * `allreduce <bytes> <usec>`, then a human table whose lines start with '#', as do the lines that describe
 * the run.
 */
#define _GNU_SOURCE
#include <mpi.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { MAX_REPS = 101, MIN_ITERS = 10, PROBE_ITERS = 5 };
enum { OP_BARRIER = 1, OP_BCAST = 2, OP_ALLREDUCE = 4 };

static const int sizes[] = {8, 65536, 1 << 20};
#define COUNT(a) ((int)(sizeof(a) / sizeof((a)[0])))

static struct {
  int reps;       /* repetitions per size; the median is reported */
  double scale;   /* multiplies every iteration count */
  double budget;  /* seconds one repetition should take at most (0: fixed counts) */
  int check;      /* 0 = never, 1 = warm-up only, 2 = warm-up and timed loops */
  int only;       /* > 0: bcast and allreduce of this one size instead of the list */
  int ops;        /* OP_* bits */
} opt = {5, 1.0, 0.2, 1, -1, OP_BARRIER | OP_BCAST | OP_ALLREDUCE};

static int rank, nranks;

#define BENCH_NAME "mpi_coll"
#include "bench_common.h"
static long errors;

/* Bcast: the byte at offset k of the broadcast with this seed. Depends on the seed, so stale data is
 * caught. */
static inline unsigned char pattern(unsigned seed, size_t k) {
  return (unsigned char)(seed * 167u + k * 7u + (k >> 8) * 13u + 1u);
}

/* Allreduce: what rank r contributes at element k. Below 2^16, so any sum over ranks is exact. */
static inline double contribution(unsigned seed, size_t k, int r) {
  return (double)((seed * 131u + (unsigned)k * 7u + (unsigned)r * 1031u + (unsigned)(k >> 9)) & 0xffffu);
}

static void report_error(const char *fmt_what, size_t bytes, size_t k, double got, double want) {
  if (errors++ < 5)
    fprintf(stderr, "mpi_coll: rank %d: %s of %zu bytes: element %zu is %g, expected %g\n", rank, fmt_what,
            bytes, k, got, want);
}

static void bcast_prepare(unsigned char *buf, size_t n, unsigned seed) {
  if (rank == 0) {
    for (size_t k = 0; k < n; ++k) buf[k] = pattern(seed, k);
  } else {
    memset(buf, 0, n);
  }
}

static void bcast_verify(const unsigned char *buf, size_t n, unsigned seed) {
  if (rank == 0) return;
  for (size_t k = 0; k < n; ++k) {
    if (buf[k] != pattern(seed, k)) {
      report_error("bcast", n, k, buf[k], pattern(seed, k));
      return;
    }
  }
}

static void allreduce_prepare(double *in, double *out, size_t count, unsigned seed) {
  for (size_t k = 0; k < count; ++k) in[k] = contribution(seed, k, rank), out[k] = -1.0;
}

static void allreduce_verify(const double *out, size_t count, unsigned seed) {
  for (size_t k = 0; k < count; ++k) {
    double want = 0;
    for (int r = 0; r < nranks; ++r) want += contribution(seed, k, r);
    if (out[k] != want) {
      report_error("allreduce", count * sizeof(double), k, out[k], want);
      return;
    }
  }
}

/* n calls of `op` on `bytes`; returns this rank's mean seconds per call. *wall gets the seconds the whole
 * loop took (calls and the barriers between them), which sizes the timed loops. */
static double run(int op, unsigned char *a, unsigned char *b, int bytes, int n, int check, unsigned *seed,
                  double *wall) {
  double total = 0;
  MPI_Barrier(MPI_COMM_WORLD);
  double start = MPI_Wtime();
  if (op == OP_BARRIER) {
    for (int i = 0; i < n; ++i) MPI_Barrier(MPI_COMM_WORLD);
    total = MPI_Wtime() - start;
  } else if (op == OP_BCAST) {
    for (int i = 0; i < n; ++i) {
      if (check) bcast_prepare(a, (size_t)bytes, *seed);
      double t0 = MPI_Wtime();
      MPI_Bcast(a, bytes, MPI_BYTE, 0, MPI_COMM_WORLD);
      total += MPI_Wtime() - t0;
      if (check) bcast_verify(a, (size_t)bytes, *seed);
      *seed += 1;
      MPI_Barrier(MPI_COMM_WORLD);
    }
  } else {
    size_t count = (size_t)bytes / sizeof(double);
    double *in = (double *)(void *)a, *out = (double *)(void *)b;
    for (int i = 0; i < n; ++i) {
      if (check) allreduce_prepare(in, out, count, *seed);
      double t0 = MPI_Wtime();
      MPI_Allreduce(in, out, (int)count, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
      total += MPI_Wtime() - t0;
      if (check) allreduce_verify(out, count, *seed);
      *seed += 1;
      MPI_Barrier(MPI_COMM_WORLD);
    }
  }
  if (wall) *wall = MPI_Wtime() - start;
  return total / n;
}

static const char *op_name(int op) {
  return op == OP_BARRIER ? "barrier" : op == OP_BCAST ? "bcast" : "allreduce";
}

static void usage(const char *argv0) {
  printf("usage: %s [-r reps] [-t scale] [-T seconds] [-s bytes] [-c | -n] [-o barrier,bcast,allreduce]\n"
         "  -r N    repetitions per size, the median is reported (default 5)\n"
         "  -t X    multiply every iteration count by X (default 1)\n"
         "  -T S    fewer iterations when a repetition would take longer than S seconds (default 0.2;\n"
         "          0: fixed iteration counts)\n"
         "  -s N    bcast and allreduce of N bytes only (a multiple of 8; default 8, 65536, 1048576)\n"
         "  -c      check the data in the timed loops too (default: during warm-up only)\n"
         "  -n      check nothing\n"
         "  -o L    the operations to measure, comma-separated (default barrier,bcast,allreduce)\n",
         argv0);
}

static int parse_ops(const char *list) {
  int ops = 0;
  char buf[128];
  snprintf(buf, sizeof buf, "%s", list);
  for (char *save = NULL, *w = strtok_r(buf, ",", &save); w; w = strtok_r(NULL, ",", &save)) {
    if (!strcmp(w, "barrier")) ops |= OP_BARRIER;
    else if (!strcmp(w, "bcast")) ops |= OP_BCAST;
    else if (!strcmp(w, "allreduce")) ops |= OP_ALLREDUCE;
    else return -1;
  }
  return ops;
}

static void parse(int argc, char **argv) {
  for (int i = 1; i < argc; ++i) {
    const char *a = argv[i];
    const char *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (!strcmp(a, "-r") && v) opt.reps = atoi(v), ++i;
    else if (!strcmp(a, "-t") && v) opt.scale = atof(v), ++i;
    else if (!strcmp(a, "-T") && v) opt.budget = atof(v), ++i;
    else if (!strcmp(a, "-s") && v) opt.only = atoi(v), ++i;
    else if (!strcmp(a, "-o") && v) opt.ops = parse_ops(v), ++i;
    else if (!strcmp(a, "-c")) opt.check = 2;
    else if (!strcmp(a, "-n")) opt.check = 0;
    else {
      if (rank == 0) usage(argv[0]);
      MPI_Finalize();
      exit(strcmp(a, "-h") && strcmp(a, "--help") ? 2 : 0);
    }
  }
  if (opt.reps < 1 || opt.reps > MAX_REPS || opt.scale <= 0 || opt.budget < 0 || opt.ops <= 0 ||
      (opt.only != -1 && (opt.only <= 0 || opt.only % 8 != 0))) {
    if (rank == 0)
      fprintf(stderr, "mpi_coll: option out of range (reps 1..%d, -s a positive multiple of 8, -o %s)\n",
              MAX_REPS, "barrier,bcast,allreduce");
    MPI_Finalize();
    exit(2);
  }
}

enum { MAX_ROWS = 1 + 2 * COUNT(sizes) };
struct row {
  int op, bytes, iters;
  double avg, min, max;  /* microseconds: medians over the repetitions */
};

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nranks);
  parse(argc, argv);

  /* Where each rank runs: the CPU now and how many CPUs it may use (1 = bound). */
  cpu_set_t set;
  int info[2] = {sched_getcpu(), sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : -1};
  int *all_info = rank == 0 ? malloc(sizeof info * (size_t)nranks) : NULL;
  MPI_Gather(info, 2, MPI_INT, all_info, 2, MPI_INT, 0, MPI_COMM_WORLD);

  int list[COUNT(sizes)], nsizes = 0;
  if (opt.only > 0) list[nsizes++] = opt.only;
  else
    for (int s = 0; s < COUNT(sizes); ++s) list[nsizes++] = sizes[s];
  int max_bytes = 8;
  for (int s = 0; s < nsizes; ++s)
    if (list[s] > max_bytes) max_bytes = list[s];
  unsigned char *a = xalloc((size_t)max_bytes), *b = xalloc((size_t)max_bytes);

  if (rank == 0) {
    char lib[256];
    char host[MPI_MAX_PROCESSOR_NAME];
    int hlen = 0;
    library_name(lib, sizeof lib);
    MPI_Get_processor_name(host, &hlen);
    printf("# mpi_coll: %s on %s, %d ranks\n#", lib, host, nranks);
    for (int r = 0; r < nranks; ++r)
      printf(" rank %d on cpu %d (%d allowed)%s", r, all_info[2 * r], all_info[2 * r + 1],
             r + 1 < nranks ? "," : "\n");
    printf("# median of %d repetitions of the average over ranks; bcast from root 0; allreduce MPI_SUM on "
           "MPI_DOUBLE; data checked %s\n",
           opt.reps, opt.check == 0 ? "never" : opt.check == 1 ? "during warm-up" : "always");
    fflush(stdout);
  }
  free(all_info);

  struct row rows[MAX_ROWS];
  int nrows = 0;
  unsigned seed = 1;
  double avg[MAX_REPS] = {0}, mins[MAX_REPS] = {0}, maxs[MAX_REPS] = {0};
  double *means = rank == 0 ? malloc(sizeof(double) * (size_t)nranks) : NULL;
  const int ops[] = {OP_BARRIER, OP_BCAST, OP_ALLREDUCE};
  for (int o = 0; o < COUNT(ops); ++o) {
    int op = ops[o];
    if (!(opt.ops & op)) continue;
    for (int s = 0; s < (op == OP_BARRIER ? 1 : nsizes); ++s) {
      int bytes = op == OP_BARRIER ? 0 : list[s];
      double base = bytes <= 8192 ? 1000 : 64.0 * 1024 * 1024 / bytes;
      int iters = clampi(opt.scale * (base < 1000 ? base : 1000), 1, 1000000);
      int warm = iters / 10 > 2 * PROBE_ITERS ? iters / 10 : 2 * PROBE_ITERS;
      /* The first two groups of warm-up calls size the timed loops: the faster of the two, since the first
       * calls of an operation may set things up (the check in them only overestimates the time). */
      double wall = 0, wall2 = 0;
      run(op, a, b, bytes, PROBE_ITERS, opt.check >= 1, &seed, &wall);
      run(op, a, b, bytes, PROBE_ITERS, opt.check >= 1, &seed, &wall2);
      if (opt.budget > 0) {
        double per_call = (wall2 < wall ? wall2 : wall) / PROBE_ITERS;
        if (rank == 0 && per_call * iters > opt.budget)
          iters = clampi(opt.budget / per_call, MIN_ITERS < iters ? MIN_ITERS : iters, iters);
        MPI_Bcast(&iters, 1, MPI_INT, 0, MPI_COMM_WORLD);
        warm = iters / 10 > 2 * PROBE_ITERS ? iters / 10 : 2 * PROBE_ITERS;
      }
      if (warm > 2 * PROBE_ITERS) run(op, a, b, bytes, warm - 2 * PROBE_ITERS, opt.check >= 1, &seed, NULL);
      for (int r = 0; r < opt.reps; ++r) {
        /* One collective (a gather) per repetition to collect the ranks' means: on shared cores every
         * call costs. */
        double mine = run(op, a, b, bytes, iters, opt.check >= 2, &seed, NULL) * 1e6;
        MPI_Gather(&mine, 1, MPI_DOUBLE, means, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
        if (rank == 0) {
          double sum = 0, lo = means[0], hi = means[0];
          for (int k = 0; k < nranks; ++k) {
            sum += means[k];
            if (means[k] < lo) lo = means[k];
            if (means[k] > hi) hi = means[k];
          }
          avg[r] = sum / nranks, mins[r] = lo, maxs[r] = hi;
        }
      }
      struct row *row = &rows[nrows++];
      row->op = op, row->bytes = bytes, row->iters = iters;
      row->avg = median(avg, opt.reps), row->min = median(mins, opt.reps), row->max = median(maxs, opt.reps);
      if (rank == 0) printf("%s %d %.3f\n", op_name(op), bytes, row->avg), fflush(stdout);
    }
  }

  free(means);
  long total_errors = 0;
  MPI_Allreduce(&errors, &total_errors, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) {
    char label[32];
    printf("#\n# %-10s %-8s %12s %12s %12s %10s\n", "operation", "size", "avg (us)", "min (us)", "max (us)",
           "iterations");
    for (int i = 0; i < nrows; ++i) {
      fmt_size(label, sizeof label, rows[i].bytes);
      printf("# %-10s %-8s %12.3f %12.3f %12.3f %10d\n", op_name(rows[i].op),
             rows[i].op == OP_BARRIER ? "-" : label, rows[i].avg, rows[i].min, rows[i].max, rows[i].iters);
    }
    if (total_errors) printf("# DATA ERRORS: %ld over all ranks (the first are on stderr)\n", total_errors);
    else if (opt.check) printf("# data checks passed\n");
    fflush(stdout);
  }
  MPI_Finalize();
  return total_errors ? 1 : 0;
}

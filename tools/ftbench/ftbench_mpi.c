/* ftbench-mpi: the kernels ftbench measures (docs/ftbench.md), as one MPI program. Standard C and the
 * standard MPI C API only, so that the same file builds with ftmpi's ftcc and with another MPI's mpicc
 * (ftbench --against compiles it with mpicc.openmpi and mpicc.mpich).
 *
 *   lat        ping-pong between ranks 0 and 1: half the round trip, in microseconds (each side sends from
 *              a buffer the loop never writes: osu_latency's method)
 *   bw         rank 0 streams windows of --window messages to rank 1, each window acknowledged: MB/s
 *              (one send buffer, one receive buffer for the whole window: osu_bw's method)
 *   bibw       both directions at once: MB/s of both together
 *   rate       as bw, counted in messages per second (millions)
 *   barrier    MPI_Barrier over every rank, microseconds (its size is ignored: measured once)
 *   bcast      MPI_Bcast from rank 0, microseconds per call
 *   allreduce  MPI_Allreduce of floats (MPI_SUM), microseconds per call
 *   alltoall   MPI_Alltoall, SIZE bytes to every rank, microseconds per call
 *
 * Every figure is the median of --reps repetitions (default 5), each after a barrier that lines the
 * ranks up; a repetition runs enough iterations to last (10000 up to 4 KB, 64 MB worth above, at least
 * 10; bandwidth 256 MB worth, at least 3 windows; all times --scale), after a tenth as many to warm up,
 * but no more than --max-time seconds' worth (default 1) as the warm-up measured it: an MPI whose ranks
 * spin on shared cores takes milliseconds per collective, and its figure must not take an hour.
 * The first warm-up message of each size is checked byte for byte (a benchmark of wrong data is no
 * benchmark).
 *
 * Output (rank 0, stdout): a Markdown table per kernel, or with --json one JSON object per line:
 *   {"kernel": "lat", "bytes": 0, "value": 1.23, "unit": "us", "ranks": 2, "reps": 5, "library": "..."}
 * Errors (unknown kernel, bad sizes, fewer than 2 ranks): one line on stderr, exit status 2.
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BENCH_NAME "ftbench"
static int rank, nranks;
#include "bench_common.h"  /* bench/mpi: found with -I, in-tree and when a peer MPI builds it */

enum { TAG_DATA = 1, TAG_ACK = 2, MAX_SIZES = 64, MAX_REPS = 101, MAX_WINDOW = 1024 };

static const char *const kKernels[] = {"lat", "bw", "bibw", "rate", "barrier", "bcast", "allreduce", "alltoall"};
#define NKERNELS ((int)(sizeof kKernels / sizeof kKernels[0]))

static struct {
  int kernels[NKERNELS];  /* which to run, in this order */
  int nkernels;
  long sizes[MAX_SIZES];
  int nsizes;
  int reps;
  double scale;
  int window;
  double max_time;  /* seconds per repetition at most (estimated from the warm-up); 0: no limit */
  int json;
} opt;

static int fail_usage(const char *what, const char *value) {
  if (rank == 0) fprintf(stderr, "ftbench: %s '%s' (see ftbench --help)\n", what, value);
  MPI_Finalize();
  exit(2);
}

/* "0", "8k", "4m", "1g": bytes, binary units; -1 when it is not a size. */
static long parse_size(const char *text) {
  char *end = NULL;
  long v = strtol(text, &end, 10);
  if (end == text || v < 0) return -1;
  long unit = 1;
  if (*end == 'k' || *end == 'K') unit = 1L << 10, ++end;
  else if (*end == 'm' || *end == 'M') unit = 1L << 20, ++end;
  else if (*end == 'g' || *end == 'G') unit = 1L << 30, ++end;
  if (*end == 'b' || *end == 'B') ++end;
  if (*end != '\0' || v > (1L << 30) / unit) return -1;
  return v * unit;
}

/* "A:B" (0, then powers of two from 1 up to B), or a comma list "0,8k,1m". */
static void parse_sizes(const char *text) {
  char buf[512];
  snprintf(buf, sizeof buf, "%s", text);
  opt.nsizes = 0;
  char *colon = strchr(buf, ':');
  if (colon != NULL) {
    *colon = '\0';
    long lo = parse_size(buf), hi = parse_size(colon + 1);
    if (lo < 0 || hi < 0 || hi < lo) fail_usage("--sizes: not A:B with A <= B", text);
    if (lo == 0) opt.sizes[opt.nsizes++] = 0;
    for (long s = 1; s <= hi && opt.nsizes < MAX_SIZES; s *= 2)
      if (s >= lo) opt.sizes[opt.nsizes++] = s;
    return;
  }
  for (char *item = strtok(buf, ","); item != NULL; item = strtok(NULL, ",")) {
    long s = parse_size(item);
    if (s < 0) fail_usage("--sizes: not a size (0, 8k, 4m)", item);
    if (opt.nsizes == MAX_SIZES) fail_usage("--sizes: more than 64 sizes in", text);
    opt.sizes[opt.nsizes++] = s;
  }
  if (opt.nsizes == 0) fail_usage("--sizes: no size in", text);
}

static void parse_kernels(const char *text) {
  char buf[256];
  snprintf(buf, sizeof buf, "%s", text);
  opt.nkernels = 0;
  for (char *item = strtok(buf, ","); item != NULL; item = strtok(NULL, ",")) {
    int k = 0;
    while (k < NKERNELS && strcmp(kKernels[k], item) != 0) ++k;
    if (k == NKERNELS) fail_usage("--kernels: unknown kernel (lat, bw, bibw, rate, barrier, bcast, allreduce, alltoall)", item);
    opt.kernels[opt.nkernels++] = k;
  }
}

static void usage(void) {
  if (rank != 0) return;
  printf("usage: ftbench-mpi [--kernels LIST] [--sizes A:B|LIST] [--reps N] [--scale X] [--window N] [--max-time S] [--json]\n"
         "  --kernels  lat,bw,bibw,rate,barrier,bcast,allreduce,alltoall (default lat,bw)\n"
         "  --sizes    0:4m (0, then powers of two; the default) or a list such as 0,8k,1m\n"
         "  --reps     repetitions, the median is reported (default 5)\n"
         "  --scale    multiplies every iteration count (default 1; 0.01 for a quick look)\n"
         "  --window   messages in flight per bandwidth iteration (default 64)\n"
         "  --max-time at most this many seconds per repetition, fewer iterations if needed (default 1; 0: no limit)\n"
         "  --json     one JSON object per line instead of tables\n");
}

static void parse(int argc, char **argv) {
  opt.reps = 5, opt.scale = 1.0, opt.window = 64, opt.max_time = 1.0;
  parse_kernels("lat,bw");
  parse_sizes("0:4m");
  for (int i = 1; i < argc; ++i) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (!strcmp(a, "--json")) opt.json = 1;
    else if (!strcmp(a, "-h") || !strcmp(a, "--help")) usage(), MPI_Finalize(), exit(0);
    else if (v == NULL) fail_usage("unknown option or missing value", a);
    else if (!strcmp(a, "--kernels")) parse_kernels(v), ++i;
    else if (!strcmp(a, "--sizes")) parse_sizes(v), ++i;
    else if (!strcmp(a, "--reps")) opt.reps = atoi(v), ++i;
    else if (!strcmp(a, "--scale")) opt.scale = atof(v), ++i;
    else if (!strcmp(a, "--window")) opt.window = atoi(v), ++i;
    else if (!strcmp(a, "--max-time")) opt.max_time = atof(v), ++i;
    else fail_usage("unknown option", a);
  }
  if (opt.reps < 1 || opt.reps > MAX_REPS) fail_usage("--reps: not from 1 to 101:", argv[0]);
  if (!(opt.scale > 0)) fail_usage("--scale: not above 0:", argv[0]);
  if (opt.window < 1 || opt.window > MAX_WINDOW) fail_usage("--window: not from 1 to 1024:", argv[0]);
  if (!(opt.max_time >= 0)) fail_usage("--max-time: not 0 or more:", argv[0]);
}

static long max_size(void) {
  long m = 0;
  for (int i = 0; i < opt.nsizes; ++i) m = opt.sizes[i] > m ? opt.sizes[i] : m;
  return m;
}

/* Iterations of one repetition: `per_byte_budget` bytes worth above 4 KB, `small` below. */
static int iterations(long size, double small, double budget, int least) {
  double n = size <= 4096 ? small : budget / (double)(size > 0 ? size : 1);
  return clampi(n * opt.scale, least, 1 << 24);
}

static unsigned char *sbuf, *rbuf;
static float *fsend, *frecv;

static void check_bytes(const unsigned char *got, long n, unsigned char seed, const char *what) {
  for (long k = 0; k < n; ++k) {
    if (got[k] != (unsigned char)(seed + k * 7)) {
      char line[160];
      snprintf(line, sizeof line, "%s: byte %ld of %ld arrived wrong", what, k, n);
      die(line);
    }
  }
}

/* One timed loop of `n` iterations of kernel k at `size`; seconds on rank 0. */
static double run(int k, long size, int n, int check) {
  const int peer = 1 - rank, in_pair = rank < 2;
  const int w = opt.window;
  MPI_Request req[2 * MAX_WINDOW];
  int ack = 0, count = (int)size;
  MPI_Barrier(MPI_COMM_WORLD);
  double t0 = MPI_Wtime();
  for (int i = 0; i < n; ++i) {
    const char *name = kKernels[k];
    if (!strcmp(name, "lat") && in_pair) {
      /* Each side sends from its send buffer, never written in the loop, as osu_latency does: a reply
       * sent from the buffer just received into would cost the other core a fetch of modified lines. */
      if (check) for (long b = 0; b < size; ++b) sbuf[b] = (unsigned char)(3 + b * 7);
      if (rank == 0) {
        MPI_Send(sbuf, count, MPI_BYTE, peer, TAG_DATA, MPI_COMM_WORLD);
        MPI_Recv(rbuf, count, MPI_BYTE, peer, TAG_DATA, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      } else {
        MPI_Recv(rbuf, count, MPI_BYTE, peer, TAG_DATA, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Send(sbuf, count, MPI_BYTE, peer, TAG_DATA, MPI_COMM_WORLD);
      }
      if (check) check_bytes(rbuf, size, 3, "lat");
    } else if ((!strcmp(name, "bw") || !strcmp(name, "rate") || !strcmp(name, "bibw")) && in_pair) {
      const int both = !strcmp(name, "bibw");
      int r = 0;
      if (check) for (long b = 0; b < size; ++b) sbuf[b] = (unsigned char)(5 + b * 7);
      /* One receive buffer for the whole window, as osu_bw does (every message carries the same bytes). */
      if (rank == 1 || both)
        for (int j = 0; j < w; ++j) MPI_Irecv(rbuf, count, MPI_BYTE, peer, TAG_DATA, MPI_COMM_WORLD, &req[r++]);
      if (rank == 0 || both)
        for (int j = 0; j < w; ++j) MPI_Isend(sbuf, count, MPI_BYTE, peer, TAG_DATA, MPI_COMM_WORLD, &req[r++]);
      MPI_Waitall(r, req, MPI_STATUSES_IGNORE);
      if (check && (rank == 1 || both)) check_bytes(rbuf, size, 5, name);
      if (rank == 1) MPI_Send(&ack, 1, MPI_INT, 0, TAG_ACK, MPI_COMM_WORLD);
      else MPI_Recv(&ack, 1, MPI_INT, 1, TAG_ACK, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else if (!strcmp(name, "barrier")) {
      MPI_Barrier(MPI_COMM_WORLD);
    } else if (!strcmp(name, "bcast")) {
      if (check && rank == 0) for (long b = 0; b < size; ++b) sbuf[b] = (unsigned char)(9 + b * 7);
      MPI_Bcast(sbuf, count, MPI_BYTE, 0, MPI_COMM_WORLD);
      if (check) check_bytes(sbuf, size, 9, "bcast");
    } else if (!strcmp(name, "allreduce")) {
      const int floats = (int)(size / 4);
      if (check) for (int f = 0; f < floats; ++f) fsend[f] = (float)(rank + f % 8);
      MPI_Allreduce(fsend, frecv, floats, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
      if (check)
        for (int f = 0; f < floats; ++f)
          if (frecv[f] != (float)(nranks * (nranks - 1) / 2 + nranks * (f % 8))) die("allreduce: a wrong sum");
    } else if (!strcmp(name, "alltoall")) {
      MPI_Alltoall(sbuf, count, MPI_BYTE, rbuf, count, MPI_BYTE, MPI_COMM_WORLD);
    }
  }
  return MPI_Wtime() - t0;
}

static void measure(int k, long size, double *value, const char **unit) {
  const char *name = kKernels[k];
  const int stream = !strcmp(name, "bw") || !strcmp(name, "bibw") || !strcmp(name, "rate");
  const int n = stream ? iterations(size, 2000.0 / opt.window, (256.0 * (1 << 20)) / opt.window, 3)
                       : iterations(size, 10000, 64.0 * (1 << 20), 10);
  double samples[MAX_REPS];
  run(k, size, 1, 1);  /* the data, checked once */
  /* Warm-up: a tenth of the iterations, in doubling chunks, ended early when it has taken a tenth of
   * --max-time; rank 0 decides (its clock times the kernels) and tells the others, so all run alike. */
  const int warm = n / 10 > 1 ? n / 10 : 1;
  int done = 0, chunk = 1, more = 1;
  double spent = 0;
  while (more) {
    spent += run(k, size, chunk, 0);
    done += chunk;
    chunk = 2 * chunk < warm - done ? 2 * chunk : warm - done;
    more = done < warm && (opt.max_time == 0 || spent < opt.max_time / 10);
    MPI_Bcast(&more, 1, MPI_INT, 0, MPI_COMM_WORLD);
  }
  int count = n;
  if (rank == 0 && opt.max_time > 0 && spent / done * n > opt.max_time) {
    count = (int)(opt.max_time / (spent / done));
    if (count < 1) count = 1;
  }
  MPI_Bcast(&count, 1, MPI_INT, 0, MPI_COMM_WORLD);
  for (int r = 0; r < opt.reps; ++r) samples[r] = run(k, size, count, 0);
  const double t = median(samples, opt.reps) / count;  /* seconds per iteration */
  if (!strcmp(name, "lat")) *value = t / 2 * 1e6, *unit = "us";
  else if (!strcmp(name, "bw")) *value = (double)size * opt.window / t / 1e6, *unit = "MB/s";
  else if (!strcmp(name, "bibw")) *value = 2.0 * (double)size * opt.window / t / 1e6, *unit = "MB/s";
  else if (!strcmp(name, "rate")) *value = opt.window / t / 1e6, *unit = "Mmsg/s";
  else *value = t * 1e6, *unit = "us";
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nranks);
  parse(argc, argv);
  if (nranks < 2) {
    if (rank == 0) fprintf(stderr, "ftbench: needs at least 2 ranks, has %d (ftrun -n 2 ...)\n", nranks);
    MPI_Finalize();
    return 2;
  }
  const long biggest = max_size();
  const size_t room = (size_t)biggest * (size_t)(nranks > 1 ? nranks : 1);  /* alltoall needs size per rank */
  sbuf = xalloc(room), rbuf = xalloc(room);
  fsend = xalloc((size_t)biggest), frecv = xalloc((size_t)biggest);
  char library[64];
  library_name(library, sizeof library);
  for (char *c = library; *c; ++c)
    if (*c == '"' || *c == '\\') *c = '\'';  /* it goes into JSON */
  for (int i = 0; i < opt.nkernels; ++i) {
    const int k = opt.kernels[i];
    const int once = !strcmp(kKernels[k], "barrier");
    if (rank == 0 && !opt.json) printf("\n%s (%d ranks, %s)\n\n| size | %s |\n|---:|---:|\n", kKernels[k], nranks, library, kKernels[k]);
    for (int s = 0; s < (once ? 1 : opt.nsizes); ++s) {
      const long size = once ? 0 : opt.sizes[s];
      double value = 0;
      const char *unit = "";
      measure(k, size, &value, &unit);
      if (rank != 0) continue;
      if (opt.json) {
        printf("{\"kernel\": \"%s\", \"bytes\": %ld, \"value\": %.6g, \"unit\": \"%s\", \"ranks\": %d, \"reps\": %d, "
               "\"library\": \"%s\"}\n", kKernels[k], size, value, unit, nranks, opt.reps, library);
      } else {
        char text[32];
        fmt_size(text, sizeof text, (int)size);
        printf("| %s | %.3f %s |\n", text, value, unit);
      }
      fflush(stdout);
    }
  }
  MPI_Finalize();
  return 0;
}

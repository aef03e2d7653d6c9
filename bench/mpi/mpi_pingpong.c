/* mpi_pingpong: point-to-point latency and streaming bandwidth between two ranks.
 *
 * Written against the standard MPI C API only (Send/Recv, Isend/Irecv/Waitall; no collectives, since ftmpi
 * has none yet), so the same file builds with ftmpi's ftcc, Open MPI's mpicc and MPICH's mpicc:
 *
 *   ftcc -O2 mpi_pingpong.c -o pp && ftrun -n 2 --bind-to core ./pp
 *   mpicc.openmpi -O2 mpi_pingpong.c -o pp && mpirun.openmpi -np 2 --bind-to core ./pp
 *   mpicc.mpich -O2 mpi_pingpong.c -o pp && mpiexec.mpich -n 2 -bind-to core ./pp
 *
 * Latency: half the round trip of a blocking ping-pong, for 0 B to 4 MiB. Bandwidth: rank 0 posts a window
 * of 64 MPI_Isend, rank 1 a window of 64 MPI_Irecv (each into its own buffer, so the program stays legal
 * MPI; -o shares one receive buffer as osu_bw does), both wait for all, then rank 1 sends a 4-byte ack;
 * MB/s is 10^6 bytes per second of payload. Every figure is the median of -r repetitions, each after a
 * zero-byte ping-pong that lines the ranks up (there is no MPI_Barrier in ftmpi yet). A repetition is
 * 10000 round trips up to 4 KiB and 64 MiB worth of them above (at least 10); a bandwidth repetition moves
 * 256 MiB (at least 3 windows); a tenth of that (at least 5 round trips or 2 windows) warms up first.
 *
 * -T asks for MPI_THREAD_MULTIPLE (MPI_Init_thread), still with one thread: what a library's thread safety
 * costs a program that asks for it; the provided level is printed with the run's description.
 *
 * -S (strided) sends every message as one item of MPI_Type_vector(bytes / 8, 1, 2, MPI_DOUBLE): every
 * other double of a buffer twice the size, on both sides (sizes that are not a multiple of 8 are
 * skipped), which measures how each MPI moves a derived datatype: packing it, or walking its pieces.
 *
 * Data are checked during warm-up: the sender fills its buffer with a pattern that depends on the
 * iteration, the receiver clears its buffer before the receive and checks pattern and count afterwards.
 * -c checks the timed loops too (the figures then include the fill and check), -n checks nothing.
 *
 * Output (rank 0, stdout): machine-readable lines `lat <bytes> <usec>` and `bw <bytes> <MB/s>`, and a human
 * table whose lines start with '#', as do the lines that describe the run.
 */
#define _GNU_SOURCE
#include <mpi.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { TAG_DATA = 1, TAG_ACK = 2, TAG_SYNC = 3, TAG_INFO = 4 };
enum { MAX_REPS = 101, MAX_WINDOW = 1024 };

static const int lat_sizes[] = {0, 1, 8, 64, 512, 4096, 8192, 65536, 1 << 20, 4 << 20};
static const int bw_sizes[] = {8192, 65536, 256 << 10, 1 << 20, 4 << 20};
#define COUNT(a) ((int)(sizeof(a) / sizeof((a)[0])))

static struct {
  int reps;       /* repetitions per size; the median is reported */
  double scale;   /* multiplies every iteration count */
  int window;     /* messages in flight per bandwidth iteration */
  int check;      /* 0 = never, 1 = warm-up only, 2 = warm-up and timed loops */
  int shared_rx;  /* bandwidth: one receive buffer for the whole window (as osu_bw) */
  int do_lat, do_bw;
  int max_size;
  int only;       /* >= 0: measure this one size instead of the lists */
  int strided;    /* -S: messages are one strided vector of doubles (see above) */
} opt = {5, 1.0, 64, 1, 0, 1, 1, 4 << 20, -1, 0};

static int rank;

#define BENCH_NAME "mpi_pingpong"
#include "bench_common.h"
static long errors;

/* The byte at offset k of the message with this seed. Depends on the seed, so stale data is caught. */
static inline unsigned char pattern(unsigned seed, size_t k) {
  return (unsigned char)(seed * 167u + k * 7u + (k >> 8) * 13u + 1u);
}

/* Where byte k of a message lies in its buffer: every other 8 bytes when strided. */
static inline size_t at(size_t k) { return opt.strided ? (k / 8) * 16 + k % 8 : k; }
/* Bytes of buffer a message of n bytes spans. */
static inline size_t span(size_t n) { return opt.strided ? 2 * n : n; }

/* The datatype and count a message of `bytes` bytes travels as (the vectors are made once per size). */
static MPI_Datatype message_type(int bytes, int *count) {
  static struct { int bytes; MPI_Datatype type; } made[16];
  static int nmade;
  if (!opt.strided || bytes == 0) {
    *count = bytes;
    return MPI_BYTE;
  }
  *count = 1;
  for (int i = 0; i < nmade; ++i)
    if (made[i].bytes == bytes) return made[i].type;
  MPI_Datatype t;
  MPI_Type_vector(bytes / 8, 1, 2, MPI_DOUBLE, &t);
  MPI_Type_commit(&t);
  made[nmade].bytes = bytes, made[nmade].type = t, ++nmade;
  return t;
}

static void fill(unsigned char *b, size_t n, unsigned seed) {
  for (size_t k = 0; k < n; ++k) b[at(k)] = pattern(seed, k);
}

static void verify(const unsigned char *b, size_t n, unsigned seed, const MPI_Status *st, const char *what) {
  int count = -1;
  MPI_Get_count(st, MPI_BYTE, &count);
  if ((size_t)count != n) {
    if (errors++ < 5)
      fprintf(stderr, "mpi_pingpong: rank %d: %s: received %d bytes, expected %zu\n", rank, what, count, n);
    return;
  }
  for (size_t k = 0; k < n; ++k) {
    if (b[at(k)] != pattern(seed, k)) {
      if (errors++ < 5)
        fprintf(stderr, "mpi_pingpong: rank %d: %s of %zu bytes: byte %zu is 0x%02x, expected 0x%02x\n", rank,
                what, n, k, b[at(k)], pattern(seed, k));
      return;
    }
  }
}

/* Zero-byte ping-pongs: afterwards both ranks are within a one-way latency of each other. */
static void sync_pair(void) {
  for (int i = 0; i < 3; ++i) {
    if (rank == 0) {
      MPI_Send(NULL, 0, MPI_BYTE, 1, TAG_SYNC, MPI_COMM_WORLD);
      MPI_Recv(NULL, 0, MPI_BYTE, 1, TAG_SYNC, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else {
      MPI_Recv(NULL, 0, MPI_BYTE, 0, TAG_SYNC, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      MPI_Send(NULL, 0, MPI_BYTE, 0, TAG_SYNC, MPI_COMM_WORLD);
    }
  }
}

/* n round trips of `size` bytes; returns the seconds rank 0 measured (rank 1: 0). */
static double pingpong(unsigned char *sbuf, unsigned char *rbuf, int size, int n, int check, unsigned *seed) {
  MPI_Status st;
  int peer = 1 - rank, count = 0;
  MPI_Datatype type = message_type(size, &count);
  sync_pair();
  double t0 = MPI_Wtime();
  for (int i = 0; i < n; ++i) {
    if (rank == 0) {
      if (check) fill(sbuf, (size_t)size, *seed), memset(rbuf, 0, span((size_t)size));
      MPI_Send(sbuf, count, type, peer, TAG_DATA, MPI_COMM_WORLD);
      MPI_Recv(rbuf, count, type, peer, TAG_DATA, MPI_COMM_WORLD, &st);
      if (check) verify(rbuf, (size_t)size, *seed + 1, &st, "pong");
    } else {
      if (check) memset(rbuf, 0, span((size_t)size));
      MPI_Recv(rbuf, count, type, peer, TAG_DATA, MPI_COMM_WORLD, &st);
      if (check) verify(rbuf, (size_t)size, *seed, &st, "ping"), fill(sbuf, (size_t)size, *seed + 1);
      MPI_Send(sbuf, count, type, peer, TAG_DATA, MPI_COMM_WORLD);
    }
    *seed += 2;
  }
  return rank == 0 ? MPI_Wtime() - t0 : 0.0;
}

/* n iterations of a window of `size`-byte messages from rank 0 to rank 1, each closed by an ack. */
static double stream(unsigned char *sbuf, unsigned char **rbufs, int size, int n, int check, unsigned *seed) {
  MPI_Request req[MAX_WINDOW];
  MPI_Status st[MAX_WINDOW];
  int w = opt.window, ack = 0, count = 0;
  MPI_Datatype type = message_type(size, &count);
  sync_pair();
  double t0 = MPI_Wtime();
  for (int i = 0; i < n; ++i) {
    if (rank == 0) {
      if (check) fill(sbuf, (size_t)size, *seed);
      for (int j = 0; j < w; ++j) MPI_Isend(sbuf, count, type, 1, TAG_DATA, MPI_COMM_WORLD, &req[j]);
      MPI_Waitall(w, req, st);
      MPI_Recv(&ack, 1, MPI_INT, 1, TAG_ACK, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else {
      if (check)
        for (int j = 0; j < w; ++j) memset(rbufs[j], 0, span((size_t)size));
      for (int j = 0; j < w; ++j) MPI_Irecv(rbufs[j], count, type, 0, TAG_DATA, MPI_COMM_WORLD, &req[j]);
      MPI_Waitall(w, req, st);
      if (check)
        for (int j = 0; j < w; ++j) verify(rbufs[j], (size_t)size, *seed, &st[j], "window message");
      MPI_Send(&ack, 1, MPI_INT, 0, TAG_ACK, MPI_COMM_WORLD);
    }
    *seed += 1;
  }
  return rank == 0 ? MPI_Wtime() - t0 : 0.0;
}

static void usage(const char *argv0) {
  printf("usage: %s [-r reps] [-t scale] [-w window] [-m max_bytes | -s bytes] [-c | -n] [-o] [-L | -B] [-S] [-T]\n"
         "  -r N    repetitions per size, the median is reported (default 5)\n"
         "  -t X    multiply every iteration count by X (default 1)\n"
         "  -w N    bandwidth window: messages in flight per iteration (default 64)\n"
         "  -m N    largest message size in bytes (default 4194304)\n"
         "  -s N    measure only messages of N bytes\n"
         "  -c      check the data in the timed loops too (default: during warm-up only)\n"
         "  -n      check nothing\n"
         "  -o      bandwidth: one receive buffer for the whole window, as osu_bw (overlapping receives)\n"
         "  -L, -B  latency only, bandwidth only\n"
         "  -S      strided: every message is one MPI_Type_vector of doubles, every other one of the buffer\n"
         "  -T      ask for MPI_THREAD_MULTIPLE (one thread all the same)\n",
         argv0);
}

static void parse(int argc, char **argv) {
  for (int i = 1; i < argc; ++i) {
    const char *a = argv[i];
    const char *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (!strcmp(a, "-r") && v) opt.reps = atoi(v), ++i;
    else if (!strcmp(a, "-t") && v) opt.scale = atof(v), ++i;
    else if (!strcmp(a, "-w") && v) opt.window = atoi(v), ++i;
    else if (!strcmp(a, "-m") && v) opt.max_size = atoi(v), ++i;
    else if (!strcmp(a, "-s") && v) opt.only = atoi(v), opt.max_size = opt.only, ++i;
    else if (!strcmp(a, "-c")) opt.check = 2;
    else if (!strcmp(a, "-n")) opt.check = 0;
    else if (!strcmp(a, "-o")) opt.shared_rx = 1;
    else if (!strcmp(a, "-L")) opt.do_bw = 0;
    else if (!strcmp(a, "-B")) opt.do_lat = 0;
    else if (!strcmp(a, "-S")) opt.strided = 1;
    else if (!strcmp(a, "-T")) continue; /* seen before MPI_Init (main) */
    else {
      if (rank == 0) usage(argv[0]);
      MPI_Finalize();
      exit(strcmp(a, "-h") && strcmp(a, "--help") ? 2 : 0);
    }
  }
  if (opt.reps < 1 || opt.reps > MAX_REPS || opt.scale <= 0 || opt.window < 1 || opt.window > MAX_WINDOW ||
      opt.max_size < 0 || (opt.only < 0 && opt.only != -1)) {
    if (rank == 0) fprintf(stderr, "mpi_pingpong: option out of range (reps 1..%d, window 1..%d)\n", MAX_REPS,
                           MAX_WINDOW);
    MPI_Finalize();
    exit(2);
  }
}

int main(int argc, char **argv) {
  int size = 0, multiple = 0, provided = MPI_THREAD_SINGLE;
  for (int i = 1; i < argc; ++i) multiple |= !strcmp(argv[i], "-T");
  if (multiple) MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  else MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  parse(argc, argv);
  if (size != 2) {
    if (rank == 0) fprintf(stderr, "mpi_pingpong: needs exactly 2 ranks, has %d\n", size);
    MPI_Finalize();
    return 2;
  }

  /* Where each rank runs: the CPU now and how many CPUs it may use (1 = bound). */
  cpu_set_t set;
  int info[2] = {sched_getcpu(), sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : -1};
  int peer_info[2] = {-1, -1};
  if (rank == 0) MPI_Recv(peer_info, 2, MPI_INT, 1, TAG_INFO, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  else MPI_Send(info, 2, MPI_INT, 0, TAG_INFO, MPI_COMM_WORLD);

  size_t max = (size_t)opt.max_size;
  unsigned char *sbuf = xalloc(span(max)), *rbuf = xalloc(span(max));
  unsigned char *rbufs[MAX_WINDOW];
  unsigned seed = 1;
  double lat[COUNT(lat_sizes)], bw[COUNT(bw_sizes)], samples[MAX_REPS];
  int nlat = 0, nbw = 0;
  /* The sizes to measure: the lists up to -m, or the one size of -s. */
  int lat_bytes[COUNT(lat_sizes)], bw_bytes[COUNT(bw_sizes)], nlat_sizes = 0, nbw_sizes = 0;
  for (int s = 0; s < COUNT(lat_sizes); ++s)
    if (opt.only < 0 && lat_sizes[s] <= opt.max_size && !(opt.strided && lat_sizes[s] % 8))
      lat_bytes[nlat_sizes++] = lat_sizes[s];
  for (int s = 0; s < COUNT(bw_sizes); ++s)
    if (opt.only < 0 && bw_sizes[s] <= opt.max_size) bw_bytes[nbw_sizes++] = bw_sizes[s];
  if (opt.only >= 0 && opt.strided && opt.only % 8) {
    if (rank == 0) fprintf(stderr, "mpi_pingpong: -S needs a size that is a multiple of 8, not %d\n", opt.only);
    MPI_Finalize();
    return 2;
  }
  if (opt.only >= 0) {
    lat_bytes[nlat_sizes++] = opt.only;
    /* A stream of zero-byte messages moves no bytes: it has a latency, not a bandwidth. */
    if (opt.only > 0) bw_bytes[nbw_sizes++] = opt.only;
  }

  if (rank == 0) {
    char lib[256];
    char host[MPI_MAX_PROCESSOR_NAME];
    int hlen = 0;
    library_name(lib, sizeof lib);
    MPI_Get_processor_name(host, &hlen);
    printf("# mpi_pingpong: %s on %s\n", lib, host);
    printf("# rank 0 on cpu %d (%d allowed), rank 1 on cpu %d (%d allowed)\n", info[0], info[1], peer_info[0],
           peer_info[1]);
    if (multiple)
      printf("# asked for MPI_THREAD_MULTIPLE, provided %s\n",
             provided == MPI_THREAD_MULTIPLE ? "MPI_THREAD_MULTIPLE" : "less");
    printf("# median of %d repetitions; window %d; data checked %s%s\n", opt.reps, opt.window,
           opt.check == 0 ? "never" : opt.check == 1 ? "during warm-up" : "always",
           opt.strided ? "; messages strided (every other double)" : "");
    fflush(stdout);
  }

  if (opt.do_lat) {
    for (int s = 0; s < nlat_sizes; ++s) {
      int bytes = lat_bytes[s];
      int iters = clampi(opt.scale * (64.0 * 1024 * 1024) / (bytes > 4096 ? bytes : 4096), 10, 1000000);
      if (bytes <= 4096) iters = clampi(opt.scale * 10000, 10, 1000000);
      pingpong(sbuf, rbuf, bytes, iters / 10 > 5 ? iters / 10 : 5, opt.check >= 1, &seed);
      for (int r = 0; r < opt.reps; ++r)
        samples[r] = pingpong(sbuf, rbuf, bytes, iters, opt.check >= 2, &seed) * 1e6 / iters / 2;
      lat[nlat++] = median(samples, opt.reps);
      if (rank == 0) printf("lat %d %.3f\n", bytes, lat[nlat - 1]), fflush(stdout);
    }
  }

  if (opt.do_bw && nbw_sizes > 0) {
    for (int j = 0; j < opt.window; ++j) rbufs[j] = rank == 1 && !opt.shared_rx ? xalloc(span(max)) : rbuf;
    for (int s = 0; s < nbw_sizes; ++s) {
      int bytes = bw_bytes[s];
      double per_iter = (double)bytes * opt.window;
      int iters = clampi(opt.scale * (256.0 * 1024 * 1024) / per_iter, 3, 1000000);
      stream(sbuf, rbufs, bytes, iters / 10 > 2 ? iters / 10 : 2, opt.check >= 1, &seed);
      for (int r = 0; r < opt.reps; ++r) {
        double t = stream(sbuf, rbufs, bytes, iters, opt.check >= 2, &seed);
        samples[r] = rank == 0 ? per_iter * iters / t / 1e6 : 0.0;
      }
      bw[nbw++] = median(samples, opt.reps);
      if (rank == 0) printf("bw %d %.1f\n", bytes, bw[nbw - 1]), fflush(stdout);
    }
  }

  /* Rank 1's check errors reach rank 0 so that one line reports them. */
  long peer_errors = 0;
  if (rank == 0) MPI_Recv(&peer_errors, 1, MPI_LONG, 1, TAG_INFO, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  else MPI_Send(&errors, 1, MPI_LONG, 0, TAG_INFO, MPI_COMM_WORLD);

  if (rank == 0) {
    char label[32];
    if (nlat > 0) printf("#\n# %-10s %16s\n", "size", "latency (us)");
    for (int s = 0; s < nlat; ++s) {
      fmt_size(label, sizeof label, lat_bytes[s]);
      printf("# %-10s %16.3f\n", label, lat[s]);
    }
    if (nbw > 0) printf("#\n# %-10s %16s\n", "size", "bandwidth (MB/s)");
    for (int s = 0; s < nbw; ++s) {
      fmt_size(label, sizeof label, bw_bytes[s]);
      printf("# %-10s %16.1f\n", label, bw[s]);
    }
    if (errors + peer_errors) printf("# DATA ERRORS: %ld on rank 0, %ld on rank 1\n", errors, peer_errors);
    else if (opt.check) printf("# data checks passed\n");
    fflush(stdout);
  }
  int status = (errors + peer_errors) ? 1 : 0;
  MPI_Finalize();
  return status;
}

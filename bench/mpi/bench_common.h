/* Helpers shared by the MPI benchmarks of this directory (mpi_pingpong.c, mpi_coll.c). Standard C and
 * the standard MPI C API only, like them, so that each still builds with any MPI's compiler wrapper.
 * The including file defines BENCH_NAME (the program's name in messages) and `static int rank`. */
#ifndef FTMPI_BENCH_MPI_COMMON_H
#define FTMPI_BENCH_MPI_COMMON_H

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void die(const char *what) {
  fprintf(stderr, BENCH_NAME ": rank %d: %s\n", rank, what);
  MPI_Abort(MPI_COMM_WORLD, 3);
  exit(3);
}

static void *xalloc(size_t n) {
  void *p = NULL;
  if (posix_memalign(&p, 4096, n ? n : 64) != 0) die("out of memory");
  memset(p, 0, n ? n : 64);
  return p;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double median(double *v, int n) {
  qsort(v, (size_t)n, sizeof *v, cmp_double);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static int clampi(double v, int lo, int hi) {
  if (v < lo) return lo;
  if (v > hi) return hi;
  return (int)v;
}

/* First line of MPI_Get_library_version, shortened and without trailing blanks. */
static void library_name(char *out, size_t n) {
  char v[MPI_MAX_LIBRARY_VERSION_STRING];
  int len = 0;
  MPI_Get_library_version(v, &len);
  v[len < MPI_MAX_LIBRARY_VERSION_STRING ? len : MPI_MAX_LIBRARY_VERSION_STRING - 1] = '\0';
  size_t k = strcspn(v, "\n");
  v[k] = '\0';
  char *comma = strstr(v, ", ");  /* Open MPI's first line goes on with package, ident, date */
  if (k > 48 && comma) k = (size_t)(comma - v);
  for (size_t i = 0; i < k; ++i)
    if (v[i] == '\t') v[i] = ' ';
  while (k > 0 && (v[k - 1] == ' ' || v[k - 1] == '\t')) --k;
  if (k >= n) k = n - 1;
  memcpy(out, v, k);
  out[k] = '\0';
}

static void fmt_size(char *out, size_t n, int bytes) {
  if (bytes >= (1 << 20) && bytes % (1 << 20) == 0) snprintf(out, n, "%d MB", bytes >> 20);
  else if (bytes >= 1024 && bytes % 1024 == 0) snprintf(out, n, "%d KB", bytes >> 10);
  else snprintf(out, n, "%d B", bytes);
}

#endif

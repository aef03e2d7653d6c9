/* What the MPI-IO tests share: a private temporary directory made by rank 0 (under $TMPDIR, else /tmp),
 * its name given to every rank, and removed with whatever the test left in it. */
#ifndef FTMPI_TEST_IO_COMMON_H
#define FTMPI_TEST_IO_COMMON_H

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"

static char io_dir[512];

/* Collective over comm: io_dir names a fresh directory on every rank. */
static inline void io_make_dir(MPI_Comm comm, const char *label) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  if (rank == 0) {
    const char *base = getenv("TMPDIR");
    snprintf(io_dir, sizeof io_dir, "%s/ftmpi-%s-XXXXXX", base != NULL && base[0] != '\0' ? base : "/tmp", label);
    CHECK(mkdtemp(io_dir) != NULL, "mkdtemp %s failed", io_dir);
  }
  CHECK_MPI(MPI_Bcast(io_dir, sizeof io_dir, MPI_CHAR, 0, comm));
}

/* io_dir + "/" + name */
static inline void io_path(char *out, size_t size, const char *name) { snprintf(out, size, "%s/%s", io_dir, name); }

/* Collective over comm: removes io_dir and the files in it. */
static inline void io_remove_dir(MPI_Comm comm) {
  int rank = 0;
  CHECK_MPI(MPI_Barrier(comm));
  MPI_Comm_rank(comm, &rank);
  if (rank != 0) return;
  DIR *dir = opendir(io_dir);
  CHECK(dir != NULL, "opendir %s", io_dir);
  struct dirent *entry;
  char path[1024];
  while ((entry = readdir(dir)) != NULL) {
    if (strcmp(entry->d_name, ".") == 0 || strcmp(entry->d_name, "..") == 0) continue;
    snprintf(path, sizeof path, "%s/%s", io_dir, entry->d_name);
    unlink(path);
  }
  closedir(dir);
  CHECK(rmdir(io_dir) == 0, "rmdir %s", io_dir);
}

/* A number from an info key the library reports (docs/mpi.md, "MPI-IO"). */
static inline long long io_info_number(MPI_File fh, const char *key) {
  MPI_Info info;
  char value[MPI_MAX_INFO_VAL + 1];
  int flag = 0;
  CHECK_MPI(MPI_File_get_info(fh, &info));
  CHECK_MPI(MPI_Info_get(info, key, MPI_MAX_INFO_VAL, value, &flag));
  CHECK(flag, "MPI_File_get_info has no key %s", key);
  CHECK_MPI(MPI_Info_free(&info));
  return atoll(value);
}

#endif

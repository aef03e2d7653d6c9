/* Start-up under a flood of unauthenticated connections (docs/security.md): before MPI_Init, rank 0
 * opens FLOOD idle TCP connections to ftrun's port (the first address of FTMPI_RTE_ADDR) and holds them,
 * far more than ftrun keeps pending, and creates the file READY; the other ranks wait for that file, then
 * every rank calls MPI_Init with the flood still held (READY is a directory; the file in it is named for the
 * job, so a file left by an earlier run is never taken for this one's). ftrun closes the oldest idle connections to make
 * room (telling them busy), so each rank gets in, trying again when it is the one told, and the job
 * runs an allreduce. Before, ftrun refused every newcomer while the flood held its slots, and the ranks
 * gave up blaming the secret.
 *
 *   connection_flood READY_DIR [FLOOD]   (FLOOD defaults to 300) */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

/* Connects to "host:port" (numeric IPv4, as ftrun publishes its addresses); -1 on failure. */
static int connect_to(const char *address) {
  char host[64];
  const char *colon = strrchr(address, ':');
  if (colon == NULL || (size_t)(colon - address) >= sizeof host) return -1;
  memcpy(host, address, (size_t)(colon - address));
  host[colon - address] = '\0';
  struct sockaddr_in to;
  memset(&to, 0, sizeof to);
  to.sin_family = AF_INET;
  to.sin_port = htons((unsigned short)atoi(colon + 1));
  if (inet_pton(AF_INET, host, &to.sin_addr) != 1) return -1;
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return -1;
  if (connect(fd, (const struct sockaddr *)&to, sizeof to) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s READY_DIR [FLOOD]\n", argv[0]);
    return 2;
  }
  const char *job = getenv("FTMPI_JOB_ID");
  CHECK(job != NULL, "run me under ftrun");
  char ready[512];
  snprintf(ready, sizeof ready, "%s/flood-ready-%s", argv[1], job);
  const int flood = argc > 2 ? atoi(argv[2]) : 300;
  const char *rank_text = getenv("FTMPI_RANK");
  const char *addresses = getenv("FTMPI_RTE_ADDR");
  CHECK(rank_text != NULL && addresses != NULL, "run me under ftrun");
  int *held = calloc((size_t)flood, sizeof *held);
  CHECK(held != NULL, "out of memory");
  int opened = 0;
  if (atoi(rank_text) == 0) {
    char first[128];
    snprintf(first, sizeof first, "%s", addresses);
    char *comma = strchr(first, ',');
    if (comma != NULL) *comma = '\0';
    for (int i = 0; i < flood; ++i) {
      held[i] = connect_to(first);
      if (held[i] >= 0) ++opened;
    }
    CHECK(opened == flood, "opened only %d of %d connections to %s", opened, flood, first);
    FILE *f = fopen(ready, "w");
    CHECK(f != NULL, "cannot create %s", ready);
    fclose(f);
  } else {
    struct stat st;
    while (stat(ready, &st) != 0) usleep(1000); /* rank 0's flood is in place; ftrun's --timeout bounds this */
  }

  MPI_Init(&argc, &argv);
  int rank = 0, size = 0, sum = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int one = 1;
  MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  CHECK(sum == size, "allreduce gave %d for %d ranks", sum, size);
  if (rank == 0) printf("connection_flood: %d ranks started beside %d idle connections\n", size, opened);
  MPI_Finalize();
  if (rank == 0) unlink(ready);
  for (int i = 0; i < flood; ++i) {
    if (held[i] >= 0) close(held[i]);
  }
  free(held);
  return 0;
}

/* MPI-4.1's buffered-send buffers around a ring of any size:
 *   - MPI_Buffer_flush and MPI_Buffer_iflush wait for the process buffer's sends, which stays
 *     attached (a second round of sends fits again), then MPI_Buffer_detach gives it back;
 *   - MPI_Comm_attach_buffer: a communicator's buffered sends use its own buffer (none attached to
 *     the process: MPI_Bsend on another communicator is MPI_ERR_BUFFER), MPI_Comm_flush_buffer,
 *     MPI_Comm_iflush_buffer, MPI_Comm_detach_buffer (the same address and size back), a second
 *     attach is MPI_ERR_BUFFER, and MPI_Comm_free of a communicator with one attached;
 *   - MPI_BUFFER_AUTOMATIC: messages of any size without a buffer of the program's, and detach gives
 *     MPI_BUFFER_AUTOMATIC back.
 * Every message is checked where it arrives. */
#include <stdlib.h>
#include <string.h>

#include "check.h"

static int rank, size, next, previous;

enum { kBig = 300000 }; /* more than one eager fragment: its send completes only once received */

static void ring_bsend(MPI_Comm comm, int tag, int bytes) {
  char *out = malloc((size_t)bytes + 1), *in = malloc((size_t)bytes + 1);
  CHECK(out != NULL && in != NULL, "out of memory");
  for (int i = 0; i < bytes; ++i) out[i] = (char)(rank + tag + i);
  CHECK_MPI(MPI_Bsend(out, bytes, MPI_CHAR, next, tag, comm));
  memset(out, 0, (size_t)bytes); /* the buffered copy is what goes */
  MPI_Status status;
  CHECK_MPI(MPI_Recv(in, bytes, MPI_CHAR, previous, tag, comm, &status));
  for (int i = 0; i < bytes; ++i) {
    CHECK(in[i] == (char)(previous + tag + i), "tag %d: byte %d is %d, not %d", tag, i, in[i], (char)(previous + tag + i));
  }
  free(out);
  free(in);
}

static void process_buffer(void) {
  const int room = kBig + MPI_BSEND_OVERHEAD;
  void *buffer = malloc((size_t)room);
  CHECK(buffer != NULL, "out of memory");
  CHECK_MPI(MPI_Buffer_attach(buffer, room));
  CHECK_CLASS(MPI_ERR_BUFFER, MPI_Buffer_attach(buffer, room));
  ring_bsend(MPI_COMM_WORLD, 1, kBig);
  CHECK_MPI(MPI_Buffer_flush());
  ring_bsend(MPI_COMM_WORLD, 2, kBig); /* fits again: the first message's room is back */
  MPI_Request request = MPI_REQUEST_NULL;
  CHECK_MPI(MPI_Buffer_iflush(&request));
  CHECK_MPI(MPI_Wait(&request, MPI_STATUS_IGNORE));
  CHECK(request == MPI_REQUEST_NULL, "MPI_Wait left the iflush request");
  CHECK_CLASS(MPI_ERR_ARG, MPI_Buffer_iflush(NULL));
  /* An iflush request may be freed at once. */
  CHECK_MPI(MPI_Buffer_iflush(&request));
  CHECK_MPI(MPI_Request_free(&request));
  void *back = NULL;
  int back_size = 0;
  CHECK_MPI(MPI_Buffer_detach(&back, &back_size));
  CHECK(back == buffer && back_size == room, "MPI_Buffer_detach gave %p, %d", back, back_size);
  free(buffer);
}

static void comm_buffer(void) {
  MPI_Comm comm;
  CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &comm));
  const int room = kBig + MPI_BSEND_OVERHEAD;
  void *buffer = malloc((size_t)room);
  CHECK(buffer != NULL, "out of memory");
  CHECK_MPI(MPI_Comm_attach_buffer(comm, buffer, room));
  CHECK_CLASS(MPI_ERR_BUFFER, MPI_Comm_attach_buffer(comm, buffer, room));
  CHECK_CLASS(MPI_ERR_ARG, MPI_Comm_attach_buffer(comm, buffer, -1));
  CHECK_CLASS(MPI_ERR_COMM, MPI_Comm_attach_buffer(MPI_COMM_NULL, buffer, room));
  /* The process has no buffer: only the communicator's sends have one. */
  char byte = 1;
  CHECK_CLASS(MPI_ERR_BUFFER, MPI_Bsend(&byte, 1, MPI_CHAR, next, 3, MPI_COMM_WORLD));
  ring_bsend(comm, 4, kBig);
  CHECK_MPI(MPI_Comm_flush_buffer(comm));
  ring_bsend(comm, 5, kBig);
  MPI_Request request;
  CHECK_MPI(MPI_Comm_iflush_buffer(comm, &request));
  CHECK_MPI(MPI_Wait(&request, MPI_STATUS_IGNORE));
  /* Too big for the room left while a message is held. */
  char *two = malloc(2 * (size_t)kBig);
  CHECK(two != NULL, "out of memory");
  CHECK_CLASS(MPI_ERR_BUFFER, MPI_Bsend(two, 2 * kBig, MPI_CHAR, next, 6, comm));
  free(two);
  void *back = NULL;
  int back_size = -1;
  CHECK_MPI(MPI_Comm_detach_buffer(comm, &back, &back_size));
  CHECK(back == buffer && back_size == room, "MPI_Comm_detach_buffer gave %p, %d", back, back_size);
  CHECK_MPI(MPI_Comm_detach_buffer(comm, &back, &back_size));
  CHECK(back == NULL && back_size == 0, "a second detach gave %p, %d", back, back_size);
  CHECK_MPI(MPI_Comm_flush_buffer(comm)); /* none attached: nothing to wait for */
  CHECK_CLASS(MPI_ERR_BUFFER, MPI_Bsend(&byte, 1, MPI_CHAR, next, 7, comm));
  /* Freed with a buffer attached: its sends go out first. */
  CHECK_MPI(MPI_Comm_attach_buffer(comm, buffer, room));
  ring_bsend(comm, 8, 1000);
  CHECK_MPI(MPI_Comm_free(&comm));
  free(buffer);
}

static void automatic(void) {
  CHECK_MPI(MPI_Buffer_attach(MPI_BUFFER_AUTOMATIC, 0));
  CHECK_CLASS(MPI_ERR_BUFFER, MPI_Buffer_attach(MPI_BUFFER_AUTOMATIC, 0));
  ring_bsend(MPI_COMM_WORLD, 9, 3 * kBig);
  ring_bsend(MPI_COMM_WORLD, 10, 0);
  CHECK_MPI(MPI_Buffer_flush());
  void *back = NULL;
  int back_size = -1;
  CHECK_MPI(MPI_Buffer_detach(&back, &back_size));
  CHECK(back == MPI_BUFFER_AUTOMATIC && back_size == 0, "MPI_Buffer_detach of the automatic buffer gave %p, %d", back,
        back_size);
  /* and on a communicator */
  CHECK_MPI(MPI_Comm_attach_buffer(MPI_COMM_WORLD, MPI_BUFFER_AUTOMATIC, 0));
  ring_bsend(MPI_COMM_WORLD, 11, 2 * kBig);
  MPI_Request request;
  CHECK_MPI(MPI_Comm_iflush_buffer(MPI_COMM_WORLD, &request));
  CHECK_MPI(MPI_Wait(&request, MPI_STATUS_IGNORE));
  CHECK_MPI(MPI_Comm_detach_buffer(MPI_COMM_WORLD, &back, &back_size));
  CHECK(back == MPI_BUFFER_AUTOMATIC && back_size == 0, "MPI_Comm_detach_buffer of the automatic buffer");
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  next = (rank + 1) % size;
  previous = (rank + size - 1) % size;
  process_buffer();
  CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
  comm_buffer();
  CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
  automatic();
  CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
  MPI_Finalize();
  if (rank == 0) printf("buffer_flush: ok\n");
  return 0;
}

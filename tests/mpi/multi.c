/* MPI_Waitany, MPI_Waitsome, MPI_Testany, MPI_Testsome and MPI_Testall. Rank 0 posts one receive per
 * tag; rank 1 sends a tag only when rank 0 asks for it, so rank 0 knows exactly which requests can be
 * complete at each step. */
#include "check.h"

enum { kTags = 8, kAsk = 100, kSent = 101, kDone = -1 };

/* Has rank 1 send `tag`, and waits until the receive posted for it is complete, without touching the
 * request: rank 1 answers kSent after the message, and messages from one sender match in order, so the
 * (one-int, single-frame) message has landed once the answer is here. */
static void ask_for(int tag) {
  CHECK_MPI(MPI_Send(&tag, 1, MPI_INT, 1, kAsk, MPI_COMM_WORLD));
  CHECK_MPI(MPI_Recv(NULL, 0, MPI_INT, 1, kSent, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
}

int main(int argc, char **argv) {
  int rank = 0;
  int size = 0;
  CHECK_MPI(MPI_Init(&argc, &argv));
  CHECK_MPI(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
  CHECK_MPI(MPI_Comm_size(MPI_COMM_WORLD, &size));
  CHECK(size == 2, "needs exactly 2 ranks, got %d", size);

  if (rank == 1) {
    for (;;) {
      int tag = 0;
      CHECK_MPI(MPI_Recv(&tag, 1, MPI_INT, 0, kAsk, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
      if (tag == kDone) break;
      int payload = tag * 10;
      CHECK_MPI(MPI_Send(&payload, 1, MPI_INT, 0, tag, MPI_COMM_WORLD));
      CHECK_MPI(MPI_Send(NULL, 0, MPI_INT, 0, kSent, MPI_COMM_WORLD));
    }
  } else {
    int values[kTags];
    MPI_Request requests[kTags];
    MPI_Status statuses[kTags];
    int indices[kTags];
    int index = -1;
    int flag = -1;
    int outcount = -1;
    MPI_Status status;

    /* Nothing was asked for: nothing completes. */
    for (int t = 0; t < kTags; ++t) CHECK_MPI(MPI_Irecv(&values[t], 1, MPI_INT, 1, t, MPI_COMM_WORLD, &requests[t]));
    CHECK_MPI(MPI_Testany(kTags, requests, &index, &flag, &status));
    CHECK(flag == 0 && index == MPI_UNDEFINED, "MPI_Testany: flag %d index %d with nothing sent", flag, index);
    CHECK_MPI(MPI_Testsome(kTags, requests, &outcount, indices, statuses));
    CHECK(outcount == 0, "MPI_Testsome: %d complete with nothing sent", outcount);
    CHECK_MPI(MPI_Testall(kTags, requests, &flag, statuses));
    CHECK(flag == 0, "MPI_Testall: complete with nothing sent");

    /* Waitany takes the one that can complete. */
    ask_for(3);
    CHECK_MPI(MPI_Waitany(kTags, requests, &index, &status));
    CHECK(index == 3 && values[3] == 30 && status.MPI_TAG == 3 && requests[3] == MPI_REQUEST_NULL,
          "MPI_Waitany: index %d value %d tag %d", index, values[3], status.MPI_TAG);

    /* Testany finds the one that arrived. */
    ask_for(6);
    CHECK_MPI(MPI_Testany(kTags, requests, &index, &flag, &status));
    CHECK(flag == 1 && index == 6 && values[6] == 60, "MPI_Testany: flag %d index %d", flag, index);

    /* Waitsome and Testsome report every one that arrived, in index order. */
    ask_for(5);
    ask_for(1);
    CHECK_MPI(MPI_Waitsome(kTags, requests, &outcount, indices, statuses));
    CHECK(outcount == 2 && indices[0] == 1 && indices[1] == 5, "MPI_Waitsome: %d complete, first %d", outcount,
          indices[0]);
    CHECK(statuses[0].MPI_TAG == 1 && statuses[1].MPI_TAG == 5 && values[1] == 10 && values[5] == 50,
          "MPI_Waitsome: statuses or values wrong");
    ask_for(0);
    CHECK_MPI(MPI_Testsome(kTags, requests, &outcount, indices, statuses));
    CHECK(outcount == 1 && indices[0] == 0 && values[0] == 0, "MPI_Testsome: %d complete", outcount);

    /* Testall only says yes once all are complete; null requests count as complete. */
    ask_for(2);
    ask_for(4);
    CHECK_MPI(MPI_Testall(kTags, requests, &flag, statuses));
    CHECK(flag == 0, "MPI_Testall: complete while tag 7 was never sent");
    ask_for(7);
    CHECK_MPI(MPI_Testall(kTags, requests, &flag, statuses));
    CHECK(flag == 1, "MPI_Testall: not complete once all arrived");
    for (int t = 0; t < kTags; ++t) {
      CHECK(requests[t] == MPI_REQUEST_NULL, "request %d not freed", t);
      CHECK(values[t] == t * 10, "tag %d: value %d", t, values[t]);
    }
    CHECK(statuses[7].MPI_TAG == 7 && statuses[7].MPI_SOURCE == 1, "MPI_Testall: status of tag 7");
    CHECK(statuses[3].MPI_TAG == MPI_ANY_TAG && statuses[3].MPI_SOURCE == MPI_ANY_SOURCE,
          "MPI_Testall: a null request's status is not empty");

    /* Only null requests: nothing to wait for. */
    CHECK_MPI(MPI_Waitany(kTags, requests, &index, &status));
    CHECK(index == MPI_UNDEFINED, "MPI_Waitany over null requests: index %d", index);
    CHECK_MPI(MPI_Waitsome(kTags, requests, &outcount, indices, statuses));
    CHECK(outcount == MPI_UNDEFINED, "MPI_Waitsome over null requests: outcount %d", outcount);
    CHECK_MPI(MPI_Testany(kTags, requests, &index, &flag, &status));
    CHECK(flag == 1 && index == MPI_UNDEFINED, "MPI_Testany over null requests");
    CHECK_MPI(MPI_Testsome(kTags, requests, &outcount, indices, statuses));
    CHECK(outcount == MPI_UNDEFINED, "MPI_Testsome over null requests: outcount %d", outcount);
    CHECK_MPI(MPI_Waitall(kTags, requests, MPI_STATUSES_IGNORE));
    CHECK_MPI(MPI_Waitall(0, NULL, NULL));

    const int done = kDone;
    CHECK_MPI(MPI_Send(&done, 1, MPI_INT, 1, kAsk, MPI_COMM_WORLD));
  }

  CHECK_MPI(MPI_Finalize());
  if (rank == 0) printf("waitany, waitsome, testany, testsome, testall: ok\n");
  return 0;
}

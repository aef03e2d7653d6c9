// Barrier by dissemination (Hensgen, Finkel and Manber, 1988).
//
// Round k (distance 2^k): send an empty message to rank + 2^k and receive one from rank - 2^k.
// After ceil(log2 p) rounds every rank has heard, directly or through others, from every rank.
// Cost: ceil(log2 p) * alpha, one message per rank per round, no data; unlike a tree it needs no
// separate fan-out, and it works for any p. It is the only barrier, so auto always picks it.
#include "algorithms.hpp"

namespace ftmpi::coll::detail {

void barrier_dissemination(ScheduleBuilder& b) {
  const int n = b.size();
  const int r = b.rank();
  for (int distance = 1; distance < n; distance <<= 1) {
    b.recv_empty((r - distance + n) % n);
    b.send_empty((r + distance) % n);
    b.end_round();
  }
}

}  // namespace ftmpi::coll::detail

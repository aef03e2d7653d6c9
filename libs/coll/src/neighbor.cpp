#include "ftmpi/coll/neighbor.hpp"

#include <string>

#include "builder.hpp"

namespace ftmpi::coll {

base::Result<Schedule> ineighbor_exchange(const Call& call, std::span<const NeighborSend> sends,
                                          std::span<const NeighborRecv> recvs) {
  const int n = call.transport.size();
  for (const NeighborSend& s : sends) {
    if (s.peer >= n) {
      return base::Status(base::Errc::invalid_argument, "neighbor exchange: peer " + std::to_string(s.peer) +
                                                            " is not a rank of a communicator of " + std::to_string(n));
    }
  }
  for (const NeighborRecv& r : recvs) {
    if (r.peer >= n) {
      return base::Status(base::Errc::invalid_argument, "neighbor exchange: peer " + std::to_string(r.peer) +
                                                            " is not a rank of a communicator of " + std::to_string(n));
    }
  }
  detail::ScheduleBuilder b(call.transport, call.tag);
  // Receives first: a message to oneself then finds its receive posted.
  for (const NeighborRecv& r : recvs) {
    if (r.peer >= 0) b.recv(r.data, r.bytes, r.peer);
  }
  for (const NeighborSend& s : sends) {
    if (s.peer >= 0) b.send(s.data, s.bytes, s.peer);
  }
  Schedule schedule = std::move(b).finish();
  if (auto progress = schedule.test(); !progress) return progress.status();
  return schedule;
}

}  // namespace ftmpi::coll

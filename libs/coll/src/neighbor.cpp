#include "ftmpi/coll/neighbor.hpp"

#include <string>

#include "builder.hpp"

namespace ftmpi::coll {

base::Result<Schedule> ineighbor_exchange(const Call& call, std::span<const NeighborSend> sends,
                                          std::span<const NeighborRecv> recvs) {
  const int n = call.transport.size();
  const auto out_of_range = [&](int peer) {
    return detail::invalid("neighbor exchange", "peer " + std::to_string(peer) + " is not a rank of a communicator of " +
                                                    std::to_string(n));
  };
  for (const NeighborSend& s : sends) {
    if (s.peer >= n) return out_of_range(s.peer);
  }
  for (const NeighborRecv& r : recvs) {
    if (r.peer >= n) return out_of_range(r.peer);
  }
  detail::ScheduleBuilder b(call.transport, call.tag);
  // Receives first: a message to oneself then finds its receive posted.
  for (const NeighborRecv& r : recvs) {
    if (r.peer >= 0) b.recv(r.data, r.bytes, r.peer);
  }
  for (const NeighborSend& s : sends) {
    if (s.peer >= 0) b.send(s.data, s.bytes, s.peer);
  }
  return detail::started(std::move(b).finish());
}

}  // namespace ftmpi::coll

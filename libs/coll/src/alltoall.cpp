// Alltoall, alltoallv (and alltoallw, which the MPI layer turns into byte counts and byte
// displacements). p ranks, b bytes per pair; alpha = latency per message, beta = time per byte.
//
// linear: post all p-1 receives and p-1 sends at once and let the transport sort them out.
//   About (p-1) * (alpha + b*beta) of work, but as much overlap as the transport allows and a
//   single round. Auto picks it for alltoall blocks up to coll.alltoall.linear_max, and for
//   alltoallv on communicators up to coll.alltoallv.linear_max_ranks ranks (an alltoallv's sizes
//   are not known alike everywhere, so only p can decide).
// pairwise: p-1 steps, one exchange each: with rank ^ i when p is a power of two, else sending to
//   rank + i while receiving from rank - i. (p-1) * (alpha + b*beta), never more than one message
//   in flight each way, so large exchanges do not swamp the receivers. Auto picks it above those
//   limits.
// In place, the data to send is first copied out of recv into scratch (one copy of the receive
// side's data); that copy is taken before any receive is posted.
#include <vector>

#include "algorithms.hpp"

namespace ftmpi::coll::detail {
namespace {

// Where block `peer` to send starts: in send, or in the scratch copy of recv when in place.
struct SendSide {
  const std::byte* base;
  ByteCounts bytes;
  std::vector<std::ptrdiff_t> displs;  // used when in place
  ByteDispls user_displs;

  const std::byte* block(int peer) const {
    const auto i = static_cast<std::size_t>(peer);
    return at(base, displs.empty() ? user_displs[i] : displs[i]);
  }
  std::size_t size(int peer) const { return bytes[static_cast<std::size_t>(peer)]; }
};

SendSide send_side(ScheduleBuilder& b, const std::byte* send, ByteCounts send_bytes, ByteDispls send_displs,
                   std::byte* recv, ByteCounts recv_bytes, ByteDispls recv_displs, bool in_place) {
  if (!in_place) return {send, send_bytes, {}, send_displs};
  // Pack recv's blocks into scratch; the copies run before this round posts anything.
  const auto n = static_cast<std::size_t>(b.size());
  std::size_t total = 0;
  for (std::size_t i = 0; i < n; ++i) total += recv_bytes[i];
  std::byte* packed = b.scratch(total);
  std::vector<std::ptrdiff_t> displs(n);
  std::size_t offset = 0;
  for (std::size_t i = 0; i < n; ++i) {
    displs[i] = static_cast<std::ptrdiff_t>(offset);
    b.copy(at(recv, recv_displs[i]), packed + offset, recv_bytes[i]);
    offset += recv_bytes[i];
  }
  return {packed, recv_bytes, std::move(displs), {}};
}

}  // namespace

void alltoallv_linear(ScheduleBuilder& b, const std::byte* send, ByteCounts send_bytes, ByteDispls send_displs,
                      std::byte* recv, ByteCounts recv_bytes, ByteDispls recv_displs, bool in_place) {
  const int n = b.size();
  const int r = b.rank();
  const SendSide out = send_side(b, send, send_bytes, send_displs, recv, recv_bytes, recv_displs, in_place);
  auto recv_block = [&](int peer) { return at(recv, recv_displs[static_cast<std::size_t>(peer)]); };
  auto recv_size = [&](int peer) { return recv_bytes[static_cast<std::size_t>(peer)]; };
  for (int i = 1; i < n; ++i) {
    const int from = (r - i + n) % n;
    b.recv(recv_block(from), recv_size(from), from);
  }
  for (int i = 1; i < n; ++i) {
    const int to = (r + i) % n;
    b.send(out.block(to), out.size(to), to);
  }
  b.copy(out.block(r), recv_block(r), out.size(r));
}

void alltoallv_pairwise(ScheduleBuilder& b, const std::byte* send, ByteCounts send_bytes,
                        ByteDispls send_displs, std::byte* recv, ByteCounts recv_bytes, ByteDispls recv_displs,
                        bool in_place) {
  const int n = b.size();
  const int r = b.rank();
  const SendSide out = send_side(b, send, send_bytes, send_displs, recv, recv_bytes, recv_displs, in_place);
  auto recv_block = [&](int peer) { return at(recv, recv_displs[static_cast<std::size_t>(peer)]); };
  auto recv_size = [&](int peer) { return recv_bytes[static_cast<std::size_t>(peer)]; };
  b.copy(out.block(r), recv_block(r), out.size(r));
  const bool pof2 = is_pof2(n);
  for (int i = 1; i < n; ++i) {
    const int to = pof2 ? r ^ i : (r + i) % n;
    const int from = pof2 ? r ^ i : (r - i + n) % n;
    b.recv(recv_block(from), recv_size(from), from);
    b.send(out.block(to), out.size(to), to);
    b.end_round();
  }
}

}  // namespace ftmpi::coll::detail

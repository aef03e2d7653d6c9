// Allgather and allgatherv. p ranks, m bytes gathered in all (m/p per rank for allgather);
// alpha = latency per message, beta = time per byte.
//
// recursive_doubling (p a power of two): in step k, exchange the 2^k blocks gathered so far with
//   rank ^ 2^k, straight into their places. log2 p * alpha + (p-1)/p * m*beta. Auto picks it up to
//   coll.allgather.short_max when p is a power of two. The v-variant sends each block of the run
//   as its own message (blocks may sit anywhere in recv), still one round per step.
// bruck (any p): in step k, send the first min(2^k, p - 2^k) blocks gathered so far to rank - 2^k
//   and receive as many from rank + 2^k into a scratch buffer, then rotate into place.
//   ceil(log2 p) * alpha + (p-1)/p * m*beta + m for the rotation. Auto picks it up to
//   coll.allgather.short_max when p is not a power of two.
// ring: p-1 steps, each passing the block received last to the right. (p-1) * alpha +
//   (p-1)/p * m*beta, only neighbour links: auto picks it above coll.allgather.short_max.
#include <algorithm>

#include "algorithms.hpp"

namespace ftmpi::coll::detail {

void allgather_recursive_doubling(ScheduleBuilder& b, const std::byte* send, std::byte* recv, std::size_t bytes) {
  const int n = b.size();
  const int r = b.rank();
  b.copy(send, recv + static_cast<std::size_t>(r) * bytes, bytes);
  for (int mask = 1; mask < n; mask <<= 1) {
    const int partner = r ^ mask;
    const auto mine = static_cast<std::size_t>(r & ~(mask - 1));
    const auto theirs = static_cast<std::size_t>(partner & ~(mask - 1));
    const auto run = static_cast<std::size_t>(mask) * bytes;
    b.recv(recv + theirs * bytes, run, partner);
    b.send(recv + mine * bytes, run, partner);
    b.end_round();
  }
}

void allgather_bruck(ScheduleBuilder& b, const std::byte* send, std::byte* recv, std::size_t bytes) {
  const int n = b.size();
  const int r = b.rank();
  if (n == 1) {
    b.copy(send, recv, bytes);
    return;
  }
  // gathered[j] is the block of rank (r + j) % n.
  std::byte* gathered = b.scratch(static_cast<std::size_t>(n) * bytes);
  b.copy(send, gathered, bytes);
  for (int distance = 1; distance < n; distance <<= 1) {
    const auto blocks = static_cast<std::size_t>(std::min(distance, n - distance));
    b.recv(gathered + static_cast<std::size_t>(distance) * bytes, blocks * bytes, (r + distance) % n);
    b.send(gathered, blocks * bytes, (r - distance + n) % n);
    b.end_round();
  }
  const auto head = static_cast<std::size_t>(n - r) * bytes;
  b.copy(gathered, recv + static_cast<std::size_t>(r) * bytes, head);
  b.copy(gathered + head, recv, static_cast<std::size_t>(r) * bytes);
}

void allgather_ring(ScheduleBuilder& b, const std::byte* send, std::byte* recv, std::size_t bytes) {
  const int n = b.size();
  const int r = b.rank();
  b.copy(send, recv + static_cast<std::size_t>(r) * bytes, bytes);
  const int left = (r - 1 + n) % n;
  const int right = (r + 1) % n;
  for (int i = 0; i < n - 1; ++i) {
    const auto send_block = static_cast<std::size_t>((r - i + n) % n);
    const auto recv_block = static_cast<std::size_t>((r - i - 1 + n) % n);
    b.recv(recv + recv_block * bytes, bytes, left);
    b.send(recv + send_block * bytes, bytes, right);
    b.end_round();
  }
}

void allgatherv_recursive_doubling(ScheduleBuilder& b, const std::byte* send, std::byte* recv,
                                   ByteCounts recv_bytes, ByteDispls recv_displs) {
  const int n = b.size();
  const int r = b.rank();
  auto block = [&](int i) { return at(recv, recv_displs[static_cast<std::size_t>(i)]); };
  auto size = [&](int i) { return recv_bytes[static_cast<std::size_t>(i)]; };
  b.copy(send, block(r), size(r));
  for (int mask = 1; mask < n; mask <<= 1) {
    const int partner = r ^ mask;
    const int mine = r & ~(mask - 1);
    const int theirs = partner & ~(mask - 1);
    for (int j = theirs; j < theirs + mask; ++j) b.recv(block(j), size(j), partner);
    for (int j = mine; j < mine + mask; ++j) b.send(block(j), size(j), partner);
    b.end_round();
  }
}

void allgatherv_ring(ScheduleBuilder& b, const std::byte* send, std::byte* recv, ByteCounts recv_bytes,
                     ByteDispls recv_displs) {
  const int n = b.size();
  const int r = b.rank();
  auto block = [&](int i) { return at(recv, recv_displs[static_cast<std::size_t>(i)]); };
  auto size = [&](int i) { return recv_bytes[static_cast<std::size_t>(i)]; };
  b.copy(send, block(r), size(r));
  const int left = (r - 1 + n) % n;
  const int right = (r + 1) % n;
  for (int i = 0; i < n - 1; ++i) {
    const int send_block = (r - i + n) % n;
    const int recv_block = (r - i - 1 + n) % n;
    b.recv(block(recv_block), size(recv_block), left);
    b.send(block(send_block), size(send_block), right);
    b.end_round();
  }
}

}  // namespace ftmpi::coll::detail

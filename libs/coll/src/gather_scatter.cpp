// Gather and scatter (and their v-variants). p ranks, b bytes per rank; alpha = latency per
// message, beta = time per byte.
//
// binomial: blocks travel along a binomial tree rooted at the root, each rank passing on (gather)
//   or handing down (scatter) the contiguous blocks of its subtree in one message.
//   ceil(log2 p) * alpha + (p-1) * b*beta at the root, but intermediate ranks copy their subtree's
//   data once more. Auto picks it while p * b <= coll.gather.binomial_max.
// linear: the root exchanges one message with every rank, all posted at once. (p-1) * alpha +
//   (p-1) * b*beta at the root, no forwarding. Auto picks it above coll.gather.binomial_max.
// gatherv and scatterv are always linear: only the root knows the sizes, so no rank could forward
//   a subtree's blocks.
#include <algorithm>

#include "algorithms.hpp"

namespace ftmpi::coll::detail {

void gather_linear(ScheduleBuilder& b, const std::byte* send, std::byte* recv, std::size_t bytes, int root) {
  const int n = b.size();
  if (b.rank() != root) {
    b.send(send, bytes, root);
    return;
  }
  for (int i = 1; i < n; ++i) {
    const int peer = (root + i) % n;
    b.recv(recv + static_cast<std::size_t>(peer) * bytes, bytes, peer);
  }
  b.copy(send, recv + static_cast<std::size_t>(root) * bytes, bytes);
}

void gather_binomial(ScheduleBuilder& b, const std::byte* send, std::byte* recv, std::size_t bytes, int root) {
  const int n = b.size();
  const int r = b.rank();
  const int v = (r - root + n) % n;
  auto real = [&](int relative) { return (relative + root) % n; };
  const int span = subtree_span(v, n);
  const int subtree = std::min(span, n - v);  // ranks v .. v + subtree - 1, relative
  if (subtree == 1 && r != root) {
    b.send(send, bytes, real(v - span));
    return;
  }
  // The subtree's blocks in relative order; at root 0 that is recv itself.
  std::byte* collected = r == root && root == 0 ? recv : b.scratch(static_cast<std::size_t>(subtree) * bytes);
  b.copy(send, collected, bytes);
  for (int mask = 1; mask < span && v + mask < n; mask <<= 1) {
    const int child = v + mask;
    const int child_subtree = std::min(mask, n - child);
    b.recv(collected + static_cast<std::size_t>(mask) * bytes, static_cast<std::size_t>(child_subtree) * bytes,
           real(child));
  }
  b.end_round();
  if (r != root) {
    b.send(collected, static_cast<std::size_t>(subtree) * bytes, real(v - span));
  } else if (root != 0) {
    // Relative block j belongs to rank (j + root) % n: two runs.
    const auto head = static_cast<std::size_t>(n - root) * bytes;
    b.copy(collected, recv + static_cast<std::size_t>(root) * bytes, head);
    b.copy(collected + head, recv, static_cast<std::size_t>(root) * bytes);
  }
}

void gatherv_linear(ScheduleBuilder& b, const std::byte* send, std::size_t send_bytes, std::byte* recv,
                    ByteCounts recv_bytes, ByteDispls recv_displs, int root) {
  const int n = b.size();
  if (b.rank() != root) {
    b.send(send, send_bytes, root);
    return;
  }
  for (int i = 1; i < n; ++i) {
    const auto peer = static_cast<std::size_t>((root + i) % n);
    b.recv(at(recv, recv_displs[peer]), recv_bytes[peer], static_cast<int>(peer));
  }
  b.copy(send, at(recv, recv_displs[static_cast<std::size_t>(root)]), send_bytes);
}

void scatter_linear(ScheduleBuilder& b, const std::byte* send, std::byte* recv, std::size_t bytes, int root) {
  const int n = b.size();
  if (b.rank() != root) {
    b.recv(recv, bytes, root);
    return;
  }
  for (int i = 1; i < n; ++i) {
    const int peer = (root + i) % n;
    b.send(send + static_cast<std::size_t>(peer) * bytes, bytes, peer);
  }
  if (recv != nullptr) b.copy(send + static_cast<std::size_t>(root) * bytes, recv, bytes);
}

void scatter_binomial(ScheduleBuilder& b, const std::byte* send, std::byte* recv, std::size_t bytes, int root) {
  const int n = b.size();
  const int r = b.rank();
  const int v = (r - root + n) % n;
  auto real = [&](int relative) { return (relative + root) % n; };
  const int span = subtree_span(v, n);
  const int subtree = std::min(span, n - v);
  if (subtree == 1 && r != root) {
    b.recv(recv, bytes, real(v - span));
    return;
  }
  // The subtree's blocks in relative order.
  const std::byte* blocks = send;
  if (r != root) {
    std::byte* buffer = b.scratch(static_cast<std::size_t>(subtree) * bytes);
    b.recv(buffer, static_cast<std::size_t>(subtree) * bytes, real(v - span));
    b.end_round();
    blocks = buffer;
  } else if (root != 0) {
    std::byte* buffer = b.scratch(static_cast<std::size_t>(n) * bytes);
    const auto head = static_cast<std::size_t>(n - root) * bytes;
    b.copy(send + static_cast<std::size_t>(root) * bytes, buffer, head);
    b.copy(send, buffer + head, static_cast<std::size_t>(root) * bytes);
    blocks = buffer;
  }
  for (int mask = span >> 1; mask > 0; mask >>= 1) {
    const int child = v + mask;
    if (child >= n) continue;
    const int child_subtree = std::min(mask, n - child);
    b.send(blocks + static_cast<std::size_t>(mask) * bytes, static_cast<std::size_t>(child_subtree) * bytes,
           real(child));
  }
  if (recv != nullptr) b.copy(blocks, recv, bytes);
}

void scatterv_linear(ScheduleBuilder& b, const std::byte* send, ByteCounts send_bytes, ByteDispls send_displs,
                     std::byte* recv, std::size_t recv_bytes, int root) {
  const int n = b.size();
  if (b.rank() != root) {
    b.recv(recv, recv_bytes, root);
    return;
  }
  for (int i = 1; i < n; ++i) {
    const auto peer = static_cast<std::size_t>((root + i) % n);
    b.send(at(send, send_displs[peer]), send_bytes[peer], static_cast<int>(peer));
  }
  if (recv != nullptr) b.copy(at(send, send_displs[static_cast<std::size_t>(root)]), recv, recv_bytes);
}

}  // namespace ftmpi::coll::detail

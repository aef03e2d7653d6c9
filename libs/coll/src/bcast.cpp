// Broadcast. p ranks, m bytes; alpha = latency per message, beta = time per byte.
//
// binomial: the root sends the whole message down a binomial tree (relative rank v receives from
//   v - lowbit(v), then sends to v + 2^k for each 2^k below lowbit(v)). ceil(log2 p) * (alpha + m*beta).
//   Best for small messages, where latency dominates. Auto picks it up to coll.bcast.short_max, and
//   always on two ranks (every algorithm is then one transfer, and this one does not split it).
// scatter_allgather (van de Geijn): binomial scatter of p chunks of m/p, then a ring allgather of the
//   chunks. (log2 p + p - 1) * alpha + 2 (p-1)/p * m * beta: about 2 m beta whatever p is. Auto
//   picks it between coll.bcast.short_max and coll.bcast.pipeline_min.
// pipeline: a chain root -> root+1 -> ... cut into segments of s bytes (coll.segment_size); each
//   rank forwards segment i while receiving segment i+1. (p - 2 + m/s) * (alpha + s*beta): close to
//   m * beta for large m, the least data per link. Auto picks it from coll.bcast.pipeline_min.
#include <algorithm>

#include "algorithms.hpp"

namespace ftmpi::coll::detail {

void bcast_binomial(ScheduleBuilder& b, std::byte* buffer, std::size_t bytes, int root) {
  const int n = b.size();
  const int v = (b.rank() - root + n) % n;
  auto real = [&](int relative) { return (relative + root) % n; };
  const int span = subtree_span(v, n);
  if (v != 0) {
    b.recv(buffer, bytes, real(v - span));
    b.end_round();
  }
  for (int mask = span >> 1; mask > 0; mask >>= 1) {
    if (v + mask < n) b.send(buffer, bytes, real(v + mask));
  }
  b.end_round();
}

void bcast_pipeline(ScheduleBuilder& b, std::byte* buffer, std::size_t bytes, int root, std::size_t segment) {
  const int n = b.size();
  const int v = (b.rank() - root + n) % n;
  if (n == 1 || bytes == 0) return;
  segment = std::max<std::size_t>(segment, 1);
  const std::size_t segments = (bytes + segment - 1) / segment;
  auto seg_bytes = [&](std::size_t s) { return std::min(segment, bytes - s * segment); };
  auto seg = [&](std::size_t s) { return buffer + s * segment; };
  const int prev = (v - 1 + root + n) % n;
  const int next = (v + 1 + root) % n;
  const bool has_next = v < n - 1;
  for (std::size_t s = 0; s <= segments; ++s) {
    if (v == 0) {
      if (s < segments) b.send(seg(s), seg_bytes(s), next);
    } else {
      if (s < segments) b.recv(seg(s), seg_bytes(s), prev);
      if (s > 0 && has_next) b.send(seg(s - 1), seg_bytes(s - 1), next);
    }
    b.end_round();
  }
}

void bcast_scatter_allgather(ScheduleBuilder& b, std::byte* buffer, std::size_t bytes, int root) {
  const int n = b.size();
  const int v = (b.rank() - root + n) % n;
  if (n == 1 || bytes == 0) return;
  auto real = [&](int relative) { return (relative + root) % n; };
  // Relative rank j owns chunk j; chunks past the end of the message are empty.
  const std::size_t chunk = (bytes + static_cast<std::size_t>(n) - 1) / static_cast<std::size_t>(n);
  auto offset = [&](int first) { return std::min(static_cast<std::size_t>(first) * chunk, bytes); };
  auto chunks_bytes = [&](int first, int how_many) { return offset(first + how_many) - offset(first); };

  // Scatter: each rank receives the chunks of its subtree, then hands its children theirs.
  const int span = subtree_span(v, n);
  if (v != 0) {
    b.recv(buffer + offset(v), chunks_bytes(v, span), real(v - span));
    b.end_round();
  }
  for (int mask = span >> 1; mask > 0; mask >>= 1) {
    if (v + mask < n) b.send(buffer + offset(v + mask), chunks_bytes(v + mask, mask), real(v + mask));
  }
  b.end_round();

  // Ring allgather: in step i, pass chunk v - i to the right, receive chunk v - i - 1 from the left.
  // The root has every chunk already, so it receives nothing and its left neighbour sends it nothing.
  const int left = real((v - 1 + n) % n);
  const int right = real((v + 1) % n);
  for (int i = 0; i < n - 1; ++i) {
    const int send_chunk = (v - i + n) % n;
    const int recv_chunk = (v - i - 1 + n) % n;
    if (v != 0) b.recv(buffer + offset(recv_chunk), chunks_bytes(recv_chunk, 1), left);
    if (v != n - 1) b.send(buffer + offset(send_chunk), chunks_bytes(send_chunk, 1), right);
    b.end_round();
  }
}

}  // namespace ftmpi::coll::detail

// Reduce. p ranks, m bytes; alpha = latency per message, beta = time per byte, gamma = time per
// byte reduced.
//
// binomial: partial results flow up a binomial tree; a rank receives from all its children at once
//   and combines them in order. ceil(log2 p) * (alpha + m*beta + m*gamma). Best for small vectors.
//   Auto picks it below coll.reduce.pipeline_min.
// pipeline: a chain p-1 -> p-2 -> ... -> 0 cut into segments of coll.segment_size; each rank
//   combines segment i with its own while the next one arrives. (p - 2 + m/s) * (alpha + s*beta +
//   s*gamma): about m * (beta + gamma) for large m. Auto picks it from coll.reduce.pipeline_min.
// Order: a commutative op runs on ranks relative to the root, so the result lands at the root
//   directly. A non-commutative one runs on ranks as they are, so every combination is (lower
//   ranks) op (higher ranks) and the result x_0 op ... op x_(p-1) forms at rank 0, which passes it
//   to the root (one more alpha + m*beta, segmented too in the pipeline).
#include <algorithm>
#include <vector>

#include "algorithms.hpp"

namespace ftmpi::coll::detail {

void reduce_binomial(ScheduleBuilder& b, const std::byte* send, std::byte* recv, std::size_t count, int root) {
  const int n = b.size();
  const int r = b.rank();
  const std::size_t bytes = count * b.element_size();
  if (n == 1) {
    b.copy(send, recv, bytes);
    return;
  }
  if (count == 0) return;
  const int top = b.commutative() ? root : 0;
  const int v = (r - top + n) % n;
  auto real = [&](int relative) { return (relative + top) % n; };
  const int span = subtree_span(v, n);

  // Children in increasing distance hold increasingly higher relative ranks, so folding them in that
  // order keeps (lower) op (higher): acc = acc op child, written into the child's buffer.
  std::vector<std::byte*> from_children;
  for (int mask = 1; mask < span && v + mask < n; mask <<= 1) {
    std::byte* buffer = b.scratch(bytes);
    b.recv(buffer, bytes, real(v + mask));
    from_children.push_back(buffer);
  }
  b.end_round();
  const std::byte* acc = send;
  for (std::byte* child : from_children) {
    b.reduce(acc, child, count);
    acc = child;
  }
  if (v != 0) {
    b.send(acc, bytes, real(v - span));
  } else if (r == root) {
    b.copy(acc, recv, bytes);
  } else {
    b.send(acc, bytes, root);  // rank 0 hands a non-commutative result to the root
  }
  b.end_round();
  if (r == root && top != root) {
    b.recv(recv, bytes, top);
    b.end_round();
  }
}

void reduce_pipeline(ScheduleBuilder& b, const std::byte* send, std::byte* recv, std::size_t count, int root,
                     std::size_t segment) {
  const int n = b.size();
  const int r = b.rank();
  const std::size_t es = b.element_size();
  if (n == 1) {
    b.copy(send, recv, count * es);
    return;
  }
  if (count == 0) return;
  const std::size_t seg_count = std::max<std::size_t>(segment / es, 1);
  const std::size_t segments = (count + seg_count - 1) / seg_count;
  auto seg_elems = [&](std::size_t s) { return std::min(seg_count, count - s * seg_count); };
  auto seg_of = [&](auto* base, std::size_t s) { return base + s * seg_count * es; };

  const int top = b.commutative() ? root : 0;
  const int v = (r - top + n) % n;
  auto real = [&](int relative) { return (relative + top) % n; };
  const bool has_prev = v < n - 1;  // receives partial results of the higher ranks from v + 1
  const bool to_root = v == 0 && r != root;
  const int next = v > 0 ? real(v - 1) : root;
  const bool has_next = v > 0 || to_root;
  const bool sink = r == root && top != root;  // the root of a non-commutative reduce, fed by rank 0

  std::byte* partial[2] = {nullptr, nullptr};
  if (has_prev) {
    partial[0] = b.scratch(seg_count * es);
    partial[1] = b.scratch(seg_count * es);
  }
  for (std::size_t s = 0; s <= segments; ++s) {
    if (has_prev) {
      if (s > 0) {
        // Segment s-1: (mine) op (the higher ranks'), into the buffer it arrived in.
        std::byte* got = partial[(s - 1) % 2];
        b.reduce(seg_of(send, s - 1), got, seg_elems(s - 1));
        if (has_next) b.send(got, seg_elems(s - 1) * es, next);
        else b.copy(got, seg_of(recv, s - 1), seg_elems(s - 1) * es);
      }
      if (s < segments) b.recv(partial[s % 2], seg_elems(s) * es, real(v + 1));
    } else if (s < segments) {
      b.send(seg_of(send, s), seg_elems(s) * es, next);  // the end of the chain sends its own data
    }
    // After the reduce above read this rank's input (recv itself when in place).
    if (sink && s > 0) b.recv(seg_of(recv, s - 1), seg_elems(s - 1) * es, top);
    b.end_round();
  }
}

}  // namespace ftmpi::coll::detail

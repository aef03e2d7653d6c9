// Scan (inclusive prefix) and exscan (exclusive prefix). p ranks, m bytes; alpha = latency per
// message, beta = time per byte, gamma = time per byte reduced.
//
// recursive_doubling: in step k, exchange the partial result of this rank's aligned group of 2^k
//   ranks with rank ^ 2^k; a partial from below is prepended to the prefix. ceil(log2 p) *
//   (alpha + m*beta + 2 m*gamma). Auto picks it below coll.scan.pipeline_min.
// pipeline: a chain 0 -> 1 -> ... -> p-1 cut into segments of coll.segment_size; rank r
//   receives the prefix of ranks < r segment by segment, combines it with its own and passes it on.
//   (p - 2 + m/s) * (alpha + s*beta + s*gamma): about m * (beta + gamma) for large m, where
//   recursive doubling costs log2 p times that. Auto picks it from coll.scan.pipeline_min.
// Both keep rank order ((lower ranks) op (higher ranks)), so non-commutative ops are fine.
#include <algorithm>

#include "algorithms.hpp"

namespace ftmpi::coll::detail {
namespace {

// acc = acc op other (other from higher ranks); `other` is scratch and may be overwritten.
void append(ScheduleBuilder& b, std::byte* acc, std::byte* other, std::size_t count) {
  if (b.commutative()) {
    b.reduce(other, acc, count);
  } else {
    b.reduce(acc, other, count);
    b.copy(other, acc, count * b.element_size());
  }
}

}  // namespace

void scan_recursive_doubling(ScheduleBuilder& b, const std::byte* send, std::byte* recv, std::size_t count) {
  const int n = b.size();
  const int r = b.rank();
  const std::size_t bytes = count * b.element_size();
  if (n == 1 || count == 0) {
    b.copy(send, recv, bytes);
    return;
  }
  // partial: the reduction over this rank's aligned group so far; recv: the prefix up to this rank.
  std::byte* partial = b.scratch(bytes);
  std::byte* tmp = b.scratch(bytes);
  b.copy(send, partial, bytes);
  b.copy(send, recv, bytes);
  for (int mask = 1; mask < n; mask <<= 1) {
    const int partner = r ^ mask;
    if (partner >= n) continue;
    b.recv(tmp, bytes, partner);
    b.send(partial, bytes, partner);
    b.end_round();
    if (partner < r) {
      b.reduce(tmp, partial, count);
      b.reduce(tmp, recv, count);
    } else {
      append(b, partial, tmp, count);
    }
  }
  b.end_round();
}

void exscan_recursive_doubling(ScheduleBuilder& b, const std::byte* send, std::byte* recv, std::size_t count) {
  const int n = b.size();
  const int r = b.rank();
  const std::size_t bytes = count * b.element_size();
  if (n == 1 || count == 0) return;
  std::byte* partial = b.scratch(bytes);
  std::byte* tmp = b.scratch(bytes);
  b.copy(send, partial, bytes);  // before recv is written, which matters in place
  bool have_prefix = false;
  for (int mask = 1; mask < n; mask <<= 1) {
    const int partner = r ^ mask;
    if (partner >= n) continue;
    b.recv(tmp, bytes, partner);
    b.send(partial, bytes, partner);
    b.end_round();
    if (partner < r) {
      if (have_prefix) b.reduce(tmp, recv, count);
      else b.copy(tmp, recv, bytes);
      have_prefix = true;
      b.reduce(tmp, partial, count);
    } else {
      append(b, partial, tmp, count);
    }
  }
  b.end_round();
}

void scan_pipeline(ScheduleBuilder& b, const std::byte* send, std::byte* recv, std::size_t count,
                   std::size_t segment) {
  const int n = b.size();
  const int r = b.rank();
  const std::size_t es = b.element_size();
  b.copy(send, recv, count * es);  // recv becomes the prefix, segment by segment
  if (n == 1 || count == 0) return;
  const std::size_t seg_count = std::max<std::size_t>(segment / es, 1);
  const std::size_t segments = (count + seg_count - 1) / seg_count;
  auto seg_elems = [&](std::size_t s) { return std::min(seg_count, count - s * seg_count); };
  auto seg_of = [&](auto* base, std::size_t s) { return base + s * seg_count * es; };
  std::byte* below[2] = {nullptr, nullptr};
  if (r > 0) {
    below[0] = b.scratch(seg_count * es);
    below[1] = b.scratch(seg_count * es);
  }
  for (std::size_t s = 0; s <= segments; ++s) {
    if (s > 0) {
      if (r > 0) b.reduce(below[(s - 1) % 2], seg_of(recv, s - 1), seg_elems(s - 1));
      if (r < n - 1) b.send(seg_of(recv, s - 1), seg_elems(s - 1) * es, r + 1);
    }
    if (r > 0 && s < segments) b.recv(below[s % 2], seg_elems(s) * es, r - 1);
    b.end_round();
  }
}

void exscan_pipeline(ScheduleBuilder& b, const std::byte* send, std::byte* recv, std::size_t count,
                     std::size_t segment) {
  const int n = b.size();
  const int r = b.rank();
  const std::size_t es = b.element_size();
  if (n == 1 || count == 0) return;
  const std::size_t seg_count = std::max<std::size_t>(segment / es, 1);
  const std::size_t segments = (count + seg_count - 1) / seg_count;
  auto seg_elems = [&](std::size_t s) { return std::min(seg_count, count - s * seg_count); };
  auto seg_of = [&](auto* base, std::size_t s) { return base + s * seg_count * es; };
  // Rank r > 0 receives its result (the prefix below it) straight into recv; in place that is where
  // its input is, so the input is set aside first.
  const std::byte* mine = send;
  if (r > 0 && send == recv && r < n - 1) {
    std::byte* saved = b.scratch(count * es);
    b.copy(send, saved, count * es);
    mine = saved;
  }
  std::byte* outgoing[2] = {nullptr, nullptr};
  if (r > 0 && r < n - 1) {
    outgoing[0] = b.scratch(seg_count * es);
    outgoing[1] = b.scratch(seg_count * es);
  }
  for (std::size_t s = 0; s <= segments; ++s) {
    if (s > 0 && r < n - 1) {
      const std::size_t j = s - 1;
      if (r == 0) {
        b.send(seg_of(mine, j), seg_elems(j) * es, r + 1);
      } else {
        // (prefix below) op (mine)
        std::byte* out = outgoing[j % 2];
        b.copy(seg_of(mine, j), out, seg_elems(j) * es);
        b.reduce(seg_of(recv, j), out, seg_elems(j));
        b.send(out, seg_elems(j) * es, r + 1);
      }
    }
    if (r > 0 && s < segments) b.recv(seg_of(recv, s), seg_elems(s) * es, r - 1);
    b.end_round();
  }
}

}  // namespace ftmpi::coll::detail

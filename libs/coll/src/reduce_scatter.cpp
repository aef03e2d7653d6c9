// Reduce_scatter and reduce_scatter_block. p ranks, m bytes in the whole vector (rank i gets
// block i); alpha = latency per message, beta = time per byte, gamma = time per byte reduced;
// p' = the largest power of two <= p.
//
// recursive_halving (commutative ops): after the non-power-of-two fold (ranks 2i and 2i+1 < 2(p-p')
//   combine into 2i+1, which answers for both blocks), log2 p' steps each exchange half of the
//   remaining range with rank ^ 2^k (distance halving), then the survivors of the fold hand the
//   even ranks their blocks. log2 p' * alpha + (p'-1)/p' * m*(beta + gamma), plus m*beta for the
//   fold. Partners are not neighbours in rank order, hence commutative only. Auto picks it up to
//   coll.reduce_scatter.short_max for commutative ops.
// pairwise (any op): p-1 steps; in step i send block r+i to rank r+i and receive rank r-i's
//   contribution to block r. (p-1) * alpha + (p-1)/p * m*(beta + gamma). A non-commutative op is
//   applied in rank order: contributions arrive from r-1, r-2, ..., 0, then p-1, ..., r+1, each
//   prepended to the run below or above r, and the result is (below) op (mine) op (above). Auto
//   picks it for large vectors and non-commutative ops.
#include <numeric>
#include <utility>
#include <vector>

#include "algorithms.hpp"

namespace ftmpi::coll::detail {
namespace {

std::vector<std::size_t> starts_of(std::span<const std::size_t> counts) {
  std::vector<std::size_t> starts(counts.size() + 1, 0);
  std::partial_sum(counts.begin(), counts.end(), starts.begin() + 1);
  return starts;
}

}  // namespace

void reduce_scatter_recursive_halving(ScheduleBuilder& b, const std::byte* send, std::byte* recv,
                                      std::span<const std::size_t> counts) {
  const int n = b.size();
  const int r = b.rank();
  const std::size_t es = b.element_size();
  const std::vector<std::size_t> starts = starts_of(counts);
  const std::size_t total = starts.back();
  const auto me = static_cast<std::size_t>(r);
  if (n == 1) {
    b.copy(send, recv, counts[0] * es);
    return;
  }
  if (total == 0) return;
  const int pof2 = pof2_floor(n);
  const int remainder = n - pof2;
  std::byte* acc = b.scratch(total * es);
  std::byte* tmp = b.scratch(total * es);
  b.copy(send, acc, total * es);

  int folded = -1;
  if (r < 2 * remainder) {
    if (r % 2 == 0) {
      b.send(acc, total * es, r + 1);
      b.end_round();
    } else {
      b.recv(tmp, total * es, r - 1);
      b.end_round();
      b.reduce(tmp, acc, total);
      folded = r / 2;
    }
  } else {
    folded = r - remainder;
  }

  if (folded >= 0) {
    // Folded rank f answers for the blocks of real ranks first(f) .. first(f+1)-1.
    auto first = [&](int f) { return f == pof2 ? n : (f < remainder ? 2 * f : f + remainder); };
    auto real_rank = [&](int f) { return f < remainder ? 2 * f + 1 : f + remainder; };
    auto elem = [&](int f) { return starts[static_cast<std::size_t>(first(f))]; };
    int lo = 0;
    int hi = pof2;
    for (int mask = pof2 >> 1; mask >= 1; mask >>= 1) {
      const int partner_folded = folded ^ mask;
      const int partner = real_rank(partner_folded);
      const int mid = lo + mask;
      const bool lower = folded < partner_folded;
      const int keep_lo = lower ? lo : mid;
      const int keep_hi = lower ? mid : hi;
      const int give_lo = lower ? mid : lo;
      const int give_hi = lower ? hi : mid;
      const std::size_t keep_count = elem(keep_hi) - elem(keep_lo);
      b.recv(tmp + elem(keep_lo) * es, keep_count * es, partner);
      b.send(acc + elem(give_lo) * es, (elem(give_hi) - elem(give_lo)) * es, partner);
      b.end_round();
      b.reduce(tmp + elem(keep_lo) * es, acc + elem(keep_lo) * es, keep_count);
      lo = keep_lo;
      hi = keep_hi;
    }
  }

  if (r < 2 * remainder && r % 2 == 0) {
    b.recv(recv, counts[me] * es, r + 1);
  } else {
    if (r < 2 * remainder) b.send(acc + starts[me - 1] * es, counts[me - 1] * es, r - 1);
    b.copy(acc + starts[me] * es, recv, counts[me] * es);
  }
  b.end_round();
}

void reduce_scatter_pairwise(ScheduleBuilder& b, const std::byte* send, std::byte* recv,
                             std::span<const std::size_t> counts) {
  const int n = b.size();
  const int r = b.rank();
  const std::size_t es = b.element_size();
  const std::vector<std::size_t> starts = starts_of(counts);
  const auto me = static_cast<std::size_t>(r);
  const std::size_t count = counts[me];
  const std::size_t bytes = count * es;
  const std::byte* mine = send + starts[me] * es;
  auto block_to = [&](int peer) {
    const auto p = static_cast<std::size_t>(peer);
    return std::pair{send + starts[p] * es, counts[p] * es};
  };
  if (n == 1) {
    b.copy(mine, recv, bytes);
    return;
  }
  std::byte* tmp = b.scratch(bytes);

  if (b.commutative()) {
    // In place, recv's start holds other ranks' blocks until they are sent: accumulate aside.
    std::byte* acc = send == recv ? b.scratch(bytes) : recv;
    b.copy(mine, acc, bytes);
    for (int i = 1; i < n; ++i) {
      const int to = (r + i) % n;
      const int from = (r - i + n) % n;
      b.recv(tmp, bytes, from);
      auto [data, size] = block_to(to);
      b.send(data, size, to);
      b.end_round();
      b.reduce(tmp, acc, count);
    }
    b.copy(acc, recv, bytes);
    b.end_round();
    return;
  }

  // below = x_0 op ... op x_(r-1), above = x_(r+1) op ... op x_(n-1), each grown by prepending.
  std::byte* below = r > 0 ? b.scratch(bytes) : nullptr;
  std::byte* above = r < n - 1 ? b.scratch(bytes) : nullptr;
  for (int i = 1; i < n; ++i) {
    const int to = (r + i) % n;
    const int from = (r - i + n) % n;
    const bool first_below = from == r - 1;
    const bool first_above = from == n - 1;
    std::byte* into = first_below ? below : first_above ? above : tmp;
    b.recv(into, bytes, from);
    auto [data, size] = block_to(to);
    b.send(data, size, to);
    b.end_round();
    if (into == tmp) b.reduce(tmp, from < r ? below : above, count);
  }
  std::byte* result = above;
  if (above != nullptr) {
    b.reduce(mine, above, count);
  } else {
    b.copy(mine, tmp, bytes);
    result = tmp;
  }
  if (below != nullptr) b.reduce(below, result, count);
  b.copy(result, recv, bytes);
  b.end_round();
}

}  // namespace ftmpi::coll::detail

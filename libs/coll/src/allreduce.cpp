// Allreduce. p ranks, m bytes; alpha = latency per message, beta = time per byte, gamma = time per
// byte reduced; p' = the largest power of two <= p.
//
// Non-power-of-two fold (all three keep it in mind): with r = p - p', ranks 2i and 2i+1 (i < r)
// first combine into rank 2i+1, the p' remaining ranks run the power-of-two algorithm, and 2i+1
// hands the result back to 2i: 2 * (alpha + m*beta) more, and only when p is not a power of two.
//
// recursive_doubling: log2 p' exchanges of the whole vector with rank ^ 2^k.
//   log2 p' * (alpha + m*beta + m*gamma). Best for small vectors. Auto picks it up to
//   coll.allreduce.short_max, on two ranks, and whenever the vector has fewer elements than p'.
// rabenseifner: reduce-scatter by recursive halving (vector halving, distance doubling), then
//   allgather by recursive doubling, undoing the halving. 2 log2 p' * alpha + 2 (p'-1)/p' * m*beta +
//   (p'-1)/p' * m*gamma: near the bandwidth bound. Auto picks it above coll.allreduce.short_max on a
//   power-of-two number of ranks, or for a non-commutative op.
// ring: reduce-scatter around the ring (p-1 steps of m/p), then allgather around it (p-1 steps).
//   2 (p-1) * alpha + 2 (p-1)/p * m*beta + (p-1)/p * m*gamma, with no fold: auto picks it above
//   coll.allreduce.short_max for a commutative op when p is not a power of two. Each block is
//   combined starting from a different rank, so the ring needs a commutative op.
// Order: in the fold and in both power-of-two algorithms a rank's partial result always covers a
//   contiguous run of ranks, combined as (lower run) op (higher run); a non-commutative op is thus
//   applied in rank order, and every rank ends with the same bits.
#include <vector>

#include "algorithms.hpp"

namespace ftmpi::coll::detail {
namespace {

// The fold for p not a power of two. Returns this rank's rank among the p' (or -1 if it sits out).
int fold_in(ScheduleBuilder& b, std::byte* acc, std::byte* tmp, std::size_t count, int remainder) {
  const int r = b.rank();
  const std::size_t bytes = count * b.element_size();
  if (r >= 2 * remainder) return r - remainder;
  if (r % 2 == 0) {
    b.send(acc, bytes, r + 1);
    b.end_round();
    return -1;
  }
  b.recv(tmp, bytes, r - 1);
  b.end_round();
  b.reduce(tmp, acc, count);  // (rank r-1) op (rank r)
  return r / 2;
}

void fold_out(ScheduleBuilder& b, std::byte* acc, std::size_t bytes, int remainder) {
  const int r = b.rank();
  if (r >= 2 * remainder) return;
  if (r % 2 == 0) b.recv(acc, bytes, r + 1);
  else b.send(acc, bytes, r - 1);
  b.end_round();
}

// The real rank of a rank among the p'.
int real_rank(int folded, int remainder) { return folded < remainder ? 2 * folded + 1 : folded + remainder; }

// acc = acc op other when `other` holds higher ranks' data, other op acc when lower; `other` is
// scratch and may be overwritten.
void combine(ScheduleBuilder& b, std::byte* acc, std::byte* other, std::size_t count, bool other_is_lower) {
  if (other_is_lower || b.commutative()) {
    b.reduce(other, acc, count);
  } else {
    b.reduce(acc, other, count);
    b.copy(other, acc, count * b.element_size());
  }
}

}  // namespace

void allreduce_recursive_doubling(ScheduleBuilder& b, const std::byte* send, std::byte* recv, std::size_t count) {
  const int n = b.size();
  const std::size_t bytes = count * b.element_size();
  b.copy(send, recv, bytes);  // recv accumulates
  if (n == 1 || count == 0) return;
  const int pof2 = pof2_floor(n);
  const int remainder = n - pof2;
  std::byte* tmp = b.scratch(bytes);
  const int folded = fold_in(b, recv, tmp, count, remainder);
  if (folded >= 0) {
    for (int mask = 1; mask < pof2; mask <<= 1) {
      const int partner = real_rank(folded ^ mask, remainder);
      b.recv(tmp, bytes, partner);
      b.send(recv, bytes, partner);
      b.end_round();
      combine(b, recv, tmp, count, partner < b.rank());
    }
  }
  fold_out(b, recv, bytes, remainder);
}

void allreduce_rabenseifner(ScheduleBuilder& b, const std::byte* send, std::byte* recv, std::size_t count) {
  const int n = b.size();
  const std::size_t es = b.element_size();
  const std::size_t bytes = count * es;
  b.copy(send, recv, bytes);
  if (n == 1 || count == 0) return;
  const int pof2 = pof2_floor(n);
  const int remainder = n - pof2;
  std::byte* tmp = b.scratch(bytes);
  const int folded = fold_in(b, recv, tmp, count, remainder);
  if (folded >= 0) {
    // The vector is cut into p' blocks; [lo, hi) is the run of blocks this rank is responsible for.
    auto start = [&](int block) { return block_start(count, pof2, block); };
    struct Range {
      int lo;
      int hi;
    };
    std::vector<Range> halvings;
    Range mine{0, pof2};
    for (int mask = 1; mask < pof2; mask <<= 1) {
      const int partner_folded = folded ^ mask;
      const int partner = real_rank(partner_folded, remainder);
      const int mid = (mine.lo + mine.hi) / 2;
      const bool lower = folded < partner_folded;
      const Range keep = lower ? Range{mine.lo, mid} : Range{mid, mine.hi};
      const Range give = lower ? Range{mid, mine.hi} : Range{mine.lo, mid};
      const std::size_t keep_at = start(keep.lo) * es;
      const std::size_t keep_count = start(keep.hi) - start(keep.lo);
      b.recv(tmp + keep_at, keep_count * es, partner);
      b.send(recv + start(give.lo) * es, (start(give.hi) - start(give.lo)) * es, partner);
      b.end_round();
      combine(b, recv + keep_at, tmp + keep_at, keep_count, !lower);
      halvings.push_back(mine);
      mine = keep;
    }
    // Allgather: undo the halvings, last first; the partner holds the other half of each.
    for (int mask = pof2 >> 1; mask >= 1; mask >>= 1) {
      const int partner = real_rank(folded ^ mask, remainder);
      const Range whole = halvings.back();
      halvings.pop_back();
      const Range other = mine.lo == whole.lo ? Range{mine.hi, whole.hi} : Range{whole.lo, mine.lo};
      b.recv(recv + start(other.lo) * es, (start(other.hi) - start(other.lo)) * es, partner);
      b.send(recv + start(mine.lo) * es, (start(mine.hi) - start(mine.lo)) * es, partner);
      b.end_round();
      mine = whole;
    }
  }
  fold_out(b, recv, bytes, remainder);
}

void allreduce_ring(ScheduleBuilder& b, const std::byte* send, std::byte* recv, std::size_t count) {
  const int n = b.size();
  const int r = b.rank();
  const std::size_t es = b.element_size();
  b.copy(send, recv, count * es);
  if (n == 1 || count == 0) return;
  auto at_block = [&](int block) { return recv + block_start(count, n, block) * es; };
  auto block_count = [&](int block) { return block_start(count, n, block + 1) - block_start(count, n, block); };
  std::byte* tmp = b.scratch(block_count(0) * es);  // block 0 is the largest
  const int left = (r - 1 + n) % n;
  const int right = (r + 1) % n;
  // Reduce-scatter: pass block r - i on, receive block r - i - 1 and fold it in (next round, before
  // it is passed on). Afterwards block r + 1 is complete here.
  for (int i = 0; i < n - 1; ++i) {
    const int send_block = (r - i + n) % n;
    const int recv_block = (r - i - 1 + n) % n;
    b.recv(tmp, block_count(recv_block) * es, left);
    b.send(at_block(send_block), block_count(send_block) * es, right);
    b.end_round();
    b.reduce(tmp, at_block(recv_block), block_count(recv_block));
  }
  // Allgather: pass complete block r + 1 - i on, receive complete block r - i.
  for (int i = 0; i < n - 1; ++i) {
    const int send_block = (r + 1 - i + n) % n;
    const int recv_block = (r - i + n) % n;
    b.recv(at_block(recv_block), block_count(recv_block) * es, left);
    b.send(at_block(send_block), block_count(send_block) * es, right);
    b.end_round();
  }
}

}  // namespace ftmpi::coll::detail

// Every collective, with every algorithm forced in turn (and auto with random thresholds), on
// N = 1, 2, 3, 4, 5, 7, 8 ranks running as threads over the in-memory transport, checked against a
// sequential reference: random sizes (0, tiny, not multiples of the segment size), random roots,
// in-place variants, blocking and non-blocking, every reduction (and a non-commutative user op),
// sends buffered or rendezvous. Buffers carry guard bytes; gaps in v-layouts must stay untouched;
// input buffers must stay unchanged; every message must be received.
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <functional>
#include <latch>
#include <limits>
#include <numeric>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "ftmpi/coll/collectives.hpp"
#include "ftmpi/test/seed.hpp"
#include "mem_transport.hpp"
#include "printing.hpp"
#include "reference.hpp"

using namespace ftmpi::coll;
using namespace ftmpi::coll::test;
using ftmpi::base::Errc;
using ftmpi::base::Result;
using ftmpi::base::Status;

namespace {

constexpr int kRankCounts[] = {1, 2, 3, 4, 5, 7, 8};
constexpr std::byte kUntouched{0x5a};  // what Guarded buffers start with

void* in_place_recv() { return const_cast<void*>(kInPlace); }

// memcpy without its non-null requirement for empty copies.
void copy_bytes(void* to, const void* from, std::size_t bytes) {
  if (bytes != 0) std::memcpy(to, from, bytes);
}

// Draws every decision of one case. All ranks draw in the same order from the same seed, so they
// agree on sizes, roots and layouts without talking.
struct Plan {
  std::mt19937_64 rng;
  bool matrix_only = false;

  std::uint64_t below(std::uint64_t n) { return n == 0 ? 0 : rng() % n; }
  bool chance(int percent) { return below(100) < static_cast<std::uint64_t>(percent); }
  std::size_t bytes() {
    switch (below(10)) {
      case 0: return 0;
      case 1: return 1 + below(7);
      case 9: return 1000 + below(6000);
      default: return below(500);
    }
  }
  std::size_t count(int n) {
    switch (below(10)) {
      case 0: return 0;
      case 1: return 1 + below(static_cast<std::uint64_t>(n));
      case 9: return 200 + below(1200);
      default: return below(150);
    }
  }
  int root(int n) { return static_cast<int>(below(static_cast<std::uint64_t>(n))); }
  const ReductionCase& reduction() {
    if (matrix_only || chance(25)) return matrix_case();
    const auto& all = reduction_cases();
    return all[below(all.size())];
  }
  // n blocks of random sizes placed in random order with random gaps; returns the extent.
  std::size_t layout(int n, std::size_t unit, std::vector<std::size_t>& sizes, std::vector<std::ptrdiff_t>& displs,
                     bool keep_sizes = false) {
    const auto ranks = static_cast<std::size_t>(n);
    if (!keep_sizes) {
      sizes.assign(ranks, 0);
      for (auto& s : sizes) s = chance(15) ? 0 : below(200) * unit;
    }
    std::vector<std::size_t> order(ranks);
    std::iota(order.begin(), order.end(), 0);
    std::shuffle(order.begin(), order.end(), rng);
    displs.assign(ranks, 0);
    std::size_t at = 0;
    for (std::size_t i : order) {
      at += below(3) * unit;
      displs[i] = static_cast<std::ptrdiff_t>(at);
      at += sizes[i];
    }
    return at + below(3) * unit;
  }
};

struct Shared {
  std::atomic<int> arrived{0};
};

struct Rank {
  int rank;
  int n;
  Transport& transport;
  MemWorld& world;
  std::vector<std::string>& failures;
  std::uint64_t seed;  // of this case
  Tuning tuning;
  bool blocking = true;
  int tag = 0;
  std::string where;
  int barriers_done = 0;

  Call call() const { return Call{transport, tuning, tag}; }
  // Aborts the world at once, while this rank's buffers are still alive: other ranks must not
  // match its in-flight sends after it has left.
  void fail(const std::string& what) {
    failures.push_back(where + ": " + what);
    world.abort();
  }
  bool ok(const Status& s) {
    if (!s) fail(s.to_string());
    return s.is_ok();
  }
  // Rank i's input bytes for this case (stream tells several inputs of one rank apart).
  Bytes input(int of_rank, std::size_t bytes, int stream = 0) const {
    return random_bytes(mix(seed, static_cast<std::uint64_t>(of_rank), static_cast<std::uint64_t>(stream)), bytes);
  }
  Bytes elements(const ReductionCase& rc, int of_rank, std::size_t count) const {
    Bytes out(count * rc.reduction.element_size());
    std::mt19937_64 rng(mix(seed, static_cast<std::uint64_t>(of_rank), 77));
    fill_elements(rc, out.data(), count, rng);
    return out;
  }
  void expect_bytes(const std::byte* got, const Bytes& want, const std::string& what) {
    for (std::size_t i = 0; i < want.size(); ++i) {
      if (got[i] != want[i]) {
        fail(what + " differs at byte " + std::to_string(i) + " of " + std::to_string(want.size()));
        return;
      }
    }
  }
  void expect_elements(const ReductionCase& rc, const std::byte* got, const Bytes& want, std::size_t count,
                       const std::string& what) {
    if (auto i = first_difference(rc, got, want.data(), count)) {
      fail(what + " (" + rc.name + ") differs at element " + std::to_string(*i) + " of " + std::to_string(count));
    }
  }
  void expect_guards(const Guarded& buffer, const std::string& what) {
    if (!buffer.guards_intact()) fail(what + ": write outside the buffer");
  }
};

// Runs the blocking variant, or the non-blocking one driven by test() until done.
template <typename Blocking, typename Start>
Status execute(Rank& me, Blocking blocking, Start start) {
  if (me.blocking) return blocking();
  Result<Schedule> schedule = start();
  if (!schedule) return schedule.status();
  for (;;) {
    const auto seen = me.world.changes();
    auto done = schedule->test();
    if (!done) return done.status();
    if (*done) return {};
    if (!me.world.await_change(seen)) {
      return Status(Errc::internal, me.world.aborted() ? "aborted: another rank failed"
                                                       : "non-blocking collective made no progress");
    }
  }
}

std::vector<const std::byte*> pointers(const std::vector<Bytes>& all, std::size_t offset = 0) {
  std::vector<const std::byte*> out;
  for (const auto& b : all) out.push_back(b.data() + offset);
  return out;
}

// --- one random case per collective --------------------------------------------------------------

void barrier_case(Rank& me, Plan&, Shared& shared) {
  shared.arrived.fetch_add(1);
  if (!me.ok(execute(me, [&] { return barrier(me.call()); }, [&] { return ibarrier(me.call()); }))) return;
  ++me.barriers_done;
  if (shared.arrived.load() < me.n * me.barriers_done) me.fail("left the barrier before every rank entered it");
}

void bcast_case(Rank& me, Plan& plan, Shared&) {
  const std::size_t bytes = plan.bytes();
  const int root = plan.root(me.n);
  me.where += " bytes=" + std::to_string(bytes) + " root=" + std::to_string(root);
  const Bytes data = me.input(root, bytes);
  Guarded buffer(bytes);
  copy_bytes(buffer.data(), data.data(), bytes);
  if (!me.ok(execute(me, [&] { return bcast(me.call(), buffer.data(), bytes, root); },
                     [&] { return ibcast(me.call(), buffer.data(), bytes, root); }))) {
    return;
  }
  me.expect_bytes(buffer.data(), data, "bcast buffer");
  me.expect_guards(buffer, "bcast");
}

void reduce_case(Rank& me, Plan& plan, Shared&) {
  const ReductionCase& rc = plan.reduction();
  const std::size_t count = plan.count(me.n);
  const int root = plan.root(me.n);
  const bool in_place = plan.chance(30);
  me.where += " " + rc.name + " count=" + std::to_string(count) + " root=" + std::to_string(root) +
              (in_place ? " in-place" : "");
  std::vector<Bytes> inputs;
  for (int i = 0; i < me.n; ++i) inputs.push_back(me.elements(rc, i, count));
  const Bytes expected = fold(rc, pointers(inputs), count);
  const std::size_t bytes = count * rc.reduction.element_size();
  const bool at_root = me.rank == root;
  Bytes send = inputs[static_cast<std::size_t>(me.rank)];
  Guarded recv(at_root ? bytes : 0);
  const void* from = send.data();
  if (at_root && in_place) {
    copy_bytes(recv.data(), send.data(), bytes);
    from = kInPlace;
  }
  void* into = at_root ? recv.data() : nullptr;
  if (!me.ok(execute(me, [&] { return reduce(me.call(), from, into, count, rc.reduction, root); },
                     [&] { return ireduce(me.call(), from, into, count, rc.reduction, root); }))) {
    return;
  }
  if (at_root) me.expect_elements(rc, recv.data(), expected, count, "reduce result");
  me.expect_bytes(send.data(), inputs[static_cast<std::size_t>(me.rank)], "reduce input");
  me.expect_guards(recv, "reduce");
}

void allreduce_case(Rank& me, Plan& plan, Shared&) {
  const ReductionCase& rc = plan.reduction();
  const std::size_t count = plan.count(me.n);
  const bool in_place = plan.chance(30);
  me.where += " " + rc.name + " count=" + std::to_string(count) + (in_place ? " in-place" : "");
  std::vector<Bytes> inputs;
  for (int i = 0; i < me.n; ++i) inputs.push_back(me.elements(rc, i, count));
  const Bytes expected = fold(rc, pointers(inputs), count);
  const std::size_t bytes = count * rc.reduction.element_size();
  Bytes send = inputs[static_cast<std::size_t>(me.rank)];
  Guarded recv(bytes);
  const void* from = send.data();
  if (in_place) {
    copy_bytes(recv.data(), send.data(), bytes);
    from = kInPlace;
  }
  if (!me.ok(execute(me, [&] { return allreduce(me.call(), from, recv.data(), count, rc.reduction); },
                     [&] { return iallreduce(me.call(), from, recv.data(), count, rc.reduction); }))) {
    return;
  }
  me.expect_elements(rc, recv.data(), expected, count, "allreduce result");
  me.expect_bytes(send.data(), inputs[static_cast<std::size_t>(me.rank)], "allreduce input");
  me.expect_guards(recv, "allreduce");
}

void gather_case(Rank& me, Plan& plan, Shared&) {
  const std::size_t bytes = plan.bytes() / 4;
  const int root = plan.root(me.n);
  const bool in_place = plan.chance(30);
  me.where += " bytes=" + std::to_string(bytes) + " root=" + std::to_string(root) + (in_place ? " in-place" : "");
  Bytes expected;
  for (int i = 0; i < me.n; ++i) {
    Bytes block = me.input(i, bytes);
    expected.insert(expected.end(), block.begin(), block.end());
  }
  const Bytes mine = me.input(me.rank, bytes);
  const bool at_root = me.rank == root;
  Guarded recv(at_root ? expected.size() : 0);
  const void* from = mine.data();
  if (at_root && in_place) {
    copy_bytes(recv.data() + static_cast<std::size_t>(root) * bytes, mine.data(), bytes);
    from = kInPlace;
  }
  void* into = at_root ? recv.data() : nullptr;
  if (!me.ok(execute(me, [&] { return gather(me.call(), from, into, bytes, root); },
                     [&] { return igather(me.call(), from, into, bytes, root); }))) {
    return;
  }
  if (at_root) me.expect_bytes(recv.data(), expected, "gather result");
  me.expect_guards(recv, "gather");
}

void gatherv_case(Rank& me, Plan& plan, Shared&) {
  const int root = plan.root(me.n);
  const bool in_place = plan.chance(30);
  std::vector<std::size_t> sizes;
  std::vector<std::ptrdiff_t> displs;
  const std::size_t extent = plan.layout(me.n, 1, sizes, displs);
  me.where += " extent=" + std::to_string(extent) + " root=" + std::to_string(root) + (in_place ? " in-place" : "");
  Bytes expected(extent, kUntouched);
  for (int i = 0; i < me.n; ++i) {
    const Bytes block = me.input(i, sizes[static_cast<std::size_t>(i)]);
    std::copy(block.begin(), block.end(), expected.begin() + displs[static_cast<std::size_t>(i)]);
  }
  const auto me_index = static_cast<std::size_t>(me.rank);
  const Bytes mine = me.input(me.rank, sizes[me_index]);
  const bool at_root = me.rank == root;
  Guarded recv(at_root ? extent : 0);
  const void* from = mine.data();
  if (at_root && in_place) {
    std::copy(mine.begin(), mine.end(), recv.data() + displs[me_index]);
    from = kInPlace;
  }
  // Away from the root the arrays do not matter; pass none.
  const Counts counts = at_root ? Counts(sizes) : Counts();
  const Displs places = at_root ? Displs(displs) : Displs();
  void* into = at_root ? recv.data() : nullptr;
  if (!me.ok(execute(me, [&] { return gatherv(me.call(), from, sizes[me_index], into, counts, places, root); },
                     [&] { return igatherv(me.call(), from, sizes[me_index], into, counts, places, root); }))) {
    return;
  }
  if (at_root) me.expect_bytes(recv.data(), expected, "gatherv result (gaps included)");
  me.expect_guards(recv, "gatherv");
}

void scatter_case(Rank& me, Plan& plan, Shared&) {
  const std::size_t bytes = plan.bytes() / 4;
  const int root = plan.root(me.n);
  const bool in_place = plan.chance(30);
  me.where += " bytes=" + std::to_string(bytes) + " root=" + std::to_string(root) + (in_place ? " in-place" : "");
  const Bytes all = me.input(root, bytes * static_cast<std::size_t>(me.n));
  const bool at_root = me.rank == root;
  Bytes send = at_root ? all : Bytes{};
  Guarded recv(bytes);
  void* into = at_root && in_place ? in_place_recv() : recv.data();
  if (!me.ok(execute(me, [&] { return scatter(me.call(), send.data(), into, bytes, root); },
                     [&] { return iscatter(me.call(), send.data(), into, bytes, root); }))) {
    return;
  }
  const auto offset = static_cast<std::ptrdiff_t>(bytes) * me.rank;
  if (at_root && in_place) {
    me.expect_bytes(recv.data(), Bytes(bytes, kUntouched), "in-place scatter's unused recv");
  } else {
    me.expect_bytes(recv.data(), Bytes(all.begin() + offset, all.begin() + offset + static_cast<std::ptrdiff_t>(bytes)),
                    "scatter result");
  }
  if (at_root) me.expect_bytes(send.data(), all, "scatter input");
  me.expect_guards(recv, "scatter");
}

void scatterv_case(Rank& me, Plan& plan, Shared&) {
  const int root = plan.root(me.n);
  const bool in_place = plan.chance(30);
  std::vector<std::size_t> sizes;
  std::vector<std::ptrdiff_t> displs;
  const std::size_t extent = plan.layout(me.n, 1, sizes, displs);
  me.where += " extent=" + std::to_string(extent) + " root=" + std::to_string(root) + (in_place ? " in-place" : "");
  const Bytes all = me.input(root, extent);
  const bool at_root = me.rank == root;
  const auto mine = static_cast<std::size_t>(me.rank);
  Guarded recv(sizes[mine]);
  void* into = at_root && in_place ? in_place_recv() : recv.data();
  const Counts counts = at_root ? Counts(sizes) : Counts();
  const Displs places = at_root ? Displs(displs) : Displs();
  const void* from = at_root ? all.data() : nullptr;
  if (!me.ok(execute(me, [&] { return scatterv(me.call(), from, counts, places, into, sizes[mine], root); },
                     [&] { return iscatterv(me.call(), from, counts, places, into, sizes[mine], root); }))) {
    return;
  }
  if (at_root && in_place) {
    me.expect_bytes(recv.data(), Bytes(sizes[mine], kUntouched), "in-place scatterv's unused recv");
  } else {
    me.expect_bytes(recv.data(),
                    Bytes(all.begin() + displs[mine], all.begin() + displs[mine] + static_cast<std::ptrdiff_t>(sizes[mine])),
                    "scatterv result");
  }
  me.expect_guards(recv, "scatterv");
}

void allgather_case(Rank& me, Plan& plan, Shared&) {
  const std::size_t bytes = plan.bytes() / 4;
  const bool in_place = plan.chance(30);
  me.where += " bytes=" + std::to_string(bytes) + (in_place ? " in-place" : "");
  Bytes expected;
  for (int i = 0; i < me.n; ++i) {
    Bytes block = me.input(i, bytes);
    expected.insert(expected.end(), block.begin(), block.end());
  }
  const Bytes mine = me.input(me.rank, bytes);
  Guarded recv(expected.size());
  const void* from = mine.data();
  if (in_place) {
    copy_bytes(recv.data() + static_cast<std::size_t>(me.rank) * bytes, mine.data(), bytes);
    from = kInPlace;
  }
  if (!me.ok(execute(me, [&] { return allgather(me.call(), from, recv.data(), bytes); },
                     [&] { return iallgather(me.call(), from, recv.data(), bytes); }))) {
    return;
  }
  me.expect_bytes(recv.data(), expected, "allgather result");
  me.expect_guards(recv, "allgather");
}

void allgatherv_case(Rank& me, Plan& plan, Shared&) {
  const bool in_place = plan.chance(30);
  std::vector<std::size_t> sizes;
  std::vector<std::ptrdiff_t> displs;
  const std::size_t extent = plan.layout(me.n, 1, sizes, displs);
  me.where += " extent=" + std::to_string(extent) + (in_place ? " in-place" : "");
  Bytes expected(extent, kUntouched);
  for (int i = 0; i < me.n; ++i) {
    const Bytes block = me.input(i, sizes[static_cast<std::size_t>(i)]);
    std::copy(block.begin(), block.end(), expected.begin() + displs[static_cast<std::size_t>(i)]);
  }
  const auto mine = static_cast<std::size_t>(me.rank);
  const Bytes own = me.input(me.rank, sizes[mine]);
  Guarded recv(extent);
  const void* from = own.data();
  if (in_place) {
    std::copy(own.begin(), own.end(), recv.data() + displs[mine]);
    from = kInPlace;
  }
  if (!me.ok(execute(me, [&] { return allgatherv(me.call(), from, recv.data(), sizes, displs); },
                     [&] { return iallgatherv(me.call(), from, recv.data(), sizes, displs); }))) {
    return;
  }
  me.expect_bytes(recv.data(), expected, "allgatherv result (gaps included)");
  me.expect_guards(recv, "allgatherv");
}

void alltoall_case(Rank& me, Plan& plan, Shared&) {
  const std::size_t bytes = plan.bytes() / 4;
  const bool in_place = plan.chance(30);
  me.where += " bytes=" + std::to_string(bytes) + (in_place ? " in-place" : "");
  const auto n = static_cast<std::size_t>(me.n);
  const auto r = static_cast<std::size_t>(me.rank);
  const Bytes send = me.input(me.rank, bytes * n);
  Bytes expected;
  for (int i = 0; i < me.n; ++i) {
    const Bytes theirs = me.input(i, bytes * n);
    expected.insert(expected.end(), theirs.begin() + static_cast<std::ptrdiff_t>(r * bytes),
                    theirs.begin() + static_cast<std::ptrdiff_t>((r + 1) * bytes));
  }
  Guarded recv(bytes * n);
  const void* from = send.data();
  if (in_place) {
    std::copy(send.begin(), send.end(), recv.data());
    from = kInPlace;
  }
  if (!me.ok(execute(me, [&] { return alltoall(me.call(), from, recv.data(), bytes); },
                     [&] { return ialltoall(me.call(), from, recv.data(), bytes); }))) {
    return;
  }
  me.expect_bytes(recv.data(), expected, "alltoall result");
  me.expect_guards(recv, "alltoall");
}

void alltoallv_case(Rank& me, Plan& plan, Shared&) {
  const bool in_place = plan.chance(30);
  const auto n = static_cast<std::size_t>(me.n);
  // pair[i][j]: bytes rank i sends rank j (symmetric when in place: a rank then sends what its
  // receive layout holds).
  std::vector<std::vector<std::size_t>> pair(n, std::vector<std::size_t>(n));
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t j = 0; j < n; ++j) pair[i][j] = plan.chance(20) ? 0 : plan.below(150);
  }
  if (in_place) {
    for (std::size_t i = 0; i < n; ++i) {
      for (std::size_t j = 0; j < i; ++j) pair[i][j] = pair[j][i];
    }
  }
  // Every rank's layouts, so that each can work out what it should receive.
  std::vector<std::vector<std::size_t>> send_sizes(n), recv_sizes(n);
  std::vector<std::vector<std::ptrdiff_t>> send_displs(n), recv_displs(n);
  std::vector<std::size_t> send_extent(n), recv_extent(n);
  for (std::size_t i = 0; i < n; ++i) {
    send_sizes[i] = pair[i];
    recv_sizes[i].resize(n);
    for (std::size_t j = 0; j < n; ++j) recv_sizes[i][j] = pair[j][i];
    send_extent[i] = plan.layout(me.n, 1, send_sizes[i], send_displs[i], true);
    recv_extent[i] = plan.layout(me.n, 1, recv_sizes[i], recv_displs[i], true);
  }
  me.where += in_place ? " in-place" : "";
  const auto r = static_cast<std::size_t>(me.rank);
  // What rank i sends rank j: from its send buffer, or (in place) from its initial receive buffer.
  auto source_of = [&](std::size_t i, std::size_t j) {
    if (in_place) {
      const Bytes initial = me.input(static_cast<int>(i), recv_extent[i], 1);
      return Bytes(initial.begin() + recv_displs[i][j],
                   initial.begin() + recv_displs[i][j] + static_cast<std::ptrdiff_t>(pair[i][j]));
    }
    const Bytes data = me.input(static_cast<int>(i), send_extent[i]);
    return Bytes(data.begin() + send_displs[i][j],
                 data.begin() + send_displs[i][j] + static_cast<std::ptrdiff_t>(pair[i][j]));
  };
  Bytes expected = in_place ? me.input(me.rank, recv_extent[r], 1) : Bytes(recv_extent[r], kUntouched);
  for (std::size_t i = 0; i < n; ++i) {
    const Bytes block = source_of(i, r);
    std::copy(block.begin(), block.end(), expected.begin() + recv_displs[r][i]);
  }
  const Bytes send = me.input(me.rank, send_extent[r]);
  Guarded recv(recv_extent[r]);
  const void* from = send.data();
  if (in_place) {
    const Bytes initial = me.input(me.rank, recv_extent[r], 1);
    std::copy(initial.begin(), initial.end(), recv.data());
    from = kInPlace;
  }
  const Counts sc = in_place ? Counts() : Counts(send_sizes[r]);
  const Displs sd = in_place ? Displs() : Displs(send_displs[r]);
  if (!me.ok(execute(me, [&] { return alltoallv(me.call(), from, sc, sd, recv.data(), recv_sizes[r], recv_displs[r]); },
                     [&] { return ialltoallv(me.call(), from, sc, sd, recv.data(), recv_sizes[r], recv_displs[r]); }))) {
    return;
  }
  me.expect_bytes(recv.data(), expected, "alltoallv result (gaps included)");
  me.expect_guards(recv, "alltoallv");
}

void reduce_scatter_common(Rank& me, Plan& plan, bool block) {
  const ReductionCase& rc = plan.reduction();
  const bool in_place = plan.chance(30);
  const auto n = static_cast<std::size_t>(me.n);
  std::vector<std::size_t> counts(n);
  const std::size_t uniform = plan.count(me.n) / 2;
  for (auto& c : counts) c = block ? uniform : (plan.chance(15) ? 0 : plan.below(80));
  const std::size_t total = std::accumulate(counts.begin(), counts.end(), std::size_t{0});
  std::vector<std::size_t> starts(n + 1, 0);
  std::partial_sum(counts.begin(), counts.end(), starts.begin() + 1);
  me.where += " " + rc.name + " total=" + std::to_string(total) + (in_place ? " in-place" : "");
  const std::size_t es = rc.reduction.element_size();
  std::vector<Bytes> inputs;
  for (int i = 0; i < me.n; ++i) inputs.push_back(me.elements(rc, i, total));
  const auto r = static_cast<std::size_t>(me.rank);
  const Bytes expected = fold(rc, pointers(inputs, starts[r] * es), counts[r]);
  const Bytes send = inputs[r];
  Guarded recv(in_place ? total * es : counts[r] * es);
  const void* from = send.data();
  if (in_place) {
    std::copy(send.begin(), send.end(), recv.data());
    from = kInPlace;
  }
  Status s = block ? execute(me, [&] { return reduce_scatter_block(me.call(), from, recv.data(), uniform, rc.reduction); },
                             [&] { return ireduce_scatter_block(me.call(), from, recv.data(), uniform, rc.reduction); })
                   : execute(me, [&] { return reduce_scatter(me.call(), from, recv.data(), counts, rc.reduction); },
                             [&] { return ireduce_scatter(me.call(), from, recv.data(), counts, rc.reduction); });
  if (!me.ok(s)) return;
  me.expect_elements(rc, recv.data(), expected, counts[r], block ? "reduce_scatter_block result" : "reduce_scatter result");
  me.expect_bytes(send.data(), inputs[r], "reduce_scatter input");
  me.expect_guards(recv, "reduce_scatter");
}

void reduce_scatter_case(Rank& me, Plan& plan, Shared&) { reduce_scatter_common(me, plan, false); }
void reduce_scatter_block_case(Rank& me, Plan& plan, Shared&) { reduce_scatter_common(me, plan, true); }

void scan_common(Rank& me, Plan& plan, bool exclusive) {
  const ReductionCase& rc = plan.reduction();
  const std::size_t count = plan.count(me.n);
  const bool in_place = plan.chance(30);
  me.where += " " + rc.name + " count=" + std::to_string(count) + (in_place ? " in-place" : "");
  std::vector<Bytes> inputs;
  for (int i = 0; i < me.n; ++i) inputs.push_back(me.elements(rc, i, count));
  const auto r = static_cast<std::size_t>(me.rank);
  const auto below = pointers(inputs);
  const std::size_t upto = exclusive ? r : r + 1;
  const Bytes expected = fold(rc, std::span(below).first(upto), count);
  const std::size_t bytes = count * rc.reduction.element_size();
  const Bytes send = inputs[r];
  Guarded recv(bytes);
  const void* from = send.data();
  if (in_place) {
    copy_bytes(recv.data(), send.data(), bytes);
    from = kInPlace;
  }
  Status s = exclusive ? execute(me, [&] { return exscan(me.call(), from, recv.data(), count, rc.reduction); },
                                 [&] { return iexscan(me.call(), from, recv.data(), count, rc.reduction); })
                       : execute(me, [&] { return scan(me.call(), from, recv.data(), count, rc.reduction); },
                                 [&] { return iscan(me.call(), from, recv.data(), count, rc.reduction); });
  if (!me.ok(s)) return;
  if (exclusive && r == 0) {
    // Rank 0's exscan result is undefined: the buffer must be left as it was.
    me.expect_bytes(recv.data(), in_place ? send : Bytes(bytes, kUntouched), "rank 0's exscan buffer");
  } else {
    me.expect_elements(rc, recv.data(), expected, count, exclusive ? "exscan result" : "scan result");
  }
  me.expect_bytes(send.data(), inputs[r], "scan input");
  me.expect_guards(recv, "scan");
}

void scan_case(Rank& me, Plan& plan, Shared&) { scan_common(me, plan, false); }
void exscan_case(Rank& me, Plan& plan, Shared&) { scan_common(me, plan, true); }

using CaseFn = void (*)(Rank&, Plan&, Shared&);

// A Tuning that forces `mode` on `c`; auto gets random thresholds so that its every branch runs.
Tuning tuning_for(Collective c, Algorithm mode, Plan& plan) {
  Tuning t = default_tuning();
  t.algorithm[static_cast<std::size_t>(c)] = mode;
  t.segment_size = plan.chance(85) ? 1 + plan.below(300) : std::size_t{1} << 16;
  if (mode == Algorithm::automatic) {
    t.bcast_short_max = plan.below(800);
    t.bcast_pipeline_min = plan.below(3000);
    t.bcast_tree_max_ranks = static_cast<std::int64_t>(plan.below(9));
    t.reduce_pipeline_min = plan.below(3000);
    t.allreduce_short_max = plan.below(2000);
    t.gather_binomial_max = plan.below(4000);
    t.allgather_short_max = plan.below(4000);
    t.alltoall_linear_max = plan.below(200);
    t.alltoallv_linear_max_ranks = static_cast<std::int64_t>(plan.below(9));
    t.reduce_scatter_short_max = plan.below(4000);
    t.scan_pipeline_min = plan.below(3000);
  }
  return t;
}

struct RunOptions {
  int cases_per_world = 12;
  bool matrix_only = false;
  std::vector<int> rank_counts{std::begin(kRankCounts), std::end(kRankCounts)};
};

// Every mode (auto and each algorithm) on every communicator size, a few random cases each.
void check_collective(Collective c, CaseFn run_case, const RunOptions& options = {}) {
  const auto seed = ftmpi::test::seed_for(std::string("coll ") + std::string(to_string(c)));
  std::vector<Algorithm> modes{Algorithm::automatic};
  for (Algorithm a : algorithms_of(c)) modes.push_back(a);
  for (int n : options.rank_counts) {
    for (Algorithm mode : modes) {
      std::mt19937_64 world_rng(mix(seed, static_cast<std::uint64_t>(n), static_cast<std::uint64_t>(mode)));
      // Buffered sends, rendezvous sends, or rendezvous from 64 bytes: no algorithm may rely on buffering.
      const std::size_t eager_choices[] = {std::numeric_limits<std::size_t>::max(), 0, 64};
      const std::size_t eager_max = eager_choices[world_rng() % 3];
      MemWorld world(n, eager_max);
      Shared shared;
      std::ostringstream label;
      label << to_string(c) << " " << to_string(mode) << " on " << n << " ranks (eager_max " << eager_max
            << ", seed " << seed << ")";
      const auto failures = run_ranks(world, [&](int rank, Transport& transport, std::vector<std::string>& f) {
        Rank me{rank, n, transport, world, f, 0, {}, true, 0, {}, 0};
        for (int k = 0; k < options.cases_per_world && f.empty(); ++k) {
          const std::uint64_t case_seed =
              mix(seed, static_cast<std::uint64_t>(n), static_cast<std::uint64_t>(mode), static_cast<std::uint64_t>(k));
          Plan plan{std::mt19937_64(case_seed), options.matrix_only};
          me.seed = case_seed;
          me.tuning = tuning_for(c, mode, plan);
          me.blocking = plan.chance(50);
          me.tag = k;
          me.where = label.str() + " case " + std::to_string(k) + (me.blocking ? " blocking" : " non-blocking");
          run_case(me, plan, shared);
        }
      });
      for (const auto& f : failures) BOOST_ERROR(f);
      if (failures.empty()) {
        const std::string left = world.leftovers();
        BOOST_TEST(left.empty(), label.str() << ": " << left);
      }
    }
  }
}

}  // namespace

BOOST_AUTO_TEST_SUITE(every_collective_matches_a_sequential_reference)

BOOST_AUTO_TEST_CASE(barrier_lets_no_rank_out_before_all_are_in) { check_collective(Collective::barrier, barrier_case); }
BOOST_AUTO_TEST_CASE(bcast) { check_collective(Collective::bcast, bcast_case); }
BOOST_AUTO_TEST_CASE(reduce) { check_collective(Collective::reduce, reduce_case); }
BOOST_AUTO_TEST_CASE(allreduce) { check_collective(Collective::allreduce, allreduce_case); }
BOOST_AUTO_TEST_CASE(gather) { check_collective(Collective::gather, gather_case); }
BOOST_AUTO_TEST_CASE(gatherv) { check_collective(Collective::gatherv, gatherv_case); }
BOOST_AUTO_TEST_CASE(scatter) { check_collective(Collective::scatter, scatter_case); }
BOOST_AUTO_TEST_CASE(scatterv) { check_collective(Collective::scatterv, scatterv_case); }
BOOST_AUTO_TEST_CASE(allgather) { check_collective(Collective::allgather, allgather_case); }
BOOST_AUTO_TEST_CASE(allgatherv) { check_collective(Collective::allgatherv, allgatherv_case); }
BOOST_AUTO_TEST_CASE(alltoall) { check_collective(Collective::alltoall, alltoall_case); }
BOOST_AUTO_TEST_CASE(alltoallv) { check_collective(Collective::alltoallv, alltoallv_case); }
BOOST_AUTO_TEST_CASE(reduce_scatter) { check_collective(Collective::reduce_scatter, reduce_scatter_case); }
BOOST_AUTO_TEST_CASE(reduce_scatter_block) {
  check_collective(Collective::reduce_scatter_block, reduce_scatter_block_case);
}
BOOST_AUTO_TEST_CASE(scan) { check_collective(Collective::scan, scan_case); }
BOOST_AUTO_TEST_CASE(exscan) { check_collective(Collective::exscan, exscan_case); }

BOOST_AUTO_TEST_SUITE_END()

// A non-commutative op must come out as x_0 op x_1 op ... op x_(n-1) under every algorithm (the
// random suite mixes it in; here it is the only op).
BOOST_AUTO_TEST_CASE(non_commutative_user_op_is_applied_in_rank_order_by_every_algorithm) {
  RunOptions options;
  options.cases_per_world = 4;
  options.matrix_only = true;
  options.rank_counts = {3, 4, 6, 7};
  check_collective(Collective::reduce, reduce_case, options);
  check_collective(Collective::allreduce, allreduce_case, options);
  check_collective(Collective::reduce_scatter, reduce_scatter_case, options);
  check_collective(Collective::reduce_scatter_block, reduce_scatter_block_case, options);
  check_collective(Collective::scan, scan_case, options);
  check_collective(Collective::exscan, exscan_case, options);
}

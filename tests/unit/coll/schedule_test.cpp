// Schedules as state machines: non-blocking collectives side by side, test() that never waits,
// the latency terms the algorithms promise, and errors (bad arguments, a failing transport).
// Also checks that the in-memory transport itself can fail a test.
#include <boost/test/unit_test.hpp>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstring>
#include <limits>
#include <mutex>
#include <numeric>
#include <random>
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

constexpr std::size_t kBuffered = std::numeric_limits<std::size_t>::max();
constexpr std::size_t kRendezvous = 0;

void report(const std::vector<std::string>& failures) {
  for (const auto& f : failures) BOOST_ERROR(f);
}

int ceil_log2(int n) {
  int rounds = 0;
  while ((1 << rounds) < n) ++rounds;
  return rounds;
}

// A one-shot gate with a deadline, so that a rank that never opens it fails the test instead of
// hanging it.
class Gate {
 public:
  void open() {
    std::lock_guard lock(mutex_);
    open_ = true;
    cv_.notify_all();
  }
  bool wait() {
    std::unique_lock lock(mutex_);
    return cv_.wait_for(lock, std::chrono::seconds(10), [&] { return open_; });
  }

 private:
  std::mutex mutex_;
  std::condition_variable cv_;
  bool open_ = false;
};

// Fails the calls it is told to; everything else succeeds at once.
class FailingTransport final : public Transport {
 public:
  bool fail_send = false;
  bool fail_test = false;
  bool fail_wait = false;
  int tests = 0;

  int rank() const noexcept override { return 0; }
  int size() const noexcept override { return 4; }
  Result<RequestId> isend(const void*, std::size_t, int, int) override {
    if (fail_send) return Status(Errc::peer_unreachable, "no rail left to rank 1");
    return next_++;
  }
  Result<RequestId> irecv(void*, std::size_t, int, int) override { return next_++; }
  Result<bool> test(RequestId) override {
    ++tests;
    if (fail_test) return Status(Errc::io_error, "test failed");
    return false;
  }
  Status wait(RequestId) override {
    if (fail_wait) return Status(Errc::rail_down, "wait failed");
    return {};
  }
  Status progress() override { return {}; }

 private:
  RequestId next_ = 1;
};

}  // namespace

BOOST_AUTO_TEST_CASE(barrier_takes_ceil_log2_rounds_on_every_rank) {
  for (int n = 1; n <= 9; ++n) {
    MemWorld world(n, kRendezvous);
    const Tuning tuning = default_tuning();
    report(run_ranks(world, [&](int rank, Transport& t, std::vector<std::string>& failures) {
      auto schedule = ibarrier({t, tuning, 0});
      if (!schedule) return failures.push_back(schedule.status().to_string());
      const auto rounds = schedule->communication_rounds();
      if (rounds != static_cast<std::size_t>(ceil_log2(n))) {
        failures.push_back(std::to_string(n) + " ranks: rank " + std::to_string(rank) + " has " +
                           std::to_string(rounds) + " rounds");
      }
      if (schedule->messages_sent() != rounds) failures.push_back("one empty message per round expected");
      if (Status s = schedule->wait(); !s) failures.push_back(s.to_string());
    }));
    BOOST_TEST(world.leftovers().empty(), world.leftovers());
  }
}

BOOST_AUTO_TEST_CASE(recursive_doubling_allreduce_adds_two_rounds_only_for_folded_ranks) {
  // 6 ranks: p' = 4, ranks 0-3 fold in pairs. Ranks 1 and 3 take the fold, log2 4 = 2 exchanges
  // and the hand-back; ranks 0 and 2 only send and receive back; ranks 4 and 5 only exchange.
  const int expected[] = {2, 4, 2, 4, 2, 2};
  MemWorld world(6, kBuffered);
  Tuning tuning = default_tuning();
  BOOST_TEST_REQUIRE(tuning.force(Collective::allreduce, "recursive_doubling").is_ok());
  const auto sum = Reduction::predefined(Op::sum, Kind::int64).value();
  report(run_ranks(world, [&](int rank, Transport& t, std::vector<std::string>& failures) {
    std::int64_t in[3] = {rank, 2 * rank, 3 * rank};
    std::int64_t out[3] = {};
    auto schedule = iallreduce({t, tuning, 0}, in, out, 3, sum);
    if (!schedule) return failures.push_back(schedule.status().to_string());
    if (schedule->communication_rounds() != static_cast<std::size_t>(expected[rank])) {
      failures.push_back(std::to_string(schedule->communication_rounds()) + " rounds");
    }
    if (Status s = schedule->wait(); !s) return failures.push_back(s.to_string());
    if (out[0] != 15 || out[1] != 30 || out[2] != 45) failures.push_back("wrong sum");
  }));
}

BOOST_AUTO_TEST_CASE(several_nonblocking_collectives_progress_side_by_side) {
  const auto seed = ftmpi::test::seed_for("nonblocking side by side");
  for (int n : {2, 5, 8}) {
    BOOST_TEST_CONTEXT(n << " ranks, seed " << seed) {
      MemWorld world(n, kRendezvous);
      Tuning tuning = default_tuning();
      tuning.segment_size = 100;  // the pipelines take many rounds
      BOOST_TEST_REQUIRE(tuning.force(Collective::bcast, "pipeline").is_ok());
      BOOST_TEST_REQUIRE(tuning.force(Collective::allreduce, "rabenseifner").is_ok());
      const ReductionCase& matrix = matrix_case();
      const auto sum = Reduction::predefined(Op::sum, Kind::int32).value();
      constexpr std::size_t kBcastBytes = 2345;
      constexpr std::size_t kMatrices = 37;
      constexpr std::size_t kAlltoallBytes = 50;
      const Bytes bcast_data = random_bytes(mix(seed, 1), kBcastBytes);
      std::vector<Bytes> matrices;
      for (int r = 0; r < n; ++r) {
        Bytes m(kMatrices * matrix.reduction.element_size());
        std::mt19937_64 rng(mix(seed, 2, static_cast<std::uint64_t>(r)));
        fill_elements(matrix, m.data(), kMatrices, rng);
        matrices.push_back(std::move(m));
      }
      std::vector<const std::byte*> matrix_inputs;
      for (const auto& m : matrices) matrix_inputs.push_back(m.data());
      const Bytes product = fold(matrix, matrix_inputs, kMatrices);

      report(run_ranks(world, [&](int rank, Transport& t, std::vector<std::string>& failures) {
        Bytes bcast_buffer = rank == n - 1 ? bcast_data : Bytes(kBcastBytes);
        Bytes allreduce_out(product.size());
        std::int32_t mine = rank + 1;
        std::int32_t total = 0;
        Bytes to_all(kAlltoallBytes * static_cast<std::size_t>(n));
        for (std::size_t i = 0; i < to_all.size(); ++i) to_all[i] = static_cast<std::byte>(rank * 31 + static_cast<int>(i));
        Bytes from_all(to_all.size());

        // Every rank starts them in the same order with the same tags, as MPI requires.
        std::vector<Schedule> running;
        auto start = [&](Result<Schedule> s) {
          if (!s) return failures.push_back(s.status().to_string());
          running.push_back(std::move(*s));
        };
        start(ibarrier({t, tuning, 10}));
        start(ibcast({t, tuning, 11}, bcast_buffer.data(), kBcastBytes, n - 1));
        start(iallreduce({t, tuning, 12}, matrices[static_cast<std::size_t>(rank)].data(), allreduce_out.data(),
                         kMatrices, matrix.reduction));
        start(ireduce({t, tuning, 13}, &mine, &total, 1, sum, 0));
        start(ialltoall({t, tuning, 14}, to_all.data(), from_all.data(), kAlltoallBytes));
        if (!failures.empty()) return;

        // Test them in a different order on each rank until all are done.
        std::vector<bool> done(running.size(), false);
        std::size_t remaining = running.size();
        std::size_t next = static_cast<std::size_t>(rank);
        while (remaining > 0) {
          const auto seen = world.changes();
          for (std::size_t k = 0; k < running.size(); ++k) {
            const std::size_t i = (next + k) % running.size();
            if (done[i]) continue;
            auto finished = running[i].test();
            if (!finished) return failures.push_back(finished.status().to_string());
            if (*finished) {
              done[i] = true;
              --remaining;
            }
          }
          ++next;
          if (remaining > 0 && !world.await_change(seen)) return failures.push_back("no progress");
        }
        if (bcast_buffer != bcast_data) failures.push_back("ibcast result");
        if (first_difference(matrix, allreduce_out.data(), product.data(), kMatrices)) {
          failures.push_back("iallreduce result");
        }
        if (rank == 0 && total != n * (n + 1) / 2) failures.push_back("ireduce result");
        for (int from = 0; from < n; ++from) {
          for (std::size_t i = 0; i < kAlltoallBytes; ++i) {
            const std::size_t at = static_cast<std::size_t>(from) * kAlltoallBytes + i;
            const std::size_t sent_at = static_cast<std::size_t>(rank) * kAlltoallBytes + i;
            if (from_all[at] != static_cast<std::byte>(from * 31 + static_cast<int>(sent_at))) {
              return failures.push_back("ialltoall result from rank " + std::to_string(from));
            }
          }
        }
      }));
      BOOST_TEST(world.leftovers().empty(), world.leftovers());
    }
  }
}

BOOST_AUTO_TEST_CASE(test_returns_at_once_while_peers_have_not_joined) {
  // Rendezvous sends cannot complete before the receivers post, and they will not post until rank 0
  // has called test() a few times: if test() waited, rank 0 would never open the gate.
  MemWorld world(3, kRendezvous);
  const Tuning tuning = default_tuning();
  Gate gate;
  Bytes data(1000, std::byte{7});
  report(run_ranks(world, [&](int rank, Transport& t, std::vector<std::string>& failures) {
    Bytes buffer = rank == 0 ? data : Bytes(data.size());
    if (rank == 0) {
      auto schedule = ibcast({t, tuning, 0}, buffer.data(), buffer.size(), 0);
      if (!schedule) return failures.push_back(schedule.status().to_string());
      for (int i = 0; i < 5; ++i) {
        auto finished = schedule->test();
        if (!finished || *finished) failures.push_back("test() finished before the peers joined");
      }
      gate.open();
      if (Status s = schedule->wait(); !s) failures.push_back(s.to_string());
      if (!schedule->is_done()) failures.push_back("wait() returned before the end");
      return;
    }
    if (!gate.wait()) return failures.push_back("rank 0 never opened the gate");
    if (Status s = bcast({t, tuning, 0}, buffer.data(), buffer.size(), 0); !s) failures.push_back(s.to_string());
    if (buffer != data) failures.push_back("bcast result");
  }));
  BOOST_TEST(world.leftovers().empty(), world.leftovers());
}

BOOST_AUTO_TEST_CASE(invalid_arguments_are_refused_before_anything_is_sent) {
  MemWorld world(3, kBuffered);
  Transport& t = world.transport(0);
  const Tuning tuning = default_tuning();
  const Call call{t, tuning, 0};
  int buffer[8] = {};
  const auto sum = Reduction::predefined(Op::sum, Kind::int32).value();
  const auto replace = Reduction::predefined(Op::replace, Kind::int32).value();
  void* in_place = const_cast<void*>(kInPlace);
  const std::size_t three[3] = {4, 4, 4};
  const std::size_t two[2] = {4, 4};
  const std::ptrdiff_t displs3[3] = {0, 4, 8};
  const std::ptrdiff_t displs2[2] = {0, 4};

  auto refused = [](const Status& s, std::string_view what) {
    BOOST_TEST(s.code() == Errc::invalid_argument, what << ": " << s.to_string());
  };
  refused(bcast(call, buffer, 4, 3), "root past the end");
  refused(bcast(call, buffer, 4, -1), "negative root");
  refused(barrier({t, tuning, -1}), "negative tag");
  refused(allreduce(call, buffer, in_place, 1, sum), "in-place recv");
  refused(allreduce(call, buffer, buffer + 4, 1, replace), "replace in a collective");
  refused(reduce(call, kInPlace, buffer, 1, sum, 1), "in place away from the root");
  refused(gather(call, buffer, buffer, std::numeric_limits<std::size_t>::max() / 2, 0), "size overflow");
  refused(gatherv(call, buffer, 4, buffer, two, displs2, 0), "two counts for three ranks");
  refused(scatter(call, buffer, in_place, 4, 1), "in-place recv away from the root");
  refused(allgatherv(call, buffer, buffer, three, displs2), "two displacements for three ranks");
  refused(alltoallv(call, buffer, three, displs3, buffer, two, displs3), "two recv counts for three ranks");
  refused(reduce_scatter(call, buffer, buffer, two, sum), "two counts for three ranks");
  BOOST_TEST(ireduce_scatter_block(call, buffer, buffer, 1, replace).code() == Errc::invalid_argument);
  BOOST_TEST(world.messages_sent() == 0U);
  BOOST_TEST(world.leftovers().empty(), world.leftovers());
}

BOOST_AUTO_TEST_CASE(transport_errors_reach_the_caller) {
  const Tuning tuning = default_tuning();
  int buffer[4] = {};
  const auto sum = Reduction::predefined(Op::sum, Kind::int32).value();
  {
    FailingTransport t;
    t.fail_send = true;
    BOOST_TEST(bcast({t, tuning, 0}, buffer, sizeof buffer, 0).code() == Errc::peer_unreachable);
    BOOST_TEST(ibarrier({t, tuning, 0}).code() == Errc::peer_unreachable);
  }
  {
    FailingTransport t;
    t.fail_wait = true;
    BOOST_TEST(allreduce({t, tuning, 0}, buffer, buffer + 2, 2, sum).code() == Errc::rail_down);
  }
  {
    // A schedule that failed stays failed, without asking the transport again.
    FailingTransport t;
    auto schedule = ibcast({t, tuning, 0}, buffer, sizeof buffer, 0);
    BOOST_TEST_REQUIRE(schedule.is_ok());
    BOOST_TEST(!schedule->is_done());
    t.fail_test = true;
    BOOST_TEST(schedule->test().code() == Errc::io_error);
    const int tests = t.tests;
    BOOST_TEST(schedule->is_done());
    BOOST_TEST(schedule->test().code() == Errc::io_error);
    BOOST_TEST(schedule->wait().code() == Errc::io_error);
    BOOST_TEST(t.tests == tests);
  }
}

BOOST_AUTO_TEST_CASE(memory_transport_fails_a_receive_of_the_wrong_size_and_shows_leftovers) {
  MemWorld world(2, kBuffered, std::chrono::milliseconds(2000));
  Transport& a = world.transport(0);
  Transport& b = world.transport(1);
  const char text[8] = "abcdefg";
  char got[8] = {};
  auto sent = a.isend(text, 8, 1, 5);
  BOOST_TEST_REQUIRE(sent.is_ok());
  BOOST_TEST(a.wait(*sent).is_ok());
  auto received = b.irecv(got, 4, 0, 5);
  BOOST_TEST_REQUIRE(received.is_ok());
  BOOST_TEST(b.wait(*received).code() == Errc::malformed);

  // Same sender and tag: matched in the order sent.
  for (char c : {'x', 'y'}) {
    auto s = a.isend(&c, 1, 1, 6);
    BOOST_TEST_REQUIRE(s.is_ok());
    BOOST_TEST(a.wait(*s).is_ok());
  }
  char first = 0;
  char second = 0;
  auto r1 = b.irecv(&first, 1, 0, 6);
  auto r2 = b.irecv(&second, 1, 0, 6);
  BOOST_TEST_REQUIRE((r1.is_ok() && r2.is_ok()));
  BOOST_TEST(b.wait(*r1).is_ok());
  BOOST_TEST(b.wait(*r2).is_ok());
  BOOST_TEST(first == 'x');
  BOOST_TEST(second == 'y');
  BOOST_TEST(world.leftovers().empty(), world.leftovers());

  auto orphan = a.isend(text, 8, 1, 7);
  BOOST_TEST_REQUIRE(orphan.is_ok());
  BOOST_TEST(a.wait(*orphan).is_ok());
  BOOST_TEST(world.leftovers().find("unreceived") != std::string::npos, world.leftovers());
}

BOOST_AUTO_TEST_CASE(memory_transport_reports_a_deadlock_instead_of_hanging) {
  MemWorld world(2, kRendezvous, std::chrono::milliseconds(200));
  char c = 0;
  auto never = world.transport(0).irecv(&c, 1, 1, 0);
  BOOST_TEST_REQUIRE(never.is_ok());
  const Status s = world.transport(0).wait(*never);
  BOOST_TEST(s.code() == Errc::internal);
  BOOST_TEST(s.message().find("deadlock") != std::string::npos, s.message());
}

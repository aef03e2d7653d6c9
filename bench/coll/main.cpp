// coll_bench: what libs/coll itself costs, apart from the network: building and walking one rank's
// schedule per call (over a transport whose every request completes at once, so only the library's
// own work and the local copies and reductions it does are timed), per algorithm and communicator
// size; and the throughput of the reduction kernels. Network-level collective numbers come from
// the MPI benchmarks once the MPI layer calls these.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "ftmpi/bench/harness.hpp"
#include "ftmpi/coll/collectives.hpp"

namespace {

using namespace ftmpi::coll;
using ftmpi::bench::fixed;
using ftmpi::bench::measure;
using ftmpi::bench::Table;

[[noreturn]] void fail(const std::string& what) {
  std::fprintf(stderr, "coll_bench: error: %s\n", what.c_str());
  std::exit(1);
}

// Rank 0 of `size` ranks; every send and receive completes at once and moves nothing.
class InstantTransport final : public Transport {
 public:
  explicit InstantTransport(int size) : size_(size) {}
  int rank() const noexcept override { return 0; }
  int size() const noexcept override { return size_; }
  ftmpi::base::Result<RequestId> isend(const void*, std::size_t, int, int) override { return next_++; }
  ftmpi::base::Result<RequestId> irecv(void*, std::size_t, int, int) override { return next_++; }
  ftmpi::base::Result<bool> test(RequestId) override { return true; }
  ftmpi::base::Status wait(RequestId) override { return {}; }
  ftmpi::base::Status progress() override { return {}; }

 private:
  int size_;
  RequestId next_ = 1;
};

struct Row {
  Collective collective;
  const char* algorithm;
  std::size_t bytes;
};

void overhead_table() {
  constexpr auto kMinRun = std::chrono::milliseconds(30);
  const Row rows[] = {
      {Collective::barrier, "dissemination", 0},
      {Collective::bcast, "binomial", 8},
      {Collective::bcast, "pipeline", 1 << 20},
      {Collective::bcast, "scatter_allgather", 1 << 20},
      {Collective::allreduce, "recursive_doubling", 8},
      {Collective::allreduce, "recursive_doubling", 1 << 20},
      {Collective::allreduce, "rabenseifner", 1 << 20},
      {Collective::allreduce, "ring", 1 << 20},
      {Collective::reduce, "binomial", 8},
      {Collective::reduce, "pipeline", 1 << 20},
      {Collective::alltoall, "linear", 8},
      {Collective::alltoall, "pairwise", 8},
  };
  const auto sum = Reduction::predefined(Op::sum, Kind::int64).value();
  Table table({"collective", "algorithm", "bytes", "ranks", "rounds", "messages", "ns per call"});
  for (const Row& row : rows) {
    for (int ranks : {2, 8, 64}) {
      Tuning tuning = default_tuning();
      if (auto s = tuning.force(row.collective, row.algorithm); !s) fail(s.to_string());
      InstantTransport transport(ranks);
      const Call call{transport, tuning, 0};
      const std::size_t per_rank = row.collective == Collective::alltoall ? row.bytes * static_cast<std::size_t>(ranks)
                                                                          : row.bytes;
      std::vector<std::int64_t> send(per_rank / 8 + 1, 1);
      std::vector<std::int64_t> recv(per_rank / 8 + 1, 0);
      auto start = [&]() -> ftmpi::base::Result<Schedule> {
        switch (row.collective) {
          case Collective::barrier: return ibarrier(call);
          case Collective::bcast: return ibcast(call, recv.data(), row.bytes, 0);
          case Collective::allreduce: return iallreduce(call, send.data(), recv.data(), row.bytes / 8, sum);
          case Collective::reduce: return ireduce(call, send.data(), recv.data(), row.bytes / 8, sum, 0);
          case Collective::alltoall: return ialltoall(call, send.data(), recv.data(), row.bytes);
          default: fail("no such row");
        }
      };
      auto probe = start();
      if (!probe) fail(probe.status().to_string());
      const std::size_t rounds = probe->communication_rounds();
      const std::size_t messages = probe->messages_sent();
      if (auto s = probe->wait(); !s) fail(s.to_string());
      const auto timing = measure(
          [&](std::uint64_t iterations) {
            for (std::uint64_t i = 0; i < iterations; ++i) {
              auto schedule = start();
              if (!schedule || !schedule->wait()) fail("collective failed");
            }
          },
          1.0, kMinRun, 5);
      table.add_row({std::string(to_string(row.collective)), row.algorithm, std::to_string(row.bytes),
                     std::to_string(ranks), std::to_string(rounds), std::to_string(messages),
                     fixed(timing.ns_per_op, 0)});
    }
  }
  std::printf("## One rank's schedule per call (transport completes everything at once)\n\n");
  table.print();
}

void kernel_table() {
  constexpr std::size_t kBytes = 64 * 1024;  // in cache
  struct KernelRow {
    Op op;
    Kind kind;
  };
  const KernelRow rows[] = {{Op::sum, Kind::int32},  {Op::sum, Kind::float64}, {Op::max, Kind::float32},
                            {Op::band, Kind::uint64}, {Op::prod, Kind::c_double_complex},
                            {Op::minloc, Kind::double_int}, {Op::land, Kind::c_bool}};
  Table table({"op", "kind", "GB/s (64 KiB, in cache)"});
  for (const auto& row : rows) {
    const std::size_t count = kBytes / element_size(row.kind);
    std::vector<unsigned char> in(kBytes, 1);
    std::vector<unsigned char> inout(kBytes, 1);
    const auto timing = measure(
        [&](std::uint64_t iterations) {
          for (std::uint64_t i = 0; i < iterations; ++i) {
            if (!reduce_local(row.op, row.kind, in.data(), inout.data(), count)) fail("reduce_local");
            ftmpi::bench::clobber_memory();
          }
        },
        1.0, std::chrono::milliseconds(30), 5);
    table.add_row({std::string(to_string(row.op)), std::string(to_string(row.kind)),
                   fixed(static_cast<double>(kBytes) / timing.ns_per_op, 2)});
  }
  std::printf("\n## Reduction kernels: inout = in op inout\n\n");
  table.print();
}

}  // namespace

int main() {
  overhead_table();
  kernel_table();
  return 0;
}

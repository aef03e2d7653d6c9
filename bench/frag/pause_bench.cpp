// Checksums after a pause: what one call costs when the data is in cache but the core has spent the last
// microseconds in the kernel, polling a socket, as a rank waiting for its next message does (a ping-pong's
// receiver copies and verifies each payload after such a wait). Back to back, the checksum tables'
// throughput holds; after the wait, the folding kernels' first calls are slower, while memcpy is not
// (docs/benchmarks.md, "The CRC32C of an 8 KB message, in place").
//
// Each call is timed on its own with the time-stamp counter, converted to ns by the steady clock over the
// whole cell; the wait is recv(MSG_DONTWAIT) on an unconnected UDP socket bound to 127.0.0.1, which never
// receives anything. Rows: 8 KB and 64 KB, back to back and after 5 us and 20 us of polling; the
// cells of a row interleaved call by call, so that each sees the same machine. Mean and 90th percentile.
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>
#include <x86intrin.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "ftmpi/bench/harness.hpp"
#include "ftmpi/frag/checksum.hpp"
#include "sections.hpp"

namespace ftmpi::bench {
namespace {

using frag::ChecksumEngine;
using Clock = std::chrono::steady_clock;

constexpr int kCallsPerCell = 4000;  // per round; at 20 us of waiting each, under a second a cell

// An empty socket to poll: a waiting rank's system calls, nothing received.
class IdleSocket {
 public:
  IdleSocket() : fd_(::socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK, 0)) {
    ::sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd_ < 0 || ::bind(fd_, reinterpret_cast<const ::sockaddr*>(&address), sizeof address) != 0) {
      std::perror("frag_bench: an idle UDP socket on 127.0.0.1");
      std::exit(1);
    }
  }
  ~IdleSocket() { ::close(fd_); }
  IdleSocket(const IdleSocket&) = delete;
  IdleSocket& operator=(const IdleSocket&) = delete;
  // Polls for `cycles` of the time-stamp counter.
  void poll_for(std::uint64_t cycles) {
    const std::uint64_t start = __rdtsc();
    char byte = 0;
    while (__rdtsc() - start < cycles) (void)::recv(fd_, &byte, 1, MSG_DONTWAIT);
  }

 private:
  int fd_;
};

struct Cell {
  std::function<void()> call;
  std::vector<std::uint64_t> cycles;
};

double tsc_per_ns() {
  const auto t0 = Clock::now();
  const std::uint64_t c0 = __rdtsc();
  while (Clock::now() - t0 < std::chrono::milliseconds(50)) {
  }
  const std::uint64_t c1 = __rdtsc();
  return static_cast<double>(c1 - c0) / static_cast<double>(std::chrono::nanoseconds(Clock::now() - t0).count());
}

}  // namespace

void run_pause_bench(int rounds) {
  std::vector<const ChecksumEngine*> engines;
  for (const ChecksumEngine* e : frag::checksum_engines())
    if (e->name != "portable") engines.push_back(e);  // 30x slower: not a candidate
  std::vector<std::string> headers{"bytes", "waited before each call", "memcpy ns (mean / p90)"};
  for (const ChecksumEngine* e : engines) headers.push_back(std::string(e->name) + " copy+crc32c ns");
  for (const ChecksumEngine* e : engines) headers.push_back(std::string(e->name) + " crc32c ns");
  Table table(headers);
  IdleSocket idle;
  const double per_ns = tsc_per_ns();
  std::vector<unsigned char> src(65536 + 112), dst(65536);
  std::mt19937_64 rng(1);
  for (auto& byte : src) byte = static_cast<unsigned char>(rng());
  // The payload after a 112-byte wire header, as a receiver finds it in its receive ring.
  const unsigned char* payload = src.data() + 112;
  std::uint32_t sink = 0;
  for (const std::size_t n : {std::size_t{8192}, std::size_t{65536}}) {
    for (const int wait_us : {0, 5, 20}) {
      std::vector<Cell> cells;
      cells.push_back({[&] { std::memcpy(dst.data(), payload, n); }, {}});
      for (const ChecksumEngine* e : engines)
        cells.push_back({[&, e] { sink ^= e->copy_crc32c(dst.data(), payload, n, sink); }, {}});
      for (const ChecksumEngine* e : engines)
        cells.push_back({[&, e] { sink ^= e->crc32c(payload, n, sink); }, {}});
      const auto wait = static_cast<std::uint64_t>(wait_us * 1000.0 * per_ns);
      for (int round = 0; round < rounds; ++round) {
        for (int i = 0; i < kCallsPerCell; ++i) {
          for (Cell& c : cells) {
            idle.poll_for(wait);
            const std::uint64_t start = __rdtsc();
            c.call();
            clobber_memory();
            c.cycles.push_back(__rdtsc() - start);
          }
        }
      }
      std::vector<std::string> row{std::to_string(n), wait_us == 0 ? "nothing (back to back)"
                                                                   : std::to_string(wait_us) + " us polling"};
      for (Cell& c : cells) {
        std::sort(c.cycles.begin(), c.cycles.end());
        double sum = 0;
        for (const std::uint64_t v : c.cycles) sum += static_cast<double>(v);
        const double mean = sum / static_cast<double>(c.cycles.size()) / per_ns;
        const double p90 = static_cast<double>(c.cycles[c.cycles.size() * 9 / 10]) / per_ns;
        row.push_back(fixed(mean, 0) + " / " + fixed(p90, 0));
      }
      table.add_row(row);
    }
  }
  keep(sink);
  std::printf("## Checksums after a pause (ns per call, mean / 90th percentile; %d round%s of %d calls a cell)\n\n",
              rounds, rounds == 1 ? "" : "s", kCallsPerCell);
  table.print();
  std::printf("\n");
}

}  // namespace ftmpi::bench

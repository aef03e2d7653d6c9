// Single-copy reads (process_vm_readv) from a forked child's buffer, against memcpy within a process.
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "ftmpi/bench/harness.hpp"
#include "ftmpi/path/peer_memory.hpp"
#include "pinning.hpp"
#include "sections.hpp"

namespace ftmpi::bench {

void run_peer_memory_bench() {
  constexpr std::size_t kMax = 16 << 20;
  std::vector<std::byte> remote(kMax, std::byte{1});
  std::vector<std::byte> local(kMax);
  CpuPinning pinning;
  int quit[2];
  if (::pipe(quit) != 0) return;
  const pid_t child = ::fork();
  if (child == 0) {
    // Write the buffer so that its pages are the child's own, then wait until the parent is done.
    ::close(quit[1]);
    pinning.pin(1);
    std::memset(remote.data(), 0x33, remote.size());
    char token = 0;
    ::_exit(::read(quit[0], &token, 1) < 0 ? 1 : 0);
  }
  ::close(quit[0]);
  pinning.pin(0);

  Table table({"copy", "bytes", "median GB/s", "best GB/s"});
  const auto address = reinterpret_cast<std::uintptr_t>(remote.data());
  for (std::size_t size : {std::size_t{1} << 20, kMax}) {
    const Timing cma = measure([&](std::uint64_t iterations) {
      for (std::uint64_t i = 0; i < iterations; ++i) {
        if (auto got = path::read_peer_memory(child, address, local.data(), size); !got) {
          std::fprintf(stderr, "path_bench: error: %s\n", got.status().to_string().c_str());
          return;
        }
        clobber_memory();
      }
    });
    const Timing copy = measure([&](std::uint64_t iterations) {
      for (std::uint64_t i = 0; i < iterations; ++i) {
        std::memcpy(local.data(), remote.data(), size);
        clobber_memory();
      }
    });
    const std::string bytes = std::to_string(size >> 20) + " MiB";
    table.add_row({"read_peer_memory", bytes, fixed(size / cma.ns_per_op), fixed(size / cma.min_ns_per_op)});
    table.add_row({"memcpy", bytes, fixed(size / copy.ns_per_op), fixed(size / copy.min_ns_per_op)});
  }
  ::close(quit[1]);
  int status = 0;
  ::waitpid(child, &status, 0);
  table.print();
}

}  // namespace ftmpi::bench

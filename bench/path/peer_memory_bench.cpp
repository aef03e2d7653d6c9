// Single-copy reads (process_vm_readv) from a forked child's buffer, against memcpy within a process;
// and a window of 64 KiB messages read one call each against one gathering call (the engine's
// engine.shm.gather_max), which shows the fixed part of each call.
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
  // 16 blocks of 64 KiB, 1 MiB in all (one gathering call's worth), into 16 local blocks.
  constexpr std::size_t kBlock = 64 << 10;
  constexpr std::size_t kBlocks = 16;
  std::vector<::iovec> remote_blocks, local_blocks;
  for (std::size_t b = 0; b < kBlocks; ++b) {
    remote_blocks.push_back({remote.data() + b * kBlock, kBlock});
    local_blocks.push_back({local.data() + b * kBlock, kBlock});
  }
  const Timing each = measure([&](std::uint64_t iterations) {
    for (std::uint64_t i = 0; i < iterations; ++i) {
      for (std::size_t b = 0; b < kBlocks; ++b) {
        if (auto got = path::read_peer_memory(child, address + b * kBlock, local_blocks[b].iov_base, kBlock); !got) {
          std::fprintf(stderr, "path_bench: error: %s\n", got.status().to_string().c_str());
          return;
        }
      }
      clobber_memory();
    }
  });
  const Timing gathered = measure([&](std::uint64_t iterations) {
    for (std::uint64_t i = 0; i < iterations; ++i) {
      if (auto got = path::read_peer_memory_gather(child, remote_blocks, local_blocks); !got) {
        std::fprintf(stderr, "path_bench: error: %s\n", got.status().to_string().c_str());
        return;
      }
      clobber_memory();
    }
  });
  constexpr double kWindowBytes = kBlock * kBlocks;
  table.add_row({"read_peer_memory, a call per 64 KiB", "16 x 64 KiB", fixed(kWindowBytes / each.ns_per_op),
                 fixed(kWindowBytes / each.min_ns_per_op)});
  table.add_row({"read_peer_memory_gather, one call", "16 x 64 KiB", fixed(kWindowBytes / gathered.ns_per_op),
                 fixed(kWindowBytes / gathered.min_ns_per_op)});
  ::close(quit[1]);
  int status = 0;
  ::waitpid(child, &status, 0);
  table.print();
}

}  // namespace ftmpi::bench

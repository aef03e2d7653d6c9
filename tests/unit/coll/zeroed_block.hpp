// A zeroed, 64-byte aligned heap block, as a fresh shm segment is: the memory the shared-memory
// collectives' tests lay their regions in.
#pragma once

#include <cstddef>
#include <cstdlib>
#include <cstring>

namespace ftmpi::coll::test {

struct ZeroedBlock {
  explicit ZeroedBlock(std::size_t n) : bytes((n + 63) / 64 * 64), memory(std::aligned_alloc(64, bytes)) {
    std::memset(memory, 0, bytes);
  }
  ~ZeroedBlock() { std::free(memory); }
  ZeroedBlock(const ZeroedBlock&) = delete;
  ZeroedBlock& operator=(const ZeroedBlock&) = delete;
  std::size_t bytes;
  void* memory;
};

}  // namespace ftmpi::coll::test

#include "ftmpi/path/peer_memory.hpp"

#include <sys/uio.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>

namespace ftmpi::path {
namespace {

// The kernel caps one call at MAX_RW_COUNT (2 GiB - 4 KiB); we pass at most this many bytes per call, and
// loop.
constexpr std::size_t kMaxChunk = std::size_t{1} << 30;
// Local blocks per call (the kernel's UIO_MAXIOV, which IOV_MAX is).
constexpr std::size_t kMaxBlocks = kMaxGatherBlocks;

// Distinctive, so that reading the wrong address is unlikely to pass for success.
constexpr std::uint64_t kProbeValue = 0x7a1c'9e05'c3f1'b66d;
const volatile std::uint64_t probe_word = kProbeValue;

enum class Direction : std::uint8_t { read, write };

base::Status errno_status(Direction direction, int err, pid_t pid, std::uintptr_t remote_addr, std::size_t len,
                          std::size_t done) {
  char buf[96];
  std::snprintf(buf, sizeof buf, "%s %zu bytes at %#zx of process %d: ",
                direction == Direction::read ? "reading" : "writing", len, static_cast<std::size_t>(remote_addr),
                static_cast<int>(pid));
  const std::string where = buf;
  switch (err) {
    case EPERM:
      return {base::Errc::unsupported,
              where + "not permitted (different user, target not dumpable, Yama ptrace_scope, or seccomp)"};
    case ESRCH:
      return {base::Errc::peer_unreachable, where + "no such process"};
    case EFAULT:
      return {base::Errc::invalid_argument, where + "bad address, in the peer or in the local buffer (" +
                                                std::to_string(done) + " bytes moved before it)"};
    case ENOMEM:
      return {base::Errc::resource_exhausted, where + "out of kernel memory"};
    case ENOSYS:
      return {base::Errc::unsupported, where + "cross-memory attach (process_vm_readv/writev) is not available in this kernel"};
    case EINVAL:
      return {base::Errc::invalid_argument, where + std::strerror(err)};
    default:
      return {base::Errc::io_error, where + std::strerror(err)};
  }
}

// Moves the bytes of `local`, in order, from or to `remote_addr` on in process `pid`.
base::Result<std::size_t> move_peer_memory(Direction direction, pid_t pid, std::uintptr_t remote_addr,
                                           std::span<const ::iovec> local) noexcept {
  std::size_t total = 0;
  for (const ::iovec& block : local) total += block.iov_len;
  std::array<::iovec, kMaxBlocks> batch;
  std::size_t next = 0;        // first block not wholly moved
  std::size_t next_done = 0;   // bytes of it already moved
  std::size_t done = 0;
  while (done < total) {
    // Up to kMaxBlocks local blocks and kMaxChunk bytes per call, starting inside block `next`.
    std::size_t count = 0;
    std::size_t chunk = 0;
    for (std::size_t i = next; i < local.size() && count < kMaxBlocks && chunk < kMaxChunk; ++i) {
      const std::size_t skip = i == next ? next_done : 0;
      const std::size_t n = std::min(local[i].iov_len - skip, kMaxChunk - chunk);
      if (n == 0) continue;
      batch[count++] = ::iovec{static_cast<std::byte*>(local[i].iov_base) + skip, n};
      chunk += n;
    }
    ::iovec remote_iov{reinterpret_cast<void*>(remote_addr + done), chunk};
    const ssize_t got = direction == Direction::read ? process_vm_readv(pid, batch.data(), count, &remote_iov, 1, 0)
                                                     : process_vm_writev(pid, batch.data(), count, &remote_iov, 1, 0);
    if (got < 0) {
      if (errno == EINTR) continue;
      return errno_status(direction, errno, pid, remote_addr, total, done);
    }
    // A short transfer stops at the first page that could not be copied; the next call reports why.
    if (got == 0) return errno_status(direction, EFAULT, pid, remote_addr, total, done);
    done += static_cast<std::size_t>(got);
    // Move past what was moved.
    for (std::size_t left = static_cast<std::size_t>(got); left > 0;) {
      const std::size_t rest = local[next].iov_len - next_done;
      if (left < rest) {
        next_done += left;
        break;
      }
      left -= rest;
      ++next;
      next_done = 0;
    }
  }
  return total;
}

}  // namespace

base::Result<std::size_t> read_peer_memory(pid_t pid, std::uintptr_t remote_addr, void* local,
                                           std::size_t len) noexcept {
  const ::iovec block{local, len};
  return read_peer_memory_scattered(pid, remote_addr, {&block, 1});
}

base::Result<std::size_t> read_peer_memory_scattered(pid_t pid, std::uintptr_t remote_addr,
                                                     std::span<const ::iovec> local) noexcept {
  return move_peer_memory(Direction::read, pid, remote_addr, local);
}

base::Result<std::size_t> read_peer_memory_gather(pid_t pid, std::span<const ::iovec> remote,
                                                  std::span<const ::iovec> local) noexcept {
  std::size_t total = 0;
  for (const ::iovec& block : local) total += block.iov_len;
  if (remote.size() > kMaxBlocks || local.size() > kMaxBlocks || total > kMaxChunk) {
    return base::Status(base::Errc::invalid_argument, "reading " + std::to_string(remote.size()) + " blocks (" +
                                                          std::to_string(total) + " bytes) of process " +
                                                          std::to_string(pid) + " in one call: too many");
  }
  if (total == 0) return std::size_t{0};
  ssize_t got = -1;
  do {
    got = process_vm_readv(pid, local.data(), local.size(), remote.data(), remote.size(), 0);
  } while (got < 0 && errno == EINTR);
  if (got < 0) {
    const std::uintptr_t first = remote.empty() ? 0 : reinterpret_cast<std::uintptr_t>(remote[0].iov_base);
    return errno_status(Direction::read, errno, pid, first, total, 0);
  }
  return static_cast<std::size_t>(got);
}

base::Result<std::size_t> write_peer_memory(pid_t pid, std::uintptr_t remote_addr, const void* local,
                                            std::size_t len) noexcept {
  // process_vm_writev only reads the local blocks; iovec has no const member.
  const ::iovec block{const_cast<void*>(local), len};
  return move_peer_memory(Direction::write, pid, remote_addr, {&block, 1});
}

std::uintptr_t single_copy_probe_address() noexcept {
  return reinterpret_cast<std::uintptr_t>(&probe_word);
}

base::Status probe_single_copy(pid_t pid, std::uintptr_t probe_address) noexcept {
  std::uint64_t value = 0;
  auto read = read_peer_memory(pid, probe_address, &value, sizeof value);
  if (!read) return read.status();
  if (value != kProbeValue) {
    return {base::Errc::invalid_argument, "process " + std::to_string(pid) +
                                              " has no probe word at the given address (read a wrong value)"};
  }
  return {};
}

}  // namespace ftmpi::path

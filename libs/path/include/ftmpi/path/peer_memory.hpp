// Single-copy reads from and writes into another process's memory (Linux cross-memory attach,
// process_vm_readv/writev), for large messages between ranks on one host: the receiver copies straight
// out of the sender's buffer, and for a split copy the sender writes the second half into the receiver's.
//
// The kernel allows it when the caller may ptrace the target: same user, target dumpable, and, where the
// Yama LSM is active, ptrace_scope 0, or 1 with the target having allowed it (ShmPath::attach names its
// parent, whose descendants, the job's ranks on this host, Yama then admits). Containers may also block
// the system call with seccomp; a read that fails is not an error to the engine (it pipes the message).
#pragma once

#include <sys/types.h>
#include <sys/uio.h>

#include <cstddef>
#include <cstdint>
#include <span>

#include "ftmpi/base/status.hpp"

namespace ftmpi::path {

// Copies `len` bytes at `remote_addr` in process `pid` into `local`, and returns `len`. Errors:
// unsupported (EPERM: not permitted, see above; ENOSYS), peer_unreachable (ESRCH: no such process),
// invalid_argument (EFAULT: a range is not mapped, in the peer or here), resource_exhausted (ENOMEM).
base::Result<std::size_t> read_peer_memory(pid_t pid, std::uintptr_t remote_addr, void* local,
                                           std::size_t len) noexcept;

// The same into several local blocks: the remote bytes from `remote_addr` on fill `local` in order (a
// receive into a derived datatype's pieces), up to IOV_MAX blocks per system call. Returns the bytes read.
base::Result<std::size_t> read_peer_memory_scattered(pid_t pid, std::uintptr_t remote_addr,
                                                     std::span<const ::iovec> local) noexcept;

// Several blocks of process `pid` into as many local blocks in one system call: the bytes of `remote`,
// in order, into `local`, in order (the messages of one peer that arrived together, each read into its
// receive: one call's fixed cost, the process lookup and the permission check, paid once). At most
// kMaxGatherBlocks blocks on each side and 1 GiB in all. Returns the bytes read, which may be fewer than
// asked: the kernel stops at the first block it cannot copy (read_peer_memory on the rest says why);
// an error only when nothing was read.
inline constexpr std::size_t kMaxGatherBlocks = 1024;  // the kernel's UIO_MAXIOV
base::Result<std::size_t> read_peer_memory_gather(pid_t pid, std::span<const ::iovec> remote,
                                                  std::span<const ::iovec> local) noexcept;

// Copies `len` bytes of `local` to `remote_addr` in process `pid` (process_vm_writev), and returns `len`.
// The same permission rule and errors as read_peer_memory.
base::Result<std::size_t> write_peer_memory(pid_t pid, std::uintptr_t remote_addr, const void* local,
                                            std::size_t len) noexcept;

// The address of this process's probe word, which peers pass to probe_single_copy.
std::uintptr_t single_copy_probe_address() noexcept;

// Checks that read_peer_memory works from this process into `pid` by reading its probe word, published
// by that process at `probe_address`, and comparing it with the known value. Returns why not otherwise.
base::Status probe_single_copy(pid_t pid, std::uintptr_t probe_address) noexcept;

}  // namespace ftmpi::path

#include "ftmpi/rte/fd.hpp"

#include <unistd.h>

namespace ftmpi::rte {

void UniqueFd::reset(int fd) noexcept {
  // close() may report EINTR, but on Linux the descriptor is released anyway: never retry.
  if (fd_ >= 0) ::close(fd_);
  fd_ = fd;
}

}  // namespace ftmpi::rte

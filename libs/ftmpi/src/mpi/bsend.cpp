#include "mpi/bsend.hpp"

#include <algorithm>
#include <cstring>
#include <utility>

#include <fmt/format.h>

#include "mpi/api.hpp"
#include "mpi/call.hpp"
#include "mpi/thread_lock.hpp"

namespace ftmpi::mpi {

void BsendBuffer::attach(std::byte* base, std::size_t size) noexcept {
  automatic_ = base == static_cast<void*>(MPI_BUFFER_AUTOMATIC);
  base_ = automatic_ ? nullptr : base;
  size_ = automatic_ ? 0 : size;
}

bool BsendBuffer::send(Call& call, engine::Engine& engine, const Transfer& transfer) {
  if (!attached()) {
    call.fail(MPI_ERR_BUFFER, "no buffer is attached (MPI_Buffer_attach)");
    return false;
  }
  if (automatic_) {
    reclaim(engine);
    auto owned = std::make_unique<std::byte[]>(transfer.bytes == 0 ? 1 : transfer.bytes);
    if (transfer.bytes > 0) std::memcpy(owned.get(), transfer.buf, transfer.bytes);
    slots_.reserve(slots_.size() + 1);  // once the send is started, recording it must not fail
    engine::Request* op = engine.isend(transfer.comm->view, owned.get(), transfer.bytes, transfer.peer, transfer.tag,
                                       engine::SendMode::standard);
    slots_.push_back(Slot{0, 0, op, std::move(owned)});
    return true;
  }
  const std::size_t length = transfer.bytes + MPI_BSEND_OVERHEAD;
  std::size_t offset = first_fit(length);
  if (offset == size_) {
    // Sends may have completed since we last looked, or will with one round of progress.
    reclaim(engine);
    engine.progress();
    reclaim(engine);
    offset = first_fit(length);
  }
  if (offset == size_) {
    call.fail(MPI_ERR_BUFFER,
              fmt::format("no room for {} bytes (+{} overhead) in the {}-byte attached buffer ({} sends pending)",
                          transfer.bytes, MPI_BSEND_OVERHEAD, size_, slots_.size()));
    return false;
  }
  std::byte* copy = base_ + offset;
  if (transfer.bytes > 0) std::memcpy(copy, transfer.buf, transfer.bytes);
  slots_.reserve(slots_.size() + 1);  // once the send is started, recording it must not fail
  engine::Request* op =
      engine.isend(transfer.comm->view, copy, transfer.bytes, transfer.peer, transfer.tag, engine::SendMode::standard);
  const auto at = std::find_if(slots_.begin(), slots_.end(), [&](const Slot& s) { return s.offset > offset; });
  slots_.insert(at, Slot{offset, length, op, nullptr});
  return true;
}

void BsendBuffer::drain(engine::Engine& engine) {
  engine.progress_until(
      [&] {
        reclaim(engine);
        return slots_.empty();
      },
      [] { ThreadLock::pass(); });
}

bool BsendBuffer::drained(engine::Engine& engine) {
  reclaim(engine);
  return slots_.empty();
}

std::pair<std::byte*, std::size_t> BsendBuffer::detach(engine::Engine& engine) {
  drain(engine);
  if (std::exchange(automatic_, false)) return {static_cast<std::byte*>(MPI_BUFFER_AUTOMATIC), 0};
  return {std::exchange(base_, nullptr), std::exchange(size_, 0)};
}

void BsendBuffer::reclaim(engine::Engine& engine) {
  std::erase_if(slots_, [&](const Slot& slot) {
    if (!engine.is_complete(slot.op, nullptr)) return false;
    engine.release(slot.op);
    return true;
  });
}

std::size_t BsendBuffer::first_fit(std::size_t length) const noexcept {
  std::size_t gap_start = 0;
  for (const Slot& slot : slots_) {
    if (slot.offset - gap_start >= length) return gap_start;
    gap_start = slot.offset + slot.length;
  }
  return size_ - gap_start >= length ? gap_start : size_;
}

}  // namespace ftmpi::mpi

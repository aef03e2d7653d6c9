// The buffer of MPI_Buffer_attach: buffered sends copy their message in and are sent from there.
//
// Each message takes its bytes plus MPI_BSEND_OVERHEAD, placed first-fit; the bookkeeping itself lives
// outside the user's buffer, so the overhead is only the room MPI lets us claim. Room is reclaimed when
// the engine reports a send complete: looked at whenever a new message does not fit, and waited for by
// MPI_Buffer_detach and MPI_Finalize. MPI-4.1's MPI_BUFFER_AUTOMATIC: each message in memory of its own,
// allocated as it comes, so that there is always room. One buffer for the process (MPI_Buffer_attach)
// and one per communicator that has one attached (MPI_Comm_attach_buffer), used first by its sends.
#pragma once

#include <cstddef>
#include <memory>
#include <utility>
#include <vector>

#include "engine/engine.hpp"
#include "mpi/comm.hpp"

namespace ftmpi::mpi {

class Call;

class BsendBuffer {
 public:
  bool attached() const noexcept { return base_ != nullptr || automatic_; }
  // base MPI_BUFFER_AUTOMATIC: messages in memory of their own (size is not used).
  void attach(std::byte* base, std::size_t size) noexcept;
  // Copies the message in and starts sending it from there; fails the call with MPI_ERR_BUFFER when
  // there is no room.
  bool send(Call& call, engine::Engine& engine, const Transfer& transfer);
  // Waits until every buffered send is complete.
  void drain(engine::Engine& engine);
  // Whether every buffered send is complete now (makes no progress).
  bool drained(engine::Engine& engine);
  // Drains, then forgets the buffer and returns it (MPI_BUFFER_AUTOMATIC and 0 for an automatic one).
  std::pair<std::byte*, std::size_t> detach(engine::Engine& engine);

 private:
  struct Slot {
    std::size_t offset;
    std::size_t length;  // message bytes + MPI_BSEND_OVERHEAD
    engine::Request* op;
    std::unique_ptr<std::byte[]> owned;  // the message's memory, in automatic mode
  };

  void reclaim(engine::Engine& engine);
  // Offset of the first gap of `length` bytes, or size_ when there is none.
  std::size_t first_fit(std::size_t length) const noexcept;

  std::byte* base_ = nullptr;
  std::size_t size_ = 0;
  bool automatic_ = false;
  std::vector<Slot> slots_;  // in offset order
};

}  // namespace ftmpi::mpi

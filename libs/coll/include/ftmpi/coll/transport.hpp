// The point-to-point interface the collective algorithms run over. libs/coll declares it and knows
// nothing else about how messages move: the MPI layer implements it over the engine on a hidden
// context of each communicator, and the unit tests over in-memory queues between threads.
//
// What an implementation must guarantee (the same as MPI point-to-point on one communicator):
//   - Ranks are 0 .. size()-1 of the communicator the collective runs on.
//   - Non-overtaking: two messages from one sender to one receiver with the same tag match that
//     receiver's receives (from that sender, with that tag) in the order they were sent, and receives
//     are matched in the order they were posted. Nothing else is ordered: messages with different
//     tags, or from different senders, may match in any order.
//   - A receive names its source and tag exactly (the algorithms never use wildcards) and the exact
//     size of the message it expects; a message of another size is an error the transport reports
//     on that receive, never a silent truncation.
//   - Sends and receives never block. A send may complete before the receiver posted its receive
//     (buffered) or only once matched (rendezvous); the algorithms assume neither, so a transport
//     may choose per message.
//   - Buffers belong to the transport from the isend/irecv until the request completes.
//   - Zero-byte messages are real messages (they are how a barrier synchronizes).
//
// Tags: the tag space is the collectives' own (the MPI layer keeps it apart from the application's
// by running collectives on a hidden context). Each collective call uses the single tag it is given
// for all its messages; the caller gives consecutive calls on one communicator different tags (a
// counter every rank advances alike, since MPI has every rank start collectives in the same order),
// so that several non-blocking collectives can be under way at once without their messages mixing.
//
// Errors: an error from any call ends the collective at once with that Status. Requests still in
// flight are not cancelled (the interface has no cancel): their buffers must outlive them, so the
// caller must treat the communicator's collective context as broken. A lost peer fails the requests
// that name it (docs/architecture.md, "Errors"); a request to another peer may still be under way.
//
// Not thread-safe by contract: one collective schedule is driven by one thread at a time.
#pragma once

#include <cstddef>
#include <cstdint>

#include "ftmpi/base/status.hpp"

namespace ftmpi::coll {

// Names one send or receive in flight; meaningful only to the transport that issued it. It is
// released when test() returns true or wait() returns, and must not be used afterwards.
using RequestId = std::uint64_t;

class Transport {
 public:
  virtual ~Transport() = default;

  virtual int rank() const noexcept = 0;
  virtual int size() const noexcept = 0;

  // Starts sending `bytes` bytes from `data` to `dest` with `tag` (>= 0).
  virtual base::Result<RequestId> isend(const void* data, std::size_t bytes, int dest, int tag) = 0;
  // Starts receiving a message of exactly `bytes` bytes from `source` with `tag` into `data`.
  virtual base::Result<RequestId> irecv(void* data, std::size_t bytes, int source, int tag) = 0;

  // True when the request has completed (and is released), false while it is still under way.
  // Never blocks.
  virtual base::Result<bool> test(RequestId request) = 0;
  // Blocks until the request completes, making progress meanwhile (spinning, yielding or sleeping as
  // the implementation sees fit), and releases it.
  virtual base::Status wait(RequestId request) = 0;
  // Moves messages along without waiting for anything in particular; never blocks.
  virtual base::Status progress() = 0;

 protected:
  Transport() = default;
  Transport(const Transport&) = default;
  Transport& operator=(const Transport&) = default;
};

}  // namespace ftmpi::coll

// The collective operations over a Transport: what the MPI layer maps MPI_Bcast, MPI_Iallreduce, ...
// onto once it has packed derived datatypes into contiguous bytes.
//
// Each collective comes twice: `x(...)` blocks and returns the outcome; `ix(...)` builds the
// schedule, posts its first round and returns it for the caller to test() or wait() (schedule.hpp).
// Every rank of the communicator calls the same collective with the same tag, root and sizes
// (as MPI requires); the algorithm is chosen by the Tuning (tuning.hpp), alike on every rank.
//
// Sizes: collectives that move data are in bytes; reductions are in elements of the Reduction's
// element size. v-variants take per-rank byte counts and byte displacements (alltoallv with byte
// displacements is also MPI_Alltoallw once the MPI layer packed each rank's datatype).
//
// In place (MPI_IN_PLACE): pass kInPlace, which has MPI_IN_PLACE's value in our mpi.h ((void*)-1),
// so the shim passes it through. Where MPI allows it:
//   reduce                  root's send; root's input is read from recv
//   allreduce, scan, exscan send; the input is read from recv
//   gather, gatherv         root's send; root's block is already in place in recv
//   scatter, scatterv       root's recv; root's block stays in send
//   allgather, allgatherv   send; this rank's block is already in place in recv
//   alltoall, alltoallv     send; the data is taken from recv (alltoallv: with recv counts and
//                           displacements, which must then match what peers expect)
//   reduce_scatter(_block)  send; recv holds the whole input vector, the result goes to its start
// A null pointer is never taken for kInPlace: MPI allows null buffers for zero-byte arguments.
//
// Errors (Errc::invalid_argument, nothing sent): a root out of range, count arrays of the wrong
// length, kInPlace where MPI does not allow it, a replace or no_op reduction (MPI allows those only
// in one-sided accumulates). Errors from the transport are passed on (see transport.hpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "ftmpi/base/status.hpp"
#include "ftmpi/coll/reduction.hpp"
#include "ftmpi/coll/schedule.hpp"
#include "ftmpi/coll/transport.hpp"
#include "ftmpi/coll/tuning.hpp"

namespace ftmpi::coll {

inline const void* const kInPlace = reinterpret_cast<const void*>(static_cast<std::intptr_t>(-1));
inline bool is_in_place(const void* buffer) noexcept { return buffer == kInPlace; }

// What every collective call needs besides its buffers.
struct Call {
  Transport& transport;
  const Tuning& tuning;
  int tag = 0;  // >= 0; the same on every rank, different for each call under way (transport.hpp)
};

using Counts = std::span<const std::size_t>;      // one per rank, bytes or elements
using Displs = std::span<const std::ptrdiff_t>;   // one per rank, bytes

base::Result<Schedule> ibarrier(const Call& call);
base::Status barrier(const Call& call);

base::Result<Schedule> ibcast(const Call& call, void* buffer, std::size_t bytes, int root);
base::Status bcast(const Call& call, void* buffer, std::size_t bytes, int root);

// recv matters only at the root.
base::Result<Schedule> ireduce(const Call& call, const void* send, void* recv, std::size_t count,
                               const Reduction& reduction, int root);
base::Status reduce(const Call& call, const void* send, void* recv, std::size_t count,
                    const Reduction& reduction, int root);

base::Result<Schedule> iallreduce(const Call& call, const void* send, void* recv, std::size_t count,
                                  const Reduction& reduction);
base::Status allreduce(const Call& call, const void* send, void* recv, std::size_t count,
                       const Reduction& reduction);

// `bytes` is one rank's block; recv (root only) holds size() blocks in rank order.
base::Result<Schedule> igather(const Call& call, const void* send, void* recv, std::size_t bytes, int root);
base::Status gather(const Call& call, const void* send, void* recv, std::size_t bytes, int root);

// recv_bytes and recv_displs matter only at the root (elsewhere they may be empty).
base::Result<Schedule> igatherv(const Call& call, const void* send, std::size_t send_bytes, void* recv,
                                Counts recv_bytes, Displs recv_displs, int root);
base::Status gatherv(const Call& call, const void* send, std::size_t send_bytes, void* recv,
                     Counts recv_bytes, Displs recv_displs, int root);

// `bytes` is one rank's block; send (root only) holds size() blocks in rank order.
base::Result<Schedule> iscatter(const Call& call, const void* send, void* recv, std::size_t bytes, int root);
base::Status scatter(const Call& call, const void* send, void* recv, std::size_t bytes, int root);

// send_bytes and send_displs matter only at the root (elsewhere they may be empty).
base::Result<Schedule> iscatterv(const Call& call, const void* send, Counts send_bytes, Displs send_displs,
                                 void* recv, std::size_t recv_bytes, int root);
base::Status scatterv(const Call& call, const void* send, Counts send_bytes, Displs send_displs, void* recv,
                      std::size_t recv_bytes, int root);

// `bytes` is one rank's block; recv holds size() blocks in rank order.
base::Result<Schedule> iallgather(const Call& call, const void* send, void* recv, std::size_t bytes);
base::Status allgather(const Call& call, const void* send, void* recv, std::size_t bytes);

// This rank sends recv_bytes[rank()] bytes.
base::Result<Schedule> iallgatherv(const Call& call, const void* send, void* recv, Counts recv_bytes,
                                   Displs recv_displs);
base::Status allgatherv(const Call& call, const void* send, void* recv, Counts recv_bytes, Displs recv_displs);

// `bytes` per pair: send and recv hold size() blocks each.
base::Result<Schedule> ialltoall(const Call& call, const void* send, void* recv, std::size_t bytes);
base::Status alltoall(const Call& call, const void* send, void* recv, std::size_t bytes);

base::Result<Schedule> ialltoallv(const Call& call, const void* send, Counts send_bytes, Displs send_displs,
                                  void* recv, Counts recv_bytes, Displs recv_displs);
base::Status alltoallv(const Call& call, const void* send, Counts send_bytes, Displs send_displs, void* recv,
                       Counts recv_bytes, Displs recv_displs);

// send holds sum(recv_counts) elements; rank i gets the reduction of block i (recv_counts[i]).
base::Result<Schedule> ireduce_scatter(const Call& call, const void* send, void* recv, Counts recv_counts,
                                       const Reduction& reduction);
base::Status reduce_scatter(const Call& call, const void* send, void* recv, Counts recv_counts,
                            const Reduction& reduction);

// send holds size() * count elements; every rank gets `count`.
base::Result<Schedule> ireduce_scatter_block(const Call& call, const void* send, void* recv, std::size_t count,
                                             const Reduction& reduction);
base::Status reduce_scatter_block(const Call& call, const void* send, void* recv, std::size_t count,
                                  const Reduction& reduction);

// Inclusive prefix: rank r gets x_0 op ... op x_r.
base::Result<Schedule> iscan(const Call& call, const void* send, void* recv, std::size_t count,
                             const Reduction& reduction);
base::Status scan(const Call& call, const void* send, void* recv, std::size_t count, const Reduction& reduction);

// Exclusive prefix: rank r > 0 gets x_0 op ... op x_(r-1); rank 0's recv is left untouched.
base::Result<Schedule> iexscan(const Call& call, const void* send, void* recv, std::size_t count,
                               const Reduction& reduction);
base::Status exscan(const Call& call, const void* send, void* recv, std::size_t count,
                    const Reduction& reduction);

}  // namespace ftmpi::coll

// Every algorithm, as a function that writes one rank's part of a schedule. The front end
// (collectives.cpp) checks arguments, resolves kInPlace into the pointers below and picks one.
// Conventions: `send` may equal `recv` (or the rank's block of it) where the collective is in
// place; sizes are bytes, or elements for reductions (the builder knows the element size).
#pragma once

#include <cstddef>
#include <span>

#include "builder.hpp"

namespace ftmpi::coll::detail {

using ByteCounts = std::span<const std::size_t>;
using ByteDispls = std::span<const std::ptrdiff_t>;

void barrier_dissemination(ScheduleBuilder& b);

void bcast_binomial(ScheduleBuilder& b, std::byte* buffer, std::size_t bytes, int root);
void bcast_pipeline(ScheduleBuilder& b, std::byte* buffer, std::size_t bytes, int root, std::size_t segment);
void bcast_scatter_allgather(ScheduleBuilder& b, std::byte* buffer, std::size_t bytes, int root);

// send == recv at an in-place root.
void reduce_binomial(ScheduleBuilder& b, const std::byte* send, std::byte* recv, std::size_t count, int root);
void reduce_pipeline(ScheduleBuilder& b, const std::byte* send, std::byte* recv, std::size_t count, int root,
                     std::size_t segment);

// send == recv when in place.
void allreduce_recursive_doubling(ScheduleBuilder& b, const std::byte* send, std::byte* recv, std::size_t count);
void allreduce_rabenseifner(ScheduleBuilder& b, const std::byte* send, std::byte* recv, std::size_t count);
void allreduce_ring(ScheduleBuilder& b, const std::byte* send, std::byte* recv, std::size_t count);

// send is this rank's block (recv + root * bytes at an in-place root).
void gather_binomial(ScheduleBuilder& b, const std::byte* send, std::byte* recv, std::size_t bytes, int root);
void gather_linear(ScheduleBuilder& b, const std::byte* send, std::byte* recv, std::size_t bytes, int root);
void gatherv_linear(ScheduleBuilder& b, const std::byte* send, std::size_t send_bytes, std::byte* recv,
                    ByteCounts recv_bytes, ByteDispls recv_displs, int root);
// recv is null at an in-place root.
void scatter_binomial(ScheduleBuilder& b, const std::byte* send, std::byte* recv, std::size_t bytes, int root);
void scatter_linear(ScheduleBuilder& b, const std::byte* send, std::byte* recv, std::size_t bytes, int root);
void scatterv_linear(ScheduleBuilder& b, const std::byte* send, ByteCounts send_bytes, ByteDispls send_displs,
                     std::byte* recv, std::size_t recv_bytes, int root);

// send is this rank's block (the rank's place in recv when in place).
void allgather_recursive_doubling(ScheduleBuilder& b, const std::byte* send, std::byte* recv, std::size_t bytes);
void allgather_bruck(ScheduleBuilder& b, const std::byte* send, std::byte* recv, std::size_t bytes);
void allgather_ring(ScheduleBuilder& b, const std::byte* send, std::byte* recv, std::size_t bytes);
void allgatherv_recursive_doubling(ScheduleBuilder& b, const std::byte* send, std::byte* recv,
                                   ByteCounts recv_bytes, ByteDispls recv_displs);
void allgatherv_ring(ScheduleBuilder& b, const std::byte* send, std::byte* recv, ByteCounts recv_bytes,
                     ByteDispls recv_displs);

// One block per peer; in place, send is a scratch copy the front end cannot make, so these take
// an `in_place` flag and copy recv themselves.
void alltoallv_linear(ScheduleBuilder& b, const std::byte* send, ByteCounts send_bytes, ByteDispls send_displs,
                      std::byte* recv, ByteCounts recv_bytes, ByteDispls recv_displs, bool in_place);
void alltoallv_pairwise(ScheduleBuilder& b, const std::byte* send, ByteCounts send_bytes,
                        ByteDispls send_displs, std::byte* recv, ByteCounts recv_bytes, ByteDispls recv_displs,
                        bool in_place);

// send == recv when in place; counts in elements.
void reduce_scatter_recursive_halving(ScheduleBuilder& b, const std::byte* send, std::byte* recv,
                                      std::span<const std::size_t> counts);
void reduce_scatter_pairwise(ScheduleBuilder& b, const std::byte* send, std::byte* recv,
                             std::span<const std::size_t> counts);

// send == recv when in place.
void scan_recursive_doubling(ScheduleBuilder& b, const std::byte* send, std::byte* recv, std::size_t count);
void scan_pipeline(ScheduleBuilder& b, const std::byte* send, std::byte* recv, std::size_t count,
                   std::size_t segment);
void exscan_recursive_doubling(ScheduleBuilder& b, const std::byte* send, std::byte* recv, std::size_t count);
void exscan_pipeline(ScheduleBuilder& b, const std::byte* send, std::byte* recv, std::size_t count,
                     std::size_t segment);

}  // namespace ftmpi::coll::detail

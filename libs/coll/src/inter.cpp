// Intercommunicator collectives (inter.hpp). Linear within a group: the leader receives from or sends
// to each member, all posted at once; intercommunicators join a few groups (clients and servers,
// coupled codes), where a collective's latency is one exchange between the groups.
#include "ftmpi/coll/inter.hpp"

#include <numeric>
#include <string>
#include <vector>

#include "builder.hpp"

namespace ftmpi::coll {
namespace {

using base::Result;
using base::Status;
using detail::invalid;
using detail::ScheduleBuilder;
using detail::started;

Status check_groups(const Call& call, Groups g, std::string_view collective) {
  if (call.tag < 0) return invalid(collective, "negative tag " + std::to_string(call.tag));
  if (g.local < 1 || g.remote < 1 || g.local + g.remote != call.transport.size() ||
      call.transport.rank() >= g.local) {
    return invalid(collective, "the transport does not number " + std::to_string(g.local) + " local and " +
                                   std::to_string(g.remote) + " remote ranks with this one among the local");
  }
  return {};
}

Status check_root(const Call& call, Groups g, int root, std::string_view collective) {
  if (Status s = check_groups(call, g, collective); !s) return s;
  if (root != kInterRoot && root != kInterIdle && (root < 0 || root >= g.remote)) {
    return invalid(collective, "root " + std::to_string(root) + " is not a rank of the other group of " +
                                   std::to_string(g.remote));
  }
  return {};
}

template <typename Span>
Status check_remote(Groups g, Span values, std::string_view what, std::string_view collective) {
  if (values.size() != static_cast<std::size_t>(g.remote)) {
    return invalid(collective, std::string(what) + " has " + std::to_string(values.size()) + " entries for " +
                                   std::to_string(g.remote) + " remote ranks");
  }
  return {};
}

// The group's vectors combined in rank order at the leader (local rank 0): returns where the result
// is there (a scratch buffer of the schedule), null elsewhere. Two rounds: the members' vectors in,
// then (at the round's start) x_0 op (x_1 op (... op x_(n-1))), associative as MPI's ops are.
std::byte* combine_at_leader(ScheduleBuilder& b, Groups g, const void* send, std::size_t count) {
  const std::size_t bytes = count * b.element_size();
  if (b.rank() != 0) {
    b.send(send, bytes, 0);
    b.end_round();
    return nullptr;
  }
  std::vector<std::byte*> vectors(static_cast<std::size_t>(g.local));
  for (int i = 1; i < g.local; ++i) {
    vectors[static_cast<std::size_t>(i)] = b.scratch(bytes);
    b.recv(vectors[static_cast<std::size_t>(i)], bytes, i);
  }
  b.end_round();
  std::byte* acc = b.scratch(bytes);
  if (g.local == 1) {
    b.copy(send, acc, bytes);
    return acc;
  }
  b.copy(vectors.back(), acc, bytes);
  for (int i = g.local - 2; i >= 1; --i) b.reduce(vectors[static_cast<std::size_t>(i)], acc, count);
  b.reduce(send, acc, count);
  return acc;
}

// The leader's `bytes` at `data` copied to every member's `data` (one round).
void spread_from_leader(ScheduleBuilder& b, Groups g, void* data, std::size_t bytes) {
  if (b.rank() == 0) {
    for (int i = 1; i < g.local; ++i) b.send(data, bytes, i);
  } else {
    b.recv(data, bytes, 0);
  }
}

}  // namespace

Result<Schedule> inter_ibarrier(const Call& call, Groups g) {
  if (Status s = check_groups(call, g, "inter barrier"); !s) return s;
  ScheduleBuilder b(call.transport, call.tag);
  // Each group gathers at its leader, the leaders exchange, each leader releases its group.
  if (b.rank() == 0) {
    for (int i = 1; i < g.local; ++i) b.recv_empty(i);
  } else {
    b.send_empty(0);
  }
  b.end_round();
  if (b.rank() == 0) {
    b.send_empty(g.local);
    b.recv_empty(g.local);
  }
  b.end_round();
  if (b.rank() == 0) {
    for (int i = 1; i < g.local; ++i) b.send_empty(i);
  } else {
    b.recv_empty(0);
  }
  return started(std::move(b).finish());
}

Result<Schedule> inter_ibcast(const Call& call, Groups g, void* buffer, std::size_t bytes, int root) {
  if (Status s = check_root(call, g, root, "inter bcast"); !s) return s;
  ScheduleBuilder b(call.transport, call.tag);
  if (root == kInterRoot) {
    b.send(buffer, bytes, g.local);  // to the other group's leader
  } else if (root != kInterIdle) {
    if (b.rank() == 0) {
      b.recv(buffer, bytes, g.local + root);
      b.end_round();
    }
    spread_from_leader(b, g, buffer, bytes);
  }
  return started(std::move(b).finish());
}

Result<Schedule> inter_ireduce(const Call& call, Groups g, const void* send, void* recv, std::size_t count,
                               const Reduction& reduction, int root) {
  if (Status s = check_root(call, g, root, "inter reduce"); !s) return s;
  ScheduleBuilder b(call.transport, call.tag, &reduction);
  if (root == kInterRoot) {
    b.recv(recv, count * b.element_size(), g.local);
  } else if (root != kInterIdle) {
    std::byte* result = combine_at_leader(b, g, send, count);
    if (result != nullptr) b.send(result, count * b.element_size(), g.local + root);
  }
  return started(std::move(b).finish());
}

Result<Schedule> inter_iallreduce(const Call& call, Groups g, const void* send, void* recv, std::size_t count,
                                  const Reduction& reduction) {
  if (Status s = check_groups(call, g, "inter allreduce"); !s) return s;
  ScheduleBuilder b(call.transport, call.tag, &reduction);
  const std::size_t bytes = count * b.element_size();
  std::byte* result = combine_at_leader(b, g, send, count);
  if (result != nullptr) {
    b.send(result, bytes, g.local);
    b.recv(recv, bytes, g.local);
  }
  b.end_round();
  spread_from_leader(b, g, recv, bytes);
  return started(std::move(b).finish());
}

Result<Schedule> inter_igatherv(const Call& call, Groups g, const void* send, std::size_t send_bytes, void* recv,
                                Counts recv_bytes, Displs recv_displs, int root) {
  if (Status s = check_root(call, g, root, "inter gatherv"); !s) return s;
  ScheduleBuilder b(call.transport, call.tag);
  if (root == kInterRoot) {
    if (Status s = check_remote(g, recv_bytes, "recv_bytes", "inter gatherv"); !s) return s;
    if (Status s = check_remote(g, recv_displs, "recv_displs", "inter gatherv"); !s) return s;
    for (int j = 0; j < g.remote; ++j) {
      const auto k = static_cast<std::size_t>(j);
      b.recv(detail::at(recv, recv_displs[k]), recv_bytes[k], g.local + j);
    }
  } else if (root != kInterIdle) {
    b.send(send, send_bytes, g.local + root);
  }
  return started(std::move(b).finish());
}

Result<Schedule> inter_iscatterv(const Call& call, Groups g, const void* send, Counts send_bytes, Displs send_displs,
                                 void* recv, std::size_t recv_bytes, int root) {
  if (Status s = check_root(call, g, root, "inter scatterv"); !s) return s;
  ScheduleBuilder b(call.transport, call.tag);
  if (root == kInterRoot) {
    if (Status s = check_remote(g, send_bytes, "send_bytes", "inter scatterv"); !s) return s;
    if (Status s = check_remote(g, send_displs, "send_displs", "inter scatterv"); !s) return s;
    for (int j = 0; j < g.remote; ++j) {
      const auto k = static_cast<std::size_t>(j);
      b.send(detail::at(send, send_displs[k]), send_bytes[k], g.local + j);
    }
  } else if (root != kInterIdle) {
    b.recv(recv, recv_bytes, g.local + root);
  }
  return started(std::move(b).finish());
}

Result<Schedule> inter_iallgatherv(const Call& call, Groups g, const void* send, std::size_t send_bytes, void* recv,
                                   Counts recv_bytes, Displs recv_displs) {
  if (Status s = check_groups(call, g, "inter allgatherv"); !s) return s;
  if (Status s = check_remote(g, recv_bytes, "recv_bytes", "inter allgatherv"); !s) return s;
  if (Status s = check_remote(g, recv_displs, "recv_displs", "inter allgatherv"); !s) return s;
  ScheduleBuilder b(call.transport, call.tag);
  for (int j = 0; j < g.remote; ++j) {
    const auto k = static_cast<std::size_t>(j);
    b.recv(detail::at(recv, recv_displs[k]), recv_bytes[k], g.local + j);
    b.send(send, send_bytes, g.local + j);
  }
  return started(std::move(b).finish());
}

Result<Schedule> inter_ialltoallv(const Call& call, Groups g, const void* send, Counts send_bytes, Displs send_displs,
                                  void* recv, Counts recv_bytes, Displs recv_displs) {
  if (Status s = check_groups(call, g, "inter alltoallv"); !s) return s;
  for (auto [values, what] : {std::pair{send_bytes, "send_bytes"}, std::pair{recv_bytes, "recv_bytes"}}) {
    if (Status s = check_remote(g, values, what, "inter alltoallv"); !s) return s;
  }
  for (auto [values, what] : {std::pair{send_displs, "send_displs"}, std::pair{recv_displs, "recv_displs"}}) {
    if (Status s = check_remote(g, values, what, "inter alltoallv"); !s) return s;
  }
  ScheduleBuilder b(call.transport, call.tag);
  for (int j = 0; j < g.remote; ++j) {
    const auto k = static_cast<std::size_t>(j);
    b.recv(detail::at(recv, recv_displs[k]), recv_bytes[k], g.local + j);
    b.send(detail::at(send, send_displs[k]), send_bytes[k], g.local + j);
  }
  return started(std::move(b).finish());
}

Result<Schedule> inter_ireduce_scatter(const Call& call, Groups g, const void* send, void* recv, Counts counts,
                                       const Reduction& reduction) {
  if (Status s = check_groups(call, g, "inter reduce_scatter"); !s) return s;
  if (counts.size() != static_cast<std::size_t>(g.local)) {
    return invalid("inter reduce_scatter", "counts has " + std::to_string(counts.size()) + " entries for " +
                                               std::to_string(g.local) + " local ranks");
  }
  ScheduleBuilder b(call.transport, call.tag, &reduction);
  const std::size_t element = b.element_size();
  const std::size_t total = std::accumulate(counts.begin(), counts.end(), std::size_t{0});
  std::byte* mine = combine_at_leader(b, g, send, total);
  std::byte* theirs = nullptr;
  if (mine != nullptr) {
    theirs = b.scratch(total * element);
    b.send(mine, total * element, g.local);
    b.recv(theirs, total * element, g.local);
  }
  b.end_round();
  if (b.rank() == 0) {
    std::size_t offset = counts[0] * element;
    b.copy(theirs, recv, offset);
    for (int i = 1; i < g.local; ++i) {
      const std::size_t n = counts[static_cast<std::size_t>(i)] * element;
      b.send(theirs + offset, n, i);
      offset += n;
    }
  } else {
    b.recv(recv, counts[static_cast<std::size_t>(b.rank())] * element, 0);
  }
  return started(std::move(b).finish());
}

}  // namespace ftmpi::coll

#include "mpi/shm_coll.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "ftmpi/params/catalogue.hpp"
#include "ftmpi/params/engine_params.hpp"
#include "ftmpi/base/log.hpp"
#include "ftmpi/coll/collectives.hpp"
#include "ftmpi/coll/shm_bcast.hpp"
#include "ftmpi/coll/shm_sync.hpp"
#include "ftmpi/rte/job.hpp"
#include "mpi/comms.hpp"
#include "mpi/runtime.hpp"

namespace ftmpi::mpi {

// One communicator's shared-memory collective state at this process. The segment holds the broadcast
// region, then the sync region.
struct ShmCollComm {
  Comm* comm = nullptr;
  std::vector<int> host_of;  // per communicator rank: the lowest rank on its host
  std::vector<int> members;  // this host's ranks, in rank order
  std::unique_ptr<coll::SubsetTransport> local;
  void* map = nullptr;
  std::size_t map_bytes = 0;
  std::unique_ptr<coll::ShmBcast> shm;  // null: alone on this host, or the region could not be made
  bool one_host = false;                // every member is on this host: local rank == communicator rank
  // Null unless every member is on this host, the region was made, and checksums are not forced.
  std::unique_ptr<coll::ShmSync> sync;

  ~ShmCollComm() {
    sync.reset();
    shm.reset();
    if (map != nullptr) ::munmap(map, map_bytes);
  }
};

void ShmCollCommDeleter::operator()(ShmCollComm* state) const noexcept { delete state; }

namespace {

using base::Errc;
using base::Status;

std::uint64_t fnv1a(std::string_view text) {
  std::uint64_t h = 0xcbf29ce484222325ULL;
  for (char c : text) {
    h ^= static_cast<unsigned char>(c);
    h *= 0x100000001b3ULL;
  }
  return h;
}

void idle() { progress_once(); }

// The sync region's operands carry no checksum: when checksums are forced on shared memory (to test
// them), the barrier and allreduce go point-to-point like everything else.
bool checksums_forced() { return runtime().params.text(engine::kReliability) == "force"; }

// How many turns a wait spins before yielding at every turn: the engine's rule (0 on an oversubscribed
// host), capped.
unsigned spin_turns() { return static_cast<unsigned>(std::min<std::uint64_t>(engine().spin_rounds(), 1u << 20)); }

Status run(base::Result<coll::Schedule> schedule) {
  if (!schedule) return schedule.status();
  Status status;
  progress_until([&] {
    auto done = schedule->test();
    if (!done) {
      status = done.status();
      return true;
    }
    return *done;
  });
  return status;
}

Status wait(Comm& comm, base::Result<coll::RequestId> request) {
  if (!request) return request.status();
  return comm.transport.wait(*request);
}

// The leader's half of making the segment: creates, sizes, maps and formats both regions. Fills `state`.
Status create_region(ShmCollComm& state, const std::string& name, const coll::ShmBcastGeometry& geometry,
                     const coll::ShmSyncGeometry& sync_geometry) {
  const std::size_t bcast_bytes = coll::ShmBcastRegion::bytes_for(geometry);
  const std::size_t bytes = bcast_bytes + coll::ShmSyncRegion::bytes_for(sync_geometry);
  const int fd = ::shm_open(name.c_str(), O_CREAT | O_EXCL | O_RDWR, 0600);
  if (fd < 0) return Status(Errc::io_error, fmt::format("shm_open {}: {}", name, std::strerror(errno)));
  if (::ftruncate(fd, static_cast<off_t>(bytes)) != 0) {
    const int e = errno;
    ::close(fd);
    return Status(Errc::io_error, fmt::format("ftruncate {}: {}", name, std::strerror(e)));
  }
  void* map = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  ::close(fd);
  if (map == MAP_FAILED) return Status(Errc::io_error, fmt::format("mmap {}: {}", name, std::strerror(errno)));
  state.map = map;
  state.map_bytes = bytes;
  if (Status s = coll::ShmBcastRegion::format(map, bcast_bytes, geometry); !s) return s;
  return coll::ShmSyncRegion::format(static_cast<std::byte*>(map) + bcast_bytes, bytes - bcast_bytes, sync_geometry);
}

Status open_region(ShmCollComm& state, const std::string& name) {
  const int fd = ::shm_open(name.c_str(), O_RDWR, 0);
  if (fd < 0) return Status(Errc::io_error, fmt::format("shm_open {}: {}", name, std::strerror(errno)));
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    const int e = errno;
    ::close(fd);
    return Status(Errc::io_error, fmt::format("fstat {}: {}", name, std::strerror(e)));
  }
  const auto bytes = static_cast<std::size_t>(st.st_size);
  void* map = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  ::close(fd);
  if (map == MAP_FAILED) return Status(Errc::io_error, fmt::format("mmap {}: {}", name, std::strerror(errno)));
  state.map = map;
  state.map_bytes = bytes;
  return {};
}

coll::ShmBcastOptions options_from(const coll::Tuning& t) {
  coll::ShmBcastOptions o;
  o.keep_max = t.shm_bcast_keep_max;
  o.timeout = t.shm_bcast_timeout;
  o.idle = idle;
  o.spin_turns = spin_turns();
  return o;
}

// Collective over comm: finds the hosts and makes this host's region. A failure to make the region is
// not an error (the host goes point-to-point); a failed message is.
base::Result<std::unique_ptr<ShmCollComm, ShmCollCommDeleter>> set_up(Comm& comm) {
  Runtime& rt = runtime();
  std::unique_ptr<ShmCollComm, ShmCollCommDeleter> state(new ShmCollComm);
  state->comm = &comm;
  const auto n = static_cast<std::size_t>(comm.size());
  const std::uint64_t mine = fnv1a(engine::host_identity(runtime().params));
  std::vector<std::uint64_t> hosts(n);
  if (Status s = run(coll::iallgather(coll::Call{comm.transport, rt.tuning, comm.take_coll_tag()}, &mine,
                                      hosts.data(), sizeof mine));
      !s) {
    return s;
  }
  state->host_of.resize(n);
  for (std::size_t r = 0; r < n; ++r) {
    state->host_of[r] = static_cast<int>(std::find(hosts.begin(), hosts.end(), hosts[r]) - hosts.begin());
  }
  // Only once every rank's host is known: compared while the table filled, a rank on the second host took
  // the first host's ranks for neighbours (they were compared with its own entry, still 0), waited for a
  // region they never made, and every collective across hosts hung.
  const int my_host = state->host_of[static_cast<std::size_t>(comm.rank())];
  for (std::size_t r = 0; r < n; ++r) {
    if (state->host_of[r] == my_host) state->members.push_back(static_cast<int>(r));
  }
  const int tag = comm.take_coll_tag();  // the set-up messages
  // A job told to leave shared memory out (path.kinds=udp: the network even between ranks of one host)
  // runs its collectives point-to-point as well.
  if (state->members.size() < 2 || !engine::shared_memory_allowed(rt.params)) return state;
  state->local = std::make_unique<coll::SubsetTransport>(comm.transport, state->members);
  const int leader = state->members.front();
  const coll::ShmBcastGeometry geometry{static_cast<std::uint32_t>(state->members.size()), rt.tuning.shm_bcast_channels,
                                        rt.tuning.shm_bcast_channel_bytes};
  const coll::ShmSyncGeometry sync_geometry{geometry.ranks, rt.tuning.allreduce_shm_slot};
  // The job's id names the region, so that ftrun can remove what a failed job left (under srun it comes
  // from PMIx, with no FTMPI_JOB_ID in the environment).
  const std::string name = fmt::format("/{}bc-{:x}-{}", rte::shm_prefix(engine().job_id()),
                                       comm.coll_view.context, comm.world_rank_of(leader));
  std::uint8_t ok = 0;
  if (comm.rank() == leader) {
    Status made = create_region(*state, name, geometry, sync_geometry);
    if (!made) base::logger().warn("shared-memory broadcast on {}: {} (broadcasting point-to-point)", label(comm), made.message());
    ok = made ? 1 : 0;
    const bool created = state->map != nullptr;
    for (std::size_t i = 1; i < state->members.size(); ++i) {
      if (Status s = wait(comm, comm.transport.isend(&ok, 1, state->members[i], tag)); !s) return s;
    }
    for (std::size_t i = 1; i < state->members.size(); ++i) {
      std::uint8_t theirs = 0;
      if (Status s = wait(comm, comm.transport.irecv(&theirs, 1, state->members[i], tag)); !s) return s;
      ok = ok != 0 && theirs != 0 ? 1 : 0;
    }
    if (created) ::shm_unlink(name.c_str());
    for (std::size_t i = 1; i < state->members.size(); ++i) {
      if (Status s = wait(comm, comm.transport.isend(&ok, 1, state->members[i], tag)); !s) return s;
    }
  } else {
    if (Status s = wait(comm, comm.transport.irecv(&ok, 1, leader, tag)); !s) return s;
    if (ok != 0) {
      Status opened = open_region(*state, name);
      if (!opened) base::logger().warn("shared-memory broadcast on {}: {}", label(comm), opened.message());
      ok = opened ? 1 : 0;
    }
    if (Status s = wait(comm, comm.transport.isend(&ok, 1, leader, tag)); !s) return s;
    if (Status s = wait(comm, comm.transport.irecv(&ok, 1, leader, tag)); !s) return s;
  }
  if (ok != 0) {
    // Every member formatted or checked the same regions: attaching cannot succeed at one and fail at
    // another.
    const std::size_t bcast_bytes = coll::ShmBcastRegion::bytes_for(geometry);
    auto shm = coll::ShmBcast::attach(state->map, bcast_bytes, *state->local, options_from(rt.tuning));
    if (!shm) return shm.status();
    state->shm = std::move(*shm);
    std::size_t host_count = 0;
    for (std::size_t r = 0; r < n; ++r) host_count += state->host_of[r] == static_cast<int>(r) ? 1 : 0;
    state->one_host = host_count == 1;
    if (state->one_host && !checksums_forced()) {
      coll::ShmSyncOptions o;
      o.flat_max = rt.tuning.shm_sync_flat_max;
      o.spin_turns = spin_turns();
      o.gathered_barrier = o.spin_turns == 0;  // oversubscribed: see ShmSyncOptions
      o.sliced_min = rt.tuning.allreduce_shm_sliced_min;
      o.idle = idle;
      auto sync = coll::ShmSync::attach(static_cast<std::byte*>(state->map) + bcast_bytes, state->map_bytes - bcast_bytes,
                                        comm.rank(), std::move(o));
      if (!sync) return sync.status();
      state->sync = std::move(*sync);
    }
    base::logger().debug("shared-memory collectives on {}: {} ranks on this host, {} hosts, segment of {} bytes{}",
                         label(comm), state->members.size(), host_count, state->map_bytes,
                         state->sync ? " (barrier and allreduce too)" : "");
  } else if (state->map != nullptr) {
    ::munmap(state->map, state->map_bytes);
    state->map = nullptr;
  }
  return state;
}

// The communicator's state, set up on first use (collectively: every rank comes here at the same call).
base::Result<ShmCollComm*> state_of(Comm& comm) {
  if (comm.shm_coll != nullptr) return comm.shm_coll;
  auto made = set_up(comm);
  if (!made) return made.status();
  Runtime& rt = runtime();
  rt.shm_colls.push_back(std::move(*made));
  comm.shm_coll = rt.shm_colls.back().get();
  return comm.shm_coll;
}

}  // namespace

bool takes_shm_bcast(const Comm& comm, std::size_t bytes) noexcept {
  return bytes != 0 && coll::use_shm_bcast(runtime().tuning, comm.size(), bytes);
}

Status shm_bcast(Comm& comm, void* data, std::size_t bytes, int root, int tag) {
  Runtime& rt = runtime();
  auto found = state_of(comm);
  if (!found) return found.status();
  ShmCollComm* state = *found;
  // One host: no leaders to combine, and no tables to build for each call.
  const Status s = state->one_host && state->shm
                       ? state->shm->bcast(data, bytes, root, tag)
                       : coll::hierarchical_bcast(comm.transport, state->host_of, state->shm.get(), data, bytes, root,
                                                  tag, idle);
  if (state->shm && state->shm->busy()) rt.shm_bcast_busy = true;
  return s;
}

bool takes_shm_barrier(const Comm& comm) noexcept { return coll::use_shm_barrier(runtime().tuning, comm.size()); }

Status shm_barrier(Comm& comm, int tag) {
  auto state = state_of(comm);
  if (!state) return state.status();
  if ((*state)->sync == nullptr) return run(coll::ibarrier(coll::Call{comm.transport, runtime().tuning, tag}));
  (*state)->sync->barrier();
  return {};
}

bool takes_shm_allreduce(const Comm& comm, std::size_t bytes) noexcept {
  return coll::use_shm_allreduce(runtime().tuning, comm.size(), bytes);
}

Status shm_allreduce(Comm& comm, const void* send, void* recv, std::size_t count, const coll::Reduction& reduction,
                     int tag) {
  auto state = state_of(comm);
  if (!state) return state.status();
  if ((*state)->sync == nullptr) {
    return run(coll::iallreduce(coll::Call{comm.transport, runtime().tuning, tag}, send, recv, count, reduction));
  }
  return (*state)->sync->allreduce(send == coll::kInPlace ? recv : send, recv, count, reduction);
}

void service_shm_bcasts() {
  Runtime& rt = runtime();
  bool busy = false;
  for (auto& s : rt.shm_colls) {
    if (!s->shm) continue;
    s->shm->service();
    busy = busy || s->shm->busy();
  }
  rt.shm_bcast_busy = busy;
}

void release_shm_colls(const Comm& comm) {
  auto& all = runtime().shm_colls;
  for (auto it = all.begin(); it != all.end(); ++it) {
    if ((*it)->comm != &comm) continue;
    if ((*it)->shm) (void)(*it)->shm->drain();
    (*it)->comm->shm_coll = nullptr;
    all.erase(it);
    return;
  }
}

void release_all_shm_colls() {
  auto& all = runtime().shm_colls;
  for (auto& s : all) {
    if (s->shm) (void)s->shm->drain();
    s->comm->shm_coll = nullptr;
  }
  all.clear();
  runtime().shm_bcast_busy = false;
}

}  // namespace ftmpi::mpi

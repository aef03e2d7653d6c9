// One-sided communication (MPI-3.1 chapter 11): the C calls. The design (operations as messages on the
// window's private communicator, acknowledged once applied, served by the target in any MPI call or by
// the progress thread) is in window.hpp; the target side in window.cpp.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <climits>
#include <memory>
#include <numeric>
#include <optional>
#include <string_view>

#include <fmt/format.h>

#include "ftmpi/base/log.hpp"
#include "ftmpi/rte/job.hpp"
#include "mpi/api.hpp"
#include "mpi/attributes.hpp"
#include "mpi/call.hpp"
#include "mpi/comms.hpp"
#include "mpi/errors.hpp"
#include "mpi/runtime.hpp"
#include "mpi/window.hpp"

namespace ftmpi::mpi {

Window* check_window(Call& call, MPI_Win handle) {
  Window* w = windows().find(handle);
  if (w == nullptr) {
    call.fail(MPI_ERR_WIN, handle == MPI_WIN_NULL ? std::string("MPI_WIN_NULL is not a valid window")
                                                  : fmt::format("invalid window {:#x}", handle));
    return nullptr;
  }
  call.raise_on_window(w->handle, &w->errhandler);
  return w;
}

namespace {

// A nested MPI call on the window's private communicator (its handler returns errors): its failure
// becomes this call's.
bool nested(Call& call, int rc, std::string_view what) {
  if (rc == MPI_SUCCESS) return true;
  call.fail(is_error_class(rc) ? rc : MPI_ERR_OTHER, fmt::format("{} failed inside {}", what, call.name()));
  return false;
}

// The progress thread, when the job has one, serves windows while the program computes.
void start_background_service() {
  static bool started = false;
  if (started) return;
  started = true;
  engine().set_background_work([](engine::Engine& inner) {
    return windows_open.load(std::memory_order_relaxed) != 0 && service_windows(inner, true);
  });
}

// Whether the ranks of `comm` share one host; nullopt (the call failed) when the nested call failed.
std::optional<bool> one_host(Call& call, MPI_Comm comm) {
  const std::uint64_t host = std::hash<std::string>{}(engine::host_identity(runtime().params));
  std::vector<std::uint64_t> hosts(static_cast<std::size_t>(find_comm(comm)->size()));
  if (!nested(call, PMPI_Allgather(&host, 1, MPI_UINT64_T, hosts.data(), 1, MPI_UINT64_T, comm), "MPI_Allgather")) {
    return std::nullopt;
  }
  return std::all_of(hosts.begin(), hosts.end(), [&](std::uint64_t h) { return h == hosts.front(); });
}

enum class Segment : std::uint8_t { mapped, unavailable, failed };

// Window rank `rank`'s part of the host's segment, as this process maps it.
std::byte* mapped_part(const Window& w, int rank) noexcept {
  return w.shared_map + w.shared_offsets[static_cast<std::size_t>(rank)];
}

// A window's segment on one host (window.hpp, "Direct access"): made by the host's first rank under
// /dev/shm (named after the job, so that ftrun removes it if the job fails while it exists), mapped by
// every rank of `host` (a communicator of the window's ranks on this host), then unlinked at once: the
// memory goes when the last process that maps it unmaps it or dies. A control block per rank of `host`,
// a page boundary, then their parts of `size` bytes in rank order, each at a multiple of `align`. The
// memory is allocated when the segment is made (posix_fallocate), so that a full /dev/shm is an error
// here, not a SIGBUS at the first store. Collective over `host`; `unavailable` (with `problem` said) when
// some rank could not map it, `failed` when a nested call failed (the call failed then).
Segment map_host_segment(Call& call, Window& w, MPI_Comm host, MPI_Aint size, std::size_t align,
                         std::string& problem) {
  const Comm& host_comm = *find_comm(host);
  const auto ranks = static_cast<std::size_t>(host_comm.size());
  std::vector<std::int64_t> sizes(ranks);
  const std::int64_t mine = size;
  if (!nested(call, PMPI_Allgather(&mine, 1, MPI_INT64_T, sizes.data(), 1, MPI_INT64_T, host), "MPI_Allgather")) {
    return Segment::failed;
  }
  constexpr std::size_t kPage = 4096;
  std::size_t total = (ranks * sizeof(DirectControl) + kPage - 1) / kPage * kPage;
  std::vector<std::size_t> offsets;
  bool overflow = false;
  for (std::int64_t s : sizes) {
    total = (total + align - 1) / align * align;
    offsets.push_back(total);
    overflow = overflow || __builtin_add_overflow(total, static_cast<std::size_t>(s), &total) ||
               total > static_cast<std::size_t>(PTRDIFF_MAX);
  }
  const std::size_t bytes = total;
  const std::string name = fmt::format("/{}win-{:x}-{}", rte::shm_prefix(engine().job_id()), w.comm->view.context,
                                       host_comm.world_rank_of(0));
  void* map = MAP_FAILED;
  if (overflow) problem = "the ranks' parts add up to more bytes than an address space holds";
  auto map_fd = [&](int fd, std::string_view what) {
    if (fd < 0) {
      problem = fmt::format("{} {}: {}", what, name, std::strerror(errno));
      return;
    }
    struct stat st {};
    const int allocated = host_comm.rank() == 0 ? ::posix_fallocate(fd, 0, static_cast<off_t>(bytes)) : 0;
    if (allocated != 0) {
      problem = fmt::format("allocating {} bytes for {}: {}", bytes, name, std::strerror(allocated));
    } else if (::fstat(fd, &st) != 0 || static_cast<std::size_t>(st.st_size) != bytes) {
      problem = fmt::format("{} is not {} bytes", name, bytes);
    } else {
      map = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
      if (map == MAP_FAILED) problem = fmt::format("mmap {}: {}", name, std::strerror(errno));
    }
    ::close(fd);
  };
  int made = 1;
  bool created = false;  // by this rank: unlinked below, whatever happens
  if (host_comm.rank() == 0) {
    const int fd = overflow ? -1 : ::shm_open(name.c_str(), O_CREAT | O_EXCL | O_RDWR, 0600);
    created = fd >= 0;
    if (!overflow) map_fd(fd, "shm_open");
    made = map != MAP_FAILED ? 1 : 0;
  }
  if (!nested(call, PMPI_Bcast(&made, 1, MPI_INT, 0, host), "MPI_Bcast")) {
    if (map != MAP_FAILED) ::munmap(map, bytes);
    if (created) ::shm_unlink(name.c_str());
    return Segment::failed;
  }
  if (made != 0 && host_comm.rank() != 0) map_fd(::shm_open(name.c_str(), O_RDWR, 0), "shm_open");
  const int mapped = map != MAP_FAILED ? 1 : 0;
  int everywhere = 0;
  const bool agreed = nested(call, PMPI_Allreduce(&mapped, &everywhere, 1, MPI_INT, MPI_MIN, host), "MPI_Allreduce");
  if (created) ::shm_unlink(name.c_str());
  if (!agreed || everywhere == 0) {
    if (map != MAP_FAILED) ::munmap(map, bytes);
    if (problem.empty()) problem = fmt::format("another rank could not map the shared segment {}", name);
    return agreed ? Segment::unavailable : Segment::failed;
  }
  // The control blocks start zeroed (a new file's pages): unlocked, no accumulate under way.
  w.shared_map = static_cast<std::byte*>(map);
  w.shared_bytes = bytes;
  const auto window_ranks = static_cast<std::size_t>(w.comm->size());
  w.shared_offsets.assign(window_ranks, 0);
  w.direct.assign(window_ranks, nullptr);
  for (std::size_t h = 0; h < ranks; ++h) {
    const auto r = static_cast<std::size_t>(w.comm->view.comm_rank_of(host_comm.world_rank_of(static_cast<int>(h))));
    w.shared_offsets[r] = offsets[h];
    w.direct[r] = reinterpret_cast<DirectControl*>(w.shared_map) + h;
  }
  return Segment::mapped;
}

// MPI_Win_allocate's memory: in the host's segment when the job may use shared memory (origins of the
// host then reach it directly), else the heap. False when a nested call failed.
bool allocate_memory(Call& call, Window& w, MPI_Comm dup, MPI_Aint size, void*& base) {
  if (engine::shared_memory_allowed(runtime().params)) {
    MPI_Comm host = MPI_COMM_NULL;
    if (!nested(call, PMPI_Comm_split_type(dup, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &host),
                "MPI_Comm_split_type")) {
      return false;
    }
    std::string problem;
    const Segment made = map_host_segment(call, w, host, size, 64, problem);
    (void)PMPI_Comm_free(&host);
    if (made == Segment::failed) return false;
    if (made == Segment::mapped) {
      base = mapped_part(w, w.comm->rank());
      return true;
    }
    base::logger().warn("MPI_Win_allocate: {} (the window's operations go as messages)", problem);
  }
  base = std::malloc(static_cast<std::size_t>(std::max<MPI_Aint>(size, 1)));
  if (base == nullptr) {
    call.fail(MPI_ERR_NO_MEM, fmt::format("cannot allocate a window of {} bytes", size));
    return false;
  }
  w.allocated = true;
  return true;
}

void make_window(Call& call, MPI_Comm comm, void* base, MPI_Aint size, int disp_unit, MPI_Info info, int flavor,
                 void* baseptr, MPI_Win* win) {
  Comm* parent = check_intra(call, comm);
  if (parent == nullptr || !check_arg(call, win, "win")) return;
  if (info != MPI_INFO_NULL && check_info(call, info) == nullptr) return;
  if (size < 0) {
    call.fail(MPI_ERR_SIZE, fmt::format("negative window size {}", size));
    return;
  }
  if (disp_unit <= 0) {
    call.fail(MPI_ERR_DISP, fmt::format("displacement unit {} is not positive", disp_unit));
    return;
  }
  if ((flavor == MPI_WIN_FLAVOR_ALLOCATE || flavor == MPI_WIN_FLAVOR_SHARED) && !check_arg(call, baseptr, "baseptr")) {
    return;
  }
  if (flavor == MPI_WIN_FLAVOR_CREATE && size > 0 && base == nullptr) {
    call.fail(MPI_ERR_ARG, "base is a null pointer for a window of non-zero size");
    return;
  }
  *win = MPI_WIN_NULL;
  MPI_Comm dup = MPI_COMM_NULL;
  if (!nested(call, PMPI_Comm_dup(comm, &dup), "MPI_Comm_dup")) return;
  (void)PMPI_Comm_set_errhandler(dup, MPI_ERRORS_RETURN);
  Comm* private_comm = find_comm(dup);
  const auto ranks = static_cast<std::size_t>(private_comm->size());
  std::int64_t mine[2] = {size, disp_unit};
  std::vector<std::int64_t> all(2 * ranks);
  if (!nested(call, PMPI_Allgather(mine, 2, MPI_INT64_T, all.data(), 2, MPI_INT64_T, dup), "MPI_Allgather")) {
    (void)PMPI_Comm_free(&dup);
    return;
  }
  Window w;
  w.comm = private_comm;
  w.comm_handle = dup;
  w.group = private_comm->members();
  w.flavor = flavor;
  w.size = flavor == MPI_WIN_FLAVOR_DYNAMIC ? 0 : size;
  w.disp_unit = disp_unit;
  for (std::size_t r = 0; r < ranks; ++r) {
    w.sizes.push_back(static_cast<MPI_Aint>(all[2 * r]));
    w.disp_units.push_back(static_cast<int>(all[2 * r + 1]));
  }
  if (flavor == MPI_WIN_FLAVOR_ALLOCATE) {
    if (!allocate_memory(call, w, dup, size, base)) {
      (void)PMPI_Comm_free(&dup);
      return;
    }
    *static_cast<void**>(baseptr) = base;
  }
  if (flavor == MPI_WIN_FLAVOR_SHARED) {
    const std::optional<bool> together = one_host(call, dup);
    std::string problem;
    Segment made = Segment::failed;
    if (together && !*together) {
      call.fail(MPI_ERR_RMA_SHARED, "the communicator's ranks are not all on one host (MPI_Comm_split_type with "
                                    "MPI_COMM_TYPE_SHARED makes one that is)");
    } else if (together) {
      made = map_host_segment(call, w, dup, size, 1, problem);
      if (made == Segment::unavailable) call.fail(MPI_ERR_NO_MEM, fmt::format("cannot make the shared segment: {}", problem));
    }
    if (made != Segment::mapped) {
      (void)PMPI_Comm_free(&dup);
      return;
    }
    base = mapped_part(w, private_comm->rank());
    *static_cast<void**>(baseptr) = base;
  }
  w.base = flavor == MPI_WIN_FLAVOR_DYNAMIC ? MPI_BOTTOM : base;
  w.locks.assign(ranks, LockState::none);
  w.target = std::make_unique<WindowTarget>();
  WindowTarget& t = *w.target;
  t.world_ranks = w.group;
  t.view = private_comm->view;
  t.view.world_ranks = t.world_ranks;
  t.memory.base = static_cast<std::byte*>(base);
  t.memory.size = static_cast<std::size_t>(w.size);
  t.memory.disp_unit = disp_unit;
  t.memory.dynamic = flavor == MPI_WIN_FLAVOR_DYNAMIC;
  t.memory.regions = &t.regions;
  if (!w.direct.empty()) t.memory.control = w.direct[static_cast<std::size_t>(private_comm->rank())];
  // Unified when this process reaches every rank's memory directly: then so does every other (they
  // share its host and segment), and every update is in the memory when its call returns.
  if (!w.direct.empty() && std::all_of(w.direct.begin(), w.direct.end(), [](DirectControl* c) { return c != nullptr; })) {
    w.model = MPI_WIN_UNIFIED;
  }
  const int handle = windows().add(std::move(w));
  Window& added = *windows().find(handle);
  added.handle = handle;
  start_background_service();
  add_window_target(added.target.get());
  *win = handle;
}

bool fail_sync(Call& call, std::string_view what) {
  call.fail(MPI_ERR_RMA_SYNC, what);
  return false;
}

// True when the epoch a call ends is open; else fails the call with `missing`.
bool in_epoch(Call& call, bool open, std::string_view missing) { return open || fail_sync(call, missing); }

// Moves an origin operation along: its reply taken in (fetched data unpacked), its request sent.
bool try_finish(OriginOp& op) {
  if (op.finished) return true;
  engine::Engine& e = engine();
  engine::Completion c;
  if (op.receive != nullptr && e.take_completion(op.receive, &c)) {
    op.receive = nullptr;
    RmaReplyHeader h;
    if (c.lost_peer >= 0 || c.bytes < sizeof h) {
      op.error = c.lost_peer >= 0 ? error_class_of(c) : MPI_ERR_INTERN;
      op.reason = c.lost_peer >= 0
                      ? fmt::format("target rank {} is unreachable: {}", op.target, e.lost_reason(c.lost_peer))
                      : std::string("a malformed one-sided reply");
    } else {
      std::memcpy(&h, op.reply.data(), sizeof h);
      if (h.error != MPI_SUCCESS) {
        op.error = h.error;
        op.reason = h.error == MPI_ERR_RMA_RANGE
                        ? fmt::format("the access at target rank {} falls outside its window", op.target)
                        : fmt::format("target rank {} refused the operation", op.target);
      } else if (op.result != nullptr || op.result_layout) {
        op.result_layout->unpack(op.reply.data() + sizeof h, c.bytes - sizeof h, op.result);
      }
    }
  }
  if (op.send != nullptr && e.is_complete(op.send, nullptr)) {
    e.release(op.send);
    op.send = nullptr;
    op.message = {};
  }
  op.finished = op.receive == nullptr && op.send == nullptr;
  return op.finished;
}

// Waits until every operation of this origin to `target` (every target: -1) is finished, and reports
// the first failure among them (a target's refusal arrives after the operation's call returned: a
// dynamic window's range check).
void wait_ops(Call& call, Window& w, int target) {
  // Every target reached directly and nothing failed: every operation is complete already, and no
  // request can arrive for this window, so there is nothing to progress (a flush costs a fence).
  if (w.pending.empty() && w.model == MPI_WIN_UNIFIED) return;
  auto concerned = [&](const std::shared_ptr<OriginOp>& op) { return target < 0 || op->target == target; };
  progress_until([&] {
    return std::all_of(w.pending.begin(), w.pending.end(),
                       [&](const std::shared_ptr<OriginOp>& op) { return !concerned(op) || try_finish(*op); });
  });
  std::erase_if(w.pending, [&](const std::shared_ptr<OriginOp>& op) {
    if (!concerned(op)) return false;
    if (op->error != MPI_SUCCESS) call.fail(op->error, op->reason);
    return true;
  });
}

constexpr std::size_t kPrunePending = 256;  // Window::prune_at at the start

// The control block of `target` when this process reaches its memory directly, else null.
DirectControl* direct_to(const Window& w, int target) noexcept {
  return w.direct.empty() ? nullptr : w.direct[static_cast<std::size_t>(target)];
}

// An operation applied here to a target of this host (window.hpp, "Direct access"): complete on return;
// null, or a finished operation carrying the target's refusal, reported by the next synchronisation as
// a refusal by message would be.
std::shared_ptr<OriginOp> apply_direct(Window& w, int target, DirectControl* control, const RmaHeader& h,
                                       const std::vector<Piece>& pieces, const std::vector<Piece>& element_pieces,
                                       const std::byte* data, void* result,
                                       const std::shared_ptr<const Layout>& result_layout) {
  const auto r = static_cast<std::size_t>(target);
  const WindowMemory memory{mapped_part(w, target), static_cast<std::size_t>(w.sizes[r]), w.disp_units[r], false,
                            nullptr, control};
  std::vector<std::byte> fetched;
  const int error = apply_access(memory, h, pieces, element_pieces, data, fetched);
  if (error == MPI_SUCCESS) {
    if (result_layout && !fetched.empty()) result_layout->unpack(fetched.data(), fetched.size(), result);
    return nullptr;
  }
  auto op = std::make_shared<OriginOp>();
  op->target = target;
  op->finished = true;
  op->error = error;
  op->reason = error == MPI_ERR_RMA_RANGE ? fmt::format("the access at target rank {} falls outside its window", target)
                                          : fmt::format("target rank {} refused the operation", target);
  w.pending.push_back(op);
  return op;
}

// A request to `target`: the header, the target's pieces, the element's pieces and `data` sent; the
// reply (with `result_bytes` of data) unpacked into `result` as `result_layout` items.
std::shared_ptr<OriginOp> issue(Window& w, int target, RmaHeader h, const std::vector<Piece>& pieces,
                                const std::vector<Piece>& element_pieces, std::vector<std::byte> data,
                                std::size_t result_bytes, void* result = nullptr,
                                std::shared_ptr<const Layout> result_layout = nullptr, std::size_t result_count = 0) {
  h.data_bytes = data.size();
  if (DirectControl* control = direct_to(w, target); control != nullptr) {
    return apply_direct(w, target, control, h, pieces, element_pieces, data.data(), result, result_layout);
  }
  auto op = std::make_shared<OriginOp>();
  op->target = target;
  h.reply_tag = w.next_reply_tag;
  w.next_reply_tag = w.next_reply_tag == INT_MAX ? kFirstReplyTag : w.next_reply_tag + 1;
  h.piece_count = static_cast<std::uint32_t>(pieces.size());
  h.element_piece_count = static_cast<std::uint32_t>(element_pieces.size());
  const std::size_t piece_bytes = (pieces.size() + element_pieces.size()) * sizeof(Piece);
  op->message.resize(sizeof h + piece_bytes + data.size());
  std::byte* at = op->message.data();
  std::memcpy(at, &h, sizeof h);
  at += sizeof h;
  if (!pieces.empty()) std::memcpy(at, pieces.data(), pieces.size() * sizeof(Piece));
  at += pieces.size() * sizeof(Piece);
  if (!element_pieces.empty()) std::memcpy(at, element_pieces.data(), element_pieces.size() * sizeof(Piece));
  at += element_pieces.size() * sizeof(Piece);
  if (!data.empty()) std::memcpy(at, data.data(), data.size());
  op->reply.resize(sizeof(RmaReplyHeader) + result_bytes);
  op->result = result;
  op->result_layout = std::move(result_layout);
  op->result_count = result_count;
  engine::Engine& e = engine();
  const engine::CommView& view = w.comm->view;
  op->receive = e.irecv(view, op->reply.data(), op->reply.size(), target, h.reply_tag);
  op->send = e.isend(view, op->message.data(), op->message.size(), target, kRequestTag, engine::SendMode::standard);
  // A long epoch of many operations keeps only those not finished, and the failed ones to report.
  // The threshold doubles with what stays, so that pruning costs O(1) per operation.
  if (w.pending.size() >= w.prune_at) {
    std::erase_if(w.pending,
                  [](const std::shared_ptr<OriginOp>& o) { return try_finish(*o) && o->error == MPI_SUCCESS; });
    w.prune_at = std::max(kPrunePending, 2 * w.pending.size());
  }
  w.pending.push_back(op);
  return op;
}

bool check_target_rank(Call& call, const Window& w, int rank) {
  if (rank == MPI_PROC_NULL || (rank >= 0 && rank < w.comm->size())) return true;
  call.fail(MPI_ERR_RANK, fmt::format("invalid target rank {} (the window has {} ranks)", rank, w.comm->size()));
  return false;
}

bool check_access(Call& call, const Window& w, int target, bool passive_only) {
  const bool passive = w.lock_all || w.locks[static_cast<std::size_t>(target)] != LockState::none;
  if (passive) return true;
  if (!passive_only && (w.fence_epoch || (w.start_epoch && std::find(w.start_group.begin(), w.start_group.end(),
                                                                      target) != w.start_group.end()))) {
    return true;
  }
  return fail_sync(call, passive_only ? fmt::format("{} needs a passive-target epoch (MPI_Win_lock or "
                                                    "MPI_Win_lock_all) to target rank {}", call.name(), target)
                                      : fmt::format("no access epoch to target rank {} is open (MPI_Win_fence, "
                                                    "MPI_Win_start or MPI_Win_lock first)", target));
}

// The checked description of one operation's target access.
struct Access {
  int target = MPI_PROC_NULL;
  std::int64_t displacement = 0;
  const Layout* target_layout = nullptr;  // the target type's, which outlives the call
  std::size_t target_count = 0;
  const Datatype* target_type = nullptr;
};

std::optional<Access> check_access_args(Call& call, Window& w, int target_rank, MPI_Aint target_disp,
                                        MPI_Count target_count, MPI_Datatype target_datatype, bool passive_only) {
  if (!check_target_rank(call, w, target_rank) || !check_count(call, target_count)) return std::nullopt;
  const Datatype* tt = check_committed(call, target_datatype);
  if (tt == nullptr) return std::nullopt;
  Access a;
  a.target = target_rank;
  a.displacement = target_disp;
  a.target_layout = tt->layout.get();
  a.target_count = static_cast<std::size_t>(target_count);
  a.target_type = tt;
  if (target_rank == MPI_PROC_NULL) return a;
  if (!check_access(call, w, target_rank, passive_only)) return std::nullopt;
  if (w.flavor != MPI_WIN_FLAVOR_DYNAMIC) {
    const auto r = static_cast<std::size_t>(target_rank);
    const ByteSpan span = span_of(tt->layout->pieces, tt->layout->extent, a.target_count);
    const std::int64_t offset = target_disp * w.disp_units[r];
    if (span.low != span.high &&
        (target_disp < 0 || offset + span.low < 0 || offset + span.high > static_cast<std::int64_t>(w.sizes[r]))) {
      call.fail(MPI_ERR_RMA_RANGE, fmt::format("bytes [{}, {}) of target rank {}'s window, which has {} bytes",
                                               offset + span.low, offset + span.high, target_rank, w.sizes[r]));
      return std::nullopt;
    }
  }
  return a;
}

RmaHeader header_for(RmaKind kind, const Access& a) {
  RmaHeader h;
  h.kind = kind;
  h.displacement = a.displacement;
  h.extent = a.target_layout->extent;
  h.count = a.target_count;
  h.item_size = a.target_layout->size;
  return h;
}

std::vector<std::byte> pack(const void* buf, std::size_t count, const Layout& layout) {
  std::vector<std::byte> data(layout.packed_bytes(count));
  if (!data.empty()) layout.pack(buf, count, data.data());
  return data;
}

bool same_bytes(Call& call, std::size_t origin_bytes, const Access& a, std::string_view what) {
  if (origin_bytes == a.target_count * a.target_layout->size) return true;
  call.fail(MPI_ERR_TYPE, fmt::format("the {} data are {} bytes, the target's {} bytes (the type signatures differ)",
                                      what, origin_bytes, a.target_count * a.target_layout->size));
  return false;
}

// An accumulate's element: the predefined type both sides are made of, the op defined on it.
struct Element {
  int type = MPI_DATATYPE_NULL;
  const std::vector<Piece>* pieces = nullptr;  // the predefined type's, which live as long as the library
  std::uint32_t extent = 0;
  coll::Op op = coll::Op::no_op;
};

std::optional<Element> check_element(Call& call, MPI_Op op, const Datatype* origin, const Access& a) {
  const OpEntry* o = check_op(call, op);
  if (o == nullptr) return std::nullopt;
  if (!o->predefined) {
    call.fail(MPI_ERR_OP, "one-sided accumulates take predefined operations only (MPI-3.1 section 11.3.4)");
    return std::nullopt;
  }
  const int base = a.target_type->node->base;
  if (base == MPI_DATATYPE_NULL || (origin != nullptr && c_twin(origin->node->base) != c_twin(base))) {
    call.fail(MPI_ERR_TYPE, "an accumulate's origin and target types must be made of one predefined type");
    return std::nullopt;
  }
  const auto kind = kind_of(base);
  if (!kind || !coll::op_applies(o->op, *kind)) {
    call.fail(MPI_ERR_OP, fmt::format("{} is not defined on {}", o->name, find_datatype(base)->name));
    return std::nullopt;
  }
  Element e;
  e.type = c_twin(base);
  e.pieces = &find_datatype(base)->layout->pieces;
  e.extent = static_cast<std::uint32_t>(coll::element_size(*kind));
  e.op = o->op;
  return e;
}

// The request versions: a library request complete once the operation is.
void make_request(Call& call, Window& w, std::shared_ptr<OriginOp> op, MPI_Request* request) {
  Transfer transfer;
  transfer.comm = w.comm;
  Request& r = runtime().requests.acquire(Mode::generalized, transfer, false);
  r.active = true;
  r.general = std::make_unique<Generalized>();
  r.general->query = [](void*, MPI_Status*) { return MPI_SUCCESS; };
  r.general->free = [](void*) { return MPI_SUCCESS; };
  r.general->cancel = [](void*, int) { return MPI_SUCCESS; };
  if (op == nullptr) {
    r.general->poll = [] { return true; };
  } else {
    r.general->poll = [op = std::move(op)] { return try_finish(*op); };
  }
  (void)call;
  *request = &r;
}

using OpPtr = std::shared_ptr<OriginOp>;

// Where a put or get goes in the target's memory when this process reaches it directly and both sides
// are contiguous bytes (one copy, no packing); else null. The access was range-checked.
std::byte* dense_direct(const Window& w, const Access& a, const Layout& origin) noexcept {
  if (direct_to(w, a.target) == nullptr || !origin.dense || !a.target_layout->dense) return nullptr;
  const auto r = static_cast<std::size_t>(a.target);
  return mapped_part(w, a.target) + a.displacement * w.disp_units[r];
}

OpPtr put(Call& call, Window& w, const void* origin_addr, MPI_Count origin_count, MPI_Datatype origin_datatype,
          int target_rank, MPI_Aint target_disp, MPI_Count target_count, MPI_Datatype target_datatype,
          bool passive_only) {
  if (!check_count(call, origin_count)) return nullptr;
  const Datatype* ot = check_committed(call, origin_datatype);
  if (ot == nullptr || !check_buffer(call, origin_addr, origin_count, *ot, "origin_addr")) return nullptr;
  auto a = check_access_args(call, w, target_rank, target_disp, target_count, target_datatype, passive_only);
  if (!a || target_rank == MPI_PROC_NULL) return nullptr;
  const auto count = static_cast<std::size_t>(origin_count);
  const std::size_t bytes = ot->layout->packed_bytes(count);
  if (!same_bytes(call, bytes, *a, "origin")) return nullptr;
  if (std::byte* at = dense_direct(w, *a, *ot->layout); at != nullptr) {
    if (bytes != 0) std::memmove(at, origin_addr, bytes);  // the origin may be in the window
    return nullptr;
  }
  return issue(w, target_rank, header_for(RmaKind::put, *a), a->target_layout->pieces, {},
               pack(origin_addr, count, *ot->layout), 0);
}

OpPtr get(Call& call, Window& w, void* origin_addr, MPI_Count origin_count, MPI_Datatype origin_datatype,
          int target_rank, MPI_Aint target_disp, MPI_Count target_count, MPI_Datatype target_datatype,
          bool passive_only) {
  if (!check_count(call, origin_count)) return nullptr;
  const Datatype* ot = check_committed(call, origin_datatype);
  if (ot == nullptr || !check_buffer(call, origin_addr, origin_count, *ot, "origin_addr")) return nullptr;
  auto a = check_access_args(call, w, target_rank, target_disp, target_count, target_datatype, passive_only);
  if (!a || target_rank == MPI_PROC_NULL) return nullptr;
  const auto count = static_cast<std::size_t>(origin_count);
  const std::size_t bytes = ot->layout->packed_bytes(count);
  if (!same_bytes(call, bytes, *a, "origin")) return nullptr;
  if (const std::byte* at = dense_direct(w, *a, *ot->layout); at != nullptr) {
    if (bytes != 0) std::memmove(origin_addr, at, bytes);
    return nullptr;
  }
  return issue(w, target_rank, header_for(RmaKind::get, *a), a->target_layout->pieces, {}, {}, bytes, origin_addr,
               ot->layout, count);
}

// Accumulate (result_addr null) and Get_accumulate.
OpPtr accumulate(Call& call, Window& w, const void* origin_addr, MPI_Count origin_count, MPI_Datatype origin_datatype,
                 void* result_addr, MPI_Count result_count, MPI_Datatype result_datatype, int target_rank,
                 MPI_Aint target_disp, MPI_Count target_count, MPI_Datatype target_datatype, MPI_Op op,
                 bool fetch, bool passive_only) {
  const bool no_op = op == MPI_NO_OP;
  const Datatype* ot = nullptr;
  if (!no_op) {
    if (!check_count(call, origin_count)) return nullptr;
    ot = check_committed(call, origin_datatype);
    if (ot == nullptr || !check_buffer(call, origin_addr, origin_count, *ot, "origin_addr")) return nullptr;
  }
  const Datatype* rt = nullptr;
  if (fetch) {
    if (!check_count(call, result_count)) return nullptr;
    rt = check_committed(call, result_datatype);
    if (rt == nullptr || !check_buffer(call, result_addr, result_count, *rt, "result_addr")) return nullptr;
  }
  auto a = check_access_args(call, w, target_rank, target_disp, target_count, target_datatype, passive_only);
  if (!a) return nullptr;
  auto e = check_element(call, op, ot, *a);
  if (!e || target_rank == MPI_PROC_NULL) return nullptr;
  const auto count = static_cast<std::size_t>(origin_count);
  if (!no_op && !same_bytes(call, ot->layout->packed_bytes(count), *a, "origin")) return nullptr;
  std::size_t result_bytes = 0;
  if (fetch) {
    result_bytes = rt->layout->packed_bytes(static_cast<std::size_t>(result_count));
    if (!same_bytes(call, result_bytes, *a, "result")) return nullptr;
  }
  RmaHeader h = header_for(fetch ? RmaKind::get_accumulate : RmaKind::accumulate, *a);
  h.op = static_cast<std::uint8_t>(e->op);
  h.element_type = e->type;
  h.element_extent = e->extent;
  // Applied here with the origin's bytes as they are, when they are contiguous: no packed copy.
  if (DirectControl* control = direct_to(w, target_rank); control != nullptr && (no_op || ot->layout->dense)) {
    h.data_bytes = no_op ? 0 : ot->layout->packed_bytes(count);
    return apply_direct(w, target_rank, control, h, a->target_layout->pieces, *e->pieces,
                        static_cast<const std::byte*>(origin_addr), result_addr, fetch ? rt->layout : nullptr);
  }
  std::vector<std::byte> data;
  if (!no_op) data = pack(origin_addr, count, *ot->layout);
  return issue(w, target_rank, h, a->target_layout->pieces, *e->pieces, std::move(data), result_bytes, result_addr,
               fetch ? rt->layout : nullptr, fetch ? static_cast<std::size_t>(result_count) : 0);
}

// Converts a group's members to the window's ranks (MPI_ERR_GROUP for one not in it).
std::optional<std::vector<int>> window_ranks(Call& call, const Window& w, MPI_Group group) {
  Group* g = check_group(call, group);
  if (g == nullptr) return std::nullopt;
  std::vector<int> ranks;
  for (int world : g->world_ranks) {
    const int r = w.comm->view.comm_rank_of(world);
    if (r < 0) {
      call.fail(MPI_ERR_GROUP, fmt::format("world rank {} of the group is not in the window", world));
      return std::nullopt;
    }
    ranks.push_back(r);
  }
  return ranks;
}

bool all_complete(const std::vector<engine::Request*>& requests) {
  engine::Engine& e = engine();
  return std::all_of(requests.begin(), requests.end(), [&](engine::Request* r) { return e.is_complete(r, nullptr); });
}

std::vector<int> every_rank(const Window& w) {
  std::vector<int> all(w.locks.size());
  std::iota(all.begin(), all.end(), 0);
  return all;
}

// An empty message to each of `ranks` under `tag` (post, complete), sent in the background.
void notify(const Window& w, const std::vector<int>& ranks, int tag) {
  engine::Engine& e = engine();
  for (int r : ranks) e.release(e.isend(w.comm->view, nullptr, 0, r, tag, engine::SendMode::standard));
}

// The window ranks of a group that opens a post or start epoch, unless one is open already (`open`).
std::optional<std::vector<int>> epoch_ranks(Call& call, const Window& w, MPI_Group group, bool open,
                                            std::string_view already) {
  if (open) {
    fail_sync(call, already);
    return std::nullopt;
  }
  return window_ranks(call, w, group);
}

// Takes (RmaKind::lock) or gives back (unlock) the passive-target lock of each of `targets`: by request
// to targets of other hosts, granted in their order by the target; by compare-and-swap on the control
// block of targets of this host, retried between progress rounds (no queue: a host's origins are not
// served in order). Giving back a lock releases this origin's stores to the target's memory.
void lock_request(Call& call, Window& w, const std::vector<int>& targets, bool exclusive, RmaKind kind) {
  std::vector<DirectControl*> direct;
  for (int t : targets) {
    if (DirectControl* control = direct_to(w, t); control != nullptr) {
      direct.push_back(control);
      continue;
    }
    RmaHeader h;
    h.kind = kind;
    h.exclusive = exclusive ? 1 : 0;
    (void)issue(w, t, h, {}, {}, {}, 0);
  }
  for (DirectControl* control : direct) {
    if (kind == RmaKind::unlock) {
      unlock_direct(*control, exclusive);
    } else if (!try_lock_direct(*control, exclusive)) {
      progress_until([&] { return try_lock_direct(*control, exclusive); });
    }
  }
  wait_ops(call, w, targets.size() == 1 ? targets.front() : -1);
}

// Orders this process's loads and stores of window memory against a synchronisation message: what an
// origin of the host stored directly (window.hpp, "Direct access") is visible to the target, and to the
// other origins, once the target or they see the message, and the other way round.
void order_memory() noexcept {
#if defined(__SANITIZE_THREAD__)
  // ThreadSanitizer refuses fences; a sequentially consistent read-modify-write is one on x86.
  static std::atomic<int> word{0};
  word.fetch_add(0, std::memory_order_seq_cst);
#else
  std::atomic_thread_fence(std::memory_order_seq_cst);
#endif
}

int rma_call(std::string_view name, MPI_Win win, auto&& body) {
  return api_call(name, [&](Call& call) {
    Window* w = check_window(call, win);
    if (w != nullptr) body(call, *w);
  });
}

// The request versions of the operations: `issue_op` issues it, a request completes with it.
int request_call(std::string_view name, MPI_Win win, MPI_Request* request, auto&& issue_op) {
  return rma_call(name, win, [&](Call& call, Window& w) {
    if (!check_arg(call, request, "request")) return;
    OpPtr op = issue_op(call, w);
    if (!call.failed()) make_request(call, w, std::move(op), request);
  });
}

}  // namespace
}  // namespace ftmpi::mpi

using namespace ftmpi::mpi;

extern "C" {

// ---- Windows ----

int PMPI_Win_create(void* base, MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, MPI_Win* win) {
  return api_call("MPI_Win_create", [&](Call& call) {
    make_window(call, comm, base, size, disp_unit, info, MPI_WIN_FLAVOR_CREATE, nullptr, win);
  });
}
#pragma weak MPI_Win_create = PMPI_Win_create

int PMPI_Win_allocate(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, void* baseptr, MPI_Win* win) {
  return api_call("MPI_Win_allocate", [&](Call& call) {
    make_window(call, comm, nullptr, size, disp_unit, info, MPI_WIN_FLAVOR_ALLOCATE, baseptr, win);
  });
}
#pragma weak MPI_Win_allocate = PMPI_Win_allocate

// One segment for the window's ranks, which must share a host; RMA calls on it travel as messages like
// any window's, and the program may also load and store any rank's part (MPI_Win_shared_query).
int PMPI_Win_allocate_shared(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, void* baseptr,
                             MPI_Win* win) {
  return api_call("MPI_Win_allocate_shared", [&](Call& call) {
    make_window(call, comm, nullptr, size, disp_unit, info, MPI_WIN_FLAVOR_SHARED, baseptr, win);
  });
}
#pragma weak MPI_Win_allocate_shared = PMPI_Win_allocate_shared

// MPI_PROC_NULL: the lowest rank whose part is not empty (MPI-3.1 section 11.2.3).
int PMPI_Win_shared_query(MPI_Win win, int rank, MPI_Aint* size, int* disp_unit, void* baseptr) {
  return rma_call("MPI_Win_shared_query", win, [&](Call& call, Window& w) {
    if (!check_arg(call, size, "size") || !check_arg(call, disp_unit, "disp_unit") ||
        !check_arg(call, baseptr, "baseptr")) {
      return;
    }
    if (w.flavor != MPI_WIN_FLAVOR_SHARED) {
      call.fail(MPI_ERR_RMA_FLAVOR, "the window was not made by MPI_Win_allocate_shared");
      return;
    }
    if (rank == MPI_PROC_NULL) {
      const auto it = std::find_if(w.sizes.begin(), w.sizes.end(), [](MPI_Aint s) { return s > 0; });
      if (it == w.sizes.end()) {
        *size = 0;
        *disp_unit = w.disp_units.front();
        *static_cast<void**>(baseptr) = nullptr;
        return;
      }
      rank = static_cast<int>(it - w.sizes.begin());
    } else if (!check_target_rank(call, w, rank)) {
      return;
    }
    const auto r = static_cast<std::size_t>(rank);
    *size = w.sizes[r];
    *disp_unit = w.disp_units[r];
    *static_cast<void**>(baseptr) = mapped_part(w, rank);
  });
}
#pragma weak MPI_Win_shared_query = PMPI_Win_shared_query

int PMPI_Win_create_dynamic(MPI_Info info, MPI_Comm comm, MPI_Win* win) {
  return api_call("MPI_Win_create_dynamic", [&](Call& call) {
    make_window(call, comm, nullptr, 0, 1, info, MPI_WIN_FLAVOR_DYNAMIC, nullptr, win);
  });
}
#pragma weak MPI_Win_create_dynamic = PMPI_Win_create_dynamic

int PMPI_Win_attach(MPI_Win win, void* base, MPI_Aint size) {
  return rma_call("MPI_Win_attach", win, [&](Call& call, Window& w) {
    if (w.flavor != MPI_WIN_FLAVOR_DYNAMIC) {
      call.fail(MPI_ERR_RMA_FLAVOR, "MPI_Win_attach needs a window of MPI_Win_create_dynamic");
    } else if (size < 0) {
      call.fail(MPI_ERR_SIZE, fmt::format("negative size {}", size));
    } else if (size > 0 && base == nullptr) {
      call.fail(MPI_ERR_ARG, "base is a null pointer");
    } else {
      const std::lock_guard lock(window_mutex());
      const auto start = reinterpret_cast<std::uintptr_t>(base);
      for (const Region& r : w.target->regions) {
        const auto s = reinterpret_cast<std::uintptr_t>(r.base);
        if (start < s + r.size && s < start + static_cast<std::uintptr_t>(size)) {
          call.fail(MPI_ERR_RMA_ATTACH, "the memory overlaps a region attached already");
          return;
        }
      }
      w.target->regions.push_back({static_cast<std::byte*>(base), static_cast<std::size_t>(size)});
    }
  });
}
#pragma weak MPI_Win_attach = PMPI_Win_attach

int PMPI_Win_detach(MPI_Win win, const void* base) {
  return rma_call("MPI_Win_detach", win, [&](Call& call, Window& w) {
    if (w.flavor != MPI_WIN_FLAVOR_DYNAMIC) {
      call.fail(MPI_ERR_RMA_FLAVOR, "MPI_Win_detach needs a window of MPI_Win_create_dynamic");
      return;
    }
    const std::lock_guard lock(window_mutex());
    auto& regions = w.target->regions;
    const auto it = std::find_if(regions.begin(), regions.end(), [&](const Region& r) { return r.base == base; });
    if (it == regions.end()) {
      call.fail(MPI_ERR_RMA_ATTACH, "no region attached at that address");
      return;
    }
    regions.erase(it);
  });
}
#pragma weak MPI_Win_detach = PMPI_Win_detach

// Collective: this origin's operations finish, then a barrier, after which no rank has an operation to
// this window in flight, and the replies this target sent are delivered.
int PMPI_Win_free(MPI_Win* win) {
  return api_call("MPI_Win_free", [&](Call& call) {
    if (!check_arg(call, win, "win")) return;
    Window* w = check_window(call, *win);
    if (w == nullptr) return;
    wait_ops(call, *w, -1);
    if (!nested(call, PMPI_Barrier(w->comm_handle), "MPI_Barrier")) return;
    WindowTarget& t = *w->target;
    progress_until([&] {
      const std::lock_guard lock(window_mutex());
      return t.replies.empty() && t.incoming.empty();
    });
    remove_window_target(&t);
    for (ftmpi::engine::Request* r : w->complete_receives) {
      engine().cancel(r);
      engine().release(r);
    }
    if (!delete_attributes(call, w->handle, w->attributes)) return;
    if (w->allocated) std::free(w->base);
    if (w->shared_map != nullptr) ::munmap(w->shared_map, w->shared_bytes);
    (void)PMPI_Comm_free(&w->comm_handle);
    windows().remove(*win);
    *win = MPI_WIN_NULL;
  });
}
#pragma weak MPI_Win_free = PMPI_Win_free

int PMPI_Win_get_group(MPI_Win win, MPI_Group* group) {
  return rma_call("MPI_Win_get_group", win, [&](Call& call, Window& w) {
    if (!check_arg(call, group, "group")) return;
    Group g;
    g.world_ranks = w.group;
    *group = runtime().groups.add(std::move(g));
  });
}
#pragma weak MPI_Win_get_group = PMPI_Win_get_group

int PMPI_Win_set_name(MPI_Win win, const char* win_name) {
  return rma_call("MPI_Win_set_name", win, [&](Call& call, Window& w) {
    if (!check_arg(call, win_name, "win_name")) return;
    w.name.assign(win_name, strnlen(win_name, MPI_MAX_OBJECT_NAME - 1));
  });
}
#pragma weak MPI_Win_set_name = PMPI_Win_set_name

int PMPI_Win_get_name(MPI_Win win, char* win_name, int* resultlen) {
  return rma_call("MPI_Win_get_name", win, [&](Call& call, Window& w) {
    if (!check_arg(call, win_name, "win_name") || !check_arg(call, resultlen, "resultlen")) return;
    std::memcpy(win_name, w.name.c_str(), w.name.size() + 1);
    *resultlen = static_cast<int>(w.name.size());
  });
}
#pragma weak MPI_Win_get_name = PMPI_Win_get_name

// ftmpi takes no window hints: they are checked and ignored, and MPI_Win_get_info gives an empty info.
int PMPI_Win_set_info(MPI_Win win, MPI_Info info) {
  return rma_call("MPI_Win_set_info", win, [&](Call& call, Window&) { check_info(call, info); });
}
#pragma weak MPI_Win_set_info = PMPI_Win_set_info

int PMPI_Win_get_info(MPI_Win win, MPI_Info* info_used) {
  return rma_call("MPI_Win_get_info", win, [&](Call& call, Window&) {
    if (check_arg(call, info_used, "info_used")) *info_used = runtime().infos.add(Info{});
  });
}
#pragma weak MPI_Win_get_info = PMPI_Win_get_info

MPI_Fint PMPI_Win_c2f(MPI_Win win) { return win; }
#pragma weak MPI_Win_c2f = PMPI_Win_c2f

MPI_Win PMPI_Win_f2c(MPI_Fint win) { return win; }
#pragma weak MPI_Win_f2c = PMPI_Win_f2c

// ---- Error handlers ----

int PMPI_Win_create_errhandler(MPI_Win_errhandler_function* win_errhandler_fn, MPI_Errhandler* errhandler) {
  return api_call("MPI_Win_create_errhandler", [&](Call& call) {
    if (!check_arg(call, reinterpret_cast<const void*>(win_errhandler_fn), "win_errhandler_fn") ||
        !check_arg(call, errhandler, "errhandler")) {
      return;
    }
    *errhandler = add_errhandler(reinterpret_cast<MPI_Comm_errhandler_function*>(win_errhandler_fn));
  });
}
#pragma weak MPI_Win_create_errhandler = PMPI_Win_create_errhandler

int PMPI_Win_set_errhandler(MPI_Win win, MPI_Errhandler errhandler) {
  return rma_call("MPI_Win_set_errhandler", win, [&](Call& call, Window& w) {
    if (!errhandler_live(errhandler)) {
      call.fail(MPI_ERR_ARG, fmt::format("invalid error handler {:#x}", errhandler));
      return;
    }
    w.errhandler = errhandler;
  });
}
#pragma weak MPI_Win_set_errhandler = PMPI_Win_set_errhandler

int PMPI_Win_get_errhandler(MPI_Win win, MPI_Errhandler* errhandler) {
  return rma_call("MPI_Win_get_errhandler", win, [&](Call& call, Window& w) {
    if (!check_arg(call, errhandler, "errhandler")) return;
    hand_out_errhandler(w.errhandler);
    *errhandler = w.errhandler;
  });
}
#pragma weak MPI_Win_get_errhandler = PMPI_Win_get_errhandler

// Calls the window's handler with `errorcode`, as MPI_Comm_call_errhandler does a communicator's: the
// call returns MPI_SUCCESS when the handler returns (MPI_ERRORS_RETURN: nothing to call).
int PMPI_Win_call_errhandler(MPI_Win win, int errorcode) {
  return rma_call("MPI_Win_call_errhandler", win, [&](Call& call, Window& w) {
    if (!is_error_class(errorcode) && !is_user_code(errorcode)) {
      call.fail(MPI_ERR_ARG, fmt::format("{} is not an error code", errorcode));
      return;
    }
    if (call_created_errhandler(w.errhandler, w.handle, errorcode)) return;
    if (w.errhandler == MPI_ERRORS_ARE_FATAL) {
      const int error_class = is_user_code(errorcode) ? user_code_class(errorcode) : errorcode;
      fatal(error_class, fmt::format("MPI_Win_call_errhandler on window {:#x}: error code {} ({})", w.handle,
                                     errorcode, error_class_name(error_class)));
    }
  });
}
#pragma weak MPI_Win_call_errhandler = PMPI_Win_call_errhandler

// ---- Operations ----

int PMPI_Put(const void* origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
             MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Win win) {
  return rma_call("MPI_Put", win, [&](Call& call, Window& w) {
    put(call, w, origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count, target_datatype,
        false);
  });
}
#pragma weak MPI_Put = PMPI_Put

int PMPI_Get(void* origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank, MPI_Aint target_disp,
             int target_count, MPI_Datatype target_datatype, MPI_Win win) {
  return rma_call("MPI_Get", win, [&](Call& call, Window& w) {
    get(call, w, origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count, target_datatype,
        false);
  });
}
#pragma weak MPI_Get = PMPI_Get

int PMPI_Accumulate(const void* origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
                    MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Op op, MPI_Win win) {
  return rma_call("MPI_Accumulate", win, [&](Call& call, Window& w) {
    accumulate(call, w, origin_addr, origin_count, origin_datatype, nullptr, 0, MPI_DATATYPE_NULL, target_rank,
               target_disp, target_count, target_datatype, op, false, false);
  });
}
#pragma weak MPI_Accumulate = PMPI_Accumulate

int PMPI_Get_accumulate(const void* origin_addr, int origin_count, MPI_Datatype origin_datatype, void* result_addr,
                        int result_count, MPI_Datatype result_datatype, int target_rank, MPI_Aint target_disp,
                        int target_count, MPI_Datatype target_datatype, MPI_Op op, MPI_Win win) {
  return rma_call("MPI_Get_accumulate", win, [&](Call& call, Window& w) {
    accumulate(call, w, origin_addr, origin_count, origin_datatype, result_addr, result_count, result_datatype,
               target_rank, target_disp, target_count, target_datatype, op, true, false);
  });
}
#pragma weak MPI_Get_accumulate = PMPI_Get_accumulate

int PMPI_Fetch_and_op(const void* origin_addr, void* result_addr, MPI_Datatype datatype, int target_rank,
                      MPI_Aint target_disp, MPI_Op op, MPI_Win win) {
  return rma_call("MPI_Fetch_and_op", win, [&](Call& call, Window& w) {
    const Datatype* type = check_committed(call, datatype);
    if (type == nullptr) return;
    if (!type->predefined) {
      call.fail(MPI_ERR_TYPE, "MPI_Fetch_and_op takes a predefined datatype");
      return;
    }
    accumulate(call, w, origin_addr, 1, datatype, result_addr, 1, datatype, target_rank, target_disp, 1, datatype, op,
               true, false);
  });
}
#pragma weak MPI_Fetch_and_op = PMPI_Fetch_and_op

int PMPI_Compare_and_swap(const void* origin_addr, const void* compare_addr, void* result_addr,
                          MPI_Datatype datatype, int target_rank, MPI_Aint target_disp, MPI_Win win) {
  return rma_call("MPI_Compare_and_swap", win, [&](Call& call, Window& w) {
    const Datatype* type = check_committed(call, datatype);
    if (type == nullptr || !check_arg(call, origin_addr, "origin_addr") ||
        !check_arg(call, compare_addr, "compare_addr") || !check_arg(call, result_addr, "result_addr")) {
      return;
    }
    const auto kind = type->predefined ? kind_of(datatype) : std::nullopt;
    if (!kind || (!ftmpi::coll::op_applies(ftmpi::coll::Op::band, *kind) && *kind != ftmpi::coll::Kind::c_bool)) {
      call.fail(MPI_ERR_TYPE, fmt::format("MPI_Compare_and_swap takes a predefined integer, logical or byte "
                                          "type, not {}", type->name));
      return;
    }
    auto a = check_access_args(call, w, target_rank, target_disp, 1, datatype, false);
    if (!a || target_rank == MPI_PROC_NULL) return;
    std::vector<std::byte> data = pack(origin_addr, 1, *type->layout);
    std::vector<std::byte> compare = pack(compare_addr, 1, *type->layout);
    data.insert(data.end(), compare.begin(), compare.end());
    issue(w, target_rank, header_for(RmaKind::compare_and_swap, *a), a->target_layout->pieces, {}, std::move(data),
          type->layout->size, result_addr, type->layout, 1);
  });
}
#pragma weak MPI_Compare_and_swap = PMPI_Compare_and_swap

int PMPI_Rput(const void* origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
              MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Win win,
              MPI_Request* request) {
  return request_call("MPI_Rput", win, request, [&](Call& call, Window& w) {
    return put(call, w, origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count,
               target_datatype, true);
  });
}
#pragma weak MPI_Rput = PMPI_Rput

int PMPI_Rget(void* origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
              MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Win win,
              MPI_Request* request) {
  return request_call("MPI_Rget", win, request, [&](Call& call, Window& w) {
    return get(call, w, origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count,
               target_datatype, true);
  });
}
#pragma weak MPI_Rget = PMPI_Rget

int PMPI_Raccumulate(const void* origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
                     MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Op op, MPI_Win win,
                     MPI_Request* request) {
  return request_call("MPI_Raccumulate", win, request, [&](Call& call, Window& w) {
    return accumulate(call, w, origin_addr, origin_count, origin_datatype, nullptr, 0, MPI_DATATYPE_NULL,
                      target_rank, target_disp, target_count, target_datatype, op, false, true);
  });
}
#pragma weak MPI_Raccumulate = PMPI_Raccumulate

int PMPI_Rget_accumulate(const void* origin_addr, int origin_count, MPI_Datatype origin_datatype, void* result_addr,
                         int result_count, MPI_Datatype result_datatype, int target_rank, MPI_Aint target_disp,
                         int target_count, MPI_Datatype target_datatype, MPI_Op op, MPI_Win win,
                         MPI_Request* request) {
  return request_call("MPI_Rget_accumulate", win, request, [&](Call& call, Window& w) {
    return accumulate(call, w, origin_addr, origin_count, origin_datatype, result_addr, result_count,
                      result_datatype, target_rank, target_disp, target_count, target_datatype, op, true, true);
  });
}
#pragma weak MPI_Rget_accumulate = PMPI_Rget_accumulate

// ---- Synchronisation ----

// Every operation of this origin finishes (applied at its target), then a barrier: after it, every
// operation of the epoch to this window is applied. Assertions are accepted; MPI_MODE_NOSUCCEED ends
// the access epoch.
int PMPI_Win_fence(int assert, MPI_Win win) {
  return rma_call("MPI_Win_fence", win, [&](Call& call, Window& w) {
    wait_ops(call, w, -1);
    order_memory();
    if (!nested(call, PMPI_Barrier(w.comm_handle), "MPI_Barrier")) return;
    order_memory();
    w.fence_epoch = (assert & MPI_MODE_NOSUCCEED) == 0;
  });
}
#pragma weak MPI_Win_fence = PMPI_Win_fence

// Post-start-complete-wait: MPI_Win_post sends each origin of its group a post message, which
// MPI_Win_start waits for; MPI_Win_complete sends each target a complete message once its operations
// are applied, which MPI_Win_wait (or _test) collects. MPI_MODE_NOCHECK skips neither (accepted).
int PMPI_Win_post(MPI_Group group, int /*assert*/, MPI_Win win) {
  return rma_call("MPI_Win_post", win, [&](Call& call, Window& w) {
    auto ranks = epoch_ranks(call, w, group, w.post_epoch, "an exposure epoch is open already (MPI_Win_wait first)");
    if (!ranks) return;
    ftmpi::engine::Engine& e = engine();
    for (int r : *ranks) w.complete_receives.push_back(e.irecv(w.comm->view, nullptr, 0, r, kCompleteTag));
    notify(w, *ranks, kPostTag);
    w.post_group = std::move(*ranks);
    w.post_epoch = true;
  });
}
#pragma weak MPI_Win_post = PMPI_Win_post

int PMPI_Win_start(MPI_Group group, int /*assert*/, MPI_Win win) {
  return rma_call("MPI_Win_start", win, [&](Call& call, Window& w) {
    auto ranks =
        epoch_ranks(call, w, group, w.start_epoch, "an access epoch is open already (MPI_Win_complete first)");
    if (!ranks) return;
    ftmpi::engine::Engine& e = engine();
    std::vector<ftmpi::engine::Request*> posts;
    for (int r : *ranks) posts.push_back(e.irecv(w.comm->view, nullptr, 0, r, kPostTag));
    progress_until([&] { return all_complete(posts); });
    for (ftmpi::engine::Request* p : posts) e.release(p);
    w.start_group = std::move(*ranks);
    w.start_epoch = true;
  });
}
#pragma weak MPI_Win_start = PMPI_Win_start

int PMPI_Win_complete(MPI_Win win) {
  return rma_call("MPI_Win_complete", win, [&](Call& call, Window& w) {
    if (!in_epoch(call, w.start_epoch, "no access epoch of MPI_Win_start is open")) return;
    wait_ops(call, w, -1);
    order_memory();
    notify(w, w.start_group, kCompleteTag);
    w.start_group.clear();
    w.start_epoch = false;
  });
}
#pragma weak MPI_Win_complete = PMPI_Win_complete

namespace {
bool completes_arrived(const Window& w) { return all_complete(w.complete_receives); }
void end_exposure(Window& w) {
  order_memory();
  for (ftmpi::engine::Request* r : w.complete_receives) engine().release(r);
  w.complete_receives.clear();
  w.post_group.clear();
  w.post_epoch = false;
}
}  // namespace

int PMPI_Win_wait(MPI_Win win) {
  return rma_call("MPI_Win_wait", win, [&](Call& call, Window& w) {
    if (!in_epoch(call, w.post_epoch, "no exposure epoch of MPI_Win_post is open")) return;
    progress_until([&] { return completes_arrived(w); });
    end_exposure(w);
  });
}
#pragma weak MPI_Win_wait = PMPI_Win_wait

int PMPI_Win_test(MPI_Win win, int* flag) {
  return rma_call("MPI_Win_test", win, [&](Call& call, Window& w) {
    if (!check_arg(call, flag, "flag")) return;
    if (!in_epoch(call, w.post_epoch, "no exposure epoch of MPI_Win_post is open")) return;
    progress_once();
    *flag = completes_arrived(w) ? 1 : 0;
    if (*flag != 0) end_exposure(w);
  });
}
#pragma weak MPI_Win_test = PMPI_Win_test

// Passive target: a lock request waits in the target's queue until granted (window.cpp).
int PMPI_Win_lock(int lock_type, int rank, int /*assert*/, MPI_Win win) {
  return rma_call("MPI_Win_lock", win, [&](Call& call, Window& w) {
    if (lock_type != MPI_LOCK_SHARED && lock_type != MPI_LOCK_EXCLUSIVE) {
      call.fail(MPI_ERR_LOCKTYPE, fmt::format("invalid lock type {}", lock_type));
      return;
    }
    if (!check_target_rank(call, w, rank) || rank == MPI_PROC_NULL) return;
    auto& state = w.locks[static_cast<std::size_t>(rank)];
    if (state != LockState::none || w.lock_all) {
      fail_sync(call, fmt::format("target rank {} is locked already by this process", rank));
      return;
    }
    lock_request(call, w, {rank}, lock_type == MPI_LOCK_EXCLUSIVE, RmaKind::lock);
    if (!call.failed()) state = lock_type == MPI_LOCK_EXCLUSIVE ? LockState::exclusive : LockState::shared;
  });
}
#pragma weak MPI_Win_lock = PMPI_Win_lock

int PMPI_Win_unlock(int rank, MPI_Win win) {
  return rma_call("MPI_Win_unlock", win, [&](Call& call, Window& w) {
    if (!check_target_rank(call, w, rank) || rank == MPI_PROC_NULL) return;
    auto& state = w.locks[static_cast<std::size_t>(rank)];
    if (state == LockState::none) {
      fail_sync(call, fmt::format("target rank {} is not locked by this process", rank));
      return;
    }
    wait_ops(call, w, rank);
    const bool exclusive = state == LockState::exclusive;
    state = LockState::none;
    lock_request(call, w, {rank}, exclusive, RmaKind::unlock);
  });
}
#pragma weak MPI_Win_unlock = PMPI_Win_unlock

int PMPI_Win_lock_all(int /*assert*/, MPI_Win win) {
  return rma_call("MPI_Win_lock_all", win, [&](Call& call, Window& w) {
    if (w.lock_all || std::any_of(w.locks.begin(), w.locks.end(), [](LockState s) { return s != LockState::none; })) {
      fail_sync(call, "this process holds a lock on the window already");
      return;
    }
    lock_request(call, w, every_rank(w), false, RmaKind::lock);
    w.lock_all = true;
  });
}
#pragma weak MPI_Win_lock_all = PMPI_Win_lock_all

int PMPI_Win_unlock_all(MPI_Win win) {
  return rma_call("MPI_Win_unlock_all", win, [&](Call& call, Window& w) {
    if (!in_epoch(call, w.lock_all, "no MPI_Win_lock_all epoch is open")) return;
    wait_ops(call, w, -1);
    w.lock_all = false;
    lock_request(call, w, every_rank(w), false, RmaKind::unlock);
  });
}
#pragma weak MPI_Win_unlock_all = PMPI_Win_unlock_all

namespace {
// The flushes: this origin's operations to `rank` (all: nullopt) are applied at their targets when they
// return, which covers local completion too.
int flush_call(std::string_view name, std::optional<int> rank, MPI_Win win) {
  return rma_call(name, win, [&](Call& call, Window& w) {
    if (rank && (!check_target_rank(call, w, *rank) || *rank == MPI_PROC_NULL)) return;
    const bool passive = w.lock_all || (rank ? w.locks[static_cast<std::size_t>(*rank)] != LockState::none
                                             : std::any_of(w.locks.begin(), w.locks.end(),
                                                           [](LockState s) { return s != LockState::none; }));
    if (!passive) {
      fail_sync(call, fmt::format("{} needs a passive-target epoch (MPI_Win_lock or MPI_Win_lock_all)", name));
      return;
    }
    wait_ops(call, w, rank ? *rank : -1);
    order_memory();
  });
}
}  // namespace

int PMPI_Win_flush(int rank, MPI_Win win) { return flush_call("MPI_Win_flush", rank, win); }
#pragma weak MPI_Win_flush = PMPI_Win_flush

int PMPI_Win_flush_all(MPI_Win win) { return flush_call("MPI_Win_flush_all", std::nullopt, win); }
#pragma weak MPI_Win_flush_all = PMPI_Win_flush_all

int PMPI_Win_flush_local(int rank, MPI_Win win) { return flush_call("MPI_Win_flush_local", rank, win); }
#pragma weak MPI_Win_flush_local = PMPI_Win_flush_local

int PMPI_Win_flush_local_all(MPI_Win win) { return flush_call("MPI_Win_flush_local_all", std::nullopt, win); }
#pragma weak MPI_Win_flush_local_all = PMPI_Win_flush_local_all

// The separate model's synchronisation of public and private copies. The target side writes window
// memory under window_mutex() (possibly on the progress thread): taking and releasing it orders this
// thread's loads and stores after what was applied before, and before what is applied after; a fence
// orders them against what origins of this host store directly.
int PMPI_Win_sync(MPI_Win win) {
  return rma_call("MPI_Win_sync", win, [&](Call&, Window&) {
    const std::lock_guard lock(window_mutex());
    order_memory();
  });
}
#pragma weak MPI_Win_sync = PMPI_Win_sync

}  // extern "C"

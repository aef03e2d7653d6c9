// One-sided communication (MPI-3.1 chapter 11): windows, and the messages their operations travel as.
//
// Design. Every window has a private communicator (a dup of the one it was made over), and each
// operation is a message on it: a request (tag kRequestTag) from origin to target carrying the target
// displacement, the target datatype flattened into its pieces, and the origin's packed data; and a reply
// (on a tag the origin picked for that operation) carrying an error class and, for the fetching
// operations, the target's data. So RMA has the engine's reliability: every frame sequenced, checksummed,
// resent on loss, and each message delivered exactly once, which makes a retransmitted accumulate
// applied exactly once. Messages of one origin to one target are matched in order (one tag), so a
// target applies them in the order they were issued.
//
// Every operation is acknowledged once it has been applied at the target: an origin's synchronisation
// calls (fence, complete, unlock, flush) wait for the replies of its operations, after which they are
// complete at the target too. A target applies the requests one at a time, so accumulates to one
// location are atomic with respect to each other.
//
// Target-side progress: the requests of every window are served (service_windows) by every waiting loop
// of the MPI layer (runtime.hpp poll_pending), and, when the job runs with the engine's progress thread,
// by that thread between its progress rounds (Engine::set_background_work). Target state (window memory,
// lock queue, requests being received) is guarded by one mutex, which the progress thread only tries:
// while an MPI call of the process is serving windows, the thread leaves the work to it. The target side
// touches no other MPI object (the target datatype arrives flattened; an accumulate's element kind is
// a predefined type's handle), so the progress thread never runs the MPI layer's other code.
//
// Direct access. Windows whose memory the library allocates (MPI_Win_allocate, MPI_Win_allocate_shared)
// live in one shared-memory segment per host when the job may use shared memory: a control block per
// rank, then the ranks' parts. An origin on the target's host then applies its operations itself, by
// load and store into the target's part (apply_access, the same code the target runs for a request),
// complete when the call returns; no message, no target progress. The control block holds what must be
// shared with the target and the other origins of the host: the passive-target lock word, taken by
// compare-and-swap by origins of the host and by the target itself on behalf of requests from other
// hosts; and a spin lock that makes accumulates to the rank's memory atomic with respect to each
// other, whether an origin of the host or the target (serving a request) applies them. Memory the
// program brings (MPI_Win_create, attached regions) is not mapped by other processes: its operations
// travel as messages, as do those to ranks of other hosts.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "engine/engine.hpp"
#include "mpi/api.hpp"
#include "mpi/comm.hpp"
#include "mpi/datatype.hpp"
#include "mpi/handles.hpp"

namespace ftmpi::mpi {

inline constexpr int kRequestTag = 0;   // origin -> target: operations, lock and unlock
inline constexpr int kPostTag = 1;      // MPI_Win_post -> MPI_Win_start
inline constexpr int kCompleteTag = 2;  // MPI_Win_complete -> MPI_Win_wait
inline constexpr int kFirstReplyTag = 3;

enum class RmaKind : std::uint8_t { put, get, accumulate, get_accumulate, compare_and_swap, lock, unlock };

// A request's fixed part; then `piece_count` target pieces (Piece), then for accumulates
// `element_piece_count` pieces of the predefined element type, then `data_bytes` of origin data.
struct RmaHeader {
  RmaKind kind = RmaKind::put;
  std::uint8_t op = 0;         // coll::Op (accumulates)
  std::uint8_t exclusive = 0;  // lock
  std::uint8_t reserved = 0;
  std::int32_t element_type = 0;  // the predefined type every element is (accumulates, CAS)
  std::int32_t reply_tag = 0;
  std::uint32_t piece_count = 0;
  std::uint32_t element_piece_count = 0;
  std::uint32_t element_extent = 0;  // bytes of one element in the C layout (coll::element_size)
  std::int64_t displacement = 0;     // target displacement (dynamic windows: an address)
  std::int64_t extent = 0;           // target datatype's extent
  std::uint64_t count = 0;           // target items
  std::uint64_t item_size = 0;       // packed bytes of one target item
  std::uint64_t data_bytes = 0;
};

struct RmaReplyHeader {
  std::int32_t error = MPI_SUCCESS;
  std::int32_t reserved = 0;
};

// One rank's control block in a host's segment (see "Direct access"); a cache line of its own.
struct alignas(64) DirectControl {
  static constexpr std::uint64_t kExclusive = std::uint64_t{1} << 63;
  // The passive-target lock: kExclusive, or the number of shared holders.
  std::atomic<std::uint64_t> lock{0};
  // Held while an accumulate, get-accumulate or compare-and-swap is applied to the rank's memory.
  std::atomic<std::uint32_t> accumulating{0};
};
static_assert(sizeof(DirectControl) == 64 && std::atomic<std::uint64_t>::is_always_lock_free);

// Takes or gives back a rank's passive-target lock; never waits.
bool try_lock_direct(DirectControl& control, bool exclusive) noexcept;
void unlock_direct(DirectControl& control, bool exclusive) noexcept;

// A region of a dynamic window (MPI_Win_attach).
struct Region {
  std::byte* base = nullptr;
  std::size_t size = 0;
};

// One rank's window memory, as apply_access reaches it.
struct WindowMemory {
  std::byte* base = nullptr;
  std::size_t size = 0;
  int disp_unit = 1;
  bool dynamic = false;
  const std::vector<Region>* regions = nullptr;  // dynamic windows
  DirectControl* control = nullptr;               // in a host's segment: accumulates take its spin lock
};

// Applies one operation (`h`, the target's pieces, an accumulate's element pieces, the origin's packed
// `data` of h.data_bytes) to `memory`; returns its error class. The fetching operations leave the
// target's old data in `fetched`. Lock and unlock are not operations here.
int apply_access(const WindowMemory& memory, const RmaHeader& h, const std::vector<Piece>& pieces,
                 const std::vector<Piece>& element_pieces, const std::byte* data, std::vector<std::byte>& fetched);

// What the target side of a window keeps; guarded by window_mutex().
struct WindowTarget {
  engine::CommView view;          // the private communicator's point-to-point view
  std::vector<int> world_ranks;   // what view.world_ranks points into
  // This rank's memory; memory.regions points at `regions`. With a control block (in a host's segment)
  // the lock is its word, shared with the host's origins, and shared_holders/exclusive_held are unused.
  WindowMemory memory;
  std::vector<Region> regions;
  // Passive-target locks held here, and the lock requests waiting (FIFO).
  int shared_holders = 0;
  bool exclusive_held = false;
  struct Waiter {
    int origin;
    int reply_tag;
    bool exclusive;
  };
  std::deque<Waiter> waiters;
  // Requests being received, applied in arrival order.
  struct Incoming {
    int origin = 0;
    std::vector<std::byte> bytes;
    engine::Request* receive = nullptr;
  };
  std::deque<Incoming> incoming;
  // Replies in flight: their buffers live until the engine has sent them.
  struct Outgoing {
    std::vector<std::byte> bytes;
    engine::Request* send = nullptr;
  };
  std::vector<Outgoing> replies;
};

// One operation issued at an origin, until its reply arrived (and, for the fetching ones, was unpacked).
struct OriginOp {
  int target = 0;
  std::vector<std::byte> message;
  std::vector<std::byte> reply;
  engine::Request* send = nullptr;
  engine::Request* receive = nullptr;
  // Where the fetched data go: `result_count` items of `result_layout` at `result`.
  void* result = nullptr;
  std::shared_ptr<const Layout> result_layout;
  std::size_t result_count = 0;
  bool finished = false;
  int error = MPI_SUCCESS;
  std::string reason;
};

enum class LockState : std::uint8_t { none, shared, exclusive };

struct Window {
  bool live = false;
  int handle = MPI_WIN_NULL;
  Comm* comm = nullptr;            // the private communicator
  MPI_Comm comm_handle = MPI_COMM_NULL;
  std::vector<int> group;          // world ranks by window rank (MPI_Win_get_group)
  MPI_Errhandler errhandler = MPI_ERRORS_ARE_FATAL;
  std::string name;
  int flavor = MPI_WIN_FLAVOR_CREATE;
  void* base = nullptr;            // MPI_WIN_BASE
  MPI_Aint size = 0;               // MPI_WIN_SIZE
  int disp_unit = 1;               // MPI_WIN_DISP_UNIT
  bool allocated = false;          // base was allocated by MPI_Win_allocate: freed with the window
  // MPI_WIN_MODEL. Separate unless every rank is reached directly ("Direct access"): a request by
  // message is applied when its target serves it, without the progress thread only inside an MPI call,
  // so an update is not eventually visible without one, as the unified model would promise.
  int model = MPI_WIN_SEPARATE;
  // The host's segment as this process maps it (MPI_Win_allocate_shared; MPI_Win_allocate when the
  // job may use shared memory), and where each window rank's part starts in it (ranks of other hosts:
  // unused). MPI_Win_allocate_shared's parts follow each other in rank order, MPI's default
  // contiguous layout.
  std::byte* shared_map = nullptr;
  std::size_t shared_bytes = 0;
  std::vector<std::size_t> shared_offsets;
  // By window rank: its control block when this process reaches its memory directly, else null.
  std::vector<DirectControl*> direct;
  // Every rank's size and displacement unit, for the origin's range check (not for dynamic windows).
  std::vector<MPI_Aint> sizes;
  std::vector<int> disp_units;
  std::vector<Attribute> attributes;
  std::unique_ptr<WindowTarget> target;

  // Origin side: operations not finished yet, and the next reply tag.
  std::vector<std::shared_ptr<OriginOp>> pending;
  int next_reply_tag = kFirstReplyTag;
  std::size_t prune_at = 256;  // pending's size at which finished operations are dropped (api_rma.cpp)
  // Access epochs: fence (between fences not asserting MPI_MODE_NOSUCCEED), a start group
  // (window ranks), locks per target, lock_all.
  bool fence_epoch = false;
  bool start_epoch = false;
  std::vector<int> start_group;
  std::vector<LockState> locks;
  bool lock_all = false;
  // Exposure epoch of post-wait: the origins (window ranks) and the receives of their completes.
  bool post_epoch = false;
  std::vector<int> post_group;
  std::vector<engine::Request*> complete_receives;
};

using WindowTable = HandleTable<HandleKind::win, Window>;
WindowTable& windows();

// Guards every WindowTarget (see the design above). Recursive: MPI calls that hold it may run progress.
std::recursive_mutex& window_mutex();
// Registers a window's target side with the servers, or removes it.
void add_window_target(WindowTarget* target);
void remove_window_target(WindowTarget* target);
class Call;
// The window a handle names, whose error handler then reports the call's failure; null (MPI_ERR_WIN).
Window* check_window(Call& call, MPI_Win handle);
// windows_open and service_windows, which serve the registered targets: runtime.hpp.

// The byte range [low, high) relative to an item-0 address that `count` items of `pieces` at `extent`
// strides touch (empty: low == high == 0).
struct ByteSpan {
  std::int64_t low = 0;
  std::int64_t high = 0;
};
ByteSpan span_of(const std::vector<Piece>& pieces, std::int64_t extent, std::uint64_t count) noexcept;

}  // namespace ftmpi::mpi

// A path moves frames between processes; the engine makes them reliable (docs/architecture.md, "Paths").
//
// A path driver never retries, reorders, or checks payloads. It reports what it can do (PathInfo) so the
// engine can skip work a reliable path does not need. One instance per rail: a host with two NICs has
// two UDP Path objects.
//
// Sending copies each frame exactly once: the path finds room for the frame (a shared-memory FIFO slot,
// an overflow buffer, a socket send buffer) and asks the engine's FrameWriter to write the header and
// payload there, so that the payload checksum is computed during that one copy.
// Receiving hands each frame to a FrameSink; the bytes are valid only during the call. A path that can
// read a frame's head before the rest of it (UDP's bulk socket, MSG_PEEK) may ask the sink where the
// payload belongs (FrameSink::place) and receive it straight there: one copy fewer.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ftmpi/base/status.hpp"

namespace ftmpi::path {

using Rank = std::uint32_t;

enum class PathKind : std::uint8_t { shm, udp, verbs_ud, loop };

struct PathInfo {
  PathKind kind = PathKind::loop;
  std::string name;             // for logs and tools: "shm", "udp 10.77.1.1"
  std::string rail;             // the path.rails entry that chose it ("eth1", "10.77.1.0/24"); empty for shm
  std::size_t max_frame = 0;    // largest frame, header included, in bytes
  bool reliable = false;        // never loses, corrupts, duplicates or reorders frames
  bool single_copy_read = false;  // can read a peer's memory directly (process_vm_readv)
  bool host_local = false;      // reaches the ranks of this host only (shared memory): preferred for them
  bool gathers = false;         // sends a frame offered as header and payload (FrameWriter::header_size)
                                // from where the two lie, copying neither in user space (UDP's iovecs)
  double bandwidth_hint = 0;    // bytes/s, used until measured throughput exists
};

// A driver's own counters, for reports and tools (ftpath): one group per layer of a path, named by its
// kind ("udp": the sockets' view; "faults": what FaultPath injected) and by that layer's PathInfo::name.
// A decorator returns the wrapped path's groups and then its own.
struct PathCounter {
  std::string_view name;  // stable, snake_case: "frames_placed"
  std::uint64_t value = 0;
};
struct PathCounterGroup {
  std::string_view kind;
  std::string name;
  std::vector<PathCounter> counters;
};

// Writes one frame into room the path found for it.
class FrameWriter {
 public:
  // Bytes the frame needs (header included); at most PathInfo::max_frame.
  virtual std::size_t frame_size() const noexcept = 0;
  // Writes exactly frame_size() bytes to `room`.
  virtual void write(std::span<std::byte> room) noexcept = 0;
  // True for the rest of a message whose first fragment the receiver has matched: a path with a bulk
  // lane (UDP's long socket) sends it there, so that lane only ever carries data someone waits for.
  virtual bool bulk() const noexcept { return false; }
  // The frame's bytes when they already exist whole somewhere (a retained copy being resent, or kept
  // for resending): a path that would only copy them elsewhere to send them may send from here instead
  // of calling write(). Empty: call write().
  virtual std::span<const std::byte> bytes() const noexcept { return {}; }
  // A frame whose payload lies whole in memory already (a sender's buffer) may be sent from two places:
  // write_header() writes the first header_size() bytes of the frame to `room` (reading the payload for
  // its checksum, without copying it) and returns the payload, which follows them on the wire. A path that
  // gathers (sendmsg's iovecs) may send both from there instead of copying them together with write().
  // 0: not offered.
  virtual std::size_t header_size() const noexcept { return 0; }
  virtual std::span<const std::byte> write_header(std::span<std::byte> room) noexcept {
    (void)room;
    return {};
  }

 protected:
  ~FrameWriter() = default;
};

// Receives frames from Path::poll.
class FrameSink {
 public:
  // `frame` is one whole frame as the peer wrote it, unvalidated (the engine decodes and checks it);
  // valid only during this call.
  virtual void on_frame(std::span<const std::byte> frame) noexcept = 0;

  // Receiving into place (optional; a path need not ask, and the default declines).
  //
  // How many leading bytes of a frame place() needs to see (the wire header); 0: it never places, and
  // a path does not spend a system call peeking for it.
  virtual std::size_t place_header_size() const noexcept { return 0; }
  // `header` is the first place_header_size() bytes of a frame not yet received, `frame_length` the
  // whole frame's length. Returns where the rest of the frame (exactly frame_length - header.size()
  // bytes) must land, or an empty span: then the frame is received and handed to on_frame() as usual.
  // A sink returns only memory whose current contents nothing depends on: whatever the path writes
  // there, corrupt or not, must be harmless until on_frame_parts() has checked it.
  virtual std::span<std::byte> place(std::span<const std::byte> header, std::size_t frame_length) noexcept {
    (void)header;
    (void)frame_length;
    return {};
  }
  // A frame whose payload the path received into the span place() returned, with the header it read
  // together with it (the same bytes place() saw). Unvalidated, like on_frame(). The default joins the
  // parts and calls on_frame(), for a sink that places but handles frames one way only.
  virtual void on_frame_parts(std::span<const std::byte> header, std::span<const std::byte> payload) noexcept {
    std::vector<std::byte> whole(header.size() + payload.size());
    if (!header.empty()) std::memcpy(whole.data(), header.data(), header.size());
    if (!payload.empty()) std::memcpy(whole.data() + header.size(), payload.data(), payload.size());
    on_frame(whole);
  }

 protected:
  ~FrameSink() = default;
};

class Path {
 public:
  virtual ~Path() = default;
  Path() = default;
  Path(const Path&) = delete;
  Path& operator=(const Path&) = delete;

  virtual const PathInfo& info() const noexcept = 0;
  virtual bool reaches(Rank peer) const noexcept = 0;
  // The largest frame this peer can take on this path: info().max_frame unless the far end is smaller
  // (a rail whose MTU differs between hosts).
  virtual std::size_t max_frame_to(Rank peer) const noexcept {
    (void)peer;
    return info().max_frame;
  }

  // How many frames this path may have in flight to `peer` at once without the peer's end dropping
  // some for want of room (a receive pool shared by all its senders, as verbs UD's); the engine's window
  // for the peer on this rail never exceeds it. SIZE_MAX: no such limit.
  virtual std::size_t frames_in_flight_limit(Rank peer) const noexcept {
    (void)peer;
    return SIZE_MAX;
  }

  // Sends one frame to `peer`, or keeps it queued in order inside the path when there is no room now
  // (it then goes out from a later send or poll, before any later frame to that peer). What it keeps it
  // copies: once send() returns, the frame's bytes are the caller's again. Errors are of
  // rail severity (the rail is broken; the engine fails over) or caller severity (bad peer, frame too
  // large).
  virtual base::Status send(Rank peer, FrameWriter& frame) noexcept = 0;

  // Hands up to `budget` received frames to `sink` and pushes out queued frames. Returns how many
  // frames were handed up.
  virtual std::size_t poll(FrameSink& sink, std::size_t budget) noexcept = 0;

  // True while frames accepted by send() are still queued inside the path.
  virtual bool has_queued_frames() const noexcept = 0;

  // A path may hold a bulk frame back for a moment, to send it together with the frames that follow
  // (UDP: equal-sized frames to one peer as one GSO datagram). Held frames go out at the next poll(), at
  // a send() they cannot join, or here: the caller flushes when it stops sending (the engine, at the end
  // of a progress round that sent bulk frames), so that none waits for its next call.
  virtual void flush_sends() noexcept {}

  // Whether bulk frames (FrameWriter::bulk(): rendezvous data after a clear-to-send) may arrive now:
  // the engine says true while it has receives waiting for such data. A path with a separate bulk lane
  // may look at it less often while false (it must still look now and then: late duplicates).
  virtual void expect_bulk(bool expected) noexcept { (void)expected; }

  // A snapshot of the driver's counters (not the engine's per-rail ones). Not for the data path.
  virtual std::vector<PathCounterGroup> stats() const { return {}; }

  // A word of this process's that peers on the path can read (shared memory): the engine keeps it above
  // 0 while a thread waits in the library, polling; null when the path has none.
  virtual std::uint32_t* waiting_word() noexcept { return nullptr; }
  // Whether `peer` has a thread waiting in the library now (its waiting_word), as far as this path can
  // tell; nullopt when it cannot.
  virtual std::optional<bool> peer_waiting(Rank peer) const noexcept {
    (void)peer;
    return std::nullopt;
  }

  // The process id of a peer this path can read the memory of (PathInfo::single_copy_read), once known.
  virtual std::optional<std::int64_t> peer_pid(Rank peer) const noexcept {
    (void)peer;
    return std::nullopt;
  }
};

}  // namespace ftmpi::path

// The engine's runtime parameters (docs/architecture.md, "Parameters"): one row each, defaults written only
// here.
#pragma once

#include <span>

#include "ftmpi/base/params.hpp"

namespace ftmpi::engine {

using base::ParamLevel;
using base::ParamRow;
using base::ParamScope;
using base::ParamType;

inline constexpr ParamRow kReliability{
    "engine.reliability", ParamType::string, "auto",
    "sequence tracking, checksums, ACKs and retransmission: auto = on unreliable paths only, "
    "force = on every path (tests), off = nowhere (measurement only)",
    ParamLevel::advanced, ParamScope::job, "auto|force|off"};
inline constexpr ParamRow kChecksum{"engine.checksum", ParamType::string, "crc32c",
                                    "payload checksum on paths that need one", ParamLevel::basic,
                                    ParamScope::job, "crc32c|sum32|none"};
// A CRC (or sum) catches accidents, not an adversary who changes frames in flight: mac authenticates
// every payload with a keyed hash instead of trusting the checksum the header MAC covers (its cost is in
// docs/benchmarks-history.md, "Authenticated payloads").
inline constexpr ParamRow kIntegrity{
    "engine.integrity", ParamType::string, "checksum",
    "what protects a network frame's payload: checksum (engine.checksum, covered by the header MAC: "
    "accidents) or mac (a keyed BLAKE2b of header and payload: adversaries on the network too)",
    ParamLevel::basic, ParamScope::job, "checksum|mac"};
inline constexpr ParamRow kShmEagerLimit{
    "engine.shm.eager_limit", ParamType::size, "8k",
    "largest message sent eagerly over shared memory; larger ones use rendezvous",
    ParamLevel::advanced, ParamScope::job};
// Several frames per eager message: over a 1500-byte MTU a rendezvous (RTS, CTS, data) for every
// message above 1.3 KiB would cost two round trips where one does.
inline constexpr ParamRow kNetEagerLimit{
    "engine.net.eager_limit", ParamType::size, "16k",
    "largest message sent eagerly over a network rail (in as many frames as it takes; at least one "
    "frame's worth); larger ones use rendezvous",
    ParamLevel::advanced, ParamScope::job};
// Bounded memory: what a receiver may be made to hold of one peer's messages that nobody has received yet
// (and a sender of its copies), whatever the peer sends. Past it, sends go by rendezvous: they wait for
// the match, holding nothing. Job-wide: a sender starts from the receiver's value.
inline constexpr ParamRow kEagerCredit{
    "engine.eager_credit", ParamType::size, "1m",
    "eager bytes a receiver grants each peer: messages sent eagerly (and rendezvous first fragments) that "
    "it has not yet received into a posted receive; a sender out of credit sends by rendezvous instead",
    ParamLevel::advanced, ParamScope::job};
inline constexpr ParamRow kShmSingleCopyMin{
    "engine.shm.single_copy_min", ParamType::size, "16k",
    "smallest rendezvous message read straight from the sender's memory (process_vm_readv); "
    "smaller ones are piped through the FIFOs. 0 disables single copy",
    ParamLevel::advanced, ParamScope::job};
inline constexpr ParamRow kShmSingleCopyMax{
    "engine.shm.single_copy_max", ParamType::size, "0",
    "largest rendezvous message read straight from the sender's memory; larger ones are piped through the "
    "FIFOs, the sender copying in while the receiver copies out: faster one way once a message outgrows a "
    "core's cache, slower both ways (docs/benchmarks.md). 0: no limit",
    ParamLevel::advanced, ParamScope::job};
inline constexpr ParamRow kShmSplitCopyMin{
    "engine.shm.split_copy_min", ParamType::size, "128k",
    "smallest single copy into one contiguous buffer that the two processes split: the receiver reads the "
    "first half while the sender writes the second (process_vm_writev), each byte still copied once; only "
    "while the sender waits in the library, so that a sender computing does not hold the receive up. 0: never",
    ParamLevel::advanced, ParamScope::job};
inline constexpr ParamRow kShmGatherMax{
    "engine.shm.gather_max", ParamType::size, "128k",
    "largest single copy read together with others: one peer's single copies whose RTSes arrive in one "
    "poll are read in one system call per MiB (process_vm_readv with a block per message), its fixed cost "
    "paid once; larger ones, and those the split copy may take (engine.shm.split_copy_min), are read "
    "alone. 0: every one alone",
    ParamLevel::advanced};
inline constexpr ParamRow kRetainByReference{
    "engine.retain.by_reference", ParamType::boolean, "true",
    "keep a tracked rendezvous's frames (its RTS's first fragment and its stream) for resending by "
    "reference to the send buffer: the CRC is read from there and a path that gathers sends from there, "
    "no user-space copy; the send completes once the peer has received every frame. false: each frame is "
    "copied (with its CRC) and the send completes once its frames are handed to the paths",
    ParamLevel::advanced};
inline constexpr ParamRow kRetainAfterSend{
    "engine.retain.after_send", ParamType::boolean, "false",
    "true: a tracked eager frame leaves from the sender's buffer on a path that gathers (UDP), its CRC read "
    "from there, and is copied for resending once the path has it (the copy off the message's way, but the "
    "payload read once more). false: copied with its CRC in one pass before the path sees it, and sent from "
    "the copy, which measured faster on the AMD EPYC VM (docs/benchmarks.md)",
    ParamLevel::advanced};
inline constexpr ParamRow kRetransmitMin{
    "engine.retransmit.min", ParamType::duration, "2ms",
    "first retransmission timeout (floor of the measured round trip estimate)", ParamLevel::advanced};
inline constexpr ParamRow kRetransmitMax{"engine.retransmit.max", ParamType::duration, "500ms",
                                         "cap of the exponential retransmission back-off",
                                         ParamLevel::advanced};
inline constexpr ParamRow kAckEvery{"engine.ack.every", ParamType::integer, "8",
                                    "send an explicit ACK after this many unacknowledged frames",
                                    ParamLevel::advanced};
inline constexpr ParamRow kAckDelay{"engine.ack.delay", ParamType::duration, "200us",
                                    "longest an owed ACK waits for a frame to ride on",
                                    ParamLevel::advanced};
inline constexpr ParamRow kSpinRounds{
    "engine.progress.spin", ParamType::integer, "2000",
    "idle progress rounds a waiting rank spins before it starts yielding its core (0 by default when the "
    "host has more ranks than CPUs online)",
    ParamLevel::advanced};
inline constexpr ParamRow kProgressThread{
    "engine.progress.thread", ParamType::boolean, "false",
    "make progress in a thread of its own too, so ACKs and retransmissions flow while the application "
    "computes (every engine call then takes a lock)",
    ParamLevel::basic};
inline constexpr ParamRow kProgressThreadSleep{
    "engine.progress.thread_sleep", ParamType::duration, "50us",
    "how long the progress thread sleeps after a round with nothing to do", ParamLevel::advanced};
// A window per rail keeps a healthy link from dropping bursts: a stream waits for ACKs beyond it.
inline constexpr ParamRow kWindow{
    "engine.window", ParamType::size, "2m",
    "unacknowledged bytes in flight to one peer on one rail before a large message waits for ACKs",
    ParamLevel::advanced, ParamScope::job};
// In frames too: a receiving host queues at most net.core.netdev_max_backlog (1000) packets per CPU, so a
// burst of small (MTU-sized) frames would be dropped long before the byte window is full.
inline constexpr ParamRow kWindowFrames{
    "engine.window_frames", ParamType::integer, "256",
    "unacknowledged frames in flight to one peer on one rail before a large message waits for ACKs",
    ParamLevel::advanced, ParamScope::job};
inline constexpr ParamRow kRailDownAfter{
    "engine.rail.down_after", ParamType::duration, "50ms",
    "a suspect rail (a frame timed out on it) that answers nothing for this long is declared down and "
    "its unacknowledged frames move to the other rails, as long as another rail to that peer works",
    ParamLevel::advanced, ParamScope::job};
// 5 s: twenty times the longest a live, polling peer stayed silent in the fault soak (255 ms, under loss
// and a blackholed rail; 70 ms with every core busy), and above a link renegotiation or a fast spanning-tree
// reconvergence; a peer that computes is asked about through ftrun instead of timed out
// (docs/benchmarks-history.md, "How long a live peer is silent").
inline constexpr ParamRow kPeerTimeout{
    "engine.peer.timeout", ParamType::duration, "5s",
    "silence on every rail to a peer after which ftrun is asked whether the peer polls: if it does, the "
    "network between is dead and the peer is lost (operations with it fail with MPIX_ERR_PROC_FAILED); if "
    "not, it is computing and is waited for, asked again after as long. Without ftrun, the silence alone "
    "loses it",
    ParamLevel::advanced, ParamScope::job};
inline constexpr ParamRow kProbeMin{
    "engine.rail.probe_min", ParamType::duration, "10ms",
    "first interval between probes of a down rail (failback); doubles up to engine.rail.probe_max",
    ParamLevel::advanced, ParamScope::job};
inline constexpr ParamRow kProbeMax{"engine.rail.probe_max", ParamType::duration, "1s",
                                    "longest interval between probes of a down rail; probing never stops",
                                    ParamLevel::advanced, ParamScope::job};
inline constexpr ParamRow kReport{
    "engine.report", ParamType::string, "false",
    "when a rank finalizes, print its statistics to stderr: totals, and per peer and rail the state, "
    "frames, bytes, retransmits, timeouts, checksum failures, duplicates, refused sends, probes, state "
    "changes and round trip; false, true ('ftmpi counters:' lines; also 1/yes/on) or json (one "
    "'ftmpi stats: {...}' line)",
    ParamLevel::basic, ParamScope::rank};
inline constexpr ParamRow kFlightEvents{
    "engine.flight.events", ParamType::integer, "4096",
    "events the flight recorder keeps (a ring: rail state changes, faults injected and cleared, peers lost, "
    "and each rail's traffic, retransmits, timeouts and checksum failures per engine.flight.interval); 0: "
    "none kept",
    ParamLevel::advanced, ParamScope::rank};
inline constexpr ParamRow kFlightInterval{
    "engine.flight.interval", ParamType::duration, "100ms",
    "how often the flight recorder notes each rail's traffic (only intervals with some)",
    ParamLevel::advanced, ParamScope::rank};
inline constexpr ParamRow kFlightWrite{
    "engine.flight.write", ParamType::string, "abnormal",
    "when a rank writes its flight recorder (and its statistics) to a zstd file: abnormal (a peer lost, an "
    "abort, a fatal error), always (also at MPI_Finalize; ftinject drills set it) or never",
    ParamLevel::advanced, ParamScope::rank};
inline constexpr ParamRow kFlightDir{
    "engine.flight.dir", ParamType::string, "",
    "directory of the flight recorder files <job id>.rank<R>.flight.zst (default: the runtime directory, "
    "$XDG_RUNTIME_DIR/ftmpi or /tmp/ftmpi-<uid>)",
    ParamLevel::advanced, ParamScope::rank};
inline constexpr ParamRow kTestOverlapTag{
    "engine.test.overlap_tag", ParamType::integer, "-1",
    "tests only: in a process that asked for MPI_THREAD_MULTIPLE, a send with this tag waits, holding its "
    "peer's lock, until a send with the same tag to another peer is under way too, and ends the job if none comes within 30 s: proves that "
    "MPI_THREAD_MULTIPLE sends to different peers run at once (tests/mpi/threads_overlap.c); -1: off",
    ParamLevel::advanced, ParamScope::job};
inline constexpr ParamRow kTestPollTag{
    "engine.test.poll_tag", ParamType::integer, "-1",
    "tests only: in a process that asked for MPI_THREAD_MULTIPLE, posting a receive with this tag makes the "
    "posting thread's next progress round wait, while it polls the paths (other threads' rounds do not "
    "poll meanwhile), until another thread posts a receive with this tag + 1, and ends the job if none is "
    "posted within 30 s: proves that a receive can be posted while another thread polls "
    "(tests/mpi/threads_poll.c); -1: off",
    ParamLevel::advanced, ParamScope::job};
inline constexpr ParamRow kHostId{
    "engine.host_id", ParamType::string, "",
    "identity of this host for choosing shared memory (default: boot id + network namespace)",
    ParamLevel::advanced};

std::span<const ParamRow> engine_params() noexcept;

}  // namespace ftmpi::engine

// The path library's runtime parameters (docs/architecture.md, "Parameters"): one ParamRow each, listed in
// path_params().
#pragma once

#include <span>

#include "ftmpi/base/params.hpp"

namespace ftmpi::path {

// Job scope: every local rank maps the same segment, so all must agree (attach checks it).
inline constexpr base::ParamRow kShmSlots{
    "path.shm.slots", base::ParamType::integer, "128",
    "slots in each shared-memory FIFO (one FIFO per ordered pair of local ranks); a power of two, 2..65536",
    base::ParamLevel::advanced, base::ParamScope::job};

// 8448 = 8 KiB + 256: an 8 KiB payload behind the engine's wire header (112 bytes today, room up to 240)
// and the 16-byte slot header fits one slot, so an 8 KiB message is one frame; a multiple of 64 so every
// slot starts on its own cache line.
inline constexpr base::ParamRow kShmSlotSize{
    "path.shm.slot_size", base::ParamType::size, "8448",
    "bytes per shared-memory FIFO slot, its 16-byte header included (largest frame = this - 16); "
    "a multiple of 64, 128..64m",
    base::ParamLevel::advanced, base::ParamScope::job};

// Which kinds of path ranks may use; ftrun --paths.
inline constexpr base::ParamRow kKinds{
    "path.kinds", base::ParamType::string, "shm,udp",
    "path kinds ranks may use, comma-separated, among the registered drivers (ftrun --help lists them); "
    "'udp' alone sends even between ranks on one host over the network",
    base::ParamLevel::basic, base::ParamScope::job};

// Rail k of every rank talks to rail k of its peers, so every host lists its rails in the same order.
inline constexpr base::ParamRow kRails{
    "path.rails", base::ParamType::string, "",
    "UDP rails, comma-separated: interface names, local addresses or subnets (10.77.1.0/24); rail k of "
    "every rank talks to rail k of its peers; empty: every usable non-loopback interface, or 127.0.0.1 "
    "when there is none",
    base::ParamLevel::basic, base::ParamScope::job};

// 63 KiB keeps a frame under the 65507-byte IPv4 UDP limit; an interface's MTU lowers it further so
// that no frame is split into IP fragments (losing one fragment would lose the whole frame).
inline constexpr base::ParamRow kUdpMaxFrame{
    "path.udp.max_frame", base::ParamType::size, "63k",
    "largest UDP frame, header included; lowered to the rail's interface MTU minus IP and UDP headers",
    base::ParamLevel::advanced, base::ParamScope::job};

inline constexpr base::ParamRow kUdpSendBuffer{
    "path.udp.sndbuf", base::ParamType::size, "4m",
    "SO_SNDBUF of each UDP socket (forced past net.core.wmem_max when the process may)",
    base::ParamLevel::advanced, base::ParamScope::rank};

inline constexpr base::ParamRow kUdpReceiveBuffer{
    "path.udp.rcvbuf", base::ParamType::size, "8m",
    "SO_RCVBUF of each UDP socket (forced past net.core.rmem_max when the process may)",
    base::ParamLevel::advanced, base::ParamScope::rank};

// Receiving the long (bulk) socket's payloads straight into the posted receive costs a second system
// call per datagram (MSG_PEEK of the header first), which pays for itself only on large frames: auto
// places when the rail's frames may be 8 KiB or more. Per rank: it changes nothing on the wire.
inline constexpr base::ParamRow kUdpPlace{
    "path.udp.place", base::ParamType::string, "auto",
    "receive bulk (long-socket) UDP payloads straight into the posted receive buffer: on, off, or auto "
    "(when the rail's largest frame is at least 8k)",
    base::ParamLevel::advanced, base::ParamScope::rank, "auto|on|off"};

// Fewer system calls per byte: equal-sized bulk frames to one peer (a large message's full fragments) go
// out as one datagram the kernel cuts into frames on the wire (UDP_SEGMENT), and the long socket reads
// back, in one datagram, frames the kernel joined (UDP_GRO). Each frame keeps its own header and
// checksum. Per rank: a receiver without GRO gets the same frames one by one.
inline constexpr base::ParamRow kUdpGso{
    "path.udp.gso", base::ParamType::boolean, "true",
    "send runs of equal-sized bulk UDP frames to one peer as one GSO datagram of up to 64 frames and "
    "64k (UDP_SEGMENT), where the kernel takes it; false: one system call per frame",
    base::ParamLevel::advanced, base::ParamScope::rank};
inline constexpr base::ParamRow kUdpGro{
    "path.udp.gro", base::ParamType::boolean, "true",
    "let the kernel join datagrams arriving on the bulk (long) UDP socket into one read of up to 64k "
    "(UDP_GRO), where it can; only when that socket does not place (path.udp.place)",
    base::ParamLevel::advanced, base::ParamScope::rank};

// A datagram sent from an unconnected socket costs the kernel a route lookup each time; from a socket
// connected to its peer, none (0 B one way on loopback: 0.92x). Each such socket is a file descriptor,
// up to two a peer (one per lane), so only the first peers sent to get them (64: at most 128 descriptors
// a rail), and never in the upper half of the process's descriptors.
// Per rank: a receiver learns the one port they all send from with the endpoint.
inline constexpr base::ParamRow kUdpConnectedPeers{
    "path.udp.connected_peers", base::ParamType::integer, "64",
    "peers per UDP rail (the first this many sent to) that get sockets connected to them for sending, "
    "which saves the kernel a route lookup per datagram; 0: every frame goes from the rail's two sockets",
    base::ParamLevel::advanced, base::ParamScope::rank};

// The verbs UD driver (src/verbs/). Buffers are registered once; what they cost is count x (MTU + 40).
inline constexpr base::ParamRow kVerbsDevice{
    "path.verbs.device", base::ParamType::string, "",
    "InfiniBand/RoCE rails of the verbs path, comma-separated, each a device (ibv_devices lists them) or "
    "device:port; empty: the first active port of any device; 'emulated': the UD device emulated over "
    "UDP that the tests use (a rail per path.verbs.emulated.address entry)",
    base::ParamLevel::basic, base::ParamScope::rank};
inline constexpr base::ParamRow kVerbsPort{
    "path.verbs.port", base::ParamType::integer, "0",
    "port of a verbs device named without one, from 1; 0: its first active port", base::ParamLevel::advanced,
    base::ParamScope::rank};
inline constexpr base::ParamRow kVerbsGidIndex{
    "path.verbs.gid_index", base::ParamType::integer, "-1",
    "GID index of the port (RoCE: which address and RoCE version); -1: 0 on InfiniBand, on Ethernet the "
    "first RoCE v2 IPv4 address (else the first RoCE v2 one, else 0)", base::ParamLevel::advanced,
    base::ParamScope::rank};
inline constexpr base::ParamRow kVerbsRecvBuffers{
    "path.verbs.recv_buffers", base::ParamType::integer, "512",
    "registered receive buffers of the verbs path, shared by every peer; a datagram that finds none "
    "posted is dropped (and resent by the engine)",
    base::ParamLevel::advanced, base::ParamScope::rank};
inline constexpr base::ParamRow kVerbsSendBuffers{
    "path.verbs.send_buffers", base::ParamType::integer, "256",
    "registered send buffers of the verbs path (frames in flight); more frames wait inside the path",
    base::ParamLevel::advanced, base::ParamScope::rank};
inline constexpr base::ParamRow kVerbsSendQps{
    "path.verbs.send_qps", base::ParamType::integer, "4", "send queue pairs of the verbs path, used in turn",
    base::ParamLevel::advanced, base::ParamScope::rank};
inline constexpr base::ParamRow kVerbsEmulatedAddress{
    "path.verbs.emulated.address", base::ParamType::string, "127.0.0.1",
    "with path.verbs.device=emulated: where this rank's emulated queue pairs listen (their GID), one "
    "rail per comma-separated entry: an interface, a local IPv4 address or a subnet, as path.rails "
    "takes them",
    base::ParamLevel::advanced, base::ParamScope::rank};
inline constexpr base::ParamRow kVerbsEmulatedPortDown{
    "path.verbs.emulated.port_down", base::ParamType::boolean, "false",
    "with path.verbs.device=emulated: the port is down from the start (tests)", base::ParamLevel::advanced,
    base::ParamScope::rank};
inline constexpr base::ParamRow kVerbsEmulatedPortDownAfterSends{
    "path.verbs.emulated.port_down_after_sends", base::ParamType::integer, "0",
    "with path.verbs.device=emulated: the port goes down after this many sends, 0 never (tests)",
    base::ParamLevel::advanced, base::ParamScope::rank};

// The fault-injection language (fault.hpp); ftrun --fault and --fault-plan set these.
inline constexpr base::ParamRow kFault{
    "path.fault", base::ParamType::string, "",
    "fault injection: SPECs separated by ';', each comma-separated key=value (drop, corrupt, dup, "
    "reorder, delay, rail, after, for, blackhole, seed); empty: none, at no cost",
    base::ParamLevel::advanced, base::ParamScope::job};

inline constexpr base::ParamRow kFaultPlan{
    "path.fault_plan", base::ParamType::string, "",
    "file of fault SPECs, one per line ('#' starts a comment), added to path.fault",
    base::ParamLevel::advanced, base::ParamScope::job};

// This library's parameter table.
std::span<const base::ParamRow> path_params() noexcept;

}  // namespace ftmpi::path

// The emulated UD device behind emulated_verbs(): libibverbs' calls on libibverbs' own structures, with
// unreliable-datagram semantics, carrying each datagram between processes as one UDP datagram. Tests
// (and path.verbs.device=emulated) use it on machines without an RDMA adapter. Single-threaded; all state
// lives in the opened context, so several contexts in one process behave as several hosts' adapters.
// Semantics and limits: docs/architecture.md, "The emulated UD device".
#pragma once

#include <infiniband/verbs.h>

#include <cstdint>
#include <string>

#include "verbs_api.hpp"

namespace ftmpi::path::verbs {

struct EmulatedConfig {
  // IPv4 address the context's QPs bind to; the port's GID 0 is its IPv4-mapped form ::ffff:a.b.c.d
  // (as RoCE v2), and a QP's number is its UDP port.
  std::string address = "127.0.0.1";
  ibv_mtu mtu = IBV_MTU_4096;
  // The port is IBV_PORT_DOWN from the start: sends complete in error, arriving datagrams are dropped.
  bool port_down = false;
  // 0: never. Else the first N sends go out and every later one completes with IBV_WC_GENERAL_ERR,
  // vendor_err kVendorErrForced, sending nothing.
  std::uint64_t fail_sends_after = 0;
  // 0: never. Else after the Nth send the port goes down (IBV_EVENT_PORT_ERR); later sends complete
  // with IBV_WC_GENERAL_ERR, vendor_err kVendorErrPortDown.
  std::uint64_t port_down_after_sends = 0;
};

// vendor_err of the error completions the device forces (real adapters put a vendor syndrome there).
inline constexpr std::uint32_t kVendorErrForced = 0xE1;
inline constexpr std::uint32_t kVendorErrPortDown = 0xE2;

// The configuration of contexts opened from now on (open_device copies it). Tests set it before each
// open to give two contexts in one process different addresses or faults.
void configure_emulated_verbs(const EmulatedConfig& config);

// Brings the context's port up or down as a cable would: queues IBV_EVENT_PORT_ACTIVE or
// IBV_EVENT_PORT_ERR when the state changes. Returns false if `context` is not an emulated one.
bool set_emulated_port_state(ibv_context* context, bool up);

struct EmulatedStats {
  std::uint64_t datagrams_sent = 0;       // handed to sendto and accepted by it
  std::uint64_t datagrams_received = 0;   // placed in a receive WR (successful completions)
  std::uint64_t send_drops = 0;           // sendto refused (full buffer, unreachable): dropped, WR succeeded
  std::uint64_t dropped_no_recv = 0;      // no receive WR posted
  std::uint64_t dropped_qkey = 0;         // Q_Key differs from the QP's
  std::uint64_t dropped_oversize = 0;     // payload over this port's MTU
  std::uint64_t dropped_malformed = 0;    // too short or bad magic
  std::uint64_t dropped_qp_state = 0;     // QP not in RTR/RTS
  std::uint64_t dropped_port_down = 0;    // arrived while the port was down
  std::uint64_t completions_lost = 0;     // completions that found their CQ full (overrun)
};

// The context's counters; zeros if `context` is not an emulated one.
EmulatedStats emulated_stats(ibv_context* context);

}  // namespace ftmpi::path::verbs

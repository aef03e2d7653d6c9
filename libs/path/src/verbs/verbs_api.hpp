// The libibverbs calls the verbs UD driver makes, as a table, so that one driver runs on two devices:
// Debian's libibverbs (a real InfiniBand or RoCE adapter: real_verbs()) and the emulated UD device the
// tests use on machines without one (emulated_verbs(), chosen only by path.verbs.device=emulated).
// Every entry has the signature and the meaning of the libibverbs call of the same name, on libibverbs'
// own structures, so the driver reads as ordinary verbs code; post_send, post_recv and poll_cq are
// inline functions in <infiniband/verbs.h>, which the real table wraps.
#pragma once

#include <infiniband/verbs.h>

#include <cstddef>
#include <cstdint>
#include <string>

namespace ftmpi::path::verbs {

struct VerbsApi {
  const char* name;  // "libibverbs" or "emulated"
  ibv_device** (*get_device_list)(int* num_devices);
  void (*free_device_list)(ibv_device** list);
  const char* (*get_device_name)(ibv_device* device);
  ibv_context* (*open_device)(ibv_device* device);
  int (*close_device)(ibv_context* context);
  int (*query_device)(ibv_context* context, ibv_device_attr* attr);
  int (*query_port)(ibv_context* context, std::uint8_t port, ibv_port_attr* attr);
  int (*query_gid)(ibv_context* context, std::uint8_t port, int index, ibv_gid* gid);
  // The entry with its type (RoCE v1 or v2, InfiniBand): how the path picks a RoCE v2 address.
  int (*query_gid_ex)(ibv_context* context, std::uint32_t port, std::uint32_t index, ibv_gid_entry* entry,
                      std::uint32_t flags);
  ibv_pd* (*alloc_pd)(ibv_context* context);
  int (*dealloc_pd)(ibv_pd* pd);
  ibv_mr* (*reg_mr)(ibv_pd* pd, void* addr, std::size_t length, int access);
  int (*dereg_mr)(ibv_mr* mr);
  ibv_cq* (*create_cq)(ibv_context* context, int cqe, void* cq_context, ibv_comp_channel* channel,
                       int comp_vector);
  int (*destroy_cq)(ibv_cq* cq);
  ibv_qp* (*create_qp)(ibv_pd* pd, ibv_qp_init_attr* attr);
  int (*modify_qp)(ibv_qp* qp, ibv_qp_attr* attr, int attr_mask);
  int (*destroy_qp)(ibv_qp* qp);
  ibv_ah* (*create_ah)(ibv_pd* pd, ibv_ah_attr* attr);
  int (*destroy_ah)(ibv_ah* ah);
  int (*post_send)(ibv_qp* qp, ibv_send_wr* wr, ibv_send_wr** bad_wr);
  int (*post_recv)(ibv_qp* qp, ibv_recv_wr* wr, ibv_recv_wr** bad_wr);
  int (*poll_cq)(ibv_cq* cq, int num_entries, ibv_wc* wc);
  // Nonblocking here (the driver polls for port and device events between rounds): -1 with errno
  // EAGAIN when no event is pending.
  int (*get_async_event)(ibv_context* context, ibv_async_event* event);
  void (*ack_async_event)(ibv_async_event* event);
};

const VerbsApi& real_verbs() noexcept;
const VerbsApi& emulated_verbs() noexcept;

// What the driver and the emulated device both need to read of verbs values.
// An ibv_mtu in bytes; 0 for a value that is none of them.
inline std::size_t mtu_bytes(ibv_mtu mtu) noexcept {
  return mtu >= IBV_MTU_256 && mtu <= IBV_MTU_4096 ? std::size_t{128} << static_cast<int>(mtu) : 0;
}
// Whether a GID is an IPv4-mapped address (::ffff:a.b.c.d), as RoCE v2 gives an IPv4 interface.
inline bool ipv4_mapped(const ibv_gid& gid) noexcept {
  for (int b = 0; b < 10; ++b) {
    if (gid.raw[b] != 0) return false;
  }
  return gid.raw[10] == 0xff && gid.raw[11] == 0xff;
}
// Its IPv4 address, host order (as ftmpi/path/udp.hpp's parse_ipv4 and format_ipv4 take them).
inline std::uint32_t ipv4_of(const ibv_gid& gid) noexcept {
  return (std::uint32_t{gid.raw[12]} << 24) | (std::uint32_t{gid.raw[13]} << 16) | (std::uint32_t{gid.raw[14]} << 8) |
         gid.raw[15];
}

}  // namespace ftmpi::path::verbs

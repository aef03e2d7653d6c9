// The verbs table over Debian's libibverbs: the exported calls as they are, and the inline ones
// (post_send, post_recv, poll_cq) wrapped so that they have an address.
#include <fcntl.h>

#include "verbs_api.hpp"

namespace ftmpi::path::verbs {
namespace {

int post_send(ibv_qp* qp, ibv_send_wr* wr, ibv_send_wr** bad_wr) { return ibv_post_send(qp, wr, bad_wr); }
int post_recv(ibv_qp* qp, ibv_recv_wr* wr, ibv_recv_wr** bad_wr) { return ibv_post_recv(qp, wr, bad_wr); }
int poll_cq(ibv_cq* cq, int num_entries, ibv_wc* wc) { return ibv_poll_cq(cq, num_entries, wc); }
ibv_mr* reg_mr(ibv_pd* pd, void* addr, std::size_t length, int access) { return ibv_reg_mr(pd, addr, length, access); }
int query_gid_ex(ibv_context* context, std::uint32_t port, std::uint32_t index, ibv_gid_entry* entry,
                 std::uint32_t flags) {
  return ibv_query_gid_ex(context, port, index, entry, flags);
}
int query_port(ibv_context* context, std::uint8_t port, ibv_port_attr* attr) {
  return ibv_query_port(context, port, attr);
}

// libibverbs' async event read blocks; the driver polls it between rounds, so the descriptor is made
// nonblocking the first time (ibv_get_async_event then fails with EAGAIN when nothing is pending).
int get_async_event(ibv_context* context, ibv_async_event* event) {
  const int flags = ::fcntl(context->async_fd, F_GETFL);
  if (flags >= 0 && (flags & O_NONBLOCK) == 0) (void)::fcntl(context->async_fd, F_SETFL, flags | O_NONBLOCK);
  return ibv_get_async_event(context, event);
}

constexpr VerbsApi kReal{
    "libibverbs",   ibv_get_device_list, ibv_free_device_list, ibv_get_device_name, ibv_open_device,
    ibv_close_device, ibv_query_device,  query_port,           ibv_query_gid,       query_gid_ex,
    ibv_alloc_pd,
    ibv_dealloc_pd, reg_mr,              ibv_dereg_mr,         ibv_create_cq,       ibv_destroy_cq,
    ibv_create_qp,  ibv_modify_qp,       ibv_destroy_qp,       ibv_create_ah,       ibv_destroy_ah,
    post_send,      post_recv,           poll_cq,              get_async_event,     ibv_ack_async_event,
};

}  // namespace

const VerbsApi& real_verbs() noexcept { return kReal; }

}  // namespace ftmpi::path::verbs

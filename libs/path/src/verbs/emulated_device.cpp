// The emulated UD device (emulated_device.hpp). Every libibverbs object handed out is the first member
// of a standard-layout Handle whose second member points at the emulation's own state, so a call finds
// its state from the libibverbs pointer it is given. Send work completes when posted (the datagram is
// out or dropped by then); receive work completes when poll_cq drains the sockets of the QPs that
// report to the polled CQ.
#include "emulated_device.hpp"

#include <arpa/inet.h>
#include <endian.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstring>
#include <deque>
#include <memory>
#include <mutex>
#include <new>
#include <type_traits>
#include <vector>

#include "ftmpi/base/threads.hpp"

namespace ftmpi::path::verbs {
namespace {

constexpr char kDeviceName[] = "emu0";
constexpr std::uint8_t kPort = 1;
constexpr std::uint32_t kMagic = 0x45554431;  // "EUD1"
constexpr std::uint32_t kFlagImm = 1;
// magic, source QPN, source GID, Q_Key, flags, immediate data.
constexpr std::size_t kHeaderBytes = 4 + 4 + 16 + 4 + 4 + 4;
constexpr std::size_t kGrhBytes = sizeof(ibv_grh);
static_assert(kGrhBytes == 40);
constexpr std::size_t kMaxMtuBytes = 4096;
// Datagrams one poll_cq reads per QP: keeps a poll short under a flood, as a batch of hardware
// completions would be.
constexpr int kDrainPerPoll = 64;
constexpr int kSocketBuffer = 4 << 20;

constexpr int kMaxQp = 1024;
constexpr int kMaxQpWr = 16384;
constexpr int kMaxSge = 16;
constexpr int kMaxCqe = 65536;
constexpr std::uint32_t kMaxInline = 256;


// The configuration open_device copies: set and read under a lock, since tests run ranks as threads.
EmulatedConfig& default_config() {
  static EmulatedConfig config;
  return config;
}
std::mutex& config_mutex() {
  static std::mutex mutex;
  return mutex;
}
// Under MPI_THREAD_MULTIPLE a rank posts sends from several threads while one polls: the device's state
// is kept under one lock, as a real provider's is under its own.
base::OptionalMutex& device_mutex() {
  static base::OptionalMutex mutex;
  return mutex;
}

ibv_device* the_device() {
  static ibv_device device = [] {
    ibv_device d{};
    d.node_type = IBV_NODE_CA;
    d.transport_type = IBV_TRANSPORT_IB;
    std::strncpy(d.name, kDeviceName, sizeof d.name - 1);
    std::strncpy(d.dev_name, "uverbs-emu0", sizeof d.dev_name - 1);
    return d;
  }();
  return &device;
}

template <class Ibv, class State>
struct Handle {
  Ibv ibv{};
  State* state = nullptr;
};

template <class State, class Ibv>
State* state_of(Ibv* ibv) {
  using H = Handle<Ibv, State>;
  static_assert(std::is_standard_layout_v<H>);
  return reinterpret_cast<H*>(ibv)->state;
}

struct Context;

struct Pd {
  Handle<ibv_pd, Pd> handle;
};

struct Mr {
  Handle<ibv_mr, Mr> handle;
};

struct Cq {
  Handle<ibv_cq, Cq> handle;
  std::deque<ibv_wc> entries;
  bool overrun = false;
};

struct Ah {
  Handle<ibv_ah, Ah> handle;
  std::uint32_t ipv4 = 0;  // network order
};

struct RecvWr {
  std::uint64_t wr_id;
  std::vector<ibv_sge> sges;
};

struct Qp {
  Handle<ibv_qp, Qp> handle;
  int fd = -1;
  ibv_qp_cap cap{};
  bool sq_sig_all = false;
  std::uint32_t qkey = 0;
  std::deque<RecvWr> recvs;
  ~Qp() {
    if (fd >= 0) ::close(fd);
  }
};

struct Context {
  Handle<ibv_context, Context> handle;
  EmulatedConfig config;
  std::uint32_t ipv4 = 0;  // network order
  ibv_gid gid{};
  bool port_up = true;
  std::uint64_t sends = 0;  // sends that passed the checks while the port was up
  std::uint32_t next_key = 1;
  std::uint32_t next_handle = 1;
  EmulatedStats stats;
  std::deque<ibv_async_event> events;
  std::vector<std::unique_ptr<Pd>> pds;
  std::vector<std::unique_ptr<Mr>> mrs;
  std::vector<std::unique_ptr<Cq>> cqs;
  std::vector<std::unique_ptr<Qp>> qps;
  std::vector<std::unique_ptr<Ah>> ahs;
  std::vector<std::byte> wire;  // one datagram, header then payload, for sending and receiving
};

Context* context_of(ibv_context* context) {
  if (context == nullptr || context->device != the_device()) return nullptr;
  return state_of<Context>(context);
}

template <class T>
void erase_owned(std::vector<std::unique_ptr<T>>& owned, const T* item) {
  std::erase_if(owned, [item](const std::unique_ptr<T>& p) { return p.get() == item; });
}

void queue_event(Context& ctx, ibv_event_type type, auto setter) {
  ibv_async_event event{};
  event.event_type = type;
  setter(event);
  ctx.events.push_back(event);
}

void set_port(Context& ctx, bool up) {
  if (ctx.port_up == up) return;
  ctx.port_up = up;
  queue_event(ctx, up ? IBV_EVENT_PORT_ACTIVE : IBV_EVENT_PORT_ERR,
              [](ibv_async_event& e) { e.element.port_num = kPort; });
}

void move_to_error(Context& ctx, Qp& qp);

// Queues a completion; a full CQ overruns: the completion is lost, IBV_EVENT_CQ_ERR is queued once, and
// every QP reporting to the CQ goes to the error state (IBV_EVENT_QP_FATAL), as on hardware.
void complete(Context& ctx, Cq& cq, const ibv_wc& wc) {
  if (cq.entries.size() < static_cast<std::size_t>(cq.handle.ibv.cqe)) {
    cq.entries.push_back(wc);
    return;
  }
  ++ctx.stats.completions_lost;
  if (cq.overrun) return;
  cq.overrun = true;
  ibv_cq* ibv = &cq.handle.ibv;
  queue_event(ctx, IBV_EVENT_CQ_ERR, [ibv](ibv_async_event& e) { e.element.cq = ibv; });
  for (auto& qp : ctx.qps) {
    if (qp->handle.ibv.send_cq == ibv || qp->handle.ibv.recv_cq == ibv) move_to_error(ctx, *qp);
  }
}

ibv_wc completion(const Qp& qp, std::uint64_t wr_id, ibv_wc_status status, ibv_wc_opcode opcode) {
  ibv_wc wc{};
  wc.wr_id = wr_id;
  wc.status = status;
  wc.opcode = opcode;
  wc.qp_num = qp.handle.ibv.qp_num;
  return wc;
}

Cq& send_cq(Qp& qp) { return *state_of<Cq>(qp.handle.ibv.send_cq); }
Cq& recv_cq(Qp& qp) { return *state_of<Cq>(qp.handle.ibv.recv_cq); }

// Entering the error state flushes the posted receives (IBV_WC_WR_FLUSH_ERR).
void move_to_error(Context& ctx, Qp& qp) {
  if (qp.handle.ibv.state == IBV_QPS_ERR) return;
  qp.handle.ibv.state = IBV_QPS_ERR;
  ibv_qp* ibv = &qp.handle.ibv;
  queue_event(ctx, IBV_EVENT_QP_FATAL, [ibv](ibv_async_event& e) { e.element.qp = ibv; });
  std::deque<RecvWr> flushed;
  flushed.swap(qp.recvs);
  for (const RecvWr& wr : flushed) complete(ctx, recv_cq(qp), completion(qp, wr.wr_id, IBV_WC_WR_FLUSH_ERR, IBV_WC_RECV));
}

// The MR of `pd` that covers the SGE with its lkey, or null.
const Mr* covering_mr(const Context& ctx, const ibv_pd* pd, const ibv_sge& sge) {
  for (const auto& mr : ctx.mrs) {
    const ibv_mr& m = mr->handle.ibv;
    if (m.lkey != sge.lkey || m.pd != pd) continue;
    const auto begin = reinterpret_cast<std::uintptr_t>(m.addr);
    if (sge.addr >= begin && sge.addr - begin <= m.length && sge.length <= m.length - (sge.addr - begin)) return mr.get();
    return nullptr;
  }
  return nullptr;
}

bool sges_registered(const Context& ctx, const ibv_pd* pd, const ibv_sge* sges, int n) {
  for (int i = 0; i < n; ++i) {
    if (sges[i].length != 0 && covering_mr(ctx, pd, sges[i]) == nullptr) return false;
  }
  return true;
}

void put32(std::byte* at, std::uint32_t host) {
  const std::uint32_t net = htonl(host);
  std::memcpy(at, &net, 4);
}

std::uint32_t get32(const std::byte* at) {
  std::uint32_t net;
  std::memcpy(&net, at, 4);
  return ntohl(net);
}

// ---- device and context ----------------------------------------------------------------------------

ibv_device** get_device_list(int* num_devices) {
  auto* list = new (std::nothrow) ibv_device*[2];
  if (list == nullptr) {
    errno = ENOMEM;
    return nullptr;
  }
  list[0] = the_device();
  list[1] = nullptr;
  if (num_devices != nullptr) *num_devices = 1;
  return list;
}

void free_device_list(ibv_device** list) { delete[] list; }

const char* get_device_name(ibv_device* device) { return device == nullptr ? nullptr : device->name; }

int post_send(ibv_qp* qp, ibv_send_wr* wr, ibv_send_wr** bad_wr);
int post_recv(ibv_qp* qp, ibv_recv_wr* wr, ibv_recv_wr** bad_wr);
int poll_cq(ibv_cq* cq, int num_entries, ibv_wc* wc);

ibv_context* open_device(ibv_device* device) {
  if (device != the_device()) {
    errno = ENODEV;
    return nullptr;
  }
  auto ctx = std::make_unique<Context>();
  {
    std::lock_guard lock(config_mutex());
    ctx->config = default_config();
  }
  in_addr addr{};
  if (::inet_pton(AF_INET, ctx->config.address.c_str(), &addr) != 1 || ctx->config.mtu < IBV_MTU_256 ||
      ctx->config.mtu > IBV_MTU_4096) {
    errno = EINVAL;
    return nullptr;
  }
  ctx->ipv4 = addr.s_addr;
  ctx->gid.raw[10] = 0xff;
  ctx->gid.raw[11] = 0xff;
  std::memcpy(&ctx->gid.raw[12], &addr.s_addr, 4);
  ctx->port_up = !ctx->config.port_down;
  ctx->wire.resize(kHeaderBytes + kMaxMtuBytes);
  ibv_context& ibv = ctx->handle.ibv;
  ibv.device = device;
  ibv.cmd_fd = -1;
  ibv.async_fd = -1;
  ibv.num_comp_vectors = 1;
  // So that libibverbs' inline ibv_post_send/ibv_post_recv/ibv_poll_cq work on emulated objects too.
  ibv.ops.post_send = post_send;
  ibv.ops.post_recv = post_recv;
  ibv.ops.poll_cq = poll_cq;
  ctx->handle.state = ctx.get();
  return &ctx.release()->handle.ibv;
}

int close_device(ibv_context* context) {
  Context* ctx = context_of(context);
  if (ctx == nullptr) {
    errno = EINVAL;
    return -1;
  }
  delete ctx;  // owns whatever the caller did not destroy; QPs close their sockets
  return 0;
}

int query_device(ibv_context* context, ibv_device_attr* attr) {
  if (context_of(context) == nullptr || attr == nullptr) return EINVAL;
  *attr = ibv_device_attr{};
  std::strncpy(attr->fw_ver, "emulated", sizeof attr->fw_ver - 1);
  attr->node_guid = htobe64(0x02000000000000e0ULL);
  attr->sys_image_guid = attr->node_guid;
  attr->max_mr_size = ~std::uint64_t{0};
  attr->page_size_cap = 4096;
  attr->vendor_id = 0;
  attr->max_qp = kMaxQp;
  attr->max_qp_wr = kMaxQpWr;
  attr->max_sge = kMaxSge;
  attr->max_sge_rd = 0;
  attr->max_cq = 1024;
  attr->max_cqe = kMaxCqe;
  attr->max_mr = 65536;
  attr->max_pd = 1024;
  attr->max_ah = 65536;
  attr->max_pkeys = 1;
  attr->phys_port_cnt = 1;
  attr->atomic_cap = IBV_ATOMIC_NONE;
  return 0;
}

int query_port(ibv_context* context, std::uint8_t port, ibv_port_attr* attr) {
  Context* ctx = context_of(context);
  if (ctx == nullptr || port != kPort || attr == nullptr) return EINVAL;
  *attr = ibv_port_attr{};
  attr->state = ctx->port_up ? IBV_PORT_ACTIVE : IBV_PORT_DOWN;
  attr->phys_state = ctx->port_up ? 5 : 3;  // LinkUp, Disabled
  attr->max_mtu = ctx->config.mtu;
  attr->active_mtu = ctx->config.mtu;
  attr->gid_tbl_len = 1;
  attr->pkey_tbl_len = 1;
  attr->max_msg_sz = static_cast<std::uint32_t>(mtu_bytes(ctx->config.mtu));
  attr->lid = 0;
  attr->sm_lid = 0;
  attr->lmc = 0;
  attr->active_width = 2;   // 4x
  attr->active_speed = 32;  // EDR
  attr->link_layer = IBV_LINK_LAYER_ETHERNET;
  return 0;
}

int query_gid(ibv_context* context, std::uint8_t port, int index, ibv_gid* gid) {
  Context* ctx = context_of(context);
  if (ctx == nullptr || port != kPort || index != 0 || gid == nullptr) {
    errno = EINVAL;
    return -1;
  }
  *gid = ctx->gid;
  return 0;
}

// Its one GID is RoCE v2's (an IPv4-mapped address, as a RoCE v2 port's usual choice).
int query_gid_ex(ibv_context* context, std::uint32_t port, std::uint32_t index, ibv_gid_entry* entry,
                 std::uint32_t flags) {
  if (entry == nullptr || flags != 0) return EINVAL;
  ibv_gid gid{};
  if (query_gid(context, static_cast<std::uint8_t>(port), static_cast<int>(index), &gid) != 0) return ENODATA;
  *entry = {};
  entry->gid = gid;
  entry->gid_index = index;
  entry->port_num = port;
  entry->gid_type = IBV_GID_TYPE_ROCE_V2;
  return 0;
}

// ---- PD, MR --------------------------------------------------------------------------------------

ibv_pd* alloc_pd(ibv_context* context) {
  Context* ctx = context_of(context);
  if (ctx == nullptr) {
    errno = EINVAL;
    return nullptr;
  }
  auto pd = std::make_unique<Pd>();
  pd->handle.ibv.context = context;
  pd->handle.ibv.handle = ctx->next_handle++;
  pd->handle.state = pd.get();
  ctx->pds.push_back(std::move(pd));
  return &ctx->pds.back()->handle.ibv;
}

int dealloc_pd(ibv_pd* pd) {
  Context* ctx = context_of(pd->context);
  if (ctx == nullptr) return EINVAL;
  const bool used = std::ranges::any_of(ctx->mrs, [pd](auto& m) { return m->handle.ibv.pd == pd; }) ||
                    std::ranges::any_of(ctx->qps, [pd](auto& q) { return q->handle.ibv.pd == pd; }) ||
                    std::ranges::any_of(ctx->ahs, [pd](auto& a) { return a->handle.ibv.pd == pd; });
  if (used) return EBUSY;
  erase_owned(ctx->pds, state_of<Pd>(pd));
  return 0;
}

ibv_mr* reg_mr(ibv_pd* pd, void* addr, std::size_t length, int access) {
  Context* ctx = pd == nullptr ? nullptr : context_of(pd->context);
  if (ctx == nullptr || (addr == nullptr && length != 0)) {
    errno = EINVAL;
    return nullptr;
  }
  auto mr = std::make_unique<Mr>();
  ibv_mr& m = mr->handle.ibv;
  m.context = pd->context;
  m.pd = pd;
  m.addr = addr;
  m.length = length;
  m.handle = ctx->next_handle++;
  m.lkey = ctx->next_key++;
  m.rkey = (access & (IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE)) != 0 ? m.lkey : 0;
  mr->handle.state = mr.get();
  ctx->mrs.push_back(std::move(mr));
  return &ctx->mrs.back()->handle.ibv;
}

int dereg_mr(ibv_mr* mr) {
  Context* ctx = context_of(mr->context);
  if (ctx == nullptr) return EINVAL;
  erase_owned(ctx->mrs, state_of<Mr>(mr));
  return 0;
}

// ---- CQ ------------------------------------------------------------------------------------------

ibv_cq* create_cq(ibv_context* context, int cqe, void* cq_context, ibv_comp_channel* channel, int comp_vector) {
  Context* ctx = context_of(context);
  if (ctx == nullptr || cqe < 1 || cqe > kMaxCqe || comp_vector != 0) {
    errno = EINVAL;
    return nullptr;
  }
  if (channel != nullptr) {  // completion events need a channel fd: not emulated
    errno = EOPNOTSUPP;
    return nullptr;
  }
  auto cq = std::make_unique<Cq>();
  ibv_cq& c = cq->handle.ibv;
  c.context = context;
  c.cq_context = cq_context;
  c.handle = ctx->next_handle++;
  c.cqe = cqe;
  cq->handle.state = cq.get();
  ctx->cqs.push_back(std::move(cq));
  return &ctx->cqs.back()->handle.ibv;
}

int destroy_cq(ibv_cq* cq) {
  Context* ctx = context_of(cq->context);
  if (ctx == nullptr) return EINVAL;
  if (std::ranges::any_of(ctx->qps, [cq](auto& q) { return q->handle.ibv.send_cq == cq || q->handle.ibv.recv_cq == cq; }))
    return EBUSY;
  std::erase_if(ctx->events, [cq](const ibv_async_event& e) { return e.event_type == IBV_EVENT_CQ_ERR && e.element.cq == cq; });
  erase_owned(ctx->cqs, state_of<Cq>(cq));
  return 0;
}

// ---- QP ------------------------------------------------------------------------------------------

ibv_qp* create_qp(ibv_pd* pd, ibv_qp_init_attr* attr) {
  Context* ctx = pd == nullptr ? nullptr : context_of(pd->context);
  if (ctx == nullptr || attr == nullptr) {
    errno = EINVAL;
    return nullptr;
  }
  if (attr->qp_type != IBV_QPT_UD || attr->srq != nullptr) {
    errno = EOPNOTSUPP;
    return nullptr;
  }
  const ibv_qp_cap& cap = attr->cap;
  if (attr->send_cq == nullptr || attr->recv_cq == nullptr || attr->send_cq->context != pd->context ||
      attr->recv_cq->context != pd->context || cap.max_send_wr < 1 || cap.max_recv_wr < 1 ||
      cap.max_send_wr > kMaxQpWr || cap.max_recv_wr > kMaxQpWr || cap.max_send_sge > kMaxSge ||
      cap.max_recv_sge > kMaxSge || cap.max_inline_data > kMaxInline) {
    errno = EINVAL;
    return nullptr;
  }
  if (static_cast<int>(ctx->qps.size()) >= kMaxQp) {
    errno = ENOMEM;
    return nullptr;
  }
  auto qp = std::make_unique<Qp>();
  qp->fd = ::socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (qp->fd < 0) return nullptr;
  // Large enough that a receiver draining between bursts loses nothing (capped by net.core.rmem_max).
  (void)::setsockopt(qp->fd, SOL_SOCKET, SO_RCVBUF, &kSocketBuffer, sizeof kSocketBuffer);
  sockaddr_in local{};
  local.sin_family = AF_INET;
  local.sin_addr.s_addr = ctx->ipv4;
  socklen_t len = sizeof local;
  if (::bind(qp->fd, reinterpret_cast<sockaddr*>(&local), sizeof local) != 0 ||
      ::getsockname(qp->fd, reinterpret_cast<sockaddr*>(&local), &len) != 0)
    return nullptr;  // errno from bind/getsockname; ~Qp closes the socket
  qp->cap = cap;
  qp->sq_sig_all = attr->sq_sig_all != 0;
  ibv_qp& q = qp->handle.ibv;
  q.context = pd->context;
  q.qp_context = attr->qp_context;
  q.pd = pd;
  q.send_cq = attr->send_cq;
  q.recv_cq = attr->recv_cq;
  q.handle = ctx->next_handle++;
  q.qp_num = ntohs(local.sin_port);
  q.state = IBV_QPS_RESET;
  q.qp_type = IBV_QPT_UD;
  qp->handle.state = qp.get();
  ctx->qps.push_back(std::move(qp));
  return &ctx->qps.back()->handle.ibv;
}

// The UD transitions of ibv_modify_qp(3): the attributes each requires and those it may change.
int modify_qp(ibv_qp* qp, ibv_qp_attr* attr, int attr_mask) {
  const std::lock_guard device_lock(device_mutex());
  Context* ctx = context_of(qp->context);
  if (ctx == nullptr || attr == nullptr) return EINVAL;
  Qp& q = *state_of<Qp>(qp);
  const ibv_qp_state from = qp->state;
  const ibv_qp_state to = (attr_mask & IBV_QP_STATE) != 0 ? attr->qp_state : from;
  int required = 0;
  int optional = IBV_QP_CUR_STATE;
  if (to == IBV_QPS_RESET || to == IBV_QPS_ERR) {
    // from any state
  } else if (from == IBV_QPS_RESET && to == IBV_QPS_INIT) {
    required = IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY;
  } else if (from == IBV_QPS_INIT && to == IBV_QPS_INIT) {
    optional |= IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY;
  } else if (from == IBV_QPS_INIT && to == IBV_QPS_RTR) {
    optional |= IBV_QP_PKEY_INDEX | IBV_QP_QKEY;
  } else if (from == IBV_QPS_RTR && to == IBV_QPS_RTS) {
    required = IBV_QP_SQ_PSN;
    optional |= IBV_QP_QKEY;
  } else if (from == IBV_QPS_RTS && to == IBV_QPS_RTS) {
    optional |= IBV_QP_QKEY;
  } else {
    return EINVAL;
  }
  const int given = attr_mask & ~IBV_QP_STATE;
  if ((given & required) != required || (given & ~(required | optional)) != 0) return EINVAL;
  if ((given & IBV_QP_PORT) != 0 && attr->port_num != kPort) return EINVAL;
  if ((given & IBV_QP_PKEY_INDEX) != 0 && attr->pkey_index != 0) return EINVAL;
  if ((given & IBV_QP_QKEY) != 0) q.qkey = attr->qkey;
  if (to == IBV_QPS_ERR) {
    move_to_error(*ctx, q);
  } else if (to == IBV_QPS_RESET) {
    q.recvs.clear();  // RESET discards posted work without completions
    qp->state = to;
  } else {
    qp->state = to;
  }
  return 0;
}

int destroy_qp(ibv_qp* qp) {
  Context* ctx = context_of(qp->context);
  if (ctx == nullptr) return EINVAL;
  std::erase_if(ctx->events, [qp](const ibv_async_event& e) { return e.event_type == IBV_EVENT_QP_FATAL && e.element.qp == qp; });
  erase_owned(ctx->qps, state_of<Qp>(qp));
  return 0;
}

// ---- AH ------------------------------------------------------------------------------------------

ibv_ah* create_ah(ibv_pd* pd, ibv_ah_attr* attr) {
  const std::lock_guard device_lock(device_mutex());
  Context* ctx = pd == nullptr ? nullptr : context_of(pd->context);
  if (ctx == nullptr || attr == nullptr || attr->is_global != 1 || attr->port_num != kPort) {
    errno = EINVAL;
    return nullptr;
  }
  if (!ipv4_mapped(attr->grh.dgid)) {
    errno = EINVAL;
    return nullptr;
  }
  auto ah = std::make_unique<Ah>();
  ah->handle.ibv.context = pd->context;
  ah->handle.ibv.pd = pd;
  ah->handle.ibv.handle = ctx->next_handle++;
  std::memcpy(&ah->ipv4, attr->grh.dgid.raw + 12, 4);
  ah->handle.state = ah.get();
  ctx->ahs.push_back(std::move(ah));
  return &ctx->ahs.back()->handle.ibv;
}

int destroy_ah(ibv_ah* ah) {
  Context* ctx = context_of(ah->context);
  if (ctx == nullptr) return EINVAL;
  erase_owned(ctx->ahs, state_of<Ah>(ah));
  return 0;
}

// ---- data path -----------------------------------------------------------------------------------

// One send WR that post_send accepted: completes it (always when in error, else when signaled).
void execute_send(Context& ctx, Qp& qp, const ibv_send_wr& wr) {
  const bool signaled = qp.sq_sig_all || (wr.send_flags & IBV_SEND_SIGNALED) != 0;
  auto finish = [&](ibv_wc_status status, std::uint32_t vendor_err = 0) {
    if (status == IBV_WC_SUCCESS && !signaled) return;
    ibv_wc wc = completion(qp, wr.wr_id, status, IBV_WC_SEND);
    wc.vendor_err = vendor_err;
    complete(ctx, send_cq(qp), wc);
  };
  if (qp.handle.ibv.state == IBV_QPS_ERR) return finish(IBV_WC_WR_FLUSH_ERR);
  const bool inline_data = (wr.send_flags & IBV_SEND_INLINE) != 0;
  if (!inline_data && !sges_registered(ctx, qp.handle.ibv.pd, wr.sg_list, wr.num_sge))
    return finish(IBV_WC_LOC_PROT_ERR);
  std::size_t length = 0;
  for (int i = 0; i < wr.num_sge; ++i) length += wr.sg_list[i].length;
  if (length > mtu_bytes(ctx.config.mtu)) return finish(IBV_WC_LOC_LEN_ERR);
  if (!ctx.port_up) return finish(IBV_WC_GENERAL_ERR, kVendorErrPortDown);
  const std::uint64_t n = ++ctx.sends;
  if (ctx.config.fail_sends_after != 0 && n > ctx.config.fail_sends_after)
    return finish(IBV_WC_GENERAL_ERR, kVendorErrForced);

  std::byte* out = ctx.wire.data();
  // A Q_Key with its high bit set means "use the QP's own" (InfiniBand's controlled Q_Keys).
  const std::uint32_t qkey = (wr.wr.ud.remote_qkey & 0x80000000U) != 0 ? qp.qkey : wr.wr.ud.remote_qkey;
  const bool imm = wr.opcode == IBV_WR_SEND_WITH_IMM;
  put32(out, kMagic);
  put32(out + 4, qp.handle.ibv.qp_num);
  std::memcpy(out + 8, ctx.gid.raw, 16);
  put32(out + 24, qkey);
  put32(out + 28, imm ? kFlagImm : 0);
  std::memcpy(out + 32, &wr.imm_data, 4);  // stays in network order, as the WR gives it
  std::size_t at = kHeaderBytes;
  for (int i = 0; i < wr.num_sge; ++i) {
    const ibv_sge& sge = wr.sg_list[i];
    if (sge.length != 0) std::memcpy(out + at, reinterpret_cast<const void*>(sge.addr), sge.length);
    at += sge.length;
  }
  sockaddr_in to{};
  to.sin_family = AF_INET;
  to.sin_addr.s_addr = state_of<Ah>(wr.wr.ud.ah)->ipv4;
  to.sin_port = htons(static_cast<std::uint16_t>(wr.wr.ud.remote_qpn));
  const bool addressable = wr.wr.ud.remote_qpn != 0 && wr.wr.ud.remote_qpn <= 0xffff;
  // A refused datagram (full buffer, unreachable peer) is lost as on the wire: the WR still succeeds.
  if (addressable &&
      ::sendto(qp.fd, out, at, 0, reinterpret_cast<const sockaddr*>(&to), sizeof to) == static_cast<ssize_t>(at))
    ++ctx.stats.datagrams_sent;
  else
    ++ctx.stats.send_drops;
  if (ctx.config.port_down_after_sends != 0 && n == ctx.config.port_down_after_sends) set_port(ctx, false);
  finish(IBV_WC_SUCCESS);
}

int post_send(ibv_qp* qp, ibv_send_wr* wr, ibv_send_wr** bad_wr) {
  const std::lock_guard device_lock(device_mutex());
  Context* ctx = context_of(qp->context);
  if (ctx == nullptr) {
    *bad_wr = wr;
    return EINVAL;
  }
  Qp& q = *state_of<Qp>(qp);
  for (; wr != nullptr; wr = wr->next) {
    const bool state_ok = qp->state == IBV_QPS_RTS || qp->state == IBV_QPS_ERR;
    const bool opcode_ok = wr->opcode == IBV_WR_SEND || wr->opcode == IBV_WR_SEND_WITH_IMM;
    std::size_t length = 0;
    for (int i = 0; i < wr->num_sge && wr->sg_list != nullptr; ++i) length += wr->sg_list[i].length;
    const bool shape_ok = wr->num_sge >= 0 && static_cast<std::uint32_t>(wr->num_sge) <= q.cap.max_send_sge &&
                          (wr->num_sge == 0 || wr->sg_list != nullptr) && wr->wr.ud.ah != nullptr &&
                          wr->wr.ud.ah->context == qp->context &&
                          ((wr->send_flags & IBV_SEND_INLINE) == 0 || length <= q.cap.max_inline_data);
    if (!state_ok || !opcode_ok || !shape_ok) {
      *bad_wr = wr;
      return EINVAL;
    }
    execute_send(*ctx, q, *wr);
  }
  return 0;
}

int post_recv(ibv_qp* qp, ibv_recv_wr* wr, ibv_recv_wr** bad_wr) {
  const std::lock_guard device_lock(device_mutex());
  Context* ctx = context_of(qp->context);
  if (ctx == nullptr) {
    *bad_wr = wr;
    return EINVAL;
  }
  Qp& q = *state_of<Qp>(qp);
  for (; wr != nullptr; wr = wr->next) {
    if (qp->state == IBV_QPS_RESET || wr->num_sge < 0 || static_cast<std::uint32_t>(wr->num_sge) > q.cap.max_recv_sge ||
        (wr->num_sge > 0 && wr->sg_list == nullptr)) {
      *bad_wr = wr;
      return EINVAL;
    }
    if (qp->state == IBV_QPS_ERR) {
      complete(*ctx, recv_cq(q), completion(q, wr->wr_id, IBV_WC_WR_FLUSH_ERR, IBV_WC_RECV));
      continue;
    }
    if (q.recvs.size() >= q.cap.max_recv_wr) {
      *bad_wr = wr;
      return ENOMEM;
    }
    q.recvs.push_back(RecvWr{wr->wr_id, std::vector<ibv_sge>(wr->sg_list, wr->sg_list + wr->num_sge)});
  }
  return 0;
}

// Copies `bytes` into the WR's SGEs from byte `offset` of the receive stream (GRH, then payload).
void scatter(const RecvWr& wr, std::size_t offset, const std::byte* bytes, std::size_t count) {
  std::size_t start = 0;  // stream offset of the current SGE
  for (const ibv_sge& sge : wr.sges) {
    const std::size_t end = start + sge.length;
    if (count == 0) return;
    if (offset < end) {
      const std::size_t n = std::min(count, end - offset);
      std::memcpy(reinterpret_cast<std::byte*>(sge.addr) + (offset - start), bytes, n);
      offset += n;
      bytes += n;
      count -= n;
    }
    start = end;
  }
}

// One arrived datagram of `size` bytes in ctx.wire, for `qp`.
void deliver(Context& ctx, Qp& qp, std::size_t size) {
  const std::byte* in = ctx.wire.data();
  if (size < kHeaderBytes || get32(in) != kMagic) {
    ++ctx.stats.dropped_malformed;
    return;
  }
  const std::size_t payload = size - kHeaderBytes;
  if (!ctx.port_up) {
    ++ctx.stats.dropped_port_down;
    return;
  }
  if (qp.handle.ibv.state != IBV_QPS_RTR && qp.handle.ibv.state != IBV_QPS_RTS) {
    ++ctx.stats.dropped_qp_state;
    return;
  }
  if (payload > mtu_bytes(ctx.config.mtu)) {
    ++ctx.stats.dropped_oversize;
    return;
  }
  if (get32(in + 24) != qp.qkey) {
    ++ctx.stats.dropped_qkey;
    return;
  }
  if (qp.recvs.empty()) {
    ++ctx.stats.dropped_no_recv;
    return;
  }
  const RecvWr wr = std::move(qp.recvs.front());
  qp.recvs.pop_front();
  std::size_t room = 0;
  for (const ibv_sge& sge : wr.sges) room += sge.length;
  if (!sges_registered(ctx, qp.handle.ibv.pd, wr.sges.data(), static_cast<int>(wr.sges.size())))
    return complete(ctx, recv_cq(qp), completion(qp, wr.wr_id, IBV_WC_LOC_PROT_ERR, IBV_WC_RECV));
  if (room < kGrhBytes + payload)
    return complete(ctx, recv_cq(qp), completion(qp, wr.wr_id, IBV_WC_LOC_LEN_ERR, IBV_WC_RECV));

  ibv_grh grh{};
  grh.version_tclass_flow = htonl(6U << 28);
  grh.paylen = htons(static_cast<std::uint16_t>(payload));
  grh.next_hdr = 0x1b;  // IBA transport
  grh.hop_limit = 64;
  std::memcpy(grh.sgid.raw, in + 8, 16);
  grh.dgid = ctx.gid;
  scatter(wr, 0, reinterpret_cast<const std::byte*>(&grh), kGrhBytes);
  scatter(wr, kGrhBytes, in + kHeaderBytes, payload);

  ibv_wc wc = completion(qp, wr.wr_id, IBV_WC_SUCCESS, IBV_WC_RECV);
  wc.byte_len = static_cast<std::uint32_t>(kGrhBytes + payload);
  wc.src_qp = get32(in + 4);
  wc.wc_flags = IBV_WC_GRH;
  if ((get32(in + 28) & kFlagImm) != 0) {
    wc.wc_flags |= IBV_WC_WITH_IMM;
    std::memcpy(&wc.imm_data, in + 32, 4);
  }
  ++ctx.stats.datagrams_received;
  complete(ctx, recv_cq(qp), wc);
}

int poll_cq(ibv_cq* cq, int num_entries, ibv_wc* wc) {
  const std::lock_guard device_lock(device_mutex());
  Context* ctx = context_of(cq->context);
  if (ctx == nullptr || num_entries < 0) return -1;
  Cq& c = *state_of<Cq>(cq);
  for (auto& qp : ctx->qps) {
    if (qp->handle.ibv.recv_cq != cq) continue;
    for (int i = 0; i < kDrainPerPoll; ++i) {
      // MSG_TRUNC: the datagram's real size, so that one over the largest MTU counts as oversize.
      const ssize_t got = ::recv(qp->fd, ctx->wire.data(), ctx->wire.size(), MSG_TRUNC);
      if (got < 0) break;  // EAGAIN: drained
      if (static_cast<std::size_t>(got) > ctx->wire.size()) {
        ++ctx->stats.dropped_oversize;
        continue;
      }
      deliver(*ctx, *qp, static_cast<std::size_t>(got));
    }
  }
  int n = 0;
  for (; n < num_entries && !c.entries.empty(); ++n) {
    wc[n] = c.entries.front();
    c.entries.pop_front();
  }
  return n;
}

int get_async_event(ibv_context* context, ibv_async_event* event) {
  const std::lock_guard device_lock(device_mutex());
  Context* ctx = context_of(context);
  if (ctx == nullptr || event == nullptr) {
    errno = EINVAL;
    return -1;
  }
  if (ctx->events.empty()) {
    errno = EAGAIN;
    return -1;
  }
  *event = ctx->events.front();
  ctx->events.pop_front();
  return 0;
}

void ack_async_event(ibv_async_event*) {}

constexpr VerbsApi kEmulated{
    "emulated",     get_device_list, free_device_list, get_device_name, open_device,
    close_device,   query_device,    query_port,       query_gid,       query_gid_ex,
    alloc_pd,
    dealloc_pd,     reg_mr,          dereg_mr,         create_cq,       destroy_cq,
    create_qp,      modify_qp,       destroy_qp,       create_ah,       destroy_ah,
    post_send,      post_recv,       poll_cq,          get_async_event, ack_async_event,
};

}  // namespace

const VerbsApi& emulated_verbs() noexcept { return kEmulated; }

void configure_emulated_verbs(const EmulatedConfig& config) {
  std::lock_guard lock(config_mutex());
  default_config() = config;
}

bool set_emulated_port_state(ibv_context* context, bool up) {
  Context* ctx = context_of(context);
  if (ctx == nullptr) return false;
  set_port(*ctx, up);
  return true;
}

EmulatedStats emulated_stats(ibv_context* context) {
  Context* ctx = context_of(context);
  return ctx == nullptr ? EmulatedStats{} : ctx->stats;
}

}  // namespace ftmpi::path::verbs

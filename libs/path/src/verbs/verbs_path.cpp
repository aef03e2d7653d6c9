// The verbs UD path (verbs_path.hpp).
//
// Memory: two slabs registered once, never per message: recv_buffers x (40 + max_frame) and
// send_buffers x max_frame. Each frame is written (header and payload, checksummed in the same pass, by
// the engine's FrameWriter) straight into a registered send buffer, so a frame costs one copy, as on the
// other paths. A send buffer is free again when its send completes (every send is signalled: the
// completion is what frees it); with none free, frames wait in order in the path (has_queued_frames)
// and go out from later sends and polls.
//
// Receiving: one receive QP takes every peer's datagrams into the pool; each arrives behind the 40-byte
// GRH. A datagram that finds no receive posted is dropped by the device, as UD does: the engine's
// retransmission repairs it. Consumed buffers are posted again as one chain once 16 (or half the pool)
// are waiting, so a busy receiver makes one post call per 16 frames.
//
// Failures: a send that the device refuses, a completion in error, a QP or CQ that the device reports
// fatal (async events) make the rail broken: every later send returns rail_down and the engine fails
// over to its other rails. A port that goes down does the same until the device says it is active again
// (IBV_EVENT_PORT_ACTIVE), so the engine's probes find the rail again (failback).
//
// Frames are cut to the port's MTU less the GRH's 40 bytes (docs/architecture.md, "Paths"): a peer
// whose port has a smaller MTU publishes its smaller max_frame, and max_frame_to() honours it.
#include "verbs_path.hpp"

#include <arpa/inet.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <iterator>

#include "ftmpi/base/log.hpp"
#include "emulated_device.hpp"
#include "ftmpi/path/params.hpp"
#include "ftmpi/path/udp.hpp"

namespace ftmpi::path::verbs {
namespace {

using base::Errc;
using base::Status;

constexpr std::size_t kRepostBatch = 16;
constexpr std::size_t kPollBatch = 32;
constexpr std::uint32_t kEventCheckPolls = 64;  // async events are looked for every so many polls

// A frame into `room` (exactly its size): from its bytes when they exist whole, else written there.
void write_frame(FrameWriter& frame, std::span<std::byte> room) noexcept {
  const auto whole = frame.bytes();
  if (!whole.empty()) {
    std::memcpy(room.data(), whole.data(), room.size());
  } else {
    frame.write(room);
  }
}

std::string errno_text(int err) { return std::string(std::strerror(err)); }

std::string gid_hex(const ibv_gid& gid) {
  std::string out;
  char two[3];
  for (std::uint8_t byte : gid.raw) {
    std::snprintf(two, sizeof two, "%02x", byte);
    out += two;
  }
  return out;
}

template <typename T>
bool parse_number(std::string_view text, T& out, int base = 10) {
  if (text.empty()) return false;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out, base);
  return ec == std::errc() && end == text.data() + text.size();
}

}  // namespace

VerbsOptions VerbsOptions::from_params(const base::ParamSet& params) {
  VerbsOptions o;
  o.device = params.get_string(kVerbsDevice);
  o.port = static_cast<std::uint8_t>(std::clamp<std::int64_t>(params.get_integer(kVerbsPort), 0, 255));
  // An address handle names its source GID in 8 bits.
  o.gid_index = static_cast<int>(std::clamp<std::int64_t>(params.get_integer(kVerbsGidIndex), -1, 255));
  o.recv_buffers = static_cast<std::size_t>(std::clamp<std::int64_t>(params.get_integer(kVerbsRecvBuffers), 2, 1 << 20));
  o.send_buffers = static_cast<std::size_t>(std::clamp<std::int64_t>(params.get_integer(kVerbsSendBuffers), 1, 1 << 20));
  o.send_qps = static_cast<std::size_t>(std::clamp<std::int64_t>(params.get_integer(kVerbsSendQps), 1, 64));
  return o;
}

std::string VerbsAddress::to_string() const {
  char tail[64];
  std::snprintf(tail, sizeof tail, ":%u:%u:%x:%zu:%zu", static_cast<unsigned>(lid), static_cast<unsigned>(qpn),
                static_cast<unsigned>(qkey), max_frame, recv_buffers);
  return gid_hex(gid) + tail;
}

base::Result<VerbsAddress> VerbsAddress::parse(std::string_view text) {
  const auto refuse = [&](std::string_view why) {
    return Status(Errc::invalid_argument, "verbs address '" + std::string(text) + "': " + std::string(why));
  };
  std::vector<std::string_view> parts;
  std::size_t start = 0;
  while (start <= text.size() && parts.size() < 7) {
    const std::size_t end = std::min(text.find(':', start), text.size());
    parts.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  if (parts.size() != 6) return refuse("not gid:lid:qpn:qkey:max_frame:recv_buffers");
  VerbsAddress a;
  if (parts[0].size() != 32) return refuse("the gid is not 32 hex digits");
  for (std::size_t i = 0; i < 16; ++i) {
    if (!parse_number(parts[0].substr(2 * i, 2), a.gid.raw[i], 16)) return refuse("the gid is not hex");
  }
  std::uint32_t lid = 0;
  if (!parse_number(parts[1], lid) || lid > 0xffff) return refuse("bad lid");
  a.lid = static_cast<std::uint16_t>(lid);
  if (!parse_number(parts[2], a.qpn) || a.qpn == 0 || a.qpn > 0xffffff) return refuse("bad qpn");
  if (!parse_number(parts[3], a.qkey, 16)) return refuse("bad qkey");
  if (!parse_number(parts[4], a.max_frame) || a.max_frame < 256 || a.max_frame > 4096) return refuse("bad max_frame");
  if (!parse_number(parts[5], a.recv_buffers) || a.recv_buffers == 0 || a.recv_buffers > (1U << 20)) {
    return refuse("bad recv_buffers");
  }
  return a;
}

base::Result<std::unique_ptr<VerbsPath>> VerbsPath::open(const VerbsApi& api, const VerbsOptions& options) {
  std::unique_ptr<VerbsPath> path(new VerbsPath(api));
  if (auto s = path->setup(options); !s) return s;
  return path;
}

base::Status VerbsPath::setup(const VerbsOptions& options) {
  int count = 0;
  ibv_device** list = api_.get_device_list(&count);
  if (list == nullptr || count == 0) {
    if (list != nullptr) api_.free_device_list(list);
    return Status(Errc::not_found, std::string("no verbs device (") + api_.name +
                                       " lists none; ibv_devices shows them; path.verbs.device=emulated "
                                       "is the test device)");
  }
  // The device named, or the first whose port (the one named, or any) is active.
  std::string tried;
  ibv_port_attr port_attr{};
  for (int d = 0; d < count && context_ == nullptr; ++d) {
    const std::string name = api_.get_device_name(list[d]);
    if (!options.device.empty() && options.device != "emulated" && options.device != name) continue;
    ibv_context* context = api_.open_device(list[d]);
    if (context == nullptr) {
      tried += (tried.empty() ? "" : "; ") + name + ": cannot open (" + errno_text(errno) + ")";
      continue;
    }
    ibv_device_attr device{};
    const int ports = api_.query_device(context, &device) == 0 ? device.phys_port_cnt : 1;
    for (int p = options.port != 0 ? options.port : 1; p <= (options.port != 0 ? options.port : ports); ++p) {
      ibv_port_attr attr{};
      if (api_.query_port(context, static_cast<std::uint8_t>(p), &attr) != 0) {
        tried += (tried.empty() ? "" : "; ") + name + " port " + std::to_string(p) + ": cannot query";
        continue;
      }
      if (attr.state != IBV_PORT_ACTIVE) {
        tried += (tried.empty() ? "" : "; ") + name + " port " + std::to_string(p) + " is not active (" +
                 ibv_port_state_str(attr.state) + ")";
        continue;
      }
      context_ = context;
      port_ = static_cast<std::uint8_t>(p);
      port_attr = attr;
      local_.lid = attr.lid;
      const std::size_t mtu = mtu_bytes(attr.active_mtu);
      if (mtu <= kGrhSize + 256) {
        context_ = nullptr;
        tried += (tried.empty() ? "" : "; ") + name + ": MTU " + std::to_string(mtu) + " too small";
        continue;
      }
      local_.max_frame = mtu - kGrhSize;
      info_.name = "verbs " + name + ":" + std::to_string(p);
      info_.rail = name + ":" + std::to_string(p);
      break;
    }
    if (context_ == nullptr) api_.close_device(context);
  }
  api_.free_device_list(list);
  if (context_ == nullptr) {
    if (tried.empty()) tried = "no device named '" + options.device + "'";
    return Status(Errc::rail_down, "no usable verbs port: " + tried);
  }
  gid_index_ = options.gid_index >= 0 ? options.gid_index : choose_gid_index(port_attr);
  if (api_.query_gid(context_, port_, gid_index_, &local_.gid) != 0) {
    return Status(Errc::invalid_argument, info_.name + ": no GID at index " + std::to_string(gid_index_) +
                                              " (path.verbs.gid_index)");
  }
  local_.qkey = options.qkey & 0x7fffffffU;  // the top bit asks for a privileged (controlled) QKey
  // The emulated device's rails differ only by address (its GID): name them by it, as UDP's are.
  if (&api_ == &emulated_verbs()) {
    const std::string ipv4 = format_ipv4(ipv4_of(local_.gid));
    info_.name += " " + ipv4;
    info_.rail = ipv4;
  }
  info_.kind = PathKind::verbs_ud;
  info_.max_frame = local_.max_frame;
  info_.reliable = false;
  info_.bandwidth_hint = 10e9;
  peers_.resize(options.peers);

  pd_ = api_.alloc_pd(context_);
  if (pd_ == nullptr) return Status(Errc::io_error, info_.name + ": cannot allocate a protection domain");
  recv_count_ = options.recv_buffers;
  local_.recv_buffers = recv_count_;
  const std::size_t sends = options.send_buffers;
  // Every send is signalled; the receive QP's own send queue is never used but must exist.
  send_cq_ = api_.create_cq(context_, static_cast<int>(sends + 1), nullptr, nullptr, 0);
  recv_cq_ = api_.create_cq(context_, static_cast<int>(recv_count_), nullptr, nullptr, 0);
  if (send_cq_ == nullptr || recv_cq_ == nullptr) {
    return Status(Errc::io_error, info_.name + ": cannot create completion queues (" + errno_text(errno) + ")");
  }
  ibv_qp_init_attr init{};
  init.qp_type = IBV_QPT_UD;
  init.send_cq = send_cq_;
  init.recv_cq = recv_cq_;
  init.cap.max_send_wr = 1;
  init.cap.max_recv_wr = static_cast<std::uint32_t>(recv_count_);
  init.cap.max_send_sge = 1;
  init.cap.max_recv_sge = 1;
  recv_qp_ = api_.create_qp(pd_, &init);
  if (recv_qp_ == nullptr) return Status(Errc::io_error, info_.name + ": cannot create the receive QP (" + errno_text(errno) + ")");
  if (auto s = bring_up(recv_qp_); !s) return s;
  local_.qpn = recv_qp_->qp_num;
  for (std::size_t q = 0; q < options.send_qps; ++q) {
    ibv_qp_init_attr send_init{};
    send_init.qp_type = IBV_QPT_UD;
    send_init.send_cq = send_cq_;
    send_init.recv_cq = recv_cq_;  // never receives: its receive queue stays empty
    send_init.cap.max_send_wr = static_cast<std::uint32_t>(sends);
    send_init.cap.max_recv_wr = 1;
    send_init.cap.max_send_sge = 1;
    send_init.cap.max_recv_sge = 1;
    ibv_qp* qp = api_.create_qp(pd_, &send_init);
    if (qp == nullptr) return Status(Errc::io_error, info_.name + ": cannot create a send QP (" + errno_text(errno) + ")");
    send_qps_.push_back(qp);
    if (auto s = bring_up(qp); !s) return s;
  }

  frame_room_ = local_.max_frame;
  send_slab_ = std::make_unique_for_overwrite<std::byte[]>(sends * frame_room_);
  recv_slab_ = std::make_unique_for_overwrite<std::byte[]>(recv_count_ * (kGrhSize + frame_room_));
  send_mr_ = api_.reg_mr(pd_, send_slab_.get(), sends * frame_room_, IBV_ACCESS_LOCAL_WRITE);
  recv_mr_ = api_.reg_mr(pd_, recv_slab_.get(), recv_count_ * (kGrhSize + frame_room_), IBV_ACCESS_LOCAL_WRITE);
  if (send_mr_ == nullptr || recv_mr_ == nullptr) {
    return Status(Errc::io_error, info_.name + ": cannot register buffers (" + errno_text(errno) +
                                      "; see ulimit -l, the locked-memory limit)");
  }
  free_send_.reserve(sends);
  for (std::size_t b = sends; b > 0; --b) free_send_.push_back(static_cast<std::uint32_t>(b - 1));
  to_repost_.reserve(recv_count_);
  for (std::size_t b = 0; b < recv_count_; ++b) to_repost_.push_back(static_cast<std::uint32_t>(b));
  repost_receives();
  if (!to_repost_.empty()) return Status(Errc::io_error, info_.name + ": cannot post the receive buffers");
  return {};
}

// InfiniBand: GID 0. Ethernet (RoCE): a port lists each address twice, as RoCE v1 (not routable) and
// v2 (UDP/IP, routable, the one fabrics tune), plus a link-local one, in an order that differs between
// hosts; so the first RoCE v2 entry holding an IPv4 address, else the first RoCE v2 one, else 0.
int VerbsPath::choose_gid_index(const ibv_port_attr& port) const {
  if (port.link_layer != IBV_LINK_LAYER_ETHERNET) return 0;
  int any_v2 = -1;
  const int entries = std::min(port.gid_tbl_len, 256);
  for (int i = 0; i < entries; ++i) {
    ibv_gid_entry entry{};
    if (api_.query_gid_ex(context_, port_, static_cast<std::uint32_t>(i), &entry, 0) != 0) continue;
    if (entry.gid_type != IBV_GID_TYPE_ROCE_V2) continue;
    const auto& raw = entry.gid.raw;
    if (std::all_of(std::begin(raw), std::end(raw), [](std::uint8_t b) { return b == 0; })) continue;
    if (ipv4_mapped(entry.gid)) return i;
    if (any_v2 < 0) any_v2 = i;
  }
  return any_v2 >= 0 ? any_v2 : 0;
}

// RESET -> INIT -> RTR -> RTS, as every UD QP.
base::Status VerbsPath::bring_up(ibv_qp* qp) {
  ibv_qp_attr attr{};
  attr.qp_state = IBV_QPS_INIT;
  attr.pkey_index = 0;
  attr.port_num = port_;
  attr.qkey = local_.qkey;
  if (api_.modify_qp(qp, &attr, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY) != 0) {
    return Status(Errc::io_error, info_.name + ": QP to INIT failed");
  }
  attr = {};
  attr.qp_state = IBV_QPS_RTR;
  if (api_.modify_qp(qp, &attr, IBV_QP_STATE) != 0) return Status(Errc::io_error, info_.name + ": QP to RTR failed");
  attr = {};
  attr.qp_state = IBV_QPS_RTS;
  attr.sq_psn = 0;
  if (api_.modify_qp(qp, &attr, IBV_QP_STATE | IBV_QP_SQ_PSN) != 0) {
    return Status(Errc::io_error, info_.name + ": QP to RTS failed");
  }
  return {};
}

VerbsPath::~VerbsPath() {
  // QPs first: work still queued on them may name an address handle.
  for (ibv_qp* qp : send_qps_) api_.destroy_qp(qp);
  if (recv_qp_ != nullptr) api_.destroy_qp(recv_qp_);
  for (Peer& p : peers_) {
    if (p.ah != nullptr) api_.destroy_ah(p.ah);
  }
  if (send_mr_ != nullptr) api_.dereg_mr(send_mr_);
  if (recv_mr_ != nullptr) api_.dereg_mr(recv_mr_);
  if (send_cq_ != nullptr) api_.destroy_cq(send_cq_);
  if (recv_cq_ != nullptr) api_.destroy_cq(recv_cq_);
  if (pd_ != nullptr) api_.dealloc_pd(pd_);
  if (context_ != nullptr) api_.close_device(context_);
}

base::Status VerbsPath::add_peer(Rank peer, std::string_view address) {
  if (peer >= peers_.size()) {
    return Status(Errc::invalid_argument, "rank " + std::to_string(peer) + " is not in the job");
  }
  auto parsed = VerbsAddress::parse(address);
  if (!parsed) return parsed.status();
  if (parsed->qkey != local_.qkey) {
    return Status(Errc::invalid_argument, "rank " + std::to_string(peer) + "'s verbs address has QKey " +
                                              std::to_string(parsed->qkey) + ", not the job's");
  }
  if (peers_[peer].ah != nullptr) api_.destroy_ah(peers_[peer].ah);  // a peer given again
  peers_[peer] = {true, *parsed, nullptr};
  return {};
}

bool VerbsPath::reaches(Rank peer) const noexcept { return peer < peers_.size() && peers_[peer].known; }

std::size_t VerbsPath::max_frame_to(Rank peer) const noexcept {
  if (!reaches(peer)) return info_.max_frame;
  return std::min(info_.max_frame, peers_[peer].address.max_frame);
}

std::size_t VerbsPath::frames_in_flight_limit(Rank peer) const noexcept {
  if (!reaches(peer)) return SIZE_MAX;
  return std::max<std::size_t>(1, peers_[peer].address.recv_buffers / std::max<std::size_t>(1, peers_.size()));
}

base::Status VerbsPath::broken_status(Rank peer) const {
  return Status(Errc::rail_down, info_.name + " to rank " + std::to_string(peer) + ": " + broken_reason_);
}

base::Status VerbsPath::send(Rank peer, FrameWriter& frame) noexcept {
  if (!reaches(peer)) {
    return Status(Errc::invalid_argument, info_.name + " does not reach rank " + std::to_string(peer));
  }
  const std::size_t size = frame.frame_size();
  if (size > max_frame_to(peer)) {
    return Status(Errc::invalid_argument, info_.name + ": a frame of " + std::to_string(size) + " bytes to rank " +
                                              std::to_string(peer) + " (at most " +
                                              std::to_string(max_frame_to(peer)) + ")");
  }
  const std::lock_guard lock(send_lock_);
  if (broken_) return broken_status(peer);
  if (free_send_.empty()) {
    reap_send_completions();
    if (broken_) return broken_status(peer);
  }
  if (!queued_.empty() || free_send_.empty()) {
    // Wait in order inside the path: the frame is copied now (the writer does not outlive this call).
    QueuedFrame q{peer, std::vector<std::byte>(size)};
    write_frame(frame, q.bytes);
    queued_.push_back(std::move(q));
    ++counters_.frames_queued;
    flush_queue();
    return broken_ ? broken_status(peer) : Status{};
  }
  const std::uint32_t buffer = free_send_.back();
  write_frame(frame, {send_slab_.get() + std::size_t{buffer} * frame_room_, size});
  free_send_.pop_back();
  return post_frame(peer, buffer, size);
}

base::Status VerbsPath::post_frame(Rank peer, std::size_t buffer, std::size_t length) noexcept {
  Peer& p = peers_[peer];
  if (p.ah == nullptr) {
    ibv_ah_attr attr{};
    attr.is_global = 1;
    attr.grh.dgid = p.address.gid;
    attr.grh.sgid_index = static_cast<std::uint8_t>(gid_index_);
    attr.grh.hop_limit = 64;
    attr.dlid = p.address.lid;
    attr.port_num = port_;
    p.ah = api_.create_ah(pd_, &attr);
    if (p.ah == nullptr) {
      free_send_.push_back(static_cast<std::uint32_t>(buffer));
      return Status(Errc::rail_down, info_.name + ": no address handle to rank " + std::to_string(peer) + " (" +
                                         errno_text(errno) + ")");
    }
  }
  ibv_sge sge{};
  sge.addr = reinterpret_cast<std::uintptr_t>(send_slab_.get() + buffer * frame_room_);
  sge.length = static_cast<std::uint32_t>(length);
  sge.lkey = send_mr_->lkey;
  ibv_send_wr wr{};
  wr.wr_id = buffer;
  wr.sg_list = &sge;
  wr.num_sge = 1;
  wr.opcode = IBV_WR_SEND;
  wr.send_flags = IBV_SEND_SIGNALED;
  wr.wr.ud.ah = p.ah;
  wr.wr.ud.remote_qpn = p.address.qpn;
  wr.wr.ud.remote_qkey = p.address.qkey;
  ibv_send_wr* bad = nullptr;
  ibv_qp* qp = send_qps_[next_send_qp_];
  next_send_qp_ = (next_send_qp_ + 1) % send_qps_.size();
  if (const int err = api_.post_send(qp, &wr, &bad); err != 0) {
    free_send_.push_back(static_cast<std::uint32_t>(buffer));
    mark_broken("the device refused a send (" + errno_text(err) + ")");
    return broken_status(peer);
  }
  ++counters_.frames_sent;
  return {};
}

void VerbsPath::flush_queue() noexcept {
  while (!queued_.empty() && !broken_) {
    if (free_send_.empty()) reap_send_completions();
    if (free_send_.empty()) return;
    QueuedFrame& q = queued_.front();
    const std::uint32_t buffer = free_send_.back();
    free_send_.pop_back();
    std::memcpy(send_slab_.get() + std::size_t{buffer} * frame_room_, q.bytes.data(), q.bytes.size());
    (void)post_frame(q.peer, buffer, q.bytes.size());  // a failure breaks the rail; the next send says so
    queued_.pop_front();
  }
  if (broken_) queued_.clear();  // the engine resends what it kept, on other rails
}

void VerbsPath::reap_send_completions() noexcept {
  ibv_wc wc[kPollBatch];
  for (;;) {
    const int n = api_.poll_cq(send_cq_, static_cast<int>(kPollBatch), wc);
    if (n <= 0) {
      if (n < 0) mark_broken("polling the send completion queue failed");
      return;
    }
    for (int i = 0; i < n; ++i) {
      free_send_.push_back(static_cast<std::uint32_t>(wc[i].wr_id));
      if (wc[i].status != IBV_WC_SUCCESS) {
        ++counters_.send_completion_errors;
        // With the port down, that is what sends do: the rail comes back with the port.
        ibv_port_attr port{};
        const bool port_down = api_.query_port(context_, port_, &port) == 0 && port.state != IBV_PORT_ACTIVE;
        mark_broken(std::string("a send completed in error (") + ibv_wc_status_str(wc[i].status) + ")", port_down);
      }
    }
    if (n < static_cast<int>(kPollBatch)) return;
  }
}

void VerbsPath::repost_receives() noexcept {
  // A rail down only with its port keeps its pool posted, ready for the port's return.
  if (to_repost_.empty() || (broken_ && !port_down_only_)) return;
  std::vector<ibv_recv_wr> wrs(to_repost_.size());
  std::vector<ibv_sge> sges(to_repost_.size());
  const std::size_t room = kGrhSize + frame_room_;
  for (std::size_t i = 0; i < to_repost_.size(); ++i) {
    sges[i].addr = reinterpret_cast<std::uintptr_t>(recv_slab_.get() + std::size_t{to_repost_[i]} * room);
    sges[i].length = static_cast<std::uint32_t>(room);
    sges[i].lkey = recv_mr_->lkey;
    wrs[i].wr_id = to_repost_[i];
    wrs[i].sg_list = &sges[i];
    wrs[i].num_sge = 1;
    wrs[i].next = i + 1 < to_repost_.size() ? &wrs[i + 1] : nullptr;
  }
  ibv_recv_wr* bad = nullptr;
  if (const int err = api_.post_recv(recv_qp_, wrs.data(), &bad); err != 0) {
    // Those before `bad` are posted; the rest stay to repost.
    const std::size_t posted = bad == nullptr ? 0 : static_cast<std::size_t>(bad - wrs.data());
    counters_.receives_posted += posted;
    to_repost_.erase(to_repost_.begin(), to_repost_.begin() + static_cast<std::ptrdiff_t>(posted));
    mark_broken("the device refused receive buffers (" + errno_text(err) + ")");
    return;
  }
  counters_.receives_posted += to_repost_.size();
  to_repost_.clear();
}

// A rail broken only because its port went down works again when the port comes back; any other
// failure (a QP or CQ in error) lasts.
void VerbsPath::mark_broken(std::string reason, bool port_only) noexcept {
  if (!broken_) {
    broken_ = true;
    broken_reason_ = std::move(reason);
    port_down_only_ = port_only;
  } else if (!port_only) {
    port_down_only_ = false;
  }
}

void VerbsPath::check_async_events() noexcept {
  ibv_async_event event{};
  while (api_.get_async_event(context_, &event) == 0) {
    ++counters_.async_events;
    const ibv_event_type type = event.event_type;
    const bool port_event = type == IBV_EVENT_PORT_ERR || type == IBV_EVENT_PORT_ACTIVE;
    const bool other_port = port_event && event.element.port_num != port_;
    api_.ack_async_event(&event);
    if (other_port) continue;  // every context on the device hears of every port
    switch (type) {
      case IBV_EVENT_PORT_ERR:
      case IBV_EVENT_DEVICE_FATAL:
      case IBV_EVENT_QP_FATAL:
      case IBV_EVENT_QP_REQ_ERR:
      case IBV_EVENT_QP_ACCESS_ERR:
      case IBV_EVENT_CQ_ERR:
        mark_broken(std::string("the device reported ") + ibv_event_type_str(type), type == IBV_EVENT_PORT_ERR);
        base::logger().warn("{}: {}", info_.name, ibv_event_type_str(type));
        break;
      case IBV_EVENT_PORT_ACTIVE:
        // The port is back: a rail broken only by the port going down works again.
        if (broken_ && port_down_only_) {
          // Sends that failed may have left a send queue in error: back to RTS (one in RTS stays so).
          for (ibv_qp* qp : send_qps_) {
            ibv_qp_attr attr{};
            attr.qp_state = IBV_QPS_RTS;
            (void)api_.modify_qp(qp, &attr, IBV_QP_STATE);
          }
          broken_ = false;
          broken_reason_.clear();
          base::logger().info("{}: the port is active again", info_.name);
        }
        break;
      default:
        break;
    }
  }
}

std::size_t VerbsPath::poll(FrameSink& sink, std::size_t budget) noexcept {
  {
    const std::lock_guard lock(send_lock_);
    if (++polls_since_event_check_ >= kEventCheckPolls) {
      polls_since_event_check_ = 0;
      check_async_events();
    }
    reap_send_completions();
    flush_queue();
  }
  std::size_t handed = 0;
  ibv_wc wc[kPollBatch];
  const std::size_t room = kGrhSize + frame_room_;
  while (handed < budget) {
    const int want = static_cast<int>(std::min(kPollBatch, budget - handed));
    const int n = api_.poll_cq(recv_cq_, want, wc);
    if (n < 0) {
      const std::lock_guard lock(send_lock_);
      mark_broken("polling the receive completion queue failed");
    }
    if (n <= 0) break;
    for (int i = 0; i < n; ++i) {
      const std::uint32_t buffer = static_cast<std::uint32_t>(wc[i].wr_id);
      to_repost_.push_back(buffer);
      if (wc[i].status != IBV_WC_SUCCESS) {
        ++counters_.recv_completion_errors;
        if (wc[i].status == IBV_WC_WR_FLUSH_ERR) {
          const std::lock_guard lock(send_lock_);
          mark_broken("the receive queue was flushed (the QP is in error)");
        }
        continue;
      }
      if (wc[i].byte_len < kGrhSize) {
        ++counters_.short_datagrams;
        continue;
      }
      ++counters_.frames_received;
      ++handed;
      sink.on_frame({recv_slab_.get() + std::size_t{buffer} * room + kGrhSize, wc[i].byte_len - kGrhSize});
    }
    if (n < want) break;
  }
  if (to_repost_.size() >= std::min(kRepostBatch, recv_count_ / 2 + 1)) {
    const std::lock_guard lock(send_lock_);  // reads broken_
    repost_receives();
  }
  return handed;
}

std::vector<PathCounterGroup> VerbsPath::stats() const {
  const std::lock_guard lock(send_lock_);
  std::vector<PathCounterGroup> groups{{"verbs",
                                        info_.name,
                                        {{"frames_sent", counters_.frames_sent},
                                         {"frames_received", counters_.frames_received},
                                         {"send_completion_errors", counters_.send_completion_errors},
                                         {"recv_completion_errors", counters_.recv_completion_errors},
                                         {"frames_queued", counters_.frames_queued},
                                         {"receives_posted", counters_.receives_posted},
                                         {"short_datagrams", counters_.short_datagrams},
                                         {"async_events", counters_.async_events}}}};
  // The emulated device's own view: what it dropped, and why (tests check the receive pool's drops).
  if (&api_ == &emulated_verbs()) {
    const EmulatedStats e = emulated_stats(context_);
    groups.push_back({"verbs_device",
                      info_.name,
                      {{"datagrams_sent", e.datagrams_sent},
                       {"datagrams_received", e.datagrams_received},
                       {"send_drops", e.send_drops},
                       {"dropped_no_recv", e.dropped_no_recv},
                       {"dropped_qkey", e.dropped_qkey},
                       {"dropped_oversize", e.dropped_oversize},
                       {"dropped_malformed", e.dropped_malformed},
                       {"dropped_qp_state", e.dropped_qp_state},
                       {"dropped_port_down", e.dropped_port_down},
                       {"completions_lost", e.completions_lost}}});
  }
  return groups;
}

}  // namespace ftmpi::path::verbs

// The emulated UD device (libs/path/src/verbs/emulated_device.hpp): two contexts in this process, at
// 127.0.0.1 and 127.0.0.2, exchange datagrams over loopback through the same call table the verbs driver
// uses. Waits poll until an expected completion or counter shows up, with a deadline only for failing;
// absence is shown by a later datagram from the same QP arriving first (loopback keeps one socket's
// datagrams in order).
#include <arpa/inet.h>
#include <sched.h>

#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "ftmpi/test/seed.hpp"
#include "verbs/emulated_device.hpp"

using namespace ftmpi::path::verbs;

namespace {

const VerbsApi& api() { return emulated_verbs(); }

constexpr std::uint32_t kQkey = 0x1111;
constexpr std::size_t kGrh = 40;
constexpr auto kDeadline = std::chrono::seconds(20);

EmulatedConfig at(const char* address) {
  EmulatedConfig config;
  config.address = address;
  return config;
}

ibv_context* open_emulated(const EmulatedConfig& config) {
  configure_emulated_verbs(config);
  int n = 0;
  ibv_device** list = api().get_device_list(&n);
  BOOST_REQUIRE(list != nullptr);
  ibv_context* ctx = api().open_device(list[0]);
  api().free_device_list(list);
  configure_emulated_verbs(EmulatedConfig{});
  BOOST_REQUIRE(ctx != nullptr);
  return ctx;
}

struct NodeOptions {
  int send_cqe = 256;
  int recv_cqe = 256;
  std::uint32_t max_recv_wr = 256;
  std::uint32_t max_sge = 4;
  bool to_rts = true;
};

// One emulated adapter with a PD, a registered buffer, a send and a receive CQ and one UD QP.
struct Node {
  ibv_context* ctx = nullptr;
  ibv_pd* pd = nullptr;
  ibv_cq* scq = nullptr;
  ibv_cq* rcq = nullptr;
  ibv_qp* qp = nullptr;
  std::vector<std::uint8_t> buf = std::vector<std::uint8_t>(1 << 20);
  ibv_mr* mr = nullptr;
  std::vector<ibv_ah*> ahs;

  explicit Node(const EmulatedConfig& config, NodeOptions o = {}) {
    ctx = open_emulated(config);
    pd = api().alloc_pd(ctx);
    scq = api().create_cq(ctx, o.send_cqe, nullptr, nullptr, 0);
    rcq = api().create_cq(ctx, o.recv_cqe, nullptr, nullptr, 0);
    mr = api().reg_mr(pd, buf.data(), buf.size(), IBV_ACCESS_LOCAL_WRITE);
    BOOST_REQUIRE(pd != nullptr && scq != nullptr && rcq != nullptr && mr != nullptr);
    ibv_qp_init_attr init{};
    init.send_cq = scq;
    init.recv_cq = rcq;
    init.qp_type = IBV_QPT_UD;
    init.cap.max_send_wr = 256;
    init.cap.max_recv_wr = o.max_recv_wr;
    init.cap.max_send_sge = o.max_sge;
    init.cap.max_recv_sge = o.max_sge;
    qp = api().create_qp(pd, &init);
    BOOST_REQUIRE(qp != nullptr);
    BOOST_REQUIRE_EQUAL(qp->state, IBV_QPS_RESET);
    if (o.to_rts) {
      BOOST_REQUIRE_EQUAL(to_init(), 0);
      BOOST_REQUIRE_EQUAL(to_state(IBV_QPS_RTR), 0);
      BOOST_REQUIRE_EQUAL(to_state(IBV_QPS_RTS), 0);
    }
  }
  Node(const Node&) = delete;
  Node& operator=(const Node&) = delete;
  ~Node() {
    for (ibv_ah* ah : ahs) BOOST_CHECK_EQUAL(api().destroy_ah(ah), 0);
    BOOST_CHECK_EQUAL(api().destroy_qp(qp), 0);
    BOOST_CHECK_EQUAL(api().destroy_cq(scq), 0);
    BOOST_CHECK_EQUAL(api().destroy_cq(rcq), 0);
    BOOST_CHECK_EQUAL(api().dereg_mr(mr), 0);
    BOOST_CHECK_EQUAL(api().dealloc_pd(pd), 0);
    BOOST_CHECK_EQUAL(api().close_device(ctx), 0);
  }

  int to_init(std::uint32_t qkey = kQkey) {
    ibv_qp_attr attr{};
    attr.qp_state = IBV_QPS_INIT;
    attr.pkey_index = 0;
    attr.port_num = 1;
    attr.qkey = qkey;
    return api().modify_qp(qp, &attr, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY);
  }
  int to_state(ibv_qp_state state) {
    ibv_qp_attr attr{};
    attr.qp_state = state;
    attr.sq_psn = 0;
    return api().modify_qp(qp, &attr, IBV_QP_STATE | (state == IBV_QPS_RTS ? IBV_QP_SQ_PSN : 0));
  }

  ibv_gid gid() const {
    ibv_gid g{};
    BOOST_REQUIRE_EQUAL(api().query_gid(ctx, 1, 0, &g), 0);
    return g;
  }
  ibv_ah* ah_to(const Node& peer) {
    ibv_ah_attr attr{};
    attr.is_global = 1;
    attr.grh.dgid = peer.gid();
    attr.grh.hop_limit = 64;
    attr.port_num = 1;
    ibv_ah* ah = api().create_ah(pd, &attr);
    BOOST_REQUIRE(ah != nullptr);
    ahs.push_back(ah);
    return ah;
  }
  ibv_sge sge(std::size_t offset, std::uint32_t length) const {
    return ibv_sge{reinterpret_cast<std::uintptr_t>(buf.data() + offset), length, mr->lkey};
  }

  int post_recv(std::vector<ibv_sge> sges, std::uint64_t wr_id) {
    ibv_recv_wr wr{};
    wr.wr_id = wr_id;
    wr.sg_list = sges.data();
    wr.num_sge = static_cast<int>(sges.size());
    ibv_recv_wr* bad = nullptr;
    const int rc = api().post_recv(qp, &wr, &bad);
    BOOST_CHECK(rc == 0 ? bad == nullptr : bad == &wr);
    return rc;
  }
  int post_recv(std::size_t offset, std::uint32_t length, std::uint64_t wr_id) {
    return post_recv({sge(offset, length)}, wr_id);
  }

  struct Send {
    ibv_ah* ah;
    std::uint32_t qpn;
    std::vector<ibv_sge> sges;
    std::uint64_t wr_id = 0;
    std::uint32_t qkey = kQkey;
    unsigned flags = IBV_SEND_SIGNALED;
    bool imm = false;
    std::uint32_t imm_data = 0;
  };
  int send(Send s) {
    ibv_send_wr wr{};
    wr.wr_id = s.wr_id;
    wr.sg_list = s.sges.data();
    wr.num_sge = static_cast<int>(s.sges.size());
    wr.opcode = s.imm ? IBV_WR_SEND_WITH_IMM : IBV_WR_SEND;
    wr.send_flags = s.flags;
    wr.imm_data = htonl(s.imm_data);
    wr.wr.ud.ah = s.ah;
    wr.wr.ud.remote_qpn = s.qpn;
    wr.wr.ud.remote_qkey = s.qkey;
    ibv_send_wr* bad = nullptr;
    const int rc = api().post_send(qp, &wr, &bad);
    BOOST_CHECK(rc == 0 ? bad == nullptr : bad == &wr);
    return rc;
  }
  // Sends buf[offset, offset+length) to `peer`'s QP.
  int send_to(Node& peer, std::size_t offset, std::uint32_t length, std::uint64_t wr_id = 0,
              unsigned flags = IBV_SEND_SIGNALED) {
    return send(Send{ah_to(peer), peer.qp->qp_num, {sge(offset, length)}, wr_id, kQkey, flags});
  }

  EmulatedStats stats() const { return emulated_stats(ctx); }
};

void fill(std::uint8_t* p, std::size_t n, std::uint32_t tag) {
  for (std::size_t i = 0; i < n; ++i) p[i] = static_cast<std::uint8_t>(tag * 131 + i * 7 + (i >> 8));
}
bool filled(const std::uint8_t* p, std::size_t n, std::uint32_t tag) {
  for (std::size_t i = 0; i < n; ++i) {
    if (p[i] != static_cast<std::uint8_t>(tag * 131 + i * 7 + (i >> 8))) return false;
  }
  return true;
}

// Polls `cq` until `n` completions have come or the deadline passed; returns what came.
std::vector<ibv_wc> poll_n(ibv_cq* cq, std::size_t n) {
  std::vector<ibv_wc> got;
  const auto deadline = std::chrono::steady_clock::now() + kDeadline;
  while (got.size() < n && std::chrono::steady_clock::now() < deadline) {
    ibv_wc wc[16];
    const int k = api().poll_cq(cq, static_cast<int>(std::min<std::size_t>(16, n - got.size())), wc);
    BOOST_REQUIRE(k >= 0);
    got.insert(got.end(), wc, wc + k);
    if (k == 0) ::sched_yield();
  }
  BOOST_REQUIRE_EQUAL(got.size(), n);
  return got;
}

// Polls `node`'s receive CQ until `done` holds; a completion meanwhile is a failure.
void poll_until(Node& node, const std::function<bool()>& done) {
  const auto deadline = std::chrono::steady_clock::now() + kDeadline;
  while (!done()) {
    BOOST_REQUIRE(std::chrono::steady_clock::now() < deadline);
    ibv_wc wc;
    BOOST_REQUIRE_EQUAL(api().poll_cq(node.rcq, 1, &wc), 0);
    ::sched_yield();
  }
}

bool no_completion(ibv_cq* cq) {
  ibv_wc wc;
  return api().poll_cq(cq, 1, &wc) == 0;
}

std::vector<ibv_async_event> events(ibv_context* ctx) {
  std::vector<ibv_async_event> out;
  ibv_async_event e;
  while (api().get_async_event(ctx, &e) == 0) {
    out.push_back(e);
    api().ack_async_event(&e);
  }
  BOOST_CHECK_EQUAL(errno, EAGAIN);
  return out;
}

ibv_gid mapped(const char* ipv4) {
  ibv_gid g{};
  g.raw[10] = g.raw[11] = 0xff;
  BOOST_REQUIRE_EQUAL(::inet_pton(AF_INET, ipv4, &g.raw[12]), 1);
  return g;
}

bool same_gid(const ibv_gid& a, const ibv_gid& b) { return std::memcmp(a.raw, b.raw, 16) == 0; }

}  // namespace

BOOST_AUTO_TEST_SUITE(verbs_emulated)

BOOST_AUTO_TEST_CASE(device_port_and_gid) {
  int n = 0;
  ibv_device** list = api().get_device_list(&n);
  BOOST_REQUIRE(list != nullptr);
  BOOST_REQUIRE_EQUAL(n, 1);
  BOOST_CHECK(list[1] == nullptr);
  BOOST_CHECK_EQUAL(std::string(api().get_device_name(list[0])), "emu0");
  api().free_device_list(list);

  EmulatedConfig config = at("127.0.0.2");
  config.mtu = IBV_MTU_1024;
  ibv_context* ctx = open_emulated(config);
  BOOST_CHECK_EQUAL(std::string(api().get_device_name(ctx->device)), "emu0");
  ibv_device_attr dev{};
  BOOST_REQUIRE_EQUAL(api().query_device(ctx, &dev), 0);
  BOOST_CHECK_GE(dev.max_qp_wr, 1024);
  BOOST_CHECK_GE(dev.max_cqe, 1024);
  BOOST_CHECK_GE(dev.max_sge, 2);
  BOOST_CHECK_EQUAL(dev.phys_port_cnt, 1);

  ibv_port_attr port{};
  BOOST_REQUIRE_EQUAL(api().query_port(ctx, 1, &port), 0);
  BOOST_CHECK_EQUAL(port.state, IBV_PORT_ACTIVE);
  BOOST_CHECK_EQUAL(port.active_mtu, IBV_MTU_1024);
  BOOST_CHECK_EQUAL(port.max_mtu, IBV_MTU_1024);
  BOOST_CHECK_EQUAL(port.lid, 0);
  BOOST_CHECK_EQUAL(port.link_layer, IBV_LINK_LAYER_ETHERNET);
  BOOST_CHECK_EQUAL(port.gid_tbl_len, 1);
  BOOST_CHECK_NE(api().query_port(ctx, 2, &port), 0);

  ibv_gid gid{};
  BOOST_REQUIRE_EQUAL(api().query_gid(ctx, 1, 0, &gid), 0);
  BOOST_CHECK(same_gid(gid, mapped("127.0.0.2")));
  BOOST_CHECK_EQUAL(api().query_gid(ctx, 1, 1, &gid), -1);

  ibv_async_event event;
  errno = 0;
  BOOST_CHECK_EQUAL(api().get_async_event(ctx, &event), -1);
  BOOST_CHECK_EQUAL(errno, EAGAIN);

  // Address handles need a GRH whose destination is an IPv4-mapped GID.
  ibv_pd* pd = api().alloc_pd(ctx);
  ibv_ah_attr ah_attr{};
  ah_attr.port_num = 1;
  ah_attr.grh.dgid = mapped("127.0.0.1");
  errno = 0;
  BOOST_CHECK(api().create_ah(pd, &ah_attr) == nullptr);
  BOOST_CHECK_EQUAL(errno, EINVAL);
  ah_attr.is_global = 1;
  ah_attr.grh.dgid.raw[0] = 0xfe;  // a link-local IPv6 GID
  errno = 0;
  BOOST_CHECK(api().create_ah(pd, &ah_attr) == nullptr);
  BOOST_CHECK_EQUAL(errno, EINVAL);

  // UD only.
  ibv_cq* cq = api().create_cq(ctx, 8, nullptr, nullptr, 0);
  ibv_qp_init_attr init{};
  init.send_cq = init.recv_cq = cq;
  init.qp_type = IBV_QPT_RC;
  init.cap = {1, 1, 1, 1, 0};
  errno = 0;
  BOOST_CHECK(api().create_qp(pd, &init) == nullptr);
  BOOST_CHECK_EQUAL(errno, EOPNOTSUPP);

  // A PD in use cannot go; close_device frees what is left (ASan reports any leak).
  init.qp_type = IBV_QPT_UD;
  ibv_qp* qp = api().create_qp(pd, &init);
  BOOST_REQUIRE(qp != nullptr);
  BOOST_CHECK_GE(qp->qp_num, 1024u);
  BOOST_CHECK_LE(qp->qp_num, 0xffffffu);
  BOOST_CHECK_EQUAL(api().dealloc_pd(pd), EBUSY);
  BOOST_CHECK_EQUAL(api().destroy_cq(cq), EBUSY);
  std::vector<std::uint8_t> buf(64);
  BOOST_CHECK(api().reg_mr(pd, buf.data(), buf.size(), IBV_ACCESS_LOCAL_WRITE) != nullptr);
  BOOST_CHECK_EQUAL(api().close_device(ctx), 0);

  // An address that is not IPv4 cannot be opened.
  configure_emulated_verbs(at("not-an-address"));
  list = api().get_device_list(&n);
  errno = 0;
  BOOST_CHECK(api().open_device(list[0]) == nullptr);
  BOOST_CHECK_EQUAL(errno, EINVAL);
  api().free_device_list(list);
  configure_emulated_verbs(EmulatedConfig{});
}

BOOST_AUTO_TEST_CASE(qp_state_machine) {
  Node a(at("127.0.0.1"));
  NodeOptions o;
  o.to_rts = false;
  o.max_recv_wr = 2;
  Node b(at("127.0.0.2"), o);

  // RESET: no receives.
  BOOST_CHECK_EQUAL(b.post_recv(0, 100, 1), EINVAL);
  // RESET -> INIT needs P_Key index, port and Q_Key.
  ibv_qp_attr attr{};
  attr.qp_state = IBV_QPS_INIT;
  attr.port_num = 1;
  BOOST_CHECK_EQUAL(api().modify_qp(b.qp, &attr, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT), EINVAL);
  BOOST_CHECK_EQUAL(b.qp->state, IBV_QPS_RESET);
  attr.port_num = 2;
  BOOST_CHECK_EQUAL(api().modify_qp(b.qp, &attr, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY),
                    EINVAL);
  BOOST_REQUIRE_EQUAL(b.to_init(), 0);
  BOOST_CHECK_EQUAL(b.qp->state, IBV_QPS_INIT);

  // INIT: receives may be posted (up to max_recv_wr), sends not; INIT cannot skip RTR.
  BOOST_CHECK_EQUAL(b.post_recv(0, kGrh + 100, 1), 0);
  BOOST_CHECK_EQUAL(b.send_to(a, 0, 10), EINVAL);
  BOOST_CHECK_EQUAL(b.to_state(IBV_QPS_RTS), EINVAL);

  // A datagram to a QP not yet ready to receive is dropped; its posted receive stays.
  fill(a.buf.data(), 10, 1);
  BOOST_REQUIRE_EQUAL(a.send_to(b, 0, 10, 7), 0);
  BOOST_CHECK_EQUAL(poll_n(a.scq, 1)[0].status, IBV_WC_SUCCESS);
  poll_until(b, [&] { return b.stats().dropped_qp_state == 1; });

  BOOST_REQUIRE_EQUAL(b.to_state(IBV_QPS_RTR), 0);
  BOOST_CHECK_EQUAL(b.send_to(a, 0, 10), EINVAL);
  // RTR -> RTS needs the send PSN.
  attr = ibv_qp_attr{};
  attr.qp_state = IBV_QPS_RTS;
  BOOST_CHECK_EQUAL(api().modify_qp(b.qp, &attr, IBV_QP_STATE), EINVAL);
  BOOST_CHECK_EQUAL(b.qp->state, IBV_QPS_RTR);

  // RTR receives: the next datagram lands in the receive posted in INIT.
  fill(a.buf.data(), 10, 2);
  BOOST_REQUIRE_EQUAL(a.send_to(b, 0, 10, 8), 0);
  const ibv_wc wc = poll_n(b.rcq, 1)[0];
  BOOST_CHECK_EQUAL(wc.status, IBV_WC_SUCCESS);
  BOOST_CHECK_EQUAL(wc.wr_id, 1u);
  BOOST_CHECK(filled(b.buf.data() + kGrh, 10, 2));

  BOOST_REQUIRE_EQUAL(b.to_state(IBV_QPS_RTS), 0);
  BOOST_CHECK_EQUAL(b.send_to(a, 0, 10), 0);

  // A chain beyond max_recv_wr (2): the third WR is refused and reported as bad_wr.
  ibv_sge sges[3] = {b.sge(0, 100), b.sge(100, 100), b.sge(200, 100)};
  ibv_recv_wr wrs[3]{};
  for (int i = 0; i < 3; ++i) {
    wrs[i].wr_id = 10 + i;
    wrs[i].sg_list = &sges[i];
    wrs[i].num_sge = 1;
    wrs[i].next = i < 2 ? &wrs[i + 1] : nullptr;
  }
  ibv_recv_wr* bad = nullptr;
  BOOST_CHECK_EQUAL(api().post_recv(b.qp, &wrs[0], &bad), ENOMEM);
  BOOST_CHECK(bad == &wrs[2]);

  // ERR flushes the two posted receives; RESET then INIT makes the QP usable again.
  BOOST_REQUIRE_EQUAL(b.to_state(IBV_QPS_ERR), 0);
  const auto flushed = poll_n(b.rcq, 2);
  BOOST_CHECK_EQUAL(flushed[0].status, IBV_WC_WR_FLUSH_ERR);
  BOOST_CHECK_EQUAL(flushed[0].wr_id, 10u);
  BOOST_CHECK_EQUAL(flushed[1].wr_id, 11u);
  BOOST_REQUIRE_EQUAL(b.to_state(IBV_QPS_RESET), 0);
  BOOST_CHECK_EQUAL(b.to_init(), 0);
  BOOST_CHECK(no_completion(b.rcq));
  BOOST_CHECK_EQUAL(poll_n(b.scq, 1)[0].status, IBV_WC_SUCCESS);  // the send from RTS above
}

BOOST_AUTO_TEST_CASE(round_trip_grh_then_payload) {
  Node a(at("127.0.0.1"));
  Node b(at("127.0.0.2"));
  BOOST_REQUIRE_EQUAL(b.post_recv(0, kGrh + 100, 41), 0);
  BOOST_REQUIRE_EQUAL(b.post_recv(4096, kGrh + 100, 42), 0);
  fill(a.buf.data(), 100, 9);
  BOOST_REQUIRE_EQUAL(
      a.send(Node::Send{a.ah_to(b), b.qp->qp_num, {a.sge(0, 100)}, 5, kQkey, IBV_SEND_SIGNALED, true, 0xabcdef01}),
      0);
  const ibv_wc s = poll_n(a.scq, 1)[0];
  BOOST_CHECK_EQUAL(s.status, IBV_WC_SUCCESS);
  BOOST_CHECK_EQUAL(s.opcode, IBV_WC_SEND);
  BOOST_CHECK_EQUAL(s.wr_id, 5u);

  const ibv_wc r = poll_n(b.rcq, 1)[0];
  BOOST_CHECK_EQUAL(r.status, IBV_WC_SUCCESS);
  BOOST_CHECK_EQUAL(r.opcode, IBV_WC_RECV);
  BOOST_CHECK_EQUAL(r.wr_id, 41u);
  BOOST_CHECK_EQUAL(r.byte_len, kGrh + 100);
  BOOST_CHECK_EQUAL(r.src_qp, a.qp->qp_num);
  BOOST_CHECK_EQUAL(r.qp_num, b.qp->qp_num);
  BOOST_CHECK_EQUAL(r.wc_flags, unsigned{IBV_WC_GRH | IBV_WC_WITH_IMM});
  BOOST_CHECK_EQUAL(ntohl(r.imm_data), 0xabcdef01u);
  ibv_grh grh;
  std::memcpy(&grh, b.buf.data(), kGrh);
  BOOST_CHECK(same_gid(grh.sgid, mapped("127.0.0.1")));
  BOOST_CHECK(same_gid(grh.dgid, mapped("127.0.0.2")));
  BOOST_CHECK_EQUAL(ntohs(grh.paylen), 100);
  BOOST_CHECK(filled(b.buf.data() + kGrh, 100, 9));
  BOOST_CHECK_EQUAL(b.buf[kGrh + 100], 0);  // nothing past the payload

  // Unsignaled: arrives, no send completion; a plain send has no immediate.
  fill(a.buf.data(), 3, 10);
  BOOST_REQUIRE_EQUAL(a.send_to(b, 0, 3, 6, 0), 0);
  const ibv_wc r2 = poll_n(b.rcq, 1)[0];
  BOOST_CHECK_EQUAL(r2.wr_id, 42u);
  BOOST_CHECK_EQUAL(r2.byte_len, kGrh + 3);
  BOOST_CHECK_EQUAL(r2.wc_flags, unsigned{IBV_WC_GRH});
  BOOST_CHECK(filled(b.buf.data() + 4096 + kGrh, 3, 10));
  BOOST_CHECK(no_completion(a.scq));
  BOOST_CHECK_EQUAL(a.stats().datagrams_sent, 2u);
  BOOST_CHECK_EQUAL(b.stats().datagrams_received, 2u);

  // A QPN no UDP port can carry goes nowhere: lost on the wire, yet the send succeeds.
  BOOST_REQUIRE_EQUAL(a.send(Node::Send{a.ah_to(b), 0x10000, {a.sge(0, 3)}, 7}), 0);
  BOOST_CHECK_EQUAL(poll_n(a.scq, 1)[0].status, IBV_WC_SUCCESS);
  BOOST_CHECK_EQUAL(a.stats().send_drops, 1u);
  BOOST_CHECK_EQUAL(a.stats().datagrams_sent, 2u);
}

BOOST_AUTO_TEST_CASE(no_posted_receive_drops) {
  Node a(at("127.0.0.1"));
  Node b(at("127.0.0.2"));
  fill(a.buf.data(), 50, 1);
  BOOST_REQUIRE_EQUAL(a.send_to(b, 0, 50), 0);
  poll_until(b, [&] { return b.stats().dropped_no_recv == 1; });
  BOOST_REQUIRE_EQUAL(b.post_recv(0, kGrh + 50, 1), 0);
  fill(a.buf.data(), 50, 2);
  BOOST_REQUIRE_EQUAL(a.send_to(b, 0, 50), 0);
  const ibv_wc r = poll_n(b.rcq, 1)[0];
  BOOST_CHECK_EQUAL(r.status, IBV_WC_SUCCESS);
  BOOST_CHECK(filled(b.buf.data() + kGrh, 50, 2));
  BOOST_CHECK_EQUAL(b.stats().dropped_no_recv, 1u);
  BOOST_CHECK_EQUAL(b.stats().datagrams_received, 1u);
}

BOOST_AUTO_TEST_CASE(qkey_mismatch_drops) {
  Node a(at("127.0.0.1"));
  Node b(at("127.0.0.2"));
  BOOST_REQUIRE_EQUAL(b.post_recv(0, kGrh + 20, 1), 0);
  BOOST_REQUIRE_EQUAL(b.post_recv(1000, kGrh + 20, 2), 0);
  ibv_ah* ah = a.ah_to(b);
  fill(a.buf.data(), 20, 1);
  fill(a.buf.data() + 100, 20, 2);
  fill(a.buf.data() + 200, 20, 3);
  BOOST_REQUIRE_EQUAL(a.send(Node::Send{ah, b.qp->qp_num, {a.sge(0, 20)}, 1, kQkey + 1}), 0);
  BOOST_REQUIRE_EQUAL(a.send(Node::Send{ah, b.qp->qp_num, {a.sge(100, 20)}, 2, kQkey}), 0);
  // High bit set: the sending QP's own Q_Key (the same here) is used.
  BOOST_REQUIRE_EQUAL(a.send(Node::Send{ah, b.qp->qp_num, {a.sge(200, 20)}, 3, 0x80000000U}), 0);
  poll_n(b.rcq, 2);
  BOOST_CHECK(filled(b.buf.data() + kGrh, 20, 2));
  BOOST_CHECK(filled(b.buf.data() + 1000 + kGrh, 20, 3));
  BOOST_CHECK_EQUAL(b.stats().dropped_qkey, 1u);
  for (const ibv_wc& wc : poll_n(a.scq, 3)) BOOST_CHECK_EQUAL(wc.status, IBV_WC_SUCCESS);
}

BOOST_AUTO_TEST_CASE(payload_over_mtu) {
  Node a(at("127.0.0.1"));
  EmulatedConfig small = at("127.0.0.2");
  small.mtu = IBV_MTU_1024;
  Node b(small);
  BOOST_REQUIRE_EQUAL(b.post_recv(0, kGrh + 4096, 1), 0);
  fill(a.buf.data(), 4097, 4);
  // Over the sender's port MTU: a local length error, nothing sent.
  BOOST_REQUIRE_EQUAL(a.send_to(b, 0, 4097, 11), 0);
  const ibv_wc e = poll_n(a.scq, 1)[0];
  BOOST_CHECK_EQUAL(e.status, IBV_WC_LOC_LEN_ERR);
  BOOST_CHECK_EQUAL(e.wr_id, 11u);
  BOOST_CHECK_EQUAL(a.stats().datagrams_sent, 0u);
  // Within the sender's MTU but over the receiver's: dropped there.
  BOOST_REQUIRE_EQUAL(a.send_to(b, 0, 1025, 12), 0);
  BOOST_REQUIRE_EQUAL(a.send_to(b, 0, 1024, 13), 0);
  const ibv_wc r = poll_n(b.rcq, 1)[0];
  BOOST_CHECK_EQUAL(r.status, IBV_WC_SUCCESS);
  BOOST_CHECK_EQUAL(r.byte_len, kGrh + 1024);
  BOOST_CHECK(filled(b.buf.data() + kGrh, 1024, 4));
  BOOST_CHECK_EQUAL(b.stats().dropped_oversize, 1u);
  BOOST_CHECK_EQUAL(a.stats().datagrams_sent, 2u);
}

BOOST_AUTO_TEST_CASE(receive_buffer_too_small) {
  Node a(at("127.0.0.1"));
  Node b(at("127.0.0.2"));
  BOOST_REQUIRE_EQUAL(b.post_recv(0, kGrh + 10, 1), 0);
  fill(a.buf.data(), 11, 5);
  BOOST_REQUIRE_EQUAL(a.send_to(b, 0, 11), 0);
  const ibv_wc e = poll_n(b.rcq, 1)[0];
  BOOST_CHECK_EQUAL(e.status, IBV_WC_LOC_LEN_ERR);
  BOOST_CHECK_EQUAL(e.wr_id, 1u);
  BOOST_REQUIRE_EQUAL(b.post_recv(0, kGrh + 11, 2), 0);
  BOOST_REQUIRE_EQUAL(a.send_to(b, 0, 11), 0);
  const ibv_wc r = poll_n(b.rcq, 1)[0];
  BOOST_CHECK_EQUAL(r.status, IBV_WC_SUCCESS);
  BOOST_CHECK_EQUAL(r.wr_id, 2u);
  BOOST_CHECK(filled(b.buf.data() + kGrh, 11, 5));
}

BOOST_AUTO_TEST_CASE(sge_outside_registered_memory) {
  Node a(at("127.0.0.1"));
  Node b(at("127.0.0.2"));
  ibv_ah* ah = a.ah_to(b);
  // Past the MR's end, and a key no MR has: protection errors, completed although unsignaled.
  BOOST_REQUIRE_EQUAL(a.send(Node::Send{ah, b.qp->qp_num, {a.sge(a.buf.size() - 5, 10)}, 1, kQkey, 0}), 0);
  ibv_sge wrong_key = a.sge(0, 10);
  wrong_key.lkey += 100;
  BOOST_REQUIRE_EQUAL(a.send(Node::Send{ah, b.qp->qp_num, {wrong_key}, 2, kQkey, 0}), 0);
  const auto e = poll_n(a.scq, 2);
  BOOST_CHECK_EQUAL(e[0].status, IBV_WC_LOC_PROT_ERR);
  BOOST_CHECK_EQUAL(e[0].wr_id, 1u);
  BOOST_CHECK_EQUAL(e[1].status, IBV_WC_LOC_PROT_ERR);
  BOOST_CHECK_EQUAL(a.stats().datagrams_sent, 0u);

  // A receive whose SGE is outside B's MR: the datagram that lands in it completes in error.
  std::vector<std::uint8_t> unregistered(100);
  BOOST_REQUIRE_EQUAL(b.post_recv({ibv_sge{reinterpret_cast<std::uintptr_t>(unregistered.data()), 100, b.mr->lkey}}, 3),
                      0);
  BOOST_REQUIRE_EQUAL(a.send_to(b, 0, 10), 0);
  const ibv_wc r = poll_n(b.rcq, 1)[0];
  BOOST_CHECK_EQUAL(r.status, IBV_WC_LOC_PROT_ERR);
  BOOST_CHECK_EQUAL(r.wr_id, 3u);
  BOOST_CHECK(std::all_of(unregistered.begin(), unregistered.end(), [](std::uint8_t x) { return x == 0; }));
}

BOOST_AUTO_TEST_CASE(gather_and_scatter) {
  Node a(at("127.0.0.1"));
  Node b(at("127.0.0.2"));
  // The gather list spans two MRs of A's PD.
  std::vector<std::uint8_t> second(512);
  ibv_mr* mr2 = api().reg_mr(a.pd, second.data(), second.size(), IBV_ACCESS_LOCAL_WRITE);
  BOOST_REQUIRE(mr2 != nullptr);
  std::vector<std::uint8_t> payload(7 + 300 + 1 + 200);
  fill(payload.data(), payload.size(), 6);
  std::memcpy(a.buf.data(), payload.data(), 7);
  std::memcpy(a.buf.data() + 1000, payload.data() + 7, 300);
  std::memcpy(a.buf.data() + 3000, payload.data() + 307, 1);
  std::memcpy(second.data() + 100, payload.data() + 308, 200);
  const ibv_sge from_second{reinterpret_cast<std::uintptr_t>(second.data() + 100), 200, mr2->lkey};
  BOOST_REQUIRE_EQUAL(
      a.send(Node::Send{a.ah_to(b), b.qp->qp_num, {a.sge(0, 7), a.sge(1000, 300), a.sge(3000, 1), from_second}, 1}),
      0);
  BOOST_CHECK_EQUAL(poll_n(a.scq, 1)[0].status, IBV_WC_SUCCESS);

  // The GRH straddles the first two SGEs; the last has room to spare.
  BOOST_REQUIRE_EQUAL(b.post_recv({b.sge(0, 30), b.sge(500, 50), b.sge(2000, 31), b.sge(3000, 1000)}, 2), 0);
  const ibv_wc r = poll_n(b.rcq, 1)[0];
  BOOST_REQUIRE_EQUAL(r.status, IBV_WC_SUCCESS);
  BOOST_CHECK_EQUAL(r.byte_len, kGrh + payload.size());
  std::vector<std::uint8_t> stream;
  stream.insert(stream.end(), b.buf.begin(), b.buf.begin() + 30);
  stream.insert(stream.end(), b.buf.begin() + 500, b.buf.begin() + 550);
  stream.insert(stream.end(), b.buf.begin() + 2000, b.buf.begin() + 2031);
  stream.insert(stream.end(), b.buf.begin() + 3000, b.buf.begin() + 4000);
  ibv_grh grh;
  std::memcpy(&grh, stream.data(), kGrh);
  BOOST_CHECK(same_gid(grh.sgid, mapped("127.0.0.1")));
  BOOST_CHECK(std::equal(payload.begin(), payload.end(), stream.begin() + kGrh));
  // The 4th SGE (stream offset 111) holds the stream's last bytes; its tail is untouched.
  const std::size_t in_last = kGrh + payload.size() - 111;
  BOOST_CHECK_EQUAL(b.buf[3000 + in_last - 1], payload.back());
  BOOST_CHECK_EQUAL(b.buf[3000 + in_last], 0);
  BOOST_CHECK_EQUAL(api().dereg_mr(mr2), 0);
}

BOOST_AUTO_TEST_CASE(cq_overrun) {
  NodeOptions o;
  o.send_cqe = 4;
  Node a(at("127.0.0.1"), o);
  Node b(at("127.0.0.2"));
  BOOST_REQUIRE_EQUAL(a.post_recv(0, 100, 70), 0);
  BOOST_REQUIRE_EQUAL(a.post_recv(100, 100, 71), 0);
  for (std::uint64_t i = 0; i < 4; ++i) BOOST_REQUIRE_EQUAL(a.send_to(b, 0, 10, i), 0);
  BOOST_CHECK(events(a.ctx).empty());
  BOOST_CHECK_EQUAL(a.qp->state, IBV_QPS_RTS);
  // The fifth completion finds the CQ full.
  BOOST_REQUIRE_EQUAL(a.send_to(b, 0, 10, 4), 0);
  const auto ev = events(a.ctx);
  BOOST_REQUIRE_EQUAL(ev.size(), 2u);
  BOOST_CHECK_EQUAL(ev[0].event_type, IBV_EVENT_CQ_ERR);
  BOOST_CHECK(ev[0].element.cq == a.scq);
  BOOST_CHECK_EQUAL(ev[1].event_type, IBV_EVENT_QP_FATAL);
  BOOST_CHECK(ev[1].element.qp == a.qp);
  BOOST_CHECK_EQUAL(a.qp->state, IBV_QPS_ERR);
  BOOST_CHECK_EQUAL(a.stats().completions_lost, 1u);
  const auto done = poll_n(a.scq, 4);
  for (std::uint64_t i = 0; i < 4; ++i) {
    BOOST_CHECK_EQUAL(done[i].status, IBV_WC_SUCCESS);
    BOOST_CHECK_EQUAL(done[i].wr_id, i);
  }
  // The receives posted before were flushed; later work is flushed too, signaled or not.
  const auto flushed = poll_n(a.rcq, 2);
  BOOST_CHECK_EQUAL(flushed[0].status, IBV_WC_WR_FLUSH_ERR);
  BOOST_CHECK_EQUAL(flushed[0].wr_id, 70u);
  BOOST_CHECK_EQUAL(flushed[1].wr_id, 71u);
  const std::uint64_t sent = a.stats().datagrams_sent;
  BOOST_REQUIRE_EQUAL(a.send_to(b, 0, 10, 9, 0), 0);
  const ibv_wc f = poll_n(a.scq, 1)[0];
  BOOST_CHECK_EQUAL(f.status, IBV_WC_WR_FLUSH_ERR);
  BOOST_CHECK_EQUAL(f.wr_id, 9u);
  BOOST_CHECK_EQUAL(a.stats().datagrams_sent, sent);
  BOOST_REQUIRE_EQUAL(a.post_recv(0, 100, 72), 0);
  BOOST_CHECK_EQUAL(poll_n(a.rcq, 1)[0].status, IBV_WC_WR_FLUSH_ERR);
  BOOST_CHECK(no_completion(a.scq));
}

BOOST_AUTO_TEST_CASE(forced_send_failures) {
  EmulatedConfig config = at("127.0.0.1");
  config.fail_sends_after = 2;
  Node a(config);
  Node b(at("127.0.0.2"));
  for (std::uint64_t i = 0; i < 4; ++i) BOOST_REQUIRE_EQUAL(b.post_recv(i * 100, 100, i), 0);
  fill(a.buf.data(), 10, 3);
  BOOST_REQUIRE_EQUAL(a.send_to(b, 0, 10, 0), 0);
  BOOST_REQUIRE_EQUAL(a.send_to(b, 0, 10, 1), 0);
  BOOST_REQUIRE_EQUAL(a.send_to(b, 0, 10, 2), 0);
  BOOST_REQUIRE_EQUAL(a.send_to(b, 0, 10, 3, 0), 0);  // unsignaled: its error still completes
  const auto s = poll_n(a.scq, 4);
  BOOST_CHECK_EQUAL(s[0].status, IBV_WC_SUCCESS);
  BOOST_CHECK_EQUAL(s[1].status, IBV_WC_SUCCESS);
  for (int i = 2; i < 4; ++i) {
    BOOST_CHECK_EQUAL(s[i].status, IBV_WC_GENERAL_ERR);
    BOOST_CHECK_EQUAL(s[i].vendor_err, kVendorErrForced);
    BOOST_CHECK_EQUAL(s[i].wr_id, static_cast<std::uint64_t>(i));
  }
  BOOST_CHECK_EQUAL(a.stats().datagrams_sent, 2u);
  poll_n(b.rcq, 2);
  BOOST_CHECK(filled(b.buf.data() + 100 + kGrh, 10, 3));
  BOOST_CHECK_EQUAL(a.qp->state, IBV_QPS_RTS);
  BOOST_CHECK(events(a.ctx).empty());
}

BOOST_AUTO_TEST_CASE(port_down_after_sends) {
  EmulatedConfig config = at("127.0.0.1");
  config.port_down_after_sends = 2;
  Node a(config);
  Node b(at("127.0.0.2"));
  for (std::uint64_t i = 0; i < 4; ++i) BOOST_REQUIRE_EQUAL(b.post_recv(i * 100, 100, i), 0);
  BOOST_REQUIRE_EQUAL(a.send_to(b, 0, 10, 0), 0);
  BOOST_CHECK(events(a.ctx).empty());
  BOOST_REQUIRE_EQUAL(a.send_to(b, 0, 10, 1), 0);
  auto ev = events(a.ctx);
  BOOST_REQUIRE_EQUAL(ev.size(), 1u);
  BOOST_CHECK_EQUAL(ev[0].event_type, IBV_EVENT_PORT_ERR);
  BOOST_CHECK_EQUAL(ev[0].element.port_num, 1);
  ibv_port_attr port{};
  BOOST_REQUIRE_EQUAL(api().query_port(a.ctx, 1, &port), 0);
  BOOST_CHECK_EQUAL(port.state, IBV_PORT_DOWN);
  BOOST_REQUIRE_EQUAL(a.send_to(b, 0, 10, 2), 0);
  const auto s = poll_n(a.scq, 3);
  BOOST_CHECK_EQUAL(s[0].status, IBV_WC_SUCCESS);
  BOOST_CHECK_EQUAL(s[1].status, IBV_WC_SUCCESS);
  BOOST_CHECK_EQUAL(s[2].status, IBV_WC_GENERAL_ERR);
  BOOST_CHECK_EQUAL(s[2].vendor_err, kVendorErrPortDown);
  BOOST_CHECK_EQUAL(a.stats().datagrams_sent, 2u);
  poll_n(b.rcq, 2);

  // Back up: PORT_ACTIVE, and sends go out again (the port does not fall again).
  BOOST_CHECK(set_emulated_port_state(a.ctx, true));
  ev = events(a.ctx);
  BOOST_REQUIRE_EQUAL(ev.size(), 1u);
  BOOST_CHECK_EQUAL(ev[0].event_type, IBV_EVENT_PORT_ACTIVE);
  BOOST_REQUIRE_EQUAL(api().query_port(a.ctx, 1, &port), 0);
  BOOST_CHECK_EQUAL(port.state, IBV_PORT_ACTIVE);
  fill(a.buf.data(), 10, 8);
  BOOST_REQUIRE_EQUAL(a.send_to(b, 0, 10, 3), 0);
  BOOST_REQUIRE_EQUAL(a.send_to(b, 0, 10, 4), 0);
  for (const ibv_wc& wc : poll_n(a.scq, 2)) BOOST_CHECK_EQUAL(wc.status, IBV_WC_SUCCESS);
  poll_n(b.rcq, 2);
  BOOST_CHECK(filled(b.buf.data() + 300 + kGrh, 10, 8));
  BOOST_CHECK(events(a.ctx).empty());
}

BOOST_AUTO_TEST_CASE(port_down_from_start) {
  Node a(at("127.0.0.1"));
  EmulatedConfig down = at("127.0.0.2");
  down.port_down = true;
  Node b(down);
  ibv_port_attr port{};
  BOOST_REQUIRE_EQUAL(api().query_port(b.ctx, 1, &port), 0);
  BOOST_CHECK_EQUAL(port.state, IBV_PORT_DOWN);
  BOOST_CHECK(events(b.ctx).empty());  // down from the start: no transition to report
  // B cannot send, and what reaches it is dropped.
  BOOST_REQUIRE_EQUAL(b.send_to(a, 0, 10, 1), 0);
  const ibv_wc e = poll_n(b.scq, 1)[0];
  BOOST_CHECK_EQUAL(e.status, IBV_WC_GENERAL_ERR);
  BOOST_CHECK_EQUAL(e.vendor_err, kVendorErrPortDown);
  BOOST_REQUIRE_EQUAL(b.post_recv(0, 100, 2), 0);
  BOOST_REQUIRE_EQUAL(a.send_to(b, 0, 10), 0);
  poll_until(b, [&] { return b.stats().dropped_port_down == 1; });
  BOOST_CHECK_EQUAL(b.stats().datagrams_received, 0u);
}

BOOST_AUTO_TEST_CASE(many_datagrams_arrive_in_order) {
  const std::uint64_t seed = ftmpi::test::seed_for("verbs_emulated/many_datagrams_arrive_in_order");
  BOOST_TEST_CONTEXT("seed " << seed) {
    std::mt19937_64 rng(seed);
    Node a(at("127.0.0.1"));
    Node b(at("127.0.0.2"));
    ibv_ah* ah = a.ah_to(b);
    constexpr std::size_t kSlots = 64;
    constexpr std::size_t kSlot = kGrh + 4096;
    constexpr std::size_t kBurst = 16;  // what B's socket holds between drains, far below its buffer
    constexpr std::uint32_t kCount = 10000;
    for (std::size_t s = 0; s < kSlots; ++s) BOOST_REQUIRE_EQUAL(b.post_recv(s * kSlot, kSlot, s), 0);
    std::uniform_int_distribution<std::uint32_t> size_of(0, 4096);
    std::vector<std::uint32_t> sizes(kCount);
    for (auto& s : sizes) s = size_of(rng);
    std::uint32_t next = 0;
    while (next < kCount) {
      const std::uint32_t end = std::min<std::uint32_t>(kCount, next + kBurst);
      for (std::uint32_t i = next; i < end; ++i) {
        const std::size_t off = (i % 128) * 4096;
        fill(a.buf.data() + off, sizes[i], i);
        BOOST_REQUIRE_EQUAL(a.send(Node::Send{ah, b.qp->qp_num, {a.sge(off, sizes[i])}, i, kQkey, IBV_SEND_SIGNALED,
                                              (i % 3) == 0, i}),
                            0);
      }
      for (const ibv_wc& wc : poll_n(a.scq, end - next)) BOOST_REQUIRE_EQUAL(wc.status, IBV_WC_SUCCESS);
      const auto got = poll_n(b.rcq, end - next);
      for (std::uint32_t i = next; i < end; ++i) {
        const ibv_wc& wc = got[i - next];
        const std::size_t slot = i % kSlots;
        BOOST_TEST_CONTEXT("datagram " << i << " of " << sizes[i] << " bytes") {
          BOOST_REQUIRE_EQUAL(wc.status, IBV_WC_SUCCESS);
          BOOST_REQUIRE_EQUAL(wc.wr_id, slot);
          BOOST_REQUIRE_EQUAL(wc.byte_len, kGrh + sizes[i]);
          BOOST_REQUIRE_EQUAL((wc.wc_flags & IBV_WC_WITH_IMM) != 0, (i % 3) == 0);
          if ((i % 3) == 0) BOOST_REQUIRE_EQUAL(ntohl(wc.imm_data), i);
          BOOST_REQUIRE(filled(b.buf.data() + slot * kSlot + kGrh, sizes[i], i));
        }
        BOOST_REQUIRE_EQUAL(b.post_recv(slot * kSlot, kSlot, slot), 0);
      }
      next = end;
    }
    const EmulatedStats sa = a.stats();
    const EmulatedStats sb = b.stats();
    BOOST_CHECK_EQUAL(sa.datagrams_sent, kCount);
    BOOST_CHECK_EQUAL(sa.send_drops, 0u);
    BOOST_CHECK_EQUAL(sb.datagrams_received, kCount);
    BOOST_CHECK_EQUAL(sb.dropped_no_recv + sb.dropped_qkey + sb.dropped_oversize + sb.dropped_malformed, 0u);
  }
}

BOOST_AUTO_TEST_SUITE_END()

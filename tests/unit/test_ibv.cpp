// The verbs backend's pure parts (lci/backend/ibv/{wire,plan,qp_attr,mr_attr}.hpp
// and lci/backend/select.hpp): everything that needs no RDMA device.
#include <doctest/doctest.h>

#include <atomic>
#include <cstring>
#include <set>
#include <thread>
#include <vector>

#include "lci/backend/ibv/mr_attr.hpp"
#include "lci/backend/ibv/plan.hpp"
#include "lci/backend/ibv/qp_attr.hpp"
#include "lci/backend/ibv/wire.hpp"
#include "lci/backend/select.hpp"

using namespace lci::ibv;

namespace {
port_address sample_address(uint8_t link_layer = IBV_LINK_LAYER_ETHERNET) {
  port_address a;
  a.lid = 0x1234;
  for (int i = 0; i < 16; ++i) a.gid[i] = static_cast<uint8_t>(0xa0 + i);
  a.mtu = IBV_MTU_4096;
  a.link_layer = link_layer;
  a.gid_index = 3;
  return a;
}
}  // namespace

TEST_CASE("port address: encode -> decode round trip") {
  for (uint8_t ll : {uint8_t(IBV_LINK_LAYER_INFINIBAND), uint8_t(IBV_LINK_LAYER_ETHERNET)}) {
    const port_address a = sample_address(ll);
    const std::string text = encode_port_address(a);
    CHECK(text.size() == 2 * port_address_bytes);
    CHECK(text.size() <= 512);
    CHECK(text.find_first_not_of("0123456789abcdef") == std::string::npos);
    port_address b;
    REQUIRE(decode_port_address(text, &b));
    CHECK(a == b);
  }
}

TEST_CASE("port address: malformed input is rejected and leaves the output alone") {
  const std::string good = encode_port_address(sample_address());
  port_address out = sample_address(IBV_LINK_LAYER_INFINIBAND);
  const port_address before = out;
  auto rejected = [&](const std::string& s) {
    const bool ok = decode_port_address(s, &out);
    return !ok && out == before;
  };
  CHECK(rejected(""));
  CHECK(rejected(good.substr(0, good.size() - 2)));   // short
  CHECK(rejected(good + "00"));                        // long
  CHECK(rejected(good.substr(0, good.size() - 1)));   // odd length
  std::string bad = good;
  bad[5] = 'g';
  CHECK(rejected(bad));                                // not hex
  bad = good;
  bad[0] = '0', bad[1] = '2';
  CHECK(rejected(bad));                                // format version 2
  bad = good;
  bad[38] = '0', bad[39] = '0';
  CHECK(rejected(bad));                                // MTU 0
  bad[38] = '0', bad[39] = '6';
  CHECK(rejected(bad));                                // MTU 6
  bad = good;
  bad[40] = '0', bad[41] = '3';
  CHECK(rejected(bad));                                // unknown link layer
  // Upper-case hex is accepted (decode is lenient in case only).
  std::string upper = good;
  for (char& c : upper) c = static_cast<char>(toupper(c));
  port_address u;
  CHECK(decode_port_address(upper, &u));
  CHECK(u == sample_address());
}

TEST_CASE("QP-number chunks: every rank finds its QP number, within the 512-char limit") {
  for (int n : {1, 2, 63, 64, 65, 200}) {
    std::vector<uint32_t> qpns(static_cast<size_t>(n));
    for (int r = 0; r < n; ++r) qpns[static_cast<size_t>(r)] = 0x100 + 7 * static_cast<uint32_t>(r);
    CHECK(qpn_chunks(n) == (n + 63) / 64);
    for (int r = 0; r < n; ++r) {
      const std::string chunk = encode_qpn_chunk(qpns, qpn_chunk_of(r));
      CHECK(chunk.size() <= 512);
      uint32_t q = 0;
      REQUIRE(decode_qpn_for(chunk, r, &q));
      CHECK(q == qpns[static_cast<size_t>(r)]);
    }
  }
  // Largest valid QP number, and big-endian text.
  const std::string one = encode_qpn_chunk({0xABCDEF}, 0);
  CHECK(one == "00abcdef");
  uint32_t q = 0;
  CHECK(decode_qpn_for(one, 0, &q));
  CHECK(q == 0xABCDEF);
}

TEST_CASE("QP-number chunks: malformed input is rejected") {
  uint32_t q = 42;
  CHECK_FALSE(decode_qpn_for("", 0, &q));
  CHECK_FALSE(decode_qpn_for("0000012", 0, &q));         // not a multiple of 8
  CHECK_FALSE(decode_qpn_for("0000012x", 0, &q));        // not hex
  CHECK_FALSE(decode_qpn_for("00000123", 1, &q));        // too short for rank 1
  CHECK_FALSE(decode_qpn_for("01000000", 0, &q));        // > 24 bits
  CHECK_FALSE(decode_qpn_for("00000001", 0, &q));        // QP1 is the GSI QP
  CHECK_FALSE(decode_qpn_for(std::string(520, '0'), 0, &q));  // over the limit
  CHECK(q == 42);
}

TEST_CASE("immediate data: network order on the wire, round trip") {
  for (uint32_t v : {0u, 1u, 0x12345678u, 0xFFFFFFFFu, 0x80000001u}) {
    const uint32_t wire = imm_to_wire(v);
    CHECK(imm_from_wire(wire) == v);
    unsigned char b[4];
    std::memcpy(b, &wire, 4);
    CHECK(b[0] == (v >> 24));  // big-endian in memory
    CHECK(b[3] == (v & 0xFF));
  }
}

TEST_CASE("initial PSN: 24 bits, the same on both sides") {
  for (uint32_t qpn : {2u, 0x1234u, 0xFFFFFFu}) {
    CHECK(initial_psn(qpn) <= 0xFFFFFFu);
    CHECK(initial_psn(qpn) == initial_psn(qpn));
  }
  CHECK(initial_psn(0x100) != initial_psn(0x101));
}

TEST_CASE("RESET -> INIT attributes") {
  const qp_step s = qp_to_init(2);
  CHECK(s.attr.qp_state == IBV_QPS_INIT);
  CHECK(s.attr.port_num == 2);
  CHECK(s.attr.pkey_index == 0);
  CHECK(s.attr.qp_access_flags ==
        (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ));
  CHECK(s.mask == (IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS));
}

TEST_CASE("INIT -> RTR attributes: RoCE uses a global route") {
  port_address local = sample_address(IBV_LINK_LAYER_ETHERNET);
  port_address remote = sample_address(IBV_LINK_LAYER_ETHERNET);
  remote.mtu = IBV_MTU_1024;
  remote.gid[15] = 0x42;
  const qp_step s = qp_to_rtr(local, remote, 0x4567, 1, 3, 16);
  CHECK(s.attr.qp_state == IBV_QPS_RTR);
  CHECK(s.attr.path_mtu == IBV_MTU_1024);  // the smaller of the two
  CHECK(s.attr.dest_qp_num == 0x4567);
  CHECK(s.attr.rq_psn == initial_psn(0x4567));
  CHECK(s.attr.max_dest_rd_atomic == 16);
  CHECK(s.attr.min_rnr_timer == min_rnr_timer);
  CHECK(s.attr.ah_attr.is_global == 1);
  CHECK(std::memcmp(s.attr.ah_attr.grh.dgid.raw, remote.gid, 16) == 0);
  CHECK(s.attr.ah_attr.grh.sgid_index == 3);
  CHECK(s.attr.ah_attr.grh.hop_limit > 1);  // RoCE v2 is routed
  CHECK(s.attr.ah_attr.port_num == 1);
  CHECK(s.attr.ah_attr.dlid == 0);
  CHECK(s.mask == (IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
                   IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER));
}

TEST_CASE("INIT -> RTR attributes: InfiniBand routes by LID") {
  port_address local = sample_address(IBV_LINK_LAYER_INFINIBAND);
  port_address remote = sample_address(IBV_LINK_LAYER_INFINIBAND);
  remote.lid = 0x77;
  local.mtu = IBV_MTU_2048;
  const qp_step s = qp_to_rtr(local, remote, 0x99, 1, 0, 4);
  CHECK(s.attr.ah_attr.is_global == 0);
  CHECK(s.attr.ah_attr.dlid == 0x77);
  CHECK(s.attr.path_mtu == IBV_MTU_2048);
  CHECK(s.attr.max_dest_rd_atomic == 4);
  // A peer without a LID is reached through its GID.
  remote.lid = 0;
  CHECK(qp_to_rtr(local, remote, 0x99, 1, 0, 4).attr.ah_attr.is_global == 1);
}

TEST_CASE("RTR -> RTS attributes: a slow receiver never breaks the connection") {
  const qp_step s = qp_to_rts(0x4567, 8);
  CHECK(s.attr.qp_state == IBV_QPS_RTS);
  CHECK(s.attr.sq_psn == initial_psn(0x4567));  // = the peer's rq_psn for us
  CHECK(s.attr.rnr_retry == 7);                  // 7 = retry forever
  CHECK(s.attr.retry_cnt == 7);
  CHECK(s.attr.timeout == ack_timeout);
  CHECK(s.attr.timeout >= 12);
  CHECK(s.attr.max_rd_atomic == 8);
  CHECK(s.mask == (IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
                   IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC));
  // The two ends agree: A's sq_psn is what B's RTR expects from A's QP.
  const port_address a = sample_address();
  CHECK(qp_to_rtr(a, a, 0x4567, 1, 0, 8).attr.rq_psn == s.attr.sq_psn);
}

TEST_CASE("queue plan: generous device") {
  device_limits lim{16384, 30, 4194303, 32767, 30, 16, 16};
  const queue_plan p = plan_queues(lim, 4);
  REQUIRE(p.ok);
  CHECK(p.sq_depth == 256);
  CHECK(p.srq_depth == 4096);
  CHECK(p.cq_size == 4096 + 4 * 256);
  CHECK(p.send_credits == 4 * 256);
  CHECK(p.max_inline == 256);
  CHECK(p.rd_atomic == 16);
  CHECK(p.max_sge == 1);
}

TEST_CASE("queue plan: everything clamped to small device limits") {
  device_limits lim{64, 1, 1000, 512, 1, 4, 2};
  queue_wish w;
  const queue_plan p = plan_queues(lim, 100, w);
  REQUIRE(p.ok);
  CHECK(p.sq_depth == 64);                   // max_qp_wr
  CHECK(p.srq_depth == 500);                 // half the CQ (max_srq_wr - 1 = 511)
  CHECK(p.cq_size == 1000);                  // max_cqe
  CHECK(p.srq_depth + p.send_credits <= p.cq_size);  // the CQ cannot overflow
  CHECK(p.send_credits == 500);
  CHECK(p.rd_atomic == 2);                   // min(max_qp_rd_atom, max_qp_init_rd_atom)
}

TEST_CASE("queue plan: SRQ limit, huge jobs and unusable devices") {
  device_limits lim{1024, 4, 1 << 20, 100, 1, 16, 16};
  queue_plan p = plan_queues(lim, 1);
  CHECK(p.srq_depth == 99);  // max_srq_wr - 1
  CHECK(p.cq_size == 99 + 256);
  // 100000 ranks x 256 send requests would overflow; the CQ stays at max_cqe.
  p = plan_queues(lim, 100000);
  CHECK(p.cq_size == (1u << 20));
  CHECK(p.send_credits == (1u << 20) - 99);
  CHECK_FALSE(plan_queues(device_limits{0, 1, 100, 100, 1, 1, 1}, 2).ok);
  CHECK_FALSE(plan_queues(device_limits{16, 0, 100, 100, 1, 1, 1}, 2).ok);
  CHECK_FALSE(plan_queues(device_limits{16, 1, 2, 100, 1, 1, 1}, 2).ok);
  CHECK_FALSE(plan_queues(device_limits{16, 1, 100, 1, 1, 1, 1}, 2).error.empty());
  // Devices that report no read resources still get one.
  CHECK(plan_queues(device_limits{16, 1, 100, 100, 1, 0, 0}, 2).rd_atomic == 1);
}

TEST_CASE("inline size: halved on refusal down to zero") {
  uint32_t v = 256;
  std::vector<uint32_t> tried;
  while (v) {
    tried.push_back(v);
    v = next_inline_try(v);
  }
  CHECK(tried == std::vector<uint32_t>{256, 128, 64, 32});
  CHECK(next_inline_try(60) == 0);
}

TEST_CASE("device and port choice") {
  std::vector<device_info> devs = {
      {"mlx5_0", {{1, false, IBV_LINK_LAYER_INFINIBAND}, {2, true, IBV_LINK_LAYER_INFINIBAND}}},
      {"mlx5_1", {{1, true, IBV_LINK_LAYER_ETHERNET}}},
  };
  port_choice c = choose_port(devs, "", 0);
  CHECK(c.device == 0);
  CHECK(c.port == 2);  // the first ACTIVE port
  c = choose_port(devs, "mlx5_1", 0);
  CHECK(c.device == 1);
  CHECK(c.port == 1);
  c = choose_port(devs, "", 1);
  CHECK(c.device == 1);  // port 1 is down on mlx5_0
  c = choose_port(devs, "mlx5_0", 1);
  CHECK(c.device == -1);
  CHECK(c.error.find("LCI_IBV_PORT") != std::string::npos);
  c = choose_port(devs, "hfi1_0", 0);
  CHECK(c.device == -1);
  CHECK(c.error.find("LCI_IBV_DEVICE") != std::string::npos);
  c = choose_port({}, "mlx5_9", 0);
  CHECK(c.error.find("LCI_IBV_DEVICE") != std::string::npos);
  c = choose_port({}, "", 0);
  CHECK(c.device == -1);
  CHECK(c.error.find("no active verbs device") != std::string::npos);
  devs[0].ports[1].active = false;
  devs[1].ports[0].active = false;
  c = choose_port(devs, "", 0);
  CHECK(c.device == -1);
  CHECK(c.error.find("no active verbs device") != std::string::npos);
}

TEST_CASE("GID choice") {
  std::vector<gid_entry> table(4);
  for (int i = 0; i < 4; ++i) table[static_cast<size_t>(i)].index = i;
  // 0: RoCE v1 link-local, 1: v2 link-local, 2: v1 IPv4, 3: v2 IPv4
  table[0].raw[0] = 0xfe, table[0].raw[1] = 0x80;
  table[1] = table[0], table[1].index = 1, table[1].roce_v2 = true;
  for (int i : {2, 3}) {
    table[static_cast<size_t>(i)].raw[10] = 0xff, table[static_cast<size_t>(i)].raw[11] = 0xff;
    table[static_cast<size_t>(i)].raw[12] = 10;
  }
  table[3].roce_v2 = true;
  CHECK(choose_gid(table, true, -1) == 3);
  CHECK(choose_gid(table, true, 1) == 1);   // override
  CHECK(choose_gid(table, false, -1) == 0); // InfiniBand
  table[3].roce_v2 = false;
  CHECK(choose_gid(table, true, -1) == 0);  // no v2 IPv4 entry
  CHECK(gid_is_ipv4_mapped(table[2].raw));
  CHECK_FALSE(gid_is_ipv4_mapped(table[0].raw));
}

TEST_CASE("send credits: never more in flight than granted") {
  credits qp(2), dev(3);
  CHECK(acquire_send_slot(qp, dev));
  CHECK(acquire_send_slot(qp, dev));
  CHECK_FALSE(acquire_send_slot(qp, dev));  // QP full: retry
  CHECK(qp.available() == 0);
  CHECK(dev.available() == 1);               // the refused try gave nothing away
  credits qp2(5);
  CHECK(acquire_send_slot(qp2, dev));
  CHECK_FALSE(acquire_send_slot(qp2, dev));  // CQ room gone: retry
  CHECK(qp2.available() == 4);               // and the QP credit came back
  qp.release();
  dev.release();
  CHECK(acquire_send_slot(qp, dev));
}

TEST_CASE("send credits: concurrent posters and completions keep the bound") {
  credits qp(8), dev(8);
  std::atomic<int> in_flight{0}, max_seen{0};
  std::atomic<bool> stop{false};
  std::vector<std::thread> ts;
  for (int t = 0; t < 4; ++t)
    ts.emplace_back([&] {
      for (int i = 0; i < 20000; ++i) {
        if (!acquire_send_slot(qp, dev)) continue;
        const int now = in_flight.fetch_add(1) + 1;
        int m = max_seen.load();
        while (now > m && !max_seen.compare_exchange_weak(m, now)) {}
        in_flight.fetch_sub(1);
        qp.release();
        dev.release();
      }
    });
  for (auto& t : ts) t.join();
  stop = true;
  CHECK(max_seen.load() <= 8);
  CHECK(qp.available() == 8);
  CHECK(dev.available() == 8);
}

TEST_CASE("work-request ids: receives odd, sends even, inject zero") {
  alignas(8) static char ctx[16];
  CHECK(is_recv_wr_id(recv_wr_id(0)));
  CHECK(is_recv_wr_id(recv_wr_id(123456)));
  CHECK(recv_slot_of(recv_wr_id(123456)) == 123456);
  CHECK_FALSE(is_recv_wr_id(send_wr_id(ctx)));
  CHECK_FALSE(is_recv_wr_id(inject_wr_id));
  CHECK(send_wr_id(ctx) != inject_wr_id);
}

TEST_CASE("QP number -> rank map") {
  qpn_map m;
  CHECK(m.find(5) == -1);  // empty
  m.reserve(1000);
  std::set<uint32_t> used;
  for (int r = 0; r < 1000; ++r) {
    const uint32_t q = 0x200 + 17 * static_cast<uint32_t>(r);
    REQUIRE(m.insert(q, r));
    used.insert(q);
  }
  for (int r = 0; r < 1000; ++r) CHECK(m.find(0x200 + 17 * static_cast<uint32_t>(r)) == r);
  CHECK_FALSE(m.insert(0x200, 5));  // duplicate
  CHECK(m.find(0x201) == -1);
  CHECK(m.find(0xFFFFFF) == -1);
}

TEST_CASE("backend choice") {
  using lci::net::backend_kind;
  using lci::net::choose_backend;
  auto c = choose_backend("ofi", true, "");
  CHECK(c.kind == backend_kind::ofi);
  CHECK(c.reason == "LCI_BACKEND=ofi");
  CHECK(c.error.empty());
  c = choose_backend("ibv", true, "");
  CHECK(c.kind == backend_kind::ibv);
  CHECK(c.error.empty());
  c = choose_backend("ibv", true, "no active verbs device found (no verbs device present)");
  CHECK(c.error.find("LCI_BACKEND=ibv: no active verbs device found") == 0);
  c = choose_backend("ibv", false, "");
  CHECK(c.error.find("built without the verbs backend") != std::string::npos);
  c = choose_backend("bogus", true, "");
  CHECK(c.error.find("LCI_BACKEND") != std::string::npos);
  c = choose_backend("", true, "");
  CHECK(c.kind == backend_kind::ibv);
  c = choose_backend("", true, "no active verbs device found (no port in state ACTIVE)");
  CHECK(c.kind == backend_kind::ofi);
  CHECK(c.reason.find("no active verbs device found") == 0);
  c = choose_backend("", false, "");
  CHECK(c.kind == backend_kind::ofi);
  CHECK(c.error.empty());
}

TEST_CASE("registration access: a source asks for no write access") {
  using lci::net::mr_access;
  // Read-only memory (string literals, PROT_READ mappings) registers only
  // without LOCAL_WRITE and the remote flags, which need it.
  CHECK(mr_access_flags(mr_access::source, false) == 0);
  CHECK(mr_access_flags(mr_access::source, true) == IBV_ACCESS_ON_DEMAND);
  CHECK(mr_access_flags(mr_access::local, false) == IBV_ACCESS_LOCAL_WRITE);
  CHECK(mr_access_flags(mr_access::remote, false) ==
        (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ));
  CHECK(mr_access_flags(mr_access::remote, true) ==
        (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
         IBV_ACCESS_ON_DEMAND));
}

TEST_CASE("message size: the port's max_msg_sz, at most 2^31") {
  CHECK(message_limit_of_port(1u << 30) == (size_t{1} << 30));
  CHECK(message_limit_of_port(4096) == 4096);
  CHECK(message_limit_of_port((1u << 31) - 1) == (size_t{1} << 31) - 1);
  CHECK(message_limit_of_port(1u << 31) == (size_t{1} << 31));
  CHECK(message_limit_of_port(UINT32_MAX) == (size_t{1} << 31));  // more than IB allows
  CHECK(message_limit_of_port(0) == (size_t{1} << 31));           // not reported
  // Every piece then fits the 32-bit ibv_sge::length.
  CHECK(lci::net::rdma_piece_size(SIZE_MAX, message_limit_of_port(UINT32_MAX)) <= UINT32_MAX);
}

// The three ibv_modify_qp steps that connect a reliable-connected QP, as
// pure functions building (attributes, mask) pairs (no device needed;
// tests/unit/test_ibv.cpp checks every field and mask bit).
//
// Timeouts, chosen so that a slow receiver never breaks a connection:
// - rnr_retry = 7: a receiver-not-ready NAK (the shared receive queue ran
//   dry because the receiver is not progressing) is retried forever;
// - min_rnr_timer = 12 (0.64 ms): how long the sender waits before such a retry;
// - timeout = 14 (4.096 us * 2^14 = 67 ms) and retry_cnt = 7: a packet
//   that is lost, or a peer that is gone, is given up after about 7 x 67 ms
//   and reported as a failed completion (a dead peer is the launcher's
//   business; these only cover transport loss).
#pragma once

#include <infiniband/verbs.h>

#include <cstring>

#include "lci/backend/ibv/wire.hpp"

namespace lci::ibv {

struct qp_step {
  ibv_qp_attr attr;
  int mask;
};

inline constexpr uint8_t rnr_retry_infinite = 7;
inline constexpr uint8_t min_rnr_timer = 12;
inline constexpr uint8_t ack_timeout = 14;
inline constexpr uint8_t transport_retries = 7;
inline constexpr uint8_t roce_hop_limit = 64;

inline constexpr int qp_access =
    IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;

// RESET -> INIT: the port, the partition key 0 and remote access rights.
inline qp_step qp_to_init(uint8_t port) {
  qp_step s;
  std::memset(&s.attr, 0, sizeof(s.attr));
  s.attr.qp_state = IBV_QPS_INIT;
  s.attr.pkey_index = 0;
  s.attr.port_num = port;
  s.attr.qp_access_flags = qp_access;
  s.mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS;
  return s;
}

// INIT -> RTR: where the peer's QP is (remote_qpn on the port at `remote`),
// the path MTU (the smaller of both ports'), the first PSN the peer will
// send, and the read responder resources. On RoCE (Ethernet link layer) the
// address handle is global (GRH with the peer's GID and our GID index; LID
// is meaningless there); on InfiniBand it routes by LID, global only when
// the peer has no LID.
inline qp_step qp_to_rtr(const port_address& local, const port_address& remote, uint32_t remote_qpn,
                         uint8_t port, uint8_t sgid_index, uint8_t rd_atomic) {
  qp_step s;
  std::memset(&s.attr, 0, sizeof(s.attr));
  s.attr.qp_state = IBV_QPS_RTR;
  s.attr.path_mtu = static_cast<ibv_mtu>(local.mtu < remote.mtu ? local.mtu : remote.mtu);
  s.attr.dest_qp_num = remote_qpn;
  s.attr.rq_psn = initial_psn(remote_qpn);
  s.attr.max_dest_rd_atomic = rd_atomic;
  s.attr.min_rnr_timer = min_rnr_timer;
  ibv_ah_attr& ah = s.attr.ah_attr;
  ah.port_num = port;
  ah.sl = 0;
  ah.src_path_bits = 0;
  const bool global = local.link_layer == IBV_LINK_LAYER_ETHERNET || remote.lid == 0;
  if (global) {
    ah.is_global = 1;
    std::memcpy(ah.grh.dgid.raw, remote.gid, 16);
    ah.grh.sgid_index = sgid_index;
    ah.grh.hop_limit = roce_hop_limit;
    ah.grh.flow_label = 0;
    ah.grh.traffic_class = 0;
    ah.dlid = 0;
  } else {
    ah.is_global = 0;
    ah.dlid = remote.lid;
  }
  s.mask = IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
           IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
  return s;
}

// RTR -> RTS: our first PSN (what the peer computed as its rq_psn), the
// transport timeouts and retries, and the reads we may have in flight.
inline qp_step qp_to_rts(uint32_t local_qpn, uint8_t rd_atomic) {
  qp_step s;
  std::memset(&s.attr, 0, sizeof(s.attr));
  s.attr.qp_state = IBV_QPS_RTS;
  s.attr.sq_psn = initial_psn(local_qpn);
  s.attr.timeout = ack_timeout;
  s.attr.retry_cnt = transport_retries;
  s.attr.rnr_retry = rnr_retry_infinite;
  s.attr.max_rd_atomic = rd_atomic;
  s.mask = IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
           IBV_QP_MAX_QP_RD_ATOMIC;
  return s;
}

}  // namespace lci::ibv

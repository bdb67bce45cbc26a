// libibverbs backend: set-up, connection, registration, error paths.
// Every verbs call is checked; see lci/backend/ibv/README.md for the list and what each
// failure does.
#include "lci/backend/ibv/ibv.hpp"

#include <cstring>

#include "lci.h"
#include "lci/backend/ibv/mr_attr.hpp"
#include "lci/backend/ibv/probe.hpp"
#include "lci/backend/ibv/qp_attr.hpp"
#include "lci/util/log.hpp"

namespace lci::ibv {
namespace {

// Set-up calls that return 0 or an errno value (some providers return -1
// and set errno instead).
void check(int rc, const char* what) {
  if (rc == 0) return;
  const int err = rc > 0 ? rc : errno;
  fatal("verbs: %s failed: %s (%d)", what, std::strerror(err), err);
}

template <typename T>
T* check_ptr(T* p, const char* what) {
  if (!p) fatal("verbs: %s failed: %s (%d)", what, std::strerror(errno), errno);
  return p;
}

}  // namespace

ibv_device::ibv_device(bootstrap::bootstrap& boot, int group_index, const net::settings& s) {
  open_port(s);
  create_queues(boot.size(), s.ibv_use_odp);
  connect_all(boot, group_index, s.ibv_on_demand);
  LCI_LOG(info,
          "verbs device %d on %s (GID index %d, inline %zu, SQ %u per peer, SRQ %u, CQ %u, max "
          "message %zu)",
          group_index, provider_.c_str(), gid_index_, max_inline_, plan_.sq_depth,
          plan_.srq_depth, plan_.cq_size, max_msg_size_);
}

void ibv_device::open_port(const net::settings& s) {
  // Device and port: the first ACTIVE port, or the ones asked for.
  std::vector<device_info> devs;
  port_choice choice = probe_port(s.ibv_device, s.ibv_port, &devs);
  if (choice.device < 0) fatal("verbs: %s", choice.error.c_str());
  const std::string& name = devs[static_cast<size_t>(choice.device)].name;
  port_ = static_cast<uint8_t>(choice.port);

  int n = 0;
  ::ibv_device** list = check_ptr(ibv_get_device_list(&n), "ibv_get_device_list");
  for (int i = 0; i < n && !ctx_; ++i)
    if (name == ibv_get_device_name(list[i])) ctx_ = ibv_open_device(list[i]);
  const int open_errno = errno;
  ibv_free_device_list(list);
  if (!ctx_)
    fatal("verbs: ibv_open_device(%s) failed: %s (%d)", name.c_str(), std::strerror(open_errno),
          open_errno);
  provider_ = "ibv:" + name + ":" + std::to_string(port_);

  ibv_port_attr pa;
  check(ibv_query_port(ctx_, port_, &pa), "ibv_query_port");
  if (pa.state != IBV_PORT_ACTIVE) fatal("verbs: port %d of %s is no longer active", port_, name.c_str());
  max_msg_size_ = message_limit_of_port(pa.max_msg_sz);
  local_.lid = pa.lid;
  local_.mtu = static_cast<uint8_t>(pa.active_mtu);
  local_.link_layer = pa.link_layer == IBV_LINK_LAYER_ETHERNET ? IBV_LINK_LAYER_ETHERNET
                                                                 : IBV_LINK_LAYER_INFINIBAND;
  const bool roce = local_.link_layer == IBV_LINK_LAYER_ETHERNET;

  // GID: read the table (entries that fail to read are empty slots), then
  // choose (plan.hpp); the chosen one must be readable.
  std::vector<gid_entry> table;
  for (int i = 0; i < pa.gid_tbl_len; ++i) {
    ibv_gid_entry e;
    if (ibv_query_gid_ex(ctx_, port_, static_cast<uint32_t>(i), &e, 0) != 0) continue;
    gid_entry g;
    g.index = i;
    std::memcpy(g.raw, e.gid.raw, 16);
    g.roce_v2 = e.gid_type == IBV_GID_TYPE_ROCE_V2;
    table.push_back(g);
  }
  const int gid = choose_gid(table, roce, s.ibv_gid_index);
  if (gid < 0 || gid >= pa.gid_tbl_len || gid > 255)
    fatal("verbs: GID index %d (LCI_IBV_GID_IDX) is outside port %d's table of %d", gid, port_,
          pa.gid_tbl_len);
  ibv_gid raw;
  if (ibv_query_gid(ctx_, port_, gid, &raw) != 0) {
    if (roce || s.ibv_gid_index >= 0)
      fatal("verbs: ibv_query_gid(port %d, index %d) failed: %s", port_, gid, std::strerror(errno));
    std::memset(&raw, 0, sizeof(raw));  // InfiniBand routes by LID; the GID is optional
  }
  gid_index_ = static_cast<uint8_t>(gid);
  local_.gid_index = gid_index_;
  std::memcpy(local_.gid, raw.raw, 16);
  if (!roce && local_.lid == 0) fatal("verbs: InfiniBand port %d of %s has no LID (is a subnet manager running?)", port_, name.c_str());
}

void ibv_device::create_queues(int nranks, bool use_odp) {
  ibv_device_attr_ex ax;
  std::memset(&ax, 0, sizeof(ax));
  check(ibv_query_device_ex(ctx_, nullptr, &ax), "ibv_query_device_ex");
  const ibv_device_attr& a = ax.orig_attr;
  device_limits lim;
  lim.max_qp_wr = a.max_qp_wr;
  lim.max_sge = a.max_sge;
  lim.max_cqe = a.max_cqe;
  lim.max_srq_wr = a.max_srq_wr;
  lim.max_srq_sge = a.max_srq_sge;
  lim.max_qp_rd_atom = a.max_qp_rd_atom;
  lim.max_qp_init_rd_atom = a.max_qp_init_rd_atom;
  plan_ = plan_queues(lim, nranks);
  if (!plan_.ok) fatal("verbs: %s: %s", provider_.c_str(), plan_.error.c_str());

  if (use_odp) {
    const uint32_t need = IBV_ODP_SUPPORT_SEND | IBV_ODP_SUPPORT_RECV | IBV_ODP_SUPPORT_WRITE |
                          IBV_ODP_SUPPORT_READ;
    odp_ = (ax.odp_caps.general_caps & IBV_ODP_SUPPORT) &&
           (ax.odp_caps.per_transport_caps.rc_odp_caps & need) == need;
    if (!odp_)
      LCI_WARN("verbs: LCI_IBV_USE_ODP=1 but %s has no on-demand paging for RC; "
               "registering memory the usual way", provider_.c_str());
  }

  pd_ = check_ptr(ibv_alloc_pd(ctx_), "ibv_alloc_pd");
  cq_ = check_ptr(ibv_create_cq(ctx_, static_cast<int>(plan_.cq_size), nullptr, nullptr, 0),
                  "ibv_create_cq");
  ibv_srq_init_attr sa;
  std::memset(&sa, 0, sizeof(sa));
  sa.attr.max_wr = plan_.srq_depth;
  sa.attr.max_sge = 1;
  srq_ = check_ptr(ibv_create_srq(pd_, &sa), "ibv_create_srq");
  // The SRQ may be larger than asked; the slots (and rx_queue_size) are what was asked.
  slots_.assign(plan_.srq_depth, recv_slot{});
  free_slots_.reserve(plan_.srq_depth);
  for (uint32_t i = plan_.srq_depth; i-- > 0;) free_slots_.push_back(i);

  // One RC QP per rank. Inline: ask for plan_.max_inline; a device that
  // refuses gets asked for less (next_inline_try).
  peers_ = std::make_unique<peer[]>(static_cast<size_t>(nranks));
  nranks_ = nranks;
  qpns_.reserve(static_cast<size_t>(nranks));
  uint32_t inline_ask = plan_.max_inline;
  for (int r = 0; r < nranks; ++r) {
    ibv_qp_init_attr qa;
    ibv_qp* qp = nullptr;
    for (;;) {
      std::memset(&qa, 0, sizeof(qa));
      qa.send_cq = cq_;
      qa.recv_cq = cq_;
      qa.srq = srq_;
      qa.qp_type = IBV_QPT_RC;
      qa.sq_sig_all = 0;
      qa.cap.max_send_wr = plan_.sq_depth;
      qa.cap.max_send_sge = plan_.max_sge;
      qa.cap.max_inline_data = inline_ask;
      qp = ibv_create_qp(pd_, &qa);
      if (qp || inline_ask == 0 || (errno != EINVAL && errno != ENOMEM)) break;
      inline_ask = next_inline_try(inline_ask);
    }
    if (!qp)
      fatal("verbs: ibv_create_qp (QP %d of %d, %u send requests) failed: %s", r + 1, nranks,
            plan_.sq_depth, std::strerror(errno));
    peer& p = peers_[static_cast<size_t>(r)];
    p.qp = qp;
    // The provider may round the queue up; the credits stay at what was asked.
    p.sq.reset(static_cast<int>(plan_.sq_depth));
    if (r == 0 || qa.cap.max_inline_data < max_inline_) max_inline_ = qa.cap.max_inline_data;
    if (!qpns_.insert(qp->qp_num, r)) fatal("verbs: QP number %u returned twice", qp->qp_num);
    const qp_step init = qp_to_init(port_);
    check(ibv_modify_qp(qp, const_cast<ibv_qp_attr*>(&init.attr), init.mask),
          "ibv_modify_qp(RESET->INIT)");
  }
  send_credits_.reset(static_cast<int>(plan_.send_credits));
}

void ibv_device::connect_all(bootstrap::bootstrap& boot, int group_index, bool on_demand) {
  if (on_demand)
    LCI_LOG(info, "verbs: LCI_IBV_ON_DEMAND=1: on-demand connection is not implemented yet; "
                  "connecting every peer at start-up");
  const int n = boot.size();
  const std::string base = "ibv" + std::to_string(group_index);
  boot.put(base, encode_port_address(local_));
  std::vector<uint32_t> mine(static_cast<size_t>(n));
  for (int r = 0; r < n; ++r) mine[static_cast<size_t>(r)] = peers_[static_cast<size_t>(r)].qp->qp_num;
  for (int k = 0; k < qpn_chunks(n); ++k) boot.put(base + "q" + std::to_string(k), encode_qpn_chunk(mine, k));
  boot.fence();

  const std::string my_chunk = base + "q" + std::to_string(qpn_chunk_of(boot.rank()));
  for (int r = 0; r < n; ++r) {
    port_address remote;
    const std::string text = boot.get(r, base);
    if (!decode_port_address(text, &remote))
      fatal("verbs: malformed port address \"%s\" from rank %d", text.c_str(), r);
    if (remote.link_layer != local_.link_layer)
      fatal("verbs: rank %d is on %s, this rank on %s", r,
            remote.link_layer == IBV_LINK_LAYER_ETHERNET ? "RoCE" : "InfiniBand",
            local_.link_layer == IBV_LINK_LAYER_ETHERNET ? "RoCE" : "InfiniBand");
    uint32_t remote_qpn = 0;
    const std::string chunk = boot.get(r, my_chunk);
    if (!decode_qpn_for(chunk, boot.rank(), &remote_qpn))
      fatal("verbs: malformed QP numbers \"%s\" from rank %d", chunk.c_str(), r);
    ibv_qp* qp = peers_[static_cast<size_t>(r)].qp;
    const qp_step rtr = qp_to_rtr(local_, remote, remote_qpn, port_, gid_index_, plan_.rd_atomic);
    int rc = ibv_modify_qp(qp, const_cast<ibv_qp_attr*>(&rtr.attr), rtr.mask);
    if (rc) {
      const int err = rc > 0 ? rc : errno;
      fatal("verbs: ibv_modify_qp(INIT->RTR) to rank %d (QP %u) failed: %s (%d)", r, remote_qpn,
            std::strerror(err), err);
    }
    const qp_step rts = qp_to_rts(qp->qp_num, plan_.rd_atomic);
    rc = ibv_modify_qp(qp, const_cast<ibv_qp_attr*>(&rts.attr), rts.mask);
    if (rc) {
      const int err = rc > 0 ? rc : errno;
      fatal("verbs: ibv_modify_qp(RTR->RTS) to rank %d failed: %s (%d)", r, std::strerror(err), err);
    }
  }
}

ibv_device::~ibv_device() {
  // Reverse order of creation; a failure here is reported and ignored.
  auto warn = [](int rc, const char* what) {
    if (rc) LCI_WARN("verbs: %s failed: %s", what, std::strerror(rc > 0 ? rc : errno));
  };
  if (peers_) {
    const size_t n = static_cast<size_t>(nranks_);
    for (size_t r = n; r-- > 0;)
      if (peers_[r].qp) warn(ibv_destroy_qp(peers_[r].qp), "ibv_destroy_qp");
  }
  if (srq_) warn(ibv_destroy_srq(srq_), "ibv_destroy_srq");
  if (cq_) warn(ibv_destroy_cq(cq_), "ibv_destroy_cq");
  if (pd_) warn(ibv_dealloc_pd(pd_), "ibv_dealloc_pd (memory still registered?)");
  if (ctx_) warn(ibv_close_device(ctx_), "ibv_close_device");
}

net::mr ibv_device::register_memory(void* addr, size_t len, net::mr_access access) {
  ibv_mr* m = ibv_reg_mr(pd_, addr, len, mr_access_flags(access, odp_));
  if (!m) {
    LCI_LOG(info, "verbs: ibv_reg_mr(%p, %zu bytes) failed: %s%s", addr, len, std::strerror(errno),
            errno == ENOMEM || errno == EFAULT ? " (check `ulimit -l`: locked-memory limit)" : "");
    return net::mr{};
  }
  net::mr out;
  out.handle = m;
  out.desc = m;
  out.rkey = m->rkey;
  return out;
}

void ibv_device::deregister_memory(net::mr& m) {
  if (!m.handle) return;
  const int rc = ibv_dereg_mr(static_cast<ibv_mr*>(m.handle));
  if (rc) LCI_WARN("verbs: ibv_dereg_mr failed: %s", std::strerror(rc > 0 ? rc : errno));
  m = net::mr{};
}

status ibv_device::post_recv(void* buf, size_t len, void* desc, void* ctx) {
  lock_slots();
  if (free_slots_.empty()) {
    unlock_slots();
    return status::retry;  // as many receives posted as the SRQ holds
  }
  const uint32_t slot = free_slots_.back();
  free_slots_.pop_back();
  unlock_slots();
  recv_slot& s = slots_[slot];
  s.ctx = ctx;
  s.addr = reinterpret_cast<uint64_t>(buf);
  s.length = static_cast<uint32_t>(len);
  s.lkey = desc ? static_cast<ibv_mr*>(desc)->lkey : 0;
  ibv_sge sge{s.addr, s.length, s.lkey};
  ibv_recv_wr wr;
  wr.wr_id = recv_wr_id(slot);
  wr.next = nullptr;
  wr.sg_list = &sge;
  wr.num_sge = 1;
  ibv_recv_wr* bad = nullptr;
  net::annotate_post(this);
  const int rc = ibv_post_srq_recv(srq_, &wr, &bad);
  if (__builtin_expect(rc == 0, 1)) return status::ok;
  free_slot(slot);
  const int err = rc > 0 ? rc : errno;
  if (err == ENOMEM || err == EAGAIN) return status::retry;
  fatal("verbs: ibv_post_srq_recv failed: %s (%d)", std::strerror(err), err);
}

void ibv_device::repost_slot(uint32_t slot) {
  const recv_slot& s = slots_[slot];
  ibv_sge sge{s.addr, s.length, s.lkey};
  ibv_recv_wr wr;
  wr.wr_id = recv_wr_id(slot);
  wr.next = nullptr;
  wr.sg_list = &sge;
  wr.num_sge = 1;
  ibv_recv_wr* bad = nullptr;
  const int rc = ibv_post_srq_recv(srq_, &wr, &bad);
  if (rc == 0) return;
  // The SRQ just gave this entry back, so it has room: any failure is a
  // broken queue.
  const int err = rc > 0 ? rc : errno;
  fatal("verbs: ibv_post_srq_recv (re-posting after an RDMA write with immediate) failed: %s (%d)",
        std::strerror(err), err);
}

status ibv_device::on_post_error(peer& p, int rc, const char* what) {
  p.sq.release();
  send_credits_.release();
  const int err = rc > 0 ? rc : errno;
  // ENOMEM: the send queue is full (the credits should prevent it, but a
  // provider may count differently); EAGAIN: momentarily out of resources.
  if (err == ENOMEM || err == EAGAIN) return status::retry;
  fatal("verbs: %s failed: %s (%d)", what, std::strerror(err), err);
}

void ibv_device::length_overflow(size_t len) {
  fatal("verbs: a work request of %zu bytes (more than a 32-bit length holds) was posted", len);
}

void ibv_device::poll_failed(int rc) {
  fatal("verbs: ibv_poll_cq failed (%d): the completion queue is broken", rc);
}

int ibv_device::on_failed_wc(const ibv_wc& w, completion* out) {
  // Only wr_id, status, qp_num and vendor_err are valid in a failed
  // completion; opcode is not. The wr_id says what it was.
  const int rank = qpns_.find(w.qp_num);
  if (is_recv_wr_id(w.wr_id)) {
    if (w.status == IBV_WC_WR_FLUSH_ERR) {  // a QP went to the error state: its
      free_slot(recv_slot_of(w.wr_id));      // failure was reported already
      return 0;
    }
    fatal("verbs: receive from rank %d failed: %s (vendor error 0x%x)", rank,
          ibv_wc_status_str(w.status), w.vendor_err);
  }
  if (rank >= 0) peers_[static_cast<size_t>(rank)].sq.release();
  send_credits_.release();
  if (!error_logged_.exchange(true, std::memory_order_relaxed))
    LCI_WARN("verbs: an operation to rank %d failed: %s (vendor error 0x%x); the connection to "
             "rank %d is broken", rank, ibv_wc_status_str(w.status), w.vendor_err, rank);
  if (w.wr_id == inject_wr_id)
    fatal("verbs: a short message to rank %d was lost: %s", rank, ibv_wc_status_str(w.status));
  out->kind = completion_kind::failed;
  out->ctx = reinterpret_cast<void*>(w.wr_id);
  out->error = static_cast<int>(w.status);
  out->imm = 0;
  out->src_rank = rank;
  out->length = 0;
  return 1;
}

}  // namespace lci::ibv

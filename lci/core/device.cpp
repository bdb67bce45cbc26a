// Device set-up and tear-down, and the progress engine.
#include "lci/core/device.hpp"

#include <sys/mman.h>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstring>

#include "lci/core/config.hpp"
#include "lci/util/log.hpp"
#include "lci/core/runtime.hpp"
#include "lci/core/rdma.hpp"
#include "lci/core/test_hooks.hpp"
#include "lci/core/two_sided.hpp"
#include "lci/core/validate.hpp"

namespace lci {
namespace {

char* map_slab(size_t bytes, const char* what) {
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) fatal("LCI_device_init: cannot map %zu bytes for %s", bytes, what);
  return static_cast<char*>(p);
}

// Why a completion's source names no rank of the job.
const char* source_problem(int src_rank) {
  switch (src_rank) {
    case net::unknown_source: return "source (an address outside the job)";
    case net::bad_token: return "job token";
    default: return "source rank";
  }
}

}  // namespace

device::device(int index) : group_index(index) {
  runtime& rt = *g_runtime;
  net = std::make_unique<net::backend_device>(*rt.boot, group_index, backend_settings());
  max_inject = net->max_inject();

  // Each packet: header, LCI_MEDIUM_SIZE payload, room for a trailer.
  packet_size = static_cast<size_t>(LCI_PACKET_SIZE) + packet_slack;
  recv_size = static_cast<size_t>(LCI_MEDIUM_SIZE) + trailer_size;
  const size_t npackets = static_cast<size_t>(LCI_SERVER_NUM_PKTS);
  slab_bytes = packet_size * npackets;
  slab = map_slab(slab_bytes, "packets");
  // Sent from and received into only: peers' RDMA cannot reach the slab.
  slab_mr = net->register_memory(slab, slab_bytes, net::mr_access::local);
  if (!slab_mr.handle) fatal("registering the packet pool (%zu bytes) failed", slab_bytes);
  for (size_t i = 0; i < npackets; ++i)
    reinterpret_cast<packet*>(slab + i * packet_size)->dev = this;
  packets = std::make_unique<packet_pool>(slab, packet_size, npackets);

  // Receive descriptors: as many as packets, then heap overflow (a receive
  // post never fails).
  const size_t nctx = std::max<size_t>(npackets, 1024);
  ctx_slab_bytes = sizeof(recv_ctx) * nctx;
  ctx_slab = map_slab(ctx_slab_bytes, "receive descriptors");
  ctxs = std::make_unique<packet_pool>(ctx_slab, sizeof(recv_ctx), nctx);

  table = std::make_unique<match_table>(static_cast<size_t>(LCI_DEFAULT_TABLE_LENGTH));
  // LCI_SEGMENT_ALL registrations: cached only where a stale registration
  // cannot reach the wrong pages (see decide_caching in reg_cache.hpp).
  const caching_decision caching =
      decide_caching(LCI_USE_DREG, net->registrations_pin(), mem_hooks::active());
  reg_cache::options reg_options;
  reg_options.cached = caching.cache;
  reg_options.max_entries = static_cast<size_t>(g_reg_cache_max_entries);
  regs = make_reg_cache(net::mr_access::remote, reg_options);
  source_regs = make_reg_cache(net::mr_access::source, reg_options);
  LCI_LOG(info, "device %d (%s): LCI_SEGMENT_ALL registrations %s", group_index,
          net->provider_name(), caching.reason);
  // RDMA transfers are split into pieces the backend can move in one go.
  size_t backend_max = net->max_message_size();
  if (const size_t limit = g_test_max_message.load(std::memory_order_relaxed))
    backend_max = std::min(backend_max, limit);
  rdma_piece = net::rdma_piece_size(LCI_MAX_SINGLE_MESSAGE_SIZE, backend_max);
  LCI_LOG(info,
          "device %d: RDMA pieces of at most %zu bytes (LCI_MAX_SINGLE_MESSAGE_SIZE %zu, "
          "backend maximum %zu)",
          group_index, rdma_piece, LCI_MAX_SINGLE_MESSAGE_SIZE, backend_max);
  post_initial_receives();
  // Every rank has its receives posted before anyone sends to this device,
  // and every rank has connected to this one.
  rt.boot->barrier();
  net->peers_attached();
}

std::unique_ptr<reg_cache> device::make_reg_cache(net::mr_access access,
                                                  const reg_cache::options& options) {
  return std::make_unique<reg_cache>(
      [this, access](void* address, size_t length) -> void* {
        const net::mr m = register_memory(*this, address, length, access);
        return m.handle ? new net::mr(m) : nullptr;  // nullptr: the operation is refused
      },
      [this](void* handle) {
        auto* m = static_cast<net::mr*>(handle);
        net->deregister_memory(*m);
        delete m;
      },
      options);
}

device::~device() {
  reg_cache::stats rs = regs->get_stats();
  const reg_cache::stats ss = source_regs->get_stats();
  rs.hits += ss.hits;
  rs.misses += ss.misses;
  rs.uncached += ss.uncached;
  rs.evictions += ss.evictions;
  rs.invalidations += ss.invalidations;
  LCI_LOG(info,
          "device %d: LCI_SEGMENT_ALL registrations: %llu hits, %llu misses, %llu per use, "
          "%llu evictions, %llu invalidations",
          group_index, static_cast<unsigned long long>(rs.hits),
          static_cast<unsigned long long>(rs.misses), static_cast<unsigned long long>(rs.uncached),
          static_cast<unsigned long long>(rs.evictions),
          static_cast<unsigned long long>(rs.invalidations));
  source_regs.reset();
  regs.reset();
  net->deregister_memory(slab_mr);
  ctxs.reset();
  packets.reset();
  net.reset();
  table.reset();
  munmap(ctx_slab, ctx_slab_bytes);
  munmap(slab, slab_bytes);
  magic = 0;
}

void device::post_initial_receives() {
  // Keep up to LCI_SERVER_MAX_RECVS packets posted, within the provider's
  // receive queue and leaving at least half of the pool for sends.
  size_t n = static_cast<size_t>(LCI_SERVER_MAX_RECVS);
  n = std::min(n, net->rx_queue_size());
  n = std::min(n, packets->capacity() / 2);
  n = std::max<size_t>(n, 1);
  for (size_t i = 0; i < n; ++i) {
    packet* p = get_packet();
    if (!p) {
      recv_deficit.fetch_add(1, std::memory_order_relaxed);
      continue;
    }
    post_recv_packet(p);
  }
}

void device::post_recv_packet(packet* p) {
  if (__builtin_expect(take_test_count(g_test_refuse_recv_posts), 0) ||
      net->post_recv(p->payload(), recv_size, slab_mr.desc, p) != net::status::ok) {
    backlog_op b;
    b.what = backlog_op::op::recv;
    b.pkt = p;
    push_backlog(std::move(b));
  }
}

namespace {
// The device whose backlog this thread is draining (its backlog_lock held).
thread_local const device* t_draining = nullptr;
}  // namespace

void device::push_backlog(backlog_op&& op) {
  LCI_PROF_INC(*this, backlog_pushes);
  // The thread that drains this backlog already holds the lock: sending a
  // queued control message takes a packet, which may first re-post a
  // receive (get_send_packet_slow), and a refused post lands here. The new
  // entry goes to the back; the entry being sent, at the front, stays valid
  // (std::deque::push_back moves no element).
  const bool held = t_draining == this;
  if (!held) backlog_lock.lock();
  backlog.push_back(std::move(op));
  backlog_size.fetch_add(1, std::memory_order_release);
  if (!held) backlog_lock.unlock();
}

bool device::drain_backlog() {
  if (!backlog_lock.try_lock()) return false;
  t_draining = this;
  bool did = false;
  // Entries leave in order; one that is refused again stops the pass. An
  // RDMA entry is taken out first: posting it may queue it again.
  while (!backlog.empty()) {
    backlog_op& op = backlog.front();
    if (op.what == backlog_op::op::rdma) {
      rdv_op* rdv = op.rdv;
      backlog.pop_front();
      backlog_size.fetch_sub(1, std::memory_order_relaxed);
      t_draining = nullptr;
      backlog_lock.unlock();
      post_rdma(*this, rdv);
      return true;
    }
    net::status st;
    if (op.what == backlog_op::op::recv) {
      st = net->post_recv(op.pkt->payload(), recv_size, slab_mr.desc, op.pkt);
    } else {
      st = send_control_now(*this, op.rank, op.imm, op.bytes.data(), op.bytes.size());
    }
    if (st != net::status::ok) break;
    backlog.pop_front();
    backlog_size.fetch_sub(1, std::memory_order_relaxed);
    did = true;
  }
  t_draining = nullptr;
  backlog_lock.unlock();
  return did;
}

bool device::refill_receives() {
  bool did = false;
  int want = recv_deficit.load(std::memory_order_relaxed);
  while (want > 0) {
    if (!recv_deficit.compare_exchange_weak(want, want - 1, std::memory_order_relaxed)) continue;
    packet* p = get_packet();
    if (!p) {
      recv_deficit.fetch_add(1, std::memory_order_relaxed);
      break;
    }
    post_recv_packet(p);
    did = true;
    want = recv_deficit.load(std::memory_order_relaxed);
  }
  return did;
}

packet* device::get_send_packet_slow(packet* p) {
  // Receives first: a packet freed while receives are missing re-posts one,
  // so that sends (whose packets may wait for the peer's receives) can never
  // hold every packet of both sides while neither has a receive posted.
  do {
    int want = recv_deficit.load(std::memory_order_relaxed);
    if (want <= 0) return p;
    if (recv_deficit.compare_exchange_weak(want, want - 1, std::memory_order_relaxed))
      post_recv_packet(p);
    else
      continue;
    p = get_packet();
  } while (p != nullptr);
  return nullptr;
}

net::status send_control_now(device& d, int rank, uint32_t imm, const void* data,
                             size_t length) {
  return send_eager(d, nullptr, imm, const_cast<void*>(data), length, rank, 0, nullptr,
                    nullptr) == LCI_OK
             ? net::status::ok
             : net::status::retry;
}

void send_control(device& d, int rank, uint32_t imm, const void* data, size_t length) {
  if (d.backlog_empty() && send_control_now(d, rank, imm, data, length) == net::status::ok)
    return;
  backlog_op b;
  b.what = backlog_op::op::message;
  b.rank = rank;
  b.imm = imm;
  b.bytes.assign(static_cast<const char*>(data), static_cast<const char*>(data) + length);
  d.push_backlog(std::move(b));
}

std::atomic<uint64_t> g_dropped_messages{0};

void report_dropped(const char* what, const char* field, int rank) {
  static std::atomic<int64_t> next_warning_ns{0};
  const uint64_t n = g_dropped_messages.fetch_add(1, std::memory_order_relaxed) + 1;
  const int64_t now = std::chrono::duration_cast<std::chrono::nanoseconds>(
                          std::chrono::steady_clock::now().time_since_epoch())
                          .count();
  int64_t next = next_warning_ns.load(std::memory_order_relaxed);
  if (now < next ||
      !next_warning_ns.compare_exchange_strong(next, now + 1000000000, std::memory_order_relaxed))
    return;
  char from[32] = "an unidentified sender";
  if (rank >= 0) snprintf(from, sizeof(from), "rank %d", rank);
  LCI_WARN("dropped a malformed %s from %s: bad %s (%llu messages dropped so far)", what, from,
           field, static_cast<unsigned long long>(n));
}

void drop_message(device& d, packet* p, const char* what, const char* field, int rank) {
  d.put_packet(p);
  report_dropped(what, field, rank);
}

namespace {

// Acts on a valid message.
void deliver(device& d, packet* p, const net::completion& c) {
  const msg_kind kind = imm_kind(c.imm);
  p->in.length = static_cast<uint32_t>(c.length);
  p->in.src_rank = c.src_rank;
  p->in.tag = static_cast<uint16_t>(imm_tag(c.imm));
  p->in.kind = kind;
  if (kind == msg_kind::control) {
    on_control(d, p, static_cast<control_kind>(imm_endpoint(c.imm)));
  } else {
    const uint32_t index = imm_endpoint(c.imm);
    endpoint* ep = endpoint_by_index(index);
    if (__builtin_expect(ep == nullptr || ep->dev != &d, 0)) {
      drop_message(d, p, "message", "endpoint index", c.src_rank);
    } else if (__builtin_expect(kind <= msg_kind::rts, 1)) {
      p->in.node.key = make_match_key(
          ep->match_type == LCI_MATCH_TAG ? LCI_RANK_ANY : c.src_rank, index, p->in.tag);
      p->in.node.kind = match_kind::send;
      if (match_node* m = d.table->insert_or_match(&p->in.node))
        complete_recv(d, reinterpret_cast<recv_ctx*>(m), p);
    } else if (kind == msg_kind::rts_alloc) {
      on_rts_alloc(d, ep, p);
    } else if (kind == msg_kind::notify) {
      on_notify(d, ep, p);
    } else {
      on_eager_put(d, ep, p);
    }
  }
}

// Posts a fresh receive packet for one that a message consumed.
void replace_receive(device& d) {
  if (packet* fresh = d.get_packet())
    d.post_recv_packet(fresh);
  else
    d.recv_deficit.fetch_add(1, std::memory_order_relaxed);
}

// A message arrived in packet p: match it (two-sided) or act on it
// (one-sided, control), then keep the receive queue full.
void on_arrival(device& d, packet* p, const net::completion& c) {
  LCI_PROF_INC(d, received);
  if (const char* bad = invalid_field(c.imm, c.src_rank, c.length, p->payload(), d.recv_size);
      __builtin_expect(bad != nullptr, 0)) {
    // A negative source is the transport's verdict (its first check fails).
    drop_message(d, p, "message", c.src_rank < 0 ? source_problem(c.src_rank) : bad, c.src_rank);
  } else {
    deliver(d, p, c);
  }
  replace_receive(d);
}

void on_send_done(device& d, packet* p) {
  if (p->out.comp)
    signal_medium(p->out.comp, p->out.rank, p->out.tag, p->out.user_address, p->out.length,
                  p->out.user_context);
  if (p->out.ep) p->out.ep->end_local();
  if (!p->out.keep) d.put_packet(p);
}

}  // namespace

bool device::progress() {
  bool did = false;
  if (backlog_size.load(std::memory_order_relaxed)) did |= drain_backlog();
  if (recv_deficit.load(std::memory_order_relaxed)) did |= refill_receives();
  if (!progress_lock.try_lock()) {
#ifdef LCI_PROFILE
    LCI_PROF_INC(*this, progress_calls);
    if (!did) LCI_PROF_INC(*this, progress_empty);
#endif
    return did;
  }
  net::completion cs[LCI_CQ_MAX_POLL];
  const int n = net->poll(cs, LCI_CQ_MAX_POLL);
  progress_lock.unlock();
  for (int i = 0; i < n; ++i) {
    const net::completion& c = cs[i];
    switch (c.kind) {
      case net::completion_kind::recv:
        on_arrival(*this, static_cast<packet*>(c.ctx), c);
        break;
      case net::completion_kind::send_done:
        on_send_done(*this, static_cast<packet*>(c.ctx));
        break;
      case net::completion_kind::rma_done:
        on_rdma_done(*this, static_cast<rdv_op*>(c.ctx));
        break;
      case net::completion_kind::remote_write:
        if (c.src_rank != net::any_member &&
            static_cast<uint32_t>(c.src_rank) >= static_cast<uint32_t>(LCI_NUM_PROCESSES)) {
          report_dropped("RDMA write with immediate data", source_problem(c.src_rank), c.src_rank);
          break;
        }
        on_write_imm(*this, imm_rdv_id(c.imm), c.src_rank);
        break;
      case net::completion_kind::recv_failed:
        // Longer than a receive buffer: nothing of it is used.
        drop_message(*this, static_cast<packet*>(c.ctx), "message",
                     "length (longer than a receive buffer)", net::unknown_source);
        replace_receive(*this);
        break;
      case net::completion_kind::failed:
        if (owns_packet(c.ctx))
          fatal("a message send failed (error %d)", c.error);
        on_rdma_failed(*this, static_cast<rdv_op*>(c.ctx), c.error);
        break;
    }
  }
#ifdef LCI_PROFILE
  LCI_PROF_INC(*this, progress_calls);
  if (!did && n == 0) LCI_PROF_INC(*this, progress_empty);
#endif
  return did || n > 0;
}

}  // namespace lci

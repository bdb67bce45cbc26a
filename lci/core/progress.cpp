// Progress: the poll loop, the arrival dispatch, receive re-posting, the
// backlog and control messages (see progress.hpp).
#include "lci/core/progress.hpp"

#include <chrono>
#include <cstdio>
#include <cstring>

#include "lci/core/eager.hpp"
#include "lci/core/rendezvous.hpp"
#include "lci/core/runtime.hpp"
#include "lci/core/test_hooks.hpp"
#include "lci/core/validate.hpp"
#include "lci/util/log.hpp"

namespace lci {

namespace {

// Constant-initialised (all null) before any registration runs.
arrival_handler g_arrivals[16];
control_handler g_controls[8];

// Why a completion's source names no rank of the job.
const char* source_problem(int src_rank) {
  switch (src_rank) {
    case net::unknown_source: return "source (an address outside the job)";
    case net::bad_token: return "job token";
    default: return "source rank";
  }
}

}  // namespace

bool register_arrival(msg_kind kind, arrival_handler handler) {
  auto& slot = g_arrivals[static_cast<size_t>(kind) & 15];
  if (slot) fatal("two arrival handlers for message kind %d", static_cast<int>(kind));
  slot = handler;
  return true;
}

bool register_control(control_kind kind, control_handler handler) {
  auto& slot = g_controls[static_cast<size_t>(kind) & 7];
  if (slot) fatal("two arrival handlers for control kind %d", static_cast<int>(kind));
  slot = handler;
  return true;
}

// ---- receives -------------------------------------------------------------------

void device::post_recv_packet(packet* p) {
  if (__builtin_expect(take_test_count(g_test_refuse_recv_posts), 0) ||
      net->post_recv(p->payload(), recv_size, slab_mr.desc, p) != net::status::ok) {
    backlog_op b;
    b.what = backlog_op::op::recv;
    b.pkt = p;
    push_backlog(std::move(b));
  }
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
  note_pool_empty();
  return nullptr;
}

void device::note_pool_empty() {
  if (pool_empty_warned.load(std::memory_order_relaxed)) return;
  const uint64_t n = pool_empty_count.fetch_add(1, std::memory_order_relaxed) + 1;
  if (n < pool_empty_warn_after || pool_empty_warned.exchange(true, std::memory_order_relaxed))
    return;
  LCI_WARN("device %d: its packet pool (%zu packets) was found empty %llu times; sends, "
           "LCI_mbuffer_alloc and receives wait (LCI_ERR_RETRY) until packets come back. "
           "Raise LCI_SERVER_NUM_PKTS (packets per device), or return medium buffers "
           "(LCI_mbuffer_free) sooner",
           group_index, packets->capacity(), static_cast<unsigned long long>(n));
}

// ---- backlog and control messages ------------------------------------------------

namespace {
// The device whose backlog this thread is draining (its backlog_lock held).
thread_local const device* t_draining = nullptr;

// One attempt at sending a control message held in a pool packet or on the heap.
bool send_queued_message(device& d, backlog_op& op) {
  void* from = op.pkt ? static_cast<void*>(op.pkt->payload()) : op.bytes.data();
  return send_eager(d, nullptr, op.imm, from, op.length, op.rank, 0, nullptr, nullptr) ==
         post_status::ok;
}
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
    bool sent;
    if (op.what == backlog_op::op::recv)
      sent = net->post_recv(op.pkt->payload(), recv_size, slab_mr.desc, op.pkt) == net::status::ok;
    else
      sent = send_queued_message(*this, op);
    if (!sent) break;
    backlog.pop_front();
    backlog_size.fetch_sub(1, std::memory_order_relaxed);
    did = true;
  }
  t_draining = nullptr;
  backlog_lock.unlock();
  return did;
}

void send_control(device& d, int rank, uint32_t imm, const void* data, size_t length) {
  if (d.backlog_empty() &&
      send_eager(d, nullptr, imm, const_cast<void*>(data), length, rank, 0, nullptr, nullptr) ==
          post_status::ok)
    return;
  backlog_op b;
  b.what = backlog_op::op::message;
  b.rank = rank;
  b.imm = imm;
  b.length = length;
  if (d.owns_packet(data))
    b.pkt = static_cast<packet*>(d.packets->packet_of(data));  // built in a packet already
  else if ((b.pkt = d.get_packet()) != nullptr)
    memcpy(b.pkt->payload(), data, length);
  else
    b.bytes.assign(static_cast<const char*>(data), static_cast<const char*>(data) + length);
  d.push_backlog(std::move(b));
}

// ---- dropped messages --------------------------------------------------------------

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

// ---- the poll loop and the arrival dispatch ---------------------------------------

namespace {

// Decodes a valid message once and hands it to its kind's handler.
inline arrival dispatch(device& d, packet* p, const net::completion& c) {
  const msg_kind kind = imm_kind(c.imm);
  p->in.length = static_cast<uint32_t>(c.length);
  p->in.src_rank = c.src_rank;
  p->in.tag = static_cast<uint16_t>(imm_tag(c.imm));
  p->in.kind = kind;
  if (__builtin_expect(kind == msg_kind::control, 0)) {
    // The control kind was validated; a table slot is set for each valid one.
    return g_controls[imm_endpoint(c.imm) & 7](d, p);
  }
  endpoint* ep = endpoint_by_index(imm_endpoint(c.imm));
  if (__builtin_expect(ep == nullptr || ep->dev != &d, 0)) {
    drop_message(d, p, "message", "endpoint index", c.src_rank);
    return arrival::kept;
  }
  return g_arrivals[static_cast<size_t>(kind)](d, ep, p);
}

// A message arrived in packet p: act on it, then keep the receive queue
// full, with p itself when its handler is done with it.
inline void on_arrival(device& d, packet* p, const net::completion& c) {
  LCI_PROF_INC(d, received);
  arrival a = arrival::kept;
  if (const char* bad = invalid_field(c.imm, c.src_rank, c.length, p->payload(), d.recv_size);
      __builtin_expect(bad != nullptr, 0)) {
    // A negative source is the transport's verdict (its first check fails).
    drop_message(d, p, "message", c.src_rank < 0 ? source_problem(c.src_rank) : bad, c.src_rank);
  } else {
    a = dispatch(d, p, c);
  }
  if (__builtin_expect(a == arrival::repost, 1))
    d.post_recv_packet(p);
  else
    d.replace_receive();
}

inline void on_send_done(device& d, packet* p) {
  if (p->out.comp)
    signal_medium(p->out.comp, p->out.rank, p->out.tag, p->out.user_address, p->out.length,
                  p->out.user_context);
  if (p->out.ep) p->out.ep->end_local();
  if (!p->out.keep) d.put_packet(p);
}

}  // namespace

void device::replace_receive() {
  if (packet* fresh = get_packet()) {
    post_recv_packet(fresh);
  } else {
    recv_deficit.fetch_add(1, std::memory_order_relaxed);
    note_pool_empty();
  }
}

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
    net::completion& c = cs[i];
    switch (c.kind) {
      case net::completion_kind::recv:
        // Authenticated transports: checked (fatal for a member's forged
        // message) and the trailer stripped before anything reads it.
        if (c.sealed && !net->open_sealed(c, static_cast<packet*>(c.ctx)->payload())) {
          post_recv_packet(static_cast<packet*>(c.ctx));  // the backend's own message
          break;
        }
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
        // Longer than a receive buffer: nothing of it is used, and the
        // packet is posted again.
        report_dropped("message", "length (longer than a receive buffer)", net::unknown_source);
        post_recv_packet(static_cast<packet*>(c.ctx));
        break;
      case net::completion_kind::dropped:
        report_dropped(c.error ? "message" : "shared-memory cell", static_cast<const char*>(c.ctx),
                       c.src_rank);
        break;
      case net::completion_kind::failed:
        // The provider gave up on the connection (closed under it, or
        // replaced by another claiming the peer's address).
        if (owns_packet(c.ctx))
          fatal("a message send to rank %d failed (error %d): the connection to rank %d was "
                "taken over, lost or corrupted",
                static_cast<packet*>(c.ctx)->out.rank, c.error,
                static_cast<packet*>(c.ctx)->out.rank);
        on_rdma_failed(*this, static_cast<rdv_op*>(c.ctx), c.error);
        break;
    }
  }
  if (n > 0) net->end_of_batch();
#ifdef LCI_PROFILE
  LCI_PROF_INC(*this, progress_calls);
  if (!did && n == 0) LCI_PROF_INC(*this, progress_empty);
#endif
  return did || n > 0;
}

}  // namespace lci

// Progress: the poll loop, the dispatch tables, receive re-posting and the
// backlog (see progress.hpp).
#include "lci/core/progress.hpp"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <vector>

#include "lci/comp/signal.hpp"
#include "lci/core/endpoint.hpp"
#include "lci/core/request.hpp"
#include "lci/core/runtime.hpp"
#include "lci/core/test_flags.hpp"
#include "lci/core/validate.hpp"
#include "lci/util/clock.hpp"
#include "lci/util/log.hpp"
#include "lci/wait/parking.hpp"

namespace lci {

namespace {

// Constant-initialised (all null) before any registration runs.
handler_table<arrival_handler, 16> g_arrivals;
handler_table<arrival_handler, 16> g_tagged_arrivals;  // optional, by inner kind
handler_table<control_handler, 8> g_controls;
handler_table<completion_handler, 8> g_completions;
handler_table<backlog_handler, 4> g_backlog;
bool g_backlog_resumes[4];  // the entry kind is RESUMEd (progress.hpp)

// Why a completion's source names no rank of the job.
const char* source_problem(int src_rank) {
  switch (src_rank) {
    case net::unknown_source: return "source (an address outside the job)";
    case net::bad_token: return "job token";
    default: return "source rank";
  }
}

}  // namespace

handler_table<rdma_finished_handler, rdv_role_count> g_rdma_finished;
handler_table<matched_handler, 16> g_matched;

namespace {
template <class Table, class Kind, class Handler>
bool add_handler(Table& table, Kind kind, Handler handler, const char* what) {
  if (!table.add(static_cast<size_t>(kind), handler))
    fatal("two handlers (or an invalid one) for %s %d", what, static_cast<int>(kind));
  return true;
}
}  // namespace

bool register_arrival(msg_kind kind, arrival_handler handler) {
  return add_handler(g_arrivals, kind, handler, "message kind");
}
bool register_tagged_arrival(msg_kind kind, arrival_handler handler) {
  return add_handler(g_tagged_arrivals, kind, handler, "tagged message kind");
}
bool register_control(control_kind kind, control_handler handler) {
  return add_handler(g_controls, kind, handler, "control kind");
}
bool register_completion(net::completion_kind kind, completion_handler handler) {
  return add_handler(g_completions, kind, handler, "completion kind");
}
bool register_backlog(backlog_op::op kind, backlog_handler handler, bool resume) {
  add_handler(g_backlog, kind, handler, "backlog entry kind");
  g_backlog_resumes[static_cast<size_t>(kind)] = resume;
  return true;
}
bool register_rdma_finished(rdv_role role, rdma_finished_handler handler) {
  return add_handler(g_rdma_finished, role, handler, "RDMA completion of role");
}
bool register_matched(msg_kind kind, matched_handler handler) {
  return add_handler(g_matched, kind, handler, "matched message kind");
}

std::vector<std::string> handler_problems() {
  std::vector<std::string> problems;
  check_table(g_arrivals, "message kind", arrival_kinds, problems);
  check_table(g_tagged_arrivals, "tagged message kind", tagged_arrival_kinds, problems);
  check_table(g_controls, "control kind", control_kinds, problems);
  check_table(g_completions, "completion kind", dispatched_completions, problems);
  check_table(g_backlog, "backlog entry kind", backlog_kinds, problems);
  check_table(g_rdma_finished, "RDMA completion of role", rdma_roles, problems);
  check_table(g_matched, "matched message kind", matched_kinds, problems);
  return problems;
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
// The calling thread's run of empty progress passes (device::idle_pass):
// when it began (0: none) and its last pass. One run per thread, whatever
// the device.
thread_local int64_t t_idle_since_ns __attribute__((tls_model("initial-exec"))) = 0;
thread_local int64_t t_idle_last_ns __attribute__((tls_model("initial-exec"))) = 0;
// The devices whose empty passes make up the run (a thread that progresses
// several devices naps on all their bells at once). Only dereferenced
// while registered (nap_registry, under its lock): a device freed since
// is skipped.
constexpr int max_run_devices = 8;
thread_local device* t_run_devices[max_run_devices];
thread_local int t_run_count = 0;

// The live devices that may nap, and their lock: never destroyed, so that
// a device freed during exit still finds them.
struct nap_registry {
  std::mutex lock;
  std::vector<device*> devices;
};
nap_registry& nap_devices() {
  static nap_registry* r = new nap_registry;
  return *r;
}


// A receive packet the network refused to post.
bool retry_recv(device& d, backlog_op& op) {
  return d.net->post_recv(op.pkt->payload(), d.recv_size, d.slab_mr.desc, op.pkt) ==
         net::status::ok;
}
LCI_BACKLOG_RETRY(backlog_op::op::recv, retry_recv);
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
  if (nap_after_ns) net->wake_self();  // a thread napping in progress() drains it
}

bool device::drain_backlog() {
  if (!backlog_lock.try_lock()) return false;
  t_draining = this;
  bool did = false;
  // Entries leave in order; one that is refused again stops the pass. A
  // RESUMEd entry (RDMA posting) is taken out first: it may queue itself
  // again.
  while (!backlog.empty()) {
    backlog_op& op = backlog.front();
    const size_t kind = static_cast<size_t>(op.what);
    if (g_backlog_resumes[kind]) {
      backlog_op taken = std::move(op);
      backlog.pop_front();
      backlog_size.fetch_sub(1, std::memory_order_relaxed);
      t_draining = nullptr;
      backlog_lock.unlock();
      g_backlog[kind](*this, taken);
      return true;
    }
    if (!g_backlog[kind](*this, op)) break;
    backlog.pop_front();
    backlog_size.fetch_sub(1, std::memory_order_relaxed);
    did = true;
  }
  t_draining = nullptr;
  backlog_lock.unlock();
  return did;
}

// ---- failed peers (peer_failure.hpp) ------------------------------------------------

namespace {
peer_failed_handler g_peer_failed_ops = nullptr;
}  // namespace

bool register_peer_failed(peer_failed_handler handler) {
  g_peer_failed_ops = handler;
  return true;
}

namespace {

// The receive c, posted for a rank that failed, completes with the error.
void fail_receive(device& d, recv_ctx* c, int rank) {
  const LCI_tag_t tag = uint32_t{c->node.tag_hi} << 16 | match_key_tag(c->node.key);
  LCI_request_t r = make_request(rank, tag, c->type, c->user_context);
  r.flag = LCI_ERR_FATAL;
  switch (c->type) {
    case LCI_IOVEC: r.data.iovec = c->iov; break;
    case LCI_LONG: r.data.lbuffer = LCI_lbuffer_t{c->segment, c->buffer, 0}; break;
    case LCI_MEDIUM: r.data.mbuffer = LCI_mbuffer_t{c->want_packet ? nullptr : c->buffer, 0}; break;
    default: memset(&r.data, 0, sizeof(r.data)); break;
  }
  const LCI_comp_t comp = c->comp;
  d.put_ctx(c);
  if (comp) comp_signal(comp, r);
}

// The matching table's entries for `rank`: receives posted for it complete
// with LCI_ERR_FATAL, its messages waiting for a receive are freed.
void sweep_table(device& d, int rank, int* receives, int* messages) {
  std::vector<match_node*> nodes;
  if (static_cast<uint32_t>(rank) < d.fifo_ranks) {  // the rank's list (rank_fifo.hpp) too
    rank_fifo& f = d.fifos[rank];
    f.lock.lock();
    while (!f.empty()) nodes.push_back(&d.ctx_from_list(f.take_oldest())->node);
    f.lock.unlock();
  }
  d.table->remove_if([rank](const match_node* n) { return match_key_rank(n->key) == rank; }, &nodes);
  for (match_node* n : nodes) {
    if (n->kind == match_kind::recv) {
      fail_receive(d, reinterpret_cast<recv_ctx*>(n), rank);
      ++*receives;
    } else {
      d.put_packet(reinterpret_cast<packet*>(n));
      ++*messages;
    }
  }
}

// What device d holds for `rank`: the table's entries (sweep_table), the
// control messages queued to it, the rendezvous waiting for it.
void sweep_rank(device& d, int rank) {
  int receives = 0, messages = 0;
  sweep_table(d, rank, &receives, &messages);
  const int queued = d.drop_backlog_to(rank);
  d.net->forget_peer(rank);
  const int rendezvous = g_peer_failed_ops ? g_peer_failed_ops(d, rank) : 0;
  LCI_LOG(info,
          "device %d: rank %d failed: %d posted receive(s) and %d rendezvous completed with "
          "LCI_ERR_FATAL, %d waiting message(s) and %d queued control message(s) freed",
          d.group_index, rank, receives, rendezvous, messages, queued);
}

}  // namespace

void recheck_failed_receive(device& d, uint64_t key) {
  const int rank = match_key_rank(key);
  if (rank < 0 || rank >= peer_failure_ranks() || !peer_failed(rank)) return;
  int receives = 0, messages = 0;
  sweep_table(d, rank, &receives, &messages);
}

namespace {

// A held send completes with LCI_ERR_FATAL (its peer is dead).
void fail_send(device& d, packet* p) {
  if (p->out.comp) {
    LCI_request_t r = make_request(p->out.rank, p->out.tag(), LCI_MEDIUM, p->out.user_context);
    r.flag = LCI_ERR_FATAL;
    r.data.mbuffer.address = p->out.user_address;
    r.data.mbuffer.length = p->out.length;
    comp_signal(p->out.comp, r);
  }
  if (p->out.ep) p->out.ep->end_local();
  if (!p->out.keep) d.put_packet(p);
}

// The sends held for suspected peers (on_failed_send): those to a peer
// alive again go out again as they were sent (the backend seals them
// anew), those to a dead one fail, the others stay. Returns false if a
// resend was refused for now (back-pressure). Under d.failure_lock.
bool resend_held(device& d) {
  std::vector<packet*> held;
  {
    std::lock_guard<spin_lock> g(d.held_lock);
    if (d.held.empty()) return true;
    held.swap(d.held);
  }
  std::vector<packet*> keep;
  bool all = true;
  for (packet* p : held) {
    const int rank = p->out.rank;
    const peer_state s = peer_state_of(rank);
    if (s == peer_state::dead) {
      fail_send(d, p);
      continue;
    }
    if (s == peer_state::suspected) {
      keep.push_back(p);
      continue;
    }
    // The caller's LCI buffer was sent from where it is; other data was
    // copied into the packet's payload.
    char* const payload = p->payload();
    char* from = static_cast<char*>(p->out.user_address);
    if (!(from >= payload && from < payload + d.packet_size)) from = payload;
    if (d.net->post_send(rank, from, p->out.length + p->out.extra, d.slab_mr.desc, p->out.imm,
                         p) != net::status::ok) {
      keep.push_back(p);
      all = false;
    }
  }
  if (!keep.empty()) {
    std::lock_guard<spin_lock> g(d.held_lock);
    d.held.insert(d.held.end(), keep.begin(), keep.end());
  }
  return all;
}

// Sweeps the ranks that failed since device d last looked (once each, one
// thread at a time), then runs the program's callbacks. Out of line: the
// progress pass only tests whether it is needed.
[[gnu::noinline, gnu::cold]] void sweep_failed_peers(device& d) {
  if (d.failure_lock.try_lock()) {
    // Read before the epoch: a send that fails from here on (on_failed_send
    // lowers it) keeps the device unswept, whatever this sweep finds.
    uint32_t seen = d.failure_epoch_seen.load(std::memory_order_acquire);
    const uint32_t epoch = g_peer_failure_epoch.load(std::memory_order_acquire);
    const int n = peer_failure_ranks();
    for (int r = 0; r < n; ++r) {
      if (!peer_failed(r) || d.swept[static_cast<size_t>(r)]) continue;
      d.swept[static_cast<size_t>(r)] = 1;
      sweep_rank(d, r);
    }
    // Swept up to `epoch` once every held send that may go went out; a
    // resend the network refused for now leaves the device unswept, so the
    // next pass looks again (a peer alive again raises the epoch too).
    if (resend_held(d))
      d.failure_epoch_seen.compare_exchange_strong(seen, epoch, std::memory_order_acq_rel);
    d.failure_lock.unlock();
  }
  run_peer_failure_callbacks();
}

}  // namespace

int device::drop_backlog_to(int rank) {
  std::lock_guard<spin_lock> g(backlog_lock);
  int n = 0;
  for (auto it = backlog.begin(); it != backlog.end();) {
    if (it->what != backlog_op::op::message || it->rank != rank) {
      ++it;
      continue;
    }
    if (it->pkt) put_packet(it->pkt);
    it = backlog.erase(it);
    backlog_size.fetch_sub(1, std::memory_order_relaxed);
    ++n;
  }
  return n;
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

// A `tagged` message (protocol.hpp; its length and suffix validated): the
// suffix gives the packet its whole tag and its own kind, and the message
// goes to that kind's handler for tagged messages, or to its ordinary one.
arrival on_tagged(device& d, endpoint* ep, packet* p) {
  p->in.length -= static_cast<uint32_t>(tag_suffix_size);
  tag_suffix s;
  memcpy(&s, p->payload() + p->in.length, sizeof(s));
  p->in.tag |= uint32_t{s.tag_hi} << 16;
  p->in.kind = s.kind;
  const size_t kind = static_cast<size_t>(s.kind);
  const arrival_handler h = g_tagged_arrivals[kind] ? g_tagged_arrivals[kind] : g_arrivals[kind];
  return h(d, ep, p);
}
LCI_ARRIVAL(msg_kind::tagged, on_tagged);

// Decodes a valid message once and hands it to its kind's handler.
inline arrival dispatch(device& d, packet* p, const net::completion& c) {
  const msg_kind kind = imm_kind(c.imm);
  p->in.length = static_cast<uint32_t>(c.length);
  p->in.src_rank = c.src_rank;
  p->in.tag = imm_tag(c.imm);
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
  } else if (__builtin_expect(peer_refused(c.src_rank), 0)) {
    // From a rank known dead (sent before it died, or by a rank declared
    // failed): what it was part of has ended with LCI_ERR_FATAL already.
    a = arrival::repost;
  } else {
    a = dispatch(d, p, c);
  }
  if (__builtin_expect(a == arrival::repost, 1))
    d.post_recv_packet(p);
  else if (a == arrival::kept)
    d.replace_receive();
}

inline void on_send_done(device& d, packet* p) {
  if (p->out.comp)
    signal_medium(p->out.comp, p->out.rank, p->out.tag(), p->out.user_address, p->out.length,
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

bool device::progress_pass() {
  bool did = false;
  if (backlog_size.load(std::memory_order_relaxed)) did |= drain_backlog();
  if (recv_deficit.load(std::memory_order_relaxed)) did |= refill_receives();
  // Receives first, then messages held while no packet was free (eager.cpp).
  if (parked_count.load(std::memory_order_relaxed) &&
      recv_deficit.load(std::memory_order_relaxed) == 0)
    did |= deliver_parked(*this);
  if (!progress_lock.try_lock()) {
#ifdef LCI_PROFILE
    LCI_PROF_INC(*this, progress_calls);
    if (!did) LCI_PROF_INC(*this, progress_empty);
#endif
    return did;
  }
  progress_passes.store(progress_passes.load(std::memory_order_relaxed) + 1,
                        std::memory_order_relaxed);
  net::completion cs[LCI_CQ_MAX_POLL];
  const int n = net->poll(cs, LCI_CQ_MAX_POLL);
  // Messages delivered in place are work too (they are not in cs).
  const bool in_place = net->polled_in_place();
  // Authenticated messages take their places in the replay windows in the
  // order they were polled, before another thread can poll newer ones: a
  // thread preempted between here and handle_completions still finds them
  // admitted (lci/backend/ofi/auth.hpp).
  for (int i = 0; i < n; ++i)
    if (cs[i].kind == net::completion_kind::recv && cs[i].sealed)
      net->admit_sealed(cs[i], static_cast<packet*>(cs[i].ctx)->payload());
  progress_lock.unlock();
  if (n > 0) handle_completions(cs, n);
  // A peer the poll found dead (the native transport's check) is swept now.
  if (__builtin_expect(g_peer_failure_epoch.load(std::memory_order_relaxed) !=
                           failure_epoch_seen.load(std::memory_order_relaxed),
                       0))
    sweep_failed_peers(*this);
#ifdef LCI_PROFILE
  LCI_PROF_INC(*this, progress_calls);
  if (!did && n == 0) LCI_PROF_INC(*this, progress_empty);
#endif
  if (did || n > 0 || in_place) {
    t_idle_since_ns = 0;  // the thread's idle run is broken
    return true;
  }
  if (nap_after_ns) idle_pass();
  return false;
}

void device::idle_pass() {
  const int64_t now = now_ns();
  if (t_idle_since_ns == 0 || now - t_idle_last_ns > nap_gap_ns) {
    t_idle_since_ns = now;
    t_run_count = 0;
  }
  t_idle_last_ns = now;
  bool listed = false;
  for (int i = 0; i < t_run_count; ++i) listed |= t_run_devices[i] == this;
  if (!listed && t_run_count < max_run_devices) t_run_devices[t_run_count++] = this;
  if (now - t_idle_since_ns < nap_after_ns || wait_policy() == LCIX_WAIT_SPIN) return;
  nap();
  t_idle_last_ns = now_ns();
}

void device::nap() {
  // Every device of the run is armed and looked at once more; any work
  // and the thread goes back to progress instead.
  std::atomic<uint32_t>* bells[max_run_devices];
  int n = 0;
  {
    nap_registry& r = nap_devices();
    std::lock_guard<std::mutex> g(r.lock);
    for (int i = 0; i < t_run_count; ++i) {
      device* d = t_run_devices[i];
      if (std::find(r.devices.begin(), r.devices.end(), d) == r.devices.end())
        continue;  // freed since
      native::native_device* nd = d->net->native();
      if (!nd->arm_idle() || (d->backlog_size.load(std::memory_order_seq_cst) |
                              d->recv_deficit.load(std::memory_order_relaxed) |
                              d->parked_count.load(std::memory_order_relaxed)) != 0)
        return;
      bells[n++] = nd->bell();
    }
  }
  if (n == 0) return;
  native::native_device::nap_on(bells, n, nap_length_ns);
  net->native()->count_nap();
}

void nap_register(device* d) {
  nap_registry& r = nap_devices();
  std::lock_guard<std::mutex> g(r.lock);
  r.devices.push_back(d);
}

void nap_unregister(device* d) {
  nap_registry& r = nap_devices();
  std::lock_guard<std::mutex> g(r.lock);
  r.devices.erase(std::remove(r.devices.begin(), r.devices.end(), d), r.devices.end());
}

namespace {

// A message send the provider gave up on: its connection broke (reset by
// a dying peer, or replaced by another process claiming the peer's
// address). With LCI_PEER_FAILURE=continue that is only suspicion
// (peer_failure.hpp): the send is held, and goes out again once the peer
// proved alive, or fails once its death is confirmed. Otherwise the job
// ends.
[[gnu::noinline, gnu::cold]] void on_failed_send(device& d, packet* p, int error) {
  const int rank = p->out.rank;
  if (!peer_failure_continues())
    fatal("a message send to rank %d failed (error %d): the connection to rank %d was "
          "taken over, lost or corrupted",
          rank, error, rank);
  d.net->withdraw_send(rank);
  report_evidence(rank, net::evidence::connection_broke,
                  "a message send to it failed: its connection broke");
  {
    std::lock_guard<spin_lock> g(d.held_lock);
    d.held.push_back(p);
  }
  // The sweep decides (it runs once the peer is alive again or dead; if
  // that happened already, at the next pass).
  d.failure_epoch_seen.fetch_sub(1, std::memory_order_acq_rel);
}

}  // namespace

// Out of line (device.hpp): an empty poll, the most frequent, then saves and
// restores none of the registers this loop needs.
void device::handle_completions(net::completion* cs, int n) {
  for (int i = 0; i < n; ++i) {
    net::completion& c = cs[i];
    switch (c.kind) {
      case net::completion_kind::recv:
        // Authenticated transports: checked (fatal for a member's forged
        // message, a duplicate dropped) and the trailer stripped before
        // anything reads it.
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
        g_completions[static_cast<size_t>(net::completion_kind::rma_done)](*this, c);
        break;
      case net::completion_kind::remote_write:
        if (c.src_rank != net::any_member &&
            static_cast<uint32_t>(c.src_rank) >= static_cast<uint32_t>(LCI_NUM_PROCESSES)) {
          report_dropped("RDMA write with immediate data", source_problem(c.src_rank), c.src_rank);
          break;
        }
        g_completions[static_cast<size_t>(net::completion_kind::remote_write)](*this, c);
        break;
      case net::completion_kind::recv_failed:
        // Longer than a receive buffer, or ended by a connection that broke
        // (LCI_PEER_FAILURE=continue): nothing of it is used, and the
        // packet is posted again.
        report_dropped("message",
                       c.error == ECONNRESET || c.error == ENOTCONN || c.error == EPIPE ||
                               c.error == ECONNABORTED
                           ? "receive (its connection broke)"
                           : "length (longer than a receive buffer)",
                       net::unknown_source);
        post_recv_packet(static_cast<packet*>(c.ctx));
        break;
      case net::completion_kind::dropped:
        report_dropped(c.error ? "message" : "shared-memory cell", static_cast<const char*>(c.ctx),
                       c.src_rank);
        break;
      case net::completion_kind::failed:
        // The provider gave up on the connection (closed under it, or
        // replaced by another claiming the peer's address).
        if (owns_packet(c.ctx)) {
          on_failed_send(*this, static_cast<packet*>(c.ctx), c.error);
          break;
        }
        g_completions[static_cast<size_t>(net::completion_kind::failed)](*this, c);
        break;
    }
  }
  net->end_of_batch();
}

}  // namespace lci

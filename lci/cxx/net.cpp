// The LCI 2 network layer (lci.hpp's net_*): raw sends, receives, puts,
// gets and atomics of a device, completed through net_poll_cq.
//
// There is no raw network device under an lci.hpp device here (the core
// device owns the backend and its receive buffers), so the layer is an
// emulation over the core:
//  - a send is one eager message of msg_kind::net (subkind send) carrying
//    the origin device's uid and the immediate data in its trailer; at the
//    target it goes to the oldest receive the program posted with
//    net_post_recv on the device of that uid, or waits on the heap, in
//    arrival order, until one is posted;
//  - put and get are the core's one-sided operations (start_rma); a
//    putImm, once its data is delivered (the put's origin completion),
//    sends a put_imm message that makes the target's net_poll_cq report
//    REMOTE_WRITE with the immediate data;
//  - fetch_add and add are executed by the target's progress: an
//    atomic_request message, an atomic fetch-add on the target's word (so
//    atomic with the target's own atomics too: net_atomic_scope_t::GLOBAL),
//    and an atomic_reply with the previous value;
//  - every completion goes into the device's queue (net_state::cq), which
//    net_poll_cq drains after running the device's progress once.
//
// The state of a device uid (net_state) belongs to the runtime
// (runtime_impl_t::net_states) and lives until the runtime ends: a message
// may arrive before the device of its uid was allocated here, and waits
// for it. Threads: every member of a net_state is under one of its own
// locks (the queue, the receives and early messages, the atomics), each
// held for a few instructions; net_poll_cq only tries its lock.
#include <cstring>
#include <deque>
#include <memory>
#include <string>
#include <unordered_map>

#include "lci.hpp"
#include "lci/comp/callback.hpp"
#include "lci/core/eager.hpp"
#include "lci/core/peer_failure.hpp"
#include "lci/core/progress.hpp"
#include "lci/core/runtime.hpp"
#include "lci/core/validate.hpp"
#include "lci/cxx/impl.hpp"
#include "lci/util/log.hpp"
#include "lci/util/spin.hpp"

namespace lci {

namespace {

// The subkinds of msg_kind::net, in the message's tag bits.
enum class net_sub : uint16_t { send = 0, put_imm = 1, atomic_request = 2, atomic_reply = 3 };

// The last trailer_size bytes of every message of msg_kind::net.
struct net_trailer {
  uint32_t imm_data;  // send, put_imm: the program's immediate data
  uint32_t device;    // the device uid the message is for (the origin's, at both ends)
  uint64_t aux;       // put_imm: the bytes the put wrote
};
static_assert(sizeof(net_trailer) == trailer_size, "the trailer room of a packet");

struct atomic_request {
  uint64_t id;       // the origin's pending_atomic
  uint64_t address;  // the target's word
  uint64_t value;
};
struct atomic_reply {
  uint64_t id;
  uint64_t previous;
  uint64_t ok;  // 0: the address was not a registered, aligned word (nothing added)
};

struct posted_recv {
  void* buffer;
  size_t size;
  void* user_context;
};
struct early_msg {
  int rank;
  net_imm_data_t imm_data;
  size_t length;
  std::unique_ptr<char[]> bytes;
};
struct pending_atomic {
  int rank;
  uint64_t* result;  // nullptr for net_post_add
  void* user_context;
};

void on_put_done(void* state, const LCI_request_t& r);
void on_puts_done(void* state, const LCI_request_t& r);
void on_put_imm_done(void* state, const LCI_request_t& r);
void on_put_imms_done(void* state, const LCI_request_t& r);
void on_get_done(void* state, const LCI_request_t& r);

}  // namespace

struct net_state {
  net_state(runtime_impl_t* rt_, uint32_t uid_)
      : rt(rt_), uid(uid_), put_done(&on_put_done, this), puts_done(&on_puts_done, this),
        put_imm_done(&on_put_imm_done, this), put_imms_done(&on_put_imms_done, this),
        get_done(&on_get_done, this) {}
  runtime_impl_t* const rt;
  const uint32_t uid;
  // The origin completions of the core's puts and gets. Their requests
  // carry the program's user_context (puts, putImms: the address of the
  // copy of the data, freed here) and, as tag, a putImm's immediate data.
  comp_callback put_done, puts_done, put_imm_done, put_imms_done, get_done;

  // Completions for net_poll_cq, oldest first; cq_size lets an empty poll
  // skip the lock.
  alignas(64) std::atomic<size_t> cq_size{0};
  spin_lock cq_lock;
  std::deque<net_status_t> cq;
  // Receives waiting for a message, and messages waiting for a receive:
  // at most one of the two is not empty.
  alignas(64) spin_lock match_lock;
  std::deque<posted_recv> recvs;
  std::deque<early_msg> early;
  // Fetch-adds and adds waiting for their reply, by id.
  alignas(64) spin_lock atomics_lock;
  std::unordered_map<uint64_t, pending_atomic> atomics;
  uint64_t next_atomic_id = 1;

  void push(const net_status_t& s) {
    cq_lock.lock();
    cq.push_back(s);
    cq_size.fetch_add(1, std::memory_order_release);
    cq_lock.unlock();
  }
  void push(net_opcode_t op, int rank, void* user_context, size_t length,
            net_imm_data_t imm_data) {
    net_status_t s;
    s.opcode = op;
    s.rank = rank;
    s.user_context = user_context;
    s.length = length;
    s.imm_data = imm_data;
    push(s);
  }
  lci::device& core() const { return *rt->shared.core; }
  uint32_t endpoint_index() const { return rt->shared.by_policy[3]->index; }
};

void alloc_net_states(runtime_impl_t* rt) {
  rt->net_states.reset(new std::atomic<net_state*>[max_net_devices]);
  for (uint32_t i = 0; i < max_net_devices; ++i)
    rt->net_states[i].store(nullptr, std::memory_order_relaxed);
}

void free_net_states(runtime_impl_t* rt) {
  if (!rt->net_states) return;
  for (uint32_t i = 0; i < max_net_devices; ++i) delete rt->net_states[i].exchange(nullptr);
  rt->net_states.reset();
}

namespace {

// The state of device uid `uid` of `rt`, made by the first thread that
// needs it (a program's call, or progress for a message to it).
net_state* state_of(runtime_impl_t* rt, uint32_t uid) {
  std::atomic<net_state*>& slot = rt->net_states[uid];
  net_state* s = slot.load(std::memory_order_acquire);
  if (__builtin_expect(s != nullptr, 1)) return s;
  auto* fresh = new net_state(rt, uid);
  if (slot.compare_exchange_strong(s, fresh, std::memory_order_acq_rel)) return fresh;
  delete fresh;
  return s;
}

// ---- origin completions of the core's puts and gets --------------------------------

size_t transferred(const LCI_request_t& r) { return r.data.lbuffer.length; }

void on_put_done(void* state, const LCI_request_t& r) {
  auto* s = static_cast<net_state*>(state);
  s->push(r.flag == LCI_OK ? net_opcode_t::WRITE : net_opcode_t::ERROR, r.rank, r.user_context,
          transferred(r), 0);
}

void on_get_done(void* state, const LCI_request_t& r) {
  auto* s = static_cast<net_state*>(state);
  s->push(r.flag == LCI_OK ? net_opcode_t::READ : net_opcode_t::ERROR, r.rank, r.user_context,
          transferred(r), 0);
}

// An inject put's copy of the data goes; its failure is the only thing
// reported (an inject operation has no completion of its own).
void on_puts_done(void* state, const LCI_request_t& r) {
  delete[] static_cast<char*>(r.user_context);
  if (r.flag != LCI_OK)
    static_cast<net_state*>(state)->push(net_opcode_t::ERROR, r.rank, nullptr, transferred(r),
                                         0);
}

// The data of a putImm is at the target: tell it, with the immediate data
// (r.tag) and the length.
void announce_put_imm(net_state* s, const LCI_request_t& r) {
  const net_trailer tr{r.tag, s->uid, transferred(r)};
  send_control(s->core(), r.rank,
               make_imm(msg_kind::net, s->endpoint_index(), static_cast<uint32_t>(net_sub::put_imm)),
               &tr, sizeof(tr));
}

void on_put_imm_done(void* state, const LCI_request_t& r) {
  auto* s = static_cast<net_state*>(state);
  if (r.flag == LCI_OK) announce_put_imm(s, r);
  s->push(r.flag == LCI_OK ? net_opcode_t::WRITE : net_opcode_t::ERROR, r.rank, r.user_context,
          transferred(r), r.tag);
}

void on_put_imms_done(void* state, const LCI_request_t& r) {
  auto* s = static_cast<net_state*>(state);
  delete[] static_cast<char*>(r.user_context);
  if (r.flag == LCI_OK)
    announce_put_imm(s, r);
  else
    s->push(net_opcode_t::ERROR, r.rank, nullptr, transferred(r), r.tag);
}

// ---- arrivals -----------------------------------------------------------------------

// A message for receive `r`: copied in, RECV completion (ERROR when it is
// longer than the buffer: nothing is copied then).
void complete_recv(net_state* s, const posted_recv& r, int rank, net_imm_data_t imm_data,
                   const char* data, size_t length) {
  if (__builtin_expect(length > r.size, 0)) {
    LCI_WARN("lci::net_post_recv: a %zu-byte message from rank %d does not fit the %zu-byte "
             "receive buffer: completed with net_opcode_t::ERROR",
             length, rank, r.size);
    s->push(net_opcode_t::ERROR, rank, r.user_context, length, imm_data);
    return;
  }
  if (length) std::memcpy(r.buffer, data, length);
  s->push(net_opcode_t::RECV, rank, r.user_context, length, imm_data);
}

// Takes the oldest posted receive into *out; false if there is none.
bool take_recv(net_state* s, posted_recv* out) {
  if (s->recvs.empty()) return false;
  *out = s->recvs.front();
  s->recvs.pop_front();
  return true;
}

void on_send(net_state* s, int rank, net_imm_data_t imm_data, const char* data, size_t length) {
  posted_recv r;
  s->match_lock.lock();
  bool matched = take_recv(s, &r);
  s->match_lock.unlock();
  if (matched) {
    complete_recv(s, r, rank, imm_data, data, length);
    return;
  }
  // Copied before the lock is taken again; a receive posted meanwhile
  // found no early message and waits, so it takes this one.
  early_msg m{rank, imm_data, length, std::unique_ptr<char[]>(new char[length ? length : 1])};
  if (length) std::memcpy(m.bytes.get(), data, length);
  s->match_lock.lock();
  matched = take_recv(s, &r);
  if (!matched) s->early.push_back(std::move(m));
  s->match_lock.unlock();
  if (matched) complete_recv(s, r, rank, imm_data, m.bytes.get(), length);
}

void on_atomic_request(lci::device& d, net_state* s, int rank, const char* data) {
  atomic_request q;
  std::memcpy(&q, data, sizeof(q));
  atomic_reply a{q.id, 0, 0};
  // The word must be one this process registered: a peer's address is input.
  if (q.address % alignof(uint64_t) == 0 && d.segments.covers(q.address, sizeof(uint64_t))) {
    a.previous = __atomic_fetch_add(reinterpret_cast<uint64_t*>(q.address), q.value,
                                    __ATOMIC_SEQ_CST);
    a.ok = 1;
  } else {
    report_dropped("network fetch-add", "target address (not a registered, aligned word)", rank);
  }
  char reply[sizeof(atomic_reply) + sizeof(net_trailer)];
  const net_trailer tr{0, s->uid, 0};
  std::memcpy(reply, &a, sizeof(a));
  std::memcpy(reply + sizeof(a), &tr, sizeof(tr));
  send_control(d, rank,
               make_imm(msg_kind::net, s->endpoint_index(),
                        static_cast<uint32_t>(net_sub::atomic_reply)),
               reply, sizeof(reply));
}

// False if the reply names no fetch-add of this device to `rank`.
bool on_atomic_reply(net_state* s, int rank, const char* data) {
  atomic_reply a;
  std::memcpy(&a, data, sizeof(a));
  pending_atomic op{};
  bool found = false;
  s->atomics_lock.lock();
  auto it = s->atomics.find(a.id);
  if (it != s->atomics.end() && it->second.rank == rank) {
    op = it->second;
    s->atomics.erase(it);
    found = true;
  }
  s->atomics_lock.unlock();
  if (!found) return false;
  if (a.ok && op.result) *op.result = a.previous;
  s->push(a.ok ? net_opcode_t::FETCH_ADD : net_opcode_t::ERROR, rank, op.user_context,
          sizeof(uint64_t), 0);
  return true;
}

// A message of msg_kind::net arrived (validated: at least a trailer).
arrival on_net_message(lci::device& d, lci::endpoint* /*ep*/, packet* p) {
  const int rank = p->in.src_rank;
  const size_t length = p->in.length - trailer_size;
  const char* data = p->payload();
  net_trailer tr;
  std::memcpy(&tr, data + length, sizeof(tr));
  auto* rt = static_cast<runtime_impl_t*>(d.net_layer);
  if (rt == nullptr || tr.device >= max_net_devices) {
    drop_message(d, p, "network-layer message",
                 rt ? "device uid" : "device (not an lci.hpp runtime's)", rank);
    return arrival::kept;
  }
  net_state* s = state_of(rt, tr.device);
  switch (static_cast<net_sub>(p->in.tag)) {
    case net_sub::send:
      on_send(s, rank, tr.imm_data, data, length);
      return arrival::repost;
    case net_sub::put_imm:
      if (length != 0) break;
      s->push(net_opcode_t::REMOTE_WRITE, rank, nullptr, static_cast<size_t>(tr.aux),
              tr.imm_data);
      return arrival::repost;
    case net_sub::atomic_request:
      if (length != sizeof(atomic_request)) break;
      on_atomic_request(d, s, rank, data);
      return arrival::repost;
    case net_sub::atomic_reply:
      if (length != sizeof(atomic_reply)) break;
      if (!on_atomic_reply(s, rank, data)) {
        drop_message(d, p, "network fetch-add reply", "id", rank);
        return arrival::kept;
      }
      return arrival::repost;
  }
  drop_message(d, p, "network-layer message", "subkind or length", rank);
  return arrival::kept;
}

LCI_ARRIVAL(msg_kind::net, on_net_message);

// ---- the program's calls ------------------------------------------------------------

using detail::net_args;
using detail::net_kind;

const char* call_name(net_kind k) {
  switch (k) {
    case net_kind::recv: return "net_post_recv";
    case net_kind::sends: return "net_post_sends";
    case net_kind::send: return "net_post_send";
    case net_kind::puts: return "net_post_puts";
    case net_kind::put: return "net_post_put";
    case net_kind::putImms: return "net_post_putImms";
    case net_kind::putImm: return "net_post_putImm";
    case net_kind::get: return "net_post_get";
    case net_kind::fetch_add: return "net_post_fetch_add";
    case net_kind::add: return "net_post_add";
  }
  return "net_post";
}

[[noreturn]] void bad_argument(const char* call, const std::string& what) {
  throw std::runtime_error(std::string("lci::") + call + ": " + what);
}

// A fetch-add or add the network cannot do: refused with errorcode_t::fatal
// (as LCI 2 does), said once per call.
error_t refuse_atomic(const char* call, const char* what) {
  LCI_WARN("lci::%s: %s: refused (errorcode_t::fatal)", call, what);
  return error_t(errorcode_t::fatal);
}

// One eager message of the network layer: `length` bytes and the trailer.
post_status send_message(net_state* s, int rank, net_sub sub, const void* data, size_t length,
                         const net_trailer& tr) {
  trailer t;
  static_assert(sizeof(t) == sizeof(tr), "one trailer room");
  std::memcpy(&t, &tr, sizeof(t));
  const uint32_t imm = make_imm(msg_kind::net, s->endpoint_index(), static_cast<uint32_t>(sub));
  return send_eager(s->core(), nullptr, imm, const_cast<void*>(data), length, rank, 0, nullptr,
                    nullptr, &t);
}

error_t post_recv(net_state* s, const net_args& a) {
  const posted_recv r{a.buffer, a.size, a.user_context};
  early_msg m{};
  s->match_lock.lock();
  const bool waiting = !s->early.empty();
  if (waiting) {
    m = std::move(s->early.front());
    s->early.pop_front();
  } else {
    s->recvs.push_back(r);
  }
  s->match_lock.unlock();
  if (waiting) complete_recv(s, r, m.rank, m.imm_data, m.bytes.get(), m.length);
  return error_t(errorcode_t::posted);
}

error_t post_atomic(net_state* s, const net_args& a, const char* call) {
  if (a.rmr.is_empty()) return refuse_atomic(call, "the remote memory region (rmr) is empty");
  if (static_cast<int>(a.required_atomic_scope) < 0 ||
      a.required_atomic_scope > net_atomic_scope_t::GLOBAL)
    return refuse_atomic(call, "required_atomic_scope is not a net_atomic_scope_t");
  const uint64_t address = a.rmr.base + a.offset;
  if (address % alignof(uint64_t) != 0)
    return refuse_atomic(call, "offset: the remote word is not 8-byte aligned");
  if (a.offset > a.rmr.length || a.rmr.length - a.offset < sizeof(uint64_t))
    return refuse_atomic(call, "offset: the remote word is beyond the registration");
  if (a.kind == net_kind::fetch_add &&
      (a.result == nullptr || reinterpret_cast<uintptr_t>(a.result) % alignof(uint64_t) != 0))
    return refuse_atomic(call, "result is nullptr or not 8-byte aligned");
  const pending_atomic op{a.rank, a.kind == net_kind::fetch_add ? a.result : nullptr,
                          a.user_context};
  s->atomics_lock.lock();
  const uint64_t id = s->next_atomic_id++;
  s->atomics.emplace(id, op);
  s->atomics_lock.unlock();
  const atomic_request q{id, address, a.value};
  const post_status st = send_message(s, a.rank, net_sub::atomic_request, &q, sizeof(q),
                                      net_trailer{0, s->uid, 0});
  if (st == post_status::ok) return error_t(errorcode_t::posted);
  s->atomics_lock.lock();
  s->atomics.erase(id);
  s->atomics_lock.unlock();
  return error_t(retry_code(st));
}

// An inject put: from a copy of the data, freed by its completion.
error_t post_inject_put(net_state* s, const net_args& a, lci::endpoint* ep, bool with_imm) {
  char* copy = new char[a.size ? a.size : 1];
  if (a.size) std::memcpy(copy, a.buffer, a.size);
  const post_status st =
      start_rma(ep, true, a.rank, copy, a.size, mr_t(), a.rmr, a.offset, a.imm_data,
                with_imm ? &s->put_imms_done : &s->puts_done, copy, 0);
  if (st == post_status::ok) return error_t(errorcode_t::done);
  delete[] copy;
  return error_t(retry_code(st));
}

}  // namespace

namespace detail {

error_t post_net(const net_args& a) {
  runtime_impl_t* rt = runtime_of(a.runtime);
  device_impl_t* d = device_of(a.device, rt);
  const char* call = call_name(a.kind);
  const uint32_t uid = static_cast<uint32_t>(d->attr.uid);
  if (__builtin_expect(uid >= max_net_devices, 0))
    bad_argument(call, "device uid " + std::to_string(d->attr.uid) +
                           " is beyond what the network layer serves (" +
                           std::to_string(max_net_devices) + " devices)");
  net_state* s = state_of(rt, uid);
  if (a.kind != net_kind::recv) {
    if (__builtin_expect(static_cast<unsigned>(a.rank) >= static_cast<unsigned>(LCI_NUM_PROCESSES),
                         0))
      bad_argument(call, "rank " + std::to_string(a.rank) + " is not in [0, " +
                             std::to_string(LCI_NUM_PROCESSES) + ")");
    if (__builtin_expect(peer_refused(a.rank), 0))
      throw peer_failure_error(a.rank, std::string("lci::") + call + ": rank " +
                                           std::to_string(a.rank) + " has failed");
  }
  if (a.kind == net_kind::fetch_add || a.kind == net_kind::add) return post_atomic(s, a, call);
  if (__builtin_expect(a.size && a.buffer == nullptr, 0))
    bad_argument(call, "buffer is nullptr with size " + std::to_string(a.size));
  const size_t max_size = static_cast<size_t>(LCI_MEDIUM_SIZE);
  const bool copied = a.kind == net_kind::sends || a.kind == net_kind::send ||
                      a.kind == net_kind::puts || a.kind == net_kind::putImms;
  if (__builtin_expect(copied && a.size > max_size, 0))
    bad_argument(call, "size " + std::to_string(a.size) + " is beyond get_max_bcopy_size() (" +
                           std::to_string(max_size) +
                           "): the network layer copies it into one eager message");
  const bool remote = a.kind == net_kind::puts || a.kind == net_kind::put ||
                      a.kind == net_kind::putImms || a.kind == net_kind::putImm ||
                      a.kind == net_kind::get;
  if (remote && a.rmr.is_empty()) bad_argument(call, "the remote memory region (rmr) is empty");
  lci::endpoint* ep = rt->shared.by_policy[3];
  switch (a.kind) {
    case net_kind::recv:
      return post_recv(s, a);
    case net_kind::sends:
    case net_kind::send: {
      const post_status st = send_message(s, a.rank, net_sub::send, a.buffer, a.size,
                                          net_trailer{a.imm_data, s->uid, 0});
      if (st != post_status::ok) return error_t(retry_code(st));
      if (a.kind == net_kind::sends) return error_t(errorcode_t::done);
      // The data was copied out: the send is complete for the program.
      s->push(net_opcode_t::SEND, a.rank, a.user_context, a.size, a.imm_data);
      return error_t(errorcode_t::posted);
    }
    case net_kind::puts:
    case net_kind::putImms:
      return post_inject_put(s, a, ep, a.kind == net_kind::putImms);
    case net_kind::put:
    case net_kind::putImm:
    case net_kind::get: {
      LCI_comp_t comp = a.kind == net_kind::put      ? &s->put_done
                        : a.kind == net_kind::putImm ? &s->put_imm_done
                                                     : &s->get_done;
      const post_status st = start_rma(ep, a.kind != net_kind::get, a.rank, a.buffer, a.size,
                                       a.mr, a.rmr, a.offset, a.imm_data, comp, a.user_context, 0);
      return st == post_status::ok ? error_t(errorcode_t::posted) : error_t(retry_code(st));
    }
    case net_kind::fetch_add:
    case net_kind::add:
      break;
  }
  return error_t(errorcode_t::fatal);
}

size_t net_poll_cq(size_t max_polls, net_status_t* statuses, device_t device, runtime_t runtime) {
  runtime_impl_t* rt = runtime_of(runtime);
  device_impl_t* d = device_of(device, rt);
  if (static_cast<uint32_t>(d->attr.uid) >= max_net_devices) return 0;
  progress_device(d);
  net_state* s = state_of(rt, static_cast<uint32_t>(d->attr.uid));
  if (s->cq_size.load(std::memory_order_acquire) == 0 || max_polls == 0) return 0;
  if (!s->cq_lock.try_lock()) return 0;  // another thread is taking them
  size_t n = 0;
  while (n < max_polls && !s->cq.empty()) {
    if (statuses) statuses[n] = s->cq.front();
    s->cq.pop_front();
    ++n;
  }
  s->cq_size.fetch_sub(n, std::memory_order_release);
  s->cq_lock.unlock();
  return n;
}

}  // namespace detail

}  // namespace lci

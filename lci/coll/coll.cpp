// The LCIX collectives (barrier, broadcast, allreduce): one binomial tree,
// driven by the thread that starts the collective and calls
// LCIX_coll_progress, over the core's eager and rendezvous messages. The C
// entry points (lci/api/coll_api.cpp) check the arguments and call the
// functions of coll.hpp.
//
// Algorithm. All five operations run the same two phases over one binomial
// tree rooted at rank 0 (parent of r > 0: r with its lowest set bit cleared;
// children of r: r + 2^k for every 2^k below r's lowest set bit, or below n
// at rank 0; the subtree of child r + 2^k is [r + 2^k, r + 2^(k+1))):
//   up:   a process waits for one message from each child, then sends one to
//         its parent (allreduce: the children's values folded into its own;
//         broadcast: the data if its subtree holds the root, else nothing;
//         barrier: nothing);
//   down: a process other than 0 waits for one message from its parent, then
//         sends one to each child (allreduce: the result; broadcast: the data
//         to children whose subtree does not hold the root, nothing to the
//         one that does, as it already has the data; barrier: nothing).
// An empty message is a zero-length medium message; a long form sends its
// data with LCI_sendl-style rendezvous. So in one collective every ordered
// pair of processes exchanges at most one message, and both sides know its
// kind and size from the tree and the root alone.
//
// Why a message of collective N+1 never meets a receive of collective N
// (LCI does not order messages, and both carry the same tag): a process
// starts N+1 only after N completed there, i.e. after all of its N receives
// matched. Take a child c and its parent p.
//  - c -> p (up) of N+1: c sent it after completing N, so after its N
//    receive from p matched; p sent that message only after its N receive
//    from c had matched. So p's receive from c of N is gone before c's
//    message of N+1 exists, and p's receive from c of N+1 can only meet it.
//  - p -> c (down) of N+1: p sent it after its N+1 receive from c matched;
//    c sent that message after completing N, so after its N receive from p
//    matched. Again the old receive is gone first.
// Nothing else is exchanged, so every receive meets the message of its own
// collective, whatever the operations of N and N+1 are (a zero-length
// medium message never meets a long receive, and so on).
//
// Completions of the internal receives and long sends go to one internal
// handler object (not the user's completion object, and signalled even when
// the endpoint's ports have type LCI_COMPLETION_NONE); it only marks the
// operation's slot done. Everything else, including the reduction operator
// and the user's completion, runs in the thread that calls the start call or
// LCIX_coll_progress (one thread per handle). A send refused with
// LCI_ERR_RETRY is retried by the next LCIX_coll_progress.

#include "lci/coll/coll.hpp"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>

#include "lci.h"
#include "lci/comp/handler.hpp"
#include "lci/comp/signal.hpp"
#include "lci/util/log.hpp"
#include "lci/core/endpoint.hpp"
#include "lci/core/handles.hpp"
#include "lci/core/memory.hpp"
#include "lci/core/peer_failure.hpp"
#include "lci/core/rendezvous.hpp"
#include "lci/core/runtime.hpp"
#include "lci/core/eager.hpp"
#include "lci/core/test_hooks.hpp"

using namespace lci;

namespace {

enum class coll_kind : uint8_t { barrier, bcastm, bcastl, allreducem, allreducel };
enum class coll_phase : uint8_t { gather, send_up, post_down, wait_down, send_down, drain, done };

// A process has at most 31 children (ranks are ints).
constexpr int max_children = 31;
constexpr uint32_t coll_magic = 0x4c434958u;  // "LCIX"

// One internal operation whose completion the collective waits for. The
// internal handler writes `req`, then sets `done` (release); the owner thread
// reads `done` (acquire), then `req`. The handler never touches the slot
// after the store, so the owner may free it as soon as it sees `done`.
struct coll_slot {
  std::atomic<bool> done{false};
  LCI_request_t req;
};

void on_internal_completion(LCI_request_t r) {
  auto* s = static_cast<coll_slot*>(r.user_context);
  s->req = r;
  s->done.store(true, std::memory_order_release);
}

// The completion object of every internal operation; lives as long as the
// process (handlers are never freed). Not in the registry: no message can
// name it as its remote completion (a forged one would run
// on_internal_completion with a context that is no slot).
comp_handler g_internal_comp(on_internal_completion);
LCI_comp_t internal_comp() { return static_cast<comp_base*>(&g_internal_comp); }

}  // namespace

LCI_comp_t lci::coll_internal_comp() { return internal_comp(); }

// The state of one collective on this process. Only the owner thread reads
// or writes it, except the slots' completion records (see coll_slot).
struct LCIX_collective_s {
  uint32_t magic = coll_magic;
  coll_kind kind;
  coll_phase phase = coll_phase::gather;
  endpoint* ep;
  LCI_tag_t tag;
  LCI_comp_t comp;  // the user's (nullptr: signal nothing)
  void* user_context;
  LCI_mbuffer_t mbuf{};   // medium forms
  LCI_lbuffer_t lbuf{};   // long forms
  LCI_op_t op = nullptr;  // allreduce
  LCI_error_t flag = LCI_OK;  // the first failure of an internal operation

  int parent = -1;        // -1 at rank 0
  int nchildren = 0;
  int children[max_children];   // largest subtree first
  int child_span[max_children]; // size of each child's rank range
  int root_child = -1;    // broadcast: the child whose subtree holds the root
  bool holds_root = false;  // broadcast: this subtree holds the root

  int gathered = 0;       // children whose up message was taken in
  bool taken[max_children] = {};
  int next_down = 0;      // next child to send the down message to
  coll_slot up[max_children];  // receive from each child
  coll_slot down;              // receive from the parent
  coll_slot up_send;           // long send to the parent
  coll_slot down_send[max_children];  // long send to each child
  bool up_send_long = false;
  bool down_send_long[max_children] = {};

  // allreducem: pool buffers taken at the start, one per send, so that an
  // accepted collective never waits for a buffer; consumed by the sends.
  char* reserved[max_children + 1];
  int nreserved = 0;
  // allreducel: where each child's contribution lands.
  LCI_lbuffer_t scratch[max_children];
};

namespace {

using state = LCIX_collective_s;

bool is_medium(coll_kind k) {
  return k == coll_kind::barrier || k == coll_kind::bcastm || k == coll_kind::allreducem;
}
bool is_bcast(coll_kind k) { return k == coll_kind::bcastm || k == coll_kind::bcastl; }

// Fills the tree links of this process; for a broadcast also where the root
// lies.
void build_tree(state* c, int root) {
  const int n = LCI_NUM_PROCESSES, r = LCI_RANK;
  // Ranks of this subtree: [r, r + span).
  long span = r == 0 ? n : (r & -r);
  if (r + span > n) span = n - r;
  c->parent = r == 0 ? -1 : (r & (r - 1));
  long top = 1;
  while (top * 2 < (r == 0 ? static_cast<long>(n) : static_cast<long>(r & -r))) top *= 2;
  for (long bit = top; bit >= 1; bit /= 2) {
    const long child = r + bit;
    if (r != 0 && bit >= (r & -r)) continue;
    if (child >= n) continue;
    c->children[c->nchildren] = static_cast<int>(child);
    c->child_span[c->nchildren] = static_cast<int>(std::min<long>(bit, n - child));
    ++c->nchildren;
  }
  if (root >= 0) {
    c->holds_root = root >= r && root < r + span;
    for (int i = 0; i < c->nchildren; ++i)
      if (root >= c->children[i] && root < c->children[i] + c->child_span[i]) c->root_child = i;
  }
}

void note_flag(state* c, const coll_slot& s) {
  if (s.req.flag != LCI_OK && c->flag == LCI_OK) c->flag = s.req.flag;
}

// A peer known dead (LCI_PEER_FAILURE=continue): nothing is sent to it or
// awaited from it, and the collective completes with LCI_ERR_FATAL here.
// (A receive posted before it was known dead is completed by the sweep.)
bool skip_failed(state* c, int rank, coll_slot* slot) {
  if (!peer_refused(rank)) return false;
  if (c->flag == LCI_OK) c->flag = LCI_ERR_FATAL;
  if (slot) {
    slot->req = make_request(rank, c->tag, LCI_MEDIUM, slot);
    slot->req.flag = LCI_ERR_FATAL;
    slot->req.data.mbuffer = LCI_mbuffer_t{nullptr, 0};
    slot->done.store(true, std::memory_order_release);
  }
  return true;
}

// An empty message: zero-length medium, eager, complete at return.
LCI_error_t send_empty(state* c, int rank) {
  if (skip_failed(c, rank, nullptr)) return LCI_OK;
  return to_error(send_eager(c->ep, msg_kind::medium, nullptr, 0, rank, c->tag, nullptr, nullptr));
}

LCI_error_t send_long(state* c, int rank, coll_slot* slot) {
  slot->done.store(false, std::memory_order_relaxed);
  if (skip_failed(c, rank, slot)) return LCI_OK;
  return to_error(start_send_long(c->ep, c->lbuf, rank, c->tag, internal_comp(), slot, false, 0, true));
}

// allreducem: the result (or partial result) travels in a reserved pool
// buffer, which the send consumes.
LCI_error_t send_reserved(state* c, int rank) {
  if (skip_failed(c, rank, nullptr)) return LCI_OK;  // the buffer is freed at the end
  char* b = c->reserved[c->nreserved - 1];
  if (c->mbuf.length) memcpy(b, c->mbuf.address, c->mbuf.length);
  LCI_error_t rc = to_error(
      send_eager(c->ep, msg_kind::medium, b, c->mbuf.length, rank, c->tag, nullptr, nullptr));
  if (rc == LCI_OK) --c->nreserved;
  return rc;
}

// A process whose collective already failed (a peer it waits for, or whose
// subtree, died) sends a poisoned message in place of each message it
// still owes, so that no survivor completes with LCI_ERR_OK on a result
// that misses a contribution: where an eager message is expected, a short
// message (its receive then completes with type LCI_IMMEDIATE, which no
// collective sends otherwise); where a long one is, a zero-length long one.
LCI_error_t send_poison_eager(state* c, int rank) {
  LCI_short_t s;
  memset(&s, 0, sizeof(s));
  return to_error(send_eager(c->ep, msg_kind::short_msg, &s, LCI_SHORT_SIZE, rank, c->tag, nullptr,
                             nullptr));
}

LCI_error_t send_poison_long(state* c, int rank, coll_slot* slot) {
  slot->done.store(false, std::memory_order_relaxed);
  return to_error(start_send_long(c->ep, LCI_lbuffer_t{nullptr, nullptr, 0}, rank, c->tag,
                                  internal_comp(), slot, false, 0, true));
}

// Whether a received message of the collective is a poisoned one (or its
// sender failed): eager (`expect_long` false) or long of `length` bytes.
bool is_poison(const coll_slot& s, bool expect_long, size_t length) {
  if (s.req.flag != LCI_OK) return true;
  if (expect_long) return s.req.data.lbuffer.length != length;
  return s.req.type == LCI_IMMEDIATE;
}

void recv_medium(state* c, int rank, void* buffer, size_t length, coll_slot* slot,
                 bool want_packet = false) {
  if (skip_failed(c, rank, slot)) return;
  post_recv(c->ep, rank, c->tag, buffer, length, want_packet, internal_comp(),
            slot, nullptr, nullptr, true);
}

void recv_long(state* c, int rank, const LCI_lbuffer_t& b, coll_slot* slot) {
  if (skip_failed(c, rank, slot)) return;
  post_recv(c->ep, rank, c->tag, b.address, b.length, false, internal_comp(), slot,
            b.segment, nullptr, true);
}

// Posts the receive of each child's up message.
void post_gather(state* c) {
  for (int i = 0; i < c->nchildren; ++i) {
    const int child = c->children[i];
    coll_slot* s = &c->up[i];
    switch (c->kind) {
      case coll_kind::barrier:
        recv_medium(c, child, nullptr, 0, s);
        break;
      case coll_kind::bcastm:
        if (i == c->root_child)
          recv_medium(c, child, c->mbuf.address, c->mbuf.length, s);
        else
          recv_medium(c, child, nullptr, 0, s);
        break;
      case coll_kind::bcastl:
        if (i == c->root_child)
          recv_long(c, child, c->lbuf, s);
        else
          recv_medium(c, child, nullptr, 0, s);
        break;
      case coll_kind::allreducem:
        recv_medium(c, child, nullptr, 0, s, true);
        break;
      case coll_kind::allreducel:
        recv_long(c, child, c->scratch[i], s);
        break;
    }
  }
}

// Whether child i's up message is long.
bool up_is_long(const state* c, int i) {
  return c->kind == coll_kind::allreducel || (c->kind == coll_kind::bcastl && i == c->root_child);
}
// Whether the parent's down message is long.
bool down_is_long(const state* c) {
  return c->kind == coll_kind::allreducel || (c->kind == coll_kind::bcastl && !c->holds_root);
}

// Takes in a child's up message: folds it for an allreduce.
void take_up(state* c, int i) {
  coll_slot& s = c->up[i];
  const bool poison = is_poison(s, up_is_long(c, i), c->lbuf.length);
  if (poison && c->flag == LCI_OK) c->flag = LCI_ERR_FATAL;
  if (c->kind == coll_kind::allreducem) {
    // (a poisoned message is a short one: no packet was handed out)
    void* data = s.req.type == LCI_MEDIUM && s.req.flag == LCI_OK ? s.req.data.mbuffer.address
                                                                   : nullptr;
    if (!poison && c->mbuf.length) c->op(c->mbuf.address, data, c->mbuf.length);
    if (data) {
      packet* p = packet::of_payload(data);
      scan_pool_owner(p)->put_packet(p);
    }
  } else if (c->kind == coll_kind::allreducel) {
    if (!poison && c->lbuf.length) c->op(c->lbuf.address, c->scratch[i].address, c->lbuf.length);
  }
}

LCI_error_t send_up(state* c) {
  if (c->flag != LCI_OK) {
    if (c->kind == coll_kind::allreducel || (c->kind == coll_kind::bcastl && c->holds_root)) {
      c->up_send_long = true;
      if (skip_failed(c, c->parent, &c->up_send)) return LCI_OK;  // (post_down waits for it)
      return send_poison_long(c, c->parent, &c->up_send);
    }
    if (skip_failed(c, c->parent, nullptr)) return LCI_OK;
    return send_poison_eager(c, c->parent);
  }
  switch (c->kind) {
    case coll_kind::barrier:
      return send_empty(c, c->parent);
    case coll_kind::bcastm:
      if (!c->holds_root) return send_empty(c, c->parent);
      if (skip_failed(c, c->parent, nullptr)) return LCI_OK;
      return to_error(send_eager(c->ep, msg_kind::medium, c->mbuf.address, c->mbuf.length, c->parent,
                        c->tag, nullptr, nullptr));
    case coll_kind::bcastl:
      if (!c->holds_root) return send_empty(c, c->parent);
      c->up_send_long = true;
      return send_long(c, c->parent, &c->up_send);
    case coll_kind::allreducem:
      return send_reserved(c, c->parent);
    case coll_kind::allreducel:
      c->up_send_long = true;
      return send_long(c, c->parent, &c->up_send);
  }
  return LCI_ERR_FATAL;
}

void post_down(state* c) {
  coll_slot* s = &c->down;
  switch (c->kind) {
    case coll_kind::barrier:
      recv_medium(c, c->parent, nullptr, 0, s);
      break;
    case coll_kind::bcastm:
      if (c->holds_root)
        recv_medium(c, c->parent, nullptr, 0, s);
      else
        recv_medium(c, c->parent, c->mbuf.address, c->mbuf.length, s);
      break;
    case coll_kind::bcastl:
      if (c->holds_root)
        recv_medium(c, c->parent, nullptr, 0, s);
      else
        recv_long(c, c->parent, c->lbuf, s);
      break;
    case coll_kind::allreducem:
      recv_medium(c, c->parent, c->mbuf.address, c->mbuf.length, s);
      break;
    case coll_kind::allreducel:
      recv_long(c, c->parent, c->lbuf, s);
      break;
  }
}

LCI_error_t send_down(state* c, int i) {
  const int child = c->children[i];
  if (c->flag != LCI_OK) {
    if (skip_failed(c, child, nullptr)) return LCI_OK;
    if (c->kind == coll_kind::allreducel || (c->kind == coll_kind::bcastl && i != c->root_child)) {
      c->down_send_long[i] = true;
      return send_poison_long(c, child, &c->down_send[i]);
    }
    return send_poison_eager(c, child);
  }
  switch (c->kind) {
    case coll_kind::barrier:
      return send_empty(c, child);
    case coll_kind::bcastm:
      if (i == c->root_child) return send_empty(c, child);
      if (skip_failed(c, child, nullptr)) return LCI_OK;
      return to_error(send_eager(c->ep, msg_kind::medium, c->mbuf.address, c->mbuf.length, child, c->tag,
                        nullptr, nullptr));
    case coll_kind::bcastl:
      if (i == c->root_child) return send_empty(c, child);
      c->down_send_long[i] = true;
      return send_long(c, child, &c->down_send[i]);
    case coll_kind::allreducem:
      return send_reserved(c, child);
    case coll_kind::allreducel:
      c->down_send_long[i] = true;
      return send_long(c, child, &c->down_send[i]);
  }
  return LCI_ERR_FATAL;
}

bool slot_done(const coll_slot& s) { return s.done.load(std::memory_order_acquire); }

// Moves the collective as far as it can go without waiting. Returns whether
// anything happened.
bool advance(state* c) {
  bool moved = false;
  for (;;) {
    switch (c->phase) {
      case coll_phase::gather:
        for (int i = 0; i < c->nchildren; ++i) {
          if (c->taken[i] || !slot_done(c->up[i])) continue;
          take_up(c, i);
          c->taken[i] = true;
          ++c->gathered;
          moved = true;
        }
        if (c->gathered < c->nchildren) return moved;
        c->phase = c->parent >= 0 ? coll_phase::send_up : coll_phase::send_down;
        moved = true;
        break;
      case coll_phase::send_up: {
        const LCI_error_t rc = send_up(c);
        if (rc == LCI_ERR_RETRY) {
          c->up_send_long = false;
          return moved;
        }
        c->phase = coll_phase::post_down;
        moved = true;
        break;
      }
      case coll_phase::post_down:
        // allreducel: the result lands in the buffer the up send reads.
        if (c->kind == coll_kind::allreducel && !slot_done(c->up_send)) return moved;
        post_down(c);
        c->phase = coll_phase::wait_down;
        moved = true;
        break;
      case coll_phase::wait_down:
        if (!slot_done(c->down)) return moved;
        if (is_poison(c->down, down_is_long(c), c->lbuf.length) && c->flag == LCI_OK)
          c->flag = LCI_ERR_FATAL;
        c->phase = coll_phase::send_down;
        moved = true;
        break;
      case coll_phase::send_down:
        while (c->next_down < c->nchildren) {
          const LCI_error_t rc = send_down(c, c->next_down);
          if (rc == LCI_ERR_RETRY) {
            c->down_send_long[c->next_down] = false;
            return moved;
          }
          ++c->next_down;
          moved = true;
        }
        c->phase = coll_phase::drain;
        break;
      case coll_phase::drain:
        // Long sends read the user's buffer until they complete.
        if (c->up_send_long && !slot_done(c->up_send)) return moved;
        for (int i = 0; i < c->nchildren; ++i)
          if (c->down_send_long[i] && !slot_done(c->down_send[i])) return moved;
        if (c->up_send_long) note_flag(c, c->up_send);
        for (int i = 0; i < c->nchildren; ++i)
          if (c->down_send_long[i]) note_flag(c, c->down_send[i]);
        c->phase = coll_phase::done;
        return true;
      case coll_phase::done:
        return moved;
    }
  }
}

// Signals the user's completion and frees the collective.
void finish_coll(state* c) {
  LCI_request_t r = make_request(-1, c->tag, is_medium(c->kind) ? LCI_MEDIUM : LCI_LONG,
                                 c->user_context);
  r.flag = c->flag;
  if (c->kind == coll_kind::barrier) {
    r.data.mbuffer.address = nullptr;
    r.data.mbuffer.length = 0;
  } else if (is_medium(c->kind)) {
    r.data.mbuffer = c->mbuf;
  } else {
    r.data.lbuffer = c->lbuf;
  }
  LCI_comp_t comp = c->ep->msg_comp_type == LCI_COMPLETION_NONE ? nullptr : c->comp;
  for (int i = 0; i < c->nreserved; ++i) {
    packet* p = packet::of_payload(c->reserved[i]);
    scan_pool_owner(p)->put_packet(p);
  }
  if (c->kind == coll_kind::allreducel)
    for (int i = 0; i < c->nchildren; ++i)
      if (c->scratch[i].address) lbuffer_free(c->scratch[i]);
  if constexpr (debug::enabled) debug::untrack(c);
  c->magic = 0;
  delete c;
  if (comp) comp_signal(comp, r);
}

// Common tail of the start calls: posts the first receives, advances, and
// hands out the handle (or completes at once).
LCI_error_t start(state* c, LCIX_collective_t* out) {
  post_gather(c);
  advance(c);
  if (c->phase == coll_phase::done) {
    *out = nullptr;
    finish_coll(c);
  } else {
    if constexpr (debug::enabled) debug::track(c, debug::handle_kind::collective);
    *out = c;
  }
  return LCI_OK;
}

state* make_coll(coll_kind kind, endpoint* ep, int root, LCI_tag_t tag, LCI_comp_t comp,
                void* user_context) {
  auto* c = new state;
  c->kind = kind;
  c->ep = ep;
  c->tag = tag;
  c->comp = comp;
  c->user_context = user_context;
  build_tree(c, is_bcast(kind) ? root : -1);
  return c;
}

}  // namespace

LCI_error_t lci::coll::barrier(endpoint* ep, LCI_tag_t tag, LCI_comp_t completion,
                               void* user_context, LCIX_collective_t* out) {
  return start(make_coll(coll_kind::barrier, ep, 0, tag, completion, user_context), out);
}

LCI_error_t lci::coll::bcastm(endpoint* ep, LCI_mbuffer_t buffer, int root, LCI_tag_t tag,
                              LCI_comp_t completion, void* user_context, LCIX_collective_t* out) {
  state* c = make_coll(coll_kind::bcastm, ep, root, tag, completion, user_context);
  c->mbuf = buffer;
  return start(c, out);
}

LCI_error_t lci::coll::bcastl(endpoint* ep, LCI_lbuffer_t buffer, int root, LCI_tag_t tag,
                              LCI_comp_t completion, void* user_context, LCIX_collective_t* out) {
  state* c = make_coll(coll_kind::bcastl, ep, root, tag, completion, user_context);
  c->lbuf = buffer;
  return start(c, out);
}

LCI_error_t lci::coll::allreducem(endpoint* ep, LCI_mbuffer_t buffer, LCI_op_t op, LCI_tag_t tag,
                                  LCI_comp_t completion, void* user_context,
                                  LCIX_collective_t* out) {
  state* c = make_coll(coll_kind::allreducem, ep, 0, tag, completion, user_context);
  c->mbuf = buffer;
  c->op = op;
  // One pool buffer per send (to the parent and to each child), or nothing.
  const int need = (c->parent >= 0 ? 1 : 0) + c->nchildren;
  device& d = *c->ep->dev;
  for (; c->nreserved < need; ++c->nreserved) {
    packet* p = d.get_send_packet();
    if (!p) {
      for (int i = 0; i < c->nreserved; ++i) d.put_packet(packet::of_payload(c->reserved[i]));
      delete c;
      return LCI_ERR_RETRY;
    }
    c->reserved[c->nreserved] = p->payload();
  }
  return start(c, out);
}

LCI_error_t lci::coll::allreducel(endpoint* ep, LCI_lbuffer_t buffer, LCI_op_t op, LCI_tag_t tag,
                                  LCI_comp_t completion, void* user_context,
                                  LCIX_collective_t* out) {
  state* c = make_coll(coll_kind::allreducel, ep, 0, tag, completion, user_context);
  c->lbuf = buffer;
  c->op = op;
  // A registered buffer per child for its contribution.
  for (int i = 0; i < c->nchildren; ++i) {
    c->scratch[i] = LCI_lbuffer_t{nullptr, nullptr, 0};
    if (buffer.length == 0) continue;
    if (!lbuffer_alloc(*c->ep->dev, buffer.length, 0, &c->scratch[i]))
      fatal("LCIX_allreducel: cannot allocate %zu bytes of scratch memory", buffer.length);
  }
  return start(c, out);
}

LCI_error_t lci::coll::progress(LCIX_collective_t* handle) {
  state* c = *handle;
  const bool moved = advance(c);
  if (c->phase == coll_phase::done) {
    *handle = nullptr;
    finish_coll(c);
    return LCI_OK;
  }
  return moved ? LCI_OK : LCI_ERR_RETRY;
}

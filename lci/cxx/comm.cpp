// The LCI 2 interface: posting (post_comm and its forms post_send,
// post_recv, post_am, post_put, post_get), the backlog, progress.
//
// Protocols: a message of at most get_max_bcopy_size() bytes (the core's
// medium size) goes eager, through a packet or injected; a larger one by
// rendezvous into the receiver's buffer (send) or into a buffer the target
// allocates (active message). A receive takes either, whatever its own
// size. Return states (lci.hpp): done, the completion object is not
// signalled; posted, it will be, once; retry, nothing happened.
#include <cstdlib>
#include <cstring>
#include <new>
#include <string>

#include "lci.hpp"
#include "lci/comp/sync.hpp"
#include "lci/core/eager.hpp"
#include "lci/core/peer_failure.hpp"
#include "lci/core/reg_types.hpp"
#include "lci/core/rendezvous.hpp"
#include "lci/core/rma.hpp"
#include "lci/core/runtime.hpp"
#include "lci/cxx/impl.hpp"
#include "lci/util/log.hpp"
#include "lci/util/spin.hpp"

namespace lci {

errorcode_t retry_code(post_status st) {
  switch (st) {
    case post_status::retry_no_packet: return errorcode_t::retry_nopacket;
    case post_status::retry_queue_full: return errorcode_t::retry_nomem;
    case post_status::retry_backlog: return errorcode_t::retry_backlog;
    case post_status::retry_no_registration: return errorcode_t::retry_nomem;
    case post_status::ok: break;
  }
  return errorcode_t::retry;
}

post_status start_rma(lci::endpoint* ep, bool put, int rank, void* local_buffer, size_t size,
                      mr_t mr, const rmr_t& rmr, uint64_t remote_disp, LCI_tag_t tag,
                      LCI_comp_t comp, void* user_context, uintptr_t remote_comp) {
  // The peer's registration as the core's remote segment (rmr_t carries it whole).
  LCII_mr_t seg;
  seg.remote = true;
  seg.group = static_cast<int>(rmr.group);
  seg.base = rmr.base;
  seg.length = static_cast<size_t>(rmr.length);
  seg.rkey = rmr.opaque_rkey;
  seg.owner_handle = rmr.mr_base;
  seg.virt = (rmr.flags & 1u) != 0;
  LCI_lbuffer_t local{mr.is_empty() ? LCI_SEGMENT_ALL : mr.p_impl->segment, local_buffer, size};
  LCI_lbuffer_t remote{&seg, reinterpret_cast<void*>(rmr.base + remote_disp), size};
  LCI_iovec_t liov{};
  liov.count = 1;
  liov.lbuffers = &local;
  LCI_iovec_t riov{};
  riov.count = 1;
  riov.lbuffers = &remote;
  return put ? start_put(ep, liov, false, comp, rank, tag, riov, remote_comp, user_context)
             : start_get(ep, liov, false, comp, rank, tag, riov, remote_comp, user_context);
}

namespace {

using detail::comm_args;
using detail::comm_kind;

status_t done_status(const comm_args& a) {
  status_t s(errorcode_t::done);
  s.rank = a.rank;
  s.buffer = a.local_buffer;
  s.size = a.size;
  s.tag = a.tag;
  s.user_context = a.user_context;
  return s;
}

[[noreturn]] void bad_argument(const char* call, const std::string& what) {
  throw std::runtime_error(std::string("lci::") + call + ": " + what);
}

const char* call_name(comm_kind k) {
  switch (k) {
    case comm_kind::send: return "post_send";
    case comm_kind::recv: return "post_recv";
    case comm_kind::am: return "post_am";
    case comm_kind::put: return "post_put";
    case comm_kind::get: return "post_get";
  }
  return "post_comm";
}

// The core endpoint of a's matching policy (a receive from any rank or
// with any tag leaves that part out of the key), of a's matching engine
// where a program's engine is named.
lci::endpoint* policy_endpoint(endpoint_impl_t* e, const comm_args& a) {
  unsigned policy = static_cast<unsigned>(a.matching_policy);
  if (a.kind == comm_kind::recv) {
    if (a.rank == ANY_SOURCE) policy &= ~1u;
    if (a.tag == ANY_TAG) policy &= ~2u;
  }
  const matching_engine_impl_t* me = a.matching_engine.p_impl;
  if (__builtin_expect(me != nullptr, 0) && me->by_policy[policy & 3u] &&
      (a.kind == comm_kind::send || a.kind == comm_kind::recv))
    return me->by_policy[policy & 3u];
  return e->by_policy[policy & 3u];
}

LCI_segment_t segment_of(mr_t mr) { return mr.is_empty() ? LCI_SEGMENT_ALL : mr.p_impl->segment; }

// One attempt of the operation: its core call. `comp` is the core
// completion object to signal (nullptr: none, the operation must then be
// complete at return, as an eager send is). *done_now: it completed in the
// call and `comp` was not signalled (*out holds what a status reports).
post_status attempt(const comm_args& a, lci::endpoint* ep, LCI_comp_t comp, bool* done_now,
                    LCI_request_t* out) {
  *done_now = false;
  // The whole tag (up to max_tag; ANY_TAG's bits are masked out of the key
  // by its policy endpoint).
  const uint32_t tag = static_cast<uint32_t>(a.tag);
  const bool eager = a.size <= static_cast<size_t>(LCI_MEDIUM_SIZE);
  switch (a.kind) {
    case comm_kind::send: {
      if (eager) {
        const post_status st =
            send_eager(ep, msg_kind::medium, a.local_buffer, a.size, a.rank, tag, comp,
                       comp ? a.user_context : nullptr);
        *done_now = st == post_status::ok && comp == nullptr;
        return st;
      }
      const LCI_lbuffer_t b{segment_of(a.mr), a.local_buffer, a.size};
      return start_send_long(ep, b, a.rank, tag, comp, a.user_context, false, 0, true);
    }
    case comm_kind::recv: {
      const uint64_t key = recv_key(ep, a.rank == ANY_SOURCE ? LCI_RANK_ANY : a.rank, tag);
      const uint16_t tag_hi = recv_tag_hi(ep, tag);
      if (comp == nullptr)
        fatal("lci::post_recv: internal error: a receive without a completion object");
      if (out) {
        *done_now = post_recv_or_done(ep, key, tag_hi, a.local_buffer, a.size, comp,
                                      a.user_context, segment_of(a.mr), !eager, out);
      } else {
        post_recv_keyed(ep, key, a.local_buffer, a.size, false, comp, a.user_context,
                        segment_of(a.mr), nullptr, true, !eager, tag_hi);
      }
      return post_status::ok;
    }
    case comm_kind::am: {
      if (eager) {
        const post_status st = put_eager(ep, a.local_buffer, a.size, a.rank, tag, a.remote_comp,
                                         false, comp, comp ? a.user_context : nullptr,
                                         comp != nullptr);
        *done_now = st == post_status::ok && comp == nullptr;
        return st;
      }
      const LCI_lbuffer_t b{segment_of(a.mr), a.local_buffer, a.size};
      return start_send_long(ep, b, a.rank, tag, comp, a.user_context, true, a.remote_comp, true);
    }
    case comm_kind::put:
    case comm_kind::get:
      return start_rma(ep, a.kind == comm_kind::put, a.rank, a.local_buffer, a.size, a.mr,
                       a.rmr, a.remote_disp, tag, comp, a.user_context, a.remote_comp);
  }
  return post_status::ok;
}

// An operation that must be complete when the call returns (no completion
// object, or allow_posted(false)): posted with a synchronizer of its own,
// tried until the network takes it, then progressed until it completed.
status_t complete_in_call(device_impl_t* d, const comm_args& a, lci::endpoint* ep,
                          bool may_retry) {
  bool done_now = false;
  LCI_request_t r;
  const bool eager_out = a.size <= static_cast<size_t>(LCI_MEDIUM_SIZE) &&
                         (a.kind == comm_kind::send || a.kind == comm_kind::am);
  if (eager_out && a.comp_semantic == comp_semantic_t::memory) {
    for (;;) {
      const post_status st = attempt(a, ep, nullptr, &done_now, &r);
      if (st == post_status::ok) return done_status(a);
      if (may_retry) return status_t(retry_code(st));
      progress_device(d);
    }
  }
  comp_sync sync(1);
  for (;;) {
    const post_status st = attempt(a, ep, &sync, &done_now, a.kind == comm_kind::recv ? &r : nullptr);
    if (st == post_status::ok) break;
    if (may_retry) return status_t(retry_code(st));
    progress_device(d);
  }
  if (!done_now) {
    while (!sync.test(&r)) progress_device(d);
  }
  status_t s = to_status(r, false);
  s.error = r.flag == LCI_OK ? errorcode_t::done : errorcode_t::fatal;
  return s;
}

}  // namespace

status_t push_backlog(device_impl_t* d, const comm_args& a, bool reported_done) {
  backlog_entry e(a);
  if (reported_done && a.size && a.kind != comm_kind::recv && a.kind != comm_kind::get) {
    // Reported done: the program may reuse its buffer at once.
    e.copy.reset(new char[a.size]);
    std::memcpy(e.copy.get(), a.local_buffer, a.size);
    e.args.local_buffer = e.copy.get();
  }
  e.args.allow_retry = true;
  e.args.allow_done = reported_done;
  if (reported_done) e.args.local_comp = COMP_NULL_RETRY;
  d->backlog_lock.lock();
  d->backlog.push_back(std::move(e));
  d->backlog_size.fetch_add(1, std::memory_order_release);
  g_progress_slow.fetch_add(1, std::memory_order_release);
  d->backlog_lock.unlock();
  return status_t(reported_done ? errorcode_t::done_backlog : errorcode_t::posted_backlog);
}

bool drain_backlog(device_impl_t* d) {
  if (!d->backlog_lock.try_lock()) return false;
  bool did = false;
  while (!d->backlog.empty()) {
    backlog_entry& e = d->backlog.front();
    const comm_args& a = e.args;
    endpoint_impl_t* ep = a.endpoint.p_impl ? a.endpoint.p_impl : d->default_endpoint;
    lci::endpoint* cep = policy_endpoint(ep, a);
    bool done_now = false;
    // Reported done: no completion object. Reported posted: its own.
    LCI_comp_t comp = a.allow_done ? nullptr : core_comp(a.local_comp);
    const post_status st = attempt(a, cep, comp, &done_now, nullptr);
    if (st != post_status::ok) break;
    d->backlog.pop_front();
    d->backlog_size.fetch_sub(1, std::memory_order_release);
    g_progress_slow.fetch_sub(1, std::memory_order_release);
    did = true;
  }
  d->backlog_lock.unlock();
  return did;
}

namespace detail {

status_t post_comm(const comm_args& a) {
  runtime_impl_t* rt = runtime_of(a.runtime);
  device_impl_t* d = device_of(a.device, rt);
  endpoint_impl_t* e = a.endpoint.p_impl ? a.endpoint.p_impl : d->default_endpoint;
  const char* call = call_name(a.kind);
  if (__builtin_expect(e == nullptr, 0))
    bad_argument(call, "the device has no default endpoint (alloc_default_endpoint(false)): "
                       "pass .endpoint()");
  const bool any_source = a.kind == comm_kind::recv && a.rank == ANY_SOURCE;
  if (__builtin_expect((a.rank < 0 || a.rank >= LCI_NUM_PROCESSES) && !any_source, 0))
    bad_argument(call, "rank " + std::to_string(a.rank) + " is not in [0, " +
                           std::to_string(LCI_NUM_PROCESSES) + ")");
  const bool any_tag = a.kind == comm_kind::recv && a.tag == ANY_TAG;
  if (__builtin_expect(a.tag > max_tag && !any_tag, 0))
    bad_argument(call, "tag " + std::to_string(a.tag) +
                           " is beyond the runtime's max_tag (4294967295; get_attr_max_tag)");
  if (__builtin_expect(a.size && a.local_buffer == nullptr, 0))
    bad_argument(call, "local_buffer is nullptr with size " + std::to_string(a.size));
  if (__builtin_expect(!any_source && peer_refused(a.rank), 0))
    throw peer_failure_error(a.rank, std::string("lci::") + call + ": rank " +
                                         std::to_string(a.rank) + " has failed");
  if ((a.kind == comm_kind::put || a.kind == comm_kind::get) && a.rmr.is_empty())
    bad_argument(call, "the remote memory region (rmr) is empty");
  if (a.kind == comm_kind::am && a.remote_comp == 0)
    bad_argument(call, "remote_comp 0 names no completion object (register_rcomp)");

  lci::endpoint* ep = policy_endpoint(e, a);
  const bool no_comp = a.local_comp.is_empty();
  const bool may_retry = a.allow_retry && a.local_comp.p_impl != COMP_NULL.p_impl;
  // Operations refused earlier go first: a newer one waits behind them.
  if (__builtin_expect(d->backlog_size.load(std::memory_order_acquire) != 0, 0) &&
      a.kind != comm_kind::recv) {
    if (may_retry) return status_t(errorcode_t::retry_backlog);
    if (no_comp || !a.allow_posted) {
      while (d->backlog_size.load(std::memory_order_acquire) != 0) progress_device(d);
    } else {
      const bool eager_out = a.size <= static_cast<size_t>(LCI_MEDIUM_SIZE) &&
                             a.kind != comm_kind::get && a.comp_semantic == comp_semantic_t::memory;
      return push_backlog(d, a, eager_out && a.allow_done);
    }
  }
  if (no_comp || !a.allow_posted) return complete_in_call(d, a, ep, may_retry);

  LCI_comp_t comp = core_comp(a.local_comp);
  const bool eager_out = a.size <= static_cast<size_t>(LCI_MEDIUM_SIZE) &&
                         (a.kind == comm_kind::send || a.kind == comm_kind::am);
  // An eager send is complete at once unless the program wants its
  // completion object signalled (allow_done(false), or network semantics).
  const bool report_done = a.allow_done && a.comp_semantic == comp_semantic_t::memory;
  bool done_now = false;
  LCI_request_t r;
  post_status st;
  if (eager_out && report_done) {
    st = attempt(a, ep, nullptr, &done_now, nullptr);
    if (st == post_status::ok) return done_status(a);
  } else {
    st = attempt(a, ep, comp, &done_now, a.kind == comm_kind::recv && a.allow_done ? &r : nullptr);
    if (st == post_status::ok) {
      if (done_now) {
        status_t s = to_status(r, false);
        s.error = errorcode_t::done;
        return s;
      }
      return status_t(errorcode_t::posted);
    }
  }
  if (may_retry) return status_t(retry_code(st));
  return push_backlog(d, a, eager_out && report_done);
}

// ---- the plain entries ------------------------------------------------------------
//
// post_send_plain and post_recv_plain (lci.hpp) are post_comm for the
// arguments every posting has: no comm_args is built and checked field by
// field. Each entry tests what it cannot take in a handful of compares; on
// any of them (an argument post_comm would reject, a failed peer, a backlog
// to wait behind, a send beyond the eager size) it returns not_taken and
// its inline caller hands the call to post_comm (post_plain_slow), which
// gives the same errors, states and backlog as the generic path.

namespace {

comm_args plain_args(comm_kind kind, device_impl_t* device, int rank, void* buffer, size_t size,
                     tag_t tag, comp_impl_t* comp, void* user_context, bool allow_done,
                     bool allow_retry) {
  comm_args a(kind, kind == comm_kind::send ? direction_t::OUT : direction_t::IN, rank, buffer,
              size, comp_t(static_cast<void*>(comp)));
  a.device = device_t(static_cast<void*>(device));
  a.tag = tag;
  a.user_context = user_context;
  a.allow_done = allow_done;
  a.allow_retry = allow_retry;
  return a;
}

// The device and its default endpoint, or nullptr (post_comm reports why:
// it wants the global runtime even when a device is given).
[[gnu::always_inline]] inline endpoint_impl_t* plain_endpoint(device_impl_t*& d) {
  if (d == nullptr) {
    d = g_default_device;
    if (__builtin_expect(d == nullptr, 0)) return nullptr;
  } else if (__builtin_expect(g_default_runtime == nullptr, 0)) {
    return nullptr;
  }
  return d->default_endpoint;
}

}  // namespace

status_t post_plain_slow(comm_kind kind, device_impl_t* device, int rank, void* buffer,
                         size_t size, tag_t tag, comp_impl_t* comp, void* user_context,
                         bool allow_done, bool allow_retry) {
  return post_comm(
      plain_args(kind, device, rank, buffer, size, tag, comp, user_context, allow_done, allow_retry));
}

errorcode_t post_send_plain(device_impl_t* device, int rank, void* buffer, size_t size,
                            tag_t tag) {
  device_impl_t* d = device;
  endpoint_impl_t* e = plain_endpoint(d);
  // Taken here: an eager send to a valid rank and tag with nothing in the
  // backlog. Whether a refusal may be returned (allow_retry, the completion
  // object) is the caller's test, made only on a refusal.
  if (__builtin_expect(e == nullptr || static_cast<uint32_t>(rank) >= d->nranks ||
                           tag > max_tag || size > d->eager_max ||
                           (size && buffer == nullptr) || peer_refused(rank) ||
                           d->backlog_size.load(std::memory_order_acquire) != 0,
                       0))
    return not_taken;
  // A 16-bit tag (the usual): the eager body inline, no call to
  // send_eager_plain and no second frame; a wider one as send_eager sends it.
  lci::endpoint* ep = e->by_policy[3];
  const uint32_t t = static_cast<uint32_t>(tag);
  post_status st;
  if (__builtin_expect(is_wide_tag(t), 0)) {
    st = send_eager(ep, msg_kind::medium, buffer, size, rank, t, nullptr, nullptr);
  } else {
    st = send_eager_body(*ep->dev, nullptr, make_imm(msg_kind::medium, ep->index, t), buffer, size,
                         rank, 0, nullptr, nullptr, nullptr);
    if (st == post_status::ok) ep->issued.add(rank);
  }
  if (__builtin_expect(st == post_status::ok, 1)) return errorcode_t::done;
  return retry_code(st);
}

errorcode_t post_recv_plain(device_impl_t* device, int rank, void* buffer, size_t size,
                            tag_t tag, comp_impl_t* comp, void* user_context, status_t* done) {
  device_impl_t* d = device;
  endpoint_impl_t* e = plain_endpoint(d);
  const bool any_source = rank == ANY_SOURCE;
  const bool any_tag = tag == ANY_TAG;
  // A receive never waits behind the backlog (post_comm).
  if (__builtin_expect(e == nullptr ||
                           (static_cast<uint32_t>(rank) >= d->nranks && !any_source) ||
                           (tag > max_tag && !any_tag) ||
                           reinterpret_cast<uintptr_t>(comp) <= 1 ||
                           (size && buffer == nullptr) || (!any_source && peer_refused(rank)),
                       0))
    return not_taken;
  // policy_endpoint's key: rank_tag, less what the receive leaves open.
  lci::endpoint* ep = e->by_policy[3u & ~(any_source ? 1u : 0u) & ~(any_tag ? 2u : 0u)];
  const uint64_t key = recv_key(ep, any_source ? LCI_RANK_ANY : rank, static_cast<uint32_t>(tag));
  const uint16_t tag_hi = recv_tag_hi(ep, static_cast<uint32_t>(tag));
  const bool long_recv = size > d->eager_max;
  LCI_comp_t core = static_cast<LCI_comp_t>(comp->core_);
  if (done != nullptr) {
    LCI_request_t r;
    if (post_recv_or_done(ep, key, tag_hi, buffer, size, core, user_context, LCI_SEGMENT_ALL,
                          long_recv, &r)) {
      status_t* s = ::new (static_cast<void*>(done)) status_t(to_status(r, false));
      s->error = errorcode_t::done;
      return errorcode_t::done;
    }
  } else {
    post_recv_keyed(ep, key, buffer, size, false, core, user_context, LCI_SEGMENT_ALL, nullptr,
                    true, long_recv, tag_hi);
  }
  return errorcode_t::posted;
}

}  // namespace detail

}  // namespace lci

// The LCI 2 interface's objects (lci.hpp) over the core: what a runtime,
// device, endpoint, packet pool and completion object of lci.hpp hold, and
// the translation of the core's requests into lci::status_t.
//
// Mapping (docs/lci2.md has the user's view):
//  - a runtime holds the core runtime (runtime_acquire, shared with the C
//    API), its default device and packet pool, the rcomp registry and the
//    allocator of the buffers it hands out;
//  - a device is a core device; an endpoint is four core endpoints, one per
//    matching policy (the key leaves out the rank, the tag, both or
//    neither), so that both sides of a match compute the same key;
//  - completion objects: a cq is a core queue, a sync a core synchronizer
//    (popped and tested here, where the requests become statuses); a
//    handler, counter, graph or program-made comp_impl_t is a core callback
//    object (comp/callback.hpp) that turns the request into a status;
//  - arrivals at a target carry the marker am_marker (active messages) or
//    put_marker (a put's notification) as their request's user_context:
//    their status has user_context nullptr and, for an active message, a
//    buffer the receiver owns.
#pragma once

#include <atomic>
#include <deque>
#include <memory>
#include <mutex>
#include <vector>

#include "lci.h"
#include "lci.hpp"
#include "lci/core/device.hpp"
#include "lci/core/endpoint.hpp"
#include "lci/util/spin.hpp"

namespace lci {

// The largest tag (get_attr_max_tag): the core matches and reports 32 bits
// of a tag; those beyond the message header's 16 (get_attr_max_imm_tag)
// travel in a tag suffix (lci/core/protocol.hpp).
inline constexpr tag_t max_tag = 0xffffffffu;
inline constexpr tag_t max_imm_tag = 0xffffu;

// The request markers of arrivals at a target (impl.hpp's header comment).
extern char g_target_marker[2];
inline void* am_marker() { return &g_target_marker[0]; }
inline void* put_marker() { return &g_target_marker[1]; }

class device_impl_t;
class endpoint_impl_t;
struct net_state;
// Device uids the network layer serves: 12 bits, in its messages' trailer.
inline constexpr uint32_t max_net_devices = 4096;

class packet_pool_impl_t {
 public:
  packet_pool_attr_t attr{};
  runtime_impl_t* rt = nullptr;
  // The device whose packets get_upacket hands out (the core keeps one
  // pool per device): the first device allocated with this pool.
  device_impl_t* device = nullptr;
};

class matching_engine_impl_t {
 public:
  matching_engine_attr_t attr{};
  // A program's engine (alloc_matching_engine): its own core endpoints,
  // one per matching policy, on the runtime's shared core device, so that
  // a send posted with it matches only receives posted with it. Made in
  // allocation order (collective, like the runtime's own), when the core
  // device exists; the runtime's default engine uses the shared ones.
  runtime_impl_t* rt = nullptr;
  lci::endpoint* by_policy[4] = {};
  std::mutex lock;
  // Entries by key, oldest first, each of one kind.
  struct entry {
    matching_entry_key_t key;
    matching_entry_val_t value;
    matching_entry_type_t type;
  };
  std::deque<entry> entries;
};

class net_context_impl_t {
 public:
  net_context_attr_t attr{};
};

class mr_impl_t {
 public:
  mr_attr_t attr{};
  device_impl_t* device = nullptr;
  LCI_segment_t segment = nullptr;
  void* address = nullptr;
  size_t size = 0;
};

// An operation refused for lack of resources and taken into the backlog
// (allow_retry(false)): posted again, in order, by progress.
struct backlog_entry {
  detail::comm_args args;
  std::unique_ptr<char[]> copy;  // the eager payload, copied (done_backlog)
  explicit backlog_entry(const detail::comm_args& a) : args(a) {}
};

class endpoint_impl_t {
 public:
  endpoint_attr_t attr{};
  device_impl_t* device = nullptr;
  lci::endpoint* by_policy[4] = {};  // matching_policy_t none, rank_only, tag_only, rank_tag
  // Whether by_policy are this endpoint's own (the collectives' endpoint);
  // a program's endpoints use the runtime's shared ones (runtime_impl_t).
  bool owns = false;
};

class device_impl_t {
 public:
  device_attr_t attr{};
  runtime_impl_t* rt = nullptr;
  lci::device* core = nullptr;
  endpoint_impl_t* default_endpoint = nullptr;
  // LCI_NUM_PROCESSES and LCI_MEDIUM_SIZE as the plain entries compare
  // them (comm.cpp), beside the pointers those entries load.
  uint32_t nranks = 0;
  size_t eager_max = 0;
  std::vector<endpoint_impl_t*> endpoints;  // freed with the device
  // The collectives' own endpoint (coll.cpp), rank-and-tag matching only,
  // so that a program's post_send/post_recv never match their messages;
  // created right after the default endpoint, at the same index on every
  // rank, and freed with the device.
  endpoint_impl_t* coll_endpoint = nullptr;
  // The collectives started on the device: every rank starts them in the
  // same order, so the count names one collective on all ranks (its tags).
  std::atomic<uint32_t> coll_seq{0};
  // The backlog: refused operations posted again by progress, in order.
  alignas(64) std::atomic<size_t> backlog_size{0};
  spin_lock backlog_lock;
  std::deque<backlog_entry> backlog;
};

class runtime_impl_t {
 public:
  runtime_attr_t attr{};
  bool global = false;
  device_impl_t* default_device = nullptr;
  packet_pool_impl_t* default_packet_pool = nullptr;
  matching_engine_impl_t* default_matching_engine = nullptr;
  net_context_impl_t* default_net_context = nullptr;
  std::vector<device_impl_t*> devices;
  std::atomic<allocator_base_t*> allocator{&g_allocator_default};
  // As in LCI 2, a runtime matches sends and receives in one place,
  // whatever device or endpoint they were posted on: its devices share one
  // core device and one core endpoint per matching policy, which every
  // endpoint of the runtime uses (the devices count their users).
  struct shared_core {
    lci::device* core = nullptr;
    lci::endpoint* by_policy[4] = {};
    int devices = 0;
  } shared;
  // The program's matching engines, in allocation order (their core
  // endpoints come and go with the shared core device).
  std::vector<matching_engine_impl_t*> engines;
  // The network layer's state of each device uid (net.cpp), made when a
  // device of that uid or a message to it first needs it, freed with the
  // runtime: a message may arrive before its device exists here.
  std::unique_ptr<std::atomic<net_state*>[]> net_states;
};

// The global runtime (g_runtime_init), nullptr while there is none, and
// its default device (nullptr if none): what an operation without a
// device argument uses.
extern runtime_impl_t* g_default_runtime;
extern device_impl_t* g_default_device;
// The core device of g_default_device (nullptr with it), and a count that
// is not 0 while progress_default must take its general path: 1 while
// there is no default device, plus the operations waiting in any device's
// backlog, plus the completion graphs with nodes to retry. One load tells
// the usual poll that none of these is there.
extern lci::device* g_default_core;
extern std::atomic<long> g_progress_slow;

// The runtime an operation's `runtime` argument names (the global one when
// empty); throws when there is none.
runtime_impl_t* runtime_of(runtime_t rt);
device_impl_t* device_of(device_t d, runtime_impl_t* rt);

// The core completion object of an lci.hpp completion object (nullptr for
// COMP_NULL and COMP_NULL_RETRY).
inline LCI_comp_t core_comp(comp_t c) {
  return c.is_empty() ? nullptr : static_cast<LCI_comp_t>(c.p_impl->core_);
}

// A request as a status: the fields, and for an arrival at a target the
// buffer handed over (copied out of its packet into the allocator's memory
// unless `zero_copy_am`, when the packet itself is the buffer).
status_t to_status(const LCI_request_t& r, bool zero_copy_am);
// A status as a request (comp_signal of a status into a core object).
LCI_request_t to_request(const status_t& s);

// The rcomp registry of the global runtime: the core's lookup of a remote
// completion handle at an LCI 2 endpoint.
bool lookup_rcomp(uint64_t handle, LCI_comp_t* out, comp_ref* ref);

// Graphs with nodes whose fn returned retry (graph.cpp): how many are
// waiting, and the call that runs those nodes again (true if any ran).
extern std::atomic<size_t> g_graph_retries;
bool progress_graphs();
// free_comp of a graph (true), which the graph's last reference deletes;
// false if `c` is not a graph.
bool release_graph(comp_impl_t* c);

// Posts the operations of d's backlog again, oldest first, until one is
// refused. True if any left it.
bool drain_backlog(device_impl_t* d);

// Progress of one device: the core's, the backlog, then the graphs' retried
// nodes (while g_graph_retries is not 0). Inline: progress_x and every wait
// loop of the LCI 2 interface run it once per poll.
[[gnu::always_inline]] inline bool progress_device(device_impl_t* d) {
  bool did = d->core->progress();
  if (__builtin_expect(d->backlog_size.load(std::memory_order_acquire) != 0, 0))
    did = drain_backlog(d) || did;
  if (__builtin_expect(g_graph_retries.load(std::memory_order_relaxed) != 0, 0))
    did = progress_graphs() || did;
  return did;
}
// A refusal of the core as the errorcode_t a status reports.
errorcode_t retry_code(post_status st);
// A put (or, with put false, a get) of `size` bytes between local_buffer
// (registered as `mr`, or as needed when it is empty) and rmr.base +
// remote_disp at `rank`, through core endpoint `ep`: the core's one-sided
// operation, its origin completion signalled to `comp` with `tag` and
// `user_context`, its target's to remote completion handle `remote_comp`.
post_status start_rma(lci::endpoint* ep, bool put, int rank, void* local_buffer, size_t size,
                      mr_t mr, const rmr_t& rmr, uint64_t remote_disp, LCI_tag_t tag,
                      LCI_comp_t comp, void* user_context, uintptr_t remote_comp);

// The network layer (net.cpp): the runtime's table of device states,
// made with the runtime, and their release once no device is left.
void alloc_net_states(runtime_impl_t* rt);
void free_net_states(runtime_impl_t* rt);

// Takes `a` into d's backlog (copying an eager payload); the status to
// return for it.
status_t push_backlog(device_impl_t* d, const detail::comm_args& a, bool eager);

}  // namespace lci

// The LCI 2 interface: completion objects, statuses, the rcomp registry.
#include <atomic>
#include <cstring>
#include <mutex>
#include <string>

#include "lci.hpp"
#include "lci/comp/callback.hpp"
#include "lci/comp/queue.hpp"
#include "lci/comp/signal.hpp"
#include "lci/comp/sync.hpp"
#include "lci/core/memory.hpp"
#include "lci/core/reg_types.hpp"
#include "lci/cxx/impl.hpp"
#include "lci/util/log.hpp"

namespace lci {

// ---- requests and statuses --------------------------------------------------------

namespace {

allocator_base_t* current_allocator() {
  runtime_t rt = get_g_runtime();
  return rt.p_impl ? rt.p_impl->allocator.load(std::memory_order_acquire) : &g_allocator_default;
}

}  // namespace

status_t to_status(const LCI_request_t& r, bool zero_copy_am) {
  status_t s;
  s.error = r.flag == LCI_OK ? errorcode_t::done : errorcode_t::fatal;
  s.rank = r.rank;
  s.tag = r.tag;
  s.user_context = r.user_context;
  switch (r.type) {
    case LCI_MEDIUM:
      s.buffer = r.data.mbuffer.address;
      s.size = r.data.mbuffer.length;
      break;
    case LCI_LONG:
      s.buffer = r.data.lbuffer.address;
      s.size = r.data.lbuffer.length;
      break;
    case LCI_IOVEC:
      s.buffer = r.data.iovec.piggy_back.address;
      s.size = r.data.iovec.piggy_back.length;
      break;
    default:
      break;
  }
  if (__builtin_expect(r.user_context == am_marker(), 0)) {
    // An active message: the receiver owns its buffer.
    s.user_context = nullptr;
    if (r.type == LCI_MEDIUM && r.flag == LCI_OK) {
      if (!zero_copy_am) {
        lci::device* owner = foreign_pool_owner(s.buffer);
        void* b = current_allocator()->allocate(s.size);
        if (s.size) std::memcpy(b, s.buffer, s.size);
        if (owner) owner->put_packet(static_cast<packet*>(owner->packets->packet_of(s.buffer)));
        s.buffer = b;
      }
    } else if (r.type == LCI_LONG && r.flag == LCI_OK) {
      // LCI allocated it (malloc) and registered it: the registration goes,
      // the memory is handed over (in the program's allocator's memory).
      if (r.data.lbuffer.segment) segment_deregister(r.data.lbuffer.segment);
      allocator_base_t* a = current_allocator();
      if (a != &g_allocator_default) {
        void* b = a->allocate(s.size);
        if (s.size) std::memcpy(b, s.buffer, s.size);
        std::free(s.buffer);
        s.buffer = b;
      }
    }
  } else if (__builtin_expect(r.user_context == put_marker(), 0)) {
    s.user_context = nullptr;
    if (r.type == LCI_IOVEC) std::free(r.data.iovec.lbuffers);
  }
  return s;
}

namespace {

// The usual request: a medium message or send that is no arrival at a
// target (neither marker: one compare), and its status.
[[gnu::always_inline]] inline bool plain_medium(const LCI_request_t& r) {
  return r.type == LCI_MEDIUM && reinterpret_cast<uintptr_t>(r.user_context) -
                                         reinterpret_cast<uintptr_t>(&g_target_marker[0]) >=
                                     sizeof g_target_marker;
}
[[gnu::always_inline]] inline void plain_status(const LCI_request_t& r, status_t* out) {
  out->error = r.flag == LCI_OK ? errorcode_t::done : errorcode_t::fatal;
  out->rank = r.rank;
  out->buffer = r.data.mbuffer.address;
  out->size = r.data.mbuffer.length;
  out->tag = r.tag;
  out->user_context = r.user_context;
}

// to_status, inline for the usual request.
[[gnu::always_inline]] inline status_t status_of(const LCI_request_t& r, bool zero_copy_am) {
  if (__builtin_expect(plain_medium(r), 1)) {
    status_t s;
    plain_status(r, &s);
    return s;
  }
  return to_status(r, zero_copy_am);
}

}  // namespace

LCI_request_t to_request(const status_t& s) {
  LCI_request_t r;
  r.flag = s.error.errorcode == errorcode_t::fatal ? LCI_ERR_FATAL : LCI_OK;
  r.rank = s.rank;
  r.tag = static_cast<LCI_tag_t>(s.tag);
  r.type = LCI_MEDIUM;
  r.data.mbuffer.address = s.buffer;
  r.data.mbuffer.length = s.size;
  r.user_context = s.user_context;
  return r;
}

// ---- comp_impl_t: a program's completion object ------------------------------------------

namespace {

comp_attr_t custom_attr() {
  comp_attr_t a{};
  a.comp_type = attr_comp_type_t::custom;
  a.sync_threshold = 1;
  a.zero_copy_am = false;
  a.cq_type = attr_cq_type_t::lcrq;
  a.cq_default_length = 65536;
  a.name = DEFAULT_NAME;
  a.user_context = nullptr;
  return a;
}

void signal_virtual(void* context, const LCI_request_t& r) {
  auto* c = static_cast<comp_impl_t*>(context);
  c->signal(to_status(r, c->attr.zero_copy_am));
}

}  // namespace

comp_impl_t::comp_impl_t() : attr(custom_attr()) {
  core_ = static_cast<comp_base*>(new comp_callback(&signal_virtual, this));
}

comp_impl_t::comp_impl_t(const attr_t& a) : attr(a) {
  core_ = static_cast<comp_base*>(new comp_callback(&signal_virtual, this));
}

comp_impl_t::comp_impl_t(const attr_t& a, library_made) : attr(a) {}

// The library's kinds null core_ in their own destructors; what is left is
// the callback the constructors above made.
comp_impl_t::~comp_impl_t() {
  if (core_) delete static_cast<comp_callback*>(static_cast<comp_base*>(core_));
}

// ---- the library's kinds ------------------------------------------------------------------

namespace {

comp_attr_t make_attr(attr_comp_type_t type, const char* name, void* user_context) {
  comp_attr_t a = custom_attr();
  a.comp_type = type;
  a.name = name ? name : DEFAULT_NAME;
  a.user_context = user_context;
  return a;
}

bool default_zero_copy() {
  try {
    return get_g_default_attr().zero_copy_am;
  } catch (const std::runtime_error&) {
    return false;
  }
}

class cq_impl final : public comp_impl_t {
 public:
  cq_impl(const attr_t& a, size_t capacity) : comp_impl_t(a, library_made{}), q_(capacity) {
    core_ = static_cast<comp_base*>(&q_);
  }
  ~cq_impl() override { core_ = nullptr; }
  void signal(status_t s) override {
    const LCI_request_t r = to_request(s);
    while (!q_.push(r)) cpu_relax();
  }
  status_t pop() {
    LCI_request_t r;
    if (!q_.pop(&r)) return status_t(errorcode_t::retry);
    return status_of(r, attr.zero_copy_am);
  }

 private:
  comp_queue q_;
};

class sync_impl final : public comp_impl_t {
 public:
  sync_impl(const attr_t& a, int threshold)
      : comp_impl_t(a, library_made{}), s_(threshold), out_(new LCI_request_t[threshold]) {
    core_ = static_cast<comp_base*>(&s_);
  }
  ~sync_impl() override { core_ = nullptr; }
  void signal(status_t s) override { s_.signal(to_request(s)); }
  // Inlined into sync_test. Untriggered (the usual poll): two loads and a
  // compare. Triggered with threshold 1 and a medium request that is no
  // arrival at a target (the usual completion): claimed, converted into
  // *out and released in place, with no call and no frame; anything else
  // out of line.
  bool test(status_t* out) {
    if (!s_.triggered()) return false;
    if (__builtin_expect(s_.threshold() != 1, 0)) return consume(out);
    if (!s_.claim_one()) return false;
    const LCI_request_t& r = s_.slot_one();
    if (__builtin_expect(out == nullptr || !plain_medium(r), 0)) return finish_one(out);
    plain_status(r, out);
    s_.release_one();
    return true;
  }

 private:
  // The claimed request of a threshold-1 synchronizer that is not the
  // usual one, or whose status nobody wants: converted (if out), released.
  [[gnu::noinline]] bool finish_one(status_t* out) {
    if (out != nullptr) *out = to_status(s_.slot_one(), attr.zero_copy_am);
    s_.release_one();
    return true;
  }
  [[gnu::noinline]] bool consume(status_t* out) {
    if (!s_.test(out_.get())) return false;
    for (int i = 0; i < s_.threshold(); ++i) {
      const status_t st = status_of(out_[static_cast<size_t>(i)], attr.zero_copy_am);
      if (out) out[i] = st;
    }
    return true;
  }

  comp_sync s_;
  std::unique_ptr<LCI_request_t[]> out_;
};

class handler_impl final : public comp_impl_t {
 public:
  handler_impl(const attr_t& a, comp_handler_t fn)
      : comp_impl_t(a, library_made{}), fn_(fn), cb_(&run, this) {
    core_ = static_cast<comp_base*>(&cb_);
  }
  ~handler_impl() override { core_ = nullptr; }
  void signal(status_t s) override { fn_(s); }

 private:
  static void run(void* self, const LCI_request_t& r) {
    auto* h = static_cast<handler_impl*>(self);
    h->fn_(to_status(r, h->attr.zero_copy_am));
  }
  comp_handler_t fn_;
  comp_callback cb_;
};

class counter_impl final : public comp_impl_t {
 public:
  explicit counter_impl(const attr_t& a) : comp_impl_t(a, library_made{}), cb_(&run, this) {
    core_ = static_cast<comp_base*>(&cb_);
  }
  ~counter_impl() override { core_ = nullptr; }
  void signal(status_t s) override {
    release_buffer(s);
    value_.fetch_add(1, std::memory_order_acq_rel);
  }
  int64_t get() const { return value_.load(std::memory_order_acquire); }
  void set(int64_t v) { value_.store(v, std::memory_order_release); }

 private:
  // A counter keeps no status: a buffer an arrival handed over goes back.
  static void release_buffer(const status_t&) {}
  static void run(void* self, const LCI_request_t& r) {
    auto* c = static_cast<counter_impl*>(self);
    const status_t s = to_status(r, false);
    if (r.user_context == am_marker() && s.buffer) current_allocator()->deallocate(s.buffer);
    c->value_.fetch_add(1, std::memory_order_acq_rel);
  }
  std::atomic<int64_t> value_{0};
  comp_callback cb_;
};

template <typename T>
T* as(comp_t c, const char* call) {
  auto* p = dynamic_cast<T*>(c.is_empty() ? nullptr : c.p_impl);
  if (!p)
    throw std::runtime_error(std::string("lci::") + call +
                             ": the completion object is not of the kind this call takes");
  return p;
}

}  // namespace

namespace detail {

comp_t alloc_sync(int threshold, bool threshold_set, bool zero_copy_am, bool zero_copy_set,
                  const char* name, void* user_context) {
  if (!threshold_set) {
    try {
      threshold = get_g_default_attr().sync_threshold;
    } catch (const std::runtime_error&) {
      threshold = 1;
    }
  }
  if (threshold < 1)
    throw std::runtime_error("lci::alloc_sync: threshold " + std::to_string(threshold) +
                             " is below 1");
  comp_attr_t a = make_attr(attr_comp_type_t::sync, name, user_context);
  a.sync_threshold = threshold;
  a.zero_copy_am = zero_copy_set ? zero_copy_am : default_zero_copy();
  return comp_t(static_cast<void*>(static_cast<comp_impl_t*>(new sync_impl(a, threshold))));
}

namespace {
[[gnu::noinline, gnu::cold]] bool sync_test_checked(comp_t comp, status_t* p_out) {
  return as<sync_impl>(comp, "sync_test")->test(p_out);
}
}  // namespace

bool sync_test(comp_t comp, status_t* p_out) {
  // The common case without the dynamic_cast: a library-made sync, the only
  // kind whose core object is a core synchronizer (a program's comp_impl_t
  // has a callback object).
  // (core_ is set by every constructor: never null in a live object.)
  if (__builtin_expect(!comp.is_empty() && static_cast<comp_base*>(comp.p_impl->core_)->type ==
                                               LCI_COMPLETION_SYNC,
                       1))
    return static_cast<sync_impl*>(comp.p_impl)->test(p_out);
  return sync_test_checked(comp, p_out);
}

void sync_wait(comp_t comp, status_t* p_out, bool do_progress, device_t device,
               runtime_t runtime) {
  sync_impl* s = as<sync_impl>(comp, "sync_wait");
  device_impl_t* d = do_progress ? device_of(device, runtime_of(runtime)) : nullptr;
  while (!s->test(p_out)) {
    if (d)
      progress_device(d);
    else
      cpu_relax();
  }
}

comp_t alloc_counter(const char* name, void* user_context) {
  comp_attr_t a = make_attr(attr_comp_type_t::counter, name, user_context);
  return comp_t(static_cast<void*>(static_cast<comp_impl_t*>(new counter_impl(a))));
}

int64_t counter_get(comp_t comp) { return as<counter_impl>(comp, "counter_get")->get(); }
void counter_set(comp_t comp, int64_t value) { as<counter_impl>(comp, "counter_set")->set(value); }

comp_t alloc_cq(int default_length, bool length_set, bool zero_copy_am, bool zero_copy_set,
                const char* name, void* user_context) {
  if (!length_set) {
    try {
      default_length = get_g_default_attr().cq_default_length;
    } catch (const std::runtime_error&) {
      default_length = 65536;
    }
  }
  if (default_length < 1)
    throw std::runtime_error("lci::alloc_cq: default_length " + std::to_string(default_length) +
                             " is below 1");
  comp_attr_t a = make_attr(attr_comp_type_t::cq, name, user_context);
  a.cq_default_length = default_length;
  a.zero_copy_am = zero_copy_set ? zero_copy_am : default_zero_copy();
  return comp_t(static_cast<void*>(
      static_cast<comp_impl_t*>(new cq_impl(a, static_cast<size_t>(default_length)))));
}

status_t cq_pop(comp_t comp) {
  // The common case without the dynamic_cast: a library-made cq.
  if (__builtin_expect(!comp.is_empty() && comp.p_impl->attr.comp_type == attr_comp_type_t::cq &&
                           comp.p_impl->core_ != nullptr &&
                           static_cast<comp_base*>(comp.p_impl->core_)->type ==
                               LCI_COMPLETION_QUEUE,
                       1))
    return static_cast<cq_impl*>(comp.p_impl)->pop();
  return as<cq_impl>(comp, "cq_pop")->pop();
}

comp_t alloc_handler(comp_handler_t handler, bool zero_copy_am, bool zero_copy_set,
                     const char* name, void* user_context) {
  if (!handler) throw std::runtime_error("lci::alloc_handler: the handler is nullptr");
  comp_attr_t a = make_attr(attr_comp_type_t::handler, name, user_context);
  a.zero_copy_am = zero_copy_set ? zero_copy_am : default_zero_copy();
  return comp_t(static_cast<void*>(static_cast<comp_impl_t*>(new handler_impl(a, handler))));
}

void free_comp(comp_t* comp) {
  if (!comp || comp->is_empty()) throw std::runtime_error("lci::free_comp: empty handle");
  if (!release_graph(comp->p_impl)) delete comp->p_impl;
  *comp = comp_t();
}

void comp_signal(comp_t comp, status_t status) {
  if (comp.is_empty()) throw std::runtime_error("lci::comp_signal: empty handle");
  comp.p_impl->signal(status);
}

}  // namespace detail

// ---- the rcomp registry ------------------------------------------------------------------

namespace {

constexpr uint32_t max_rcomps = 1u << 16;
std::atomic<comp_impl_t*> g_rcomps[max_rcomps];
std::mutex g_rcomps_mutex;
uint32_t g_next_rcomp = 1;  // 0 names no object

}  // namespace

bool lookup_rcomp(uint64_t handle, LCI_comp_t* out, comp_ref*) {
  if (handle >= max_rcomps) return false;
  comp_impl_t* c = g_rcomps[handle].load(std::memory_order_acquire);
  if (!c || !c->core_) return false;
  *out = static_cast<LCI_comp_t>(c->core_);
  return true;
}

namespace detail {

rcomp_t reserve_rcomps(rcomp_t n, runtime_t) {
  std::lock_guard<std::mutex> g(g_rcomps_mutex);
  if (n == 0 || g_next_rcomp + n > max_rcomps)
    throw std::runtime_error("lci::reserve_rcomps: cannot reserve " + std::to_string(n) +
                             " remote completion handles (at most " +
                             std::to_string(max_rcomps - 1) + " in all)");
  const rcomp_t start = g_next_rcomp;
  g_next_rcomp += n;
  return start;
}

rcomp_t register_rcomp(comp_t comp, rcomp_t rcomp, runtime_t) {
  if (comp.is_empty()) throw std::runtime_error("lci::register_rcomp: empty handle");
  std::lock_guard<std::mutex> g(g_rcomps_mutex);
  if (rcomp == 0) {
    if (g_next_rcomp >= max_rcomps)
      throw std::runtime_error("lci::register_rcomp: no remote completion handle is left");
    rcomp = g_next_rcomp++;
  } else if (rcomp >= g_next_rcomp) {
    throw std::runtime_error("lci::register_rcomp: handle " + std::to_string(rcomp) +
                             " was not reserved (reserve_rcomps)");
  }
  g_rcomps[rcomp].store(comp.p_impl, std::memory_order_release);
  return rcomp;
}

void deregister_rcomp(rcomp_t rcomp, runtime_t) {
  if (rcomp == 0 || rcomp >= max_rcomps)
    throw std::runtime_error("lci::deregister_rcomp: no such handle " + std::to_string(rcomp));
  g_rcomps[rcomp].store(nullptr, std::memory_order_release);
}

}  // namespace detail

}  // namespace lci

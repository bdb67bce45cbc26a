// The completion objects a peer may name, so that a completion handle that
// arrives in a message (the `remote_completion` of a one-sided operation,
// which the origin's program got from this process) is used only when it
// names one of them: a forged or stale value is never dereferenced.
//
// The C API's create calls (LCI_queue_create, LCI_sync_create,
// LCI_handler_create, and LCI_UR_CQ) add each object once it is fully
// constructed; LCI's internal objects (the collectives' handler, the runtime
// barrier's synchronizer) are never added, so no message can reach them. The table is striped: a handle hashes to one of 64
// cache-line-sized stripes, each a spin lock and a hash set, so lookups on
// the arrival path take one uncontended lock and unrelated creations do not
// meet.
//
// Lifetime. A handle found in the table is used after the lookup returns
// (a queue push after the payload was copied, or a rendezvous's completion
// signalled many progress calls later), while the program may free the
// object on another thread. So a lookup takes a reference (acquire()), under
// the stripe lock that a free also takes, and the object is destroyed only
// when the owner gave it up (retire(): it leaves the table at once, so no
// later lookup finds it) and every reference is released. Whichever of
// retire() and the last release() comes second destroys the object, on its
// own thread. A signal that arrives after the owner's free still reaches
// the object (a handler runs; a queue or synchronizer takes an entry no one
// reads) and is then freed with it.
#pragma once

#include <cstdint>

namespace lci {

struct comp_base;

namespace comp_registry {

// Exported from liblci (hidden by default) for the unit tests, whose
// completion objects call them too.
#define LCI_REGISTRY_EXPORT __attribute__((visibility("default")))
// Makes a fully constructed object nameable (the C API's create calls);
// the stripe lock orders its construction before every acquire() of it.
LCI_REGISTRY_EXPORT void add(comp_base* c);
LCI_REGISTRY_EXPORT void remove(const comp_base* c) noexcept;
// The live registered object whose address is `handle`, with a reference
// taken (release it), or nullptr.
LCI_REGISTRY_EXPORT comp_base* acquire(uint64_t handle) noexcept;
LCI_REGISTRY_EXPORT void release(comp_base* c) noexcept;
// The owner's free of a heap object (LCI_queue_free, ...): removes it from
// the table and drops the owner's reference; the object is destroyed now or
// by the last release().
LCI_REGISTRY_EXPORT void retire(comp_base* c) noexcept;
#undef LCI_REGISTRY_EXPORT

}  // namespace comp_registry

// The reference of one acquire(), released when this goes out of scope
// unless handed on with take().
class comp_ref {
 public:
  comp_ref() = default;
  ~comp_ref() { reset(nullptr); }
  comp_ref(const comp_ref&) = delete;
  comp_ref& operator=(const comp_ref&) = delete;

  void reset(comp_base* c) noexcept {
    if (c_) comp_registry::release(c_);
    c_ = c;
  }
  comp_base* get() const noexcept { return c_; }
  comp_base* take() noexcept {
    comp_base* c = c_;
    c_ = nullptr;
    return c;
  }

 private:
  comp_base* c_ = nullptr;
};

}  // namespace lci

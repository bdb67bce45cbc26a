// See registry.hpp.
#include "lci/comp/registry.hpp"

#include <unordered_set>

#include "lci/comp/callback.hpp"
#include "lci/comp/comp.hpp"
#include "lci/comp/handler.hpp"
#include "lci/comp/queue.hpp"
#include "lci/comp/sync.hpp"
#include "lci/util/log.hpp"
#include "lci/util/spin.hpp"

namespace lci::comp_registry {
namespace {

struct alignas(64) stripe {
  spin_lock lock;
  std::unordered_set<uint64_t> live;
};

constexpr size_t stripe_count = 64;

stripe& stripe_of(uint64_t handle) noexcept {
  // Never destroyed: objects may be freed during exit, after static
  // destructors ran. Heap objects are 16-byte aligned: hash the bits above.
  static stripe* const stripes = new stripe[stripe_count];
  const uint64_t h = (handle >> 4) * 0x9e3779b97f4a7c15ull;
  return stripes[h >> 58];
}

// Through the object's own type (comp_base's destructor is not virtual).
void destroy(comp_base* c) noexcept {
  switch (static_cast<int>(c->type)) {
    case LCI_COMPLETION_QUEUE:
      delete static_cast<comp_queue*>(c);
      return;
    case LCI_COMPLETION_SYNC:
      delete static_cast<comp_sync*>(c);
      return;
    case LCI_COMPLETION_HANDLER:
      delete static_cast<comp_handler*>(c);
      return;
    case static_cast<int>(comp_type_callback):
      delete static_cast<comp_callback*>(c);
      return;
    default:
      LCI_WARN("completion object %p of unknown type %d not freed", static_cast<void*>(c),
               static_cast<int>(c->type));
  }
}

}  // namespace

void add(comp_base* c) {
  c->listed = true;
  const uint64_t h = reinterpret_cast<uint64_t>(c);
  stripe& s = stripe_of(h);
  s.lock.lock();
  s.live.insert(h);
  s.lock.unlock();
}

void remove(const comp_base* c) noexcept {
  const uint64_t h = reinterpret_cast<uint64_t>(c);
  stripe& s = stripe_of(h);
  s.lock.lock();
  s.live.erase(h);
  s.lock.unlock();
}

comp_base* acquire(uint64_t handle) noexcept {
  stripe& s = stripe_of(handle);
  s.lock.lock();
  comp_base* c = nullptr;
  if (s.live.count(handle) != 0) {
    c = reinterpret_cast<comp_base*>(handle);
    // Relaxed: the object cannot go before this count is seen, as retire()
    // takes the stripe lock before its own decrement.
    c->refs.fetch_add(1, std::memory_order_relaxed);
  }
  s.lock.unlock();
  return c;
}

void release(comp_base* c) noexcept {
  // acq_rel: every use under the reference happens before the destruction.
  if (c->refs.fetch_sub(1, std::memory_order_acq_rel) == 1) destroy(c);
}

void retire(comp_base* c) noexcept {
  remove(c);
  release(c);
}

}  // namespace lci::comp_registry

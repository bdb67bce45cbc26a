// Completion objects: the common header.
//
// An LCI_comp_t is a pointer to a comp_base, the first (and only) base of one
// of comp_queue (comp/queue.hpp), comp_sync (comp/sync.hpp) or comp_handler
// (comp/handler.hpp). Single non-virtual inheritance keeps the base at offset
// 0, so static_cast<comp_base*>(LCI_comp_t) and a static_cast down to the type
// named by `type` are both free. comp_signal(), which delivers a request to
// any of them, lives in comp/signal.hpp (it needs all three definitions).
#pragma once

#include <atomic>
#include <cstdint>

#include "lci.h"
#include "lci/comp/registry.hpp"

namespace lci {

// "LCIO": set while a completion object is alive; cleared by its destructor so
// that debug builds can reject a freed or foreign handle.
inline constexpr uint32_t comp_magic = 0x4c43494fu;

struct comp_base {
  uint32_t magic = comp_magic;
  // LCI_COMPLETION_QUEUE, _SYNC, _HANDLER or comp_type_callback (comp/callback.hpp):
  // an int, since the last is no value of the C API's enum.
  int type;
  // In the registry (registry.hpp), so a peer's message may name it: set by
  // comp_registry::add, which the C API's create calls make once the object
  // is fully constructed. LCI's internal objects (the collectives' handler,
  // the barrier's synchronizer) are never added.
  bool listed = false;
  // The owner's reference plus one per arrival that named the object and has
  // not signalled it yet (comp_registry::acquire/release/retire).
  std::atomic<uint32_t> refs{1};

  explicit comp_base(int t) : type(t) {}
  comp_base(const comp_base&) = delete;
  comp_base& operator=(const comp_base&) = delete;

 protected:
  // Protected and non-virtual: an object is destroyed through its own type
  // (the owner switches on `type`), never through a comp_base pointer.
  // The volatile store survives dead-store elimination at end of lifetime.
  ~comp_base() {
    if (listed) comp_registry::remove(this);
    *static_cast<volatile uint32_t*>(&magic) = 0;
  }
};

inline comp_base* to_comp(LCI_comp_t comp) noexcept {
  return static_cast<comp_base*>(comp);
}

// A cheap plausibility check for debug builds: non-null, alive, of `type`.
inline bool comp_is_valid(LCI_comp_t comp, int type) noexcept {
  return comp != nullptr && to_comp(comp)->magic == comp_magic &&
         to_comp(comp)->type == type;
}

}  // namespace lci

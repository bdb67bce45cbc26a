// comp_signal: delivers a completed operation's request to a completion
// object according to the object's own type (queue push, synchronizer
// signal, handler call). Called by progress and by posting calls that
// complete at once; never by the application directly.
#pragma once

#include "lci.h"
#include "lci/comp/callback.hpp"
#include "lci/comp/comp.hpp"
#include "lci/comp/handler.hpp"
#include "lci/comp/queue.hpp"
#include "lci/comp/sync.hpp"
#include "lci/util/log.hpp"
#include "lci/util/spin.hpp"

namespace lci {

namespace detail {

// A push found no free cell. If some cell is only waiting for a consumer
// that has already claimed it (len() < capacity), retry; a queue that really
// holds `capacity` requests has overflowed, which the API defines as fatal.
[[gnu::noinline, gnu::cold]] inline void comp_queue_push_slow(
    comp_queue* q, const LCI_request_t& req) {
  backoff b;
  while (!q->push(req)) {
    if (q->len() >= q->capacity()) {
      fatal("completion queue %p overflowed its capacity of %zu entries "
            "(create it with LCI_queue_createx and a larger max_length, or "
            "pop it more often)",
            static_cast<void*>(q), q->capacity());
    }
    b.pause();
  }
}

[[gnu::noinline, gnu::cold]] inline void comp_signal_bad(LCI_comp_t comp) {
  fatal("completion object %p has no signallable type (type %d, magic 0x%x)", comp,
        static_cast<int>(to_comp(comp)->type), static_cast<unsigned>(to_comp(comp)->magic));
}

}  // namespace detail

inline void comp_signal(LCI_comp_t comp, const LCI_request_t& req) {
  comp_base* base = to_comp(comp);
  switch (static_cast<int>(base->type)) {
    case LCI_COMPLETION_QUEUE: {
      auto* q = static_cast<comp_queue*>(base);
      if (!q->push(req)) detail::comp_queue_push_slow(q, req);
      return;
    }
    case LCI_COMPLETION_SYNC:
      static_cast<comp_sync*>(base)->signal(req);
      return;
    case LCI_COMPLETION_HANDLER:
      static_cast<comp_handler*>(base)->signal(req);
      return;
    case static_cast<int>(comp_type_callback):
      static_cast<comp_callback*>(base)->signal(req);
      return;
    default:
      detail::comp_signal_bad(comp);
  }
}

}  // namespace lci

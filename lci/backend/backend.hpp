// The backend interface: what the protocol layer needs from a network.
//
// A backend device is one network context (libfabric fabric/domain/endpoint,
// or verbs context/PD/QPs) connected to the same device of every rank. Each
// backend is a `final` class with these members, written inline so that the
// protocol code, compiled against the concrete type, pays no dispatch:
//
//   status inject(int rank, const void* buf, size_t len, uint32_t imm);
//       small send with 32-bit immediate data, done at return, no completion
//   status post_send(int rank, const void* buf, size_t len, void* desc,
//                    uint32_t imm, void* ctx);
//       send from registered memory; a send_done completion carries ctx
//   status post_recv(void* buf, size_t len, void* desc, void* ctx);
//       posts a receive buffer; a recv completion carries ctx, the length,
//       the immediate data and the source rank
//   int poll(completion* out, int max);
//       drains up to max completions
//   mr register_memory(void* addr, size_t len); void deregister_memory(mr&);
//   size_t max_inject() const;
//
// Every `status` is ok or retry (a resource is momentarily missing: the
// caller backs off, progresses and tries again); anything else is fatal
// inside the backend, logged once where it is detected.
#pragma once

#include "lci/backend/net_types.hpp"
#include "lci/backend/ofi/ofi.hpp"

namespace lci::net {
using backend_device = ofi::ofi_device;
}

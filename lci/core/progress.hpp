// Progress: polling the backend, the one arrival dispatch, the backlog of
// operations the network refused, and LCI's own control messages.
//
// Arrival dispatch. Every message is validated once (validate.hpp), its
// header decoded once into the packet's `in` fields, and then handed to the
// one handler registered for its kind: a table indexed by msg_kind, and for
// msg_kind::control a second one indexed by control_kind. Each table entry
// is filled by the file that owns the kind, at static initialisation
// (LCI_ARRIVAL / LCI_CONTROL_ARRIVAL): eager.cpp the two-sided and eager
// one-sided kinds, rendezvous.cpp RTS-alloc and the rendezvous controls,
// rma.cpp notify and getv replies, fence.cpp gfence. No handler re-tests the
// kind it was registered for.
//
// A handler says what became of the packet: `repost` (its bytes are used
// up, and progress posts the same packet again as a receive, with no trip
// through the pool) or `kept` (handed to the program, waiting in the
// matching table, or already returned to the pool; progress posts a fresh
// packet instead).
#pragma once

#include <cstddef>
#include <cstdint>

#include "lci/core/device.hpp"
#include "lci/core/protocol.hpp"

namespace lci {

struct endpoint;

enum class arrival : uint8_t { repost, kept };

// A message of a kind other than control: `ep` is the endpoint its header
// names, already checked to exist on this device.
using arrival_handler = arrival (*)(device& d, endpoint* ep, packet* p);
using control_handler = arrival (*)(device& d, packet* p);

// Fill the tables (once per kind; a second registration is fatal).
bool register_arrival(msg_kind kind, arrival_handler handler);
bool register_control(control_kind kind, control_handler handler);

#define LCI_ARRIVAL_CAT2(a, b) a##b
#define LCI_ARRIVAL_CAT(a, b) LCI_ARRIVAL_CAT2(a, b)
// At namespace scope in the file that owns `kind`.
#define LCI_ARRIVAL(kind, handler)                                     \
  [[maybe_unused]] static const bool LCI_ARRIVAL_CAT(lci_arrival_, __LINE__) = \
      ::lci::register_arrival(kind, handler)
#define LCI_CONTROL_ARRIVAL(kind, handler)                             \
  [[maybe_unused]] static const bool LCI_ARRIVAL_CAT(lci_control_, __LINE__) = \
      ::lci::register_control(kind, handler)

// Sends one of LCI's own messages from inside progress: never refused, a
// message the network cannot take now waits in the device's backlog (in a
// pool packet; on the heap only while the pool is empty). `data` may be
// the payload of one of d's pool packets, which send_control then consumes.
void send_control(device& d, int rank, uint32_t imm, const void* data, size_t length);

}  // namespace lci

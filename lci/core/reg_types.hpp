// The data types of memory registration: a segment (LCII_mr_t, what an
// LCI_segment_t points to) and the registration of one buffer of an RDMA
// operation (local_reg). Types only, so that the operation types
// (rdv_op.hpp) and the live-handle registry need not include the
// registration calls of memory.hpp.
//
// A segment is either local (registered by this process on a device) or
// remote (deserialized from a peer's LCI_segment_serialize string: it holds
// the peer's key and the base address the peer registered, never a local
// registration).
#pragma once

#include <cstdint>

#include "lci.h"
#include "lci/backend/backend.hpp"
#include "lci/mem/reg_cache.hpp"

namespace lci {
struct device;
}

inline constexpr uint32_t segment_magic = 0x4c434953u;

struct LCII_mr_t {
  uint32_t magic = segment_magic;
  bool remote = false;
  lci::device* dev = nullptr;  // local: the device it is registered with
  lci::net::mr mr;              // local: the registration
  uintptr_t base = 0;           // local: start; remote: the owner's start
  size_t length = 0;
  // remote segments only
  int group = -1;               // the owner's device group
  uint64_t rkey = 0;
  uint64_t owner_handle = 0;    // the owner's LCI_segment_t, reported back in completions
  bool virt = true;             // the provider addresses by virtual address
};

namespace lci {

// A local buffer made usable for RDMA: the descriptor to pass, and the cache
// region to release afterwards (nullptr for a registered segment).
struct local_reg {
  void* desc = nullptr;
  uint64_t rkey = 0;
  uintptr_t base = 0;        // start of the registration (for offset addressing)
  reg_region* region = nullptr;
  reg_cache* cache = nullptr;  // the cache `region` came from
};

}  // namespace lci

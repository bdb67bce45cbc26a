// Memory registration: segments (LCI_segment_t), LCI long buffers, and the
// resolution of a long buffer to the registration an RDMA operation needs.
//
// A segment is either local (registered by this process on a device) or
// remote (deserialized from a peer's LCI_segment_serialize string: it holds
// the peer's key and the base address the peer registered, never a local
// registration). LCI_SEGMENT_ALL buffers are registered through the device's
// registration cache and released when the operation completes.
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

// Makes `buffer` usable for RDMA with `access` (net::mr_access::source for
// memory only sent from, else remote). False when an LCI_SEGMENT_ALL
// registration failed (a registered segment never fails).
bool register_local(device& d, const LCI_lbuffer_t& buffer, net::mr_access access,
                    local_reg* out);
void release_local(device& d, local_reg& r);
// A backend registration; handle == nullptr when it failed (or when the
// test hook LCIT_fail_next_registrations made it fail).
net::mr register_memory(device& d, void* address, size_t length, net::mr_access access);

// Where `peer` writes or reads `address` of a registration starting at `base`.
uint64_t rdma_address(device& d, int peer, uintptr_t base, const void* address);
// The RDMA address of `address` inside a segment of `rank` (a virtual
// address for the native transport and for providers that use them, else
// the offset into the segment).
uint64_t remote_rdma_address(const device& d, int rank, const LCII_mr_t* seg, uintptr_t address);

// nullptr when the registration failed.
LCI_segment_t segment_register(device& d, void* address, size_t length);
void segment_deregister(LCI_segment_t seg);
// LCI long buffers: malloc + register. Returns false, with nothing
// allocated, when memory is short or the registration failed (then
// *not_registered, if given, is set).
bool lbuffer_alloc(device& d, size_t size, size_t alignment, LCI_lbuffer_t* out,
                   bool* not_registered = nullptr);
void lbuffer_free(const LCI_lbuffer_t& buffer);

}  // namespace lci

// Memory registration: segments (LCI_segment_t), LCI long buffers, and the
// resolution of a long buffer to the registration an RDMA operation needs.
//
// The types (LCII_mr_t, local_reg) are reg_types.hpp's. LCI_SEGMENT_ALL
// buffers are registered through the device's registration cache and
// released when the operation completes.
#pragma once

#include <cstdint>

#include "lci.h"
#include "lci/backend/backend.hpp"
#include "lci/core/reg_types.hpp"
#include "lci/mem/reg_cache.hpp"

namespace lci {

struct device;

// Makes `buffer` usable for RDMA with `access` (net::mr_access::source for
// memory only sent from, else remote). False when an LCI_SEGMENT_ALL
// registration failed (a registered segment never fails).
bool register_local(device& d, const LCI_lbuffer_t& buffer, net::mr_access access,
                    local_reg* out);
void release_local(device& d, local_reg& r);
// (The backend registration itself, register_memory, is device.hpp's.)

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

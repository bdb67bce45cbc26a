// Segments, LCI long buffers and the registration of long buffers for RDMA.
#include "lci/core/memory.hpp"

#include <cstdlib>
#include <cstring>

#include "lci/core/handles.hpp"
#include "lci/core/device.hpp"
#include "lci/util/log.hpp"

namespace lci {

LCI_segment_t segment_register(device& d, void* address, size_t length) {
  const net::mr m = register_memory(d, address, length ? length : 1, net::mr_access::remote);
  if (!m.handle) return nullptr;
  auto* seg = new LCII_mr_t;
  seg->dev = &d;
  seg->base = reinterpret_cast<uintptr_t>(address);
  seg->length = length;
  seg->mr = m;
  seg->group = d.group_index;
  seg->rkey = seg->mr.rkey;
  seg->owner_handle = reinterpret_cast<uint64_t>(seg);
  seg->virt = d.net->uses_virtual_addresses();
  debug::track(seg, debug::handle_kind::segment);
  d.segments.add(seg->base, length, seg->owner_handle);
  return seg;
}

void segment_deregister(LCI_segment_t seg) {
  debug::untrack(seg);
  if (!seg->remote) {
    seg->dev->segments.remove(seg->base, seg->owner_handle);
    seg->dev->net->deregister_memory(seg->mr);
  }
  seg->magic = 0;
  delete seg;
}

bool lbuffer_alloc(device& d, size_t size, size_t alignment, LCI_lbuffer_t* out,
                   bool* not_registered) {
  void* p = nullptr;
  if (alignment) {
    if (posix_memalign(&p, alignment, size ? size : 1) != 0) return false;
  } else {
    p = malloc(size ? size : 1);
    if (!p) return false;
  }
  if (LCI_TOUCH_LBUFFER) memset(p, 0, size);
  LCI_segment_t seg = segment_register(d, p, size);
  if (!seg) {
    free(p);
    if (not_registered) *not_registered = true;
    return false;
  }
  out->segment = seg;
  out->address = p;
  out->length = size;
  return true;
}

void lbuffer_free(const LCI_lbuffer_t& buffer) {
  if (buffer.segment) segment_deregister(buffer.segment);
  free(buffer.address);
}

bool register_local(device& d, const LCI_lbuffer_t& buffer, net::mr_access access,
                    local_reg* out) {
  local_reg r;
  if (buffer.segment) {
    LCII_mr_t* seg = buffer.segment;
    r.desc = seg->mr.desc;
    r.rkey = seg->mr.rkey;
    r.base = seg->base;
    *out = r;
    return true;
  }
  // LCI_SEGMENT_ALL: through the registration cache for that access.
  reg_cache& cache = d.reg_cache_for(access);
  r.region = cache.acquire(buffer.address, buffer.length);
  if (!r.region) return false;
  const auto* m = static_cast<const net::mr*>(reg_cache::handle(r.region));
  r.desc = m->desc;
  r.rkey = m->rkey;
  r.base = reg_cache::base(r.region);
  r.cache = &cache;
  *out = r;
  return true;
}

void release_local(device& /*d*/, local_reg& r) {
  if (r.region) r.cache->release(r.region);
  r.region = nullptr;
}

uint64_t remote_rdma_address(const device& d, int rank, const LCII_mr_t* seg, uintptr_t address) {
  return seg->virt || d.net->uses_virtual_addresses(rank) ? address : address - seg->base;
}

uint64_t rdma_address(device& d, int peer, uintptr_t base, const void* address) {
  return d.net->remote_address(peer, reinterpret_cast<const void*>(base), address);
}

}  // namespace lci

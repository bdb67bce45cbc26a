// C entry points: memory registration, segments, LCI long buffers.
#include <cinttypes>
#include <cstdio>
#include <cstring>

#include "lci.h"
#include "lci/api/check.hpp"
#include "lci/util/log.hpp"
#include "lci/core/memory.hpp"
#include "lci/core/protocol.hpp"
#include "lci/core/runtime.hpp"
#include "lci/core/segment_codec.hpp"

using namespace lci;

size_t LCI_get_iovec_piggy_back_size(int count) noexcept try {
  // The iovec's descriptors share a medium packet with the piggy-back bytes
  // in every message of the protocol (lci/core/protocol.hpp).
  const long size = static_cast<long>(LCI_MEDIUM_SIZE) - static_cast<long>(iovec_header_size) -
                   static_cast<long>(iovec_buffer_size) * count;
  return size > 0 ? static_cast<size_t>(size) : 0;
} catch (...) {
  lci::fatal_exception(__func__);
}

LCI_error_t LCI_memory_register(LCI_device_t device, void* address, size_t length,
                                LCI_segment_t* segment) noexcept try {
  LCI_ALWAYS_HANDLE("LCI_memory_register", "device", device);
  LCI_CHECK(debug::check_device("LCI_memory_register", device));
  LCI_CHECK(segment ? LCI_OK : debug::fail("LCI_memory_register", "argument segment is NULL"));
  LCI_CHECK(address || !length ? LCI_OK
                               : debug::fail("LCI_memory_register", "argument address is NULL"));
  // A registration the network refuses (for instance over the locked-memory
  // limit) leaves *segment untouched: the program may free memory and retry.
  LCI_segment_t seg = segment_register(*to_device(device), address, length);
  if (!seg) return LCI_ERR_RETRY;
  *segment = seg;
  return LCI_OK;
} catch (...) {
  lci::log_exception(__func__);
  return LCI_ERR_FATAL;
}

LCI_error_t LCI_memory_deregister(LCI_segment_t* segment) noexcept try {
  LCI_CHECK(segment ? LCI_OK : debug::fail("LCI_memory_deregister", "argument segment is NULL"));
  LCI_CHECK(debug::check_handle("LCI_memory_deregister", "segment", *segment,
                                debug::handle_kind::segment));
  segment_deregister(*segment);
  *segment = nullptr;
  return LCI_OK;
} catch (...) {
  lci::log_exception(__func__);
  return LCI_ERR_FATAL;
}

LCI_error_t LCI_segment_serialize(LCI_segment_t segment, char* string) noexcept try {
  LCI_CHECK(debug::check_handle("LCI_segment_serialize", "segment", segment,
                                debug::handle_kind::segment));
  LCI_CHECK(string ? LCI_OK : debug::fail("LCI_segment_serialize", "argument string is NULL"));
  LCI_CHECK(!segment->remote ? LCI_OK
                             : debug::fail("LCI_segment_serialize",
                                           "argument segment is a deserialized handle"));
  segment_text t;
  t.group = segment->group;
  t.base = static_cast<uint64_t>(segment->base);
  t.length = static_cast<uint64_t>(segment->length);
  t.rkey = segment->rkey;
  t.handle = reinterpret_cast<uint64_t>(segment);
  t.virt = segment->virt;
  format_segment(t, string);
  return LCI_OK;
} catch (...) {
  lci::log_exception(__func__);
  return LCI_ERR_FATAL;
}

LCI_error_t LCI_segment_deserialize(char* string, LCI_segment_t* segment) noexcept try {
  if (!string || !segment) {
    LCI_WARN("LCI_segment_deserialize: argument %s is NULL", string ? "segment" : "string");
    return LCI_ERR_FATAL;
  }
  segment_text t;
  if (!parse_segment(string, t)) {
    LCI_WARN("LCI_segment_deserialize: \"%.64s\" is not a serialized LCI segment", string);
    return LCI_ERR_FATAL;
  }
  auto* seg = new LCII_mr_t;
  seg->remote = true;
  seg->group = t.group;
  seg->base = static_cast<uintptr_t>(t.base);
  seg->length = static_cast<size_t>(t.length);
  seg->rkey = t.rkey;
  seg->owner_handle = t.handle;
  seg->virt = t.virt;
  *segment = seg;
  LCI_DEBUG_ONLY(debug::track(seg, debug::handle_kind::segment));
  return LCI_OK;
} catch (...) {
  lci::log_exception(__func__);
  return LCI_ERR_FATAL;
}

LCI_error_t LCI_lbuffer_alloc(LCI_device_t device, size_t size,
                              LCI_lbuffer_t* lbuffer) noexcept try {
  LCI_ALWAYS_HANDLE("LCI_lbuffer_alloc", "device", device);
  LCI_CHECK(debug::check_device("LCI_lbuffer_alloc", device));
  LCI_CHECK(lbuffer ? LCI_OK : debug::fail("LCI_lbuffer_alloc", "argument lbuffer is NULL"));
  LCI_lbuffer_t b;
  if (!lbuffer_alloc(*to_device(device), size, 0, &b)) return LCI_ERR_RETRY;
  *lbuffer = b;
  return LCI_OK;
} catch (...) {
  lci::log_exception(__func__);
  return LCI_ERR_FATAL;
}

LCI_error_t LCI_lbuffer_memalign(LCI_device_t device, size_t size, size_t alignment,
                                 LCI_lbuffer_t* lbuffer) noexcept try {
  LCI_ALWAYS_HANDLE("LCI_lbuffer_memalign", "device", device);
  LCI_CHECK(debug::check_device("LCI_lbuffer_memalign", device));
  LCI_CHECK(lbuffer ? LCI_OK : debug::fail("LCI_lbuffer_memalign", "argument lbuffer is NULL"));
  LCI_CHECK(alignment && !(alignment & (alignment - 1)) && alignment % sizeof(void*) == 0
                ? LCI_OK
                : debug::fail("LCI_lbuffer_memalign",
                              "argument alignment = %zu is not a power of two multiple of %zu",
                              alignment, sizeof(void*)));
  LCI_lbuffer_t b;
  if (!lbuffer_alloc(*to_device(device), size, alignment, &b)) return LCI_ERR_RETRY;
  *lbuffer = b;
  return LCI_OK;
} catch (...) {
  lci::log_exception(__func__);
  return LCI_ERR_FATAL;
}

LCI_error_t LCI_lbuffer_free(LCI_lbuffer_t lbuffer) noexcept try {
  LCI_CHECK(!lbuffer.segment || debug::is_live(lbuffer.segment, debug::handle_kind::segment)
                ? LCI_OK
                : debug::fail("LCI_lbuffer_free", "argument lbuffer.segment (%p) is not a live segment",
                              (void*)lbuffer.segment));
  lbuffer_free(lbuffer);
  return LCI_OK;
} catch (...) {
  lci::log_exception(__func__);
  return LCI_ERR_FATAL;
}

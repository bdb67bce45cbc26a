// C entry points of the long-message, I/O-vector and one-sided API that this
// build does not provide yet: each reports LCI_ERR_FEATURE_NA with a line
// naming the call, so a program that reaches one learns why.
#include "lci.h"
#include "lci/core/log.hpp"

namespace {
LCI_error_t not_available(const char* call) {
  LCI_WARN("%s: not available in this build of LCI", call);
  return LCI_ERR_FEATURE_NA;
}
}  // namespace

size_t LCI_get_iovec_piggy_back_size(int count) {
  // 24 bytes of descriptor header and 32 per long buffer share the packet.
  long size = static_cast<long>(LCI_MEDIUM_SIZE) - 24 - 32L * count;
  return size > 0 ? static_cast<size_t>(size) : 0;
}

LCI_error_t LCI_memory_register(LCI_device_t, void*, size_t, LCI_segment_t*) {
  return not_available("LCI_memory_register");
}
LCI_error_t LCI_memory_deregister(LCI_segment_t*) { return not_available("LCI_memory_deregister"); }
LCI_error_t LCI_segment_serialize(LCI_segment_t, char*) { return not_available("LCI_segment_serialize"); }
LCI_error_t LCI_segment_deserialize(char*, LCI_segment_t*) {
  return not_available("LCI_segment_deserialize");
}
LCI_error_t LCI_lbuffer_alloc(LCI_device_t, size_t, LCI_lbuffer_t*) {
  return not_available("LCI_lbuffer_alloc");
}
LCI_error_t LCI_lbuffer_memalign(LCI_device_t, size_t, size_t, LCI_lbuffer_t*) {
  return not_available("LCI_lbuffer_memalign");
}
LCI_error_t LCI_lbuffer_free(LCI_lbuffer_t) { return not_available("LCI_lbuffer_free"); }
LCI_error_t LCI_sendl(LCI_endpoint_t, LCI_lbuffer_t, int, LCI_tag_t, LCI_comp_t, void*) {
  return not_available("LCI_sendl");
}
LCI_error_t LCI_recvl(LCI_endpoint_t, LCI_lbuffer_t, int, LCI_tag_t, LCI_comp_t, void*) {
  return not_available("LCI_recvl");
}
LCI_error_t LCI_sendv(LCI_endpoint_t, LCI_iovec_t, int, LCI_tag_t, LCI_comp_t, void*) {
  return not_available("LCI_sendv");
}
LCI_error_t LCI_recvv(LCI_endpoint_t, LCI_iovec_t, int, LCI_tag_t, LCI_comp_t, void*) {
  return not_available("LCI_recvv");
}
LCI_error_t LCI_puts(LCI_endpoint_t, LCI_short_t, int, LCI_tag_t, uintptr_t) {
  return not_available("LCI_puts");
}
LCI_error_t LCI_putma(LCI_endpoint_t, LCI_mbuffer_t, int, LCI_tag_t, uintptr_t) {
  return not_available("LCI_putma");
}
LCI_error_t LCI_putmna(LCI_endpoint_t, LCI_mbuffer_t, int, LCI_tag_t, uintptr_t) {
  return not_available("LCI_putmna");
}
LCI_error_t LCI_putmac(LCI_endpoint_t, LCI_mbuffer_t, int, LCI_tag_t, uintptr_t, LCI_comp_t, void*) {
  return not_available("LCI_putmac");
}
LCI_error_t LCI_putm(LCI_endpoint_t, LCI_mbuffer_t, int, LCI_tag_t, LCI_mbuffer_t, uintptr_t) {
  return not_available("LCI_putm");
}
LCI_error_t LCI_putmn(LCI_endpoint_t, LCI_mbuffer_t, int, LCI_tag_t, LCI_mbuffer_t, uintptr_t) {
  return not_available("LCI_putmn");
}
LCI_error_t LCI_putla(LCI_endpoint_t, LCI_lbuffer_t, LCI_comp_t, int, LCI_tag_t, uintptr_t, void*) {
  return not_available("LCI_putla");
}
LCI_error_t LCI_putl(LCI_endpoint_t, LCI_lbuffer_t, LCI_comp_t, int, LCI_tag_t, LCI_lbuffer_t,
                     uintptr_t, void*) {
  return not_available("LCI_putl");
}
LCI_error_t LCI_getl(LCI_endpoint_t, LCI_lbuffer_t*, size_t, LCI_comp_t, int, LCI_tag_t,
                     LCI_lbuffer_t, uintptr_t, void*) {
  return not_available("LCI_getl");
}
LCI_error_t LCI_putva(LCI_endpoint_t, LCI_iovec_t, LCI_comp_t, int, LCI_tag_t, uintptr_t, void*) {
  return not_available("LCI_putva");
}
LCI_error_t LCI_putv(LCI_endpoint_t, LCI_iovec_t, LCI_comp_t, int, LCI_tag_t, LCI_iovec_t,
                     uintptr_t, void*) {
  return not_available("LCI_putv");
}
LCI_error_t LCI_getv(LCI_endpoint_t, LCI_iovec_t, LCI_comp_t, int, LCI_tag_t, LCI_iovec_t,
                     uintptr_t, void*) {
  return not_available("LCI_getv");
}
LCI_error_t LCI_fence_wait(LCI_endpoint_t) { return not_available("LCI_fence_wait"); }
LCI_error_t LCI_gfence_wait(LCI_endpoint_t) { return not_available("LCI_gfence_wait"); }

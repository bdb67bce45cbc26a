/* The fault-injection hooks of liblci (lci/core/test_hooks.hpp), enabled by
 * LCI_TEST_HOOKS=1 in the environment. For LCI's own tests only. */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "lci.h"

#ifdef __cplusplus
extern "C" {
#endif
LCI_error_t LCIT_send_raw(LCI_endpoint_t ep, int rank, uint32_t imm, const void* data,
                          size_t length);
LCI_error_t LCIT_fail_next_rdma(void);
LCI_error_t LCIT_refuse_next_recv_posts(int n);
LCI_error_t LCIT_fail_next_registrations(int n);
LCI_error_t LCIT_limit_message_size(size_t n);
LCI_error_t LCIT_coll_internal_comp(uint64_t* handle);
uint64_t LCIT_dropped_messages(void);
#ifdef __cplusplus
}
#endif

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
                          size_t length) LCI_NOEXCEPT;
LCI_error_t LCIT_fail_next_rdma(void) LCI_NOEXCEPT;
LCI_error_t LCIT_refuse_next_recv_posts(int n) LCI_NOEXCEPT;
LCI_error_t LCIT_fail_next_sends(int n) LCI_NOEXCEPT;
LCI_error_t LCIT_lose_next_sends(int n) LCI_NOEXCEPT;
LCI_error_t LCIT_fail_next_registrations(int n) LCI_NOEXCEPT;
LCI_error_t LCIT_limit_message_size(size_t n) LCI_NOEXCEPT;
LCI_error_t LCIT_coll_internal_comp(uint64_t* handle) LCI_NOEXCEPT;
uint64_t LCIT_dropped_messages(void) LCI_NOEXCEPT;
LCI_error_t LCIT_fail_peer(int rank) LCI_NOEXCEPT;

/* A cell of the native transport's rings, field by field (see
 * lci/backend/native/native.hpp): what a faulty or hostile local rank can write. */
enum {
  LCIT_CELL_NOP,
  LCIT_CELL_MESSAGE,
  LCIT_CELL_WRITE_NOTICE,
  LCIT_CELL_WRITE_DATA,
  LCIT_CELL_WRITE_ACK,
  LCIT_CELL_READ_REQUEST,
  LCIT_CELL_READ_REPLY
};
typedef struct {
  uint8_t kind;
  uint8_t flags; /* 1: carries immediate data, 2: error */
  int32_t src;
  uint32_t imm;
  uint32_t length;
  uint64_t address;
  uint64_t key;
  uint64_t op;
} LCIT_native_cell;
/* Publishes `cell` in `rank`'s ring of `device` with payload_length bytes of
 * payload (at most a cell's room are copied, whatever cell->length says);
 * with retarget != 0, then overwrites the published cell's address with it.
 * LCI_ERR_RETRY: the ring is full; LCI_ERR_FEATURE_NA: hooks off, or rank is
 * not served by the native transport. */
LCI_error_t LCIT_native_forge(LCI_device_t device, int rank, const LCIT_native_cell* cell,
                              const void* payload, size_t payload_length, uint64_t retarget)
    LCI_NOEXCEPT;
/* The native transport's unanswered peer requests of `device` (replies
 * waiting for room) and its own pipelined operations in flight. */
LCI_error_t LCIT_native_state(LCI_device_t device, size_t* pending_replies, int* ops_in_flight)
    LCI_NOEXCEPT;
/* Messages the native transport received on `device` since it was
 * created, and how many of them were copied from their ring cells straight
 * into a waiting receive (LCI_SHM_IN_PLACE). */
LCI_error_t LCIT_native_received(LCI_device_t device, uint64_t* total, uint64_t* in_place)
    LCI_NOEXCEPT;
/* How often a thread progressing `device` napped (LCI_PROGRESS_NAP):
 * LCI_ERR_FEATURE_NA where the device has no native transport. */
LCI_error_t LCIT_native_naps(LCI_device_t device, uint64_t* naps) LCI_NOEXCEPT;
/* Devices created after the call treat cross-memory attach to `rank` as
 * refused (its bulk data is pipelined), as Yama or a container would. */
LCI_error_t LCIT_native_refuse_cma(int rank) LCI_NOEXCEPT;
/* The key peers name `segment` by, and the network provider's own key of
 * its registration (where messages are authenticated the two differ, and
 * the provider's key reaches nothing). */
LCI_error_t LCIT_segment_keys(LCI_segment_t segment, uint64_t* peer_key, uint64_t* provider_key)
    LCI_NOEXCEPT;
/* What `device` holds (hooks on or off), to count before and after: free
 * packets (the pool and its thread caches) of packets_total, receive
 * packets not re-posted, rendezvous ids in use, matching-table entries
 * (posted receives and unexpected messages), queued backlog entries. */
typedef struct {
  size_t packets_free, packets_total, receives_missing, rendezvous, matching, backlog;
} LCIT_resources_t;
LCI_error_t LCIT_resources(LCI_device_t device, LCIT_resources_t* out) LCI_NOEXCEPT;
/* The longest RDMA piece `device` sends towards `rank` (hooks on or off). */
size_t LCIT_rdma_piece(LCI_device_t device, int rank) LCI_NOEXCEPT;
/* The libfabric backend's message key (out[0], out[1]) and job token
 * (out[2]) of `device`, 0 where there is none; LCI_ERR_FEATURE_NA: hooks
 * off, or another backend. */
LCI_error_t LCIT_message_secret(LCI_device_t device, uint64_t out[3]) LCI_NOEXCEPT;
#ifdef __cplusplus
}
#endif

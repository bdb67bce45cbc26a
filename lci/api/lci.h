/**
 * @file lci.h
 * @brief The Lightweight Communication Interface, version 1.7 C API.
 *
 * Source compatible with programs written for LCI 1.7.x; the `LCIX_*` names
 * are extensions. Unless a function says otherwise it returns `LCI_OK` on
 * success, and `LCI_ERR_RETRY` means the call had no effect and may be made
 * again after progress (`LCI_progress`). Debug builds (`LCI_DEBUG`) check
 * every argument and return `LCI_ERR_FATAL` with a message for a bad one.
 * The project's API contract gives the full semantics of every call.
 */
#ifndef LCI_H
#define LCI_H

#include "lct.h"

#include <stdint.h>
#include <stdlib.h>
#include <stdbool.h>
#include <stdio.h>

#include "lci_config.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Marks a symbol exported by liblci. */
#define LCI_API __attribute__((visibility("default")))

/* In C++ (C++11 and later) every function of this header is noexcept: no
 * C++ exception leaves LCI. One raised inside a call is reported by a line
 * naming the call and LCI_ERR_FATAL, or, for a function without an
 * LCI_error_t result, ends the process with that line. Expands to nothing
 * in C. */
#if defined(__cplusplus) && __cplusplus >= 201103L
/** `noexcept` in C++11 and later, nothing in C. */
#define LCI_NOEXCEPT noexcept
#else
/** `noexcept` in C++11 and later, nothing in C. */
#define LCI_NOEXCEPT
#endif

/* ---- 1. Errors ---------------------------------------------------------- */

/** Result of every LCI call (and the `flag` of a completed request). */
typedef enum {
  LCI_OK = 0,          ///< 0: done (a split operation: started, and it will complete)
  LCI_ERR_RETRY,       ///< 1: back-pressure, the call had no effect; progress and retry
  LCI_ERR_RETRY_LOCK,  ///< 2: never returned, kept for source compatibility
  LCI_ERR_RETRY_NOMEM, ///< 3: never returned, kept for source compatibility
  LCI_ERR_FEATURE_NA,  ///< 4: not returned by any function of this header
  LCI_ERR_FATAL,       ///< 5: an error; most fatal conditions abort with a message instead
} LCI_error_t;

/* ---- 2. Types and constants --------------------------------------------- */

/** `remote_completion` value naming the target endpoint's default completion object. */
#define LCI_DEFAULT_COMP_REMOTE 0
/** Segment of a long buffer the program did not register: LCI registers it for the transfer. */
#define LCI_SEGMENT_ALL NULL
/** Rank argument of a receive on an `LCI_MATCH_TAG` endpoint (matches any sender). */
#define LCI_RANK_ANY (-1)
/** Bytes carried by a short message (`LCI_short_t`). */
#define LCI_SHORT_SIZE 32

/** How an endpoint matches arriving two-sided messages with posted receives. */
typedef enum {
  LCI_MATCH_RANKTAG = 0, ///< by sender rank and tag
  LCI_MATCH_TAG          ///< by tag alone (receives pass `LCI_RANK_ANY` or any rank)
} LCI_match_t;
/** The two ports of an endpoint, each with its own completion type. */
typedef enum {
  LCI_PORT_COMMAND = 0, ///< completions of operations this process issues (origin side)
  LCI_PORT_MESSAGE = 1  ///< completions of receives and of one-sided operations targeting it
} LCI_port_t;
/** Kind of a completion object, and completion type of an endpoint's port. */
typedef enum {
  LCI_COMPLETION_NONE = 0, ///< the port signals nothing (complete with fences)
  LCI_COMPLETION_QUEUE,    ///< a completion queue (`LCI_queue_create`)
  LCI_COMPLETION_HANDLER,  ///< a handler (`LCI_handler_create`)
  LCI_COMPLETION_SYNC,     ///< a synchronizer (`LCI_sync_create`)
} LCI_comp_type_t;
/** Which member of `LCI_data_t` a completed request carries. */
typedef enum {
  LCI_IMMEDIATE = 0, ///< `data.immediate`: short data
  LCI_MEDIUM,        ///< `data.mbuffer`: a medium message
  LCI_LONG,          ///< `data.lbuffer`: a long message
  LCI_IOVEC          ///< `data.iovec`: an I/O vector
} LCI_data_type_t;
/** Rendezvous protocol of long messages (`LCI_RDV_PROTOCOL`). */
typedef enum {
  LCI_RDV_WRITE,   ///< RDMA write, then a finish message
  LCI_RDV_WRITEIMM ///< RDMA write with immediate data (the default)
} LCI_rdv_protocol_t;
/** LCI 1.7.9's backend lock modes (`LCI_BACKEND_TRY_LOCK_MODE`); accepted, without effect. */
typedef enum {
  LCI_BACKEND_TRY_LOCK_SEND = 1,         ///< try-lock around sends (no effect here)
  LCI_BACKEND_TRY_LOCK_RECV = 1 << 1,    ///< try-lock around receives (no effect here)
  LCI_BACKEND_TRY_LOCK_POLL = 1 << 2,    ///< try-lock around polls (no effect here)
  LCI_BACKEND_TRY_LOCK_GLOBAL = 1 << 3,  ///< one global try-lock (no effect here)
  LCI_BACKEND_LOCK_GLOBAL = 1 << 4,      ///< one global lock (no effect here)
  LCI_BACKEND_TRY_LOCK_MODE_MAX = 1 << 5, ///< one past the last flag
} LCI_backend_try_lock_mode_t;
/** LCI 1.7.9's device lock modes (`LCI_DEVICE_LOCK_MODE`); accepted, without effect. */
typedef enum {
  LCI_DEVICE_LOCK_MODE_NONE,  ///< no device lock
  LCI_DEVICE_LOCK_MODE_BLOCK, ///< a blocking device lock (no effect here)
  LCI_DEVICE_LOCK_MODE_TRY,   ///< a device try-lock (no effect here)
  LCI_DEVICE_LOCK_MODE_MAX,   ///< one past the last mode
} LCI_DEVICE_LOCK_MODE_t;

/** Message tag, `0 ... LCI_MAX_TAG`. */
typedef uint32_t LCI_tag_t;
/** Handle of a completion object: queue, synchronizer or handler. */
typedef void* LCI_comp_t;
/** Opaque memory registration (behind `LCI_segment_t`). */
struct LCII_mr_t;
/** A registered memory segment, or a deserialized remote segment handle. */
typedef struct LCII_mr_t* LCI_segment_t;
/** Opaque device. */
struct LCI_device_s;
/** Handle of a device: network context, packet pool, matching table, progress engine. */
typedef struct LCI_device_s* LCI_device_t;
/** Opaque endpoint. */
struct LCI_endpoint_s;
/** Handle of an endpoint: a device bound to a match type and completion types. */
typedef struct LCI_endpoint_s* LCI_endpoint_t;
/** Opaque property list. */
struct LCI_plist_s;
/** Handle of a property list, the recipe of `LCI_endpoint_init`. */
typedef struct LCI_plist_s* LCI_plist_t;
/** Another name of `LCI_segment_t`. */
typedef LCI_segment_t LCI_reg_t;

/** A long buffer: memory and the segment that covers it. */
struct LCI_lbuffer_t {
  LCI_segment_t segment; ///< registration covering the buffer, or `LCI_SEGMENT_ALL`
  void* address;         ///< first byte
  size_t length;         ///< length in bytes
};
/** A long buffer (see struct LCI_lbuffer_t). */
typedef struct LCI_lbuffer_t LCI_lbuffer_t;

/** A medium buffer: user memory, or an LCI medium buffer of capacity `LCI_MEDIUM_SIZE`. */
struct LCI_mbuffer_t {
  void* address; ///< first byte
  size_t length; ///< length in bytes, at most `LCI_MEDIUM_SIZE`
};
/** A medium buffer (see struct LCI_mbuffer_t). */
typedef struct LCI_mbuffer_t LCI_mbuffer_t;

/** Short data, passed by value; all `LCI_SHORT_SIZE` bytes travel. */
typedef union {
  char val[LCI_SHORT_SIZE]; ///< the bytes
} LCI_short_t;

/** An I/O vector: a piggy-back payload copied eagerly and `count` long buffers. */
struct LCI_iovec_t {
  LCI_mbuffer_t piggy_back; ///< any memory, at most `LCI_get_iovec_piggy_back_size(count)` bytes
  LCI_lbuffer_t* lbuffers;  ///< array of `count` long buffers (NULL in a dynamic receive)
  int count;                ///< number of long buffers, `1 ... LCI_IOVEC_SIZE`
};
/** An I/O vector (see struct LCI_iovec_t). */
typedef struct LCI_iovec_t LCI_iovec_t;

/** The data of a completed request; `LCI_request_t::type` says which member. */
typedef union {
  LCI_short_t immediate; ///< `LCI_IMMEDIATE`
  LCI_mbuffer_t mbuffer; ///< `LCI_MEDIUM`
  LCI_lbuffer_t lbuffer; ///< `LCI_LONG`
  LCI_iovec_t iovec;     ///< `LCI_IOVEC`
} LCI_data_t;

/** What a completion delivers, by value. */
typedef struct {
  LCI_error_t flag;     ///< `LCI_OK`, or why the operation failed
  int rank;             ///< the other process (sender, destination or target)
  LCI_tag_t tag;        ///< the message's tag
  LCI_data_type_t type; ///< which member of `data` is valid
  LCI_data_t data;      ///< the data or the buffer of the operation
  void* user_context;   ///< the posting call's `user_context` (NULL at one-sided targets)
} LCI_request_t;

/** A handler completion object's function; runs inside LCI, must be short and not call LCI. */
typedef void (*LCI_handler_t)(LCI_request_t request);

/* ---- 3. Globals (set by LCI_initialize) ---------------------------------- */

extern LCI_API int LCI_NUM_PROCESSES;  ///< processes in the job
extern LCI_API int LCI_RANK;           ///< this process, `0 ... LCI_NUM_PROCESSES-1`
extern LCI_API int LCI_NUM_DEVICES;    ///< live devices of this process, `LCI_UR_DEVICE` included
extern LCI_API int LCI_MAX_ENDPOINTS;  ///< endpoints a process may create (`LCI_MAX_ENDPOINTS`)
extern LCI_API int LCI_MAX_TAG;        ///< largest tag, 65535
extern LCI_API int LCI_MEDIUM_SIZE;    ///< largest medium message: `LCI_PACKET_SIZE` - 64
extern LCI_API int LCI_IOVEC_SIZE;     ///< largest `count` of an I/O vector
/** Long transfers are split into pieces of at most this many bytes. */
extern LCI_API size_t LCI_MAX_SINGLE_MESSAGE_SIZE;
extern LCI_API int LCI_DEFAULT_TABLE_LENGTH; ///< initial size of a device's matching table
extern LCI_API int LCI_MAX_TABLE_LENGTH;     ///< accepted, without effect
extern LCI_API int LCI_DEFAULT_QUEUE_LENGTH; ///< initial capacity of an `LCI_queue_create` queue
extern LCI_API int LCI_MAX_QUEUE_LENGTH;     ///< capacity such a queue may grow to
extern LCI_API int LCI_MAX_SYNC_LENGTH;      ///< largest synchronizer threshold
extern LCI_API LCI_device_t LCI_UR_DEVICE;   ///< default device, made by `LCI_initialize`
extern LCI_API LCI_endpoint_t LCI_UR_ENDPOINT; ///< default endpoint on `LCI_UR_DEVICE`
extern LCI_API LCI_comp_t LCI_UR_CQ;         ///< default completion queue

/* LCI 1.7.9's tuning globals, each set from the environment variable of the
 * same name; configuration.md says which have no effect here. */
extern LCI_API int LCI_PACKET_RETURN_THRESHOLD; ///< accepted, without effect
extern LCI_API int LCI_IBV_USE_ODP;      ///< verbs: register with on-demand paging
extern LCI_API int LCI_TOUCH_LBUFFER;    ///< nonzero: `LCI_lbuffer_alloc` touches every page
extern LCI_API int LCI_USE_DREG;         ///< cache registrations of `LCI_SEGMENT_ALL` buffers
extern LCI_API int LCI_IBV_USE_PREFETCH; ///< accepted, without effect
extern LCI_API int LCI_PACKET_SIZE;      ///< packet size in bytes (medium size + 64)
extern LCI_API int LCI_SERVER_NUM_PKTS;  ///< packets per device
extern LCI_API int LCI_SERVER_MAX_SENDS; ///< accepted, without effect
extern LCI_API int LCI_SERVER_MAX_RECVS; ///< receives a device keeps posted to the network
extern LCI_API int LCI_SERVER_MAX_CQES;  ///< accepted, without effect
extern LCI_API int LCI_SEND_SLOW_DOWN_USEC; ///< accepted, without effect
extern LCI_API int LCI_RECV_SLOW_DOWN_USEC; ///< accepted, without effect
extern LCI_API int LCI_IBV_GID_IDX;      ///< verbs: GID index, -1 to select automatically
extern LCI_API int LCI_IBV_FORCE_GID_AUTO_SELECT; ///< accepted, without effect
extern LCI_API bool LCI_IBV_ENABLE_EVENT_POLLING_THREAD; ///< accepted, without effect
extern LCI_API bool LCI_IBV_ENABLE_TD;           ///< accepted, without effect
extern LCI_API bool LCI_ENABLE_PRG_NET_ENDPOINT; ///< accepted, without effect
extern LCI_API bool LCI_UCX_USE_TRY_LOCK;        ///< accepted, without effect (no UCX backend)
extern LCI_API bool LCI_UCX_PROGRESS_FOCUSED;    ///< accepted, without effect (no UCX backend)
extern LCI_API bool LCI_USE_GLOBAL_PACKET_POOL;  ///< accepted, without effect
extern LCI_API LCI_rdv_protocol_t LCI_RDV_PROTOCOL; ///< rendezvous protocol of long messages
extern LCI_API uint64_t LCI_BACKEND_TRY_LOCK_MODE;  ///< accepted, without effect
extern LCI_API uint64_t LCI_DEVICE_LOCK_MODE;       ///< accepted, without effect

/* ---- Runtime ------------------------------------------------------------- */

/** Collective: starts LCI. Reads the environment once, sets the globals and creates
 * `LCI_UR_DEVICE`, `LCI_UR_CQ` and `LCI_UR_ENDPOINT`; ends with a barrier. Failures abort. */
LCI_API LCI_error_t LCI_initialize() LCI_NOEXCEPT;
/** Sets `*flag` to 1 between `LCI_initialize` and `LCI_finalize`, else 0; callable any time. */
LCI_API LCI_error_t LCI_initialized(int* flag) LCI_NOEXCEPT;
/** Collective: a barrier, then releases the default objects and all runtime state. */
LCI_API LCI_error_t LCI_finalize() LCI_NOEXCEPT;
/** Collective barrier over all processes; drives progress on `LCI_UR_DEVICE`. One thread per
 * process at a time. */
LCI_API LCI_error_t LCI_barrier() LCI_NOEXCEPT;

/* ---- Devices ------------------------------------------------------------- */

/** Collective: creates a device (the k-th devices of all processes form a group) and synchronizes
 * like a barrier. */
LCI_API LCI_error_t LCI_device_init(LCI_device_t* device_ptr) LCI_NOEXCEPT;
/** Same as `LCI_device_init`. */
LCI_API LCI_error_t LCI_device_initx(LCI_device_t* device_ptr) LCI_NOEXCEPT;
/** Collective: destroys a device and sets `*device_ptr` to NULL; nothing may use it afterwards. */
LCI_API LCI_error_t LCI_device_free(LCI_device_t* device_ptr) LCI_NOEXCEPT;

/* ---- Property lists ------------------------------------------------------ */

/** Creates a property list: `LCI_MATCH_RANKTAG`, queue completion on both ports, default completion
 * `LCI_UR_CQ`. */
LCI_API LCI_error_t LCI_plist_create(LCI_plist_t* plist_ptr) LCI_NOEXCEPT;
/** Frees a property list and sets `*plist_ptr` to NULL. */
LCI_API LCI_error_t LCI_plist_free(LCI_plist_t* plist_ptr) LCI_NOEXCEPT;
/** Creates a new property list holding `ep`'s properties; the caller frees it. */
LCI_API LCI_error_t LCI_plist_get(LCI_endpoint_t ep, LCI_plist_t* plist_ptr) LCI_NOEXCEPT;
/** Writes a one-line description of the list into `string` (at least 256 bytes). */
LCI_API LCI_error_t LCI_plist_decode(LCI_plist_t plist, char* string) LCI_NOEXCEPT;
/** Sets how receives on the endpoint match messages. */
LCI_API LCI_error_t LCI_plist_set_match_type(LCI_plist_t plist, LCI_match_t match_type)
    LCI_NOEXCEPT;
/** Same as `LCI_plist_set_match_type`. */
LCI_API LCI_error_t LCI_plist_set_match(LCI_plist_t plist, LCI_match_t match_type) LCI_NOEXCEPT;
/** Sets the completion type of one port of the endpoint. */
LCI_API LCI_error_t LCI_plist_set_comp_type(LCI_plist_t plist, LCI_port_t port,
                                            LCI_comp_type_t comp_type) LCI_NOEXCEPT;
/** Sets the object that target-side completions addressed with `LCI_DEFAULT_COMP_REMOTE` go to. */
LCI_API LCI_error_t LCI_plist_set_default_comp(LCI_plist_t plist, LCI_comp_t comp) LCI_NOEXCEPT;

/* ---- Endpoints ----------------------------------------------------------- */

/** Collective: creates an endpoint on `device` from a copy of `plist`; the k-th endpoints of all
 * processes talk to each other. */
LCI_API LCI_error_t LCI_endpoint_init(LCI_endpoint_t* ep_ptr, LCI_device_t device,
                                      LCI_plist_t plist) LCI_NOEXCEPT;
/** Frees an endpoint (local, no synchronization) and sets `*ep_ptr` to NULL. */
LCI_API LCI_error_t LCI_endpoint_free(LCI_endpoint_t* ep_ptr) LCI_NOEXCEPT;

/* ---- Memory registration and segments ------------------------------------ */

/** Registers `[address, address+length)` with `device` and returns its segment; `LCI_ERR_RETRY`
 * when the network refuses. */
LCI_API LCI_error_t LCI_memory_register(LCI_device_t device, void* address, size_t length,
                                        LCI_segment_t* segment) LCI_NOEXCEPT;
/** Ends a registration (or releases a deserialized handle) and sets `*segment` to NULL. */
LCI_API LCI_error_t LCI_memory_deregister(LCI_segment_t* segment) LCI_NOEXCEPT;
/** Writes a printable description (at most 255 characters) of a segment this process registered,
 * for a peer to deserialize. */
LCI_API LCI_error_t LCI_segment_serialize(LCI_segment_t segment, char* string) LCI_NOEXCEPT;
/** Reads a serialized segment into a remote segment handle for `putl`, `getl`, `putv`, `getv`;
 * `LCI_ERR_FATAL` on malformed input. */
LCI_API LCI_error_t LCI_segment_deserialize(char* string, LCI_segment_t* segment) LCI_NOEXCEPT;

/* ---- Buffers ------------------------------------------------------------- */

/** Takes an LCI medium buffer (`LCI_MEDIUM_SIZE` bytes) from the device's pool; `LCI_ERR_RETRY`
 * when the pool is empty. */
LCI_API LCI_error_t LCI_mbuffer_alloc(LCI_device_t device, LCI_mbuffer_t* mbuffer) LCI_NOEXCEPT;
/** Returns an LCI medium buffer to its pool. */
LCI_API LCI_error_t LCI_mbuffer_free(LCI_mbuffer_t mbuffer) LCI_NOEXCEPT;
/** Allocates `size` bytes registered with `device`; `LCI_ERR_RETRY` when memory or registration is
 * short. */
LCI_API LCI_error_t LCI_lbuffer_alloc(LCI_device_t device, size_t size,
                                      LCI_lbuffer_t* lbuffer) LCI_NOEXCEPT;
/** Like `LCI_lbuffer_alloc`, aligned to `alignment` (a power of two). */
LCI_API LCI_error_t LCI_lbuffer_memalign(LCI_device_t device, size_t size, size_t alignment,
                                         LCI_lbuffer_t* lbuffer) LCI_NOEXCEPT;
/** Deregisters and frees an LCI long buffer. */
LCI_API LCI_error_t LCI_lbuffer_free(LCI_lbuffer_t lbuffer) LCI_NOEXCEPT;
/** Largest piggy-back payload of an I/O vector with `count` long buffers. */
LCI_API size_t LCI_get_iovec_piggy_back_size(int count) LCI_NOEXCEPT;

/* ---- Completion queue ---------------------------------------------------- */

/** Creates a completion queue of capacity `LCI_DEFAULT_QUEUE_LENGTH` (growing up to
 * `LCI_MAX_QUEUE_LENGTH`). */
LCI_API LCI_error_t LCI_queue_create(LCI_device_t device, LCI_comp_t* cq) LCI_NOEXCEPT;
/** Creates a completion queue of capacity `max_length`. */
LCI_API LCI_error_t LCI_queue_createx(LCI_device_t device, size_t max_length,
                                      LCI_comp_t* cq) LCI_NOEXCEPT;
/** Frees a completion queue (entries left are dropped) and sets `*cq` to NULL. */
LCI_API LCI_error_t LCI_queue_free(LCI_comp_t* cq) LCI_NOEXCEPT;
/** Takes the oldest entry into `*request`; `LCI_ERR_RETRY` when the queue is empty. */
LCI_API LCI_error_t LCI_queue_pop(LCI_comp_t cq, LCI_request_t* request) LCI_NOEXCEPT;
/** Blocks until an entry is there and takes it; does not progress (see the waiting policies). */
LCI_API LCI_error_t LCI_queue_wait(LCI_comp_t cq, LCI_request_t* request) LCI_NOEXCEPT;
/** Takes up to `request_count` entries; their number goes to `*return_count` (possibly 0). */
LCI_API LCI_error_t LCI_queue_pop_multiple(LCI_comp_t cq, size_t request_count,
                                           LCI_request_t* requests, size_t* return_count)
    LCI_NOEXCEPT;
/** Blocks until exactly `request_count` entries were taken. */
LCI_API LCI_error_t LCI_queue_wait_multiple(LCI_comp_t cq, size_t request_count,
                                            LCI_request_t* requests) LCI_NOEXCEPT;
/** Stores the number of entries in `*len` (a snapshot). */
LCI_API LCI_error_t LCI_queue_len(LCI_comp_t cq, size_t* len) LCI_NOEXCEPT;

/* ---- Synchronizer -------------------------------------------------------- */

/** Creates a synchronizer that triggers after `threshold` signals. */
LCI_API LCI_error_t LCI_sync_create(LCI_device_t device, int threshold,
                                    LCI_comp_t* completion) LCI_NOEXCEPT;
/** Frees a synchronizer and sets `*completion` to NULL. */
LCI_API LCI_error_t LCI_sync_free(LCI_comp_t* completion) LCI_NOEXCEPT;
/** Signals a synchronizer once, carrying `request` (passed through verbatim). */
LCI_API LCI_error_t LCI_sync_signal(LCI_comp_t completion, LCI_request_t request) LCI_NOEXCEPT;
/** Blocks until the synchronizer triggered, copies its requests to `request` (or drops them if
 * NULL) and resets it. */
LCI_API LCI_error_t LCI_sync_wait(LCI_comp_t completion, LCI_request_t request[]) LCI_NOEXCEPT;
/** If the synchronizer triggered, copies its requests to `request` (or drops them if NULL), resets
 * it and returns `LCI_OK`; else `LCI_ERR_RETRY`. */
LCI_API LCI_error_t LCI_sync_test(LCI_comp_t completion, LCI_request_t request[]) LCI_NOEXCEPT;

/* ---- Handler ------------------------------------------------------------- */

/** Wraps `handler` as a completion object; LCI calls it with each completed request. */
LCI_API LCI_error_t LCI_handler_create(LCI_device_t device, LCI_handler_t handler,
                                       LCI_comp_t* completion) LCI_NOEXCEPT;

/* ---- Two-sided ----------------------------------------------------------- */

/** Sends short data; done at return. `LCI_ERR_RETRY` when it cannot be injected now. */
LCI_API LCI_error_t LCI_sends(LCI_endpoint_t ep, LCI_short_t src, int rank, LCI_tag_t tag)
    LCI_NOEXCEPT;
/** Posts a receive of short data; completes with `LCI_IMMEDIATE` and the 32 bytes. */
LCI_API LCI_error_t LCI_recvs(LCI_endpoint_t ep, int rank, LCI_tag_t tag,
                              LCI_comp_t completion, void* user_context) LCI_NOEXCEPT;
/** Sends a medium message (at most `LCI_MEDIUM_SIZE` bytes); user memory is copied, an LCI medium
 * buffer is consumed. Done at return. */
LCI_API LCI_error_t LCI_sendm(LCI_endpoint_t ep, LCI_mbuffer_t buffer, int rank,
                              LCI_tag_t tag) LCI_NOEXCEPT;
/** Same as `LCI_sendm` (meant for LCI medium buffers). */
LCI_API LCI_error_t LCI_sendmn(LCI_endpoint_t ep, LCI_mbuffer_t buffer, int rank,
                               LCI_tag_t tag) LCI_NOEXCEPT;
/** `LCI_sendm` with a completion once the send finished; the buffer stays the caller's and
 * unmodified until then. */
LCI_API LCI_error_t LCI_sendmc(LCI_endpoint_t ep, LCI_mbuffer_t buffer, int rank,
                               LCI_tag_t tag, LCI_comp_t completion, void* user_context)
    LCI_NOEXCEPT;
/** Posts a receive of a medium message into `buffer` (at least the sent length). */
LCI_API LCI_error_t LCI_recvm(LCI_endpoint_t ep, LCI_mbuffer_t buffer, int rank,
                              LCI_tag_t tag, LCI_comp_t completion, void* user_context)
    LCI_NOEXCEPT;
/** Posts a receive of a medium message into an LCI medium buffer, which the completion hands to the
 * receiver. */
LCI_API LCI_error_t LCI_recvmn(LCI_endpoint_t ep, int rank, LCI_tag_t tag,
                               LCI_comp_t completion, void* user_context) LCI_NOEXCEPT;
/** Sends a long message by rendezvous; the buffer is LCI's until the completion. */
LCI_API LCI_error_t LCI_sendl(LCI_endpoint_t ep, LCI_lbuffer_t buffer, int rank,
                              LCI_tag_t tag, LCI_comp_t completion, void* user_context)
    LCI_NOEXCEPT;
/** Posts a receive of a long message into `buffer`, or (`address` NULL) into an LCI long buffer
 * allocated on arrival. */
LCI_API LCI_error_t LCI_recvl(LCI_endpoint_t ep, LCI_lbuffer_t buffer, int rank,
                              LCI_tag_t tag, LCI_comp_t completion, void* user_context)
    LCI_NOEXCEPT;
/** Sends an I/O vector in one rendezvous; the long buffers and their array are LCI's until the
 * completion. */
LCI_API LCI_error_t LCI_sendv(LCI_endpoint_t ep, LCI_iovec_t iovec, int rank, LCI_tag_t tag,
                              LCI_comp_t completion, void* user_context) LCI_NOEXCEPT;
/** Posts a receive of an I/O vector into `iovec`, or (`lbuffers` NULL) into buffers LCI
 * allocates. */
LCI_API LCI_error_t LCI_recvv(LCI_endpoint_t ep, LCI_iovec_t iovec, int rank, LCI_tag_t tag,
                              LCI_comp_t completion, void* user_context) LCI_NOEXCEPT;

/* ---- One-sided ----------------------------------------------------------- */

/** Puts short data to the target's completion object `remote_completion`; done at return. */
LCI_API LCI_error_t LCI_puts(LCI_endpoint_t ep, LCI_short_t src, int rank, LCI_tag_t tag,
                             uintptr_t remote_completion) LCI_NOEXCEPT;
/** Puts a medium message; the target receives it in an LCI medium buffer. */
LCI_API LCI_error_t LCI_putma(LCI_endpoint_t ep, LCI_mbuffer_t buffer, int rank,
                              LCI_tag_t tag, uintptr_t remote_completion) LCI_NOEXCEPT;
/** Same as `LCI_putma` (meant for LCI medium buffers). */
LCI_API LCI_error_t LCI_putmna(LCI_endpoint_t ep, LCI_mbuffer_t buffer, int rank,
                               LCI_tag_t tag, uintptr_t remote_completion) LCI_NOEXCEPT;
/** `LCI_putma` with a local completion once sent. */
LCI_API LCI_error_t LCI_putmac(LCI_endpoint_t ep, LCI_mbuffer_t buffer, int rank,
                               LCI_tag_t tag, uintptr_t remote_completion,
                               LCI_comp_t local_completion, void* user_context) LCI_NOEXCEPT;
/** Puts a medium message into `remote_buffer`, which must lie in a segment the target
 * registered. */
LCI_API LCI_error_t LCI_putm(LCI_endpoint_t ep, LCI_mbuffer_t buffer, int rank,
                             LCI_tag_t tag, LCI_mbuffer_t remote_buffer,
                             uintptr_t remote_completion) LCI_NOEXCEPT;
/** Same as `LCI_putm` (meant for LCI medium buffers). */
LCI_API LCI_error_t LCI_putmn(LCI_endpoint_t ep, LCI_mbuffer_t buffer, int rank,
                              LCI_tag_t tag, LCI_mbuffer_t remote_buffer,
                              uintptr_t remote_completion) LCI_NOEXCEPT;
/** Puts a long message by rendezvous into an LCI long buffer the target allocates; `flag`
 * `LCI_ERR_RETRY` at the origin if the target could not. */
LCI_API LCI_error_t LCI_putla(LCI_endpoint_t ep, LCI_lbuffer_t buffer, LCI_comp_t completion,
                              int rank, LCI_tag_t tag, uintptr_t remote_completion,
                              void* user_context) LCI_NOEXCEPT;
/** Writes `local_buffer` into the peer's registered `remote_buffer`, then signals both sides. */
LCI_API LCI_error_t LCI_putl(LCI_endpoint_t ep, LCI_lbuffer_t local_buffer,
                             LCI_comp_t local_completion, int rank, LCI_tag_t tag,
                             LCI_lbuffer_t remote_buffer, uintptr_t remote_completion,
                             void* user_context) LCI_NOEXCEPT;
/** Reads `length` bytes of the peer's registered `remote_buffer` into `*local_buffer`, then signals
 * both sides. */
LCI_API LCI_error_t LCI_getl(LCI_endpoint_t ep, LCI_lbuffer_t* local_buffer, size_t length,
                             LCI_comp_t local_completion, int rank, LCI_tag_t tag,
                             LCI_lbuffer_t remote_buffer, uintptr_t remote_completion,
                             void* user_context) LCI_NOEXCEPT;
/** Puts an I/O vector by rendezvous into buffers the target allocates. */
LCI_API LCI_error_t LCI_putva(LCI_endpoint_t ep, LCI_iovec_t iovec, LCI_comp_t completion,
                              int rank, LCI_tag_t tag, uintptr_t remote_completion,
                              void* user_context) LCI_NOEXCEPT;
/** `LCI_putl` for I/O vectors: writes each local buffer into the corresponding remote one. */
LCI_API LCI_error_t LCI_putv(LCI_endpoint_t ep, LCI_iovec_t local_iovec,
                             LCI_comp_t local_completion, int rank, LCI_tag_t tag,
                             LCI_iovec_t remote_iovec, uintptr_t remote_completion,
                             void* user_context) LCI_NOEXCEPT;
/** `LCI_getl` for I/O vectors: reads each remote buffer into the corresponding local one. */
LCI_API LCI_error_t LCI_getv(LCI_endpoint_t ep, LCI_iovec_t local_iovec,
                             LCI_comp_t local_completion, int rank, LCI_tag_t tag,
                             LCI_iovec_t remote_iovec, uintptr_t remote_completion,
                             void* user_context) LCI_NOEXCEPT;

/* ---- Bulk completion and progress ---------------------------------------- */

/** Blocks until every operation this process issued on `ep` before the call is locally complete;
 * drives progress. */
LCI_API LCI_error_t LCI_fence_wait(LCI_endpoint_t ep) LCI_NOEXCEPT;
/** Collective: returns when every operation issued on the k-th endpoints before the fence is
 * complete locally and at its target. */
LCI_API LCI_error_t LCI_gfence_wait(LCI_endpoint_t ep) LCI_NOEXCEPT;
/** One pass of the device's progress engine (thread-safe); `LCI_OK` if it did work, `LCI_ERR_RETRY`
 * if idle or another thread is progressing. */
LCI_API LCI_error_t LCI_progress(LCI_device_t device) LCI_NOEXCEPT;

/* ==== Extensions (LCIX_*): not part of the LCI 1.7 API ====================
 *
 * Waiting policies. LCI_sync_wait, LCI_queue_wait and LCI_queue_wait_multiple
 * do not drive progress: they block until another thread (LCI_progress,
 * LCI_sync_signal, a posting call) delivers the completion. How the waiter
 * spends that time is the waiting policy:
 *   LCIX_WAIT_THREADS  (default) spin a few microseconds, then sleep on a
 *                      futex; a sleeping waiter uses no CPU.
 *   LCIX_WAIT_SPIN     spin with backoff and sched_yield, never sleep (the
 *                      behaviour of LCI 1.7.9).
 *   LCIX_WAIT_FIBERS   a waiter running on an LCIX fiber (see below) is
 *                      switched out and made ready again by the completion;
 *                      its worker thread runs other fibers meanwhile.
 *   LCIX_WAIT_TBB      a waiter running inside a oneTBB task (or an
 *                      arena.execute) is suspended with tbb::task::suspend and
 *                      resumed by the completion.
 * Under FIBERS or TBB, a waiter that is not running on a fiber / inside a
 * TBB arena falls back to THREADS. LCI_initialize reads the environment
 * variable LCI_WAIT_POLICY=threads|spin|fibers|tbb (a malformed value is
 * fatal); without it the policy is left as it was. LCIX_set_wait_policy may be
 * called at any time, also before LCI_initialize; a wait already blocked
 * keeps the policy it started with. */
/** How a waiting call spends its time (extension). */
typedef enum {
  LCIX_WAIT_THREADS = 0, ///< spin a few microseconds, then sleep on a futex (default)
  LCIX_WAIT_SPIN = 1,    ///< spin with backoff and `sched_yield`, never sleep
  LCIX_WAIT_FIBERS = 2,  ///< switch out a waiting LCIX fiber
  LCIX_WAIT_TBB = 3      ///< suspend a waiting oneTBB task
} LCIX_wait_policy_t;

/** Sets the process-wide waiting policy; `LCI_ERR_FATAL` for a value outside the enumeration. */
LCI_API LCI_error_t LCIX_set_wait_policy(LCIX_wait_policy_t policy) LCI_NOEXCEPT;
/** The waiting policy in force. */
LCI_API LCIX_wait_policy_t LCIX_get_wait_policy(void) LCI_NOEXCEPT;

/* Fiber pools: user-level threads on Boost.Context, for LCIX_WAIT_FIBERS.
 * A pool owns `nthreads` worker threads (OS threads) and a ready queue; idle
 * workers sleep on a condition variable. Each fiber has a 64 KiB stack, so
 * tens of thousands fit. A fiber runs fn(arg) to completion; it may call any
 * LCI function, and its waits (under LCIX_WAIT_FIBERS) switch it out instead
 * of blocking its worker. Fibers must not block their worker in other ways
 * for long (mutexes held across waits, sleep()).
 *   LCIX_fiber_pool_create  starts the workers (nthreads >= 1).
 *   LCIX_fiber_spawn        makes a new fiber ready; callable from any thread,
 *                           including a fiber of the pool.
 *   LCIX_fiber_yield        from a fiber: lets the other ready fibers run
 *                           (LCI_ERR_RETRY when not called from a fiber).
 *   LCIX_fiber_pool_join    blocks (as an OS thread) until every fiber spawned
 *                           so far has returned; must not be called from a
 *                           fiber of the same pool.
 *   LCIX_fiber_pool_free    joins, stops the workers, frees the pool and sets
 *                           *pool to NULL. */
/** Handle of a fiber pool (extension). */
typedef struct LCIX_fiber_pool_s* LCIX_fiber_pool_t;
/** Starts a fiber pool with `nthreads` worker threads (at least 1). */
LCI_API LCI_error_t LCIX_fiber_pool_create(int nthreads, LCIX_fiber_pool_t* pool) LCI_NOEXCEPT;
/** Makes a new fiber running `fn(arg)` ready; callable from any thread, a fiber included. */
LCI_API LCI_error_t LCIX_fiber_spawn(LCIX_fiber_pool_t pool, void (*fn)(void*), void* arg)
    LCI_NOEXCEPT;
/** From a fiber: lets other ready fibers run; `LCI_ERR_RETRY` when not called from a fiber. */
LCI_API LCI_error_t LCIX_fiber_yield(void) LCI_NOEXCEPT;
/** Blocks until every fiber spawned so far has returned; not from a fiber of the same pool. */
LCI_API LCI_error_t LCIX_fiber_pool_join(LCIX_fiber_pool_t pool) LCI_NOEXCEPT;
/** Joins, stops the workers, frees the pool and sets `*pool` to NULL. */
LCI_API LCI_error_t LCIX_fiber_pool_free(LCIX_fiber_pool_t* pool) LCI_NOEXCEPT;

/* Collectives (LCI 1.7.9's LCIX collectives). Non-blocking, over all
 * processes, on the two-sided messages of a rank+tag matching endpoint
 * (LCI_MATCH_RANKTAG: on an LCI_MATCH_TAG endpoint messages of different
 * processes would meet the wrong receives, so every start call returns
 * LCI_ERR_FATAL and prints why, in release builds too). Every
 * process passes the same tag (and root), unused by other traffic on `ep`
 * until the collective completed there, and buffers of equal length (medium
 * forms: at most LCI_MEDIUM_SIZE). A tag may be reused by the next collective
 * once the previous one completed on this process. The buffer is LCI's until
 * completion. The start call stores a handle in *coll (NULL if the
 * collective is already complete, e.g. with one process); call
 * LCIX_coll_progress(&coll), plus LCI_progress on ep's device, until coll is
 * NULL. Completion uses the endpoint's message-port completion type:
 * {LCI_OK, rank -1, tag, LCI_MEDIUM (barrier, bcastm, allreducem) or LCI_LONG
 * (bcastl, allreducel), the buffer ({NULL, 0} for the barrier),
 * user_context}. `op` folds `length` bytes at src into dest and must be
 * commutative. LCIX_allreducem returns LCI_ERR_RETRY (no effect) when no
 * medium buffer is free; the others return LCI_OK. One thread per handle. */
/** Opaque collective in progress. */
struct LCIX_collective_s;
/** Handle of a collective in progress; NULL once it completed. */
typedef struct LCIX_collective_s* LCIX_collective_t;
/** Reduction: folds `length` bytes at `src` into `dest`; must be commutative. */
typedef void (*LCI_op_t)(void* dest, const void* src, size_t length);

/** Advances a collective; sets `*coll` to NULL once it completed. */
LCI_API LCI_error_t LCIX_coll_progress(LCIX_collective_t* coll) LCI_NOEXCEPT;
/** Starts a non-blocking barrier over all processes. */
LCI_API LCI_error_t LCIX_barrier(LCI_endpoint_t ep, LCI_tag_t tag, LCI_comp_t completion,
                                 void* user_context, LCIX_collective_t* coll) LCI_NOEXCEPT;
/** Starts a broadcast of a medium buffer from `root`. */
LCI_API LCI_error_t LCIX_bcastm(LCI_endpoint_t ep, LCI_mbuffer_t buffer, int root,
                                LCI_tag_t tag, LCI_comp_t completion, void* user_context,
                                LCIX_collective_t* coll) LCI_NOEXCEPT;
/** Starts a broadcast of a long buffer from `root`. */
LCI_API LCI_error_t LCIX_bcastl(LCI_endpoint_t ep, LCI_lbuffer_t buffer, int root,
                                LCI_tag_t tag, LCI_comp_t completion, void* user_context,
                                LCIX_collective_t* coll) LCI_NOEXCEPT;
/** Starts an allreduce of a medium buffer with `op`; `LCI_ERR_RETRY` (no effect) when no medium
 * buffer is free. */
LCI_API LCI_error_t LCIX_allreducem(LCI_endpoint_t ep, LCI_mbuffer_t buffer, LCI_op_t op,
                                    LCI_tag_t tag, LCI_comp_t completion, void* user_context,
                                    LCIX_collective_t* coll) LCI_NOEXCEPT;
/** Starts an allreduce of a long buffer with `op`. */
LCI_API LCI_error_t LCIX_allreducel(LCI_endpoint_t ep, LCI_lbuffer_t buffer, LCI_op_t op,
                                    LCI_tag_t tag, LCI_comp_t completion, void* user_context,
                                    LCIX_collective_t* coll) LCI_NOEXCEPT;

/* Configuration. LCIX_config_print writes every LCI_* setting to out
 * (stdout when NULL), one per line: name, effective value, where it came
 * from (default, environment, or derived from other settings) and a line of
 * help; the settings read by the bootstrap and those accepted without effect
 * (with the reason) follow in sections of their own. After LCI_initialize
 * it prints the values in force; before, it parses the environment the same
 * way without applying anything (a malformed value is printed as the
 * message LCI_initialize would stop with). */
/** Prints every LCI setting (name, value, source, help) to `out` (stdout when NULL). */
LCI_API void LCIX_config_print(FILE* out) LCI_NOEXCEPT;

/* Transports. A device reaches the ranks of its own host through LCI's
 * native shared-memory transport (unless LCI_SHM=0) and the others through
 * the network backend. LCIX_transport_of tells which one carries the
 * device's traffic to `rank` (LCIX_TRANSPORT_NETWORK for a rank outside the
 * job); LCIX_transport_counts how many messages the device has received
 * through each since it was created (LCI's own protocol messages included;
 * data moved by RDMA or cross-memory copies is not a message). */
/** Which transport carries a device's traffic to a rank (extension). */
typedef enum {
  LCIX_TRANSPORT_NETWORK = 0, ///< the network backend (libfabric or verbs)
  LCIX_TRANSPORT_NATIVE = 1   ///< LCI's native shared-memory transport
} LCIX_transport_t;
/** Messages a device has received through each transport since its creation. */
typedef struct {
  uint64_t native_received;  ///< through the native shared-memory transport
  uint64_t network_received; ///< through the network backend
} LCIX_transport_counts_t;
/** Which transport carries `device`'s traffic to `rank` (`LCIX_TRANSPORT_NETWORK` for a rank
 * outside the job). */
LCI_API LCIX_transport_t LCIX_transport_of(LCI_device_t device, int rank) LCI_NOEXCEPT;
/** Stores in `*counts` how many messages `device` received through each transport. */
LCI_API LCI_error_t LCIX_transport_counts(LCI_device_t device, LCIX_transport_counts_t* counts)
    LCI_NOEXCEPT;

/* Peer failure. By default (LCI_PEER_FAILURE=abort) a rank that dies ends
 * the job. With LCI_PEER_FAILURE=continue the job goes on without it: once
 * a rank is known dead (on this host within a second of its death, while
 * LCI_progress is called), the receives posted for it complete with
 * flag LCI_ERR_FATAL and rank set to it, new operations naming it return
 * LCI_ERR_FATAL at once (never LCI_ERR_RETRY), receives from LCI_RANK_ANY
 * stay posted for the living, and LCI_barrier returns LCI_ERR_FATAL;
 * LCI_finalize completes among the living (under a launcher that keeps them
 * running: lcrun --keep-going, mpiexec.hydra -disable-auto-cleanup, mpirun
 * --enable-recovery, srun --kill-on-bad-exit=0; docs/failure.md). A rank
 * that hangs without dying is not detected. */
/** 1 once `rank` is known to have failed, else 0 (extension). */
LCI_API int LCIX_peer_failed(int rank) LCI_NOEXCEPT;
/** Registers `fn`, run inside LCI_progress once per failed peer with its rank and `ctx`
 * (NULL: none); ranks that failed before the call are reported too. */
LCI_API LCI_error_t LCIX_on_peer_failure(void (*fn)(int rank, void* ctx), void* ctx) LCI_NOEXCEPT;

/* State dump. LCIX_dump_state writes what this rank's LCI holds and waits
 * for to `out`, one line per item, each starting with "rank R": per device
 * the rendezvous and RDMA operations in flight, with their peer and what
 * they wait for ("sendl id 17 to rank 3 tag 5 size 131072: waits for an RTR
 * from rank 3"), the receives posted and the messages that wait for one,
 * the backlog, the packet pool and each transport's state (the native
 * transport's rings per peer); then the failed peers. It may be called
 * from any thread while others communicate: what is locked for too long is
 * printed as "busy". With LCI_DUMP_SIGNAL set (USR1, USR2, RTMIN+n), that
 * signal makes the rank print the same to stderr; lcrun sends it to every
 * rank before LCRUN_TIMEOUT ends a job. NULL `out` prints to stderr (a
 * debug build returns LCI_ERR_FATAL instead); before LCI_initialize or after
 * LCI_finalize it returns LCI_ERR_FATAL. */
/** Writes this rank's LCI state (operations in flight, posted receives, backlog, rings) to `out`
 * (extension). */
LCI_API LCI_error_t LCIX_dump_state(FILE* out) LCI_NOEXCEPT;

#ifdef __cplusplus
}
#endif

#endif /* LCI_H */

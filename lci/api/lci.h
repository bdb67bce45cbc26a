/**
 * @file lci.h
 * @brief The Lightweight Communication Interface, version 1.7 C API.
 *
 * Source compatible with programs written for LCI 1.7.x; the `LCIX_*` names
 * are extensions. Unless a function says otherwise it returns `LCI_OK` on
 * success, and `LCI_ERR_RETRY` means the call had no effect and may be made
 * again after progress (`LCI_progress`). Debug builds (`LCI_DEBUG`) check
 * every argument and return `LCI_ERR_FATAL` with a message for a bad one.
 * docs/concepts.md explains the concepts the calls share (message flow,
 * devices, endpoints, ports, completion kinds, buffer ownership,
 * back-pressure, progress, threading, errors); each function's comment
 * names the section it belongs to.
 */
/**
 * @defgroup lci_init Initialization
 * @brief Starting and ending LCI, the job-wide globals and the configuration.
 *
 * `LCI_initialize` reads the environment once, sets the globals and creates
 * the default device, endpoint and completion queue; `LCI_finalize` ends
 * LCI. See @concept{Message flow}.
 */
/**
 * @defgroup lci_devices Devices
 * @brief Devices, their progress engine and their transports.
 *
 * A device owns a network context, a packet pool, a matching table and a
 * progress engine; nothing completes on it unless something calls
 * `LCI_progress`. See @concept{Devices} and @concept{Progress}.
 */
/**
 * @defgroup lci_endpoints Endpoints and property lists
 * @brief Endpoints (a device, a match type and the completion types of the two ports) and the
 *        property lists they are made from.
 *
 * See @concept{Endpoints and property lists} and @concept{Ports}.
 */
/**
 * @defgroup lci_two_sided Two-sided communication
 * @brief Sends and receives of short, medium, long and I/O vector messages, matched by rank
 *        and tag or by tag.
 *
 * Every build refuses a send or receive whose endpoint is NULL, whose rank is
 * out of range or whose tag is over `LCI_MAX_TAG` (`LCI_ERR_FATAL` and one
 * line naming the call and the argument); debug builds (`LCI_DEBUG`) check
 * every argument besides. See @concept{Message flow}.
 */
/**
 * @defgroup lci_one_sided One-sided communication
 * @brief Puts and gets: data moved to or from a peer, signalled at the target through a
 *        completion object named by `remote_completion`.
 *
 * See @concept{Message flow} and @concept{Completion kinds}.
 */
/**
 * @defgroup lci_completion Completion
 * @brief Completion objects (queues, synchronizers, handlers), fences, and how waiting calls
 *        spend their time (waiting policies, fiber pools).
 *
 * See @concept{Completion kinds}.
 */
/**
 * @defgroup lci_memory Memory
 * @brief Memory registration, segments, and LCI's medium and long buffers.
 *
 * See @concept{Buffer ownership}.
 */
/**
 * @defgroup lci_collectives Collectives
 * @brief The LCIX non-blocking collectives: barrier, broadcast, allreduce.
 *
 * See @concept{Message flow}.
 */
/**
 * @defgroup lci_failures Errors and failures
 * @brief Result codes, peer failure and the state dump.
 *
 * Every function returning `LCI_error_t` returns `LCI_OK` on success.
 * `LCI_ERR_RETRY` (only from the calls documented to return it) means the
 * call had no effect: call `LCI_progress` and make it again. `LCI_ERR_FATAL`
 * reports a program error, with one line naming the call and the argument:
 * every build checks what would corrupt memory, crash or hang (NULL handles,
 * ranks and tags out of range, medium lengths over the limit, completion
 * objects of the wrong kind for the call); debug builds (`LCI_DEBUG`) check every handle
 * against a registry of live ones and every argument. A C++ exception raised
 * inside a call (out of memory, a thread that cannot start) is reported the
 * same way. Most other fatal conditions end the process with a message.
 *
 * See @concept{Errors and failures} and
 * @concept{Back-pressure and LCI_ERR_RETRY}.
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

/** Result of every LCI call (and the `flag` of a completed request).
 * @ingroup lci_failures
 */
typedef enum {
  LCI_OK = 0,          ///< 0: done (a split operation: started, and it will complete)
  LCI_ERR_RETRY,       ///< 1: back-pressure, the call had no effect; progress and retry
  LCI_ERR_RETRY_LOCK,  ///< 2: never returned, kept for source compatibility
  LCI_ERR_RETRY_NOMEM, ///< 3: never returned, kept for source compatibility
  LCI_ERR_FEATURE_NA,  ///< 4: not returned by any function of this header
  LCI_ERR_FATAL,       ///< 5: an error; most fatal conditions abort with a message instead
} LCI_error_t;

/* ---- 2. Types and constants --------------------------------------------- */

/** `remote_completion` value naming the target endpoint's default completion object.
 * @ingroup lci_one_sided
 */
#define LCI_DEFAULT_COMP_REMOTE 0
/** Segment of a long buffer the program did not register: LCI registers it for the transfer.
 * @ingroup lci_memory
 */
#define LCI_SEGMENT_ALL NULL
/** Rank argument of a receive on an `LCI_MATCH_TAG` endpoint (matches any sender).
 * @ingroup lci_two_sided
 */
#define LCI_RANK_ANY (-1)
/** Bytes carried by a short message (`LCI_short_t`).
 * @ingroup lci_two_sided
 */
#define LCI_SHORT_SIZE 32

/** How an endpoint matches arriving two-sided messages with posted receives.
 * @ingroup lci_endpoints
 */
typedef enum {
  LCI_MATCH_RANKTAG = 0, ///< by sender rank and tag
  LCI_MATCH_TAG          ///< by tag alone (receives pass `LCI_RANK_ANY` or any rank)
} LCI_match_t;
/** The two ports of an endpoint, each with its own completion type.
 * @ingroup lci_endpoints
 */
typedef enum {
  LCI_PORT_COMMAND = 0, ///< completions of operations this process issues (origin side)
  LCI_PORT_MESSAGE = 1  ///< completions of receives and of one-sided operations targeting it
} LCI_port_t;
/** Kind of a completion object, and completion type of an endpoint's port.
 * @ingroup lci_completion
 */
typedef enum {
  LCI_COMPLETION_NONE = 0, ///< the port signals nothing (complete with fences)
  LCI_COMPLETION_QUEUE,    ///< a completion queue (`LCI_queue_create`)
  LCI_COMPLETION_HANDLER,  ///< a handler (`LCI_handler_create`)
  LCI_COMPLETION_SYNC,     ///< a synchronizer (`LCI_sync_create`)
} LCI_comp_type_t;
/** Which member of `LCI_data_t` a completed request carries.
 * @ingroup lci_completion
 */
typedef enum {
  LCI_IMMEDIATE = 0, ///< `data.immediate`: short data
  LCI_MEDIUM,        ///< `data.mbuffer`: a medium message
  LCI_LONG,          ///< `data.lbuffer`: a long message
  LCI_IOVEC          ///< `data.iovec`: an I/O vector
} LCI_data_type_t;
/** Rendezvous protocol of long messages (`LCI_RDV_PROTOCOL`).
 * @ingroup lci_init
 */
typedef enum {
  LCI_RDV_WRITE,   ///< RDMA write, then a finish message
  LCI_RDV_WRITEIMM ///< RDMA write with immediate data (the default)
} LCI_rdv_protocol_t;
/** LCI 1.7.9's backend lock modes (`LCI_BACKEND_TRY_LOCK_MODE`); accepted, without effect.
 * @ingroup lci_init
 */
typedef enum {
  LCI_BACKEND_TRY_LOCK_SEND = 1,         ///< try-lock around sends (no effect here)
  LCI_BACKEND_TRY_LOCK_RECV = 1 << 1,    ///< try-lock around receives (no effect here)
  LCI_BACKEND_TRY_LOCK_POLL = 1 << 2,    ///< try-lock around polls (no effect here)
  LCI_BACKEND_TRY_LOCK_GLOBAL = 1 << 3,  ///< one global try-lock (no effect here)
  LCI_BACKEND_LOCK_GLOBAL = 1 << 4,      ///< one global lock (no effect here)
  LCI_BACKEND_TRY_LOCK_MODE_MAX = 1 << 5, ///< one past the last flag
} LCI_backend_try_lock_mode_t;
/** LCI 1.7.9's device lock modes (`LCI_DEVICE_LOCK_MODE`); accepted, without effect.
 * @ingroup lci_init
 */
typedef enum {
  LCI_DEVICE_LOCK_MODE_NONE,  ///< no device lock
  LCI_DEVICE_LOCK_MODE_BLOCK, ///< a blocking device lock (no effect here)
  LCI_DEVICE_LOCK_MODE_TRY,   ///< a device try-lock (no effect here)
  LCI_DEVICE_LOCK_MODE_MAX,   ///< one past the last mode
} LCI_DEVICE_LOCK_MODE_t;

/** Message tag, `0 ... LCI_MAX_TAG`.
 * @ingroup lci_two_sided
 */
typedef uint32_t LCI_tag_t;
/** Handle of a completion object: queue, synchronizer or handler.
 * @ingroup lci_completion
 */
typedef void* LCI_comp_t;
/** Opaque memory registration (behind `LCI_segment_t`).
 * @ingroup lci_memory
 */
struct LCII_mr_t;
/** A registered memory segment, or a deserialized remote segment handle.
 * @ingroup lci_memory
 */
typedef struct LCII_mr_t* LCI_segment_t;
/** Opaque device.
 * @ingroup lci_devices
 */
struct LCI_device_s;
/** Handle of a device: network context, packet pool, matching table, progress engine.
 * @ingroup lci_devices
 */
typedef struct LCI_device_s* LCI_device_t;
/** Opaque endpoint.
 * @ingroup lci_endpoints
 */
struct LCI_endpoint_s;
/** Handle of an endpoint: a device bound to a match type and completion types.
 * @ingroup lci_endpoints
 */
typedef struct LCI_endpoint_s* LCI_endpoint_t;
/** Opaque property list.
 * @ingroup lci_endpoints
 */
struct LCI_plist_s;
/** Handle of a property list, the recipe of `LCI_endpoint_init`.
 * @ingroup lci_endpoints
 */
typedef struct LCI_plist_s* LCI_plist_t;
/** Another name of `LCI_segment_t`.
 * @ingroup lci_memory
 */
typedef LCI_segment_t LCI_reg_t;

/** A long buffer: memory and the segment that covers it.
 * @ingroup lci_memory
 */
struct LCI_lbuffer_t {
  LCI_segment_t segment; ///< registration covering the buffer, or `LCI_SEGMENT_ALL`
  void* address;         ///< first byte
  size_t length;         ///< length in bytes
};
/** A long buffer (see struct LCI_lbuffer_t).
 * @ingroup lci_memory
 */
typedef struct LCI_lbuffer_t LCI_lbuffer_t;

/** A medium buffer: user memory, or an LCI medium buffer of capacity `LCI_MEDIUM_SIZE`.
 * @ingroup lci_memory
 */
struct LCI_mbuffer_t {
  void* address; ///< first byte
  size_t length; ///< length in bytes, at most `LCI_MEDIUM_SIZE`
};
/** A medium buffer (see struct LCI_mbuffer_t).
 * @ingroup lci_memory
 */
typedef struct LCI_mbuffer_t LCI_mbuffer_t;

/** Short data, passed by value; all `LCI_SHORT_SIZE` bytes travel.
 * @ingroup lci_two_sided
 */
typedef union {
  char val[LCI_SHORT_SIZE]; ///< the bytes
} LCI_short_t;

/** An I/O vector: a piggy-back payload copied eagerly and `count` long buffers.
 * @ingroup lci_memory
 */
struct LCI_iovec_t {
  LCI_mbuffer_t piggy_back; ///< any memory, at most `LCI_get_iovec_piggy_back_size(count)` bytes
  LCI_lbuffer_t* lbuffers;  ///< array of `count` long buffers (NULL in a dynamic receive)
  int count;                ///< number of long buffers, `1 ... LCI_IOVEC_SIZE`
};
/** An I/O vector (see struct LCI_iovec_t).
 * @ingroup lci_memory
 */
typedef struct LCI_iovec_t LCI_iovec_t;

/** The data of a completed request; `LCI_request_t::type` says which member.
 * @ingroup lci_completion
 */
typedef union {
  LCI_short_t immediate; ///< `LCI_IMMEDIATE`
  LCI_mbuffer_t mbuffer; ///< `LCI_MEDIUM`
  LCI_lbuffer_t lbuffer; ///< `LCI_LONG`
  LCI_iovec_t iovec;     ///< `LCI_IOVEC`
} LCI_data_t;

/** What a completion delivers, by value.
 * @ingroup lci_completion
 */
typedef struct {
  LCI_error_t flag;     ///< `LCI_OK`, or why the operation failed
  int rank;             ///< the other process (sender, destination or target)
  LCI_tag_t tag;        ///< the message's tag
  LCI_data_type_t type; ///< which member of `data` is valid
  LCI_data_t data;      ///< the data or the buffer of the operation
  void* user_context;   ///< the posting call's `user_context` (NULL at one-sided targets)
} LCI_request_t;

/** A handler completion object's function; runs inside LCI, must be short and not call LCI.
 * @ingroup lci_completion
 */
typedef void (*LCI_handler_t)(LCI_request_t request);

/** @addtogroup lci_init
 * @{ */

/* ---- 3. Globals (set by LCI_initialize) ---------------------------------- */

extern LCI_API int LCI_NUM_PROCESSES;  ///< processes in the job
extern LCI_API int LCI_RANK;           ///< this process, `0 ... LCI_NUM_PROCESSES-1`
extern LCI_API int LCI_NUM_DEVICES;    ///< live devices of this process, `LCI_UR_DEVICE` included
extern LCI_API int LCI_MAX_ENDPOINTS;  ///< endpoints a process may create (`LCI_MAX_ENDPOINTS`)
extern LCI_API int LCI_MAX_TAG;        ///< largest tag, 65535
extern LCI_API int LCI_MEDIUM_SIZE;    ///< largest medium message: `LCI_PACKET_SIZE` - 64
extern LCI_API int LCI_IOVEC_SIZE;     ///< largest `count` of an I/O vector
/** Long transfers are split into pieces of at most this many bytes.
 * @ingroup lci_init
 */
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

/** @} */

/* ---- Runtime ------------------------------------------------------------- */

/** @addtogroup lci_init
 * @{ */

/**
 * @brief Starts LCI (collective over all processes of the job).
 *
 * Connects to the launcher, reads the `LCI_*` environment variables once,
 * sets the globals (`LCI_RANK`, `LCI_NUM_PROCESSES`, ...) and creates
 * `LCI_UR_DEVICE`, `LCI_UR_CQ` and `LCI_UR_ENDPOINT`; ends with a barrier.
 * Every process calls it once. A malformed setting, a launcher that is not
 * there, a backend that cannot start or a second call end the process with
 * a message instead of returning.
 *
 * @retval LCI_OK        LCI is initialized.
 * @retval LCI_ERR_FATAL a C++ exception was raised inside the call (one line names it).
 *
 * @par Thread safety
 * Call once per process, from one thread, before any other LCI call (except
 * `LCI_initialized`, `LCIX_set_wait_policy`, `LCIX_get_wait_policy` and
 * `LCIX_config_print`).
 *
 * @see @concept{Message flow}, @concept{Errors and failures}
 */
LCI_API LCI_error_t LCI_initialize() LCI_NOEXCEPT;
/**
 * @brief Tells whether LCI is initialized.
 *
 * @param[out] flag set to 1 between `LCI_initialize` and `LCI_finalize`, else to 0; must not
 *                  be NULL (debug builds return `LCI_ERR_FATAL` for NULL).
 *
 * @retval LCI_OK        `*flag` is set.
 * @retval LCI_ERR_FATAL `flag` is NULL (debug builds).
 *
 * @par Thread safety
 * Safe to call from any thread, at any time.
 *
 * @see @concept{Message flow}
 */
LCI_API LCI_error_t LCI_initialized(int* flag) LCI_NOEXCEPT;
/**
 * @brief Ends LCI (collective over all processes of the job).
 *
 * A barrier, then releases `LCI_UR_ENDPOINT`, `LCI_UR_CQ`, `LCI_UR_DEVICE`,
 * the handler completion objects and all runtime state. Devices and
 * endpoints the program created should be freed first. After a peer failed
 * (`LCI_PEER_FAILURE=continue`) the survivors finalize without that barrier.
 * When the LCI 2 interface (`lci.hpp`) still holds the runtime, only the C
 * interface's hold is released.
 *
 * @retval LCI_OK        LCI is finalized; only `LCI_initialize` may be called again.
 * @retval LCI_ERR_FATAL LCI is not initialized, or was initialized only by the LCI 2
 *                       interface (checked in every build).
 *
 * @par Thread safety
 * Call once per process, from one thread, when no other thread calls LCI.
 *
 * @see @concept{Message flow}, @concept{Errors and failures}
 */
LCI_API LCI_error_t LCI_finalize() LCI_NOEXCEPT;
/**
 * @brief Barrier over all processes of the job.
 *
 * Returns once every process entered it; drives progress on `LCI_UR_DEVICE`
 * while it waits.
 *
 * @retval LCI_OK        every process entered the barrier.
 * @retval LCI_ERR_FATAL LCI is not initialized (every build), or a peer is known to have
 *                       failed (`LCI_PEER_FAILURE=continue`).
 *
 * @par Thread safety
 * One thread per process at a time.
 *
 * @see @concept{Progress}, @concept{Errors and failures}
 */
LCI_API LCI_error_t LCI_barrier() LCI_NOEXCEPT;

/** @} */

/* ---- Devices ------------------------------------------------------------- */

/** @addtogroup lci_devices
 * @{ */

/**
 * @brief Creates a device (collective over all processes of the job).
 *
 * The k-th devices that all processes create form a group and talk to each
 * other; the call synchronizes like a barrier.
 *
 * @param[out] device_ptr receives the new device; must not be NULL (debug builds). The
 *                        caller owns it and frees it with `LCI_device_free`.
 *
 * @retval LCI_OK        `*device_ptr` is the new device.
 * @retval LCI_ERR_FATAL LCI is not initialized (every build); `device_ptr` is NULL (debug
 *                       builds).
 *
 * @par Thread safety
 * Every process creates and frees its devices in the same order; calls that
 * create or free devices must not run concurrently.
 *
 * @see @concept{Devices}
 */
LCI_API LCI_error_t LCI_device_init(LCI_device_t* device_ptr) LCI_NOEXCEPT;
/**
 * @brief Same as `LCI_device_init`.
 *
 * @param[out] device_ptr as for `LCI_device_init`.
 *
 * @retval LCI_OK        as for `LCI_device_init`.
 * @retval LCI_ERR_FATAL as for `LCI_device_init`.
 *
 * @par Thread safety
 * As for `LCI_device_init`.
 *
 * @see @concept{Devices}
 */
LCI_API LCI_error_t LCI_device_initx(LCI_device_t* device_ptr) LCI_NOEXCEPT;
/**
 * @brief Destroys a device (collective over the device's group).
 *
 * Releases the device's network context, packet pool, matching table and
 * progress engine, and sets `*device_ptr` to NULL. Its endpoints, and the
 * segments and buffers registered with it, must be freed first; nothing
 * may use the device afterwards.
 *
 * @param[in,out] device_ptr the device to free; neither it nor `*device_ptr` may be NULL.
 *
 * @retval LCI_OK        the device is freed and `*device_ptr` is NULL.
 * @retval LCI_ERR_FATAL `device_ptr` or `*device_ptr` is NULL (every build); `*device_ptr`
 *                       is not a live device (debug builds).
 *
 * @par Thread safety
 * No other thread may use the device during or after the call; see
 * `LCI_device_init` for the order of creation and freeing.
 *
 * @see @concept{Devices}
 */
LCI_API LCI_error_t LCI_device_free(LCI_device_t* device_ptr) LCI_NOEXCEPT;

/** @} */

/* ---- Property lists ------------------------------------------------------ */

/** @addtogroup lci_endpoints
 * @{ */

/**
 * @brief Creates a property list with the defaults.
 *
 * The defaults: `LCI_MATCH_RANKTAG`, `LCI_COMPLETION_QUEUE` on both ports,
 * default completion object `LCI_UR_CQ`.
 *
 * @param[out] plist_ptr receives the new list; must not be NULL (debug builds). The caller
 *                       owns it and frees it with `LCI_plist_free`.
 *
 * @retval LCI_OK        `*plist_ptr` is the new list.
 * @retval LCI_ERR_FATAL `plist_ptr` is NULL (debug builds).
 *
 * @par Thread safety
 * Safe to call from any thread.
 *
 * @see @concept{Endpoints and property lists}
 */
LCI_API LCI_error_t LCI_plist_create(LCI_plist_t* plist_ptr) LCI_NOEXCEPT;
/**
 * @brief Frees a property list and sets `*plist_ptr` to NULL.
 *
 * Endpoints made from the list keep their own copy.
 *
 * @param[in,out] plist_ptr the list to free; must not be NULL, `*plist_ptr` must be a live
 *                          list (debug builds check both).
 *
 * @retval LCI_OK        the list is freed.
 * @retval LCI_ERR_FATAL `plist_ptr` is NULL or `*plist_ptr` is not a live list (debug
 *                       builds).
 *
 * @par Thread safety
 * No other thread may use the list during or after the call.
 *
 * @see @concept{Endpoints and property lists}
 */
LCI_API LCI_error_t LCI_plist_free(LCI_plist_t* plist_ptr) LCI_NOEXCEPT;
/**
 * @brief Creates a new property list holding an endpoint's properties.
 *
 * @param[in]  ep        a live endpoint (debug builds check it).
 * @param[out] plist_ptr receives the new list; must not be NULL (debug builds). The caller
 *                       owns it and frees it with `LCI_plist_free`.
 *
 * @retval LCI_OK        `*plist_ptr` holds the match type, the two completion types and the
 *                       default completion object of `ep`.
 * @retval LCI_ERR_FATAL `ep` is not a live endpoint or `plist_ptr` is NULL (debug builds).
 *
 * @par Thread safety
 * Safe to call from any thread.
 *
 * @see @concept{Endpoints and property lists}
 */
LCI_API LCI_error_t LCI_plist_get(LCI_endpoint_t ep, LCI_plist_t* plist_ptr) LCI_NOEXCEPT;
/**
 * @brief Writes a one-line description of a property list.
 *
 * The line reads
 * `match=<ranktag|tag> command_port=<type> message_port=<type> default_comp=<pointer>`,
 * each `<type>` one of none, queue, handler, sync.
 *
 * @param[in]  plist  a live property list (debug builds check it).
 * @param[out] string a buffer of at least 256 bytes, the caller's; receives the
 *                    NUL-terminated line (at most 255 characters).
 *
 * @retval LCI_OK        the line is written.
 * @retval LCI_ERR_FATAL `plist` is not a live list or `string` is NULL (debug builds).
 *
 * @par Thread safety
 * Safe to call from any thread, unless another thread modifies the list.
 *
 * @see @concept{Endpoints and property lists}
 */
LCI_API LCI_error_t LCI_plist_decode(LCI_plist_t plist, char* string) LCI_NOEXCEPT;
/**
 * @brief Sets how receives on endpoints made from the list match messages.
 *
 * @param[in,out] plist      a live property list (debug builds check it).
 * @param[in]     match_type `LCI_MATCH_RANKTAG` (by sender rank and tag) or `LCI_MATCH_TAG`
 *                           (by tag alone); debug builds refuse other values.
 *
 * @retval LCI_OK        the match type is set.
 * @retval LCI_ERR_FATAL `plist` is not a live list, or `match_type` is not an `LCI_match_t`
 *                       (debug builds).
 *
 * @par Thread safety
 * Not safe concurrently with other calls on the same list.
 *
 * @see @concept{Endpoints and property lists}
 */
LCI_API LCI_error_t LCI_plist_set_match_type(LCI_plist_t plist, LCI_match_t match_type)
    LCI_NOEXCEPT;
/**
 * @brief Same as `LCI_plist_set_match_type`.
 *
 * @param[in,out] plist      as for `LCI_plist_set_match_type`.
 * @param[in]     match_type as for `LCI_plist_set_match_type`.
 *
 * @retval LCI_OK        as for `LCI_plist_set_match_type`.
 * @retval LCI_ERR_FATAL as for `LCI_plist_set_match_type`.
 *
 * @par Thread safety
 * Not safe concurrently with other calls on the same list.
 *
 * @see @concept{Endpoints and property lists}
 */
LCI_API LCI_error_t LCI_plist_set_match(LCI_plist_t plist, LCI_match_t match_type) LCI_NOEXCEPT;
/**
 * @brief Sets the completion type of one port of endpoints made from the list.
 *
 * The command port signals the operations this process issues; the
 * message port signals receives and one-sided operations that target it.
 * The type says how the port signals what the program did not name a
 * completion object for (the default object of one-sided arrivals, a
 * peer's `remote_completion`, which must be of this kind); an object the
 * program passes to a call is signalled as its own kind. With
 * `LCI_COMPLETION_NONE` the port signals nothing (objects passed are
 * ignored; the operations complete with fences).
 *
 * @param[in,out] plist     a live property list (debug builds check it).
 * @param[in]     port      `LCI_PORT_COMMAND` or `LCI_PORT_MESSAGE`.
 * @param[in]     comp_type an `LCI_comp_type_t`.
 *
 * @retval LCI_OK        the type is set.
 * @retval LCI_ERR_FATAL `plist` is not a live list, or `port` or `comp_type` is out of its
 *                       enumeration (debug builds).
 *
 * @par Thread safety
 * Not safe concurrently with other calls on the same list.
 *
 * @see @concept{Ports}, @concept{Completion kinds}
 */
LCI_API LCI_error_t LCI_plist_set_comp_type(LCI_plist_t plist, LCI_port_t port,
                                            LCI_comp_type_t comp_type) LCI_NOEXCEPT;
/**
 * @brief Sets the completion object that target-side completions addressed with
 *        `LCI_DEFAULT_COMP_REMOTE` go to.
 *
 * @param[in,out] plist a live property list (debug builds check it).
 * @param[in]     comp  a live completion object of any kind (signalled as its own kind), or
 *                      NULL (for a message port of type `LCI_COMPLETION_NONE`). It stays
 *                      the caller's and must outlive the endpoints made from the list;
 *                      `LCI_endpoint_init` checks that it is live (debug builds).
 *
 * @retval LCI_OK        the object is set.
 * @retval LCI_ERR_FATAL `plist` is not a live list, or `comp` is neither NULL nor a live
 *                       completion object (debug builds).
 *
 * @par Thread safety
 * Not safe concurrently with other calls on the same list.
 *
 * @see @concept{Ports}, @concept{Completion kinds}
 */
LCI_API LCI_error_t LCI_plist_set_default_comp(LCI_plist_t plist, LCI_comp_t comp) LCI_NOEXCEPT;

/* ---- Endpoints ----------------------------------------------------------- */

/**
 * @brief Creates an endpoint on a device from a property list (collective over the device's
 *        group).
 *
 * The endpoint copies the list's properties. The k-th endpoints that all
 * processes create on a device group talk to each other. Running out of
 * endpoints (`LCI_MAX_ENDPOINTS`) ends the process with a message.
 *
 * @param[out] ep_ptr receives the endpoint; must not be NULL (debug builds). The caller owns
 *                    it and frees it with `LCI_endpoint_free`.
 * @param[in]  device a live device; must not be NULL (every build).
 * @param[in]  plist  a live property list (debug builds); the caller keeps it.
 *
 * @retval LCI_OK        `*ep_ptr` is the new endpoint.
 * @retval LCI_ERR_FATAL `device` is NULL (every build); `ep_ptr` is NULL, `device` or
 *                       `plist` is not live, or the list's default completion object is not
 *                       of its message-port kind (debug builds).
 *
 * @par Thread safety
 * Every process creates the endpoints of a device in the same order; calls
 * that create endpoints on one device must not run concurrently.
 *
 * @see @concept{Endpoints and property lists}
 */
LCI_API LCI_error_t LCI_endpoint_init(LCI_endpoint_t* ep_ptr, LCI_device_t device,
                                      LCI_plist_t plist) LCI_NOEXCEPT;
/**
 * @brief Frees an endpoint and sets `*ep_ptr` to NULL.
 *
 * Local: no synchronization with the peers. Operations already in flight
 * on the endpoint complete normally (it is retired, and released once
 * nothing uses it).
 *
 * @param[in,out] ep_ptr the endpoint to free; must not be NULL and `*ep_ptr` must be a live
 *                       endpoint (debug builds check both).
 *
 * @retval LCI_OK        the endpoint is freed.
 * @retval LCI_ERR_FATAL `ep_ptr` is NULL or `*ep_ptr` is not a live endpoint (debug builds).
 *
 * @par Thread safety
 * No other thread may use the endpoint during or after the call.
 *
 * @see @concept{Endpoints and property lists}
 */
LCI_API LCI_error_t LCI_endpoint_free(LCI_endpoint_t* ep_ptr) LCI_NOEXCEPT;

/** @} */

/* ---- Memory registration and segments ------------------------------------ */

/** @addtogroup lci_memory
 * @{ */

/**
 * @brief Registers memory with a device for RDMA and returns its segment.
 *
 * @param[in]  device  a live device; must not be NULL (every build).
 * @param[in]  address first byte; not NULL unless `length` is 0 (debug builds). The memory
 *                     stays the caller's and must stay allocated until the segment is
 *                     deregistered.
 * @param[in]  length  bytes to register.
 * @param[out] segment receives the segment (the caller's, released with
 *                     `LCI_memory_deregister`); untouched when the call fails.
 *
 * @retval LCI_OK        `*segment` covers `[address, address+length)`.
 * @retval LCI_ERR_RETRY the network refused the registration (for instance over the
 *                       locked-memory limit); nothing changed: free memory or deregister,
 *                       then retry.
 * @retval LCI_ERR_FATAL `device` is NULL (every build); `device` is not live, or `segment`
 *                       or `address` is NULL (debug builds).
 *
 * @par Thread safety
 * Safe to call from any thread.
 *
 * @see @concept{Buffer ownership}, @concept{Back-pressure and LCI_ERR_RETRY}
 */
LCI_API LCI_error_t LCI_memory_register(LCI_device_t device, void* address, size_t length,
                                        LCI_segment_t* segment) LCI_NOEXCEPT;
/**
 * @brief Ends a registration, or releases a deserialized segment handle, and sets
 *        `*segment` to NULL.
 *
 * No operation in flight may still use the segment.
 *
 * @param[in,out] segment the segment; must not be NULL and `*segment` must be live (debug
 *                        builds check both).
 *
 * @retval LCI_OK        the segment is released.
 * @retval LCI_ERR_FATAL `segment` is NULL or `*segment` is not a live segment (debug builds).
 *
 * @par Thread safety
 * Safe to call from any thread; no other thread may use the segment during or
 * after the call.
 *
 * @see @concept{Buffer ownership}
 */
LCI_API LCI_error_t LCI_memory_deregister(LCI_segment_t* segment) LCI_NOEXCEPT;
/**
 * @brief Writes a printable description of a segment this process registered, for a peer to
 *        deserialize.
 *
 * @param[in]  segment a live segment registered by this process, not a deserialized handle
 *                     (debug builds check it).
 * @param[out] string  a buffer of at least 256 bytes, the caller's; receives the
 *                     NUL-terminated text (at most 255 characters).
 *
 * @retval LCI_OK        the text is written.
 * @retval LCI_ERR_FATAL `segment` is not a live local segment, or `string` is NULL (debug
 *                       builds).
 *
 * @par Thread safety
 * Safe to call from any thread.
 *
 * @see @concept{Buffer ownership}
 */
LCI_API LCI_error_t LCI_segment_serialize(LCI_segment_t segment, char* string) LCI_NOEXCEPT;
/**
 * @brief Reads a serialized segment into a remote segment handle.
 *
 * The handle names the peer's memory in the `remote_buffer` or
 * `remote_iovec` of `LCI_putl`, `LCI_getl`, `LCI_putv` and `LCI_getv`.
 *
 * @param[in]  string  text written by `LCI_segment_serialize` on a peer; not NULL.
 * @param[out] segment receives the handle; not NULL. The caller owns it and releases it with
 *                     `LCI_memory_deregister`.
 *
 * @retval LCI_OK        `*segment` is the remote handle.
 * @retval LCI_ERR_FATAL `string` or `segment` is NULL, or `string` is not a serialized
 *                       segment (every build, with a warning).
 *
 * @par Thread safety
 * Safe to call from any thread.
 *
 * @see @concept{Buffer ownership}
 */
LCI_API LCI_error_t LCI_segment_deserialize(char* string, LCI_segment_t* segment) LCI_NOEXCEPT;

/* ---- Buffers ------------------------------------------------------------- */

/**
 * @brief Takes an LCI medium buffer from the device's packet pool.
 *
 * @param[in]  device  a live device; must not be NULL (every build).
 * @param[out] mbuffer receives the buffer: `address`, and `length` = `LCI_MEDIUM_SIZE`. The
 *                     caller owns it until it passes it to a send that consumes it, or
 *                     returns it with `LCI_mbuffer_free`.
 *
 * @retval LCI_OK        `*mbuffer` is a buffer of the pool.
 * @retval LCI_ERR_RETRY the pool is empty; call `LCI_progress` and retry.
 * @retval LCI_ERR_FATAL `device` is NULL (every build); `device` is not live or `mbuffer` is
 *                       NULL (debug builds).
 *
 * @par Thread safety
 * Safe to call from any thread.
 *
 * @see @concept{Buffer ownership}, @concept{Back-pressure and LCI_ERR_RETRY}
 */
LCI_API LCI_error_t LCI_mbuffer_alloc(LCI_device_t device, LCI_mbuffer_t* mbuffer) LCI_NOEXCEPT;
/**
 * @brief Returns an LCI medium buffer to its pool.
 *
 * @param[in] mbuffer a buffer from `LCI_mbuffer_alloc` or delivered by a completion, owned by
 *                    the caller; its `address` is the buffer's start. LCI owns it again
 *                    afterwards.
 *
 * @retval LCI_OK        the buffer is back in its pool.
 * @retval LCI_ERR_FATAL `mbuffer.address` is not inside any LCI medium buffer (every build);
 *                       it is not at a buffer's start, or the buffer is not allocated (debug
 *                       builds).
 *
 * @par Thread safety
 * Safe to call from any thread.
 *
 * @see @concept{Buffer ownership}
 */
LCI_API LCI_error_t LCI_mbuffer_free(LCI_mbuffer_t mbuffer) LCI_NOEXCEPT;
/**
 * @brief Allocates an LCI long buffer registered with a device.
 *
 * @param[in]  device  a live device; must not be NULL (every build).
 * @param[in]  size    bytes to allocate.
 * @param[out] lbuffer receives `{segment, address, length = size}`; the caller owns it and
 *                     frees it with `LCI_lbuffer_free`.
 *
 * @retval LCI_OK        `*lbuffer` is the new buffer.
 * @retval LCI_ERR_RETRY the memory or its registration is short; nothing was allocated.
 * @retval LCI_ERR_FATAL `device` is NULL (every build); `device` is not live or `lbuffer` is
 *                       NULL (debug builds).
 *
 * @par Thread safety
 * Safe to call from any thread.
 *
 * @see @concept{Buffer ownership}, @concept{Back-pressure and LCI_ERR_RETRY}
 */
LCI_API LCI_error_t LCI_lbuffer_alloc(LCI_device_t device, size_t size,
                                      LCI_lbuffer_t* lbuffer) LCI_NOEXCEPT;
/**
 * @brief Like `LCI_lbuffer_alloc`, with the address aligned to `alignment`.
 *
 * @param[in]  device    a live device; must not be NULL (every build).
 * @param[in]  size      bytes to allocate.
 * @param[in]  alignment a power of two and a multiple of `sizeof(void*)` (debug builds).
 * @param[out] lbuffer   receives the buffer; the caller owns it and frees it with
 *                       `LCI_lbuffer_free`.
 *
 * @retval LCI_OK        `*lbuffer` is the new buffer.
 * @retval LCI_ERR_RETRY the memory or its registration is short; nothing was allocated.
 * @retval LCI_ERR_FATAL `device` is NULL (every build); `device` is not live, `lbuffer` is
 *                       NULL or `alignment` is invalid (debug builds).
 *
 * @par Thread safety
 * Safe to call from any thread.
 *
 * @see @concept{Buffer ownership}
 */
LCI_API LCI_error_t LCI_lbuffer_memalign(LCI_device_t device, size_t size, size_t alignment,
                                         LCI_lbuffer_t* lbuffer) LCI_NOEXCEPT;
/**
 * @brief Deregisters and frees an LCI long buffer.
 *
 * @param[in] lbuffer a buffer from `LCI_lbuffer_alloc`, `LCI_lbuffer_memalign` or a receive
 *                    into a buffer LCI allocated, owned by the caller and used by no
 *                    operation in flight.
 *
 * @retval LCI_OK        the buffer is freed.
 * @retval LCI_ERR_FATAL `lbuffer.segment` is not a live segment (debug builds).
 *
 * @par Thread safety
 * Safe to call from any thread.
 *
 * @see @concept{Buffer ownership}
 */
LCI_API LCI_error_t LCI_lbuffer_free(LCI_lbuffer_t lbuffer) LCI_NOEXCEPT;
/**
 * @brief The largest piggy-back payload of an I/O vector with `count` long buffers.
 *
 * The piggy-back bytes share a medium packet with the descriptors of the
 * long buffers, so the more buffers, the fewer bytes.
 *
 * @param[in] count number of long buffers, `1 ... LCI_IOVEC_SIZE`.
 *
 * @return `LCI_MEDIUM_SIZE` minus the I/O vector's header and `count` descriptors, or 0 when
 *         they do not fit. Meaningful after `LCI_initialize`.
 *
 * @par Thread safety
 * Safe to call from any thread.
 *
 * @see @concept{Buffer ownership}
 */
LCI_API size_t LCI_get_iovec_piggy_back_size(int count) LCI_NOEXCEPT;

/** @} */

/* ---- Completion queue ---------------------------------------------------- */

/** @addtogroup lci_completion
 * @{ */

/**
 * @brief Creates a completion queue of capacity `LCI_MAX_QUEUE_LENGTH`.
 *
 * The capacity is rounded up to a power of two; the queue does not grow.
 * A completion that finds the queue full ends the process with a message
 * (pop it more often, or create it with `LCI_queue_createx` and a larger
 * capacity).
 *
 * @param[in]  device unused (kept for source compatibility); any value.
 * @param[out] cq     receives the queue; must not be NULL (every build). The caller owns it
 *                    and frees it with `LCI_queue_free`.
 *
 * @retval LCI_OK        `*cq` is the new queue.
 * @retval LCI_ERR_FATAL `cq` is NULL (every build), or the queue cannot be allocated.
 *
 * @par Thread safety
 * Safe to call from any thread.
 *
 * @see @concept{Completion kinds}
 */
LCI_API LCI_error_t LCI_queue_create(LCI_device_t device, LCI_comp_t* cq) LCI_NOEXCEPT;
/**
 * @brief Creates a completion queue of capacity `max_length`.
 *
 * @param[in]  device     unused (kept for source compatibility); any value.
 * @param[in]  max_length capacity in entries, at least 1 (debug builds), rounded up to a
 *                        power of two.
 * @param[out] cq         receives the queue; must not be NULL (every build). The caller owns
 *                        it and frees it with `LCI_queue_free`.
 *
 * @retval LCI_OK        `*cq` is the new queue.
 * @retval LCI_ERR_FATAL `cq` is NULL (every build); `max_length` is 0 (debug builds); the
 *                       capacity is over the largest queue or cannot be allocated.
 *
 * @par Thread safety
 * Safe to call from any thread.
 *
 * @see @concept{Completion kinds}
 */
LCI_API LCI_error_t LCI_queue_createx(LCI_device_t device, size_t max_length,
                                      LCI_comp_t* cq) LCI_NOEXCEPT;
/**
 * @brief Frees a completion queue and sets `*cq` to NULL.
 *
 * Entries left in the queue are dropped, and so are completions of
 * operations still in flight that reach it later (it is released once
 * nothing references it).
 *
 * @param[in,out] cq the queue; `cq` must not be NULL and `*cq` must be a queue (every build).
 *
 * @retval LCI_OK        the queue is freed.
 * @retval LCI_ERR_FATAL `cq` or `*cq` is NULL or `*cq` is not a completion queue (every
 *                       build); `*cq` is not live (debug builds).
 *
 * @par Thread safety
 * No other thread may use the queue during or after the call.
 *
 * @see @concept{Completion kinds}
 */
LCI_API LCI_error_t LCI_queue_free(LCI_comp_t* cq) LCI_NOEXCEPT;
/**
 * @brief Takes the oldest entry of a completion queue, if there is one.
 *
 * Does not progress: something must call `LCI_progress` for entries to
 * arrive.
 *
 * @param[in]  cq      a live completion queue; not NULL (every build).
 * @param[out] request receives the entry, by value; not NULL (debug builds). Buffers it
 *                     carries are the caller's per @concept{Buffer ownership}.
 *
 * @retval LCI_OK        `*request` is the oldest entry, removed from the queue.
 * @retval LCI_ERR_RETRY the queue is empty.
 * @retval LCI_ERR_FATAL `cq` is NULL or not a completion queue (every build); not live, or
 *                       `request` is NULL (debug builds).
 *
 * @par Thread safety
 * Safe to call from any thread; any number of threads may pop and wait on
 * one queue at once, each entry goes to exactly one of them.
 *
 * @see @concept{Completion kinds}
 */
LCI_API LCI_error_t LCI_queue_pop(LCI_comp_t cq, LCI_request_t* request) LCI_NOEXCEPT;
/**
 * @brief Blocks until a completion queue has an entry, and takes it.
 *
 * Does not progress: another thread (`LCI_progress`, a posting call) must
 * deliver the entry. The waiting policy (`LCIX_set_wait_policy`) says how
 * the wait spends its time.
 *
 * @param[in]  cq      a live completion queue; not NULL (every build).
 * @param[out] request receives the entry, by value; not NULL (debug builds).
 *
 * @retval LCI_OK        `*request` is the oldest entry, removed from the queue.
 * @retval LCI_ERR_FATAL `cq` is NULL or not a completion queue (every build); not live, or
 *                       `request` is NULL (debug builds).
 *
 * @par Thread safety
 * Safe to call from any thread (see `LCI_queue_pop`).
 *
 * @see @concept{Completion kinds}, @concept{Progress}
 */
LCI_API LCI_error_t LCI_queue_wait(LCI_comp_t cq, LCI_request_t* request) LCI_NOEXCEPT;
/**
 * @brief Takes up to `request_count` entries of a completion queue, without waiting.
 *
 * @param[in]  cq            a live completion queue; not NULL (every build).
 * @param[in]  request_count the most entries to take.
 * @param[out] requests      an array of at least `request_count` entries, the caller's;
 *                           receives the entries oldest first. Not NULL (debug builds).
 * @param[out] return_count  receives how many entries were taken (possibly 0); not NULL
 *                           (debug builds).
 *
 * @retval LCI_OK        `*return_count` entries were taken (possibly none).
 * @retval LCI_ERR_FATAL `cq` is NULL or not a completion queue (every build); not live, or
 *                       `requests` or `return_count` is NULL (debug builds).
 *
 * @par Thread safety
 * Safe to call from any thread (see `LCI_queue_pop`).
 *
 * @see @concept{Completion kinds}
 */
LCI_API LCI_error_t LCI_queue_pop_multiple(LCI_comp_t cq, size_t request_count,
                                           LCI_request_t* requests, size_t* return_count)
    LCI_NOEXCEPT;
/**
 * @brief Blocks until exactly `request_count` entries were taken from a completion queue.
 *
 * Does not progress (see `LCI_queue_wait`).
 *
 * @param[in]  cq            a live completion queue; not NULL (every build).
 * @param[in]  request_count the number of entries to take.
 * @param[out] requests      an array of at least `request_count` entries, the caller's;
 *                           receives them oldest first. Not NULL (debug builds).
 *
 * @retval LCI_OK        `request_count` entries were taken.
 * @retval LCI_ERR_FATAL `cq` is NULL or not a completion queue (every build); not live, or
 *                       `requests` is NULL (debug builds).
 *
 * @par Thread safety
 * Safe to call from any thread (see `LCI_queue_pop`).
 *
 * @see @concept{Completion kinds}, @concept{Progress}
 */
LCI_API LCI_error_t LCI_queue_wait_multiple(LCI_comp_t cq, size_t request_count,
                                            LCI_request_t* requests) LCI_NOEXCEPT;
/**
 * @brief Stores the number of entries of a completion queue.
 *
 * @param[in]  cq  a live completion queue; not NULL (every build).
 * @param[out] len receives the number of entries, a snapshot that other threads may change
 *                 at once. Not NULL (debug builds).
 *
 * @retval LCI_OK        `*len` is set.
 * @retval LCI_ERR_FATAL `cq` is NULL or not a completion queue (every build); not live, or
 *                       `len` is NULL (debug builds).
 *
 * @par Thread safety
 * Safe to call from any thread.
 *
 * @see @concept{Completion kinds}
 */
LCI_API LCI_error_t LCI_queue_len(LCI_comp_t cq, size_t* len) LCI_NOEXCEPT;

/* ---- Synchronizer -------------------------------------------------------- */

/**
 * @brief Creates a synchronizer that triggers after `threshold` signals.
 *
 * Each signal (a completed operation, or `LCI_sync_signal`) carries a
 * request; once `threshold` arrived, one `LCI_sync_test` or `LCI_sync_wait`
 * takes them and resets the synchronizer for the next round.
 *
 * @param[in]  device     unused (kept for source compatibility); any value.
 * @param[in]  threshold  signals per round, `1 ... LCI_MAX_SYNC_LENGTH` (below 1: every
 *                        build refuses it).
 * @param[out] completion receives the synchronizer; must not be NULL (every build). The
 *                        caller owns it and frees it with `LCI_sync_free`.
 *
 * @retval LCI_OK        `*completion` is the new synchronizer.
 * @retval LCI_ERR_FATAL `completion` is NULL or `threshold` is below 1 (every build).
 *
 * @par Thread safety
 * Safe to call from any thread.
 *
 * @see @concept{Completion kinds}
 */
LCI_API LCI_error_t LCI_sync_create(LCI_device_t device, int threshold,
                                    LCI_comp_t* completion) LCI_NOEXCEPT;
/**
 * @brief Frees a synchronizer and sets `*completion` to NULL.
 *
 * Signals of operations still in flight that reach it later are dropped
 * (it is released once nothing references it).
 *
 * @param[in,out] completion the synchronizer; `completion` must not be NULL and
 *                           `*completion` must be a synchronizer (every build).
 *
 * @retval LCI_OK        the synchronizer is freed.
 * @retval LCI_ERR_FATAL `completion` or `*completion` is NULL or not a synchronizer (every
 *                       build); not live (debug builds).
 *
 * @par Thread safety
 * No other thread may use the synchronizer during or after the call.
 *
 * @see @concept{Completion kinds}
 */
LCI_API LCI_error_t LCI_sync_free(LCI_comp_t* completion) LCI_NOEXCEPT;
/**
 * @brief Signals a synchronizer once.
 *
 * More signals than the threshold before a test or wait took the round is
 * a program error.
 *
 * @param[in] completion a live synchronizer; not NULL (every build).
 * @param[in] request    the request this signal carries, copied verbatim.
 *
 * @retval LCI_OK        the signal is counted.
 * @retval LCI_ERR_FATAL `completion` is NULL or not a synchronizer (every build); not live
 *                       (debug builds).
 *
 * @par Thread safety
 * Safe to call from any thread.
 *
 * @see @concept{Completion kinds}
 */
LCI_API LCI_error_t LCI_sync_signal(LCI_comp_t completion, LCI_request_t request) LCI_NOEXCEPT;
/**
 * @brief Blocks until a synchronizer triggered, takes its requests and resets it.
 *
 * Does not progress: another thread (`LCI_progress`, a posting call,
 * `LCI_sync_signal`) must deliver the signals. The waiting policy says how
 * the wait spends its time.
 *
 * @param[in]  completion a live synchronizer; not NULL (every build).
 * @param[out] request    an array of at least the threshold's number of entries, the
 *                        caller's; receives the round's requests in signal order. NULL: they
 *                        are dropped.
 *
 * @retval LCI_OK        the synchronizer triggered and is reset.
 * @retval LCI_ERR_FATAL `completion` is NULL or not a synchronizer (every build); not live
 *                       (debug builds).
 *
 * @par Thread safety
 * Safe to call from any thread; of concurrent testers and waiters exactly
 * one takes each round.
 *
 * @see @concept{Completion kinds}, @concept{Progress}
 */
LCI_API LCI_error_t LCI_sync_wait(LCI_comp_t completion, LCI_request_t request[]) LCI_NOEXCEPT;
/**
 * @brief Takes a synchronizer's requests and resets it, if it triggered.
 *
 * @param[in]  completion a live synchronizer; not NULL (every build).
 * @param[out] request    an array of at least the threshold's number of entries, the
 *                        caller's; receives the round's requests when the call returns
 *                        `LCI_OK`. NULL: they are dropped.
 *
 * @retval LCI_OK        the synchronizer had triggered; it is reset.
 * @retval LCI_ERR_RETRY it has not triggered (yet), or another thread took the round.
 * @retval LCI_ERR_FATAL `completion` is NULL or not a synchronizer (every build); not live
 *                       (debug builds).
 *
 * @par Thread safety
 * Safe to call from any thread (see `LCI_sync_wait`).
 *
 * @see @concept{Completion kinds}
 */
LCI_API LCI_error_t LCI_sync_test(LCI_comp_t completion, LCI_request_t request[]) LCI_NOEXCEPT;

/* ---- Handler ------------------------------------------------------------- */

/**
 * @brief Wraps a function as a completion object; LCI calls it with each completed request.
 *
 * The function runs on the thread that completes the operation (inside
 * `LCI_progress` or a posting call), possibly on several threads at once;
 * it must be thread-safe, short, and must not call LCI. There is no call
 * that frees a handler: `LCI_finalize` does.
 *
 * @param[in]  device     unused (kept for source compatibility); any value.
 * @param[in]  handler    the function; not NULL (debug builds).
 * @param[out] completion receives the completion object; not NULL (debug builds).
 *
 * @retval LCI_OK        `*completion` is the handler object.
 * @retval LCI_ERR_FATAL `completion` or `handler` is NULL (debug builds).
 *
 * @par Thread safety
 * Safe to call from any thread.
 *
 * @see @concept{Completion kinds}, @concept{Threading}
 */
LCI_API LCI_error_t LCI_handler_create(LCI_device_t device, LCI_handler_t handler,
                                       LCI_comp_t* completion) LCI_NOEXCEPT;

/** @} */

/* ---- Two-sided ----------------------------------------------------------- */

/** @addtogroup lci_two_sided
 * @{ */

/**
 * @brief Sends short data; done at return.
 *
 * The `LCI_SHORT_SIZE` bytes of `src` travel by value and complete a
 * receive posted with `LCI_recvs` on the peer (as `LCI_IMMEDIATE`).
 *
 * @param[in] ep   a live endpoint; not NULL.
 * @param[in] src  the data, by value.
 * @param[in] rank destination, `0 ... LCI_NUM_PROCESSES-1`.
 * @param[in] tag  `0 ... LCI_MAX_TAG`.
 *
 * @retval LCI_OK        sent; nothing to wait for.
 * @retval LCI_ERR_RETRY back-pressure (the network's send queue is full, no packet is free,
 *                       or earlier refused operations wait in the device's backlog): nothing
 *                       was sent; call `LCI_progress` and retry.
 * @retval LCI_ERR_FATAL `ep` is NULL, `rank` is out of range or `tag` is over `LCI_MAX_TAG`
 *                       (every build), or `rank` is known to have failed
 *                       (`LCI_PEER_FAILURE=continue`); `ep` is not live (debug builds).
 *
 * @par Thread safety
 * Safe to call from any thread, on the same endpoint too.
 *
 * @see @concept{Message flow}, @concept{Back-pressure and LCI_ERR_RETRY}
 */
LCI_API LCI_error_t LCI_sends(LCI_endpoint_t ep, LCI_short_t src, int rank, LCI_tag_t tag)
    LCI_NOEXCEPT;
/**
 * @brief Posts a receive of short data.
 *
 * Completes with type `LCI_IMMEDIATE` and the `LCI_SHORT_SIZE` bytes in
 * `data.immediate`.
 *
 * @param[in] ep           a live endpoint; not NULL.
 * @param[in] rank         sender, `0 ... LCI_NUM_PROCESSES-1`; on an `LCI_MATCH_TAG`
 *                         endpoint any value (`LCI_RANK_ANY`).
 * @param[in] tag          `0 ... LCI_MAX_TAG`.
 * @param[in] completion   signalled when the data arrived: a live completion object of
 *                         any kind, or NULL (nothing is signalled).
 * @param[in] user_context any value; returned in the completion's `user_context`.
 *
 * @retval LCI_OK        the receive is posted (or already matched a waiting message).
 * @retval LCI_ERR_FATAL `ep` is NULL, `rank` is out of range or `tag` is over `LCI_MAX_TAG`
 *                       (every build), or `rank` is known to have failed; `ep` is not live or
 *                       `completion` is not a live completion object (debug builds).
 *
 * @par Thread safety
 * Safe to call from any thread, on the same endpoint too.
 *
 * @see @concept{Message flow}, @concept{Completion kinds}
 */
LCI_API LCI_error_t LCI_recvs(LCI_endpoint_t ep, int rank, LCI_tag_t tag,
                              LCI_comp_t completion, void* user_context) LCI_NOEXCEPT;
/**
 * @brief Sends a medium message; done at return.
 *
 * User memory is copied (the caller keeps it); an LCI medium buffer
 * (`LCI_mbuffer_alloc`) is consumed when the call returns `LCI_OK` and
 * stays the caller's otherwise.
 *
 * @param[in] ep     a live endpoint; not NULL.
 * @param[in] buffer the message: any memory, or an LCI medium buffer;
 *                   `length` at most `LCI_MEDIUM_SIZE` (every build).
 * @param[in] rank   destination, `0 ... LCI_NUM_PROCESSES-1`.
 * @param[in] tag    `0 ... LCI_MAX_TAG`.
 *
 * @retval LCI_OK        sent; nothing to wait for.
 * @retval LCI_ERR_RETRY back-pressure (the network's send queue is full, no packet is free,
 *                       or earlier refused operations wait in the device's backlog): nothing
 *                       was sent; call `LCI_progress` and retry.
 * @retval LCI_ERR_FATAL `ep` is NULL, `rank` is out of range, `tag` is over `LCI_MAX_TAG` or
 *                       `buffer.length` over `LCI_MEDIUM_SIZE` (every build), or `rank` is
 *                       known to have failed; `ep` is not live (debug builds).
 *
 * @par Thread safety
 * Safe to call from any thread, on the same endpoint too.
 *
 * @see @concept{Message flow}, @concept{Buffer ownership},
 *      @concept{Back-pressure and LCI_ERR_RETRY}
 */
LCI_API LCI_error_t LCI_sendm(LCI_endpoint_t ep, LCI_mbuffer_t buffer, int rank,
                              LCI_tag_t tag) LCI_NOEXCEPT;
/**
 * @brief Same as `LCI_sendm` (meant for LCI medium buffers).
 *
 * @param[in] ep     as for `LCI_sendm`.
 * @param[in] buffer as for `LCI_sendm`.
 * @param[in] rank   as for `LCI_sendm`.
 * @param[in] tag    as for `LCI_sendm`.
 *
 * @retval LCI_OK        as for `LCI_sendm`.
 * @retval LCI_ERR_RETRY as for `LCI_sendm`.
 * @retval LCI_ERR_FATAL as for `LCI_sendm`.
 *
 * @par Thread safety
 * Safe to call from any thread, on the same endpoint too.
 *
 * @see @concept{Message flow}, @concept{Buffer ownership}
 */
LCI_API LCI_error_t LCI_sendmn(LCI_endpoint_t ep, LCI_mbuffer_t buffer, int rank,
                               LCI_tag_t tag) LCI_NOEXCEPT;
/**
 * @brief `LCI_sendm` with a completion once the send finished.
 *
 * With a completion object the buffer (user memory or an LCI medium buffer)
 * stays the caller's, and must stay unmodified, until the completion is
 * signalled; it is then free to reuse. On an endpoint whose command port
 * has type `LCI_COMPLETION_NONE`, `completion` is ignored and the send
 * completes with `LCI_fence_wait`.
 *
 * @param[in] ep           a live endpoint; not NULL.
 * @param[in] buffer       the message; `length` at most `LCI_MEDIUM_SIZE` (every build).
 * @param[in] rank         destination, `0 ... LCI_NUM_PROCESSES-1`.
 * @param[in] tag          `0 ... LCI_MAX_TAG`.
 * @param[in] completion   a live completion object of any kind, or NULL.
 * @param[in] user_context any value; returned in the completion's `user_context`.
 *
 * @retval LCI_OK        the send started and will complete through `completion`.
 * @retval LCI_ERR_RETRY back-pressure: nothing was sent; call `LCI_progress` and retry.
 * @retval LCI_ERR_FATAL as for `LCI_sendm`; `completion` is not a live completion object (debug builds).
 *
 * @par Thread safety
 * Safe to call from any thread, on the same endpoint too.
 *
 * @see @concept{Message flow}, @concept{Buffer ownership}, @concept{Ports}
 */
LCI_API LCI_error_t LCI_sendmc(LCI_endpoint_t ep, LCI_mbuffer_t buffer, int rank,
                               LCI_tag_t tag, LCI_comp_t completion, void* user_context)
    LCI_NOEXCEPT;
/**
 * @brief Posts a receive of a medium message into the caller's buffer.
 *
 * Completes with type `LCI_MEDIUM` and `data.mbuffer` = the buffer's
 * address and the received length. The buffer is LCI's until then.
 *
 * @param[in] ep           a live endpoint; not NULL.
 * @param[in] buffer       memory of at least the sent length; `address` not NULL unless
 *                         `length` is 0 (debug builds).
 * @param[in] rank         sender, `0 ... LCI_NUM_PROCESSES-1`; on an `LCI_MATCH_TAG`
 *                         endpoint any value (`LCI_RANK_ANY`).
 * @param[in] tag          `0 ... LCI_MAX_TAG`.
 * @param[in] completion   a live completion object of any kind, or NULL
 *                         (nothing is signalled).
 * @param[in] user_context any value; returned in the completion's `user_context`.
 *
 * @retval LCI_OK        the receive is posted (or already matched a waiting message).
 * @retval LCI_ERR_FATAL `ep` is NULL, `rank` is out of range or `tag` is over `LCI_MAX_TAG`
 *                       (every build), or `rank` is known to have failed; `ep` is not live,
 *                       `buffer.address` is NULL or `completion` is not a live completion object (debug
 *                       builds).
 *
 * @par Thread safety
 * Safe to call from any thread, on the same endpoint too.
 *
 * @see @concept{Message flow}, @concept{Buffer ownership}
 */
LCI_API LCI_error_t LCI_recvm(LCI_endpoint_t ep, LCI_mbuffer_t buffer, int rank,
                              LCI_tag_t tag, LCI_comp_t completion, void* user_context)
    LCI_NOEXCEPT;
/**
 * @brief Posts a receive of a medium message into an LCI medium buffer.
 *
 * Completes with type `LCI_MEDIUM`; `data.mbuffer` is an LCI medium buffer
 * holding the message, which the receiver then owns and returns with
 * `LCI_mbuffer_free`.
 *
 * @param[in] ep           a live endpoint; not NULL.
 * @param[in] rank         sender, `0 ... LCI_NUM_PROCESSES-1`; on an `LCI_MATCH_TAG`
 *                         endpoint any value (`LCI_RANK_ANY`).
 * @param[in] tag          `0 ... LCI_MAX_TAG`.
 * @param[in] completion   a live completion object of any kind; not NULL
 *                         unless that type is `LCI_COMPLETION_NONE` (debug builds).
 * @param[in] user_context any value; returned in the completion's `user_context`.
 *
 * @retval LCI_OK        the receive is posted (or already matched a waiting message).
 * @retval LCI_ERR_FATAL `ep` is NULL, `rank` is out of range or `tag` is over `LCI_MAX_TAG`
 *                       (every build), or `rank` is known to have failed; `ep` is not live or
 *                       `completion` is NULL or not a live completion object (debug builds).
 *
 * @par Thread safety
 * Safe to call from any thread, on the same endpoint too.
 *
 * @see @concept{Message flow}, @concept{Buffer ownership}
 */
LCI_API LCI_error_t LCI_recvmn(LCI_endpoint_t ep, int rank, LCI_tag_t tag,
                               LCI_comp_t completion, void* user_context) LCI_NOEXCEPT;
/**
 * @brief Sends a long message by rendezvous.
 *
 * The receiver's matching `LCI_recvl` receives the data by RDMA. The
 * buffer is LCI's until the completion; the completion's `flag` is
 * `LCI_OK`, `LCI_ERR_RETRY` when the target could not register its buffer
 * (nothing was delivered: send again), or `LCI_ERR_FATAL` when the target
 * failed.
 *
 * @param[in] ep           a live endpoint; not NULL.
 * @param[in] buffer       the message: `segment` a segment registered on `ep`'s device that
 *                         covers it, or `LCI_SEGMENT_ALL` (LCI registers it for the transfer).
 * @param[in] rank         destination, `0 ... LCI_NUM_PROCESSES-1`.
 * @param[in] tag          `0 ... LCI_MAX_TAG`.
 * @param[in] completion   a live completion object of any kind, or NULL.
 * @param[in] user_context any value; returned in the completion's `user_context`.
 *
 * @retval LCI_OK        the send started and will complete through `completion`.
 * @retval LCI_ERR_RETRY back-pressure (no packet is free, earlier refused operations wait in
 *                       the device's backlog, or an `LCI_SEGMENT_ALL` buffer could not be
 *                       registered): nothing was sent; call `LCI_progress` and retry.
 * @retval LCI_ERR_FATAL `ep` is NULL, `rank` is out of range or `tag` is over `LCI_MAX_TAG`
 *                       (every build), or `rank` is known to have failed; `ep` is not live, the
 *                       segment does not cover the buffer or `completion` is not a live completion object
 *                       (debug builds).
 *
 * @par Thread safety
 * Safe to call from any thread, on the same endpoint too.
 *
 * @see @concept{Message flow}, @concept{Buffer ownership},
 *      @concept{Back-pressure and LCI_ERR_RETRY}
 */
LCI_API LCI_error_t LCI_sendl(LCI_endpoint_t ep, LCI_lbuffer_t buffer, int rank,
                              LCI_tag_t tag, LCI_comp_t completion, void* user_context)
    LCI_NOEXCEPT;
/**
 * @brief Posts a receive of a long message.
 *
 * Completes with type `LCI_LONG` and `data.lbuffer` = the buffer and the
 * received length. The buffer is LCI's until then. With `buffer.address`
 * NULL, LCI allocates an LCI long buffer when the message arrives; the
 * completion hands it to the receiver, who frees it with
 * `LCI_lbuffer_free` (an allocation that fails ends the process).
 *
 * @param[in] ep           a live endpoint; not NULL.
 * @param[in] buffer       memory of at least the sent length with its segment (or
 *                         `LCI_SEGMENT_ALL`), or `address` NULL for a buffer LCI allocates.
 * @param[in] rank         sender, `0 ... LCI_NUM_PROCESSES-1`; on an `LCI_MATCH_TAG`
 *                         endpoint any value (`LCI_RANK_ANY`).
 * @param[in] tag          `0 ... LCI_MAX_TAG`.
 * @param[in] completion   a live completion object of any kind; NULL
 *                         only when `buffer.address` is not NULL (nothing is signalled).
 * @param[in] user_context any value; returned in the completion's `user_context`.
 *
 * @retval LCI_OK        the receive is posted (or already matched a waiting message).
 * @retval LCI_ERR_FATAL `ep` is NULL, `rank` is out of range or `tag` is over `LCI_MAX_TAG`
 *                       (every build), or `rank` is known to have failed; `ep` is not live,
 *                       the segment does not cover the buffer or `completion` is of the wrong
 *                       kind (debug builds).
 *
 * @par Thread safety
 * Safe to call from any thread, on the same endpoint too.
 *
 * @see @concept{Message flow}, @concept{Buffer ownership}
 */
LCI_API LCI_error_t LCI_recvl(LCI_endpoint_t ep, LCI_lbuffer_t buffer, int rank,
                              LCI_tag_t tag, LCI_comp_t completion, void* user_context)
    LCI_NOEXCEPT;
/**
 * @brief Sends an I/O vector in one rendezvous.
 *
 * The piggy-back bytes travel eagerly with the descriptors; the long
 * buffers move by RDMA. The long buffers and their array are LCI's until
 * the completion (its `flag` as for `LCI_sendl`).
 *
 * @param[in] ep           a live endpoint; not NULL.
 * @param[in] iovec        `count` in `1 ... LCI_IOVEC_SIZE`, `piggy_back.length` at most
 *                         `LCI_get_iovec_piggy_back_size(count)`, each long buffer with a
 *                         segment of `ep`'s device or `LCI_SEGMENT_ALL`.
 * @param[in] rank         destination, `0 ... LCI_NUM_PROCESSES-1`.
 * @param[in] tag          `0 ... LCI_MAX_TAG`.
 * @param[in] completion   a live completion object of any kind, or NULL.
 * @param[in] user_context any value; returned in the completion's `user_context`.
 *
 * @retval LCI_OK        the send started and will complete through `completion`.
 * @retval LCI_ERR_RETRY back-pressure (as for `LCI_sendl`): nothing was sent; call
 *                       `LCI_progress` and retry.
 * @retval LCI_ERR_FATAL `ep` is NULL, `rank` is out of range or `tag` is over `LCI_MAX_TAG`
 *                       (every build), or `rank` is known to have failed; `ep` is not live,
 *                       `iovec` is malformed or `completion` is not a live completion object (debug
 *                       builds).
 *
 * @par Thread safety
 * Safe to call from any thread, on the same endpoint too.
 *
 * @see @concept{Message flow}, @concept{Buffer ownership}
 */
LCI_API LCI_error_t LCI_sendv(LCI_endpoint_t ep, LCI_iovec_t iovec, int rank, LCI_tag_t tag,
                              LCI_comp_t completion, void* user_context) LCI_NOEXCEPT;
/**
 * @brief Posts a receive of an I/O vector.
 *
 * Completes with type `LCI_IOVEC`. The buffers of `iovec` (each at least
 * as long as the sender's, the same `count`) are LCI's until then; with
 * `iovec.lbuffers` NULL, LCI allocates the long buffers on arrival and the
 * completion hands them, and their array, to the receiver (an iovec that
 * does not match the sender's, or an allocation that fails, ends the
 * process).
 *
 * @param[in] ep           a live endpoint; not NULL.
 * @param[in] iovec        the receive buffers, or `lbuffers` NULL for buffers LCI allocates.
 * @param[in] rank         sender, `0 ... LCI_NUM_PROCESSES-1`; on an `LCI_MATCH_TAG`
 *                         endpoint any value (`LCI_RANK_ANY`).
 * @param[in] tag          `0 ... LCI_MAX_TAG`.
 * @param[in] completion   a live completion object of any kind; NULL
 *                         only when `iovec.lbuffers` is not NULL (nothing is signalled).
 * @param[in] user_context any value; returned in the completion's `user_context`.
 *
 * @retval LCI_OK        the receive is posted (or already matched a waiting message).
 * @retval LCI_ERR_FATAL `ep` is NULL, `rank` is out of range or `tag` is over `LCI_MAX_TAG`
 *                       (every build), or `rank` is known to have failed; `ep` is not live,
 *                       `iovec` is malformed or `completion` is not a live completion object (debug
 *                       builds).
 *
 * @par Thread safety
 * Safe to call from any thread, on the same endpoint too.
 *
 * @see @concept{Message flow}, @concept{Buffer ownership}
 */
LCI_API LCI_error_t LCI_recvv(LCI_endpoint_t ep, LCI_iovec_t iovec, int rank, LCI_tag_t tag,
                              LCI_comp_t completion, void* user_context) LCI_NOEXCEPT;

/** @} */

/* ---- One-sided ----------------------------------------------------------- */

/** @addtogroup lci_one_sided
 * @{ */

/**
 * @brief Puts short data to a target's completion object; done at return.
 *
 * The target's completion has type `LCI_IMMEDIATE`, the origin's rank, the
 * tag, the data and `user_context` NULL.
 *
 * @param[in] ep                a live endpoint; not NULL.
 * @param[in] src               the data, by value.
 * @param[in] rank              target, `0 ... LCI_NUM_PROCESSES-1`.
 * @param[in] tag               `0 ... LCI_MAX_TAG`, delivered with the data.
 * @param[in] remote_completion `LCI_DEFAULT_COMP_REMOTE` (the target endpoint's default
 *                              completion object) or a completion object the target created
 *                              (its `LCI_comp_t` as an integer, passed on by the program) of
 *                              the kind of the target endpoint's message-port type. The
 *                              target drops a message naming an unknown object, or one of
 *                              another kind, with a warning.
 *
 * @retval LCI_OK        sent; nothing to wait for at the origin.
 * @retval LCI_ERR_RETRY back-pressure (the network's send queue is full, no packet is free,
 *                       or earlier refused operations wait in the device's backlog): nothing
 *                       was sent; call `LCI_progress` and retry.
 * @retval LCI_ERR_FATAL `ep` is NULL, `rank` is out of range or `tag` is over `LCI_MAX_TAG`
 *                       (every build), or `rank` is known to have failed; `ep` is not live
 *                       (debug builds).
 *
 * @par Thread safety
 * Safe to call from any thread, on the same endpoint too.
 *
 * @see @concept{Message flow}, @concept{Completion kinds}
 */
LCI_API LCI_error_t LCI_puts(LCI_endpoint_t ep, LCI_short_t src, int rank, LCI_tag_t tag,
                             uintptr_t remote_completion) LCI_NOEXCEPT;
/**
 * @brief Puts a medium message; the target receives it in an LCI medium buffer. Done at
 *        return.
 *
 * The target's completion has type `LCI_MEDIUM` and an LCI medium buffer
 * that the target then owns (`LCI_mbuffer_free`). At the origin, user
 * memory is copied; an LCI medium buffer is consumed when the call returns
 * `LCI_OK`.
 *
 * @param[in] ep                a live endpoint; not NULL.
 * @param[in] buffer            the message; `length` at most `LCI_MEDIUM_SIZE` (every build).
 * @param[in] rank              target, `0 ... LCI_NUM_PROCESSES-1`.
 * @param[in] tag               `0 ... LCI_MAX_TAG`.
 * @param[in] remote_completion the target's completion object, as for `LCI_puts`.
 *
 * @retval LCI_OK        sent; nothing to wait for at the origin.
 * @retval LCI_ERR_RETRY back-pressure (as for `LCI_puts`): nothing was sent; call
 *                       `LCI_progress` and retry.
 * @retval LCI_ERR_FATAL as for `LCI_puts`, or `buffer.length` is over `LCI_MEDIUM_SIZE`
 *                       (every build).
 *
 * @par Thread safety
 * Safe to call from any thread, on the same endpoint too.
 *
 * @see @concept{Message flow}, @concept{Buffer ownership}
 */
LCI_API LCI_error_t LCI_putma(LCI_endpoint_t ep, LCI_mbuffer_t buffer, int rank,
                              LCI_tag_t tag, uintptr_t remote_completion) LCI_NOEXCEPT;
/**
 * @brief Same as `LCI_putma` (meant for LCI medium buffers).
 *
 * @param[in] ep                as for `LCI_putma`.
 * @param[in] buffer            as for `LCI_putma`.
 * @param[in] rank              as for `LCI_putma`.
 * @param[in] tag               as for `LCI_putma`.
 * @param[in] remote_completion as for `LCI_putma`.
 *
 * @retval LCI_OK        as for `LCI_putma`.
 * @retval LCI_ERR_RETRY as for `LCI_putma`.
 * @retval LCI_ERR_FATAL as for `LCI_putma`.
 *
 * @par Thread safety
 * Safe to call from any thread, on the same endpoint too.
 *
 * @see @concept{Message flow}, @concept{Buffer ownership}
 */
LCI_API LCI_error_t LCI_putmna(LCI_endpoint_t ep, LCI_mbuffer_t buffer, int rank,
                               LCI_tag_t tag, uintptr_t remote_completion) LCI_NOEXCEPT;
/**
 * @brief `LCI_putma` with a local completion once sent.
 *
 * With a completion object the buffer stays the caller's, unmodified,
 * until `local_completion` is signalled.
 *
 * @param[in] ep                a live endpoint; not NULL.
 * @param[in] buffer            the message; `length` at most `LCI_MEDIUM_SIZE` (every build).
 * @param[in] rank              target, `0 ... LCI_NUM_PROCESSES-1`.
 * @param[in] tag               `0 ... LCI_MAX_TAG`.
 * @param[in] remote_completion the target's completion object, as for `LCI_puts`.
 * @param[in] local_completion  a live completion object of any kind, or
 *                              NULL.
 * @param[in] user_context      any value; returned in the local completion's `user_context`.
 *
 * @retval LCI_OK        the put started and will complete through `local_completion`.
 * @retval LCI_ERR_RETRY back-pressure: nothing was sent; call `LCI_progress` and retry.
 * @retval LCI_ERR_FATAL as for `LCI_putma`; `local_completion` is not a live completion object (debug
 *                       builds).
 *
 * @par Thread safety
 * Safe to call from any thread, on the same endpoint too.
 *
 * @see @concept{Message flow}, @concept{Buffer ownership}, @concept{Ports}
 */
LCI_API LCI_error_t LCI_putmac(LCI_endpoint_t ep, LCI_mbuffer_t buffer, int rank,
                               LCI_tag_t tag, uintptr_t remote_completion,
                               LCI_comp_t local_completion, void* user_context) LCI_NOEXCEPT;
/**
 * @brief Puts a medium message into memory the target registered; done at return.
 *
 * A put outside the target's registered memory is dropped at the target
 * with a warning.
 *
 * @param[in] ep                a live endpoint; not NULL.
 * @param[in] buffer            the message; `length` at most `LCI_MEDIUM_SIZE` (every build).
 * @param[in] rank              target, `0 ... LCI_NUM_PROCESSES-1`.
 * @param[in] tag               `0 ... LCI_MAX_TAG`.
 * @param[in] remote_buffer     address (in the target's address space) and capacity, at least
 *                              `buffer.length`, inside a segment the target registered.
 * @param[in] remote_completion the target's completion object, as for `LCI_puts`.
 *
 * @retval LCI_OK        sent; nothing to wait for at the origin.
 * @retval LCI_ERR_RETRY back-pressure: nothing was sent; call `LCI_progress` and retry.
 * @retval LCI_ERR_FATAL as for `LCI_putma`; `remote_buffer` cannot hold the message (debug
 *                       builds).
 *
 * @par Thread safety
 * Safe to call from any thread, on the same endpoint too.
 *
 * @see @concept{Message flow}, @concept{Buffer ownership}
 */
LCI_API LCI_error_t LCI_putm(LCI_endpoint_t ep, LCI_mbuffer_t buffer, int rank,
                             LCI_tag_t tag, LCI_mbuffer_t remote_buffer,
                             uintptr_t remote_completion) LCI_NOEXCEPT;
/**
 * @brief Same as `LCI_putm` (meant for LCI medium buffers).
 *
 * @param[in] ep                as for `LCI_putm`.
 * @param[in] buffer            as for `LCI_putm`.
 * @param[in] rank              as for `LCI_putm`.
 * @param[in] tag               as for `LCI_putm`.
 * @param[in] remote_buffer     as for `LCI_putm`.
 * @param[in] remote_completion as for `LCI_putm`.
 *
 * @retval LCI_OK        as for `LCI_putm`.
 * @retval LCI_ERR_RETRY as for `LCI_putm`.
 * @retval LCI_ERR_FATAL as for `LCI_putm`.
 *
 * @par Thread safety
 * Safe to call from any thread, on the same endpoint too.
 *
 * @see @concept{Message flow}
 */
LCI_API LCI_error_t LCI_putmn(LCI_endpoint_t ep, LCI_mbuffer_t buffer, int rank,
                              LCI_tag_t tag, LCI_mbuffer_t remote_buffer,
                              uintptr_t remote_completion) LCI_NOEXCEPT;
/**
 * @brief Puts a long message by rendezvous into an LCI long buffer the target allocates.
 *
 * The target's completion has type `LCI_LONG` and the buffer, which the
 * target then owns (`LCI_lbuffer_free`). The origin's buffer is LCI's until
 * the origin's completion, whose `flag` is `LCI_ERR_RETRY` when the target
 * could not allocate or register its buffer (nothing was delivered: put
 * again).
 *
 * @param[in] ep                a live endpoint; not NULL.
 * @param[in] buffer            the message, with a segment of `ep`'s device or
 *                              `LCI_SEGMENT_ALL`.
 * @param[in] completion        a live completion object of any kind, or
 *                              NULL.
 * @param[in] rank              target, `0 ... LCI_NUM_PROCESSES-1`.
 * @param[in] tag               `0 ... LCI_MAX_TAG`.
 * @param[in] remote_completion the target's completion object, as for `LCI_puts`.
 * @param[in] user_context      any value; returned in the origin's completion.
 *
 * @retval LCI_OK        the put started and will complete through `completion`.
 * @retval LCI_ERR_RETRY back-pressure (no packet is free, earlier refused operations wait in
 *                       the device's backlog, or an `LCI_SEGMENT_ALL` buffer could not be
 *                       registered): nothing was sent; call `LCI_progress` and retry.
 * @retval LCI_ERR_FATAL `ep` is NULL, `rank` is out of range or `tag` is over `LCI_MAX_TAG`
 *                       (every build), or `rank` is known to have failed; `ep` is not live,
 *                       the segment does not cover the buffer or `completion` is of the wrong
 *                       kind (debug builds).
 *
 * @par Thread safety
 * Safe to call from any thread, on the same endpoint too.
 *
 * @see @concept{Message flow}, @concept{Buffer ownership}
 */
LCI_API LCI_error_t LCI_putla(LCI_endpoint_t ep, LCI_lbuffer_t buffer, LCI_comp_t completion,
                              int rank, LCI_tag_t tag, uintptr_t remote_completion,
                              void* user_context) LCI_NOEXCEPT;
/**
 * @brief Writes a local buffer into a peer's registered memory by RDMA, then signals both
 *        sides.
 *
 * The local buffer is LCI's until `local_completion`. The target is
 * signalled (type `LCI_LONG`) once the data is there. A put outside the
 * peer's registered memory, or into memory it deregistered, completes with
 * `flag` `LCI_ERR_FATAL` and writes nothing.
 *
 * @param[in] ep                a live endpoint; not NULL.
 * @param[in] local_buffer      the data, with a segment of `ep`'s device or `LCI_SEGMENT_ALL`.
 * @param[in] local_completion  a live completion object of any kind, or
 *                              NULL.
 * @param[in] rank              target, `0 ... LCI_NUM_PROCESSES-1`.
 * @param[in] tag               `0 ... LCI_MAX_TAG`.
 * @param[in] remote_buffer     the peer's memory: `segment` a handle from
 *                              `LCI_segment_deserialize`, `address` and `length` (at least
 *                              `local_buffer.length`) inside it.
 * @param[in] remote_completion the target's completion object, as for `LCI_puts`.
 * @param[in] user_context      any value; returned in the local completion.
 *
 * @retval LCI_OK        the put started and will complete through `local_completion`.
 * @retval LCI_ERR_RETRY back-pressure (as for `LCI_putla`): nothing was sent; call
 *                       `LCI_progress` and retry.
 * @retval LCI_ERR_FATAL `ep` is NULL, `rank` is out of range or `tag` is over `LCI_MAX_TAG`
 *                       (every build), or `rank` is known to have failed; a buffer or
 *                       `local_completion` does not meet the above (debug builds).
 *
 * @par Thread safety
 * Safe to call from any thread, on the same endpoint too.
 *
 * @see @concept{Message flow}, @concept{Buffer ownership}
 */
LCI_API LCI_error_t LCI_putl(LCI_endpoint_t ep, LCI_lbuffer_t local_buffer,
                             LCI_comp_t local_completion, int rank, LCI_tag_t tag,
                             LCI_lbuffer_t remote_buffer, uintptr_t remote_completion,
                             void* user_context) LCI_NOEXCEPT;
/**
 * @brief Reads a peer's registered memory into a local buffer by RDMA, then signals both
 *        sides.
 *
 * The local buffer is LCI's until `local_completion`, which reports it
 * filled. A get outside the peer's registered memory completes with `flag`
 * `LCI_ERR_FATAL` and reads nothing.
 *
 * @param[in] ep                a live endpoint; not NULL.
 * @param[in] local_buffer      the destination (with a segment of `ep`'s device or
 *                              `LCI_SEGMENT_ALL`) of at least `length` bytes; not NULL.
 * @param[in] length            bytes to read, at most each buffer's `length`.
 * @param[in] local_completion  a live completion object of any kind, or
 *                              NULL.
 * @param[in] rank              target, `0 ... LCI_NUM_PROCESSES-1`.
 * @param[in] tag               `0 ... LCI_MAX_TAG`.
 * @param[in] remote_buffer     the peer's memory, as for `LCI_putl`.
 * @param[in] remote_completion the target's completion object, as for `LCI_puts`.
 * @param[in] user_context      any value; returned in the local completion.
 *
 * @retval LCI_OK        the get started and will complete through `local_completion`.
 * @retval LCI_ERR_RETRY back-pressure (as for `LCI_putla`): nothing was read; call
 *                       `LCI_progress` and retry.
 * @retval LCI_ERR_FATAL as for `LCI_putl`.
 *
 * @par Thread safety
 * Safe to call from any thread, on the same endpoint too.
 *
 * @see @concept{Message flow}, @concept{Buffer ownership}
 */
LCI_API LCI_error_t LCI_getl(LCI_endpoint_t ep, LCI_lbuffer_t* local_buffer, size_t length,
                             LCI_comp_t local_completion, int rank, LCI_tag_t tag,
                             LCI_lbuffer_t remote_buffer, uintptr_t remote_completion,
                             void* user_context) LCI_NOEXCEPT;
/**
 * @brief Puts an I/O vector by rendezvous into buffers the target allocates.
 *
 * `LCI_putla` for I/O vectors: the target's completion has type
 * `LCI_IOVEC` with buffers it then owns; the origin's long buffers and
 * their array are LCI's until the origin's completion (its `flag` as for
 * `LCI_putla`).
 *
 * @param[in] ep                a live endpoint; not NULL.
 * @param[in] iovec             as for `LCI_sendv`.
 * @param[in] completion        a live completion object of any kind, or
 *                              NULL.
 * @param[in] rank              target, `0 ... LCI_NUM_PROCESSES-1`.
 * @param[in] tag               `0 ... LCI_MAX_TAG`.
 * @param[in] remote_completion the target's completion object, as for `LCI_puts`.
 * @param[in] user_context      any value; returned in the origin's completion.
 *
 * @retval LCI_OK        the put started and will complete through `completion`.
 * @retval LCI_ERR_RETRY back-pressure (as for `LCI_putla`): nothing was sent; call
 *                       `LCI_progress` and retry.
 * @retval LCI_ERR_FATAL as for `LCI_sendv`.
 *
 * @par Thread safety
 * Safe to call from any thread, on the same endpoint too.
 *
 * @see @concept{Message flow}, @concept{Buffer ownership}
 */
LCI_API LCI_error_t LCI_putva(LCI_endpoint_t ep, LCI_iovec_t iovec, LCI_comp_t completion,
                              int rank, LCI_tag_t tag, uintptr_t remote_completion,
                              void* user_context) LCI_NOEXCEPT;
/**
 * @brief `LCI_putl` for I/O vectors: writes each local buffer into the corresponding remote
 *        one.
 *
 * @param[in] ep                a live endpoint; not NULL.
 * @param[in] local_iovec       the data; its buffers and array are LCI's until
 *                              `local_completion`.
 * @param[in] local_completion  a live completion object of any kind, or
 *                              NULL.
 * @param[in] rank              target, `0 ... LCI_NUM_PROCESSES-1`.
 * @param[in] tag               `0 ... LCI_MAX_TAG`.
 * @param[in] remote_iovec      the peer's memory: the same `count`, each buffer as for
 *                              `LCI_putl`'s `remote_buffer`.
 * @param[in] remote_completion the target's completion object, as for `LCI_puts`.
 * @param[in] user_context      any value; returned in the local completion.
 *
 * @retval LCI_OK        the put started and will complete through `local_completion`.
 * @retval LCI_ERR_RETRY back-pressure (as for `LCI_putla`): nothing was sent; call
 *                       `LCI_progress` and retry.
 * @retval LCI_ERR_FATAL as for `LCI_putl`; the counts differ (debug builds).
 *
 * @par Thread safety
 * Safe to call from any thread, on the same endpoint too.
 *
 * @see @concept{Message flow}, @concept{Buffer ownership}
 */
LCI_API LCI_error_t LCI_putv(LCI_endpoint_t ep, LCI_iovec_t local_iovec,
                             LCI_comp_t local_completion, int rank, LCI_tag_t tag,
                             LCI_iovec_t remote_iovec, uintptr_t remote_completion,
                             void* user_context) LCI_NOEXCEPT;
/**
 * @brief `LCI_getl` for I/O vectors: reads each remote buffer into the corresponding local
 *        one.
 *
 * The remote lengths say how much is read; the completion reports
 * `local_iovec` as passed.
 *
 * @param[in] ep                a live endpoint; not NULL.
 * @param[in] local_iovec       the destination: the same `count`, each buffer at least as
 *                              long as its remote one, a piggy-back at least as long as the
 *                              remote one. LCI's until `local_completion`.
 * @param[in] local_completion  a live completion object of any kind, or
 *                              NULL.
 * @param[in] rank              target, `0 ... LCI_NUM_PROCESSES-1`.
 * @param[in] tag               `0 ... LCI_MAX_TAG`.
 * @param[in] remote_iovec      the peer's memory, as for `LCI_putv`.
 * @param[in] remote_completion the target's completion object, as for `LCI_puts`.
 * @param[in] user_context      any value; returned in the local completion.
 *
 * @retval LCI_OK        the get started and will complete through `local_completion`.
 * @retval LCI_ERR_RETRY back-pressure (as for `LCI_putla`): nothing was read; call
 *                       `LCI_progress` and retry.
 * @retval LCI_ERR_FATAL as for `LCI_putv`.
 *
 * @par Thread safety
 * Safe to call from any thread, on the same endpoint too.
 *
 * @see @concept{Message flow}, @concept{Buffer ownership}
 */
LCI_API LCI_error_t LCI_getv(LCI_endpoint_t ep, LCI_iovec_t local_iovec,
                             LCI_comp_t local_completion, int rank, LCI_tag_t tag,
                             LCI_iovec_t remote_iovec, uintptr_t remote_completion,
                             void* user_context) LCI_NOEXCEPT;

/** @} */

/* ---- Bulk completion and progress ---------------------------------------- */

/** @addtogroup lci_completion
 * @{ */

/**
 * @brief Blocks until every operation this process issued on an endpoint before the call
 *        is locally complete.
 *
 * Drives progress on the endpoint's device while it waits. The operations
 * counted are those with a local completion (sends and puts with a
 * completion, rendezvous, RDMA); sends done at return are complete already.
 *
 * @param[in] ep a live endpoint (debug builds check it).
 *
 * @retval LCI_OK        the operations are complete.
 * @retval LCI_ERR_FATAL `ep` is not a live endpoint (debug builds).
 *
 * @par Thread safety
 * Safe to call from any thread.
 *
 * @see @concept{Completion kinds}, @concept{Progress}
 */
LCI_API LCI_error_t LCI_fence_wait(LCI_endpoint_t ep) LCI_NOEXCEPT;
/**
 * @brief Global fence (collective over the endpoint's group).
 *
 * Returns when every operation issued on the k-th endpoints of all
 * processes before the fence is complete locally and at its target; ends
 * with a barrier. Drives progress while it waits.
 *
 * @param[in] ep a live endpoint (debug builds check it).
 *
 * @retval LCI_OK        every process's operations are complete.
 * @retval LCI_ERR_FATAL `ep` is not a live endpoint (debug builds), or a peer is known to
 *                       have failed (`LCI_PEER_FAILURE=continue`): the fence did not wait for
 *                       it.
 *
 * @par Thread safety
 * One thread per endpoint group and process at a time.
 *
 * @see @concept{Completion kinds}, @concept{Progress}
 */
LCI_API LCI_error_t LCI_gfence_wait(LCI_endpoint_t ep) LCI_NOEXCEPT;

/** @} */

/** @addtogroup lci_devices
 * @{ */

/**
 * @brief One pass of a device's progress engine.
 *
 * Polls the network, delivers arrived messages, signals completions and
 * retries the backlog. Nothing completes on a device unless something
 * calls this (or a call documented to drive progress).
 *
 * @param[in] device a live device; not NULL (every build).
 *
 * @retval LCI_OK        the pass did some work.
 * @retval LCI_ERR_RETRY the device was idle, or another thread is progressing it.
 * @retval LCI_ERR_FATAL `device` is NULL (every build) or not live (debug builds).
 *
 * @par Thread safety
 * Safe to call from any number of threads; one of them progresses a device at
 * a time.
 *
 * @see @concept{Progress}, @concept{Devices}
 */
LCI_API LCI_error_t LCI_progress(LCI_device_t device) LCI_NOEXCEPT;

/** @} */

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

/** @addtogroup lci_completion
 * @{ */

/** How a waiting call spends its time (extension). */
typedef enum {
  LCIX_WAIT_THREADS = 0, ///< spin a few microseconds, then sleep on a futex (default)
  LCIX_WAIT_SPIN = 1,    ///< spin with backoff and `sched_yield`, never sleep
  LCIX_WAIT_FIBERS = 2,  ///< switch out a waiting LCIX fiber
  LCIX_WAIT_TBB = 3      ///< suspend a waiting oneTBB task
} LCIX_wait_policy_t;

/**
 * @brief Sets the process-wide waiting policy (extension).
 *
 * Applies to `LCI_queue_wait`, `LCI_queue_wait_multiple` and
 * `LCI_sync_wait` calls that start afterwards; a wait already blocked keeps
 * its policy.
 *
 * @param[in] policy an `LCIX_wait_policy_t`.
 *
 * @retval LCI_OK        the policy is set.
 * @retval LCI_ERR_FATAL `policy` is not an `LCIX_wait_policy_t` (every build).
 *
 * @par Thread safety
 * Safe to call from any thread, at any time, also before `LCI_initialize`.
 *
 * @see @concept{Threading}, @concept{Progress}
 */
LCI_API LCI_error_t LCIX_set_wait_policy(LCIX_wait_policy_t policy) LCI_NOEXCEPT;
/**
 * @brief The waiting policy in force (extension).
 *
 * @return the policy last set by `LCIX_set_wait_policy` or `LCI_WAIT_POLICY`, else
 *         `LCIX_WAIT_THREADS`.
 *
 * @par Thread safety
 * Safe to call from any thread, at any time.
 *
 * @see @concept{Threading}
 */
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
/**
 * @brief Starts a fiber pool (extension).
 *
 * @param[in]  nthreads worker threads, at least 1.
 * @param[out] pool     receives the pool; not NULL. The caller owns it and frees it with
 *                      `LCIX_fiber_pool_free`.
 *
 * @retval LCI_OK        `*pool` is the new pool, its workers running.
 * @retval LCI_ERR_FATAL `pool` is NULL or `nthreads` is below 1 (every build), or the
 *                       threads or memory could not be had.
 *
 * @par Thread safety
 * Safe to call from any thread.
 *
 * @see @concept{Threading}
 */
LCI_API LCI_error_t LCIX_fiber_pool_create(int nthreads, LCIX_fiber_pool_t* pool) LCI_NOEXCEPT;
/**
 * @brief Makes a new fiber running `fn(arg)` ready (extension).
 *
 * @param[in] pool a live fiber pool; not NULL.
 * @param[in] fn   the fiber's function; not NULL. It runs to completion on a worker of the
 *                 pool.
 * @param[in] arg  passed to `fn`; the caller keeps it alive until `fn` is done with it.
 *
 * @retval LCI_OK        the fiber is ready.
 * @retval LCI_ERR_FATAL `pool` or `fn` is NULL (every build), or no memory for the fiber or
 *                       its stack.
 *
 * @par Thread safety
 * Safe to call from any thread, a fiber of the pool included.
 *
 * @see @concept{Threading}
 */
LCI_API LCI_error_t LCIX_fiber_spawn(LCIX_fiber_pool_t pool, void (*fn)(void*), void* arg)
    LCI_NOEXCEPT;
/**
 * @brief From a fiber: lets the other ready fibers of its pool run (extension).
 *
 * @retval LCI_OK        the fiber yielded and runs again.
 * @retval LCI_ERR_RETRY the caller is not a fiber; nothing happened.
 * @retval LCI_ERR_FATAL a C++ exception was raised inside the call.
 *
 * @par Thread safety
 * Safe to call from any thread; it has an effect only on a fiber.
 *
 * @see @concept{Threading}
 */
LCI_API LCI_error_t LCIX_fiber_yield(void) LCI_NOEXCEPT;
/**
 * @brief Blocks until every fiber spawned so far on a pool has returned (extension).
 *
 * @param[in] pool a live fiber pool; not NULL.
 *
 * @retval LCI_OK        every fiber spawned before the call has returned.
 * @retval LCI_ERR_FATAL `pool` is NULL (every build).
 *
 * @par Thread safety
 * Safe to call from any OS thread; not from a fiber of the same pool.
 *
 * @see @concept{Threading}
 */
LCI_API LCI_error_t LCIX_fiber_pool_join(LCIX_fiber_pool_t pool) LCI_NOEXCEPT;
/**
 * @brief Joins a fiber pool, stops its workers, frees it and sets `*pool` to NULL
 *        (extension).
 *
 * @param[in,out] pool the pool; neither `pool` nor `*pool` may be NULL.
 *
 * @retval LCI_OK        the pool is freed.
 * @retval LCI_ERR_FATAL `pool` or `*pool` is NULL (every build).
 *
 * @par Thread safety
 * From an OS thread, not a fiber of the pool; no other thread may use the pool
 * afterwards.
 *
 * @see @concept{Threading}
 */
LCI_API LCI_error_t LCIX_fiber_pool_free(LCIX_fiber_pool_t* pool) LCI_NOEXCEPT;

/** @} */

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

/** @addtogroup lci_collectives
 * @{ */

/** Opaque collective in progress. */
struct LCIX_collective_s;
/** Handle of a collective in progress; NULL once it completed. */
typedef struct LCIX_collective_s* LCIX_collective_t;
/** Reduction: folds `length` bytes at `src` into `dest`; must be commutative. */
typedef void (*LCI_op_t)(void* dest, const void* src, size_t length);

/**
 * @brief Advances a collective; sets `*coll` to NULL once it completed.
 *
 * Call it, together with `LCI_progress` on the endpoint's device, until
 * `*coll` is NULL; the collective's completion is then signalled.
 *
 * @param[in,out] coll the handle a start call stored; not NULL (debug builds). `*coll` NULL
 *                     (already complete) returns `LCI_OK` at once.
 *
 * @retval LCI_OK        the collective moved on, or completed (`*coll` is NULL).
 * @retval LCI_ERR_RETRY nothing could move: call `LCI_progress` and again.
 * @retval LCI_ERR_FATAL `coll` is NULL or `*coll` is not a live collective (debug builds).
 *
 * @par Thread safety
 * One thread per handle at a time.
 *
 * @see @concept{Progress}
 */
LCI_API LCI_error_t LCIX_coll_progress(LCIX_collective_t* coll) LCI_NOEXCEPT;
/**
 * @brief Starts a non-blocking barrier over all processes.
 *
 * Completes with type `LCI_MEDIUM`, rank -1, `tag`, an empty buffer and
 * `user_context`.
 *
 * @param[in]  ep           a live `LCI_MATCH_RANKTAG` endpoint; not NULL.
 * @param[in]  tag          `0 ... LCI_MAX_TAG`, the same on every process, carrying no
 *                          other traffic on `ep` until the collective completed here.
 * @param[in]  completion   a live completion object of any kind, or NULL.
 * @param[in]  user_context any value; returned in the completion.
 * @param[out] coll         receives the handle, or NULL if the collective is already
 *                          complete; not NULL (debug builds).
 *
 * @retval LCI_OK        started (or done); drive `*coll` with `LCIX_coll_progress`.
 * @retval LCI_ERR_FATAL `ep` is NULL or matches by tag only (every build); `ep` is not live,
 *                       `tag`, `completion` or `coll` is invalid (debug builds).
 *
 * @par Thread safety
 * Safe to call from any thread.
 *
 * @see @concept{Message flow}, @concept{Progress}
 */
LCI_API LCI_error_t LCIX_barrier(LCI_endpoint_t ep, LCI_tag_t tag, LCI_comp_t completion,
                                 void* user_context, LCIX_collective_t* coll) LCI_NOEXCEPT;
/**
 * @brief Starts a broadcast of a medium buffer from `root`.
 *
 * Completes with type `LCI_MEDIUM`, rank -1, `tag`, the buffer (holding
 * the root's data) and `user_context`. The buffer is LCI's until then.
 *
 * @param[in]  ep           a live `LCI_MATCH_RANKTAG` endpoint; not NULL.
 * @param[in]  buffer       the root's data, or where the others receive it; the same length
 *                          on every process, at most `LCI_MEDIUM_SIZE` (every build).
 * @param[in]  root         the sending process, `0 ... LCI_NUM_PROCESSES-1`, the same on
 *                          every process.
 * @param[in]  tag          as for `LCIX_barrier`.
 * @param[in]  completion   a live completion object of any kind, or NULL.
 * @param[in]  user_context any value; returned in the completion.
 * @param[out] coll         as for `LCIX_barrier`.
 *
 * @retval LCI_OK        started (or done); drive `*coll` with `LCIX_coll_progress`.
 * @retval LCI_ERR_FATAL `root` is out of range, `buffer.length` is over `LCI_MEDIUM_SIZE`,
 *                       `ep` is NULL or matches by tag only (every build); as for
 *                       `LCIX_barrier` (debug builds).
 *
 * @par Thread safety
 * Safe to call from any thread.
 *
 * @see @concept{Message flow}, @concept{Buffer ownership}
 */
LCI_API LCI_error_t LCIX_bcastm(LCI_endpoint_t ep, LCI_mbuffer_t buffer, int root,
                                LCI_tag_t tag, LCI_comp_t completion, void* user_context,
                                LCIX_collective_t* coll) LCI_NOEXCEPT;
/**
 * @brief Starts a broadcast of a long buffer from `root`.
 *
 * Completes with type `LCI_LONG`, rank -1, `tag`, the buffer and
 * `user_context`. The data moves by rendezvous; the buffer is LCI's until
 * the completion.
 *
 * @param[in]  ep           a live `LCI_MATCH_RANKTAG` endpoint; not NULL.
 * @param[in]  buffer       the root's data, or where the others receive it; the same length
 *                          on every process, with a segment that covers it or
 *                          `LCI_SEGMENT_ALL`.
 * @param[in]  root         the sending process, `0 ... LCI_NUM_PROCESSES-1`, the same on
 *                          every process.
 * @param[in]  tag          as for `LCIX_barrier`.
 * @param[in]  completion   a live completion object of any kind, or NULL.
 * @param[in]  user_context any value; returned in the completion.
 * @param[out] coll         as for `LCIX_barrier`.
 *
 * @retval LCI_OK        started (or done); drive `*coll` with `LCIX_coll_progress`.
 * @retval LCI_ERR_FATAL `root` is out of range, `ep` is NULL or matches by tag only (every
 *                       build); as for `LCIX_barrier`, or the segment does not cover the
 *                       buffer (debug builds).
 *
 * @par Thread safety
 * Safe to call from any thread.
 *
 * @see @concept{Message flow}, @concept{Buffer ownership}
 */
LCI_API LCI_error_t LCIX_bcastl(LCI_endpoint_t ep, LCI_lbuffer_t buffer, int root,
                                LCI_tag_t tag, LCI_comp_t completion, void* user_context,
                                LCIX_collective_t* coll) LCI_NOEXCEPT;
/**
 * @brief Starts an allreduce of a medium buffer with `op`.
 *
 * Completes with type `LCI_MEDIUM`, rank -1, `tag`, the buffer (holding the
 * reduction of every process's data) and `user_context`.
 *
 * @param[in]  ep           a live `LCI_MATCH_RANKTAG` endpoint; not NULL.
 * @param[in]  buffer       this process's data, replaced by the result; the same length on
 *                          every process, at most `LCI_MEDIUM_SIZE` (every build).
 * @param[in]  op           the reduction, commutative; not NULL (debug builds).
 * @param[in]  tag          as for `LCIX_barrier`.
 * @param[in]  completion   a live completion object of any kind, or NULL.
 * @param[in]  user_context any value; returned in the completion.
 * @param[out] coll         as for `LCIX_barrier`.
 *
 * @retval LCI_OK        started (or done); drive `*coll` with `LCIX_coll_progress`.
 * @retval LCI_ERR_RETRY no medium buffer is free for the sends: nothing started; call
 *                       `LCI_progress` and retry.
 * @retval LCI_ERR_FATAL `buffer.length` is over `LCI_MEDIUM_SIZE`, `ep` is NULL or matches
 *                       by tag only (every build); as for `LCIX_barrier`, or `op` is NULL
 *                       (debug builds).
 *
 * @par Thread safety
 * Safe to call from any thread.
 *
 * @see @concept{Message flow}, @concept{Back-pressure and LCI_ERR_RETRY}
 */
LCI_API LCI_error_t LCIX_allreducem(LCI_endpoint_t ep, LCI_mbuffer_t buffer, LCI_op_t op,
                                    LCI_tag_t tag, LCI_comp_t completion, void* user_context,
                                    LCIX_collective_t* coll) LCI_NOEXCEPT;
/**
 * @brief Starts an allreduce of a long buffer with `op`.
 *
 * Completes with type `LCI_LONG`, rank -1, `tag`, the buffer (holding the
 * reduction) and `user_context`. Scratch memory that cannot be allocated
 * ends the process with a message.
 *
 * @param[in]  ep           a live `LCI_MATCH_RANKTAG` endpoint; not NULL.
 * @param[in]  buffer       this process's data, replaced by the result; the same length on
 *                          every process, with a segment that covers it or
 *                          `LCI_SEGMENT_ALL`.
 * @param[in]  op           the reduction, commutative; not NULL (debug builds).
 * @param[in]  tag          as for `LCIX_barrier`.
 * @param[in]  completion   a live completion object of any kind, or NULL.
 * @param[in]  user_context any value; returned in the completion.
 * @param[out] coll         as for `LCIX_barrier`.
 *
 * @retval LCI_OK        started (or done); drive `*coll` with `LCIX_coll_progress`.
 * @retval LCI_ERR_FATAL `ep` is NULL or matches by tag only (every build); as for
 *                       `LCIX_barrier`, `op` is NULL or the segment does not cover the buffer
 *                       (debug builds).
 *
 * @par Thread safety
 * Safe to call from any thread.
 *
 * @see @concept{Message flow}, @concept{Buffer ownership}
 */
LCI_API LCI_error_t LCIX_allreducel(LCI_endpoint_t ep, LCI_lbuffer_t buffer, LCI_op_t op,
                                    LCI_tag_t tag, LCI_comp_t completion, void* user_context,
                                    LCIX_collective_t* coll) LCI_NOEXCEPT;

/** @} */

/* Configuration. LCIX_config_print writes every LCI_* setting to out
 * (stdout when NULL), one per line: name, effective value, where it came
 * from (default, environment, or derived from other settings) and a line of
 * help; the settings read by the bootstrap and those accepted without effect
 * (with the reason) follow in sections of their own. After LCI_initialize
 * it prints the values in force; before, it parses the environment the same
 * way without applying anything (a malformed value is printed as the
 * message LCI_initialize would stop with). */
/**
 * @brief Prints every LCI setting (name, value, source, help) (extension).
 *
 * @param[in] out an open stream, the caller's; NULL prints to stdout.
 *
 * @par Thread safety
 * Safe to call from any thread, at any time, also before `LCI_initialize`.
 *
 * @see @concept{Errors and failures}
 * @ingroup lci_init
 */
LCI_API void LCIX_config_print(FILE* out) LCI_NOEXCEPT;

/* Transports. A device reaches the ranks of its own host through LCI's
 * native shared-memory transport (unless LCI_SHM=0) and the others through
 * the network backend. LCIX_transport_of tells which one carries the
 * device's traffic to `rank` (LCIX_TRANSPORT_NETWORK for a rank outside the
 * job); LCIX_transport_counts how many messages the device has received
 * through each since it was created (LCI's own protocol messages included;
 * data moved by RDMA or cross-memory copies is not a message). */

/** @addtogroup lci_devices
 * @{ */

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
/**
 * @brief Which transport carries a device's traffic to a rank (extension).
 *
 * @param[in] device a live device.
 * @param[in] rank   any value.
 *
 * @return `LCIX_TRANSPORT_NATIVE` when `rank` is on this host and the native transport
 *         serves it, else `LCIX_TRANSPORT_NETWORK` (also for a NULL `device`, a rank outside
 *         the job, or, in debug builds, a device that is not live).
 *
 * @par Thread safety
 * Safe to call from any thread.
 *
 * @see @concept{Devices}
 */
LCI_API LCIX_transport_t LCIX_transport_of(LCI_device_t device, int rank) LCI_NOEXCEPT;
/**
 * @brief Stores how many messages a device received through each transport (extension).
 *
 * @param[in]  device a live device; not NULL (every build).
 * @param[out] counts receives the counts; not NULL (debug builds).
 *
 * @retval LCI_OK        `*counts` is set.
 * @retval LCI_ERR_FATAL `device` is NULL (every build); not live, or `counts` is NULL (debug
 *                       builds).
 *
 * @par Thread safety
 * Safe to call from any thread.
 *
 * @see @concept{Devices}
 */
LCI_API LCI_error_t LCIX_transport_counts(LCI_device_t device, LCIX_transport_counts_t* counts)
    LCI_NOEXCEPT;

/** @} */

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

/** @addtogroup lci_failures
 * @{ */

/**
 * @brief Tells whether a rank is known to have failed (extension).
 *
 * @param[in] rank any value.
 *
 * @return 1 once `rank` is known to have failed (`LCI_PEER_FAILURE=continue`), else 0.
 *
 * @par Thread safety
 * Safe to call from any thread.
 *
 * @see @concept{Errors and failures}
 */
LCI_API int LCIX_peer_failed(int rank) LCI_NOEXCEPT;
/**
 * @brief Registers a function run once per failed peer (extension).
 *
 * `fn` runs inside `LCI_progress` with the failed rank and `ctx`; ranks that
 * failed before the call are reported too. It replaces the function
 * registered before.
 *
 * @param[in] fn  the function, or NULL to register none.
 * @param[in] ctx passed to `fn`; the caller keeps it alive while `fn` is registered.
 *
 * @retval LCI_OK        `fn` is registered.
 * @retval LCI_ERR_FATAL LCI is not initialized (every build).
 *
 * @par Thread safety
 * Safe to call from any thread.
 *
 * @see @concept{Errors and failures}
 */
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
/**
 * @brief Writes this rank's LCI state (operations in flight, posted receives, backlog,
 *        rings) (extension).
 *
 * @param[in] out an open stream, the caller's; NULL prints to stderr (debug builds return
 *                `LCI_ERR_FATAL` instead).
 *
 * @retval LCI_OK        the state is written.
 * @retval LCI_ERR_FATAL LCI is not initialized (every build, with a warning); `out` is NULL
 *                       (debug builds).
 *
 * @par Thread safety
 * Safe to call from any thread while others communicate.
 *
 * @see @concept{Errors and failures}
 */
LCI_API LCI_error_t LCIX_dump_state(FILE* out) LCI_NOEXCEPT;

/** @} */

#ifdef __cplusplus
}
#endif

#endif /* LCI_H */

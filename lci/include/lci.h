/*
 * lci.h - the Lightweight Communication Interface, version 1.7 C API.
 *
 * Source compatible with programs written for LCI 1.7.x. See docs/API.md in
 * the project documentation for the semantics of every call.
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

#define LCI_API __attribute__((visibility("default")))

/* In C++ (C++11 and later) every function of this header is noexcept: no
 * C++ exception leaves LCI. One raised inside a call is reported by a line
 * naming the call and LCI_ERR_FATAL, or, for a function without an
 * LCI_error_t result, ends the process with that line. Expands to nothing
 * in C. */
#if defined(__cplusplus) && __cplusplus >= 201103L
#define LCI_NOEXCEPT noexcept
#else
#define LCI_NOEXCEPT
#endif

/* ---- 1. Errors ---------------------------------------------------------- */

typedef enum {
  LCI_OK = 0,
  LCI_ERR_RETRY,       /* 1: back-pressure, the call had no effect */
  LCI_ERR_RETRY_LOCK,  /* 2: never returned, kept for source compatibility */
  LCI_ERR_RETRY_NOMEM, /* 3: never returned, kept for source compatibility */
  LCI_ERR_FEATURE_NA,  /* 4 */
  LCI_ERR_FATAL,       /* 5 */
} LCI_error_t;

/* ---- 2. Types and constants --------------------------------------------- */

#define LCI_DEFAULT_COMP_REMOTE 0
#define LCI_SEGMENT_ALL NULL
#define LCI_RANK_ANY (-1)
#define LCI_SHORT_SIZE 32

typedef enum { LCI_MATCH_RANKTAG = 0, LCI_MATCH_TAG } LCI_match_t;
typedef enum { LCI_PORT_COMMAND = 0, LCI_PORT_MESSAGE = 1 } LCI_port_t;
typedef enum {
  LCI_COMPLETION_NONE = 0,
  LCI_COMPLETION_QUEUE,
  LCI_COMPLETION_HANDLER,
  LCI_COMPLETION_SYNC,
} LCI_comp_type_t;
typedef enum {
  LCI_IMMEDIATE = 0,
  LCI_MEDIUM,
  LCI_LONG,
  LCI_IOVEC
} LCI_data_type_t;
typedef enum { LCI_RDV_WRITE, LCI_RDV_WRITEIMM } LCI_rdv_protocol_t;
typedef enum {
  LCI_BACKEND_TRY_LOCK_SEND = 1,
  LCI_BACKEND_TRY_LOCK_RECV = 1 << 1,
  LCI_BACKEND_TRY_LOCK_POLL = 1 << 2,
  LCI_BACKEND_TRY_LOCK_GLOBAL = 1 << 3,
  LCI_BACKEND_LOCK_GLOBAL = 1 << 4,
  LCI_BACKEND_TRY_LOCK_MODE_MAX = 1 << 5,
} LCI_backend_try_lock_mode_t;
typedef enum {
  LCI_DEVICE_LOCK_MODE_NONE,
  LCI_DEVICE_LOCK_MODE_BLOCK,
  LCI_DEVICE_LOCK_MODE_TRY,
  LCI_DEVICE_LOCK_MODE_MAX,
} LCI_DEVICE_LOCK_MODE_t;

typedef uint32_t LCI_tag_t;
typedef void* LCI_comp_t;
struct LCII_mr_t;
typedef struct LCII_mr_t* LCI_segment_t;
struct LCI_device_s;
typedef struct LCI_device_s* LCI_device_t;
struct LCI_endpoint_s;
typedef struct LCI_endpoint_s* LCI_endpoint_t;
struct LCI_plist_s;
typedef struct LCI_plist_s* LCI_plist_t;
typedef LCI_segment_t LCI_reg_t;

struct LCI_lbuffer_t {
  LCI_segment_t segment;
  void* address;
  size_t length;
};
typedef struct LCI_lbuffer_t LCI_lbuffer_t;

struct LCI_mbuffer_t {
  void* address;
  size_t length;
};
typedef struct LCI_mbuffer_t LCI_mbuffer_t;

typedef union {
  char val[LCI_SHORT_SIZE];
} LCI_short_t;

struct LCI_iovec_t {
  LCI_mbuffer_t piggy_back;
  LCI_lbuffer_t* lbuffers;
  int count;
};
typedef struct LCI_iovec_t LCI_iovec_t;

typedef union {
  LCI_short_t immediate;
  LCI_mbuffer_t mbuffer;
  LCI_lbuffer_t lbuffer;
  LCI_iovec_t iovec;
} LCI_data_t;

typedef struct {
  LCI_error_t flag;
  int rank;
  LCI_tag_t tag;
  LCI_data_type_t type;
  LCI_data_t data;
  void* user_context;
} LCI_request_t;

typedef void (*LCI_handler_t)(LCI_request_t request);

/* ---- 3. Globals (set by LCI_initialize) ---------------------------------- */

extern LCI_API int LCI_NUM_PROCESSES;
extern LCI_API int LCI_RANK;
extern LCI_API int LCI_NUM_DEVICES;
extern LCI_API int LCI_MAX_ENDPOINTS;
extern LCI_API int LCI_MAX_TAG;
extern LCI_API int LCI_MEDIUM_SIZE;
extern LCI_API int LCI_IOVEC_SIZE;
extern LCI_API size_t LCI_MAX_SINGLE_MESSAGE_SIZE;
extern LCI_API int LCI_DEFAULT_TABLE_LENGTH;
extern LCI_API int LCI_MAX_TABLE_LENGTH;
extern LCI_API int LCI_DEFAULT_QUEUE_LENGTH;
extern LCI_API int LCI_MAX_QUEUE_LENGTH;
extern LCI_API int LCI_MAX_SYNC_LENGTH;
extern LCI_API LCI_device_t LCI_UR_DEVICE;
extern LCI_API LCI_endpoint_t LCI_UR_ENDPOINT;
extern LCI_API LCI_comp_t LCI_UR_CQ;

extern LCI_API int LCI_PACKET_RETURN_THRESHOLD, LCI_IBV_USE_ODP, LCI_TOUCH_LBUFFER,
    LCI_USE_DREG, LCI_IBV_USE_PREFETCH, LCI_PACKET_SIZE, LCI_SERVER_NUM_PKTS,
    LCI_SERVER_MAX_SENDS, LCI_SERVER_MAX_RECVS, LCI_SERVER_MAX_CQES,
    LCI_SEND_SLOW_DOWN_USEC, LCI_RECV_SLOW_DOWN_USEC, LCI_IBV_GID_IDX,
    LCI_IBV_FORCE_GID_AUTO_SELECT;
extern LCI_API bool LCI_IBV_ENABLE_EVENT_POLLING_THREAD, LCI_IBV_ENABLE_TD,
    LCI_ENABLE_PRG_NET_ENDPOINT, LCI_UCX_USE_TRY_LOCK, LCI_UCX_PROGRESS_FOCUSED,
    LCI_USE_GLOBAL_PACKET_POOL;
extern LCI_API LCI_rdv_protocol_t LCI_RDV_PROTOCOL;
extern LCI_API uint64_t LCI_BACKEND_TRY_LOCK_MODE, LCI_DEVICE_LOCK_MODE;

/* ---- Runtime ------------------------------------------------------------- */

LCI_API LCI_error_t LCI_initialize() LCI_NOEXCEPT;
LCI_API LCI_error_t LCI_initialized(int* flag) LCI_NOEXCEPT;
LCI_API LCI_error_t LCI_finalize() LCI_NOEXCEPT;
LCI_API LCI_error_t LCI_barrier() LCI_NOEXCEPT;

/* ---- Devices ------------------------------------------------------------- */

LCI_API LCI_error_t LCI_device_init(LCI_device_t* device_ptr) LCI_NOEXCEPT;
LCI_API LCI_error_t LCI_device_initx(LCI_device_t* device_ptr) LCI_NOEXCEPT;
LCI_API LCI_error_t LCI_device_free(LCI_device_t* device_ptr) LCI_NOEXCEPT;

/* ---- Property lists ------------------------------------------------------ */

LCI_API LCI_error_t LCI_plist_create(LCI_plist_t* plist_ptr) LCI_NOEXCEPT;
LCI_API LCI_error_t LCI_plist_free(LCI_plist_t* plist_ptr) LCI_NOEXCEPT;
LCI_API LCI_error_t LCI_plist_get(LCI_endpoint_t ep, LCI_plist_t* plist_ptr) LCI_NOEXCEPT;
LCI_API LCI_error_t LCI_plist_decode(LCI_plist_t plist, char* string) LCI_NOEXCEPT;
LCI_API LCI_error_t LCI_plist_set_match_type(LCI_plist_t plist, LCI_match_t match_type)
    LCI_NOEXCEPT;
LCI_API LCI_error_t LCI_plist_set_match(LCI_plist_t plist, LCI_match_t match_type) LCI_NOEXCEPT;
LCI_API LCI_error_t LCI_plist_set_comp_type(LCI_plist_t plist, LCI_port_t port,
                                            LCI_comp_type_t comp_type) LCI_NOEXCEPT;
LCI_API LCI_error_t LCI_plist_set_default_comp(LCI_plist_t plist, LCI_comp_t comp) LCI_NOEXCEPT;

/* ---- Endpoints ----------------------------------------------------------- */

LCI_API LCI_error_t LCI_endpoint_init(LCI_endpoint_t* ep_ptr, LCI_device_t device,
                                      LCI_plist_t plist) LCI_NOEXCEPT;
LCI_API LCI_error_t LCI_endpoint_free(LCI_endpoint_t* ep_ptr) LCI_NOEXCEPT;

/* ---- Memory registration and segments ------------------------------------ */

LCI_API LCI_error_t LCI_memory_register(LCI_device_t device, void* address, size_t length,
                                        LCI_segment_t* segment) LCI_NOEXCEPT;
LCI_API LCI_error_t LCI_memory_deregister(LCI_segment_t* segment) LCI_NOEXCEPT;
LCI_API LCI_error_t LCI_segment_serialize(LCI_segment_t segment, char* string) LCI_NOEXCEPT;
LCI_API LCI_error_t LCI_segment_deserialize(char* string, LCI_segment_t* segment) LCI_NOEXCEPT;

/* ---- Buffers ------------------------------------------------------------- */

LCI_API LCI_error_t LCI_mbuffer_alloc(LCI_device_t device, LCI_mbuffer_t* mbuffer) LCI_NOEXCEPT;
LCI_API LCI_error_t LCI_mbuffer_free(LCI_mbuffer_t mbuffer) LCI_NOEXCEPT;
LCI_API LCI_error_t LCI_lbuffer_alloc(LCI_device_t device, size_t size,
                                      LCI_lbuffer_t* lbuffer) LCI_NOEXCEPT;
LCI_API LCI_error_t LCI_lbuffer_memalign(LCI_device_t device, size_t size, size_t alignment,
                                         LCI_lbuffer_t* lbuffer) LCI_NOEXCEPT;
LCI_API LCI_error_t LCI_lbuffer_free(LCI_lbuffer_t lbuffer) LCI_NOEXCEPT;
LCI_API size_t LCI_get_iovec_piggy_back_size(int count) LCI_NOEXCEPT;

/* ---- Completion queue ---------------------------------------------------- */

LCI_API LCI_error_t LCI_queue_create(LCI_device_t device, LCI_comp_t* cq) LCI_NOEXCEPT;
LCI_API LCI_error_t LCI_queue_createx(LCI_device_t device, size_t max_length,
                                      LCI_comp_t* cq) LCI_NOEXCEPT;
LCI_API LCI_error_t LCI_queue_free(LCI_comp_t* cq) LCI_NOEXCEPT;
LCI_API LCI_error_t LCI_queue_pop(LCI_comp_t cq, LCI_request_t* request) LCI_NOEXCEPT;
LCI_API LCI_error_t LCI_queue_wait(LCI_comp_t cq, LCI_request_t* request) LCI_NOEXCEPT;
LCI_API LCI_error_t LCI_queue_pop_multiple(LCI_comp_t cq, size_t request_count,
                                           LCI_request_t* requests, size_t* return_count)
    LCI_NOEXCEPT;
LCI_API LCI_error_t LCI_queue_wait_multiple(LCI_comp_t cq, size_t request_count,
                                            LCI_request_t* requests) LCI_NOEXCEPT;
LCI_API LCI_error_t LCI_queue_len(LCI_comp_t cq, size_t* len) LCI_NOEXCEPT;

/* ---- Synchronizer -------------------------------------------------------- */

LCI_API LCI_error_t LCI_sync_create(LCI_device_t device, int threshold,
                                    LCI_comp_t* completion) LCI_NOEXCEPT;
LCI_API LCI_error_t LCI_sync_free(LCI_comp_t* completion) LCI_NOEXCEPT;
LCI_API LCI_error_t LCI_sync_signal(LCI_comp_t completion, LCI_request_t request) LCI_NOEXCEPT;
LCI_API LCI_error_t LCI_sync_wait(LCI_comp_t completion, LCI_request_t request[]) LCI_NOEXCEPT;
LCI_API LCI_error_t LCI_sync_test(LCI_comp_t completion, LCI_request_t request[]) LCI_NOEXCEPT;

/* ---- Handler ------------------------------------------------------------- */

LCI_API LCI_error_t LCI_handler_create(LCI_device_t device, LCI_handler_t handler,
                                       LCI_comp_t* completion) LCI_NOEXCEPT;

/* ---- Two-sided ----------------------------------------------------------- */

LCI_API LCI_error_t LCI_sends(LCI_endpoint_t ep, LCI_short_t src, int rank, LCI_tag_t tag)
    LCI_NOEXCEPT;
LCI_API LCI_error_t LCI_recvs(LCI_endpoint_t ep, int rank, LCI_tag_t tag,
                              LCI_comp_t completion, void* user_context) LCI_NOEXCEPT;
LCI_API LCI_error_t LCI_sendm(LCI_endpoint_t ep, LCI_mbuffer_t buffer, int rank,
                              LCI_tag_t tag) LCI_NOEXCEPT;
LCI_API LCI_error_t LCI_sendmn(LCI_endpoint_t ep, LCI_mbuffer_t buffer, int rank,
                               LCI_tag_t tag) LCI_NOEXCEPT;
LCI_API LCI_error_t LCI_sendmc(LCI_endpoint_t ep, LCI_mbuffer_t buffer, int rank,
                               LCI_tag_t tag, LCI_comp_t completion, void* user_context)
    LCI_NOEXCEPT;
LCI_API LCI_error_t LCI_recvm(LCI_endpoint_t ep, LCI_mbuffer_t buffer, int rank,
                              LCI_tag_t tag, LCI_comp_t completion, void* user_context)
    LCI_NOEXCEPT;
LCI_API LCI_error_t LCI_recvmn(LCI_endpoint_t ep, int rank, LCI_tag_t tag,
                               LCI_comp_t completion, void* user_context) LCI_NOEXCEPT;
LCI_API LCI_error_t LCI_sendl(LCI_endpoint_t ep, LCI_lbuffer_t buffer, int rank,
                              LCI_tag_t tag, LCI_comp_t completion, void* user_context)
    LCI_NOEXCEPT;
LCI_API LCI_error_t LCI_recvl(LCI_endpoint_t ep, LCI_lbuffer_t buffer, int rank,
                              LCI_tag_t tag, LCI_comp_t completion, void* user_context)
    LCI_NOEXCEPT;
LCI_API LCI_error_t LCI_sendv(LCI_endpoint_t ep, LCI_iovec_t iovec, int rank, LCI_tag_t tag,
                              LCI_comp_t completion, void* user_context) LCI_NOEXCEPT;
LCI_API LCI_error_t LCI_recvv(LCI_endpoint_t ep, LCI_iovec_t iovec, int rank, LCI_tag_t tag,
                              LCI_comp_t completion, void* user_context) LCI_NOEXCEPT;

/* ---- One-sided ----------------------------------------------------------- */

LCI_API LCI_error_t LCI_puts(LCI_endpoint_t ep, LCI_short_t src, int rank, LCI_tag_t tag,
                             uintptr_t remote_completion) LCI_NOEXCEPT;
LCI_API LCI_error_t LCI_putma(LCI_endpoint_t ep, LCI_mbuffer_t buffer, int rank,
                              LCI_tag_t tag, uintptr_t remote_completion) LCI_NOEXCEPT;
LCI_API LCI_error_t LCI_putmna(LCI_endpoint_t ep, LCI_mbuffer_t buffer, int rank,
                               LCI_tag_t tag, uintptr_t remote_completion) LCI_NOEXCEPT;
LCI_API LCI_error_t LCI_putmac(LCI_endpoint_t ep, LCI_mbuffer_t buffer, int rank,
                               LCI_tag_t tag, uintptr_t remote_completion,
                               LCI_comp_t local_completion, void* user_context) LCI_NOEXCEPT;
LCI_API LCI_error_t LCI_putm(LCI_endpoint_t ep, LCI_mbuffer_t buffer, int rank,
                             LCI_tag_t tag, LCI_mbuffer_t remote_buffer,
                             uintptr_t remote_completion) LCI_NOEXCEPT;
LCI_API LCI_error_t LCI_putmn(LCI_endpoint_t ep, LCI_mbuffer_t buffer, int rank,
                              LCI_tag_t tag, LCI_mbuffer_t remote_buffer,
                              uintptr_t remote_completion) LCI_NOEXCEPT;
LCI_API LCI_error_t LCI_putla(LCI_endpoint_t ep, LCI_lbuffer_t buffer, LCI_comp_t completion,
                              int rank, LCI_tag_t tag, uintptr_t remote_completion,
                              void* user_context) LCI_NOEXCEPT;
LCI_API LCI_error_t LCI_putl(LCI_endpoint_t ep, LCI_lbuffer_t local_buffer,
                             LCI_comp_t local_completion, int rank, LCI_tag_t tag,
                             LCI_lbuffer_t remote_buffer, uintptr_t remote_completion,
                             void* user_context) LCI_NOEXCEPT;
LCI_API LCI_error_t LCI_getl(LCI_endpoint_t ep, LCI_lbuffer_t* local_buffer, size_t length,
                             LCI_comp_t local_completion, int rank, LCI_tag_t tag,
                             LCI_lbuffer_t remote_buffer, uintptr_t remote_completion,
                             void* user_context) LCI_NOEXCEPT;
LCI_API LCI_error_t LCI_putva(LCI_endpoint_t ep, LCI_iovec_t iovec, LCI_comp_t completion,
                              int rank, LCI_tag_t tag, uintptr_t remote_completion,
                              void* user_context) LCI_NOEXCEPT;
LCI_API LCI_error_t LCI_putv(LCI_endpoint_t ep, LCI_iovec_t local_iovec,
                             LCI_comp_t local_completion, int rank, LCI_tag_t tag,
                             LCI_iovec_t remote_iovec, uintptr_t remote_completion,
                             void* user_context) LCI_NOEXCEPT;
LCI_API LCI_error_t LCI_getv(LCI_endpoint_t ep, LCI_iovec_t local_iovec,
                             LCI_comp_t local_completion, int rank, LCI_tag_t tag,
                             LCI_iovec_t remote_iovec, uintptr_t remote_completion,
                             void* user_context) LCI_NOEXCEPT;

/* ---- Bulk completion and progress ---------------------------------------- */

LCI_API LCI_error_t LCI_fence_wait(LCI_endpoint_t ep) LCI_NOEXCEPT;
LCI_API LCI_error_t LCI_gfence_wait(LCI_endpoint_t ep) LCI_NOEXCEPT;
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
typedef enum {
  LCIX_WAIT_THREADS = 0,
  LCIX_WAIT_SPIN = 1,
  LCIX_WAIT_FIBERS = 2,
  LCIX_WAIT_TBB = 3
} LCIX_wait_policy_t;

/* LCI_ERR_FATAL for a value outside the enumeration. */
LCI_API LCI_error_t LCIX_set_wait_policy(LCIX_wait_policy_t policy) LCI_NOEXCEPT;
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
typedef struct LCIX_fiber_pool_s* LCIX_fiber_pool_t;
LCI_API LCI_error_t LCIX_fiber_pool_create(int nthreads, LCIX_fiber_pool_t* pool) LCI_NOEXCEPT;
LCI_API LCI_error_t LCIX_fiber_spawn(LCIX_fiber_pool_t pool, void (*fn)(void*), void* arg)
    LCI_NOEXCEPT;
LCI_API LCI_error_t LCIX_fiber_yield(void) LCI_NOEXCEPT;
LCI_API LCI_error_t LCIX_fiber_pool_join(LCIX_fiber_pool_t pool) LCI_NOEXCEPT;
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
struct LCIX_collective_s;
typedef struct LCIX_collective_s* LCIX_collective_t;
typedef void (*LCI_op_t)(void* dest, const void* src, size_t length);

LCI_API LCI_error_t LCIX_coll_progress(LCIX_collective_t* coll) LCI_NOEXCEPT;
LCI_API LCI_error_t LCIX_barrier(LCI_endpoint_t ep, LCI_tag_t tag, LCI_comp_t completion,
                                 void* user_context, LCIX_collective_t* coll) LCI_NOEXCEPT;
LCI_API LCI_error_t LCIX_bcastm(LCI_endpoint_t ep, LCI_mbuffer_t buffer, int root,
                                LCI_tag_t tag, LCI_comp_t completion, void* user_context,
                                LCIX_collective_t* coll) LCI_NOEXCEPT;
LCI_API LCI_error_t LCIX_bcastl(LCI_endpoint_t ep, LCI_lbuffer_t buffer, int root,
                                LCI_tag_t tag, LCI_comp_t completion, void* user_context,
                                LCIX_collective_t* coll) LCI_NOEXCEPT;
LCI_API LCI_error_t LCIX_allreducem(LCI_endpoint_t ep, LCI_mbuffer_t buffer, LCI_op_t op,
                                    LCI_tag_t tag, LCI_comp_t completion, void* user_context,
                                    LCIX_collective_t* coll) LCI_NOEXCEPT;
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
LCI_API void LCIX_config_print(FILE* out) LCI_NOEXCEPT;

/* Transports. A device reaches the ranks of its own host through LCI's
 * native shared-memory transport (unless LCI_SHM=0) and the others through
 * the network backend. LCIX_transport_of tells which one carries the
 * device's traffic to `rank` (LCIX_TRANSPORT_NETWORK for a rank outside the
 * job); LCIX_transport_counts how many messages the device has received
 * through each since it was created (LCI's own protocol messages included;
 * data moved by RDMA or cross-memory copies is not a message). */
typedef enum {
  LCIX_TRANSPORT_NETWORK = 0,
  LCIX_TRANSPORT_NATIVE = 1
} LCIX_transport_t;
typedef struct {
  uint64_t native_received;
  uint64_t network_received;
} LCIX_transport_counts_t;
LCI_API LCIX_transport_t LCIX_transport_of(LCI_device_t device, int rank) LCI_NOEXCEPT;
LCI_API LCI_error_t LCIX_transport_counts(LCI_device_t device, LCIX_transport_counts_t* counts)
    LCI_NOEXCEPT;

#ifdef __cplusplus
}
#endif

#endif /* LCI_H */

/*
 * LCT: the companion utility library of LCI 1.7 (liblct).
 *
 * A C interface (C99 and C++ alike) to small tools that HPC programs built
 * on LCI, and LCI itself, share: a monotonic clock, logging and asserts,
 * per-thread performance counters, bounded MPMC queues, a thread barrier,
 * an argument parser, string helpers and the process-management bootstrap
 * (PMI). It is usable without LCI: call LCT_init() first and LCT_fina()
 * last. Every function is thread-safe unless its group says otherwise.
 *
 * Group contracts, where the short description below is not enough:
 *
 * Init (LCT_init/LCT_fina): reference-counted; the first LCT_init sets
 *   LCT_hostname and creates LCT_log_ctx_default (context name "lct", so its
 *   variables are LCT_LOG_LEVEL, LCT_LOG_OUTFILE, LCT_LOG_WHITELIST and
 *   LCT_LOG_BLACKLIST); the matching last LCT_fina frees it. LCT_rank is 0
 *   until LCT_set_rank (LCT_pmi_initialize and LCI_initialize set it).
 *
 * Time: LCT_now() reads CLOCK_MONOTONIC in nanoseconds; differences of two
 *   readings convert with LCT_time_to_*.
 *
 * Log: a context has a level (messages at or below it print), an output and
 *   optional tag filters. Each is the explicit argument of
 *   LCT_log_ctx_alloc when not NULL, else the environment variable
 *   <NAME>_LOG_LEVEL, <NAME>_LOG_OUTFILE, <NAME>_LOG_WHITELIST,
 *   <NAME>_LOG_BLACKLIST (<NAME> = ctx_name in upper case), else the
 *   default (default_log_level, stderr, no filters). A level is one of the
 *   names in log_levels_ (case-insensitive) or a number; an unknown one
 *   prints a warning and keeps the default. The output is "stderr",
 *   "stdout" or a file path in which every '%' becomes the rank (opened at
 *   the first message, truncated). Tag lists are comma-separated: with a
 *   whitelist only its tags print, a blacklist silences its tags. Each
 *   message is one line:
 *     "[<ctx>] <host>:<rank>:<tag> <message> (<file>:<line> in <func>)"
 *   (a trailing newline of the message is dropped). A NULL context (say,
 *   LCT_log_ctx_default before LCT_init) acts as level "warn" on stderr.
 *   LCT_Report_false_assert prints the expression, file:line, function and
 *   message to the context's output and to stderr when that differs, then
 *   calls abort().
 *
 * Pcounter: see LCT_pcounter_* below. Counters are registered by name (the
 *   same name gives the same handle); at most 256 per context and 1024
 *   threads (LCT_get_thread_id) per process; going past either aborts.
 *   add/start/end touch only the calling thread's slot (no lock).
 *   COUNTER: add() sums. TIMER: start()/end() (or startt/endt with given
 *   times) accumulate the duration and a count. TREND: add() sums like a
 *   counter; LCT_pcounter_record() appends a sample (time since the
 *   context's creation, total) of every TREND counter. LCT_pcounter_dump
 *   prints one line per counter: "<ctx>.<name> counter total=<n>",
 *   "<ctx>.<name> timer total_ns=<n> count=<n> avg_ns=<x>",
 *   "<ctx>.<name> trend total=<n> samples=<k> [(<s>,<n>) ...]".
 *
 * Queue: every LCT_queue_type_t is a bounded multi-producer multi-consumer
 *   FIFO of void* holding exactly `length` items. ARRAY_ATOMIC_FAA,
 *   ARRAY_ATOMIC_CAS, ARRAY_ATOMIC_BASIC, ARRAY_ST, MS, LCRQ, LPRQ,
 *   FAAARRAY and LAZY_INDEX map to one lock-free ring with a sequence
 *   number per slot (producers and consumers claim positions with CAS);
 *   ARRAY_MUTEX, STD and STD_MUTEX map to a ring behind a mutex. pop returns
 *   NULL when empty (so pushing NULL is not distinguishable from empty).
 *   push on a full queue prints "LCT_queue_push: queue full (capacity N)"
 *   and aborts (push returns nothing, so it cannot report a retry).
 *
 * Tbarrier: a reusable barrier of `nthreads` threads; each round every
 *   thread arrives once. arrive() returns the round number (the ticket);
 *   test(ticket) is true once all threads arrived in that round; wait spins
 *   (then yields) until then.
 *
 * Args parser: wraps getopt_long. add(name, has_arg, ptr) registers
 *   "--name": no_argument (0) stores 1, required_argument (1) takes
 *   "--name value" or "--name=value", optional_argument (2) takes only
 *   "--name=value" and stores 1 without one. Values are integers (strtol,
 *   any base prefix) or, with add_dict, dictionary keys (LCT_parse_arg with
 *   delimiter ",", so "a,b" ORs). An unknown option or a malformed value
 *   prints a message naming it to stderr and calls exit(1). Non-option
 *   arguments are left alone. print lists "--name value" for each option
 *   on stdout (verbose: one line each, with the dictionary key).
 *
 * Strings: LCT_str_replace_one/all return a malloc'ed string the caller
 *   frees (an empty `from` gives a copy). LCT_str_int_search looks up a key
 *   (case-insensitive), stores its value or default_val in *val and returns
 *   1 if found, 0 if not. LCT_parse_arg ORs the values of the keys in a
 *   list split at any character of `delimiter`; an unknown key is reported
 *   on stderr and ignored.
 *
 * Thread ids: LCT_get_thread_id numbers threads from 0 in the order they
 *   first ask; LCT_get_nthreads is how many have asked.
 *
 * Read file: LCT_read_file builds the file name printf-style, reads at most
 *   max-1 bytes into buffer, NUL-terminates and returns the count, or -1
 *   (errno set) when the file cannot be read or max is 0.
 *
 * PMI: LCT_pmi_initialize/finalize acquire/release the process's single
 *   connection to its launcher (lcrun, PMI-1, PMIx or a lone process),
 *   shared with LCI_initialize. Initialize sets LCT_rank. Keys and values
 *   have at most LCT_PMI_STRING_LIMIT characters (longer ones abort) and
 *   may hold any printable character, spaces included. getname copies the
 *   value `rank` published before the last LCT_pmi_barrier into `value`
 *   (LCT_PMI_STRING_LIMIT + 1 bytes); a missing key aborts the job.
 */
#ifndef LCT_H_
#define LCT_H_

#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

/* Strict C99 glibc headers leave HOST_NAME_MAX undefined; Linux's is 64. */
#ifndef HOST_NAME_MAX
#define HOST_NAME_MAX 64
#endif

#define LCT_API __attribute__((visibility("default")))

/* In C++ (C++11 and later) every function of this header is noexcept: an
 * error is reported by the function's result or ends the process with a
 * message naming the function, never by an exception. Expands to nothing
 * in C. */
#if defined(__cplusplus) && __cplusplus >= 201103L
#define LCT_NOEXCEPT noexcept
#else
#define LCT_NOEXCEPT
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Types ------------------------------------------------------------ */
typedef int64_t LCT_time_t; /* nanoseconds of a monotonic clock */
typedef struct {
  const char* key;
  int val;
} LCT_dict_str_int_t;
typedef void* LCT_log_ctx_t;
enum LCT_log_level_default_t {
  LCT_LOG_ERROR,
  LCT_LOG_WARN,
  LCT_LOG_DIAG,
  LCT_LOG_INFO,
  LCT_LOG_DEBUG,
  LCT_LOG_TRACE,
  LCT_LOG_MAX
};
typedef enum {
  LCT_PCOUNTER_NONE,
  LCT_PCOUNTER_COUNTER,
  LCT_PCOUNTER_TREND,
  LCT_PCOUNTER_TIMER
} LCT_pcounter_type_t;
typedef void* LCT_pcounter_ctx_t;
typedef struct {
  LCT_pcounter_type_t type;
  int idx;
} LCT_pcounter_handle_t;
typedef enum {
  LCT_QUEUE_ARRAY_ATOMIC_FAA,
  LCT_QUEUE_ARRAY_ATOMIC_CAS,
  LCT_QUEUE_ARRAY_ATOMIC_BASIC,
  LCT_QUEUE_ARRAY_ST,
  LCT_QUEUE_ARRAY_MUTEX,
  LCT_QUEUE_STD,
  LCT_QUEUE_STD_MUTEX,
  LCT_QUEUE_MS,
  LCT_QUEUE_LCRQ,
  LCT_QUEUE_LPRQ,
  LCT_QUEUE_FAAARRAY,
  LCT_QUEUE_LAZY_INDEX
} LCT_queue_type_t;
typedef struct LCT_queue_opaque_t* LCT_queue_t;
typedef void* LCT_args_parser_t;
typedef void* LCT_tbarrier_t;

#define LCT_PMI_STRING_LIMIT 255

/* ---- Globals ---------------------------------------------------------- */
extern LCT_API int LCT_rank;
extern LCT_API char LCT_hostname[HOST_NAME_MAX + 1];
extern LCT_API LCT_log_ctx_t LCT_log_ctx_default;

/* ---- Macros ----------------------------------------------------------- */
#define LCT_likely(x) __builtin_expect(!!(x), 1)
#define LCT_unlikely(x) __builtin_expect(!!(x), 0)

#define LCT_Assert(log_ctx, Expr, ...)                                                      \
  do {                                                                                      \
    if (LCT_unlikely(!(Expr)))                                                              \
      LCT_Report_false_assert(log_ctx, #Expr, __FILE__, __func__, __LINE__, __VA_ARGS__);   \
  } while (0)

#define LCT_Log(log_ctx, log_level, log_tag, ...)                                           \
  do {                                                                                      \
    if ((int)(log_level) <= LCT_log_get_level(log_ctx))                                     \
      LCT_Log_(log_ctx, log_level, log_tag, __FILE__, __func__, __LINE__, __VA_ARGS__);     \
  } while (0)

#define LCT_Warn(log_ctx, ...) LCT_Log(log_ctx, LCT_LOG_WARN, "warn", __VA_ARGS__)

#define LCT_Logv(log_ctx, log_level, log_tag, format, vargs)                                \
  do {                                                                                      \
    if ((int)(log_level) <= LCT_log_get_level(log_ctx))                                     \
      LCT_Logv_(log_ctx, log_level, log_tag, __FILE__, __func__, __LINE__, format, vargs);  \
  } while (0)

#ifdef LCT_DEBUG
#define LCT_DBG_Assert(...) LCT_Assert(__VA_ARGS__)
#define LCT_DBG_Log(...) LCT_Log(__VA_ARGS__)
#define LCT_DBG_Warn(...) LCT_Warn(__VA_ARGS__)
#else
#define LCT_DBG_Assert(...) \
  do {                      \
  } while (0)
#define LCT_DBG_Log(...) \
  do {                   \
  } while (0)
#define LCT_DBG_Warn(...) \
  do {                    \
  } while (0)
#endif

#define LCT_ASSERT_SAME_CACHE_LINE(p1, p2)                                                  \
  LCT_Assert(LCT_log_ctx_default, (uintptr_t)(p1) / 64 == (uintptr_t)(p2) / 64,             \
             "%p and %p are not in the same cache line", (const void*)(p1),                 \
             (const void*)(p2))
#define LCT_ASSERT_DIFF_CACHE_LINE(p1, p2)                                                  \
  LCT_Assert(LCT_log_ctx_default, (uintptr_t)(p1) / 64 != (uintptr_t)(p2) / 64,             \
             "%p and %p share a cache line", (const void*)(p1), (const void*)(p2))

/* ---- Init, rank ------------------------------------------------------- */
LCT_API void LCT_init(void) LCT_NOEXCEPT;
LCT_API void LCT_fina(void) LCT_NOEXCEPT;
LCT_API void LCT_set_rank(int rank) LCT_NOEXCEPT;
LCT_API int LCT_get_rank(void) LCT_NOEXCEPT;

/* ---- Time ------------------------------------------------------------- */
LCT_API LCT_time_t LCT_now(void) LCT_NOEXCEPT;
LCT_API double LCT_time_to_ns(LCT_time_t time) LCT_NOEXCEPT;
LCT_API double LCT_time_to_us(LCT_time_t time) LCT_NOEXCEPT;
LCT_API double LCT_time_to_ms(LCT_time_t time) LCT_NOEXCEPT;
LCT_API double LCT_time_to_s(LCT_time_t time) LCT_NOEXCEPT;

/* ---- Strings, dictionaries, thread ids -------------------------------- */
LCT_API const char* LCT_str_replace_one(const char* in, const char* from, const char* to)
    LCT_NOEXCEPT;
LCT_API const char* LCT_str_replace_all(const char* in, const char* from, const char* to)
    LCT_NOEXCEPT;
LCT_API int LCT_str_int_search(LCT_dict_str_int_t dict[], int count, const char* key,
                               int default_val, int* val) LCT_NOEXCEPT;
LCT_API uint64_t LCT_parse_arg(LCT_dict_str_int_t dict[], int count, const char* key,
                               const char* delimiter) LCT_NOEXCEPT;
LCT_API int LCT_get_thread_id(void) LCT_NOEXCEPT;
LCT_API int LCT_get_nthreads(void) LCT_NOEXCEPT;

/* ---- Log -------------------------------------------------------------- */
LCT_API LCT_log_ctx_t LCT_log_ctx_alloc(const char* const log_levels_[], int count,
                                        int default_log_level, const char* ctx_name,
                                        char* filename, char* log_level_str, char* whitelist,
                                        char* blacklist) LCT_NOEXCEPT;
LCT_API void LCT_log_ctx_free(LCT_log_ctx_t* log_ctx_p) LCT_NOEXCEPT;
LCT_API int LCT_log_get_level(LCT_log_ctx_t log_ctx) LCT_NOEXCEPT;
LCT_API void LCT_Report_false_assert(LCT_log_ctx_t log_ctx, const char* expr_str,
                                     const char* file, const char* func, int line,
                                     const char* format, ...) LCT_NOEXCEPT
    __attribute__((format(printf, 6, 7), noreturn));
LCT_API void LCT_Log_(LCT_log_ctx_t log_ctx, int log_level, const char* log_tag,
                      const char* file, const char* func, int line, const char* format, ...)
    LCT_NOEXCEPT __attribute__((format(printf, 7, 8)));
LCT_API void LCT_Logv_(LCT_log_ctx_t log_ctx, int log_level, const char* log_tag,
                       const char* file, const char* func, int line, const char* format,
                       va_list vargs) LCT_NOEXCEPT;
LCT_API void LCT_Log_flush(LCT_log_ctx_t log_ctx) LCT_NOEXCEPT;

/* ---- Performance counters --------------------------------------------- */
LCT_API LCT_pcounter_ctx_t LCT_pcounter_ctx_alloc(const char* ctx_name) LCT_NOEXCEPT;
LCT_API LCT_pcounter_handle_t LCT_pcounter_register(LCT_pcounter_ctx_t pcounter_ctx,
                                                    const char* name, LCT_pcounter_type_t type)
    LCT_NOEXCEPT;
LCT_API void LCT_pcounter_ctx_free(LCT_pcounter_ctx_t* pcounter_ctx) LCT_NOEXCEPT;
LCT_API void LCT_pcounter_add(LCT_pcounter_ctx_t pcounter_ctx, LCT_pcounter_handle_t handle,
                              int64_t val) LCT_NOEXCEPT;
LCT_API void LCT_pcounter_start(LCT_pcounter_ctx_t pcounter_ctx, LCT_pcounter_handle_t handle)
    LCT_NOEXCEPT;
LCT_API void LCT_pcounter_end(LCT_pcounter_ctx_t pcounter_ctx, LCT_pcounter_handle_t handle)
    LCT_NOEXCEPT;
LCT_API void LCT_pcounter_startt(LCT_pcounter_ctx_t pcounter_ctx, LCT_pcounter_handle_t handle,
                                 LCT_time_t time) LCT_NOEXCEPT;
LCT_API void LCT_pcounter_endt(LCT_pcounter_ctx_t pcounter_ctx, LCT_pcounter_handle_t handle,
                               LCT_time_t time) LCT_NOEXCEPT;
LCT_API void LCT_pcounter_record(LCT_pcounter_ctx_t pcounter_ctx) LCT_NOEXCEPT;
LCT_API void LCT_pcounter_dump(LCT_pcounter_ctx_t pcounter_ctx, FILE* out) LCT_NOEXCEPT;

/* ---- Queues ----------------------------------------------------------- */
LCT_API LCT_queue_t LCT_queue_alloc(LCT_queue_type_t type, size_t length) LCT_NOEXCEPT;
LCT_API void LCT_queue_free(LCT_queue_t* queue_p) LCT_NOEXCEPT;
LCT_API void LCT_queue_push(LCT_queue_t queue, void* val) LCT_NOEXCEPT;
LCT_API void* LCT_queue_pop(LCT_queue_t queue) LCT_NOEXCEPT;

/* ---- PMI -------------------------------------------------------------- */
LCT_API void LCT_pmi_initialize(void) LCT_NOEXCEPT;
LCT_API int LCT_pmi_initialized(void) LCT_NOEXCEPT;
LCT_API int LCT_pmi_get_rank(void) LCT_NOEXCEPT;
LCT_API int LCT_pmi_get_size(void) LCT_NOEXCEPT;
LCT_API void LCT_pmi_publish(char* key, char* value) LCT_NOEXCEPT;
LCT_API void LCT_pmi_getname(int rank, char* key, char* value) LCT_NOEXCEPT;
LCT_API void LCT_pmi_barrier(void) LCT_NOEXCEPT;
LCT_API void LCT_pmi_finalize(void) LCT_NOEXCEPT;

/* ---- Argument parser -------------------------------------------------- */
LCT_API LCT_args_parser_t LCT_args_parser_alloc(void) LCT_NOEXCEPT;
LCT_API void LCT_args_parser_free(LCT_args_parser_t parser) LCT_NOEXCEPT;
LCT_API void LCT_args_parser_add(LCT_args_parser_t parser, const char* name, int has_arg,
                                 int* ptr) LCT_NOEXCEPT;
LCT_API void LCT_args_parser_add_dict(LCT_args_parser_t parser, const char* name, int has_arg,
                                      int* ptr, LCT_dict_str_int_t dict[], int count) LCT_NOEXCEPT;
LCT_API void LCT_args_parser_parse(LCT_args_parser_t parser, int argc, char* argv[]) LCT_NOEXCEPT;
LCT_API void LCT_args_parser_print(LCT_args_parser_t parser, bool verbose) LCT_NOEXCEPT;

/* ---- Thread barrier --------------------------------------------------- */
LCT_API LCT_tbarrier_t LCT_tbarrier_alloc(int nthreads) LCT_NOEXCEPT;
LCT_API void LCT_tbarrier_free(LCT_tbarrier_t* tbarrier_p) LCT_NOEXCEPT;
LCT_API int64_t LCT_tbarrier_arrive(LCT_tbarrier_t tbarrier) LCT_NOEXCEPT;
LCT_API bool LCT_tbarrier_test(LCT_tbarrier_t tbarrier, int64_t ticket) LCT_NOEXCEPT;
LCT_API void LCT_tbarrier_wait(LCT_tbarrier_t tbarrier, int64_t ticket) LCT_NOEXCEPT;
LCT_API void LCT_tbarrier_arrive_and_wait(LCT_tbarrier_t tbarrier) LCT_NOEXCEPT;

/* ---- Files ------------------------------------------------------------ */
LCT_API ssize_t LCT_read_file(char* buffer, size_t max, const char* filename_fmt, ...) LCT_NOEXCEPT
    __attribute__((format(printf, 3, 4)));

#ifdef __cplusplus
}
#endif

#endif /* LCT_H_ */

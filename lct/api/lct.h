/**
 * @file lct.h
 * @brief LCT: the companion utility library of LCI 1.7 (liblct).
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
 *   `<NAME>_LOG_LEVEL`, `<NAME>_LOG_OUTFILE`, `<NAME>_LOG_WHITELIST`,
 *   `<NAME>_LOG_BLACKLIST` (`<NAME>` = ctx_name in upper case), else the
 *   default (default_log_level, stderr, no filters). A level is one of the
 *   names in log_levels_ (case-insensitive) or a number; an unknown one
 *   prints a warning and keeps the default. The output is "stderr",
 *   "stdout" or a file path in which the first '%' becomes the rank (opened
 *   at the first message, appended to). Tag filters are strings, as in
 *   1.7.9: with a whitelist a tag prints only if it is a substring of it; a
 *   tag that is a substring of the blacklist is silenced. Each message is
 *   one line, in 1.7.9's format:
 *     "<rank>:<host>:<pid>:<thread>:<file>:<func>:<line><<ctx>:<level>:<tag>> <message>"
 *   (ended by one newline whether or not the message has one). A NULL
 *   context (say, LCT_log_ctx_default before LCT_init) makes every log call
 *   print one warning and do nothing else, as in 1.7.9; LCT_log_get_level
 *   then returns 0. LCT_Report_false_assert prints
 *     "<rank>:<pid>:<thread>:<file>:<func>:<line><<ctx>:Assert failed: <expr>> <message>"
 *   to the context's output and to stderr when that differs, then calls
 *   abort() (1.7.9 throws a std::runtime_error, which through these C
 *   functions ends the process as well).
 *
 * Pcounter: as 1.7.9's. Each type has its own handle indices, from 0 in
 *   registration order; registering a name again makes another entry.
 *   Each entry keeps total, count, min and max of what it was given:
 *   COUNTER and TREND take add(); TIMER takes add() (one duration in
 *   nanoseconds, as HPX uses it) and start()/end() (or startt/endt with
 *   given times). NONE handles do nothing. A handle never registered, or of
 *   an unknown type, prints one warning per context and is ignored;
 *   start/end on a COUNTER or TREND handle abort. Updates touch only the
 *   calling thread's slot (no lock). LCT_pcounter_record() snapshots every
 *   TREND; LCT_pcounter_dump prints, then forgets the snapshots:
 *     `pcounter-summary: rank <r>, name <ctx>, total records <n>, total record time <ns> ns, total init time <ns> ns`
 *     `pcounter,<trend|counter|timer>,<rank>,<ctx>,<us>,<name>,<total>,<count>,<avg>,<min>,<max>`
 *   (`<us>`: microseconds since the first context was created; an entry with
 *   no value prints `...,<name>,,0,,`). LCT_PCOUNTER_AUTO_DUMP, _MODE,
 *   _RECORD_INTERVAL and _DUMP_ON_THE_FLY act as in 1.7.9 (see pcounter.cpp).
 *
 * Queue: every LCT_queue_type_t is a multi-producer multi-consumer FIFO
 *   of void*. ARRAY_ATOMIC_FAA, ARRAY_ATOMIC_CAS, ARRAY_ATOMIC_BASIC,
 *   ARRAY_ST, MS, LCRQ, LPRQ, FAAARRAY and LAZY_INDEX map to one lock-free
 *   ring with a sequence number per slot (producers and consumers claim
 *   positions with CAS); ARRAY_MUTEX, STD and STD_MUTEX map to a ring
 *   behind a mutex. As in 1.7.9, STD, STD_MUTEX, MS, LCRQ, LPRQ, FAAARRAY
 *   and LAZY_INDEX are unbounded (past `length` they grow); the ARRAY types
 *   hold `length` items, and a push past that warns once and grows too
 *   (1.7.9 would overwrite). pop returns
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
 *   (exactly; a NULL key finds a NULL entry), stores its value or default_val in *val and returns
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
/** Longest host name, where the C library leaves it undefined. */
#define HOST_NAME_MAX 64
#endif

/** Marks a symbol exported by liblct. */
#define LCT_API __attribute__((visibility("default")))

/* In C++ (C++11 and later) every function of this header is noexcept: an
 * error is reported by the function's result or ends the process with a
 * message naming the function, never by an exception. Expands to nothing
 * in C. */
#if defined(__cplusplus) && __cplusplus >= 201103L
/** `noexcept` in C++11 and later, nothing in C. */
#define LCT_NOEXCEPT noexcept
#else
/** `noexcept` in C++11 and later, nothing in C. */
#define LCT_NOEXCEPT
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Types ------------------------------------------------------------ */
/** Nanoseconds of a monotonic clock (`LCT_now`). */
typedef int64_t LCT_time_t;
/** One entry of a string-to-integer dictionary. */
typedef struct {
  const char* key; ///< the name (matched exactly, as in 1.7.9)
  int val;         ///< its value
} LCT_dict_str_int_t;
/** Handle of a log context. */
typedef void* LCT_log_ctx_t;
/** The default log levels; a message prints when its level is at or below the context's. */
enum LCT_log_level_default_t {
  LCT_LOG_ERROR, ///< errors
  LCT_LOG_WARN,  ///< warnings (the level of a NULL context)
  LCT_LOG_DIAG,  ///< diagnostics
  LCT_LOG_INFO,  ///< information
  LCT_LOG_DEBUG, ///< debugging
  LCT_LOG_TRACE, ///< tracing
  LCT_LOG_MAX    ///< one past the last level
};
/** Kind of a performance counter. */
typedef enum {
  LCT_PCOUNTER_NONE,    ///< no counter
  LCT_PCOUNTER_COUNTER, ///< add() sums
  LCT_PCOUNTER_TREND,   ///< add() sums; record() appends a sample
  LCT_PCOUNTER_TIMER    ///< start()/end() accumulate a duration and a count
} LCT_pcounter_type_t;
/** Handle of a performance-counter context. */
typedef void* LCT_pcounter_ctx_t;
/** Handle of one registered counter. */
typedef struct {
  LCT_pcounter_type_t type; ///< its kind
  int idx;                  ///< its index in the context
} LCT_pcounter_handle_t;
/** Queue kinds of LCT 1.7.9; each is a bounded MPMC FIFO of `void*` here. */
typedef enum {
  LCT_QUEUE_ARRAY_ATOMIC_FAA,   ///< lock-free ring
  LCT_QUEUE_ARRAY_ATOMIC_CAS,   ///< lock-free ring
  LCT_QUEUE_ARRAY_ATOMIC_BASIC, ///< lock-free ring
  LCT_QUEUE_ARRAY_ST,           ///< lock-free ring
  LCT_QUEUE_ARRAY_MUTEX,        ///< ring behind a mutex
  LCT_QUEUE_STD,                ///< ring behind a mutex
  LCT_QUEUE_STD_MUTEX,          ///< ring behind a mutex
  LCT_QUEUE_MS,                 ///< lock-free ring
  LCT_QUEUE_LCRQ,               ///< lock-free ring
  LCT_QUEUE_LPRQ,               ///< lock-free ring
  LCT_QUEUE_FAAARRAY,           ///< lock-free ring
  LCT_QUEUE_LAZY_INDEX          ///< lock-free ring
} LCT_queue_type_t;
/** Handle of a queue. */
typedef struct LCT_queue_opaque_t* LCT_queue_t;
/** Handle of an argument parser. */
typedef void* LCT_args_parser_t;
/** Handle of a thread barrier. */
typedef void* LCT_tbarrier_t;

/** Longest PMI key or value, in characters. */
#define LCT_PMI_STRING_LIMIT 255

/* ---- Globals ---------------------------------------------------------- */
extern LCT_API int LCT_rank; ///< this process's rank, 0 until `LCT_set_rank`
extern LCT_API char LCT_hostname[HOST_NAME_MAX + 1]; ///< host name, set by the first `LCT_init`
extern LCT_API LCT_log_ctx_t LCT_log_ctx_default;   ///< context "lct", from `LCT_init` to `LCT_fina`

/* ---- Macros ----------------------------------------------------------- */
/** Branch hint: `x` is usually true. */
#define LCT_likely(x) __builtin_expect(!!(x), 1)
/** Branch hint: `x` is usually false. */
#define LCT_unlikely(x) __builtin_expect(!!(x), 0)

/** Reports (`LCT_Report_false_assert`) and aborts when `Expr` is false; the rest is a printf
 * message. */
#define LCT_Assert(log_ctx, Expr, ...)                                                      \
  do {                                                                                      \
    if (LCT_unlikely(!(Expr)))                                                              \
      LCT_Report_false_assert(log_ctx, #Expr, __FILE__, __func__, __LINE__, __VA_ARGS__);   \
  } while (0)

/** Logs a printf message with a tag when `log_level` is at or below the context's level. */
#define LCT_Log(log_ctx, log_level, log_tag, ...)                                           \
  do {                                                                                      \
    if ((int)(log_level) <= LCT_log_get_level(log_ctx))                                     \
      LCT_Log_(log_ctx, log_level, log_tag, __FILE__, __func__, __LINE__, __VA_ARGS__);     \
  } while (0)

/** Logs a printf message at `LCT_LOG_WARN` with the tag "warn". */
#define LCT_Warn(log_ctx, ...) LCT_Log(log_ctx, LCT_LOG_WARN, "warn", __VA_ARGS__)

/** `LCT_Log` with a `va_list`. */
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
/** `LCT_Assert` in builds with `LCT_DEBUG`, nothing otherwise. */
#define LCT_DBG_Assert(...) \
  do {                      \
  } while (0)
/** `LCT_Log` in builds with `LCT_DEBUG`, nothing otherwise. */
#define LCT_DBG_Log(...) \
  do {                   \
  } while (0)
/** `LCT_Warn` in builds with `LCT_DEBUG`, nothing otherwise. */
#define LCT_DBG_Warn(...) \
  do {                    \
  } while (0)
#endif

/** Asserts that `p1` and `p2` lie in one 64-byte cache line. */
#define LCT_ASSERT_SAME_CACHE_LINE(p1, p2)                                                  \
  LCT_Assert(LCT_log_ctx_default, (uintptr_t)(p1) / 64 == (uintptr_t)(p2) / 64,             \
             "%p and %p are not in the same cache line", (const void*)(p1),                 \
             (const void*)(p2))
/** Asserts that `p1` and `p2` lie in different 64-byte cache lines. */
#define LCT_ASSERT_DIFF_CACHE_LINE(p1, p2)                                                  \
  LCT_Assert(LCT_log_ctx_default, (uintptr_t)(p1) / 64 != (uintptr_t)(p2) / 64,             \
             "%p and %p share a cache line", (const void*)(p1), (const void*)(p2))

/* ---- Init, rank ------------------------------------------------------- */
/** Initializes LCT (reference-counted): sets `LCT_hostname`, creates `LCT_log_ctx_default`. */
LCT_API void LCT_init(void) LCT_NOEXCEPT;
/** Undoes one `LCT_init`; the last frees `LCT_log_ctx_default`. */
LCT_API void LCT_fina(void) LCT_NOEXCEPT;
/** Sets `LCT_rank`, shown in log lines. */
LCT_API void LCT_set_rank(int rank) LCT_NOEXCEPT;
/** The value of `LCT_rank`. */
LCT_API int LCT_get_rank(void) LCT_NOEXCEPT;

/* ---- Time ------------------------------------------------------------- */
/** Reads the monotonic clock, in nanoseconds. */
LCT_API LCT_time_t LCT_now(void) LCT_NOEXCEPT;
/** Converts a time difference to nanoseconds. */
LCT_API double LCT_time_to_ns(LCT_time_t time) LCT_NOEXCEPT;
/** Converts a time difference to microseconds. */
LCT_API double LCT_time_to_us(LCT_time_t time) LCT_NOEXCEPT;
/** Converts a time difference to milliseconds. */
LCT_API double LCT_time_to_ms(LCT_time_t time) LCT_NOEXCEPT;
/** Converts a time difference to seconds. */
LCT_API double LCT_time_to_s(LCT_time_t time) LCT_NOEXCEPT;

/* ---- Strings, dictionaries, thread ids -------------------------------- */
/** Copy of `in` with the first `from` replaced by `to` (malloc'ed, the caller frees it). */
LCT_API const char* LCT_str_replace_one(const char* in, const char* from, const char* to)
    LCT_NOEXCEPT;
/** Copy of `in` with every `from` replaced by `to` (malloc'ed, the caller frees it). */
LCT_API const char* LCT_str_replace_all(const char* in, const char* from, const char* to)
    LCT_NOEXCEPT;
/** Looks `key` up in `dict`: stores its value (or `default_val`) in `*val`; returns 1 if found,
 * else 0. */
LCT_API int LCT_str_int_search(LCT_dict_str_int_t dict[], int count, const char* key,
                               int default_val, int* val) LCT_NOEXCEPT;
/** ORs the values of the keys listed in `key`, split at any character of `delimiter`. */
LCT_API uint64_t LCT_parse_arg(LCT_dict_str_int_t dict[], int count, const char* key,
                               const char* delimiter) LCT_NOEXCEPT;
/** This thread's number, from 0 in the order threads first ask. */
LCT_API int LCT_get_thread_id(void) LCT_NOEXCEPT;
/** How many threads have asked `LCT_get_thread_id`. */
LCT_API int LCT_get_nthreads(void) LCT_NOEXCEPT;

/* ---- Log -------------------------------------------------------------- */
/** Creates a log context named `ctx_name`; each NULL argument falls back to the environment, then
 * to the default. */
LCT_API LCT_log_ctx_t LCT_log_ctx_alloc(const char* const log_levels_[], int count,
                                        int default_log_level, const char* ctx_name,
                                        char* filename, char* log_level_str, char* whitelist,
                                        char* blacklist) LCT_NOEXCEPT;
/** Frees a log context and sets `*log_ctx_p` to NULL. */
LCT_API void LCT_log_ctx_free(LCT_log_ctx_t* log_ctx_p) LCT_NOEXCEPT;
/** The context's level (`LCT_LOG_WARN` for NULL). */
LCT_API int LCT_log_get_level(LCT_log_ctx_t log_ctx) LCT_NOEXCEPT;
/** Prints a failed assertion with its location and message, then aborts (used by `LCT_Assert`).
 *  With a NULL context it warns and returns, as 1.7.9's does (so it is not `noreturn`). */
LCT_API void LCT_Report_false_assert(LCT_log_ctx_t log_ctx, const char* expr_str,
                                     const char* file, const char* func, int line,
                                     const char* format, ...) LCT_NOEXCEPT
    __attribute__((format(printf, 6, 7)));
/** Prints one log line (used by `LCT_Log`). */
LCT_API void LCT_Log_(LCT_log_ctx_t log_ctx, int log_level, const char* log_tag,
                      const char* file, const char* func, int line, const char* format, ...)
    LCT_NOEXCEPT __attribute__((format(printf, 7, 8)));
/** Prints one log line from a `va_list` (used by `LCT_Logv`). */
LCT_API void LCT_Logv_(LCT_log_ctx_t log_ctx, int log_level, const char* log_tag,
                       const char* file, const char* func, int line, const char* format,
                       va_list vargs) LCT_NOEXCEPT;
/** Flushes the context's output. */
LCT_API void LCT_Log_flush(LCT_log_ctx_t log_ctx) LCT_NOEXCEPT;

/* ---- Performance counters --------------------------------------------- */
/** Creates a performance-counter context. */
LCT_API LCT_pcounter_ctx_t LCT_pcounter_ctx_alloc(const char* ctx_name) LCT_NOEXCEPT;
/** Registers a counter by name (the same name gives the same handle). */
LCT_API LCT_pcounter_handle_t LCT_pcounter_register(LCT_pcounter_ctx_t pcounter_ctx,
                                                    const char* name, LCT_pcounter_type_t type)
    LCT_NOEXCEPT;
/** Frees a counter context and sets `*pcounter_ctx` to NULL. */
LCT_API void LCT_pcounter_ctx_free(LCT_pcounter_ctx_t* pcounter_ctx) LCT_NOEXCEPT;
/** Adds `val` to this thread's slot of a COUNTER or TREND counter. */
LCT_API void LCT_pcounter_add(LCT_pcounter_ctx_t pcounter_ctx, LCT_pcounter_handle_t handle,
                              int64_t val) LCT_NOEXCEPT;
/** Starts timing a TIMER counter on this thread. */
LCT_API void LCT_pcounter_start(LCT_pcounter_ctx_t pcounter_ctx, LCT_pcounter_handle_t handle)
    LCT_NOEXCEPT;
/** Ends timing a TIMER counter on this thread. */
LCT_API void LCT_pcounter_end(LCT_pcounter_ctx_t pcounter_ctx, LCT_pcounter_handle_t handle)
    LCT_NOEXCEPT;
/** `LCT_pcounter_start` at the given time. */
LCT_API void LCT_pcounter_startt(LCT_pcounter_ctx_t pcounter_ctx, LCT_pcounter_handle_t handle,
                                 LCT_time_t time) LCT_NOEXCEPT;
/** `LCT_pcounter_end` at the given time. */
LCT_API void LCT_pcounter_endt(LCT_pcounter_ctx_t pcounter_ctx, LCT_pcounter_handle_t handle,
                               LCT_time_t time) LCT_NOEXCEPT;
/** Appends a sample of every TREND counter of the context. */
LCT_API void LCT_pcounter_record(LCT_pcounter_ctx_t pcounter_ctx) LCT_NOEXCEPT;
/** Prints one line per counter to `out`. */
LCT_API void LCT_pcounter_dump(LCT_pcounter_ctx_t pcounter_ctx, FILE* out) LCT_NOEXCEPT;

/* ---- Queues ----------------------------------------------------------- */
/** Creates a bounded MPMC queue of `length` items. */
LCT_API LCT_queue_t LCT_queue_alloc(LCT_queue_type_t type, size_t length) LCT_NOEXCEPT;
/** Frees a queue and sets `*queue_p` to NULL. */
LCT_API void LCT_queue_free(LCT_queue_t* queue_p) LCT_NOEXCEPT;
/** Appends `val`; aborts with a message when the queue is full. */
LCT_API void LCT_queue_push(LCT_queue_t queue, void* val) LCT_NOEXCEPT;
/** Takes the oldest item, or NULL when the queue is empty. */
LCT_API void* LCT_queue_pop(LCT_queue_t queue) LCT_NOEXCEPT;

/* ---- PMI -------------------------------------------------------------- */
/** Connects to the launcher (shared with `LCI_initialize`) and sets `LCT_rank`. */
LCT_API void LCT_pmi_initialize(void) LCT_NOEXCEPT;
/** 1 between `LCT_pmi_initialize` and `LCT_pmi_finalize`, else 0. */
LCT_API int LCT_pmi_initialized(void) LCT_NOEXCEPT;
/** This process's rank in the job. */
LCT_API int LCT_pmi_get_rank(void) LCT_NOEXCEPT;
/** Number of processes in the job. */
LCT_API int LCT_pmi_get_size(void) LCT_NOEXCEPT;
/** Publishes `key` = `value` (at most `LCT_PMI_STRING_LIMIT` characters each). */
LCT_API void LCT_pmi_publish(char* key, char* value) LCT_NOEXCEPT;
/** Copies the value `rank` published under `key` before the last barrier into `value`; a missing
 * key aborts. */
LCT_API void LCT_pmi_getname(int rank, char* key, char* value) LCT_NOEXCEPT;
/** Barrier over the job; makes published values visible. */
LCT_API void LCT_pmi_barrier(void) LCT_NOEXCEPT;
/** Releases the launcher connection. */
LCT_API void LCT_pmi_finalize(void) LCT_NOEXCEPT;

/* ---- Argument parser -------------------------------------------------- */
/** Creates an argument parser (over getopt_long). */
LCT_API LCT_args_parser_t LCT_args_parser_alloc(void) LCT_NOEXCEPT;
/** Frees an argument parser. */
LCT_API void LCT_args_parser_free(LCT_args_parser_t parser) LCT_NOEXCEPT;
/** Registers `--name` storing an integer in `*ptr` (`has_arg`: 0 none, 1 required, 2 optional). */
LCT_API void LCT_args_parser_add(LCT_args_parser_t parser, const char* name, int has_arg,
                                 int* ptr) LCT_NOEXCEPT;
/** Registers `--name` whose value is a list of keys of `dict`, ORed into `*ptr`. */
LCT_API void LCT_args_parser_add_dict(LCT_args_parser_t parser, const char* name, int has_arg,
                                      int* ptr, LCT_dict_str_int_t dict[], int count) LCT_NOEXCEPT;
/** Parses `argv`; an unknown option or malformed value prints a message and exits. */
LCT_API void LCT_args_parser_parse(LCT_args_parser_t parser, int argc, char* argv[]) LCT_NOEXCEPT;
/** Prints each option and its value on stdout (one line each when `verbose`). */
LCT_API void LCT_args_parser_print(LCT_args_parser_t parser, bool verbose) LCT_NOEXCEPT;

/* ---- Thread barrier --------------------------------------------------- */
/** Creates a reusable barrier of `nthreads` threads. */
LCT_API LCT_tbarrier_t LCT_tbarrier_alloc(int nthreads) LCT_NOEXCEPT;
/** Frees a thread barrier and sets `*tbarrier_p` to NULL. */
LCT_API void LCT_tbarrier_free(LCT_tbarrier_t* tbarrier_p) LCT_NOEXCEPT;
/** Arrives at the barrier; returns the round's ticket. */
LCT_API int64_t LCT_tbarrier_arrive(LCT_tbarrier_t tbarrier) LCT_NOEXCEPT;
/** True once every thread arrived in the round of `ticket`. */
LCT_API bool LCT_tbarrier_test(LCT_tbarrier_t tbarrier, int64_t ticket) LCT_NOEXCEPT;
/** Waits until every thread arrived in the round of `ticket`. */
LCT_API void LCT_tbarrier_wait(LCT_tbarrier_t tbarrier, int64_t ticket) LCT_NOEXCEPT;
/** Arrives and waits for the others. */
LCT_API void LCT_tbarrier_arrive_and_wait(LCT_tbarrier_t tbarrier) LCT_NOEXCEPT;

/* ---- Files ------------------------------------------------------------ */
/** Reads at most `max`-1 bytes of the file named printf-style into `buffer`; returns the count, or
 * -1. */
LCT_API ssize_t LCT_read_file(char* buffer, size_t max, const char* filename_fmt, ...) LCT_NOEXCEPT
    __attribute__((format(printf, 3, 4)));

#ifdef __cplusplus
}
#endif

#endif /* LCT_H_ */

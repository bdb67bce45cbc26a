/**
 * @file lct.h
 * @brief LCT: the companion utility library of LCI 1.7 (liblct).
 *
 * A C interface (C99 and C++ alike) to small tools that HPC programs built
 * on LCI, and LCI itself, share: a monotonic clock, logging and asserts,
 * per-thread performance counters, MPMC queues, a thread barrier,
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
 *   An ARRAY queue's first push past `length` prints "LCT LCT_queue_push:
 *   queue full (length N); it grows past its length (warned once)".
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
/**
 * @defgroup lct LCT (lct.h)
 * @brief The companion utility library of LCI 1.7 (liblct): time, logging, performance
 *        counters, queues, PMI, argument parser, thread barrier, strings, files.
 *
 * The contract of each group is in the description of lct.h.
 */
/** @defgroup lct_init Init and rank
 *  @ingroup lct
 *  @brief LCT_init, LCT_fina and the rank shown in log lines. */
/** @defgroup lct_time Time
 *  @ingroup lct
 *  @brief A monotonic clock in nanoseconds. */
/** @defgroup lct_strings Strings, dictionaries, thread ids
 *  @ingroup lct
 *  @brief String replacement, string-to-integer dictionaries, thread numbers. */
/** @defgroup lct_log Log
 *  @ingroup lct
 *  @brief Log contexts, log lines and asserts. */
/** @defgroup lct_pcounter Performance counters
 *  @ingroup lct
 *  @brief Per-thread counters, trends and timers. */
/** @defgroup lct_queue Queues
 *  @ingroup lct
 *  @brief Multi-producer multi-consumer FIFO queues of pointers. */
/** @defgroup lct_pmi PMI
 *  @ingroup lct
 *  @brief The launcher's key-value store and barrier. */
/** @defgroup lct_args Argument parser
 *  @ingroup lct
 *  @brief Long options over getopt_long. */
/** @defgroup lct_tbarrier Thread barrier
 *  @ingroup lct
 *  @brief A reusable barrier of a fixed number of threads. */
/** @defgroup lct_files Files
 *  @ingroup lct
 *  @brief Reading a small file. */
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
/** Nanoseconds of a monotonic clock (`LCT_now`).
 * @ingroup lct_time
 */
typedef int64_t LCT_time_t;
/** One entry of a string-to-integer dictionary.
 * @ingroup lct_strings
 */
typedef struct {
  const char* key; ///< the name (matched exactly, as in 1.7.9)
  int val;         ///< its value
} LCT_dict_str_int_t;
/** Handle of a log context.
 * @ingroup lct_log
 */
typedef void* LCT_log_ctx_t;
/** The default log levels; a message prints when its level is at or below the context's.
 * @ingroup lct_log
 */
enum LCT_log_level_default_t {
  LCT_LOG_ERROR, ///< errors
  LCT_LOG_WARN,  ///< warnings (the default level of `LCT_log_ctx_default`)
  LCT_LOG_DIAG,  ///< diagnostics
  LCT_LOG_INFO,  ///< information
  LCT_LOG_DEBUG, ///< debugging
  LCT_LOG_TRACE, ///< tracing
  LCT_LOG_MAX    ///< one past the last level
};
/** Kind of a performance counter.
 * @ingroup lct_pcounter
 */
typedef enum {
  LCT_PCOUNTER_NONE,    ///< no counter
  LCT_PCOUNTER_COUNTER, ///< add() sums
  LCT_PCOUNTER_TREND,   ///< add() sums; record() appends a sample
  LCT_PCOUNTER_TIMER    ///< start()/end() accumulate a duration and a count
} LCT_pcounter_type_t;
/** Handle of a performance-counter context.
 * @ingroup lct_pcounter
 */
typedef void* LCT_pcounter_ctx_t;
/** Handle of one registered counter.
 * @ingroup lct_pcounter
 */
typedef struct {
  LCT_pcounter_type_t type; ///< its kind
  int idx;                  ///< its index in the context
} LCT_pcounter_handle_t;
/** Queue kinds of LCT 1.7.9; each is an MPMC FIFO of `void*` here.
 * @ingroup lct_queue
 */
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
/** Handle of a queue.
 * @ingroup lct_queue
 */
typedef struct LCT_queue_opaque_t* LCT_queue_t;
/** Handle of an argument parser.
 * @ingroup lct_args
 */
typedef void* LCT_args_parser_t;
/** Handle of a thread barrier.
 * @ingroup lct_tbarrier
 */
typedef void* LCT_tbarrier_t;

/** Longest PMI key or value, in characters.
 * @ingroup lct_pmi
 */
#define LCT_PMI_STRING_LIMIT 255

/** @addtogroup lct_init
 * @{ */
/* ---- Globals ---------------------------------------------------------- */
extern LCT_API int LCT_rank; ///< this process's rank, 0 until `LCT_set_rank`
extern LCT_API char LCT_hostname[HOST_NAME_MAX + 1]; ///< host name, set by the first `LCT_init`
extern LCT_API LCT_log_ctx_t LCT_log_ctx_default;   ///< context "lct", from `LCT_init` to `LCT_fina`

/** @} */

/* ---- Macros ----------------------------------------------------------- */
/** Branch hint: `x` is usually true.
 * @ingroup lct_log
 */
#define LCT_likely(x) __builtin_expect(!!(x), 1)
/** Branch hint: `x` is usually false.
 * @ingroup lct_log
 */
#define LCT_unlikely(x) __builtin_expect(!!(x), 0)

/** Reports (`LCT_Report_false_assert`) and aborts when `Expr` is false; the rest is a printf
 * message.
 * @ingroup lct_log
 */
#define LCT_Assert(log_ctx, Expr, ...)                                                      \
  do {                                                                                      \
    if (LCT_unlikely(!(Expr)))                                                              \
      LCT_Report_false_assert(log_ctx, #Expr, __FILE__, __func__, __LINE__, __VA_ARGS__);   \
  } while (0)

/** Logs a printf message with a tag when `log_level` is at or below the context's level.
 * @ingroup lct_log
 */
#define LCT_Log(log_ctx, log_level, log_tag, ...)                                           \
  do {                                                                                      \
    if ((int)(log_level) <= LCT_log_get_level(log_ctx))                                     \
      LCT_Log_(log_ctx, log_level, log_tag, __FILE__, __func__, __LINE__, __VA_ARGS__);     \
  } while (0)

/** Logs a printf message at `LCT_LOG_WARN` with the tag "warn".
 * @ingroup lct_log
 */
#define LCT_Warn(log_ctx, ...) LCT_Log(log_ctx, LCT_LOG_WARN, "warn", __VA_ARGS__)

/** `LCT_Log` with a `va_list`.
 * @ingroup lct_log
 */
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

/** Asserts that `p1` and `p2` lie in one 64-byte cache line.
 * @ingroup lct_log
 */
#define LCT_ASSERT_SAME_CACHE_LINE(p1, p2)                                                  \
  LCT_Assert(LCT_log_ctx_default, (uintptr_t)(p1) / 64 == (uintptr_t)(p2) / 64,             \
             "%p and %p are not in the same cache line", (const void*)(p1),                 \
             (const void*)(p2))
/** Asserts that `p1` and `p2` lie in different 64-byte cache lines.
 * @ingroup lct_log
 */
#define LCT_ASSERT_DIFF_CACHE_LINE(p1, p2)                                                  \
  LCT_Assert(LCT_log_ctx_default, (uintptr_t)(p1) / 64 != (uintptr_t)(p2) / 64,             \
             "%p and %p share a cache line", (const void*)(p1), (const void*)(p2))

/* ---- Init, rank ------------------------------------------------------- */

/** @addtogroup lct_init
 * @{ */

/**
 * @brief Initializes LCT (reference-counted).
 *
 * The first call sets `LCT_hostname` and creates `LCT_log_ctx_default`
 * (context "lct"); later calls only count.
 *
 * @par Thread safety
 * Safe to call from any thread (a mutex orders it with `LCT_fina`).
 */
LCT_API void LCT_init(void) LCT_NOEXCEPT;
/**
 * @brief Undoes one `LCT_init`; the last frees `LCT_log_ctx_default`.
 *
 * A call without a matching `LCT_init` prints a line on stderr and does
 * nothing.
 *
 * @par Thread safety
 * Safe to call from any thread; no thread may use `LCT_log_ctx_default` after
 * the last call.
 */
LCT_API void LCT_fina(void) LCT_NOEXCEPT;
/**
 * @brief Sets `LCT_rank`, shown in log lines.
 *
 * @param[in] rank any value; `LCT_pmi_initialize` and `LCI_initialize` set the job's.
 *
 * @par Thread safety
 * A plain store: set it before other threads log.
 */
LCT_API void LCT_set_rank(int rank) LCT_NOEXCEPT;
/**
 * @brief The value of `LCT_rank`.
 *
 * @return `LCT_rank`: 0 until `LCT_set_rank`.
 *
 * @par Thread safety
 * Safe to call from any thread.
 */
LCT_API int LCT_get_rank(void) LCT_NOEXCEPT;

/** @} */

/* ---- Time ------------------------------------------------------------- */

/** @addtogroup lct_time
 * @{ */

/**
 * @brief Reads the monotonic clock (`CLOCK_MONOTONIC`).
 *
 * @return nanoseconds since an arbitrary start; only differences are meaningful.
 *
 * @par Thread safety
 * Safe to call from any thread.
 */
LCT_API LCT_time_t LCT_now(void) LCT_NOEXCEPT;
/**
 * @brief Converts a time difference to nanoseconds.
 *
 * @param[in] time a difference of two `LCT_now` readings.
 * @return `time` in nanoseconds.
 *
 * @par Thread safety
 * Safe to call from any thread.
 */
LCT_API double LCT_time_to_ns(LCT_time_t time) LCT_NOEXCEPT;
/**
 * @brief Converts a time difference to microseconds.
 *
 * @param[in] time a difference of two `LCT_now` readings.
 * @return `time` in microseconds.
 *
 * @par Thread safety
 * Safe to call from any thread.
 */
LCT_API double LCT_time_to_us(LCT_time_t time) LCT_NOEXCEPT;
/**
 * @brief Converts a time difference to milliseconds.
 *
 * @param[in] time a difference of two `LCT_now` readings.
 * @return `time` in milliseconds.
 *
 * @par Thread safety
 * Safe to call from any thread.
 */
LCT_API double LCT_time_to_ms(LCT_time_t time) LCT_NOEXCEPT;
/**
 * @brief Converts a time difference to seconds.
 *
 * @param[in] time a difference of two `LCT_now` readings.
 * @return `time` in seconds.
 *
 * @par Thread safety
 * Safe to call from any thread.
 */
LCT_API double LCT_time_to_s(LCT_time_t time) LCT_NOEXCEPT;

/** @} */

/* ---- Strings, dictionaries, thread ids -------------------------------- */

/** @addtogroup lct_strings
 * @{ */

/**
 * @brief Copy of a string with the first occurrence of `from` replaced by `to`.
 *
 * @param[in] in   a NUL-terminated string, the caller's.
 * @param[in] from the text to find; an empty one gives a plain copy.
 * @param[in] to   the replacement.
 * @return a new string from `malloc`, which the caller frees.
 *
 * @par Thread safety
 * Safe to call from any thread.
 */
LCT_API const char* LCT_str_replace_one(const char* in, const char* from, const char* to)
    LCT_NOEXCEPT;
/**
 * @brief Copy of a string with every occurrence of `from` replaced by `to`.
 *
 * @param[in] in   a NUL-terminated string, the caller's.
 * @param[in] from the text to find; an empty one gives a plain copy.
 * @param[in] to   the replacement.
 * @return a new string from `malloc`, which the caller frees.
 *
 * @par Thread safety
 * Safe to call from any thread.
 */
LCT_API const char* LCT_str_replace_all(const char* in, const char* from, const char* to)
    LCT_NOEXCEPT;
/**
 * @brief Looks a key up in a dictionary.
 *
 * Keys match exactly (case-sensitive); a NULL key finds a NULL entry.
 *
 * @param[in]  dict        an array of `count` entries.
 * @param[in]  count       number of entries.
 * @param[in]  key         the key to find, or NULL.
 * @param[in]  default_val stored in `*val` when the key is not found.
 * @param[out] val         receives the entry's value, or `default_val`; NULL: not stored.
 * @retval 1 the key was found.
 * @retval 0 it was not.
 *
 * @par Thread safety
 * Safe to call from any thread.
 */
LCT_API int LCT_str_int_search(LCT_dict_str_int_t dict[], int count, const char* key,
                               int default_val, int* val) LCT_NOEXCEPT;
/**
 * @brief ORs the values of the dictionary keys listed in a string.
 *
 * The list is split at any character of `delimiter`; blanks around a key
 * are ignored. An unknown key is reported on stderr and ignored.
 *
 * @param[in] dict      an array of `count` entries.
 * @param[in] count     number of entries.
 * @param[in] key       the list, e.g. "a,b"; NULL gives 0.
 * @param[in] delimiter the separator characters; NULL or empty means ",".
 * @return the OR of the values of the keys found.
 *
 * @par Thread safety
 * Safe to call from any thread.
 */
LCT_API uint64_t LCT_parse_arg(LCT_dict_str_int_t dict[], int count, const char* key,
                               const char* delimiter) LCT_NOEXCEPT;
/**
 * @brief This thread's number.
 *
 * @return a number from 0, in the order in which threads first ask; the same for a thread
 *         every time.
 *
 * @par Thread safety
 * Safe to call from any thread.
 */
LCT_API int LCT_get_thread_id(void) LCT_NOEXCEPT;
/**
 * @brief How many threads have asked `LCT_get_thread_id`.
 *
 * @return that count.
 *
 * @par Thread safety
 * Safe to call from any thread.
 */
LCT_API int LCT_get_nthreads(void) LCT_NOEXCEPT;

/** @} */

/* ---- Log -------------------------------------------------------------- */

/** @addtogroup lct_log
 * @{ */

/**
 * @brief Creates a log context.
 *
 * Each NULL setting falls back to the environment variable
 * `<NAME>_LOG_LEVEL`, `<NAME>_LOG_OUTFILE`, `<NAME>_LOG_WHITELIST` or
 * `<NAME>_LOG_BLACKLIST` (`<NAME>`: `ctx_name` in upper case), then to the
 * default (see the file description of lct.h). An unknown level prints a
 * warning and keeps `default_log_level`.
 *
 * @param[in] log_levels_       names of the levels, `count` of them (copied); NULL: none.
 * @param[in] count             number of names.
 * @param[in] default_log_level the level without a setting.
 * @param[in] ctx_name          the context's name (copied); NULL means "lct".
 * @param[in] filename          output: "stderr", "stdout" or a file path whose first '%'
 *                              becomes the rank; NULL: from the environment.
 * @param[in] log_level_str     level by name or number; NULL: from the environment.
 * @param[in] whitelist         tags to print; NULL: from the environment.
 * @param[in] blacklist         tags to silence; NULL: from the environment.
 * @return the new context; the caller frees it with `LCT_log_ctx_free`.
 *
 * @par Thread safety
 * Safe to call from any thread.
 */
LCT_API LCT_log_ctx_t LCT_log_ctx_alloc(const char* const log_levels_[], int count,
                                        int default_log_level, const char* ctx_name,
                                        char* filename, char* log_level_str, char* whitelist,
                                        char* blacklist) LCT_NOEXCEPT;
/**
 * @brief Frees a log context (closing its file) and sets `*log_ctx_p` to NULL.
 *
 * @param[in,out] log_ctx_p the context; NULL, or `*log_ctx_p` NULL, prints a warning and
 *                          does nothing.
 *
 * @par Thread safety
 * No other thread may use the context during or after the call.
 */
LCT_API void LCT_log_ctx_free(LCT_log_ctx_t* log_ctx_p) LCT_NOEXCEPT;
/**
 * @brief The level of a log context.
 *
 * @param[in] log_ctx a context, or NULL.
 * @return the context's level; 0 for NULL (after a warning).
 *
 * @par Thread safety
 * Safe to call from any thread.
 */
LCT_API int LCT_log_get_level(LCT_log_ctx_t log_ctx) LCT_NOEXCEPT;
/**
 * @brief Prints a failed assertion with its location and message, then aborts (used by
 *        `LCT_Assert`).
 *
 * The line goes to the context's output and, when that differs, to stderr.
 * With a NULL context it warns and returns, as 1.7.9's does (so it is not
 * `noreturn`).
 *
 * @param[in] log_ctx  the context, or NULL.
 * @param[in] expr_str the failed expression, as text.
 * @param[in] file     source file of the assertion.
 * @param[in] func     function of the assertion.
 * @param[in] line     line of the assertion.
 * @param[in] format   a printf format for the message, followed by its arguments.
 *
 * @par Thread safety
 * Safe to call from any thread.
 */
LCT_API void LCT_Report_false_assert(LCT_log_ctx_t log_ctx, const char* expr_str,
                                     const char* file, const char* func, int line,
                                     const char* format, ...) LCT_NOEXCEPT
    __attribute__((format(printf, 6, 7)));
/**
 * @brief Prints one log line (used by `LCT_Log`).
 *
 * Prints when `log_level` is at or below the context's level and the tag
 * passes the filters; the line ends with one newline.
 *
 * @param[in] log_ctx   the context; NULL prints a warning and nothing else.
 * @param[in] log_level the message's level.
 * @param[in] log_tag   the message's tag, or NULL.
 * @param[in] file      source file of the call.
 * @param[in] func      function of the call.
 * @param[in] line      line of the call.
 * @param[in] format    a printf format for the message, followed by its arguments.
 *
 * @par Thread safety
 * Safe to call from any thread; lines of concurrent threads never interleave.
 */
LCT_API void LCT_Log_(LCT_log_ctx_t log_ctx, int log_level, const char* log_tag,
                      const char* file, const char* func, int line, const char* format, ...)
    LCT_NOEXCEPT __attribute__((format(printf, 7, 8)));
/**
 * @brief Prints one log line from a `va_list` (used by `LCT_Logv`).
 *
 * @param[in] log_ctx   the context; NULL prints a warning and nothing else.
 * @param[in] log_level the message's level.
 * @param[in] log_tag   the message's tag, or NULL.
 * @param[in] file      source file of the call.
 * @param[in] func      function of the call.
 * @param[in] line      line of the call.
 * @param[in] format    a printf format for the message.
 * @param[in] vargs     its arguments.
 *
 * @par Thread safety
 * Safe to call from any thread; lines of concurrent threads never interleave.
 */
LCT_API void LCT_Logv_(LCT_log_ctx_t log_ctx, int log_level, const char* log_tag,
                       const char* file, const char* func, int line, const char* format,
                       va_list vargs) LCT_NOEXCEPT;
/**
 * @brief Flushes the output of a log context.
 *
 * @param[in] log_ctx the context; NULL prints a warning and does nothing.
 *
 * @par Thread safety
 * Safe to call from any thread.
 */
LCT_API void LCT_Log_flush(LCT_log_ctx_t log_ctx) LCT_NOEXCEPT;

/** @} */

/* ---- Performance counters --------------------------------------------- */

/** @addtogroup lct_pcounter
 * @{ */

/**
 * @brief Creates a performance-counter context.
 *
 * Reads `LCT_PCOUNTER_AUTO_DUMP`, `LCT_PCOUNTER_MODE`,
 * `LCT_PCOUNTER_RECORD_INTERVAL` and `LCT_PCOUNTER_DUMP_ON_THE_FLY`.
 *
 * @param[in] ctx_name the context's name (copied), printed by the dump; NULL means "".
 * @return the new context; the caller frees it with `LCT_pcounter_ctx_free`.
 *
 * @par Thread safety
 * Safe to call from any thread.
 */
LCT_API LCT_pcounter_ctx_t LCT_pcounter_ctx_alloc(const char* ctx_name) LCT_NOEXCEPT;
/**
 * @brief Registers a counter by name.
 *
 * Each type numbers its counters from 0 in registration order;
 * registering a name again makes another entry. Past 512 counters of a
 * type, or with an unknown type, it prints a line and returns a handle that
 * does nothing.
 *
 * @param[in] pcounter_ctx the context; not NULL (NULL aborts with a message).
 * @param[in] name         the counter's name (copied); not NULL.
 * @param[in] type         its kind; `LCT_PCOUNTER_NONE` gives a handle that does nothing.
 * @return the counter's handle.
 *
 * @par Thread safety
 * Safe to call from any thread.
 */
LCT_API LCT_pcounter_handle_t LCT_pcounter_register(LCT_pcounter_ctx_t pcounter_ctx,
                                                    const char* name, LCT_pcounter_type_t type)
    LCT_NOEXCEPT;
/**
 * @brief Frees a counter context (dumping it first under `LCT_PCOUNTER_AUTO_DUMP`) and sets
 *        `*pcounter_ctx` to NULL.
 *
 * @param[in,out] pcounter_ctx the context; NULL or `*pcounter_ctx` NULL does nothing.
 *
 * @par Thread safety
 * No other thread may use the context during or after the call.
 */
LCT_API void LCT_pcounter_ctx_free(LCT_pcounter_ctx_t* pcounter_ctx) LCT_NOEXCEPT;
/**
 * @brief Adds a value to this thread's slot of a COUNTER, TREND or TIMER counter.
 *
 * For a TIMER the value is one duration in nanoseconds.
 *
 * @param[in] pcounter_ctx the context the handle was registered in; not NULL.
 * @param[in] handle       a handle from `LCT_pcounter_register` (a NONE handle does nothing).
 * @param[in] val          the value.
 *
 * @par Thread safety
 * Safe to call from any thread; it touches only the calling thread's slot.
 */
LCT_API void LCT_pcounter_add(LCT_pcounter_ctx_t pcounter_ctx, LCT_pcounter_handle_t handle,
                              int64_t val) LCT_NOEXCEPT;
/**
 * @brief Starts timing a TIMER counter on this thread.
 *
 * @param[in] pcounter_ctx the context the handle was registered in; not NULL.
 * @param[in] handle       a TIMER handle (a COUNTER or TREND handle aborts).
 *
 * @par Thread safety
 * Safe to call from any thread; it touches only the calling thread's slot.
 */
LCT_API void LCT_pcounter_start(LCT_pcounter_ctx_t pcounter_ctx, LCT_pcounter_handle_t handle)
    LCT_NOEXCEPT;
/**
 * @brief Ends timing a TIMER counter on this thread, adding the duration since the start.
 *
 * @param[in] pcounter_ctx the context the handle was registered in; not NULL.
 * @param[in] handle       a TIMER handle (a COUNTER or TREND handle aborts).
 *
 * @par Thread safety
 * Safe to call from any thread; it touches only the calling thread's slot.
 */
LCT_API void LCT_pcounter_end(LCT_pcounter_ctx_t pcounter_ctx, LCT_pcounter_handle_t handle)
    LCT_NOEXCEPT;
/**
 * @brief `LCT_pcounter_start` at the given time.
 *
 * @param[in] pcounter_ctx the context the handle was registered in; not NULL.
 * @param[in] handle       a TIMER handle.
 * @param[in] time         the start, an `LCT_now` reading.
 *
 * @par Thread safety
 * Safe to call from any thread; it touches only the calling thread's slot.
 */
LCT_API void LCT_pcounter_startt(LCT_pcounter_ctx_t pcounter_ctx, LCT_pcounter_handle_t handle,
                                 LCT_time_t time) LCT_NOEXCEPT;
/**
 * @brief `LCT_pcounter_end` at the given time.
 *
 * @param[in] pcounter_ctx the context the handle was registered in; not NULL.
 * @param[in] handle       a TIMER handle.
 * @param[in] time         the end, an `LCT_now` reading.
 *
 * @par Thread safety
 * Safe to call from any thread; it touches only the calling thread's slot.
 */
LCT_API void LCT_pcounter_endt(LCT_pcounter_ctx_t pcounter_ctx, LCT_pcounter_handle_t handle,
                               LCT_time_t time) LCT_NOEXCEPT;
/**
 * @brief Takes a snapshot of every TREND counter of a context.
 *
 * @param[in] pcounter_ctx the context; NULL does nothing.
 *
 * @par Thread safety
 * Safe to call from any thread.
 */
LCT_API void LCT_pcounter_record(LCT_pcounter_ctx_t pcounter_ctx) LCT_NOEXCEPT;
/**
 * @brief Prints one line per counter (and per TREND snapshot) of a context, then forgets the
 *        snapshots.
 *
 * @param[in] pcounter_ctx the context; NULL does nothing.
 * @param[in] out          an open stream, the caller's; NULL does nothing.
 *
 * @par Thread safety
 * Safe to call from any thread; values other threads update meanwhile are
 * seen at some recent point.
 */
LCT_API void LCT_pcounter_dump(LCT_pcounter_ctx_t pcounter_ctx, FILE* out) LCT_NOEXCEPT;

/** @} */

/* ---- Queues ----------------------------------------------------------- */

/** @addtogroup lct_queue
 * @{ */

/**
 * @brief Creates a multi-producer multi-consumer FIFO queue of `void*`.
 *
 * @param[in] type   an `LCT_queue_type_t` (another value aborts with a message).
 * @param[in] length capacity in items (0 counts as 1); past it the queue grows.
 * @return the new queue; the caller frees it with `LCT_queue_free`.
 *
 * @par Thread safety
 * Safe to call from any thread.
 */
LCT_API LCT_queue_t LCT_queue_alloc(LCT_queue_type_t type, size_t length) LCT_NOEXCEPT;
/**
 * @brief Frees a queue and sets `*queue_p` to NULL.
 *
 * Items left in it are dropped (they are the caller's pointers).
 *
 * @param[in,out] queue_p the queue; NULL does nothing.
 *
 * @par Thread safety
 * No other thread may use the queue during or after the call.
 */
LCT_API void LCT_queue_free(LCT_queue_t* queue_p) LCT_NOEXCEPT;
/**
 * @brief Appends a value to a queue.
 *
 * A push past the capacity grows the queue (the ARRAY types warn once).
 *
 * @param[in] queue a live queue.
 * @param[in] val   the value, stored as is; NULL cannot be told from an empty queue by
 *                  `LCT_queue_pop`.
 *
 * @par Thread safety
 * Safe to call from any thread, concurrently with other pushes and pops.
 */
LCT_API void LCT_queue_push(LCT_queue_t queue, void* val) LCT_NOEXCEPT;
/**
 * @brief Takes the oldest value of a queue.
 *
 * @param[in] queue a live queue.
 * @return the oldest value, or NULL when the queue is empty.
 *
 * @par Thread safety
 * Safe to call from any thread, concurrently with other pushes and pops.
 */
LCT_API void* LCT_queue_pop(LCT_queue_t queue) LCT_NOEXCEPT;

/** @} */

/* ---- PMI -------------------------------------------------------------- */

/** @addtogroup lct_pmi
 * @{ */

/**
 * @brief Connects to the launcher (reference-counted, shared with `LCI_initialize`) and
 *        sets `LCT_rank`.
 *
 * A launcher that cannot be reached ends the process with a message.
 *
 * @par Thread safety
 * Safe to call from any thread.
 */
LCT_API void LCT_pmi_initialize(void) LCT_NOEXCEPT;
/**
 * @brief Tells whether the launcher connection is held.
 *
 * @return 1 between `LCT_pmi_initialize` and the matching `LCT_pmi_finalize`, else 0.
 *
 * @par Thread safety
 * Safe to call from any thread.
 */
LCT_API int LCT_pmi_initialized(void) LCT_NOEXCEPT;
/**
 * @brief This process's rank in the job.
 *
 * @return the rank, `0 ... LCT_pmi_get_size()-1`; aborts before `LCT_pmi_initialize`.
 *
 * @par Thread safety
 * Safe to call from any thread.
 */
LCT_API int LCT_pmi_get_rank(void) LCT_NOEXCEPT;
/**
 * @brief Number of processes in the job.
 *
 * @return the number; aborts before `LCT_pmi_initialize`.
 *
 * @par Thread safety
 * Safe to call from any thread.
 */
LCT_API int LCT_pmi_get_size(void) LCT_NOEXCEPT;
/**
 * @brief Publishes a key-value pair, visible to every rank after the next `LCT_pmi_barrier`.
 *
 * @param[in] key   at most `LCT_PMI_STRING_LIMIT` printable characters (copied); a longer
 *                  or NULL one aborts.
 * @param[in] value at most `LCT_PMI_STRING_LIMIT` printable characters (copied); a longer
 *                  or NULL one aborts.
 *
 * @par Thread safety
 * Safe to call from any thread after `LCT_pmi_initialize`.
 */
LCT_API void LCT_pmi_publish(char* key, char* value) LCT_NOEXCEPT;
/**
 * @brief Copies the value a rank published under a key before the last barrier.
 *
 * A missing key aborts the job.
 *
 * @param[in]  rank  the publishing rank.
 * @param[in]  key   at most `LCT_PMI_STRING_LIMIT` characters; not NULL.
 * @param[out] value a buffer of `LCT_PMI_STRING_LIMIT` + 1 bytes, the caller's; receives the
 *                   NUL-terminated value. Not NULL.
 *
 * @par Thread safety
 * Safe to call from any thread after `LCT_pmi_initialize`.
 */
LCT_API void LCT_pmi_getname(int rank, char* key, char* value) LCT_NOEXCEPT;
/**
 * @brief Barrier over the job; makes the values published before it visible.
 *
 * @par Thread safety
 * Collective: one thread per process.
 */
LCT_API void LCT_pmi_barrier(void) LCT_NOEXCEPT;
/**
 * @brief Releases one hold of the launcher connection.
 *
 * A call without a matching `LCT_pmi_initialize` aborts with a message.
 *
 * @par Thread safety
 * Safe to call from any thread; no `LCT_pmi_*` call may run concurrently with
 * the last one.
 */
LCT_API void LCT_pmi_finalize(void) LCT_NOEXCEPT;

/** @} */

/* ---- Argument parser -------------------------------------------------- */

/** @addtogroup lct_args
 * @{ */

/**
 * @brief Creates an argument parser (over `getopt_long`).
 *
 * @return the new parser; the caller frees it with `LCT_args_parser_free`.
 *
 * @par Thread safety
 * Safe to call from any thread.
 */
LCT_API LCT_args_parser_t LCT_args_parser_alloc(void) LCT_NOEXCEPT;
/**
 * @brief Frees an argument parser.
 *
 * @param[in] parser the parser; NULL does nothing. The integers it stored stay the caller's.
 *
 * @par Thread safety
 * No other thread may use the parser during or after the call.
 */
LCT_API void LCT_args_parser_free(LCT_args_parser_t parser) LCT_NOEXCEPT;
/**
 * @brief Registers an option `--name` that stores an integer.
 *
 * @param[in] parser  a live parser.
 * @param[in] name    the option's name without "--" (copied).
 * @param[in] has_arg 0 (`no_argument`: stores 1), 1 (`required_argument`: "--name value" or
 *                    "--name=value") or 2 (`optional_argument`: only "--name=value", 1
 *                    without one).
 * @param[in] ptr     where the value goes (strtol, any base prefix); the caller's, alive until
 *                    `LCT_args_parser_parse` and `LCT_args_parser_print` are done.
 *
 * @par Thread safety
 * Not safe concurrently with other calls on the same parser.
 */
LCT_API void LCT_args_parser_add(LCT_args_parser_t parser, const char* name, int has_arg,
                                 int* ptr) LCT_NOEXCEPT;
/**
 * @brief Registers an option `--name` whose value is a list of dictionary keys, ORed into
 *        `*ptr`.
 *
 * @param[in] parser  a live parser.
 * @param[in] name    the option's name without "--" (copied).
 * @param[in] has_arg as for `LCT_args_parser_add`.
 * @param[in] ptr     where the value goes; the caller's, as for `LCT_args_parser_add`.
 * @param[in] dict    the keys and their values (copied), `count` entries.
 * @param[in] count   number of entries.
 *
 * @par Thread safety
 * Not safe concurrently with other calls on the same parser.
 */
LCT_API void LCT_args_parser_add_dict(LCT_args_parser_t parser, const char* name, int has_arg,
                                      int* ptr, LCT_dict_str_int_t dict[], int count) LCT_NOEXCEPT;
/**
 * @brief Parses a command line, storing the values of the registered options.
 *
 * Non-option arguments are left alone. An unknown option or a malformed
 * value prints a message naming it on stderr and calls `exit(1)`.
 *
 * @param[in] parser a live parser.
 * @param[in] argc   number of arguments.
 * @param[in] argv   the arguments, as `main` received them (not reordered).
 *
 * @par Thread safety
 * One thread at a time in the process (it uses `getopt_long`'s globals).
 */
LCT_API void LCT_args_parser_parse(LCT_args_parser_t parser, int argc, char* argv[]) LCT_NOEXCEPT;
/**
 * @brief Prints each option and its value on stdout.
 *
 * @param[in] parser  a live parser.
 * @param[in] verbose false: one line "args: --name value ..."; true: one line per option,
 *                    with the dictionary key and the kind of argument.
 *
 * @par Thread safety
 * Not safe concurrently with other calls on the same parser.
 */
LCT_API void LCT_args_parser_print(LCT_args_parser_t parser, bool verbose) LCT_NOEXCEPT;

/** @} */

/* ---- Thread barrier --------------------------------------------------- */

/** @addtogroup lct_tbarrier
 * @{ */

/**
 * @brief Creates a reusable barrier of `nthreads` threads.
 *
 * @param[in] nthreads threads per round, at least 1 (below 1 aborts with a message).
 * @return the new barrier; the caller frees it with `LCT_tbarrier_free`.
 *
 * @par Thread safety
 * Safe to call from any thread.
 */
LCT_API LCT_tbarrier_t LCT_tbarrier_alloc(int nthreads) LCT_NOEXCEPT;
/**
 * @brief Frees a thread barrier and sets `*tbarrier_p` to NULL.
 *
 * @param[in,out] tbarrier_p the barrier; NULL does nothing.
 *
 * @par Thread safety
 * No other thread may use the barrier during or after the call.
 */
LCT_API void LCT_tbarrier_free(LCT_tbarrier_t* tbarrier_p) LCT_NOEXCEPT;
/**
 * @brief Arrives at the barrier, without waiting.
 *
 * @param[in] tbarrier a live barrier.
 * @return the ticket: the number of the round this arrival belongs to.
 *
 * @par Thread safety
 * Safe to call from any thread; each thread arrives once per round.
 */
LCT_API int64_t LCT_tbarrier_arrive(LCT_tbarrier_t tbarrier) LCT_NOEXCEPT;
/**
 * @brief Tells whether every thread arrived in a round.
 *
 * @param[in] tbarrier a live barrier.
 * @param[in] ticket   a ticket from `LCT_tbarrier_arrive`.
 * @return true once all `nthreads` threads arrived in the round of `ticket`.
 *
 * @par Thread safety
 * Safe to call from any thread.
 */
LCT_API bool LCT_tbarrier_test(LCT_tbarrier_t tbarrier, int64_t ticket) LCT_NOEXCEPT;
/**
 * @brief Waits until every thread arrived in a round (spins, then yields).
 *
 * @param[in] tbarrier a live barrier.
 * @param[in] ticket   a ticket from `LCT_tbarrier_arrive`.
 *
 * @par Thread safety
 * Safe to call from any thread.
 */
LCT_API void LCT_tbarrier_wait(LCT_tbarrier_t tbarrier, int64_t ticket) LCT_NOEXCEPT;
/**
 * @brief Arrives at the barrier and waits for the others.
 *
 * @param[in] tbarrier a live barrier.
 *
 * @par Thread safety
 * Safe to call from any thread; each thread arrives once per round.
 */
LCT_API void LCT_tbarrier_arrive_and_wait(LCT_tbarrier_t tbarrier) LCT_NOEXCEPT;

/** @} */

/* ---- Files ------------------------------------------------------------ */

/**
 * @brief Reads a file whose name is built printf-style.
 *
 * Reads at most `max`-1 bytes into `buffer` and NUL-terminates them.
 *
 * @param[out] buffer       `max` bytes, the caller's.
 * @param[in]  max          the buffer's size; 0 fails.
 * @param[in]  filename_fmt a printf format for the file name, followed by its arguments.
 * @return the number of bytes read, or -1 (`errno` set) when the file cannot be read, `max`
 *         is 0 or an argument is NULL.
 *
 * @par Thread safety
 * Safe to call from any thread.
 * @ingroup lct_files
 */
LCT_API ssize_t LCT_read_file(char* buffer, size_t max, const char* filename_fmt, ...) LCT_NOEXCEPT
    __attribute__((format(printf, 3, 4)));

#ifdef __cplusplus
}
#endif

#endif /* LCT_H_ */

// Logging and fatal errors (util layer: used by every other folder, uses
// none of them). Compiled into liblct with the bootstrap, so liblci, liblct
// and the tools share one sink, one level and one rank prefix.
//
// One line per message on stderr (or LCI_LOG_OUTFILE), prefixed with the
// rank. The level comes from LCI_LOG_LEVEL, read once at start-up; a message
// below the level costs one comparison.
#pragma once

#include <cstdarg>

namespace lci {

enum class log_level : int { error = 0, warn, diag, info, debug, trace };

// Current threshold (set by config parsing; warn until then).
extern log_level g_log_level;

void log_set_level(log_level level);
// Sends the log to `path` (a file opened for appending, or stdout/stderr;
// "" leaves it as is). False, with the log unchanged, when the file cannot
// be opened (errno says why).
bool log_set_outfile(const char* path);
// Sets the rank shown in the prefix (-1 before the bootstrap knows it).
void log_set_rank(int rank);

void log_message(log_level level, const char* fmt, ...) __attribute__((format(printf, 2, 3)));
// The one way the library dies. fatal() prints the message and aborts the
// process (the launcher then ends the job); fatal_exit() prints it and ends
// the process with `status` through _Exit, for paths where an abort's core
// dump or static destructors would only add noise (a failed bootstrap:
// its destructors could re-enter a broken launcher connection).
[[noreturn]] void fatal(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
[[noreturn]] void fatal_exit(int status, const char* fmt, ...)
    __attribute__((format(printf, 2, 3)));

// The boundary of the C API. Every function of lci.h and lct.h (and of the
// LCIT test hooks) is noexcept, and its body is a function-try-block whose
// one handler keeps a C++ exception (std::bad_alloc, std::system_error, ...)
// from unwinding into a C caller:
//
//   LCI_error_t LCI_x(...) noexcept try {
//     ...
//   } catch (...) {
//     log_exception(__func__);  // "LCI_x: C++ exception: <what()>"
//     return LCI_ERR_FATAL;
//   }
//
// A function whose result has no room for an error (void, a count, an
// enumeration, a handle) ends in fatal_exception(__func__) instead (LCT's
// functions in lct::detail::fatal_exception, with LCT's prefix). With
// zero-cost exception handling the try adds no instruction to the path that
// does not throw: the handler is an out-of-line landing pad that only the
// unwinder reaches. One condition (GCC, x86-64): a function with a landing
// pad gets a frame pointer if it pushes arguments for a call, so lci/api is
// compiled with -maccumulate-outgoing-args and the hot entry points call
// functions that take every argument in a register (send_eager_plain,
// post_recv_plain in lci/core/eager.hpp). The hottest (LCI_sends, sendm,
// sendmn, recvm) have no handler at all: marked "// boundary: tail call",
// they check their arguments (nothing there throws) and end in a tail call
// to a noexcept entry that holds the handler (send_eager_entry,
// recvm_entry), so they save no registers and open no second frame
// (tests/lint/check_boundary.cmake accepts exactly this form).
//
// All three must be called from inside a handler: they read the exception
// being handled.
[[gnu::cold]] void log_exception(const char* call) noexcept;
[[noreturn, gnu::cold]] void fatal_exception(const char* call) noexcept;
// what() of the exception being handled, or a fixed text for one that is
// not a std::exception; valid until the handler ends.
const char* exception_text() noexcept;

}  // namespace lci

#define LCI_LOG(level, ...)                                          \
  do {                                                               \
    if (static_cast<int>(::lci::log_level::level) <=                 \
        static_cast<int>(::lci::g_log_level))                        \
      ::lci::log_message(::lci::log_level::level, __VA_ARGS__);      \
  } while (0)

#define LCI_WARN(...) LCI_LOG(warn, __VA_ARGS__)

// Always-on check for conditions that indicate a broken network or a
// corrupted state (not for argument validation, see lci/api/check.hpp).
#define LCI_ASSERT(cond, ...)                                        \
  do {                                                               \
    if (__builtin_expect(!(cond), 0)) ::lci::fatal(__VA_ARGS__);     \
  } while (0)

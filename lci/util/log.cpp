// Logging sink: a single FILE*, lines written whole with one fprintf each.
#include "lci/util/log.hpp"

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string_view>
#include <unistd.h>

namespace lci {

log_level g_log_level = log_level::warn;

namespace {
FILE* g_out = nullptr;
int g_rank = -1;
const char* const level_names[] = {"error", "warn", "diag", "info", "debug", "trace"};

FILE* out() { return g_out ? g_out : stderr; }

void vprint(log_level level, const char* fmt, va_list ap) {
  char line[1024];
  vsnprintf(line, sizeof(line), fmt, ap);
  if (g_rank >= 0)
    fprintf(out(), "LCI[%d] %s: %s\n", g_rank, level_names[static_cast<int>(level)], line);
  else
    fprintf(out(), "LCI %s: %s\n", level_names[static_cast<int>(level)], line);
  fflush(out());
}
}  // namespace

void log_set_level(log_level level) { g_log_level = level; }
void log_set_rank(int rank) { g_rank = rank; }

bool log_set_outfile(const char* path) {
  if (!path || !*path) return true;
  FILE* f = nullptr;
  if (std::string_view(path) == "stdout")
    f = stdout;
  else if (std::string_view(path) == "stderr")
    f = stderr;
  else
    f = fopen(path, "a");
  if (!f) return false;
  g_out = f;
  return true;
}

void log_message(log_level level, const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vprint(level, fmt, ap);
  va_end(ap);
}

void fatal(const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vprint(log_level::error, fmt, ap);
  va_end(ap);
  abort();
}

void fatal_exit(int status, const char* fmt, ...) {
  std::fflush(stdout);
  va_list ap;
  va_start(ap, fmt);
  vprint(log_level::error, fmt, ap);
  va_end(ap);
  std::_Exit(status);
}

const char* exception_text() noexcept {
  // Rethrown only to be told its type; the object stays alive as long as the
  // caller's handler is active.
  try {
    throw;
  } catch (const std::exception& e) {
    return e.what();
  } catch (...) {
    return "not a std::exception";
  }
}

void log_exception(const char* call) noexcept {
  log_message(log_level::error, "%s: C++ exception: %s", call, exception_text());
}

void fatal_exception(const char* call) noexcept {
  fatal("%s: C++ exception: %s", call, exception_text());
}

}  // namespace lci

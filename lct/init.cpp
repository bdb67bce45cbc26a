// Init and fina of liblct, the rank and the host name.
//
// LCT_init is reference-counted: the first call sets LCT_hostname and
// creates LCT_log_ctx_default; the LCT_fina that matches it frees the
// context. Both take a mutex: they are cold, called once per library user.
// Also the helpers of internal.hpp.
#include <unistd.h>

#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>

#include "lci/util/log.hpp"
#include "lct.h"
#include "lct/internal.hpp"

int LCT_rank = 0;
char LCT_hostname[HOST_NAME_MAX + 1] = "";
LCT_log_ctx_t LCT_log_ctx_default = nullptr;

namespace {

std::mutex g_init_mutex;
int g_init_count = 0;

const char* const g_default_levels[] = {"error", "warn", "diag", "info", "debug", "trace"};

}  // namespace

namespace lct::detail {

void fatal(const char* who, const char* fmt, ...) {
  va_list args;
  va_start(args, fmt);
  std::string message = vformat(fmt, args);
  va_end(args);
  std::fflush(stdout);
  std::fprintf(stderr, "LCT %s: %s\n", who, message.c_str());
  std::fflush(stderr);
  std::abort();
}

void fatal_exception(const char* who) noexcept {
  // No std::string: the exception may be std::bad_alloc.
  std::fflush(stdout);
  std::fprintf(stderr, "LCT %s: C++ exception: %s\n", who, lci::exception_text());
  std::fflush(stderr);
  std::abort();
}

std::string vformat(const char* fmt, va_list args) {
  va_list copy;
  va_copy(copy, args);
  char small[256];
  int n = std::vsnprintf(small, sizeof small, fmt, copy);
  va_end(copy);
  if (n < 0) return std::string();
  if (static_cast<size_t>(n) < sizeof small) return std::string(small, static_cast<size_t>(n));
  std::string out(static_cast<size_t>(n) + 1, '\0');
  std::vsnprintf(&out[0], out.size(), fmt, args);
  out.resize(static_cast<size_t>(n));
  return out;
}

std::string format(const char* fmt, ...) {
  va_list args;
  va_start(args, fmt);
  std::string out = vformat(fmt, args);
  va_end(args);
  return out;
}

}  // namespace lct::detail

void LCT_init(void) noexcept try {
  std::lock_guard<std::mutex> guard(g_init_mutex);
  if (g_init_count++ > 0) return;
  if (gethostname(LCT_hostname, sizeof LCT_hostname) != 0)
    std::snprintf(LCT_hostname, sizeof LCT_hostname, "unknown");
  LCT_hostname[HOST_NAME_MAX] = '\0';
  LCT_log_ctx_default =
      LCT_log_ctx_alloc(g_default_levels, LCT_LOG_MAX, LCT_LOG_WARN, "lct", nullptr, nullptr,
                        nullptr, nullptr);
} catch (...) {
  lct::detail::fatal_exception(__func__);
}

void LCT_fina(void) noexcept try {
  std::lock_guard<std::mutex> guard(g_init_mutex);
  if (g_init_count == 0) {
    std::fprintf(stderr, "LCT_fina: called without a matching LCT_init (ignored)\n");
    return;
  }
  if (--g_init_count > 0) return;
  LCT_log_ctx_free(&LCT_log_ctx_default);
} catch (...) {
  lct::detail::fatal_exception(__func__);
}

void LCT_set_rank(int rank) noexcept try {
  LCT_rank = rank;
} catch (...) {
  lct::detail::fatal_exception(__func__);
}

int LCT_get_rank(void) noexcept try {
  return LCT_rank;
} catch (...) {
  lct::detail::fatal_exception(__func__);
}

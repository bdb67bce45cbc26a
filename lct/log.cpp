// Log contexts and false-assert reports.
//
// A context is immutable after LCT_log_ctx_alloc except for its output
// stream, which opens at the first message (the rank that replaces '%' in
// a file name is usually set after the context is created). Messages are
// formatted into one buffer and written with one fwrite under the
// context's mutex, so lines of concurrent threads never interleave. Printing
// is a cold path; the level check (LCT_log_get_level) is one load.
// See lct.h ("Log") for the environment variables and the line format,
// which are 1.7.9's: "<rank>:<host>:<pid>:<thread>:<file>:<func>:<line>
// <<ctx>:<level>:<tag>> <message>", the tag filters matching as substrings
// of the list (strstr), the file appended to. A NULL context is warned about
// and the call does nothing, as in 1.7.9 (LCT_Report_false_assert included).
#include <strings.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

#include "lct.h"
#include "lct/internal.hpp"

namespace {

struct log_context {
  std::string name;
  std::vector<std::string> level_names;
  int level = LCT_LOG_WARN;
  std::string output = "stderr";  // "stderr", "stdout" or a path
  bool has_whitelist = false;
  bool has_blacklist = false;
  std::string whitelist;  // a tag passes when it is a substring (1.7.9's strstr)
  std::string blacklist;
  std::mutex mutex;  // guards file and its opening
  FILE* file = nullptr;
  bool owns_file = false;
};

std::string env_for(const std::string& ctx_name, const char* suffix) {
  std::string var;
  for (char c : ctx_name) var.push_back(static_cast<char>(std::toupper(static_cast<unsigned char>(c))));
  var += suffix;
  return var;
}

// The explicit argument when given, else the context's environment variable.
const char* setting(const char* explicit_value, const std::string& ctx_name, const char* suffix) {
  if (explicit_value != nullptr) return explicit_value;
  return std::getenv(env_for(ctx_name, suffix).c_str());
}

// Level from a name (case-insensitive) or a number; -1 if neither.
int parse_level(const log_context& ctx, const char* text) {
  for (size_t i = 0; i < ctx.level_names.size(); ++i)
    if (strcasecmp(ctx.level_names[i].c_str(), text) == 0) return static_cast<int>(i);
  char* end = nullptr;
  errno = 0;
  long v = std::strtol(text, &end, 10);
  if (end != text && *end == '\0' && errno == 0 && v >= 0 && v < 1000) return static_cast<int>(v);
  return -1;
}

// The first '%' becomes the rank (1.7.9's replaceOne).
std::string replace_percent_with_rank(std::string path) {
  const size_t pct = path.find('%');
  if (pct != std::string::npos) path.replace(pct, 1, std::to_string(LCT_rank));
  return path;
}

// Stream of the context, opening it on first use. Called with ctx.mutex held.
FILE* stream_locked(log_context& ctx) {
  if (ctx.file != nullptr) return ctx.file;
  if (ctx.output == "stderr") {
    ctx.file = stderr;
  } else if (ctx.output == "stdout") {
    ctx.file = stdout;
  } else {
    std::string path = replace_percent_with_rank(ctx.output);
    ctx.file = std::fopen(path.c_str(), "a");
    if (ctx.file == nullptr) {
      std::fprintf(stderr, "LCT log: cannot open '%s' (%s); logging to stderr\n", path.c_str(),
                   std::strerror(errno));
      ctx.file = stderr;
    } else {
      ctx.owns_file = true;
    }
  }
  return ctx.file;
}

bool tag_allowed(const log_context& ctx, const char* tag) {
  if (tag == nullptr) tag = "";
  if (ctx.has_whitelist && std::strstr(ctx.whitelist.c_str(), tag) == nullptr) return false;
  if (ctx.has_blacklist && std::strstr(ctx.blacklist.c_str(), tag) != nullptr) return false;
  return true;
}

// 1.7.9 warns about a NULL context (on the default context, else stderr)
// and does nothing else.
void warn_null_ctx(const char* who, const char* file, const char* func, int line) {
  if (LCT_log_ctx_default != nullptr && file == nullptr) {
    LCT_Warn(LCT_log_ctx_default, "%s: Invalid log context!\n", who);
  } else if (LCT_log_ctx_default != nullptr) {
    LCT_Warn(LCT_log_ctx_default, "%s: Invalid log context! %s:%s:%d\n", who, file, func, line);
  } else if (file != nullptr) {
    std::fprintf(stderr, "%s: LCT_log_ctx_default is invalid! %s:%s:%d\n", who, file, func, line);
  } else {
    std::fprintf(stderr, "%s: LCT_log_ctx_default is invalid!\n", who);
  }
}

std::string strip_newline(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r')) s.pop_back();
  return s;
}

void write_line(log_context* ctx, const std::string& line) {
  if (ctx == nullptr) {
    std::fwrite(line.data(), 1, line.size(), stderr);
    return;
  }
  std::lock_guard<std::mutex> guard(ctx->mutex);
  FILE* out = stream_locked(*ctx);
  std::fwrite(line.data(), 1, line.size(), out);
  if (out == stderr) std::fflush(out);
}

const char* ctx_name(const log_context* ctx) { return ctx != nullptr ? ctx->name.c_str() : "lct"; }

}  // namespace

LCT_log_ctx_t LCT_log_ctx_alloc(const char* const log_levels_[], int count, int default_log_level,
                                const char* ctx_name_, char* filename, char* log_level_str,
                                char* whitelist, char* blacklist) noexcept try {
  auto* ctx = new log_context;
  ctx->name = ctx_name_ != nullptr ? ctx_name_ : "lct";
  for (int i = 0; i < count && log_levels_ != nullptr; ++i)
    ctx->level_names.emplace_back(log_levels_[i] != nullptr ? log_levels_[i] : "");
  ctx->level = default_log_level;
  if (const char* level = setting(log_level_str, ctx->name, "_LOG_LEVEL")) {
    if (*level != '\0') {
      int v = parse_level(*ctx, level);
      if (v < 0)
        std::fprintf(stderr, "LCT log: %s: unknown log level '%s'; keeping level %d\n",
                     ctx->name.c_str(), level, default_log_level);
      else
        ctx->level = v;
    }
  }
  if (const char* out = setting(filename, ctx->name, "_LOG_OUTFILE"))
    if (*out != '\0') ctx->output = out;
  if (const char* w = setting(whitelist, ctx->name, "_LOG_WHITELIST")) {
    ctx->has_whitelist = true;
    ctx->whitelist = w;
  }
  if (const char* b = setting(blacklist, ctx->name, "_LOG_BLACKLIST")) {
    ctx->has_blacklist = true;
    ctx->blacklist = b;
  }
  return ctx;
} catch (...) {
  lct::detail::fatal_exception(__func__);
}

void LCT_log_ctx_free(LCT_log_ctx_t* log_ctx_p) noexcept try {
  if (log_ctx_p == nullptr || *log_ctx_p == nullptr) {
    warn_null_ctx("LCT_log_ctx_free", nullptr, nullptr, 0);
    return;
  }
  auto* ctx = static_cast<log_context*>(*log_ctx_p);
  if (ctx->file != nullptr) {
    if (ctx->owns_file)
      std::fclose(ctx->file);
    else
      std::fflush(ctx->file);
  }
  delete ctx;
  *log_ctx_p = nullptr;
} catch (...) {
  lct::detail::fatal_exception(__func__);
}

int LCT_log_get_level(LCT_log_ctx_t log_ctx) noexcept try {
  if (log_ctx == nullptr) {
    warn_null_ctx("LCT_log_get_level", nullptr, nullptr, 0);
    return 0;
  }
  return static_cast<log_context*>(log_ctx)->level;
} catch (...) {
  lct::detail::fatal_exception(__func__);
}

void LCT_Logv_(LCT_log_ctx_t log_ctx, int log_level, const char* log_tag, const char* file,
               const char* func, int line, const char* format, va_list vargs) noexcept try {
  auto* ctx = static_cast<log_context*>(log_ctx);
  if (ctx == nullptr) {
    warn_null_ctx("LCT_Logv_", file, func, line);
    return;
  }
  if (log_level > ctx->level) return;
  if (!tag_allowed(*ctx, log_tag)) return;
  std::string message = strip_newline(lct::detail::vformat(format, vargs));
  const std::string level_name =
      log_level >= 0 && static_cast<size_t>(log_level) < ctx->level_names.size()
          ? ctx->level_names[static_cast<size_t>(log_level)]
          : std::to_string(log_level);
  std::string text = lct::detail::format(
      "%d:%s:%d:%d:%s:%s:%d<%s:%s:%s> %s\n", LCT_rank, LCT_hostname, static_cast<int>(getpid()),
      LCT_get_thread_id(), file, func, line, ctx->name.c_str(), level_name.c_str(),
      log_tag ? log_tag : "", message.c_str());
  write_line(ctx, text);
} catch (...) {
  lct::detail::fatal_exception(__func__);
}

void LCT_Log_(LCT_log_ctx_t log_ctx, int log_level, const char* log_tag, const char* file,
              const char* func, int line, const char* format, ...) noexcept try {
  va_list args;
  va_start(args, format);
  LCT_Logv_(log_ctx, log_level, log_tag, file, func, line, format, args);
  va_end(args);
} catch (...) {
  lct::detail::fatal_exception(__func__);
}

void LCT_Log_flush(LCT_log_ctx_t log_ctx) noexcept try {
  auto* ctx = static_cast<log_context*>(log_ctx);
  if (ctx == nullptr) {
    warn_null_ctx("LCT_Log_flush", nullptr, nullptr, 0);
    return;
  }
  std::lock_guard<std::mutex> guard(ctx->mutex);
  if (ctx->file != nullptr) std::fflush(ctx->file);
} catch (...) {
  lct::detail::fatal_exception(__func__);
}

void LCT_Report_false_assert(LCT_log_ctx_t log_ctx, const char* expr_str, const char* file,
                             const char* func, int line, const char* format, ...) noexcept try {
  auto* ctx = static_cast<log_context*>(log_ctx);
  if (ctx == nullptr) {
    warn_null_ctx("LCT_Report_false_assert", file, func, line);
    return;
  }
  va_list args;
  va_start(args, format);
  std::string message = strip_newline(lct::detail::vformat(format, args));
  va_end(args);
  std::string text = lct::detail::format(
      "%d:%d:%d:%s:%s:%d<%s:Assert failed: %s> %s\n", LCT_rank, static_cast<int>(getpid()),
      LCT_get_thread_id(), file, func, line, ctx_name(ctx), expr_str, message.c_str());
  std::fflush(stdout);
  // No lock: the process is going down and the holder may be this thread.
  FILE* out = stream_locked(*ctx);
  std::fwrite(text.data(), 1, text.size(), out);
  std::fflush(out);
  if (out != stderr) std::fwrite(text.data(), 1, text.size(), stderr);
  std::fflush(stderr);
  std::abort();
} catch (...) {
  lct::detail::fatal_exception(__func__);
}

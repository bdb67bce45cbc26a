// Log contexts and false-assert reports.
//
// A context is immutable after LCT_log_ctx_alloc except for its output
// stream, which opens at the first message (the rank that replaces '%' in
// a file name is usually set after the context is created). Messages are
// formatted into one buffer and written with one fwrite under the
// context's mutex, so lines of concurrent threads never interleave. Printing
// is a cold path; the level check (LCT_log_get_level) is one load.
// See lct.h ("Log") for the environment variables and the line format.
#include <strings.h>

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
  std::vector<std::string> whitelist;
  std::vector<std::string> blacklist;
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

std::vector<std::string> split_tags(const char* list) {
  std::vector<std::string> tags;
  if (list == nullptr) return tags;
  std::string current;
  for (const char* p = list;; ++p) {
    if (*p == ',' || *p == '\0') {
      if (!current.empty()) tags.push_back(current);
      current.clear();
      if (*p == '\0') break;
    } else if (!std::isspace(static_cast<unsigned char>(*p))) {
      current.push_back(*p);
    }
  }
  return tags;
}

bool contains(const std::vector<std::string>& tags, const char* tag) {
  for (const auto& t : tags)
    if (t == tag) return true;
  return false;
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

std::string replace_percent_with_rank(const std::string& path) {
  std::string out;
  for (char c : path) {
    if (c == '%')
      out += std::to_string(LCT_rank);
    else
      out.push_back(c);
  }
  return out;
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
    ctx.file = std::fopen(path.c_str(), "w");
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
  if (!ctx.whitelist.empty() && !contains(ctx.whitelist, tag)) return false;
  if (contains(ctx.blacklist, tag)) return false;
  return true;
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
  ctx->whitelist = split_tags(setting(whitelist, ctx->name, "_LOG_WHITELIST"));
  ctx->blacklist = split_tags(setting(blacklist, ctx->name, "_LOG_BLACKLIST"));
  return ctx;
} catch (...) {
  lct::detail::fatal_exception(__func__);
}

void LCT_log_ctx_free(LCT_log_ctx_t* log_ctx_p) noexcept try {
  if (log_ctx_p == nullptr || *log_ctx_p == nullptr) return;
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
  if (log_ctx == nullptr) return LCT_LOG_WARN;
  return static_cast<log_context*>(log_ctx)->level;
} catch (...) {
  lct::detail::fatal_exception(__func__);
}

void LCT_Logv_(LCT_log_ctx_t log_ctx, int log_level, const char* log_tag, const char* file,
               const char* func, int line, const char* format, va_list vargs) noexcept try {
  auto* ctx = static_cast<log_context*>(log_ctx);
  if (log_level > LCT_log_get_level(log_ctx)) return;
  if (ctx != nullptr && !tag_allowed(*ctx, log_tag)) return;
  std::string message = strip_newline(lct::detail::vformat(format, vargs));
  std::string text = lct::detail::format("[%s] %s:%d:%s %s (%s:%d in %s)\n", ctx_name(ctx),
                                         LCT_hostname, LCT_rank, log_tag ? log_tag : "",
                                         message.c_str(), file, line, func);
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
    std::fflush(stderr);
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
  va_list args;
  va_start(args, format);
  std::string message = strip_newline(lct::detail::vformat(format, args));
  va_end(args);
  std::string text = lct::detail::format(
      "[%s] %s:%d: assertion '%s' failed at %s:%d in %s(): %s\n", ctx_name(ctx), LCT_hostname,
      LCT_rank, expr_str, file, line, func, message.c_str());
  std::fflush(stdout);
  FILE* out = stderr;
  if (ctx != nullptr) {
    // No lock: the process is going down and the holder may be this thread.
    out = stream_locked(*ctx);
    std::fwrite(text.data(), 1, text.size(), out);
    std::fflush(out);
  }
  if (out != stderr) {
    std::fwrite(text.data(), 1, text.size(), stderr);
  } else if (ctx == nullptr) {
    std::fwrite(text.data(), 1, text.size(), stderr);
  }
  std::fflush(stderr);
  std::abort();
} catch (...) {
  lct::detail::fatal_exception(__func__);
}

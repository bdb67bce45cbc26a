// Strings, dictionaries, thread ids and LCT_read_file.
//
// LCT_str_replace_*: malloc'ed results (the caller frees them), NULL only
// when malloc fails or `in` is NULL. Dictionary keys compare
// as 1.7.9's: case-sensitively. Thread ids come from one atomic counter the first
// time a thread asks and stay in a thread_local afterwards.
#include <fcntl.h>
#include <strings.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "lct.h"
#include "lct/internal.hpp"

namespace {

const char* to_malloced(const std::string& s) {
  char* out = static_cast<char*>(std::malloc(s.size() + 1));
  if (out != nullptr) std::memcpy(out, s.c_str(), s.size() + 1);
  return out;
}

const char* replace(const char* in, const char* from, const char* to, bool all) {
  if (in == nullptr) return nullptr;
  std::string text(in);
  if (from == nullptr || *from == '\0') return to_malloced(text);
  const std::string needle(from), replacement(to != nullptr ? to : "");
  std::string out;
  size_t pos = 0;
  for (;;) {
    size_t hit = text.find(needle, pos);
    if (hit == std::string::npos) break;
    out.append(text, pos, hit - pos);
    out += replacement;
    pos = hit + needle.size();
    if (!all) break;
  }
  out.append(text, pos, std::string::npos);
  return to_malloced(out);
}

std::atomic<int> g_nthreads{0};
thread_local int t_thread_id = -1;

std::string trim(const std::string& s) {
  size_t b = s.find_first_not_of(" \t\n");
  if (b == std::string::npos) return std::string();
  size_t e = s.find_last_not_of(" \t\n");
  return s.substr(b, e - b + 1);
}

}  // namespace

const char* LCT_str_replace_one(const char* in, const char* from, const char* to) noexcept try {
  return replace(in, from, to, false);
} catch (...) {
  lct::detail::fatal_exception(__func__);
}

const char* LCT_str_replace_all(const char* in, const char* from, const char* to) noexcept try {
  return replace(in, from, to, true);
} catch (...) {
  lct::detail::fatal_exception(__func__);
}

int LCT_str_int_search(LCT_dict_str_int_t dict[], int count, const char* key, int default_val,
                       int* val) noexcept try {
  // As 1.7.9: exact (case-sensitive) keys, and a NULL key matches a NULL entry.
  for (int i = 0; i < count; ++i) {
    const bool match = key == nullptr || dict[i].key == nullptr
                           ? key == nullptr && dict[i].key == nullptr
                           : std::strcmp(dict[i].key, key) == 0;
    if (match) {
      if (val != nullptr) *val = dict[i].val;
      return 1;
    }
  }
  if (val != nullptr) *val = default_val;
  return 0;
} catch (...) {
  lct::detail::fatal_exception(__func__);
}

uint64_t LCT_parse_arg(LCT_dict_str_int_t dict[], int count, const char* key,
                       const char* delimiter) noexcept try {
  if (key == nullptr) return 0;
  const std::string delims = delimiter != nullptr && *delimiter != '\0' ? delimiter : ",";
  const std::string text(key);
  uint64_t result = 0;
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t end = text.find_first_of(delims, pos);
    if (end == std::string::npos) end = text.size();
    std::string word = trim(text.substr(pos, end - pos));
    if (!word.empty()) {
      int v = 0;
      if (LCT_str_int_search(dict, count, word.c_str(), 0, &v))
        result |= static_cast<uint64_t>(static_cast<unsigned int>(v));
      else
        std::fprintf(stderr, "LCT_parse_arg: unknown key '%s' in '%s' (ignored)\n", word.c_str(),
                     key);
    }
    pos = end + 1;
  }
  return result;
} catch (...) {
  lct::detail::fatal_exception(__func__);
}

int LCT_get_thread_id(void) noexcept try {
  if (LCT_unlikely(t_thread_id < 0)) t_thread_id = g_nthreads.fetch_add(1, std::memory_order_relaxed);
  return t_thread_id;
} catch (...) {
  lct::detail::fatal_exception(__func__);
}

int LCT_get_nthreads(void) noexcept try {
  return g_nthreads.load(std::memory_order_relaxed);
} catch (...) {
  lct::detail::fatal_exception(__func__);
}

ssize_t LCT_read_file(char* buffer, size_t max, const char* filename_fmt, ...) noexcept try {
  if (buffer == nullptr || max == 0 || filename_fmt == nullptr) {
    errno = EINVAL;
    return -1;
  }
  va_list args;
  va_start(args, filename_fmt);
  const std::string name = lct::detail::vformat(filename_fmt, args);
  va_end(args);
  const int fd = ::open(name.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  size_t total = 0;
  while (total < max - 1) {
    const ssize_t n = ::read(fd, buffer + total, max - 1 - total);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int saved = errno;
      ::close(fd);
      errno = saved;
      return -1;
    }
    if (n == 0) break;
    total += static_cast<size_t>(n);
  }
  ::close(fd);
  buffer[total] = '\0';
  return static_cast<ssize_t>(total);
} catch (...) {
  lct::detail::fatal_exception(__func__);
}

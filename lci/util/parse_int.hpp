// Whole decimal integers in a range (and sizes with a K/M/G suffix), as the parsers of settings read them
// (lci/core/config_values.hpp, lci/util/signal_name.hpp): exactly of that
// form or refused, never guessed.
#pragma once

#include <cerrno>
#include <cstdlib>

namespace lci {

// A whole decimal integer in [lo, hi]; false on anything else (junk after
// the digits, overflow, out of range, empty).
inline bool parse_decimal(const char* text, long long lo, long long hi, long long& out) {
  errno = 0;
  char* end = nullptr;
  const long long v = std::strtoll(text, &end, 10);
  if (errno || end == text || *end != '\0' || v < lo || v > hi) return false;
  out = v;
  return true;
}

// A whole decimal integer with an optional binary-size suffix (K, M or G,
// any case, optionally followed by B or iB: 8K = 8KiB = 8192), in [lo, hi];
// false on anything else, including a product that overflows.
inline bool parse_scaled(const char* text, long long lo, long long hi, long long& out) {
  errno = 0;
  char* end = nullptr;
  const long long v = std::strtoll(text, &end, 10);
  if (errno || end == text) return false;
  long long scale = 1;
  switch (*end) {
    case 'k': case 'K': scale = 1LL << 10; break;
    case 'm': case 'M': scale = 1LL << 20; break;
    case 'g': case 'G': scale = 1LL << 30; break;
    default: break;
  }
  if (scale != 1) {
    ++end;
    if ((end[0] == 'i' || end[0] == 'I') && (end[1] == 'b' || end[1] == 'B')) end += 2;
    else if (end[0] == 'b' || end[0] == 'B') end += 1;
  }
  if (*end != '\0') return false;
  long long r = 0;
  if (__builtin_mul_overflow(v, scale, &r) || r < lo || r > hi) return false;
  out = r;
  return true;
}

}  // namespace lci

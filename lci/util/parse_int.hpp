// Whole decimal integers in a range, as the parsers of settings read them
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

}  // namespace lci

// Fuzzes the parsers of LCI_* environment values (lci/core/config_values.hpp,
// applied by config_parse): decimal integers within the bounds of each kind
// of entry (int, size, boolean), and the word list of
// LCI_BACKEND_TRY_LOCK_MODE. An accepted number must lie in its bounds and
// print back to itself; an accepted word list must give only known bits.
//
// Input: one byte choosing the bounds, then the value (cut at a NUL, as an
// environment variable is).
#include <climits>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>

#include "lci/core/config_values.hpp"
#include "tests/fuzz/fuzz_util.hpp"

using lci::fuzz::require;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  static const struct { long long lo, hi; } bounds[] = {
      {INT_MIN, INT_MAX}, {1, LLONG_MAX}, {0, 1}, {LLONG_MIN, LLONG_MAX}, {-5, -5}};
  const auto& b = bounds[data[0] % (sizeof bounds / sizeof bounds[0])];
  const std::string value = lci::fuzz::c_string(data + 1, size - 1);

  long long v = 12345;
  if (lci::parse_decimal(value.c_str(), b.lo, b.hi, v)) {
    require(v >= b.lo && v <= b.hi);
    char printed[32];
    std::snprintf(printed, sizeof printed, "%lld", v);
    long long again = 0;
    require(lci::parse_decimal(printed, b.lo, b.hi, again) && again == v);
  } else {
    require(v == 12345);  // untouched
  }

  uint64_t mode = 0;
  if (lci::parse_try_lock_mode(value.c_str(), mode))
    require((mode & ~uint64_t{LCI_BACKEND_TRY_LOCK_MODE_MAX - 1}) == 0);
  return 0;
}

// LCT_now and conversions: CLOCK_MONOTONIC in nanoseconds (never steps
// backwards, unaffected by changes of the wall clock). Only differences of
// two readings mean anything.
#include <time.h>

#include "lct.h"
#include "lct/internal.hpp"

LCT_time_t LCT_now(void) noexcept try {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return static_cast<LCT_time_t>(t.tv_sec) * 1000000000LL + t.tv_nsec;
} catch (...) {
  lct::detail::fatal_exception(__func__);
}

double LCT_time_to_ns(LCT_time_t time) noexcept try {
  return static_cast<double>(time);
} catch (...) {
  lct::detail::fatal_exception(__func__);
}
double LCT_time_to_us(LCT_time_t time) noexcept try {
  return static_cast<double>(time) / 1e3;
} catch (...) {
  lct::detail::fatal_exception(__func__);
}
double LCT_time_to_ms(LCT_time_t time) noexcept try {
  return static_cast<double>(time) / 1e6;
} catch (...) {
  lct::detail::fatal_exception(__func__);
}
double LCT_time_to_s(LCT_time_t time) noexcept try {
  return static_cast<double>(time) / 1e9;
} catch (...) {
  lct::detail::fatal_exception(__func__);
}

// LCT_now and conversions: CLOCK_MONOTONIC in nanoseconds (never steps
// backwards, unaffected by changes of the wall clock). Only differences of
// two readings mean anything.
#include <time.h>

#include "lct.h"

LCT_time_t LCT_now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return static_cast<LCT_time_t>(t.tv_sec) * 1000000000LL + t.tv_nsec;
}

double LCT_time_to_ns(LCT_time_t time) { return static_cast<double>(time); }
double LCT_time_to_us(LCT_time_t time) { return static_cast<double>(time) / 1e3; }
double LCT_time_to_ms(LCT_time_t time) { return static_cast<double>(time) / 1e6; }
double LCT_time_to_s(LCT_time_t time) { return static_cast<double>(time) / 1e9; }

// LCT_now (monotonic nanoseconds) and the LCT_time_to_* conversions.
#include <doctest/doctest.h>

#include <chrono>
#include <thread>

#include "lct.h"

TEST_CASE("LCT_now is monotonic and counts nanoseconds") {
  LCT_time_t prev = LCT_now();
  for (int i = 0; i < 100000; ++i) {
    LCT_time_t t = LCT_now();
    if (t < prev) FAIL("LCT_now went backwards: " << prev << " then " << t);
    prev = t;
  }
  const LCT_time_t t0 = LCT_now();
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  const LCT_time_t elapsed = LCT_now() - t0;
  CHECK(elapsed >= 20 * 1000 * 1000);
  CHECK(elapsed < 10LL * 1000 * 1000 * 1000);  // not in microseconds or worse
}

TEST_CASE("conversions") {
  CHECK(LCT_time_to_ns(1500) == doctest::Approx(1500.0));
  CHECK(LCT_time_to_us(1500) == doctest::Approx(1.5));
  CHECK(LCT_time_to_ms(2500000) == doctest::Approx(2.5));
  CHECK(LCT_time_to_s(3000000000LL) == doctest::Approx(3.0));
  CHECK(LCT_time_to_s(0) == 0.0);
}

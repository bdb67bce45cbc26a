// lci.h compiles as C++ with -Wall -Wextra -pedantic -Werror, brings lct.h
// with it (as LCI 1.7.9's does), and a program linked with LCI::LCI alone can
// call LCT functions: a task runtime's parcelport timing its messages with
// LCT_now and logging with LCT_Log, including nothing but lci.h.
#include "lci.h"

#include <cstdio>

int main() {
  LCT_init();
  LCT_time_t t0 = LCT_now();
  // Types and constants of both headers, used together.
  LCI_error_t ok = LCI_OK;
  static_assert(sizeof(LCT_time_t) == 8, "LCT_time_t is a 64-bit count of nanoseconds");
  LCT_time_t t1 = LCT_now();
  LCT_Log(LCT_log_ctx_default, LCT_LOG_TRACE, "cxx", "elapsed %f s", LCT_time_to_s(t1 - t0));
  LCT_fina();
  if (ok != LCI_OK || t1 < t0) {
    std::printf("lci_cxx_header: FAILED (t0 %lld, t1 %lld)\n", static_cast<long long>(t0),
                static_cast<long long>(t1));
    return 1;
  }
  std::printf("lci_cxx_header: passed\n");
  return 0;
}

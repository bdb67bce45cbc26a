// What the LCI benchmark programs (lci_pingpong, lci_bw, lci_msgrate) share:
// ending on an LCI error with one line naming the program and the call, and
// posting with retries on LCI_ERR_RETRY. Header-only and small; the raw
// libfabric programs have theirs in ofi_common.hpp.
#pragma once

#include <cstdio>
#include <cstdlib>

#include "common.hpp"
#include "lci.h"

namespace lci_bench {

// The program name the messages start with (set once, at the top of main).
inline const char*& program() {
  static const char* name = "lci benchmark";
  return name;
}
inline void set_program(const char* name) { program() = name; }

[[noreturn]] inline void fail(const char* what, LCI_error_t rc) {
  std::fflush(stdout);
  std::fprintf(stderr, "%s: %s failed (LCI error %d)\n", program(), what, static_cast<int>(rc));
  std::exit(1);
}

inline void check(LCI_error_t rc, const char* what) {
  if (rc != LCI_OK) fail(what, rc);
}

// Calls post() until it is accepted, progressing LCI_UR_DEVICE between
// refusals; any other error ends the program.
template <typename Post>
void post_retry(Post&& post, const char* what, double timeout_s) {
  bench::spin_until(
      [&] {
        LCI_error_t rc = post();
        if (rc == LCI_OK) return true;
        if (rc != LCI_ERR_RETRY) fail(what, rc);
        LCI_progress(LCI_UR_DEVICE);
        return false;
      },
      timeout_s, what);
}

}  // namespace lci_bench

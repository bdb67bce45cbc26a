// Fixture of lint.boundary.detects: one definition with the boundary, one
// ending in a tail call to it (accepted), one without, and none of
// LCI_missing.
#include "lci.h"

LCI_error_t LCI_guarded(int x) noexcept try {
  return x ? LCI_OK : LCI_ERR_RETRY;
} catch (...) {
  lci::log_exception(__func__);
  return LCI_ERR_FATAL;
}

LCI_error_t LCI_unguarded(int x) noexcept {
  return x ? LCI_OK : LCI_ERR_RETRY;
}

// boundary: tail call
LCI_error_t LCI_tail(int x) noexcept {
  return LCI_guarded(x);
}

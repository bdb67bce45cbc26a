// C entry point of the configuration table: LCIX_config_print (lci.h).
// Prints the settings in force once LCI_initialize has parsed them, before
// that a side-effect-free parse of the environment (lci/core/config.hpp).
#include <cstdio>

#include "lci.h"
#include "lci/core/config.hpp"
#include "lci/core/runtime.hpp"
#include "lci/util/log.hpp"

void LCIX_config_print(FILE* out) noexcept try {
  if (out == nullptr) out = stdout;
  lci::config_print_current(out, lci::g_initialized.load(std::memory_order_acquire));
  std::fflush(out);
} catch (...) {
  lci::fatal_exception(__func__);
}

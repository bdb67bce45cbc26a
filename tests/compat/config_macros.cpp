// lci_config.h carries LCI 1.7.9's macros (config_macros.h), seen from C++.
#include "config_macros.h"

int main() {
  if (lci_config_strings_differ()) return 1;
  printf("config_macros (C++): lci_config.h has LCI 1.7.9's macros\n");
  return 0;
}

// ibv_check: exits 0 when this machine has an active verbs port that the
// verbs backend would use (LCI_IBV_DEVICE / LCI_IBV_PORT honoured), else
// prints "no active verbs device: skipped (<why>)" and exits 77, which
// ctest reports as SKIPPED (SKIP_RETURN_CODE). Used by run_if_ibv.sh.
#include <cstdio>
#include <cstdlib>
#include <string>

#include "lci/backend/ibv/probe.hpp"

int main() {
  const char* dev = std::getenv("LCI_IBV_DEVICE");
  const char* port = std::getenv("LCI_IBV_PORT");
  const lci::ibv::port_choice c =
      lci::ibv::probe_port(dev ? dev : "", port ? std::atoi(port) : 0);
  if (c.device >= 0) return 0;
  std::printf("no active verbs device: skipped (%s)\n", c.error.c_str());
  return 77;
}

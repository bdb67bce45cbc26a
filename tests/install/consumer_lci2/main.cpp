// An LCI 2 program: the global runtime, this process's rank, the version
// lci_config.hpp gives, and the runtime's end.
#include <lci.hpp>

#include <cstdio>

int main() {
  lci::g_runtime_init();
  const int rank = lci::get_rank_me();
  const int nranks = lci::get_rank_n();
  const bool ok = rank >= 0 && rank < nranks && !lci::get_g_runtime().is_empty() &&
                  LCI_CXX_API_VERSION_MAJOR == 2 && LCI_VERSION_MAJOR == 2 &&
                  lci::get_max_bcopy_size() > 0;
  lci::g_runtime_fina();
  std::printf("rank %d of %d: consumer_lci2 %s (LCI %s)\n", rank, nranks, ok ? "ok" : "FAILED",
              LCI_VERSION_STRING);
  return ok ? 0 : 1;
}

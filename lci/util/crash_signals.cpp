// See crash_signals.hpp.
#include "lci/util/crash_signals.hpp"

#include <dlfcn.h>
#include <signal.h>

#include <cstdlib>
#include <cstring>
#include <initializer_list>

namespace lci {

namespace {

bool wants_psm_backtraces() {
  for (const char* name : {"IPATH_NO_BACKTRACE", "HFI_NO_BACKTRACE"}) {
    const char* v = std::getenv(name);
    if (v && std::strcmp(v, "0") == 0) return true;
  }
  return false;
}

// Whether code at `address` belongs to one of PSM's libraries.
bool in_psm(void* address) {
  Dl_info info{};
  if (address == nullptr || dladdr(address, &info) == 0 || info.dli_fname == nullptr) return false;
  const char* base = std::strrchr(info.dli_fname, '/');
  base = base ? base + 1 : info.dli_fname;
  return std::strncmp(base, "libinfinipath", 13) == 0 || std::strncmp(base, "libpsm", 6) == 0;
}

}  // namespace

int restore_crash_signals() {
  if (wants_psm_backtraces()) return 0;
  int reset = 0;
  for (int sig : {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT}) {
    struct sigaction now {};
    if (sigaction(sig, nullptr, &now) != 0) continue;
    void* handler = (now.sa_flags & SA_SIGINFO) ? reinterpret_cast<void*>(now.sa_sigaction)
                                                : reinterpret_cast<void*>(now.sa_handler);
    if (now.sa_handler == SIG_DFL || now.sa_handler == SIG_IGN || !in_psm(handler)) continue;
    struct sigaction dfl {};
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    if (sigaction(sig, &dfl, nullptr) == 0) ++reset;
  }
  return reset;
}

}  // namespace lci

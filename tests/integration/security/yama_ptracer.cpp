// Least privilege for cross-memory attach under Yama (ptrace_scope 1): a
// rank with local peers names the launcher (the local ranks' nearest common
// ancestor) as its ptracer, so the launcher's descendants, and nobody else,
// may attach; a rank alone on its host names nobody; LCI_finalize (the last
// native device closing) clears it.
//
// Observed from a forked child of the rank: the child descends from the
// launcher, so it may read the rank's memory (process_vm_readv) exactly
// while the rank names the launcher. Checks: with peers, the child reads
// before LCI_finalize and is refused after it; alone (np 1), refused both
// times; and bulk data moves by cross-memory copy between the ranks (the
// RDMA piece towards the peer is unbounded, not one ring cell).
//
// Runs only where Yama is at scope 1 and the process lacks CAP_SYS_PTRACE
// (root attaches whatever Yama says): run it as an ordinary user. Elsewhere
// it exits 77, which ctest reports as skipped.
#include <sys/prctl.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <string>

#include "lci.h"

#include "harness.hpp"
#include "test_hooks.h"

using namespace lci_test;

namespace {

int yama_scope() {
  std::ifstream f("/proc/sys/kernel/yama/ptrace_scope");
  int scope = -1;
  return f >> scope ? scope : -1;
}

// Whether CAP_SYS_PTRACE (capability 19) is in the effective set.
bool has_ptrace_capability() {
  std::ifstream f("/proc/self/status");
  std::string line;
  while (std::getline(f, line))
    if (line.rfind("CapEff:", 0) == 0) return (std::stoull(line.substr(7), nullptr, 16) >> 19) & 1;
  return true;
}

volatile uint64_t g_probe = 0x5eed5eed5eed5eedull;

// Whether a child of this process may read its memory: 1 yes, 0 refused
// (EPERM), -1 something else failed.
int child_can_read() {
  const pid_t parent = getpid();
  const pid_t child = fork();
  if (child < 0) return -1;
  if (child == 0) {
    uint64_t got = 0;
    iovec local{&got, sizeof got};
    iovec remote{const_cast<uint64_t*>(&g_probe), sizeof got};
    const ssize_t n = process_vm_readv(parent, &local, 1, &remote, 1, 0);
    if (n == static_cast<ssize_t>(sizeof got) && got == g_probe) _exit(1);
    _exit(n < 0 && errno == EPERM ? 0 : 2);
  }
  int status = 0;
  if (waitpid(child, &status, 0) != child || !WIFEXITED(status)) return -1;
  return WEXITSTATUS(status) == 1 ? 1 : WEXITSTATUS(status) == 0 ? 0 : -1;
}

}  // namespace

int main() {
  const int scope = yama_scope();
  if (scope != 1 || has_ptrace_capability()) {
    printf("yama_ptracer: skipped (Yama ptrace_scope %d%s; needs scope 1, without "
           "CAP_SYS_PTRACE)\n",
           scope, has_ptrace_capability() ? ", CAP_SYS_PTRACE held" : "");
    return 77;
  }
  harness_init(60);
  const int n = LCI_NUM_PROCESSES;
  const int during = child_can_read();
  EXPECT(during == (n > 1 ? 1 : 0),
         "before LCI_finalize a child of the rank %s its memory (np %d)",
         during == 1 ? "reads" : during == 0 ? "cannot read" : "failed to probe", n);
  if (n > 1) {
    const int peer = (LCI_RANK + 1) % n;
    const size_t piece = LCIT_rdma_piece(LCI_UR_DEVICE, peer);
    EXPECT(piece > (size_t(1) << 20), "the RDMA piece towards rank %d is %zu bytes: bulk data is "
           "pipelined, not copied by cross-memory attach", peer, piece);
  }
  LCI_barrier();
  LCI_queue_free(&g_ctrl_cq);
  LCI_finalize();
  const int after = child_can_read();
  EXPECT(after == 0, "after LCI_finalize a child of the rank %s its memory",
         after == 1 ? "still reads" : "failed to probe");
  return report("yama_ptracer");
}

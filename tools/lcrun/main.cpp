// lcrun: starts N ranks of a program on this machine and serves the PMI-1
// wire protocol to them, so LCI programs find each other with no other
// software installed.
//
//   lcrun [-n N | -np N] [--hosts H] [--prefix CMD] [--] prog [args...]
//
// The parts, each with its contract and invariants at its top:
//   options.hpp          the command line, --prefix splitting and placeholders
//   supervisor.hpp       starting, signalling and reaping the ranks; the poll
//                        loop, deadlines and the exit status
//   pmi_server.hpp       the PMI-1 conversations, key-value store and barriers
//   ofi_shm_cleanup.hpp  the /dev/shm files of libfabric's shm provider that
//                        a dead rank left
// This file only parses the options, runs the job and returns its status.
#include <fcntl.h>
#include <unistd.h>

#include <utility>

#include "tools/lcrun/options.hpp"
#include "tools/lcrun/supervisor.hpp"

namespace {

// A rank's PMI_FD must not collide with stdio: if lcrun was started with
// 0, 1 or 2 closed, the first socketpair would take that number.
void ensure_stdio_open() {
  for (int fd = 0; fd <= 2; ++fd) {
    if (::fcntl(fd, F_GETFD) >= 0) continue;
    int null = ::open("/dev/null", fd == 0 ? O_RDONLY : O_WRONLY);
    if (null >= 0 && null != fd) {
      ::dup2(null, fd);
      ::close(null);
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  using namespace lci::lcrun;
  ensure_stdio_open();
  options opts;
  int early = parse_options(argc, argv, opts);
  if (early >= 0) return early;
  supervisor job(std::move(opts));
  return job.run();
}

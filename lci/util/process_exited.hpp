// Whether another process of this host has exited: its pidfd (from
// pidfd_open) is readable once the whole process is gone; without one,
// kill(pid, 0) says so only after the process was reaped.
#pragma once

#include <poll.h>
#include <signal.h>

#include <cerrno>

namespace lci {

inline bool process_exited(int pid, int pidfd) {
  if (pidfd >= 0) {
    pollfd p{pidfd, POLLIN, 0};
    return ::poll(&p, 1, 0) > 0;
  }
  return kill(pid, 0) != 0 && errno == ESRCH;
}

}  // namespace lci

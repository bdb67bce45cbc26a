// The open-file limit (RLIMIT_NOFILE): a job of many ranks on one host
// needs descriptors in proportion to its ranks (lcrun: a socket and pipes
// per rank; the native transport: one per local peer). The soft limit is
// raised as far as the hard limit allows when more are needed, and an
// error that ran out of descriptors can name the limit.
#pragma once

#include <sys/resource.h>

#include <cstddef>

namespace lci {

// The soft limit (SIZE_MAX: none).
inline size_t fd_limit() {
  rlimit l{};
  if (getrlimit(RLIMIT_NOFILE, &l) != 0 || l.rlim_cur == RLIM_INFINITY) return SIZE_MAX;
  return static_cast<size_t>(l.rlim_cur);
}

// Raises the soft limit to at least `need` descriptors where the hard limit
// allows (else to the hard limit); returns the soft limit then in force.
inline size_t raise_fd_limit(size_t need) {
  rlimit l{};
  if (getrlimit(RLIMIT_NOFILE, &l) != 0 || l.rlim_cur == RLIM_INFINITY) return SIZE_MAX;
  if (l.rlim_cur >= need) return static_cast<size_t>(l.rlim_cur);
  const rlim_t want = l.rlim_max == RLIM_INFINITY || l.rlim_max > need ? need : l.rlim_max;
  if (want > l.rlim_cur) {
    l.rlim_cur = want;
    setrlimit(RLIMIT_NOFILE, &l);
  }
  return fd_limit();
}

}  // namespace lci

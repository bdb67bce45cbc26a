// Removal of the /dev/shm files of libfabric's shm provider that a dead
// rank left behind. This is libfabric-specific, and the one place in lcrun
// that knows how those files are named:
//
//   lci-<pid>-<random>  the regions LCI's ofi backend names itself
//                       (lci/backend/ofi/shm_name.hpp);
//   <pid>:...           libfabric's own default name, which other libfabric
//                       programs use.
//
// A rank ended by SIGKILL, abort() or _exit() cannot remove these files
// itself. Only regular files owned by lcrun's own user are removed, so
// nothing another user or another kind of program put there is touched.
#pragma once

#include <sys/types.h>

namespace lci::lcrun {

// Removes the files of process pid from dir (/dev/shm unless a test names
// another folder). Call it for every rank that ended, whatever its status,
// and before the rank is reaped: the zombie still holds the pid, so no other
// process can own files under it yet.
void remove_shm_leftovers(pid_t pid, const char* dir_path = "/dev/shm");

}  // namespace lci::lcrun

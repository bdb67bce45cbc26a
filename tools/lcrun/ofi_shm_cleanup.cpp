// The /dev/shm leftovers of libfabric's shm provider (ofi_shm_cleanup.hpp):
// the names "lci-<pid>-..." and "<pid>:..." are matched by prefix only.
#include "tools/lcrun/ofi_shm_cleanup.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <string>

namespace lci::lcrun {

void remove_shm_leftovers(pid_t pid, const char* dir_path) {
  DIR* dir = opendir(dir_path);
  if (!dir) return;
  const std::string pid_text = std::to_string(static_cast<long>(pid));
  const std::string prefixes[] = {"lci-" + pid_text + "-", pid_text + ":"};
  const uid_t self = ::geteuid();
  while (dirent* e = readdir(dir)) {
    bool match = false;
    for (const std::string& prefix : prefixes)
      if (std::strncmp(e->d_name, prefix.c_str(), prefix.size()) == 0) match = true;
    struct stat st;
    if (match && ::fstatat(dirfd(dir), e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
        S_ISREG(st.st_mode) && st.st_uid == self)
      unlinkat(dirfd(dir), e->d_name, 0);
  }
  closedir(dir);
}

}  // namespace lci::lcrun

// See shm_name.hpp.
#include "lci/backend/ofi/shm_name.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <utility>
#include <vector>

#include "lci/util/random.hpp"

namespace lci::ofi {
namespace {

// The files of the shm endpoints open in this process, each with the pid
// that created it: a child made by fork() shares the table but must not
// remove its parent's files when it exits.
struct shm_file_table {
  std::mutex lock;
  std::vector<std::pair<pid_t, std::string>> files;
};

// Allocated once and never freed: remove_at_exit may run after the static
// destructors of this file.
shm_file_table& table() {
  static shm_file_table* t = new shm_file_table();
  return *t;
}

extern "C" void remove_at_exit() {
  shm_file_table& t = table();
  std::lock_guard<std::mutex> guard(t.lock);
  const pid_t self = ::getpid();
  for (const auto& [owner, file] : t.files)
    if (owner == self) ::shm_unlink(file.c_str());
  t.files.clear();
}

}  // namespace

std::string make_shm_file_name() {
  char name[64];
  std::snprintf(name, sizeof name, "lci-%ld-%016" PRIx64, static_cast<long>(::getpid()),
                random_bits());
  return name;
}

std::string shm_address(const std::string& file) { return "fi_shm://" + file; }

void track_shm_file(const std::string& file) {
  static std::once_flag registered;
  std::call_once(registered, [] { std::atexit(remove_at_exit); });
  shm_file_table& t = table();
  std::lock_guard<std::mutex> guard(t.lock);
  t.files.emplace_back(::getpid(), file);
}

void untrack_shm_file(const std::string& file) {
  shm_file_table& t = table();
  std::lock_guard<std::mutex> guard(t.lock);
  for (auto it = t.files.begin(); it != t.files.end(); ++it) {
    if (it->second == file) {
      t.files.erase(it);
      return;
    }
  }
}

}  // namespace lci::ofi

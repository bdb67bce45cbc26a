// lcrun's removal of a dead rank's libfabric shm files
// (tools/lcrun/ofi_shm_cleanup.hpp), on a scratch folder instead of
// /dev/shm: exactly the regular files named "lci-<pid>-..." or "<pid>:..."
// that belong to this user go; other pids, other names, folders and
// symbolic links stay.
#include <doctest/doctest.h>

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

#include "tools/lcrun/ofi_shm_cleanup.hpp"

namespace {

struct scratch_dir {
  scratch_dir() {
    char name[] = "/tmp/lcrun_shm_test_XXXXXX";
    REQUIRE(::mkdtemp(name) != nullptr);
    path = name;
  }
  // The folder holds files, links and empty folders only.
  ~scratch_dir() {
    if (DIR* dir = ::opendir(path.c_str())) {
      while (dirent* e = ::readdir(dir)) {
        const std::string name = e->d_name;
        if (name == "." || name == "..") continue;
        if (::unlinkat(::dirfd(dir), e->d_name, 0) != 0)
          ::unlinkat(::dirfd(dir), e->d_name, AT_REMOVEDIR);
      }
      ::closedir(dir);
    }
    CHECK(::rmdir(path.c_str()) == 0);
  }
  std::string file(const std::string& name) const { return path + "/" + name; }
  void create(const std::string& name) const {
    int fd = ::open(file(name).c_str(), O_CREAT | O_WRONLY | O_EXCL, 0600);
    REQUIRE(fd >= 0);
    ::close(fd);
  }
  bool exists(const std::string& name) const {
    struct stat st;
    return ::lstat(file(name).c_str(), &st) == 0;
  }

  std::string path;
};

}  // namespace

TEST_CASE("lcrun ofi_shm_cleanup: the files of one pid go") {
  scratch_dir d;
  const char* removed[] = {"lci-4242-0123456789abcdef", "lci-4242-", "4242:0:0", "4242:"};
  const char* kept[] = {"lci-42420-0123456789abcdef", "lci-424-aa", "lci-4242", "42420:0:0",
                        "424:0:0", "x4242:0", "4242", "4242-0", "LCI-4242-aa", "other"};
  for (const char* n : removed) d.create(n);
  for (const char* n : kept) d.create(n);
  d.create("target");
  REQUIRE(::symlink(d.file("target").c_str(), d.file("4242:link").c_str()) == 0);
  REQUIRE(::mkdir(d.file("lci-4242-dir").c_str(), 0700) == 0);

  lci::lcrun::remove_shm_leftovers(4242, d.path.c_str());

  for (const char* n : removed) CHECK_MESSAGE(!d.exists(n), n);
  for (const char* n : kept) CHECK_MESSAGE(d.exists(n), n);
  CHECK(d.exists("4242:link"));  // a link, not a regular file
  CHECK(d.exists("target"));
  CHECK(d.exists("lci-4242-dir"));
}

TEST_CASE("lcrun ofi_shm_cleanup: another user's files stay") {
  if (::geteuid() != 0) return;  // only root can give a file away
  scratch_dir d;
  d.create("lci-77-aa");
  d.create("77:0:0");
  REQUIRE(::chown(d.file("lci-77-aa").c_str(), 12345, 12345) == 0);
  lci::lcrun::remove_shm_leftovers(77, d.path.c_str());
  CHECK(d.exists("lci-77-aa"));
  CHECK_FALSE(d.exists("77:0:0"));
}

TEST_CASE("lcrun ofi_shm_cleanup: a missing folder is no error") {
  lci::lcrun::remove_shm_leftovers(4242, "/nonexistent/lcrun_shm_test");
}

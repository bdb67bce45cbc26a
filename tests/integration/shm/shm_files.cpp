// shm_files MODE: an LCI program that ends in chosen ways, for shm_files.sh,
// which checks that no /dev/shm file of the job outlives it.
//
// After LCI_initialize every rank exchanges one medium message with every
// rank (so the shared-memory regions are in use), then prints to stdout
//   shm_files: rank R pid P
//   shm_files: rank R file NAME      (one line per /dev/shm file it maps)
// and then, by MODE:
//   exit0        exit(0) without LCI_finalize;
//   finalize     LCI_finalize, then exit 0;
//   kill VICTIM  VICTIM raises SIGKILL; the others sleep (at most 30 s) until
//                the launcher ends them.
// Every wait is bounded, so a launcher that does not end the job makes the
// test slow, never hung.
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "lci.h"

namespace {

[[noreturn]] void fail(const char* what) {
  std::fprintf(stderr, "shm_files: rank %d: %s\n", LCI_RANK, what);
  std::exit(3);
}

// The names of the /dev/shm files this process maps, from /proc/self/maps
// (a file already unlinked shows as "NAME (deleted)" and is not listed).
std::set<std::string> mapped_shm_files() {
  std::set<std::string> names;
  std::FILE* maps = std::fopen("/proc/self/maps", "r");
  if (!maps) return names;
  char line[4096];
  const char* dir = "/dev/shm/";
  while (std::fgets(line, sizeof line, maps)) {
    const char* at = std::strstr(line, dir);
    if (!at) continue;
    std::string name(at + std::strlen(dir));
    while (!name.empty() && (name.back() == '\n' || name.back() == ' ')) name.pop_back();
    if (name.size() > 10 && name.compare(name.size() - 10, 10, " (deleted)") == 0) continue;
    names.insert(name);
  }
  std::fclose(maps);
  return names;
}

void exchange_messages() {
  const int n = LCI_NUM_PROCESSES;
  LCI_comp_t cq;
  if (LCI_queue_create(LCI_UR_DEVICE, &cq) != LCI_OK) fail("LCI_queue_create failed");
  std::vector<std::vector<char>> in(static_cast<size_t>(n), std::vector<char>(64));
  for (int p = 0; p < n; ++p) {
    LCI_mbuffer_t b{in[static_cast<size_t>(p)].data(), 64};
    if (LCI_recvm(LCI_UR_ENDPOINT, b, p, 7, cq, nullptr) != LCI_OK) fail("LCI_recvm failed");
  }
  char out[64] = "hello";
  for (int p = 0; p < n; ++p) {
    LCI_mbuffer_t b{out, sizeof out};
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (LCI_sendm(LCI_UR_ENDPOINT, b, p, 7) == LCI_ERR_RETRY) {
      LCI_progress(LCI_UR_DEVICE);
      if (std::chrono::steady_clock::now() > deadline) fail("LCI_sendm kept returning RETRY");
    }
  }
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  for (int got = 0; got < n;) {
    LCI_progress(LCI_UR_DEVICE);
    LCI_request_t r;
    if (LCI_queue_pop(cq, &r) == LCI_OK) ++got;
    if (std::chrono::steady_clock::now() > deadline) fail("messages did not arrive within 20 s");
  }
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  if (mode != "exit0" && mode != "finalize" && !(mode == "kill" && argc > 2)) {
    std::fprintf(stderr, "usage: shm_files exit0|finalize|kill VICTIM\n");
    return 2;
  }
  if (LCI_initialize() != LCI_OK) fail("LCI_initialize failed");
  exchange_messages();
  LCI_barrier();
  std::printf("shm_files: rank %d pid %ld\n", LCI_RANK, static_cast<long>(::getpid()));
  for (const std::string& name : mapped_shm_files())
    std::printf("shm_files: rank %d file %s\n", LCI_RANK, name.c_str());
  std::fflush(stdout);

  if (mode == "exit0") std::exit(0);
  if (mode == "finalize") {
    LCI_finalize();
    return 0;
  }
  // kill: every rank has printed its files before the victim dies.
  LCI_barrier();
  if (LCI_RANK == std::atoi(argv[2])) ::raise(SIGKILL);
  std::this_thread::sleep_for(std::chrono::seconds(30));
  fail("slept 30 s without being ended by the launcher");
}

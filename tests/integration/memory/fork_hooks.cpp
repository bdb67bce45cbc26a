// fork() in a multithreaded LCI program: threads unmap memory in a loop
// (through the munmap hook) while the main thread forks, many times. Every
// child unmaps, allocates and frees large chunks and exits 0. A child that
// inherited a lock held by a thread that was inside a hook at the time of
// the fork would block in its first hooked call; the parent gives each child
// a bounded time, kills a child that overstays it, and then fails.
//
// Run with LCI_USE_DREG=1 over a provider that allows caching (shm, tcp), so
// that a registration cache listens to the hooks.
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

#include "lci.h"

namespace {

using clock_type = std::chrono::steady_clock;

void child_work() {
  const size_t len = size_t{4} << 20;
  for (int i = 0; i < 4; ++i) {
    void* p = mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) _exit(3);
    memset(p, i, 4096);
    if (munmap(p, len) != 0) _exit(4);
    void* q = malloc(len);  // mmap-ed by glibc
    if (q == nullptr) _exit(5);
    memset(q, i, 4096);
    free(q);
    if (madvise(nullptr, 0, MADV_DONTNEED) != 0) _exit(6);
  }
  _exit(0);
}

// Waits up to `limit` for pid; kills it if it is still there. True if it
// exited with status 0 by itself.
bool reap(pid_t pid, std::chrono::seconds limit, int fork_no) {
  const auto deadline = clock_type::now() + limit;
  int status = 0;
  for (;;) {
    const pid_t r = waitpid(pid, &status, WNOHANG);
    if (r == pid) break;
    if (r < 0) {
      fprintf(stderr, "fork_hooks: waitpid(%d) failed\n", static_cast<int>(pid));
      return false;
    }
    if (clock_type::now() > deadline) {
      fprintf(stderr, "fork_hooks: child %d (fork #%d) still running after %lld s: deadlocked\n",
              static_cast<int>(pid), fork_no, static_cast<long long>(limit.count()));
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      return false;
    }
    usleep(1000);
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    fprintf(stderr, "fork_hooks: child %d (fork #%d) ended with status 0x%x\n",
            static_cast<int>(pid), fork_no, status);
    return false;
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  int forks = 200;
  int nthreads = 4;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!strcmp(argv[i], "--forks")) forks = atoi(argv[i + 1]);
    if (!strcmp(argv[i], "--threads")) nthreads = atoi(argv[i + 1]);
  }
  if (LCI_initialize() != LCI_OK) return 2;

  std::atomic<bool> stop{false};
  std::atomic<long> unmaps{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < nthreads; ++t)
    threads.emplace_back([&] {
      const size_t len = 64 * 1024;
      while (!stop.load(std::memory_order_relaxed)) {
        void* p = mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED) continue;
        static_cast<char*>(p)[0] = 1;
        madvise(p, len, MADV_DONTNEED);
        munmap(p, len);
        unmaps.fetch_add(1, std::memory_order_relaxed);
      }
    });

  // Bounded: `forks` forks or 60 s, whichever comes first.
  const auto end = clock_type::now() + std::chrono::seconds(60);
  int failed = 0, done = 0;
  for (int i = 0; i < forks && clock_type::now() < end; ++i) {
    const pid_t pid = fork();
    if (pid < 0) {
      perror("fork_hooks: fork");
      ++failed;
      break;
    }
    if (pid == 0) child_work();
    if (!reap(pid, std::chrono::seconds(5), i)) ++failed;
    ++done;
    // The parent keeps working too.
    void* p = mmap(nullptr, 1 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p != MAP_FAILED) munmap(p, 1 << 20);
  }
  stop = true;
  for (auto& th : threads) th.join();
  printf("fork_hooks: %d forks, %d failed, %ld unmaps by the threads\n", done, failed,
         unmaps.load());
  LCI_finalize();
  return failed == 0 && done > 0 ? 0 : 1;
}

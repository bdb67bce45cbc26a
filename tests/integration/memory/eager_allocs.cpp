// The eager path allocates nothing per message in steady state.
//
// Heap allocations of the whole process are counted while the ranks
// exchange short and medium messages after a warm-up: the global operator
// new (every heap object and container of liblci goes through it) and,
// where no sanitizer owns the allocator, the C allocator itself (malloc,
// calloc, realloc and the aligned variants, interposed here for every
// library of the process: liblci, libfabric and its providers). Each phase
// runs twice after its warm-up, with N and with 10 N messages; the count of
// the longer run must not exceed that of the shorter one (nothing is
// allocated per message), and LCI's own C++ allocations must be 0 in both.
//
// Phases (rank 0 starts each round trip, every received byte or field is
// checked):
//   sends/recvs             short ping-pong;
//   sendm/recvm 8 B         medium ping-pong that fits every inject size;
//   sendm/recvm max         medium ping-pong of LCI_MEDIUM_SIZE bytes (a
//                           packet send and a send completion where the
//                           transport's inject size is smaller);
//   sendm window, late recv rank 0 sends a window of 8-byte messages that
//                           arrive before their receives are posted (they
//                           wait in the matching table), then rank 1
//                           answers the window with one short message.
// Ranks: 2.
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "count_new.hpp"
#include "harness.hpp"

namespace {
std::atomic<long> g_allocs{0};  // the C allocator (operator new's calls included)
}  // namespace

// The C allocator, counted: glibc's own entry points under the public
// names, so that every library's calls land here. Sanitizers replace the
// allocator themselves, and their free() must see their own blocks: there
// only operator new is counted.
#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || \
    __has_feature(memory_sanitizer)
#define EAGER_ALLOCS_SANITIZED 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define EAGER_ALLOCS_SANITIZED 1
#endif

#if !defined(EAGER_ALLOCS_SANITIZED) && defined(__GLIBC__)
#define EAGER_ALLOCS_COUNT_MALLOC 1
extern "C" {
void* __libc_malloc(size_t);
void* __libc_calloc(size_t, size_t);
void* __libc_realloc(void*, size_t);
void* __libc_memalign(size_t, size_t);

void* malloc(size_t n) {
  g_allocs.fetch_add(1, std::memory_order_relaxed);
  return __libc_malloc(n);
}
void* calloc(size_t n, size_t size) {
  g_allocs.fetch_add(1, std::memory_order_relaxed);
  return __libc_calloc(n, size);
}
void* realloc(void* p, size_t n) {
  g_allocs.fetch_add(1, std::memory_order_relaxed);
  return __libc_realloc(p, n);
}
void* memalign(size_t al, size_t n) {
  g_allocs.fetch_add(1, std::memory_order_relaxed);
  return __libc_memalign(al, n);
}
void* aligned_alloc(size_t al, size_t n) {
  g_allocs.fetch_add(1, std::memory_order_relaxed);
  return __libc_memalign(al, n);
}
int posix_memalign(void** out, size_t al, size_t n) {
  g_allocs.fetch_add(1, std::memory_order_relaxed);
  if (al < sizeof(void*) || (al & (al - 1)) != 0) return 22;  // EINVAL
  void* p = __libc_memalign(al, n);
  if (!p && n) return 12;  // ENOMEM
  *out = p;
  return 0;
}
}
#endif

using namespace lci_test;
using count_new::g_news;
using count_new::sync_endpoint;
using count_new::wait_sync;

namespace {

constexpr int k_tag = 21;
constexpr int k_window = 16;

struct counts {
  long news = 0;
  long allocs = 0;
};
counts now() { return {g_news.load(), g_allocs.load()}; }
counts since(const counts& before) {
  const counts c = now();
  return {c.news - before.news, c.allocs - before.allocs};
}

enum class phase_kind { short_pingpong, medium_pingpong, late_window };

struct runner {
  LCI_endpoint_t ep;
  LCI_comp_t sync;
  char* send_buf;
  char* recv_buf;  // k_window slots of LCI_MEDIUM_SIZE bytes

  // One round trip (or window) number i of `kind` with medium `size`.
  void step(phase_kind kind, size_t size, int i) {
    const int peer = 1 - LCI_RANK;
    LCI_request_t req;
    const uint32_t seed = seed_of(static_cast<uint32_t>(i), static_cast<uint32_t>(size));
    switch (kind) {
      case phase_kind::short_pingpong: {
        LCI_short_t msg;
        std::memset(&msg, 0, sizeof(msg));
        std::memcpy(&msg, &seed, sizeof(seed));
        for (int leg = 0; leg < 2; ++leg) {
          const bool sender = (leg == 0) == (LCI_RANK == 0);
          if (sender) {
            retry_call([&] { return LCI_sends(ep, msg, peer, k_tag); }, "LCI_sends");
          } else {
            ok(LCI_recvs(ep, peer, k_tag, sync, nullptr), "LCI_recvs");
            wait_sync(sync, &req, "recvs");
            uint32_t got;
            std::memcpy(&got, &req.data.immediate, sizeof(got));
            EXPECT(req.type == LCI_IMMEDIATE && req.rank == peer && got == seed,
                   "short %d: type %d rank %d value %u, expected %u", i,
                   static_cast<int>(req.type), req.rank, got, seed);
          }
        }
        return;
      }
      case phase_kind::medium_pingpong: {
        for (int leg = 0; leg < 2; ++leg) {
          const bool sender = (leg == 0) == (LCI_RANK == 0);
          if (sender) {
            fill(send_buf, size, seed);
            LCI_mbuffer_t src{send_buf, size};
            retry_call([&] { return LCI_sendm(ep, src, peer, k_tag); }, "LCI_sendm");
          } else {
            LCI_mbuffer_t dst{recv_buf, size};
            ok(LCI_recvm(ep, dst, peer, k_tag, sync, nullptr), "LCI_recvm");
            wait_sync(sync, &req, "recvm");
            EXPECT(req.type == LCI_MEDIUM && req.rank == peer && req.data.mbuffer.length == size,
                   "medium %d: type %d rank %d length %zu", i, static_cast<int>(req.type),
                   req.rank, req.data.mbuffer.length);
            const size_t bad = mismatch(recv_buf, size, seed);
            EXPECT(bad == SIZE_MAX, "medium %d of %zu bytes: byte %zu differs", i, size, bad);
          }
        }
        return;
      }
      case phase_kind::late_window: {
        // Rank 0 sends the window, then a short marker; rank 1 posts the
        // window's receives only once the marker arrived, so that the
        // messages (delivered in order where the transport keeps order)
        // wait for their receives in the matching table.
        if (LCI_RANK == 0) {
          for (int j = 0; j < k_window; ++j) {
            const uint32_t s = seed + static_cast<uint32_t>(j);
            std::memcpy(send_buf, &s, sizeof(s));
            LCI_mbuffer_t src{send_buf, 8};
            retry_call([&] { return LCI_sendm(ep, src, peer, k_tag + 1 + j); }, "LCI_sendm");
          }
          LCI_short_t marker{};
          retry_call([&] { return LCI_sends(ep, marker, peer, k_tag); }, "LCI_sends");
          ok(LCI_recvs(ep, peer, k_tag, sync, nullptr), "LCI_recvs");
          wait_sync(sync, &req, "window answer");
        } else {
          ok(LCI_recvs(ep, peer, k_tag, sync, nullptr), "LCI_recvs");
          wait_sync(sync, &req, "window marker");
          for (int j = 0; j < k_window; ++j) {
            char* slot = recv_buf + static_cast<size_t>(j) * 8;
            LCI_mbuffer_t dst{slot, 8};
            ok(LCI_recvm(ep, dst, peer, k_tag + 1 + j, sync, nullptr), "LCI_recvm");
            wait_sync(sync, &req, "late recvm");
            uint32_t got;
            std::memcpy(&got, slot, sizeof(got));
            EXPECT(req.rank == peer && req.data.mbuffer.length == 8 &&
                       got == seed + static_cast<uint32_t>(j),
                   "window %d message %d: rank %d length %zu value %u", i, j, req.rank,
                   req.data.mbuffer.length, got);
          }
          LCI_short_t answer{};
          retry_call([&] { return LCI_sends(ep, answer, peer, k_tag); }, "LCI_sends");
        }
        return;
      }
    }
  }

  // `warmup` steps, then `iters` counted ones.
  counts run(phase_kind kind, size_t size, int warmup, int iters, int first) {
    for (int i = 0; i < warmup; ++i) step(kind, size, first + i);
    const counts before = now();
    for (int i = 0; i < iters; ++i) step(kind, size, first + warmup + i);
    return since(before);
  }
};

}  // namespace

int main() {
  harness_init(240);
  if (LCI_NUM_PROCESSES != 2) die("eager_allocs runs on 2 ranks");
  constexpr int k_warmup = 50, k_short_run = 40, k_long_run = 400;
  const size_t max_medium = static_cast<size_t>(LCI_MEDIUM_SIZE);
  runner r;
  r.ep = sync_endpoint();
  ok(LCI_sync_create(LCI_UR_DEVICE, 1, &r.sync), "LCI_sync_create");
  r.send_buf = static_cast<char*>(std::malloc(max_medium));
  r.recv_buf = static_cast<char*>(std::malloc(max_medium * k_window));
  if (!r.send_buf || !r.recv_buf) die("out of memory");
  struct phase_def {
    const char* name;
    phase_kind kind;
    size_t size;
  };
  const phase_def phases[] = {
      {"sends/recvs", phase_kind::short_pingpong, LCI_SHORT_SIZE},
      {"sendm/recvm 8 B", phase_kind::medium_pingpong, 8},
      {"sendm/recvm LCI_MEDIUM_SIZE", phase_kind::medium_pingpong, max_medium},
      {"sendm window, late recvm", phase_kind::late_window, 8},
  };
  int first = 0;
  for (const phase_def& p : phases) {
    phase("%s", p.name);
    // The short run first: whatever a first use still allocates is charged
    // to it, never to the long run.
    const counts a = r.run(p.kind, p.size, k_warmup, k_short_run, first);
    first += k_warmup + k_short_run;
    const counts b = r.run(p.kind, p.size, 0, k_long_run, first);
    first += k_long_run;
    std::printf("rank %d: %s: %d steps: %ld new, %ld allocations; %d steps: %ld new, %ld "
                "allocations%s\n",
                LCI_RANK, p.name, k_short_run, a.news, a.allocs, k_long_run, b.news, b.allocs,
#ifdef EAGER_ALLOCS_COUNT_MALLOC
                ""
#else
                " (C allocator not counted under a sanitizer)"
#endif
    );
    EXPECT(a.news == 0 && b.news == 0,
           "%s: operator new called %ld times in %d steps and %ld times in %d steps", p.name,
           a.news, k_short_run, b.news, k_long_run);
    EXPECT(b.allocs <= a.allocs,
           "%s: %ld allocations in %d steps but %ld in %d steps (allocations per message)",
           p.name, a.allocs, k_short_run, b.allocs, k_long_run);
  }
  // The counters see the process's allocations at all: start-up makes some.
  EXPECT(g_news.load() > 0, "operator new was never counted");
#ifdef EAGER_ALLOCS_COUNT_MALLOC
  EXPECT(g_allocs.load() > 0, "the C allocator was never counted");
  std::printf("rank %d: %ld C allocations and %ld operator new in the whole run\n", LCI_RANK,
              g_allocs.load(), g_news.load());
#endif
  ok(LCI_sync_free(&r.sync), "LCI_sync_free");
  ok(LCI_endpoint_free(&r.ep), "LCI_endpoint_free");
  std::free(r.send_buf);
  std::free(r.recv_buf);
  return harness_finish("eager_allocs");
}

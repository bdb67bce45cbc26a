// Shared harness of the long-message, one-sided, iovec, fence and memory
// integration tests: EXPECT (record a failed check and go on), die() (end the
// rank at once), bounded waits and a watchdog, completion helpers.
// Included once per test program (it defines internal-linkage helpers).
#pragma once

#include <algorithm>
#include <array>
#include <atomic>
#include <cctype>
#include <chrono>
#include <condition_variable>
#include <csignal>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dirent.h>
#include <malloc.h>
#include <memory>
#include <mutex>
#include <string>
#include <sys/mman.h>
#include <sys/resource.h>
#include <thread>
#include <unistd.h>
#include <utility>
#include <vector>

#include "lci.h"

// ---- harness: the same block in every long/one-sided/iovec/fence/memory test ----
// EXPECT records a failed check and goes on; die() ends the rank at once.
// Every wait is bounded (k_wait_s per wait, a watchdog for the whole program).
namespace {

using steady = std::chrono::steady_clock;
constexpr double k_wait_s = 60;
std::atomic<long> g_failures{0};
std::atomic<long> g_checks{0};
std::mutex g_phase_m;
char g_phase[256] = "start";
thread_local char t_phase[256] = "start";

// Names what the calling thread is doing, for failure messages and the watchdog.
__attribute__((format(printf, 1, 2))) inline void phase(const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(t_phase, sizeof(t_phase), fmt, ap);
  va_end(ap);
  std::lock_guard<std::mutex> lock(g_phase_m);
  memcpy(g_phase, t_phase, sizeof(g_phase));
}

#define EXPECT(cond, ...)                                                          \
  do {                                                                             \
    g_checks.fetch_add(1, std::memory_order_relaxed);                              \
    if (!(cond)) {                                                                 \
      if (g_failures.fetch_add(1) < 40) {                                          \
        fprintf(stderr, "rank %d: line %d: check failed: %s [%s]: ", LCI_RANK,     \
                __LINE__, #cond, t_phase);                                         \
        fprintf(stderr, __VA_ARGS__);                                              \
        fputc('\n', stderr);                                                       \
      }                                                                            \
    }                                                                              \
  } while (0)

// The shm regions of this process are /dev/shm/lci-<pid>-<random> (LCI's
// names) or /dev/shm/<pid>:... (libfabric's own, for endpoints LCI did not
// name). exit() removes them, but die(), the watchdog and the SIGTERM with
// which lcrun ends the other ranks leave by _exit or a signal, so their names
// are collected after LCI_initialize and removed on those paths.
constexpr int k_max_shm_files = 8;
char g_shm_files[k_max_shm_files][300];
int g_num_shm_files = 0;
struct sigaction g_old_sigterm;

inline void collect_own_shm_files() {
  char lci_prefix[32], fabric_prefix[32];
  snprintf(lci_prefix, sizeof(lci_prefix), "lci-%d-", static_cast<int>(getpid()));
  snprintf(fabric_prefix, sizeof(fabric_prefix), "%d:", static_cast<int>(getpid()));
  if (DIR* d = opendir("/dev/shm")) {
    while (dirent* e = readdir(d)) {
      const bool own = strncmp(e->d_name, lci_prefix, strlen(lci_prefix)) == 0 ||
                       strncmp(e->d_name, fabric_prefix, strlen(fabric_prefix)) == 0;
      if (own && g_num_shm_files < k_max_shm_files) {
        strcpy(g_shm_files[g_num_shm_files], "/dev/shm/");
        strncat(g_shm_files[g_num_shm_files++], e->d_name, 256);
      }
    }
    closedir(d);
  }
}
inline void remove_own_shm_files() {  // async-signal-safe
  for (int i = 0; i < g_num_shm_files; ++i) unlink(g_shm_files[i]);
}
inline void on_sigterm(int sig, siginfo_t* info, void* ctx) {
  remove_own_shm_files();
  if (g_old_sigterm.sa_flags & SA_SIGINFO) {
    if (g_old_sigterm.sa_sigaction) g_old_sigterm.sa_sigaction(sig, info, ctx);
  } else if (g_old_sigterm.sa_handler != SIG_DFL && g_old_sigterm.sa_handler != SIG_IGN) {
    g_old_sigterm.sa_handler(sig);
  }
  signal(SIGTERM, SIG_DFL);
  raise(SIGTERM);
}
inline void clean_up_shm_on_failure() {
  collect_own_shm_files();
  struct sigaction sa;
  memset(&sa, 0, sizeof(sa));
  sa.sa_sigaction = on_sigterm;
  sa.sa_flags = SA_SIGINFO;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGTERM, &sa, &g_old_sigterm);
}

[[noreturn]] __attribute__((format(printf, 1, 2))) inline void die(const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "rank %d: FATAL [%s]: ", LCI_RANK, t_phase);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fputc('\n', stderr);
  fflush(stderr);
  remove_own_shm_files();
  _exit(3);
}

// Ends the process if it is still running `seconds` from now.
inline void start_watchdog(double seconds) {
  std::thread([seconds] {
    std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
    {
      std::lock_guard<std::mutex> lock(g_phase_m);
      fprintf(stderr, "rank %d: watchdog: still running after %.0f s, last phase: %s\n", LCI_RANK,
              seconds, g_phase);
      fflush(stderr);
    }
    remove_own_shm_files();
    _exit(4);
  }).detach();
}

struct deadline {
  steady::time_point end;
  explicit deadline(double s = k_wait_s)
      : end(steady::now() +
            std::chrono::duration_cast<steady::duration>(std::chrono::duration<double>(s))) {}
  bool passed() const { return steady::now() > end; }
  void check(const char* what) const {
    if (passed()) die("timed out waiting for %s", what);
  }
};

// One progress pass; yields when idle (tests run oversubscribed).
inline void progress(const deadline& d, const char* what) {
  if (LCI_progress(LCI_UR_DEVICE) != LCI_OK) std::this_thread::yield();
  d.check(what);
}

inline void ok(LCI_error_t rc, const char* call) {
  if (rc == LCI_ERR_FEATURE_NA) die("%s: not implemented (LCI_ERR_FEATURE_NA)", call);
  if (rc != LCI_OK) die("%s returned %d", call, static_cast<int>(rc));
}
#define OK(call) ok((call), #call)

// Retries on LCI_ERR_RETRY, driving progress, for at most k_wait_s.
template <class F>
void retry_call(F f, const char* what) {
  deadline d;
  LCI_error_t rc;
  while ((rc = f()) == LCI_ERR_RETRY) progress(d, what);
  ok(rc, what);
}
#define RETRY(call) retry_call([&] { return (call); }, #call)

inline const char* comp_name(LCI_comp_type_t t) {
  switch (t) {
    case LCI_COMPLETION_QUEUE: return "queue";
    case LCI_COMPLETION_SYNC: return "sync";
    case LCI_COMPLETION_HANDLER: return "handler";
    default: return "none";
  }
}

// Handler completion objects record into one collector each; a handler has no
// context argument, so each collector has its own function.
constexpr int k_collectors = 64;
struct collector {
  std::mutex m;
  std::vector<LCI_request_t> reqs;
};
collector g_coll[k_collectors];
std::mutex g_coll_alloc_m;
bool g_coll_used[k_collectors];
template <int I>
void on_complete(LCI_request_t r) {
  std::lock_guard<std::mutex> lock(g_coll[I].m);
  g_coll[I].reqs.push_back(r);
}
template <int... I>
std::array<LCI_handler_t, sizeof...(I)> handler_table(std::integer_sequence<int, I...>) {
  return {{&on_complete<I>...}};
}
const std::array<LCI_handler_t, k_collectors> g_handlers =
    handler_table(std::make_integer_sequence<int, k_collectors>());
LCI_comp_t g_handler_objs[k_collectors];

// A completion object of one kind. take(n) collects exactly n requests,
// driving progress; a synchronizer must be taken in multiples of its threshold.
class comp {
 public:
  explicit comp(LCI_comp_type_t type, int threshold = 1) : type_(type), threshold_(threshold) {
    switch (type) {
      case LCI_COMPLETION_QUEUE: OK(LCI_queue_create(LCI_UR_DEVICE, &h_)); break;
      case LCI_COMPLETION_SYNC: OK(LCI_sync_create(LCI_UR_DEVICE, threshold, &h_)); break;
      case LCI_COMPLETION_HANDLER: {
        std::lock_guard<std::mutex> lock(g_coll_alloc_m);
        for (int i = 0; i < k_collectors && coll_ < 0; ++i)
          if (!g_coll_used[i]) g_coll_used[i] = true, coll_ = i;
        if (coll_ < 0) die("more than %d handler objects alive", k_collectors);
        g_coll[coll_].reqs.clear();
        // The API has no call that frees a handler object: create one per
        // collector and reuse it (a global keeps it reachable for LeakSanitizer).
        if (!g_handler_objs[coll_])
          OK(LCI_handler_create(LCI_UR_DEVICE, g_handlers[static_cast<size_t>(coll_)],
                                &g_handler_objs[coll_]));
        h_ = g_handler_objs[coll_];
        break;
      }
      default: die("comp of type %d", static_cast<int>(type));
    }
  }
  // Wraps a queue owned elsewhere (LCI_UR_CQ).
  static std::unique_ptr<comp> borrow_queue(LCI_comp_t q) {
    return std::unique_ptr<comp>(new comp(q));
  }
  comp(const comp&) = delete;
  comp& operator=(const comp&) = delete;
  ~comp() {
    if (!owned_) return;
    if (type_ == LCI_COMPLETION_QUEUE) LCI_queue_free(&h_);
    if (type_ == LCI_COMPLETION_SYNC) LCI_sync_free(&h_);
    if (type_ == LCI_COMPLETION_HANDLER) {
      std::lock_guard<std::mutex> lock(g_coll_alloc_m);
      g_coll_used[coll_] = false;  // (LCI keeps the handler: late calls land here)
    }
  }
  LCI_comp_t handle() const { return h_; }
  uintptr_t remote() const { return reinterpret_cast<uintptr_t>(h_); }
  LCI_comp_type_t type() const { return type_; }

  std::vector<LCI_request_t> take(size_t n, const char* what, double secs = k_wait_s) {
    std::vector<LCI_request_t> out;
    out.reserve(n);
    deadline d(secs);
    switch (type_) {
      case LCI_COMPLETION_QUEUE:
        while (out.size() < n) {
          LCI_request_t r;
          if (LCI_queue_pop(h_, &r) == LCI_OK)
            out.push_back(r);
          else
            progress(d, what);
        }
        break;
      case LCI_COMPLETION_SYNC: {
        if (n % static_cast<size_t>(threshold_)) die("take(%zu) from a sync of %d", n, threshold_);
        std::vector<LCI_request_t> batch(static_cast<size_t>(threshold_));
        while (out.size() < n) {
          if (LCI_sync_test(h_, batch.data()) == LCI_OK)
            out.insert(out.end(), batch.begin(), batch.end());
          else
            progress(d, what);
        }
        break;
      }
      default:
        for (;;) {
          {
            std::lock_guard<std::mutex> lock(g_coll[coll_].m);
            auto& v = g_coll[coll_].reqs;
            if (v.size() >= n) {
              out.assign(v.begin(), v.begin() + static_cast<long>(n));
              v.erase(v.begin(), v.begin() + static_cast<long>(n));
              break;
            }
          }
          progress(d, what);
        }
    }
    return out;
  }
  LCI_request_t take1(const char* what, double secs = k_wait_s) { return take(1, what, secs)[0]; }

  // Signals recorded but not taken (a triggered synchronizer counts as its threshold;
  // testing it consumes the trigger).
  size_t pending() {
    switch (type_) {
      case LCI_COMPLETION_QUEUE: {
        size_t len = 0;
        LCI_queue_len(h_, &len);
        return len;
      }
      case LCI_COMPLETION_SYNC:
        return LCI_sync_test(h_, nullptr) == LCI_OK ? static_cast<size_t>(threshold_) : 0;
      default: {
        std::lock_guard<std::mutex> lock(g_coll[coll_].m);
        return g_coll[coll_].reqs.size();
      }
    }
  }

 private:
  explicit comp(LCI_comp_t q) : type_(LCI_COMPLETION_QUEUE), h_(q), owned_(false) {}
  LCI_comp_type_t type_;
  int threshold_ = 1;
  LCI_comp_t h_ = nullptr;
  int coll_ = -1;
  bool owned_ = true;
};

// Data patterns: byte i of the stream `seed`.
inline uint8_t pat(uint32_t seed, size_t i) {
  uint32_t x = seed * 0x9E3779B1u ^ static_cast<uint32_t>(i) * 0x85EBCA6Bu ^
               static_cast<uint32_t>(i >> 20) * 0xC2B2AE35u;
  return static_cast<uint8_t>((x >> 24) ^ (x >> 11) ^ x);
}
inline uint32_t seed_of(uint32_t a, uint32_t b, uint32_t c = 0, uint32_t d = 0) {
  return ((a * 1000003u + b) * 1000033u + c) * 1000037u + d + 1;
}
inline void fill(void* p, size_t n, uint32_t seed) {
  auto* b = static_cast<uint8_t*>(p);
  for (size_t i = 0; i < n; ++i) b[i] = pat(seed, i);
}
// Index of the first byte that differs from the pattern, or SIZE_MAX.
inline size_t mismatch(const void* p, size_t n, uint32_t seed) {
  const auto* b = static_cast<const uint8_t*>(p);
  for (size_t i = 0; i < n; ++i)
    if (b[i] != pat(seed, i)) return i;
  return SIZE_MAX;
}
// Index of the first byte in [from, to) that is not `v`, or SIZE_MAX.
inline size_t not_byte(const void* p, size_t from, size_t to, uint8_t v) {
  const auto* b = static_cast<const uint8_t*>(p);
  for (size_t i = from; i < to; ++i)
    if (b[i] != v) return i;
  return SIZE_MAX;
}
constexpr uint8_t k_sentinel = 0xEE;

// Control channel: medium messages on LCI_UR_ENDPOINT with tags from k_ctrl_tag
// up, into a private queue. Test traffic uses tags below k_ctrl_tag.
constexpr LCI_tag_t k_ctrl_tag = 64000;
unsigned g_ctrl_seq = 0;
LCI_comp_t g_ctrl_cq = nullptr;

// Collective, one thread per rank: every rank's `len`-byte blob, by rank.
inline std::vector<std::vector<char>> allgather(const void* data, size_t len) {
  const LCI_tag_t tag = k_ctrl_tag + (g_ctrl_seq++ % 1000);
  const int n = LCI_NUM_PROCESSES;
  std::vector<std::vector<char>> out(static_cast<size_t>(n), std::vector<char>(len ? len : 1));
  for (int p = 0; p < n; ++p) {
    LCI_mbuffer_t b{out[static_cast<size_t>(p)].data(), len};
    OK(LCI_recvm(LCI_UR_ENDPOINT, b, p, tag, g_ctrl_cq, nullptr));
  }
  for (int p = 0; p < n; ++p) {
    LCI_mbuffer_t b{const_cast<void*>(data), len};
    RETRY(LCI_sendm(LCI_UR_ENDPOINT, b, p, tag));
  }
  deadline d;
  for (int got = 0; got < n;) {
    LCI_request_t r;
    if (LCI_queue_pop(g_ctrl_cq, &r) == LCI_OK) {
      if (r.flag != LCI_OK || r.data.mbuffer.length != len) die("control message broken");
      ++got;
    } else {
      progress(d, "control messages");
    }
  }
  return out;
}
inline std::vector<uint64_t> allgather_u64(uint64_t v) {
  auto blobs = allgather(&v, sizeof(v));
  std::vector<uint64_t> out;
  for (auto& b : blobs) {
    uint64_t x;
    memcpy(&x, b.data(), sizeof(x));
    out.push_back(x);
  }
  return out;
}

inline void harness_init(double watchdog_s) {
  OK(LCI_initialize());
  clean_up_shm_on_failure();
  start_watchdog(watchdog_s);
  OK(LCI_queue_create(LCI_UR_DEVICE, &g_ctrl_cq));
}
inline int harness_finish(const char* name) {
  LCI_barrier();
  LCI_queue_free(&g_ctrl_cq);
  LCI_finalize();
  if (g_failures.load()) {
    fprintf(stderr, "rank %d: %s FAILED: %ld of %ld checks\n", LCI_RANK, name, g_failures.load(),
            g_checks.load());
    return 1;
  }
  printf("rank %d: %s passed: %ld checks\n", LCI_RANK, name, g_checks.load());
  return 0;
}

// Memory registered on LCI_UR_DEVICE for as long as the object lives: what
// a put_to (LCI_putm/putmn) target or a putv/getv piggy-back buffer must be.
class registration {
 public:
  registration(void* address, size_t length) {
    OK(LCI_memory_register(LCI_UR_DEVICE, address, length, &seg_));
  }
  ~registration() { LCI_memory_deregister(&seg_); }
  registration(const registration&) = delete;
  registration& operator=(const registration&) = delete;
  LCI_segment_t segment() const { return seg_; }

 private:
  LCI_segment_t seg_ = nullptr;
};

// Long buffers of every kind a test uses. `dynamic` is the receive-only
// {address == NULL} form; `seg_all` is malloc'ed memory named LCI_SEGMENT_ALL.
enum class mem_kind { registered, lalloc, lmemalign, seg_all, dynamic };
inline const char* mem_name(mem_kind k) {
  switch (k) {
    case mem_kind::registered: return "memory_register";
    case mem_kind::lalloc: return "lbuffer_alloc";
    case mem_kind::lmemalign: return "lbuffer_memalign";
    case mem_kind::seg_all: return "SEGMENT_ALL";
    default: return "dynamic(NULL)";
  }
}
class lbuf {
 public:
  // `capacity` bytes (at least one allocated), every byte k_sentinel.
  lbuf(mem_kind kind, size_t capacity) : kind_(kind), cap_(capacity) {
    const size_t alloc = capacity ? capacity : 1;
    switch (kind) {
      case mem_kind::registered:
        raw_ = malloc(alloc);
        if (!raw_) die("malloc(%zu)", alloc);
        OK(LCI_memory_register(LCI_UR_DEVICE, raw_, alloc, &b_.segment));
        EXPECT(b_.segment != LCI_SEGMENT_ALL, "memory_register gave a NULL segment");
        b_.address = raw_;
        break;
      case mem_kind::lalloc:
        RETRY(LCI_lbuffer_alloc(LCI_UR_DEVICE, alloc, &b_));
        EXPECT(b_.length == alloc && b_.address != nullptr && b_.segment != LCI_SEGMENT_ALL,
               "lbuffer_alloc(%zu) gave {%p, %p, %zu}", alloc, (void*)b_.segment, b_.address,
               b_.length);
        break;
      case mem_kind::lmemalign:
        RETRY(LCI_lbuffer_memalign(LCI_UR_DEVICE, alloc, 4096, &b_));
        EXPECT(b_.length == alloc && b_.address != nullptr && b_.segment != LCI_SEGMENT_ALL &&
                   reinterpret_cast<uintptr_t>(b_.address) % 4096 == 0,
               "lbuffer_memalign(%zu, 4096) gave {%p, %p, %zu}", alloc, (void*)b_.segment,
               b_.address, b_.length);
        break;
      case mem_kind::seg_all:
        raw_ = malloc(alloc);
        if (!raw_) die("malloc(%zu)", alloc);
        b_.segment = LCI_SEGMENT_ALL;
        b_.address = raw_;
        break;
      case mem_kind::dynamic:
        b_.segment = LCI_SEGMENT_ALL;
        b_.address = nullptr;
        break;
    }
    orig_ = b_;
    b_.length = capacity;
    if (b_.address) memset(b_.address, k_sentinel, alloc);
  }
  lbuf(const lbuf&) = delete;
  lbuf& operator=(const lbuf&) = delete;
  ~lbuf() {
    switch (kind_) {
      case mem_kind::registered: {
        LCI_segment_t s = orig_.segment;
        EXPECT(LCI_memory_deregister(&s) == LCI_OK && s == nullptr, "memory_deregister");
        free(raw_);
        break;
      }
      case mem_kind::lalloc:
      case mem_kind::lmemalign:
        EXPECT(LCI_lbuffer_free(orig_) == LCI_OK, "lbuffer_free");
        break;
      case mem_kind::seg_all: free(raw_); break;
      default: break;
    }
  }
  mem_kind kind() const { return kind_; }
  size_t capacity() const { return cap_; }
  uint8_t* data() const { return static_cast<uint8_t*>(b_.address); }
  // The buffer as an LCI_lbuffer_t of `length` bytes (capacity by default).
  LCI_lbuffer_t view(size_t length = SIZE_MAX) const {
    LCI_lbuffer_t v = b_;
    v.length = length == SIZE_MAX ? cap_ : length;
    return v;
  }
  LCI_segment_t segment() const { return b_.segment; }

 private:
  mem_kind kind_;
  size_t cap_;
  void* raw_ = nullptr;
  LCI_lbuffer_t b_{};
  LCI_lbuffer_t orig_{};
};

inline bool same_lbuffer(const LCI_lbuffer_t& a, const LCI_lbuffer_t& b) {
  return a.segment == b.segment && a.address == b.address && a.length == b.length;
}

// A registered region of another rank: its deserialized segment, address, length.
struct remote_region {
  LCI_segment_t seg = nullptr;
  uintptr_t addr = 0;
  size_t len = 0;
};
// Collective: publishes [addr, addr+len) registered as `seg` (serialized) and
// returns every rank's region, deserialized here. Release with release_regions.
inline std::vector<remote_region> exchange_regions(LCI_segment_t seg, void* addr, size_t len) {
  struct {
    char str[256];
    uint64_t addr, len;
  } mine;
  memset(&mine, 0, sizeof(mine));
  OK(LCI_segment_serialize(seg, mine.str));
  mine.addr = reinterpret_cast<uintptr_t>(addr);
  mine.len = len;
  std::vector<remote_region> out;
  for (auto& blob : allgather(&mine, sizeof(mine))) {
    decltype(mine) theirs;
    memcpy(&theirs, blob.data(), sizeof(theirs));
    remote_region r;
    OK(LCI_segment_deserialize(theirs.str, &r.seg));
    r.addr = theirs.addr;
    r.len = theirs.len;
    out.push_back(r);
  }
  return out;
}
inline void release_regions(std::vector<remote_region>& regions) {
  for (auto& r : regions) EXPECT(LCI_memory_deregister(&r.seg) == LCI_OK && !r.seg, "deregister");
  regions.clear();
}
inline LCI_lbuffer_t remote_lbuffer(const remote_region& r, size_t offset, size_t length) {
  LCI_lbuffer_t b;
  b.segment = r.seg;
  b.address = reinterpret_cast<void*>(r.addr + offset);
  b.length = length;
  return b;
}

// Limits this process's address space to what it uses now plus `extra`
// bytes (RLIMIT_AS), so that a larger allocation fails.
inline void limit_address_space_to_current_plus(size_t extra) {
  FILE* f = fopen("/proc/self/statm", "r");
  unsigned long pages = 0;
  if (!f || fscanf(f, "%lu", &pages) != 1) die("cannot read /proc/self/statm");
  fclose(f);
  struct rlimit rl;
  rl.rlim_cur = rl.rlim_max = pages * static_cast<size_t>(sysconf(_SC_PAGESIZE)) + extra;
  if (setrlimit(RLIMIT_AS, &rl) != 0) die("setrlimit(RLIMIT_AS)");
}

}  // namespace
// ---- end of harness ----

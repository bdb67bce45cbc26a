// I/O vectors around a ring (rank r targets r+1; one rank targets itself):
// LCI_sendv/LCI_recvv with the receiver's long buffers and with
// lbuffers == NULL (LCI allocates: a C-malloc'ed piggy-back copy and array,
// LCI long buffers as elements), LCI_putva (the target gets the same),
// LCI_putv into and LCI_getv from the target's registered memory (remote
// handles from LCI_segment_deserialize) and piggy-back memory. Counts 1, 2
// and min(LCI_IOVEC_SIZE, 8); element lengths 1 ... 1 MiB; piggy-back lengths
// 0, 1 and LCI_get_iovec_piggy_back_size(count); local buffers all registered
// or all LCI_SEGMENT_ALL; queue, synchronizer and handler endpoints; target
// completions to the default object or an explicit handle. Also checks
// LCI_get_iovec_piggy_back_size. Every byte and every request field of both
// sides is checked; piggy-back memory is overwritten right after each call.
#include <dirent.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
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

// libfabric's shm provider names its files /dev/shm/<pid>:...; a process that
// ends without LCI_finalize leaves them behind, and a later process that gets
// the same pid then fails in LCI_initialize (fi_enable: EBUSY). The names are
// collected after LCI_initialize and removed when the test dies, by die(), the
// watchdog, or the SIGTERM with which lcrun ends the other ranks.
constexpr int k_max_shm_files = 8;
char g_shm_files[k_max_shm_files][300];
int g_num_shm_files = 0;
struct sigaction g_old_sigterm;

inline void collect_own_shm_files() {
  char prefix[32];
  snprintf(prefix, sizeof(prefix), "%d:", static_cast<int>(getpid()));
  if (DIR* d = opendir("/dev/shm")) {
    while (dirent* e = readdir(d)) {
      if (strncmp(e->d_name, prefix, strlen(prefix)) == 0 && g_num_shm_files < k_max_shm_files) {
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

}  // namespace
// ---- end of harness ----

namespace {

int g_me, g_n, g_right, g_left;
size_t g_page = 4096;
size_t g_stride = 0;  // bytes per element in the target region

enum class op { sendv, sendv_alloc, putva, putv, getv };
const char* op_name(op o) {
  switch (o) {
    case op::sendv: return "sendv/recvv";
    case op::sendv_alloc: return "sendv/recvv(NULL lbuffers)";
    case op::putva: return "putva";
    case op::putv: return "putv";
    default: return "getv";
  }
}

struct endpoint_under_test {
  endpoint_under_test(const char* n, LCI_comp_type_t t) : name(n), type(t) {}
  const char* name;
  LCI_comp_type_t type;
  LCI_endpoint_t ep = nullptr;
  std::unique_ptr<comp> dflt, expl;
  std::vector<uint64_t> expl_of;
};

std::unique_ptr<lbuf> g_region;         // putv/getv target long buffers
std::vector<remote_region> g_region_of;
std::vector<uint8_t> g_pb;              // putv/getv target piggy-back memory
std::vector<uint64_t> g_pb_of;

size_t element_size(int round, int i) {
  const size_t m = static_cast<size_t>(LCI_MEDIUM_SIZE);
  const size_t sizes[] = {1, g_page - 1, g_page, m + 1, size_t(1) << 20};
  return sizes[static_cast<size_t>(round + i) % 5];
}
uint32_t elem_seed(int rank, int round, int i) {
  return seed_of(static_cast<uint32_t>(rank), static_cast<uint32_t>(round),
                 static_cast<uint32_t>(i + 1));
}
uint32_t pb_seed(int rank, int round) {
  return seed_of(static_cast<uint32_t>(rank), static_cast<uint32_t>(round), 999);
}

// Local long buffers of one iovec, all registered or all LCI_SEGMENT_ALL.
struct local_iovec {
  std::vector<std::unique_ptr<lbuf>> bufs;
  std::vector<LCI_lbuffer_t> arr, passed;
  std::vector<uint8_t> pb;
  LCI_iovec_t iov{};
  local_iovec(int count, bool registered, const std::vector<size_t>& caps, size_t pbcap) {
    const mem_kind reg[] = {mem_kind::registered, mem_kind::lalloc, mem_kind::lmemalign};
    for (int i = 0; i < count; ++i) {
      bufs.emplace_back(new lbuf(registered ? reg[i % 3] : mem_kind::seg_all, caps[static_cast<size_t>(i)]));
      arr.push_back(bufs.back()->view());
    }
    pb.assign(pbcap + 16, k_sentinel);
    iov.piggy_back.address = pb.data();
    iov.piggy_back.length = pbcap;
    iov.lbuffers = arr.data();
    iov.count = count;
    passed = arr;
  }
};

// Checks that an iovec request carries exactly `iov` with the array as it was.
void check_as_passed(const LCI_iovec_t& got, const local_iovec& l, const char* side) {
  EXPECT(got.piggy_back.address == l.iov.piggy_back.address &&
             got.piggy_back.length == l.iov.piggy_back.length && got.lbuffers == l.iov.lbuffers &&
             got.count == l.iov.count,
         "%s iovec {{%p, %zu}, %p, %d}, passed {{%p, %zu}, %p, %d}", side,
         got.piggy_back.address, got.piggy_back.length, (void*)got.lbuffers, got.count,
         l.iov.piggy_back.address, l.iov.piggy_back.length, (void*)l.iov.lbuffers, l.iov.count);
  bool same = true;
  for (size_t i = 0; i < l.arr.size(); ++i) same &= same_lbuffer(l.arr[i], l.passed[i]);
  EXPECT(same, "%s: LCI changed the caller's lbuffers array", side);
}

void check_request_head(const LCI_request_t& r, int rank, LCI_tag_t tag, void* uc,
                        const char* side) {
  EXPECT(r.flag == LCI_OK, "%s flag %d", side, r.flag);
  EXPECT(r.rank == rank, "%s rank %d, expected %d", side, r.rank, rank);
  EXPECT(r.tag == tag, "%s tag %u, expected %u", side, r.tag, tag);
  EXPECT(r.type == LCI_IOVEC, "%s type %d", side, r.type);
  EXPECT(r.user_context == uc, "%s user_context %p, expected %p", side, r.user_context, uc);
}

// An iovec LCI built (putva target, recvv with NULL lbuffers): check and free.
void check_allocated(const LCI_iovec_t& v, int count, size_t pblen, int from, int round) {
  EXPECT(v.count == count, "count %d, sent %d", v.count, count);
  EXPECT(v.piggy_back.length == pblen, "piggy-back length %zu, sent %zu", v.piggy_back.length,
         pblen);
  if (pblen) EXPECT(v.piggy_back.address != nullptr, "no piggy-back copy");
  if (v.piggy_back.address && v.piggy_back.length == pblen)
    EXPECT(mismatch(v.piggy_back.address, pblen, pb_seed(from, round)) == SIZE_MAX,
           "piggy-back bytes differ");
  EXPECT(v.lbuffers != nullptr, "no lbuffers array");
  if (v.lbuffers && v.count == count) {
    for (int i = 0; i < count; ++i) {
      const LCI_lbuffer_t& b = v.lbuffers[i];
      const size_t size = element_size(round, i);
      EXPECT(b.length == size && b.address != nullptr, "element %d {%p, %zu}, sent %zu bytes", i,
             b.address, b.length, size);
      if (b.address && b.length == size)
        EXPECT(mismatch(b.address, size, elem_seed(from, round, i)) == SIZE_MAX,
               "element %d bytes differ", i);
      EXPECT(LCI_lbuffer_free(b) == LCI_OK, "lbuffer_free of element %d", i);
    }
  }
  free(v.piggy_back.address);
  free(v.lbuffers);
}

void one_round(endpoint_under_test& e, op o, int count, bool explicit_comp, bool late, int round) {
  const bool registered = (round + round / 8) % 2 == 0;
  const size_t pbmax = LCI_get_iovec_piggy_back_size(count);
  const size_t pbl_choices[] = {0, 1, pbmax};
  const size_t pblen = pbl_choices[(round / 2) % 3];
  phase("%s, %s endpoint, count %d, piggy-back %zu, %s local buffers%s%s", op_name(o), e.name,
        count, pblen, registered ? "registered" : "SEGMENT_ALL",
        o == op::sendv || o == op::sendv_alloc ? "" : explicit_comp ? ", explicit" : ", default",
        late ? ", receive after arrival" : "");
  const LCI_tag_t tag = static_cast<LCI_tag_t>(round % 60000);
  const uintptr_t remote = explicit_comp ? e.expl_of[static_cast<size_t>(g_right)]
                                         : static_cast<uintptr_t>(LCI_DEFAULT_COMP_REMOTE);
  std::vector<size_t> sizes;
  for (int i = 0; i < count; ++i) sizes.push_back(element_size(round, i));

  // getv: the owner prepares the memory to be read.
  if (o == op::getv) {
    for (int i = 0; i < count; ++i)
      fill(g_region->data() + static_cast<size_t>(i) * g_stride, sizes[static_cast<size_t>(i)],
           elem_seed(g_me, round, i));
    fill(g_pb.data(), pblen, pb_seed(g_me, round));
  }

  // The receive side of sendv.
  comp rc(e.type);
  std::unique_ptr<local_iovec> rv;
  auto post = [&] {
    if (o == op::sendv) {
      std::vector<size_t> caps;
      for (size_t s : sizes) caps.push_back(s + 32);
      rv.reset(new local_iovec(count, !registered, caps, pbmax));
      OK(LCI_recvv(e.ep, rv->iov, g_left, tag, rc.handle(), rv.get()));
    } else if (o == op::sendv_alloc) {
      LCI_iovec_t none{};
      OK(LCI_recvv(e.ep, none, g_left, tag, rc.handle(), &rc));
    }
  };
  if (!late) post();
  LCI_barrier();

  // Origin.
  comp lc(e.type);
  std::vector<size_t> local_caps = sizes;
  if (o == op::getv) local_caps[0] += 64;  // local may be longer than remote
  local_iovec lv(count, registered, local_caps, pblen);
  lv.iov.piggy_back.length = pblen;
  if (o != op::getv) {
    for (int i = 0; i < count; ++i)
      fill(lv.bufs[static_cast<size_t>(i)]->data(), sizes[static_cast<size_t>(i)], elem_seed(g_me, round, i));
    fill(lv.pb.data(), pblen, pb_seed(g_me, round));
    for (int i = 0; i < count; ++i) lv.arr[static_cast<size_t>(i)].length = sizes[static_cast<size_t>(i)];
    lv.passed = lv.arr;
  }
  std::vector<LCI_lbuffer_t> rarr;
  LCI_iovec_t riov{};
  if (o == op::putv || o == op::getv) {
    const remote_region& rr = g_region_of[static_cast<size_t>(g_right)];
    for (int i = 0; i < count; ++i)
      rarr.push_back(remote_lbuffer(rr, static_cast<size_t>(i) * g_stride,
                                    o == op::putv ? g_stride : sizes[static_cast<size_t>(i)]));
    riov.piggy_back.address = reinterpret_cast<void*>(g_pb_of[static_cast<size_t>(g_right)]);
    riov.piggy_back.length = o == op::putv ? g_pb.size() : pblen;
    riov.lbuffers = rarr.data();
    riov.count = count;
  }
  switch (o) {
    case op::sendv:
    case op::sendv_alloc:
      RETRY(LCI_sendv(e.ep, lv.iov, g_right, tag, lc.handle(), &lv));
      break;
    case op::putva: RETRY(LCI_putva(e.ep, lv.iov, lc.handle(), g_right, tag, remote, &lv)); break;
    case op::putv: RETRY(LCI_putv(e.ep, lv.iov, lc.handle(), g_right, tag, riov, remote, &lv)); break;
    case op::getv: RETRY(LCI_getv(e.ep, lv.iov, lc.handle(), g_right, tag, riov, remote, &lv)); break;
  }
  // Piggy-back memory is the caller's again at return (sends and puts).
  if (o != op::getv) memset(lv.pb.data(), 0x11, lv.pb.size());
  if (late) {
    deadline d(0.005);
    while (!d.passed()) LCI_progress(LCI_UR_DEVICE);
    post();
  }

  // Target / receiver.
  if (o == op::sendv || o == op::sendv_alloc) {
    const LCI_request_t r = rc.take1("the recvv completion");
    check_request_head(r, g_left, tag, o == op::sendv ? static_cast<void*>(rv.get()) : &rc, "recvv");
    const LCI_iovec_t& v = r.data.iovec;
    if (o == op::sendv_alloc) {
      check_allocated(v, count, pblen, g_left, round);
    } else {
      EXPECT(v.piggy_back.address == rv->pb.data() && v.piggy_back.length == pblen,
             "recvv piggy-back {%p, %zu}, expected {%p, %zu}", v.piggy_back.address,
             v.piggy_back.length, (void*)rv->pb.data(), pblen);
      EXPECT(v.lbuffers == rv->arr.data() && v.count == count, "recvv array %p/%d, posted %p/%d",
             (void*)v.lbuffers, v.count, (void*)rv->arr.data(), count);
      EXPECT(mismatch(rv->pb.data(), pblen, pb_seed(g_left, round)) == SIZE_MAX,
             "recvv piggy-back bytes differ");
      EXPECT(not_byte(rv->pb.data(), pblen, rv->pb.size(), k_sentinel) == SIZE_MAX,
             "recvv wrote past the piggy-back length");
      for (int i = 0; i < count; ++i) {
        const size_t k = static_cast<size_t>(i);
        EXPECT(rv->arr[k].length == sizes[k], "recvv element %d length %zu, sent %zu", i,
               rv->arr[k].length, sizes[k]);
        EXPECT(rv->arr[k].segment == rv->passed[k].segment &&
                   rv->arr[k].address == rv->passed[k].address,
               "recvv element %d buffer changed", i);
        EXPECT(mismatch(rv->bufs[k]->data(), sizes[k], elem_seed(g_left, round, i)) == SIZE_MAX,
               "recvv element %d bytes differ", i);
        EXPECT(not_byte(rv->bufs[k]->data(), sizes[k], sizes[k] + 32, k_sentinel) == SIZE_MAX,
               "recvv wrote past element %d", i);
      }
    }
  } else {
    comp& tc = explicit_comp ? *e.expl : *e.dflt;
    const LCI_request_t r = tc.take1("the target completion");
    check_request_head(r, g_left, tag, nullptr, "target");
    const LCI_iovec_t& v = r.data.iovec;
    if (o == op::putva) {
      check_allocated(v, count, pblen, g_left, round);
    } else {
      EXPECT(v.count == count, "target count %d", v.count);
      EXPECT(v.piggy_back.address == g_pb.data(), "target piggy-back address %p, expected %p",
             v.piggy_back.address, (void*)g_pb.data());
      EXPECT(v.piggy_back.length == pblen, "target piggy-back length %zu, expected %zu",
             v.piggy_back.length, pblen);
      if (o == op::putv) {
        EXPECT(mismatch(g_pb.data(), pblen, pb_seed(g_left, round)) == SIZE_MAX,
               "putv piggy-back bytes differ");
        EXPECT(not_byte(g_pb.data(), pblen, g_pb.size(), k_sentinel) == SIZE_MAX,
               "putv wrote past the piggy-back length");
      }
      EXPECT(v.lbuffers != nullptr, "target array missing");
      if (v.lbuffers && v.count == count) {
        for (int i = 0; i < count; ++i) {
          const size_t k = static_cast<size_t>(i);
          uint8_t* where = g_region->data() + k * g_stride;
          const LCI_lbuffer_t& b = v.lbuffers[i];
          EXPECT(b.segment == g_region->segment() && b.address == where && b.length == sizes[k],
                 "target element %d {%p, %p, %zu}, expected {%p, %p, %zu}", i, (void*)b.segment,
                 b.address, b.length, (void*)g_region->segment(), (void*)where, sizes[k]);
          if (o == op::putv) {
            EXPECT(mismatch(where, sizes[k], elem_seed(g_left, round, i)) == SIZE_MAX,
                   "putv element %d bytes differ", i);
            EXPECT(not_byte(where, sizes[k], g_stride, k_sentinel) == SIZE_MAX,
                   "putv wrote past element %d", i);
          }
        }
      }
      free(v.lbuffers);
    }
  }

  // Origin completion.
  const LCI_request_t l = lc.take1("the origin completion");
  check_request_head(l, g_right, tag, &lv, "origin");
  check_as_passed(l.data.iovec, lv, "origin");
  if (o == op::getv) {
    for (int i = 0; i < count; ++i) {
      const size_t k = static_cast<size_t>(i);
      EXPECT(mismatch(lv.bufs[k]->data(), sizes[k], elem_seed(g_right, round, i)) == SIZE_MAX,
             "getv element %d bytes differ", i);
      EXPECT(not_byte(lv.bufs[k]->data(), sizes[k], local_caps[k], k_sentinel) == SIZE_MAX,
             "getv wrote past element %d", i);
    }
    EXPECT(mismatch(lv.pb.data(), pblen, pb_seed(g_right, round)) == SIZE_MAX,
           "getv piggy-back bytes differ");
    EXPECT(not_byte(lv.pb.data(), pblen, lv.pb.size(), k_sentinel) == SIZE_MAX,
           "getv wrote past the piggy-back length");
  }
  EXPECT(lc.pending() == 0 && rc.pending() == 0, "extra completions");
  LCI_barrier();
  for (int i = 0; i < count; ++i)
    memset(g_region->data() + static_cast<size_t>(i) * g_stride, k_sentinel, g_stride);
  std::fill(g_pb.begin(), g_pb.end(), k_sentinel);
}

// Everything LCI-owned lives inside run(), released before LCI_finalize.
void run() {
  g_me = LCI_RANK;
  g_n = LCI_NUM_PROCESSES;
  g_right = (g_me + 1) % g_n;
  g_left = (g_me + g_n - 1) % g_n;
  g_page = static_cast<size_t>(sysconf(_SC_PAGESIZE));

  phase("LCI_get_iovec_piggy_back_size");
  EXPECT(LCI_IOVEC_SIZE >= 1, "LCI_IOVEC_SIZE %d", LCI_IOVEC_SIZE);
  std::vector<uint64_t> pbs;
  for (int c = 1; c <= LCI_IOVEC_SIZE; ++c) {
    const size_t s = LCI_get_iovec_piggy_back_size(c);
    EXPECT(s >= 1, "LCI_get_iovec_piggy_back_size(%d) = %zu", c, s);
    EXPECT(s <= static_cast<size_t>(LCI_MEDIUM_SIZE), "LCI_get_iovec_piggy_back_size(%d) = %zu", c, s);
    if (!pbs.empty()) EXPECT(s <= pbs.back(), "LCI_get_iovec_piggy_back_size grows at %d", c);
    pbs.push_back(s);
  }
  uint64_t sum = LCI_IOVEC_SIZE;
  for (uint64_t s : pbs) sum = sum * 1000003u + s;
  for (uint64_t other : allgather_u64(sum))
    EXPECT(other == sum, "LCI_IOVEC_SIZE or piggy-back sizes differ between ranks");

  const int cmax = std::min(LCI_IOVEC_SIZE, 8);
  g_stride = (size_t(1) << 20) + g_page;
  g_region.reset(new lbuf(mem_kind::lalloc, static_cast<size_t>(cmax) * g_stride));
  g_region_of = exchange_regions(g_region->segment(), g_region->data(), g_region->capacity());
  g_pb.assign(LCI_get_iovec_piggy_back_size(1) + 64, k_sentinel);
  g_pb_of = allgather_u64(reinterpret_cast<uintptr_t>(g_pb.data()));

  std::vector<endpoint_under_test> eps;
  eps.emplace_back("LCI_UR_ENDPOINT", LCI_COMPLETION_QUEUE);
  eps.back().ep = LCI_UR_ENDPOINT;
  eps.back().dflt = comp::borrow_queue(LCI_UR_CQ);
  eps.back().expl.reset(new comp(LCI_COMPLETION_QUEUE));
  for (LCI_comp_type_t t : {LCI_COMPLETION_QUEUE, LCI_COMPLETION_SYNC, LCI_COMPLETION_HANDLER}) {
    eps.emplace_back(comp_name(t), t);
    endpoint_under_test& e = eps.back();
    e.dflt.reset(new comp(t));
    e.expl.reset(new comp(t));
    LCI_plist_t plist;
    OK(LCI_plist_create(&plist));
    OK(LCI_plist_set_comp_type(plist, LCI_PORT_COMMAND, t));
    OK(LCI_plist_set_comp_type(plist, LCI_PORT_MESSAGE, t));
    OK(LCI_plist_set_default_comp(plist, e.dflt->handle()));
    OK(LCI_endpoint_init(&e.ep, LCI_UR_DEVICE, plist));
    LCI_plist_free(&plist);
  }
  for (auto& e : eps) e.expl_of = allgather_u64(e.expl->remote());

  std::vector<int> counts = {1, 2, cmax};
  counts.erase(std::unique(counts.begin(), counts.end()), counts.end());
  int round = 0;
  for (auto& e : eps)
    for (int count : counts) {
      for (bool late : {false, true}) one_round(e, op::sendv, count, false, late, round++);
      one_round(e, op::sendv_alloc, count, false, count == 2, round);
      ++round;
      for (op o : {op::putva, op::putv, op::getv})
        for (bool expl : {false, true}) one_round(e, o, count, expl, false, round++);
      if (g_failures.load() > 40) return;
    }
  for (size_t i = 1; i < eps.size(); ++i) LCI_endpoint_free(&eps[i].ep);
  release_regions(g_region_of);
  LCI_barrier();
  g_region.reset();

}

}  // namespace

int main() {
  harness_init(240);
  run();
  return harness_finish("iovec");
}

// Long two-sided messages, LCI_sendl/LCI_recvl, around a ring (rank r sends
// to r+1 and receives from r-1; one rank talks to itself).
//
// A round is one endpoint (rank+tag or tag matching; queue, synchronizer or
// handler completion on each port) and one order (receives posted before the
// messages are sent, or after they arrived). In a round every size (0, 1,
// page-1, page, LCI_MEDIUM_SIZE+1, 1 MiB; 64 MiB with --big) travels with
// every pairing of buffer kinds: LCI_memory_register'ed, LCI_lbuffer_alloc,
// LCI_lbuffer_memalign and LCI_SEGMENT_ALL on both sides, plus NULL receive
// addresses (LCI allocates, the receiver frees with LCI_lbuffer_free).
// Receive buffers are 100 bytes larger than the message; those bytes must stay
// untouched. Every byte and every request field of both sides is checked.
//
// usage: long_two_sided [--big] [--split] [--quick]
//   --big    adds 64 MiB messages to two rounds
//   --split  sizes around 1002 and 1 MiB; needs LCI_MAX_SINGLE_MESSAGE_SIZE=1002
//   --quick  only the rounds with the same completion type on both ports
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

// One message: how it is sent and received, and what came back.
struct slot {
  size_t size = 0;
  mem_kind skind = mem_kind::seg_all, rkind = mem_kind::seg_all;
  int peer = 0;
  LCI_tag_t tag = 0;
  uint32_t seed = 0;
  std::unique_ptr<lbuf> buf;
  LCI_lbuffer_t passed{};
  int done = 0;
};

struct round_spec {
  LCI_match_t match;
  LCI_comp_type_t cmd, msg;
  bool late;
  bool big;
};

size_t g_page = 4096;
bool g_split = false;

std::vector<size_t> sizes() {
  const size_t m = static_cast<size_t>(LCI_MEDIUM_SIZE);
  if (g_split) return {0, 1, 1001, 1002, 1003, 2004, 2005, g_page, m + 1, 1 << 20};
  return {0, 1, g_page - 1, g_page, m + 1, 1 << 20};
}

// (send kind, receive kind): every kind on both sides, NULL receives twice.
const std::pair<mem_kind, mem_kind> k_pairs[] = {
    {mem_kind::registered, mem_kind::registered}, {mem_kind::lalloc, mem_kind::dynamic},
    {mem_kind::lmemalign, mem_kind::seg_all},     {mem_kind::seg_all, mem_kind::lalloc},
    {mem_kind::seg_all, mem_kind::dynamic},       {mem_kind::registered, mem_kind::lmemalign},
};

void make_slots(const round_spec& rs, int round, std::vector<slot>& sends,
                std::vector<slot>& recvs) {
  const int me = LCI_RANK, n = LCI_NUM_PROCESSES;
  const int right = (me + 1) % n, left = (me + n - 1) % n;
  std::vector<std::pair<size_t, std::pair<mem_kind, mem_kind>>> list;
  for (size_t s : sizes())
    for (auto& p : k_pairs) list.push_back({s, p});
  if (rs.big) {
    list.push_back({size_t(64) << 20, {mem_kind::registered, mem_kind::registered}});
    list.push_back({size_t(64) << 20, {mem_kind::seg_all, mem_kind::dynamic}});
  }
  sends.resize(list.size());
  recvs.resize(list.size());
  for (size_t i = 0; i < list.size(); ++i) {
    for (int side = 0; side < 2; ++side) {
      slot& s = side ? recvs[i] : sends[i];
      s.size = list[i].first;
      s.skind = list[i].second.first;
      s.rkind = list[i].second.second;
      s.peer = side ? left : right;
      const int src = side ? left : me;
      s.tag = static_cast<LCI_tag_t>(src * 128 + static_cast<int>(i));
      s.seed = seed_of(static_cast<uint32_t>(src), static_cast<uint32_t>(round),
                       static_cast<uint32_t>(i));
    }
  }
}

void post_receives(const round_spec& rs, LCI_endpoint_t ep, comp& c, std::vector<slot>& recvs) {
  for (auto& s : recvs) {
    // Larger than the message: the bytes past it must stay untouched.
    s.buf.reset(new lbuf(s.rkind, s.size + 100));
    s.passed = s.rkind == mem_kind::dynamic ? s.buf->view(0) : s.buf->view();
    const int from = rs.match == LCI_MATCH_TAG ? LCI_RANK_ANY : s.peer;
    EXPECT(LCI_recvl(ep, s.passed, from, s.tag, c.handle(), &s) == LCI_OK, "recvl");
  }
}

void send_all(LCI_endpoint_t ep, comp& c, std::vector<slot>& sends) {
  for (auto& s : sends) {
    s.buf.reset(new lbuf(s.skind, s.size));
    fill(s.buf->data(), s.size, s.seed);
    s.passed = s.buf->view(s.size);
    RETRY(LCI_sendl(ep, s.passed, s.peer, s.tag, c.handle(), &s));
  }
}

// Matches each request to its slot through user_context.
slot* owner(const LCI_request_t& r, std::vector<slot>& slots) {
  auto* s = static_cast<slot*>(r.user_context);
  const bool ours = s >= slots.data() && s < slots.data() + slots.size();
  EXPECT(ours, "user_context %p is not one of ours", r.user_context);
  if (!ours) return nullptr;
  EXPECT(s->done == 0, "tag %u completed twice", s->tag);
  ++s->done;
  return s;
}

void check_receives(const std::vector<LCI_request_t>& reqs, std::vector<slot>& recvs) {
  for (const auto& r : reqs) {
    slot* s = owner(r, recvs);
    if (!s) continue;
    const LCI_lbuffer_t& got = r.data.lbuffer;
    EXPECT(r.flag == LCI_OK, "recv flag %d", r.flag);
    EXPECT(r.rank == s->peer, "recv rank %d, expected %d", r.rank, s->peer);
    EXPECT(r.tag == s->tag, "recv tag %u, expected %u", r.tag, s->tag);
    EXPECT(r.type == LCI_LONG, "recv type %d", r.type);
    EXPECT(got.length == s->size, "recv length %zu, sent %zu (%s -> %s)", got.length, s->size,
           mem_name(s->skind), mem_name(s->rkind));
    if (s->rkind == mem_kind::dynamic) {
      EXPECT(s->size == 0 || got.address != nullptr, "NULL receive delivered no buffer");
      if (got.address && got.length == s->size) {
        size_t bad = mismatch(got.address, s->size, s->seed);
        EXPECT(bad == SIZE_MAX, "%zu bytes into an LCI buffer differ at %zu", s->size, bad);
      }
      EXPECT(LCI_lbuffer_free(got) == LCI_OK, "lbuffer_free of a received buffer");
    } else {
      EXPECT(got.segment == s->passed.segment && got.address == s->passed.address,
             "recv buffer {%p, %p}, posted {%p, %p}", (void*)got.segment, got.address,
             (void*)s->passed.segment, s->passed.address);
      size_t bad = mismatch(s->buf->data(), s->size, s->seed);
      EXPECT(bad == SIZE_MAX, "%zu bytes %s -> %s differ at %zu", s->size, mem_name(s->skind),
             mem_name(s->rkind), bad);
      bad = not_byte(s->buf->data(), s->size, s->buf->capacity(), k_sentinel);
      EXPECT(bad == SIZE_MAX, "byte %zu past a %zu-byte message was written", bad, s->size);
    }
  }
}

void check_sends(const std::vector<LCI_request_t>& reqs, std::vector<slot>& sends) {
  for (const auto& r : reqs) {
    slot* s = owner(r, sends);
    if (!s) continue;
    EXPECT(r.flag == LCI_OK, "send flag %d", r.flag);
    EXPECT(r.rank == s->peer, "send rank %d, expected %d", r.rank, s->peer);
    EXPECT(r.tag == s->tag, "send tag %u, expected %u", r.tag, s->tag);
    EXPECT(r.type == LCI_LONG, "send type %d", r.type);
    EXPECT(same_lbuffer(r.data.lbuffer, s->passed),
           "send completion buffer {%p, %p, %zu}, passed {%p, %p, %zu}",
           (void*)r.data.lbuffer.segment, r.data.lbuffer.address, r.data.lbuffer.length,
           (void*)s->passed.segment, s->passed.address, s->passed.length);
    EXPECT(mismatch(s->buf->data(), s->size, s->seed) == SIZE_MAX, "the send buffer changed");
  }
}

void run_round(const round_spec& rs, int round) {
  phase("round %d: %s match, command %s, message %s, receive %s%s", round,
        rs.match == LCI_MATCH_TAG ? "tag" : "rank+tag", comp_name(rs.cmd), comp_name(rs.msg),
        rs.late ? "after arrival" : "first", rs.big ? ", 64 MiB" : "");
  LCI_plist_t plist;
  OK(LCI_plist_create(&plist));
  OK(LCI_plist_set_match_type(plist, rs.match));
  OK(LCI_plist_set_comp_type(plist, LCI_PORT_COMMAND, rs.cmd));
  OK(LCI_plist_set_comp_type(plist, LCI_PORT_MESSAGE, rs.msg));
  LCI_endpoint_t ep;
  OK(LCI_endpoint_init(&ep, LCI_UR_DEVICE, plist));
  LCI_plist_free(&plist);

  std::vector<slot> sends, recvs;
  make_slots(rs, round, sends, recvs);
  comp rc(rs.msg, static_cast<int>(recvs.size())), sc(rs.cmd, static_cast<int>(sends.size()));
  if (!rs.late) {
    post_receives(rs, ep, rc, recvs);
    LCI_barrier();
    send_all(ep, sc, sends);
  } else {
    send_all(ep, sc, sends);
    LCI_barrier();
    // Let the ready-to-send messages arrive before the receives exist.
    deadline d(0.005);
    while (!d.passed()) LCI_progress(LCI_UR_DEVICE);
    post_receives(rs, ep, rc, recvs);
  }
  check_receives(rc.take(recvs.size(), "long receives"), recvs);
  check_sends(sc.take(sends.size(), "long send completions"), sends);
  EXPECT(rc.pending() == 0, "extra receive completions");
  EXPECT(sc.pending() == 0, "extra send completions");
  LCI_barrier();
  recvs.clear();
  sends.clear();
  LCI_endpoint_free(&ep);
}

}  // namespace

int main(int argc, char** argv) {
  bool big = false, quick = false;
  for (int i = 1; i < argc; ++i) {
    if (!strcmp(argv[i], "--big")) big = true;
    else if (!strcmp(argv[i], "--split")) g_split = true;
    else if (!strcmp(argv[i], "--quick")) quick = true;
    else {
      fprintf(stderr, "usage: long_two_sided [--big] [--split] [--quick]\n");
      return 2;
    }
  }
  harness_init(240);
  g_page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  if (g_split && LCI_MAX_SINGLE_MESSAGE_SIZE != 1002)
    die("--split needs LCI_MAX_SINGLE_MESSAGE_SIZE=1002 (it is %zu)", LCI_MAX_SINGLE_MESSAGE_SIZE);

  const std::pair<LCI_comp_type_t, LCI_comp_type_t> ports[] = {
      {LCI_COMPLETION_QUEUE, LCI_COMPLETION_QUEUE},     {LCI_COMPLETION_SYNC, LCI_COMPLETION_SYNC},
      {LCI_COMPLETION_HANDLER, LCI_COMPLETION_HANDLER}, {LCI_COMPLETION_QUEUE, LCI_COMPLETION_SYNC},
      {LCI_COMPLETION_SYNC, LCI_COMPLETION_HANDLER},    {LCI_COMPLETION_HANDLER, LCI_COMPLETION_QUEUE},
  };
  int round = 0;
  for (LCI_match_t match : {LCI_MATCH_RANKTAG, LCI_MATCH_TAG})
    for (auto& p : ports) {
      if (quick && p.first != p.second) continue;
      for (bool late : {false, true}) {
        const bool with_big = big && (round == 0 || round == 13);
        run_round({match, p.first, p.second, late, with_big}, round);
        ++round;
        if (g_failures.load()) break;
      }
    }
  return harness_finish("long_two_sided");
}

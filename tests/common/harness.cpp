// Definitions of the integration-test harness (harness.hpp): failure
// reporting, shm clean-up on abnormal exits, the watchdog, completion
// objects, the control channel and the buffer helpers. Compiled once into
// lci_test_harness; its state is one set of globals per process.
#include "harness.hpp"

#include <dirent.h>
#include <unistd.h>

#include <cerrno>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>

namespace lci_test {

std::atomic<long> g_failures{0};
std::atomic<long> g_checks{0};
thread_local char t_phase[256] = "start";
LCI_comp_t g_ctrl_cq = nullptr;

namespace {

std::mutex g_phase_m;
char g_phase[256] = "start";

// The file name of a __FILE__ path (its directories dropped).
const char* base_name(const char* path) {
  const char* slash = strrchr(path, '/');
  return slash ? slash + 1 : path;
}

// The shm regions of this process are /dev/shm/lci-<pid>-<random> (LCI's
// names) or /dev/shm/<pid>:... (libfabric's own, for endpoints LCI did not
// name). exit() removes them, but die(), the watchdog and the SIGTERM with
// which lcrun ends the other ranks leave by _exit or a signal, so their names
// are collected after LCI_initialize and removed on those paths.
constexpr int k_max_shm_files = 8;
char g_shm_files[k_max_shm_files][300];
int g_num_shm_files = 0;
struct sigaction g_old_sigterm;

void collect_own_shm_files() {
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

void on_sigterm(int sig, siginfo_t* info, void* ctx) {
  remove_own_shm_files();
  if (g_old_sigterm.sa_flags & SA_SIGINFO) {
    if (g_old_sigterm.sa_sigaction) g_old_sigterm.sa_sigaction(sig, info, ctx);
  } else if (g_old_sigterm.sa_handler != SIG_DFL && g_old_sigterm.sa_handler != SIG_IGN) {
    g_old_sigterm.sa_handler(sig);
  }
  signal(SIGTERM, SIG_DFL);
  raise(SIGTERM);
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

unsigned g_ctrl_seq = 0;

}  // namespace

void phase(const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(t_phase, sizeof(t_phase), fmt, ap);
  va_end(ap);
  std::lock_guard<std::mutex> lock(g_phase_m);
  memcpy(g_phase, t_phase, sizeof(g_phase));
}

void report_failure(const char* file, int line, const char* cond, const char* fmt, ...) {
  const long n = g_failures.fetch_add(1);
  if (n >= k_max_reported_failures) return;
  // One buffer, one write: lines of concurrent threads do not interleave.
  char msg[1024];
  int len = snprintf(msg, sizeof(msg), "rank %d: %s:%d: check failed: %s [%s]: ", LCI_RANK,
                     base_name(file), line, cond, t_phase);
  if (len < 0) len = 0;
  if (static_cast<size_t>(len) < sizeof(msg)) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg + len, sizeof(msg) - static_cast<size_t>(len), fmt, ap);
    va_end(ap);
  }
  fprintf(stderr, "%s%s\n", msg,
          n + 1 == k_max_reported_failures ? " (further failed checks are counted only)" : "");
}

void remove_own_shm_files() {
  for (int i = 0; i < g_num_shm_files; ++i) unlink(g_shm_files[i]);
}

void clean_up_shm_on_failure() {
  collect_own_shm_files();
  struct sigaction sa;
  memset(&sa, 0, sizeof(sa));
  sa.sa_sigaction = on_sigterm;
  sa.sa_flags = SA_SIGINFO;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGTERM, &sa, &g_old_sigterm);
}

void die(const char* fmt, ...) {
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

void start_watchdog(double seconds) {
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

void progress(const deadline& d, const char* what) {
  if (LCI_progress(LCI_UR_DEVICE) != LCI_OK) std::this_thread::yield();
  d.check(what);
}

void ok(LCI_error_t rc, const char* call) {
  if (rc == LCI_ERR_FEATURE_NA) die("%s: not implemented (LCI_ERR_FEATURE_NA)", call);
  if (rc != LCI_OK) die("%s returned %d", call, static_cast<int>(rc));
}

const char* comp_name(LCI_comp_type_t t) {
  switch (t) {
    case LCI_COMPLETION_QUEUE: return "queue";
    case LCI_COMPLETION_SYNC: return "sync";
    case LCI_COMPLETION_HANDLER: return "handler";
    default: return "none";
  }
}

void thread_barrier::wait() {
  std::unique_lock<std::mutex> lock(m_);
  const int gen = gen_;
  if (++count_ == n_) {
    count_ = 0;
    ++gen_;
    cv_.notify_all();
  } else {
    cv_.wait(lock, [&] { return gen != gen_; });
  }
}

comp::comp(LCI_comp_type_t type, int threshold) : type_(type), threshold_(threshold) {
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

std::unique_ptr<comp> comp::borrow_queue(LCI_comp_t q) {
  return std::unique_ptr<comp>(new comp(q));
}

comp::~comp() {
  if (!owned_) return;
  if (type_ == LCI_COMPLETION_QUEUE) LCI_queue_free(&h_);
  if (type_ == LCI_COMPLETION_SYNC) LCI_sync_free(&h_);
  if (type_ == LCI_COMPLETION_HANDLER) {
    std::lock_guard<std::mutex> lock(g_coll_alloc_m);
    g_coll_used[coll_] = false;  // (LCI keeps the handler: late calls land here)
  }
}

std::vector<LCI_request_t> comp::take(size_t n, const char* what, double secs) {
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

size_t comp::pending() {
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

void fill(void* p, size_t n, uint32_t seed) {
  auto* b = static_cast<uint8_t*>(p);
  for (size_t i = 0; i < n; ++i) b[i] = pat(seed, i);
}

size_t mismatch(const void* p, size_t n, uint32_t seed) {
  const auto* b = static_cast<const uint8_t*>(p);
  for (size_t i = 0; i < n; ++i)
    if (b[i] != pat(seed, i)) return i;
  return SIZE_MAX;
}

size_t not_byte(const void* p, size_t from, size_t to, uint8_t v) {
  const auto* b = static_cast<const uint8_t*>(p);
  for (size_t i = from; i < to; ++i)
    if (b[i] != v) return i;
  return SIZE_MAX;
}

std::vector<std::vector<char>> allgather(const void* data, size_t len) {
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

std::vector<endpoint_under_test> endpoints_under_test() {
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
  return eps;
}

std::vector<uint64_t> allgather_u64(uint64_t v) {
  auto blobs = allgather(&v, sizeof(v));
  std::vector<uint64_t> out;
  for (auto& b : blobs) {
    uint64_t x;
    memcpy(&x, b.data(), sizeof(x));
    out.push_back(x);
  }
  return out;
}

void harness_init(double watchdog_s) {
  OK(LCI_initialize());
  clean_up_shm_on_failure();
  start_watchdog(watchdog_s);
  OK(LCI_queue_create(LCI_UR_DEVICE, &g_ctrl_cq));
}

int report(const char* name) {
  if (g_failures.load()) {
    fprintf(stderr, "rank %d: %s FAILED: %ld of %ld checks\n", LCI_RANK, name, g_failures.load(),
            g_checks.load());
    return 1;
  }
  printf("rank %d: %s passed: %ld checks\n", LCI_RANK, name, g_checks.load());
  return 0;
}

int harness_finish(const char* name) {
  LCI_barrier();
  LCI_queue_free(&g_ctrl_cq);
  LCI_finalize();
  return report(name);
}

registration::registration(void* address, size_t length) {
  OK(LCI_memory_register(LCI_UR_DEVICE, address, length, &seg_));
}

registration::~registration() { LCI_memory_deregister(&seg_); }

const char* mem_name(mem_kind k) {
  switch (k) {
    case mem_kind::registered: return "memory_register";
    case mem_kind::lalloc: return "lbuffer_alloc";
    case mem_kind::lmemalign: return "lbuffer_memalign";
    case mem_kind::seg_all: return "SEGMENT_ALL";
    default: return "dynamic(NULL)";
  }
}

lbuf::lbuf(mem_kind kind, size_t capacity) : kind_(kind), cap_(capacity) {
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

lbuf::~lbuf() {
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

marker_dir::marker_dir(const char* prefix)
    : dir_(std::string(prefix) + "." + std::to_string(getppid())) {
  if (mkdir(dir_.c_str(), 0700) != 0 && errno != EEXIST) die("cannot create %s", dir_.c_str());
}

void marker_dir::touch(const char* name) const {
  FILE* f = std::fopen(path(name).c_str(), "w");
  if (!f) die("cannot create %s", path(name).c_str());
  std::fclose(f);
}

bool marker_dir::exists(const char* name) const {
  struct stat st;
  return stat(path(name).c_str(), &st) == 0;
}

void marker_dir::remove() const {
  if (DIR* dir = opendir(dir_.c_str())) {
    while (const dirent* e = readdir(dir))
      if (e->d_name[0] != '.') unlink(path(e->d_name).c_str());
    closedir(dir);
  }
  rmdir(dir_.c_str());
}

std::vector<remote_region> exchange_regions(LCI_segment_t seg, void* addr, size_t len) {
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

void release_regions(std::vector<remote_region>& regions) {
  for (auto& r : regions) EXPECT(LCI_memory_deregister(&r.seg) == LCI_OK && !r.seg, "deregister");
  regions.clear();
}

LCI_lbuffer_t remote_lbuffer(const remote_region& r, size_t offset, size_t length) {
  LCI_lbuffer_t b;
  b.segment = r.seg;
  b.address = reinterpret_cast<void*>(r.addr + offset);
  b.length = length;
  return b;
}

void limit_address_space_to_current_plus(size_t extra) {
  FILE* f = fopen("/proc/self/statm", "r");
  unsigned long pages = 0;
  if (!f || fscanf(f, "%lu", &pages) != 1) die("cannot read /proc/self/statm");
  fclose(f);
  struct rlimit rl;
  rl.rlim_cur = rl.rlim_max = pages * static_cast<size_t>(sysconf(_SC_PAGESIZE)) + extra;
  if (setrlimit(RLIMIT_AS, &rl) != 0) die("setrlimit(RLIMIT_AS)");
}

}  // namespace lci_test

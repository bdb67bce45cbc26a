// The harness of the multi-process integration programs (built once, as the
// static library lci_test_harness): EXPECT (record a failed check with its
// file, line, condition, the thread's phase and a message, and go on), die()
// (end the rank at once), bounded waits and a watchdog, completion objects of
// every kind, data patterns, a control channel (allgather) between ranks,
// long buffers of every kind and exchanged remote regions.
//
// Contract: every name lives in namespace lci_test; EXPECT, OK and RETRY are
// macros. A program that uses the control channel, the watchdog or the shm
// clean-up starts with harness_init() and ends with harness_finish(); the
// programs that only need EXPECT end with report(name) (or harness_finish).
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
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unistd.h>
#include <utility>
#include <vector>

#include "lci.h"

namespace lci_test {

using steady = std::chrono::steady_clock;
// The bound of one wait (deadline's default), in seconds.
constexpr double k_wait_s = 60;
// At most this many failed checks of a process are printed; all are counted.
constexpr long k_max_reported_failures = 40;

extern std::atomic<long> g_failures;
extern std::atomic<long> g_checks;
// What the calling thread is doing (phase()), printed with its failures.
extern thread_local char t_phase[256];

// Names what the calling thread is doing, for failure messages and the watchdog.
__attribute__((format(printf, 1, 2))) void phase(const char* fmt, ...);

// EXPECT(cond, fmt, ...) counts one check; when cond is false it also counts
// a failure and prints "rank R: FILE:LINE: check failed: COND [PHASE]: MESSAGE"
// (the first k_max_reported_failures of them). The message's arguments are
// evaluated only for a failed check.
#define EXPECT(cond, ...)                                                     \
  do {                                                                        \
    if (!::lci_test::count_check(static_cast<bool>(cond)))                    \
      ::lci_test::report_failure(__FILE__, __LINE__, #cond, __VA_ARGS__);     \
  } while (0)

// Counts a check; returns `passed`.
inline bool count_check(bool passed) {
  g_checks.fetch_add(1, std::memory_order_relaxed);
  return passed;
}
// Counts a failed check and prints it (see EXPECT).
__attribute__((format(printf, 4, 5))) void report_failure(const char* file, int line,
                                                          const char* cond, const char* fmt, ...);

// Collects the names of this process's shm regions (call after
// LCI_initialize) and removes them when a SIGTERM ends the process.
void clean_up_shm_on_failure();
// Unlinks the collected names (async-signal-safe).
void remove_own_shm_files();

// Prints "rank R: FATAL [PHASE]: MESSAGE", removes this process's shm
// regions and ends it with status 3.
[[noreturn]] __attribute__((format(printf, 1, 2))) void die(const char* fmt, ...);

// Ends the process (status 4, naming the last phase) if it is still running
// `seconds` from now.
void start_watchdog(double seconds);

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

// One progress pass of LCI_UR_DEVICE; yields when idle (tests run
// oversubscribed); dies once `d` has passed.
void progress(const deadline& d, const char* what);

// Dies unless rc is LCI_OK, naming the call.
void ok(LCI_error_t rc, const char* call);
#define OK(call) ::lci_test::ok((call), #call)

// Retries on LCI_ERR_RETRY, driving progress, for at most k_wait_s.
template <class F>
void retry_call(F f, const char* what) {
  deadline d;
  LCI_error_t rc;
  while ((rc = f()) == LCI_ERR_RETRY) progress(d, what);
  ok(rc, what);
}
#define RETRY(call) ::lci_test::retry_call([&] { return (call); }, #call)

const char* comp_name(LCI_comp_type_t t);

// A reusable barrier for the threads of one rank.
class thread_barrier {
 public:
  explicit thread_barrier(int n) : n_(n) {}
  void wait();

 private:
  std::mutex m_;
  std::condition_variable cv_;
  int n_, count_ = 0, gen_ = 0;
};

// A completion object of one kind. take(n) collects exactly n requests,
// driving progress; a synchronizer must be taken in multiples of its
// threshold. Handler objects record into one of a fixed set of collectors.
class comp {
 public:
  explicit comp(LCI_comp_type_t type, int threshold = 1);
  // Wraps a queue owned elsewhere (LCI_UR_CQ).
  static std::unique_ptr<comp> borrow_queue(LCI_comp_t q);
  comp(const comp&) = delete;
  comp& operator=(const comp&) = delete;
  ~comp();
  LCI_comp_t handle() const { return h_; }
  uintptr_t remote() const { return reinterpret_cast<uintptr_t>(h_); }
  LCI_comp_type_t type() const { return type_; }

  std::vector<LCI_request_t> take(size_t n, const char* what, double secs = k_wait_s);
  LCI_request_t take1(const char* what, double secs = k_wait_s) { return take(1, what, secs)[0]; }

  // Signals recorded but not taken (a triggered synchronizer counts as its
  // threshold; testing it consumes the trigger).
  size_t pending();

 private:
  explicit comp(LCI_comp_t q) : type_(LCI_COMPLETION_QUEUE), h_(q), owned_(false) {}
  LCI_comp_type_t type_;
  int threshold_ = 1;
  LCI_comp_t h_ = nullptr;
  int coll_ = -1;
  bool owned_ = true;
};

// An endpoint whose target completions a one-sided test checks: its
// default completion object, an explicit one, and every rank's handle of
// the explicit one (expl_of, filled by the test once all its endpoints exist).
struct endpoint_under_test {
  endpoint_under_test(const char* n, LCI_comp_type_t t) : name(n), type(t) {}
  const char* name;
  LCI_comp_type_t type;
  LCI_endpoint_t ep = nullptr;
  std::unique_ptr<comp> dflt;     // the endpoint's default target completion
  std::unique_ptr<comp> expl;     // an explicit target completion object
  std::vector<uint64_t> expl_of;  // every rank's explicit handle
};
// LCI_UR_ENDPOINT (its default LCI_UR_CQ), then one endpoint on
// LCI_UR_DEVICE per completion type (queue, sync, handler) whose ports and
// default completion are of that type. Collective (endpoints are numbered
// in creation order on every rank).
std::vector<endpoint_under_test> endpoints_under_test();

// Data patterns: byte i of the stream `seed`.
inline uint8_t pat(uint32_t seed, size_t i) {
  uint32_t x = seed * 0x9E3779B1u ^ static_cast<uint32_t>(i) * 0x85EBCA6Bu ^
               static_cast<uint32_t>(i >> 20) * 0xC2B2AE35u;
  return static_cast<uint8_t>((x >> 24) ^ (x >> 11) ^ x);
}
inline uint32_t seed_of(uint32_t a, uint32_t b, uint32_t c = 0, uint32_t d = 0) {
  return ((a * 1000003u + b) * 1000033u + c) * 1000037u + d + 1;
}
void fill(void* p, size_t n, uint32_t seed);
// Index of the first byte that differs from the pattern, or SIZE_MAX.
size_t mismatch(const void* p, size_t n, uint32_t seed);
// Index of the first byte in [from, to) that is not `v`, or SIZE_MAX.
size_t not_byte(const void* p, size_t from, size_t to, uint8_t v);
constexpr uint8_t k_sentinel = 0xEE;

// Control channel: medium messages on LCI_UR_ENDPOINT with tags from k_ctrl_tag
// up, into a private queue (created by harness_init). Test traffic uses tags
// below k_ctrl_tag.
constexpr LCI_tag_t k_ctrl_tag = 64000;
extern LCI_comp_t g_ctrl_cq;

// Collective, one thread per rank: every rank's `len`-byte blob, by rank.
std::vector<std::vector<char>> allgather(const void* data, size_t len);
std::vector<uint64_t> allgather_u64(uint64_t v);

// LCI_initialize, the shm clean-up, a watchdog of `watchdog_s` seconds and
// the control channel.
void harness_init(double watchdog_s);
// Barrier, LCI_finalize and report(name).
int harness_finish(const char* name);
// Prints "rank R: NAME passed: N checks" (stdout) or "rank R: NAME FAILED:
// F of N checks" (stderr); returns the exit status (0 or 1). LCI_RANK must
// still be valid (it is after LCI_finalize).
int report(const char* name);

// Memory registered on LCI_UR_DEVICE for as long as the object lives: what
// a put_to (LCI_putm/putmn) target or a putv/getv piggy-back buffer must be.
class registration {
 public:
  registration(void* address, size_t length);
  ~registration();
  registration(const registration&) = delete;
  registration& operator=(const registration&) = delete;
  LCI_segment_t segment() const { return seg_; }

 private:
  LCI_segment_t seg_ = nullptr;
};

// Long buffers of every kind a test uses. `dynamic` is the receive-only
// {address == NULL} form; `seg_all` is malloc'ed memory named LCI_SEGMENT_ALL.
enum class mem_kind { registered, lalloc, lmemalign, seg_all, dynamic };
const char* mem_name(mem_kind k);
class lbuf {
 public:
  // `capacity` bytes (at least one allocated), every byte k_sentinel.
  lbuf(mem_kind kind, size_t capacity);
  lbuf(const lbuf&) = delete;
  lbuf& operator=(const lbuf&) = delete;
  ~lbuf();
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
// A directory of empty marker files that the ranks of one host share:
// signals between processes that must not wait through LCI (a rank
// declared failed, a rank that stops progressing). Named after lcrun's
// pid (the ranks' parent), so that each job has its own.
class marker_dir {
 public:
  // Creates (or finds) "<prefix>.<parent pid>" in the working directory.
  explicit marker_dir(const char* prefix);
  std::string path(const char* name) const { return dir_ + "/" + name; }
  void touch(const char* name) const;  // dies if the file cannot be made
  bool exists(const char* name) const;
  // Removes the markers and the directory (one rank, once every rank is
  // done with them).
  void remove() const;

 private:
  std::string dir_;
};

std::vector<remote_region> exchange_regions(LCI_segment_t seg, void* addr, size_t len);
void release_regions(std::vector<remote_region>& regions);
LCI_lbuffer_t remote_lbuffer(const remote_region& r, size_t offset, size_t length);

// Limits this process's address space to what it uses now plus `extra`
// bytes (RLIMIT_AS), so that a larger allocation fails.
void limit_address_space_to_current_plus(size_t extra);

}  // namespace lci_test

// Idle progress threads that nap (LCI_PROGRESS_NAP), as HPX's
// progress_type=pthread runs them: each of two ranks starts two threads
// that call LCI_progress in a loop, and no other thread progresses (the
// main threads post, then block in LCI_sync_wait). Each round rank 0 first
// stays quiet (--quiet-ms, long enough for every progress thread of both
// ranks to nap), then sends rank 1 a burst: --shorts LCI_sends, --mediums
// LCI_sendm of a size that changes per round, and one LCI_sendl of
// --long-bytes (rendezvous; on the native transport its data moves by
// cross-memory attach, or through the rings with LCI_SHM_CMA=0, whose
// answers and local completions must wake a napping thread too). Rank 1
// has its receives posted (some rounds late, so that messages also wait
// unexpected), checks every byte, rank and tag, and answers with a medium
// message holding what it counted; rank 0 checks the answer.
//
// --devices 2: a second device with its own endpoint; the progress
// threads progress both in turn, and the rounds alternate between them,
// so a thread napping must wake for a message on either device (it naps on
// the doorbells of every device it progresses).
//
// At the end each rank reads how often its devices napped
// (LCIT_native_naps): --naps some (the default: both ranks must have
// napped, or the test proved nothing), --naps none (LCI_PROGRESS_NAP=0, or
// a device that is not native-only: it never naps).
//
// --die: after the rounds rank 1 ends with _exit(0), without LCI_finalize,
// while rank 0's progress threads nap; rank 0 must still notice that its
// local peer is gone (the job ends naming rank 1; the CMake test checks
// the message), never sleep on.
//
// usage: napping [--rounds N] [--quiet-ms MS] [--devices 1|2] [--naps some|none] [--die]
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <unistd.h>
#include <vector>

#include "harness.hpp"
#include "lci.h"
#include "test_hooks.h"

using namespace lci_test;

namespace {

constexpr LCI_tag_t k_short_tag = 100;
constexpr LCI_tag_t k_medium_tag = 200;
constexpr LCI_tag_t k_long_tag = 300;
constexpr LCI_tag_t k_answer_tag = 400;
constexpr LCI_tag_t k_stop_tag = 500;

struct options {
  int rounds = 12;
  int quiet_ms = 5;
  int shorts = 4;
  int mediums = 4;
  size_t long_bytes = 256 * 1024;
  int devices = 1;
  bool expect_naps = true;
  bool die = false;
};

// The devices under test and an endpoint on each (LCI_UR_* first).
LCI_device_t g_dev[2] = {nullptr, nullptr};
LCI_endpoint_t g_ep[2] = {nullptr, nullptr};
int g_ndev = 1;

options parse(int argc, char** argv) {
  options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> const char* {
      if (i + 1 >= argc) die("%s needs a value", a.c_str());
      return argv[++i];
    };
    if (a == "--rounds")
      o.rounds = std::atoi(value());
    else if (a == "--quiet-ms")
      o.quiet_ms = std::atoi(value());
    else if (a == "--naps")
      o.expect_naps = std::string(value()) != "none";
    else if (a == "--devices")
      o.devices = std::atoi(value());
    else if (a == "--die")
      o.die = true;
    else
      die("unknown argument %s", a.c_str());
  }
  return o;
}

// The progress threads: the only callers of LCI_progress.
class progress_threads {
 public:
  explicit progress_threads(int n) {
    for (int i = 0; i < n; ++i)
      threads_.emplace_back([this, i] {
        phase("progress thread %d", i);
        while (!stop_.load(std::memory_order_relaxed))
          for (int d = 0; d < g_ndev; ++d) LCI_progress(g_dev[d]);
      });
  }
  ~progress_threads() { stop(); }
  // A message to this rank itself wakes threads that nap (for as long as
  // LCI_PROGRESS_NAP_MAX allows) so that they see the flag; the main
  // thread then takes it.
  void stop() {
    if (threads_.empty()) return;
    LCI_comp_t self[2];
    for (int d = 0; d < g_ndev; ++d) {
      OK(LCI_sync_create(g_dev[d], 1, &self[d]));
      OK(LCI_recvs(g_ep[d], LCI_RANK, k_stop_tag, self[d], nullptr));
    }
    stop_.store(true, std::memory_order_relaxed);
    LCI_short_t s{};
    for (int d = 0; d < g_ndev; ++d) RETRY(LCI_sends(g_ep[d], s, LCI_RANK, k_stop_tag));
    for (std::thread& t : threads_) t.join();
    threads_.clear();
    deadline dl;
    for (int d = 0; d < g_ndev; ++d) {
      while (LCI_sync_test(self[d], nullptr) != LCI_OK) {
        dl.check("the message to this rank");
        LCI_progress(g_dev[d]);
      }
      OK(LCI_sync_free(&self[d]));
    }
  }

 private:
  std::atomic<bool> stop_{false};
  std::vector<std::thread> threads_;
};

size_t medium_size(int round) {
  const size_t sizes[] = {8, 64, 1000, 4096};
  size_t s = sizes[static_cast<size_t>(round) % 4];
  return s < static_cast<size_t>(LCI_MEDIUM_SIZE) ? s : static_cast<size_t>(LCI_MEDIUM_SIZE);
}

uint32_t seed(int round, int what, int i) {
  return seed_of(static_cast<uint32_t>(round), static_cast<uint32_t>(what),
                 static_cast<uint32_t>(i));
}

// Retries a post refused for resources; the progress threads drain.
template <class F>
void post(F f, const char* what) {
  deadline d;
  LCI_error_t rc;
  while ((rc = f()) == LCI_ERR_RETRY) {
    d.check(what);
    std::this_thread::yield();
  }
  ok(rc, what);
}

void wait_sync(LCI_comp_t sync, LCI_request_t* reqs) { OK(LCI_sync_wait(sync, reqs)); }

// Rank 0: one round's burst, then the answer.
void send_round(const options& o, int round, std::vector<char>& medium, std::vector<char>& lng,
                LCI_comp_t long_sync, LCI_comp_t answer_sync) {
  const LCI_endpoint_t ep = g_ep[round % g_ndev];
  phase("round %d: quiet", round);
  std::this_thread::sleep_for(std::chrono::milliseconds(o.quiet_ms));
  uint64_t answer[3] = {0, 0, 0};
  OK(LCI_recvm(ep, LCI_mbuffer_t{answer, sizeof(answer)}, 1, k_answer_tag,
               answer_sync, nullptr));
  phase("round %d: sending", round);
  for (int i = 0; i < o.shorts; ++i) {
    LCI_short_t s;
    fill(&s, sizeof(s), seed(round, 1, i));
    post([&] { return LCI_sends(ep, s, 1, k_short_tag + i); }, "LCI_sends");
  }
  const size_t msize = medium_size(round);
  for (int i = 0; i < o.mediums; ++i) {
    fill(medium.data(), msize, seed(round, 2, i));
    post([&] {
      return LCI_sendm(ep, LCI_mbuffer_t{medium.data(), msize}, 1,
                       k_medium_tag + i);
    }, "LCI_sendm");
  }
  fill(lng.data(), lng.size(), seed(round, 3, 0));
  LCI_lbuffer_t lb{LCI_SEGMENT_ALL, lng.data(), lng.size()};
  post([&] { return LCI_sendl(ep, lb, 1, k_long_tag, long_sync, nullptr); },
       "LCI_sendl");
  phase("round %d: waiting for the long send", round);
  LCI_request_t r;
  wait_sync(long_sync, &r);
  EXPECT(r.flag == LCI_OK, "round %d: long send completed with %d", round, r.flag);
  phase("round %d: waiting for the answer", round);
  wait_sync(answer_sync, &r);
  EXPECT(r.flag == LCI_OK && r.rank == 1 && r.tag == k_answer_tag &&
             r.data.mbuffer.length == sizeof(answer),
         "round %d: answer flag %d rank %d tag %u length %zu", round, r.flag, r.rank,
         static_cast<unsigned>(r.tag), r.data.mbuffer.length);
  const uint64_t want[3] = {static_cast<uint64_t>(o.shorts), static_cast<uint64_t>(o.mediums),
                            lng.size()};
  EXPECT(memcmp(answer, want, sizeof(want)) == 0,
         "round %d: rank 1 received %llu shorts, %llu mediums, %llu long bytes intact", round,
         static_cast<unsigned long long>(answer[0]), static_cast<unsigned long long>(answer[1]),
         static_cast<unsigned long long>(answer[2]));
}

// Rank 1: one round's receives, checked; the answer says what was intact.
void receive_round(const options& o, int round, std::vector<std::vector<char>>& mediums,
                   std::vector<char>& lng, LCI_comp_t shorts_sync, LCI_comp_t mediums_sync,
                   LCI_comp_t long_sync) {
  const LCI_endpoint_t ep = g_ep[round % g_ndev];
  // Every third round the receives go up late: the burst waits unexpected.
  if (round % 3 == 2) std::this_thread::sleep_for(std::chrono::milliseconds(o.quiet_ms * 2));
  phase("round %d: posting", round);
  const size_t msize = medium_size(round);
  for (int i = 0; i < o.shorts; ++i)
    OK(LCI_recvs(ep, 0, k_short_tag + i, shorts_sync, nullptr));
  for (int i = 0; i < o.mediums; ++i) {
    memset(mediums[static_cast<size_t>(i)].data(), k_sentinel, msize);
    OK(LCI_recvm(ep, LCI_mbuffer_t{mediums[static_cast<size_t>(i)].data(), msize},
                 0, k_medium_tag + i, mediums_sync, reinterpret_cast<void*>(uintptr_t(i))));
  }
  memset(lng.data(), k_sentinel, lng.size());
  LCI_lbuffer_t lb{LCI_SEGMENT_ALL, lng.data(), lng.size()};
  OK(LCI_recvl(ep, lb, 0, k_long_tag, long_sync, nullptr));

  phase("round %d: waiting", round);
  uint64_t answer[3] = {0, 0, 0};
  std::vector<LCI_request_t> reqs(static_cast<size_t>(std::max(o.shorts, o.mediums)));
  wait_sync(shorts_sync, reqs.data());
  for (int k = 0; k < o.shorts; ++k) {
    const LCI_request_t& r = reqs[static_cast<size_t>(k)];
    const int i = static_cast<int>(r.tag) - k_short_tag;
    const bool good = r.flag == LCI_OK && r.rank == 0 && i >= 0 && i < o.shorts &&
                      mismatch(&r.data.immediate, sizeof(LCI_short_t), seed(round, 1, i)) ==
                          SIZE_MAX;
    EXPECT(good, "round %d: short with tag %u from rank %d", round,
           static_cast<unsigned>(r.tag), r.rank);
    answer[0] += good;
  }
  wait_sync(mediums_sync, reqs.data());
  for (int k = 0; k < o.mediums; ++k) {
    const LCI_request_t& r = reqs[static_cast<size_t>(k)];
    const int i = static_cast<int>(reinterpret_cast<uintptr_t>(r.user_context));
    const bool good = r.flag == LCI_OK && r.rank == 0 && r.tag == k_medium_tag + i &&
                      r.data.mbuffer.length == msize &&
                      r.data.mbuffer.address == mediums[static_cast<size_t>(i)].data() &&
                      mismatch(r.data.mbuffer.address, msize, seed(round, 2, i)) == SIZE_MAX;
    EXPECT(good, "round %d: medium %d (tag %u, %zu bytes)", round, i,
           static_cast<unsigned>(r.tag), r.data.mbuffer.length);
    answer[1] += good;
  }
  LCI_request_t r;
  wait_sync(long_sync, &r);
  const bool good = r.flag == LCI_OK && r.rank == 0 && r.tag == k_long_tag &&
                    r.data.lbuffer.length == lng.size() &&
                    mismatch(lng.data(), lng.size(), seed(round, 3, 0)) == SIZE_MAX;
  EXPECT(good, "round %d: long message (%zu bytes)", round, r.data.lbuffer.length);
  if (good) answer[2] = lng.size();
  post([&] {
    return LCI_sendm(ep, LCI_mbuffer_t{answer, sizeof(answer)}, 0, k_answer_tag);
  }, "LCI_sendm (answer)");
}

}  // namespace

int main(int argc, char** argv) {
  harness_init(120);
  const options o = parse(argc, argv);
  if (LCI_NUM_PROCESSES != 2) die("needs exactly 2 ranks");

  if (o.devices < 1 || o.devices > 2) die("--devices is 1 or 2");
  g_ndev = o.devices;
  g_dev[0] = LCI_UR_DEVICE;
  g_ep[0] = LCI_UR_ENDPOINT;
  LCI_plist_t plist = nullptr;
  if (g_ndev == 2) {
    OK(LCI_device_init(&g_dev[1]));
    OK(LCI_plist_create(&plist));
    OK(LCI_endpoint_init(&g_ep[1], g_dev[1], plist));
  }
  LCI_comp_t s1, s2, s3, s4;
  OK(LCI_sync_create(LCI_UR_DEVICE, std::max(o.shorts, 1), &s1));
  OK(LCI_sync_create(LCI_UR_DEVICE, std::max(o.mediums, 1), &s2));
  OK(LCI_sync_create(LCI_UR_DEVICE, 1, &s3));
  OK(LCI_sync_create(LCI_UR_DEVICE, 1, &s4));
  std::vector<char> lng(o.long_bytes);
  std::vector<char> medium(static_cast<size_t>(LCI_MEDIUM_SIZE));
  std::vector<std::vector<char>> mediums(static_cast<size_t>(o.mediums),
                                         std::vector<char>(static_cast<size_t>(LCI_MEDIUM_SIZE)));
  {
    progress_threads threads(2);
    for (int round = 0; round < o.rounds; ++round) {
      if (LCI_RANK == 0)
        send_round(o, round, medium, lng, s3, s4);
      else
        receive_round(o, round, mediums, lng, s1, s2, s3);
    }
    if (o.die && LCI_RANK == 1) {
      // Rank 0 is quiet now: its progress threads nap.
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      fprintf(stderr, "napping: rank 1 (pid %ld) exits without LCI_finalize\n",
              static_cast<long>(getpid()));
      fflush(stderr);
      _exit(0);
    }
    if (o.die) {
      phase("waiting, napping, for rank 1 to be found gone");
      std::this_thread::sleep_for(std::chrono::seconds(30));
      die("rank 1's exit went unnoticed for 30 s while this rank napped");
    }
    uint64_t naps = 0;
    for (int d = 0; d < g_ndev; ++d) {
      uint64_t n = 0;
      const LCI_error_t rc = LCIT_native_naps(g_dev[d], &n);
      EXPECT(rc == LCI_OK || rc == LCI_ERR_FEATURE_NA, "LCIT_native_naps returned %d", rc);
      naps += n;
    }
    if (o.expect_naps)
      EXPECT(naps > 0, "the device never napped in %d quiet rounds", o.rounds);
    else
      EXPECT(naps == 0, "the device napped %llu times", static_cast<unsigned long long>(naps));
    printf("rank %d: %llu naps\n", LCI_RANK, static_cast<unsigned long long>(naps));
    threads.stop();
  }
  OK(LCI_sync_free(&s1));
  OK(LCI_sync_free(&s2));
  OK(LCI_sync_free(&s3));
  OK(LCI_sync_free(&s4));
  if (g_ndev == 2) {
    OK(LCI_endpoint_free(&g_ep[1]));
    OK(LCI_plist_free(&plist));
    OK(LCI_device_free(&g_dev[1]));
  }
  return harness_finish("napping");
}

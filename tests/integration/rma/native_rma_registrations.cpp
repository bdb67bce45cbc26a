// Pipelined and cross-memory RMA of the native transport against the
// target's registrations as they change (one mode per run):
//
// --queued-reads [--unmap] (np 2, LCI_SHM_CMA=0; rings of 16 cells but rank 0's):
//   rank 1 posts k_reads reads of rank 0's buffer without driving progress,
//   so that rank 0 answers the first ones into rank 1's ring and queues the
//   rest; rank 0 then deregisters the buffer and overwrites it with the
//   sentinel (or unmaps it). Every read that completes LCI_OK holds the
//   bytes from before the deregistration; the queued ones are refused;
//   rank 0 survives the unmapped memory.
// --stalled-reader (np 3, LCI_SHM_CMA=0; rings of 16 cells but rank 0's): rank 1
//   posts reads of rank 0 that fill its ring and then drives no progress
//   until rank 2 says it is done; rank 2 meanwhile completes k_round_trips
//   pipelined gets and puts with rank 0. A rank that does not drain its
//   ring must not hold up another's answers: rank 2 finishes while rank 1
//   provably waits (an order, not a time; rank 1 gives up after 20 s).
// --dereg-race (np 2, LCI_SHM_CMA=0, threaded): rank 1 streams pipelined
//   puts into a registration of rank 0 while rank 0's progress thread
//   takes them and its main thread deregisters the memory and writes the
//   sentinel into it, k_cycles times: after deregistration no byte is
//   written.
// --many (np 2, with or without cross-memory attach): rank 0 holds
//   k_many registrations (enough to fill some buckets of the shared
//   registration table), deregisters half of them; rank 1's puts with
//   every stale key and with random keys are refused and leave the memory
//   untouched, a put with a live key lands.
//
// Markers (files in a directory named after the launcher's pid) order the
// steps where a rank must not drive progress. Every wait is bounded.
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <dirent.h>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "lci.h"

#include "harness.hpp"

using namespace lci_test;

namespace {

constexpr size_t k_piece = 1024;
constexpr int k_reads = 64;
constexpr int k_round_trips = 200;
constexpr int k_cycles = 100;
constexpr int k_race_puts = 8192;  // puts per cycle of --dereg-race, at most
constexpr int k_many = 5000;
constexpr LCI_tag_t k_tag = 11;
constexpr uint8_t k_old = 0x3C;

// This job's marker files (created in main).
std::unique_ptr<marker_dir> g_markers;
// Waits for a marker without driving LCI; false after `seconds`.
bool wait_marker(const char* name, double seconds = 60) {
  deadline d(seconds);
  while (!g_markers->exists(name)) {
    if (d.passed()) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return true;
}
// Waits for a marker driving LCI (and dropping what lands in LCI_UR_CQ).
void drive_until_marker(const char* name) {
  deadline d;
  while (!g_markers->exists(name)) {
    LCI_request_t r;
    while (LCI_queue_pop(LCI_UR_CQ, &r) == LCI_OK) {
    }
    progress(d, name);
  }
}

void* map(size_t n) {
  void* p = mmap(nullptr, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) die("cannot map %zu bytes", n);
  return p;
}

// The ranks other than 0 take part in exchange_regions with a small
// registration of their own, released with their copy of the regions.
struct bystander {
  char byte = 0;
  LCI_segment_t seg = nullptr;
  std::vector<remote_region> regions;
  bystander() {
    OK(LCI_memory_register(LCI_UR_DEVICE, &byte, 1, &seg));
    regions = exchange_regions(seg, &byte, 1);
  }
  ~bystander() {
    release_regions(regions);
    OK(LCI_memory_deregister(&seg));
  }
};

void send_msg(int rank, const void* data, size_t len) {
  LCI_mbuffer_t b{const_cast<void*>(data), len};
  RETRY(LCI_sendm(LCI_UR_ENDPOINT, b, rank, k_tag));
}
void recv_msg(int rank, void* data, size_t len, comp& q) {
  LCI_mbuffer_t b{data, len};
  OK(LCI_recvm(LCI_UR_ENDPOINT, b, rank, k_tag, q.handle(), nullptr));
  EXPECT(q.take1("a message").flag == LCI_OK, "message");
}

// Posts a pipelined read without driving progress (a full ring of the
// target's is drained by the target).
void post_get(const lbuf& into, size_t offset, comp& q, int rank, const remote_region& rr,
              size_t roffset) {
  LCI_lbuffer_t b = into.view(offset + k_piece);
  b.address = into.data() + offset;
  b.length = k_piece;
  deadline d;
  LCI_error_t rc;
  while ((rc = LCI_getl(LCI_UR_ENDPOINT, &b, k_piece, q.handle(), rank, k_tag,
                        remote_lbuffer(rr, roffset, k_piece), LCI_DEFAULT_COMP_REMOTE,
                        reinterpret_cast<void*>(offset))) == LCI_ERR_RETRY) {
    d.check("room for a read request");
    std::this_thread::yield();
  }
  OK(rc);
}

// ---- --queued-reads ---------------------------------------------------------------

void queued_reads(bool unmap) {
  const size_t len = k_reads * k_piece;
  comp q(LCI_COMPLETION_QUEUE);
  if (LCI_RANK == 0) {
    uint8_t* buf = static_cast<uint8_t*>(map(len));
    memset(buf, k_old, len);
    LCI_segment_t seg;
    OK(LCI_memory_register(LCI_UR_DEVICE, buf, len, &seg));
    auto regions = exchange_regions(seg, buf, len);
    // Rank 1's message follows its read requests in this rank's ring: once
    // it is here, every request was answered or queued.
    char note[8];
    phase("waiting for rank 1's reads");
    recv_msg(1, note, sizeof note, q);
    OK(LCI_memory_deregister(&seg));
    if (unmap)
      munmap(buf, len);
    else
      memset(buf, k_sentinel, len);
    g_markers->touch("deregistered");
    phase("answering rank 1");
    drive_until_marker("reads_done");
    if (!unmap) munmap(buf, len);
    release_regions(regions);
  } else {
    bystander b;
    lbuf into(mem_kind::lalloc, len);
    for (int i = 0; i < k_reads; ++i)
      post_get(into, i * k_piece, q, 0, b.regions[0], i * k_piece);
    const char note[8] = "posted";
    send_msg(0, note, sizeof note);
    // No progress here until rank 0 has deregistered: the answers that did
    // not fit in this rank's ring wait at rank 0.
    if (!wait_marker("deregistered")) die("rank 0 did not deregister");
    int ok = 0, refused = 0;
    for (const LCI_request_t& r : q.take(k_reads, "the reads")) {
      const size_t off = reinterpret_cast<uintptr_t>(r.user_context);
      if (r.flag != LCI_OK) {
        ++refused;
        continue;
      }
      ++ok;
      const size_t bad = not_byte(into.data(), off, off + k_piece, k_old);
      EXPECT(bad == SIZE_MAX, "read at %zu completed LCI_OK with byte %zu = 0x%02x, not 0x%02x "
             "(memory read after its deregistration)", off, bad - off, into.data()[bad], k_old);
    }
    printf("rank 1: %d reads answered before the deregistration, %d refused\n", ok, refused);
    EXPECT(refused > 0, "no read waited for room (%d answered): the test did not test", ok);
    g_markers->touch("reads_done");
  }
}

// ---- --stalled-reader ---------------------------------------------------------------

void stalled_reader() {
  const size_t len = k_reads * k_piece;
  comp q(LCI_COMPLETION_QUEUE);
  if (LCI_RANK == 0) {
    uint8_t* buf = static_cast<uint8_t*>(map(len));
    fill(buf, len, seed_of(0, 1));
    LCI_segment_t seg;
    OK(LCI_memory_register(LCI_UR_DEVICE, buf, len, &seg));
    auto regions = exchange_regions(seg, buf, len);
    char note[8];
    phase("waiting for rank 1's reads");
    recv_msg(1, note, sizeof note, q);
    send_msg(2, note, sizeof note);  // rank 1's answers wait: rank 2 starts
    drive_until_marker("reader_done");
    drive_until_marker("others_done");
    release_regions(regions);
    OK(LCI_memory_deregister(&seg));
    munmap(buf, len);
  } else if (LCI_RANK == 1) {
    bystander b;
    lbuf into(mem_kind::lalloc, len);
    for (int i = 0; i < k_reads; ++i)
      post_get(into, i * k_piece, q, 0, b.regions[0], i * k_piece);
    const char note[8] = "posted";
    send_msg(0, note, sizeof note);
    // This rank drives no progress now: its ring stays full.
    const bool done = wait_marker("others_done", 20);
    EXPECT(done, "rank 2 did not finish its round trips with rank 0 while this rank's answers "
           "waited for room");
    const auto reads = q.take(k_reads, "the reads");
    for (const LCI_request_t& r : reads) {
      EXPECT(r.flag == LCI_OK, "read failed: %d", r.flag);
      const size_t off = reinterpret_cast<uintptr_t>(r.user_context);
      // Byte i of rank 0's buffer is pat(seed, i): compare through a copy.
      std::vector<uint8_t> want(k_piece);
      for (size_t i = 0; i < k_piece; ++i) want[i] = pat(seed_of(0, 1), off + i);
      EXPECT(memcmp(want.data(), into.data() + off, k_piece) == 0, "read at %zu: wrong bytes",
             off);
    }
    g_markers->touch("reader_done");
  } else {
    bystander b;
    auto& regions = b.regions;
    char note[8];
    recv_msg(0, note, sizeof note, q);
    lbuf mine(mem_kind::lalloc, k_piece);
    phase("round trips with rank 0");
    for (int i = 0; i < k_round_trips; ++i) {
      LCI_lbuffer_t b = mine.view(k_piece);
      const size_t off = static_cast<size_t>(i % k_reads) * k_piece;
      RETRY(LCI_getl(LCI_UR_ENDPOINT, &b, k_piece, q.handle(), 0, k_tag,
                     remote_lbuffer(regions[0], off, k_piece), LCI_DEFAULT_COMP_REMOTE,
                     nullptr));
      EXPECT(q.take1("a get").flag == LCI_OK, "get %d failed", i);
      // Written back unchanged: rank 1's reads see the same bytes.
      RETRY(LCI_putl(LCI_UR_ENDPOINT, mine.view(k_piece), q.handle(), 0, k_tag,
                     remote_lbuffer(regions[0], off, k_piece), LCI_DEFAULT_COMP_REMOTE,
                     nullptr));
      EXPECT(q.take1("a put").flag == LCI_OK, "put %d failed", i);
    }
    printf("rank 2: %d round trips with rank 0 done%s\n", k_round_trips,
           g_markers->exists("reader_done") ? " (after rank 1 resumed)" : " while rank 1 waited");
    g_markers->touch("others_done");
    drive_until_marker("reader_done");
  }
}

// ---- --dereg-race -------------------------------------------------------------------

void dereg_race() {
  const size_t len = 16 * k_piece;
  comp q(LCI_COMPLETION_QUEUE);
  if (LCI_RANK == 0) {
    uint8_t* buf = static_cast<uint8_t*>(map(len));
    std::atomic<bool> stop{false};
    std::thread poller([&] {
      while (!stop.load(std::memory_order_relaxed)) LCI_progress(LCI_UR_DEVICE);
    });
    int written = 0;
    for (int c = 0; c < k_cycles; ++c) {
      phase("cycle %d", c);
      memset(buf, k_old, len);
      LCI_segment_t seg;
      OK(LCI_memory_register(LCI_UR_DEVICE, buf, len, &seg));
      char text[256] = {};
      OK(LCI_segment_serialize(seg, text));
      send_msg(1, text, sizeof text);
      char note[8];
      recv_msg(1, note, sizeof note, q);  // puts are landing
      OK(LCI_memory_deregister(&seg));
      memset(buf, k_sentinel, len);
      recv_msg(1, note, sizeof note, q);  // rank 1's puts are all over
      const size_t bad = not_byte(buf, 0, len, k_sentinel);
      written += bad != SIZE_MAX;
      EXPECT(bad == SIZE_MAX, "cycle %d: byte %zu written after the deregistration", c, bad);
      LCI_request_t r;
      while (LCI_queue_pop(LCI_UR_CQ, &r) == LCI_OK) {
      }
    }
    stop = true;
    poller.join();
    printf("rank 0: %d of %d cycles wrote deregistered memory\n", written, k_cycles);
    munmap(buf, len);
  } else {
    lbuf mine(mem_kind::lalloc, k_piece);
    fill(mine.data(), k_piece, seed_of(1, 2));
    for (int c = 0; c < k_cycles; ++c) {
      phase("cycle %d", c);
      char text[256];
      recv_msg(0, text, sizeof text, q);
      remote_region rr;
      OK(LCI_segment_deserialize(text, &rr.seg));
      rr.addr = 0;
      {
        // The address is in the text: lci-seg1:group:base:...
        unsigned long long base = 0;
        int group = 0;
        if (sscanf(text, "lci-seg1:%d:%llx", &group, &base) != 2) die("segment text %s", text);
        rr.addr = static_cast<uintptr_t>(base);
        rr.len = len;
      }
      int posted = 0, done = 0, failed = 0;
      bool told = false;
      deadline d;
      // At most k_race_puts per cycle: each lands in rank 0's LCI_UR_CQ,
      // which rank 0 drains once per cycle (capacity 16,384).
      while ((failed == 0 && posted < k_race_puts) || done < posted) {
        if (failed == 0 && posted - done < 8 && posted < k_race_puts) {
          const size_t off = static_cast<size_t>(posted % 16) * k_piece;
          const LCI_error_t rc =
              LCI_putl(LCI_UR_ENDPOINT, mine.view(k_piece), q.handle(), 0, k_tag,
                       remote_lbuffer(rr, off, k_piece), LCI_DEFAULT_COMP_REMOTE, nullptr);
          if (rc == LCI_OK) ++posted;
          else if (rc == LCI_ERR_FATAL) ++failed;  // refused at once
          else if (rc != LCI_ERR_RETRY) die("putl: %d", rc);
        }
        LCI_request_t r;
        while (LCI_queue_pop(q.handle(), &r) == LCI_OK) {
          ++done;
          if (r.flag != LCI_OK) ++failed;
        }
        if (!told && done >= 4) {
          const char note[8] = "landing";
          send_msg(0, note, sizeof note);
          told = true;
        }
        progress(d, "puts racing a deregistration");
      }
      if (!told) die("cycle %d: the puts were refused before any landed", c);
      const char note[8] = "over";
      send_msg(0, note, sizeof note);
      OK(LCI_memory_deregister(&rr.seg));
    }
  }
}

// ---- --many -------------------------------------------------------------------------

void many() {
  const size_t slice = 64, len = k_many * slice;
  comp q(LCI_COMPLETION_QUEUE);
  if (LCI_RANK == 0) {
    uint8_t* buf = static_cast<uint8_t*>(map(len));
    memset(buf, k_sentinel, len);
    std::vector<LCI_segment_t> segs(k_many);
    FILE* f = std::fopen(g_markers->path("segments").c_str(), "w");
    if (!f) die("cannot create the segment list");
    for (int i = 0; i < k_many; ++i) {
      OK(LCI_memory_register(LCI_UR_DEVICE, buf + i * slice, slice, &segs[i]));
      char text[256];
      OK(LCI_segment_serialize(segs[i], text));
      fprintf(f, "%s\n", text);
    }
    // Odd slices deregistered: their keys are stale.
    for (int i = 1; i < k_many; i += 2) OK(LCI_memory_deregister(&segs[i]));
    std::fclose(f);
    g_markers->touch("registered");
    drive_until_marker("puts_done");
    // Rank 1 wrote slice 0 (live) only.
    size_t bad = not_byte(buf, slice, len, k_sentinel);
    EXPECT(bad == SIZE_MAX, "byte %zu (slice %zu, %s) written by a refused key", bad,
           bad / slice, (bad / slice) % 2 ? "deregistered" : "live");
    bad = mismatch(buf, slice, seed_of(1, 3));
    EXPECT(bad == SIZE_MAX, "the put with a live key did not land (byte %zu)", bad);
    for (int i = 0; i < k_many; i += 2) OK(LCI_memory_deregister(&segs[i]));
    g_markers->touch("checked");
    munmap(buf, len);
  } else {
    if (!wait_marker("registered")) die("rank 0 did not register");
    std::vector<std::string> texts;
    {
      FILE* f = std::fopen(g_markers->path("segments").c_str(), "r");
      if (!f) die("no segment list");
      char line[300];
      while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = 0;
        texts.push_back(line);
      }
      std::fclose(f);
    }
    EXPECT(texts.size() == static_cast<size_t>(k_many), "%zu segments listed", texts.size());
    lbuf mine(mem_kind::lalloc, slice);
    fill(mine.data(), slice, seed_of(1, 3));
    std::mt19937_64 rng(12345);
    int accepted = 0, tried = 0;
    // A put with the text's segment, its key replaced by `key` unless 0.
    auto put = [&](const std::string& text, uint64_t key) {
      int group = 0, virt = 0;
      unsigned long long base = 0, length = 0, rkey = 0, handle = 0;
      if (sscanf(text.c_str(), "lci-seg1:%d:%llx:%llx:%llx:%llx:%d", &group, &base, &length,
                 &rkey, &handle, &virt) != 6)
        die("segment text %s", text.c_str());
      char forged[256];
      snprintf(forged, sizeof forged, "lci-seg1:%d:%llx:%llx:%llx:%llx:%d", group, base, length,
               key ? static_cast<unsigned long long>(key) : rkey, handle, virt);
      remote_region rr;
      OK(LCI_segment_deserialize(forged, &rr.seg));
      rr.addr = static_cast<uintptr_t>(base);
      rr.len = slice;
      const LCI_error_t rc = LCI_putl(LCI_UR_ENDPOINT, mine.view(slice), q.handle(), 0, k_tag,
                                      remote_lbuffer(rr, 0, slice), LCI_DEFAULT_COMP_REMOTE,
                                      nullptr);
      bool ok = false;
      if (rc == LCI_OK)
        ok = q.take1("a put").flag == LCI_OK;
      else if (rc != LCI_ERR_FATAL)
        die("putl: %d", rc);
      OK(LCI_memory_deregister(&rr.seg));
      return ok;
    };
    phase("puts with stale keys");
    for (int i = 1; i < k_many; i += 2, ++tried) accepted += put(texts[i], 0);
    phase("puts with random keys");
    for (int i = 0; i < 1000; ++i, ++tried)
      accepted += put(texts[1 + 2 * (i % (k_many / 2))], rng() | 1);
    EXPECT(accepted == 0, "%d of %d puts with stale or random keys were accepted", accepted,
           tried);
    phase("a put with a live key");
    EXPECT(put(texts[0], 0), "the put with a live key failed");
    g_markers->touch("puts_done");
    if (!wait_marker("checked")) die("rank 0 did not check");
  }
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  // The stalling modes: rank 0's ring (the default size) takes every
  // request at once, the others' rings only LCI_SHM_RING_SIZE=16 answers.
  const char* launched_rank = getenv("PMI_RANK");
  if ((mode == "--queued-reads" || mode == "--stalled-reader") && launched_rank &&
      std::string(launched_rank) != "0")
    setenv("LCI_SHM_RING_SIZE", "16", 1);
  harness_init(240);
  g_markers = std::make_unique<marker_dir>("native_rma_registrations");
  allgather_u64(0);  // the directory exists
  const bool unmap = argc > 2 && std::string(argv[2]) == "--unmap";
  if (mode == "--queued-reads")
    queued_reads(unmap);
  else if (mode == "--stalled-reader")
    stalled_reader();
  else if (mode == "--dereg-race")
    dereg_race();
  else if (mode == "--many")
    many();
  else
    die("usage: native_rma_registrations --queued-reads [--unmap] | --stalled-reader | "
        "--dereg-race | --many");
  allgather_u64(0);  // every rank is done with the markers
  if (LCI_RANK == 0) {
    g_markers->remove();
  }
  return harness_finish("native_rma_registrations");
}

// Message authentication of the libfabric backend (lci/backend/ofi/auth.hpp):
// seal/open round trips, a message is bound to its direction, header,
// length and bytes, the replay window, the per-peer counts, admission in
// poll order with the tag checked later (a preempted batch, duplicates,
// forged tags) and concurrent receivers.
#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "lci/backend/ofi/auth.hpp"

using lci::ofi::message_auth;
using verdict = message_auth::verdict;

namespace {
constexpr uint64_t k0 = 0x0123456789abcdefull, k1 = 0xfedcba9876543210ull;
constexpr size_t T = message_auth::trailer_bytes;

// A message from `from` to `to`, sealed with `seq`.
std::vector<char> sealed(message_auth& from, int to, uint32_t imm, const char* text, uint64_t seq) {
  std::vector<char> m(strlen(text) + T);
  memcpy(m.data(), text, strlen(text));
  from.seal(to, imm, m.data(), strlen(text), seq);
  return m;
}

// One-step open (auth.hpp's open()).
verdict open(message_auth& r, int src, uint32_t imm, const void* m, size_t len) {
  const char* why = nullptr;
  return r.open(src, imm, m, len, &why);
}

// Admits a bare sequence number from `src` (a trailer without a tag).
bool admit_seq(message_auth& r, int src, uint64_t seq) {
  char trailer[T] = {};
  memcpy(trailer, &seq, 8);
  return r.admit(src, trailer, T);
}
}  // namespace

TEST_CASE("message auth: a sealed message opens at its receiver, once") {
  message_auth r0(k0, k1, 0, 3), r1(k0, k1, 1, 3);
  auto m = sealed(r0, 1, 0x10002a, "hello", 1);
  CHECK(open(r1, 0, 0x10002a, m.data(), m.size()) == verdict::accepted);
  CHECK(r1.received_from(0) == 1);
  CHECK(open(r1, 0, 0x10002a, m.data(), m.size()) == verdict::duplicate);  // replay
  CHECK(r1.received_from(0) == 1);
  CHECK(r1.duplicates_from(0) == 1);
}

TEST_CASE("message auth: bound to direction, header, length, bytes and key") {
  message_auth r0(k0, k1, 0, 3), r1(k0, k1, 1, 3), r2(k0, k1, 2, 3), other(k0 ^ 1, k1, 1, 3);
  auto m = sealed(r0, 1, 7, "payload!", 1);
  CHECK(open(r0, 1, 7, m.data(), m.size()) == verdict::forged);  // 0->1 used as 1->0
  CHECK(open(r2, 0, 7, m.data(), m.size()) == verdict::forged);  // 0->1 used as 0->2
  CHECK(open(r1, 2, 7, m.data(), m.size()) == verdict::forged);  // claimed from rank 2
  CHECK(open(r1, 0, 8, m.data(), m.size()) == verdict::forged);  // another header
  CHECK(open(other, 0, 7, m.data(), m.size()) == verdict::forged);  // another job's key
  std::vector<char> longer(m.size() + 1, 0);
  memcpy(longer.data(), m.data(), m.size());
  CHECK(open(r1, 0, 7, longer.data(), longer.size()) == verdict::forged);
  CHECK(open(r1, 0, 7, m.data(), T - 1) == verdict::forged);  // no room for a trailer
  for (size_t i = 0; i < m.size(); ++i) {
    m[i] ^= 1;
    CHECK(open(r1, 0, 7, m.data(), m.size()) == verdict::forged);
    m[i] ^= 1;
  }
  CHECK(open(r1, 0, 7, m.data(), m.size()) == verdict::accepted);
  CHECK(r1.received_from(0) == 1);
}

TEST_CASE("message auth: long payloads (NH blocks) are bound to every byte and their length") {
  message_auth r0(k0, k1, 0, 2), r1(k0, k1, 1, 2);
  uint64_t seq = 0;  // one sequence across all messages (no replays)
  for (size_t len : {size_t(129), size_t(1000), size_t(1024), size_t(1025), size_t(12224),
                     size_t(65536)}) {
    std::vector<char> m(len + T);
    for (size_t i = 0; i < len; ++i) m[i] = static_cast<char>(i * 131 + len);
    r0.seal(1, 9, m.data(), len, ++seq);
    CHECK(open(r1, 0, 9, m.data(), m.size()) == verdict::accepted);
    // One flipped bit anywhere (first, middle and last byte of each block)
    // fails, and so does the same bytes claimed one shorter.
    for (size_t at : {size_t(0), len / 2, len - 1, std::min(len - 1, size_t(1023)),
                      std::min(len - 1, size_t(1024))}) {
      r0.seal(1, 9, m.data(), len, ++seq);
      m[at] ^= 4;
      CHECK(open(r1, 0, 9, m.data(), m.size()) == verdict::forged);
      m[at] ^= 4;
      CHECK(open(r1, 0, 9, m.data(), m.size()) == verdict::accepted);  // the tag, not the number, failed
    }
    r0.seal(1, 9, m.data(), len, ++seq);
    std::vector<char> shorter(m.begin(), m.begin() + static_cast<long>(len - 1));
    shorter.insert(shorter.end(), m.begin() + static_cast<long>(len), m.end());
    CHECK(open(r1, 0, 9, shorter.data(), shorter.size()) == verdict::forged);
    // Zero padding of the last block is not the same message as real zeros.
    std::vector<char> z(len + 8 + T, 0), zl(len + T, 0);
    r0.seal(1, 9, zl.data(), len, ++seq);
    memcpy(z.data() + len + 8, zl.data() + len, T);
    CHECK(open(r1, 0, 9, z.data(), z.size()) == verdict::forged);
    // A message built under another key fails.
    message_auth other(k0, k1 ^ 2, 0, 2);
    other.seal(1, 9, m.data(), len, ++seq);
    CHECK(open(r1, 0, 9, m.data(), m.size()) == verdict::forged);
  }
}

TEST_CASE("message auth: replay window accepts reordering, refuses repeats and old numbers") {
  message_auth a(k0, k1, 0, 2);
  const uint64_t W = message_auth::window_bits;
  CHECK(!admit_seq(a, 1, 0));
  CHECK(admit_seq(a, 1, 5));
  CHECK(admit_seq(a, 1, 3));  // late, within the window
  CHECK(!admit_seq(a, 1, 3));
  CHECK(!admit_seq(a, 1, 5));
  CHECK(admit_seq(a, 1, 5 + W - 1));
  CHECK(admit_seq(a, 1, 6));           // still inside (4 would not be)
  CHECK(!admit_seq(a, 1, 4));
  CHECK(!admit_seq(a, 1, 5));          // seen, still inside
  CHECK(admit_seq(a, 1, 5 + 3 * W));   // a jump clears the window
  CHECK(!admit_seq(a, 1, 5 + W));      // now too old
  CHECK(admit_seq(a, 1, 5 + 3 * W - 1));
  CHECK(!admit_seq(a, 0, 0));
  CHECK(admit_seq(a, 0, 5));           // each peer has its own window
  char short_message[T - 1] = {};
  CHECK(!a.admit(1, short_message, sizeof short_message));
}

TEST_CASE("message auth: a batch admitted at its poll is accepted however far the window moved") {
  // A thread polls messages 1..16 and is preempted before checking their
  // tags; other threads poll and accept 17..(3 windows). Then the first
  // thread checks its batch: every message is accepted, once.
  message_auth r0(k0, k1, 0, 2), r1(k0, k1, 1, 2);
  const uint64_t W = message_auth::window_bits, last = 3 * W;
  std::vector<std::vector<char>> m;
  for (uint64_t s = 1; s <= last; ++s) m.push_back(sealed(r0, 1, 3, "x", s));
  const char* why = nullptr;
  bool fresh[16];
  for (int i = 0; i < 16; ++i) fresh[i] = r1.admit(0, m[i].data(), m[i].size());
  for (uint64_t s = 17; s <= last; ++s) {
    const auto& x = m[s - 1];
    CHECK(r1.check(0, 3, x.data(), x.size(), r1.admit(0, x.data(), x.size()), &why) ==
          verdict::accepted);
  }
  for (int i = 0; i < 16; ++i) {
    CHECK(fresh[i]);
    CHECK(r1.check(0, 3, m[i].data(), m[i].size(), fresh[i], &why) == verdict::accepted);
  }
  CHECK(r1.received_from(0) == last);
  CHECK(r1.duplicates_from(0) == 0);
  // Delivered again, any of them is a duplicate now (older than the window,
  // or admitted before): dropped and counted, not forged.
  for (uint64_t s : {uint64_t{1}, uint64_t{16}, last - W, last - 1, last}) {
    const auto& x = m[s - 1];
    CHECK(r1.check(0, 3, x.data(), x.size(), r1.admit(0, x.data(), x.size()), &why) ==
          verdict::duplicate);
  }
  CHECK(r1.received_from(0) == last);
  CHECK(r1.duplicates_from(0) == 5);
}

TEST_CASE("message auth: two copies in flight at once: one accepted, one duplicate") {
  message_auth r0(k0, k1, 0, 2), r1(k0, k1, 1, 2);
  auto m = sealed(r0, 1, 4, "twice", 7);
  const char* why = nullptr;
  const bool first = r1.admit(0, m.data(), m.size());
  const bool second = r1.admit(0, m.data(), m.size());  // polled by another thread
  CHECK(first);
  CHECK(!second);
  // Checked in either order: exactly one is accepted.
  CHECK(r1.check(0, 4, m.data(), m.size(), second, &why) == verdict::duplicate);
  CHECK(std::string(why).find("duplicate") != std::string::npos);
  CHECK(r1.check(0, 4, m.data(), m.size(), first, &why) == verdict::accepted);
  CHECK(r1.received_from(0) == 1);
  CHECK(r1.duplicates_from(0) == 1);
}

TEST_CASE("message auth: a forged tag is refused whatever its admission, and counts nothing") {
  message_auth r0(k0, k1, 0, 2), r1(k0, k1, 1, 2), other(k0 ^ 4, k1, 0, 2);
  const char* why = nullptr;
  auto m = sealed(r0, 1, 5, "genuine", 9);
  auto f = m;
  f[0] ^= 1;  // tampered
  CHECK(r1.admit(0, f.data(), f.size()));  // the number alone looks new
  CHECK(r1.check(0, 5, f.data(), f.size(), true, &why) == verdict::forged);
  CHECK(std::string(why) == "wrong authentication tag");
  CHECK(r1.check(0, 5, f.data(), f.size(), false, &why) == verdict::forged);
  auto g = sealed(other, 1, 5, "genuine", 10);  // another key
  CHECK(r1.check(0, 5, g.data(), g.size(), r1.admit(0, g.data(), g.size()), &why) ==
        verdict::forged);
  // Sequence number 0 is never sent: forged even with a valid tag.
  auto z = sealed(r0, 1, 5, "zero", 0);
  CHECK(!r1.admit(0, z.data(), z.size()));
  CHECK(r1.check(0, 5, z.data(), z.size(), false, &why) == verdict::forged);
  CHECK(std::string(why) == "sequence number 0");
  CHECK(r1.check(0, 5, m.data(), T - 1, true, &why) == verdict::forged);
  CHECK(r1.received_from(0) == 0);
  CHECK(r1.duplicates_from(0) == 0);
  // One-step open: a forged message moves no window (the genuine message with
  // the number it claimed is still accepted).
  auto h = sealed(other, 1, 5, "forged", 1000);
  CHECK(open(r1, 0, 5, h.data(), h.size()) == verdict::forged);
  auto n = sealed(r0, 1, 5, "next", 1000);
  CHECK(open(r1, 0, 5, n.data(), n.size()) == verdict::accepted);
  CHECK(r1.received_from(0) == 1);
}

TEST_CASE("message auth: sender lock, sequence and count") {
  message_auth a(k0, k1, 0, 2);
  {
    message_auth::sender s(a, 1);
    REQUIRE(s.locked());
    CHECK(s.seq() == 1);
    message_auth::sender busy(a, 1);
    CHECK(!busy.locked());  // the caller retries
    s.commit();
  }
  {
    message_auth::sender s(a, 1);
    CHECK(s.seq() == 2);  // not committed: the number is used again
  }
  message_auth::sender s(a, 1);
  CHECK(s.seq() == 2);
  CHECK(a.sent_to(1) == 1);
  CHECK(a.sent_to(0) == 0);
}

TEST_CASE("message auth: concurrent receivers of one peer accept every message once") {
  // Each thread polls a batch of 16 (admits it under the poll lock, here a
  // mutex), then checks it without the lock, as the progress loop does; a
  // thread that is slow to check its batch loses nothing.
  message_auth r0(k0, k1, 0, 2), r1(k0, k1, 1, 2);
  constexpr int threads = 4;
  constexpr uint64_t total = 16 * 2500;
  std::vector<std::vector<char>> m;
  for (uint64_t s = 1; s <= total; ++s) m.push_back(sealed(r0, 1, 6, "m", s));
  std::mutex poll_lock;
  uint64_t next = 0;  // under poll_lock
  std::atomic<uint64_t> refused{0};
  std::vector<std::thread> ts;
  for (int t = 0; t < threads; ++t)
    ts.emplace_back([&, t] {
      for (;;) {
        uint64_t first;
        bool fresh[16];
        {
          std::lock_guard<std::mutex> g(poll_lock);
          if (next == total) return;
          first = next;
          next += 16;
          for (int i = 0; i < 16; ++i)
            fresh[i] = r1.admit(0, m[first + i].data(), m[first + i].size());
        }
        if (t == 0 && first % 256 == 0) std::this_thread::yield();
        for (int i = 0; i < 16; ++i) {
          const char* why = nullptr;
          const auto& x = m[first + static_cast<uint64_t>(i)];
          if (r1.check(0, 6, x.data(), x.size(), fresh[i], &why) != verdict::accepted)
            refused.fetch_add(1, std::memory_order_relaxed);
        }
      }
    });
  for (auto& t : ts) t.join();
  CHECK(refused.load() == 0);
  CHECK(r1.received_from(0) == total);
  CHECK(r1.duplicates_from(0) == 0);
}

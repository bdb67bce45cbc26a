// Message authentication of the libfabric backend (lci/backend/ofi/auth.hpp):
// seal/open round trips, a message is bound to its direction, header,
// length and bytes, the replay window, the per-peer counts, and concurrent
// receivers.
#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <thread>
#include <vector>

#include "lci/backend/ofi/auth.hpp"

using lci::ofi::message_auth;

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
}  // namespace

TEST_CASE("message auth: a sealed message opens at its receiver, once") {
  message_auth r0(k0, k1, 0, 3), r1(k0, k1, 1, 3);
  auto m = sealed(r0, 1, 0x10002a, "hello", 1);
  CHECK(r1.open(0, 0x10002a, m.data(), m.size()) == nullptr);
  CHECK(r1.received_from(0) == 1);
  CHECK(r1.open(0, 0x10002a, m.data(), m.size()) != nullptr);  // replay
  CHECK(r1.received_from(0) == 1);
}

TEST_CASE("message auth: bound to direction, header, length, bytes and key") {
  message_auth r0(k0, k1, 0, 3), r1(k0, k1, 1, 3), r2(k0, k1, 2, 3), other(k0 ^ 1, k1, 1, 3);
  auto m = sealed(r0, 1, 7, "payload!", 1);
  CHECK(r0.open(1, 7, m.data(), m.size()) != nullptr);  // 0->1 used as 1->0
  CHECK(r2.open(0, 7, m.data(), m.size()) != nullptr);  // 0->1 used as 0->2
  CHECK(r1.open(2, 7, m.data(), m.size()) != nullptr);  // claimed from rank 2
  CHECK(r1.open(0, 8, m.data(), m.size()) != nullptr);  // another header
  CHECK(other.open(0, 7, m.data(), m.size()) != nullptr);  // another job's key
  std::vector<char> longer(m.size() + 1, 0);
  memcpy(longer.data(), m.data(), m.size());
  CHECK(r1.open(0, 7, longer.data(), longer.size()) != nullptr);
  CHECK(r1.open(0, 7, m.data(), T - 1) != nullptr);  // no room for a trailer
  for (size_t i = 0; i < m.size(); ++i) {
    m[i] ^= 1;
    CHECK(r1.open(0, 7, m.data(), m.size()) != nullptr);
    m[i] ^= 1;
  }
  CHECK(r1.open(0, 7, m.data(), m.size()) == nullptr);
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
    CHECK(r1.open(0, 9, m.data(), m.size()) == nullptr);
    // One flipped bit anywhere (first, middle and last byte of each block)
    // fails, and so does the same bytes claimed one shorter.
    for (size_t at : {size_t(0), len / 2, len - 1, std::min(len - 1, size_t(1023)),
                      std::min(len - 1, size_t(1024))}) {
      r0.seal(1, 9, m.data(), len, ++seq);
      m[at] ^= 4;
      CHECK(r1.open(0, 9, m.data(), m.size()) != nullptr);
      m[at] ^= 4;
      CHECK(r1.open(0, 9, m.data(), m.size()) == nullptr);  // the tag, not the number, failed
    }
    r0.seal(1, 9, m.data(), len, ++seq);
    std::vector<char> shorter(m.begin(), m.begin() + static_cast<long>(len - 1));
    shorter.insert(shorter.end(), m.begin() + static_cast<long>(len), m.end());
    CHECK(r1.open(0, 9, shorter.data(), shorter.size()) != nullptr);
    // Zero padding of the last block is not the same message as real zeros.
    std::vector<char> z(len + 8 + T, 0), zl(len + T, 0);
    r0.seal(1, 9, zl.data(), len, ++seq);
    memcpy(z.data() + len + 8, zl.data() + len, T);
    CHECK(r1.open(0, 9, z.data(), z.size()) != nullptr);
    // A message built under another key fails.
    message_auth other(k0, k1 ^ 2, 0, 2);
    other.seal(1, 9, m.data(), len, ++seq);
    CHECK(r1.open(0, 9, m.data(), m.size()) != nullptr);
  }
}

TEST_CASE("message auth: replay window accepts reordering, refuses repeats and old numbers") {
  message_auth a(k0, k1, 0, 2);
  const uint64_t W = message_auth::window_bits;
  CHECK(a.accept_sequence(1, 0) != nullptr);
  CHECK(a.accept_sequence(1, 5) == nullptr);
  CHECK(a.accept_sequence(1, 3) == nullptr);  // late, within the window
  CHECK(a.accept_sequence(1, 3) != nullptr);
  CHECK(a.accept_sequence(1, 5) != nullptr);
  CHECK(a.accept_sequence(1, 5 + W - 1) == nullptr);
  CHECK(a.accept_sequence(1, 6) == nullptr);          // still inside (4 would not be)
  CHECK(a.accept_sequence(1, 4) != nullptr);
  CHECK(a.accept_sequence(1, 5) != nullptr);          // seen, still inside
  CHECK(a.accept_sequence(1, 5 + 3 * W) == nullptr);  // a jump clears the window
  CHECK(a.accept_sequence(1, 5 + W) != nullptr);      // now too old
  CHECK(a.accept_sequence(1, 5 + 3 * W - 1) == nullptr);
  CHECK(a.received_from(1) == 6);
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

TEST_CASE("message auth: concurrent receivers of one peer count every message once") {
  message_auth a(k0, k1, 1, 2);
  constexpr int threads = 4;
  constexpr uint64_t per = 20000;
  std::atomic<int> refused{0};
  std::vector<std::thread> ts;
  for (int t = 0; t < threads; ++t)
    ts.emplace_back([&, t] {
      // Interleaved sequence numbers: thread t takes t+1, t+1+threads, ...
      for (uint64_t i = 0; i < per; ++i)
        if (a.accept_sequence(0, 1 + static_cast<uint64_t>(t) + i * threads) != nullptr)
          refused.fetch_add(1, std::memory_order_relaxed);
    });
  for (auto& t : ts) t.join();
  // Threads may drift apart by more than the window: only the total is exact.
  CHECK(a.received_from(0) + static_cast<uint64_t>(refused.load()) == threads * per);
  CHECK(a.accept_sequence(0, threads * per) != nullptr);  // the newest, seen
}

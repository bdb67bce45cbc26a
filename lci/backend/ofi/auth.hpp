// Message authentication of the libfabric backend (ofi.hpp says on which
// providers it is on).
//
// Why: on connection-based providers (tcp;ofi_rxm, verbs;ofi_rxm) the
// provider names the peer of an incoming connection from its source IP and
// a listening port the connecting side only claims, and replaces a live
// connection from that "peer" with the new one. So FI_SOURCE does not prove
// who sent a message, and anything in the message (the job token) can be
// read by whoever took the connection over. What does prove it is a key
// that never crosses the data network: 128 random bits drawn by rank 0 and
// handed out through the bootstrap (the launcher's channel), wrapped for
// each rank under an X25519 agreement (key_exchange.hpp).
//
// Wire format: every message carries a 16-byte trailer after its payload,
//   | sequence: 8 | tag: 8 |     (little-endian, host order)
// tag = SipHash-2-4(key; 1, sender rank << 32 | receiver rank, header
// (32-bit immediate data), payload length, sequence, payload). The payload
// goes in as its bytes up to 128 bytes; longer, as the two NH sums of each
// 1 KiB block (lci/util/nh.hpp, under a second key drawn from the first),
// which costs about a fifth of SipHash over every byte. The
// ranks make a captured 0->1 message useless as 1->0 or 0->2; the sequence
// (per direction, from 1, one step per message) makes a replay detectable.
// Messages may arrive out of order (threads post concurrently, rxm may
// reorder), so the receiver keeps a window of the last `window_bits`
// sequence numbers instead of expecting the next one.
//
// Receiving is two steps, so that many threads can progress one device:
// admit() places the sequence number a message claims in its sender's
// window, in the order the provider delivered the messages (the caller's
// poll lock serializes it: one thread at a time, no lock of its own);
// check() then verifies the tag, on any thread, and accepts the message
// if admit() found its number new. A thread that polled a batch and was
// preempted before checking it finds its messages as admitted, however
// far other threads' batches moved the window meanwhile: nothing delivered
// once is refused for its age. A number admitted before (a duplicate or
// replay) or older than the window at its poll is stale: with a valid tag
// the message is dropped and counted (duplicates_from), never fatal; with
// a wrong one it is forged, whatever admit() said. admit() reads the
// number before the tag proves it, so a forged message can take a
// number in the window: on a member's connection (the provider names the
// rank) a forged tag ends the job anyway; where the rank is only claimed,
// the caller opens such messages in one step under the poll lock
// (open(): the tag first, then the window).
//
// Registration keys that travel in messages (the rendezvous ready-to-
// receive) are XORed with mask() = SipHash(key; 2, sender << 32 | receiver,
// three words naming the transfer), so no message shows a usable key.
//
// Threads: senders to one peer take that peer's send lock (a try-lock: a
// busy lock means "retry"), so sequence numbers are posted in order and a
// refused post consumes none; admit() and open() run under the caller's
// poll lock, check() on any thread (it only counts). Each peer's state
// sits on its own cache lines.
#pragma once

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <memory>

#include "lci/util/nh.hpp"
#include "lci/util/siphash.hpp"

namespace lci::ofi {

class message_auth {
  static constexpr uint64_t window_words = 16;
  struct alignas(64) peer_send {
    std::atomic<bool> busy{false};
    uint64_t next_seq = 1;                 // under busy
    std::atomic<uint64_t> sent{0};         // written under busy, read by the teardown check
    std::atomic<uint64_t> withdrawn{0};    // of them, sends that failed (withdraw, any thread)
  };
  // seen: bit (s mod window_bits) is set when s in (top - window_bits, top]
  // was admitted. The poller's (admit).
  struct alignas(64) peer_window {
    uint64_t top = 0;
    uint64_t seen[window_words] = {};
    // Numbers below top never admitted: passed over by a higher one and
    // not admitted since (lost, withdrawn by their sender, or refused as
    // older than the window). Written by the poller, read by any thread.
    std::atomic<uint64_t> passed_over{0};
  };
  // Messages accepted and duplicates dropped (check, any thread).
  struct alignas(64) peer_count {
    std::atomic<uint64_t> received{0};
    std::atomic<uint64_t> duplicates{0};
  };

 public:
  static constexpr size_t trailer_bytes = 16;
  static constexpr uint64_t window_bits = 64 * window_words;

  // Payloads up to this long go into SipHash byte by byte.
  static constexpr size_t direct_bytes = 128;

  // What check() and open() make of a received message.
  enum class verdict : uint8_t {
    accepted,   // authentic and new: counted as received from its sender
    duplicate,  // authentic, its sequence number admitted before or older than
                // the window: to be dropped (counted in duplicates_from)
    forged,     // not authentic (why says what failed)
  };

  message_auth(uint64_t k0, uint64_t k1, int self, int nranks)
      : k0_(k0), k1_(k1), self_(self), nranks_(nranks), nh_(nh_key(k0, k1).data()),
        send_(new peer_send[static_cast<size_t>(nranks)]),
        window_(new peer_window[static_cast<size_t>(nranks)]),
        count_(new peer_count[static_cast<size_t>(nranks)]) {}
  message_auth(const message_auth&) = delete;
  message_auth& operator=(const message_auth&) = delete;

  int self() const { return self_; }
  int nranks() const { return nranks_; }
  // The key (LCIT_message_secret only).
  uint64_t key_word(int i) const { return i == 0 ? k0_ : k1_; }

  uint64_t tag(int src, int dst, uint32_t imm, const void* payload, size_t len,
               uint64_t seq) const {
    siphash24 h(k0_, k1_);
    h.add_word(1);
    h.add_word(static_cast<uint64_t>(static_cast<uint32_t>(src)) << 32 | static_cast<uint32_t>(dst));
    h.add_word(imm);
    h.add_word(len);
    h.add_word(seq);
    if (len <= direct_bytes) {
      h.add_bytes(payload, len);
    } else {
      const char* p = static_cast<const char*>(payload);
      for (size_t at = 0; at < len; at += nh_block_hash::block_bytes) {
        uint64_t sums[2];
        nh_.block(p + at, std::min(nh_block_hash::block_bytes, len - at), sums);
        h.add_word(sums[0]);
        h.add_word(sums[1]);
      }
    }
    return h.finish();
  }

  uint64_t mask(int src, int dst, uint64_t a, uint64_t b, uint64_t c) const {
    siphash24 h(k0_, k1_);
    h.add_word(2);
    h.add_word(static_cast<uint64_t>(static_cast<uint32_t>(src)) << 32 | static_cast<uint32_t>(dst));
    h.add_word(a);
    h.add_word(b);
    h.add_word(c);
    return h.finish();
  }

  // Holds the send lock of one peer (if it got it) and its next sequence.
  class sender {
   public:
    sender(message_auth& a, int peer) : s_(a.send_[static_cast<size_t>(peer)]) {
      locked_ = !s_.busy.exchange(true, std::memory_order_acquire);
    }
    ~sender() {
      if (locked_) s_.busy.store(false, std::memory_order_release);
    }
    sender(const sender&) = delete;
    sender& operator=(const sender&) = delete;
    bool locked() const { return locked_; }
    uint64_t seq() const { return s_.next_seq; }
    // The message with seq() was posted.
    void commit() {
      ++s_.next_seq;
      s_.sent.store(s_.sent.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
    }

   private:
    peer_send& s_;
    bool locked_ = false;
  };

  // Writes the trailer of a message to `dst` at payload + len.
  void seal(int dst, uint32_t imm, void* payload, size_t len, uint64_t seq) const {
    const uint64_t t = tag(self_, dst, imm, payload, len, seq);
    char* at = static_cast<char*>(payload) + len;
    memcpy(at, &seq, 8);
    memcpy(at + 8, &t, 8);
  }

  // Step one of receiving a message from member `src` (len bytes with the
  // trailer): places the sequence number it claims in src's window, in
  // delivery order. Returns whether the number is new (admitted now); false
  // for a number admitted before, older than the window, 0, or a message
  // too short to carry one (check() refuses the last two). Not thread-safe:
  // the caller serializes every admit() and open() of this object.
  bool admit(int src, const void* payload, size_t len) {
    if (len < trailer_bytes) return false;
    uint64_t seq;
    memcpy(&seq, static_cast<const char*>(payload) + len - trailer_bytes, 8);
    return seq != 0 && take(window_[static_cast<size_t>(src)], seq);
  }

  // Step two, on any thread: verifies the message's tag; `fresh` is what
  // admit() answered for it. Counts an accepted message or a duplicate.
  verdict check(int src, uint32_t imm, const void* payload, size_t len, bool fresh,
                const char** why) {
    if (check_tag(src, imm, payload, len, why) == verdict::forged) return verdict::forged;
    return settle(src, payload, len, fresh, why);
  }

  // Both steps at once, the tag first, so that a forged message leaves the
  // window as it was (for senders whose rank is only claimed). Serialized
  // with admit() like it.
  verdict open(int src, uint32_t imm, const void* payload, size_t len, const char** why) {
    if (check_tag(src, imm, payload, len, why) == verdict::forged) return verdict::forged;
    return settle(src, payload, len, admit(src, payload, len), why);
  }

  // Messages to `peer` posted and not withdrawn: what it should receive.
  uint64_t sent_to(int peer) const {
    const peer_send& s = send_[static_cast<size_t>(peer)];
    return s.sent.load(std::memory_order_relaxed) - s.withdrawn.load(std::memory_order_relaxed);
  }
  // A message to `peer` that took a sequence number failed before it left
  // (its connection broke): it never arrives, and its number is never
  // admitted. Any thread.
  void withdraw(int peer) {
    send_[static_cast<size_t>(peer)].withdrawn.fetch_add(1, std::memory_order_relaxed);
  }
  uint64_t withdrawn_to(int peer) const {
    return send_[static_cast<size_t>(peer)].withdrawn.load(std::memory_order_relaxed);
  }
  // Sequence numbers of `peer`'s that later ones passed over and that were
  // never admitted since (peer_window::passed_over). Any thread.
  uint64_t passed_over_from(int peer) const {
    return window_[static_cast<size_t>(peer)].passed_over.load(std::memory_order_relaxed);
  }
  uint64_t received_from(int peer) const {
    return count_[static_cast<size_t>(peer)].received.load(std::memory_order_relaxed);
  }
  // Authentic messages from `peer` dropped as duplicates (check).
  uint64_t duplicates_from(int peer) const {
    return count_[static_cast<size_t>(peer)].duplicates.load(std::memory_order_relaxed);
  }

 private:
  // NH's key: SipHash(key; 3, i) for i = 0, 1, ..., two words each.
  static std::array<uint32_t, nh_block_hash::key_words> nh_key(uint64_t k0, uint64_t k1) {
    std::array<uint32_t, nh_block_hash::key_words> k{};
    for (size_t i = 0; i < k.size(); i += 2) {
      siphash24 h(k0, k1);
      h.add_word(3);
      h.add_word(i);
      const uint64_t w = h.finish();
      k[i] = static_cast<uint32_t>(w);
      if (i + 1 < k.size()) k[i + 1] = static_cast<uint32_t>(w >> 32);
    }
    return k;
  }
  // The tag alone: forged, or accepted meaning "so far".
  verdict check_tag(int src, uint32_t imm, const void* payload, size_t len,
                    const char** why) const {
    if (len < trailer_bytes) {
      *why = "shorter than its authentication trailer";
      return verdict::forged;
    }
    len -= trailer_bytes;
    uint64_t seq, t;
    memcpy(&seq, static_cast<const char*>(payload) + len, 8);
    memcpy(&t, static_cast<const char*>(payload) + len + 8, 8);
    if (tag(src, self_, imm, payload, len, seq) == t) return verdict::accepted;
    *why = "wrong authentication tag";
    return verdict::forged;
  }
  // After a valid tag: the admission decides, and is counted.
  verdict settle(int src, const void* payload, size_t len, bool fresh, const char** why) {
    uint64_t seq;
    memcpy(&seq, static_cast<const char*>(payload) + len - trailer_bytes, 8);
    if (seq == 0) {  // never sent: only a holder of the key made it
      *why = "sequence number 0";
      return verdict::forged;
    }
    peer_count& c = count_[static_cast<size_t>(src)];
    if (!fresh) {
      *why = "sequence number admitted before or older than the replay window (a duplicate)";
      c.duplicates.fetch_add(1, std::memory_order_relaxed);
      return verdict::duplicate;
    }
    c.received.fetch_add(1, std::memory_order_relaxed);
    return verdict::accepted;
  }
  // Marks seq (not 0) as admitted in w; false if it was, or is older than
  // the window.
  static bool take(peer_window& w, uint64_t seq) {
    if (seq > w.top) {
      w.passed_over.store(w.passed_over.load(std::memory_order_relaxed) + (seq - w.top - 1),
                          std::memory_order_relaxed);
      if (seq - w.top >= window_bits) {
        memset(w.seen, 0, sizeof w.seen);
      } else {
        for (uint64_t s = w.top + 1; s < seq; ++s) clear_bit(w, s);
      }
      set_bit(w, seq);
      w.top = seq;
      return true;
    }
    if (w.top - seq >= window_bits || test_bit(w, seq)) return false;
    set_bit(w, seq);  // one passed over, late (reordered)
    w.passed_over.store(w.passed_over.load(std::memory_order_relaxed) - 1,
                        std::memory_order_relaxed);
    return true;
  }
  static void set_bit(peer_window& w, uint64_t s) {
    w.seen[(s % window_bits) / 64] |= uint64_t{1} << (s % 64);
  }
  static void clear_bit(peer_window& w, uint64_t s) {
    w.seen[(s % window_bits) / 64] &= ~(uint64_t{1} << (s % 64));
  }
  static bool test_bit(const peer_window& w, uint64_t s) {
    return w.seen[(s % window_bits) / 64] >> (s % 64) & 1;
  }

  const uint64_t k0_, k1_;
  const int self_, nranks_;
  const nh_block_hash nh_;
  std::unique_ptr<peer_send[]> send_;
  std::unique_ptr<peer_window[]> window_;
  std::unique_ptr<peer_count[]> count_;
};

}  // namespace lci::ofi

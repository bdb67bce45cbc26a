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
// Registration keys that travel in messages (the rendezvous ready-to-
// receive) are XORed with mask() = SipHash(key; 2, sender << 32 | receiver,
// three words naming the transfer), so no message shows a usable key.
//
// Threads: senders to one peer take that peer's send lock (a try-lock: a
// busy lock means "retry"), so sequence numbers are posted in order and a
// refused post consumes none; receivers (any thread that progresses the
// device) take the peer's receive lock only to update its window. Each
// peer's state sits on its own cache lines.
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
  };
  // seen: bit (s mod window_bits) is set when s in (top - window_bits, top]
  // arrived. Under busy.
  struct alignas(64) peer_recv {
    std::atomic<bool> busy{false};
    uint64_t top = 0;
    std::atomic<uint64_t> received{0};
    uint64_t seen[window_words] = {};
  };

 public:
  static constexpr size_t trailer_bytes = 16;
  static constexpr uint64_t window_bits = 64 * window_words;

  // Payloads up to this long go into SipHash byte by byte.
  static constexpr size_t direct_bytes = 128;

  message_auth(uint64_t k0, uint64_t k1, int self, int nranks)
      : k0_(k0), k1_(k1), self_(self), nranks_(nranks), nh_(nh_key(k0, k1).data()),
        send_(new peer_send[static_cast<size_t>(nranks)]),
        recv_(new peer_recv[static_cast<size_t>(nranks)]) {}
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

  // Why a message from member `src` (len bytes with the trailer) is not
  // authentic, or nullptr (then it is counted as received from src).
  const char* open(int src, uint32_t imm, const void* payload, size_t len) {
    if (len < trailer_bytes) return "shorter than its authentication trailer";
    len -= trailer_bytes;
    uint64_t seq, t;
    memcpy(&seq, static_cast<const char*>(payload) + len, 8);
    memcpy(&t, static_cast<const char*>(payload) + len + 8, 8);
    if (tag(src, self_, imm, payload, len, seq) != t) return "wrong authentication tag";
    return accept_sequence(src, seq);
  }

  uint64_t sent_to(int peer) const {
    return send_[static_cast<size_t>(peer)].sent.load(std::memory_order_relaxed);
  }
  uint64_t received_from(int peer) const {
    return recv_[static_cast<size_t>(peer)].received.load(std::memory_order_relaxed);
  }

  // Marks seq as seen from src (exposed for the unit test).
  const char* accept_sequence(int src, uint64_t seq) {
    peer_recv& r = recv_[static_cast<size_t>(src)];
    while (r.busy.exchange(true, std::memory_order_acquire)) {
    }
    const char* why = nullptr;
    if (seq == 0) {
      why = "sequence number 0";
    } else if (seq > r.top) {
      if (seq - r.top >= window_bits) {
        memset(r.seen, 0, sizeof r.seen);
      } else {
        for (uint64_t s = r.top + 1; s < seq; ++s) clear_bit(r, s);
      }
      set_bit(r, seq);
      r.top = seq;
    } else if (r.top - seq >= window_bits) {
      why = "sequence number older than the replay window (a replay)";
    } else if (test_bit(r, seq)) {
      why = "sequence number seen before (a replay)";
    } else {
      set_bit(r, seq);
    }
    if (!why)
      r.received.store(r.received.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
    r.busy.store(false, std::memory_order_release);
    return why;
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
  static void set_bit(peer_recv& r, uint64_t s) {
    r.seen[(s % window_bits) / 64] |= uint64_t{1} << (s % 64);
  }
  static void clear_bit(peer_recv& r, uint64_t s) {
    r.seen[(s % window_bits) / 64] &= ~(uint64_t{1} << (s % 64));
  }
  static bool test_bit(const peer_recv& r, uint64_t s) {
    return r.seen[(s % window_bits) / 64] >> (s % 64) & 1;
  }

  const uint64_t k0_, k1_;
  const int self_, nranks_;
  const nh_block_hash nh_;
  std::unique_ptr<peer_send[]> send_;
  std::unique_ptr<peer_recv[]> recv_;
};

}  // namespace lci::ofi

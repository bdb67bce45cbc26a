// RDMA carried by authenticated messages (the libfabric backend on every
// provider where messages are authenticated; see ofi.hpp).
//
// Why: a provider's own RDMA requests name the target's registration key in
// clear (tcp;ofi_rxm puts it in its rendezvous and RMA headers), and the
// target's provider honours any request with a valid key, whoever sent it.
// A process that took a member's connection over, or only read the wire,
// could use a key it saw to read or write registered memory until the
// registration ends. So on these providers no memory is registered with the
// provider for remote access at all: a registration is an entry of this
// backend's own table (reg_table), named by a random 64-bit key, and a put
// or get travels as messages of the backend's own kinds, each sealed like
// every other message (auth.hpp). A key read off the wire is worthless: a
// request naming it must also carry a valid authentication tag.
//
// Protocol (each message: an rma_header, then data; kinds in own_kind):
//   write:  origin -> target  write_piece {op, address, key, length} + bytes
//           target -> origin  write_ack / write_nack {op, -, -, length}
//   read:   origin -> target  read_request {op, address, key, length}
//           target -> origin  read_data {op, offset, -, length} + bytes, ...
//                             or read_fail {op, -, -, bytes still missing}
// A piece is at most one receive buffer (the core's receive size) long.
// The target checks every piece (key, range inside the registration) and
// copies it with the registration's bucket locked, so a deregistration
// waits for a copy in progress and no piece lands in memory released after
// the check. The origin's operation completes when every byte was
// acknowledged (write) or arrived (read); a refusal completes it as failed,
// so a put to memory its owner deregistered fails instead of hanging. An
// answer that does not fit (more bytes than were sent or are missing, none,
// an operation that ended) is refused and counted as a malformed message
// of its sender: it never completes an operation early or twice.
//
// Threads: the operation table (rma_ops) is lock-free; each peer's queue of
// work (pieces still to send, acknowledgements, read replies) has its own
// spin lock, always taken after (inside) the peer's send lock of
// message_auth, whose try-lock decides who sends to the peer; whoever holds
// it drains the queue as far as staging buffers and the provider allow,
// and poll() resumes peers whose queue still holds work.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "lci/util/spin.hpp"

namespace lci::ofi {

// The backend's own messages: kind 14 of the core's header layout
// (| kind:4 | endpoint:12 | tag:16 |), which the core never sends as a
// message; the low 4 bits name what it is.
inline constexpr uint32_t own_imm_base = 0xEFFFFFF0u;
enum class own_kind : uint32_t {
  write_piece = 1,
  write_ack = 2,
  write_nack = 3,
  read_request = 4,
  read_data = 5,
  read_fail = 6,
  heartbeat = 15,
};
inline constexpr uint32_t own_imm(own_kind k) { return own_imm_base | static_cast<uint32_t>(k); }
inline constexpr bool is_own_imm(uint32_t imm) { return (imm & ~0xFu) == own_imm_base; }

struct rma_header {
  uint64_t op;       // the origin's operation id (rma_ops)
  uint64_t address;  // write_piece, read_request: target address; read_data: offset
  uint64_t key;      // write_piece, read_request: the registration's key
  uint64_t length;   // bytes of data carried, asked for, acknowledged or refused
};

// Registrations peers may reach, by key. 256 buckets, each with its lock.
class reg_table {
 public:
  // A fresh random key (never 0) for [base, base + length).
  uint64_t insert(uintptr_t base, size_t length);
  void erase(uint64_t key);
  // With the registration's bucket locked, fn(address as a pointer) when
  // [address, address + length) lies inside the registration `key` names.
  // False (fn not called) otherwise.
  template <typename Fn>
  bool with_range(uint64_t key, uint64_t address, uint64_t length, Fn&& fn) {
    bucket& b = b_[bucket_of(key)];
    b.lock.lock();
    bool ok = false;
    for (const entry& e : b.entries) {
      if (e.key != key) continue;
      ok = address >= e.base && length <= e.length && address - e.base <= e.length - length;
      break;
    }
    if (ok) fn(reinterpret_cast<char*>(static_cast<uintptr_t>(address)));
    b.lock.unlock();
    return ok;
  }
  size_t size() const;

 private:
  static constexpr size_t buckets = 256;
  static size_t bucket_of(uint64_t key) { return (key ^ key >> 29 ^ key >> 47) % buckets; }
  struct entry {
    uint64_t key;
    uint64_t base;
    uint64_t length;
  };
  struct alignas(64) bucket {
    mutable spin_lock lock;
    std::vector<entry> entries;
  };
  bucket b_[buckets];
};

// This process's puts and gets in flight. An id is the slot index (low 32
// bits) and the slot's generation (high 32): a message naming a finished
// operation, one of another peer or of the other kind is refused. A slot's
// state is one word, generation << 42 | finished << 41 | failed << 40 |
// bytes done, so that a message for an operation that finished meanwhile
// cannot count towards the next, and an operation finishes exactly once.
//
// What peers say is checked, never trusted: a count never makes the bytes
// done pass the operation's length (no wrap-around), and a write's bytes
// acknowledged or refused never pass the bytes the origin has copied out of
// the program's buffer (sent): a target acknowledging more than it can
// have received is refused, so a put never completes while its buffer may
// still be read.
//
// Whoever reads a slot's fields or writes into a get's buffer holds the
// slot (users, taken before the state is read): the poller hands out a
// finished operation, and frees its slot, only when nobody holds it, so a
// late piece of a get that a failure sweep ended is either copied before
// the operation is handed out or dropped.
class rma_ops {
 public:
  static constexpr uint32_t slots = 1024;
  static constexpr uint64_t max_length = (uint64_t{1} << 40) - 1;
  enum class kind : uint8_t { write, read };

  rma_ops();
  // A slot for an operation; its id, or 0 when every slot is taken.
  uint64_t take(kind k, int rank, char* buffer, uint64_t length, void* ctx);
  // Finishes `id`, an operation of no bytes (taken with length 0).
  void finish_empty(uint64_t id);
  // Write `id` (to `rank`): `length` more bytes were copied out of the
  // program's buffer, to be sent; acknowledgements may count them now.
  void note_sent(uint64_t id, int rank, uint64_t length);
  // Read `id` (from `rank`): where `length` (> 0) bytes at `offset` go, or
  // nullptr when the message fits no operation in flight. Unless nullptr,
  // the slot is held until read_end, which counts the bytes (false: not
  // counted, as for count()).
  char* read_begin(uint64_t id, int rank, uint64_t offset, uint64_t length);
  bool read_end(uint64_t id, uint64_t length);
  // Counts `length` (> 0) bytes of `id` (from `rank`, of kind k) as done
  // (failed: as refused). False when the message fits no operation in
  // flight or counts bytes the operation cannot have outstanding.
  bool count(uint64_t id, int rank, kind k, uint64_t length, bool failed);
  // Operations whose every byte was counted, oldest last: pop_finished
  // gives one at a time (-1: none), for the poller only. An operation
  // still held (read_begin) waits for a later call.
  int pop_finished();
  bool any_finished() const {
    return finished_.load(std::memory_order_relaxed) >= 0 || !ready_.empty();
  }
  // The peer `rank` died: its operations in flight finish as failed (each
  // once, like a last refused piece would). Returns how many.
  int fail_rank(int rank);
  void* ctx_of(int slot) const { return s_[slot].ctx; }
  bool failed(int slot) const;
  void release(int slot);
  int in_flight() const;

 private:
  struct alignas(64) slot {
    std::atomic<uint64_t> progress{0};  // generation, finished, failed, bytes done
    std::atomic<uint64_t> sent{0};      // write: bytes copied out to be sent
    std::atomic<uint32_t> users{0};     // threads reading the fields or the buffer
    kind k = kind::write;
    int rank = -1;
    char* buffer = nullptr;
    uint64_t length = 0;
    void* ctx = nullptr;
    std::atomic<int> next{-1};  // in the finished list
  };
  // Holds the slot `id` names and returns it when it is an operation in
  // flight of `rank` and kind k (any_kind: of either kind); nullptr (not
  // held) otherwise.
  slot* enter(uint64_t id, int rank, kind k, bool any_kind = false);
  static void leave(slot& s) { s.users.fetch_sub(1, std::memory_order_release); }
  // The counting of count() and read_end(), on a held slot.
  bool count_held(slot& s, uint64_t id, uint64_t length, bool failed);
  void push_finished(int index);
  std::atomic<uint64_t> used_[slots / 64] = {};
  std::atomic<int> finished_{-1};  // a stack of finished slots
  std::vector<int> ready_;          // popped from finished_, not yet given out (poller's)
  slot s_[slots];
};

// Work waiting to be sent to one peer.
struct rma_work {
  enum class what : uint8_t { message, write, read_reply } w = what::message;
  own_kind k = own_kind::write_ack;  // message: its kind
  rma_header h{};                    // message: its content; write, read_reply: the transfer
  const char* source = nullptr;      // write: the local bytes
  uint64_t sent = 0;                 // write, read_reply: bytes copied out so far
  // write, read_reply: the staging buffer holding the next piece, copied
  // out but not yet taken by the provider (-1: none), and its data bytes.
  // A refused post keeps it for the next turn, so that the program's bytes
  // are copied once and a write never reads its buffer after the bytes
  // were counted as sent (rma_ops::note_sent).
  int staged = -1;
  uint32_t staged_bytes = 0;
};

// A FIFO of work that grows (doubling) and never shrinks, so that a peer's
// steady traffic allocates nothing once its queue has reached its size.
class work_ring {
 public:
  bool empty() const { return count_ == 0; }
  size_t size() const { return count_; }
  rma_work& front() { return buf_[head_]; }
  rma_work& back() { return buf_[(head_ + count_ - 1) & (buf_.size() - 1)]; }
  void pop_front() {
    head_ = (head_ + 1) & (buf_.size() - 1);
    --count_;
  }
  void push_back(const rma_work& w) {
    if (count_ == buf_.size()) grow();
    buf_[(head_ + count_) & (buf_.size() - 1)] = w;
    ++count_;
  }

 private:
  void grow() {
    std::vector<rma_work> bigger(buf_.empty() ? 16 : 2 * buf_.size());
    for (size_t i = 0; i < count_; ++i) bigger[i] = buf_[(head_ + i) & (buf_.size() - 1)];
    buf_.swap(bigger);
    head_ = 0;
  }
  std::vector<rma_work> buf_;  // a power of two long
  size_t head_ = 0, count_ = 0;
};

// Peers whose queue poll() must resume: a flag per peer and a count of the
// set ones, so that an empty poll reads one word. Any number of threads mark
// and claim at once. Each set flag is cleared by exactly one claim (an
// exchange: two pollers that both read a flag set and cleared it would take
// one mark twice, and the count, one short for good, would hide the next
// peer marked). A mark counts before it sets and a claim clears before it
// uncounts, so the count is never below the number of flags set: a poll
// may look once for nothing, never miss a peer.
class resume_marks {
 public:
  void mark(std::atomic<bool>& flag) {
    count_.fetch_add(1, std::memory_order_acq_rel);
    if (flag.exchange(true, std::memory_order_acq_rel))
      count_.fetch_sub(1, std::memory_order_relaxed);  // set already: counted once
  }
  // True for the one caller that clears a set flag; it then resumes the peer.
  bool claim(std::atomic<bool>& flag) {
    if (!flag.load(std::memory_order_relaxed) || !flag.exchange(false, std::memory_order_acq_rel))
      return false;
    count_.fetch_sub(1, std::memory_order_acq_rel);
    return true;
  }
  bool any() const { return count_.load(std::memory_order_acquire) > 0; }
  int count() const { return count_.load(std::memory_order_relaxed); }

 private:
  std::atomic<int> count_{0};
};

struct alignas(64) rma_peer {
  spin_lock lock;
  work_ring work;                    // under lock
  std::atomic<bool> pending{false};  // work was left for poll() to resume (resume_marks)
};

}  // namespace lci::ofi

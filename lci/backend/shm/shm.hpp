// The native intra-node transport: ranks of one host exchange messages
// through rings in shared memory and move bulk data with cross-memory
// attach (process_vm_readv/writev), beside the network backend that serves
// the ranks of other hosts (backend.hpp chooses per peer).
//
// Memory. Each device of each rank owns one segment: a header and its
// inbound ring (ring.hpp), LCI_SHM_RING_SIZE cells of one packet each. The
// segment is an anonymous memory file (memfd_create): it has no name that
// another user could pre-create or guess, and it disappears with the last
// process that maps it. A rank publishes its pid and the file's descriptor
// number through the bootstrap; each local peer opens it through
// /proc/<pid>/fd/<n> (the same user's process), maps it and checks its
// header. The descriptor is closed once every peer has attached
// (peers_attached()), so nothing outlives the job however it ends.
//
// Messages. A send reserves a cell in the target's ring (one CAS, ring.hpp),
// copies header and payload into it and publishes it: no lock, no system
// call, no allocation. The target's poll copies the cell into a posted
// receive buffer and frees it. A full ring is `retry`.
//
// Bulk data (post_write, post_write_imm, post_read). With cross-memory
// attach the initiator copies straight between its buffer and the peer's
// (one copy, done at return; a write with immediate data then sends the
// immediate in a cell). Where the kernel refuses it (ptrace restrictions,
// containers) or LCI_SHM_CMA=0, the data is pipelined through the rings
// instead: a write travels in cells of one piece each (max_message_size()),
// copied out by the target into the registration it names, and a read is a
// request answered by the target with a cell of data. The target checks
// those ranges against its registrations for remote access and drops what
// lies outside them.
//
// Completions of this process's own operations (send_done, rma_done,
// failed) go through a private ring of the same kind, drained by poll().
//
// Peers that die: poll() checks, at most every 100 ms while it finds
// nothing, that every local peer still runs (a pidfd, or kill(pid, 0)); a
// peer that exited without closing its device ends the job with a message
// naming its rank.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <deque>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "lci/backend/net_types.hpp"
#include "lci/backend/shm/ring.hpp"
#include "lci/bootstrap/bootstrap.hpp"

namespace lci::shm {

using net::completion;
using net::completion_kind;
using net::status;

// What a cell of an inbound ring carries.
enum class cell_kind : uint8_t {
  nop,           // reserved, then abandoned (nothing to do)
  message,       // a message: imm, length bytes of payload
  write_notice,  // a peer's cross-memory write with immediate data landed
  write_data,    // pipelined write: length bytes for (address, key); imm if flags & has_imm
  read_request,  // pipelined read: send length bytes of (address, key) back
  read_reply,    // answer to a read_request: length bytes for the requester's buffer
};

inline constexpr uint8_t flag_has_imm = 1;
inline constexpr uint8_t flag_error = 2;

// The fixed part of a cell; a message's payload follows at `data`.
struct cell {
  std::atomic<uint64_t> seq;  // ring.hpp
  cell_kind kind;
  uint8_t flags;
  uint16_t reserved;
  int32_t src;      // sender's rank
  uint32_t imm;
  uint32_t length;  // payload bytes
  // Bulk kinds: where the bytes go or come from, and the requester's context.
  uint64_t address;
  uint64_t key;
  uint64_t reply_address;  // read_request/read_reply: the requester's buffer
  uint64_t reply_ctx;      // read_request/read_reply: the requester's ctx
  char* data() { return reinterpret_cast<char*>(this + 1); }
};
static_assert(sizeof(cell) == 56, "cell header layout");

// A rank's segment starts with this header; the ring's cells follow at
// cells_offset.
struct segment_header {
  uint64_t magic;
  uint32_t version;
  int32_t rank;
  int32_t pid;
  uint32_t ncells;
  uint64_t cell_size;
  uint64_t bytes;                 // the whole segment
  std::atomic<uint32_t> closed;   // 1 once the owner's device is gone (a clean exit)
  uint32_t pad;
  alignas(64) std::atomic<uint64_t> tail;  // the ring's producers' counter
  alignas(64) uint64_t probe;              // read by peers to test cross-memory attach
};
inline constexpr uint64_t segment_magic = 0x4c43495f53484d31ull;  // "LCI_SHM1"
inline constexpr uint32_t segment_version = 1;
inline constexpr size_t cells_offset = 256;
static_assert(sizeof(segment_header) <= cells_offset, "segment header layout");

// The transport's settings (from net::settings).
struct options {
  uint64_t ring_cells = 256;  // LCI_SHM_RING_SIZE (a power of two)
  size_t max_payload = 0;     // the largest message (the core's receive size)
  bool cma = true;            // LCI_SHM_CMA: cross-memory attach where the kernel allows it
};

// The bytes one rank's segment of one device takes.
size_t segment_bytes(const options& o);
size_t cell_size_for(size_t max_payload);

// Which ranks share this host: a key per process (boot id, network and pid
// namespaces, user), equal for two processes exactly when they can reach
// each other through this transport.
std::string host_key();

class shm_device final {
 public:
  // Creates this rank's segment (not yet shared).
  shm_device(int rank, int nranks, int group_index, const options& o);
  ~shm_device();
  shm_device(const shm_device&) = delete;
  shm_device& operator=(const shm_device&) = delete;

  // What peers need to map the segment: printable, without spaces.
  std::string address() const;
  // Maps the segments of the ranks marked local (this one included) from
  // their address() strings, and tests cross-memory attach towards each.
  // Fatal, with a message naming the rank, if a segment cannot be mapped.
  void attach(const std::vector<std::string>& addresses, const std::vector<bool>& local);

  // Every local peer has mapped this rank's segment: its descriptor closes.
  void peers_attached();

  size_t max_inject() const { return opt_.max_payload; }
  size_t rx_queue_size() const { return own_ring_.size(); }
  // The most one RDMA operation moves: unlimited with cross-memory attach,
  // one cell's payload when some peer's data is pipelined.
  size_t max_message_size() const { return any_pipelined_ ? opt_.max_payload : SIZE_MAX; }
  // Memory this device holds for the transport: its segment (shared) and
  // its private completion ring. Peers' segments are mapped, not owned.
  size_t segment_size() const { return own_bytes_; }
  size_t private_size() const { return local_bytes_; }
  // Local peers (this rank excluded) whose bulk data is pipelined.
  int pipelined_peers() const {
    int n = 0;
    for (const peer& p : peers_) n += p.head && p.pid != 0 && !p.cma;
    return n;
  }

  // Registrations: nothing to pin (cross-memory attach needs none); memory
  // for remote access is recorded under its key (the network backend's, or
  // random_bits()) so that pipelined writes and reads can be checked.
  void record_registration(void* addr, size_t len, net::mr_access access, uint64_t key);
  void forget_registration(uint64_t key);

  status inject(int rank, const void* buf, size_t len, uint32_t imm) {
    net::annotate_post(this);
    ring::slot s = peers_[rank].inbound.reserve();
    if (__builtin_expect(s.cell == nullptr, 0)) return status::retry;  // ring full
    cell* c = static_cast<cell*>(static_cast<void*>(s.cell));
    fill_message(c, buf, len, imm);
    ring::publish(s);
    return status::ok;
  }

  status post_send(int rank, const void* buf, size_t len, void*, uint32_t imm, void* ctx) {
    net::annotate_post(this);
    ring::slot done = local_.reserve();
    if (__builtin_expect(done.cell == nullptr, 0)) return status::retry;
    ring::slot s = peers_[rank].inbound.reserve();
    if (__builtin_expect(s.cell == nullptr, 0)) {
      abandon_local(done);
      return status::retry;
    }
    fill_message(static_cast<cell*>(static_cast<void*>(s.cell)), buf, len, imm);
    ring::publish(s);
    complete_local(done, completion_kind::send_done, ctx, 0);
    return status::ok;
  }

  // Receive buffers: a lock-free stack that any thread pushes to and poll()
  // (the one consumer) takes whole.
  status post_recv(void* buf, size_t len, void*, void* ctx) {
    net::annotate_post(this);
    auto* e = static_cast<rx_entry*>(buf);
    e->ctx = ctx;
    e->capacity = len;
    rx_entry* head = rx_head_.load(std::memory_order_relaxed);
    do {
      e->next = head;
    } while (!rx_head_.compare_exchange_weak(head, e, std::memory_order_release,
                                             std::memory_order_relaxed));
    if (count_posted_) rx_posted_.fetch_add(1, std::memory_order_relaxed);
    return status::ok;
  }
  // Receive buffers posted and not used yet (counted only when
  // count_posted(true) was called: the backend then balances them).
  int posted() const { return rx_posted_.load(std::memory_order_relaxed); }
  void count_posted(bool on) { count_posted_ = on; }

  status post_write(int rank, const void* buf, size_t len, void*, uint64_t raddr, uint64_t rkey,
                    void* ctx, bool /*delivered: every write is delivered at completion*/) {
    net::annotate_post(this);
    return write(rank, buf, len, raddr, rkey, ctx, false, 0);
  }
  status post_write_imm(int rank, const void* buf, size_t len, void*, uint64_t raddr,
                        uint64_t rkey, uint32_t imm, void* ctx) {
    net::annotate_post(this);
    return write(rank, buf, len, raddr, rkey, ctx, true, imm);
  }
  status post_read(int rank, void* buf, size_t len, void*, uint64_t raddr, uint64_t rkey,
                   void* ctx);

  // Drains up to max completions: this process's own first, then the
  // inbound ring (while receive buffers last).
  [[gnu::always_inline]] int poll(completion* out, int max) {
    // The causality of a message runs through another process, which
    // ThreadSanitizer does not see (net_types.hpp).
    net::annotate_poll(this);
    int n = 0;
    while (n < max) {
      cell_head* h = local_.peek(local_head_);
      if (!h) break;
      n += take_local(h, out + n);
    }
    if (__builtin_expect(!replies_.empty(), 0)) send_pending_replies();
    int messages = 0;
    while (n < max) {
      cell* c = static_cast<cell*>(static_cast<void*>(own_ring_.peek(head_)));
      if (!c) break;
      if (__builtin_expect(c->kind == cell_kind::message, 1)) {
        rx_entry* e = rx_private_;
        if (!e) {
          e = rx_private_ = rx_head_.exchange(nullptr, std::memory_order_acquire);
          if (!e) break;  // no receive buffer: the message waits in its cell
        }
        rx_private_ = e->next;
        if (count_posted_) rx_posted_.fetch_sub(1, std::memory_order_relaxed);
        completion& out_c = out[n++];
        out_c.kind = completion_kind::recv;
        out_c.sealed = false;
        out_c.ctx = e->ctx;
        out_c.src_rank = c->src;
        out_c.imm = c->imm;
        out_c.length = c->length;
        memcpy(static_cast<void*>(e), c->data(), c->length);
        ++messages;
      } else {
        n += take_other(c, out + n);
      }
      own_ring_.release(head_++);
    }
    if (messages)  // one writer (the poller): no read-modify-write needed
      received_.store(received_.load(std::memory_order_relaxed) + static_cast<uint64_t>(messages),
                      std::memory_order_relaxed);
    else if (n == 0 && ++idle_polls_ >= 4096)
      check_peers();
    return n;
  }

  // Messages received through the rings (for the path counters).
  uint64_t received() const { return received_.load(std::memory_order_relaxed); }

 private:
  struct rx_entry {
    rx_entry* next;
    void* ctx;
    size_t capacity;
  };
  struct peer {
    ring inbound;          // the peer's inbound ring, mapped here
    segment_header* head = nullptr;
    size_t bytes = 0;
    int pid = 0;
    int pidfd = -1;
    bool cma = false;      // cross-memory attach works towards this peer
  };
  struct pending_reply {   // a read_request whose reply found the ring full
    int rank;
    uint64_t address, length, reply_address, reply_ctx;
    bool ok;
  };
  struct local_cell {      // a cell of the private completion ring
    std::atomic<uint64_t> seq;
    completion c;
    bool skip;
  };

  void fill_message(cell* c, const void* buf, size_t len, uint32_t imm) {
    c->kind = cell_kind::message;
    c->src = rank_;
    c->imm = imm;
    c->length = static_cast<uint32_t>(len);
    if (len) memcpy(c->data(), buf, len);  // an empty message may name no buffer
  }
  void complete_local(const ring::slot& s, completion_kind kind, void* ctx, int error) {
    auto* lc = static_cast<local_cell*>(static_cast<void*>(s.cell));
    lc->c.kind = kind;
    lc->c.ctx = ctx;
    lc->c.error = error;
    lc->skip = false;
    ring::publish(s);
  }
  void abandon_local(const ring::slot& s) {
    static_cast<local_cell*>(static_cast<void*>(s.cell))->skip = true;
    ring::publish(s);
  }
  int take_local(cell_head* h, completion* out) {
    auto* lc = static_cast<local_cell*>(static_cast<void*>(h));
    const bool skip = lc->skip;
    if (!skip) *out = lc->c;
    local_.release(local_head_++);
    return skip ? 0 : 1;
  }
  status write(int rank, const void* buf, size_t len, uint64_t raddr, uint64_t rkey, void* ctx,
               bool with_imm, uint32_t imm);
  int take_other(cell* c, completion* out);
  void send_pending_replies();
  bool reply(const pending_reply& r);
  // The range [address, address + length) lies in one registration for
  // remote access with this key.
  bool registered(uint64_t address, uint64_t length, uint64_t key);
  void check_peers();

  options opt_;
  int rank_ = 0;
  int group_index_ = 0;
  int fd_ = -1;
  segment_header* own_ = nullptr;
  size_t own_bytes_ = 0;
  ring own_ring_;
  std::vector<peer> peers_;
  bool any_pipelined_ = false;
  bool count_posted_ = false;

  // Consumer state (poll() runs under the device's progress lock).
  uint64_t head_ = 0;
  uint64_t local_head_ = 0;
  rx_entry* rx_private_ = nullptr;
  uint32_t idle_polls_ = 0;
  int64_t last_check_ns_ = 0;
  std::deque<pending_reply> replies_;

  ring local_;  // this process's completions
  void* local_memory_ = nullptr;  // its tail and cells
  size_t local_bytes_ = 0;

  alignas(64) std::atomic<rx_entry*> rx_head_{nullptr};
  alignas(64) std::atomic<int> rx_posted_{0};
  alignas(64) std::atomic<uint64_t> received_{0};

  // Registrations for remote access, by key (pipelined bulk data only).
  std::mutex regs_lock_;
  std::map<uint64_t, std::pair<uint64_t, uint64_t>> regs_;  // key -> (address, length)
};

}  // namespace lci::shm

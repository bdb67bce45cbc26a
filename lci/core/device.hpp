// Device: one independent set of communication resources (resources only:
// the progress engine that uses them is progress.{hpp,cpp}).
//
// A device owns (and destroys in reverse order): the backend context, one
// registered slab of packets with its pool, a pool of receive descriptors,
// a pool of rendezvous operations with their id table, the matching table
// and the backlog. Devices share nothing, so threads
// that use different devices never touch the same lock.
//
// Threads: every member may be used by any thread. The progress engine is
// guarded by `progress_lock` (a try-lock: a thread that finds it held
// returns at once). The backlog has its own lock, taken only when the
// backlog is non-empty.
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <vector>

#include "lci.h"
#include "lci/backend/backend.hpp"
#include "lci/util/spin.hpp"
#include "lci/bootstrap/bootstrap.hpp"
#include "lci/core/peer_failure.hpp"
#include "lci/core/protocol.hpp"
#include "lci/core/rank_fifo.hpp"
#include "lci/core/rdv_table.hpp"
#include "lci/core/status.hpp"
#include "lci/match/match_table.hpp"
#include "lci/mem/packet_pool.hpp"
#include "lci/mem/reg_cache.hpp"
#include "lci/mem/segment_table.hpp"

namespace lci {

inline constexpr uint32_t device_magic = 0x4c434944u;

struct endpoint;
struct rdv_op;
struct comp_base;

// A receive posted before its message arrived.
struct recv_ctx {
  match_node node;
  LCI_comp_t comp;        // nullptr: signal nothing
  void* user_context;
  endpoint* ep;
  void* buffer;           // recvm/recvl: the caller's buffer (recvl: NULL = allocate)
  size_t capacity;        // its length
  LCI_segment_t segment;  // recvl: the buffer's segment
  LCI_iovec_t iov;        // recvv: the caller's iovec (lbuffers NULL = allocate)
  bool want_packet;       // recvmn: hand the packet to the caller
  LCI_data_type_t type;   // what the receive completes as (for a failed peer's error)
  bool heap;              // allocated with new (the descriptor pool was empty)
};

// An operation the backend refused for now, retried by progress: a receive
// re-post, a control message, or the rest of a rendezvous's RDMA.
struct backlog_op {
  enum class op : uint8_t { recv, message, rdma } what;
  packet* pkt = nullptr;     // recv: the packet to post; message: its bytes (if any)
  rdv_op* rdv = nullptr;     // rdma: continue posting its writes/reads
  int rank = 0;              // message
  uint32_t imm = 0;
  size_t length = 0;
  std::vector<char> bytes;   // message bytes while the packet pool was empty
};

// A one-sided medium message that arrived while no packet could replace
// the receive it took (device::parked): its bytes and where it goes, until
// a packet is free to carry it to the program.
struct parked_msg {
  LCI_comp_t comp = nullptr;
  comp_base* ref = nullptr;  // the reference taken on comp at arrival (none: nullptr)
  int src_rank = 0;
  uint32_t tag = 0;
  size_t length = 0;
  void* target_context = nullptr;  // the request's user_context (endpoint::target_context)
  std::unique_ptr<char[]> bytes;
};

// Profiling counters (-DLCI_ENABLE_PROFILE=ON defines LCI_PROFILE): per
// device, relaxed atomics on their own cache line, printed when the device
// is destroyed if LCI_PRINT_PROFILE=1. Without LCI_PROFILE, LCI_PROF_INC
// compiles to nothing and the device has no counters.
#ifdef LCI_PROFILE
struct alignas(64) device_profile {
  std::atomic<uint64_t> sent{0};            // messages handed to the network
  std::atomic<uint64_t> received{0};        // messages arrived
  std::atomic<uint64_t> retries[post_status_count] = {};  // refusals, by post_status
  std::atomic<uint64_t> backlog_pushes{0};  // operations queued in the backlog
  std::atomic<uint64_t> progress_calls{0};  // device::progress passes
  std::atomic<uint64_t> progress_empty{0};  // ... that found nothing to do
};
#define LCI_PROF_INC(dev, counter) ((dev).prof.counter.fetch_add(1, std::memory_order_relaxed))
#define LCI_PROF_RETRY(dev, status) \
  ((dev).prof.retries[static_cast<int>(status)].fetch_add(1, std::memory_order_relaxed))
#else
#define LCI_PROF_INC(dev, counter) ((void)0)
#define LCI_PROF_RETRY(dev, status) ((void)0)
#endif

// What a device may set apart from the process's settings (0: the
// setting): its packet count and its posted receives (the LCI 2
// interface's npackets and net_max_recvs).
struct device_options {
  size_t npackets = 0;
  size_t max_recvs = 0;
};

struct device {
  device(int group_index, bootstrap::bootstrap& boot,
         const device_options& opt = device_options());
  ~device();
  device(const device&) = delete;
  device& operator=(const device&) = delete;

  // ---- hot, read-mostly -------------------------------------------------
  uint32_t magic = device_magic;
  int group_index;
  std::unique_ptr<net::backend_device> net;
  char* slab = nullptr;          // packets, packet_size bytes each
  size_t slab_bytes = 0;
  size_t packet_size = 0;
  net::mr slab_mr;
  std::unique_ptr<packet_pool> packets;
  std::unique_ptr<match_table> table;
  // Exact-rank receives of the C API, by source rank (rank_fifo.hpp).
  std::unique_ptr<rank_fifo[]> fifos;
  uint32_t fifo_ranks = 0;
  char* ctx_slab = nullptr;      // receive descriptors
  size_t ctx_slab_bytes = 0;
  std::unique_ptr<object_pool> ctxs;
  // LCI_SEGMENT_ALL registrations, one cache per access: memory peers
  // write or that is read into (remote), and memory only sent from (source,
  // which may be read-only).
  std::unique_ptr<reg_cache> regs;
  std::unique_ptr<reg_cache> source_regs;
  // Settings the data path reads, fixed when the device is created (the
  // lci.h globals of the same names are writable by programs).
  size_t rdma_piece = 0;             // longest RDMA piece (net::rdma_piece_size) ...
  // ... per rank: that of its route (0 until piece_for's first call).
  std::unique_ptr<std::atomic<size_t>[]> rdma_piece_of;
  size_t max_single_message = 0;     // LCI_MAX_SINGLE_MESSAGE_SIZE
  bool rdv_write_imm = true;         // LCI_RDV_PROTOCOL=writeimm
  // ... also to a target that cannot tell the writer (not with
  // LCI_PEER_FAILURE=continue; see on_rtr).
  bool write_imm_unnamed = true;
  size_t recv_size = 0;              // bytes of each posted receive
  // Rendezvous operations: a pool (heap overflow when it is empty) and
  // the table that finds them by id.
  char* rdv_slab = nullptr;
  size_t rdv_slab_bytes = 0;
  std::unique_ptr<object_pool> rdv_ops;
  rdv_table rdv;
  segment_table segments;            // the program's registered segments
  // Receives kept posted (post_initial_receives), and how many of them an
  // arriving one-sided medium message may leave missing when it keeps its
  // own packet (on_eager_put): below that, messages wait in `parked`.
  int recv_target = 0;
  int recv_reserve = 1;
  // Napping (LCI_PROGRESS_NAP; native_device::nap): after how long a
  // thread's unbroken run of empty progress passes sleeps (0: never).
  int64_t nap_after_ns = 0;
  // A pass more than this after the thread's previous one breaks the run:
  // the thread does other work between its progress calls.
  static constexpr int64_t nap_gap_ns = 50'000;
  int64_t nap_length_ns = 1'000'000;  // LCI_PROGRESS_NAP_MAX

  // ---- contended, each on its own cache line ----------------------------
  alignas(64) spin_lock progress_lock;
  // Passes that took progress_lock (written under it): the state dump
  // watches it, with the native transport's polls, to tell a device that no
  // thread progresses.
  std::atomic<uint64_t> progress_passes{0};
  alignas(64) std::atomic<int> recv_deficit{0};   // receive packets not re-posted yet
  std::atomic<int> parked_count{0};               // messages in `parked` (read with the deficit)
  alignas(64) std::atomic<int> backlog_size{0};
  spin_lock backlog_lock;
  // Cold: how often a send or receive found the packet pool empty, and
  // whether the warning naming LCI_SERVER_NUM_PKTS was printed (once).
  alignas(64) std::atomic<uint64_t> pool_empty_count{0};
  std::atomic<bool> pool_empty_warned{false};
  std::deque<backlog_op> backlog;
  // One-sided medium messages that arrived while the pool had no packet to
  // replace their receive (every packet held by messages the program has
  // not consumed) and fewer than recv_target - recv_reserve receives would
  // stay posted: their bytes wait here, in order, and reach the program
  // as packets come back (deliver_parked). So a rank keeps receiving, and a
  // barrier or any other message behind them arrives, however many such
  // messages wait unconsumed.
  alignas(64) spin_lock parked_lock;
  std::deque<parked_msg> parked;                  // under parked_lock
  std::atomic<bool> parked_delivering{false};     // one deliverer at a time
#ifdef LCI_PROFILE
  device_profile prof;
#endif
  // Failed peers (peer_failure.hpp): the epoch this device last swept at,
  // and per rank whether it was swept; the lock serialises sweeps.
  alignas(64) std::atomic<uint32_t> failure_epoch_seen{0};
  std::mutex failure_lock;
  std::vector<uint8_t> swept;
  // Message sends that failed while their peer is only suspected
  // (on_failed_send): sent again once it is alive, failed once it is dead
  // (by the sweep); under held_lock.
  spin_lock held_lock;
  std::vector<packet*> held;
  // The LCI 2 runtime whose devices share this one (lci/cxx/impl.hpp), or
  // nullptr (a device of the C API): where messages of msg_kind::net go.
  // Set before the device is used, never changed.
  void* net_layer = nullptr;

  // The longest RDMA piece towards `rank` (its route's limit, learnt at the
  // first call: a local peer's segment is mapped at the first contact).
  size_t piece_for(int rank) const {
    const size_t p = rdma_piece_of[static_cast<size_t>(rank)].load(std::memory_order_relaxed);
    return __builtin_expect(p != 0, 1) ? p : learn_piece(rank);
  }
  size_t learn_piece(int rank) const;
  // True if p points into this device's packet slab.
  bool owns_packet(const void* p) const {
    return static_cast<const char*>(p) >= slab && static_cast<const char*>(p) < slab + slab_bytes;
  }
  packet* get_packet() { return static_cast<packet*>(packets->get()); }
  // A packet for a send or LCI_mbuffer_alloc: while receive packets are
  // missing (recv_deficit), free packets re-post receives first.
  // always_inline: LCI_mbuffer_alloc is this call and little else.
  [[gnu::always_inline]] packet* get_send_packet() {
    packet* p = get_packet();
    if (__builtin_expect(p == nullptr, 0)) {
      note_pool_empty();
      return nullptr;
    }
    if (__builtin_expect(recv_deficit.load(std::memory_order_relaxed) > 0, 0))
      return get_send_packet_slow(p);
    return p;
  }
  // The pool was found empty where a packet was needed (a send, an
  // LCI_mbuffer_alloc, a receive to re-post). After pool_empty_warn_after
  // such events, one warning names LCI_SERVER_NUM_PKTS. Out of line: only
  // the refusal path calls it.
  [[gnu::noinline, gnu::cold]] void note_pool_empty();
  static constexpr uint64_t pool_empty_warn_after = 1000;
  void put_packet(packet* p) {
#if LCI_ENABLE_DEBUG
    p->user_owned = false;
#endif
    packets->put(p);
  }
  // Debug builds: the program owns p from now on (see packet::user_owned).
  static void hand_out(packet* p) {
#if LCI_ENABLE_DEBUG
    p->user_owned = true;
#else
    (void)p;
#endif
  }

  recv_ctx* get_ctx() {
    auto* c = static_cast<recv_ctx*>(ctxs->get());
    if (__builtin_expect(c != nullptr, 1)) {
      c->heap = false;
      return c;
    }
    c = new recv_ctx;
    c->heap = true;
    return c;
  }
  // A receive taken from its rank's list (rank_fifo.hpp), as a pooled
  // descriptor: for the paths that complete a table receive (a rendezvous,
  // a failed peer's sweep).
  recv_ctx* ctx_from_list(const fifo_recv& r) {
    recv_ctx* c = get_ctx();
    c->type = r.type;
    c->segment = r.segment;
    c->iov.lbuffers = nullptr;
    c->comp = r.comp;
    c->user_context = r.user_context;
    c->ep = r.ep;
    c->buffer = r.buffer;
    c->capacity = r.capacity;
    c->want_packet = false;
    c->node.key = r.key;
    c->node.kind = match_kind::recv;
    c->node.tag_hi = 0;
    return c;
  }
  void put_ctx(recv_ctx* c) {
    if (__builtin_expect(!c->heap, 1))
      ctxs->put(c);
    else
      delete c;
  }

  // Posts a packet as a receive buffer (or queues it in the backlog).
  void post_recv_packet(packet* p);
  // Posts a fresh packet for a receive that an arrival consumed (or counts
  // it as missing while the pool is empty).
  void replace_receive();
  // Lets the native transport hand short and medium messages whose receive
  // already waits to the eager protocol straight from their ring cells
  // (LCI_SHM_IN_PLACE; eager.cpp).
  void enable_in_place();
  void push_backlog(backlog_op&& op);
  bool backlog_empty() const { return backlog_size.load(std::memory_order_relaxed) == 0; }

  // One pass of the progress engine; true if it did any work. Inline: a
  // pass that finds nothing (no backlog, no receive to re-post, nothing in
  // the transport: net::backend_device::may_have_work) is a few loads, no
  // lock and no call.
  [[gnu::always_inline]] bool progress() {
    // (A failed peer is swept by progress_pass, which runs at least every
    // 64 idle calls: the network backend is always polled, and the native
    // transport lets every 64th idle call through for its peer check.)
    if (__builtin_expect((backlog_size.load(std::memory_order_relaxed) |
                          recv_deficit.load(std::memory_order_relaxed) |
                          parked_count.load(std::memory_order_relaxed)) == 0 &&
                             !net->may_have_work(),
                         1)) {
#ifdef LCI_PROFILE
      LCI_PROF_INC(*this, progress_calls);
      LCI_PROF_INC(*this, progress_empty);
#endif
      return false;
    }
    return progress_pass();
  }
  // The pass itself (progress.cpp).
  [[gnu::noinline]] bool progress_pass();
  // Frees the control messages queued in the backlog for `rank` (a failed
  // peer); returns how many.
  int drop_backlog_to(int rank);
  packet* get_send_packet_slow(packet* p);
  reg_cache& reg_cache_for(net::mr_access access) {
    return access == net::mr_access::source ? *source_regs : *regs;
  }

 private:
  size_t max_recvs_;  // options::max_recvs
  // The n (> 0) completions of one poll.
  [[gnu::noinline]] void handle_completions(net::completion* cs, int n);
  // An empty pass of a device that may nap: extends the calling thread's
  // idle run, and naps once it is long enough (progress.cpp).
  [[gnu::noinline, gnu::cold]] void idle_pass();
  void nap();
  void post_initial_receives();
  bool drain_backlog();
  bool refill_receives();
  std::unique_ptr<reg_cache> make_reg_cache(net::mr_access access,
                                            const reg_cache::options& options);
};

// Hands the messages of d.parked to the program while packets are free, in
// order (eager.cpp); true if it delivered any.
bool deliver_parked(device& d);

// The devices that may nap (device::nap; progress.cpp), registered by their
// constructor while LCI_PROGRESS_NAP is on and unregistered first thing
// when freed.
void nap_register(device* d);
void nap_unregister(device* d);

inline device* to_device(LCI_device_t d) { return reinterpret_cast<device*>(d); }

// Medium buffers handed to LCI by address are the caller's memory or a
// buffer of some device's pool (LCI_mbuffer_alloc, LCI_recvmn). All packet
// slabs lie inside [g_slabs_lo, g_slabs_hi) (widened as devices appear), so
// caller memory is recognised with two compares; only an address inside
// that range pays the scan over devices.
extern std::atomic<uintptr_t> g_slabs_lo, g_slabs_hi;
device* scan_pool_owner(const void* address);
inline device* foreign_pool_owner(const void* address) {
  const auto a = reinterpret_cast<uintptr_t>(address);
  if (__builtin_expect(a < g_slabs_lo.load(std::memory_order_relaxed) ||
                           a >= g_slabs_hi.load(std::memory_order_relaxed), 1))
    return nullptr;
  return scan_pool_owner(address);
}
// Makes a new device's slab known to foreign_pool_owner / forgets it.
void add_pool_owner(device* d);
void remove_pool_owner(device* d);

// A backend registration on d; handle == nullptr when it failed (or when
// the test hook LCIT_fail_next_registrations made it fail).
net::mr register_memory(device& d, void* address, size_t length, net::mr_access access);

}  // namespace lci

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
// /proc/<pid>/fd/<n> (possible only for the same user's processes), maps
// it and checks its header. On a host of at most LCI_SHM_MAP_ALL ranks
// every peer does so at start-up: after a second fence every local peer
// has mapped it and the descriptor is closed (close_descriptor()), so that
// from then on no descriptor or name of the segment exists, only the
// mappings of the job's ranks; the window in between (device creation,
// two bootstrap fences) is the only time another process of the same user
// could open it. On a larger host a peer maps it at its first contact
// (reach), so the descriptor stays open while the device lives: a process
// of the same user that may read /proc/<pid>/fd (ptrace read access,
// which Yama's scope 1 does not restrict) could open it then, as it could
// already read the rank's memory without Yama.
//
// Trust. What a peer writes into a cell is input: poll() reads each field
// of a cell once (read_fields), checks it against what this process knows
// (check_cell: the kind, the claimed source is a local rank of this job,
// the length against the largest payload; then the posted receive's
// capacity, the registrations for remote access, the outstanding
// operations) and only then uses the copies. A cell that fails is dropped
// and reported to the core as a `dropped` completion (the same counter and
// rate-limited warning as a malformed network message). Ranks of one host
// may copy into each other's memory anyway (cross-memory attach), so the
// rank a cell claims is trusted once it names a local rank of this job;
// the rings are not split per sender.
//
// Messages. A send reserves a cell in the target's ring (one CAS, ring.hpp),
// copies header and payload into it and publishes it: no lock, no system
// call, no allocation. The target's poll first offers the message to the
// core's in-place callee (deliver_in_place: a receive that already waits
// copies the payload straight out of the cell); otherwise it copies the
// cell into a posted receive buffer. Either way the cell is then freed. A
// full ring is `retry`.
//
// Bulk data (post_write, post_write_imm, post_read). With cross-memory
// attach the initiator copies straight between its buffer and the peer's
// (one copy, finished at return) and only then reserves the cell that
// carries a write's immediate data, so a transfer of any size never holds a
// cell of the target's ring (no head-of-line blocking). Where the kernel
// refuses it (ptrace restrictions, containers) or LCI_SHM_CMA=0, the data
// is pipelined through the rings instead: a write travels in cells of one
// piece each (max_message_size(rank)) and is acknowledged by the target,
// which copies it into the registration it names after checking range and
// key; a read is a request answered with a cell of data. Each pipelined
// write and read holds a slot of this device's operation table (op_table):
// replies and acknowledgements name the slot and its generation, and are
// accepted only from the rank the operation went to, with the length it
// asked for. A target keeps at most op_table::slots unanswered requests
// per peer (a peer never has more outstanding); more are dropped. An
// answer that finds its requester's ring full waits in that requester's
// own queue (the requesters with answers waiting are served in turn, so a
// rank that stops draining its ring delays nobody else's), and a read's
// bytes are copied only when its answer goes, under the registration
// lock, after its range is checked again: memory deregistered meanwhile
// (perhaps unmapped) is answered with a refusal, never read. A pipelined
// write is likewise checked and copied under that lock, so no copy from
// or into a registration runs after its deregistration returns.
//
// Completions of this process's own operations (send_done, rma_done,
// failed) go through a private ring of the same kind, drained by poll();
// the few that find it full wait in a short list of finished operations.
//
// Cross-memory attach and Yama. With ptrace_scope 1, a process may be
// attached (and so read or written by process_vm_*) only by its ancestors
// or by the one process it names with PR_SET_PTRACER and that process's
// descendants. A device with local peers names the nearest common ancestor
// of all of them (the launcher's process, e.g. lcrun or hydra_pmi_proxy),
// never "any process", and never pid 1; the last native device to close
// clears it. Singletons and ranks alone on their host name nobody.
//
// Peers that die: poll() checks, at most every 100 ms, that every local
// peer still runs (a pidfd, or kill(pid, 0)), whether or not it found
// work; a peer that exited without closing its device ends the job with a
// message naming its rank, or, where the core asked for it
// (options::peer_failed, LCI_PEER_FAILURE=continue), is reported there once
// and checked no more. Then its pipelined operations in flight, and any
// write or read posted to it later, complete as failed (ESRCH): it answers
// none, and a full ring of its is drained by nobody. A cell of this rank's
// ring that it had claimed and not yet published (killed in the middle of
// a send) is given back by poll(): a claim names its producer (ring.hpp),
// so one dead sender never blocks the ring for the living.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "lci/backend/net_types.hpp"
#include "lci/backend/native/ring.hpp"
#include "lci/bootstrap/bootstrap.hpp"
#include "lci/util/copy.hpp"
#include "lci/util/spin.hpp"

namespace lci::native {

using net::completion;
using net::completion_kind;
using net::status;

// What a cell of an inbound ring carries.
enum class cell_kind : uint8_t {
  nop,           // reserved, then abandoned (nothing to do)
  message,       // a message: imm, length bytes of payload
  write_notice,  // a peer's cross-memory write with immediate data landed
  write_data,    // pipelined write: length bytes for (address, key); imm if flags & has_imm
  write_ack,     // answer to write_data `op`: done, or refused (flags & error)
  read_request,  // pipelined read: send length bytes of (address, key) back, for `op`
  read_reply,    // answer to read_request `op`: length bytes, or refused (flags & error)
};
inline constexpr uint8_t last_cell_kind = static_cast<uint8_t>(cell_kind::read_reply);

inline constexpr uint8_t flag_has_imm = 1;
inline constexpr uint8_t flag_error = 2;

// The fixed part of a cell as it lies in shared memory; a message's payload
// follows at `data`. Only its producer writes it, but a hostile producer may
// write it at any time: the consumer reads it through read_fields() alone.
struct cell {
  std::atomic<uint64_t> seq;  // ring.hpp
  uint8_t kind;               // a cell_kind
  uint8_t flags;
  uint16_t reserved;
  int32_t src;      // sender's rank (claimed)
  uint32_t imm;
  uint32_t length;  // payload bytes; read_request: the bytes asked for
  uint64_t address;  // bulk kinds: where the bytes go or come from
  uint64_t key;      // ... and the registration's key
  uint64_t op;       // write_data/read_request: the requester's operation; echoed by the replies
  char* data() { return reinterpret_cast<char*>(this + 1); }
};
static_assert(sizeof(cell) == 48, "cell header layout");

// A cell's fields, each read once from shared memory.
struct cell_fields {
  uint8_t kind;
  uint8_t flags;
  int32_t src;
  uint32_t imm;
  uint32_t length;
  uint64_t address;
  uint64_t key;
  uint64_t op;
};

// One relaxed atomic load per field: the compiler cannot read a field
// again later (as it may for a plain struct copy of memory another process
// writes), so what is checked is what is used. The ring's acquire of the
// sequence word orders these after the producer's writes.
inline cell_fields read_fields(const cell* c) {
  cell_fields f;
  f.kind = __atomic_load_n(&c->kind, __ATOMIC_RELAXED);
  f.flags = __atomic_load_n(&c->flags, __ATOMIC_RELAXED);
  f.src = __atomic_load_n(&c->src, __ATOMIC_RELAXED);
  f.imm = __atomic_load_n(&c->imm, __ATOMIC_RELAXED);
  f.length = __atomic_load_n(&c->length, __ATOMIC_RELAXED);
  f.address = __atomic_load_n(&c->address, __ATOMIC_RELAXED);
  f.key = __atomic_load_n(&c->key, __ATOMIC_RELAXED);
  f.op = __atomic_load_n(&c->op, __ATOMIC_RELAXED);
  return f;
}

// The checks of a cell that need nothing but the cell and the job: the
// kind, the claimed source (a local rank of this job: is_local[src], src <
// nranks), the
// length against the largest payload, the flags. Returns the field that
// failed, or nullptr. What depends on live state (receive capacity,
// registrations, outstanding operations) is checked where it is used.
inline const char* check_cell(const cell_fields& f, const uint8_t* is_local, size_t nranks,
                              size_t max_payload) {
  if (f.kind > last_cell_kind) return "kind";
  if (f.src < 0 || static_cast<size_t>(f.src) >= nranks || !is_local[static_cast<size_t>(f.src)])
    return "source rank (not a rank of this host)";
  if (f.length > max_payload) return "length";
  if (f.flags & ~(flag_has_imm | flag_error)) return "flags";
  switch (static_cast<cell_kind>(f.kind)) {
    case cell_kind::nop:
    case cell_kind::message:
      return nullptr;
    case cell_kind::write_notice:
    case cell_kind::write_ack:
      return f.length == 0 ? nullptr : "length (no payload expected)";
    case cell_kind::write_data:
      return (f.flags & flag_error) ? "flags" : nullptr;
    case cell_kind::read_request:
      return f.flags ? "flags" : nullptr;
    case cell_kind::read_reply:
      return (f.flags & flag_has_imm) ? "flags"
             : (f.flags & flag_error) && f.length ? "length (refused read with data)"
                                                  : nullptr;
  }
  return "kind";
}

// A rank's segment starts with this header, then its registration table
// (reg_table_offset), then the ring's cells (cells_offset).
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
  // The doorbell (native_device::nap): 1 while a thread of the owner may be
  // asleep on it (a futex word); whoever publishes work for the owner and
  // reads 1 exchanges it for 0 and wakes the sleepers.
  alignas(64) std::atomic<uint32_t> armed;
};
inline constexpr uint64_t segment_magic = 0x4c43495f53484d31ull;  // "LCI_SHM1"
inline constexpr uint32_t segment_version = 6;
static_assert(sizeof(segment_header) <= 256, "segment header layout");

// The owner's registrations for remote access, published in its segment so
// that a peer's cross-memory write or read can check its key and range
// before it copies (as a NIC checks an RDMA key): memory deregistered,
// and perhaps freed, is then refused instead of written. A hash table of
// reg_buckets buckets of 8 entries, by key, with linear probing: a key
// whose home bucket is full lies in one of the next buckets, and the home
// bucket's `reach` says how many of them its keys may occupy (at most
// reg_max_reach), so a lookup reads the home bucket and `reach` more and
// an unknown key is always refused. Only the owner writes the table (under
// its registration lock), bracketing each change of a bucket with an odd
// version; readers retry while the version is odd or moved. A key that
// finds no free entry within reach is not recorded: its registration is
// refused (the program sees LCI_ERR_RETRY).
struct reg_bucket {
  std::atomic<uint64_t> version;
  uint64_t used;   // bit i: entry i is a registration
  uint64_t reach;  // keys of this home bucket lie in it or in the next `reach` buckets
  uint64_t pad;
  uint64_t key[8];
  uint64_t base[8];
  uint64_t length[8];
};
static_assert(sizeof(reg_bucket) == 224, "registration bucket layout");
inline constexpr size_t reg_buckets = 2048;
inline constexpr uint64_t reg_max_reach = 63;
inline constexpr size_t reg_table_offset = 256;
inline constexpr size_t cells_offset = reg_table_offset + reg_buckets * sizeof(reg_bucket);

inline size_t reg_bucket_of(uint64_t key) {
  return static_cast<size_t>((key * 0x9e3779b97f4a7c15ull) >> 53) & (reg_buckets - 1);
}
// Owner only: records (false: no room within reach of its bucket) or
// forgets a registration. A key recorded again replaces its entry.
bool reg_table_insert(reg_bucket* table, uint64_t key, uint64_t base, uint64_t length);
void reg_table_erase(reg_bucket* table, uint64_t key);
// Any process: whether [address, address + length) may be written or read
// with `key` according to the owner's table (an unknown key: never).
bool reg_table_allows(const reg_bucket* table, uint64_t key, uint64_t address, uint64_t length);

// The transport's settings (from net::settings; their defaults are those
// of lci/core/settings.def, given by the creator).
struct options {
  uint64_t ring_cells = 0;    // LCI_SHM_RING_SIZE (a power of two)
  size_t max_payload = 0;     // the largest message (the core's receive size)
  bool cma = false;           // LCI_SHM_CMA: cross-memory attach where the kernel allows it
  int test_no_cma_rank = -1;  // LCI's tests (LCIT_native_refuse_cma): pipelined to this rank
  // A peer that exited without closing its device is reported here
  // (LCI_PEER_FAILURE=continue, evidence::pid_gone); nullptr: the job ends.
  void (*report_evidence)(int rank, net::evidence e, const char* why) = nullptr;
  // Whether a rank is declared dead: its pipelined RMA requests are
  // refused (LCI_PEER_FAILURE=continue); nullptr: none is.
  bool (*is_failed)(int rank) = nullptr;
  // LCI_SHM_MAP_ALL: with at most this many local ranks every peer is
  // mapped at attach; with more, at the first contact (0: always then).
  int map_all = 0;
};

// The bytes one rank's segment of one device takes.
size_t segment_bytes(const options& o);
size_t cell_size_for(size_t max_payload);

// Which ranks share this host: a key per process (boot id, network and pid
// namespaces, user), equal for two processes exactly when they can reach
// each other through this transport.
std::string host_key();

// The nearest process that is an ancestor of every one of `pids` (by the
// parent links of /proc/<pid>/stat), or 0 when there is none but init.
int common_ancestor(const std::vector<int>& pids);

// Pipelined reads and writes in flight from this device: a fixed table
// whose slots any thread takes (a bit per slot, one CAS) and poll() frees
// when the reply or acknowledgement arrives. An operation's id is its slot
// and the slot's generation, so a stale or forged id names nothing.
class op_table {
 public:
  static constexpr uint32_t slots = 1024;
  op_table();
  enum class op_kind : uint8_t { read, write };
  struct entry {
    op_kind kind;
    int rank;
    void* buffer;     // read: where the reply's bytes go
    uint32_t length;  // the bytes asked for (read) or sent (write)
    void* ctx;
  };

  // A free slot filled with `e`; returns its id, or 0 if every slot is taken.
  uint64_t take(const entry& e);
  // The entry `id` names if it is in flight, was sent to `rank` and is of
  // kind `k`: it is copied out and the slot freed. Any thread. A refused
  // call (another rank or kind) holds the slot only while it compares, and
  // a call for the same id meanwhile waits for it instead of failing, so a
  // refused reply never keeps an operation's own finish (its reply, or the
  // free of a request that could not be posted) from freeing the slot.
  bool finish(uint64_t id, int rank, op_kind k, entry& out);
  // Every operation in flight to `rank`, taken out and appended to `out`
  // (a peer that died answers none of them). Consumer (poll) only.
  void take_all_of(int rank, std::vector<entry>& out);
  int in_flight() const;

 private:
  // A slot's state: generation << 32 | 0 free, 1 being filled, 2 in flight,
  // 3 being finished (or compared by a call that may refuse), so that a
  // call naming an older or newer generation never touches the slot.
  static constexpr uint64_t st_free = 0, st_filling = 1, st_flight = 2, st_finishing = 3;
  struct alignas(64) slot {
    std::atomic<uint64_t> state{0};
    entry e{};
  };
  std::atomic<uint64_t> used_[slots / 64] = {};
  slot s_[slots];
};

class native_device final {
 public:
  // The liveness check of the local peers (check_peers, itself at most
  // every 100 ms) runs at every peer_check_polls-th progress call of a
  // thread, busy or idle: a rank that progresses every 10 ms notices a dead
  // peer within about 0.7 s.
  static constexpr uint32_t peer_check_polls = 64;
  // Creates this rank's segment (not yet shared).
  native_device(int rank, int nranks, int group_index, const options& o);
  ~native_device();
  native_device(const native_device&) = delete;
  native_device& operator=(const native_device&) = delete;

  // What peers need to map the segment: printable, without spaces.
  std::string address() const;
  // Reads the address() strings of the ranks marked local (their segments
  // are mapped at the first contact, reach) and, where Yama needs it, names
  // the local peers' nearest common ancestor as this process's ptracer.
  // Fatal, naming the rank, for a malformed address.
  void attach(const std::vector<std::string>& addresses, const std::vector<bool>& local);
  // After a fence that follows every rank's attach(). Peers are mapped at
  // their first contact (reach), not here.
  void attached();

  // Kept for the backend contract (the descriptor stays open: see attached()).
  void peers_attached() {}
  // Teardown, before the barrier that precedes the device's close: from
  // now on a peer this rank never mapped may exit after its own finalize,
  // which its exit alone cannot tell from a death.
  void begin_close() { closing_.store(true, std::memory_order_relaxed); }

  size_t max_inject() const { return opt_.max_payload; }
  size_t rx_queue_size() const { return own_ring_.size(); }
  // The most one RDMA operation moves to `rank`: unlimited with
  // cross-memory attach, one cell's payload when its data is pipelined.
  size_t max_message_size(int rank) const {
    // (whether cross-memory attach works is learnt when the peer is mapped)
    return const_cast<native_device*>(this)->reach(rank).cma ? SIZE_MAX : opt_.max_payload;
  }
  // Memory this device holds for the transport: its segment (shared) and
  // its private completion ring. Peers' segments are mapped, not owned.
  size_t segment_size() const { return own_bytes_; }
  size_t private_size() const { return local_bytes_; }
  // Local peers (this rank excluded) whose bulk data is pipelined.
  int pipelined_peers() const {
    int n = 0;
    for (size_t r = 0; r < peers_.size(); ++r)
      n += mapped(r) && peers_[r].pid != 0 && !peers_[r].cma;
    return n;
  }
  // Local peers (this rank excluded) whose segment this rank has mapped:
  // those it has talked to (all of them with LCI_SHM_MAP_ALL). Any thread.
  size_t connected_peers() const {
    size_t n = 0;
    for (size_t r = 0; r < peers_.size(); ++r) n += mapped(r) && static_cast<int>(r) != rank_;
    return n;
  }
  // The process named with PR_SET_PTRACER for cross-memory attach (0: none).
  int ptracer() const { return ptracer_; }

  // Registrations: nothing to pin (cross-memory attach needs none); memory
  // for remote access is recorded under its key (the network backend's, or
  // random_bits()) so that pipelined writes and reads can be checked, and
  // published in the segment's table for cross-memory peers. False: the
  // table has no room for the key (the registration is refused).
  bool record_registration(void* addr, size_t len, net::mr_access access, uint64_t key);
  void forget_registration(uint64_t key);

  [[gnu::always_inline]] status inject(int rank, const void* buf, size_t len, uint32_t imm) {
    net::annotate_post(this);
    ring::slot s = reach(rank).inbound.reserve();
    if (__builtin_expect(s.cell == nullptr, 0)) return status::retry;  // ring full
    cell* c = static_cast<cell*>(static_cast<void*>(s.cell));
    fill_message(c, buf, len, imm);
    publish_to(rank, s);
    return status::ok;
  }

  status post_send(int rank, const void* buf, size_t len, void*, uint32_t imm, void* ctx) {
    net::annotate_post(this);
    ring::slot done = local_.reserve();
    if (__builtin_expect(done.cell == nullptr, 0)) return status::retry;
    ring::slot s = reach(rank).inbound.reserve();
    if (__builtin_expect(s.cell == nullptr, 0)) {
      abandon_local(done);
      return status::retry;
    }
    fill_message(static_cast<cell*>(static_cast<void*>(s.cell)), buf, len, imm);
    publish_to(rank, s);
    complete_local(done, completion_kind::send_done, ctx, 0);
    return status::ok;
  }

  // Receive buffers: a lock-free stack that any thread pushes to and poll()
  // (the one consumer) takes whole.
  [[gnu::always_inline]] status post_recv(void* buf, size_t len, void*, void* ctx) {
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

  // False when poll() would find nothing to do: no published cell at the
  // head of either ring, nothing waiting in the finished list or for room
  // in a peer's ring, and no liveness check of the peers due. Any thread,
  // without the progress lock: it reads the heads the poller last stored
  // and one sequence word of each ring, and writes only a count of its own
  // thread (no line that other threads' idle calls write).
  [[gnu::always_inline]] bool may_have_work() {
    if (__builtin_expect((finished_size_.load(std::memory_order_relaxed) |
                          replies_waiting_.load(std::memory_order_relaxed)) != 0, 0))
      return true;
    if (own_ring_.peek(head_.load(std::memory_order_relaxed)) ||
        local_.peek(local_head_.load(std::memory_order_relaxed)))
      return true;
    // Every peer_check_polls-th idle call of a thread runs poll(), which
    // then finds nothing and checks the peers (and lets the core count an
    // empty pass towards a nap). The count is the thread's, whatever the
    // device; each device lets a different residue through, so that a
    // thread progressing k devices in turn lets each of them through.
    return __builtin_expect(((++t_idle_calls - let_through_) & (peer_check_polls - 1)) == 0, 0);
  }

  // Napping: a thread whose progress calls have found nothing for a while
  // sleeps in the kernel until work arrives or a timeout passes, so that
  // idle progress threads leave the processors to those with work. The
  // doorbell is a word of this rank's segment (segment_header::armed): the
  // napper arms it (arm_idle: stores 1, seq_cst), looks for work once more
  // (the rings, the lists of this device; the core adds its own queues)
  // and only then waits on the word while it still reads 1 (nap_on, which
  // may wait on the bells of several devices at once); a producer
  // publishes its cell with a seq_cst store and then reads the word (the
  // two form a Dekker pair: either the napper sees the cell, or the
  // producer sees 1 and wakes it). A local producer of work for poll()
  // (a completion of this process, a finished operation, the core's
  // backlog) rings the same bell (wake_self). A peer may write the word
  // as it likes: the worst it can do is wake this rank for nothing or let
  // it sleep to the timeout.
  //
  // Arms the bell; true when poll() would then find nothing.
  bool arm_idle();
  std::atomic<uint32_t>* bell() { return &own_->armed; }
  void count_nap() {
    naps_.store(naps_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  }
  // Waits while each of the n bells reads 1, for at most timeout_ns.
  static void nap_on(std::atomic<uint32_t>* const* bells, int n, int64_t timeout_ns);
  void wake_self();
  // Naps that slept (for the state dump and the tests).
  uint64_t naps() const { return naps_.load(std::memory_order_relaxed); }

  // A message delivered from its cell, without a receive buffer: called by
  // poll() (under the caller's poll serialisation) with the cell's
  // validated source, immediate data and length and its payload, which
  // stays in the shared cell and is read at most once by the callee (a peer
  // may still write it: only its bytes can change, not the fields). True
  // when the callee consumed the message; false sends it the usual way,
  // through a posted receive buffer and a recv completion.
  using in_place_fn = bool (*)(void* arg, int src, uint32_t imm, const char* payload,
                               size_t length);
  // Set once, before the first poll().
  void deliver_in_place(in_place_fn fn, void* arg) {
    in_place_ = fn;
    in_place_arg_ = arg;
  }

  // Drains up to max completions: this process's own first, then the
  // inbound ring (while receive buffers last). Messages of the ring are
  // first offered to the in-place callee while no other completion of the
  // ring precedes them in this call (so that the caller sees the ring's
  // cells in order); up to max ring cells per call.
  [[gnu::always_inline]] int poll(completion* out, int max) {
    // The causality of a message runs through another process, which
    // ThreadSanitizer does not see (net_types.hpp).
    net::annotate_poll(this);
    int n = 0;
    if (__builtin_expect(finished_size_.load(std::memory_order_relaxed) != 0, 0))
      n = flush_finished(out, max);
    uint64_t local_head = local_head_.load(std::memory_order_relaxed);
    while (n < max) {
      cell_head* h = local_.peek(local_head);
      if (!h) break;
      n += take_local(h, out + n, local_head++);
    }
    local_head_.store(local_head, std::memory_order_relaxed);
    if (__builtin_expect(replies_waiting_.load(std::memory_order_relaxed), 0))
      send_pending_replies();
    int messages = 0;
    uint64_t head = head_.load(std::memory_order_relaxed);
    bool in_place = in_place_ != nullptr;
    int in_place_taken = 0;
    for (int cells = 0; n < max && cells < max; ++cells) {
      cell* c = static_cast<cell*>(static_cast<void*>(own_ring_.peek(head)));
      if (!c) {
        // A cell claimed by a local peer that died before publishing it
        // would hold the ring for ever: it is given back, unread.
        if (__builtin_expect(dead_peers_ != 0, 0) && reclaim_from_dead(head)) {
          ++head;
          continue;
        }
        break;
      }
      // A cell published after this poll began was caused by a post made
      // since (another process in between): acquire again for it.
      net::annotate_poll(this);
      const cell_fields f = read_fields(c);
      if (__builtin_expect(f.kind == static_cast<uint8_t>(cell_kind::message) && f.flags == 0 &&
                               static_cast<uint32_t>(f.src) < is_local_.size() &&
                               is_local_[static_cast<size_t>(f.src)] &&
                               f.length <= opt_.max_payload,
                           1)) {
        if (in_place && in_place_(in_place_arg_, f.src, f.imm, c->data(), f.length)) {
          ++messages;
          ++in_place_taken;
          own_ring_.release(head++);
          continue;
        }
        in_place = false;
        rx_entry* e = rx_private_;
        if (!e) {
          e = rx_private_ = rx_head_.exchange(nullptr, std::memory_order_acquire);
          if (!e) break;  // no receive buffer: the message waits in its cell
        }
        if (__builtin_expect(f.length > e->capacity, 0)) {
          drop(out[n++], f, "length (longer than the receive buffer)");
        } else {
          rx_private_ = e->next;
          if (count_posted_) rx_posted_.fetch_sub(1, std::memory_order_relaxed);
          completion& out_c = out[n++];
          out_c.kind = completion_kind::recv;
          out_c.sealed = false;
          out_c.ctx = e->ctx;
          out_c.src_rank = f.src;
          out_c.imm = f.imm;
          out_c.length = f.length;
          copy_bytes(e, c->data(), f.length);
          ++messages;
        }
      } else {
        const int taken = take_other(c, f, out + n);
        if (taken < 0) break;  // not consumable now: the cell stays
        if (taken > 0) in_place = false;
        n += taken;
      }
      own_ring_.release(head++);
    }
    head_.store(head, std::memory_order_relaxed);
    in_place_last_ = in_place_taken;
    if (messages) {  // one writer (the poller): no read-modify-write needed
      received_.store(received_.load(std::memory_order_relaxed) + static_cast<uint64_t>(messages),
                      std::memory_order_relaxed);
      if (in_place_taken)
        received_in_place_.store(received_in_place_.load(std::memory_order_relaxed) +
                                     static_cast<uint64_t>(in_place_taken),
                                 std::memory_order_relaxed);
    }
    // One writer (the poller). The peers are checked by every poll that
    // found nothing (an idle call let through, above; a message delivered
    // in place is not among the completions, but it is something) and by
    // every peer_check_polls-th poll of a busy rank.
    const uint32_t p = polls_.load(std::memory_order_relaxed) + 1;
    polls_.store(p, std::memory_order_relaxed);
    if (__builtin_expect((n | messages) == 0 || (p & (peer_check_polls - 1)) == 0, 0))
      check_peers();
    return n;
  }

  // Messages the last poll() handed to the in-place callee (they are not
  // among its completions). Read by the poller, under its serialisation.
  int in_place_last() const { return in_place_last_; }
  // Messages received through the rings (for the path counters).
  uint64_t received() const { return received_.load(std::memory_order_relaxed); }
  // ... of which the in-place callee took (deliver_in_place).
  uint64_t received_in_place() const {
    return received_in_place_.load(std::memory_order_relaxed);
  }

  // For LCI's own tests (LCIT_native_forge): publishes `f` (and `length`
  // bytes of payload) as it is in a cell of `rank`'s ring, as a faulty or
  // hostile local peer could; with `retarget`, then overwrites the cell's
  // address with it (a producer changing a cell after publishing it).
  // False if the ring is full.
  bool forge(int rank, const cell_fields& f, const void* payload, size_t length,
             uint64_t retarget);
  // Unanswered requests of peers (reads and writes) waiting for room in
  // their rings.
  size_t pending_replies() const { return replies_count_; }
  int ops_in_flight() const { return ops_.in_flight(); }
  // For the state dump: the inbound ring, each local peer's ring (as this
  // process sees it: cells any sender holds there), the pipelined
  // operations and the answers and completions waiting for room.
  void describe(const net::describe_fn& out) const;
  // For the state dump (any thread; a snapshot): the calls of poll() so
  // far, and the published cells at the heads of the inbound and local
  // rings that no poll took yet.
  uint32_t polls() const { return polls_.load(std::memory_order_relaxed); }
  uint64_t arrivals_waiting() const;

 private:
  struct rx_entry {
    rx_entry* next;
    void* ctx;
    size_t capacity;
  };
  struct peer {
    // Set by map_peer (the first contact), then read-only: inbound, head,
    // regs, bytes, pidfd, cma. pid, segment_fd and probe come from attach.
    ring inbound;          // the peer's inbound ring, mapped here
    segment_header* head = nullptr;
    const reg_bucket* regs = nullptr;  // the peer's registration table, mapped here
    size_t bytes = 0;
    int pid = 0;
    int pidfd = -1;
    int segment_fd = -1;   // its segment's descriptor in its own process
    uintptr_t probe = 0;   // the address of its probe word
    bool cma = false;      // cross-memory attach works towards this peer
    bool dead = false;     // exited without closing (reported to opt_.peer_failed)
  };
  struct pending_reply {   // a request whose answer found the requester's ring full
    cell_kind kind;        // read_reply or write_ack
    bool ok;               // read_reply: checked again when sent
    uint64_t address, length, key, op;
  };
  // What reply() did.
  enum class answer : uint8_t { full, sent, refused };
  struct local_cell {      // a cell of the private completion ring
    std::atomic<uint64_t> seq;
    completion c;
    bool skip;
  };
  // A cross-memory write or read that finished but whose notice (towards
  // `notify`, -1 for none) or completion found a ring full.
  struct finished_op {
    int notify;
    uint32_t imm;
    completion c;
  };

  // A local peer's state, its segment mapped at the first call for it
  // (one acquire load and a branch once mapped).
  [[gnu::always_inline]] peer& reach(int rank) {
    if (__builtin_expect(!mapped_[static_cast<size_t>(rank)].load(std::memory_order_acquire), 0))
      map_peer(rank);
    return peers_[static_cast<size_t>(rank)];
  }
  bool mapped(size_t r) const { return mapped_ && mapped_[r].load(std::memory_order_acquire); }
  // Maps `rank`'s segment, opens its pidfd and tests cross-memory attach
  // towards it; fatal, naming the rank, when the segment cannot be mapped.
  [[gnu::noinline, gnu::cold]] void map_peer(int rank);
  void test_cma(int rank);  // sets peers_[rank].cma
  // Sets rank's segment (mapped at h, `bytes` long, a ring of `cells`
  // cells: values already checked, never read again from the peer's
  // header) and pidfd; map_peer and stand_in then publish it in mapped_.
  void install(int rank, segment_header* h, size_t bytes, uint64_t cells, int pidfd);
  // map_peer for a peer found dead (LCI_PEER_FAILURE=continue): a private
  // segment stands in for its own; check_peers then declares it dead.
  void stand_in(int rank, int pidfd);
  // Writes a segment's header at base and formats its ring.
  segment_header* format_segment(void* base, int rank, int32_t pid) const;
  void declare_dead(size_t rank);  // check_peers: it exited without closing

  // Publishes a cell of `rank`'s ring and wakes that rank if it naps.
  [[gnu::always_inline]] void publish_to(int rank, const ring::slot& s) {
    ring::publish_seq_cst(s);
    ring_bell(peers_[static_cast<size_t>(rank)].head);
  }
  [[gnu::always_inline]] static void ring_bell(segment_header* h) {
    if (__builtin_expect(h->armed.load(std::memory_order_seq_cst) != 0, 0)) wake(h);
  }
  [[gnu::noinline, gnu::cold]] static void wake(segment_header* h);

  [[gnu::always_inline]] void fill_message(cell* c, const void* buf, size_t len, uint32_t imm) {
    c->kind = static_cast<uint8_t>(cell_kind::message);
    c->flags = 0;  // every field the consumer checks is written: a cell is reused
    c->src = rank_;
    c->imm = imm;
    c->length = static_cast<uint32_t>(len);
    copy_bytes(c->data(), buf, len);  // an empty message may name no buffer
  }
  void complete_local(const ring::slot& s, completion_kind kind, void* ctx, int error) {
    auto* lc = static_cast<local_cell*>(static_cast<void*>(s.cell));
    lc->c.kind = kind;
    lc->c.ctx = ctx;
    lc->c.error = error;
    lc->skip = false;
    ring::publish_seq_cst(s);
    ring_bell(own_);
  }
  void abandon_local(const ring::slot& s) {
    static_cast<local_cell*>(static_cast<void*>(s.cell))->skip = true;
    ring::publish(s);
  }
  int take_local(cell_head* h, completion* out, uint64_t pos) {
    auto* lc = static_cast<local_cell*>(static_cast<void*>(h));
    const bool skip = lc->skip;
    if (!skip) *out = lc->c;
    local_.release(pos);
    return skip ? 0 : 1;
  }
  // A dropped cell, reported to the core with the field that failed.
  void drop(completion& out, const cell_fields& f, const char* field) {
    out.kind = completion_kind::dropped;
    out.ctx = const_cast<char*>(field);
    out.src_rank = f.src >= 0 && static_cast<size_t>(f.src) < is_local_.size()
                       ? f.src
                       : net::unknown_source;
    out.imm = f.kind;
    out.length = 0;
    out.error = 0;  // a cell, not a network message
  }
  status write(int rank, const void* buf, size_t len, uint64_t raddr, uint64_t rkey, void* ctx,
               bool with_imm, uint32_t imm);
  // Publishes the notice of a cross-memory write with immediate data in
  // rank's ring; false if the ring is full.
  bool send_notice(int rank, uint32_t imm);
  // Writes the notice of a finished cross-memory write and its local
  // completion, or queues what found a ring full.
  void finish_cma(int notify, uint32_t imm, completion_kind kind, void* ctx, int error);
  int flush_finished(completion* out, int max);
  // The cells other than valid messages; -1: leave the cell for later.
  int take_other(cell* c, const cell_fields& f, completion* out);
  void send_pending_replies();
  // Answers `rank` in its ring: `full` if there is no room. A read's bytes
  // are copied under the registration lock after the range is checked
  // against the registrations as they are then (`refused`: the answer
  // says so and carries nothing), so that memory deregistered since the
  // request, perhaps unmapped, is never read.
  answer reply(int rank, const pending_reply& r);
  // Answers at once where nothing waits for `rank`, else after what waits.
  answer queue_reply(int rank, const pending_reply& r);
  // The range [address, address + length) lies in one registration for
  // remote access with this key (registered_locked: regs_lock_ held).
  bool registered(uint64_t address, uint64_t length, uint64_t key);
  bool registered_locked(uint64_t address, uint64_t length, uint64_t key) const;
  void check_peers();
  // Frees the cell at `head` of the inbound ring if a peer that exited
  // claimed it and never published it.
  bool reclaim_from_dead(uint64_t head);
  // This process's producer id in its peers' rings (ring.hpp): rank + 1,
  // or anonymous in a job too large for the ids.
  uint32_t producer_id() const {
    return static_cast<uint64_t>(rank_) < ring::max_id ? static_cast<uint32_t>(rank_) + 1 : 0;
  }
  // The pipelined operations to a dead peer complete as failed.
  void fail_ops_to(int rank);
  void close_descriptor();

  options opt_;
  int rank_ = 0;
  int group_index_ = 0;
  uint32_t let_through_ = 0;  // group_index_, for may_have_work
  int fd_ = -1;
  int ptracer_ = 0;
  segment_header* own_ = nullptr;
  reg_bucket* own_regs_ = nullptr;
  size_t own_bytes_ = 0;
  ring own_ring_;
  std::vector<peer> peers_;
  std::vector<uint8_t> is_local_;  // by rank: 1 if served by this transport
  // By rank: 1 once peers_[rank] is mapped (release by map_peer, under
  // map_lock_); this rank's own entry from attach.
  std::unique_ptr<std::atomic<uint8_t>[]> mapped_;
  std::mutex map_lock_;
  size_t mapped_count_ = 0;     // under map_lock_ (for map_peer's message)
  size_t local_peers_ = 0;      // ranks on this host besides this one
  size_t unmapped_check_ = 0;   // check_peers' place among the unmapped peers
  std::atomic<bool> closing_{false};  // begin_close: a peer's exit may be its finalize
  bool map_all_ = false;      // every local peer mapped at attach (LCI_SHM_MAP_ALL)
  bool count_posted_ = false;

  // Consumer state (poll() runs under the device's progress lock). The
  // heads, the count of polls and whether replies wait are also read by
  // may_have_work() without the lock: atomics, written by the poller alone
  // (relaxed load and store, no read-modify-write), except the count.
  std::atomic<uint64_t> head_{0};
  std::atomic<uint64_t> local_head_{0};
  std::atomic<uint32_t> replies_waiting_{0};
  rx_entry* rx_private_ = nullptr;
  in_place_fn in_place_ = nullptr;
  int in_place_last_ = 0;
  void* in_place_arg_ = nullptr;
  int64_t last_check_ns_ = 0;
  uint32_t dead_peers_ = 0;  // local peers found exited (check_peers)
  // Answers that found their requester's ring full, one queue per
  // requester (a rank that does not drain its ring delays its own answers
  // only), and the ranks whose queue is not empty, served in turn.
  std::vector<std::deque<pending_reply>> replies_;
  std::deque<int> replying_;
  size_t replies_count_ = 0;

  ring local_;  // this process's completions
  void* local_memory_ = nullptr;  // its tail and cells
  size_t local_bytes_ = 0;

  alignas(64) std::atomic<rx_entry*> rx_head_{nullptr};
  alignas(64) std::atomic<int> rx_posted_{0};
  alignas(64) std::atomic<uint64_t> received_{0};
  std::atomic<uint64_t> received_in_place_{0};
  std::atomic<uint64_t> reclaimed_{0};  // cells freed unread: their producer died
  alignas(64) std::atomic<uint32_t> polls_{0};  // poll() calls (written by the poller)
  std::atomic<uint64_t> naps_{0};
  // Idle calls of may_have_work, per thread (initial-exec: one %fs load).
  static inline thread_local uint32_t t_idle_calls __attribute__((tls_model("initial-exec"))) = 0;
  alignas(64) std::atomic<size_t> finished_size_{0};
  spin_lock finished_lock_;
  std::deque<finished_op> finished_;

  op_table ops_;

  // Registrations for remote access, by key (pipelined bulk data only).
  std::mutex regs_lock_;
  std::map<uint64_t, std::pair<uint64_t, uint64_t>> regs_;  // key -> (address, length)
  bool table_full_warned_ = false;
};

}  // namespace lci::native

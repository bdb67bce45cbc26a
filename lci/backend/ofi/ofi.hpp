// libfabric backend: one RDM endpoint per LCI device.
//
// Layout of the objects (created in this order, destroyed in reverse):
// fabric -> domain -> completion queue, address vector -> endpoint.
// The address vector is a table filled in rank order at start-up, so a
// rank is an index into `addrs_`.
//
// Immediate data: the low 32 bits are the protocol header. Who sent a
// message is established by the provider where it can tell (FI_SOURCE: the
// address-vector index of the connection the message came on, which is the
// rank); a message from an address outside the job has no rank and is
// dropped by the core. Then, with 8 bytes of immediate data, the high 32
// bits carry the job's token (random, drawn by rank 0 at start-up and
// handed out wrapped through the bootstrap, key_exchange.hpp), so a process that impersonates a member's
// address must also guess it. Providers without FI_SOURCE need 8 bytes, and
// the high 32 bits carry the rank the sender claims (lci_info says so).
// LCI_OFI_CQ_DATA_SIZE=4 runs a provider as if it offered only 4 bytes.
//
// None of that proves who sent a message on a connection-based provider
// (tcp;ofi_rxm, verbs;ofi_rxm: the provider believes the listening port a
// connecting process claims, and a process outside the job can take a
// member's connection over and read the token). So on every provider but
// the local-only shm (where the kernel, not a claim, names the peer),
// messages are authenticated (auth.hpp): each one carries a trailer with a
// sequence number and a SipHash tag under a per-job key that the bootstrap
// carries only wrapped (key_exchange.hpp); the receiver checks it before the core sees the
// message (open_sealed), a member's connection whose message fails the
// check ends the job naming that rank, and at teardown every rank compares
// what each peer says it sent with what arrived (check_delivery). With
// authentication the provider's RDMA is not used at all: puts and gets
// travel as authenticated messages of the backend's own (soft_rma.hpp),
// and no memory is registered with the provider for remote access, so a
// key read off the wire opens nothing (LCI_OFI_RMA_MESSAGES=0 goes back to
// the provider's RDMA, whose requests carry registration keys in clear). Keys inside LCI's messages are
// masked as well (seal_key). RDMA writes with immediate data have no
// message form, so with authentication the core uses write + FIN instead
// and a remote-write completion is treated as forged.
//
// A taken-over connection loses what is sent on it while both ranks wait
// for each other, so teardown would never come: every second of progress
// each rank sends each peer it has exchanged messages with a heartbeat
// (itself authenticated, consumed here and never seen by the core) that
// says how many messages it had sent that peer before it, and how many of
// them it withdrew (their send failed before they left; they went again).
// A connection delivers in order, so the receiver of a heartbeat has
// polled all of them, however slowly it progresses: a sequence number
// passed over and never admitted, and not withdrawn, is a lost message;
// if every heartbeat over LCI_OFI_HEARTBEAT_GRACE seconds (and at least
// three of them) finds some, the job ends naming the peer. The heartbeat also carries the count
// of the addressee's messages received: a sender that progresses steadily
// and sees that count stay the same over the grace on both clocks (the
// peer's heartbeats come, nothing of its own arrives) ends the job too.
// A slow receiver, or one that computes between progress calls, is never
// suspected (its count advances), and judges no peer by the second check.
//
// Registrations: keys are the provider's, or random 64-bit values where the
// application chooses them; only memory registered for remote access
// (net::mr_access::remote) is reachable by peers' RDMA, never the packet slab.
//
// Threading: the domain is opened FI_THREAD_SAFE, so posts from many threads
// are safe; poll() is called under the device's progress try-lock.
#pragma once

#include <netinet/in.h>
#include <rdma/fabric.h>
#include <sys/socket.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>

#include <algorithm>
#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "lci/backend/net_types.hpp"
#include "lci/backend/ofi/auth.hpp"
#include "lci/backend/ofi/soft_rma.hpp"
#include "lci/bootstrap/bootstrap.hpp"
#include "lci/util/log.hpp"
#include "lci/util/test_count.hpp"

namespace lci::ofi {

using net::completion;
using net::completion_kind;
using net::status;

class ofi_device final {
 public:
  // Opens the provider and connects to the device of the same group index on
  // every rank through the bootstrap (collective).
  ofi_device(bootstrap::bootstrap& boot, int group_index, const net::settings& s);
  ~ofi_device();
  ofi_device(const ofi_device&) = delete;
  ofi_device& operator=(const ofi_device&) = delete;

  const char* provider_name() const { return provider_.c_str(); }
  size_t max_inject() const { return max_inject_; }
  // Bytes the backend appends to a message: post_send and post_recv
  // buffers need this much room past `len` (the packet slack has it).
  size_t message_overhead() const { return auth_ ? message_auth::trailer_bytes : 0; }
  bool authenticates_messages() const { return auth_ != nullptr; }
  size_t rx_queue_size() const { return rx_size_; }
  // The provider's ep_attr->max_msg_size: the most one send or RDMA moves
  // (with authentication, the most one operation of soft_rma.hpp moves).
  size_t max_message_size() const {
    return soft_ ? std::min<size_t>(max_msg_size_, rma_ops::max_length) : max_msg_size_;
  }

  // Called once every rank of the job has inserted every address (after a
  // barrier that follows the exchange). On shm the provider maps a peer's
  // region as its address is inserted, so by then every peer has mapped
  // this rank's region: its /dev/shm name is unlinked, and no file outlives
  // the process however it ends (SIGKILL, _exit, a launcher's kill).
  void peers_attached();

  net::mr register_memory(void* addr, size_t len, net::mr_access access);
  void deregister_memory(net::mr& m);
  // The provider's own key of a registration (for LCI's tests: with
  // authentication it differs from m.rkey and reaches nothing).
  uint64_t provider_key(const net::mr& m) const;

  // Whether the sender's rank comes from the provider (FI_SOURCE) rather
  // than from the message, and whether messages carry the job token.
  bool source_from_provider() const { return source_from_provider_; }
  bool job_token() const { return token_bits_ != 0; }
  // The message key and the job token, 0 where there is none
  // (LCIT_message_secret only).
  void secret(uint64_t out[3]) const {
    out[0] = auth_ ? auth_->key_word(0) : 0;
    out[1] = auth_ ? auth_->key_word(1) : 0;
    out[2] = token_bits_ >> 32;
  }

  status inject(int rank, const void* buf, size_t len, uint32_t imm) {
    if (auth_) return inject_sealed(rank, buf, len, imm);
    net::annotate_post(this);
    ssize_t rc = fi_injectdata(ep_, buf, len, make_data(imm), addrs_[rank]);
    if (__builtin_expect(rc == 0, 1)) return status::ok;
    return on_post_error("fi_injectdata", rc);
  }

  status post_send(int rank, const void* buf, size_t len, void* desc, uint32_t imm, void* ctx) {
    if (auth_) return post_send_sealed(rank, buf, len, desc, imm, ctx);
    net::annotate_post(this);
    ssize_t rc = fi_senddata(ep_, buf, len, desc, make_data(imm), addrs_[rank], ctx);
    if (__builtin_expect(rc == 0, 1)) return status::ok;
    return on_post_error("fi_senddata", rc);
  }

  status post_recv(void* buf, size_t len, void* desc, void* ctx) {
    if (auth_) return post_recv_sealed(buf, len, desc, ctx);
    net::annotate_post(this);
    ssize_t rc = fi_recv(ep_, buf, len, desc, FI_ADDR_UNSPEC, ctx);
    if (__builtin_expect(rc == 0, 1)) return status::ok;
    return on_post_error("fi_recv", rc);
  }

  // RDMA write of len bytes to (raddr, rkey) at rank. With `delivered`, the
  // completion comes only once the data is visible at the target (a message
  // sent after it cannot overtake it).
  status post_write(int rank, const void* buf, size_t len, void* desc, uint64_t raddr,
                    uint64_t rkey, void* ctx, bool delivered) {
    // Acknowledged by the target: always delivered.
    if (soft_) return soft_write(rank, buf, len, raddr, rkey, ctx);
    if (!delivered) {
      net::annotate_post(this);
      ssize_t rc = fi_write(ep_, buf, len, desc, addrs_[rank], raddr, rkey, ctx);
      if (__builtin_expect(rc == 0, 1)) return status::ok;
      return on_post_error("fi_write", rc);
    }
    iovec iov{const_cast<void*>(buf), len};
    fi_rma_iov rma{raddr, len, rkey};
    fi_msg_rma msg{};
    msg.msg_iov = &iov;
    msg.desc = &desc;
    msg.iov_count = 1;
    msg.addr = addrs_[rank];
    msg.rma_iov = &rma;
    msg.rma_iov_count = 1;
    msg.context = ctx;
    net::annotate_post(this);
    ssize_t rc = fi_writemsg(ep_, &msg, FI_COMPLETION | FI_DELIVERY_COMPLETE);
    if (__builtin_expect(rc == 0, 1)) return status::ok;
    return on_post_error("fi_writemsg", rc);
  }

  // RDMA write that also delivers `imm` to the target's completion queue.
  status post_write_imm(int rank, const void* buf, size_t len, void* desc, uint64_t raddr,
                        uint64_t rkey, uint32_t imm, void* ctx) {
    if (auth_) fatal("libfabric: an RDMA write with immediate data on an authenticated device");
    net::annotate_post(this);
    ssize_t rc = fi_writedata(ep_, buf, len, desc, make_data(imm), addrs_[rank], raddr, rkey, ctx);
    if (__builtin_expect(rc == 0, 1)) return status::ok;
    return on_post_error("fi_writedata", rc);
  }

  status post_read(int rank, void* buf, size_t len, void* desc, uint64_t raddr, uint64_t rkey,
                   void* ctx) {
    if (soft_) return soft_read(rank, buf, len, raddr, rkey, ctx);
    net::annotate_post(this);
    ssize_t rc = fi_read(ep_, buf, len, desc, addrs_[rank], raddr, rkey, ctx);
    if (__builtin_expect(rc == 0, 1)) return status::ok;
    return on_post_error("fi_read", rc);
  }

  // The address a peer names in RDMA to reach `addr` inside registration m
  // that starts at `base`: the virtual address, or the offset into the
  // registration for providers that do not use virtual addresses.
  uint64_t remote_address(const void* base, const void* addr) const {
    return mr_virt_addr_ || soft_ ? reinterpret_cast<uint64_t>(addr)
                         : static_cast<uint64_t>(static_cast<const char*>(addr) -
                                                 static_cast<const char*>(base));
  }
  bool uses_virtual_addresses() const { return mr_virt_addr_ || soft_; }
  // Whether a registration holds on to the physical pages it was made for
  // (see registrations_pin_of() in ofi.cpp).
  bool registrations_pin() const { return registrations_pin_; }

  // A registration key sent to / received from `peer` inside a message,
  // masked under the job key (identity without authentication); a, b, c
  // name the transfer, so that no two masks repeat.
  uint64_t seal_key(int peer, uint64_t key, uint64_t a, uint64_t b, uint64_t c) const {
    return auth_ ? key ^ auth_->mask(auth_->self(), peer, a, b, c) : key;
  }
  uint64_t open_key(int peer, uint64_t sealed, uint64_t a, uint64_t b, uint64_t c) const {
    return auth_ ? sealed ^ auth_->mask(peer, auth_->self(), a, b, c) : sealed;
  }

  // A received message with `sealed` set (buf: its receive buffer), under
  // the poll lock and in the order poll() returned the messages: takes its
  // sequence number's place in its sender's replay window (auth.hpp), noted
  // in c.admission for open_sealed. Where the rank is only claimed, the tag
  // is checked here first (a forged claim moves no window).
  void admit_sealed(completion& c, const void* buf);
  // Then, on any thread (buf: its receive buffer): checks
  // its trailer and strips it (c.length). From a member's connection (the
  // provider named the rank) a message that fails is fatal, naming the
  // rank; where the rank is only claimed, the message is marked as from an
  // unknown source (the core drops and counts it).
  // An authentic message whose sequence number was admitted before or fell
  // out of the window at its poll (a duplicate) is dropped and counted.
  // Returns false when the message was the backend's own (a heartbeat) or
  // a duplicate: the caller gives its buffer back without passing it on.
  bool open_sealed(completion& c, const void* buf);

  // Teardown, before the barrier that precedes check_delivery: no more
  // liveness probes (peer_gone) from this rank. Heartbeats go on until
  // check_delivery: a peer still computing must not find this rank silent.
  void begin_close() { probes_stopped_.store(true, std::memory_order_relaxed); }

  // Collective, at teardown, after every rank stopped sending on this
  // device: each rank publishes how many messages it sent to each peer
  // (bootstrap), then calls `progress` (bounded) until as many arrived from
  // each. A shortfall is fatal and names the peer. No-op without
  // authentication.
  void check_delivery(bootstrap::bootstrap& boot, const std::function<void()>& progress,
                      const std::function<bool(int)>& failed);

  // A peer known dead (LCI_PEER_FAILURE=continue): its puts and gets in
  // flight fail, the work queued for it is dropped.
  void forget_peer(int rank);

  // A message send of the core's to `rank` failed before it left (its
  // connection broke; LCI_PEER_FAILURE=continue): its sequence number is
  // withdrawn, so that the peer's heartbeat check does not count it lost
  // (the core sends it again with a new one).
  void withdraw_send(int rank) {
    if (auth_) auth_->withdraw(rank);
  }

  // After the core has handled a batch of completions of poll(): sends
  // what handling them queued (answers to RDMA pieces, merged).
  void end_of_batch() {
    if (soft_ && soft_pending_.any()) soft_resume();
  }

  // Inlined into the progress loop: it runs for every (often empty) poll.
  [[gnu::always_inline]] int poll(completion* out, int max) {
    if (__builtin_expect(watch_pids_, 0)) check_pids();
    constexpr int batch = 16;
    fi_cq_data_entry entries[batch];
    fi_addr_t sources[batch];
    if (max > batch) max = batch;
    // Before the read: libfabric's progress inside it may write user buffers.
    net::annotate_poll(this);
    ssize_t n = source_from_provider_
                    ? fi_cq_readfrom(cq_, entries, static_cast<size_t>(max), sources)
                    : fi_cq_read(cq_, entries, static_cast<size_t>(max));
    // The common case first: an empty queue (-FI_EAGAIN) without
    // authentication is one compare and one test.
    if (__builtin_expect(n == -FI_EAGAIN, 1) && !auth_) return 0;
    if (auth_) return poll_sealed(out, max, entries, sources, n);
    if (n <= 0) return n == 0 ? 0 : read_error(out, n);
    uint64_t received = 0;
    for (ssize_t i = 0; i < n; ++i) received += convert<false>(entries[i], sources + i, out[i]);
    count_received(received);
    return static_cast<int>(n);
  }

  // Messages received: the recv and recv_failed completions poll() returned
  // (a statistic: LCIX_transport_counts).
  uint64_t received() const { return received_.load(std::memory_order_relaxed); }
  // For the state dump: the provider, the receives posted (with
  // authentication) and, for puts and gets as messages, the operations in
  // flight, the staging buffers in use and each peer's queued work.
  void describe(const net::describe_fn& out) const;

 private:
  // `source`: read only where the provider fills it (FI_SOURCE).
  // `sealed`: whether this device authenticates messages (auth_ != nullptr),
  // known to the caller, so that the unauthenticated poll tests nothing.
  // Returns whether the completion is a received message.
  template <bool sealed>
  [[gnu::always_inline]] bool convert(const fi_cq_data_entry& e, const fi_addr_t* source,
                                      completion& c) {
    c.ctx = e.op_context;
    const bool recv = e.flags & FI_RECV;
    if (e.flags & (FI_RECV | FI_REMOTE_WRITE)) {
      c.kind = recv ? completion_kind::recv : completion_kind::remote_write;
      c.imm = static_cast<uint32_t>(e.data);
      c.sealed = sealed;
      c.admission = 0;
      if (sealed && (e.flags & FI_RECV)) rx_posted_.fetch_sub(1, std::memory_order_relaxed);
      c.src_rank = !source_from_provider_ ? static_cast<int>(e.data >> 32)
                   : (e.flags & FI_RECV) ? provider_source(e.data, *source)
                   : token_matches(e.data) ? net::any_member : net::bad_token;
      // No job member writes with immediate data when messages are
      // authenticated (the core uses write + FIN).
      if (sealed && !(e.flags & FI_RECV)) c.src_rank = net::bad_token;
      c.length = e.len;
    } else if (e.flags & (FI_WRITE | FI_READ)) {
      c.kind = completion_kind::rma_done;
    } else {
      c.kind = completion_kind::send_done;
    }
    return recv;
  }
  // Only poll() (under the core's progress lock) writes it.
  void count_received(uint64_t k) {
    if (k)
      received_.store(received_.load(std::memory_order_relaxed) + k, std::memory_order_relaxed);
  }
  // poll() with authentication: heartbeats, the sends of soft_rma's staging
  // buffers (consumed here), its finished operations and waiting work.
  int poll_sealed(completion* out, int max, const fi_cq_data_entry* entries,
                  const fi_addr_t* sources, ssize_t n);
  uint64_t make_data(uint32_t imm) const { return high_bits_ | imm; }
  // The sender of a message, from its FI_SOURCE address and token.
  bool token_matches(uint64_t data) const { return (data & ~uint64_t{0xffffffff}) == token_bits_; }
  int provider_source(uint64_t data, fi_addr_t source) const {
    if (!token_matches(data)) return net::bad_token;
    return source < nranks_ ? static_cast<int>(source) : net::unknown_source;
  }
  status on_post_error(const char* call, ssize_t rc);
  status inject_sealed(int rank, const void* buf, size_t len, uint32_t imm);
  status inject_sealed_locked(message_auth::sender& s, int rank, const void* buf, size_t len,
                              uint32_t imm);
  status post_send_sealed(int rank, const void* buf, size_t len, void* desc, uint32_t imm,
                          void* ctx);
  status post_recv_sealed(void* buf, size_t len, void* desc, void* ctx);
  // Turns a failed operation into a `failed` completion (or aborts if the
  // queue itself broke). Returns the number of completions written (0 or 1).
  int read_error(completion* out, ssize_t rc);

  fid_fabric* fabric_ = nullptr;
  fid_domain* domain_ = nullptr;
  fid_cq* cq_ = nullptr;
  fid_av* av_ = nullptr;
  fid_ep* ep_ = nullptr;
  fi_info* info_ = nullptr;
  std::vector<fi_addr_t> addrs_;
  // What make_data puts in the high 32 bits: the claimed rank, the job
  // token (token_bits_), or nothing (4-byte immediate data).
  uint64_t high_bits_ = 0;
  uint64_t token_bits_ = 0;
  fi_addr_t nranks_ = 0;
  bool source_from_provider_ = false;
  size_t mr_key_size_ = 8;
  size_t max_inject_ = 0;
  size_t rx_size_ = 0;
  size_t max_msg_size_ = 0;
  bool mr_local_ = false, mr_endpoint_ = false, mr_prov_key_ = false, mr_virt_addr_ = false;
  bool registrations_pin_ = true;
  std::string provider_;
  // Message authentication (auth.hpp); null where it is off (shm).
  std::unique_ptr<message_auth> auth_;
  // Puts and gets as authenticated messages (soft_rma.hpp): with
  // authentication, unless LCI_OFI_RMA_MESSAGES=0.
  bool soft_ = false;
  int group_index_ = 0;
  int check_rounds_ = 0;  // check_delivery calls so far (names its bootstrap keys)
  // Heartbeats (see the top of this file). polls_ and next_heartbeat_ns_:
  // the poller's (under the progress lock); watch_ by peer, under watch_lock_.
  struct watch {
    int64_t since_ns = 0;    // since when every heartbeat found messages missing (0: none are)
    uint64_t lost = 0;       // how many the first of them found missing
    uint32_t beats = 0;      // heartbeats since then, each finding some missing
  };
  // What arrives of this rank's messages at a peer, by its heartbeats.
  struct outbound_watch {
    int64_t since_ns = 0;       // when `sent` was read
    int64_t since_peer_ns = 0;  // the peer's clock in the heartbeat then
    uint64_t sent = 0;          // messages sent to the peer by then
    uint64_t arrived = 0;       // of them, received by the peer by then
    uint32_t beats = 0;         // heartbeats since then, `arrived` unchanged
    int64_t last_ns = 0;        // when its last heartbeat arrived (the state dump)
  };
  std::vector<outbound_watch> outbound_;  // under watch_lock_
  int64_t heartbeat_grace_ns_ = 0;  // LCI_OFI_HEARTBEAT_GRACE
  int64_t last_beat_check_ns_ = 0;  // the poller's (send_heartbeats)
  // When this rank last resumed progress after a pause (send_heartbeats).
  std::atomic<int64_t> progress_gap_end_ns_{0};
  void send_heartbeats();
  void note_duplicate(int src);
  std::atomic<bool> duplicate_warned_{false};
  void on_heartbeat(int src, const void* payload);
  uint32_t polls_ = 0;
  int64_t next_heartbeat_ns_ = 0;
  std::atomic<int> rx_posted_{0};  // receive buffers posted and not completed
  std::atomic<uint64_t> received_{0};  // see received()
  std::atomic<bool> closing_{false};  // check_delivery began: no more heartbeats or pid checks
  std::atomic<bool> probes_stopped_{false};  // begin_close: no more liveness probes
  bool (*is_failed_)(int rank) = nullptr;  // a dead peer gets no heartbeat (settings::is_failed)
  // LCI_PEER_FAILURE=continue (settings::report_evidence): what this device
  // learns about a peer's liveness is reported there (the core's one owner
  // of peer states decides); nullptr: a peer's loss is fatal.
  void (*report_)(int rank, net::evidence e, const char* why) = nullptr;
  bool (*is_suspected_)(int rank) = nullptr;  // settings::is_suspected
  // LCIT_fail_next_sends and LCIT_lose_next_sends (settings::test_fail_sends,
  // test_lose_sends): sends sealed and counted, not posted; the next poll
  // completes them (test_done_, under held_lock_) as failed or as sent.
  std::atomic<int>* test_fail_sends_ = nullptr;
  std::atomic<int>* test_lose_sends_ = nullptr;
  std::vector<std::pair<void*, completion_kind>> test_done_;
  std::atomic<bool> test_done_any_{false};
  static bool test_hit(std::atomic<int>* count) {
    return __builtin_expect(count != nullptr, 0) && take_test_count(*count);
  }
  void test_complete(void* ctx, completion_kind k) {
    std::lock_guard<std::mutex> g(held_lock_);
    test_done_.emplace_back(ctx, k);
    test_done_any_.store(true, std::memory_order_release);
  }
  // Suspected peers (LCI_PEER_FAILURE=continue): probed every 200 ms of
  // polling; the staging buffers of RDMA pieces whose send failed wait in
  // held_pieces_ (under held_lock_) until the peer is alive or dead.
  void check_suspects();
  int64_t next_suspect_check_ns_ = 0;  // the poller's
  std::mutex held_lock_;
  std::vector<int> held_pieces_;
  std::vector<uint8_t> staging_kind_;  // the own_kind each staging buffer was sent as
  // Where a provider's addresses are IP socket addresses (tcp), each rank's
  // listening address: a peer whose heartbeat the provider keeps refusing
  // is probed with a TCP connection attempt there; the kernel refuses it
  // once the process is gone (peer_gone). Empty elsewhere.
  std::vector<sockaddr_storage> probe_addrs_;
  bool peer_gone(int rank) const;
  // On a local-only provider (shm) with LCI_PEER_FAILURE=continue: each
  // rank's pid and pidfd (0 and -1 for this rank; -1 where pidfd_open is
  // refused: kill(pid, 0) instead), checked every 100 ms of polling
  // (check_pids, from poll). Empty elsewhere.
  bool watch_pids_ = false;
  std::vector<int> pids_;
  std::vector<int> pidfds_;
  uint32_t pid_polls_ = 0;  // the poller's (under the progress lock)
  int64_t next_pid_check_ns_ = 0;
  bool pid_exited(int rank) const;
  void check_pids();
  mutable std::mutex watch_lock_;
  std::vector<watch> watch_;
  // On the shm provider: the region's /dev/shm file, named by this device
  // (shm_name.hpp); empty on other providers.
  std::string shm_file_;

  // RDMA as authenticated messages (soft_rma.hpp, soft_rma.cpp); only with
  // authentication.
  static constexpr int staging_count = 64;
  void soft_setup(size_t receive_size);
  status soft_write(int rank, const void* buf, size_t len, uint64_t raddr, uint64_t rkey,
                    void* ctx);
  status soft_read(int rank, void* buf, size_t len, uint64_t raddr, uint64_t rkey, void* ctx);
  void on_own_message(int src, uint32_t imm, const char* payload, size_t length);
  // Queues work for `rank`; sends it now, or at the end of the batch.
  void soft_queue(int rank, const rma_work& w, bool coalesce, bool now);
  bool soft_refuse_more(int rank);
  void soft_pump(int rank);
  void soft_resume();
  void mark_pending(int rank);
  void note_refused(int rank);
  int soft_completions(completion* out, int max);
  int staging_take(int rank);
  void staging_give(int index);
  int staging_index(const void* ctx) const;
  status send_own_locked(message_auth::sender& s, int rank, own_kind k, const rma_header& h);
  status post_own_locked(message_auth::sender& s, int rank, own_kind k, char* staged,
                         size_t len);
  size_t piece_ = 0;          // data bytes of one write_piece / read_data
  size_t staging_size_ = 0;   // header, piece and trailer
  std::vector<char> staging_;  // staging_count buffers of staging_size_
  std::vector<int> staging_rank_;  // the peer each buffer is being sent to
  fid_mr* staging_mr_ = nullptr;
  std::atomic<uint64_t> staging_free_{~uint64_t{0}};
  std::unique_ptr<rma_ops> ops_;
  std::unique_ptr<reg_table> regs_;
  std::unique_ptr<rma_peer[]> peers_;
  resume_marks soft_pending_;            // peers with pending set
  std::atomic<uint64_t> refused_{0};     // refused RDMA messages
  uint64_t refused_told_ = 0;            // of those, reported as dropped (poller's)
  std::atomic<int> refused_rank_{-1};    // the sender of the latest
};

}  // namespace lci::ofi

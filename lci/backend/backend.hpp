// The backend interface: what the protocol layer needs from a network.
//
// A backend device is one network context (libfabric fabric/domain/endpoint,
// or verbs context/PD/QPs) connected to the same device of every rank. Each
// backend is a `final` class with these members, written inline:
//
//   status inject(int rank, const void* buf, size_t len, uint32_t imm);
//       small send with 32-bit immediate data, done at return, no completion
//   status post_send(int rank, const void* buf, size_t len, void* desc,
//                    uint32_t imm, void* ctx);
//       send from registered memory; a send_done completion carries ctx
//   status post_recv(void* buf, size_t len, void* desc, void* ctx);
//       posts a receive buffer; a recv completion carries ctx, the length,
//       the immediate data and the source rank
//   status post_write(rank, buf, len, desc, raddr, rkey, ctx, delivered);
//   status post_write_imm(rank, buf, len, desc, raddr, rkey, imm, ctx);
//   status post_read(rank, buf, len, desc, raddr, rkey, ctx);
//       RDMA; an rma_done completion carries ctx (write_imm also gives the
//       target a remote_write completion with imm)
//   int poll(completion* out, int max);
//       drains up to max completions
//   mr register_memory(void* addr, size_t len, mr_access); void deregister_memory(mr&);
//     (a failed registration returns an mr whose handle is nullptr)
//   size_t max_inject() const; size_t rx_queue_size() const;
//   size_t max_message_size() const;  (the most one operation moves)
//   uint64_t remote_address(base, addr) const; bool uses_virtual_addresses() const;
//     (backend_device, below, answers these per peer: each route's own limits)
//   bool registrations_pin() const;  (whether registrations hold physical pages)
//   const char* provider_name() const;
//
// Every `status` is ok or retry (a resource is momentarily missing: the
// caller backs off, progresses and tries again); anything else is fatal
// inside the backend, logged once where it is detected.
//
// Transports. Two network backends, ofi (lci/backend/ofi, always built)
// and ibv (lci/backend/ibv, built when libibverbs is found: LCI_HAVE_IBV),
// and the native intra-node transport (lci/backend/native: rings in shared
// memory and cross-memory attach between the ranks of one host, on unless
// LCI_SHM=0). The native transport has the data-path members above; it
// registers nothing itself, but records the registrations made through
// backend_device so that it can check what a peer's cell names. The
// protocol layer names one concrete type, backend_device (below), which
// holds the native transport and, where some rank of the job is on another
// host, a network backend, and picks one of them per peer.
//
// Network backend selection (network_device below). Which network backend
// a device opens is decided at run time, once per process (process_backend,
// select.hpp: LCI_BACKEND, else ibv when an active verbs port exists, else
// ofi). network_device holds the chosen backend in place (std::optional, no
// extra pointer) and forwards each inline call through one switch on a
// constant tag: a single well-predicted branch per call, instead of
// templating the whole protocol layer on the backend type (STYLE §2 allows
// this setup-time selection; no virtual call). Without LCI_HAVE_IBV there
// is no switch at all: every call goes straight to ofi.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "lci/backend/net_types.hpp"
#include "lci/backend/ofi/ofi.hpp"
#include "lci/backend/select.hpp"
#include "lci/backend/native/native.hpp"
#ifdef LCI_HAVE_IBV
#include "lci/backend/ibv/ibv.hpp"
#endif

namespace lci::net {

// The backend this process uses (decided once, on first call: LCI_BACKEND
// and, where it matters, a probe of the verbs devices). A request that
// cannot be met is fatal here, with a one-line message.
const backend_choice& process_backend(const settings& s);

#ifdef LCI_HAVE_IBV
#define LCI_NET_FORWARD(call) \
  (kind_ == backend_kind::ibv ? ibv_->call : ofi_->call)
#else
#define LCI_NET_FORWARD(call) (ofi_->call)
#endif

class network_device final {
 public:
  network_device(bootstrap::bootstrap& boot, int group_index, const settings& s);
  network_device(const network_device&) = delete;
  network_device& operator=(const network_device&) = delete;

  backend_kind kind() const { return kind_; }
  const char* provider_name() const { return LCI_NET_FORWARD(provider_name()); }
  size_t max_inject() const { return LCI_NET_FORWARD(max_inject()); }
  size_t rx_queue_size() const { return LCI_NET_FORWARD(rx_queue_size()); }
  size_t max_message_size() const { return LCI_NET_FORWARD(max_message_size()); }
  mr register_memory(void* addr, size_t len, mr_access a) {
    return LCI_NET_FORWARD(register_memory(addr, len, a));
  }
  void deregister_memory(mr& m) { LCI_NET_FORWARD(deregister_memory(m)); }
  // The provider's own key of a registration (LCI's tests).
  uint64_t provider_key(const mr& m) const { return is_ofi() ? ofi_->provider_key(m) : m.rkey; }
  // Every rank has connected to every other (see ofi_device::peers_attached).
  void peers_attached() {
#ifdef LCI_HAVE_IBV
    if (kind_ == backend_kind::ibv) return;
#endif
    ofi_->peers_attached();
  }

  [[gnu::always_inline]] status inject(int rank, const void* buf, size_t len, uint32_t imm) {
    return LCI_NET_FORWARD(inject(rank, buf, len, imm));
  }
  [[gnu::always_inline]] status post_send(int rank, const void* buf, size_t len, void* desc,
                                          uint32_t imm, void* ctx) {
    return LCI_NET_FORWARD(post_send(rank, buf, len, desc, imm, ctx));
  }
  [[gnu::always_inline]] status post_recv(void* buf, size_t len, void* desc, void* ctx) {
    return LCI_NET_FORWARD(post_recv(buf, len, desc, ctx));
  }
  status post_write(int rank, const void* buf, size_t len, void* desc, uint64_t raddr,
                    uint64_t rkey, void* ctx, bool delivered) {
    return LCI_NET_FORWARD(post_write(rank, buf, len, desc, raddr, rkey, ctx, delivered));
  }
  status post_write_imm(int rank, const void* buf, size_t len, void* desc, uint64_t raddr,
                        uint64_t rkey, uint32_t imm, void* ctx) {
    return LCI_NET_FORWARD(post_write_imm(rank, buf, len, desc, raddr, rkey, imm, ctx));
  }
  status post_read(int rank, void* buf, size_t len, void* desc, uint64_t raddr, uint64_t rkey,
                   void* ctx) {
    return LCI_NET_FORWARD(post_read(rank, buf, len, desc, raddr, rkey, ctx));
  }
  uint64_t remote_address(const void* base, const void* addr) const {
    return LCI_NET_FORWARD(remote_address(base, addr));
  }
  bool uses_virtual_addresses() const { return LCI_NET_FORWARD(uses_virtual_addresses()); }
  bool registrations_pin() const { return LCI_NET_FORWARD(registrations_pin()); }
  [[gnu::always_inline]] int poll(completion* out, int max) {
    return LCI_NET_FORWARD(poll(out, max));
  }

  // Message authentication: only the libfabric backend has it (on every
  // provider but shm; see ofi.hpp). Verbs identifies a peer by its queue
  // pair, connected out of band through the bootstrap.
  size_t message_overhead() const { return is_ofi() ? ofi_->message_overhead() : 0; }
  bool authenticates_messages() const { return is_ofi() && ofi_->authenticates_messages(); }
  bool secret(uint64_t out[3]) const {
    if (!is_ofi()) return false;
    ofi_->secret(out);
    return true;
  }
  // Whether a remote_write completion names its writer (libfabric with
  // FI_SOURCE says only net::any_member; verbs knows the queue pair).
  bool names_rdma_writer() const { return !is_ofi() || !ofi_->source_from_provider(); }
  uint64_t seal_key(int peer, uint64_t key, uint64_t a, uint64_t b, uint64_t c) const {
    return is_ofi() ? ofi_->seal_key(peer, key, a, b, c) : key;
  }
  uint64_t open_key(int peer, uint64_t sealed, uint64_t a, uint64_t b, uint64_t c) const {
    return is_ofi() ? ofi_->open_key(peer, sealed, a, b, c) : sealed;
  }
  void admit_sealed(completion& c, const void* buf) { ofi_->admit_sealed(c, buf); }
  bool open_sealed(completion& c, const void* buf) { return ofi_->open_sealed(c, buf); }
  void begin_close() {
    if (is_ofi()) ofi_->begin_close();
  }
  void check_delivery(bootstrap::bootstrap& boot, const std::function<void()>& progress,
                      const std::function<bool(int)>& failed) {
    if (is_ofi()) ofi_->check_delivery(boot, progress, failed);
  }
  void end_of_batch() {
    if (is_ofi()) ofi_->end_of_batch();
  }
  // A message send to `rank` failed before it left (its connection broke):
  // with authentication, its sequence number is withdrawn (ofi/auth.hpp).
  void withdraw_send(int rank) {
    if (is_ofi()) ofi_->withdraw_send(rank);
  }
  // A peer known dead (LCI_PEER_FAILURE=continue): what the backend still
  // holds for it ends (libfabric: puts and gets in flight fail, work queued
  // to it is dropped).
  void forget_peer(int rank) {
    if (is_ofi()) ofi_->forget_peer(rank);
  }
  // For the state dump: the libfabric device's counters (verbs keeps none
  // beyond what the core reports).
  void describe(const describe_fn& out) const {
    if (is_ofi())
      ofi_->describe(out);
    else
      out(std::string("network backend ") + provider_name());
  }
  // The libfabric device, or nullptr where verbs was chosen.
  ofi::ofi_device* ofi_device() { return is_ofi() ? &*ofi_ : nullptr; }

 private:
  bool is_ofi() const {
#ifdef LCI_HAVE_IBV
    return kind_ == backend_kind::ofi;
#else
    return true;
#endif
  }
  const backend_kind kind_;
  std::optional<ofi::ofi_device> ofi_;
#ifdef LCI_HAVE_IBV
  std::optional<ibv::ibv_device> ibv_;
#endif
};

#undef LCI_NET_FORWARD

// What carries the messages to one peer.
enum class route : uint8_t { network, native };

// Why peers on this host and on other hosts use what they use (lci_info and
// the info log); filled by backend_device's constructor.
struct route_report {
  bool native_on = false;       // LCI_SHM
  std::string native_reason;    // why native is on or off
  int local_peers = 0;          // ranks of this host (this one included)
  int remote_peers = 0;         // ranks of other hosts
  bool network_open = false;    // a network backend was opened
};

// The backend a device talks through: the native shared-memory transport
// (native/native.hpp) for the ranks of this host and the network backend
// for the others, chosen per peer at creation from the host keys the ranks
// publish through the bootstrap (one fence). Every rank of the job computes
// the same answer from the same keys, so all of them open the network
// backend (a collective) exactly when some pair of ranks is on different
// hosts. Each call looks up its peer's route (one byte) and forwards to one
// of them; poll() drains both. Receive buffers are shared out between the
// two so that each has about half of those posted.
class backend_device final {
 public:
  backend_device(bootstrap::bootstrap& boot, int group_index, const settings& s);
  backend_device(const backend_device&) = delete;
  backend_device& operator=(const backend_device&) = delete;

  bool is_native(int rank) const { return routes_[static_cast<size_t>(rank)] == route::native; }
  const route_report& report() const { return report_; }
  bool has_network() const { return net_.has_value(); }
  bool has_native() const { return native_.has_value(); }
  const native::native_device* native() const { return native_ ? &*native_ : nullptr; }
  native::native_device* native() { return native_ ? &*native_ : nullptr; }
  backend_kind kind() const { return net_ ? net_->kind() : backend_kind::ofi; }
  const char* provider_name() const { return net_ ? net_->provider_name() : "native shm"; }
  // What the route to `rank` allows: the longest inject (a send done at
  // return, without a completion) ...
  size_t max_inject(int rank) const { return is_native(rank) ? native_inject_ : net_inject_; }
  size_t rx_queue_size() const {
    return (native_ ? native_->rx_queue_size() : 0) + (net_ ? net_->rx_queue_size() : 0);
  }
  // ... and the most one RDMA operation moves to it.
  size_t max_message_size(int rank) const {
    return is_native(rank) ? native_->max_message_size(rank) : max_message_size();
  }
  // The most one RDMA operation moves through the network (SIZE_MAX without one).
  size_t max_message_size() const { return net_ ? net_->max_message_size() : SIZE_MAX; }
  mr register_memory(void* addr, size_t len, mr_access a);
  void deregister_memory(mr& m);
  uint64_t provider_key(const mr& m) const { return net_ ? net_->provider_key(m) : m.rkey; }
  void peers_attached() {
    if (native_) native_->peers_attached();
    if (net_) net_->peers_attached();
  }

  [[gnu::always_inline]] status inject(int rank, const void* buf, size_t len, uint32_t imm) {
    if (ofi_alone_) return ofi_alone_->inject(rank, buf, len, imm);
    if (is_native(rank)) return native_->inject(rank, buf, len, imm);
    return net_->inject(rank, buf, len, imm);
  }
  [[gnu::always_inline]] status post_send(int rank, const void* buf, size_t len, void* desc,
                                          uint32_t imm, void* ctx) {
    if (ofi_alone_) return ofi_alone_->post_send(rank, buf, len, desc, imm, ctx);
    if (is_native(rank)) return native_->post_send(rank, buf, len, desc, imm, ctx);
    return net_->post_send(rank, buf, len, desc, imm, ctx);
  }
  [[gnu::always_inline]] status post_recv(void* buf, size_t len, void* desc, void* ctx) {
    if (ofi_alone_) return ofi_alone_->post_recv(buf, len, desc, ctx);
    if (native_ && (!net_ || native_->posted() <= net_posted_.load(std::memory_order_relaxed)))
      return native_->post_recv(buf, len, desc, ctx);
    const status st = net_->post_recv(buf, len, desc, ctx);
    if (st == status::ok && native_) net_posted_.fetch_add(1, std::memory_order_relaxed);
    return st;
  }
  status post_write(int rank, const void* buf, size_t len, void* desc, uint64_t raddr,
                    uint64_t rkey, void* ctx, bool delivered) {
    if (is_native(rank)) return native_->post_write(rank, buf, len, desc, raddr, rkey, ctx, delivered);
    return net_->post_write(rank, buf, len, desc, raddr, rkey, ctx, delivered);
  }
  status post_write_imm(int rank, const void* buf, size_t len, void* desc, uint64_t raddr,
                        uint64_t rkey, uint32_t imm, void* ctx) {
    if (is_native(rank)) return native_->post_write_imm(rank, buf, len, desc, raddr, rkey, imm, ctx);
    return net_->post_write_imm(rank, buf, len, desc, raddr, rkey, imm, ctx);
  }
  status post_read(int rank, void* buf, size_t len, void* desc, uint64_t raddr, uint64_t rkey,
                   void* ctx) {
    if (is_native(rank)) return native_->post_read(rank, buf, len, desc, raddr, rkey, ctx);
    return net_->post_read(rank, buf, len, desc, raddr, rkey, ctx);
  }
  // How `rank` names `addr`, in a registration that starts at `base`, in an
  // RDMA operation: the native transport copies straight into this process
  // and names memory by virtual address whatever the network provider does.
  uint64_t remote_address(int rank, const void* base, const void* addr) const {
    return net_ && !is_native(rank) ? net_->remote_address(base, addr)
                                    : reinterpret_cast<uint64_t>(addr);
  }
  // Whether every route names memory by virtual address (else the network
  // names it by offset from the registration's base)...
  bool uses_virtual_addresses() const { return net_ ? net_->uses_virtual_addresses() : true; }
  // ... and whether the route to `rank` does.
  bool uses_virtual_addresses(int rank) const {
    return !net_ || is_native(rank) || net_->uses_virtual_addresses();
  }
  bool registrations_pin() const { return net_ ? net_->registrations_pin() : false; }

  // Whether an RDMA write with immediate data from `rank` arrives with its
  // writer named (the native transport always names it).
  bool names_rdma_writer(int rank) const {
    return !net_ || is_native(rank) || net_->names_rdma_writer();
  }

  // Bytes the network backend appends to a message (authentication): every
  // buffer given to post_send and post_recv has this much room past `len`.
  size_t message_overhead() const { return net_ ? net_->message_overhead() : 0; }
  bool authenticates_messages() const { return net_ && net_->authenticates_messages(); }
  bool secret(uint64_t out[3]) const { return net_ && net_->secret(out); }
  // Whether messages to and from `rank` are authenticated (never on this host).
  bool authenticates_messages(int rank) const {
    return net_ && !is_native(rank) && net_->authenticates_messages();
  }
  // A registration key inside a message to / from `peer` (masked for the
  // network where messages are authenticated; a, b, c name the transfer).
  uint64_t seal_key(int peer, uint64_t key, uint64_t a, uint64_t b, uint64_t c) const {
    return net_ && !is_native(peer) ? net_->seal_key(peer, key, a, b, c) : key;
  }
  uint64_t open_key(int peer, uint64_t sealed, uint64_t a, uint64_t b, uint64_t c) const {
    return net_ && !is_native(peer) ? net_->open_key(peer, sealed, a, b, c) : sealed;
  }
  // A recv completion with c.sealed (only the network sets it), under the
  // poll lock, in the order poll() returned them: takes the message's place
  // in its sender's replay window (ofi/auth.hpp).
  void admit_sealed(completion& c, const void* buf) { net_->admit_sealed(c, buf); }
  // Then, on any thread: checks and strips the message's trailer; fatal for
  // a member's forged message. False: the message was the backend's own or
  // a duplicate (its buffer goes back).
  bool open_sealed(completion& c, const void* buf) { return net_->open_sealed(c, buf); }
  // Teardown, before the barrier that precedes check_delivery (or the
  // close without it): no more liveness probes from this rank, and a
  // peer's exit may now be its own finalize.
  void begin_close() {
    if (native_) native_->begin_close();
    if (net_) net_->begin_close();
  }
  // Collective at teardown: every message a peer sent arrived (or fatal);
  // ranks for which failed(rank) is true (dead peers) are left out.
  void check_delivery(bootstrap::bootstrap& boot, const std::function<void()>& progress,
                      const std::function<bool(int)>& failed) {
    if (net_) net_->check_delivery(boot, progress, failed);
  }
  void forget_peer(int rank) {
    if (net_) net_->forget_peer(rank);
  }
  // A message send to `rank` completed as failed (the network's; the core
  // sends it again once the peer proved alive).
  void withdraw_send(int rank) {
    if (net_ && !is_native(rank)) net_->withdraw_send(rank);
  }
  // After the core handled the completions one poll() returned.
  void end_of_batch() {
    if (ofi_alone_)
      ofi_alone_->end_of_batch();
    else if (net_)
      net_->end_of_batch();
  }

  // The native transport hands messages it can deliver from its cells to
  // fn (native_device::deliver_in_place); the network has no such path.
  void deliver_in_place(native::native_device::in_place_fn fn, void* arg) {
    if (native_) native_->deliver_in_place(fn, arg);
  }

  // Napping (native_device::nap): only a device whose peers are all
  // served by the native transport sleeps when idle (a network backend
  // has no doorbell here).
  bool can_nap() const { return native_ && !net_; }
  // Whether the last poll() delivered messages in place (not among its
  // completions); the poller only.
  bool polled_in_place() const { return native_ && native_->in_place_last() != 0; }
  // Work for poll() that this process queued outside the rings.
  void wake_self() {
    if (native_) native_->wake_self();
  }

  // False only when poll() would return nothing; read without the
  // progress lock. A network backend is always polled (its queues are
  // read through the provider); the native transport answers from its
  // rings (native_device::may_have_work).
  [[gnu::always_inline]] bool may_have_work() {
    return net_ || (native_ && native_->may_have_work());
  }

  [[gnu::always_inline]] int poll(completion* out, int max) {
    // libfabric counts its own received messages (network_received).
    if (ofi_alone_) return ofi_alone_->poll(out, max);
    int n = 0;
    if (native_) n = native_->poll(out, max);
    if (net_ && n < max) {
      const int m = net_->poll(out + n, max - n);
      if (m > 0) {
        count_network_received(out + n, m);
        n += m;
      }
    }
    return n;
  }

  // For the state dump: each transport's state, a line at a time.
  void describe(const describe_fn& out) const {
    if (native_) native_->describe(out);
    if (net_) net_->describe(out);
  }

  // For the state dump: the native transport's calls of poll(), and the
  // messages published in its rings that no poll took yet (0 without it; a
  // network queue cannot be looked into without taking).
  uint64_t polls() const { return native_ ? native_->polls() : 0; }
  uint64_t arrivals_waiting() const { return native_ ? native_->arrivals_waiting() : 0; }

  // Messages received through each transport since creation.
  uint64_t native_received() const { return native_ ? native_->received() : 0; }
  uint64_t network_received() const {
    return ofi_alone_ ? ofi_alone_->received() : network_received_.load(std::memory_order_relaxed);
  }

 private:
  // The receives among m completions of the network backend.
  void count_network_received(const completion* out, int m) {
    int used = 0;
    for (int i = 0; i < m; ++i)
      used += out[i].kind == completion_kind::recv || out[i].kind == completion_kind::recv_failed;
    if (used) {
      network_received_.store(network_received_.load(std::memory_order_relaxed) +
                              static_cast<uint64_t>(used), std::memory_order_relaxed);
      if (native_) net_posted_.fetch_sub(used, std::memory_order_relaxed);
    }
  }

  // The network backend when it is libfabric and the only transport (no
  // native transport, LCI_SHM=0): inject, post_send, post_recv and poll go
  // straight to it, with no route lookup and no test of the backend kind.
  ofi::ofi_device* ofi_alone_ = nullptr;
  std::vector<route> routes_;
  std::optional<native::native_device> native_;
  std::optional<network_device> net_;
  size_t native_inject_ = 0;  // max_inject(rank) of the native transport's peers
  size_t net_inject_ = 0;     // ... and of the network's
  route_report report_;
  alignas(64) std::atomic<int> net_posted_{0};
  alignas(64) std::atomic<uint64_t> network_received_{0};
};

}  // namespace lci::net

// Device set-up and tear-down (the progress engine is progress.cpp).
#include "lci/core/device.hpp"

#include <sys/mman.h>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstring>

#include "lci/comp/registry.hpp"
#include "lci/core/config.hpp"
#include "lci/core/peer_failure.hpp"
#include "lci/core/rdv_op.hpp"
#include "lci/core/test_flags.hpp"
#include "lci/util/log.hpp"

namespace lci {
namespace {

char* map_slab(size_t bytes, const char* what) {
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) fatal("LCI_device_init: cannot map %zu bytes for %s", bytes, what);
  return static_cast<char*>(p);
}

// Live devices by slot, read without a lock by foreign_pool_owner().
constexpr int max_devices = 64;
std::atomic<device*> g_device_slots[max_devices];

}  // namespace

std::atomic<uintptr_t> g_slabs_lo{UINTPTR_MAX}, g_slabs_hi{0};

device* scan_pool_owner(const void* address) {
  for (auto& slot : g_device_slots) {
    device* d = slot.load(std::memory_order_acquire);
    if (d && d->owns_packet(address)) return d;
  }
  return nullptr;
}

void add_pool_owner(device* d) {
  for (auto& slot : g_device_slots) {
    device* expected = nullptr;
    if (slot.compare_exchange_strong(expected, d)) break;
  }
  const auto lo = reinterpret_cast<uintptr_t>(d->slab);
  const auto hi = lo + d->slab_bytes;
  if (lo < g_slabs_lo.load()) g_slabs_lo.store(lo);
  if (hi > g_slabs_hi.load()) g_slabs_hi.store(hi);
}

void remove_pool_owner(device* d) {
  for (auto& slot : g_device_slots) {
    device* expected = d;
    slot.compare_exchange_strong(expected, nullptr);
  }
}

device::device(int index, bootstrap::bootstrap& boot, const device_options& opt)
    : group_index(index), max_recvs_(opt.max_recvs) {
  const config& cfg = settings();
  // Each packet: header, LCI_MEDIUM_SIZE payload, room for a trailer and
  // a tag suffix.
  packet_size = static_cast<size_t>(cfg.packet_size) + packet_slack;
  recv_size = static_cast<size_t>(cfg.medium_size) + max_extra_bytes;
  net::settings backend = backend_settings();
  backend.max_payload = recv_size;
  backend.native_test_no_cma_rank = g_test_no_cma_rank.load(std::memory_order_relaxed);
  if (peer_failure_continues()) {
    backend.report_evidence = &report_evidence;
    backend.is_failed = &peer_failed;
    backend.is_suspected = &peer_suspected_slow;
    if (cfg.test_hooks) backend.test_fail_sends = &g_test_fail_sends;
  }
  if (cfg.test_hooks) backend.test_lose_sends = &g_test_lose_sends;
  net = std::make_unique<net::backend_device>(boot, group_index, backend);
  // The network backend may append a trailer (message authentication) to
  // what it sends and receives: it goes in the packet's slack.
  if (recv_size + net->message_overhead() > packet_size - packet_header_size)
    fatal("device %d: a packet of %zu bytes has no room for a %zu-byte message and the "
          "backend's %zu-byte trailer", group_index, packet_size, recv_size,
          net->message_overhead());
  const size_t npackets = opt.npackets ? opt.npackets : static_cast<size_t>(cfg.server_num_pkts);
  slab_bytes = packet_size * npackets;
  slab = map_slab(slab_bytes, "packets");
  // Sent from and received into only: peers' RDMA cannot reach the slab.
  slab_mr = net->register_memory(slab, slab_bytes, net::mr_access::local);
  if (!slab_mr.handle) fatal("registering the packet pool (%zu bytes) failed", slab_bytes);
  // Nothing is written to the slab here: a packet's pages are touched when
  // it is first used, so a device holds in memory the packets it used, not
  // all LCI_SERVER_NUM_PKTS (a packet's device is found from its address,
  // scan_pool_owner).
  packets = std::make_unique<packet_pool>(slab, packet_size, npackets);

  // Receive descriptors: as many as packets, then heap overflow (a receive
  // post never fails).
  const size_t nctx = std::max<size_t>(npackets, 1024);
  ctx_slab_bytes = sizeof(recv_ctx) * nctx;
  ctx_slab = map_slab(ctx_slab_bytes, "receive descriptors");
  ctxs = std::make_unique<object_pool>(ctx_slab, sizeof(recv_ctx), nctx);

  // Rendezvous operations: a pool as large as the packet pool (each one in
  // flight holds a packet's worth of protocol at some point), then heap.
  const size_t nrdv = std::max<size_t>(npackets, 256);
  rdv_slab_bytes = rdv_op_slot_size() * nrdv;
  rdv_slab = map_slab(rdv_slab_bytes, "rendezvous operations");
  rdv_ops = std::make_unique<object_pool>(rdv_slab, rdv_op_slot_size(), nrdv);
  rdv.reserve(nrdv);

  table = std::make_unique<match_table>(static_cast<size_t>(cfg.default_table_length), boot.size());
  fifo_ranks = static_cast<uint32_t>(boot.size());
  fifos = std::make_unique<rank_fifo[]>(fifo_ranks);
  // LCI_SEGMENT_ALL registrations: cached only where a stale registration
  // cannot reach the wrong pages (see decide_caching in reg_cache.hpp).
  const caching_decision caching =
      decide_caching(cfg.use_dreg, net->registrations_pin(), mem_hooks::active());
  reg_cache::options reg_options;
  reg_options.cached = caching.cache;
  reg_options.max_entries = static_cast<size_t>(cfg.reg_cache_max_entries);
  regs = make_reg_cache(net::mr_access::remote, reg_options);
  source_regs = make_reg_cache(net::mr_access::source, reg_options);
  LCI_LOG(info, "device %d (%s): LCI_SEGMENT_ALL registrations %s", group_index,
          net->provider_name(), caching.reason);
  // RDMA transfers are split into pieces the backend can move in one go.
  size_t backend_max = net->max_message_size();
  if (const size_t limit = g_test_max_message.load(std::memory_order_relaxed))
    backend_max = std::min(backend_max, limit);
  rdma_piece = net::rdma_piece_size(cfg.max_single_message_size, backend_max);
  // Per peer: its route's limit (on this host unlimited with cross-memory
  // attach, one cell where the data is pipelined).
  max_single_message = cfg.max_single_message_size;
  rdma_piece_of.reset(new std::atomic<size_t>[static_cast<size_t>(boot.size())]);
  for (int r = 0; r < boot.size(); ++r) rdma_piece_of[r].store(0, std::memory_order_relaxed);
  swept.assign(static_cast<size_t>(boot.size()), 0);
  rdv_write_imm = cfg.rdv_protocol == LCI_RDV_WRITEIMM;
  write_imm_unnamed = !peer_failure_continues();
  LCI_LOG(info,
          "device %d: RDMA pieces of at most %zu bytes (LCI_MAX_SINGLE_MESSAGE_SIZE %zu, "
          "backend maximum %zu)",
          group_index, rdma_piece, cfg.max_single_message_size, backend_max);
  post_initial_receives();
  if (cfg.shm_in_place) enable_in_place();
  if (net->can_nap() && cfg.progress_nap_us > 0) {
    nap_after_ns = static_cast<int64_t>(cfg.progress_nap_us) * 1000;
    nap_length_ns = static_cast<int64_t>(cfg.progress_nap_max_us) * 1000;
    nap_register(this);
  }
  // Every rank has its receives posted before anyone sends to this device,
  // and every rank has connected to this one.
  boot.barrier();
  net->peers_attached();
}

size_t device::learn_piece(int rank) const {
  size_t route_max = net->max_message_size(rank);
  if (const size_t limit = g_test_max_message.load(std::memory_order_relaxed))
    route_max = std::min(route_max, limit);
  const size_t p = net::rdma_piece_size(max_single_message, route_max);
  rdma_piece_of[static_cast<size_t>(rank)].store(p, std::memory_order_relaxed);
  return p;
}

std::unique_ptr<reg_cache> device::make_reg_cache(net::mr_access access,
                                                  const reg_cache::options& options) {
  return std::make_unique<reg_cache>(
      [this, access](void* address, size_t length) -> void* {
        const net::mr m = register_memory(*this, address, length, access);
        return m.handle ? new net::mr(m) : nullptr;  // nullptr: the operation is refused
      },
      [this](void* handle) {
        auto* m = static_cast<net::mr*>(handle);
        net->deregister_memory(*m);
        delete m;
      },
      options);
}

device::~device() {
  if (nap_after_ns) nap_unregister(this);
  if (!parked.empty())
    LCI_LOG(info, "device %d: %zu one-sided message(s) never consumed are freed", group_index,
            parked.size());
  for (parked_msg& m : parked)
    if (m.ref) comp_registry::release(m.ref);
  parked.clear();
  reg_cache::stats rs = regs->get_stats();
  const reg_cache::stats ss = source_regs->get_stats();
  rs.hits += ss.hits;
  rs.misses += ss.misses;
  rs.uncached += ss.uncached;
  rs.evictions += ss.evictions;
  rs.invalidations += ss.invalidations;
  LCI_LOG(info,
          "device %d: LCI_SEGMENT_ALL registrations: %llu hits, %llu misses, %llu per use, "
          "%llu evictions, %llu invalidations",
          group_index, static_cast<unsigned long long>(rs.hits),
          static_cast<unsigned long long>(rs.misses), static_cast<unsigned long long>(rs.uncached),
          static_cast<unsigned long long>(rs.evictions),
          static_cast<unsigned long long>(rs.invalidations));
  source_regs.reset();
  regs.reset();
  net->deregister_memory(slab_mr);
  ctxs.reset();
  rdv_ops.reset();
  packets.reset();
  net.reset();
  table.reset();
  munmap(ctx_slab, ctx_slab_bytes);
  munmap(rdv_slab, rdv_slab_bytes);
  munmap(slab, slab_bytes);
  magic = 0;
}

void device::post_initial_receives() {
  // Keep up to LCI_SERVER_MAX_RECVS packets posted, within the provider's
  // receive queue and leaving at least half of the pool for sends.
  size_t n = max_recvs_ ? max_recvs_ : static_cast<size_t>(settings().server_max_recvs);
  n = std::min(n, net->rx_queue_size());
  n = std::min(n, packets->capacity() / 2);
  n = std::max<size_t>(n, 1);
  recv_target = static_cast<int>(n);
  recv_reserve = std::max(1, recv_target / 4);
  for (size_t i = 0; i < n; ++i) {
    packet* p = get_packet();
    if (!p) {
      recv_deficit.fetch_add(1, std::memory_order_relaxed);
      continue;
    }
    post_recv_packet(p);
  }
}

net::mr register_memory(device& d, void* address, size_t length, net::mr_access access) {
  if (__builtin_expect(take_test_count(g_test_fail_registrations), 0)) {
    LCI_LOG(info, "registering %p (%zu bytes) failed (test hook)", address, length);
    return net::mr{};
  }
  return d.net->register_memory(address, length, access);
}

}  // namespace lci

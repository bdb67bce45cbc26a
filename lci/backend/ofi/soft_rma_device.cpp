// RDMA carried by authenticated messages (see soft_rma.hpp): the libfabric
// device's side of the protocol.
#include <algorithm>

#include "lci/backend/ofi/ofi.hpp"
#include "lci/backend/ofi/soft_rma.hpp"
#include "lci/util/clock.hpp"
#include "lci/util/log.hpp"

namespace lci::ofi {

// ---- the device's side -------------------------------------------------------------

namespace {
// The most work items waiting for one peer; past it, a peer's read
// requests and acknowledgements are refused (a member never has more
// operations in flight than rma_ops::slots).
constexpr size_t max_peer_work = 4 * rma_ops::slots;
// Pieces one holder of a peer's send lock sends before it lets go.
constexpr int max_pieces_per_turn = 16;
}  // namespace

void ofi_device::soft_setup(size_t receive_size) {
  piece_ = receive_size > sizeof(rma_header) ? receive_size - sizeof(rma_header) : 0;
  if (piece_ < 64)
    fatal("libfabric: receive buffers of %zu bytes are too short for RDMA pieces", receive_size);
  staging_size_ = sizeof(rma_header) + piece_ + message_auth::trailer_bytes;
  staging_.assign(staging_count * staging_size_, 0);
  staging_rank_.assign(staging_count, -1);
  staging_kind_.assign(staging_count, 0);
  ops_ = std::make_unique<rma_ops>();
  regs_ = std::make_unique<reg_table>();
  peers_ = std::make_unique<rma_peer[]>(static_cast<size_t>(nranks_));
}

int ofi_device::staging_take(int rank) {
  uint64_t bits = staging_free_.load(std::memory_order_relaxed);
  while (bits) {
    const int b = __builtin_ctzll(bits);
    if (staging_free_.compare_exchange_weak(bits, bits & ~(uint64_t{1} << b),
                                            std::memory_order_acquire, std::memory_order_relaxed)) {
      staging_rank_[static_cast<size_t>(b)] = rank;
      return b;
    }
  }
  return -1;
}

void ofi_device::staging_give(int index) {
  staging_free_.fetch_or(uint64_t{1} << index, std::memory_order_release);
}

int ofi_device::staging_index(const void* ctx) const {
  const char* p = static_cast<const char*>(ctx);
  const char* base = staging_.data();
  if (p < base || p >= base + staging_.size()) return -1;
  return static_cast<int>(static_cast<size_t>(p - base) / staging_size_);
}

void ofi_device::soft_queue(int rank, const rma_work& w, bool coalesce, bool now) {
  rma_peer& p = peers_[static_cast<size_t>(rank)];
  p.lock.lock();
  bool merged = false;
  if (coalesce && !p.work.empty()) {
    rma_work& last = p.work.back();
    if (last.w == rma_work::what::message && last.k == w.k && last.h.op == w.h.op) {
      last.h.length += w.h.length;
      merged = true;
    }
  }
  if (!merged) p.work.push_back(w);
  p.lock.unlock();
  if (now)
    soft_pump(rank);
  else
    mark_pending(rank);
}

bool ofi_device::soft_refuse_more(int rank) {
  rma_peer& p = peers_[static_cast<size_t>(rank)];
  p.lock.lock();
  const bool full = p.work.size() >= max_peer_work;
  p.lock.unlock();
  return full;
}

void ofi_device::soft_pump(int rank) {
  rma_peer& p = peers_[static_cast<size_t>(rank)];
  // A suspected peer's connection may be another process's: its work
  // waits until it proved alive or died (peer_failure.hpp).
  if (is_suspected_ && __builtin_expect(is_suspected_(rank), 0)) {
    mark_pending(rank);
    return;
  }
  message_auth::sender s(*auth_, rank);
  if (!s.locked()) {
    // The holder of the send lock may be past its look at the queue.
    mark_pending(rank);
    return;
  }
  p.lock.lock();
  int pieces = 0;
  while (!p.work.empty()) {
    rma_work& w = p.work.front();
    if (w.w == rma_work::what::message) {
      if (send_own_locked(s, rank, w.k, w.h) != status::ok) break;
      p.work.pop_front();
      continue;
    }
    bool stalled = false;
    const bool write = w.w == rma_work::what::write;
    while (w.sent < w.h.length || w.staged >= 0) {
      if (w.staged < 0) {
        // A bounded turn: the core's own messages to this peer wait for the
        // send lock meanwhile (they retry), so a long transfer yields it.
        const int b = pieces < max_pieces_per_turn ? staging_take(rank) : -1;
        if (b < 0) {
          stalled = true;
          break;
        }
        ++pieces;
        char* at = staging_.data() + static_cast<size_t>(b) * staging_size_;
        const uint64_t n = std::min<uint64_t>(piece_, w.h.length - w.sent);
        rma_header h{};
        if (write) {
          h = {w.h.op, w.h.address + w.sent, w.h.key, n};
          memcpy(at + sizeof h, w.source + w.sent, n);
        } else {
          // Checked again for every piece: the owner may have deregistered
          // the memory since the request (then the rest is refused).
          h = {w.h.op, w.sent, 0, n};
          const bool ok = regs_->with_range(w.h.key, w.h.address + w.sent, n, [&](char* src) {
            memcpy(at + sizeof h, src, n);
          });
          if (!ok) {
            staging_give(b);
            note_refused(rank);
            w = rma_work{rma_work::what::message, own_kind::read_fail,
                         {w.h.op, 0, 0, w.h.length - w.sent}, nullptr, 0};
            stalled = true;  // sent as a message on the next turn of the loop
            break;
          }
        }
        memcpy(at, &h, sizeof h);
        w.staged = b;
        w.staged_bytes = static_cast<uint32_t>(n);
        w.sent += n;
        // Copied out: from here an acknowledgement may count these bytes.
        if (write) ops_->note_sent(w.h.op, rank, n);
      }
      char* at = staging_.data() + static_cast<size_t>(w.staged) * staging_size_;
      const own_kind k = write ? own_kind::write_piece : own_kind::read_data;
      staging_kind_[static_cast<size_t>(w.staged)] = static_cast<uint8_t>(k);
      if (post_own_locked(s, rank, k, at, sizeof(rma_header) + w.staged_bytes) != status::ok) {
        stalled = true;  // the piece stays staged for the next turn
        break;
      }
      w.staged = -1;
    }
    if (w.w == rma_work::what::message) continue;  // a read turned into read_fail
    if (stalled) break;
    p.work.pop_front();
  }
  const bool left = !p.work.empty();
  p.lock.unlock();
  if (left) mark_pending(rank);
}

void ofi_device::mark_pending(int rank) {
  soft_pending_.mark(peers_[static_cast<size_t>(rank)].pending);
}

void ofi_device::soft_resume() {
  for (int r = 0; r < static_cast<int>(nranks_); ++r)
    if (soft_pending_.claim(peers_[static_cast<size_t>(r)].pending)) soft_pump(r);
}

void ofi_device::note_refused(int rank) {
  refused_rank_.store(rank, std::memory_order_relaxed);
  refused_.fetch_add(1, std::memory_order_release);
}

status ofi_device::soft_write(int rank, const void* buf, size_t len, uint64_t raddr, uint64_t rkey,
                              void* ctx) {
  const uint64_t id = ops_->take(rma_ops::kind::write, rank,
                                 static_cast<char*>(const_cast<void*>(buf)), len, ctx);
  if (!id) return status::retry;
  if (len == 0) {
    ops_->finish_empty(id);
    return status::ok;
  }
  soft_queue(rank, rma_work{rma_work::what::write, own_kind::write_piece, {id, raddr, rkey, len},
                            static_cast<const char*>(buf), 0}, false, true);
  return status::ok;
}

status ofi_device::soft_read(int rank, void* buf, size_t len, uint64_t raddr, uint64_t rkey,
                             void* ctx) {
  const uint64_t id = ops_->take(rma_ops::kind::read, rank, static_cast<char*>(buf), len, ctx);
  if (!id) return status::retry;
  if (len == 0) {
    ops_->finish_empty(id);
    return status::ok;
  }
  soft_queue(rank, rma_work{rma_work::what::message, own_kind::read_request,
                            {id, raddr, rkey, len}, nullptr, 0}, false, true);
  return status::ok;
}

void ofi_device::on_own_message(int src, uint32_t imm, const char* payload, size_t length) {
  rma_header h;
  if (length < sizeof h) {
    note_refused(src);
    return;
  }
  memcpy(&h, payload, sizeof h);
  const char* data = payload + sizeof h;
  const uint64_t n = length - sizeof h;
  const auto k = static_cast<own_kind>(imm & 0xFu);
  switch (k) {
    case own_kind::write_piece: {
      if (h.length != n) break;
      const bool ok =
          regs_->with_range(h.key, h.address, n, [&](char* dst) { memcpy(dst, data, n); });
      if (!ok) note_refused(src);
      // Always answered, or the origin would wait for ever. The answer
      // waits for the end of this batch of completions (end_of_batch), so
      // that the answers to the pieces of one operation merge into one.
      soft_queue(src, rma_work{rma_work::what::message,
                               ok ? own_kind::write_ack : own_kind::write_nack,
                               {h.op, 0, 0, n}, nullptr, 0}, true, false);
      return;
    }
    case own_kind::read_request: {
      if (n != 0) break;
      if (soft_refuse_more(src)) {
        note_refused(src);
        return;
      }
      const bool ok = h.length <= rma_ops::max_length &&
                      regs_->with_range(h.key, h.address, h.length, [](char*) {});
      if (!ok) {
        note_refused(src);
        soft_queue(src, rma_work{rma_work::what::message, own_kind::read_fail, {h.op, 0, 0, h.length},
                                 nullptr, 0}, false, true);
        return;
      }
      soft_queue(src, rma_work{rma_work::what::read_reply, own_kind::read_data, h, nullptr, 0},
                 false, true);
      return;
    }
    case own_kind::read_data: {
      if (h.length != n) break;
      // The operation is held while its buffer is written: a failure sweep
      // that ends it meanwhile waits to hand it out until the copy is over;
      // a piece for an operation that ended is dropped.
      char* dst = ops_->read_begin(h.op, src, h.address, n);
      if (!dst) break;
      memcpy(dst, data, n);
      if (!ops_->read_end(h.op, n)) break;
      return;
    }
    case own_kind::write_ack:
    case own_kind::write_nack:
    case own_kind::read_fail: {
      if (n != 0) break;
      const auto kind = k == own_kind::read_fail ? rma_ops::kind::read : rma_ops::kind::write;
      if (!ops_->count(h.op, src, kind, h.length, k != own_kind::write_ack)) break;
      return;
    }
    default:
      break;
  }
  // A message of this kind that fits no operation: counted like any
  // malformed message (only a member can have sent it).
  note_refused(src);
}

int ofi_device::soft_completions(completion* out, int max) {
  int n = 0;
  if (refused_.load(std::memory_order_relaxed) != refused_told_ && max > 0) {
    ++refused_told_;
    completion& c = out[n++];
    c = completion{};
    c.kind = completion_kind::dropped;
    c.error = 1;  // a network message, not a shared-memory cell
    c.ctx = const_cast<char*>("RDMA request (key, range or operation)");
    c.src_rank = refused_rank_.load(std::memory_order_relaxed);
  }
  while (n < max) {
    const int slot = ops_->pop_finished();
    if (slot < 0) break;
    completion& c = out[n++];
    c = completion{};
    c.ctx = ops_->ctx_of(slot);
    if (ops_->failed(slot)) {
      c.kind = completion_kind::failed;
      c.error = FI_EACCES;
    } else {
      c.kind = completion_kind::rma_done;
    }
    ops_->release(slot);
  }
  return n;
}

void ofi_device::describe(const net::describe_fn& out) const {
  char line[256];
  snprintf(line, sizeof(line), "ofi (%s): %llu message(s) received; authentication %s",
           provider_.c_str(), static_cast<unsigned long long>(received()),
           auth_ ? "on" : "off");
  std::string text = line;
  if (auth_) {
    uint64_t duplicates = 0;
    for (int r = 0; r < auth_->nranks(); ++r) duplicates += auth_->duplicates_from(r);
    text += "; " + std::to_string(rx_posted_.load(std::memory_order_relaxed)) +
            " receive buffer(s) posted; " + std::to_string(duplicates) +
            " duplicate(s) dropped";
  }
  out(text);
  // What each peer's heartbeat compares (on_heartbeat): the authenticated
  // messages sent to it and received from it.
  for (int r = 0; auth_ && r < auth_->nranks(); ++r) {
    if (r == auth_->self() || (auth_->sent_to(r) == 0 && auth_->received_from(r) == 0)) continue;
    snprintf(line, sizeof(line), "ofi: rank %d: %llu message(s) sent to it, %llu received from it; ",
             r, static_cast<unsigned long long>(auth_->sent_to(r)),
             static_cast<unsigned long long>(auth_->received_from(r)));
    std::unique_lock<std::mutex> g(watch_lock_, std::try_to_lock);
    if (!g.owns_lock()) {
      out(std::string(line) + "heartbeats: busy (lock held)");
      continue;
    }
    const int64_t now = now_ns();
    const watch& w = watch_[static_cast<size_t>(r)];
    const outbound_watch& o = outbound_[static_cast<size_t>(r)];
    std::string beat = o.last_ns ? "its last heartbeat came " +
                                       std::to_string((now - o.last_ns) / 1000000) + " ms ago"
                                 : "no heartbeat from it yet";
    beat += "; " + std::to_string(auth_->passed_over_from(r)) + " of its sequence number(s) " +
            "passed over, " + std::to_string(auth_->withdrawn_to(r)) + " of this rank's withdrawn";
    if (w.since_ns)
      beat += "; " + std::to_string(w.lost) + " of its messages missing since " +
              std::to_string((now - w.since_ns) / 1000000) + " ms ago (" +
              std::to_string(w.beats) + " heartbeat(s) since)";
    if (o.since_ns && o.arrived < o.sent)
      beat += "; it had " + std::to_string(o.arrived) + " of the " + std::to_string(o.sent) +
              " sent to it " + std::to_string((now - o.since_ns) / 1000000) + " ms ago (" +
              std::to_string(o.beats) + " heartbeat(s) since)";
    out(line + beat);
  }
  if (!soft_) return;
  const uint64_t free_bits = staging_free_.load(std::memory_order_relaxed);
  snprintf(line, sizeof(line),
           "ofi: puts and gets as messages: %d operation(s) in flight, %d/%d staging buffer(s) "
           "in use, %llu refused, %d peer(s) with work left for progress",
           ops_->in_flight(), staging_count - __builtin_popcountll(free_bits), staging_count,
           static_cast<unsigned long long>(refused_.load(std::memory_order_relaxed)),
           soft_pending_.count());
  out(line);
  for (size_t r = 0; r < static_cast<size_t>(nranks_); ++r) {
    rma_peer& p = peers_[r];
    if (!try_lock_bounded(p.lock)) {
      out("ofi: rank " + std::to_string(r) + ": queued RMA work: busy (lock held)");
      continue;
    }
    const size_t queued = p.work.size();
    p.lock.unlock();
    if (queued)
      out("ofi: rank " + std::to_string(r) + ": " + std::to_string(queued) +
          " RMA work item(s) queued");
  }
}

}  // namespace lci::ofi

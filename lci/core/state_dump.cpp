// The state dump (see state_dump.hpp).
#include "lci/core/state_dump.hpp"

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cinttypes>
#include <chrono>
#include <cstdarg>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "lci/core/device.hpp"
#include "lci/core/peer_failure.hpp"
#include "lci/core/protocol.hpp"
#include "lci/core/rdv_op.hpp"
#include "lci/core/runtime.hpp"
#include "lci/util/log.hpp"
#include "lci/util/signal_name.hpp"
#include "lci/util/spin.hpp"

namespace lci {

namespace {

// Lines of one kind printed per device before "... and N more".
constexpr size_t max_listed = 1000;

// Writes whole lines, each "<prefix> <text>\n" in one fwrite.
class line_writer {
 public:
  explicit line_writer(FILE* out) : out_(out) {}
  void set_prefix(std::string p) { prefix_ = std::move(p); }
  void line(const std::string& text) {
    const std::string l = prefix_ + text + "\n";
    fwrite(l.data(), 1, l.size(), out_);
  }
  __attribute__((format(printf, 2, 3))) void linef(const char* fmt, ...) {
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    line(buf);
  }

 private:
  FILE* out_;
  std::string prefix_;
};

// ---- rendezvous and RDMA operations ---------------------------------------------------

// What the dump keeps of an op (copied under the table's lock).
struct op_view {
  uint32_t id;
  rdv_role role;
  bool iovec;
  bool have_remote;
  int rank;
  LCI_tag_t tag;
  size_t size;
  int outstanding;
};

const char* op_name(const op_view& v) {
  switch (v.role) {
    case rdv_role::send: return v.iovec ? "sendv" : "sendl";
    case rdv_role::put_alloc: return v.iovec ? "putva" : "putla";
    case rdv_role::recv: return v.iovec ? "recvv" : "recvl";
    case rdv_role::recv_alloc: return v.iovec ? "target of putva" : "target of putla";
    case rdv_role::put: return v.iovec ? "putv" : "putl";
    case rdv_role::get: return v.iovec ? "getv" : "getl";
  }
  return "?";
}

std::string op_line(const op_view& v) {
  const bool outbound = v.role == rdv_role::send || v.role == rdv_role::put_alloc ||
                        v.role == rdv_role::put;
  char head[160];
  snprintf(head, sizeof(head), "%s id %u %s rank %d tag %u size %zu: ", op_name(v), v.id,
           outbound ? "to" : "from", v.rank, v.tag, v.size);
  std::string text = head;
  const std::string peer = "rank " + std::to_string(v.rank);
  switch (v.role) {
    case rdv_role::send:
    case rdv_role::put_alloc:
      text += v.have_remote ? "writes its data to " + peer : "waits for an RTR from " + peer;
      break;
    case rdv_role::recv:
    case rdv_role::recv_alloc:
      text += "waits for the data and its FIN from " + peer;
      break;
    case rdv_role::put:
      text += "waits for its RDMA writes to " + peer + " (" + std::to_string(v.outstanding) +
              " outstanding)";
      break;
    case rdv_role::get:
      text += v.outstanding > 0 || !v.iovec
                  ? "waits for its RDMA reads from " + peer + " (" +
                        std::to_string(v.outstanding) + " outstanding)"
                  : "waits for the getv reply from " + peer;
      break;
  }
  return text;
}

void dump_ops(line_writer& w, device& d) {
  std::vector<op_view> ops;
  const bool read = d.rdv.for_each([&ops](uint32_t id, const rdv_op* op) {
    op_view v{};
    v.id = id;
    v.role = op->role;
    v.iovec = op->type == LCI_IOVEC;
    v.have_remote = op->have_remote;
    v.rank = op->rank;
    v.tag = op->tag;
    for (uint32_t i = 0; i < op->count; ++i) v.size += op->bufs[i].length;
    v.outstanding = op->outstanding.load(std::memory_order_relaxed);
    ops.push_back(v);
  });
  if (!read) {
    w.line("rendezvous and RDMA operations: busy (the table's lock stayed held)");
    return;
  }
  w.linef("rendezvous and RDMA operations in flight: %zu", ops.size());
  for (size_t i = 0; i < ops.size() && i < max_listed; ++i) w.line(op_line(ops[i]));
  if (ops.size() > max_listed) w.linef("... and %zu more operations", ops.size() - max_listed);
}

// ---- the matching table -----------------------------------------------------------------

struct match_view {
  bool posted;        // a receive (else a message that waits for one)
  int rank;           // LCI_RANK_ANY: any
  uint32_t endpoint;
  uint32_t tag;
  const char* kind;   // the receive call, or the message's kind
  size_t length;      // a message's size
};

const char* recv_name(const recv_ctx* c) {
  switch (c->type) {
    case LCI_IMMEDIATE: return "recvs";
    case LCI_MEDIUM: return c->want_packet ? "recvmn" : "recvm";
    case LCI_LONG: return "recvl";
    case LCI_IOVEC: return "recvv";
  }
  return "receive";
}

std::string from_text(int rank) {
  return rank == LCI_RANK_ANY ? std::string("any rank") : "rank " + std::to_string(rank);
}

std::string endpoint_text(uint32_t index) {
  return index == static_cast<uint32_t>(barrier_endpoint_index) ? std::string("LCI's barrier")
                                                                 : "endpoint " +
                                                                       std::to_string(index);
}

void dump_matching(line_writer& w, device& d) {
  std::vector<match_view> entries;
  const size_t busy = d.table->for_each([&entries](const match_node* n) {
    match_view v{};
    v.posted = n->kind == match_kind::recv;
    v.rank = match_key_rank(n->key);
    v.endpoint = match_key_endpoint(n->key);
    v.tag = uint32_t{n->tag_hi} << 16 | match_key_tag(n->key);
    if (v.posted) {
      v.kind = recv_name(reinterpret_cast<const recv_ctx*>(n));
    } else {
      const auto* p = reinterpret_cast<const packet*>(n);
      v.rank = p->in.src_rank;
      v.length = p->in.length;
      switch (p->in.kind) {
        case msg_kind::short_msg: v.kind = "short"; break;
        case msg_kind::medium: v.kind = "medium"; break;
        case msg_kind::rts: {
          rts_payload h;
          memcpy(&h, const_cast<packet*>(p)->payload(), sizeof(h));
          v.kind = h.count ? "iovec (RTS)" : "long (RTS)";
          v.length = h.size;
          break;
        }
        default: v.kind = "message"; break;
      }
    }
    entries.push_back(v);
  });
  // The exact-rank receives in their ranks' lists (rank_fifo.hpp).
  size_t busy_lists = 0;
  for (uint32_t r = 0; r < d.fifo_ranks; ++r) {
    rank_fifo& f = d.fifos[r];
    if (!try_lock_bounded(f.lock)) {
      ++busy_lists;
      continue;
    }
    for (uint32_t i = 0; i < f.size(); ++i) {
      const fifo_recv& e = f.at(i);
      match_view v{};
      v.posted = true;
      v.rank = static_cast<int>(r);
      v.endpoint = match_key_endpoint(e.key);
      v.tag = match_key_tag(e.key);
      v.kind = e.buffer ? "recvm" : "recvs";
      entries.push_back(v);
    }
    f.lock.unlock();
  }
  if (busy_lists) w.linef("matching table: %zu rank list(s) busy (their lock stayed held)", busy_lists);
  size_t posted = 0;
  for (const match_view& v : entries) posted += v.posted;
  w.linef("matching table: %zu posted receive(s), %zu message(s) waiting for a receive%s",
          posted, entries.size() - posted, busy ? " (some buckets busy)" : "");
  if (busy) w.linef("matching table: %zu bucket(s) busy (their lock stayed held)", busy);
  size_t listed = 0;
  for (const match_view& v : entries) {
    if (listed++ == max_listed) {
      w.linef("... and %zu more entries", entries.size() - max_listed);
      break;
    }
    if (v.posted)
      w.linef("posted %s from %s tag %u (%s): waits for a message from %s", v.kind,
              from_text(v.rank).c_str(), v.tag, endpoint_text(v.endpoint).c_str(),
              from_text(v.rank).c_str());
    else
      w.linef("unexpected %s from rank %d tag %u (%s) size %zu: no receive posted", v.kind,
              v.rank, v.tag, endpoint_text(v.endpoint).c_str(), v.length);
  }
}

// ---- backlog, packets ------------------------------------------------------------------

const char* control_name(uint32_t imm) {
  if (imm_kind(imm) != msg_kind::control) return "message";
  switch (static_cast<control_kind>(imm_endpoint(imm))) {
    case control_kind::rtr: return "RTR";
    case control_kind::fin: return "FIN";
    case control_kind::nack: return "NACK";
    case control_kind::gfence: return "gfence announcement";
    case control_kind::getv_reply: return "getv reply";
    case control_kind::abort: return "rendezvous abort";
  }
  return "control message";
}

void dump_backlog(line_writer& w, device& d) {
  if (!try_lock_bounded(d.backlog_lock)) {
    w.linef("backlog: %d operation(s); busy (its lock stayed held)",
            d.backlog_size.load(std::memory_order_relaxed));
    return;
  }
  std::vector<std::string> lines;
  for (const backlog_op& op : d.backlog) {
    if (lines.size() == max_listed) break;
    switch (op.what) {
      case backlog_op::op::recv:
        lines.push_back("backlog: a receive buffer to re-post");
        break;
      case backlog_op::op::message:
        lines.push_back(std::string("backlog: ") + control_name(op.imm) + " to rank " +
                        std::to_string(op.rank) + " (" + std::to_string(op.length) +
                        " bytes): waits for room in the transport");
        break;
      case backlog_op::op::rdma:
        lines.push_back("backlog: RDMA of operation id " + std::to_string(op.rdv->id) +
                        " with rank " + std::to_string(op.rdv->rank) +
                        ": waits for room in the transport");
        break;
    }
  }
  const size_t total = d.backlog.size();
  d.backlog_lock.unlock();
  w.linef("backlog: %zu operation(s)", total);
  for (const std::string& l : lines) w.line(l);
  if (total > lines.size()) w.linef("... and %zu more backlog entries", total - lines.size());
}

void dump_packets(line_writer& w, device& d) {
  size_t free_packets = 0;
  const std::string free_text = d.packets->try_available(free_packets)
                                    ? std::to_string(free_packets)
                                    : std::string("busy");
  w.linef("packets: %s of %zu free (%zu bytes each); %d receive(s) not re-posted; the pool was "
          "found empty %llu time(s)",
          free_text.c_str(), d.packets->capacity(), d.packet_size,
          d.recv_deficit.load(std::memory_order_relaxed),
          static_cast<unsigned long long>(d.pool_empty_count.load(std::memory_order_relaxed)));
  if (const int parked = d.parked_count.load(std::memory_order_relaxed))
    w.linef("%d one-sided message(s) wait on the heap for a free packet (the program has not "
            "consumed those before them)",
            parked);
}

const char* peer_state_name(peer_state s) {
  switch (s) {
    case peer_state::alive: return "alive";
    case peer_state::suspected: return "suspected";
    case peer_state::dead: return "dead";
  }
  return "?";
}

// Sends a broken connection gave back, held until their peer proves alive
// or dead (progress.cpp, on_failed_send), and what the sweep has seen.
void dump_held(line_writer& w, device& d) {
  std::vector<std::pair<int, uint32_t>> held;
  size_t total = 0;
  if (!try_lock_bounded(d.held_lock)) {
    w.line("held sends: busy (their lock stayed held)");
  } else {
    total = d.held.size();
    for (size_t i = 0; i < total && i < max_listed; ++i)
      held.emplace_back(d.held[i]->out.rank, d.held[i]->out.imm);
    d.held_lock.unlock();
  }
  const uint32_t seen = d.failure_epoch_seen.load(std::memory_order_relaxed);
  const uint32_t epoch = g_peer_failure_epoch.load(std::memory_order_relaxed);
  if (total == 0 && seen == epoch) return;
  w.linef("held sends: %zu (waiting for their peer to prove alive or dead); failure epoch %u, "
          "this device swept up to %u",
          total, epoch, seen);
  for (const auto& h : held)
    w.linef("held: %s to rank %d (%s)", control_name(h.second), h.first,
            h.first >= 0 && h.first < LCI_NUM_PROCESSES
                ? peer_state_name(peer_state_of(h.first))
                : "no such rank");
  if (total > held.size()) w.linef("... and %zu more held sends", total - held.size());
}

// Work that waits for a progress call on a device: messages in the native
// transport's rings, operations in the backlog, receives to re-post,
// messages held for packets.
uint64_t work_waiting(device& d) {
  return d.net->arrivals_waiting() +
         static_cast<uint64_t>(d.backlog_size.load(std::memory_order_relaxed)) +
         static_cast<uint64_t>(d.recv_deficit.load(std::memory_order_relaxed)) +
         static_cast<uint64_t>(d.parked_count.load(std::memory_order_relaxed));
}
// What moves whenever a thread calls LCI_progress on the device.
uint64_t progress_seen(device& d) {
  return d.progress_passes.load(std::memory_order_relaxed) + d.net->polls();
}
// How long the dump watches devices with work waiting for a progress call.
constexpr int stall_watch_ms = 200;

void dump_device(line_writer& w, device& d, bool stalled) {
  w.set_prefix("rank " + std::to_string(LCI_RANK) + " dev " + std::to_string(d.group_index) +
               ": ");
  w.linef("transport: %s", d.net->provider_name());
  if (stalled)
    w.linef("NOT PROGRESSED: no thread called LCI_progress on this device for %d ms, although "
            "work waits for it (%" PRIu64 " message(s) in its rings, %d operation(s) in its "
            "backlog, %d receive(s) to re-post): a thread must keep calling LCI_progress on "
            "this device (lci::progress on an lci.hpp device of it)",
            stall_watch_ms, d.net->arrivals_waiting(),
            d.backlog_size.load(std::memory_order_relaxed),
            d.recv_deficit.load(std::memory_order_relaxed));
  dump_ops(w, d);
  dump_matching(w, d);
  dump_backlog(w, d);
  dump_held(w, d);
  dump_packets(w, d);
  d.net->describe([&w](const std::string& l) { w.line(l); });
}

}  // namespace

bool dump_state(FILE* out) {
  if (!g_initialized.load(std::memory_order_acquire) || g_runtime == nullptr) return false;
  line_writer w(out);
  w.set_prefix("rank " + std::to_string(LCI_RANK) + ": ");
  runtime& rt = *g_runtime;
  w.linef("LCI state dump: %d rank(s), pid %ld", LCI_NUM_PROCESSES, static_cast<long>(getpid()));
  // Held for the whole dump: no device is destroyed meanwhile.
  if (!try_lock_bounded(rt.devices_mutex)) {
    w.line("devices: busy (a device is being created or destroyed)");
  } else {
    std::lock_guard<std::mutex> guard(rt.devices_mutex, std::adopt_lock);
    // Devices with work waiting are watched for a moment: one that no
    // thread progresses meanwhile is named (a program that stopped calling
    // LCI_progress on it, or a thread stuck inside a handler).
    std::vector<uint64_t> seen(rt.devices.size());
    bool waiting = false;
    for (size_t i = 0; i < rt.devices.size(); ++i) {
      seen[i] = progress_seen(*rt.devices[i]);
      waiting |= work_waiting(*rt.devices[i]) != 0;
    }
    if (waiting) std::this_thread::sleep_for(std::chrono::milliseconds(stall_watch_ms));
    for (size_t i = 0; i < rt.devices.size(); ++i) {
      device& d = *rt.devices[i];
      dump_device(w, d, waiting && progress_seen(d) == seen[i] && work_waiting(d) != 0);
    }
    w.set_prefix("rank " + std::to_string(LCI_RANK) + ": ");
  }
  std::string failed;
  for (int r = 0; r < peer_failure_ranks(); ++r)
    if (peer_failed(r)) failed += (failed.empty() ? "" : ", ") + std::to_string(r);
  w.line("failed peers: " + (failed.empty() ? std::string("none") : failed));
  w.line("end of LCI state dump");
  fflush(out);
  return true;
}

// ---- the signal ---------------------------------------------------------------------------

namespace {

// The self-pipe: the handler writes a byte, the dump thread reads it.
int g_pipe[2] = {-1, -1};
int g_signal = 0;
struct sigaction g_previous {};
std::thread* g_thread = nullptr;

constexpr char dump_byte = 'd';
constexpr char stop_byte = 'q';

// The program's handler, if it had one when LCI installed its own, is
// called after the byte is written (g_previous is written before the
// handler is installed and not changed while it is).
extern "C" void on_dump_signal(int sig, siginfo_t* info, void* context) {
  const int saved = errno;
  // A full pipe already holds a pending request: losing this byte is fine.
  ssize_t ignored = ::write(g_pipe[1], &dump_byte, 1);
  (void)ignored;
  errno = saved;
  if (g_previous.sa_flags & SA_SIGINFO) {
    if (g_previous.sa_sigaction) g_previous.sa_sigaction(sig, info, context);
  } else if (g_previous.sa_handler != SIG_DFL && g_previous.sa_handler != SIG_IGN &&
             g_previous.sa_handler != nullptr) {
    g_previous.sa_handler(sig);
  }
}

void dump_thread() {
  for (;;) {
    char c;
    const ssize_t n = ::read(g_pipe[0], &c, 1);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0 || c == stop_byte) return;
    dump_state(stderr);
  }
}

void close_pipe() {
  for (int& fd : g_pipe) {
    if (fd >= 0) ::close(fd);
    fd = -1;
  }
}

}  // namespace

bool dump_signal_start(int sig) {
  if (sig == 0 || g_thread) return true;
  if (::pipe2(g_pipe, O_CLOEXEC) != 0) {
    LCI_WARN("LCI_DUMP_SIGNAL: cannot create a pipe (%s); no state dump on a signal",
             strerror(errno));
    return false;
  }
  // The handler must never block: a full pipe loses the byte instead.
  ::fcntl(g_pipe[1], F_SETFL, ::fcntl(g_pipe[1], F_GETFL) | O_NONBLOCK);
  // The thread takes no signal: the program's threads keep getting them.
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, &old);
  try {
    g_thread = new std::thread(dump_thread);
  } catch (...) {
    pthread_sigmask(SIG_SETMASK, &old, nullptr);
    close_pipe();
    LCI_WARN("LCI_DUMP_SIGNAL: cannot start the dump thread; no state dump on a signal");
    return false;
  }
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  // The program's handler (installed before LCI_initialize) keeps being
  // called, with the signals it blocks blocked and on its stack.
  if (::sigaction(sig, nullptr, &g_previous) != 0) g_previous = {};
  struct sigaction sa {};
  sa.sa_sigaction = on_dump_signal;
  sa.sa_mask = g_previous.sa_mask;
  sa.sa_flags = SA_RESTART | SA_SIGINFO | (g_previous.sa_flags & SA_ONSTACK);
  if (::sigaction(sig, &sa, nullptr) != 0) {
    LCI_WARN("LCI_DUMP_SIGNAL: cannot install a handler for signal %s (%s)",
             dump_signal_name(sig).c_str(), strerror(errno));
    dump_signal_stop();
    return false;
  }
  g_signal = sig;
  return true;
}

void dump_signal_stop() {
  if (g_signal != 0) {
    // Restored only if LCI's handler is still the one installed: a handler
    // the program installed after LCI_initialize stays.
    struct sigaction now {};
    if (::sigaction(g_signal, nullptr, &now) == 0 && (now.sa_flags & SA_SIGINFO) &&
        now.sa_sigaction == on_dump_signal)
      ::sigaction(g_signal, &g_previous, nullptr);
    g_signal = 0;
  }
  if (g_thread) {
    // The handler is gone: the pipe has room for this byte or holds
    // requests that the thread reads first.
    ssize_t ignored;
    do ignored = ::write(g_pipe[1], &stop_byte, 1);
    while (ignored < 0 && errno == EINTR);
    // (A full pipe, EAGAIN: the thread reads the requests, then this one.)
    while (ignored < 0 && errno == EAGAIN) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
      ignored = ::write(g_pipe[1], &stop_byte, 1);
    }
    g_thread->join();
    delete g_thread;
    g_thread = nullptr;
  }
  close_pipe();
}

}  // namespace lci

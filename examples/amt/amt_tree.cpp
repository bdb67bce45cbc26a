/*
 * amt_tree.cpp - a small asynchronous many-task runtime on LCI and oneTBB,
 * running a UTS-style unbalanced tree computation.
 *
 * The runtime uses LCI the way HPX's parcel layer does:
 *   - remote task spawning by active message: a task's id, depth, its
 *     parent's continuation and its argument payload travel in one
 *     LCI_putma into the peer's default completion object (a queue here);
 *   - arguments too large for a medium message (above LCI_MEDIUM_SIZE) go by
 *     LCI_putla into a long buffer the target allocates; the origin's buffer
 *     comes back through a completion queue (flag LCI_ERR_RETRY: the target
 *     had no memory and the put is issued again);
 *   - results flow back to the parent's continuation with LCI_putma;
 *   - progress comes from idle TBB workers: a poller task sits in the
 *     arena's FIFO (task_arena::enqueue), which workers visit only when
 *     their own deques are empty; it runs LCI_progress (thread-safe), turns
 *     arrivals into TBB tasks and enqueues itself again;
 *   - every send that gets LCI_ERR_RETRY drives progress and drains the
 *     arrival queue before trying again, so two ranks whose pools are full
 *     of each other's messages still make progress.
 *
 * The tree: node (id, depth) has a payload of 64-bit words computed by its
 * parent from the parent's value; the node's value is a hash chain over the
 * payload (plus --work extra rounds). Nodes below --max-depth have 0..4
 * children (uniform, so subtrees die out or grow at random: unbalanced).
 * About one child in --large-every carries 16-32 KiB of payload. Children at
 * depth < --spawn-depth run on rank hash(id) % nranks, deeper ones where
 * their parent ran. The result is the node count and the sum of values,
 * compared on rank 0 with a serial traversal of the same tree.
 *
 * Termination: a parent's continuation (join) completes when all its
 * children reported, so the root's join on rank 0 completes exactly when
 * every task everywhere finished and every result arrived; rank 0 then
 * sends a stop message to every rank. A rank leaves once stopped and its
 * own long puts are all complete.
 *
 * Surviving the loss of a rank (LCI_PEER_FAILURE=continue, lcrun
 * --keep-going): the spawning side remembers every child it placed on
 * another rank (a tracker entry per parent: the parent's id, depth and
 * value, from which each child's id and payload follow, and the rank and
 * attempt of each child) until the child's result is back. When a rank is
 * known dead (the LCIX_on_peer_failure callback, or a send to it returning
 * LCI_ERR_FATAL) every outstanding child placed on it is spawned again, whole
 * subtree and all, on a live rank (the next live one from a hash of the id
 * and attempt), or run here. Whatever the dead rank's subtrees had already
 * started elsewhere runs on and reports to it; those sends fail with
 * LCI_ERR_FATAL and are dropped. Results name their parent by a tracker key
 * and a child index, and each child counts once: a late result of an
 * abandoned attempt, or one for a parent that completed, is ignored (every
 * result of a child is the same, so the first one wins). Termination adds a
 * handshake, since work orphaned by the dead rank may still be running
 * when the root completes: on the stop message a rank drops every task and
 * send, drains, and reports quiet (with its counts) to rank 0, which then
 * tells every live rank to leave. The other modes are unchanged: the
 * tracker is used only in this mode.
 *
 * For the demonstration and its tests, --kill-rank R --kill-after N makes
 * rank R (never rank 0, the root) SIGKILL itself as it starts its task
 * N+1. LCI detects a dead peer on its native shared-memory transport
 * (LCI_SHM=1) and over libfabric tcp (its reset connection); libfabric shm
 * does not detect deaths, so there --kill-notice 1 makes the victim first
 * tell the others, which mark
 * it failed with LCI's test hook LCIT_fail_peer (LCI_TEST_HOOKS=1), stop
 * talking to it for 2 s and then die:
 *
 *   LCI_PEER_FAILURE=continue LCI_SHM=1 lcrun --keep-going -n 4 ./amt_tree \
 *       --kill-rank 2 --kill-after 1000
 *
 * Rank 0 prints the result, PASS if it equals the serial one, and how many
 * tasks were spawned again; lcrun exits with the victim's status (137).
 *
 * Run:  lcrun -n 2 ./amt_tree [--max-depth 12] [--spawn-depth 6] [--threads 2]
 * Exits 0 on rank 0 if the distributed result equals the serial one.
 */
#include <dlfcn.h>
#include <signal.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include <oneapi/tbb/global_control.h>
#include <oneapi/tbb/task_arena.h>
#include <oneapi/tbb/task_group.h>

#include "lci.h"

namespace {

// ---- the tree (pure functions, shared by the serial and parallel runs) ----

uint64_t mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

struct tree_params {
  int max_depth = 12;
  int spawn_depth = 6;
  int large_every = 16;
  int work = 100;
  uint64_t seed = 42;
};

uint64_t node_value(const tree_params& p, uint64_t id, const std::vector<uint64_t>& payload) {
  uint64_t v = id;
  for (uint64_t w : payload) v = mix(v ^ w);
  for (int i = 0; i < p.work; ++i) v = mix(v);
  return v;
}

int child_count(const tree_params& p, uint64_t id, int depth) {
  if (depth >= p.max_depth) return 0;
  if (depth == 0) return 4;  // a root with one child would make runs too lumpy to time
  return static_cast<int>(mix(id ^ 0x5bd1e995ULL) % 5);
}

uint64_t child_id(uint64_t id, int i) { return mix(id * 31 + static_cast<uint64_t>(i) + 1); }

// The payload depends on the parent's value, so it must really be shipped.
std::vector<uint64_t> child_payload(const tree_params& p, uint64_t parent_value, uint64_t cid) {
  uint64_t h = mix(cid ^ 0xabcdef12345ULL);
  size_t words = (p.large_every > 0 && h % static_cast<uint64_t>(p.large_every) == 0)
                     ? 2048 + static_cast<size_t>(h >> 20) % 2048  // 16-32 KiB
                     : static_cast<size_t>(h >> 20) % 24;
  std::vector<uint64_t> payload(words);
  for (size_t k = 0; k < words; ++k) payload[k] = mix(parent_value ^ (cid + k));
  return payload;
}

std::vector<uint64_t> root_payload(const tree_params& p) {
  return {p.seed, p.seed + 1, p.seed + 2};
}

struct tree_sum {
  uint64_t count = 0;
  uint64_t sum = 0;
};

// Depth is bounded by max_depth, so plain recursion is fine.
void serial_visit(const tree_params& p, uint64_t id, int depth,
                  const std::vector<uint64_t>& payload, tree_sum& acc) {
  uint64_t v = node_value(p, id, payload);
  acc.count += 1;
  acc.sum += v;
  int n = child_count(p, id, depth);
  for (int i = 0; i < n; ++i) {
    uint64_t cid = child_id(id, i);
    serial_visit(p, cid, depth + 1, child_payload(p, v, cid), acc);
  }
}

int owner_of(const tree_params& p, uint64_t id, int depth, int here) {
  if (depth >= p.spawn_depth) return here;
  return static_cast<int>(mix(id ^ 0x77ULL) % static_cast<uint64_t>(LCI_NUM_PROCESSES));
}

// ---- wire formats -------------------------------------------------------

enum msg_tag : LCI_tag_t {
  tag_spawn = 1,
  tag_result = 2,
  tag_stop = 3,
  // Survivor mode only: a rank is quiet (rank 0 then sends exit), and the
  // victim's notice that it is about to die (--kill-notice).
  tag_quiet = 4,
  tag_exit = 5,
  tag_dying = 6
};

// Where a finished subtree reports: on `rank` (-1: the root), either to the
// join at address `join` (child -1) or, for a child the spawning side
// tracks (survivor mode), as child `child` of tracker entry `join`.
struct parent_ref {
  int32_t rank;
  int32_t child;
  uint64_t join;
};

struct spawn_header {
  uint64_t id;
  uint64_t parent_join;
  int32_t parent_rank;
  uint16_t depth;
  int16_t parent_child;
  uint64_t words;
};  // followed by `words` payload words

struct result_msg {
  uint64_t join;
  uint64_t count;
  uint64_t sum;
  int32_t child;
  uint32_t unused;
};

// A rank's counts, sent to rank 0 with tag_quiet.
struct quiet_msg {
  uint64_t respawned;
  uint64_t results_dropped;
  uint64_t duplicates;
};

// ---- the runtime --------------------------------------------------------

// A continuation waiting for `pending` children; the node itself is already
// counted in count/sum.
struct join {
  std::atomic<int> pending;
  std::atomic<uint64_t> count;
  std::atomic<uint64_t> sum;
  parent_ref parent;
};

// Survivor mode: what the spawning side keeps of a parent's children placed
// on other ranks until their results are back. Enough to spawn any of them
// again: its id and payload follow from the parent's id and value.
constexpr int k_max_children = 4;  // child_count's maximum

struct tracked_children {
  join* j;
  uint64_t id;     // the parent
  uint64_t value;  // the parent's value
  int depth;       // the parent's depth
  int32_t owner[k_max_children];    // where child i's current attempt runs
  uint8_t attempt[k_max_children];  // bumped each time child i is placed again
  uint8_t outstanding;              // bit i: child i's result has not arrived
};

// The entries by key (keys are never reused, so a late result cannot reach
// another parent). One lock for all, taken only in survivor mode: once per
// node with children, once per result from another rank, and again for a
// child that must be placed anew. An entry leaves when its last remote child
// reported, before the join can complete.
struct child_tracker {
  std::mutex lock;
  std::unordered_map<uint64_t, tracked_children> entries;
  uint64_t next_key = 1;
  // Every join not yet complete. Once the rank stops, the joins of work
  // dropped then (orphaned by a failed rank) never complete; they are
  // deleted at the end.
  std::unordered_set<join*> joins;
};

struct runtime {
  tree_params params;
  int threads = 2;
  double timeout_s = 120;

  // Survivor mode (LCI_PEER_FAILURE=continue) and the victim's settings.
  bool survive = false;
  int kill_rank = -1;
  uint64_t kill_after = 100;
  bool kill_notice = false;
  uint64_t kill_at = 0;  // on the victim: die when starting this task (0: never)
  LCI_error_t (*fail_peer)(int rank) = nullptr;  // LCIT_fail_peer, for --kill-notice

  LCI_device_t device = nullptr;
  LCI_endpoint_t ep = nullptr;
  LCI_comp_t arrivals = nullptr;     // message port: spawns, results, stop
  LCI_comp_t long_done = nullptr;    // command port: our LCI_putla buffers come back

  tbb::task_arena* arena = nullptr;
  tbb::task_group* group = nullptr;

  std::atomic<bool> stopped{false};
  std::atomic<bool> dying{false};    // the victim of --kill-notice, saying goodbye
  std::atomic<bool> exit_now{false};  // survivor mode: rank 0 says leave
  std::atomic<int> pollers_alive{0};
  std::atomic<int64_t> long_in_flight{0};

  child_tracker tracker;
  std::mutex quiet_lock;
  std::vector<char> quiet;  // rank 0: which ranks reported quiet
  quiet_msg quiet_total{};  // rank 0: their counts, summed

  // Statistics (per rank).
  std::atomic<uint64_t> tasks_run{0}, spawn_medium{0}, spawn_long{0}, long_reissued{0},
      results_sent{0}, send_retries{0};
  // Survivor mode: children placed again, results whose parent's rank had
  // failed, results that came twice for the same child.
  std::atomic<uint64_t> respawned{0}, results_dropped{0}, duplicates{0};

  // Filled on rank 0 when the root's join completes.
  tree_sum total;
  std::chrono::steady_clock::time_point t_done;
};

runtime rt;

// Survivor mode: once stopped (or dying), tasks and their sends are dropped.
bool winding_down() { return rt.stopped.load() || rt.dying.load(); }

void run_node(uint64_t id, int depth, const std::vector<uint64_t>& payload, parent_ref parent);
void report(parent_ref parent, uint64_t count, uint64_t sum);
void report_tracked(uint64_t key, int child, uint64_t count, uint64_t sum);
void free_arrival(const LCI_request_t& req);

// Turns an arrived message into work. Never sends: it runs inside
// service(), which send retry loops call, and a send from there could
// recurse without bound.
void dispatch_arrival(const LCI_request_t& req) {
  const char* data;
  size_t length;
  if (req.type == LCI_LONG) {
    data = static_cast<const char*>(req.data.lbuffer.address);
    length = req.data.lbuffer.length;
  } else {
    data = static_cast<const char*>(req.data.mbuffer.address);
    length = req.data.mbuffer.length;
  }
  if (req.flag != LCI_OK) {
    // Survivor mode: a putla from a rank that failed before its data came;
    // the buffer LCI allocated is ours to free, its contents undefined.
    if (!rt.survive) {
      std::fprintf(stderr, "amt_tree: rank %d: a message from rank %d failed (flag %d)\n",
                   LCI_RANK, req.rank, req.flag);
      std::abort();
    }
    free_arrival(req);
    return;
  }
  if (rt.survive && winding_down() && (req.tag == tag_spawn || req.tag == tag_result)) {
    free_arrival(req);
    return;
  }
  if (req.tag == tag_spawn && length >= sizeof(spawn_header)) {
    spawn_header h;
    std::memcpy(&h, data, sizeof h);
    // The header is another process's bytes: its word count must match the
    // message before anything is sized by it.
    if (h.words > (length - sizeof h) / sizeof(uint64_t) ||
        sizeof h + h.words * sizeof(uint64_t) != length) {
      std::fprintf(stderr,
                   "amt_tree: rank %d: dropped a malformed spawn from rank %d (%" PRIu64
                   " words in %zu bytes)\n",
                   LCI_RANK, req.rank, h.words, length);
      free_arrival(req);
      return;
    }
    std::vector<uint64_t> payload(h.words);
    if (h.words > 0) std::memcpy(payload.data(), data + sizeof h, h.words * sizeof(uint64_t));
    parent_ref parent{h.parent_rank, h.parent_child, h.parent_join};
    rt.group->run([id = h.id, depth = static_cast<int>(h.depth), payload = std::move(payload),
                   parent] { run_node(id, depth, payload, parent); });
  } else if (req.tag == tag_result && length == sizeof(result_msg)) {
    result_msg r;
    std::memcpy(&r, data, sizeof r);
    if (rt.survive)
      report_tracked(r.join, r.child, r.count, r.sum);
    else
      report(parent_ref{LCI_RANK, -1, r.join}, r.count, r.sum);
  } else if (req.tag == tag_stop) {
    rt.stopped.store(true);
  } else if (rt.survive && req.tag == tag_quiet && length == sizeof(quiet_msg) &&
             LCI_RANK == 0) {
    quiet_msg q;
    std::memcpy(&q, data, sizeof q);
    std::lock_guard<std::mutex> g(rt.quiet_lock);
    if (!rt.quiet[static_cast<size_t>(req.rank)]) {
      rt.quiet[static_cast<size_t>(req.rank)] = 1;
      rt.quiet_total.respawned += q.respawned;
      rt.quiet_total.results_dropped += q.results_dropped;
      rt.quiet_total.duplicates += q.duplicates;
    }
  } else if (rt.survive && req.tag == tag_exit) {
    rt.exit_now.store(true);
  } else if (rt.survive && req.tag == tag_dying) {
    // --kill-notice: the victim is about to die; mark it failed now (LCI
    // sweeps it and runs our callback in the next progress pass).
    if (!rt.fail_peer || rt.fail_peer(req.rank) != LCI_OK) {
      std::fprintf(stderr,
                   "amt_tree: rank %d: --kill-notice needs LCI_TEST_HOOKS=1 (LCIT_fail_peer)\n",
                   LCI_RANK);
      std::abort();
    }
  } else {
    std::fprintf(stderr, "amt_tree: rank %d: unexpected message tag %u length %zu\n", LCI_RANK,
                 static_cast<unsigned>(req.tag), length);
    std::abort();
  }
  // The payload was copied out, so the pool buffer goes back at once: a task
  // that waits to run must not hold one of the buffers senders need.
  free_arrival(req);
}

void free_arrival(const LCI_request_t& req) {
  if (req.type == LCI_LONG) {
    if (req.data.lbuffer.address) LCI_lbuffer_free(req.data.lbuffer);
  } else {
    LCI_mbuffer_free(req.data.mbuffer);
  }
}

LCI_error_t send_long(LCI_lbuffer_t buf, int rank);

// A long spawn that will not be sent (again): its buffer is ours.
void drop_long(LCI_lbuffer_t buf) {
  LCI_lbuffer_free(buf);
  rt.long_in_flight--;
}

// Our LCI_putla buffers, back from the target.
void complete_long(const LCI_request_t& req) {
  if (req.flag == LCI_ERR_RETRY) {
    if (rt.survive && (winding_down() || LCIX_peer_failed(req.rank))) {
      drop_long(req.data.lbuffer);
      return;
    }
    // The target could not allocate; nothing arrived. Issue it again, from a
    // task, because service() must not send.
    rt.long_reissued++;
    LCI_lbuffer_t buf = req.data.lbuffer;
    int rank = req.rank;
    rt.group->run([buf, rank] {
      if (send_long(buf, rank) != LCI_OK) drop_long(buf);
    });
    return;
  }
  if (req.flag != LCI_OK && !(rt.survive && req.flag == LCI_ERR_FATAL)) {
    std::fprintf(stderr, "amt_tree: rank %d: LCI_putla failed (flag %d)\n", LCI_RANK, req.flag);
    std::abort();
  }
  // (LCI_ERR_FATAL in survivor mode: the target failed; the tracker places
  // the child again.)
  drop_long(req.data.lbuffer);
}

// One round of progress: drive the device, then act on what completed.
// Safe on any thread and in any number of threads at once.
bool service() {
  bool busy = LCI_progress(rt.device) == LCI_OK;
  LCI_request_t reqs[16];
  size_t n = 0;
  LCI_queue_pop_multiple(rt.arrivals, 16, reqs, &n);
  for (size_t i = 0; i < n; ++i) dispatch_arrival(reqs[i]);
  busy = busy || n > 0;
  LCI_queue_pop_multiple(rt.long_done, 16, reqs, &n);
  for (size_t i = 0; i < n; ++i) complete_long(reqs[i]);
  return busy || n > 0;
}

// LCI_OK: sent. LCI_ERR_FATAL (survivor mode only): `rank` failed, or this
// rank is winding down and the message was abandoned (unless `control`).
LCI_error_t send_medium(int rank, LCI_tag_t tag, const void* data, size_t length,
                        bool control = false) {
  LCI_mbuffer_t buf{const_cast<void*>(data), length};
  // Our own memory: LCI copies it, so it is ours again at LCI_OK.
  LCI_error_t e;
  while ((e = LCI_putma(rt.ep, buf, rank, tag, LCI_DEFAULT_COMP_REMOTE)) == LCI_ERR_RETRY) {
    rt.send_retries++;
    if (rt.survive && !control && winding_down()) return LCI_ERR_FATAL;
    service();
  }
  return e;
}

LCI_error_t send_long(LCI_lbuffer_t buf, int rank) {
  LCI_error_t e;
  while ((e = LCI_putla(rt.ep, buf, rt.long_done, rank, tag_spawn, LCI_DEFAULT_COMP_REMOTE,
                        nullptr)) == LCI_ERR_RETRY) {
    rt.send_retries++;
    if (rt.survive && winding_down()) return LCI_ERR_FATAL;
    service();
  }
  return e;
}

LCI_error_t spawn_remote(int rank, uint64_t id, int depth, const std::vector<uint64_t>& payload,
                         parent_ref parent) {
  spawn_header h{id,
                 parent.join,
                 parent.rank,
                 static_cast<uint16_t>(depth),
                 static_cast<int16_t>(parent.child),
                 payload.size()};
  size_t length = sizeof h + payload.size() * sizeof(uint64_t);
  if (length <= static_cast<size_t>(LCI_MEDIUM_SIZE)) {
    std::vector<char> msg(length);
    std::memcpy(msg.data(), &h, sizeof h);
    if (!payload.empty())
      std::memcpy(msg.data() + sizeof h, payload.data(), payload.size() * sizeof(uint64_t));
    LCI_error_t e = send_medium(rank, tag_spawn, msg.data(), length);
    if (e == LCI_OK) rt.spawn_medium++;
    return e;
  }
  // Too big for an eager message: rendezvous into a buffer the target
  // allocates. The buffer is LCI's until it comes back in long_done.
  LCI_lbuffer_t buf;
  while (LCI_lbuffer_alloc(rt.device, length, &buf) == LCI_ERR_RETRY) service();
  std::memcpy(buf.address, &h, sizeof h);
  std::memcpy(static_cast<char*>(buf.address) + sizeof h, payload.data(),
              payload.size() * sizeof(uint64_t));
  rt.long_in_flight++;
  LCI_error_t e = send_long(buf, rank);
  if (e != LCI_OK) {
    drop_long(buf);
    return e;
  }
  rt.spawn_long++;
  return e;
}

// Survivor mode: sends `msg` to every rank not known dead.
void send_to_live(LCI_tag_t tag, const void* data, size_t length) {
  for (int r = 0; r < LCI_NUM_PROCESSES; ++r)
    if (r != LCI_RANK && !LCIX_peer_failed(r)) send_medium(r, tag, data, length, true);
}

void broadcast_stop() {
  if (rt.survive) {
    rt.stopped.store(true);
    send_to_live(tag_stop, nullptr, 0);
    return;
  }
  for (int r = 0; r < LCI_NUM_PROCESSES; ++r)
    if (r != LCI_RANK) send_medium(r, tag_stop, nullptr, 0);
  rt.stopped.store(true);
}

void add_to_join(join* j, uint64_t count, uint64_t sum) {
  j->count.fetch_add(count);
  j->sum.fetch_add(sum);
  if (j->pending.fetch_sub(1) == 1) {
    parent_ref up = j->parent;
    uint64_t c = j->count.load(), s = j->sum.load();
    if (rt.survive) {
      std::lock_guard<std::mutex> g(rt.tracker.lock);
      rt.tracker.joins.erase(j);
    }
    delete j;
    report(up, c, s);
  }
}

// A finished subtree (count nodes, values summing to sum) reports to its
// parent's join, wherever that is.
void report(parent_ref parent, uint64_t count, uint64_t sum) {
  if (parent.rank < 0) {  // the root: everything is done
    rt.total = tree_sum{count, sum};
    rt.t_done = std::chrono::steady_clock::now();
    rt.group->run(broadcast_stop);
    return;
  }
  if (parent.rank != LCI_RANK) {
    // report() may run inside service(), which must not send: defer.
    result_msg r{parent.join, count, sum, parent.child, 0};
    int rank = parent.rank;
    rt.group->run([r, rank] {
      if (rt.survive && winding_down()) return;
      // LCI_ERR_FATAL (survivor mode): the parent's rank failed, and the
      // grandparent spawns the parent's whole subtree again.
      if (send_medium(rank, tag_result, &r, sizeof r) == LCI_OK)
        rt.results_sent++;
      else
        rt.results_dropped++;
    });
    return;
  }
  if (parent.child >= 0) {
    report_tracked(parent.join, parent.child, count, sum);
    return;
  }
  add_to_join(reinterpret_cast<join*>(static_cast<uintptr_t>(parent.join)), count, sum);
}

// ---- survivor mode: tracked children --------------------------------------

// The first live rank from r on (this rank is always live).
int next_live(int r) {
  const int n = LCI_NUM_PROCESSES;
  for (int k = 0; k < n; ++k) {
    int c = (r + k) % n;
    if (c == LCI_RANK || !LCIX_peer_failed(c)) return c;
  }
  return LCI_RANK;
}

// Where attempt `attempt` of child `cid` (at depth `depth`) runs.
int place_child(uint64_t cid, int depth, unsigned attempt) {
  int r = attempt == 0 ? owner_of(rt.params, cid, depth, LCI_RANK)
                       : static_cast<int>(mix(cid + attempt) %
                                          static_cast<uint64_t>(LCI_NUM_PROCESSES));
  return next_live(r);
}

void report_tracked(uint64_t key, int child, uint64_t count, uint64_t sum) {
  join* j = nullptr;
  {
    std::lock_guard<std::mutex> g(rt.tracker.lock);
    auto it = key != 0 && child >= 0 && child < k_max_children ? rt.tracker.entries.find(key)
                                                               : rt.tracker.entries.end();
    const uint8_t bit = static_cast<uint8_t>(1u << (child & 3));
    if (it == rt.tracker.entries.end() || !(it->second.outstanding & bit)) {
      rt.duplicates++;  // a late result of an attempt given up on
      return;
    }
    it->second.outstanding = static_cast<uint8_t>(it->second.outstanding & ~bit);
    j = it->second.j;
    if (it->second.outstanding == 0) rt.tracker.entries.erase(it);
  }
  add_to_join(j, count, sum);
}

// Runs (or sends) attempt `attempt` of tracked child `child` of entry `key`
// on `rank`; while the rank turns out dead, places it again, unless the
// failure sweep (respawn_from) already did or its result came.
void start_tracked(uint64_t key, int child, uint64_t cid, int depth,
                   const std::vector<uint64_t>& payload, int rank, unsigned attempt) {
  for (;;) {
    if (winding_down()) return;
    parent_ref parent{LCI_RANK, child, key};
    if (rank == LCI_RANK) {
      rt.group->run([cid, depth, payload, parent] { run_node(cid, depth, payload, parent); });
      return;
    }
    if (spawn_remote(rank, cid, depth, payload, parent) != LCI_ERR_FATAL) return;
    std::lock_guard<std::mutex> g(rt.tracker.lock);
    auto it = rt.tracker.entries.find(key);
    const uint8_t bit = static_cast<uint8_t>(1u << child);
    if (it == rt.tracker.entries.end() || !(it->second.outstanding & bit) ||
        it->second.attempt[child] != attempt)
      return;
    attempt = ++it->second.attempt[child];
    rank = it->second.owner[child] = place_child(cid, depth, attempt);
    rt.respawned++;
  }
}

// The children of node (id, depth, value) with its join j, survivor mode:
// those placed on other ranks are tracked before any is sent.
void spawn_children_tracked(uint64_t id, int depth, uint64_t v, int n, join* j) {
  const parent_ref me{LCI_RANK, -1, reinterpret_cast<uintptr_t>(j)};
  uint64_t cids[k_max_children];
  int owners[k_max_children];
  bool any_remote = false;
  for (int i = 0; i < n; ++i) {
    cids[i] = child_id(id, i);
    owners[i] = place_child(cids[i], depth + 1, 0);
    any_remote = any_remote || owners[i] != LCI_RANK;
  }
  uint64_t key = 0;
  {
    std::lock_guard<std::mutex> g(rt.tracker.lock);
    rt.tracker.joins.insert(j);
    if (any_remote) {
      key = rt.tracker.next_key++;
      tracked_children& t = rt.tracker.entries[key];
      t = tracked_children{j, id, v, depth, {}, {}, 0};
      for (int i = 0; i < n; ++i) {
        t.owner[i] = owners[i];
        if (owners[i] != LCI_RANK) t.outstanding = static_cast<uint8_t>(t.outstanding | 1u << i);
      }
    }
  }
  for (int i = 0; i < n; ++i) {
    std::vector<uint64_t> cp = child_payload(rt.params, v, cids[i]);
    if (owners[i] == LCI_RANK)
      rt.group->run([cid = cids[i], depth, cp = std::move(cp), me] {
        run_node(cid, depth + 1, cp, me);
      });
    else
      start_tracked(key, i, cids[i], depth + 1, cp, owners[i], 0);
  }
}

// Rank `dead` failed: every outstanding child placed on it is placed again.
void respawn_from(int dead) {
  struct move {
    uint64_t key;
    int child;
    uint64_t cid;
    int depth;
    uint64_t parent_value;
    int rank;
    unsigned attempt;
  };
  std::vector<move> moves;
  {
    std::lock_guard<std::mutex> g(rt.tracker.lock);
    for (auto& [key, t] : rt.tracker.entries)
      for (int i = 0; i < k_max_children; ++i) {
        if (!(t.outstanding & (1u << i)) || t.owner[i] != dead) continue;
        unsigned a = ++t.attempt[i];
        uint64_t cid = child_id(t.id, i);
        t.owner[i] = place_child(cid, t.depth + 1, a);
        moves.push_back(move{key, i, cid, t.depth + 1, t.value, t.owner[i], a});
      }
  }
  rt.respawned += moves.size();
  for (const move& m : moves)
    start_tracked(m.key, m.child, m.cid, m.depth, child_payload(rt.params, m.parent_value, m.cid),
                  m.rank, m.attempt);
}

// LCIX_on_peer_failure's callback: runs inside LCI_progress (in service()),
// which must not send, so the work goes to a task.
void on_peer_failure(int rank, void*) {
  std::fprintf(stderr, "amt_tree: rank %d: rank %d failed; spawning its tasks again\n", LCI_RANK,
               rank);
  if (rt.group && !winding_down()) rt.group->run([rank] { respawn_from(rank); });
}

// The victim's end (--kill-rank): now, or, with --kill-notice, after telling
// the others and giving them 2 s to stop using their connections to it.
[[noreturn]] void die() {
  std::fprintf(stderr, "amt_tree: rank %d kills itself with SIGKILL after %" PRIu64 " tasks%s\n",
               LCI_RANK, rt.kill_at - 1, rt.kill_notice ? " (it tells the others first)" : "");
  std::fflush(stderr);
  if (rt.kill_notice) {
    rt.dying.store(true);
    for (int r = 0; r < LCI_NUM_PROCESSES; ++r)
      if (r != LCI_RANK) send_medium(r, tag_dying, nullptr, 0, true);
    auto until = std::chrono::steady_clock::now() + std::chrono::seconds(2);
    while (std::chrono::steady_clock::now() < until)
      if (!service()) std::this_thread::yield();
  }
  raise(SIGKILL);
  std::abort();
}

void run_node(uint64_t id, int depth, const std::vector<uint64_t>& payload, parent_ref parent) {
  if (rt.survive && winding_down()) return;
  if (rt.tasks_run.fetch_add(1) + 1 == rt.kill_at) die();
  const tree_params& p = rt.params;
  uint64_t v = node_value(p, id, payload);
  int n = child_count(p, id, depth);
  if (n == 0) {
    report(parent, 1, v);
    return;
  }
  // Children may report before the loop ends; pending starts at n, so the
  // join cannot complete (and be deleted) until all n have been started.
  join* j = new join{{n}, {1}, {v}, parent};
  if (rt.survive) {
    spawn_children_tracked(id, depth, v, n, j);
    return;
  }
  parent_ref me{LCI_RANK, -1, reinterpret_cast<uintptr_t>(j)};
  for (int i = 0; i < n; ++i) {
    uint64_t cid = child_id(id, i);
    std::vector<uint64_t> cp = child_payload(p, v, cid);
    int owner = owner_of(p, cid, depth + 1, LCI_RANK);
    if (owner == LCI_RANK)
      rt.group->run([cid, depth, cp = std::move(cp), me] { run_node(cid, depth + 1, cp, me); });
    else
      spawn_remote(owner, cid, depth + 1, cp, me);
  }
}

// The progress task: runs when a worker has nothing else to do (the arena's
// FIFO is looked at only after the worker's own deque), polls for a short
// burst and puts itself back in the FIFO until the rank is done.
void poll_burst() {
  for (int i = 0; i < 64; ++i) {
    if (!service()) std::this_thread::yield();
    if (rt.stopped.load() && rt.long_in_flight.load() == 0) break;
  }
  if (rt.stopped.load() && rt.long_in_flight.load() == 0) {
    rt.pollers_alive--;
    return;
  }
  rt.arena->enqueue(poll_burst);
}

// Survivor mode, on a timeout: what this rank still waits for.
void print_waiting() {
  std::lock_guard<std::mutex> g(rt.tracker.lock);
  std::vector<int> on(static_cast<size_t>(LCI_NUM_PROCESSES), 0);
  for (const auto& [key, t] : rt.tracker.entries)
    for (int i = 0; i < k_max_children; ++i)
      if (t.outstanding & (1u << i)) on[static_cast<size_t>(t.owner[i])]++;
  std::string where;
  for (int r = 0; r < LCI_NUM_PROCESSES; ++r)
    if (on[static_cast<size_t>(r)])
      where += " " + std::to_string(on[static_cast<size_t>(r)]) + " on rank " + std::to_string(r) +
               (LCIX_peer_failed(r) ? " (failed)" : "");
  std::fprintf(stderr,
               "amt_tree: rank %d: %zu joins open, %" PRId64
               " long spawns in flight, children awaited:%s\n",
               LCI_RANK, rt.tracker.joins.size(), rt.long_in_flight.load(),
               where.empty() ? " none" : where.c_str());
}

// Survivor mode, after this rank stopped and its tasks are done: orphaned
// work elsewhere may still send to us, so nobody leaves before every live
// rank is quiet. Ranks report quiet (with their counts) to rank 0, which
// then tells them to leave. Returns false on timeout.
bool finish_survivors(std::chrono::steady_clock::time_point deadline) {
  auto serve_until = [&](auto done) {
    while (!done()) {
      if (std::chrono::steady_clock::now() > deadline) return false;
      if (!service()) std::this_thread::yield();
    }
    return true;
  };
  if (LCI_RANK != 0) {
    quiet_msg q{rt.respawned.load(), rt.results_dropped.load(), rt.duplicates.load()};
    send_medium(0, tag_quiet, &q, sizeof q, true);
    return serve_until([] { return rt.exit_now.load(); });
  }
  bool ok = serve_until([] {
    std::lock_guard<std::mutex> g(rt.quiet_lock);
    for (int r = 1; r < LCI_NUM_PROCESSES; ++r)
      if (!rt.quiet[static_cast<size_t>(r)] && !LCIX_peer_failed(r)) return false;
    return true;
  });
  send_to_live(tag_exit, nullptr, 0);
  return ok;
}

void usage(const char* prog) {
  std::printf(
      "usage: %s [options]\n"
      "  --max-depth D    tree depth limit (default 12)\n"
      "  --spawn-depth S  nodes above depth S are placed on hash %% nranks (default 6)\n"
      "  --large-every K  about 1 in K nodes carries a 16-32 KiB payload, sent with\n"
      "                   LCI_putla when remote (default 16, 0: never)\n"
      "  --work W         extra hash rounds per node (default 100)\n"
      "  --seed X         tree seed (default 42)\n"
      "  --threads T      TBB worker threads per rank (default 2)\n"
      "  --timeout S      give up after S seconds (default 120)\n"
      "  --kill-rank R    with LCI_PEER_FAILURE=continue (under lcrun --keep-going): rank R\n"
      "                   kills itself with SIGKILL mid-run and the others spawn its tasks\n"
      "                   again; R must not be 0, the root (default -1: nobody)\n"
      "  --kill-after N   ... when it starts its task N+1 (default 100)\n"
      "  --kill-notice B  1: the victim first tells the others, which mark it failed with\n"
      "                   LCIT_fail_peer (LCI_TEST_HOOKS=1); for libfabric, where LCI does\n"
      "                   not detect a dead peer yet (default 0)\n"
      "  --help           this text\n",
      prog);
}

bool parse_args(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--help" || a == "-h") {
      usage(argv[0]);
      std::exit(0);
    }
    if (i + 1 >= argc) {
      std::fprintf(stderr, "amt_tree: %s needs a value\n", a.c_str());
      return false;
    }
    const char* v = argv[++i];
    if (a == "--max-depth") rt.params.max_depth = std::atoi(v);
    else if (a == "--spawn-depth") rt.params.spawn_depth = std::atoi(v);
    else if (a == "--large-every") rt.params.large_every = std::atoi(v);
    else if (a == "--work") rt.params.work = std::atoi(v);
    else if (a == "--seed") rt.params.seed = std::strtoull(v, nullptr, 0);
    else if (a == "--threads") rt.threads = std::atoi(v);
    else if (a == "--timeout") rt.timeout_s = std::atof(v);
    else if (a == "--kill-rank") rt.kill_rank = std::atoi(v);
    else if (a == "--kill-after") rt.kill_after = std::strtoull(v, nullptr, 0);
    else if (a == "--kill-notice") rt.kill_notice = std::atoi(v) != 0;
    else {
      std::fprintf(stderr, "amt_tree: unknown option %s\n", a.c_str());
      return false;
    }
  }
  if (rt.params.max_depth < 0 || rt.params.max_depth > 40 || rt.threads < 1 ||
      rt.threads > 256 || rt.params.work < 0 || rt.params.large_every < 0 ||
      rt.kill_rank == 0 || rt.kill_rank < -1) {
    std::fprintf(stderr, "amt_tree: option out of range\n");
    return false;
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  // Before LCI_initialize, so that --help works without a launcher.
  if (!parse_args(argc, argv)) {
    usage(argv[0]);
    return 2;
  }
  LCI_initialize();
  rt.device = LCI_UR_DEVICE;
  // LCI has parsed it already; we only need to know which mode it is in.
  const char* on_failure = std::getenv("LCI_PEER_FAILURE");
  rt.survive = on_failure && std::strcmp(on_failure, "continue") == 0;
  if (rt.kill_rank >= LCI_NUM_PROCESSES) {
    std::fprintf(stderr, "amt_tree: --kill-rank %d: there are %d ranks\n", rt.kill_rank,
                 LCI_NUM_PROCESSES);
    return 2;
  }
  if (rt.kill_rank > 0 && !rt.survive) {
    if (LCI_RANK == 0)
      std::fprintf(stderr,
                   "amt_tree: --kill-rank has no effect without LCI_PEER_FAILURE=continue\n");
    rt.kill_rank = -1;
  }
  if (rt.survive) {
    if (rt.kill_rank == LCI_RANK) rt.kill_at = rt.kill_after + 1;
    // Looked up, not linked: a test hook of LCI's (tests/common/test_hooks.h).
    if (rt.kill_notice)
      rt.fail_peer = reinterpret_cast<LCI_error_t (*)(int)>(dlsym(RTLD_DEFAULT, "LCIT_fail_peer"));
    rt.quiet.assign(static_cast<size_t>(LCI_NUM_PROCESSES), 0);
    LCIX_on_peer_failure(&on_peer_failure, nullptr);
  }
  LCI_queue_create(rt.device, &rt.arrivals);
  LCI_queue_create(rt.device, &rt.long_done);
  LCI_plist_t plist;
  LCI_plist_create(&plist);
  LCI_plist_set_comp_type(plist, LCI_PORT_COMMAND, LCI_COMPLETION_QUEUE);
  LCI_plist_set_comp_type(plist, LCI_PORT_MESSAGE, LCI_COMPLETION_QUEUE);
  LCI_plist_set_default_comp(plist, rt.arrivals);
  LCI_endpoint_init(&rt.ep, rt.device, plist);
  LCI_plist_free(&plist);

  int exit_code = 0;
  {
    // All T threads are workers (no slot kept for main), so main only waits
    // and every thread that polls is one TBB found idle.
    tbb::global_control parallelism(tbb::global_control::max_allowed_parallelism,
                                    static_cast<size_t>(rt.threads) + 1);
    tbb::task_arena arena(rt.threads, 0);
    tbb::task_group group;
    rt.arena = &arena;
    rt.group = &group;

    LCI_barrier();
    auto t0 = std::chrono::steady_clock::now();
    rt.pollers_alive = 1;
    arena.enqueue(poll_burst);
    // Enqueued, not arena.execute(): main holds no slot, and a task it
    // spawned from a slot of its own could sit there unseen by a lone worker.
    if (LCI_RANK == 0)
      arena.enqueue(
          [p = rt.params] { run_node(p.seed, 0, root_payload(p), parent_ref{-1, -1, 0}); });
    // Bounded wait: a lost message would otherwise hang the job.
    auto deadline = t0 + std::chrono::duration<double>(rt.timeout_s);
    while (!(rt.stopped.load() && rt.pollers_alive.load() == 0)) {
      if (std::chrono::steady_clock::now() > deadline) {
        std::fprintf(stderr, "amt_tree: rank %d: FAIL: no termination after %.0f s\n", LCI_RANK,
                     rt.timeout_s);
        if (rt.survive) print_waiting();
        std::fflush(stderr);
        std::_Exit(3);
      }
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
    arena.execute([&] { group.wait(); });
    if (rt.survive &&
        !finish_survivors(
            std::chrono::time_point_cast<std::chrono::steady_clock::duration>(deadline))) {
      std::fprintf(stderr,
                   "amt_tree: rank %d: FAIL: the survivors did not all stop within %.0f s\n",
                   LCI_RANK, rt.timeout_s);
      std::fflush(stderr);
      std::_Exit(3);
    }
    double secs = std::chrono::duration<double>(rt.t_done - t0).count();

    std::printf("amt_tree: rank %d: %" PRIu64 " tasks run, %" PRIu64 " medium + %" PRIu64
                " long spawns sent (%" PRIu64 " reissued), %" PRIu64 " results sent, %" PRIu64
                " send retries\n",
                LCI_RANK, rt.tasks_run.load(), rt.spawn_medium.load(), rt.spawn_long.load(),
                rt.long_reissued.load(), rt.results_sent.load(), rt.send_retries.load());
    if (rt.survive)
      std::printf("amt_tree: rank %d: %" PRIu64 " tasks spawned again, %" PRIu64
                  " results to failed ranks dropped, %" PRIu64 " duplicate results ignored\n",
                  LCI_RANK, rt.respawned.load(), rt.results_dropped.load(), rt.duplicates.load());
    std::fflush(stdout);
    if (LCI_RANK == 0) {
      tree_sum expect;
      serial_visit(rt.params, rt.params.seed, 0, root_payload(rt.params), expect);
      bool ok = expect.count == rt.total.count && expect.sum == rt.total.sum;
      std::printf("amt_tree: %d ranks x %d threads, depth %d, spawn depth %d: %" PRIu64
                  " tasks in %.3f s = %.0f tasks/s; sum %016" PRIx64 " (serial %" PRIu64
                  " tasks, %016" PRIx64 "): %s\n",
                  LCI_NUM_PROCESSES, rt.threads, rt.params.max_depth, rt.params.spawn_depth,
                  rt.total.count, secs, rt.total.count / std::max(secs, 1e-9), rt.total.sum,
                  expect.count, expect.sum, ok ? "PASS" : "FAIL");
      if (rt.survive) {
        std::string failed;
        for (int r = 1; r < LCI_NUM_PROCESSES; ++r)
          if (LCIX_peer_failed(r)) failed += (failed.empty() ? "" : ",") + std::to_string(r);
        quiet_msg q = rt.quiet_total;
        std::printf("amt_tree: %s%s: result %s, %" PRIu64 " tasks re-spawned on survivors, %" PRIu64
                    " results to failed ranks dropped, %" PRIu64 " duplicate results ignored\n",
                    failed.empty() ? "no rank failed" : "survived the loss of rank(s) ",
                    failed.c_str(), ok ? "PASS" : "FAIL", q.respawned + rt.respawned.load(),
                    q.results_dropped + rt.results_dropped.load(),
                    q.duplicates + rt.duplicates.load());
      }
      std::fflush(stdout);
      exit_code = ok ? 0 : 1;
    }
    rt.arena = nullptr;
    rt.group = nullptr;
  }
  for (join* j : rt.tracker.joins) delete j;
  rt.tracker.joins.clear();
  rt.tracker.entries.clear();
  // Nothing can arrive any more (every message was answered before the stop),
  // but drain anyway so that no buffer outlives the queues. (In survivor
  // mode, once a rank failed, LCI_barrier returns LCI_ERR_FATAL at once.)
  LCI_barrier();
  LCI_request_t req;
  while (LCI_queue_pop(rt.arrivals, &req) == LCI_OK) free_arrival(req);
  LCI_endpoint_free(&rt.ep);
  LCI_queue_free(&rt.arrivals);
  LCI_queue_free(&rt.long_done);
  LCI_finalize();
  return exit_code;
}

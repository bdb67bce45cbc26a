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
 * Run:  lcrun -n 2 ./amt_tree [--max-depth 12] [--spawn-depth 6] [--threads 2]
 * Exits 0 on rank 0 if the distributed result equals the serial one.
 */
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
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

enum msg_tag : LCI_tag_t { tag_spawn = 1, tag_result = 2, tag_stop = 3 };

// Where a finished subtree reports: a join on `rank` (rank -1: the root).
struct parent_ref {
  int32_t rank;
  uint64_t join;
};

struct spawn_header {
  uint64_t id;
  uint64_t parent_join;
  int32_t parent_rank;
  uint32_t depth;
  uint64_t words;
};  // followed by `words` payload words

struct result_msg {
  uint64_t join;
  uint64_t count;
  uint64_t sum;
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

struct runtime {
  tree_params params;
  int threads = 2;
  double timeout_s = 120;

  LCI_device_t device = nullptr;
  LCI_endpoint_t ep = nullptr;
  LCI_comp_t arrivals = nullptr;     // message port: spawns, results, stop
  LCI_comp_t long_done = nullptr;    // command port: our LCI_putla buffers come back

  tbb::task_arena* arena = nullptr;
  tbb::task_group* group = nullptr;

  std::atomic<bool> stopped{false};
  std::atomic<int> pollers_alive{0};
  std::atomic<int64_t> long_in_flight{0};

  // Statistics (per rank).
  std::atomic<uint64_t> tasks_run{0}, spawn_medium{0}, spawn_long{0}, long_reissued{0},
      results_sent{0}, send_retries{0};

  // Filled on rank 0 when the root's join completes.
  tree_sum total;
  std::chrono::steady_clock::time_point t_done;
};

runtime rt;

void run_node(uint64_t id, int depth, const std::vector<uint64_t>& payload, parent_ref parent);
void report(parent_ref parent, uint64_t count, uint64_t sum);

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
  if (req.tag == tag_spawn && length >= sizeof(spawn_header)) {
    spawn_header h;
    std::memcpy(&h, data, sizeof h);
    std::vector<uint64_t> payload(h.words);
    if (sizeof h + h.words * sizeof(uint64_t) == length && h.words > 0)
      std::memcpy(payload.data(), data + sizeof h, h.words * sizeof(uint64_t));
    parent_ref parent{h.parent_rank, h.parent_join};
    rt.group->run([id = h.id, depth = static_cast<int>(h.depth), payload = std::move(payload),
                   parent] { run_node(id, depth, payload, parent); });
  } else if (req.tag == tag_result && length == sizeof(result_msg)) {
    result_msg r;
    std::memcpy(&r, data, sizeof r);
    report(parent_ref{LCI_RANK, r.join}, r.count, r.sum);
  } else if (req.tag == tag_stop) {
    rt.stopped.store(true);
  } else {
    std::fprintf(stderr, "amt_tree: rank %d: unexpected message tag %u length %zu\n", LCI_RANK,
                 static_cast<unsigned>(req.tag), length);
    std::abort();
  }
  // The payload was copied out, so the pool buffer goes back at once: a task
  // that waits to run must not hold one of the buffers senders need.
  if (req.type == LCI_LONG)
    LCI_lbuffer_free(req.data.lbuffer);
  else
    LCI_mbuffer_free(req.data.mbuffer);
}

void send_long(LCI_lbuffer_t buf, int rank);

// Our LCI_putla buffers, back from the target.
void complete_long(const LCI_request_t& req) {
  if (req.flag == LCI_ERR_RETRY) {
    // The target could not allocate; nothing arrived. Issue it again, from a
    // task, because service() must not send.
    rt.long_reissued++;
    LCI_lbuffer_t buf = req.data.lbuffer;
    int rank = req.rank;
    rt.group->run([buf, rank] { send_long(buf, rank); });
    return;
  }
  if (req.flag != LCI_OK) {
    std::fprintf(stderr, "amt_tree: rank %d: LCI_putla failed (flag %d)\n", LCI_RANK, req.flag);
    std::abort();
  }
  LCI_lbuffer_free(req.data.lbuffer);
  rt.long_in_flight--;
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

void send_medium(int rank, LCI_tag_t tag, const void* data, size_t length) {
  LCI_mbuffer_t buf{const_cast<void*>(data), length};
  // Our own memory: LCI copies it, so it is ours again at LCI_OK.
  while (LCI_putma(rt.ep, buf, rank, tag, LCI_DEFAULT_COMP_REMOTE) == LCI_ERR_RETRY) {
    rt.send_retries++;
    service();
  }
}

void send_long(LCI_lbuffer_t buf, int rank) {
  while (LCI_putla(rt.ep, buf, rt.long_done, rank, tag_spawn, LCI_DEFAULT_COMP_REMOTE,
                   nullptr) == LCI_ERR_RETRY) {
    rt.send_retries++;
    service();
  }
}

void spawn_remote(int rank, uint64_t id, int depth, const std::vector<uint64_t>& payload,
                  parent_ref parent) {
  spawn_header h{id, parent.join, parent.rank, static_cast<uint32_t>(depth), payload.size()};
  size_t length = sizeof h + payload.size() * sizeof(uint64_t);
  if (length <= static_cast<size_t>(LCI_MEDIUM_SIZE)) {
    std::vector<char> msg(length);
    std::memcpy(msg.data(), &h, sizeof h);
    if (!payload.empty())
      std::memcpy(msg.data() + sizeof h, payload.data(), payload.size() * sizeof(uint64_t));
    send_medium(rank, tag_spawn, msg.data(), length);
    rt.spawn_medium++;
    return;
  }
  // Too big for an eager message: rendezvous into a buffer the target
  // allocates. The buffer is LCI's until it comes back in long_done.
  LCI_lbuffer_t buf;
  while (LCI_lbuffer_alloc(rt.device, length, &buf) == LCI_ERR_RETRY) service();
  std::memcpy(buf.address, &h, sizeof h);
  std::memcpy(static_cast<char*>(buf.address) + sizeof h, payload.data(),
              payload.size() * sizeof(uint64_t));
  rt.long_in_flight++;
  send_long(buf, rank);
  rt.spawn_long++;
}

void broadcast_stop() {
  for (int r = 0; r < LCI_NUM_PROCESSES; ++r)
    if (r != LCI_RANK) send_medium(r, tag_stop, nullptr, 0);
  rt.stopped.store(true);
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
    result_msg r{parent.join, count, sum};
    int rank = parent.rank;
    rt.group->run([r, rank] {
      send_medium(rank, tag_result, &r, sizeof r);
      rt.results_sent++;
    });
    return;
  }
  join* j = reinterpret_cast<join*>(static_cast<uintptr_t>(parent.join));
  j->count.fetch_add(count);
  j->sum.fetch_add(sum);
  if (j->pending.fetch_sub(1) == 1) {
    parent_ref up = j->parent;
    uint64_t c = j->count.load(), s = j->sum.load();
    delete j;
    report(up, c, s);
  }
}

void run_node(uint64_t id, int depth, const std::vector<uint64_t>& payload, parent_ref parent) {
  rt.tasks_run++;
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
  parent_ref me{LCI_RANK, reinterpret_cast<uintptr_t>(j)};
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
    else {
      std::fprintf(stderr, "amt_tree: unknown option %s\n", a.c_str());
      return false;
    }
  }
  if (rt.params.max_depth < 0 || rt.params.max_depth > 40 || rt.threads < 1 ||
      rt.threads > 256 || rt.params.work < 0 || rt.params.large_every < 0) {
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
      arena.enqueue([p = rt.params] { run_node(p.seed, 0, root_payload(p), parent_ref{-1, 0}); });
    // Bounded wait: a lost message would otherwise hang the job.
    auto deadline = t0 + std::chrono::duration<double>(rt.timeout_s);
    while (!(rt.stopped.load() && rt.pollers_alive.load() == 0)) {
      if (std::chrono::steady_clock::now() > deadline) {
        std::fprintf(stderr, "amt_tree: rank %d: FAIL: no termination after %.0f s\n", LCI_RANK,
                     rt.timeout_s);
        std::fflush(stderr);
        std::_Exit(3);
      }
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
    arena.execute([&] { group.wait(); });
    double secs = std::chrono::duration<double>(rt.t_done - t0).count();

    std::printf("amt_tree: rank %d: %" PRIu64 " tasks run, %" PRIu64 " medium + %" PRIu64
                " long spawns sent (%" PRIu64 " reissued), %" PRIu64 " results sent, %" PRIu64
                " send retries\n",
                LCI_RANK, rt.tasks_run.load(), rt.spawn_medium.load(), rt.spawn_long.load(),
                rt.long_reissued.load(), rt.results_sent.load(), rt.send_retries.load());
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
      std::fflush(stdout);
      exit_code = ok ? 0 : 1;
    }
    rt.arena = nullptr;
    rt.group = nullptr;
  }
  // Nothing can arrive any more (every message was answered before the stop),
  // but drain anyway so that no buffer outlives the queues.
  LCI_barrier();
  LCI_request_t req;
  while (LCI_queue_pop(rt.arrivals, &req) == LCI_OK) {
    if (req.type == LCI_LONG) LCI_lbuffer_free(req.data.lbuffer);
    else LCI_mbuffer_free(req.data.mbuffer);
  }
  LCI_endpoint_free(&rt.ep);
  LCI_queue_free(&rt.arrivals);
  LCI_queue_free(&rt.long_done);
  LCI_finalize();
  return exit_code;
}

// lci.hpp's collectives and completion graphs at 1 to 3 processes.
//
// Collectives: every one checked byte for byte (sizes 0, 8, 1000 and 20000
// bytes, the last by rendezvous; roots 0 and the last rank), blocking and
// with a completion object, back to back; the barrier holds the others
// while rank 0 sleeps; a program's receive for any rank and any tag posted
// across the collectives matches none of their messages.
// Graphs (each rank's own): a diamond's order and edge callbacks, GRAPH_START
// and GRAPH_END edges, graph_test's reset and a second run, a node that
// returns retry, nodes completed by graph_node_mark_complete from another
// thread, graph_add_node_op nodes that send and receive between ranks, a
// graph that signals a completion object and frees itself, and the free
// callbacks of free_comp.
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <thread>
#include <vector>

#include "harness.hpp"
#include "lci.hpp"

using lci_test::deadline;
using lci_test::phase;

namespace {

int g_rank = 0;
int g_n = 1;

const size_t k_sizes[] = {0, 8, 1000, 20000};

// Byte i of the block that `from` gives `to` in case `salt`.
unsigned char pattern(int from, int to, size_t i, int salt) {
  return static_cast<unsigned char>((from * 131 + to * 31 + static_cast<int>(i) * 7 + salt * 17) ^
                                    (i >> 8));
}

void fill(unsigned char* p, size_t size, int from, int to, int salt) {
  for (size_t i = 0; i < size; ++i) p[i] = pattern(from, to, i, salt);
}

// The first byte of [p, p + size) that differs from the pattern, or size.
size_t first_mismatch(const unsigned char* p, size_t size, int from, int to, int salt) {
  for (size_t i = 0; i < size; ++i)
    if (p[i] != pattern(from, to, i, salt)) return i;
  return size;
}

void sum_int64(const void* left, const void* right, void* dst, size_t n) {
  const auto* l = static_cast<const int64_t*>(left);
  const auto* r = static_cast<const int64_t*>(right);
  auto* d = static_cast<int64_t*>(dst);
  for (size_t i = 0; i < n; ++i) d[i] = l[i] + r[i];
}

// Rank r's item i in case `salt`.
int64_t item(int r, size_t i, int salt) {
  return static_cast<int64_t>(r + 1) * 1000003 + static_cast<int64_t>(i) * 7 + salt;
}

int64_t item_sum(size_t i, int salt) {
  int64_t s = 0;
  for (int r = 0; r < g_n; ++r) s += item(r, i, salt);
  return s;
}

void wait_sync(lci::comp_t sync, const char* what) {
  deadline d;
  lci::status_t st;
  while (!lci::sync_test(sync, &st)) {
    lci::progress();
    d.check(what);
  }
  EXPECT(st.is_done(), "%s: the completion object's status is %s", what, st.error.get_str());
}

// ---- collectives --------------------------------------------------------------------

void test_barrier(lci::comp_t sync) {
  phase("barrier");
  for (int round = 0; round < 2; ++round) {
    const bool nonblocking = round == 1;
    if (g_rank == 0) std::this_thread::sleep_for(std::chrono::milliseconds(500));
    const auto t0 = std::chrono::steady_clock::now();
    if (nonblocking) {
      lci::barrier_x().comp(sync)();
      wait_sync(sync, "barrier_x().comp(sync)");
    } else {
      lci::barrier();
    }
    const double waited =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    // Everyone but rank 0 waited for rank 0's sleep.
    if (g_rank != 0)
      EXPECT(waited > 0.25, "barrier (%s) returned after %.3f s, before rank 0 arrived",
             nonblocking ? "comp" : "blocking", waited);
  }
}

void test_broadcast(lci::comp_t sync) {
  for (int nb = 0; nb < 2; ++nb)
    for (int root : {0, g_n - 1})
      for (size_t size : k_sizes) {
        phase("broadcast size %zu root %d %s", size, root, nb ? "comp" : "blocking");
        const int salt = static_cast<int>(size) + root + nb * 5;
        std::vector<unsigned char> buf(size + 1, 0xee);
        if (g_rank == root) fill(buf.data(), size, root, 0, salt);
        if (nb) {
          lci::broadcast_x(buf.data(), size, root).comp(sync)();
          wait_sync(sync, "broadcast_x().comp(sync)");
        } else {
          lci::broadcast(buf.data(), size, root);
        }
        const size_t bad = first_mismatch(buf.data(), size, root, 0, salt);
        EXPECT(bad == size, "broadcast of %zu bytes from %d: byte %zu differs", size, root, bad);
        EXPECT(buf[size] == 0xee, "broadcast of %zu bytes wrote past the buffer", size);
      }
}

void test_reduce() {
  for (int root : {0, g_n - 1})
    for (size_t size : k_sizes) {
      phase("reduce size %zu root %d", size, root);
      const size_t count = size / 8;
      const int salt = static_cast<int>(size) + root * 3;
      std::vector<int64_t> in(count + 1), out(count + 1, -1);
      for (size_t i = 0; i < count; ++i) in[i] = item(g_rank, i, salt);
      // Only the root's recvbuf matters: the others pass none.
      lci::reduce(in.data(), g_rank == root ? out.data() : nullptr, count, sizeof(int64_t),
                  sum_int64, root);
      if (g_rank != root) continue;
      for (size_t i = 0; i < count; ++i)
        if (out[i] != item_sum(i, salt)) {
          EXPECT(out[i] == item_sum(i, salt), "reduce of %zu items to %d: item %zu is %lld",
                 count, root, i, static_cast<long long>(out[i]));
          break;
        }
      EXPECT(out[count] == -1, "reduce of %zu items wrote past recvbuf", count);
    }
}

void test_allreduce(lci::comp_t sync) {
  for (int nb = 0; nb < 2; ++nb)
    for (size_t size : k_sizes) {
      phase("allreduce size %zu %s", size, nb ? "comp" : "blocking");
      const size_t count = size / 8;
      const int salt = static_cast<int>(size) + 11 + nb;
      std::vector<int64_t> in(count + 1), out(count + 1, -1);
      for (size_t i = 0; i < count; ++i) in[i] = item(g_rank, i, salt);
      if (nb) {
        lci::allreduce_x(in.data(), out.data(), count, sizeof(int64_t), sum_int64).comp(sync)();
        wait_sync(sync, "allreduce_x().comp(sync)");
      } else {
        lci::allreduce(in.data(), out.data(), count, sizeof(int64_t), sum_int64);
      }
      for (size_t i = 0; i < count; ++i)
        if (out[i] != item_sum(i, salt)) {
          EXPECT(out[i] == item_sum(i, salt), "allreduce of %zu items: item %zu is %lld", count,
                 i, static_cast<long long>(out[i]));
          break;
        }
      EXPECT(out[count] == -1, "allreduce of %zu items wrote past recvbuf", count);
      for (size_t i = 0; i < count; ++i)
        if (in[i] != item(g_rank, i, salt)) {
          EXPECT(false, "allreduce changed sendbuf item %zu", i);
          break;
        }
    }
  // In place: sendbuf is recvbuf.
  phase("allreduce in place");
  std::vector<int64_t> v(100);
  for (size_t i = 0; i < v.size(); ++i) v[i] = item(g_rank, i, 99);
  lci::allreduce(v.data(), v.data(), v.size(), sizeof(int64_t), sum_int64);
  for (size_t i = 0; i < v.size(); ++i)
    if (v[i] != item_sum(i, 99)) {
      EXPECT(v[i] == item_sum(i, 99), "allreduce in place: item %zu is %lld", i,
             static_cast<long long>(v[i]));
      break;
    }
}

void test_reduce_scatter(lci::comp_t sync) {
  for (int nb = 0; nb < 2; ++nb)
    for (size_t size : k_sizes) {
      phase("reduce_scatter size %zu %s", size, nb ? "comp" : "blocking");
      const size_t count = size / 8;  // items per rank
      const int salt = static_cast<int>(size) + 21 + nb;
      std::vector<int64_t> in(count * static_cast<size_t>(g_n) + 1), out(count + 1, -1);
      // Item i of block j from rank r: item(r, j * count + i).
      for (size_t k = 0; k < count * static_cast<size_t>(g_n); ++k) in[k] = item(g_rank, k, salt);
      if (nb) {
        lci::reduce_scatter_x(in.data(), out.data(), count, sizeof(int64_t), sum_int64)
            .comp(sync)();
        wait_sync(sync, "reduce_scatter_x().comp(sync)");
      } else {
        lci::reduce_scatter(in.data(), out.data(), count, sizeof(int64_t), sum_int64);
      }
      for (size_t i = 0; i < count; ++i) {
        const int64_t want = item_sum(static_cast<size_t>(g_rank) * count + i, salt);
        if (out[i] != want) {
          EXPECT(out[i] == want, "reduce_scatter of %zu items: item %zu is %lld, not %lld", count,
                 i, static_cast<long long>(out[i]), static_cast<long long>(want));
          break;
        }
      }
      EXPECT(out[count] == -1, "reduce_scatter of %zu items wrote past recvbuf", count);
    }
}

void test_allgather() {
  for (size_t size : k_sizes) {
    phase("allgather size %zu", size);
    const int salt = static_cast<int>(size) + 31;
    std::vector<unsigned char> in(size + 1), out(size * static_cast<size_t>(g_n) + 1, 0xee);
    fill(in.data(), size, g_rank, 0, salt);
    lci::allgather(in.data(), out.data(), size);
    for (int r = 0; r < g_n; ++r) {
      const size_t bad = first_mismatch(out.data() + size * static_cast<size_t>(r), size, r, 0, salt);
      EXPECT(bad == size, "allgather of %zu bytes: rank %d's block differs at byte %zu", size, r,
             bad);
    }
    EXPECT(out[size * static_cast<size_t>(g_n)] == 0xee, "allgather wrote past recvbuf");
  }
}

void test_alltoall() {
  for (size_t size : k_sizes) {
    phase("alltoall size %zu", size);
    const int salt = static_cast<int>(size) + 41;
    const size_t total = size * static_cast<size_t>(g_n);
    std::vector<unsigned char> in(total + 1), out(total + 1, 0xee);
    for (int to = 0; to < g_n; ++to)
      fill(in.data() + size * static_cast<size_t>(to), size, g_rank, to, salt);
    lci::alltoall(in.data(), out.data(), size);
    for (int from = 0; from < g_n; ++from) {
      const size_t bad =
          first_mismatch(out.data() + size * static_cast<size_t>(from), size, from, g_rank, salt);
      EXPECT(bad == size, "alltoall of %zu bytes: the block from rank %d differs at byte %zu",
             size, from, bad);
    }
    EXPECT(out[total] == 0xee, "alltoall wrote past recvbuf");
  }
}

// The collectives' messages go to their own endpoint: on a new device,
// whose first collectives use tags 0 (broadcast) and 64 and 65 (allreduce),
// a program's receives with those tags from every peer on the device's
// default endpoint stay unmatched until the program's own sends.
void test_isolation() {
  phase("isolation");
  lci::device_t dev = lci::alloc_device();
  lci::comp_t cq = lci::alloc_cq();
  const lci::tag_t tags[] = {0, 64, 65};
  const size_t ntags = sizeof(tags) / sizeof(tags[0]);
  std::vector<uint64_t> got(static_cast<size_t>(g_n) * ntags, 0);
  for (int r = 0; r < g_n; ++r) {
    if (r == g_rank) continue;
    for (size_t t = 0; t < ntags; ++t) {
      lci::status_t st = lci::post_recv_x(r, &got[static_cast<size_t>(r) * ntags + t],
                                          sizeof(uint64_t), tags[t], cq)
                             .device(dev)();
      EXPECT(st.is_posted(), "post_recv from %d tag %llu returned %s before any send", r,
             static_cast<unsigned long long>(tags[t]), st.error.get_str());
    }
  }
  uint64_t b = g_rank == 0 ? 0x4242424242ull : 0;
  lci::broadcast_x(&b, sizeof(b), 0).device(dev)();
  EXPECT(b == 0x4242424242ull, "broadcast on a second device gave %llx",
         static_cast<unsigned long long>(b));
  int64_t x = g_rank + 1, y = 0;
  lci::allreduce_x(&x, &y, 1, sizeof(int64_t), sum_int64).device(dev)();
  EXPECT(y == static_cast<int64_t>(g_n) * (g_n + 1) / 2, "allreduce on a second device gave %lld",
         static_cast<long long>(y));
  lci::barrier_x().device(dev)();
  for (int i = 0; i < 100; ++i) lci::progress_x().device(dev)();
  lci::status_t early = lci::cq_pop(cq);
  EXPECT(early.is_retry(),
         "a program's receive matched a collective's message (tag %llu from rank %d)",
         static_cast<unsigned long long>(early.tag), early.rank);
  // Now the program's own messages, one per peer and tag, once every rank
  // has looked.
  lci::barrier_x().device(dev)();
  for (int r = 0; r < g_n; ++r) {
    if (r == g_rank) continue;
    for (size_t t = 0; t < ntags; ++t) {
      uint64_t v = (static_cast<uint64_t>(g_rank) << 32) | (static_cast<uint64_t>(r) << 8) | t;
      lci::status_t s =
          lci::post_send_x(r, &v, sizeof(v), tags[t], lci::COMP_NULL).device(dev)();
      EXPECT(s.is_done(), "post_send with COMP_NULL returned %s", s.error.get_str());
    }
  }
  const size_t expected = static_cast<size_t>(g_n - 1) * ntags;
  size_t n = 0;
  deadline d;
  while (n < expected) {
    if (lci::cq_pop(cq).is_done())
      ++n;
    else
      lci::progress_x().device(dev)();
    d.check("the program's own messages");
  }
  for (int r = 0; r < g_n; ++r) {
    if (r == g_rank) continue;
    for (size_t t = 0; t < ntags; ++t) {
      const uint64_t want = (static_cast<uint64_t>(r) << 32) |
                            (static_cast<uint64_t>(g_rank) << 8) | t;
      const uint64_t v = got[static_cast<size_t>(r) * ntags + t];
      EXPECT(v == want, "the program's receive from %d tag %llu holds %llx, not %llx", r,
             static_cast<unsigned long long>(tags[t]), static_cast<unsigned long long>(v),
             static_cast<unsigned long long>(want));
    }
  }
  lci::barrier_x().device(dev)();
  lci::free_comp(&cq);
  lci::free_device(&dev);
}

// ---- graphs ------------------------------------------------------------------------------

struct recorder {
  std::mutex m;
  std::vector<int> order;
  void add(int v) {
    std::lock_guard<std::mutex> g(m);
    order.push_back(v);
  }
};

struct node_value {
  recorder* rec;
  int id;
};

lci::status_t record_fn(void* value) {
  auto* v = static_cast<node_value*>(value);
  v->rec->add(v->id);
  return lci::status_t(lci::errorcode_t::done);
}

std::atomic<int> g_edges{0};
std::atomic<int> g_edge_errors{0};
void edge_fn(lci::status_t status, void* src, void* dst) {
  g_edges.fetch_add(1);
  // Diamond edges lead from a lower id to a higher one; GRAPH_START's have
  // no source and GRAPH_END's no destination.
  const int s = src ? static_cast<node_value*>(src)->id : -1;
  const int d = dst ? static_cast<node_value*>(dst)->id : 100;
  if (!status.is_done() || s >= d) g_edge_errors.fetch_add(1);
}

std::atomic<int> g_freed{0};
void free_fn(void* value) {
  g_freed.fetch_add(1);
  (void)value;
}

lci::status_t wait_graph(lci::comp_t g, const char* what) {
  deadline d;
  lci::status_t s;
  while (!(s = lci::graph_test(g)).is_done()) {
    lci::progress();
    d.check(what);
  }
  return s;
}

int position(const std::vector<int>& order, int id) {
  for (size_t i = 0; i < order.size(); ++i)
    if (order[i] == id) return static_cast<int>(i);
  return -1;
}

void test_graph_diamond() {
  phase("graph diamond");
  recorder rec;
  node_value va{&rec, 0}, vb{&rec, 1}, vc{&rec, 2}, vd{&rec, 3};
  int ctx = 0;
  lci::comp_t g = lci::alloc_graph_x().user_context(&ctx)();
  EXPECT(g.get_attr_comp_type() == lci::attr_comp_type_t::graph, "alloc_graph's comp_type");
  lci::graph_node_t a = lci::graph_add_node_x(g, record_fn).value(&va).free_cb(free_fn)();
  lci::graph_node_t b = lci::graph_add_node_x(g, record_fn).value(&vb).free_cb(free_fn)();
  lci::graph_node_t c = lci::graph_add_node_x(g, record_fn).value(&vc).free_cb(free_fn)();
  lci::graph_node_t d = lci::graph_add_node_x(g, record_fn).value(&vd).free_cb(free_fn)();
  lci::graph_add_edge_x(g, lci::GRAPH_START, a).fn(edge_fn)();
  lci::graph_add_edge_x(g, a, b).fn(edge_fn)();
  lci::graph_add_edge_x(g, a, c).fn(edge_fn)();
  lci::graph_add_edge_x(g, b, d).fn(edge_fn)();
  lci::graph_add_edge_x(g, c, d).fn(edge_fn)();
  lci::graph_add_edge_x(g, d, lci::GRAPH_END).fn(edge_fn)();
  EXPECT(lci::graph_test(g).is_retry(), "graph_test before graph_start reported done");
  for (int run = 0; run < 3; ++run) {
    rec.order.clear();
    g_edges = 0;
    g_edge_errors = 0;
    lci::graph_start(g);
    lci::status_t s = wait_graph(g, "the diamond");
    EXPECT(s.user_context == &ctx, "graph_test's status has user_context %p, not %p",
           s.user_context, static_cast<void*>(&ctx));
    EXPECT(rec.order.size() == 4, "run %d: %zu nodes ran, not 4", run, rec.order.size());
    EXPECT(position(rec.order, 0) == 0 && position(rec.order, 3) == 3 &&
               position(rec.order, 1) > 0 && position(rec.order, 2) > 0,
           "run %d: the diamond ran out of order", run);
    EXPECT(g_edges == 6 && g_edge_errors == 0, "run %d: %d edge callbacks, %d wrong", run,
           g_edges.load(), g_edge_errors.load());
    // Reset by the successful test: not done again until started again.
    EXPECT(lci::graph_test(g).is_retry(), "run %d: graph_test did not reset the graph", run);
  }
  g_freed = 0;
  lci::free_comp(&g);
  EXPECT(g_freed == 4, "free_comp ran %d free callbacks, not 4", g_freed.load());
}

// A node whose fn returns retry twice, then done; the rest wait for it.
std::atomic<int> g_retry_calls{0};
lci::status_t retry_twice(void*) {
  return g_retry_calls.fetch_add(1) < 2 ? lci::status_t(lci::errorcode_t::retry)
                                        : lci::status_t(lci::errorcode_t::done);
}

void test_graph_retry() {
  phase("graph retry");
  recorder rec;
  node_value after{&rec, 5};
  lci::comp_t g = lci::alloc_graph();
  lci::graph_node_t r = lci::graph_add_node(g, retry_twice);
  lci::graph_node_t n = lci::graph_add_node_x(g, record_fn).value(&after)();
  lci::graph_add_edge(g, r, n);
  g_retry_calls = 0;
  lci::graph_start(g);
  EXPECT(rec.order.empty(), "a node ran before its predecessor returned done");
  wait_graph(g, "a retried node");
  EXPECT(g_retry_calls == 3 && rec.order.size() == 1, "retry node ran %d times, successor %zu",
         g_retry_calls.load(), rec.order.size());
  lci::free_comp(&g);

  // With a completion object nobody tests the graph: progress reruns it.
  lci::comp_t sync = lci::alloc_sync();
  g = lci::alloc_graph_x().comp(sync)();
  lci::graph_add_node(g, retry_twice);
  g_retry_calls = 0;
  lci::graph_start(g);
  wait_sync(sync, "a graph with a retried node, by progress");
  EXPECT(g_retry_calls == 3, "retry node ran %d times by progress", g_retry_calls.load());
  lci::free_comp(&sync);
}

// Nodes that return posted, completed by another thread.
std::atomic<int> g_posted_started{0};
lci::status_t posted_fn(void*) {
  g_posted_started.fetch_add(1);
  return lci::status_t(lci::errorcode_t::posted);
}

void test_graph_mark_complete() {
  phase("graph mark complete");
  constexpr int k = 200;
  lci::comp_t g = lci::alloc_graph();
  std::vector<lci::graph_node_t> nodes;
  for (int i = 0; i < k; ++i) nodes.push_back(lci::graph_add_node(g, posted_fn));
  recorder rec;
  node_value last{&rec, 9};
  lci::graph_node_t tail = lci::graph_add_node_x(g, record_fn).value(&last)();
  for (lci::graph_node_t n : nodes) lci::graph_add_edge(g, n, tail);
  for (int run = 0; run < 2; ++run) {
    g_posted_started = 0;
    rec.order.clear();
    lci::graph_start(g);
    EXPECT(g_posted_started == k, "%d posted nodes started, not %d", g_posted_started.load(), k);
    EXPECT(lci::graph_test(g).is_retry(), "the graph completed before its posted nodes");
    // Two threads complete half each; the graph may complete in either.
    std::thread t([&] {
      for (int i = 0; i < k; i += 2) lci::graph_node_mark_complete(nodes[static_cast<size_t>(i)]);
    });
    for (int i = 1; i < k; i += 2) {
      lci::status_t s(lci::errorcode_t::done);
      lci::graph_node_mark_complete_x(nodes[static_cast<size_t>(i)]).status(s)();
    }
    t.join();
    wait_graph(g, "posted nodes completed by two threads");
    EXPECT(rec.order.size() == 1, "run %d: the tail ran %zu times", run, rec.order.size());
  }
  lci::free_comp(&g);
}

// A graph given a completion object signals it and frees itself.
void test_graph_self_free() {
  phase("graph self free");
  recorder rec;
  node_value v1{&rec, 1}, v2{&rec, 2};
  lci::comp_t sync = lci::alloc_sync();
  int ctx = 0;
  lci::comp_t g = lci::alloc_graph_x().comp(sync).user_context(&ctx)();
  lci::graph_node_t n1 = lci::graph_add_node_x(g, record_fn).value(&v1).free_cb(free_fn)();
  lci::graph_node_t n2 = lci::graph_add_node_x(g, record_fn).value(&v2).free_cb(free_fn)();
  lci::graph_add_node_x(g, lci::GRAPH_NODE_DUMMY_CB).free_cb(free_fn)();
  lci::graph_add_edge(g, n1, n2);
  g_freed = 0;
  lci::graph_start(g);
  lci::status_t st;
  lci::sync_wait(sync, &st);
  EXPECT(st.user_context == &ctx, "the graph's completion has user_context %p", st.user_context);
  EXPECT(g_freed == 3, "the graph freed itself with %d free callbacks, not 3", g_freed.load());
  EXPECT(rec.order.size() == 2 && rec.order[0] == 1, "self-freeing graph ran %zu nodes",
         rec.order.size());
  lci::free_comp(&sync);
}

// graph_add_node_op: rank 0 sends to rank 1 (eager and rendezvous), rank 1
// receives, each through a graph; a node after the receive checks the data.
struct recv_check {
  std::vector<unsigned char>* buf;
  size_t size;
  int salt;
  bool ok = false;
};

lci::status_t check_recv(void* value) {
  auto* c = static_cast<recv_check*>(value);
  c->ok = first_mismatch(c->buf->data(), c->size, 0, 1, c->salt) == c->size;
  return lci::status_t(lci::errorcode_t::done);
}

void test_graph_ops() {
  phase("graph ops");
  if (g_n < 2) return;
  for (size_t size : {size_t(8), size_t(20000)}) {
    for (int run = 0; run < 2; ++run) {
      const int salt = static_cast<int>(size) + run;
      const lci::tag_t tag = 200 + static_cast<lci::tag_t>(run);
      std::vector<unsigned char> buf(size, 0);
      lci::comp_t g = lci::alloc_graph();
      recv_check check{&buf, size, salt};
      if (g_rank == 0) {
        fill(buf.data(), size, 0, 1, salt);
        lci::graph_add_node_op(g, lci::post_send_x(1, buf.data(), size, tag, g));
      } else if (g_rank == 1) {
        lci::graph_node_t r = lci::graph_add_node_op(g, lci::post_recv_x(0, buf.data(), size, tag, g));
        lci::graph_node_t c = lci::graph_add_node_x(g, check_recv).value(&check)();
        lci::graph_add_edge(g, r, c);
      }
      lci::graph_start(g);
      wait_graph(g, "a graph of post_send_x/post_recv_x");
      if (g_rank == 1) EXPECT(check.ok, "graph receive of %zu bytes: data differs", size);
      lci::free_comp(&g);  // frees the copied operation objects
      lci::barrier();
    }
  }
}

}  // namespace

int main() {
  lci::g_runtime_init();
  g_rank = lci::get_rank_me();
  g_n = lci::get_rank_n();
  lci_test::clean_up_shm_on_failure();
  lci_test::start_watchdog(100);
  lci::comp_t sync = lci::alloc_sync();

  // Twice: consecutive collectives of every kind, back to back.
  for (int round = 0; round < 2; ++round) {
    test_barrier(sync);
    test_broadcast(sync);
    test_reduce();
    test_allreduce(sync);
    test_reduce_scatter(sync);
    test_allgather();
    test_alltoall();
  }
  test_isolation();

  test_graph_diamond();
  test_graph_retry();
  test_graph_mark_complete();
  test_graph_self_free();
  test_graph_ops();

  phase("finalize");
  lci::barrier();
  lci::free_comp(&sync);
  lci::g_runtime_fina();
  const long failures = lci_test::g_failures.load();
  if (failures) {
    fprintf(stderr, "rank %d: lci2_coll FAILED: %ld of %ld checks\n", g_rank, failures,
            lci_test::g_checks.load());
    return 1;
  }
  printf("rank %d: lci2_coll passed: %ld checks\n", g_rank, lci_test::g_checks.load());
  return 0;
}

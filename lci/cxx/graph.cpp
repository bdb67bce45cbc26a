// The LCI 2 interface: completion graphs (alloc_graph, graph_add_node,
// graph_add_edge, graph_node_mark_complete, graph_start, graph_test).
//
// A graph is a completion object whose nodes run when all their
// predecessors completed. A node's fn returns done (the node completed),
// posted (it completes when the graph is signalled with the node as the
// status's user_context, or graph_node_mark_complete is called) or retry (it
// runs again from graph_test or from the progress of any device).
//
// Invariants and threads:
//  - nodes and edges are added before graph_start and not while the graph
//    runs: `nodes_`, each node's `out` and `npreds` are then read-only;
//  - per run, node->pending counts the predecessors not yet completed (set
//    by graph_start); the thread whose decrement takes it to zero runs the
//    node. `ncompleted_` counts completed nodes; the thread that completes
//    the last one completes the graph, after every edge callback ran;
//  - completions may come from any thread (progress threads): the counters
//    are atomic (acq_rel, so that what a node's fn wrote is visible to its
//    successors), the retry list has its own lock;
//  - lifetime: `refs_` is 1 for the owner (free_comp, or the graph itself
//    when it was given a completion object) plus one per entry in the
//    registry of graphs with retried nodes, so that progress may run a
//    graph's retries while another thread frees it. The last reference
//    deletes the graph, which runs the nodes' free callbacks.
//  - a thread that completes the graph touches it no more afterwards (a
//    graph with a completion object frees itself then).
#include <atomic>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "lci.hpp"
#include "lci/comp/callback.hpp"
#include "lci/cxx/impl.hpp"
#include "lci/util/log.hpp"
#include "lci/util/spin.hpp"

namespace lci {

namespace {

class graph_impl;

struct graph_node;

// An edge: `dst` nullptr is GRAPH_END.
struct graph_edge {
  graph_node* dst;
  graph_edge_run_cb_t fn;
};

struct graph_node {
  graph_impl* graph;
  graph_node_run_cb_t fn;  // nullptr: GRAPH_NODE_DUMMY_CB, done at once
  void* value;
  graph_node_free_cb_t free_cb;
  std::vector<graph_edge> out;
  int npreds = 0;  // GRAPH_START counts as one
  std::atomic<int> pending{0};
};

// The nodes one thread is about to run: a few inline, more on the heap, so
// that a completion making one or two nodes ready allocates nothing.
class ready_stack {
 public:
  void push(graph_node* n) {
    if (size_ < inline_capacity)
      inline_[size_++] = n;
    else
      more_.push_back(n);
  }
  bool empty() const { return size_ == 0 && more_.empty(); }
  graph_node* pop() {
    if (!more_.empty()) {
      graph_node* n = more_.back();
      more_.pop_back();
      return n;
    }
    return inline_[--size_];
  }

 private:
  static constexpr size_t inline_capacity = 8;
  graph_node* inline_[inline_capacity];
  size_t size_ = 0;
  std::vector<graph_node*> more_;
};

// Graphs with nodes to run again (a fn returned retry), each entry holding
// a reference; progress_device runs them while `g_graph_retries` is not 0.
spin_lock g_retry_lock;
std::vector<graph_impl*> g_retry_graphs;

comp_attr_t graph_attr(const char* name, void* user_context) {
  comp_attr_t a{};
  a.comp_type = attr_comp_type_t::graph;
  a.sync_threshold = 1;
  a.zero_copy_am = false;
  a.cq_type = attr_cq_type_t::lcrq;
  a.cq_default_length = 65536;
  a.name = name ? name : DEFAULT_NAME;
  a.user_context = user_context;
  return a;
}

class graph_impl final : public comp_impl_t {
 public:
  graph_impl(const attr_t& a, comp_t done_comp)
      : comp_impl_t(a, library_made{}), done_comp_(done_comp), cb_(&run_signal, this) {
    core_ = static_cast<comp_base*>(&cb_);
  }

  ~graph_impl() override {
    core_ = nullptr;
    for (auto& n : nodes_)
      if (n->free_cb) n->free_cb(n->value);
  }

  // A posted node's completion: the status names the node.
  void signal(status_t s) override {
    auto* n = static_cast<graph_node*>(s.user_context);
    if (__builtin_expect(n == nullptr || n->graph != this, 0))
      fatal("lci graph: signalled with user_context %p, which is not a node of this graph "
            "(post a graph node's operation with .user_context(node), as graph_add_node_op "
            "does)",
            s.user_context);
    complete(n, s);
  }

  graph_node* add_node(graph_node_run_cb_t fn, void* value, graph_node_free_cb_t free_cb) {
    std::unique_ptr<graph_node> n(new graph_node);
    n->graph = this;
    n->fn = fn;
    n->value = value;
    n->free_cb = free_cb;
    nodes_.push_back(std::move(n));
    return nodes_.back().get();
  }

  void add_edge(graph_node_t src, graph_node_t dst, graph_edge_run_cb_t fn) {
    if (src == GRAPH_END || dst == GRAPH_START)
      throw std::runtime_error(
          "lci::graph_add_edge: an edge cannot leave GRAPH_END or enter GRAPH_START");
    graph_node* d = dst == GRAPH_END ? nullptr : node_of(dst, "graph_add_edge");
    if (d) ++d->npreds;
    if (src == GRAPH_START)
      start_edges_.push_back({d, fn});
    else
      node_of(src, "graph_add_edge")->out.push_back({d, fn});
  }

  void start() {
    complete_.store(false, std::memory_order_relaxed);
    ncompleted_.store(0, std::memory_order_relaxed);
    for (auto& n : nodes_) n->pending.store(n->npreds, std::memory_order_relaxed);
    if (nodes_.empty()) {
      // GRAPH_START's edges can only lead to GRAPH_END.
      for (const graph_edge& e : start_edges_)
        if (e.fn) e.fn(status_t(errorcode_t::done), nullptr, nullptr);
      finish_graph();
      return;
    }
    // Collected first: once the last of them runs, the graph may be complete
    // (and gone, when it frees itself).
    ready_stack ready;
    for (const graph_edge& e : start_edges_) {
      if (e.fn) e.fn(status_t(errorcode_t::done), nullptr, e.dst ? e.dst->value : nullptr);
      if (e.dst && e.dst->pending.fetch_sub(1, std::memory_order_acq_rel) == 1) ready.push(e.dst);
    }
    for (auto& n : nodes_)
      if (n->npreds == 0) ready.push(n.get());
    run(ready);
  }

  status_t test() {
    if (!complete_.load(std::memory_order_acquire)) {
      run_retries();
      if (!complete_.load(std::memory_order_acquire)) return status_t(errorcode_t::retry);
    }
    // Reset: graph_start may run the graph again.
    complete_.store(false, std::memory_order_relaxed);
    return status_t(attr.user_context);
  }

  void complete(graph_node* n, status_t s) {
    ready_stack ready;
    finish_node(n, s, &ready);
    run(ready);
  }

  // Runs the nodes whose fn returned retry again. True if there were any.
  bool run_retries() {
    ready_stack again;
    retry_lock_.lock();
    const bool any = !retry_.empty();
    for (graph_node* n : retry_) again.push(n);
    retry_.clear();
    retry_lock_.unlock();
    if (any) run(again);
    return any;
  }

  void pin() { refs_.fetch_add(1, std::memory_order_relaxed); }
  // acq_rel: the deleting thread sees every other holder's last use.
  void release() {
    if (refs_.fetch_sub(1, std::memory_order_acq_rel) == 1) delete this;
  }

  static graph_node* node_of(graph_node_t h, const char* call) {
    if (h == nullptr || h == GRAPH_START || h == GRAPH_END)
      throw std::runtime_error(std::string("lci::") + call + ": not a node of the graph");
    return static_cast<graph_node*>(h);
  }

 private:
  static void run_signal(void* self, const LCI_request_t& r) {
    static_cast<graph_impl*>(self)->signal(to_status(r, false));
  }

  // Runs the ready nodes, and those their completions make ready.
  void run(ready_stack& ready) {
    while (!ready.empty()) {
      graph_node* n = ready.pop();
      const status_t s = n->fn ? n->fn(n->value) : status_t(errorcode_t::done);
      if (s.is_posted()) continue;  // completed by the graph's signal, maybe already
      if (s.is_retry()) {
        defer(n);
        continue;
      }
      finish_node(n, s, &ready);
    }
  }

  // n completed with s: its edges fire, then it counts as complete.
  void finish_node(graph_node* n, const status_t& s, ready_stack* ready) {
    for (const graph_edge& e : n->out) {
      if (e.fn) e.fn(s, n->value, e.dst ? e.dst->value : nullptr);
      if (e.dst && e.dst->pending.fetch_sub(1, std::memory_order_acq_rel) == 1) ready->push(e.dst);
    }
    if (ncompleted_.fetch_add(1, std::memory_order_acq_rel) + 1 == nodes_.size()) finish_graph();
  }

  // Every node completed: the graph's completion object is signalled (after
  // the graph freed itself), or graph_test will report done.
  void finish_graph() {
    if (done_comp_.is_empty()) {
      complete_.store(true, std::memory_order_release);
      return;
    }
    const comp_t c = done_comp_;
    const status_t s(attr.user_context);
    release();
    detail::comp_signal(c, s);
  }

  void defer(graph_node* n) {
    retry_lock_.lock();
    retry_.push_back(n);
    retry_lock_.unlock();
    pin();
    g_retry_lock.lock();
    g_retry_graphs.push_back(this);
    g_graph_retries.store(g_retry_graphs.size(), std::memory_order_release);
    g_progress_slow.fetch_add(1, std::memory_order_release);
    g_retry_lock.unlock();
  }

  comp_t done_comp_;
  comp_callback cb_;
  std::vector<std::unique_ptr<graph_node>> nodes_;
  std::vector<graph_edge> start_edges_;  // GRAPH_START's edges
  alignas(64) std::atomic<size_t> ncompleted_{0};
  std::atomic<bool> complete_{false};
  std::atomic<int> refs_{1};
  spin_lock retry_lock_;
  std::vector<graph_node*> retry_;
};

graph_impl* graph_of(comp_t c, const char* call) {
  auto* g = dynamic_cast<graph_impl*>(c.is_empty() ? nullptr : c.p_impl);
  if (!g)
    throw std::runtime_error(std::string("lci::") + call + ": the completion object is not a graph");
  return g;
}

}  // namespace

std::atomic<size_t> g_graph_retries{0};

bool progress_graphs() {
  if (!g_retry_lock.try_lock()) return false;
  std::vector<graph_impl*> graphs;
  graphs.swap(g_retry_graphs);
  g_graph_retries.store(0, std::memory_order_relaxed);
  g_progress_slow.fetch_sub(static_cast<long>(graphs.size()), std::memory_order_release);
  g_retry_lock.unlock();
  bool did = false;
  for (graph_impl* g : graphs) {
    did = g->run_retries() || did;
    g->release();
  }
  return did;
}

bool release_graph(comp_impl_t* c) {
  auto* g = dynamic_cast<graph_impl*>(c);
  if (!g) return false;
  g->release();
  return true;
}

namespace detail {

comp_t alloc_graph(comp_t comp, const char* name, void* user_context) {
  return comp_t(static_cast<void*>(
      static_cast<comp_impl_t*>(new graph_impl(graph_attr(name, user_context), comp))));
}

graph_node_t graph_add_node(comp_t comp, graph_node_run_cb_t fn, void* value,
                            graph_node_free_cb_t free_cb) {
  return graph_of(comp, "graph_add_node")->add_node(fn, value, free_cb);
}

void graph_add_edge(comp_t comp, graph_node_t src, graph_node_t dst, graph_edge_run_cb_t fn) {
  graph_of(comp, "graph_add_edge")->add_edge(src, dst, fn);
}

// The default status (retry_init, "not set") counts as done.
void graph_node_mark_complete(graph_node_t node, status_t status) {
  graph_node* n = graph_impl::node_of(node, "graph_node_mark_complete");
  if (status.is_retry() || status.is_posted()) status.error = errorcode_t::done;
  n->graph->complete(n, status);
}

void graph_start(comp_t comp) { graph_of(comp, "graph_start")->start(); }

status_t graph_test(comp_t comp) { return graph_of(comp, "graph_test")->test(); }

}  // namespace detail

}  // namespace lci

/*
 * bfs_lci.cpp - distributed level-synchronous breadth-first search on a
 * Kronecker (R-MAT, Graph500 A=0.57 B=C=0.19) graph over LCI.
 *
 * Vertex v lives on rank v % nranks. Each level every rank expands its
 * frontier; a neighbour owned elsewhere becomes a (vertex, parent) pair in
 * a per-destination LCI medium buffer (LCI_mbuffer_alloc), which goes out
 * with LCI_putmna when full and at the end of the level. The pool buffer
 * lands in the target's default completion queue, no receive posted.
 *
 * A full buffer that the transport refuses (LCI_ERR_RETRY: the target's
 * inbound queue is full because it has not polled yet) is kept in a
 * per-destination list and the expansion goes on; the list is retried,
 * in order, whenever another buffer fills, and drained at the end of the
 * level. Spinning on the refused send instead ties each rank's expansion
 * to the pace at which its peer polls, and on shared cores that is the
 * time the peer is not scheduled. The list is bounded (a quarter of the
 * packet pool, LCI_SERVER_NUM_PKTS): beyond that the send waits, polling,
 * as before, so the pool always has packets left for receives. Filling a
 * buffer also polls once, so that a rank drains what its peers sent while
 * it expands.
 *
 * Level end: each rank sends every other rank one short put (LCI_puts)
 * saying how many data messages it sent it this level and how big its own
 * frontier was. A rank has finished the level when it has all nranks-1 of
 * those and as many data messages as they announced; the frontier sizes
 * summed tell every rank, identically, whether the search is over (a level
 * whose frontiers are all empty). The same exchange, with no data, is the
 * all-reduce used for edge counts and the validation verdict.
 *
 * A fast peer may already be in the next level and send its data before
 * this rank finished the current one; messages carry the level's parity in
 * their tag, and early ones are kept until their level starts. No message
 * can be two levels ahead, because a peer needs this rank's level-end put
 * to leave the current level.
 *
 * Validation (default on): every rank also builds the whole graph and runs
 * a serial BFS, then checks its own vertices: same level as the serial BFS,
 * the parent is a neighbour, and the parent's level is one less.
 *
 * Run:  lcrun -n 2 ./bfs_lci [--scale 12] [--roots 4] [--no-check]
 * Exits 0 on every rank if every BFS tree validated.
 */
#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <vector>

#include "graph_gen.hpp"
#include "lci.h"

namespace {

constexpr uint32_t no_parent = UINT32_MAX;

enum msg_kind : LCI_tag_t { kind_data = 0, kind_level_end = 1 };
LCI_tag_t make_tag(msg_kind kind, uint64_t round) {
  return static_cast<LCI_tag_t>(kind) | static_cast<LCI_tag_t>((round & 1) << 1);
}

struct level_end_msg {
  uint64_t data_messages;  // data messages the sender sent to the receiver
  uint64_t value;          // summed over all ranks (frontier size, counts)
};

// What has arrived for one exchange round (two of them: current and next).
struct round_state {
  int level_ends = 0;
  uint64_t data_expected = 0;
  uint64_t data_arrived = 0;
  uint64_t value_sum = 0;
  std::vector<uint32_t> early;  // pairs that came before their round began
};

struct bfs_state {
  const graph::csr* g = nullptr;
  int rank = 0, nranks = 1;
  std::vector<uint32_t> parent;  // per local vertex
  std::vector<int32_t> level;
  std::vector<uint32_t> next;  // next frontier (global ids)
  int32_t depth = 0;           // level of the current frontier

  uint32_t local(uint32_t v) const { return v / static_cast<uint32_t>(nranks); }
  void visit(uint32_t v, uint32_t from) {
    uint32_t l = local(v);
    if (parent[l] != no_parent) return;
    parent[l] = from;
    level[l] = depth + 1;
    next.push_back(v);
  }
};

struct comm {
  LCI_device_t device = nullptr;
  LCI_endpoint_t ep = nullptr;
  LCI_comp_t arrivals = nullptr;
  uint64_t round = 0;
  round_state rounds[2];
  bfs_state* bfs = nullptr;  // where data messages go
  uint64_t retries = 0;
  uint64_t deferred = 0;                         // sends refused once and kept
  std::vector<std::vector<LCI_mbuffer_t>> held;  // per destination, oldest first
  size_t held_count = 0, held_limit = 0;
  std::vector<uint64_t> sent_to;  // data messages sent to each rank this round

  void apply(const uint32_t* pairs, size_t n) {
    for (size_t k = 0; k < n; ++k) bfs->visit(pairs[2 * k], pairs[2 * k + 1]);
  }

  void on_arrival(const LCI_request_t& req) {
    uint64_t parity = (req.tag >> 1) & 1;
    round_state& rs = rounds[parity];
    if ((req.tag & 1) == kind_level_end) {
      level_end_msg m;
      std::memcpy(&m, req.data.immediate.val, sizeof m);
      rs.level_ends++;
      rs.data_expected += m.data_messages;
      rs.value_sum += m.value;
      return;
    }
    rs.data_arrived++;
    const uint32_t* pairs = static_cast<const uint32_t*>(req.data.mbuffer.address);
    size_t n = req.data.mbuffer.length / (2 * sizeof(uint32_t));
    if (parity == (round & 1))
      apply(pairs, n);
    else  // copied, not kept: a peer running ahead must not drain our pool
      rs.early.insert(rs.early.end(), pairs, pairs + 2 * n);
    LCI_mbuffer_free(req.data.mbuffer);
  }

  void poll() {
    LCI_progress(device);
    LCI_request_t reqs[32];
    size_t n = 0;
    LCI_queue_pop_multiple(arrivals, 32, reqs, &n);
    for (size_t i = 0; i < n; ++i) on_arrival(reqs[i]);
  }

  LCI_mbuffer_t alloc_buffer() {
    LCI_mbuffer_t buf;
    while (LCI_mbuffer_alloc(device, &buf) == LCI_ERR_RETRY) {
      retries++;
      poll();
      for (size_t r = 0; r < held.size(); ++r) flush_held(static_cast<int>(r), false);
    }
    return buf;
  }

  // One try to send a full buffer; counted in sent_to when it went.
  bool put_data(LCI_mbuffer_t buf, int rank) {
    if (LCI_putmna(ep, buf, rank, make_tag(kind_data, round), LCI_DEFAULT_COMP_REMOTE) != LCI_OK)
      return false;
    sent_to[rank]++;
    return true;
  }

  // Sends the buffers held for `rank`, oldest first, until one is refused
  // (wait: until all went, polling between tries).
  void flush_held(int rank, bool wait) {
    std::vector<LCI_mbuffer_t>& q = held[rank];
    size_t k = 0;
    while (k < q.size()) {
      if (put_data(q[k], rank)) {
        ++k;
        continue;
      }
      retries++;
      if (!wait) break;
      poll();
    }
    q.erase(q.begin(), q.begin() + static_cast<int64_t>(k));
    held_count -= k;
  }

  // Hands a full LCI medium buffer to LCI (consumed once sent). Messages to
  // one rank leave in the order they were filled.
  void send_data(LCI_mbuffer_t buf, int rank) {
    poll();
    if (!held[rank].empty()) flush_held(rank, false);
    if (held[rank].empty() && put_data(buf, rank)) return;
    held[rank].push_back(buf);
    held_count++;
    if (held_count > held_limit)  // bounded: wait for room, polling
      flush_held(rank, true);
    else
      deferred++;
  }

  // Ends the round: tells everyone how many data messages to expect and
  // contributes `value`; returns the sum of all ranks' values once all of
  // this round's messages are in.
  // The data messages counted are this round's sent_to, reset here.
  uint64_t end_round(uint64_t value) {
    for (int r = 0; r < LCI_NUM_PROCESSES; ++r) {
      if (r == LCI_RANK) continue;
      level_end_msg m{sent_to[r], value};
      LCI_short_t s;
      std::memset(&s, 0, sizeof s);
      std::memcpy(s.val, &m, sizeof m);
      while (LCI_puts(ep, s, r, make_tag(kind_level_end, round), LCI_DEFAULT_COMP_REMOTE) ==
             LCI_ERR_RETRY) {
        retries++;
        poll();
      }
    }
    round_state& rs = rounds[round & 1];
    while (rs.level_ends < LCI_NUM_PROCESSES - 1 || rs.data_arrived < rs.data_expected) poll();
    uint64_t total = rs.value_sum + value;
    rs.level_ends = 0;
    rs.data_expected = rs.data_arrived = rs.value_sum = 0;
    std::fill(sent_to.begin(), sent_to.end(), 0);
    round++;
    return total;
  }

  // Data that arrived before its round began; the caller must already be
  // at that round's depth.
  void apply_early() {
    std::vector<uint32_t> early;
    early.swap(rounds[round & 1].early);
    apply(early.data(), early.size() / 2);
  }

  uint64_t allreduce_sum(uint64_t value) { return end_round(value); }
};

// One BFS from root; returns the number of levels.
int run_bfs(comm& c, bfs_state& s, uint32_t root) {
  const graph::csr& g = *s.g;
  int nranks = s.nranks;
  std::fill(s.parent.begin(), s.parent.end(), no_parent);
  std::fill(s.level.begin(), s.level.end(), -1);
  std::vector<uint32_t> frontier;
  s.next.clear();
  s.depth = 0;
  if (static_cast<int>(root % static_cast<uint32_t>(nranks)) == s.rank) {
    s.parent[s.local(root)] = root;
    s.level[s.local(root)] = 0;
    frontier.push_back(root);
  }
  // (pair count so far, buffer) per destination
  std::vector<LCI_mbuffer_t> out(nranks, LCI_mbuffer_t{nullptr, 0});
  std::vector<size_t> fill(nranks, 0);
  size_t capacity = static_cast<size_t>(LCI_MEDIUM_SIZE) / (2 * sizeof(uint32_t));
  int levels = 0;
  // Bounded: a level with every frontier empty ends the loop, and each
  // vertex is in at most one frontier.
  for (;;) {
    c.apply_early();
    for (uint32_t u : frontier) {
      uint32_t ul = s.local(u);
      for (uint64_t k = g.offsets[ul]; k < g.offsets[ul + 1]; ++k) {
        uint32_t v = g.adj[k];
        int owner = static_cast<int>(v % static_cast<uint32_t>(nranks));
        if (owner == s.rank) {
          s.visit(v, u);
          continue;
        }
        if (out[owner].address == nullptr) {
          out[owner] = c.alloc_buffer();
          fill[owner] = 0;
        }
        uint32_t* pairs = static_cast<uint32_t*>(out[owner].address);
        pairs[2 * fill[owner]] = v;
        pairs[2 * fill[owner] + 1] = u;
        if (++fill[owner] == capacity) {
          out[owner].length = fill[owner] * 2 * sizeof(uint32_t);
          c.send_data(out[owner], owner);
          out[owner].address = nullptr;
        }
      }
    }
    for (int r = 0; r < nranks; ++r) {
      if (out[r].address != nullptr) {
        out[r].length = fill[r] * 2 * sizeof(uint32_t);
        c.send_data(out[r], r);
        out[r].address = nullptr;
      }
      c.flush_held(r, true);
    }
    uint64_t global_frontier = c.end_round(frontier.size());
    if (global_frontier == 0) break;
    ++levels;
    frontier.swap(s.next);
    s.next.clear();
    s.depth++;
  }
  return levels;
}

// Checks this rank's vertices against the serial levels; returns errors.
uint64_t validate(const bfs_state& s, const graph::csr& g, const std::vector<int32_t>& expect,
                  uint32_t root) {
  uint64_t errors = 0;
  for (uint64_t l = 0; l < s.parent.size(); ++l) {
    uint32_t v = static_cast<uint32_t>(l * static_cast<uint64_t>(s.nranks) + s.rank);
    if (s.level[l] != expect[v]) {
      if (errors++ < 5)
        std::fprintf(stderr, "bfs_lci: rank %d: vertex %u level %d, serial %d\n", s.rank, v,
                     s.level[l], expect[v]);
      continue;
    }
    if (s.level[l] < 0) continue;
    uint32_t p = s.parent[l];
    if (v == root) {
      if (p != root) errors++;
      continue;
    }
    bool is_edge = std::find(g.adj.begin() + static_cast<int64_t>(g.offsets[l]),
                             g.adj.begin() + static_cast<int64_t>(g.offsets[l + 1]),
                             p) != g.adj.begin() + static_cast<int64_t>(g.offsets[l + 1]);
    if (!is_edge || expect[p] != s.level[l] - 1) {
      if (errors++ < 5)
        std::fprintf(stderr, "bfs_lci: rank %d: vertex %u has bad parent %u\n", s.rank, v, p);
    }
  }
  return errors;
}

}  // namespace

int main(int argc, char** argv) {
  graph::params p;
  if (!graph::parse_args(argc, argv, p)) {
    graph::usage(argv[0]);
    return 2;
  }
  LCI_initialize();
  comm c;
  c.device = LCI_UR_DEVICE;
  LCI_queue_create(c.device, &c.arrivals);
  LCI_plist_t plist;
  LCI_plist_create(&plist);
  LCI_plist_set_comp_type(plist, LCI_PORT_MESSAGE, LCI_COMPLETION_QUEUE);
  LCI_plist_set_default_comp(plist, c.arrivals);
  LCI_endpoint_init(&c.ep, c.device, plist);
  LCI_plist_free(&plist);

  int rank = LCI_RANK, nranks = LCI_NUM_PROCESSES;
  auto t_gen = std::chrono::steady_clock::now();
  std::vector<uint32_t> degree;
  graph::csr g = graph::build_csr(p, rank, nranks, &degree);
  graph::csr whole;
  if (p.check) whole = nranks == 1 ? g : graph::build_csr(p, 0, 1, nullptr);
  std::vector<uint32_t> roots = graph::pick_roots(p, degree);
  degree = std::vector<uint32_t>();
  double gen_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t_gen).count();

  bfs_state s;
  s.g = &g;
  s.rank = rank;
  s.nranks = nranks;
  s.parent.resize(g.offsets.size() - 1);
  s.level.resize(g.offsets.size() - 1);
  c.bfs = &s;
  c.held.resize(static_cast<size_t>(nranks));
  c.sent_to.assign(static_cast<size_t>(nranks), 0);
  c.held_limit = static_cast<size_t>(std::max(LCI_SERVER_NUM_PKTS / 4, 1));

  if (rank == 0)
    std::printf("bfs_lci: %d ranks, scale %d, edge factor %d: %" PRIu64 " vertices, %" PRIu64
                " edges generated (%.2f s)\n",
                nranks, p.scale, p.edge_factor, p.vertices(), p.edges(), gen_s);
  uint64_t total_errors = 0;
  double inv_teps_sum = 0;
  for (size_t k = 0; k < roots.size(); ++k) {
    LCI_barrier();
    auto t0 = std::chrono::steady_clock::now();
    int levels = run_bfs(c, s, roots[k]);
    double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    // Graph500 counts the input edges inside the traversed component:
    // half the summed degree of the reached vertices.
    uint64_t local_degree = 0;
    for (uint64_t l = 0; l < s.level.size(); ++l)
      if (s.level[l] >= 0) local_degree += g.degree(l);
    uint64_t edges = c.allreduce_sum(local_degree) / 2;
    uint64_t errors = 0;
    if (p.check) errors = validate(s, g, graph::serial_bfs(whole, roots[k]), roots[k]);
    errors = c.allreduce_sum(errors);
    total_errors += errors;
    double teps = edges / std::max(secs, 1e-9);
    inv_teps_sum += 1.0 / std::max(teps, 1e-9);
    if (rank == 0)
      std::printf("bfs_lci: root %u: %d levels, %" PRIu64 " edges in %.4f s = %.3g TEPS%s\n",
                  roots[k], levels, edges, secs, teps,
                  p.check ? (errors ? " (INVALID)" : " (valid)") : "");
  }
  if (rank == 0) {
    std::printf("bfs_lci: %zu roots, harmonic mean %.3g TEPS, %" PRIu64 " send retries, %" PRIu64
                " sends deferred: %s\n",
                roots.size(), roots.size() / inv_teps_sum, c.retries, c.deferred,
                !p.check ? "PASS (not validated)" : total_errors ? "FAIL" : "PASS");
    std::fflush(stdout);
  }

  LCI_barrier();
  LCI_endpoint_free(&c.ep);
  LCI_queue_free(&c.arrivals);
  LCI_finalize();
  return total_errors || roots.empty() ? 1 : 0;
}

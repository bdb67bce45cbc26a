// graph_gen.hpp - Kronecker (R-MAT) edge generator, CSR builder and serial
// BFS shared by bfs_lci.cpp and bfs_mpi.cpp.
//
// Edges are counter-based: edge i is a pure function of (seed, i), so any
// process can produce any edge, in any order, and all processes agree on
// the graph without shipping it around.
#ifndef EXAMPLES_GRAPH_GRAPH_GEN_HPP
#define EXAMPLES_GRAPH_GRAPH_GEN_HPP

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace graph {

inline uint64_t mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

struct params {
  int scale = 12;
  int edge_factor = 16;
  int roots = 4;
  uint64_t seed = 1;
  bool check = true;

  uint64_t vertices() const { return uint64_t{1} << scale; }
  uint64_t edges() const { return vertices() * static_cast<uint64_t>(edge_factor); }
};

// Graph500 parameters; D = 1 - A - B - C.
constexpr double rmat_a = 0.57, rmat_b = 0.19, rmat_c = 0.19;

// A bijection on scale-bit numbers: without it the R-MAT skew puts the
// heavy vertices at small ids, all on the same few ranks.
inline uint32_t permute(uint64_t x, int scale) {
  uint64_t mask = (uint64_t{1} << scale) - 1;
  int shift = scale / 2 > 0 ? scale / 2 : 1;
  for (int round = 0; round < 3; ++round) {
    x = (x * 0x9E3779B97F4A7C15ULL + 0x632BE59BD9B4E019ULL) & mask;  // odd multiplier
    x ^= x >> shift;
  }
  return static_cast<uint32_t>(x);
}

inline void rmat_edge(const params& p, uint64_t i, uint32_t& u_out, uint32_t& v_out) {
  uint64_t u = 0, v = 0, bits = 0;
  for (int level = 0; level < p.scale; ++level) {
    if (level % 4 == 0) bits = mix(p.seed ^ mix(i * 64 + static_cast<uint64_t>(level)));
    double r = static_cast<double>(bits & 0xffff) / 65536.0;  // 16 random bits per level
    bits >>= 16;
    if (r < rmat_a) {
    } else if (r < rmat_a + rmat_b) {
      v |= uint64_t{1} << level;
    } else if (r < rmat_a + rmat_b + rmat_c) {
      u |= uint64_t{1} << level;
    } else {
      u |= uint64_t{1} << level;
      v |= uint64_t{1} << level;
    }
  }
  u_out = permute(u, p.scale);
  v_out = permute(v, p.scale);
}

// Compressed adjacency of the vertices a process owns (owner(v) = v % nprocs,
// local index v / nprocs); with nprocs = 1 it is the whole graph. Both
// directions of every edge are stored; self loops are dropped.
struct csr {
  std::vector<uint64_t> offsets;
  std::vector<uint32_t> adj;
  uint64_t degree(uint64_t local) const { return offsets[local + 1] - offsets[local]; }
};

inline csr build_csr(const params& p, int rank, int nprocs, std::vector<uint32_t>* global_degree) {
  uint64_t n = p.vertices(), m = p.edges();
  uint64_t local_n = (n + static_cast<uint64_t>(nprocs) - 1 - static_cast<uint64_t>(rank)) /
                     static_cast<uint64_t>(nprocs);
  csr g;
  g.offsets.assign(local_n + 1, 0);
  if (global_degree) global_degree->assign(n, 0);
  auto owned = [&](uint32_t x) { return x % static_cast<uint32_t>(nprocs) == static_cast<uint32_t>(rank); };
  auto local = [&](uint32_t x) { return x / static_cast<uint32_t>(nprocs); };
  // Two passes over the generator (count, then fill) instead of storing the
  // edge list: generating is cheaper than the memory at large scales.
  for (uint64_t i = 0; i < m; ++i) {
    uint32_t u, v;
    rmat_edge(p, i, u, v);
    if (u == v) continue;
    if (global_degree) {
      (*global_degree)[u]++;
      (*global_degree)[v]++;
    }
    if (owned(u)) g.offsets[local(u) + 1]++;
    if (owned(v)) g.offsets[local(v) + 1]++;
  }
  for (uint64_t k = 0; k < local_n; ++k) g.offsets[k + 1] += g.offsets[k];
  g.adj.resize(g.offsets[local_n]);
  std::vector<uint64_t> fill(g.offsets.begin(), g.offsets.end() - 1);
  for (uint64_t i = 0; i < m; ++i) {
    uint32_t u, v;
    rmat_edge(p, i, u, v);
    if (u == v) continue;
    if (owned(u)) g.adj[fill[local(u)]++] = v;
    if (owned(v)) g.adj[fill[local(v)]++] = u;
  }
  return g;
}

// Serial BFS on a whole-graph CSR: level of every vertex, -1 if unreached.
inline std::vector<int32_t> serial_bfs(const csr& g, uint32_t root) {
  std::vector<int32_t> level(g.offsets.size() - 1, -1);
  std::vector<uint32_t> frontier{root}, next;
  level[root] = 0;
  for (int32_t depth = 0; !frontier.empty(); ++depth) {
    next.clear();
    for (uint32_t u : frontier)
      for (uint64_t k = g.offsets[u]; k < g.offsets[u + 1]; ++k)
        if (level[g.adj[k]] < 0) {
          level[g.adj[k]] = depth + 1;
          next.push_back(g.adj[k]);
        }
    frontier.swap(next);
  }
  return level;
}

// Roots with at least one edge, the same on every process.
inline std::vector<uint32_t> pick_roots(const params& p, const std::vector<uint32_t>& degree) {
  std::vector<uint32_t> roots;
  for (uint64_t k = 0; roots.size() < static_cast<size_t>(p.roots) && k < 64 * 1024; ++k) {
    uint32_t r = static_cast<uint32_t>(mix(p.seed ^ (0x1234567ULL + k)) % p.vertices());
    if (degree[r] > 0) roots.push_back(r);
  }
  return roots;
}

inline void usage(const char* prog) {
  std::printf(
      "usage: %s [options]\n"
      "  --scale S        2^S vertices (default 12)\n"
      "  --edge-factor E  E * 2^S generated edges (default 16)\n"
      "  --roots K        BFS runs from K roots (default 4)\n"
      "  --seed X         generator seed (default 1)\n"
      "  --no-check       skip the validation against a serial BFS\n"
      "  --help           this text\n",
      prog);
}

// Returns false (after a message) on a bad command line; exits on --help.
inline bool parse_args(int argc, char** argv, params& p) {
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--help" || a == "-h") {
      usage(argv[0]);
      std::exit(0);
    }
    if (a == "--no-check") {
      p.check = false;
      continue;
    }
    if (i + 1 >= argc) {
      std::fprintf(stderr, "%s: %s needs a value\n", argv[0], a.c_str());
      return false;
    }
    const char* v = argv[++i];
    if (a == "--scale") p.scale = std::atoi(v);
    else if (a == "--edge-factor") p.edge_factor = std::atoi(v);
    else if (a == "--roots") p.roots = std::atoi(v);
    else if (a == "--seed") p.seed = std::strtoull(v, nullptr, 0);
    else {
      std::fprintf(stderr, "%s: unknown option %s\n", argv[0], a.c_str());
      return false;
    }
  }
  if (p.scale < 1 || p.scale > 30 || p.edge_factor < 1 || p.roots < 1 || p.roots > 64) {
    std::fprintf(stderr, "%s: option out of range\n", argv[0]);
    return false;
  }
  return true;
}

}  // namespace graph

#endif  // EXAMPLES_GRAPH_GRAPH_GEN_HPP

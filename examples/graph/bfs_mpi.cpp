/*
 * bfs_mpi.cpp - the BFS kernel of bfs_lci.cpp over MPI, for comparison.
 *
 * Same graph (graph_gen.hpp), same partition (v % nranks), same
 * level-synchronous expansion; the per-level exchange is the textbook MPI
 * one: MPI_Alltoall of pair counts, MPI_Alltoallv of (vertex, parent)
 * pairs, MPI_Allreduce of the frontier size.
 *
 * Run:  mpiexec -n 2 ./bfs_mpi [--scale 12] [--roots 4] [--no-check]
 * Exits 0 if every BFS tree validated against a serial BFS.
 */
#include <mpi.h>

#include <algorithm>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <vector>

#include "graph_gen.hpp"

namespace {

constexpr uint32_t no_parent = UINT32_MAX;

int run_bfs(const graph::csr& g, int rank, int nranks, uint32_t root,
            std::vector<uint32_t>& parent, std::vector<int32_t>& level) {
  auto local = [&](uint32_t v) { return v / static_cast<uint32_t>(nranks); };
  std::fill(parent.begin(), parent.end(), no_parent);
  std::fill(level.begin(), level.end(), -1);
  std::vector<uint32_t> frontier, next;
  if (static_cast<int>(root % static_cast<uint32_t>(nranks)) == rank) {
    parent[local(root)] = root;
    level[local(root)] = 0;
    frontier.push_back(root);
  }
  std::vector<std::vector<uint32_t>> out(nranks);
  std::vector<int> send_counts(nranks), recv_counts(nranks), send_displs(nranks),
      recv_displs(nranks);
  std::vector<uint32_t> send_buf, recv_buf;
  int32_t depth = 0;
  auto visit = [&](uint32_t v, uint32_t from) {
    uint32_t l = local(v);
    if (parent[l] != no_parent) return;
    parent[l] = from;
    level[l] = depth + 1;
    next.push_back(v);
  };
  int levels = 0;
  for (;;) {
    uint64_t mine = frontier.size(), all = 0;
    MPI_Allreduce(&mine, &all, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
    if (all == 0) break;
    for (auto& o : out) o.clear();
    for (uint32_t u : frontier)
      for (uint64_t k = g.offsets[local(u)]; k < g.offsets[local(u) + 1]; ++k) {
        uint32_t v = g.adj[k];
        int owner = static_cast<int>(v % static_cast<uint32_t>(nranks));
        if (owner == rank) {
          visit(v, u);
        } else {
          out[owner].push_back(v);
          out[owner].push_back(u);
        }
      }
    send_buf.clear();
    for (int r = 0; r < nranks; ++r) {
      send_displs[r] = static_cast<int>(send_buf.size());
      send_counts[r] = static_cast<int>(out[r].size());
      send_buf.insert(send_buf.end(), out[r].begin(), out[r].end());
    }
    MPI_Alltoall(send_counts.data(), 1, MPI_INT, recv_counts.data(), 1, MPI_INT, MPI_COMM_WORLD);
    int total = 0;
    for (int r = 0; r < nranks; ++r) {
      recv_displs[r] = total;
      total += recv_counts[r];
    }
    recv_buf.resize(static_cast<size_t>(total));
    MPI_Alltoallv(send_buf.data(), send_counts.data(), send_displs.data(), MPI_UINT32_T,
                  recv_buf.data(), recv_counts.data(), recv_displs.data(), MPI_UINT32_T,
                  MPI_COMM_WORLD);
    for (int k = 0; k + 1 < total; k += 2) visit(recv_buf[k], recv_buf[k + 1]);
    frontier.swap(next);
    next.clear();
    ++depth;
    ++levels;
  }
  return levels;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, nranks;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nranks);
  graph::params p;
  if (!graph::parse_args(argc, argv, p)) {
    if (rank == 0) graph::usage(argv[0]);
    MPI_Finalize();
    return 2;
  }
  std::vector<uint32_t> degree;
  graph::csr g = graph::build_csr(p, rank, nranks, &degree);
  graph::csr whole;
  if (p.check) whole = nranks == 1 ? g : graph::build_csr(p, 0, 1, nullptr);
  std::vector<uint32_t> roots = graph::pick_roots(p, degree);
  degree = std::vector<uint32_t>();
  std::vector<uint32_t> parent(g.offsets.size() - 1);
  std::vector<int32_t> level(g.offsets.size() - 1);

  if (rank == 0)
    std::printf("bfs_mpi: %d ranks, scale %d, edge factor %d: %" PRIu64 " vertices, %" PRIu64
                " edges generated\n",
                nranks, p.scale, p.edge_factor, p.vertices(), p.edges());
  uint64_t total_errors = 0;
  double inv_teps_sum = 0;
  for (uint32_t root : roots) {
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    int levels = run_bfs(g, rank, nranks, root, parent, level);
    double secs = MPI_Wtime() - t0;
    uint64_t local_degree = 0, edges = 0;
    for (uint64_t l = 0; l < level.size(); ++l)
      if (level[l] >= 0) local_degree += g.degree(l);
    MPI_Allreduce(&local_degree, &edges, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
    edges /= 2;
    uint64_t errors = 0, all_errors = 0;
    if (p.check) {
      std::vector<int32_t> expect = graph::serial_bfs(whole, root);
      for (uint64_t l = 0; l < level.size(); ++l) {
        uint32_t v = static_cast<uint32_t>(l * static_cast<uint64_t>(nranks) + rank);
        if (level[l] != expect[v]) {
          errors++;
          continue;
        }
        if (level[l] <= 0) continue;
        uint32_t pv = parent[l];
        auto b = g.adj.begin() + static_cast<int64_t>(g.offsets[l]);
        auto e = g.adj.begin() + static_cast<int64_t>(g.offsets[l + 1]);
        if (std::find(b, e, pv) == e || expect[pv] != level[l] - 1) errors++;
      }
    }
    MPI_Allreduce(&errors, &all_errors, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
    total_errors += all_errors;
    double teps = edges / std::max(secs, 1e-9);
    inv_teps_sum += 1.0 / std::max(teps, 1e-9);
    if (rank == 0)
      std::printf("bfs_mpi: root %u: %d levels, %" PRIu64 " edges in %.4f s = %.3g TEPS%s\n",
                  root, levels, edges, secs, teps,
                  p.check ? (all_errors ? " (INVALID)" : " (valid)") : "");
  }
  if (rank == 0)
    std::printf("bfs_mpi: %zu roots, harmonic mean %.3g TEPS: %s\n", roots.size(),
                roots.size() / inv_teps_sum,
                !p.check ? "PASS (not validated)" : total_errors ? "FAIL" : "PASS");
  MPI_Finalize();
  return total_errors || roots.empty() ? 1 : 0;
}

/* scale_ring_mpi: scale_ring's job (--k K neighbours on each side of a
 * ring, 64-byte messages, every byte checked, then a barrier) written for
 * MPI, the anchor that tests/scale/anchor.sh runs beside the LCI job at the
 * same sizes. Every rank records when its process started (CLOCK_REALTIME),
 * calls MPI_Init, exchanges, and reports its time to the end of MPI_Init,
 * its open descriptors and its peak resident memory to rank 0, which prints
 *
 *   scale_ring_mpi: N ranks, k=K: all initialized X s after the first start
 *   (slowest rank Y s); fds per rank min..max; peak RSS per rank min..max MB;
 *   messages checked M, wrong W
 *
 * Exit status 0 only if every message arrived intact.
 * usage: mpiexec.hydra -n N scale_ring_mpi [--k K] [--bytes B] */
#include <dirent.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double realtime_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_REALTIME, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static int open_fds(void) {
  int n = 0;
  DIR* d = opendir("/proc/self/fd");
  if (!d) return 0;
  struct dirent* e;
  while ((e = readdir(d)) != NULL) n += e->d_name[0] != '.';
  closedir(d);
  return n - 1; /* the directory's own descriptor */
}

static double peak_rss_mb(void) {
  FILE* f = fopen("/proc/self/status", "r");
  if (!f) return 0;
  char line[256];
  double kb = 0;
  while (fgets(line, sizeof line, f))
    if (strncmp(line, "VmHWM:", 6) == 0) kb = atof(line + 6);
  fclose(f);
  return kb / 1024;
}

static uint8_t pattern(int src, int dst, size_t i) {
  return (uint8_t)(src * 131 + dst * 7 + (int)i * 29 + 1);
}

int main(int argc, char** argv) {
  const double start = realtime_s();
  int k = 1;
  size_t bytes = 64;
  for (int i = 1; i < argc; ++i) {
    if (strcmp(argv[i], "--k") == 0 && i + 1 < argc)
      k = atoi(argv[++i]);
    else if (strcmp(argv[i], "--bytes") == 0 && i + 1 < argc)
      bytes = (size_t)atol(argv[++i]);
    else {
      fprintf(stderr, "usage: scale_ring_mpi [--k K] [--bytes B]\n");
      return 2;
    }
  }
  MPI_Init(&argc, &argv);
  const double initialized = realtime_s();
  int n, me;
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  MPI_Comm_rank(MPI_COMM_WORLD, &me);

  /* The peers: k on each side, distinct, not this rank. */
  int* peers = malloc(sizeof(int) * (size_t)(2 * k + 1));
  int np = 0;
  for (int d = 1; d <= k && d < n; ++d) {
    const int cand[2] = {(me + d) % n, (me - d + n) % n};
    for (int c = 0; c < 2; ++c) {
      int dup = 0;
      for (int j = 0; j < np; ++j) dup |= peers[j] == cand[c];
      if (!dup && cand[c] != me) peers[np++] = cand[c];
    }
  }
  uint8_t* in = malloc(bytes * (size_t)(np ? np : 1));
  uint8_t* out = malloc(bytes * (size_t)(np ? np : 1));
  MPI_Request* reqs = malloc(sizeof(MPI_Request) * (size_t)(2 * np + 1));
  for (int i = 0; i < np; ++i)
    MPI_Irecv(in + (size_t)i * bytes, (int)bytes, MPI_BYTE, peers[i], 7, MPI_COMM_WORLD, &reqs[i]);
  for (int i = 0; i < np; ++i) {
    for (size_t b = 0; b < bytes; ++b) out[(size_t)i * bytes + b] = pattern(me, peers[i], b);
    MPI_Isend(out + (size_t)i * bytes, (int)bytes, MPI_BYTE, peers[i], 7, MPI_COMM_WORLD,
              &reqs[np + i]);
  }
  MPI_Status* st = malloc(sizeof(MPI_Status) * (size_t)(2 * np + 1));
  MPI_Waitall(2 * np, reqs, st);
  free(st);
  int good = 0, bad = 0;
  for (int i = 0; i < np; ++i) {
    int ok = 1;
    for (size_t b = 0; ok && b < bytes; ++b) ok = in[(size_t)i * bytes + b] == pattern(peers[i], me, b);
    if (!ok) fprintf(stderr, "scale_ring_mpi: rank %d: message from rank %d is wrong\n", me, peers[i]);
    good += ok;
    bad += !ok;
  }
  MPI_Barrier(MPI_COMM_WORLD);

  double mine[6] = {start, initialized, peak_rss_mb(), (double)open_fds(), good, bad};
  double* all = me == 0 ? malloc(sizeof mine * (size_t)n) : NULL;
  MPI_Gather(mine, 6, MPI_DOUBLE, all, 6, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  int status = bad ? 1 : 0;
  if (me == 0) {
    double first = all[0], last = 0, slowest = 0, rss_lo = 1e30, rss_hi = 0;
    int fd_lo = 1 << 30, fd_hi = 0;
    long checked = 0, wrong = 0;
    for (int r = 0; r < n; ++r) {
      const double* x = all + 6 * r;
      if (x[0] < first) first = x[0];
      if (x[1] > last) last = x[1];
      if (x[1] - x[0] > slowest) slowest = x[1] - x[0];
      if (x[2] < rss_lo) rss_lo = x[2];
      if (x[2] > rss_hi) rss_hi = x[2];
      if ((int)x[3] < fd_lo) fd_lo = (int)x[3];
      if ((int)x[3] > fd_hi) fd_hi = (int)x[3];
      checked += (long)x[4];
      wrong += (long)x[5];
    }
    printf("scale_ring_mpi: %d ranks, k=%d: all initialized %.3f s after the first start "
           "(slowest rank %.3f s); fds per rank %d..%d; peak RSS per rank %.1f..%.1f MB; "
           "messages checked %ld, wrong %ld\n",
           n, k, last - first, slowest, fd_lo, fd_hi, rss_lo, rss_hi, checked, wrong);
    if (wrong) status = 1;
    free(all);
  }
  free(peers);
  free(in);
  free(out);
  free(reqs);
  MPI_Finalize();
  return status;
}

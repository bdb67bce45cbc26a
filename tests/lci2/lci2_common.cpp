// The lci.hpp test programs' shared helpers (lci2_common.hpp) and doctest's
// implementation (this is the one file that defines it).
#define DOCTEST_CONFIG_IMPLEMENT
#include "lci2_common.hpp"

#include <chrono>
#include <cstdio>
#include <unistd.h>

namespace lci2_test {

std::atomic<int> recorder::destroyed{0};

namespace {

lci::endpoint_t g_ctl_ep;
lci::device_t g_ctl_dev;
constexpr lci::tag_t k_barrier_tag = 1;
constexpr lci::tag_t k_allgather_tag = 2;

std::mutex g_handler_m;
std::vector<lci::status_t> g_handler_statuses;

// One control message, complete when the call returns.
void ctl_send(int rank, void* buf, size_t size, lci::tag_t tag) {
  lci::comp_t sync = lci::alloc_sync();
  lci::status_t s;
  lci_test::deadline d(k_wait_s);
  do {
    s = lci::post_send_x(rank, buf, size, tag, sync).endpoint(g_ctl_ep).device(g_ctl_dev)();
    if (s.is_retry()) {
      lci::progress_x().device(g_ctl_dev)();
      if (d.passed()) fatal("control send refused for too long");
    }
  } while (s.is_retry());
  if (s.is_posted()) {
    lci::status_t out;
    progress_until([&] { return lci::sync_test(sync, &out); }, "a control send", g_ctl_dev);
  }
  lci::free_comp(&sync);
}

void ctl_recv(int rank, void* buf, size_t size, lci::tag_t tag) {
  lci::comp_t sync = lci::alloc_sync();
  lci::status_t s =
      lci::post_recv_x(rank, buf, size, tag, sync).endpoint(g_ctl_ep).device(g_ctl_dev)();
  if (s.is_posted()) {
    lci::status_t out;
    progress_until([&] { return lci::sync_test(sync, &out); }, "a control message", g_ctl_dev);
    s = out;
  }
  if (s.get_size() != size || s.get_rank() != rank)
    fatal("control message of " + std::to_string(s.get_size()) + " bytes from rank " +
          std::to_string(s.get_rank()) + ", expected " + std::to_string(size) + " from " +
          std::to_string(rank));
  lci::free_comp(&sync);
}

}  // namespace

void fatal(const std::string& what) {
  int rank = -1;
  try {
    rank = lci::get_rank_me();
  } catch (const std::runtime_error&) {
  }
  fprintf(stderr, "rank %d: FATAL: %s\n", rank, what.c_str());
  fflush(stdout);
  fflush(stderr);
  _exit(3);
}

void control_init(lci::device_t device) {
  g_ctl_dev = device.is_empty() ? lci::get_default_device() : device;
  g_ctl_ep = lci::alloc_endpoint_x().device(g_ctl_dev).name("control")();
}

void control_fina() {
  lci::free_endpoint(&g_ctl_ep);
  g_ctl_dev = lci::device_t();
}

void barrier() {
  const int me = lci::get_rank_me(), n = lci::get_rank_n();
  char b = 0;
  if (me == 0) {
    for (int r = 1; r < n; ++r) ctl_recv(r, &b, 1, k_barrier_tag);
    for (int r = 1; r < n; ++r) ctl_send(r, &b, 1, k_barrier_tag);
  } else {
    ctl_send(0, &b, 1, k_barrier_tag);
    ctl_recv(0, &b, 1, k_barrier_tag);
  }
}

std::vector<std::vector<char>> allgather(const void* data, size_t len) {
  const int me = lci::get_rank_me(), n = lci::get_rank_n();
  std::vector<std::vector<char>> out(static_cast<size_t>(n), std::vector<char>(len));
  std::memcpy(out[static_cast<size_t>(me)].data(), data, len);
  // Lower ranks send first, so that no pair waits on each other.
  for (int r = 0; r < n; ++r) {
    if (r == me) continue;
    if (me < r) {
      ctl_send(r, const_cast<void*>(data), len, k_allgather_tag);
      ctl_recv(r, out[static_cast<size_t>(r)].data(), len, k_allgather_tag);
    } else {
      ctl_recv(r, out[static_cast<size_t>(r)].data(), len, k_allgather_tag);
      ctl_send(r, const_cast<void*>(data), len, k_allgather_tag);
    }
  }
  return out;
}

std::vector<lci::status_t> pop_n(lci::comp_t cq, size_t n, const char* what,
                                 lci::device_t device) {
  std::vector<lci::status_t> out;
  progress_until(
      [&] {
        for (;;) {
          lci::status_t s = lci::cq_pop(cq);
          if (s.is_retry()) return out.size() >= n;
          out.push_back(s);
        }
      },
      what, device);
  return out;
}

bool cq_stays_empty(lci::comp_t cq, lci::device_t device) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(20);
  while (std::chrono::steady_clock::now() < until) lci::progress_x().device(device)();
  return lci::cq_pop(cq).is_retry();
}

void handler_record(lci::status_t s) {
  std::lock_guard<std::mutex> g(g_handler_m);
  g_handler_statuses.push_back(s);
}

std::vector<lci::status_t> handler_take() {
  std::lock_guard<std::mutex> g(g_handler_m);
  std::vector<lci::status_t> out;
  out.swap(g_handler_statuses);
  return out;
}

size_t handler_count() {
  std::lock_guard<std::mutex> g(g_handler_m);
  return g_handler_statuses.size();
}

int run_doctest(int argc, char** argv) {
  doctest::Context ctx(argc, argv);
  const int rc = ctx.run();
  fflush(stdout);
  return rc == 0 ? 0 : 1;
}

int run_in_global_runtime(int argc, char** argv) {
  lci::g_runtime_init();
  control_init();
  const int rc = run_doctest(argc, argv);
  barrier();
  control_fina();
  lci::g_runtime_fina();
  return rc;
}

}  // namespace lci2_test

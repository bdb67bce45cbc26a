// What the lci.hpp (LCI 2 interface) test programs share: doctest's runner
// for a multi-process program, bounded waits, a control channel between the
// ranks (its own endpoint, so that test traffic never matches it) and data
// patterns (the C harness's pat/fill/mismatch).
//
// Contract: every rank runs the same test cases in the same order (doctest
// orders them by file and line); a test case that talks to other ranks
// does so only through LCI and the control channel. A wait that does not
// end within k_wait_s kills the rank with a message naming what it waited
// for (so a lost message fails the test instead of hanging it).
#pragma once

#include <doctest/doctest.h>

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "harness.hpp"
#include "lci.hpp"

namespace lci2_test {

using lci_test::fill;
using lci_test::mismatch;
using lci_test::seed_of;

constexpr double k_wait_s = 30;

// Ends the rank (status 3) with "rank R: FATAL: <what>".
[[noreturn]] void fatal(const std::string& what);

// Progresses `device` (the default device when empty) until pred() holds;
// fatal after k_wait_s.
template <class Pred>
void progress_until(Pred pred, const char* what, lci::device_t device = lci::device_t()) {
  lci_test::deadline d(k_wait_s);
  while (!pred()) {
    if (lci::progress_x().device(device)().is_retry()) std::this_thread::yield();
    if (d.passed()) fatal(std::string("timed out waiting for ") + what);
  }
}

// Calls op() (an operation object, e.g. post_send_x(...)) until it is not
// refused (retry), progressing the default device; fatal after k_wait_s.
template <class Op>
lci::status_t until_accepted(Op op, const char* what) {
  lci_test::deadline d(k_wait_s);
  for (;;) {
    lci::status_t s = op();
    if (!s.is_retry()) return s;
    lci::progress();
    if (d.passed()) fatal(std::string("refused for too long: ") + what);
  }
}

// The control channel: an endpoint of `device` (the default device when
// empty) that only the helpers below use. Collective.
void control_init(lci::device_t device = lci::device_t());
void control_fina();
void barrier();
// Every rank's `len`-byte blob, by rank.
std::vector<std::vector<char>> allgather(const void* data, size_t len);

// The ring the point-to-point tests run on: every rank sends to next() and
// receives from prev() (each other at two ranks).
inline int next() { return (lci::get_rank_me() + 1) % lci::get_rank_n(); }
inline int prev() { return (lci::get_rank_me() + lci::get_rank_n() - 1) % lci::get_rank_n(); }

// Pops `comp` (a cq) until n statuses came, progressing.
std::vector<lci::status_t> pop_n(lci::comp_t cq, size_t n, const char* what,
                                 lci::device_t device = lci::device_t());
// Progresses a while, then checks that `cq` holds nothing.
bool cq_stays_empty(lci::comp_t cq, lci::device_t device = lci::device_t());

// A program's own completion object: records every status it is signalled
// with. LCI never deletes it; `destroyed` counts the destructor calls.
class recorder : public lci::comp_impl_t {
 public:
  static std::atomic<int> destroyed;
  ~recorder() override { destroyed.fetch_add(1); }
  void signal(lci::status_t s) override {
    std::lock_guard<std::mutex> g(m_);
    statuses_.push_back(s);
  }
  size_t count() {
    std::lock_guard<std::mutex> g(m_);
    return statuses_.size();
  }
  std::vector<lci::status_t> take() {
    std::lock_guard<std::mutex> g(m_);
    std::vector<lci::status_t> out;
    out.swap(statuses_);
    return out;
  }

 private:
  std::mutex m_;
  std::vector<lci::status_t> statuses_;
};

// Handler completion objects record into these (a handler has no context).
std::vector<lci::status_t> handler_take();
size_t handler_count();
void handler_record(lci::status_t s);

// doctest's run with the program's arguments; 0 or 1.
int run_doctest(int argc, char** argv);
// The main of a program whose cases run in the global runtime: g_runtime_init,
// the control channel, doctest, a barrier, then the teardown in reverse.
int run_in_global_runtime(int argc, char** argv);

}  // namespace lci2_test

// comp_sync: the synchronizer, a completion object that triggers after k
// signals (k = threshold >= 1) and then hands the k requests to one tester.
//
// State:
//   ticket_     the next free slot (k > 1 only): a signaller takes slot
//               t = ticket_++ and writes its request into slots_[t];
//   published_  how many slots are written, 0..k; the object is *triggered*
//               when published_ == k; `consuming` (-1) while one test() copies
//               the requests out and resets.
//   slots_      k requests in ticket order: an array allocated once in the
//               constructor, or for k == 1 the inline one_ (no allocation).
//
// Memory orders: a signaller writes its slot, then publishes with a release
// fetch_add on published_. A tester that reads k with acquire synchronizes
// with every one of those fetch_adds (they form one release sequence), so it
// sees all k slots. It then claims the trigger by CAS k -> consuming (exactly
// one concurrent tester wins), copies the slots, and resets published_ = 0
// and then ticket_ = 0 with release stores. A signaller of the next round
// takes its ticket with an acquire RMW, which reads the reset (or a later
// value of the same RMW chain): the copy-out of its slot and the reset of
// published_ happen before it writes. More than k signals before a reset is
// a program error (debug assert); signals of the next round must happen
// after the test/wait that consumed the previous trigger.
//
// Waiting: wait() blocks under the waiting policy (lci/wait/parking.hpp).
// The signal that triggers the object publishes with a seq_cst fetch_add (on
// x86 the same locked instruction as a release one) and then checks the
// parking lot for waiters with one seq_cst load: the Dekker pair described in
// parking.hpp. Signals that do not trigger skip the check.
//
// Threads: any number of signallers (progress threads, LCI_sync_signal) and
// testers/waiters at once.
#pragma once

#include <atomic>
#include <cassert>
#include <memory>

#include "lci.h"
#include "lci/comp/comp.hpp"
#include "lci/util/spin.hpp"
#include "lci/wait/parking.hpp"

namespace lci {

class comp_sync : public comp_base {
 public:
  explicit comp_sync(int threshold)
      : comp_base(LCI_COMPLETION_SYNC),
        threshold_(threshold),
        many_(threshold > 1 ? new LCI_request_t[threshold] : nullptr),
        slots_(threshold > 1 ? many_.get() : &one_) {
    assert(threshold >= 1);
  }
  ~comp_sync() = default;  // comp_base clears the magic
  comp_sync(const comp_sync&) = delete;
  comp_sync& operator=(const comp_sync&) = delete;

  int threshold() const noexcept { return threshold_; }
  // Whether a test() now may succeed (triggered): test()'s first check on
  // its own, for a caller that keeps the rest of test() out of line.
  bool triggered() const noexcept {
    return published_.load(std::memory_order_acquire) == threshold_;
  }

  // Records one signal carrying r (returned verbatim by test/wait).
  void signal(const LCI_request_t& r) noexcept {
    const int k = threshold_;  // read before publishing (see below)
    int t = 0;
    if (threshold_ > 1) {
      // acquire: see the file comment (the previous round's copy-out of this
      // slot happens before we overwrite it).
      t = ticket_.fetch_add(1, std::memory_order_acquire);
      assert(t < threshold_ && "synchronizer signalled more than its threshold");
    }
    slots_[t] = r;
    // release (as part of seq_cst): publishes slots_[t] to the tester that
    // reads published_ == k; seq_cst: orders the publication before the
    // parking-lot check below (see the file comment).
    const int before = published_.fetch_add(1, std::memory_order_seq_cst);
    assert(before >= 0 && before < k && "synchronizer signalled more than its threshold");
    // Do not touch *this after the fetch_add: a waiter that sees the trigger
    // may free the object. unpark_all only uses the address as a key.
    if (before + 1 == k) unpark_all(this);
  }

  // A threshold-1 synchronizer tested in three steps, for a caller that
  // converts the request in place: claim_one takes the trigger (after
  // triggered() said it is there; false if another tester took it), then
  // slot_one() may be read, then release_one() resets the synchronizer.
  bool claim_one() noexcept {
    int p = 1;
    return published_.compare_exchange_strong(p, consuming, std::memory_order_acquire,
                                              std::memory_order_relaxed);
  }
  const LCI_request_t& slot_one() const noexcept { return slots_[0]; }
  void release_one() noexcept { published_.store(0, std::memory_order_release); }

  // If triggered: copies the k requests in ticket order to out[0..k-1]
  // (drops them if out == nullptr), resets, returns true. Otherwise returns
  // false and writes nothing.
  bool test(LCI_request_t* out) noexcept {
    int p = published_.load(std::memory_order_acquire);
    if (p != threshold_) return false;
    if (!published_.compare_exchange_strong(p, consuming,
                                            std::memory_order_acquire,
                                            std::memory_order_relaxed))
      return false;  // another tester consumed this trigger
    if (out != nullptr)
      for (int i = 0; i < threshold_; ++i) out[i] = slots_[i];
    // published_ before ticket_: a signaller that draws ticket 0 of the next
    // round must find published_ already reset.
    published_.store(0, std::memory_order_release);
    if (threshold_ > 1) ticket_.store(0, std::memory_order_release);
    return true;
  }

  // Blocks until triggered, then acts as a successful test().
  void wait(LCI_request_t* out) noexcept {
    block_until(this, [&] { return test(out); }, &is_triggered, this);
  }

 private:
  static constexpr int consuming = -1;

  // The parking lot's non-consuming re-check (acquire: pairs with the
  // signallers' publication, after the waiter's seq_cst fence).
  static bool is_triggered(const void* self) noexcept {
    auto* s = static_cast<const comp_sync*>(self);
    return s->published_.load(std::memory_order_acquire) == s->threshold_;
  }

  // Read-only after construction; shares the line with comp_base.
  const int threshold_;
  const std::unique_ptr<LCI_request_t[]> many_;
  LCI_request_t* const slots_;
  // Signallers write this line; testers read it. For k == 1 a signal touches
  // only this line (4 + 4 + 56 bytes).
  alignas(64) std::atomic<int> published_{0};
  std::atomic<int> ticket_{0};
  LCI_request_t one_;
};

}  // namespace lci

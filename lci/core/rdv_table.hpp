// The id table of rendezvous and RDMA operations in flight: 28 bits of an
// id travel in the immediate data of an RDMA write, and a peer's RTR, FIN,
// NACK and abort name the operation by id.
//
// Not on the short/medium path, so one spin lock guards it. The slot and
// free-id arrays are reserved up front for `expected` operations (the size
// of the device's operation pool), so that in steady state no insert
// allocates, and none grows an array while holding the lock; more
// operations than that (heap overflow of the pool) grow it, rarely.
#pragma once

#include <cstdint>
#include <mutex>
#include <vector>

#include "lci/util/log.hpp"
#include "lci/util/spin.hpp"

namespace lci {

struct rdv_op;

class rdv_table {
 public:
  static constexpr uint32_t max_id = (1u << 28) - 1;

  void reserve(size_t expected) {
    std::lock_guard<spin_lock> guard(lock_);
    slots_.reserve(expected);
    free_.reserve(expected);
  }
  uint32_t insert(rdv_op* op) {
    std::lock_guard<spin_lock> guard(lock_);
    if (!free_.empty()) {
      const uint32_t id = free_.back();
      free_.pop_back();
      slots_[id] = op;
      return id;
    }
    const auto id = static_cast<uint32_t>(slots_.size());
    LCI_ASSERT(id <= max_id, "more than %u rendezvous in flight", max_id);
    slots_.push_back(op);
    return id;
  }
  // Ids in use (ops and reservations); diagnostics.
  size_t in_use() {
    std::lock_guard<spin_lock> guard(lock_);
    return slots_.size() - free_.size();
  }
  rdv_op* get(uint32_t id) {
    std::lock_guard<spin_lock> guard(lock_);
    return id < slots_.size() ? live(slots_[id]) : nullptr;
  }
  // An id whose op is not visible yet (get and take find nothing there)...
  uint32_t reserve() { return insert(reserved()); }
  // ... until it is published.
  void publish(uint32_t id, rdv_op* op) {
    std::lock_guard<spin_lock> guard(lock_);
    slots_[id] = op;
  }
  // Erases `id` if it still holds `op` (another thread may have taken it).
  void erase_if_same(uint32_t id, const rdv_op* op) {
    std::lock_guard<spin_lock> guard(lock_);
    if (id >= slots_.size() || slots_[id] != op) return;
    slots_[id] = nullptr;
    free_.push_back(id);
  }
  // The op at `id` if pred(op) holds, erased: whoever takes an op owns it
  // (a peer's message and a failed peer's sweep never both act on one).
  template <class Pred>
  rdv_op* take_if(uint32_t id, Pred&& pred) {
    std::lock_guard<spin_lock> guard(lock_);
    if (id >= slots_.size() || live(slots_[id]) == nullptr || !pred(slots_[id])) return nullptr;
    rdv_op* op = slots_[id];
    slots_[id] = nullptr;
    free_.push_back(id);
    return op;
  }
  // Every op for which pred(op) holds, erased and appended to *out.
  template <class Pred, class Out>
  void take_all_if(Pred&& pred, Out* out) {
    std::lock_guard<spin_lock> guard(lock_);
    for (uint32_t id = 0; id < slots_.size(); ++id) {
      rdv_op* op = live(slots_[id]);
      if (op == nullptr || !pred(op)) continue;
      slots_[id] = nullptr;
      free_.push_back(id);
      out->push_back(op);
    }
  }
  // Diagnostics (the state dump): calls f(id, op) for every live op under
  // the table's lock, which is tried with a bound (try_lock_bounded), never
  // waited for; false, having called nothing, if it could not be taken.
  // While f runs no finisher can take an op out and free it; f must not
  // call into the table.
  template <class F>
  bool for_each(F&& f) {
    if (!try_lock_bounded(lock_)) return false;
    std::lock_guard<spin_lock> guard(lock_, std::adopt_lock);
    for (uint32_t id = 0; id < slots_.size(); ++id)
      if (const rdv_op* op = live(slots_[id])) f(id, op);
    return true;
  }

 private:
  // The placeholder of a reserved id (never dereferenced).
  static rdv_op* reserved() { return reinterpret_cast<rdv_op*>(uintptr_t{1}); }
  static rdv_op* live(rdv_op* op) { return op == reserved() ? nullptr : op; }

  spin_lock lock_;
  std::vector<rdv_op*> slots_;
  std::vector<uint32_t> free_;
};

}  // namespace lci

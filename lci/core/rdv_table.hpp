// The id table of rendezvous and RDMA operations in flight: 28 bits of an
// id travel in the immediate data of an RDMA write, and a peer's RTR, FIN,
// NACK and abort name the operation by id.
//
// Not on the short/medium path, so one spin lock guards it. The slot and
// free-id arrays are reserved up front for `expected` operations (the size
// of the device's operation pool), so that in steady state no insert
// allocates, and none grows an array while holding the lock; more
// operations than that (heap overflow of the pool) grow it, rarely.
//
// Every insert and publish stamps its slot with a new serial. A thread that
// let an op go (its RTS or RTR left, or it began to wait for a reply) and
// must come back to it names it by id and serial, never by its address: by
// then another thread may have finished it, the pool handed the same memory
// to a new op and the table its id (both are reused last-freed first), and
// an address compare would take the new op, someone else's.
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
    serials_.reserve(expected);
    free_.reserve(expected);
  }
  // The op's id; *serial (if given) gets the stamp that take_if_current
  // wants, and *id_field (the op's own id, if given) the id, both written
  // before another thread can find the op.
  uint32_t insert(rdv_op* op, uint64_t* serial = nullptr, uint32_t* id_field = nullptr) {
    std::lock_guard<spin_lock> guard(lock_);
    const uint64_t stamp = ++next_serial_;
    if (serial) *serial = stamp;
    uint32_t id;
    if (!free_.empty()) {
      id = free_.back();
      free_.pop_back();
      slots_[id] = op;
      serials_[id] = stamp;
    } else {
      id = static_cast<uint32_t>(slots_.size());
      LCI_ASSERT(id <= max_id, "more than %u rendezvous in flight", max_id);
      slots_.push_back(op);
      serials_.push_back(stamp);
    }
    if (id_field) *id_field = id;
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
  // ... until it is published; returns the serial for take_if_current.
  uint64_t publish(uint32_t id, rdv_op* op) {
    std::lock_guard<spin_lock> guard(lock_);
    slots_[id] = op;
    return serials_[id] = ++next_serial_;
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
  // The op that insert or publish stamped `serial` at `id`, erased, if it
  // is still there (nobody took it); else nullptr.
  rdv_op* take_if_current(uint32_t id, uint64_t serial) {
    std::lock_guard<spin_lock> guard(lock_);
    if (id >= slots_.size() || live(slots_[id]) == nullptr || serials_[id] != serial)
      return nullptr;
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
  std::vector<uint64_t> serials_;  // per slot: the stamp of its last insert or publish
  std::vector<uint32_t> free_;
  uint64_t next_serial_ = 0;
};

}  // namespace lci

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
  rdv_op* get(uint32_t id) {
    std::lock_guard<spin_lock> guard(lock_);
    return id < slots_.size() ? slots_[id] : nullptr;
  }
  void erase(uint32_t id) {
    std::lock_guard<spin_lock> guard(lock_);
    slots_[id] = nullptr;
    free_.push_back(id);
  }

 private:
  spin_lock lock_;
  std::vector<rdv_op*> slots_;
  std::vector<uint32_t> free_;
};

}  // namespace lci

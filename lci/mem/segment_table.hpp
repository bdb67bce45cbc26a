// The memory a device's program registered (LCI_memory_register,
// LCI_lbuffer_alloc/memalign): the only memory a peer's message may name as
// the place to write to or read from (put_to targets, putv/getv piggy-back
// buffers) or report back (the segments of a put/get notification).
// Addresses that arrive in messages are checked here before they are used.
//
// A spin lock guards an ordered map of ranges; registering is rare and a
// lookup is a tree walk over the program's segments (usually a handful), on
// the arrival path of the message kinds above only.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>

#include "lci/util/spin.hpp"

namespace lci {

class segment_table {
 public:
  void add(uintptr_t base, size_t length, uint64_t handle) {
    lock_.lock();
    ranges_.emplace(base, range{length, handle});
    lock_.unlock();
  }
  void remove(uintptr_t base, uint64_t handle) {
    lock_.lock();
    auto [first, last] = ranges_.equal_range(base);
    for (auto it = first; it != last; ++it)
      if (it->second.handle == handle) {
        ranges_.erase(it);
        break;
      }
    lock_.unlock();
  }
  // Whether [address, address + length) lies inside one registered segment
  // (and, when `handle` is not 0, inside the segment with that handle).
  bool covers(uintptr_t address, size_t length, uint64_t handle = 0) {
    lock_.lock();
    bool found = false;
    for (auto it = ranges_.upper_bound(address); it != ranges_.begin();) {
      --it;
      const uintptr_t offset = address - it->first;  // it->first <= address
      if (offset <= it->second.length && length <= it->second.length - offset &&
          (handle == 0 || handle == it->second.handle)) {
        found = true;
        break;
      }
    }
    lock_.unlock();
    return found;
  }

 private:
  struct range {
    size_t length;
    uint64_t handle;
  };
  spin_lock lock_;
  std::multimap<uintptr_t, range> ranges_;
};

}  // namespace lci

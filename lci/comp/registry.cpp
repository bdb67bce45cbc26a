// See registry.hpp.
#include "lci/comp/registry.hpp"

#include <unordered_set>

#include "lci/comp/comp.hpp"
#include "lci/util/spin.hpp"

namespace lci::comp_registry {
namespace {

struct alignas(64) stripe {
  spin_lock lock;
  std::unordered_set<uint64_t> live;
};

constexpr size_t stripe_count = 64;

stripe& stripe_of(uint64_t handle) noexcept {
  // Never destroyed: objects may be freed during exit, after static
  // destructors ran. Heap objects are 16-byte aligned: hash the bits above.
  static stripe* const stripes = new stripe[stripe_count];
  const uint64_t h = (handle >> 4) * 0x9e3779b97f4a7c15ull;
  return stripes[h >> 58];
}

}  // namespace

void add(const comp_base* c) {
  const uint64_t h = reinterpret_cast<uint64_t>(c);
  stripe& s = stripe_of(h);
  s.lock.lock();
  s.live.insert(h);
  s.lock.unlock();
}

void remove(const comp_base* c) noexcept {
  const uint64_t h = reinterpret_cast<uint64_t>(c);
  stripe& s = stripe_of(h);
  s.lock.lock();
  s.live.erase(h);
  s.lock.unlock();
}

comp_base* find(uint64_t handle) noexcept {
  stripe& s = stripe_of(handle);
  s.lock.lock();
  const bool found = s.live.count(handle) != 0;
  s.lock.unlock();
  return found ? reinterpret_cast<comp_base*>(handle) : nullptr;
}

}  // namespace lci::comp_registry

// The live-handle registry (see handles.hpp).
#include "lci/core/handles.hpp"

#include <iterator>
#include <mutex>
#include <unordered_map>

#include "lci.h"
#include "lci/core/device.hpp"
#include "lci/core/endpoint.hpp"
#include "lci/core/reg_types.hpp"

namespace lci::debug {
namespace {
std::mutex g_mutex;
std::unordered_map<const void*, handle_kind>& registry() {
  static auto* map = new std::unordered_map<const void*, handle_kind>;
  return *map;
}
}  // namespace

const char* kind_name(handle_kind k) {
  switch (k) {
    case handle_kind::device: return "device";
    case handle_kind::endpoint: return "endpoint";
    case handle_kind::plist: return "property list";
    case handle_kind::queue: return "completion queue";
    case handle_kind::sync: return "synchronizer";
    case handle_kind::handler: return "handler";
    case handle_kind::segment: return "segment";
    case handle_kind::collective: return "collective";
  }
  return "object";
}

bool lookup(const void* handle, handle_kind* kind) {
  std::lock_guard<std::mutex> guard(g_mutex);
  auto it = registry().find(handle);
  if (it == registry().end()) return false;
  *kind = it->second;
  return true;
}

void track(const void* handle, handle_kind kind) {
  if (!enabled) return;
  std::lock_guard<std::mutex> guard(g_mutex);
  registry()[handle] = kind;
}

void untrack(const void* handle) {
  if (!enabled) return;
  std::lock_guard<std::mutex> guard(g_mutex);
  registry().erase(handle);
}

void untrack_device_objects(const void* device) {
  if (!enabled) return;
  std::lock_guard<std::mutex> guard(g_mutex);
  for (auto it = registry().begin(); it != registry().end();) {
    bool gone = false;
    if (it->second == handle_kind::endpoint)
      gone = static_cast<const endpoint*>(it->first)->dev == device;
    else if (it->second == handle_kind::segment)
      gone = static_cast<const LCII_mr_t*>(it->first)->dev == device;
    it = gone ? registry().erase(it) : std::next(it);
  }
}

bool is_live(const void* handle, handle_kind kind) {
  handle_kind k;
  return lookup(handle, &k) && k == kind;
}

}  // namespace lci::debug

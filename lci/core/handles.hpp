// The live-handle registry of debug builds: every object the C API hands
// out (device, endpoint, plist, completion object, segment, collective) is
// recorded here when created and erased when freed, so that argument checks
// (lci/api/check.hpp) can tell a live handle from a freed or foreign pointer
// without reading it. In release builds (enabled == false) every call is a
// no-op the compiler removes.
//
// One mutex guards the map: only debug builds touch it, and only in
// create/free calls and argument checks, never on a release data path.
#pragma once

namespace lci::debug {

enum class handle_kind { device, endpoint, plist, queue, sync, handler, segment, collective };

#if LCI_ENABLE_DEBUG
inline constexpr bool enabled = true;
#else
inline constexpr bool enabled = false;
#endif

void track(const void* handle, handle_kind kind);
void untrack(const void* handle);
// Untracks the endpoints and segments of a device that is being freed.
void untrack_device_objects(const void* device);
bool is_live(const void* handle, handle_kind kind);
// What the registry knows about a handle: true and its kind, or false.
bool lookup(const void* handle, handle_kind* kind);
// "device", "completion queue", ...: for messages.
const char* kind_name(handle_kind k);

}  // namespace lci::debug

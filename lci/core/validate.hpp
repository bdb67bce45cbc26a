// Arriving messages that fail validation: the header fields and payload
// counts of every message are checked before the core uses them (see
// on_arrival in device.cpp); one that fails is dropped, its packet returned
// to the pool, and a warning names the field and the source rank (at most
// one line a second, with the count of drops so far).
#pragma once

#include <atomic>
#include <cstdint>

namespace lci {

struct device;
struct packet;

// Messages dropped by this process since it started.
extern std::atomic<uint64_t> g_dropped_messages;

// Counts and reports a dropped message (rate-limited warning).
void report_dropped(const char* what, const char* field, int rank);
// The same, and returns the message's packet to d's pool.
void drop_message(device& d, packet* p, const char* what, const char* field, int rank);

}  // namespace lci

// The completion objects alive in this process, so that a completion handle
// that arrives in a message (the `remote_completion` of a one-sided
// operation, which the origin's program got from this process) is used only
// when it names one of them: a forged or stale value is never dereferenced.
//
// Every comp_base registers itself when constructed and leaves when
// destroyed (comp.hpp). The table is striped: a handle hashes to one of 64
// cache-line-sized stripes, each a spin lock and a hash set, so lookups on
// the arrival path take one uncontended lock and unrelated creations do not
// meet.
#pragma once

#include <cstdint>

namespace lci {

struct comp_base;

namespace comp_registry {

// Exported from liblci (hidden by default) for the unit tests, whose
// completion objects call them too.
#define LCI_REGISTRY_EXPORT __attribute__((visibility("default")))
LCI_REGISTRY_EXPORT void add(const comp_base* c);
LCI_REGISTRY_EXPORT void remove(const comp_base* c) noexcept;
// The live object whose address is `handle`, or nullptr.
LCI_REGISTRY_EXPORT comp_base* find(uint64_t handle) noexcept;
#undef LCI_REGISTRY_EXPORT

}  // namespace comp_registry
}  // namespace lci

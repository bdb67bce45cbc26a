// A dispatch table: one handler per kind of a small enum (a message kind, a
// control kind, a completion kind, ...), filled at static initialisation by
// the module that owns the kind (progress.hpp lists the tables and their
// registration macros). A global table is constant-initialised (all null,
// all counts 0) before any registration runs, so registrations may run in
// any order; after start-up it is only read, by the thread that dispatches.
//
// Every registration is counted, a refused second one too, so that
// check_table can report a kind with no handler or with more than one.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace lci {

template <class Handler, size_t N>
struct handler_table {
  Handler slot[N];
  uint8_t registrations[N];

  // Sets the handler of `kind`. False when the kind is out of range or
  // already had a handler (which stays).
  bool add(size_t kind, Handler handler) {
    if (kind >= N) return false;
    if (registrations[kind] < UINT8_MAX) ++registrations[kind];
    if (slot[kind]) return false;
    slot[kind] = handler;
    return true;
  }
  Handler operator[](size_t kind) const { return slot[kind]; }
  static constexpr size_t size() { return N; }
};

// Appends to `problems` one line per kind of `table` that breaks "every
// kind of `expected` has exactly one handler, every other kind none", e.g.
// "control kind 2: 0 handlers".
template <class Table, class Kind, size_t M>
void check_table(const Table& table, const char* what, const Kind (&expected)[M],
                 std::vector<std::string>& problems) {
  for (size_t kind = 0; kind < Table::size(); ++kind) {
    bool wanted = false;
    for (const Kind k : expected) wanted |= static_cast<size_t>(k) == kind;
    const unsigned n = table.registrations[kind];
    if (n != (wanted ? 1u : 0u) || (wanted && !table.slot[kind]))
      problems.push_back(std::string(what) + " " + std::to_string(kind) + ": " +
                         std::to_string(n) + (n == 1 ? " handler" : " handlers") +
                         (wanted ? " (needs exactly one)" : " (needs none)"));
  }
}

}  // namespace lci

// Private to lci/bootstrap/: the factories open() chooses between and the
// checks every implementation shares. Not installed, not included by the
// rest of the library (it only sees bootstrap.hpp).
#pragma once

#include <memory>
#include <string>

#include "lci/bootstrap/bootstrap.hpp"

namespace lci::bootstrap::detail {

// Logs "bootstrap: <message>" through lci::fatal_exit (lci/util/log.hpp)
// and ends the process with status 1. _Exit, not exit: static destructors
// could re-enter a broken bootstrap (a pmi1 destructor sends finalize).
[[noreturn]] void fatal(const std::string& message);

// Which rule stated on bootstrap::put `key` / `value` breaks (a phrase to
// follow the key or value in a message), or nullptr if none.
const char* key_problem(const std::string& key);
const char* value_problem(const std::string& value);
// Fatal unless `key` / `value` follow the rules stated on bootstrap::put.
void check_key(const char* who, const std::string& key);
void check_value(const char* who, const std::string& key, const std::string& value);

// Process exit status for abort(code): code itself when it is a valid
// nonzero status, otherwise 1, so an abort never looks like a success.
int abort_status(int code);

// `name` is what name() reports: "lcrun" or "pmi1".
std::unique_ptr<bootstrap> open_pmi1(const char* name);
std::unique_ptr<bootstrap> open_local();
#ifdef LCI_HAVE_PMIX
// Only in builds with PMIx (pmix.cpp is left out of the others).
std::unique_ptr<bootstrap> open_pmix();
#endif

}  // namespace lci::bootstrap::detail

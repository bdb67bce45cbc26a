// Parsers of the values of LCI_* environment variables (the table in
// config.cpp applies them and makes a refused value fatal, naming the
// variable). They accept any text and refuse, never guess: a value is
// either exactly of the expected form or an error.
#pragma once

#include <cstdint>
#include <string>

#include "lci.h"
#include "lci/util/parse_int.hpp"

namespace lci {

// LCI_BACKEND_TRY_LOCK_MODE: a comma-separated list of the words none,
// send, recv, poll, global, global_b, each mapped to its bit.
inline bool parse_try_lock_mode(const char* text, uint64_t& out) {
  static const struct { const char* word; uint64_t bit; } words[] = {
      {"none", 0}, {"send", LCI_BACKEND_TRY_LOCK_SEND}, {"recv", LCI_BACKEND_TRY_LOCK_RECV},
      {"poll", LCI_BACKEND_TRY_LOCK_POLL}, {"global", LCI_BACKEND_TRY_LOCK_GLOBAL},
      {"global_b", LCI_BACKEND_LOCK_GLOBAL}};
  uint64_t mode = 0;
  const std::string s(text);
  size_t pos = 0;
  while (pos <= s.size()) {
    const size_t comma = s.find(',', pos);
    const std::string word =
        s.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    bool found = false;
    for (auto& w : words)
      if (word == w.word) { mode |= w.bit; found = true; }
    if (!found) return false;
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  out = mode;
  return true;
}

}  // namespace lci

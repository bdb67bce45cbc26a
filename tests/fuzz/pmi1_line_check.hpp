// What every PMI-1 line parse must satisfy, checked by the fuzzers of both
// ends of the protocol (fuzz_pmi1_client, fuzz_lcrun_server).
#pragma once

#include <string>

#include "lci/bootstrap/pmi1_wire.hpp"
#include "tests/fuzz/fuzz_util.hpp"

namespace lci::fuzz {

// Parses `text` and checks the result: no key holds a separator, no value
// a space or tab, the text is kept, and writing the fields back as
// "key=value ..." parses to the same fields.
inline bootstrap::pmi1_wire::line parse_checked(const std::string& text) {
  using bootstrap::pmi1_wire::parse_line;
  bootstrap::pmi1_wire::line l = parse_line(text);
  require(l.text == text);
  std::string again;
  for (const auto& [key, value] : l.fields) {
    require(key.find_first_of(" \t=") == std::string::npos);
    require(value.find_first_of(" \t") == std::string::npos);
    again += key + "=" + value + " ";
  }
  require(parse_line(again).fields == l.fields);
  // find() takes the first of repeated keys (keys are looked up by C string).
  if (!l.fields.empty() && l.fields.front().first.find('\0') == std::string::npos)
    require(l.find(l.fields.front().first.c_str()) == &l.fields.front().second);
  return l;
}

}  // namespace lci::fuzz

// Fuzzes the PMI-1 client's side of the wire (lci/bootstrap/pmi1.cpp): the
// input is what a process manager sends, framed into lines as the client's
// line_stream does; each line is parsed (pmi1_wire::parse_line) and its
// fields read as the client reads the replies it expects (the cmd and rc,
// "cmd=set size=|rank=" after initack, get_maxes' limits, kvsname, value),
// with the client's range checks on every number.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>

#include "lci/bootstrap/pmi1_wire.hpp"
#include "tests/fuzz/fuzz_util.hpp"
#include "tests/fuzz/pmi1_line_check.hpp"

namespace {

using namespace lci::bootstrap::pmi1_wire;
using lci::fuzz::require;

volatile size_t g_sink;

// parse_int as the client uses it: an accepted number prints and parses
// back to itself.
void check_number(const std::string* text) {
  if (text == nullptr) return;
  long v = 0;
  if (!parse_int(text->c_str(), v)) return;
  char printed[32];
  std::snprintf(printed, sizeof printed, "%ld", v);
  long again = 0;
  require(parse_int(printed, again) && again == v);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  for (const std::string& text : lci::fuzz::stream_lines(data, size)) {
    const line r = lci::fuzz::parse_checked(text);
    const std::string cmd = r.get_or("cmd", "");
    const bool error = r.get_or("rc", "0") != "0";
    for (const char* key : {"size", "rank", "keylen_max", "vallen_max", "appnum"})
      check_number(r.find(key));
    size_t n = cmd.size() + error;
    if (const std::string* v = r.find("value")) n += v->size();
    if (const std::string* k = r.find("kvsname")) n += k->size();
    n += r.get_or("msg", "?").size();
    g_sink = n;
  }
  return 0;
}

// Fuzzes lcrun's side of the PMI-1 wire (tools/lcrun/pmi_server.cpp): the input is
// what a rank sends, framed into lines as lcrun's receive() does (empty
// lines skipped); each line is parsed (pmi1_wire::parse_line) and its
// fields read as handle() reads a request: cmd, pmi_version, kvsname, key
// and value with their length limits, abort's exitcode and its
// percent-encoded message, which must decode to printable text on one line.
// Also checks that percent_decode undoes the client's percent_encode.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "lci/bootstrap/pmi1_wire.hpp"
#include "tests/fuzz/fuzz_util.hpp"
#include "tests/fuzz/pmi1_line_check.hpp"

namespace {

using namespace lci::bootstrap::pmi1_wire;
using lci::fuzz::require;

volatile size_t g_sink;

bool control(char c) { return static_cast<unsigned char>(c) < ' ' || c == '\x7f'; }

// An abort message as lcrun prints it: no control characters (one line,
// no terminal escapes), never longer than sent.
void check_message(const std::string& encoded) {
  const std::string text = percent_decode(encoded);
  require(text.size() <= encoded.size());
  for (char c : text) require(!control(c));
}

// Client to server: the message arrives as sent, but for control
// characters (spaces) and what lies past 512 bytes.
void check_round_trip(const std::string& message) {
  const std::string encoded = percent_encode(message);
  require(encoded.find_first_of(" \t\n\r") == std::string::npos);
  require(parse_line("error_msg=" + encoded).get_or("error_msg", "") == encoded);
  std::string expected = message.substr(0, 512);
  for (char& c : expected)
    if (control(c)) c = ' ';
  require(percent_decode(encoded) == expected);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  for (const std::string& text : lci::fuzz::stream_lines(data, size)) {
    if (text.empty()) continue;
    const line f = lci::fuzz::parse_checked(text);
    const std::string* cmd = f.find("cmd");
    if (cmd == nullptr) continue;  // lcrun: unsupported line, the job ends
    size_t n = cmd->size();
    for (const char* key : {"pmi_version", "kvsname", "key", "value"})
      if (const std::string* v = f.find(key)) n += v->size();
    if (*cmd == "abort") {
      if (const std::string* c = f.find("exitcode")) n += std::strtol(c->c_str(), nullptr, 10);
      const std::string* msg = f.find("error_msg");
      if (msg == nullptr) msg = f.find("message");
      if (msg != nullptr) check_message(*msg);
    }
    g_sink = n;
  }
  check_round_trip(std::string(reinterpret_cast<const char*>(data), size));
  return 0;
}

// Fuzzes the parser of LCI_segment_deserialize (parse_segment in
// lci/core/segment_codec.hpp), which reads a string another process sent:
// any NUL-terminated input must be refused or parsed, and a parsed one
// must be written back by LCI_segment_serialize's format_segment into the
// 256 bytes the API gives, and parse again to the same fields.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

#include "lci/core/segment_codec.hpp"
#include "tests/fuzz/fuzz_util.hpp"

using lci::fuzz::require;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text = lci::fuzz::c_string(data, size);
  lci::segment_text s;
  if (!lci::parse_segment(text.c_str(), s)) return 0;
  require(text.compare(0, 9, "lci-seg1:") == 0);
  char out[lci::segment_text_size];
  lci::format_segment(s, out);
  require(std::strlen(out) < sizeof out);
  lci::segment_text again;
  require(lci::parse_segment(out, again));
  require(again.group == s.group && again.base == s.base && again.length == s.length &&
          again.rkey == s.rkey && again.handle == s.handle && again.virt == s.virt);
  return 0;
}

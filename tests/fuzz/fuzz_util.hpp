// Helpers shared by the fuzz targets of tests/fuzz.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

namespace lci::fuzz {

// A fuzzer's assertion: abort, which libFuzzer reports with the input.
inline void require(bool ok) {
  if (!ok) std::abort();
}

// The lines of a byte stream as both ends of a PMI-1 connection frame it:
// split at '\n', a trailing '\r' dropped; the bytes after the last '\n'
// are an incomplete line and are not returned.
inline std::vector<std::string> stream_lines(const uint8_t* data, size_t size) {
  std::vector<std::string> lines;
  const std::string in(reinterpret_cast<const char*>(data), size);
  size_t start = 0, nl;
  while ((nl = in.find('\n', start)) != std::string::npos) {
    std::string line = in.substr(start, nl - start);
    if (!line.empty() && line.back() == '\r') line.pop_back();
    lines.push_back(std::move(line));
    start = nl + 1;
  }
  return lines;
}

// The input as a NUL-terminated string (cut at its first NUL byte).
inline std::string c_string(const uint8_t* data, size_t size) {
  return std::string(reinterpret_cast<const char*>(data), size).c_str();
}

}  // namespace lci::fuzz

// Text helpers for lcrun's unit tests (test_lcrun_*.cpp): what a tool
// printed to a temporary file, read back whole.
#pragma once

#include <cstdio>
#include <string>

namespace lcrun_test {

// Everything written to f (a std::tmpfile()) since it was created; closes f.
inline std::string take_text(std::FILE* f) {
  std::fflush(f);
  std::rewind(f);
  std::string text;
  char buf[4096];
  for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, f)) > 0;) text.append(buf, n);
  std::fclose(f);
  return text;
}

}  // namespace lcrun_test

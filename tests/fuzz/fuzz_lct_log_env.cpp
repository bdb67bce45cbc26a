// Fuzzes LCT's parsing of its log settings (lct/log.cpp), which a program
// takes from the environment (<CTX>_LOG_LEVEL, _LOG_WHITELIST,
// _LOG_BLACKLIST) or passes to LCT_log_ctx_alloc: a level by name or
// number and comma-separated tag lists. Any text must be taken or refused
// (an unknown level keeps the default, with a warning), never abort, and
// logging through the parsed settings must work.
//
// Input: the level, the whitelist, the blacklist and a tag, separated by
// NUL bytes.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "lct.h"
#include "tests/fuzz/fuzz_util.hpp"

using lci::fuzz::require;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::vector<std::string> parts(4);
  size_t part = 0;
  for (size_t i = 0; i < size; ++i) {
    if (data[i] == '\0' && part < 3)
      ++part;
    else
      parts[part].push_back(static_cast<char>(data[i]));
  }
  static const char* const names[] = {"error", "warn", "info", "debug"};
  char out[] = "/dev/null";
  LCT_log_ctx_t ctx = LCT_log_ctx_alloc(names, 4, 1, "fuzz", out, &parts[0][0], &parts[1][0],
                                        &parts[2][0]);
  const int level = LCT_log_get_level(ctx);
  require(level >= 0 && level < 1000);
  LCT_Log(ctx, 2, parts[3].c_str(), "a message for tag %s", parts[3].c_str());
  LCT_Log(ctx, 0, nullptr, "an untagged message");
  LCT_log_ctx_free(&ctx);
  require(ctx == nullptr);
  return 0;
}

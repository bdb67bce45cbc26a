// LCT_args_parser_*: named integer options parsed with getopt_long.
//
// The parser keeps the options in registration order and builds getopt's
// table at parse time. It only writes through the registered pointers; it
// never keeps argv. getopt's global state (optind, opterr) is reset before
// and after each parse, so parse may be called more than once; like getopt
// itself it is not thread-safe. See lct.h ("Args parser") for the rules.
#include <getopt.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "lct.h"
#include "lct/internal.hpp"

namespace {

struct option_spec {
  std::string name;
  int has_arg;
  int* ptr;
  std::vector<LCT_dict_str_int_t> dict;  // empty: integers
  std::vector<std::string> dict_keys;    // owns the keys' text
};

struct args_parser {
  std::vector<option_spec> options;
};

[[noreturn]] void usage_error(const std::string& message) {
  std::fflush(stdout);
  std::fprintf(stderr, "LCT_args_parser: %s\n", message.c_str());
  std::exit(1);
}

int parse_int(const option_spec& o, const char* text) {
  char* end = nullptr;
  errno = 0;
  long v = std::strtol(text, &end, 0);
  if (end == text || *end != '\0' || errno != 0 || v < INT32_MIN || v > INT32_MAX)
    usage_error("option --" + o.name + ": '" + text + "' is not an integer");
  return static_cast<int>(v);
}

int parse_dict(option_spec& o, const char* text) {
  std::string unknown;
  std::string known;
  for (const auto& e : o.dict) known += std::string(known.empty() ? "" : ", ") + e.key;
  // Every word must be a key; LCT_parse_arg would only warn.
  std::string s(text);
  size_t pos = 0;
  while (pos <= s.size()) {
    size_t end = s.find(',', pos);
    if (end == std::string::npos) end = s.size();
    std::string word = s.substr(pos, end - pos);
    int v;
    if (word.empty() ||
        !LCT_str_int_search(o.dict.data(), static_cast<int>(o.dict.size()), word.c_str(), 0, &v))
      usage_error("option --" + o.name + ": '" + word + "' is not one of: " + known);
    pos = end + 1;
  }
  return static_cast<int>(
      LCT_parse_arg(o.dict.data(), static_cast<int>(o.dict.size()), text, ","));
}

void store(option_spec& o, const char* value) {
  if (value == nullptr) {
    *o.ptr = 1;  // a flag, or an optional argument left out
    return;
  }
  *o.ptr = o.dict.empty() ? parse_int(o, value) : parse_dict(o, value);
}

// The dictionary key of the option's value, or "" if none matches.
const char* key_of(const option_spec& o) {
  for (const auto& e : o.dict)
    if (e.val == *o.ptr) return e.key;
  return "";
}

const char* arg_kind(int has_arg) {
  switch (has_arg) {
    case no_argument: return "flag";
    case required_argument: return "required argument";
    default: return "optional argument";
  }
}

void add(LCT_args_parser_t parser, const char* name, int has_arg, int* ptr,
         LCT_dict_str_int_t dict[], int count) {
  if (parser == nullptr || name == nullptr || ptr == nullptr)
    lct::detail::fatal("LCT_args_parser_add", "NULL parser, name or pointer");
  if (has_arg != no_argument && has_arg != required_argument && has_arg != optional_argument)
    lct::detail::fatal("LCT_args_parser_add", "option --%s: has_arg %d is not 0, 1 or 2", name,
                       has_arg);
  option_spec o;
  o.name = name;
  o.has_arg = has_arg;
  o.ptr = ptr;
  for (int i = 0; i < count; ++i) o.dict_keys.emplace_back(dict[i].key);
  for (int i = 0; i < count; ++i) o.dict.push_back({nullptr, dict[i].val});
  static_cast<args_parser*>(parser)->options.push_back(std::move(o));
  option_spec& kept = static_cast<args_parser*>(parser)->options.back();
  for (size_t i = 0; i < kept.dict.size(); ++i) kept.dict[i].key = kept.dict_keys[i].c_str();
}

}  // namespace

LCT_args_parser_t LCT_args_parser_alloc(void) noexcept try {
  return new args_parser;
} catch (...) {
  lct::detail::fatal_exception(__func__);
}

void LCT_args_parser_free(LCT_args_parser_t parser) noexcept try {
  delete static_cast<args_parser*>(parser);
} catch (...) {
  lct::detail::fatal_exception(__func__);
}

void LCT_args_parser_add(LCT_args_parser_t parser, const char* name, int has_arg,
                         int* ptr) noexcept try {
  add(parser, name, has_arg, ptr, nullptr, 0);
} catch (...) {
  lct::detail::fatal_exception(__func__);
}

void LCT_args_parser_add_dict(LCT_args_parser_t parser, const char* name, int has_arg, int* ptr,
                              LCT_dict_str_int_t dict[], int count) noexcept try {
  add(parser, name, has_arg, ptr, dict, count);
} catch (...) {
  lct::detail::fatal_exception(__func__);
}

void LCT_args_parser_parse(LCT_args_parser_t parser, int argc, char* argv[]) noexcept try {
  auto& p = *static_cast<args_parser*>(parser);
  constexpr int first_val = 256;  // above every character getopt returns
  std::vector<struct option> table;
  for (size_t i = 0; i < p.options.size(); ++i)
    table.push_back({p.options[i].name.c_str(), p.options[i].has_arg, nullptr,
                     first_val + static_cast<int>(i)});
  table.push_back({nullptr, 0, nullptr, 0});
  const int saved_opterr = opterr;
  opterr = 0;
  optind = 0;  // glibc: full re-initialization
  // "-": non-options come back as 1 in place (argv is not permuted);
  // ":": a missing value is ':' rather than '?'.
  for (;;) {
    const int c = getopt_long(argc, argv, "-:", table.data(), nullptr);
    if (c == -1) break;
    if (c == 1) continue;  // a non-option argument: not ours
    if (c >= first_val && c < first_val + static_cast<int>(p.options.size())) {
      store(p.options[static_cast<size_t>(c - first_val)], optarg);
      continue;
    }
    const std::string word = optind >= 1 && optind - 1 < argc ? argv[optind - 1] : "?";
    opterr = saved_opterr;
    if (c == ':') usage_error("option '" + word + "' needs a value");
    if (optopt >= first_val) usage_error("option '" + word + "' takes no value");
    usage_error("unknown option '" + word + "'");
  }
  opterr = saved_opterr;
  optind = 1;
} catch (...) {
  lct::detail::fatal_exception(__func__);
}

void LCT_args_parser_print(LCT_args_parser_t parser, bool verbose) noexcept try {
  auto& p = *static_cast<args_parser*>(parser);
  if (!verbose) {
    std::string line = "args:";
    for (const auto& o : p.options) {
      line += " --" + o.name + " ";
      const char* key = key_of(o);
      line += *key != '\0' ? std::string(key) : std::to_string(*o.ptr);
    }
    std::printf("%s\n", line.c_str());
  } else {
    for (const auto& o : p.options) {
      const char* key = key_of(o);
      if (*key != '\0')
        std::printf("--%s %s (%d) [%s]\n", o.name.c_str(), key, *o.ptr, arg_kind(o.has_arg));
      else
        std::printf("--%s %d [%s]\n", o.name.c_str(), *o.ptr, arg_kind(o.has_arg));
    }
  }
  std::fflush(stdout);
} catch (...) {
  lct::detail::fatal_exception(__func__);
}

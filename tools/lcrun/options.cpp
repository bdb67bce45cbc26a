// lcrun's options (options.hpp): parsing, usage, --prefix word splitting
// and placeholders. Every error names the offending input on err and makes
// lcrun exit with status 2 before any rank starts.
#include "tools/lcrun/options.hpp"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <iterator>

#include "lci/util/signal_name.hpp"
#include "tools/build_info.hpp"

namespace lci::lcrun {
namespace {

// The placeholders of --prefix; any other {lowercase} is a typo.
constexpr const char* placeholders[] = {"rank", "host", "size", "hosts"};

bool parse_count(const char* text, int& out) {
  if (text == nullptr || *text == '\0') return false;
  errno = 0;
  char* end = nullptr;
  long v = std::strtol(text, &end, 10);
  if (errno != 0 || *end != '\0' || v < 1 || v > max_ranks) return false;
  out = static_cast<int>(v);
  return true;
}

// If argv[i] is one of names, as "-x V" or "-x=V", stores V (advancing i
// past a separate value) and returns true; name is the spelling matched.
// missing is set when the option is the last argument.
bool option_value(int argc, char** argv, int& i, std::initializer_list<const char*> names,
                  std::string& value, std::string& name, bool& missing) {
  const std::string arg = argv[i];
  for (const char* n : names) {
    const std::string eq = std::string(n) + "=";
    if (arg == n) {
      name = n;
      missing = i + 1 >= argc;
      if (!missing) value = argv[++i];
      return true;
    }
    if (arg.compare(0, eq.size(), eq) == 0) {
      name = n;
      missing = false;
      value = arg.substr(eq.size());
      return true;
    }
  }
  return false;
}

}  // namespace

void usage(std::FILE* out) {
  std::fprintf(out,
               "usage: lcrun [-n N | -np N] [--hosts H] [--prefix CMD] [--keep-going] [--]\n"
               "             prog [args...]\n"
               "\n"
               "Starts N copies (ranks) of prog on this machine and serves them the PMI-1\n"
               "protocol (PMI_FD, PMI_RANK, PMI_SIZE) so that they find each other.\n"
               "\n"
               "  -n N, -np N    number of ranks (default 1, at most %d)\n"
               "  --prefix CMD   start each rank as 'CMD prog args...'. CMD is split into\n"
               "                 words as a shell would (quotes and backslashes; no variables,\n"
               "                 no globbing); in each word {rank} becomes the rank, {host} its\n"
               "                 host index, {size} N and {hosts} H. CMD must exec prog in the\n"
               "                 same process (env, ip netns exec, nsenter, numactl, taskset\n"
               "                 do); the PMI channel is an inherited descriptor, so it also\n"
               "                 works inside another network namespace. Example:\n"
               "                   lcrun -n 4 --hosts 2 --prefix 'ip netns exec node{host}' prog\n"
               "  --hosts H      number of host indices for {host} (default 1): rank r gets\n"
               "                 host r mod H (cyclic: ranks 0 and 1 are on different hosts)\n"
               "  --keep-going   a rank that fails does not end the others: they run on\n"
               "                 (PMI barriers complete among the living) and lcrun exits\n"
               "                 with the worst status, naming the failed ranks at the end;\n"
               "                 for programs run with LCI_PEER_FAILURE=continue\n"
               "  -h, --help     this text\n"
               "  --version      this implementation's name, versions, commit, build type\n"
               "\n"
               "Environment: LCRUN_TIMEOUT=<seconds> ends the job after that long (status 124);\n"
               "first every rank is sent the signal LCI_DUMP_SIGNAL (lcrun sets USR2 unless it\n"
               "is set; none: no signal), on which LCI prints what the rank waits for to\n"
               "stderr, and lcrun waits 2 s for those dumps. LCRUN_STATS=1 prints, at the\n"
               "end, what the job asked of lcrun's PMI server (requests by command, bytes,\n"
               "time spent serving).\n"
               "Exit status: the worst rank status (128+S for a rank killed by signal S).\n"
               "When a rank fails (without --keep-going), the other ranks get SIGTERM, then\n"
               "SIGKILL 2 s later.\n",
               max_ranks);
}

bool split_words(const std::string& text, std::vector<std::string>& words, std::string& why) {
  std::string word;
  bool in_word = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == ' ' || c == '\t' || c == '\n') {
      if (in_word) words.push_back(word);
      word.clear();
      in_word = false;
      continue;
    }
    in_word = true;
    if (c == '\\') {
      if (++i == text.size()) {
        why = "ends with a backslash";
        return false;
      }
      word += text[i];
    } else if (c == '\'') {
      std::size_t end = text.find('\'', i + 1);
      if (end == std::string::npos) {
        why = "has an unterminated ' quote";
        return false;
      }
      word.append(text, i + 1, end - i - 1);
      i = end;
    } else if (c == '"') {
      for (++i;; ++i) {
        if (i >= text.size()) {
          why = "has an unterminated \" quote";
          return false;
        }
        if (text[i] == '"') break;
        if (text[i] == '\\' && i + 1 < text.size() &&
            std::strchr("\"\\$`", text[i + 1]) != nullptr)
          ++i;
        word += text[i];
      }
    } else {
      word += c;
    }
  }
  if (in_word) words.push_back(word);
  return true;
}

std::string unknown_placeholder(const std::string& word) {
  for (std::size_t open = word.find('{'); open != std::string::npos;
       open = word.find('{', open + 1)) {
    std::size_t close = word.find('}', open);
    if (close == std::string::npos) break;
    std::string name = word.substr(open + 1, close - open - 1);
    bool is_name = !name.empty() && std::all_of(name.begin(), name.end(), [](char c) {
      return (c >= 'a' && c <= 'z') || c == '_';
    });
    if (!is_name) continue;
    if (std::find_if(std::begin(placeholders), std::end(placeholders),
                     [&](const char* p) { return name == p; }) == std::end(placeholders))
      return "{" + name + "}";
  }
  return std::string();
}

std::string expand_placeholders(const std::string& word, int rank, const options& opts) {
  const std::string values[] = {std::to_string(rank), std::to_string(rank % opts.nhosts),
                                std::to_string(opts.nranks), std::to_string(opts.nhosts)};
  std::string out;
  for (std::size_t i = 0; i < word.size();) {
    bool replaced = false;
    for (std::size_t p = 0; p < std::size(placeholders) && word[i] == '{'; ++p) {
      const std::string token = std::string("{") + placeholders[p] + "}";
      if (word.compare(i, token.size(), token) == 0) {
        out += values[p];
        i += token.size();
        replaced = true;
        break;
      }
    }
    if (!replaced) out += word[i++];
  }
  return out;
}

int parse_options(int argc, char** argv, options& opts, std::FILE* out, std::FILE* err) {
  int i = 1;
  bool has_prefix = false, has_hosts = false;
  for (; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "-h" || arg == "--help") {
      usage(out);
      return 0;
    }
    if (arg == "--version") {
      std::fprintf(out, "lcrun: %s\n", LCI_BUILD_VERSION_LINE);
      return 0;
    }
    if (arg == "--") {
      ++i;
      break;
    }
    if (arg == "--keep-going") {
      opts.keep_going = true;
      continue;
    }
    std::string value, name;
    bool missing = false;
    if (option_value(argc, argv, i, {"-n", "-np", "--np"}, value, name, missing)) {
      if (missing) {
        std::fprintf(err, "lcrun: %s needs a number\n", name.c_str());
        return 2;
      }
      if (!parse_count(value.c_str(), opts.nranks)) {
        std::fprintf(err, "lcrun: the number of ranks must be 1 to %d, not '%s'\n", max_ranks,
                     value.c_str());
        return 2;
      }
      continue;
    }
    if (option_value(argc, argv, i, {"--hosts"}, value, name, missing)) {
      if (missing) {
        std::fprintf(err, "lcrun: --hosts needs a number\n");
        return 2;
      }
      if (!parse_count(value.c_str(), opts.nhosts)) {
        std::fprintf(err, "lcrun: the number of hosts must be 1 to %d, not '%s'\n", max_ranks,
                     value.c_str());
        return 2;
      }
      has_hosts = true;
      continue;
    }
    if (option_value(argc, argv, i, {"--prefix"}, value, name, missing)) {
      if (missing) {
        std::fprintf(err, "lcrun: --prefix needs a command\n");
        return 2;
      }
      if (has_prefix) {
        std::fprintf(err, "lcrun: --prefix given twice\n");
        return 2;
      }
      std::string why;
      opts.prefix.clear();
      if (!split_words(value, opts.prefix, why)) {
        std::fprintf(err, "lcrun: --prefix '%s' %s\n", value.c_str(), why.c_str());
        return 2;
      }
      if (opts.prefix.empty()) {
        std::fprintf(err, "lcrun: --prefix needs a command, not an empty string\n");
        return 2;
      }
      for (const auto& w : opts.prefix) {
        std::string bad = unknown_placeholder(w);
        if (!bad.empty()) {
          std::fprintf(err,
                       "lcrun: --prefix '%s' has the unknown placeholder %s "
                       "(known: {rank} {host} {size} {hosts})\n",
                       value.c_str(), bad.c_str());
          return 2;
        }
      }
      has_prefix = true;
      continue;
    }
    if (arg.size() > 1 && arg[0] == '-') {
      std::fprintf(err, "lcrun: unknown option '%s'\n", arg.c_str());
      usage(err);
      return 2;
    }
    break;
  }
  if (has_hosts && !has_prefix) {
    std::fprintf(err, "lcrun: --hosts only numbers the {host} of --prefix; give --prefix too\n");
    return 2;
  }
  for (; i < argc; ++i) opts.command.emplace_back(argv[i]);
  if (opts.command.empty()) {
    std::fprintf(err, "lcrun: no program to run\n");
    usage(err);
    return 2;
  }
  if (const char* t = std::getenv("LCRUN_TIMEOUT"); t != nullptr && *t != '\0') {
    char* end = nullptr;
    errno = 0;
    double v = std::strtod(t, &end);
    if (errno != 0 || *end != '\0' || !std::isfinite(v) || v <= 0 || v > 1e7) {
      std::fprintf(err, "lcrun: LCRUN_TIMEOUT='%s' is not a positive number of seconds\n", t);
      return 2;
    }
    opts.timeout_s = v;
    // A malformed LCI_DUMP_SIGNAL is the ranks' to refuse (LCI_initialize).
    if (const char* d = std::getenv("LCI_DUMP_SIGNAL"); d != nullptr) {
      if (!parse_dump_signal(d, opts.dump_signal)) opts.dump_signal = 0;
    } else {
      opts.dump_signal = SIGUSR2;
      opts.set_dump_signal = true;
    }
  }
  return -1;
}

}  // namespace lci::lcrun

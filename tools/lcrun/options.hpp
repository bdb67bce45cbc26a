// lcrun's command line: the options, their usage text, and the --prefix
// machinery (shell-like word splitting and the {rank} {host} {size} {hosts}
// placeholders).
//
//   lcrun [-n N | -np N] [--hosts H] [--prefix CMD] [--] prog [args...]
//
// With --prefix, each rank is started as `CMD prog args...`, where CMD is
// split into words like a shell would (quotes, backslashes; no expansion)
// and {rank}, {host}, {size} and {hosts} in it are replaced per rank; rank r
// is on host r mod H. An unknown {lowercase} placeholder is an error when
// the options are parsed, not when a rank starts. LCRUN_TIMEOUT (seconds)
// is read here too, so every malformed input is rejected before any rank
// runs, and with it LCI_DUMP_SIGNAL (see options::dump_signal). Nothing here starts processes or keeps state between calls.
#pragma once

#include <cstdio>
#include <string>
#include <vector>

namespace lci::lcrun {

constexpr int max_ranks = 4096;

struct options {
  int nranks = 1;
  int nhosts = 1;
  std::vector<std::string> prefix;  // words of --prefix, placeholders not yet replaced
  std::vector<std::string> command;
  double timeout_s = 0;  // 0: none
  bool keep_going = false;  // --keep-going: a rank that fails does not end the others
  // With a timeout: the signal that asks each rank for its LCI state before
  // the job is ended (LCI_DUMP_SIGNAL, lci/core/state_dump.hpp). The user's
  // LCI_DUMP_SIGNAL if set (none or a malformed value: 0, no request); else
  // USR2, which lcrun then sets in the ranks' environment (set_dump_signal).
  int dump_signal = 0;
  bool set_dump_signal = false;
};

// Prints the usage text to out.
void usage(std::FILE* out);

// Splits a --prefix into words the way a POSIX shell splits a simple command
// (blanks separate words; '...' is literal; "..." and \ escape), without any
// expansion. Appends the words to `words`; returns false with a reason for
// an unterminated quote or a trailing backslash.
bool split_words(const std::string& text, std::vector<std::string>& words, std::string& why);

// Returns the first unknown {name} (lowercase letters and '_') in word, or
// an empty string; other text in braces is left alone.
std::string unknown_placeholder(const std::string& word);

// word with {rank}, {host} (rank mod nhosts), {size} (nranks) and {hosts}
// (nhosts) replaced for this rank.
std::string expand_placeholders(const std::string& word, int rank, const options& opts);

// Parses argv (and LCRUN_TIMEOUT) into opts. Returns -1 to go on, or the
// status lcrun should exit with right away: 0 after printing the usage to
// out (-h, --help), 2 after printing an error to err.
int parse_options(int argc, char** argv, options& opts, std::FILE* out = stdout,
                  std::FILE* err = stderr);

}  // namespace lci::lcrun

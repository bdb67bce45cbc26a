// The signal of the state dump (LCI_DUMP_SIGNAL, lci/core/state_dump.hpp):
// parsing and printing its name. Shared with lcrun, which sets the variable
// for its ranks and sends them the signal before a timeout ends the job.
//
// Only signals a library may claim are accepted: SIGUSR1, SIGUSR2 and the
// real-time signals. A number is accepted too, if it is one of those; any
// other text is refused, never guessed.
#pragma once

#include <signal.h>
#include <strings.h>

#include <cstring>

#include <string>

#include "lci/util/parse_int.hpp"

namespace lci {

inline bool dump_signal_allowed(int sig) {
  return sig == SIGUSR1 || sig == SIGUSR2 || (sig >= SIGRTMIN && sig <= SIGRTMAX);
}

// "none", "off" or "0": no signal (0); "USR1", "USR2", "RTMIN+n" (any case,
// optionally with the prefix "SIG"), or the number of an allowed signal.
// False (out unchanged) for anything else.
inline bool parse_dump_signal(const char* text, int& out) {
  if (text == nullptr) return false;
  if (!strcasecmp(text, "none") || !strcasecmp(text, "off") || !strcmp(text, "0")) {
    out = 0;
    return true;
  }
  long long number = 0;
  if (parse_decimal(text, 1, SIGRTMAX, number)) {
    if (!dump_signal_allowed(static_cast<int>(number))) return false;
    out = static_cast<int>(number);
    return true;
  }
  const char* name = strncasecmp(text, "SIG", 3) == 0 ? text + 3 : text;
  int sig = 0;
  if (!strcasecmp(name, "USR1")) {
    sig = SIGUSR1;
  } else if (!strcasecmp(name, "USR2")) {
    sig = SIGUSR2;
  } else if (!strncasecmp(name, "RTMIN+", 6) &&
             parse_decimal(name + 6, 0, SIGRTMAX - SIGRTMIN, number)) {
    sig = SIGRTMIN + static_cast<int>(number);
  } else {
    return false;
  }
  out = sig;
  return true;
}

// The name parse_dump_signal reads back: "none", "USR1", "USR2",
// "RTMIN+n", or the number of any other signal.
inline std::string dump_signal_name(int sig) {
  if (sig == 0) return "none";
  if (sig == SIGUSR1) return "USR1";
  if (sig == SIGUSR2) return "USR2";
  if (sig >= SIGRTMIN && sig <= SIGRTMAX) return "RTMIN+" + std::to_string(sig - SIGRTMIN);
  return std::to_string(sig);
}

}  // namespace lci

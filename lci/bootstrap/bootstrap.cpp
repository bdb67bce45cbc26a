// open(): picks the bootstrap from the environment, plus the checks shared by
// all implementations.
//
// Choice, first match wins (choose() returns it with the reason):
//   LCI_PMI=lcrun|pmi1|pmix|local  explicit override; fatal when the named
//                                  bootstrap is not built or its launcher
//                                  variables are missing;
//   LCT_PMI_BACKEND=LIST           LCI 1.7.9's variable, honoured when
//                                  LCI_PMI is not set: a list of pmi1, pmi2,
//                                  pmix, local (separated by spaces, ';' or
//                                  ','), tried in order; the first whose
//                                  launcher variables are set wins (local
//                                  always). pmi1 and pmi2 both mean our PMI-1
//                                  client (Slurm's mpi/pmi2 plugin and Hydra
//                                  answer PMI-1 on the same PMI_FD). 1.7.9's
//                                  file and mpi are skipped (not provided);
//                                  fatal when nothing in the list is usable;
//   PMI_FD or PMI_PORT set         pmi1, reported as "lcrun" when lcrun set
//                                  LCI_LCRUN=1 (same protocol, clearer logs);
//   PMIX_RANK and PMIX_NAMESPACE   pmix (Open MPI's mpirun, PRRTE,
//   set, or any PMIX_SERVER_URI*   srun --mpi=pmix); fatal in a build
//                                  without PMIx (better than n jobs of one);
//   otherwise                      local: a job of one process.
// PMI-1 goes before PMIx because its variables are only ever set for this
// process by its launcher, whereas PMIX_* may leak from an outer PMIx job
// into an lcrun or Hydra run started inside it.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "lci/bootstrap/bootstrap.hpp"
#include "lci/bootstrap/detail.hpp"
#include "lci/util/log.hpp"

namespace lci::bootstrap {

namespace detail {

void fatal(const std::string& message) { lci::fatal_exit(1, "bootstrap: %s", message.c_str()); }

const char* key_problem(const std::string& key) {
  if (key.empty() || key.size() > 63) return "must have 1 to 63 characters";
  for (char c : key) {
    // Spaces and '=' are the PMI-1 wire separators; anything non-printable
    // could break the line framing.
    if (c <= ' ' || c > '~' || c == '=')
      return "may hold only printable characters other than space and '='";
  }
  return nullptr;
}

const char* value_problem(const std::string& value) {
  if (value.size() > 512) return "is longer than the limit of 512 characters";
  for (char c : value) {
    if (c <= ' ' || c > '~')
      return "may hold only printable characters other than space (encode binary data)";
  }
  return nullptr;
}

void check_key(const char* who, const std::string& key) {
  if (const char* problem = key_problem(key))
    fatal(std::string(who) + ": key '" + key + "' " + problem);
}

void check_value(const char* who, const std::string& key, const std::string& value) {
  if (const char* problem = value_problem(value))
    fatal(std::string(who) + ": value for key '" + key + "' (" + std::to_string(value.size()) +
          " characters) " + problem);
}

int abort_status(int code) { return code > 0 && code < 256 ? code : 1; }

}  // namespace detail

std::vector<std::string> bootstrap::get_all(const std::string& key) {
  std::vector<std::string> values(static_cast<size_t>(size()));
  for (int r = 0; r < size(); ++r) values[static_cast<size_t>(r)] = get(r, key);
  return values;
}

namespace {

bool env_set(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0';
}

bool pmi1_available() { return env_set("PMI_FD") || env_set("PMI_PORT"); }

constexpr bool pmix_built =
#ifdef LCI_HAVE_PMIX
    true;
#else
    false;
#endif

// Name of a set PMIX_SERVER_URI* variable (PMIx has one per protocol
// version: URI2, URI21, URI3, URI4, URI41, ...), or empty.
std::string pmix_server_uri_variable() {
  static const char prefix[] = "PMIX_SERVER_URI";
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    if (std::strncmp(*e, prefix, sizeof(prefix) - 1) != 0) continue;
    const char* eq = std::strchr(*e, '=');
    if (eq != nullptr && eq[1] != '\0') return std::string(*e, static_cast<std::size_t>(eq - *e));
  }
  return {};
}

// Why the environment looks like a PMIx launch, or empty if it does not.
std::string pmix_evidence() {
  if (env_set("PMIX_RANK") && env_set("PMIX_NAMESPACE"))
    return "PMIX_RANK and PMIX_NAMESPACE are set";
  std::string uri = pmix_server_uri_variable();
  if (!uri.empty()) return uri + " is set";
  return {};
}

// LCT_PMI_BACKEND (LCI 1.7.9's bootstrap variable): its list tried in order,
// the first usable entry wins. Called only when LCI_PMI is not set.
choice choose_lct_backend(const std::string& list) {
  const std::string var = "LCT_PMI_BACKEND=" + list;
  std::string skipped;  // "word (why), ..." for the fatal message
  auto skip = [&skipped](const std::string& word, const std::string& why) {
    if (!skipped.empty()) skipped += "; ";
    skipped += word + " (" + why + ")";
  };
  bool any = false;
  std::size_t pos = 0;
  while (pos < list.size()) {
    const std::size_t end = list.find_first_of(" ;,", pos);
    const std::string word = list.substr(pos, end == std::string::npos ? end : end - pos);
    pos = end == std::string::npos ? list.size() : end + 1;
    if (word.empty()) continue;
    any = true;
    if (word == "local") return {"local", var + ": local"};
    if (word == "pmi1" || word == "pmi2") {
      if (pmi1_available()) {
        const char* fd_or_port = env_set("PMI_FD") ? "PMI_FD" : "PMI_PORT";
        return {"pmi1", var + ": " + word + ", " + fd_or_port + " is set" +
                            (word == "pmi2" ? " (served by the PMI-1 client)" : "")};
      }
      skip(word, "neither PMI_FD nor PMI_PORT is set");
      continue;
    }
    if (word == "pmix") {
      if (!pmix_built) {
        skip(word, "LCI was built without PMIx");
        continue;
      }
      const std::string evidence = pmix_evidence();
      if (!evidence.empty()) return {"pmix", var + ": pmix, " + evidence};
      skip(word, "neither PMIX_RANK/PMIX_NAMESPACE nor PMIX_SERVER_URI* is set");
      continue;
    }
    if (word == "file" || word == "mpi") {
      skip(word, "LCI 1.7.9's " + word + " bootstrap is not provided by this LCI");
      continue;
    }
    detail::fatal(var + ": '" + word +
                  "' is not one of: pmi1, pmi2, pmix, local (LCI_PMI, which takes "
                  "precedence, names lcrun, pmi1, pmix, local)");
  }
  if (!any) detail::fatal(var + " names no bootstrap; give one or more of: pmi1, pmi2, pmix, local");
  detail::fatal(var + ": none of the listed bootstraps can be used: " + skipped +
                "; start the program with a launcher that provides one, add local to run as a "
                "job of one, or unset LCT_PMI_BACKEND");
}

}  // namespace

choice choose() {
  const bool under_lcrun = [] {
    const char* v = std::getenv("LCI_LCRUN");
    return v != nullptr && std::strcmp(v, "1") == 0;
  }();

  if (env_set("LCI_PMI")) {
    const std::string name = std::getenv("LCI_PMI");
    // LCI_PMI decides over LCI 1.7.9's LCT_PMI_BACKEND; say so when both are set.
    const std::string reason =
        "LCI_PMI=" + name +
        (env_set("LCT_PMI_BACKEND")
             ? std::string(", which overrides LCT_PMI_BACKEND=") + std::getenv("LCT_PMI_BACKEND")
             : std::string());
    if (name == "local") return {"local", reason};
    if (name == "lcrun" || name == "pmi1") {
      if (!pmi1_available())
        detail::fatal(reason +
                      " but neither PMI_FD nor PMI_PORT is set; start the program with "
                      "'lcrun -n N prog' or an MPICH-compatible mpiexec");
      return {name == "lcrun" ? "lcrun" : "pmi1", reason};
    }
    if (name == "pmix") {
      if (!pmix_built)
        detail::fatal(reason + " but LCI was built without PMIx (install PMIx and configure "
                               "with -DLCI_WITH_PMIX=ON)");
      if (pmix_evidence().empty())
        detail::fatal(reason +
                      " but neither PMIX_RANK/PMIX_NAMESPACE nor PMIX_SERVER_URI* is set; "
                      "start the program with a PMIx launcher (Open MPI's mpirun, prterun, "
                      "srun --mpi=pmix)");
      return {"pmix", reason};
    }
    detail::fatal("LCI_PMI='" + name + "' is not one of: lcrun, pmi1, pmix, local");
  }
  if (env_set("LCT_PMI_BACKEND")) return choose_lct_backend(std::getenv("LCT_PMI_BACKEND"));
  if (pmi1_available()) {
    const char* var = env_set("PMI_FD") ? "PMI_FD" : "PMI_PORT";
    if (under_lcrun) return {"lcrun", std::string(var) + " and LCI_LCRUN=1 are set"};
    return {"pmi1", std::string(var) + " is set"};
  }
  std::string evidence = pmix_evidence();
  if (!evidence.empty()) {
    if (pmix_built) return {"pmix", evidence};
    // Better a clear stop than n independent one-process jobs.
    detail::fatal(evidence +
                  " (a PMIx launcher such as Open MPI's mpirun started this process) but LCI "
                  "was built without PMIx; rebuild with PMIx, start with lcrun or an "
                  "MPICH-compatible mpiexec, or set LCI_PMI=local to run as a job of one");
  }
  return {"local", "no launcher variables (PMI_FD, PMI_PORT, PMIX_*) are set"};
}

std::string store_exposure(const choice& c) {
  const std::string name = c.name;
  if (name == "local") return "none (a job of one process publishes nothing)";
  if (name == "lcrun")
    return "a socket pair per rank (PMI_FD) from lcrun, held by the ranks only";
  if (name == "pmi1") {
    if (!env_set("PMI_FD") && env_set("PMI_PORT"))
      return "exposed: a TCP port (PMI_PORT, Hydra's -pmi-port) that any process reaching "
             "it (any local user, any host) can read and write";
    return "a descriptor per rank (PMI_FD) from the launcher's local proxy; between hosts "
           "the launcher's daemons carry the store over the management network in clear "
           "(Hydra, Slurm)";
  }
  if (name == "pmix")
    return "the local PMIx server's Unix socket (this user's processes); between hosts the "
           "launcher's daemons carry the store over the management network in clear unless "
           "the runtime is set up to protect it (Open MPI, PRRTE, Slurm)";
  return "unknown";
}

std::string describe_choice() {
  choice c = choose();
  return std::string(c.name) + " (" + c.reason + ")";
}

const char* built_bootstraps() { return pmix_built ? "lcrun pmi1 pmix local" : "lcrun pmi1 local"; }

std::unique_ptr<bootstrap> open() {
  const choice c = choose();
  const std::string name = c.name;
  if (name == "local") return detail::open_local();
#ifdef LCI_HAVE_PMIX
  if (name == "pmix") return detail::open_pmix();
#endif
  return detail::open_pmi1(c.name);
}

std::string encode_hex(const void* data, size_t length) {
  static const char digits[] = "0123456789abcdef";
  std::string text;
  text.reserve(length * 2);
  const auto* p = static_cast<const unsigned char*>(data);
  for (size_t i = 0; i < length; ++i) {
    text.push_back(digits[p[i] >> 4]);
    text.push_back(digits[p[i] & 15]);
  }
  return text;
}

bool decode_hex(const std::string& text, std::vector<unsigned char>* out) {
  auto nibble = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
  };
  if (text.size() % 2) return false;
  std::vector<unsigned char> bytes(text.size() / 2);
  for (size_t i = 0; i < bytes.size(); ++i) {
    const int hi = nibble(text[2 * i]), lo = nibble(text[2 * i + 1]);
    if (hi < 0 || lo < 0) return false;
    bytes[i] = static_cast<unsigned char>(hi << 4 | lo);
  }
  *out = std::move(bytes);
  return true;
}

}  // namespace lci::bootstrap

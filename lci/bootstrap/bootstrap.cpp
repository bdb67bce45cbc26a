// open(): picks the bootstrap from the environment, plus the checks shared by
// all implementations.
//
// Choice, first match wins:
//   LCI_PMI=local|pmi1|lcrun      explicit override;
//   PMI_FD or PMI_PORT set        pmi1, reported as "lcrun" when lcrun set
//                                 LCI_LCRUN=1 (same protocol, clearer logs);
//   otherwise                     local: a job of one process.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "lci/bootstrap/bootstrap.hpp"
#include "lci/bootstrap/detail.hpp"

namespace lci::bootstrap {

namespace detail {

void fatal(const std::string& message) {
  std::fflush(stdout);
  std::fprintf(stderr, "lci bootstrap: %s\n", message.c_str());
  std::fflush(stderr);
  std::_Exit(1);
}

void check_key(const char* who, const std::string& key) {
  if (key.empty() || key.size() > 63)
    fatal(std::string(who) + ": key '" + key + "' must have 1 to 63 characters");
  for (char c : key) {
    // Spaces and '=' are the PMI-1 wire separators; anything non-printable
    // could break the line framing.
    if (c <= ' ' || c > '~' || c == '=')
      fatal(std::string(who) + ": key '" + key +
            "' may hold only printable characters other than space and '='");
  }
}

void check_value(const char* who, const std::string& key, const std::string& value) {
  if (value.size() > 512)
    fatal(std::string(who) + ": value for key '" + key + "' is " + std::to_string(value.size()) +
          " characters long, the limit is 512");
  for (char c : value) {
    if (c <= ' ' || c > '~')
      fatal(std::string(who) + ": value for key '" + key +
            "' may hold only printable characters other than space (encode binary data)");
  }
}

int abort_status(int code) { return code > 0 && code < 256 ? code : 1; }

}  // namespace detail

namespace {

bool env_set(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0';
}

bool pmi1_available() { return env_set("PMI_FD") || env_set("PMI_PORT"); }

}  // namespace

std::unique_ptr<bootstrap> open() {
  const bool under_lcrun = [] {
    const char* v = std::getenv("LCI_LCRUN");
    return v != nullptr && std::strcmp(v, "1") == 0;
  }();

  if (env_set("LCI_PMI")) {
    const std::string choice = std::getenv("LCI_PMI");
    if (choice == "local") return detail::open_local();
    if (choice == "lcrun" || choice == "pmi1") {
      if (!pmi1_available())
        detail::fatal("LCI_PMI=" + choice +
                      " but neither PMI_FD nor PMI_PORT is set; start the program with "
                      "'lcrun -n N prog' or an MPICH-compatible mpiexec");
      return detail::open_pmi1(choice == "lcrun" ? "lcrun" : "pmi1");
    }
    detail::fatal("LCI_PMI='" + choice + "' is not one of: lcrun, pmi1, local");
  }
  if (pmi1_available()) return detail::open_pmi1(under_lcrun ? "lcrun" : "pmi1");
  return detail::open_local();
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

// Fuzzes the handling of bootstrap keys and values (lci/bootstrap): the
// put/get rules every bootstrap applies (key_problem, value_problem), the
// key prefixes PMI-1 ("lci.<rank>.") and PMIx ("lci.") add, and the hex
// coding of binary values (network addresses) that a peer sends back.
// Checks that a key and value the rules accept travel through a PMI-1 put
// line unchanged, and that decode_hex accepts exactly what encode_hex
// writes.
//
// Input: split at its first NUL byte into a key and a value; the whole
// input is also decoded as hex and encoded.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "lci/bootstrap/bootstrap.hpp"
#include "lci/bootstrap/detail.hpp"
#include "lci/bootstrap/pmi1_wire.hpp"
#include "tests/fuzz/fuzz_util.hpp"

namespace {

using namespace lci::bootstrap;
using lci::fuzz::require;

bool printable(const std::string& s) {
  for (char c : s)
    if (c <= ' ' || c > '~') return false;
  return true;
}

void check_put(const std::string& key, const std::string& value) {
  const bool key_ok = detail::key_problem(key) == nullptr;
  const bool value_ok = detail::value_problem(value) == nullptr;
  if (key_ok)
    require(!key.empty() && key.size() <= 63 && printable(key) &&
            key.find('=') == std::string::npos);
  if (value_ok) require(value.size() <= 512 && printable(value));
  if (!key_ok || !value_ok) return;
  for (const std::string& wire : {"lci.12." + key, "lci." + key}) {
    const pmi1_wire::line l = pmi1_wire::parse_line("cmd=put kvsname=k key=" + wire + " value=" + value);
    require(l.get_or("key", "") == wire && l.get_or("value", "") == value);
  }
}

void check_hex(const std::string& text, const uint8_t* data, size_t size) {
  std::vector<unsigned char> out{1, 2, 3};
  if (decode_hex(text, &out)) {
    require(out.size() * 2 == text.size());
    require(encode_hex(out.data(), out.size()) == text);
  } else {
    require(out == std::vector<unsigned char>({1, 2, 3}));  // untouched
  }
  const std::string encoded = encode_hex(data, size);
  require(encoded.size() == 2 * size);
  std::vector<unsigned char> back;
  require(decode_hex(encoded, &back) && back == std::vector<unsigned char>(data, data + size));
  if (size <= 256) require(detail::value_problem(encoded) == nullptr);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string all(reinterpret_cast<const char*>(data), size);
  const size_t nul = all.find('\0');
  const std::string key = all.substr(0, nul);
  const std::string value = nul == std::string::npos ? std::string() : all.substr(nul + 1);
  check_put(key, value);
  check_hex(all, data, size);
  return 0;
}

// LCT_pmi_*: the key-value store and barrier of the process's launcher,
// through the shared bootstrap (lci::bootstrap::acquire), which LCI's
// runtime uses too, so there is one launcher connection per process.
//
// Keys: a key of printable characters other than space and '=' that fits
// the bootstrap's 63 characters with the prefix travels as "lct.<key>";
// any other (up to LCT_PMI_STRING_LIMIT characters) as "lct#" plus a
// 128-bit hash of it (two FNV-1a variants), identical on every rank. The
// prefixes keep LCT's keys apart from LCI's. Values: one that the bootstrap
// accepts as it is (printable, no space) travels as "r<value>", any other
// as "x<hex>" (at most 1 + 2 * 255 = 511 characters, within its 512).
// LCT_pmi_barrier is the bootstrap's fence: puts before it are visible to
// gets after it on every rank.
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "lci/bootstrap/bootstrap.hpp"
#include "lct.h"
#include "lct/internal.hpp"

namespace {

std::atomic<lci::bootstrap::bootstrap*> g_boot{nullptr};
std::atomic<int> g_pmi_users{0};

bool travels_as_is(const std::string& s, bool key) {
  for (char c : s)
    if (c <= ' ' || c > '~' || (key && c == '=')) return false;
  return true;
}

uint64_t fnv1a(const std::string& s, uint64_t basis) {
  uint64_t h = basis;
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ULL;
  }
  return h;
}

std::string wire_key(const char* key) {
  const std::string k(key);
  if (!k.empty() && k.size() <= 59 && travels_as_is(k, true)) return "lct." + k;
  char hashed[40];
  std::snprintf(hashed, sizeof hashed, "lct#%016llx%016llx",
                static_cast<unsigned long long>(fnv1a(k, 14695981039346656037ULL)),
                static_cast<unsigned long long>(fnv1a(k, 0x9e3779b97f4a7c15ULL)));
  return hashed;
}

std::string encode_value(const char* value) {
  const std::string v(value);
  if (travels_as_is(v, false)) return "r" + v;
  return "x" + lci::bootstrap::encode_hex(v.data(), v.size());
}

std::string decode_value(const std::string& wire, int rank, const char* key) {
  if (!wire.empty() && wire[0] == 'r') return wire.substr(1);
  std::vector<unsigned char> bytes;
  if (wire.empty() || wire[0] != 'x' || !lci::bootstrap::decode_hex(wire.substr(1), &bytes))
    lct::detail::fatal("LCT_pmi_getname", "rank %d's value for key '%s' is malformed", rank, key);
  return std::string(bytes.begin(), bytes.end());
}

void check_length(const char* who, const char* what, const char* text) {
  if (text == nullptr) lct::detail::fatal(who, "NULL %s", what);
  const size_t n = std::strlen(text);
  if (n > LCT_PMI_STRING_LIMIT)
    lct::detail::fatal(who, "%s of %zu characters is longer than LCT_PMI_STRING_LIMIT (%d)", what,
                       n, LCT_PMI_STRING_LIMIT);
}

lci::bootstrap::bootstrap& boot(const char* who) {
  lci::bootstrap::bootstrap* b = g_boot.load(std::memory_order_acquire);
  if (b == nullptr) lct::detail::fatal(who, "call LCT_pmi_initialize first");
  return *b;
}

}  // namespace

void LCT_pmi_initialize(void) noexcept try {
  lci::bootstrap::bootstrap& b = lci::bootstrap::acquire();
  g_boot.store(&b, std::memory_order_release);
  g_pmi_users.fetch_add(1, std::memory_order_acq_rel);
  LCT_set_rank(b.rank());
} catch (...) {
  lct::detail::fatal_exception(__func__);
}

int LCT_pmi_initialized(void) noexcept try {
  return g_pmi_users.load(std::memory_order_acquire) > 0;
} catch (...) {
  lct::detail::fatal_exception(__func__);
}

int LCT_pmi_get_rank(void) noexcept try {
  return boot("LCT_pmi_get_rank").rank();
} catch (...) {
  lct::detail::fatal_exception(__func__);
}

int LCT_pmi_get_size(void) noexcept try {
  return boot("LCT_pmi_get_size").size();
} catch (...) {
  lct::detail::fatal_exception(__func__);
}

void LCT_pmi_publish(char* key, char* value) noexcept try {
  check_length("LCT_pmi_publish", "key", key);
  check_length("LCT_pmi_publish", "value", value);
  boot("LCT_pmi_publish").put(wire_key(key), encode_value(value));
} catch (...) {
  lct::detail::fatal_exception(__func__);
}

void LCT_pmi_getname(int rank, char* key, char* value) noexcept try {
  check_length("LCT_pmi_getname", "key", key);
  if (value == nullptr) lct::detail::fatal("LCT_pmi_getname", "NULL value buffer");
  const std::string v = decode_value(boot("LCT_pmi_getname").get(rank, wire_key(key)), rank, key);
  const size_t n = v.size() < LCT_PMI_STRING_LIMIT ? v.size() : LCT_PMI_STRING_LIMIT;
  std::memcpy(value, v.data(), n);
  value[n] = '\0';
} catch (...) {
  lct::detail::fatal_exception(__func__);
}

void LCT_pmi_barrier(void) noexcept try {
  boot("LCT_pmi_barrier").fence();
} catch (...) {
  lct::detail::fatal_exception(__func__);
}

void LCT_pmi_finalize(void) noexcept try {
  const int before = g_pmi_users.fetch_sub(1, std::memory_order_acq_rel);
  if (before <= 0) {
    g_pmi_users.fetch_add(1, std::memory_order_acq_rel);
    lct::detail::fatal("LCT_pmi_finalize", "called without a matching LCT_pmi_initialize");
  }
  if (before == 1) g_boot.store(nullptr, std::memory_order_release);
  lci::bootstrap::release();
} catch (...) {
  lct::detail::fatal_exception(__func__);
}
